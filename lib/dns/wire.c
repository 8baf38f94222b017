/* spfkit_dns_answer_from_wire(): the bounded reader of msg.c, public. */
#include <string.h>

#include <spfkit/dnswire.h>

#include "msg.h"

/*
 * The answer handed out is the first member of a parsed reply, so the
 * caller's pointer is the reply itself, and the reply's arena (which
 * holds every record and string) goes with it in spfkit_dns_answer_free().
 */
struct wire_answer {
	struct spfkit__dns_reply reply; /* first: &reply.answer is the object */
};

_Static_assert(offsetof(struct wire_answer, reply) == 0, "answer opens the object");
_Static_assert(offsetof(struct spfkit__dns_reply, answer) == 0, "answer opens the reply");

int spfkit_dns_answer_from_wire(const unsigned char *msg, size_t len, const char *name,
				size_t name_len, uint16_t type, const struct spfkit_allocator *alloc,
				struct spfkit_dns_answer **out)
{
	struct wire_answer *w;
	int rc;

	if (out == NULL)
		return SPFKIT_EINVAL;
	*out = NULL;
	if ((msg == NULL && len > 0) || name == NULL)
		return SPFKIT_EINVAL;
	w = spfkit__alloc(alloc, sizeof(*w));
	if (w == NULL)
		return SPFKIT_ENOMEM;
	spfkit__dns_reply_init(&w->reply, alloc);
	/* an empty message is read from a valid pointer: the reader checks len first */
	rc = spfkit__dns_reply_parse(&w->reply, msg != NULL ? (const void *)msg : "", len, name,
				     name_len, type);
	if (rc != 0) {
		/* the reader made a TEMPFAIL of it, but a bad name is the caller's
		 * error and out of memory is never a DNS outcome (eval.h) */
		spfkit__dns_reply_free(&w->reply);
		spfkit__free(alloc, w);
		return rc;
	}
	*out = &w->reply.answer;
	return 0;
}

void spfkit_dns_answer_free(struct spfkit_dns_answer *answer)
{
	struct wire_answer *w = (struct wire_answer *)(void *)answer;
	const struct spfkit_allocator *alloc;

	if (w == NULL)
		return;
	alloc = w->reply.arena.alloc;
	spfkit__dns_reply_free(&w->reply);
	spfkit__free(alloc, w);
}
