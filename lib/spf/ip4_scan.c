/* Four terms at a time for an IPv4 client (ip4_scan.h). */
#include <arpa/inet.h>
#include <string.h>

#include "core.h"
#include "ip4_scan.h"

struct spfkit__ip4_group *spfkit__ip4_scan_build(const struct spfkit_record *rec,
						 const struct spfkit_allocator *a)
{
	size_t ngroups = (rec->count + 3) / 4, i;
	struct spfkit__ip4_group *g;

	if (ngroups == 0)
		return NULL;
	g = spfkit__calloc(a, ngroups, sizeof(*g));
	if (g == NULL)
		return NULL;
	memset(g, 0xff, ngroups * sizeof(*g)); /* past the last term: pass */
	for (i = 0; i < rec->count; i++) {
		const struct spfkit_term *t = &rec->terms[i];
		struct spfkit__ip4_group *at = &g[i / 4];
		size_t lane = i % 4;

		if (t->is_modifier || t->mech == SPFKIT_MECH_IP6)
			continue; /* passes */
		at->pass[lane] = 0;
		at->net[lane] = 0;
		at->mask[lane] = 0; /* stops */
		if (t->mech == SPFKIT_MECH_IP4) {
			memcpy(&at->net[lane], t->ip, 4);
			at->mask[lane] = t->cidr4 == 0 ? 0 : htonl(0xffffffffu << (32 - t->cidr4));
		}
	}
	return g;
}

/* Bit k set: lane k of the group stops the scan. */
static unsigned group_stops(const struct spfkit__ip4_group *g, uint32_t client)
{
#ifdef SPFKIT__HAVE_SSE2
	__m128i c = _mm_set1_epi32((int)client);
	__m128i net = _mm_loadu_si128((const __m128i *)(const void *)g->net);
	__m128i mask = _mm_loadu_si128((const __m128i *)(const void *)g->mask);
	__m128i pass = _mm_loadu_si128((const __m128i *)(const void *)g->pass);
	__m128i off = _mm_and_si128(_mm_xor_si128(c, net), mask);
	__m128i hit = _mm_andnot_si128(pass, _mm_cmpeq_epi32(off, _mm_setzero_si128()));

	return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(hit));
#else
	unsigned bits = 0, k;

	for (k = 0; k < 4; k++)
		bits |= (unsigned)(((client ^ g->net[k]) & g->mask[k]) == 0 && g->pass[k] == 0) << k;
	return bits;
#endif
}

size_t spfkit__ip4_scan(const struct spfkit__ip4_group *g, size_t from, size_t count,
			uint32_t client)
{
	size_t at = from / 4, ngroups = (count + 3) / 4;
	unsigned bits;

	if (from >= count)
		return count;
	bits = group_stops(&g[at], client) & (0xfu << (from % 4)) & 0xfu;
	while (bits == 0) {
		if (++at >= ngroups)
			return count;
		bits = group_stops(&g[at], client);
	}
	from = at * 4 + (size_t)__builtin_ctz(bits);
	return from < count ? from : count;
}
