/*
 * A check's outcome as the daemons' log lines name it (spfkit-policyd,
 * spfkit-milter, spfkit-smtpd-filter write the same words): each
 * identity's result, and the reason code of a permerror or temperror
 * (<spfkit/reason.h>) as its stable name, so that a log reader matches
 * codes, never English. Not an API.
 */
#ifndef SPFKIT_MTA_OUTCOME_H
#define SPFKIT_MTA_OUTCOME_H

#include "decision.h"

/* The result's name ("pass", "temperror", ...); "-" when the identity was not checked. */
const char *spfkit__mta_result_of(const struct spfkit__mta_check *c);

/*
 * The reason's stable name (spfkit_reason_name) when a check ended in
 * permerror or temperror: MAIL FROM's when it did, else HELO's (the
 * identity a decision rests on when both were checked). NULL: neither.
 */
const char *spfkit__mta_reason_of(const struct spfkit__mta_input *in);

#endif
