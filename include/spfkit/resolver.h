/*
 * The DNS seam. The evaluator never does I/O: it names questions and is
 * handed `struct spfkit_dns_answer` values. A resolver backend (zone
 * file, c-ares) turns questions into answers behind this interface.
 *
 * Contract of every backend (after libuv):
 *  - submit() either returns a negative error, and then the callback is
 *    never called, or returns 0 and calls the callback exactly once,
 *    later, from wait() or from the backend's event processing; never
 *    from inside submit() itself.
 *  - cancel() of a pending question guarantees its callback never runs.
 *  - The answer passed to a callback, and everything it points to, is
 *    owned by the backend and valid only during the callback.
 *  - destroy() frees everything the backend holds, the struct
 *    spfkit_resolver it handed out included (backends embed it in
 *    their own state, so it goes with the backend's own allocator);
 *    callbacks of questions still pending never run.
 *
 * How a question's name is written (every backend reads it so):
 *  - Wire-exact bytes, not presentation text: the name is its labels'
 *    octets as they go into the question (RFC 1035 §3.1), joined by '.',
 *    one final '.' optional. Every '.' separates labels, so a label never
 *    holds a '.'; every other byte ('\', '"', ';', '(', space, NUL,
 *    non-ASCII) is label data. No escape of RFC 1035 §5.1 (`\.`, `\DDD`)
 *    is read: "a\046b" is one label of six octets. SPF names are text made
 *    by macro expansion (RFC 7208 §7.3), where a '.' always separates, so
 *    this is the form the evaluator hands out, and a name asks the same
 *    question of the zone backend and of a DNS server through c-ares.
 *  - Names match ASCII-case-insensitively (RFC 4343), other bytes exactly.
 *  - A name DNS cannot carry (an empty label, a label over 63 octets, over
 *    253 in all) has no records: the zone backend answers NXDOMAIN, the
 *    c-ares backend's submit() fails with SPFKIT_EINVAL.
 */
#ifndef SPFKIT_RESOLVER_H
#define SPFKIT_RESOLVER_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DNS RR types, with their IANA numbers. */
enum spfkit_rrtype {
	SPFKIT_RR_A = 1,
	SPFKIT_RR_CNAME = 5,
	SPFKIT_RR_SOA = 6,
	SPFKIT_RR_PTR = 12,
	SPFKIT_RR_MX = 15,
	SPFKIT_RR_TXT = 16,
	SPFKIT_RR_AAAA = 28,
	SPFKIT_RR_SPF = 99, /* stored by the zone backend, never queried (RFC 7208 §3.1) */
	/*
	 * Not a type on the wire (65280 is the first of RFC 6895's private
	 * use): a TXT question whose answer keeps the character-strings as
	 * they were published, for tools that check how a record was split
	 * (`spfkit lint`). Each record's data is its RDATA: every string
	 * after its length octet (RFC 1035 §3.3.14). The zone and c-ares
	 * backends answer it (the question sent is TXT); the evaluator never
	 * asks it, and a backend that does not know it may fail the submit.
	 */
	SPFKIT_RR_TXT_STRINGS = 65280,
};

/*
 * One outcome per question. NODATA and NXDOMAIN are the two "void"
 * outcomes of RFC 7208 §4.6.4; TEMPFAIL (timeout, SERVFAIL, REFUSED,
 * a malformed reply) is what makes an SPF result temperror.
 */
enum spfkit_dns_status {
	SPFKIT_DNS_OK = 0,
	SPFKIT_DNS_NODATA = 1,
	SPFKIT_DNS_NXDOMAIN = 2,
	SPFKIT_DNS_TEMPFAIL = 3,
};

/*
 * One resource record, in the form SPF needs:
 *  A      data = 4 bytes, network order
 *  AAAA   data = 16 bytes
 *  MX     data = exchange name in the question-name form above (raw
 *         label bytes joined by '.', no final dot), `pref` = preference
 *  PTR, CNAME  data = target name, in that form too, so it can be asked
 *         back unchanged; a target with a '.' inside a label cannot be
 *         written so, and a backend leaves that record out
 *  TXT, SPF    data = the RR's character-strings joined with no
 *         separator (RFC 7208 §3.3); may contain any byte, NUL included
 */
struct spfkit_dns_rr {
	uint16_t type;
	uint16_t pref;
	uint32_t ttl;
	const unsigned char *data;
	size_t len;
};

struct spfkit_dns_answer {
	enum spfkit_dns_status status;
	uint32_t ttl;       /* negative-caching TTL for NODATA/NXDOMAIN, else min TTL */
	const struct spfkit_dns_rr *rrs; /* only records of the asked type */
	size_t count;       /* > 0 exactly when status is SPFKIT_DNS_OK */
	/*
	 * Static text for TEMPFAIL ("timeout", "SERVFAIL"...), or NULL. Set
	 * to spfkit_reason_text(SPFKIT_REASON_DNS_TIMEOUT) (the pointer
	 * itself), or of SPFKIT_REASON_DNS_SERVFAIL or _DNS_REFUSED, it makes
	 * a temperror's reason that code (reason.h); any other text gives
	 * SPFKIT_REASON_DNS_ERROR. The library's backends do so.
	 */
	const char *detail;
};

typedef void spfkit_dns_cb(void *arg, const struct spfkit_dns_answer *answer);

/* What a backend implements. `impl` is the backend's own state. */
struct spfkit_resolver_ops {
	/* Ask `type` for `name`: len bytes, wire-exact labels joined by '.'
	 * (above), no final dot needed. */
	int (*submit)(void *impl, const char *name, size_t len, uint16_t type,
		      spfkit_dns_cb *cb, void *arg, uint64_t *handle);
	void (*cancel)(void *impl, uint64_t handle);
	/*
	 * Block until at least one callback has run or `timeout_ms` passed
	 * (-1: no limit). Returns the number of callbacks run, or a negative
	 * error. Used by blocking callers such as spfkit_check().
	 */
	int (*wait)(void *impl, int timeout_ms);
	void (*destroy)(void *impl);
};

struct spfkit_resolver {
	const struct spfkit_resolver_ops *ops;
	void *impl;
};

/*
 * Thin wrappers over the ops. submit() and wait() give SPFKIT_EINVAL for
 * a NULL resolver (or a NULL callback, or a NULL name with len > 0);
 * cancel() and free() of NULL do nothing.
 */
SPFKIT_MUSTCHECK int spfkit_resolver_submit(struct spfkit_resolver *r, const char *name,
					     size_t len, uint16_t type, spfkit_dns_cb *cb,
					     void *arg, uint64_t *handle);
void spfkit_resolver_cancel(struct spfkit_resolver *r, uint64_t handle);
int spfkit_resolver_wait(struct spfkit_resolver *r, int timeout_ms);
/* Destroys the backend and frees `r`; NULL is a no-op. */
void spfkit_resolver_free(struct spfkit_resolver *r);

/* "A", "TXT", ... or "TYPE<n>" written into buf; returns buf. */
const char *spfkit_rrtype_name(uint16_t type, char *buf, size_t size);
/* "ok", "no data", "NXDOMAIN", "temporary failure". */
const char *spfkit_dns_status_name(enum spfkit_dns_status status);

#ifdef __cplusplus
}
#endif

#endif
