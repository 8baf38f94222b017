/* Printing untrusted bytes (DNS data, zone file text) on a terminal. */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

void cli_put_safe(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			fputs("\\\\", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", (unsigned)c);
		else
			putc(c, f);
	}
}

void cli_put_safe_str(FILE *f, const char *s)
{
	if (s == NULL)
		fputs("-", f);
	else
		cli_put_safe(f, s, strlen(s));
}

void cli_error(const char *cmd, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	fputs(CLI_PROG, stderr);
	if (cmd != NULL) {
		putc(' ', stderr);
		fputs(cmd, stderr);
	}
	fputs(": ", stderr);
	cli_put_safe(stderr, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	putc('\n', stderr);
}
