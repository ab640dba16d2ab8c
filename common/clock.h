/*
 * clock.h: the only place that reads the clocks. Everything else takes the
 * time as a parameter so unit tests can drive it by hand.
 *
 * Two clocks, two jobs: the wall clock stamps what goes on the wire (Java's
 * System.currentTimeMillis(): lastRenewalTimestamp, lastUpdatedTimestamp,
 * a cancel's tombstone time) and is compared with times other hosts
 * stamped; the monotonic clock measures every duration (leases, eviction
 * and its compensation, delta and tombstone retention, override expiry,
 * rate windows), so a step of the wall clock changes no expiry.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <sys/time.h>

#include <stdint.h>

/* Both clocks read at one instant; passed by value into the core. */
struct hk_time {
	int64_t	wall_ms;	/* ms since the Unix epoch, as Java's */
	int64_t	mono_ms;	/* monotonic ms, for durations */
};

int64_t		clock_wall_ms(void);
int64_t		clock_mono_ms(void);
struct hk_time	clock_now(void);	/* both, read together */
int64_t		clock_mono_us(void);	/* monotonic microseconds */
/* A duration in ms as libevent's timeval (negative: zero); no clock read. */
struct timeval	clock_ms_tv(int64_t ms);
int64_t		clock_thread_cpu_us(void);	/* this thread's CPU time */

#endif
