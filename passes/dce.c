/* dce.c — dead code elimination: pure ops whose results have no uses are erased, innermost
 * regions first and each block backwards, so chains of dead ops go in one sweep. */
#include "passes.h"

static bool
dead(IrCtx *c, IrOp *op)
{
	if (!ir_op_has_trait(c, op, IR_TRAIT_PURE) || op->nreg)
		return false;
	for (int i = 0; i < op->nres; i++)
		if (ir_value_has_uses(&op->res[i]))
			return false;
	return op->nres > 0;
}

static void
dce_block(IrCtx *c, IrBlock *b)
{
	IrOp *prev;
	for (IrOp *op = b->last; op; op = prev) {
		prev = op->prev;
		for (int r = 0; r < op->nreg; r++)
			dce_block(c, op->reg[r].block);
		if (dead(c, op))
			ir_op_erase(op);
	}
}

bool
pass_dce(IrModule *m, const IrPassOpts *o)
{
	(void)o;
	dce_block(m->ctx, m->body);
	return true;
}
