/*
 * `spfkit check --batch FILE|-`: one query per "ip sender helo" line,
 * one output line per query, for scripts and benchmarks. The context and
 * the zone are built once by the caller and serve every line. A bad line
 * is reported (file:line) and skipped; the batch goes on.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

#define CMD "check"
/* One query line; longer lines are refused, never read into memory whole. */
#define BATCH_LINE_MAX 4096u
#define BATCH_FIELDS 3
#define JSON_LINE_MAX (1024u * 1024u)

struct field {
	const char *p;
	size_t len;
};

struct batch {
	const struct cli_env *env;
	enum spfkit_identity id;
	int json;
	const char *label; /* file name in messages; "stdin" for "-" */
	unsigned long lineno;
	int status;
};

/*
 * Read one line without its '\n' into buf. 1: a line, 0: end of input,
 * -1: longer than size - 1 (the rest of it is read and dropped).
 */
static int read_line(FILE *f, char *buf, size_t size, size_t *len)
{
	size_t n = 0;
	int too_long = 0;
	int c;

	for (;;) {
		c = getc(f);
		if (c == EOF || c == '\n')
			break;
		if (n + 1 < size)
			buf[n++] = (char)c;
		else
			too_long = 1;
	}
	*len = n;
	if (c == EOF && n == 0 && !too_long)
		return 0;
	return too_long ? -1 : 1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Split on blanks into at most max fields; returns how many were found (max + 1: too many). */
static int split(const char *s, size_t len, struct field *out, int max)
{
	size_t i = 0;
	int n = 0;

	for (;;) {
		size_t start;

		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			return n;
		if (n == max)
			return max + 1;
		start = i;
		while (i < len && !is_space(s[i]))
			i++;
		out[n].p = s + start;
		out[n].len = i - start;
		n++;
	}
}

static void worse(struct batch *b, int status)
{
	/* "no result" (8) outranks "bad line" (2) */
	if (status == CLI_EXIT_INTERNAL || b->status == 0)
		b->status = status;
}

static void print_plain(const struct cli_query *q, const struct spfkit_result *res)
{
	const char *extra = res->code == SPFKIT_RESULT_FAIL ? res->explanation : res->problem;

	cli_put_safe(stdout, q->ip_text, q->ip_len);
	putc(' ', stdout);
	if (q->sender_len == 0)
		fputs("<>", stdout);
	else
		cli_put_safe(stdout, q->sender, q->sender_len);
	putc(' ', stdout);
	cli_put_safe(stdout, q->helo, q->helo_len);
	printf(" %s", spfkit_result_name(res->code));
	if (extra != NULL) {
		putc(' ', stdout);
		cli_put_safe_str(stdout, extra);
	}
	putc('\n', stdout);
}

static void print_json_line(struct batch *b, const struct cli_query *q,
			    const struct spfkit_result *res)
{
	struct spfkit__buf out;

	spfkit__buf_init(&out, NULL, JSON_LINE_MAX);
	cli_json_result(&out, b->env, q, res, NULL);
	spfkit__buf_putc(&out, '\n');
	if (out.err == 0) {
		fwrite(out.data, 1, out.len, stdout);
	} else {
		cli_error(CMD, "%s:%lu: cannot write the JSON result: %s", b->label, b->lineno,
			  spfkit_strerror(out.err));
		worse(b, CLI_EXIT_INTERNAL);
	}
	spfkit__buf_free(&out);
}

static void run_line(struct batch *b, const char *line, size_t len)
{
	struct field f[BATCH_FIELDS];
	struct cli_query q;
	struct spfkit_eval *ev = NULL;
	int n = split(line, len, f, BATCH_FIELDS);
	int rc;

	if (n == 0 || f[0].p[0] == '#')
		return; /* blank line or comment */
	if (n != BATCH_FIELDS) {
		cli_error(CMD, "%s:%lu: want 3 fields \"ip sender helo\", got %s", b->label, b->lineno,
			  n > BATCH_FIELDS ? "more" : n == 1 ? "1" : "2");
		worse(b, CLI_EXIT_USAGE);
		return;
	}
	rc = cli_query_set(&q, f[0].p, f[0].len, f[1].p, f[1].len, f[2].p, f[2].len, b->id);
	if (rc == SPFKIT_E2BIG) {
		/* unreachable while a line is shorter than CLI_IDENTITY_MAX; kept honest */
		cli_error(CMD, "%s:%lu: %s longer than %u bytes", b->label, b->lineno,
			  q.helo_len > CLI_IDENTITY_MAX ? "helo" : "sender", CLI_IDENTITY_MAX);
		worse(b, CLI_EXIT_USAGE);
		return;
	}
	if (rc != 0) {
		cli_error(CMD, "%s:%lu: '%.*s' is not an IPv4 or IPv6 address", b->label, b->lineno,
			  (int)(f[0].len > 100 ? 100 : f[0].len), f[0].p);
		worse(b, CLI_EXIT_USAGE);
		return;
	}
	rc = cli_query_run(b->env, &q, NULL, NULL, &ev);
	if (rc != 0) {
		cli_error(CMD, "%s:%lu: evaluation failed: %s", b->label, b->lineno, spfkit_strerror(rc));
		worse(b, CLI_EXIT_INTERNAL);
	} else if (b->json) {
		print_json_line(b, &q, spfkit_eval_result(ev));
	} else {
		print_plain(&q, spfkit_eval_result(ev));
	}
	spfkit_eval_free(ev);
}

static void run_stream(struct batch *b, FILE *f)
{
	char line[BATCH_LINE_MAX];
	size_t len;
	int r;

	for (;;) {
		r = read_line(f, line, sizeof(line), &len);
		if (r == 0)
			break;
		b->lineno++;
		if (r < 0) {
			cli_error(CMD, "%s:%lu: line longer than %u bytes", b->label, b->lineno,
				  BATCH_LINE_MAX - 1);
			worse(b, CLI_EXIT_USAGE);
			continue;
		}
		run_line(b, line, len);
	}
}

int cli_batch_run(const struct cli_env *env, const char *path, enum spfkit_identity id, int json)
{
	struct batch b = { env, id, json, path, 0, 0 };
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "r");

	if (f == NULL) {
		cli_error(CMD, "cannot read %.200s: %s", path, strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (is_stdin)
		b.label = "stdin";
	run_stream(&b, f);
	if (ferror(f)) {
		cli_error(CMD, "%s: read error after line %lu", b.label, b.lineno);
		worse(&b, CLI_EXIT_USAGE);
	}
	if (!is_stdin)
		fclose(f);
	return b.status;
}
