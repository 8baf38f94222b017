/*
 * Message handlers, process-wide as in libspf2. This library itself
 * never calls SPF_error_handler and never aborts: failures are returned
 * (SPF_E_* codes, NULL objects). The handlers and the *x functions are
 * here for programs that install or call them.
 */
#ifndef INC_SPF_LOG
#define INC_SPF_LOG

#include <stdarg.h>

#define SPF_error(errmsg) SPF_errorx(__FILE__, __LINE__, "%s", errmsg)
#define SPF_warning(errmsg) SPF_warningx(__FILE__, __LINE__, "%s", errmsg)
#define SPF_info(errmsg) SPF_infox(__FILE__, __LINE__, "%s", errmsg)
#define SPF_debug(errmsg) SPF_debugx(__FILE__, __LINE__, "%s", errmsg)

/* Called by a program only: runs SPF_error_handler, then aborts if the
 * handler returns (the declaration promises no return). */
void SPF_errorx(const char *file, int line, const char *format, ...)
	__attribute__((noreturn)) __attribute__((format(printf, 3, 4)));
void SPF_errorx2(const char *format, ...);
void SPF_errorv(const char *file, int line, const char *format, va_list ap)
	__attribute__((noreturn)) __attribute__((format(printf, 3, 0)));
void SPF_warningx(const char *file, int line, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
void SPF_warningx2(const char *format, ...);
void SPF_warningv(const char *file, int line, const char *format, va_list ap)
	__attribute__((format(printf, 3, 0)));
void SPF_infox(const char *file, int line, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
void SPF_infox2(const char *format, ...);
void SPF_infov(const char *file, int line, const char *format, va_list ap)
	__attribute__((format(printf, 3, 0)));
void SPF_debugx(const char *file, int line, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
void SPF_debugx2(const char *format, ...);
void SPF_debugv(const char *file, int line, const char *format, va_list ap)
	__attribute__((format(printf, 3, 0)));

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define SPF_errorf(format, ...) SPF_errorx(__FILE__, __LINE__, format, ##__VA_ARGS__)
#define SPF_warningf(format, ...) SPF_warningx(__FILE__, __LINE__, format, ##__VA_ARGS__)
#define SPF_infof(format, ...) SPF_infox(__FILE__, __LINE__, format, ##__VA_ARGS__)
#define SPF_debugf(format, ...) SPF_debugx(__FILE__, __LINE__, format, ##__VA_ARGS__)
#else
#define SPF_errorf SPF_errorx2
#define SPF_warningf SPF_warningx2
#define SPF_infof SPF_infox2
#define SPF_debugf SPF_debugx2
#endif

/* Handlers writing to stderr/stdout, and to syslog. */
void SPF_error_stdio(const char *file, int line, const char *errmsg) __attribute__((noreturn));
void SPF_warning_stdio(const char *file, int line, const char *errmsg);
void SPF_info_stdio(const char *file, int line, const char *errmsg);
void SPF_debug_stdio(const char *file, int line, const char *errmsg);
void SPF_error_syslog(const char *file, int line, const char *errmsg) __attribute__((noreturn));
void SPF_warning_syslog(const char *file, int line, const char *errmsg);
void SPF_info_syslog(const char *file, int line, const char *errmsg);
void SPF_debug_syslog(const char *file, int line, const char *errmsg);

#define SPF_DEFAULT_ERROR_HANDLER SPF_error_stdio
#define SPF_DEFAULT_WARNING_HANDLER SPF_warning_stdio
#define SPF_DEFAULT_INFO_HANDLER SPF_info_stdio
#define SPF_DEFAULT_DEBUG_HANDLER SPF_debug_stdio

/* A program may replace these (NULL silences a kind). */
extern void (*SPF_error_handler)(const char *, int, const char *) __attribute__((noreturn));
extern void (*SPF_warning_handler)(const char *, int, const char *);
extern void (*SPF_info_handler)(const char *, int, const char *);
extern void (*SPF_debug_handler)(const char *, int, const char *);

#define SPF_ASSERT_NOTNULL(x) \
	do { \
		if ((x) == NULL) \
			SPF_error(#x " is NULL"); \
	} while (0)

#endif
