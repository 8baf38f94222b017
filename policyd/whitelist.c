/*
 * The DNS whitelists of policyd-spf, in its order: Domain_Whitelist,
 * HELO_Whitelist, Domain_Whitelist_PTR, each within Whitelist_Lookup_Time;
 * the first that matches skips the SPF checks (a trace header says why).
 */
#include <string.h>
#include <time.h>

#include "internal.h"

/* ---- the DNS whitelists (policyd-spf order: domain, HELO, PTR) ----------- */

static void wl_timer(struct job *j)
{
	struct timeval tv = {j->gen->cfg->whitelist_lookup_time, 0};

	j->expired = 0;
	evtimer_add(j->deadline, &tv);
}

/* Domain_Whitelist: check_host(ip, domain, postmaster@domain), as policyd-spf.
 * 0, or spfkit_eval_new()'s error. */
static int wl_domain(struct job *j, const char *domain)
{
	struct spfkit_request req;
	int rc;

	spfkit_request_init(&req);
	req.ip = j->gen->cfg->has_prospective ? j->gen->cfg->prospective : j->ip;
	req.sender = "";
	req.helo = domain;
	req.helo_len = strlen(domain); /* our own copy from the configuration */
	req.identity = SPFKIT_IDENTITY_HELO;
	req.now = (int64_t)time(NULL);
	spfkit_eval_free(j->wl_ev);
	j->wl_ev = NULL;
	rc = spfkit_eval_new(j->gen->ctx, &req, &j->wl_ev);
	if (rc != 0)
		return rc;
	j->cur = j->wl_ev;
	wl_timer(j);
	spfkit__policyd_job_run(j);
	return 0;
}

static int wl_ask(struct job *j, const char *name, size_t len, uint16_t type)
{
	wl_timer(j);
	if (spfkit__policyd_submit(j, name, len, type, 0, 1) != 0)
		return -1;
	spfkit_event_kick(j->conn->srv->dnsloop);
	return 0;
}

static uint16_t addr_type(const struct job *j)
{
	return j->ip.family == 6 ? SPFKIT_RR_AAAA : SPFKIT_RR_A;
}

/* Start the next whitelist method that applies, or the checks. */
void spfkit__policyd_wl_next(struct job *j)
{
	const struct spfkit__mta_config *cfg = j->gen->cfg;
	char rev[SPFKIT__MTA_REVERSE_MAX];
	size_t n;
	int rc;

	for (;;) {
		switch (j->phase) {
		case PH_WL_DOMAIN:
			if (j->wl_index < cfg->domain_whitelist.count) {
				rc = wl_domain(j, cfg->domain_whitelist.names[j->wl_index++]);
				if (rc == 0)
					return;
				/* skipping a listed domain for want of memory could reject its mail */
				if (rc == SPFKIT_ENOMEM) {
					spfkit__policyd_job_fail(j, rc, "starting a Domain_Whitelist check");
					return;
				}
				continue; /* a name the evaluator refuses cannot match */
			}
			j->phase = PH_WL_HELO;
			continue;
		case PH_WL_HELO:
			/* policyd-spf compares the HELO name with each entry, exactly */
			if (spfkit__mta_name_listed(&cfg->helo_whitelist, j->in.helo, j->in.helo_len) &&
			    wl_ask(j, j->in.helo, j->in.helo_len, addr_type(j)) == 0)
				return;
			j->phase = PH_WL_PTR;
			continue;
		case PH_WL_PTR:
			if (cfg->domain_whitelist_ptr.count > 0) {
				n = spfkit__mta_ip_reverse_name(&j->ip, rev);
				if (wl_ask(j, rev, n, SPFKIT_RR_PTR) == 0)
					return;
			}
			j->phase = PH_CHECKS;
			continue;
		default:
			evtimer_del(j->deadline);
			spfkit__policyd_checks_start(j);
			return;
		}
	}
}

static int has_address(const struct job *j, const struct spfkit_dns_answer *a)
{
	size_t i, len = j->ip.family == 6 ? 16 : 4;

	for (i = 0; a->status == SPFKIT_DNS_OK && i < a->count; i++)
		if (a->rrs[i].len == len && memcmp(a->rrs[i].data, j->ip.addr, len) == 0)
			return 1;
	return 0;
}

/*
 * The first PTR name under a listed domain, copied. policyd-spf trusts the
 * PTR name alone; we also check that the name points back at the client
 * (forward-confirmed, as the "ptr" mechanism of RFC 7208 §5.5 does).
 */
static const char *ptr_candidate(struct job *j, const struct spfkit_dns_answer *a)
{
	size_t i;

	for (i = 0; a->status == SPFKIT_DNS_OK && i < a->count && i < SPFKIT_LIMIT_PTR_NAMES; i++) {
		const char *name = (const char *)a->rrs[i].data;

		if (spfkit__mta_name_match(&j->gen->cfg->domain_whitelist_ptr, name, a->rrs[i].len))
			return spfkit__mta_arena_strndup(&j->arena, name, a->rrs[i].len);
	}
	return NULL;
}

void spfkit__policyd_wl_answer(struct job *j, const struct spfkit_dns_answer *answer)
{
	const char *name;

	evtimer_del(j->deadline);
	switch (j->phase) {
	case PH_WL_HELO:
		if (has_address(j, answer)) {
			j->in.bypass = SPFKIT__MTA_BYPASS_HELO;
			spfkit__policyd_job_finish(j);
			return;
		}
		j->phase = PH_WL_PTR;
		break;
	case PH_WL_PTR:
		name = ptr_candidate(j, answer);
		j->phase = PH_WL_PTR_A;
		if (name != NULL && wl_ask(j, name, strlen(name), addr_type(j)) == 0)
			return;
		j->phase = PH_CHECKS;
		break;
	case PH_WL_PTR_A:
		if (has_address(j, answer)) {
			j->in.bypass = SPFKIT__MTA_BYPASS_PTR;
			spfkit__policyd_job_finish(j);
			return;
		}
		j->phase = PH_CHECKS;
		break;
	default:
		j->phase = PH_CHECKS;
		break;
	}
	spfkit__policyd_wl_next(j);
}

/* After the last request: close on EOF or drain once the answers are out. */