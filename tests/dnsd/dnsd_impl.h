/* dnsd internals shared by dnsd.c (API, rules, counters), serve.c (the thread) and answer.c. */
#ifndef DNSD_IMPL_H
#define DNSD_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core.h"
#include "dnsd.h"
#include "wire.h"

/* ---- answer.c: one response, no I/O ---------------------------------- */

enum { DNSD_SILENT = 0, DNSD_SEND = 1, DNSD_TRUNC = 2, DNSD_GO = 3 };

struct dnsd_reply_in {
	const struct dnsd_wire_msg *q;  /* the parsed query */
	const struct spfkit_zone *zone; /* may be NULL: SERVFAIL */
	enum dnsd_action action;
	int tcp;
	uint32_t neg_ttl;
	uint32_t seed; /* for DNSD_MAL_CORRUPT */
};

/*
 * Encode into b (cap DNSD_WIRE_MAX) the response to in->q. Returns
 * DNSD_SEND, DNSD_TRUNC (sent as TC=1; counted apart), DNSD_SILENT, or
 * a negative error when not even an error response fits (then drop).
 */
int dnsd__respond(struct spfkit__buf *b, const struct dnsd_reply_in *in);
/* Header, question and OPT of q with this rcode; FORMERR and friends. */
int dnsd__reply_empty(struct spfkit__buf *b, const struct dnsd_wire_msg *q, unsigned rcode,
		      unsigned extra_flags);
/* Flags of a response to q: QR, AA, RA, RD and opcode copied, rcode. */
unsigned dnsd__reply_flags(const struct dnsd_wire_msg *q, unsigned rcode);
/* Start a response: header with these flags and counts, then q's question. */
int dnsd__put_head(struct spfkit__buf *b, const struct dnsd_wire_msg *q, unsigned flags,
		   unsigned an, unsigned ns);
/*
 * The zone's answer to in->q, its question written as q's. DNSD_SEND,
 * DNSD_TRUNC (too big for UDP), DNSD_SILENT (the zone says timeout), or
 * a negative error.
 */
int dnsd__zone_reply(struct spfkit__buf *b, const struct dnsd_reply_in *in,
		     const struct dnsd_wire_msg *q);

/* ---- hostile.c: the answers from DNSD_TXT_NO_STRINGS on -------------- */

/* TXT/SPF RDATA as `action` has it sent (see enum dnsd_action). */
int dnsd__put_txt(struct spfkit__buf *b, const unsigned char *data, size_t len,
		  enum dnsd_action action);
/* The response for a hostile action; returns as dnsd__respond(). */
int dnsd__hostile(struct spfkit__buf *b, const struct dnsd_reply_in *in);

/* ---- dnsd.c: state shared with the serving thread, under mu ---------- */

struct dnsd_rule {
	char *name; /* lower case, no final dot */
	size_t len;
	uint16_t type; /* 0: any */
	int has_action;
	enum dnsd_action action;
	int has_delay;
	unsigned delay_ms;
};

struct dnsd_count {
	char *name;
	size_t len;
	uint16_t type;
	uint64_t n;
};

struct dnsd_logent {
	uint64_t t_us;
	uint32_t count_idx; /* into counts, or UINT32_MAX when not counted */
	uint16_t type;
	uint8_t tcp;
};

/* What the thread decided for one query, under the lock. */
struct dnsd_plan {
	enum dnsd_action action;
	unsigned delay_ms;
};

/* ---- serve.c: the thread's own state ---------------------------------- */

struct dnsd_conn {
	int fd;
	uint64_t serial;  /* tells a reused slot from the connection a timer was for */
	uint64_t last_ms; /* last progress, for the idle timeout */
	unsigned pending; /* delayed answers still queued for it */
	int rd_closed;    /* the peer shut its side: answer what is queued, then close */
	size_t inlen;
	unsigned char in[2 + DNSD_WIRE_MAX];
	struct spfkit__buf out; /* framed answers not yet written */
	size_t outoff;          /* bytes of out already written */
};

struct dnsd_timer {
	uint64_t due_us;
	uint64_t seq; /* FIFO among equal due times */
	int tcp;
	unsigned slot;
	uint64_t serial;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	unsigned char *pkt;
	size_t len;
	int truncated;
};

struct dnsd {
	const struct spfkit_allocator *alloc;
	int udp_fd, tcp_fd, wake_rd, wake_wr;
	int port;
	char addr[48];
	unsigned tcp_idle_ms;
	uint32_t neg_ttl;
	uint32_t seed; /* under mu */
	pthread_t thread;
	int thread_started;

	pthread_mutex_t mu; /* guards everything down to the thread-only part */
	const struct spfkit_zone *zone;
	unsigned delay_ms;
	struct dnsd_rule *rules;
	size_t nrules;
	struct dnsd_counters c;
	struct dnsd_count *counts;
	size_t ncounts;
	struct dnsd_logent *log;
	size_t nlog;

	/* thread only */
	struct dnsd_conn *conns[DNSD_MAX_TCP];
	uint64_t next_serial;
	struct dnsd_timer *heap;
	size_t nheap;
	size_t heap_bytes; /* sum of the queued answers' lengths */
	uint64_t next_seq;
	struct spfkit__buf resp;
	unsigned char udp_in[DNSD_WIRE_MAX];
};

/* Lower-case copy rule for names: ASCII only, final dot dropped. */
size_t dnsd__name_norm(const char *name, size_t len);

/* Under d->mu: count one query, log it, pick its fault and delay. */
void dnsd__note_query(struct dnsd *d, const struct dnsd_wire_msg *q, int tcp, uint64_t t_us,
		      struct dnsd_plan *plan);

uint64_t dnsd__now_us(void);
void *dnsd__serve(void *arg);

#endif
