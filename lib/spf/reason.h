/*
 * Inside the reason codes (reason.c). A rule text handed out by the
 * parsers is always spfkit_reason_text() of its code, so the code is
 * found again from the pointer alone.
 */
#ifndef SPFKIT_REASON_INT_H
#define SPFKIT_REASON_INT_H

#include <spfkit/reason.h>

/*
 * The texts of the temperror codes, for static answers (check.c,
 * query.c) and DNS backends: a TEMPFAIL answer whose detail is one of
 * these gives that code (spfkit__reason_of_detail()).
 */
extern const char spfkit__reason_timeout[];
extern const char spfkit__reason_servfail[];
extern const char spfkit__reason_refused[];
extern const char spfkit__reason_dns_failure[];
extern const char spfkit__reason_budget[];
extern const char spfkit__reason_questions[];
extern const char spfkit__reason_submit[];

/* The code whose spfkit_reason_text() is `text` (the same address), or
 * SPFKIT_REASON_NONE. */
enum spfkit_reason spfkit__reason_of_text(const char *text);
/* The temperror code of a TEMPFAIL answer's detail: the DNS codes by
 * their texts' addresses, SPFKIT_REASON_DNS_ERROR for any other. */
enum spfkit_reason spfkit__reason_of_detail(const char *detail);

#endif
