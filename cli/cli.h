/*
 * The `spfkit` command: internal interfaces between its files.
 *
 *   main.c           dispatch, `spfkit --help`, `--version`
 *   opts.c           option parsing shared by the sub-commands
 *   cmd_check.c      `spfkit check`: options, one query, plain and JSON output
 *   cmd_lint.c       `spfkit lint` (and its lint_*.c files, see lint.h)
 *   batch.c          `spfkit check --batch`: "ip sender helo" lines
 *   resolver_open.c  the resolver behind a check: zone file or real DNS
 *   trace.c          --trace: the evaluation as an indented tree, or JSON events
 *   json.c           a JSON string escaper for untrusted bytes
 *   text.c           printing untrusted bytes on a terminal
 */
#ifndef SPFKIT_CLI_H
#define SPFKIT_CLI_H

#include <stdio.h>
#include <time.h>

#include <spfkit/spfkit.h>

#include "spfkit_util.h"

/* Exit status of `spfkit check`, one per result (documented in --help). */
enum cli_exit {
	CLI_EXIT_PASS = 0,
	CLI_EXIT_FAIL = 1,
	CLI_EXIT_USAGE = 2,     /* bad option, bad zone file, bad batch line */
	CLI_EXIT_SOFTFAIL = 3,
	CLI_EXIT_NEUTRAL = 4,
	CLI_EXIT_NONE = 5,
	CLI_EXIT_TEMPERROR = 6,
	CLI_EXIT_PERMERROR = 7,
	CLI_EXIT_INTERNAL = 8,  /* no result: out of memory, DNS backend failure */
};

#define CLI_PROG "spfkit"

/* ---- opts.c ---------------------------------------------------------- */

struct cli_opt {
	const char *name;
	const char **value; /* options with a value */
	int *flag;          /* options without one */
};

/* One argv entry (and its value); returns the next index, or -1 after an error. */
int cli_take_opt(const char *cmd, const struct cli_opt *specs, size_t n, int argc, char **argv,
		 int i);
/* Every argument of argv[1..]: options by specs, and at most one word
 * not starting with "--" into *positional (left NULL when absent).
 * 0, or -1 after saying what is wrong. */
int cli_take_args(const char *cmd, const struct cli_opt *specs, size_t n, int argc, char **argv,
		  const char **positional);
/* A decimal number in [1, max]; no sign, no spaces. 0 or -1. */
int cli_parse_count(const char *s, unsigned long max, int *out);

/* ---- resolver_open.c ------------------------------------------------- */

struct cli_dns_options {
	const char *zone_file; /* offline: serve this master file */
	const char *servers;   /* real DNS: "HOST[:PORT],..."; NULL: /etc/resolv.conf */
	int timeout_ms;        /* real DNS, per query; 0: the backend's default */
	int tries;             /* real DNS; 0: the backend's default */
};

struct cli_resolver {
	struct spfkit_zone *zone; /* zone mode only; outlives `resolver` */
	struct spfkit_resolver *resolver;
};

/*
 * Build the resolver `opt` asks for. On failure returns a negative
 * spfkit_err and writes one line saying what is wrong into err (for a
 * zone file, the loader's "file:line: what" text).
 */
int cli_resolver_open(const struct cli_dns_options *opt, struct cli_resolver *out, char *err,
		      size_t errlen);
void cli_resolver_close(struct cli_resolver *r);
/*
 * For the owner's tools (lint, tree): the resolver from option texts
 * (--zone, --dns, --timeout, --tries, each may be NULL), errors said on
 * stderr under `cmd`. 0; 64 (bad values, an unreadable zone file) or 70
 * (out of memory, c-ares failing), their exit statuses.
 */
int cli_resolver_open_texts(const char *cmd, const char *zone, const char *dns,
			    const char *timeout, const char *tries, struct cli_resolver *out);

/* ---- cmd_check.c ----------------------------------------------------- */

/* argv[0] is "check". Returns an enum cli_exit value. */
int cli_check_main(int argc, char **argv);
void cli_check_usage(FILE *f);
enum cli_exit cli_exit_for(enum spfkit_result_code code);

/* What every query of one run shares: built once, also for a batch. */
struct cli_env {
	struct spfkit_ctx *ctx;
	struct cli_resolver res;
	const char *receiver; /* --receiver, or the host name */
	char hostname[256];
	struct spfkit_limits limits;
};

/* One query; the strings are the caller's, with their lengths. */
struct cli_query {
	struct spfkit_ip ip;
	const char *ip_text;
	size_t ip_len;
	const char *sender; /* "" for an empty MAIL FROM */
	size_t sender_len;
	const char *helo;
	size_t helo_len;
	enum spfkit_identity identity;
};

/*
 * The longest sender or HELO name the evaluator takes (spfkit_eval_new()
 * refuses longer ones with SPFKIT_EINVAL); the CLI refuses them first,
 * as bad arguments with a reason.
 */
#define CLI_IDENTITY_MAX SPFKIT_IDENTITY_MAX

/*
 * Parse the IP and fill q. One pair of angle brackets around the sender
 * is dropped; "" and "<>" senders become empty. 0, SPFKIT_EINVAL (bad
 * IP) or SPFKIT_E2BIG (sender or HELO over CLI_IDENTITY_MAX bytes; q is
 * filled, so the caller can say which).
 */
int cli_query_set(struct cli_query *q, const char *ip, size_t ip_len, const char *sender,
		  size_t sender_len, const char *helo, size_t helo_len, enum spfkit_identity id);
/* Evaluate q; *out as from spfkit_check(). trace may be NULL. */
int cli_query_run(const struct cli_env *env, const struct cli_query *q, spfkit_trace_fn *trace,
		  void *trace_arg, struct spfkit_eval **out);
/* The result as one JSON object; trace_json (a JSON array body) may be NULL. */
void cli_json_result(struct spfkit__buf *b, const struct cli_env *env, const struct cli_query *q,
		     const struct spfkit_result *res, const struct spfkit__buf *trace_json);

/* ---- cmd_lint.c -------------------------------------------------------- */

/* argv[0] is "lint". Returns 0, 1, 2 (clean, warnings, errors) or CLI_LINT_EXIT_*. */
int cli_lint_main(int argc, char **argv);
void cli_lint_usage(FILE *f);

/* ---- batch.c --------------------------------------------------------- */

/* Run the "ip sender helo" lines of path ("-": stdin). Returns an enum cli_exit. */
int cli_batch_run(const struct cli_env *env, const char *path, enum spfkit_identity id,
		  int json);

/* ---- text.c ---------------------------------------------------------- */

/*
 * Print len untrusted bytes so that a terminal shows them and nothing
 * else: control bytes, DEL and bytes >= 0x80 as \xNN, a backslash as \\.
 */
void cli_put_safe(FILE *f, const char *s, size_t len);
/* Same for a NUL-terminated string made by the library; NULL prints "-". */
void cli_put_safe_str(FILE *f, const char *s);
/*
 * One line on stderr: "spfkit <cmd>: message" (cmd NULL: "spfkit: ").
 * The message is cut at 400 bytes and printed through cli_put_safe().
 */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- json.c ---------------------------------------------------------- */

/*
 * Append s[0..len) as a JSON string: " and \ escaped, bytes < 0x20 and
 * 0x7f as \u00XX, and every byte >= 0x80 as \u0080-\u00ff, one escape per
 * byte. The output is pure ASCII, valid JSON whatever the input bytes,
 * and a reader gets the exact input bytes back as code points 0-255.
 */
void cli_json_str(struct spfkit__buf *b, const char *s, size_t len);
/* A NUL-terminated string made by the library, or null for NULL. */
void cli_json_cstr(struct spfkit__buf *b, const char *s);
/* `"key":` with a comma before it unless *first. */
void cli_json_key(struct spfkit__buf *b, int *first, const char *key);

/* ---- trace.c --------------------------------------------------------- */

struct cli_query_time {
	uint32_t id;
	struct timespec sent;
};

struct cli_trace {
	FILE *text;               /* text mode: the tree is printed here as it grows */
	struct spfkit__buf *json; /* JSON mode: events appended as array members */
	int json_first;
	struct spfkit_limits limits; /* shown next to the counters */
	struct cli_query_time *sent; /* questions waiting for their answer */
	size_t nsent, capsent;
	/* the CHECK last shown, while no record or result has followed it */
	int check_open;
	unsigned check_depth;
	char check_domain[256];
	int err; /* first failure (SPFKIT_ENOMEM...): trace is incomplete */
};

void cli_trace_init(struct cli_trace *t, FILE *text, struct spfkit__buf *json,
		    const struct spfkit_limits *limits);
void cli_trace_free(struct cli_trace *t);
/* The spfkit_trace_fn given to the request; arg is a struct cli_trace. */
void cli_trace_event(void *arg, const struct spfkit_trace_event *ev);

#endif
