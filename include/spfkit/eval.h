/*
 * check_host() (RFC 7208 §4) as a sans-I/O state machine.
 *
 *   struct spfkit_eval *ev;
 *   spfkit_eval_new(ctx, &req, &ev);
 *   for (;;) {
 *       int s = spfkit_eval_step(ev, &q);
 *       if (s == SPFKIT_STEP_QUERY)  ...send q, later spfkit_eval_answer(ev, q.id, &answer)
 *       else if (s == SPFKIT_STEP_WAIT) ...wait for an outstanding answer
 *       else break;                  (SPFKIT_STEP_DONE, or a negative error)
 *   }
 *   const struct spfkit_result *res = spfkit_eval_result(ev);
 *   spfkit_eval_free(ev);             (res is gone with ev)
 *
 * The evaluator keeps no clock and touches no socket: the caller gives
 * the time for %{t} and the receiver name for %{r}; the same inputs and
 * answers always give the same result and the same trace.
 *
 * Lifetimes: a context must outlive every evaluation made from it (free
 * the evaluations first, then the context); a result, and every string
 * it points to, lives until its evaluation is freed; a question's name
 * until that question is answered. Nothing else is borrowed: requests,
 * configurations and answers are copied as needed during the call.
 *
 * Out of memory is never an SPF result. spfkit_eval_new(),
 * spfkit_eval_step(), spfkit_eval_answer() and spfkit_check() return
 * SPFKIT_ENOMEM, and the evaluation stays as it was before the call: an
 * answer that could not be kept leaves its question open (hand it in
 * again), and spfkit_eval_step() may be called again. What to tell the
 * SMTP client then is the caller's choice (a temporary failure, as for
 * temperror, is the usual one). A result is always the one RFC 7208
 * gives for the answers handed in.
 */
#ifndef SPFKIT_EVAL_H
#define SPFKIT_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <spfkit/common.h>
#include <spfkit/reason.h>

#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_allocator;
struct spfkit_record;

/* The seven results of §2.6. */
enum spfkit_result_code {
	SPFKIT_RESULT_NONE = 0,
	SPFKIT_RESULT_NEUTRAL,
	SPFKIT_RESULT_PASS,
	SPFKIT_RESULT_FAIL,
	SPFKIT_RESULT_SOFTFAIL,
	SPFKIT_RESULT_TEMPERROR,
	SPFKIT_RESULT_PERMERROR,
};

/* "none", "neutral", "pass", "fail", "softfail", "temperror", "permerror". */
const char *spfkit_result_name(enum spfkit_result_code code);
/* Inverse of spfkit_result_name (case-insensitive); -1 when unknown
 * (name NULL, or len bytes that are no result name, a NUL among them). */
int spfkit_result_from_name(const char *name, size_t len);

/* Which identity is checked (§2.3, §2.4). */
enum spfkit_identity {
	SPFKIT_IDENTITY_MAILFROM = 0,
	SPFKIT_IDENTITY_HELO,
};

/* The processing limits of §4.6.4 and §5; these defaults are the RFC's. */
#define SPFKIT_LIMIT_DNS_TERMS 10u
#define SPFKIT_LIMIT_VOID_LOOKUPS 2u
#define SPFKIT_LIMIT_MX_NAMES 10u
#define SPFKIT_LIMIT_PTR_NAMES 10u

struct spfkit_limits {
	unsigned dns_terms;    /* terms and redirects that query DNS */
	unsigned void_lookups; /* NODATA/NXDOMAIN answers */
	unsigned mx_names;     /* MX names looked up by one "mx" */
	unsigned ptr_names;    /* PTR names validated by one "ptr" or %{p} */
};

/* An IP address; IPv4-mapped IPv6 is turned into IPv4 by spfkit_ip_parse(). */
struct spfkit_ip {
	int family; /* 4 or 6 */
	unsigned char addr[16];
};

/* Parse a textual IPv4 or IPv6 address of len bytes. 0, or SPFKIT_EINVAL
 * (text or out NULL, not an address, or a NUL byte among the len). */
SPFKIT_MUSTCHECK int spfkit_ip_parse(const char *text, size_t len, struct spfkit_ip *out);
/* From a socket address, as accept() or getpeername() gives it: sa
 * points to salen bytes holding a struct sockaddr_in (AF_INET) or
 * sockaddr_in6 (AF_INET6); the port, flow label and scope are ignored.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) becomes IPv4, as with
 * spfkit_ip_parse() (RFC 7208 §5: the client is an IPv4 client).
 * 0, or SPFKIT_EINVAL (sa or out NULL, another family, or salen shorter
 * than its family's structure); *out is untouched on error. Reads sa
 * only; safe from any thread. */
struct sockaddr;
SPFKIT_MUSTCHECK int spfkit_ip_from_sockaddr(const struct sockaddr *sa, size_t salen,
					     struct spfkit_ip *out);
/* Room for the longest text spfkit_ip_format() writes, with its NUL. */
#define SPFKIT_IP_TEXT_MAX 46u
/* Write the address in its RFC 5952 text form, an IPv4-mapped one given
 * as IPv6 with its dotted quad (§5), cut to fit a size below
 * SPFKIT_IP_TEXT_MAX; returns buf. NULL (and buf set to "" when it has
 * room) for ip or buf NULL, or a family other than 4 and 6. */
const char *spfkit_ip_format(const struct spfkit_ip *ip, char *buf, size_t size);
/* Room for the longest name spfkit_ip_reverse_name() writes, with its NUL. */
#define SPFKIT_IP_REVERSE_MAX 74u
/*
 * The name a PTR question for the address asks (RFC 7208 §5.5, RFC 1035
 * §3.5, RFC 3596 §2.5): "4.3.2.1.in-addr.arpa", or 32 lowercase nibbles
 * and "ip6.arpa"; no final dot. Returns its length, 0 (and buf set to ""
 * when it has room) for ip or buf NULL, another family, or a size below
 * the name's length + 1.
 */
size_t spfkit_ip_reverse_name(const struct spfkit_ip *ip, char *buf, size_t size);
/*
 * Is `ip` in the network net/prefix: the same family, and the first
 * `prefix` bits the same (the match of ip4 and ip6, RFC 7208 §5.6)?
 * 1 or 0; 0 too for ip or net NULL, a family other than 4 and 6, or a
 * prefix over 32 (IPv4) or 128 (IPv6). An IPv4 address is not in an
 * IPv6 network: to match ::ffff:0:0/96 networks, pass the mapped form.
 */
int spfkit_ip_in_net(const struct spfkit_ip *ip, const struct spfkit_ip *net, unsigned prefix);
/*
 * Is the domain name[0..len) `parent` or a name below it (the match of
 * ptr, RFC 7208 §5.5)? ASCII case is ignored, and one final dot on
 * either; whole labels only ("xample.com" is not within "ample.com" but
 * "mail.example.com" is within "example.com"). 1 or 0; 0 for a NULL.
 */
int spfkit_domain_within(const char *name, size_t len, const char *parent, size_t plen);

/* ---- tracing: what `spfkit check --trace` prints -------------------- */

enum spfkit_trace_kind {
	SPFKIT_TRACE_QUERY = 0, /* a DNS question: qtype, name */
	SPFKIT_TRACE_ANSWER,    /* its answer: qtype, name, answer */
	SPFKIT_TRACE_CHECK,     /* check_host() entered for domain (depth) */
	SPFKIT_TRACE_RECORD,    /* the record chosen for domain: text */
	SPFKIT_TRACE_TERM,      /* a term tried: text, matched, result */
	SPFKIT_TRACE_COUNT,     /* counters changed: dns_terms, void_lookups */
	SPFKIT_TRACE_RESULT,    /* check_host() for domain returns result (depth) */
	SPFKIT_TRACE_NOTE,      /* anything else worth telling: text */
};

struct spfkit_trace_event {
	enum spfkit_trace_kind kind;
	unsigned depth;          /* include/redirect nesting, 0 at the top */
	const char *domain;      /* the domain being checked */
	const char *name;        /* DNS name (QUERY, ANSWER) */
	uint16_t qtype;
	uint32_t query_id;
	const struct spfkit_dns_answer *answer;
	const char *text;        /* term, record or note text */
	size_t text_len;
	int matched;             /* TERM: 1 matched, 0 not */
	enum spfkit_result_code result;
	unsigned dns_terms;
	unsigned void_lookups;
};

typedef void spfkit_trace_fn(void *arg, const struct spfkit_trace_event *event);

/* ---- context -------------------------------------------------------- */

/* Fill with spfkit_config_init() first (the ABI rule in common.h). */
struct spfkit_config {
	size_t size;                          /* sizeof(struct spfkit_config), as compiled */
	const struct spfkit_allocator *alloc; /* NULL: libc */
	const char *default_explanation;      /* NULL: see SPFKIT_DEFAULT_EXPLANATION */
	const char *receiver;                 /* %{r} and Received-SPF receiver=; NULL: "unknown" */
	struct spfkit_limits limits;          /* zeros take the RFC defaults */
	/*
	 * Lookahead (on unless this is set): when a record or an MX answer
	 * arrives, the evaluation also asks at once for what it will likely
	 * need next (include and redirect targets, a/mx/exists names, MX
	 * hosts), so a caller that sends questions in parallel waits about
	 * one round trip per level of the record tree. Results, explanation
	 * and every limit are exactly those of strict sequential evaluation;
	 * answers to questions strict evaluation never reaches are ignored.
	 * Turn it off for a synchronous in-memory backend, where it can only
	 * add work.
	 */
	int no_lookahead;
	/*
	 * Parsed records kept by the context for all its evaluations (a
	 * record is parsed once while it stays; least recently used ones go
	 * first). 0: 4096. The cache is also bounded by bytes: see
	 * record_cache_bytes.
	 */
	unsigned record_cache_size;
	/*
	 * spfkit_check(): the whole evaluation's time limit in ms; past it
	 * the questions still open are answered "temporary failure", so the
	 * result is temperror (RFC 7208 §4.6.4: "at least 20 seconds").
	 * 0: SPFKIT_TIME_BUDGET_MS. Event-loop callers apply their own.
	 */
	unsigned time_budget_ms;
	/*
	 * The most memory the parsed-record cache (record_cache_size) may
	 * take, in bytes: the record texts, their parsed forms and the
	 * allocator's overhead. A parsed record takes up to about 70 times
	 * its text, so a hostile 64 KiB record can take some 5 MB; least
	 * recently used records go first, records an evaluation is using
	 * stay until it is freed, and a record larger than the whole budget
	 * is evaluated without being kept. 0: 32 MiB.
	 */
	size_t record_cache_bytes;
	/*
	 * 1: no parsed-record cache; each evaluation parses the records it
	 * fetches and frees them with itself (record_cache_size and
	 * record_cache_bytes are not used). For a context made for one
	 * evaluation, where a cache would only cost: spfkit_ctx_new() then
	 * makes one allocation, which also holds the block of the context's
	 * first evaluation (of one at a time), whose arena takes the records.
	 */
	int no_record_cache;
	/*
	 * 1: the record cache also remembers what the answers to the
	 * context's questions held (an SPF record by its cached parse, any
	 * other answer of up to 1 KiB as a copy), each until its TTL has
	 * passed by the requests' `now` (at most SPFKIT_CACHE_MAX_TTL, and
	 * SPFKIT_CACHE_MAX_NEG_TTL for no data and no such name), and later
	 * evaluations of the context take it from there instead of asking
	 * again (a caller's own DNS cache would answer the same until then).
	 * Results, explanations, limits and the counters are what asking
	 * gives (with lookahead, queries may also count questions it filed
	 * that the memo answered at once, where asking would have stopped
	 * before sending them); memo_answers says how many of the questions
	 * were answered so. Temporary failures are not remembered.
	 * After an evaluation, the domain's tree is also compiled from the
	 * memo into an address plan, as far as its result depends on the
	 * client address alone: later clients take one pass over it, with
	 * every result field as evaluation gives it and the questions
	 * counted as strict evaluation asks them (`planned` in the result).
	 * Evaluations with a trace or with `now` 0 neither use nor fill it;
	 * nothing is remembered without the record cache, whose byte budget
	 * and entry count bound it too. Only for a caller whose `now`
	 * follows the clock: a fixed `now` would keep answers past their
	 * TTL.
	 */
	int record_memo;
};

#define SPFKIT_TIME_BUDGET_MS 20000u

/* Used when no record gives a usable "exp" (§6.2); a macro-string.
 * %{c}, not %{i}: §7.3 makes c the readable form of the client address
 * for explanations, so an IPv6 client shows as "2001:db8::1" rather than
 * as 32 dotted nibbles. */
#define SPFKIT_DEFAULT_EXPLANATION \
	"%{o} does not designate %{c} as permitted sender"

/* Zero every field (the defaults) and set size; inline, so the size is
 * the one the caller was compiled with. */
static inline void spfkit_config_init(struct spfkit_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

struct spfkit_ctx;

/* Copies what it needs from cfg (NULL: all defaults). 0, SPFKIT_ENOMEM,
 * SPFKIT_EINVAL (out NULL, cfg->size not set by spfkit_config_init(),
 * or a default explanation that is not a valid macro-string). Threads
 * may share the context: after this call only its record cache and the
 * memory of up to four freed evaluations (some 9 KiB each, kept for the
 * next ones until spfkit_ctx_free()) change, each safely for threads.
 * It must outlive every evaluation made from it. */
SPFKIT_MUSTCHECK int spfkit_ctx_new(const struct spfkit_config *cfg, struct spfkit_ctx **out);
/* After every evaluation of the context was freed. NULL: no-op. */
void spfkit_ctx_free(struct spfkit_ctx *ctx);

/* ---- one evaluation ------------------------------------------------- */

/* Fill with spfkit_request_init() first (the ABI rule in common.h). */
struct spfkit_request {
	size_t size;                   /* sizeof(struct spfkit_request), as compiled */
	struct spfkit_ip ip;           /* the SMTP client */
	const char *sender;            /* MAIL FROM address, may be empty (then postmaster@helo, §2.4) */
	size_t sender_len;
	const char *helo;              /* HELO/EHLO name */
	size_t helo_len;
	enum spfkit_identity identity; /* which one to check */
	int64_t now;                   /* seconds since the epoch, for %{t} */
	spfkit_trace_fn *trace;        /* optional */
	void *trace_arg;
};

/* Zero every field and set size (inline: the caller's size). */
static inline void spfkit_request_init(struct spfkit_request *req)
{
	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
}

struct spfkit_result {
	enum spfkit_result_code code;
	const char *explanation; /* fail only: the expanded exp or default; else NULL */
	const char *mechanism;   /* the term that decided ("-all", "default" ...), or NULL */
	const char *domain;      /* domain whose record decided, or NULL */
	const char *problem;     /* permerror/temperror: why, naming the input; else NULL */
	/* the inputs, as used, for headers */
	const char *identity_domain; /* the <domain> argument of the top check_host() */
	const char *sender;          /* <sender>: MAIL FROM, or postmaster@helo */
	const char *helo;
	const char *client_ip;       /* text form */
	const char *receiver;
	enum spfkit_identity identity;
	/* counters */
	unsigned dns_terms;
	unsigned void_lookups;
	unsigned queries; /* DNS questions asked (memo_answers of them from the record memo) */
	/*
	 * The longest chain of DNS answers this result depended on, each
	 * question needing the answer that named it, as check_host() walks
	 * the include, redirect, mx and ptr tree: the sequential round trips
	 * a resolver needs that asks every question as soon as the walk can
	 * name it (what lookahead aims for). The same with lookahead or
	 * without, even where lookahead asked a name first by a shorter path.
	 */
	unsigned depth;
	/* of queries, those answered from the context's record memo
	 * (spfkit_config.record_memo) without being asked */
	unsigned memo_answers;
	/* 1 when the context's address plan of the domain gave this result
	 * (spfkit_config.record_memo, strict evaluation): one pass over its
	 * tree compiled from the memo, every field as evaluation gives it */
	unsigned planned;
	/*
	 * Internationalized mail (RFC 8616): sender and helo above are as the
	 * request gave them (UTF-8 for SMTPUTF8 mail); the checked domain,
	 * identity_domain, is in A-labels. These are sender and helo with
	 * their domain in A-labels, for a header field that must be ASCII;
	 * NULL when there is no ASCII form (a local part that is not ASCII, a
	 * name that is no valid IDN). For ASCII input, sender and helo.
	 */
	const char *sender_ascii;
	const char *helo_ascii;
	/*
	 * Why (include/spfkit/reason.h), as data: for temperror and
	 * permerror the rule that decided it, the same whatever `problem`
	 * says; SPFKIT_REASON_NONE for every other result.
	 */
	enum spfkit_reason reason;
	/* The domain whose record or question the reason is about (the
	 * included or redirected-to domain where it arose), or NULL. */
	const char *reason_domain;
	/*
	 * The term to blame: reason_term_len bytes of text (a copy, with a
	 * NUL after it; a term of a record that does not parse may hold
	 * any byte), at byte reason_term_offset of reason_domain's record.
	 * NULL (and 0, 0) when no term is: a DNS failure of the record's
	 * own TXT question, two records, a redirect to nothing.
	 */
	const char *reason_term;
	size_t reason_term_len;
	size_t reason_term_offset;
};

enum spfkit_step {
	SPFKIT_STEP_DONE = 0,  /* the result is ready */
	SPFKIT_STEP_QUERY = 1, /* *q holds a new question to send */
	SPFKIT_STEP_WAIT = 2,  /* nothing new to ask; answers are outstanding */
};

struct spfkit_question {
	uint32_t id;      /* give it back to spfkit_eval_answer() */
	uint16_t type;    /* enum spfkit_rrtype */
	const char *name; /* valid until that question is answered */
	size_t name_len;
};

struct spfkit_eval;

/*
 * The longest sender or HELO name an evaluation takes (bytes). Generous
 * on purpose: it is the longest line an MTA we know hands a filter, so
 * no sender a front end receives is refused for its length (a refused
 * one would go unchecked). Nothing depends on it but a copy: the local
 * part reaches the evaluation only through macros, whose expansion
 * §7.3 cuts to 253 octets in one pass over the value; a domain or HELO
 * name over 253 octets is no domain (§4.3: result none). 1.0 took 4096.
 */
#define SPFKIT_IDENTITY_MAX 65536u

/* Copies the request; ctx is kept (it must outlive the evaluation).
 * 0, SPFKIT_ENOMEM, SPFKIT_EINVAL (ctx, req or out NULL, a family other
 * than 4 and 6, a NULL string with a length, a sender or HELO longer
 * than SPFKIT_IDENTITY_MAX bytes or with a NUL among its len bytes). */
SPFKIT_MUSTCHECK int spfkit_eval_new(const struct spfkit_ctx *ctx, const struct spfkit_request *req,
				     struct spfkit_eval **out);
/*
 * Like spfkit_eval_new(), with the SPF record of the checked domain given
 * as text instead of looked up: the top check_host() takes record_len
 * bytes of `record` as the one TXT record DNS returned for the domain
 * (RFC 7208 §4.4 and §4.5 for that level only; §4.3 still applies).
 * Everything else is as if DNS had returned it: the same parser (a
 * record with a syntax error gives permerror, with the same problem
 * text), the same limits (its terms count as a fetched record's do),
 * lookahead on or off; include and redirect targets, and exp=, are
 * looked up as usual, even when they name the checked domain itself.
 * The result's queries and depth count only the questions asked. For
 * local policy and best-guess records (a domain with no record of its
 * own) and for checking a record before it is published.
 * The text is copied. 0, SPFKIT_ENOMEM, SPFKIT_E2BIG (over
 * SPFKIT_RECORD_TEXT_MAX bytes), SPFKIT_EINVAL (the errors of
 * spfkit_eval_new(), record NULL, or text that is not an SPF record:
 * it must start with "v=spf1" followed by a space or its end).
 */
#define SPFKIT_RECORD_TEXT_MAX 65535u /* what one TXT record can hold */
SPFKIT_MUSTCHECK int spfkit_eval_new_record(const struct spfkit_ctx *ctx,
					    const struct spfkit_request *req, const char *record,
					    size_t record_len, struct spfkit_eval **out);
/* Returns an enum spfkit_step value, or a negative error: SPFKIT_ENOMEM
 * (see above; the call may be repeated), SPFKIT_EINVAL (ev or q NULL). */
SPFKIT_MUSTCHECK int spfkit_eval_step(struct spfkit_eval *ev, struct spfkit_question *q);
/* Hand in the answer to question `id`; the answer is copied as needed.
 * 0, SPFKIT_ENOTFOUND (no such outstanding id), SPFKIT_ENOMEM (the
 * answer was not kept; the question stays open), SPFKIT_EINVAL (ev or
 * answer NULL; an OK answer with a count but no records, a record with
 * NULL data and a length, or sizes whose copy would overflow: checked
 * before anything is read, the question stays open). */
SPFKIT_MUSTCHECK int spfkit_eval_answer(struct spfkit_eval *ev, uint32_t id,
				       const struct spfkit_dns_answer *answer);
/*
 * Lookahead (struct spfkit_config) for this evaluation alone, from now
 * on: on when `on` is non-zero. It starts as the context says. Switched
 * on, it asks at once, at the next spfkit_eval_step(), what the records
 * and answers held so far make likely. For callers
 * whose answers are mostly at hand (a warm DNS cache): start with it off
 * and switch it on at the first question that has to wait for the
 * network, so speculation costs nothing while no round trip is saved.
 * Results, explanation, limits and trace are the same either way.
 * 0, or SPFKIT_EINVAL (ev NULL).
 */
int spfkit_eval_set_lookahead(struct spfkit_eval *ev, int on);
/* NULL until spfkit_eval_step() has returned SPFKIT_STEP_DONE (or ev is
 * NULL). Owned by ev: valid until spfkit_eval_free(ev). */
const struct spfkit_result *spfkit_eval_result(const struct spfkit_eval *ev);
void spfkit_eval_free(struct spfkit_eval *ev);

/*
 * Blocking convenience: evaluate `req` with `resolver` (its wait() is
 * used), store the finished evaluation in *out for the caller to read
 * with spfkit_eval_result() and free with spfkit_eval_free().
 * 0, SPFKIT_EINVAL, SPFKIT_ENOMEM (then *out is NULL), or the resolver's
 * error. ctx must outlive *out.
 */
SPFKIT_MUSTCHECK int spfkit_check(const struct spfkit_ctx *ctx, struct spfkit_resolver *resolver,
				  const struct spfkit_request *req, struct spfkit_eval **out);
/* spfkit_check() of spfkit_eval_new_record(): the top record given as
 * text. Its errors, and those of spfkit_eval_new_record(). */
SPFKIT_MUSTCHECK int spfkit_check_record(const struct spfkit_ctx *ctx,
					 struct spfkit_resolver *resolver,
					 const struct spfkit_request *req, const char *record,
					 size_t record_len, struct spfkit_eval **out);

#ifdef __cplusplus
}
#endif

#endif
