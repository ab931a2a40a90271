/* test_arena.c — the bump arena, vectors and the pluggable allocator. */
#include <stdint.h>
#include <string.h>

#include "ir.h"
#include "unit.h"

typedef struct Counting {
	size_t live, calls;
} Counting;

static void *
c_alloc(void *ud, size_t n)
{
	Counting *c = ud;
	c->live += n;
	c->calls++;
	return malloc(n);
}

static void *
c_realloc(void *ud, void *p, size_t old, size_t n)
{
	Counting *c = ud;
	c->live += n - old;
	c->calls++;
	return realloc(p, n);
}

static void
c_free(void *ud, void *p, size_t n)
{
	Counting *c = ud;
	c->live -= n;
	free(p);
}

int
main(void)
{
	Counting cnt = {0, 0};
	IrAllocator al = {c_alloc, c_realloc, c_free, &cnt};
	IrArena a;
	ir_arena_init(&a, &al);

	/* Zeroed, 16-byte aligned, distinct. */
	char *p = ir_arena_alloc(&a, 10), *q = ir_arena_alloc(&a, 1);
	CHECK(((uintptr_t)p & 15) == 0);
	CHECK(((uintptr_t)q & 15) == 0);
	CHECK(q >= p + 10 || q + 1 <= p);
	int zero = 1;
	for (int i = 0; i < 10; i++)
		zero &= p[i] == 0;
	CHECK(zero);

	/* Many small blocks, then a huge one: all usable, none overlapping the next. */
	char *last = NULL;
	for (int i = 0; i < 100000; i++) {
		char *x = ir_arena_alloc(&a, 24);
		memset(x, 0xab, 24);
		if (last)
			CHECK(x != last);
		last = x;
	}
	char *big = ir_arena_alloc(&a, 10 << 20);
	memset(big, 1, 10 << 20);
	CHECK(big[(10 << 20) - 1] == 1);
	char *after = ir_arena_alloc(&a, 32);
	CHECK(after + 32 <= big || after >= big + (10 << 20));
	CHECK(a.total >= (10u << 20));
	CHECK(cnt.live > 0);

	char *s = ir_arena_strndup(&a, "hello world", 5);
	CHECK(!strcmp(s, "hello"));

	ir_arena_free(&a);
	CHECK_EQ(cnt.live, 0);

	/* Vectors grow and keep their contents. */
	IrVec v = {0};
	for (int i = 0; i < 1000; i++)
		ir_vec_push(&al, &v, &i, sizeof i);
	CHECK_EQ(v.len, 1000);
	int ok = 1;
	for (int i = 0; i < 1000; i++)
		ok &= IR_VEC_AT(v, int, i) == i;
	CHECK(ok);
	ir_vec_free(&al, &v, sizeof(int));
	CHECK_EQ(cnt.live, 0);

	/* The context frees everything it took. */
	IrCtx *c = ir_ctx_new(&al);
	IrStr x = ir_intern_cstr(c, "abc");
	CHECK(x == ir_intern(c, "abcdef", 3));
	ir_ctx_free(c);
	CHECK_EQ(cnt.live, 0);
	return unit_summary();
}
