/*
 * bench_libspf2: libspf2, the peer we measure against, on the benchmark
 * corpus, through a hashed in-memory DNS layer (spf2_zone.c), timed the
 * same way as bench_eval. With --compare it reads spfkit's results
 * (bench_eval --results-out) and prints the agreement on every query.
 *
 * usage: bench_libspf2 --zone FILE --queries FILE [--seconds S | --rounds N]
 *                      [--limit N] [--results-out FILE] [--compare FILE]
 *                      [--examples N]
 */
#include <stdio.h>
#include <string.h>

#include "bench_common.h"
#include "core.h"
#include "spf2_zone.h"

/* %{r} and the default explanation, the same as bench_eval gives spfkit. */
#define RECEIVER "mx.receiver.example"
#define EXPLANATION "%{o} does not designate %{i} as permitted sender"

struct client_ip {
	int v6;
	struct in_addr a4;
	struct in6_addr a6;
};

struct run {
	SPF_server_t *server;
	const struct bench_queries *qs;
	const struct client_ip *ips;
	size_t errors;
};

struct options {
	const char *zone, *queries, *results_out, *compare;
	double seconds;
	size_t rounds, limit, examples;
};

static unsigned map_result(SPF_result_t r)
{
	switch (r) {
	case SPF_RESULT_NONE: return BENCH_NONE;
	case SPF_RESULT_NEUTRAL: return BENCH_NEUTRAL;
	case SPF_RESULT_PASS: return BENCH_PASS;
	case SPF_RESULT_FAIL: return BENCH_FAIL;
	case SPF_RESULT_SOFTFAIL: return BENCH_SOFTFAIL;
	case SPF_RESULT_TEMPERROR: return BENCH_TEMPERROR;
	case SPF_RESULT_PERMERROR: return BENCH_PERMERROR;
	case SPF_RESULT_INVALID: return BENCH_INVALID;
	}
	return BENCH_ERROR;
}

/* The identities, in the order that costs libspf2 least: an empty MAIL
 * FROM needs the HELO name first (postmaster@helo, RFC 7208 §2.4). */
static int set_identities(SPF_request_t *req, const struct bench_query *q)
{
	if (q->sender_len == 0)
		return SPF_request_set_helo_dom(req, q->helo) ||
		       SPF_request_set_env_from(req, q->sender);
	return SPF_request_set_env_from(req, q->sender) ||
	       SPF_request_set_helo_dom(req, q->helo);
}

static unsigned eval_one(SPF_server_t *server, const struct bench_query *q,
			 const struct client_ip *ip)
{
	SPF_request_t *req = SPF_request_new(server);
	SPF_response_t *resp = NULL;
	unsigned res = BENCH_ERROR;

	if (req == NULL)
		return BENCH_ERROR;
	if (ip->v6)
		SPF_request_set_ipv6(req, ip->a6);
	else
		SPF_request_set_ipv4(req, ip->a4);
	if (set_identities(req, q) == 0) {
		SPF_request_query_mailfrom(req, &resp);
		if (resp != NULL)
			res = map_result(SPF_response_result(resp));
	}
	if (resp != NULL)
		SPF_response_free(resp);
	SPF_request_free(req);
	return res;
}

/* The timed loop; its name is what callgrind's --toggle-collect names. */
static int pass_libspf2(void *arg, size_t n)
{
	struct run *r = arg;
	size_t i;

	for (i = 0; i < n; i++)
		if (eval_one(r->server, &r->qs->q[i], &r->ips[i]) == BENCH_ERROR)
			r->errors++;
	return 0;
}

static int parse_ips(const struct bench_queries *qs, size_t n, struct client_ip *ips)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct bench_query *q = &qs->q[i];

		ips[i].v6 = memchr(q->ip, ':', q->ip_len) != NULL;
		if (ips[i].v6 ? inet_pton(AF_INET6, q->ip, &ips[i].a6) != 1
			      : inet_pton(AF_INET, q->ip, &ips[i].a4) != 1) {
			fprintf(stderr, "bench_libspf2: line %u: bad IP address \"%.60s\"\n", q->line,
				q->ip);
			return -1;
		}
	}
	return 0;
}

/* libspf2 logs through process-wide handlers; keep its notes off stderr. */
static void quiet(const char *file, int line, const char *msg)
{
	(void)file;
	(void)line;
	(void)msg;
}

static SPF_server_t *server_new(SPF_dns_server_t *dns)
{
	SPF_server_t *server = SPF_server_new_dns(dns, 0);
	SPF_response_t *resp = NULL;

	if (server == NULL)
		return NULL;
	if (SPF_server_set_rec_dom(server, RECEIVER) != SPF_E_SUCCESS ||
	    SPF_server_set_explanation(server, EXPLANATION, &resp) != SPF_E_SUCCESS) {
		fprintf(stderr, "bench_libspf2: cannot configure the SPF server\n");
		if (resp != NULL)
			SPF_response_free(resp);
		SPF_server_free(server);
		return NULL;
	}
	if (resp != NULL)
		SPF_response_free(resp);
	return server;
}

static void print_example(const struct bench_query *q, unsigned ours, unsigned theirs)
{
	printf("      e.g. line %u: %s %s %s: spfkit %s, libspf2 %s\n", q->line, q->ip,
	       q->sender_len ? q->sender : "<>", q->helo, bench_res_name(ours),
	       bench_res_name(theirs));
}

/* Each kind of disagreement with its count and its first examples. */
static void print_pairs(const struct bench_queries *qs, const unsigned char *ours,
			const unsigned char *theirs, size_t n, size_t examples)
{
	size_t pairs[BENCH_NRES][BENCH_NRES] = {{0}};
	size_t i;
	unsigned a, b;

	for (i = 0; i < n; i++)
		if (ours[i] != theirs[i])
			pairs[ours[i]][theirs[i]]++;
	printf("  disagreements, spfkit -> libspf2:\n");
	for (a = 0; a < BENCH_NRES; a++) {
		for (b = 0; b < BENCH_NRES; b++) {
			size_t shown = 0;

			if (pairs[a][b] == 0)
				continue;
			printf("    %-10s -> %-10s %zu\n", bench_res_name(a), bench_res_name(b),
			       pairs[a][b]);
			for (i = 0; i < n && shown < examples; i++) {
				if (ours[i] == a && theirs[i] == b) {
					print_example(&qs->q[i], a, b);
					shown++;
				}
			}
		}
	}
}

static int compare(const char *path, const struct bench_queries *qs, size_t n,
		   const unsigned char *theirs, size_t examples)
{
	unsigned char *ours = spfkit__alloc(NULL, n);
	char err[256];
	size_t same = 0, i;

	if (ours == NULL)
		return -1;
	if (bench_results_read(path, ours, n, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_libspf2: %s\n", err);
		spfkit__free(NULL, ours);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (ours[i] >= BENCH_NRES)
			ours[i] = BENCH_ERROR;
		same += ours[i] == theirs[i];
	}
	printf("agreement spfkit/libspf2: %zu of %zu queries (%.2f%%)\n", same, n,
	       100.0 * (double)same / (double)n);
	printf("#BENCH agreement same=%zu total=%zu\n", same, n);
	if (same < n)
		print_pairs(qs, ours, theirs, n, examples);
	spfkit__free(NULL, ours);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_libspf2 --zone FILE --queries FILE [--seconds S | --rounds N]\n"
			"                     [--limit N] [--results-out FILE] [--compare FILE]"
			" [--examples N]\n");
	return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->seconds = 3.0;
	o->examples = 2;
	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		int bad = 0;

		if (strcmp(k, "--zone") == 0)
			o->zone = v;
		else if (strcmp(k, "--queries") == 0)
			o->queries = v;
		else if (strcmp(k, "--results-out") == 0)
			o->results_out = v;
		else if (strcmp(k, "--compare") == 0)
			o->compare = v;
		else if (strcmp(k, "--seconds") == 0)
			bad = bench_parse_seconds(v, &o->seconds);
		else if (strcmp(k, "--rounds") == 0)
			bad = bench_parse_size(v, 1000000, &o->rounds);
		else if (strcmp(k, "--limit") == 0)
			bad = bench_parse_size(v, BENCH_MAX_QUERIES, &o->limit);
		else if (strcmp(k, "--examples") == 0)
			bad = bench_parse_size(v, 1000, &o->examples);
		else
			bad = 1;
		if (bad)
			return -1;
	}
	return (i == argc && o->zone && o->queries) ? 0 : -1;
}

static int load(const struct options *o, SPF_dns_server_t **dns, struct bench_queries *qs)
{
	char err[512];
	double t0 = bench_now();

	if (spf2_zone_load(o->zone, dns, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_libspf2: %s\n", err);
		return -1;
	}
	if (bench_queries_load(qs, o->queries, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_libspf2: %s\n", err);
		bench_queries_free(qs);
		spf2_zone_free(*dns);
		return -1;
	}
	printf("libspf2 hashed DNS layer: %zu RRsets loaded in %.2f s\n", spf2_zone_records(*dns),
	       bench_now() - t0);
	return 0;
}

static int run(const struct options *o, struct run *r, size_t n)
{
	unsigned char *res = spfkit__alloc(NULL, n);
	struct bench_timing t;
	size_t i;
	int rc = -1;

	if (res == NULL)
		return -1;
	/* one untimed pass for the results; it also warms the caches */
	for (i = 0; i < n; i++)
		res[i] = (unsigned char)eval_one(r->server, &r->qs->q[i], &r->ips[i]);
	bench_print_distribution("libspf2 results", res, n);
	if (o->results_out != NULL && bench_results_write(o->results_out, res, n) != 0)
		fprintf(stderr, "bench_libspf2: cannot write %s\n", o->results_out);
	else if (bench_time(pass_libspf2, r, n, o->seconds, o->rounds, &t) == 0) {
		bench_report("libspf2", "libspf2 (SPF_request_query_mailfrom)", &t);
		rc = 0;
	}
	if (rc == 0 && r->errors > 0)
		printf("libspf2: %zu evaluations ended in an API error\n", r->errors);
	if (rc == 0 && o->compare != NULL)
		rc = compare(o->compare, r->qs, n, res, o->examples);
	spfkit__free(NULL, res);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct bench_queries qs;
	SPF_dns_server_t *dns = NULL;
	struct run r = {0};
	struct client_ip *ips = NULL;
	size_t n;
	int major, minor, patch, rc = 1;

	if (parse_args(argc, argv, &o) != 0)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows through a pipe */
	SPF_info_handler = quiet;
	SPF_warning_handler = quiet;
	if (load(&o, &dns, &qs) != 0)
		return 1;
	n = (o.limit > 0 && o.limit < qs.count) ? o.limit : qs.count;
	ips = spfkit__calloc(NULL, n, sizeof(*ips));
	r.server = server_new(dns);
	r.qs = &qs;
	r.ips = ips;
	if (ips != NULL && r.server != NULL && parse_ips(&qs, n, ips) == 0) {
		SPF_get_lib_version(&major, &minor, &patch);
		printf("libspf2 %d.%d.%d, %zu queries\n", major, minor, patch, n);
		rc = run(&o, &r, n) == 0 ? 0 : 1;
		printf("libspf2 peak RSS: %ld KiB\n", bench_peak_rss_kib());
	}
	if (r.server != NULL)
		SPF_server_free(r.server);
	spf2_zone_free(dns);
	spfkit__free(NULL, ips);
	bench_queries_free(&qs);
	return rc;
}
