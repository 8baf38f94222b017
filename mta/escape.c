/*
 * Untrusted bytes (SMTP names, addresses, DNS text) made fit for a log
 * line, for every daemon: no control byte, quote or backslash gets
 * through as it is (escape.h).
 */
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && defined(__GNUC__)
#define HAVE_SSE2 1
#include <emmintrin.h>
#endif

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

/*
 * Word-at-a-time test: a log line per request escapes a few hundred
 * bytes, and a table look-up per byte was most of the line's cost. Each
 * byte is tested on its low seven bits (no carry leaves a byte), and a
 * set high bit is not plain either.
 */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The high bit of each byte of w that is not plain (log_byte_plain). */
static uint64_t unplain(uint64_t w)
{
	uint64_t lo = w & ~HIGHS;

	return (w | ~(lo + ONES * 0x60)              /* below 0x20 */
		| (lo + ONES)                         /* 0x7f */
		| ~((lo ^ (ONES * 0x22)) + ONES * 0x7f) /* '"' */
		| ~((lo ^ (ONES * 0x5c)) + ONES * 0x7f)) /* '\\' */
	       & HIGHS;
}

#ifndef HAVE_SSE2
/* 1 when a block of 32 bytes has one that is not plain: a loop compilers vectorise. */
static unsigned char block_unplain(const unsigned char *p)
{
	unsigned char bad = 0;
	size_t i;

	for (i = 0; i < 32; i++)
		bad |= (unsigned char)((p[i] < 0x20) | (p[i] > 0x7e) | (p[i] == '"') | (p[i] == '\\'));
	return bad;
}
#endif

#ifdef HAVE_SSE2
/*
 * Bit k set where p[k] is not plain, for the 16 bytes at p: as signed
 * bytes, the high half is below 0x20 too.
 */
static unsigned unplain16(const unsigned char *p)
{
	__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i ok = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8(0x1f)),
				   _mm_cmplt_epi8(b, _mm_set1_epi8(0x7f)));

	ok = _mm_andnot_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('"')), ok);
	ok = _mm_andnot_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('\\')), ok);
	return ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
}
#endif

/* How many of p[0..n) lead in whole plain blocks and words (a lower bound
 * of the plain run; with SSE2, exact where a block of 16 ends it). */
static size_t plain_words(const unsigned char *p, size_t n)
{
	size_t i = 0;
	uint64_t w[1];

#ifdef HAVE_SSE2
	unsigned bad;

	for (; n - i >= 16; i += 16) {
		bad = unplain16(p + i);
		if (bad != 0)
			return i + (size_t)__builtin_ctz(bad);
	}
#else
	for (; n - i >= 32; i += 32)
		if (block_unplain(p + i))
			break;
#endif
	for (; n - i >= 8; i += 8) {
		memcpy(w, p + i, 8);
		if (unplain(w[0]) != 0)
			break;
	}
	return i;
}

size_t spfkit__mta_escape_into(const char *in, size_t len, size_t max, char *out, size_t room)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)in;
	size_t i = 0, o = 0, n = len < max ? len : max;

	/* runs of plain bytes are copied whole: a log line per request passes here */
	while (i < n) {
		size_t limit = n - i < room - o ? n : i + (room - o);
		size_t run = i + plain_words(u + i, limit - i);

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
