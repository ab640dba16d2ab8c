/*
 * watch_int.h: what the watch's files share (watch.c, the stream;
 * watch_out.c, the bytes it hands to connections; watch_snap.c, the shared
 * snapshot encodings). Not for other modules.
 *
 * Every byte the watch sends is a blob: an immutable, reference-counted
 * block of whole SSE frames, handed to a connection by reference
 * (evbuffer_add_reference), so an event or a piece of a snapshot exists
 * once however many watchers it goes to (issue 21: 20 watchers of a
 * 50,000-instance registry held 20 copies, 36 MiB each, and 500 watchers
 * of 400 events of 4.5 KB took 800 MiB). The blobs alive are counted in
 * one account, which the registry's memory budget sees.
 */
#ifndef WATCH_INT_H
#define WATCH_INT_H

struct hconn;

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "buf.h"
#include "instance.h"
#include "registry.h"

/* Bytes of the blobs alive; shared with every blob, freed last. */
struct watch_acct {
	unsigned	 refs;
	size_t		 bytes;
	size_t		 blobs;
};

/*
 * Whole SSE frames, immutable once made, stored as one HTTP chunk (size
 * line, frames, CRLF): a chunked stream takes all of it, a stream that is
 * not chunked (HTTP/1.0) the frames only. Each is one reference in a
 * connection's output, with no separate chunk framing: evhttp's framing
 * costs two fresh 1 KiB buffers a chunk, which for 500 watchers made
 * more memory than the frames themselves.
 */
struct watch_blob {
	struct watch_acct	*acct;
	unsigned		 refs;
	size_t			 len;	/* the frames */
	size_t			 off;	/* where they begin in data */
	size_t			 size;	/* the whole chunk */
	char			*data;
};

struct watch_acct	*watch_acct_new(void);
void			 watch_acct_unref(struct watch_acct *);
/* A blob of b's bytes (b is reset); one reference, the caller's. */
struct watch_blob	*watch_blob_new(struct watch_acct *, struct buf *);
struct watch_blob	*watch_blob_ref(struct watch_blob *);
void			 watch_blob_unref(struct watch_blob *);

/*
 * A connection's unsent bytes: its output buffer and what the kernel holds
 * and the peer has not acknowledged (SIOCOUTQ), so a reader that stopped
 * cannot park a socket buffer's worth more than the bound.
 */
size_t		 watch_conn_pending(struct hconn *);
/* Its output buffer alone. */
size_t		 watch_conn_output(struct hconn *);
/* Cap the kernel's send buffer at about bound plus room for a RESET. */
void		 watch_conn_cap(struct hconn *, size_t bound);
/*
 * Put one blob in a connection's output, by reference (the blob lives
 * until the bytes are written), as a chunk when chunked is set. The
 * stream's head must have been sent. Returns the bytes added.
 */
size_t		 watch_send_blob(struct hconn *, int chunked,
		     struct watch_blob *);
/* Give freed heap back to the system (glibc keeps it otherwise). */
void		 watch_trim(void);

/* One SSE frame: event type, id, the instance (NULL: "{}", or app's stub). */
void		 watch_format(struct buf *, const char *type, uint64_t version,
		     const struct instance *, const char *app);

/*
 * One application's snapshot frames at one generation of it: ADDED
 * frames in pieces of about WATCHSNAP_PIECE_BYTES (instances by index,
 * one never split), built when the first watcher needs them and kept for
 * the next while a snapshot is under way and the memory budget allows,
 * and its LEADER frame.
 */
#define WATCHSNAP_PIECE_BYTES	(32 * 1024)

struct watchsnap_piece {
	struct watch_blob	*blob;
	size_t			 end;	/* the instance index after it */
};

struct watchsnap {
	uint64_t		 gen;		/* reg_app_gen when made */
	uint64_t		 version;	/* the id its frames carry */
	struct watchsnap_piece	*piece;		/* from index 0, in order */
	size_t			 n, cap;
	struct watch_blob	*leader;	/* NULL: not made */
	const struct instance	*leader_in;	/* whom it names */
};

/* What one step of a snapshot walk may do and did. */
struct watchsnap_ctx {
	struct watch_acct	*acct;
	struct registry		*reg;
	uint64_t		 version;	/* the snapshot's version: no
						   frame may carry a later id */
	int64_t			 mono;
	int			 retain;	/* keep new pieces */
	size_t			 encoded;	/* bytes encoded (out) */
};

/*
 * The piece of ra's snapshot that starts at instance index start, piece
 * number k (the k-th piece when the walk began at 0), from *sp (made or
 * replaced for ra's generation as needed); a new reference, NULL when
 * start is past the app's instances. *end is set to the index after it.
 */
struct watch_blob *watchsnap_piece(struct watchsnap **sp,
		     struct watchsnap_ctx *, struct reg_app *, size_t k,
		     size_t start, size_t *end);
/* ra's LEADER frame (a new reference), NULL when it has no leader. */
struct watch_blob *watchsnap_leader(struct watchsnap **sp,
		     struct watchsnap_ctx *, struct reg_app *);
/* Free a kept snapshot (NULL is fine); blobs in flight live on. */
void		 watchsnap_free(struct watchsnap *);

#endif
