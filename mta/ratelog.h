/*
 * A repeatable warning said at most once per interval (a flood of
 * connections, descriptors gone), with the count of those held back.
 * Rule 19 of docs/STYLE: resource exhaustion must not become a flood of
 * log lines. Both daemons use it. Not an API.
 */
#ifndef SPFKIT_MTA_RATELOG_H
#define SPFKIT_MTA_RATELOG_H

#include <time.h>

/* Room for " (N more like this held back)" with the largest N. */
#define SPFKIT__MTA_RATELOG_NOTE_MAX 64

struct spfkit__mta_ratelog {
	time_t last;        /* CLOCK_MONOTONIC seconds of the last line; 0: none yet */
	unsigned long held; /* lines held back since */
};

/*
 * 1 when the warning is due (nothing said within interval_s seconds);
 * then `note` holds what to append: " (N more like this held back)", or
 * "" when none were (a "0 more" reads as if something had been). 0 when
 * it is to be held back (counted).
 */
int spfkit__mta_ratelog_due(struct spfkit__mta_ratelog *r, int interval_s,
			    char note[SPFKIT__MTA_RATELOG_NOTE_MAX]);

#endif
