/* Tests of the hashed libspf2 DNS layer (spf2_zone.c), alone and under libspf2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "spf2_zone.h"

static const char zone_text[] =
	"; a comment line\n"
	"$TTL 3600\n"
	"b.example. 3600 IN TXT \"v=spf1 ip4:192.0.2.0/24\" \" -all\" ; trailing comment\n"
	"b.example. IN TXT \"other; text \\\"quoted\\\" \\065\"\n"
	"B.Example. 300 A 192.0.2.10\n"
	"b.example. AAAA 2001:db8::10\n"
	"b.example. MX 10 Mx1.B.example.\n"
	"host.deep.c.example. A 198.51.100.7\n"
	"10.2.0.192.in-addr.arpa. PTR b.example.\n"
	"p.example. TXT \"v=spf1 include:b.example ~all\"\n";

/* A layer loaded from `text`; NULL and err filled on failure. */
static SPF_dns_server_t *load(const char *text, int *rc, char *err, size_t errlen)
{
	SPF_dns_server_t *layer = NULL;

	*rc = spf2_zone_load_text(text, strlen(text), "z", &layer, err, errlen);
	return layer;
}

static int setup(void **state)
{
	char err[256] = "";
	int rc;

	*state = load(zone_text, &rc, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "setup: %s\n", err);
	return rc;
}

static int teardown(void **state)
{
	spf2_zone_free(*state);
	return 0;
}

static SPF_dns_rr_t *ask(void **state, const char *name, ns_type type)
{
	SPF_dns_server_t *layer = *state;

	return layer->lookup(layer, name, type, 0);
}

static void test_txt_strings_joined(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "b.example", ns_t_txt);

	assert_int_equal(rr->herrno, NETDB_SUCCESS);
	assert_int_equal(rr->num_rr, 2);
	/* RFC 7208 §3.3: strings joined with no separator */
	assert_string_equal(rr->rr[0]->txt, "v=spf1 ip4:192.0.2.0/24 -all");
	SPF_dns_rr_free(rr);
}

static void test_txt_escapes_and_quoted_semicolon(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "b.example", ns_t_txt);

	assert_string_equal(rr->rr[1]->txt, "other; text \"quoted\" A");
	SPF_dns_rr_free(rr);
}

static void test_names_fold_case_and_final_dot(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "B.EXAMPLE.", ns_t_a);

	assert_int_equal(rr->herrno, NETDB_SUCCESS);
	assert_int_equal(rr->num_rr, 1);
	assert_int_equal(ntohl(rr->rr[0]->a.s_addr), 0xc000020a);
	SPF_dns_rr_free(rr);
}

static void test_aaaa(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "b.example", ns_t_aaaa);
	unsigned char want[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x10};

	assert_int_equal(rr->num_rr, 1);
	assert_memory_equal(&rr->rr[0]->aaaa, want, 16);
	SPF_dns_rr_free(rr);
}

static void test_mx_target_without_dot(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "b.example", ns_t_mx);

	assert_int_equal(rr->num_rr, 1);
	assert_string_equal(rr->rr[0]->mx, "mx1.b.example");
	SPF_dns_rr_free(rr);
}

static void test_ptr(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "10.2.0.192.in-addr.arpa", ns_t_ptr);

	assert_int_equal(rr->num_rr, 1);
	assert_string_equal(rr->rr[0]->ptr, "b.example");
	SPF_dns_rr_free(rr);
}

static void test_other_type_is_nodata(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "host.deep.c.example", ns_t_txt);

	assert_int_equal(rr->herrno, NO_DATA);
	assert_int_equal(rr->num_rr, 0);
	SPF_dns_rr_free(rr);
}

static void test_parent_of_a_name_is_nodata(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "c.example", ns_t_txt);

	assert_int_equal(rr->herrno, NO_DATA);
	SPF_dns_rr_free(rr);
}

static void test_unknown_name_is_nxdomain(void **state)
{
	SPF_dns_rr_t *rr = ask(state, "nope.c.example", ns_t_a);

	assert_int_equal(rr->herrno, HOST_NOT_FOUND);
	assert_int_equal(rr->num_rr, 0);
	SPF_dns_rr_free(rr);
}

static void test_answers_are_copies(void **state)
{
	SPF_dns_rr_t *first = ask(state, "b.example", ns_t_mx);
	SPF_dns_rr_t *second;

	first->rr[0]->mx[0] = 'X';
	SPF_dns_rr_free(first);
	second = ask(state, "b.example", ns_t_mx);
	assert_string_equal(second->rr[0]->mx, "mx1.b.example");
	SPF_dns_rr_free(second);
}

static void test_records_counted(void **state)
{
	/* TXT, A, AAAA, MX at b; A at host.deep.c; PTR; TXT at p */
	assert_int_equal(spf2_zone_records(*state), 7);
}

/* The layer under a real libspf2 server: the SPF type is asked first,
 * then TXT; an include pulls b.example's record. */
static unsigned spf2_result(SPF_dns_server_t *layer, const char *ip, const char *sender)
{
	SPF_server_t *server = SPF_server_new_dns(layer, 0);
	SPF_request_t *req = SPF_request_new(server);
	SPF_response_t *resp = NULL;
	unsigned res;

	assert_int_equal(SPF_request_set_ipv4_str(req, ip), SPF_E_SUCCESS);
	assert_int_equal(SPF_request_set_env_from(req, sender), 0);
	SPF_request_query_mailfrom(req, &resp);
	assert_non_null(resp);
	res = (unsigned)SPF_response_result(resp);
	SPF_response_free(resp);
	SPF_request_free(req);
	SPF_server_free(server);
	return res;
}

static void test_libspf2_pass_through_include(void **state)
{
	assert_int_equal(spf2_result(*state, "192.0.2.77", "a@p.example"), SPF_RESULT_PASS);
}

static void test_libspf2_softfail_outside(void **state)
{
	assert_int_equal(spf2_result(*state, "198.51.100.1", "a@p.example"), SPF_RESULT_SOFTFAIL);
}

static void test_libspf2_none_for_unknown_domain(void **state)
{
	assert_int_equal(spf2_result(*state, "198.51.100.1", "a@gone.example"), SPF_RESULT_NONE);
}

/* ---- the reader rejects what it does not take, naming the line ------ */

static void expect_error(const char *text, int want_rc, const char *want_err)
{
	char err[256] = "";
	int rc;
	SPF_dns_server_t *layer = load(text, &rc, err, sizeof(err));

	assert_null(layer);
	assert_int_equal(rc, want_rc);
	if (strcmp(err, want_err) != 0)
		fail_msg("got error \"%s\", want \"%s\"", err, want_err);
}

static void test_relative_name(void **state)
{
	(void)state;
	expect_error("a.example. A 192.0.2.1\nb TXT \"x\"\n", SPFKIT_ESYNTAX,
		     "z:2: name \"b\" is not absolute (want a final dot)");
}

static void test_unsupported_type(void **state)
{
	(void)state;
	expect_error("a.example. CNAME b.example.\n", SPFKIT_ESYNTAX,
		     "z:1: unsupported record type \"CNAME\"");
}

static void test_bad_ipv4(void **state)
{
	(void)state;
	expect_error("a.example. A 300.1.2.3\n", SPFKIT_ESYNTAX,
		     "z:1: bad IPv4 address \"300.1.2.3\"");
}

static void test_unterminated_quote(void **state)
{
	(void)state;
	expect_error("a.example. TXT \"v=spf1\n", SPFKIT_ESYNTAX, "z:1: unterminated quoted string");
}

static void test_long_character_string(void **state)
{
	char text[400];

	(void)state;
	memcpy(text, "a.example. TXT \"", 16);
	memset(text + 16, 'x', 256);
	memcpy(text + 272, "\"\n", 3);
	expect_error(text, SPFKIT_E2BIG, "z:1: character-string longer than 255 bytes");
}

static void test_nul_in_txt(void **state)
{
	(void)state;
	expect_error("a.example. TXT \"v=spf1\\000 -all\"\n", SPFKIT_ESYNTAX,
		     "z:1: NUL byte in TXT data (libspf2 keeps C strings)");
}

static void test_bad_escape(void **state)
{
	(void)state;
	expect_error("a.example. TXT \"\\999\"\n", SPFKIT_ESYNTAX, "z:1: bad escape in TXT data");
}

static void test_origin_unsupported(void **state)
{
	(void)state;
	expect_error("$ORIGIN example.\n", SPFKIT_ESYNTAX, "z:1: unsupported directive");
}

static void test_blank_owner_unsupported(void **state)
{
	(void)state;
	expect_error("a.example. A 192.0.2.1\n  A 192.0.2.2\n", SPFKIT_ESYNTAX,
		     "z:2: blank owner (\"same as before\") is not supported");
}

static void test_line_cap(void **state)
{
	size_t len = SPF2_ZONE_MAX_LINE + 16;
	char *text = spfkit__alloc(NULL, len + 1);

	(void)state;
	assert_non_null(text);
	memset(text, ' ', len);
	memcpy(text, "a.example. TXT", 14);
	text[len] = '\0';
	expect_error(text, SPFKIT_E2BIG, "z:1: line longer than 65536 bytes");
	spfkit__free(NULL, text);
}

static void test_txt_without_data(void **state)
{
	(void)state;
	expect_error("a.example. TXT\n", SPFKIT_ESYNTAX, "z:1: TXT record without data");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_txt_strings_joined),
		cmocka_unit_test(test_txt_escapes_and_quoted_semicolon),
		cmocka_unit_test(test_names_fold_case_and_final_dot),
		cmocka_unit_test(test_aaaa),
		cmocka_unit_test(test_mx_target_without_dot),
		cmocka_unit_test(test_ptr),
		cmocka_unit_test(test_other_type_is_nodata),
		cmocka_unit_test(test_parent_of_a_name_is_nodata),
		cmocka_unit_test(test_unknown_name_is_nxdomain),
		cmocka_unit_test(test_answers_are_copies),
		cmocka_unit_test(test_records_counted),
		cmocka_unit_test(test_libspf2_pass_through_include),
		cmocka_unit_test(test_libspf2_softfail_outside),
		cmocka_unit_test(test_libspf2_none_for_unknown_domain),
	};
	const struct CMUnitTest errors[] = {
		cmocka_unit_test(test_relative_name),
		cmocka_unit_test(test_unsupported_type),
		cmocka_unit_test(test_bad_ipv4),
		cmocka_unit_test(test_unterminated_quote),
		cmocka_unit_test(test_long_character_string),
		cmocka_unit_test(test_nul_in_txt),
		cmocka_unit_test(test_bad_escape),
		cmocka_unit_test(test_origin_unsupported),
		cmocka_unit_test(test_blank_owner_unsupported),
		cmocka_unit_test(test_line_cap),
		cmocka_unit_test(test_txt_without_data),
	};
	int failed = cmocka_run_group_tests_name("zone", tests, setup, teardown);

	return failed + cmocka_run_group_tests_name("errors", errors, NULL, NULL);
}
