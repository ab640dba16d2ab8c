/*
 * access.c: the one access check of heurekad (docs/security.md).
 *
 * A request is open (the /health probes, so orchestrators can probe a
 * secured server), a read (every GET or HEAD: registry fetches, the
 * dashboard, /metrics, /info), a write (register, heartbeat, cancel,
 * status, metadata, the leader pin) or a peer request (the replication
 * batch, heureka/digest, apps and stats). The kind is not read here from
 * the path: it is a field of the route rest.c's router resolves
 * (rest_route_resolve), so the path is decoded once and the role judged
 * is the role of the handler reached. Before, this file classified the
 * raw path while the router matched decoded segments, and a user's POST
 * to /eureka/v2/%70eerreplication/batch was a "write" that stored a
 * replication batch (issue 21).
 *
 * Identities, with authentication on: a peer (a verified certificate
 * from the peer CA, or heureka.security.peer.name/password) may do
 * everything; the user (spring.security.user.*) may read and write; an
 * anonymous caller may read when heureka.security.read-anonymous is set.
 * As in Spring Security, wrong credentials are a 401 wherever they are
 * sent, even where none are needed, and a known identity without the
 * right gets 403. The configured names and passwords are kept only as
 * SHA-256 digests, and a presented pair is hashed and compared with
 * CRYPTO_memcmp on the fixed-length digests, so neither the content nor
 * the length of a secret shows in the time an answer takes. Nothing here
 * logs a credential.
 *
 * Password guessing: one connection tried about 6,000 passwords a second
 * (issue 21). Failed authentications are counted per client address in
 * a token bucket (ratelimit.c: a bounded table keyed with SipHash, so no
 * choice of addresses crowds one chain): heureka.security.auth-failure-
 * burst of them at once, then heureka.security.auth-failures-per-second.
 * An address whose bucket is empty gets 429 with Retry-After for every
 * request that carries credentials, right or wrong, before they are
 * compared: a guess is never judged, so the answer says nothing about
 * it. Anonymous requests are not guesses and are judged as usual; a
 * verified peer certificate is never throttled. IPv6 addresses count by
 * their /64 (one host holds a whole /64), IPv4-mapped ones as IPv4.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "access.h"
#include "config.h"
#include "http.h"
#include "httputil.h"
#include "log.h"
#include "ratelimit.h"
#include "xmalloc.h"

#define ACCESS_HASH_LEN		32	/* SHA-256 */
#define ACCESS_HEADER_MAX	4096	/* longest Authorization we decode */
#define ACCESS_FAIL_ENTRIES	16384	/* client addresses tracked */
#define ACCESS_KEY_MAX		64	/* an address, or a /64 with "/64" */

/* One name/password pair, as digests. */
struct access_cred {
	unsigned char	name[ACCESS_HASH_LEN];
	unsigned char	password[ACCESS_HASH_LEN];
};

struct access {
	int			 enabled;
	int			 read_anonymous;
	struct access_cred	 user;
	struct access_cred	 peer;
	int			(*cert_check)(struct hreq *);
	struct ratelimit	*fail_rl;	/* failed authentications */
};

/* Who is calling. */
enum access_who {
	ACCESS_ANONYMOUS = 0,
	ACCESS_BAD,		/* credentials sent, but wrong */
	ACCESS_USER,
	ACCESS_PEER_ID,
};

/* SHA-256 of len bytes at p into out. */
static void
access_hash(const void *p, size_t len, unsigned char out[ACCESS_HASH_LEN])
{
	unsigned int	n = ACCESS_HASH_LEN;

	if (EVP_Digest(p, len, out, &n, EVP_sha256(), NULL) != 1)
		fatalx("EVP_Digest(sha256) failed");
}

/* Digests of one configured pair. */
static void
access_cred_set(struct access_cred *c, const char *name, const char *pw)
{
	access_hash(name, strlen(name), c->name);
	access_hash(pw, strlen(pw), c->password);
}

/* Does the presented pair match c? Constant time in both secrets. */
static int
access_cred_match(const struct access_cred *c,
    const unsigned char name[ACCESS_HASH_LEN],
    const unsigned char pw[ACCESS_HASH_LEN])
{
	int	a, b;

	a = CRYPTO_memcmp(c->name, name, ACCESS_HASH_LEN);
	b = CRYPTO_memcmp(c->password, pw, ACCESS_HASH_LEN);
	return ((a | b) == 0);
}

/* The access rules of a configuration. */
struct access *
access_new(const struct config *cf)
{
	struct access	*a = xcalloc(1, sizeof *a);
	const char	*pname, *ppw;

	a->fail_rl = ratelimit_new(cf->security_auth_failures_per_second,
	    cf->security_auth_failure_burst, ACCESS_FAIL_ENTRIES);
	if (cf->security_user_password == NULL)
		return (a);
	a->enabled = 1;
	a->read_anonymous = cf->security_read_anonymous;
	access_cred_set(&a->user, cf->security_user_name,
	    cf->security_user_password);
	pname = cf->security_peer_name != NULL ? cf->security_peer_name :
	    cf->security_user_name;
	ppw = cf->security_peer_password != NULL ?
	    cf->security_peer_password : cf->security_user_password;
	access_cred_set(&a->peer, pname, ppw);
	return (a);
}

/* Free the rules (the digests are wiped first). */
void
access_free(struct access *a)
{
	if (a == NULL)
		return;
	ratelimit_free(a->fail_rl);
	OPENSSL_cleanse(a, sizeof *a);
	free(a);
}

/*
 * Replace the rules in place; the TLS module's check stays, and so do the
 * failure counts (a reload must not forgive a guesser).
 */
void
access_reload(struct access *a, const struct config *cf)
{
	struct access	*n = access_new(cf);

	n->cert_check = a->cert_check;
	ratelimit_free(n->fail_rl);
	n->fail_rl = a->fail_rl;
	*a = *n;
	n->fail_rl = NULL;
	access_free(n);
}

/* Is authentication on? */
int
access_enabled(const struct access *a)
{
	return (a != NULL && a->enabled);
}

/* Set the TLS module's verified-peer-certificate test. */
void
access_set_cert_check(struct access *a, int (*fn)(struct hreq *))
{
	a->cert_check = fn;
}

/*
 * Decode "Basic base64(name:password)" into out; name and password point
 * into it. -1 when the header is not Basic, too long, not base64, holds
 * a NUL or has no ':'.
 */
int
access_parse_basic(const char *h, char *out, size_t outlen,
    const char **name, const char **password)
{
	size_t	 len, pad = 0;
	int	 n;
	char	*colon;

	while (*h == ' ')
		h++;
	if (strncasecmp(h, "Basic", 5) != 0 || (h[5] != ' ' && h[5] != '\t'))
		return (-1);
	for (h += 5; *h == ' ' || *h == '\t'; h++)
		;
	len = strlen(h);
	while (len > 0 && (h[len - 1] == ' ' || h[len - 1] == '\t'))
		len--;
	if (len == 0 || len % 4 != 0 || len > ACCESS_HEADER_MAX ||
	    len / 4 * 3 + 1 > outlen)
		return (-1);
	if (h[len - 1] == '=')
		pad++;
	if (h[len - 2] == '=')
		pad++;
	/* EVP_DecodeBlock counts padding as data: take it off again. */
	if ((n = EVP_DecodeBlock((unsigned char *)out,
	    (const unsigned char *)h, (int)len)) < 0 || (size_t)n < pad)
		return (-1);
	n -= (int)pad;
	out[n] = '\0';
	if (strlen(out) != (size_t)n || (colon = strchr(out, ':')) == NULL)
		return (-1);
	*colon = '\0';
	*name = out;
	*password = colon + 1;
	return (0);
}

/* Who the request says it is. */
static enum access_who
access_identify(const struct access *a, struct hreq *req,
    char *user, size_t userlen)
{
	const char	*h, *name, *pw;
	char		 buf[ACCESS_HEADER_MAX];
	unsigned char	 hn[ACCESS_HASH_LEN], hp[ACCESS_HASH_LEN];
	enum access_who	 who;
	int		 peer, isuser;

	if (a->cert_check != NULL && a->cert_check(req)) {
		if (userlen > 0)
			snprintf(user, userlen, "peer");
		return (ACCESS_PEER_ID);
	}
	if ((h = hreq_header(req, "Authorization")) == NULL)
		return (ACCESS_ANONYMOUS);
	if (access_parse_basic(h, buf, sizeof buf, &name, &pw) != 0)
		return (ACCESS_BAD);
	access_hash(name, strlen(name), hn);
	access_hash(pw, strlen(pw), hp);
	/* Both compared, whichever matches. */
	peer = access_cred_match(&a->peer, hn, hp);
	isuser = access_cred_match(&a->user, hn, hp);
	who = peer ? ACCESS_PEER_ID : isuser ? ACCESS_USER : ACCESS_BAD;
	/* The name for the audit; "peer" only for the peer's own identity. */
	if (isuser && userlen > 0)
		snprintf(user, userlen, "%s", name);
	else if (peer && userlen > 0)
		snprintf(user, userlen, "peer");
	OPENSSL_cleanse(buf, sizeof buf);
	return (who);
}

/*
 * The failure limiter's key for addr: the address itself, an IPv4-mapped
 * IPv6 address as IPv4, another IPv6 address as its /64.
 */
void
access_client_key(const char *addr, char *out, size_t len)
{
	struct in6_addr	a6;
	char		buf[INET6_ADDRSTRLEN];

	if (inet_pton(AF_INET6, addr, &a6) != 1) {
		snprintf(out, len, "%s", addr);
		return;
	}
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		snprintf(out, len, "%u.%u.%u.%u", a6.s6_addr[12],
		    a6.s6_addr[13], a6.s6_addr[14], a6.s6_addr[15]);
		return;
	}
	memset(a6.s6_addr + 8, 0, 8);
	if (inet_ntop(AF_INET6, &a6, buf, sizeof buf) == NULL)
		snprintf(out, len, "%s", addr);
	else
		snprintf(out, len, "%s/64", buf);
}

/* The request's client key, or 0 when its address is unknown. */
static int
access_request_key(struct hreq *req, char *out, size_t len)
{
	struct hconn			*conn;
	char				*addr = NULL;
	ev_uint16_t			 port = 0;

	if ((conn = hreq_conn(req)) == NULL)
		return (0);
	hconn_peer(conn, &addr, &port);
	if (addr == NULL)
		return (0);
	access_client_key(addr, out, len);
	return (1);
}

/* Judge one request of kind k. */
enum access_verdict
access_check(struct access *a, struct hreq *req,
    enum access_kind k, int64_t now, int *peer, int64_t *retry_ms)
{
	return (access_check_user(a, req, k, now, peer, retry_ms, NULL, 0));
}

/* Judge one request of kind k and say who asked (access.h). */
enum access_verdict
access_check_user(struct access *a, struct hreq *req,
    enum access_kind k, int64_t now, int *peer, int64_t *retry_ms,
    char *user, size_t userlen)
{
	enum access_who	who;
	char		key[ACCESS_KEY_MAX];
	int		keyed = 0;

	*peer = 0;
	*retry_ms = 0;
	if (userlen > 0)
		snprintf(user, userlen, "anonymous");
	if (!access_enabled(a)) {
		*peer = 1;		/* as before: the header is trusted */
		return (ACCESS_OK);
	}
	if (k == ACCESS_OPEN)
		return (ACCESS_OK);
	if ((a->cert_check == NULL || !a->cert_check(req)) &&
	    hreq_header(req, "Authorization") != NULL &&
	    (keyed = access_request_key(req, key, sizeof key)) &&
	    (*retry_ms = ratelimit_wait(a->fail_rl, key, now)) > 0)
		return (ACCESS_THROTTLED);
	who = access_identify(a, req, user, userlen);
	*peer = who == ACCESS_PEER_ID;
	switch (who) {
	case ACCESS_BAD:
		if (keyed)
			(void)ratelimit_take(a->fail_rl, key, now);
		return (ACCESS_DENIED_401);
	case ACCESS_ANONYMOUS:
		return (k == ACCESS_READ && a->read_anonymous ? ACCESS_OK :
		    ACCESS_DENIED_401);
	case ACCESS_USER:
		return (k == ACCESS_PEER ? ACCESS_DENIED_403 : ACCESS_OK);
	case ACCESS_PEER_ID:
		break;
	}
	return (ACCESS_OK);
}

/* Send the refusal. */
void
access_reply(struct hreq *req, enum access_verdict v,
    int64_t retry_ms)
{
	char	ra[32];

	if (v == ACCESS_THROTTLED) {
		snprintf(ra, sizeof ra, "%lld",
		    (long long)((retry_ms + 999) / 1000));
		hhdrs_add(hreq_output_headers(req),
		    "Retry-After", ra);
		hreq_error(req, 429, "too many failed authentications from "
		    "this address (heureka.security.auth-failures-per-second); "
		    "retry later");
	} else if (v == ACCESS_DENIED_401) {
		hhdrs_add(hreq_output_headers(req),
		    "WWW-Authenticate", "Basic realm=\"heureka\"");
		hreq_error(req, 401, "authentication required: send the "
		    "user name and password (HTTP Basic)");
	} else
		hreq_error(req, 403, "this identity may not do that "
		    "(peer requests need the peer's credentials or "
		    "certificate)");
}
