/*
 * reglog.h: the registry's changes in the log (reglog.c): every
 * registration, cancel, eviction and status change at INFO with its
 * application and instance id, at most REGLOG_BURST lines a
 * REGLOG_WINDOW_MS window; past that one summary line counts the rest.
 */
#ifndef REGLOG_H
#define REGLOG_H

struct event_base;
struct registry;

#define REGLOG_BURST		100
#define REGLOG_WINDOW_MS	10000

struct reglog;

/* Log reg's changes from now on; the summary timer runs on base. */
struct reglog	*reglog_new(struct event_base *, struct registry *);
/* Log what is pending in the summary, then free. */
void		 reglog_free(struct reglog *);

#endif
