/*
 * fuzz_gzip.c: libFuzzer target for gzip request-body inflation
 * (gzip_inflate) under a small cap: never more than the cap out, and
 * whatever inflates must round-trip through gzip_compress.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bug.h"
#include "gzip.h"
#include "log.h"

#define FUZZ_GZIP_MAX	(256 * 1024)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct buf	out, z, back;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	buf_init(&out, 0);
	if (gzip_inflate((const char *)data, len, &out, FUZZ_GZIP_MAX) == 0) {
		if (out.len > FUZZ_GZIP_MAX)
			fatalx("inflated %zu bytes past the cap", out.len);
		buf_init(&z, 0);
		buf_init(&back, 0);
		gzip_compress(out.data != NULL ? out.data : "", out.len, &z, 1);
		if (gzip_inflate(z.data, z.len, &back, FUZZ_GZIP_MAX) != 0 ||
		    back.len != out.len || (out.len > 0 &&
		    memcmp(back.data, out.data, out.len) != 0))
			fatalx("gzip round trip differs");
		buf_free(&z);
		buf_free(&back);
	}
	buf_free(&out);
	return (0);
}
