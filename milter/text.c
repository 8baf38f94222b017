/*
 * Pure text helpers of the milter: is an Authentication-Results field
 * ours (RFC 8601), reply text for smfi_setreply(), the parts of a
 * decision's action, escaped copies for the log. No I/O, no state.
 */
#include <string.h>

#include "spfkit_util.h"
#include "escape.h"
#include "milter.h"

int spfkit__milter_name_is(const char *name, const char *want)
{
	return name != NULL && spfkit__memcaseeq(name, strlen(name), want, strlen(want));
}

char *spfkit__milter_reply_text(const char *in, char *out, size_t size)
{
	size_t n = 0;

	for (; in != NULL && *in != '\0'; in++) {
		unsigned char c = (unsigned char)*in;
		size_t need = c == '%' ? 2 : 1;

		if (n + need >= size)
			break;
		if (c < 0x20 || c > 0x7e)
			c = '?';
		out[n++] = (char)c;
		if (c == '%')
			out[n++] = '%';
	}
	out[n] = '\0';
	return out;
}

/* "d.d.d" with 1-3 digits each (RFC 3463). */
static int is_enhanced(const char *s, size_t len)
{
	size_t i, digits = 0, dots = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (digits == 0 || ++dots > 2)
				return 0;
			digits = 0;
		} else if (spfkit__is_digit((unsigned char)s[i]) && digits < 3) {
			digits++;
		} else {
			return 0;
		}
	}
	return dots == 2 && digits > 0;
}

const char *spfkit__milter_action_text(const char *action, char *xcode, size_t size)
{
	const char *p = action + strcspn(action, " ");
	size_t n;

	xcode[0] = '\0';
	while (*p == ' ')
		p++;
	n = strcspn(p, " ");
	if (is_enhanced(p, n) && n < size) {
		memcpy(xcode, p, n);
		xcode[n] = '\0';
		p += n;
		while (*p == ' ')
			p++;
	}
	return p;
}

const char *spfkit__milter_header_split(const char *line, char *name, size_t size)
{
	const char *colon = strchr(line, ':');
	size_t n;

	if (colon == NULL || (size_t)(colon - line) >= size)
		return NULL;
	n = (size_t)(colon - line);
	memcpy(name, line, n);
	name[n] = '\0';
	colon++;
	while (*colon == ' ')
		colon++;
	return colon;
}

const char *spfkit__milter_esc(const char *s, size_t cap, char *buf, size_t size)
{
	if (s == NULL)
		s = "";
	return spfkit__mta_escape(s, strlen(s), cap, buf, size); /* mta/escape.c */
}
