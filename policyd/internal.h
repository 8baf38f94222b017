/*
 * spfkit-policyd's inside, shared by server.c (the server: log,
 * generations, listeners, reload, drain), conn.c (a connection's life),
 * admit.c (taking connections in, the limits), pool.c (--workers),
 * request.c (one request: its attributes, the daemons' engine of
 * mta/checker.c, the decision) and icache.c (decisions kept per message).
 * Not an API.
 */
#ifndef SPFKIT_POLICYD_INTERNAL_H
#define SPFKIT_POLICYD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>
#include <event2/listener.h>

#include <spfkit/eval.h>
#include <spfkit/event.h>

#include "spfkit_util.h"
#include "list.h"
#include "checker.h"
#include "decision.h"
#include "escape.h"
#include "proto.h"
#include "ratelog.h"
#include "server.h"

struct spfkit__policyd_peruser;

struct gen {
	struct spfkit__mta_config *cfg;
	struct spfkit__policyd_peruser *peruser; /* Per_User's recipients (peruser.h); NULL: none */
	struct spfkit_ctx *ctx;
	int budget_s; /* each check's (mta/checker.h); 0: its phases alone end within --time-limit */
	unsigned refs;
};

struct job;
struct pool_slot;

/* Bytes on their way in or out (conn.c); data NULL while empty. */
struct iobuf {
	char *data;
	size_t len, cap;
};

struct conn {
	struct spfkit__policyd *srv;
	int in_fd, out_fd;      /* the same descriptor for a socket */
	int own_fd;             /* closed with the connection (not spawn mode's stdin/stdout) */
	struct event *rd, *wr;  /* reading; writing while replies wait (conn.c) */
	struct iobuf in;        /* read and not yet taken: a partial or pipelined request */
	struct iobuf out;       /* replies the client has not taken yet */
	int read_on;            /* off after EOF, or while the client does not read its answers */
	int read_full;          /* input at its cap: suspended until requests are taken */
	int idle;               /* between requests: the idle timeout counts (conn.c) */
	uint64_t idle_since_ms; /* spfkit__mta_now_ms() when it became idle */
	int idle_short;         /* the read event's timeout holds a remainder (conn.c) */
	char peer[96];
	struct spfkit__policy_request req;
	struct job *job;
	int in_process; /* spfkit__policyd_conn_process() is on the stack: no re-entry */
	int eof;        /* the client has finished sending (closed, or half-closed its side) */
	int blocked;    /* complete requests wait: the client does not read its answers */
	struct event *deadline; /* --request-timeout: from a request's first byte to its end */
	int deadline_on;        /* it is pending */
	struct event *check_timer; /* lent to each request's check (mta/checker.h) */
	int not_socket;         /* spawn mode's stdout is a pipe or file: write(), not send() */
	int asked;              /* a request was taken from it (room at the limit: admit.c) */
	int has_addr;           /* a TCP client: addr counts against --max-per-client */
	struct spfkit_ip addr;
	struct pool_slot *slot; /* --workers: worker 0's record of it (pool.c); NULL alone */
	struct spfkit__link link; /* in srv->conns */
};

/* The connection of a link of srv->conns; NULL for NULL (the walk's end). */
static inline struct conn *spfkit__policyd_conn_of(const struct spfkit__link *k)
{
	return SPFKIT__LIST_ENTRY(k, struct conn, link);
}

/* One request: the shared check (mta/checker.c) and what Postfix needs around it. */
struct job {
	struct spfkit__mta_job chk;     /* chk.arg is the job */
	struct conn *conn;
	struct gen *gen;
	const char *queue_id, *instance;
	size_t queue_id_len;
	const char *cache_key; /* NULL: the answer is not kept */
	size_t key_len;
	size_t base_len;       /* of cache_key, without a Per_User entry's "|#N" (request.c) */
	uint64_t key_hash;
	struct timespec t0;
	char text[]; /* the copies of the request's values, then the key (request.c) */
};

/*
 * A decision kept for the later queries of the same message, compactly:
 * the key, then the texts, in one allocation (a few hundred bytes).
 */
struct cached {
	char *key;
	size_t key_len;
	uint64_t hash;
	enum spfkit__mta_kind kind;
	char *action; /* the action when not PREPEND */
	char *headers[SPFKIT__MTA_MAX_HEADERS];
	size_t header_count;
	size_t served;
	struct cached *hnext;           /* hash chain */
	struct cached *older, *newer;   /* age order, for eviction */
};

#define CACHE_BUCKETS 4096u

struct spfkit__policyd {
	struct event_base *base;
	struct spfkit__policyd_opts opts;
	char receiver[256];
	struct gen *gen;
	struct spfkit_resolver *resolver;
	int dns_cached; /* resolver is a DNS cache layer: contexts keep the record memo */
	struct spfkit_event *dnsloop; /* the resolver in the loop (lib/event) */
	struct spfkit__mta_loop loop; /* base, resolver and dnsloop, for the checks */
	struct spfkit__mta_acceptor *acceptor; /* worker 0's listeners (mta/acceptor.c) */
	size_t n_listeners;
	struct spfkit__list conns; /* of struct conn */
	size_t n_conns;
	int draining;
	struct event *room_retry;   /* over --max-connections: look for an idle one again */
	/* warnings that may repeat at a hostile client's rate: once per SPFKIT_POLICYD_LOG_INTERVAL */
	struct spfkit__mta_ratelog log_full, log_per_client;
	struct cached *buckets[CACHE_BUCKETS];
	uint64_t icache_key[2]; /* icache.c: the buckets' hash key; zero until drawn */
	struct cached *oldest, *newest;
	size_t n_cached;
	struct spfkit__policyd_pool *pool; /* --workers > 1; NULL: the only loop */
	unsigned worker;                   /* this one's index in the pool; 0 accepts */
	int done_sent;                     /* drained, and worker 0 was told */
};

/* A truncated, escaped copy of untrusted bytes for a log line. */
#define ESC(s, n) spfkit__mta_escape((s), (n), 100, (char[512]){0}, 512)
#define ESC_LONG(s, n) spfkit__mta_escape((s), (n), 400, (char[1700]){0}, 1700)

/* server.c: the log; conn.c: replies and a connection's requests */
int spfkit__policyd_debug_level(const struct spfkit__policyd *srv);
/* A line built by the caller (the per-decision line: no printf on the request path). */
void spfkit__policyd_log_text(const struct spfkit__policyd *srv, int prio, const char *text,
			      size_t len);
void spfkit__policyd_send_reply(struct conn *c, const char *action);
void spfkit__policyd_conn_process(struct conn *c);
void spfkit__policyd_gen_put(struct gen *g);

/* conn.c: a connection served on this loop (in_fd == out_fd but for spawn mode), NULL:
 * out of memory (fds closed); its end; draining ends the loop once the last is gone */
struct conn *spfkit__policyd_conn_new(struct spfkit__policyd *srv, int in_fd, int out_fd,
				      const char *peer, const struct spfkit_ip *addr);
void spfkit__policyd_conn_close(struct conn *c);
/* Part of a request read (or bytes waiting to be): not idle. */
int spfkit__policyd_conn_has_partial(const struct conn *c);
void spfkit__policyd_drain_check(struct spfkit__policyd *srv);

/* admit.c: the acceptor (worker 0's listeners) and the room-retry timer. 0, or an error */
int spfkit__policyd_admit_new(struct spfkit__policyd *srv);

/* admit.c, for pool.c: serve an accepted descriptor here; the end of a connection */
int spfkit__policyd_adopt(struct spfkit__policyd *srv, int fd, const char *peer,
			  const struct spfkit_ip *addr, struct pool_slot *slot);
void spfkit__policyd_accept_on_close(struct spfkit__policyd *srv);
/* At --max-connections: close this loop's connection idle the longest (spare_new: not
 * one new and yet to ask); 1 if there was one, else room is looked for again later. */
int spfkit__policyd_make_room(struct spfkit__policyd *srv, int spare_new);
void spfkit__policyd_room_later(struct spfkit__policyd *srv);

/* pool.c: --workers (see there); make_room: the limit is reached (on_conn) */
int spfkit__policyd_pool_place(struct spfkit__policyd *srv, int fd, const char *peer,
			       const struct spfkit_ip *addr, int make_room);
size_t spfkit__policyd_pool_conns(const struct spfkit__policyd_pool *p);
size_t spfkit__policyd_pool_conns_from(const struct spfkit__policyd_pool *p,
				       const struct spfkit_ip *ip);
void spfkit__policyd_pool_closed(struct spfkit__policyd *srv, struct pool_slot *slot);
void spfkit__policyd_pool_drained(struct spfkit__policyd *srv);
/* Worker 0, over the limit: the next worker in turn closes its idle one, if any;
 * a worker that found none tells worker 0 (no_room). */
void spfkit__policyd_pool_make_room(struct spfkit__policyd_pool *p);
void spfkit__policyd_pool_no_room(struct spfkit__policyd *srv);

/* icache.c: decisions kept for the later queries of a message */
/* A key's hash, computed once per request for both the look-up and the store. */
uint64_t spfkit__policyd_cache_hash(struct spfkit__policyd *srv, const char *key, size_t len);
struct cached *spfkit__policyd_cache_find(struct spfkit__policyd *srv, const char *key,
					  size_t len, uint64_t hash);
void spfkit__policyd_cache_put(struct spfkit__policyd *srv, const char *key, size_t len,
			       uint64_t hash, const struct spfkit__mta_decision *d);
void spfkit__policyd_cache_action(const struct cached *c, size_t n, char *buf, size_t size);
void spfkit__policyd_cache_free(struct spfkit__policyd *srv);

/* request.c: one request, from its attributes to its answer */
struct job *spfkit__policyd_request_take(struct conn *c, const struct spfkit__policy_request *r);
void spfkit__policyd_request_go(struct job *j);
void spfkit__policyd_job_free(struct job *j);

#endif
