/*
 * looplag.h: the event loop's latency probe. A timer due every
 * LOOPLAG_PERIOD_MS reports how late it ran; the lateness is how long
 * the loop was busy with something else (a stall). Kept here: a
 * cumulative histogram (for /metrics and the benchmarks, which diff it
 * around a scenario), the maximum since start, and the maximum and p99 of
 * the last completed interval. Time is passed in (microseconds).
 *
 * Beside the probe, the loop's own turns: the CPU time the loop thread
 * spent between two returns from polling (server.c reads the thread's
 * CPU clock there and passes the difference in). A probe's lateness
 * also counts the time other processes held the CPU, which on a shared
 * machine can be far longer than anything heurekad did; a turn's CPU
 * time is heurekad's own, and what the stall bound holds it to. Kept:
 * a cumulative histogram, the longest turn since start and the longest
 * of the last completed probe interval.
 */
#ifndef LOOPLAG_H
#define LOOPLAG_H

#include <stdint.h>

#define LOOPLAG_PERIOD_MS	10
#define LOOPLAG_INTERVAL_MS	10000	/* window of the max and p99 */
#define LOOPLAG_SAMPLES		((LOOPLAG_INTERVAL_MS / LOOPLAG_PERIOD_MS) + 24)
#define LOOPLAG_NBUCKETS	24
#define LOOPLAG_TURN_NBUCKETS	29

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
	/* Loop turns, by the loop thread's CPU time. */
	int64_t		 turn_cur_max_us;	/* current interval */
	int64_t		 turn_last_max_us;	/* last completed interval */
	int64_t		 turn_max_us;		/* since start */
	uint64_t	 turns;
	int64_t		 turn_sum_us;
	uint64_t	 turn_bucket[LOOPLAG_TURN_NBUCKETS];	/* not cum. */
};

void	looplag_init(struct looplag *, int64_t now_us);
/* One probe: it ran late_us after it was due, at now_us. */
void	looplag_sample(struct looplag *, int64_t late_us, int64_t now_us);
/* Upper bound in seconds of histogram bucket i (< LOOPLAG_NBUCKETS). */
double	looplag_bound(int);
/* One loop turn took cpu_us of the loop thread's CPU time. */
void	looplag_turn(struct looplag *, int64_t cpu_us);
/* Upper bound in seconds of turn bucket i (< LOOPLAG_TURN_NBUCKETS). */
double	looplag_turn_bound(int);
/*
 * The turn histogram's q-quantile since start (0 < q <= 1), as the upper
 * bound of its bucket in microseconds; 0 before any turn.
 */
int64_t	looplag_turn_quantile(const struct looplag *, double q);

#endif
