/*
 * clock.h: the only place that reads the clocks. Everything else takes `now`
 * (milliseconds) as a parameter so unit tests can drive time by hand.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

int64_t	clock_wall_ms(void);	/* ms since the Unix epoch, as Java's */
int64_t	clock_mono_ms(void);	/* monotonic ms, for intervals */

#endif
