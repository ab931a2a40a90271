/* test_intern.c — interning and uniquing in the context: strings (by bytes, with embedded NULs,
 * through growth), every type constructor, every attribute kind (bitwise floats, arrays, '#ave.'
 * attributes with keys), and that the parser's types and attributes are the context's. */
#include <math.h>
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "unit.h"

static void
test_strings(IrCtx *c)
{
	IrStr a = ir_intern(c, "tile", 4);
	CHECK(a == ir_intern_cstr(c, "tile"));
	CHECK(a == ir_intern(c, "tiles", 4));
	CHECK(!strcmp(a, "tile"));
	CHECK(a != ir_intern_cstr(c, "Tile"));
	/* Strings are compared by their bytes, NULs included. */
	IrStr x = ir_intern(c, "a\0b", 3), y = ir_intern(c, "a\0c", 3), z = ir_intern(c, "a", 1);
	CHECK(x != y && x != z && y != z);
	CHECK(x == ir_intern(c, "a\0b", 3));
	CHECK(ir_intern(c, "", 0) == ir_intern_cstr(c, ""));
	/* Keywords are interned once, at context creation. */
	CHECK(c->kw.parity == ir_intern_cstr(c, "parity"));
	CHECK(c->kw.for_ == ir_intern_cstr(c, "for"));

	/* Many strings: all stay distinct and findable while the table grows. */
	enum { N = 20000 };
	static IrStr s[N];
	char buf[32];
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, "name%d", i);
		s[i] = ir_intern_cstr(c, buf);
	}
	int bad = 0;
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, "name%d", i);
		bad += ir_intern_cstr(c, buf) != s[i] || strcmp(s[i], buf);
	}
	CHECK_EQ(bad, 0);
}

static void
test_types(IrCtx *c)
{
	/* Scalars are the context's built-ins. */
	CHECK(ir_type_int(c, 32) == c->t_i32 && ir_type_int(c, 1) == c->t_i1);
	CHECK(ir_type_index(c) == c->t_index && ir_type_index(c) != c->t_i64);
	CHECK(ir_type_float(c, IR_BF16) == c->t_bf16 && c->t_bf16 != c->t_f16);
	CHECK(ir_type_token(c) == c->t_token);

	CHECK(ir_type_ptr(c, c->t_f32) == ir_type_ptr(c, c->t_f32));
	CHECK(ir_type_ptr(c, c->t_f32) != ir_type_ptr(c, c->t_f16));
	CHECK(ir_type_ptr(c, ir_type_ptr(c, c->t_i8)) == ir_type_ptr(c, ir_type_ptr(c, c->t_i8)));

	int64_t d2[2] = {IR_DYN, 128}, d2b[2] = {IR_DYN, 128}, s2[2] = {128, 1}, s2b[2] = {IR_DYN, 1};
	IrType *t1 = ir_type_tensor(c, 2, d2, c->t_bf16, IR_SPACE_GLOBAL, NULL);
	CHECK(t1 == ir_type_tensor(c, 2, d2b, c->t_bf16, IR_SPACE_GLOBAL, NULL));
	/* Strides written or not, and their values, space and element all count. */
	IrType *t2 = ir_type_tensor(c, 2, d2, c->t_bf16, IR_SPACE_GLOBAL, s2);
	CHECK(t2 != t1 && t2 == ir_type_tensor(c, 2, d2, c->t_bf16, IR_SPACE_GLOBAL, s2));
	CHECK(t2 != ir_type_tensor(c, 2, d2, c->t_bf16, IR_SPACE_GLOBAL, s2b));
	CHECK(t1 != ir_type_tensor(c, 2, d2, c->t_bf16, IR_SPACE_SYMM, NULL));
	CHECK(t1 != ir_type_tensor(c, 2, d2, c->t_f16, IR_SPACE_GLOBAL, NULL));
	int64_t d1[1] = {128};
	CHECK(ir_type_tensor(c, 1, d1, c->t_f32, IR_SPACE_GLOBAL, NULL) !=
	      ir_type_tensor(c, 2, (int64_t[]){128, 1}, c->t_f32, IR_SPACE_GLOBAL, NULL));
	/* The dims are copied: changing the caller's array later does not matter. */
	int64_t tmp[2] = {64, 32};
	IrType *tile = ir_type_tile(c, 2, tmp, c->t_f32, IR_SPACE_REG, NULL);
	tmp[0] = 1;
	CHECK(tile->dims[0] == 64 && tile == ir_type_tile(c, 2, (int64_t[]){64, 32}, c->t_f32,
							IR_SPACE_REG, NULL));
	/* Layouts are part of a tile type. */
	IrAttr *acc = ir_attr_ave(c, c->kw.reg, c->kw.mma_acc, 0, NULL, NULL);
	IrType *tl = ir_type_tile(c, 2, (int64_t[]){64, 32}, c->t_f32, IR_SPACE_REG, acc);
	CHECK(tl != tile && tl == ir_type_tile(c, 2, (int64_t[]){64, 32}, c->t_f32, IR_SPACE_REG, acc));
	CHECK(tile != ir_type_tile(c, 2, (int64_t[]){64, 32}, c->t_f32, IR_SPACE_SMEM, NULL));
	CHECK(ir_type_tile_with_elem(c, tl, c->t_f16) ==
	      ir_type_tile(c, 2, (int64_t[]){64, 32}, c->t_f16, IR_SPACE_REG, acc));
	CHECK(ir_type_tile_with_shape(c, tl, 1, (int64_t[]){64}) ==
	      ir_type_tile(c, 1, (int64_t[]){64}, c->t_f32, IR_SPACE_REG, NULL));
	/* Rings and barriers by their counts. */
	IrType *st = ir_type_tile(c, 2, (int64_t[]){128, 64}, c->t_bf16, IR_SPACE_SMEM, NULL);
	CHECK(ir_type_ring(c, 4, st) == ir_type_ring(c, 4, st) && ir_type_ring(c, 4, st) != ir_type_ring(c, 2, st));
	CHECK(ir_type_mbar(c, 4) == ir_type_mbar(c, 4) && ir_type_mbar(c, 4) != ir_type_mbar(c, 1));
	CHECK(ir_type_mbar(c, 4) != ir_type_ring(c, 4, st));
	/* Queries. */
	CHECK(ir_type_numel(st) == 128 * 64 && ir_type_numel(t1) == -1);
	CHECK(ir_type_elem_bits(st) == 16 && ir_type_elem(st) == c->t_bf16);
	CHECK(ir_type_is_smem(st) && ir_type_is_smem(ir_type_ring(c, 4, st)) && !ir_type_is_smem(tile));
	CHECK(ir_type_is_reg_tile(tile) && ir_type_is_int(c->t_index) && ir_type_is_scalar(c->t_f8e4m3));
	CHECK(!strcmp(ir_type_str(c, ir_type_ring(c, 4, st)), "!ave.ring<4 x !ave.tile<128x64xbf16, smem>>"));
	CHECK(!strcmp(ir_type_str(c, t2), "!ave.tensor<?x128xbf16, global, [128, 1]>"));
}

static void
test_attrs(IrCtx *c)
{
	CHECK(ir_attr_int(c, -5) == ir_attr_int(c, -5) && ir_attr_int(c, -5) != ir_attr_int(c, 5));
	CHECK(ir_attr_int(c, 1) != ir_attr_bool(c, true));
	CHECK(ir_attr_bool(c, false) == ir_attr_bool(c, false));
	/* Floats are uniqued by their bits: -0.0 is not 0.0, a NaN is itself. */
	CHECK(ir_attr_float(c, 1.5) == ir_attr_float(c, 1.5));
	CHECK(ir_attr_float(c, 0.0) != ir_attr_float(c, -0.0));
	CHECK(ir_attr_float(c, NAN) == ir_attr_float(c, NAN));
	CHECK(ir_attr_float(c, NAN) != ir_attr_float(c, -NAN));
	CHECK(ir_attr_float(c, INFINITY) != ir_attr_float(c, -INFINITY));
	CHECK(ir_attr_float(c, 1.0) != ir_attr_int(c, 1));
	IrStr s = ir_intern_cstr(c, "x");
	CHECK(ir_attr_str(c, s) == ir_attr_str(c, ir_intern_cstr(c, "x")));
	CHECK(ir_attr_str(c, s) != ir_attr_sym(c, s));
	CHECK(ir_attr_type(c, c->t_i32) == ir_attr_type(c, c->t_i32));
	CHECK(ir_attr_type(c, c->t_i32) != ir_attr_type(c, c->t_i64));

	/* Arrays by their elements, in order; the element array is copied. */
	IrAttr *e[3] = {ir_attr_int(c, 1), ir_attr_int(c, 2), ir_attr_str(c, s)};
	IrAttr *arr = ir_attr_array(c, 3, e);
	e[0] = ir_attr_int(c, 9);
	CHECK(arr->elts[0] == ir_attr_int(c, 1));
	CHECK(arr == ir_attr_array(c, 3, (IrAttr *[]){ir_attr_int(c, 1), ir_attr_int(c, 2), ir_attr_str(c, s)}));
	CHECK(arr != ir_attr_array(c, 3, (IrAttr *[]){ir_attr_int(c, 2), ir_attr_int(c, 1), ir_attr_str(c, s)}));
	CHECK(arr != ir_attr_array(c, 2, e + 1));
	CHECK(ir_attr_array(c, 0, NULL) == ir_attr_array(c, 0, NULL));
	CHECK(ir_attr_array(c, 1, (IrAttr *[]){arr}) != arr);

	/* '#ave.' attributes: name, keyword, keys (in order) and values, or the integer form. */
	IrStr keys[2] = {c->kw.swizzle, c->kw.order};
	IrAttr *vals[2] = {ir_attr_int(c, 128), ir_attr_array(c, 2, (IrAttr *[]){ir_attr_int(c, 1), ir_attr_int(c, 0)})};
	IrAttr *sw = ir_attr_ave(c, c->kw.smem, NULL, 2, keys, vals);
	CHECK(sw == ir_attr_ave(c, c->kw.smem, NULL, 2, (IrStr[]){c->kw.swizzle, c->kw.order}, vals));
	CHECK(sw != ir_attr_ave(c, c->kw.smem, NULL, 2, (IrStr[]){c->kw.order, c->kw.swizzle},
			       (IrAttr *[]){vals[1], vals[0]}));
	CHECK(ir_attr_ave_get(sw, c->kw.order) == vals[1] && ir_attr_ave_get(sw, c->kw.pad) == NULL);
	CHECK(ir_attr_ave(c, c->kw.reg, c->kw.blocked, 0, NULL, NULL) !=
	      ir_attr_ave(c, c->kw.reg, c->kw.mma_acc, 0, NULL, NULL));
	CHECK(ir_attr_ave_int(c, c->kw.pad, 8) == ir_attr_ave_int(c, c->kw.pad, 8));
	CHECK(ir_attr_ave_int(c, c->kw.pad, 8) != ir_attr_ave_int(c, c->kw.pad, -8));
	/* An integer form is not a keyword form with no keys. */
	CHECK(ir_attr_ave_int(c, c->kw.pad, 0) != ir_attr_ave(c, c->kw.pad, NULL, 0, NULL, NULL));
}

/* What the parser builds is the context's: the same spelling gives the same pointer, whether it
 * comes from text or from the API, and after the module that parsed it is gone. */
static void
test_parsed(IrCtx *c)
{
	const char *src =
		"#sw = #ave.smem<swizzle = 128, order = [1, 0]>\n"
		"ave.kernel @k(%A: !ave.tensor<?x128xbf16, global, [128, 1]>) "
		"{threads = 32, l = #ave.reg<blocked>, f = -0.0, p = #ave.pad<8>} {\n"
		"  %s = ave.smem.alloc : !ave.tile<128x64xbf16, smem, #sw>\n"
		"  %t = ave.zeros : !ave.tile<128x64xbf16, smem, #ave.smem<swizzle = 128, order = [1, 0]>>\n"
		"  ave.return\n"
		"}\n";
	IrModule *m = fe_parse(c, "parsed.ave", src, strlen(src), 1);
	CHECK(m != NULL);
	if (!m)
		return;
	IrOp *k = m->body->first;
	IrOp *s = k->reg[0].block->first, *t = s->next;
	/* The alias and the spelled-out layout are one attribute, so one type. */
	CHECK(s->res[0].type == t->res[0].type);
	IrAttr *blocked = ir_op_attr(k, ir_intern_cstr(c, "l"));
	IrAttr *negz = ir_op_attr(k, ir_intern_cstr(c, "f"));
	IrAttr *pad = ir_op_attr(k, ir_intern_cstr(c, "p"));
	IrType *targ = k->reg[0].block->arg[0]->type;
	IrType *tile = s->res[0].type;
	ir_module_free(m);
	CHECK(blocked == ir_attr_ave(c, c->kw.reg, c->kw.blocked, 0, NULL, NULL));
	CHECK(negz == ir_attr_float(c, -0.0));
	CHECK(pad == ir_attr_ave_int(c, c->kw.pad, 8));
	CHECK(targ == ir_type_tensor(c, 2, (int64_t[]){IR_DYN, 128}, c->t_bf16, IR_SPACE_GLOBAL,
				     (int64_t[]){128, 1}));
	IrAttr *sw = ir_attr_ave(c, c->kw.smem, NULL, 2, (IrStr[]){c->kw.swizzle, c->kw.order},
				 (IrAttr *[]){ir_attr_int(c, 128),
					      ir_attr_array(c, 2, (IrAttr *[]){ir_attr_int(c, 1), ir_attr_int(c, 0)})});
	CHECK(tile == ir_type_tile(c, 2, (int64_t[]){128, 64}, c->t_bf16, IR_SPACE_SMEM, sw));
	/* Parsing again in the same context gives the same objects. */
	m = fe_parse(c, "again.ave", src, strlen(src), 1);
	CHECK(m && m->body->first->reg[0].block->first->res[0].type == tile);
	ir_module_free(m);
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	test_strings(c);
	test_types(c);
	test_attrs(c);
	test_parsed(c);
	ir_ctx_free(c);
	return unit_summary();
}
