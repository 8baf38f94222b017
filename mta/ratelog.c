/* A warning at most once per interval (see ratelog.h). */
#include <stdio.h>

#include "ratelog.h"

int spfkit__mta_ratelog_due(struct spfkit__mta_ratelog *r, int interval_s,
			    char note[SPFKIT__MTA_RATELOG_NOTE_MAX])
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (r->last != 0 && now.tv_sec - r->last < interval_s) {
		r->held++;
		return 0;
	}
	note[0] = '\0';
	if (r->held > 0)
		snprintf(note, SPFKIT__MTA_RATELOG_NOTE_MAX, " (%lu more like this held back)", r->held);
	r->held = 0;
	r->last = now.tv_sec > 0 ? now.tv_sec : 1;
	return 1;
}
