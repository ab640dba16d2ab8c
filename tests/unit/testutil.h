/*
 * testutil.h: helpers shared by the check unit tests. Linked into each
 * test binary that needs them (see tests/include.am).
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>

#include "clock.h"

/* Both clocks at ms, for tests that do not step the wall clock. */
#define TM(ms)	((struct hk_time){ .wall_ms = (ms), .mono_ms = (ms) })

/* A file of tests/data, NUL-terminated; *len without the NUL. */
char	*read_fixture(const char *name, size_t *len);

#endif
