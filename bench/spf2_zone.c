/* Hashed in-memory DNS layer for libspf2 (see spf2_zone.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_common.h"
#include "core.h"
#include "spf2_zone.h"

/* The SPF RR type is never in the corpus; libspf2 asks for it first. */
#define MARKER 0u /* entry type meaning "this name exists" */

struct entry {
	uint64_t hash;
	char *name; /* lower case, no final dot, NUL-terminated */
	size_t len;
	unsigned type;
	SPF_dns_rr_t *rr; /* NULL for a MARKER */
};

struct zone {
	SPF_dns_server_t layer; /* layer.hook points back to this struct */
	struct entry *slots;
	size_t cap; /* a power of two, or 0 */
	size_t used;
	size_t records;
};

struct loader {
	struct zone *z;
	const char *label;
	unsigned line;
	char *err;
	size_t errlen;
};

/* ---- the table ------------------------------------------------------ */

static uint64_t key_hash(const char *name, size_t len, unsigned type)
{
	return spfkit__namehash(name, len) ^ ((uint64_t)type * 0x9e3779b97f4a7c15ull);
}

static struct entry *find(const struct zone *z, const char *name, size_t len, unsigned type)
{
	uint64_t h = key_hash(name, len, type);
	size_t i;

	if (z->cap == 0)
		return NULL;
	for (i = (size_t)h & (z->cap - 1);; i = (i + 1) & (z->cap - 1)) {
		struct entry *e = &z->slots[i];

		if (e->name == NULL)
			return NULL;
		if (e->hash == h && e->type == type && spfkit__memcaseeq(e->name, e->len, name, len))
			return e;
	}
}

static int grow(struct zone *z)
{
	size_t cap = z->cap ? z->cap * 2 : 1024, i;
	struct entry *old = z->slots, *slots;

	if (cap > SIZE_MAX / sizeof(*slots))
		return SPFKIT_ENOMEM;
	slots = spfkit__calloc(NULL, cap, sizeof(*slots));
	if (slots == NULL)
		return SPFKIT_ENOMEM;
	for (i = 0; i < z->cap; i++) {
		size_t j = (size_t)old[i].hash & (cap - 1);

		if (old[i].name == NULL)
			continue;
		while (slots[j].name != NULL)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
	}
	spfkit__free(NULL, old);
	z->slots = slots;
	z->cap = cap;
	return 0;
}

/* The entry for (name, type), created empty when missing; NULL on ENOMEM. */
static struct entry *upsert(struct zone *z, const char *name, size_t len, unsigned type)
{
	struct entry *e = find(z, name, len, type);
	uint64_t h;
	size_t i;

	if (e != NULL)
		return e;
	if ((z->used + 1) * 2 > z->cap && grow(z) != 0)
		return NULL;
	h = key_hash(name, len, type);
	for (i = (size_t)h & (z->cap - 1); z->slots[i].name != NULL; i = (i + 1) & (z->cap - 1))
		;
	e = &z->slots[i];
	e->name = spfkit__strndup(NULL, name, len);
	if (e->name == NULL)
		return NULL;
	e->hash = h;
	e->len = len;
	e->type = type;
	z->used++;
	return e;
}

/* Mark the name and every parent as existing: a lookup of a name that
 * only has children gets NODATA, not NXDOMAIN, as in real DNS. */
static int mark_names(struct zone *z, const char *name, size_t len)
{
	while (len > 0) {
		const char *dot;

		if (upsert(z, name, len, MARKER) == NULL)
			return SPFKIT_ENOMEM;
		dot = memchr(name, '.', len);
		if (dot == NULL)
			break;
		len -= (size_t)(dot + 1 - name);
		name = dot + 1;
	}
	return 0;
}

/* ---- the libspf2 lookup hook ---------------------------------------- */

static SPF_dns_rr_t *zone_lookup(SPF_dns_server_t *layer, const char *domain, ns_type type,
				 int should_cache)
{
	const struct zone *z = layer->hook;
	size_t len = strnlen(domain, SPF2_ZONE_MAX_NAME + 2);
	const struct entry *e;
	SPF_dns_rr_t *out = NULL;

	(void)should_cache;
	if (len > 0 && domain[len - 1] == '.')
		len--;
	e = find(z, domain, len, (unsigned)type);
	if (e != NULL) {
		/* libspf2 frees what a layer returns, so hand out a copy */
		if (SPF_dns_rr_dup(&out, e->rr) != SPF_E_SUCCESS && out != NULL) {
			SPF_dns_rr_free(out);
			out = NULL;
		}
		return out;
	}
	if (find(z, domain, len, MARKER) != NULL)
		return SPF_dns_rr_new_init(layer, domain, type, 3600, NO_DATA);
	return SPF_dns_rr_new_nxdomain(layer, domain);
}

/* ---- the reader ----------------------------------------------------- */

static int fail(struct loader *ld, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct loader *ld, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ld->err == NULL || ld->errlen == 0)
		return rc;
	n = snprintf(ld->err, ld->errlen, "%s:%u: ", ld->label, ld->line);
	if (n < 0 || (size_t)n >= ld->errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Next blank-separated token, NUL-terminated in place; NULL at the end. */
static char *token(char **p, char *end)
{
	char *s = *p, *start;

	while (s < end && is_blank(*s))
		s++;
	if (s == end) {
		*p = s;
		return NULL;
	}
	start = s;
	while (s < end && !is_blank(*s))
		s++;
	if (s < end)
		*s++ = '\0';
	*p = s;
	return start;
}

static int word_is(const char *tok, const char *word)
{
	return spfkit__memcaseeq(tok, strlen(tok), word, strlen(word));
}

static int all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!spfkit__is_digit((unsigned char)*s))
			return 0;
	return 1;
}

/* An absolute name ("a.example.") into lower case without the dot. */
static int absolute_name(struct loader *ld, const char *tok, char *out, size_t *outlen)
{
	size_t len, i;

	if (tok == NULL)
		return fail(ld, SPFKIT_ESYNTAX, "missing name");
	len = strlen(tok); /* a token cut and NUL-terminated in our own buffer */
	if (len < 2 || tok[len - 1] != '.')
		return fail(ld, SPFKIT_ESYNTAX, "name \"%.100s\" is not absolute (want a final dot)", tok);
	len--;
	if (len > SPF2_ZONE_MAX_NAME)
		return fail(ld, SPFKIT_E2BIG, "name longer than %u bytes", SPF2_ZONE_MAX_NAME);
	for (i = 0; i < len; i++)
		out[i] = (char)spfkit__lower((unsigned char)tok[i]);
	out[len] = '\0';
	*outlen = len;
	return 0;
}

/* One \DDD or \X escape at s[0] == '\\'; returns bytes consumed or 0. */
static size_t unescape(const char *s, const char *end, unsigned char *out)
{
	if (s + 1 >= end)
		return 0;
	if (spfkit__is_digit((unsigned char)s[1])) {
		unsigned v;

		if (s + 3 >= end || !spfkit__is_digit((unsigned char)s[2]) ||
		    !spfkit__is_digit((unsigned char)s[3]))
			return 0;
		v = (unsigned)(s[1] - '0') * 100 + (unsigned)(s[2] - '0') * 10 + (unsigned)(s[3] - '0');
		if (v > 255)
			return 0;
		*out = (unsigned char)v;
		return 4;
	}
	*out = (unsigned char)s[1];
	return 2;
}

/* One character-string (RFC 1035 §3.3), quoted or not, appended to buf. */
static int char_string(struct loader *ld, char **pp, char *end, struct spfkit__buf *buf)
{
	char *p = *pp;
	int quoted = (*p == '"');
	size_t n = 0;

	p += quoted;
	while (p < end && (quoted ? *p != '"' : !is_blank(*p))) {
		unsigned char c = (unsigned char)*p;
		size_t used = 1;

		if (c == '\\') {
			used = unescape(p, end, &c);
			if (used == 0)
				return fail(ld, SPFKIT_ESYNTAX, "bad escape in TXT data");
		}
		if (c == '\0')
			return fail(ld, SPFKIT_ESYNTAX, "NUL byte in TXT data (libspf2 keeps C strings)");
		if (++n > 255)
			return fail(ld, SPFKIT_E2BIG, "character-string longer than 255 bytes");
		if (spfkit__buf_putc(buf, (char)c) != 0)
			return fail(ld, buf->err, "TXT data too large");
		p += used;
	}
	if (quoted && p == end)
		return fail(ld, SPFKIT_ESYNTAX, "unterminated quoted string");
	*pp = p + quoted;
	return 0;
}

static int txt_data(struct loader *ld, char *p, char *end, struct spfkit__buf *buf)
{
	int rc = 0;

	for (;;) {
		while (p < end && is_blank(*p))
			p++;
		if (p == end || rc != 0)
			break;
		rc = char_string(ld, &p, end, buf);
	}
	if (rc == 0 && buf->data == NULL)
		return fail(ld, SPFKIT_ESYNTAX, "TXT record without data");
	return rc;
}

/* Room for one more RR of `size` bytes in rr; returns its slot. */
static SPF_dns_rr_data_t *rr_slot(SPF_dns_rr_t *rr, size_t size)
{
	if (SPF_dns_rr_buf_realloc(rr, rr->num_rr, size) != SPF_E_SUCCESS)
		return NULL;
	return rr->rr[rr->num_rr];
}

static int add_rr(struct loader *ld, const char *name, size_t len, unsigned type,
		  const void *data, size_t size)
{
	struct entry *e = upsert(ld->z, name, len, type);
	SPF_dns_rr_data_t *slot;

	if (e == NULL)
		return SPFKIT_ENOMEM;
	if (e->rr == NULL) {
		e->rr = SPF_dns_rr_new_init(&ld->z->layer, name, (ns_type)type, 3600, NETDB_SUCCESS);
		if (e->rr == NULL)
			return SPFKIT_ENOMEM;
		ld->z->records++;
	}
	slot = rr_slot(e->rr, size);
	if (slot == NULL)
		return SPFKIT_ENOMEM;
	memcpy(slot, data, size);
	e->rr->num_rr++;
	return mark_names(ld->z, name, len);
}

static int target_rr(struct loader *ld, const char *owner, size_t olen, unsigned type,
		     const char *tok)
{
	char name[SPF2_ZONE_MAX_NAME + 1];
	size_t len = 0;
	int rc;

	if (tok == NULL)
		return fail(ld, SPFKIT_ESYNTAX, "missing target name");
	rc = absolute_name(ld, tok, name, &len);
	if (rc != 0)
		return rc;
	return add_rr(ld, owner, olen, type, name, len + 1);
}

static int addr_rr(struct loader *ld, const char *owner, size_t olen, unsigned type,
		   const char *tok)
{
	unsigned char addr[16];
	int af = type == ns_t_a ? AF_INET : AF_INET6;

	if (tok == NULL || inet_pton(af, tok, addr) != 1)
		return fail(ld, SPFKIT_ESYNTAX, "bad %s address \"%.100s\"",
			    type == ns_t_a ? "IPv4" : "IPv6", tok ? tok : "");
	return add_rr(ld, owner, olen, type, addr, type == ns_t_a ? 4 : 16);
}

static int rdata(struct loader *ld, const char *owner, size_t olen, const char *type, char *p,
		 char *end)
{
	if (word_is(type, "A"))
		return addr_rr(ld, owner, olen, ns_t_a, token(&p, end));
	if (word_is(type, "AAAA"))
		return addr_rr(ld, owner, olen, ns_t_aaaa, token(&p, end));
	if (word_is(type, "MX")) {
		const char *pref = token(&p, end);

		if (pref == NULL || !all_digits(pref) || strlen(pref) > 5)
			return fail(ld, SPFKIT_ESYNTAX, "bad MX preference");
		return target_rr(ld, owner, olen, ns_t_mx, token(&p, end));
	}
	if (word_is(type, "PTR"))
		return target_rr(ld, owner, olen, ns_t_ptr, token(&p, end));
	if (word_is(type, "TXT")) {
		struct spfkit__buf buf;
		int rc;

		spfkit__buf_init(&buf, NULL, SPF2_ZONE_MAX_LINE);
		rc = txt_data(ld, p, end, &buf);
		if (rc == 0)
			rc = add_rr(ld, owner, olen, ns_t_txt, buf.data, buf.len + 1);
		spfkit__buf_free(&buf);
		return rc;
	}
	return fail(ld, SPFKIT_ESYNTAX, "unsupported record type \"%.20s\"", type);
}

/* Cut a ';' comment that is not inside quotes. */
static char *cut_comment(char *p, char *end)
{
	int quoted = 0;

	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end)
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (*p == ';' && !quoted)
			return p;
	}
	return end;
}

static int record_line(struct loader *ld, char *p, char *end)
{
	char owner[SPF2_ZONE_MAX_NAME + 1];
	size_t olen = 0;
	char *tok;
	int rc;

	if (is_blank(*p))
		return fail(ld, SPFKIT_ESYNTAX, "blank owner (\"same as before\") is not supported");
	rc = absolute_name(ld, token(&p, end), owner, &olen);
	if (rc != 0)
		return rc;
	tok = token(&p, end);
	while (tok != NULL && (all_digits(tok) || word_is(tok, "IN")))
		tok = token(&p, end);
	if (tok == NULL)
		return fail(ld, SPFKIT_ESYNTAX, "missing record type");
	return rdata(ld, owner, olen, tok, p, end);
}

static int zone_line(struct loader *ld, char *p, char *end)
{
	char *stop = cut_comment(p, end), *q = p;

	while (q < stop && is_blank(*q))
		q++;
	if (q == stop)
		return 0;
	if (*p == '$') {
		if (stop - p >= 5 && memcmp(p, "$TTL", 4) == 0 && is_blank(p[4]))
			return 0; /* one TTL for everything is all the benchmark needs */
		return fail(ld, SPFKIT_ESYNTAX, "unsupported directive");
	}
	return record_line(ld, p, stop);
}

/* Each line is copied into `line` and NUL-terminated there, so the
 * tokenizer may cut it in place whatever the caller's text looks like. */
static int load_lines(struct loader *ld, const char *text, size_t len, char *line)
{
	const char *p = text, *end = text + len;
	int rc = 0;

	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t n = (size_t)(eol - p);

		ld->line++;
		if (n > SPF2_ZONE_MAX_LINE)
			return fail(ld, SPFKIT_E2BIG, "line longer than %u bytes", SPF2_ZONE_MAX_LINE);
		if (memchr(p, '\0', n) != NULL)
			return fail(ld, SPFKIT_ESYNTAX, "NUL byte in the file");
		memcpy(line, p, n);
		line[n] = '\0';
		rc = zone_line(ld, line, line + n);
		p = eol + (nl != NULL);
	}
	return rc;
}

/* ---- life cycle ----------------------------------------------------- */

static struct zone *zone_new(void)
{
	struct zone *z = spfkit__zalloc(NULL, sizeof(*z));

	if (z == NULL)
		return NULL;
	z->layer.destroy = NULL; /* we free it: see spf2_zone_free() */
	z->layer.lookup = zone_lookup;
	z->layer.name = "bench-hash";
	z->layer.hook = z;
	return z;
}

int spf2_zone_load_text(const char *text, size_t len, const char *label,
			SPF_dns_server_t **out, char *err, size_t errlen)
{
	struct loader ld = {0};
	char *line;
	int rc;

	ld.z = zone_new();
	if (ld.z == NULL)
		return SPFKIT_ENOMEM;
	ld.label = label;
	ld.err = err;
	ld.errlen = errlen;
	line = spfkit__alloc(NULL, SPF2_ZONE_MAX_LINE + 1);
	rc = line ? load_lines(&ld, text, len, line) : SPFKIT_ENOMEM;
	spfkit__free(NULL, line);
	if (rc != 0) {
		if (rc == SPFKIT_ENOMEM)
			fail(&ld, rc, "out of memory");
		spf2_zone_free(&ld.z->layer);
		return rc;
	}
	*out = &ld.z->layer;
	return 0;
}

int spf2_zone_load(const char *path, SPF_dns_server_t **out, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = bench_read_file(path, BENCH_MAX_FILE, &text, &len, err, errlen);

	if (rc != 0)
		return rc;
	rc = spf2_zone_load_text(text, len, path, out, err, errlen);
	spfkit__free(NULL, text);
	return rc;
}

void spf2_zone_free(SPF_dns_server_t *layer)
{
	struct zone *z;
	size_t i;

	if (layer == NULL)
		return;
	z = layer->hook;
	for (i = 0; i < z->cap; i++) {
		spfkit__free(NULL, z->slots[i].name);
		if (z->slots[i].rr != NULL)
			SPF_dns_rr_free(z->slots[i].rr);
	}
	spfkit__free(NULL, z->slots);
	spfkit__free(NULL, z);
}

size_t spf2_zone_records(const SPF_dns_server_t *layer)
{
	const struct zone *z = layer->hook;

	return z->records;
}
