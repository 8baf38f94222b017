/*
 * A formatter for the library's own messages (why an evaluation failed):
 * vsnprintf() costs some thousand instructions a message, as much as a
 * record's parse, and a hostile domain can make every evaluation fail.
 * It takes only the conversions those messages use.
 */
#include <string.h>

#include "spfkit_util.h"

static void put_unsigned(struct spfkit__text *o, unsigned long long v)
{
	char digits[24];
	size_t i = sizeof(digits);

	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	spfkit__text_put(o, digits + i, sizeof(digits) - i);
}

/* The conversion at fmt (past '%'): where it ends, or NULL for one this
 * formatter does not take, after which nothing more is read from ap. */
static const char *convert(struct spfkit__text *o, const char *fmt, va_list *ap)
{
	const char *s;
	int n, d;

	switch (*fmt) {
	case 's':
		s = va_arg(*ap, const char *);
		spfkit__text_put(o, s != NULL ? s : "(null)", s != NULL ? strlen(s) : 6);
		return fmt + 1;
	case 'u':
		put_unsigned(o, va_arg(*ap, unsigned));
		return fmt + 1;
	case 'd':
		d = va_arg(*ap, int);
		if (d < 0)
			spfkit__text_put(o, "-", 1);
		put_unsigned(o, d < 0 ? 0ull - (unsigned long long)d : (unsigned long long)d);
		return fmt + 1;
	case 'z':
		if (fmt[1] != 'u')
			return NULL;
		put_unsigned(o, va_arg(*ap, size_t));
		return fmt + 2;
	case '.':
		if (fmt[1] != '*' || fmt[2] != 's')
			return NULL;
		n = va_arg(*ap, int);
		s = va_arg(*ap, const char *);
		/* n < 0: as if not given */
		spfkit__text_put(o, s, n >= 0 ? strnlen(s, (size_t)n) : strlen(s));
		return fmt + 3;
	case '%':
		spfkit__text_put(o, "%", 1);
		return fmt + 1;
	default:
		return NULL;
	}
}

size_t spfkit__vformat(char *out, size_t size, const char *fmt, va_list ap)
{
	struct spfkit__text o;
	va_list args;
	const char *pct;

	if (size == 0)
		return 0;
	spfkit__text_init(&o, out, size);
	va_copy(args, ap);
	while (fmt != NULL && *fmt != '\0') {
		pct = strchr(fmt, '%');
		if (pct == NULL) {
			spfkit__text_put(&o, fmt, strlen(fmt));
			break;
		}
		spfkit__text_put(&o, fmt, (size_t)(pct - fmt));
		fmt = convert(&o, pct + 1, &args);
	}
	va_end(args);
	return spfkit__text_stored(&o);
}
