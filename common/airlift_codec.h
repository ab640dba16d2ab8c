/*
 * airlift_codec.h: the data model and JSON codec of airlift's discovery
 * protocol (the one Trino's nodes speak): a node's announcement of its
 * services, a static announcement, and the service inventory a lookup
 * answers.
 *
 * Ownership: every char * is owned by its struct and freed by the _clear
 * or _free function; NULL means absent (JSON null). The decoders fill a
 * zeroed struct and, on failure, leave it cleared with a reason meant for
 * a person in *cause (a new string).
 */
#ifndef AIRLIFT_CODEC_H
#define AIRLIFT_CODEC_H

#include <stddef.h>

#include "buf.h"
#include "instance.h"

/* Bounds the decoders apply (bad input gets a 400, never a crash). */
#define AIRLIFT_MAX_SERVICES	64	/* services in one announcement */
#define AIRLIFT_MAX_PROPERTIES	100	/* properties of one service */
#define AIRLIFT_MAX_NAME	128	/* ids, node ids, types, pools */
/* Property keys with this prefix are reserved (see server/airlift.c). */
#define AIRLIFT_RESERVED_PREFIX	"airlift."

/* One announced service, as the inventory shows it. */
struct airlift_service {
	char		*id;
	char		*node_id;	/* NULL: a static announcement */
	char		*type;
	char		*pool;
	char		*location;
	struct kvlist	 properties;
};

/* PUT /v1/announcement/{nodeId}: one node's whole set of services. */
struct airlift_announcement {
	char			*environment;
	char			*pool;
	char			*location;	/* NULL: not given */
	struct airlift_service	*services;	/* id, type, properties */
	size_t			 n;
};

void	airlift_service_clear(struct airlift_service *);
void	airlift_announcement_clear(struct airlift_announcement *);

/* Decode a dynamic announcement; 0, or -1 with *cause. */
int	airlift_decode_announcement(const char *, size_t,
	    struct airlift_announcement *, char **cause);
/*
 * Decode a static announcement ({"environment","type","pool","location",
 * "properties"}) into svc (id and node_id left NULL) and *environment.
 */
int	airlift_decode_static(const char *, size_t, struct airlift_service *,
	    char **environment, char **cause);

/*
 * {"environment":..., "services":[ ... ]}: open, services, close. Property
 * keys starting with AIRLIFT_RESERVED_PREFIX are not written (the server
 * keeps its own keys beside the properties).
 */
void	airlift_encode_services_open(struct buf *, const char *environment);
void	airlift_encode_service(struct buf *, const struct airlift_service *,
	    int first);
void	airlift_encode_services_close(struct buf *);

/* Whether a name (id, node id, type, pool) is acceptable. */
int	airlift_name_ok(const char *);

#endif
