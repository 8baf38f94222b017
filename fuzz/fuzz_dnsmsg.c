/*
 * Fuzz target for the DNS response reader (lib/dns/msg.c): arbitrary
 * bytes as a reply, read once per record type SPF asks, first against
 * the message's own question (so the fuzzer reaches the answer and
 * authority sections), then against a fixed question. Beyond "no crash,
 * no leak" it checks the promises of struct spfkit_dns_answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct spfkit_dns_answer *a, uint16_t type)
{
	size_t i;

	if ((a->status == SPFKIT_DNS_OK) != (a->count > 0))
		__builtin_trap();
	if (a->status == SPFKIT_DNS_TEMPFAIL && a->detail == NULL)
		__builtin_trap();
	for (i = 0; i < a->count; i++) {
		if (a->rrs[i].type != type || a->rrs[i].data == NULL)
			__builtin_trap();
		if (a->rrs[i].len > SPFKIT__DNS_DECODED_MAX)
			__builtin_trap();
		if (type == SPFKIT_RR_A && a->rrs[i].len != 4)
			__builtin_trap();
		if (type == SPFKIT_RR_AAAA && a->rrs[i].len != 16)
			__builtin_trap();
		if (a->rrs[i].ttl < a->ttl)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t types[] = { SPFKIT_RR_A,   SPFKIT_RR_AAAA, SPFKIT_RR_MX,
					  SPFKIT_RR_TXT, SPFKIT_RR_PTR,  SPFKIT_RR_CNAME };
	struct spfkit__dns_reply r;
	size_t i;

	spfkit__dns_reply_init(&r, NULL);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (spfkit__dns_reply_parse(&r, data, size, NULL, 0, types[i]) == 0)
			check(&r.answer, types[i]);
		if (spfkit__dns_reply_parse(&r, data, size, "example.com", 11, types[i]) == 0)
			check(&r.answer, types[i]);
	}
	spfkit__dns_reply_free(&r);
	return 0;
}
