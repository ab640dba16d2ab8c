/*
 * tests/unit/check_gzip.c: the one bounded inflate (common/gzip.c): gzip
 * and zlib input, the output bound exactly at max, the two error codes
 * and their reasons, the caller's buffer left as it was on a refusal, and
 * hreq_read_body's answer for a gzip request body that inflates past its
 * bound (413, whatever the bound, not 400).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <zlib.h>

#include <event2/buffer.h>

#include "buf.h"
#include "gzip.h"
#include "http_int.h"
#include "testutil.h"

/* n bytes of a repetitive text, the kind that compresses well. */
static char *
mktext(size_t n)
{
	char	*p = malloc(n + 1);
	size_t	 i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < n; i++)
		p[i] = "heureka "[i % 8];
	p[n] = '\0';
	return (p);
}

/* zlib-wrapped (not gzip) data of in. */
static void
zlib_compress(const char *in, size_t len, struct buf *out)
{
	uLongf	 n = compressBound((uLong)len);
	Bytef	*z = malloc(n);

	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(compress(z, &n, (const Bytef *)in, (uLong)len), Z_OK);
	buf_add(out, z, n);
	free(z);
}

START_TEST(test_round_trip_gzip_and_zlib)
{
	struct buf	 gz, zl, out;
	char		*text = mktext(200000);

	buf_init(&gz, 0);
	buf_init(&zl, 0);
	buf_init(&out, 0);
	gzip_compress(text, 200000, &gz, 6);
	ck_assert_int_eq(gzip_inflate(gz.data, gz.len, &out, 200000), 0);
	ck_assert_uint_eq(out.len, 200000);
	ck_assert(memcmp(out.data, text, 200000) == 0);
	/* Appends, after what out held. */
	zlib_compress(text, 1000, &zl);
	ck_assert_int_eq(gzip_inflate(zl.data, zl.len, &out, 1000), 0);
	ck_assert_uint_eq(out.len, 201000);
	ck_assert(memcmp(out.data + 200000, text, 1000) == 0);
	ck_assert_int_eq(out.data[out.len], '\0');
	buf_free(&gz);
	buf_free(&zl);
	buf_free(&out);
	free(text);
}
END_TEST

START_TEST(test_bound_is_exact)
{
	struct buf	 gz, out;
	char		*text = mktext(100000);

	buf_init(&gz, 0);
	buf_init(&out, 0);
	buf_adds(&out, "kept");
	gzip_compress(text, 100000, &gz, 6);
	/* Not a multiple of the inflate's chunk: the bound is the byte. */
	ck_assert_int_eq(gzip_inflate(gz.data, gz.len, &out, 99999),
	    GZIP_ERR_TOO_BIG);
	ck_assert_str_eq(out.data, "kept");
	ck_assert_uint_eq(out.len, 4);
	ck_assert_str_eq(gzip_strerror(GZIP_ERR_TOO_BIG),
	    "inflates past the size limit");
	ck_assert_int_eq(gzip_inflate(gz.data, gz.len, &out, 100000), 0);
	ck_assert_uint_eq(out.len, 100004);
	buf_free(&gz);
	buf_free(&out);
	free(text);
}
END_TEST

START_TEST(test_corrupt_and_truncated)
{
	struct buf	 gz, out;
	char		*text = mktext(50000);

	buf_init(&gz, 0);
	buf_init(&out, 0);
	gzip_compress(text, 50000, &gz, 6);
	/* Truncated: the stream never ends. */
	ck_assert_int_eq(gzip_inflate(gz.data, gz.len / 2, &out, 1 << 20),
	    GZIP_ERR_CORRUPT);
	ck_assert_uint_eq(out.len, 0);
	/* A flipped byte in the CRC trailer. */
	gz.data[gz.len - 6] ^= 0x55;
	ck_assert_int_eq(gzip_inflate(gz.data, gz.len, &out, 1 << 20),
	    GZIP_ERR_CORRUPT);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_int_eq(gzip_inflate("not gzip", 8, &out, 1 << 20),
	    GZIP_ERR_CORRUPT);
	ck_assert_int_eq(gzip_inflate("", 0, &out, 1 << 20),
	    GZIP_ERR_CORRUPT);
	ck_assert_str_eq(gzip_strerror(GZIP_ERR_CORRUPT),
	    "corrupt or truncated gzip data");
	buf_free(&gz);
	buf_free(&out);
	free(text);
}
END_TEST

/* A request carrying body with the given Content-Encoding. */
static struct hreq *
mkrequest(const char *enc, const void *body, size_t len)
{
	struct hreq	*req;
	char		 head[128];
	int		 n;

	n = snprintf(head, sizeof head, "POST / HTTP/1.1\r\n%s%s%s\r\n",
	    enc != NULL ? "Content-Encoding: " : "", enc != NULL ? enc : "",
	    enc != NULL ? "\r\n" : "");
	ck_assert_ptr_nonnull(req = hreq_new_head(head, (size_t)n));
	evbuffer_add(req->body, body, len);
	return (req);
}

START_TEST(test_read_body_bomb_is_413)
{
	struct hreq		*req;
	struct buf		 gz, out;
	const char		*cause = NULL;
	char			*text = mktext(1 << 20);

	buf_init(&gz, 0);
	buf_init(&out, 0);
	gzip_compress(text, 1 << 20, &gz, 9);
	/* A bound that is not a multiple of 16 KiB (the inflate's chunk). */
	req = mkrequest("gzip", gz.data, gz.len);
	ck_assert_int_eq(hreq_read_body(req, 100000, &out, &cause), 413);
	ck_assert_str_eq(cause, "request body too large");
	hreq_free(req);

	buf_reset(&out);
	req = mkrequest("gzip", gz.data, gz.len / 2);
	ck_assert_int_eq(hreq_read_body(req, 2 << 20, &out, &cause), 400);
	ck_assert_str_eq(cause, "cannot inflate gzip request body");
	hreq_free(req);

	buf_reset(&out);
	req = mkrequest("gzip", gz.data, gz.len);
	ck_assert_int_eq(hreq_read_body(req, 1 << 20, &out, &cause), 0);
	ck_assert_uint_eq(out.len, 1 << 20);
	hreq_free(req);
	buf_free(&gz);
	buf_free(&out);
	free(text);
}
END_TEST

/*
 * A deflate fragment is allocated to its length (plus the terminator and
 * malloc's rounding), not to the doubling buffer it was made in: the
 * cache holds one for every application between a gzip build's slices.
 * It inflates back to its input.
 */
START_TEST(test_frag_exact)
{
	struct gz_frag	 f;
	struct buf	 z, out;
	char		*text = mktext(200 * 1024);
	size_t		 n;
	static const char hdr[] = { 0x1f, (char)0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

	for (n = 1000; n <= 200 * 1024; n *= 7) {
		gzip_frag_make(&f, text, n, 3);
		ck_assert_uint_le(malloc_usable_size(f.data), f.len + 1 + 32);
		buf_init(&z, 0);
		buf_add(&z, hdr, sizeof hdr);
		buf_add(&z, f.data, f.len);
		gzip_stitch_end(&z, f.crc, f.raw_len);
		buf_init(&out, 0);
		ck_assert_int_eq(gzip_inflate(z.data, z.len, &out, n), 0);
		ck_assert_uint_eq(out.len, n);
		ck_assert(memcmp(out.data, text, n) == 0);
		buf_free(&z);
		buf_free(&out);
		gzip_frag_clear(&f);
	}
	free(text);
}
END_TEST

static Suite *
gzip_suite(void)
{
	Suite	*s = suite_create("gzip");
	TCase	*tc = tcase_create("inflate");

	tcase_add_test(tc, test_round_trip_gzip_and_zlib);
	tcase_add_test(tc, test_bound_is_exact);
	tcase_add_test(tc, test_corrupt_and_truncated);
	tcase_add_test(tc, test_read_body_bomb_is_413);
	tcase_add_test(tc, test_frag_exact);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(gzip_suite()));
}
