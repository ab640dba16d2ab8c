/*
 * buf.c: growable buffer with an optional hard cap. Growth doubles, so a
 * full-registry encode of N instances costs O(N) copies amortised.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xmalloc.h"

/* Make b empty; cap bounds its length (0 = no bound). */
void
buf_init(struct buf *b, size_t cap)
{
	memset(b, 0, sizeof *b);
	b->cap = cap;
}

/* Free the bytes; the struct can be reused after buf_init. */
void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->size = 0;
	b->overflow = 0;
}

/* Forget the contents but keep the allocation for reuse. */
void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->overflow = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* Ensure room for n more bytes plus the terminator; 0 if over the cap. */
static int
buf_reserve(struct buf *b, size_t n)
{
	size_t	need, nsize;

	if (b->overflow)
		return (0);
	if (b->cap != 0 && b->len + n > b->cap) {
		b->overflow = 1;
		return (0);
	}
	need = b->len + n + 1;
	if (need <= b->size)
		return (1);
	nsize = b->size == 0 ? 256 : b->size;
	while (nsize < need)
		nsize *= 2;
	b->data = xrealloc(b->data, nsize);
	b->size = nsize;
	return (1);
}

/* Append n bytes, growing the allocation (buf_add's slow path). */
void
buf_add_grow(struct buf *b, const void *p, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* Append one byte. */
void
buf_addc(struct buf *b, char c)
{
	if (!buf_reserve(b, 1))
		return;
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

/* Append formatted text. */
void
buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	n;
	char	small[128];

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		buf_add(b, small, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/*
 * v in decimal, NUL-terminated, at the end of tmp (I64_DIGITS_MAX bytes:
 * 20 digits, a sign, the NUL); returns where it starts.
 */
#define I64_DIGITS_MAX	24
static inline char *
i64_digits(char *tmp, int64_t v)
{
	char		*p = tmp + I64_DIGITS_MAX;
	uint64_t	 u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	*--p = '\0';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	return (p);
}

/* Append a decimal 64-bit integer without going through printf. */
void
buf_add_i64(struct buf *b, int64_t v)
{
	char	 tmp[I64_DIGITS_MAX], *p = i64_digits(tmp, v);

	buf_add(b, p, (size_t)(tmp + sizeof tmp - 1 - p));
}

/*
 * Make room for n more bytes (and the terminator) in one allocation of
 * that size, when the caller knows or can guess what is coming: growth
 * by doubling copies the bytes once per step when realloc cannot extend
 * in place. Nothing is done past the cap (buf_add then overflows).
 */
void
buf_prealloc(struct buf *b, size_t n)
{
	if (b->overflow || (b->cap != 0 && b->len + n > b->cap) ||
	    b->len + n + 1 <= b->size)
		return;
	b->data = xrealloc(b->data, b->len + n + 1);
	b->size = b->len + n + 1;
	b->data[b->len] = '\0';
}

/*
 * Give back the allocation's unused tail (growth doubles, so up to half
 * of it): the bytes and their terminator are all that stays allocated.
 * For a buffer that is about to be kept (buf_steal) rather than grown.
 */
void
buf_trim(struct buf *b)
{
	if (b->data == NULL || b->size <= b->len + 1)
		return;
	b->data = xrealloc(b->data, b->len + 1);
	b->size = b->len + 1;
}

/* Hand the bytes to the caller (NUL-terminated) and reset the buffer. */
char *
buf_steal(struct buf *b, size_t *lenp)
{
	char	*p;

	/*
	 * Nothing allocated yet: a fresh buffer, or one whose cap was
	 * passed before it held a byte (buf_reserve refuses once overflow
	 * is set). Either way the caller gets "".
	 */
	if (b->data == NULL) {
		b->data = xmalloc(1);
		b->data[0] = '\0';
		b->len = 0;
	}
	p = b->data;
	if (lenp != NULL)
		*lenp = b->len;
	b->data = NULL;
	b->len = b->size = 0;
	b->overflow = 0;
	return (p);
}

/* Copy src into dst, truncated to size; strlen(src) (buf.h). */
size_t
str_lcpy(char *dst, const char *src, size_t size)
{
	size_t	n = strlen(src);

	if (size > 0) {
		size_t	m = n < size - 1 ? n : size - 1;

		memcpy(dst, src, m);
		dst[m] = '\0';
	}
	return (n);
}

/* Append s at *at in dst (size bytes), truncated to fit (buf.h). */
void
str_lcat(char *dst, size_t size, size_t *at, const char *s)
{
	size_t	n, room;

	if (size == 0 || *at >= size)
		return;
	room = size - 1 - *at;
	n = strlen(s);
	if (n > room)
		n = room;
	memcpy(dst + *at, s, n);
	*at += n;
	dst[*at] = '\0';
}

/* The next item of a comma-separated list (buf.h). */
char *
str_list_next(char **next)
{
	char	*tok;

	while ((tok = strsep(next, ",")) != NULL) {
		tok += strspn(tok, " ");
		tok[strcspn(tok, " ")] = '\0';
		if (*tok != '\0')
			return (tok);
	}
	return (NULL);
}

/* Append v in decimal at *at in dst, truncated to fit (buf.h). */
void
str_lcat_i64(char *dst, size_t size, size_t *at, int64_t v)
{
	char	tmp[I64_DIGITS_MAX];

	str_lcat(dst, size, at, i64_digits(tmp, v));
}
