/* common/gzip.h: not written yet. */
