/*
 * looplag.h: the event loop's latency probe. A timer due every
 * LOOPLAG_PERIOD_MS reports how late it ran; the lateness is how long
 * the loop was busy with something else (a stall). Kept here: a
 * cumulative histogram (for /metrics and the benchmarks, which diff it
 * around a scenario), the maximum since start, and the maximum and p99 of
 * the last completed interval. Time is passed in (microseconds).
 */
#ifndef LOOPLAG_H
#define LOOPLAG_H

#include <stdint.h>

#define LOOPLAG_PERIOD_MS	10
#define LOOPLAG_INTERVAL_MS	10000	/* window of the max and p99 */
#define LOOPLAG_SAMPLES		((LOOPLAG_INTERVAL_MS / LOOPLAG_PERIOD_MS) + 24)
#define LOOPLAG_NBUCKETS	24

struct looplag {
	int64_t		 start_us;	/* current interval */
	uint32_t	 n;		/* its samples */
	int64_t		 cur_max_us;
	int64_t		 samples[LOOPLAG_SAMPLES];
	int64_t		 last_max_us;	/* last completed interval */
	int64_t		 last_p99_us;
	int64_t		 max_us;	/* since start */
	uint64_t	 count;
	int64_t		 sum_us;
	uint64_t	 bucket[LOOPLAG_NBUCKETS];	/* not cumulative */
};

void	looplag_init(struct looplag *, int64_t now_us);
/* One probe: it ran late_us after it was due, at now_us. */
void	looplag_sample(struct looplag *, int64_t late_us, int64_t now_us);
/* Upper bound in seconds of histogram bucket i (< LOOPLAG_NBUCKETS). */
double	looplag_bound(int);

#endif
