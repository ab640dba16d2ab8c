/*
 * xmalloc.h: allocation wrappers that never return NULL. Running out of
 * memory is fatal in heureka: a registry that silently drops a lease because
 * malloc failed is worse than one that restarts and re-syncs from its peers.
 */
#ifndef XMALLOC_H
#define XMALLOC_H

#include <stdarg.h>
#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 xvasprintf(char **, const char *, va_list);

#endif
