/*
 * cache_gzchunk.c: the deflate fragments of consecutive applications
 * copied into chunks (struct gzchunk), so a gzip full body is a header,
 * its chunks by reference and a trailer, and a change rebuilds only the
 * chunk around it. A chunk ends after an application whose name hashes
 * to 0 mod 32 (or at GZ_CHUNK_MAX bytes): its bounds depend on the names
 * alone. Each compressed fragment is kept once, in its chunk.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "xmalloc.h"

/* Free a chunk list. */
void
chunks_free(struct gzchunks *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++) {
		blob_unref(l->v[i].bl);
		free(l->v[i].ser);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/*
 * Point the fragments a new chunk copied at their bytes in it and free
 * their own (or drop their hold on the chunk they were in before): each
 * compressed fragment is kept once, in the chunk that holds it, and a
 * chunk rebuilt after a change copies its other fragments from there.
 */
static void
chunk_adopt(struct gzchunk *k, int v, struct appfrag **afv,
    const size_t *off)
{
	struct appfrag	*af;
	size_t		 j;

	for (j = 0; j < k->n; j++) {
		af = afv[j];
		if (af->gzbl[v] == k->bl)
			continue;
		if (af->gzbl[v] != NULL)
			blob_unref(af->gzbl[v]);
		else {
			af->rp->bytes -= af->gz[v].len;
			free(af->gz[v].data);
		}
		af->gz[v].data = k->bl->data + off[j];
		af->gzbl[v] = k->bl;
		k->bl->refs++;
	}
}

/*
 * The chunk of the fragments of afv[0..n) for v (serials ser, a leading
 * separator when lead): moved from the previous build's list when it
 * holds the same fragments (looked for a few places ahead of *oi, as both
 * lists are in registry order), else copied anew. Appended to nw.
 */
struct gzchunk *
chunk_get(struct cache *c, int v, struct gzchunks *old, size_t *oi,
    struct gzchunks *nw, struct appfrag **afv, const uint64_t *ser,
    size_t n, int lead)
{
	struct gzchunk	*k, *o;
	struct buf	 b;
	size_t		 j, len, *off;

	if (nw->n == nw->cap) {
		nw->cap = nw->cap == 0 ? 16 : nw->cap * 2;
		nw->v = xreallocarray(nw->v, nw->cap, sizeof *nw->v);
	}
	k = &nw->v[nw->n++];
	for (j = *oi; j < old->n && j < *oi + 4; j++) {
		o = &old->v[j];
		if (o->bl != NULL && o->n == n && o->lead == lead &&
		    memcmp(o->ser, ser, n * sizeof *ser) == 0) {
			*k = *o;
			o->bl = NULL;
			o->ser = NULL;
			*oi = j + 1;
			return (k);
		}
	}
	memset(k, 0, sizeof *k);
	buf_init(&b, 0);
	/* Its exact size: one allocation, no copies as it grows. */
	for (j = 0, len = 0; j < n; j++)
		len += (j > 0 || lead ? c->gzsep[v].len : 0) +
		    afv[j]->gz[v].len;
	buf_prealloc(&b, len);
	off = xreallocarray(NULL, n, sizeof *off);
	k->sum.crc = 0;
	for (j = 0; j < n; j++) {
		if (j > 0 || lead)
			gzip_stitch_add(&b, &c->gzsep[v], &k->sum.crc,
			    &k->sum.raw_len);
		off[j] = b.len;
		gzip_stitch_add(&b, &afv[j]->gz[v], &k->sum.crc,
		    &k->sum.raw_len);
	}
	k->bl = blob_from_buf(c->rp, &b);
	c->stats.gz_chunk_builds++;
	c->work += k->bl->len / 4;	/* the copy: a quarter of an encode */
	k->sum.len = k->bl->len;
	k->sum.op = gzip_combine_op(k->sum.raw_len);
	k->lead = lead;
	k->n = n;
	k->ser = xreallocarray(NULL, n, sizeof *k->ser);
	memcpy(k->ser, ser, n * sizeof *ser);
	chunk_adopt(k, v, afv, off);
	free(off);
	return (k);
}

/*
 * An aborted gzip build: the chunks it made or moved (nw, for the
 * applications before where it stopped) and the previous build's chunks it
 * had not reached yet (old from *oi) stay, in registry order, for the next
 * attempt to reuse; the ones it skipped go.
 */
void
chunks_keep(struct gzchunks *nw, struct gzchunks *old, size_t oi)
{
	size_t	i;

	for (i = oi; i < old->n; i++) {
		if (old->v[i].bl == NULL)
			continue;
		if (nw->n == nw->cap) {
			nw->cap = nw->cap == 0 ? 16 : nw->cap * 2;
			nw->v = xreallocarray(nw->v, nw->cap, sizeof *nw->v);
		}
		nw->v[nw->n++] = old->v[i];
		old->v[i].bl = NULL;
		old->v[i].ser = NULL;
	}
	chunks_free(old);
}
