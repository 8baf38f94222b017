/*
 * The terms of a cached record as an IPv4 client sees them, four at a
 * time: which term is the first, from a given one on, that the term loop
 * must look at (eval.c, skip_settled()). A provider's record is mostly
 * ip4/ip6 terms that do not cover the client, walked on every
 * evaluation; this settles them without a branch per term. Internal API.
 */
#ifndef SPFKIT_IP4_SCAN_H
#define SPFKIT_IP4_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/record.h>

/*
 * Four terms: a term stops the scan when ((client ^ net) & mask) == 0 and
 * pass is 0. An ip4 term holds its network and mask; an ip6 term or a
 * modifier passes (all ones); any other term stops (zeros). Groups past
 * the last term pass.
 */
struct spfkit__ip4_group {
	uint32_t net[4], mask[4], pass[4]; /* network byte order */
};

/* The groups for rec (ceil(count / 4) of them), allocated from a. NULL
 * when out of memory or when rec has no terms. */
struct spfkit__ip4_group *spfkit__ip4_scan_build(const struct spfkit_record *rec,
						 const struct spfkit_allocator *a);

/* The first term at `from` or after that stops an IPv4 client (network
 * order), or count when none does. */
size_t spfkit__ip4_scan(const struct spfkit__ip4_group *g, size_t from, size_t count,
			uint32_t client);

#endif
