/*
 * check_json_lex.c: json_lex.c against yajl, the parser it replaced on
 * the request path. Both run over a corpus (the JSON fixtures of
 * tests/data and hand-written edge cases: escapes, UTF-16 pairs, numbers,
 * literals, nesting, whitespace, trailing bytes) and over mutations of it
 * (every truncation, and bytes replaced, inserted and deleted by a fixed
 * pseudo-random sequence); each run records its events as text. Both must
 * accept or both refuse, and when they accept their events must be the
 * same. yajl is configured as json_dec.c configured it (strings' UTF-8
 * not checked), taking one value; json_lex accepts when it parsed a value
 * and only whitespace follows it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <yajl/yajl_parse.h>

#include "buf.h"
#include "json_lex.h"
#include "testutil.h"

/*
 * One run's record: its events as text (a letter, a value's length and
 * bytes), and for yajl where its first value ended (yajl takes a token
 * begun after the root and never ended, such as 4", for no error at all;
 * the decoder refused those with a check of its own, as it now refuses
 * whatever follows the root).
 */
struct rec {
	struct buf	 b;
	yajl_handle	 h;
	int		 depth;
	int		 done;
	int		 completing;	/* in yajl_complete_parse */
	size_t		 root_end;
};

/* After an event that may have ended the root value. */
static int
ev_after(struct rec *r)
{
	if (r->depth == 0 && !r->done) {
		r->done = 1;
		/* yajl_complete_parse parses a buffer of its own. */
		if (r->h != NULL)
			r->root_end = r->completing ? SIZE_MAX :
			    yajl_get_bytes_consumed(r->h);
	}
	return (1);
}

static int
ev_null(void *a)
{
	buf_adds(&((struct rec *)a)->b, "n;");
	return (ev_after(a));
}

static int
ev_bool(void *a, int b)
{
	buf_adds(&((struct rec *)a)->b, b ? "t;" : "f;");
	return (ev_after(a));
}

static int
ev_text(void *a, char c, const void *s, size_t len)
{
	struct buf	*b = &((struct rec *)a)->b;

	buf_addc(b, c);
	buf_add_i64(b, (int64_t)len);
	buf_addc(b, ':');
	buf_add(b, s, len);
	buf_addc(b, ';');
	return (c == 'K' ? 1 : ev_after(a));
}

static int
ev_num(void *a, const char *s, size_t len)
{
	return (ev_text(a, 'N', s, len));
}

static int
ev_str(void *a, const unsigned char *s, size_t len)
{
	return (ev_text(a, 'S', s, len));
}

static int
ev_key(void *a, const unsigned char *s, size_t len)
{
	return (ev_text(a, 'K', s, len));
}

static int
ev_open(void *a, const char *what)
{
	buf_adds(&((struct rec *)a)->b, what);
	((struct rec *)a)->depth++;
	return (1);
}

static int
ev_close(void *a, const char *what)
{
	buf_adds(&((struct rec *)a)->b, what);
	((struct rec *)a)->depth--;
	return (ev_after(a));
}

static int
ev_sm(void *a)
{
	return (ev_open(a, "{"));
}

static int
ev_em(void *a)
{
	return (ev_close(a, "}"));
}

static int
ev_sa(void *a)
{
	return (ev_open(a, "["));
}

static int
ev_ea(void *a)
{
	return (ev_close(a, "]"));
}

/* Whether s holds only yajl's whitespace from i on. */
static int
only_space(const char *s, size_t i, size_t len)
{
	for (; i != SIZE_MAX && i < len; i++)
		if (s[i] == '\0' || strchr(" \t\n\r\v\f", s[i]) == NULL)
			return (0);
	return (1);
}

static const yajl_callbacks ycb = {
	ev_null, ev_bool, NULL, NULL, ev_num, ev_str, ev_sm, ev_key, ev_em,
	ev_sa, ev_ea,
};

static const struct json_lex_cb lcb = {
	ev_null, ev_bool, ev_num, ev_str, ev_sm, ev_key, ev_em, ev_sa, ev_ea,
};

static struct json_lex	lx;
static size_t		ncases, naccepted;

/* yajl's verdict on s and its events in r. */
static int
run_yajl(const char *s, size_t len, struct rec *r)
{
	yajl_status	st;

	r->h = yajl_alloc(&ycb, NULL, r);
	yajl_config(r->h, yajl_dont_validate_strings, 1);
	st = yajl_parse(r->h, (const unsigned char *)s, len);
	r->completing = 1;
	if (st == yajl_status_ok)
		st = yajl_complete_parse(r->h);
	yajl_free(r->h);
	r->h = NULL;
	return (st == yajl_status_ok && r->done &&
	    only_space(s, r->root_end, len));
}

/* json_lex's verdict on s (one value, then only whitespace). */
static int
run_lex(const char *s, size_t len, struct rec *r)
{
	if (json_lex_parse(&lx, &lcb, r, s, len) != 0 || r->b.len == 0)
		return (0);
	return (only_space(s, lx.root_end, len));
}

/* The code unit of a \uXXXX escape at s[i], or -1. */
static long
esc_unit(const char *s, size_t i, size_t len)
{
	char	hex[5], *end;
	long	v;

	if (i + 6 > len || s[i] != '\\' || s[i + 1] != 'u')
		return (-1);
	memcpy(hex, s + i + 2, 4);
	hex[4] = '\0';
	v = strtol(hex, &end, 16);
	return (*end == '\0' && strspn(hex, "0123456789abcdefABCDEF") == 4 ?
	    v : -1);
}

/*
 * Whether s has an unpaired surrogate escape. The decoder refuses those
 * before either parser runs (json_surrogates_paired), and each turns one
 * into something else (yajl encodes a lone low one and folds a high one
 * with any \u after it; json_lex writes '?'): for these only the verdicts
 * are compared. (A backslash before a backslash is skipped with it.)
 */
static int
has_lone_surrogate(const char *s, size_t len)
{
	size_t	i;
	long	u, lo;

	for (i = 0; i < len; i++) {
		if (s[i] != '\\')
			continue;
		if ((u = esc_unit(s, i, len)) < 0) {
			i++;
			continue;
		}
		if (u >= 0xdc00 && u <= 0xdfff)
			return (1);
		if (u >= 0xd800 && u <= 0xdbff) {
			lo = esc_unit(s, i + 6, len);
			if (lo < 0xdc00 || lo > 0xdfff)
				return (1);
			i += 6;
		}
		i += 5;
	}
	return (0);
}

/* Both parsers on one input: the same verdict, the same events. */
static void
same(const char *s, size_t len)
{
	struct rec	ry, rl;
	int		ay, al;

	memset(&ry, 0, sizeof ry);
	memset(&rl, 0, sizeof rl);
	buf_init(&ry.b, 0);
	buf_init(&rl.b, 0);
	ay = run_yajl(s, len, &ry);
	al = run_lex(s, len, &rl);
	ck_assert_msg(ay == al, "yajl %s, json_lex %s (%s): %.*s",
	    ay ? "accepts" : "refuses", al ? "accepts" : "refuses",
	    lx.err != NULL ? lx.err : "-", (int)(len > 200 ? 200 : len), s);
	if (ay && !has_lone_surrogate(s, len)) {
		ck_assert_msg(ry.b.len == rl.b.len &&
		    memcmp(ry.b.data, rl.b.data, ry.b.len) == 0,
		    "events differ on %.*s\nyajl:     %s\njson_lex: %s",
		    (int)(len > 200 ? 200 : len), s, ry.b.data, rl.b.data);
		naccepted++;
	}
	ncases++;
	buf_free(&ry.b);
	buf_free(&rl.b);
}

static const char *const corpus[] = {
	"{}", "[]", "{\"a\":1}", "[1,2,3]", "  {\"a\" : [ true , false , null ] }  ",
	"\"str\"", "42", "-0", "0.5", "-1.25e+10", "1E5", "1e-3", "0e0",
	"01", "-", "1.", "1e", "1e+", ".5", "+1", "--1", "1.5.2",
	"true", "false", "null", "tru", "nul", "fals", "trUe", "nulll",
	"{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
	"[\"\\u0041\\u00e9\\u20ac\\ud83d\\ude00\"]",
	"[\"\\u0000\"]", "[\"a\\u0000b\"]", "[\"\\uD834\\uDD1E x\"]",
	"[\"\\u12\"]", "[\"\\u12g4\"]", "[\"\\x\"]", "[\"\\\"]",
	"[\"tab\there\"]", "[\"nl\nhere\"]", "[\"\x01\"]", "[\"\x7f\"]",
	"[\"\xc3\xa9\xff\xfe\"]",
	"{\"a\":1,}", "[1,]", "[,1]", "{,}", "{\"a\"}", "{\"a\":}", "{1:2}",
	"{\"a\" 1}", "{\"a\":1 \"b\":2}", "[1 2]", "{\"a\":1}}", "[1]]",
	"{\"a\":1}{}", "{\"a\":1} 1", "{\"a\":1} x", "{\"a\":1} /",
	"{\"a\":1}\v\f", "\v{\"a\":\f1\v}\f", "/* c */ {}", "{} // c",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	"{\"a\":{\"b\":{\"c\":[{\"d\":[1,{\"e\":null}]}]}}}",
	"{\"instance\":{\"hostName\":\"h\",\"port\":{\"$\":8080,\"@enabled\":"
	    "\"true\"},\"metadata\":{\"k\":\"v\",\"@class\":\"x\"}}}",
	"", " ", "\n\t ", "\"", "\"abc", "[\"a", "{\"a", "{\"a\":", "[1,",
	"{\"\":\"\"}", "[\"\\/\"]", "[1e400, -1e-400, 123456789012345678901234567890]",
};

static const char	mut_bytes[] = "{}[]:,\"\\/ u0123456789eE.+-tfnlrx\t\n"
			    "\x01\x7f\xc3\xa9";

/* A fixed pseudo-random sequence (xorshift), so failures repeat. */
static uint32_t
rnd(uint32_t *st)
{
	uint32_t	x = *st;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return (*st = x);
}

/* Every truncation of s, and rounds of random one-byte edits. */
static void
mutate(const char *s, size_t len, int rounds)
{
	char		*m = malloc(len + 2);
	size_t		 i, at;
	uint32_t	 st = 2463534242U ^ (uint32_t)len;
	int		 r;

	for (i = 0; i <= len; i++)
		same(s, i);
	for (r = 0; r < rounds && len > 0; r++) {
		at = rnd(&st) % len;
		memcpy(m, s, len);
		switch (rnd(&st) % 3) {
		case 0:
			m[at] = mut_bytes[rnd(&st) % (sizeof mut_bytes - 1)];
			same(m, len);
			break;
		case 1:
			memcpy(m + at + 1, s + at, len - at);
			m[at] = mut_bytes[rnd(&st) % (sizeof mut_bytes - 1)];
			same(m, len + 1);
			break;
		default:
			memcpy(m + at, s + at + 1, len - at - 1);
			same(m, len - 1);
			break;
		}
	}
	free(m);
}

START_TEST(test_corpus)
{
	size_t	i;

	for (i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
		mutate(corpus[i], strlen(corpus[i]), 200);
	ck_assert_uint_gt(naccepted, 100);
}
END_TEST

START_TEST(test_fixtures)
{
	static const char *const names[] = {
		"application.json", "applications.json", "delta.json",
		"instance.json", "register-request-java-client.json",
		"register-request-spring-cloud-client.json",
		"replication-batch-request.json",
		"replication-batch-response.json",
		"serverinfo-statusoverrides.json", "applications-empty.json",
	};
	size_t	i, len;
	char	*s;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		s = read_fixture(names[i], &len);
		same(s, len);
		mutate(s, len, 2000);
		free(s);
	}
}
END_TEST

/* Nesting past the parser's stack is refused, not overrun. */
START_TEST(test_depth)
{
	struct buf	b;
	struct rec	ev;
	int		i;

	buf_init(&b, 0);
	memset(&ev, 0, sizeof ev);
	buf_init(&ev.b, 0);
	for (i = 0; i < JSON_LEX_MAX_DEPTH + 1; i++)
		buf_addc(&b, '[');
	for (i = 0; i < JSON_LEX_MAX_DEPTH + 1; i++)
		buf_addc(&b, ']');
	ck_assert_int_eq(json_lex_parse(&lx, &lcb, &ev, b.data, b.len), -1);
	ck_assert_str_eq(lx.err, "parse error: nesting too deep");
	buf_reset(&ev.b);
	ev.depth = 0;
	ck_assert_int_eq(json_lex_parse(&lx, &lcb, &ev, b.data + 1,
	    b.len - 2), 0);
	ck_assert_uint_eq(lx.root_end, b.len - 2);
	buf_free(&b);
	buf_free(&ev.b);
}
END_TEST

static Suite *
json_lex_suite(void)
{
	Suite	*s = suite_create("json_lex");
	TCase	*tc = tcase_create("yajl");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_corpus);
	tcase_add_test(tc, test_fixtures);
	tcase_add_test(tc, test_depth);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	json_lex_init(&lx);
	return (check_run(json_lex_suite()));
}
