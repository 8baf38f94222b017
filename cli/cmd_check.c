/*
 * `spfkit check`: evaluate SPF for one SMTP client (or a batch of them)
 * and print what a receiver would record: the result, the explanation,
 * Received-SPF (RFC 7208 §9.1) and Authentication-Results (RFC 8601).
 *
 * Only malformed *arguments* are refused here (a bad IP address, a
 * missing or unknown option). Odd identities (no local part, a domain
 * literal HELO, over-long labels) go to the evaluator unchanged, which
 * judges them by RFC 7208 §4.3 like any receiver would.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "decision.h"
#include "flow.h"

#define CMD "check"
/* Received-SPF is below 998 bytes by construction (lib/spf/output.c). */
#define HEADER_MAX 2048u
/* A JSON result with a long trace; past it the output says "truncated". */
#define JSON_MAX (64u * 1024u * 1024u)

struct check_opts {
	const char *ip, *sender, *helo, *identity, *batch;
	const char *zone, *dns, *timeout, *tries;
	const char *receiver, *default_exp, *format;
	int json, trace, help, no_lookahead;
};

/* --format: how the result is printed. */
enum check_format {
	FORMAT_TEXT = 0,
	FORMAT_JSON,   /* --json */
	FORMAT_EXIM,   /* "result<TAB>Received-SPF: ...", for Exim's ${run} */
	FORMAT_POLICY, /* "action=...", spfkit-policyd's answer (mta/decision.c) */
};

void cli_check_usage(FILE *f)
{
	fputs("Usage: spfkit check --ip IP --sender ADDR --helo NAME [options]\n"
	      "       spfkit check --batch FILE|- [options]\n"
	      "\n"
	      "Evaluate SPF (RFC 7208) for an SMTP client and print the result, the\n"
	      "explanation, the mechanism that decided, a Received-SPF header field and\n"
	      "an Authentication-Results header field.\n"
	      "\n"
	      "Query:\n"
	      "  --ip IP               address of the SMTP client (IPv4 or IPv6)\n"
	      "  --sender ADDR         MAIL FROM address, with or without its <>; \"\" or\n"
	      "                        \"<>\" for an empty one (then postmaster@HELO is\n"
	      "                        checked, RFC 7208 2.4)\n"
	      "  --helo NAME           HELO/EHLO name\n"
	      "  --identity mailfrom|helo\n"
	      "                        identity to check (default mailfrom); with helo,\n"
	      "                        --sender may be left out\n"
	      "\n"
	      "DNS:\n"
	      "  --zone FILE           answer from this zone file (RFC 1035 master file),\n"
	      "                        no network\n"
	      "  --dns HOST[:PORT][,...]\n"
	      "                        real DNS through these servers (default: the\n"
	      "                        servers of /etc/resolv.conf)\n"
	      "  --timeout MS          real DNS: timeout of one try of a query\n"
	      "  --tries N             real DNS: tries per query\n"
	      "  --no-lookahead        real DNS: ask one question at a time instead of\n"
	      "                        asking early for what the record will need next\n"
	      "                        (same result either way; a zone file is always\n"
	      "                        read one question at a time)\n"
	      "\n"
	      "Receiver:\n"
	      "  --receiver NAME       this host, for %{r}, Received-SPF receiver= and the\n"
	      "                        Authentication-Results authserv-id (default: the\n"
	      "                        host name)\n"
	      "  --default-explanation TEXT\n"
	      "                        explanation of a fail whose domain gives none; a\n"
	      "                        macro-string (RFC 7208 6.2)\n"
	      "\n"
	      "Output:\n"
	      "  --json                one JSON object (with --batch: one per line); bytes\n"
	      "                        that are not ASCII are written as \\u0080-\\u00ff\n"
	      "  --format text|json|exim|policy\n"
	      "                        text (the default); json (as --json); exim: one\n"
	      "                        line for Exim's ${run}: the result word, a TAB, the\n"
	      "                        Received-SPF header field; policy: the Postfix\n"
	      "                        policy answer line \"action=...\" that spfkit-policyd\n"
	      "                        gives with its default configuration (HELO checked\n"
	      "                        first, then MAIL FROM; no --batch or --trace with\n"
	      "                        exim or policy, no --identity or\n"
	      "                        --default-explanation with policy)\n"
	      "  --trace               show the evaluation as a tree: every DNS question\n"
	      "                        and answer with its TTL and time taken, every record\n"
	      "                        and term tried, the lookup and void counters, the\n"
	      "                        result of each check_host(); in the JSON as \"trace\"\n"
	      "  --batch FILE|-        read \"ip sender helo\" lines (# comments, blank lines\n"
	      "                        skipped, sender \"\" or \"<>\" empty) from FILE or stdin;\n"
	      "                        print \"ip sender helo result [explanation or problem]\"\n"
	      "                        per line; one context and zone serve the whole batch\n"
	      "  --help                this text\n"
	      "\n"
	      "Exit status:\n"
	      "  0 pass, 1 fail, 3 softfail, 4 neutral, 5 none, 6 temperror, 7 permerror;\n"
	      "  2 bad arguments (a bad --dns server list too, a sender or HELO name\n"
	      "  over 65536 bytes), an unreadable zone file, or (--batch) a malformed\n"
	      "  line; 8 no result (out of memory, or the DNS resolver could not start\n"
	      "  or could not send a question). --batch exits 0 when every line was\n"
	      "  evaluated, whatever the results. Without --zone, DNS temporary failures\n"
	      "  (timeouts, SERVFAIL) are the result temperror (6), not an error.\n"
	      "  --format exim: the same codes, of the result printed. --format policy:\n"
	      "  those of the result the answer reports (MAIL FROM's, or HELO's when HELO\n"
	      "  decided or the sender is empty); 5 when nothing was checked (a local\n"
	      "  address, as spfkit-policyd's skip_addresses).\n",
	      f);
}

enum cli_exit cli_exit_for(enum spfkit_result_code code)
{
	switch (code) {
	case SPFKIT_RESULT_PASS: return CLI_EXIT_PASS;
	case SPFKIT_RESULT_FAIL: return CLI_EXIT_FAIL;
	case SPFKIT_RESULT_SOFTFAIL: return CLI_EXIT_SOFTFAIL;
	case SPFKIT_RESULT_NEUTRAL: return CLI_EXIT_NEUTRAL;
	case SPFKIT_RESULT_NONE: return CLI_EXIT_NONE;
	case SPFKIT_RESULT_TEMPERROR: return CLI_EXIT_TEMPERROR;
	case SPFKIT_RESULT_PERMERROR: return CLI_EXIT_PERMERROR;
	}
	return CLI_EXIT_INTERNAL;
}

/* ---- arguments ----------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct check_opts *o)
{
	const struct cli_opt specs[] = {
		{ "--ip", &o->ip, NULL },
		{ "--sender", &o->sender, NULL },
		{ "--helo", &o->helo, NULL },
		{ "--identity", &o->identity, NULL },
		{ "--batch", &o->batch, NULL },
		{ "--zone", &o->zone, NULL },
		{ "--dns", &o->dns, NULL },
		{ "--timeout", &o->timeout, NULL },
		{ "--tries", &o->tries, NULL },
		{ "--receiver", &o->receiver, NULL },
		{ "--default-explanation", &o->default_exp, NULL },
		{ "--format", &o->format, NULL },
		{ "--json", NULL, &o->json },
		{ "--trace", NULL, &o->trace },
		{ "--no-lookahead", NULL, &o->no_lookahead },
		{ "--help", NULL, &o->help },
	};
	int i = 1;

	memset(o, 0, sizeof(*o));
	while (i < argc) {
		if (strncmp(argv[i], "--", 2) != 0) {
			cli_error(CMD, "unexpected argument '%.100s' (options start with --)", argv[i]);
			return -1;
		}
		i = cli_take_opt(CMD, specs, sizeof(specs) / sizeof(specs[0]), argc, argv, i);
		if (i < 0)
			return -1;
	}
	return 0;
}

static int parse_identity(const char *s, enum spfkit_identity *id)
{
	if (s == NULL || strcmp(s, "mailfrom") == 0)
		*id = SPFKIT_IDENTITY_MAILFROM;
	else if (strcmp(s, "helo") == 0)
		*id = SPFKIT_IDENTITY_HELO;
	else
		return -1;
	return 0;
}

static int parse_format(const struct check_opts *o, enum check_format *f)
{
	static const char *const names[] = { "text", "json", "exim", "policy" };
	size_t i;

	*f = o->json ? FORMAT_JSON : FORMAT_TEXT;
	if (o->format == NULL)
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(o->format, names[i]) == 0)
			break;
	if (i == sizeof(names) / sizeof(names[0])) {
		cli_error(CMD, "--format must be 'text', 'json', 'exim' or 'policy', not '%.100s'",
			  o->format);
		return -1;
	}
	if (o->json && i != FORMAT_JSON) {
		cli_error(CMD, "--json cannot be used with --format %s", names[i]);
		return -1;
	}
	*f = (enum check_format)i;
	return 0;
}

/* Which options go together; one error line for the first conflict. */
static int check_combination(const struct check_opts *o, enum spfkit_identity id,
			     enum check_format f)
{
	const char *real_dns = o->dns ? "--dns" : o->timeout ? "--timeout" : o->tries ? "--tries" : NULL;
	const char *fname = f == FORMAT_EXIM ? "exim" : "policy";
	const char *one_line = o->batch ? "--batch" : o->trace ? "--trace" : NULL;

	if ((f == FORMAT_EXIM || f == FORMAT_POLICY) && one_line != NULL) {
		cli_error(CMD, "%s cannot be used with --format %s (one line for one query)", one_line,
			  fname);
		return -1;
	}
	/* spfkit-policyd checks HELO, then MAIL FROM: so does --format policy */
	if (f == FORMAT_POLICY && o->identity != NULL) {
		cli_error(CMD, "--identity cannot be used with --format policy (both identities are "
			       "checked, HELO first, as spfkit-policyd does)");
		return -1;
	}
	/* the daemon has no such setting: its answer would differ */
	if (f == FORMAT_POLICY && o->default_exp != NULL) {
		cli_error(CMD, "--default-explanation cannot be used with --format policy "
			       "(spfkit-policyd has no such setting)");
		return -1;
	}

	if (o->zone != NULL && real_dns != NULL) {
		cli_error(CMD, "%s is for real DNS and cannot be used with --zone", real_dns);
		return -1;
	}
	if (o->batch != NULL) {
		const char *q = o->ip ? "--ip" : o->sender ? "--sender" : o->helo ? "--helo" : NULL;

		if (q != NULL) {
			cli_error(CMD, "%s cannot be used with --batch (queries come from the file)", q);
			return -1;
		}
		if (o->trace) {
			cli_error(CMD, "--trace cannot be used with --batch");
			return -1;
		}
		return 0;
	}
	if (o->ip == NULL) {
		cli_error(CMD, "missing --ip (the SMTP client's address)");
		return -1;
	}
	if (o->sender == NULL && id == SPFKIT_IDENTITY_MAILFROM) {
		cli_error(CMD, "missing --sender (the MAIL FROM address; \"\" for an empty one)");
		return -1;
	}
	if (o->helo == NULL) {
		cli_error(CMD, "missing --helo (the HELO/EHLO name)");
		return -1;
	}
	return 0;
}

/* ---- the environment shared by every query ------------------------------- */

static void env_close(struct cli_env *env)
{
	spfkit_ctx_free(env->ctx);
	cli_resolver_close(&env->res);
	env->ctx = NULL;
}

static const char *default_receiver(struct cli_env *env)
{
	if (gethostname(env->hostname, sizeof(env->hostname)) != 0)
		return "unknown";
	env->hostname[sizeof(env->hostname) - 1] = '\0'; /* POSIX: may be unterminated */
	return env->hostname[0] != '\0' ? env->hostname : "unknown";
}

static int env_open(const struct check_opts *o, struct cli_env *env)
{
	struct cli_dns_options dns = { o->zone, o->dns, 0, 0 };
	struct spfkit_config cfg;
	char err[512];
	int rc;

	memset(env, 0, sizeof(*env));
	if ((o->timeout != NULL && cli_parse_count(o->timeout, 3600000, &dns.timeout_ms) != 0) ||
	    (o->tries != NULL && cli_parse_count(o->tries, 100, &dns.tries) != 0)) {
		cli_error(CMD, "%s '%.100s' is not a positive number in range",
			  o->timeout ? "--timeout" : "--tries", o->timeout ? o->timeout : o->tries);
		return CLI_EXIT_USAGE;
	}
	env->receiver = o->receiver != NULL ? o->receiver : default_receiver(env);
	spfkit_config_init(&cfg);
	cfg.default_explanation = o->default_exp;
	cfg.receiver = env->receiver;
	/* lookahead saves round trips; an in-memory zone has none to save */
	cfg.no_lookahead = o->zone != NULL || o->no_lookahead;
	rc = spfkit_ctx_new(&cfg, &env->ctx);
	if (rc == SPFKIT_EINVAL) {
		cli_error(CMD, "--default-explanation: not a valid macro-string (RFC 7208 section 7.1)");
		return CLI_EXIT_USAGE;
	}
	if (rc != 0) {
		cli_error(CMD, "cannot set up: %s", spfkit_strerror(rc));
		return CLI_EXIT_INTERNAL;
	}
	env->limits = cfg.limits;
	rc = cli_resolver_open(&dns, &env->res, err, sizeof(err));
	if (rc != 0) {
		cli_error(CMD, "%s", err);
		env_close(env);
		/* a bad zone file or server list is the user's to fix; the rest is ours */
		return (rc == SPFKIT_ENOMEM || rc == SPFKIT_EDNS) ? CLI_EXIT_INTERNAL : CLI_EXIT_USAGE;
	}
	return 0;
}

/* ---- one query ----------------------------------------------------------- */

int cli_query_set(struct cli_query *q, const char *ip, size_t ip_len, const char *sender,
		  size_t sender_len, const char *helo, size_t helo_len, enum spfkit_identity id)
{
	memset(q, 0, sizeof(*q));
	if (spfkit_ip_parse(ip, ip_len, &q->ip) != 0)
		return SPFKIT_EINVAL;
	q->ip_text = ip;
	q->ip_len = ip_len;
	/*
	 * MTAs pass the reverse-path as written in MAIL FROM, angle brackets
	 * included (RFC 5321 §4.1.2: Reverse-path = Path / "<>"): drop one
	 * pair, so "<>" becomes the empty MAIL FROM. Shells pass that one
	 * as "" too.
	 */
	if (sender_len >= 2 && sender[0] == '<' && sender[sender_len - 1] == '>') {
		sender++;
		sender_len -= 2;
	}
	if (sender_len == 2 && memcmp(sender, "\"\"", 2) == 0)
		sender_len = 0;
	q->sender = sender;
	q->sender_len = sender_len;
	q->helo = helo;
	q->helo_len = helo_len;
	q->identity = id;
	/* the evaluator refuses longer identities; q tells the caller which */
	if (sender_len > CLI_IDENTITY_MAX || helo_len > CLI_IDENTITY_MAX)
		return SPFKIT_E2BIG;
	return 0;
}

int cli_query_run(const struct cli_env *env, const struct cli_query *q, spfkit_trace_fn *trace,
		  void *trace_arg, struct spfkit_eval **out)
{
	struct spfkit_request req;

	spfkit_request_init(&req);
	req.ip = q->ip;
	req.sender = q->sender;
	req.sender_len = q->sender_len;
	req.helo = q->helo;
	req.helo_len = q->helo_len;
	req.identity = q->identity;
	req.now = (int64_t)time(NULL);
	req.trace = trace;
	req.trace_arg = trace_arg;
	return spfkit_check(env->ctx, env->res.resolver, &req, out);
}

/* ---- output -------------------------------------------------------------- */

static void json_headers(struct spfkit__buf *b, int *first, const struct cli_env *env,
			 const struct spfkit_result *res)
{
	char line[HEADER_MAX];

	cli_json_key(b, first, "received_spf");
	if (spfkit_format_received_spf(res, 1, line, sizeof(line)) >= 0)
		cli_json_cstr(b, line);
	else
		spfkit__buf_puts(b, "null");
	cli_json_key(b, first, "authentication_results");
	if (spfkit_format_auth_results(res, env->receiver, 1, line, sizeof(line)) >= 0)
		cli_json_cstr(b, line);
	else
		spfkit__buf_puts(b, "null");
	cli_json_key(b, first, "smtp_reply");
	if (spfkit_format_smtp_reply(res, line, sizeof(line)) >= 0)
		cli_json_cstr(b, line);
	else
		spfkit__buf_puts(b, "null");
}

static void json_query(struct spfkit__buf *b, const struct cli_env *env, const struct cli_query *q)
{
	int first = 1;

	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "ip");
	cli_json_str(b, q->ip_text, q->ip_len);
	cli_json_key(b, &first, "sender");
	cli_json_str(b, q->sender, q->sender_len);
	cli_json_key(b, &first, "helo");
	cli_json_str(b, q->helo, q->helo_len);
	cli_json_key(b, &first, "identity");
	cli_json_cstr(b, q->identity == SPFKIT_IDENTITY_HELO ? "helo" : "mailfrom");
	cli_json_key(b, &first, "receiver");
	cli_json_cstr(b, env->receiver);
	spfkit__buf_putc(b, '}');
}

/*
 * "reason": the code of a temperror or permerror (<spfkit/reason.h>), as
 * its number and its stable name, for programs; absent for the other
 * results, so their output is as it was.
 */
static void json_reason(struct spfkit__buf *b, int *first, const struct spfkit_result *res)
{
	int in = 1;

	if (res->reason == SPFKIT_REASON_NONE)
		return;
	cli_json_key(b, first, "reason");
	spfkit__buf_putc(b, '{');
	cli_json_key(b, &in, "code");
	spfkit__buf_printf(b, "%d", (int)res->reason);
	cli_json_key(b, &in, "name");
	cli_json_cstr(b, spfkit_reason_name(res->reason));
	cli_json_key(b, &in, "section");
	cli_json_cstr(b, spfkit_reason_section(res->reason));
	cli_json_key(b, &in, "domain");
	cli_json_cstr(b, res->reason_domain);
	cli_json_key(b, &in, "term");
	if (res->reason_term != NULL)
		cli_json_str(b, res->reason_term, res->reason_term_len);
	else
		cli_json_cstr(b, NULL);
	cli_json_key(b, &in, "term_offset");
	spfkit__buf_printf(b, "%zu", res->reason_term_offset);
	spfkit__buf_putc(b, '}');
}

void cli_json_result(struct spfkit__buf *b, const struct cli_env *env, const struct cli_query *q,
		     const struct spfkit_result *res, const struct spfkit__buf *trace_json)
{
	int first = 1;

	spfkit__buf_putc(b, '{');
	cli_json_key(b, &first, "query");
	json_query(b, env, q);
	cli_json_key(b, &first, "result");
	cli_json_cstr(b, spfkit_result_name(res->code));
	cli_json_key(b, &first, "explanation");
	cli_json_cstr(b, res->explanation);
	cli_json_key(b, &first, "mechanism");
	cli_json_cstr(b, res->mechanism);
	cli_json_key(b, &first, "domain");
	cli_json_cstr(b, res->domain);
	cli_json_key(b, &first, "problem");
	cli_json_cstr(b, res->problem);
	json_reason(b, &first, res);
	cli_json_key(b, &first, "counters");
	spfkit__buf_printf(b, "{\"dns_terms\":%u,\"void_lookups\":%u,\"queries\":%u}",
			   res->dns_terms, res->void_lookups, res->queries);
	json_headers(b, &first, env, res);
	cli_json_key(b, &first, "exit_status");
	spfkit__buf_printf(b, "%d", (int)cli_exit_for(res->code));
	if (trace_json != NULL) {
		cli_json_key(b, &first, "trace");
		spfkit__buf_putc(b, '[');
		spfkit__buf_append(b, trace_json->data != NULL ? trace_json->data : "", trace_json->len);
		spfkit__buf_putc(b, ']');
	}
	spfkit__buf_putc(b, '}');
}

static void print_line(const char *label, const char *value)
{
	fputs(label, stdout);
	cli_put_safe_str(stdout, value);
	putc('\n', stdout);
}

static void print_text(const struct cli_env *env, const struct spfkit_result *res)
{
	char line[HEADER_MAX];

	print_line("result: ", spfkit_result_name(res->code));
	if (res->explanation != NULL)
		print_line("explanation: ", res->explanation);
	if (res->mechanism != NULL) {
		fputs("mechanism: ", stdout);
		cli_put_safe_str(stdout, res->mechanism);
		if (res->domain != NULL) {
			fputs(" (record of ", stdout);
			cli_put_safe_str(stdout, res->domain);
			putc(')', stdout);
		}
		putc('\n', stdout);
	}
	if (res->problem != NULL)
		print_line("problem: ", res->problem);
	printf("lookups: %u DNS term%s (limit %u), %u void (limit %u), %u DNS quer%s\n",
	       res->dns_terms, res->dns_terms == 1 ? "" : "s",
	       env->limits.dns_terms ? env->limits.dns_terms : SPFKIT_LIMIT_DNS_TERMS,
	       res->void_lookups,
	       env->limits.void_lookups ? env->limits.void_lookups : SPFKIT_LIMIT_VOID_LOOKUPS,
	       res->queries, res->queries == 1 ? "y" : "ies");
	/* lib/spf/output.c makes these printable ASCII, escapes included: print as is */
	if (spfkit_format_smtp_reply(res, line, sizeof(line)) >= 0)
		printf("smtp reply: %s\n", line);
	if (spfkit_format_received_spf(res, 1, line, sizeof(line)) >= 0)
		printf("%s\n", line);
	if (spfkit_format_auth_results(res, env->receiver, 1, line, sizeof(line)) >= 0)
		printf("%s\n", line);
}

/* Print the JSON object; 0, or an exit status when it could not be built. */
static int print_json(const struct cli_env *env, const struct cli_query *q,
		      const struct spfkit_result *res, const struct spfkit__buf *trace_json)
{
	struct spfkit__buf b;
	int rc;

	spfkit__buf_init(&b, NULL, JSON_MAX);
	cli_json_result(&b, env, q, res, trace_json);
	spfkit__buf_putc(&b, '\n');
	rc = b.err;
	if (rc == 0)
		fwrite(b.data, 1, b.len, stdout);
	else
		cli_error(CMD, "cannot write the JSON result: %s", spfkit_strerror(rc));
	spfkit__buf_free(&b);
	return rc == 0 ? 0 : CLI_EXIT_INTERNAL;
}

/*
 * --format exim: "result<TAB>Received-SPF: ...", one line, for Exim's
 * ${run} (${extract{1}{\t}{$value}} is the result word). The header is
 * printable ASCII on one line by construction (lib/spf/output.c).
 */
static int print_exim(const struct spfkit_result *res)
{
	char line[HEADER_MAX];

	if (spfkit_format_received_spf(res, 1, line, sizeof(line)) < 0) {
		cli_error(CMD, "cannot write the Received-SPF header field");
		return CLI_EXIT_INTERNAL;
	}
	printf("%s\t%s\n", spfkit_result_name(res->code), line);
	return 0;
}

/* ---- --format policy: spfkit-policyd's answer ------------------------------ */

/*
 * The check of spfkit-policyd (mta/checker.c) done one evaluation after
 * the other, and its decision (mta/decision.c) under the default
 * configuration: skip_addresses, HELO first, MAIL FROM unless HELO
 * already rejects or the sender is null, No_Mail's "v=spf1 -all" test.
 * The DNS whitelists are empty by default and never run here.
 */
struct policy_run {
	const struct cli_env *env;
	const struct cli_query *q;
	struct spfkit__mta_config *cfg;
	struct spfkit__mta_input in;
	struct spfkit_eval *ev[2]; /* indexed by enum spfkit_identity */
	int no_mail[2];
	enum spfkit_identity stage;
};

/* As mta/checker.c: is the top record exactly "v=spf1 -all"? */
static void policy_trace(void *arg, const struct spfkit_trace_event *e)
{
	static const char want[] = "v=spf1 -all";
	struct policy_run *p = arg;
	size_t n = e->text_len;

	if (e->kind != SPFKIT_TRACE_RECORD || e->depth != 0 || e->text == NULL)
		return;
	while (n > 0 && e->text[n - 1] == ' ')
		n--;
	p->no_mail[p->stage] = spfkit__memcaseeq(e->text, n, want, sizeof(want) - 1);
}

static int policy_stage(struct policy_run *p, enum spfkit_identity id)
{
	struct spfkit__mta_check *chk = id == SPFKIT_IDENTITY_HELO ? &p->in.helo_check
								    : &p->in.mfrom_check;
	struct cli_query one = *p->q;
	int rc;

	one.identity = id;
	one.helo = p->in.helo;
	one.helo_len = p->in.helo_len;
	if (id == SPFKIT_IDENTITY_HELO) {
		one.sender = "";
		one.sender_len = 0;
	}
	p->stage = id;
	rc = cli_query_run(p->env, &one, policy_trace, p, &p->ev[id]);
	if (rc != 0)
		return rc;
	chk->checked = 1;
	chk->res = spfkit_eval_result(p->ev[id]);
	chk->no_mail_record = p->no_mail[id];
	return 0;
}

/* The result the answer reports, for the exit status; NULL when none was checked. */
static const struct spfkit_result *policy_reported(const struct spfkit__mta_input *in,
						   const struct spfkit__mta_decision *d)
{
	if (d->identity == SPFKIT_IDENTITY_HELO && in->helo_check.checked)
		return in->helo_check.res;
	if (in->mfrom_check.checked)
		return in->mfrom_check.res;
	return in->helo_check.checked ? in->helo_check.res : NULL;
}

/* "action=" and the action on one line: control bytes become spaces (as policyd/proto.c). */
static void print_action(const char *action)
{
	const char *a;

	fputs("action=", stdout);
	for (a = action; *a != '\0'; a++) {
		unsigned char c = (unsigned char)*a;

		putc(c < 0x20 || c == 0x7f ? ' ' : c, stdout);
	}
	putc('\n', stdout);
}

static int policy_check(struct policy_run *p)
{
	const struct cli_query *q = p->q;
	int id, rc;

	p->in.sender = q->sender;
	p->in.sender_len = q->sender_len;
	p->in.smtputf8 = spfkit__mta_sender_is_utf8(q->sender, q->sender_len); /* as spfkit-policyd */
	p->in.helo = q->helo;
	p->in.helo_len = q->helo_len;
	p->in.client_ip = p->q->ip_text;
	p->in.receiver = p->env->receiver;
	spfkit__mta_helo_fallback(&p->in);
	if (p->in.helo_len == 0)
		return 0; /* nothing to check: "dunno" */
	p->in.bypass = spfkit__mta_ip_bypass(p->cfg, &q->ip);
	if (p->in.bypass != SPFKIT__MTA_BYPASS_NONE)
		return 0;
	/* the daemons' order (mta/flow.h), each evaluation run to its end here */
	for (id = spfkit__mta_flow_next(p->cfg, &p->in, SPFKIT__MTA_FLOW_DONE);
	     id != SPFKIT__MTA_FLOW_DONE; id = spfkit__mta_flow_next(p->cfg, &p->in, id)) {
		rc = policy_stage(p, (enum spfkit_identity)id);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int run_policy(const struct cli_env *env, const struct cli_query *q)
{
	struct policy_run p;
	struct spfkit__mta_decision d;
	const struct spfkit_result *res;
	int rc, status;

	memset(&p, 0, sizeof(p));
	p.env = env;
	p.q = q;
	rc = spfkit__mta_config_defaults(NULL, &p.cfg);
	if (rc == 0)
		rc = policy_check(&p);
	if (rc != 0) {
		cli_error(CMD, "evaluation failed: %s", spfkit_strerror(rc));
		status = CLI_EXIT_INTERNAL;
	} else {
		spfkit__mta_decide(p.cfg, &p.in, &d);
		print_action(d.action);
		res = policy_reported(&p.in, &d);
		status = res != NULL ? (int)cli_exit_for(res->code) : CLI_EXIT_NONE;
	}
	spfkit_eval_free(p.ev[0]);
	spfkit_eval_free(p.ev[1]);
	spfkit__mta_config_free(p.cfg);
	return status;
}

/* ---- a single check ------------------------------------------------------ */

/* The query of the command line: a bad --ip or an over-long identity is refused. */
static int single_query(const struct check_opts *o, enum spfkit_identity id, struct cli_query *q)
{
	const char *sender = o->sender != NULL ? o->sender : "";
	int rc = cli_query_set(q, o->ip, strlen(o->ip), sender, strlen(sender), o->helo,
			       strlen(o->helo), id);

	if (rc == SPFKIT_E2BIG) {
		int helo = q->helo_len > CLI_IDENTITY_MAX;

		cli_error(CMD, "%s is %zu bytes long; at most %u are taken", helo ? "--helo" : "--sender",
			  helo ? q->helo_len : q->sender_len, CLI_IDENTITY_MAX);
		return -1;
	}
	if (rc != 0) {
		cli_error(CMD, "--ip '%.100s' is not an IPv4 or IPv6 address", o->ip);
		return -1;
	}
	return 0;
}

static int run_single(const struct check_opts *o, enum check_format f,
		      const struct cli_env *env, const struct cli_query *q)
{
	struct spfkit__buf trace_json;
	struct cli_trace trace;
	struct spfkit_eval *ev = NULL;
	int rc, status;

	spfkit__buf_init(&trace_json, NULL, JSON_MAX);
	cli_trace_init(&trace, o->json ? NULL : stdout, o->json ? &trace_json : NULL, &env->limits);
	rc = cli_query_run(env, q, o->trace ? cli_trace_event : NULL, &trace, &ev);
	if (rc != 0) {
		cli_error(CMD, "evaluation failed: %s", spfkit_strerror(rc));
		status = CLI_EXIT_INTERNAL;
	} else {
		const struct spfkit_result *res = spfkit_eval_result(ev);

		if (o->trace && !o->json)
			putc('\n', stdout);
		status = cli_exit_for(res->code);
		if (f == FORMAT_EXIM) {
			if (print_exim(res) != 0)
				status = CLI_EXIT_INTERNAL;
		} else if (o->json && print_json(env, q, res, o->trace ? &trace_json : NULL) != 0) {
			status = CLI_EXIT_INTERNAL;
		} else if (!o->json) {
			print_text(env, res);
		}
	}
	if (trace.err != 0 || trace_json.err != 0)
		cli_error(CMD, "the trace is incomplete: %s",
			  spfkit_strerror(trace.err ? trace.err : trace_json.err));
	spfkit_eval_free(ev);
	cli_trace_free(&trace);
	spfkit__buf_free(&trace_json);
	return status;
}

int cli_check_main(int argc, char **argv)
{
	struct check_opts o;
	struct cli_query q;
	struct cli_env env;
	enum spfkit_identity id;
	enum check_format f;
	int status;

	if (parse_args(argc, argv, &o) != 0)
		return CLI_EXIT_USAGE;
	if (o.help) {
		cli_check_usage(stdout);
		return 0;
	}
	if (parse_identity(o.identity, &id) != 0) {
		cli_error(CMD, "--identity must be 'mailfrom' or 'helo', not '%.100s'", o.identity);
		return CLI_EXIT_USAGE;
	}
	if (parse_format(&o, &f) != 0 || check_combination(&o, id, f) != 0)
		return CLI_EXIT_USAGE;
	if (f == FORMAT_JSON)
		o.json = 1;
	/* arguments first: a bad --ip is reported before any zone is loaded */
	if (o.batch == NULL && single_query(&o, id, &q) != 0)
		return CLI_EXIT_USAGE;
	status = env_open(&o, &env);
	if (status != 0)
		return status;
	if (o.batch != NULL)
		status = cli_batch_run(&env, o.batch, id, o.json);
	else if (f == FORMAT_POLICY)
		status = run_policy(&env, &q);
	else
		status = run_single(&o, f, &env, &q);
	env_close(&env);
	return status;
}
