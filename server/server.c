/* server/server.c: not written yet. */
