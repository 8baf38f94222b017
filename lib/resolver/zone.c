/*
 * The in-memory zone of include/spfkit/zone.h.
 *
 * Layout: an open-addressing hash table of names (linear probing, never
 * more than half full) whose nodes hold one contiguous array of records
 * per type. A lookup is one hash, a probe or two and a pointer into that
 * array: no allocation, no copy, no scan over names. Node structs, names
 * and record data live in an arena released with the zone; the per-type
 * arrays grow with realloc while the zone is filled and never change
 * while it is read, so concurrent lookups need no lock.
 *
 * Names are raw bytes separated by dots, compared ignoring ASCII case,
 * with one final dot ignored. A name that does not exist is answered
 * from the wildcard "*.<closest encloser>" when the zone has one (RFC
 * 4592 §3.3.1), as an authoritative server does: real zone files
 * publish "*.example.com TXT v=spf1 -all" (RFC 7208 §3.5).
 */
#include <string.h>

#include <spfkit/reason.h>

#include "zone_int.h"

/* Types the zone stores, as indexes into struct znode.sets. T_TXT and
 * T_TXTS hold the same records in lockstep (index i of one is index i of
 * the other): joined, and as the character-strings were written. */
enum { T_A, T_CNAME, T_PTR, T_MX, T_TXT, T_AAAA, T_SPF, T_TXTS, T_COUNT };

static int type_index(uint16_t type)
{
	switch (type) {
	case SPFKIT_RR_A: return T_A;
	case SPFKIT_RR_CNAME: return T_CNAME;
	case SPFKIT_RR_PTR: return T_PTR;
	case SPFKIT_RR_MX: return T_MX;
	case SPFKIT_RR_TXT: return T_TXT;
	case SPFKIT_RR_AAAA: return T_AAAA;
	case SPFKIT_RR_SPF: return T_SPF;
	case SPFKIT_RR_TXT_STRINGS: return T_TXTS;
	}
	return -1;
}

/* 16 bytes, eight per name: at most SPFKIT_ZONE_MAX_RRSET records a set */
struct zset {
	struct spfkit_dns_rr *rrs; /* contiguous: handed out as answer->rrs */
	uint16_t count;
	uint16_t cap;
	uint32_t min_ttl; /* kept on add so a lookup need not scan */
};
_Static_assert(SPFKIT_ZONE_MAX_RRSET <= UINT16_MAX, "a set's count fits its uint16_t");

#define ZN_NAMED 1u   /* added by name, not only there because a name below exists */
#define ZN_TIMEOUT 2u /* spfkit_zone_add_timeout() */

struct znode {
	uint64_t hash;
	const char *name; /* lower case, no final dot */
	size_t len;
	unsigned flags;
	struct zset sets[T_COUNT];
};

struct zslot {
	uint64_t hash; /* compared before the name, saves a pointer chase */
	struct znode *node;
};

struct spfkit_zone {
	const struct spfkit_allocator *alloc;
	struct spfkit__arena arena;
	struct zslot *slots;
	size_t nslots; /* 0 or a power of two */
	size_t nnodes; /* every name, empty non-terminals included */
	size_t nnamed; /* what spfkit_zone_size() reports */
	int has_wildcard; /* some name has a "*" label first: lookups look for it */
	size_t bytes;     /* held for names, records and the index: see zone_charge() */
	size_t max_bytes; /* SPFKIT_ZONE_MAX_MEMORY unless a test set less */
};


/* Data of zero length still needs a non-NULL pointer for callers. */
static const unsigned char zone_empty_data[1];

static int fail_why(const char **why, const char *text, int err)
{
	if (why != NULL)
		*why = text;
	return err;
}

const char spfkit__zone_why_memory[] = "the zone would hold more than its memory limit";

/* Bytes the zone is about to take (node, data, record array, index), all
 * counted against its limit: a file of small records takes 15 to 20
 * times its size, so the file's own cap does not bound the memory. */
static int zone_charge(struct spfkit_zone *z, size_t n, const char **why)
{
	if (n > z->max_bytes - z->bytes)
		return fail_why(why, spfkit__zone_why_memory, SPFKIT_E2BIG);
	z->bytes += n;
	return 0;
}

/* ---- names -------------------------------------------------------- */

size_t spfkit__zone_name_check(const char *name, size_t len, const char **why)
{
	size_t i, label = 0;

	if (len > 0 && name == NULL)
		return (size_t)fail_why(why, "no name", 0);
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0)
		return (size_t)fail_why(why, "empty name", 0);
	if (len > SPFKIT__ZONE_NAME_MAX)
		return (size_t)fail_why(why, "name longer than 253 bytes", 0);
	for (i = 0; i < len; i++) {
		if (name[i] != '.') {
			if (++label > SPFKIT__ZONE_LABEL_MAX)
				return (size_t)fail_why(why, "label longer than 63 bytes", 0);
			continue;
		}
		if (label == 0)
			return (size_t)fail_why(why, "empty label", 0);
		label = 0;
	}
	if (label == 0)
		return (size_t)fail_why(why, "empty label", 0);
	return len;
}

/* ---- hash table --------------------------------------------------- */

/*
 * ASCII lower case of 8 bytes at once: a byte gets 0x20 when it is in
 * 'A'..'Z'. Adding to the low 7 bits of each byte cannot carry into the
 * next byte, so each sum's top bit tells ">= 'A'" and ">= '['"; bytes
 * with their own top bit set are left alone.
 */
static uint64_t lower8(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full, top = 0x8080808080808080ull;
	uint64_t h = x & low7;
	uint64_t upper = (h + 0x3f3f3f3f3f3f3f3full) & ~(h + 0x2525252525252525ull) & ~x & top;

	return x | (upper >> 2);
}

/*
 * Stored names are lower case already: fold only the asked one, a word
 * at a time (a lookup is on the evaluator's hot path), the last word
 * read again from the end rather than byte by byte.
 */
static int name_eq(const struct znode *n, const char *name, size_t len)
{
	uint64_t a, b;
	size_t i = 0;

	if (n->len != len)
		return 0;
	if (len >= 8) {
		for (; len - i > 8; i += 8) {
			memcpy(&a, n->name + i, 8);
			memcpy(&b, name + i, 8);
			if (a != lower8(b))
				return 0;
		}
		memcpy(&a, n->name + len - 8, 8);
		memcpy(&b, name + len - 8, 8);
		return a == lower8(b);
	}
	for (; i < len; i++)
		if (n->name[i] != (char)spfkit__lower((unsigned char)name[i]))
			return 0;
	return 1;
}

static struct znode *zone_find(const struct spfkit_zone *z, const char *name, size_t len,
			       uint64_t hash)
{
	size_t mask, i;

	if (z->nslots == 0)
		return NULL;
	mask = z->nslots - 1;
	/* Ends: the table is never more than half full. */
	for (i = (size_t)hash & mask; z->slots[i].node != NULL; i = (i + 1) & mask) {
		struct znode *n = z->slots[i].node;

		if (z->slots[i].hash == hash && name_eq(n, name, len))
			return n;
	}
	return NULL;
}

static void slots_put(struct zslot *slots, size_t nslots, struct znode *n)
{
	size_t mask = nslots - 1, i;

	for (i = (size_t)n->hash & mask; slots[i].node != NULL; i = (i + 1) & mask)
		;
	slots[i].hash = n->hash;
	slots[i].node = n;
}

/* Room for `more` new names at load <= 1/2; all or nothing. */
static int zone_reserve(struct spfkit_zone *z, size_t more, const char **why)
{
	size_t want = z->nslots ? z->nslots : 64, i;
	struct zslot *ns;

	if (more > SIZE_MAX / 4 - z->nnodes)
		return SPFKIT_ENOMEM;
	while ((z->nnodes + more) * 2 > want)
		want *= 2;
	if (want == z->nslots)
		return 0;
	if (zone_charge(z, (want - z->nslots) * sizeof(*ns), why) != 0)
		return SPFKIT_E2BIG;
	ns = spfkit__calloc(z->alloc, want, sizeof(*ns));
	if (ns == NULL) {
		z->bytes -= (want - z->nslots) * sizeof(*ns);
		return SPFKIT_ENOMEM;
	}
	for (i = 0; i < z->nslots; i++)
		if (z->slots[i].node != NULL)
			slots_put(ns, want, z->slots[i].node);
	spfkit__free(z->alloc, z->slots);
	z->slots = ns;
	z->nslots = want;
	return 0;
}

static struct znode *node_new(struct spfkit_zone *z, const char *name, size_t len)
{
	struct znode *n = spfkit__arena_alloc(&z->arena, sizeof(*n) + len + 1);
	char *s;
	size_t i;

	if (n == NULL)
		return NULL;
	memset(n, 0, sizeof(*n));
	s = (char *)(n + 1);
	for (i = 0; i < len; i++)
		s[i] = (char)spfkit__lower((unsigned char)name[i]);
	s[len] = '\0';
	n->name = s;
	n->len = len;
	n->hash = spfkit__namehash(s, len);
	return n;
}

/* At most one node per label: 253 bytes hold at most 127 labels. */
#define ZONE_MAX_LABELS (SPFKIT__ZONE_NAME_MAX / 2 + 1)

/*
 * The nodes an add needs: the name's own node and, for each missing name
 * above it, an empty one, so that a name existing only because a name
 * below it exists answers NODATA, not NXDOMAIN (RFC 8020 §2). Nodes are
 * made unlinked and the table is grown first; zone_commit() then links
 * them and cannot fail, so an ENOMEM leaves the zone as it was (only
 * unreachable arena bytes, freed with the zone).
 */
struct zprep {
	struct znode *leaf;
	struct znode *fresh[ZONE_MAX_LABELS];
	size_t nfresh;
};

static int zone_prepare(struct spfkit_zone *z, const char *name, size_t len, struct zprep *p,
			const char **why)
{
	size_t off = 0;
	const char *dot;
	struct znode *n;

	p->nfresh = 0;
	p->leaf = NULL;
	for (;;) {
		n = zone_find(z, name + off, len - off, spfkit__namehash(name + off, len - off));
		if (n != NULL)
			break; /* it exists, so every name above it does too */
		if (p->nfresh == ZONE_MAX_LABELS)
			return SPFKIT_EINVAL; /* unreachable for a checked name */
		if (zone_charge(z, sizeof(*n) + len - off + 1, why) != 0)
			return SPFKIT_E2BIG;
		n = node_new(z, name + off, len - off);
		if (n == NULL)
			return SPFKIT_ENOMEM;
		p->fresh[p->nfresh++] = n;
		if (p->leaf == NULL)
			p->leaf = n;
		dot = memchr(name + off, '.', len - off);
		if (dot == NULL)
			break;
		off = (size_t)(dot - name) + 1;
	}
	if (p->leaf == NULL)
		p->leaf = n;
	return zone_reserve(z, p->nfresh, why);
}

static void zone_commit(struct spfkit_zone *z, const struct zprep *p, unsigned flags)
{
	size_t i;

	for (i = 0; i < p->nfresh; i++) {
		slots_put(z->slots, z->nslots, p->fresh[i]);
		z->nnodes++;
		if (p->fresh[i]->name[0] == '*' && (p->fresh[i]->len == 1 || p->fresh[i]->name[1] == '.'))
			z->has_wildcard = 1;
	}
	if (!(p->leaf->flags & ZN_NAMED))
		z->nnamed++;
	p->leaf->flags |= ZN_NAMED | flags;
}

/* ---- zone --------------------------------------------------------- */

int spfkit_zone_new(const struct spfkit_allocator *alloc, struct spfkit_zone **out)
{
	struct spfkit_zone *z;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	z = spfkit__zalloc(alloc, sizeof(*z));
	if (z == NULL)
		return SPFKIT_ENOMEM;
	z->alloc = alloc;
	z->max_bytes = SPFKIT_ZONE_MAX_MEMORY;
	spfkit__arena_init(&z->arena, alloc, 65536, 0);
	*out = z;
	return 0;
}

void spfkit_zone_free(struct spfkit_zone *zone)
{
	size_t i;
	int t;

	if (zone == NULL)
		return;
	for (i = 0; i < zone->nslots; i++) {
		struct znode *n = zone->slots[i].node;

		if (n == NULL)
			continue;
		for (t = 0; t < T_COUNT; t++)
			spfkit__free(zone->alloc, n->sets[t].rrs);
	}
	spfkit__free(zone->alloc, zone->slots);
	spfkit__arena_free(&zone->arena);
	spfkit__free(zone->alloc, zone);
}

const struct spfkit_allocator *spfkit__zone_alloc(const struct spfkit_zone *zone)
{
	return zone->alloc;
}

void spfkit__zone_set_max_memory(struct spfkit_zone *zone, size_t bytes)
{
	zone->max_bytes = bytes;
}

size_t spfkit__zone_max_memory(const struct spfkit_zone *zone)
{
	return zone->max_bytes;
}

size_t spfkit__zone_memory(const struct spfkit_zone *zone)
{
	return zone->bytes;
}

size_t spfkit_zone_size(const struct spfkit_zone *zone)
{
	return zone != NULL ? zone->nnamed : 0;
}

/* ---- TXT as character-strings (resolver.h: SPFKIT_RR_TXT_STRINGS) ---- */

/* Each string's length octet must end inside the data, the last exactly
 * at its end (RFC 1035 §3.3). 0 with the joined length, or EINVAL. */
static int strings_joined_len(const void *data, size_t len, size_t *joined, const char **why)
{
	const unsigned char *w = data;
	size_t i = 0, n = 0;

	while (i < len) {
		if ((size_t)w[i] > len - i - 1)
			return fail_why(why, "a TXT character-string runs past the end", SPFKIT_EINVAL);
		n += w[i];
		i += 1 + (size_t)w[i];
	}
	if (joined != NULL)
		*joined = n;
	return 0;
}

static void strings_join(const unsigned char *w, size_t len, unsigned char *out)
{
	size_t i = 0;

	while (i < len) {
		if (w[i] > 0)
			memcpy(out, w + i + 1, w[i]);
		out += w[i];
		i += 1 + (size_t)w[i];
	}
}

/* Joined text as strings of 255 octets, the last shorter; "" as one
 * empty string. Writes text_strings_len(len) octets. */
static size_t text_strings_len(size_t len)
{
	return len + (len == 0 ? 1 : (len + 254) / 255);
}

static void text_split(const unsigned char *t, size_t len, unsigned char *out)
{
	size_t chunk;

	do {
		chunk = len > 255 ? 255 : len;
		*out++ = (unsigned char)chunk;
		if (chunk > 0) /* data may be NULL when empty */
			memcpy(out, t, chunk);
		out += chunk;
		t += chunk;
		len -= chunk;
	} while (len > 0);
}

/* Check the record data for its type; names lose their final dot. */
static int rdata_check(uint16_t type, const void *data, size_t *len, const char **why)
{
	switch (type) {
	case SPFKIT_RR_A:
		return *len == 4 ? 0 : fail_why(why, "A data is not 4 bytes", SPFKIT_EINVAL);
	case SPFKIT_RR_AAAA:
		return *len == 16 ? 0 : fail_why(why, "AAAA data is not 16 bytes", SPFKIT_EINVAL);
	case SPFKIT_RR_MX:
		/* RFC 7505 null MX ("MX 0 ."): the root, stored as "". */
		if (*len == 0 || (*len == 1 && *(const char *)data == '.')) {
			*len = 0;
			return 0;
		}
		/* fall through */
	case SPFKIT_RR_PTR:
	case SPFKIT_RR_CNAME:
		*len = spfkit__zone_name_check(data, *len, why);
		return *len != 0 ? 0 : SPFKIT_EINVAL;
	case SPFKIT_RR_TXT:
	case SPFKIT_RR_SPF:
		if (*len > SPFKIT__ZONE_RDATA_MAX)
			return fail_why(why, "text longer than 65535 bytes", SPFKIT_E2BIG);
		return 0;
	case SPFKIT_RR_TXT_STRINGS: /* its strings: zone_add_text() reads them */
		if (*len > SPFKIT__ZONE_RDATA_MAX)
			return fail_why(why, "TXT data longer than 65535 bytes", SPFKIT_E2BIG);
		return 0;
	}
	return fail_why(why, "unsupported record type", SPFKIT_EINVAL);
}

/* RFC 1034 §3.6.2: a CNAME owner holds no other data. */
static int cname_conflict(const struct znode *n, int ti, const char **why)
{
	int t;

	if (ti != T_CNAME)
		return n->sets[T_CNAME].count ? fail_why(why, "CNAME and other data", SPFKIT_EINVAL) : 0;
	if (n->sets[T_CNAME].count)
		return fail_why(why, "more than one CNAME at a name", SPFKIT_EINVAL);
	for (t = 0; t < T_COUNT; t++)
		if (n->sets[t].count)
			return fail_why(why, "CNAME and other data", SPFKIT_EINVAL);
	return 0;
}

/* Room for one more record in set; all or nothing. */
static int set_reserve(struct spfkit_zone *z, struct zset *set, const char **why)
{
	struct spfkit_dns_rr *rrs;
	uint32_t cap;

	if (set->count < set->cap)
		return 0;
	/* also bounds set_merge_duplicate()'s scan of the set */
	if (set->cap >= SPFKIT_ZONE_MAX_RRSET)
		return fail_why(why, "more records of one type at one name than a DNS message can carry",
				SPFKIT_E2BIG);
	cap = set->cap ? set->cap * 2 : 1; /* most names hold one record of a type */
	if (cap > SPFKIT_ZONE_MAX_RRSET)
		cap = SPFKIT_ZONE_MAX_RRSET;
	if (zone_charge(z, (size_t)(cap - set->cap) * sizeof(*rrs), why) != 0)
		return SPFKIT_E2BIG;
	rrs = spfkit__realloc(z->alloc, set->rrs, (size_t)cap * sizeof(*rrs));
	if (rrs == NULL) {
		z->bytes -= (size_t)(cap - set->cap) * sizeof(*rrs);
		return SPFKIT_ENOMEM;
	}
	set->rrs = rrs;
	set->cap = (uint16_t)cap;
	return 0;
}

/* Names in MX, PTR and CNAME data compare as names do (RFC 4034 §6.2), the rest byte for byte. */
static int rdata_eq(uint16_t type, const struct spfkit_dns_rr *rr, const void *data, size_t len,
		    uint16_t pref)
{
	switch (type) {
	case SPFKIT_RR_MX:
		if (rr->pref != pref)
			return 0;
		/* fall through */
	case SPFKIT_RR_PTR:
	case SPFKIT_RR_CNAME:
		return spfkit__memcaseeq(rr->data, rr->len, data, len);
	}
	return rr->len == len && (len == 0 || memcmp(rr->data, data, len) == 0);
}

/*
 * RFC 2181 §5: an RRset never holds two identical records, and a zone
 * file that lists one twice has it once (BIND and NSD drop the copy).
 * Without this, a TXT record written twice would be "2 SPF records", a
 * permerror (RFC 7208 §4.5). A TTL that differs does not make another
 * record; §5.2 has the smallest one used. 1 when data is already in the
 * set (then its TTL is merged), 0 when it is new. A linear scan: a set
 * holds at most SPFKIT_ZONE_MAX_RRSET records (set_reserve()).
 */
static void rr_merge_ttl(struct zset *set, uint32_t i, uint32_t ttl)
{
	if (ttl < set->rrs[i].ttl)
		set->rrs[i].ttl = ttl;
	if (ttl < set->min_ttl)
		set->min_ttl = ttl;
}

static int set_merge_duplicate(struct zset *set, uint16_t type, uint32_t ttl, const void *data,
			       size_t len, uint16_t pref)
{
	uint32_t i;

	for (i = 0; i < set->count; i++) {
		if (!rdata_eq(type, &set->rrs[i], data, len, pref))
			continue;
		rr_merge_ttl(set, i, ttl);
		return 1;
	}
	return 0;
}

static void set_append(struct zset *set, uint16_t type, uint16_t pref, uint32_t ttl,
		       const unsigned char *data, size_t len)
{
	struct spfkit_dns_rr *rr = &set->rrs[set->count];

	rr->type = type;
	rr->pref = type == SPFKIT_RR_MX ? pref : 0;
	rr->ttl = ttl;
	rr->data = data;
	rr->len = len;
	if (set->count == 0 || ttl < set->min_ttl)
		set->min_ttl = ttl;
	set->count++;
}

/*
 * A TXT record, given joined (SPFKIT_RR_TXT) or as its strings
 * (SPFKIT_RR_TXT_STRINGS, checked): kept both ways, so a TXT question
 * is answered without copying and lint can still see where a record
 * was split. Duplicates are the same joined text (as before strings
 * were kept): the first one's strings stay.
 */
static int zone_add_text(struct spfkit_zone *zone, const char *name, size_t name_len,
			 uint16_t type, uint32_t ttl, const unsigned char *data, size_t len,
			 const char **why)
{
	size_t jlen = len, wlen = len, i;
	struct zprep prep;
	struct znode *n;
	unsigned char *buf;
	int rc;

	if (type == SPFKIT_RR_TXT_STRINGS) {
		if (strings_joined_len(data, len, &jlen, why) != 0)
			return SPFKIT_EINVAL;
	} else {
		wlen = text_strings_len(len);
	}
	if (zone_charge(zone, jlen + wlen + 1, why) != 0)
		return SPFKIT_E2BIG;
	buf = spfkit__arena_alloc(&zone->arena, jlen + wlen + 1);
	if (buf == NULL)
		return SPFKIT_ENOMEM;
	if (type == SPFKIT_RR_TXT_STRINGS) {
		strings_join(data, len, buf);
		memcpy(buf + jlen, data, len);
	} else {
		if (len > 0)
			memcpy(buf, data, len);
		text_split(data, len, buf + jlen);
	}
	n = zone_find(zone, name, name_len, spfkit__namehash(name, name_len));
	if (n != NULL) {
		struct zset *txt = &n->sets[T_TXT];

		for (i = 0; i < txt->count; i++) {
			if (!rdata_eq(SPFKIT_RR_TXT, &txt->rrs[i], buf, jlen, 0))
				continue;
			rr_merge_ttl(txt, (uint32_t)i, ttl);
			rr_merge_ttl(&n->sets[T_TXTS], (uint32_t)i, ttl);
			return 0;
		}
	}
	rc = zone_prepare(zone, name, name_len, &prep, why);
	if (rc == 0)
		rc = cname_conflict(prep.leaf, T_TXT, why);
	if (rc == 0)
		rc = set_reserve(zone, &prep.leaf->sets[T_TXT], why);
	if (rc == 0)
		rc = set_reserve(zone, &prep.leaf->sets[T_TXTS], why);
	if (rc != 0) {
		/* a node made for this add is not in the table: what it got
		 * would never be freed with the zone */
		if (prep.nfresh > 0 && prep.fresh[0] == prep.leaf) {
			spfkit__free(zone->alloc, prep.leaf->sets[T_TXT].rrs);
			memset(&prep.leaf->sets[T_TXT], 0, sizeof(prep.leaf->sets[T_TXT]));
		}
		return rc;
	}
	zone_commit(zone, &prep, 0);
	set_append(&prep.leaf->sets[T_TXT], SPFKIT_RR_TXT, 0, ttl, buf, jlen);
	set_append(&prep.leaf->sets[T_TXTS], SPFKIT_RR_TXT_STRINGS, 0, ttl, buf + jlen, wlen);
	return 0;
}

int spfkit__zone_add(struct spfkit_zone *zone, const char *name, size_t name_len, uint16_t type,
		     uint32_t ttl, const void *data, size_t len, uint16_t pref, const char **why)
{
	struct zprep prep;
	struct znode *n;
	struct zset *set;
	const unsigned char *copy = zone_empty_data;
	unsigned char *buf;
	int ti = type_index(type), rc;

	if (why != NULL)
		*why = NULL;
	if (zone == NULL)
		return fail_why(why, "no zone", SPFKIT_EINVAL);
	if (ti < 0)
		return fail_why(why, "unsupported record type", SPFKIT_EINVAL);
	name_len = spfkit__zone_name_check(name, name_len, why);
	if (name_len == 0)
		return SPFKIT_EINVAL;
	if (data == NULL && len > 0)
		return fail_why(why, "no data", SPFKIT_EINVAL);
	rc = rdata_check(type, data, &len, why);
	if (rc != 0)
		return rc;
	if (type == SPFKIT_RR_TXT || type == SPFKIT_RR_TXT_STRINGS)
		return zone_add_text(zone, name, name_len, type, ttl, data, len, why);
	n = zone_find(zone, name, name_len, spfkit__namehash(name, name_len));
	if (n != NULL &&
	    set_merge_duplicate(&n->sets[ti], type, ttl, data, len, type == SPFKIT_RR_MX ? pref : 0))
		return 0;
	rc = zone_prepare(zone, name, name_len, &prep, why);
	if (rc == 0)
		rc = cname_conflict(prep.leaf, ti, why);
	if (rc == 0 && len > 0)
		rc = zone_charge(zone, len, why);
	if (rc != 0)
		return rc;
	if (len > 0) {
		buf = spfkit__arena_alloc(&zone->arena, len);
		if (buf == NULL)
			return SPFKIT_ENOMEM;
		memcpy(buf, data, len);
		copy = buf;
	}
	set = &prep.leaf->sets[ti];
	rc = set_reserve(zone, set, why);
	if (rc != 0)
		return rc;
	zone_commit(zone, &prep, 0);
	set_append(set, type, pref, ttl, copy, len);
	return 0;
}

int spfkit_zone_add(struct spfkit_zone *zone, const char *name, size_t name_len, uint16_t type,
		    uint32_t ttl, const void *data, size_t len, uint16_t pref)
{
	return spfkit__zone_add(zone, name, name_len, type, ttl, data, len, pref, NULL);
}

static int zone_mark(struct spfkit_zone *zone, const char *name, size_t name_len, unsigned flags)
{
	struct zprep prep;
	int rc;

	if (zone == NULL)
		return SPFKIT_EINVAL;
	name_len = spfkit__zone_name_check(name, name_len, NULL);
	if (name_len == 0)
		return SPFKIT_EINVAL;
	rc = zone_prepare(zone, name, name_len, &prep, NULL);
	if (rc != 0)
		return rc;
	zone_commit(zone, &prep, flags);
	return 0;
}

int spfkit_zone_add_empty(struct spfkit_zone *zone, const char *name, size_t name_len)
{
	return zone_mark(zone, name, name_len, 0);
}

int spfkit_zone_add_timeout(struct spfkit_zone *zone, const char *name, size_t name_len)
{
	return zone_mark(zone, name, name_len, ZN_TIMEOUT);
}

/* ---- lookup ------------------------------------------------------- */

static int answer_set(struct spfkit_dns_answer *a, enum spfkit_dns_status status, uint32_t ttl,
		      const char *detail)
{
	a->status = status;
	a->ttl = ttl;
	a->rrs = NULL;
	a->count = 0;
	a->detail = detail;
	return 0;
}

static int answer_rrs(struct spfkit_dns_answer *a, const struct zset *set, uint32_t ttl)
{
	answer_set(a, SPFKIT_DNS_OK, set->min_ttl < ttl ? set->min_ttl : ttl, NULL);
	a->rrs = set->rrs;
	a->count = set->count;
	return 0;
}

/*
 * RFC 4592 §3.3.1 for a name that does not exist: its closest encloser
 * is the longest existing ancestor (empty non-terminals exist: every
 * ancestor of a stored name has a node), and the source of synthesis
 * is "*." + that encloser, which answers for the name if it exists
 * (only this one: a wildcard further up does not apply below an
 * existing name). The root, never stored, encloses everything.
 */
static const struct znode *wildcard_source(const struct spfkit_zone *z, const char *name,
					   size_t len)
{
	char src[SPFKIT__ZONE_NAME_MAX + 3];
	const char *dot, *enc = NULL;
	size_t off = 0, elen = 0;

	for (;;) {
		dot = memchr(name + off, '.', len - off);
		if (dot == NULL)
			break;
		off = (size_t)(dot - name) + 1;
		if (zone_find(z, name + off, len - off, spfkit__namehash(name + off, len - off)) !=
		    NULL) {
			enc = name + off;
			elen = len - off;
			break;
		}
	}
	src[0] = '*';
	if (enc != NULL) {
		src[1] = '.';
		memcpy(src + 2, enc, elen);
		elen += 2;
	} else {
		elen = 1;
	}
	return zone_find(z, src, elen, spfkit__namehash(src, elen));
}

int spfkit_zone_lookup(const struct spfkit_zone *zone, const char *name, size_t len,
		       uint16_t type, struct spfkit_dns_answer *answer)
{
	const struct znode *seen[SPFKIT_ZONE_MAX_CNAME];
	const struct znode *n;
	const struct zset *cname;
	uint32_t ttl = UINT32_MAX;
	size_t hops, i, nlen;
	int ti = type_index(type);

	if (zone == NULL || answer == NULL || (name == NULL && len > 0))
		return SPFKIT_EINVAL;
	for (hops = 0;; hops++) {
		/*
		 * A name DNS could not carry (empty label, label over 63,
		 * over 253 bytes) cannot exist: NXDOMAIN, as the RFC 7208
		 * suite's invalid-domain-* cases expect of such targets.
		 * Every stored name is a valid one, so such a name simply
		 * matches none; only the length is checked, to bound the
		 * hashing, and one final dot dropped.
		 */
		nlen = len > 0 && name[len - 1] == '.' ? len - 1 : len;
		n = nlen <= SPFKIT__ZONE_NAME_MAX ? zone_find(zone, name, nlen,
							      spfkit__namehash(name, nlen))
						  : NULL;
		if (n == NULL && zone->has_wildcard && nlen <= SPFKIT__ZONE_NAME_MAX)
			n = wildcard_source(zone, name, nlen);
		if (n == NULL)
			return answer_set(answer, SPFKIT_DNS_NXDOMAIN, SPFKIT_ZONE_NEGATIVE_TTL, NULL);
		if (ti >= 0 && n->sets[ti].count > 0)
			return answer_rrs(answer, &n->sets[ti], ttl);
		/*
		 * Records that exist are answered even at a timeout name;
		 * only the other types time out. The RFC 7208 suite needs
		 * this ("spftimeout": TXT present, TIMEOUT, result fail).
		 */
		if (n->flags & ZN_TIMEOUT)
			return answer_set(answer, SPFKIT_DNS_TEMPFAIL, 0,
					  spfkit_reason_text(SPFKIT_REASON_DNS_TIMEOUT));
		cname = &n->sets[T_CNAME];
		if (type == SPFKIT_RR_CNAME || cname->count == 0)
			return answer_set(answer, SPFKIT_DNS_NODATA, SPFKIT_ZONE_NEGATIVE_TTL, NULL);
		/*
		 * A loop or an over-long chain is a broken zone, not proof
		 * that the name does not exist: RFC 1034 §3.6.2 asks that
		 * loops be signalled as an error, and recursive servers
		 * answer SERVFAIL, which every backend turns into TEMPFAIL.
		 * NXDOMAIN would instead count as a void lookup (RFC 7208
		 * §4.6.4) and hide the fault as "none".
		 */
		for (i = 0; i < hops; i++)
			if (seen[i] == n)
				return answer_set(answer, SPFKIT_DNS_TEMPFAIL, 0, "CNAME loop");
		if (hops == SPFKIT_ZONE_MAX_CNAME)
			return answer_set(answer, SPFKIT_DNS_TEMPFAIL, 0, "CNAME chain too long");
		seen[hops] = n;
		if (cname->min_ttl < ttl)
			ttl = cname->min_ttl;
		name = (const char *)cname->rrs[0].data;
		len = cname->rrs[0].len;
	}
}

/* ---- the zone as a resolver ---------------------------------------- */

/*
 * Answers are computed at submit() (the zone is read-only by then, so
 * they are what a later lookup would give) and queued; wait() delivers
 * them in order. Handles grow from 1, so the queue is sorted by handle.
 */
struct zq {
	uint64_t handle;
	spfkit_dns_cb *cb;
	void *arg;
	struct spfkit_dns_answer answer;
	int live; /* 0 once cancelled */
};

struct zres {
	struct spfkit_resolver pub; /* what the caller holds; freed with us */
	const struct spfkit_zone *zone;
	const struct spfkit_allocator *alloc;
	struct zq *q;
	size_t head, tail, cap; /* queued: q[head..tail) */
	uint64_t next;
	int delivering;
};

/* Room for one more entry at q[tail]; all or nothing. */
static int zres_room(struct zres *r)
{
	size_t cap;
	struct zq *q;

	if (r->tail < r->cap)
		return 0;
	if (r->head > 0) {
		/* wait() rereads head each step, so moving entries is safe. */
		memmove(r->q, r->q + r->head, (r->tail - r->head) * sizeof(*r->q));
		r->tail -= r->head;
		r->head = 0;
		return 0;
	}
	if (r->cap >= SPFKIT_ZONE_MAX_PENDING)
		return SPFKIT_E2BIG;
	cap = r->cap ? r->cap * 2 : 16;
	q = spfkit__realloc(r->alloc, r->q, cap * sizeof(*q));
	if (q == NULL)
		return SPFKIT_ENOMEM;
	r->q = q;
	r->cap = cap;
	return 0;
}

static int zres_submit(void *impl, const char *name, size_t len, uint16_t type, spfkit_dns_cb *cb,
		       void *arg, uint64_t *handle)
{
	struct zres *r = impl;
	struct zq *e;
	int rc;

	if (cb == NULL)
		return SPFKIT_EINVAL;
	rc = zres_room(r);
	if (rc != 0)
		return rc;
	e = &r->q[r->tail];
	rc = spfkit_zone_lookup(r->zone, name, len, type, &e->answer);
	if (rc != 0)
		return rc;
	e->handle = ++r->next;
	e->cb = cb;
	e->arg = arg;
	e->live = 1;
	r->tail++;
	if (handle != NULL)
		*handle = e->handle;
	return 0;
}

static void zres_cancel(void *impl, uint64_t handle)
{
	struct zres *r = impl;
	size_t lo = r->head, hi = r->tail, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->q[mid].handle < handle) {
			lo = mid + 1;
		} else if (r->q[mid].handle > handle) {
			hi = mid;
		} else {
			r->q[mid].live = 0;
			return;
		}
	}
}

/*
 * Delivers what was queued when it was called. Questions submitted by a
 * callback meanwhile wait for the next wait(): a callback that always
 * asks again cannot keep one wait() running for ever. The zone never
 * blocks, so timeout_ms is not used and an empty queue returns 0 at once.
 */
static int zres_wait(void *impl, int timeout_ms)
{
	struct zres *r = impl;
	size_t n = r->tail - r->head;
	int ran = 0;
	struct zq e;

	(void)timeout_ms;
	if (r->delivering)
		return SPFKIT_ESTATE;
	r->delivering = 1;
	while (n-- > 0) {
		e = r->q[r->head++]; /* a copy: the callback may move the queue */
		if (!e.live)
			continue;
		e.cb(e.arg, &e.answer);
		ran++;
	}
	r->delivering = 0;
	if (r->head == r->tail)
		r->head = r->tail = 0;
	return ran;
}

static void zres_destroy(void *impl)
{
	struct zres *r = impl;

	spfkit__free(r->alloc, r->q);
	spfkit__free(r->alloc, r);
}

static const struct spfkit_resolver_ops zres_ops = {
	.submit = zres_submit,
	.cancel = zres_cancel,
	.wait = zres_wait,
	.destroy = zres_destroy,
};

int spfkit_zone_resolver(const struct spfkit_zone *zone, struct spfkit_resolver **out)
{
	struct zres *r;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if (zone == NULL)
		return SPFKIT_EINVAL;
	r = spfkit__zalloc(zone->alloc, sizeof(*r));
	if (r == NULL)
		return SPFKIT_ENOMEM;
	r->zone = zone;
	r->alloc = zone->alloc;
	r->pub.ops = &zres_ops;
	r->pub.impl = r;
	*out = &r->pub;
	return 0;
}
