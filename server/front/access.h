/*
 * access.h: who may do what (docs/security.md). Every request needs one
 * of four roles (open, read, write, peer): the role of the route rest.c's
 * router resolves for it (rest_route_resolve), judged once, in the
 * dispatcher, by access_check, before any handler runs: nothing in the
 * registry changes on a refusal.
 *
 * Authentication is HTTP Basic with Spring Security's user
 * (spring.security.user.name/password) and heureka's peer identity
 * (heureka.security.peer.*, the user's by default), or a verified client
 * certificate from the peer CA (the TLS module's answer, given through
 * access_set_cert_check). It is on when a user password is configured;
 * off (the default), every caller may do everything, as before.
 */
#ifndef ACCESS_H
#define ACCESS_H

struct hreq;

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>

struct config;
struct access;

enum access_kind {
	ACCESS_OPEN = 0,	/* /health probes: never asks */
	ACCESS_READ,		/* GETs, the dashboard, /metrics, /info */
	ACCESS_WRITE,		/* register, heartbeat, cancel, status, ... */
	ACCESS_PEER,		/* peerreplication/, {base}heureka/ */
};

enum access_verdict {
	ACCESS_OK = 0,
	ACCESS_DENIED_401,	/* no or wrong credentials */
	ACCESS_DENIED_403,	/* a known identity without the right */
	ACCESS_THROTTLED,	/* 429: too many failed authentications */
};

/* From the configuration (its passwords are hashed, not kept). */
struct access	*access_new(const struct config *);
void		 access_free(struct access *);		/* NULL is fine */
/* New rules from cf (SIGHUP: a rotated password), the cert check kept. */
void		 access_reload(struct access *, const struct config *);
int		 access_enabled(const struct access *);
/*
 * The TLS module's "this request's connection presented a verified
 * certificate from the peer CA"; NULL (the default) means no caller is a
 * peer by certificate.
 */
void		 access_set_cert_check(struct access *,
		     int (*)(struct hreq *));

/*
 * Judge a request of kind k at now (monotonic ms). *peer is set to 1
 * when the caller may act as a peer (its x-netflix-discovery-replication
 * header is honoured): always with authentication off, else only for a
 * peer identity. A wrong password counts against the client's address;
 * past heureka.security.auth-failure-burst, a request with credentials
 * is ACCESS_THROTTLED, *retry_ms until it may try again, and its
 * credentials are not compared.
 */
enum access_verdict access_check(struct access *, struct hreq *,
		     enum access_kind, int64_t now, int *peer,
		     int64_t *retry_ms);

/*
 * access_check, and who asked into user (userlen bytes): the user's name,
 * "peer" for the peer identity, else "anonymous" (always with
 * authentication off). For the audit (audit.h).
 */
enum access_verdict access_check_user(struct access *,
		     struct hreq *, enum access_kind, int64_t now,
		     int *peer, int64_t *retry_ms, char *user, size_t userlen);

/*
 * Send the 401 (with WWW-Authenticate), 403, or 429 (Retry-After from
 * retry_ms) for a refusal.
 */
void		 access_reply(struct hreq *, enum access_verdict,
		     int64_t retry_ms);
/*
 * The failure limiter's key for a client address: the address, an
 * IPv4-mapped one as IPv4, other IPv6 as "prefix::/64". Exposed for the
 * unit test.
 */
void		 access_client_key(const char *addr, char *out, size_t len);

/*
 * Split an Authorization header's Basic credentials into name and
 * password (NUL-terminated, within out of outlen bytes); -1 if it is not
 * well-formed Basic. Exposed for the unit test.
 */
int		 access_parse_basic(const char *header, char *out,
		     size_t outlen, const char **name, const char **password);

#endif
