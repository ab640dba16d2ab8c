/*
 * duration.c: the durations of the drain barrier's ?wait= (server) and
 * of heureka drain --timeout (client): "30s", "500ms", "2m", or a bare
 * number of seconds. One parser so the two accept the same words; the
 * Consul API's ?wait= is a Go duration (consul.c has its own, with Go's
 * units) and the configuration's are milliseconds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

/*
 * v in milliseconds: digits with "ms", "s", "m" or nothing (seconds)
 * after them; -1 if it is not one or the time it means is over max
 * milliseconds (the bound is on the time, after the unit: "3m" is over
 * 120 s).
 */
int64_t
duration_parse_ms(const char *v, int64_t max)
{
	char		*end;
	long long	 n;
	int64_t		 unit;

	if (v == NULL || *v < '0' || *v > '9')
		return (-1);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || n < 0)
		return (-1);
	if (strcmp(end, "ms") == 0)
		unit = 1;
	else if (*end == '\0' || strcmp(end, "s") == 0)
		unit = 1000;
	else if (strcmp(end, "m") == 0)
		unit = 60000;
	else
		return (-1);
	if (n > max / unit || n * unit > max)
		return (-1);
	return (n * unit);
}
