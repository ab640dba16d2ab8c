/* server/rest.c: not written yet. */
