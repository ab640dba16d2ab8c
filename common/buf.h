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
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_adds(struct buf *, const char *);
void	 buf_addc(struct buf *, char);
void	 buf_addf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 buf_add_i64(struct buf *, int64_t);
char	*buf_steal(struct buf *, size_t *);	/* caller frees; buf reset */

#endif
