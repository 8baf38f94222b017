/*
 * The one answer of spfkit-policyd, spfkit-milter and spfkit-smtpd-filter
 * when an SPF check could not finish: the library ran out of memory, or
 * refused the job's input. A DNS answer that never came (Lookup_Time,
 * the daemon's time budget) or came back SERVFAIL is not this case: the
 * check finishes with temperror, and the decision table answers it.
 *
 * The rule (docs/policyd.md "When the check cannot finish"):
 *  - input the evaluator refuses (an identity past RFC 7208's lengths,
 *    a NUL inside): no opinion, as §4.3 gives "none" for a malformed
 *    domain; coming back would not change it;
 *  - anything else is a temporary error of ours while checking, which
 *    §2.6.6 calls temperror: deferred exactly when a temperror of an
 *    identity the check did not finish would be (TempError_Defer, the
 *    identity's *_reject policy, Reject_Not_Pass_Domains, TestOnly), with
 *    RFC 3463's 4.3.0 (our system, not the sender's DNS) and one text;
 *    otherwise the mail goes on unchecked, with no header claiming a
 *    result, and the daemon logs it at LOG_ERR.
 * Not an API.
 */
#ifndef SPFKIT_MTA_UNFINISHED_H
#define SPFKIT_MTA_UNFINISHED_H

#include "checker.h"
#include "config.h"
#include "decision.h"

/* What the client reads when we defer for our own trouble. */
#define SPFKIT__MTA_LOCAL_PROBLEM "Temporary local problem checking SPF, please try again later"

/*
 * The decision for a check that ended with the library's error rc (not 0)
 * in job j, or before a job existed (j NULL: no identity decided yet).
 * Always fills *out: kind SPFKIT__MTA_DEFER with the action in Postfix
 * form ("defer_if_permit 4.3.0 ..." or "451 4.3.0 ...", TempError_Action)
 * that each daemon renders as it renders a decision, or SPFKIT__MTA_DUNNO
 * with "dunno"; never a header.
 */
void spfkit__mta_unfinished(const struct spfkit__mta_config *cfg, const struct spfkit__mta_job *j,
			    int rc, struct spfkit__mta_decision *out);

/*
 * Why the check could not finish (rc, the library's error), as the
 * stable name the daemons log as reason= (like the reason codes of
 * <spfkit/reason.h>, never reworded): "out-of-memory" (SPFKIT_ENOMEM),
 * "dns-submit" (SPFKIT_EDNS: the resolver would not send a question;
 * the name of SPFKIT_REASON_DNS_SUBMIT), "input-refused" (SPFKIT_EINVAL,
 * SPFKIT_E2BIG, SPFKIT_ESYNTAX: the evaluator refused the identities),
 * "local-error" (anything else).
 */
const char *spfkit__mta_unfinished_reason(int rc);

#endif
