/*
 * ext.h: heureka's extension endpoints under {base}heureka/ (README,
 * Cluster): GET heureka/digest and heureka/apps, which peers use for
 * anti-entropy and the start-up sync, both gated as GET apps is (§6.4),
 * and GET heureka/stats, the replication counters. Other paths are 404.
 */
#ifndef EXT_H
#define EXT_H

struct evhttp_request;
struct gate;
struct peers;
struct registry;

/* What the endpoints read, borrowed for the object's lifetime. */
struct ext_deps {
	struct registry		*reg;
	const struct gate	*gate;
	const struct peers	*peers;
};

struct ext;

struct ext	*ext_new(const struct ext_deps *);
void		 ext_free(struct ext *);	/* NULL is fine */
/* Handle GET/POST {base}heureka/<rest>; replies once. */
void		 ext_http(struct ext *, struct evhttp_request *,
		     const char *rest);

#endif
