/*
 * The question table of one evaluation: every DNS question asked, in
 * order, with its answer once it came. need() is the evaluator's only way
 * to get DNS data; repeated questions share one entry.
 */
#include <string.h>

#include "domain.h"
#include "eval_int.h"

/* Handed out when the table is full, so callers see a plain DNS failure. */
static const struct query query_cap_reached = {
	.ans = {.status = SPFKIT_DNS_TEMPFAIL, .detail = spfkit__reason_texts[SPFKIT_REASON_DNS_QUESTIONS]},
	.state = Q_DONE,
};

int spfkit__query_answer_void(const struct spfkit_dns_answer *a)
{
	return a->status == SPFKIT_DNS_NODATA || a->status == SPFKIT_DNS_NXDOMAIN;
}

static struct query *query_find(struct spfkit_eval *ev, uint16_t type, const char *name,
				size_t len, uint64_t hash)
{
	size_t i;

	for (i = 0; i < ev->nqueries; i++) {
		struct query *q = ev->queries[i];

		if (q->hash == hash && q->type == type &&
		    spfkit__memcaseeq(q->name, q->name_len, name, len))
			return q;
	}
	return NULL;
}

static struct query *query_add(struct spfkit_eval *ev, uint16_t type, const char *name,
			       size_t len, uint64_t hash)
{
	struct query *q;

	if (ev->nqueries == ev->cap_queries) {
		size_t cap = ev->cap_queries * 2;
		struct query **grown = spfkit__alloc(ev->ctx->alloc, cap * sizeof(*grown));

		if (grown == NULL)
			return NULL;
		memcpy(grown, ev->queries, ev->nqueries * sizeof(*grown));
		if (ev->queries != ev->queries_first)
			spfkit__free(ev->ctx->alloc, ev->queries);
		ev->queries = grown;
		ev->cap_queries = cap;
	}
	/* the name right after the query, in one block */
	q = len < SIZE_MAX - sizeof(*q) ? spfkit__arena_alloc(&ev->arena, sizeof(*q) + len + 1)
					: NULL;
	if (q == NULL)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->name = (char *)(q + 1);
	memcpy(q->name, name, len);
	q->name[len] = '\0';
	q->name_len = len;
	q->hash = hash;
	q->type = type;
	q->state = Q_NEW;
	ev->queries[ev->nqueries++] = q;
	return q;
}

/* A record from the memo: the TXT records keep_record_only() kept, the
 * SPF one from the cache (held at no cost to rec_bytes: it is cached). */
static int memo_record(struct spfkit_eval *ev, struct query *q, const struct spfkit__record_memo *m)
{
	struct spfkit_dns_rr *rrs;
	uint32_t i;

	rrs = spfkit__arena_alloc(&ev->arena, m->txt_count * sizeof(*rrs));
	if (rrs == NULL) {
		spfkit__record_cache_release(ev->ctx->records, m->entry);
		return 0; /* asked as usual */
	}
	memset(rrs, 0, m->txt_count * sizeof(*rrs));
	for (i = 0; i < m->txt_count; i++) {
		rrs[i].type = SPFKIT_RR_TXT;
		rrs[i].ttl = m->ttl;
		rrs[i].data = (const unsigned char *)"";
	}
	rrs[m->txt_at].data = (const unsigned char *)m->entry->text;
	rrs[m->txt_at].len = m->entry->len;
	q->ans.rrs = rrs;
	q->ans.count = m->txt_count;
	q->rce = m->entry;
	q->rec_count = 1;
	q->rec_rr = &rrs[m->txt_at];
	q->rec_state = m->entry->rc == 0 ? REC_OK : REC_INVALID;
	return 1;
}

/*
 * The record memo (spfkit_config.record_memo): a question the context saw
 * answered, within that answer's TTL, is answered as then, without being
 * asked. Counted as asked, so the counters are the same.
 */
static void memo_fill(struct spfkit_eval *ev, struct query *q)
{
	struct spfkit__record_memo m;

	if (!spfkit__record_memo_get(ev->ctx->records, q->type, q->name, q->name_len, q->hash,
				     ev->now, &ev->arena, &m))
		return;
	if (m.entry != NULL) {
		if (!memo_record(ev, q, &m))
			return;
		q->ans.status = SPFKIT_DNS_OK;
	} else {
		q->ans.status = m.status;
		q->ans.rrs = m.rrs;
		q->ans.count = m.count;
	}
	q->ans.ttl = m.ttl;
	q->state = Q_DONE;
	ev->result.queries++;
	ev->result.memo_answers++;
}

/*
 * Remember what an answer held (memo_fill()): the record keep_record_only()
 * kept, by the cache entry (a record parsed for this evaluation alone is
 * not remembered: the answer now lacks its other strings), or the answer
 * as kept (a temporary failure is not remembered).
 */
static void memo_put(struct spfkit_eval *ev, const struct query *q, int record_kept)
{
	if (record_kept && q->rce->cached)
		spfkit__record_memo_put(ev->ctx->records, q->rce, q->name, q->name_len, q->hash,
					ev->now, q->ans.ttl, (uint32_t)q->ans.count,
					(uint32_t)(q->rec_rr - q->ans.rrs));
	else if (!record_kept)
		spfkit__record_memo_put_answer(ev->ctx->records, q->type, q->name, q->name_len,
					       q->hash, ev->now, &q->ans);
}

struct query *spfkit__query_file(struct spfkit_eval *ev, uint16_t type, const char *name,
	size_t len,
			   unsigned flags, unsigned level)
{
	uint64_t hash;
	struct query *q;

	len = spfkit__domain_trim(name, len);
	hash = spfkit__namehash(name, len);
	q = query_find(ev, type, name, len, hash);
	if (q == NULL && ev->nqueries < EVAL_MAX_QUERIES) {
		q = query_add(ev, type, name, len, hash);
		if (q != NULL)
			q->level = (uint16_t)(level > 0xffff ? 0xffff : level);
		if (q != NULL && ev->memo) {
			memo_fill(ev, q);
			/* lookahead walks into what it files; strict's finds must be walked */
			ev->memo_unwalked |= q->state == Q_DONE && (flags & QF_STRICT);
		}
	}
	if (q != NULL)
		q->flags |= (uint8_t)flags;
	return q;
}

/* spfkit__query_file() for strict evaluation, through the replay memo (eval_int.h). */
static struct query *need_file(struct spfkit_eval *ev, uint16_t type, const char *name, size_t len,
			       unsigned flags, unsigned level)
{
	unsigned slot = (unsigned)((((uintptr_t)name >> 3) ^ len ^ type) & (EVAL_NEED_MEMO - 1));
	struct need_memo *m = &ev->need_memo[slot];
	struct query *q;

	if ((ev->need_valid >> slot & 1) && m->name == name && m->len == len && m->type == type) {
		m->q->flags |= (uint8_t)flags;
		return m->q;
	}
	q = spfkit__query_file(ev, type, name, len, flags, level);
	if (q != NULL) {
		m->name = name;
		m->len = len;
		m->type = type;
		m->q = q;
		ev->need_valid |= 1u << slot;
	}
	return q;
}

const struct query *spfkit__query_need(struct spfkit_eval *ev, struct frame *f, uint16_t type,
				 const char *name, size_t len, unsigned flags, int *fresh, int *nomem)
{
	unsigned level = (unsigned)f->term_level + 1;
	struct query *q;

	*nomem = 0;
	*fresh = 0;
	q = need_file(ev, type, name, len, flags | QF_STRICT, level);
	if (q == NULL) {
		if (ev->nqueries >= EVAL_MAX_QUERIES)
			return &query_cap_reached;
		*nomem = 1;
		return NULL;
	}
	if (q->strict_level == 0)
		q->strict_level = (uint16_t)(level > 0xffff ? 0xffff : level);
	if (q->state != Q_DONE)
		return NULL;
	f->uses++;
	if (q->strict_level > f->term_level)
		f->term_level = q->strict_level;
	if (q->strict_level > ev->result.depth)
		ev->result.depth = q->strict_level;
	*fresh = f->uses > f->counted;
	if (*fresh)
		f->counted = f->uses;
	return q;
}

int spfkit__query_emit(struct spfkit_eval *ev, struct spfkit_question *out)
{
	struct spfkit_trace_event e;
	struct query *q;

	while (ev->next_emit < ev->nqueries && ev->queries[ev->next_emit]->state != Q_NEW)
		ev->next_emit++;
	if (ev->next_emit == ev->nqueries)
		return 0;
	q = ev->queries[ev->next_emit];
	q->state = Q_SENT;
	out->id = (uint32_t)ev->next_emit + 1;
	out->type = q->type;
	out->name = q->name;
	out->name_len = q->name_len;
	ev->result.queries++;
	if (ev->trace != NULL) {
		memset(&e, 0, sizeof(e));
		e.kind = SPFKIT_TRACE_QUERY;
		e.depth = ev->depth ? ev->depth - 1 : 0;
		e.domain = ev->depth ? ev->frames[ev->depth - 1].domain : NULL;
		e.name = q->name;
		e.qtype = q->type;
		e.query_id = out->id;
		spfkit__eval_trace(ev, &e);
	}
	return 1;
}

/* Copy the records of the asked type; the backend's memory is gone after the call. */
static int copy_records(struct spfkit_eval *ev, struct query *q, const struct spfkit_dns_answer *a)
{
	struct spfkit_dns_rr *rrs;
	size_t i, n = 0;

	rrs = spfkit__arena_alloc(&ev->arena, a->count * sizeof(*rrs));
	if (rrs == NULL)
		return SPFKIT_ENOMEM;
	for (i = 0; i < a->count; i++) {
		const struct spfkit_dns_rr *rr = &a->rrs[i];
		unsigned char *data;

		if (rr->type != q->type)
			continue;
		data = spfkit__arena_alloc(&ev->arena, rr->len + 1);
		if (data == NULL)
			return SPFKIT_ENOMEM;
		if (rr->len > 0)
			memcpy(data, rr->data, rr->len);
		data[rr->len] = '\0';
		rrs[n] = *rr;
		rrs[n].data = data;
		n++;
	}
	q->ans.rrs = rrs;
	q->ans.count = n;
	/* NOERROR with nothing of the asked type is "no data" (§4.6.4 void). */
	q->ans.status = n > 0 ? SPFKIT_DNS_OK : SPFKIT_DNS_NODATA;
	return 0;
}

int spfkit__query_given(struct spfkit_eval *ev, const char *text, size_t len)
{
	const struct frame *top = &ev->frames[0];
	struct spfkit_dns_rr *rr;
	struct query *q;

	q = spfkit__arena_alloc(&ev->arena, sizeof(*q));
	rr = spfkit__arena_alloc(&ev->arena, sizeof(*rr));
	if (q == NULL || rr == NULL)
		return SPFKIT_ENOMEM;
	memset(q, 0, sizeof(*q));
	memset(rr, 0, sizeof(*rr));
	rr->type = SPFKIT_RR_TXT;
	rr->data = (const unsigned char *)spfkit__arena_strndup(&ev->arena, text, len);
	if (rr->data == NULL)
		return SPFKIT_ENOMEM;
	rr->len = len;
	q->name = (char *)(uintptr_t)top->domain;
	q->name_len = top->domain_len;
	q->type = SPFKIT_RR_TXT;
	q->state = Q_DONE;
	q->flags = QF_RECORD | QF_STRICT;
	q->level = 0; /* no round trip: depth counts only the answers asked for */
	q->ans.status = SPFKIT_DNS_OK;
	q->ans.rrs = rr;
	q->ans.count = 1;
	ev->given = q;
	return 0;
}

/*
 * What holding q's record adds to memory: nothing for an entry the
 * record cache keeps (its bytes are within the context's budget,
 * record_cache_bytes, however many evaluations hold it), all of it for
 * one the cache could not keep. `cached` never changes once the entry
 * is handed out (record_cache.c).
 */
static size_t held_bytes(const struct spfkit__record_cache_entry *e)
{
	return e->cached ? 0 : e->bytes;
}

/* Parse (or find in the cache) the record text for q and count what it
 * holds against the evaluation. Without a cache it is parsed in the
 * evaluation's arena while the records' share of it lasts (eval_int.h).
 * 0 or SPFKIT_ENOMEM. */
static int hold_record(struct spfkit_eval *ev, struct query *q, const char *text, size_t len)
{
	int rc = ev->ctx->records != NULL
		     ? spfkit__record_cache_get(ev->ctx->records, text, len,
						&ev->arena_records.alloc, &q->rce)
		     : spfkit__record_cache_private(ev->ctx->alloc, &ev->arena_records.alloc, text,
						    len,
						    &q->rce);
	if (rc != 0)
		return SPFKIT_ENOMEM;
	ev->rec_bytes += held_bytes(q->rce);
	if (ev->rec_bytes > ev->rec_peak)
		ev->rec_peak = ev->rec_bytes;
	return 0;
}

/*
 * May q's record of `len` bytes be parsed now? Always once strict
 * evaluation asked for it; for lookahead alone only while what the
 * evaluation holds stays within EVAL_SPEC_RECORD_BYTES, so speculation
 * adds at most that to what strict evaluation holds. A record not parsed
 * now is parsed from its answer when strict evaluation reaches it.
 */
static int may_parse(const struct spfkit_eval *ev, const struct query *q, size_t len)
{
	if (q->flags & QF_STRICT)
		return 1;
	return ev->rec_bytes <= EVAL_SPEC_RECORD_BYTES &&
	       EVAL_RECORD_COST(len) <= EVAL_SPEC_RECORD_BYTES - ev->rec_bytes;
}

void spfkit__query_drop_record(struct spfkit_eval *ev, struct query *q)
{
	if (q->rce == NULL)
		return;
	ev->rec_bytes -= held_bytes(q->rce);
	spfkit__record_cache_release(ev->ctx->records, q->rce);
	q->rce = NULL;
}

/*
 * The answer keeps the record text apart from the parsed record that
 * holds it (keep_record_only() points into the cache entry): a copy of
 * the answer's records, the SPF one's text in the arena.
 */
static int unshare_text(struct spfkit_eval *ev, struct query *q)
{
	size_t at = (size_t)(q->rec_rr - q->ans.rrs);
	struct spfkit_dns_rr *rrs;
	char *text;

	if (q->rec_rr->data != (const unsigned char *)q->rce->text)
		return 0;
	rrs = spfkit__arena_alloc(&ev->arena, q->ans.count * sizeof(*rrs));
	text = spfkit__arena_strndup(&ev->arena, q->rce->text, q->rce->len);
	if (rrs == NULL || text == NULL)
		return SPFKIT_ENOMEM;
	memcpy(rrs, q->ans.rrs, q->ans.count * sizeof(*rrs));
	rrs[at].data = (const unsigned char *)text;
	q->ans.rrs = rrs;
	q->rec_rr = &rrs[at];
	return 0;
}

void spfkit__query_record_done(struct spfkit_eval *ev, const char *domain, size_t len,
			       const struct spfkit_record *rec)
{
	struct query *q;

	len = spfkit__domain_trim(domain, len);
	q = query_find(ev, SPFKIT_RR_TXT, domain, len, spfkit__namehash(domain, len));
	/* a record the cache keeps costs nothing more while held: keep it
	 * (no copy of its text, no parse when the domain comes up again) */
	if (q == NULL || q->rec_state != REC_OK || q->rce->rec != rec || q->rce->cached ||
	    unshare_text(ev, q) != 0)
		return; /* kept: only memory, given back with the evaluation */
	spfkit__query_drop_record(ev, q);
	q->rec_state = REC_UNKNOWN;
	/* lookahead's budget applies again until strict evaluation asks */
	q->flags &= (uint8_t)~QF_STRICT;
}

void spfkit__query_record_bytes(const struct spfkit_eval *ev, size_t *now, size_t *peak)
{
	*now = ev->rec_bytes;
	*peak = ev->rec_peak;
}

/* §4.5: of the TXT records, exactly one starting "v=spf1" counts. May
 * run again after SPFKIT_ENOMEM: it starts from scratch each time. */
int spfkit__query_record(struct spfkit_eval *ev, struct query *q)
{
	size_t i;

	if (q->rec_state != REC_UNKNOWN || q->state != Q_DONE)
		return 0;
	q->rec_count = 0;
	for (i = 0; i < q->ans.count; i++) {
		const struct spfkit_dns_rr *rr = &q->ans.rrs[i];

		if (spfkit_record_is_spf((const char *)rr->data, rr->len)) {
			q->rec_count++;
			q->rec_rr = rr;
		}
	}
	if (q->rec_count != 1) {
		q->rec_state = q->rec_count == 0 ? REC_NONE : REC_MULTIPLE;
		return 0;
	}
	if (!may_parse(ev, q, q->rec_rr->len))
		return 0; /* REC_UNKNOWN: lookahead stops here */
	if (hold_record(ev, q, (const char *)q->rec_rr->data, q->rec_rr->len) != 0)
		return SPFKIT_ENOMEM;
	q->rec_state = q->rce->rc == 0 ? REC_OK : REC_INVALID;
	return 0;
}

static void trace_answer(struct spfkit_eval *ev, uint32_t id, const struct query *q)
{
	struct spfkit_trace_event e;

	memset(&e, 0, sizeof(e));
	e.kind = SPFKIT_TRACE_ANSWER;
	e.depth = ev->depth ? ev->depth - 1 : 0;
	e.domain = ev->depth ? ev->frames[ev->depth - 1].domain : NULL;
	e.name = q->name;
	e.qtype = q->type;
	e.query_id = id;
	e.answer = &q->ans;
	spfkit__eval_trace(ev, &e);
}

/*
 * A TXT answer asked for its SPF record, holding exactly one: the record's
 * bytes go into the record cache and the answer keeps only a pointer to
 * them, not a copy of every string. The other TXT records' bytes can only
 * matter to an exp= lookup of the same name, and §6.2 wants exactly one
 * record there, which then is this one. Returns 1 when done, 0 when the
 * answer should be copied as usual.
 */
static int keep_record_only(struct spfkit_eval *ev, struct query *q,
			    const struct spfkit_dns_answer *a)
{
	const struct spfkit_dns_rr *spf = NULL;
	struct spfkit_dns_rr *rrs;
	size_t i, n = 0, found = 0, at = 0;

	for (i = 0; i < a->count; i++) {
		if (a->rrs[i].type != SPFKIT_RR_TXT)
			continue;
		if (spfkit_record_is_spf((const char *)a->rrs[i].data, a->rrs[i].len)) {
			found++;
			spf = &a->rrs[i];
			at = n;
		}
		n++;
	}
	if (found != 1 || !may_parse(ev, q, spf->len))
		return 0;
	rrs = spfkit__arena_alloc(&ev->arena, n * sizeof(*rrs));
	if (rrs == NULL || hold_record(ev, q, (const char *)spf->data, spf->len) != 0)
		return 0;
	for (i = 0, n = 0; i < a->count; i++) {
		if (a->rrs[i].type != SPFKIT_RR_TXT)
			continue;
		rrs[n] = a->rrs[i];
		rrs[n].data = (const unsigned char *)"";
		rrs[n++].len = 0;
	}
	rrs[at].data = (const unsigned char *)q->rce->text;
	rrs[at].len = q->rce->len;
	q->ans.rrs = rrs;
	q->ans.count = n;
	q->rec_count = 1;
	q->rec_rr = &rrs[at];
	q->rec_state = q->rce->rc == 0 ? REC_OK : REC_INVALID;
	return 1;
}

/*
 * An answer from the caller, checked before any byte of it is read: a
 * records pointer for every count, data for every length, and sizes
 * whose copies (count records, len + 1 bytes each) cannot wrap around.
 */
static int answer_usable(const struct spfkit_dns_answer *a)
{
	size_t i;

	if (a->status != SPFKIT_DNS_OK || a->count == 0)
		return 1;
	if (a->rrs == NULL || a->count > SIZE_MAX / sizeof(struct spfkit_dns_rr))
		return 0;
	for (i = 0; i < a->count; i++)
		if ((a->rrs[i].data == NULL && a->rrs[i].len > 0) || a->rrs[i].len == SIZE_MAX)
			return 0;
	return 1;
}

int spfkit__query_store_answer(struct spfkit_eval *ev, uint32_t id,
	const struct spfkit_dns_answer *a)
{
	struct query *q;
	int rc = 0, record_kept = 0;

	if (id == 0 || id > ev->nqueries || ev->queries[id - 1]->state != Q_SENT)
		return SPFKIT_ENOTFOUND;
	if (!answer_usable(a))
		return SPFKIT_EINVAL;
	q = ev->queries[id - 1];
	memset(&q->ans, 0, sizeof(q->ans));
	q->ans.ttl = a->ttl;
	q->ans.status = a->status;
	if (a->status == SPFKIT_DNS_OK && a->count > 0 && a->rrs != NULL) {
		/* a trace shows every string of the answer: then copy them all */
		if (q->type != SPFKIT_RR_TXT || !(q->flags & QF_RECORD) || ev->trace != NULL ||
		    !keep_record_only(ev, q, a))
			rc = copy_records(ev, q, a);
		else
			record_kept = 1;
	}
	else if (a->status == SPFKIT_DNS_OK)
		q->ans.status = SPFKIT_DNS_NODATA;
	else if (a->status == SPFKIT_DNS_TEMPFAIL)
		q->ans.detail = a->detail ? a->detail : spfkit__reason_texts[SPFKIT_REASON_DNS_ERROR];
	else if (a->status != SPFKIT_DNS_NODATA && a->status != SPFKIT_DNS_NXDOMAIN)
		q->ans.status = SPFKIT_DNS_TEMPFAIL;
	if (rc != 0) {
		/*
		 * Out of memory is the caller's to handle, never an SPF result
		 * (eval.h): the answer is not kept and the question stays open,
		 * so the same answer may be handed in again. What the arena
		 * handed out meanwhile is only given back with the evaluation.
		 */
		spfkit__query_drop_record(ev, q);
		memset(&q->ans, 0, sizeof(q->ans));
		q->rec_state = REC_UNKNOWN;
		q->rec_count = 0;
		q->rec_rr = NULL;
		return rc;
	}
	q->state = Q_DONE;
	ev->progress = 1;
	if (ev->memo)
		memo_put(ev, q, record_kept);
	if (ev->trace != NULL)
		trace_answer(ev, id, q);
	/*
	 * Lookahead only asks early; if it runs out of memory, strict
	 * evaluation asks the same questions when it needs them and reports
	 * SPFKIT_ENOMEM itself then. The answer is kept either way.
	 */
	if (ev->lookahead && !ev->done)
		(void)spfkit__lookahead(ev, q);
	return 0;
}
