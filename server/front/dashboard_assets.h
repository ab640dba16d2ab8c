/*
 * dashboard_assets.h: the dashboard's files, embedded at build time by
 * server/embed.sh into dashboard_assets.c (a generated file).
 */
#ifndef DASHBOARD_ASSETS_H
#define DASHBOARD_ASSETS_H

#include <stddef.h>

struct dashboard_asset {
	const char		*name;	/* "index.html" */
	const unsigned char	*data;
	size_t			 len;
};

extern const struct dashboard_asset dashboard_assets[];	/* NULL-ended */

#endif
