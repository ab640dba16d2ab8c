/*
 * gzip.h: zlib helpers. Whole-body gzip and the bounded inflate for HTTP,
 * and
 * the stitching primitives that let the server's cache build a gzip body
 * from per-application deflate fragments without recompressing the rest
 * (the pigz technique: sync-flushed raw deflate blocks concatenated, CRCs
 * joined with crc32_combine, one empty final block at the end). Each
 * fragment carries its combine operator, computed once when it is made,
 * so joining costs one crc32_combine_op (a few multiplies) per fragment.
 */
#ifndef GZIP_H
#define GZIP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* A raw-deflate fragment ending on a byte boundary (Z_SYNC_FLUSH). */
struct gz_frag {
	char		*data;
	size_t		 len;
	uint32_t	 crc;		/* crc32 of the uncompressed bytes */
	size_t		 raw_len;	/* uncompressed length */
	uint32_t	 op;		/* crc32_combine_gen(raw_len) */
};

/* gzip the whole input into out (appends). */
void	gzip_compress(const char *, size_t, struct buf *out, int level);
/*
 * The same gzip made a piece at a time, for a body compressed over several
 * loop turns: the output is byte for byte gzip_compress's of all the
 * pieces joined. gzip_stream_add appends what deflate has ready to out;
 * finish (set on the last piece, which may be empty) writes the trailer.
 */
struct gzip_stream;
struct gzip_stream *gzip_stream_new(int level);
void	gzip_stream_add(struct gzip_stream *, const char *, size_t,
	    struct buf *out, int finish);
void	gzip_stream_free(struct gzip_stream *);	/* NULL is fine */
/*
 * The one inflate of the tree (request bodies, peer replies, the client
 * library's responses). gzip or zlib data, told apart by its header, is
 * appended to out, never more than max bytes of it: 0, or one of the
 * GZIP_ERR_* codes with out left as it was.
 */
#define GZIP_ERR_CORRUPT	(-1)	/* not gzip/zlib, truncated, bad CRC */
#define GZIP_ERR_TOO_BIG	(-2)	/* inflates to more than max bytes */
int	gzip_inflate(const char *, size_t, struct buf *out, size_t max);
/* The reason for a GZIP_ERR_* code, for logs and 4xx bodies. */
const char *gzip_strerror(int);

/* Deflate one fragment; frag's fields are owned by it. */
void	gzip_frag_make(struct gz_frag *, const char *, size_t, int level);
void	gzip_frag_clear(struct gz_frag *);
/* The same bytes as stored blocks: no compression, no deflate set-up. */
void	gzip_frag_store(struct gz_frag *, const char *, size_t);

/* Stitching: header, fragments in order, then the trailer. */
void	gzip_stitch_begin(struct buf *, uint32_t *crc, size_t *raw_len);
void	gzip_stitch_add(struct buf *, const struct gz_frag *, uint32_t *crc,
	    size_t *raw_len);
void	gzip_stitch_end(struct buf *, uint32_t crc, size_t raw_len);
/* Fold a fragment's CRC and length in without appending its bytes. */
void	gzip_stitch_fold(const struct gz_frag *, uint32_t *crc,
	    size_t *raw_len);
/* The crc32_combine operator for raw_len bytes (gz_frag.op). */
uint32_t gzip_combine_op(size_t raw_len);

#endif
