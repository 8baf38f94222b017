/*
 * spfkit's libspf2-compatible interface (compat/libspf2): the umbrella
 * header programs written for libspf2 1.2 include as <spf2/spf.h>.
 *
 * The declarations and struct layouts follow libspf2 1.2.10's ABI so
 * that a program built against Debian's libspf2-dev runs unchanged on
 * libspf2.so.2 built from spfkit; tests/compat checks every size, offset
 * and enum value against Debian's headers. Behaviour differences are
 * listed in docs/libspf2-compat.md.
 */
#ifndef INC_SPF
#define INC_SPF

#ifndef __GNUC__
#define __attribute__(x)
#endif

#include "spf_lib_version.h"

#include "spf_server.h"
#include "spf_request.h"
#include "spf_response.h"
#include "spf_dns.h"
#include "spf_log.h"

#define SPF_VERSION 1
#define SPF_VER_STR "v=spf1"

/* Buffer sizes of libspf2, kept for programs that use the names. */
#define SPF_C_ERR_MSG_SIZE (2 * 80)
#define SPF_SMTP_COMMENT_SIZE (4 * 80)
#define SPF_RECEIVED_SPF_SIZE (6 * 80)
#define SPF_SYSLOG_SIZE (10 * 80)

#define SPF_DEFAULT_MAX_DNS_MECH 10
#define SPF_DEFAULT_MAX_DNS_PTR 10
#define SPF_DEFAULT_MAX_DNS_MX 10
#define SPF_DEFAULT_SANITIZE 1
/* Only used by SPF_server_set_localpolicy(..., use_default_whitelist = 1). */
#define SPF_DEFAULT_WHITELIST "include:spf.trusted-forwarder.org"
#define SPF_EXP_MOD_NAME "exp-text"
/* The explanation a server starts with (a macro-string, RFC 7208 §7). */
#define SPF_DEFAULT_EXP "Please%_see%_http://www.openspf.org/Why?id=%{S}&ip=%{C}&receiver=%{R}"

/* Static English text for an error code, a result, a reason. */
const char *SPF_strerror(SPF_errcode_t spf_err);
const char *SPF_strresult(SPF_result_t result);
const char *SPF_strreason(SPF_reason_t reason);

/* The libspf2 version this library stands in for (1.2.10). */
void SPF_get_lib_version(int *major, int *minor, int *patch);

/* "A", "AAAA", "MX", "PTR", "TXT", "SPF", "ANY", "BAD" or "??". */
const char *SPF_strrrtype(ns_type rr_type);

#endif
