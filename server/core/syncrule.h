/*
 * syncrule.h: the decisions of the start-up sync (spec §6.4) and of
 * anti-entropy (a heureka extension), without a network or a clock, so
 * check_sync drives them by hand. server/loop/sync.c does the I/O and
 * calls these:
 *
 * - when is the start-up sync done (sync_peer_done): as soon as a ready
 *   peer answered; or when every peer answered, ready or not (a cluster
 *   starting together has nothing to copy); with no answer, retry after
 *   the configured wait, and once the attempts are used up every second;
 * - what a peer's answer means (sync_answer): a 404 sends a heureka node
 *   back to the standard GET apps/ (a Java peer), or marks a peer without
 *   the digest endpoint; a heureka peer's 403 with X-Heureka-Ready: 0 is
 *   an answer with nothing to copy yet;
 * - when a differing digest leads to a pull (sync_digest_step), and
 *   whether a page of a pull is followed by another (sync_page_step);
 * - which copy wins a reconcile (sync_reconcile over registry_reconcile).
 */
#ifndef SYNCRULE_H
#define SYNCRULE_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"

struct registry;
struct applications;

#define SYNC_LATE_RETRY_MS	1000	/* retry once attempts are used */

/* One start-up sync, over its rounds. */
struct sync_state {
	int	 attempts;	/* rounds begun */
	size_t	 pending;	/* peers of this round yet to finish */
	int	 answered;	/* some peer of this round answered */
	int	 done;		/* finished or given up: anti-entropy runs */
	int	 count;		/* instances copied */
};

enum sync_step {
	SYNC_WAIT = 0,	/* other peers of the round are still out */
	SYNC_READY,	/* open the gate: `why` says why */
	SYNC_RETRY,	/* nobody answered: next round in `wait_ms` */
};

struct sync_next {
	enum sync_step	 step;
	const char	*why;		/* SYNC_READY */
	int64_t		 wait_ms;	/* SYNC_RETRY */
	int		 gave_up;	/* SYNC_RETRY: attempts just ran out */
};

/* A round asking `npeers` peers begins. */
void		 sync_round_begin(struct sync_state *, size_t npeers);
/*
 * One peer's part of the round finished: it answered (or not), and said
 * it was ready (or not). `retries` and `retry_wait_ms` are
 * registry_sync_retries and registry_sync_retry_wait_ms.
 */
struct sync_next sync_peer_done(struct sync_state *, int answered,
		     int peer_ready, int retries, int64_t retry_wait_ms);

/* The three control requests a node makes to a peer. */
enum sync_kind {
	SYNC_KIND_SYNC = 0,	/* start-up sync: GET registry */
	SYNC_KIND_DIGEST,	/* anti-entropy: GET heureka/digest */
	SYNC_KIND_PULL,		/* anti-entropy: GET registry */
};

enum sync_answer {
	SYNC_ANS_OK = 0,	/* 200: read the body */
	SYNC_ANS_JAVA,		/* 404: ask again with GET apps/ */
	SYNC_ANS_NO_AE,		/* 404 to the digest: not heureka */
	SYNC_ANS_NOT_READY,	/* a syncing heureka peer: answered, empty */
	SYNC_ANS_BUSY,		/* 503 to the digest: still computing it */
	SYNC_ANS_FAILED,	/* anything else */
};

/*
 * What an answer means. `code` is 0 when nothing came back, `java` says
 * the request already was GET apps/, `ready_hdr` is X-Heureka-Ready or
 * NULL. *credentials is set when the answer points at bad credentials.
 */
enum sync_answer sync_answer(enum sync_kind, int code, int java,
		     const char *ready_hdr, int *credentials);
/* Did a 200 to the start-up sync come from a peer that is ready? */
int		 sync_peer_ready(int java, const char *ready_hdr);

/*
 * Paged pulls (syncpage.h). Each page of GET heureka/apps?after=... says
 * X-Heureka-Page: more (then X-Heureka-Next holds the query of the next
 * page, which the puller sends back as it is) or last; an answer without
 * X-Heureka-Page comes from a heureka peer of the previous version and
 * holds the whole registry. sync_page_step() says what follows a page
 * that has been reconciled: `page` and `next` are those headers (NULL if
 * absent), `prev` the query that asked for it, `pages` how many pages of
 * this pull came before it. A next query must be short, made of
 * URL-safe characters only, and move on: anything else ends the pull as
 * a failure (a peer cannot make us loop or send it junk).
 */
#define SYNC_NEXT_MAX		4096		/* bytes of a next query */
#define SYNC_PAGES_MAX		(1u << 20)	/* pages of one pull */

enum sync_page_step {
	SYNC_PAGE_LAST = 0,	/* the pull is complete */
	SYNC_PAGE_MORE,		/* ask for `next` */
	SYNC_PAGE_BAD,		/* a broken answer: the pull failed */
};

enum sync_page_step sync_page_step(const char *page, const char *next,
		     const char *prev, unsigned pages);

enum sync_digest {
	SYNC_DIGEST_EQUAL = 0,	/* in sync with this peer */
	SYNC_DIGEST_PULL,	/* pull its registry now */
	SYNC_DIGEST_WAIT,	/* differs; replication may fix it */
};

/*
 * A peer's digest came back. Before the gate opens any difference is
 * pulled; after, only one that outlived a round while nothing urgent is
 * queued for the peer and no batch is in flight (*mismatch counts the
 * rounds that differed).
 */
enum sync_digest sync_digest_step(const char *mine, const char *theirs,
		     int ready, size_t urgent, int inflight, int *mismatch);

/* Told of a copy the peer still holds that a tombstone here covers. */
typedef void	(*sync_cancel_cb)(const char *app, const char *id,
		     int64_t cancel_ts, void *);

/*
 * Reconcile with a peer's registry: adopt every copy that wins under
 * registry_reconcile() (stolen from `remote`), call `cancel` (if not NULL)
 * for each one our tombstone covers. `java`: the copy came from a Java
 * peer's GET apps/, which lists expired leases too, so a copy whose shown
 * lease has run out at now.wall_ms is not adopted. Returns the number
 * adopted.
 */
size_t		 sync_reconcile(struct registry *, struct applications *remote,
		     struct hk_time now, int java, sync_cancel_cb, void *);

#endif
