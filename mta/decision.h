/*
 * The decision: configuration (policyd-spf.conf) x the HELO result x the
 * MAIL FROM result -> what the MTA does: accept with header(s), reject,
 * defer, or hand over to a Postfix restriction class. Free of protocol
 * and I/O code: spfkit-policyd and the milter both call it.
 *
 * Order, as policyd-spf: the HELO identity is checked first
 * (postmaster@<helo>, RFC 7208 §2.3); a HELO result that rejects or
 * defers ends it there. Then MAIL FROM, unless the sender is null, in
 * which case the HELO result is the answer (§2.4).
 *
 * The two identities are never confused (the CVE-2019-20790 trap): the
 * header reports the MAIL FROM result whenever MAIL FROM was checked,
 * labelled identity=mailfrom, even when it is "none" and HELO passed; a
 * HELO pass never stands in for MAIL FROM, and a restriction class for a
 * HELO pass never overrides a MAIL FROM rejection.
 */
#ifndef SPFKIT_MTA_DECISION_H
#define SPFKIT_MTA_DECISION_H

#include <stddef.h>

#include <spfkit/eval.h>

#include "config.h"

/* Why no SPF check runs for a client (the trace header says which). */
enum spfkit__mta_bypass {
	SPFKIT__MTA_BYPASS_NONE = 0,
	SPFKIT__MTA_BYPASS_LOCAL,       /* skip_addresses */
	SPFKIT__MTA_BYPASS_WHITELIST,   /* Whitelist */
	SPFKIT__MTA_BYPASS_DOMAIN,      /* Domain_Whitelist: the IP passes a listed domain's SPF */
	SPFKIT__MTA_BYPASS_HELO,        /* HELO_Whitelist: HELO listed and its A/AAAA has the IP */
	SPFKIT__MTA_BYPASS_PTR,         /* Domain_Whitelist_PTR: the PTR name is in a listed domain */
};

/* One identity's outcome, as handed in by the caller. */
struct spfkit__mta_check {
	int checked;                     /* 0: not evaluated */
	const struct spfkit_result *res; /* when checked */
	int no_mail_record;              /* the record was exactly "v=spf1 -all" (No_Mail) */
};

struct spfkit__mta_input {
	const char *sender;      /* MAIL FROM address; "" or NULL for the null sender */
	size_t sender_len;
	const char *helo;        /* HELO/EHLO name */
	size_t helo_len;
	const char *client_ip;   /* text form, for trace headers and {url} */
	const char *receiver;    /* this host, for receiver= and {url}; NULL: unknown */
	/* The message is SMTPUTF8 (RFC 6531): its header fields may hold UTF-8
	 * (RFC 6532), so Received-SPF gives the sender and HELO as sent,
	 * U-labels and all; otherwise it is ASCII, domains in A-labels.
	 * Authentication-Results is ASCII either way (make_headers says why). */
	int smtputf8;
	enum spfkit__mta_bypass bypass;
	struct spfkit__mta_check helo_check;
	struct spfkit__mta_check mfrom_check;
};

enum spfkit__mta_kind {
	SPFKIT__MTA_DUNNO = 0,   /* no opinion */
	SPFKIT__MTA_PREPEND,     /* accept, add the header(s) */
	SPFKIT__MTA_REJECT,      /* 550 */
	SPFKIT__MTA_DEFER,       /* defer_if_permit, or 451 with TempError_Action = 451 */
	SPFKIT__MTA_RESTRICTION, /* *_pass_restriction: a Postfix restriction class */
};

/* Lines stay below RFC 5322's 998 bytes and SMTP's 512-byte replies. */
#define SPFKIT__MTA_TEXT_MAX 1100u
#define SPFKIT__MTA_MAX_HEADERS 2u
#define SPFKIT__MTA_REASON_MAX 400u

struct spfkit__mta_decision {
	enum spfkit__mta_kind kind;
	enum spfkit_identity identity; /* the identity that decided or is reported */
	int decided_by_check;          /* 0: bypass or nothing checked */
	int test_only;                 /* TestOnly = 0 turned a reject or defer into a header */
	/* The Postfix action without "action=": "550 5.7.23 ...", "prepend Received-SPF: ...",
	 * "dunno", a restriction class name. */
	char action[SPFKIT__MTA_TEXT_MAX];
	/* Header lines "Name: value" (no CRLF) for a milter; the first is also in action. */
	char headers[SPFKIT__MTA_MAX_HEADERS][SPFKIT__MTA_TEXT_MAX];
	size_t header_count;
};

/*
 * Is the transaction SMTPUTF8, judged by its sender alone? For the front
 * ends that are not told (Postfix's policy request carries no SMTPUTF8
 * attribute, up to Postfix 3.12): an address with a byte above 0x7f came
 * in a MAIL FROM with the SMTPUTF8 parameter (Postfix refuses it otherwise
 * with strict_smtputf8 = yes; with the default "no" an undeclared 8-bit
 * address is let through, and its header then holds the UTF-8 the
 * envelope already did). An ASCII sender says nothing: its headers are
 * ASCII, which SMTPUTF8 mail may carry too.
 */
int spfkit__mta_sender_is_utf8(const char *sender, size_t len);

/* Does an SPF check run at all for this client? (skip_addresses, Whitelist) */
enum spfkit__mta_bypass spfkit__mta_ip_bypass(const struct spfkit__mta_config *cfg,
					      const struct spfkit_ip *ip);

/*
 * Is the session the site's own, by what the MTA says of it? "authenticated"
 * (SMTP AUTH, with Skip_Authenticated) or "verified client certificate"
 * (with Skip_Verified): its mail is not checked. NULL: it is. The daemons'
 * protocol-only rules (the milter's MacroList) come after.
 */
const char *spfkit__mta_session_trusted(const struct spfkit__mta_config *cfg, int authenticated,
					int verified);

/* Is the HELO identity checked? (HELO_reject != No_Check) */
int spfkit__mta_want_helo(const struct spfkit__mta_config *cfg);

/*
 * Is the MAIL FROM identity checked, given the HELO outcome in `in`?
 * No for the null sender, for Mail_From_reject = No_Check, and when the
 * HELO result already rejects or defers.
 */
int spfkit__mta_want_mailfrom(const struct spfkit__mta_config *cfg,
			      const struct spfkit__mta_input *in);

/*
 * Would a temperror of identity `id` be deferred, given the rest of `in`
 * (its policy, Reject_Not_Pass_Domains, HELO_reject = Null, TempError_Defer,
 * TestOnly)? What an unfinished check is measured by (unfinished.h).
 */
int spfkit__mta_temperror_defers(const struct spfkit__mta_config *cfg,
				 const struct spfkit__mta_input *in, enum spfkit_identity id);

/* Decide. Always fills *out (worst case "dunno"). */
void spfkit__mta_decide(const struct spfkit__mta_config *cfg, const struct spfkit__mta_input *in,
			struct spfkit__mta_decision *out);

/*
 * The action for the n-th query (from 0) of the same message (Postfix
 * "instance": one per recipient, and again at DATA if the service is
 * also called there). A reject or defer is repeated; headers are handed
 * out one per query, then "dunno", so the message never gets one twice.
 * Written to buf (cut to size, always NUL-terminated; size > 0).
 */
void spfkit__mta_action_nth(const struct spfkit__mta_decision *d, size_t n, char *buf,
			    size_t size);

/* "dunno", "prepend", "reject", "defer", "restriction". */
const char *spfkit__mta_kind_name(enum spfkit__mta_kind kind);

#endif
