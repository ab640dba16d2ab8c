/*
 * reglog.c: an operator asking "when did ORDER-SERVICE/host-a leave, and
 * why" finds the answer in heurekad's log: a registry observer writes one
 * INFO line per registration (new or again), cancel, eviction, status
 * override and override removal, naming the application and the
 * instance id and saying when the change came from a peer. Heartbeats and
 * metadata updates are not logged (a heartbeat is the steady state; the
 * access log has both).
 *
 * A flood (a fleet restarting, a start-up sync copying a million
 * instances) must not become a million lines: at most REGLOG_BURST lines
 * go out per REGLOG_WINDOW_MS (100 per 10 s), and the changes past that
 * are counted by kind and summed up in one line at the window's end (a
 * timer, so the summary comes even when the flood stops).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>

#include "clock.h"
#include "instance.h"
#include "log.h"
#include "registry.h"
#include "reglog.h"
#include "xmalloc.h"

#define REGLOG_NKINDS	(REG_EV_METADATA + 1)

struct reglog {
	struct event	*flush_ev;	/* the window's summary */
	int64_t		 window_start;	/* monotonic ms */
	unsigned	 used;		/* lines this window */
	uint64_t	 held[REGLOG_NKINDS];	/* not logged, by kind */
	uint64_t	 nheld;
};

/* What the summary calls each kind. */
static const char *reglog_kind[REGLOG_NKINDS] = {
	[REG_EV_REGISTER] = "registered",
	[REG_EV_CANCEL] = "cancelled",
	[REG_EV_STATUS_UPDATE] = "status overrides",
	[REG_EV_DELETE_OVERRIDE] = "overrides removed",
	[REG_EV_EVICT] = "evicted",
};

/* One line for the changes the window held back, if any. */
static void
reglog_summary(struct reglog *rl)
{
	char	 part[REGLOG_NKINDS][48];
	int	 i;

	if (rl->nheld == 0)
		return;
	for (i = 0; i < REGLOG_NKINDS; i++) {
		part[i][0] = '\0';
		if (rl->held[i] > 0 && reglog_kind[i] != NULL)
			snprintf(part[i], sizeof part[i], " %llu %s",
			    (unsigned long long)rl->held[i], reglog_kind[i]);
		rl->held[i] = 0;
	}
	log_info("registry: %llu more change%s not logged one by one in "
	    "%d s (over %d lines):%s%s%s%s%s", (unsigned long long)rl->nheld,
	    rl->nheld == 1 ? "" : "s", REGLOG_WINDOW_MS / 1000, REGLOG_BURST,
	    part[REG_EV_REGISTER], part[REG_EV_CANCEL], part[REG_EV_EVICT],
	    part[REG_EV_STATUS_UPDATE], part[REG_EV_DELETE_OVERRIDE]);
	rl->nheld = 0;
}

/* The window ended with changes held back: sum them up. */
static void
reglog_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct reglog	*rl = arg;

	(void)fd;
	(void)what;
	reglog_summary(rl);
	rl->window_start = clock_mono_ms();
	rl->used = 0;
}

/* The line for one change. */
static void
reglog_line(const struct registry_event *ev)
{
	const char	*from = ev->replicated ? " (from a peer)" : "";
	const char	*st;

	switch (ev->type) {
	case REG_EV_REGISTER:
		st = ev->inst != NULL ?
		    instance_status_name(ev->inst->status) : "?";
		log_info("%s %s/%s (status %s)%s", ev->created ?
		    "registered" : "registered again", ev->app, ev->id, st,
		    from);
		break;
	case REG_EV_CANCEL:
		log_info("cancelled %s/%s%s", ev->app, ev->id, from);
		break;
	case REG_EV_EVICT:
		log_info("evicted %s/%s: lease expired (no heartbeat within "
		    "its duration)", ev->app, ev->id);
		break;
	case REG_EV_STATUS_UPDATE:
		log_info("status override %s/%s: %s%s", ev->app, ev->id,
		    instance_status_name(ev->override), from);
		break;
	case REG_EV_DELETE_OVERRIDE:
		st = ev->inst != NULL ?
		    instance_status_name(ev->inst->status) : "?";
		log_info("status override of %s/%s removed (status %s)%s",
		    ev->app, ev->id, st, from);
		break;
	default:
		break;
	}
}

/* Registry observer: log the change, or count it past the burst. */
static void
reglog_observe_cb(const struct registry_event *ev, void *arg)
{
	struct reglog	*rl = arg;
	struct timeval	 tv;

	if (ev->type == REG_EV_RENEW || ev->type == REG_EV_METADATA ||
	    (int)ev->type >= REGLOG_NKINDS)
		return;
	if (ev->now.mono_ms - rl->window_start >= REGLOG_WINDOW_MS &&
	    !evtimer_pending(rl->flush_ev, NULL)) {
		rl->window_start = ev->now.mono_ms;
		rl->used = 0;
	}
	if (rl->used < REGLOG_BURST) {
		rl->used++;
		reglog_line(ev);
		return;
	}
	rl->held[ev->type]++;
	rl->nheld++;
	if (!evtimer_pending(rl->flush_ev, NULL)) {
		tv = clock_ms_tv(rl->window_start + REGLOG_WINDOW_MS -
		    ev->now.mono_ms);
		evtimer_add(rl->flush_ev, &tv);
	}
}

/* See reglog.h. */
struct reglog *
reglog_new(struct event_base *base, struct registry *reg)
{
	struct reglog	*rl = xcalloc(1, sizeof *rl);

	rl->flush_ev = evtimer_new(base, reglog_flush_cb, rl);
	rl->window_start = clock_mono_ms();
	registry_add_observer(reg, reglog_observe_cb, rl);
	return (rl);
}

/* See reglog.h. */
void
reglog_free(struct reglog *rl)
{
	if (rl == NULL)
		return;
	reglog_summary(rl);
	if (rl->flush_ev != NULL)
		event_free(rl->flush_ev);
	free(rl);
}
