/* common/httputil.h: not written yet. */
