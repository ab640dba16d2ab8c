/*
 * accesslog.h: heureka.log.access, one line per answered request
 * (accesslog.c).
 */
#ifndef ACCESSLOG_H
#define ACCESSLOG_H

#include <stdint.h>

struct hreq;

/*
 * Open the access log at path ("-": stderr; NULL or "": off), closing the
 * one open before; SIGHUP calls it again, so a rotated file is reopened.
 * -1 (logged) when the file cannot be opened: the log is then off.
 */
int	accesslog_open(const char *path);
/* 1 when a log is open. */
int	accesslog_enabled(void);
/*
 * The line for req, answered code after us microseconds; start_ms is the
 * wall-clock time the request was taken.
 */
void	accesslog_write(struct hreq *req, const char *method,
	    int code, int64_t us, int64_t start_ms);

#endif
