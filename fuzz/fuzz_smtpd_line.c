/*
 * Fuzz spfkit-smtpd-filter (smtpd/filter.c) as smtpd drives it: the input
 * is what smtpd would write to the filter's stdin (configuration, report
 * events, filter requests, data lines, garbage), read from a file by the
 * real filter on its own libevent loop, with DNS from a small zone behind
 * the DNS cache the filter runs by default (so its record memo is on). The
 * output goes to /dev/null; the loop must end by itself at end of input
 * (checks in flight cancelled), with no crash, leak or sanitizer report.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <spfkit/cache.h>
#include <spfkit/spfkit.h>
#include <spfkit/zone.h>

#include "filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char zone_text[] =
	"pass.test. TXT \"v=spf1 ip4:192.0.2.0/24 -all\"\n"
	"fail.test. TXT \"v=spf1 ip4:198.51.100.0/24 -all\"\n"
	"mx.pass.test. A 192.0.2.10\n";

static const char conf_text[] =
	"TempError_Defer = True\n"
	"Header_Type = SPF,AR\n"
	"Authserv_Id = mx.receiver.test\n"
	"InternalHosts = 10.0.0.0/8\n";

/* The input as a file the filter reads to its end (poll sees a file always readable). */
static int input_file(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_smtpd_line_XXXXXX";
	int fd = mkstemp(path);
	size_t done = 0;

	if (fd < 0)
		return -1;
	unlink(path);
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spfkit_zone *zone = NULL;
	struct spfkit_resolver *r = NULL, *layer = NULL;
	struct spfkit_cache *cache = NULL;
	struct spfkit__mta_config *cfg = NULL;
	struct event_config *ec = NULL;
	struct event_base *base = NULL;
	struct spfkit__smtpd *f = NULL;
	struct spfkit__smtpd_opts o;
	char err[256];
	int in = input_file(data, size), out = open("/dev/null", O_WRONLY);

	if (in < 0 || out < 0)
		abort();
	if (spfkit_zone_new(NULL, &zone) != 0 ||
	    spfkit_zone_load_text(zone, zone_text, sizeof(zone_text) - 1, "fuzz", NULL, err,
				  sizeof(err)) != 0 ||
	    spfkit_zone_resolver(zone, &r) != 0 || spfkit_cache_new(NULL, NULL, &cache) != 0 ||
	    spfkit_cache_resolver(cache, r, &layer) != 0 ||
	    spfkit__mta_config_parse(conf_text, sizeof(conf_text) - 1, "fuzz", NULL, NULL, NULL,
				     &cfg) != 0)
		abort();
	ec = event_config_new();
	if (ec == NULL || event_config_avoid_method(ec, "epoll") != 0)
		abort();
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	memset(&o, 0, sizeof(o));
	o.receiver = "mx.receiver.test";
	o.log_stderr = 1;
	o.in_fd = in;
	o.out_fd = out;
	if (base == NULL || spfkit__smtpd_new(base, &o, cfg, r, layer, &f) != 0)
		abort();
	event_base_dispatch(base); /* ends at end of input */
	spfkit__smtpd_free(f);
	event_base_free(base);
	spfkit_resolver_free(layer);
	spfkit_resolver_free(r);
	spfkit_cache_free(cache);
	spfkit_zone_free(zone);
	close(in);
	close(out);
	return 0;
}
