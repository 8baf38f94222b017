/*
 * lib/publish: the publisher's tools as a library part (issue 28): what
 * `spfkit lint`, `spfkit tree` and `spfkit flatten` compute, without
 * their printing. A part of libspfkit, compiled hidden; this header is
 * internal (not installed), its public face is public.c's
 * <spfkit/publish.h> (issue 32); cli/ reaches the rest through this
 * header only (tests/build).
 *
 *   array.c           the growing arrays: one doubling rule
 *   lint_catalogue.c  every check: stable id, severity, RFC 7208 section, fix
 *   lint_report.c     findings kept in one arena
 *   lint_dns.c        questions through the public resolver, one at a time, cached
 *   lint_text.c       checks on a record's text: version, bytes, typos, legacy, sizes
 *   lint_terms.c      checks on a parsed record: all, netblocks, modifiers, macros
 *   lint_cover.c      covered-by-include: addresses the top record and an include
 *                     both authorize, from what the walk has already read
 *   lint_top.c        a record beyond its counts: several records, one syntax
 *                     finding, its cost once fixed, the cost of each term
 *   lint_flatten.c    over the limit: would flatten's records fix it
 *   lint_walk.c       the include/redirect tree: worst-case counts, loops, targets;
 *                     also the walker of tree and flatten, which watch it
 *   lint_walk.h       what the walker's pieces below share: its state, a node
 *   lint_observe.c    the walk's steps, told to tree's and flatten's observer
 *   lint_count.c      the walk's questions: void lookups counted, failures reported
 *   lint_lookups.c    the terms that look things up: a, mx and its hosts, exists,
 *                     ptr, exp; a record's questions asked together
 *   lint_parked.c     parked-domain: a domain that receives no mail
 *   lint_published.c  what a domain publishes beside its record: type 99, a
 *                     wildcard, the record's strings, the TTL
 *   tree_build.c      the tree, built from the walk's events
 *   tree_addr.c       address ranges: union and count (IPv6 counts need 129 bits)
 *   flatten_set.c     address sets (tree_addr.c's ranges, kept sorted and
 *                     joined): union, difference, CIDR blocks, their text
 *   flatten_model.c   what the records mean, built by watching the walk:
 *                     per qualifier, the addresses decided
 *   flatten_emit.c    the flattened records: packing into _spfN names under
 *                     the size limits, the BIND zone fragment
 *   flatten_live.c    --check-live: the source now against what is published
 *   flatten_verify.c  a resolver answering the new records first, and the
 *                     evaluation of original and flattened, address by address
 *   flatten_run.c     one flatten run: walk, records, lookups after, proof;
 *                     --check-live's two walks
 *   public.c          the public API, include/spfkit/publish.h: a lint run's
 *                     findings and tree as data (the Python binding's
 *                     Context.lint()/tree()). A field added to lint's or
 *                     tree's JSON is added there and in python/lint.c too:
 *                     tests/python/test_lint_tree.py compares them
 *
 * Records are fetched with spfkit_resolver_submit()/wait() and parsed
 * with spfkit_record_parse(), the evaluator's own parser, so what lint
 * counts is what evaluation counts (tests/lint checks it on the
 * benchmark corpus). Lint never evaluates with this machine's address:
 * it evaluates nothing; sample macro expansions use documentation values.
 *
 * There is one walker, lint's: tree and the flattener watch it (struct
 * lint_input's observe), so the lookups tree shows per node add up to
 * lint's worst case exactly (tests/tree checks it on the benchmark
 * corpus), and the records flatten reads are lint's (docs/flatten.md).
 */
#ifndef SPFKIT_PUBLISH_H
#define SPFKIT_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/spfkit.h>

#include "spfkit_util.h"

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
	L_COVERED_BY_INCLUDE,
	L_MODIFIER_BEFORE_MECHANISM,
	L_PARKED_DOMAIN,
	L_COUNT
};

struct lint_check {
	const char *id;    /* stable: scripts match on it */
	enum lint_severity severity;
	const char *section; /* RFC 7208 section */
	const char *fix;     /* the usual one-line fix */
	const char *what;    /* one line for docs and --list-checks */
};

extern const struct lint_check spfkit__lint_checks[L_COUNT];
const char *spfkit__lint_severity_name(enum lint_severity s);

/* ---- lint_report.c ---------------------------------------------------- */

struct lint_finding {
	enum lint_id id;
	enum lint_severity severity; /* the catalogue's, or lower for a milder case */
	const char *domain;  /* whose record; NULL for none */
	const char *term;    /* the term as written (NUL-terminated copy), or NULL */
	long offset;         /* byte offset of the term in the record, -1 when none */
	const char *message;
	const char *fix;     /* NULL: the catalogue's */
	int provider;        /* in a record at a name outside the linted domain (not it, not
			      * under it): the provider's; its warnings and notices are
			      * left out of the exit status */
	enum spfkit_reason reason; /* why receivers return permerror or temperror, or
				    * why the record does not parse (<spfkit/reason.h>);
				    * SPFKIT_REASON_NONE for other findings */
};

/* A DNS-querying term of the top record (a redirect= too) and its cost. */
struct lint_cost {
	const char *term; /* as written, in the arena */
	long offset;
	unsigned cost;    /* the term and every term of its subtree (§4.6.4) */
	unsigned running; /* the count once this term is walked */
	unsigned kept;    /* what it still costs after `spfkit flatten`: 0 when
			   * flatten writes its addresses instead (no ptr, exists
			   * or macro below it), else cost */
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
	int unevaluated;       /* the top record cannot be evaluated: permerror for every
				* client (1 it does not parse, 2 more than one record) */
	unsigned dns_terms_fixed; /* unevaluated == 1: the DNS terms of the terms that do
				   * parse, their trees included */
	unsigned fixed_typos;     /* ...of which misspellings read as what they meant */
	int flatten_checked;      /* over the limit: flatten's records were built (lint_flatten.c) */
	unsigned after_flatten;   /* flatten_checked: the DNS terms those records need */
	int flatten_fixes;        /* ...within the limit: `spfkit flatten` fixes it */
};

struct lint_report {
	struct spfkit__arena arena; /* every string of every finding */
	struct lint_finding *items;
	size_t n, cap;
	int err;            /* first failure (SPFKIT_ENOMEM): findings are missing */
	const char *domain; /* the domain linted ("" with --record and no --domain) */
	const char *record; /* the top record's text, or NULL */
	size_t record_len;
	const char *const *records; /* every SPF record at the top domain (records[0] is
				     * record), for multiple-records; nrecords 0 or 1 otherwise */
	const size_t *record_lens;
	size_t nrecords;
	struct lint_cost *costs;    /* the top record's DNS terms, in evaluation order */
	size_t ncosts, capcosts;
	const char *flatten_note;   /* over the limit: why flatten cannot fix it, or NULL */
	struct lint_counts counts;
};

/*
 * Room for item n of an array of size-byte items with *cap slots: items
 * itself when there is room, else the array grown (doubled; first slots
 * when empty) with *cap updated; NULL when that fails (items untouched).
 */
void *spfkit__array_grow(void *items, size_t *cap, size_t n, size_t size, size_t first);

void spfkit__lint_report_init(struct lint_report *r);
void spfkit__lint_report_free(struct lint_report *r);
/* An arena copy of len bytes, NUL-terminated; NULL (and r->err) on failure. */
char *spfkit__lint_strndup(struct lint_report *r, const char *s, size_t len);
/*
 * Add a finding. term/term_len: the term as written (NULL for none);
 * offset: its byte offset, -1 for none; fix: NULL for the catalogue's.
 * Its reason is the check's (spfkit__lint_reason_of); the finding is
 * returned, valid until the next one is added, for a caller that knows
 * a more precise reason; NULL when it could not be added (r->err).
 */
struct lint_finding *spfkit__lint_add(struct lint_report *r, enum lint_id id, const char *domain,
				      const char *term, size_t term_len, long offset,
				      const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
/* The same with the severity given (legacy-syntax has milder cases). */
struct lint_finding *spfkit__lint_add_as(struct lint_report *r, enum lint_severity sev,
					 enum lint_id id, const char *domain, const char *term,
					 size_t term_len, long offset, const char *fix,
					 const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));
/*
 * The reason code of a check whose finding means permerror (the
 * RFC 7208 limits, several records, an include or redirect with no
 * record, a loop, which runs into the limit of §4.6.4): the code the
 * evaluator gives in the same case. SPFKIT_REASON_NONE for the others;
 * syntax and dns-failure findings get theirs where they are made (the
 * parse error's, the DNS answer's).
 */
enum spfkit_reason spfkit__lint_reason_of(enum lint_id id);
/* How many findings of severity s the report holds (lint_count.c counts
 * the walk's lookups, not findings). */
size_t spfkit__lint_tally(const struct lint_report *r, enum lint_severity s);
/* The same, of the findings in provider records only. */
size_t spfkit__lint_tally_provider(const struct lint_report *r, enum lint_severity s);
/* Drop finding i (the later ones move up). */
void spfkit__lint_remove(struct lint_report *r, size_t i);
/* 0 clean (notices allowed), 1 warnings only, 2 errors; a provider
 * record's warnings and notices do not count, its errors do (they
 * make receivers fail the domain's mail whoever controls the record). */
int spfkit__lint_exit_status(const struct lint_report *r);
/* The finding's fix: its own, or the catalogue's. */
const char *spfkit__lint_finding_fix(const struct lint_finding *f);

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

void spfkit__lint_dns_init(struct lint_dns *d, struct spfkit_resolver *resolver,
			   struct lint_report *r);
void spfkit__lint_dns_free(struct lint_dns *d);
/* From now, the run has `seconds` (0: no limit): a question not answered
 * by then is TEMPFAIL "no answer within the time limit", and the ones
 * after it are not asked (TEMPFAIL "not asked: ..."); d->late counts
 * both. */
void spfkit__lint_dns_set_time_limit(struct lint_dns *d, unsigned seconds);
/* Is a TEMPFAIL answer one the time limit made (not the resolver's)? */
int spfkit__lint_dns_late(const struct lint_answer *a);
#define LINT_EXIT_INCOMPLETE 75 /* sysexits EX_TEMPFAIL: the time limit cut the run short */

struct lint_question {
	const char *name;
	size_t len;
	uint16_t type;
};

/*
 * Ask the questions not in the cache yet, LINT_PARALLEL at a time, and
 * wait for their answers: a later spfkit__lint_dns_ask() finds them (counted
 * then, as if asked then). A slow server costs one wait per batch, not
 * one per question. Failures are left for spfkit__lint_dns_ask() to meet.
 */
void spfkit__lint_dns_prefetch(struct lint_dns *d, const struct lint_question *q, size_t n);
/*
 * Ask (or find in the cache) type for name; *out points into the
 * cache. 0, SPFKIT_E2BIG past LINT_MAX_QUESTIONS, SPFKIT_ENOMEM, or the
 * resolver's error.
 */
int spfkit__lint_dns_ask(struct lint_dns *d, const char *name, size_t len, uint16_t type,
			 const struct lint_answer **out);

/* ---- lint_text.c ------------------------------------------------------ */

/*
 * Checks that need only the TXT records at a name: which are SPF, and
 * which nearly are (v=spf10, spf2.0/pra). Returns the number of SPF
 * version 1 records (0, 1, or more), with the first in *rec / *len.
 */
size_t spfkit__lint_select(struct lint_report *r, const char *domain, const struct lint_answer *txt,
			   const char **rec, size_t *len);
/* The term a recognised misspelling meant ("inlcude:x" is "include:x"),
 * into out; 1 when there is one meaning, else 0. */
int spfkit__lint_typo_meant(const char *tok, size_t len, struct spfkit__buf *out);
/* Byte-level and token-level checks of one record's text (parse or not). */
void spfkit__lint_text_checks(struct lint_report *r, const char *domain, const char *text,
			      size_t len);
/* Character-strings as given with --record "..." "...": their sizes and joins. */
void spfkit__lint_string_checks(struct lint_report *r, const char *domain, const char *joined,
				const char *const *strs, const size_t *lens, size_t n);
/* RFC 1035 §2.3.4, §4.2.1: a UDP answer without EDNS0 holds at most this. */
#define LINT_UDP_ANSWER_MAX 512u
/* Octets of one TXT record's data: len bytes in the fewest 255-octet strings, each with its length octet. */
size_t spfkit__lint_txt_wire(size_t len);
/*
 * The DNS answer to a TXT question at a name of name_len octets (no
 * final dot) holding rrs records whose data take data octets: header,
 * question, and each record with its owner compressed to a pointer
 * (RFC 1035 §4.1, §4.1.4). What answer-over-512 compares with 512.
 */
size_t spfkit__lint_txt_answer_octets(size_t name_len, size_t rrs, size_t data);
/* §3.4 sizes of the TXT answer at a name. */
void spfkit__lint_size_checks(struct lint_report *r, const char *domain, size_t name_len,
			      const char *text, size_t len, const struct lint_answer *txt);

/* ---- lint_terms.c ----------------------------------------------------- */

/* Checks of one parsed record on its own; `included`: reached by include. */
void spfkit__lint_term_checks(struct lint_report *r, const char *domain,
			      const struct spfkit_record *rec, int included);
/* Index of the first "all" mechanism, or rec->count when none. */
size_t spfkit__lint_first_all(const struct spfkit_record *rec);
/* The term's text as written. */
void spfkit__lint_term_text(const struct spfkit_record *rec, const struct spfkit_term *t,
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
	int flatten_check;       /* over the limit, find out whether flatten fixes it
				  * (lint_flatten.c; `spfkit lint` sets it) */
	int counting_only;       /* a run for its counts alone (what a record that does not
				  * parse would cost once fixed): no such count of its
				  * own, no parked-domain questions */
};

/* Lint the domain's record (or the given one) and its whole tree. 0 or an spfkit_err. */
int spfkit__lint_run(struct lint_dns *dns, const struct lint_input *in);

/* ---- lint_top.c ---------------------------------------------------------- */

#define LINT_TEXT_MAX 400u /* spfkit__lint_cost_text()'s text, with its NUL */

/* The syntax finding of a record that does not parse; the typo findings
 * made since finding `first` on the refused term are folded into it. */
void spfkit__lint_syntax_finding(struct lint_report *r, const char *domain, const char *text,
				 size_t len, const struct spfkit_parse_error *pe, int rc, size_t first);
/* Into dns->report's counts: what the terms of text that parse cost (a
 * counting-only run of their own); domain may be NULL or "". */
void spfkit__lint_fixed_count(struct lint_dns *dns, const char *domain, const char *text,
			      size_t len);
/* The multiple-records finding; top: the domain linted (its records go into the report). */
void spfkit__lint_multiple_records(struct lint_report *r, const char *domain, int top,
				   const struct lint_answer *txt, size_t count);
/* "; the 11th is reached in ...; cost by term: ..." from r->costs, into b (size bytes). */
void spfkit__lint_cost_text(const struct lint_report *r, char *b, size_t size);

/* ---- lint_flatten.c ----------------------------------------------------- */

/* After a walk over the limit: would `spfkit flatten` fix it? Fills the
 * report's counts.flatten_* (or flatten_note), from the walk's answers. */
void spfkit__lint_flatten_check(struct lint_dns *dns, const struct lint_input *in);

/* ---- tree_addr.c ---------------------------------------------------------- */

/* One range of addresses; IPv4 in the low 32 bits of lo (hi 0). */
struct tree_range {
	int v6;
	uint64_t first_hi, first_lo, last_hi, last_lo;
};

struct tree_ranges {
	struct tree_range *items;
	size_t n, cap;
};

/* A count of addresses: up to 2^128 (IPv6 ::/0), so 129 bits. */
struct tree_count {
	uint64_t hi, lo;
	int all; /* exactly 2^128 */
};

/* Add addr/prefix (4 or 16 bytes of addr); 0 or SPFKIT_ENOMEM. */
int spfkit__tree_ranges_add(struct tree_ranges *r, int v6, const unsigned char *addr,
			    unsigned prefix);
/* Append every range of src; 0 or SPFKIT_ENOMEM. */
int spfkit__tree_ranges_merge_from(struct tree_ranges *dst, const struct tree_ranges *src);
/* Sort and join overlapping ranges; then count each family. */
void spfkit__tree_ranges_union(struct tree_ranges *r, struct tree_count *v4, struct tree_count *v6);
void spfkit__tree_ranges_free(struct tree_ranges *r);
/* Decimal text of c into buf (at least 48 bytes). */
const char *spfkit__tree_count_str(const struct tree_count *c, char *buf, size_t size);
/* n when c is exactly 2^n, else -1. */
int spfkit__tree_count_log2(const struct tree_count *c);
/* For people, never a 26-digit number: "2^80" for a power of two from
 * 2^16 up, the decimal text below 2^20, a sum of at most three powers of
 * two ("2^80 + 2^64", "2^80 + 1"), else the size to a tenth of a power of
 * two ("~2^96.6"). buf: at least 48 bytes. */
const char *spfkit__tree_count_text(const struct tree_count *c, char *buf, size_t size);

/* ---- lint_cover.c ----------------------------------------------------- */

/* What one term authorizes: a top-level include's tree, or a top-level
 * ip4/ip6/a/mx term (issue 31, covered-by-include). */
struct lint_cover_set {
	const char *term; /* as written, in the report's arena */
	size_t len;
	long offset;
	struct tree_ranges set; /* appended to; made normal (flatten_set.c) by the report */
	struct tree_ranges excl; /* an include's: ranges of its tree's terms that do not
				  * pass; a term touching them is not called covered */
	int unknown;            /* some of its addresses are not known (a failed question) */
	int lookup;             /* an a or mx term: it costs a DNS-querying term */
};

struct lint_cover {
	struct lint_cover_set *incs, *terms;
	size_t ninc, capinc, nterms, capterms;
	long cur; /* the include being walked (an index of incs), or -1 */
	struct lint_cover_set *top_term; /* the top record's pass a/mx term being walked */
	unsigned not_pass; /* > 0: inside an include whose pass is not the top's pass */
	size_t ranges;  /* added to every set so far (LINT_COVER_MAX_RANGES) */
	int overflow;   /* past that: a hostile tree; no covered-by-include findings */
	int err;  /* SPFKIT_ENOMEM */
};

#define LINT_COVER_MAX_RANGES 100000u /* bounds the memory and work of a hostile tree */

void spfkit__lint_cover_free(struct lint_cover *c); /* also makes an empty one (cur -1) */
/* A pass include of the top record is walked from now: c->cur. */
void spfkit__lint_cover_begin_include(struct lint_cover *c, struct lint_report *r,
				      const char *term, size_t len, long offset);
void spfkit__lint_cover_end_include(struct lint_cover *c);
/* A pass ip4/ip6/a/mx term of the top record: its index in c->terms, or -1. */
long spfkit__lint_cover_term(struct lint_cover *c, struct lint_report *r, const char *term,
			     size_t len, long offset);
/* addr/prefix, or every address of an A (v6 0) or AAAA answer with the
 * prefix, into s's set (excl: its excl), s NULL: none. */
void spfkit__lint_cover_add(struct lint_cover *c, struct lint_cover_set *s, int excl, int v6,
			    const unsigned char *addr, unsigned prefix);
void spfkit__lint_cover_add_answer(struct lint_cover *c, struct lint_cover_set *s, int excl,
				   const struct lint_answer *a, int v6, unsigned prefix);
/* The set a term's addresses go to, walked at depth (1: the top record); *excl:
 * into its excl. NULL: none. */
struct lint_cover_set *spfkit__lint_cover_into(struct lint_cover *c, size_t depth,
					       const struct spfkit_term *t, int *excl);
/* The A and AAAA answers of an a term or an MX host, into the set the term's go to. */
void spfkit__lint_cover_answers(struct lint_cover *c, size_t depth, const struct spfkit_term *t,
				const struct lint_answer *a4, const struct lint_answer *a6);
/* After the walk: a covered-by-include finding for each term an include's set holds whole. */
void spfkit__lint_cover_report(struct lint_cover *c, struct lint_report *r, const char *domain);

/* ---- tree_build.c --------------------------------------------------------- */

struct tree_void {
	const char *what, *name; /* "A", "MX", "(macro)"...; the name asked */
	unsigned families;       /* bit 0: IPv4 clients, bit 1: IPv6 clients */
	struct tree_void *next;
};

/* One record's text (in the report's arena). */
struct tree_text {
	const char *text;
	size_t len;
};

struct tree_node {
	unsigned id; /* dot node name n<id> */
	const char *domain;
	enum lint_how how;
	const char *via; /* the term leading here as written, or NULL */
	int via_qualifier;
	const char *record; /* NULL: none read */
	size_t record_len;
	/* a name with several SPF records (receivers return permerror): the
	 * second and further, in the answer's order; the owner merges them all */
	struct tree_text *more;
	size_t nmore;
	uint32_t ttl;
	int has_ttl;
	int parsed;          /* the record parsed: the counts below mean something */
	const char *problem; /* the branch stops: why */
	int error, loop;
	int repeated;        /* reached before elsewhere: not expanded again */
	int plus_all;        /* +all walked: every address passes */
	unsigned terms_here, terms_tree;  /* DNS terms (§4.6.4) */
	unsigned voids_here[2], voids_tree[2];
	struct tree_void *voids, *voids_last;
	const char **dynamic; /* terms made by macros, as written */
	size_t ndynamic;
	struct tree_ranges own, sub; /* ranges of + terms; sub: with the subtree's */
	struct tree_count v4_here, v6_here, v4_tree, v6_tree;
	int all_tree;        /* some + branch ends in +all */
	struct tree_node *parent, *child, *last_child, *next;
	/* counters at ENTER */
	unsigned enter_terms, enter_voids[2];
};

struct tree {
	struct lint_report *r; /* its arena holds every node and string */
	struct tree_node *root, *cur;
	unsigned nodes;
	int errors; /* nodes with an error */
	int err;    /* SPFKIT_ENOMEM: the tree is incomplete */
};

void spfkit__tree_init(struct tree *t, struct lint_report *r);
void spfkit__tree_free(struct tree *t);
/* The lint_walk_fn; arg is a struct tree. */
void spfkit__tree_observe(void *arg, const struct lint_walk_event *ev);
/* 0 no error, 2 the tree has errors (documented in --help and docs/tree.md). */
int spfkit__tree_exit_status(const struct tree *t);
/*
 * After the walk: each node whose name publishes several SPF records gets
 * the second and further in its `more`, from the walk's answers in d (no
 * new question). 0 or SPFKIT_ENOMEM.
 */
int spfkit__tree_add_records(struct tree *t, struct lint_dns *d);

/* Where a node stands against the limits of RFC 7208 §4.6.4, counted in
 * the walk's order (the order of evaluation for a client matching nothing). */
enum tree_limit {
	TREE_UNDER = 0, /* the count stays within the limit up to this node's end */
	TREE_CROSSES,   /* within it at the node's start, over it at its end: the
			 * path to the term that goes over */
	TREE_BEYOND,    /* over it before the node starts: receivers never get here */
};

struct tree_marks {
	enum tree_limit lookups; /* DNS-querying terms, limit 10 */
	enum tree_limit voids;   /* void lookups, limit 2, the worse family */
	unsigned terms_before, terms_after; /* the walk's count at the node's start and end */
	unsigned voids_after[2];            /* per family, at the node's end */
	int void_heavy; /* the subtree alone has as many voids as the limit allows */
};

void spfkit__tree_marks(const struct tree_node *n, struct tree_marks *m);

/* The four results a record's terms can give (RFC 7208 §4.6.2, §2.6). */
enum flat_q { FQ_PASS = 0, FQ_FAIL, FQ_SOFTFAIL, FQ_NEUTRAL, FQ_COUNT };

/* '+', '-', '~', '?' for a qualifier; the qualifier for such a byte (FQ_PASS by default). */
char spfkit__flat_q_char(enum flat_q q);
enum flat_q spfkit__flat_q_of(int qualifier);

/* ---- flatten_set.c ------------------------------------------------------ */

/*
 * A set of addresses is a struct tree_ranges kept normal: sorted, both
 * families (IPv4 first), ranges neither overlapping nor touching. Every
 * function here takes and leaves sets normal; 0 or SPFKIT_ENOMEM.
 */
int spfkit__flat_set_normalize(struct tree_ranges *s);
int spfkit__flat_set_add_prefix(struct tree_ranges *s, int v6, const unsigned char *addr,
				unsigned prefix);
int spfkit__flat_set_union(struct tree_ranges *dst, const struct tree_ranges *src);
/* out = a minus b (out is emptied first; it may not be a or b). */
int spfkit__flat_set_minus(struct tree_ranges *out, const struct tree_ranges *a,
			   const struct tree_ranges *b);
/* Every address of both families. */
int spfkit__flat_set_universe(struct tree_ranges *s);
int spfkit__flat_set_equal(const struct tree_ranges *a, const struct tree_ranges *b);
int spfkit__flat_set_copy(struct tree_ranges *dst, const struct tree_ranges *src);

/* One CIDR block. */
struct flat_cidr {
	int v6;
	unsigned char addr[16];
	unsigned prefix;
};

struct flat_cidrs {
	struct flat_cidr *items;
	size_t n, cap;
};

/* The fewest aligned blocks covering s exactly, in address order (IPv4 first). */
int spfkit__flat_set_cidrs(const struct tree_ranges *s, struct flat_cidrs *out);
void spfkit__flat_cidrs_free(struct flat_cidrs *c);
/* "ip4:192.0.2.0/24", "ip6:2001:db8::/32"; /32 and /128 left out. */
const char *spfkit__flat_cidr_term(const struct flat_cidr *c, char *buf, size_t size);
/* The address at the start (or end) of a range, as an evaluator's spfkit_ip. */
void spfkit__flat_range_ip(const struct tree_range *r, int last, struct spfkit_ip *out);

/* ---- flatten_model.c ---------------------------------------------------- */

#define FLAT_MAX_DEPTH 24u /* deeper than lint's walk goes (16) */

/* One part of the flattened root, in order. */
struct flat_seg {
	int opaque;       /* 1: a term kept as written */
	const char *text; /* opaque: the term (in the report's arena) */
	size_t len;
	struct tree_ranges q[FQ_COUNT]; /* a run: addresses each qualifier decides here */
};

struct flat_frame;

struct flat_model {
	struct lint_report *r; /* its arena holds every string */
	const char *const *keep; /* --keep include:NAME targets */
	size_t nkeep;
	struct flat_frame *stack; /* the records being walked, the root first */
	size_t depth;
	unsigned skip;            /* > 0: inside a subtree kept as an include */
	struct flat_seg *segs;
	size_t nsegs, capsegs;
	struct tree_ranges decided; /* the root's: every address some run decides */
	struct tree_ranges blocks;  /* every range a term named, for the boundary addresses */
	const char *redirect;       /* the root's redirect= kept as written, or NULL */
	const char *exp;            /* the root's exp= as written, or NULL */
	int complete;   /* the runs decide every address (an all, an inlined redirect) */
	int root_all;   /* the root's record ends in an all */
	int root_seen;  /* the root's record was read and parsed */
	uint64_t hash;  /* FNV-1a 64 of every record and address answer read */
	uint32_t min_ttl;
	int has_ttl;
	unsigned records; /* records read */
	const char **reads; /* every name the walk entered (in the report's arena) */
	size_t nreads, capreads;
	int err;          /* SPFKIT_ENOMEM */
	char problem[512]; /* why the source cannot be flattened; "" when it can */
};

/* 0 or SPFKIT_ENOMEM. keep: --keep targets (may be NULL when nkeep is 0). */
int spfkit__flat_model_init(struct flat_model *m, struct lint_report *r, const char *const *keep,
			    size_t nkeep);
void spfkit__flat_model_free(struct flat_model *m);
/* The lint_walk_fn; arg is a struct flat_model. */
void spfkit__flat_model_observe(void *arg, const struct lint_walk_event *ev);
/* 1 when the walk entered name (any case, no final dot): a record the source reads. */
int spfkit__flat_model_reads(const struct flat_model *m, const char *name, size_t len);
/*
 * After the walk: the lint findings that make flattening impossible
 * (temperror, a permerror in the source) into m->problem. 1 when the
 * model can be used.
 */
int spfkit__flat_model_usable(struct flat_model *m);

/* ---- flatten_emit.c ----------------------------------------------------- */

struct flat_record {
	const char *name; /* without the final dot */
	char *text;       /* the record's text, joined */
	size_t len;
	size_t strings;   /* character-strings it is split into */
	size_t answer;    /* RFC 7208 §3.4 size at that name: name, this and other TXT */
	size_t wire;      /* the whole DNS answer at that name, as lint's answer-over-512 sizes it */
};

struct flat_output {
	struct flat_record *recs; /* recs[0] is the root */
	size_t n, cap;
	size_t blocks4, blocks6;  /* CIDR blocks written */
	unsigned lookups_after;   /* DNS terms of the flattened root (lint's worst case) */
	struct flat_cidrs all_blocks; /* every block written, for the boundary addresses */
	char **left_alone;        /* _spfN names the source reads, so not written */
	size_t nleft;
};

/* The TXT records at a name other than the SPF record flatten writes there. */
struct flat_others {
	size_t octets; /* their data: each string with its length octet */
	size_t rrs;
};

struct flat_emit_opts {
	const char *domain;
	int chain;
	struct lint_dns *dns; /* asked for the other TXT records at a name; NULL: none */
};

/* Build the records; 0, SPFKIT_ENOMEM, or SPFKIT_E2BIG with a line in err. */
int spfkit__flat_emit(const struct flat_model *m, const struct flat_emit_opts *o,
		      struct flat_output *out, char *err, size_t errlen);
void spfkit__flat_output_free(struct flat_output *out);
/* *q: the qualifier of the last run's set the root writes as its final
 * all (the set with the most blocks), or -1 when none is; 0 or ENOMEM. */
int spfkit__flat_final_all(const struct flat_model *m, int *q);
/* One record as zone text: NAME. TTL IN TXT "..." "..." (escaped). */
void spfkit__flat_zone_line(struct spfkit__buf *b, const struct flat_record *rec, uint32_t ttl);

/* ---- flatten_live.c ------------------------------------------------------ */

/* --check-live: what the source means now (src) against what is published (pub). */
struct flat_live {
	struct spfkit__buf text; /* a line each: "  + BLOCK (result)", "  WHAT: source X, published Y" */
	struct spfkit__buf json_added, json_removed; /* the blocks as JSON array members */
	size_t added, removed, other;                /* other: all, kept terms, redirect, exp */
};

void spfkit__flat_live_init(struct flat_live *d);
void spfkit__flat_live_free(struct flat_live *d);
/* Fills d; 0, or SPFKIT_ENOMEM. */
int spfkit__flat_live_compare(const struct flat_model *src, const struct flat_model *pub,
			      struct flat_live *d);

/* ---- flatten_verify.c --------------------------------------------------- */

struct flat_verify {
	const char *domain;
	const char *source;       /* the original record's text */
	size_t source_len;
	const struct flat_output *out;
	const struct flat_model *m;
	struct lint_dns *dns;     /* the walk's answers, and the resolver behind them */
	unsigned long seed;
	unsigned samples;
	int64_t now;
	/* results */
	size_t addresses;          /* evaluated */
	size_t differences;
	size_t permerror_removed;  /* the original gives permerror at the RFC limits, flattened does not */
	struct spfkit__buf report; /* the differences, one line each (the first 20) */
};

/* Boundary and sample addresses one run checks at most (bounds a hostile tree's work). */
#define FLAT_MAX_CHECKED 1000000u

/* Evaluate original and flattened for every address; 0, SPFKIT_E2BIG (over
 * FLAT_MAX_CHECKED addresses), or another spfkit_err. */
int spfkit__flat_verify_run(struct flat_verify *v);
/* The resolver of the flattened world (answers of dns, the new records first). */
int spfkit__flat_overlay_new(struct lint_dns *dns, const struct flat_output *out,
			     const char *domain, struct spfkit_resolver **res);
/* out->lookups_after: the DNS terms of domain's tree with the new records
 * published, by lint's walk over that overlay; 0 or a spfkit_err. */
int spfkit__flat_lookups_after(struct lint_dns *dns, const char *domain, struct flat_output *out);

/* ---- flatten_run.c ------------------------------------------------------ */

/* What one run is asked: `spfkit flatten`'s options, parsed. */
struct flat_run_opts {
	const char *domain;
	const char *source;       /* the record to flatten is read there, or NULL */
	const char *const *keep;  /* terms kept as written (--keep) */
	size_t nkeep;
	unsigned limit_s;         /* the walk's time limit (lint_dns), 0: none */
	int chain;                /* --chain: the records chained, not all under the root */
	unsigned long seed;       /* the verifier's sample addresses */
	unsigned samples;
	int has_ttl;              /* ttl given, else the source's shortest */
	uint32_t ttl;
	int64_t now;              /* for the evaluations of the proof (%{t}) */
};

/* What stopped a run: "refused", "difference" or "error", and why, naming
 * the domain. */
struct flat_problem {
	const char *kind;
	char text[600];
};

/* A walk of the source (or what is published) into a model. */
struct flat_walk {
	struct lint_report r;
	struct lint_dns dns;
	struct flat_model m;
	const char *text; /* the record flattened (in r's arena or the answer cache) */
	size_t len;
};

/* The new records and their proof. */
struct flat_result {
	struct flat_output out;
	struct flat_verify v;     /* v.report: the differences, when there are */
	uint32_t ttl;             /* of the records written */
};

void spfkit__flat_run_problem(struct flat_problem *why, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Walk o->domain (use_source: from o->source's record, else its own) into
 * w->m: 0, or -1 with why. w is freed with spfkit__flat_run_walk_free()
 * either way. */
int spfkit__flat_run_walk(struct flat_walk *w, const struct flat_run_opts *o,
			  struct spfkit_resolver *res, int use_source, struct flat_problem *why);
/* After a walk into w->m for domain (rc: the walk's own return): 0 when
 * it can be flattened (w->text is then the record), else -1 with why:
 * the time limit reached, too many questions, an error, or the model's
 * refusal. spfkit__flat_run_walk() ends with it; tree --html, whose walk
 * is the tree's, asks it too. */
int spfkit__flat_run_judge(struct flat_walk *w, const char *domain, int rc,
			   struct flat_problem *why);
void spfkit__flat_run_walk_free(struct flat_walk *w);
/* The records of the walk w, their lookups after and the proof: 0, or -1
 * with why (kind "difference": res->v.report lists them). res (zeroed
 * before) is freed with spfkit__flat_run_result_free() either way. */
int spfkit__flat_run_records(struct flat_walk *w, const struct flat_run_opts *o,
			     struct flat_result *res, struct flat_problem *why);
void spfkit__flat_run_result_free(struct flat_result *res);
/* --check-live: the source's addresses now against what is published, into
 * d (spfkit__flat_live_init() before): 0, or -1 with why. */
int spfkit__flat_run_live(const struct flat_run_opts *o, struct spfkit_resolver *res,
			  struct flat_live *d, struct flat_problem *why);

#endif
