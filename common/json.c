/* common/json.c: not written yet. */
