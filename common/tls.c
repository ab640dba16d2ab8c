/*
 * tls.c: TLS contexts and connections for the server, the peers and
 * libheureka (OpenSSL 3 through bufferevent_openssl). Only TLS 1.2 and
 * 1.3 are ever enabled: TLS 1.0 and 1.1 are refused even when asked for,
 * as are unknown protocol names. TLS 1.2 gets forward-secret AEAD suites
 * only; TLS 1.3 keeps OpenSSL's suites (all AEAD). Renegotiation is off.
 *
 * A server context asks for client certificates per client-auth: "need"
 * fails the handshake without a certificate that verifies against the
 * trust bundle; "want" asks, but lets the handshake finish whatever comes
 * (tls_request_peer_verified then answers 0 for it). A client context
 * verifies the server against the trust bundle, or the system's CAs, and
 * checks the host name (SSL_set1_host, which takes IP literals too in
 * OpenSSL 3) unless verification was turned off explicitly.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/http.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "tls.h"
#include "xmalloc.h"

/* TLS 1.2 suites: ECDHE key exchange, AEAD ciphers (Mozilla "intermediate"). */
#define TLS_CIPHERS_DEFAULT \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define TLS_PROTOCOLS_DEFAULT	"TLSv1.2,TLSv1.3"

static int	tls_want_verify_cb(int, X509_STORE_CTX *);

/* The last OpenSSL error as text (or "unknown error"), into buf. */
static const char *
tls_openssl_error(char *buf, size_t len)
{
	unsigned long	e, last = 0;

	while ((e = ERR_get_error()) != 0)
		last = e;
	if (last == 0)
		snprintf(buf, len, "unknown error");
	else
		ERR_error_string_n(last, buf, len);
	return (buf);
}

/* Fail with "PREFIX.KEY: PATH: reason" unless PATH can be opened. */
static int
tls_check_file(const struct tls_conf *tc, const char *key, const char *path,
    char **cause)
{
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL) {
		xasprintf(cause, "%s.%s: %s: %s", tc->prefix, key, path,
		    strerror(errno));
		return (-1);
	}
	fclose(f);
	return (0);
}

/*
 * Turn "TLSv1.2,TLSv1.3" (commas or spaces) into a version range; TLS 1.0
 * and 1.1 are refused: they are broken and no Eureka client needs them.
 */
static int
tls_parse_protocols(const struct tls_conf *tc, int *minv, int *maxv,
    char **cause)
{
	const char	*list = tc->protocols;
	char		*copy, *p, *tok;
	int		 v, rc = 0;

	if (list == NULL || *list == '\0')
		list = TLS_PROTOCOLS_DEFAULT;
	*minv = *maxv = 0;
	copy = p = xstrdup(list);
	while (rc == 0 && (tok = strsep(&p, ", ")) != NULL) {
		if (*tok == '\0')
			continue;
		if (strcasecmp(tok, "TLSv1.2") == 0)
			v = TLS1_2_VERSION;
		else if (strcasecmp(tok, "TLSv1.3") == 0)
			v = TLS1_3_VERSION;
		else if (strcasecmp(tok, "TLSv1") == 0 ||
		    strcasecmp(tok, "TLSv1.0") == 0 ||
		    strcasecmp(tok, "TLSv1.1") == 0 ||
		    strncasecmp(tok, "SSLv", 4) == 0) {
			xasprintf(cause, "%s.enabled-protocols: %s is not "
			    "supported (TLSv1.2 and TLSv1.3 only)", tc->prefix,
			    tok);
			rc = -1;
			break;
		} else {
			xasprintf(cause, "%s.enabled-protocols: unknown "
			    "protocol '%s' (TLSv1.2, TLSv1.3)", tc->prefix,
			    tok);
			rc = -1;
			break;
		}
		if (*minv == 0 || v < *minv)
			*minv = v;
		if (v > *maxv)
			*maxv = v;
	}
	free(copy);
	if (rc == 0 && *minv == 0) {
		xasprintf(cause, "%s.enabled-protocols: empty", tc->prefix);
		rc = -1;
	}
	return (rc);
}

/* A context with the settings both sides share; NULL with *cause. */
static SSL_CTX *
tls_ctx_base(const struct tls_conf *tc, const SSL_METHOD *m, char **cause)
{
	SSL_CTX		*ctx;
	char		 err[256];
	int		 minv, maxv;

	if (tls_parse_protocols(tc, &minv, &maxv, cause) != 0)
		return (NULL);
	if ((ctx = SSL_CTX_new(m)) == NULL) {
		xasprintf(cause, "%s: SSL_CTX_new: %s", tc->prefix,
		    tls_openssl_error(err, sizeof err));
		return (NULL);
	}
	SSL_CTX_set_min_proto_version(ctx, minv);
	SSL_CTX_set_max_proto_version(ctx, maxv);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_set_cipher_list(ctx, tc->ciphers != NULL &&
	    *tc->ciphers != '\0' ? tc->ciphers : TLS_CIPHERS_DEFAULT) != 1) {
		xasprintf(cause, "%s.ciphers: no usable cipher in '%s'",
		    tc->prefix, tc->ciphers != NULL ? tc->ciphers : "");
		ERR_clear_error();
		SSL_CTX_free(ctx);
		return (NULL);
	}
	return (ctx);
}

/* The key is not the certificate's: say so (-1). */
static int
tls_key_mismatch(const struct tls_conf *tc, char **cause)
{
	xasprintf(cause, "%s.certificate-private-key: %s does not match "
	    "%s.certificate %s", tc->prefix, tc->private_key, tc->prefix,
	    tc->certificate);
	ERR_clear_error();
	return (-1);
}

/* Load the certificate chain and its key, and check that they match. */
static int
tls_load_identity(SSL_CTX *ctx, const struct tls_conf *tc, char **cause)
{
	char		err[256];
	unsigned long	e;

	if (tls_check_file(tc, "certificate", tc->certificate, cause) != 0)
		return (-1);
	if (tc->private_key == NULL || *tc->private_key == '\0') {
		xasprintf(cause, "%s.certificate-private-key: not set (needed "
		    "with %s.certificate)", tc->prefix, tc->prefix);
		return (-1);
	}
	if (tls_check_file(tc, "certificate-private-key", tc->private_key,
	    cause) != 0)
		return (-1);
	if (SSL_CTX_use_certificate_chain_file(ctx, tc->certificate) != 1) {
		xasprintf(cause, "%s.certificate: %s: not a usable PEM "
		    "certificate chain (%s)", tc->prefix, tc->certificate,
		    tls_openssl_error(err, sizeof err));
		return (-1);
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, tc->private_key,
	    SSL_FILETYPE_PEM) != 1) {
		e = ERR_peek_last_error();
		if (ERR_GET_LIB(e) == ERR_LIB_X509 &&
		    ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH)
			return (tls_key_mismatch(tc, cause));
		xasprintf(cause, "%s.certificate-private-key: %s: not a usable "
		    "PEM private key (%s)", tc->prefix, tc->private_key,
		    tls_openssl_error(err, sizeof err));
		return (-1);
	}
	if (SSL_CTX_check_private_key(ctx) != 1)
		return (tls_key_mismatch(tc, cause));
	return (0);
}

/* Load the CA bundle certificates are verified against. */
static int
tls_load_trust(SSL_CTX *ctx, const struct tls_conf *tc, char **cause)
{
	char	err[256];

	if (tls_check_file(tc, "trust-certificate", tc->trust, cause) != 0)
		return (-1);
	if (SSL_CTX_load_verify_locations(ctx, tc->trust, NULL) != 1) {
		xasprintf(cause, "%s.trust-certificate: %s: not a usable PEM "
		    "CA bundle (%s)", tc->prefix, tc->trust,
		    tls_openssl_error(err, sizeof err));
		return (-1);
	}
	return (0);
}

/* Parse none, want or need (Spring's server.ssl.client-auth). */
int
tls_parse_client_auth(const char *s, enum tls_client_auth *out)
{
	if (s == NULL || *s == '\0' || strcasecmp(s, "none") == 0)
		*out = TLS_CLIENT_AUTH_NONE;
	else if (strcasecmp(s, "want") == 0)
		*out = TLS_CLIENT_AUTH_WANT;
	else if (strcasecmp(s, "need") == 0)
		*out = TLS_CLIENT_AUTH_NEED;
	else
		return (-1);
	return (0);
}

/* Under client-auth want, any certificate (or none) completes the handshake. */
static int
tls_want_verify_cb(int ok, X509_STORE_CTX *store)
{
	(void)ok;
	(void)store;
	return (1);
}

/* The listener's context: identity, protocols, client certificates. */
SSL_CTX *
tls_server_ctx_new(const struct tls_conf *tc, char **cause)
{
	SSL_CTX			*ctx;
	STACK_OF(X509_NAME)	*names;
	static const unsigned char sid[] = "heurekad";

	if (tc->certificate == NULL || *tc->certificate == '\0') {
		xasprintf(cause, "%s.certificate: not set (needed with "
		    "%s.enabled)", tc->prefix, tc->prefix);
		return (NULL);
	}
	if ((ctx = tls_ctx_base(tc, TLS_server_method(), cause)) == NULL)
		return (NULL);
	if (tls_load_identity(ctx, tc, cause) != 0)
		goto fail;
	SSL_CTX_set_session_id_context(ctx, sid, sizeof sid - 1);
	if (tc->client_auth != TLS_CLIENT_AUTH_NONE &&
	    (tc->trust == NULL || *tc->trust == '\0')) {
		xasprintf(cause, "%s.trust-certificate: not set (needed with "
		    "%s.client-auth %s)", tc->prefix, tc->prefix,
		    tc->client_auth == TLS_CLIENT_AUTH_NEED ? "need" : "want");
		goto fail;
	}
	if (tc->trust != NULL && *tc->trust != '\0') {
		if (tls_load_trust(ctx, tc, cause) != 0)
			goto fail;
		/* Tell clients which CAs we accept. */
		if ((names = SSL_load_client_CA_file(tc->trust)) != NULL)
			SSL_CTX_set_client_CA_list(ctx, names);
		ERR_clear_error();
	}
	switch (tc->client_auth) {
	case TLS_CLIENT_AUTH_NONE:
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
		break;
	case TLS_CLIENT_AUTH_WANT:
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, tls_want_verify_cb);
		break;
	case TLS_CLIENT_AUTH_NEED:
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
		    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
		break;
	}
	return (ctx);
fail:
	SSL_CTX_free(ctx);
	return (NULL);
}

/* An outgoing context: verification, and a client certificate if given. */
SSL_CTX *
tls_client_ctx_new(const struct tls_conf *tc, char **cause)
{
	SSL_CTX	*ctx;
	char	 err[256];

	if ((ctx = tls_ctx_base(tc, TLS_client_method(), cause)) == NULL)
		return (NULL);
	if (tc->certificate != NULL && *tc->certificate != '\0' &&
	    tls_load_identity(ctx, tc, cause) != 0)
		goto fail;
	if (tc->trust != NULL && *tc->trust != '\0') {
		if (tls_load_trust(ctx, tc, cause) != 0)
			goto fail;
	} else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
		xasprintf(cause, "%s: cannot load the system's CA "
		    "certificates (%s)", tc->prefix,
		    tls_openssl_error(err, sizeof err));
		goto fail;
	}
	SSL_CTX_set_verify(ctx, tc->insecure ? SSL_VERIFY_NONE :
	    SSL_VERIFY_PEER, NULL);
	return (ctx);
fail:
	SSL_CTX_free(ctx);
	return (NULL);
}

/* Drop our reference; open connections keep theirs. */
void
tls_ctx_free(SSL_CTX *ctx)
{
	if (ctx != NULL)
		SSL_CTX_free(ctx);
}

/* A server-side SSL bufferevent on a context (evhttp sets the socket). */
struct bufferevent *
tls_bev_accept(struct event_base *base, SSL_CTX *ctx)
{
	struct bufferevent	*bev;
	SSL			*ssl;

	if ((ssl = SSL_new(ctx)) == NULL) {
		ERR_clear_error();
		return (NULL);
	}
	bev = bufferevent_openssl_socket_new(base, -1, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		SSL_free(ssl);
		return (NULL);
	}
	/* Clients that just close the socket are not an error. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return (bev);
}

/* Whether bev's handshake is done; see tls.h. */
int
tls_bev_handshaken(struct bufferevent *bev)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(bev);

	return (ssl == NULL || SSL_is_init_finished(ssl));
}

/* Open an HTTP connection, over TLS when ctx is set (see tls.h). */
struct evhttp_connection *
tls_http_connection(struct event_base *base, struct evdns_base *dns,
    SSL_CTX *ctx, const char *host, const char *addr, unsigned short port)
{
	struct evhttp_connection	*evc;
	struct bufferevent		*bev;
	struct in6_addr			 a6;
	SSL				*ssl;
	const char			*to = addr != NULL ? addr : host;
	int				 literal;

	if (ctx == NULL)
		return (evhttp_connection_base_new(base, dns, to, port));
	if ((ssl = SSL_new(ctx)) == NULL) {
		ERR_clear_error();
		return (NULL);
	}
	/* SNI is for names only (RFC 6066); the check takes both. */
	literal = inet_pton(AF_INET, host, &a6) == 1 ||
	    inet_pton(AF_INET6, host, &a6) == 1;
	if (!literal)
		SSL_set_tlsext_host_name(ssl, host);
	if (SSL_get_verify_mode(ssl) != SSL_VERIFY_NONE &&
	    SSL_set1_host(ssl, host) != 1) {
		ERR_clear_error();
		SSL_free(ssl);
		return (NULL);
	}
	bev = bufferevent_openssl_socket_new(base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		SSL_free(ssl);
		return (NULL);
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	evc = evhttp_connection_base_bufferevent_new(base, dns, bev, to, port);
	if (evc == NULL)
		bufferevent_free(bev);
	return (evc);
}

/* The certificate check that failed on this connection, if any. */
const char *
tls_connection_verify_error(struct evhttp_connection *evc)
{
	struct bufferevent	*bev;
	SSL			*ssl;
	long			 r;

	if (evc == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evc)) == NULL ||
	    (ssl = bufferevent_openssl_get_ssl(bev)) == NULL ||
	    (r = SSL_get_verify_result(ssl)) == X509_V_OK)
		return (NULL);
	return (X509_verify_cert_error_string(r));
}

/*
 * The TLS error that ended this connection's handshake (a plain HTTP
 * server answering a ClientHello, a protocol version refused), in buf;
 * NULL if there was none. Consumes the connection's OpenSSL error.
 */
const char *
tls_connection_error(struct evhttp_connection *evc, char *buf, size_t len)
{
	struct bufferevent	*bev;
	unsigned long		 e;

	if (evc == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evc)) == NULL ||
	    bufferevent_openssl_get_ssl(bev) == NULL ||
	    (e = bufferevent_get_openssl_error(bev)) == 0)
		return (NULL);
	ERR_error_string_n(e, buf, len);
	return (buf);
}

/* Did this request's connection present a verified client certificate? */
int
tls_request_peer_verified(struct evhttp_request *req)
{
	struct evhttp_connection	*evc;
	struct bufferevent		*bev;
	SSL				*ssl;

	if ((evc = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evc)) == NULL ||
	    (ssl = bufferevent_openssl_get_ssl(bev)) == NULL)
		return (0);
	return (SSL_get0_peer_certificate(ssl) != NULL &&
	    SSL_get_verify_result(ssl) == X509_V_OK);
}
