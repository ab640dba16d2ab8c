/*
 * auditfile.c: the audit's JSON-lines file (auditfile.h). One pending
 * buffer; a flush is one write(2) of at most AUDITFILE_MAX_PENDING bytes
 * to a file opened O_APPEND, a local file's write of that size takes well
 * under a millisecond on the page cache. A failed write keeps the bytes
 * for the next flush (still bounded) and is logged once a minute.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "audit.h"
#include "auditfile.h"
#include "buf.h"
#include "clock.h"
#include "log.h"
#include "xmalloc.h"

struct auditfile {
	char		*path;
	int		 fd;
	size_t		 size;		/* of the file now */
	size_t		 max_bytes;
	int		 keep;
	struct buf	 pending;
	struct event	*flush_ev;
	uint64_t	 dropped;
	struct log_ratelim rl;
};

/* Open (or create) the file for appending. */
static int
auditfile_reopen(struct auditfile *f)
{
	struct stat	st;

	f->fd = open(f->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0640);
	if (f->fd == -1)
		return (-1);
	f->size = fstat(f->fd, &st) == 0 ? (size_t)st.st_size : 0;
	return (0);
}

/* file.N-1 -> file.N ... file -> file.1, then a new file. */
static void
auditfile_rotate(struct auditfile *f)
{
	char	from[4096], to[4096];
	int	i;

	close(f->fd);
	f->fd = -1;
	if (f->keep == 0)
		unlink(f->path);
	for (i = f->keep; i >= 1; i--) {
		if (i == 1)
			snprintf(from, sizeof from, "%s", f->path);
		else
			snprintf(from, sizeof from, "%s.%d", f->path, i - 1);
		snprintf(to, sizeof to, "%s.%d", f->path, i);
		if (rename(from, to) != 0 && errno != ENOENT)
			log_warnx_rl(&f->rl, "audit file: rename %s: %s", from,
			    strerror(errno));
	}
	if (auditfile_reopen(f) != 0)
		log_warnx_rl(&f->rl, "audit file: %s: %s", f->path,
		    strerror(errno));
}

/* Write what waits: one write, rotating first when it would pass max. */
static void
auditfile_flush(struct auditfile *f)
{
	ssize_t	n;

	if (f->pending.len == 0)
		return;
	if (f->fd != -1 && f->size > 0 &&
	    f->size + f->pending.len > f->max_bytes)
		auditfile_rotate(f);
	if (f->fd == -1 && auditfile_reopen(f) != 0)
		return;
	n = write(f->fd, f->pending.data, f->pending.len);
	if (n < 0) {
		log_warnx_rl(&f->rl, "audit file: %s: %s (logged once a "
		    "minute)", f->path, strerror(errno));
		return;
	}
	f->size += (size_t)n;
	memmove(f->pending.data, f->pending.data + n, f->pending.len -
	    (size_t)n);
	f->pending.len -= (size_t)n;
	f->pending.data[f->pending.len] = '\0';
}

/* The flush timer. */
static void
auditfile_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	auditfile_flush(arg);
}

/* Open the file (auditfile.h). */
struct auditfile *
auditfile_open(struct event_base *base, const char *path, size_t max_bytes,
    int keep, char **cause)
{
	struct auditfile	*f = xcalloc(1, sizeof *f);
	struct log_ratelim	 rl = LOG_RATELIM_INIT(60000, 1);

	f->path = xstrdup(path);
	f->max_bytes = max_bytes;
	f->keep = keep;
	f->rl = rl;
	buf_init(&f->pending, 0);
	if (auditfile_reopen(f) != 0) {
		xasprintf(cause, "heureka.audit.file: %s: %s", path,
		    strerror(errno));
		buf_free(&f->pending);
		free(f->path);
		free(f);
		return (NULL);
	}
	f->flush_ev = evtimer_new(base, auditfile_flush_cb, f);
	return (f);
}

/* Flush and close. */
void
auditfile_close(struct auditfile *f)
{
	if (f == NULL)
		return;
	auditfile_flush(f);
	if (f->flush_ev != NULL)
		event_free(f->flush_ev);
	if (f->fd != -1)
		close(f->fd);
	buf_free(&f->pending);
	free(f->path);
	free(f);
}

/* Queue one record (auditfile.h). */
void
auditfile_write(struct auditfile *f, const struct audit_rec *r)
{
	struct timeval	tv;
	size_t		len;

	if (f == NULL)
		return;
	if (f->pending.len >= AUDITFILE_MAX_PENDING) {
		f->dropped++;
		return;
	}
	len = f->pending.len;
	audit_rec_json(&f->pending, r);
	buf_addc(&f->pending, '\n');
	if (f->pending.len > AUDITFILE_MAX_PENDING) {
		f->pending.len = len;	/* the line would pass the bound */
		f->pending.data[len] = '\0';
		f->dropped++;
		return;
	}
	/* Past the file's size the line goes now: rotation stays exact. */
	if (f->pending.len >= AUDITFILE_FLUSH ||
	    f->size + f->pending.len > f->max_bytes)
		auditfile_flush(f);
	else if (!evtimer_pending(f->flush_ev, NULL)) {
		tv = clock_ms_tv(AUDITFILE_FLUSH_MS);
		evtimer_add(f->flush_ev, &tv);
	}
}

/* Records dropped for a full buffer. */
uint64_t
auditfile_dropped(const struct auditfile *f)
{
	return (f != NULL ? f->dropped : 0);
}
