/*
 * instdump.h: every field of the instances a fixture decodes to, as
 * text, one line each: what the packed decoder's golden test compares
 * with tests/data/decoded/, written by the decoder it replaced.
 */
#ifndef INSTDUMP_H
#define INSTDUMP_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct instance;

void	instance_dump(struct buf *, const struct instance *);
/* Decode data as the fixture name says; -1 if it does not decode. */
int	fixture_dump(struct buf *, const char *name, const char *data,
	    size_t len, int64_t now);

#endif
