/*
 * ext.h: heureka's extension endpoints under {base}heureka/
 * (docs/cluster.md): GET heureka/digest and heureka/apps, which peers use for
 * anti-entropy and the start-up sync, both gated as GET apps is (§6.4),
 * and GET heureka/stats, the replication counters and the loop's stall
 * figures (looplag.h). Other paths are 404.
 * heureka/apps?after=APP&id=ID[&buckets=HEX] answers one page of the pull
 * order (syncpage.h) of at most eureka.server.sync-page-bytes; without
 * `after` it answers the whole registry (operators, heureka peers of the
 * previous version).
 */
#ifndef EXT_H
#define EXT_H

struct config;
struct hreq;
struct gate;
struct looplag;
struct peers;
struct registry;
struct sync;

/* What the endpoints read, borrowed for the object's lifetime. */
struct ext_deps {
	struct registry		*reg;
	const struct gate	*gate;
	const struct peers	*peers;
	const struct sync	*sync;		/* and its digest cache */
	const struct config	*conf;
	const struct looplag	*looplag;	/* NULL: no "loop" in stats */
};

struct ext;

struct ext	*ext_new(const struct ext_deps *);
void		 ext_free(struct ext *);	/* NULL is fine */
/* Handle GET/POST {base}heureka/<rest>; replies once. */
void		 ext_http(struct ext *, struct hreq *,
		     const char *rest);

#endif
