/*
 * Inside the reason codes (reason.c). A rule text handed out by the
 * parsers, or a DNS failure's detail, is always the code's row of
 * spfkit__reason_texts, so the code is found again from the pointer.
 */
#ifndef SPFKIT_REASON_INT_H
#define SPFKIT_REASON_INT_H

#include <spfkit/reason.h>

#define SPFKIT__REASON_COUNT (SPFKIT_REASON_MACRO_CONTROL + 1)
/* Room for the longest text with its NUL, and more: a row the text
 * filled exactly would have no NUL, which C allows without a word. */
#define SPFKIT__REASON_TEXT_MAX 64

/* Each code's text (spfkit_reason_text()); for static answers (check.c,
 * query.c) too: a TEMPFAIL whose detail is a row gives that code. */
extern const char spfkit__reason_texts[SPFKIT__REASON_COUNT][SPFKIT__REASON_TEXT_MAX];

/* The code whose text `text` is (its row's address), or
 * SPFKIT_REASON_NONE; constant time. */
enum spfkit_reason spfkit__reason_of_text(const char *text);
/* The temperror code of a TEMPFAIL answer's detail: the DNS codes by
 * their texts' addresses, SPFKIT_REASON_DNS_ERROR for any other. */
enum spfkit_reason spfkit__reason_of_detail(const char *detail);

#endif
