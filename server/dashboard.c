/* server/dashboard.c: not written yet. */
