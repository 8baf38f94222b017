/*
 * policyd/peruser.c: policyd-spf.peruser(5) files (issue 29). The man
 * page's own example, main-file settings a recipient does not override,
 * matching, the first line winning, and each problem with the per-user
 * file's name and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "peruser.h"

static char dir[] = "/tmp/spfkit-peruser-XXXXXX";
static char diags[8192];

static void collect(void *arg, const struct spfkit__mta_diag *d)
{
	size_t n = strlen(diags);

	(void)arg;
	snprintf(diags + n, sizeof(diags) - n, "%s:%u: %s: %s\n", d->file, d->line,
		 d->is_error ? "error" : "warning", d->text);
}

static const char *write_file(const char *name, const char *text)
{
	static char path[2][256];
	static int turn;
	char *p = path[turn++ % 2];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static int load(const char *main_text, const char *users, struct spfkit__policyd_peruser **t)
{
	char spec[300];
	const char *main_path = write_file("main.conf", main_text);

	snprintf(spec, sizeof(spec), "text,%s", write_file("users", users));
	diags[0] = '\0';
	return spfkit__policyd_peruser_load(spec, main_path, collect, NULL, t);
}

static const struct spfkit__mta_config *find(const struct spfkit__policyd_peruser *t,
					     const char *rcpt)
{
	size_t entry = 0;

	return spfkit__policyd_peruser_find(t, rcpt, strlen(rcpt), &entry);
}

/* policyd-spf.peruser(5)'s example, unchanged (one line per user). */
static void man_page_example(void **state)
{
	struct spfkit__policyd_peruser *t = NULL;
	const struct spfkit__mta_config *pm, *strict;

	(void)state;
	assert_int_equal(load("Mail_From_reject = Softfail\nTempError_Defer = False\n",
			      "# users\n"
			      "postmaster@example.com,Mail_From_reject=No_Check|PermError_reject=False|"
			      "HELO_reject=SPF_Not_Pass|TestOnly=1|debugLevel=5|skip_addresses=127.0.0.0/8,"
			      "::ffff:127.0.0.0/104,::1/128|TempError_Defer=False\n"
			      "strict@example.com,PermError_reject=True|HELO_reject=SPF_Not_Pass|"
			      "TempError_Defer=True\n",
			      &t),
			 0);
	assert_string_equal(diags, "");
	assert_int_equal(spfkit__policyd_peruser_count(t), 2);
	pm = find(t, "postmaster@example.com");
	strict = find(t, "strict@example.com");
	assert_non_null(pm);
	assert_non_null(strict);
	assert_int_equal(pm->mail_from_reject, SPFKIT_MTA_REJECT_NO_CHECK);
	assert_int_equal(pm->helo_reject, SPFKIT_MTA_REJECT_NOT_PASS);
	assert_int_equal(pm->debug_level, 5);
	assert_int_equal(pm->skip_addresses.count, 3);
	assert_int_equal(pm->temperror_defer, 0);
	/* what strict does not set comes from the main file */
	assert_int_equal(strict->mail_from_reject, SPFKIT_MTA_REJECT_SOFTFAIL);
	assert_int_equal(strict->permerror_reject, 1);
	assert_int_equal(strict->temperror_defer, 1);
	assert_int_equal(strict->helo_reject, SPFKIT_MTA_REJECT_NOT_PASS);
	spfkit__policyd_peruser_free(t);
}

static void matching(void **state)
{
	struct spfkit__policyd_peruser *t = NULL;
	size_t entry = 0;

	(void)state;
	assert_int_equal(load("", "  a@example.com , Mail_From_reject=False  # comment\n\n"
				  "b@example.com,Mail_From_reject=Fail\n"
				  "a@example.com,Mail_From_reject=Softfail\n",
			      &t),
			 0);
	/* the first line for a recipient is the one used (policyd-spf stops there) */
	assert_non_null(strstr(diags, "users:4: warning: a line before sets a@example.com"));
	assert_non_null(spfkit__policyd_peruser_find(t, "A@Example.COM", 13, &entry));
	assert_int_equal(entry, 1);
	assert_int_equal(find(t, "a@example.com")->mail_from_reject, SPFKIT_MTA_REJECT_FALSE);
	assert_int_equal(find(t, "b@example.com")->mail_from_reject, SPFKIT_MTA_REJECT_FAIL);
	assert_null(find(t, "c@example.com"));
	assert_null(find(t, "a@example.co"));
	assert_null(find(t, "xa@example.com"));
	assert_null(spfkit__policyd_peruser_find(NULL, "a@example.com", 13, &entry));
	spfkit__policyd_peruser_free(t);
}

/* Every problem is said with the per-user file's name and line; errors refuse the file. */
static void problems(void **state)
{
	static const struct {
		const char *users, *want;
		int rc;
	} cases[] = {
		{"a@x.test Mail_From_reject=False\n", "users:1: error: 'a@x.test Mail_From_reject=False' "
						      "is not recipient,Name=Value",
		 SPFKIT_ESYNTAX},
		{"\n\na@x.test,HELO_reject=Nope\n", "users:3: error: ", SPFKIT_ESYNTAX},
		{"a@x.test,TempError_Defer\n", "users:1: error: 'TempError_Defer' is not Name=Value",
		 SPFKIT_ESYNTAX},
		{",TempError_Defer=True\n", "users:1: error: no recipient", SPFKIT_ESYNTAX},
		{"a@x.test,Socket=unix:/x\n", "users:1: warning: 'Socket' cannot be set per user", 0},
		{"a@x.test,Void_Limit=5\n", "users:1: warning: 'Void_Limit' cannot be set per user", 0},
		{"a@x.test,mail_from_reject=False\n", "warning: 'mail_from_reject' cannot be set", 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spfkit__policyd_peruser *t = NULL;
		int rc = load("", cases[i].users, &t);

		if (rc != cases[i].rc || strstr(diags, cases[i].want) == NULL)
			fail_msg("%s: got rc %d and\n%s\nwant rc %d and '%s'", cases[i].users, rc, diags,
				 cases[i].rc, cases[i].want);
		if (rc != 0)
			assert_null(t);
		spfkit__policyd_peruser_free(t);
	}
}

/* policyd-spf's spelling Authserv-Id, and '=' inside a value. */
static void spellings(void **state)
{
	struct spfkit__policyd_peruser *t = NULL;

	(void)state;
	assert_int_equal(load("", "a@x.test,Authserv-Id=mx.a.test|Reason_Message=x=y {spf}\n", &t),
			 0);
	assert_string_equal(find(t, "a@x.test")->authserv_id, "mx.a.test");
	assert_string_equal(find(t, "a@x.test")->reason_message, "x=y {spf}");
	spfkit__policyd_peruser_free(t);
}

/* As policyd-spf: a missing file is said, and the main configuration serves. */
static void missing_file(void **state)
{
	struct spfkit__policyd_peruser *t = (void *)1;
	char spec[300];

	(void)state;
	snprintf(spec, sizeof(spec), "text,%s/none", dir);
	diags[0] = '\0';
	assert_int_equal(spfkit__policyd_peruser_load(spec, NULL, collect, NULL, &t), 0);
	assert_null(t);
	assert_non_null(strstr(diags, "warning: per-user settings not read"));
	diags[0] = '\0';
	assert_int_equal(spfkit__policyd_peruser_load("sql,db", NULL, collect, NULL, &t),
			 SPFKIT_ESYNTAX);
	assert_non_null(strstr(diags, "want text,/path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(man_page_example), cmocka_unit_test(matching),
		cmocka_unit_test(problems),         cmocka_unit_test(spellings),
		cmocka_unit_test(missing_file),
	};
	int rc;

	if (mkdtemp(dir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(write_file("main.conf", ""));
	unlink(write_file("users", ""));
	rmdir(dir);
	return rc;
}
