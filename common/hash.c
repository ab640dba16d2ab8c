/*
 * hash.c: SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF", 2012), written from the paper's description, and the chained hash
 * table every name-keyed index in heureka uses.
 *
 * Why keyed: with a public hash (FNV-1a before this file existed) anyone
 * can compute thousands of application names or ids that land in one
 * bucket in seconds and turn each lookup into a walk of all of them. With
 * a 128-bit key drawn from getrandom(2) at start, the bucket of a name is
 * unpredictable from outside the process, and growing the table at load
 * factor 1 keeps chains O(1) for names that are not chosen against it.
 *
 * Why incremental: a table that doubles by rehashing every node in one
 * call stalls the event loop for as long as that takes (51 ms for the
 * registry's tables at 524,288 instances). Here a resize allocates the
 * new bucket array and leaves the nodes where they are; each later
 * insert, remove or sweep moves the next few old buckets across (at most
 * HTAB_STEP_NODES nodes, plus the rest of the bucket it stopped in), so
 * the work of a doubling is spread over the inserts that follow it, well
 * before the next one is due. Lookups stay reads: a hash whose old bucket
 * has not moved is inserted into the old array too, so every hash lives
 * in exactly one chain, found by comparing its old bucket with the move
 * cursor. Redis's dict (two tables, a rehash index) is the known model;
 * this differs in keeping lookups read-only and bounding a step by nodes.
 *
 * The process key is set once: heurekad calls hash_init() before the
 * loop; library users get it on first use (pthread_once, as the client
 * library is used from several threads). Tests pin it with hash_set_key().
 */
#include <sys/random.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hash.h"
#include "log.h"
#include "xmalloc.h"

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t	hash_le64(const uint8_t *);
static void	hash_key_once(void);
static const uint8_t *hash_key(void);
static struct htab_node **htab_slot(const struct htab *, uint64_t, int *);
static size_t	htab_target(const struct htab *);
static void	htab_start(struct htab *, size_t);
static size_t	htab_step(struct htab *);
static void	htab_balance(struct htab *);

static uint8_t		hash_process_key[HASH_KEY_LEN];
static pthread_once_t	hash_once = PTHREAD_ONCE_INIT;

/*
 * The digest's key. Public on purpose: peers must compute the same sums.
 * Changing it changes every digest, so a mixed cluster re-pulls until
 * all nodes run the same version.
 */
static const uint8_t	hash_fixed_key[HASH_KEY_LEN] = {
	'h', 'e', 'u', 'r', 'e', 'k', 'a', '-',
	'd', 'i', 'g', 'e', 's', 't', '-', '1',
};

/*
 * One SipRound over the four state words, on locals: every caller loads
 * the state into v0..v3 once and stores it back after its rounds, so the
 * words stay in registers.
 */
#define SIPROUND(v0, v1, v2, v3) do {					\
	(v0) += (v1);							\
	(v1) = ROTL((v1), 13);						\
	(v1) ^= (v0);							\
	(v0) = ROTL((v0), 32);						\
	(v2) += (v3);							\
	(v3) = ROTL((v3), 16);						\
	(v3) ^= (v2);							\
	(v0) += (v3);							\
	(v3) = ROTL((v3), 21);						\
	(v3) ^= (v0);							\
	(v2) += (v1);							\
	(v1) = ROTL((v1), 17);						\
	(v1) ^= (v2);							\
	(v2) = ROTL((v2), 32);						\
} while (0)

/* Eight bytes read as a little-endian word, whatever the host order. */
static uint64_t
hash_le64(const uint8_t *p)
{
	uint64_t	w = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&w, p, sizeof w);
#else
	int		i;

	for (i = 7; i >= 0; i--)
		w = (w << 8) | p[i];
#endif
	return (w);
}

/* One message word through the two compression rounds. */
static void
hash_word(struct hash_state *st, uint64_t m)
{
	uint64_t	v0 = st->v[0], v1 = st->v[1], v2 = st->v[2];
	uint64_t	v3 = st->v[3] ^ m;

	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	st->v[0] = v0 ^ m;
	st->v[1] = v1;
	st->v[2] = v2;
	st->v[3] = v3;
}

/* Start a SipHash-2-4 computation under a 128-bit key. */
void
hash_begin(struct hash_state *st, const uint8_t key[HASH_KEY_LEN])
{
	uint64_t	k0 = hash_le64(key), k1 = hash_le64(key + 8);

	st->v[0] = k0 ^ 0x736f6d6570736575ULL;	/* "somepseu" */
	st->v[1] = k1 ^ 0x646f72616e646f6dULL;	/* "dorandom" */
	st->v[2] = k0 ^ 0x6c7967656e657261ULL;	/* "lygenera" */
	st->v[3] = k1 ^ 0x7465646279746573ULL;	/* "tedbytes" */
	st->tail = 0;
	st->len = 0;
}

/*
 * Feed n bytes: every full 64-bit word goes through two rounds. Bytes
 * left over from the last call are completed first, then whole words are
 * read straight from p, and what is left waits in the tail.
 */
void
hash_update(struct hash_state *st, const void *p, size_t n)
{
	const uint8_t	*c = p;

	for (; n > 0 && (st->len & 7) != 0; n--) {
		st->tail |= (uint64_t)*c++ << (8 * (st->len & 7));
		if ((++st->len & 7) == 0) {
			hash_word(st, st->tail);
			st->tail = 0;
		}
	}
	if (n >= 8) {
		uint64_t	v0 = st->v[0], v1 = st->v[1], v2 = st->v[2];
		uint64_t	v3 = st->v[3], m;

		for (; n >= 8; n -= 8, c += 8) {
			m = hash_le64(c);
			v3 ^= m;
			SIPROUND(v0, v1, v2, v3);
			SIPROUND(v0, v1, v2, v3);
			v0 ^= m;
			st->len += 8;
		}
		st->v[0] = v0;
		st->v[1] = v1;
		st->v[2] = v2;
		st->v[3] = v3;
	}
	for (; n > 0; n--) {
		st->tail |= (uint64_t)*c++ << (8 * (st->len & 7));
		st->len++;
	}
}

/* Last word (pending bytes, length in the top byte), four rounds, fold. */
uint64_t
hash_end(struct hash_state *st)
{
	uint64_t	b = st->tail | ((uint64_t)(st->len & 0xff) << 56);
	uint64_t	v0 = st->v[0], v1 = st->v[1], v2 = st->v[2];
	uint64_t	v3 = st->v[3] ^ b;

	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return (v0 ^ v1 ^ v2 ^ v3);
}

/*
 * SipHash-2-4 of n bytes in one call: the state stays in registers from
 * the key to the fold, and the last partial word is gathered at once
 * (the incremental path above takes it a byte at a time). The table keys
 * (names of a few dozen bytes) are hashed here on every lookup.
 */
uint64_t
hash_siphash(const uint8_t key[HASH_KEY_LEN], const void *p, size_t n)
{
	const uint8_t	*c = p, *end = c + (n & ~(size_t)7);
	uint64_t	 k0 = hash_le64(key), k1 = hash_le64(key + 8);
	uint64_t	 v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t	 v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t	 v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t	 v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t	 m, b = (uint64_t)(n & 0xff) << 56;

	for (; c != end; c += 8) {
		m = hash_le64(c);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	switch (n & 7) {
	case 7:
		b |= (uint64_t)c[6] << 48;
		/* FALLTHROUGH */
	case 6:
		b |= (uint64_t)c[5] << 40;
		/* FALLTHROUGH */
	case 5:
		b |= (uint64_t)c[4] << 32;
		/* FALLTHROUGH */
	case 4:
		b |= (uint64_t)c[3] << 24;
		/* FALLTHROUGH */
	case 3:
		b |= (uint64_t)c[2] << 16;
		/* FALLTHROUGH */
	case 2:
		b |= (uint64_t)c[1] << 8;
		/* FALLTHROUGH */
	case 1:
		b |= (uint64_t)c[0];
		break;
	}
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return (v0 ^ v1 ^ v2 ^ v3);
}

/*
 * 16 bytes from the kernel's CSPRNG. Without one (getrandom refused, a
 * seccomp filter or a kernel before 3.17) the server stops; libheureka,
 * which must not end its host, mixes what it has (the clocks, the pid,
 * where the stack and this code were mapped) into a key that is weaker
 * against a chosen-name flood, and says so.
 */
void
hash_key_random(uint8_t key[HASH_KEY_LEN])
{
	size_t		got = 0, i;
	ssize_t		r;
	uint64_t	x;

	while (got < HASH_KEY_LEN) {
		r = getrandom(key + got, HASH_KEY_LEN - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fatalx_server("getrandom: %s", strerror(errno));
			break;
		}
		got += (size_t)r;
	}
	if (got == HASH_KEY_LEN)
		return;
	log_warnx("hash key: getrandom failed; using a weaker key");
	x = (uint64_t)clock_mono_ms() ^ ((uint64_t)clock_wall_ms() << 17) ^
	    ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&got ^
	    (uint64_t)(uintptr_t)hash_key_random;
	for (i = got; i < HASH_KEY_LEN; i++) {
		/* splitmix64's step and finaliser (Steele et al., 2014). */
		x += 0x9e3779b97f4a7c15ULL;
		key[i] = (uint8_t)((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL >>
		    56);
	}
}

/* pthread_once body: draw the process key. */
static void
hash_key_once(void)
{
	hash_key_random(hash_process_key);
}

/* Draw the process key now (heurekad does, before the loop starts). */
void
hash_init(void)
{
	pthread_once(&hash_once, hash_key_once);
}

/* Replace the process key (unit tests, before any table is filled). */
void
hash_set_key(const uint8_t key[HASH_KEY_LEN])
{
	hash_init();
	memcpy(hash_process_key, key, HASH_KEY_LEN);
}

/* The process key, drawn on first use. */
static const uint8_t *
hash_key(void)
{
	hash_init();
	return (hash_process_key);
}

/* Keyed hash of n bytes. */
uint64_t
hash_bytes(const void *p, size_t n)
{
	return (hash_siphash(hash_key(), p, n));
}

/* Keyed hash of a string (without its NUL). */
uint64_t
hash_str(const char *s)
{
	return (hash_siphash(hash_key(), s, strlen(s)));
}

/*
 * Keyed hash of a string as str_upper() would write it: folded a block at
 * a time into a small buffer, so the words go through hash_update whole;
 * a name that fits one block is hashed in one call.
 */
uint64_t
hash_str_upper(const char *s)
{
	struct hash_state	st;
	uint8_t			blk[64];
	size_t			n;

	for (n = 0; n < sizeof blk && s[n] != '\0'; n++)
		blk[n] = (uint8_t)toupper((unsigned char)s[n]);
	if (s[n] == '\0')
		return (hash_siphash(hash_key(), blk, n));
	hash_begin(&st, hash_key());
	while (*s != '\0') {
		for (n = 0; n < sizeof blk && s[n] != '\0'; n++)
			blk[n] = (uint8_t)toupper((unsigned char)s[n]);
		hash_update(&st, blk, n);
		s += n;
	}
	return (hash_end(&st));
}

/* Fixed-key hash of h (as 8 little-endian bytes) then n bytes. */
uint64_t
hash_fixed(uint64_t h, const void *p, size_t n)
{
	struct hash_state	st;
	uint8_t			le[8];
	int			i;

	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)(h >> (8 * i));
	hash_begin(&st, hash_fixed_key);
	hash_update(&st, le, sizeof le);
	hash_update(&st, p, n);
	return (hash_end(&st));
}

/* ------------------------------------------------------------------ */
/* The table.                                                           */

/* An empty table; min_buckets is rounded up to a power of two. */
void
htab_init(struct htab *t, size_t min_buckets)
{
	size_t	nb = 8;

	while (nb < min_buckets)
		nb *= 2;
	memset(t, 0, sizeof *t);
	t->b = xcalloc(nb, sizeof *t->b);
	t->nb = nb;
	t->min = nb;
}

/* Release the buckets (both arrays in a resize); nodes are their objects'. */
void
htab_clear(struct htab *t)
{
	free(t->b);
	free(t->old);
	t->b = t->old = NULL;
	t->nb = t->n = t->onb = t->on = t->oi = 0;
}

/*
 * The chain head a hash lives in: its old bucket while a resize has not
 * moved that bucket yet, else its bucket in b. *inold says which.
 */
static struct htab_node **
htab_slot(const struct htab *t, uint64_t hash, int *inold)
{
	size_t	i;

	if (t->old != NULL && (i = hash & (t->onb - 1)) >= t->oi) {
		*inold = 1;
		return (&t->old[i]);
	}
	*inold = 0;
	return (&t->b[hash & (t->nb - 1)]);
}

/* The bucket count the load asks for: double above 1, halve below 1/8. */
static size_t
htab_target(const struct htab *t)
{
	size_t	nb = t->nb;

	if (t->n > nb)
		return (nb * 2);
	while (nb > t->min && t->n < nb / 8)
		nb /= 2;
	return (nb);
}

/* Begin a resize to nb buckets: b becomes the old array, nothing moves. */
static void
htab_start(struct htab *t, size_t nb)
{
	t->old = t->b;
	t->onb = t->nb;
	t->on = t->n;
	t->oi = 0;
	t->b = xcalloc(nb, sizeof *t->b);
	t->nb = nb;
}

/*
 * Move old buckets across in order until HTAB_STEP_NODES nodes have
 * moved or HTAB_STEP_SCAN buckets were looked at; free the old array
 * once it holds nothing. Returns the nodes moved.
 */
static size_t
htab_step(struct htab *t)
{
	struct htab_node	*n, *next, **slot;
	size_t			 moved = 0, scanned = 0;

	while (t->on > 0 && moved < HTAB_STEP_NODES &&
	    scanned < HTAB_STEP_SCAN) {
		for (n = t->old[t->oi]; n != NULL; n = next) {
			next = n->next;
			slot = &t->b[n->hash & (t->nb - 1)];
			n->next = *slot;
			*slot = n;
			moved++;
			t->on--;
		}
		t->old[t->oi++] = NULL;
		scanned++;
	}
	if (t->on == 0) {
		free(t->old);
		t->old = NULL;
		t->onb = t->oi = 0;
	}
	return (moved);
}

/*
 * After a change: one step of the resize under way, or start the one the
 * load asks for and take its first step. A resize that this step finishes
 * is followed by the next on the next call, so one call moves one step.
 */
static void
htab_balance(struct htab *t)
{
	size_t	moved = 0, nb;

	if (t->old != NULL)
		moved = htab_step(t);
	else if ((nb = htab_target(t)) != t->nb) {
		htab_start(t, nb);
		moved = htab_step(t);
	}
	if (moved > t->step_max)
		t->step_max = moved;
}

/* Link a node; the buckets double at load factor 1 (amortised O(1)). */
void
htab_insert(struct htab *t, struct htab_node *node, uint64_t hash)
{
	struct htab_node	**slot;
	int			  inold;

	slot = htab_slot(t, hash, &inold);
	node->hash = hash;
	node->next = *slot;
	*slot = node;
	t->on += (size_t)inold;
	t->n++;
	htab_balance(t);
}

/* Unlink a node that is in the table; the buckets halve below 1/8 load. */
void
htab_remove(struct htab *t, struct htab_node *node)
{
	struct htab_node	**pp;
	int			  inold;

	for (pp = htab_slot(t, node->hash, &inold); *pp != NULL;
	    pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			node->next = NULL;
			t->on -= (size_t)inold;
			t->n--;
			break;
		}
	}
	htab_balance(t);
}

/* Head of the chain a hash falls in; callers compare hash and key. */
struct htab_node *
htab_first(const struct htab *t, uint64_t hash)
{
	int	inold;

	return (*htab_slot(t, hash, &inold));
}

/* Number of linked nodes. */
size_t
htab_count(const struct htab *t)
{
	return (t->n);
}

/* Unlink the nodes of one chain that drop() asks for; how many it took. */
static size_t
htab_sweep_chain(struct htab_node **pp,
    int (*drop)(struct htab_node *, void *), void *arg)
{
	struct htab_node	*n, *next;
	size_t			 dropped = 0;

	while ((n = *pp) != NULL) {
		next = n->next;		/* drop() may free n */
		if (drop(n, arg)) {
			*pp = next;
			dropped++;
		} else
			pp = &n->next;
	}
	return (dropped);
}

/*
 * Walk every node once (both arrays in a resize: each node is in one
 * chain), unlinking those drop() asks for; then one resize step.
 */
void
htab_sweep(struct htab *t, int (*drop)(struct htab_node *, void *),
    void *arg)
{
	size_t	i, k;

	for (i = t->oi; t->old != NULL && i < t->onb; i++) {
		k = htab_sweep_chain(&t->old[i], drop, arg);
		t->on -= k;
		t->n -= k;
	}
	for (i = 0; i < t->nb; i++)
		t->n -= htab_sweep_chain(&t->b[i], drop, arg);
	htab_balance(t);
}

/* The longest chain of an array's buckets from..nb-1. */
static size_t
htab_longest(struct htab_node *const *b, size_t from, size_t nb)
{
	const struct htab_node	*n;
	size_t			 i, len, longest = 0;

	for (i = from; i < nb; i++) {
		len = 0;
		for (n = b[i]; n != NULL; n = n->next)
			len++;
		if (len > longest)
			longest = len;
	}
	return (longest);
}

/*
 * A resumed scan's next range of an array of n (begun again when the
 * array changed): how many from sc->i, at most max.
 */
static size_t
scan_next(struct htab_scan *sc, const void *a, size_t n, size_t max)
{
	if (sc->b != a || sc->nb != n) {
		memset(sc, 0, sizeof *sc);
		sc->b = a;
		sc->nb = n;
	}
	return (n - sc->i < max ? n - sc->i : max);
}

/*
 * Count a range of k looked at, whose longest was lo: the longest of the
 * last whole pass or of this one so far, whichever is more.
 */
static size_t
scan_done(struct htab_scan *sc, size_t k, size_t lo)
{
	size_t	longest;

	if (lo > sc->cur)
		sc->cur = lo;
	sc->i += k;
	longest = sc->cur > sc->last ? sc->cur : sc->last;
	if (sc->i >= sc->nb) {
		sc->last = sc->cur;
		sc->cur = 0;
		sc->i = 0;
	}
	return (longest);
}

/* htab_stats with a bounded, resumed look for the longest chain. */
void
htab_stats_scan(const struct htab *t, struct htab_scan *sc, size_t max,
    struct htab_stats *s)
{
	size_t	n = scan_next(sc, t->b, t->nb, max);

	s->longest = scan_done(sc, n, htab_longest(t->b, sc->i, sc->i + n));
	s->buckets = t->nb;
	s->entries = t->n;
	s->pending = t->on;
	s->step_max = t->step_max;
}

/* Buckets, entries, the longest chain (walks every bucket), resize state. */
void
htab_stats(const struct htab *t, struct htab_stats *s)
{
	size_t	lo;

	s->buckets = t->nb;
	s->entries = t->n;
	s->longest = htab_longest(t->b, 0, t->nb);
	if (t->old != NULL &&
	    (lo = htab_longest(t->old, t->oi, t->onb)) > s->longest)
		s->longest = lo;
	s->pending = t->on;
	s->step_max = t->step_max;
}

/* ------------------------------------------------------------------ */
/* The open-addressed index (hash.h).                                   */

/* Slot i of an array of cap slots follows slot i - 1, cyclically. */
#define HIDX_NEXT(i, cap)	(((i) + 1) & ((cap) - 1))
/* How far slot i is from the home of hash h (mask: cap - 1). */
#define HIDX_DIST(i, h, mask)	(((i) - ((h) & (mask))) & (mask))

/* An empty index; min_slots is rounded up to a power of two. */
void
hidx_init(struct hidx *t, size_t min_slots)
{
	size_t	cap = 16;

	while (cap < min_slots)
		cap *= 2;
	memset(t, 0, sizeof *t);
	t->s = xcalloc(cap, sizeof *t->s);
	t->cap = cap;
	t->min = cap;
}

/* Release the slots (both arrays in a resize); objects are the caller's. */
void
hidx_clear(struct hidx *t)
{
	free(t->s);
	free(t->old);
	t->s = t->old = NULL;
	t->cap = t->n = t->ocap = t->on = t->oi = t->ostart = 0;
}

/*
 * Put (hash, p) in its run, Robin Hood's way: an entry nearer its home
 * than the one being placed gives up its slot and is placed further on,
 * so along a run the distances from home never drop by more than one
 * step and the longest probe stays short (about 10 at a million entries
 * at load 1/2, where first-come linear probing reaches 40 and more).
 */
static void
hidx_put(struct hidx_slot *s, size_t cap, uint64_t hash, void *p)
{
	struct hidx_slot	 e = { hash, p }, t;
	size_t			 i = hash & (cap - 1), d = 0, mask = cap - 1;

	while (s[i].p != NULL) {
		if (HIDX_DIST(i, s[i].hash, mask) < d) {
			t = s[i];
			s[i] = e;
			e = t;
			d = HIDX_DIST(i, e.hash, mask);
		}
		i = HIDX_NEXT(i, cap);
		d++;
	}
	s[i] = e;
}

/*
 * Empty slot i and close the hole: the rest of its run moves back one
 * slot, up to the first entry already in its home (Robin Hood's
 * backward shift, which keeps the order hidx_put made).
 */
static void
hidx_delete(struct hidx_slot *s, size_t cap, size_t i)
{
	size_t	j = HIDX_NEXT(i, cap), mask = cap - 1;

	while (s[j].p != NULL && HIDX_DIST(j, s[j].hash, mask) != 0) {
		s[i] = s[j];
		i = j;
		j = HIDX_NEXT(j, cap);
	}
	s[i].hash = 0;
	s[i].p = NULL;
}

/* The slot holding p under hash in an array, or SIZE_MAX. */
static size_t
hidx_slot_of(const struct hidx_slot *s, size_t cap, uint64_t hash,
    const void *p)
{
	size_t	i = hash & (cap - 1), d = 0, mask = cap - 1;

	/* An entry nearer its home than d ends the search (hidx_put). */
	for (; s[i].p != NULL && HIDX_DIST(i, s[i].hash, mask) >= d;
	    i = HIDX_NEXT(i, cap), d++)
		if (s[i].p == p)
			return (i);
	return (SIZE_MAX);
}

/* The slot count the load asks for: double above 1/2, halve below 1/8. */
static size_t
hidx_target(const struct hidx *t)
{
	size_t	cap = t->cap;

	if (t->n > cap / 2)
		return (cap * 2);
	while (cap > t->min && t->n < cap / 8)
		cap /= 2;
	return (cap);
}

/*
 * Move old runs across, each whole, from the cursor on, until
 * HTAB_STEP_NODES entries moved or HTAB_STEP_SCAN slots were looked at
 * (a run started is finished); free the old array once it is empty.
 */
static size_t
hidx_step(struct hidx *t)
{
	size_t	moved = 0, scanned = 0, i, omask = t->ocap - 1;

	while (t->on > 0 && moved < HTAB_STEP_NODES &&
	    scanned < HTAB_STEP_SCAN) {
		i = (t->ostart + t->oi) & omask;
		while (t->old[i].p != NULL) {
			hidx_put(t->s, t->cap, t->old[i].hash, t->old[i].p);
			t->old[i].p = NULL;
			t->on--;
			moved++;
			t->oi++;
			i = (t->ostart + t->oi) & omask;
		}
		t->oi++;
		scanned++;
	}
	if (t->on == 0) {
		free(t->old);
		t->old = NULL;
		t->ocap = t->oi = t->ostart = 0;
	}
	return (moved);
}

/*
 * Before a change: one step of the resize under way, or start the one
 * the load (with one more entry when adding) asks for: the array becomes
 * the old one, its moves starting from an empty slot, so the first run
 * moved is whole.
 */
static void
hidx_balance(struct hidx *t, int adding)
{
	size_t	moved = 0, cap;

	if (t->old == NULL) {
		/* adding is 0 or 1: count the entry about to come. */
		t->n += (size_t)adding;
		cap = hidx_target(t);
		t->n -= (size_t)adding;
		if (cap == t->cap)
			return;
		t->old = t->s;
		t->ocap = t->cap;
		t->on = t->n;
		t->oi = 0;
		for (t->ostart = 0; t->old[t->ostart].p != NULL; t->ostart++)
			;
		t->s = xcalloc(cap, sizeof *t->s);
		t->cap = cap;
	}
	moved = hidx_step(t);
	if (moved > t->step_max)
		t->step_max = moved;
}

/* Add p under hash (the caller knows it is not there yet). */
void
hidx_insert(struct hidx *t, uint64_t hash, void *p)
{
	hidx_balance(t, 1);
	hidx_put(t->s, t->cap, hash, p);
	t->n++;
}

/* Take p out: from the new array, or from the old one's unmoved runs. */
void
hidx_remove(struct hidx *t, uint64_t hash, const void *p)
{
	size_t	i;

	if ((i = hidx_slot_of(t->s, t->cap, hash, p)) != SIZE_MAX)
		hidx_delete(t->s, t->cap, i);
	else if (t->old != NULL &&
	    (i = hidx_slot_of(t->old, t->ocap, hash, p)) != SIZE_MAX) {
		hidx_delete(t->old, t->ocap, i);
		t->on--;
	} else
		return;
	t->n--;
	hidx_balance(t, 0);
}

/* The slot of p changes hands to np: nothing moves. */
void
hidx_replace(struct hidx *t, uint64_t hash, const void *p, void *np)
{
	size_t	i;

	if ((i = hidx_slot_of(t->s, t->cap, hash, p)) != SIZE_MAX)
		t->s[i].p = np;
	else if (t->old != NULL &&
	    (i = hidx_slot_of(t->old, t->ocap, hash, p)) != SIZE_MAX)
		t->old[i].p = np;
}

/* The next entry of the walk's hash in its array from it->i, or NULL. */
static void *
hidx_scan(struct hidx_iter *it)
{
	const struct hidx_slot	*s = it->s;
	size_t			 i, d;

	/* As hidx_slot_of: the run's order ends the search early. */
	for (i = it->i, d = HIDX_DIST(i, it->hash, it->mask); s[i].p != NULL &&
	    HIDX_DIST(i, s[i].hash, it->mask) >= d;
	    i = (i + 1) & it->mask, d++) {
		if (s[i].hash == it->hash) {
			it->i = (i + 1) & it->mask;
			return (s[i].p);
		}
	}
	it->i = i;
	return (NULL);
}

/* The first entry under hash, NULL if none; hidx_next gives the others. */
void *
hidx_first(const struct hidx *t, uint64_t hash, struct hidx_iter *it)
{
	it->t = t;
	it->hash = hash;
	it->s = t->s;
	it->mask = t->cap - 1;
	it->i = hash & it->mask;
	it->inold = 0;
	return (hidx_next(it));
}

/* The walk's next entry: the rest of the new array's run, then old's. */
void *
hidx_next(struct hidx_iter *it)
{
	void	*p;

	if ((p = hidx_scan(it)) != NULL)
		return (p);
	if (it->inold || it->t->old == NULL)
		return (NULL);
	it->inold = 1;
	it->s = it->t->old;
	it->mask = it->t->ocap - 1;
	it->i = it->hash & it->mask;
	return (hidx_scan(it));
}

/* Number of entries. */
size_t
hidx_count(const struct hidx *t)
{
	return (t->n);
}

/* Ask for the cache line a lookup of hash reads first (hash.h). */
void
hidx_prefetch(const struct hidx *t, uint64_t hash)
{
	__builtin_prefetch(&t->s[hash & (t->cap - 1)]);
	if (t->old != NULL)
		__builtin_prefetch(&t->old[hash & (t->ocap - 1)]);
}

/* The longest probe (slots read to reach an entry) of slots from..to-1. */
static size_t
hidx_longest(const struct hidx_slot *s, size_t cap, size_t from, size_t to)
{
	size_t	i, d, longest = 0;

	for (i = from; i < to; i++) {
		if (s[i].p == NULL)
			continue;
		d = ((i - (s[i].hash & (cap - 1))) & (cap - 1)) + 1;
		if (d > longest)
			longest = d;
	}
	return (longest);
}

/* Slots, entries, the longest probe (every slot read), resize state. */
void
hidx_stats(const struct hidx *t, struct htab_stats *st)
{
	size_t	lo;

	st->buckets = t->cap;
	st->entries = t->n;
	st->longest = hidx_longest(t->s, t->cap, 0, t->cap);
	if (t->old != NULL &&
	    (lo = hidx_longest(t->old, t->ocap, 0, t->ocap)) > st->longest)
		st->longest = lo;
	st->pending = t->on;
	st->step_max = t->step_max;
}

/* hidx_stats with the longest probe by a bounded, resumed scan. */
void
hidx_stats_scan(const struct hidx *t, struct htab_scan *sc, size_t max,
    struct htab_stats *st)
{
	size_t	n = scan_next(sc, t->s, t->cap, max);

	st->longest = scan_done(sc, n,
	    hidx_longest(t->s, t->cap, sc->i, sc->i + n));
	st->buckets = t->cap;
	st->entries = t->n;
	st->pending = t->on;
	st->step_max = t->step_max;
}
