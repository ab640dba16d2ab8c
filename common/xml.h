/*
 * xml.h: Eureka's XML codec (XStream XmlXStream + Converters, spec §4.2) and
 * its compact variant (§4.3). Output is written by our own escaping writer,
 * pretty-printed exactly as XStream's PrettyPrintWriter (two-space indent,
 * no declaration, no trailing newline). Input is parsed with expat, which
 * never fetches entities; documents with a DOCTYPE or entity declarations
 * are refused, depth and sizes are capped. Decoders return NULL with a
 * *cause (caller frees) on bad input; results belong to the caller. They
 * read no clock: `now` (wall ms) is what absent timestamps become.
 */
#ifndef XML_H
#define XML_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"

#define XML_MAX_DEPTH	32

/* The stitching interface of codec.h, for the server's cache. */
extern const struct codec xml_codec;

/* <instance>...</instance> at the given indent level (2 spaces each). */
void	xml_encode_instance(struct buf *, const struct instance *, int flags,
	    int indent);

/*
 * Building blocks for stitched bodies, as in json.h. The separator rule:
 * every piece starts with its own indentation and neither starts nor ends
 * with '\n'; the caller writes exactly one '\n' between two consecutive
 * pieces. So a registry is
 *
 *	apps_open  '\n' app-fragment  '\n' app-fragment ...  '\n' apps_close
 *
 * (with no application: apps_open '\n' apps_close), where an application
 * fragment at indent 1 is
 *
 *	app_open(1)  '\n' instance(2)  '\n' instance(2) ...  '\n' app_close(1)
 *
 * xml_encode_application() and xml_encode_applications() are built exactly
 * this way, so stitched and whole bodies are byte-identical. In compact
 * form versions__delta and apps__hashcode come after the applications
 * (Jackson bean order), which is why apps_close takes them too.
 */
void	xml_app_open(struct buf *, const char *name, int indent);
void	xml_app_close(struct buf *, int indent);
void	xml_apps_open(struct buf *, int flags, int64_t version,
	    const char *hashcode);
void	xml_apps_close(struct buf *, int flags, int64_t version,
	    const char *hashcode);

/* Whole documents (root elements at indent 0). */
void	xml_encode_application(struct buf *, const struct application *,
	    int flags, int indent);
void	xml_encode_applications(struct buf *, const struct applications *,
	    int flags);

struct instance		*xml_decode_instance(const char *, size_t, int64_t now,
			    char **);
struct application	*xml_decode_application(const char *, size_t,
			    int64_t now, char **);
struct applications	*xml_decode_applications(const char *, size_t,
			    int64_t now, char **);

/*
 * Append text with XStream's escaping (& < > " ' and CR as &#xd;; other
 * control characters as &#x..; as PrettyPrintWriter's quirks mode does).
 * Invalid UTF-8 becomes U+FFFD, as Java would have decoded it.
 */
void	xml_add_escaped(struct buf *, const char *);

/*
 * XmlFriendlyNameCoder: append name with '_' as "__" and '$' as "_-".
 * Returns -1 (and appends nothing) when the coded name would not be a
 * safe XML element name; see xml.c for the rule.
 */
int	xml_add_name(struct buf *, const char *);

#endif
