/*
 * testutil.h: helpers shared by the check unit tests, linked into every
 * test binary (see tests/include.am): the one runner and fixture loading.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>

#include "clock.h"

/* Both clocks at ms, for tests that do not step the wall clock. */
#define TM(ms)	((struct hk_time){ .wall_ms = (ms), .mono_ms = (ms) })

struct Suite;

/*
 * The main() of every check binary: run the suite (check's CK_RUN_SUITE,
 * CK_RUN_CASE and CK_FORK still choose), free it, and return the exit
 * status: EXIT_SUCCESS only when every test passed and at least one ran.
 */
int	check_run(struct Suite *);

/* A file of tests/data, NUL-terminated; *len without the NUL. */
char	*read_fixture(const char *name, size_t *len);

#endif
