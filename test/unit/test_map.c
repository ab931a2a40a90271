/* test_map.c — the open-addressing hash map: insert, replace, lookup, delete with
 * backward shifting, growth, custom equality, and colliding hashes. */
#include <string.h>

#include "ir.h"
#include "unit.h"

static bool
str_eq(const void *a, const void *b)
{
	return !strcmp(a, b);
}

int
main(void)
{
	IrMap m;
	ir_map_init(&m, NULL);
	enum { N = 20000 };
	static int keys[N];

	for (int i = 0; i < N; i++)
		CHECK(ir_map_put(&m, ir_hash_ptr(&keys[i]), &keys[i], (void *)(intptr_t)(i + 1), NULL) == NULL);
	CHECK_EQ(m.len, (size_t)N);
	int ok = 1;
	for (int i = 0; i < N; i++)
		ok &= ir_map_get(&m, ir_hash_ptr(&keys[i]), &keys[i], NULL) == (void *)(intptr_t)(i + 1);
	CHECK(ok);

	/* Replacing returns the old value and keeps the count. */
	CHECK(ir_map_put(&m, ir_hash_ptr(&keys[5]), &keys[5], (void *)77, NULL) == (void *)6);
	CHECK_EQ(m.len, (size_t)N);

	/* Delete every other key; the rest stay reachable (backward shift keeps chains). */
	for (int i = 0; i < N; i += 2)
		CHECK(ir_map_del(&m, ir_hash_ptr(&keys[i]), &keys[i], NULL));
	CHECK(!ir_map_del(&m, ir_hash_ptr(&keys[0]), &keys[0], NULL));
	ok = 1;
	for (int i = 0; i < N; i++) {
		void *v = ir_map_get(&m, ir_hash_ptr(&keys[i]), &keys[i], NULL);
		if (i % 2 == 0)
			ok &= v == NULL;
		else
			ok &= v == (i == 5 ? (void *)77 : (void *)(intptr_t)(i + 1));
	}
	CHECK(ok);
	CHECK_EQ(m.len, (size_t)N / 2);
	ir_map_free(&m);

	/* All keys on one hash: probing and deletion in a single long chain. */
	ir_map_init(&m, NULL);
	for (int i = 0; i < 100; i++)
		ir_map_put(&m, 42, &keys[i], &keys[i], NULL);
	for (int i = 0; i < 100; i += 3)
		ir_map_del(&m, 42, &keys[i], NULL);
	ok = 1;
	for (int i = 0; i < 100; i++)
		ok &= ir_map_get(&m, 42, &keys[i], NULL) == (i % 3 ? &keys[i] : NULL);
	CHECK(ok);
	ir_map_free(&m);

	/* Custom equality: distinct pointers to equal strings are the same key. */
	ir_map_init(&m, NULL);
	char a[] = "tile", b[] = "tile";
	ir_map_put(&m, ir_hash_bytes("tile", 4), a, (void *)1, str_eq);
	CHECK(ir_map_get(&m, ir_hash_bytes("tile", 4), b, str_eq) == (void *)1);
	CHECK(ir_map_get(&m, ir_hash_bytes("tile", 4), b, NULL) == NULL);
	ir_map_free(&m);

	/* Interning gives one pointer per string. */
	IrCtx *c = ir_ctx_new(NULL);
	CHECK(ir_intern_cstr(c, "mbar") == ir_intern_cstr(c, "mbar"));
	CHECK(ir_intern_cstr(c, "mbar") != ir_intern_cstr(c, "mbar2"));
	/* Types and attributes are uniqued. */
	int64_t d[2] = {128, 64};
	CHECK(ir_type_tile(c, 2, d, c->t_bf16, IR_SPACE_REG, NULL) ==
	      ir_type_tile(c, 2, d, c->t_bf16, IR_SPACE_REG, NULL));
	CHECK(ir_type_tile(c, 2, d, c->t_bf16, IR_SPACE_REG, NULL) !=
	      ir_type_tile(c, 2, d, c->t_bf16, IR_SPACE_SMEM, NULL));
	CHECK(ir_attr_int(c, 3) == ir_attr_int(c, 3));
	CHECK(ir_attr_float(c, 0.0) != ir_attr_float(c, -0.0));
	ir_ctx_free(c);
	return unit_summary();
}
