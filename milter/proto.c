/*
 * The milter protocol's framing and packet layouts (see proto.h).
 */
#include <string.h>

#include "spfkit_util.h"
#include "proto.h"

uint32_t spfkit__milter_get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void spfkit__milter_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

int spfkit__milter_frame(const unsigned char *p, size_t len, uint32_t *size)
{
	uint32_t n;

	if (len < SPFKIT_MILTER_HEAD)
		return 0;
	n = spfkit__milter_get32(p);
	if (n > SPFKIT_MILTER_DATA_MAX + 1) {
		*size = n;
		return -1;
	}
	*size = n + SPFKIT_MILTER_HEAD;
	return len >= *size ? 1 : 0;
}

void spfkit__milter_put_head(unsigned char out[5], char cmd, size_t data_len)
{
	spfkit__milter_put32(out, (uint32_t)data_len + 1);
	out[4] = (unsigned char)cmd;
}

int spfkit__milter_optneg_parse(const unsigned char *d, size_t n, uint32_t *version,
				uint32_t *actions, uint32_t *steps)
{
	if (n < 12)
		return -1;
	*version = spfkit__milter_get32(d);
	*actions = spfkit__milter_get32(d + 4);
	*steps = spfkit__milter_get32(d + 8);
	return 0;
}

size_t spfkit__milter_strings(const unsigned char *d, size_t n, const char **s, size_t *len,
			      size_t max)
{
	size_t count = 0, off = 0;

	while (count < max && off < n) {
		const unsigned char *nul = memchr(d + off, '\0', n - off);

		if (nul == NULL)
			break;
		s[count] = (const char *)d + off;
		if (len != NULL)
			len[count] = (size_t)(nul - (d + off));
		count++;
		off = (size_t)(nul - d) + 1;
	}
	return count;
}

int spfkit__milter_mail_smtputf8(const unsigned char *d, size_t n)
{
	const char *s;
	size_t len, off = 0;

	/* the address, then one string per ESMTP parameter; bytes after the last NUL are none */
	while (spfkit__milter_strings(d + off, n - off, &s, &len, 1) == 1) {
		if (off > 0 && spfkit__memcaseeq(s, len, "SMTPUTF8", 8))
			return 1;
		off += len + 1;
	}
	return 0;
}

int spfkit__milter_connect_parse(const unsigned char *d, size_t n, struct spfkit__milter_connect *c)
{
	const char *s[1];
	size_t len[1], off;

	memset(c, 0, sizeof(*c));
	if (spfkit__milter_strings(d, n, s, len, 1) != 1)
		return -1;
	c->hostname = s[0];
	off = len[0] + 1;
	if (off >= n)
		return -1;
	c->family = (char)d[off++];
	c->addr = "";
	if (c->family == 'U')
		return 0; /* nothing follows (Postfix sends no more; Sendmail may) */
	if (c->family != '4' && c->family != '6' && c->family != 'L')
		return -1;
	if (n - off < 2)
		return -1;
	c->port = (unsigned)d[off] << 8 | d[off + 1];
	off += 2;
	if (spfkit__milter_strings(d + off, n - off, s, len, 1) != 1)
		return -1;
	c->addr = s[0];
	c->addr_len = len[0];
	return 0;
}
