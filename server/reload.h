/*
 * reload.h: what a SIGHUP changed, in the log (reload.c).
 */
#ifndef RELOAD_H
#define RELOAD_H

struct config;

/*
 * Compare next (the configuration just re-read) with running (the one
 * heurekad started with) and with what the previous SIGHUP applied, and
 * log which changed keys are applied now and which need a restart.
 */
void	reload_report(const struct config *running,
	    const struct config *next);
/* 1 when SIGHUP applies key (its canonical name) to a running server. */
int	reload_applies(const char *key);
/* Forget the previous SIGHUP's values (at exit). */
void	reload_free(void);

#endif
