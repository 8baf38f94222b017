/*
 * The outcome of a query: result, reason, error code, the texts for
 * headers and SMTP replies, and the messages collected on the way.
 */
#ifndef INC_SPF_RESPONSE
#define INC_SPF_RESPONSE

/* Numbering of libspf2; SPF_RESULT_INVALID is never a query's result
 * here (a syntax error is SPF_RESULT_PERMERROR). */
typedef enum SPF_result_enum {
	SPF_RESULT_INVALID = 0,
	SPF_RESULT_NEUTRAL = 1,
	SPF_RESULT_PASS = 2,
	SPF_RESULT_FAIL = 3,
	SPF_RESULT_SOFTFAIL = 4,
	SPF_RESULT_NONE = 5,
	SPF_RESULT_TEMPERROR = 6,
	SPF_RESULT_PERMERROR = 7
} SPF_result_t;

/* What decided the result. */
typedef enum SPF_reason_enum {
	SPF_REASON_NONE = 0,
	SPF_REASON_FAILURE = 1,      /* no record could be used */
	SPF_REASON_LOCALHOST = 2,    /* loopback client */
	SPF_REASON_LOCAL_POLICY = 3,
	SPF_REASON_MECH = 4,         /* a mechanism matched */
	SPF_REASON_DEFAULT = 5,      /* no mechanism matched */
	SPF_REASON_2MX = 6
} SPF_reason_t;

/* Error codes; SPF_strerror() gives their text. */
typedef enum SPF_errcode_t {
	SPF_E_SUCCESS = 0,
	SPF_E_NO_MEMORY = 1,
	SPF_E_NOT_SPF = 2,
	SPF_E_SYNTAX = 3,
	SPF_E_MOD_W_PREF = 4,
	SPF_E_INVALID_CHAR = 5,
	SPF_E_UNKNOWN_MECH = 6,
	SPF_E_INVALID_OPT = 7,
	SPF_E_INVALID_CIDR = 8,
	SPF_E_MISSING_OPT = 9,
	SPF_E_INTERNAL_ERROR = 10,
	SPF_E_INVALID_ESC = 11,
	SPF_E_INVALID_VAR = 12,
	SPF_E_BIG_SUBDOM = 13,
	SPF_E_INVALID_DELIM = 14,
	SPF_E_BIG_STRING = 15,
	SPF_E_BIG_MECH = 16,
	SPF_E_BIG_MOD = 17,
	SPF_E_BIG_DNS = 18,
	SPF_E_INVALID_IP4 = 19,
	SPF_E_INVALID_IP6 = 20,
	SPF_E_INVALID_PREFIX = 21,
	SPF_E_RESULT_UNKNOWN = 22,
	SPF_E_UNINIT_VAR = 23,
	SPF_E_MOD_NOT_FOUND = 24,
	SPF_E_NOT_CONFIG = 25,
	SPF_E_DNS_ERROR = 26,
	SPF_E_BAD_HOST_IP = 27,
	SPF_E_BAD_HOST_TLD = 28,
	SPF_E_MECH_AFTER_ALL = 29,
	SPF_E_INCLUDE_RETURNED_NONE = 30,
	SPF_E_RECURSIVE = 31,
	SPF_E_MULTIPLE_RECORDS = 32
} SPF_errcode_t;

/* One message: an error (is_error 1) or a warning. */
typedef struct SPF_error_struct {
	SPF_errcode_t code;
	char *message;
	char is_error;
} SPF_error_t;

typedef struct SPF_response_struct SPF_response_t;

#include "spf.h"
#include "spf_request.h"

/* Layout of libspf2 1.2.10; programs read these fields directly. */
struct SPF_response_struct {
	SPF_request_t *spf_request;
	SPF_record_t *spf_record_exp; /* always NULL here */
	SPF_result_t result;
	SPF_reason_t reason;
	SPF_errcode_t err;
	char *received_spf;       /* "Received-SPF: ..." */
	char *received_spf_value; /* points into received_spf, after the name */
	char *header_comment;
	char *smtp_comment;       /* fail, softfail, neutral: "<explanation> : Reason: <reason>" */
	char *explanation;        /* fail, softfail, neutral */
	SPF_error_t *errors;
	unsigned short errors_size;
	unsigned short errors_length;
	unsigned short num_errors; /* errors among errors_length (the rest are warnings) */
	int num_dns_mech;          /* DNS-querying terms the evaluation used */
};

SPF_response_t *SPF_response_new(SPF_request_t *spf_request);
void SPF_response_free(SPF_response_t *rp);
/* Keeps the better of a MAIL FROM and a secondary-MX response; frees the other. */
SPF_response_t *SPF_response_combine(SPF_response_t *main, SPF_response_t *r2mx);

SPF_result_t SPF_response_result(SPF_response_t *rp);
SPF_reason_t SPF_response_reason(SPF_response_t *rp);
SPF_errcode_t SPF_response_errcode(SPF_response_t *rp);
const char *SPF_response_get_received_spf(SPF_response_t *rp);
const char *SPF_response_get_received_spf_value(SPF_response_t *rp);
const char *SPF_response_get_header_comment(SPF_response_t *rp);
const char *SPF_response_get_smtp_comment(SPF_response_t *rp);
const char *SPF_response_get_explanation(SPF_response_t *rp);

/* Errors and warnings together. */
int SPF_response_messages(SPF_response_t *rp);
int SPF_response_errors(SPF_response_t *rp);
int SPF_response_warnings(SPF_response_t *rp);
/* NULL for an index out of range. */
SPF_error_t *SPF_response_message(SPF_response_t *rp, int idx);

SPF_errcode_t SPF_error_code(SPF_error_t *err);
const char *SPF_error_message(SPF_error_t *err);
char SPF_error_errorp(SPF_error_t *err);

SPF_errcode_t SPF_response_add_error(SPF_response_t *rp, SPF_errcode_t code,
				     const char *format, ...)
	__attribute__((format(printf, 3, 4)));
SPF_errcode_t SPF_response_add_warn(SPF_response_t *rp, SPF_errcode_t code,
				    const char *format, ...)
	__attribute__((format(printf, 3, 4)));

#endif
