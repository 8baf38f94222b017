/*
 * The parser's block with room for its caller: the record cache keeps
 * its entry and the compact terms (record_cache.h) in the parsed record's
 * own block, so a record costs one allocation and one free, not three.
 */
#ifndef SPFKIT_RECORD_ROOM_H
#define SPFKIT_RECORD_ROOM_H

#include <stddef.h>

#include <spfkit/record.h>

/*
 * spfkit_record_parse(), with `fixed` + `per_term` * (the record's term
 * count) bytes more in the record's block, at *room (SPFKIT__ALIGN
 * aligned, not zeroed, freed with the record). On failure *room is NULL.
 */
int spfkit__record_parse_room(const char *txt, size_t len, const struct spfkit_allocator *alloc,
			      size_t fixed, size_t per_term, struct spfkit_record **out,
			      struct spfkit_parse_error *err, void **room);

/*
 * From now on the record's block is freed through `alloc` (it must free
 * what the allocator given to the parse allocated): the caller may then
 * keep that one in the room.
 */
void spfkit__record_rebind(struct spfkit_record *rec, const struct spfkit_allocator *alloc);

#endif
