/*
 * bench_eval: spfkit's evaluator on the benchmark corpus.
 *
 * Three measures over the same zone and queries:
 *  - direct: spfkit_eval_new/step/answer with spfkit_zone_lookup() in
 *    the loop, the sans-I/O evaluator with nothing else around it, on
 *    one context whose record cache is warm;
 *  - check:  spfkit_check() through the zone resolver, the blocking
 *    convenience path a CLI takes;
 *  - cold:   direct, on a fresh context (no record cache) per
 *    evaluation, as a program checking one message pays.
 * All must give the same result on every query; the results go to
 * --results-out for bench_libspf2 --compare.
 *
 * usage: bench_eval --zone FILE --queries FILE [--seconds S | --rounds N]
 *                   [--limit N] [--mode direct|check|both|cold|all]
 *                   [--results-out FILE] [--intent FILE]
 */
#include <stdio.h>
#include <string.h>

#include <spfkit/spfkit.h>

#include "bench_common.h"
#include "core.h"

/* %{r}, and a fixed clock for %{t}: the same inputs every run. */
#define RECEIVER "mx.receiver.example"

enum mode { MODE_DIRECT = 1, MODE_CHECK = 2, MODE_BOTH = 3, MODE_COLD = 4, MODE_ALL = 7 };

struct options {
	const char *zone, *queries, *results_out, *intent;
	double seconds;
	size_t rounds, limit;
	int mode;
	int record_memo; /* the warm context remembers records by name (spfkit_config) */
};

struct run {
	const struct spfkit_ctx *ctx;
	const struct spfkit_zone *zone;
	struct spfkit_resolver *resolver;
	const struct spfkit_request *reqs;
	size_t errors;
	int first_error;
};

/* One evaluation driven by hand: every question answered at once from
 * the zone, as an event loop would when its answers are cached. */
static int eval_direct(const struct run *r, const struct spfkit_request *req, unsigned *res)
{
	struct spfkit_eval *ev;
	struct spfkit_question q;
	struct spfkit_dns_answer ans;
	int rc = spfkit_eval_new(r->ctx, req, &ev);
	int step;

	if (rc != 0)
		return rc;
	for (;;) {
		step = spfkit_eval_step(ev, &q);
		if (step != SPFKIT_STEP_QUERY)
			break;
		rc = spfkit_zone_lookup(r->zone, q.name, q.name_len, q.type, &ans);
		if (rc == 0)
			rc = spfkit_eval_answer(ev, q.id, &ans);
		if (rc != 0)
			break;
	}
	if (rc == 0 && step == SPFKIT_STEP_DONE)
		*res = (unsigned)spfkit_eval_result(ev)->code;
	else if (rc == 0)
		rc = step < 0 ? step : SPFKIT_ESTATE; /* WAIT with nothing outstanding */
	spfkit_eval_free(ev);
	return rc;
}

static int eval_check(const struct run *r, const struct spfkit_request *req, unsigned *res)
{
	struct spfkit_eval *ev = NULL;
	int rc = spfkit_check(r->ctx, r->resolver, req, &ev);

	if (rc == 0)
		*res = (unsigned)spfkit_eval_result(ev)->code;
	spfkit_eval_free(ev);
	return rc;
}

static void count_error(struct run *r, int rc)
{
	if (r->errors++ == 0)
		r->first_error = rc;
}

/* The timed loops; their names are what callgrind's --toggle-collect names. */
static int pass_direct(void *arg, size_t n)
{
	struct run *r = arg;
	unsigned res;
	size_t i;

	for (i = 0; i < n; i++) {
		int rc = eval_direct(r, &r->reqs[i], &res);

		if (rc != 0)
			count_error(r, rc);
	}
	return 0;
}

static int pass_check(void *arg, size_t n)
{
	struct run *r = arg;
	unsigned res;
	size_t i;

	for (i = 0; i < n; i++) {
		int rc = eval_check(r, &r->reqs[i], &res);

		if (rc != 0)
			count_error(r, rc);
	}
	return 0;
}

/* The configuration of every context here (cold ones add no cache). */
static void bench_config(struct spfkit_config *cfg)
{
	spfkit_config_init(cfg);
	cfg->receiver = RECEIVER;
	/* An in-memory zone answers at once: lookahead could only add lookups. */
	cfg->no_lookahead = 1;
}

/* A fresh context per evaluation, without a record cache: what a
 * program that checks one message and exits pays. */
static int eval_cold(const struct run *r, const struct spfkit_request *req, unsigned *res)
{
	struct spfkit_config cfg;
	struct spfkit_ctx *ctx;
	struct run one = *r;
	int rc;

	bench_config(&cfg);
	cfg.no_record_cache = 1;
	rc = spfkit_ctx_new(&cfg, &ctx);
	if (rc != 0)
		return rc;
	one.ctx = ctx;
	rc = eval_direct(&one, req, res);
	spfkit_ctx_free(ctx);
	return rc;
}

static int pass_cold(void *arg, size_t n)
{
	struct run *r = arg;
	unsigned res;
	size_t i;

	for (i = 0; i < n; i++) {
		int rc = eval_cold(r, &r->reqs[i], &res);

		if (rc != 0)
			count_error(r, rc);
	}
	return 0;
}

/* Untimed pass that keeps each result; it also warms the caches. */
static void collect(struct run *r, int mode, unsigned char *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned res = BENCH_ERROR;
		int rc = mode == MODE_CHECK  ? eval_check(r, &r->reqs[i], &res)
			 : mode == MODE_COLD ? eval_cold(r, &r->reqs[i], &res)
					     : eval_direct(r, &r->reqs[i], &res);

		if (rc != 0) {
			count_error(r, rc);
			res = BENCH_ERROR;
		}
		out[i] = (unsigned char)res;
	}
}

static int build_requests(const struct bench_queries *qs, size_t n, struct spfkit_request *reqs)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (bench_request("bench_eval", &qs->q[i], &reqs[i]) != 0)
			return -1;
	return 0;
}

/* How often spfkit's results match what the generator aimed for. */
static void print_intent(const char *path, const unsigned char *res, size_t n)
{
	unsigned char *want = spfkit__alloc(NULL, n);
	char err[256];
	size_t same = 0, i;

	if (want == NULL)
		return;
	if (bench_results_read(path, want, n, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_eval: %s\n", err);
	} else {
		for (i = 0; i < n; i++)
			same += want[i] == res[i];
		bench_print_distribution("generator intent", want, n);
		printf("spfkit matches the generator's intent on %zu of %zu queries (%.2f%%)\n", same,
		       n, 100.0 * (double)same / (double)n);
	}
	spfkit__free(NULL, want);
}

static int timed(struct run *r, int mode, const struct options *o, size_t n)
{
	struct bench_timing t;
	int rc;

	if (mode == MODE_DIRECT) {
		rc = bench_time(pass_direct, r, n, o->seconds, o->rounds, &t);
		if (rc == 0)
			bench_report("spfkit_direct", "spfkit direct (eval_step + zone_lookup)", &t);
	} else if (mode == MODE_COLD) {
		rc = bench_time(pass_cold, r, n, o->seconds, o->rounds, &t);
		if (rc == 0)
			bench_report("spfkit_cold", "spfkit cold (a fresh context per evaluation)", &t);
	} else {
		rc = bench_time(pass_check, r, n, o->seconds, o->rounds, &t);
		if (rc == 0)
			bench_report("spfkit_check", "spfkit_check() via zone resolver", &t);
	}
	return rc;
}

/* Direct and check (or cold) must agree on every query. */
static int cross_check(struct run *r, int mode, const unsigned char *direct, size_t n)
{
	unsigned char *other = spfkit__alloc(NULL, n);
	size_t diff = 0, i;

	if (other == NULL)
		return -1;
	collect(r, mode, other, n);
	for (i = 0; i < n; i++)
		diff += other[i] != direct[i];
	if (diff > 0)
		printf("WARNING: %s and the direct loop differ on %zu queries\n",
		       mode == MODE_COLD ? "fresh contexts" : "spfkit_check()", diff);
	spfkit__free(NULL, other);
	return diff == 0 ? 0 : -1;
}

static int run(struct run *r, const struct options *o, size_t n)
{
	unsigned char *res = spfkit__alloc(NULL, n);
	int first = o->mode == MODE_CHECK ? MODE_CHECK : o->mode == MODE_COLD ? MODE_COLD : MODE_DIRECT;
	int rc = 0;

	if (res == NULL)
		return -1;
	collect(r, first, res, n);
	bench_print_distribution("spfkit results", res, n);
	if ((o->mode & MODE_BOTH) == MODE_BOTH && cross_check(r, MODE_CHECK, res, n) != 0)
		rc = -1;
	if ((o->mode & MODE_COLD) && first != MODE_COLD && cross_check(r, MODE_COLD, res, n) != 0)
		rc = -1;
	if (o->intent != NULL)
		print_intent(o->intent, res, n);
	if (rc == 0 && o->results_out != NULL && bench_results_write(o->results_out, res, n) != 0) {
		fprintf(stderr, "bench_eval: cannot write %s\n", o->results_out);
		rc = -1;
	}
	if (rc == 0 && (o->mode & MODE_DIRECT))
		rc = timed(r, MODE_DIRECT, o, n);
	if (rc == 0 && (o->mode & MODE_CHECK))
		rc = timed(r, MODE_CHECK, o, n);
	if (rc == 0 && (o->mode & MODE_COLD))
		rc = timed(r, MODE_COLD, o, n);
	if (r->errors > 0)
		printf("spfkit: %zu evaluations ended in an API error (first: %s)\n", r->errors,
		       spfkit_strerror(r->first_error));
	spfkit__free(NULL, res);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_eval --zone FILE --queries FILE [--seconds S | --rounds N]\n"
			"                  [--limit N] [--mode direct|check|both|cold|all]\n"
			"                  [--results-out FILE] [--intent FILE] [--record-memo 0|1]\n");
	return 2;
}

static int parse_mode(const char *v, int *mode)
{
	if (strcmp(v, "direct") == 0)
		*mode = MODE_DIRECT;
	else if (strcmp(v, "check") == 0)
		*mode = MODE_CHECK;
	else if (strcmp(v, "both") == 0)
		*mode = MODE_BOTH;
	else if (strcmp(v, "cold") == 0)
		*mode = MODE_COLD;
	else if (strcmp(v, "all") == 0)
		*mode = MODE_ALL;
	else
		return -1;
	return 0;
}

static int parse_flag(const char *v, int *flag)
{
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
		return -1;
	*flag = v[0] == '1';
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->seconds = 3.0;
	o->mode = MODE_BOTH;
	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		int bad = 0;

		if (strcmp(k, "--zone") == 0)
			o->zone = v;
		else if (strcmp(k, "--queries") == 0)
			o->queries = v;
		else if (strcmp(k, "--results-out") == 0)
			o->results_out = v;
		else if (strcmp(k, "--intent") == 0)
			o->intent = v;
		else if (strcmp(k, "--mode") == 0)
			bad = parse_mode(v, &o->mode);
		else if (strcmp(k, "--record-memo") == 0)
			bad = parse_flag(v, &o->record_memo);
		else if (strcmp(k, "--seconds") == 0)
			bad = bench_parse_seconds(v, &o->seconds);
		else if (strcmp(k, "--rounds") == 0)
			bad = bench_parse_size(v, 1000000, &o->rounds);
		else if (strcmp(k, "--limit") == 0)
			bad = bench_parse_size(v, BENCH_MAX_QUERIES, &o->limit);
		else
			bad = 1;
		if (bad)
			return -1;
	}
	return (i == argc && o->zone && o->queries) ? 0 : -1;
}

static int load_zone(const char *path, struct spfkit_zone **zone)
{
	double t0 = bench_now();

	if (bench_zone_load("bench_eval", path, zone) != 0)
		return -1;
	printf("spfkit zone: %zu names loaded in %.2f s\n", spfkit_zone_size(*zone),
	       bench_now() - t0);
	return 0;
}

static int setup(struct run *r, struct spfkit_ctx **ctx, struct spfkit_zone *zone,
		 const struct options *o)
{
	struct spfkit_config cfg;
	int rc;

	bench_config(&cfg);
	cfg.record_memo = o->record_memo;
	rc = spfkit_ctx_new(&cfg, ctx);
	if (rc == 0)
		rc = spfkit_zone_resolver(zone, &r->resolver);
	if (rc != 0) {
		fprintf(stderr, "bench_eval: setup: %s\n", spfkit_strerror(rc));
		return -1;
	}
	r->ctx = *ctx;
	r->zone = zone;
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct bench_queries qs;
	struct spfkit_zone *zone = NULL;
	struct spfkit_ctx *ctx = NULL;
	struct spfkit_request *reqs = NULL;
	struct run r;
	char err[512];
	size_t n;
	int rc = 1;

	if (parse_args(argc, argv, &o) != 0)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows through a pipe */
	memset(&r, 0, sizeof(r));
	if (bench_queries_load(&qs, o.queries, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_eval: %s\n", err);
		bench_queries_free(&qs);
		return 1;
	}
	n = (o.limit > 0 && o.limit < qs.count) ? o.limit : qs.count;
	reqs = spfkit__calloc(NULL, n, sizeof(*reqs));
	if (reqs != NULL && load_zone(o.zone, &zone) == 0 && setup(&r, &ctx, zone, &o) == 0 &&
	    build_requests(&qs, n, reqs) == 0) {
		r.reqs = reqs;
		printf("spfkit %s, %zu queries\n", SPFKIT_VERSION_STRING, n);
		rc = run(&r, &o, n) == 0 ? 0 : 1;
		printf("spfkit peak RSS: %ld KiB\n", bench_peak_rss_kib());
	}
	spfkit_resolver_free(r.resolver);
	spfkit_ctx_free(ctx);
	spfkit_zone_free(zone);
	spfkit__free(NULL, reqs);
	bench_queries_free(&qs);
	return rc;
}
