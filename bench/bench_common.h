/*
 * Shared by the benchmarks: the query file, the results file, timing,
 * peak memory, option parsing. Nothing here is library API.
 *
 * Query file (bench/gen_corpus.py writes it): one "ip sender helo" per
 * line, fields separated by spaces or tabs; "<>" is the empty MAIL FROM.
 * Results file: one result name per query line ("pass", "fail", ...).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>

#include <spfkit/spfkit.h>

/* Caps, so a broken or hostile input file cannot take the machine. */
#define BENCH_MAX_FILE (256u * 1024u * 1024u)
#define BENCH_MAX_QUERIES 10000000u
#define BENCH_MAX_FIELD 1024u

/* Outcomes, in the order of enum spfkit_result_code, then two of ours. */
enum bench_res {
	BENCH_NONE = 0,
	BENCH_NEUTRAL,
	BENCH_PASS,
	BENCH_FAIL,
	BENCH_SOFTFAIL,
	BENCH_TEMPERROR,
	BENCH_PERMERROR,
	BENCH_INVALID, /* libspf2's SPF_RESULT_INVALID: no result given */
	BENCH_ERROR,   /* the API call itself failed */
	BENCH_NRES
};

const char *bench_res_name(unsigned res);
/* BENCH_NRES when the name is unknown. */
unsigned bench_res_from_name(const char *name, size_t len);

struct bench_query {
	const char *ip; /* each field NUL-terminated inside the file text */
	size_t ip_len;
	const char *sender; /* "" for "<>" */
	size_t sender_len;
	const char *helo;
	size_t helo_len;
	unsigned line;
};

struct bench_queries {
	char *text;
	size_t text_len;
	struct bench_query *q;
	size_t count;
};

/* Whole file into a NUL-terminated buffer (freed with spfkit__free). */
int bench_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
		    size_t errlen);
int bench_queries_load(struct bench_queries *qs, const char *path, char *err, size_t errlen);
/* Parses text in place and keeps it (freed by bench_queries_free). */
int bench_queries_parse(struct bench_queries *qs, char *text, size_t len, const char *label,
			char *err, size_t errlen);
void bench_queries_free(struct bench_queries *qs);

/* %{t} of every benchmark evaluation: results never depend on the clock. */
#define BENCH_NOW 1700000000

/* The MAIL FROM request for a corpus query; pointers into the query.
 * 0, or -1 with "prog: line N: bad IP address" on stderr. */
int bench_request(const char *prog, const struct bench_query *q, struct spfkit_request *req);
/* A new zone loaded from a master file; -1 with "prog: file: why" on stderr. */
int bench_zone_load(const char *prog, const char *path, struct spfkit_zone **zone);

int bench_results_write(const char *path, const unsigned char *res, size_t count);
/* Reads exactly `count` names into res[]. */
int bench_results_read(const char *path, unsigned char *res, size_t count, char *err,
		       size_t errlen);

/* Monotonic seconds. */
double bench_now(void);
/* Peak resident set size of this process, KiB (getrusage). */
long bench_peak_rss_kib(void);

/* One timed pass over queries [0, n); returns 0 or a negative error. */
typedef int bench_pass_fn(void *arg, size_t n);

/* Each pass is timed on its own and the median pass is reported: a
 * burst of load from elsewhere on the machine moves a mean, not a
 * median, and a median favours neither a fast nor a slow contender. */
#define BENCH_MAX_PASSES 65536u

struct bench_timing {
	size_t per_pass;      /* evaluations in one pass */
	size_t passes;
	double median_pass;   /* seconds */
	double total_seconds; /* every pass */
};

/* Whole passes until `min_seconds` have gone by (at most
 * BENCH_MAX_PASSES), or exactly `rounds` passes when rounds > 0. */
int bench_time(bench_pass_fn *fn, void *arg, size_t n, double min_seconds, size_t rounds,
	       struct bench_timing *out);
void bench_report(const char *key, const char *label, const struct bench_timing *t);
void bench_print_distribution(const char *label, const unsigned char *res, size_t n);

/* Strict unsigned / double parsing for options: 0 or -1. */
int bench_parse_size(const char *s, size_t max, size_t *out);
int bench_parse_seconds(const char *s, double *out);

#endif
