/*
 * fuzz_http.c: libFuzzer target for the front's request head parser
 * (http_parse_head, server/front/http_parse.c), its target split and
 * percent-decoding (http_target_split, http_decode), the one parser of
 * every incoming request (issue 27).
 *
 * The input is a head, parsed in place in a copy sized to it (so ASan
 * sees any read or write past it). On success the invariants a handler
 * relies on are checked with code written here, not the parser's: the
 * method and target are NUL-terminated inside the head, every header
 * name is a token and every value is free of control characters other
 * than a tab and does not start with a space, a framing header was never
 * both Content-Length and chunked, and the number of headers is bounded
 * by the head's lines. Every input's target (or the whole input, when
 * there is none) goes through the split and both decodings, whose
 * outputs must fit what http.h promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "http.h"
#include "log.h"
#include "xmalloc.h"

/* An RFC 9110 token character (the oracle's own table). */
static int
oracle_tchar(unsigned char c)
{
	return ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	    (c >= 'a' && c <= 'z') || (c != 0 && strchr("!#$%&'*+-.^_`|~",
	    c) != NULL));
}

/* Whether p lies in [lo, hi). */
static int
inside(const char *p, const char *lo, const char *hi)
{
	return (p >= lo && p < hi);
}

/* The split and the decodings of n bytes at t. */
static void
check_target(const char *t, size_t n)
{
	const char	*q;
	char		*path, *dec;
	size_t		 qlen, dn;

	path = xmalloc(n + 1);
	http_target_split(t, n, path, &q, &qlen);
	if (strlen(path) > n)
		fatalx("http_target_split: path longer than the target");
	if (q != NULL && (!inside(q, t, t + n + 1) || q + qlen > t + n))
		fatalx("http_target_split: query outside the target");
	dec = xmalloc(n + 1);
	if ((dn = http_decode(t, n, 1, dec)) > n || dec[dn] != '\0')
		fatalx("http_decode: %zu bytes from %zu", dn, n);
	if ((dn = http_decode(path, strlen(path), 0, dec)) > strlen(path))
		fatalx("http_decode: longer than its input");
	free(dec);
	free(path);
}

/* Check a head that parsed. */
static void
check_head(const struct hhead *h, const char *p, size_t len, size_t lines)
{
	const char	*end = p + len, *v;
	size_t		 i, j;

	if (h->method_name == NULL || !inside(h->method_name, p, end) ||
	    h->target == NULL || !inside(h->target, p, end) ||
	    h->target + h->target_len >= end || h->target[h->target_len] != '\0')
		fatalx("http_parse_head: method or target outside the head");
	if (h->minor != 0 && h->minor != 1)
		fatalx("http_parse_head: HTTP/1.%d", h->minor);
	if (h->chunked && h->content_length >= 0)
		fatalx("http_parse_head: both framings");
	if (h->nhdrs + 1 > lines)
		fatalx("http_parse_head: %zu headers in %zu lines", h->nhdrs,
		    lines);
	for (i = 0; i < h->nhdrs; i++) {
		if (!inside(h->hdrs[i].name, p, end) ||
		    !inside(h->hdrs[i].value, p, end) ||
		    h->hdrs[i].name_len == 0 ||
		    strlen(h->hdrs[i].name) != h->hdrs[i].name_len)
			fatalx("http_parse_head: header %zu misplaced", i);
		for (j = 0; j < h->hdrs[i].name_len; j++)
			if (!oracle_tchar((unsigned char)h->hdrs[i].name[j]))
				fatalx("http_parse_head: name not a token");
		v = h->hdrs[i].value;
		if (*v == ' ')
			fatalx("http_parse_head: value not trimmed");
		for (; *v != '\0'; v++)
			if (((unsigned char)*v < 0x20 && *v != '\t') ||
			    *v == 0x7f)
				fatalx("http_parse_head: control character");
	}
}

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct hhead	 h;
	struct hhdr	*hdrs;
	const char	*reason = NULL;
	char		*head;
	size_t		 lines;
	int		 rc;

	bug_set_fatal(1);
	head = xmalloc(len + 1);
	memcpy(head, data, len);
	lines = http_head_lines(head, len);
	hdrs = xcalloc(lines + 1, sizeof *hdrs);
	rc = http_parse_head(head, len, &h, hdrs, lines, &reason);
	if (rc != 0 && (reason == NULL || *reason == '\0' || rc < 400 ||
	    rc > 599))
		fatalx("http_parse_head: %d with no reason", rc);
	if (rc == 0) {
		check_head(&h, head, len, lines);
		check_target(h.target, h.target_len);
	} else
		check_target((const char *)data, len);
	free(hdrs);
	free(head);
	return (0);
}
