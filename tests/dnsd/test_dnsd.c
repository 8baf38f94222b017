/*
 * Tests of tests/dnsd: the wire helpers, then the server on 127.0.0.1
 * port 0 spoken to with plain sockets: answers of each type, negative
 * answers, truncation and TCP fallback, EDNS0, every fault, counters,
 * hostile clients, and that stop frees everything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <spfkit/resolver.h>
#include <spfkit/zone.h>

#include "dnsd.h"
#include "dnsd_impl.h"
#include "wire.h"

#define MAX_RRS 256

struct fx {
	struct spfkit_zone *zone;
	struct dnsd *d;
	int port;
};

struct reply {
	unsigned char buf[DNSD_WIRE_MAX];
	size_t len;
	struct dnsd_wire_msg m;
	struct dnsd_wire_rr rrs[MAX_RRS];
	int parse_rc;
};

/* ---- zone and server ------------------------------------------------------ */

static char long_txt[600];
static char huge_txt[60000];

static void add(struct spfkit_zone *z, const char *name, uint16_t type, const void *data,
		size_t len, uint16_t pref)
{
	int rc = spfkit_zone_add(z, name, strlen(name), type, 3600, data, len, pref);

	if (rc != 0)
		fail_msg("spfkit_zone_add(%s): got %d, want 0", name, rc);
}

static struct spfkit_zone *make_zone(void)
{
	struct spfkit_zone *z = NULL;
	unsigned char a[4] = { 192, 0, 2, 1 }, a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	const char *spf = "v=spf1 -all";
	int i;

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	add(z, "a.example", SPFKIT_RR_A, a, 4, 0);
	a[3] = 2;
	add(z, "a.example", SPFKIT_RR_A, a, 4, 0);
	a6[15] = 1;
	add(z, "a.example", SPFKIT_RR_AAAA, a6, 16, 0);
	add(z, "mx.example", SPFKIT_RR_MX, "mail.example", 12, 10);
	add(z, "odd-mx.example", SPFKIT_RR_MX, "m\\x.example", 11, 10); /* raw: a '\\' */
	add(z, "txt.example", SPFKIT_RR_TXT, spf, strlen(spf), 0);
	for (i = 0; i < (int)sizeof(long_txt); i++)
		long_txt[i] = (char)('a' + i % 26);
	add(z, "long.example", SPFKIT_RR_TXT, long_txt, sizeof(long_txt), 0);
	for (i = 0; i < (int)sizeof(huge_txt); i++)
		huge_txt[i] = (char)('A' + i % 26);
	add(z, "huge.example", SPFKIT_RR_TXT, huge_txt, sizeof(huge_txt), 0);
	for (i = 0; i < 40; i++) { /* 40 A records: about 700 bytes, over 512 */
		a[2] = 3;
		a[3] = (unsigned char)i;
		add(z, "big.example", SPFKIT_RR_A, a, 4, 0);
	}
	assert_int_equal(spfkit_zone_add_timeout(z, "tz.example", 10), 0);
	add(z, "macro%percent  space%20url-space.example", SPFKIT_RR_TXT, spf, strlen(spf), 0);
	add(z, "empty.example", SPFKIT_RR_TXT, "", 0, 0); /* the RFC 7208 null-text pair */
	add(z, "empty.example", SPFKIT_RR_TXT, spf, strlen(spf), 0);
	return z;
}

static int start(void **state, const struct dnsd_options *opt)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->zone = make_zone();
	if (dnsd_start(opt, f->zone, &f->d) != 0)
		return -1;
	f->port = dnsd_port(f->d);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	struct dnsd_options opt = { .addr = "127.0.0.1", .port = 0 };

	return start(state, &opt);
}

/* A short idle timeout, for the TCP hostility tests. */
static int setup_idle(void **state)
{
	struct dnsd_options opt = { .addr = "127.0.0.1", .port = 0, .tcp_idle_ms = 200 };

	return start(state, &opt);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	dnsd_stop(f->d);
	spfkit_zone_free(f->zone);
	free(f);
	return 0;
}

/* ---- a client with plain sockets ------------------------------------------- */

/* A query: id, RD, one question, optionally an OPT with udp_size. */
static size_t make_query(unsigned char *out, uint16_t id, const char *name, uint16_t type,
			 int edns, uint16_t udp_size)
{
	struct spfkit__buf b;
	struct dnsd_wire_hdr h = { id, DNSD_F_RD, 1, 0, 0, (uint16_t)(edns ? 1 : 0) };
	size_t n;

	spfkit__buf_init(&b, NULL, DNSD_WIRE_MAX);
	dnsd_wire_put_header(&b, &h);
	dnsd_wire_put_question(&b, name, strlen(name), type, DNSD_CLASS_IN);
	if (edns)
		dnsd_wire_put_opt(&b, udp_size, 0, 0);
	assert_int_equal(b.err, 0);
	memcpy(out, b.data, b.len);
	n = b.len;
	spfkit__buf_free(&b);
	return n;
}

static void loopback(struct sockaddr_in *sa, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static int udp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	return fd;
}

static void udp_send_raw(int fd, int port, const void *p, size_t len)
{
	struct sockaddr_in sa;

	loopback(&sa, port);
	assert_int_equal(sendto(fd, p, len, 0, (struct sockaddr *)&sa, sizeof(sa)), (ssize_t)len);
}

/* Wait up to ms for a datagram: its length, or -1 on timeout. */
static ssize_t udp_recv(int fd, unsigned char *buf, size_t size, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, ms) <= 0)
		return -1;
	return recv(fd, buf, size, 0);
}

static void parse_reply(struct reply *r)
{
	r->parse_rc = dnsd_wire_parse(r->buf, r->len, &r->m, r->rrs, MAX_RRS);
}

/* Ask over UDP; 0 with r parsed, or -1 when nothing came within ms. */
static int ask_udp(int port, const char *name, uint16_t type, int edns, uint16_t size,
		   struct reply *r, int ms)
{
	unsigned char q[512];
	size_t qlen = make_query(q, 0x1234, name, type, edns, size);
	int fd = udp_socket();
	ssize_t n;

	udp_send_raw(fd, port, q, qlen);
	n = udp_recv(fd, r->buf, sizeof(r->buf), ms);
	close(fd);
	if (n < 0)
		return -1;
	r->len = (size_t)n;
	parse_reply(r);
	return 0;
}

static int tcp_connect(int port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	loopback(&sa, port);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Read exactly n bytes within ms; 0, or -1 on timeout/EOF. */
static int read_full(int fd, unsigned char *p, size_t n, int ms)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t k;

		if (poll(&pf, 1, ms) <= 0)
			return -1;
		k = recv(fd, p + got, n - got, 0);
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

static int tcp_read_reply(int fd, struct reply *r, int ms)
{
	unsigned char pre[2];

	if (read_full(fd, pre, 2, ms) != 0)
		return -1;
	r->len = dnsd_wire_get16(pre);
	if (read_full(fd, r->buf, r->len, ms) != 0)
		return -1;
	parse_reply(r);
	return 0;
}

/* MSG_NOSIGNAL: a server that hung up must fail the test, not kill it. */
static ssize_t tcp_send_raw_query(int fd, const char *name, uint16_t type)
{
	unsigned char q[2 + 512];
	size_t qlen = make_query(q + 2, 0x4321, name, type, 0, 0);

	q[0] = (unsigned char)(qlen >> 8);
	q[1] = (unsigned char)qlen;
	return send(fd, q, qlen + 2, MSG_NOSIGNAL) == (ssize_t)(qlen + 2) ? 0 : -1;
}

static void tcp_send_query(int fd, const char *name, uint16_t type)
{
	assert_int_equal(tcp_send_raw_query(fd, name, type), 0);
}

static int ask_tcp(int port, const char *name, uint16_t type, struct reply *r, int ms)
{
	int fd = tcp_connect(port), rc;

	tcp_send_query(fd, name, type);
	rc = tcp_read_reply(fd, r, ms);
	close(fd);
	return rc;
}

static struct reply *new_reply(void)
{
	struct reply *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	return r;
}

static unsigned rcode(const struct reply *r)
{
	return r->m.h.flags & DNSD_F_RCODE;
}

static void want_rcode(const struct reply *r, unsigned want)
{
	if (r->parse_rc != 0)
		fail_msg("reply does not parse: %s at %zu", r->m.why, r->m.err_off);
	if (rcode(r) != want)
		fail_msg("rcode: got %u, want %u", rcode(r), want);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- wire helpers ------------------------------------------------------------- */

static void wire_name_limits(void **state)
{
	struct spfkit__buf b;
	char name[300];

	(void)state;
	spfkit__buf_init(&b, NULL, DNSD_WIRE_MAX);
	memset(name, 'a', 64);
	assert_int_equal(dnsd_wire_put_name(&b, name, 63), 0);
	assert_int_equal(dnsd_wire_put_name(&b, name, 64), SPFKIT_EINVAL); /* label of 64 */
	assert_int_equal(dnsd_wire_put_name(&b, "a..b", 4), SPFKIT_EINVAL);
	assert_int_equal(dnsd_wire_put_name(&b, ".a", 2), SPFKIT_EINVAL);
	assert_int_equal(dnsd_wire_put_name(&b, "a\\", 2), SPFKIT_EINVAL);
	assert_int_equal(dnsd_wire_put_name(&b, "a\\256", 5), SPFKIT_EINVAL);
	/* 127 labels "a." = 254 bytes of text: 255 on the wire with the root, the maximum */
	for (int i = 0; i < 254; i += 2) {
		name[i] = 'a';
		name[i + 1] = '.';
	}
	assert_int_equal(dnsd_wire_put_name(&b, name, 253), 0);
	name[253] = '.';
	name[254] = 'a';
	assert_int_equal(dnsd_wire_put_name(&b, name, 255), SPFKIT_EINVAL); /* 257 on the wire */
	spfkit__buf_free(&b);
}

static void wire_name_escapes_round_trip(void **state)
{
	struct spfkit__buf b;
	char out[DNSD_WIRE_TEXT_MAX + 1];
	size_t off = 0, olen = 0;
	const char *why = NULL;

	(void)state;
	spfkit__buf_init(&b, NULL, DNSD_WIRE_MAX);
	assert_int_equal(dnsd_wire_put_name(&b, "a\\.b\\000.Ex.", 12), 0);
	assert_int_equal(b.len, 1 + 4 + 1 + 2 + 1);
	assert_int_equal(dnsd_wire_read_name((unsigned char *)b.data, b.len, &off, out,
					     sizeof(out), &olen, &why),
			 0);
	assert_string_equal(out, "a\\046b\\000.Ex");
	assert_int_equal(off, b.len);
	spfkit__buf_free(&b);
}

static void wire_pointer_must_point_back(void **state)
{
	/* 12 header bytes, then at 12: label "a", then a pointer to 12 (itself's run) */
	unsigned char m[16] = { 0 };
	char out[DNSD_WIRE_TEXT_MAX + 1];
	size_t off = 12, olen = 0;
	const char *why = NULL;

	(void)state;
	m[12] = 1;
	m[13] = 'a';
	m[14] = 0xc0;
	m[15] = 12;
	assert_int_equal(dnsd_wire_read_name(m, sizeof(m), &off, out, sizeof(out), &olen, &why),
			 SPFKIT_ESYNTAX);
	assert_non_null(strstr(why, "loop"));
	m[15] = 13; /* forward of the run start is refused too */
	off = 12;
	assert_int_equal(dnsd_wire_read_name(m, sizeof(m), &off, out, sizeof(out), &olen, &why),
			 SPFKIT_ESYNTAX);
}

static void wire_parse_rejects_short_and_trailing(void **state)
{
	unsigned char q[600];
	size_t n = make_query(q, 1, "a.example", SPFKIT_RR_A, 0, 0);
	struct dnsd_wire_msg m;

	(void)state;
	assert_int_equal(dnsd_wire_parse(q, n, &m, NULL, 0), 0);
	assert_string_equal(m.qname, "a.example");
	assert_int_equal(dnsd_wire_parse(q, 11, &m, NULL, 0), SPFKIT_ESYNTAX);
	assert_string_equal(m.why, "header cut short");
	assert_int_equal(dnsd_wire_parse(q, n - 1, &m, NULL, 0), SPFKIT_ESYNTAX);
	q[n] = 0;
	assert_int_equal(dnsd_wire_parse(q, n + 1, &m, NULL, 0), SPFKIT_ESYNTAX);
	assert_string_equal(m.why, "bytes after the last record");
}

static void wire_type_names(void **state)
{
	uint16_t t = 0;

	(void)state;
	assert_int_equal(dnsd_wire_type_parse("txt", 3, &t), 0);
	assert_int_equal(t, 16);
	assert_int_equal(dnsd_wire_type_parse("65535", 5, &t), 0);
	assert_int_equal(t, 65535);
	assert_int_equal(dnsd_wire_type_parse("65536", 5, &t), SPFKIT_EINVAL);
	assert_int_equal(dnsd_wire_type_parse("0", 1, &t), SPFKIT_EINVAL);
	assert_int_equal(dnsd_wire_type_parse("", 0, &t), SPFKIT_EINVAL);
	assert_string_equal(dnsd_wire_type_name(28), "AAAA");
}

/* ---- answers ------------------------------------------------------------------ */

static void answers_a_over_udp(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, "A.Example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.h.id, 0x1234);
	assert_true(r->m.h.flags & DNSD_F_QR);
	assert_true(r->m.h.flags & DNSD_F_AA);
	assert_true(r->m.h.flags & DNSD_F_RD);
	assert_string_equal(r->m.qname, "A.Example"); /* the question comes back as asked */
	assert_int_equal(r->m.h.ancount, 2);
	assert_string_equal(r->rrs[0].name, "A.Example");
	assert_int_equal(r->rrs[0].type, SPFKIT_RR_A);
	assert_int_equal(r->rrs[0].ttl, 3600);
	assert_int_equal(r->rrs[0].rdlen, 4);
	assert_memory_equal(r->buf + r->rrs[0].rdoff, "\xc0\x00\x02\x01", 4);
	assert_memory_equal(r->buf + r->rrs[1].rdoff, "\xc0\x00\x02\x02", 4);
	free(r);
}

static void answers_aaaa(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_AAAA, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.h.ancount, 1);
	assert_int_equal(r->rrs[0].type, SPFKIT_RR_AAAA);
	assert_int_equal(r->rrs[0].rdlen, 16);
	assert_memory_equal(r->buf + r->rrs[0].rdoff,
			    "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	free(r);
}

static void answers_mx(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	char ex[DNSD_WIRE_TEXT_MAX + 1];
	size_t off, exlen = 0;
	const char *why = NULL;

	assert_int_equal(ask_udp(f->port, "mx.example", SPFKIT_RR_MX, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.h.ancount, 1);
	assert_int_equal(dnsd_wire_get16(r->buf + r->rrs[0].rdoff), 10);
	off = r->rrs[0].rdoff + 2;
	assert_int_equal(dnsd_wire_read_name(r->buf, r->len, &off, ex, sizeof(ex), &exlen, &why), 0);
	assert_string_equal(ex, "mail.example");
	assert_int_equal(off, r->rrs[0].rdoff + r->rrs[0].rdlen);
	free(r);
}

/* A zone target name is raw bytes (resolver.h): its '\\' goes out as a byte, not an escape. */
static void answers_mx_target_raw(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	char ex[DNSD_WIRE_TEXT_MAX + 1];
	size_t off, exlen = 0;
	const char *why = NULL;

	assert_int_equal(ask_udp(f->port, "odd-mx.example", SPFKIT_RR_MX, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.h.ancount, 1);
	off = r->rrs[0].rdoff + 2;
	assert_int_equal(dnsd_wire_read_name(r->buf, r->len, &off, ex, sizeof(ex), &exlen, &why), 0);
	assert_string_equal(ex, "m\\092x.example"); /* a 3-octet label m \ x, as presentation */
	free(r);
}

/* The character-strings of a TXT RDATA, lengths into lens[]. */
static size_t txt_strings(const struct reply *r, const struct dnsd_wire_rr *rr, size_t *lens,
			  size_t max, unsigned char *joined)
{
	size_t off = rr->rdoff, end = rr->rdoff + rr->rdlen, n = 0, j = 0;

	while (off < end && n < max) {
		size_t l = r->buf[off];

		assert_true(off + 1 + l <= end);
		memcpy(joined + j, r->buf + off + 1, l);
		j += l;
		lens[n++] = l;
		off += 1 + l;
	}
	assert_int_equal(off, end);
	return n;
}

static void answers_txt(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t lens[4];
	unsigned char joined[64];

	assert_int_equal(ask_udp(f->port, "txt.example", SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(txt_strings(r, &r->rrs[0], lens, 4, joined), 1);
	assert_int_equal(lens[0], 11);
	assert_memory_equal(joined, "v=spf1 -all", 11);
	free(r);
}

/* The RFC 7208 suite has names with spaces: the zone is asked for the raw bytes. */
static void name_with_spaces_found(void **state)
{
	static const char name[] = "macro%percent  space%20url-space.example";
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, name, SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.h.ancount, 1);
	assert_string_equal(r->m.qname, "macro%percent\\032\\032space%20url-space.example");
	assert_int_equal(dnsd_query_count(f->d, name, SPFKIT_RR_TXT), 1);
	free(r);
}

static void txt_over_255_split_into_strings(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t lens[8];
	unsigned char joined[sizeof(long_txt)];

	assert_int_equal(ask_udp(f->port, "long.example", SPFKIT_RR_TXT, 1, 4096, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(txt_strings(r, &r->rrs[0], lens, 8, joined), 3);
	assert_int_equal(lens[0], 255);
	assert_int_equal(lens[1], 255);
	assert_int_equal(lens[2], 90);
	assert_memory_equal(joined, long_txt, sizeof(long_txt));
	free(r);
}

static void txt_of_60k_complete_over_tcp(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t lens[300];
	unsigned char *joined = malloc(sizeof(huge_txt));

	assert_non_null(joined);
	assert_int_equal(ask_tcp(f->port, "huge.example", SPFKIT_RR_TXT, r, 5000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(txt_strings(r, &r->rrs[0], lens, 300, joined), 236); /* ceil(60000/255) */
	assert_memory_equal(joined, huge_txt, sizeof(huge_txt));
	free(joined);
	free(r);
}

static void check_soa(const struct reply *r, const char *owner)
{
	const struct dnsd_wire_rr *soa = &r->rrs[0];
	char name[DNSD_WIRE_TEXT_MAX + 1];
	size_t off = soa->rdoff, nlen = 0;
	const char *why = NULL;

	assert_int_equal(r->m.h.ancount, 0);
	assert_int_equal(r->m.h.nscount, 1);
	assert_int_equal(soa->section, 2);
	assert_int_equal(soa->type, SPFKIT_RR_SOA);
	assert_string_equal(soa->name, owner);
	assert_int_equal(soa->ttl, DNSD_DEFAULT_NEG_TTL);
	assert_int_equal(dnsd_wire_read_name(r->buf, r->len, &off, name, sizeof(name), &nlen, &why), 0);
	assert_int_equal(dnsd_wire_read_name(r->buf, r->len, &off, name, sizeof(name), &nlen, &why), 0);
	assert_int_equal(off + 20, soa->rdoff + soa->rdlen);
	assert_int_equal(dnsd_wire_get32(r->buf + off + 16), DNSD_DEFAULT_NEG_TTL); /* MINIMUM */
}

static void nxdomain_has_soa(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, "no.such.example", SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NXDOMAIN);
	check_soa(r, "such.example");
	free(r);
}

static void nodata_has_soa(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_MX, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	check_soa(r, "a.example");
	free(r);
}

static void zone_timeout_name_never_answered(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	struct dnsd_counters c;

	assert_int_equal(ask_udp(f->port, "tz.example", SPFKIT_RR_TXT, 0, 0, r, 200), -1);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.unanswered, 1);
	assert_int_equal(c.answers, 0);
	free(r);
}

/* ---- truncation and EDNS0 ------------------------------------------------------- */

static void udp_over_512_truncated_then_tcp_complete(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	struct dnsd_counters c;

	assert_int_equal(ask_udp(f->port, "big.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_true(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->m.h.ancount, 0);
	assert_true(r->len <= 512);
	assert_int_equal(ask_tcp(f->port, "big.example", SPFKIT_RR_A, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_false(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->m.h.ancount, 40);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.truncated, 1);
	assert_int_equal(c.udp_queries, 1);
	assert_int_equal(c.tcp_queries, 1);
	free(r);
}

static void edns_udp_size_honoured(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, "big.example", SPFKIT_RR_A, 1, 1232, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_false(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->m.h.ancount, 40);
	assert_true(r->m.has_opt);
	assert_int_equal(r->m.udp_size, DNSD_EDNS_SIZE);
	free(r);
}

static void edns_size_below_answer_truncates(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(ask_udp(f->port, "huge.example", SPFKIT_RR_TXT, 1, 4096, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_true(r->m.h.flags & DNSD_F_TC);
	assert_true(r->m.has_opt);
	free(r);
}

static void edns_version_1_gets_badvers(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	unsigned char q[512];
	size_t n = make_query(q, 7, "a.example", SPFKIT_RR_A, 1, 1232);
	int fd = udp_socket();
	ssize_t got;

	q[n - 5] = 1; /* OPT TTL byte 2: the EDNS version */
	udp_send_raw(fd, f->port, q, n);
	got = udp_recv(fd, r->buf, sizeof(r->buf), 2000);
	close(fd);
	assert_true(got > 0);
	r->len = (size_t)got;
	parse_reply(r);
	want_rcode(r, 0); /* low 4 bits of BADVERS (16) */
	assert_true(r->m.has_opt);
	assert_int_equal(r->m.ext_rcode, 1);
	assert_int_equal(r->m.h.ancount, 0);
	free(r);
}

/* ---- faults -------------------------------------------------------------------- */

static void fault_timeout_sends_nothing(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "TXT.example.", 0, DNSD_TIMEOUT), 0);
	assert_int_equal(ask_udp(f->port, "txt.example", SPFKIT_RR_TXT, 0, 0, r, 200), -1);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	free(r);
}

static void fault_servfail(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_SERVFAIL), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_SERVFAIL);
	assert_int_equal(r->m.h.ancount, 0);
	assert_string_equal(r->m.qname, "a.example");
	free(r);
}

static void fault_for_one_type_only(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", SPFKIT_RR_AAAA, DNSD_SERVFAIL), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_AAAA, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_SERVFAIL);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.h.ancount, 2);
	free(r);
}

static void fault_exact_answer_overrides_any(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_SERVFAIL), 0);
	assert_int_equal(dnsd_fault(f->d, "a.example", SPFKIT_RR_A, DNSD_ANSWER), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_AAAA, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_SERVFAIL);
	free(r);
}

static void fault_cleared(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_SERVFAIL), 0);
	dnsd_clear_faults(f->d);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	free(r);
}

static void fault_truncate_forces_tcp(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "txt.example", 0, DNSD_TRUNCATE), 0);
	assert_int_equal(ask_udp(f->port, "txt.example", SPFKIT_RR_TXT, 1, 4096, r, 2000), 0);
	assert_true(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->m.h.ancount, 0);
	assert_int_equal(ask_tcp(f->port, "txt.example", SPFKIT_RR_TXT, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_false(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->m.h.ancount, 1);
	free(r);
}

static void delay_per_name_does_not_block_others(void **state)
{
	struct fx *f = *state;
	unsigned char q[512], buf[1024];
	size_t n1, n2;
	int slow = udp_socket(), fast = udp_socket();
	uint64_t t0, t_fast, t_slow;
	ssize_t got;

	assert_int_equal(dnsd_fault_delay(f->d, "txt.example", 0, 500), 0);
	n1 = make_query(q, 1, "txt.example", SPFKIT_RR_TXT, 0, 0);
	t0 = now_ms();
	udp_send_raw(slow, f->port, q, n1);
	n2 = make_query(q, 2, "a.example", SPFKIT_RR_A, 0, 0);
	udp_send_raw(fast, f->port, q, n2);
	got = udp_recv(fast, buf, sizeof(buf), 2000);
	t_fast = now_ms() - t0;
	assert_true(got > 0);
	got = udp_recv(slow, buf, sizeof(buf), 2000);
	t_slow = now_ms() - t0;
	assert_true(got > 0);
	if (t_fast >= 250)
		fail_msg("undelayed answer: got %llu ms, want < 250", (unsigned long long)t_fast);
	if (t_slow < 500)
		fail_msg("delayed answer: got %llu ms, want >= 500", (unsigned long long)t_slow);
	close(slow);
	close(fast);
}

static void delay_global(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	uint64_t t0 = now_ms(), t;

	dnsd_set_delay(f->d, 120);
	assert_int_equal(ask_tcp(f->port, "a.example", SPFKIT_RR_A, r, 2000), 0);
	t = now_ms() - t0;
	want_rcode(r, DNSD_RCODE_NOERROR);
	if (t < 120)
		fail_msg("global delay: got %llu ms, want >= 120", (unsigned long long)t);
	free(r);
}

static void malformed_loop(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_LOOP), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	assert_int_equal(r->parse_rc, SPFKIT_ESYNTAX);
	assert_non_null(strstr(r->m.why, "loop"));
	free(r);
}

static void malformed_past_end(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_PAST_END), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	assert_int_equal(r->parse_rc, SPFKIT_ESYNTAX);
	assert_string_equal(r->m.why, "RDLENGTH runs past the end of the message");
	free(r);
}

static void malformed_short_over_tcp(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_SHORT), 0);
	assert_int_equal(ask_tcp(f->port, "a.example", SPFKIT_RR_A, r, 2000), 0);
	assert_int_equal(r->len, 7);
	assert_int_equal(r->parse_rc, SPFKIT_ESYNTAX);
	assert_string_equal(r->m.why, "header cut short");
	free(r);
}

static void malformed_bad_id(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_BAD_ID), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_not_equal(r->m.h.id, 0x1234);
	assert_int_equal(r->m.h.ancount, 2);
	free(r);
}

static void malformed_garbage(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_GARBAGE), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	assert_int_equal(r->len, 64);
	assert_int_equal(dnsd_wire_get16(r->buf), 0x1234);
	free(r);
}

static void malformed_wrong_question(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_WRONG_QUESTION), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_string_equal(r->m.qname, "wrong-question.invalid");
	assert_string_equal(r->rrs[0].name, "wrong-question.invalid");
	free(r);
}

/* ---- hostile answers (hostile.c) ---------------------------------------------- */

/* RDATA bytes of answer record i. */
static const unsigned char *rdata(const struct reply *r, size_t i, size_t *len)
{
	assert_int_equal(r->parse_rc, 0);
	assert_true(i < r->m.nrr);
	*len = r->rrs[i].rdlen;
	return r->buf + r->rrs[i].rdoff;
}

/* TXT "" is one empty string by default; txt-no-strings sends RDLENGTH 0 instead. */
static void hostile_txt_no_strings(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t len;

	assert_int_equal(ask_udp(f->port, "empty.example", SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	assert_int_equal(r->m.h.ancount, 2);
	assert_memory_equal(rdata(r, 0, &len), "\0", 1);
	assert_int_equal(len, 1);
	assert_int_equal(dnsd_fault(f->d, "empty.example", 0, DNSD_TXT_NO_STRINGS), 0);
	assert_int_equal(ask_udp(f->port, "empty.example", SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	assert_int_equal(r->m.h.ancount, 2);
	(void)rdata(r, 0, &len);
	assert_int_equal(len, 0);
	assert_memory_equal(rdata(r, 1, &len), "\013v=spf1 -all", 12);
	assert_int_equal(len, 12);
	free(r);
}

static void hostile_txt_empty_strings(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t len;

	assert_int_equal(dnsd_fault(f->d, "txt.example", 0, DNSD_TXT_EMPTY_STRINGS), 0);
	assert_int_equal(ask_udp(f->port, "txt.example", SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	assert_memory_equal(rdata(r, 0, &len), "\0\013v=spf1 -all\0", 14);
	assert_int_equal(len, 14);
	free(r);
}

static void hostile_cname_loop_and_chain(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	char name[DNSD_WIRE_TEXT_MAX + 1];
	size_t off, nlen;
	const char *why = NULL;

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_CNAME_LOOP), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.nrr, 2);
	assert_string_equal(r->rrs[0].name, "a.example");
	assert_string_equal(r->rrs[1].name, "loop.dnsd.invalid");
	off = r->rrs[1].rdoff; /* the second CNAME points back at the question */
	assert_int_equal(dnsd_wire_read_name(r->buf, r->len, &off, name, sizeof(name), &nlen, &why),
			 0);
	assert_string_equal(name, "a.example");
	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_CNAME_CHAIN), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_int_equal(r->m.nrr, DNSD_CNAME_CHAIN + 1);
	assert_int_equal(r->rrs[DNSD_CNAME_CHAIN].type, SPFKIT_RR_A);
	assert_string_equal(r->rrs[DNSD_CNAME_CHAIN].name, "c20.dnsd.invalid");
	free(r);
}

static void hostile_pointer_tricks(void **state)
{
	static const enum dnsd_action acts[] = { DNSD_MAL_PTR_FORWARD, DNSD_MAL_PTR_LOOP2,
						 DNSD_MAL_PTR_BEYOND };
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(dnsd_fault(f->d, "a.example", 0, acts[i]), 0);
		assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 1, 1232, r, 2000), 0);
		assert_int_equal(r->parse_rc, SPFKIT_ESYNTAX);
		assert_string_equal(r->m.why, "compression pointer does not point backwards (loop)");
		assert_string_equal(r->m.qname, "a.example");
	}
	free(r);
}

/* truncate-always: TC=1 even over TCP, where truncate answers. */
static void hostile_tc_over_tcp(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();

	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_TC_ALWAYS), 0);
	assert_int_equal(ask_tcp(f->port, "a.example", SPFKIT_RR_A, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	assert_true(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->m.h.ancount, 0);
	free(r);
}

/* cut: over UDP the OPT and one byte before it are gone, TC=0; TCP gets it whole. */
static void hostile_cut(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	size_t whole;

	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 1, 1232, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	whole = r->len;
	assert_int_equal(dnsd_fault(f->d, "a.example", 0, DNSD_MAL_CUT), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 1, 1232, r, 2000), 0);
	assert_int_equal(r->len, whole - 12);
	assert_false(r->m.h.flags & DNSD_F_TC);
	assert_int_equal(r->parse_rc, SPFKIT_ESYNTAX);
	assert_int_equal(ask_tcp(f->port, "a.example", SPFKIT_RR_A, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	free(r);
}

/* corrupt: the bytes depend on the seed and the question only; the id and question stay. */
static void hostile_corrupt_is_seeded(void **state)
{
	struct fx *f = *state;
	struct reply *r1 = new_reply(), *r2 = new_reply();
	unsigned char q[512];
	size_t qlen = make_query(q, 0x1234, "big.example", SPFKIT_RR_A, 0, 0);
	int differs = 0;
	uint32_t seed;

	assert_int_equal(dnsd_fault(f->d, "big.example", 0, DNSD_MAL_CORRUPT), 0);
	for (seed = 1; seed <= 8; seed++) {
		dnsd_set_seed(f->d, seed);
		assert_int_equal(ask_tcp(f->port, "big.example", SPFKIT_RR_A, r1, 2000), 0);
		assert_int_equal(ask_tcp(f->port, "big.example", SPFKIT_RR_A, r2, 2000), 0);
		assert_int_equal(dnsd_wire_get16(r1->buf), 0x4321); /* ask_tcp's id */
		assert_true(r1->len >= qlen);
		assert_memory_equal(r1->buf + 12, q + 12, qlen - 12);
		assert_int_equal(r1->len, r2->len);
		assert_memory_equal(r1->buf, r2->buf, r1->len);
		dnsd_set_seed(f->d, seed + 1000);
		assert_int_equal(ask_tcp(f->port, "big.example", SPFKIT_RR_A, r2, 2000), 0);
		differs += r1->len != r2->len || memcmp(r1->buf, r2->buf, r1->len) != 0;
	}
	assert_true(differs >= 7);
	free(r1);
	free(r2);
}

static void action_names_round_trip(void **state)
{
	enum dnsd_action a = DNSD_ANSWER;
	unsigned i;

	(void)state;
	assert_int_equal(dnsd_action_parse("Past-End", 8, &a), 0);
	assert_int_equal(a, DNSD_MAL_PAST_END);
	assert_string_equal(dnsd_action_name(DNSD_MAL_WRONG_QUESTION), "wrong-question");
	assert_int_equal(dnsd_action_parse("loops", 5, &a), SPFKIT_EINVAL);
	for (i = 0; i <= DNSD_ACTION_LAST; i++) {
		const char *n = dnsd_action_name((enum dnsd_action)i);

		assert_int_equal(dnsd_action_parse(n, strlen(n), &a), 0);
		assert_int_equal(a, (enum dnsd_action)i);
	}
	assert_string_equal(dnsd_action_name(DNSD_MAL_CORRUPT), "corrupt");
	assert_string_equal(dnsd_action_name(DNSD_ACTION_LAST + 1), "?");
}

/*
 * Property: whatever query the parser accepts (valid ones mutated at
 * random, reproducibly), the server's answer parses, carries the id, and
 * over UDP fits the limit.
 */
static int check_mutated(const struct spfkit_zone *z, struct spfkit__buf *b, unsigned char *q,
			 size_t n, unsigned i, uint32_t r)
{
	static const enum dnsd_action acts[] = { DNSD_ANSWER, DNSD_SERVFAIL, DNSD_TRUNCATE };
	struct dnsd_wire_msg m, rm;
	struct dnsd_reply_in in;
	size_t limit;
	int rc;

	if (dnsd_wire_parse(q, n, &m, NULL, 0) != 0 || !m.has_question)
		return 0;
	in = (struct dnsd_reply_in){ &m, z, acts[r % 3], (int)((r >> 4) & 1), 300, r };
	rc = dnsd__respond(b, &in);
	if (rc == DNSD_SILENT)
		return 1;
	if (rc != DNSD_SEND && rc != DNSD_TRUNC)
		fail_msg("query %u: dnsd__respond got %d, want SEND or TRUNC", i, rc);
	if (dnsd_wire_parse((unsigned char *)b->data, b->len, &rm, NULL, 0) != 0)
		fail_msg("query %u (%s): answer does not parse: %s", i, m.qname, rm.why);
	assert_int_equal(rm.h.id, m.h.id);
	limit = m.has_opt && m.udp_size > 512 ? m.udp_size : 512;
	if (!in.tcp && b->len > limit)
		fail_msg("query %u: UDP answer of %zu bytes, limit %zu", i, b->len, limit);
	return 1;
}

static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void answers_to_mutated_queries_parse(void **state)
{
	static const char *const names[] = { "a.example", "big.example", "long.example",
					     "no.such.example", "tz.example", "mx.example" };
	static const uint16_t types[] = { 1, 28, 15, 16, 6, 255 };
	struct spfkit_zone *z = make_zone();
	struct spfkit__buf b;
	uint32_t x = 2463534242u;
	unsigned i, used = 0;

	(void)state;
	spfkit__buf_init(&b, NULL, DNSD_WIRE_MAX);
	for (i = 0; i < 30000; i++) {
		unsigned char q[600];
		uint32_t r = xorshift(&x);
		size_t n = make_query(q, (uint16_t)i, names[r % 6], types[(r >> 3) % 6],
				      (int)((r >> 6) & 1), (uint16_t)(r >> 16));
		unsigned k, flips = (r >> 7) % 4; /* 0: the query as made */

		for (k = 0; k < flips; k++) {
			uint32_t v = xorshift(&x);

			q[2 + v % (n - 2)] = (unsigned char)(v >> 24); /* keep the id */
		}
		used += (unsigned)check_mutated(z, &b, q, n, i, xorshift(&x));
	}
	assert_true(used > 1000); /* the property was really exercised */
	spfkit__buf_free(&b);
	spfkit_zone_free(z);
}

/* ---- counters -------------------------------------------------------------------- */

static void counters_count_and_reset(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	struct dnsd_counters c;
	struct dnsd_query log[8];

	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	assert_int_equal(ask_udp(f->port, "A.EXAMPLE", SPFKIT_RR_AAAA, 0, 0, r, 2000), 0);
	assert_int_equal(ask_tcp(f->port, "txt.example", SPFKIT_RR_TXT, r, 2000), 0);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.udp_queries, 2);
	assert_int_equal(c.tcp_queries, 1);
	assert_int_equal(c.answers, 3);
	assert_int_equal(dnsd_queries(f->d), 3);
	assert_int_equal(dnsd_query_count(f->d, "a.example.", 0), 2);
	assert_int_equal(dnsd_query_count(f->d, "a.example", SPFKIT_RR_AAAA), 1);
	assert_int_equal(dnsd_query_log(f->d, log, 8), 3);
	assert_string_equal(log[1].name, "A.EXAMPLE");
	assert_int_equal(log[1].type, SPFKIT_RR_AAAA);
	assert_int_equal(log[2].tcp, 1);
	assert_true(log[0].t_us <= log[1].t_us && log[1].t_us <= log[2].t_us);
	dnsd_reset_counters(f->d);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.udp_queries + c.tcp_queries + c.answers, 0);
	assert_int_equal(dnsd_query_count(f->d, "a.example", 0), 0);
	assert_int_equal(dnsd_query_log(f->d, log, 8), 0);
	free(r);
}

static void rounds_from_receive_times(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	unsigned char q[512];
	int fd = udp_socket();
	size_t n;

	dnsd_set_delay(f->d, 300);
	/* round 1: two queries at once; round 2 and 3: one each, after the answers */
	n = make_query(q, 1, "a.example", SPFKIT_RR_A, 0, 0);
	udp_send_raw(fd, f->port, q, n);
	n = make_query(q, 2, "mx.example", SPFKIT_RR_MX, 0, 0);
	udp_send_raw(fd, f->port, q, n);
	assert_true(udp_recv(fd, r->buf, sizeof(r->buf), 2000) > 0);
	assert_true(udp_recv(fd, r->buf, sizeof(r->buf), 2000) > 0);
	assert_int_equal(ask_udp(f->port, "txt.example", SPFKIT_RR_TXT, 0, 0, r, 2000), 0);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_AAAA, 0, 0, r, 2000), 0);
	assert_int_equal(dnsd_rounds(f->d, 150), 3);
	close(fd);
	free(r);
}

/* ---- hostile clients ---------------------------------------------------------------- */

static void survives_udp_garbage(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	unsigned char junk[300];
	int fd = udp_socket(), i;
	struct dnsd_counters c;

	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37 + 11);
	junk[2] &= 0x7f; /* QR clear: a "query" the server must not crash on */
	udp_send_raw(fd, f->port, junk, 5);            /* short: ignored */
	udp_send_raw(fd, f->port, junk, sizeof(junk)); /* garbage: FORMERR */
	udp_send_raw(fd, f->port, junk, 0);            /* empty datagram */
	assert_true(udp_recv(fd, r->buf, sizeof(r->buf), 2000) > 0);
	assert_int_equal(r->buf[3] & 0x0f, DNSD_RCODE_FORMERR);
	assert_int_equal(udp_recv(fd, r->buf, sizeof(r->buf), 100), -1);
	junk[2] |= 0x80; /* a response: never answered, so two servers cannot ping-pong */
	udp_send_raw(fd, f->port, junk, sizeof(junk));
	assert_int_equal(udp_recv(fd, r->buf, sizeof(r->buf), 100), -1);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.bad_queries, 4);
	close(fd);
	free(r);
}

static void opcode_and_class_refused(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	unsigned char q[512];
	size_t n = make_query(q, 9, "a.example", SPFKIT_RR_A, 0, 0);
	int fd = udp_socket();

	q[2] |= 0x10; /* opcode 2 (STATUS) */
	udp_send_raw(fd, f->port, q, n);
	r->len = (size_t)udp_recv(fd, r->buf, sizeof(r->buf), 2000);
	parse_reply(r);
	want_rcode(r, DNSD_RCODE_NOTIMP);
	q[2] &= (unsigned char)~0x10;
	q[n - 1] = 3; /* class CH */
	udp_send_raw(fd, f->port, q, n);
	r->len = (size_t)udp_recv(fd, r->buf, sizeof(r->buf), 2000);
	parse_reply(r);
	want_rcode(r, DNSD_RCODE_REFUSED);
	close(fd);
	free(r);
}

static void tcp_two_queries_in_one_write(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	unsigned char q[1024];
	size_t n1 = make_query(q + 2, 1, "a.example", SPFKIT_RR_A, 0, 0), n2;
	int fd = tcp_connect(f->port);

	q[0] = 0;
	q[1] = (unsigned char)n1;
	n2 = make_query(q + 4 + n1, 2, "txt.example", SPFKIT_RR_TXT, 0, 0);
	q[2 + n1] = 0;
	q[3 + n1] = (unsigned char)n2;
	assert_int_equal(send(fd, q, n1 + n2 + 4, 0), (ssize_t)(n1 + n2 + 4));
	assert_int_equal(tcp_read_reply(fd, r, 2000), 0);
	assert_int_equal(r->m.h.id, 1);
	assert_int_equal(tcp_read_reply(fd, r, 2000), 0);
	assert_int_equal(r->m.h.id, 2);
	want_rcode(r, DNSD_RCODE_NOERROR);
	close(fd);
	free(r);
}

static void tcp_stalled_prefix_closed_after_idle(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	unsigned char pre[2] = { 0, 100 };
	int fd = tcp_connect(f->port);
	uint64_t t0 = now_ms(), t;
	struct dnsd_counters c;
	struct pollfd p = { fd, POLLIN, 0 };

	assert_int_equal(send(fd, pre, 2, 0), 2);
	assert_int_equal(poll(&p, 1, 3000), 1);
	assert_int_equal(recv(fd, r->buf, 1, 0), 0); /* closed by the server */
	t = now_ms() - t0;
	if (t < 150 || t > 2000)
		fail_msg("stalled client closed after %llu ms, want about 200",
			 (unsigned long long)t);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.tcp_idle_closed, 1);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	close(fd);
	free(r);
}

static void tcp_zero_length_prefix_hung_up(void **state)
{
	struct fx *f = *state;
	unsigned char pre[2] = { 0, 0 }, b;
	int fd = tcp_connect(f->port);
	struct pollfd p = { fd, POLLIN, 0 };

	assert_int_equal(send(fd, pre, 2, 0), 2);
	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_int_equal(recv(fd, &b, 1, 0), 0);
	close(fd);
}

static void tcp_many_connections(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	int fds[100], i;
	struct dnsd_counters c;

	for (i = 0; i < 100; i++)
		fds[i] = tcp_connect(f->port);
	/* the newest connection is served although 100 > DNSD_MAX_TCP are open */
	tcp_send_query(fds[99], "a.example", SPFKIT_RR_A);
	assert_int_equal(tcp_read_reply(fds[99], r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	dnsd_counters(f->d, &c);
	assert_int_equal(c.tcp_accepted, 100);
	assert_int_equal(c.tcp_evicted, 100 - DNSD_MAX_TCP);
	for (i = 0; i < 100; i++)
		close(fds[i]);
	free(r);
}

static void tcp_client_that_does_not_read(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	int fd = tcp_connect(f->port), i;

	/* 60 KiB answers, never read: the server buffers up to its cap, then lets go */
	for (i = 0; i < 40; i++)
		if (tcp_send_raw_query(fd, "huge.example", SPFKIT_RR_TXT) != 0)
			break; /* the server has let go already */
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_NOERROR);
	close(fd);
	free(r);
}

/* ---- lifecycle --------------------------------------------------------------------- */

static void set_zone_swaps(void **state)
{
	struct fx *f = *state;
	struct reply *r = new_reply();
	struct spfkit_zone *z2 = NULL;
	unsigned char a[4] = { 198, 51, 100, 7 };

	assert_int_equal(spfkit_zone_new(NULL, &z2), 0);
	add(z2, "a.example", SPFKIT_RR_A, a, 4, 0);
	dnsd_set_zone(f->d, z2);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	assert_int_equal(r->m.h.ancount, 1);
	assert_memory_equal(r->buf + r->rrs[0].rdoff, a, 4);
	dnsd_set_zone(f->d, NULL);
	spfkit_zone_free(z2);
	assert_int_equal(ask_udp(f->port, "a.example", SPFKIT_RR_A, 0, 0, r, 2000), 0);
	want_rcode(r, DNSD_RCODE_SERVFAIL);
	dnsd_set_zone(f->d, f->zone);
	free(r);
}

static void refuses_non_loopback(void **state)
{
	static const char *const bad[] = { "0.0.0.0", "192.0.2.1", "::", "2001:db8::1",
					   "localhost", "" };
	struct dnsd *d = (struct dnsd *)1;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dnsd_options opt = { .addr = bad[i] };
		int rc = dnsd_start(&opt, NULL, &d);

		if (rc != SPFKIT_EINVAL)
			fail_msg("dnsd_start(\"%s\"): got %d, want SPFKIT_EINVAL", bad[i], rc);
		assert_null(d);
	}
}

static void listens_on_ipv6_loopback(void **state)
{
	struct dnsd_options opt = { .addr = "::1" };
	struct dnsd *d = NULL;
	int rc = dnsd_start(&opt, NULL, &d);

	(void)state;
	if (rc == SPFKIT_EIO)
		skip(); /* no IPv6 on this machine */
	assert_int_equal(rc, 0);
	assert_true(dnsd_port(d) > 0);
	assert_string_equal(dnsd_addr(d), "::1");
	dnsd_stop(d);
}

/* Allocation counting: stop must give back every byte the server took. */
struct counting {
	long live;
};

static void *c_alloc(void *u, size_t n)
{
	((struct counting *)u)->live++;
	return malloc(n);
}

static void *c_realloc(void *u, void *p, size_t n)
{
	if (p == NULL)
		((struct counting *)u)->live++;
	return realloc(p, n);
}

static void c_free(void *u, void *p)
{
	((struct counting *)u)->live--;
	free(p);
}

static void stop_frees_everything(void **state)
{
	struct counting cnt = { 0 };
	struct spfkit_allocator al = { c_alloc, c_realloc, c_free, &cnt };
	struct dnsd_options opt = { .alloc = &al, .delay_ms = 5000 };
	struct spfkit_zone *z = make_zone();
	struct dnsd *d = NULL;
	unsigned char q[512];
	size_t n = make_query(q, 1, "a.example", SPFKIT_RR_A, 0, 0);
	int ufd = udp_socket(), tfd;

	(void)state;
	assert_int_equal(dnsd_start(&opt, z, &d), 0);
	assert_int_equal(dnsd_fault(d, "x.example", 0, DNSD_SERVFAIL), 0);
	udp_send_raw(ufd, dnsd_port(d), q, n); /* an answer left waiting 5 s */
	tfd = tcp_connect(dnsd_port(d));
	tcp_send_query(tfd, "txt.example", SPFKIT_RR_TXT); /* another, on an open connection */
	while (dnsd_queries(d) < 2)
		usleep(1000);
	usleep(20000);
	assert_true(cnt.live > 0);
	dnsd_stop(d);
	if (cnt.live != 0)
		fail_msg("allocations left after dnsd_stop: got %ld, want 0", cnt.live);
	close(ufd);
	close(tfd);
	spfkit_zone_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wire_name_limits),
		cmocka_unit_test(wire_name_escapes_round_trip),
		cmocka_unit_test(wire_pointer_must_point_back),
		cmocka_unit_test(wire_parse_rejects_short_and_trailing),
		cmocka_unit_test(wire_type_names),
		cmocka_unit_test(action_names_round_trip),
		cmocka_unit_test_setup_teardown(answers_a_over_udp, setup, teardown),
		cmocka_unit_test_setup_teardown(answers_aaaa, setup, teardown),
		cmocka_unit_test_setup_teardown(answers_mx, setup, teardown),
		cmocka_unit_test_setup_teardown(answers_mx_target_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(answers_txt, setup, teardown),
		cmocka_unit_test_setup_teardown(name_with_spaces_found, setup, teardown),
		cmocka_unit_test_setup_teardown(txt_over_255_split_into_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(txt_of_60k_complete_over_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(nxdomain_has_soa, setup, teardown),
		cmocka_unit_test_setup_teardown(nodata_has_soa, setup, teardown),
		cmocka_unit_test_setup_teardown(zone_timeout_name_never_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(udp_over_512_truncated_then_tcp_complete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(edns_udp_size_honoured, setup, teardown),
		cmocka_unit_test_setup_teardown(edns_size_below_answer_truncates, setup, teardown),
		cmocka_unit_test_setup_teardown(edns_version_1_gets_badvers, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_timeout_sends_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_servfail, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_for_one_type_only, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_exact_answer_overrides_any, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_cleared, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_truncate_forces_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(delay_per_name_does_not_block_others, setup, teardown),
		cmocka_unit_test_setup_teardown(delay_global, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_past_end, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_short_over_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_bad_id, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_wrong_question, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_txt_no_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_txt_empty_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_cname_loop_and_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_pointer_tricks, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_tc_over_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_corrupt_is_seeded, setup, teardown),
		cmocka_unit_test(answers_to_mutated_queries_parse),
		cmocka_unit_test_setup_teardown(counters_count_and_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(rounds_from_receive_times, setup, teardown),
		cmocka_unit_test_setup_teardown(survives_udp_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(opcode_and_class_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(tcp_two_queries_in_one_write, setup, teardown),
		cmocka_unit_test_setup_teardown(tcp_stalled_prefix_closed_after_idle, setup_idle,
						teardown),
		cmocka_unit_test_setup_teardown(tcp_zero_length_prefix_hung_up, setup, teardown),
		cmocka_unit_test_setup_teardown(tcp_many_connections, setup, teardown),
		cmocka_unit_test_setup_teardown(tcp_client_that_does_not_read, setup, teardown),
		cmocka_unit_test_setup_teardown(set_zone_swaps, setup, teardown),
		cmocka_unit_test(refuses_non_loopback),
		cmocka_unit_test(listens_on_ipv6_loopback),
		cmocka_unit_test(stop_frees_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
