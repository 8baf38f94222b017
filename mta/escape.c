/*
 * Untrusted bytes (SMTP names, addresses, DNS text) made fit for a log
 * line, for every daemon: no control byte, quote or backslash gets
 * through as it is (escape.h).
 */
#include <string.h>

#include "escape.h"

/* Bytes a log line shows as they are: printable ASCII but backslash and quote. */
static const unsigned char log_byte_plain[256] = {
	[0x20] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x22 '"' is not */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x5c '\\' is not */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, /* 0x7f is not */
};

size_t spfkit__mta_escape_into(const char *in, size_t len, size_t max, char *out, size_t room)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)in;
	size_t i = 0, o = 0, n = len < max ? len : max;

	/* runs of plain bytes are copied whole: a log line per request passes here */
	while (i < n) {
		size_t run = i, limit = n - i < room - o ? n : i + (room - o);

		while (run < limit && log_byte_plain[u[run]])
			run++;
		memcpy(out + o, in + i, run - i);
		o += run - i;
		i = run;
		if (i == n || o == room || room - o < 4)
			break;
		if (log_byte_plain[u[i]])
			continue;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
		i++;
	}
	if (i < len && room - o >= 3) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	return o;
}

char *spfkit__mta_escape(const char *in, size_t len, size_t max, char *out, size_t size)
{
	size_t o;

	if (size == 0)
		return out;
	o = spfkit__mta_escape_into(in, len, max, out, size - 1);
	out[o] = '\0';
	return out;
}
