/* server/cache.c: not written yet. */
