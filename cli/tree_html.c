/*
 * `spfkit tree --html`: one self-contained HTML page for a domain's
 * owner: the picture (tree_svg.c) with lint's findings beside the boxes
 * of the records they concern, the findings as a table, and what
 * `spfkit flatten` would publish instead. No script, no link, no font or
 * style from elsewhere: it opens from a mail attachment or a file with
 * the network off.
 *
 * One walk serves all three: lint's walker, watched by the tree and by
 * the flatten model at once (tree_html_observe), so the findings, the
 * counts and the proposal come from the same DNS answers. The proposal
 * is flatten's own run over that walk (spfkit__flat_run_records: the
 * records, the lookups after, and the evaluation of original and
 * flattened for every boundary address and a seeded sample), made before
 * the walk's answers are let go; none is shown when flatten would refuse.
 */
#include <string.h>

#include "tree.h"

#define HTML_SAMPLES 256u /* as spfkit flatten's default */
#define HTML_SEED 1ul

void tree_html_init(struct tree_html *h, struct tree *t, struct flat_walk *w)
{
	memset(h, 0, sizeof(*h));
	h->t = t;
	h->w = w;
}

int tree_html_watch(struct tree_html *h)
{
	int rc = spfkit__flat_model_init(&h->w->m, &h->w->r, NULL, 0);

	h->m_init = rc == 0;
	return rc;
}

void tree_html_observe(void *arg, const struct lint_walk_event *ev)
{
	struct tree_html *h = arg;

	spfkit__tree_observe(h->t, ev);
	if (h->m_init)
		spfkit__flat_model_observe(&h->w->m, ev);
}

void tree_html_free(struct tree_html *h)
{
	if (h->m_init)
		spfkit__flat_model_free(&h->w->m);
	spfkit__flat_run_result_free(&h->res);
	h->m_init = 0;
}

static void refuse(struct tree_html *h, const char *why)
{
	h->state = TREE_FLAT_REFUSED;
	snprintf(h->why, sizeof(h->why), "%s", why);
}

int tree_html_flatten(struct tree_html *h)
{
	struct flat_walk *w = h->w;
	struct flat_run_opts o;
	struct flat_problem why;

	if (!h->m_init || w->r.domain == NULL || w->r.domain[0] == '\0') {
		refuse(h, "flattening needs the domain (--domain with --record)");
		return 0;
	}
	if (w->m.err != 0)
		return w->m.err;
	memset(&why, 0, sizeof(why));
	if (spfkit__flat_run_judge(w, w->r.domain, 0, &why) != 0) {
		refuse(h, why.text);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.domain = w->r.domain;
	o.seed = HTML_SEED;
	o.samples = HTML_SAMPLES;
	o.now = 0; /* the proof evaluates at one fixed time: the page does not change with it */
	if (spfkit__flat_run_records(w, &o, &h->res, &why) != 0) {
		refuse(h, why.text);
		return 0;
	}
	h->state = TREE_FLAT_PROPOSED;
	return 0;
}

/* ---- the page ----------------------------------------------------------------- */

static const char STYLE[] =
	"body{font-family:DejaVu Sans,Liberation Sans,Arial,sans-serif;margin:16px;"
	"color:#212121;background:#fafafa}\n"
	"h1{font-size:24px;margin:0 0 8px}h2{font-size:19px;margin:24px 0 8px}\n"
	"p,li,td,th{font-size:14px;line-height:1.45}\n"
	"span.total-over{color:#b71c1c;font-weight:bold}span.total-ok{color:#1b5e20;font-weight:bold}\n"
	"table{border-collapse:collapse;max-width:1880px}\n"
	"td,th{border:1px solid #cfd8dc;padding:4px 8px;text-align:left;vertical-align:top}\n"
	"th{background:#eceff1}\n"
	"tr.error td.sev{color:#b71c1c;font-weight:bold}"
	"tr.warning td.sev{color:#e65100;font-weight:bold}tr.notice td.sev{color:#546e7a}\n"
	"code,pre{font-family:DejaVu Sans Mono,Liberation Mono,monospace;font-size:13px}\n"
	"pre{background:#fff;border:1px solid #cfd8dc;padding:8px;overflow-x:auto;"
	"max-width:1880px}\n"
	".picture{overflow-x:auto}\n";

static void summary(FILE *f, const struct tree *t)
{
	const struct lint_counts *c = &t->r->counts;
	int over = c->dns_terms > SPFKIT_LIMIT_DNS_TERMS;
	int vover = c->void_v4 > SPFKIT_LIMIT_VOID_LOOKUPS || c->void_v6 > SPFKIT_LIMIT_VOID_LOOKUPS;

	fprintf(f, "<p id=\"summary\"><span class=\"%s\">%u DNS-querying term%s</span>, worst case "
		   "(limit %u)%s; void lookups: IPv4 clients %u, IPv6 clients %u (limit %u)%s; %u "
		   "record%s read.</p>\n",
		over ? "total-over" : "total-ok", c->dns_terms, c->dns_terms == 1 ? "" : "s",
		SPFKIT_LIMIT_DNS_TERMS, over ? ": over the limit, receivers return permerror" : "",
		c->void_v4, c->void_v6, SPFKIT_LIMIT_VOID_LOOKUPS,
		vover ? ": over the limit, receivers return permerror" : "", c->records,
		c->records == 1 ? "" : "s");
	fputs("<p>spfkit lint: ", f);
	lint_print_tally(f, t->r);
	fputs(".</p>\n", f);
}

static void findings_table(FILE *f, const struct lint_report *r)
{
	size_t i;

	fputs("<h2 id=\"findings\">Findings of spfkit lint</h2>\n", f);
	if (r->n == 0) {
		fputs("<p>None: lint has nothing to say about this tree.</p>\n", f);
		return;
	}
	fputs("<table><tr><th>severity</th><th>check</th><th>record of</th><th>term</th>"
	      "<th>finding</th><th>fix</th><th>RFC 7208</th></tr>\n",
	      f);
	for (i = 0; i < r->n; i++) {
		const struct lint_finding *x = &r->items[i];
		const char *fix = spfkit__lint_finding_fix(x);

		fprintf(f, "<tr class=\"%s\"><td class=\"sev\">%s</td><td>",
			spfkit__lint_severity_name(x->severity), spfkit__lint_severity_name(x->severity));
		tree_svg_str(f, spfkit__lint_checks[x->id].id);
		fputs("</td><td>", f);
		tree_svg_str(f, x->domain != NULL ? x->domain : "");
		fputs("</td><td><code>", f);
		tree_svg_str(f, x->term != NULL ? x->term : "");
		fputs("</code></td><td>", f);
		tree_svg_str(f, x->message);
		fputs("</td><td>", f);
		tree_svg_str(f, fix != NULL ? fix : "");
		fprintf(f, "</td><td>%s</td></tr>\n", spfkit__lint_checks[x->id].section);
	}
	fputs("</table>\n", f);
}

static void flatten_part(FILE *f, const struct tree *t, const struct tree_html *h)
{
	const struct lint_counts *c = &t->r->counts;
	struct spfkit__buf zone;
	size_t i;

	fputs("<h2 id=\"flatten\">What spfkit flatten would publish</h2>\n", f);
	if (h->state != TREE_FLAT_PROPOSED) {
		fputs("<p id=\"flatten-none\">No proposal: ", f);
		tree_svg_str(f, h->why);
		fputs(".</p>\n", f);
		return;
	}
	fprintf(f, "<p>%s DNS-querying terms: %u now, <b>%u</b> flattened (limit %u); %zu IPv4 and "
		   "%zu IPv6 blocks in %zu record%s. Original and flattened records give the same "
		   "result for all %zu addresses checked (every range's boundaries and a sample)",
		c->dns_terms > SPFKIT_LIMIT_DNS_TERMS ? "Flattening brings the tree under the limit."
						      : "The tree is within the limit; flattening is not "
							"needed, and it fixes addresses that providers change.",
		c->dns_terms, h->res.out.lookups_after, SPFKIT_LIMIT_DNS_TERMS, h->res.out.blocks4,
		h->res.out.blocks6, h->res.out.n, h->res.out.n == 1 ? "" : "s", h->res.v.addresses);
	if (h->res.v.permerror_removed > 0)
		fprintf(f, "; %zu of them got permerror from the original and get its intended result "
			   "flattened", h->res.v.permerror_removed);
	for (i = 0; i < h->res.out.nleft; i++) {
		fputs("; <code>", f);
		tree_svg_str(f, h->res.out.left_alone[i]);
		fputs("</code> is left alone (the source reads it: the new records take other names)",
		      f);
	}
	fputs(". Run <code>spfkit flatten</code> again when a provider changes its ranges "
	      "(<code>--check-live</code> tells).</p>\n<pre id=\"flatten-zone\">",
	      f);
	spfkit__buf_init(&zone, NULL, 1u << 24);
	for (i = 0; i < h->res.out.n; i++)
		spfkit__flat_zone_line(&zone, &h->res.out.recs[i], h->res.ttl);
	for (i = 0; i < zone.len;) {
		/* a line at a time: the line breaks stay, the rest is escaped */
		const char *nl = memchr(zone.data + i, '\n', zone.len - i);
		size_t end = nl != NULL ? (size_t)(nl - zone.data) : zone.len;

		tree_svg_bytes(f, zone.data + i, end - i);
		putc('\n', f);
		i = end + 1;
	}
	spfkit__buf_free(&zone);
	fputs("</pre>\n", f);
}

int tree_print_html(FILE *f, const struct tree *t, const struct tree_html *h)
{
	const char *domain = t->r->domain[0] != '\0' ? t->r->domain : "the record given";
	int rc;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>SPF "
	      "tree of ",
	      f);
	tree_svg_str(f, domain);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>SPF tree of ", STYLE);
	tree_svg_str(f, domain);
	fputs("</h1>\n", f);
	summary(f, t);
	fputs("<h2 id=\"picture\">The tree, with lint's findings beside each record</h2>\n"
	      "<div class=\"picture\">\n",
	      f);
	rc = tree_print_svg(f, t, t->r, 0);
	fputs("</div>\n", f);
	findings_table(f, t->r);
	flatten_part(f, t, h);
	fputs("<p>Made by <code>spfkit tree --html</code> (docs/tree.md); counts by the evaluator's "
	      "rules, for a client that matches nothing.</p>\n</body>\n</html>\n",
	      f);
	if (rc == 0 && ferror(f))
		rc = SPFKIT_EIO;
	return rc;
}
