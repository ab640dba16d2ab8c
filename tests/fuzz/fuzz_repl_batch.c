/*
 * fuzz_repl_batch.c: libFuzzer target for the replication batch decoder
 * (json_decode_repl_list), the body of POST peerreplication/batch. A
 * decoded list must encode and decode again to as many items.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bug.h"
#include "json.h"
#include "log.h"

#define NOW	1700000000000LL	/* fixed decode time: runs reproduce */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct repl_list	 l, again;
	struct buf		 b;
	char			*cause = NULL;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	memset(&l, 0, sizeof l);
	memset(&again, 0, sizeof again);
	if (json_decode_repl_list((const char *)data, len, &l, NOW,
	    &cause) != 0) {
		free(cause);
		repl_list_clear(&l);
		return (0);
	}
	buf_init(&b, 0);
	json_encode_repl_list(&b, &l);
	if (json_decode_repl_list(b.data, b.len, &again, NOW, &cause) != 0)
		fatalx("re-decode of our own encoding failed: %s", cause);
	if (again.n != l.n)
		fatalx("re-decode has %zu items, not %zu", again.n, l.n);
	repl_list_clear(&again);
	repl_list_clear(&l);
	buf_free(&b);
	return (0);
}
