/*
 * ratelim.c: the token bucket of the client's on-demand instance updates
 * (internal.h), with Netflix RateLimiter's rules: a burst of tokens, refilled
 * at so many a minute, the fraction of a token already earned kept across
 * calls. Time is the caller's wall ms.
 */
#include <string.h>

#include "internal.h"

/* Set up a token bucket with `burst` tokens refilled at per_min a minute. */
void
hk_ratelim_init(struct hk_ratelim *rl, int burst, int per_min)
{
	memset(rl, 0, sizeof *rl);
	rl->burst = burst < 1 ? 1 : burst;
	rl->per_min = per_min < 1 ? 1 : per_min;
}

/* Take one token if there is one (Netflix RateLimiter.acquire). */
int
hk_ratelim_acquire(struct hk_ratelim *rl, int64_t now)
{
	int64_t	new_tokens;

	if (rl->last_refill == 0) {
		rl->last_refill = now;
		rl->consumed = 0;
	} else if (now > rl->last_refill) {
		new_tokens = (now - rl->last_refill) * rl->per_min / 60000;
		if (new_tokens > 0) {
			/* Keep the fraction of a token already earned. */
			rl->last_refill += new_tokens * 60000 / rl->per_min;
			if (new_tokens > rl->consumed)
				rl->consumed = 0;
			else
				rl->consumed -= (int)new_tokens;
		}
	}
	if (rl->consumed >= rl->burst)
		return (0);
	rl->consumed++;
	return (1);
}
