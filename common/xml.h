/*
 * xml.h: Eureka's XML codec (XStream XmlXStream + Converters, spec §4.2) and
 * its compact variant (§4.3). Output is written by our own escaping writer,
 * pretty-printed exactly as XStream's PrettyPrintWriter (two-space indent,
 * no declaration, no trailing newline). Input is parsed with expat, which
 * never fetches entities; documents with a DOCTYPE or entity declarations
 * are refused, depth and sizes are capped. Decoders return NULL with a
 * *cause (caller frees) on bad input; results belong to the caller.
 */
#ifndef XML_H
#define XML_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "instance.h"

#define XML_MAX_DEPTH	32

/* <instance>...</instance> at the given indent level (2 spaces each). */
void	xml_encode_instance(struct buf *, const struct instance *, int flags,
	    int indent);

/*
 * Building blocks for stitched bodies, as in json.h. Pieces are joined with
 * '\n' by the caller: apps_open, then each application fragment (encoded at
 * indent 1), then apps_close. An application fragment is app_open (indent),
 * instances at indent + 1, app_close.
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

struct instance		*xml_decode_instance(const char *, size_t, char **);
struct application	*xml_decode_application(const char *, size_t, char **);
struct applications	*xml_decode_applications(const char *, size_t, char **);

/* Append text with XStream's escaping (& < > " ' and CR). */
void	xml_add_escaped(struct buf *, const char *);

#endif
