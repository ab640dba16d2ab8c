/*
 * json_lex.c: the JSON lexer and grammar the decoders run on (json_dec.c),
 * in place of yajl's callback parser.
 *
 * Why: under callgrind a registration's 890-byte body took 21k
 * instructions inside yajl (its lexer reads through a byte at a time
 * behind a buffer that supports streaming, 17 instructions a byte), a
 * quarter of the whole request (issue 27). The decoders always hold the
 * whole body, so nothing here streams: one loop walks the bytes, a string
 * is scanned four bytes a step against a table of the bytes that end or
 * interrupt it, and its bytes are handed to the callback where they lie
 * unless it has an escape.
 *
 * It accepts what yajl 2.1 accepts as configured before (no comments,
 * string bytes not checked for UTF-8 here: jctx_check does it once) and
 * refuses what it refuses, with yajl's messages, so that the answers
 * clients see do not change: whitespace is yajl's set (space, \t, \n,
 * \v, \f, \r), a string may not hold a raw byte below 0x20, escapes are
 * \" \\ \/ \b \f \n \r \t and \u with four hex digits, a UTF-16 pair
 * decodes to one character and a lone surrogate to '?' (the decoder
 * refuses lone ones before parsing), numbers follow RFC 8259's grammar
 * and are handed over as text. tests/unit/check_json_lex compares the
 * two on a corpus and on mutations of it.
 */
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "json_lex.h"

#define JL_EOF		"parse error: premature EOF"
#define JL_BADCHAR	"lexical error: invalid char in json text."
#define JL_BADWORD	"lexical error: invalid string in json text."
#define JL_STRCHAR	"lexical error: invalid character inside string."
#define JL_ESCAPE	"lexical error: inside a string, '\\' occurs before " \
			    "a character which it may not."
#define JL_HEX		"lexical error: invalid (non-hex) character occurs " \
			    "after '\\u' inside string."
#define JL_MINUS	"lexical error: malformed number, a digit is " \
			    "required after the minus sign."
#define JL_DECIMAL	"lexical error: malformed number, a digit is " \
			    "required after the decimal point."
#define JL_EXPONENT	"lexical error: malformed number, a digit is " \
			    "required after the exponent."
#define JL_COMMENT	"lexical error: probable comment found in input " \
			    "text, comments are not enabled."
#define JL_UNALLOWED	"parse error: unallowed token at this point in " \
			    "JSON text"
#define JL_KEY		"parse error: invalid object key (must be a string)"
#define JL_COLON	"parse error: object key and value must be " \
			    "separated by a colon (':')"
#define JL_MAPSEP	"parse error: after key and value, inside map, I " \
			    "expect ',' or '}'"
#define JL_ARRSEP	"parse error: after array element, I expect ',' " \
			    "or ']'"
#define JL_DEEP		"parse error: nesting too deep"
#define JL_CANCELLED	"parse error: client cancelled parse via callback " \
			    "return value"

/* An escaped string's buffer is given back when it grew past this. */
#define JL_ESC_KEEP	(64 * 1024)

/* Bytes that end a string's plain run: controls, '"' and '\'. */
#define R4(x)	x, x, x, x
#define R16(x)	R4(x), R4(x), R4(x), R4(x)
static const unsigned char jl_stop[256] = {
	R16(1), R16(1),				/* 0x00-0x1f */
	0, 0, 1, 0, R4(0), R4(0), R4(0),	/* 0x20-0x2f: '"' */
	R16(0), R16(0),				/* 0x30-0x4f */
	R4(0), R4(0), R4(0), 1, 0, 0, 0,	/* 0x50-0x5f: '\\' */
};
#undef R16
#undef R4

/*
 * yajl's whitespace: one compare for the bytes a value starts with (all
 * above ' '), then a bit of a mask (callgrind: a sixth of the lexer's own
 * time went to testing the six in turn).
 */
#define JL_SPACES	((1ULL << ' ') | (1ULL << '\n') | (1ULL << '\r') | \
			    (1ULL << '\t') | (1ULL << '\v') | (1ULL << '\f'))
static inline int
jl_space(unsigned char c)
{
	return (c <= ' ' && ((1ULL << c) & JL_SPACES) != 0);
}

/* Set up a parser. */
void
json_lex_init(struct json_lex *lx)
{
	memset(lx, 0, sizeof *lx);
	buf_init(&lx->esc, 0);
}

/* Free what a parser holds. */
void
json_lex_free(struct json_lex *lx)
{
	buf_free(&lx->esc);
}

/* The value of four hex digits at p, or -1. */
static long
jl_hex4(const unsigned char *p)
{
	long	v = 0;
	int	i, c;

	for (i = 0; i < 4; i++) {
		c = p[i];
		if (c >= '0' && c <= '9')
			v = v * 16 + (c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v * 16 + ((c | 0x20) - 'a' + 10);
		else
			return (-1);
	}
	return (v);
}

/* Code point cp as UTF-8 at the end of b (0 is one NUL byte). */
static void
jl_utf8(struct buf *b, unsigned long cp)
{
	char	u[4];

	if (cp < 0x80) {
		u[0] = (char)cp;
		buf_add(b, u, 1);
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 3);
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 4);
	}
}

/*
 * Decode the escapes of a string already checked by jl_string (s to e,
 * between the quotes) into lx->esc.
 */
static void
jl_unescape(struct json_lex *lx, const unsigned char *s,
    const unsigned char *e)
{
	const unsigned char	*run;
	unsigned long		 cp;
	long			 lo;
	char			 c;

	buf_reset(&lx->esc);
	while (s < e) {
		for (run = s; s < e && *s != '\\'; s++)
			;
		buf_add(&lx->esc, run, (size_t)(s - run));
		if (s == e)
			break;
		switch (s[1]) {
		case 'b':
			c = '\b';
			break;
		case 'f':
			c = '\f';
			break;
		case 'n':
			c = '\n';
			break;
		case 'r':
			c = '\r';
			break;
		case 't':
			c = '\t';
			break;
		case 'u':
			cp = (unsigned long)jl_hex4(s + 2);
			s += 6;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (e - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
				    (lo = jl_hex4(s + 2)) >= 0xdc00 &&
				    lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					    ((unsigned long)lo - 0xdc00);
					s += 6;
				} else
					cp = '?';
			} else if (cp >= 0xdc00 && cp <= 0xdfff)
				cp = '?';
			jl_utf8(&lx->esc, cp);
			continue;
		default:		/* '"', '\\', '/' */
			c = (char)s[1];
			break;
		}
		buf_add(&lx->esc, &c, 1);
		s += 2;
	}
}

/*
 * The string whose opening quote is at *pp: its bytes (or their decoded
 * form) in *sp and *lenp, *pp past its closing quote; -1 when it is
 * refused (the cause in lx->err).
 */
static int
jl_string(struct json_lex *lx, const unsigned char **pp,
    const unsigned char *end, const unsigned char **sp, size_t *lenp)
{
	const unsigned char	*p = *pp + 1, *s = p;
	int			 esc = 0;

	for (;;) {
		while (end - p >= 4 && !(jl_stop[p[0]] | jl_stop[p[1]] |
		    jl_stop[p[2]] | jl_stop[p[3]]))
			p += 4;
		while (p < end && !jl_stop[*p])
			p++;
		if (p == end) {
			lx->err = JL_EOF;
			return (-1);
		}
		if (*p == '"')
			break;
		if (*p != '\\') {
			lx->err = JL_STRCHAR;
			return (-1);
		}
		esc = 1;
		if (end - p < 2) {
			lx->err = JL_EOF;
			return (-1);
		}
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n':
		case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (end - p < 6) {
				lx->err = JL_EOF;
				return (-1);
			}
			if (jl_hex4(p + 2) < 0) {
				lx->err = JL_HEX;
				return (-1);
			}
			p += 6;
			break;
		default:
			lx->err = JL_ESCAPE;
			return (-1);
		}
	}
	*pp = p + 1;
	if (!esc) {
		*sp = s;
		*lenp = (size_t)(p - s);
	} else {
		jl_unescape(lx, s, p);
		*sp = (const unsigned char *)lx->esc.data;
		*lenp = lx->esc.len;
	}
	return (0);
}

/* The number at *pp (RFC 8259's grammar), *pp past it; -1 if malformed. */
static int
jl_number(struct json_lex *lx, const unsigned char **pp,
    const unsigned char *end)
{
	const unsigned char	*p = *pp;

	if (*p == '-' && ++p == end)
		goto eof;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9') {
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	} else {
		lx->err = JL_MINUS;
		return (-1);
	}
	if (p < end && *p == '.') {
		if (++p == end)
			goto eof;
		if (*p < '0' || *p > '9') {
			lx->err = JL_DECIMAL;
			return (-1);
		}
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p == end)
			goto eof;
		if ((*p == '+' || *p == '-') && ++p == end)
			goto eof;
		if (*p < '0' || *p > '9') {
			lx->err = JL_EXPONENT;
			return (-1);
		}
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	*pp = p;
	return (0);
eof:
	lx->err = JL_EOF;
	return (-1);
}

/* The literal word (true, false, null) at *pp; -1 if it is not. */
static int
jl_word(struct json_lex *lx, const unsigned char **pp,
    const unsigned char *end, const char *word, size_t n)
{
	size_t	i;

	for (i = 1; i < n; i++) {
		if (*pp + i == end) {
			lx->err = JL_EOF;
			return (-1);
		}
		if ((*pp)[i] != (unsigned char)word[i]) {
			lx->err = JL_BADWORD;
			return (-1);
		}
	}
	*pp += n;
	return (0);
}

/* The first non-space byte at or after p, or end. */
static inline const unsigned char *
jl_skip(const unsigned char *p, const unsigned char *end)
{
	while (p < end && jl_space(*p))
		p++;
	return (p);
}

/* Why byte c cannot start a value. */
static const char *
jl_not_value(unsigned char c)
{
	if (c == '/')
		return (JL_COMMENT);
	if (c == '}' || c == ']' || c == ',' || c == ':')
		return (JL_UNALLOWED);
	return (JL_BADCHAR);
}

#define JL_CALL(x)	do {						\
	if (!(x)) {							\
		lx->cancelled = 1;					\
		lx->err = JL_CANCELLED;					\
		return (-1);						\
	}								\
} while (0)
#define JL_FAIL(why)	do { lx->err = (why); return (-1); } while (0)

/* See json_lex.h. */
int
json_lex_parse(struct json_lex *lx, const struct json_lex_cb *cb, void *arg,
    const char *data, size_t len)
{
	const unsigned char	*p = (const unsigned char *)data;
	const unsigned char	*end = p + len, *s;
	size_t			 slen;
	int			 depth = 0, rc = 0;

	lx->err = NULL;
	lx->cancelled = 0;
	lx->root_end = 0;
	if (lx->esc.size > JL_ESC_KEEP)
		buf_free(&lx->esc);
	if ((p = jl_skip(p, end)) == end)
		goto out;		/* nothing: the caller says what */
value:
	if ((p = jl_skip(p, end)) == end)
		JL_FAIL(JL_EOF);
	switch (*p) {
	case '{':
		if (depth == JSON_LEX_MAX_DEPTH)
			JL_FAIL(JL_DEEP);
		JL_CALL(cb->start_map(arg));
		lx->stack[depth++] = 1;
		if ((p = jl_skip(p + 1, end)) == end)
			JL_FAIL(JL_EOF);
		if (*p == '}') {
			p++;
			depth--;
			JL_CALL(cb->end_map(arg));
			goto next;
		}
		goto key;
	case '[':
		if (depth == JSON_LEX_MAX_DEPTH)
			JL_FAIL(JL_DEEP);
		JL_CALL(cb->start_array(arg));
		lx->stack[depth++] = 0;
		if ((p = jl_skip(p + 1, end)) == end)
			JL_FAIL(JL_EOF);
		if (*p == ']') {
			p++;
			depth--;
			JL_CALL(cb->end_array(arg));
			goto next;
		}
		goto value;
	case '"':
		if (jl_string(lx, &p, end, &s, &slen) != 0)
			return (-1);
		JL_CALL(cb->string(arg, s, slen));
		goto next;
	case 't':
		if (jl_word(lx, &p, end, "true", 4) != 0)
			return (-1);
		JL_CALL(cb->boolean(arg, 1));
		goto next;
	case 'f':
		if (jl_word(lx, &p, end, "false", 5) != 0)
			return (-1);
		JL_CALL(cb->boolean(arg, 0));
		goto next;
	case 'n':
		if (jl_word(lx, &p, end, "null", 4) != 0)
			return (-1);
		JL_CALL(cb->null(arg));
		goto next;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		s = p;
		if (jl_number(lx, &p, end) != 0)
			return (-1);
		JL_CALL(cb->number(arg, (const char *)s, (size_t)(p - s)));
		goto next;
	default:
		JL_FAIL(jl_not_value(*p));
	}
key:
	/* At an object's key (p is at its first byte, not a space). */
	if (*p != '"')
		JL_FAIL(*p == '/' ? JL_COMMENT : JL_KEY);
	if (jl_string(lx, &p, end, &s, &slen) != 0)
		return (-1);
	JL_CALL(cb->map_key(arg, s, slen));
	if ((p = jl_skip(p, end)) == end)
		JL_FAIL(JL_EOF);
	if (*p != ':')
		JL_FAIL(*p == '/' ? JL_COMMENT : JL_COLON);
	p++;
	goto value;
next:
	/* After a value: the container's separator or end, or the root's. */
	if (depth == 0) {
		lx->root_end = (size_t)(p - (const unsigned char *)data);
		goto out;
	}
	if ((p = jl_skip(p, end)) == end)
		JL_FAIL(JL_EOF);
	if (lx->stack[depth - 1]) {
		if (*p == ',') {
			if ((p = jl_skip(p + 1, end)) == end)
				JL_FAIL(JL_EOF);
			goto key;
		}
		if (*p != '}')
			JL_FAIL(*p == '/' ? JL_COMMENT : JL_MAPSEP);
		p++;
		depth--;
		JL_CALL(cb->end_map(arg));
		goto next;
	}
	if (*p == ',') {
		p++;
		goto value;
	}
	if (*p != ']')
		JL_FAIL(*p == '/' ? JL_COMMENT : JL_ARRSEP);
	p++;
	depth--;
	JL_CALL(cb->end_array(arg));
	goto next;
out:
	/*
	 * What follows the root is the caller's to refuse, unless it could
	 * not even begin a value (yajl said so: "}}}" is a parse error).
	 */
	if ((p = jl_skip(p, end)) < end) {
		switch (*p) {
		case '{': case '[': case '"': case 't': case 'f': case 'n':
		case '-': case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			break;
		default:
			JL_FAIL(jl_not_value(*p));
		}
	}
	return (rc);
}
