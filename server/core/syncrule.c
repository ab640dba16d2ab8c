/*
 * syncrule.c: the start-up sync's and anti-entropy's decisions
 * (syncrule.h). No libevent, no clock: the loop side (server/loop/sync.c)
 * passes in what came back and the time it read.
 */

#include <string.h>

#include "instance.h"
#include "registry.h"
#include "syncrule.h"
#include "xmalloc.h"

/* A new round: every peer is asked at once. */
void
sync_round_begin(struct sync_state *st, size_t npeers)
{
	st->attempts++;
	st->pending = npeers;
	st->answered = 0;
}

/*
 * One peer of the round is done. When no peer answered and the configured
 * attempts (Spring: 1) are used up, the sync is retried once a second
 * until some peer answers: otherwise the first node of a cluster started
 * one node at a time would refuse reads for the whole
 * waitTimeInMsWhenSyncEmpty (5 min) although its peers come up seconds
 * later.
 */
struct sync_next
sync_peer_done(struct sync_state *st, int answered, int peer_ready,
    int retries, int64_t retry_wait_ms)
{
	struct sync_next	nx;

	memset(&nx, 0, sizeof nx);
	if (answered)
		st->answered = 1;
	if (st->pending > 0)
		st->pending--;
	if (peer_ready) {
		st->done = 1;
		nx.step = SYNC_READY;
		nx.why = "synced from a ready peer";
		return (nx);
	}
	if (st->pending > 0) {
		nx.step = SYNC_WAIT;
		return (nx);
	}
	if (st->answered) {
		st->done = 1;
		nx.step = SYNC_READY;
		nx.why = "synced (no peer was ready yet)";
		return (nx);
	}
	nx.step = SYNC_RETRY;
	if (st->attempts <= retries)
		nx.wait_ms = retry_wait_ms;
	else {
		nx.gave_up = !st->done;
		st->done = 1;
		nx.wait_ms = SYNC_LATE_RETRY_MS;
	}
	return (nx);
}

/* Classify a control answer; see syncrule.h. */
enum sync_answer
sync_answer(enum sync_kind kind, int code, int java, const char *ready_hdr,
    int *credentials)
{
	*credentials = 0;
	if (code == 404 && !java && kind != SYNC_KIND_DIGEST)
		return (SYNC_ANS_JAVA);
	if (code == 404 && kind == SYNC_KIND_DIGEST)
		return (SYNC_ANS_NO_AE);
	if (code == 503 && kind == SYNC_KIND_DIGEST)
		return (SYNC_ANS_BUSY);
	if (code == 403 && !java && kind == SYNC_KIND_SYNC &&
	    ready_hdr != NULL && strcmp(ready_hdr, "0") == 0)
		return (SYNC_ANS_NOT_READY);
	if (code == 401 || (code == 403 && !java && ready_hdr == NULL))
		*credentials = 1;
	return (code == 200 ? SYNC_ANS_OK : SYNC_ANS_FAILED);
}

/* Java peers only answer 200 once they are open (§6.4); heureka says so. */
int
sync_peer_ready(int java, const char *ready_hdr)
{
	return (java || (ready_hdr != NULL && strcmp(ready_hdr, "1") == 0));
}

/* Only what a query may hold unescaped: unreserved, '%', '=', '&'. */
static int
sync_next_char_ok(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("-._~%=&", c) != NULL);
}

/* What follows a page (syncrule.h). */
enum sync_page_step
sync_page_step(const char *page, const char *next, const char *prev,
    unsigned pages)
{
	size_t	i, len;

	if (page == NULL || strcmp(page, "last") == 0)
		return (SYNC_PAGE_LAST);
	if (strcmp(page, "more") != 0 || next == NULL)
		return (SYNC_PAGE_BAD);
	len = strlen(next);
	if (len == 0 || len > SYNC_NEXT_MAX || pages + 1 >= SYNC_PAGES_MAX ||
	    (prev != NULL && strcmp(prev, next) == 0))
		return (SYNC_PAGE_BAD);
	for (i = 0; i < len; i++)
		if (!sync_next_char_ok((unsigned char)next[i]))
			return (SYNC_PAGE_BAD);
	return (SYNC_PAGE_MORE);
}

/*
 * A pull decodes (a page at a time) what the peer holds in the buckets
 * that differ, so after start-up it is kept for differences replication
 * will not fix. Under churn the
 * digests differ all the time and replication is already converging them.
 */
enum sync_digest
sync_digest_step(const char *mine, const char *theirs, int ready,
    size_t urgent, int inflight, int *mismatch)
{
	if (strcmp(mine, theirs) == 0) {
		*mismatch = 0;
		return (SYNC_DIGEST_EQUAL);
	}
	if (!ready || (++*mismatch >= 2 && urgent == 0 && !inflight)) {
		*mismatch = 0;
		return (SYNC_DIGEST_PULL);
	}
	return (SYNC_DIGEST_WAIT);
}

/*
 * The reconcile loop. Copies without an app, an id or a lastDirtyTimestamp
 * are skipped; the application's name fills a copy's missing app.
 */
size_t
sync_reconcile(struct registry *reg, struct applications *remote,
    struct hk_time now, int java, sync_cancel_cb cancel, void *arg)
{
	struct application	*a;
	struct instance		*r;
	int64_t			 tomb;
	size_t			 i, j, adopted = 0;
	const char		*id;

	for (i = 0; i < remote->n; i++) {
		a = remote->apps[i];
		for (j = 0; j < a->n; j++) {
			if ((r = a->instances[j]) == NULL)
				continue;
			if (r->app == NULL && a->name != NULL)
				r->app = xstrdup(a->name);
			if (r->app == NULL || r->last_dirty_ts < 0)
				continue;
			id = instance_id(r);
			if (id[0] == '\0')
				continue;
			switch (registry_reconcile(reg, r, now.mono_ms,
			    &tomb)) {
			case RECON_CANCEL:
				if (cancel != NULL)
					cancel(r->app, id, tomb, arg);
				continue;
			case RECON_KEEP:
				continue;
			case RECON_ADOPT:
				break;
			}
			if (java && r->has_lease &&
			    registry_lease_expired(r, 0, now.wall_ms))
				continue;
			a->instances[j] = NULL;
			if (registry_adopt(reg, r, now) == REG_OK)
				adopted++;
		}
	}
	return (adopted);
}
