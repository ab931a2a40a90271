/* loops.c — visiting every ave.for of a module, innermost first, with the target its kernel
 * compiles for: what loop transformations (pipeline, prefetch) share. */
#include "passes.h"

typedef struct LoopWalk {
	const TargetInfo *target;
	PassLoopFn fn;
	void *ud;
} LoopWalk;

static void
walk(IrModule *m, IrBlock *b, const LoopWalk *w)
{
	for (IrOp *op = b->first, *next; op; op = next) {
		next = op->next; /* fn may replace op */
		for (int r = 0; r < op->nreg; r++)
			walk(m, op->reg[r].block, w);
		if (op->code == IR_OP_FOR)
			w->fn(m, op, pass_kernel_target(m->ctx, ir_kernel_of(op), w->target), w->ud);
	}
}

void
pass_for_each_loop(IrModule *m, const TargetInfo *target, PassLoopFn fn, void *ud)
{
	LoopWalk w = {target, fn, ud};
	walk(m, m->body, &w);
}
