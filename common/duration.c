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
 * after them; -1 if it is not one or the number as written (before its
 * unit) is over max.
 */
int64_t
duration_parse_ms(const char *v, int64_t max)
{
	char		*end;
	long long	 n;

	if (v == NULL || *v < '0' || *v > '9')
		return (-1);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || n < 0 || n > max)
		return (-1);
	if (strcmp(end, "ms") == 0)
		return (n);
	if (*end == '\0' || strcmp(end, "s") == 0)
		return (n * 1000);
	if (strcmp(end, "m") == 0)
		return (n * 60000);
	return (-1);
}
