/* test_ir.c — op lists, use lists (O(1) unlink, replace-all-uses), building and cloning,
 * operand refresh after an edit, and the expression helpers. */
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "unit.h"

static const char *src =
	"ave.kernel @k(%a: !ave.tensor<?xf32, global, [1]>, %n: index) {threads = 64} {\n"
	"  %p = ave.program_id dim(0) : index\n"
	"  %i = ave.index %p * 64 + %n\n"
	"  %j = ave.index %i + %p\n"
	"  %x = ave.load %a[%i] : !ave.tile<64xf32, reg>\n"
	"  %y = ave.add %x, %x : !ave.tile<64xf32, reg>\n"
	"  ave.store %y into(%a[%j])\n"
	"  ave.return\n"
	"}\n";

static IrOp *
nth(IrBlock *b, int n)
{
	IrOp *o = b->first;
	while (n-- && o)
		o = o->next;
	return o;
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	IrModule *m = fe_parse(c, "t.ave", src, strlen(src), 1);
	CHECK(m != NULL);
	CHECK(ir_verify(m));
	IrOp *k = m->body->first;
	IrBlock *b = k->reg[0].block;
	IrOp *pid = nth(b, 0), *i = nth(b, 1), *j = nth(b, 2), *add = nth(b, 4);

	/* Operands are the distinct values an op mentions. */
	CHECK_EQ(i->nopnd, 2);
	CHECK_EQ(add->nopnd, 1);
	CHECK_EQ(ir_value_nuses(&pid->res[0]), 2);
	CHECK_EQ(ir_value_nuses(&i->res[0]), 2);

	/* Replace-all-uses moves every use and keeps the lists consistent. */
	ir_replace_all_uses(&i->res[0], &pid->res[0]);
	CHECK_EQ(ir_value_nuses(&i->res[0]), 0);
	CHECK_EQ(ir_value_nuses(&pid->res[0]), 4);
	for (IrUse *u = pid->res[0].uses; u; u = u->next)
		CHECK(u->val == &pid->res[0] && *u->prev == u);

	/* j now reads %p twice through two operands; refresh merges them into one. */
	CHECK_EQ(j->nopnd, 2);
	ir_op_refresh_operands(m, j);
	CHECK_EQ(j->nopnd, 1);
	CHECK_EQ(ir_value_nuses(&pid->res[0]), 3);

	/* Erasing an op unlinks it from the block and drops its uses in O(1) each. */
	ir_op_erase(i);
	CHECK(nth(b, 1) == j);
	CHECK(j->prev == pid);

	/* Moving ops around. */
	ir_op_unlink(j);
	ir_op_insert_before(pid, j);
	CHECK(b->first == j && j->next == pid && pid->prev == j);
	ir_op_unlink(j);
	ir_op_insert_after(pid, j);
	CHECK(pid->next == j);

	/* A deep clone has its own values and uses. */
	IrMap vmap;
	ir_map_init(&vmap, NULL);
	IrOp *k2 = ir_op_clone(m, k, &vmap);
	ir_map_free(&vmap);
	IrBlock *b2 = k2->reg[0].block;
	CHECK(b2 != b);
	CHECK(b2->arg[0] != b->arg[0]);
	IrOp *pid2 = b2->first;
	CHECK(pid2->code == IR_OP_PROGRAM_ID);
	CHECK(ir_value_nuses(&pid2->res[0]) == ir_value_nuses(&pid->res[0]));

	/* Expression helpers. */
	IrExpr *e = ir_expr_bin(m, IR_EX_MOD, ir_expr_const(m, -7), ir_expr_const(m, 4));
	int64_t v;
	CHECK(ir_expr_eval_const(e, &v) && v == 1);
	e = ir_expr_bin(m, IR_EX_FLOORDIV, ir_expr_const(m, -7), ir_expr_const(m, 4));
	CHECK(ir_expr_eval_const(e, &v) && v == -2);
	CHECK_EQ(ir_floordiv(7, 4), 1);
	CHECK_EQ(ir_mod(-1, 4), 3);

	ir_module_free(m);
	ir_ctx_free(c);
	return unit_summary();
}
