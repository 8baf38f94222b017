/*
 * Fuzz target: macro-string parse and expansion (lib/spf/macro.c). The
 * first byte picks the use (domain-spec or explanation) and the client
 * address family; the rest is the macro-string. Expansion runs with a
 * fixed environment into a capped buffer; everything is freed each run.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct spfkit_ip ip4 = {4, {192, 0, 2, 3}};
static const struct spfkit_ip ip6 = {6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xcb, 0x01}};

static void fixed_env(struct spfkit__macro_env *env, int v6)
{
	memset(env, 0, sizeof(*env));
	env->sender = "~jack&jill=up-a_b3.c@e8.example.com";
	env->sender_len = strlen(env->sender);
	env->local = "~jack&jill=up-a_b3.c";
	env->local_len = strlen(env->local);
	env->sender_domain = "e8.example.com";
	env->sender_domain_len = strlen(env->sender_domain);
	env->domain = "somewhat.long.exp.example.com";
	env->domain_len = strlen(env->domain);
	env->helo = "msgbas2x.cos.example.com";
	env->helo_len = strlen(env->helo);
	env->validated = "mx.example.com";
	env->validated_len = strlen(env->validated);
	env->ip = v6 ? &ip6 : &ip4;
	env->now = 1400000000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spfkit__arena ar;
	struct spfkit_macro_string ms;
	struct spfkit__macro_env env;
	struct spfkit__buf b;
	enum spfkit__macro_use use;
	size_t off;
	const char *why;

	if (size == 0)
		return 0;
	use = (data[0] & 1) ? SPFKIT__MACRO_EXPLAIN : SPFKIT__MACRO_DOMAIN;
	fixed_env(&env, (data[0] & 2) != 0);
	spfkit__arena_init(&ar, NULL, 1024, 0);
	spfkit__buf_init(&b, NULL, 1u << 16);
	if (spfkit__macro_parse((const char *)data + 1, size - 1, use, &ar, &ms, &off, &why) == 0) {
		(void)spfkit__macro_ends_in_expand(&ms);
		(void)spfkit__macro_expand(&ms, &env, use, &b);
	}
	spfkit__buf_free(&b);
	spfkit__arena_free(&ar);
	return 0;
}
