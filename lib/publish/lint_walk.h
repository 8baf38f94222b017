/*
 * What the pieces of lint's walk share (lib/publish, not installed):
 * the walk's state and the node of one record being walked. The walk and
 * the run are lint_walk.c's; the rest of the walker, one job a file:
 *
 *   lint_observe.c    telling the observer (spfkit tree, flatten) each step
 *   lint_count.c      the walk's questions: void lookups counted, failures reported
 *   lint_lookups.c    the terms that look things up: a, mx, exists, ptr, exp;
 *                     a record's questions asked together
 *   lint_cover.c      covered-by-include: where a term's addresses go
 *   lint_parked.c     parked-domain: a domain that receives no mail
 *   lint_published.c  what a domain publishes beside its record: type 99,
 *                     a wildcard, the record's strings, the TTL
 */
#ifndef SPFKIT_LINT_WALK_H
#define SPFKIT_LINT_WALK_H

#include "publish.h"

#define WALK_MAX_DEPTH 16u /* past 10 terms it is a permerror anyway */

/*
 * An mx term whose hosts lack addresses of a family: pyspf and Mail::SPF
 * count each such host as a void lookup for clients of that family.
 * Whether that passes their limit is known only once the whole tree,
 * the terms after this one included, is walked (lint_walk.c's limit_findings()).
 */
struct short_mx {
	const char *domain; /* in the report's arena, as the term */
	const char *term;
	size_t term_len;
	long offset;
	unsigned hosts[2]; /* without A, without AAAA */
};

struct walk {
	struct lint_dns *dns;
	struct lint_report *r;
	const char *path[WALK_MAX_DEPTH + 1];
	size_t depth;
	unsigned voids[2];   /* [0] IPv4 client, [1] IPv6 client */
	struct short_mx *short_mx;
	size_t nshort_mx, capshort_mx;
	struct spfkit__buf void_names[2];
	const char **included; /* include targets seen, for duplicate-include */
	size_t nincluded, capincluded;
	int fatal;             /* a permerror for every client */
	int err;               /* spfkit_err: the walk could not go on */
	lint_walk_fn *observe; /* spfkit tree, or NULL */
	void *observe_arg;
	const struct lint_input *in;
	unsigned opaque;       /* terms flatten keeps as written: ptr, exists, macro targets */
	struct lint_cover cover;
};

struct node {
	const char *domain; /* NUL-terminated, in the arena */
	size_t dlen;
	const struct spfkit_record *rec;
	enum lint_how how;
	uint32_t ttl;       /* of the TXT answer; has_ttl 0 for --record */
	int has_ttl;
};

/* The questions of a record's terms are independent: ask them together
 * (LINT_PARALLEL at a time), then walk as before, from the cache. */
#define PREFETCH_MAX 64u /* questions collected per call; the rest are asked in turn */

struct prefetch {
	struct lint_question q[PREFETCH_MAX];
	size_t n;
};

/* ---- lint_observe.c ------------------------------------------------------ */

/* The event with the walk's counters so far, to the observer if there is one. */
void spfkit__lint_observe_event(struct walk *w, struct lint_walk_event *ev);
void spfkit__lint_observe_simple(struct walk *w, enum lint_walk_kind kind);
/* A record looked for at name; via: the term that leads there (NULL: the top). */
void spfkit__lint_observe_enter(struct walk *w, const char *name, size_t len, enum lint_how how,
				const char *via_text, const struct spfkit_term *via);
void spfkit__lint_observe_problem(struct walk *w, int error, int loop, const char *what);
/* A branch that ends before any record is read: a loop, a bad or dynamic name. */
void spfkit__lint_observe_leaf(struct walk *w, const char *name, size_t len, enum lint_how how,
			       const char *via_text, const struct spfkit_term *via, int error,
			       int loop, const char *what);
void spfkit__lint_observe_addresses(struct walk *w, const struct spfkit_term *t,
				    const struct lint_answer *a4, const struct lint_answer *a6);
/* The record read at n (rec NULL: it did not parse, or there are several). */
void spfkit__lint_observe_record(struct walk *w, const struct node *n, const char *text,
				 size_t len, const struct spfkit_record *rec);
/* The problem of a record the parser refuses. */
void spfkit__lint_observe_syntax(struct walk *w, const struct spfkit_parse_error *pe, int rc);

/* ---- lint_count.c -------------------------------------------------------- */

/* A void lookup for clients of family fam (0 IPv4, 1 IPv6), named for the limit's finding. */
void spfkit__lint_count_void(struct walk *w, int fam, const char *what, const char *name,
			     size_t len);
/* A question an a/mx/exists term asks: a void answer counts, each time. */
void spfkit__lint_count_charge(struct walk *w, int fam, const char *name, size_t len,
			       uint16_t type, const struct lint_answer *ans);
/* Worst case for a target made by macros: a void for both families. */
void spfkit__lint_count_charge_unknown(struct walk *w, const char *src, size_t len);
/* spfkit__lint_dns_ask(); its error, the first, also into w->err. */
int spfkit__lint_count_ask(struct walk *w, const char *name, size_t len, uint16_t type,
			   const struct lint_answer **out);
/* TEMPFAIL: a finding (receivers would say temperror); 1 when so. */
int spfkit__lint_count_tempfail(struct walk *w, const char *domain, const char *name, size_t len,
				uint16_t type, const struct lint_answer *a);

/* ---- lint_lookups.c ------------------------------------------------------ */

/* One question into p; past PREFETCH_MAX it is asked later, in turn. */
void spfkit__lint_lookups_want(struct prefetch *p, const char *name, size_t len, uint16_t type);
/* The target of a term: its domain-spec when it has no macros, else the domain; 0: not known. */
int spfkit__lint_lookups_target(const struct node *n, const struct spfkit_term *t,
				const char **name, size_t *len);
/* A target made by macros: its finding. */
void spfkit__lint_lookups_dynamic(struct walk *w, const struct node *n,
				  const struct spfkit_term *t);
/* The terms a, mx and exists (name: their fixed, valid target) and ptr. */
void spfkit__lint_lookups_a(struct walk *w, const struct node *n, const struct spfkit_term *t,
			    const char *name, size_t len);
void spfkit__lint_lookups_mx(struct walk *w, const struct node *n, const struct spfkit_term *t,
			     const char *name, size_t len);
void spfkit__lint_lookups_exists(struct walk *w, const struct node *n, const char *name,
				 size_t len);
void spfkit__lint_lookups_ptr(struct walk *w);
/* An MX record's exchange that names no host: empty, or "." (null MX, RFC 7505). */
int spfkit__lint_lookups_mx_no_host(const struct spfkit_dns_rr *rr);
/* exp= of the checked domain (§6.2): one TXT record, or no explanation. */
void spfkit__lint_lookups_exp(struct walk *w, const struct node *n);
/* The questions of the terms the walk of n is about to ask, asked together. */
void spfkit__lint_lookups_prefetch(struct walk *w, const struct node *n);

/* ---- lint_parked.c ------------------------------------------------------- */

/* 1 when name receives no mail (no MX or a null MX, no A, no AAAA); 0 when not or not known. */
int spfkit__lint_parked_domain(struct walk *w, const char *name, size_t len);
/* The top record n->rec, walked: parked-domain when it is more than "v=spf1 -all". */
void spfkit__lint_parked_check(struct walk *w, const struct node *n);

/* ---- lint_published.c ---------------------------------------------------- */

void spfkit__lint_published_spf_type(struct walk *w, const char *domain, size_t dlen);
void spfkit__lint_published_wildcard(struct walk *w, const char *domain, size_t dlen);
void spfkit__lint_published_strings(struct walk *w, const char *domain, size_t dlen,
				    const char *text, size_t len);
void spfkit__lint_published_ttl(struct walk *w, const char *domain, const struct lint_answer *a);

#endif
