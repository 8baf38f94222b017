/*
 * A check's outcome as the daemons' log lines name it (spfkit-policyd,
 * spfkit-milter, spfkit-smtpd-filter write the same words): each
 * identity's result, and the reason code of a permerror or temperror
 * (<spfkit/reason.h>) as its stable name, so that a log reader matches
 * codes, never English. Inline: they run in every decision's line, a
 * call each cost as much as their work. Not an API.
 */
#ifndef SPFKIT_MTA_OUTCOME_H
#define SPFKIT_MTA_OUTCOME_H

#include <spfkit/spfkit.h>

#include "decision.h"

/* The result's name ("pass", "temperror", ...); "-" when the identity was not checked. */
static inline const char *spfkit__mta_result_of(const struct spfkit__mta_check *c)
{
	return c->checked && c->res != NULL ? spfkit_result_name(c->res->code) : "-";
}

/* The reason's stable name when c ended in permerror or temperror; NULL otherwise. */
static inline const char *spfkit__mta_error_reason(const struct spfkit__mta_check *c)
{
	if (!c->checked || c->res == NULL)
		return NULL;
	if (c->res->code != SPFKIT_RESULT_PERMERROR && c->res->code != SPFKIT_RESULT_TEMPERROR)
		return NULL;
	return spfkit_reason_name(c->res->reason);
}

/*
 * The reason's stable name (spfkit_reason_name) when a check ended in
 * permerror or temperror: MAIL FROM's when it did, else HELO's (the
 * identity a decision rests on when both were checked). NULL: neither.
 */
static inline const char *spfkit__mta_reason_of(const struct spfkit__mta_input *in)
{
	const char *r = spfkit__mta_error_reason(&in->mfrom_check);

	return r != NULL ? r : spfkit__mta_error_reason(&in->helo_check);
}

#endif
