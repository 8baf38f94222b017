/*
 * Internationalized mail (RFC 8616 §4): the domains SPF takes from the
 * SMTP session, given as U-labels, become A-labels before any lookup or
 * macro expansion. Internal API.
 */
#ifndef SPFKIT_IDNA_H
#define SPFKIT_IDNA_H

#include <stddef.h>

#include "core.h"

/*
 * The domain name[0..len) in A-labels: IDNA2008 (RFC 5891) with the
 * UTS #46 non-transitional mapping (lowercase, NFC, full stops), as
 * libidn2 gives it. An ASCII name is returned as it is (*out = name,
 * nothing copied, libidn2 not called): A-labels, case and all, are
 * untouched and ASCII costs one scan. Otherwise *out is a NUL-terminated
 * copy in `ar`.
 * 0 (ASCII), 1 (converted), SPFKIT_ENOMEM, or SPFKIT_ESYNTAX with *why
 * a static text naming what is wrong: not UTF-8, a character IDNA2008
 * disallows, a label or name too long (name over 1024 bytes is refused
 * before any conversion), a NUL byte among the others.
 */
int spfkit__idna_to_alabels(struct spfkit__arena *ar, const char *name, size_t len,
			    const char **out, size_t *out_len, const char **why);

/* ---- an evaluation's identities (RFC 8616 §4) ------------------------ */

struct spfkit_eval;
struct frame;
struct spfkit_macro_string;
struct spfkit_term;

/*
 * Once request.c has split <sender>: its domain and the HELO name in
 * A-labels (sender, sender_domain, helo, local), what the session gave
 * kept in sender_received and helo_received, the ASCII forms for
 * headers in sender_ascii and helo_ascii (NULL when there is none), and
 * idna_why set when <sender>'s domain is no IDN. 0 or SPFKIT_ENOMEM.
 */
int spfkit__idna_identities(struct spfkit_eval *ev);
/* Does the domain-spec use a letter with no ASCII value (a UTF-8 local
 * part, a HELO that is no IDN)? Its term then matches nothing. */
int spfkit__idna_no_ascii(const struct spfkit_eval *ev, const struct spfkit_macro_string *ms);
/* Trace notes at the top check_host(): both forms of what was converted. */
void spfkit__idna_trace(struct spfkit_eval *ev, const struct frame *f);
/* Trace note: term t matches nothing for spfkit__idna_no_ascii(). */
void spfkit__idna_trace_skip(struct spfkit_eval *ev, const struct frame *f,
			     const struct spfkit_term *t);

#endif
