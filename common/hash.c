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
 * The process key is set once: heurekad calls hash_init() before the
 * loop; library users get it on first use (pthread_once, as the client
 * library is used from several threads). Tests pin it with hash_set_key().
 */
#include <sys/random.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "log.h"
#include "xmalloc.h"

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t	hash_le64(const uint8_t *);
static void	hash_key_once(void);
static const uint8_t *hash_key(void);
static void	htab_resize(struct htab *, size_t);

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

/* SipHash-2-4 of n bytes in one call. */
uint64_t
hash_siphash(const uint8_t key[HASH_KEY_LEN], const void *p, size_t n)
{
	struct hash_state	st;

	hash_begin(&st, key);
	hash_update(&st, p, n);
	return (hash_end(&st));
}

/* 16 bytes from the kernel's CSPRNG; fatal if there is none. */
void
hash_key_random(uint8_t key[HASH_KEY_LEN])
{
	size_t	got = 0;
	ssize_t	r;

	while (got < HASH_KEY_LEN) {
		r = getrandom(key + got, HASH_KEY_LEN - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fatal("getrandom");
		}
		got += (size_t)r;
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
 * a time into a small buffer, so the words go through hash_update whole.
 */
uint64_t
hash_str_upper(const char *s)
{
	struct hash_state	st;
	uint8_t			blk[64];
	size_t			n;

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
	t->b = xcalloc(nb, sizeof *t->b);
	t->nb = nb;
	t->n = 0;
	t->min = nb;
}

/* Release the buckets; the nodes belong to their objects. */
void
htab_clear(struct htab *t)
{
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
}

/* Rehash every node into nb buckets. */
static void
htab_resize(struct htab *t, size_t nb)
{
	struct htab_node	**b, *n, *next;
	size_t			  i;

	b = xcalloc(nb, sizeof *b);
	for (i = 0; i < t->nb; i++) {
		for (n = t->b[i]; n != NULL; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
}

/* Link a node; doubles the buckets at load factor 1 (amortised O(1)). */
void
htab_insert(struct htab *t, struct htab_node *node, uint64_t hash)
{
	if (t->n >= t->nb)
		htab_resize(t, t->nb * 2);
	node->hash = hash;
	node->next = t->b[hash & (t->nb - 1)];
	t->b[hash & (t->nb - 1)] = node;
	t->n++;
}

/* Unlink a node that is in the table; halves the buckets below 1/8 load. */
void
htab_remove(struct htab *t, struct htab_node *node)
{
	struct htab_node	**pp;

	for (pp = &t->b[node->hash & (t->nb - 1)]; *pp != NULL;
	    pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			node->next = NULL;
			t->n--;
			break;
		}
	}
	if (t->nb > t->min && t->n < t->nb / 8)
		htab_resize(t, t->nb / 2);
}

/* Head of the chain a hash falls in; callers compare hash and key. */
struct htab_node *
htab_first(const struct htab *t, uint64_t hash)
{
	return (t->b[hash & (t->nb - 1)]);
}

/* Number of linked nodes. */
size_t
htab_count(const struct htab *t)
{
	return (t->n);
}

/* Walk every node once, unlinking those drop() asks for; then shrink. */
void
htab_sweep(struct htab *t, int (*drop)(struct htab_node *, void *),
    void *arg)
{
	struct htab_node	**pp, *n, *next;
	size_t			  i, nb;

	for (i = 0; i < t->nb; i++) {
		pp = &t->b[i];
		while ((n = *pp) != NULL) {
			next = n->next;		/* drop() may free n */
			if (drop(n, arg)) {
				*pp = next;
				t->n--;
			} else
				pp = &n->next;
		}
	}
	for (nb = t->nb; nb > t->min && t->n < nb / 8; nb /= 2)
		;
	if (nb != t->nb)
		htab_resize(t, nb);
}

/* Buckets, entries and the longest chain (walks every bucket). */
void
htab_stats(const struct htab *t, struct htab_stats *s)
{
	const struct htab_node	*n;
	size_t			 i, len;

	s->buckets = t->nb;
	s->entries = t->n;
	s->longest = 0;
	for (i = 0; i < t->nb; i++) {
		len = 0;
		for (n = t->b[i]; n != NULL; n = n->next)
			len++;
		if (len > s->longest)
			s->longest = len;
	}
}
