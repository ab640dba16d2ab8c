/*
 * xmalloc.c: allocators that never return NULL (tmux style), callers never
 * check. What a failed allocation does depends on the build (xmalloc.h):
 * the server's libcommon logs and exits; libheureka's (HK_LIBRARY) gives
 * its reserve back and tries again, and waits for memory only when the
 * reserve is already spent, so the host process never ends here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "xmalloc.h"

/* The tests' failure injection (xmalloc_set_fail_hook). */
static xmalloc_fail_fn	 xm_fail;
static void		*xm_fail_arg;

/* Whether the test hook fails this attempt. */
static int
xm_injected(size_t size, int reserve)
{
	xmalloc_fail_fn	fn = __atomic_load_n(&xm_fail, __ATOMIC_ACQUIRE);

	return (fn != NULL && fn(size, reserve, xm_fail_arg));
}

/* Set or clear the test hook. */
void
xmalloc_set_fail_hook(xmalloc_fail_fn fn, void *arg)
{
	xm_fail_arg = arg;
	__atomic_store_n(&xm_fail, fn, __ATOMIC_RELEASE);
}

/* One attempt: realloc(ptr, size), or a zeroed block when zero is set. */
static void *
xm_attempt(void *ptr, size_t size, int zero)
{
	if (xm_injected(size, 0))
		return (NULL);
	if (zero)
		return (calloc(1, size));
	return (realloc(ptr, size));
}

#ifdef HK_LIBRARY
static pthread_mutex_t	 xm_mu = PTHREAD_MUTEX_INITIALIZER;
static void		*xm_reserve;		/* guarded by xm_mu */
static int		 xm_waiting_logged;	/* guarded by xm_mu */
static int		 xm_spent;		/* given back; guarded by xm_mu */

/* Sleep ms milliseconds (no clock is read: common/clock.c's rule). */
static void
xm_sleep(int64_t ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * An attempt of size bytes failed: give the reserve back, so the retry
 * finds memory; with none left, wait (*wait_ms, doubling up to a second)
 * before the retry. Logged once per episode.
 */
static void
xm_failed(const char *what, size_t size, int64_t *wait_ms)
{
	void	*r;

	pthread_mutex_lock(&xm_mu);
	r = xm_reserve;
	__atomic_store_n(&xm_reserve, NULL, __ATOMIC_RELEASE);
	if (r != NULL)
		xm_spent = 1;
	if (r == NULL && !xm_waiting_logged) {
		xm_waiting_logged = 1;
		log_warnx("%s: out of memory (%zu bytes) and no reserve left: "
		    "waiting for memory", what, size);
	}
	pthread_mutex_unlock(&xm_mu);
	if (r != NULL) {
		free(r);
		log_warnx("%s: out of memory (%zu bytes): gave the reserve "
		    "back; new operations fail with ENOMEM until it is taken "
		    "again", what, size);
		return;
	}
	xm_sleep(*wait_ms);
	if (*wait_ms < 1000)
		*wait_ms *= 2;
}

/* Allocate (or resize) until it works; see xm_failed. */
static void *
xm_alloc(const char *what, void *ptr, size_t size, int zero)
{
	void	*p;
	int64_t	 wait_ms = 1;

	while ((p = xm_attempt(ptr, size, zero)) == NULL)
		xm_failed(what, size, &wait_ms);
	return (p);
}

/* Another library's allocation failed: as xm_failed, for its retry. */
void
xmalloc_recover(const char *what)
{
	int64_t	wait_ms = 100;

	xm_failed(what, 0, &wait_ms);
}

/* Hold the reserve (take it back if spent); -1 ENOMEM if it cannot be. */
int
xmalloc_ready(void)
{
	void	*r = NULL;
	int	 rc = 0, back = 0;

	if (__atomic_load_n(&xm_reserve, __ATOMIC_ACQUIRE) != NULL)
		return (0);
	pthread_mutex_lock(&xm_mu);
	if (xm_reserve == NULL) {
		r = xm_injected(XMALLOC_RESERVE, 1) ? NULL :
		    malloc(XMALLOC_RESERVE);
		if (r == NULL)
			rc = -1;
		else {
			__atomic_store_n(&xm_reserve, r, __ATOMIC_RELEASE);
			xm_waiting_logged = 0;
			back = xm_spent;
			xm_spent = 0;
		}
	}
	pthread_mutex_unlock(&xm_mu);
	if (rc == -1)
		errno = ENOMEM;
	else if (back)
		log_info("xmalloc: memory is back: took the reserve again");
	return (rc);
}

/* This flavour holds a reserve. */
int
xmalloc_has_reserve(void)
{
	return (1);
}
#else
/* Allocate (or resize) or die: the server's rule (xmalloc.h). */
static void *
xm_alloc(const char *what, void *ptr, size_t size, int zero)
{
	void	*p;

	if ((p = xm_attempt(ptr, size, zero)) == NULL)
		fatalx("%s: out of memory (%zu bytes)", what, size);
	return (p);
}

/* Another library's allocation failed: the server exits. */
void
xmalloc_recover(const char *what)
{
	fatalx("%s: out of memory", what);
}

/* The server holds no reserve: always ready. */
int
xmalloc_ready(void)
{
	return (0);
}

/* The server's flavour holds no reserve. */
int
xmalloc_has_reserve(void)
{
	return (0);
}
#endif

/* Allocate size bytes. */
void *
xmalloc(size_t size)
{
	return (xm_alloc("xmalloc", NULL, size == 0 ? 1 : size, 0));
}

/* Allocate a zeroed array, checking the multiplication for overflow. */
void *
xcalloc(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		n = size = 1;
	if (n > SIZE_MAX / size) {
		log_warnx("xcalloc: overflow (%zu x %zu)", n, size);
		n = SIZE_MAX / size;	/* fails as out of memory */
	}
	return (xm_alloc("xcalloc", NULL, n * size, 1));
}

/* Resize. */
void *
xrealloc(void *ptr, size_t size)
{
	return (xreallocarray(ptr, 1, size));
}

/* Resize an array, checking the multiplication for overflow. */
void *
xreallocarray(void *ptr, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		log_warnx("xreallocarray: overflow (%zu x %zu)", n, size);
		n = SIZE_MAX / size;	/* fails as out of memory */
	}
	if (n * size == 0)
		n = size = 1;
	return (xm_alloc("xreallocarray", ptr, n * size, 0));
}

/* Duplicate a string. */
char *
xstrdup(const char *s)
{
	size_t	 len = strlen(s);
	char	*p = xm_alloc("xstrdup", NULL, len + 1, 0);

	memcpy(p, s, len + 1);
	return (p);
}

/* Duplicate at most n bytes of a string, always terminated. */
char *
xstrndup(const char *s, size_t n)
{
	size_t	 len = strnlen(s, n);
	char	*p = xm_alloc("xstrndup", NULL, len + 1, 0);

	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

/* Format into a new string; returns the length. */
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

#ifdef HK_LIBRARY
/* va_list flavour of xasprintf: measure, allocate (xm_alloc), format. */
int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	va_list	ap2;
	char	one;
	int	n;

	va_copy(ap2, ap);
	n = vsnprintf(&one, 1, fmt, ap2);	/* the length it needs */
	va_end(ap2);
	if (n < 0) {
		/* A bad format or conversion: an empty string, said. */
		log_warnx("xvasprintf: cannot format \"%s\"", fmt);
		*ret = xm_alloc("xvasprintf", NULL, 1, 1);
		return (0);
	}
	*ret = xm_alloc("xvasprintf", NULL, (size_t)n + 1, 0);
	vsnprintf(*ret, (size_t)n + 1, fmt, ap);
	return (n);
}
#else
/* va_list flavour of xasprintf: one vasprintf pass, or die. */
int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int	n;

	if (xm_injected(0, 0) || (n = vasprintf(ret, fmt, ap)) < 0 ||
	    *ret == NULL)
		fatalx("xvasprintf: out of memory");
	return (n);
}
#endif
