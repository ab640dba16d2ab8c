/*
 * config_int.h: the configuration module's private parts: the row type
 * of the key table (config_table.c), its bounds, and the functions
 * config.c and config_load.c share. Included only by config.c and
 * config_*.c (tests/layers enforces it): everything else uses config.h.
 */
#ifndef CONFIG_INT_H
#define CONFIG_INT_H

#include <stddef.h>

#include "config.h"

#ifndef nitems
#define nitems(a)	(sizeof (a) / sizeof (a)[0])
#endif

#define CONFIG_KEY_MAX		256	/* longest key */
#define CONFIG_VALUE_MAX	65536	/* longest single value */
#define CONFIG_FILE_MAX		(4 * 1024 * 1024)
#define CONFIG_YAML_DEPTH	32
#define CONFIG_NAMES		6
#define CONFIG_SECRET_MAX	4096	/* longest password (file) */

enum config_type {
	CONF_BOOL,
	CONF_INT,
	CONF_INT64,
	CONF_SIZE,
	CONF_DOUBLE,
	CONF_STRING,
	CONF_URLLIST,		/* comma-separated http(s) URLs */
	CONF_MAP,		/* prefix.* -> kvlist */
	CONF_SECRET,		/* a string never shown (passwords) */
};

#define NOFIELD		((size_t)-1)	/* an ignored row's field */

struct config_opt {
	const char		*names[CONFIG_NAMES];	/* [0] canonical */
	enum config_type	 type;
	size_t			 off;
	double			 min;
	double			 max;
	const char		*def;
	const char		*help;
	int			 ignored;
};

/* config.c */
int		 config_normalise(const char *, char *, size_t, int);
const struct config_opt *config_find(const char *, int, const char **);
int		 config_set_key(struct config *, const char *, const char *,
		     int, char **);

/* config_load.c */
int		 config_secret(char **, char *const *, const char *,
		     const char *, char **);

/* config_table.c */
extern const struct config_opt config_opts[];
extern const size_t config_nopts;
/* Whether each ignored row was reported already (log once). */
extern unsigned char config_ignored_seen[];

#endif /* CONFIG_INT_H */
