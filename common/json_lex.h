/*
 * json_lex.h: one pass over a JSON text, RFC 8259's grammar, calling the
 * decoder's callbacks (the shapes of yajl's, whose place it takes on the
 * request path: json_lex.c says why).
 */
#ifndef JSON_LEX_H
#define JSON_LEX_H

#include <stddef.h>

#include "buf.h"

/* Containers deeper than this are refused (the decoder stops at 32). */
#define JSON_LEX_MAX_DEPTH	256

/*
 * The events. A string or key is handed over without its quotes, as the
 * input's own bytes when it has no escape, else decoded (\u0000 is a NUL
 * byte; the callee checks). A number is its text as the grammar took it.
 * A callback returning 0 stops the parse.
 */
struct json_lex_cb {
	int	(*null)(void *);
	int	(*boolean)(void *, int);
	int	(*number)(void *, const char *, size_t);
	int	(*string)(void *, const unsigned char *, size_t);
	int	(*start_map)(void *);
	int	(*map_key)(void *, const unsigned char *, size_t);
	int	(*end_map)(void *);
	int	(*start_array)(void *);
	int	(*end_array)(void *);
};

/* A parser's reusable state: one per thread, kept between documents. */
struct json_lex {
	struct buf	 esc;		/* an escaped string, decoded */
	const char	*err;		/* why the last parse failed */
	size_t		 root_end;	/* offset past the first value */
	int		 cancelled;	/* a callback said stop */
	unsigned char	 stack[JSON_LEX_MAX_DEPTH];	/* 1: object */
};

void	json_lex_init(struct json_lex *);
void	json_lex_free(struct json_lex *);
/*
 * Parse the first value of data (len bytes): 0 when it was whole (or the
 * input held only whitespace: no event at all), with root_end past it
 * and whatever follows left to the caller, unless it could not begin a
 * value ("parse error: ..." then, as for '}' after the root); -1 with err
 * set ("lexical error: ...", "parse error: ...", "premature EOF") or
 * cancelled set by a callback's 0.
 */
int	json_lex_parse(struct json_lex *, const struct json_lex_cb *, void *,
	    const char *, size_t);

#endif
