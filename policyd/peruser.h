/*
 * Per-recipient settings, as policyd-spf.peruser(5) has them (issue 29):
 * `Per_User = text,/path` in policyd-spf.conf names a file of lines
 *
 *     recipient@example.com,Mail_From_reject=False|TempError_Defer=True
 *
 * '#' starts a comment; blank lines are ignored; the recipient is the
 * text before the first ',' and each setting is Name=Value, separated by
 * '|' (a value may hold ',' but not '|'). A recipient gets the main file's
 * configuration with its own settings on top; the first line for a
 * recipient is the one used (policyd-spf stops at it).
 *
 * Where we differ from policyd-spf 3.0 (its spf_engine/policydspfuser.py):
 * - the file is read with the configuration (at start and on SIGHUP), not
 *   at every request: a broken file keeps the running one, as for the main
 *   file; a missing one is said and the main configuration serves (as
 *   policyd-spf does);
 * - recipients are matched without regard to case (policyd-spf compares
 *   exactly; Postfix hands over the address as the client wrote it);
 * - a line without ',' or a setting without '=' is an error with file and
 *   line (policyd-spf raises an exception and the request gets no answer);
 *   a value may contain '=' (policyd-spf: an exception);
 * - TestOnly is taken (the man page's example sets it; policyd-spf 3.0
 *   logs it as an unknown name and ignores it), and so is Authserv_Id,
 *   the main file's spelling, beside policyd-spf's "Authserv-Id";
 * - Void_Limit is the SPF context's, shared by all recipients: a per-user
 *   one is warned about and ignored;
 * - the man page's regular expressions exist in neither policyd-spf nor here.
 * Every value is checked as the main file's (config.c): the same errors
 * and warnings, reported with the per-user file's name and line.
 *
 * Read-only once loaded: the workers share nothing of it but read their
 * own copy (each loads it with its configuration). Not an API.
 */
#ifndef SPFKIT_POLICYD_PERUSER_H
#define SPFKIT_POLICYD_PERUSER_H

#include <stddef.h>

#include "config.h"

/* Recipients in one file; more is an error (the file is for "a small number"). */
#define SPFKIT_POLICYD_PERUSER_MAX 1000u

struct spfkit__policyd_peruser;

/*
 * Load the file `spec` names ("text,/path", Per_User's value) over the
 * main configuration file main_path (NULL: the defaults), which is read
 * again. Problems go to diag with the per-user file's name and line (the
 * main file's own are not said again). 0 with *out set (NULL when the
 * per-user file cannot be read: said as a warning, the main configuration
 * serves everyone); SPFKIT_ESYNTAX (an error was said), SPFKIT_EIO (the
 * main file), SPFKIT_ENOMEM.
 */
int spfkit__policyd_peruser_load(const char *spec, const char *main_path,
				 spfkit__mta_diag_fn *diag, void *arg,
				 struct spfkit__policyd_peruser **out);

/*
 * The configuration of `recipient` (len bytes), and its entry's number
 * from 1 in *entry; NULL when the file has no line for it (or t is NULL).
 */
const struct spfkit__mta_config *spfkit__policyd_peruser_find(const struct spfkit__policyd_peruser *t,
							      const char *recipient, size_t len,
							      size_t *entry);

size_t spfkit__policyd_peruser_count(const struct spfkit__policyd_peruser *t);

void spfkit__policyd_peruser_free(struct spfkit__policyd_peruser *t);

#endif
