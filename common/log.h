/*
 * log.h: the whole logging API (OpenSMTPD style). Lines go to stderr in a
 * Spring-Boot-like text layout or as one JSON object per line. log_warn
 * appends strerror(errno); log_warnx does not. Anything a client or peer
 * can trigger goes through a struct log_ratelim so it cannot flood the log.
 */
#ifndef LOG_H
#define LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

enum log_format {
	LOG_FORMAT_TEXT = 0,
	LOG_FORMAT_JSON,
};

/* At most `burst` lines per `interval_ms`; the rest are counted and reported. */
struct log_ratelim {
	int64_t		window_start;
	int64_t		interval_ms;
	unsigned	burst;
	unsigned	used;
	unsigned	suppressed;
};
#define LOG_RATELIM_INIT(ms, n)	{ 0, (ms), (n), 0, 0 }

/* A line for the host (the message without time stamp or level). */
typedef void (*log_sink_fn)(enum log_level, const char *msg, void *arg);

void	log_init(const char *, enum log_level, enum log_format);
void	log_set_sink(log_sink_fn, void *);
void	log_set_fatal(void (*)(void));
void	log_set_level(enum log_level);
enum log_level log_get_level(void);
int	log_parse_level(const char *, enum log_level *);
int	log_parse_format(const char *, enum log_format *);
void	log_take_libevent(void);
enum log_format log_get_format(void);
/* "2026-11-30T16:47:04.123Z" for wall_ms into buf (at least 32 bytes). */
void	log_timestamp(int64_t wall_ms, char *buf, size_t len);
/* s as the body of a JSON string (escaped, no quotes) to f. */
void	log_json_string(FILE *f, const char *s);

void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
/*
 * A failure the server stops on but a library host must survive: heurekad
 * logs and exits (as fatalx); libheureka logs at error and returns, and
 * the caller takes its way around. Code libheureka links says this, never
 * fatal() or fatalx() (which its build does not define).
 */
void	fatalx_server(const char *, ...) __attribute__((format(printf, 1, 2)));
int	log_ratelim_allow(struct log_ratelim *);
void	log_warnx_rl(struct log_ratelim *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
