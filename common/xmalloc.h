/*
 * xmalloc.h: allocation wrappers that never return NULL, in two flavours
 * chosen at build time.
 *
 * The server's (libcommon.la): running out of memory is fatal. A registry
 * that silently drops a lease because malloc failed is worse than one that
 * restarts and re-syncs from its peers, and a daemon's supervisor restarts
 * it; so heurekad logs and exits.
 *
 * libheureka's (libcommon_lib.la, built with HK_LIBRARY): a library never
 * ends its host process (issue 22). It holds a reserve (XMALLOC_RESERVE
 * bytes of address space, never touched, so not resident); the first
 * failed allocation gives the reserve back to malloc and tries again, so
 * the operation in progress finishes whole (no half state, nothing to
 * unwind). Until the reserve is taken back, the library is "low": its
 * entry points ask xmalloc_ready() first and fail with ENOMEM, and its
 * timed tasks skip their run and try again at the next one (the next
 * heartbeat retries). Only an allocation that fails with the reserve
 * already spent waits for memory (backing off up to a second, logging)
 * instead of ending the host. The idea is Emacs's spare memory and Perl's
 * $^M; checking every call site instead would touch some 400 of them in
 * code the server shares.
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
int	 xvasprintf(char **, const char *, va_list)
	    __attribute__((format(printf, 2, 0), nonnull(2)));

/* The library's reserve: address space, not resident memory. */
#define XMALLOC_RESERVE		(8 * 1024 * 1024)

/*
 * An allocation outside these wrappers (a library's handle: yajl, zlib,
 * expat) failed: the server exits; libheureka gives its reserve back (or
 * waits) and the caller tries again.
 */
void	 xmalloc_recover(const char *what);
/*
 * 0 when allocations can be made safely: always in the server; in
 * libheureka when the reserve is held (taken back here if it was spent).
 * -1 with errno ENOMEM when it cannot be taken back.
 */
int	 xmalloc_ready(void);
/* Whether this flavour holds a reserve (libheureka: 1). */
int	 xmalloc_has_reserve(void);

/*
 * Tests: called before every allocation attempt (the reserve's too,
 * with reserve 1); nonzero makes that attempt fail as malloc would.
 * NULL: none.
 */
typedef int (*xmalloc_fail_fn)(size_t size, int reserve, void *arg);
void	 xmalloc_set_fail_hook(xmalloc_fail_fn, void *arg);

#endif
