/* Text for the API error codes of include/spfkit/common.h. */
#include "core.h"

const char *spfkit_strerror(int err)
{
	switch (err) {
	case SPFKIT_OK: return "success";
	case SPFKIT_ENOMEM: return "out of memory";
	case SPFKIT_EINVAL: return "invalid argument";
	case SPFKIT_ESYNTAX: return "syntax error";
	case SPFKIT_E2BIG: return "input or output too large";
	case SPFKIT_EIO: return "input/output error";
	case SPFKIT_ESTATE: return "call not valid in this state";
	case SPFKIT_ENOTFOUND: return "not found";
	case SPFKIT_EDNS: return "DNS backend failure";
	}
	return "unknown error";
}
