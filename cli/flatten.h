/*
 * `spfkit flatten`: internal interfaces between its files.
 *
 *   cmd_flatten.c     options, --help, the run, --check-live, exit status
 *   flatten_set.c     address sets (tree_addr.c's ranges, kept sorted and
 *                     joined): union, difference, CIDR blocks, their text
 *   flatten_model.c   what the records mean, built by watching lint's walk
 *                     (lint_walk.c): per qualifier, the addresses decided
 *   flatten_emit.c    the flattened records: packing into _spfN names under
 *                     the size limits, the BIND zone fragment, JSON
 *   flatten_verify.c  a resolver answering the new records first, and the
 *                     evaluation of original and flattened, address by address
 *
 * One walker, lint's: the flattener is an observer of lint_run(), so the
 * records it reads, the answers it sees and the lookups it counts are
 * lint's and tree's (docs/flatten.md).
 */
#ifndef SPFKIT_CLI_FLATTEN_H
#define SPFKIT_CLI_FLATTEN_H

#include "tree.h"

/* The four results a record's terms can give (RFC 7208 §4.6.2, §2.6). */
enum flat_q { FQ_PASS = 0, FQ_FAIL, FQ_SOFTFAIL, FQ_NEUTRAL, FQ_COUNT };

/* '+', '-', '~', '?' for a qualifier; the qualifier for such a byte (FQ_PASS by default). */
char flat_q_char(enum flat_q q);
enum flat_q flat_q_of(int qualifier);

/* ---- flatten_set.c ------------------------------------------------------ */

/*
 * A set of addresses is a struct tree_ranges kept normal: sorted, both
 * families (IPv4 first), ranges neither overlapping nor touching. Every
 * function here takes and leaves sets normal; 0 or SPFKIT_ENOMEM.
 */
int flat_set_normalize(struct tree_ranges *s);
int flat_set_add_prefix(struct tree_ranges *s, int v6, const unsigned char *addr, unsigned prefix);
int flat_set_union(struct tree_ranges *dst, const struct tree_ranges *src);
/* out = a minus b (out is emptied first; it may not be a or b). */
int flat_set_minus(struct tree_ranges *out, const struct tree_ranges *a,
		   const struct tree_ranges *b);
/* Every address of both families. */
int flat_set_universe(struct tree_ranges *s);
int flat_set_equal(const struct tree_ranges *a, const struct tree_ranges *b);
int flat_set_copy(struct tree_ranges *dst, const struct tree_ranges *src);

/* One CIDR block. */
struct flat_cidr {
	int v6;
	unsigned char addr[16];
	unsigned prefix;
};

struct flat_cidrs {
	struct flat_cidr *items;
	size_t n, cap;
};

/* The fewest aligned blocks covering s exactly, in address order (IPv4 first). */
int flat_set_cidrs(const struct tree_ranges *s, struct flat_cidrs *out);
void flat_cidrs_free(struct flat_cidrs *c);
/* "ip4:192.0.2.0/24", "ip6:2001:db8::/32"; /32 and /128 left out. */
const char *flat_cidr_term(const struct flat_cidr *c, char *buf, size_t size);
/* The address at the start (or end) of a range, as an evaluator's spfkit_ip. */
void flat_range_ip(const struct tree_range *r, int last, struct spfkit_ip *out);

/* ---- flatten_model.c ---------------------------------------------------- */

#define FLAT_MAX_DEPTH 24u /* deeper than lint's walk goes (16) */

/* One part of the flattened root, in order. */
struct flat_seg {
	int opaque;       /* 1: a term kept as written */
	const char *text; /* opaque: the term (in the report's arena) */
	size_t len;
	struct tree_ranges q[FQ_COUNT]; /* a run: addresses each qualifier decides here */
};

struct flat_frame;

struct flat_model {
	struct lint_report *r; /* its arena holds every string */
	const char *const *keep; /* --keep include:NAME targets */
	size_t nkeep;
	struct flat_frame *stack; /* the records being walked, the root first */
	size_t depth;
	unsigned skip;            /* > 0: inside a subtree kept as an include */
	struct flat_seg *segs;
	size_t nsegs, capsegs;
	struct tree_ranges decided; /* the root's: every address some run decides */
	struct tree_ranges blocks;  /* every range a term named, for the boundary addresses */
	const char *redirect;       /* the root's redirect= kept as written, or NULL */
	const char *exp;            /* the root's exp= as written, or NULL */
	int complete;   /* the runs decide every address (an all, an inlined redirect) */
	int root_all;   /* the root's record ends in an all */
	int root_seen;  /* the root's record was read and parsed */
	uint64_t hash;  /* FNV-1a 64 of every record and address answer read */
	uint32_t min_ttl;
	int has_ttl;
	unsigned records; /* records read */
	int err;          /* SPFKIT_ENOMEM */
	char problem[512]; /* why the source cannot be flattened; "" when it can */
};

/* 0 or SPFKIT_ENOMEM. keep: --keep targets (may be NULL when nkeep is 0). */
int flat_model_init(struct flat_model *m, struct lint_report *r, const char *const *keep,
		    size_t nkeep);
void flat_model_free(struct flat_model *m);
/* The lint_walk_fn; arg is a struct flat_model. */
void flat_model_observe(void *arg, const struct lint_walk_event *ev);
/*
 * After the walk: the lint findings that make flattening impossible
 * (temperror, a permerror in the source) into m->problem. 1 when the
 * model can be used.
 */
int flat_model_usable(struct flat_model *m);

/* ---- flatten_emit.c ----------------------------------------------------- */

struct flat_record {
	const char *name; /* without the final dot */
	char *text;       /* the record's text, joined */
	size_t len;
	size_t strings;   /* character-strings it is split into */
	size_t answer;    /* RFC 7208 §3.4 size at that name: name, this and other TXT */
};

struct flat_output {
	struct flat_record *recs; /* recs[0] is the root */
	size_t n, cap;
	size_t blocks4, blocks6;  /* CIDR blocks written */
	unsigned lookups_after;   /* DNS terms of the flattened root (lint's worst case) */
	struct flat_cidrs all_blocks; /* every block written, for the boundary addresses */
};

struct flat_emit_opts {
	const char *domain;
	int chain;
	/* other TXT records at a name: their RFC 7208 §3.4 bytes (not SPF ones) */
	size_t (*other_txt)(void *arg, const char *name, size_t len);
	void *other_arg;
};

/* Build the records; 0, SPFKIT_ENOMEM, or SPFKIT_E2BIG with a line in err. */
int flat_emit(const struct flat_model *m, const struct flat_emit_opts *o, struct flat_output *out,
	      char *err, size_t errlen);
void flat_output_free(struct flat_output *out);
/* One record as zone text: NAME. TTL IN TXT "..." "..." (escaped). */
void flat_zone_line(struct spfkit__buf *b, const struct flat_record *rec, uint32_t ttl);
/* The RFC 7208 §3.4 size of a TXT record of len bytes: strings with their length octets. */
size_t flat_txt_wire(size_t len);

/* ---- flatten_verify.c --------------------------------------------------- */

struct flat_verify {
	const char *domain;
	const char *source;       /* the original record's text */
	size_t source_len;
	const struct flat_output *out;
	const struct flat_model *m;
	struct lint_dns *dns;     /* the walk's answers, and the resolver behind them */
	unsigned long seed;
	unsigned samples;
	int64_t now;
	/* results */
	size_t addresses;          /* evaluated */
	size_t differences;
	size_t permerror_removed;  /* the original gives permerror at the RFC limits, flattened does not */
	struct spfkit__buf report; /* the differences, one line each (the first 20) */
};

/* Boundary and sample addresses one run checks at most (bounds a hostile tree's work). */
#define FLAT_MAX_CHECKED 1000000u

/* Evaluate original and flattened for every address; 0, SPFKIT_E2BIG (over
 * FLAT_MAX_CHECKED addresses), or another spfkit_err. */
int flat_verify_run(struct flat_verify *v);
/* The resolver of the flattened world (answers of dns, the new records first). */
int flat_overlay_new(struct lint_dns *dns, const struct flat_output *out, const char *domain,
		     struct spfkit_resolver **res);

/* ---- cmd_flatten.c ------------------------------------------------------ */

int cli_flatten_main(int argc, char **argv);
void cli_flatten_usage(FILE *f);

#endif
