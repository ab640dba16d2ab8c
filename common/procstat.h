/*
 * procstat.h: what the Prometheus client libraries call the process
 * collector: this process's CPU time, memory, descriptors and start time,
 * read from Linux's /proc (procstat.c).
 */
#ifndef PROCSTAT_H
#define PROCSTAT_H

#include <stdint.h>

struct procstat {
	double		cpu_seconds;	/* user + system */
	uint64_t	rss_bytes;	/* resident set */
	uint64_t	vsize_bytes;	/* virtual memory */
	int64_t		open_fds;	/* -1: unknown */
	int64_t		max_fds;	/* soft RLIMIT_NOFILE; -1: none */
	double		start_time;	/* epoch seconds; 0: unknown */
};

/* Fill ps; 0, or -1 when /proc/self/stat could not be read (ps zeroed). */
int	procstat_read(struct procstat *ps);

#endif
