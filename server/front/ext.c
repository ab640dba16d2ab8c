/*
 * ext.c: the {base}heureka/ endpoints (ext.h). The registry is read as
 * GET apps reads it: live leases only, and only once the gate allows
 * reads; the answer carries X-Heureka-Ready so a syncing heureka peer
 * knows whether what it got is final. The clock is read once per request.
 */

#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "digest.h"
#include "ext.h"
#include "gate.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "looplag.h"
#include "peers.h"
#include "registry.h"
#include "sync.h"
#include "syncpage.h"
#include "xmalloc.h"

struct ext {
	struct ext_deps	 d;
};

/* An extension object over these modules. */
struct ext *
ext_new(const struct ext_deps *d)
{
	struct ext	*x;

	x = xcalloc(1, sizeof *x);
	x->d = *d;
	return (x);
}

/* Free it (the modules are borrowed). */
void
ext_free(struct ext *x)
{
	free(x);
}

/* Send a JSON body. */
static void
ext_reply(struct hreq *req, int code, const struct buf *b)
{
	hreq_reply(req, code, "application/json", b->data, b->len);
}

/* The state of the heureka/apps walk. */
struct ext_walk {
	struct buf		*b;
	const struct reg_app	*app;		/* the one open, or NULL */
	size_t			 napps;
};

/* One live lease into the body, opening its application on the way. */
static void
ext_apps_add(const struct reg_app *a, const struct instance *in, void *arg)
{
	struct ext_walk	*w = arg;

	if (in == NULL)
		return;
	if (a != w->app) {
		if (w->app != NULL)
			json_app_close(w->b);
		if (w->napps++ > 0)
			buf_addc(w->b, ',');
		json_app_open(w->b, reg_app_name(a));
		w->app = a;
	} else
		buf_addc(w->b, ',');
	json_encode_instance(w->b, in, CODEC_FULL);
}

/* Append "key=<value %-escaped>" to a query. */
static void
ext_query_add(struct buf *q, const char *key, const char *v)
{
	char	*e;

	if (q->len > 0)
		buf_addc(q, '&');
	e = evhttp_uriencode(v, -1, 0);
	buf_addf(q, "%s=%s", key, e != NULL ? e : "");
	free(e);
}

/*
 * One page of the pull order after the cursor the query holds
 * (syncpage.h), with the query of the next page in X-Heureka-Next. The
 * query comes from this node's previous page, passed back unchanged; a
 * bad one is a 400 and nothing else.
 */
static void
ext_apps_page(struct ext *x, struct hreq *req,
    const struct hquery *q, int64_t mono)
{
	struct hhdrs		*oh = hreq_output_headers(req);
	struct sync_cursor	 cur;
	struct sync_page	 pg;
	struct buf		 b, next;
	const char		*after, *bk;
	char			*end, hex[17];
	uint64_t		 buckets = SYNC_BUCKETS_ALL;

	after = hquery_get(q, "after");
	cur.app = after[0] != '\0' ? after : NULL;
	cur.id = hquery_get(q, "id");
	buf_init(&b, 0);
	if ((bk = hquery_get(q, "buckets")) != NULL) {
		errno = 0;
		buckets = strtoull(bk, &end, 16);
		if (bk[0] == '\0' || *end != '\0' || errno != 0 ||
		    strlen(bk) > 16) {
			buf_adds(&b, "{\"error\":\"bad buckets: 16 hex "
			    "digits\"}");
			ext_reply(req, 400, &b);
			buf_free(&b);
			return;
		}
	}
	sync_page_encode(x->d.reg, mono, &cur, buckets,
	    x->d.conf->sync_page_bytes, &b, &pg);
	hhdrs_add(oh, "X-Heureka-Ready",
	    gate_allow_read(x->d.gate, mono) ? "1" : "0");
	hhdrs_add(oh, "X-Heureka-Page", pg.last ? "last" : "more");
	if (!pg.last) {
		buf_init(&next, 0);
		ext_query_add(&next, "after", pg.next_app);
		if (pg.next_id != NULL)
			ext_query_add(&next, "id", pg.next_id);
		if (buckets != SYNC_BUCKETS_ALL) {
			snprintf(hex, sizeof hex, "%016llx",
			    (unsigned long long)buckets);
			ext_query_add(&next, "buckets", hex);
		}
		hhdrs_add(oh, "X-Heureka-Next", next.data);
		buf_free(&next);
	}
	sync_page_clear(&pg);
	ext_reply(req, 200, &b);
	buf_free(&b);
}

/*
 * GET heureka/apps: a page when the query has `after`, else the full
 * registry (once ready, as GET apps), as heureka peers of the previous
 * version and operators ask for it.
 */
static void
ext_apps(struct ext *x, struct hreq *req, int64_t mono)
{
	const struct hquery	*q = hreq_query(req);
	struct registry	*reg = x->d.reg;
	struct ext_walk	 w;
	struct buf	 b;
	char		*hash;

	if (hquery_get(q, "after") != NULL) {
		ext_apps_page(x, req, q, mono);
		return;
	}
	buf_init(&b, 0);
	hash = registry_hashcode(reg);
	json_apps_open(&b, CODEC_FULL, (int64_t)registry_gen(reg), hash);
	memset(&w, 0, sizeof w);
	w.b = &b;
	registry_foreach_live(reg, mono, ext_apps_add, &w);
	if (w.app != NULL)
		json_app_close(&b);
	json_apps_close(&b, CODEC_FULL, (int64_t)registry_gen(reg), hash);
	free(hash);
	hhdrs_add(hreq_output_headers(req),
	    "X-Heureka-Ready", gate_allow_read(x->d.gate, mono) ? "1" : "0");
	ext_reply(req, 200, &b);
	buf_free(&b);
}

/* GET heureka/stats: replication counters (tests, operators). */
static void
ext_stats(struct ext *x, struct hreq *req)
{
	struct peer_info	 pi;
	struct sync_peer_stats	 st;
	const struct looplag	*ll;
	struct buf		 b;
	uint64_t		 items = 0, batches = 0;
	int64_t			 sync_ms;
	int			 sync_count;
	size_t			 i, n = peers_count(x->d.peers);

	buf_init(&b, 0);
	sync_result(x->d.sync, &sync_count, &sync_ms);
	buf_addf(&b, "{\"ready\":%s,\"syncCount\":%d,\"syncMs\":%lld,"
	    "\"peers\":[", gate_is_ready(x->d.gate) ? "true" : "false",
	    sync_count, (long long)sync_ms);
	for (i = 0; i < n; i++) {
		peers_info(x->d.peers, i, &pi);
		sync_stats(x->d.sync, i, &st);
		items += pi.items_sent;
		batches += pi.batches_sent;
		if (i > 0)
			buf_addc(&b, ',');
		buf_adds(&b, "{\"url\":");
		json_add_string(&b, pi.url);
		buf_addf(&b, ",\"heureka\":%s", pi.heureka ? "true" : "false");
		buf_addf(&b, ",\"resolved\":%s,\"reachable\":%s,"
		    "\"queue\":%zu,\"inflight\":%zu,\"batches\":%llu,"
		    "\"items\":%llu,\"failures\":%llu,\"overflow\":%llu,"
		    "\"expired\":%llu,\"coalesced\":%llu,\"failedItems\":%llu,"
		    "\"backoffFailures\":%u,\"lastSuccess\":%lld,"
		    "\"notFound\":%llu,\"conflicts\":%llu,"
		    "\"antiEntropy\":{\"rounds\":%llu,\"pulls\":%llu,"
		    "\"adopted\":%llu,\"cancels\":%llu,\"supported\":%s,"
		    "\"pages\":%llu,\"apps\":%llu,\"instances\":%llu,"
		    "\"buckets\":%llu},\"syncPages\":%llu}",
		    pi.resolved ? "true" : "false",
		    pi.reachable ? "true" : "false", pi.queue_depth,
		    pi.inflight,
		    (unsigned long long)pi.batches_sent,
		    (unsigned long long)pi.items_sent,
		    (unsigned long long)pi.failures,
		    (unsigned long long)pi.overflow,
		    (unsigned long long)pi.expired,
		    (unsigned long long)pi.coalesced,
		    (unsigned long long)pi.failed_items, pi.backoff_failures,
		    (long long)pi.last_success_ms,
		    (unsigned long long)pi.not_found,
		    (unsigned long long)pi.conflicts,
		    (unsigned long long)pi.ae_rounds,
		    (unsigned long long)pi.ae_pulls,
		    (unsigned long long)pi.ae_adopted,
		    (unsigned long long)pi.ae_cancels,
		    pi.ae_supported ? "true" : "false",
		    (unsigned long long)st.ae_pages,
		    (unsigned long long)st.ae_apps,
		    (unsigned long long)st.ae_instances,
		    (unsigned long long)st.ae_buckets,
		    (unsigned long long)st.sync_pages);
	}
	buf_addf(&b, "],\"itemsSent\":%llu,\"batchesSent\":%llu",
	    (unsigned long long)items, (unsigned long long)batches);
	if ((ll = x->d.looplag) != NULL)
		buf_addf(&b, ",\"loop\":{\"lagMaxUs\":%lld,\"lagP99Us\":%lld,"
		    "\"lagMaxSinceStartUs\":%lld,\"turns\":%llu,"
		    "\"turnCpuMaxUs\":%lld,\"turnCpuMaxSinceStartUs\":%lld,"
		    "\"turnCpuP99Us\":%lld}", (long long)ll->last_max_us,
		    (long long)ll->last_p99_us, (long long)ll->max_us,
		    (unsigned long long)ll->turns,
		    (long long)ll->turn_last_max_us,
		    (long long)ll->turn_max_us,
		    (long long)looplag_turn_quantile(ll, 0.99));
	buf_addc(&b, '}');
	ext_reply(req, 200, &b);
	buf_free(&b);
}

/* Dispatch {base}heureka/<rest>; unknown paths get 404. */
void
ext_http(struct ext *x, struct hreq *req, const char *rest)
{
	struct buf	 b;
	struct hk_time	 now = clock_now();
	char		 hex[65], bhex[DIGEST_BUCKETS_HEX + 1];
	size_t		 n, len;

	buf_init(&b, 0);
	len = strcspn(rest, "?");
	if (len > 0 && rest[len - 1] == '/')
		len--;
	if (x == NULL || hreq_method(req) != EVHTTP_REQ_GET)
		goto notfound;
	if (((len == 6 && strncmp(rest, "digest", 6) == 0) ||
	    (len == 4 && strncmp(rest, "apps", 4) == 0)) &&
	    !gate_allow_read(x->d.gate, now.mono_ms)) {
		/*
		 * The registry is gated as GET apps is (§6.4), or anyone could
		 * read a half-synced one here. The header tells a syncing
		 * heureka peer that we answered but are not ready ourselves.
		 */
		hhdrs_add(hreq_output_headers(req),
		    "X-Heureka-Ready", "0");
		buf_adds(&b, "{\"error\":\"not ready: start-up sync "
		    "running\"}");
		ext_reply(req, 403, &b);
	} else if (len == 6 && strncmp(rest, "digest", 6) == 0) {
		/*
		 * From the per-application cache, within a budget per turn:
		 * while the first computation of a large registry is spread
		 * over turns, a 503 tells the peer to ask next round.
		 */
		if (!sync_digest_current(x->d.sync, now.mono_ms, hex, bhex,
		    &n)) {
			buf_adds(&b, "{\"error\":\"digest being computed\"}");
			ext_reply(req, 503, &b);
		} else {
			buf_addf(&b, "{\"digest\":\"%s\",\"count\":%zu,"
			    "\"buckets\":\"%s\"}", hex, n, bhex);
			ext_reply(req, 200, &b);
		}
	} else if (len == 4 && strncmp(rest, "apps", 4) == 0)
		ext_apps(x, req, now.mono_ms);
	else if (len == 5 && strncmp(rest, "stats", 5) == 0)
		ext_stats(x, req);
	else
		goto notfound;
	buf_free(&b);
	return;
notfound:
	buf_adds(&b, "{\"error\":\"not found\"}");
	ext_reply(req, 404, &b);
	buf_free(&b);
}
