/*
 * `spfkit tree --svg`: spfkit's own picture of the tree, without
 * Graphviz. An outline that grows downward: one box per record, the
 * records it includes or redirects to below it, one indent further in,
 * joined by lines; so a 20-record provider tree is a page that scrolls,
 * not a 5,600 px strip. The width is fixed and every line of text is
 * wrapped to it in a monospace font: at most 0.6 em per character
 * (DejaVu Sans Mono and Liberation Mono advance 0.6 em), so the picture
 * is SVG_TREE_W px wide, text at 12 px and more, whatever the tree.
 *
 * Colours say where the limits of RFC 7208 §4.6.4 break, in the order a
 * receiver counts (spfkit__tree_marks): red for the path on which the
 * count goes over, grey and dashed for records never reached, orange for
 * a branch whose void lookups alone reach the limit. Each box says what
 * its subtree costs.
 *
 * With findings (--html, tree_html.c), lint's findings about a record
 * stand in a column beside its box. DNS data is escaped for XML; bytes
 * that are not printable ASCII are shown as \xNN, as --dot does.
 */
#include <string.h>

#include "tree.h"

#define SVG_TREE_W 1200u /* the tree's column: fits a 1,280 px screen */
#define SVG_MARGIN 16u
#define SVG_INDENT 24u    /* per level of the tree */
#define SVG_MAX_INDENT 16u /* levels indented; deeper ones stay at this one */
#define SVG_PAD 8u        /* inside a box */
#define SVG_GAP 10u       /* between boxes */
#define SVG_FIND_GAP 16u  /* between a box and its findings */
#define SVG_FIND_W 600u   /* the findings column */
#define SVG_RECORD_LINES 4u /* a record's text is cut after this many lines */
#define SVG_OTHER_LINES 6u  /* other lines of text: at most this many each */
#define SVG_FONT "DejaVu Sans Mono, Liberation Mono, Menlo, Consolas, monospace"

/* Font sizes (px), all readable on a screen: none under 12. */
enum svg_font { F_TITLE = 18, F_NAME = 15, F_INFO = 13, F_SMALL = 12 };

static unsigned line_height(unsigned size)
{
	return size + size / 3 + 1;
}

/* Characters of a size-px monospace font in width px: 0.61 em each, a
 * little more than the 0.6 em of the fonts named, for the ones not. */
static unsigned columns(unsigned width, unsigned size)
{
	unsigned n = width * 100u / (size * 61u);

	return n > 8 ? n : 8;
}

/* ---- text out ------------------------------------------------------------ */

/* Where text goes: a FILE, or nowhere when only measuring. */
struct pen {
	FILE *f;         /* NULL: measure only */
	unsigned x, y;   /* left edge; top of the next line */
	unsigned width;  /* px available */
};

static int shown_raw(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* Width in characters of one byte as shown. */
static unsigned byte_width(unsigned char c)
{
	return shown_raw(c) ? 1 : 4; /* \xNN */
}

void tree_svg_bytes(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (!shown_raw(c))
			fprintf(f, "\\x%02x", c); /* XML 1.0 refuses most control bytes; UTF-8 is not promised */
		else
			putc(c, f);
	}
}

void tree_svg_str(FILE *f, const char *s)
{
	tree_svg_bytes(f, s, strlen(s));
}

static void text_open(struct pen *p, unsigned size, int bold, const char *fill, const char *anchor,
		      unsigned x)
{
	fprintf(p->f, "<text x=\"%u\" y=\"%u\" font-size=\"%u\"%s fill=\"%s\"%s%s%s>", x,
		p->y + size, size, bold ? " font-weight=\"bold\"" : "", fill,
		anchor != NULL ? " text-anchor=\"" : "", anchor != NULL ? anchor : "",
		anchor != NULL ? "\"" : "");
}

/*
 * s wrapped to the pen's width at this size, at most max lines (the last
 * one cut with "..." when more is left); returns the lines used.
 */
static unsigned put_text(struct pen *p, unsigned size, int bold, const char *fill, const char *s,
			 size_t len, unsigned max)
{
	unsigned cols = columns(p->width, size), n = 0;
	size_t start = 0;

	while (start < len && n < max) {
		unsigned w = 0, limit = n + 1 == max ? cols - 3 : cols;
		size_t end = start, space = start;

		while (end < len && w + byte_width((unsigned char)s[end]) <= limit) {
			if (s[end] == ' ')
				space = end;
			w += byte_width((unsigned char)s[end]);
			end++;
		}
		if (end < len && space > start && n + 1 < max)
			end = space; /* break at the last space that fits */
		if (end == start)
			end = start + 1; /* one byte wider than the line: show it anyway */
		if (p->f != NULL) {
			text_open(p, size, bold, fill, NULL, p->x);
			tree_svg_bytes(p->f, s + start, end - start);
			if (n + 1 == max && end < len)
				fputs("...", p->f);
			fputs("</text>\n", p->f);
		}
		p->y += line_height(size);
		n++;
		start = end;
		while (start < len && s[start] == ' ')
			start++;
	}
	return n;
}

static unsigned put_str(struct pen *p, unsigned size, int bold, const char *fill, const char *s,
			unsigned max)
{
	return put_text(p, size, bold, fill, s, strlen(s), max);
}

/* ---- what a box says ------------------------------------------------------- */

#define C_TEXT "#212121"
#define C_DIM "#546e7a"
#define C_RED "#b71c1c"
#define C_ORANGE "#e65100"

struct look {
	const char *cls;    /* over, beyond, error, voids, ok: scripts and tests match on it */
	const char *fill, *stroke, *dash, *badge;
	unsigned stroke_w;
};

static void look_of(const struct tree_node *n, const struct tree_marks *m, struct look *l)
{
	int beyond = m->lookups == TREE_BEYOND || m->voids == TREE_BEYOND;
	int over = m->lookups == TREE_CROSSES || m->voids == TREE_CROSSES;

	memset(l, 0, sizeof(*l));
	l->dash = n->loop || n->repeated ? "6 4" : NULL;
	if (beyond) {
		*l = (struct look){ "beyond", "#eeeeee", C_RED, "3 3", C_RED, 2 };
	} else if (over) {
		*l = (struct look){ "over", "#ffebee", "#c62828", l->dash, C_RED, 3 };
	} else if (n->error) {
		*l = (struct look){ "error", "#ffebee", "#c62828", l->dash, C_RED, 2 };
	} else if (m->void_heavy) {
		*l = (struct look){ "voids", "#fff3e0", C_ORANGE, l->dash, C_ORANGE, 2 };
	} else {
		*l = (struct look){ "ok", "#ffffff", "#90a4ae", l->dash, "#1b5e20", 1 };
	}
}

static void voids_text(char *buf, size_t size, const unsigned v[2])
{
	if (v[0] == v[1])
		snprintf(buf, size, "%u", v[0]);
	else
		snprintf(buf, size, "IPv4 clients %u, IPv6 clients %u", v[0], v[1]);
}

/* The status line of a box that breaks a limit, or "" . */
static void status_text(char *buf, size_t size, const struct tree_node *n,
			const struct tree_marks *m)
{
	unsigned before_v = n->enter_voids[0] > n->enter_voids[1] ? n->enter_voids[0]
								 : n->enter_voids[1];
	unsigned after_v = m->voids_after[0] > m->voids_after[1] ? m->voids_after[0]
								 : m->voids_after[1];

	buf[0] = '\0';
	if (m->lookups == TREE_BEYOND)
		snprintf(buf, size,
			 "not reached: %u lookups are counted before it (limit %u); receivers "
			 "stop there with permerror",
			 m->terms_before, SPFKIT_LIMIT_DNS_TERMS);
	else if (m->voids == TREE_BEYOND)
		snprintf(buf, size,
			 "not reached: %u void lookups are counted before it (limit %u); receivers "
			 "stop there with permerror",
			 before_v, SPFKIT_LIMIT_VOID_LOOKUPS);
	else if (m->lookups == TREE_CROSSES)
		snprintf(buf, size,
			 "over the limit on this path: the lookup count goes from %u to %u in this "
			 "branch (limit %u)",
			 m->terms_before, m->terms_after, SPFKIT_LIMIT_DNS_TERMS);
	else if (m->voids == TREE_CROSSES)
		snprintf(buf, size,
			 "over the void limit on this path: void lookups reach %u in this branch "
			 "(limit %u)",
			 after_v, SPFKIT_LIMIT_VOID_LOOKUPS);
	else if (m->void_heavy)
		snprintf(buf, size,
			 "void-heavy: this branch alone makes %u void lookups (limit %u): one more "
			 "anywhere is permerror",
			 n->voids_tree[0] > n->voids_tree[1] ? n->voids_tree[0] : n->voids_tree[1],
			 SPFKIT_LIMIT_VOID_LOOKUPS);
}

/* The domain, with what its subtree costs at the right of its first line. */
static void node_title(struct pen *p, const struct tree_node *n, const struct look *l)
{
	struct pen q = *p;
	char cost[40];

	q.width = p->width > 130 ? p->width - 130 : p->width; /* room for the cost */
	put_str(&q, F_NAME, 1, C_TEXT,
		n->domain[0] != '\0' ? n->domain : "(record given, no domain)", 2);
	if (p->f != NULL && n->record != NULL && n->parsed) {
		snprintf(cost, sizeof(cost), "%u lookup%s", n->terms_tree,
			 n->terms_tree == 1 ? "" : "s");
		text_open(p, F_NAME, 1, l->badge, "end", p->x + p->width);
		tree_svg_str(p->f, cost);
		fputs("</text>\n", p->f);
	}
	p->y = q.y;
}

/* The term that leads here, the counts, and the limit this branch breaks. */
static void node_counts(struct pen *p, const struct tree_node *n)
{
	struct tree_marks m;
	char line[600], a[48], b[48], v[64];

	if (n->via != NULL) {
		snprintf(line, sizeof(line), "%s %.500s",
			 n->how == LINT_HOW_REDIRECT ? "redirected by" : "included by", n->via);
		put_str(p, F_SMALL, 0, C_DIM, line, 2);
	}
	if (n->record != NULL && n->parsed) {
		voids_text(v, sizeof(v), n->voids_tree);
		snprintf(line, sizeof(line),
			 "cost: %u lookup%s with its subtree, %u here (limit %u) | void lookups: %s "
			 "(limit %u)",
			 n->terms_tree, n->terms_tree == 1 ? "" : "s", n->terms_here,
			 SPFKIT_LIMIT_DNS_TERMS, v, SPFKIT_LIMIT_VOID_LOOKUPS);
		put_str(p, F_INFO, 0, C_TEXT, line, SVG_OTHER_LINES);
		snprintf(line, sizeof(line), "addresses with the subtree: IPv4 %s, IPv6 %s%s",
			 spfkit__tree_count_str(&n->v4_tree, a, sizeof(a)),
			 spfkit__tree_count_text(&n->v6_tree, b, sizeof(b)),
			 n->all_tree ? " (and +all: every address)" : "");
		put_str(p, F_INFO, 0, C_TEXT, line, SVG_OTHER_LINES);
	}
	spfkit__tree_marks(n, &m);
	status_text(line, sizeof(line), n, &m);
	if (line[0] != '\0')
		put_str(p, F_INFO, 1,
			m.lookups == TREE_UNDER && m.voids == TREE_UNDER ? C_ORANGE : C_RED, line,
			SVG_OTHER_LINES);
}

/* The TTL, the record (and the others at its name), macros, the problem. */
static void node_texts(struct pen *p, const struct tree_node *n)
{
	char line[100];
	size_t i;

	if (n->record != NULL) {
		if (n->has_ttl) {
			snprintf(line, sizeof(line), "TTL %lu s", (unsigned long)n->ttl);
			put_str(p, F_SMALL, 0, C_DIM, line, 1);
		}
		put_text(p, F_SMALL, 0, C_DIM, n->record, n->record_len, SVG_RECORD_LINES);
	}
	for (i = 0; i < n->nmore; i++) {
		snprintf(line, sizeof(line), "record %zu of %zu (merge them into one):", i + 2,
			 n->nmore + 1);
		put_str(p, F_SMALL, 1, C_RED, line, 1);
		put_text(p, F_SMALL, 0, C_DIM, n->more[i].text, n->more[i].len, SVG_RECORD_LINES);
	}
	for (i = 0; i < n->ndynamic; i++) {
		put_str(p, F_SMALL, 0, C_DIM, "made by macros, not followed:", 1);
		put_str(p, F_SMALL, 0, C_DIM, n->dynamic[i], 2);
	}
	if (n->problem != NULL)
		put_str(p, F_INFO, n->error, n->error ? C_RED : C_DIM, n->problem, SVG_OTHER_LINES);
	if (n->repeated)
		put_str(p, F_SMALL, 0, C_DIM,
			"repeated: shown above; its lookups are counted again, its subtree not drawn "
			"again",
			2);
}

/* The lines of a node's box, from the pen's position; the pen ends below them. */
static void node_body(struct pen *p, const struct tree_node *n, const struct look *l)
{
	node_title(p, n, l);
	node_counts(p, n);
	node_texts(p, n);
}

/* ---- findings beside a box (--html) ------------------------------------------ */

static const char *severity_colour(enum lint_severity s)
{
	return s == LINT_ERROR ? C_RED : s == LINT_WARNING ? C_ORANGE : C_DIM;
}

/* The same finding again: a record reached on several paths is checked on each. */
static int same_finding(const struct lint_finding *a, const struct lint_finding *b)
{
	return a->id == b->id && a->offset == b->offset && a->severity == b->severity &&
	       strcmp(a->message, b->message) == 0;
}

static void finding_body(struct pen *p, const struct lint_finding *f, unsigned times)
{
	char line[600];
	const char *fix = spfkit__lint_finding_fix(f);

	if (times > 1)
		snprintf(line, sizeof(line), "%s %s (found %u times)",
			 spfkit__lint_severity_name(f->severity), spfkit__lint_checks[f->id].id,
			 times);
	else
		snprintf(line, sizeof(line), "%s %s", spfkit__lint_severity_name(f->severity),
			 spfkit__lint_checks[f->id].id);
	put_str(p, F_SMALL, 1, severity_colour(f->severity), line, 2);
	if (f->term != NULL) {
		snprintf(line, sizeof(line), "term: %.300s", f->term);
		put_str(p, F_SMALL, 0, C_DIM, line, 2);
	}
	put_str(p, F_SMALL, 0, C_TEXT, f->message, SVG_OTHER_LINES);
	if (fix != NULL) {
		snprintf(line, sizeof(line), "fix: %.500s", fix);
		put_str(p, F_SMALL, 0, C_DIM, line, 3);
	}
	p->y += 4;
}

/* ---- the layout ------------------------------------------------------------- */

struct layout {
	const struct tree *t;
	const struct lint_report *r; /* NULL: no findings column */
	const struct tree_node **order; /* boxes, top to bottom */
	unsigned *depth, *top, *height;
	size_t *index_of;  /* node id -> place in order */
	size_t *owner;     /* finding -> place in order of the box it stands beside */
	size_t n;
	unsigned tree_w, width, header_h, total_h;
};

static size_t count_shown(const struct tree_node *n)
{
	const struct tree_node *c;
	size_t k = 1;

	for (c = n->repeated ? NULL : n->child; c != NULL; c = c->next)
		k += count_shown(c);
	return k;
}

static void place(struct layout *L, const struct tree_node *n, unsigned depth)
{
	const struct tree_node *c;

	L->index_of[n->id] = L->n;
	L->depth[L->n] = depth;
	L->order[L->n++] = n;
	for (c = n->repeated ? NULL : n->child; c != NULL; c = c->next)
		place(L, c, depth + 1);
}

static unsigned box_x(const struct layout *L, size_t i)
{
	unsigned d = L->depth[i] < SVG_MAX_INDENT ? L->depth[i] : SVG_MAX_INDENT;

	return SVG_MARGIN + d * SVG_INDENT;
}

static unsigned box_w(const struct layout *L, size_t i)
{
	return L->tree_w - SVG_MARGIN - box_x(L, i);
}

/* The box a finding stands beside: the first with its domain, else the top. */
static size_t owner_of(const struct layout *L, const struct lint_finding *f)
{
	size_t i;

	if (f->domain == NULL)
		return 0;
	for (i = 0; i < L->n; i++)
		if (spfkit__memcaseeq(L->order[i]->domain, strlen(L->order[i]->domain), f->domain,
				      strlen(f->domain)))
			return i;
	return 0;
}

static unsigned findings_height(const struct layout *L, size_t i, FILE *f, unsigned top)
{
	struct pen p = { f, L->tree_w + SVG_FIND_GAP + SVG_PAD, top + SVG_PAD,
			 SVG_FIND_W - SVG_MARGIN - 2 * SVG_PAD };
	size_t k;
	int any = 0;

	for (k = 0; L->r != NULL && k < L->r->n; k++) {
		unsigned times = 1;
		size_t j;

		if (L->owner[k] != i)
			continue;
		for (j = 0; j < L->r->n && times > 0; j++) {
			if (j == k || L->owner[j] != i || !same_finding(&L->r->items[j], &L->r->items[k]))
				continue;
			times = j < k ? 0 : times + 1; /* shown once, at its first place */
		}
		if (times == 0)
			continue;
		finding_body(&p, &L->r->items[k], times);
		any = 1;
	}
	return any ? p.y - top + SVG_PAD : 0;
}

static unsigned node_height(const struct layout *L, size_t i, FILE *f, unsigned top,
			    const struct look *l)
{
	struct pen p = { f, box_x(L, i) + SVG_PAD, top + SVG_PAD, box_w(L, i) - 2 * SVG_PAD };

	node_body(&p, L->order[i], l);
	return p.y - top + SVG_PAD;
}

static void header(const struct layout *L, struct pen *p)
{
	const struct lint_counts *c = &L->t->r->counts;
	char line[400];
	int over = c->dns_terms > SPFKIT_LIMIT_DNS_TERMS;

	snprintf(line, sizeof(line), "SPF tree of %s",
		 L->t->r->domain[0] != '\0' ? L->t->r->domain : "the record given");
	put_str(p, F_TITLE, 1, C_TEXT, line, 2);
	snprintf(line, sizeof(line), "%u DNS-querying term%s, worst case (limit %u)%s",
		 c->dns_terms, c->dns_terms == 1 ? "" : "s", SPFKIT_LIMIT_DNS_TERMS,
		 over ? ": OVER THE LIMIT, receivers return permerror" : "");
	put_str(p, F_INFO, over, over ? C_RED : C_TEXT, line, 2);
	over = c->void_v4 > SPFKIT_LIMIT_VOID_LOOKUPS || c->void_v6 > SPFKIT_LIMIT_VOID_LOOKUPS;
	snprintf(line, sizeof(line),
		 "void lookups: IPv4 clients %u, IPv6 clients %u (limit %u)%s | %u record%s read",
		 c->void_v4, c->void_v6, SPFKIT_LIMIT_VOID_LOOKUPS,
		 over ? ": OVER THE LIMIT" : "", c->records, c->records == 1 ? "" : "s");
	put_str(p, F_INFO, over, over ? C_RED : C_TEXT, line, 2);
	p->y += 4;
}

/* The legend: a swatch and a word per colour. */
static void legend(const struct layout *L, struct pen *p)
{
	static const struct {
		const char *fill, *stroke, *dash, *what;
	} keys[] = {
		{ "#ffebee", "#c62828", NULL, "over a limit on this path" },
		{ "#eeeeee", C_RED, "3 3", "not reached: after the limit" },
		{ "#fff3e0", C_ORANGE, NULL, "void-heavy branch" },
		{ "#ffffff", "#90a4ae", "6 4", "repeated or loop" },
	};
	unsigned x = p->x, i;

	(void)L;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (p->f != NULL) {
			fprintf(p->f,
				"<rect x=\"%u\" y=\"%u\" width=\"16\" height=\"14\" fill=\"%s\" "
				"stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n",
				x, p->y + 2, keys[i].fill, keys[i].stroke,
				keys[i].dash ? " stroke-dasharray=\"" : "", keys[i].dash ? keys[i].dash : "",
				keys[i].dash ? "\"" : "");
			fprintf(p->f, "<text x=\"%u\" y=\"%u\" font-size=\"%u\" fill=\"%s\">", x + 22,
				p->y + F_SMALL + 1, F_SMALL, C_TEXT);
			tree_svg_str(p->f, keys[i].what);
			fputs("</text>\n", p->f);
		}
		x += 22 + (unsigned)strlen(keys[i].what) * 8 + 24;
	}
	p->y += line_height(F_INFO) + 8;
}

static void connector(FILE *f, const struct layout *L, size_t parent, size_t child,
		      const struct look *l)
{
	unsigned x = box_x(L, parent) + 12, y0 = L->top[parent] + L->height[parent];
	unsigned y1 = L->top[child] + SVG_PAD + F_NAME / 2 + 2;
	int red = strcmp(l->cls, "over") == 0 || strcmp(l->cls, "beyond") == 0;

	fprintf(f,
		"<path class=\"edge %s\" d=\"M%u %u V%u H%u\" fill=\"none\" stroke=\"%s\" "
		"stroke-width=\"%s\"%s/>\n",
		l->cls, x, y0, y1, box_x(L, child), red ? C_RED : "#90a4ae", red ? "2.5" : "1.5",
		strcmp(l->cls, "beyond") == 0 || L->order[child]->how == LINT_HOW_REDIRECT
			? " stroke-dasharray=\"5 3\""
			: "");
}

static int layout_init(struct layout *L, const struct tree *t, const struct lint_report *r)
{
	size_t shown = t->root != NULL ? count_shown(t->root) : 0;

	memset(L, 0, sizeof(*L));
	L->t = t;
	L->r = r;
	L->tree_w = SVG_TREE_W;
	L->width = SVG_TREE_W + (r != NULL ? SVG_FIND_GAP + SVG_FIND_W : 0);
	L->order = spfkit__calloc(NULL, shown + 1, sizeof(*L->order));
	L->depth = spfkit__calloc(NULL, shown + 1, sizeof(*L->depth));
	L->top = spfkit__calloc(NULL, shown + 1, sizeof(*L->top));
	L->height = spfkit__calloc(NULL, shown + 1, sizeof(*L->height));
	L->index_of = spfkit__calloc(NULL, t->nodes + 1, sizeof(*L->index_of));
	L->owner = spfkit__calloc(NULL, (r != NULL ? r->n : 0) + 1, sizeof(*L->owner));
	if (L->order == NULL || L->depth == NULL || L->top == NULL || L->height == NULL ||
	    L->index_of == NULL || L->owner == NULL)
		return SPFKIT_ENOMEM;
	if (t->root != NULL)
		place(L, t->root, 0);
	return 0;
}

static void layout_free(struct layout *L)
{
	spfkit__free(NULL, L->order);
	spfkit__free(NULL, L->depth);
	spfkit__free(NULL, L->top);
	spfkit__free(NULL, L->height);
	spfkit__free(NULL, L->index_of);
	spfkit__free(NULL, L->owner);
}

/* Heights and tops of every box; the picture's height. */
static void measure(struct layout *L)
{
	struct pen p = { NULL, SVG_MARGIN, SVG_MARGIN, L->width - 2 * SVG_MARGIN };
	unsigned y;
	size_t i;

	for (i = 0; L->r != NULL && i < L->r->n; i++)
		L->owner[i] = L->n > 0 ? owner_of(L, &L->r->items[i]) : 0;
	header(L, &p);
	legend(L, &p);
	L->header_h = p.y;
	y = p.y;
	for (i = 0; i < L->n; i++) {
		struct look l;
		struct tree_marks m;
		unsigned h, fh;

		spfkit__tree_marks(L->order[i], &m);
		look_of(L->order[i], &m, &l);
		h = node_height(L, i, NULL, y, &l);
		fh = findings_height(L, i, NULL, y);
		L->top[i] = y;
		L->height[i] = h;
		y += (h > fh ? h : fh) + SVG_GAP;
	}
	L->total_h = y + SVG_MARGIN;
}

static void draw(const struct layout *L, FILE *f, int standalone)
{
	struct pen p = { f, SVG_MARGIN, SVG_MARGIN, L->width - 2 * SVG_MARGIN };
	size_t i;

	if (standalone)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"spf-tree\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" font-family=\"%s\">\n",
		L->width, L->total_h, L->width, L->total_h, SVG_FONT);
	fprintf(f, "<rect width=\"%u\" height=\"%u\" fill=\"#fafafa\"/>\n", L->width, L->total_h);
	header(L, &p);
	legend(L, &p);
	/* last first: a path to an earlier child is drawn over the longer ones below it */
	for (i = L->n; i-- > 1;) {
		struct tree_marks m;
		struct look l;

		spfkit__tree_marks(L->order[i], &m);
		look_of(L->order[i], &m, &l);
		connector(f, L, L->index_of[L->order[i]->parent->id], i, &l);
	}
	for (i = 0; i < L->n; i++) {
		const struct tree_node *n = L->order[i];
		struct tree_marks m;
		struct look l;
		unsigned fh;

		spfkit__tree_marks(n, &m);
		look_of(n, &m, &l);
		fprintf(f, "<g class=\"node %s\" id=\"node-%u\">\n", l.cls, n->id);
		fprintf(f,
			"<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" rx=\"4\" fill=\"%s\" "
			"stroke=\"%s\" stroke-width=\"%u\"%s%s%s/>\n",
			box_x(L, i), L->top[i], box_w(L, i), L->height[i], l.fill, l.stroke,
			l.stroke_w, l.dash ? " stroke-dasharray=\"" : "", l.dash ? l.dash : "",
			l.dash ? "\"" : "");
		node_height(L, i, f, L->top[i], &l);
		fputs("</g>\n", f);
		fh = findings_height(L, i, NULL, L->top[i]);
		if (fh == 0)
			continue;
		fprintf(f, "<g class=\"findings\" id=\"findings-%u\">\n", n->id);
		fprintf(f,
			"<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" rx=\"4\" fill=\"#ffffff\" "
			"stroke=\"#b0bec5\"/>\n",
			L->tree_w + SVG_FIND_GAP, L->top[i], SVG_FIND_W - SVG_MARGIN, fh);
		fprintf(f,
			"<path d=\"M%u %u H%u\" stroke=\"#b0bec5\" stroke-width=\"1.5\"/>\n",
			box_x(L, i) + box_w(L, i), L->top[i] + 14, L->tree_w + SVG_FIND_GAP);
		findings_height(L, i, f, L->top[i]);
		fputs("</g>\n", f);
	}
	fputs("</svg>\n", f);
}

int tree_print_svg(FILE *f, const struct tree *t, const struct lint_report *findings,
		   int standalone)
{
	struct layout L;
	int rc = layout_init(&L, t, findings);

	if (rc == 0) {
		measure(&L);
		draw(&L, f, standalone);
		rc = ferror(f) ? SPFKIT_EIO : 0;
	}
	layout_free(&L);
	return rc;
}
