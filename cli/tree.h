/*
 * `spfkit tree`: internal interfaces between its files.
 *
 *   cmd_tree.c    options, --help, the run, exit status, --output
 *   tree_text.c   text and JSON output
 *   tree_dot.c    Graphviz dot output, and --svg through `dot -Tsvg`
 *
 * The tree itself is lib/publish's (publish.h: tree_build.c, tree_addr.c).
 */
#ifndef SPFKIT_CLI_TREE_H
#define SPFKIT_CLI_TREE_H

#include "lint_print.h"

/* ---- tree_text.c ---------------------------------------------------------- */

void tree_print_text(FILE *f, const struct tree *t);
/* One JSON object and a newline; 0 or an spfkit_err. */
int tree_print_json(FILE *f, const struct tree *t);

/* ---- tree_dot.c ----------------------------------------------------------- */

/* A Graphviz digraph; 0 or an spfkit_err. */
int tree_print_dot(FILE *f, const struct tree *t);
/* The dot program in PATH, into buf; 0, or -1 when there is none. */
int tree_find_dot(char *buf, size_t size);
/* Run `dot -Tsvg -o out in`; 0, or -1 with a line in err. */
int tree_run_dot(const char *dot, const char *in, const char *out, char *err, size_t errlen);

/* ---- cmd_tree.c ----------------------------------------------------------- */

int cli_tree_main(int argc, char **argv);
void cli_tree_usage(FILE *f);

#endif
