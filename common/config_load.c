/*
 * config_load.c: where configuration comes from: files (.yml/.yaml with
 * libyaml events, nested mappings flattened with '.', lists of scalars
 * joined with ',', all documents merged; Java .properties, parsed here),
 * the environment (Spring's relaxed names: '_' becomes '.') and secrets
 * read from files. Each key found goes through config_set_key(), so
 * every source obeys the one table (config_table.c) and its bounds.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "config_int.h"
#include "log.h"
#include "xmalloc.h"

static int	 config_read_file(const char *, char **, size_t *, char **);
static int	 config_load_yaml(struct config *, const char *,
		     const char *, size_t, char **);
static int	 config_load_properties(struct config *, const char *,
		     const char *, size_t, char **);

/* Read a whole (bounded) file into memory, NUL-terminated. */
static int
config_read_file(const char *path, char **data, size_t *len, char **cause)
{
	FILE		*f;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 n;
	int		 rc = -1;

	if ((f = fopen(path, "r")) == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fileno(f), &st) != 0) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_FILE_MAX) {
		xasprintf(cause, "%s: not a regular file of at most %d bytes",
		    path, CONFIG_FILE_MAX);
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	n = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		free(buf);
		goto out;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	rc = 0;
out:
	fclose(f);
	return (rc);
}

/* A YAML nesting level being flattened. */
struct yaml_frame {
	int	is_seq;
	size_t	base;		/* key length where this level's keys go */
	int	have_key;
};

/* Append ".k" (or "k" at the root) to path, bounded. */
static int
config_yaml_push_key(char *path, size_t base, const char *k)
{
	size_t	n = strlen(k);

	if (n >= 2 && k[0] == '[' && k[n - 1] == ']') {	/* "[a.b]" */
		k++;
		n -= 2;
	}
	if (base + 1 + n + 1 > CONFIG_KEY_MAX)
		return (-1);
	if (base > 0)
		path[base++] = '.';
	memcpy(path + base, k, n);
	path[base + n] = '\0';
	return (0);
}

/* Is this scalar YAML's null (a plain ~, null or nothing)? */
static int
config_yaml_is_null(const yaml_event_t *ev)
{
	const char	*v = (const char *)ev->data.scalar.value;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return (0);
	return (*v == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

/*
 * Flatten a YAML stream: mapping keys joined with '.', sequences of
 * scalars joined with ',', every document merged into cf in order.
 */
static int
config_load_yaml(struct config *cf, const char *path, const char *data,
    size_t len, char **cause)
{
	yaml_parser_t		 parser;
	yaml_event_t		 ev;
	struct yaml_frame	 st[CONFIG_YAML_DEPTH];
	char			 key[CONFIG_KEY_MAX];
	char			*seq = NULL, *err = NULL;
	size_t			 seqlen = 0, line;
	int			 depth = 0, done = 0, rc = -1;
	const char		*v;
	struct yaml_frame	*top;

	key[0] = '\0';
	/* It fails only when out of memory. */
	while (!yaml_parser_initialize(&parser))
		xmalloc_recover("yaml_parser_initialize");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			xasprintf(cause, "%s:%zu: %s", path,
			    (size_t)parser.problem_mark.line + 1,
			    parser.problem != NULL ? parser.problem :
			    "YAML syntax error");
			goto out;
		}
		line = ev.start_mark.line + 1;
		top = depth > 0 ? &st[depth - 1] : NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			depth = 0;
			key[0] = '\0';
			break;
		case YAML_ALIAS_EVENT:
			xasprintf(&err, "YAML aliases are not supported");
			break;
		case YAML_MAPPING_START_EVENT:
			if (top != NULL && (top->is_seq || !top->have_key)) {
				xasprintf(&err, "%s: lists of mappings and "
				    "complex keys are not supported",
				    top->is_seq ? key : "key");
				break;
			}
			if (depth == CONFIG_YAML_DEPTH) {
				xasprintf(&err, "nested too deeply");
				break;
			}
			st[depth].is_seq = 0;
			st[depth].have_key = 0;
			st[depth].base = strlen(key);
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (ev.type == YAML_SEQUENCE_END_EVENT &&
			    config_set_key(cf, key, seq != NULL ? seq : "", 0,
			    &err) != 0)
				break;
			free(seq);
			seq = NULL;
			seqlen = 0;
			if (--depth > 0) {
				top = &st[depth - 1];
				key[top->base] = '\0';
				top->have_key = 0;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (top == NULL || top->is_seq || !top->have_key) {
				xasprintf(&err, "a list is only allowed as "
				    "the value of a key");
				break;
			}
			st[depth].is_seq = 1;
			st[depth].have_key = 0;
			st[depth].base = strlen(key);
			depth++;
			break;
		case YAML_SCALAR_EVENT:
			v = (const char *)ev.data.scalar.value;
			if (top == NULL) {
				if (!config_yaml_is_null(&ev))
					xasprintf(&err, "expected a mapping "
					    "of keys to values");
				break;
			}
			if (top->is_seq) {
				if (config_yaml_is_null(&ev))
					break;
				if (seqlen + strlen(v) + 2 > CONFIG_VALUE_MAX) {
					xasprintf(&err, "%s: list too long",
					    key);
					break;
				}
				seq = xrealloc(seq, seqlen + strlen(v) + 2);
				if (seqlen > 0)
					seq[seqlen++] = ',';
				memcpy(seq + seqlen, v, strlen(v) + 1);
				seqlen += strlen(v);
				break;
			}
			if (!top->have_key) {
				if (config_yaml_push_key(key, top->base, v)
				    != 0) {
					xasprintf(&err, "key too long");
					break;
				}
				top->have_key = 1;
				break;
			}
			if (!config_yaml_is_null(&ev) &&
			    config_set_key(cf, key, v, 0, &err) != 0)
				break;
			key[top->base] = '\0';
			top->have_key = 0;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (err != NULL) {
			xasprintf(cause, "%s:%zu: %s", path, line, err);
			goto out;
		}
	}
	rc = 0;
out:
	free(err);
	free(seq);
	yaml_parser_delete(&parser);
	return (rc);
}

/* Encode code point c as UTF-8 at p; returns the bytes written. */
static size_t
config_utf8(char *p, unsigned c)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return (1);
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | (c >> 6));
		p[1] = (char)(0x80 | (c & 0x3f));
		return (2);
	}
	p[0] = (char)(0xe0 | (c >> 12));
	p[1] = (char)(0x80 | ((c >> 6) & 0x3f));
	p[2] = (char)(0x80 | (c & 0x3f));
	return (3);
}

/*
 * Unescape one .properties token from s (stopping, if 'key', at an
 * unescaped '=', ':' or white space) into out; returns where it stopped.
 * The output is never longer than the input.
 */
static const char *
config_prop_token(const char *s, char *out, int key, int *bad)
{
	unsigned	 c;
	int		 i;

	while (*s != '\0') {
		if (key && (*s == '=' || *s == ':' || *s == ' ' ||
		    *s == '\t' || *s == '\f'))
			break;
		if (*s != '\\') {
			*out++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '\0':
			continue;
		case 't':
			*out++ = '\t';
			break;
		case 'n':
			*out++ = '\n';
			break;
		case 'r':
			*out++ = '\r';
			break;
		case 'f':
			*out++ = '\f';
			break;
		case 'u':
			c = 0;
			for (i = 1; i <= 4; i++) {
				if (!isxdigit((unsigned char)s[i])) {
					*bad = 1;
					*out = '\0';
					return (s);
				}
				c = c * 16 + (unsigned)(isdigit(
				    (unsigned char)s[i]) ? s[i] - '0' :
				    tolower((unsigned char)s[i]) - 'a' + 10);
			}
			out += config_utf8(out, c);	/* <= 3 of 6 bytes */
			s += 4;
			break;
		default:
			*out++ = *s;
			break;
		}
		s++;
	}
	*out = '\0';
	return (s);
}

/*
 * Java .properties: "key=value", "key: value" or "key value"; '#' and '!'
 * comment lines; a line ending in an odd number of '\' continues on the
 * next one (its leading blanks dropped); keys and values trimmed.
 */
static int
config_load_properties(struct config *cf, const char *path, const char *data,
    size_t len, char **cause)
{
	const char	*p = data, *end = data + len, *eol, *s;
	char		*logical, *k, *v, *err = NULL;
	size_t		 ll, n, bs, line = 1, start, nextline;
	int		 bad, rc = -1, more;

	logical = xmalloc(len + 1);
	k = xmalloc(len + 1);
	v = xmalloc(len + 1);
	while (p < end) {
		start = line;
		ll = 0;
		more = 1;
		/* Leading blanks of the first physical line. */
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\f'))
			p++;
		if (p < end && (*p == '#' || *p == '!'))
			more = 0;	/* a comment never continues */
		for (;;) {
			for (eol = p; eol < end && *eol != '\n' &&
			    *eol != '\r'; eol++)
				;
			n = (size_t)(eol - p);
			nextline = 0;
			if (eol < end) {
				nextline = 1;
				if (*eol == '\r' && eol + 1 < end &&
				    eol[1] == '\n')
					eol++;
				eol++;
			}
			for (bs = 0; bs < n && p[n - 1 - bs] == '\\'; bs++)
				;
			if (more) {
				memcpy(logical + ll, p, n);
				ll += n;
			}
			p = eol;
			line += nextline;
			if (!more || bs % 2 == 0)
				break;
			ll--;			/* drop the '\' */
			if (p >= end)
				break;
			while (p < end && (*p == ' ' || *p == '\t' ||
			    *p == '\f'))
				p++;
		}
		if (!more)
			continue;
		logical[ll] = '\0';
		if (ll == 0)
			continue;
		bad = 0;
		s = config_prop_token(logical, k, 1, &bad);
		while (*s == ' ' || *s == '\t' || *s == '\f')
			s++;
		if (*s == '=' || *s == ':')
			s++;
		while (*s == ' ' || *s == '\t' || *s == '\f')
			s++;
		if (!bad)
			config_prop_token(s, v, 0, &bad);
		if (bad) {
			xasprintf(cause, "%s:%zu: bad \\u escape", path,
			    start);
			goto out;
		}
		n = strlen(v);
		while (n > 0 && isspace((unsigned char)v[n - 1]))
			v[--n] = '\0';
		if (config_set_key(cf, k, v, 0, &err) != 0) {
			xasprintf(cause, "%s:%zu: %s", path, start, err);
			goto out;
		}
	}
	rc = 0;
out:
	free(err);
	free(logical);
	free(k);
	free(v);
	return (rc);
}

/* Load a .yml/.yaml or .properties file, chosen by its suffix. */
int
config_load_file(struct config *cf, const char *path, char **cause)
{
	const char	*dot = strrchr(path, '.');
	char		*data = NULL;
	size_t		 len;
	int		 rc = -1, yaml;

	if (dot != NULL && (strcasecmp(dot, ".yml") == 0 ||
	    strcasecmp(dot, ".yaml") == 0))
		yaml = 1;
	else if (dot != NULL && strcasecmp(dot, ".properties") == 0)
		yaml = 0;
	else {
		xasprintf(cause, "%s: unknown file type (want .yml, .yaml or "
		    ".properties)", path);
		return (-1);
	}
	if (config_read_file(path, &data, &len, cause) != 0)
		return (-1);
	if (yaml)
		rc = config_load_yaml(cf, path, data, len, cause);
	else
		rc = config_load_properties(cf, path, data, len, cause);
	free(data);
	return (rc);
}

/* Load .yml (yaml set) or .properties text from memory; name is for messages. */
int
config_load_buffer(struct config *cf, const char *name, int yaml,
    const char *data, size_t len, char **cause)
{
	if (yaml)
		return (config_load_yaml(cf, name, data, len, cause));
	return (config_load_properties(cf, name, data, len, cause));
}

/*
 * Apply environment variables with Spring's relaxed binding. Only names
 * under our prefixes are considered; an unknown one is logged and skipped
 * (the environment is not ours to reject), a bad value is an error.
 */
int
config_load_env(struct config *cf, char **envp, char **cause)
{
	static const char *prefixes[] = {
		"EUREKA_", "SERVER_", "SPRING_APPLICATION_NAME", "HEUREKA_",
		"LOGGING_LEVEL_ROOT", "SPRING_SECURITY_USER_"
	};
	const char		*eq, *rest;
	char			*name, *err = NULL, norm[CONFIG_KEY_MAX];
	size_t			 i;
	int			 rc = 0;

	for (; envp != NULL && *envp != NULL; envp++) {
		if ((eq = strchr(*envp, '=')) == NULL)
			continue;
		for (i = 0; i < nitems(prefixes); i++)
			if (strncmp(*envp, prefixes[i],
			    strlen(prefixes[i])) == 0)
				break;
		if (i == nitems(prefixes))
			continue;
		name = xstrndup(*envp, (size_t)(eq - *envp));
		if (config_normalise(name, norm, sizeof norm, 1) != 0 ||
		    (config_find(norm, 0, &rest) == NULL &&
		    config_find(norm, 1, NULL) == NULL)) {
			log_warnx("config: environment variable %s matches "
			    "no key, ignored", name);
			free(name);
			continue;
		}
		if (config_set_key(cf, name, eq + 1, 1, &err) != 0) {
			xasprintf(cause, "environment %s: %s", name, err);
			free(err);
			free(name);
			rc = -1;
			break;
		}
		free(name);
	}
	return (rc);
}

/*
 * Resolve one password: from *file (which wins only when *pw is unset, and
 * both set is an error) into *pw. The file holds the password, one final
 * newline ignored; it is read here, before the loop starts, and again on
 * SIGHUP. Errors never quote the file's content.
 */
int
config_secret(char **pw, char *const *file, const char *pwkey,
    const char *filekey, char **cause)
{
	char	*data = NULL;
	size_t	 len;

	if (*file == NULL)
		return (0);
	if (*pw != NULL) {
		xasprintf(cause, "%s and %s are both set: use one", pwkey,
		    filekey);
		return (-1);
	}
	if (config_read_file(*file, &data, &len, cause) != 0)
		return (-1);
	if (len > 0 && data[len - 1] == '\n')
		data[--len] = '\0';
	if (len > 0 && data[len - 1] == '\r')
		data[--len] = '\0';
	if (len == 0 || len > CONFIG_SECRET_MAX || strlen(data) != len) {
		xasprintf(cause, "%s: %s must hold one password of 1 to %d "
		    "bytes", filekey, *file, CONFIG_SECRET_MAX);
		explicit_bzero(data, len);
		free(data);
		return (-1);
	}
	*pw = data;
	return (0);
}
