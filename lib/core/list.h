/*
 * Intrusive doubly-linked list: embed a struct spfkit__link in the
 * element, recover the element with SPFKIT_CONTAINER_OF. Used for LRU
 * orders and FIFO queues. Not thread-safe: the owner locks.
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
