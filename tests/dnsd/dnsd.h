/*
 * dnsd: a loopback DNS server for tests and benchmarks (issue 3 point 5).
 *
 * It answers from a struct spfkit_zone over UDP and TCP on 127.0.0.0/8 or
 * ::1 only, and misbehaves on request: per-answer delays, no answer,
 * SERVFAIL, forced truncation, malformed packets, and the hostile
 * answers of issue 7 (a TXT with no strings, empty strings, CNAME loops,
 * compression tricks, a datagram cut short, seeded random corruption:
 * enum dnsd_action, hostile.c). It counts what it
 * receives so a test can tell how many queries an evaluation made and,
 * from the receive times, how many sequential round trips it took.
 *
 * Recipe (in-process):
 *
 *	struct dnsd_options opt = { .addr = "127.0.0.1", .port = 0 };
 *	struct dnsd *d;
 *	if (dnsd_start(&opt, zone, &d) != 0) ...;
 *	port = dnsd_port(d);                      // the port picked
 *	dnsd_fault(d, "slow.example", 0, DNSD_TIMEOUT);
 *	... point the resolver at 127.0.0.1:port, run the test ...
 *	dnsd_counters(d, &c);  dnsd_reset_counters(d);
 *	dnsd_stop(d);                             // joins, frees everything
 *
 * What it answers (all responses have QR and AA; RD is copied):
 *  - OK: NOERROR with the zone's records, owner = the question name
 *    (CNAME chains the zone followed are collapsed onto the question).
 *    The zone is asked for the raw text of the name (label bytes as
 *    they are, joined by dots), so "a b.example" finds "a b.example".
 *    TXT data goes as the character-strings the zone file wrote (a
 *    record added joined, and SPF data, is cut into strings of at most
 *    255 bytes); empty data is one empty string, as TXT "" in a master
 *    file (DNSD_TXT_NO_STRINGS sends a TXT with no strings).
 *  - NODATA: NOERROR, no answers; NXDOMAIN: rcode 3; both with an SOA in
 *    the authority section whose MINIMUM and TTL are the negative TTL
 *    (RFC 2308 §3), owned by the last two labels of the question.
 *  - a zone timeout name (spfkit_zone_add_timeout): no answer at all.
 *  - EDNS0 (RFC 6891): with an OPT in the query, its UDP size is the
 *    limit (never below 512) and the answer carries an OPT; version > 0
 *    gets BADVERS. Without OPT the limit is 512. A UDP answer over the
 *    limit is sent with TC=1 and no records (RFC 2181 §9); over TCP the
 *    whole answer is sent, up to 65535 bytes, else SERVFAIL.
 *  - queries that are not: a response (QR=1) is ignored, fewer than 12
 *    bytes are ignored, a header with no parseable question gets FORMERR,
 *    opcode other than QUERY gets NOTIMP, class other than IN REFUSED.
 *
 * Threads: dnsd_start() starts one serving thread running a poll loop;
 * delayed answers wait in a timer queue, so a delay never holds up other
 * queries. Every function below may be called from any thread while the
 * server runs, except dnsd_stop() (once, from one thread).
 *
 * Errors are enum spfkit_err values: 0, SPFKIT_EINVAL (bad argument, a
 * non-loopback address), SPFKIT_EIO (a socket call failed),
 * SPFKIT_ENOMEM, SPFKIT_E2BIG (a table is full).
 */
#ifndef DNSD_H
#define DNSD_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>

struct spfkit_zone;
struct dnsd;

/* Caps: memory is bounded whatever the clients do. */
#define DNSD_MAX_TCP 64u          /* open TCP connections; the least recently active is closed */
#define DNSD_MAX_PENDING 4096u    /* delayed answers waiting; more are dropped */
#define DNSD_PENDING_BYTES_MAX (16u << 20) /* and their bytes */
#define DNSD_MAX_RULES 1024u      /* fault rules */
#define DNSD_MAX_NAMES 4096u      /* distinct (name, type) counted */
#define DNSD_MAX_LOG 65536u       /* queries whose receive time is kept */
#define DNSD_TCP_OUT_MAX (1u << 20) /* unsent TCP bytes per connection before it is closed */
#define DNSD_DEFAULT_TCP_IDLE_MS 2000u
#define DNSD_DEFAULT_NEG_TTL 300u
#define DNSD_EDNS_SIZE 4096u      /* the UDP size this server announces in its OPT */

struct dnsd_options {
	const char *addr;      /* "127.0.0.1" when NULL; 127.0.0.0/8 or ::1, nothing else */
	int port;              /* 0: pick a free one (see dnsd_port) */
	unsigned delay_ms;     /* delay every answer (dnsd_set_delay) */
	unsigned tcp_idle_ms;  /* close a TCP connection idle this long; 0: default */
	uint32_t neg_ttl;      /* SOA TTL and MINIMUM in negative answers; 0: default */
	uint32_t seed;         /* for DNSD_MAL_CORRUPT (dnsd_set_seed) */
	const struct spfkit_allocator *alloc; /* NULL: libc */
};

/*
 * Bind UDP and TCP on the same port, start the serving thread. `zone`
 * may be NULL (then every query gets SERVFAIL until dnsd_set_zone); it
 * is only read, and must stay valid until replaced or dnsd_stop().
 * On error nothing is left running and *out is NULL.
 */
SPFKIT_MUSTCHECK int dnsd_start(const struct dnsd_options *opt, const struct spfkit_zone *zone,
				struct dnsd **out);
/* Join the thread, close every socket, free everything. NULL is a no-op. */
void dnsd_stop(struct dnsd *d);

int dnsd_port(const struct dnsd *d);
/* "127.0.0.1" or "::1" as bound. */
const char *dnsd_addr(const struct dnsd *d);

/*
 * Swap the zone between scenarios. Once this returns the server no
 * longer reads the old zone (answers already waiting in the delay queue
 * were encoded earlier and are unaffected), so the caller may free it.
 */
void dnsd_set_zone(struct dnsd *d, const struct spfkit_zone *zone);

/* ---- faults --------------------------------------------------------- */

enum dnsd_action {
	DNSD_ANSWER = 0,        /* behave (clears an action) */
	DNSD_TIMEOUT,           /* send nothing */
	DNSD_SERVFAIL,          /* rcode 2, question echoed, no records */
	DNSD_TRUNCATE,          /* over UDP always TC=1 and no records; TCP answers */
	/* Malformed answers; over TCP they are framed like any other. */
	DNSD_MAL_LOOP,          /* an answer whose owner is a pointer to itself */
	DNSD_MAL_PAST_END,      /* an answer whose RDLENGTH runs past the message end */
	DNSD_MAL_SHORT,         /* 7 bytes: a header cut short */
	DNSD_MAL_BAD_ID,        /* a correct answer under another message id */
	DNSD_MAL_GARBAGE,       /* the right id, then 62 bytes of noise */
	DNSD_MAL_WRONG_QUESTION,/* a correct answer for "wrong-question.invalid" */
	/* Hostile answers (hostile.c), issue 7: what other servers and
	 * broken middleboxes really send, and what an attacker could. */
	DNSD_TXT_NO_STRINGS,    /* the zone's answer; an empty TXT/SPF goes as RDLENGTH 0 */
	DNSD_TXT_EMPTY_STRINGS, /* the zone's answer; TXT/SPF with "" around every string */
	DNSD_MAL_CNAME_LOOP,    /* name CNAME loop.dnsd.invalid, and that CNAME back */
	DNSD_MAL_CNAME_CHAIN,   /* a chain of DNSD_CNAME_CHAIN CNAMEs, then the A records */
	DNSD_MAL_PTR_FORWARD,   /* an A record whose owner points forward to a later name */
	DNSD_MAL_PTR_LOOP2,     /* two owner names pointing at each other */
	DNSD_MAL_PTR_BEYOND,    /* an owner pointing past the end of the message */
	DNSD_MAL_TC_ALWAYS,     /* TC=1 and no records, over TCP too */
	DNSD_MAL_CUT,           /* over UDP the zone's answer cut inside its last record, TC=0 */
	DNSD_MAL_CORRUPT,       /* the zone's answer with bytes changed; see dnsd_set_seed */
};
#define DNSD_ACTION_LAST DNSD_MAL_CORRUPT
#define DNSD_CNAME_CHAIN 20u /* links of DNSD_MAL_CNAME_CHAIN: over any client's cap */

/*
 * Rules match the question name ignoring ASCII case and a final dot,
 * and `type` (0: any type). Names here and in the counters are raw
 * text, as the zone holds them: label bytes joined by dots, no escapes.
 * For a query the rule with its exact type wins over the any-type rule,
 * for the action and for the delay apart (so DNSD_ANSWER for one type
 * exempts it from an any-type fault); setting a rule again replaces
 * that part of it. SPFKIT_E2BIG past DNSD_MAX_RULES rules.
 */
int dnsd_fault(struct dnsd *d, const char *name, uint16_t type, enum dnsd_action action);
/* Delay the answers for name/type by ms, instead of the global delay. */
int dnsd_fault_delay(struct dnsd *d, const char *name, uint16_t type, unsigned delay_ms);
/* Delay every answer that has no delay rule of its own. */
void dnsd_set_delay(struct dnsd *d, unsigned delay_ms);
/* Remove every rule (the global delay stays). */
void dnsd_clear_faults(struct dnsd *d);
/*
 * DNSD_MAL_CORRUPT changes 1 to 8 bytes of the answer after its id and
 * outside its question (so clients do not just drop it), and one time
 * in four cuts it short. What changes depends only on the seed and the
 * question (name bytes as asked, type), never on the query id or on
 * the order of queries: the same seed gives the same bytes, over UDP
 * and TCP alike.
 */
void dnsd_set_seed(struct dnsd *d, uint32_t seed);

/*
 * Names for the command line: "answer", "timeout", "servfail",
 * "truncate", "loop", "past-end", "short", "bad-id", "garbage",
 * "wrong-question", "txt-no-strings", "empty-strings", "cname-loop",
 * "cname-chain", "ptr-forward", "ptr-loop2", "ptr-beyond",
 * "truncate-always", "cut", "corrupt". Parsing ignores case;
 * SPFKIT_EINVAL if unknown.
 */
const char *dnsd_action_name(enum dnsd_action a);
int dnsd_action_parse(const char *s, size_t len, enum dnsd_action *out);

/* ---- counters ------------------------------------------------------- */

struct dnsd_counters {
	uint64_t udp_queries;    /* datagrams received */
	uint64_t tcp_queries;    /* framed messages received over TCP */
	uint64_t bad_queries;    /* received but no usable question (ignored or FORMERR) */
	uint64_t answers;        /* responses handed to the socket, faults included */
	uint64_t truncated;      /* UDP answers sent with TC=1 */
	uint64_t unanswered;     /* left unanswered on purpose (timeout rule or zone) */
	uint64_t dropped;        /* answers lost: delay queue full, send failed, peer gone */
	uint64_t tcp_accepted;   /* connections accepted */
	uint64_t tcp_evicted;    /* closed to make room for a new one */
	uint64_t tcp_idle_closed;/* closed after tcp_idle_ms without progress */
	uint64_t log_dropped;    /* queries past DNSD_MAX_LOG, not in the log */
};

void dnsd_counters(struct dnsd *d, struct dnsd_counters *out);
/* Zero the counters, the per-name counts and the query log. */
void dnsd_reset_counters(struct dnsd *d);
/* Total UDP + TCP queries, the usual figure. */
uint64_t dnsd_queries(struct dnsd *d);
/*
 * Queries received for name (case-insensitive, final dot ignored) and
 * type (0: all types) since the last reset. Names past DNSD_MAX_NAMES
 * distinct (name, type) pairs are not counted here.
 */
uint64_t dnsd_query_count(struct dnsd *d, const char *name, uint16_t type);

/* One received query, in arrival order. */
struct dnsd_query {
	uint64_t t_us;     /* CLOCK_MONOTONIC receive time, microseconds */
	uint16_t type;
	int tcp;           /* 1 over TCP */
	char name[256];    /* raw text (label bytes joined by dots), cut at 255 */
};

/* Copy up to max logged queries, oldest first, into out; returns how many. */
size_t dnsd_query_log(struct dnsd *d, struct dnsd_query *out, size_t max);
/*
 * Sequential round trips since the last reset: the number of bursts of
 * queries, a new burst starting when a query arrives more than gap_ms
 * after the previous one. With a per-answer delay D, a client that
 * asks in parallel what it can makes one burst per round trip; pass
 * gap_ms around D/2.
 */
unsigned dnsd_rounds(struct dnsd *d, unsigned gap_ms);

#endif
