/*
 * digest.h: heureka's anti-entropy digest of a registry (64 hex digits):
 * four lanes, each the sum of a hash of (APP, registry_copy_hash()) over
 * every unexpired instance, so equal registries give equal digests in any
 * order. Loop-free: the monotonic `now` judging expiry is passed in.
 */
#ifndef DIGEST_H
#define DIGEST_H

#include <stddef.h>
#include <stdint.h>

struct registry;

void	peer_digest(struct registry *, int64_t mono, char hex[65],
	    size_t *count);
/* Parse a peer's {"digest":"<64 hex>",...}; 0 on success. */
int	peer_parse_digest(const char *, char hex[65]);

#endif
