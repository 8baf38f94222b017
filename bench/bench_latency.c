/*
 * bench_latency: sequential DNS round trips per evaluation, over real
 * DNS on loopback (issue 3 point 8).
 *
 * tests/dnsd serves the corpus zone on 127.0.0.1 and holds every answer
 * back by the same delay (10 ms unless --delay-ms); a sample of the
 * corpus queries is evaluated with spfkit_check() through the c-ares
 * backend.
 *  - cold: no answer cache anywhere (c-ares keeps none). Each query is
 *    evaluated strict (no_lookahead) and then with lookahead, back to
 *    back, so both see the same load. Wall time / delay is the number of
 *    round trips taken; spfkit_result.depth, the longest chain of
 *    answers the result needed, is the fewest any resolver could take.
 *    Questions per evaluation are printed for both modes too (mean and
 *    maximum, issue 7): lookahead may ask early, not ask much more.
 *  - warm: a struct spfkit_cache over the same c-ares resolver, filled
 *    by one pass in each mode, then timed; its counters and dnsd's show
 *    whether any question still reached the server.
 *
 * Exits 1 when a query's result differs between the two modes, or an
 * evaluation fails outright: lookahead must never change a result.
 *
 * usage: bench_latency --zone FILE --queries FILE [--sample N]
 *                      [--delay-ms MS] [--timeout-ms MS] [--seconds S]
 *                      [--worst N]
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <spfkit/cache.h>
#include <spfkit/cares.h>
#include <spfkit/spfkit.h>
#include <spfkit/zone.h>

#include "bench_common.h"
#include "core.h"
#include "dnsd.h"

/* The same inputs as bench_eval: %{r}, and a fixed clock for %{t}. */
#define RECEIVER "mx.receiver.example"

#define DEFAULT_SAMPLE 400u
#define DEFAULT_DELAY_MS 10u
#define MAX_DELAY_MS 1000u
/* Per c-ares try: far above the delay, so no question is ever sent
 * twice and a round trip is one answer's delay, not a retransmission. */
#define DEFAULT_TIMEOUT_MS 1000u
#define MAX_WORST 50u
#define MAX_LOG 256u /* queries shown per --worst evaluation */

enum { STRICT = 0, LOOKAHEAD = 1, NMODES = 2 };
static const char *const mode_name[NMODES] = {"strict", "lookahead"};

struct options {
	const char *zone, *queries;
	size_t sample, delay_ms, timeout_ms, worst;
	double seconds;
};

/* One evaluation, measured. */
struct one {
	double rt;          /* wall time / delay */
	unsigned depth;     /* spfkit_result.depth */
	unsigned queries;   /* spfkit_result.queries */
	unsigned bursts;    /* dnsd_rounds(): round trips as the server saw them */
	struct dnsd_counters srv;
	unsigned char code; /* enum bench_res */
};

struct bench {
	struct dnsd *dnsd;
	struct spfkit_resolver *dns; /* c-ares against dnsd */
	struct spfkit_ctx *ctx[NMODES];
	struct spfkit_request *reqs;
	const struct bench_query **src; /* the query line behind each request */
	size_t n;
	unsigned delay_ms;
	struct one *cold; /* [i * NMODES + mode] */
	size_t errors;
	int first_error;
};

static void count_error(struct bench *b, int rc)
{
	if (b->errors++ == 0)
		b->first_error = rc;
}

/* ---- setup ---------------------------------------------------------- */

/* Every k-th query from the first, k = count / want: spread over the
 * whole file, and the same sample every run. */
static size_t sample_stride(size_t count, size_t want)
{
	if (want == 0 || want >= count)
		return 1;
	return count / want;
}

static int build_requests(struct bench *b, const struct bench_queries *qs, size_t stride)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		b->src[i] = &qs->q[i * stride];
		if (bench_request("bench_latency", b->src[i], &b->reqs[i]) != 0)
			return -1;
	}
	return 0;
}

static int make_contexts(struct bench *b)
{
	struct spfkit_config cfg;
	int mode, rc = 0;

	for (mode = 0; mode < NMODES && rc == 0; mode++) {
		spfkit_config_init(&cfg);
		cfg.receiver = RECEIVER;
		cfg.no_lookahead = mode == STRICT;
		rc = spfkit_ctx_new(&cfg, &b->ctx[mode]);
	}
	if (rc != 0)
		fprintf(stderr, "bench_latency: context: %s\n", spfkit_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* dnsd on 127.0.0.1, a free port, every answer delayed; c-ares aimed at it. */
static int start_dns(struct bench *b, const struct spfkit_zone *zone, const struct options *o)
{
	struct dnsd_options dopt;
	struct spfkit_cares_options copt;
	char servers[64], err[256] = "";
	int rc, len;

	memset(&dopt, 0, sizeof(dopt));
	dopt.addr = "127.0.0.1";
	dopt.delay_ms = b->delay_ms;
	rc = dnsd_start(&dopt, zone, &b->dnsd);
	if (rc != 0) {
		fprintf(stderr, "bench_latency: dnsd: %s\n", spfkit_strerror(rc));
		return -1;
	}
	len = snprintf(servers, sizeof(servers), "127.0.0.1:%d", dnsd_port(b->dnsd));
	if (len < 0 || (size_t)len >= sizeof(servers))
		return -1;
	spfkit_cares_options_init(&copt);
	copt.servers = servers;
	copt.timeout_ms = (int)o->timeout_ms;
	rc = spfkit_cares_new(&copt, NULL, &b->dns, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "bench_latency: c-ares: %s\n", err[0] ? err : spfkit_strerror(rc));
		return -1;
	}
	return 0;
}

/* ---- cold cache: round trips ---------------------------------------- */

static void take_result(const struct spfkit_eval *ev, struct one *out)
{
	const struct spfkit_result *res = spfkit_eval_result(ev);

	out->code = (unsigned char)res->code;
	out->depth = res->depth;
	out->queries = res->queries;
}

/* One evaluation through c-ares, the server's counters zeroed before it
 * (every question of the one before was received before its result). */
static void measure(struct bench *b, int mode, size_t i, struct one *out)
{
	struct spfkit_eval *ev = NULL;
	double t0, t1;
	int rc;

	memset(out, 0, sizeof(*out));
	dnsd_reset_counters(b->dnsd);
	t0 = bench_now();
	rc = spfkit_check(b->ctx[mode], b->dns, &b->reqs[i], &ev);
	t1 = bench_now();
	out->rt = (t1 - t0) * 1000.0 / (double)b->delay_ms;
	out->bursts = dnsd_rounds(b->dnsd, b->delay_ms / 2u);
	dnsd_counters(b->dnsd, &out->srv);
	if (rc == 0) {
		take_result(ev, out);
	} else {
		count_error(b, rc);
		out->code = BENCH_ERROR;
	}
	spfkit_eval_free(ev);
}

static void run_cold(struct bench *b)
{
	size_t i;
	int mode;

	for (i = 0; i < b->n; i++)
		for (mode = 0; mode < NMODES; mode++)
			measure(b, mode, i, &b->cold[i * NMODES + (size_t)mode]);
}

/*
 * The minimum for query i: spfkit_result.depth, which does not depend on
 * the mode (agreement() counts any query where it does, as a bug).
 */
static unsigned min_depth(const struct bench *b, size_t i)
{
	return b->cold[i * NMODES + STRICT].depth;
}

struct sums {
	double rt, depth, queries, bursts;
	unsigned max_queries;
	uint64_t udp, tcp, truncated;
};

static void sum_mode(const struct bench *b, int mode, struct sums *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < b->n; i++) {
		const struct one *e = &b->cold[i * NMODES + (size_t)mode];

		s->rt += e->rt;
		s->depth += e->depth;
		s->queries += e->queries;
		if (e->queries > s->max_queries)
			s->max_queries = e->queries;
		s->bursts += e->bursts;
		s->udp += e->srv.udp_queries;
		s->tcp += e->srv.tcp_queries;
		s->truncated += e->srv.truncated;
	}
}

static double sum_min_depth(const struct bench *b)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < b->n; i++)
		sum += min_depth(b, i);
	return sum;
}

static void print_mode(const struct bench *b, int mode, const struct sums *s)
{
	double n = (double)b->n;

	printf("  %-9s %5.2f RT/eval (%.1f ms), %.2f questions/eval; dnsd received %llu "
	       "(%llu UDP, %llu TCP, %llu answers truncated), %.2f bursts/eval\n",
	       mode_name[mode], s->rt / n, s->rt / n * b->delay_ms, s->queries / n,
	       (unsigned long long)(s->udp + s->tcp), (unsigned long long)s->udp,
	       (unsigned long long)s->tcp, (unsigned long long)s->truncated, s->bursts / n);
}

/* Issue 7: lookahead may ask early, not ask much more (§4.6.4, §11.1). */
static void print_questions(const struct sums s[NMODES], double n)
{
	printf("  questions/eval: strict %.2f (max %u), lookahead %.2f (max %u): "
	       "lookahead/strict = %.2fx (target: <= 1.25x, max not above strict's)\n",
	       s[STRICT].queries / n, s[STRICT].max_queries, s[LOOKAHEAD].queries / n,
	       s[LOOKAHEAD].max_queries,
	       s[STRICT].queries > 0 ? s[LOOKAHEAD].queries / s[STRICT].queries : 0.0);
}

/* Lookahead evaluations by round trips beyond the minimum (rounded). */
static void print_excess(const struct bench *b)
{
	size_t extra[4] = {0};
	size_t i;

	for (i = 0; i < b->n; i++) {
		double rt = b->cold[i * NMODES + LOOKAHEAD].rt;
		long x = (long)(rt + 0.5) - (long)min_depth(b, i); /* rt >= 0: rounded */

		extra[x <= 0 ? 0 : x >= 3 ? 3 : x]++;
	}
	printf("  lookahead vs minimum: %zu at it, %zu +1 RT, %zu +2 RT, %zu +3 RT or more\n",
	       extra[0], extra[1], extra[2], extra[3]);
}

static void agreement(const struct bench *b, size_t *codes, size_t *depths)
{
	size_t i;

	*codes = *depths = 0;
	for (i = 0; i < b->n; i++) {
		const struct one *e = &b->cold[i * NMODES];

		*codes += e[STRICT].code != e[LOOKAHEAD].code;
		*depths += e[STRICT].depth != e[LOOKAHEAD].depth;
	}
}

#define MAX_SHOWN_DISAGREEMENTS 5u

/* The first few queries on which the two modes differ, to look into. */
static void show_disagreements(const struct bench *b)
{
	size_t i, shown = 0;

	for (i = 0; i < b->n && shown < MAX_SHOWN_DISAGREEMENTS; i++) {
		const struct one *e = &b->cold[i * NMODES];
		const struct bench_query *q = b->src[i];

		if (e[STRICT].code == e[LOOKAHEAD].code && e[STRICT].depth == e[LOOKAHEAD].depth)
			continue;
		printf("    line %u: %s %s %s: strict %s depth %u, lookahead %s depth %u\n",
		       q->line, q->ip, q->sender_len ? q->sender : "<>", q->helo,
		       bench_res_name(e[STRICT].code), e[STRICT].depth,
		       bench_res_name(e[LOOKAHEAD].code), e[LOOKAHEAD].depth);
		shown++;
	}
}

static void print_distribution(const struct bench *b)
{
	unsigned char *res = spfkit__alloc(NULL, b->n);
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < b->n; i++)
		res[i] = b->cold[i * NMODES + LOOKAHEAD].code;
	bench_print_distribution("  results", res, b->n);
	spfkit__free(NULL, res);
}

static void report_agreement(const struct bench *b, size_t *codes, size_t *depths)
{
	agreement(b, codes, depths);
	printf("  disagreements: %zu result codes (must be 0), %zu depths (must be 0), "
	       "of %zu queries\n",
	       *codes, *depths, b->n);
	if (*codes + *depths > 0)
		show_disagreements(b);
}

/* Returns the number of queries whose result code differs by mode. */
static size_t report_cold(const struct bench *b)
{
	struct sums s[NMODES];
	double n = (double)b->n, min = sum_min_depth(b) / n;
	size_t codes, depths;

	sum_mode(b, STRICT, &s[STRICT]);
	sum_mode(b, LOOKAHEAD, &s[LOOKAHEAD]);
	print_distribution(b);
	print_mode(b, STRICT, &s[STRICT]);
	print_mode(b, LOOKAHEAD, &s[LOOKAHEAD]);
	printf("  minimum   %5.2f RT/eval (mean spfkit_result.depth; strict's %.2f, "
	       "lookahead's %.2f)\n",
	       min, s[STRICT].depth / n, s[LOOKAHEAD].depth / n);
	printf("  lookahead/minimum = %.2fx (target: <= 1.05x), strict/minimum = %.2fx\n",
	       s[LOOKAHEAD].rt / n / min, s[STRICT].rt / n / min);
	print_questions(s, n);
	print_excess(b);
	report_agreement(b, &codes, &depths);
	printf("#BENCH latency delay_ms=%u sample=%zu strict_rt=%.2f lookahead_rt=%.2f "
	       "min_rt=%.2f ratio=%.2f strict_q=%.2f lookahead_q=%.2f strict_served=%llu "
	       "lookahead_served=%llu disagree=%zu depth_disagree=%zu strict_qmax=%u "
	       "lookahead_qmax=%u q_ratio=%.2f\n",
	       b->delay_ms, b->n, s[STRICT].rt / n, s[LOOKAHEAD].rt / n, min,
	       s[LOOKAHEAD].rt / n / min, s[STRICT].queries / n, s[LOOKAHEAD].queries / n,
	       (unsigned long long)(s[STRICT].udp + s[STRICT].tcp),
	       (unsigned long long)(s[LOOKAHEAD].udp + s[LOOKAHEAD].tcp), codes, depths,
	       s[STRICT].max_queries, s[LOOKAHEAD].max_queries,
	       s[STRICT].queries > 0 ? s[LOOKAHEAD].queries / s[STRICT].queries : 0.0);
	return codes;
}

/* ---- cold cache: the evaluations furthest from their minimum --------- */

/* The query with the largest lookahead excess not yet shown, or b->n. */
static size_t next_worst(const struct bench *b, const unsigned char *shown)
{
	size_t i, best = b->n;
	double best_x = 0.5; /* less than half a round trip over is noise */

	for (i = 0; i < b->n; i++) {
		double x = b->cold[i * NMODES + LOOKAHEAD].rt - (double)min_depth(b, i);

		if (!shown[i] && x > best_x) {
			best = i;
			best_x = x;
		}
	}
	return best;
}

/* Evaluate query i again with lookahead and print what dnsd received,
 * each question with its arrival time after the first. */
static void show_one(struct bench *b, size_t i, struct dnsd_query *log)
{
	const struct bench_query *q = b->src[i];
	const struct one *e = &b->cold[i * NMODES];
	struct one again;
	size_t k, n;

	printf("  line %u: %s %s %s: %s, minimum %u, strict %.2f RT, lookahead %.2f RT\n",
	       q->line, q->ip, q->sender_len ? q->sender : "<>", q->helo,
	       bench_res_name(e[LOOKAHEAD].code), min_depth(b, i), e[STRICT].rt,
	       e[LOOKAHEAD].rt);
	measure(b, LOOKAHEAD, i, &again);
	n = dnsd_query_log(b->dnsd, log, MAX_LOG);
	for (k = 0; k < n; k++)
		printf("    %+7.1f ms  %-5u %s%s\n", (double)(log[k].t_us - log[0].t_us) / 1000.0,
		       (unsigned)log[k].type, log[k].name, log[k].tcp ? " (TCP)" : "");
}

static void show_worst(struct bench *b, size_t count)
{
	unsigned char *shown = spfkit__calloc(NULL, b->n, 1);
	struct dnsd_query *log = spfkit__calloc(NULL, MAX_LOG, sizeof(*log));
	size_t k, i;

	if (shown != NULL && log != NULL && next_worst(b, shown) == b->n) {
		printf("  no lookahead evaluation took half a round trip or more above its "
		       "minimum\n");
	} else if (shown != NULL && log != NULL) {
		printf("  lookahead evaluations furthest above their minimum, run again (questions "
		       "as dnsd received them; type 1 A, 15 MX, 16 TXT, 28 AAAA):\n");
		for (k = 0; k < count; k++) {
			i = next_worst(b, shown);
			if (i == b->n)
				break;
			shown[i] = 1;
			show_one(b, i, log);
		}
	}
	spfkit__free(NULL, shown);
	spfkit__free(NULL, log);
}

/* ---- warm cache: evaluations per second ----------------------------- */

struct warm {
	struct bench *b;
	struct spfkit_resolver *r; /* the cache layer over b->dns */
	int mode;
};

static int pass_warm(void *arg, size_t n)
{
	struct warm *w = arg;
	size_t i;

	for (i = 0; i < n; i++) {
		struct spfkit_eval *ev = NULL;
		int rc = spfkit_check(w->b->ctx[w->mode], w->r, &w->b->reqs[i], &ev);

		if (rc != 0)
			count_error(w->b, rc);
		spfkit_eval_free(ev);
	}
	return 0;
}

#define MAX_SHOWN_SERVED 8u

/* Which questions got past the cache: the first few dnsd received. */
static void show_served(struct dnsd *d)
{
	struct dnsd_query log[MAX_SHOWN_SERVED];
	size_t k, n = dnsd_query_log(d, log, MAX_SHOWN_SERVED);

	printf("    first questions that reached dnsd:");
	for (k = 0; k < n; k++)
		printf(" %s/%u", log[k].name, (unsigned)log[k].type);
	printf("\n");
}

/* One timed run in `mode`, with the cache's and dnsd's counters for it. */
static int time_warm(struct warm *w, struct spfkit_cache *cache, double seconds)
{
	static const char *const key[NMODES] = {"warm_strict", "warm_lookahead"};
	struct spfkit_cache_stats s0, s1;
	struct bench_timing t;
	uint64_t served;
	char label[64];
	int rc;

	spfkit_cache_stats(cache, &s0);
	dnsd_reset_counters(w->b->dnsd);
	rc = bench_time(pass_warm, w, w->b->n, seconds, 0, &t);
	if (rc != 0)
		return rc;
	served = dnsd_queries(w->b->dnsd);
	spfkit_cache_stats(cache, &s1);
	snprintf(label, sizeof(label), "  warm cache, %s", mode_name[w->mode]);
	bench_report(key[w->mode], label, &t);
	printf("    cache: %llu hits, %llu misses; dnsd received %llu queries\n",
	       (unsigned long long)(s1.hits - s0.hits), (unsigned long long)(s1.misses - s0.misses),
	       (unsigned long long)served);
	if (served > 0)
		show_served(w->b->dnsd);
	printf("#BENCH %s_cache hits=%llu misses=%llu served=%llu\n", key[w->mode],
	       (unsigned long long)(s1.hits - s0.hits),
	       (unsigned long long)(s1.misses - s0.misses), (unsigned long long)served);
	return 0;
}

static int run_warm(struct bench *b, double seconds)
{
	struct spfkit_cache *cache = NULL;
	struct spfkit_cache_stats s;
	struct warm w;
	int rc;

	memset(&w, 0, sizeof(w));
	w.b = b;
	rc = spfkit_cache_new(NULL, NULL, &cache);
	if (rc == 0)
		rc = spfkit_cache_resolver(cache, b->dns, &w.r);
	/* Fill: each mode once, lookahead first as it asks more (but what it
	 * was still waiting for when the result came is cancelled, not kept). */
	for (w.mode = LOOKAHEAD; rc == 0 && w.mode >= STRICT; w.mode--)
		rc = pass_warm(&w, b->n);
	if (rc == 0) {
		spfkit_cache_stats(cache, &s);
		printf("  cache filled: %zu entries, %zu bytes\n", s.entries, s.bytes);
	}
	for (w.mode = STRICT; rc == 0 && w.mode < NMODES; w.mode++)
		rc = time_warm(&w, cache, seconds);
	if (rc != 0)
		fprintf(stderr, "bench_latency: warm cache: %s\n", spfkit_strerror(rc));
	spfkit_resolver_free(w.r);
	spfkit_cache_free(cache);
	return rc;
}

/* ---- main ----------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: bench_latency --zone FILE --queries FILE [--sample N]\n"
			"                     [--delay-ms MS] [--timeout-ms MS] [--seconds S]\n"
			"                     [--worst N]\n");
	return 2;
}

static int parse_option(struct options *o, const char *k, const char *v)
{
	if (strcmp(k, "--zone") == 0)
		o->zone = v;
	else if (strcmp(k, "--queries") == 0)
		o->queries = v;
	else if (strcmp(k, "--sample") == 0)
		return bench_parse_size(v, BENCH_MAX_QUERIES, &o->sample);
	else if (strcmp(k, "--delay-ms") == 0)
		return bench_parse_size(v, MAX_DELAY_MS, &o->delay_ms);
	else if (strcmp(k, "--timeout-ms") == 0)
		return bench_parse_size(v, 60000, &o->timeout_ms);
	else if (strcmp(k, "--seconds") == 0)
		return bench_parse_seconds(v, &o->seconds);
	else if (strcmp(k, "--worst") == 0)
		return bench_parse_size(v, MAX_WORST, &o->worst);
	else
		return -1;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->sample = DEFAULT_SAMPLE;
	o->delay_ms = DEFAULT_DELAY_MS;
	o->timeout_ms = DEFAULT_TIMEOUT_MS;
	o->seconds = 1.0;
	for (i = 1; i + 1 < argc; i += 2)
		if (parse_option(o, argv[i], argv[i + 1]) != 0)
			return -1;
	/* A delay of 0 would make "round trips" a division by zero. */
	if (o->delay_ms == 0 || o->sample == 0 || o->timeout_ms == 0)
		return -1;
	return (i == argc && o->zone && o->queries) ? 0 : -1;
}

static int run(struct bench *b, const struct options *o, size_t total, size_t stride)
{
	double t0 = bench_now();
	size_t differ;

	printf("cold cache, %u ms per answer, %zu of %zu queries (one in %zu), each strict "
	       "then with lookahead:\n",
	       b->delay_ms, b->n, total, stride);
	run_cold(b);
	differ = report_cold(b);
	if (o->worst > 0)
		show_worst(b, o->worst);
	printf("  (cold passes took %.1f s)\n", bench_now() - t0);
	printf("warm cache (struct spfkit_cache over the same c-ares resolver):\n");
	if (run_warm(b, o->seconds) != 0)
		return -1;
	if (b->errors > 0)
		printf("bench_latency: %zu evaluations ended in an API error (first: %s)\n",
		       b->errors, spfkit_strerror(b->first_error));
	/* Issue 3: lookahead must never change a result. A failed run says
	 * so, the benchmark's test in the bench suite included. */
	if (differ > 0 || b->errors > 0) {
		printf("FAIL: %zu results differ by mode, %zu API errors\n", differ, b->errors);
		return -1;
	}
	return 0;
}

static int prepare(struct bench *b, const struct options *o, const struct bench_queries *qs,
		   struct spfkit_zone *zone, size_t stride)
{
	b->delay_ms = (unsigned)o->delay_ms;
	b->n = qs->count / stride;
	if (b->n > o->sample)
		b->n = o->sample;
	b->reqs = spfkit__calloc(NULL, b->n, sizeof(*b->reqs));
	b->src = spfkit__calloc(NULL, b->n, sizeof(*b->src));
	b->cold = spfkit__calloc(NULL, b->n, NMODES * sizeof(*b->cold));
	if (b->reqs == NULL || b->src == NULL || b->cold == NULL) {
		fprintf(stderr, "bench_latency: out of memory\n");
		return -1;
	}
	if (build_requests(b, qs, stride) != 0 || make_contexts(b) != 0)
		return -1;
	return start_dns(b, zone, o);
}

static void teardown(struct bench *b)
{
	int mode;

	spfkit_resolver_free(b->dns);
	dnsd_stop(b->dnsd);
	for (mode = 0; mode < NMODES; mode++)
		spfkit_ctx_free(b->ctx[mode]);
	spfkit__free(NULL, b->reqs);
	spfkit__free(NULL, b->src);
	spfkit__free(NULL, b->cold);
}

int main(int argc, char **argv)
{
	struct options o;
	struct bench_queries qs;
	struct spfkit_zone *zone = NULL;
	struct bench b;
	char err[512];
	size_t stride;
	int rc = 1;

	if (parse_args(argc, argv, &o) != 0)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows through a pipe */
	memset(&b, 0, sizeof(b));
	if (bench_queries_load(&qs, o.queries, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_latency: %s\n", err);
		bench_queries_free(&qs);
		return 1;
	}
	stride = sample_stride(qs.count, o.sample);
	if (qs.count > 0 && bench_zone_load("bench_latency", o.zone, &zone) == 0 &&
	    prepare(&b, &o, &qs, zone, stride) == 0)
		rc = run(&b, &o, qs.count, stride) == 0 ? 0 : 1;
	teardown(&b);
	spfkit_zone_free(zone);
	bench_queries_free(&qs);
	return rc;
}
