/* Counters, their registry and the Prometheus text exposition (see metrics.h). */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include <spfkit/version.h>

#include "metrics.h"

/* Upper bounds of the buckets, in microseconds (metrics.h). */
static const uint64_t bucket_us[SPFKIT__METRICS_BUCKETS] = {
	500,     1000,    2500,    5000,     10000,    25000,    50000,    100000,
	250000,  500000,  1000000, 2500000,  5000000,  10000000, 15000000, 20000000,
};

static const char *const result_label[SPFKIT__METRICS_RESULTS] = {
	"none", "neutral", "pass", "fail", "softfail", "temperror", "permerror",
};

static const char *const identity_label[SPFKIT__METRICS_IDENTITIES] = {
	[SPFKIT_IDENTITY_MAILFROM] = "mailfrom",
	[SPFKIT_IDENTITY_HELO] = "helo",
};

static const char *const dns_type_label[SPFKIT__METRICS_DNS_TYPES] = {
	"TXT", "A", "AAAA", "MX", "PTR", "other",
};

static const char *const dns_outcome_label[SPFKIT__METRICS_DNS_OUTCOMES] = {
	"answer", "nodata", "nxdomain", "timeout", "servfail", "error",
};

struct spfkit__metrics {
	const char *name;
	pthread_mutex_t lock; /* the block list and the cache pointer */
	struct spfkit__metrics_block *blocks;
	struct spfkit_cache *cache;
};

int spfkit__metrics_new(const char *name, struct spfkit__metrics **out)
{
	struct spfkit__metrics *m = spfkit__zalloc(NULL, sizeof(*m));

	if (m == NULL)
		return SPFKIT_ENOMEM;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		spfkit__free(NULL, m);
		return SPFKIT_ENOMEM;
	}
	m->name = name;
	*out = m;
	return 0;
}

void spfkit__metrics_free(struct spfkit__metrics *m)
{
	if (m == NULL)
		return;
	while (m->blocks != NULL) {
		struct spfkit__metrics_block *b = m->blocks;

		m->blocks = b->next;
		spfkit__free(NULL, b);
	}
	pthread_mutex_destroy(&m->lock);
	spfkit__free(NULL, m);
}

struct spfkit__metrics_block *spfkit__metrics_block(struct spfkit__metrics *m)
{
	struct spfkit__metrics_block *b;

	if (m == NULL)
		return NULL;
	b = spfkit__zalloc(NULL, sizeof(*b));
	if (b == NULL)
		return NULL;
	pthread_mutex_lock(&m->lock);
	b->next = m->blocks;
	m->blocks = b;
	pthread_mutex_unlock(&m->lock);
	return b;
}

void spfkit__metrics_set_cache(struct spfkit__metrics *m, struct spfkit_cache *cache)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	m->cache = cache;
	pthread_mutex_unlock(&m->lock);
}

/* ---- counting ------------------------------------------------------------ */

void spfkit__metrics_observe(struct spfkit__metrics_hist *h, uint64_t us)
{
	unsigned i = 0;

	while (i < SPFKIT__METRICS_BUCKETS && us > bucket_us[i])
		i++;
	spfkit__metrics_bump(&h->bucket[i], 1);
	spfkit__metrics_bump(&h->sum_us, us);
}

void spfkit__metrics_check(struct spfkit__metrics_block *b, enum spfkit_identity id,
			   const struct spfkit_result *res, uint64_t us)
{
	if (b == NULL || res == NULL || (unsigned)id >= SPFKIT__METRICS_IDENTITIES ||
	    (unsigned)res->code >= SPFKIT__METRICS_RESULTS)
		return;
	spfkit__metrics_bump(&b->checks[id][res->code], 1);
	if (res->memo_answers > 0)
		spfkit__metrics_bump(&b->counters[SPFKIT__METRICS_MEMO_ANSWERS], res->memo_answers);
	spfkit__metrics_observe(&b->check_seconds, us);
}

enum spfkit__mta_kind spfkit__metrics_postfix_kind(const char *action)
{
	/* SMTPD_ACCESS_README: 4NN and DEFER* defer, 5NN and REJECT reject */
	if (strncmp(action, "dunno", 5) == 0)
		return SPFKIT__MTA_DUNNO;
	if (strncmp(action, "prepend", 7) == 0)
		return SPFKIT__MTA_PREPEND;
	if (action[0] == '5' || strncmp(action, "reject", 6) == 0)
		return SPFKIT__MTA_REJECT;
	if (action[0] == '4' || strncmp(action, "defer", 5) == 0)
		return SPFKIT__MTA_DEFER;
	return SPFKIT__MTA_RESTRICTION;
}

static enum spfkit__metrics_dns_type dns_type(uint16_t type)
{
	switch (type) {
	case SPFKIT_RR_TXT: return SPFKIT__METRICS_DNS_TXT;
	case SPFKIT_RR_A: return SPFKIT__METRICS_DNS_A;
	case SPFKIT_RR_AAAA: return SPFKIT__METRICS_DNS_AAAA;
	case SPFKIT_RR_MX: return SPFKIT__METRICS_DNS_MX;
	case SPFKIT_RR_PTR: return SPFKIT__METRICS_DNS_PTR;
	}
	return SPFKIT__METRICS_DNS_OTHER;
}

static int detail_has(const char *detail, const char *word)
{
	return detail != NULL && strstr(detail, word) != NULL;
}

enum spfkit__metrics_dns_outcome spfkit__metrics_dns_outcome(const struct spfkit_dns_answer *a)
{
	switch (a->status) {
	case SPFKIT_DNS_OK: return SPFKIT__METRICS_DNS_ANSWER;
	case SPFKIT_DNS_NODATA: return SPFKIT__METRICS_DNS_NODATA;
	case SPFKIT_DNS_NXDOMAIN: return SPFKIT__METRICS_DNS_NXDOMAIN;
	case SPFKIT_DNS_TEMPFAIL: break;
	}
	/* the details are the backends' static texts (lib/dns/cares.c, the
	 * zone's "timeout") and the checker's "Lookup_Time exceeded" */
	if (detail_has(a->detail, "timeout") || detail_has(a->detail, "Lookup_Time"))
		return SPFKIT__METRICS_DNS_TIMEOUT;
	if (detail_has(a->detail, "SERVFAIL") || detail_has(a->detail, "REFUSED"))
		return SPFKIT__METRICS_DNS_SERVFAIL;
	return SPFKIT__METRICS_DNS_ERROR;
}

void spfkit__metrics_dns(struct spfkit__metrics_block *b, uint16_t type,
			 const struct spfkit_dns_answer *answer, uint64_t us)
{
	if (b == NULL || answer == NULL)
		return;
	spfkit__metrics_bump(&b->dns[dns_type(type)][spfkit__metrics_dns_outcome(answer)], 1);
	spfkit__metrics_observe(&b->dns_seconds, us);
}

/* ---- the exposition ------------------------------------------------------- */

static uint64_t get(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* Every block summed: the same layout as one block, plain numbers. */
struct totals {
	uint64_t checks[SPFKIT__METRICS_IDENTITIES][SPFKIT__METRICS_RESULTS];
	uint64_t actions[SPFKIT__METRICS_ACTIONS];
	uint64_t dns[SPFKIT__METRICS_DNS_TYPES][SPFKIT__METRICS_DNS_OUTCOMES];
	uint64_t counters[SPFKIT__METRICS_COUNTERS];
	int64_t gauges[SPFKIT__METRICS_GAUGES];
	uint64_t check_bucket[SPFKIT__METRICS_BUCKETS + 1], check_sum_us;
	uint64_t dns_bucket[SPFKIT__METRICS_BUCKETS + 1], dns_sum_us;
};

static void add_hist(uint64_t *bucket, uint64_t *sum, const struct spfkit__metrics_hist *h)
{
	unsigned i;

	for (i = 0; i <= SPFKIT__METRICS_BUCKETS; i++)
		bucket[i] += get(&h->bucket[i]);
	*sum += get(&h->sum_us);
}

static void add_block(struct totals *t, const struct spfkit__metrics_block *b)
{
	unsigned i, k;

	for (i = 0; i < SPFKIT__METRICS_IDENTITIES; i++)
		for (k = 0; k < SPFKIT__METRICS_RESULTS; k++)
			t->checks[i][k] += get(&b->checks[i][k]);
	for (i = 0; i < SPFKIT__METRICS_ACTIONS; i++)
		t->actions[i] += get(&b->actions[i]);
	for (i = 0; i < SPFKIT__METRICS_DNS_TYPES; i++)
		for (k = 0; k < SPFKIT__METRICS_DNS_OUTCOMES; k++)
			t->dns[i][k] += get(&b->dns[i][k]);
	for (i = 0; i < SPFKIT__METRICS_COUNTERS; i++)
		t->counters[i] += get(&b->counters[i]);
	for (i = 0; i < SPFKIT__METRICS_GAUGES; i++)
		t->gauges[i] += atomic_load_explicit(&b->gauges[i], memory_order_relaxed);
	add_hist(t->check_bucket, &t->check_sum_us, &b->check_seconds);
	add_hist(t->dns_bucket, &t->dns_sum_us, &b->dns_seconds);
}

static void family(struct spfkit__buf *out, const char *name, const char *type, const char *help)
{
	spfkit__buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(struct spfkit__buf *out, const char *name, uint64_t v)
{
	spfkit__buf_printf(out, "%s %" PRIu64 "\n", name, v);
}

/* Microseconds as seconds, exactly (no floating point on the way). */
static void seconds(struct spfkit__buf *out, uint64_t us)
{
	spfkit__buf_printf(out, "%" PRIu64 ".%06" PRIu64, us / 1000000u, us % 1000000u);
}

static void histogram(struct spfkit__buf *out, const char *name, const char *help,
		      const uint64_t *bucket, uint64_t sum_us)
{
	uint64_t cum = 0;
	unsigned i;

	family(out, name, "histogram", help);
	for (i = 0; i < SPFKIT__METRICS_BUCKETS; i++) {
		cum += bucket[i];
		spfkit__buf_printf(out, "%s_bucket{le=\"", name);
		seconds(out, bucket_us[i]);
		spfkit__buf_printf(out, "\"} %" PRIu64 "\n", cum);
	}
	cum += bucket[SPFKIT__METRICS_BUCKETS];
	spfkit__buf_printf(out, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum ", name, cum, name);
	seconds(out, sum_us);
	spfkit__buf_printf(out, "\n%s_count %" PRIu64 "\n", name, cum);
}

static void render_checks(struct spfkit__buf *out, const struct totals *t)
{
	unsigned i, k;

	family(out, "spfkit_checks_total", "counter", "SPF evaluations by identity and result.");
	for (i = 0; i < SPFKIT__METRICS_IDENTITIES; i++)
		for (k = 0; k < SPFKIT__METRICS_RESULTS; k++)
			spfkit__buf_printf(out,
					   "spfkit_checks_total{identity=\"%s\",result=\"%s\"} %" PRIu64
					   "\n",
					   identity_label[i], result_label[k], t->checks[i][k]);
	family(out, "spfkit_actions_total", "counter", "What the daemon told the MTA, by action.");
	for (i = 0; i < SPFKIT__METRICS_ACTIONS; i++)
		spfkit__buf_printf(out, "spfkit_actions_total{action=\"%s\"} %" PRIu64 "\n",
				   spfkit__mta_kind_name((enum spfkit__mta_kind)i), t->actions[i]);
	histogram(out, "spfkit_check_duration_seconds",
		  "Time one identity's SPF evaluation took, DNS included.", t->check_bucket,
		  t->check_sum_us);
}

static void render_dns(struct spfkit__buf *out, const struct totals *t, struct spfkit_cache *cache)
{
	struct spfkit_cache_stats cs;
	unsigned i, k;

	family(out, "spfkit_dns_queries_total", "counter",
	       "DNS questions sent to the resolver (cache misses), by type and outcome.");
	for (i = 0; i < SPFKIT__METRICS_DNS_TYPES; i++)
		for (k = 0; k < SPFKIT__METRICS_DNS_OUTCOMES; k++)
			spfkit__buf_printf(out,
					   "spfkit_dns_queries_total{type=\"%s\",outcome=\"%s\"} %" PRIu64
					   "\n",
					   dns_type_label[i], dns_outcome_label[k], t->dns[i][k]);
	histogram(out, "spfkit_dns_duration_seconds",
		  "Time from sending a DNS question to its answer.", t->dns_bucket, t->dns_sum_us);
	spfkit_cache_stats(cache, &cs); /* NULL: zeros */
	family(out, "spfkit_dns_cache_hits_total", "counter",
	       "DNS questions answered from the answer cache.");
	one(out, "spfkit_dns_cache_hits_total", cs.hits);
	family(out, "spfkit_dns_cache_misses_total", "counter",
	       "DNS questions the answer cache did not have.");
	one(out, "spfkit_dns_cache_misses_total", cs.misses);
	family(out, "spfkit_dns_cache_entries", "gauge", "Answers held by the cache.");
	one(out, "spfkit_dns_cache_entries", cs.entries);
	family(out, "spfkit_dns_cache_bytes", "gauge", "Memory charged to the cache's answers.");
	one(out, "spfkit_dns_cache_bytes", cs.bytes);
	family(out, "spfkit_record_memo_answers_total", "counter",
	       "DNS questions the SPF record memo answered without asking.");
	one(out, "spfkit_record_memo_answers_total", t->counters[SPFKIT__METRICS_MEMO_ANSWERS]);
}

static void render_server(struct spfkit__buf *out, const struct totals *t, const char *name)
{
	family(out, "spfkit_connections_total", "counter", "Connections accepted.");
	one(out, "spfkit_connections_total", t->counters[SPFKIT__METRICS_CONNECTIONS]);
	family(out, "spfkit_connections_open", "gauge", "Connections open now.");
	spfkit__buf_printf(out, "spfkit_connections_open %" PRId64 "\n",
			   t->gauges[SPFKIT__METRICS_OPEN]);
	family(out, "spfkit_requests_total", "counter", "Requests received.");
	one(out, "spfkit_requests_total", t->counters[SPFKIT__METRICS_REQUESTS]);
	family(out, "spfkit_requests_in_flight", "gauge", "Requests being answered now.");
	spfkit__buf_printf(out, "spfkit_requests_in_flight %" PRId64 "\n",
			   t->gauges[SPFKIT__METRICS_IN_FLIGHT]);
	family(out, "spfkit_refused_total", "counter",
	       "Connections or requests refused by a limit.");
	one(out, "spfkit_refused_total", t->counters[SPFKIT__METRICS_REFUSED]);
	family(out, "spfkit_protocol_errors_total", "counter",
	       "Clients dropped for breaking the protocol.");
	one(out, "spfkit_protocol_errors_total", t->counters[SPFKIT__METRICS_PROTOCOL_ERRORS]);
	family(out, "spfkit_build_info", "gauge", "The daemon and the library version it runs.");
	spfkit__buf_printf(out, "spfkit_build_info{daemon=\"%s\",version=\"%s\"} 1\n", name,
			   spfkit_version());
}

int spfkit__metrics_render(struct spfkit__metrics *m, struct spfkit__buf *out)
{
	struct spfkit__metrics_block *b;
	struct spfkit_cache *cache;
	struct totals t;

	memset(&t, 0, sizeof(t));
	pthread_mutex_lock(&m->lock);
	for (b = m->blocks; b != NULL; b = b->next)
		add_block(&t, b);
	cache = m->cache;
	pthread_mutex_unlock(&m->lock);
	render_checks(out, &t);
	render_dns(out, &t, cache);
	render_server(out, &t, m->name);
	return out->err != 0 ? SPFKIT_ENOMEM : 0;
}
