/* Per-recipient settings, policyd-spf.peruser(5) (see peruser.h). */
#include <stdarg.h>
#include <string.h>

#include "peruser.h"
#include "spfkit_util.h"

struct entry {
	char *user;
	size_t user_len;
	struct spfkit__mta_config *cfg;
};

struct spfkit__policyd_peruser {
	struct entry *entries;
	size_t count, cap;
};

/*
 * What a line may set: the names policyd-spf 3.0 takes (nameConversion
 * in spf_engine/policydspfuser.py) less Void_Limit (the SPF context's),
 * plus TestOnly and the main file's Authserv_Id (peruser.h).
 */
static const char *const allowed[] = {
	"debugLevel", "HELO_reject", "Mail_From_reject", "PermError_reject", "TempError_Defer",
	"Mail_From_pass_restriction", "HELO_pass_restriction", "Prospective", "Whitelist",
	"skip_addresses", "Domain_Whitelist", "Domain_Whitelist_PTR", "HELO_Whitelist", "No_Mail",
	"Reject_Not_Pass_Domains", "defaultSeedOnly", "SPF_Enhanced_Status_Codes", "Header_Type",
	"Hide_Receiver", "Authserv_Id", "Lookup_Time", "Whitelist_Lookup_Time", "Reason_Message",
	"TestOnly",
};

/* One load: the files, where we are, and how the diagnostics are relabelled. */
struct loader {
	const char *path;        /* the per-user file */
	unsigned line;           /* its line being read */
	unsigned main_lines;     /* lines of the main file's text (not said again) */
	spfkit__mta_diag_fn *diag;
	void *arg;
	int errors;
};

static void say(struct loader *l, int is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct loader *l, int is_error, const char *fmt, ...)
{
	va_list ap;

	l->errors += is_error;
	va_start(ap, fmt);
	spfkit__mta_vdiag(l->diag, l->arg, l->path, l->line, is_error, fmt, ap);
	va_end(ap);
}

/*
 * config.c's words on a recipient's text: those on the main file's lines
 * were said when it was read; "set again" is the point of a per-user
 * line; the rest are the per-user line's, said with its place.
 */
static void relabel(void *arg, const struct spfkit__mta_diag *d)
{
	struct loader *l = arg;

	if (d->line <= l->main_lines || strstr(d->text, " set again; ") != NULL)
		return;
	say(l, d->is_error, "%s", d->text);
}

/* The main file's name for a per-user setting; NULL: not one a line may set. */
static const char *setting_name(const char *name, size_t len)
{
	size_t i;

	if (len == 11 && memcmp(name, "Authserv-Id", 11) == 0)
		return "Authserv_Id"; /* policyd-spf's per-user spelling */
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (len == strlen(allowed[i]) && memcmp(name, allowed[i], len) == 0)
			return allowed[i];
	return NULL;
}

/* "Name=Value|Name=Value" as "Name = Value" lines appended to text. */
static void append_settings(struct loader *l, const char *v, size_t len, struct spfkit__buf *text)
{
	size_t start = 0, i;

	for (i = 0; i <= len; i++) {
		const char *p = v + start, *eq, *name;
		size_t n = i - start;

		if (i < len && v[i] != '|')
			continue;
		start = i + 1;
		spfkit__mta_conf_trim(&p, &n);
		if (n == 0)
			continue;
		eq = memchr(p, '=', n);
		if (eq == NULL) {
			say(l, 1, "'%.*s' is not Name=Value", (int)(n > 60 ? 60 : n), p);
			continue;
		}
		name = setting_name(p, (size_t)(eq - p));
		if (name == NULL) {
			say(l, 0, "'%.*s' cannot be set per user; ignored", (int)(eq - p > 60 ? 60 : eq - p),
			    p);
			continue;
		}
		spfkit__buf_printf(text, "%s = %.*s\n", name, (int)(n - (size_t)(eq + 1 - p)), eq + 1);
	}
}

static unsigned count_lines(const char *s, size_t len)
{
	unsigned n = 1;
	size_t i;

	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

static int add_entry(struct spfkit__policyd_peruser *t, const char *user, size_t len,
		     struct spfkit__mta_config *cfg)
{
	struct entry *e;

	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct entry *grown = spfkit__realloc(NULL, t->entries, cap * sizeof(*grown));

		if (grown == NULL)
			return SPFKIT_ENOMEM;
		t->entries = grown;
		t->cap = cap;
	}
	e = &t->entries[t->count];
	e->user = spfkit__strndup(NULL, user, len);
	if (e->user == NULL)
		return SPFKIT_ENOMEM;
	e->user_len = len;
	e->cfg = cfg;
	t->count++;
	return 0;
}

/* One recipient's line: the main text with its settings on top, parsed as a whole. */
static int take_line(struct loader *l, struct spfkit__policyd_peruser *t, const char *s,
		     size_t len, const struct spfkit__buf *main_text)
{
	const char *hash = memchr(s, '#', len), *comma, *user, *value;
	size_t ulen, vlen, entry;
	struct spfkit__mta_config *cfg = NULL;
	struct spfkit__buf text;
	int rc, errors = l->errors;

	if (hash != NULL)
		len = (size_t)(hash - s);
	spfkit__mta_conf_trim(&s, &len);
	if (len == 0)
		return 0;
	comma = memchr(s, ',', len);
	if (comma == NULL) {
		say(l, 1, "'%.*s' is not recipient,Name=Value|...", (int)(len > 60 ? 60 : len), s);
		return 0;
	}
	user = s;
	ulen = (size_t)(comma - s);
	value = comma + 1;
	vlen = len - ulen - 1;
	spfkit__mta_conf_trim(&user, &ulen);
	spfkit__mta_conf_trim(&value, &vlen);
	if (ulen == 0 || memchr(user, '\0', ulen) != NULL) {
		say(l, 1, "no recipient before the ','");
		return 0;
	}
	if (spfkit__policyd_peruser_find(t, user, ulen, &entry) != NULL) {
		say(l, 0, "a line before sets %.*s already; this one is ignored (the first is used)",
		    (int)(ulen > 100 ? 100 : ulen), user);
		return 0;
	}
	if (t->count == SPFKIT_POLICYD_PERUSER_MAX) {
		say(l, 1, "more than %u recipients", SPFKIT_POLICYD_PERUSER_MAX);
		return 0;
	}
	spfkit__buf_init(&text, NULL, 2 * SPFKIT_MTA_CONF_MAX_FILE);
	spfkit__buf_append(&text, main_text->data != NULL ? main_text->data : "", main_text->len);
	spfkit__buf_putc(&text, '\n');
	append_settings(l, value, vlen, &text);
	if (text.err != 0) {
		spfkit__buf_free(&text);
		return SPFKIT_ENOMEM;
	}
	rc = spfkit__mta_config_parse(spfkit__buf_str(&text), text.len, l->path, NULL, relabel, l,
				      &cfg);
	spfkit__buf_free(&text);
	if (rc == SPFKIT_ENOMEM || rc == SPFKIT_E2BIG)
		return rc;
	if (rc != 0 || l->errors > errors) {
		spfkit__mta_config_free(cfg);
		return 0; /* said; the load fails at the end */
	}
	rc = add_entry(t, user, ulen, cfg);
	if (rc != 0)
		spfkit__mta_config_free(cfg);
	return rc;
}

static int load_lines(struct loader *l, struct spfkit__policyd_peruser *t,
		      const struct spfkit__buf *file, const struct spfkit__buf *main_text)
{
	size_t start = 0, i;
	int rc = 0;

	for (i = 0; i <= file->len && rc == 0; i++) {
		if (i < file->len && file->data[i] != '\n')
			continue;
		l->line++;
		if (i > start && memchr(file->data + start, '\0', i - start) != NULL)
			say(l, 1, "NUL byte in line");
		else if (i > start)
			rc = take_line(l, t, file->data + start, i - start, main_text);
		start = i + 1;
	}
	return rc;
}

int spfkit__policyd_peruser_load(const char *spec, const char *main_path,
				 spfkit__mta_diag_fn *diag, void *arg,
				 struct spfkit__policyd_peruser **out)
{
	struct loader l = {NULL, 0, 0, diag, arg, 0};
	struct spfkit__buf main_text, file;
	struct spfkit__policyd_peruser *t;
	const char *why = NULL;
	int rc;

	*out = NULL;
	l.path = main_path != NULL ? main_path : "Per_User";
	if (strncmp(spec, "text,", 5) != 0 || spec[5] == '\0') {
		say(&l, 1, "Per_User '%.100s': want text,/path/to/file (the only kind)", spec);
		return SPFKIT_ESYNTAX;
	}
	spfkit__buf_init(&main_text, NULL, SPFKIT_MTA_CONF_MAX_FILE);
	spfkit__buf_init(&file, NULL, SPFKIT_MTA_CONF_MAX_FILE);
	rc = main_path != NULL ? spfkit__mta_conf_read_file(main_path, &main_text, &why) : 0;
	if (rc != 0) {
		say(&l, 1, "%s", why != NULL ? why : "out of memory");
		goto done;
	}
	l.path = spec + 5;
	l.main_lines = count_lines(spfkit__buf_str(&main_text), main_text.len);
	if (spfkit__mta_conf_read_file(l.path, &file, &why) != 0) {
		/* as policyd-spf: said, and the main configuration serves */
		say(&l, 0, "per-user settings not read (%s); every recipient gets the main "
			   "configuration", why != NULL ? why : "out of memory");
		goto done;
	}
	t = spfkit__zalloc(NULL, sizeof(*t));
	rc = t == NULL ? SPFKIT_ENOMEM : load_lines(&l, t, &file, &main_text);
	if (rc == 0 && l.errors > 0)
		rc = SPFKIT_ESYNTAX;
	if (rc != 0)
		spfkit__policyd_peruser_free(t);
	else
		*out = t;
done:
	spfkit__buf_free(&main_text);
	spfkit__buf_free(&file);
	return rc;
}

const struct spfkit__mta_config *spfkit__policyd_peruser_find(const struct spfkit__policyd_peruser *t,
							      const char *recipient, size_t len,
							      size_t *entry)
{
	size_t i;

	if (t == NULL)
		return NULL;
	for (i = 0; i < t->count; i++)
		if (spfkit__memcaseeq(t->entries[i].user, t->entries[i].user_len, recipient, len)) {
			*entry = i + 1;
			return t->entries[i].cfg;
		}
	return NULL;
}

size_t spfkit__policyd_peruser_count(const struct spfkit__policyd_peruser *t)
{
	return t != NULL ? t->count : 0;
}

void spfkit__policyd_peruser_free(struct spfkit__policyd_peruser *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->count; i++) {
		spfkit__free(NULL, t->entries[i].user);
		spfkit__mta_config_free(t->entries[i].cfg);
	}
	spfkit__free(NULL, t->entries);
	spfkit__free(NULL, t);
}
