/* Names of the SPF results (RFC 7208 §2.6). */
#include <string.h>

#include <spfkit/eval.h>

#include "core.h"

static const char *const result_names[] = {
	[SPFKIT_RESULT_NONE] = "none",
	[SPFKIT_RESULT_NEUTRAL] = "neutral",
	[SPFKIT_RESULT_PASS] = "pass",
	[SPFKIT_RESULT_FAIL] = "fail",
	[SPFKIT_RESULT_SOFTFAIL] = "softfail",
	[SPFKIT_RESULT_TEMPERROR] = "temperror",
	[SPFKIT_RESULT_PERMERROR] = "permerror",
};

const char *spfkit_result_name(enum spfkit_result_code code)
{
	if ((unsigned)code >= sizeof(result_names) / sizeof(result_names[0]))
		return "unknown";
	return result_names[code];
}

int spfkit_result_from_name(const char *name, size_t len)
{
	size_t i;

	if (name == NULL)
		return -1;
	for (i = 0; i < sizeof(result_names) / sizeof(result_names[0]); i++)
		if (spfkit__memcaseeq(name, len, result_names[i], strlen(result_names[i])))
			return (int)i;
	return -1;
}
