/*
 * Intrusive doubly-linked list: embed a struct spfkit__link in the
 * element, recover the element with SPFKIT_CONTAINER_OF. Removal in
 * constant time from anywhere: the library's LRU orders and FIFO queues,
 * the daemons' connections and DNS questions, the Python driver's jobs.
 * In util/ (not lib/core/) so that the library and the front ends share
 * the one copy. Not thread-safe: the owner locks. A zeroed list is empty.
 */
#ifndef SPFKIT_LIST_H
#define SPFKIT_LIST_H

#include <stddef.h>

struct spfkit__link {
	struct spfkit__link *prev, *next;
};

struct spfkit__list {
	struct spfkit__link *head, *tail;
};

#define SPFKIT_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* The element holding link (NULL: NULL), to walk a list: e = ENTRY(l.head); e; e = ENTRY(e->m.next). */
#define SPFKIT__LIST_ENTRY(link, type, member) \
	((link) != NULL ? SPFKIT_CONTAINER_OF(link, type, member) : (type *)NULL)

static inline int spfkit__list_empty(const struct spfkit__list *l)
{
	return l->head == NULL;
}

static inline void spfkit__list_unlink(struct spfkit__list *l, struct spfkit__link *n)
{
	if (n->prev != NULL)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next != NULL)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->prev = n->next = NULL;
}

static inline void spfkit__list_push_front(struct spfkit__list *l, struct spfkit__link *n)
{
	n->prev = NULL;
	n->next = l->head;
	if (l->head != NULL)
		l->head->prev = n;
	l->head = n;
	if (l->tail == NULL)
		l->tail = n;
}

static inline void spfkit__list_push_back(struct spfkit__list *l, struct spfkit__link *n)
{
	n->next = NULL;
	n->prev = l->tail;
	if (l->tail != NULL)
		l->tail->next = n;
	l->tail = n;
	if (l->head == NULL)
		l->head = n;
}

#endif
