/*
 * repl.c: the peer-replication model's action names and its growable
 * lists (repl.h). No I/O and no wire format here: json.c reads and writes
 * them.
 */
#include <stdlib.h>
#include <string.h>

#include "instance.h"
#include "repl.h"
#include "xmalloc.h"

/* The exact mixed-case action names of ReplicationInstance (§4.1.9). */
static const char *repl_action_names[] = {
	"Heartbeat", "Register", "Cancel", "StatusUpdate",
	"DeleteStatusOverride",
};
#define REPL_ACTION_COUNT \
	(sizeof repl_action_names / sizeof repl_action_names[0])

/*
 * The names of a decoded list, packed into blocks of REPL_NAMES_BLOCK
 * bytes (a longer name gets a block of its own, kept behind the block
 * being filled): a 250-item batch costs a few allocations instead of
 * 500, and repl_list_clear() frees a few.
 */
#define REPL_NAMES_BLOCK	4096

struct repl_names {
	struct repl_names	*next;
	size_t			 used;
	size_t			 size;
	char			 data[];
};

/* The wire name of an action. */
const char *
repl_action_name(enum repl_action a)
{
	if ((unsigned)a >= REPL_ACTION_COUNT)
		return ("Heartbeat");
	return (repl_action_names[a]);
}

/* Parse an action name, case-sensitively; -1 if unknown. */
int
repl_action_parse(const char *s, enum repl_action *out)
{
	size_t	i;

	for (i = 0; i < REPL_ACTION_COUNT; i++) {
		if (strcmp(s, repl_action_names[i]) == 0) {
			*out = (enum repl_action)i;
			return (0);
		}
	}
	return (-1);
}

/* Append a zeroed item and lend it out. */
struct repl_item *
repl_list_add(struct repl_list *l)
{
	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 16 : l->cap * 2;
		l->items = xreallocarray(l->items, l->cap, sizeof *l->items);
	}
	memset(&l->items[l->n], 0, sizeof l->items[l->n]);
	return (&l->items[l->n++]);
}

/* A copy of n bytes at s in l's name blocks, NUL-terminated. */
char *
repl_list_name(struct repl_list *l, const char *s, size_t n)
{
	struct repl_names	*b = l->names;
	char			*p;
	size_t			 size;

	if (b == NULL || b->size - b->used < n + 1) {
		size = n + 1 > REPL_NAMES_BLOCK ? n + 1 : REPL_NAMES_BLOCK;
		b = xmalloc(sizeof *b + size);
		b->used = 0;
		b->size = size;
		if (size > REPL_NAMES_BLOCK && l->names != NULL) {
			/* Full at once: the block being filled stays first. */
			b->next = l->names->next;
			l->names->next = b;
		} else {
			b->next = l->names;
			l->names = b;
		}
	}
	p = b->data + b->used;
	memcpy(p, s, n);
	p[n] = '\0';
	b->used += n + 1;
	return (p);
}

/* Free every item and the array; the list is empty and reusable. */
void
repl_list_clear(struct repl_list *l)
{
	struct repl_names	*b;
	struct repl_item	*it;
	size_t			 i;

	for (i = 0; i < l->n; i++) {
		it = &l->items[i];
		if (!it->decoded) {
			free(it->app_name);
			free(it->id);
			free(it->origin_node);
			free(it->origin_user);
			free(it->origin_addr);
		}
		if (it->info != NULL)
			instance_free(it->info);
	}
	while ((b = l->names) != NULL) {
		l->names = b->next;
		free(b);
	}
	free(l->items);
	memset(l, 0, sizeof *l);
}

/* Append a zeroed response item and lend it out. */
struct repl_response_item *
repl_response_add(struct repl_response *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap == 0 ? 16 : r->cap * 2;
		r->items = xreallocarray(r->items, r->cap, sizeof *r->items);
	}
	memset(&r->items[r->n], 0, sizeof r->items[r->n]);
	return (&r->items[r->n++]);
}

/* Free every response item and the array. */
void
repl_response_clear(struct repl_response *r)
{
	size_t	i;

	for (i = 0; i < r->n; i++)
		instance_free(r->items[i].entity);
	free(r->items);
	memset(r, 0, sizeof *r);
}
