/*
 * buf.h: a growable byte buffer (curl's dynbuf idea) used by the encoders.
 * A buffer may carry a hard cap; appending past it sets `overflow` and
 * drops the data, so a decoder or encoder fed hostile input stays bounded.
 * The bytes are always NUL-terminated for convenience.
 */
#ifndef BUF_H
#define BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
	char	*data;
	size_t	 len;
	size_t	 size;
	size_t	 cap;		/* 0: unbounded */
	int	 overflow;
};

void	 buf_init(struct buf *, size_t cap);
void	 buf_free(struct buf *);		/* releases data, keeps struct */
void	 buf_reset(struct buf *);		/* len = 0, keeps memory */
void	 buf_add_grow(struct buf *, const void *, size_t);	/* buf_add */
void	 buf_addc(struct buf *, char);
void	 buf_addf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 buf_add_i64(struct buf *, int64_t);
char	*buf_steal(struct buf *, size_t *);	/* caller frees; buf reset */
void	 buf_trim(struct buf *);		/* allocation = len + 1 */
void	 buf_prealloc(struct buf *, size_t);	/* room for n more, exactly */

/*
 * Bounded C strings without printf: str_lcpy copies src into dst (size
 * bytes, always NUL-terminated when size > 0, truncated to fit) and
 * returns strlen(src), as snprintf(dst, size, "%s", src) does;
 * str_lcat and str_lcat_i64 append at *at (kept below size). callgrind:
 * snprintf's "%s" costs some 600 instructions, these a few per byte, and
 * a registration copies who acted and its audit detail several times.
 */
size_t	 str_lcpy(char *, const char *, size_t);
void	 str_lcat(char *, size_t, size_t *, const char *);
void	 str_lcat_i64(char *, size_t, size_t *, int64_t);
/*
 * The next item of a comma-separated list at *next, in place (strsep's
 * way: the list is cut up, *next moves on): spaces before an item are
 * skipped, it ends at a space, empty items are passed over; NULL at the
 * end. heureka.dns.nameservers and the CLI's server lists.
 */
char	*str_list_next(char **next);

/*
 * Append n bytes. Inline when they fit what is allocated (the encoders
 * append thousands of short pieces per instance); buf_add_grow() grows,
 * enforces the cap and keeps a buffer that overflowed dropping data.
 */
static inline void
buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n < b->size && !b->overflow &&
	    (b->cap == 0 || b->len + n <= b->cap)) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
		return;
	}
	buf_add_grow(b, p, n);
}

/* Append a C string (a literal's length is known at compile time). */
static inline void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

#endif
