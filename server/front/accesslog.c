/*
 * accesslog.c: the access log (heureka.log.access: a file, or "-" for
 * stderr). One line per answered request with what the usual web-server
 * logs carry: when (ISO 8601 UTC, the time the request was taken), who
 * (the client's address), what (method and target), the status, the
 * bytes of the body sent and the time taken. It follows --log-format:
 *
 *   text  2026-12-07T06:27:42.577Z 10.0.0.7 GET /eureka/apps/ 200 5123 412us
 *   json  {"timestamp":"2026-12-07T06:27:42.577Z","logger":"access",
 *          "remote":"10.0.0.7","method":"GET","uri":"/eureka/apps/",
 *          "status":200,"bytes":5123,"durationUs":412}
 *
 * The bytes are the body's, from the Content-Length the front put on the
 * reply when it sent it (0 for HEAD and bodiless answers); a streamed
 * body (the watch) has none and shows "-" (null). The target is the
 * client's, so its control characters are replaced: no line can be
 * forged. No header is logged, so no credential is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http.h"
#include "accesslog.h"
#include "log.h"
#include "xmalloc.h"

static FILE	*accesslog_file;

/* See accesslog.h. */
int
accesslog_open(const char *path)
{
	if (accesslog_file != NULL && accesslog_file != stderr)
		fclose(accesslog_file);
	accesslog_file = NULL;
	if (path == NULL || *path == '\0')
		return (0);
	if (strcmp(path, "-") == 0)
		accesslog_file = stderr;
	else if ((accesslog_file = fopen(path, "a")) == NULL) {
		log_warn("access log %s", path);
		return (-1);
	}
	return (0);
}

/* See accesslog.h. */
int
accesslog_enabled(void)
{
	return (accesslog_file != NULL);
}

/* The body bytes of the reply: -1 when unknown (a stream). */
static long long
accesslog_bytes(struct hreq *req, const char *method, int code)
{
	const char	*cl;
	char		*end;
	long long	 n;

	if (strcmp(method, "HEAD") == 0 || code == 204 || code == 304)
		return (0);
	cl = hhdrs_find(hreq_output_headers(req),
	    "Content-Length");
	if (cl == NULL)
		return (-1);
	n = strtoll(cl, &end, 10);
	return (*end == '\0' && n >= 0 ? n : -1);
}

/* See accesslog.h. */
void
accesslog_write(struct hreq *req, const char *method, int code,
    int64_t us, int64_t start_ms)
{
	struct hconn			*evcon;
	const char			*uri = hreq_uri(req);
	char				*remote = NULL, *scrub;
	char				 ts[40], nb[24];
	ev_uint16_t			 port = 0;
	long long			 bytes;

	if (accesslog_file == NULL)
		return;
	if ((evcon = hreq_conn(req)) != NULL)
		hconn_peer(evcon, &remote, &port);
	if (remote == NULL || *remote == '\0')
		remote = "-";
	/* Targets are client-controlled: keep them on one line. */
	scrub = xstrdup(uri != NULL ? uri : "-");
	for (char *p = scrub; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = '?';
	}
	log_timestamp(start_ms, ts, sizeof ts);
	bytes = accesslog_bytes(req, method, code);
	if (log_get_format() == LOG_FORMAT_JSON) {
		if (bytes >= 0)
			snprintf(nb, sizeof nb, "%lld", bytes);
		else
			snprintf(nb, sizeof nb, "null");
		fprintf(accesslog_file, "{\"timestamp\":\"%s\",\"logger\":"
		    "\"access\",\"remote\":\"", ts);
		log_json_string(accesslog_file, remote);
		fprintf(accesslog_file, "\",\"method\":\"%s\",\"uri\":\"",
		    method);
		log_json_string(accesslog_file, scrub);
		fprintf(accesslog_file, "\",\"status\":%d,\"bytes\":%s,"
		    "\"durationUs\":%lld}\n", code, nb, (long long)us);
	} else {
		if (bytes >= 0)
			snprintf(nb, sizeof nb, "%lld", bytes);
		else
			snprintf(nb, sizeof nb, "-");
		fprintf(accesslog_file, "%s %s %s %s %d %s %lldus\n", ts,
		    remote, method, scrub, code, nb, (long long)us);
	}
	fflush(accesslog_file);
	free(scrub);
}
