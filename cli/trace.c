/*
 * `spfkit check --trace`: what the evaluator reports through
 * spfkit_trace_fn (include/spfkit/eval.h), as an indented tree for an
 * administrator or as JSON events. The evaluator keeps no clock (it is
 * pure), so the time a DNS question took is measured here, between its
 * QUERY and ANSWER events, matched by query_id.
 *
 *   check_host(example.com)
 *     query TXT example.com
 *     answer TXT example.com: ok, ttl 3600, 1 record, 0.041 ms
 *       "v=spf1 include:_spf.example.net -all"
 *     record: v=spf1 include:_spf.example.net -all
 *     counters: 1 DNS term (limit 10), 0 void lookups (limit 2)
 *     check_host(_spf.example.net)
 *       ...
 *     check_host(_spf.example.net) = pass
 *     term include:_spf.example.net: match -> pass
 *   check_host(example.com) = pass
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"

/* A hostile record tree cannot make the timing table grow without end. */
#define MAX_PENDING 4096u
/* TXT data longer than this is cut in the tree (JSON keeps all of it). */
#define TEXT_TXT_MAX 512u

void cli_trace_init(struct cli_trace *t, FILE *text, struct spfkit__buf *json,
		    const struct spfkit_limits *limits)
{
	memset(t, 0, sizeof(*t));
	t->text = text;
	t->json = json;
	t->json_first = 1;
	t->limits = *limits;
	if (t->limits.dns_terms == 0)
		t->limits.dns_terms = SPFKIT_LIMIT_DNS_TERMS;
	if (t->limits.void_lookups == 0)
		t->limits.void_lookups = SPFKIT_LIMIT_VOID_LOOKUPS;
}

void cli_trace_free(struct cli_trace *t)
{
	spfkit__free(NULL, t->sent);
	t->sent = NULL;
	t->nsent = t->capsent = 0;
}

/* ---- timing ------------------------------------------------------------ */

static void note_sent(struct cli_trace *t, uint32_t id)
{
	struct cli_query_time *p;

	if (t->nsent == t->capsent) {
		size_t cap = t->capsent ? t->capsent * 2 : 16;

		if (t->capsent >= MAX_PENDING)
			return; /* the answer then shows no time */
		p = spfkit__realloc(NULL, t->sent, cap * sizeof(*p));
		if (p == NULL) {
			t->err = SPFKIT_ENOMEM;
			return;
		}
		t->sent = p;
		t->capsent = cap;
	}
	t->sent[t->nsent].id = id;
	clock_gettime(CLOCK_MONOTONIC, &t->sent[t->nsent].sent);
	t->nsent++;
}

/* Milliseconds since question `id` was sent, or -1 when unknown. */
static double take_elapsed(struct cli_trace *t, uint32_t id)
{
	struct timespec now;
	size_t i;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < t->nsent; i++) {
		struct timespec s = t->sent[i].sent;

		if (t->sent[i].id != id)
			continue;
		t->sent[i] = t->sent[--t->nsent];
		return (double)(now.tv_sec - s.tv_sec) * 1e3 + (double)(now.tv_nsec - s.tv_nsec) / 1e6;
	}
	return -1.0;
}

/* ---- shared helpers ------------------------------------------------------ */

static const char *kind_name(enum spfkit_trace_kind k)
{
	switch (k) {
	case SPFKIT_TRACE_QUERY: return "query";
	case SPFKIT_TRACE_ANSWER: return "answer";
	case SPFKIT_TRACE_CHECK: return "check";
	case SPFKIT_TRACE_RECORD: return "record";
	case SPFKIT_TRACE_TERM: return "term";
	case SPFKIT_TRACE_COUNT: return "count";
	case SPFKIT_TRACE_RESULT: return "result";
	case SPFKIT_TRACE_NOTE: return "note";
	}
	return "unknown";
}

/* Stable tokens for JSON (the text tree uses spfkit_dns_status_name()). */
static const char *status_token(enum spfkit_dns_status s)
{
	switch (s) {
	case SPFKIT_DNS_OK: return "ok";
	case SPFKIT_DNS_NODATA: return "nodata";
	case SPFKIT_DNS_NXDOMAIN: return "nxdomain";
	case SPFKIT_DNS_TEMPFAIL: return "tempfail";
	}
	return "unknown";
}

/*
 * What a matched term decides. The event's `result` is that of the
 * check_host() around the term, not yet the term's, so it is read from
 * the qualifier (RFC 7208 §4.6.2); a followed redirect decides nothing yet.
 */
static const char *term_outcome(const char *text, size_t len)
{
	if (text == NULL || len == 0)
		return "match";
	if (len >= 9 && spfkit__memcaseeq(text, 9, "redirect=", 9))
		return "followed";
	switch (text[0]) {
	case '-': return "fail";
	case '~': return "softfail";
	case '?': return "neutral";
	default: return "pass";
	}
}

static const char *result_name(enum spfkit_result_code code)
{
	const char *s = spfkit_result_name(code);

	return s != NULL ? s : "unknown";
}

/* An A or AAAA record's address, or NULL when the data has the wrong size. */
static const char *rr_addr(const struct spfkit_dns_rr *rr, char *buf, size_t size)
{
	if (rr->type == SPFKIT_RR_A && rr->len == 4)
		return inet_ntop(AF_INET, rr->data, buf, (socklen_t)size);
	if (rr->type == SPFKIT_RR_AAAA && rr->len == 16)
		return inet_ntop(AF_INET6, rr->data, buf, (socklen_t)size);
	return NULL;
}

static int rr_is_name(uint16_t type)
{
	return type == SPFKIT_RR_MX || type == SPFKIT_RR_PTR || type == SPFKIT_RR_CNAME;
}

static int rr_is_text(uint16_t type)
{
	return type == SPFKIT_RR_TXT || type == SPFKIT_RR_SPF;
}

/* ---- the text tree ------------------------------------------------------- */

static void indent(FILE *f, unsigned depth, unsigned extra)
{
	unsigned i, n = depth > 64 ? 64 : depth; /* nesting is capped by the limits anyway */

	for (i = 0; i < 2 * n + extra; i++)
		putc(' ', f);
}

static void text_rr(FILE *f, const struct spfkit_dns_rr *rr)
{
	char addr[INET6_ADDRSTRLEN];

	if (rr_addr(rr, addr, sizeof(addr)) != NULL) {
		fputs(addr, f);
	} else if (rr_is_name(rr->type)) {
		if (rr->type == SPFKIT_RR_MX)
			fprintf(f, "%u ", (unsigned)rr->pref);
		cli_put_safe(f, (const char *)rr->data, rr->len);
	} else if (rr_is_text(rr->type)) {
		putc('"', f);
		cli_put_safe(f, (const char *)rr->data, rr->len > TEXT_TXT_MAX ? TEXT_TXT_MAX : rr->len);
		putc('"', f);
		if (rr->len > TEXT_TXT_MAX)
			fprintf(f, "... (%zu bytes)", rr->len);
	} else {
		fprintf(f, "(%zu bytes of type %u)", rr->len, (unsigned)rr->type);
	}
}

static void text_answer(FILE *f, const struct spfkit_trace_event *ev, double ms)
{
	const struct spfkit_dns_answer *a = ev->answer;
	char tbuf[16];
	size_t i;

	fprintf(f, "answer %s ", spfkit_rrtype_name(ev->qtype, tbuf, sizeof(tbuf)));
	cli_put_safe_str(f, ev->name);
	if (a == NULL) {
		fputs(": (none)\n", f);
		return;
	}
	fprintf(f, ": %s", spfkit_dns_status_name(a->status));
	if (a->detail != NULL)
		fprintf(f, " (%s)", a->detail);
	if (a->status != SPFKIT_DNS_TEMPFAIL)
		fprintf(f, ", ttl %lu", (unsigned long)a->ttl);
	if (a->status == SPFKIT_DNS_OK)
		fprintf(f, ", %zu record%s", a->count, a->count == 1 ? "" : "s");
	if (a->status == SPFKIT_DNS_NODATA || a->status == SPFKIT_DNS_NXDOMAIN)
		fputs(", void", f);
	if (ms >= 0)
		fprintf(f, ", %.3f ms", ms);
	putc('\n', f);
	for (i = 0; a->rrs != NULL && i < a->count; i++) {
		indent(f, ev->depth, 4);
		text_rr(f, &a->rrs[i]);
		putc('\n', f);
	}
}

static void text_counters(FILE *f, const struct cli_trace *t, const struct spfkit_trace_event *ev)
{
	fprintf(f, "counters: %u DNS term%s (limit %u), %u void lookup%s (limit %u)\n",
		ev->dns_terms, ev->dns_terms == 1 ? "" : "s", t->limits.dns_terms, ev->void_lookups,
		ev->void_lookups == 1 ? "" : "s", t->limits.void_lookups);
}

static void text_event(struct cli_trace *t, const struct spfkit_trace_event *ev, double ms)
{
	FILE *f = t->text;
	char tbuf[16];

	if (ev->kind == SPFKIT_TRACE_CHECK || ev->kind == SPFKIT_TRACE_RESULT) {
		indent(f, ev->depth, 0);
		fputs("check_host(", f);
		cli_put_safe_str(f, ev->domain);
		putc(')', f);
		if (ev->kind == SPFKIT_TRACE_RESULT)
			fprintf(f, " = %s", result_name(ev->result));
		putc('\n', f);
		return;
	}
	indent(f, ev->depth, 2);
	switch (ev->kind) {
	case SPFKIT_TRACE_QUERY:
		fprintf(f, "query %s ", spfkit_rrtype_name(ev->qtype, tbuf, sizeof(tbuf)));
		cli_put_safe_str(f, ev->name);
		putc('\n', f);
		break;
	case SPFKIT_TRACE_ANSWER:
		text_answer(f, ev, ms);
		break;
	case SPFKIT_TRACE_RECORD:
	case SPFKIT_TRACE_TERM:
	case SPFKIT_TRACE_NOTE:
		fprintf(f, "%s%s", kind_name(ev->kind), ev->kind == SPFKIT_TRACE_TERM ? " " : ": ");
		if (ev->text != NULL)
			cli_put_safe(f, ev->text, ev->text_len);
		if (ev->kind == SPFKIT_TRACE_TERM && ev->matched)
			fprintf(f, ": match -> %s", term_outcome(ev->text, ev->text_len));
		else if (ev->kind == SPFKIT_TRACE_TERM)
			fputs(": no match", f);
		putc('\n', f);
		break;
	case SPFKIT_TRACE_COUNT:
		text_counters(f, t, ev);
		break;
	default:
		fprintf(f, "%s\n", kind_name(ev->kind));
		break;
	}
}

/* ---- JSON events --------------------------------------------------------- */

static void json_rr(struct spfkit__buf *b, const struct spfkit_dns_rr *rr)
{
	char addr[INET6_ADDRSTRLEN], tbuf[16];
	int first = 1;

	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "type");
	cli_json_cstr(b, spfkit_rrtype_name(rr->type, tbuf, sizeof(tbuf)));
	cli_json_key(b, &first, "ttl");
	spfkit__buf_printf(b, "%lu", (unsigned long)rr->ttl);
	if (rr->type == SPFKIT_RR_MX) {
		cli_json_key(b, &first, "pref");
		spfkit__buf_printf(b, "%u", (unsigned)rr->pref);
	}
	cli_json_key(b, &first, "data");
	if (rr_addr(rr, addr, sizeof(addr)) != NULL)
		cli_json_cstr(b, addr);
	else
		cli_json_str(b, (const char *)rr->data, rr->len);
	spfkit__buf_putc(b, '}');
}

static void json_answer(struct spfkit__buf *b, int *first, const struct spfkit_dns_answer *a,
			double ms)
{
	size_t i;

	cli_json_key(b, first, "status");
	cli_json_cstr(b, status_token(a->status));
	cli_json_key(b, first, "ttl");
	spfkit__buf_printf(b, "%lu", (unsigned long)a->ttl);
	cli_json_key(b, first, "detail");
	cli_json_cstr(b, a->detail);
	cli_json_key(b, first, "ms");
	if (ms >= 0)
		spfkit__buf_printf(b, "%.3f", ms);
	else
		spfkit__buf_puts(b, "null");
	cli_json_key(b, first, "records");
	spfkit__buf_putc(b, '[');
	for (i = 0; a->rrs != NULL && i < a->count; i++) {
		if (i > 0)
			spfkit__buf_putc(b, ',');
		json_rr(b, &a->rrs[i]);
	}
	spfkit__buf_putc(b, ']');
}

/* The fields one kind of event carries, after event, depth and domain. */
static void json_fields(struct spfkit__buf *b, int *first, const struct spfkit_trace_event *ev,
			double ms)
{
	char tbuf[16];

	if (ev->kind == SPFKIT_TRACE_QUERY || ev->kind == SPFKIT_TRACE_ANSWER) {
		cli_json_key(b, first, "id");
		spfkit__buf_printf(b, "%lu", (unsigned long)ev->query_id);
		cli_json_key(b, first, "type");
		cli_json_cstr(b, spfkit_rrtype_name(ev->qtype, tbuf, sizeof(tbuf)));
		cli_json_key(b, first, "name");
		cli_json_cstr(b, ev->name);
		if (ev->kind == SPFKIT_TRACE_ANSWER && ev->answer != NULL)
			json_answer(b, first, ev->answer, ms);
	} else if (ev->kind == SPFKIT_TRACE_COUNT) {
		cli_json_key(b, first, "dns_terms");
		spfkit__buf_printf(b, "%u", ev->dns_terms);
		cli_json_key(b, first, "void_lookups");
		spfkit__buf_printf(b, "%u", ev->void_lookups);
	} else if (ev->kind == SPFKIT_TRACE_RESULT) {
		cli_json_key(b, first, "result");
		cli_json_cstr(b, result_name(ev->result));
	}
	if (ev->kind == SPFKIT_TRACE_RECORD || ev->kind == SPFKIT_TRACE_TERM ||
	    ev->kind == SPFKIT_TRACE_NOTE) {
		cli_json_key(b, first, "text");
		if (ev->text != NULL)
			cli_json_str(b, ev->text, ev->text_len);
		else
			spfkit__buf_puts(b, "null");
	}
	if (ev->kind == SPFKIT_TRACE_TERM) {
		cli_json_key(b, first, "matched");
		spfkit__buf_puts(b, ev->matched ? "true" : "false");
		cli_json_key(b, first, "outcome");
		if (ev->matched)
			cli_json_cstr(b, term_outcome(ev->text, ev->text_len));
		else
			spfkit__buf_puts(b, "null");
	}
}

static void json_event(struct cli_trace *t, const struct spfkit_trace_event *ev, double ms)
{
	struct spfkit__buf *b = t->json;
	int first = 1;

	if (!t->json_first)
		spfkit__buf_putc(b, ',');
	t->json_first = 0;
	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "event");
	cli_json_cstr(b, kind_name(ev->kind));
	cli_json_key(b, &first, "depth");
	spfkit__buf_printf(b, "%u", ev->depth);
	cli_json_key(b, &first, "domain");
	cli_json_cstr(b, ev->domain);
	json_fields(b, &first, ev, ms);
	spfkit__buf_putc(b, '}');
}

/*
 * The evaluator announces CHECK when it starts a check_host() step and
 * again when it resumes that step after the TXT answer. Both are one
 * check_host(): show it once. A CHECK is a repeat when it names the same
 * domain at the same depth and only DNS traffic or counters came between.
 */
static int repeated_check(struct cli_trace *t, const struct spfkit_trace_event *ev)
{
	size_t len;

	if (ev->kind == SPFKIT_TRACE_QUERY || ev->kind == SPFKIT_TRACE_ANSWER ||
	    ev->kind == SPFKIT_TRACE_COUNT || ev->kind == SPFKIT_TRACE_NOTE)
		return 0;
	if (ev->kind != SPFKIT_TRACE_CHECK || ev->domain == NULL) {
		t->check_open = 0;
		return 0;
	}
	len = strnlen(ev->domain, sizeof(t->check_domain));
	if (t->check_open && t->check_depth == ev->depth && len < sizeof(t->check_domain) &&
	    strcmp(t->check_domain, ev->domain) == 0)
		return 1;
	t->check_open = len < sizeof(t->check_domain);
	t->check_depth = ev->depth;
	if (t->check_open)
		memcpy(t->check_domain, ev->domain, len + 1);
	return 0;
}

void cli_trace_event(void *arg, const struct spfkit_trace_event *ev)
{
	struct cli_trace *t = arg;
	double ms = -1.0;

	if (repeated_check(t, ev))
		return;
	if (ev->kind == SPFKIT_TRACE_QUERY)
		note_sent(t, ev->query_id);
	else if (ev->kind == SPFKIT_TRACE_ANSWER)
		ms = take_elapsed(t, ev->query_id);
	if (t->text != NULL)
		text_event(t, ev, ms);
	if (t->json != NULL)
		json_event(t, ev, ms);
}
