/* build.c — short op builders for passes. A pass that writes IR (a ring, its barriers, the ops
 * of a producer role) builds dozens of ops; each of these is one call instead of a dozen lines of
 * IrOpState. The builder inserts at a point: before an op, or at the end of a block. */
#include <string.h>

#include "ir.h"

void
ir_builder_before(IrBuilder *b, IrModule *m, IrOp *pos)
{
	b->m = m;
	b->block = NULL;
	b->before = pos;
	b->loc = pos->loc;
}

void
ir_builder_at_end(IrBuilder *b, IrModule *m, IrBlock *blk, IrLoc loc)
{
	b->m = m;
	b->block = blk;
	b->before = NULL;
	b->loc = loc;
}

IrOp *
ir_b_insert(IrBuilder *b, IrOp *op)
{
	if (b->before)
		ir_op_insert_before(b->before, op);
	else
		ir_block_append(b->block, op);
	return op;
}

IrOp *
ir_b_op(IrBuilder *b, IrOpcode code, int nres, IrType *const *res, int nval, IrValue *const *vals)
{
	IrOpState st;
	ir_state_init(&st, code, b->loc);
	for (int i = 0; i < nval; i++)
		ir_state_value(b->m, &st, vals[i]);
	for (int i = 0; i < nres; i++)
		ir_state_result(b->m, &st, res[i], NULL);
	return ir_b_insert(b, ir_op_build(b->m, &st));
}

IrValue *
ir_b_index(IrBuilder *b, IrExpr *e)
{
	IrOpState st;
	ir_state_init(&st, IR_OP_INDEX, b->loc);
	ir_state_item(b->m, &st, IR_IT_EXPR)->e = e;
	ir_state_result(b->m, &st, b->m->ctx->t_index, NULL);
	return &ir_b_insert(b, ir_op_build(b->m, &st))->res[0];
}

IrValue *
ir_b_const_int(IrBuilder *b, IrType *t, int64_t v, IrStr name)
{
	IrOpState st;
	ir_state_init(&st, IR_OP_CONST, b->loc);
	ir_state_item(b->m, &st, IR_IT_INT)->i = v;
	ir_state_result(b->m, &st, t, name);
	return &ir_b_insert(b, ir_op_build(b->m, &st))->res[0];
}

IrOp *
ir_b_yield(IrBuilder *b, int n, IrValue *const *vals, bool typed)
{
	IrOpState st;
	ir_state_init(&st, IR_OP_YIELD, b->loc);
	for (int i = 0; i < n; i++)
		ir_state_value(b->m, &st, vals[i]);
	for (int i = 0; typed && i < n; i++)
		ir_state_type(b->m, &st, vals[i]->type);
	return ir_b_insert(b, ir_op_build(b->m, &st));
}
