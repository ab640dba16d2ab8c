/*
 * access.c: the one access check of heurekad (docs/security.md).
 *
 * A request is open (the /health probes, so orchestrators can probe a
 * secured server), a read (every GET or HEAD: registry fetches, the
 * dashboard, /metrics, /info), a write (every other method under the REST
 * bases: register, heartbeat, cancel, status, metadata) or a peer request
 * (anything under peerreplication/ or heureka/). The kind comes from the
 * method and the path alone, so a route added to rest.c's table is a read
 * or a write without anyone having to remember this file.
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
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "access.h"
#include "config.h"
#include "httputil.h"
#include "log.h"
#include "xmalloc.h"

#define ACCESS_HASH_LEN		32	/* SHA-256 */
#define ACCESS_HEADER_MAX	4096	/* longest Authorization we decode */

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
	int			(*cert_check)(struct evhttp_request *);
};

/* Who is calling. */
enum access_who {
	ACCESS_ANONYMOUS = 0,
	ACCESS_BAD,		/* credentials sent, but wrong */
	ACCESS_USER,
	ACCESS_PEER_ID,
};

/*
 * Paths outside the REST bases that are always open: the liveness and
 * readiness probes dashboard.c answers.
 */
static const char *access_open_paths[] = {
	"/health", "/health/liveness", "/health/readiness",
	"/actuator/health", "/actuator/health/liveness",
	"/actuator/health/readiness",
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
	OPENSSL_cleanse(a, sizeof *a);
	free(a);
}

/* Replace the rules in place; the TLS module's check stays. */
void
access_reload(struct access *a, const struct config *cf)
{
	struct access	*n = access_new(cf);

	n->cert_check = a->cert_check;
	*a = *n;
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
access_set_cert_check(struct access *a, int (*fn)(struct evhttp_request *))
{
	a->cert_check = fn;
}

/* Whether rel is heureka/apps/{app}/leader (server/leader.c). */
static int
access_is_leader(const char *rel)
{
	const char	*app = rel + 13, *slash;

	if (strncmp(rel, "heureka/apps/", 13) != 0 ||
	    (slash = strchr(app, '/')) == NULL || slash == app)
		return (0);
	return (strcmp(slash, "/leader") == 0);
}

/* The kind of a request, from its method and path. */
enum access_kind
access_classify(enum evhttp_cmd_type method, const char *rel,
    const char *path)
{
	size_t	i;
	int	get = method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD;

	if (rel == NULL) {
		for (i = 0; i < sizeof access_open_paths /
		    sizeof access_open_paths[0]; i++) {
			if (path != NULL &&
			    strcmp(path, access_open_paths[i]) == 0)
				return (ACCESS_OPEN);
		}
		/* The dashboard and /metrics, /info are read-only. */
		return (get ? ACCESS_READ : ACCESS_WRITE);
	}
	while (*rel == '/')
		rel++;
	/*
	 * heureka/watch and heureka/apps/{app}/leader are the clients';
	 * heureka/audit and heureka/doctor the operators' (read).
	 */
	if (strcmp(rel, "heureka/watch") == 0 ||
	    strcmp(rel, "heureka/watch/stats") == 0 || access_is_leader(rel) ||
	    strncmp(rel, "heureka/audit", 13) == 0 ||
	    strncmp(rel, "heureka/doctor", 14) == 0)
		return (get ? ACCESS_READ : ACCESS_WRITE);
	if (strncmp(rel, "heureka", 7) == 0 &&
	    (rel[7] == '\0' || rel[7] == '/'))
		return (ACCESS_PEER);
	if (strncmp(rel, "peerreplication", 15) == 0 &&
	    (rel[15] == '\0' || rel[15] == '/'))
		return (ACCESS_PEER);
	return (get ? ACCESS_READ : ACCESS_WRITE);
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
access_identify(const struct access *a, struct evhttp_request *req,
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
	if ((h = http_header(req, "Authorization")) == NULL)
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

/* Judge one request of kind k. */
enum access_verdict
access_check(const struct access *a, struct evhttp_request *req,
    enum access_kind k, int *peer)
{
	return (access_check_user(a, req, k, peer, NULL, 0));
}

/* Judge one request of kind k and say who asked (access.h). */
enum access_verdict
access_check_user(const struct access *a, struct evhttp_request *req,
    enum access_kind k, int *peer, char *user, size_t userlen)
{
	enum access_who	who;

	*peer = 0;
	if (userlen > 0)
		snprintf(user, userlen, "anonymous");
	if (!access_enabled(a)) {
		*peer = 1;		/* as before: the header is trusted */
		return (ACCESS_OK);
	}
	if (k == ACCESS_OPEN)
		return (ACCESS_OK);
	who = access_identify(a, req, user, userlen);
	*peer = who == ACCESS_PEER_ID;
	switch (who) {
	case ACCESS_BAD:
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
access_reply(struct evhttp_request *req, enum access_verdict v)
{
	if (v == ACCESS_DENIED_401) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Basic realm=\"heureka\"");
		http_error(req, 401, "authentication required: send the "
		    "user name and password (HTTP Basic)");
	} else
		http_error(req, 403, "this identity may not do that "
		    "(peer requests need the peer's credentials or "
		    "certificate)");
}
