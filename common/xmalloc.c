/*
 * xmalloc.c: fatal-on-failure allocators (tmux style). Callers never check
 * for NULL; the process logs and exits instead.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

/* Allocate size bytes or die. */
void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		size = 1;
	if ((p = malloc(size)) == NULL)
		fatalx("xmalloc: out of memory (%zu bytes)", size);
	return (p);
}

/* Allocate a zeroed array or die. */
void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		fatalx("xcalloc: out of memory (%zu x %zu)", n, size);
	return (p);
}

/* Resize or die. */
void *
xrealloc(void *ptr, size_t size)
{
	return (xreallocarray(ptr, 1, size));
}

/* Resize an array, checking the multiplication for overflow. */
void *
xreallocarray(void *ptr, size_t n, size_t size)
{
	void	*p;

	if (size != 0 && n > SIZE_MAX / size)
		fatalx("xreallocarray: overflow (%zu x %zu)", n, size);
	if (n * size == 0)
		n = size = 1;
	if ((p = realloc(ptr, n * size)) == NULL)
		fatalx("xreallocarray: out of memory (%zu x %zu)", n, size);
	return (p);
}

/* Duplicate a string or die. */
char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatalx("xstrdup: out of memory");
	return (p);
}

/* Duplicate at most n bytes of a string, always terminated. */
char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatalx("xstrndup: out of memory");
	return (p);
}

/* Format into a new string or die; returns the length. */
int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return (n);
}

/* va_list flavour of xasprintf. */
int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int	n;

	if ((n = vasprintf(ret, fmt, ap)) < 0 || *ret == NULL)
		fatalx("xvasprintf: out of memory");
	return (n);
}
