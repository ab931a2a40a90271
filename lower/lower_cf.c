/* lower_cf.c — structured control flow to an LLVM CFG (SPEC §5.3): ave.for becomes a header with
 * phis for the induction variable and every register of its iter_args, ave.if a diamond with phis
 * for its results. Conditions and bounds are scalars, uniform across the group, so branches are
 * uniform. */
#include <llvm-c/Core.h>

#include "lower.h"

/* How a carried value of type t is represented: registers, one scalar, or nothing (tokens). */
static int
nslots(Lower *L, IrValue *v)
{
	if (ir_type_is_reg_tile(v->type))
		return lower_layout_nregs(L->lay[v->id]);
	if (v->type->kind == IR_TY_TOKEN)
		return 0;
	return 1;
}

static LLVMTypeRef
slot_type(Lower *L, IrValue *v)
{
	return lower_type(L, ir_type_elem(v->type));
}

/* The registers (or scalar) of value `from` as carried in the layout of `like`. */
static bool
carried(Lower *L, IrOp *at, IrValue *like, const IrItem *it, IrOp *owner, LLVMValueRef *out)
{
	IrType *t = like->type;
	if (t->kind == IR_TY_TOKEN)
		return true;
	if (it->kind != IR_IT_VALUE) {
		if (!ir_type_is_scalar(t))
			return lower_error(L, at->loc, "a literal cannot initialize '%s'",
			                   ir_type_str(L->c, t));
		LLVMTypeRef ty = lower_type(L, t);
		double f = it->kind == IR_IT_FLOAT ? it->f : (double)it->i;
		/* f8 is carried as i8 bits: the literal is rounded from f32, not built on i8. */
		if (t->kind == IR_TY_FLOAT && (t->fk == IR_F8E4M3 || t->fk == IR_F8E5M2))
			out[0] = lower_convert(L, at, LLVMConstReal(L->f32, f), L->c->t_f32, t);
		else
			out[0] = ir_type_is_float(t) ? LLVMConstReal(ty, f)
			                             : LLVMConstInt(ty, (unsigned long long)it->i, 1);
		return out[0] != NULL;
	}
	IrValue *v = ir_item_value(owner, it);
	LowerVal *x = lower_val(L, v);
	if (ir_type_is_reg_tile(t)) {
		if (x->kind != LOWER_V_FRAG)
			return lower_error(L, at->loc, "value '%%%s' has no registers",
			                   v->name ? v->name : "");
		LowerFrag f;
		if (!lower_frag_convert(L, at, &x->f, L->lay[like->id], t->elem, &f))
			return false;
		for (int r = 0; r < lower_layout_nregs(f.layout); r++)
			out[r] = f.v[r];
		return true;
	}
	if (x->kind != LOWER_V_SCALAR)
		return lower_unsupported(L, at, "carrying a value of type '%s'",
		                         ir_type_str(L->c, t));
	out[0] = x->v;
	return true;
}

static void
bind(Lower *L, IrValue *v, LLVMValueRef *slots)
{
	LowerVal *x = lower_val(L, v);
	if (ir_type_is_reg_tile(v->type)) {
		x->kind = LOWER_V_FRAG;
		x->f.layout = L->lay[v->id];
		x->f.v = slots;
	} else if (v->type->kind == IR_TY_TOKEN) {
		x->kind = LOWER_V_TOKEN;
	} else {
		x->kind = LOWER_V_SCALAR;
		x->v = slots[0];
	}
}

/* The region's trailing ave.yield (its values are read after the region is lowered), or NULL. */
static IrOp *
region_body(Lower *L, IrBlock *b)
{
	(void)L;
	return b->last && b->last->code == IR_OP_YIELD ? b->last : NULL;
}

bool
lower_op_yield(Lower *L, IrOp *op)
{
	/* Yields are consumed by their ave.for / ave.if. */
	(void)op;
	return L->ok;
}

bool
lower_op_for(Lower *L, IrOp *op)
{
	LLVMBuilderRef b = L->b;
	IrBlock *body = op->reg[0].block;
	int n = op->nres;
	LLVMValueRef lb = lower_expr(L, op, op->item[0].e), ub = lower_expr(L, op, op->item[1].e);
	LLVMValueRef step = lower_expr(L, op, op->item[2].e);
	LLVMValueRef **inits = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		IrValue *arg = body->arg[i + 1];
		inits[i] =
		    ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)(nslots(L, arg) + 1));
		if (!carried(L, op, arg, &op->item[3 + i], op, inits[i]))
			return false;
	}
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef header = lower_block(L, "for.header"), bodyb = lower_block(L, "for.body");
	LLVMBasicBlockRef exit = lower_block(L, "for.exit");
	LLVMBuildBr(b, header);
	LLVMPositionBuilderAtEnd(b, header);
	LLVMValueRef iv = LLVMBuildPhi(b, L->i64, "iv");
	LLVMValueRef **phis = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		IrValue *arg = body->arg[i + 1];
		int k = nslots(L, arg);
		phis[i] = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)(k + 1));
		for (int s = 0; s < k; s++) {
			phis[i][s] = LLVMBuildPhi(b, slot_type(L, arg), "");
			LLVMAddIncoming(phis[i][s], &inits[i][s], &pre, 1);
		}
		bind(L, arg, phis[i]);
	}
	LLVMAddIncoming(iv, &lb, &pre, 1);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, iv, ub, ""), bodyb, exit);
	LLVMPositionBuilderAtEnd(b, bodyb);
	LowerVal *ivv = lower_val(L, body->arg[0]);
	ivv->kind = LOWER_V_SCALAR;
	ivv->v = iv;
	L->last_barrier = NULL;
	IrOp *y = region_body(L, body);
	/* The body may stage loop-invariant operands once, in `pre` (lower_mma.c). */
	IrOp *outer = L->loop;
	LLVMBasicBlockRef outer_pre = L->loop_pre;
	int nhoisted = L->hoisted.len;
	L->loop = op;
	L->loop_pre = pre;
	bool lowered = lower_ops(L, body);
	L->loop = outer;
	L->loop_pre = outer_pre;
	L->hoisted.len = nhoisted;
	if (!lowered)
		return false;
	for (int i = 0; i < n; i++) {
		IrValue *arg = body->arg[i + 1];
		int k = nslots(L, arg);
		LLVMValueRef *next =
		    ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)(k + 1));
		if (!y || !carried(L, y, arg, &y->item[i], y, next))
			return y ? false
			         : lower_error(L, op->loc,
			                       "'ave.for' body does not end in 'ave.yield'");
		LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
		for (int s = 0; s < k; s++)
			LLVMAddIncoming(phis[i][s], &next[s], &latch, 1);
	}
	LLVMValueRef ivn = LLVMBuildAdd(b, iv, step, "iv.next");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMAddIncoming(iv, &ivn, &latch, 1);
	LLVMBuildBr(b, header);
	LLVMMoveBasicBlockAfter(exit, LLVMGetInsertBlock(b));
	LLVMPositionBuilderAtEnd(b, exit);
	L->last_barrier = NULL;
	for (int i = 0; i < n; i++)
		bind(L, &op->res[i], phis[i]);
	return true;
}

bool
lower_op_if(Lower *L, IrOp *op)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef cond = lower_scalar(L, ir_item_value(op, &op->item[0]));
	int n = op->nres;
	LLVMBasicBlockRef then = lower_block(L, "if.then"), merge = lower_block(L, "if.end");
	LLVMBasicBlockRef els = op->nreg > 1 ? lower_block(L, "if.else") : merge;
	LLVMBuildCondBr(b, cond, then, els);
	LLVMValueRef *vals[2][64];
	LLVMBasicBlockRef from[2] = {NULL, NULL};
	if (n > 64)
		return lower_unsupported(L, op, "with more than 64 results");
	for (int r = 0; r < op->nreg; r++) {
		LLVMPositionBuilderAtEnd(b, r ? els : then);
		L->last_barrier = NULL;
		IrBlock *blk = op->reg[r].block;
		IrOp *y = region_body(L, blk);
		if (!lower_ops(L, blk))
			return false;
		for (int i = 0; i < n; i++) {
			vals[r][i] = ir_arena_alloc(
			    &L->arena, sizeof(LLVMValueRef) * (size_t)(nslots(L, &op->res[i]) + 1));
			if (!y || !carried(L, y, &op->res[i], &y->item[i], y, vals[r][i]))
				return false;
		}
		from[r] = LLVMGetInsertBlock(b);
		LLVMBuildBr(b, merge);
		if (r == 0 && op->nreg > 1)
			LLVMMoveBasicBlockAfter(els, from[0]);
	}
	LLVMMoveBasicBlockAfter(merge, LLVMGetInsertBlock(b));
	LLVMPositionBuilderAtEnd(b, merge);
	L->last_barrier = NULL;
	for (int i = 0; i < n; i++) {
		int k = nslots(L, &op->res[i]);
		LLVMValueRef *ph =
		    ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)(k + 1));
		for (int s = 0; s < k; s++) {
			ph[s] = LLVMBuildPhi(b, slot_type(L, &op->res[i]), "");
			LLVMValueRef in[2] = {vals[0][i][s], vals[1][i][s]};
			LLVMAddIncoming(ph[s], in, from, 2);
		}
		bind(L, &op->res[i], ph);
	}
	return true;
}
