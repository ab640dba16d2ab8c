/*
 * drain.h: a draining shutdown's wait (drain.c): until nothing is busy,
 * or the grace period is over.
 */
#ifndef DRAIN_H
#define DRAIN_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

struct drain_deps {
	struct event_base	*base;
	int64_t			 grace_ms;	/* at most this long */
	/* What is still in flight (0: done). */
	size_t			(*busy)(void *);
	/* Called once: left is what was still busy (0 if drained). */
	void			(*done)(void *, size_t left, int64_t ms);
	void			*arg;
};

struct drain;

/* Start waiting; done may be called from here (nothing busy). */
struct drain	*drain_start(const struct drain_deps *);
void		 drain_free(struct drain *);

#endif
