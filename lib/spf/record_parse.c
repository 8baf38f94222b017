/*
 * SPF record parser: RFC 7208 §3.4 (size), §4.5 (version), then the
 * terms (term_parse.c: §4.6.1, §5, §6, with §12's collected ABNF as the
 * law), into one block that holds the record and all it points to.
 *
 * The whole record is checked before anything is evaluated (§4.6: "if
 * there are any syntax errors anywhere in the record, check_host()
 * returns immediately with the result permerror"). The block is sized
 * before the parse: for a cached record an earlier walk over the terms
 * sizes it exactly; in an evaluation's arena a count of SP bytes sizes
 * it, a term per SP (spfkit__record_parse_loose).
 */
#include <stddef.h>
#include <string.h>

#include <spfkit/record.h>

#include "core.h"
#include "macro.h"
#include "reason.h"
#include "record_room.h"
#include "term_parse.h"

/* The record and everything it points to live in `ar`, this struct too. */
struct record_impl {
	struct spfkit_record rec; /* first: a record pointer is an impl pointer */
	struct spfkit__arena ar;
};

/* §4.5: "v=spf1" (any case) followed by a space or the end of the record. */
int spfkit_record_is_spf(const char *txt, size_t len)
{
	/* OR 0x20 lowers exactly the letters 'V', 'S', 'P' and 'F' onto these;
	 * compared as two words, of the same byte order as the constants */
	static const unsigned char want[6] = {'v', '=', 's', 'p', 'f', '1'};
	static const unsigned char fold[6] = {0x20, 0, 0x20, 0x20, 0x20, 0};
	uint32_t w4, want4, fold4;
	uint16_t w2, want2, fold2;

	if (txt == NULL || len < 6)
		return 0;
	memcpy(&w4, txt, 4);
	memcpy(&w2, txt + 4, 2);
	memcpy(&want4, want, 4);
	memcpy(&want2, want + 4, 2);
	memcpy(&fold4, fold, 4);
	memcpy(&fold2, fold + 4, 2);
	return (w4 | fold4) == want4 && (w2 | fold2) == want2 && (len == 6 || txt[6] == ' ');
}

/* What count_terms() finds: the counts that size the arena. */
struct term_map {
	size_t terms; /* runs of non-SP after the version */
	size_t named; /* of them, those that may hold a macro-string */
	size_t pct;   /* their '%' bytes */
};

/*
 * Note in map what the parse of the term [p, end) may allocate: a
 * macro-string (a domain-spec after ':', a modifier's value after '=')
 * takes at most one piece more than twice its '%' bytes. An "ip4:" or
 * "ip6:" term takes none whatever it holds (parse_term() reads those
 * names first), and most terms are those: one word compared, no scan.
 */
static void note_pieces(const char *p, const char *end, struct term_map *map)
{
	const char *q;

	if (spfkit__term_parse_ip_kind((const unsigned char *)p, (const unsigned char *)end) >= 0)
		return;
	q = memchr(p, ':', (size_t)(end - p));
	if (q == NULL)
		q = memchr(p, '=', (size_t)(end - p));
	if (q == NULL || q + 1 == end) /* an empty value has no pieces */
		return;
	map->named++;
	for (q = p; q < end && (q = memchr(q, '%', (size_t)(end - q))) != NULL; q++)
		map->pct++;
}

/* Fill map for the record txt; spfkit__term_parse_next_space() keeps this far cheaper than
 * a loop over every byte. */
static void count_terms(const char *txt, size_t len, struct term_map *map)
{
	const char *p = txt + 6, *end = txt + len, *q;

	map->terms = 0;
	map->named = 0;
	map->pct = 0;
	for (;;) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		q = spfkit__term_parse_next_space(p, end);
		map->terms++;
		note_pieces(p, q, map);
		if (q == end)
			break;
		p = q + 1; /* past the SP that ended the term */
	}
}

static void set_error(struct spfkit_parse_error *err, size_t off, const char *rule,
		      const char *section)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	err->offset = off;
	err->rule = rule;
	err->section = section;
}

/* Offset of the first byte that keeps txt from starting "v=spf1" + SP/end. */
static size_t version_error_offset(const char *txt, size_t len)
{
	static const char v[] = "v=spf1";
	size_t i;

	for (i = 0; i < 6 && i < len; i++)
		if (spfkit__lower((unsigned char)txt[i]) != v[i])
			return i;
	return i;
}

static struct record_impl *record_new(const struct spfkit_allocator *alloc, const char *txt,
				      size_t len, size_t nterms, size_t named, size_t npct,
				      size_t room, size_t later)
{
	struct spfkit__arena ar;
	struct record_impl *r;
	char *text;
	/*
	 * Sized to what the parse takes, as the whole block is charged to
	 * the record cache and the evaluation (a 64 KiB record holds 32,768
	 * terms). A macro-string has at most one piece more than twice its
	 * '%' bytes, in one array per term that holds one, rounded up to 16
	 * bytes; the 64 cover the rounding of the record, text and terms.
	 * Short, the arena would only take a second block, of `later` bytes
	 * or, when that is 0, of the first one's size.
	 */
	size_t size = sizeof(*r) + len + 1 + nterms * sizeof(struct spfkit_term) +
		      named * (sizeof(struct spfkit_macro_piece) + 16) +
		      2 * npct * sizeof(struct spfkit_macro_piece) + 64 + room;

	if (spfkit__arena_init_first(&ar, alloc, later != 0 ? later : size, size) != 0)
		return NULL;
	r = spfkit__arena_alloc(&ar, sizeof(*r));
	text = r != NULL ? spfkit__arena_strndup(&ar, txt, len) : NULL;
	if (text == NULL) {
		spfkit__arena_free(&ar);
		return NULL;
	}
	memset(&r->rec, 0, sizeof(r->rec));
	r->ar = ar; /* from here on the arena lives inside its own first block */
	r->rec.text = text;
	r->rec.len = len;
	r->rec.redirect = -1;
	r->rec.exp = -1;
	if (nterms > 0) {
		r->rec.terms = spfkit__arena_alloc(&r->ar, nterms * sizeof(struct spfkit_term));
		if (r->rec.terms == NULL) {
			spfkit_record_free(&r->rec);
			return NULL;
		}
		/* spfkit__term_parse_all() sets each term as it comes to it */
	}
	return r;
}

int spfkit_record_parse(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			struct spfkit_record **out, struct spfkit_parse_error *err)
{
	void *room;

	return spfkit__record_parse_room(txt, len, alloc, 0, out, err, &room);
}

/* The room's bytes: `fixed`, then, if any, n compact terms; SIZE_MAX
 * when they cannot be counted. */
static size_t room_size(size_t fixed, size_t n)
{
	if (fixed == 0)
		return 0;
	fixed = SPFKIT__ALIGN_UP(fixed);
	if (n > (SIZE_MAX / 2 - fixed) / sizeof(struct spfkit__hot_term))
		return SIZE_MAX;
	return SPFKIT__ALIGN_UP(fixed + sizeof(struct spfkit__hot_term) * n);
}

/* What every parse checks first: 0, or the error to return. */
static int parse_start(const char *txt, size_t len, struct spfkit_record **out,
		       struct spfkit_parse_error *err, void **room)
{
	set_error(err, 0, NULL, NULL);
	*room = NULL;
	if (out == NULL || (txt == NULL && len > 0))
		return SPFKIT_EINVAL;
	*out = NULL;
	if (len > SPFKIT_RECORD_MAX_LEN) {
		set_error(err, SPFKIT_RECORD_MAX_LEN, spfkit_reason_text(SPFKIT_REASON_RECORD_SIZE), "3.4");
		return SPFKIT_E2BIG;
	}
	if (!spfkit_record_is_spf(txt, len)) {
		set_error(err, version_error_offset(txt, len),
			  spfkit_reason_text(SPFKIT_REASON_VERSION), "4.5");
		return SPFKIT_ESYNTAX;
	}
	return 0;
}

/* Parse the text of r, which has room for max terms, `extra` bytes of
 * room after it and `fixed` of them before the compact terms. r is
 * freed on failure. */
static int parse_into(struct record_impl *r, size_t max, size_t fixed, size_t extra,
		      struct spfkit_record **out, struct spfkit_parse_error *err, void **room)
{
	struct spfkit__term_parse tp;

	/* the room fits the block sized for it whatever is taken after it */
	if (extra > 0 && (*room = spfkit__arena_alloc(&r->ar, extra)) == NULL) {
		spfkit_record_free(&r->rec);
		return SPFKIT_ENOMEM;
	}
	memset(&tp, 0, sizeof(tp));
	tp.ar = &r->ar;
	tp.rec = &r->rec;
	if (extra > 0)
		tp.hot = (struct spfkit__hot_term *)(void *)((unsigned char *)*room +
							     SPFKIT__ALIGN_UP(fixed));
	spfkit__cur_init(&tp.c, r->rec.text, r->rec.len);
	spfkit__term_parse_all(&tp, max);
	if (tp.c.err) {
		set_error(err, tp.c.err_off, tp.c.err_why, tp.section);
		if (err != NULL && tp.t != NULL) {
			err->term_offset = tp.t->offset;
			err->term_len = tp.t->len;
		}
		spfkit_record_free(&r->rec);
		*room = NULL;
		return tp.c.err;
	}
	*out = &r->rec;
	return 0;
}

int spfkit__record_parse_room(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			      size_t fixed, struct spfkit_record **out,
			      struct spfkit_parse_error *err, void **room)
{
	struct record_impl *r;
	struct term_map map;
	size_t extra;
	int rc = parse_start(txt, len, out, err, room);

	if (rc != 0)
		return rc;
	count_terms(txt, len, &map);
	if (map.terms > SPFKIT_RECORD_MAX_TERMS) { /* unreachable within the length cap */
		set_error(err, 0, spfkit_reason_text(SPFKIT_REASON_TERM_COUNT), "3.4");
		return SPFKIT_E2BIG;
	}
	extra = room_size(fixed, map.terms);
	if (extra == SIZE_MAX)
		return SPFKIT_ENOMEM;
	r = record_new(alloc, txt, len, map.terms, map.named, map.pct, extra, 0);
	if (r == NULL)
		return SPFKIT_ENOMEM;
	return parse_into(r, map.terms, fixed, extra, out, err, room);
}

#ifdef SPFKIT__HAVE_SSE2
static __m128i load16(const char *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* The sum of the 16 byte counters of sum. */
static size_t sum_bytes(__m128i sum)
{
	sum = _mm_sad_epu8(sum, _mm_setzero_si128());
	return (size_t)_mm_cvtsi128_si32(sum) + (size_t)_mm_extract_epi16(sum, 4);
}
#endif

/* SP bytes in [p, end): at least one before each term. SSE2 counts by
 * taking the compare's -1 per SP from 16 byte counters, summed before
 * they wrap; the last bytes are read again from the end, those already
 * counted masked off. */
static size_t count_spaces(const char *p, const char *end)
{
	size_t n = 0;

#ifdef SPFKIT__HAVE_SSE2
	static const unsigned char last[32] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	const __m128i sp = _mm_set1_epi8(' ');
	__m128i sum;
	int k;

	if (end - p >= 16) {
		do { /* 63 rounds of 4 add at most 252 to a counter */
			__m128i a = _mm_setzero_si128(), b = _mm_setzero_si128();

			for (k = 0; k < 63 && end - p >= 64; k++, p += 64) {
				a = _mm_sub_epi8(a, _mm_cmpeq_epi8(load16(p), sp));
				b = _mm_sub_epi8(b, _mm_cmpeq_epi8(load16(p + 16), sp));
				a = _mm_sub_epi8(a, _mm_cmpeq_epi8(load16(p + 32), sp));
				b = _mm_sub_epi8(b, _mm_cmpeq_epi8(load16(p + 48), sp));
			}
			n += sum_bytes(a) + sum_bytes(b);
		} while (end - p >= 64);
		sum = _mm_setzero_si128();
		for (; end - p >= 16; p += 16)
			sum = _mm_sub_epi8(sum, _mm_cmpeq_epi8(load16(p), sp));
		sum = _mm_sub_epi8(sum, _mm_and_si128(_mm_cmpeq_epi8(load16(end - 16), sp),
						      load16((const char *)last + (end - p))));
		return n + sum_bytes(sum);
	}
#endif
	for (; p < end; p++)
		n += *p == ' ';
	return n;
}

/*
 * The block holds a term per SP byte, more than it needs only where SPs
 * run together, and LOOSE_PIECES bytes of macro pieces (a few plain
 * domain-specs); more take a block of LOOSE_PIECES of their own. No walk
 * over every term first.
 */
#define LOOSE_PIECES 256

int spfkit__record_parse_loose(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			       size_t fixed, struct spfkit_record **out,
			       struct spfkit_parse_error *err, void **room)
{
	struct record_impl *r;
	size_t max, extra;
	int rc = parse_start(txt, len, out, err, room);

	if (rc != 0)
		return rc;
	max = count_spaces(txt + 6, txt + len);
	extra = room_size(fixed, max);
	if (extra == SIZE_MAX)
		return SPFKIT_ENOMEM;
	r = record_new(alloc, txt, len, max, 0, 0, extra + LOOSE_PIECES, LOOSE_PIECES);
	if (r == NULL)
		return SPFKIT_ENOMEM;
	return parse_into(r, max, fixed, extra, out, err, room);
}

void spfkit__record_parse_rebind(struct spfkit_record *rec, const struct spfkit_allocator *alloc)
{
	((struct record_impl *)rec)->ar.alloc = alloc;
}

void spfkit_record_free(struct spfkit_record *rec)
{
	struct spfkit__arena ar;

	if (rec == NULL)
		return;
	/* copy the arena out first: the record lives inside it */
	ar = ((struct record_impl *)rec)->ar;
	spfkit__arena_free(&ar);
}
