/*
 * config.c: heureka's configuration, as one static table (nginx/redis
 * style, config_table.c). Each row names a setting with every spelling
 * Eureka users write (Spring kebab-case first, which is the canonical
 * name, then Netflix camelCase and the bare Netflix "eureka." form), its
 * type, the field of struct config it fills, its bounds, its default and
 * a line of help. This file finds a key in the table, applies, validates,
 * dumps and explains values; config_load.c reads the sources.
 *
 * Keys are matched after "relaxed binding" normalisation, as Spring Boot
 * does: lower-case, '-' and '_' dropped, so eviction-interval-timer-in-ms,
 * evictionIntervalTimerInMs and EVICTION_INTERVAL_TIMER_IN_MS (from the
 * environment, where '_' first becomes '.') are one key. A '*' in a table
 * name matches one dotted component; a trailing ".*" matches the rest of
 * the key (maps such as eureka.instance.metadata-map.<key>).
 *
 * Keys that Eureka has but that make no sense here (AWS bindings, thread
 * pools, remote regions, the rate limiter) are accepted and ignored, so a
 * pasted Spring application.yml loads; each is logged once. Anything else
 * unknown is an error, as is an out-of-range or malformed value.
 *
 * Files are .yml/.yaml (libyaml events; nested mappings flattened with
 * '.', lists of scalars joined with ',', all documents merged) or Java
 * .properties (config_load.c). Durations are plain integers in the unit
 * the key's name says.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bug.h"
#include "config_int.h"
#include "dnsmsg.h"
#include "log.h"
#include "tls.h"
#include "xmalloc.h"

static int	 config_glob(const char *, const char *, const char **);
static const char *config_suggest(const char *);
static int	 config_apply(struct config *, const struct config_opt *,
		     const char *, const char *, char **);
static int	 config_parse_bool(const char *, int *);
static int	 config_parse_int(const char *, long long *);
static char	*config_trim(const char *);
static int	 config_check_urls(const char *, const char *, char **);



/*
 * Normalise a key for relaxed binding: lower-case, drop '-' and '_'. For
 * environment names ('env'), '_' becomes '.' first, as Spring does. Spring's
 * "map[key]" becomes "map.key". -1 if the key does not fit.
 */
int
config_normalise(const char *in, char *out, size_t outlen, int env)
{
	size_t	n = 0;

	for (; *in != '\0'; in++) {
		char	c = *in;

		if (c == '_' && env)
			c = '.';
		else if (c == '-' || c == '_' || c == ']')
			continue;
		else if (c == '[')
			c = '.';
		if (n + 1 >= outlen)
			return (-1);
		out[n++] = (char)tolower((unsigned char)c);
	}
	out[n] = '\0';
	return (0);
}

/*
 * Match normalised key s against normalised pattern pat: '*' matches one
 * dotted component, a final '*' the (non-empty) rest, returned in *rest.
 */
static int
config_glob(const char *pat, const char *s, const char **rest)
{
	for (;;) {
		if (*pat == '*') {
			if (pat[1] == '\0') {
				if (*s == '\0')
					return (0);
				if (rest != NULL)
					*rest = s;
				return (1);
			}
			if (*s == '\0' || *s == '.')
				return (0);
			while (*s != '\0' && *s != '.')
				s++;
			pat++;
			continue;
		}
		if (*pat != *s)
			return (0);
		if (*pat == '\0')
			return (1);
		pat++;
		s++;
	}
}

/*
 * Find the row for normalised key 'norm': exact names win over patterns.
 * With 'nodots' (environment fallback), dots are ignored on both sides and
 * the match must be unique. *rest gets the tail a pattern matched.
 */
const struct config_opt *
config_find(const char *norm, int nodots, const char **rest)
{
	const struct config_opt	*o, *found = NULL;
	char			 pat[CONFIG_KEY_MAX], a[CONFIG_KEY_MAX];
	char			*p, *q;
	size_t			 i, j;

	if (rest != NULL)
		*rest = NULL;
	if (nodots) {
		for (p = a, q = (char *)norm; *q != '\0'; q++)
			if (*q != '.')
				*p++ = *q;
		*p = '\0';
	}
	/* Exact names first. */
	for (i = 0; i < config_nopts; i++) {
		o = &config_opts[i];
		for (j = 0; j < CONFIG_NAMES && o->names[j] != NULL; j++) {
			if (strchr(o->names[j], '*') != NULL)
				continue;
			if (config_normalise(o->names[j], pat, sizeof pat,
			    0) != 0)
				continue;
			if (nodots) {
				for (p = q = pat; *q != '\0'; q++)
					if (*q != '.')
						*p++ = *q;
				*p = '\0';
				if (strcmp(pat, a) != 0)
					continue;
				if (found != NULL && found != o)
					return (NULL);	/* ambiguous */
				found = o;
				continue;
			}
			if (strcmp(pat, norm) == 0)
				return (o);
		}
	}
	if (nodots)
		return (found);
	/* Then patterns, in table order. */
	for (i = 0; i < config_nopts; i++) {
		o = &config_opts[i];
		for (j = 0; j < CONFIG_NAMES && o->names[j] != NULL; j++) {
			if (strchr(o->names[j], '*') == NULL)
				continue;
			if (config_normalise(o->names[j], pat, sizeof pat,
			    0) != 0)
				continue;
			if (config_glob(pat, norm, rest))
				return (o);
		}
	}
	return (NULL);
}

/* Edit distance between two short strings (for "did you mean"). */
static size_t
config_distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, d;
	size_t	row0[CONFIG_KEY_MAX + 1], row1[CONFIG_KEY_MAX + 1];
	size_t	*prev = row0, *cur = row1, *t;

	if (la > CONFIG_KEY_MAX || lb > CONFIG_KEY_MAX)
		return (SIZE_MAX);
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			d = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
		}
		t = prev;
		prev = cur;
		cur = t;
	}
	return (prev[lb]);
}

/* The known spelling closest to normalised key 'norm', or NULL if none is. */
static const char *
config_suggest(const char *norm)
{
	const char	*best = NULL;
	char		 pat[CONFIG_KEY_MAX];
	size_t		 i, j, d, bestd = SIZE_MAX, limit;

	limit = strlen(norm) / 5;
	if (limit < 2)
		limit = 2;
	for (i = 0; i < config_nopts; i++) {
		if (config_opts[i].ignored)
			continue;
		for (j = 0; j < CONFIG_NAMES &&
		    config_opts[i].names[j] != NULL; j++) {
			if (strchr(config_opts[i].names[j], '*') != NULL)
				continue;
			if (config_normalise(config_opts[i].names[j], pat,
			    sizeof pat, 0) != 0)
				continue;
			d = config_distance(norm, pat);
			if (d < bestd) {
				bestd = d;
				best = config_opts[i].names[j];
			}
		}
	}
	return (bestd <= limit ? best : NULL);
}

/* Parse Spring's boolean spellings. */
static int
config_parse_bool(const char *s, int *out)
{
	static const char *yes[] = { "true", "yes", "on", "1" };
	static const char *no[] = { "false", "no", "off", "0" };
	size_t	i;

	for (i = 0; i < nitems(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return (0);
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return (0);
		}
	}
	return (-1);
}

/* Parse a whole decimal integer; -1 on junk or overflow. */
static int
config_parse_int(const char *s, long long *out)
{
	char	*end;

	if (*s == '\0')
		return (-1);
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	return (0);
}

/* A copy of s without leading and trailing white space. */
static char *
config_trim(const char *s)
{
	size_t	n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return (xstrndup(s, n));
}

/* Every http(s) URL in comma list 'v' is well formed, or -1 with *cause. */
static int
config_check_urls(const char *name, const char *v, char **cause)
{
	char	**urls = NULL;
	size_t	  n, i;
	int	  rc = 0;
	struct config tmp;

	memset(&tmp, 0, sizeof tmp);
	tmp.service_url_default_zone = (char *)v;
	n = config_service_urls(&tmp, &urls);
	for (i = 0; i < n; i++) {
		if (rc == 0 && strncasecmp(urls[i], "http://", 7) != 0 &&
		    strncasecmp(urls[i], "https://", 8) != 0) {
			char	*r = config_redact(urls[i]);

			xasprintf(cause, "%s: '%s' is not an http(s) URL",
			    name, r);
			free(r);
			rc = -1;
		}
		free(urls[i]);
	}
	free(urls);
	return (rc);
}

/* Store 'value' into the field of row 'o'; mapkey is set for maps. */
static int
config_apply(struct config *cf, const struct config_opt *o,
    const char *mapkey, const char *value, char **cause)
{
	const char	*name = o->names[0];
	char		*v = NULL, **sp;
	void		*field = (char *)cf + o->off;
	long long	 ll;
	double		 d;
	char		*end;
	int		 b, rc = -1;

	if (o->type != CONF_MAP)
		v = config_trim(value);
	switch (o->type) {
	case CONF_BOOL:
		if (config_parse_bool(v, &b) != 0) {
			xasprintf(cause, "%s: '%s' is not a boolean "
			    "(true/false/yes/no/on/off/1/0)", name, v);
			goto out;
		}
		*(int *)field = b;
		break;
	case CONF_INT:
	case CONF_INT64:
	case CONF_SIZE:
		if (config_parse_int(v, &ll) != 0) {
			xasprintf(cause, "%s: '%s' is not an integer", name, v);
			goto out;
		}
		if ((double)ll < o->min || (double)ll > o->max) {
			xasprintf(cause, "%s: %s is out of range (%.15g .. "
			    "%.15g)", name, v, o->min, o->max);
			goto out;
		}
		if (o->type == CONF_INT)
			*(int *)field = (int)ll;
		else if (o->type == CONF_INT64)
			*(int64_t *)field = (int64_t)ll;
		else
			*(size_t *)field = (size_t)ll;
		break;
	case CONF_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || errno != 0 || !isfinite(d)) {
			xasprintf(cause, "%s: '%s' is not a number", name, v);
			goto out;
		}
		if (d < o->min || d > o->max) {
			xasprintf(cause, "%s: %s is out of range (%.15g .. "
			    "%.15g)", name, v, o->min, o->max);
			goto out;
		}
		*(double *)field = d;
		break;
	case CONF_URLLIST:
		if (config_check_urls(name, v, cause) != 0)
			goto out;
		/* FALLTHROUGH */
	case CONF_STRING:
	case CONF_SECRET:
		if (strlen(value) > CONFIG_VALUE_MAX) {
			xasprintf(cause, "%s: value too long", name);
			goto out;
		}
		sp = field;
		if (*v == '\0') {
			/* An empty URL list is allowed: "no peers". */
			if (o->def != NULL && o->type == CONF_STRING) {
				xasprintf(cause, "%s: must not be empty", name);
				goto out;
			}
			free(*sp);
			*sp = NULL;
			break;
		}
		free(*sp);
		*sp = xstrdup(v);
		break;
	case CONF_MAP:
		/* Only a key's own entry reaches here: maps have no default. */
		if (HK_BUG(mapkey == NULL)) {
			xasprintf(cause, "%s: a map has no default", name);
			return (-1);
		}
		if (strlen(value) > INSTANCE_MAX_STRING ||
		    strlen(mapkey) > INSTANCE_MAX_NAME) {
			xasprintf(cause, "%s: entry '%s' too long", name,
			    mapkey);
			goto out;
		}
		if (kvlist_get(field, mapkey) == NULL &&
		    ((struct kvlist *)field)->n >= INSTANCE_MAX_METADATA) {
			xasprintf(cause, "%s: more than %d entries", name,
			    INSTANCE_MAX_METADATA);
			goto out;
		}
		kvlist_set(field, mapkey, value);
		break;
	}
	rc = 0;
out:
	free(v);
	return (rc);
}

/*
 * Set one key from any source. 'env' selects environment-name rules
 * ('_' is a separator; unknown names are the caller's business).
 */
int
config_set_key(struct config *cf, const char *key, const char *value,
    int env, char **cause)
{
	const struct config_opt	*o;
	const char		*rest, *sugg, *p;
	char			 norm[CONFIG_KEY_MAX], *mapkey = NULL;
	size_t			 skip, n;
	int			 rc;

	if (value == NULL)
		value = "";
	if (strchr(key, '.') == NULL)
		env = 1;	/* SERVER_PORT given on the command line */
	if (config_normalise(key, norm, sizeof norm, env) != 0) {
		xasprintf(cause, "key too long: '%.40s...'", key);
		return (-1);
	}
	o = config_find(norm, 0, &rest);
	if (o == NULL && env)
		o = config_find(norm, 1, NULL);
	if (o == NULL) {
		if ((sugg = config_suggest(norm)) != NULL)
			xasprintf(cause, "unknown key '%s' (did you mean "
			    "'%s'?)", key, sugg);
		else
			xasprintf(cause, "unknown key '%s'", key);
		return (-1);
	}
	if (o->ignored) {
		if (!config_ignored_seen[o - config_opts]) {
			config_ignored_seen[o - config_opts] = 1;
			log_info("config: %s ignored (%s: does not apply to "
			    "heureka)", key, o->help);
		}
		return (0);
	}
	if (o->type == CONF_MAP) {
		/*
		 * Keep the entry name's case: find where the normalised
		 * tail starts in the original key (normalising drops only
		 * '-', '_' and ']' and turns '[' into '.').
		 */
		if (env)
			mapkey = xstrdup(rest);
		else {
			skip = (size_t)(rest - norm);
			for (p = key, n = 0; *p != '\0' && n < skip; p++)
				if (*p != '-' && *p != '_' && *p != ']')
					n++;
			mapkey = xstrdup(p);
			n = strlen(mapkey);
			if (n > 0 && mapkey[n - 1] == ']')
				mapkey[n - 1] = '\0';
		}
	}
	rc = config_apply(cf, o, mapkey, value, cause);
	free(mapkey);
	return (rc);
}

/* Fill every field with its default from the table. */
void
config_defaults(struct config *cf)
{
	char	*cause = NULL;
	size_t	 i;

	memset(cf, 0, sizeof *cf);
	for (i = 0; i < config_nopts; i++) {
		if (config_opts[i].ignored || config_opts[i].def == NULL)
			continue;
		if (config_apply(cf, &config_opts[i], NULL,
		    config_opts[i].def, &cause) != 0) {
			/* A bad built-in default: the field stays 0. */
			fatalx_server("config table: %s", cause);
			free(cause);
			cause = NULL;
		}
	}
}

/* Free every owned string and the metadata map; the struct stays. */
void
config_free(struct config *cf)
{
	size_t	i;
	char	**sp;

	if (cf == NULL)
		return;
	for (i = 0; i < config_nopts; i++) {
		if (config_opts[i].ignored)
			continue;
		if (config_opts[i].type == CONF_STRING ||
		    config_opts[i].type == CONF_URLLIST ||
		    config_opts[i].type == CONF_SECRET) {
			sp = (char **)((char *)cf + config_opts[i].off);
			if (config_opts[i].type == CONF_SECRET && *sp != NULL)
				explicit_bzero(*sp, strlen(*sp));
			free(*sp);
			*sp = NULL;
		}
	}
	kvlist_clear(&cf->instance_metadata);
}

/* Set one key, in any accepted spelling. */
int
config_set(struct config *cf, const char *key, const char *value,
    char **cause)
{
	return (config_set_key(cf, key, value, 0, cause));
}

/* Canonical (Spring) name of a key, or NULL if unknown or a map entry. */
const char *
config_canonical_name(const char *key)
{
	const struct config_opt	*o;
	char			 norm[CONFIG_KEY_MAX];
	int			 env;

	env = strchr(key, '.') == NULL;
	if (config_normalise(key, norm, sizeof norm, env) != 0)
		return (NULL);
	if ((o = config_find(norm, 0, NULL)) == NULL &&
	    (!env || (o = config_find(norm, 1, NULL)) == NULL))
		return (NULL);
	if (o->type == CONF_MAP)
		return (NULL);
	return (o->names[0]);
}

/*
 * Check the table itself: no spelling may normalise to another row's, and
 * every default must parse. For the unit tests; -1 with *cause.
 */
int
config_table_check(char **cause)
{
	char		 a[CONFIG_KEY_MAX], b[CONFIG_KEY_MAX];
	size_t		 i, j, k, l;
	struct config	 cf;

	for (i = 0; i < config_nopts; i++) {
		for (j = 0; j < CONFIG_NAMES &&
		    config_opts[i].names[j] != NULL; j++) {
			if (config_normalise(config_opts[i].names[j], a,
			    sizeof a, 0) != 0) {
				xasprintf(cause, "%s: too long",
				    config_opts[i].names[j]);
				return (-1);
			}
			for (k = i + 1; k < config_nopts; k++) {
				for (l = 0; l < CONFIG_NAMES &&
				    config_opts[k].names[l] != NULL; l++) {
					config_normalise(
					    config_opts[k].names[l], b,
					    sizeof b, 0);
					if (strcmp(a, b) == 0) {
						xasprintf(cause, "%s and %s "
						    "collide",
						    config_opts[i].names[j],
						    config_opts[k].names[l]);
						return (-1);
					}
				}
			}
		}
	}
	config_defaults(&cf);		/* fatal on a bad default */
	config_free(&cf);
	return (0);
}

/*
 * heureka.dns.domain kept lower case without its trailing dot (what the
 * DNS front compares query names to); -1 unless it is a DNS name.
 */
static int
config_dns_domain(struct config *cf, char **cause)
{
	char	*d = cf->dns_domain;
	size_t	 len;

	if (d == NULL || (len = strlen(d)) == 0 ||
	    (d[len - 1] == '.' && (d[--len] = '\0', len == 0)) ||
	    !dnsmsg_name_ok(d)) {
		xasprintf(cause, "heureka.dns.domain: '%s' is not a domain "
		    "name", d != NULL ? d : "");
		return (-1);
	}
	for (; *d != '\0'; d++)
		if (*d >= 'A' && *d <= 'Z')
			*d += 'a' - 'A';
	return (0);
}

/* Cross-field checks, and the defaults that depend on other keys. */
int
config_validate(struct config *cf, char **cause)
{
	enum log_level		lvl;
	enum log_format		fmt;
	enum instance_status	status;
	enum tls_client_auth	auth;

	if (cf->expected_client_renewal_interval_seconds <= 0)
		cf->expected_client_renewal_interval_seconds =
		    LEASE_DEFAULT_RENEWAL_SECS;	/* Eureka */
	if (cf->instance_non_secure_port == 0)
		cf->instance_non_secure_port = cf->server_port;
	if (cf->dashboard_path == NULL || cf->dashboard_path[0] != '/') {
		xasprintf(cause, "eureka.dashboard.path: '%s' must start "
		    "with '/'", cf->dashboard_path != NULL ?
		    cf->dashboard_path : "");
		return (-1);
	}
	if (log_parse_level(cf->log_level, &lvl) != 0) {
		xasprintf(cause, "logging.level.root: '%s' is not one of "
		    "error, warn, info, debug", cf->log_level);
		return (-1);
	}
	if (log_parse_format(cf->log_format, &fmt) != 0) {
		xasprintf(cause, "heureka.log.format: '%s' is not text or "
		    "json", cf->log_format);
		return (-1);
	}
	if (tls_parse_client_auth(cf->ssl_client_auth, &auth) != 0) {
		xasprintf(cause, "server.ssl.client-auth: '%s' is not none, "
		    "want or need", cf->ssl_client_auth);
		return (-1);
	}
	if (instance_status_parse(cf->instance_initial_status, &status)
	    != 0) {
		xasprintf(cause, "eureka.instance.initial-status: '%s' is not "
		    "UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN",
		    cf->instance_initial_status);
		return (-1);
	}
	/*
	 * A change must outlive a client's fetch period in the delta queue,
	 * or clients miss it and fall back to full fetches (Eureka keeps
	 * 180 s against 30 s); and the cleanup must run inside that window.
	 */
	if (cf->retention_time_in_ms_in_delta_queue <
	    cf->delta_retention_timer_interval_in_ms) {
		xasprintf(cause, "eureka.server.retention-time-in-ms-in-delta-"
		    "queue (%lld) must be at least eureka.server.delta-"
		    "retention-timer-interval-in-ms (%lld)",
		    (long long)cf->retention_time_in_ms_in_delta_queue,
		    (long long)cf->delta_retention_timer_interval_in_ms);
		return (-1);
	}
	/* A lease shorter than its heartbeat period always expires. */
	if (cf->instance_lease_expiration_duration_in_seconds <=
	    cf->instance_lease_renewal_interval_in_seconds) {
		xasprintf(cause, "eureka.instance.lease-expiration-duration-"
		    "in-seconds (%d) must be greater than eureka.instance."
		    "lease-renewal-interval-in-seconds (%d)",
		    cf->instance_lease_expiration_duration_in_seconds,
		    cf->instance_lease_renewal_interval_in_seconds);
		return (-1);
	}
	if (config_dns_domain(cf, cause) != 0)
		return (-1);
	if (cf->my_url != NULL &&
	    config_check_urls("eureka.server.my-url", cf->my_url, cause) != 0)
		return (-1);
	if (config_secret(&cf->security_user_password,
	    &cf->security_user_password_file, "spring.security.user.password",
	    "heureka.security.user.password-file", cause) != 0 ||
	    config_secret(&cf->security_peer_password,
	    &cf->security_peer_password_file, "heureka.security.peer.password",
	    "heureka.security.peer.password-file", cause) != 0)
		return (-1);
	/* Basic auth splits "name:password" at the first ':'. */
	if (strchr(cf->security_user_name, ':') != NULL ||
	    (cf->security_peer_name != NULL &&
	    strchr(cf->security_peer_name, ':') != NULL)) {
		xasprintf(cause, "spring.security.user.name and heureka."
		    "security.peer.name must not contain ':'");
		return (-1);
	}
	if (cf->security_user_password == NULL &&
	    (cf->security_peer_name != NULL ||
	    cf->security_peer_password != NULL)) {
		xasprintf(cause, "heureka.security.peer.* needs spring."
		    "security.user.password (without it authentication is "
		    "off)");
		return (-1);
	}
	if (!cf->instance_non_secure_port_enabled &&
	    !cf->instance_secure_port_enabled && cf->register_with_eureka) {
		xasprintf(cause, "eureka.instance: registering needs "
		    "non-secure-port-enabled or secure-port-enabled");
		return (-1);
	}
	return (0);
}

/* A copy of s with "user:pass@" in every URL replaced by "***@". */
char *
config_redact(const char *s)
{
	char		*out, *o;
	const char	*p, *auth, *at;

	out = o = xmalloc(strlen(s) * 2 + 1);	/* "***" < 2x anything */
	p = s;
	while (*p != '\0') {
		if (strncmp(p, "://", 3) != 0) {
			*o++ = *p++;
			continue;
		}
		memcpy(o, "://", 3);
		o += 3;
		auth = p + 3;
		at = NULL;
		for (p = auth; *p != '\0' && *p != '/' && *p != ',' &&
		    !isspace((unsigned char)*p); p++)
			if (*p == '@')
				at = p;
		if (at != NULL) {
			memcpy(o, "***", 3);
			o += 3;
			p = at;		/* copy from the '@' on */
		} else
			p = auth;
	}
	*o = '\0';
	return (out);
}

/* Write every key as canonical=value (credentials hidden). */
void
config_dump(const struct config *cf, FILE *f)
{
	const struct config_opt	*o;
	const void		*field;
	const struct kvlist	*kv;
	char			*r, prefix[CONFIG_KEY_MAX];
	size_t			 i, j;

	for (i = 0; i < config_nopts; i++) {
		o = &config_opts[i];
		if (o->ignored)
			continue;
		field = (const char *)cf + o->off;
		switch (o->type) {
		case CONF_BOOL:
			fprintf(f, "%s=%s\n", o->names[0],
			    *(const int *)field ? "true" : "false");
			break;
		case CONF_INT:
			fprintf(f, "%s=%d\n", o->names[0],
			    *(const int *)field);
			break;
		case CONF_INT64:
			fprintf(f, "%s=%lld\n", o->names[0],
			    (long long)*(const int64_t *)field);
			break;
		case CONF_SIZE:
			fprintf(f, "%s=%zu\n", o->names[0],
			    *(const size_t *)field);
			break;
		case CONF_DOUBLE:
			fprintf(f, "%s=%.15g\n", o->names[0],
			    *(const double *)field);
			break;
		case CONF_STRING:
		case CONF_URLLIST:
			if (*(char *const *)field == NULL) {
				fprintf(f, "%s=\n", o->names[0]);
				break;
			}
			r = config_redact(*(char *const *)field);
			fprintf(f, "%s=%s\n", o->names[0], r);
			free(r);
			break;
		case CONF_SECRET:
			/* Never the value, not even its length. */
			fprintf(f, "%s=%s\n", o->names[0],
			    *(char *const *)field != NULL ? "<hidden>" : "");
			break;
		case CONF_MAP:
			kv = field;
			/* The name without its final '*'. */
			snprintf(prefix, sizeof prefix, "%.*s",
			    (int)strlen(o->names[0]) - 1, o->names[0]);
			for (j = 0; j < kv->n; j++) {
				r = config_redact(kv->v[j].value);
				fprintf(f, "%s%s=%s\n", prefix, kv->v[j].key,
				    r);
				free(r);
			}
			break;
		}
	}
}

/* List every key with its type, default, bounds, aliases and help. */
void
config_help(FILE *f)
{
	static const char *types[] = { "bool", "int", "int64", "size",
	    "double", "string", "url-list", "map", "secret" };
	const struct config_opt	*o;
	size_t			 i, j;

	for (i = 0; i < config_nopts; i++) {
		o = &config_opts[i];
		if (o->ignored)
			continue;
		fprintf(f, "%s (%s", o->names[0], types[o->type]);
		if (o->def != NULL)
			fprintf(f, ", default %s", o->def);
		if (o->type == CONF_INT || o->type == CONF_INT64 ||
		    o->type == CONF_SIZE || o->type == CONF_DOUBLE)
			fprintf(f, ", %.15g .. %.15g", o->min, o->max);
		fprintf(f, ")\n\t%s\n", o->help);
		for (j = 1; j < CONFIG_NAMES && o->names[j] != NULL; j++)
			fprintf(f, "\talso: %s\n", o->names[j]);
	}
}

/*
 * Split the service URL list: trimmed, empties dropped, each ending in
 * '/'. *urls is a new array of new strings (NULL when the count is 0).
 */
size_t
config_service_urls(const struct config *cf, char ***urls)
{
	const char	*p, *q, *list = cf->service_url_default_zone;
	char		*u, **v = NULL;
	size_t		 n = 0, len;

	*urls = NULL;
	if (list == NULL)
		return (0);
	for (p = list; *p != '\0'; p = *q == ',' ? q + 1 : q) {
		for (q = p; *q != '\0' && *q != ','; q++)
			;
		while (p < q && isspace((unsigned char)*p))
			p++;
		len = (size_t)(q - p);
		while (len > 0 && isspace((unsigned char)p[len - 1]))
			len--;
		if (len == 0)
			continue;
		if (p[len - 1] == '/')
			u = xstrndup(p, len);
		else {
			u = xmalloc(len + 2);
			memcpy(u, p, len);
			u[len] = '/';
			u[len + 1] = '\0';
		}
		v = xreallocarray(v, n + 1, sizeof *v);
		v[n++] = u;
	}
	*urls = v;
	return (n);
}
