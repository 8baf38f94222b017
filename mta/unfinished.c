/* An unfinished check's answer, the same in every daemon (see unfinished.h). */
#include <stdio.h>
#include <string.h>

#include "unfinished.h"

/* The input the evaluator refuses: a retry brings the same input. */
static int input_refused(int rc)
{
	return rc == SPFKIT_EINVAL || rc == SPFKIT_E2BIG || rc == SPFKIT_ESYNTAX;
}

/*
 * Could an identity the check had not finished have been deferred for a
 * temperror? HELO is open until its stage is done; MAIL FROM until its
 * own, when it would be checked at all. Before a job (j NULL) nothing is
 * known of the input: both count, as for a sender that is not null.
 */
static int open_identity_defers(const struct spfkit__mta_config *cfg,
				const struct spfkit__mta_job *j)
{
	static const struct spfkit__mta_input unknown = {.sender = "?", .sender_len = 1};
	const struct spfkit__mta_input *in = j != NULL ? &j->in : &unknown;
	int mailfrom_done = 0;
	int helo_open = j == NULL || j->phase != SPFKIT__MTA_PH_CHECKS ||
			j->stage == SPFKIT_IDENTITY_HELO;

	if (j != NULL && j->phase == SPFKIT__MTA_PH_CHECKS && j->stage == SPFKIT_IDENTITY_MAILFROM)
		return spfkit__mta_temperror_defers(cfg, in, SPFKIT_IDENTITY_MAILFROM);
	if (helo_open && spfkit__mta_want_helo(cfg) &&
	    spfkit__mta_temperror_defers(cfg, in, SPFKIT_IDENTITY_HELO))
		return 1;
	/* a HELO temperror that does not defer leaves MAIL FROM to be checked */
	mailfrom_done = in->sender == NULL || in->sender_len == 0 ||
			cfg->mail_from_reject == SPFKIT_MTA_REJECT_NO_CHECK;
	return !mailfrom_done && spfkit__mta_temperror_defers(cfg, in, SPFKIT_IDENTITY_MAILFROM);
}

const char *spfkit__mta_unfinished_reason(int rc)
{
	if (rc == SPFKIT_ENOMEM)
		return "out-of-memory";
	if (rc == SPFKIT_EDNS)
		return spfkit_reason_name(SPFKIT_REASON_DNS_SUBMIT);
	return input_refused(rc) ? "input-refused" : "local-error";
}

void spfkit__mta_unfinished(const struct spfkit__mta_config *cfg, const struct spfkit__mta_job *j,
			    int rc, struct spfkit__mta_decision *out)
{
	const char *verb = cfg->temperror_action == SPFKIT_MTA_DEFER_451 ? "451" : "defer_if_permit";

	memset(out, 0, sizeof(*out));
	out->identity = j != NULL ? j->stage : SPFKIT_IDENTITY_HELO;
	if (input_refused(rc) || !open_identity_defers(cfg, j)) {
		out->kind = SPFKIT__MTA_DUNNO;
		memcpy(out->action, "dunno", sizeof("dunno"));
		return;
	}
	out->kind = SPFKIT__MTA_DEFER;
	/* RFC 3463 4.3.0: our system's trouble, not the sender's DNS (RFC 7372's 4.7.24) */
	snprintf(out->action, sizeof(out->action), "%s%s %s", verb,
		 cfg->enhanced_status_codes ? " 4.3.0" : "", SPFKIT__MTA_LOCAL_PROBLEM);
}
