/*
 * tls.h: heureka's one TLS module (OpenSSL 3 through libevent's
 * bufferevent_openssl), shared by the server's listener, the peers'
 * outgoing connections and libheureka. It builds SSL_CTXs from PEM files
 * (TLS 1.2 and 1.3 only, modern ciphers), wraps accepted and outgoing
 * connections in SSL bufferevents (SNI and host-name checks with
 * SSL_set1_host on the client side), and tells a request handler whether
 * its connection presented a verified client certificate.
 *
 * Ownership: tls_*_ctx_new gives a context (free it with tls_ctx_free);
 * every SSL made from it holds a reference, so freeing the context while
 * connections are open is safe (SIGHUP reload swaps contexts that way).
 */
#ifndef TLS_H
#define TLS_H

#include <openssl/ssl.h>

struct event_base;
struct evdns_base;
struct evhttp_connection;
struct evhttp_request;
struct bufferevent;

enum tls_client_auth {
	TLS_CLIENT_AUTH_NONE = 0,	/* no client certificate asked */
	TLS_CLIENT_AUTH_WANT,		/* asked; none or unverified is fine */
	TLS_CLIENT_AUTH_NEED,		/* a verified one or no handshake */
};

struct tls_conf {
	const char		*prefix;	/* key prefix for messages,
						   e.g. "server.ssl" */
	const char		*certificate;	/* PEM chain, or NULL */
	const char		*private_key;	/* PEM, or NULL */
	const char		*trust;		/* CA bundle, or NULL */
	const char		*protocols;	/* "TLSv1.2,TLSv1.3" (NULL) */
	const char		*ciphers;	/* TLS 1.2 list; NULL: ours */
	enum tls_client_auth	 client_auth;	/* server side */
	int			 insecure;	/* client: skip verification */
};

/*
 * Contexts. The server needs certificate and private_key; trust is the CA
 * bundle client certificates must chain to (required for want/need). A
 * client verifies the server against trust (the system's CAs if NULL)
 * unless insecure is set, and presents certificate/private_key if given.
 * Errors name the key ("server.ssl.certificate: ...") in *cause.
 */
SSL_CTX	*tls_server_ctx_new(const struct tls_conf *, char **cause);
SSL_CTX	*tls_client_ctx_new(const struct tls_conf *, char **cause);
void	 tls_ctx_free(SSL_CTX *);			/* NULL is fine */
int	 tls_parse_client_auth(const char *, enum tls_client_auth *);

/* A server-side SSL bufferevent for evhttp_set_bevcb (NULL on failure). */
struct bufferevent *tls_bev_accept(struct event_base *, SSL_CTX *);
/*
 * Whether bev's TLS handshake is done (1 for a bufferevent without TLS):
 * the header-time guard's handshake deadline asks.
 */
int	 tls_bev_handshaken(struct bufferevent *);

/*
 * The one way heureka opens an outgoing HTTP connection (peers and
 * libheureka): plain when ctx is NULL, TLS otherwise with SNI and the
 * certificate checked against host (a name or an IP literal). Connects to
 * addr (numeric, or resolved through dns when that is given) or to host
 * when addr is NULL.
 */
struct evhttp_connection *tls_http_connection(struct event_base *,
	    struct evdns_base *, SSL_CTX *, const char *host, const char *addr,
	    unsigned short port);

/*
 * Why the last TLS handshake on a connection failed certificate checks
 * ("certificate has expired", "hostname mismatch", ...), or NULL when it
 * is not TLS or nothing failed; for log lines.
 */
const char *tls_connection_verify_error(struct evhttp_connection *);
/* The OpenSSL error that ended the connection's handshake, or NULL. */
const char *tls_connection_error(struct evhttp_connection *, char *,
	    size_t);

/*
 * 1 if the request's connection is TLS and presented a client certificate
 * that verified against the server's trust bundle (server.ssl.trust-
 * certificate, the peer CA), 0 otherwise (plaintext, no certificate, or
 * one that did not verify under client-auth want).
 */
int	 tls_request_peer_verified(struct evhttp_request *);

#endif
