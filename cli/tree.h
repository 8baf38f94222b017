/*
 * `spfkit tree`: internal interfaces between its files.
 *
 *   cmd_tree.c    options, --help, the run, exit status, --output
 *   tree_text.c   text and JSON output
 *   tree_dot.c    Graphviz dot output
 *   tree_svg.c    the SVG picture, spfkit's own layout (--svg, and --html's)
 *   tree_html.c   --html: the picture, lint's findings and flatten's proposal
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

/* ---- tree_svg.c ----------------------------------------------------------- */

/*
 * spfkit's own SVG picture of the tree (no Graphviz); with findings, lint's
 * findings stand beside the boxes of the records they concern. standalone:
 * with the XML declaration (a file), else for inside HTML. 0 or an spfkit_err.
 */
int tree_print_svg(FILE *f, const struct tree *t, const struct lint_report *findings,
		   int standalone);
/* Bytes escaped for XML text and attributes; not printable ASCII as \xNN. */
void tree_svg_bytes(FILE *f, const char *s, size_t len);
void tree_svg_str(FILE *f, const char *s);

/* ---- tree_html.c ---------------------------------------------------------- */

enum tree_flat_state { TREE_FLAT_NONE = 0, TREE_FLAT_REFUSED, TREE_FLAT_PROPOSED };

/* What --html adds to the walk: the flatten model watching it, and the proposal. */
struct tree_html {
	struct tree *t;
	struct flat_walk *w; /* the report and answers of the walk; its model */
	int m_init;
	enum tree_flat_state state;
	char why[600]; /* REFUSED: why there is no proposal */
	struct flat_result res;
};

void tree_html_init(struct tree_html *h, struct tree *t, struct flat_walk *w);
/* The flatten model, on the walk's report; 0 or SPFKIT_ENOMEM. */
int tree_html_watch(struct tree_html *h);
/* The lint_walk_fn: the tree and the model both watch; arg is a struct tree_html. */
void tree_html_observe(void *arg, const struct lint_walk_event *ev);
/* After the walk, with its answers: the proposal, or why none; 0 or an spfkit_err. */
int tree_html_flatten(struct tree_html *h);
/* The page; 0 or an spfkit_err. */
int tree_print_html(FILE *f, const struct tree *t, const struct tree_html *h);
void tree_html_free(struct tree_html *h);

/* ---- cmd_tree.c ----------------------------------------------------------- */

int cli_tree_main(int argc, char **argv);
void cli_tree_usage(FILE *f);

#endif
