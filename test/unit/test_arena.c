/* test_arena.c — the bump arena, vectors and the pluggable allocator. */
#include <stdint.h>
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "passes.h"
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
	CHECK(((uintptr_t)p & 7) == 0);
	CHECK(((uintptr_t)q & 7) == 0);
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

	/* Every size comes back 8-byte aligned and zeroed, even after the arena was freed and
	 * reused (chunks are not recycled dirty). */
	ir_arena_init(&a, &al);
	int misaligned = 0, dirty = 0;
	for (size_t n = 1; n <= 300; n++) {
		unsigned char *x = ir_arena_alloc(&a, n);
		misaligned += ((uintptr_t)x & 7) != 0;
		for (size_t i = 0; i < n; i++)
			dirty += x[i] != 0;
		memset(x, 0xff, n);
	}
	CHECK_EQ(misaligned, 0);
	CHECK_EQ(dirty, 0);
	ir_arena_free(&a);
	CHECK_EQ(cnt.live, 0);
	CHECK(a.head == NULL && a.total == 0);

	/* A big block is a one-off: small allocations keep filling the current chunk, so the bytes
	 * taken from the allocator grow by the big block only. */
	ir_arena_init(&a, &al);
	char *s1 = ir_arena_alloc(&a, 64);
	size_t before = a.total;
	size_t calls = cnt.calls;
	char *huge = ir_arena_alloc(&a, 1 << 20);
	char *s2 = ir_arena_alloc(&a, 64);
	CHECK(a.total - before >= (1u << 20) && a.total - before < (1u << 20) + 4096);
	CHECK_EQ(cnt.calls, calls + 1);
	CHECK(s2 == s1 + 64);
	CHECK(huge + (1 << 20) <= s1 || huge >= s2 + 64);
	/* Many small blocks take few allocator calls (chunks grow with the arena). */
	calls = cnt.calls;
	for (int i = 0; i < 200000; i++)
		ir_arena_alloc(&a, 48);
	CHECK(cnt.calls - calls < 64);
	CHECK(a.total >= 200000u * 48);
	/* The arena's count matches what the allocator handed out. */
	CHECK_EQ(cnt.live, a.total);
	ir_arena_free(&a);
	CHECK_EQ(cnt.live, 0);

	/* A vector of structs; pushing NULL gives a zeroed element. */
	typedef struct Pair {
		int64_t a;
		char b[24];
	} Pair;
	IrVec pv = {0};
	Pair pr = {7, "x"};
	ir_vec_push(&al, &pv, &pr, sizeof pr);
	Pair *zp = ir_vec_push(&al, &pv, NULL, sizeof pr);
	CHECK(zp->a == 0 && zp->b[0] == 0);
	CHECK(IR_VEC_AT(pv, Pair, 0).a == 7 && !strcmp(IR_VEC_AT(pv, Pair, 0).b, "x"));
	ir_vec_free(&al, &pv, sizeof pr);
	CHECK(pv.data == NULL && pv.len == 0 && pv.cap == 0);
	CHECK_EQ(cnt.live, 0);

	/* The context frees everything it took. */
	IrCtx *c = ir_ctx_new(&al);
	IrStr x = ir_intern_cstr(c, "abc");
	CHECK(x == ir_intern(c, "abcdef", 3));
	ir_ctx_free(c);
	CHECK_EQ(cnt.live, 0);

	/* Parse, verify, run passes and print through the counting allocator: the context and the
	 * module take their memory there and give all of it back. */
	static const char *src =
		"ave.kernel @k(%A: !ave.tensor<?xf32, global>, %n: index) {threads = 64} {\n"
		"  %c = ave.const 2 : index\n"
		"  %r = ave.for %i = 0 to %n step 1 iter_args(%x = 0 : i32) -> (i32) {\n"
		"    %y = ave.add %x, 1 : i32\n"
		"    ave.yield %y : i32\n"
		"  }\n"
		"  %t = ave.load %A[%c * 16] : !ave.tile<16xf32, reg>\n"
		"  ave.store %t into(%A[0])\n"
		"  ave.return\n"
		"}\n";
	c = ir_ctx_new(&al);
	CHECK(cnt.live > 0);
	IrModule *m = fe_parse(c, "count.ave", src, strlen(src), 1);
	CHECK(m && ir_verify(m));
	IrPassOpts po = {.verify_each = true};
	CHECK(m && ir_run_pipeline(m, pass_registry, pass_registry_count, "canonicalize,cse,dce", &po));
	char *out = NULL;
	size_t outn = 0;
	FILE *f = open_memstream(&out, &outn);
	if (m)
		ir_module_print(m, f, NULL);
	fclose(f);
	CHECK(strstr(out, "ave.load %A[32]") != NULL);
	free(out);
	ir_module_free(m);
	ir_ctx_free(c);
	CHECK_EQ(cnt.live, 0);
	return unit_summary();
}
