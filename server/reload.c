/*
 * reload.c: SIGHUP re-reads the configuration and applies what can change
 * on a running server (main.c: the log level and format, the access log,
 * the peer list and the peers' TLS files, the credentials, the TLS
 * certificate); everything else keeps its start-up value until a restart.
 * Before this an edited server.port was ignored without a word. Now every
 * changed key is named, in two lines at most: the ones applied (against
 * what the previous SIGHUP applied, so a key is reported once per change)
 * and, as a warning, the ones that need a restart (against what the
 * server runs with, so a pending one is named at every SIGHUP until the
 * restart).
 *
 * The comparison is of config_dump's lines (every key's canonical name
 * and value, URLs without their credentials), so it covers every key of
 * the table without a list here to keep in step. Secrets dump as
 * "<hidden>": a changed password is not named, but the credentials are
 * re-read at every SIGHUP anyway.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "log.h"
#include "reload.h"
#include "xmalloc.h"

#define RELOAD_VALUE_MAX	80	/* a value's characters in the log */

/* One dumped key and its value. */
struct reload_kv {
	char	*key;
	char	*val;
};

struct reload_dump {
	struct reload_kv	*v;
	size_t			 n;
};

/* What the previous SIGHUP applied (its whole dump). */
static struct reload_dump	reload_last;
static int			reload_have_last;

/*
 * The keys SIGHUP applies (main.c's signal_hup_cb): by canonical name,
 * or by prefix when the name ends in '.'.
 */
static const char *reload_applied[] = {
	"logging.level.", "heureka.log.format", "heureka.log.access",
	"eureka.client.service-url.", "heureka.peer.ssl.",
	"spring.security.", "heureka.security.",
	"server.ssl.certificate", "server.ssl.certificate-private-key",
	"server.ssl.trust-certificate", "server.ssl.client-auth",
	"server.ssl.enabled-protocols", "server.ssl.ciphers",
};

/* See reload.h. */
int
reload_applies(const char *key)
{
	size_t	i, n;

	for (i = 0; i < sizeof reload_applied / sizeof reload_applied[0];
	    i++) {
		n = strlen(reload_applied[i]);
		if (reload_applied[i][n - 1] == '.' ?
		    strncmp(key, reload_applied[i], n) == 0 :
		    strcmp(key, reload_applied[i]) == 0)
			return (1);
	}
	return (0);
}

/* cf as key/value pairs, in the table's order. */
static void
reload_dump(const struct config *cf, struct reload_dump *d)
{
	char	*text = NULL, *line, *eq, *save = NULL;
	size_t	 len = 0;
	FILE	*f;

	d->v = NULL;
	d->n = 0;
	if ((f = open_memstream(&text, &len)) == NULL)
		return;
	config_dump(cf, f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		d->v = xreallocarray(d->v, d->n + 1, sizeof *d->v);
		d->v[d->n].key = xstrdup(line);
		d->v[d->n].val = xstrdup(eq + 1);
		d->n++;
	}
	free(text);
}

/* Free a dump's pairs. */
static void
reload_dump_free(struct reload_dump *d)
{
	size_t	i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].key);
		free(d->v[i].val);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

/* key's value in d, or NULL when d has no such key (a map entry). */
static const char *
reload_find(const struct reload_dump *d, const char *key)
{
	size_t	i;

	for (i = 0; i < d->n; i++) {
		if (strcmp(d->v[i].key, key) == 0)
			return (d->v[i].val);
	}
	return (NULL);
}

/* A value for the log: "(unset)" for empty, cut after RELOAD_VALUE_MAX. */
static void
reload_value(struct buf *b, const char *v)
{
	if (v == NULL || *v == '\0')
		buf_adds(b, "(unset)");
	else if (strlen(v) > RELOAD_VALUE_MAX)
		buf_addf(b, "%.*s...", RELOAD_VALUE_MAX, v);
	else
		buf_adds(b, v);
}

/*
 * Append "key (old -> new)" to b for every key of a or b whose values
 * differ and whose reload_applies() is want.
 */
static size_t
reload_diff(struct buf *b, const struct reload_dump *from,
    const struct reload_dump *to, int want)
{
	const struct reload_dump	*side[2] = { to, from };
	const char			*ov, *nv;
	size_t				 i, k, n = 0;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < side[k]->n; i++) {
			const char *key = side[k]->v[i].key;

			/* A key in both is seen from `to` only. */
			if (k == 1 && reload_find(to, key) != NULL)
				continue;
			ov = reload_find(from, key);
			nv = reload_find(to, key);
			if ((ov == NULL ? "" : ov)[0] == '\0' &&
			    (nv == NULL ? "" : nv)[0] == '\0')
				continue;
			if (ov != NULL && nv != NULL && strcmp(ov, nv) == 0)
				continue;
			if (reload_applies(key) != want)
				continue;
			buf_addf(b, "%s%s (", n > 0 ? ", " : "", key);
			reload_value(b, ov);
			buf_adds(b, " -> ");
			reload_value(b, nv);
			buf_addc(b, ')');
			n++;
		}
	}
	return (n);
}

/* See reload.h. */
void
reload_report(const struct config *running, const struct config *next)
{
	struct reload_dump	 run, nxt;
	struct buf		 b;
	size_t			 applied, restart;

	reload_dump(running, &run);
	reload_dump(next, &nxt);
	buf_init(&b, 0);
	applied = reload_diff(&b, reload_have_last ? &reload_last : &run,
	    &nxt, 1);
	buf_addc(&b, '\0');
	if (applied > 0)
		log_info("SIGHUP: applied %s", b.data);
	b.len = 0;
	restart = reload_diff(&b, &run, &nxt, 0);
	buf_addc(&b, '\0');
	if (restart > 0)
		log_warnx("SIGHUP: %s need%s a restart (kept as started)",
		    b.data, restart == 1 ? "s" : "");
	if (applied == 0 && restart == 0)
		log_info("SIGHUP: no key changed");
	buf_free(&b);
	reload_dump_free(&run);
	reload_dump_free(&reload_last);
	reload_last = nxt;
	reload_have_last = 1;
}

/* See reload.h. */
void
reload_free(void)
{
	reload_dump_free(&reload_last);
	reload_have_last = 0;
}
