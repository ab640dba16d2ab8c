/* common/httputil.c: not written yet. */
