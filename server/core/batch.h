/*
 * batch.h: applying writes the way Eureka's resources do, loop-free. The
 * apply of a peer's replication batch (§6.3: one status per item, 404 for
 * a heartbeat of an unknown instance, 409 with our copy or for a copy a
 * tombstone covers, 400 for a lastDirtyTimestamp too far ahead, 413/503
 * for the bounds) and the register checks a REST register shares with it
 * (Eureka's validation, the metadata bounds, the answer to a refusal).
 *
 * No libevent, no clock reads, no logging and no metrics: time comes in as
 * `now`, bounds in a struct batch_limits, and what a caller counts or logs
 * comes back in a struct batch_result.
 */
#ifndef BATCH_H
#define BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "instance.h"
#include "registry.h"

struct audit;
struct cache;
struct repl_list;
struct repl_response;

/*
 * The bounds writes are checked against (eureka.server.*). The registry
 * enforces the last four itself; here they only word the reasons.
 */
struct batch_limits {
	int	 max_metadata_entries;
	int	 max_metadata_key_bytes;
	int	 max_metadata_value_bytes;
	size_t	 max_instance_bytes;	/* 413 */
	size_t	 memory_budget;		/* 503, max-memory-bytes */
	size_t	 max_instances;		/* 503 */
	int64_t	 max_clock_skew_ms;	/* 400 */
	struct audit *audit;		/* each item's origin set on it
					   (audit_set_origin); NULL: none */
};

/* The kinds of refusal a caller logs, each under its own rate limit. */
enum batch_note {
	BATCH_NOTE_METADATA = 0,	/* a metadata bound */
	BATCH_NOTE_SIZE,		/* 413: an instance too large */
	BATCH_NOTE_MEMORY,		/* 503: the memory budget */
	BATCH_NOTE_FULL,		/* 503: max-instances */
	BATCH_NOTE_FUTURE,		/* 400: lastDirtyTimestamp ahead */
};
#define BATCH_NNOTES	5

/*
 * What checks and applies found, for the caller's metrics and log: counts
 * of the limits hit, and the first log line of each kind of refusal ("" if
 * none). Zero it before use; calls add to it.
 */
struct batch_result {
	uint64_t	 limit_metadata;	/* key or value too long */
	uint64_t	 limit_metadata_entries; /* too many entries */
	uint64_t	 limit_instances;	/* registry full */
	char		 note[BATCH_NNOTES][320];
};

/*
 * Eureka's register validation (§2.5), in its order and with its exact
 * messages, plus the metadata bounds. NULL when valid, else the reason
 * (static, or written into msg).
 */
const char	*batch_check_instance(const struct batch_limits *,
		    const struct instance *, const char *app, char *msg,
		    size_t msglen, struct batch_result *);
/* The metadata key and value length bounds; NULL when within them. */
const char	*batch_check_metadata(const struct batch_limits *,
		    const struct kvlist *, char *msg, size_t msglen,
		    struct batch_result *);
/*
 * Eureka fills a blank Amazon instance-id with the instance's id (§2.5);
 * returns the instance to keep (a packed one is unpacked to be written).
 */
struct instance	*batch_fill_amazon_id(struct instance *);
/*
 * The HTTP status and reason (into msg) for a write the registry refused
 * with rc: 413 too large, 503 memory or full, 400 future, 409 stale.
 */
int		 batch_refusal(const struct batch_limits *, enum registry_rc,
		    const char *app, const char *id, char *msg, size_t msglen,
		    struct batch_result *);

/*
 * Apply every item of a replication batch as replicated (so observers do
 * not replicate it on), appending one result per item to out. A register
 * item's instance is taken over (its info is NULL after) and each item's
 * app name is upper-cased in place (a decoded one is already). cache,
 * when not NULL, is the response cache whose bytes count in the memory
 * budget.
 */
void		 batch_apply(struct registry *, struct cache *,
		    const struct batch_limits *, struct repl_list *,
		    struct repl_response *, struct hk_time now,
		    struct batch_result *);

#endif
