/*
 * The findings of one lint run. Every string lives in one arena, freed
 * with the report; record text comes from DNS, so whoever prints it
 * escapes it (cli/lint_print.c).
 */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

#include "domain.h"
#include "publish.h"

#define LINT_ARENA_MAX (64u << 20) /* a hostile tree cannot take more */
#define LINT_MAX_FINDINGS 10000u   /* past it, findings are dropped (and said so) */
#define LINT_MSG_MAX 512u

void spfkit__lint_report_init(struct lint_report *r)
{
	memset(r, 0, sizeof(*r));
	spfkit__arena_init(&r->arena, NULL, 16384, LINT_ARENA_MAX);
	r->domain = "";
}

void spfkit__lint_report_free(struct lint_report *r)
{
	spfkit__arena_free(&r->arena);
	spfkit__free(NULL, r->items);
	spfkit__free(NULL, r->costs);
	r->items = NULL;
	r->costs = NULL;
	r->n = r->cap = 0;
	r->ncosts = r->capcosts = 0;
}

char *spfkit__lint_strndup(struct lint_report *r, const char *s, size_t len)
{
	char *p = spfkit__arena_strndup(&r->arena, s, len);

	if (p == NULL && r->err == 0)
		r->err = SPFKIT_ENOMEM;
	return p;
}

static struct lint_finding *new_finding(struct lint_report *r)
{
	struct lint_finding *p;

	if (r->n == r->cap && r->cap >= LINT_MAX_FINDINGS) {
		if (r->err == 0)
			r->err = SPFKIT_E2BIG;
		return NULL;
	}
	p = spfkit__array_grow(r->items, &r->cap, r->n, sizeof(*p), 32);
	if (p == NULL) {
		r->err = SPFKIT_ENOMEM;
		return NULL;
	}
	r->items = p;
	return &r->items[r->n++];
}

enum spfkit_reason spfkit__lint_reason_of(enum lint_id id)
{
	switch (id) {
	case L_MULTIPLE_RECORDS:
		return SPFKIT_REASON_MULTIPLE_RECORDS;
	case L_LOOKUPS_OVER_10:
	case L_INCLUDE_LOOP: /* §4.6.4: the loop runs into the 10-term limit */
	case L_REDIRECT_LOOP:
		return SPFKIT_REASON_DNS_TERMS;
	case L_VOID_OVER_2:
		return SPFKIT_REASON_VOID_LOOKUPS;
	case L_MX_OVER_10:
		return SPFKIT_REASON_MX_NAMES;
	case L_INCLUDE_NO_RECORD:
		return SPFKIT_REASON_INCLUDE_NONE;
	case L_REDIRECT_NO_RECORD:
		return SPFKIT_REASON_REDIRECT_NONE;
	default:
		return SPFKIT_REASON_NONE;
	}
}

static struct lint_finding *add_v(struct lint_report *r, enum lint_severity sev,
				  enum lint_id id, const char *domain, const char *term,
				  size_t term_len, long offset, const char *fix, const char *fmt,
				  va_list ap)
{
	struct lint_finding *f;
	char msg[LINT_MSG_MAX];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		n = 0;
	f = new_finding(r);
	if (f == NULL)
		return NULL;
	f->id = id;
	f->severity = sev;
	f->reason = spfkit__lint_reason_of(id);
	f->domain = domain != NULL && domain[0] != '\0'
			    ? spfkit__lint_strndup(r, domain, strlen(domain))
			    : NULL;
	f->term = term != NULL ? spfkit__lint_strndup(r, term, term_len) : NULL;
	f->offset = offset;
	f->message =
		spfkit__lint_strndup(r, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	f->fix = fix != NULL ? spfkit__lint_strndup(r, fix, strlen(fix)) : NULL;
	/* issue 31: what sits in a record at another name than the domain
	 * (or under it) is the provider's, not the owner's to change */
	f->provider = f->domain != NULL &&
		      !spfkit__domain_within(f->domain, strlen(f->domain), r->domain,
					     strlen(r->domain));
	if (f->message == NULL) {
		r->n--; /* out of memory, noted in r->err */
		return NULL;
	}
	return f;
}

struct lint_finding *spfkit__lint_add(struct lint_report *r, enum lint_id id, const char *domain,
				      const char *term, size_t term_len, long offset,
				      const char *fix, const char *fmt, ...)
{
	struct lint_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = add_v(r, spfkit__lint_checks[id].severity, id, domain, term, term_len, offset, fix,
		  fmt, ap);
	va_end(ap);
	return f;
}

struct lint_finding *spfkit__lint_add_as(struct lint_report *r, enum lint_severity sev,
					 enum lint_id id, const char *domain, const char *term,
					 size_t term_len, long offset, const char *fix,
					 const char *fmt, ...)
{
	struct lint_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = add_v(r, sev, id, domain, term, term_len, offset, fix, fmt, ap);
	va_end(ap);
	return f;
}

size_t spfkit__lint_tally(const struct lint_report *r, enum lint_severity s)
{
	size_t i, n = 0;

	for (i = 0; i < r->n; i++)
		n += r->items[i].severity == s;
	return n;
}

size_t spfkit__lint_tally_provider(const struct lint_report *r, enum lint_severity s)
{
	size_t i, n = 0;

	for (i = 0; i < r->n; i++)
		n += r->items[i].severity == s && r->items[i].provider;
	return n;
}

void spfkit__lint_remove(struct lint_report *r, size_t i)
{
	if (i >= r->n)
		return;
	memmove(&r->items[i], &r->items[i + 1], (r->n - i - 1) * sizeof(r->items[0]));
	r->n--;
}

int spfkit__lint_exit_status(const struct lint_report *r)
{
	if (spfkit__lint_tally(r, LINT_ERROR) > 0)
		return 2;
	return spfkit__lint_tally(r, LINT_WARNING) > spfkit__lint_tally_provider(r, LINT_WARNING)
		       ? 1
		       : 0;
}

const char *spfkit__lint_finding_fix(const struct lint_finding *f)
{
	return f->fix != NULL ? f->fix : spfkit__lint_checks[f->id].fix;
}
