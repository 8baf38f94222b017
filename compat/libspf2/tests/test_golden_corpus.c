/*
 * Golden comparison with Debian's libspf2 on a whole world: a zone file
 * (data/demo.zone, or a corpus from bench/gen_corpus.py) served to both
 * libraries through one DNS layer, and every query of a query file
 * ("ip sender helo ..." per line, "<>" for the empty sender).
 *
 *   test_golden_corpus OUR_LIBSPF2_SO ZONE QUERIES [REAL_LIBSPF2_SO]
 *
 * Same result: every text must be libspf2's (URL escapes compared
 * ignoring the case of their hex digits, docs/libspf2-compat.md).
 * Different result: only the deliberate differences are allowed (a
 * syntax error is permerror, with the code libspf2's compiler gives the
 * term, not "(invalid)"; RFC 7208 lookup limits;
 * a DNS failure on the domain's record is temperror); anything else
 * fails. The layer answers from spfkit's zone backend (public API).
 */
#include "golden_api.h"
#include "golden_texts.h"
#include "zone_backend_layer.h"

static struct golden_tally tally;
static unsigned agree, deviate;
/* deliberate differences by kind (docs/libspf2-compat.md) */
enum { D_LONG, D_SYNTAX, D_LIMIT, D_TEMP, D_CODE, D_KINDS };
static unsigned kinds[D_KINDS];
static const char *const kind_names[D_KINDS] = {
	"long record (libspf2 #21)", "syntax error is permerror", "RFC 7208 lookup limits",
	"DNS failure on the record is temperror", "same permerror, other code"};

static const struct spfkit_zone *world;
static const char *checked_domain;

/* The longest SPF record reachable from `domain` through literal
 * include: and redirect= targets (a few levels, as a corpus has them). */
static size_t longest_record(const char *domain, int depth)
{
	struct spfkit_dns_answer ans;
	size_t best = 0;
	char text[70000];

	if (depth > 5 || spfkit_zone_lookup(world, domain, strlen(domain), SPFKIT_RR_TXT, &ans) != 0)
		return 0;
	for (size_t i = 0; ans.status == SPFKIT_DNS_OK && i < ans.count; i++) {
		char *save = NULL;

		if (!spfkit_record_is_spf((const char *)ans.rrs[i].data, ans.rrs[i].len) ||
		    ans.rrs[i].len >= sizeof(text))
			continue;
		if (ans.rrs[i].len > best)
			best = ans.rrs[i].len;
		memcpy(text, ans.rrs[i].data, ans.rrs[i].len);
		text[ans.rrs[i].len] = '\0';
		for (char *t = strtok_r(text, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save)) {
			const char *target = NULL;
			size_t sub;

			t += strspn(t, "+-~?");
			if (strncasecmp(t, "include:", 8) == 0)
				target = t + 8;
			else if (strncasecmp(t, "redirect=", 9) == 0)
				target = t + 9;
			if (target == NULL || strchr(target, '%') != NULL)
				continue;
			sub = longest_record(target, depth + 1);
			if (sub > best)
				best = sub;
		}
	}
	return best;
}

/* Codes of a record that does not parse. */
static int syntax_code(SPF_errcode_t e)
{
	return e == SPF_E_SYNTAX || e == SPF_E_UNKNOWN_MECH || e == SPF_E_MOD_W_PREF ||
	       e == SPF_E_INVALID_CHAR || e == SPF_E_INVALID_CIDR || e == SPF_E_INVALID_IP4 ||
	       e == SPF_E_INVALID_IP6 || e == SPF_E_INVALID_VAR || e == SPF_E_BAD_HOST_TLD;
}

/* A result that differs from libspf2's on purpose: its kind, or -1. */
static int deliberate(const struct outcome *o, const struct outcome *r)
{
	if (r->result == SPF_RESULT_NEUTRAL && r->reason == SPF_REASON_DEFAULT &&
	    longest_record(checked_domain, 0) > 511)
		return D_LONG; /* libspf2 drops the end of a long record (libspf2 #21) */
	if (o->result == SPF_RESULT_PERMERROR && r->result == SPF_RESULT_INVALID)
		return D_SYNTAX; /* syntax error: permerror (libspf2 #30) */
	if (o->result == SPF_RESULT_PERMERROR && o->err == SPF_E_BIG_DNS)
		return D_LIMIT; /* one DNS-term budget, void limit (RFC 7208 §4.6.4, libspf2 #51) */
	if (o->result == SPF_RESULT_TEMPERROR && r->result == SPF_RESULT_INVALID)
		return D_TEMP; /* DNS failure on the domain's own record */
	return -1;
}

static void one(const struct api *ours, const struct api *real, SPF_dns_server_t *lo,
		SPF_dns_server_t *lr, const struct query *q, const char *where)
{
	struct outcome o, r;

	if (run_query(ours, lo, q, &o) != 0 || run_query(real, lr, q, &r) != 0) {
		printf("FAIL %s: no server\n", where);
		tally.failures++;
		return;
	}
	if (o.result == SPF_RESULT_INVALID || o.header_comment == NULL || o.received_spf == NULL) {
		printf("FAIL %s: result %d, texts missing\n", where, o.result);
		tally.failures++;
	} else if (o.result != r.result) {
		int kind = deliberate(&o, &r);

		if (kind >= 0) {
			deviate++;
			kinds[kind]++;
			if (kind == D_SYNTAX && r.nmessages > 0 && o.err != r.first_code) {
				/* our permerror carries the code libspf2's compiler
				 * gives the term (docs/libspf2-compat.md) */
				printf("FAIL %s: permerror code %d, libspf2's compiler says %d (\"%s\")\n",
				       where, o.err, r.first_code, r.first_message);
				tally.failures++;
			}
		} else {
			printf("FAIL %s: got %s (err %d), want %s (err %d) (Debian libspf2)\n", where,
			       ours->strresult(o.result), o.err, ours->strresult(r.result), r.err);
			tally.failures++;
		}
	} else {
		agree++;
		if (o.result == SPF_RESULT_PERMERROR && o.err != r.err &&
		    ((o.err == SPF_E_BIG_DNS && r.err == SPF_E_RECURSIVE) || syntax_code(o.err))) {
			/* an include/redirect loop: we stop at the RFC's lookup
			 * limit, libspf2 at its recursion check; or the checked
			 * record breaks a rule libspf2 does not check (a second
			 * redirect=, RFC 7208 §6) */
			agree--;
			deviate++;
			kinds[D_CODE]++;
			outcome_free(&o);
			outcome_free(&r);
			return;
		}
		texts_compare(&tally, ours, where, &o, &r);
	}
	outcome_free(&o);
	outcome_free(&r);
}

int main(int argc, char **argv)
{
	struct api ours, real;
	struct spfkit_zone *zone = NULL;
	struct zlayer lo, lr;
	char err[512], line[2048];
	unsigned n = 0;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: test_golden_corpus OUR_SO ZONE QUERIES [REAL_SO]\n");
		return 2;
	}
	if (api_load(&ours, argv[1]) != 0)
		return 1;
	if (api_load(&real, argc > 4 ? argv[4] : "/usr/lib/libspf2.so.2") != 0) {
		printf("skip: Debian libspf2 not loadable\n");
		return 77;
	}
	if (spfkit_zone_new(NULL, &zone) != 0 ||
	    spfkit_zone_load_file(zone, argv[2], NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	world = zone;
	/* type 99 answered NO_DATA to both, as Exim's layer does */
	zlayer_init(&lo, zone, "corpus", ours.rr_dup, 0);
	zlayer_init(&lr, zone, "corpus", real.rr_dup, 0);
	f = fopen(argv[3], "r");
	if (f == NULL) {
		perror(argv[3]);
		return 1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *ip, *sender, *helo, *save = NULL, where[2200];
		struct query q;

		if (line[0] == '#')
			continue;
		ip = strtok_r(line, " \t\r\n", &save);
		sender = strtok_r(NULL, " \t\r\n", &save);
		helo = strtok_r(NULL, " \t\r\n", &save);
		if (ip == NULL || sender == NULL || helo == NULL)
			continue;
		if (strcmp(sender, "<>") == 0)
			sender = "";
		memset(&q, 0, sizeof(q));
		q.ip = ip;
		q.sender = sender;
		q.helo = helo;
		snprintf(where, sizeof(where), "%s %s %s", ip, sender[0] ? sender : "<>", helo);
		checked_domain = strrchr(sender, '@') != NULL ? strrchr(sender, '@') + 1 : helo;
		one(&ours, &real, &lo.s, &lr.s, &q, where);
		n++;
	}
	fclose(f);
	spfkit_zone_free(zone);
	printf("%u queries: %u same result (texts compared; %u exp= texts expanded as RFC 7208 "
	       "says), %u deliberate differences; %d failure(s)\n",
	       n, agree, tally.exp_texts, deviate, tally.failures);
	for (int k = 0; k < D_KINDS; k++)
		printf("  %s: %u\n", kind_names[k], kinds[k]);
	return tally.failures ? 1 : 0;
}
