/* The order of a check (see flow.h). */
#include "flow.h"

void spfkit__mta_helo_fallback(struct spfkit__mta_input *in)
{
	size_t i;

	if (in->helo_len > 0)
		return;
	for (i = in->sender_len; i > 0; i--)
		if (in->sender[i - 1] == '@') {
			in->helo = in->sender + i;
			in->helo_len = in->sender_len - i;
			return;
		}
}

int spfkit__mta_flow_next(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			  int done)
{
	if (done == SPFKIT__MTA_FLOW_DONE && spfkit__mta_want_helo(cfg))
		return SPFKIT_IDENTITY_HELO;
	if (done != SPFKIT_IDENTITY_MAILFROM && spfkit__mta_want_mailfrom(cfg, in))
		return SPFKIT_IDENTITY_MAILFROM;
	return SPFKIT__MTA_FLOW_DONE;
}
