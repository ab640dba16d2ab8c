/*
 * fuzz_xml_instance.c: libFuzzer target for the XML instance decoder
 * (xml_decode_instance). Whatever decodes must encode, and the encoding
 * must decode again.
 */
#include <stdint.h>
#include <stdlib.h>

#include "buf.h"
#include "bug.h"
#include "instance.h"
#include "log.h"
#include "xml.h"

#define NOW	1700000000000LL	/* fixed decode time: runs reproduce */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct instance	*in, *again;
	struct buf	 b;
	char		*cause = NULL;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	if ((in = xml_decode_instance((const char *)data, len, NOW,
	    &cause)) == NULL) {
		free(cause);
		return (0);
	}
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_FULL, 0);
	if ((again = xml_decode_instance(b.data, b.len, NOW, &cause)) ==
	    NULL)
		fatalx("re-decode of our own encoding failed: %s", cause);
	instance_free(again);
	buf_free(&b);
	instance_free(in);
	return (0);
}
