/*
 * `spfkit flatten`: internal interfaces between its files.
 *
 *   cmd_flatten.c     options, --help, the output, --check-live's output, exit status
 *
 * The run (walk, records, lookups after, proof), the model, the records,
 * their verification and --check-live's comparison are lib/publish's
 * (publish.h: flatten_run.c, flatten_set.c, flatten_model.c,
 * flatten_emit.c, flatten_verify.c, flatten_live.c).
 *
 * One walker, lint's: the flattener is an observer of spfkit__lint_run(), so the
 * records it reads, the answers it sees and the lookups it counts are
 * lint's and tree's (docs/flatten.md).
 */
#ifndef SPFKIT_CLI_FLATTEN_H
#define SPFKIT_CLI_FLATTEN_H

#include "tree.h"

/* ---- cmd_flatten.c ------------------------------------------------------ */

int cli_flatten_main(int argc, char **argv);
void cli_flatten_usage(FILE *f);

#endif
