/* Query and results files, timing and memory figures for the benchmarks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_common.h"
#include "core.h"

static const char *const res_names[BENCH_NRES] = {
	"none", "neutral", "pass", "fail", "softfail", "temperror", "permerror", "invalid", "error",
};

const char *bench_res_name(unsigned res)
{
	return res < BENCH_NRES ? res_names[res] : "?";
}

unsigned bench_res_from_name(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; i < BENCH_NRES; i++)
		if (spfkit__memcaseeq(name, len, res_names[i], strlen(res_names[i])))
			return i;
	return BENCH_NRES;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Size of an open file, or -1; rejects files over max. */
static long file_size(FILE *f, size_t max)
{
	long size;

	if (fseek(f, 0, SEEK_END) != 0)
		return -1;
	size = ftell(f);
	if (size < 0 || (unsigned long)size > max || fseek(f, 0, SEEK_SET) != 0)
		return -1;
	return size;
}

int bench_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "rb");
	long size;
	char *buf;

	if (f == NULL) {
		set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return SPFKIT_EIO;
	}
	size = file_size(f, max);
	if (size < 0) {
		fclose(f);
		set_err(err, errlen, "%s: unreadable or larger than %zu bytes", path, max);
		return SPFKIT_E2BIG;
	}
	buf = spfkit__alloc(NULL, (size_t)size + 1);
	if (buf == NULL) {
		fclose(f);
		return SPFKIT_ENOMEM;
	}
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		spfkit__free(NULL, buf);
		set_err(err, errlen, "%s: read error", path);
		return SPFKIT_EIO;
	}
	fclose(f);
	buf[size] = '\0';
	*out = buf;
	*len = (size_t)size;
	return 0;
}

/* Cut the next blank-separated field of [*p, end); NUL-terminates it. */
static char *next_field(char **p, char *end, size_t *flen)
{
	char *s = *p, *start;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	start = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*flen = (size_t)(s - start);
	if (s < end)
		*s++ = '\0';
	*p = s;
	return start;
}

static int parse_line(struct bench_query *q, char *p, char *end, unsigned line,
		      const char *label, char *err, size_t errlen)
{
	size_t xlen;

	q->line = line;
	q->ip = next_field(&p, end, &q->ip_len);
	q->sender = next_field(&p, end, &q->sender_len);
	q->helo = next_field(&p, end, &q->helo_len);
	(void)next_field(&p, end, &xlen);
	if (q->ip_len == 0 || q->sender_len == 0 || q->helo_len == 0 || xlen != 0) {
		set_err(err, errlen, "%s:%u: want \"ip sender helo\"", label, line);
		return SPFKIT_ESYNTAX;
	}
	if (q->ip_len > BENCH_MAX_FIELD || q->sender_len > BENCH_MAX_FIELD ||
	    q->helo_len > BENCH_MAX_FIELD) {
		set_err(err, errlen, "%s:%u: field longer than the cap", label, line);
		return SPFKIT_E2BIG;
	}
	if (q->sender_len == 2 && memcmp(q->sender, "<>", 2) == 0) {
		q->sender = "";
		q->sender_len = 0;
	}
	return 0;
}

/* Lines that hold something other than blanks. */
static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0, i;
	int seen = 0;

	for (i = 0; i < len; i++) {
		if (text[i] == '\n') {
			n += (size_t)seen;
			seen = 0;
		} else if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r') {
			seen = 1;
		}
	}
	return n + (size_t)seen;
}

static int is_blank(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t')
			return 0;
	return 1;
}

int bench_queries_parse(struct bench_queries *qs, char *text, size_t len, const char *label,
			char *err, size_t errlen)
{
	size_t cap = count_lines(text, len);
	char *p = text, *end = text + len;
	unsigned line = 0;
	int rc = 0;

	memset(qs, 0, sizeof(*qs));
	qs->text = text;
	qs->text_len = len;
	if (cap > BENCH_MAX_QUERIES) {
		set_err(err, errlen, "%s: more than %u queries", label, BENCH_MAX_QUERIES);
		return SPFKIT_E2BIG;
	}
	qs->q = spfkit__calloc(NULL, cap ? cap : 1, sizeof(*qs->q));
	if (qs->q == NULL)
		return SPFKIT_ENOMEM;
	while (p < end && rc == 0) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;

		line++;
		if (eol > p && eol[-1] == '\r')
			eol[-1] = ' ';
		if (!is_blank(p, eol))
			rc = parse_line(&qs->q[qs->count++], p, eol, line, label, err, errlen);
		if (nl != NULL)
			*nl = '\0';
		p = eol + (nl != NULL);
	}
	if (rc == 0 && qs->count == 0) {
		set_err(err, errlen, "%s: no queries", label);
		rc = SPFKIT_ESYNTAX;
	}
	return rc;
}

int bench_queries_load(struct bench_queries *qs, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc;

	memset(qs, 0, sizeof(*qs));
	rc = bench_read_file(path, BENCH_MAX_FILE, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	return bench_queries_parse(qs, text, len, path, err, errlen);
}

void bench_queries_free(struct bench_queries *qs)
{
	spfkit__free(NULL, qs->q);
	spfkit__free(NULL, qs->text);
	memset(qs, 0, sizeof(*qs));
}

int bench_results_write(const char *path, const unsigned char *res, size_t count)
{
	FILE *f = fopen(path, "w");
	size_t i;
	int bad;

	if (f == NULL)
		return SPFKIT_EIO;
	for (i = 0; i < count; i++)
		fprintf(f, "%s\n", bench_res_name(res[i]));
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return SPFKIT_EIO;
	return 0;
}

int bench_results_read(const char *path, unsigned char *res, size_t count, char *err,
		       size_t errlen)
{
	char *text, *p, *end;
	size_t len, n = 0;
	int rc;

	rc = bench_read_file(path, BENCH_MAX_FILE, &text, &len, err, errlen);
	if (rc != 0)
		return rc;
	p = text;
	end = text + len;
	while (p < end && n <= count) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		unsigned r = bench_res_from_name(p, (size_t)(eol - p));

		if (r == BENCH_NRES) {
			set_err(err, errlen, "%s:%zu: unknown result name", path, n + 1);
			spfkit__free(NULL, text);
			return SPFKIT_ESYNTAX;
		}
		if (n < count)
			res[n] = (unsigned char)r;
		n++;
		p = eol + (nl != NULL);
	}
	spfkit__free(NULL, text);
	if (n != count) {
		set_err(err, errlen, "%s: %zu results for %zu queries", path, n, count);
		return SPFKIT_ESYNTAX;
	}
	return 0;
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long bench_peak_rss_kib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss; /* KiB on Linux */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_time(bench_pass_fn *fn, void *arg, size_t n, double min_seconds, size_t rounds,
	       struct bench_timing *out)
{
	size_t cap = rounds > 0 ? rounds : BENCH_MAX_PASSES;
	double *pass = spfkit__calloc(NULL, cap, sizeof(*pass));
	double start = bench_now(), now = start;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->per_pass = n;
	if (pass == NULL)
		return SPFKIT_ENOMEM;
	while (out->passes < cap && (rounds > 0 || out->passes == 0 || now - start < min_seconds)) {
		double t0 = now;

		rc = fn(arg, n);
		if (rc != 0)
			break;
		now = bench_now();
		pass[out->passes++] = now - t0;
	}
	if (rc == 0) {
		out->total_seconds = now - start;
		qsort(pass, out->passes, sizeof(*pass), cmp_double);
		out->median_pass = pass[out->passes / 2];
	}
	spfkit__free(NULL, pass);
	return rc;
}

void bench_report(const char *key, const char *label, const struct bench_timing *t)
{
	double per_s = t->median_pass > 0 ? (double)t->per_pass / t->median_pass : 0;
	double ns = t->per_pass > 0 ? t->median_pass * 1e9 / (double)t->per_pass : 0;

	printf("%-40s %10.0f evaluations/s %8.0f ns/eval  (median of %zu passes over %zu "
	       "queries, %.2f s)\n",
	       label, per_s, ns, t->passes, t->per_pass, t->total_seconds);
	printf("#BENCH %s evals_per_s=%.0f ns_per_eval=%.1f\n", key, per_s, ns);
}

void bench_print_distribution(const char *label, const unsigned char *res, size_t n)
{
	size_t count[BENCH_NRES] = {0};
	size_t i;
	unsigned r;

	for (i = 0; i < n; i++)
		count[res[i] < BENCH_NRES ? res[i] : BENCH_ERROR]++;
	printf("%s:", label);
	for (r = 0; r < BENCH_NRES; r++)
		if (count[r] > 0)
			printf(" %s %zu (%.1f%%)", bench_res_name(r), count[r],
			       100.0 * (double)count[r] / (double)n);
	printf("\n");
}

int bench_parse_size(const char *s, size_t max, size_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = (size_t)v;
	return 0;
}

int bench_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= 0.0 && v <= 3600.0))
		return -1;
	*out = v;
	return 0;
}

int bench_request(const char *prog, const struct bench_query *q, struct spfkit_request *req)
{
	spfkit_request_init(req);
	if (spfkit_ip_parse(q->ip, q->ip_len, &req->ip) != 0) {
		fprintf(stderr, "%s: line %u: bad IP address \"%.60s\"\n", prog, q->line, q->ip);
		return -1;
	}
	req->sender = q->sender;
	req->sender_len = q->sender_len;
	req->helo = q->helo;
	req->helo_len = q->helo_len;
	req->identity = SPFKIT_IDENTITY_MAILFROM;
	req->now = BENCH_NOW;
	return 0;
}

int bench_zone_load(const char *prog, const char *path, struct spfkit_zone **zone)
{
	char err[512] = "";
	int rc = spfkit_zone_new(NULL, zone);

	if (rc == 0)
		rc = spfkit_zone_load_file(*zone, path, NULL, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, err[0] ? err : spfkit_strerror(rc));
		return -1;
	}
	return 0;
}
