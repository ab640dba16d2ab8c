/*
 * bug.c: the slow paths of bug.h's HK_BUG and HK_ASSERT, the process-wide
 * count /metrics reports, and the switches the tests set. The count and
 * the per-site flags are atomics: libheureka's threads may hit a site at
 * once. libheureka's build (HK_LIBRARY) never aborts: HK_BUG logs and
 * counts whatever bug_set_fatal says (the unit tests, which link the
 * server's build, still make it fatal), and it has no bug_assert_failed,
 * so code it links uses HK_BUG with a way around, never HK_ASSERT (the
 * link fails otherwise: -no-undefined).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "heureka-config.h"
#include "bug.h"
#include "log.h"

static uint64_t	bug_total;
#if defined(HK_BUG_FATAL) && !defined(HK_LIBRARY)
static int	bug_fatal = 1;		/* --enable-asan */
#else
static int	bug_fatal;
#endif
int		bug_checks;	/* bug.h's bug_check_due reads it inline */

/* A broken rule: count it, log it the first time at this site. */
int
bug_hit(const char *expr, const char *file, int line, const char *func,
    int *site)
{
	__atomic_add_fetch(&bug_total, 1, __ATOMIC_RELAXED);
#ifndef HK_LIBRARY
	if (__atomic_load_n(&bug_fatal, __ATOMIC_RELAXED)) {
		log_warnx("BUG: %s:%d: %s: \"%s\" (fatal in this build)",
		    file, line, func, expr);
		abort();
	}
#endif
	if (__atomic_exchange_n(site, 1, __ATOMIC_RELAXED) == 0)
		log_warnx("BUG: %s:%d: %s: \"%s\"; going on, and not "
		    "logging this site again (heureka_bugs_total counts)",
		    file, line, func, expr);
	return (1);
}

#ifndef HK_LIBRARY
/* A rule whose breach would corrupt data: stop here. */
void
bug_assert_failed(const char *expr, const char *file, int line,
    const char *func)
{
	log_warnx("assertion failed: %s:%d: %s: \"%s\"", file, line, func,
	    expr);
	abort();
}
#endif

/* The count for /metrics. */
uint64_t
bug_count(void)
{
	return (__atomic_load_n(&bug_total, __ATOMIC_RELAXED));
}

/* Tests and fuzzers: HK_BUG aborts. */
void
bug_set_fatal(int on)
{
	__atomic_store_n(&bug_fatal, on, __ATOMIC_RELAXED);
}

/* Whether HK_BUG aborts. */
int
bug_is_fatal(void)
{
	return (__atomic_load_n(&bug_fatal, __ATOMIC_RELAXED));
}

/* Tests and fuzzers: walk the structures after every operation. */
void
bug_set_self_check(int on)
{
	__atomic_store_n(&bug_checks, on, __ATOMIC_RELAXED);
}

/* Whether the walkers run after every operation. */
int
bug_self_check(void)
{
	return (__atomic_load_n(&bug_checks, __ATOMIC_RELAXED));
}

/*
 * Whether the walker is due (bug.h): *left counts the operations down to
 * the next walk, which then sets it to n/16, so walks cost some 16 entry
 * visits an operation. (A modulus of the growing n would not do: when a
 * structure grows by one entry an operation, ops / (n/16) stays nearly
 * constant and the remainder hits 0 every few operations.)
 */
int
bug_check_due_slow(uint64_t *left, size_t n)
{
	if (*left > 0) {
		(*left)--;
		return (0);
	}
	*left = n / 16;
	return (1);
}
