/*
 * syncpage.h: one page of a registry pull (GET heureka/apps,
 * docs/cluster.md). A pull walks the registry in a fixed order that every node
 * computes the same way and that no change can reshuffle: applications by
 * (digest_app_key(name), name), then an application's live leases by
 * instance id (strcmp). A cursor is the last (app, id) sent; a page holds
 * what follows it, up to max_bytes of JSON (at least one instance, so a
 * page may pass max_bytes by one instance), SYNC_PAGE_APPS applications
 * and SYNC_PAGE_INSTANCES instances, restricted to the digest buckets set
 * in a mask (anti-entropy pulls only the buckets that differ). The body is
 * an ordinary Applications document, so any decoder of GET apps reads it.
 *
 * Cost per page: a walk over the applications (one fixed-key hash of each
 * name) and over the live leases of the applications it holds, then the
 * encode of what it holds: bounded by the page, not the registry, apart
 * from the O(applications) walk. Loop-free: `mono` judges expiry.
 */
#ifndef SYNCPAGE_H
#define SYNCPAGE_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct registry;

#define SYNC_PAGE_APPS		512	/* applications per page, at most */
#define SYNC_PAGE_INSTANCES	8192	/* instances per page, at most */
#define SYNC_BUCKETS_ALL	UINT64_MAX

/* Where a page starts: after (app, id); app NULL: the start; id NULL:
   after the whole of app. */
struct sync_cursor {
	const char	*app;
	const char	*id;
};

/* What a page held and where the next one starts. */
struct sync_page {
	size_t	 apps;		/* applications (or parts of one) */
	size_t	 instances;
	int	 last;		/* nothing follows */
	char	*next_app;	/* !last: the next page's cursor (owned) */
	char	*next_id;	/* NULL: after the whole of next_app */
};

/*
 * Append the page after `cur`, restricted to the buckets set in `buckets`
 * (bit b: digest bucket b), to `out`, and fill `pg`
 * (sync_page_clear frees its strings).
 */
void	sync_page_encode(struct registry *, int64_t mono,
	    const struct sync_cursor *cur, uint64_t buckets, size_t max_bytes,
	    struct buf *out, struct sync_page *pg);
void	sync_page_clear(struct sync_page *);
/* Does (app, id) come after the cursor in the pull order? (tests) */
int	sync_cursor_before(const struct sync_cursor *, const char *app,
	    const char *id);

#endif
