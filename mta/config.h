/*
 * policyd-spf.conf: the configuration file of pypolicyd-spf (Debian
 * postfix-policyd-spf-python), read with the same option names, value
 * spellings and defaults, so an existing file works as is. Shared by
 * spfkit-policyd and the milter.
 *
 * Syntax, as policyd-spf reads it: one "Name = Value" per line; '#'
 * starts a comment anywhere; blank lines are ignored; names and values
 * are case-sensitive ("Fail", not "fail"). Lists are comma-separated
 * with no spaces.
 *
 * Every problem is reported through a callback with file and line, as
 * an error (the file is refused) or a warning (read, but it probably
 * does not do what was meant). `spfkit-policyd --check-config` prints
 * them all.
 */
#ifndef SPFKIT_MTA_CONFIG_H
#define SPFKIT_MTA_CONFIG_H

#include <stdarg.h>
#include <stddef.h>

#include <spfkit/common.h>
#include <spfkit/eval.h>

/*
 * Caps on the file, so a wrong path (a log, a device) cannot eat memory.
 * Lines have no cap of their own: policyd-spf takes a Whitelist of
 * thousands of networks on one line, and so do we.
 */
#define SPFKIT_MTA_CONF_MAX_FILE (1u << 20)
#define SPFKIT_MTA_CONF_MAX_LIST 65536u /* entries in one list option */

/* Where the Debian package keeps it; policyd-spf's first argument overrides. */
#define SPFKIT_MTA_CONF_DEFAULT_PATH "/etc/postfix-policyd-spf-python/policyd-spf.conf"

/* HELO_reject and Mail_From_reject. */
enum spfkit__mta_reject {
	SPFKIT_MTA_REJECT_FAIL = 0,     /* "Fail": reject on fail */
	SPFKIT_MTA_REJECT_SOFTFAIL,     /* "Softfail": fail or softfail */
	SPFKIT_MTA_REJECT_NOT_PASS,     /* "SPF_Not_Pass": fail, softfail, neutral */
	SPFKIT_MTA_REJECT_NULL,         /* "Null": HELO fail only for the null sender (HELO only) */
	SPFKIT_MTA_REJECT_FALSE,        /* "False": never reject, header only */
	SPFKIT_MTA_REJECT_NO_CHECK,     /* "No_Check": do not check this identity */
};

/* Header_Type bits; 0 is "None". Both bits: our extension. */
#define SPFKIT_MTA_HEADER_SPF 0x1u /* Received-SPF (RFC 7208 §9.1) */
#define SPFKIT_MTA_HEADER_AR 0x2u  /* Authentication-Results (RFC 8601) */

/* What a temperror defer looks like: our extension, TempError_Action. */
enum spfkit__mta_defer {
	SPFKIT_MTA_DEFER_IF_PERMIT = 0, /* "defer_if_permit": as policyd-spf; Postfix says 450 */
	SPFKIT_MTA_DEFER_451,           /* "451": answer 451 4.7.24 directly (RFC 7208 §8.6) */
};

/* A CIDR network: IPv4 (family 4, 4 bytes used) or IPv6. */
struct spfkit__mta_net {
	int family;
	unsigned char addr[16];
	unsigned prefix;
};

struct spfkit__mta_netlist {
	struct spfkit__mta_net *nets;
	size_t count;
};

/* Domain names, lowercase, without a final dot. */
struct spfkit__mta_namelist {
	char **names;
	size_t count;
};

struct spfkit__mta_config {
	int debug_level;                 /* debugLevel: 1 */
	int test_only;                   /* TestOnly: 1 = normal, 0 = never reject or defer */
	enum spfkit__mta_reject helo_reject;      /* HELO_reject: Fail */
	enum spfkit__mta_reject mail_from_reject; /* Mail_From_reject: Fail */
	int permerror_reject;            /* PermError_reject: False */
	int temperror_defer;             /* TempError_Defer: False */
	struct spfkit__mta_netlist skip_addresses; /* 127.0.0.0/8,::ffff:127.0.0.0/104,::1 */
	struct spfkit__mta_netlist whitelist;      /* Whitelist: none */
	struct spfkit__mta_namelist helo_whitelist;       /* HELO_Whitelist */
	struct spfkit__mta_namelist domain_whitelist;     /* Domain_Whitelist */
	struct spfkit__mta_namelist domain_whitelist_ptr; /* Domain_Whitelist_PTR */
	struct spfkit__mta_namelist reject_not_pass_domains; /* Reject_Not_Pass_Domains */
	int no_mail;                     /* No_Mail: False */
	int enhanced_status_codes;       /* SPF_Enhanced_Status_Codes: Yes */
	int header_type;                 /* Header_Type: SPF */
	int hide_receiver;               /* Hide_Receiver: No */
	char *authserv_id;               /* Authserv_Id: HOSTNAME, i.e. gethostname() */
	int lookup_time;                 /* Lookup_Time: 20 (seconds) */
	int whitelist_lookup_time;       /* Whitelist_Lookup_Time: 10 (seconds) */
	int void_limit;                  /* Void_Limit: 2 (RFC 7208 §4.6.4) */
	char *reason_message;            /* Reason_Message: see SPFKIT_MTA_REASON_DEFAULT */
	char *reason_url;                /* Reason_URL (ours): base of {url} */
	int has_prospective;             /* Prospective: none */
	struct spfkit_ip prospective;
	char *helo_pass_restriction;     /* HELO_pass_restriction: none (NULL) */
	char *mail_from_pass_restriction; /* Mail_From_pass_restriction: none (NULL) */
	int mock;                        /* Mock: False */
	int queue_id;                    /* QueueID: True */
	enum spfkit__mta_defer temperror_action; /* TempError_Action (ours): defer_if_permit */
	int header_type_set;             /* Header_Type was given (the milter's default is AR) */
	/* pyspf-milter's keys, read by spfkit-milter (spfkit-policyd ignores them) */
	char *socket;                    /* Socket: none (the milter's own default) */
	char *pid_file;                  /* PidFile: none */
	char *user_id;                   /* UserID: none (USER or USER:GROUP) */
	int umask;                       /* UMask (octal): -1, leave the umask as it is */
	struct spfkit__mta_netlist internal_hosts; /* InternalHosts, IntHosts: none */
	char *macro_list;                /* MacroList: none; "name|value,..." or "name,..." */
	int skip_authenticated;          /* Skip_Authenticated (ours): Yes ({auth_authen} set) */
	int skip_verified;               /* Skip_Verified (ours): No ({verify} = OK) */
	int delete_received_spf;         /* Delete_Received_SPF (ours): No */
	int milter_time_limit;           /* Milter_Time_Limit (ours): 20 s for one MAIL FROM's check */
	char *metrics_listen;            /* Metrics_Listen (ours): HOST:PORT of /metrics; none: off */
	char *per_user;                  /* Per_User: "text,/path" (spfkit-policyd); none */
	const struct spfkit_allocator *alloc;
};

#define SPFKIT_MTA_REASON_DEFAULT "Message {rejectdefer} due to: {spf}. Please see {url}"
#define SPFKIT_MTA_REASON_URL_DEFAULT "https://www.open-spf.org/Why"

struct spfkit__mta_diag {
	const char *file;  /* the label given */
	unsigned line;     /* from 1; 0 for the file as a whole */
	int is_error;      /* 1: the file is refused; 0: warning */
	const char *text;  /* valid during the callback */
};

typedef void spfkit__mta_diag_fn(void *arg, const struct spfkit__mta_diag *diag);

/* One diagnostic, its text made from fmt and ap, to diag (NULL: none). */
void spfkit__mta_vdiag(spfkit__mta_diag_fn *diag, void *arg, const char *file, unsigned line,
		       int is_error, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

/*
 * Parse configuration text (len bytes) named `label` in diagnostics,
 * over the defaults. Every problem goes to `diag` (may be NULL). On
 * success (warnings allowed) stores a new configuration in *out.
 * 0; SPFKIT_ESYNTAX when there was at least one error (*out untouched);
 * SPFKIT_E2BIG past SPFKIT_MTA_CONF_MAX_FILE; SPFKIT_ENOMEM.
 */
SPFKIT_MUSTCHECK int spfkit__mta_config_parse(const char *text, size_t len, const char *label,
					     const struct spfkit_allocator *alloc,
					     spfkit__mta_diag_fn *diag, void *arg,
					     struct spfkit__mta_config **out);

/* Same for a file; SPFKIT_EIO (reported through diag) when it cannot be read. */
SPFKIT_MUSTCHECK int spfkit__mta_config_load(const char *path, const struct spfkit_allocator *alloc,
					    spfkit__mta_diag_fn *diag, void *arg,
					    struct spfkit__mta_config **out);

/*
 * Read a regular file of at most SPFKIT_MTA_CONF_MAX_FILE bytes into buf
 * (made with that cap). 0; SPFKIT_EIO, SPFKIT_E2BIG or SPFKIT_ENOMEM with
 * *why saying it (static text, or NULL for ENOMEM).
 */
struct spfkit__buf;
/* Spaces, tabs and CRs off both ends of s[0..*len), as the file's lines are read. */
void spfkit__mta_conf_trim(const char **s, size_t *len);
int spfkit__mta_conf_read_file(const char *path, struct spfkit__buf *buf, const char **why);

/* The defaults alone. 0 or SPFKIT_ENOMEM. */
SPFKIT_MUSTCHECK int spfkit__mta_config_defaults(const struct spfkit_allocator *alloc,
						struct spfkit__mta_config **out);

void spfkit__mta_config_free(struct spfkit__mta_config *cfg);

/* Is ip in one of the networks? An IPv4 client also matches ::ffff:a.b.c.d networks. */
int spfkit__mta_net_match(const struct spfkit__mta_netlist *list, const struct spfkit_ip *ip);

/* Is name (len bytes) one of the domains or below one? Case-insensitive. */
int spfkit__mta_name_match(const struct spfkit__mta_namelist *list, const char *name, size_t len);

/* Is name (len bytes) exactly one of the entries? Case-insensitive, final dot ignored. */
int spfkit__mta_name_listed(const struct spfkit__mta_namelist *list, const char *name, size_t len);

#endif
