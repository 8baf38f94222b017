/* Bounded parse cursor with a sticky error (after OpenSMTPD's unpack). */
#include "core.h"

void spfkit__cur_init(struct spfkit__cur *c, const void *p, size_t len)
{
	c->base = p;
	c->p = p;
	c->end = c->base + len;
	c->err = 0;
	c->err_off = 0;
	c->err_why = NULL;
}

void spfkit__cur_fail(struct spfkit__cur *c, int err, const char *why)
{
	if (c->err)
		return;
	c->err = err;
	c->err_off = (size_t)(c->p - c->base);
	c->err_why = why;
}

size_t spfkit__cur_off(const struct spfkit__cur *c)
{
	return (size_t)(c->p - c->base);
}

size_t spfkit__cur_left(const struct spfkit__cur *c)
{
	return (size_t)(c->end - c->p);
}

int spfkit__cur_eof(const struct spfkit__cur *c)
{
	return c->p >= c->end;
}

void spfkit__cur_want(struct spfkit__cur *c, unsigned char ch, const char *why)
{
	if (!spfkit__cur_accept(c, ch))
		spfkit__cur_fail(c, SPFKIT_ESYNTAX, why);
}
