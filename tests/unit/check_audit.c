/*
 * tests/unit/check_audit.c: the audit ring (audit.h). The ring stays
 * within its byte bound however many records come (the oldest go first
 * and are counted as dropped), its byte count is what the records hold
 * (their strings included: the figure /metrics and the memory budget
 * read), the JSON lists the newest first and filters on app (any case),
 * id and since, and the who in force (set, lazy, a replicated item's
 * origin) is what a record gets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "audit.h"
#include "buf.h"
#include "testutil.h"

static const struct audit_who WHO = { "n1:8761", "alice", "10.0.0.7" };

/* The JSON of a query as a NUL-terminated string (caller frees). */
static char *
query(struct audit *a, const char *app, const char *id, int64_t since,
    size_t limit)
{
	struct buf	 b;
	char		*s;

	buf_init(&b, 0);
	audit_json(a, &b, app, id, since, limit);
	s = strndup(b.data, b.len);
	buf_free(&b);
	return (s);
}

/* How often needle occurs in hay. */
static int
occurs(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return (n);
}

START_TEST(test_bound_in_bytes)
{
	struct audit	*a = audit_new(8192);
	char		 id[32];
	size_t		 i, before;

	ck_assert_uint_eq(audit_bytes(a), 0);
	for (i = 0; i < 1000; i++) {
		snprintf(id, sizeof id, "i-%zu", i);
		audit_add(a, 1000 + (int64_t)i, AUDIT_REGISTER, "APP", id,
		    "status UP", &WHO, 0);
		ck_assert_uint_le(audit_bytes(a), 8192);
	}
	ck_assert_uint_gt(audit_count(a), 10);
	ck_assert_uint_lt(audit_count(a), 1000);
	ck_assert_uint_eq(audit_dropped(a), 1000 - audit_count(a));
	/* The newest survive: the last id is there, the first is not. */
	{
		char *j = query(a, NULL, NULL, 0, 0);

		ck_assert_ptr_nonnull(strstr(j, "\"i-999\""));
		ck_assert_ptr_null(strstr(j, "\"i-0\""));
		free(j);
	}
	/* The count is the records' own bytes: a long detail weighs more. */
	audit_free(a);
	a = audit_new(1 << 20);
	audit_add(a, 1, AUDIT_CANCEL, "APP", "x", "", &WHO, 0);
	before = audit_bytes(a);
	ck_assert_uint_gt(before, strlen("APPx") + strlen("n1:8761alice"));
	{
		char	long_detail[2001];

		memset(long_detail, 'd', 2000);
		long_detail[2000] = '\0';
		audit_add(a, 2, AUDIT_METADATA, "APP", "x", long_detail, &WHO,
		    0);
	}
	ck_assert_uint_ge(audit_bytes(a) - before, 2000);
	ck_assert_uint_eq(audit_count(a), 2);
	/* A bound below the floor is raised to it, not taken. */
	audit_free(a);
	a = audit_new(10);
	audit_add(a, 1, AUDIT_CANCEL, "APP", "x", "", &WHO, 0);
	ck_assert_uint_eq(audit_count(a), 1);
	audit_free(a);
	audit_free(NULL);
}
END_TEST

START_TEST(test_newest_first_and_filters)
{
	struct audit	*a = audit_new(1 << 20);
	char		*j, *p1, *p2;

	audit_add(a, 1000, AUDIT_REGISTER, "ORDERS", "o-1", "", &WHO, 0);
	audit_add(a, 2000, AUDIT_STATUS, "ORDERS", "o-2", "OUT_OF_SERVICE",
	    &WHO, 0);
	audit_add(a, 3000, AUDIT_CANCEL, "BILLING", "o-1", "", &WHO, 0);
	audit_add(a, 4000, AUDIT_EVICT, "ORDERS", "o-1", "lease expired",
	    &WHO, 0);

	j = query(a, NULL, NULL, 0, 0);
	ck_assert_int_eq(occurs(j, "\"seq\""), 4);
	p1 = strstr(j, "\"evict\"");
	p2 = strstr(j, "\"register\"");
	ck_assert_ptr_nonnull(p1);
	ck_assert_ptr_nonnull(p2);
	ck_assert(p1 < p2);	/* newest first */
	free(j);

	/* app, in any case */
	j = query(a, "orders", NULL, 0, 0);
	ck_assert_int_eq(occurs(j, "\"seq\""), 3);
	ck_assert_ptr_null(strstr(j, "BILLING"));
	free(j);
	/* id (across apps) */
	j = query(a, NULL, "o-1", 0, 0);
	ck_assert_int_eq(occurs(j, "\"seq\""), 3);
	ck_assert_ptr_null(strstr(j, "o-2"));
	free(j);
	/* app and id */
	j = query(a, "ORDERS", "o-1", 0, 0);
	ck_assert_int_eq(occurs(j, "\"seq\""), 2);
	free(j);
	/* since: at or after */
	j = query(a, NULL, NULL, 3000, 0);
	ck_assert_int_eq(occurs(j, "\"seq\""), 2);
	ck_assert_ptr_null(strstr(j, "\"register\""));
	free(j);
	/* limit keeps the newest */
	j = query(a, NULL, NULL, 0, 1);
	ck_assert_int_eq(occurs(j, "\"seq\""), 1);
	ck_assert_ptr_nonnull(strstr(j, "\"evict\""));
	free(j);
	/* nothing matches: an empty list */
	j = query(a, "NOPE", NULL, 0, 0);
	ck_assert_int_eq(occurs(j, "\"seq\""), 0);
	ck_assert_ptr_nonnull(strstr(j, "\"records\":[]"));
	free(j);
	audit_free(a);
}
END_TEST

/* A lazy who: counts its calls. */
static int lazy_calls;

static void
lazy_who(void *arg, struct audit_who *w)
{
	(void)arg;
	lazy_calls++;
	w->node = "lazy:1";
	w->user = "bob";
	w->addr = "10.9.9.9";
}

START_TEST(test_who)
{
	struct audit		*a = audit_new(1 << 20);
	const struct audit_rec	*r;
	const struct audit_who	*w;

	/* Outside a request: an empty who, never NULL. */
	w = audit_who(a);
	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(w->user, "");
	audit_set_who(a, &WHO);
	ck_assert_str_eq(audit_who(a)->user, "alice");
	/* A replicated item's origin over it, then back. */
	audit_set_origin(a, "n2:8761", "carol", "10.0.0.8");
	ck_assert_str_eq(audit_who(a)->node, "n2:8761");
	audit_set_origin(a, NULL, NULL, NULL);
	ck_assert_str_eq(audit_who(a)->node, "n1:8761");
	/* Lazy: worked out at the first ask only. */
	lazy_calls = 0;
	audit_set_who_lazy(a, lazy_who, NULL);
	ck_assert_int_eq(lazy_calls, 0);
	ck_assert_str_eq(audit_who(a)->user, "bob");
	ck_assert_str_eq(audit_who(a)->addr, "10.9.9.9");
	ck_assert_int_eq(lazy_calls, 1);
	audit_set_who(a, NULL);
	ck_assert_str_eq(audit_who(a)->user, "");
	/* A record copies its who; NULL fields become "". */
	r = audit_add(a, 5, AUDIT_AIRLIFT, "A", "i", NULL,
	    &(struct audit_who){ "n", NULL, NULL }, 1);
	ck_assert_str_eq(r->node, "n");
	ck_assert_str_eq(r->user, "");
	ck_assert_str_eq(r->detail, "");
	ck_assert_int_eq(r->replicated, 1);
	ck_assert_str_eq(audit_what_name(r->what), "airlift-announce");
	audit_free(a);
}
END_TEST

/* The suite. */
static Suite *
audit_suite(void)
{
	Suite	*s = suite_create("audit");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_bound_in_bytes);
	tcase_add_test(tc, test_newest_first_and_filters);
	tcase_add_test(tc, test_who);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(audit_suite()));
}
