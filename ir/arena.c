/* arena.c — the allocator hook, bump arenas and growable vectors.
 * Everything the IR allocates comes from an arena that is freed as a whole. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ir.h"

static void *
std_alloc(void *ud, size_t n)
{
	(void)ud;
	return malloc(n);
}

static void *
std_realloc(void *ud, void *p, size_t old, size_t n)
{
	(void)ud;
	(void)old;
	return realloc(p, n);
}

static void
std_free(void *ud, void *p, size_t n)
{
	(void)ud;
	(void)n;
	free(p);
}

const IrAllocator ir_default_allocator = {std_alloc, std_realloc, std_free, NULL};

_Noreturn void
ir_fatal(const char *file, int line, const char *msg)
{
	fprintf(stderr, "%s:%d: internal error: %s\n", file, line, msg);
	abort();
}

void *
ir_xalloc(const IrAllocator *al, size_t n)
{
	void *p = al->alloc(al->ud, n ? n : 1);
	if (!p)
		ir_unreachable("out of memory");
	return p;
}

void *
ir_xrealloc(const IrAllocator *al, void *p, size_t old, size_t n)
{
	void *q = al->realloc(al->ud, p, old, n ? n : 1);
	if (!q)
		ir_unreachable("out of memory");
	return q;
}

void
ir_xfree(const IrAllocator *al, void *p, size_t n)
{
	if (p)
		al->free(al->ud, p, n);
}

struct IrArenaChunk {
	IrArenaChunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

enum { CHUNK_MIN = 64 * 1024 };

/* Big chunks are filled front to back with small objects: ask for transparent huge pages over
 * the 2 MiB-aligned middle of the chunk, which turns thousands of page faults into a few. */
static void
huge_pages(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	if (n < 2 * huge)
		return;
	uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t end = ((uintptr_t)p + n) & ~(huge - 1);
	if (end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

void
ir_arena_init(IrArena *a, const IrAllocator *al)
{
	a->al = al ? al : &ir_default_allocator;
	a->head = NULL;
	a->total = 0;
}

void *
ir_arena_alloc_raw(IrArena *a, size_t n)
{
	IrArenaChunk *c = a->head;
	size_t need = (n + 7) & ~(size_t)7;

	if (!c || c->cap - c->used < need) {
		bool big = need > CHUNK_MIN / 4;
		size_t cap = big ? need : CHUNK_MIN;
		/* Grow chunks with the arena so that huge inputs take few allocations. */
		if (!big && a->total / 8 > cap)
			cap = a->total / 8 < ((size_t)8 << 20) ? (a->total / 8 + 15) & ~(size_t)15
							       : (size_t)8 << 20;
		c = ir_xalloc(a->al, sizeof *c + cap);
		c->cap = cap;
		c->used = 0;
		huge_pages(c->data, cap);
		if (big && a->head) {
			/* A one-off block: keep filling the current chunk afterwards. */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
		a->total += sizeof *c + cap;
	}
	void *p = c->data + c->used;
	c->used += need;
	return p;
}

void *
ir_arena_alloc(IrArena *a, size_t n)
{
	void *p = ir_arena_alloc_raw(a, n);
	memset(p, 0, n);
	return p;
}

char *
ir_arena_strndup(IrArena *a, const char *s, size_t n)
{
	char *p = ir_arena_alloc_raw(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void
ir_arena_free(IrArena *a)
{
	IrArenaChunk *c = a->head, *next;
	for (; c; c = next) {
		next = c->next;
		ir_xfree(a->al, c, sizeof *c + c->cap);
	}
	a->head = NULL;
	a->total = 0;
}

void *
ir_vec_push(const IrAllocator *al, IrVec *v, const void *elt, size_t size)
{
	if (v->len == v->cap) {
		int cap = v->cap ? v->cap * 2 : 4;
		v->data = ir_xrealloc(al, v->data, (size_t)v->cap * size, (size_t)cap * size);
		v->cap = cap;
	}
	void *p = (char *)v->data + (size_t)v->len * size;
	if (elt)
		memcpy(p, elt, size);
	else
		memset(p, 0, size);
	v->len++;
	return p;
}

void
ir_vec_free(const IrAllocator *al, IrVec *v, size_t size)
{
	ir_xfree(al, v->data, (size_t)v->cap * size);
	v->data = NULL;
	v->len = v->cap = 0;
}

void
ir_arena_reset(IrArena *a)
{
	/* Keep the newest chunk (reuse it), free the rest. */
	IrArenaChunk *keep = a->head;
	if (!keep)
		return;
	for (IrArenaChunk *c = keep->next, *next; c; c = next) {
		next = c->next;
		a->total -= sizeof *c + c->cap;
		ir_xfree(a->al, c, sizeof *c + c->cap);
	}
	keep->next = NULL;
	keep->used = 0;
}
