/* Minimal libspfkit use: is 192.0.2.10 allowed to send as alice@example.com? */
#include <stdio.h>
#include <string.h>

#include <spfkit/spfkit.h>

int main(int argc, char **argv)
{
	const char *zone_file = argc > 1 ? argv[1] : "data/demo.zone";
	struct spfkit_config cfg;
	struct spfkit_request req;
	struct spfkit_ctx *ctx = NULL;
	struct spfkit_zone *zone = NULL;
	struct spfkit_resolver *resolver = NULL;
	struct spfkit_eval *ev = NULL;
	char err[256], header[1024];
	int rc = 1;

	spfkit_config_init(&cfg); /* zeros are the defaults; size lets the struct grow */
	cfg.receiver = "mx.receiver.example";
	spfkit_request_init(&req);
	req.sender = "alice@example.com";
	req.sender_len = strlen(req.sender);
	req.helo = "mx1.example.com";
	req.helo_len = strlen(req.helo);
	if (spfkit_ctx_new(&cfg, &ctx) != 0 || spfkit_zone_new(NULL, &zone) != 0)
		goto out;
	if (spfkit_zone_load_file(zone, zone_file, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	if (spfkit_zone_resolver(zone, &resolver) != 0 ||
	    spfkit_ip_parse("192.0.2.10", strlen("192.0.2.10"), &req.ip) != 0 ||
	    spfkit_check(ctx, resolver, &req, &ev) != 0)
		goto out;
	spfkit_format_received_spf(spfkit_eval_result(ev), 1, header, sizeof(header));
	printf("%s\n%s\n", spfkit_result_name(spfkit_eval_result(ev)->code), header);
	rc = spfkit_eval_result(ev)->code == SPFKIT_RESULT_PASS ? 0 : 1;
out:
	spfkit_eval_free(ev);             /* each object is freed by its own call */
	spfkit_resolver_free(resolver);   /* before the zone it reads */
	spfkit_zone_free(zone);
	spfkit_ctx_free(ctx);
	return rc;
}
