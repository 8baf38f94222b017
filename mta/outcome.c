/* A check's outcome in the daemons' log lines (outcome.h). */
#include <spfkit/spfkit.h>

#include "outcome.h"

const char *spfkit__mta_result_of(const struct spfkit__mta_check *c)
{
	return c->checked && c->res != NULL ? spfkit_result_name(c->res->code) : "-";
}

static const char *error_reason(const struct spfkit__mta_check *c)
{
	if (!c->checked || c->res == NULL)
		return NULL;
	if (c->res->code != SPFKIT_RESULT_PERMERROR && c->res->code != SPFKIT_RESULT_TEMPERROR)
		return NULL;
	return spfkit_reason_name(c->res->reason);
}

const char *spfkit__mta_reason_of(const struct spfkit__mta_input *in)
{
	const char *r = error_reason(&in->mfrom_check);

	return r != NULL ? r : error_reason(&in->helo_check);
}
