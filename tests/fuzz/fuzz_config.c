/*
 * fuzz_config.c: libFuzzer target for the configuration readers: the
 * first byte picks YAML or .properties, the rest is the file's text;
 * what loads is then validated (config_load_buffer, config_validate).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bug.h"
#include "config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct config	 cf;
	char		*cause = NULL;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	if (len < 1)
		return (0);
	config_defaults(&cf);
	if (config_load_buffer(&cf, "fuzz", data[0] & 1, (const char *)data + 1,
	    len - 1, &cause) == 0)
		config_validate(&cf, &cause);
	free(cause);
	config_free(&cf);
	return (0);
}
