/*
 * hold.h: a watch on the connection of a request held open for its reply
 * (hold.c says why).
 */
#ifndef HOLD_H
#define HOLD_H

struct hreq;

#include <event2/event.h>
#include "http.h"

struct hold;

struct hold	*hold_arm(struct event_base *, struct hreq *,
		    void (*)(void *), void *);
void		 hold_disarm(struct hold *);

#endif /* HOLD_H */
