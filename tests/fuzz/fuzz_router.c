/*
 * fuzz_router.c: libFuzzer target for the URL router with its
 * percent-decoding (rest_route_lookup: base, segments, routes, Allow) and
 * for the header-time guard's request head parser (guard_parse_head). The
 * first byte picks the method; the rest is the path, and also the head.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "bug.h"
#include "guard.h"
#include "log.h"
#include "rest.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct guard_head	 h;
	enum rest_body		 body;
	const char		*reason;
	char			*path, allow[64];
	int			 method, rc;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	if (len < 1)
		return (0);
	method = 1 << (data[0] % 10);
	path = xstrndup((const char *)data + 1, len - 1);
	rc = rest_route_lookup(path, method, &body, allow, sizeof allow);
	if (rc != 0 && rc != 400 && rc != 404 && rc != 405)
		fatalx("rest_route_lookup: %d", rc);
	if (rc == 405 && allow[0] == '\0')
		fatalx("405 without Allow");
	free(path);
	rc = guard_parse_head((const char *)data + 1, len - 1, &h, &reason);
	if (rc == 0 && (h.target == NULL || h.line == NULL ||
	    h.target + h.target_len > (const char *)data + len))
		fatalx("guard_parse_head: bad target");
	if (rc != 0 && (reason == NULL || *reason == '\0'))
		fatalx("guard_parse_head: %d without a reason", rc);
	return (0);
}
