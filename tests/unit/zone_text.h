/*
 * Unit tests' zones written as zone-file text (include after cmocka.h and
 * <spfkit/spfkit.h>): the test fails, naming the line, when it does not load.
 */
#ifndef SPFKIT_TEST_ZONE_TEXT_H
#define SPFKIT_TEST_ZONE_TEXT_H

static inline struct spfkit_zone *zone_of(const char *text)
{
	struct spfkit_zone *z = NULL;
	char err[256];

	assert_int_equal(spfkit_zone_new(NULL, &z), 0);
	if (spfkit_zone_load_text(z, text, strlen(text), "test", NULL, err, sizeof(err)) != 0)
		fail_msg("zone: %s", err);
	return z;
}

#endif
