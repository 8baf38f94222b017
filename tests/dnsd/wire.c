/* DNS wire format for the test server: see wire.h for the contract. */
#include <string.h>

#include "wire.h"

uint16_t dnsd_wire_get16(const unsigned char *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

uint32_t dnsd_wire_get32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* ---- reading names ------------------------------------------------- */

/* Append one label's bytes as presentation text; out has room (see TEXT_MAX). */
static size_t label_text(const unsigned char *p, size_t n, char *out, size_t o)
{
	static const char digits[] = "0123456789";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned c = p[i];

		if (c == '.' || c == '\\' || c < 0x21 || c > 0x7e) {
			out[o++] = '\\';
			out[o++] = digits[c / 100];
			out[o++] = digits[(c / 10) % 10];
			out[o++] = digits[c % 10];
		} else {
			out[o++] = (char)c;
		}
	}
	return o;
}

static int name_fail(const char **why, const char *text)
{
	*why = text;
	return SPFKIT_ESYNTAX;
}

/*
 * Follow one pointer. RFC 1035 §4.1.4 lets a pointer name "a prior
 * occurrence"; we demand it lies before the start of the run of labels
 * it sits in, so the runs start ever earlier and a loop cannot exist.
 */
static int follow_pointer(const unsigned char *msg, size_t len, size_t pos, size_t *run_start,
			  const char **why)
{
	size_t target;

	if (pos + 1 >= len)
		return name_fail(why, "compression pointer cut short");
	target = ((size_t)(msg[pos] & 0x3f) << 8) | msg[pos + 1];
	if (target >= *run_start)
		return name_fail(why, "compression pointer does not point backwards (loop)");
	*run_start = target;
	return 0;
}

int dnsd_wire_read_wire(const unsigned char *msg, size_t len, size_t *off, unsigned char *wire,
			size_t *wire_len, const char **why)
{
	size_t pos = *off, run_start = *off, after = 0, w = 0;
	int jumped = 0;

	for (;;) {
		unsigned c;

		if (pos >= len)
			return name_fail(why, "name runs past the end of the message");
		c = msg[pos];
		if (c == 0)
			break;
		if ((c & 0xc0) == 0xc0) {
			if (follow_pointer(msg, len, pos, &run_start, why) != 0)
				return SPFKIT_ESYNTAX;
			if (!jumped)
				after = pos + 2;
			jumped = 1;
			pos = run_start;
			continue;
		}
		if (c > DNSD_WIRE_LABEL_MAX)
			return name_fail(why, "label type 0x40/0x80 is not supported");
		if (c >= len - pos)
			return name_fail(why, "label runs past the end of the message");
		if (w + c + 1u + 1u > DNSD_WIRE_NAME_MAX) /* this label, then at least the root */
			return name_fail(why, "name longer than 255 bytes");
		memcpy(wire + w, msg + pos, c + 1u);
		w += c + 1u;
		pos += c + 1u;
	}
	wire[w++] = 0;
	*wire_len = w;
	*off = jumped ? after : pos + 1;
	return 0;
}

/* Wire form (checked) -> presentation text; out holds DNSD_WIRE_TEXT_MAX + 1. */
static size_t wire_text(const unsigned char *wire, char *out)
{
	size_t i = 0, o = 0;

	while (wire[i] != 0) {
		if (o > 0)
			out[o++] = '.';
		o = label_text(wire + i + 1, wire[i], out, o);
		i += wire[i] + 1u;
	}
	out[o] = '\0';
	return o;
}

/* Wire form (checked) -> label bytes as they are, joined by dots. */
static size_t wire_raw(const unsigned char *wire, char *out)
{
	size_t i = 0, o = 0;

	while (wire[i] != 0) {
		if (o > 0)
			out[o++] = '.';
		memcpy(out + o, wire + i + 1, wire[i]);
		o += wire[i];
		i += wire[i] + 1u;
	}
	out[o] = '\0';
	return o;
}

int dnsd_wire_read_name(const unsigned char *msg, size_t len, size_t *off, char *out,
			size_t out_size, size_t *out_len, const char **why)
{
	unsigned char wire[DNSD_WIRE_NAME_MAX];
	size_t wlen = 0;

	if (out_size < DNSD_WIRE_TEXT_MAX + 1)
		return name_fail(why, "name buffer too small");
	if (dnsd_wire_read_wire(msg, len, off, wire, &wlen, why) != 0)
		return SPFKIT_ESYNTAX;
	*out_len = wire_text(wire, out);
	return 0;
}

/* ---- reading messages ---------------------------------------------- */

static int msg_fail(struct dnsd_wire_msg *m, size_t off, const char *why)
{
	m->why = why;
	m->err_off = off;
	return SPFKIT_ESYNTAX;
}

static int parse_question(const unsigned char *msg, size_t len, size_t *off,
			  struct dnsd_wire_msg *m, int keep)
{
	unsigned char wire[DNSD_WIRE_NAME_MAX];
	size_t wlen = 0, at = *off;
	const char *why = NULL;

	if (dnsd_wire_read_wire(msg, len, off, wire, &wlen, &why) != 0)
		return msg_fail(m, at, why);
	if (len - *off < 4)
		return msg_fail(m, *off, "question cut short");
	if (keep) {
		memcpy(m->qwire, wire, wlen);
		m->qwire_len = wlen;
		m->qname_len = wire_text(wire, m->qname);
		m->qraw_len = wire_raw(wire, m->qraw);
		m->qtype = dnsd_wire_get16(msg + *off);
		m->qclass = dnsd_wire_get16(msg + *off + 2);
		m->has_question = 1;
	}
	*off += 4;
	return 0;
}

/* RFC 6891 §6.1.1: one OPT at most, in the additional section, owned by the root. */
static int note_opt(struct dnsd_wire_msg *m, const struct dnsd_wire_rr *rr, size_t at)
{
	if (rr->section != 3)
		return msg_fail(m, at, "OPT record outside the additional section");
	if (m->has_opt)
		return msg_fail(m, at, "more than one OPT record");
	if (rr->name_len != 0)
		return msg_fail(m, at, "OPT record not owned by the root");
	m->has_opt = 1;
	m->udp_size = rr->rclass;
	m->ext_rcode = (uint8_t)(rr->ttl >> 24);
	m->edns_version = (uint8_t)(rr->ttl >> 16);
	return 0;
}

static int parse_rr(const unsigned char *msg, size_t len, size_t *off, struct dnsd_wire_msg *m,
		    struct dnsd_wire_rr *rr)
{
	size_t at = *off;
	const char *why = NULL;

	if (dnsd_wire_read_name(msg, len, off, rr->name, sizeof(rr->name), &rr->name_len, &why) !=
	    0)
		return msg_fail(m, at, why);
	if (len - *off < 10)
		return msg_fail(m, *off, "record header cut short");
	rr->type = dnsd_wire_get16(msg + *off);
	rr->rclass = dnsd_wire_get16(msg + *off + 2);
	rr->ttl = dnsd_wire_get32(msg + *off + 4);
	rr->rdlen = dnsd_wire_get16(msg + *off + 8);
	*off += 10;
	if (rr->rdlen > len - *off)
		return msg_fail(m, *off - 2, "RDLENGTH runs past the end of the message");
	rr->rdoff = *off;
	*off += rr->rdlen;
	if (rr->type == DNSD_TYPE_OPT)
		return note_opt(m, rr, at);
	return 0;
}

static int parse_section(const unsigned char *msg, size_t len, size_t *off,
			 struct dnsd_wire_msg *m, unsigned count, int section,
			 struct dnsd_wire_rr *rrs, size_t max)
{
	struct dnsd_wire_rr scratch;
	unsigned i;

	for (i = 0; i < count; i++) {
		struct dnsd_wire_rr *rr = m->nrr < max ? &rrs[m->nrr] : &scratch;

		rr->section = section;
		if (parse_rr(msg, len, off, m, rr) != 0)
			return SPFKIT_ESYNTAX;
		if (rr != &scratch)
			m->nrr++;
	}
	return 0;
}

int dnsd_wire_parse(const unsigned char *msg, size_t len, struct dnsd_wire_msg *m,
		    struct dnsd_wire_rr *rrs, size_t max)
{
	size_t off = DNSD_WIRE_HDR;
	unsigned i;

	memset(m, 0, sizeof(*m));
	if (len < DNSD_WIRE_HDR)
		return msg_fail(m, len, "header cut short");
	m->h.id = dnsd_wire_get16(msg);
	m->h.flags = dnsd_wire_get16(msg + 2);
	m->h.qdcount = dnsd_wire_get16(msg + 4);
	m->h.ancount = dnsd_wire_get16(msg + 6);
	m->h.nscount = dnsd_wire_get16(msg + 8);
	m->h.arcount = dnsd_wire_get16(msg + 10);
	for (i = 0; i < m->h.qdcount; i++)
		if (parse_question(msg, len, &off, m, i == 0) != 0)
			return SPFKIT_ESYNTAX;
	if (parse_section(msg, len, &off, m, m->h.ancount, 1, rrs, max) != 0 ||
	    parse_section(msg, len, &off, m, m->h.nscount, 2, rrs, max) != 0 ||
	    parse_section(msg, len, &off, m, m->h.arcount, 3, rrs, max) != 0)
		return SPFKIT_ESYNTAX;
	m->end = off;
	if (off != len)
		return msg_fail(m, off, "bytes after the last record");
	return 0;
}

/* ---- writing ------------------------------------------------------- */

int dnsd_wire_put8(struct spfkit__buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	return spfkit__buf_append(b, &c, 1);
}

int dnsd_wire_put16(struct spfkit__buf *b, unsigned v)
{
	unsigned char p[2] = { (unsigned char)(v >> 8), (unsigned char)v };

	return spfkit__buf_append(b, p, 2);
}

int dnsd_wire_put32(struct spfkit__buf *b, uint32_t v)
{
	unsigned char p[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };

	return spfkit__buf_append(b, p, 4);
}

void dnsd_wire_set16(struct spfkit__buf *b, size_t off, unsigned v)
{
	unsigned char *p = (unsigned char *)b->data + off;

	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

int dnsd_wire_put_header(struct spfkit__buf *b, const struct dnsd_wire_hdr *h)
{
	dnsd_wire_put16(b, h->id);
	dnsd_wire_put16(b, h->flags);
	dnsd_wire_put16(b, h->qdcount);
	dnsd_wire_put16(b, h->ancount);
	dnsd_wire_put16(b, h->nscount);
	return dnsd_wire_put16(b, h->arcount); /* the buffer's error is sticky */
}

/* \DDD (exactly three digits, at most 255) or \X; *i is past the backslash. */
static int unescape(const char *t, size_t len, size_t *i, unsigned char *out)
{
	unsigned v;

	if (*i >= len)
		return SPFKIT_EINVAL;
	if (!spfkit__is_digit((unsigned char)t[*i])) {
		*out = (unsigned char)t[(*i)++];
		return 0;
	}
	if (len - *i < 3 || !spfkit__is_digit((unsigned char)t[*i + 1]) ||
	    !spfkit__is_digit((unsigned char)t[*i + 2]))
		return SPFKIT_EINVAL;
	v = (unsigned)(t[*i] - '0') * 100 + (unsigned)(t[*i + 1] - '0') * 10 +
	    (unsigned)(t[*i + 2] - '0');
	if (v > 255)
		return SPFKIT_EINVAL;
	*out = (unsigned char)v;
	*i += 3;
	return 0;
}

/*
 * wire[lab] is the length byte of the label being filled; w the next
 * free byte. Room is kept for the final zero byte (RFC 1035 §3.1).
 */
static int name_to_wire(const char *t, size_t len, int escapes, unsigned char *wire,
			size_t *wlen)
{
	size_t i = 0, lab = 0, w = 1;

	if (len == 1 && t[0] == '.')
		len = 0;
	while (i < len) {
		unsigned char c = (unsigned char)t[i++];

		if (c == '.') {
			if (w - lab - 1 == 0 || w >= DNSD_WIRE_NAME_MAX)
				return SPFKIT_EINVAL; /* empty label, or no room */
			wire[lab] = (unsigned char)(w - lab - 1);
			lab = w++;
			continue;
		}
		if (escapes && c == '\\' && unescape(t, len, &i, &c) != 0)
			return SPFKIT_EINVAL;
		if (w - lab - 1 >= DNSD_WIRE_LABEL_MAX || w >= DNSD_WIRE_NAME_MAX - 1)
			return SPFKIT_EINVAL;
		wire[w++] = c;
	}
	if (w - lab - 1 == 0) { /* root, or a final dot: the open label is the end */
		wire[lab] = 0;
		*wlen = lab + 1;
		return 0;
	}
	wire[lab] = (unsigned char)(w - lab - 1);
	wire[w++] = 0;
	*wlen = w;
	return 0;
}

int dnsd_wire_name_from_text(const char *text, size_t len, unsigned char *wire, size_t *wire_len)
{
	unsigned char tmp[DNSD_WIRE_NAME_MAX + 1];
	size_t wlen = 0;

	if (name_to_wire(text, len, 1, tmp, &wlen) != 0)
		return SPFKIT_EINVAL;
	memcpy(wire, tmp, wlen);
	*wire_len = wlen;
	return 0;
}

int dnsd_wire_put_name(struct spfkit__buf *b, const char *text, size_t len)
{
	unsigned char wire[DNSD_WIRE_NAME_MAX];
	size_t wlen = 0;

	if (dnsd_wire_name_from_text(text, len, wire, &wlen) != 0)
		return SPFKIT_EINVAL;
	return spfkit__buf_append(b, wire, wlen);
}

int dnsd_wire_put_raw_name(struct spfkit__buf *b, const char *name, size_t len)
{
	unsigned char wire[DNSD_WIRE_NAME_MAX + 1];
	size_t wlen = 0;

	if (name_to_wire(name, len, 0, wire, &wlen) != 0)
		return SPFKIT_EINVAL;
	return spfkit__buf_append(b, wire, wlen);
}

int dnsd_wire_put_question(struct spfkit__buf *b, const char *name, size_t len, uint16_t type,
			   uint16_t qclass)
{
	int rc = dnsd_wire_put_name(b, name, len);

	if (rc != 0)
		return rc;
	dnsd_wire_put16(b, type);
	return dnsd_wire_put16(b, qclass);
}

int dnsd_wire_rr_begin(struct spfkit__buf *b, unsigned owner_ptr, uint16_t type, uint16_t rclass,
		       uint32_t ttl, size_t *rdlen_off)
{
	dnsd_wire_put16(b, 0xc000u | (owner_ptr & 0x3fffu));
	dnsd_wire_put16(b, type);
	dnsd_wire_put16(b, rclass);
	dnsd_wire_put32(b, ttl);
	*rdlen_off = b->len;
	return dnsd_wire_put16(b, 0);
}

int dnsd_wire_rr_end(struct spfkit__buf *b, size_t rdlen_off)
{
	size_t n;

	if (b->err)
		return b->err;
	n = b->len - rdlen_off - 2;
	if (n > 0xffff)
		return SPFKIT_E2BIG;
	dnsd_wire_set16(b, rdlen_off, (unsigned)n);
	return 0;
}

int dnsd_wire_put_txt(struct spfkit__buf *b, const unsigned char *data, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return dnsd_wire_put8(b, 0); /* one empty string: TXT RDATA is never empty */
	while (off < len) {
		size_t n = len - off > 255 ? 255 : len - off;

		dnsd_wire_put8(b, (unsigned)n);
		spfkit__buf_append(b, data + off, n);
		off += n;
	}
	return b->err;
}

int dnsd_wire_put_opt(struct spfkit__buf *b, uint16_t udp_size, uint8_t ext_rcode,
		      uint8_t version)
{
	dnsd_wire_put8(b, 0);
	dnsd_wire_put16(b, DNSD_TYPE_OPT);
	dnsd_wire_put16(b, udp_size);
	dnsd_wire_put32(b, ((uint32_t)ext_rcode << 24) | ((uint32_t)version << 16));
	return dnsd_wire_put16(b, 0);
}

/* ---- type names ---------------------------------------------------- */

static const struct {
	uint16_t type;
	const char *name;
} type_names[] = {
	{ 1, "A" },	{ 2, "NS" },   { 5, "CNAME" }, { 6, "SOA" },	{ 12, "PTR" },
	{ 15, "MX" },	{ 16, "TXT" }, { 28, "AAAA" }, { 41, "OPT" },	{ 99, "SPF" },
	{ 255, "ANY" },
};

const char *dnsd_wire_type_name(uint16_t type)
{
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	return NULL;
}

int dnsd_wire_type_parse(const char *s, size_t len, uint16_t *type)
{
	unsigned long v = 0;
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		const char *n = type_names[i].name;

		if (spfkit__memcaseeq(s, len, n, strlen(n))) {
			*type = type_names[i].type;
			return 0;
		}
	}
	if (len == 0 || len > 5)
		return SPFKIT_EINVAL;
	for (i = 0; i < len; i++) {
		if (!spfkit__is_digit((unsigned char)s[i]))
			return SPFKIT_EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return SPFKIT_EINVAL;
	*type = (uint16_t)v;
	return 0;
}
