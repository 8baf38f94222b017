/*
 * Fuzz the Postfix policy request reader (policyd/proto.c) the way the
 * server drives it: bytes arrive in pieces, each request is read, answered
 * and dropped, until the input runs out or is refused. Every attribute
 * must lie inside the input; the escaped log copy and the reply writer
 * must stay within their caps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_request(const struct spfkit__policy_request *req, const char *in, size_t used)
{
	struct spfkit__buf out;
	char log[512];
	size_t i;

	spfkit__buf_init(&out, NULL, 1024);
	for (i = 0; i < req->count; i++) {
		const struct spfkit__policy_attr *a = &req->attrs[i];

		if (a->name < in || a->name + a->name_len > in + used || a->value < in ||
		    a->value + a->value_len > in + used)
			abort();
		spfkit__mta_escape(a->value, a->value_len, 100, log, sizeof(log));
		if (strlen(log) >= sizeof(log))
			abort();
		(void)spfkit__policy_reply(&out, a->value, a->value_len);
		if (out.err == 0 && memchr(out.data, '\r', out.len) != NULL)
			abort();
		spfkit__buf_reset(&out);
	}
	spfkit__buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spfkit__policy_request req;
	struct spfkit__policy_diag diag;
	const char *in = (const char *)data;
	size_t off = 0, avail, step, used;
	int rc;

	/* the first byte picks the piece size, as a socket would split reads */
	step = size > 0 ? (size_t)data[0] % 64 + 1 : 1;
	spfkit__policy_init(&req);
	avail = 0;
	while (off < size) {
		avail = avail + step < size - off ? avail + step : size - off;
		rc = spfkit__policy_read(in + off, avail, &req, &used, &diag);
		if (rc < 0)
			return 0;
		if (rc == SPFKIT__POLICY_NEED_MORE) {
			if (avail == size - off)
				return 0;
			continue;
		}
		check_request(&req, in + off, used);
		off += used;
		avail = 0;
		spfkit__policy_init(&req);
	}
	return 0;
}
