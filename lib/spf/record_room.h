/*
 * The parser's block with room for its caller: the record cache keeps
 * its entry and the compact terms (below) in the parsed record's own
 * block, so a record costs one allocation and one free, not three, and
 * the parse writes each compact term as it reads the term, not in a
 * second pass over the terms.
 */
#ifndef SPFKIT_RECORD_ROOM_H
#define SPFKIT_RECORD_ROOM_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/record.h>

/*
 * What the evaluator's term loop reads of each term, 12 bytes instead of
 * a whole struct spfkit_term: a provider record is mostly ip4/ip6 terms,
 * walked on every evaluation, and the full terms of every cached record
 * do not stay in the CPU cache.
 */
enum { HOT_NOT_LITERAL = 0, HOT_LITERAL_VALID, HOT_LITERAL_INVALID };

struct spfkit__hot_term {
	uint8_t mech;        /* enum spfkit_mech_kind */
	uint8_t is_modifier;
	/* a domain-spec with no macro: HOT_LITERAL_VALID or _INVALID as
	 * spfkit__domain_valid() finds it, known once per parsed record */
	uint8_t literal;
	uint8_t unused;
	uint32_t ip4;        /* ip4 terms: network, network order */
	uint32_t mask4;      /* ip4 terms: the CIDR mask, network order */
};

/*
 * spfkit_record_parse(), with `fixed` bytes more in the record's block
 * at *room (SPFKIT__ALIGN aligned, not zeroed, freed with the record),
 * then, when `fixed` is not 0, the record's compact terms at
 * *room + SPFKIT__ALIGN_UP(fixed), one per term, which the parse fills
 * in as it reads each term. On failure *room is NULL.
 */
int spfkit__record_parse_room(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			      size_t fixed, struct spfkit_record **out,
			      struct spfkit_parse_error *err, void **room);

/*
 * The same, with a block that may be larger than the record needs: for an
 * allocator whose blocks go back soon (an evaluation's arena), where the
 * walk over the terms that sizes the block exactly costs more than the
 * bytes it saves. Results and errors are those of the call above.
 */
int spfkit__record_parse_loose(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			       size_t fixed, struct spfkit_record **out,
			       struct spfkit_parse_error *err, void **room);

/*
 * From now on the record's block is freed through `alloc` (it must free
 * what the allocator given to the parse allocated): the caller may then
 * keep that one in the room.
 */
void spfkit__record_parse_rebind(struct spfkit_record *rec, const struct spfkit_allocator *alloc);

#endif
