/*
 * Fuzz the master file loader (lib/resolver/zonefile.c) and what is
 * loaded: load the input as zone text, then look up fixed names and
 * names cut from the input, through spfkit_zone_lookup() and the zone
 * resolver, and free. Answers must keep the header's promises (count > 0
 * exactly when OK, records of the asked type); an error message must be
 * "fuzz:..." and fit its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spfkit/zone.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t fuzz_types[] = { SPFKIT_RR_A,   SPFKIT_RR_AAAA, SPFKIT_RR_MX, SPFKIT_RR_TXT,
				       SPFKIT_RR_PTR, SPFKIT_RR_SPF,  SPFKIT_RR_CNAME };
#define NTYPES (sizeof(fuzz_types) / sizeof(fuzz_types[0]))

static void check_answer(const struct spfkit_dns_answer *a, uint16_t type)
{
	size_t i;

	if ((a->count > 0) != (a->status == SPFKIT_DNS_OK))
		abort();
	if (a->status == SPFKIT_DNS_TEMPFAIL && a->detail == NULL)
		abort();
	for (i = 0; i < a->count; i++) {
		if (a->rrs[i].type != type || a->rrs[i].data == NULL)
			abort();
		if (type == SPFKIT_RR_A && a->rrs[i].len != 4)
			abort();
		if (type == SPFKIT_RR_AAAA && a->rrs[i].len != 16)
			abort();
	}
}

static void lookup_all_types(const struct spfkit_zone *z, const char *name, size_t len)
{
	struct spfkit_dns_answer a;
	size_t t;

	for (t = 0; t < NTYPES; t++) {
		if (spfkit_zone_lookup(z, name, len, fuzz_types[t], &a) != 0)
			abort();
		check_answer(&a, fuzz_types[t]);
	}
}

/* Owner-like words of the input: each line's first run of non-blanks. */
static void lookup_input_names(const struct spfkit_zone *z, const char *in, size_t size)
{
	size_t i = 0, start, n = 0;

	while (i < size && n < 32) {
		start = i;
		while (i < size && in[i] != ' ' && in[i] != '\t' && in[i] != '\n')
			i++;
		if (i > start) {
			lookup_all_types(z, in + start, i - start);
			n++;
		}
		while (i < size && in[i] != '\n')
			i++;
		i++;
	}
}

static void count_cb(void *arg, const struct spfkit_dns_answer *a)
{
	(void)a;
	(*(int *)arg)++;
}

static void through_resolver(const struct spfkit_zone *z)
{
	struct spfkit_resolver *r;
	uint64_t h = 0;
	int calls = 0, asked = 0;
	size_t t;

	if (spfkit_zone_resolver(z, &r) != 0)
		return;
	for (t = 0; t < NTYPES; t++)
		if (spfkit_resolver_submit(r, "example.com", 11, fuzz_types[t], count_cb, &calls, &h) == 0)
			asked++;
	spfkit_resolver_cancel(r, h);
	if (spfkit_resolver_wait(r, 0) != asked - 1 || calls != asked - 1)
		abort();
	spfkit_resolver_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const origins[] = { NULL, "example.com", "." };
	struct spfkit_zone *z;
	char err[256];
	const char *origin;
	int rc;

	if (spfkit_zone_new(NULL, &z) != 0)
		return 0;
	/* the last byte picks the origin, so every seed tries one */
	origin = origins[size > 0 ? data[size - 1] % 3 : 0];
	rc = spfkit_zone_load_text(z, (const char *)data, size, "fuzz", origin, err, sizeof(err));
	if (memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	if (rc != 0 && strncmp(err, "fuzz:", 5) != 0)
		abort();
	if (rc == 0 && err[0] != '\0')
		abort();
	lookup_all_types(z, "example.com", 11);
	lookup_all_types(z, "www.example.com.", 16);
	lookup_input_names(z, (const char *)data, size);
	through_resolver(z);
	(void)spfkit_zone_size(z);
	spfkit_zone_free(z);
	return 0;
}
