/*
 * dnsd: lifecycle, fault rules and counters. The serving thread lives in
 * serve.c, the response builder in answer.c; see dnsd.h for the contract.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dnsd_impl.h"

uint64_t dnsd__now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

size_t dnsd__name_norm(const char *name, size_t len)
{
	if (len > 0 && name[len - 1] == '.')
		len--;
	return len;
}

/* ---- sockets --------------------------------------------------------- */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return SPFKIT_EIO;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return SPFKIT_EIO;
	return 0;
}

/* Only 127.0.0.0/8 and ::1: this server must never face a network. */
static int loopback_addr(const char *addr, int port, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (port < 0 || port > 65535)
		return SPFKIT_EINVAL;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		if ((ntohl(s4->sin_addr.s_addr) >> 24) != 127)
			return SPFKIT_EINVAL;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return SPFKIT_EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	return SPFKIT_EINVAL;
}

static void set_port(struct sockaddr_storage *ss, int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static int open_socket(const struct sockaddr_storage *ss, socklen_t len, int type)
{
	int one = 1, fd = socket(ss->ss_family, type, 0);

	if (fd < 0)
		return -1;
	if (ss->ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (type == SOCK_STREAM)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (set_nonblock(fd) != 0 || bind(fd, (const struct sockaddr *)ss, len) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * UDP first; then TCP on the port UDP got. With port 0 that port may be
 * taken for TCP, so try again a few times with a fresh one.
 */
static int bind_pair(struct dnsd *d, struct sockaddr_storage *ss, socklen_t len, int port)
{
	int tries;

	for (tries = 0; tries < 32; tries++) {
		set_port(ss, port);
		d->udp_fd = open_socket(ss, len, SOCK_DGRAM);
		if (d->udp_fd < 0)
			return SPFKIT_EIO;
		d->port = bound_port(d->udp_fd);
		set_port(ss, d->port);
		d->tcp_fd = open_socket(ss, len, SOCK_STREAM);
		if (d->tcp_fd >= 0 && listen(d->tcp_fd, 128) == 0)
			return 0;
		if (d->tcp_fd >= 0)
			close(d->tcp_fd);
		close(d->udp_fd);
		d->tcp_fd = d->udp_fd = -1;
		if (port != 0 || errno != EADDRINUSE)
			return SPFKIT_EIO;
	}
	return SPFKIT_EIO;
}

static int open_wake(struct dnsd *d)
{
	int p[2];

	if (pipe(p) != 0)
		return SPFKIT_EIO;
	d->wake_rd = p[0];
	d->wake_wr = p[1];
	if (set_nonblock(p[0]) != 0 || set_nonblock(p[1]) != 0)
		return SPFKIT_EIO;
	return 0;
}

/* ---- lifecycle -------------------------------------------------------- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void free_counts(struct dnsd *d)
{
	size_t i;

	if (d->counts != NULL)
		for (i = 0; i < 2u * DNSD_MAX_NAMES; i++)
			spfkit__free(d->alloc, d->counts[i].name);
	spfkit__free(d->alloc, d->counts);
	d->counts = NULL;
	d->ncounts = 0;
}

static void free_rules(struct dnsd *d)
{
	size_t i;

	for (i = 0; i < d->nrules; i++)
		spfkit__free(d->alloc, d->rules[i].name);
	d->nrules = 0;
}

/* Everything but the thread; safe on a half-built server. */
static void destroy(struct dnsd *d)
{
	size_t i;

	for (i = 0; i < DNSD_MAX_TCP; i++) {
		if (d->conns[i] != NULL) {
			close(d->conns[i]->fd);
			spfkit__buf_free(&d->conns[i]->out);
			spfkit__free(d->alloc, d->conns[i]);
		}
	}
	for (i = 0; i < d->nheap; i++)
		spfkit__free(d->alloc, d->heap[i].pkt);
	spfkit__free(d->alloc, d->heap);
	free_rules(d);
	spfkit__free(d->alloc, d->rules);
	free_counts(d);
	spfkit__free(d->alloc, d->log);
	spfkit__buf_free(&d->resp);
	close_fd(&d->udp_fd);
	close_fd(&d->tcp_fd);
	close_fd(&d->wake_rd);
	close_fd(&d->wake_wr);
	pthread_mutex_destroy(&d->mu);
	spfkit__free(d->alloc, d);
}

static int setup(struct dnsd *d, const struct dnsd_options *opt)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	const char *addr = opt->addr != NULL ? opt->addr : "127.0.0.1";
	size_t alen = strlen(addr);
	int rc;

	if (alen >= sizeof(d->addr))
		return SPFKIT_EINVAL;
	memcpy(d->addr, addr, alen + 1);
	rc = loopback_addr(addr, opt->port, &ss, &len);
	if (rc == 0)
		rc = open_wake(d);
	if (rc == 0)
		rc = bind_pair(d, &ss, len, opt->port);
	if (rc != 0)
		return rc;
	d->counts = spfkit__calloc(d->alloc, 2u * DNSD_MAX_NAMES, sizeof(*d->counts));
	d->rules = spfkit__calloc(d->alloc, DNSD_MAX_RULES, sizeof(*d->rules));
	if (d->counts == NULL || d->rules == NULL)
		return SPFKIT_ENOMEM;
	return 0;
}

int dnsd_start(const struct dnsd_options *opt, const struct spfkit_zone *zone, struct dnsd **out)
{
	struct dnsd *d;
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if (opt == NULL)
		return SPFKIT_EINVAL;
	d = spfkit__zalloc(opt->alloc, sizeof(*d));
	if (d == NULL)
		return SPFKIT_ENOMEM;
	d->alloc = opt->alloc;
	d->udp_fd = d->tcp_fd = d->wake_rd = d->wake_wr = -1;
	d->zone = zone;
	d->delay_ms = opt->delay_ms;
	d->tcp_idle_ms = opt->tcp_idle_ms ? opt->tcp_idle_ms : DNSD_DEFAULT_TCP_IDLE_MS;
	d->neg_ttl = opt->neg_ttl ? opt->neg_ttl : DNSD_DEFAULT_NEG_TTL;
	d->seed = opt->seed;
	spfkit__buf_init(&d->resp, d->alloc, DNSD_WIRE_MAX);
	pthread_mutex_init(&d->mu, NULL);
	rc = setup(d, opt);
	if (rc == 0 && pthread_create(&d->thread, NULL, dnsd__serve, d) != 0)
		rc = SPFKIT_EIO;
	if (rc != 0) {
		destroy(d);
		return rc;
	}
	d->thread_started = 1;
	*out = d;
	return 0;
}

void dnsd_stop(struct dnsd *d)
{
	char c = 'q';

	if (d == NULL)
		return;
	if (d->thread_started) {
		/* The pipe is empty or holds our byte; a full pipe cannot happen. */
		while (write(d->wake_wr, &c, 1) < 0 && errno == EINTR)
			;
		pthread_join(d->thread, NULL);
	}
	destroy(d);
}

int dnsd_port(const struct dnsd *d)
{
	return d->port;
}

const char *dnsd_addr(const struct dnsd *d)
{
	return d->addr;
}

void dnsd_set_zone(struct dnsd *d, const struct spfkit_zone *zone)
{
	pthread_mutex_lock(&d->mu);
	d->zone = zone;
	pthread_mutex_unlock(&d->mu);
}

/* ---- fault rules -------------------------------------------------------- */

static struct dnsd_rule *rule_find(struct dnsd *d, const char *name, size_t len, uint16_t type)
{
	size_t i;

	for (i = 0; i < d->nrules; i++) {
		struct dnsd_rule *r = &d->rules[i];

		if (r->type == type && spfkit__memcaseeq(r->name, r->len, name, len))
			return r;
	}
	return NULL;
}

/* The rule for (name, type), made if missing; NULL when full or out of memory. */
static struct dnsd_rule *rule_get(struct dnsd *d, const char *name, uint16_t type, int *err)
{
	size_t len = dnsd__name_norm(name, strlen(name));
	struct dnsd_rule *r = rule_find(d, name, len, type);

	if (r != NULL)
		return r;
	if (d->nrules >= DNSD_MAX_RULES) {
		*err = SPFKIT_E2BIG;
		return NULL;
	}
	r = &d->rules[d->nrules];
	memset(r, 0, sizeof(*r));
	r->name = spfkit__strndup(d->alloc, name, len);
	if (r->name == NULL) {
		*err = SPFKIT_ENOMEM;
		return NULL;
	}
	r->len = len;
	r->type = type;
	d->nrules++;
	return r;
}

int dnsd_fault(struct dnsd *d, const char *name, uint16_t type, enum dnsd_action action)
{
	struct dnsd_rule *r;
	int err = 0;

	if (d == NULL || name == NULL || (unsigned)action > DNSD_ACTION_LAST)
		return SPFKIT_EINVAL;
	pthread_mutex_lock(&d->mu);
	r = rule_get(d, name, type, &err);
	if (r != NULL) {
		r->has_action = 1;
		r->action = action;
	}
	pthread_mutex_unlock(&d->mu);
	return err;
}

int dnsd_fault_delay(struct dnsd *d, const char *name, uint16_t type, unsigned delay_ms)
{
	struct dnsd_rule *r;
	int err = 0;

	if (d == NULL || name == NULL)
		return SPFKIT_EINVAL;
	pthread_mutex_lock(&d->mu);
	r = rule_get(d, name, type, &err);
	if (r != NULL) {
		r->has_delay = 1;
		r->delay_ms = delay_ms;
	}
	pthread_mutex_unlock(&d->mu);
	return err;
}

void dnsd_set_delay(struct dnsd *d, unsigned delay_ms)
{
	pthread_mutex_lock(&d->mu);
	d->delay_ms = delay_ms;
	pthread_mutex_unlock(&d->mu);
}

void dnsd_set_seed(struct dnsd *d, uint32_t seed)
{
	pthread_mutex_lock(&d->mu);
	d->seed = seed;
	pthread_mutex_unlock(&d->mu);
}

void dnsd_clear_faults(struct dnsd *d)
{
	pthread_mutex_lock(&d->mu);
	free_rules(d);
	pthread_mutex_unlock(&d->mu);
}

static const char *const action_names[] = {
	"answer", "timeout", "servfail", "truncate", "loop",
	"past-end", "short", "bad-id", "garbage", "wrong-question",
	"txt-no-strings", "empty-strings", "cname-loop", "cname-chain", "ptr-forward",
	"ptr-loop2", "ptr-beyond", "truncate-always", "cut", "corrupt",
};

const char *dnsd_action_name(enum dnsd_action a)
{
	if ((unsigned)a >= sizeof(action_names) / sizeof(action_names[0]))
		return "?";
	return action_names[a];
}

int dnsd_action_parse(const char *s, size_t len, enum dnsd_action *out)
{
	size_t i;

	for (i = 0; i < sizeof(action_names) / sizeof(action_names[0]); i++) {
		if (spfkit__memcaseeq(s, len, action_names[i], strlen(action_names[i]))) {
			*out = (enum dnsd_action)i;
			return 0;
		}
	}
	return SPFKIT_EINVAL;
}

/* The exact-type rule decides first, then the any-type rule (dnsd.h). */
static void plan_for(struct dnsd *d, const char *name, size_t len, uint16_t type,
		     struct dnsd_plan *plan)
{
	const struct dnsd_rule *exact = rule_find(d, name, len, type);
	const struct dnsd_rule *any = type != 0 ? rule_find(d, name, len, 0) : NULL;

	plan->action = DNSD_ANSWER;
	plan->delay_ms = d->delay_ms;
	if (exact != NULL && exact->has_action)
		plan->action = exact->action;
	else if (any != NULL && any->has_action)
		plan->action = any->action;
	if (exact != NULL && exact->has_delay)
		plan->delay_ms = exact->delay_ms;
	else if (any != NULL && any->has_delay)
		plan->delay_ms = any->delay_ms;
}

/* ---- counters ------------------------------------------------------------ */

static uint64_t count_hash(const char *name, size_t len, uint16_t type)
{
	return spfkit__namehash(name, len) ^ ((uint64_t)type * 0x9e3779b97f4a7c15u);
}

/* Open addressing in 2 * DNSD_MAX_NAMES slots, never more than half full. */
static uint32_t count_slot(struct dnsd *d, const char *name, size_t len, uint16_t type)
{
	size_t mask = 2u * DNSD_MAX_NAMES - 1, i = (size_t)count_hash(name, len, type) & mask;

	for (;;) {
		struct dnsd_count *c = &d->counts[i];

		if (c->name == NULL) {
			if (d->ncounts >= DNSD_MAX_NAMES)
				return UINT32_MAX;
			c->name = spfkit__strndup(d->alloc, name, len);
			if (c->name == NULL)
				return UINT32_MAX;
			c->len = len;
			c->type = type;
			d->ncounts++;
			return (uint32_t)i;
		}
		if (c->type == type && spfkit__memcaseeq(c->name, c->len, name, len))
			return (uint32_t)i;
		i = (i + 1) & mask;
	}
}

static void log_query(struct dnsd *d, uint32_t idx, uint16_t type, int tcp, uint64_t t_us)
{
	struct dnsd_logent *e;

	if (d->nlog >= DNSD_MAX_LOG) {
		d->c.log_dropped++;
		return;
	}
	if (d->log == NULL) {
		d->log = spfkit__calloc(d->alloc, DNSD_MAX_LOG, sizeof(*d->log));
		if (d->log == NULL) {
			d->c.log_dropped++;
			return;
		}
	}
	e = &d->log[d->nlog++];
	e->t_us = t_us;
	e->count_idx = idx;
	e->type = type;
	e->tcp = (uint8_t)tcp;
}

void dnsd__note_query(struct dnsd *d, const struct dnsd_wire_msg *q, int tcp, uint64_t t_us,
		      struct dnsd_plan *plan)
{
	/* Raw text, as the tests name things (and as the zone does). */
	uint32_t idx = count_slot(d, q->qraw, q->qraw_len, q->qtype);

	if (idx != UINT32_MAX)
		d->counts[idx].n++;
	log_query(d, idx, q->qtype, tcp, t_us);
	plan_for(d, q->qraw, q->qraw_len, q->qtype, plan);
}

void dnsd_counters(struct dnsd *d, struct dnsd_counters *out)
{
	pthread_mutex_lock(&d->mu);
	*out = d->c;
	pthread_mutex_unlock(&d->mu);
}

uint64_t dnsd_queries(struct dnsd *d)
{
	uint64_t n;

	pthread_mutex_lock(&d->mu);
	n = d->c.udp_queries + d->c.tcp_queries;
	pthread_mutex_unlock(&d->mu);
	return n;
}

void dnsd_reset_counters(struct dnsd *d)
{
	size_t i;

	pthread_mutex_lock(&d->mu);
	memset(&d->c, 0, sizeof(d->c));
	for (i = 0; i < 2u * DNSD_MAX_NAMES; i++) {
		spfkit__free(d->alloc, d->counts[i].name);
		memset(&d->counts[i], 0, sizeof(d->counts[i]));
	}
	d->ncounts = 0;
	d->nlog = 0;
	pthread_mutex_unlock(&d->mu);
}

uint64_t dnsd_query_count(struct dnsd *d, const char *name, uint16_t type)
{
	size_t i, len = dnsd__name_norm(name, strlen(name));
	uint64_t n = 0;

	pthread_mutex_lock(&d->mu);
	for (i = 0; i < 2u * DNSD_MAX_NAMES; i++) {
		const struct dnsd_count *c = &d->counts[i];

		if (c->name != NULL && (type == 0 || c->type == type) &&
		    spfkit__memcaseeq(c->name, c->len, name, len))
			n += c->n;
	}
	pthread_mutex_unlock(&d->mu);
	return n;
}

size_t dnsd_query_log(struct dnsd *d, struct dnsd_query *out, size_t max)
{
	size_t i, n;

	pthread_mutex_lock(&d->mu);
	n = d->nlog < max ? d->nlog : max;
	for (i = 0; i < n; i++) {
		const struct dnsd_logent *e = &d->log[i];
		size_t len = 0;

		out[i].t_us = e->t_us;
		out[i].type = e->type;
		out[i].tcp = e->tcp;
		if (e->count_idx != UINT32_MAX) {
			len = d->counts[e->count_idx].len;
			if (len > sizeof(out[i].name) - 1)
				len = sizeof(out[i].name) - 1;
			memcpy(out[i].name, d->counts[e->count_idx].name, len);
		}
		out[i].name[len] = '\0';
	}
	pthread_mutex_unlock(&d->mu);
	return n;
}

unsigned dnsd_rounds(struct dnsd *d, unsigned gap_ms)
{
	unsigned rounds = 0;
	size_t i;

	pthread_mutex_lock(&d->mu);
	for (i = 0; i < d->nlog; i++)
		if (i == 0 || d->log[i].t_us - d->log[i - 1].t_us > (uint64_t)gap_ms * 1000u)
			rounds++;
	pthread_mutex_unlock(&d->mu);
	return rounds;
}
