/*
 * repl.h: the peer-replication model (spec §4.1.9, §6.3): one batch of
 * replicated actions (Eureka's ReplicationList of ReplicationInstance) and
 * the peer's answer (ReplicationListResponse). The JSON wire form is in
 * json.h, the only format peers use.
 *
 * Ownership: the strings and instances of an item belong to its list;
 * repl_list_clear() and repl_response_clear() free them all. The decoder
 * copies an item's app name (upper-cased) and id into the list's own name
 * blocks (repl_list_name(): no allocation per item) and marks the item
 * decoded; an item built by hand owns its strings as allocated.
 */
#ifndef REPL_H
#define REPL_H

#include <stddef.h>
#include <stdint.h>

#include "instance.h"

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
	uint8_t			 decoded;	/* names in the list's blocks */
	enum instance_status	 overridden_status;
	enum instance_status	 status;
	struct instance		*info;		/* NULL when absent */
	/*
	 * heureka peers only (repl_list.origin): where a change entered the
	 * cluster, for the audit (server/core/audit.h); NULL when absent.
	 * Heartbeats never carry them.
	 */
	char			*origin_node;
	char			*origin_user;
	char			*origin_addr;
};

struct repl_names;	/* repl.c: a chain of blocks for decoded names */

struct repl_list {
	struct repl_item	*items;
	size_t			 n;
	size_t			 cap;
	struct repl_names	*names;		/* NULL: none yet */
	int			 origin;	/* encode the origin fields:
						   set for heureka peers only
						   (Java Eureka peers get
						   Eureka's fields alone) */
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
/* A NUL-terminated copy of n bytes at s, kept until repl_list_clear(). */
char		*repl_list_name(struct repl_list *, const char *, size_t);
void		 repl_list_clear(struct repl_list *);
struct repl_response_item *repl_response_add(struct repl_response *);
void		 repl_response_clear(struct repl_response *);

#endif
