/* common/config.c: not written yet. */
