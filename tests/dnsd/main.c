/*
 * dnsd: the standalone loopback DNS server, for the Postfix end-to-end
 * test and `make bench`. Serves one master file until SIGTERM or SIGINT;
 * SIGHUP reloads the file. See usage() and dnsd.h.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spfkit/zone.h>

#include "dnsd.h"
#include "wire.h"

struct args {
	struct dnsd_options opt;
	const char *zone_file;
	const char *origin;
	const char *port_file;
	const char *pid_file;
};

static void usage(FILE *f)
{
	fputs("usage: dnsd --zone FILE [options]\n"
	      "Serve FILE (an RFC 1035 master file) over UDP and TCP on loopback only.\n"
	      "  --zone FILE              the zone to serve (required)\n"
	      "  --origin NAME            $ORIGIN for relative names (default: .)\n"
	      "  --listen ADDR            127.0.0.0/8 or ::1 (default 127.0.0.1)\n"
	      "  --port N                 port, 0 = pick a free one (default 0)\n"
	      "  --port-file F            write the port to F once ready\n"
	      "  --pid-file F             write the process id to F\n"
	      "  --delay-ms N             delay every answer by N ms\n"
	      "  --delay NAME[/TYPE]:MS   delay answers for NAME by MS instead\n"
	      "  --timeout NAME[/TYPE]    never answer NAME\n"
	      "  --servfail NAME[/TYPE]   answer NAME with SERVFAIL\n"
	      "  --truncate NAME[/TYPE]   answer NAME over UDP with TC=1 only\n"
	      "  --malformed NAME[/TYPE]:KIND\n"
	      "                           KIND: loop past-end short bad-id garbage wrong-question\n"
	      "                           txt-no-strings empty-strings cname-loop cname-chain\n"
	      "                           ptr-forward ptr-loop2 ptr-beyond truncate-always cut corrupt\n"
	      "  --seed N                 what `corrupt` changes (default 0)\n"
	      "  --tcp-idle-ms N          close idle TCP connections after N ms (default 2000)\n"
	      "  --neg-ttl N              TTL and SOA minimum of negative answers (default 300)\n"
	      "Prints \"listening on ADDR:PORT\" when ready; SIGHUP reloads the zone;\n"
	      "SIGTERM or SIGINT stops it and prints the counters on stderr.\n"
	      "Exit status: 0 stopped by a signal, 1 runtime error, 2 usage error.\n",
	      f);
}

static int fail_usage(const char *what, const char *arg)
{
	fprintf(stderr, "dnsd: %s: '%.100s'\n", what, arg);
	return 2;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (unsigned long)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return 0;
}

/* NAME[/TYPE][:TAIL], the name part copied out; *tail NULL when absent. */
static int split_rule(const char *arg, int want_tail, char *name, size_t size, uint16_t *type,
		      const char **tail)
{
	const char *colon = want_tail ? strrchr(arg, ':') : NULL;
	const char *end = colon != NULL ? colon : arg + strlen(arg);
	const char *slash = NULL, *p;

	if (want_tail && colon == NULL)
		return -1;
	for (p = arg; p < end; p++)
		if (*p == '/')
			slash = p;
	*type = 0;
	if (slash != NULL && dnsd_wire_type_parse(slash + 1, (size_t)(end - slash - 1), type) != 0)
		return -1;
	if (slash != NULL)
		end = slash;
	if (end == arg || (size_t)(end - arg) >= size)
		return -1;
	memcpy(name, arg, (size_t)(end - arg));
	name[end - arg] = '\0';
	*tail = colon != NULL ? colon + 1 : NULL;
	return 0;
}

/* One fault flag, applied to the running server. */
static int apply_rule(struct dnsd *d, const char *flag, const char *arg)
{
	char name[1024];
	uint16_t type = 0;
	const char *tail = NULL;
	enum dnsd_action act = DNSD_ANSWER;
	unsigned long ms = 0;
	int with_tail = strcmp(flag, "--delay") == 0 || strcmp(flag, "--malformed") == 0;

	if (split_rule(arg, with_tail, name, sizeof(name), &type, &tail) != 0)
		return fail_usage(with_tail ? "expected NAME[/TYPE]:VALUE" : "expected NAME[/TYPE]",
				  arg);
	if (strcmp(flag, "--delay") == 0) {
		if (parse_uint(tail, 3600000, &ms) != 0)
			return fail_usage("bad delay in ms", arg);
		return dnsd_fault_delay(d, name, type, (unsigned)ms) ? fail_usage("too many rules", arg) : 0;
	}
	if (strcmp(flag, "--malformed") == 0) {
		if (dnsd_action_parse(tail, strlen(tail), &act) != 0 || act < DNSD_MAL_LOOP)
			return fail_usage("unknown malformed kind", arg);
	} else {
		act = strcmp(flag, "--timeout") == 0    ? DNSD_TIMEOUT
		      : strcmp(flag, "--servfail") == 0 ? DNSD_SERVFAIL
							: DNSD_TRUNCATE;
	}
	return dnsd_fault(d, name, type, act) ? fail_usage("too many rules", arg) : 0;
}

static int is_rule_flag(const char *f)
{
	return strcmp(f, "--delay") == 0 || strcmp(f, "--timeout") == 0 ||
	       strcmp(f, "--servfail") == 0 || strcmp(f, "--truncate") == 0 ||
	       strcmp(f, "--malformed") == 0;
}

/* The flags taking a number: reaching the end of set_option with one means a bad value. */
static int is_number_flag(const char *f)
{
	return strcmp(f, "--port") == 0 || strcmp(f, "--delay-ms") == 0 ||
	       strcmp(f, "--tcp-idle-ms") == 0 || strcmp(f, "--neg-ttl") == 0 ||
	       strcmp(f, "--seed") == 0;
}

static int set_option(struct args *a, const char *flag, const char *val)
{
	unsigned long v = 0;

	if (strcmp(flag, "--zone") == 0)
		a->zone_file = val;
	else if (strcmp(flag, "--origin") == 0)
		a->origin = val;
	else if (strcmp(flag, "--listen") == 0)
		a->opt.addr = val;
	else if (strcmp(flag, "--port-file") == 0)
		a->port_file = val;
	else if (strcmp(flag, "--pid-file") == 0)
		a->pid_file = val;
	else if (strcmp(flag, "--port") == 0 && parse_uint(val, 65535, &v) == 0)
		a->opt.port = (int)v;
	else if (strcmp(flag, "--delay-ms") == 0 && parse_uint(val, 3600000, &v) == 0)
		a->opt.delay_ms = (unsigned)v;
	else if (strcmp(flag, "--tcp-idle-ms") == 0 && parse_uint(val, 3600000, &v) == 0)
		a->opt.tcp_idle_ms = (unsigned)v;
	else if (strcmp(flag, "--neg-ttl") == 0 && parse_uint(val, 0x7fffffff, &v) == 0)
		a->opt.neg_ttl = (uint32_t)v;
	else if (strcmp(flag, "--seed") == 0 && parse_uint(val, 0xffffffffu, &v) == 0)
		a->opt.seed = (uint32_t)v;
	else if (!is_number_flag(flag))
		return fail_usage("unknown option", flag);
	else {
		fprintf(stderr, "dnsd: bad number for %s: '%.100s'\n", flag, val);
		return 2;
	}
	return 0;
}

/* First pass: everything but the fault rules, which need a running server. */
static int parse_args(int argc, char **argv, struct args *a)
{
	int i, rc;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (i + 1 >= argc)
			return fail_usage("option needs a value", argv[i]);
		if (is_rule_flag(argv[i])) {
			i++;
			continue;
		}
		rc = set_option(a, argv[i], argv[i + 1]);
		if (rc != 0)
			return rc;
		i++;
	}
	if (a->zone_file == NULL) {
		fputs("dnsd: --zone FILE is required (see --help)\n", stderr);
		return 2;
	}
	return 0;
}

static int apply_rules(struct dnsd *d, int argc, char **argv)
{
	int i, rc;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!is_rule_flag(argv[i]))
			continue;
		rc = apply_rule(d, argv[i], argv[i + 1]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static struct spfkit_zone *load_zone(const struct args *a)
{
	struct spfkit_zone *z = NULL;
	char err[512];
	int rc;

	if (spfkit_zone_new(NULL, &z) != 0) {
		fputs("dnsd: out of memory\n", stderr);
		return NULL;
	}
	err[0] = '\0';
	rc = spfkit_zone_load_file(z, a->zone_file, a->origin, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "dnsd: %s\n", err[0] ? err : spfkit_strerror(rc));
		spfkit_zone_free(z);
		return NULL;
	}
	return z;
}

/* Write "N\n" to path atomically (temp file, then rename), so a reader never sees half. */
static int write_number(const char *path, long n)
{
	char tmp[4096];
	FILE *f;
	int len = snprintf(tmp, sizeof(tmp), "%s.tmp", path);

	if (len < 0 || (size_t)len >= sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (f == NULL)
		return -1;
	if (fprintf(f, "%ld\n", n) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void print_counters(struct dnsd *d)
{
	struct dnsd_counters c;

	dnsd_counters(d, &c);
	fprintf(stderr,
		"dnsd: queries udp=%llu tcp=%llu bad=%llu answers=%llu truncated=%llu "
		"unanswered=%llu dropped=%llu tcp_accepted=%llu tcp_evicted=%llu "
		"tcp_idle_closed=%llu\n",
		(unsigned long long)c.udp_queries, (unsigned long long)c.tcp_queries,
		(unsigned long long)c.bad_queries, (unsigned long long)c.answers,
		(unsigned long long)c.truncated, (unsigned long long)c.unanswered,
		(unsigned long long)c.dropped, (unsigned long long)c.tcp_accepted,
		(unsigned long long)c.tcp_evicted, (unsigned long long)c.tcp_idle_closed);
}

/* SIGHUP: load afresh; keep serving the old zone if the new one fails. */
static void reload(struct dnsd *d, const struct args *a, struct spfkit_zone **zone)
{
	struct spfkit_zone *z = load_zone(a);

	if (z == NULL) {
		fputs("dnsd: reload failed, still serving the previous zone\n", stderr);
		return;
	}
	dnsd_set_zone(d, z);
	spfkit_zone_free(*zone);
	*zone = z;
	fputs("dnsd: zone reloaded\n", stderr);
}

static int announce(struct dnsd *d, const struct args *a)
{
	const char *addr = dnsd_addr(d);
	int v6 = strchr(addr, ':') != NULL;

	if (a->pid_file != NULL && write_number(a->pid_file, (long)getpid()) != 0) {
		fprintf(stderr, "dnsd: cannot write %s\n", a->pid_file);
		return 1;
	}
	if (a->port_file != NULL && write_number(a->port_file, dnsd_port(d)) != 0) {
		fprintf(stderr, "dnsd: cannot write %s\n", a->port_file);
		return 1;
	}
	printf("listening on %s%s%s:%d\n", v6 ? "[" : "", addr, v6 ? "]" : "", dnsd_port(d));
	fflush(stdout);
	return 0;
}

static void serve_until_signal(struct dnsd *d, const struct args *a, struct spfkit_zone **zone,
			       const sigset_t *set)
{
	for (;;) {
		int sig = 0;

		if (sigwait(set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			reload(d, a, zone);
			continue;
		}
		return;
	}
}

int main(int argc, char **argv)
{
	struct args a;
	struct spfkit_zone *zone;
	struct dnsd *d = NULL;
	sigset_t set;
	int rc = parse_args(argc, argv, &a);

	if (rc != 0)
		return rc;
	zone = load_zone(&a);
	if (zone == NULL)
		return 1;
	/* Block before the thread starts so it inherits the mask and only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = dnsd_start(&a.opt, zone, &d);
	if (rc != 0) {
		fprintf(stderr, "dnsd: cannot listen on %.100s port %d: %s%s\n",
			a.opt.addr ? a.opt.addr : "127.0.0.1", a.opt.port, spfkit_strerror(rc),
			rc == SPFKIT_EINVAL ? " (loopback only: 127.0.0.0/8 or ::1)" : "");
		spfkit_zone_free(zone);
		return rc == SPFKIT_EINVAL ? 2 : 1;
	}
	rc = apply_rules(d, argc, argv);
	if (rc == 0)
		rc = announce(d, &a);
	if (rc == 0) {
		serve_until_signal(d, &a, &zone, &set);
		print_counters(d);
	}
	dnsd_stop(d);
	spfkit_zone_free(zone);
	if (a.port_file != NULL)
		unlink(a.port_file);
	if (a.pid_file != NULL)
		unlink(a.pid_file);
	return rc;
}
