/*
 * The findings of one `spfkit lint` run and their two renderings: text
 * grouped by severity for people, one JSON object for CI. Every string
 * lives in one arena, freed with the report; record text comes from DNS,
 * so it is printed through cli_put_safe() / cli_json_str().
 */
#include <stdarg.h>
#include <string.h>

#include "lint.h"

#define LINT_ARENA_MAX (64u << 20) /* a hostile tree cannot take more */
#define LINT_MAX_FINDINGS 10000u   /* past it, findings are dropped (and said so) */
#define LINT_MSG_MAX 512u
#define LINT_JSON_MAX (64u << 20)

void lint_report_init(struct lint_report *r)
{
	memset(r, 0, sizeof(*r));
	spfkit__arena_init(&r->arena, NULL, 16384, LINT_ARENA_MAX);
	r->domain = "";
}

void lint_report_free(struct lint_report *r)
{
	spfkit__arena_free(&r->arena);
	spfkit__free(NULL, r->items);
	r->items = NULL;
	r->n = r->cap = 0;
}

char *lint_strndup(struct lint_report *r, const char *s, size_t len)
{
	char *p = spfkit__arena_strndup(&r->arena, s, len);

	if (p == NULL && r->err == 0)
		r->err = SPFKIT_ENOMEM;
	return p;
}

static struct lint_finding *new_finding(struct lint_report *r)
{
	struct lint_finding *p;
	size_t cap;

	if (r->n == r->cap) {
		if (r->cap >= LINT_MAX_FINDINGS) {
			if (r->err == 0)
				r->err = SPFKIT_E2BIG;
			return NULL;
		}
		cap = r->cap ? r->cap * 2 : 32;
		p = spfkit__realloc(NULL, r->items, cap * sizeof(*p));
		if (p == NULL) {
			r->err = SPFKIT_ENOMEM;
			return NULL;
		}
		r->items = p;
		r->cap = cap;
	}
	return &r->items[r->n++];
}

static void add_v(struct lint_report *r, enum lint_severity sev, enum lint_id id,
		  const char *domain, const char *term, size_t term_len, long offset, const char *fix,
		  const char *fmt, va_list ap)
{
	struct lint_finding *f;
	char msg[LINT_MSG_MAX];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		n = 0;
	f = new_finding(r);
	if (f == NULL)
		return;
	f->id = id;
	f->severity = sev;
	f->domain = domain != NULL && domain[0] != '\0' ? lint_strndup(r, domain, strlen(domain)) : NULL;
	f->term = term != NULL ? lint_strndup(r, term, term_len) : NULL;
	f->offset = offset;
	f->message = lint_strndup(r, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	f->fix = fix != NULL ? lint_strndup(r, fix, strlen(fix)) : NULL;
	if (f->message == NULL)
		r->n--; /* out of memory, noted in r->err */
}

void lint_add(struct lint_report *r, enum lint_id id, const char *domain, const char *term,
	      size_t term_len, long offset, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_v(r, lint_checks[id].severity, id, domain, term, term_len, offset, fix, fmt, ap);
	va_end(ap);
}

void lint_add_as(struct lint_report *r, enum lint_severity sev, enum lint_id id, const char *domain,
		 const char *term, size_t term_len, long offset, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_v(r, sev, id, domain, term, term_len, offset, fix, fmt, ap);
	va_end(ap);
}

size_t lint_count(const struct lint_report *r, enum lint_severity s)
{
	size_t i, n = 0;

	for (i = 0; i < r->n; i++)
		n += r->items[i].severity == s;
	return n;
}

int lint_exit_status(const struct lint_report *r)
{
	if (lint_count(r, LINT_ERROR) > 0)
		return 2;
	return lint_count(r, LINT_WARNING) > 0 ? 1 : 0;
}

static const char *fix_of(const struct lint_finding *f)
{
	return f->fix != NULL ? f->fix : lint_checks[f->id].fix;
}

/* ---- text -------------------------------------------------------------- */

static void print_finding(FILE *f, const struct lint_finding *x)
{
	fprintf(f, "  %s %s", lint_severity_name(x->severity), lint_checks[x->id].id);
	if (x->domain != NULL) {
		fputs(" [", f);
		cli_put_safe_str(f, x->domain);
		putc(']', f);
	}
	if (x->term != NULL) {
		fputs(" \"", f);
		cli_put_safe_str(f, x->term);
		putc('"', f);
	}
	if (x->offset >= 0)
		fprintf(f, " at offset %ld", x->offset);
	fputs("\n    ", f);
	cli_put_safe_str(f, x->message);
	fputs("\n    fix: ", f);
	cli_put_safe_str(f, fix_of(x));
	fprintf(f, "\n    RFC 7208 section %s\n", lint_checks[x->id].section);
}

static void print_counts(FILE *f, const struct lint_counts *c)
{
	fprintf(f, "lookups: %u DNS term%s (limit %u), worst case over every branch\n", c->dns_terms,
		c->dns_terms == 1 ? "" : "s", SPFKIT_LIMIT_DNS_TERMS);
	fprintf(f, "void lookups: %u for an IPv4 client, %u for an IPv6 client (limit %u)\n",
		c->void_v4, c->void_v6, SPFKIT_LIMIT_VOID_LOOKUPS);
	if (c->loop)
		fputs("(a loop: evaluation goes round it until the limit, then permerror)\n", f);
	if (c->dynamic)
		fputs("(some targets are made by macros: their branches are counted, not followed)\n",
		      f);
}

void lint_print_text(FILE *f, const struct lint_report *r)
{
	static const char *const heads[] = { "errors:", "warnings:", "notices:" };
	size_t i;
	int s;

	fputs("domain: ", f);
	cli_put_safe_str(f, r->domain[0] != '\0' ? r->domain : "(none given)");
	fputs("\nrecord: ", f);
	if (r->record != NULL)
		cli_put_safe(f, r->record, r->record_len);
	else
		fputs("(none)", f);
	putc('\n', f);
	print_counts(f, &r->counts);
	for (s = LINT_ERROR; s <= LINT_NOTICE; s++) {
		if (lint_count(r, (enum lint_severity)s) == 0)
			continue;
		fprintf(f, "\n%s\n", heads[s]);
		for (i = 0; i < r->n; i++)
			if (r->items[i].severity == (enum lint_severity)s)
				print_finding(f, &r->items[i]);
	}
	fprintf(f, "\nsummary: %zu error%s, %zu warning%s, %zu notice%s\n", lint_count(r, LINT_ERROR),
		lint_count(r, LINT_ERROR) == 1 ? "" : "s", lint_count(r, LINT_WARNING),
		lint_count(r, LINT_WARNING) == 1 ? "" : "s", lint_count(r, LINT_NOTICE),
		lint_count(r, LINT_NOTICE) == 1 ? "" : "s");
}

/* ---- JSON -------------------------------------------------------------- */

static void json_finding(struct spfkit__buf *b, const struct lint_finding *x)
{
	int first = 1;

	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "id");
	cli_json_cstr(b, lint_checks[x->id].id);
	cli_json_key(b, &first, "severity");
	cli_json_cstr(b, lint_severity_name(x->severity));
	cli_json_key(b, &first, "domain");
	cli_json_cstr(b, x->domain);
	cli_json_key(b, &first, "term");
	cli_json_cstr(b, x->term);
	cli_json_key(b, &first, "offset");
	if (x->offset >= 0)
		spfkit__buf_printf(b, "%ld", x->offset);
	else
		spfkit__buf_puts(b, "null");
	cli_json_key(b, &first, "message");
	cli_json_cstr(b, x->message);
	cli_json_key(b, &first, "fix");
	cli_json_cstr(b, fix_of(x));
	cli_json_key(b, &first, "rfc7208_section");
	cli_json_cstr(b, lint_checks[x->id].section);
	spfkit__buf_putc(b, '}');
}

static void json_counts(struct spfkit__buf *b, const struct lint_counts *c)
{
	spfkit__buf_printf(b,
			       "{\"dns_terms\":%u,\"dns_terms_limit\":%u,\"void_lookups_ipv4\":%u,"
			       "\"void_lookups_ipv6\":%u,\"void_lookups_limit\":%u,"
			       "\"permerror_ipv4\":%s,\"permerror_ipv6\":%s,\"dynamic\":%s,"
			       "\"loop\":%s,\"records\":%u}",
			       c->dns_terms, SPFKIT_LIMIT_DNS_TERMS, c->void_v4, c->void_v6,
			       SPFKIT_LIMIT_VOID_LOOKUPS, c->permerror_v4 ? "true" : "false",
			       c->permerror_v6 ? "true" : "false", c->dynamic ? "true" : "false",
			       c->loop ? "true" : "false", c->records);
}

int lint_print_json(FILE *f, const struct lint_report *r)
{
	struct spfkit__buf b;
	size_t i;
	int first = 1, rc;

	spfkit__buf_init(&b, NULL, LINT_JSON_MAX);
	spfkit__buf_putc(&b, '{');
	cli_json_key(&b, &first, "domain");
	cli_json_cstr(&b, r->domain[0] != '\0' ? r->domain : NULL);
	cli_json_key(&b, &first, "record");
	if (r->record != NULL)
		cli_json_str(&b, r->record, r->record_len);
	else
		spfkit__buf_puts(&b, "null");
	cli_json_key(&b, &first, "lookups");
	json_counts(&b, &r->counts);
	cli_json_key(&b, &first, "findings");
	spfkit__buf_putc(&b, '[');
	for (i = 0; i < r->n; i++) {
		if (i > 0)
			spfkit__buf_putc(&b, ',');
		json_finding(&b, &r->items[i]);
	}
	spfkit__buf_putc(&b, ']');
	cli_json_key(&b, &first, "summary");
	spfkit__buf_printf(&b, "{\"error\":%zu,\"warning\":%zu,\"notice\":%zu}",
			       lint_count(r, LINT_ERROR), lint_count(r, LINT_WARNING),
			       lint_count(r, LINT_NOTICE));
	cli_json_key(&b, &first, "exit_status");
	spfkit__buf_printf(&b, "%d", lint_exit_status(r));
	spfkit__buf_puts(&b, "}\n");
	rc = b.err;
	if (rc == 0)
		fwrite(b.data, 1, b.len, f);
	spfkit__buf_free(&b);
	return rc;
}
