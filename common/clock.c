/*
 * clock.c: wall-clock and monotonic milliseconds. Eureka's timestamps are
 * Java System.currentTimeMillis() values, so the wall clock is what goes on
 * the wire; every duration (leases, eviction, retention, rate windows) is
 * measured on the monotonic clock, which a clock step does not move.
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

/* Both clocks, for a core call that stamps and measures. */
struct hk_time
clock_now(void)
{
	struct hk_time	t;

	t.wall_ms = clock_wall_ms();
	t.mono_ms = clock_mono_ms();
	return (t);
}

/* Monotonic microseconds (the loop-latency probe). */
int64_t
clock_mono_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* ms as a timeval for event_add(); a negative duration is zero. */
struct timeval
clock_ms_tv(int64_t ms)
{
	struct timeval	tv;

	if (ms < 0)
		ms = 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	return (tv);
}

/*
 * CPU time of the calling thread, microseconds: what the loop itself
 * spent, not counting the time other processes held the CPU.
 */
int64_t
clock_thread_cpu_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}
