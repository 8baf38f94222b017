/*
 * What a domain publishes beside its SPF record, asked of DNS as the
 * walk enters it: an SPF (type 99) record (§3.1), a wildcard (§3.5),
 * the record's character-strings as published (§3.3), the TTL.
 */
#include <string.h>

#include "lint_walk.h"

#define TTL_LOW 300u
#define TTL_HIGH 604800u

/* Type 99 beside the TXT record (§3.1: no longer to be published). */
void spfkit__lint_published_spf_type(struct walk *w, const char *domain, size_t dlen)
{
	const struct lint_answer *a;

	if (spfkit__lint_dns_ask(w->dns, domain, dlen, SPFKIT_RR_SPF, &a) != 0)
		return; /* not worth failing the run for */
	if (a->count > 0)
		spfkit__lint_add(
			w->r, L_SPF_RR_TYPE, domain, NULL, 0, -1, NULL,
			"%s publishes %zu SPF (type 99) record%s: RFC 7208 removed that type and "
			"no receiver asks for it",
			domain, a->count, a->count == 1 ? "" : "s");
}

/*
 * §3.5: a wildcard "*.D TXT v=spf1 ..." answers for every name under D
 * that does not exist, but not for names that have any other record.
 * Ask a name nobody publishes; an SPF record there came from a wildcard.
 */
#define WILDCARD_PROBE "_spfkit-lint-wildcard-probe."

void spfkit__lint_published_wildcard(struct walk *w, const char *domain, size_t dlen)
{
	char probe[sizeof(WILDCARD_PROBE) + 253];
	const struct lint_answer *a;
	size_t i, plen = sizeof(WILDCARD_PROBE) - 1;

	if (plen + dlen > 253)
		return; /* no name under this one fits */
	memcpy(probe, WILDCARD_PROBE, plen);
	memcpy(probe + plen, domain, dlen);
	if (spfkit__lint_dns_ask(w->dns, probe, plen + dlen, SPFKIT_RR_TXT, &a) != 0 ||
	    a->status != SPFKIT_DNS_OK)
		return;
	for (i = 0; i < a->count; i++)
		if (spfkit_record_is_spf((const char *)a->rrs[i].data, a->rrs[i].len))
			break;
	if (i == a->count)
		return;
	spfkit__lint_add(
		w->r, L_WILDCARD_RECORD, domain, NULL, 0, -1, NULL,
		"%.*s%.*s has an SPF record: a wildcard (*.%.*s) gives it to every name under "
		"%.*s that does not exist, but not to names with records of their own",
		(int)plen, probe, (int)dlen, domain, (int)dlen, domain, (int)dlen, domain);
}

/*
 * §3.3: the record's character-strings as published (resolver.h:
 * SPFKIT_RR_TXT_STRINGS), for string-over-255 and split-inside-token.
 * A backend that cannot give them is no finding.
 */
void spfkit__lint_published_strings(struct walk *w, const char *domain, size_t dlen,
				    const char *text, size_t len)
{
	const struct lint_answer *a;
	const unsigned char *d;
	const char **strs;
	size_t *lens, i, j, n, off, joined;

	if (spfkit__lint_dns_ask(w->dns, domain, dlen, SPFKIT_RR_TXT_STRINGS, &a) != 0 ||
	    a->status != SPFKIT_DNS_OK)
		return;
	for (i = 0; i < a->count; i++) {
		d = a->rrs[i].data;
		for (n = 0, joined = 0, off = 0; off < a->rrs[i].len; off += 1u + d[off], n++)
			joined += d[off];
		if (off != a->rrs[i].len || joined != len || n == 0)
			continue; /* malformed, or another record */
		strs = spfkit__arena_alloc(&w->r->arena, n * sizeof(*strs));
		lens = spfkit__arena_alloc(&w->r->arena, n * sizeof(*lens));
		if (strs == NULL || lens == NULL) {
			w->r->err = SPFKIT_ENOMEM;
			return;
		}
		for (j = 0, off = 0; j < n; off += 1u + d[off], j++) {
			strs[j] = (const char *)d + off + 1;
			lens[j] = d[off];
		}
		for (j = 0, off = 0; j < n && memcmp(text + off, strs[j], lens[j]) == 0; j++)
			off += lens[j];
		if (j < n)
			continue;
		spfkit__lint_string_checks(w->r, domain, text, strs, lens, n);
		return;
	}
}

void spfkit__lint_published_ttl(struct walk *w, const char *domain, const struct lint_answer *a)
{
	if (a->ttl < TTL_LOW)
		spfkit__lint_add(w->r, L_TTL, domain, NULL, 0, -1, NULL,
				 "TTL %u s: every receiver asks again that often",
				 (unsigned)a->ttl);
	else if (a->ttl > TTL_HIGH)
		spfkit__lint_add(w->r, L_TTL, domain, NULL, 0, -1, NULL,
				 "TTL %u s: a change takes over a week to reach every receiver",
				 (unsigned)a->ttl);
}
