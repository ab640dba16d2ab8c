/*
 * cache_blob.c: the bytes every body is made of. A blob is an immutable,
 * refcounted byte string (cache.h's struct cache_seg); a body is a list
 * of pieces of blobs, lent to the HTTP layer without a copy and alive
 * until the last response that holds it is sent. Big blobs that die go
 * to the reaper, which gives them back a piece a loop turn (cache_reap):
 * freeing a gigabyte at once is a 100 ms stall. The reaper's state and
 * the byte count the memory budget reads are a struct cache_reaper,
 * shared by the cache and its blobs, which may outlive it.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "xmalloc.h"

static int	reap_push(struct blob *);

/*
 * A blob that takes over a buffer's bytes, allocated to their size: the
 * buffer grew by doubling, and what cache_bytes() counts is the length
 * (a run, a fragment, a gzip chunk kept at its buffer's size held up to
 * twice that).
 */
struct blob *
blob_from_buf(struct cache_reaper *rp, struct buf *b)
{
	struct blob	*bl = xcalloc(1, sizeof *bl);

	bl->refs = 1;
	buf_trim(b);
	bl->data = buf_steal(b, &bl->len);
	bl->rp = rp;
	rp->refs++;
	rp->bytes += bl->len;
	return (bl);
}

/* Drop a reference; NULL is fine. */
void
blob_unref(struct blob *bl)
{
	if (bl == NULL || --bl->refs > 0 || reap_push(bl))
		return;
	bl->rp->bytes -= bl->len;
	reaper_unref(bl->rp);
	free(bl->mem);
	free(bl->data);
	free(bl);
}

/* A body of one segment that takes over a buffer. */
struct cache_body *
body_from_buf(struct cache_reaper *rp, struct buf *b)
{
	struct cache_body	*cb = xcalloc(1, sizeof *cb);

	cb->refs = 1;
	cb->segs = xmalloc(sizeof *cb->segs);
	cb->segs[0].bl = blob_from_buf(rp, b);
	cb->segs[0].off = 0;
	cb->segs[0].len = cb->segs[0].bl->len;
	cb->nseg = 1;
	cb->len = cb->segs[0].len;
	return (cb);
}

/* Take another reference to a body. */
struct cache_body *
body_ref(struct cache_body *cb)
{
	cb->refs++;
	return (cb);
}

/* Drop a reference; the last one frees the segments' references. */
void
cache_body_unref(struct cache_body *cb)
{
	size_t	i;

	if (cb == NULL || --cb->refs > 0)
		return;
	for (i = 0; i < cb->nseg; i++)
		blob_unref(cb->segs[i].bl);
	free(cb->segs);
	free(cb);
}

/* Total length in bytes. */
size_t
cache_body_len(const struct cache_body *cb)
{
	return (cb->len);
}

/* Lend each non-empty segment to fn, with a reference fn owns. */
void
cache_body_foreach_seg(const struct cache_body *cb,
    void (*fn)(struct cache_seg *, const char *, size_t, void *), void *arg)
{
	size_t	i;

	for (i = 0; i < cb->nseg; i++) {
		struct blob	*bl = cb->segs[i].bl;

		if (cb->segs[i].len == 0)
			continue;
		bl->refs++;
		fn((struct cache_seg *)(void *)bl, bl->data + cb->segs[i].off,
		    cb->segs[i].len, arg);
	}
}

/* Release a segment reference cache_body_foreach_seg() gave. */
void
cache_seg_unref(struct cache_seg *seg)
{
	blob_unref((struct blob *)(void *)seg);
}

/* Contiguous copy, for tests and the read-only layer's comparisons. */
char *
cache_body_copy(const struct cache_body *cb, size_t *lenp)
{
	char	*p = xmalloc(cb->len + 1), *q = p;
	size_t	 i;

	for (i = 0; i < cb->nseg; i++) {
		memcpy(q, cb->segs[i].bl->data + cb->segs[i].off,
		    cb->segs[i].len);
		q += cb->segs[i].len;
	}
	*q = '\0';
	if (lenp != NULL)
		*lenp = cb->len;
	return (p);
}

/* Append len bytes of a blob from byte off on (the body's reference). */
void
body_push_slice(struct cache_body *cb, size_t *cap, struct blob *bl,
    size_t off, size_t len)
{
	/* *cap is segs' room: none without an array, never overrun. */
	HK_ASSERT(cb->nseg <= *cap && (cb->segs != NULL || *cap == 0));
	if (cb->nseg == *cap) {
		*cap = *cap == 0 ? 16 : *cap * 2;
		cb->segs = xreallocarray(cb->segs, *cap, sizeof *cb->segs);
	}
	cb->segs[cb->nseg].bl = bl;
	cb->segs[cb->nseg].off = off;
	cb->segs[cb->nseg++].len = len;
	cb->len += len;
}

/* Append a whole blob. */
void
body_push(struct cache_body *cb, size_t *cap, struct blob *bl)
{
	body_push_slice(cb, cap, bl, 0, bl->len);
}

/*
 * Append a shared slice: it extends the last segment when it follows it
 * in the same blob (fragments of one run), else takes a reference.
 */
void
body_push_shared(struct cache_body *cb, size_t *cap, struct blob *bl,
    size_t off, size_t len)
{
	struct bseg	*last = cb->nseg > 0 ? &cb->segs[cb->nseg - 1] : NULL;

	if (last != NULL && last->bl == bl && last->off + last->len == off) {
		last->len += len;
		cb->len += len;
		return;
	}
	bl->refs++;
	body_push_slice(cb, cap, bl, off, len);
}

/* Append a shared blob (one more reference to it). */
void
body_push_ref(struct cache_body *cb, size_t *cap, struct blob *bl)
{
	bl->refs++;
	body_push(cb, cap, bl);
}

/* Merge a many-segment body into one blob when it is small. */
struct cache_body *
body_coalesce(struct cache_body *cb)
{
	struct cache_reaper	*rp;
	struct blob		*nb;
	struct buf		 b;
	size_t			 i;

	if (cb->nseg <= 1 || cb->len >= COALESCE_BELOW)
		return (cb);
	rp = cb->segs[0].bl->rp;
	buf_init(&b, 0);
	for (i = 0; i < cb->nseg; i++)
		buf_add(&b, cb->segs[i].bl->data + cb->segs[i].off,
		    cb->segs[i].len);
	/*
	 * The new blob takes its reaper reference before the old blobs
	 * drop theirs: were these the reaper's last (its cache gone), rp
	 * would be freed under us.
	 */
	nb = blob_from_buf(rp, &b);
	for (i = 0; i < cb->nseg; i++)
		blob_unref(cb->segs[i].bl);
	cb->segs[0].bl = nb;
	cb->segs[0].off = 0;
	cb->segs[0].len = cb->segs[0].bl->len;
	cb->nseg = 1;
	return (cb);
}

/*
 * Big blobs are given back a piece at a time (cache_reap): freeing a body
 * of a gigabyte (a delta right after a million registrations) is about
 * 100 ms of page freeing in one call. A blob of REAP_ABOVE bytes or more
 * (any, while plain_drop releases an idle plain variant) whose last
 * reference goes joins a list, counted in cache_bytes until it
 * is gone; the loop shrinks the list's head by at most the given bytes a
 * turn (realloc to a smaller size hands the tail pages back).
 */
#define REAP_ABOVE	(16 * 1024 * 1024)

/* Drop a reference to a reaper; the last frees it. */
void
reaper_unref(struct cache_reaper *rp)
{
	if (--rp->refs > 0)
		return;
	free(rp->batch);
	free(rp);
}

/* A reference to c's reaper (cache.h). */
struct cache_reaper *
cache_reaper_hold(struct cache *c)
{
	c->rp->refs++;
	return (c->rp);
}

/* Bytes of the encodings the reaper's cache made that are alive. */
size_t
cache_reaper_bytes(const struct cache_reaper *rp)
{
	return (rp->bytes);
}

/* Drop a reference taken with cache_reaper_hold(). */
void
cache_reaper_release(struct cache_reaper *rp)
{
	reaper_unref(rp);
}

/* Take a dying blob into the list: 1 when it is the reaper's now. */
static int
reap_push(struct blob *bl)
{
	struct cache_reaper	*rp = bl->rp;

	if ((bl->len < REAP_ABOVE && !rp->any) || !rp->live)
		return (0);
	free(bl->mem);
	bl->mem = NULL;
	bl->dead = NULL;
	if (rp->any) {
		if (rp->nbatch == rp->batchcap) {
			rp->batchcap = rp->batchcap == 0 ? 64 :
			    rp->batchcap * 2;
			rp->batch = xreallocarray(rp->batch, rp->batchcap,
			    sizeof *rp->batch);
		}
		rp->batch[rp->nbatch++] = bl;
		return (1);
	}
	if (rp->tail != NULL)
		rp->tail->dead = bl;
	else
		rp->head = bl;
	rp->tail = bl;
	return (1);
}

/* qsort: blobs by the address of their bytes, highest first. */
static int
reap_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t)(*(struct blob *const *)a)->data;
	uintptr_t	y = (uintptr_t)(*(struct blob *const *)b)->data;

	return (x < y ? 1 : x > y ? -1 : 0);
}

/*
 * The blobs plain_drop() released join the reaper's list highest address
 * first: most sit in malloc's heap, and one freed below the others gives
 * nothing back until the one above it goes, then all of them in one trim
 * of the heap's top; top down, each turn's frees are given back as they
 * go. (A free region left below them, such as another variant's dropped
 * before, still joins the last trim: RESULTS.md, plaindrop.)
 */
void
reap_batch_flush(struct cache_reaper *rp)
{
	size_t	i;

	if (rp->nbatch > 0)	/* (the array may be NULL when empty) */
		qsort(rp->batch, rp->nbatch, sizeof *rp->batch, reap_cmp);
	for (i = 0; i < rp->nbatch; i++) {
		if (rp->tail != NULL)
			rp->tail->dead = rp->batch[i];
		else
			rp->head = rp->batch[i];
		rp->tail = rp->batch[i];
	}
	free(rp->batch);
	rp->batch = NULL;
	rp->nbatch = rp->batchcap = 0;
}

/* Give back at most max bytes of c's dead blobs; 1 while some remain. */
int
cache_reap(struct cache *c, size_t max)
{
	struct cache_reaper	*rp = c->rp;
	struct blob		*bl;
	char			*p;
	size_t			 n;
	CACHE_CHECKED(c);

	while ((bl = rp->head) != NULL && max > 0) {
		n = bl->len < max ? bl->len : max;
		max -= n;
		rp->bytes -= n;
		if (n < bl->len) {
			bl->len -= n;
			if ((p = realloc(bl->data, bl->len)) != NULL)
				bl->data = p;
			break;
		}
		rp->head = bl->dead;
		if (rp->head == NULL)
			rp->tail = NULL;
		free(bl->data);
		free(bl);
		rp->refs--;	/* never the last: the cache holds one */
	}
	return (rp->head != NULL);
}
