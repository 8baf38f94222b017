/*
 * A libspf2 program, linked against our libspf2.so.2, calling it the way
 * its users do:
 *  - Exim 4.96 (src/spf.c): its own DNS layer (zone_layer.h) under a
 *    cache layer, SPF_server_new_dns(), its explanation template, the
 *    "set_ipv4_str && set_ipv6_str" idiom, header comment, Received-SPF
 *    and smtp comment, the message list, spf_guess through
 *    SPF_request_query_fallback() when the result is none;
 *  - smf-spf and milter-greylist: SPF_server_new(SPF_DNS_CACHE, 0),
 *    SPF_strreason(response->reason), response->header_comment.
 *
 *   test_consumer                         Exim-style checks on the table
 *   test_consumer --resolv IP SENDER HELO smf-spf style over real DNS
 *                                         ($SPFKIT_DNS_SERVERS); prints
 *                                         "result reason | comment | header"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spf2/spf.h>
#include <spf2/spf_dns_cache.h>

#include "zone_data.h"

static int failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			printf("FAIL line %d: ", __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			failures++; \
		} \
	} while (0)

static int same(const char *got, const char *want)
{
	return got != NULL && want != NULL && strcmp(got, want) == 0;
}

/* Exim's spf_process() for one message; returns the result. */
static SPF_result_t exim_message(SPF_server_t *server, const char *ip, const char *helo,
				 const char *sender, const char *guess, SPF_response_t **respp)
{
	SPF_request_t *req = SPF_request_new(server);
	SPF_result_t rc;

	CHECK(req != NULL, "SPF_request_new");
	if (SPF_request_set_ipv4_str(req, ip) && SPF_request_set_ipv6_str(req, ip))
		CHECK(0, "address %s refused", ip);
	CHECK(SPF_request_set_helo_dom(req, helo) == SPF_E_SUCCESS, "set_helo_dom");
	CHECK(SPF_request_set_env_from(req, sender) == 0, "set_env_from");
	SPF_request_query_mailfrom(req, respp);
	rc = SPF_response_result(*respp);
	if (guess != NULL && strcmp(SPF_strresult(rc), "none") == 0) {
		SPF_response_free(*respp);
		*respp = NULL;
		SPF_request_query_fallback(req, respp, guess);
		rc = SPF_response_result(*respp);
	}
	/* Exim's spf_response_debug() */
	for (int i = 0; i < SPF_response_messages(*respp); i++) {
		SPF_error_t *err = SPF_response_message(*respp, i);

		CHECK(err != NULL && SPF_error_message(err) != NULL, "message %d", i);
		printf("  %s_msg = (%d) %s\n", SPF_error_errorp(err) ? "warn" : "err",
		       SPF_error_code(err), SPF_error_message(err));
	}
	SPF_request_free(req);
	return rc;
}

static void exim_style(void)
{
	struct zone_layer z;
	SPF_dns_server_t *dc;
	SPF_server_t *server;
	SPF_response_t *resp = NULL;
	SPF_result_t rc;
	int maj = 0, min = 0, patch = 0;

	SPF_get_lib_version(&maj, &min, &patch);
	CHECK(maj == 1 && min == 2 && patch == 10, "version %d.%d.%d", maj, min, patch);

	zone_layer_init(&z, zone_data, ZONE_COUNT, SPF_dns_rr_dup);
	/* Exim's SPF_dns_exim_new(): a never-answering sentinel record */
	SPF_dns_rr_t *nx = SPF_dns_rr_new_init(&z.s, "", ns_t_any, 24 * 60 * 60, HOST_NOT_FOUND);
	CHECK(nx != NULL && nx->herrno == HOST_NOT_FOUND && nx->domain == NULL, "rr_new_init");
	dc = SPF_dns_cache_new(&z.s, NULL, 0, 8);
	CHECK(dc != NULL, "SPF_dns_cache_new");
	server = SPF_server_new_dns(dc, 0);
	CHECK(server != NULL, "SPF_server_new_dns");
	SPF_server_set_explanation(server, "Please%_see%_http://www.open-spf.org/Why", &resp);
	CHECK(SPF_response_errcode(resp) == SPF_E_SUCCESS, "explanation: %s",
	      SPF_strerror(SPF_response_errcode(resp)));
	SPF_response_free(resp);
	resp = NULL;
	CHECK(SPF_server_set_explanation(server, "bad %{z} macro", &resp) != SPF_E_SUCCESS,
	      "a bad explanation is refused");
	CHECK(SPF_response_messages(resp) == 1, "one message for it");
	SPF_response_free(resp);
	resp = NULL;
	CHECK(SPF_server_set_rec_dom(server, "mx.receiver.example") == SPF_E_SUCCESS, "rec_dom");

	/* forged sender: fail, Exim's 550 text from smtp comment */
	rc = exim_message(server, "203.0.113.5", "mail.example.com", "alice@example.com", NULL,
			  &resp);
	CHECK(rc == SPF_RESULT_FAIL, "got %s, want fail", SPF_strresult(rc));
	CHECK(resp->reason == SPF_REASON_MECH, "reason %s", SPF_strreason(resp->reason));
	CHECK(same(SPF_response_get_smtp_comment(resp),
		   "Please see http://www.open-spf.org/Why : Reason: mechanism"),
	      "smtp comment %s", SPF_response_get_smtp_comment(resp));
	CHECK(same(resp->header_comment, "mx.receiver.example: domain of example.com does not "
					 "designate 203.0.113.5 as permitted sender"),
	      "header comment %s", resp->header_comment);
	CHECK(same(SPF_response_get_received_spf(resp),
		   "Received-SPF: fail (mx.receiver.example: domain of example.com does not designate "
		   "203.0.113.5 as permitted sender) client-ip=203.0.113.5; "
		   "envelope-from=\"alice@example.com\"; helo=mail.example.com; "
		   "receiver=mx.receiver.example; identity=mailfrom;"),
	      "received-spf %s", SPF_response_get_received_spf(resp));
	CHECK(resp->received_spf_value == resp->received_spf + 14 &&
		      same(SPF_response_get_received_spf_value(resp), resp->received_spf + 14),
	      "received_spf_value");
	SPF_response_free(resp);
	resp = NULL;

	/* pass, over IPv6 (the ipv4_str failure falls through to ipv6_str) */
	rc = exim_message(server, "2001:db8::25", "mail.six.example", "jo@six.example", NULL, &resp);
	CHECK(rc == SPF_RESULT_PASS, "got %s, want pass", SPF_strresult(rc));
	CHECK(resp->smtp_comment == NULL && resp->explanation == NULL, "no comment on pass");
	SPF_response_free(resp);
	resp = NULL;

	/* temperror: Exim defers */
	rc = exim_message(server, "192.0.2.9", "h.example", "ida@tempmech.example", NULL, &resp);
	CHECK(rc == SPF_RESULT_TEMPERROR, "got %s, want temperror", SPF_strresult(rc));
	CHECK(SPF_response_errcode(resp) == SPF_E_DNS_ERROR, "errcode %d", resp->err);
	CHECK(SPF_response_messages(resp) >= 1, "a message says why");
	SPF_response_free(resp);
	resp = NULL;

	/* spf_guess: none, then the best-guess record */
	rc = exim_message(server, "192.0.2.25", "h.example", "lu@nodata.example",
			  "v=spf1 a/24 mx/24 ptr ?all", &resp);
	CHECK(rc == SPF_RESULT_PASS, "guess: got %s, want pass", SPF_strresult(rc));
	SPF_response_free(resp);
	resp = NULL;
	rc = exim_message(server, "203.0.113.25", "h.example", "lu@nospf.example",
			  "v=spf1 ip4:192.0.2.0/24 ?all", &resp);
	CHECK(rc == SPF_RESULT_NEUTRAL, "guess: got %s, want neutral", SPF_strresult(rc));
	SPF_response_free(resp);
	resp = NULL;

	/* permerror, not SPF_RESULT_INVALID, with every text set */
	rc = exim_message(server, "192.0.2.9", "h.example", "nu@syntax.example", NULL, &resp);
	CHECK(rc == SPF_RESULT_PERMERROR, "got %s, want permerror", SPF_strresult(rc));
	CHECK(resp->header_comment != NULL && resp->received_spf != NULL, "texts");
	CHECK(same(SPF_strerror(SPF_response_errcode(resp)), "Unknown mechanism found"),
	      "strerror %s", SPF_strerror(SPF_response_errcode(resp)));
	SPF_response_free(resp);
	resp = NULL;

	/* the RFC 7208 DNS-term budget across includes (libspf2 #51) */
	z.questions = 0;
	rc = exim_message(server, "192.0.2.9", "h.example", "pat@amp.example", NULL, &resp);
	CHECK(rc == SPF_RESULT_PERMERROR && resp->err == SPF_E_BIG_DNS, "amplification: %s %d",
	      SPF_strresult(rc), resp->err);
	CHECK(z.questions <= 12, "amplification: %u questions", z.questions);
	SPF_response_free(resp);
	resp = NULL;

	/* local policy: only with use_local_policy, only over a final -all */
	CHECK(SPF_server_set_localpolicy(server, "ip4:203.0.113.0/24", 0, &resp) == SPF_E_SUCCESS,
	      "set_localpolicy");
	SPF_response_free(resp);
	resp = NULL;
	for (int flag = 0; flag <= 1; flag++) {
		SPF_request_t *lp = SPF_request_new(server);

		SPF_request_set_ipv4_str(lp, "203.0.113.5");
		SPF_request_set_helo_dom(lp, "h.example");
		SPF_request_set_env_from(lp, "alice@example.com");
		lp->use_local_policy = (char)flag;
		SPF_request_query_mailfrom(lp, &resp);
		if (flag) {
			CHECK(resp->result == SPF_RESULT_PASS && resp->reason == SPF_REASON_LOCAL_POLICY,
			      "local policy: %s/%s", SPF_strresult(resp->result),
			      SPF_strreason(resp->reason));
			CHECK(same(resp->header_comment, "mx.receiver.example: local policy designates "
							 "203.0.113.5 as permitted sender"),
			      "local policy comment: %s", resp->header_comment);
		} else {
			CHECK(resp->result == SPF_RESULT_FAIL, "no local policy: %s",
			      SPF_strresult(resp->result));
		}
		SPF_response_free(resp);
		resp = NULL;
		SPF_request_free(lp);
	}
	resp = NULL;
	CHECK(SPF_server_set_localpolicy(server, "ip4:300.0.0.1", 0, &resp) != SPF_E_SUCCESS,
	      "a bad local policy is refused");
	SPF_response_free(resp);
	resp = NULL;

	/* an IPv4-mapped IPv6 client is an IPv4 client (RFC 7208 §5) */
	rc = exim_message(server, "::ffff:192.0.2.5", "h.example", "alice@example.com", NULL, &resp);
	CHECK(rc == SPF_RESULT_PASS, "mapped: got %s, want pass", SPF_strresult(rc));
	SPF_response_free(resp);
	resp = NULL;

	/* secondary MX: "v=spf1 mx:<rcpt domain>" */
	SPF_request_t *req = SPF_request_new(server);
	SPF_request_set_ipv4_str(req, "192.0.2.20");
	SPF_request_set_env_from(req, "someone@elsewhere.example");
	SPF_request_query_rcptto(req, &resp, "rcpt@mx.example");
	CHECK(resp->result == SPF_RESULT_PASS, "rcptto: %s", SPF_strresult(resp->result));
	SPF_response_free(resp);
	resp = NULL;
	/* no sender, no HELO: libspf2 aborts; we answer */
	SPF_request_t *empty = SPF_request_new(server);
	SPF_request_set_ipv4_str(empty, "192.0.2.20");
	CHECK(SPF_request_query_mailfrom(empty, &resp) == SPF_E_NOT_CONFIG, "unconfigured");
	CHECK(resp->result == SPF_RESULT_PERMERROR, "unconfigured: %s", SPF_strresult(resp->result));
	SPF_response_free(resp);
	resp = NULL;
	SPF_request_free(empty);
	SPF_request_free(req);

	/* Exim-filled records copy and free cleanly */
	SPF_dns_rr_t *copy = NULL;
	CHECK(SPF_dns_rr_dup(&copy, nx) == SPF_E_SUCCESS && copy != NULL, "rr_dup");
	SPF_dns_rr_free(copy);
	SPF_dns_rr_free(nx);
	SPF_server_free(server);
	SPF_dns_free(dc); /* frees the cache; Exim's layer has no destructor */
}

/* Milters share one server between threads: queries run concurrently. */
struct worker {
	SPF_server_t *server;
	int bad;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 40; i++) {
		SPF_request_t *req = SPF_request_new(w->server);
		SPF_response_t *resp = NULL;
		int pass = i % 2 == 0;

		SPF_request_set_ipv4_str(req, pass ? "192.0.2.7" : "198.51.100.7");
		SPF_request_set_helo_dom(req, "h.example");
		SPF_request_set_env_from(req, "dave@inc.example");
		SPF_request_query_mailfrom(req, &resp);
		if (resp == NULL || resp->result != (pass ? SPF_RESULT_PASS : SPF_RESULT_FAIL) ||
		    resp->header_comment == NULL)
			w->bad++;
		SPF_response_free(resp);
		SPF_request_free(req);
	}
	return NULL;
}

static void threads(void)
{
	struct zone_layer z;
	SPF_server_t *server;
	struct worker w[4];
	pthread_t t[4];

	zone_layer_init(&z, zone_data, ZONE_COUNT, SPF_dns_rr_dup);
	server = SPF_server_new_dns(&z.s, 0);
	SPF_server_set_rec_dom(server, "mx.receiver.example");
	for (int i = 0; i < 4; i++) {
		w[i].server = server;
		w[i].bad = 0;
		CHECK(pthread_create(&t[i], NULL, worker_run, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(w[i].bad == 0, "thread %d: %d wrong results", i, w[i].bad);
	}
	SPF_server_free(server);
}

/* smf-spf's sequence. */
static int resolv_style(const char *ip, const char *sender, const char *helo)
{
	SPF_server_t *server = SPF_server_new(SPF_DNS_CACHE, 0);
	SPF_request_t *req;
	SPF_response_t *resp = NULL;

	if (server == NULL) {
		printf("SPF_server_new failed\n");
		return 1;
	}
	SPF_server_set_rec_dom(server, "mx.receiver.example");
	req = SPF_request_new(server);
	if (SPF_request_set_ipv4_str(req, ip) && SPF_request_set_ipv6_str(req, ip)) {
		printf("bad address\n");
		return 1;
	}
	SPF_request_set_helo_dom(req, helo);
	SPF_request_set_env_from(req, sender);
	SPF_request_query_mailfrom(req, &resp);
	printf("%s %s | %s | %s\n", SPF_strresult(SPF_response_result(resp)),
	       SPF_strreason(resp->reason), resp->header_comment ? resp->header_comment : "",
	       SPF_response_get_received_spf(resp) ? SPF_response_get_received_spf(resp) : "");
	SPF_response_free(resp);
	SPF_request_free(req);
	SPF_server_free(server);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--resolv") == 0)
		return resolv_style(argv[2], argv[3], argv[4]);
	exim_style();
	threads();
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
