/*
 * instance_fields.h: the one table of the instance fields the JSON and XML
 * decoders store (json_dec.c, xml_dec.c), and the one function that turns
 * a field's wire value into the model. Each field has one rule; where
 * Eureka's own two codecs (EurekaJacksonCodec for JSON, XStream's
 * Converters for XML) read a field differently, the entry carries a flag
 * for that format, and only there. instance_fields.c says, per flag,
 * which Eureka source it follows.
 *
 * The decoders keep what belongs to their syntax: JSON's objects and
 * arrays, its "$" and "@enabled" port members, its repeated-key check;
 * XML's elements, attributes and name coding. Maps (metadata) and the
 * containers (applications) are not fields.
 */
#ifndef INSTANCE_FIELDS_H
#define INSTANCE_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "instance.h"

/* Every field, by id. */
enum ifield {
	IF_INSTANCE_ID = 0,
	IF_HOST_NAME,
	IF_APP,
	IF_IP_ADDR,
	IF_SID,
	IF_STATUS,
	IF_OVERRIDDEN_STATUS,
	IF_OVERRIDDEN_STATUS_LC,	/* the older spelling, same target */
	IF_PORT,
	IF_PORT_ENABLED,
	IF_SECURE_PORT,
	IF_SECURE_PORT_ENABLED,
	IF_COUNTRY_ID,
	IF_APP_GROUP_NAME,
	IF_HOME_PAGE_URL,
	IF_STATUS_PAGE_URL,
	IF_HEALTH_CHECK_URL,
	IF_SECURE_HEALTH_CHECK_URL,
	IF_VIP_ADDRESS,
	IF_SECURE_VIP_ADDRESS,
	IF_IS_COORDINATING,
	IF_LAST_UPDATED_TS,
	IF_LAST_DIRTY_TS,
	IF_ACTION_TYPE,
	IF_ASG_NAME,
	IF_DC_NAME,
	IF_L_RENEWAL_INTERVAL,
	IF_L_DURATION,
	IF_L_REGISTRATION_TS,
	IF_L_LAST_RENEWAL_TS,
	IF_L_RENEWAL_TS,		/* JSON's legacy alias of the above */
	IF_L_EVICTION_TS,
	IF_L_SERVICE_UP_TS,
	IF_COUNT,
	IF_NONE = IF_COUNT
};

/* The object a field is a member of. */
enum ifield_parent {
	IFP_INSTANCE,
	IFP_PORT,		/* JSON's port objects; XML's attributes */
	IFP_DC,			/* dataCenterInfo */
	IFP_LEASE,		/* leaseInfo */
};

/* How the value is read. */
enum ifield_type {
	IFT_STRING,		/* text, stored in the builder's arena */
	IFT_SID,		/* text; "na" is the model's NULL */
	IFT_STATUS,		/* an InstanceStatus name; unknown: UNKNOWN */
	IFT_ACTION,		/* an ActionType name; unknown: none */
	IFT_INT,		/* an int */
	IFT_TS,			/* a timestamp, 0 .. INSTANCE_TS_MAX */
	IFT_BOOL,		/* true or false */
	IFT_DC_NAME,		/* MyOwn, Netflix or Amazon */
};

/* The wire formats. */
enum ifield_fmt {
	IFMT_JSON = 0,
	IFMT_XML,
	IFMT_COUNT
};

/* Rules, per field and format (the table's two columns). */
#define IFR_UPPER	0x01	/* stored upper-cased */
#define IFR_ICASE	0x02	/* enum names in any case */
#define IFR_SKIP_BAD	0x04	/* an unparsable number is skipped */
#define IFR_BOOL_LOOSE	0x08	/* Boolean.valueOf: "true" in any case */
#define IFR_BOOL_NOT_FALSE 0x10	/* true unless exactly "false" */
#define IFR_BOOL_TRUE	0x20	/* true only if exactly "true" */
#define IFR_AMAZON_ICASE 0x40	/* "Amazon" in any case */
#define IFR_ABSENT	0x80	/* the format has no such field */

struct ifield_def {
	const char		*name;		/* as on the wire */
	enum ifield_parent	 parent;
	enum ifield_type	 type;
	uint8_t			 rule[IFMT_COUNT];
	uint16_t		 off;		/* its member of struct instance */
};

/* The table, indexed by enum ifield. */
extern const struct ifield_def ifield_table[IF_COUNT];

/*
 * A value as a decoder hands it over: text (a JSON string, any XML
 * text), a JSON number's text or a JSON boolean. s need not be
 * NUL-terminated.
 */
enum ifield_vtype {
	IFV_TEXT,
	IFV_NUM,
	IFV_BOOL,
};
struct ifield_val {
	enum ifield_vtype	 type;
	int			 b;		/* IFV_BOOL */
	const char		*s;		/* IFV_TEXT, IFV_NUM: len bytes */
	size_t			 len;
};

/*
 * Store v as field f of ib->in, read by format fmt's rule. 0 when stored
 * (or skipped by the rule); -1 when the value is refused, *why then the
 * reason's static text ("a number expected", ...), which the decoder
 * words as "invalid <name>: <why>".
 */
static inline int ifield_set(struct instance_builder *ib, enum ifield f,
	    enum ifield_fmt fmt, const struct ifield_val *v, const char **why);
/* ifield_set for every case; ifield_set's inline part takes the common. */
int	 ifield_set_slow(struct instance_builder *ib, enum ifield f,
	    enum ifield_fmt fmt, const struct ifield_val *v, const char **why);

/* The field parent's child called name (len bytes) has in fmt; IF_NONE. */
enum ifield	 ifield_find(enum ifield_parent, enum ifield_fmt,
		    const char *name, size_t len);

/* Is c white space as XML text has it around a number? */
static inline int
ifield_space(char c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\r');
}

/*
 * Whether the 8 bytes at s are all ASCII digits; *v their value then.
 * One load and three multiplies in place of eight steps of a byte loop
 * (the SWAR form of Lemire's "Quickly parsing eight digits", 2018).
 * Bytes in memory order are the low bytes first on a little-endian
 * machine only; elsewhere the byte loop does all (-1 here means "not
 * this way", and the caller's loop then decides).
 */
static inline int
ifield_digits8(const char *s, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t	x;

	memcpy(&x, s, sizeof x);
	/* '0'..'9' are 0x30..0x39: high nibble 3, and 3 still after +6. */
	if (((x & 0xf0f0f0f0f0f0f0f0ULL) |
	    (((x + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) >> 4)) !=
	    0x3333333333333333ULL)
		return (-1);
	x &= 0x0f0f0f0f0f0f0f0fULL;
	/* Pairs of digits, then fours, then the eight: 10, 100, 10000. */
	x = (x * (1 + (10 << 8))) >> 8;
	x = ((x & 0x00ff00ff00ff00ffULL) * (1 + (100ULL << 16))) >> 16;
	x = ((x & 0x0000ffff0000ffffULL) * (1 + (10000ULL << 32))) >> 32;
	*v = x;
	return (0);
#else
	(void)s;
	(void)v;
	return (-1);
#endif
}

/* ifield_digits8 for the 4 bytes at s (a port, a lease's seconds). */
static inline int
ifield_digits4(const char *s, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t	x;

	memcpy(&x, s, sizeof x);
	if (((x & 0xf0f0f0f0U) | (((x + 0x06060606U) & 0xf0f0f0f0U) >> 4)) !=
	    0x33333333U)
		return (-1);
	x &= 0x0f0f0f0fU;
	x = (x * (1 + (10 << 8))) >> 8;
	x = ((x & 0x00ff00ffU) * (1 + (100U << 16))) >> 16;
	*v = x;
	return (0);
#else
	(void)s;
	(void)v;
	return (-1);
#endif
}

/*
 * The digits from s to end (19 or more) as a long of sign neg, checking
 * each past the 18th against the limit's tenth and last digit; 0 or -1.
 */
static int __attribute__((noinline, cold, unused))
ifield_parse_i64_long(const char *s, const char *end, int neg,
    int64_t *out)
{
	uint64_t	v = 0, lim = (uint64_t)INT64_MAX + (neg ? 1 : 0), d;
	const char	*fast = s + 18;

	for (; s < fast; s++) {
		if ((d = (uint64_t)(unsigned char)*s - '0') > 9)
			return (-1);
		v = v * 10 + d;
	}
	for (; s < end; s++) {
		if ((d = (uint64_t)(unsigned char)*s - '0') > 9)
			return (-1);
		if (v > lim / 10 || (v == lim / 10 && d > lim % 10))
			return (-1);
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return (0);
}

/*
 * The len bytes at s as one whole decimal long, as Long.parseLong (an
 * optional sign, digits, no overflow); with trim, surrounding white
 * space is allowed (XML text). 0, or -1 if they are not one. Inline, as
 * every number of every field comes here: a replicated register item
 * has twelve (three 13-digit timestamps, ports, lease seconds, zeros).
 * Up to 18 digits cannot overflow and go eight, then four at a time
 * while that many are left (ifield_digits8, ifield_digits4), the rest
 * byte by byte; longer ones take ifield_parse_i64_long. A replicated
 * register item's decode went from 36,106 to 36,004 instructions with
 * this (callgrind, tests/bench/run callgrind at N=10k; inlined always:
 * out of line it cost 72 a number, more than the byte loop did).
 */
static inline __attribute__((always_inline)) int
ifield_parse_i64(const char *s, size_t len, int trim, int64_t *out)
{
	const char	*end = s + len;
	uint64_t	 v = 0, d;
	int		 neg = 0;

	if (trim) {
		while (s < end && ifield_space(*s))
			s++;
		while (end > s && ifield_space(end[-1]))
			end--;
	}
	if (s == end)
		return (-1);
	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		if (++s == end)
			return (-1);
	}
	if (end - s > 18)
		return (ifield_parse_i64_long(s, end, neg, out));
	for (; end - s >= 8; s += 8) {
		if (ifield_digits8(s, &d) != 0)
			goto bytes;
		v = v * 100000000 + d;
	}
	if (end - s >= 4 && ifield_digits4(s, &d) == 0) {
		v = v * 10000 + d;
		s += 4;
	}
bytes:
	for (; s < end; s++) {
		if ((d = (uint64_t)(unsigned char)*s - '0') > 9)
			return (-1);
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return (0);
}

/* Are the len bytes at s the lower-case word w, in any ASCII case? */
static inline int
ifield_word_icase(const char *s, size_t len, const char *w, size_t wlen)
{
	uint32_t	a, b;
	size_t		i = 0;

	if (len != wlen)
		return (0);
	if (len >= 4) {
		/* The first four at once: w is a constant once inlined. */
		memcpy(&a, s, 4);
		memcpy(&b, w, 4);
		if ((a | 0x20202020U) != b)
			return (0);
		i = 4;
	}
	for (; i < len; i++) {
		if ((s[i] | 0x20) != w[i])
			return (0);
	}
	return (1);
}

/*
 * A boolean: JSON's true/false or their strings in any case (the Java
 * clients write both), else -1; with one of the XML rules, the rule.
 */
static inline int
ifield_bool(const struct ifield_val *v, uint8_t rule)
{
	if (rule & IFR_BOOL_LOOSE)
		return (ifield_word_icase(v->s, v->len, "true", 4));
	if (rule & IFR_BOOL_NOT_FALSE)
		return (!(v->len == 5 && memcmp(v->s, "false", 5) == 0));
	if (rule & IFR_BOOL_TRUE)
		return (v->len == 4 && memcmp(v->s, "true", 4) == 0);
	if (v->type == IFV_BOOL)
		return (v->b);
	if (v->type != IFV_TEXT)
		return (-1);
	if (ifield_word_icase(v->s, v->len, "true", 4))
		return (1);
	if (ifield_word_icase(v->s, v->len, "false", 5))
		return (0);
	return (-1);
}

/*
 * The InstanceStatus named exactly by the len bytes at s; UNKNOWN for
 * any other name, as both of Eureka's codecs keep it.
 */
static inline enum instance_status
ifield_status(const char *s, size_t len)
{
	switch (len) {
	case 2:
		if (memcmp(s, "UP", 2) == 0)
			return (STATUS_UP);
		break;
	case 4:
		if (memcmp(s, "DOWN", 4) == 0)
			return (STATUS_DOWN);
		break;
	case 8:
		if (memcmp(s, "STARTING", 8) == 0)
			return (STATUS_STARTING);
		break;
	case 14:
		if (memcmp(s, "OUT_OF_SERVICE", 14) == 0)
			return (STATUS_OUT_OF_SERVICE);
		break;
	default:
		break;
	}
	return (STATUS_UNKNOWN);
}

/* The data center named exactly by the len bytes at s; -1 if none. */
static inline int
ifield_dc(const char *s, size_t len)
{
	if (len == 5 && memcmp(s, "MyOwn", 5) == 0)
		return (DC_MYOWN);
	if (len == 7 && memcmp(s, "Netflix", 7) == 0)
		return (DC_NETFLIX);
	if (len == 6 && memcmp(s, "Amazon", 6) == 0)
		return (DC_AMAZON);
	return (-1);
}

/*
 * ifield_set, inline for what most fields of most bodies are: a string
 * (text or a number's text), an int or a timestamp written as a plain
 * number within its range, a boolean, an exact status or data center
 * name. Everything else, and any value these refuse, goes to
 * ifield_set_slow, which applies the whole rule. Measured with callgrind
 * (tests/bench/run callgrind): the calls and the switches of the general
 * path cost some 2,000 instructions a 25-field registration.
 */
static inline __attribute__((always_inline)) int
ifield_set(struct instance_builder *ib, enum ifield f, enum ifield_fmt fmt,
    const struct ifield_val *v, const char **why)
{
	const struct ifield_def	*d = &ifield_table[f];
	char			*at = (char *)&ib->in + d->off;
	char			*s;
	int64_t			 n;
	int			 b;

	switch (d->type) {
	case IFT_BOOL:
		if ((b = ifield_bool(v, d->rule[fmt])) < 0)
			return (ifield_set_slow(ib, f, fmt, v, why));
		*(uint8_t *)(void *)at = (uint8_t)b;
		break;
	case IFT_STATUS:
		if (v->type != IFV_TEXT || (d->rule[fmt] & IFR_ICASE))
			return (ifield_set_slow(ib, f, fmt, v, why));
		*(enum instance_status *)(void *)at = ifield_status(v->s,
		    v->len);
		break;
	case IFT_DC_NAME:
		if (v->type != IFV_TEXT || (d->rule[fmt] & IFR_AMAZON_ICASE) ||
		    (b = ifield_dc(v->s, v->len)) < 0)
			return (ifield_set_slow(ib, f, fmt, v, why));
		*(enum dc_name *)(void *)at = (enum dc_name)b;
		ib->in.has_dc_name = 1;
		break;
	case IFT_STRING:
		if (v->type == IFV_BOOL)
			return (ifield_set_slow(ib, f, fmt, v, why));
		s = instance_builder_str(ib, v->s, v->len);
		if (d->rule[fmt] & IFR_UPPER)
			str_upper(s);
		*(char **)(void *)at = s;
		break;
	case IFT_INT:
		if (v->type == IFV_BOOL ||
		    ifield_parse_i64(v->s, v->len, fmt == IFMT_XML, &n) != 0 ||
		    n < INT32_MIN || n > INT32_MAX)
			return (ifield_set_slow(ib, f, fmt, v, why));
		*(int32_t *)(void *)at = (int32_t)n;
		break;
	case IFT_TS:
		if (v->type == IFV_BOOL ||
		    ifield_parse_i64(v->s, v->len, fmt == IFMT_XML, &n) != 0 ||
		    n < 0 || n > INSTANCE_TS_MAX)
			return (ifield_set_slow(ib, f, fmt, v, why));
		*(int64_t *)(void *)at = n;
		break;
	default:
		return (ifield_set_slow(ib, f, fmt, v, why));
	}
	*why = NULL;
	return (0);
}

#endif
