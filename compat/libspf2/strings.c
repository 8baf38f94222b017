/*
 * libspf2's fixed texts (result, reason and error names: programs log
 * them and compare them, so they are libspf2's words) and its
 * process-wide message handlers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include "spf2_int.h"

void SPF_get_lib_version(int *major, int *minor, int *patch)
{
	if (major != NULL)
		*major = SPF_LIB_VERSION_MAJOR;
	if (minor != NULL)
		*minor = SPF_LIB_VERSION_MINOR;
	if (patch != NULL)
		*patch = SPF_LIB_VERSION_PATCH;
}

const char *SPF_strresult(SPF_result_t result)
{
	switch (result) {
	case SPF_RESULT_INVALID:
		return "(invalid)";
	case SPF_RESULT_NEUTRAL:
		return "neutral";
	case SPF_RESULT_PASS:
		return "pass";
	case SPF_RESULT_FAIL:
		return "fail";
	case SPF_RESULT_SOFTFAIL:
		return "softfail";
	case SPF_RESULT_NONE:
		return "none";
	case SPF_RESULT_TEMPERROR:
		return "temperror";
	case SPF_RESULT_PERMERROR:
		return "permerror";
	}
	return "(error: unknown result)";
}

const char *SPF_strreason(SPF_reason_t reason)
{
	switch (reason) {
	case SPF_REASON_NONE:
		return "none";
	case SPF_REASON_LOCALHOST:
		return "localhost";
	case SPF_REASON_LOCAL_POLICY:
		return "local policy";
	case SPF_REASON_MECH:
		return "mechanism";
	case SPF_REASON_DEFAULT:
		return "default";
	case SPF_REASON_2MX:
		return "secondary MX";
	case SPF_REASON_FAILURE:
		break;
	}
	return "(invalid reason)";
}

const char *SPF_strrrtype(ns_type rr_type)
{
	switch ((int)rr_type) {
	case ns_t_a:
		return "A";
	case ns_t_aaaa:
		return "AAAA";
	case ns_t_any:
		return "ANY";
	case ns_t_invalid:
		return "BAD";
	case ns_t_mx:
		return "MX";
	case ns_t_ptr:
		return "PTR";
	case ns_t_spf:
		return "SPF";
	case ns_t_txt:
		return "TXT";
	default:
		return "??";
	}
}

static const char *const error_text[] = {
	[SPF_E_SUCCESS] = "No errors",
	[SPF_E_NO_MEMORY] = "Out of memory",
	[SPF_E_NOT_SPF] = "Could not find a valid SPF record",
	[SPF_E_SYNTAX] = "Syntax error",
	[SPF_E_MOD_W_PREF] = "Modifiers can not have prefixes",
	[SPF_E_INVALID_CHAR] = "Invalid character found",
	[SPF_E_UNKNOWN_MECH] = "Unknown mechanism found",
	[SPF_E_INVALID_OPT] = "Invalid option found",
	[SPF_E_INVALID_CIDR] = "Invalid CIDR length",
	[SPF_E_MISSING_OPT] = "Required option is missing",
	[SPF_E_INTERNAL_ERROR] = "Internal programming error",
	[SPF_E_INVALID_ESC] = "Invalid %-escape character",
	[SPF_E_INVALID_VAR] = "Invalid macro variable",
	[SPF_E_BIG_SUBDOM] = "Subdomain truncation depth too large",
	[SPF_E_INVALID_DELIM] = "Invalid delimiter character",
	[SPF_E_BIG_STRING] = "Option string too long",
	[SPF_E_BIG_MECH] = "Too many mechanisms",
	[SPF_E_BIG_MOD] = "Too many modifiers",
	[SPF_E_BIG_DNS] = "Mechanisms used too many DNS lookups",
	[SPF_E_INVALID_IP4] = "Invalid IPv4 address literal",
	[SPF_E_INVALID_IP6] = "Invalid IPv6 address literal",
	[SPF_E_INVALID_PREFIX] = "Invalid mechanism prefix",
	[SPF_E_RESULT_UNKNOWN] = "SPF result is \"unknown\"",
	[SPF_E_UNINIT_VAR] = "Uninitialized variable",
	[SPF_E_MOD_NOT_FOUND] = "Modifier not found",
	[SPF_E_NOT_CONFIG] = "Not configured",
	[SPF_E_DNS_ERROR] = "DNS lookup failure",
	[SPF_E_BAD_HOST_IP] = "Invalid hostname (possibly an IP address?)",
	[SPF_E_BAD_HOST_TLD] = "Hostname has a missing or invalid TLD",
	[SPF_E_MECH_AFTER_ALL] = "Mechanisms found after the \"all:\" mechanism will be ignored",
	[SPF_E_INCLUDE_RETURNED_NONE] = "include: mechanism returned 'none'",
	[SPF_E_RECURSIVE] = "include: or redirect= caused unlimited recursion",
	[SPF_E_MULTIPLE_RECORDS] = "Multiple SPF or TXT records for domain.",
};

const char *SPF_strerror(SPF_errcode_t spf_err)
{
	size_t i = (size_t)spf_err;

	if (i < sizeof(error_text) / sizeof(error_text[0]) && error_text[i] != NULL)
		return error_text[i];
	return "Unknown SPF error code";
}

/* ---- message handlers ------------------------------------------------ */

void SPF_error_stdio(const char *file, int line, const char *errmsg)
{
	fprintf(stderr, "Error: %s:%d %s\n", file ? file : "?", line, errmsg ? errmsg : "");
	abort(); /* only when a program calls SPF_errorx(): see spf_log.h */
}

void SPF_warning_stdio(const char *file, int line, const char *errmsg)
{
	fprintf(stderr, "Warning: %s:%d %s\n", file ? file : "?", line, errmsg ? errmsg : "");
}

void SPF_info_stdio(const char *file, int line, const char *errmsg)
{
	(void)file, (void)line;
	printf("%s\n", errmsg ? errmsg : "");
}

void SPF_debug_stdio(const char *file, int line, const char *errmsg)
{
	fprintf(stderr, "Debug: %s:%d %s\n", file ? file : "?", line, errmsg ? errmsg : "");
}

void SPF_error_syslog(const char *file, int line, const char *errmsg)
{
	syslog(LOG_MAIL | LOG_ERR, "%s:%d %s", file ? file : "?", line, errmsg ? errmsg : "");
	abort(); /* only when a program calls SPF_errorx() */
}

void SPF_warning_syslog(const char *file, int line, const char *errmsg)
{
	syslog(LOG_MAIL | LOG_WARNING, "%s:%d %s", file ? file : "?", line, errmsg ? errmsg : "");
}

void SPF_info_syslog(const char *file, int line, const char *errmsg)
{
	(void)file, (void)line;
	syslog(LOG_MAIL | LOG_INFO, "%s", errmsg ? errmsg : "");
}

void SPF_debug_syslog(const char *file, int line, const char *errmsg)
{
	syslog(LOG_MAIL | LOG_DEBUG, "%s:%d %s", file ? file : "?", line, errmsg ? errmsg : "");
}

void (*SPF_error_handler)(const char *, int, const char *)
	__attribute__((noreturn)) = SPF_error_stdio;
void (*SPF_warning_handler)(const char *, int, const char *) = SPF_warning_stdio;
void (*SPF_info_handler)(const char *, int, const char *) = SPF_info_stdio;
void (*SPF_debug_handler)(const char *, int, const char *) = SPF_debug_stdio;

typedef void spf2_handler(const char *, int, const char *);

__attribute__((format(printf, 4, 0)))
static void emit(spf2_handler *h, const char *file, int line, const char *format, va_list ap)
{
	char buf[1024];

	if (h == NULL)
		return;
	vsnprintf(buf, sizeof(buf), format ? format : "", ap);
	h(file, line, buf);
}

void SPF_errorv(const char *file, int line, const char *format, va_list ap)
{
	emit(SPF_error_handler, file, line, format, ap);
	abort(); /* declared noreturn; reached only from a program's own call */
}

void SPF_errorx(const char *file, int line, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	SPF_errorv(file, line, format, ap);
}

void SPF_errorx2(const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	SPF_errorv(NULL, 0, format, ap);
}

#define SPF2_LOG_FNS(kind) \
	void SPF_##kind##v(const char *file, int line, const char *format, va_list ap) \
	{ \
		emit(SPF_##kind##_handler, file, line, format, ap); \
	} \
	void SPF_##kind##x(const char *file, int line, const char *format, ...) \
	{ \
		va_list ap; \
		va_start(ap, format); \
		emit(SPF_##kind##_handler, file, line, format, ap); \
		va_end(ap); \
	} \
	void SPF_##kind##x2(const char *format, ...) \
	{ \
		va_list ap; \
		va_start(ap, format); \
		emit(SPF_##kind##_handler, NULL, 0, format, ap); \
		va_end(ap); \
	}
SPF2_LOG_FNS(warning)
SPF2_LOG_FNS(info)
SPF2_LOG_FNS(debug)
