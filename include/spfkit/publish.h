/*
 * The publisher's checks as data: what `spfkit lint` finds in a domain's
 * SPF record and the records it includes or redirects to, and the tree
 * `spfkit tree` shows, from one walk over a resolver the caller gives.
 * The walk is the CLI's (lib/publish): the same questions, counting
 * rules, findings and tree, so a program gets what `spfkit lint --json`
 * and `spfkit tree --json` print, without parsing text (docs/lint.md,
 * docs/tree.md say what each finding and count means).
 *
 *   struct spfkit_lint_options opt;
 *   struct spfkit_lint *l;
 *   spfkit_lint_options_init(&opt);
 *   opt.domain = "example.org"; opt.domain_len = 11;
 *   opt.tree = 1;                                 also build the tree
 *   if (spfkit_lint_run(resolver, &opt, &l) == 0) {
 *       const struct spfkit_lint_summary *s = spfkit_lint_summary(l);
 *       for (i = 0; i < spfkit_lint_count(l); i++)
 *           use(spfkit_lint_finding(l, i));       id, severity, message, fix...
 *       walk(spfkit_lint_tree(l));                 child / next pointers
 *       spfkit_lint_free(l);
 *   }
 *
 * Nothing is evaluated: the counts are the worst case of a client that
 * matches nothing (RFC 7208 §4.6.4), found by the evaluator's own parser.
 *
 * Ownership: spfkit_lint_run() allocates the run (with libc's allocator:
 * the walk has no allocator hook); every pointer read from it (summary,
 * findings, nodes, their strings) stays valid until spfkit_lint_free().
 * The resolver is not owned: it must outlive the call only.
 *
 * Threads: spfkit_lint_run() uses the resolver from the calling thread
 * (one thread at a time, as any resolver) and blocks until the walk ends
 * or its time limit. A finished run is read-only: any number of threads
 * may read it at once; free it once, after the last reader.
 *
 * ABI (spfkit/common.h): spfkit_lint_options is caller-filled, begins
 * with size and may grow; spfkit_lint_summary, spfkit_lint_finding and
 * spfkit_tree_node are library-returned, read through the pointers the
 * library gives, and may grow; spfkit_tree_void, spfkit_tree_record and
 * spfkit_lint_cost are read as arrays and never grow.
 */
#ifndef SPFKIT_PUBLISH_API_H
#define SPFKIT_PUBLISH_API_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <spfkit/common.h>
#include <spfkit/reason.h>
#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_lint;

#define SPFKIT_LINT_TIME_LIMIT_S 60u /* default: the whole walk, in seconds */

/* Fill with spfkit_lint_options_init() first (the ABI rule in common.h). */
struct spfkit_lint_options {
	size_t size;        /* sizeof(struct spfkit_lint_options), as compiled */
	const char *domain; /* the domain whose record is linted (no NUL in it) */
	size_t domain_len;
	const char *record; /* NULL: the domain's TXT record; else this text instead,
			       not yet published (domain may then be NULL: a and mx
			       without a name have nothing to look up) */
	size_t record_len;
	unsigned time_limit_s; /* 0: SPFKIT_LINT_TIME_LIMIT_S. A question not
				  answered in time is a dns-failure finding */
	int tree;              /* 1: also build the tree (spfkit_lint_tree()) */
	/* Instead of record: the record as the DNS character-strings of its
	 * TXT record (zone file "v=spf1 ..." "..."), joined as receivers
	 * join them (RFC 7208 §3.3), so that their sizes and joins are
	 * checked too (string-over-255, split-inside-token). At most
	 * SPFKIT_LINT_MAX_STRINGS strings, SPFKIT_LINT_MAX_TEXT bytes in all. */
	const char *const *strings;
	const size_t *string_lens;
	size_t nstrings;
};

#define SPFKIT_LINT_MAX_STRINGS 256u  /* options.strings taken at most */
#define SPFKIT_LINT_MAX_TEXT 65535u   /* their bytes: a TXT record's whole data */

/* Zero every field (the defaults) and set size (inline: the caller's size). */
static inline void spfkit_lint_options_init(struct spfkit_lint_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->size = sizeof(*opt);
}

enum spfkit_lint_severity {
	SPFKIT_LINT_ERROR = 0, /* receivers return permerror or none, or the record
				  does not do what it says */
	SPFKIT_LINT_WARNING,   /* legal, but risky or wasteful */
	SPFKIT_LINT_NOTICE,    /* worth knowing */
};

/* "error", "warning", "notice"; "unknown" for another value. Never NULL. */
const char *spfkit_lint_severity_name(enum spfkit_lint_severity s);

/*
 * Walk the tree of opt->domain's record (or of opt->record) through
 * `dns`, and check every record in it. dns NULL: no DNS at all (every
 * name is NXDOMAIN; for a given record with no includes). Blocks until
 * the walk ends; a walk over 2000 questions or 10000 findings stops
 * early (summary->stopped), one past the time limit leaves the rest
 * unanswered (summary->unanswered), and both still return 0 with what
 * was found. *out: the run, to free with spfkit_lint_free(); NULL on
 * failure.
 * 0, SPFKIT_EINVAL (opt or out NULL, opt->size not set by
 * spfkit_lint_options_init(), neither a domain nor a record, both a
 * record and strings, a NUL in the domain), SPFKIT_E2BIG (strings over
 * their limits), SPFKIT_ENOMEM, or the resolver's error (SPFKIT_EDNS: a
 * question could not be sent).
 */
SPFKIT_MUSTCHECK int spfkit_lint_run(struct spfkit_resolver *dns,
				     const struct spfkit_lint_options *opt,
				     struct spfkit_lint **out);
/* NULL: no-op. */
void spfkit_lint_free(struct spfkit_lint *l);

/* One SPF record's text, as the answer gave it (array member: never grows). */
struct spfkit_tree_record {
	const char *text;
	size_t len;
};

/* A DNS-querying term of the top record (a redirect= too) and what it
 * costs, in evaluation order (array member: never grows). */
struct spfkit_lint_cost {
	const char *term;       /* as written */
	long offset;            /* its byte offset in the record */
	unsigned cost;          /* DNS terms of the term and its subtree (§4.6.4) */
	unsigned total;         /* the count once this term is walked */
	unsigned after_flatten; /* what it still costs after `spfkit flatten`: 0 when
				   flatten writes its addresses instead */
};

/* What the walk found, over every branch (`spfkit lint --json`'s "lookups"). */
struct spfkit_lint_summary {
	const char *domain;   /* the domain linted (no final dot); NULL: none given */
	const char *record;   /* the top record's text; NULL: none found */
	size_t record_len;
	unsigned dns_terms;   /* DNS-querying terms, worst case (§4.6.4, limit 10) */
	unsigned void_lookups_ipv4; /* void lookups for an IPv4 client (limit 2) */
	unsigned void_lookups_ipv6; /* the same for an IPv6 client */
	int permerror_ipv4;   /* a receiver returns permerror for such a client */
	int permerror_ipv6;
	int dynamic;          /* some target is made by macros: counted, not followed */
	int loop;             /* an include/redirect loop */
	unsigned records;     /* records fetched and parsed */
	size_t errors, warnings, notices; /* findings of each severity */
	int status;           /* `spfkit lint`'s exit status: 0 clean (notices
				 allowed), 1 warnings only, 2 errors (a provider
				 record's warnings and notices left out) */
	int tree_status;      /* with opt->tree, `spfkit tree`'s: 0, or 2 when the
				 tree has an error; else 0 */
	int stopped;          /* the walk stopped early: over 2000 DNS questions
				 or 10000 findings */
	unsigned unanswered;  /* questions the time limit left unanswered (each
				 named by a dns-failure finding); `spfkit lint`
				 exits 75 then */
	/* every SPF record at the domain (the first is record), for
	 * multiple-records; 0 or 1 of them otherwise */
	const struct spfkit_tree_record *spf_records;
	size_t nspf_records;
	int unevaluated;      /* 0; 1 the top record does not parse, 2 the domain has
				 several: permerror for every client */
	unsigned dns_terms_once_fixed; /* unevaluated == 1: the DNS terms of the terms
					  that do parse, their trees included */
	int flatten_checked;  /* over the DNS-term limit: flatten's records were built */
	unsigned dns_terms_after_flatten; /* flatten_checked: the DNS terms they need */
	int flatten_fixes;    /* ...within the limit: `spfkit flatten` fixes it */
	const char *flatten_note; /* over the limit: why flatten cannot fix it; NULL */
	const struct spfkit_lint_cost *costs; /* the top record's DNS-querying terms */
	size_t ncosts;
	/* findings in provider records (finding->provider) of each severity */
	size_t provider_errors, provider_warnings, provider_notices;
};

/* Never NULL for a run spfkit_lint_run() returned. */
const struct spfkit_lint_summary *spfkit_lint_summary(const struct spfkit_lint *l);

/* One finding; strings are NUL-terminated copies, bytes as DNS gave them. */
struct spfkit_lint_finding {
	const char *id;       /* the check's stable id ("lookups-over-10"):
				 never renamed, never reused (docs/lint.md) */
	enum spfkit_lint_severity severity; /* the check's, or milder for a milder case */
	const char *domain;   /* whose record; NULL: none */
	const char *term;     /* the term as written; NULL: none */
	long offset;          /* the term's byte offset in the record; -1: none */
	const char *message;  /* one line for people */
	const char *fix;      /* one line: the usual fix; never NULL */
	const char *section;  /* the RFC 7208 section of the rule ("4.6.4") */
	int provider;         /* in a record at a name outside the linted domain
				 (neither it nor under it): the provider's; its
				 warnings and notices do not count in status */
	/* added in issue 28: for a finding that means permerror or temperror
	 * at receivers, or a record that does not parse, the reason code the
	 * evaluator gives in that case (<spfkit/reason.h>: "dns-terms",
	 * "unknown-mechanism", "dns-servfail"...); SPFKIT_REASON_NONE for
	 * every other finding */
	enum spfkit_reason reason;
};

/* How many findings, in the order the walk found them. */
size_t spfkit_lint_count(const struct spfkit_lint *l);
/* Finding i (0 <= i < spfkit_lint_count()); NULL past the end. */
const struct spfkit_lint_finding *spfkit_lint_finding(const struct spfkit_lint *l, size_t i);

/* ---- the tree ------------------------------------------------------------ */

enum spfkit_tree_how {
	SPFKIT_TREE_TOP = 0,  /* the domain linted */
	SPFKIT_TREE_INCLUDE,  /* reached by include: */
	SPFKIT_TREE_REDIRECT, /* reached by redirect= */
};

/* A void lookup a node counted (array member: never grows). */
struct spfkit_tree_void {
	const char *type; /* what was asked: "A", "AAAA", "MX", "(macro)"... */
	const char *name; /* the name asked */
	int ipv4, ipv6;   /* counted for IPv4 clients, for IPv6 clients */
};

/*
 * One record of the tree. Address counts are decimal text, as an IPv6
 * count needs up to 129 bits ("340282366920938463463374607431768211456"
 * for ::/0). A record reached a second time (repeated) or closing a loop
 * is a node with no children: counted again, not expanded again.
 */
struct spfkit_tree_node {
	const char *domain;      /* NULL: a given record with no domain */
	enum spfkit_tree_how how;
	const char *via;         /* the term leading here as written; NULL at the top */
	int via_qualifier;       /* that term's qualifier: '+', '-', '~', '?' */
	const char *record;      /* the record's text; NULL: none read */
	size_t record_len;
	uint32_t ttl;            /* the TXT answer's TTL, when has_ttl */
	int has_ttl;             /* 0: no answer read (a given record) */
	int parsed;              /* the record parsed: the counts below mean something */
	unsigned lookups_here;   /* DNS-querying terms of this record */
	unsigned lookups_subtree; /* with everything below it */
	unsigned voids_ipv4_here, voids_ipv6_here, voids_ipv4_subtree, voids_ipv6_subtree;
	const struct spfkit_tree_void *voids; /* the void lookups counted here */
	size_t nvoids;
	const char *const *dynamic; /* terms made by macros, as written */
	size_t ndynamic;
	const char *ipv4_here, *ipv6_here;       /* addresses + terms authorise here */
	const char *ipv4_subtree, *ipv6_subtree; /* with the + includes below */
	int plus_all;            /* some + branch ends in +all: every address */
	const char *problem;     /* why the branch stops here; NULL: it does not */
	int error;               /* that is an error (receivers get permerror, temperror
				    or none) */
	int loop;                /* an include/redirect loop */
	int repeated;            /* reached before elsewhere in the tree */
	const struct spfkit_tree_node *child; /* the first child; NULL: none */
	const struct spfkit_tree_node *next;  /* the next sibling; NULL: the last */
	/* a name that publishes several SPF records (receivers return
	 * permerror): the second and further, in the answer's order */
	const struct spfkit_tree_record *other_records;
	size_t nother_records;
};

/* The root of the tree; NULL when the run was made without opt->tree. */
const struct spfkit_tree_node *spfkit_lint_tree(const struct spfkit_lint *l);

#ifdef __cplusplus
}
#endif

#endif
