/*
 * gzip.c: compression for registry bodies. Full registries are large (about
 * 1 KB of JSON per instance) and fetched by every client every 30 s, so the
 * cache keeps each application's encoding as its own deflate fragment and
 * stitches a complete gzip stream from them; a change then recompresses one
 * application, not the registry. The bounded inflate every HTTP body
 * goes through (server requests, peer replies, the client library's
 * responses) is here too.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "gzip.h"
#include "log.h"
#include "xmalloc.h"

/* Deflate in into out with the given stream setup; flush decides the end. */
static void
gzip_deflate(z_stream *zs, const char *in, size_t len, struct buf *out,
    int flush)
{
	char	chunk[16384];
	int	rc;

	zs->next_in = (Bytef *)(uintptr_t)in;
	zs->avail_in = (uInt)len;
	do {
		zs->next_out = (Bytef *)chunk;
		zs->avail_out = sizeof chunk;
		rc = deflate(zs, flush);
		if (rc == Z_STREAM_ERROR) {
			/* Our misuse of the stream: the body stays short. */
			fatalx_server("deflate: stream error");
			break;
		}
		buf_add(out, chunk, sizeof chunk - zs->avail_out);
	} while (zs->avail_out == 0 || zs->avail_in != 0);
}

/* gzip a whole body in one go. */
void
gzip_compress(const char *in, size_t len, struct buf *out, int level)
{
	z_stream	zs;

	memset(&zs, 0, sizeof zs);
	/* With our fixed parameters it fails only when out of memory. */
	while (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		xmalloc_recover("deflateInit2");
	gzip_deflate(&zs, in, len, out, Z_FINISH);
	deflateEnd(&zs);
}

/*
 * Inflate gzip (or zlib) data, refusing more than max output bytes: each
 * chunk is checked before it is appended, so out never holds more than
 * max new bytes, and a refusal takes back what was appended.
 */
int
gzip_inflate(const char *in, size_t len, struct buf *out, size_t max)
{
	z_stream	zs;
	char		chunk[16384];
	size_t		start = out->len, n;
	int		rc, err = 0, was_over = out->overflow;

	if (len > UINT_MAX)
		return (GZIP_ERR_TOO_BIG);
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 15 + 32) != Z_OK)	/* gzip or zlib header */
		return (GZIP_ERR_CORRUPT);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = (Bytef *)chunk;
		zs.avail_out = sizeof chunk;
		rc = inflate(&zs, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END) {
			err = GZIP_ERR_CORRUPT;
			break;
		}
		n = sizeof chunk - zs.avail_out;
		if (out->len - start + n > max || out->overflow) {
			err = GZIP_ERR_TOO_BIG;
			break;
		}
		buf_add(out, chunk, n);
	} while (rc != Z_STREAM_END && (zs.avail_in != 0 ||
	    zs.avail_out == 0));
	inflateEnd(&zs);
	if (err == 0 && out->overflow)
		err = GZIP_ERR_TOO_BIG;
	else if (err == 0 && rc != Z_STREAM_END)
		err = GZIP_ERR_CORRUPT;		/* the input ended early */
	if (err != 0 && out->data != NULL) {
		out->len = start;
		out->data[start] = '\0';
		out->overflow = was_over;
	}
	return (err);
}

/* What went wrong, in words. */
const char *
gzip_strerror(int err)
{
	switch (err) {
	case 0:
		return ("no error");
	case GZIP_ERR_TOO_BIG:
		return ("inflates past the size limit");
	default:
		return ("corrupt or truncated gzip data");
	}
}

/* Raw deflate of one fragment, ending with a sync flush (byte aligned). */
void
gzip_frag_make(struct gz_frag *f, const char *in, size_t len, int level)
{
	z_stream	zs;
	struct buf	b;

	memset(&zs, 0, sizeof zs);
	/* With our fixed parameters it fails only when out of memory. */
	while (deflateInit2(&zs, level, Z_DEFLATED, -15, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		xmalloc_recover("deflateInit2");
	buf_init(&b, 0);
	gzip_deflate(&zs, in, len, &b, Z_SYNC_FLUSH);
	deflateEnd(&zs);
	buf_trim(&b);		/* kept until a chunk takes it over */
	f->data = buf_steal(&b, &f->len);
	f->crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)in,
	    (uInt)len);
	f->raw_len = len;
	f->op = gzip_combine_op(len);
}

/*
 * A fragment of stored (uncompressed) deflate blocks, at most 65,535
 * bytes each: a 3-bit block header padded to the byte, LEN and its
 * complement, the bytes. It starts and ends on a byte boundary like a
 * sync-flushed one, and costs a copy and a CRC rather than a deflate
 * stream's set-up (zeroing its hash table is ~90k instructions), which
 * is what a piece of a few dozen bytes made on every build needs.
 */
void
gzip_frag_store(struct gz_frag *f, const char *in, size_t len)
{
	struct buf	 b;
	unsigned char	 h[5];
	size_t		 off = 0, n;

	buf_init(&b, 0);
	do {
		n = len - off < 65535 ? len - off : 65535;
		h[0] = 0;	/* BFINAL 0, BTYPE 00 (stored) */
		h[1] = n & 0xff;
		h[2] = (n >> 8) & 0xff;
		h[3] = ~n & 0xff;
		h[4] = (~n >> 8) & 0xff;
		buf_add(&b, h, sizeof h);
		buf_add(&b, in + off, n);
		off += n;
	} while (off < len);
	f->data = buf_steal(&b, &f->len);
	f->crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)in,
	    (uInt)len);
	f->raw_len = len;
	f->op = gzip_combine_op(len);
}

/* The operator that appends raw_len bytes' CRC to a running one. */
uint32_t
gzip_combine_op(size_t raw_len)
{
	return ((uint32_t)crc32_combine_gen((z_off_t)raw_len));
}

/* Release a fragment's bytes. */
void
gzip_frag_clear(struct gz_frag *f)
{
	free(f->data);
	memset(f, 0, sizeof *f);
}

/* Write the 10-byte gzip header and start the running CRC and length. */
void
gzip_stitch_begin(struct buf *out, uint32_t *crc, size_t *raw_len)
{
	static const char hdr[10] = {
		0x1f, (char)0x8b, 8, 0, 0, 0, 0, 0, 0, 3
	};

	buf_add(out, hdr, sizeof hdr);
	*crc = (uint32_t)crc32(0L, Z_NULL, 0);
	*raw_len = 0;
}

/* Fold one fragment's CRC and length into the running ones. */
void
gzip_stitch_fold(const struct gz_frag *f, uint32_t *crc, size_t *raw_len)
{
	*crc = (uint32_t)crc32_combine_op(*crc, f->crc, f->op);
	*raw_len += f->raw_len;
}

/* Append one fragment and fold its CRC into the running one. */
void
gzip_stitch_add(struct buf *out, const struct gz_frag *f, uint32_t *crc,
    size_t *raw_len)
{
	buf_add(out, f->data, f->len);
	gzip_stitch_fold(f, crc, raw_len);
}


/* Close the stream: an empty final fixed block, CRC32 and ISIZE (LE). */
void
gzip_stitch_end(struct buf *out, uint32_t crc, size_t raw_len)
{
	unsigned char	t[10];
	uint32_t	isize = (uint32_t)raw_len;

	t[0] = 0x03;		/* BFINAL=1, fixed Huffman, end of block */
	t[1] = 0x00;
	t[2] = crc & 0xff;
	t[3] = (crc >> 8) & 0xff;
	t[4] = (crc >> 16) & 0xff;
	t[5] = (crc >> 24) & 0xff;
	t[6] = isize & 0xff;
	t[7] = (isize >> 8) & 0xff;
	t[8] = (isize >> 16) & 0xff;
	t[9] = (isize >> 24) & 0xff;
	buf_add(out, t, sizeof t);
}

/*
 * A gzip stream fed a piece at a time (the cache's sliced gzip bodies):
 * the bytes are those gzip_compress makes of the whole input at once,
 * since deflate without a flush does not depend on how its input is cut.
 */
struct gzip_stream {
	z_stream	zs;
};

/* A new stream at level (as gzip_compress). */
struct gzip_stream *
gzip_stream_new(int level)
{
	struct gzip_stream	*gs = xcalloc(1, sizeof *gs);

	/* With our fixed parameters it fails only when out of memory. */
	while (deflateInit2(&gs->zs, level, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		xmalloc_recover("deflateInit2");
	return (gs);
}

/* Compress len more bytes into out; finish with the last piece. */
void
gzip_stream_add(struct gzip_stream *gs, const char *in, size_t len,
    struct buf *out, int finish)
{
	gzip_deflate(&gs->zs, in != NULL ? in : "", len, out,
	    finish ? Z_FINISH : Z_NO_FLUSH);
}

/* Free a stream; NULL is fine. */
void
gzip_stream_free(struct gzip_stream *gs)
{
	if (gs == NULL)
		return;
	deflateEnd(&gs->zs);
	free(gs);
}
