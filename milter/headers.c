/*
 * A message's header edits. During the header callbacks we note every
 * Authentication-Results field whose authserv-id is ours (a client
 * cannot have a right to our name: RFC 8601 §5 tells us to delete them,
 * or a later filter such as OpenDMARC would believe a forged
 * "spf=pass", the CVE-2019-20790 class), and every Received-SPF when
 * Delete_Received_SPF is set. At end of message they are deleted from
 * the highest index down (each deletion renumbers only the fields below
 * it), then our own fields are inserted at the very top, above the
 * MTA's Received:, where nothing the client sent can sit above them.
 */
#include <string.h>
#include <syslog.h>

#include <libmilter/mfapi.h>

#include "spfkit_util.h"
#include "milter.h"

static const char AR[] = "Authentication-Results";
static const char RSPF[] = "Received-SPF";

void spfkit__milter_msg_reset(struct spfkit__milter_msg *m)
{
	spfkit__free(NULL, m->removals);
	memset(m, 0, sizeof(*m));
}

static void note_removal(struct spfkit__milter_msg *m, int received_spf, unsigned index)
{
	if (m->n_removals == m->cap_removals) {
		size_t cap = m->cap_removals ? m->cap_removals * 2 : 8;
		struct spfkit__milter_removal *r;

		if (cap > SPFKIT_MILTER_MAX_REMOVALS) {
			m->too_many = 1;
			return;
		}
		r = spfkit__realloc(NULL, m->removals, cap * sizeof(*r));
		if (r == NULL) {
			m->too_many = 1; /* cannot keep it: the message must not pass with it */
			return;
		}
		m->removals = r;
		m->cap_removals = cap;
	}
	m->removals[m->n_removals].received_spf = received_spf;
	m->removals[m->n_removals].index = index;
	m->n_removals++;
}

int spfkit__milter_on_header(SMFICTX *ctx, char *name, char *value)
{
	struct spfkit__milter_conn *c = smfi_getpriv(ctx);
	struct spfkit__milter_msg *m;

	if (c == NULL || name == NULL)
		return SMFIS_CONTINUE;
	m = &c->msg;
	if (!m->active || m->trusted)
		return SMFIS_CONTINUE;
	if (spfkit__milter_name_is(name, AR)) {
		m->ar_seen++;
		if (spfkit__mta_ar_is_ours(value, spfkit__milter_g.authserv_id))
			note_removal(m, 0, m->ar_seen);
	} else if (spfkit__milter_name_is(name, RSPF)) {
		m->rspf_seen++;
		if (spfkit__milter_g.cfg->delete_received_spf)
			note_removal(m, 1, m->rspf_seen);
	}
	return SMFIS_CONTINUE;
}

static const char *queue_id(SMFICTX *ctx)
{
	const char *id = smfi_getsymval(ctx, "i");

	return id != NULL ? id : "NOQUEUE";
}

/* Delete from the last noted down: per name the indexes were noted rising. */
static int remove_forged(SMFICTX *ctx, struct spfkit__milter_msg *m)
{
	size_t i;

	for (i = m->n_removals; i > 0; i--) {
		const struct spfkit__milter_removal *r = &m->removals[i - 1];
		const char *name = r->received_spf ? RSPF : AR;

		if (smfi_chgheader(ctx, (char *)name, (int)r->index, NULL) != MI_SUCCESS) {
			spfkit__mta_log_printf(LOG_ERR, "%s: cannot delete %s #%u", MESC(queue_id(ctx)), name,
					   r->index);
			return -1;
		}
		spfkit__mta_log_printf(LOG_INFO, "%s: deleted %s #%u%s", MESC(queue_id(ctx)), name, r->index,
				   r->received_spf ? "" : " carrying our authserv-id (forged)");
	}
	return 0;
}

/* Ours at index 0, the last first, so they end up in the decision's order. */
static int insert_ours(SMFICTX *ctx, const struct spfkit__mta_decision *d)
{
	size_t i;

	for (i = d->header_count; i > 0; i--) {
		char name[64];
		const char *value = spfkit__milter_header_split(d->headers[i - 1], name, sizeof(name));

		if (value == NULL)
			continue;
		if (smfi_insheader(ctx, 0, name, (char *)value) != MI_SUCCESS) {
			spfkit__mta_log_printf(LOG_ERR, "%s: cannot insert %s", MESC(queue_id(ctx)), name);
			return -1;
		}
	}
	return 0;
}

int spfkit__milter_on_eom(SMFICTX *ctx)
{
	struct spfkit__milter_conn *c = smfi_getpriv(ctx);
	struct spfkit__milter_msg *m;
	int rc = SMFIS_CONTINUE;

	if (c == NULL)
		return SMFIS_CONTINUE;
	m = &c->msg;
	if (m->active && !m->trusted) {
		if (m->too_many) {
			/* a forged result we could not note would reach the next filter */
			spfkit__mta_log_printf(LOG_NOTICE, "%s: too many Authentication-Results fields; "
				"message rejected", MESC(queue_id(ctx)));
			smfi_setreply(ctx, "550", "5.7.0", "Too many Authentication-Results header fields");
			rc = SMFIS_REJECT;
		} else if (remove_forged(ctx, m) != 0 ||
			   (m->have_decision && insert_ours(ctx, &m->d) != 0)) {
			rc = SMFIS_TEMPFAIL; /* the MTA refused an edit: never pass a forged result on */
		}
	}
	spfkit__milter_msg_reset(m);
	return rc;
}
