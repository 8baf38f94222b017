/*
 * The MTA's macros per stage (see macros.h).
 */
#include <string.h>

#include <spfkit/common.h>

#include "macros.h"
#include "spfkit_util.h"

int spfkit__milter_stage(char cmd)
{
	static const char order[] = "CHMRTNE";
	const char *p = cmd != '\0' ? strchr(order, cmd) : NULL;

	return p != NULL ? (int)(p - order) : -1;
}

/* Bytes of the whole pairs at the start of d[0..n). */
static size_t whole_pairs(const unsigned char *d, size_t n)
{
	size_t off = 0, end = 0;
	int second = 0;

	while (off < n) {
		const unsigned char *nul = memchr(d + off, '\0', n - off);

		if (nul == NULL)
			break;
		off = (size_t)(nul - d) + 1;
		if (second)
			end = off;
		second = !second;
	}
	return end;
}

int spfkit__milter_macros_set(struct spfkit__milter_macros *m, int stage, const unsigned char *d,
			      size_t n, size_t *dropped)
{
	size_t keep = whole_pairs(d, n);

	spfkit__free(NULL, m->data[stage]);
	m->data[stage] = NULL;
	m->len[stage] = 0;
	*dropped = n - keep;
	if (keep == 0)
		return 0;
	m->data[stage] = spfkit__alloc(NULL, keep);
	if (m->data[stage] == NULL)
		return SPFKIT_ENOMEM;
	memcpy(m->data[stage], d, keep);
	m->len[stage] = keep;
	return 0;
}

void spfkit__milter_macros_clear_from(struct spfkit__milter_macros *m, int stage)
{
	int i;

	for (i = stage; i < SPFKIT_MILTER_STAGES; i++) {
		spfkit__free(NULL, m->data[i]);
		m->data[i] = NULL;
		m->len[i] = 0;
	}
}

/* "x" and "{x}" name the same one-letter macro. */
static int same_name(const char *have, size_t hl, const char *want, size_t wl)
{
	if (hl == wl && memcmp(have, want, wl) == 0)
		return 1;
	if (hl == 1 && wl == 3 && want[0] == '{' && want[2] == '}')
		return have[0] == want[1];
	if (hl == 3 && wl == 1 && have[0] == '{' && have[2] == '}')
		return have[1] == want[0];
	return 0;
}

/* Each stage's data is whole pairs, every string NUL-terminated inside it. */
static const char *find_in(const char *d, size_t n, const char *name, size_t nl)
{
	const char *end = d + n;

	while (d < end) {
		size_t kl = strlen(d);
		const char *v = d + kl + 1;

		if (same_name(d, kl, name, nl))
			return v;
		d = v + strlen(v) + 1;
	}
	return NULL;
}

const char *spfkit__milter_macro(const struct spfkit__milter_macros *m, const char *name)
{
	size_t nl = strlen(name);
	int i;

	for (i = SPFKIT_MILTER_STAGES - 1; i >= 0; i--) {
		const char *v = m->data[i] != NULL ? find_in(m->data[i], m->len[i], name, nl) : NULL;

		if (v != NULL)
			return v;
	}
	return NULL;
}
