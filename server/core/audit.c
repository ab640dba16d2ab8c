/*
 * audit.c: the ring of audit records (audit.h). Each record is one
 * allocation holding its strings behind it, on a tail queue from oldest
 * to newest; the byte count is the sum of those allocations, so the
 * bound (heureka.audit.max-bytes) is what the records really take, and
 * adding past it frees the oldest first. A change is a few hundred bytes
 * (names up to INSTANCE_MAX_NAME); the default 1 MiB keeps some thousands
 * of them, an hour of a busy fleet's restarts.
 *
 * Reading is a walk from the newest; the endpoint bounds it with a limit.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "audit.h"
#include "buf.h"
#include "json.h"
#include "xmalloc.h"

#define AUDIT_MIN_BYTES	4096

struct audit_ent {
	TAILQ_ENTRY(audit_ent)	 entry;
	size_t			 size;		/* of this allocation */
	struct audit_rec	 r;
	/* the strings follow */
};
TAILQ_HEAD(audit_q, audit_ent);

/* A who's strings, copied (names are bounded by INSTANCE_MAX_NAME). */
struct audit_whobuf {
	char		 node[256];
	char		 user[128];
	char		 addr[64];
	struct audit_who w;
	int		 set;
};

struct audit {
	struct audit_q	 q;
	struct audit_whobuf cur;	/* the request's */
	struct audit_whobuf origin;	/* a replicated item's */
	void		(*lazy)(void *, struct audit_who *);
	void		*lazy_arg;	/* cur, once asked for */
	size_t		 max_bytes;
	size_t		 bytes;
	size_t		 n;
	uint64_t	 seq;
	uint64_t	 dropped;
};

static const char *audit_names[AUDIT_NWHAT] = {
	[AUDIT_REGISTER] = "register",
	[AUDIT_REREGISTER] = "re-register",
	[AUDIT_CANCEL] = "cancel",
	[AUDIT_EVICT] = "evict",
	[AUDIT_STATUS] = "status-override",
	[AUDIT_OVERRIDE_REMOVED] = "override-removed",
	[AUDIT_METADATA] = "metadata",
	[AUDIT_AIRLIFT] = "airlift-announce",
};

/* A ring bounded at max_bytes. */
struct audit *
audit_new(size_t max_bytes)
{
	struct audit	*a = xcalloc(1, sizeof *a);

	TAILQ_INIT(&a->q);
	a->max_bytes = max_bytes < AUDIT_MIN_BYTES ? AUDIT_MIN_BYTES :
	    max_bytes;
	return (a);
}

/* Drop the oldest record. */
static void
audit_drop_oldest(struct audit *a)
{
	struct audit_ent	*e = TAILQ_FIRST(&a->q);

	if (e == NULL)
		return;
	TAILQ_REMOVE(&a->q, e, entry);
	a->bytes -= e->size;
	a->n--;
	free(e);
}

/* Free the ring and its records. */
void
audit_free(struct audit *a)
{
	if (a == NULL)
		return;
	while (!TAILQ_EMPTY(&a->q))
		audit_drop_oldest(a);
	free(a);
}

/* Bytes held now. */
size_t
audit_bytes(const struct audit *a)
{
	return (a != NULL ? a->bytes : 0);
}

/* Records held now. */
size_t
audit_count(const struct audit *a)
{
	return (a != NULL ? a->n : 0);
}

/* Records the bound pushed out so far. */
uint64_t
audit_dropped(const struct audit *a)
{
	return (a != NULL ? a->dropped : 0);
}

/* Copy s behind the record at *p, return where it went. */
static const char *
audit_put(char **p, const char *s)
{
	size_t	 n = strlen(s) + 1;
	char	*d = *p;

	memcpy(d, s, n);
	*p += n;
	return (d);
}

/* Record one change (audit.h). */
const struct audit_rec *
audit_add(struct audit *a, int64_t at_ms, enum audit_what what,
    const char *app, const char *id, const char *detail,
    const struct audit_who *who, int replicated)
{
	struct audit_ent	*e;
	const char		*node, *user, *addr;
	size_t			 size;
	char			*p;

	app = app != NULL ? app : "";
	id = id != NULL ? id : "";
	detail = detail != NULL ? detail : "";
	node = who != NULL && who->node != NULL ? who->node : "";
	user = who != NULL && who->user != NULL ? who->user : "";
	addr = who != NULL && who->addr != NULL ? who->addr : "";
	size = sizeof *e + strlen(app) + strlen(id) + strlen(detail) +
	    strlen(node) + strlen(user) + strlen(addr) + 6;
	while (a->n > 0 && a->bytes + size > a->max_bytes) {
		audit_drop_oldest(a);
		a->dropped++;
	}
	e = xmalloc(size);
	e->size = size;
	p = (char *)(e + 1);
	e->r.seq = ++a->seq;
	e->r.at_ms = at_ms;
	e->r.what = what < AUDIT_NWHAT ? what : AUDIT_METADATA;
	e->r.replicated = replicated;
	e->r.app = audit_put(&p, app);
	e->r.id = audit_put(&p, id);
	e->r.detail = audit_put(&p, detail);
	e->r.node = audit_put(&p, node);
	e->r.user = audit_put(&p, user);
	e->r.addr = audit_put(&p, addr);
	TAILQ_INSERT_TAIL(&a->q, e, entry);
	a->bytes += size;
	a->n++;
	return (&e->r);
}

/* Copy a who into a buffer (NULL: unset). */
static void
audit_whobuf_set(struct audit_whobuf *b, const char *node, const char *user,
    const char *addr)
{
	str_lcpy(b->node, node != NULL ? node : "", sizeof b->node);
	str_lcpy(b->user, user != NULL ? user : "", sizeof b->user);
	str_lcpy(b->addr, addr != NULL ? addr : "", sizeof b->addr);
	b->w.node = b->node;
	b->w.user = b->user;
	b->w.addr = b->addr;
	b->set = 1;
}

/* The request's who (audit.h). */
void
audit_set_who(struct audit *a, const struct audit_who *w)
{
	if (a == NULL)
		return;
	a->origin.set = 0;
	a->lazy = NULL;
	if (w == NULL) {
		a->cur.set = 0;
		return;
	}
	audit_whobuf_set(&a->cur, w->node, w->user, w->addr);
}

/* The request's who, when first asked for (audit.h). */
void
audit_set_who_lazy(struct audit *a, void (*fn)(void *, struct audit_who *),
    void *arg)
{
	if (a == NULL)
		return;
	a->origin.set = 0;
	a->cur.set = 0;
	a->lazy = fn;
	a->lazy_arg = arg;
}

/* A replicated item's origin over the request's (audit.h). */
void
audit_set_origin(struct audit *a, const char *node, const char *user,
    const char *addr)
{
	if (a == NULL)
		return;
	if (node == NULL) {
		a->origin.set = 0;
		return;
	}
	audit_whobuf_set(&a->origin, node, user, addr);
}

/* Who is acting now (audit.h). */
const struct audit_who *
audit_who(struct audit *a)
{
	static const struct audit_who	none = { "", "", "" };
	struct audit_who		w = { NULL, NULL, NULL };

	if (a == NULL)
		return (&none);
	if (a->origin.set)
		return (&a->origin.w);
	if (a->lazy != NULL) {
		a->lazy(a->lazy_arg, &w);
		a->lazy = NULL;
		audit_whobuf_set(&a->cur, w.node, w.user, w.addr);
	}
	return (a->cur.set ? &a->cur.w : &none);
}

/* The JSON name of a kind. */
const char *
audit_what_name(enum audit_what w)
{
	return (w < AUDIT_NWHAT && audit_names[w] != NULL ? audit_names[w] :
	    "change");
}

/* One record as a JSON object. */
void
audit_rec_json(struct buf *b, const struct audit_rec *r)
{
	buf_adds(b, "{\"seq\":");
	buf_add_i64(b, (int64_t)r->seq);
	buf_adds(b, ",\"time\":");
	buf_add_i64(b, r->at_ms);
	buf_adds(b, ",\"what\":");
	json_add_string(b, audit_what_name(r->what));
	buf_adds(b, ",\"app\":");
	json_add_string(b, r->app);
	buf_adds(b, ",\"id\":");
	json_add_string(b, r->id);
	buf_adds(b, ",\"detail\":");
	json_add_string(b, r->detail);
	buf_adds(b, ",\"node\":");
	json_add_string(b, r->node);
	buf_adds(b, ",\"user\":");
	json_add_string(b, r->user);
	buf_adds(b, ",\"address\":");
	json_add_string(b, r->addr);
	buf_adds(b, r->replicated ? ",\"replicated\":true}" :
	    ",\"replicated\":false}");
}

/* The matching records, newest first (audit.h). */
void
audit_json(const struct audit *a, struct buf *b, const char *app,
    const char *id, int64_t since_ms, size_t limit)
{
	const struct audit_ent	*e;
	size_t			 n = 0;

	buf_adds(b, "{\"records\":[");
	TAILQ_FOREACH_REVERSE(e, &a->q, audit_q, entry) {
		if (e->r.at_ms < since_ms)
			break;
		if ((app != NULL && *app != '\0' &&
		    strcasecmp(app, e->r.app) != 0) ||
		    (id != NULL && *id != '\0' && strcmp(id, e->r.id) != 0))
			continue;
		if (n++ > 0)
			buf_addc(b, ',');
		audit_rec_json(b, &e->r);
		if (limit > 0 && n >= limit)
			break;
	}
	buf_adds(b, "],\"dropped\":");
	buf_add_i64(b, (int64_t)a->dropped);
	buf_addc(b, '}');
}
