/*
 * admit.c: the registration rate limit, taken in one place for every way
 * an instance (or a tombstone) enters the registry from a client. Before,
 * rest.c limited REST registrations alone: an airlift announcement of 64
 * services went in whole while REST registrations from the same address
 * got 429, and DELETEs of ids never registered made 250,000 tombstones in
 * 40 s (issue 21). Callers say how many entries a request brings (an
 * announcement's new or changed services; a cancel of an unknown id is
 * one), and the token bucket of the client's address (core/ratelimit.c)
 * decides; a take larger than the burst waits for a full bucket and
 * leaves it in debt, so the long-run rate is the configured one whatever
 * the grouping.
 */
#include <stdio.h>
#include <stdlib.h>

#include <event2/http.h>

#include "http.h"
#include "admit.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "ratelimit.h"
#include "xmalloc.h"

#define ADMIT_ENTRIES	65536	/* client addresses tracked */

struct admit {
	struct ratelimit	*rl;
	struct metrics		*metrics;
	double			 rate;
	int			 burst;
};

static struct log_ratelim admit_log_rl = LOG_RATELIM_INIT(60000, 1);

/* The limiter (off when the rate is 0). */
struct admit *
admit_new(const struct config *conf, struct metrics *metrics)
{
	struct admit	*a = xcalloc(1, sizeof *a);

	a->rate = conf->register_rate_per_second;
	a->burst = conf->register_rate_burst;
	a->rl = ratelimit_new(a->rate, a->burst, ADMIT_ENTRIES);
	a->metrics = metrics;
	return (a);
}

/* Free it; NULL is fine. */
void
admit_free(struct admit *a)
{
	if (a == NULL)
		return;
	ratelimit_free(a->rl);
	free(a);
}

/* Take n tokens for req's client; see admit.h. */
int
admit_take(struct admit *a, struct hreq *req, size_t n,
    const char *what, int64_t mono, char *why, size_t whylen)
{
	struct hconn			*conn;
	char				*addr = NULL, ra[32];
	ev_uint16_t			 port = 0;
	int64_t				 wait;

	if (a == NULL || n == 0 ||
	    (conn = hreq_conn(req)) == NULL)
		return (0);
	hconn_peer(conn, &addr, &port);
	if (addr == NULL ||
	    (wait = ratelimit_take_n(a->rl, addr, (double)n, mono)) == 0)
		return (0);
	metrics_limit(a->metrics, METRICS_LIMIT_REGISTER_RATE, 1);
	log_warnx_rl(&admit_log_rl, "limit: %s from %s above "
	    "eureka.server.register-rate-per-second (%g/s, burst %d): 429",
	    what, addr, a->rate, a->burst);
	snprintf(ra, sizeof ra, "%lld", (long long)((wait + 999) / 1000));
	hhdrs_add(hreq_output_headers(req),
	    "Retry-After", ra);
	snprintf(why, whylen, "too many %s from this address "
	    "(eureka.server.register-rate-per-second); retry after %s s",
	    what, ra);
	return (-1);
}
