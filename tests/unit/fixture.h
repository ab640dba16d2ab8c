/*
 * fixture.h: the one registrable instance the check unit tests build
 * (mkinst in check_registry, check_leader, check_sync, check_batch,
 * check_history, check_cache, check_cache_sliced; check_ops, check_peer).
 * Each test's own values are parameters, or set by its wrapper after the
 * call; linked into those binaries (tests/include.am, TEST_FIXTURE).
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdint.h>

#include "instance.h"

/*
 * A new instance of app (NULL: none) with id, host host.example at
 * 10.0.0.1, status st, lastDirtyTimestamp dirty and a lease (the decoding
 * defaults of instance_new() otherwise). The caller frees it or hands it
 * over.
 */
struct instance	*fixture_instance(const char *app, const char *id,
		    enum instance_status st, int64_t dirty);

#endif
