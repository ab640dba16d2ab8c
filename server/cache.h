/*
 * cache.h: the response cache (design.md, spec §5.12). Encoded bodies keyed
 * by (resource, format, full/compact, gzip), built once per change and
 * handed out as refcounted immutable blobs that evhttp sends without
 * copying (evbuffer_add_reference). Full registries are stitched from
 * per-application fragments, so a change re-encodes only its application;
 * gzip bodies are stitched from sync-flushed deflate blocks joined with
 * crc32_combine. Heartbeats never invalidate.
 */
#ifndef CACHE_H
#define CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"

struct cache;
struct evbuffer;

enum cache_format {
	CACHE_JSON = 0,
	CACHE_XML,
};

struct cache_key {
	enum cache_format	 format;
	int			 compact;
	int			 gzip;
};

/* An immutable encoded body; body_free drops one reference. */
struct cache_body {
	unsigned	 refs;
	size_t		 len;
	char		*data;
};

struct cache	*cache_new(struct registry *, int read_only_layer);
void		 cache_free(struct cache *);

/* The whole registry, delta, one app (NULL if absent), a VIP/SVIP. */
struct cache_body *cache_apps(struct cache *, const struct cache_key *,
		     int64_t now);
struct cache_body *cache_delta(struct cache *, const struct cache_key *,
		     int64_t now);
struct cache_body *cache_app(struct cache *, const struct cache_key *,
		     const char *app, int64_t now);
struct cache_body *cache_vip(struct cache *, const struct cache_key *,
		     const char *vip, int secure, int64_t now);
/* Read-only layer refresh (useReadOnlyResponseCache): every 30 s. */
void		 cache_refresh_read_only(struct cache *, int64_t now);

void		 cache_body_ref(struct cache_body *);
void		 cache_body_unref(struct cache_body *);
/* Append by reference to an evbuffer; releases the reference when sent. */
void		 cache_body_send(struct cache_body *, struct evbuffer *);

#endif
