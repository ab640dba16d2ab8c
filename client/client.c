/* client/client.c: not written yet. */
