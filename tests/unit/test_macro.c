/*
 * Unit tests of lib/spf/macro.c: macro-string parsing (RFC 7208 §7.1),
 * expansion (§7.3, examples of §7.4), URL escaping, the 253 rule and the
 * expansion cap. Memory goes through cmocka's test allocator, so every
 * test also checks for leaks.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "ctx.h"
#include "macro.h"
#include "cmocka_alloc.h" /* tests/support */

/* The values of RFC 7208 §7.4: strong-bad@email.example.com from 192.0.2.3. */
static struct spfkit_ip ip4 = {4, {192, 0, 2, 3}};
static struct spfkit_ip ip6 = {6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0x01}};

static struct spfkit__macro_env env_for(const struct spfkit_ip *ip)
{
	struct spfkit__macro_env e;

	memset(&e, 0, sizeof(e));
	e.sender = "strong-bad@email.example.com";
	e.sender_len = strlen(e.sender);
	e.local = "strong-bad";
	e.local_len = strlen(e.local);
	e.sender_domain = "email.example.com";
	e.sender_domain_len = strlen(e.sender_domain);
	e.domain = "email.example.com";
	e.domain_len = strlen(e.domain);
	e.ip = ip;
	e.helo = "mx.example.org";
	e.helo_len = strlen(e.helo);
	e.now = 1400000000;
	return e;
}

/* Parse `src` for `use`, expand with `env`; returns the API result and
 * leaves the text in got (NUL-terminated, truncated to size). */
static int expand_with(const char *src, enum spfkit__macro_use use,
		       const struct spfkit__macro_env *env, char *got, size_t size)
{
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	struct spfkit__buf b;
	int rc;

	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	spfkit__buf_init(&b, &test_alloc, 1u << 20);
	rc = spfkit__macro_parse(src, strlen(src), use, &ar, &ms, NULL, NULL);
	if (rc == 0)
		rc = spfkit__macro_expand(&ms, env, use, &b);
	snprintf(got, size, "%s", spfkit__buf_str(&b));
	spfkit__buf_free(&b);
	spfkit__arena_free(&ar);
	return rc;
}

struct xcase {
	const char *src;
	const char *want;
};

static void check_cases(const struct xcase *c, size_t n, enum spfkit__macro_use use,
			const struct spfkit__macro_env *env)
{
	char got[2048];
	size_t i;
	int rc, bad = 0;

	for (i = 0; i < n; i++) {
		rc = expand_with(c[i].src, use, env, got, sizeof(got));
		if (rc != 0 || strcmp(got, c[i].want) != 0) {
			print_error("%s: got \"%s\" (rc %d), want \"%s\"\n", c[i].src, got, rc,
				    c[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* ---- expansion ------------------------------------------------------- */

static void rfc_7_4_letters_and_transformers(void **state)
{
	static const struct xcase c[] = {
		{"%{s}", "strong-bad@email.example.com"},
		{"%{o}", "email.example.com"},
		{"%{d}", "email.example.com"},
		{"%{d4}", "email.example.com"},
		{"%{d3}", "email.example.com"},
		{"%{d2}", "example.com"},
		{"%{d1}", "com"},
		{"%{dr}", "com.example.email"},
		{"%{d2r}", "example.email"},
		{"%{l}", "strong-bad"},
		{"%{l-}", "strong.bad"},
		{"%{lr}", "strong-bad"},
		{"%{lr-}", "bad.strong"},
		{"%{l1r-}", "strong"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_DOMAIN, &env);
}

static void rfc_7_4_macro_strings(void **state)
{
	static const struct xcase c[] = {
		{"%{ir}.%{v}._spf.%{d2}", "3.2.0.192.in-addr._spf.example.com"},
		{"%{lr-}.lp._spf.%{d2}", "bad.strong.lp._spf.example.com"},
		{"%{lr-}.lp.%{ir}.%{v}._spf.%{d2}",
		 "bad.strong.lp.3.2.0.192.in-addr._spf.example.com"},
		{"%{ir}.%{v}.%{l1r-}.lp._spf.%{d2}",
		 "3.2.0.192.in-addr.strong.lp._spf.example.com"},
		{"%{d2}.trusted-domains.example.net", "example.com.trusted-domains.example.net"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_DOMAIN, &env);
}

/* §7.4's IPv6 example, in uppercase nibbles (see format_nibbles in macro.c:
 * the RFC 7208 test suite's v-macro-ip6 wants them; DNS ignores case). */
static void rfc_7_4_ip6_nibbles(void **state)
{
	static const struct xcase c[] = {
		{"%{ir}.%{v}._spf.%{d2}",
		 "1.0.B.C.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.B.D.0.1.0.0.2.ip6._spf.example.com"},
		{"%{i}", "2.0.0.1.0.D.B.8.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.C.B.0.1"},
		{"%{i2r}", "0.2"}, /* reversed, then the rightmost two */
		{"%{v}", "ip6"},
	};
	struct spfkit__macro_env env = env_for(&ip6);

	(void)state;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_DOMAIN, &env);
}

static void remaining_letters(void **state)
{
	static const struct xcase c[] = {
		{"%{h}", "mx.example.org"},
		{"%{v}", "in-addr"},
		{"%{i}", "192.0.2.3"},
		{"%{c}", "192.0.2.3"},
		{"%{p}", "unknown"}, /* no validated name: §7.3 */
		{"%{r}", "unknown"}, /* no receiver given */
		{"%{t}", "1400000000"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_EXPLAIN, &env);
}

static void p_and_r_when_known(void **state)
{
	static const struct xcase c[] = {
		{"%{p}", "mx.example.org"},
		{"%{r}", "receiver.example.net"},
		{"%{p2}", "example.org"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.validated = "mx.example.org";
	env.validated_len = strlen(env.validated);
	env.receiver = "receiver.example.net";
	env.receiver_len = strlen(env.receiver);
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_EXPLAIN, &env);
}

static void t_negative_and_zero(void **state)
{
	static const struct xcase zero[] = {{"%{t}", "0"}};
	static const struct xcase neg[] = {{"%{t}", "-5"}};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.now = 0;
	check_cases(zero, 1, SPFKIT__MACRO_EXPLAIN, &env);
	env.now = -5;
	check_cases(neg, 1, SPFKIT__MACRO_EXPLAIN, &env);
}

/* %{c}: RFC 5952 text, as the suite's v-macro-ip6 wants "cafe:babe::1". */
static void c_ip6_rfc5952(void **state)
{
	static const struct {
		unsigned char a[16];
		const char *want;
	} c[] = {
		{{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "cafe:babe::1"},
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, "2001:db8:0:1:1:1:1:1"},
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}, "2001:db8::1:0:0:1"},
		{{0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, "2001:0:0:1::1"},
		{{0}, "::"},
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "::1"},
		{{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "1::"},
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1}, "::ffff:192.0.2.1"},
		{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0xff},
		 "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
	};
	struct spfkit_ip ip = {6, {0}};
	struct spfkit__macro_env env = env_for(&ip);
	char got[128];
	size_t i;
	int bad = 0;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memcpy(ip.addr, c[i].a, 16);
		assert_int_equal(expand_with("%{c}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
		if (strcmp(got, c[i].want) != 0) {
			print_error("%%{c}: got \"%s\", want \"%s\"\n", got, c[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void escapes(void **state)
{
	static const struct xcase c[] = {
		{"macro%%percent%_%_space%-url-space.example.com",
		 "macro%percent  space%20url-space.example.com"},
		{"%%", "%"},
		{"%_", " "},
		{"%-", "%20"},
		{"", ""},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_DOMAIN, &env);
}

/* §7.3: uppercase letters are URL-escaped after the transformers. */
static void url_escaping(void **state)
{
	static const struct xcase c[] = {
		{"http://example.com/why.html?l=%{L}",
		 "http://example.com/why.html?l=~jack%26jill%3Dup-a_b3.c"},
		{"%{S}", "~jack%26jill%3Dup-a_b3.c%40e8.example.com"},
		{"%{L1r=}", "~jack%26jill"}, /* split on "=", reverse, keep 1 */
		{"%{O}", "e8.example.com"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.sender = "~jack&jill=up-a_b3.c@e8.example.com";
	env.sender_len = strlen(env.sender);
	env.local = "~jack&jill=up-a_b3.c";
	env.local_len = strlen(env.local);
	env.sender_domain = "e8.example.com";
	env.sender_domain_len = strlen(env.sender_domain);
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_EXPLAIN, &env);
}

/* High bytes escape as two uppercase hex digits, never as a sign-extended int. */
static void url_escaping_high_and_control_bytes(void **state)
{
	static const struct xcase c[] = {{"%{L}", "a%E9%FF%00%20%7F~"}};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.local = "a\xe9\xff\0 \x7f~";
	env.local_len = 7;
	/* expand_with prints with %s, so the NUL inside the value is escaped first */
	check_cases(c, 1, SPFKIT__MACRO_EXPLAIN, &env);
}

static void url_escaping_ip6_c(void **state)
{
	static const struct xcase c[] = {{"%{C}", "2001%3Adb8%3A%3Acb01"}};
	struct spfkit__macro_env env = env_for(&ip6);

	(void)state;
	check_cases(c, 1, SPFKIT__MACRO_EXPLAIN, &env);
}

static void delimiters(void **state)
{
	static const struct xcase c[] = {
		{"%{l2r+-}", "bar.foo"}, /* the suite's macro-multiple-delimiters */
		{"%{l+}", "foo-bar.zip.quux"},
		{"%{l+-}", "foo.bar.zip.quux"},
		{"%{lr+-}", "quux.zip.bar.foo"},
		{"%{l1}", "foo-bar+zip+quux"}, /* default delimiter "." only */
		{"%{l,}", "foo-bar+zip+quux"},
		{"%{s/_=}", "foo-bar+zip+quux@e12.example.com"},
		{"%{o.-}", "e12.example.com"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.local = "foo-bar+zip+quux";
	env.local_len = strlen(env.local);
	env.sender = "foo-bar+zip+quux@e12.example.com";
	env.sender_len = strlen(env.sender);
	env.sender_domain = "e12.example.com";
	env.sender_domain_len = strlen(env.sender_domain);
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_DOMAIN, &env);
}

static void every_delimiter_splits(void **state)
{
	static const struct xcase c[] = {
		{"%{lr.-+,/_=}", "h.g.f.e.d.c.b.a"},
		{"%{l.}", "a.b-c+d,e/f_g=h"},
		{"%{lr-}", "c+d,e/f_g=h.a.b"},
		{"%{lr/}", "f_g=h.a.b-c+d,e"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.local = "a.b-c+d,e/f_g=h";
	env.local_len = strlen(env.local);
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_DOMAIN, &env);
}

/* §7.3: "no special treatment is given to leading, trailing, or
 * consecutive delimiters", so empty parts survive. */
static void empty_parts_are_kept(void **state)
{
	static const struct xcase c[] = {
		{"%{dr}", ".b..a"},
		{"%{d1}", ""},
		{"%{d2}", "b."},
		{"%{d2r}", ".a"},
		{"%{d9r}", ".b..a"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.domain = "a..b.";
	env.domain_len = strlen(env.domain);
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_EXPLAIN, &env);
}

static void empty_value(void **state)
{
	static const struct xcase c[] = {{"x%{d}y", "xy"}, {"x%{dr}y", "xy"}, {"x%{D3r-}y", "xy"}};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.domain = NULL;
	env.domain_len = 0;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_EXPLAIN, &env);
}

/* Digits above 128 mean "all"; 128 keeps 128; leading zeros are just digits. */
static void digit_transformer_bounds(void **state)
{
	struct spfkit__macro_env env = env_for(&ip4);
	char value[400], want[400], got[512];
	size_t i;

	(void)state;
	for (i = 0; i < 200; i++) { /* 200 one-letter parts: a.a.a... */
		value[2 * i] = 'a';
		value[2 * i + 1] = '.';
	}
	value[399] = '\0';
	env.domain = value;
	env.domain_len = 399;
	assert_int_equal(expand_with("%{d129}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, value);
	assert_int_equal(expand_with("%{d99999999999999999999}", SPFKIT__MACRO_EXPLAIN, &env, got,
				     sizeof(got)),
			 0);
	assert_string_equal(got, value);
	assert_int_equal(expand_with("%{d128}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
	memcpy(want, value, 255);
	want[255] = '\0';
	assert_string_equal(got, want);
	assert_int_equal(expand_with("%{d01}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, "a");
}

static void digits_stored_in_piece(void **state)
{
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	assert_int_equal(spfkit__macro_parse("%{D128R+}", 9, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL,
					     NULL),
			 0);
	assert_int_equal(ms.count, 1);
	assert_int_equal(ms.pieces[0].kind, SPFKIT_PIECE_MACRO);
	assert_int_equal(ms.pieces[0].letter, 'd');
	assert_int_equal(ms.pieces[0].url_escape, 1);
	assert_int_equal(ms.pieces[0].digits, 128);
	assert_int_equal(ms.pieces[0].reverse, 1);
	assert_int_equal(ms.pieces[0].delims, SPFKIT_DELIM_PLUS);
	assert_int_equal(spfkit__macro_parse("%{d129}", 7, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL,
					     NULL),
			 0);
	assert_int_equal(ms.pieces[0].digits, 0);
	spfkit__arena_free(&ar);
}

/* ---- parse ----------------------------------------------------------- */

/* A string without '%' is one literal piece pointing into the source. */
static void literal_is_one_piece_zero_copy(void **state)
{
	static const char src[] = "_spf.example.com";
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	assert_int_equal(spfkit__macro_parse(src, sizeof(src) - 1, SPFKIT__MACRO_DOMAIN, &ar, &ms,
					     NULL, NULL),
			 0);
	assert_int_equal(ms.count, 1);
	assert_int_equal(ms.pieces[0].kind, SPFKIT_PIECE_LITERAL);
	assert_ptr_equal(ms.pieces[0].text, src);
	assert_int_equal(ms.pieces[0].len, sizeof(src) - 1);
	assert_int_equal(ms.letters, 0);
	assert_ptr_equal(ms.src, src);
	assert_int_equal(ms.src_len, sizeof(src) - 1);
	spfkit__arena_free(&ar);
}

static void empty_string_has_no_pieces(void **state)
{
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	assert_int_equal(spfkit__macro_parse("", 0, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL), 0);
	assert_int_equal(ms.count, 0);
	assert_null(ms.pieces);
	assert_false(spfkit__macro_ends_in_expand(&ms));
	spfkit__arena_free(&ar);
}

static void letters_bitmask(void **state)
{
	static const char src[] = "%{ir}.%{v}.%{L}.x.%{d2}%{O}";
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	uint32_t want = (1u << ('i' - 'a')) | (1u << ('v' - 'a')) | (1u << ('l' - 'a')) |
			(1u << ('d' - 'a')) | (1u << ('o' - 'a'));

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	assert_int_equal(spfkit__macro_parse(src, sizeof(src) - 1, SPFKIT__MACRO_DOMAIN, &ar, &ms,
					     NULL, NULL),
			 0);
	assert_int_equal(ms.letters, want);
	assert_int_equal(ms.count, 8);
	spfkit__arena_free(&ar);
}

struct pcase {
	const char *src;
	size_t len; /* 0: strlen */
	enum spfkit__macro_use use;
	size_t off;
	const char *why;
};

/* Every parse rule, with the offset of the bad byte. */
static void parse_errors_with_offsets(void **state)
{
	static const struct pcase c[] = {
		{"%", 0, SPFKIT__MACRO_DOMAIN, 1, "'%' not followed by '{', '%', '_' or '-'"},
		{"foo%.sbl.example.com", 0, SPFKIT__MACRO_DOMAIN, 4,
		 "'%' not followed by '{', '%', '_' or '-'"},
		{"%(ir).sbl.example.com", 0, SPFKIT__MACRO_DOMAIN, 1,
		 "'%' not followed by '{', '%', '_' or '-'"},
		{"%abc", 0, SPFKIT__MACRO_EXPLAIN, 1, "'%' not followed by '{', '%', '_' or '-'"},
		{"%{", 0, SPFKIT__MACRO_DOMAIN, 2, "unterminated macro-expand"},
		{"%{d", 0, SPFKIT__MACRO_DOMAIN, 3, "unterminated macro-expand"},
		{"%{d2r.", 0, SPFKIT__MACRO_DOMAIN, 6, "unterminated macro-expand"},
		{"%{a}.example.com", 0, SPFKIT__MACRO_DOMAIN, 2, "unknown macro letter"},
		{"The %{x}-files.", 0, SPFKIT__MACRO_EXPLAIN, 6, "unknown macro letter"},
		{"%{}", 0, SPFKIT__MACRO_DOMAIN, 2, "unknown macro letter"},
		{"%{1}", 0, SPFKIT__MACRO_DOMAIN, 2, "unknown macro letter"},
		{"%{r}.example.com", 0, SPFKIT__MACRO_DOMAIN, 2, "macro letter allowed only in exp text"},
		{"%{C}", 0, SPFKIT__MACRO_DOMAIN, 2, "macro letter allowed only in exp text"},
		{"x%{t}", 0, SPFKIT__MACRO_DOMAIN, 3, "macro letter allowed only in exp text"},
		{"%{d0}", 0, SPFKIT__MACRO_DOMAIN, 3, "macro digit transformer is zero"},
		{"%{d000r}", 0, SPFKIT__MACRO_DOMAIN, 3, "macro digit transformer is zero"},
		{"%{d2x}", 0, SPFKIT__MACRO_DOMAIN, 4, "invalid character in macro-expand"},
		{"%{d r}", 0, SPFKIT__MACRO_EXPLAIN, 3, "invalid character in macro-expand"},
		{"%{dr2}", 0, SPFKIT__MACRO_DOMAIN, 4, "invalid character in macro-expand"},
		{"%{d.r}", 0, SPFKIT__MACRO_DOMAIN, 4, "invalid character in macro-expand"},
		{"a b", 0, SPFKIT__MACRO_DOMAIN, 1, "space in domain-spec"},
		{"a\tb", 0, SPFKIT__MACRO_EXPLAIN, 1, "control character in macro-string"},
		{"ab\0c", 4, SPFKIT__MACRO_EXPLAIN, 2, "control character in macro-string"},
		{"\x7f", 0, SPFKIT__MACRO_EXPLAIN, 0, "control character in macro-string"},
		{"\xEF\xBB\xBF" "Explanation", 0, SPFKIT__MACRO_EXPLAIN, 0, "non-ASCII byte"},
		{"%{d}\x80", 0, SPFKIT__MACRO_EXPLAIN, 4, "non-ASCII byte"},
	};
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	size_t i, off, len;
	const char *why;
	int rc, bad = 0;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		off = 9999;
		why = NULL;
		len = c[i].len ? c[i].len : strlen(c[i].src);
		rc = spfkit__macro_parse(c[i].src, len, c[i].use, &ar, &ms, &off, &why);
		if (rc != SPFKIT_ESYNTAX || off != c[i].off || why == NULL ||
		    strcmp(why, c[i].why) != 0) {
			print_error("\"%s\": got rc %d off %zu \"%s\", want ESYNTAX off %zu \"%s\"\n",
				    c[i].src, rc, off, why ? why : "(null)", c[i].off, c[i].why);
			bad++;
		}
	}
	spfkit__arena_free(&ar);
	assert_int_equal(bad, 0);
}

/* What explanation text may hold that a domain-spec may not. */
static void explain_allows_space_and_crt(void **state)
{
	static const struct xcase c[] = {
		{"Congratulations!  That was tricky.", "Congratulations!  That was tricky."},
		{"%{c} is queried as %{ir}.%{v}.arpa",
		 "192.0.2.3 is queried as 3.2.0.192.in-addr.arpa"},
		{"%{r} at %{t}", "unknown at 1400000000"},
		{"}{", "}{"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	check_cases(c, sizeof(c) / sizeof(c[0]), SPFKIT__MACRO_EXPLAIN, &env);
}

static void ends_in_expand(void **state)
{
	static const struct {
		const char *src;
		int want;
	} c[] = {
		{"%{d}", 1},   {"x.%{d2r-}", 1}, {"foo%%", 1},  {"foo%_", 1}, {"foo%-", 1},
		{"foo", 0},    {"%{d}.com", 0},  {"foo}", 0},   {"%%x", 0},   {"foo-", 0},
		{"%{d}.", 0},  {"%%%%", 1},      {"%-x", 0},
	};
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	size_t i;
	int bad = 0;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(spfkit__macro_parse(c[i].src, strlen(c[i].src),
						     SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL),
				 0);
		if (spfkit__macro_ends_in_expand(&ms) != c[i].want) {
			print_error("\"%s\": got %d, want %d\n", c[i].src, !c[i].want, c[i].want);
			bad++;
		}
	}
	spfkit__arena_free(&ar);
	assert_int_equal(bad, 0);
}

static void parse_rejects_bad_arguments(void **state)
{
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	assert_int_equal(spfkit__macro_parse(NULL, 1, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit__macro_parse("x", 1, SPFKIT__MACRO_DOMAIN, NULL, &ms, NULL, NULL),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit__macro_parse("x", 1, SPFKIT__MACRO_DOMAIN, &ar, NULL, NULL, NULL),
			 SPFKIT_EINVAL);
	assert_int_equal(spfkit__macro_parse(NULL, 0, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL), 0);
	spfkit__arena_free(&ar);
}

/* ---- the 253 rule (§7.3) --------------------------------------------- */

/* The suite's domain-name-truncation case: 258 octets, "foobar." goes. */
static void rule_253_suite_case(void **state)
{
	static const struct xcase c[] = {
		{"foobar.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.example.com",
		 "somewhat.long.exp.example.com.somewhat.long.exp.example.com.somewhat.long.exp."
		 "example.com.somewhat.long.exp.example.com.somewhat.long.exp.example.com.somewhat."
		 "long.exp.example.com.somewhat.long.exp.example.com.somewhat.long.exp.example.com."
		 "example.com"},
	};
	struct spfkit__macro_env env = env_for(&ip4);

	(void)state;
	env.sender_domain = "somewhat.long.exp.example.com";
	env.sender_domain_len = strlen(env.sender_domain);
	check_cases(c, 1, SPFKIT__MACRO_DOMAIN, &env);
	assert_int_equal(strlen(c[0].want), 251);
}

/* A name of n octets: labels of 9 letters and a dot, then "com". */
static void make_name(char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (i % 10 == 9) ? '.' : 'a' + (char)(i % 10);
	memcpy(buf + n - 3, "com", 3);
	buf[n] = '\0';
}

static void rule_253_boundaries(void **state)
{
	struct spfkit__macro_env env = env_for(&ip4);
	char name[600], dotted[600], got[1024];

	(void)state;
	env.domain = name;
	make_name(name, 253); /* exactly 253: unchanged */
	env.domain_len = 253;
	assert_int_equal(expand_with("%{d}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, name);
	make_name(name, 254); /* 254: the first label goes */
	env.domain_len = 254;
	assert_int_equal(expand_with("%{d}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, name + 10);
	/* one final dot is not counted, and is kept */
	make_name(dotted, 253);
	dotted[253] = '.';
	dotted[254] = '\0';
	env.domain = dotted;
	env.domain_len = 254;
	assert_int_equal(expand_with("%{d}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, dotted);
	/* explanations are not cut */
	env.domain = name;
	env.domain_len = 254;
	assert_int_equal(expand_with("%{d}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, name);
}

static void rule_253_one_huge_label_leaves_nothing(void **state)
{
	struct spfkit__macro_env env = env_for(&ip4);
	char label[400], got[512];

	(void)state;
	memset(label, 'x', 300);
	label[300] = '\0';
	env.domain = label;
	env.domain_len = 300;
	assert_int_equal(expand_with("%{d}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)), 0);
	assert_string_equal(got, "");
}

/* The rule applies to what this call appended, not to earlier content. */
static void rule_253_only_on_appended_part(void **state)
{
	struct spfkit__macro_env env = env_for(&ip4);
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	struct spfkit__buf b;
	char name[300];

	(void)state;
	make_name(name, 264);
	env.domain = name;
	env.domain_len = 264;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	spfkit__buf_init(&b, &test_alloc, 4096);
	assert_int_equal(spfkit__buf_puts(&b, "prefix:"), 0);
	assert_int_equal(spfkit__macro_parse("%{d}", 4, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL), 0);
	assert_int_equal(spfkit__macro_expand(&ms, &env, SPFKIT__MACRO_DOMAIN, &b), 0);
	assert_int_equal(b.len, 7 + 254 - 10);
	assert_memory_equal(b.data, "prefix:", 7);
	assert_string_equal(b.data + 7, name + 20);
	spfkit__buf_free(&b);
	spfkit__arena_free(&ar);
}

/* ---- bounds ---------------------------------------------------------- */

/* The §7.3 cut done the plain way, on the whole text: the offset of
 * what remains (n when nothing does). */
static size_t naive_cut(const char *s, size_t n)
{
	size_t name = (n > 0 && s[n - 1] == '.') ? n - 1 : n, k = 0;
	const char *dot;

	while (name - k > SPFKIT_DOMAIN_MAX_LEN) {
		dot = memchr(s + k, '.', name - k);
		if (dot == NULL)
			return n;
		k = (size_t)(dot - s) + 1;
	}
	return k;
}

/* Expand src as a domain-spec; 1 when it gives what the whole text
 * full[0..n) cut by hand gives. *got_len: the length it gave. */
static int expands_as_cut(const char *src, const struct spfkit__macro_env *env, const char *full,
			  size_t n, size_t *got_len)
{
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	struct spfkit__buf b;
	size_t k = naive_cut(full, n);
	int same;

	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	spfkit__buf_init(&b, &test_alloc, SPFKIT_MACRO_MAX_EXPANSION);
	assert_int_equal(spfkit__macro_parse(src, strlen(src), SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL), 0);
	assert_int_equal(spfkit__macro_expand(&ms, env, SPFKIT__MACRO_DOMAIN, &b), 0);
	same = b.len == n - k && (n == k || memcmp(b.data, full + k, n - k) == 0);
	*got_len = b.len;
	spfkit__buf_free(&b);
	spfkit__arena_free(&ar);
	return same;
}

/*
 * Issue 7, item 6: a domain-spec expanding past SPFKIT_MACRO_MAX_EXPANSION
 * is cut to its last 253 octets as §7.3 says, not refused. The bounded
 * expansion gives what cutting the whole text would, for labels longer
 * and shorter than a name, cuts inside and between pieces, a final dot.
 */
static void long_domain_is_cut_not_refused(void **state)
{
	static const size_t lens[] = {5000, 3000, 300, 254, 253, 100, 63};
	static const size_t gaps[] = {0, 1, 2, 7, 63, 200, 300};
	static const char *const seps[] = {"", ".", "-"};
	struct spfkit__macro_env env = env_for(&ip4);
	char *helo = test_malloc(5001), *src = test_malloc(256), *full = test_malloc(50000);
	size_t li, gi, si, reps, i, n, got, cases = 0;

	(void)state;
	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
		for (gi = 0; gi < sizeof(gaps) / sizeof(gaps[0]); gi++)
			for (si = 0; si < 3; si++)
				for (reps = 1; reps <= 8; reps++) {
					/* helo: letters with a dot every gaps[gi] + 1 bytes */
					for (i = 0; i < lens[li]; i++)
						helo[i] = gaps[gi] && i % (gaps[gi] + 1) == gaps[gi] ? '.' : (char)('a' + i % 26);
					env.helo = helo;
					env.helo_len = lens[li];
					n = 0;
					for (i = 0; i < reps; i++)
						n += (size_t)snprintf(src + n, 256 - n, "%s%%{h}", i ? seps[si] : "");
					snprintf(src + n, 256 - n, "%s", reps % 2 ? ".x.example" : ".x.example.");
					/* the whole text, by hand */
					n = 0;
					for (i = 0; i < reps; i++) {
						if (i) {
							memcpy(full + n, seps[si], strlen(seps[si]));
							n += strlen(seps[si]);
						}
						memcpy(full + n, helo, lens[li]);
						n += lens[li];
					}
					memcpy(full + n, reps % 2 ? ".x.example" : ".x.example.", reps % 2 ? 10 : 11);
					n += reps % 2 ? 10 : 11;
					if (!expands_as_cut(src, &env, full, n, &got))
						fail_msg("helo %zu bytes, dot gap %zu, sep '%s', %zu copies: got %zu bytes, want %zu",
							 lens[li], gaps[gi], seps[si], reps, got, n - naive_cut(full, n));
					cases++;
				}
	assert_true(cases > 1000);
	test_free(helo);
	test_free(src);
	test_free(full);
}

static unsigned next_rand(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (unsigned)(*seed >> 16);
}

/* §7.3 by the letter, on the whole value: split on the delimiters, reverse
 * if asked, keep the rightmost `digits` parts, join with ".", escape if
 * uppercase. Appends to out at *n. */
static void naive_transform(const char *v, size_t n, const char *delims, unsigned digits,
			    int reverse, int esc, char *out, size_t *len)
{
	static const char hex[] = "0123456789ABCDEF";
	static size_t start[20002], end[20002];
	size_t parts = 0, i, s = 0, first, j, k;

	for (i = 0; i <= n; i++)
		if (i == n || strchr(delims, v[i]) != NULL) {
			start[parts] = s;
			end[parts++] = i;
			s = i + 1;
		}
	k = digits == 0 || digits >= parts ? parts : digits;
	first = reverse ? 0 : parts - k; /* reversed, the first k parts, backwards */
	for (j = 0; j < k; j++) {
		size_t part = reverse ? k - 1 - j : first + j;

		if (j > 0)
			out[(*len)++] = '.';
		for (i = start[part]; i < end[part]; i++) {
			unsigned char b = (unsigned char)v[i];

			if (!esc || (b < 0x80 && (isalnum(b) || strchr("-._~", b) != NULL))) {
				out[(*len)++] = (char)b;
			} else {
				out[(*len)++] = '%';
				out[(*len)++] = hex[b >> 4];
				out[(*len)++] = hex[b & 0x0f];
			}
		}
	}
}

/*
 * Issue 33, finding 7: a domain-spec reads only the tail of a long value
 * that can matter (a sender of 64 KiB is evaluated now). Random long
 * local parts and helo names, every transformer, escaping, several
 * pieces: the same name as the whole text cut by hand.
 */
static void long_values_read_by_their_tail(void **state)
{
	static const char alphabet[] = "abcXYZ09.-+,/_=.~";
	static const char *const delim_sets[] = {"", "-", ".", "+,", "/_=", "-.+,/_=", "="};
	static const unsigned digit_choices[] = {0, 1, 2, 3, 5, 40, 200};
	struct spfkit__macro_env env = env_for(&ip4);
	char *local = test_malloc(20001), *helo = test_malloc(20001), *full = test_malloc(400000);
	char src[512];
	uint32_t seed = 33;
	unsigned cases;
	size_t i, n, got, sn, llen, hlen, pieces, pi;

	(void)state;
	for (cases = 0; cases < 3000; cases++) {
		llen = 200 + (size_t)(next_rand(&seed) % 19800);
		hlen = 1 + (size_t)(next_rand(&seed) % 600);
		/* sometimes runs with no delimiter but '.' longer than a name */
		for (i = 0; i < llen; i++)
			local[i] = cases % 3 == 0 && i % 700 < 600 ? (i % 50 == 49 ? '.' : 'q')
							      : alphabet[next_rand(&seed) % (sizeof(alphabet) - 1)];
		for (i = 0; i < hlen; i++)
			helo[i] = alphabet[next_rand(&seed) % (sizeof(alphabet) - 1)];
		env.local = local;
		env.local_len = llen;
		env.helo = helo;
		env.helo_len = hlen;
		pieces = 1 + (size_t)(next_rand(&seed) % 4);
		sn = 0;
		n = 0;
		for (pi = 0; pi < pieces; pi++) {
			const char *ds = delim_sets[next_rand(&seed) % 7];
			unsigned digits = digit_choices[next_rand(&seed) % 7];
			int rev = next_rand(&seed) % 2, esc = next_rand(&seed) % 4 == 0, h = next_rand(&seed) % 4 == 0;
			char letter = h ? 'h' : 'l';

			if (pi > 0) {
				sn += (size_t)snprintf(src + sn, sizeof(src) - sn, "x.");
				full[n++] = 'x';
				full[n++] = '.';
			}
			sn += (size_t)snprintf(src + sn, sizeof(src) - sn, "%%{%c", esc ? toupper(letter) : letter);
			if (digits)
				sn += (size_t)snprintf(src + sn, sizeof(src) - sn, "%u", digits);
			sn += (size_t)snprintf(src + sn, sizeof(src) - sn, "%s%s}", rev ? "r" : "", ds);
			naive_transform(h ? helo : local, h ? hlen : llen, ds[0] ? ds : ".",
					digits, rev, esc, full, &n);
		}
		snprintf(src + sn, sizeof(src) - sn, ".example");
		memcpy(full + n, ".example", 8);
		n += 8;
		if (!expands_as_cut(src, &env, full, n, &got))
			fail_msg("case %u, %s, local %zu bytes, helo %zu: got %zu bytes, want %zu",
				 cases, src, llen, hlen, got, n - naive_cut(full, n));
	}
	/* a single dot at each place around the cut, with and without a final dot */
	for (cases = 0; cases < 4 * 2 * 2 * 40; cases++) {
		static const char *const srcs[] = {"%{lr-}", "%{l-}", "%{lr-}.", "%{l-}."};
		const char *one = srcs[cases % 4];
		size_t dot = 230 + cases / 16 % 40, reversed = one[3] == 'r';

		llen = cases / 4 % 2 ? 300 : 1000;
		memset(local, 'q', llen);
		local[llen - 1 - dot] = '.'; /* no '-' to split at: that far from the end */
		if (cases / 8 % 2)
			local[llen - 1] = '.'; /* a final dot of the value's own */
		env.local = local;
		env.local_len = llen;
		n = 0;
		naive_transform(local, llen, "-", 0, (int)reversed, 0, full, &n);
		if (one[strlen(one) - 1] == '.')
			full[n++] = '.';
		if (!expands_as_cut(one, &env, full, n, &got))
			fail_msg("%s, local %zu bytes, dot %zu from the end: got %zu bytes, want %zu",
				 one, llen, dot, got, n - naive_cut(full, n));
	}
	test_free(local);
	test_free(helo);
	test_free(full);
}

/* Thousands of %{i}: an explain-string stops at the cap with SPFKIT_E2BIG
 * (out unchanged); a domain-spec is cut to its last 253 octets (§7.3). */
static void thousands_of_i_hit_the_cap(void **state)
{
	struct spfkit__macro_env env = env_for(&ip6);
	struct spfkit__arena ar;
	struct spfkit_macro_string ms, ms1;
	struct spfkit__buf b, b1;
	char *src;
	size_t i, n = 16000;

	(void)state;
	src = test_malloc(4 * n + 1);
	for (i = 0; i < n; i++)
		memcpy(src + 4 * i, "%{i}", 4);
	src[4 * n] = '\0';
	spfkit__arena_init(&ar, &test_alloc, 4096, 0);
	spfkit__buf_init(&b, &test_alloc, 1u << 24);
	assert_int_equal(spfkit__buf_puts(&b, "keep"), 0);
	for (i = 0; i < 2; i++) {
		enum spfkit__macro_use use = i ? SPFKIT__MACRO_EXPLAIN : SPFKIT__MACRO_DOMAIN;

		assert_int_equal(spfkit__macro_parse(src, 4 * n, use, &ar, &ms, NULL, NULL), 0);
		assert_int_equal(ms.count, n);
		if (use == SPFKIT__MACRO_DOMAIN) {
			/* the cut depends on the last copies only: five, cut by hand */
			char five[5 * 63 + 1], one[64];
			size_t k, j;

			assert_int_equal(spfkit__macro_parse("%{i}", 4, use, &ar, &ms1, NULL, NULL), 0);
			spfkit__buf_init(&b1, &test_alloc, 64);
			assert_int_equal(spfkit__macro_expand(&ms1, &env, use, &b1), 0);
			assert_int_equal(b1.len, 63);
			memcpy(one, b1.data, 64);
			spfkit__buf_free(&b1);
			for (j = 0; j < 5; j++)
				memcpy(five + 63 * j, one, 63);
			k = naive_cut(five, 5 * 63);
			assert_int_equal(spfkit__macro_parse(src, 4 * n, use, &ar, &ms, NULL, NULL), 0);
			assert_int_equal(spfkit__macro_expand(&ms, &env, use, &b), 0);
			assert_memory_equal(b.data, "keep", 4);
			assert_int_equal(b.len - 4, 5 * 63 - k);
			assert_memory_equal(b.data + 4, five + k, 5 * 63 - k);
			assert_true(b.cap <= 2 * SPFKIT_MACRO_MAX_EXPANSION + 64);
			spfkit__buf_reset(&b);
			assert_int_equal(spfkit__buf_puts(&b, "keep"), 0);
			continue;
		}
		assert_int_equal(spfkit__macro_expand(&ms, &env, use, &b), SPFKIT_E2BIG);
		assert_int_equal(b.len, 4);
		assert_string_equal(b.data, "keep");
		assert_int_equal(b.err, 0); /* our cap, not the buffer's */
		assert_true(b.cap <= 2 * SPFKIT_MACRO_MAX_EXPANSION + 64);
	}
	spfkit__buf_free(&b);
	spfkit__arena_free(&ar);
	test_free(src);
}

static void cap_is_exact(void **state)
{
	struct spfkit__macro_env env = env_for(&ip4);
	char *value, got[16];

	(void)state;
	value = test_malloc(SPFKIT_MACRO_MAX_EXPANSION + 1);
	memset(value, 'x', SPFKIT_MACRO_MAX_EXPANSION + 1);
	env.helo = value;
	env.helo_len = SPFKIT_MACRO_MAX_EXPANSION;
	assert_int_equal(expand_with("%{h}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
	env.helo_len = SPFKIT_MACRO_MAX_EXPANSION - 1;
	assert_int_equal(expand_with("%{h}%%", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)), 0);
	assert_int_equal(expand_with("%{h}%-", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)),
			 SPFKIT_E2BIG);
	env.helo_len = SPFKIT_MACRO_MAX_EXPANSION + 1;
	assert_int_equal(expand_with("%{h}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)),
			 SPFKIT_E2BIG);
	/* escaping triples the size: the cap counts escaped bytes */
	env.helo_len = SPFKIT_MACRO_MAX_EXPANSION / 3 + 1;
	memset(value, '&', env.helo_len);
	assert_int_equal(expand_with("%{H}", SPFKIT__MACRO_EXPLAIN, &env, got, sizeof(got)),
			 SPFKIT_E2BIG);
	test_free(value);
}

/* The caller's buffer has its own cap; its failure stays recorded there. */
static void out_buffer_cap(void **state)
{
	struct spfkit__macro_env env = env_for(&ip4);
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	struct spfkit__buf b;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	spfkit__buf_init(&b, &test_alloc, 10);
	assert_int_equal(spfkit__macro_parse("%{s}", 4, SPFKIT__MACRO_DOMAIN, &ar, &ms, NULL, NULL), 0);
	assert_int_equal(spfkit__macro_expand(&ms, &env, SPFKIT__MACRO_DOMAIN, &b), SPFKIT_E2BIG);
	assert_int_equal(b.err, SPFKIT_E2BIG);
	assert_int_equal(b.len, 0);
	/* sticky: a later expansion into the failed buffer fails at once */
	assert_int_equal(spfkit__macro_expand(&ms, &env, SPFKIT__MACRO_DOMAIN, &b), SPFKIT_E2BIG);
	spfkit__buf_free(&b);
	spfkit__arena_free(&ar);
}

static void missing_ip_is_einval(void **state)
{
	struct spfkit__macro_env env = env_for(NULL);
	char got[64];

	(void)state;
	assert_int_equal(expand_with("x%{i}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)),
			 SPFKIT_EINVAL);
	assert_string_equal(got, "");
	assert_int_equal(expand_with("%{v}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)),
			 SPFKIT_EINVAL);
	assert_int_equal(expand_with("%{d}", SPFKIT__MACRO_DOMAIN, &env, got, sizeof(got)), 0);
}

/* Allocation failure at every step: a clean SPFKIT_ENOMEM, no leak. */
static void allocation_failures(void **state)
{
	struct test_alloc_failing f;
	struct spfkit_allocator fa = test_alloc_failing(&f);
	struct spfkit__macro_env env = env_for(&ip4);
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	struct spfkit__buf b;
	int n, rc;

	(void)state;
	for (n = 0;; n++) {
		f.left = n;
		spfkit__arena_init(&ar, &fa, 64, 0);
		spfkit__buf_init(&b, &fa, 4096);
		rc = spfkit__macro_parse("%{ir}.%{v}._spf.%{d2}", 21, SPFKIT__MACRO_DOMAIN, &ar, &ms,
					 NULL, NULL);
		if (rc == 0)
			rc = spfkit__macro_expand(&ms, &env, SPFKIT__MACRO_DOMAIN, &b);
		spfkit__buf_free(&b);
		spfkit__arena_free(&ar);
		if (rc == 0)
			break;
		assert_int_equal(rc, SPFKIT_ENOMEM);
	}
	assert_true(n >= 2); /* the piece array, then the buffer */
}

/* lib/spf/ctx.c's hand-parsed default explanation is what the parser
 * makes of SPFKIT_DEFAULT_EXPLANATION, piece for piece. */
static void default_explanation_table_matches_parser(void **state)
{
	static const char src[] = SPFKIT_DEFAULT_EXPLANATION;
	const struct spfkit_macro_string *d = &spfkit__ctx_default_exp;
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	size_t i;

	(void)state;
	spfkit__arena_init(&ar, &test_alloc, 256, 0);
	assert_int_equal(spfkit__macro_parse(src, sizeof(src) - 1, SPFKIT__MACRO_EXPLAIN, &ar, &ms,
					     NULL, NULL),
			 0);
	assert_int_equal(d->count, ms.count);
	assert_int_equal(d->letters, ms.letters);
	assert_int_equal(d->src_len, ms.src_len);
	assert_memory_equal(d->src, ms.src, ms.src_len);
	for (i = 0; i < ms.count; i++) {
		const struct spfkit_macro_piece *a = &d->pieces[i], *b = &ms.pieces[i];

		assert_int_equal(a->kind, b->kind);
		assert_int_equal(a->letter, b->letter);
		assert_int_equal(a->url_escape, b->url_escape);
		assert_int_equal(a->reverse, b->reverse);
		assert_int_equal(a->digits, b->digits);
		assert_int_equal(a->delims, b->delims);
		assert_int_equal(a->len, b->len);
		if (a->len > 0)
			assert_memory_equal(a->text, b->text, a->len);
	}
	spfkit__arena_free(&ar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_explanation_table_matches_parser),
		cmocka_unit_test(rfc_7_4_letters_and_transformers),
		cmocka_unit_test(rfc_7_4_macro_strings),
		cmocka_unit_test(rfc_7_4_ip6_nibbles),
		cmocka_unit_test(remaining_letters),
		cmocka_unit_test(p_and_r_when_known),
		cmocka_unit_test(t_negative_and_zero),
		cmocka_unit_test(c_ip6_rfc5952),
		cmocka_unit_test(escapes),
		cmocka_unit_test(url_escaping),
		cmocka_unit_test(url_escaping_high_and_control_bytes),
		cmocka_unit_test(url_escaping_ip6_c),
		cmocka_unit_test(delimiters),
		cmocka_unit_test(every_delimiter_splits),
		cmocka_unit_test(empty_parts_are_kept),
		cmocka_unit_test(empty_value),
		cmocka_unit_test(digit_transformer_bounds),
		cmocka_unit_test(digits_stored_in_piece),
		cmocka_unit_test(literal_is_one_piece_zero_copy),
		cmocka_unit_test(empty_string_has_no_pieces),
		cmocka_unit_test(letters_bitmask),
		cmocka_unit_test(parse_errors_with_offsets),
		cmocka_unit_test(explain_allows_space_and_crt),
		cmocka_unit_test(ends_in_expand),
		cmocka_unit_test(parse_rejects_bad_arguments),
		cmocka_unit_test(rule_253_suite_case),
		cmocka_unit_test(rule_253_boundaries),
		cmocka_unit_test(rule_253_one_huge_label_leaves_nothing),
		cmocka_unit_test(rule_253_only_on_appended_part),
		cmocka_unit_test(thousands_of_i_hit_the_cap),
		cmocka_unit_test(long_domain_is_cut_not_refused),
		cmocka_unit_test(long_values_read_by_their_tail),
		cmocka_unit_test(cap_is_exact),
		cmocka_unit_test(out_buffer_cap),
		cmocka_unit_test(missing_ip_is_einval),
		cmocka_unit_test(allocation_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
