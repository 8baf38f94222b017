/*
 * Unit tests of the master file loader (lib/resolver/zonefile.c): the
 * syntax it takes, and every error with its exact "file:line: what"
 * text. Zones use an allocator routed to cmocka's test_malloc, so every
 * test also checks for leaks; one test fails each allocation in turn.
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

#include <spfkit/zone.h>

#include "cmocka_alloc.h" /* tests/support */
#include "core.h"
#include "zone_int.h" /* the memory limit, set small */


/* ---- helpers --------------------------------------------------------- */

struct loaded {
	struct spfkit_zone *zone;
	int rc;
	char err[512];
};

static void load_n(struct loaded *l, const char *text, size_t len, const char *origin)
{
	assert_int_equal(spfkit_zone_new(&test_alloc, &l->zone), 0);
	memset(l->err, 'X', sizeof(l->err));
	l->rc = spfkit_zone_load_text(l->zone, text, len, "t.zone", origin, l->err, sizeof(l->err));
}

static void load(struct loaded *l, const char *text)
{
	load_n(l, text, strlen(text), NULL);
}

static void load_ok(struct loaded *l, const char *text, const char *origin)
{
	load_n(l, text, strlen(text), origin);
	if (l->rc != 0)
		fail_msg("load: got %d (%s), want 0", l->rc, l->err);
	assert_string_equal(l->err, "");
}

static void done(struct loaded *l)
{
	spfkit_zone_free(l->zone);
}

static struct spfkit_dns_answer look(const struct loaded *l, const char *name, uint16_t type)
{
	struct spfkit_dns_answer a;

	assert_int_equal(spfkit_zone_lookup(l->zone, name, strlen(name), type, &a), 0);
	return a;
}

/* The single record of `type` at `name`, as data and length. */
static const struct spfkit_dns_rr *one(const struct loaded *l, const char *name, uint16_t type)
{
	struct spfkit_dns_answer a = look(l, name, type);

	if (a.status != SPFKIT_DNS_OK || a.count != 1)
		fail_msg("%s type %u: got %s with %zu records, want one record", name, (unsigned)type,
			 spfkit_dns_status_name(a.status), a.count);
	return &a.rrs[0];
}

static void want_text(const struct loaded *l, const char *name, const char *want, size_t len)
{
	const struct spfkit_dns_rr *rr = one(l, name, SPFKIT_RR_TXT);

	if (rr->len != len || memcmp(rr->data, want, len) != 0)
		fail_msg("TXT %s: got '%.*s' (%zu bytes), want '%.*s' (%zu bytes)", name, (int)rr->len,
			 (const char *)rr->data, rr->len, (int)len, want, len);
}

/* ---- what the loader takes ------------------------------------------- */

static void loads_every_type(void **state)
{
	static const unsigned char v4[4] = { 192, 0, 2, 10 };
	static const unsigned char v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
					      0,    0,    0,    0,    0, 0, 0, 0x10 };
	struct loaded l;
	const struct spfkit_dns_rr *rr;

	(void)state;
	load_ok(&l,
		"example.com.      IN A     192.0.2.10\n"
		"example.com.      IN AAAA  2001:db8::10\n"
		"example.com.      IN MX    10 mx.example.com.\n"
		"example.com.      IN TXT   \"v=spf1 mx -all\"\n"
		"example.com.      IN SPF   \"v=spf1 mx -all\"\n"
		"www.example.com.  IN CNAME example.com.\n"
		"10.2.0.192.in-addr.arpa. IN PTR mx.example.com.\n",
		NULL);
	assert_memory_equal(one(&l, "example.com", SPFKIT_RR_A)->data, v4, 4);
	assert_memory_equal(one(&l, "example.com", SPFKIT_RR_AAAA)->data, v6, 16);
	rr = one(&l, "example.com", SPFKIT_RR_MX);
	assert_int_equal(rr->pref, 10);
	assert_int_equal(rr->len, 14);
	assert_memory_equal(rr->data, "mx.example.com", 14);
	want_text(&l, "example.com", "v=spf1 mx -all", 14);
	assert_int_equal(one(&l, "example.com", SPFKIT_RR_SPF)->len, 14);
	assert_int_equal(one(&l, "www.example.com", SPFKIT_RR_CNAME)->len, 11);
	assert_int_equal(one(&l, "www.example.com", SPFKIT_RR_A)->len, 4); /* via the CNAME */
	assert_memory_equal(one(&l, "10.2.0.192.in-addr.arpa", SPFKIT_RR_PTR)->data, "mx.example.com",
			    14);
	assert_int_equal(spfkit_zone_size(l.zone), 3);
	done(&l);
}

static void origin_relative_names_and_at(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l,
		"$ORIGIN example.org.\n"
		"@      TXT \"apex\"\n"
		"mail   A 192.0.2.1\n"
		"abs.example.net. TXT \"absolute\"\n"
		"@      MX 5 mail\n",
		NULL);
	want_text(&l, "example.org", "apex", 4);
	assert_int_equal(one(&l, "mail.example.org", SPFKIT_RR_A)->len, 4);
	want_text(&l, "abs.example.net", "absolute", 8);
	assert_memory_equal(one(&l, "example.org", SPFKIT_RR_MX)->data, "mail.example.org", 16);
	done(&l);
}

static void origin_argument_and_relative_origin(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l,
		"a TXT \"1\"\n"
		"$ORIGIN sub\n" /* relative to the current origin (RFC 1035 §5.1) */
		"b TXT \"2\"\n"
		"$ORIGIN .\n"
		"c.example. TXT \"3\"\n",
		"example.com.");
	want_text(&l, "a.example.com", "1", 1);
	want_text(&l, "b.sub.example.com", "2", 1);
	want_text(&l, "c.example", "3", 1);
	done(&l);
}

static void blank_owner_repeats_previous_owner(void **state)
{
	struct loaded l;
	struct spfkit_dns_answer a;

	(void)state;
	load_ok(&l,
		"host.example.com. A 192.0.2.1\n"
		"                  A 192.0.2.2\n"
		"\t                  TXT \"t\"\n",
		NULL);
	a = look(&l, "host.example.com", SPFKIT_RR_A);
	assert_int_equal(a.count, 2);
	want_text(&l, "host.example.com", "t", 1);
	done(&l);
}

static void ttl_and_class_in_either_order(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l,
		"a.example. 100 IN A 192.0.2.1\n"
		"b.example. IN 200 A 192.0.2.1\n"
		"c.example. in 1h30m A 192.0.2.1\n"
		"d.example. 1W A 192.0.2.1\n",
		NULL);
	assert_int_equal(one(&l, "a.example", SPFKIT_RR_A)->ttl, 100);
	assert_int_equal(one(&l, "b.example", SPFKIT_RR_A)->ttl, 200);
	assert_int_equal(one(&l, "c.example", SPFKIT_RR_A)->ttl, 5400);
	assert_int_equal(one(&l, "d.example", SPFKIT_RR_A)->ttl, 604800);
	done(&l);
}

static void ttl_defaults(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l,
		"a.example. A 192.0.2.1\n"      /* nothing yet: the default */
		"b.example. 77 A 192.0.2.1\n"   /* explicit */
		"c.example. A 192.0.2.1\n"      /* RFC 1035: the last explicit TTL */
		"$TTL 900\n"
		"d.example. A 192.0.2.1\n",     /* RFC 2308: $TTL */
		NULL);
	assert_int_equal(one(&l, "a.example", SPFKIT_RR_A)->ttl, SPFKIT_ZONE_DEFAULT_TTL);
	assert_int_equal(one(&l, "b.example", SPFKIT_RR_A)->ttl, 77);
	assert_int_equal(one(&l, "c.example", SPFKIT_RR_A)->ttl, 77);
	assert_int_equal(one(&l, "d.example", SPFKIT_RR_A)->ttl, 900);
	done(&l);
}

/*
 * Issue 31 (4): once $TTL is set, an explicit TTL is that record's
 * alone; the records after it take $TTL again (RFC 2308 §4; BIND and
 * dnspython load this zone so). A later $TTL replaces the earlier one.
 */
static void explicit_ttl_does_not_replace_dollar_ttl(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l,
		"$TTL 3600\n"
		"$ORIGIN example.com.\n"
		"@ 86400 MX 10 mail\n"
		"  TXT \"v=spf1 include:_spf1 -all\"\n"
		"_spf1 TXT \"v=spf1 ip4:192.0.2.0/24 -all\"\n"
		"mail 60 A 192.0.2.25\n"
		"     AAAA 2001:db8::25\n"
		"$TTL 1d\n"
		"later A 192.0.2.26\n",
		NULL);
	assert_int_equal(one(&l, "example.com", SPFKIT_RR_MX)->ttl, 86400);
	assert_int_equal(one(&l, "example.com", SPFKIT_RR_TXT)->ttl, 3600);
	assert_int_equal(one(&l, "_spf1.example.com", SPFKIT_RR_TXT)->ttl, 3600);
	assert_int_equal(one(&l, "mail.example.com", SPFKIT_RR_A)->ttl, 60);
	assert_int_equal(one(&l, "mail.example.com", SPFKIT_RR_AAAA)->ttl, 3600);
	assert_int_equal(one(&l, "later.example.com", SPFKIT_RR_A)->ttl, 86400);
	done(&l);
}

/*
 * RFC 2181 §5: an RRset holds no two identical records, and BIND and NSD
 * drop the copies when loading. Identical = same owner (any case), type,
 * class and data; a TTL that differs does not make another record, and
 * the set keeps the smallest (§5.2).
 */
static void exact_duplicates_are_dropped(void **state)
{
	struct spfkit_dns_answer a;
	struct loaded l;

	(void)state;
	load_ok(&l,
		"dup.example.  600 TXT \"v=spf1 -all\"\n"
		"DUP.Example.  300 IN TXT \"v=spf1 -all\"\n"
		"dup.example.      TXT \"v=spf1 -all\"\n"
		"mx.example.   MX 10 mail.example.\n"
		"mx.example.   MX 10 MAIL.example.\n"
		"mx.example.   MX 20 mail.example.\n"
		"a.example.    A 192.0.2.1\n"
		"a.example.    A 192.0.2.1\n"
		"a.example.    A 192.0.2.2\n"
		"c.example.    CNAME a.example.\n"
		"c.example.    CNAME A.EXAMPLE\n",
		NULL);
	want_text(&l, "dup.example", "v=spf1 -all", 11);
	assert_int_equal(one(&l, "dup.example", SPFKIT_RR_TXT)->ttl, 300);
	a = look(&l, "dup.example", SPFKIT_RR_TXT);
	assert_int_equal(a.ttl, 300);
	a = look(&l, "mx.example", SPFKIT_RR_MX);
	if (a.count != 2)
		fail_msg("MX mx.example: got %zu records, want 2 (preference 10 once, 20)", a.count);
	assert_int_equal(a.rrs[0].pref, 10);
	assert_int_equal(a.rrs[1].pref, 20);
	a = look(&l, "a.example", SPFKIT_RR_A);
	if (a.count != 2)
		fail_msg("A a.example: got %zu records, want 2", a.count);
	assert_int_equal(one(&l, "c.example", SPFKIT_RR_CNAME)->len, 9);
	done(&l);
}

/* Different data is never a duplicate, however alike: case in TXT counts. */
static void near_duplicates_are_kept(void **state)
{
	struct spfkit_dns_answer a;
	struct loaded l;

	(void)state;
	load_ok(&l,
		"t.example. TXT \"v=spf1 -all\"\n"
		"t.example. TXT \"V=SPF1 -ALL\"\n"
		"t.example. TXT \"v=spf1 -all \"\n"
		"t.example. SPF \"v=spf1 -all\"\n",
		NULL);
	a = look(&l, "t.example", SPFKIT_RR_TXT);
	if (a.count != 3)
		fail_msg("TXT t.example: got %zu records, want 3", a.count);
	assert_non_null(one(&l, "t.example", SPFKIT_RR_SPF));
	done(&l);
}

static void txt_strings_join_without_separator(void **state)
{
	struct loaded l;

	(void)state;
	/* RFC 7208 §3.3 */
	load_ok(&l, "t.example. TXT \"v=spf1 ip4:192.0.2.0/24 \" \"-all\"\n", NULL);
	want_text(&l, "t.example", "v=spf1 ip4:192.0.2.0/24 -all", 28);
	done(&l);
}

/* The strings as written stay visible (resolver.h SPFKIT_RR_TXT_STRINGS),
 * in quoted, unquoted and RFC 3597 form; SPF (99) is kept joined only. */
static void txt_strings_as_written(void **state)
{
	const struct spfkit_dns_rr *rr;
	struct loaded l;

	(void)state;
	load_ok(&l,
		"a.example. TXT \"v=spf1 ip4:192.0.2.1\" \"-all\"\n"
		"b.example. TXT word \"\"\n"
		"c.example. TXT \\# 6 02 6869 02 6a6b\n"
		"a.example. SPF \"v=spf1\" \" -all\"\n",
		NULL);
	rr = one(&l, "a.example", SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(rr->len, 26);
	assert_memory_equal(rr->data, "\024v=spf1 ip4:192.0.2.1\004-all", 26);
	want_text(&l, "a.example", "v=spf1 ip4:192.0.2.1-all", 24);
	rr = one(&l, "b.example", SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(rr->len, 6);
	assert_memory_equal(rr->data, "\004word\000", 6);
	rr = one(&l, "c.example", SPFKIT_RR_TXT_STRINGS);
	assert_int_equal(rr->len, 6);
	assert_memory_equal(rr->data, "\002hi\002jk", 6);
	want_text(&l, "c.example", "hijk", 4);
	assert_int_equal(look(&l, "a.example", SPFKIT_RR_SPF).count, 1);
	done(&l);
}

static void txt_unquoted_words_are_strings(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "t.example. TXT v=spf1 -all\n", NULL);
	want_text(&l, "t.example", "v=spf1-all", 10);
	done(&l);
}

static void txt_escapes(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "t.example. TXT \"a\\\"b\\\\c\\059d\\000e\" x\\ y\n", NULL);
	want_text(&l, "t.example", "a\"b\\c;d\0ex y", 12);
	done(&l);
}

static void txt_empty_string(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "t.example. TXT \"\"\n", NULL);
	want_text(&l, "t.example", "", 0);
	done(&l);
}

static void txt_string_of_255_bytes(void **state)
{
	char text[300];
	struct loaded l;
	int n;

	(void)state;
	n = snprintf(text, sizeof(text), "t.example. TXT \"%0255d\"\n", 0);
	assert_true(n > 255);
	load_ok(&l, text, NULL);
	assert_int_equal(one(&l, "t.example", SPFKIT_RR_TXT)->len, 255);
	done(&l);
}

static void semicolon_in_quotes_is_not_a_comment(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "t.example. TXT \"a;b\" ; a comment \"c\"\n", NULL);
	want_text(&l, "t.example", "a;b", 3);
	done(&l);
}

static void parentheses_span_lines(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l,
		"t.example. 60 IN TXT ( \"v=spf1 \" ; first part\n"
		"                      \"ip4:192.0.2.0/24 \"\n"
		"                      \"-all\" )\n"
		"u.example. A 192.0.2.1\n",
		NULL);
	want_text(&l, "t.example", "v=spf1 ip4:192.0.2.0/24 -all", 28);
	assert_int_equal(one(&l, "u.example", SPFKIT_RR_A)->ttl, 60);
	done(&l);
}

static void crlf_line_ends(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "a.example. A 192.0.2.1 ; c\r\nb.example. TXT \"x\"\r\n\r\n", NULL);
	assert_int_equal(one(&l, "a.example", SPFKIT_RR_A)->len, 4);
	want_text(&l, "b.example", "x", 1);
	done(&l);
}

static void no_final_newline(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "a.example. A 192.0.2.1\nb.example. TXT \"last\"", NULL);
	want_text(&l, "b.example", "last", 4);
	done(&l);
}

static void empty_and_comment_only_text(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "", NULL);
	assert_int_equal(spfkit_zone_size(l.zone), 0);
	done(&l);
	load_ok(&l, "; nothing\n\n   ; here\n\t\n", NULL);
	assert_int_equal(spfkit_zone_size(l.zone), 0);
	done(&l);
}

static void names_are_case_insensitive(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "Mixed.Example.COM. a 192.0.2.1\n", NULL);
	assert_int_equal(one(&l, "mixed.example.com", SPFKIT_RR_A)->len, 4);
	done(&l);
}

static void escapes_in_names(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "a\\032b\\%.example. TXT x\n", NULL);
	want_text(&l, "a b%.example", "x", 1);
	done(&l);
}

/*
 * A zone file as BIND users write them: SOA over several lines in
 * parentheses with comments, NS, MX, SRV, CAA, DNSSEC records, a
 * DKIM-style key in several strings, types by number (RFC 3597). What
 * SPF reads is served; the rest is read and ignored.
 */
static const char realistic_zone[] =
	"$TTL 1h\n"
	"$ORIGIN example.com.\n"
	"@\tIN\tSOA\tns1.example.com. hostmaster.example.com. (\n"
	"\t\t2024010101 ; serial\n"
	"\t\t7200       ; refresh\n"
	"\t\t3600       ; retry\n"
	"\t\t1209600    ; expire\n"
	"\t\t300 )      ; minimum\n"
	"\t\tNS\tns1\n"
	"\t\tNS\tns2.example.net.\n"
	"\t3600\tMX\t10 mail\n"
	"\tIN 3600\tMX\t20 mail2.example.com.\n"
	"\t\tTXT\t\"v=spf1 mx \" \"include:_spf.example.net -all\"\n"
	"\t\tCAA\t0 issue \"letsencrypt.org\"\n"
	"\t\tCAA\t0 iodef \"mailto:security@example.com\"\n"
	"\t\tDS\t60485 5 1 ( 2BB183AF5F22588179A53B0A\n"
	"\t\t\t\t98631FAD1A292118 )\n"
	"\t\tDNSKEY\t256 3 5 ( AQPSKmynfzW4kyBv015MUG2DeIQ3\n"
	"\t\t\t\tCbl+BBZH4b/0PY1kxkmvHjcZc8no )\n"
	"\t\tHTTPS\t1 . alpn=h2\n"
	"\t\tTYPE65534 \\# 5 0a0b0c0d0e\n"
	"mail\t\tA\t192.0.2.25\n"
	"\t\tAAAA\t2001:db8::25\n"
	"_sip._tcp\tSRV\t10 60 5060 sip.example.com.\n"
	"sel1._domainkey\tTXT\t( \"v=DKIM1; k=rsa; \"\n"
	"\t\"p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvzwKQIIWzQXv0nihasFTT3+JO23hXCg\"\n"
	"\t\"e+ESWNxCJdVLxKL5edxrumEU3DnrPeGD6q6E/vjoXwBabpm8F5o96MEPm7v12O5IIK7wx7gIJiQWv\"\n"
	"\t\"KrdMhnqvpNlKDYwA4I6q5uGbbA0pnODdJxBmDxTY3NTyBnBbvQ1Ia0R6Y2JEhgyUSgt3V0\" )\n"
	"www\tCNAME\tmail\n"
	"host\tTYPE1\t\\# 4 c0000263\n"
	"host\tTYPE16\t\\# 12 05 68656c6c6f 05 776f726c64\n"
	"host\tCLASS1 TYPE15\t\\# 7 000a 01 6d 01 78 00\n"
	"$ORIGIN .\n"
	".\t\t518400\tIN\tNS\ta.root-servers.net.\n"
	"a.root-servers.net.\t518400\tIN\tA\t198.41.0.4\n"
	"example.org\tIN\tTXT\t\"v=spf1 -all\"\n";

static void realistic_zone_file(void **state)
{
	struct loaded l;
	struct spfkit_dns_answer a;
	const struct spfkit_dns_rr *rr;
	static const char spf[] = "v=spf1 mx include:_spf.example.net -all";

	(void)state;
	load_ok(&l, realistic_zone, NULL);
	want_text(&l, "example.com", spf, sizeof(spf) - 1);
	assert_int_equal(one(&l, "example.com", SPFKIT_RR_TXT)->ttl, 3600);
	a = look(&l, "example.com", SPFKIT_RR_MX);
	assert_int_equal(a.status, SPFKIT_DNS_OK);
	assert_int_equal(a.count, 2);
	assert_int_equal(a.rrs[0].pref, 10);
	assert_memory_equal(a.rrs[0].data, "mail.example.com", 16);
	assert_memory_equal(a.rrs[1].data, "mail2.example.com", 17);
	assert_int_equal(one(&l, "mail.example.com", SPFKIT_RR_A)->len, 4);
	assert_int_equal(one(&l, "mail.example.com", SPFKIT_RR_AAAA)->len, 16);
	assert_int_equal(one(&l, "www.example.com", SPFKIT_RR_A)->len, 4); /* via the CNAME */
	rr = one(&l, "sel1._domainkey.example.com", SPFKIT_RR_TXT);
	assert_int_equal(rr->len, 16 + 77 + 77 + 70); /* the four strings, joined */
	assert_memory_equal(rr->data, "v=DKIM1; k=rsa; p=MIIB", 22);
	/* the ignored types leave names that exist with no SPF data */
	assert_int_equal(look(&l, "_sip._tcp.example.com", SPFKIT_RR_TXT).status, SPFKIT_DNS_NXDOMAIN);
	assert_int_equal(look(&l, "example.com", SPFKIT_RR_A).status, SPFKIT_DNS_NODATA);
	/* RFC 3597 generic data of the types SPF reads is decoded */
	assert_memory_equal(one(&l, "host.example.com", SPFKIT_RR_A)->data, "\xc0\x00\x02\x63", 4);
	want_text(&l, "host.example.com", "helloworld", 10);
	rr = one(&l, "host.example.com", SPFKIT_RR_MX);
	assert_int_equal(rr->pref, 10);
	assert_int_equal(rr->len, 3);
	assert_memory_equal(rr->data, "m.x", 3);
	/* after "$ORIGIN .", names are absolute and "." owns the root's NS */
	assert_int_equal(one(&l, "a.root-servers.net", SPFKIT_RR_A)->ttl, 518400);
	want_text(&l, "example.org", "v=spf1 -all", 11);
	/* $TTL 1h, not the 518400 of the records before it (RFC 2308 §4) */
	assert_int_equal(one(&l, "example.org", SPFKIT_RR_TXT)->ttl, 3600);
	done(&l);
}

static void generic_data_for_every_kept_type(void **state)
{
	static const unsigned char v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	struct loaded l;

	(void)state;
	load_ok(&l,
		"a.example. AAAA \\# 16 20010db8 00000000 00000000 00000001\n"
		"a.example. SPF \\# 4 03 613d62\n"
		"b.example. CNAME \\# 11 01 61 07 6578616d706c65 00\n"
		"c.example. PTR \\# 11 01 61 07 6578616d706c65 00\n"
		"d.example. MX \\# 3 0000 00\n" /* null MX (RFC 7505) */
		"e.example. NS \\# 0\n"
		"f.example. TYPE0 \\# 0\n",
		NULL);
	assert_memory_equal(one(&l, "a.example", SPFKIT_RR_AAAA)->data, v6, 16);
	assert_memory_equal(one(&l, "a.example", SPFKIT_RR_SPF)->data, "a=b", 3);
	assert_memory_equal(one(&l, "b.example", SPFKIT_RR_CNAME)->data, "a.example", 9);
	assert_memory_equal(one(&l, "c.example", SPFKIT_RR_PTR)->data, "a.example", 9);
	assert_int_equal(one(&l, "d.example", SPFKIT_RR_MX)->len, 0);
	assert_int_equal(look(&l, "e.example", SPFKIT_RR_TXT).status, SPFKIT_DNS_NXDOMAIN);
	done(&l);
}

static void null_mx(void **state)
{
	struct loaded l;

	(void)state;
	load_ok(&l, "nomail.example. MX 0 .\n", NULL);
	assert_int_equal(one(&l, "nomail.example", SPFKIT_RR_MX)->len, 0);
	done(&l);
}

static void records_before_an_error_stay(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "a.example. A 192.0.2.1\nb.example. A 1.2.3\nc.example. A 192.0.2.3\n");
	assert_int_equal(l.rc, SPFKIT_ESYNTAX);
	assert_int_equal(one(&l, "a.example", SPFKIT_RR_A)->len, 4);
	assert_int_equal(look(&l, "c.example", SPFKIT_RR_A).status, SPFKIT_DNS_NXDOMAIN);
	done(&l);
}

static void load_file_reads_a_file(void **state)
{
	char path[] = "/tmp/spfkit-zonefile-XXXXXX", err[256];
	static const char text[] = "f.example. TXT \"from a file\"\nbad.example. A 300.1.1.1\n";
	struct spfkit_zone *z;
	struct spfkit_dns_answer a;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	assert_int_equal(spfkit_zone_load_file(z, path, NULL, err, sizeof(err)), SPFKIT_ESYNTAX);
	unlink(path);
	/* the message names the file as given */
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_string_equal(err + strlen(path), ":2: bad IPv4 address '300.1.1.1'");
	assert_int_equal(spfkit_zone_lookup(z, "f.example", 9, SPFKIT_RR_TXT, &a), 0);
	assert_int_equal(a.count, 1);
	spfkit_zone_free(z);
}

/*
 * Issue 33, finding 8: a 52 MB zone took 522 MB; the file's cap did not
 * bound memory. A zone that would pass its memory limit stops at the
 * record that would pass it, with the file and the limit named; one that
 * needs exactly the limit loads.
 */
static void memory_limit_stops_a_load(void **state)
{
	const size_t names = 3000;
	char *text = test_malloc(names * 64), want[128];
	struct spfkit_zone *z;
	size_t n = 0, i, need;
	char err[256];

	(void)state;
	for (i = 0; i < names; i++)
		n += (size_t)snprintf(text + n, names * 64 - n, "h%zu.example. A 192.0.2.%zu\n%s", i,
				      i % 250, i % 3 ? "" : "  TXT \"v=spf1 -all\"\n");
	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	assert_int_equal(spfkit__zone_max_memory(z), SPFKIT_ZONE_MAX_MEMORY);
	assert_int_equal(spfkit_zone_load_text(z, text, n, "big.zone", NULL, err, sizeof(err)), 0);
	need = spfkit__zone_memory(z);
	assert_true(need > names * 100);
	spfkit_zone_free(z);

	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	spfkit__zone_set_max_memory(z, need);
	assert_int_equal(spfkit_zone_load_text(z, text, n, "big.zone", NULL, err, sizeof(err)), 0);
	assert_int_equal(spfkit_zone_size(z), names);
	spfkit_zone_free(z);

	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	spfkit__zone_set_max_memory(z, need - 1);
	assert_int_equal(spfkit_zone_load_text(z, text, n, "big.zone", NULL, err, sizeof(err)),
			 SPFKIT_E2BIG);
	snprintf(want, sizeof(want), ": zone larger than the memory limit of %zu bytes", need - 1);
	if (strncmp(err, "big.zone:", 9) != 0 || strstr(err, want) == NULL)
		fail_msg("got \"%s\", want big.zone:LINE%s", err, want);
	assert_true(spfkit__zone_memory(z) <= need - 1);
	spfkit_zone_free(z);
	test_free(text);
}

static void load_file_missing(void **state)
{
	char err[256];
	struct spfkit_zone *z;

	(void)state;
	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	assert_int_equal(spfkit_zone_load_file(z, "/nonexistent/x.zone", NULL, err, sizeof(err)),
			 SPFKIT_EIO);
	assert_string_equal(err, "/nonexistent/x.zone: No such file or directory");
	assert_int_equal(spfkit_zone_load_file(z, NULL, NULL, err, sizeof(err)), SPFKIT_EINVAL);
	assert_int_equal(spfkit_zone_load_file(NULL, "x", NULL, err, sizeof(err)), SPFKIT_EINVAL);
	spfkit_zone_free(z);
}

static void bad_origin_argument(void **state)
{
	struct loaded l;

	(void)state;
	load_n(&l, "a A 192.0.2.1\n", 14, "a..example");
	assert_int_equal(l.rc, SPFKIT_EINVAL);
	assert_string_equal(l.err, "t.zone: bad origin: empty label");
	done(&l);
}

static void error_buffer_may_be_small_or_null(void **state)
{
	struct spfkit_zone *z;
	char small[8];

	(void)state;
	assert_int_equal(spfkit_zone_new(&test_alloc, &z), 0);
	assert_int_equal(spfkit_zone_load_text(z, "a.example. A x\n", 15, "t.zone", NULL, NULL, 0),
			 SPFKIT_ESYNTAX);
	assert_int_equal(spfkit_zone_load_text(z, "a.example. A x\n", 15, "t.zone", NULL, small,
					       sizeof(small)),
			 SPFKIT_ESYNTAX);
	assert_string_equal(small, "t.zone:");
	spfkit_zone_free(z);
}

/* ---- caps ------------------------------------------------------------ */

static void record_of_65536_bytes_loads(void **state)
{
	size_t len = SPFKIT_ZONE_MAX_LINE;
	char *text = test_malloc(len + 1);
	struct loaded l;

	(void)state;
	memset(text, 'x', len);
	text[0] = ';'; /* one comment line of exactly the cap, newline not counted */
	text[len] = '\n';
	load_n(&l, text, len + 1, NULL);
	assert_int_equal(l.rc, 0);
	done(&l);
	test_free(text);
}

static void record_over_65536_bytes_is_e2big(void **state)
{
	size_t len = SPFKIT_ZONE_MAX_LINE + 1;
	char *text = test_malloc(len + 1);
	struct loaded l;

	(void)state;
	memset(text, 'x', len);
	text[0] = ';';
	text[len] = '\n';
	load_n(&l, text, len + 1, NULL);
	assert_int_equal(l.rc, SPFKIT_E2BIG);
	assert_string_equal(l.err, "t.zone:1: record longer than 65536 bytes");
	done(&l);
	test_free(text);
}

static void long_record_across_parentheses_is_e2big(void **state)
{
	/* 300 lines of 250 strings each, inside one pair of parentheses */
	size_t cap = 300 * 260 + 64, n;
	char *text = test_malloc(cap);
	struct loaded l;
	int i;

	(void)state;
	n = (size_t)snprintf(text, cap, "t.example. TXT (\n");
	for (i = 0; i < 300; i++) {
		memset(text + n, 'y', 250);
		n += 250;
		text[n++] = '\n';
	}
	text[n++] = ')';
	load_n(&l, text, n, NULL);
	assert_int_equal(l.rc, SPFKIT_E2BIG);
	assert_string_equal(l.err, "t.zone:263: record longer than 65536 bytes");
	done(&l);
	test_free(text);
}

/* ---- allocation failure ---------------------------------------------- */

static void allocation_failure_is_enomem_without_leak(void **state)
{
	static const char text[] = "$ORIGIN example.com.\n"
				   "@ TXT \"v=spf1 mx -all\"\n"
				   "@ MX 10 mx\n"
				   "mx A 192.0.2.1\n"
				   "a.b.c TXT \"deep\"\n";
	struct test_alloc_failing f;
	struct spfkit_allocator fa = test_alloc_failing(&f);
	struct spfkit_zone *z;
	char err[256];
	long n;
	int rc = SPFKIT_ENOMEM;

	(void)state;
	for (n = 0; rc == SPFKIT_ENOMEM; n++) {
		f.left = 1;
		assert_int_equal(spfkit_zone_new(&fa, &z), 0);
		f.left = n;
		rc = spfkit_zone_load_text(z, text, sizeof(text) - 1, "t.zone", NULL, err, sizeof(err));
		if (rc == SPFKIT_ENOMEM)
			assert_string_equal(strstr(err, ": out of memory"), ": out of memory");
		spfkit_zone_free(z);
	}
	assert_int_equal(rc, 0);
	assert_true(n > 3);
}

/* ---- every error, with its message ----------------------------------- */

struct bad_case {
	const char *name;
	const char *text;
	size_t len; /* 0: strlen(text) */
	int rc;
	const char *msg;
};

#define BAD(n, t, m) { n, t, 0, SPFKIT_ESYNTAX, m }
/* for texts holding a NUL byte */
#define BADZ(n, t, m) { n, t, sizeof(t) - 1, SPFKIT_ESYNTAX, m }

static const struct bad_case bad_cases[] = {
	BAD("bad_ipv4", "a.example. A 1.2.3\n", "t.zone:1: bad IPv4 address '1.2.3'"),
	BAD("bad_ipv4_octet", "a.example. A 192.0.2.256\n",
	    "t.zone:1: bad IPv4 address '192.0.2.256'"),
	BAD("ipv6_for_a", "a.example. A 2001:db8::1\n", "t.zone:1: bad IPv4 address '2001:db8::1'"),
	BAD("bad_ipv6", "a.example. AAAA 2001:db8::g\n", "t.zone:1: bad IPv6 address '2001:db8::g'"),
	BAD("quoted_address", "a.example. A \"192.0.2.1\"\n", "t.zone:1: bad IPv4 address '192.0.2.1'"),
	BAD("a_without_address", "a.example. A\n", "t.zone:1: A record without an address"),
	BAD("aaaa_without_address", "a.example. AAAA ; nothing\n",
	    "t.zone:1: AAAA record without an address"),
	BAD("unknown_type", "a.example. 60 IN FOO bar\n",
	    "t.zone:1: unknown record type 'FOO' (write other types as TYPEnnn, RFC 3597)"),
	BAD("type_number_too_big", "a.example. TYPE65536 \\# 0\n",
	    "t.zone:1: unknown record type 'TYPE65536' (write other types as TYPEnnn, RFC 3597)"),
	BAD("soa_short", "a.example. SOA ns.a.example. host.a.example. ( 1 2 3\n 4 )\n",
	    "t.zone:1: SOA record with 6 data fields, want 7"),
	BAD("soa_long", "a.example. SOA ns host 1 2 3 4 5 6\n",
	    "t.zone:1: SOA record with 8 data fields, want 7"),
	BAD("soa_bad_serial", "a.example. SOA ns host 1x 2 3 4 5\n", "t.zone:1: bad SOA serial '1x'"),
	BAD("soa_serial_over_32_bits", "a.example. SOA ns host 4294967296 2 3 4 5\n",
	    "t.zone:1: bad SOA serial '4294967296'"),
	BAD("soa_bad_refresh", "a.example. SOA ns host (\n 1\n soon ; refresh\n 3 4 5 )\n",
	    "t.zone:3: bad SOA refresh 'soon'"),
	BAD("soa_quoted_name", "a.example. SOA \"ns\" host 1 2 3 4 5\n",
	    "t.zone:1: SOA MNAME is a quoted string"),
	BAD("ns_without_target", "a.example. NS\n", "t.zone:1: NS record with 0 data fields, want 1"),
	BAD("ns_two_targets", "a.example. NS a b\n", "t.zone:1: NS record with 2 data fields, want 1"),
	BAD("srv_short", "_sip._tcp.a.example. SRV 10 60 5060\n",
	    "t.zone:1: SRV record with 3 data fields, want 4"),
	BAD("caa_long", "a.example. CAA 0 issue \"ca.example\" extra\n",
	    "t.zone:1: CAA record with 4 data fields, want 3"),
	BAD("ds_short", "a.example. DS 60485 5 1\n",
	    "t.zone:1: DS record with 3 data fields, want at least 4"),
	BAD("generic_without_length", "a.example. TYPE999 \\#\n",
	    "t.zone:1: TYPE999 record: '\\#' without a length (RFC 3597)"),
	BAD("generic_bad_length", "a.example. TYPE999 \\# x 00\n",
	    "t.zone:1: bad RFC 3597 data length 'x'"),
	BAD("generic_bad_hex", "a.example. TYPE999 \\# 2 00 0g\n",
	    "t.zone:1: bad hex '0g' in TYPE999 RFC 3597 data"),
	BAD("generic_odd_hex", "a.example. TYPE999 \\# 2 000\n",
	    "t.zone:1: TYPE999 RFC 3597 data has an odd number of hex digits"),
	BAD("generic_short", "a.example. NS \\# 3 0000\n",
	    "t.zone:1: NS RFC 3597 data shorter than its length"),
	BAD("generic_long", "a.example. TYPE999 \\# 1 0000\n",
	    "t.zone:1: TYPE999 RFC 3597 data longer than its length 1"),
	BAD("generic_quoted", "a.example. TYPE999 \\# 1 \"00\"\n",
	    "t.zone:1: TYPE999 RFC 3597 data holds a quoted string"),
	BAD("generic_a_wrong_length", "a.example. TYPE1 \\# 3 c00002\n",
	    "t.zone:1: A RFC 3597 data of 3 bytes, want 4"),
	BAD("generic_txt_past_end", "a.example. TXT \\# 3 05 6869\n",
	    "t.zone:1: TXT RFC 3597 data: a string runs past the end"),
	BAD("generic_txt_empty", "a.example. TXT \\# 0\n", "t.zone:1: TXT record without a string"),
	BAD("generic_cname_compressed", "a.example. CNAME \\# 2 c00c\n",
	    "t.zone:1: CNAME RFC 3597 data: a label over 63 bytes, or a compression pointer"),
	BAD("generic_cname_trailing", "a.example. CNAME \\# 4 01 62 00 00\n",
	    "t.zone:1: CNAME RFC 3597 data: bytes after the name"),
	BAD("generic_cname_root", "a.example. CNAME \\# 1 00\n",
	    "t.zone:1: CNAME RFC 3597 data: the target is the root"),
	BAD("generic_mx_no_pref", "a.example. MX \\# 1 00\n",
	    "t.zone:1: MX RFC 3597 data without a preference"),
	BAD("generic_name_dot_in_label", "a.example. PTR \\# 5 03 612e62 00\n",
	    "t.zone:1: PTR RFC 3597 data: a '.' inside a label is not supported"),
	BAD("class_generic_other", "a.example. CLASS3 A 192.0.2.1\n",
	    "t.zone:1: class 'CLASS3' is not supported (only IN)"),
	BAD("txt_at_root", ". TXT \"v=spf1 -all\"\n",
	    "t.zone:1: TXT record at the root name ('.', or '@' with no $ORIGIN) is not supported"),
	BAD("quoted_type", "a.example. \"TXT\" x\n",
	    "t.zone:1: expected a record type, not a quoted string"),
	BAD("no_type", "a.example.\n", "t.zone:1: record without a type"),
	BAD("no_type_after_ttl", "a.example. 60 IN\n", "t.zone:1: record without a type"),
	BAD("bad_mx_preference", "a.example. MX 70000 mx.example.\n",
	    "t.zone:1: bad MX preference '70000'"),
	BAD("mx_preference_not_a_number", "a.example. MX mx.example.\n",
	    "t.zone:1: bad MX preference 'mx.example.'"),
	BAD("mx_without_preference", "a.example. MX\n", "t.zone:1: MX record without a preference"),
	BAD("mx_without_target", "a.example. MX 10\n", "t.zone:1: MX record without a target name"),
	BAD("ptr_without_target", "a.example. PTR\n", "t.zone:1: PTR record without a target name"),
	BAD("cname_target_quoted", "a.example. CNAME \"b.example.\"\n",
	    "t.zone:1: expected a domain name, not a quoted string"),
	BAD("txt_without_string", "a.example. TXT\n", "t.zone:1: TXT record without a string"),
	BAD("spf_without_string", "a.example. SPF ; none\n", "t.zone:1: SPF record without a string"),
	BAD("string_over_255",
	    "a.example. TXT \"0123456789012345678901234567890123456789012345678901234567890123456789"
	    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567"
	    "8901234567890123456789012345678901234567890123456789012345678901234567890123456789012345"
	    "6789012345\"\n",
	    "t.zone:1: string longer than 255 bytes (split it into several quoted strings)"),
	BAD("quote_not_closed", "a.example. TXT \"abc\nb.example. A 192.0.2.1\n",
	    "t.zone:1: quoted string not closed on its line"),
	BAD("quote_not_closed_at_end", "a.example. TXT \"abc",
	    "t.zone:1: quoted string not closed on its line"),
	BAD("escape_two_digits", "a.example. TXT \"\\25\"\n",
	    "t.zone:1: bad escape '\\25': want three digits"),
	BAD("escape_over_255", "a.example. TXT \"\\256\"\n", "t.zone:1: bad escape '\\256': over 255"),
	BAD("backslash_at_line_end", "a.example. TXT abc\\\n",
	    "t.zone:1: backslash at the end of a line"),
	BAD("backslash_at_text_end", "a.example. TXT abc\\",
	    "t.zone:1: backslash at the end of a line"),
	BAD("blank_owner_first", "  A 192.0.2.1\n",
	    "t.zone:1: line starts with a blank but no owner came before"),
	BAD("bad_ttl_too_big", "a.example. 2147483648 A 192.0.2.1\n",
	    "t.zone:1: bad TTL '2147483648'"),
	BAD("bad_ttl_unit", "a.example. 1x A 192.0.2.1\n", "t.zone:1: bad TTL '1x'"),
	BAD("bad_ttl_two_units", "a.example. 1hh A 192.0.2.1\n", "t.zone:1: bad TTL '1hh'"),
	BAD("second_ttl", "a.example. 60 60 A 192.0.2.1\n", "t.zone:1: second TTL '60'"),
	BAD("class_ch", "a.example. CH A 192.0.2.1\n",
	    "t.zone:1: class 'CH' is not supported (only IN)"),
	BAD("second_class", "a.example. IN 60 IN A 192.0.2.1\n", "t.zone:1: second class 'IN'"),
	BAD("trailing_token", "a.example. A 192.0.2.1 extra\n",
	    "t.zone:1: unexpected 'extra' after the A data"),
	BAD("close_without_open", "a.example. A 192.0.2.1 )\n", "t.zone:1: ')' without '('"),
	BAD("open_never_closed", "x.example. A 192.0.2.1\na.example. TXT ( \"x\"\n\n\n",
	    "t.zone:2: '(' never closed"),
	BAD("nested_open", "a.example. TXT ( ( \"x\" ) )\n", "t.zone:1: '(' inside '('"),
	BAD("error_line_inside_parentheses", "\n\na.example. MX (\n  10\n  a..b )\n",
	    "t.zone:5: bad name 'a..b': empty label"),
	BADZ("nul_byte", "a.example. A 192.0.2.1\nb.example. TXT \"a\0b\"\n",
	     "t.zone:2: NUL byte in the file"),
	BADZ("nul_byte_in_comment", "; a\0b\n", "t.zone:1: NUL byte in the file"),
	BADZ("nul_byte_in_word", "a.example. TXT a\0b\n", "t.zone:1: NUL byte in the file"),
	BADZ("nul_byte_escaped", "a.example. TXT a\\\0b\n", "t.zone:1: NUL byte in the file"),
	BAD("control_character", "a.example. TXT a\001b\n", "t.zone:1: control character 0x01"),
	BAD("lone_carriage_return", "a.example. A 192.0.2.1\rb.example. A 192.0.2.2\n",
	    "t.zone:1: carriage return not followed by a line feed"),
	BAD("include", "$INCLUDE other.zone\n", "t.zone:1: $INCLUDE is not supported"),
	BAD("unknown_directive", "$GENERATE 1-10 a$ A 192.0.2.$\n",
	    "t.zone:1: unknown directive '$GENERATE'"),
	BAD("origin_without_name", "$ORIGIN\n", "t.zone:1: $ORIGIN without a name"),
	BAD("origin_bad_name", "$ORIGIN a..b.\n", "t.zone:1: bad name 'a..b.': empty label"),
	BAD("ttl_directive_without_ttl", "$TTL\n", "t.zone:1: $TTL without a TTL"),
	BAD("ttl_directive_word", "$TTL abc\n",
	    "t.zone:1: $TTL 'abc' is not a TTL (want seconds, or units as in 1h30m)"),
	BAD("ttl_directive_quoted", "$TTL \"60\"\n",
	    "t.zone:1: $TTL '60' is not a TTL (a quoted string)"),
	BAD("ttl_directive_bad_unit", "$TTL 1x\n", "t.zone:1: bad TTL '1x'"),
	BAD("ttl_directive_trailing", "$TTL 60 60\n", "t.zone:1: unexpected '60' after $TTL"),
	BAD("owner_empty_label", "a..example. A 192.0.2.1\n",
	    "t.zone:1: bad name 'a..example.': empty label"),
	BAD("owner_root", ". A 192.0.2.1\n",
	    "t.zone:1: A record at the root name ('.', or '@' with no $ORIGIN) is not supported"),
	BAD("target_root", "a.example. CNAME .\n", "t.zone:1: bad name '.': empty name"),
	BAD("owner_long_label",
	    "a1234567890123456789012345678901234567890123456789012345678901234.example. A 192.0.2.1\n",
	    "t.zone:1: bad name 'a123456789012345678901234567890123456789012345678901234567890123..."
	    "': label longer than 63 bytes"),
	BAD("owner_over_253",
	    "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r."
	    "s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j."
	    "k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b. "
	    "A 192.0.2.1\n",
	    "t.zone:1: name 'a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f."
	    "...' longer than 253 bytes"),
	BAD("escaped_dot_in_name", "a\\.b.example. A 192.0.2.1\n",
	    "t.zone:1: escaped '.' in name 'a\\.b.example.' is not supported"),
	BAD("at_without_origin", "@ A 192.0.2.1\n",
	    "t.zone:1: A record at the root name ('.', or '@' with no $ORIGIN) is not supported"),
	BAD("at_without_origin_in_data", "a.example. CNAME @\n",
	    "t.zone:1: '@' is the root here (no $ORIGIN)"),
	BAD("quoted_owner", "\"a.example.\" A 192.0.2.1\n",
	    "t.zone:1: expected a domain name, not a quoted string"),
	BAD("cname_and_other_data", "a.example. CNAME b.example.\na.example. TXT x\n",
	    "t.zone:2: TXT record refused: CNAME and other data"),
	BAD("second_cname", "a.example. CNAME b.example.\na.example. CNAME c.example.\n",
	    "t.zone:2: CNAME record refused: more than one CNAME at a name"),
	BAD("odd_bytes_echoed_escaped", "a.example. A 1.2.\3003\n",
	    "t.zone:1: bad IPv4 address '1.2.\\1923'"),
};

static void bad_case_run(void **state)
{
	const struct bad_case *c = *state;
	size_t len = c->len ? c->len : strlen(c->text);
	struct loaded l;

	load_n(&l, c->text, len, NULL);
	if (l.rc != c->rc || strcmp(l.err, c->msg) != 0)
		fail_msg("%s: got %d \"%s\", want %d \"%s\"", c->name, l.rc, l.err, c->rc, c->msg);
	done(&l);
}

#define NBAD (sizeof(bad_cases) / sizeof(bad_cases[0]))

int main(void)
{
	const struct CMUnitTest fixed[] = {
		cmocka_unit_test(loads_every_type),
		cmocka_unit_test(origin_relative_names_and_at),
		cmocka_unit_test(origin_argument_and_relative_origin),
		cmocka_unit_test(blank_owner_repeats_previous_owner),
		cmocka_unit_test(ttl_and_class_in_either_order),
		cmocka_unit_test(ttl_defaults),
		cmocka_unit_test(explicit_ttl_does_not_replace_dollar_ttl),
		cmocka_unit_test(exact_duplicates_are_dropped),
		cmocka_unit_test(near_duplicates_are_kept),
		cmocka_unit_test(txt_strings_join_without_separator),
		cmocka_unit_test(txt_strings_as_written),
		cmocka_unit_test(txt_unquoted_words_are_strings),
		cmocka_unit_test(txt_escapes),
		cmocka_unit_test(txt_empty_string),
		cmocka_unit_test(txt_string_of_255_bytes),
		cmocka_unit_test(semicolon_in_quotes_is_not_a_comment),
		cmocka_unit_test(parentheses_span_lines),
		cmocka_unit_test(crlf_line_ends),
		cmocka_unit_test(no_final_newline),
		cmocka_unit_test(empty_and_comment_only_text),
		cmocka_unit_test(names_are_case_insensitive),
		cmocka_unit_test(escapes_in_names),
		cmocka_unit_test(null_mx),
		cmocka_unit_test(realistic_zone_file),
		cmocka_unit_test(generic_data_for_every_kept_type),
		cmocka_unit_test(records_before_an_error_stay),
		cmocka_unit_test(load_file_reads_a_file),
		cmocka_unit_test(load_file_missing),
		cmocka_unit_test(memory_limit_stops_a_load),
		cmocka_unit_test(bad_origin_argument),
		cmocka_unit_test(error_buffer_may_be_small_or_null),
		cmocka_unit_test(record_of_65536_bytes_loads),
		cmocka_unit_test(record_over_65536_bytes_is_e2big),
		cmocka_unit_test(long_record_across_parentheses_is_e2big),
		cmocka_unit_test(allocation_failure_is_enomem_without_leak),
	};
	struct CMUnitTest tests[sizeof(fixed) / sizeof(fixed[0]) + NBAD];
	size_t i, n = sizeof(fixed) / sizeof(fixed[0]);

	memcpy(tests, fixed, sizeof(fixed));
	/* one named test per error case, so each can fail on its own */
	for (i = 0; i < NBAD; i++) {
		struct CMUnitTest t = cmocka_unit_test_prestate(bad_case_run, (void *)&bad_cases[i]);

		t.name = bad_cases[i].name;
		tests[n + i] = t;
	}
	return _cmocka_run_group_tests("zonefile", tests, n + NBAD, NULL, NULL);
}
