/*
 * tests/unit/check_hash.c: the keyed string hash and the table (common/
 * hash.c). SipHash-2-4 against the reference vectors of its authors (key
 * 00..0f, message 00..len-1; the 15-byte one is the paper's appendix
 * example), incremental feeding, process keys that differ between two
 * processes, the fixed-key digest hash staying put when the process key
 * changes, tables that grow and shrink with their load and keep finding
 * everything, deletions during a sweep, incremental resizes (no insert,
 * remove or sweep moves more than one step of nodes from 0 to 1M entries;
 * lookups, removals, sweeps and chains of one hash stay right while two
 * bucket arrays are live), and the name indexes of common/instance.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "hash.h"
#include "instance.h"
#include "testutil.h"

#define CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/*
 * Checks for the loops that run a million times. check's ck_assert_*
 * reports its place to the runner through a pipe on every call that
 * passes (a write(2) each, with CK_FORK): the 1M cases made millions and
 * spent most of the unit tests' time in them. These call it only to
 * fail, with the same message.
 */
#define HOT_PTR_EQ(a, b)	do {					\
	if ((a) != (b))							\
		ck_assert_ptr_eq((a), (b));				\
} while (0)
#define HOT_PTR_NULL(a)		do {					\
	if ((a) != NULL)						\
		ck_assert_ptr_null((a));				\
} while (0)
#define HOT_TRUE(e)		do {					\
	if (!(e))							\
		ck_assert_msg(0, "%s", #e);				\
} while (0)

/* vectors_sip64[len] of the SipHash reference code, as little-endian bytes. */
static const struct {
	size_t	len;
	uint8_t	out[8];
} sip_vectors[] = {
	{ 0,  { 0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72 } },
	{ 1,  { 0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74 } },
	{ 7,  { 0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab } },
	{ 8,  { 0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93 } },
	{ 15, { 0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1 } },
	{ 16, { 0xdb, 0x9b, 0xc2, 0x57, 0x7f, 0xcc, 0x2a, 0x3f } },
	{ 63, { 0x72, 0x45, 0x06, 0xeb, 0x4c, 0x32, 0x8a, 0x95 } },
};

/* A test object in a table. */
struct item {
	struct htab_node	 node;
	int			 v;
};

/* Bytes as the little-endian word SipHash outputs. */
static uint64_t
le64(const uint8_t b[8])
{
	uint64_t	w = 0;
	int		i;

	for (i = 7; i >= 0; i--)
		w = (w << 8) | b[i];
	return (w);
}

/* The vectors' key 00 01 .. 0f and message 00 01 .. 3f. */
static void
vector_inputs(uint8_t key[HASH_KEY_LEN], uint8_t msg[64])
{
	int	i;

	for (i = 0; i < HASH_KEY_LEN; i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
}

START_TEST(test_siphash_vectors)
{
	uint8_t	key[HASH_KEY_LEN], msg[64];
	size_t	i;

	vector_inputs(key, msg);
	/* The paper's example: 15 bytes, output a129ca6149be45e5. */
	ck_assert_uint_eq(hash_siphash(key, msg, 15), 0xa129ca6149be45e5ULL);
	for (i = 0; i < sizeof sip_vectors / sizeof sip_vectors[0]; i++)
		ck_assert_msg(hash_siphash(key, msg, sip_vectors[i].len) ==
		    le64(sip_vectors[i].out), "length %zu", sip_vectors[i].len);
}
END_TEST

START_TEST(test_siphash_incremental)
{
	struct hash_state	st;
	uint8_t			key[HASH_KEY_LEN], msg[64];
	size_t			len, cut, cut2;

	vector_inputs(key, msg);
	for (len = 0; len <= 63; len++) {
		for (cut = 0; cut <= len; cut++) {
			cut2 = cut + (len - cut) / 2;
			hash_begin(&st, key);
			hash_update(&st, msg, cut);
			hash_update(&st, msg + cut, cut2 - cut);
			hash_update(&st, msg + cut2, len - cut2);
			ck_assert_uint_eq(hash_end(&st),
			    hash_siphash(key, msg, len));
		}
	}
}
END_TEST

/* hash_str("heureka") as printed by a fresh copy of this program. */
static uint64_t
child_hash(void)
{
	FILE			*f;
	unsigned long long	 v = 0;
	char			 exe[4096], cmd[4200];
	ssize_t			 n;

	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	snprintf(cmd, sizeof cmd, "CHECK_HASH_PRINT=1 '%s'", exe);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%llx", &v), 1);
	ck_assert_int_eq(pclose(f), 0);
	return (v);
}

START_TEST(test_key_per_process)
{
	uint8_t		a[HASH_KEY_LEN], b[HASH_KEY_LEN];
	uint64_t	h1, h2;

	hash_key_random(a);
	hash_key_random(b);
	ck_assert(memcmp(a, b, sizeof a) != 0);
	/* Two heurekad-like processes: hash_init() from getrandom each. */
	h1 = child_hash();
	h2 = child_hash();
	ck_assert_msg(h1 != h2, "two processes hash alike: %llx",
	    (unsigned long long)h1);
}
END_TEST

START_TEST(test_set_key_and_fold)
{
	uint8_t		key[HASH_KEY_LEN], msg[64];
	uint64_t	fixed, h1;
	char		lower[160], upper[160];
	size_t		i, n;

	vector_inputs(key, msg);
	fixed = hash_fixed(42, "APP", 3);
	hash_set_key(key);
	ck_assert_uint_eq(hash_str("abc"), hash_siphash(key, "abc", 3));
	ck_assert_uint_eq(hash_bytes(msg, 15), 0xa129ca6149be45e5ULL);
	ck_assert_uint_eq(hash_str_upper("MyApp"), hash_str("MYAPP"));
	ck_assert_uint_eq(hash_str_upper(""), hash_str(""));
	/* Names of one block and of several fold the same way. */
	for (i = 0; i < sizeof lower - 1; i++) {
		lower[i] = (char)('a' + i % 26);
		upper[i] = (char)('A' + i % 26);
	}
	for (n = 60; n < 140; n++) {
		lower[n] = upper[n] = '\0';
		ck_assert_uint_eq(hash_str_upper(lower), hash_str(upper));
		lower[n] = (char)('a' + n % 26);
		upper[n] = (char)('A' + n % 26);
	}
	ck_assert_uint_ne(hash_str("MyApp"), hash_str("MYAPP"));
	h1 = hash_str("abc");
	key[0] ^= 1;
	hash_set_key(key);
	ck_assert_uint_ne(hash_str("abc"), h1);
	/* The digest hash ignores the process key: peers must agree. */
	ck_assert_uint_eq(hash_fixed(42, "APP", 3), fixed);
	ck_assert_uint_ne(hash_fixed(43, "APP", 3), fixed);
}
END_TEST

/* The item with value v, or NULL. */
static struct item *
find(const struct htab *t, int v)
{
	struct htab_node	*n;
	uint64_t		 h = hash_bytes(&v, sizeof v);

	for (n = htab_first(t, h); n != NULL; n = n->next) {
		if (n->hash == h && CONTAINER_OF(n, struct item, node)->v == v)
			return (CONTAINER_OF(n, struct item, node));
	}
	return (NULL);
}

/* htab_sweep callback: drop (and free) odd values. */
static int
drop_odd(struct htab_node *n, void *arg)
{
	struct item	*it = CONTAINER_OF(n, struct item, node);

	(*(int *)arg)++;
	if (it->v % 2 == 0)
		return (0);
	free(it);
	return (1);
}

/* htab_sweep callback: drop everything. */
static int
drop_all(struct htab_node *n, void *arg)
{
	(void)arg;
	free(CONTAINER_OF(n, struct item, node));
	return (1);
}

START_TEST(test_table_grows_and_shrinks)
{
	struct htab		 t;
	struct htab_stats	 st;
	struct item		*it;
	size_t			 nb0;
	int			 i, n = 20000, seen = 0;

	htab_init(&t, 16);
	htab_stats(&t, &st);
	nb0 = st.buckets;
	ck_assert_uint_eq(nb0, 16);
	for (i = 0; i < n; i++) {
		it = calloc(1, sizeof *it);
		it->v = i;
		htab_insert(&t, &it->node, hash_bytes(&i, sizeof i));
	}
	htab_stats(&t, &st);
	ck_assert_uint_eq(st.entries, (size_t)n);
	ck_assert_uint_ge(st.buckets, (size_t)n);	/* load factor <= 1 */
	ck_assert_uint_le(st.longest, 12);
	for (i = 0; i < n; i++)
		ck_assert_ptr_nonnull(find(&t, i));
	ck_assert_ptr_null(find(&t, n));

	/* Deleting during a sweep visits everything once. */
	htab_sweep(&t, drop_odd, &seen);
	ck_assert_int_eq(seen, n);
	ck_assert_uint_eq(htab_count(&t), (size_t)n / 2);
	for (i = 0; i < n; i++)
		ck_assert(find(&t, i) != NULL ? i % 2 == 0 : i % 2 == 1);

	/* Removing most of it gives buckets back, and lookups still work. */
	for (i = 0; i < n - 200; i += 2) {
		it = find(&t, i);
		htab_remove(&t, &it->node);
		free(it);
	}
	htab_stats(&t, &st);
	ck_assert_uint_eq(st.entries, 100);
	ck_assert_uint_lt(st.buckets, 8 * 100 + 1);
	ck_assert_uint_ge(st.buckets, nb0);
	for (i = n - 200; i < n; i += 2)
		ck_assert_ptr_nonnull(find(&t, i));
	htab_sweep(&t, drop_all, NULL);
	ck_assert_uint_eq(htab_count(&t), 0);
	htab_clear(&t);
}
END_TEST

/*
 * Most nodes one call may move: a step stops after HTAB_STEP_NODES, but
 * finishes the bucket it is in, and no chain is this long at load <= 1
 * with a keyed hash (the longest seen at 1M is about 10).
 */
#define STEP_BOUND	(HTAB_STEP_NODES + 32)
/* An index's step finishes the run it stopped in (runs stay under 64). */
#define IDX_STEP_BOUND	(HTAB_STEP_NODES + 64)

/* A fixed process key, so that the chains below are the same every run. */
static void
pin_key(void)
{
	uint8_t	key[HASH_KEY_LEN];
	int	i;

	for (i = 0; i < HASH_KEY_LEN; i++)
		key[i] = (uint8_t)(0xa5 ^ i);
	hash_set_key(key);
}

/* n items valued 0..n-1 (freed by the caller, not by a sweep). */
static struct item *
items_new(int n)
{
	struct item	*v = calloc((size_t)n, sizeof *v);
	int		 i;

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < n; i++)
		v[i].v = i;
	return (v);
}

/* Insert item i of v. */
static void
put(struct htab *t, struct item *v, int i)
{
	htab_insert(t, &v[i].node, hash_bytes(&i, sizeof i));
}

/* Fail unless exactly the items lo..hi-1 of v are found (others absent). */
static void
all_found(const struct htab *t, const struct item *v, int lo, int hi, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		if (i >= lo && i < hi)
			HOT_PTR_EQ(find(t, i), &v[i]);
		else
			HOT_PTR_NULL(find(t, i));
	}
}

START_TEST(test_table_grows_in_steps)
{
	struct htab		 t;
	struct htab_stats	 st;
	struct item		*v;
	int			 i, n = 1 << 20, resizing = 0, full = 0, was;
	size_t			 longest = 0;

	pin_key();
	v = items_new(n);
	htab_init(&t, 8);
	for (i = 0; i < n; i++) {
		was = t.old != NULL;
		put(&t, v, i);
		/* The load never passes 1, so a resize ends before the next. */
		HOT_TRUE(t.n <= t.nb);
		if (t.old == NULL)
			continue;
		resizing++;
		/* Mid-resize: the newest and an old item are found. */
		HOT_PTR_EQ(find(&t, i), &v[i]);
		HOT_PTR_EQ(find(&t, i / 3), &v[i / 3]);
		if (!was && t.onb >= 1024) {
			/* Just started: every item, in either array. */
			all_found(&t, v, 0, i + 1, i + 2);
			full++;
		}
		if ((i & (i - 1)) == 0 || t.on < 64) {
			htab_stats(&t, &st);
			ck_assert_uint_eq(st.entries, (size_t)i + 1);
			ck_assert_uint_eq(st.pending, t.on);
			if (st.longest > longest)
				longest = st.longest;
		}
	}
	htab_stats(&t, &st);
	fprintf(stderr, "grow 0..%d: %d inserts during a resize, most nodes "
	    "moved by one insert %zu, longest chain %zu, buckets %zu\n",
	    n, resizing, st.step_max, longest, st.buckets);
	ck_assert_uint_eq(st.entries, (size_t)n);
	ck_assert_uint_ge(st.step_max, 1);
	ck_assert_uint_le(st.step_max, STEP_BOUND);
	ck_assert_int_gt(resizing, 0);
	ck_assert_int_gt(full, 5);		/* 1024 .. 524288 */
	ck_assert_uint_le(longest, 16);
	ck_assert_uint_ge(st.buckets, (size_t)n);
	all_found(&t, v, 0, n, n + 1);
	htab_clear(&t);
	free(v);
}
END_TEST

START_TEST(test_table_remove_and_shrink_in_steps)
{
	struct htab		 t;
	struct htab_stats	 st;
	struct item		*v;
	int			 i, n = 100000, lo, shrinks = 0;
	size_t			 nb, prev;

	pin_key();
	v = items_new(n);
	htab_init(&t, 8);
	/* Fill until a resize is under way, then remove during it. */
	for (i = 0; i < n && (i < 60000 || t.old == NULL); i++)
		put(&t, v, i);
	ck_assert_ptr_nonnull(t.old);
	for (lo = 0; t.old != NULL; lo++) {
		htab_remove(&t, &v[lo].node);
		ck_assert_ptr_null(find(&t, lo));
		ck_assert_ptr_eq(find(&t, lo + 1), &v[lo + 1]);
		ck_assert_ptr_eq(find(&t, i - 1), &v[i - 1]);
	}
	ck_assert_int_gt(lo, 1);
	all_found(&t, v, lo, i, i);
	/* Remove down to 100: the buckets shrink, a step at a time. */
	nb = prev = t.nb;
	for (; lo < i - 100; lo++) {
		htab_remove(&t, &v[lo].node);
		shrinks += t.nb < prev;
		prev = t.nb;
		if (t.old != NULL && (lo & 63) == 0) {
			ck_assert_ptr_null(find(&t, lo));
			ck_assert_ptr_eq(find(&t, i - 1), &v[i - 1]);
			ck_assert_ptr_eq(find(&t, (lo + i) / 2),
			    &v[(lo + i) / 2]);
		}
	}
	htab_stats(&t, &st);
	fprintf(stderr, "shrink %zu -> %zu buckets, most nodes moved by one "
	    "call %zu\n", nb, st.buckets, st.step_max);
	ck_assert_int_gt(shrinks, 0);
	ck_assert_uint_eq(st.entries, 100);
	ck_assert_uint_lt(st.buckets, nb / 64);
	ck_assert_uint_le(st.step_max, STEP_BOUND);
	all_found(&t, v, lo, i, n);
	/* Removing what is not in the table changes nothing. */
	htab_remove(&t, &v[0].node);
	ck_assert_uint_eq(htab_count(&t), 100);
	htab_clear(&t);
	free(v);
}
END_TEST

/* htab_sweep callback: count, drop odd values (the array owns them). */
static int
drop_odd_kept(struct htab_node *n, void *arg)
{
	(*(int *)arg)++;
	return (CONTAINER_OF(n, struct item, node)->v % 2);
}

/* htab_sweep callback: drop every node (the array owns them). */
static int
drop_all_kept(struct htab_node *n, void *arg)
{
	(void)n;
	(*(int *)arg)++;
	return (1);
}

START_TEST(test_table_sweep_during_resize)
{
	struct htab		 t;
	struct htab_stats	 st;
	struct item		*v;
	int			 i, n = 70000, seen = 0;

	pin_key();
	v = items_new(n);
	htab_init(&t, 8);
	for (i = 0; i < n && (i < 60000 || t.old == NULL || t.oi < 16); i++)
		put(&t, v, i);
	ck_assert_ptr_nonnull(t.old);
	ck_assert_uint_gt(t.on, 0);
	/* Every node once, from both arrays; the rest still found. */
	htab_sweep(&t, drop_odd_kept, &seen);
	ck_assert_int_eq(seen, i);
	ck_assert_uint_eq(htab_count(&t), (size_t)(i + 1) / 2);
	for (seen = 0; seen < n; seen++)
		ck_assert(find(&t, seen) != NULL ?
		    seen % 2 == 0 && seen < i : seen % 2 == 1 || seen >= i);
	htab_stats(&t, &st);
	ck_assert_uint_le(st.step_max, STEP_BOUND);
	/* Dropping everything mid-resize leaves an empty, working table. */
	ck_assert_ptr_nonnull(t.old);
	seen = 0;
	htab_sweep(&t, drop_all_kept, &seen);
	ck_assert_int_eq(seen, (i + 1) / 2);
	ck_assert_uint_eq(htab_count(&t), 0);
	ck_assert_ptr_null(find(&t, 0));
	put(&t, v, 7);
	ck_assert_ptr_eq(find(&t, 7), &v[7]);
	htab_clear(&t);
	free(v);
}
END_TEST

/* Nodes with hash h in the chain htab_first(t, h) gives. */
static int
chain_count(const struct htab *t, uint64_t h)
{
	struct htab_node	*n;
	int			 k = 0;

	for (n = htab_first(t, h); n != NULL; n = n->next)
		k += n->hash == h;
	return (k);
}

/*
 * The bounded scan for /metrics: each call looks at max buckets, so a
 * long chain shows once the pass reaches it, never more than the whole
 * walk's figure; a table that fits max is scanned whole every call; a
 * resize starts a new pass.
 */
START_TEST(test_table_stats_scan)
{
	struct htab		 t;
	struct htab_stats	 st, whole;
	struct htab_scan	 sc;
	struct item		*v, same[20];
	int			 i, n = 5000, calls;

	pin_key();
	v = items_new(2 * n);
	htab_init(&t, 8);
	/* 5,000 or more, until no resize is under way. */
	for (i = 0; i < n || (t.old != NULL && i < 2 * n); i++)
		put(&t, v, i);
	ck_assert_ptr_null(t.old);
	/* A chain of 20 in the last bucket. */
	for (i = 0; i < 20; i++)
		htab_insert(&t, &same[i].node, t.nb - 1);
	htab_stats(&t, &whole);
	ck_assert_uint_ge(whole.longest, 20);
	memset(&sc, 0, sizeof sc);
	for (calls = 1;; calls++) {
		htab_stats_scan(&t, &sc, 64, &st);
		ck_assert_uint_eq(st.entries, whole.entries);
		ck_assert_uint_le(st.longest, whole.longest);
		if (st.longest >= 20)
			break;
		ck_assert_int_lt(calls, 1000000);
	}
	/* The last bucket is reached on the pass's last call. */
	ck_assert_uint_eq((size_t)calls, (t.nb + 63) / 64);
	/* The next pass keeps the last one's figure until it ends. */
	htab_stats_scan(&t, &sc, 64, &st);
	ck_assert_uint_eq(st.longest, whole.longest);
	/* A table within max buckets: whole in one call. */
	memset(&sc, 0, sizeof sc);
	htab_stats_scan(&t, &sc, t.nb, &st);
	ck_assert_uint_eq(st.longest, whole.longest);
	/* The chain goes: after a full pass the figure drops. */
	for (i = 0; i < 20; i++)
		htab_remove(&t, &same[i].node);
	htab_stats(&t, &whole);
	htab_stats_scan(&t, &sc, t.nb, &st);
	htab_stats_scan(&t, &sc, t.nb, &st);
	ck_assert_uint_eq(st.longest, whole.longest);
	ck_assert_uint_lt(st.longest, 20);
	htab_clear(&t);
	free(v);
}
END_TEST

START_TEST(test_table_one_chain_per_hash)
{
	struct htab		 t;
	struct htab_stats	 st;
	struct item		*v, same[30];
	uint64_t		 h = 5;		/* old bucket 5: moves early */
	uint64_t		 hl;		/* a bucket that moves last */
	int			 i, n = 20000, k = 0, kl = 0;

	pin_key();
	v = items_new(n);
	htab_init(&t, 8);
	/* Ten nodes of h and of hl before a resize, ten each during. */
	for (i = 0; i < 10; i++) {
		htab_insert(&t, &same[k++].node, h);
	}
	for (i = 0; i < n && (t.old == NULL || t.onb < 4096); i++)
		put(&t, v, i);
	ck_assert_ptr_nonnull(t.old);
	hl = t.onb - 1;
	for (; kl < 10; kl++)
		htab_insert(&t, &same[20 + kl].node, hl);
	for (; k < 20; k++) {
		htab_insert(&t, &same[k].node, h);
		ck_assert_int_eq(chain_count(&t, h), k + 1);
		ck_assert_int_eq(chain_count(&t, hl), 10);
	}
	/* h's old bucket has moved, hl's has not: one chain each. */
	ck_assert_ptr_nonnull(t.old);
	ck_assert_uint_gt(t.oi, h);
	ck_assert_uint_le(t.oi, hl);
	htab_stats(&t, &st);
	ck_assert_uint_ge(st.longest, 20);	/* counted in the new array */
	ck_assert_uint_eq(st.pending, t.on);
	ck_assert_uint_ge(st.pending, 10);
	/* Finish the resize: the chains come through whole. */
	for (; i < n && t.old != NULL; i++)
		put(&t, v, i);
	ck_assert_ptr_null(t.old);
	ck_assert_int_eq(chain_count(&t, h), 20);
	ck_assert_int_eq(chain_count(&t, hl), 10);
	for (k = 0; k < 30; k++)
		htab_remove(&t, &same[k].node);
	ck_assert_int_eq(chain_count(&t, h), 0);
	ck_assert_uint_eq(htab_count(&t), (size_t)i);
	htab_clear(&t);
	free(v);
}
END_TEST

START_TEST(test_applications_index)
{
	struct applications	*as = applications_new();
	struct application	*a;
	char			 name[32];
	int			 i, n = 3000;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "App%d", i);
		applications_add(as, application_new(name));
		if (i % 500 == 0)	/* build the index along the way */
			ck_assert_ptr_nonnull(applications_find(as, name));
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "aPP%d", i);
		a = applications_find(as, name);
		ck_assert_ptr_nonnull(a);
		snprintf(name, sizeof name, "APP%d", i);
		ck_assert_str_eq(a->name, name);
	}
	ck_assert_ptr_null(applications_find(as, "APP3000"));
	for (i = 0; i < n; i += 3) {
		snprintf(name, sizeof name, "app%d", i);
		ck_assert_int_eq(applications_remove(as, name), 0);
	}
	ck_assert_int_eq(applications_remove(as, "app0"), -1);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "APP%d", i);
		ck_assert((applications_find(as, name) == NULL) ==
		    (i % 3 == 0));
	}
	applications_free(as);
}
END_TEST

/* The item with value v in an index, or NULL. */
static struct item *
ifind(const struct hidx *t, const struct item *base, int v)
{
	struct hidx_iter	 it;
	struct item		*x;
	uint64_t		 h = hash_bytes(&v, sizeof v);

	for (x = hidx_first(t, h, &it); x != NULL; x = hidx_next(&it))
		if (x - base == v)
			return (x);
	return (NULL);
}

/* Fail unless exactly the items lo..hi-1 of v are in the index. */
static void
iall_found(const struct hidx *t, const struct item *v, int lo, int hi, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		if (i >= lo && i < hi)
			HOT_PTR_EQ(ifind(t, v, i), &v[i]);
		else
			HOT_PTR_NULL(ifind(t, v, i));
	}
}

/*
 * The open-addressed index grows to 1M entries and back to none in
 * steps: the load stays at most 1/2 (a resize ends long before the next
 * is due), every entry is found in either array mid-resize, no insert
 * or remove moves more than a step's entries plus one run, probes stay
 * short for keyed hashes, and it shrinks back to its minimum.
 */
START_TEST(test_index_grows_and_shrinks_in_steps)
{
	struct hidx		 t;
	struct htab_stats	 st;
	struct item		*v;
	int			 i, n = 1 << 20, resizing = 0, full = 0, was;
	uint64_t		 h;

	pin_key();
	v = items_new(n);
	hidx_init(&t, 16);
	for (i = 0; i < n; i++) {
		was = t.old != NULL;
		h = hash_bytes(&i, sizeof i);
		hidx_insert(&t, h, &v[i]);
		HOT_TRUE(t.n <= t.cap / 2 + 1);
		if (t.old == NULL)
			continue;
		resizing++;
		HOT_PTR_EQ(ifind(&t, v, i), &v[i]);
		HOT_PTR_EQ(ifind(&t, v, i / 3), &v[i / 3]);
		if (!was && t.ocap >= 2048) {
			iall_found(&t, v, 0, i + 1, i + 2);
			full++;
		}
	}
	hidx_stats(&t, &st);
	fprintf(stderr, "index 0..%d: %d inserts during a resize, most moved "
	    "by one %zu, longest probe %zu, slots %zu\n", n, resizing,
	    st.step_max, st.longest, st.buckets);
	ck_assert_uint_eq(st.entries, (size_t)n);
	ck_assert_uint_le(st.step_max, IDX_STEP_BOUND);
	ck_assert_int_gt(full, 5);
	ck_assert_uint_le(st.longest, 24);	/* Robin Hood: about 10 */
	ck_assert_uint_ge(st.buckets, 2 * (size_t)n);
	iall_found(&t, v, 0, n, n + 1);
	/* Out again, oldest first, checked along the way. */
	for (i = 0; i < n; i++) {
		h = hash_bytes(&i, sizeof i);
		hidx_remove(&t, h, &v[i]);
		if ((i & 0xffff) == 0 || (t.old != NULL && t.on < 4))
			HOT_PTR_EQ(ifind(&t, v, n - 1), &v[n - 1]);
		if (i == n - 1000)
			iall_found(&t, v, i + 1, n, n);
	}
	hidx_stats(&t, &st);
	ck_assert_uint_eq(st.entries, 0);
	ck_assert_uint_le(st.step_max, IDX_STEP_BOUND);
	ck_assert_uint_le(t.cap, 64);
	/* Removing what is not in it changes nothing. */
	h = hash_bytes(&i, sizeof i);
	hidx_remove(&t, h, &v[0]);
	ck_assert_uint_eq(hidx_count(&t), 0);
	hidx_clear(&t);
	free(v);
}
END_TEST

/*
 * Entries of one hash are all walked, in either array, and a removal in
 * the middle of a run (with wrap-around at the array's end) leaves every
 * other entry found: removals during a resize, from the old array's
 * unmoved runs and from the new array, checked against a full scan.
 */
START_TEST(test_index_runs_and_removal_mid_resize)
{
	struct hidx		 t;
	struct hidx_iter	 it;
	struct item		*v, *x;
	int			 i, k, n = 5000, seen, in[5000];
	uint64_t		 h;

	pin_key();
	v = items_new(n);
	hidx_init(&t, 16);
	/* Twelve entries of one hash whose home is the last slot (16, 32). */
	for (i = 0; i < 12; i++)
		hidx_insert(&t, 0x10001f, &v[i]);
	for (seen = 0, x = hidx_first(&t, 0x10001f, &it); x != NULL;
	    x = hidx_next(&it))
		seen++;
	ck_assert_int_eq(seen, 12);
	for (i = 0; i < 12; i += 2)
		hidx_remove(&t, 0x10001f, &v[i]);
	for (seen = 0, x = hidx_first(&t, 0x10001f, &it); x != NULL;
	    x = hidx_next(&it)) {
		ck_assert_int_eq((x - v) % 2, 1);
		seen++;
	}
	ck_assert_int_eq(seen, 6);
	for (i = 1; i < 12; i += 2)
		hidx_remove(&t, 0x10001f, &v[i]);
	ck_assert_uint_eq(hidx_count(&t), 0);
	/* Random removals interleaved with inserts across resizes. */
	memset(in, 0, sizeof in);
	for (k = 0; k < 40000; k++) {
		i = (int)((unsigned)(k * 2654435761u) % (unsigned)n);
		h = hash_bytes(&i, sizeof i) & 0xffffffff0000ffffULL;
		if (in[i]) {
			hidx_remove(&t, h, &v[i]);
			in[i] = 0;
		} else {
			hidx_insert(&t, h, &v[i]);
			in[i] = 1;
		}
		if (t.old != NULL && k % 7 == 0) {
			for (i = 0; i < n; i++) {
				h = hash_bytes(&i, sizeof i) &
				    0xffffffff0000ffffULL;
				for (x = hidx_first(&t, h, &it); x != NULL &&
				    x != &v[i]; x = hidx_next(&it))
					;
				ck_assert((x != NULL) == (in[i] != 0));
			}
		}
	}
	hidx_clear(&t);
	free(v);
}
END_TEST

/* The check suite. */
static Suite *
hash_suite(void)
{
	Suite	*s = suite_create("hash");
	TCase	*tc = tcase_create("core");
	TCase	*tr = tcase_create("resize");

	tcase_add_test(tc, test_siphash_vectors);
	tcase_add_test(tc, test_siphash_incremental);
	tcase_add_test(tc, test_key_per_process);
	tcase_add_test(tc, test_set_key_and_fold);
	tcase_add_test(tc, test_table_grows_and_shrinks);
	tcase_add_test(tc, test_applications_index);
	suite_add_tcase(s, tc);
	/* 1M inserts: several seconds under ASan on a loaded machine. */
	tcase_set_timeout(tr, 120);
	tcase_add_test(tr, test_table_grows_in_steps);
	tcase_add_test(tr, test_table_remove_and_shrink_in_steps);
	tcase_add_test(tr, test_table_sweep_during_resize);
	tcase_add_test(tr, test_table_one_chain_per_hash);
	tcase_add_test(tr, test_table_stats_scan);
	tcase_add_test(tr, test_index_grows_and_shrinks_in_steps);
	tcase_add_test(tr, test_index_runs_and_removal_mid_resize);
	suite_add_tcase(s, tr);
	return (s);
}

/* Run the suite; with CHECK_HASH_PRINT set, print one keyed hash instead. */
int
main(void)
{
	if (getenv("CHECK_HASH_PRINT") != NULL) {
		hash_init();
		printf("%llx\n", (unsigned long long)hash_str("heureka"));
		return (0);
	}
	return (check_run(hash_suite()));
}
