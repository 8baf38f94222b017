/*
 * Load generator for Postfix policy services (spfkit-policyd, and
 * policyd-spf for comparison): C concurrent clients, each sending one
 * request, waiting for its answer, sending the next, for T seconds.
 * Prints requests per second and p50/p99 latency on a "#BENCH" line.
 *
 *   bench_policyd --unix PATH -c 64 -t 5 [--name spfkit]
 *   bench_policyd --unix PATH -c 8 -n 20000
 *       (exactly 20000 timed requests after the warm-up: callgrind's Ir per request)
 *   bench_policyd --spawn -c 64 -t 5 -- /usr/bin/policyd-spf CONF
 *       (one process per connection on a socketpair, as Postfix's spawn)
 *   bench_policyd --unix PATH --idle 1000 --pid PID
 *       (resident memory of PID before and with 1000 idle connections)
 *
 * The #BENCH line also says the CPU time per request of the generator
 * itself (gen_cpu_us) and, given --pid with --unix, of the service
 * (server_user_us, server_sys_us, from /proc/PID/stat): on a machine the
 * two share, their sum bounds the requests/s any service reaches.
 *
 * Every request has its own `instance`, so no answer comes from the
 * per-message cache: each one is a HELO and a MAIL FROM evaluation.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load_common.h"

#define MAX_CLIENTS 1024
#define MAX_SAMPLES (1u << 22)

struct client {
	int fd;
	pid_t pid;
	char in[8192];
	size_t in_len;
	uint64_t sent_ns;
};

/* Postfix spawn(8): the service's stdin and stdout are one socket. */
static int spawn(char **argv, pid_t *pid)
{
	int sv[2];

	/* close-on-exec: a later service must not hold an earlier one's socket open */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	*pid = fork();
	if (*pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(sv[1], 0);
		dup2(sv[1], 1);
		if (null >= 0)
			dup2(null, 2); /* a service killed at the end may complain */
		close(sv[0]);
		close(sv[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(sv[1]);
	return sv[0];
}

static int send_request(struct client *c, unsigned long serial)
{
	char req[1024];
	int n = snprintf(req, sizeof(req),
			 "request=smtpd_access_policy\nprotocol_state=RCPT\nprotocol_name=ESMTP\n"
			 "helo_name=mx.example.com\nqueue_id=BENCH\nsender=alice@example.com\n"
			 "recipient=bob@receiver.test\nclient_address=192.0.2.10\n"
			 "client_name=mx.example.com\ninstance=bench.%lu\n\n",
			 serial);

	c->sent_ns = load_now_ns();
	return write(c->fd, req, (size_t)n) == n ? 0 : -1;
}

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

/* CPU seconds (user, system) of PID so far, from /proc/PID/stat; -1 when unknown. */
static int proc_cpu(pid_t pid, double *user, double *sys)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (f == NULL || hz <= 0) {
		if (f != NULL)
			fclose(f);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* past "pid (comm) ": comm may hold spaces, the last ')' ends it; then
	 * fields 3 to 13, utime and stime are fields 14 and 15 */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
				&st) != 2)
		return -1;
	*user = (double)ut / (double)hz;
	*sys = (double)st / (double)hz;
	return 0;
}

/* This process's CPU seconds so far, user and system together. */
static double self_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int idle_test(const char *path, int n, pid_t pid)
{
	static int fds[100000];
	long before = rss_kb(pid), after;
	int i, opened = 0;

	for (i = 0; i < n && i < (int)(sizeof(fds) / sizeof(fds[0])); i++) {
		fds[i] = load_connect_unix(path);
		if (fds[i] < 0)
			break;
		opened++;
	}
	usleep(500000);
	after = rss_kb(pid);
	printf("#BENCH policyd-idle connections=%d rss_before_kb=%ld rss_kb=%ld per_conn_bytes=%ld\n",
	       opened, before, after, opened ? (after - before) * 1024 / opened : 0);
	for (i = 0; i < opened; i++)
		close(fds[i]);
	return opened == n ? 0 : 1;
}

/* One answered request per client before the clock starts (spawned
 * services start their interpreter then; the DNS cache gets warm). */
static int warm_up(struct client *cl, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct client *c = &cl[i];

		if (send_request(c, 1000000000ul + (unsigned long)i) != 0)
			return -1;
		c->in_len = 0;
		while (c->in_len < 2 || memcmp(c->in + c->in_len - 2, "\n\n", 2) != 0) {
			ssize_t r = read(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len);

			if (r <= 0)
				return -1;
			c->in_len += (size_t)r;
		}
		c->in_len = 0;
	}
	return 0;
}

/*
 * epoll, not poll(): poll() hands the kernel every descriptor on every
 * call, so at 64 clients the generator spent more than the daemon it
 * measures, on the same two cores. max_requests: stop after that many
 * answers (callgrind counts per request); 0: run for secs.
 */
static int run(struct client *cl, int n, double secs, unsigned long max_requests, const char *name,
	       pid_t server)
{
	static uint64_t samples[MAX_SAMPLES];
	struct epoll_event evs[MAX_CLIENTS];
	unsigned long serial = 0, done = 0, errors = 0;
	uint64_t t0 = load_now_ns(), end = t0 + (uint64_t)(secs * 1e9), elapsed;
	double gen0 = self_cpu(), su0 = 0, ss0 = 0, su1, ss1;
	int i, ep = epoll_create1(EPOLL_CLOEXEC), ready;
	int server_cpu = server > 0 && proc_cpu(server, &su0, &ss0) == 0;

	if (ep < 0)
		return 1;
	for (i = 0; i < n; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};

		if (epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &ev) != 0) {
			close(ep);
			return 1;
		}
	}

	for (i = 0; i < n; i++)
		if (send_request(&cl[i], serial++) != 0)
			errors++;
	while (max_requests > 0 ? done < max_requests : load_now_ns() < end) {
		ready = epoll_wait(ep, evs, n, 100);
		if (ready < 0 && errno != EINTR) {
			close(ep);
			return 1;
		}
		for (int k = 0; k < ready; k++) {
			struct client *c = &cl[evs[k].data.u32];
			ssize_t r;
			char *eom;

			i = (int)evs[k].data.u32;
			r = read(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len);
			if (r <= 0) {
				fprintf(stderr, "%s: client %d: connection closed\n", name, i);
				close(ep);
				return 1;
			}
			c->in_len += (size_t)r;
			c->in[c->in_len] = '\0';
			eom = strstr(c->in, "\n\n");
			if (eom == NULL)
				continue;
			if (strncmp(c->in, "action=", 7) != 0)
				errors++;
			if (done < MAX_SAMPLES)
				samples[done] = load_now_ns() - c->sent_ns;
			done++;
			c->in_len = 0;
			if (max_requests > 0 && serial >= max_requests)
				continue; /* enough asked: wait for the answers in flight */
			if (send_request(c, serial++) != 0)
				errors++;
		}
	}
	close(ep);
	elapsed = load_now_ns() - t0;
	if (done == 0) {
		fprintf(stderr, "%s: no answer\n", name);
		return 1;
	}
	qsort(samples, done < MAX_SAMPLES ? done : MAX_SAMPLES, sizeof(samples[0]), load_cmp_u64);
	{
		size_t m = done < MAX_SAMPLES ? done : MAX_SAMPLES;

		printf("#BENCH %s clients=%d requests=%lu rps=%.0f p50_us=%.0f p99_us=%.0f errors=%lu "
		       "gen_cpu_us=%.2f",
		       name, n, done, (double)done / ((double)elapsed / 1e9), samples[m / 2] / 1e3,
		       samples[m * 99 / 100] / 1e3, errors, (self_cpu() - gen0) * 1e6 / (double)done);
		if (server_cpu && proc_cpu(server, &su1, &ss1) == 0)
			printf(" server_user_us=%.2f server_sys_us=%.2f", (su1 - su0) * 1e6 / (double)done,
			       (ss1 - ss0) * 1e6 / (double)done);
		printf("\n");
	}
	return errors != 0;
}

int main(int argc, char **argv)
{
	static struct client cl[MAX_CLIENTS];
	const char *unix_path = NULL, *name = "policyd";
	char **cmd = NULL;
	int n = 1, idle = 0, i, rc, spawn_mode = 0;
	double secs = 3;
	unsigned long max_requests = 0;
	pid_t pid = 0;
	struct rlimit rl;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--unix") == 0 && i + 1 < argc)
			unix_path = argv[++i];
		else if (strcmp(argv[i], "--spawn") == 0)
			spawn_mode = 1;
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			n = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
			secs = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			max_requests = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strcmp(argv[i], "--idle") == 0 && i + 1 < argc)
			idle = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--pid") == 0 && i + 1 < argc)
			pid = (pid_t)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--") == 0) {
			cmd = argv + i + 1;
			break;
		} else {
			fprintf(stderr, "usage: see the comment at the top of bench_policyd.c\n");
			return 2;
		}
	}
	/* 1,000 idle connections need more descriptors than the usual 1024 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	if (idle > 0 && unix_path != NULL)
		return idle_test(unix_path, idle, pid);
	if (n < 1 || n > MAX_CLIENTS || (unix_path == NULL && !(spawn_mode && cmd != NULL))) {
		fprintf(stderr, "usage: see the comment at the top of bench_policyd.c\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		cl[i].fd = spawn_mode ? spawn(cmd, &cl[i].pid) : load_connect_unix(unix_path);
		if (cl[i].fd < 0) {
			fprintf(stderr, "%s: cannot open client %d\n", name, i);
			return 1;
		}
	}
	if (warm_up(cl, n) != 0) {
		fprintf(stderr, "%s: no answer while warming up\n", name);
		return 1;
	}
	rc = run(cl, n, secs, max_requests, name, pid);
	for (i = 0; i < n; i++)
		close(cl[i].fd);
	for (i = 0; i < n; i++)
		if (cl[i].pid > 0)
			waitpid(cl[i].pid, NULL, 0);
	return rc;
}
