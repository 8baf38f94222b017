/*
 * The whole evaluator, differentially: the input is one query line
 * "ip sender helo" and then a zone file. The zone is loaded, the query
 * evaluated strict, with lookahead, and twice on a context with the
 * record memo (the second run takes its answers from the memo); all must
 * give identical results, the memo runs the strict question count too;
 * anything else aborts. Then clients near the first (its address with
 * low bits changed) are evaluated strict and twice through the memo, so
 * that the address plans the memo runs built (record_plan.h) are taken
 * down other paths than the one they were built on. Under ASan/UBSan
 * this also finds crashes, leaks and undefined behaviour anywhere on
 * the way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spfkit/spfkit.h>

static int same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void must_match(const struct spfkit_result *a, const struct spfkit_result *b)
{
	if (a->code != b->code || !same_text(a->explanation, b->explanation) ||
	    !same_text(a->mechanism, b->mechanism) || !same_text(a->problem, b->problem) ||
	    a->dns_terms != b->dns_terms || a->void_lookups != b->void_lookups ||
	    a->depth != b->depth)
		abort();
}

/* NOCACHE: strict without a record cache, its records in the
 * evaluation's arena (query.c) */
enum { STRICT = 0, LOOKAHEAD, MEMO, NOCACHE, NCTX };

/* Split the first line into three words; 0 when it is not such a line. */
static int parse_query(const char *p, size_t len, const char *w[3], size_t wl[3], size_t *rest)
{
	size_t i = 0, k;

	for (k = 0; k < 3; k++) {
		while (i < len && p[i] == ' ')
			i++;
		w[k] = p + i;
		while (i < len && p[i] != ' ' && p[i] != '\n')
			i++;
		wl[k] = (size_t)(p + i - w[k]);
	}
	while (i < len && p[i] != '\n')
		i++;
	*rest = i < len ? i + 1 : len;
	return wl[0] > 0;
}

/* Low bits of the client's address changed, in the last and in a middle
 * byte: which byte of an IPv4 and of an IPv6 address, and which bits. */
#define NEIGHBOURS 4
static const unsigned char near_at4[NEIGHBOURS] = {3, 3, 2, 1};
static const unsigned char near_at6[NEIGHBOURS] = {15, 15, 7, 5};
static const unsigned char near_xor[NEIGHBOURS] = {0x01, 0x80, 0x10, 0xff};

/* A neighbour of the client, strict and twice through the memo: the same
 * result and question count. 0 when an evaluation could not run. */
static int neighbour(const struct spfkit_ctx *strict, const struct spfkit_ctx *memo,
		     struct spfkit_resolver *r, const struct spfkit_request *req, size_t k)
{
	struct spfkit_request nreq = *req;
	struct spfkit_eval *ev[3] = {NULL, NULL, NULL};
	size_t at = nreq.ip.family == 4 ? near_at4[k] : near_at6[k];
	int i, ok = 1;

	nreq.ip.addr[at] ^= near_xor[k];
	for (i = 0; i < 3 && ok; i++)
		ok = spfkit_check(i == 0 ? strict : memo, r, &nreq, &ev[i]) == 0;
	for (i = 1; i < 3 && ok; i++) {
		must_match(spfkit_eval_result(ev[0]), spfkit_eval_result(ev[i]));
		if (spfkit_eval_result(ev[0])->queries != spfkit_eval_result(ev[i])->queries)
			abort();
	}
	for (i = 0; i < 3; i++)
		spfkit_eval_free(ev[i]);
	return ok;
}

static void evaluate(struct spfkit_zone *zone, const struct spfkit_request *req)
{
	struct spfkit_config cfg = {.size = sizeof(struct spfkit_config), .default_explanation = "%{i} %{s} %{h}"};
	struct spfkit_ctx *ctx[NCTX] = {NULL};
	struct spfkit_eval *ev[NCTX + 1] = {NULL};
	struct spfkit_resolver *r = NULL;
	int i, ok = 1;

	for (i = 0; i < NCTX; i++) {
		cfg.no_lookahead = i != LOOKAHEAD;
		cfg.record_memo = i == MEMO;
		cfg.no_record_cache = i == NOCACHE;
		if (spfkit_ctx_new(&cfg, &ctx[i]) != 0)
			ok = 0;
	}
	if (ok && spfkit_zone_resolver(zone, &r) == 0) {
		for (i = 0; i < NCTX + 1 && ok; i++)
			ok = spfkit_check(ctx[i < NCTX ? i : MEMO], r, req, &ev[i]) == 0;
		for (i = 1; i < NCTX + 1 && ok; i++) {
			const struct spfkit_result *a = spfkit_eval_result(ev[STRICT]);
			const struct spfkit_result *b = spfkit_eval_result(ev[i]);

			must_match(a, b);
			if (i != LOOKAHEAD && a->queries != b->queries)
				abort();
		}
		for (size_t k = 0; k < NEIGHBOURS && ok; k++)
			ok = neighbour(ctx[STRICT], ctx[MEMO], r, req, k);
	}
	for (i = 0; i < NCTX + 1; i++)
		spfkit_eval_free(ev[i]);
	spfkit_resolver_free(r);
	for (i = 0; i < NCTX; i++)
		spfkit_ctx_free(ctx[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *w[3];
	struct spfkit_request req;
	struct spfkit_zone *zone = NULL;
	size_t wl[3], rest;
	char err[256];

	if (size > 65536 || !parse_query(p, size, w, wl, &rest))
		return 0;
	spfkit_request_init(&req);
	if (spfkit_ip_parse(w[0], wl[0], &req.ip) != 0)
		return 0;
	req.sender = w[1];
	req.sender_len = wl[1] == 2 && memcmp(w[1], "<>", 2) == 0 ? 0 : wl[1];
	req.helo = w[2];
	req.helo_len = wl[2];
	req.now = 1700000000;
	if (spfkit_zone_new(NULL, &zone) != 0)
		return 0;
	/* a zone that fails part-way keeps what loaded: evaluate that too */
	(void)spfkit_zone_load_text(zone, p + rest, size - rest, "fuzz", "example.com", err,
				    sizeof(err));
	evaluate(zone, &req);
	spfkit_zone_free(zone);
	return 0;
}
