/*
 * duration.h: a duration as a user writes one ("30s", "500ms", "2m") in
 * milliseconds (duration.c).
 */
#ifndef DURATION_H
#define DURATION_H

#include <stdint.h>

int64_t		 duration_parse_ms(const char *, int64_t);

#endif /* DURATION_H */
