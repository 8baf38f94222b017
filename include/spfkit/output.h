/*
 * What receivers do with a result: the Received-SPF header (RFC 7208
 * §9.1), the Authentication-Results method entry (RFC 8601 §2.7.2) and
 * the SMTP reply of a rejection (RFC 7372 §3.2, RFC 7208 §8).
 *
 * Every function writes into a caller buffer, snprintf-style: it returns
 * the length the full text needs (not counting the NUL); when that is
 * >= size the text was cut (always NUL-terminated when size > 0). A
 * negative return is an error (SPFKIT_EINVAL). Nothing is allocated.
 * Every value taken from the SMTP session is quoted or escaped so that
 * no CR, LF or other control byte reaches the output: a hostile sender
 * or HELO cannot inject a header line. Control bytes, DEL and bytes
 * >= 0x80 in such values are written as '?' (the _utf8 writers keep
 * valid UTF-8 characters); a value longer than its cap
 * is cut and ends in "...", which keeps a header line below the 998
 * bytes of RFC 5322 §2.1.1 whatever the inputs are.
 */
#ifndef SPFKIT_OUTPUT_H
#define SPFKIT_OUTPUT_H

#include <stddef.h>

#include <spfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spfkit_result;

/*
 * "Received-SPF: pass (receiver: domain of sender designates ip as
 * permitted sender) client-ip=...; envelope-from=...; helo=...;
 * receiver=...; identity=mailfrom; mechanism=...; problem=..." on one
 * line, no CRLF. `with_name` 0 leaves out "Received-SPF: ".
 * Keys whose value is NULL or empty are left out; envelope-from only for
 * the MAIL FROM identity, problem only for temperror and permerror. A
 * value that is not a dot-atom is written as a quoted-string (so an IPv6
 * client-ip or "ip4:192.0.2.0/24" is quoted). SPFKIT_EINVAL: res NULL,
 * an unknown result code, or buf NULL with size > 0.
 */
int spfkit_format_received_spf(const struct spfkit_result *res, int with_name, char *buf,
			       size_t size);

/*
 * Internationalized mail (RFC 8616 §3): the fields above are ASCII. A
 * sender or HELO given in U-labels is written with its domain in
 * A-labels (res->sender_ascii, res->helo_ascii); a sender whose local
 * part is not ASCII has no ASCII form: envelope-from is left out and the
 * comment names the checked domain. For a message that is SMTPUTF8
 * (RFC 6531), whose header fields may hold UTF-8 (RFC 6532), these
 * _utf8 writers give the sender and HELO as the SMTP session gave them,
 * valid UTF-8 kept as it is (anything else still '?'), and
 * smtp.mailfrom in the U-labels the sender wrote. Same arguments and
 * errors as the ASCII writers.
 */
int spfkit_format_received_spf_utf8(const struct spfkit_result *res, int with_name, char *buf,
				    size_t size);
int spfkit_format_auth_results_utf8(const struct spfkit_result *res, const char *authserv_id,
				    int with_name, char *buf, size_t size);

/*
 * "Authentication-Results: authserv_id; spf=pass smtp.mailfrom=example.com"
 * (smtp.helo= for the HELO identity). `with_name` 0 gives only
 * "authserv_id; spf=..."; authserv_id NULL gives only the method entry
 * "spf=pass smtp.mailfrom=example.com".
 * smtp.mailfrom carries the domain SPF checked (res->identity_domain:
 * the MAIL FROM domain, or the HELO name for an empty MAIL FROM), not the
 * whole address: RFC 8601 §2.7.2 allows either, and the domain is what
 * was authenticated (policyd-spf does the same). Values that are not an
 * RFC 2045 token are quoted. With no domain at all the propspec is left
 * out ("spf=none"). Errors as for spfkit_format_received_spf().
 */
int spfkit_format_auth_results(const struct spfkit_result *res, const char *authserv_id,
			       int with_name, char *buf, size_t size);

/* The reply for refusing mail on this result (RFC 7372 §3.2, RFC 7208 §8.4-8.7). */
struct spfkit_smtp_reply {
	int code;             /* 550 or 451; 0 when the result is no reason to refuse */
	const char *enhanced; /* "5.7.23", "5.7.24", "4.7.24"; "" when code is 0 */
};

/* Fills *out for fail (550 5.7.23), permerror (550 5.7.24), temperror
 * (451 4.7.24); code 0 for the other results and for res NULL. out NULL:
 * nothing is done. */
void spfkit_smtp_reply_for(const struct spfkit_result *res, struct spfkit_smtp_reply *out);

/* "550 5.7.23 <explanation or a default text>" on one line; control
 * bytes of the explanation are replaced. The default texts are RFC 7372's
 * samples: "SPF validation failed" (fail without explanation), and
 * "SPF validation error" followed by ": <problem>" when res->problem is
 * set (permerror, temperror). The text is cut at 400 bytes so the reply
 * line stays within RFC 5321 §4.5.3.1.5. SPFKIT_EINVAL when the result
 * is no reason to refuse (code 0 above), or for bad arguments. */
int spfkit_format_smtp_reply(const struct spfkit_result *res, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
