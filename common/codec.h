/*
 * codec.h: what the two wire formats (json.h, xml.h) share: the encoding
 * flags, and the per-format interface the server's response cache stitches
 * bodies with, so that it has no branch per format.
 */
#ifndef CODEC_H
#define CODEC_H

#include <stdint.h>

#include "buf.h"
#include "instance.h"

#define CODEC_FULL	0
#define CODEC_COMPACT	1	/* X-Eureka-Accept: compact (§4.3) */

/*
 * One wire format's stitching pieces (json_codec, xml_codec). Pieces at
 * one level (the applications of a registry, the instances of an
 * application) are joined with sep; when sep_around is set (XML, whose
 * pieces start on their own lines) sep also follows the opening piece and
 * precedes the closing one, even around an empty list. So a registry is
 * apps_open, its applications (app_open at indent 1, the instances at
 * indent 2, app_close), apps_close; encode_applications writes exactly
 * that in one call. An application served as a document of its own
 * (GET apps/{app}) is at indent 0, between app_doc_open and app_doc_close.
 * Indents count levels; a format without indentation ignores them.
 */
struct codec {
	const char	*sep;
	int		 sep_around;
	const char	*app_doc_open;
	const char	*app_doc_close;
	void		(*apps_open)(struct buf *, int flags, int64_t version,
			    const char *hashcode);
	void		(*apps_close)(struct buf *, int flags, int64_t version,
			    const char *hashcode);
	void		(*app_open)(struct buf *, const char *name,
			    int indent);
	void		(*app_close)(struct buf *, int indent);
	void		(*encode_instance)(struct buf *,
			    const struct instance *, int flags, int indent);
	void		(*encode_applications)(struct buf *,
			    const struct applications *, int flags);
};

#endif
