/* spfkit-smtpd-filter: the protocol lines written to smtpd (internal.h). */
#include <string.h>

#include <event2/buffer.h>

#include "internal.h"

void spfkit__smtpd_out_line(struct spfkit__smtpd *f, const char *prefix, const char *rest,
			    size_t len)
{
	struct evbuffer *b = bufferevent_get_output(f->out);
	size_t start = 0, i;

	evbuffer_add(b, prefix, strlen(prefix));
	/* a reply text never carries a line break into the protocol: CR, LF -> space */
	for (i = 0; i < len; i++) {
		if (rest[i] != '\r' && rest[i] != '\n')
			continue;
		evbuffer_add(b, rest + start, i - start);
		evbuffer_add(b, " ", 1);
		start = i + 1;
	}
	evbuffer_add(b, rest + start, len - start);
	evbuffer_add(b, "\n", 1);
	if (evbuffer_get_length(b) > SPFKIT_SMTPD_OUT_HIGH)
		bufferevent_disable(f->in, EV_READ); /* smtpd is not reading: stop taking lines */
}

void spfkit__smtpd_send_result(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
			       const char *session, const char *token, const char *result)
{
	char prefix[128];

	spfkit__smtpd_out_line(f, spfkit__smtpd_reply_prefix(v, "filter-result", session, token, prefix,
					       sizeof(prefix)),
		 result, strlen(result));
}

void spfkit__smtpd_send_dataline(struct spfkit__smtpd *f, const struct spfkit__smtpd_version *v,
				 const char *session, const char *token, const char *line,
				 size_t len)
{
	char prefix[128];

	spfkit__smtpd_out_line(f, spfkit__smtpd_reply_prefix(v, "filter-dataline", session, token, prefix,
					       sizeof(prefix)),
		 line, len);
}

void spfkit__smtpd_out_text(struct spfkit__smtpd *f, const char *text)
{
	spfkit__smtpd_out_line(f, "", text, strlen(text));
}
