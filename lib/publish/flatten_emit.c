/*
 * The flattened records of `spfkit flatten`: the model's sets as
 * ip4:/ip6: terms (CIDR-aggregated, IPv4 then IPv6, in address order),
 * laid out under RFC 7208's size rules:
 *  - §3.3: a TXT character-string holds at most 255 octets; a record
 *    longer than that is split into several, here after a space so no
 *    term is cut (receivers join them without a separator);
 *  - §3.4: the DNS name and the text of all the TXT records at that
 *    name, together, under 450 octets (other TXT records at the name
 *    are counted, as the walk's answers give them), and the whole DNS
 *    answer at the name within 512 octets, sized as lint's
 *    answer-over-512 sizes it: header, question and every TXT record
 *    there (beside a few other records, 450 octets of text make more).
 * When everything fits in the root record it stays there. Otherwise
 * each run's set of each qualifier goes to _spfN.DOMAIN records (never
 * at a name the source's tree reads: those are the owner's, and the
 * source must keep meaning what it says for --check-live), which
 * the root includes with that qualifier: one include per record
 * (fan-out), or, with --chain, one per set, each record including the
 * next. An included record passes exactly the addresses it lists
 * (§5.2), so "-include:_spf3.D" fails exactly those.
 */
#include <stdio.h>
#include <string.h>

#include "publish.h"

#define ANSWER_MAX 450u    /* RFC 7208 §3.4 */
#define STRING_MAX 255u    /* RFC 7208 §3.3, RFC 1035 §3.3.14 */
#define MAX_RECORDS 200u   /* past this the lookups are far over 10 anyway */
#define TERM_MAX 64u       /* "ip6:" + the longest address + "/128" */

/* End of the character-string starting at pos: the rest, or after the last space that fits. */
static size_t string_end(const char *text, size_t len, size_t pos)
{
	size_t i;

	if (len - pos <= STRING_MAX)
		return len;
	for (i = pos + STRING_MAX; i > pos; i--)
		if (text[i - 1] == ' ')
			return i;
	return pos + STRING_MAX; /* one term longer than a string: cut inside it (§3.3 allows) */
}

/* The §3.4 octets of a record as it will be written: each string and its length octet. */
static size_t record_wire(const char *text, size_t len, size_t *strings)
{
	size_t pos = 0, total = 0, n = 0, end;

	while (pos < len || n == 0) {
		end = string_end(text, len, pos);
		total += 1 + (end - pos);
		n++;
		pos = end;
		if (len == 0)
			break;
	}
	if (strings != NULL)
		*strings = n;
	return total;
}

/* ---- output records ------------------------------------------------------ */

/* RFC 7208 §3.4: the name and the text of every TXT record there. */
static size_t s34_octets(const char *name, const struct flat_others *o, size_t wire)
{
	return strlen(name) + 2 + o->octets + wire;
}

static size_t answer_octets(const char *name, const struct flat_others *o, size_t wire)
{
	return spfkit__lint_txt_answer_octets(strlen(name), o->rrs + 1, o->octets + wire);
}

static int add_record(struct flat_output *out, const char *name, const struct spfkit__buf *text,
		      const struct flat_others *other, struct flat_record **rec)
{
	size_t wire;

	struct flat_record *p;

	p = spfkit__array_grow(out->recs, &out->cap, out->n, sizeof(*p), 8);
	if (p == NULL)
		return SPFKIT_ENOMEM;
	out->recs = p;
	p = &out->recs[out->n];
	memset(p, 0, sizeof(*p));
	p->name = spfkit__strndup(NULL, name, strlen(name));
	p->text = spfkit__strndup(NULL, spfkit__buf_str(text), text->len);
	if (p->name == NULL || p->text == NULL) {
		spfkit__free(NULL, (void *)p->name);
		spfkit__free(NULL, p->text);
		return SPFKIT_ENOMEM;
	}
	p->len = text->len;
	wire = record_wire(p->text, p->len, &p->strings);
	p->answer = s34_octets(name, other, wire);
	p->wire = answer_octets(name, other, wire);
	out->n++;
	if (rec != NULL)
		*rec = p;
	return 0;
}

void spfkit__flat_output_free(struct flat_output *out)
{
	size_t i;

	for (i = 0; i < out->n; i++) {
		spfkit__free(NULL, (void *)out->recs[i].name);
		spfkit__free(NULL, out->recs[i].text);
	}
	spfkit__free(NULL, out->recs);
	for (i = 0; i < out->nleft; i++)
		spfkit__free(NULL, out->left_alone[i]);
	spfkit__free(NULL, out->left_alone);
	spfkit__flat_cidrs_free(&out->all_blocks);
	memset(out, 0, sizeof(*out));
}

/* ---- the terms of each set ----------------------------------------------- */

struct emit {
	const struct flat_model *m;
	const struct flat_emit_opts *o;
	struct flat_output *out;
	struct flat_cidrs (*sets)[FQ_COUNT]; /* per segment */
	int all_q;      /* the last run's set written as "all", or -1 */
	unsigned next;  /* the next _spfN number */
	char *err;
	size_t errlen;
};

/* The TXT records at name that are not SPF records, from the walk's cache (o->dns). */
static void others_at(const struct emit *e, const char *name, struct flat_others *o)
{
	const struct lint_answer *a;
	size_t i;

	memset(o, 0, sizeof(*o));
	if (e->o->dns == NULL ||
	    spfkit__lint_dns_ask(e->o->dns, name, strlen(name), SPFKIT_RR_TXT, &a) != 0)
		return;
	for (i = 0; i < a->count; i++)
		if (!spfkit_record_is_spf((const char *)a->rrs[i].data, a->rrs[i].len)) {
			o->octets += spfkit__lint_txt_wire(a->rrs[i].len);
			o->rrs++;
		}
}

static int fits(const char *name, const struct flat_others *o, const struct spfkit__buf *b)
{
	size_t wire = record_wire(spfkit__buf_str(b), b->len, NULL);

	return s34_octets(name, o, wire) <= ANSWER_MAX &&
	       answer_octets(name, o, wire) <= LINT_UDP_ANSWER_MAX;
}

static void put_term(struct spfkit__buf *b, enum flat_q q, const struct flat_cidr *c)
{
	char term[TERM_MAX];

	spfkit__buf_putc(b, ' ');
	if (q != FQ_PASS)
		spfkit__buf_putc(b, spfkit__flat_q_char(q));
	spfkit__buf_puts(b, spfkit__flat_cidr_term(c, term, sizeof(term)));
}

/* The terminal: the root's "all" (or nothing for §4.7's default), redirect=, exp=. */
static void put_tail(const struct emit *e, struct spfkit__buf *b)
{
	if (e->all_q >= 0 && !(e->all_q == FQ_NEUTRAL && !e->m->root_all)) {
		/* "+all" written out: a pass for every address should be seen */
		spfkit__buf_putc(b, ' ');
		spfkit__buf_putc(b, spfkit__flat_q_char((enum flat_q)e->all_q));
		spfkit__buf_puts(b, "all");
	}
	if (e->m->redirect != NULL) {
		spfkit__buf_putc(b, ' ');
		spfkit__buf_puts(b, e->m->redirect);
	}
	if (e->m->exp != NULL) {
		spfkit__buf_putc(b, ' ');
		spfkit__buf_puts(b, e->m->exp);
	}
}

static int skipped(const struct emit *e, size_t seg, int q)
{
	return seg + 1 == e->m->nsegs && q == e->all_q;
}

/* Everything in the root record. */
static void root_inline(const struct emit *e, struct spfkit__buf *b)
{
	size_t s, i;
	int q;

	spfkit__buf_puts(b, "v=spf1");
	for (s = 0; s < e->m->nsegs; s++) {
		if (e->m->segs[s].opaque) {
			spfkit__buf_putc(b, ' ');
			spfkit__buf_append(b, e->m->segs[s].text, e->m->segs[s].len);
			continue;
		}
		for (q = 0; q < FQ_COUNT; q++)
			for (i = 0; i < e->sets[s][q].n && !skipped(e, s, q); i++)
				put_term(b, (enum flat_q)q, &e->sets[s][q].items[i]);
	}
	put_tail(e, b);
}

static void name_of(const struct emit *e, unsigned n, char *buf, size_t size)
{
	snprintf(buf, size, "_spf%u.%s", n, e->o->domain);
}

static int read_by_source(const struct emit *e, unsigned n)
{
	char name[300];

	name_of(e, n, name, sizeof(name));
	return spfkit__flat_model_reads(e->m, name, strlen(name));
}

/* n, or the first number after it whose _spfN name the source does not read. */
static unsigned free_number(const struct emit *e, unsigned n)
{
	while (read_by_source(e, n))
		n++;
	return n;
}

/* e->next past the names the source reads, each noted for the output's comments. */
static int skip_read_names(struct emit *e)
{
	struct flat_output *out = e->out;
	char name[300], **p;

	for (; read_by_source(e, e->next); e->next++) {
		name_of(e, e->next, name, sizeof(name));
		p = spfkit__realloc(NULL, out->left_alone, (out->nleft + 1) * sizeof(*p));
		if (p == NULL)
			return SPFKIT_ENOMEM;
		out->left_alone = p;
		p[out->nleft] = spfkit__strndup(NULL, name, strlen(name));
		if (p[out->nleft] == NULL)
			return SPFKIT_ENOMEM;
		out->nleft++;
	}
	return 0;
}

/* One set into _spfN records; the root's include terms go to root. */
static int pack_set(struct emit *e, enum flat_q q, const struct flat_cidrs *c,
		    struct spfkit__buf *root)
{
	struct spfkit__buf b;
	struct flat_others other;
	char name[300], next[300];
	size_t i = 0, mark;
	int first = 1, rc = 0;

	spfkit__buf_init(&b, NULL, 65536);
	while (i < c->n && rc == 0) {
		if (e->out->n >= MAX_RECORDS) {
			snprintf(e->err, e->errlen, "more than %u records would be needed", MAX_RECORDS);
			rc = SPFKIT_E2BIG;
			break;
		}
		rc = skip_read_names(e);
		if (rc != 0)
			break;
		name_of(e, e->next, name, sizeof(name));
		name_of(e, free_number(e, e->next + 1), next, sizeof(next));
		others_at(e, name, &other);
		spfkit__buf_reset(&b);
		spfkit__buf_puts(&b, "v=spf1");
		for (; i < c->n; i++) {
			mark = b.len;
			put_term(&b, FQ_PASS, &c->items[i]);
			/* room for the include of the next record, with --chain */
			if (e->o->chain)
				spfkit__buf_printf(&b, " include:%s", next);
			if (!fits(name, &other, &b)) {
				b.len = mark;
				b.data[mark] = '\0';
				break;
			}
			b.len = mark + (b.len - mark) - (e->o->chain ? strlen(next) + 9 : 0);
			b.data[b.len] = '\0';
		}
		if (b.len == 6 || b.err != 0) {
			snprintf(e->err, e->errlen, "%s: a term does not fit in %u octets (a DNS "
				 "answer of %u) beside the other TXT records there", name, ANSWER_MAX,
				 LINT_UDP_ANSWER_MAX);
			rc = b.err != 0 ? b.err : SPFKIT_E2BIG;
			break;
		}
		if (e->o->chain && i < c->n)
			spfkit__buf_printf(&b, " include:%s", next);
		if (!e->o->chain || first) {
			spfkit__buf_putc(root, ' ');
			if (q != FQ_PASS)
				spfkit__buf_putc(root, spfkit__flat_q_char(q));
			spfkit__buf_printf(root, "include:%s", name);
		}
		first = 0;
		rc = add_record(e->out, name, &b, &other, NULL);
		e->next++;
	}
	spfkit__buf_free(&b);
	return rc;
}

static int root_with_includes(struct emit *e, struct spfkit__buf *root)
{
	size_t s;
	int q, rc;

	spfkit__buf_puts(root, "v=spf1");
	for (s = 0; s < e->m->nsegs; s++) {
		if (e->m->segs[s].opaque) {
			spfkit__buf_putc(root, ' ');
			spfkit__buf_append(root, e->m->segs[s].text, e->m->segs[s].len);
			continue;
		}
		for (q = 0; q < FQ_COUNT; q++) {
			if (skipped(e, s, q) || e->sets[s][q].n == 0)
				continue;
			rc = pack_set(e, (enum flat_q)q, &e->sets[s][q], root);
			if (rc != 0)
				return rc;
		}
	}
	put_tail(e, root);
	return 0;
}

/* The last run's largest set becomes the terminal all, when the runs decide every address. */
int spfkit__flat_final_all(const struct flat_model *m, int *pick)
{
	struct flat_cidrs c = { NULL, 0, 0 };
	size_t best = 0;
	int q, rc = 0;

	*pick = -1;
	if (!m->complete || m->nsegs == 0 || m->segs[m->nsegs - 1].opaque)
		return 0;
	for (q = 0; q < FQ_COUNT && rc == 0; q++) {
		c.n = 0;
		rc = spfkit__flat_set_cidrs(&m->segs[m->nsegs - 1].q[q], &c);
		if (rc == 0 && (*pick < 0 || c.n > best)) {
			*pick = q;
			best = c.n;
		}
	}
	spfkit__flat_cidrs_free(&c);
	return rc;
}

static int make_sets(struct emit *e)
{
	size_t s;
	int q;

	e->sets = spfkit__calloc(NULL, e->m->nsegs ? e->m->nsegs : 1, sizeof(*e->sets));
	if (e->sets == NULL)
		return SPFKIT_ENOMEM;
	for (s = 0; s < e->m->nsegs; s++)
		for (q = 0; q < FQ_COUNT; q++) {
			if (e->m->segs[s].opaque)
				continue;
			if (spfkit__flat_set_cidrs(&e->m->segs[s].q[q], &e->sets[s][q]) != 0 ||
			    spfkit__flat_set_cidrs(&e->m->segs[s].q[q], &e->out->all_blocks) != 0)
				return SPFKIT_ENOMEM;
		}
	return 0;
}

/* The blocks written as ip4:/ip6: terms (the set that became "all" is not). */
static void count_blocks(struct emit *e)
{
	size_t s, i;
	int q;

	for (s = 0; s < e->m->nsegs; s++)
		for (q = 0; q < FQ_COUNT; q++)
			for (i = 0; i < e->sets[s][q].n && !skipped(e, s, q); i++) {
				if (e->sets[s][q].items[i].v6)
					e->out->blocks6++;
				else
					e->out->blocks4++;
			}
}

static void free_sets(struct emit *e)
{
	size_t s;
	int q;

	if (e->sets == NULL)
		return;
	for (s = 0; s < e->m->nsegs; s++)
		for (q = 0; q < FQ_COUNT; q++)
			spfkit__flat_cidrs_free(&e->sets[s][q]);
	spfkit__free(NULL, e->sets);
}

int spfkit__flat_emit(const struct flat_model *m, const struct flat_emit_opts *o,
		      struct flat_output *out, char *err, size_t errlen)
{
	struct emit e;
	struct spfkit__buf root;
	struct flat_others other;
	size_t wire;
	int rc;

	memset(&e, 0, sizeof(e));
	memset(&other, 0, sizeof(other));
	memset(out, 0, sizeof(*out));
	e.m = m;
	e.o = o;
	e.out = out;
	e.next = 1;
	e.err = err;
	e.errlen = errlen;
	err[0] = '\0';
	spfkit__buf_init(&root, NULL, 65536);
	rc = make_sets(&e);
	if (rc == 0)
		rc = spfkit__flat_final_all(m, &e.all_q);
	if (rc == 0) {
		count_blocks(&e);
		others_at(&e, o->domain, &other);
		root_inline(&e, &root);
		if (root.err == 0 && !fits(o->domain, &other, &root)) {
			spfkit__buf_reset(&root);
			rc = root_with_includes(&e, &root);
		}
		if (rc == 0 && root.err != 0)
			rc = root.err;
		if (rc == 0 && !fits(o->domain, &other, &root) && out->n > SPFKIT_LIMIT_DNS_TERMS) {
			snprintf(err, errlen, "the addresses need %zu _spfN records of at most %u "
				 "octets: more lookups than the %u allowed", out->n, ANSWER_MAX,
				 SPFKIT_LIMIT_DNS_TERMS);
			rc = SPFKIT_E2BIG;
		} else if (rc == 0 && !fits(o->domain, &other, &root)) {
			wire = record_wire(spfkit__buf_str(&root), root.len, NULL);
			snprintf(err, errlen, "the root record takes %zu octets with the other TXT "
				 "records at %s, a DNS answer of %zu: over %u and %u (too many terms "
				 "kept as written?)",
				 s34_octets(o->domain, &other, wire), o->domain,
				 answer_octets(o->domain, &other, wire), ANSWER_MAX, LINT_UDP_ANSWER_MAX);
			rc = SPFKIT_E2BIG;
		}
	}
	/* the root first: move it in front of the _spfN records */
	if (rc == 0)
		rc = add_record(out, o->domain, &root, &other, NULL);
	if (rc == 0 && out->n > 1) {
		struct flat_record r = out->recs[out->n - 1];

		memmove(&out->recs[1], &out->recs[0], (out->n - 1) * sizeof(r));
		out->recs[0] = r;
	}
	spfkit__buf_free(&root);
	free_sets(&e);
	if (rc == SPFKIT_ENOMEM && err[0] == '\0')
		snprintf(err, errlen, "out of memory");
	return rc;
}

/* ---- zone text -------------------------------------------------------------- */

void spfkit__flat_zone_line(struct spfkit__buf *b, const struct flat_record *rec, uint32_t ttl)
{
	size_t pos = 0, end, i;

	spfkit__buf_printf(b, "%s. %u IN TXT", rec->name, (unsigned)ttl);
	while (pos < rec->len || pos == 0) {
		end = string_end(rec->text, rec->len, pos);
		spfkit__buf_puts(b, " \"");
		for (i = pos; i < end; i++) {
			unsigned char c = (unsigned char)rec->text[i];

			if (c == '"' || c == '\\')
				spfkit__buf_putc(b, '\\');
			if (c < 0x20 || c > 0x7e)
				spfkit__buf_printf(b, "\\%03u", c);
			else
				spfkit__buf_putc(b, (char)c);
		}
		spfkit__buf_putc(b, '"');
		pos = end;
		if (rec->len == 0)
			break;
	}
	spfkit__buf_putc(b, '\n');
}
