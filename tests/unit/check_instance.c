/*
 * check_instance.c: unit tests for the data model in common/instance.c:
 * enum spellings, the §0 instance id fallback, ordered metadata maps, the
 * application/registry containers, the reconcile hash code (§5.10), the
 * packed compact copy (one allocation) and trimmed maps.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "instance.h"
#include "testutil.h"
#include "xmalloc.h"

/* An instance with a host name and, optionally, an explicit id. */
static struct instance *
mk(const char *host, const char *id, enum instance_status st)
{
	struct instance	*in = instance_new();

	in->host_name = xstrdup(host);
	if (id != NULL)
		in->instance_id = xstrdup(id);
	in->status = st;
	return (in);
}

START_TEST(test_utf8_valid)
{
	ck_assert(utf8_valid(""));
	ck_assert(utf8_valid("plain ascii"));
	ck_assert(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	ck_assert(!utf8_valid("\xc0\x80"));		/* overlong NUL */
	ck_assert(!utf8_valid("\xe0\x80\xaf"));	/* overlong '/' */
	ck_assert(!utf8_valid("\xed\xa0\x80"));	/* surrogate */
	ck_assert(!utf8_valid("\xf4\x90\x80\x80"));	/* > U+10FFFF */
	ck_assert(!utf8_valid("\xc3"));			/* truncated */
	ck_assert(!utf8_valid("\xff"));
	ck_assert(!utf8_valid("a\x80" "b"));		/* lone continuation */
	/* The eight-byte ASCII skip: a bad byte at every offset is found. */
	{
		char	s[40];
		size_t	i;

		for (i = 0; i < 32; i++) {
			memset(s, 'a', 32);
			s[32] = '\0';
			s[i] = (char)0xe0;
			ck_assert_msg(!utf8_valid(s), "offset %zu", i);
			ck_assert(!utf8_valid_n(s, 32));
			ck_assert(utf8_valid_n(s, i));
		}
		/* A sequence cut by n is truncated, the bytes after ignored. */
		ck_assert(!utf8_valid_n("abcdefgh\xc3\xa9", 9));
		ck_assert(utf8_valid_n("abcdefgh\xc3\xa9", 10));
		/* A NUL is a byte like any other: the caller refuses it. */
		ck_assert(utf8_valid_n("a\0b", 3));
	}
}
END_TEST

START_TEST(test_enums)
{
	enum instance_status	s;
	enum action_type	a;
	enum dc_name		d;
	static const char	*near[] = { "", "U", "UPP", "UN", "UNKNOWNX",
	    "D", "DOWN ", "S", "STARTIN", "O", "OUT_OF_SERVICE_", "X", "Up" };
	int			 i;

	ck_assert_str_eq(instance_status_name(STATUS_OUT_OF_SERVICE),
	    "OUT_OF_SERVICE");
	ck_assert_str_eq(instance_status_name((enum instance_status)42),
	    "UNKNOWN");
	ck_assert_int_eq(instance_status_parse("STARTING", &s), 0);
	ck_assert_int_eq(s, STATUS_STARTING);
	ck_assert_int_eq(instance_status_parse("up", &s), -1);
	/* Every name to its own value; no prefix, extension or case. */
	for (i = 0; i < STATUS_COUNT; i++) {
		s = STATUS_COUNT;
		ck_assert_int_eq(instance_status_parse(
		    instance_status_name((enum instance_status)i), &s), 0);
		ck_assert_int_eq(s, i);
	}
	for (i = 0; i < (int)(sizeof near / sizeof near[0]); i++)
		ck_assert_msg(instance_status_parse(near[i], &s) == -1,
		    "%s parsed", near[i]);
	ck_assert_ptr_null(action_type_name(ACTION_NONE));
	ck_assert_str_eq(action_type_name(ACTION_DELETED), "DELETED");
	ck_assert_int_eq(action_type_parse("MODIFIED", &a), 0);
	ck_assert_int_eq(a, ACTION_MODIFIED);
	ck_assert_int_eq(action_type_parse("Added", &a), -1);
	ck_assert_str_eq(dc_name_str(DC_AMAZON), "Amazon");
	ck_assert_int_eq(dc_name_parse("Netflix", &d), 0);
	ck_assert_int_eq(d, DC_NETFLIX);
	ck_assert_int_eq(dc_name_parse("amazon", &d), -1);
}
END_TEST

START_TEST(test_defaults)
{
	struct instance	*in = instance_new();

	ck_assert_int_eq(in->status, STATUS_UP);
	ck_assert_int_eq(in->overridden_status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->port, 7001);
	ck_assert_int_eq(in->port_enabled, 1);
	ck_assert_int_eq(in->secure_port, 7002);
	ck_assert_int_eq(in->secure_port_enabled, 0);
	ck_assert_int_eq(in->country_id, 1);
	ck_assert_int_eq(in->lease.renewal_interval_secs, 30);
	ck_assert_int_eq(in->lease.duration_secs, 90);
	ck_assert_int_eq(in->action_type, ACTION_NONE);
	ck_assert_ptr_null(in->sid);
	instance_free(in);
	instance_free(NULL);
}
END_TEST

/*
 * The decode defaults both codecs apply, with the time injected: absent
 * timestamps become now, a lease interval or duration <= 0 its default,
 * and Spring Cloud's metadata.instanceId rewrite (§4.1.7).
 */
START_TEST(test_apply_defaults)
{
	struct instance	*in = instance_decode_new();

	ck_assert_int_eq(in->last_updated_ts, INSTANCE_TS_ABSENT);
	ck_assert_int_eq(in->last_dirty_ts, INSTANCE_TS_ABSENT);
	ck_assert_int_eq(in->lease.duration_secs, LEASE_DEFAULT_DURATION_SECS);
	in->last_dirty_ts = 42;			/* given by the document */
	in->lease.renewal_interval_secs = -3;
	in->lease.duration_secs = 0;
	in->host_name = xstrdup("h");
	kvlist_set(&in->metadata, "instanceId", "svc:1");
	instance_apply_defaults(in, 1234567);
	ck_assert_int_eq(in->last_updated_ts, 1234567);
	ck_assert_int_eq(in->last_dirty_ts, 42);
	ck_assert_int_eq(in->lease.renewal_interval_secs, 30);
	ck_assert_int_eq(in->lease.duration_secs, 90);
	ck_assert_str_eq(in->instance_id, "h:svc:1");
	instance_free(in);

	/* What the document set stays: a real id, a positive lease. */
	in = instance_decode_new();
	in->instance_id = xstrdup("mine");
	in->host_name = xstrdup("h");
	in->lease.duration_secs = 5;
	kvlist_set(&in->metadata, "instanceId", "other");
	instance_apply_defaults(in, 7);
	ck_assert_str_eq(in->instance_id, "mine");
	ck_assert_int_eq(in->lease.duration_secs, 5);
	ck_assert_int_eq(in->last_dirty_ts, 7);
	instance_free(in);

	/* Already prefixed by the host name, or no host: taken as it is. */
	in = instance_decode_new();
	in->host_name = xstrdup("h");
	kvlist_set(&in->metadata, "instanceId", "h:x");
	instance_apply_defaults(in, 7);
	ck_assert_str_eq(in->instance_id, "h:x");
	instance_free(in);
}
END_TEST

START_TEST(test_instance_id_rule)
{
	struct instance	*in = mk("host1", NULL, STATUS_UP);

	/* 3. host name when nothing else is set. */
	ck_assert_str_eq(instance_id(in), "host1");
	/* 2. Amazon instance-id beats the host name... */
	in->dc_name = DC_AMAZON;
	kvlist_set(&in->dc_metadata, "instance-id", "i-123");
	ck_assert_str_eq(instance_id(in), "i-123");
	/* ...but only for Amazon... */
	in->dc_name = DC_MYOWN;
	ck_assert_str_eq(instance_id(in), "host1");
	/* ...and only when non-empty. */
	in->dc_name = DC_AMAZON;
	kvlist_set(&in->dc_metadata, "instance-id", "");
	ck_assert_str_eq(instance_id(in), "host1");
	kvlist_set(&in->dc_metadata, "instance-id", "i-123");
	/* 1. an empty instanceId does not count, a non-empty one wins. */
	in->instance_id = xstrdup("");
	ck_assert_str_eq(instance_id(in), "i-123");
	str_replace(&in->instance_id, "explicit");
	ck_assert_str_eq(instance_id(in), "explicit");
	instance_free(in);

	/* Never NULL, even with nothing set. */
	in = instance_new();
	ck_assert_str_eq(instance_id(in), "");
	instance_free(in);
}
END_TEST

START_TEST(test_dup)
{
	struct instance	*in = mk("h", "id", STATUS_DOWN), *d;

	in->app = xstrdup("APP");
	kvlist_set(&in->metadata, "a", "1");
	kvlist_set(&in->dc_metadata, "instance-id", "i-1");
	in->vip_address = xstrdup("vip");
	d = instance_dup(in);
	ck_assert_ptr_ne(d->host_name, in->host_name);
	ck_assert_str_eq(d->host_name, "h");
	ck_assert_str_eq(d->app, "APP");
	ck_assert_ptr_ne(d->metadata.v, in->metadata.v);
	ck_assert_str_eq(kvlist_get(&d->metadata, "a"), "1");
	ck_assert_str_eq(kvlist_get(&d->dc_metadata, "instance-id"), "i-1");
	ck_assert_int_eq(d->status, STATUS_DOWN);
	ck_assert_ptr_null(d->asg_name);
	instance_free(in);
	ck_assert_str_eq(d->vip_address, "vip");	/* still valid */
	instance_free(d);
}
END_TEST

/*
 * instance_dup_compact: one allocation holding the fields a DELETED record
 * shows; its stored size is that allocation (what malloc handed out,
 * within its rounding); a dup of it is an ordinary instance again.
 */
START_TEST(test_dup_compact)
{
	struct instance	*in = mk("host-1.example.com", NULL, STATUS_DOWN);
	struct instance	*c, *d;
	size_t		 sz, usable;

	in->app = xstrdup("APP");
	in->ip_addr = xstrdup("10.0.0.1");
	in->home_page_url = xstrdup("http://host-1.example.com:8080/");
	in->vip_address = xstrdup("app-vip");
	in->secure_vip_address = xstrdup("app-vip");
	in->dc_name = DC_AMAZON;
	kvlist_set(&in->dc_metadata, "instance-id", "i-1");
	kvlist_set(&in->metadata, "k", "v");
	c = instance_dup_compact(in);
	ck_assert(c->packed);
	ck_assert(!in->packed);
	ck_assert_str_eq(c->instance_id, "i-1");	/* the id it showed */
	ck_assert_str_eq(instance_id(c), "i-1");
	ck_assert_str_eq(c->host_name, "host-1.example.com");
	ck_assert_str_eq(c->app, "APP");
	ck_assert_str_eq(c->ip_addr, "10.0.0.1");
	ck_assert_ptr_null(c->sid);
	ck_assert_ptr_eq(c->secure_vip_address, c->vip_address);
	ck_assert_str_eq(c->vip_address, "app-vip");
	ck_assert_uint_eq(c->metadata.n, 0);
	ck_assert_uint_eq(c->dc_metadata.n, 0);
	ck_assert_ptr_null(c->home_page_url);
	ck_assert_int_eq(c->status, STATUS_DOWN);
	/* Every string lies inside the one block. */
	sz = instance_stored_size(c);
	ck_assert_uint_lt(sz, instance_stored_size(in));
	ck_assert(c->instance_id > (char *)c);
	ck_assert(c->vip_address + strlen(c->vip_address) <
	    (char *)c + sz - INSTANCE_ALLOC_OVERHEAD);
	usable = malloc_usable_size(c);
	ck_assert_uint_ge(usable, sz - INSTANCE_ALLOC_OVERHEAD);
	ck_assert_uint_lt(usable, sz + INSTANCE_ALLOC_OVERHEAD);
	/* Scalars are written in place; a dup is unpacked. */
	c->action_type = ACTION_DELETED;
	d = instance_dup(c);
	ck_assert(!d->packed);
	ck_assert_ptr_ne(d->secure_vip_address, d->vip_address);
	ck_assert_str_eq(d->secure_vip_address, "app-vip");
	ck_assert_int_eq(d->action_type, ACTION_DELETED);
	str_replace(&d->host_name, "other");
	ck_assert_str_eq(c->host_name, "host-1.example.com");
	/* A compact copy of a compact copy is the same size. */
	instance_free(in);
	in = instance_dup_compact(c);
	ck_assert_uint_eq(instance_stored_size(in), sz);
	instance_free(in);
	instance_free(c);
	instance_free(d);
}
END_TEST

/*
 * instance_pack: a full copy in one block whose length the block keeps
 * (instance_stored_size answers it without measuring a string), equal to
 * what measuring every string gives; every string (40 metadata entries,
 * the last field) is copied whole, inside the block.
 */
START_TEST(test_pack_size_kept)
{
	struct instance	*in = mk("host-1.example.com", "id-1", STATUS_UP);
	struct instance	*p, *q;
	char		 k[32], v[64];
	size_t		 sz, usable;
	int		 i;

	in->app = xstrdup("APP");
	in->vip_address = xstrdup("vip");
	in->secure_vip_address = xstrdup("svip");
	for (i = 0; i < 40; i++) {
		snprintf(k, sizeof k, "key-%d", i);
		snprintf(v, sizeof v, "value-%d-%0*d", i, i, 0);
		kvlist_set(&in->metadata, k, v);
	}
	in->home_page_url = xstrdup("http://host-1.example.com:8080/");
	in->asg_name = xstrdup("asg-of-the-last-string");
	instance_trim(in);
	p = instance_pack(in);
	ck_assert(p->packed);
	sz = instance_stored_size(p);
	ck_assert_uint_eq(sz, p->packed_size + INSTANCE_ALLOC_OVERHEAD);
	usable = malloc_usable_size(p);
	ck_assert_uint_ge(usable, p->packed_size);
	ck_assert_uint_lt(usable, sz);
	/* Measured again (as a block without its length is): the same. */
	p->packed_size = 0;
	ck_assert_uint_eq(instance_stored_size(p), sz);
	for (i = 0; i < 40; i++) {
		snprintf(k, sizeof k, "key-%d", i);
		snprintf(v, sizeof v, "value-%d-%0*d", i, i, 0);
		ck_assert_str_eq(kvlist_get(&p->metadata, k), v);
	}
	ck_assert_str_eq(p->home_page_url, "http://host-1.example.com:8080/");
	ck_assert_str_eq(p->asg_name, "asg-of-the-last-string");
	ck_assert_str_eq(p->secure_vip_address, "svip");
	ck_assert(p->asg_name + strlen(p->asg_name) < (char *)p + sz -
	    INSTANCE_ALLOC_OVERHEAD);
	/* A block packed from a block is the same length; a dup keeps none. */
	q = instance_pack(p);
	ck_assert_uint_eq(instance_stored_size(q), sz);
	instance_free(q);
	q = instance_dup(p);
	ck_assert(!q->packed);
	ck_assert_uint_eq(q->packed_size, 0);
	instance_free(q);
	instance_free(p);
	instance_free(in);
}
END_TEST

/* instance_trim gives back the maps' spare capacity and keeps entries. */
START_TEST(test_trim)
{
	struct instance	*in = mk("h", "id", STATUS_UP);
	size_t		 before;

	kvlist_set(&in->metadata, "a", "1");
	kvlist_set(&in->metadata, "b", "2");
	kvlist_set(&in->dc_metadata, "x", "y");
	kvlist_clear(&in->dc_metadata);
	kvlist_set(&in->dc_metadata, "x", "y");
	ck_assert_uint_gt(in->metadata.cap, 2);
	before = instance_stored_size(in);
	instance_trim(in);
	ck_assert_uint_eq(in->metadata.cap, 2);
	ck_assert_uint_eq(in->dc_metadata.cap, 1);
	ck_assert_uint_eq(instance_stored_size(in), before -
	    5 * sizeof(struct kv));
	ck_assert_str_eq(kvlist_get(&in->metadata, "b"), "2");
	ck_assert_uint_ge(malloc_usable_size(in->metadata.v),
	    2 * sizeof(struct kv));
	/* It still grows, and an empty map holds no array. */
	kvlist_set(&in->metadata, "c", "3");
	ck_assert_str_eq(kvlist_get(&in->metadata, "a"), "1");
	kvlist_clear(&in->metadata);
	kvlist_set(&in->metadata, "z", "1");
	in->metadata.n = 0;
	free(in->metadata.v[0].key);
	free(in->metadata.v[0].value);
	instance_trim(in);
	ck_assert_ptr_null(in->metadata.v);
	ck_assert_uint_eq(in->metadata.cap, 0);
	instance_free(in);
}
END_TEST

START_TEST(test_str_helpers)
{
	char	*s = xstrdup("order-service_1");

	str_upper(s);
	ck_assert_str_eq(s, "ORDER-SERVICE_1");
	str_upper(NULL);
	str_replace(&s, "x");
	ck_assert_str_eq(s, "x");
	str_replace(&s, NULL);
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_kvlist)
{
	struct kvlist	l = { 0 }, c = { 0 };

	kvlist_set(&l, "b", "1");
	kvlist_set(&l, "a", "2");
	kvlist_set(&l, "c", NULL);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(kvlist_get(&l, "c"), "");
	ck_assert_ptr_null(kvlist_get(&l, "zz"));
	/* Replacing keeps the position (LinkedHashMap order). */
	kvlist_set(&l, "b", "3");
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.v[0].key, "b");
	ck_assert_str_eq(l.v[0].value, "3");
	ck_assert_str_eq(l.v[1].key, "a");
	/* Grows past the initial capacity. */
	kvlist_set(&l, "d", "4");
	kvlist_set(&l, "e", "5");
	ck_assert_uint_eq(l.n, 5);
	ck_assert_str_eq(kvlist_get(&l, "e"), "5");

	kvlist_set(&c, "a", "old");
	kvlist_set(&c, "z", "keep");
	kvlist_copy(&c, &l);
	ck_assert_uint_eq(c.n, 6);
	ck_assert_str_eq(kvlist_get(&c, "a"), "2");
	ck_assert_str_eq(kvlist_get(&c, "z"), "keep");
	ck_assert_str_eq(c.v[2].key, "b");
	kvlist_clear(&l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.v);
	ck_assert_str_eq(kvlist_get(&c, "b"), "3");	/* a real copy */
	kvlist_clear(&c);
	kvlist_clear(&c);
}
END_TEST

START_TEST(test_application)
{
	struct application	*a = application_new("order-service");
	struct instance		*in;

	ck_assert_str_eq(a->name, "ORDER-SERVICE");
	application_add(a, mk("h1", "id1", STATUS_UP));
	application_add(a, mk("h2", NULL, STATUS_UP));
	application_add(a, mk("h3", "id3", STATUS_UP));
	application_add(a, mk("h4", "id4", STATUS_UP));
	application_add(a, mk("h5", "id5", STATUS_UP));
	ck_assert_uint_eq(a->n, 5);
	ck_assert_ptr_nonnull(application_find(a, "h2"));
	ck_assert_ptr_null(application_find(a, "h1"));	/* by id, not host */

	/* Same id replaces in place. */
	application_add(a, mk("other", "id1", STATUS_DOWN));
	ck_assert_uint_eq(a->n, 5);
	in = application_find(a, "id1");
	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(in->status, STATUS_DOWN);
	ck_assert_ptr_eq(a->instances[0], in);

	/* Remove keeps order of the rest. */
	ck_assert_int_eq(application_remove(a, "id3"), 0);
	ck_assert_int_eq(application_remove(a, "id3"), -1);
	ck_assert_uint_eq(a->n, 4);
	ck_assert_str_eq(instance_id(a->instances[2]), "id4");
	ck_assert_str_eq(instance_id(a->instances[3]), "id5");
	application_free(a);
	application_free(NULL);

	a = application_new(NULL);
	ck_assert_str_eq(a->name, "");
	application_free(a);
}
END_TEST

START_TEST(test_applications)
{
	struct applications	*as = applications_new();
	struct application	*a;
	char			*h;
	int			 i;

	ck_assert_int_eq(as->versions_delta, -1);
	h = applications_hashcode(as);
	ck_assert_str_eq(h, "");
	free(h);

	a = applications_get(as, "one");
	ck_assert_ptr_eq(applications_get(as, "ONE"), a);
	ck_assert_ptr_eq(applications_find(as, "One"), a);
	ck_assert_ptr_null(applications_find(as, "two"));
	application_add(a, mk("h1", NULL, STATUS_UP));
	application_add(a, mk("h2", NULL, STATUS_DOWN));
	application_add(a, mk("h3", NULL, STATUS_UP));
	a = applications_get(as, "two");
	application_add(a, mk("h4", NULL, STATUS_OUT_OF_SERVICE));
	application_add(a, mk("h5", NULL, STATUS_STARTING));
	application_add(a, mk("h6", NULL, STATUS_UNKNOWN));
	/* More apps than the initial capacity. */
	for (i = 0; i < 10; i++) {
		char	name[16];

		snprintf(name, sizeof name, "app%d", i);
		applications_get(as, name);
	}
	ck_assert_uint_eq(as->n, 12);
	ck_assert_uint_eq(applications_count(as), 6);
	/* Alphabetical status order, every count followed by '_'. */
	h = applications_hashcode(as);
	ck_assert_str_eq(h,
	    "DOWN_1_OUT_OF_SERVICE_1_STARTING_1_UNKNOWN_1_UP_2_");
	free(h);
	applications_free(as);
	applications_free(NULL);
}
END_TEST

START_TEST(test_hashcode)
{
	size_t	 counts[STATUS_COUNT] = { 0 };
	char	*h;

	h = instance_hashcode(counts);
	ck_assert_str_eq(h, "");
	free(h);
	counts[STATUS_UP] = 3;
	counts[STATUS_DOWN] = 1;
	h = instance_hashcode(counts);
	ck_assert_str_eq(h, "DOWN_1_UP_3_");	/* not UP_3_DOWN_1_ */
	free(h);
	counts[STATUS_UP] = 0;
	counts[STATUS_OUT_OF_SERVICE] = 12;
	h = instance_hashcode(counts);
	ck_assert_str_eq(h, "DOWN_1_OUT_OF_SERVICE_12_");
	free(h);
}
END_TEST

/*
 * buf_steal hands back a NUL-terminated string in every state, so callers
 * need no "empty" special case (instance_hashcode's "" above relies on
 * it): a fresh buffer, and one whose cap was passed before it held a
 * byte (scan-build: buf_reserve refused, data stayed NULL).
 */
START_TEST(test_buf_steal_always_a_string)
{
	struct buf	 b;
	char		*s;
	size_t		 len = 99;

	buf_init(&b, 0);
	s = buf_steal(&b, &len);
	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	free(s);
	buf_init(&b, 4);
	buf_adds(&b, "too long");
	ck_assert(b.overflow);
	s = buf_steal(&b, &len);
	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	free(s);
	buf_free(&b);
}
END_TEST

/* str_list_next: items trimmed at spaces, empty ones passed over. */
START_TEST(test_str_list_next)
{
	char	list[] = " a:1 , ,b:2 x,,c ", *next = list;
	char	empty[] = " , ,", *e = empty;

	ck_assert_str_eq(str_list_next(&next), "a:1");
	ck_assert_str_eq(str_list_next(&next), "b:2");
	ck_assert_str_eq(str_list_next(&next), "c");
	ck_assert_ptr_null(str_list_next(&next));
	ck_assert_ptr_null(str_list_next(&next));
	ck_assert_ptr_null(str_list_next(&e));
}
END_TEST

START_TEST(test_name_ok)
{
	char	long_name[300];

	ck_assert(instance_name_ok("ORDER-SERVICE", INSTANCE_MAX_NAME));
	ck_assert(instance_name_ok("host:app:8080", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok(NULL, INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("a/b", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("a b", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("a?b", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("a#b", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("a\tb", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("a\x7f", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("\x01", INSTANCE_MAX_NAME));
	ck_assert(!instance_name_ok("ab\x1f", INSTANCE_MAX_NAME));
	ck_assert(instance_name_ok("!~", INSTANCE_MAX_NAME));
	ck_assert(instance_name_ok("caf\xc3\xa9", INSTANCE_MAX_NAME));
	ck_assert(instance_name_ok("abc", 3));
	ck_assert(!instance_name_ok("abcd", 3));
	ck_assert(!instance_name_ok("ab/", 3));
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	ck_assert(!instance_name_ok(long_name, INSTANCE_MAX_NAME));
	long_name[INSTANCE_MAX_NAME] = '\0';
	ck_assert(instance_name_ok(long_name, INSTANCE_MAX_NAME));
	long_name[INSTANCE_MAX_NAME] = 'a';
	long_name[INSTANCE_MAX_NAME + 1] = '\0';
	ck_assert(!instance_name_ok(long_name, INSTANCE_MAX_NAME));
}
END_TEST

/* The data-model suite. */
static Suite *
instance_suite(void)
{
	Suite	*s = suite_create("instance");
	TCase	*tc = tcase_create("model");

	tcase_add_test(tc, test_enums);
	tcase_add_test(tc, test_dup_compact);
	tcase_add_test(tc, test_trim);
	tcase_add_test(tc, test_utf8_valid);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_apply_defaults);
	tcase_add_test(tc, test_instance_id_rule);
	tcase_add_test(tc, test_dup);
	tcase_add_test(tc, test_str_helpers);
	tcase_add_test(tc, test_kvlist);
	tcase_add_test(tc, test_application);
	tcase_add_test(tc, test_applications);
	tcase_add_test(tc, test_hashcode);
	tcase_add_test(tc, test_buf_steal_always_a_string);
	tcase_add_test(tc, test_str_list_next);
	tcase_add_test(tc, test_name_ok);
	tcase_add_test(tc, test_pack_size_kept);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(instance_suite()));
}
