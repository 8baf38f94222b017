/*
 * check_host() of RFC 7208 §4 as a sans-I/O state machine: frames for
 * include and redirect, the public new/step/answer/result/free calls.
 * The mechanisms are in mech.c, the question table in query.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "domain.h"
#include "eval_int.h"
#include "idna.h"
#include "record_cache.h"
#include "record_plan.h"

void spfkit__eval_trace(struct spfkit_eval *ev, const struct spfkit_trace_event *e)
{
	if (ev->trace != NULL)
		ev->trace(ev->trace_arg, e);
}

static void trace_frame_event(struct spfkit_eval *ev, const struct frame *f,
			      enum spfkit_trace_kind kind, const char *text, size_t len, int matched)
{
	struct spfkit_trace_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.depth = (unsigned)(f - ev->frames);
	e.domain = f->domain;
	e.text = text;
	e.text_len = len;
	e.matched = matched;
	e.result = f->result;
	if (kind == SPFKIT_TRACE_TERM && matched && f->rec != NULL && f->term < f->rec->count)
		e.result = spfkit__qualifier_result(&f->rec->terms[f->term]);
	e.dns_terms = ev->dns_terms;
	e.void_lookups = ev->void_lookups;
	ev->trace(ev->trace_arg, &e);
}

void spfkit__eval_trace_note(struct spfkit_eval *ev, const struct frame *f, const char *text,
			size_t len)
{
	trace_frame_event(ev, f, SPFKIT_TRACE_NOTE, text, len, 0);
}

/* Tracing is off on the hot path: test before the call. */
static inline void trace_frame(struct spfkit_eval *ev, const struct frame *f,
			       enum spfkit_trace_kind kind, const char *text, size_t len, int matched)
{
	if (ev->trace != NULL)
		trace_frame_event(ev, f, kind, text, len, matched);
}

void spfkit__eval_macro_env(const struct spfkit_eval *ev, const struct frame *f,
		       struct spfkit__macro_env *env)
{
	spfkit__eval_macro_env_for(ev, f->domain, f->domain_len, env);
}

void spfkit__eval_macro_env_for(const struct spfkit_eval *ev, const char *domain, size_t domain_len,
			   struct spfkit__macro_env *env)
{
	memset(env, 0, sizeof(*env));
	env->sender = ev->sender;
	env->sender_len = ev->sender_len;
	env->local = ev->local;
	env->local_len = ev->local_len;
	env->sender_domain = ev->sender_domain;
	env->sender_domain_len = ev->sender_domain_len;
	env->domain = domain;
	env->domain_len = domain_len;
	env->ip = &ev->ip;
	env->helo = ev->helo;
	env->helo_len = ev->helo_len;
	env->receiver = ev->ctx->receiver;
	env->receiver_len = ev->ctx->receiver_len;
	env->now = ev->now;
}

/*
 * The reason of the result (reason.h). An error ends the evaluation: the
 * includer of a frame that failed fails with the same problem (§5.2), a
 * redirect is the frame's own result, and an explanation never fails; so
 * the first reason set is the result's, and nothing sets it on the way
 * to any other result. term: the term to blame in f's record (len bytes
 * at offset), or NULL.
 */
static void set_reason(struct spfkit_eval *ev, const struct frame *f, enum spfkit_reason reason,
		       const char *term, size_t len, size_t offset)
{
	struct spfkit_result *r = &ev->result;

	r->reason = reason;
	r->reason_domain = f->domain;
	r->reason_term = term != NULL ? spfkit__arena_strndup(&ev->arena, term, len) : NULL;
	r->reason_term_len = r->reason_term != NULL ? len : 0;
	r->reason_term_offset = r->reason_term != NULL ? offset : 0;
}

/* The term f is at: a mechanism while its terms run, the redirect after. */
static const struct spfkit_term *current_term(const struct frame *f)
{
	if (f->rec == NULL)
		return NULL;
	if (f->phase == PH_TERMS && f->term < f->rec->count)
		return &f->rec->terms[f->term];
	if (f->phase == PH_REDIRECT && f->rec->redirect >= 0)
		return &f->rec->terms[f->rec->redirect];
	return NULL;
}

/* The frame's result is known: the top level goes on to explain a fail. */
static void frame_finish(struct spfkit_eval *ev, struct frame *f, enum spfkit_result_code code)
{
	/* §6.1: "If no SPF record is found, or if the <target-name> is
	 * malformed, the result is a permerror rather than none." */
	if (f->redirected && code == SPFKIT_RESULT_NONE) {
		code = SPFKIT_RESULT_PERMERROR;
		if (f->problem == NULL) {
			f->problem = "redirect target has no SPF record (RFC 7208 section 6.1)";
			set_reason(ev, f, SPFKIT_REASON_REDIRECT_NONE, NULL, 0, 0);
		}
	}
	f->result = code;
	f->phase = (f == ev->frames && code == SPFKIT_RESULT_FAIL) ? PH_EXPLAIN : PH_DONE;
}

void spfkit__eval_frame_fail(struct spfkit_eval *ev, struct frame *f, enum spfkit_result_code code,
			enum spfkit_reason reason, const char *fmt, ...)
{
	const struct spfkit_term *t = current_term(f);
	char text[512];
	va_list ap;
	size_t n;

	if (t != NULL)
		set_reason(ev, f, reason, f->rec->text + t->offset, t->len, t->offset);
	else
		set_reason(ev, f, reason, NULL, 0, 0);
	va_start(ap, fmt);
	n = spfkit__vformat(text, sizeof(text), fmt, ap);
	va_end(ap);
	f->problem = spfkit__arena_strndup(&ev->arena, text, n);
	if (f->problem == NULL)
		f->problem = "out of memory";
	frame_finish(ev, f, code);
}

static void frame_next_term(struct frame *f)
{
	f->term_level = f->rec_level;
	f->term++;
	f->uses = 0;
	f->counted = 0;
	f->term_charged = 0;
	f->target = NULL;
	f->target_len = 0;
}

/* Out of line: frame_record() is on every evaluation's path, this is not. */
__attribute__((noinline, cold)) static void parse_failed(struct spfkit_eval *ev,
							struct frame *f,
							const struct query *q)
{
	const struct spfkit_parse_error *pe = &q->rce->pe;
	enum spfkit_reason reason = spfkit_parse_error_reason(pe);
	const char *term = (const char *)q->rec_rr->data + pe->term_offset;

	if (q->rce->rc != SPFKIT_ESYNTAX) {
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
				   reason != SPFKIT_REASON_NONE ? reason : SPFKIT_REASON_RECORD_SIZE,
				   "SPF record of %s: %s", f->domain, spfkit_strerror(q->rce->rc));
		return;
	}
	if (pe->term_len == 0) {
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR, reason,
				   "SPF record of %s, at offset %zu: %s (RFC 7208 section %s)", f->domain,
				   pe->offset, pe->rule ? pe->rule : "syntax error",
				   pe->section ? pe->section : "4.6");
		return;
	}
	spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR, reason,
			   "SPF record of %s, term '%.*s' at offset %zu: %s (RFC 7208 section %s)",
			   f->domain, (int)(pe->term_len > 64 ? 64 : pe->term_len), term, pe->offset,
			   pe->rule ? pe->rule : "syntax error", pe->section ? pe->section : "4.6");
	set_reason(ev, f, reason, term, pe->term_len, pe->term_offset); /* the term that failed */
}

__attribute__((noinline, cold)) static void txt_failed(struct spfkit_eval *ev, struct frame *f,
						       const struct query *q)
{
	spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_TEMPERROR,
		spfkit__reason_of_detail(q->ans.detail),
			   "DNS TXT lookup of %s failed: %s", f->domain,
			   q->ans.detail ? q->ans.detail : "temporary failure");
}

/* The answer to the TXT question is in: what record does it give? */
static int frame_record(struct spfkit_eval *ev, struct frame *f, struct query *q)
{
	if (q->ans.status == SPFKIT_DNS_TEMPFAIL) {
		txt_failed(ev, f, q);
		return STEP_DONE;
	}
	if (spfkit__query_record(ev, q) != 0)
		return STEP_NOMEM;
	switch (q->rec_state) {
	case REC_NONE:
		frame_finish(ev, f, SPFKIT_RESULT_NONE);
		return STEP_DONE;
	case REC_MULTIPLE:
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
			SPFKIT_REASON_MULTIPLE_RECORDS,
				   "%s has %zu SPF records (RFC 7208 section 4.5)", f->domain,
				   q->rec_count);
		return STEP_DONE;
	case REC_INVALID:
		parse_failed(ev, f, q);
		return STEP_DONE;
	}
	f->rec = q->rce->rec;
	f->hot = q->rce->hot;
	f->ip4 = q->rce->ip4;
	f->rec_private = !q->rce->cached; /* fixed for as long as we hold the entry */
	f->rec_level = q->strict_level;
	f->term_level = q->strict_level;
	trace_frame(ev, f, SPFKIT_TRACE_RECORD, f->rec->text, f->rec->len, 0);
	if (ev->trace != NULL)
		spfkit__legacy_trace(ev, f);
	f->phase = PH_TERMS;
	f->term = 0;
	f->uses = f->counted = 0;
	f->term_charged = 0;
	f->target = NULL;
	return STEP_DONE;
}

/*
 * The top check_host() of spfkit_eval_new_record(): the given text stands
 * for the TXT answer of §4.4, and goes through the same choice (§4.5) and
 * parse, so a bad record is the permerror a fetched one would be. Then
 * lookahead starts from it as from a fetched record.
 */
static int frame_given(struct spfkit_eval *ev, struct frame *f)
{
	int rc = frame_record(ev, f, ev->given);

	if (rc == STEP_DONE && f->phase == PH_TERMS && ev->lookahead)
		(void)spfkit__lookahead(ev, ev->given); /* only asks early: see store_answer */
	return rc;
}

/*
 * Through the record memo, the domain's address plan (record_plan.h) may
 * already say what the whole check_host() comes to for this client, as
 * strict evaluation of its records would: without a question (with
 * lookahead too: nothing is left to ask early), the questions counted
 * as strict evaluation asks them. 1 when it did, 0 when the records must
 * be walked, SPFKIT_ENOMEM.
 */
static int frame_plan(struct spfkit_eval *ev, struct frame *f)
{
	struct spfkit__record_plan_result pr;
	uint64_t hash = spfkit__namehash(f->domain, f->domain_len);
	int rc = spfkit__record_plan_run(ev->ctx->records, f->domain, f->domain_len, hash, ev->now,
					 &ev->ip, &ev->ctx->limits, &ev->arena, &pr);

	if (rc != 1) {
		if (rc == SPFKIT__PLAN_LEARN) { /* fill_result() builds it for this name */
			ev->plan_learn = 1;
			ev->plan_domain_len = f->domain_len;
			ev->plan_hash = hash;
		}
		return rc == SPFKIT_ENOMEM ? rc : 0;
	}
	ev->dns_terms = pr.dns_terms;
	ev->void_lookups = pr.void_lookups;
	ev->result.queries += pr.queries;
	ev->result.memo_answers += pr.queries;
	ev->result.planned = 1;
	if (pr.depth > ev->result.depth)
		ev->result.depth = pr.depth;
	ev->result.mechanism = pr.mechanism;
	if (pr.domain != NULL) { /* a redirect decided (§6.1) */
		f->domain = pr.domain;
		f->domain_len = pr.domain_len;
		f->redirected = 1;
	}
	/* no record held: the explanation of a fail is the default (a plan
	 * has no "exp" at the top), and the mechanism is set above */
	f->rec = NULL;
	f->rec_level = f->term_level = (uint16_t)pr.rec_level;
	frame_finish(ev, f, pr.code);
	return 1;
}

/* §4.3, §4.4, §4.5: check the domain, fetch and choose its record. */
static int frame_start(struct spfkit_eval *ev, struct frame *f)
{
	const struct query *q;
	int fresh, nomem;

	if (!f->announced) {
		f->announced = 1; /* once, not on every replay */
		trace_frame(ev, f, SPFKIT_TRACE_CHECK, NULL, 0, 0);
		spfkit__idna_trace(ev, f);
	}
	if (!f->domain_checked && (!spfkit__domain_valid(f->domain, f->domain_len) ||
				   (f == ev->frames && !f->redirected && ev->idna_why != NULL))) {
		/* §4.3: a malformed <domain> is "none"; for redirect, permerror. */
		if (f->redirected)
			spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
					   SPFKIT_REASON_REDIRECT_TARGET,
					   "redirect target '%s' is not a valid domain name", f->domain);
		else
			frame_finish(ev, f, SPFKIT_RESULT_NONE);
		return STEP_DONE;
	}
	f->domain_checked = 1; /* this phase replays until the TXT answer is in */
	f->uses = 0;
	f->term_level = f->base_level;
	if (f == ev->frames && !f->redirected && ev->given != NULL)
		return frame_given(ev, f);
	if (f == ev->frames && !f->redirected && ev->memo && ev->nqueries == 0) {
		int rc = frame_plan(ev, f);

		if (rc != 0)
			return rc == 1 ? STEP_DONE : STEP_NOMEM;
	}
	q = spfkit__query_need(ev, f, SPFKIT_RR_TXT, f->domain, f->domain_len, QF_RECORD, &fresh,
		&nomem);
	if (q == NULL)
		return nomem ? STEP_NOMEM : STEP_PENDING;
	/* the table owns its queries; only the shared cap entry is const */
	return frame_record(ev, f, (struct query *)(uintptr_t)q);
}

/*
 * Most terms of a provider's record are ip4/ip6 that do not cover the
 * client: the compact form (record_room.h) settles those without reading
 * the full term. Anything else goes to spfkit__mech_eval().
 */
static int hot_no_match(const struct spfkit_eval *ev, const struct spfkit__hot_term *h)
{
	if (h->mech == SPFKIT_MECH_IP6)
		return ev->ip.family == 4;
	return h->mech == SPFKIT_MECH_IP4 &&
	       (ev->ip.family != 4 || ((ev->ip4 ^ h->ip4) & h->mask4) != 0);
}

/* The TERM trace event for the current term (callers test ev->trace). */
static void trace_term(struct spfkit_eval *ev, const struct frame *f, int matched)
{
	const struct spfkit_term *t = &f->rec->terms[f->term];

	trace_frame_event(ev, f, SPFKIT_TRACE_TERM, f->rec->text + t->offset, t->len, matched);
}

/* hot_no_match() for an IPv4 client ip4, over h[i..n): the first term
 * it does not settle. Its own loop: most terms of most records. */
static size_t skip_v4(const struct spfkit__hot_term *h, size_t i, size_t n, uint32_t ip4)
{
	for (; i < n; i++) {
		if (h[i].mech == SPFKIT_MECH_IP4 && !h[i].is_modifier) {
			if (((ip4 ^ h[i].ip4) & h[i].mask4) == 0)
				break;
		} else if (!h[i].is_modifier && h[i].mech != SPFKIT_MECH_IP6) {
			break;
		}
	}
	return i;
}

/*
 * Without a trace, run past the terms the compact form settles
 * (modifiers, and ip4/ip6 that cannot cover the client) in a tight loop:
 * the state is then what frame_next_term() leaves after each of them.
 * With a trace, every term tried is an event: the loop below does it.
 */
static void skip_settled(const struct spfkit_eval *ev, struct frame *f)
{
	const struct spfkit__hot_term *h = f->hot;
	size_t i = f->term, n = f->rec->count;

	if (ev->trace != NULL)
		return;
	if (f->ip4 != NULL && ev->ip.family == 4)
		i = spfkit__ip4_scan(f->ip4, i, n, ev->ip4);
	else if (ev->ip.family == 4)
		i = skip_v4(h, i, n, ev->ip4);
	else
		while (i < n && (h[i].is_modifier || hot_no_match(ev, &h[i])))
			i++;
	if (i == f->term)
		return;
	frame_next_term(f);
	f->term = i;
}

/* §4.6.2: mechanisms in order; the first match decides. */
static int frame_terms(struct spfkit_eval *ev, struct frame *f)
{
	enum mech_outcome out;
	int rc;

	for (skip_settled(ev, f); f->term < f->rec->count; frame_next_term(f), skip_settled(ev, f)) {
		const struct spfkit_term *t = &f->rec->terms[f->term];

		if (f->hot[f->term].is_modifier)
			continue;
		out = MECH_NOMATCH;
		if (!hot_no_match(ev, &f->hot[f->term])) {
			f->uses = 0; /* the term (re)starts: see eval_int.h */
			f->term_level = f->rec_level;
			rc = spfkit__mech_eval(ev, f, t, &out);
			if (rc != STEP_DONE)
				return rc;
			if (out == MECH_PUSHED || out == MECH_ERROR)
				return STEP_DONE;
		}
		if (ev->trace != NULL)
			trace_term(ev, f, out == MECH_MATCH);
		if (out == MECH_MATCH) {
			f->decided = t;
			frame_finish(ev, f, spfkit__qualifier_result(t));
			return STEP_DONE;
		}
	}
	f->phase = PH_REDIRECT;
	return STEP_DONE;
}

/* f is done with its record: give it back unless an open frame (an
 * include loop) reads the same one. */
static void frame_release_record(struct spfkit_eval *ev, const struct frame *f)
{
	unsigned i;

	/* a record the cache keeps costs nothing more while held, and small
	 * ones are worth keeping (EVAL_KEEP_RECORD_BYTES): nothing to do */
	if (f->rec == NULL || !f->rec_private || ev->rec_bytes <= EVAL_KEEP_RECORD_BYTES)
		return;
	for (i = 0; i < ev->depth; i++)
		if (&ev->frames[i] != f && ev->frames[i].rec == f->rec)
			return;
	spfkit__query_record_done(ev, f->domain, f->domain_len, f->rec);
}

/* §6.1: no mechanism matched; follow redirect, else neutral (§4.7). */
static int frame_redirect(struct spfkit_eval *ev, struct frame *f)
{
	const struct spfkit_term *t;
	const char *target;
	size_t len;
	int failed, rc;

	if (f->rec->redirect < 0) {
		frame_finish(ev, f, SPFKIT_RESULT_NEUTRAL);
		return STEP_DONE;
	}
	t = &f->rec->terms[f->rec->redirect];
	if (spfkit__limits_charge_dns_term(ev, f))
		return STEP_DONE;
	f->uses = 0;
	f->term_level = f->rec_level;
	rc = spfkit__mech_expand_target(ev, f, &t->domain, SPFKIT__MACRO_DOMAIN, &target, &len,
		&failed);
	if (rc != STEP_DONE)
		return rc;
	if (failed) {
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
			SPFKIT_REASON_EXPANSION_SIZE,
				   "macro expansion of redirect target is too long");
		return STEP_DONE;
	}
	trace_frame(ev, f, SPFKIT_TRACE_TERM, f->rec->text + t->offset, t->len, 1);
	frame_release_record(ev, f);
	/* The redirect's result is this check_host()'s result: reuse the frame. */
	f->domain = target;
	f->domain_len = len;
	f->base_level = f->term_level;
	f->domain_checked = 0;
	f->announced = 0;
	f->rec = NULL;
	f->redirected = 1;
	f->phase = PH_START;
	f->term = 0;
	f->uses = f->counted = 0;
	f->term_charged = 0;
	f->target = NULL;
	return STEP_DONE;
}

static void fill_result(struct spfkit_eval *ev, const struct frame *f)
{
	struct spfkit_result *r = &ev->result;

	r->code = f->result;
	r->domain = f->domain;
	r->problem = f->problem;
	r->dns_terms = ev->dns_terms;
	r->void_lookups = ev->void_lookups;
	if (f->decided != NULL)
		r->mechanism = spfkit__arena_strndup(&ev->arena, f->rec->text + f->decided->offset,
						     f->decided->len);
	else if (f->result == SPFKIT_RESULT_NEUTRAL && f->rec != NULL)
		r->mechanism = "default";
	if (r->code != SPFKIT_RESULT_FAIL)
		r->explanation = NULL;
	ev->done = 1;
	if (ev->plan_learn) /* the memo has what this evaluation used */
		spfkit__record_plan_learn(ev->ctx->records, r->identity_domain, ev->plan_domain_len,
					  ev->plan_hash, ev->now, &ev->ctx->limits, ev->ip.family);
}

/* §5.2: what an included check_host() result means to the includer. */
static void include_returned(struct spfkit_eval *ev, struct frame *parent, const struct frame *child)
{
	const struct spfkit_term *t = &parent->rec->terms[parent->term];

	switch (child->result) {
	case SPFKIT_RESULT_PASS:
		trace_frame(ev, parent, SPFKIT_TRACE_TERM, parent->rec->text + t->offset, t->len, 1);
		parent->decided = t;
		frame_finish(ev, parent, spfkit__qualifier_result(t));
		return;
	case SPFKIT_RESULT_FAIL:
	case SPFKIT_RESULT_SOFTFAIL:
	case SPFKIT_RESULT_NEUTRAL:
		trace_frame(ev, parent, SPFKIT_TRACE_TERM, parent->rec->text + t->offset, t->len, 0);
		frame_next_term(parent);
		return;
	case SPFKIT_RESULT_TEMPERROR:
		parent->problem = child->problem;
		frame_finish(ev, parent, SPFKIT_RESULT_TEMPERROR);
		return;
	case SPFKIT_RESULT_NONE:
		spfkit__eval_frame_fail(ev, parent, SPFKIT_RESULT_PERMERROR,
			SPFKIT_REASON_INCLUDE_NONE,
				   "included domain %s has no SPF record (RFC 7208 section 5.2)",
				   child->domain);
		return;
	default:
		parent->problem = child->problem;
		frame_finish(ev, parent, SPFKIT_RESULT_PERMERROR);
		return;
	}
}

static void frame_pop(struct spfkit_eval *ev)
{
	struct frame *f = &ev->frames[ev->depth - 1];

	trace_frame(ev, f, SPFKIT_TRACE_RESULT, NULL, 0, 0);
	if (ev->depth == 1) {
		fill_result(ev, f);
		return;
	}
	ev->depth--;
	include_returned(ev, &ev->frames[ev->depth - 1], f);
	frame_release_record(ev, f);
}

/* Advance as far as the answers in hand allow. */
static int run(struct spfkit_eval *ev)
{
	while (!ev->done) {
		struct frame *f = &ev->frames[ev->depth - 1];
		int rc = STEP_DONE;

		switch (f->phase) {
		case PH_START: rc = frame_start(ev, f); break;
		case PH_TERMS: rc = frame_terms(ev, f); break;
		case PH_REDIRECT: rc = frame_redirect(ev, f); break;
		case PH_EXPLAIN: rc = spfkit__explain(ev, f); break;
		default: frame_pop(ev); break;
		}
		if (rc == STEP_PENDING)
			return 0;
		if (rc == STEP_NOMEM)
			return SPFKIT_ENOMEM;
	}
	return 0;
}

int spfkit_eval_step(struct spfkit_eval *ev, struct spfkit_question *q)
{
	int rc;

	if (ev == NULL || q == NULL)
		return SPFKIT_EINVAL;
	if (ev->done)
		return SPFKIT_STEP_DONE;
	if (spfkit__query_emit(ev, q))
		return SPFKIT_STEP_QUERY;
	if (ev->progress || ev->nqueries == 0) {
		ev->progress = 0;
		rc = run(ev);
		if (rc != 0)
			return rc;
	}
	if (ev->memo_unwalked && ev->lookahead && !ev->done) {
		/* records from the memo came in without an answer setting the
		 * walk off: what they make likely is asked now (only early:
		 * failing to is no error) */
		ev->memo_unwalked = 0;
		(void)spfkit__lookahead_walk(ev);
	}
	if (ev->done)
		return SPFKIT_STEP_DONE;
	if (spfkit__query_emit(ev, q))
		return SPFKIT_STEP_QUERY;
	return SPFKIT_STEP_WAIT;
}

int spfkit_eval_answer(struct spfkit_eval *ev, uint32_t id, const struct spfkit_dns_answer *answer)
{
	if (ev == NULL || answer == NULL)
		return SPFKIT_EINVAL;
	return spfkit__query_store_answer(ev, id, answer);
}

const struct spfkit_result *spfkit_eval_result(const struct spfkit_eval *ev)
{
	return ev != NULL && ev->done ? &ev->result : NULL;
}
