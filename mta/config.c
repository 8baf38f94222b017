/*
 * Reader of policyd-spf.conf (pypolicyd-spf's format, see config.h).
 * Names, spellings and defaults follow policyd-spf 3.0 and its
 * policyd-spf.conf(5); where that program silently does something odd
 * (a value in the wrong case, a space in a list) we say so, with the
 * file and the line.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "spfkit_util.h"

enum kind {
	K_INT,     /* decimal integer in [lo, hi] */
	K_BOOL,    /* True / False */
	K_YESNO,   /* Yes / No */
	K_REJECT,  /* Fail Softfail SPF_Not_Pass Null False No_Check */
	K_NETS,    /* comma list of CIDR networks */
	K_NAMES,   /* comma list of domain names */
	K_ID,      /* Authserv_Id: one token; HOSTNAME = gethostname() */
	K_ACTION,  /* a Postfix access(5) action or restriction class */
	K_HEADER,  /* SPF, AR, None */
	K_REASON,  /* text with {rejectdefer} {spf} {url} */
	K_URL,     /* printable text, no spaces */
	K_IP,      /* one address */
	K_DEFER,   /* defer_if_permit / 451 */
	K_TESTONLY_OLD, /* defaultSeedOnly: old name of TestOnly */
	K_UNSUPPORTED,  /* accepted, ignored, with a warning */
	K_MSTR,    /* a milter setting: printable text, no spaces */
	K_OCTAL,   /* UMask: octal, at most 0777 */
};

struct option {
	const char *name;
	enum kind kind;
	size_t off;
	int lo, hi;
};

#define F(field) offsetof(struct spfkit__mta_config, field)

/* Every name policyd-spf 3.0 reads, plus ours (marked). */
static const struct option options[] = {
	{"debugLevel", K_INT, F(debug_level), -1, 1000},
	{"TestOnly", K_INT, F(test_only), 0, 1},
	{"defaultSeedOnly", K_TESTONLY_OLD, F(test_only), 0, 1},
	{"HELO_reject", K_REJECT, F(helo_reject), 1, 0},
	{"Mail_From_reject", K_REJECT, F(mail_from_reject), 0, 0},
	{"PermError_reject", K_BOOL, F(permerror_reject), 0, 0},
	{"TempError_Defer", K_BOOL, F(temperror_defer), 0, 0},
	{"skip_addresses", K_NETS, F(skip_addresses), 0, 0},
	{"Whitelist", K_NETS, F(whitelist), 0, 0},
	{"HELO_Whitelist", K_NAMES, F(helo_whitelist), 0, 0},
	{"Domain_Whitelist", K_NAMES, F(domain_whitelist), 0, 0},
	{"Domain_Whitelist_PTR", K_NAMES, F(domain_whitelist_ptr), 0, 0},
	{"Reject_Not_Pass_Domains", K_NAMES, F(reject_not_pass_domains), 0, 0},
	{"No_Mail", K_BOOL, F(no_mail), 0, 0},
	{"SPF_Enhanced_Status_Codes", K_YESNO, F(enhanced_status_codes), 0, 0},
	{"Header_Type", K_HEADER, F(header_type), 0, 0},
	{"Hide_Receiver", K_YESNO, F(hide_receiver), 0, 0},
	{"Authserv_Id", K_ID, F(authserv_id), 0, 0},
	{"Lookup_Time", K_INT, F(lookup_time), 1, 3600},
	{"Whitelist_Lookup_Time", K_INT, F(whitelist_lookup_time), 1, 3600},
	{"Void_Limit", K_INT, F(void_limit), 0, 100},
	{"Reason_Message", K_REASON, F(reason_message), 0, 0},
	{"Prospective", K_IP, F(prospective), 0, 0},
	{"HELO_pass_restriction", K_ACTION, F(helo_pass_restriction), 0, 0},
	{"Mail_From_pass_restriction", K_ACTION, F(mail_from_pass_restriction), 0, 0},
	{"Mock", K_BOOL, F(mock), 0, 0},
	{"QueueID", K_BOOL, F(queue_id), 0, 0},
	{"Per_User", K_MSTR, F(per_user), 0, 0}, /* spfkit-policyd: policyd/peruser.c */
	{"TempError_Action", K_DEFER, F(temperror_action), 0, 0}, /* ours */
	{"Reason_URL", K_URL, F(reason_url), 0, 0},               /* ours */
	/* pyspf-milter's, for spfkit-milter */
	{"Socket", K_MSTR, F(socket), 0, 0},
	{"PidFile", K_MSTR, F(pid_file), 0, 0},
	{"UserID", K_MSTR, F(user_id), 0, 0},
	{"UMask", K_OCTAL, F(umask), 0, 0777},
	{"InternalHosts", K_NETS, F(internal_hosts), 0, 0},
	{"IntHosts", K_NETS, F(internal_hosts), 0, 0},
	{"MacroList", K_MSTR, F(macro_list), 0, 0},
	{"Skip_Authenticated", K_YESNO, F(skip_authenticated), 0, 0}, /* ours */
	{"Skip_Verified", K_YESNO, F(skip_verified), 0, 0},           /* ours */
	{"Delete_Received_SPF", K_YESNO, F(delete_received_spf), 0, 0}, /* ours */
	{"Milter_Time_Limit", K_INT, F(milter_time_limit), 1, 3600},     /* ours */
	{"Metrics_Listen", K_MSTR, F(metrics_listen), 0, 0},            /* ours: issue 29 */
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static const char *const reject_names[] = {
	[SPFKIT_MTA_REJECT_FAIL] = "Fail",         [SPFKIT_MTA_REJECT_SOFTFAIL] = "Softfail",
	[SPFKIT_MTA_REJECT_NOT_PASS] = "SPF_Not_Pass", [SPFKIT_MTA_REJECT_NULL] = "Null",
	[SPFKIT_MTA_REJECT_FALSE] = "False",       [SPFKIT_MTA_REJECT_NO_CHECK] = "No_Check",
};

/* One parse: where we are and what went wrong so far. */
struct reader {
	struct spfkit__mta_config *cfg;
	const char *label;
	unsigned line;
	unsigned set_on[N_OPTIONS]; /* line that last set each option */
	spfkit__mta_diag_fn *diag;
	void *arg;
	int errors;
	int nomem;
};

static void report(struct reader *r, int is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void spfkit__mta_vdiag(spfkit__mta_diag_fn *diag, void *arg, const char *file, unsigned line,
		       int is_error, const char *fmt, va_list ap)
{
	struct spfkit__mta_diag d;
	char text[512];

	if (diag == NULL)
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	d.file = file;
	d.line = line;
	d.is_error = is_error;
	d.text = text;
	diag(arg, &d);
}

static void report(struct reader *r, int is_error, const char *fmt, ...)
{
	va_list ap;

	if (is_error)
		r->errors++;
	va_start(ap, fmt);
	spfkit__mta_vdiag(r->diag, r->arg, r->label, r->line, is_error, fmt, ap);
	va_end(ap);
}

/* A printable copy of (admin-written) text for a message, cut at 60 bytes. */
static const char *shown(const char *s, size_t len, char *out, size_t size)
{
	size_t i, n = len < size - 1 ? len : size - 1;

	for (i = 0; i < n; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[n] = '\0';
	return out;
}

#define SHOWN(s, len) shown((s), (len), (char[64]){0}, 64)

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

void spfkit__mta_conf_trim(const char **s, size_t *len)
{
	while (*len > 0 && is_space((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && is_space((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static int text_is(const char *s, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(s, want, len) == 0;
}

/* Replace *slot with a copy of s; 0 or -1 (out of memory, recorded). */
static int set_string(struct reader *r, char **slot, const char *s, size_t len)
{
	char *copy = spfkit__strndup(r->cfg->alloc, s, len);

	if (copy == NULL) {
		r->nomem = 1;
		return -1;
	}
	spfkit__free(r->cfg->alloc, *slot);
	*slot = copy;
	return 0;
}

/* ---- values ----------------------------------------------------------- */

static void take_int(struct reader *r, const struct option *o, const char *v, size_t len)
{
	size_t i = 0;
	long n = 0;
	int neg = 0;

	if (len > 0 && (v[0] == '-' || v[0] == '+')) {
		neg = v[0] == '-';
		i = 1;
	}
	if (i == len || len - i > 9) {
		report(r, 1, "%s: '%s' is not a number", o->name, SHOWN(v, len));
		return;
	}
	for (; i < len; i++) {
		if (!spfkit__is_digit((unsigned char)v[i])) {
			report(r, 1, "%s: '%s' is not a number", o->name, SHOWN(v, len));
			return;
		}
		n = n * 10 + (v[i] - '0');
	}
	n = neg ? -n : n;
	if (n < o->lo || n > o->hi) {
		report(r, 1, "%s: %ld is out of range %d..%d", o->name, n, o->lo, o->hi);
		return;
	}
	*(int *)((char *)r->cfg + o->off) = (int)n;
}

/* UMask: octal as pyspf-milter writes it ("007", "0o007" is Python's, not ours). */
static void take_octal(struct reader *r, const struct option *o, const char *v, size_t len)
{
	size_t i;
	int n = 0;

	if (len == 0 || len > 4) {
		report(r, 1, "%s: '%s' is not an octal mode", o->name, SHOWN(v, len));
		return;
	}
	for (i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '7') {
			report(r, 1, "%s: '%s' is not an octal mode", o->name, SHOWN(v, len));
			return;
		}
		n = n * 8 + (v[i] - '0');
	}
	if (n > o->hi) {
		report(r, 1, "%s: '%s' is over 0777", o->name, SHOWN(v, len));
		return;
	}
	*(int *)((char *)r->cfg + o->off) = n;
}

/* Exact spelling, as policyd-spf compares; a case slip gets a hint. */
static int pick(struct reader *r, const struct option *o, const char *v, size_t len,
		const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && text_is(v, len, names[i]))
			return (int)i;
	for (i = 0; i < n; i++)
		if (names[i] != NULL && spfkit__memcaseeq(v, len, names[i], strlen(names[i]))) {
			report(r, 1, "%s: '%s' must be spelt '%s' (policyd-spf compares exactly)",
			       o->name, SHOWN(v, len), names[i]);
			return -1;
		}
	report(r, 1, "%s: unknown value '%s'", o->name, SHOWN(v, len));
	return -1;
}

static void take_bool(struct reader *r, const struct option *o, const char *v, size_t len,
		      const char *no, const char *yes)
{
	const char *names[2] = {no, yes};
	int i = pick(r, o, v, len, names, 2);

	if (i >= 0)
		*(int *)((char *)r->cfg + o->off) = i;
}

static void take_reject(struct reader *r, const struct option *o, const char *v, size_t len)
{
	int i = pick(r, o, v, len, reject_names, sizeof(reject_names) / sizeof(reject_names[0]));

	if (i < 0)
		return;
	/* o->lo marks HELO_reject: "Null" is about the HELO of a null sender */
	if (i == SPFKIT_MTA_REJECT_NULL && !o->lo) {
		report(r, 1, "%s: 'Null' applies to HELO_reject only", o->name);
		return;
	}
	*(enum spfkit__mta_reject *)((char *)r->cfg + o->off) = (enum spfkit__mta_reject)i;
}

static void take_defer(struct reader *r, const struct option *o, const char *v, size_t len)
{
	static const char *const names[] = {"defer_if_permit", "451"};
	int i = pick(r, o, v, len, names, 2);

	if (i >= 0)
		r->cfg->temperror_action = (enum spfkit__mta_defer)i;
}

static void take_header(struct reader *r, const struct option *o, const char *v, size_t len)
{
	int bits = 0, none = 0;
	size_t start = 0, i;

	for (i = 0; i <= len; i++) {
		const char *e;
		size_t n;

		if (i < len && v[i] != ',')
			continue;
		e = v + start;
		n = i - start;
		start = i + 1;
		spfkit__mta_conf_trim(&e, &n);
		if (text_is(e, n, "SPF"))
			bits |= SPFKIT_MTA_HEADER_SPF;
		else if (text_is(e, n, "AR"))
			bits |= SPFKIT_MTA_HEADER_AR;
		else if (text_is(e, n, "None"))
			none = 1;
		else {
			report(r, 1, "%s: unknown header type '%s' (SPF, AR or None)", o->name,
			       SHOWN(e, n));
			return;
		}
	}
	if (none && bits) {
		report(r, 1, "%s: None cannot be combined with SPF or AR", o->name);
		return;
	}
	r->cfg->header_type = bits;
	r->cfg->header_type_set = 1;
}

/* {rejectdefer} {spf} {url}, {{ and }}: what Python's str.format accepts here. */
static int reason_ok(struct reader *r, const struct option *o, const char *v, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *close;
		size_t n;

		if ((v[i] == '{' || v[i] == '}') && i + 1 < len && v[i + 1] == v[i]) {
			i += 2;
			continue;
		}
		if (v[i] == '}') {
			report(r, 1, "%s: single '}' at column %zu (write '}}')", o->name, i + 1);
			return 0;
		}
		if (v[i] != '{') {
			i++;
			continue;
		}
		close = memchr(v + i, '}', len - i);
		n = close == NULL ? 0 : (size_t)(close - (v + i)) - 1;
		if (close == NULL || !(text_is(v + i + 1, n, "rejectdefer") ||
				       text_is(v + i + 1, n, "spf") || text_is(v + i + 1, n, "url"))) {
			report(r, 1, "%s: unknown placeholder at column %zu (use {rejectdefer}, {spf}, {url})",
			       o->name, i + 1);
			return 0;
		}
		i += n + 2;
	}
	return 1;
}

static int printable(const char *v, size_t len, int spaces)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c < 0x20 || c == 0x7f || (c == ' ' && !spaces))
			return 0;
	}
	return 1;
}

static void take_text(struct reader *r, const struct option *o, const char *v, size_t len)
{
	char **slot = (char **)((char *)r->cfg + o->off);

	if (len == 0) {
		report(r, 1, "%s: empty value", o->name);
		return;
	}
	if (o->kind == K_REASON && !reason_ok(r, o, v, len))
		return;
	if (!printable(v, len, o->kind == K_REASON || o->kind == K_ACTION)) {
		report(r, 1, "%s: '%s' holds a space or a control byte", o->name, SHOWN(v, len));
		return;
	}
	if (o->kind == K_ID && (memchr(v, ';', len) != NULL || memchr(v, '"', len) != NULL)) {
		report(r, 1, "%s: '%s' is not an RFC 8601 authserv-id", o->name, SHOWN(v, len));
		return;
	}
	if (o->kind == K_ID && text_is(v, len, "HOSTNAME")) {
		char host[256];

		if (gethostname(host, sizeof(host)) != 0)
			host[0] = '\0';
		host[sizeof(host) - 1] = '\0';
		set_string(r, slot, host, strlen(host));
		return;
	}
	set_string(r, slot, v, len);
}

/* ---- lists ------------------------------------------------------------ */

/* "a.b.c.d[/n]" or "ipv6[/n]", host bits clear, as Python's ip_network(). */
static int parse_net(const char *v, size_t len, struct spfkit__mta_net *net)
{
	const char *slash = memchr(v, '/', len);
	size_t alen = slash ? (size_t)(slash - v) : len, i;
	char tmp[64];
	unsigned max, prefix = 0;

	if (alen == 0 || alen >= sizeof(tmp))
		return -1;
	memcpy(tmp, v, alen);
	tmp[alen] = '\0';
	memset(net, 0, sizeof(*net));
	net->family = memchr(tmp, ':', alen) ? 6 : 4;
	if (inet_pton(net->family == 6 ? AF_INET6 : AF_INET, tmp, net->addr) != 1)
		return -1;
	max = net->family == 6 ? 128 : 32;
	if (slash == NULL) {
		net->prefix = max;
		return 0;
	}
	if (alen + 1 == len || len - alen - 1 > 3)
		return -1;
	for (i = alen + 1; i < len; i++) {
		if (!spfkit__is_digit((unsigned char)v[i]))
			return -1;
		prefix = prefix * 10 + (unsigned)(v[i] - '0');
	}
	if (prefix > max)
		return -1;
	net->prefix = prefix;
	for (i = prefix; i < max; i++)
		if (net->addr[i / 8] & (0x80u >> (i % 8)))
			return -2;
	return 0;
}

/*
 * Walk a comma list. Each entry is trimmed; a space inside the list gets
 * a warning, since policyd-spf keeps the space and so never matches that
 * entry (or, for networks, stops reading the list there).
 */
static size_t split_list(struct reader *r, const struct option *o, const char *v, size_t len,
			 const char **items, size_t *lens)
{
	size_t start = 0, i, n = 0;
	int spaced = 0;

	for (i = 0; i <= len; i++) {
		const char *e;
		size_t el;

		if (i < len && v[i] != ',')
			continue;
		e = v + start;
		el = i - start;
		start = i + 1;
		if (el > 0 && (is_space((unsigned char)e[0]) || is_space((unsigned char)e[el - 1])))
			spaced = 1;
		spfkit__mta_conf_trim(&e, &el);
		if (el == 0) {
			report(r, 1, "%s: empty entry in list", o->name);
			return SIZE_MAX;
		}
		if (n == SPFKIT_MTA_CONF_MAX_LIST) {
			report(r, 1, "%s: more than %u entries", o->name, SPFKIT_MTA_CONF_MAX_LIST);
			return SIZE_MAX;
		}
		items[n] = e;
		lens[n++] = el;
	}
	if (spaced)
		report(r, 0, "%s: space inside the list (policyd-spf would not match those entries; "
			     "write it without spaces)", o->name);
	return n;
}

static void take_nets(struct reader *r, const struct option *o, const char *v, size_t len,
		      const char **items, size_t *lens)
{
	struct spfkit__mta_netlist *list = (struct spfkit__mta_netlist *)((char *)r->cfg + o->off);
	struct spfkit__mta_net *nets;
	size_t n = split_list(r, o, v, len, items, lens), i;

	if (n == SIZE_MAX)
		return;
	nets = spfkit__calloc(r->cfg->alloc, n, sizeof(*nets));
	if (nets == NULL) {
		r->nomem = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		int rc = parse_net(items[i], lens[i], &nets[i]);

		if (rc == 0)
			continue;
		report(r, 1, rc == -2 ? "%s: '%s' has host bits set past its prefix"
				      : "%s: '%s' is not an IP network", o->name,
		       SHOWN(items[i], lens[i]));
		spfkit__free(r->cfg->alloc, nets);
		return;
	}
	spfkit__free(r->cfg->alloc, list->nets);
	list->nets = nets;
	list->count = n;
}

static void free_names(const struct spfkit_allocator *a, struct spfkit__mta_namelist *list)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		spfkit__free(a, list->names[i]);
	spfkit__free(a, list->names);
	list->names = NULL;
	list->count = 0;
}

static int name_ok(const char *s, size_t len)
{
	size_t i;

	if (len > 253)
		return 0;
	for (i = 0; i < len; i++)
		if (!spfkit__is_alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_')
			return 0;
	return 1;
}

static void take_names(struct reader *r, const struct option *o, const char *v, size_t len,
		       const char **items, size_t *lens)
{
	struct spfkit__mta_namelist *list = (struct spfkit__mta_namelist *)((char *)r->cfg + o->off);
	struct spfkit__mta_namelist fresh = {NULL, 0};
	size_t n = split_list(r, o, v, len, items, lens), i, j;

	if (n == SIZE_MAX)
		return;
	for (i = 0; i < n; i++) {
		if (lens[i] > 1 && items[i][lens[i] - 1] == '.')
			lens[i]--;
		if (!name_ok(items[i], lens[i])) {
			report(r, 1, "%s: '%s' is not a domain name", o->name, SHOWN(items[i], lens[i]));
			return;
		}
	}
	fresh.names = spfkit__calloc(r->cfg->alloc, n, sizeof(char *));
	if (fresh.names == NULL) {
		r->nomem = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		fresh.names[i] = spfkit__strndup(r->cfg->alloc, items[i], lens[i]);
		if (fresh.names[i] == NULL) {
			r->nomem = 1;
			free_names(r->cfg->alloc, &fresh);
			return;
		}
		fresh.count++;
		for (j = 0; j < lens[i]; j++)
			fresh.names[i][j] = (char)spfkit__lower((unsigned char)fresh.names[i][j]);
	}
	free_names(r->cfg->alloc, list);
	*list = fresh;
}

static void take_ip(struct reader *r, const struct option *o, const char *v, size_t len)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct spfkit__mta_net net;
	struct spfkit_ip *ip = &r->cfg->prospective;

	if (memchr(v, '/', len) != NULL || parse_net(v, len, &net) != 0) {
		report(r, 1, "%s: '%s' is not an IP address", o->name, SHOWN(v, len));
		return;
	}
	memset(ip, 0, sizeof(*ip));
	ip->family = net.family;
	memcpy(ip->addr, net.addr, 16);
	/* an IPv4-mapped address is the IPv4 client (RFC 7208 §5) */
	if (net.family == 6 && memcmp(net.addr, mapped, 12) == 0) {
		ip->family = 4;
		memmove(ip->addr, net.addr + 12, 4);
		memset(ip->addr + 4, 0, 12);
	}
	r->cfg->has_prospective = 1;
}

/* ---- lines ------------------------------------------------------------ */

static const struct option *find_option(struct reader *r, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < N_OPTIONS; i++)
		if (text_is(name, len, options[i].name))
			return &options[i];
	for (i = 0; i < N_OPTIONS; i++)
		if (spfkit__memcaseeq(name, len, options[i].name, strlen(options[i].name))) {
			report(r, 0, "unknown option '%s', ignored; did you mean '%s'? (names are "
				     "case-sensitive)", SHOWN(name, len), options[i].name);
			return NULL;
		}
	report(r, 0, "unknown option '%s', ignored", SHOWN(name, len));
	return NULL;
}

/* A list option: room for its entries (one per comma, plus one), then take them. */
static void apply_list(struct reader *r, const struct option *o, const char *v, size_t len)
{
	size_t n = 1, i;
	const char **items;
	size_t *lens;

	for (i = 0; i < len; i++)
		n += v[i] == ',';
	if (n > SPFKIT_MTA_CONF_MAX_LIST)
		n = SPFKIT_MTA_CONF_MAX_LIST + 1; /* split_list() stops and says so */
	items = spfkit__calloc(r->cfg->alloc, n, sizeof(*items));
	lens = spfkit__calloc(r->cfg->alloc, n, sizeof(*lens));
	if (items == NULL || lens == NULL)
		r->nomem = 1;
	else if (o->kind == K_NETS)
		take_nets(r, o, v, len, items, lens);
	else
		take_names(r, o, v, len, items, lens);
	spfkit__free(r->cfg->alloc, items);
	spfkit__free(r->cfg->alloc, lens);
}

static void apply(struct reader *r, const struct option *o, const char *v, size_t len)
{
	switch (o->kind) {
	case K_INT: take_int(r, o, v, len); break;
	case K_TESTONLY_OLD:
		report(r, 0, "defaultSeedOnly is the old name of TestOnly");
		take_int(r, o, v, len);
		break;
	case K_BOOL: take_bool(r, o, v, len, "False", "True"); break;
	case K_YESNO: take_bool(r, o, v, len, "No", "Yes"); break;
	case K_REJECT: take_reject(r, o, v, len); break;
	case K_DEFER: take_defer(r, o, v, len); break;
	case K_HEADER: take_header(r, o, v, len); break;
	case K_NETS:
	case K_NAMES: apply_list(r, o, v, len); break;
	case K_IP: take_ip(r, o, v, len); break;
	case K_ID:
	case K_ACTION:
	case K_REASON:
	case K_MSTR:
	case K_URL: take_text(r, o, v, len); break;
	case K_OCTAL: take_octal(r, o, v, len); break;
	case K_UNSUPPORTED:
		report(r, 0, "%s is not supported by spfkit; ignored", o->name);
		break;
	}
}

static void take_line(struct reader *r, const char *s, size_t len)
{
	const char *hash = memchr(s, '#', len), *eq, *name, *value;
	size_t nlen, vlen, i;
	const struct option *o;

	if (hash != NULL)
		len = (size_t)(hash - s);
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\r') {
			report(r, 1, "control byte 0x%02x at column %zu", (unsigned char)s[i], i + 1);
			return;
		}
	spfkit__mta_conf_trim(&s, &len);
	if (len == 0)
		return;
	eq = memchr(s, '=', len);
	if (eq == NULL) {
		report(r, 1, "'%s' is not 'Name = Value'", SHOWN(s, len));
		return;
	}
	name = s;
	nlen = (size_t)(eq - s);
	value = eq + 1;
	vlen = len - nlen - 1;
	spfkit__mta_conf_trim(&name, &nlen);
	spfkit__mta_conf_trim(&value, &vlen);
	o = find_option(r, name, nlen);
	if (o == NULL)
		return;
	if (r->set_on[o - options] != 0)
		report(r, 0, "%s set again; this replaces line %u", o->name, r->set_on[o - options]);
	r->set_on[o - options] = r->line;
	apply(r, o, value, vlen);
}

/* ---- whole files ------------------------------------------------------ */

static int set_defaults(struct spfkit__mta_config *cfg)
{
	static const char *const lines[] = {
		"skip_addresses = 127.0.0.0/8,::ffff:127.0.0.0/104,::1",
		"Authserv_Id = HOSTNAME",
		"Reason_Message = " SPFKIT_MTA_REASON_DEFAULT,
		"Reason_URL = " SPFKIT_MTA_REASON_URL_DEFAULT,
	};
	struct reader r;
	size_t i;

	cfg->debug_level = 1;
	cfg->test_only = 1;
	cfg->enhanced_status_codes = 1;
	cfg->header_type = SPFKIT_MTA_HEADER_SPF;
	cfg->lookup_time = 20;
	cfg->whitelist_lookup_time = 10;
	cfg->void_limit = 2;
	cfg->queue_id = 1;
	cfg->umask = -1;
	cfg->milter_time_limit = 20; /* under Postfix's 30 s milter_command_timeout */
	cfg->skip_authenticated = 1;
	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	/* the string defaults go through the reader, so they obey its checks */
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		take_line(&r, lines[i], strlen(lines[i]));
	return r.nomem || r.errors ? SPFKIT_ENOMEM : 0;
}

int spfkit__mta_config_defaults(const struct spfkit_allocator *alloc,
				struct spfkit__mta_config **out)
{
	struct spfkit__mta_config *cfg = spfkit__zalloc(alloc, sizeof(*cfg));

	if (cfg == NULL)
		return SPFKIT_ENOMEM;
	cfg->alloc = alloc;
	if (set_defaults(cfg) != 0) {
		spfkit__mta_config_free(cfg);
		return SPFKIT_ENOMEM;
	}
	*out = cfg;
	return 0;
}

int spfkit__mta_config_parse(const char *text, size_t len, const char *label,
			     const struct spfkit_allocator *alloc, spfkit__mta_diag_fn *diag, void *arg,
			     struct spfkit__mta_config **out)
{
	struct reader r;
	size_t start = 0, i;
	int rc;

	if (len > SPFKIT_MTA_CONF_MAX_FILE)
		return SPFKIT_E2BIG;
	memset(&r, 0, sizeof(r));
	rc = spfkit__mta_config_defaults(alloc, &r.cfg);
	if (rc != 0)
		return rc;
	r.label = label;
	r.diag = diag;
	r.arg = arg;
	for (i = 0; i <= len && !r.nomem; i++) {
		if (i < len && text[i] != '\n')
			continue;
		r.line++;
		if (memchr(text + start, '\0', i - start) != NULL)
			report(&r, 1, "NUL byte in line");
		else
			take_line(&r, text + start, i - start);
		start = i + 1;
	}
	if (r.nomem || r.errors) {
		spfkit__mta_config_free(r.cfg);
		return r.nomem ? SPFKIT_ENOMEM : SPFKIT_ESYNTAX;
	}
	*out = r.cfg;
	return 0;
}

static void report_file(spfkit__mta_diag_fn *diag, void *arg, const char *path, unsigned line,
			const char *why)
{
	struct spfkit__mta_diag d = {path, line, 1, why};

	if (diag != NULL)
		diag(arg, &d);
}

int spfkit__mta_conf_read_file(const char *path, struct spfkit__buf *buf, const char **why)
{
	struct stat st;
	char chunk[4096];
	ssize_t n;
	int saved;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	*why = NULL;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*why = fd < 0 ? strerror(errno) : "not a regular file";
		if (fd >= 0)
			close(fd);
		return SPFKIT_EIO;
	}
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (spfkit__buf_append(buf, chunk, (size_t)n) != 0)
			break;
	}
	saved = errno;
	close(fd);
	if (n < 0) {
		*why = strerror(saved);
		return SPFKIT_EIO;
	}
	if (buf->err == SPFKIT_E2BIG)
		*why = "file larger than 1 MiB; not read";
	return buf->err; /* 0, SPFKIT_E2BIG or SPFKIT_ENOMEM */
}

/* The line the file cap fell in: the lines read whole, plus one. */
static unsigned line_at_end(const struct spfkit__buf *buf)
{
	unsigned n = 1;
	size_t i;

	for (i = 0; i < buf->len; i++)
		n += buf->data[i] == '\n';
	return n;
}

int spfkit__mta_config_load(const char *path, const struct spfkit_allocator *alloc,
			    spfkit__mta_diag_fn *diag, void *arg, struct spfkit__mta_config **out)
{
	struct spfkit__buf buf;
	const char *why;
	int rc;

	spfkit__buf_init(&buf, alloc, SPFKIT_MTA_CONF_MAX_FILE);
	rc = spfkit__mta_conf_read_file(path, &buf, &why);
	if (rc == 0)
		rc = spfkit__mta_config_parse(spfkit__buf_str(&buf), buf.len, path, alloc, diag, arg,
					      out);
	else if (why != NULL)
		report_file(diag, arg, path, rc == SPFKIT_E2BIG ? line_at_end(&buf) : 0, why);
	spfkit__buf_free(&buf);
	return rc;
}

void spfkit__mta_config_free(struct spfkit__mta_config *cfg)
{
	const struct spfkit_allocator *a;

	if (cfg == NULL)
		return;
	a = cfg->alloc;
	spfkit__free(a, cfg->skip_addresses.nets);
	spfkit__free(a, cfg->whitelist.nets);
	free_names(a, &cfg->helo_whitelist);
	free_names(a, &cfg->domain_whitelist);
	free_names(a, &cfg->domain_whitelist_ptr);
	free_names(a, &cfg->reject_not_pass_domains);
	spfkit__free(a, cfg->authserv_id);
	spfkit__free(a, cfg->reason_message);
	spfkit__free(a, cfg->reason_url);
	spfkit__free(a, cfg->helo_pass_restriction);
	spfkit__free(a, cfg->mail_from_pass_restriction);
	spfkit__free(a, cfg->socket);
	spfkit__free(a, cfg->pid_file);
	spfkit__free(a, cfg->user_id);
	spfkit__free(a, cfg->internal_hosts.nets);
	spfkit__free(a, cfg->macro_list);
	spfkit__free(a, cfg->metrics_listen);
	spfkit__free(a, cfg->per_user);
	spfkit__free(a, cfg);
}

/* ---- matching --------------------------------------------------------- */

/* The library's prefix match, on a network of the list. */
static int net_has(const struct spfkit__mta_net *net, const struct spfkit_ip *ip)
{
	struct spfkit_ip base = {.family = net->family};

	memcpy(base.addr, net->addr, sizeof(base.addr));
	return spfkit_ip_in_net(ip, &base, net->prefix);
}

int spfkit__mta_net_match(const struct spfkit__mta_netlist *list, const struct spfkit_ip *ip)
{
	struct spfkit_ip mapped = {.family = 6, .addr = {[10] = 0xff, [11] = 0xff}};
	size_t i;

	memcpy(mapped.addr + 12, ip->addr, 4);
	for (i = 0; i < list->count; i++) {
		const struct spfkit__mta_net *net = &list->nets[i];

		if (net_has(net, ip))
			return 1;
		/* ::ffff:127.0.0.0/104 in the default list covers 127.0.0.1 */
		if (net->family == 6 && ip->family == 4 && net_has(net, &mapped))
			return 1;
	}
	return 0;
}

int spfkit__mta_name_match(const struct spfkit__mta_namelist *list, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		if (spfkit_domain_within(name, len, list->names[i], strlen(list->names[i])))
			return 1;
	return 0;
}

int spfkit__mta_name_listed(const struct spfkit__mta_namelist *list, const char *name, size_t len)
{
	size_t i;

	if (len > 0 && name[len - 1] == '.')
		len--;
	for (i = 0; i < list->count; i++)
		if (spfkit__memcaseeq(name, len, list->names[i], strlen(list->names[i])))
			return 1;
	return 0;
}
