/*
 * testutil.h: helpers shared by the check unit tests. Linked into each
 * test binary that needs them (see tests/include.am).
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>

/* A file of tests/data, NUL-terminated; *len without the NUL. */
char	*read_fixture(const char *name, size_t *len);

#endif
