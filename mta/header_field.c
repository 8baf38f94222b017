/*
 * Authentication-Results authserv-id matching (header_field.h), moved
 * here from the milter so the OpenSMTPD filter drops forged fields by
 * the same rule.
 */
#include <string.h>

#include "spfkit_util.h"
#include "header_field.h"

/* Comments nest (RFC 5322 §3.2.2); deeper than this is not a real header. */
#define MAX_COMMENT_DEPTH 16

static int is_wsp(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Skip CFWS (RFC 5322 §3.2.2). NULL on an unclosed or too deep comment. */
static const char *skip_cfws(const char *p)
{
	int depth = 0;

	for (; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (depth == 0 && is_wsp(c))
			continue;
		if (c == '(') {
			if (++depth > MAX_COMMENT_DEPTH)
				return NULL;
		} else if (depth > 0 && c == ')') {
			depth--;
		} else if (depth > 0 && c == '\\') {
			if (p[1] == '\0')
				return NULL;
			p++; /* quoted-pair */
		} else if (depth == 0) {
			return p;
		}
	}
	return depth == 0 ? p : NULL;
}

/* RFC 2045 §5.1 tspecials, and what no token holds. */
static int is_token_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && strchr("()<>@,;:\\\"/[]?=", c) == NULL;
}

/* A quoted-string's content, unescaped, into buf; its length, or -1 (unclosed, too long). */
static long quoted(const char *p, char *buf, size_t size)
{
	size_t n = 0;

	for (p++; *p != '"'; p++) {
		if (*p == '\0')
			return -1;
		if (*p == '\\' && p[1] != '\0')
			p++;
		if (n + 1 >= size)
			return -1;
		buf[n++] = *p;
	}
	return (long)n;
}

int spfkit__mta_ar_is_ours(const char *value, const char *id)
{
	char buf[512];
	const char *p;
	long n = 0;

	if (value == NULL || id == NULL || id[0] == '\0')
		return 0;
	p = skip_cfws(value);
	if (p == NULL)
		return 0;
	if (*p == '"') {
		n = quoted(p, buf, sizeof(buf));
	} else {
		while (is_token_char((unsigned char)p[n]) && (size_t)n + 1 < sizeof(buf)) {
			buf[n] = p[n];
			n++;
		}
	}
	return n > 0 && spfkit__memcaseeq(buf, (size_t)n, id, strlen(id));
}
