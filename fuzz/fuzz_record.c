/*
 * Fuzz target: the SPF record parser (lib/spf/record_parse.c, term_*.c). Any input
 * is a record candidate; a parsed record is walked and every parsed
 * string expanded with a fixed environment, so the AST the parser hands
 * the evaluator is exercised too. Everything is freed each run.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spfkit/record.h>

#include "core.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expand_terms(const struct spfkit_record *rec)
{
	static const struct spfkit_ip ip = {6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0,
						0, 0xcb, 0x01}};
	struct spfkit__macro_env env;
	struct spfkit__buf b;
	size_t i;

	memset(&env, 0, sizeof(env));
	env.sender = "strong-bad@email.example.com";
	env.sender_len = strlen(env.sender);
	env.local = "strong-bad";
	env.local_len = 10;
	env.sender_domain = env.domain = "email.example.com";
	env.sender_domain_len = env.domain_len = 17;
	env.helo = "mx.example.org";
	env.helo_len = 14;
	env.ip = &ip;
	spfkit__buf_init(&b, NULL, 1u << 16);
	for (i = 0; i < rec->count; i++) {
		if (!rec->terms[i].has_domain)
			continue;
		/* errors are fine here; only crashes and leaks are not */
		(void)spfkit__macro_expand(&rec->terms[i].domain, &env, SPFKIT__MACRO_DOMAIN, &b);
		spfkit__buf_reset(&b);
	}
	spfkit__buf_free(&b);
}

/*
 * What the evaluator relies on: a parsed record holds only visible ASCII
 * and SP after the version, and its terms lie inside the text, in order,
 * without SP. A violation aborts, which the fuzzer reports as a crash.
 */
static void check_invariants(const struct spfkit_record *rec)
{
	size_t i, j, prev_end = 6;

	for (i = 6; i < rec->len; i++)
		if (rec->text[i] != ' ' && !spfkit__is_vchar((unsigned char)rec->text[i]))
			abort();
	for (i = 0; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];

		if (t->offset <= prev_end || t->len == 0 || t->offset + t->len > rec->len)
			abort();
		for (j = t->offset; j < t->offset + t->len; j++)
			if (rec->text[j] == ' ')
				abort();
		prev_end = t->offset + t->len;
	}
	if (rec->count > SPFKIT_RECORD_MAX_TERMS || rec->dns_terms > rec->count)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spfkit_record *rec = NULL;
	struct spfkit_parse_error err;

	(void)spfkit_record_is_spf((const char *)data, size);
	if (spfkit_record_parse((const char *)data, size, NULL, &rec, &err) == 0) {
		check_invariants(rec);
		expand_terms(rec);
		spfkit_record_free(rec);
	}
	return 0;
}
