/* Thin wrappers over struct spfkit_resolver_ops, and names for logs. */
#include <stdio.h>

#include <spfkit/resolver.h>

#include "core.h"

int spfkit_resolver_submit(struct spfkit_resolver *r, const char *name, size_t len,
			   uint16_t type, spfkit_dns_cb *cb, void *arg, uint64_t *handle)
{
	if (r == NULL || r->ops == NULL || r->ops->submit == NULL || cb == NULL)
		return SPFKIT_EINVAL;
	if (name == NULL && len > 0)
		return SPFKIT_EINVAL;
	return r->ops->submit(r->impl, name, len, type, cb, arg, handle);
}

void spfkit_resolver_cancel(struct spfkit_resolver *r, uint64_t handle)
{
	if (r == NULL || r->ops == NULL || r->ops->cancel == NULL)
		return;
	r->ops->cancel(r->impl, handle);
}

int spfkit_resolver_wait(struct spfkit_resolver *r, int timeout_ms)
{
	if (r == NULL || r->ops == NULL || r->ops->wait == NULL)
		return SPFKIT_EINVAL;
	return r->ops->wait(r->impl, timeout_ms);
}

void spfkit_resolver_free(struct spfkit_resolver *r)
{
	/* destroy() frees r too: backends embed it in their own state. */
	if (r == NULL || r->ops == NULL || r->ops->destroy == NULL)
		return;
	r->ops->destroy(r->impl);
}

const char *spfkit_rrtype_name(uint16_t type, char *buf, size_t size)
{
	const char *name = NULL;

	if (buf == NULL || size == 0)
		return "";
	switch (type) {
	case SPFKIT_RR_A: name = "A"; break;
	case SPFKIT_RR_CNAME: name = "CNAME"; break;
	case SPFKIT_RR_SOA: name = "SOA"; break;
	case SPFKIT_RR_PTR: name = "PTR"; break;
	case SPFKIT_RR_MX: name = "MX"; break;
	case SPFKIT_RR_TXT: name = "TXT"; break;
	case SPFKIT_RR_AAAA: name = "AAAA"; break;
	case SPFKIT_RR_SPF: name = "SPF"; break;
	case SPFKIT_RR_TXT_STRINGS: name = "TXT(strings)"; break;
	}
	/* Unknown types in the RFC 3597 §5 form; a short buf truncates. */
	if (name != NULL)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "TYPE%u", (unsigned)type);
	return buf;
}

const char *spfkit_dns_status_name(enum spfkit_dns_status status)
{
	switch (status) {
	case SPFKIT_DNS_OK: return "ok";
	case SPFKIT_DNS_NODATA: return "no data";
	case SPFKIT_DNS_NXDOMAIN: return "NXDOMAIN";
	case SPFKIT_DNS_TEMPFAIL: return "temporary failure";
	}
	return "unknown";
}
