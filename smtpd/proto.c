/*
 * The filter protocol's text (proto.h): bounded by each line's length,
 * never by a NUL.
 */
#include <stdio.h>
#include <string.h>

#include "spfkit_util.h"
#include "proto.h"

size_t spfkit__smtpd_split(const char *line, size_t len, struct spfkit__smtpd_field *f,
			   size_t max)
{
	size_t n = 0, start = 0, i;

	for (i = 0; i < len && n + 1 < max; i++) {
		if (line[i] != '|')
			continue;
		f[n].p = line + start;
		f[n].len = i - start;
		n++;
		start = i + 1;
	}
	f[n].p = line + start;
	f[n].len = len - start;
	return n + 1;
}

/* 1-4 digits from *pos; their value, or -1. */
static long digits(const struct spfkit__smtpd_field *f, size_t *pos)
{
	long v = 0;
	size_t n = 0;

	while (*pos < f->len && spfkit__is_digit((unsigned char)f->p[*pos])) {
		if (++n > 4)
			return -1;
		v = v * 10 + (f->p[*pos] - '0');
		(*pos)++;
	}
	return n > 0 ? v : -1;
}

int spfkit__smtpd_version_parse(const struct spfkit__smtpd_field *f,
				struct spfkit__smtpd_version *v)
{
	size_t pos = 0;
	long major = digits(f, &pos), minor;

	if (major < 0 || pos >= f->len || f->p[pos] != '.')
		return -1;
	pos++;
	minor = digits(f, &pos);
	if (minor < 0 || pos != f->len)
		return -1;
	v->major = (unsigned)major;
	v->minor = (unsigned)minor;
	return 0;
}

int spfkit__smtpd_version_ge(const struct spfkit__smtpd_version *v, unsigned major,
			     unsigned minor)
{
	return v->major > major || (v->major == major && v->minor >= minor);
}

int spfkit__smtpd_id_ok(const struct spfkit__smtpd_field *f)
{
	size_t i;

	if (f->len == 0 || f->len > SPFKIT_SMTPD_ID_MAX)
		return 0;
	for (i = 0; i < f->len; i++)
		if (!spfkit__is_hex((unsigned char)f->p[i]))
			return 0;
	return 1;
}

int spfkit__smtpd_field_is(const struct spfkit__smtpd_field *f, const char *text)
{
	size_t n = strlen(text);

	return f->len == n && memcmp(f->p, text, n) == 0;
}

struct spfkit__smtpd_field spfkit__smtpd_mail_address(const struct spfkit__smtpd_field *param)
{
	struct spfkit__smtpd_field a = {param->p, 0};
	size_t i = 0, end;

	while (i < param->len && (param->p[i] == ' ' || param->p[i] == '\t'))
		i++;
	if (i < param->len && param->p[i] == '<') {
		i++;
		for (end = i; end < param->len && param->p[end] != '>'; end++)
			;
	} else {
		for (end = i; end < param->len && param->p[end] != ' ' && param->p[end] != '\t'; end++)
			;
	}
	a.p = param->p + i;
	a.len = end - i;
	return a;
}

int spfkit__smtpd_src_address(const struct spfkit__smtpd_field *src, char *buf, size_t size)
{
	const char *p = src->p;
	size_t len = src->len, colon;

	/* the port is after the last colon: "a.b.c.d:port", "[v6]:port" */
	for (colon = len; colon > 0 && p[colon - 1] != ':'; colon--)
		;
	if (colon < 2)
		return -1;
	len = colon - 1;
	if (p[0] == '[') {
		if (len < 3 || p[len - 1] != ']')
			return -1;
		p++;
		len -= 2;
		/* older smtpd printed "[IPv6:...]" (to.c): take what follows */
		if (len > 5 && spfkit__memcaseeq(p, 5, "IPv6:", 5)) {
			p += 5;
			len -= 5;
		}
	}
	if (len == 0 || len >= size)
		return -1;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return 0;
}

const char *spfkit__smtpd_reply_prefix(const struct spfkit__smtpd_version *v, const char *kind,
				       const char *session, const char *token, char *buf,
				       size_t size)
{
	/* 0.4 put the token first; 0.5 swapped them (lka_filter.c) */
	int token_first = !spfkit__smtpd_version_ge(v, 0, 5);
	int n = snprintf(buf, size, "%s|%s|%s|", kind, token_first ? token : session,
			 token_first ? session : token);

	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
	return buf;
}
