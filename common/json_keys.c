/*
 * json_keys.c: the tables behind json_keys.h's key lookup, built once per
 * process, and the check that each key naming an instance field spells
 * it as instance_fields.c's table does (so the two cannot drift apart).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "instance_fields.h"
#include "json_keys.h"
#include "log.h"

#define JSON_KEY_TEXT(id, text, field)	text,
const char *const json_known_keys[] = { JSON_KEYS(JSON_KEY_TEXT) };
#undef JSON_KEY_TEXT

/* The instance field (instance_fields.h) each key names, or IF_NONE. */
#define JSON_KEY_FIELD(id, text, field)	field,
const uint8_t json_key_field[] = { JSON_KEYS(JSON_KEY_FIELD) IF_NONE };
#undef JSON_KEY_FIELD


uint8_t		json_key_head[JSON_KEY_SLOTS];
uint8_t		json_key_next[JSON_NKNOWN];
uint8_t		json_key_len[JSON_NKNOWN];
uint64_t	json_key_w[JSON_NKNOWN][4];

/*
 * Chain every known key under its slot, checking the keys that name a
 * field against instance_fields.c's table.
 */
void
json_keys_init(void)
{
	size_t	i, len, h;

	for (i = JSON_NKNOWN; i-- > 0;) {
		len = strlen(json_known_keys[i]);
		/* A bad table entry is left out: the key reads as unknown. */
		if (len == 0 || len > JSON_KEY_MAXLEN) {
			fatalx_server("%s: key %s too long", __func__,
			    json_known_keys[i]);
			continue;
		}
		/* A key that names a field spells it as the model's table. */
		if (json_key_field[i] != IF_NONE &&
		    strcmp(ifield_table[json_key_field[i]].name,
		    json_known_keys[i]) != 0) {
			fatalx_server("%s: key %s is not field %s", __func__,
			    json_known_keys[i],
			    ifield_table[json_key_field[i]].name);
			continue;
		}
		json_key_len[i] = (uint8_t)len;
		json_key_words(json_known_keys[i], len, json_key_w[i]);
		h = json_key_slot(json_key_w[i][0], len);
		json_key_next[i] = json_key_head[h];
		json_key_head[h] = (uint8_t)(i + 1);
	}
}

