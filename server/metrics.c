/* server/metrics.c: not written yet. */
