/*
 * hash.h: the one string hash of the code base (SipHash-2-4) and the one
 * chained hash table that uses it. Every table keyed by something a client
 * chose (application names, instance ids, task keys) hashes with the
 * process key, drawn from getrandom(2) once, so nobody outside the process
 * can predict which names collide. Tables grow at load factor 1 and shrink
 * below 1/8, so a chain stays short whatever the names are; a resize moves
 * the nodes a few buckets per insert or remove, never all at once.
 *
 * hash_fixed() is the exception: a SipHash with a published constant key,
 * for values that must agree between processes (the anti-entropy digest).
 * Never use it for a table.
 */
#ifndef HASH_H
#define HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_KEY_LEN	16

/* Incremental SipHash-2-4 state; feed bytes with hash_update(). */
struct hash_state {
	uint64_t	v[4];
	uint64_t	tail;		/* pending bytes, little endian */
	size_t		len;		/* bytes fed so far */
};

void		 hash_key_random(uint8_t key[HASH_KEY_LEN]);
void		 hash_init(void);	/* random process key, once */
void		 hash_set_key(const uint8_t key[HASH_KEY_LEN]);	/* tests */

void		 hash_begin(struct hash_state *, const uint8_t key[HASH_KEY_LEN]);
void		 hash_update(struct hash_state *, const void *, size_t);
uint64_t	 hash_end(struct hash_state *);
uint64_t	 hash_siphash(const uint8_t key[HASH_KEY_LEN], const void *,
		     size_t);

/* With the process key. _upper folds ASCII case (app names). */
uint64_t	 hash_bytes(const void *, size_t);
uint64_t	 hash_str(const char *);
uint64_t	 hash_str_upper(const char *);

/* Deterministic: the same in every process. Continues from h. */
uint64_t	 hash_fixed(uint64_t h, const void *, size_t);

/*
 * An intrusive chained table: a node lives inside the object it indexes,
 * the table never owns it. Callers walk a chain from htab_first() and
 * compare hash and key themselves. The bucket count is a power of two.
 *
 * A resize is incremental: while one is under way the table has two
 * bucket arrays, and every insert and remove first moves up to
 * HTAB_STEP_NODES nodes (whole buckets, in bucket order) from the old
 * array to the new. A hash whose old bucket has not moved yet is still
 * inserted there, so all the nodes of one hash are always in one chain
 * and htab_first() stays a read. A chain walk is valid until the next
 * insert or remove on the same table.
 */
#define HTAB_STEP_NODES	64	/* a step stops once it moved this many */
#define HTAB_STEP_SCAN	256	/* or looked at this many old buckets */

struct htab_node {
	struct htab_node	*next;
	uint64_t		 hash;
};

struct htab {
	struct htab_node	**b;	/* the buckets (the new ones in a resize) */
	size_t			  nb;
	size_t			  n;
	size_t			  min;	/* never shrink below */
	struct htab_node	**old;	/* being emptied into b, or NULL */
	size_t			  onb;
	size_t			  on;	/* nodes still in old */
	size_t			  oi;	/* old buckets below oi have moved */
	size_t			  step_max;	/* most nodes one call moved */
};

/* Size, load and the longest chain, for /metrics and the tests. */
struct htab_stats {
	size_t	buckets;	/* of the array being filled, in a resize */
	size_t	entries;
	size_t	longest;	/* over both arrays */
	size_t	pending;	/* nodes a resize under way has still to move */
	size_t	step_max;	/* most nodes any one insert/remove/sweep moved */
};

void		 htab_init(struct htab *, size_t min_buckets);
void		 htab_clear(struct htab *);	/* frees buckets, not nodes */
void		 htab_insert(struct htab *, struct htab_node *, uint64_t);
void		 htab_remove(struct htab *, struct htab_node *);
struct htab_node *htab_first(const struct htab *, uint64_t);
size_t		 htab_count(const struct htab *);
/* Unlink every node drop() says 1 to; drop may free it. */
void		 htab_sweep(struct htab *, int (*drop)(struct htab_node *,
		     void *), void *);
void		 htab_stats(const struct htab *, struct htab_stats *);
/*
 * The same figures with the longest chain found by a scan of at most max
 * buckets a call, resumed where the last call stopped (sc, zeroed at
 * first): at a million entries a whole walk is a 100 ms stall per
 * /metrics scrape. longest is the larger of the last complete pass's and
 * the current one's so far; a table whose array changed (a resize)
 * starts a new pass. The array being emptied in a resize is not looked
 * at. A table of at most max buckets is scanned whole every call.
 */
struct htab_scan {
	const void	*b;
	size_t		 nb, i, cur, last;
};
#define HTAB_SCAN_BUCKETS	262144	/* per table per scrape */
void		 htab_stats_scan(const struct htab *, struct htab_scan *,
		     size_t max, struct htab_stats *);

/*
 * An open-addressed index of pointers by hash, for the tables so large
 * that a lookup's cache misses are its cost (the registry's lease and id
 * indexes at a million entries). A slot holds the hash beside the
 * pointer, so a lookup reads one run of slots, mostly one cache line,
 * and never touches an object whose hash differs, where a chain walk
 * reads every node it passes. Linear probing from hash & (cap - 1) at
 * load at most 1/2, Robin Hood's order (an entry placed further from
 * home than the one in a slot takes the slot), so a probe, and a search
 * for what is not there, ends after a few slots; a removal shifts the
 * rest of its run back (no deleted markers). Probes stay short for
 * keyed hashes whatever the names are (hash.c's key argument); grown at
 * load 1/2 and shrunk below 1/8 as htab.
 *
 * Resizes are incremental as htab's: while one is under way the old
 * array is read too, and every insert and remove first moves old runs
 * (each whole, in order from an empty slot) until HTAB_STEP_NODES
 * entries moved or HTAB_STEP_SCAN slots were looked at. New entries go
 * to the new array only, so an entry is in the old array only while the
 * run it sits in has not moved, and a probe of the old array, stopped
 * by the first empty slot as always, finds it. A walk (hidx_first,
 * hidx_next) is valid until the next insert or remove.
 */
struct hidx_slot {
	uint64_t	 hash;
	void		*p;		/* NULL: empty */
};

struct hidx {
	struct hidx_slot	*s;	/* the slots (the new ones in a resize) */
	size_t			 cap;
	size_t			 n;
	size_t			 min;	/* never shrink below */
	struct hidx_slot	*old;	/* being emptied into s, or NULL */
	size_t			 ocap;
	size_t			 on;	/* entries still in old */
	size_t			 ostart;	/* an empty old slot: moves start */
	size_t			 oi;	/* old slots looked at from ostart */
	size_t			 step_max;
};

/* A walk over the entries of one hash (new array first, then the old). */
struct hidx_iter {
	const struct hidx_slot	*s;
	size_t			 mask, i;
	uint64_t		 hash;
	const struct hidx	*t;
	int			 inold;
};

void		 hidx_init(struct hidx *, size_t min_slots);
void		 hidx_clear(struct hidx *);	/* frees slots, not objects */
void		 hidx_insert(struct hidx *, uint64_t, void *);
/* Remove p, which is in the index under hash; compares pointers only. */
void		 hidx_remove(struct hidx *, uint64_t, const void *);
/* Put np where p is (p is in the index under hash; np takes its hash). */
void		 hidx_replace(struct hidx *, uint64_t, const void *p, void *np);
void		*hidx_first(const struct hidx *, uint64_t, struct hidx_iter *);
void		*hidx_next(struct hidx_iter *);
size_t		 hidx_count(const struct hidx *);
/*
 * Start loading the slots a lookup of hash will read soon: two lookups
 * in indexes too large for the cache then wait for memory once, not
 * twice.
 */
void		 hidx_prefetch(const struct hidx *, uint64_t);
/* htab_stats for an index: buckets are slots, longest the longest probe. */
void		 hidx_stats(const struct hidx *, struct htab_stats *);
void		 hidx_stats_scan(const struct hidx *, struct htab_scan *,
		     size_t max, struct htab_stats *);

#endif
