/*
 * clock.c: wall-clock and monotonic milliseconds. Eureka's timestamps are
 * Java System.currentTimeMillis() values, so the wall clock is what goes on
 * the wire; intervals (eviction compensation) use the monotonic clock.
 */
#include <time.h>

#include "clock.h"

/* Milliseconds since the epoch. */
int64_t
clock_wall_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Monotonic milliseconds, unaffected by clock steps. */
int64_t
clock_mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}
