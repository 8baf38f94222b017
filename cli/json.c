/*
 * A JSON string writer for untrusted bytes (RFC 8259 §7). The bytes are
 * not assumed to be UTF-8: DNS data and SMTP identities may hold any
 * byte. Each byte >= 0x80 is written as the escape of the code point of
 * the same value, so the output is ASCII, always valid JSON, and loses
 * nothing. Buffer errors are sticky in the buffer (spfkit__buf.err).
 */
#include <string.h>

#include "cli.h"

void cli_json_str(struct spfkit__buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	spfkit__buf_putc(b, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			continue; /* copied below, in one append per run */
		spfkit__buf_append(b, s + run, i - run);
		run = i + 1;
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			spfkit__buf_append(b, esc, 2);
		} else {
			spfkit__buf_append(b, esc, sizeof(esc));
		}
	}
	spfkit__buf_append(b, s + run, len - run);
	spfkit__buf_putc(b, '"');
}

void cli_json_cstr(struct spfkit__buf *b, const char *s)
{
	if (s == NULL)
		spfkit__buf_puts(b, "null");
	else
		cli_json_str(b, s, strlen(s));
}

void cli_json_key(struct spfkit__buf *b, int *first, const char *key)
{
	if (!*first)
		spfkit__buf_putc(b, ',');
	*first = 0;
	cli_json_str(b, key, strlen(key));
	spfkit__buf_putc(b, ':');
}
