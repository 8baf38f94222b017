/*
 * `spfkit lint`: internal interfaces between its files.
 *
 *   cmd_lint.c        options, --help, the run, exit status
 *   lint_catalogue.c  every check: stable id, severity, RFC 7208 section, fix
 *   lint_report.c     findings kept in one arena; text and JSON output
 *   lint_dns.c        questions through the public resolver, one at a time, cached
 *   lint_text.c       checks on a record's text: version, bytes, typos, legacy, sizes
 *   lint_terms.c      checks on a parsed record: all, netblocks, modifiers, macros
 *   lint_walk.c       the include/redirect tree: worst-case counts, loops, targets;
 *                     also the walker of `spfkit tree` (tree.h), which watches it
 *
 * Records are fetched with spfkit_resolver_submit()/wait() and parsed
 * with spfkit_record_parse(), the evaluator's own parser, so what lint
 * counts is what evaluation counts (tests/lint checks it on the
 * benchmark corpus). Lint never evaluates with this machine's address:
 * it evaluates nothing; sample macro expansions use documentation values.
 */
#ifndef SPFKIT_CLI_LINT_H
#define SPFKIT_CLI_LINT_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

enum lint_severity { LINT_ERROR = 0, LINT_WARNING, LINT_NOTICE };

/* One id per check; the order is the catalogue's (lint_catalogue.c). */
enum lint_id {
	L_NO_RECORD = 0,
	L_MULTIPLE_RECORDS,
	L_SYNTAX,
	L_VERSION_GLUED,
	L_LEGACY_SYNTAX,
	L_NO_TERMINATOR,
	L_PLUS_ALL,
	L_WIDE_NETBLOCK,
	L_NEUTRAL_ALL,
	L_TERMS_AFTER_ALL,
	L_REDIRECT_WITH_ALL,
	L_DUPLICATE_MODIFIER,
	L_UNKNOWN_MODIFIER,
	L_TYPO,
	L_NON_ASCII,
	L_LOOKUPS_OVER_10,
	L_CLOSE_TO_LIMIT,
	L_VOID_OVER_2,
	L_MX_OVER_10,
	L_TARGET_NO_ADDRESS,
	L_NULL_MX,
	L_INCLUDE_NO_RECORD,
	L_REDIRECT_NO_RECORD,
	L_INCLUDE_LOOP,
	L_REDIRECT_LOOP,
	L_DUPLICATE_INCLUDE,
	L_DYNAMIC_TARGET,
	L_PTR_USED,
	L_STRING_OVER_255,
	L_SPLIT_INSIDE_TOKEN,
	L_RECORD_OVER_450,
	L_ANSWER_OVER_512,
	L_SPF_RR_TYPE,
	L_BAD_MACRO,
	L_MACRO_LEAK,
	L_PRIVATE_RANGE,
	L_DUPLICATE_NETBLOCK,
	L_OVERLAPPING_NETBLOCK,
	L_UNREACHABLE_TERM,
	L_EXP_TARGET,
	L_EXP_IN_INCLUDE,
	L_TTL,
	L_WILDCARD_RECORD,
	L_DNS_FAILURE,
	L_COUNT
};

struct lint_check {
	const char *id;    /* stable: scripts match on it */
	enum lint_severity severity;
	const char *section; /* RFC 7208 section */
	const char *fix;     /* the usual one-line fix */
	const char *what;    /* one line for docs and --list-checks */
};

extern const struct lint_check lint_checks[L_COUNT];
const char *lint_severity_name(enum lint_severity s);

/* ---- lint_report.c ---------------------------------------------------- */

struct lint_finding {
	enum lint_id id;
	enum lint_severity severity; /* the catalogue's, or lower for a milder case */
	const char *domain;  /* whose record; NULL for none */
	const char *term;    /* the term as written (NUL-terminated copy), or NULL */
	long offset;         /* byte offset of the term in the record, -1 when none */
	const char *message;
	const char *fix;     /* NULL: the catalogue's */
};

/* What the walk found; counts are the worst case over every branch. */
struct lint_counts {
	unsigned dns_terms;    /* RFC 7208 §4.6.4 DNS-querying terms */
	unsigned void_v4;      /* void lookups for an IPv4 client matching nothing */
	unsigned void_v6;      /* the same for an IPv6 client */
	int permerror_v4;      /* a receiver returns permerror for such a client */
	int permerror_v6;
	int dynamic;           /* some target depends on macros: not followed */
	int loop;              /* an include/redirect loop: evaluation goes round to the limit */
	unsigned records;      /* records fetched and parsed */
};

struct lint_report {
	struct spfkit__arena arena; /* every string of every finding */
	struct lint_finding *items;
	size_t n, cap;
	int err;            /* first failure (SPFKIT_ENOMEM): findings are missing */
	const char *domain; /* the domain linted ("" with --record and no --domain) */
	const char *record; /* the top record's text, or NULL */
	size_t record_len;
	struct lint_counts counts;
};

void lint_report_init(struct lint_report *r);
void lint_report_free(struct lint_report *r);
/* An arena copy of len bytes, NUL-terminated; NULL (and r->err) on failure. */
char *lint_strndup(struct lint_report *r, const char *s, size_t len);
/*
 * Add a finding. term/term_len: the term as written (NULL for none);
 * offset: its byte offset, -1 for none; fix: NULL for the catalogue's.
 */
void lint_add(struct lint_report *r, enum lint_id id, const char *domain, const char *term,
	      size_t term_len, long offset, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
/* The same with the severity given (legacy-syntax has milder cases). */
void lint_add_as(struct lint_report *r, enum lint_severity sev, enum lint_id id, const char *domain,
		 const char *term, size_t term_len, long offset, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));
size_t lint_count(const struct lint_report *r, enum lint_severity s);
/* 0 clean (notices allowed), 1 warnings only, 2 errors. */
int lint_exit_status(const struct lint_report *r);
void lint_print_text(FILE *f, const struct lint_report *r);
/* One JSON object and a newline; 0, or an spfkit_err when it could not be built. */
int lint_print_json(FILE *f, const struct lint_report *r);

/* ---- lint_dns.c ------------------------------------------------------- */

/* One answer, copied into the report's arena; valid until the report is freed. */
struct lint_answer {
	enum spfkit_dns_status status;
	uint32_t ttl;
	const struct spfkit_dns_rr *rrs;
	size_t count;
	const char *detail;
	unsigned asked; /* how many times lint asked; 1 the first time */
};

#define LINT_MAX_QUESTIONS 2000u /* per run: bounds the work of a hostile tree */
#define LINT_PARALLEL 16u        /* questions of one record in flight at once */
#define LINT_TIME_LIMIT_S 60u    /* --time-limit default: the whole run, in seconds */

struct lint_dns {
	struct spfkit_resolver *resolver; /* NULL: no DNS at all (every name is NXDOMAIN) */
	struct lint_report *report;       /* its arena holds the answers */
	struct lint_cached **cache;       /* questions asked, in order (in the arena) */
	size_t n, cap;
	int err;                          /* SPFKIT_EDNS...: the backend failed */
	int64_t deadline_ms;              /* CLOCK_MONOTONIC; 0: none */
	unsigned limit_s;                 /* the time limit, for messages */
	unsigned late;                    /* questions not answered for the time limit */
};

void lint_dns_init(struct lint_dns *d, struct spfkit_resolver *resolver, struct lint_report *r);
void lint_dns_free(struct lint_dns *d);
/* From now, the run has `seconds` (0: no limit): a question not answered
 * by then is TEMPFAIL "no answer within the time limit", and the ones
 * after it are not asked (TEMPFAIL "not asked: ..."); d->late counts
 * both. */
void lint_dns_set_time_limit(struct lint_dns *d, unsigned seconds);
/* --time-limit TEXT (NULL: LINT_TIME_LIMIT_S) into *seconds; -1 after saying why. */
int lint_time_limit_option(const char *cmd, const char *text, unsigned *seconds);
/* 1, after saying on stderr what the time limit left unchecked, when it did. */
int lint_dns_incomplete(const char *cmd, const struct lint_dns *d);
#define LINT_EXIT_INCOMPLETE 75 /* sysexits EX_TEMPFAIL: the time limit cut the run short */

struct lint_question {
	const char *name;
	size_t len;
	uint16_t type;
};

/*
 * Ask the questions not in the cache yet, LINT_PARALLEL at a time, and
 * wait for their answers: a later lint_dns_ask() finds them (counted
 * then, as if asked then). A slow server costs one wait per batch, not
 * one per question. Failures are left for lint_dns_ask() to meet.
 */
void lint_dns_prefetch(struct lint_dns *d, const struct lint_question *q, size_t n);
/*
 * Ask (or find in the cache) type for name; *out points into the
 * cache. 0, SPFKIT_E2BIG past LINT_MAX_QUESTIONS, SPFKIT_ENOMEM, or the
 * resolver's error.
 */
int lint_dns_ask(struct lint_dns *d, const char *name, size_t len, uint16_t type,
		 const struct lint_answer **out);

/* ---- lint_text.c ------------------------------------------------------ */

/*
 * Checks that need only the TXT records at a name: which are SPF, and
 * which nearly are (v=spf10, spf2.0/pra). Returns the number of SPF
 * version 1 records (0, 1, or more), with the first in *rec / *len.
 */
size_t lint_select(struct lint_report *r, const char *domain, const struct lint_answer *txt,
		   const char **rec, size_t *len);
/* Byte-level and token-level checks of one record's text (parse or not). */
void lint_text_checks(struct lint_report *r, const char *domain, const char *text, size_t len);
/* Character-strings as given with --record "..." "...": their sizes and joins. */
void lint_string_checks(struct lint_report *r, const char *domain, const char *joined,
			const char *const *strs, const size_t *lens, size_t n);
/* §3.4 sizes of the TXT answer at a name. */
void lint_size_checks(struct lint_report *r, const char *domain, size_t name_len,
		      const char *text, size_t len, const struct lint_answer *txt);

/* ---- lint_terms.c ----------------------------------------------------- */

/* Checks of one parsed record on its own; `included`: reached by include. */
void lint_term_checks(struct lint_report *r, const char *domain, const struct spfkit_record *rec,
		      int included);
/* Index of the first "all" mechanism, or rec->count when none. */
size_t lint_first_all(const struct spfkit_record *rec);
/* The term's text as written. */
void lint_term_text(const struct spfkit_record *rec, const struct spfkit_term *t,
		    const char **p, size_t *len);

/* ---- lint_walk.c ------------------------------------------------------ */

/*
 * Observing the walk (`spfkit tree`, tree.h): the walker tells each step
 * to an observer, so tree shows exactly what lint counts and there is
 * one walker. Events nest: ENTER, then the node's RECORD, TERM,
 * ADDRESSES, VOID and PROBLEM events and its children's ENTER...LEAVE,
 * then its LEAVE. Pointers are valid during the call only.
 */
enum lint_walk_kind {
	LW_ENTER,     /* a record is looked for: name, how, via */
	LW_RECORD,    /* its text (rec NULL: it did not parse), ttl */
	LW_TERM,      /* a mechanism walked (in order, up to the first all): term */
	LW_ADDRESSES, /* the A and AAAA answers of an a/mx target or MX host: term, a4, a6 */
	LW_VOID,      /* a void lookup counted: family, what, name */
	LW_PROBLEM,   /* the branch stops here: what, error, loop */
	LW_LEAVE,
};

enum lint_how { LINT_HOW_TOP = 0, LINT_HOW_INCLUDE, LINT_HOW_REDIRECT };

struct lint_walk_event {
	enum lint_walk_kind kind;
	const char *name;   /* ENTER: the domain; VOID: the name asked */
	size_t len;
	enum lint_how how;  /* ENTER */
	const char *via;    /* ENTER: the term leading here as written (NULL for the top) */
	size_t via_len;
	int via_qualifier;  /* ENTER: that term's qualifier ('+' for redirect) */
	const struct spfkit_record *rec; /* RECORD (or NULL), TERM */
	const char *text;   /* RECORD */
	size_t text_len;
	uint32_t ttl;       /* RECORD */
	int has_ttl;        /* RECORD: 0 for --record */
	const struct spfkit_term *term;      /* TERM, ADDRESSES */
	const struct lint_answer *a4, *a6;   /* ADDRESSES */
	const char *what;   /* VOID: "A", "MX", "(macro)"...; PROBLEM: one line */
	int family;         /* VOID: 0 IPv4 client, 1 IPv6 client */
	int error;          /* PROBLEM: receivers get permerror, temperror or none */
	int loop;           /* PROBLEM: an include/redirect loop */
	unsigned dns_terms; /* every event: the walk's counters so far */
	unsigned voids[2];
};

typedef void lint_walk_fn(void *arg, const struct lint_walk_event *ev);

struct lint_input {
	lint_walk_fn *observe;   /* NULL: nobody watches */
	void *observe_arg;
	const char *domain;      /* the domain, or NULL with --record and no --domain */
	const char *record;      /* --record text (strings joined), or NULL */
	size_t record_len;
	const char *const *strs; /* --record "..." strings, when given quoted; else NULL */
	const size_t *lens;
	size_t nstrs;
};

/* Lint the domain's record (or the given one) and its whole tree. 0 or an spfkit_err. */
int lint_run(struct lint_dns *dns, const struct lint_input *in);

#endif
