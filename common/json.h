/*
 * json.h: Eureka's legacy JSON codec (EurekaJacksonCodec, spec §4.1) and the
 * compact variant (§4.3), plus the peer-replication objects (§4.1.9).
 *
 * Encoders append to a struct buf and never fail. Decoders parse with yajl's
 * streaming parser, are at least as lenient as the Java decoder (§4.1.8),
 * cap nesting depth (JSON_MAX_DEPTH), string length and metadata count, and
 * return NULL with a short human-readable *cause (caller frees) on bad
 * input. Decoded objects belong to the caller.
 */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "instance.h"

#define JSON_MAX_DEPTH	32

#define CODEC_FULL	0
#define CODEC_COMPACT	1	/* X-Eureka-Accept: compact (§4.3) */

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
struct instance		*json_decode_instance(const char *, size_t, char **);
struct application	*json_decode_application(const char *, size_t, char **);
struct applications	*json_decode_applications(const char *, size_t,
			    char **);

/* Peer replication (§4.1.9, §6.3). */
enum repl_action {
	REPL_HEARTBEAT = 0,
	REPL_REGISTER,
	REPL_CANCEL,
	REPL_STATUS_UPDATE,
	REPL_DELETE_STATUS_OVERRIDE,
};

struct repl_item {
	enum repl_action	 action;
	char			*app_name;
	char			*id;
	int64_t			 last_dirty_ts;
	uint8_t			 has_last_dirty;
	uint8_t			 has_overridden;
	uint8_t			 has_status;
	enum instance_status	 overridden_status;
	enum instance_status	 status;
	struct instance		*info;		/* NULL when absent */
};

struct repl_list {
	struct repl_item	*items;
	size_t			 n;
	size_t			 cap;
};

struct repl_response_item {
	int			 status_code;
	struct instance		*entity;	/* NULL when absent */
};

struct repl_response {
	struct repl_response_item	*items;
	size_t				 n;
	size_t				 cap;
};

#define REPL_MAX_ITEMS	1000	/* decoder bound on one batch */

const char	*repl_action_name(enum repl_action);
int		 repl_action_parse(const char *, enum repl_action *);
struct repl_item *repl_list_add(struct repl_list *);	/* zeroed slot */
void		 repl_list_clear(struct repl_list *);
struct repl_response_item *repl_response_add(struct repl_response *);
void		 repl_response_clear(struct repl_response *);

void	json_encode_repl_list(struct buf *, const struct repl_list *);
void	json_encode_repl_response(struct buf *, const struct repl_response *);
int	json_decode_repl_list(const char *, size_t, struct repl_list *,
	    char **);
int	json_decode_repl_response(const char *, size_t, struct repl_response *,
	    char **);

/* Append s as a JSON string literal with Jackson's escaping. */
void	json_add_string(struct buf *, const char *);

#endif
