/* spfkit_version(): the version this library was built as (<spfkit/version.h>). */
#include <spfkit/common.h>

const char *spfkit_version(void)
{
	return SPFKIT_VERSION_STRING;
}
