/*
 * bug.h: invariants stated in the code (Tor's BUG() and tor_assert(),
 * doc/HACKING/CodingStandards.md; Varnish's assert()s).
 *
 *	if (HK_BUG(reg->counts[st] == 0))
 *		return;			(recover: the rule was broken)
 *	HK_ASSERT(qcap > 0);		(no way on without corrupting data)
 *
 * HK_BUG(cond) names a condition that must never hold. When it holds
 * anyway, a release build logs it once per site, counts it
 * (bug_count(), heureka_bugs_total in /metrics) and carries on: the
 * caller's branch recovers. In the unit tests, the fuzz targets and an
 * --enable-asan build (bug_set_fatal(1), HK_BUG_FATAL) it aborts, so a
 * broken rule fails the test that broke it. HK_BUG is true when the
 * condition held.
 *
 * HK_ASSERT(cond) names a condition that must hold, where going on would
 * corrupt data or memory: it logs and aborts in every build of the
 * server. libheureka's build (HK_LIBRARY, bug.c) never aborts: HK_BUG
 * only logs and counts there, and bug_assert_failed does not exist, so
 * code the library links has HK_BUG with a way around instead.
 *
 * Asserts catch our own bugs, never bad input (docs/style.md): input a
 * client or peer controls is refused with a 4xx, not asserted.
 */
#ifndef BUG_H
#define BUG_H

#include <stddef.h>
#include <stdint.h>

/*
 * The slow paths; site is the call site's "logged once" flag. bug_hit
 * returns 1 (or does not return, when fatal).
 */
int	bug_hit(const char *expr, const char *file, int line,
	    const char *func, int *site);
void	bug_assert_failed(const char *expr, const char *file, int line,
	    const char *func) __attribute__((noreturn));

/*
 * The 1 is bug_hit's answer written out, so that the static analyzer
 * (tests/scan/run), which does not see into bug_hit, knows that HK_BUG is
 * true exactly when cond held and follows the caller's recovery only then.
 */
#define HK_BUG(cond) __extension__ ({					\
	static int hk_bug_site_;					\
	__builtin_expect(!!(cond), 0) ?					\
	    (bug_hit(#cond, __FILE__, __LINE__, __func__, &hk_bug_site_), 1) : \
	    0;								\
})

#define HK_ASSERT(cond) do {						\
	if (__builtin_expect(!(cond), 0))				\
		bug_assert_failed(#cond, __FILE__, __LINE__, __func__);	\
} while (0)

/* How many HK_BUG conditions held since the start (all sites). */
uint64_t bug_count(void);
/* Make HK_BUG abort (1) or log and count (0); tests and fuzzers set 1. */
void	 bug_set_fatal(int);
int	 bug_is_fatal(void);

/*
 * Whether the structure walkers (registry_check, cache_check,
 * peerq_check) run after every operation: the unit tests and the fuzz
 * targets turn it on; a server never does.
 */
void	 bug_set_self_check(int);
int	 bug_self_check(void);
/*
 * Whether a walker over a structure of n entries is due after this
 * operation (*left, zero at first, counts down to the next walk): every
 * time while n is small, every n/16-th operation above, so a test's walks
 * cost some 16 entry visits per operation whatever its size. 0 whenever
 * self-checks are off.
 */
int	 bug_check_due_slow(uint64_t *left, size_t n);
/* bug_set_self_check's flag (read by bug_check_due, bug_self_check). */
extern int bug_checks;

static inline int
bug_check_due(uint64_t *left, size_t n)
{
	/* Off in a server: one predictable branch, no call (fieldperf). */
	if (__builtin_expect(!__atomic_load_n(&bug_checks, __ATOMIC_RELAXED),
	    1))
		return (0);
	return (bug_check_due_slow(left, n));
}
/*
 * Declared first in a public operation: fn(&p) runs when the function
 * returns, by whichever return (the cleanup attribute of GCC and clang).
 * How a module runs its walker after each operation, when bug_check_due
 * says so.
 */
#define HK_CHECK_AT_EXIT(type, fn, p)					\
	type *hk_check_at_exit_ __attribute__((cleanup(fn), unused)) = (p)

#endif
