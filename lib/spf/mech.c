/*
 * The mechanisms of RFC 7208 §5, each as straight-line code over need():
 * see eval_int.h for how a term replays until its answers are in.
 */
#include <arpa/inet.h>
#include <string.h>

#include "domain.h"
#include "eval_int.h"
#include "idna.h"
#include "ipaddr.h"

#define LETTER_BIT(c) (1u << ((c) - 'a'))

/* Out of line: the lookups that call dns_failed() are on the pass path. */
__attribute__((noinline, cold)) static void lookup_failed(struct spfkit_eval *ev, struct frame *f,
							  const struct query *q)
{
	char type[16];

	spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_TEMPERROR,
		spfkit__reason_of_detail(q->ans.detail),
			   "DNS %s lookup of %s failed: %s",
			   spfkit_rrtype_name(q->type, type, sizeof(type)), q->name,
			   q->ans.detail ? q->ans.detail : "temporary failure");
}

/* §5: an error other than "no such name" or "no data" ends check_host(). */
static int dns_failed(struct spfkit_eval *ev, struct frame *f, const struct query *q)
{
	if (q->ans.status != SPFKIT_DNS_TEMPFAIL)
		return 0;
	lookup_failed(ev, f, q);
	return 1;
}

static uint16_t address_type(const struct spfkit_eval *ev)
{
	return ev->ip.family == 4 ? SPFKIT_RR_A : SPFKIT_RR_AAAA;
}

static int answer_has_ip(const struct spfkit_eval *ev, const struct query *q, unsigned prefix)
{
	size_t i, want = ev->ip.family == 4 ? 4 : 16;

	for (i = 0; i < q->ans.count; i++) {
		const struct spfkit_dns_rr *rr = &q->ans.rrs[i];

		if (rr->len == want && spfkit__ipaddr_match(&ev->ip, ev->ip.family, rr->data,
							    prefix))
			return 1;
	}
	return 0;
}

/* Pick %{p} among the validated names (§7.3): <domain> itself, else a
 * subdomain of it, else the first one. */
static void choose_validated(const struct validated *v, const struct frame *f,
			     struct spfkit__macro_env *env)
{
	size_t i;

	for (i = 0; i < v->count; i++)
		if (spfkit__memcaseeq(v->names[i], v->lens[i], f->domain, f->domain_len))
			goto found;
	for (i = 0; i < v->count; i++)
		if (spfkit__domain_within(v->names[i], v->lens[i], f->domain, f->domain_len))
			goto found;
	if (v->count == 0)
		return;
	i = 0;
found:
	env->validated = v->names[i];
	env->validated_len = v->lens[i];
}

int spfkit__mech_expand_target(struct spfkit_eval *ev, struct frame *f,
			  const struct spfkit_macro_string *ms, enum spfkit__macro_use use,
			  const char **out, size_t *out_len, int *failed)
{
	struct spfkit__macro_env env;
	struct validated v;
	int rc;

	*failed = 0;
	/* Most domain-specs are plain names: no environment, no expansion.
	 * Past 253 octets the slow path applies the §7.3 cut. */
	if (use == SPFKIT__MACRO_DOMAIN && ms->letters == 0 && ms->count == 1 &&
	    ms->pieces[0].kind == SPFKIT_PIECE_LITERAL && ms->pieces[0].len <= SPFKIT_DOMAIN_MAX_LEN) {
		*out_len = spfkit__domain_trim(ms->pieces[0].text, ms->pieces[0].len);
		*out = spfkit__arena_strndup(&ev->arena, ms->pieces[0].text, *out_len);
		return *out == NULL ? STEP_NOMEM : STEP_DONE;
	}
	if (use == SPFKIT__MACRO_DOMAIN && spfkit__idna_no_ascii(ev, ms)) {
		*out = ""; /* no name: a redirect to it is a permerror, exp= is not used */
		*out_len = 0;
		return STEP_DONE;
	}
	spfkit__eval_macro_env(ev, f, &env);
	if (ms->letters & LETTER_BIT('p')) {
		rc = spfkit__mech_validate_ptr(ev, f, &v);
		if (rc != STEP_DONE)
			return rc;
		choose_validated(&v, f, &env);
	}
	spfkit__buf_reset(&ev->scratch);
	rc = spfkit__macro_expand(ms, &env, use, &ev->scratch);
	if (rc == SPFKIT_ENOMEM)
		return STEP_NOMEM;
	if (rc != 0) {
		*failed = 1;
		return STEP_DONE;
	}
	*out_len = ev->scratch.len;
	if (use == SPFKIT__MACRO_DOMAIN)
		*out_len = spfkit__domain_trim(spfkit__buf_str(&ev->scratch), ev->scratch.len);
	*out = spfkit__arena_strndup(&ev->arena, spfkit__buf_str(&ev->scratch), *out_len);
	return *out == NULL ? STEP_NOMEM : STEP_DONE;
}

/* The term's <target-name>: its domain-spec expanded, or <domain>. */
static int term_target(struct spfkit_eval *ev, struct frame *f, const struct spfkit_term *t)
{
	int literal = f->hot != NULL ? f->hot[t - f->rec->terms].literal : HOT_NOT_LITERAL;
	int failed, rc;

	if (f->target != NULL) {
		/* a replay: the answers the expansion used are counted as used
		 * again, so the lookups after it are counted (§4.6.4 void
		 * lookups) exactly once, as when every answer was at hand */
		f->uses = f->target_uses;
		return STEP_DONE;
	}
	if (!t->has_domain) {
		f->target = f->domain;
		f->target_len = f->domain_len;
		f->target_uses = f->uses;
		f->target_valid = 1; /* checked when the frame started */
		return STEP_DONE;
	}
	rc = spfkit__mech_expand_target(ev, f, &t->domain, SPFKIT__MACRO_DOMAIN, &f->target,
				   &f->target_len, &failed);
	f->target_uses = f->uses;
	if (rc == STEP_DONE && !failed)
		f->target_valid = literal != HOT_NOT_LITERAL
					  ? literal == HOT_LITERAL_VALID
					  : (uint8_t)spfkit__domain_valid(f->target, f->target_len);
	if (rc == STEP_DONE && failed) {
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
			SPFKIT_REASON_EXPANSION_SIZE,
				   "macro expansion of '%.*s%s' is too long",
				   (int)(t->domain.src_len > 64 ? 64 : t->domain.src_len), t->domain.src,
				   t->domain.src_len > 64 ? "..." : "");
		f->target = NULL;
	}
	return rc;
}

/*
 * §5.5: validate the names the PTR records of <ip> give; at most the
 * first ptr_names of them (§4.6.4: "all records other than the first 10
 * MUST be ignored"); a name whose address lookup fails is skipped.
 */
int spfkit__mech_validate_ptr(struct spfkit_eval *ev, struct frame *f, struct validated *v)
{
	char rev[SPFKIT__REVERSE_MAX];
	size_t len = spfkit__ipaddr_reverse_name(&ev->ip, rev), i, n;
	const struct query *ptr, *aq;
	int fresh, nomem;

	v->count = 0;
	ptr = spfkit__query_need(ev, f, SPFKIT_RR_PTR, rev, len, 0, &fresh, &nomem);
	if (ptr == NULL)
		return nomem ? STEP_NOMEM : STEP_PENDING;
	n = ptr->ans.count;
	if (n > ev->ctx->limits.ptr_names)
		n = ev->ctx->limits.ptr_names;
	for (i = 0; i < n && v->count < SPFKIT_LIMIT_PTR_NAMES; i++) {
		const struct spfkit_dns_rr *rr = &ptr->ans.rrs[i];

		if (!spfkit__domain_valid((const char *)rr->data, rr->len))
			continue;
		f->term_level = ptr->strict_level; /* each name's lookup needs only the PTR answer */
		aq = spfkit__query_need(ev, f, address_type(ev), (const char *)rr->data, rr->len, 0,
				  &fresh, &nomem);
		if (aq == NULL)
			return nomem ? STEP_NOMEM : STEP_PENDING;
		if (!answer_has_ip(ev, aq, ev->ip.family == 4 ? 32 : 128))
			continue;
		v->names[v->count] = (const char *)rr->data;
		v->lens[v->count] = spfkit__domain_trim((const char *)rr->data, rr->len);
		v->count++;
	}
	return STEP_DONE;
}

/* Look up `type` for the target, counting a void answer (§4.6.4). */
static int lookup_target(struct spfkit_eval *ev, struct frame *f, uint16_t type,
			 const struct query **out, enum mech_outcome *res)
{
	int fresh, nomem;

	*out = spfkit__query_need(ev, f, type, f->target, f->target_len,
			    type == SPFKIT_RR_MX ? QF_MX : 0, &fresh, &nomem);
	if (*out == NULL)
		return nomem ? STEP_NOMEM : STEP_PENDING;
	if ((fresh && spfkit__limits_charge_void(ev, f, &(*out)->ans)) || dns_failed(ev, f, *out))
		*res = MECH_ERROR;
	return STEP_DONE;
}

static unsigned term_prefix(const struct spfkit_eval *ev, const struct spfkit_term *t)
{
	return ev->ip.family == 4 ? t->cidr4 : t->cidr6;
}

/* §5.3 "a": any A (or AAAA) of <target-name> within the CIDR length. */
static int mech_a(struct spfkit_eval *ev, struct frame *f, const struct spfkit_term *t,
		  enum mech_outcome *res)
{
	const struct query *q;
	int rc;

	rc = lookup_target(ev, f, address_type(ev), &q, res);
	if (rc != STEP_DONE || *res == MECH_ERROR)
		return rc;
	*res = answer_has_ip(ev, q, term_prefix(ev, t)) ? MECH_MATCH : MECH_NOMATCH;
	return STEP_DONE;
}

/* Is this MX exchange the null MX "." of RFC 7505 (or empty)? */
static int null_exchange(const struct spfkit_dns_rr *rr)
{
	return rr->len == 0 || (rr->len == 1 && rr->data[0] == '.');
}

/* §5.4 "mx": the addresses of every MX host; more than mx_names hosts
 * to look up is permerror (§4.6.4). No implicit MX. */
static int mech_mx(struct spfkit_eval *ev, struct frame *f, const struct spfkit_term *t,
		   enum mech_outcome *res)
{
	const struct query *mx, *aq;
	size_t i, looked = 0;
	int fresh, nomem, rc;

	rc = lookup_target(ev, f, SPFKIT_RR_MX, &mx, res);
	if (rc != STEP_DONE || *res == MECH_ERROR)
		return rc;
	for (i = 0; i < mx->ans.count; i++) {
		const struct spfkit_dns_rr *rr = &mx->ans.rrs[i];

		if (null_exchange(rr))
			continue;
		if (++looked > ev->ctx->limits.mx_names) {
			spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
				SPFKIT_REASON_MX_NAMES,
					   "%s has more than %u MX hosts to look up (RFC 7208 section 4.6.4)",
					   f->target, ev->ctx->limits.mx_names);
			*res = MECH_ERROR;
			return STEP_DONE;
		}
		f->term_level = mx->strict_level; /* each host's lookup needs only the MX answer */
		aq = spfkit__query_need(ev, f, address_type(ev), (const char *)rr->data, rr->len, 0,
				  &fresh, &nomem);
		if (aq == NULL)
			return nomem ? STEP_NOMEM : STEP_PENDING;
		if (dns_failed(ev, f, aq)) {
			*res = MECH_ERROR;
			return STEP_DONE;
		}
		if (answer_has_ip(ev, aq, term_prefix(ev, t))) {
			*res = MECH_MATCH;
			return STEP_DONE;
		}
	}
	*res = MECH_NOMATCH;
	return STEP_DONE;
}

/* §5.5 "ptr": a validated name of <ip> within <target-name>. A failed
 * PTR lookup is no match, not temperror. */
static int mech_ptr(struct spfkit_eval *ev, struct frame *f, enum mech_outcome *res)
{
	char rev[SPFKIT__REVERSE_MAX];
	size_t len = spfkit__ipaddr_reverse_name(&ev->ip, rev), i;
	const struct query *ptr;
	struct validated v;
	int fresh, nomem, rc;

	ptr = spfkit__query_need(ev, f, SPFKIT_RR_PTR, rev, len, 0, &fresh, &nomem);
	if (ptr == NULL)
		return nomem ? STEP_NOMEM : STEP_PENDING;
	if (fresh && spfkit__limits_charge_void(ev, f, &ptr->ans)) {
		*res = MECH_ERROR;
		return STEP_DONE;
	}
	rc = spfkit__mech_validate_ptr(ev, f, &v);
	if (rc != STEP_DONE)
		return rc;
	*res = MECH_NOMATCH;
	for (i = 0; i < v.count; i++)
		if (spfkit__domain_within(v.names[i], v.lens[i], f->target, f->target_len))
			*res = MECH_MATCH;
	return STEP_DONE;
}

/* §5.7 "exists": any A record at all, whatever the client's family. */
static int mech_exists(struct spfkit_eval *ev, struct frame *f, enum mech_outcome *res)
{
	const struct query *q;
	int rc;

	rc = lookup_target(ev, f, SPFKIT_RR_A, &q, res);
	if (rc != STEP_DONE || *res == MECH_ERROR)
		return rc;
	*res = q->ans.count > 0 ? MECH_MATCH : MECH_NOMATCH;
	return STEP_DONE;
}

/* §5.2 "include": a nested check_host(); eval.c maps its result. */
static int mech_include(struct spfkit_eval *ev, struct frame *f, enum mech_outcome *res)
{
	struct frame *child;

	if (ev->depth >= EVAL_MAX_DEPTH) {
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR, SPFKIT_REASON_INCLUDE_DEPTH,
				   "include nesting too deep");
		*res = MECH_ERROR;
		return STEP_DONE;
	}
	child = &ev->frames[ev->depth++];
	memset(child, 0, sizeof(*child));
	child->domain = f->target;
	child->domain_len = f->target_len;
	child->domain_checked = 1; /* mech_with_dns() did */
	child->base_level = f->term_level;
	child->phase = PH_START;
	*res = MECH_PUSHED;
	return STEP_DONE;
}

static int mech_with_dns(struct spfkit_eval *ev, struct frame *f, const struct spfkit_term *t,
			 enum mech_outcome *res)
{
	int rc;

	*res = MECH_NOMATCH;
	if (spfkit__limits_charge_dns_term(ev, f)) {
		*res = MECH_ERROR;
		return STEP_DONE;
	}
	if (t->has_domain && spfkit__idna_no_ascii(ev, &t->domain)) {
		spfkit__idna_trace_skip(ev, f, t);
		return STEP_DONE;
	}
	rc = term_target(ev, f, t);
	if (rc != STEP_DONE)
		return rc;
	if (f->target == NULL) {
		*res = MECH_ERROR;
		return STEP_DONE;
	}
	/* A target that cannot be a DNS name matches nothing (suite:
	 * invalid-domain-*); for include it is a "none", so permerror. */
	if (t->mech != SPFKIT_MECH_PTR && !f->target_valid) {
		if (t->mech != SPFKIT_MECH_INCLUDE)
			return STEP_DONE;
		spfkit__eval_frame_fail(ev, f, SPFKIT_RESULT_PERMERROR,
			SPFKIT_REASON_INCLUDE_TARGET,
				   "include target '%s' is not a valid domain name", f->target);
		*res = MECH_ERROR;
		return STEP_DONE;
	}
	switch (t->mech) {
	case SPFKIT_MECH_A: return mech_a(ev, f, t, res);
	case SPFKIT_MECH_MX: return mech_mx(ev, f, t, res);
	case SPFKIT_MECH_PTR: return mech_ptr(ev, f, res);
	case SPFKIT_MECH_EXISTS: return mech_exists(ev, f, res);
	default: return mech_include(ev, f, res);
	}
}

int spfkit__mech_eval(struct spfkit_eval *ev, struct frame *f, const struct spfkit_term *t,
			   enum mech_outcome *out)
{
	switch (t->mech) {
	case SPFKIT_MECH_ALL:
		*out = MECH_MATCH;
		return STEP_DONE;
	case SPFKIT_MECH_IP4:
		*out = ev->ip.family == 4 && spfkit__ip4_in(ev->ip4, t) ? MECH_MATCH : MECH_NOMATCH;
		return STEP_DONE;
	case SPFKIT_MECH_IP6:
		*out = spfkit__ipaddr_match(&ev->ip, 6, t->ip, t->cidr6)
			       ? MECH_MATCH
			       : MECH_NOMATCH;
		return STEP_DONE;
	default:
		return mech_with_dns(ev, f, t, out);
	}
}
