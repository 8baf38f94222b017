/*
 * `spfkit lint`, `tree` and `flatten`: what the CLI adds to lib/publish
 * (publish.h): printing and option texts.
 *
 *   cmd_lint.c    options, --help, the run, exit status
 *   lint_print.c  findings as text and JSON; --time-limit; what it left unchecked
 */
#ifndef SPFKIT_CLI_LINT_PRINT_H
#define SPFKIT_CLI_LINT_PRINT_H

#include <stdio.h>

#include "cli.h"
#include "publish.h"

/* ---- lint_print.c ----------------------------------------------------- */

void lint_print_text(FILE *f, const struct lint_report *r);
/* "N errors, N warnings, N notices", no newline: the summary of lint and of tree --html. */
void lint_print_tally(FILE *f, const struct lint_report *r);
/* One JSON object and a newline; 0, or an spfkit_err when it could not be built. */
int lint_print_json(FILE *f, const struct lint_report *r);
/* --time-limit TEXT (NULL: LINT_TIME_LIMIT_S) into *seconds; -1 after saying why. */
int lint_time_limit_option(const char *cmd, const char *text, unsigned *seconds);
/* 1, after saying on stderr what the time limit left unchecked, when it did. */
int lint_dns_incomplete(const char *cmd, const struct lint_dns *d);

#endif
