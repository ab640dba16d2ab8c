/*
 * auditfile.h: heureka.audit.file, the audit records appended as JSON
 * lines (docs/console.md). Writes are buffered and flushed by a timer or
 * past AUDITFILE_FLUSH bytes, so the loop writes to disk in a few large
 * write(2)s, never per record; past AUDITFILE_MAX_PENDING bytes waiting
 * (a disk that stopped taking them) records are dropped and counted,
 * never queued without bound. The file is rotated by size: file ->
 * file.1 -> ... -> file.N (heureka.audit.file-keep), the oldest removed.
 */
#ifndef AUDITFILE_H
#define AUDITFILE_H

#include <stddef.h>
#include <stdint.h>

struct audit_rec;
struct event_base;
struct auditfile;

#define AUDITFILE_FLUSH		(64 * 1024)
#define AUDITFILE_MAX_PENDING	(1024 * 1024)
#define AUDITFILE_FLUSH_MS	1000

/* Open path for appending; NULL with *cause on failure. */
struct auditfile *auditfile_open(struct event_base *, const char *path,
		     size_t max_bytes, int keep, char **cause);
/* Flush what waits and close (NULL is fine). */
void		 auditfile_close(struct auditfile *);
/* Queue one record as a line. */
void		 auditfile_write(struct auditfile *, const struct audit_rec *);
uint64_t	 auditfile_dropped(const struct auditfile *);

#endif
