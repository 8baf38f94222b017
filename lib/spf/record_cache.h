/*
 * Parsed records shared by every evaluation of a context: a record is
 * parsed once and reused while it stays in the cache (parse errors are
 * kept too). Keyed by the exact record text. Thread-safe: one mutex
 * around lookups; entries are reference-counted so an entry an
 * evaluation holds is never evicted under it. Internal API.
 *
 * The record memo (spfkit_config.record_memo, record_memo.c) rides on the
 * cache: an entry may also be bound to the names whose TXT answers held
 * it, each until its answer's TTL passes, so an evaluation can take the
 * record by name without asking (query.c); other answers are kept as
 * small copies. Both are charged to the byte budget; bound names go with
 * their entry.
 *
 * Bounded twice: by entries and by bytes. A parsed record can take about
 * 55 times its text (a 64 KiB record of one-letter terms parses to some
 * 3.6 MB), so a count alone would let hostile records fill gigabytes.
 * Each entry's bytes are what was really allocated for it (its text,
 * the parser's arena, the compact terms, the entry itself), each block
 * charged SPFKIT__RECORD_CACHE_BLOCK_OVERHEAD more for the allocator's header.
 */
#ifndef SPFKIT_RECORD_CACHE_H
#define SPFKIT_RECORD_CACHE_H

#include <stdatomic.h>
#include <stddef.h>

#include <spfkit/record.h>
#include <spfkit/resolver.h>

#include "core.h"
#include "ip4_scan.h"
#include "list.h"
#include "record_room.h"

/* A counting allocator's state (record_cache.c): it forwards to `under`
 * and adds what each block costs to *bytes. */
struct spfkit__byte_count {
	const struct spfkit_allocator *under;
	size_t *bytes;
};

struct spfkit__record_cache_entry {
	uint64_t hash;
	size_t bytes; /* memory charged to the cache while it is cached */
	/* What the entry allocates after the parse (the IPv4 groups, the
	 * text of a record that failed) goes through this, counted into
	 * `bytes`; it forwards to the cache's allocator. A parsed record's
	 * block holds the entry and `hot` too (record_room.h). */
	struct spfkit_allocator counting;
	struct spfkit__byte_count count; /* counting's state */
	const struct spfkit_allocator *under;
	char *text; /* the key, NUL-terminated: rec->text, or a copy when the parse failed */
	size_t len;
	struct spfkit_record *rec; /* NULL when the parse failed */
	struct spfkit__hot_term *hot; /* rec->count of them, with rec */
	/* rec's terms for IPv4 clients, four at a time (ip4_scan.h); only
	 * for cached entries (a record parsed for one evaluation is walked
	 * once: building them would cost more than they save) */
	struct spfkit__ip4_group *ip4;
	int rc;                    /* the parse's return code */
	struct spfkit_parse_error pe;
	atomic_uint refs;          /* evaluations holding it */
	int cached;                /* 0: the cache was full of held entries; freed on release */
	int in_arena;              /* made in an evaluation's arena: nothing to free */
	/* The record memo (spfkit_config.record_memo): the names whose TXT
	 * answers held this record (many domains publish the same text),
	 * under the cache's lock */
	struct spfkit__record_cache_name *names;
	struct spfkit__record_cache_entry *chain;      /* hash bucket */
	struct spfkit__link lru;                  /* most recent first */
};

/* A name the record memo knows (record_cache_int.h, record_memo.c). */
struct spfkit__record_cache_name;

struct spfkit__record_cache;

/* Default byte budget: 32 MiB, some 4,000 ordinary records parsed. */
#define SPFKIT__RECORD_CACHE_DEFAULT_BYTES ((size_t)32 << 20)
/* What an allocator spends per block beyond the size asked (glibc: 8 to
 * 16 bytes of header and rounding); charged so that a record of many
 * small blocks is not counted below its cost. */
#define SPFKIT__RECORD_CACHE_BLOCK_OVERHEAD 16u

/* max_bytes 0: SPFKIT__RECORD_CACHE_DEFAULT_BYTES. */
int spfkit__record_cache_new_bounded(const struct spfkit_allocator *a, size_t max_entries,
				     size_t max_bytes, struct spfkit__record_cache **out);
/* Every entry must have been released. NULL is a no-op. */
void spfkit__record_cache_free(struct spfkit__record_cache *c);

/*
 * The entry for this record text, parsed now if it is not cached, with a
 * reference the caller gives back with spfkit__record_cache_release().
 * 0 or SPFKIT_ENOMEM. The entry's rc tells whether the record is valid.
 * An entry that cannot be cached (larger than the whole budget, or the
 * cache is full of entries other evaluations hold) is still returned,
 * private to the caller and freed by its release. Without a cache
 * (max_entries 0) the entry is made with private_alloc when it is not
 * NULL and has the memory, else with the cache's allocator:
 * private_alloc's blocks may outlive the entry's release (the
 * evaluation's arena, spfkit__arena_hook), and it must outlive them.
 */
int spfkit__record_cache_get(struct spfkit__record_cache *c, const char *text, size_t len,
			     const struct spfkit_allocator *private_alloc,
			     struct spfkit__record_cache_entry **out);
void spfkit__record_cache_release(struct spfkit__record_cache *c,
				  struct spfkit__record_cache_entry *e);

/*
 * What spfkit__record_cache_get() does without a cache, for a context that has
 * none (spfkit_config.no_record_cache): the entry, private to the caller,
 * made with private_alloc as above, else with alloc. Released as any.
 */
int spfkit__record_cache_private(const struct spfkit_allocator *alloc,
				 const struct spfkit_allocator *private_alloc, const char *text,
				 size_t len, struct spfkit__record_cache_entry **out);

/*
 * The record memo (record_memo.c): what the answer to the question
 * (type, name) held (hash: spfkit__namehash), if it came in at most
 * `now` and its TTL has not passed. 1 on a hit: either out->entry, a TXT
 * answer's SPF record, with a reference as spfkit__record_cache_get() gives
 * and where its TXT records were (txt_count, txt_at); or entry NULL and
 * a copy of the answer (status, rrs, count) made in `to`. ttl: seconds
 * left. 0 on a miss (or when `to` is out of memory). The memo's node of a
 * record also holds that domain's address plans (record_plan.h).
 */
struct spfkit__record_memo {
	struct spfkit__record_cache_entry *entry;
	uint32_t txt_count, txt_at, ttl;
	enum spfkit_dns_status status;
	struct spfkit_dns_rr *rrs;
	size_t count;
};
int spfkit__record_memo_get(struct spfkit__record_cache *c, uint16_t type, const char *name,
			    size_t len,
			    uint64_t hash, int64_t now, struct spfkit__arena *to,
			    struct spfkit__record_memo *out);
/*
 * Remember that name's TXT answer (txt_count TXT records, the SPF one at
 * txt_at) held e's record, for ttl seconds from now, in place of what the
 * name held before. e must be held. Best effort: not kept when out of
 * memory, when the budget has no room, or when the name's bucket already
 * holds SPFKIT__RECORD_MEMO_CHAIN names (names are chosen by whoever
 * publishes records, and the hash is not keyed: a bounded chain keeps
 * every lookup short however they collide).
 */
void spfkit__record_memo_put(struct spfkit__record_cache *c, struct spfkit__record_cache_entry *e,
			     const char *name, size_t len, uint64_t hash, int64_t now, uint32_t ttl,
			     uint32_t txt_count, uint32_t txt_at);
/*
 * Remember any other answer (OK, NODATA or NXDOMAIN; a's records are
 * those of the type asked, as the evaluation keeps them) for a->ttl
 * seconds, the same best effort; not when its records take more than
 * SPFKIT__RECORD_MEMO_ANSWER_MAX bytes. The memo keeps at most as many
 * answers as the cache keeps records, least recently used first out.
 */
void spfkit__record_memo_put_answer(struct spfkit__record_cache *c, uint16_t type, const char *name,
				    size_t len, uint64_t hash, int64_t now,
				    const struct spfkit_dns_answer *a);
#define SPFKIT__RECORD_MEMO_ANSWER_MAX 1024u
#define SPFKIT__RECORD_MEMO_CHAIN 8u

#endif
