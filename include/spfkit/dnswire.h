/*
 * DNS replies in wire format, for callers that run their own resolver
 * (an MTA's stub resolver, libasr, ...): the raw response to a question
 * of spfkit_eval_step() becomes the struct spfkit_dns_answer that
 * spfkit_eval_answer() takes, read by the same bounded reader the c-ares
 * backend uses (RFC 1035 §4; CNAME chains inside the reply followed,
 * negative TTLs as RFC 2308 §5 says).
 *
 *   struct spfkit_dns_answer *a;
 *   if (spfkit_dns_answer_from_wire(buf, n, q.name, q.name_len, q.type, NULL, &a) == 0) {
 *       rc = spfkit_eval_answer(ev, q.id, a);   (copies what it keeps)
 *       spfkit_dns_answer_free(a);
 *   }
 */
#ifndef SPFKIT_DNSWIRE_H
#define SPFKIT_DNSWIRE_H

#include <stddef.h>
#include <stdint.h>

#include <spfkit/common.h>
#include <spfkit/resolver.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Read the DNS response msg[0..len) to the question (name, type); name
 * is name_len bytes written as spfkit_resolver_submit() takes it
 * (resolver.h; a struct spfkit_question's name is in that form), and
 * the reply's question section must carry that name and type.
 *
 * On 0, *out is a new answer owned by the caller, allocated with alloc
 * (NULL: libc), with every record and string it points to in the same
 * allocation: free it with spfkit_dns_answer_free() and nothing else.
 * Any message gives an answer: OK, NODATA or NXDOMAIN as the reply
 * says; a malformed message, a question that does not match, TC set,
 * a rcode other than NOERROR and NXDOMAIN (SERVFAIL, REFUSED...) or an
 * over-long CNAME chain give SPFKIT_DNS_TEMPFAIL with a static detail
 * ("malformed reply: ...", "question mismatch", "SERVFAIL"...), which
 * is what an evaluation should be given for that question.
 *
 * Errors (then *out is NULL): SPFKIT_EINVAL (msg NULL with len > 0,
 * name or out NULL, a name that is no DNS name), SPFKIT_ENOMEM.
 * Reads msg and name only during the call; no shared state: safe from
 * any thread.
 */
SPFKIT_MUSTCHECK int spfkit_dns_answer_from_wire(const unsigned char *msg, size_t len,
						 const char *name, size_t name_len, uint16_t type,
						 const struct spfkit_allocator *alloc,
						 struct spfkit_dns_answer **out);

/* Frees an answer made by spfkit_dns_answer_from_wire() (only those),
 * with the allocator it was made with. NULL: no-op. */
void spfkit_dns_answer_free(struct spfkit_dns_answer *answer);

#ifdef __cplusplus
}
#endif

#endif
