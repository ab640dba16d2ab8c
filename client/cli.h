/* client/cli.h: not written yet. */
