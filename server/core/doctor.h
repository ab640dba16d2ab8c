/*
 * doctor.h: what the server can see going wrong, in plain words
 * (docs/console.md). Findings have a kind, the application and instance
 * id (or peer URL) they are about, a sentence, and since when they hold.
 *
 * Two kinds of input. Registrations come from the registry's observer
 * (doctor_register: never the heartbeat path): a table of recently
 * registered ids, bounded at DOCTOR_MAX_TRACK, remembers where each was
 * registered from and how often, for id-conflict, reregister-storm and a
 * client's clock-skew. Everything else is judged by a scan on a timer
 * (doctor_scan_begin, _lease, _peer, _peer_clock, _replica, _selfpres,
 * _end): every finding the scan does not assert again is cleared at
 * doctor_scan_end, so a finding goes away by itself one scan after its
 * cause does. A peer's clock comes from the Date of its answers
 * (peers.c's peer_note_date, off the heartbeat path). The heartbeat path
 * pays one integer store (registry.c's renew_gap_ms).
 *
 * At most DOCTOR_MAX_FINDINGS findings are kept; past that they are
 * counted (doctor_suppressed). Pure: time is passed in.
 */
#ifndef DOCTOR_H
#define DOCTOR_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"

struct buf;
struct registry;
struct registry_timing;

#define DOCTOR_MAX_FINDINGS	256
#define DOCTOR_MAX_TRACK	4096	/* ids registered within the window */
#define DOCTOR_DETAIL		512

enum doctor_kind {
	DOCTOR_RENEW_INTERVAL = 0,
	DOCTOR_ID_CONFLICT,
	DOCTOR_REREGISTER_STORM,
	DOCTOR_PEER,
	DOCTOR_CLOCK_SKEW,
	DOCTOR_SELF_PRESERVATION,
	DOCTOR_NKINDS
};

struct doctor_conf {
	int64_t	window_ms;	/* id-conflict / clock-skew memory
				   (heureka.doctor.window-ms) */
	int	storm_per_minute;	/* re-registrations a minute */
	int64_t	skew_ms;	/* a client's clock ahead by more */
	int	renew_factor;	/* gap > factor x declared, or
				   < declared / factor */
};

void		 doctor_conf_defaults(struct doctor_conf *);

struct doctor_finding {
	enum doctor_kind kind;
	char		 app[128];
	char		 id[256];
	char		 detail[DOCTOR_DETAIL];
	int64_t		 since_ms;	/* wall */
	unsigned	 gen;		/* the scan that last asserted it */
};

struct doctor;

struct doctor	*doctor_new(const struct doctor_conf *);
void		 doctor_free(struct doctor *);		/* NULL is fine */
void		 doctor_set_conf(struct doctor *, const struct doctor_conf *);

const char	*doctor_kind_name(enum doctor_kind);

/*
 * A registration (new or again) of app/id from where (the instance's
 * "hostName/ipAddr:port"), the client's lastDirtyTimestamp (its clock),
 * not for replicated ones (the origin judged those).
 */
void		 doctor_register(struct doctor *, const char *app,
		     const char *id, const char *where, int created,
		     int64_t client_ts, struct hk_time now);

/* A scan: begin, then leases, peers and self-preservation, then end. */
void		 doctor_scan_begin(struct doctor *, struct hk_time now);
void		 doctor_scan_lease(struct doctor *,
		     const struct registry_timing *);
/* A peer's problem in words (NULL: none). */
void		 doctor_scan_peer(struct doctor *, const char *url,
		     const char *problem);
/*
 * A peer's clock: the Date header of its last answer less our clock
 * when it came (skew_ms), seen at seen_mono (0: never). A clock-skew
 * finding while |skew| is over skew_ms and was seen within the window.
 */
void		 doctor_scan_peer_clock(struct doctor *, const char *url,
		     int64_t skew_ms, int64_t seen_mono);
/*
 * Eureka's replica check for the peer at url (host: its host): a peer
 * finding when this node's own application (own_app, e.g. "HEUREKA")
 * has instances here and none has host as its hostName, the test Java
 * Eureka's StatusUtil makes before it lists a peer as available.
 */
void		 doctor_scan_replica(struct doctor *, const struct registry *,
		     const char *own_app, const char *url, const char *host);
/*
 * Self-preservation's figures: whether it keeps leases now (eviction
 * disabled by it), expected and actual renewals a minute, and the
 * expired leases it keeps (counted by doctor_scan_lease meanwhile).
 */
void		 doctor_scan_selfpres(struct doctor *, int active,
		     long expected, long actual);
void		 doctor_scan_end(struct doctor *);

size_t		 doctor_count(const struct doctor *);
size_t		 doctor_count_kind(const struct doctor *, enum doctor_kind);
uint64_t	 doctor_suppressed(const struct doctor *);
const struct doctor_finding *doctor_get(const struct doctor *, size_t);

/* {"findings":[{kind,app,id,detail,since}...],"suppressed":N} */
void		 doctor_json(const struct doctor *, struct buf *);

#endif
