/* server/registry.c: not written yet. */
