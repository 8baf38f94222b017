/*
 * Fuzz target: U-labels to A-labels (RFC 8616 §4, lib/spf/idna.c) and
 * what the evaluation and the header writers make of them. The input is
 * "sender\nhelo" (no newline: the HELO is "h.example"). The sender's
 * domain (after its last '@') and the HELO are converted on their own,
 * then the sender is checked from 192.0.2.1 against a record published
 * at the converted name whose terms use every macro letter RFC 8616
 * speaks of. Checked, aborting otherwise:
 * - an ASCII name comes back as it is, uncopied; a converted one is
 *   ASCII, NUL-terminated, at most 253 octets (plus a final dot), holds
 *   no NUL from the input, and converts to itself again; a refusal says
 *   why;
 * - a sender domain that is no IDN gives none, asking nothing (RFC 7208
 *   §4.3); a converted one is checked under its A-labels;
 * - strict and lookahead evaluations agree;
 * - the ASCII header writers write printable ASCII, the _utf8 writers
 *   printable ASCII and valid UTF-8 only, never a control byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spfkit/spfkit.h>

#include "core.h"
#include "idna.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct spfkit_ip client = {4, {192, 0, 2, 1}};

#define RECORD                                                                                  \
	"v=spf1 exists:%{l}.l.x.example exists:%{d}.%{h}.d.x.example -exists:%{o1r}.o.x.example " \
	"include:%{s}.s.x.example ?exists:%{h2}.%{d2r}.x.example redirect=%{d}.r.x.example"

/* Convert name[0..len) and check what comes back; the result code. */
static int convert(struct spfkit__arena *ar, const char *name, size_t len, const char **out,
		   size_t *out_len)
{
	const char *why = NULL, *again;
	size_t again_len;
	int rc = spfkit__idna_to_alabels(ar, name, len, out, out_len, &why);

	switch (rc) {
	case 0:
		if (*out != name || *out_len != len || !spfkit__ascii_only(name, len))
			abort();
		break;
	case 1:
		if (spfkit__ascii_only(name, len) || memchr(name, '\0', len) != NULL)
			abort();
		if (strlen(*out) != *out_len || !spfkit__ascii_only(*out, *out_len) || *out_len > 254)
			abort();
		if (spfkit__idna_to_alabels(ar, *out, *out_len, &again, &again_len, &why) != 0 ||
		    again != *out)
			abort();
		break;
	case SPFKIT_ESYNTAX:
		if (why == NULL || why[0] == '\0')
			abort();
		break;
	case SPFKIT_ENOMEM:
		break;
	default:
		abort();
	}
	return rc;
}

/* Printable ASCII, and with utf8 whole UTF-8 characters: nothing else. */
static void header_clean(const char *s, int len, int utf8)
{
	int i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t u = utf8 ? spfkit__utf8_len((const unsigned char *)s + i, (size_t)(len - i)) : 0;

		if (u > 0)
			i += (int)u - 1;
		else if (c < 0x20 || c > 0x7e)
			abort();
	}
}

static void headers(const struct spfkit_result *res)
{
	char buf[2048];
	int n;

	n = spfkit_format_received_spf(res, 1, buf, sizeof(buf));
	if (n >= 0)
		header_clean(buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1, 0);
	n = spfkit_format_received_spf_utf8(res, 1, buf, sizeof(buf));
	if (n >= 0)
		header_clean(buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1, 1);
	n = spfkit_format_auth_results(res, "mx.example", 1, buf, sizeof(buf));
	if (n >= 0)
		header_clean(buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1, 0);
	n = spfkit_format_auth_results_utf8(res, "mx.example", 1, buf, sizeof(buf));
	if (n >= 0)
		header_clean(buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1, 1);
}

static void evaluate(const struct spfkit_request *req, const char *published, size_t plen,
		     int domain_rc)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config)};
	struct spfkit_ctx *ctx[2] = {NULL, NULL};
	struct spfkit_eval *ev[2] = {NULL, NULL};
	struct spfkit_resolver *r = NULL;
	struct spfkit_zone *zone = NULL;
	const struct spfkit_result *a, *b;
	int i, ok;

	ok = spfkit_zone_new(NULL, &zone) == 0;
	/* the name may be no name a zone takes (too long, empty labels): then nothing is there */
	if (ok && published != NULL)
		(void)spfkit_zone_add(zone, published, plen, SPFKIT_RR_TXT, 300, RECORD,
				      sizeof(RECORD) - 1, 0);
	for (i = 0; i < 2 && ok; i++) {
		cfg.no_lookahead = i == 0;
		ok = spfkit_ctx_new(&cfg, &ctx[i]) == 0;
	}
	ok = ok && spfkit_zone_resolver(zone, &r) == 0;
	for (i = 0; i < 2 && ok; i++)
		ok = spfkit_check(ctx[i], r, req, &ev[i]) == 0;
	if (ok) {
		a = spfkit_eval_result(ev[0]);
		b = spfkit_eval_result(ev[1]);
		if (a->code != b->code || a->dns_terms != b->dns_terms ||
		    a->void_lookups != b->void_lookups)
			abort();
		/* RFC 7208 §4.3: a malformed domain is none, and nothing is asked */
		if (domain_rc == SPFKIT_ESYNTAX && (a->code != SPFKIT_RESULT_NONE || a->queries != 0))
			abort();
		if (domain_rc == 1 && a->code != SPFKIT_RESULT_NONE &&
		    (a->identity_domain == NULL || !spfkit__ascii_only(a->identity_domain,
								      strlen(a->identity_domain))))
			abort();
		headers(a);
	}
	for (i = 0; i < 2; i++) {
		spfkit_eval_free(ev[i]);
		spfkit_ctx_free(ctx[i]);
	}
	spfkit_resolver_free(r);
	spfkit_zone_free(zone);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nl, *at, *dom, *helo = "h.example", *out = NULL;
	size_t sender_len = size, helo_len = 9, dom_len, out_len = 0;
	struct spfkit__arena ar;
	struct spfkit_request req;
	int rc;

	if (size > 4096)
		return 0;
	nl = memchr(p, '\n', size);
	if (nl != NULL) {
		sender_len = (size_t)(nl - p);
		helo = nl + 1;
		helo_len = size - sender_len - 1;
	}
	at = NULL;
	for (dom = p; dom < p + sender_len; dom++)
		if (*dom == '@')
			at = dom;
	dom = at != NULL ? at + 1 : p;
	dom_len = sender_len - (size_t)(dom - p);
	spfkit__arena_init(&ar, NULL, 512, 0);
	(void)convert(&ar, helo, helo_len, &out, &out_len);
	rc = convert(&ar, dom, dom_len, &out, &out_len);
	spfkit_request_init(&req);
	req.ip = client;
	req.sender = p;
	req.sender_len = sender_len;
	req.helo = helo;
	req.helo_len = helo_len;
	req.now = 1700000000;
	evaluate(&req, rc == 0 || rc == 1 ? out : NULL, out_len,
		 sender_len > 0 && !spfkit__ascii_only(dom, dom_len) ? rc : 0);
	spfkit__arena_free(&ar);
	return 0;
}
