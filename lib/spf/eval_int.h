/*
 * Inside the check_host() state machine. Internal API shared by eval.c
 * (frames and the public calls), query.c (the question table), mech.c
 * (mechanisms), explain.c (§6.2) and limits.c (§4.6.4 counters).
 *
 * How it works: each include/redirect level is a frame. A term is
 * evaluated by straight-line code that asks need() for each answer it
 * uses; when an answer is missing, need() files the question and the
 * term returns STEP_PENDING. When the answer arrives the same term runs
 * again from its start and finds the earlier answers in the table.
 * Counting (void lookups) happens once per use, in the order strict
 * sequential evaluation would use the answers: a use is counted only
 * the first time the replay reaches it (frame->uses vs frame->counted).
 */
#ifndef SPFKIT_EVAL_INT_H
#define SPFKIT_EVAL_INT_H

#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include <spfkit/eval.h>
#include <spfkit/record.h>

#include "core.h"
#include "ctx.h"
#include "macro.h"
#include "reason.h"

/* Lookahead files at most this many questions of its own per evaluation. */
#define EVAL_MAX_SPECULATIVE 64

/* include/redirect nesting; the 10-term limit of §4.6.4 stops far before */
#define EVAL_MAX_DEPTH 16
/* Slots of the replay memo (struct spfkit_eval), a power of two. */
#define EVAL_NEED_MEMO 16
_Static_assert(EVAL_NEED_MEMO <= 32, "need_valid holds a bit per slot");
/* questions of one evaluation; the RFC limits keep a valid one near 150 */
#define EVAL_MAX_QUERIES 512
/* questions and arena bytes that need no allocation of their own; the
 * arena also holds the parsed records of a context without a record
 * cache (some 3 KiB each, a few per evaluation) */
#define EVAL_FIRST_QUERIES 32
#define EVAL_FIRST_CHUNK 16384

/* memory of one evaluation (answers, names, records) */
#define EVAL_MAX_MEMORY (32u << 20)

enum query_state { Q_NEW = 0, Q_SENT, Q_DONE };

/* What a question is for, so lookahead knows what its answer leads to. */
#define QF_RECORD 0x01u /* TXT of a domain whose SPF record is wanted */
#define QF_MX 0x02u     /* MX of an "mx" target: its hosts are next */
#define QF_STRICT 0x04u /* strict evaluation asked it (need()), not only lookahead */

/*
 * Parsed records lookahead may hold before strict evaluation reaches
 * them. A record parses to up to some 55 times its text, so
 * ten includes of 64 KiB records would otherwise hold 36 MB in one
 * evaluation where strict holds one record. Past the budget a fetched
 * record is kept as text and parsed when strict evaluation needs it.
 */
#define EVAL_SPEC_RECORD_BYTES ((size_t)4 << 20)
/*
 * Parsed records strict evaluation keeps after their frame closes, while
 * all it holds stays within this: giving one back costs a copy of its
 * text now and a parse if the domain comes up again, which only pays for
 * records whose parsed form is large (a 64 KiB record: some 3.5 MB).
 */
#define EVAL_KEEP_RECORD_BYTES ((size_t)1 << 20)
/* What a record of `len` bytes may cost parsed, at most (text, terms,
 * compact terms and blocks: some 110 bytes a term of 2 bytes or more,
 * with room to spare), charged before a speculative parse. */
#define EVAL_RECORD_COST(len) ((size_t)(len) * 100u + 4096u)

/* The SPF record a TXT answer holds (§4.5), worked out once per answer. */
enum record_state {
	REC_UNKNOWN = 0,
	REC_OK,       /* rec is the parsed record */
	REC_NONE,     /* no "v=spf1" record */
	REC_MULTIPLE, /* more than one: permerror */
	REC_INVALID,  /* a syntax error (pe) or a cap (rc): permerror */
};

struct query {
	uint64_t hash;
	uint16_t type;
	uint8_t state;
	uint8_t flags; /* QF_* */
	uint16_t level; /* answers needed before this question could be asked, + 1 */
	/* level where strict evaluation first asked it, 0 before: what
	 * spfkit_result.depth counts, the same whether lookahead filed the
	 * question first (through a shorter path, maybe) or not */
	uint16_t strict_level;
	char *name;    /* NUL-terminated, no final dot */
	size_t name_len;
	struct spfkit_dns_answer ans; /* deep copy, valid when state == Q_DONE */
	/* TXT answers of QF_RECORD questions: */
	uint8_t rec_state;
	size_t rec_count;                   /* SPF records found */
	/* parsed or failed; released with the evaluation */
	struct spfkit__record_cache_entry *rce;
	const struct spfkit_dns_rr *rec_rr; /* the record's RR (REC_OK, REC_INVALID) */
	/* lookahead.c: 1 + the first term that matches the client without
	 * DNS (or 1 + the term count); 0 until worked out */
	size_t la_stop;
	struct query **la_terms; /* lookahead.c: each term's question once found, or NULL */
};

enum frame_phase {
	PH_START = 0, /* check the domain, fetch its record */
	PH_TERMS,     /* mechanisms, in order */
	PH_REDIRECT,  /* no mechanism matched: the redirect modifier */
	PH_EXPLAIN,   /* the top-level result is fail: §6.2 */
	PH_DONE,
};

struct frame {
	const char *domain; /* arena, no final dot */
	size_t domain_len;
	struct spfkit_record *rec; /* owned by the evaluation */
	const struct spfkit__hot_term *hot; /* rec's terms, compact (record_room.h) */
	const struct spfkit__ip4_group *ip4; /* the same for IPv4 clients, or NULL */
	uint8_t phase;
	uint8_t redirected;   /* reached through redirect: none becomes permerror (§6.1) */
	uint8_t term_charged; /* the current term was counted against the 10 */
	uint8_t domain_checked; /* domain already passed spfkit__domain_valid() */
	uint8_t announced;      /* the CHECK trace event went out for this domain */
	uint8_t rec_private;    /* rec is not in the context's cache: give it back when done */
	size_t term;          /* index of the current term */
	unsigned uses, counted; /* replay bookkeeping, see above */
	/* dependency depth (spfkit_result.depth): levels of the answers used */
	uint16_t base_level; /* what led to this frame (0 at the top) */
	uint16_t rec_level;  /* the record's TXT answer */
	uint16_t term_level; /* the deepest answer the current term has used */
	const char *target;     /* the current term's expanded target, once known */
	size_t target_len;
	unsigned target_uses;   /* answers the expansion used (%{p}): replays skip them */
	uint8_t target_valid;   /* spfkit__domain_valid(target), worked out with it */
	enum spfkit_result_code result;
	const struct spfkit_term *decided; /* the mechanism that gave the result */
	const char *problem;
};

/* What one step of a term or phase came to. */
enum step_status {
	STEP_DONE = 0,  /* the term/phase finished: see its out-parameters */
	STEP_PENDING,   /* waiting for an answer: need() filed the question */
	STEP_NOMEM,     /* allocation failed */
};

/* What a mechanism came to (§4.6.2, §5). */
enum mech_outcome {
	MECH_NOMATCH = 0,
	MECH_MATCH,
	MECH_ERROR, /* frame->result holds temperror/permerror, frame->problem why */
	MECH_PUSHED, /* include: a child frame was pushed */
};

/* Validated names for the ptr mechanism and %{p} (§5.5), once per evaluation. */
struct validated {
	size_t count;
	const char *names[SPFKIT_LIMIT_PTR_NAMES];
	size_t lens[SPFKIT_LIMIT_PTR_NAMES];
};

struct spfkit_eval {
	const struct spfkit_ctx *ctx;
	struct spfkit__arena arena;
	struct spfkit__buf scratch; /* macro expansions */
	/* the request, normalised (§4.3) */
	struct spfkit_ip ip;
	uint32_t ip4; /* ip.addr[0..3] as a word, network order, when ip.family == 4 */
	char client_ip[48];
	const char *sender, *local, *sender_domain, *helo;
	size_t sender_len, local_len, sender_domain_len, helo_len;
	/* RFC 8616 (idna.c): the above hold A-labels; these, what the session gave */
	const char *sender_received, *helo_received;
	const char *sender_ascii, *helo_ascii; /* NULL: no ASCII form */
	const char *idna_why;            /* the checked domain is no IDN: why */
	uint32_t ascii_less_letters;     /* macro letters with no ASCII value (bit c - 'a') */
	enum spfkit_identity identity;
	int64_t now;
	spfkit_trace_fn *trace;
	void *trace_arg;
	/* questions */
	/* Each query lives in the arena and never moves (callers keep pointers
	 * to it across later questions); only this array of pointers grows. */
	struct query **queries; /* queries_first until it outgrows it */
	size_t nqueries, cap_queries;
	size_t next_emit; /* first query not yet handed out */
	int progress;     /* an answer arrived since the last run */
	unsigned depth; /* frames in use; frames[depth - 1] is current */
	/* limits, counted in limits.c only */
	unsigned dns_terms;
	unsigned void_lookups;
	unsigned speculative; /* questions filed by lookahead */
	unsigned speculative_terms; /* of those, for a term (not MX hosts): lookahead.c */
	/* bytes of the parsed records the questions hold that the record
	 * cache does not keep (each counted per question; a cached entry is
	 * within the context's byte budget), now and at most */
	size_t rec_bytes, rec_peak;
	/* Without a record cache, parsed records are made in the arena (no
	 * block of their own to allocate and free), EVAL_KEEP_RECORD_BYTES of
	 * them at most: their memory is given back only with the evaluation,
	 * however early they are released. */
	struct spfkit__arena_hook arena_records;
	int lookahead;
	/* the record memo (ctx->record_memo) is used and filled: no trace, a `now` */
	int memo;
	/* strict evaluation took a record from the memo since lookahead last
	 * walked: walk again before waiting (spfkit_eval_step) */
	int memo_unwalked;
	/* the address plan of the top domain (record_plan.h) asks to be
	 * built from what this evaluation leaves in the memo: that domain is
	 * result.identity_domain, of this length and name hash */
	int plan_learn;
	size_t plan_domain_len;
	uint64_t plan_hash;
	int done;
	/* spfkit_eval_new_record(): the top-level record given as text, an
	 * answered TXT question kept out of the table, so only the top
	 * check_host() reads it (includes and redirects still fetch) */
	struct query *given;
	struct spfkit_result result;
	/* need_memo's slots written by this evaluation, bit per slot (the
	 * slots themselves are not zeroed: a block is used again) */
	uint32_t need_valid;
	/* Not zeroed by spfkit_eval_new(): each slot is written before it is
	 * read (a frame when pushed, a question pointer when filed). */
	struct frame frames[EVAL_MAX_DEPTH];
	/*
	 * A term waiting for an answer asks its questions again from the
	 * start each time it resumes (the replay above). Names live in the
	 * arena, in an answer kept for the evaluation or in a held record,
	 * and never move or change: a question asked again with the same
	 * name pointer, length and type is the same question, found here
	 * without hashing the name and searching the table.
	 */
	struct need_memo {
		const char *name;
		size_t len;
		uint16_t type;
		struct query *q;
	} need_memo[EVAL_NEED_MEMO]; /* a slot is read only when need_valid says so */
	struct query *queries_first[EVAL_FIRST_QUERIES];
};

/* What spfkit_eval_new() must zero: everything before the frames. */
#define EVAL_ZEROED_SIZE offsetof(struct spfkit_eval, frames)

/* query.c */
const struct query *spfkit__query_need(struct spfkit_eval *ev, struct frame *f, uint16_t type,
				 const char *name, size_t len, unsigned flags, int *fresh, int *nomem);
/* File a question (or find the one filed), OR-ing flags in; NULL on ENOMEM or when full. */
struct query *spfkit__query_file(struct spfkit_eval *ev, uint16_t type, const char *name,
	size_t len,
			   unsigned flags, unsigned level);
/* Select and parse the SPF record of a QF_RECORD TXT answer, once. 0 or SPFKIT_ENOMEM. */
int spfkit__query_record(struct spfkit_eval *ev, struct query *q);
/* The top-level record given as text: ev->given, answered as if DNS had
 * returned that one TXT record. 0 or SPFKIT_ENOMEM. */
int spfkit__query_given(struct spfkit_eval *ev, const char *text, size_t len);
/* Give back a question's parsed record, uncounted from ev->rec_bytes. */
void spfkit__query_drop_record(struct spfkit_eval *ev, struct query *q);
/*
 * Strict evaluation is done with `rec`, the record of domain's TXT answer
 * (its include returned, or it redirected): the parsed form is given
 * back, and parsed again from the answer if the domain comes up again,
 * so one evaluation holds the records of its open frames and at most
 * EVAL_KEEP_RECORD_BYTES of others, not every include it went through
 * (10 includes of 64 KiB records: 50 MB).
 */
void spfkit__query_record_done(struct spfkit_eval *ev, const char *domain, size_t len,
			       const struct spfkit_record *rec);
/* Tests: the bytes of uncached parsed records the evaluation holds, now and at most. */
void spfkit__query_record_bytes(const struct spfkit_eval *ev, size_t *now, size_t *peak);
int spfkit__query_emit(struct spfkit_eval *ev, struct spfkit_question *q);
int spfkit__query_store_answer(struct spfkit_eval *ev, uint32_t id,
	const struct spfkit_dns_answer *a);
int spfkit__query_answer_void(const struct spfkit_dns_answer *a);

/* limits.c: the §4.6.4 counters; each returns 0, or 1 when the limit is passed
 * (then frame->result is permerror with the problem set). */
int spfkit__limits_charge_dns_term(struct spfkit_eval *ev, struct frame *f);
int spfkit__limits_charge_void(struct spfkit_eval *ev, struct frame *f,
	const struct spfkit_dns_answer *a);

/* ip4 terms are most of a provider's record: compare as one 32-bit word
 * (client and network both in network order). */
static inline int spfkit__ip4_in(uint32_t client, const struct spfkit_term *t)
{
	uint32_t net, mask;

	memcpy(&net, t->ip, 4);
	mask = t->cidr4 == 0 ? 0 : htonl(0xffffffffu << (32 - t->cidr4));
	return ((client ^ net) & mask) == 0;
}

/* What a matching mechanism gives (§4.6.2). */
static inline enum spfkit_result_code spfkit__qualifier_result(const struct spfkit_term *t)
{
	switch (t->qualifier) {
	case '-': return SPFKIT_RESULT_FAIL;
	case '~': return SPFKIT_RESULT_SOFTFAIL;
	case '?': return SPFKIT_RESULT_NEUTRAL;
	default: return SPFKIT_RESULT_PASS;
	}
}

/* mech.c */
int spfkit__mech_eval(struct spfkit_eval *ev, struct frame *f, const struct spfkit_term *t,
			   enum mech_outcome *out);
int spfkit__mech_expand_target(struct spfkit_eval *ev, struct frame *f,
			  const struct spfkit_macro_string *ms, enum spfkit__macro_use use,
			  const char **out, size_t *out_len, int *failed);
int spfkit__mech_validate_ptr(struct spfkit_eval *ev, struct frame *f, struct validated *v);

/* lookahead.c: file the questions an answer makes likely (issue 3). */
int spfkit__lookahead(struct spfkit_eval *ev, struct query *q);
/* The same from where strict evaluation stands, whatever came in. */
int spfkit__lookahead_walk(struct spfkit_eval *ev);

/* explain.c */
int spfkit__explain(struct spfkit_eval *ev, struct frame *f);

/* eval.c */
/* f ends in `code` (temperror or permerror) for `reason`: the result's
 * reason fields name it, with f's current term; the problem text is
 * fmt's. */
void spfkit__eval_frame_fail(struct spfkit_eval *ev, struct frame *f, enum spfkit_result_code code,
			enum spfkit_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void spfkit__eval_trace(struct spfkit_eval *ev, const struct spfkit_trace_event *e);
/* A NOTE event for frame f (the trace must be on). */
void spfkit__eval_trace_note(struct spfkit_eval *ev, const struct frame *f, const char *text,
			size_t len);

/* legacy.c: name pre-RFC modifiers of f's record in the trace (if on). */
void spfkit__legacy_trace(struct spfkit_eval *ev, const struct frame *f);
/* The macro values of §7.3 for f, or for a record of `domain` (%{d}). */
void spfkit__eval_macro_env(const struct spfkit_eval *ev, const struct frame *f,
		       struct spfkit__macro_env *env);
void spfkit__eval_macro_env_for(const struct spfkit_eval *ev, const char *domain, size_t domain_len,
			   struct spfkit__macro_env *env);

#endif
