/*
 * Compiled SPF records and macro-strings. In this library they are
 * opaque: records are parsed and evaluated by spfkit.
 */
#ifndef INC_SPF_RECORD
#define INC_SPF_RECORD

typedef struct SPF_record_struct SPF_record_t;
typedef struct SPF_macro_struct SPF_macro_t;

#include "spf_response.h"
#include "spf_request.h"
#include "spf_server.h"

#define SPF_MAX_STR_LEN 255
#define SPF_MAX_MECH_LEN 511
#define SPF_MAX_MOD_LEN 511

#endif
