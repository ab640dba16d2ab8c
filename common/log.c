/*
 * log.c: line-oriented logging to stderr. The text layout mimics Spring
 * Boot's ("2026-11-30T16:47:04.123Z  INFO 1234 --- [heurekad] message") so
 * operators' log tooling copes; --log-format=json gives one object per line.
 * libevent's own messages are routed here too. A program that embeds
 * the code (libheureka's host) can take the lines itself (log_set_sink).
 * fatal() and fatalx() exist in the server's build only: libheureka's
 * (HK_LIBRARY) has no path that ends the host (tests/abi/lib-symbols.sh
 * checks the library imports no exit), and code shared with it says
 * fatalx_server() and goes on after it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"

static const char	*log_name = "heureka";
static enum log_level	 log_level = LOG_LEVEL_INFO;
static enum log_format	 log_format = LOG_FORMAT_TEXT;

static const char *log_level_names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

/* Where lines go instead of stderr (libheureka's host), and its argument. */
static log_sink_fn	 log_sink;
static void		*log_sink_arg;
#ifndef HK_LIBRARY
/* Called instead of exit(1) by fatal(), when set. */
static void		(*log_fatal_fn)(void);
#endif

static void	log_vwrite(enum log_level, const char *, va_list, int);

/* Set the program name, level and format. */
void
log_init(const char *name, enum log_level level, enum log_format format)
{
	log_name = name;
	log_level = level;
	log_format = format;
}

/*
 * Send every line (the message only, without time stamp or level) to sink
 * instead of stderr; NULL goes back to stderr.
 */
void
log_set_sink(log_sink_fn sink, void *arg)
{
	log_sink = sink;
	log_sink_arg = arg;
}

#ifndef HK_LIBRARY
/* What fatal() and fatalx() do instead of exit(1); must not return. */
void
log_set_fatal(void (*fn)(void))
{
	log_fatal_fn = fn;
}

/* Leave after a fatal line: the hook, else exit(1). */
static void __attribute__((noreturn))
log_fatal_exit(void)
{
	if (log_fatal_fn != NULL)
		log_fatal_fn();
	exit(1);
}
#endif

/* Change the level, for example on SIGHUP. */
void
log_set_level(enum log_level level)
{
	log_level = level;
}

/* Current level, so callers can skip building expensive debug text. */
enum log_level
log_get_level(void)
{
	return (log_level);
}

/* Parse "error", "warn", "info" or "debug". */
int
log_parse_level(const char *s, enum log_level *out)
{
	size_t	i;

	for (i = 0; i < sizeof log_level_names / sizeof log_level_names[0];
	    i++) {
		if (strcasecmp(s, log_level_names[i]) == 0) {
			*out = (enum log_level)i;
			return (0);
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		*out = LOG_LEVEL_WARN;
		return (0);
	}
	return (-1);
}

/* Parse "text" or "json". */
int
log_parse_format(const char *s, enum log_format *out)
{
	if (strcasecmp(s, "text") == 0)
		*out = LOG_FORMAT_TEXT;
	else if (strcasecmp(s, "json") == 0)
		*out = LOG_FORMAT_JSON;
	else
		return (-1);
	return (0);
}

/* The current format (the access log follows it). */
enum log_format
log_get_format(void)
{
	return (log_format);
}

/* ISO 8601 UTC with milliseconds, as every log line starts. */
void
log_timestamp(int64_t wall_ms, char *buf, size_t len)
{
	time_t		secs = (time_t)(wall_ms / 1000);
	struct tm	tm;
	char		ts[32];

	gmtime_r(&secs, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", ts, (int)(wall_ms % 1000));
}

/* Write a string as a JSON string body, escaping what JSON requires. */
void
log_json_string(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/* Format and write one line; errno_too appends strerror(saved errno). */
static void
log_vwrite(enum log_level level, const char *fmt, va_list ap, int errno_too)
{
	char		 msg[2048], ts[64];
	int		 saved = errno;
	int64_t		 now = clock_wall_ms();
	size_t		 len;
	unsigned char	*p;

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	len = strlen(msg);
	if (errno_too && len < sizeof msg - 1)
		snprintf(msg + len, sizeof msg - len, ": %s", strerror(saved));
	/* A client-supplied value must not be able to forge log lines. */
	for (p = (unsigned char *)msg; *p != '\0'; p++) {
		if (*p < 0x20)
			*p = ' ';
	}
	if (log_sink != NULL) {
		log_sink(level, msg, log_sink_arg);
		errno = saved;
		return;
	}
	log_timestamp(now, ts, sizeof ts);
	if (log_format == LOG_FORMAT_JSON) {
		fprintf(stderr, "{\"timestamp\":\"%s\",\"level\":\"%s\","
		    "\"pid\":%ld,\"logger\":\"%s\",\"message\":\"", ts,
		    log_level_names[level], (long)getpid(), log_name);
		log_json_string(stderr, msg);
		fputs("\"}\n", stderr);
	} else {
		fprintf(stderr, "%s %5s %ld --- [%s] %s\n", ts,
		    log_level_names[level], (long)getpid(), log_name, msg);
	}
	fflush(stderr);
	errno = saved;
}

/* Warning with strerror(errno) appended. */
void
log_warn(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, fmt, ap, 1);
	va_end(ap);
}

/* Warning without errno. */
void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, fmt, ap, 0);
	va_end(ap);
}

/* Error that is not fatal. */
void
log_error(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, fmt, ap, 0);
	va_end(ap);
}

/* Informational line: normal operation logs nothing louder than this. */
void
log_info(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_INFO, fmt, ap, 0);
	va_end(ap);
}

/* Debug line; callers start the text with __func__. */
void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_DEBUG, fmt, ap, 0);
	va_end(ap);
}

#ifndef HK_LIBRARY
/* Log with strerror(errno) and exit. */
void
fatal(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, fmt, ap, 1);
	va_end(ap);
	log_fatal_exit();
}

/* Log and exit. */
void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, fmt, ap, 0);
	va_end(ap);
	log_fatal_exit();
}

#endif

/*
 * Log at error; the server then exits, as fatalx, while libheureka
 * returns and its caller goes on without.
 */
void
fatalx_server(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, fmt, ap, 0);
	va_end(ap);
#ifndef HK_LIBRARY
	log_fatal_exit();
#endif
}

/* True if another line fits in the current window; counts the rest. */
int
log_ratelim_allow(struct log_ratelim *rl)
{
	int64_t	now = clock_mono_ms();

	if (now - rl->window_start >= rl->interval_ms) {
		if (rl->suppressed > 0)
			log_warnx("%u similar messages suppressed",
			    rl->suppressed);
		rl->window_start = now;
		rl->used = 0;
		rl->suppressed = 0;
	}
	if (rl->used < rl->burst) {
		rl->used++;
		return (1);
	}
	rl->suppressed++;
	return (0);
}

/* Rate-limited warning for things clients and peers can trigger. */
void
log_warnx_rl(struct log_ratelim *rl, const char *fmt, ...)
{
	va_list	ap;

	if (!log_ratelim_allow(rl))
		return;
	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, fmt, ap, 0);
	va_end(ap);
}

/*
 * libevent's internal messages, mapped onto our levels. Clients can
 * trigger them (an accept() failing with EMFILE is retried, and logged,
 * thousands of times a second), so all but debug go through a rate limit.
 */
static void
log_libevent_cb(int severity, const char *msg)
{
	static struct log_ratelim	rl = LOG_RATELIM_INIT(10000, 10);

	switch (severity) {
	case EVENT_LOG_DEBUG:
		log_debug("libevent: %s", msg);
		break;
	case EVENT_LOG_MSG:
		if (log_ratelim_allow(&rl))
			log_info("libevent: %s", msg);
		break;
	default:
		log_warnx_rl(&rl, "libevent: %s", msg);
		break;
	}
}

/* Route libevent's logging through ours. */
void
log_take_libevent(void)
{
	event_set_log_callback(log_libevent_cb);
}
