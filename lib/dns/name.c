/*
 * Domain names between presentation text and uncompressed wire form
 * (RFC 1035 §2.3.4, §3.1, §5.1 for the \X and \DDD escapes).
 */
#include <string.h>

#include "msg.h"

/* Read one escape after the backslash at text[*i]; -1 when bad. */
static int unescape(const char *text, size_t len, size_t *i)
{
	const unsigned char *t = (const unsigned char *)text;
	unsigned v;

	if (*i + 1 >= len)
		return -1; /* a lone backslash at the end */
	if (!spfkit__is_digit(t[*i + 1])) {
		*i += 2;
		return t[*i - 1];
	}
	/* \DDD: exactly three digits, value at most 255 (RFC 1035 §5.1). */
	if (*i + 3 >= len || !spfkit__is_digit(t[*i + 2]) || !spfkit__is_digit(t[*i + 3]))
		return -1;
	v = (unsigned)(t[*i + 1] - '0') * 100 + (unsigned)(t[*i + 2] - '0') * 10 +
	    (unsigned)(t[*i + 3] - '0');
	if (v > 255)
		return -1;
	*i += 4;
	return (int)v;
}

/* Close the label that starts at wire[start] (its length byte). */
static int close_label(unsigned char *wire, size_t start, size_t w)
{
	size_t n = w - start - 1;

	if (n == 0 || n > SPFKIT__DNS_LABEL_MAX)
		return SPFKIT_EINVAL;
	wire[start] = (unsigned char)n;
	return 0;
}

/* A final dot ends the name unless an odd run of backslashes escapes it. */
static int final_dot(const char *text, size_t len)
{
	size_t k = 0;

	if (len == 0 || text[len - 1] != '.')
		return 0;
	while (k + 1 < len && text[len - 2 - k] == '\\')
		k++;
	return k % 2 == 0;
}

int spfkit__dns_name_wire(const char *text, size_t len, unsigned char *wire, size_t *wlen)
{
	size_t i = 0, w = 1, start = 0;
	int ch;

	/* "." alone is the root; otherwise one final dot is optional. */
	if (final_dot(text, len))
		len--;
	while (i < len) {
		if (text[i] == '.') {
			if (close_label(wire, start, w) != 0)
				return SPFKIT_EINVAL;
			start = w++;
			i++;
			continue;
		}
		ch = text[i] == '\\' ? unescape(text, len, &i) : (unsigned char)text[i++];
		/* room for this byte and the root's zero */
		if (ch < 0 || w + 1 >= SPFKIT__DNS_NAME_MAX)
			return SPFKIT_EINVAL;
		wire[w++] = (unsigned char)ch;
	}
	if (len == 0) {
		wire[0] = 0;
		*wlen = 1;
		return 0;
	}
	if (close_label(wire, start, w) != 0)
		return SPFKIT_EINVAL;
	wire[w++] = 0;
	*wlen = w;
	return 0;
}

/*
 * The resolver's name contract (include/spfkit/resolver.h): a question
 * name is raw label bytes joined by '.', never presentation text. SPF
 * names are text built by macro expansion (RFC 7208 §7.3), so every '.'
 * ends a label and every other byte, '\\' included, is label data that
 * goes on the wire unchanged: no escape is read here.
 */
int spfkit__dns_name_wire_raw(const char *name, size_t len, unsigned char *wire, size_t *wlen)
{
	size_t i, w = 1, start = 0;

	/* "." alone is the root; otherwise one final dot is optional. */
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0) {
		wire[0] = 0;
		*wlen = 1;
		return 0;
	}
	/* len bytes become len + 1 (a length byte per label), plus the root's zero */
	if (len + 2 > SPFKIT__DNS_NAME_MAX)
		return SPFKIT_EINVAL;
	for (i = 0; i < len; i++) {
		if (name[i] != '.') {
			wire[w++] = (unsigned char)name[i];
			continue;
		}
		if (close_label(wire, start, w) != 0)
			return SPFKIT_EINVAL;
		start = w++;
	}
	if (close_label(wire, start, w) != 0)
		return SPFKIT_EINVAL;
	wire[w++] = 0;
	*wlen = w;
	return 0;
}

/* Bytes written as themselves: visible ASCII but the two that mean syntax. */
static int plain_byte(unsigned char c)
{
	return spfkit__is_vchar(c) && c != '.' && c != '\\';
}

size_t spfkit__dns_name_text(const unsigned char *wire, size_t wlen, char *text)
{
	size_t i = 0, t = 0, n, k;
	unsigned char c;

	while (i < wlen && wire[i] != 0) {
		n = wire[i++];
		if (t > 0)
			text[t++] = '.';
		for (k = 0; k < n && i < wlen; k++, i++) {
			c = wire[i];
			if (plain_byte(c)) {
				text[t++] = (char)c;
				continue;
			}
			text[t++] = '\\';
			text[t++] = (char)('0' + c / 100);
			text[t++] = (char)('0' + c / 10 % 10);
			text[t++] = (char)('0' + c % 10);
		}
	}
	text[t] = '\0';
	return t;
}
