/*
 * json.h: Eureka's legacy JSON codec (EurekaJacksonCodec, spec §4.1) and the
 * compact variant (§4.3), and the JSON form of the peer-replication
 * objects (repl.h, §4.1.9).
 *
 * Encoders append to a struct buf and never fail. Decoders parse with yajl's
 * streaming parser, are at least as lenient as the Java decoder (§4.1.8),
 * cap nesting depth (JSON_MAX_DEPTH), string length and metadata count, and
 * return NULL with a short human-readable *cause (caller frees) on bad
 * input. Decoded objects belong to the caller. Decoders read no clock:
 * `now` (wall ms since the epoch) is what absent timestamps become
 * (instance_apply_defaults()).
 */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"
#include "repl.h"

#define JSON_MAX_DEPTH	32

/* The stitching interface of codec.h, for the server's cache. */
extern const struct codec json_codec;

/* One instance object, not root-wrapped: {"instanceId":...}. */
void	json_encode_instance(struct buf *, const struct instance *, int flags);
/* {"instance":{...}} */
void	json_encode_instance_root(struct buf *, const struct instance *);

/*
 * Building blocks for stitched bodies (the server's cache): an application
 * is json_app_open, instances separated by ',', json_app_close; a registry
 * is json_apps_open, applications separated by ',', json_apps_close. The
 * version and hash code are written where the codec (full or compact) wants
 * them.
 */
void	json_app_open(struct buf *, const char *name);
void	json_app_close(struct buf *);
void	json_apps_open(struct buf *, int flags, int64_t version,
	    const char *hashcode);
void	json_apps_close(struct buf *, int flags, int64_t version,
	    const char *hashcode);

/* Whole documents. application: {"application":{...}} when root != 0. */
void	json_encode_application(struct buf *, const struct application *,
	    int flags, int root);
void	json_encode_applications(struct buf *, const struct applications *,
	    int flags);

/* Decoders: {"instance":{...}} (a bare instance object is accepted too). */
struct instance		*json_decode_instance(const char *, size_t,
			    int64_t now, char **);
struct application	*json_decode_application(const char *, size_t,
			    int64_t now, char **);
struct applications	*json_decode_applications(const char *, size_t,
			    int64_t now, char **);

/* Peer replication (§4.1.9, §6.3): the model is repl.h. */
void	json_encode_repl_list(struct buf *, const struct repl_list *);
void	json_encode_repl_response(struct buf *, const struct repl_response *);
int	json_decode_repl_list(const char *, size_t, struct repl_list *,
	    int64_t now, char **);
int	json_decode_repl_response(const char *, size_t, struct repl_response *,
	    int64_t now, char **);

/* Append s as a JSON string literal with Jackson's escaping. */
void	json_add_string(struct buf *, const char *);
/* "key":"value" (value NULL: null), after a comma when comma != 0. */
void	json_add_member(struct buf *, const char *key, const char *value,
	    int comma);

#endif
