/*
 * A message's header edits. During the header commands we note every
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

/*
 * "name NUL value NUL". A field without its value (no MTA sends one) is
 * counted all the same: the MTA counts it when it numbers the fields.
 */
void spfkit__milter_on_header(struct spfkit__milter_conn *c, const unsigned char *d, size_t n)
{
	struct spfkit__milter_msg *m = &spfkit__milter_session_of(c)->msg;
	const char *field[2] = {NULL, ""};

	if (spfkit__milter_strings(d, n, field, NULL, 2) < 1 || !m->active || m->trusted)
		return;
	if (spfkit__milter_name_is(field[0], AR)) {
		m->ar_seen++;
		if (spfkit__mta_ar_is_ours(field[1], spfkit__milter_g.authserv_id))
			note_removal(m, 0, m->ar_seen);
	} else if (spfkit__milter_name_is(field[0], RSPF)) {
		m->rspf_seen++;
		if (spfkit__milter_g.cfg->delete_received_spf)
			note_removal(m, 1, m->rspf_seen);
	}
}

static const char *queue_id(struct spfkit__milter_conn *c)
{
	const char *id = spfkit__milter_macro(&spfkit__milter_session_of(c)->macros, "i");

	return id != NULL ? id : "NOQUEUE";
}

/* Delete from the last noted down: per name the indexes were noted rising. */
static int remove_forged(struct spfkit__milter_conn *c, struct spfkit__milter_msg *m)
{
	size_t i;

	if (m->n_removals > 0 && !(spfkit__milter_actions(c) & SPFKIT_MILTER_F_CHGHDRS)) {
		spfkit__mta_log_printf(LOG_ERR, "%s: cannot delete %s: the MTA does not let us "
				       "change header fields", MESC(queue_id(c)),
				       m->removals[0].received_spf ? RSPF : AR);
		return -1;
	}
	for (i = m->n_removals; i > 0; i--) {
		const struct spfkit__milter_removal *r = &m->removals[i - 1];
		const char *name = r->received_spf ? RSPF : AR;

		/* an empty value deletes the field */
		spfkit__milter_send_header(c, SPFKIT_MILTER_R_CHGHEADER, r->index, name, "");
		spfkit__mta_log_printf(LOG_INFO, "%s: deleted %s #%u%s", MESC(queue_id(c)), name,
				       r->index, r->received_spf ? "" : " carrying our authserv-id (forged)");
	}
	return 0;
}

/* Ours at index 0, the last first, so they end up in the decision's order. */
static int insert_ours(struct spfkit__milter_conn *c, const struct spfkit__mta_decision *d)
{
	size_t i;

	if (d->header_count > 0 && !(spfkit__milter_actions(c) & SPFKIT_MILTER_F_ADDHDRS)) {
		spfkit__mta_log_printf(LOG_ERR, "%s: cannot insert our header: the MTA does not let "
				       "us add header fields", MESC(queue_id(c)));
		return -1;
	}
	for (i = d->header_count; i > 0; i--) {
		char name[64];
		const char *value = spfkit__milter_header_split(d->headers[i - 1], name, sizeof(name));

		if (value != NULL)
			spfkit__milter_send_header(c, SPFKIT_MILTER_R_INSHEADER, 0, name, value);
	}
	return 0;
}

void spfkit__milter_on_eom(struct spfkit__milter_conn *c)
{
	struct spfkit__milter_msg *m = &spfkit__milter_session_of(c)->msg;
	char final = SPFKIT_MILTER_R_CONTINUE;

	if (m->active && !m->trusted) {
		if (m->too_many) {
			/* a forged result we could not note would reach the next filter */
			spfkit__mta_log_printf(LOG_NOTICE, "%s: too many Authentication-Results fields; "
					       "message rejected", MESC(queue_id(c)));
			spfkit__milter_send_reply(c, "550", "5.7.0",
						  "Too many Authentication-Results header fields");
			final = 0;
		} else if (remove_forged(c, m) != 0 ||
			   (m->have_decision && insert_ours(c, &m->d) != 0)) {
			final = SPFKIT_MILTER_R_TEMPFAIL; /* never pass a forged result on */
		}
	}
	if (final != 0)
		spfkit__milter_send(c, final, NULL, 0);
	spfkit__milter_msg_reset(m);
	spfkit__milter_macros_clear_from(&spfkit__milter_session_of(c)->macros,
					 spfkit__milter_stage('M'));
}
