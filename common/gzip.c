/* common/gzip.c: not written yet. */
