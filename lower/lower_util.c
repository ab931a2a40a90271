/* lower_util.c — the helpers that op lowerings and target hooks build with: diagnostics, LLVM
 * types, intrinsic and inline-assembly calls, blocks, values and parameters, shared-memory
 * addressing, group barriers and elections, index expressions. They call nothing of the op
 * lowerings (lower_*.c) or the kernel driver (lower.c). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

/* ---- diagnostics ---- */

bool
lower_error(Lower *L, IrLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	IrDiag *d = ir_diag_beginv(L->c, IR_SEV_ERROR, loc, fmt, ap);
	va_end(ap);
	ir_diag_emit(L->c, d);
	L->ok = false;
	return false;
}

bool
lower_unsupported(Lower *L, IrOp *op, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return lower_error(L, op->loc, "'%s'%s%s is not supported on target '%s'",
	                   ir_op_name(op->code), what[0] ? " " : "", what, L->t->info->name);
}

/* ---- types and constants ---- */

LLVMTypeRef
lower_type(Lower *L, IrType *t)
{
	switch (t->kind) {
	case IR_TY_INT:
		return LLVMIntTypeInContext(L->ctx, (unsigned)t->bits);
	case IR_TY_INDEX:
		return L->i64;
	case IR_TY_FLOAT:
		switch (t->fk) {
		case IR_F16:
			return L->f16;
		case IR_BF16:
			return L->bf16;
		case IR_F32:
			return L->f32;
		case IR_F64:
			return L->f64;
		default:
			return L->i8; /* f8 formats travel as their bits */
		}
	case IR_TY_PTR:
		return L->pglobal;
	default:
		return L->i32;
	}
}

LLVMTypeRef
lower_mem_type(Lower *L, IrType *t)
{
	return t == L->c->t_i1 ? L->i8 : lower_type(L, t);
}

LLVMValueRef
lower_i32(Lower *L, int64_t v)
{
	return LLVMConstInt(L->i32, (unsigned long long)v, 1);
}

LLVMValueRef
lower_i64(Lower *L, int64_t v)
{
	return LLVMConstInt(L->i64, (unsigned long long)v, 1);
}

LLVMValueRef
lower_call(Lower *L, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n)
{
	LLVMTypeRef tys[32];
	for (int i = 0; i < n; i++)
		tys[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, tys, (unsigned)n, 0);
	LLVMValueRef f = LLVMGetNamedFunction(L->mod, name);
	if (!f)
		f = LLVMAddFunction(L->mod, name, fty);
	return LLVMBuildCall2(L->b, fty, f, args, (unsigned)n, "");
}

LLVMValueRef
lower_asm(Lower *L, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int n)
{
	LLVMTypeRef tys[300];
	for (int i = 0; i < n; i++)
		tys[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, tys, (unsigned)n, 0);
	LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
	                                  LLVMInlineAsmDialectATT, 0);
	return LLVMBuildCall2(L->b, fty, a, args, (unsigned)n, "");
}

LLVMBasicBlockRef
lower_block(Lower *L, const char *name)
{
	return LLVMAppendBasicBlockInContext(L->ctx, L->fn, name);
}

LLVMBasicBlockRef
lower_if_begin(Lower *L, LLVMValueRef cond, const char *name)
{
	LLVMBasicBlockRef then = lower_block(L, name), merge = lower_block(L, "merge");
	LLVMBuildCondBr(L->b, cond, then, merge);
	LLVMPositionBuilderAtEnd(L->b, then);
	return merge;
}

void
lower_if_end(Lower *L, LLVMBasicBlockRef merge)
{
	LLVMBuildBr(L->b, merge);
	LLVMPositionBuilderAtEnd(L->b, merge);
}

/* ---- values ---- */

LowerVal *
lower_val(Lower *L, IrValue *v)
{
	return &L->vals[v->id];
}

LLVMValueRef
lower_scalar(Lower *L, IrValue *v)
{
	LowerVal *x = lower_val(L, v);
	return x->kind == LOWER_V_SCALAR ? x->v : NULL;
}

/* ---- parameters ---- */

int
lower_add_param(Lower *L, const LowerParam *p)
{
	ir_vec_push(L->c->al, &L->info.params, p, sizeof *p);
	return L->info.params.len - 1;
}

LLVMValueRef
lower_param(Lower *L, int index)
{
	return LLVMGetParam(L->fn, (unsigned)index);
}

LLVMValueRef
lower_smem_ptr(Lower *L, LLVMValueRef off)
{
	LLVMValueRef o = LLVMBuildAdd(L->b, L->smem_pad, off, "");
	return LLVMBuildGEP2(L->b, L->i8, L->smem, &o, 1, "");
}

LLVMValueRef
lower_smem_addr32(Lower *L, LLVMValueRef off)
{
	LLVMValueRef base = LLVMBuildPtrToInt(L->b, L->smem, L->i32, "");
	return LLVMBuildAdd(L->b, base, LLVMBuildAdd(L->b, L->smem_pad, off, ""), "");
}

LLVMValueRef
lower_smem_elem(Lower *L, const LowerSmem *s, LLVMValueRef *coord)
{
	const LowerSmemLayout *y = s->layout;
	LLVMBuilderRef b = L->b;
	LLVMValueRef c[LOWER_MAX_RANK];
	for (int d = 0; d < y->rank; d++)
		c[d] = s->org[d] ? LLVMBuildAdd(b, coord[d], s->org[d], "") : coord[d];
	LLVMValueRef row = lower_i32(L, 0);
	for (int i = y->rank - 1; i >= 1; i--) {
		int d = y->order[i];
		row =
		    LLVMBuildAdd(b, LLVMBuildMul(b, row, lower_i32(L, y->shape[d]), ""), c[d], "");
	}
	LLVMValueRef fc = c[y->order[0]];
	LLVMValueRef off = LLVMBuildMul(b, row, lower_i32(L, y->row_bytes), "");
	if (y->panel_bytes && y->panel_elems < y->shape[y->order[0]]) {
		LLVMValueRef pe = lower_i32(L, y->panel_elems);
		LLVMValueRef p = LLVMBuildUDiv(b, fc, pe, ""), w = LLVMBuildURem(b, fc, pe, "");
		off =
		    LLVMBuildAdd(b, off, LLVMBuildMul(b, p, lower_i32(L, y->panel_bytes), ""), "");
		fc = w;
	}
	off = LLVMBuildAdd(b, off, LLVMBuildMul(b, fc, lower_i32(L, y->esize), ""), "");
	if (y->swizzle >= 32) {
		LLVMValueRef bits = LLVMBuildAnd(b, LLVMBuildLShr(b, off, lower_i32(L, 7), ""),
		                                 lower_i32(L, y->swizzle / 16 - 1), "");
		off = LLVMBuildXor(b, off, LLVMBuildShl(b, bits, lower_i32(L, 4), ""), "");
	}
	return LLVMBuildAdd(b, s->base, off, "");
}

/* ---- synchronization helpers ---- */

static bool
has_barrier(IrOp *op, void *ud)
{
	*(bool *)ud |= op->code == IR_OP_BARRIER;
	return !*(bool *)ud;
}

bool
lower_role_wide_barrier(IrCtx *c, IrOp *role)
{
	bool found = false;
	if (ir_role_info(c, role).replicas > 1)
		ir_walk(role->reg[0].block, has_barrier, &found);
	return found;
}


bool
lower_group_barrier(Lower *L, IrOp *at)
{
	LLVMBasicBlockRef bb = LLVMGetInsertBlock(L->b);
	LLVMValueRef last = LLVMGetLastInstruction(bb);
	while (last && last != L->last_barrier && lower_is_offset_placeholder(last))
		last = LLVMGetPreviousInstruction(last);
	if (L->last_barrier && last == L->last_barrier)
		return true;
	if (!L->t->barrier(L, at, L->scope.bar_id, L->scope.nthreads))
		return false;
	L->last_barrier = LLVMGetLastInstruction(LLVMGetInsertBlock(L->b));
	return true;
}

LLVMBasicBlockRef
lower_elect_begin(Lower *L, IrOp *at, bool converge)
{
	if (converge && L->scope.generic_smem) {
		if (L->scope.nthreads > L->t->info->warp)
			lower_group_barrier(L, at);
		else if (L->t->warp_sync)
			L->t->warp_sync(L);
	}
	LLVMValueRef is0 = LLVMBuildICmp(L->b, LLVMIntEQ, L->scope.tid, lower_i32(L, 0), "");
	return lower_if_begin(L, is0, "elected");
}

void
lower_elect_end(Lower *L, LLVMBasicBlockRef merge)
{
	lower_if_end(L, merge);
}

/* ---- index expressions ---- */

static LLVMValueRef
to_i64(Lower *L, LLVMValueRef v, IrType *t)
{
	LLVMTypeRef ty = LLVMTypeOf(v);
	if (ty == L->i64)
		return v;
	if (t && t->kind == IR_TY_INT && t->bits == 1)
		return LLVMBuildZExt(L->b, v, L->i64, "");
	return LLVMBuildSExt(L->b, v, L->i64, "");
}

LLVMValueRef
lower_floor_divmod(Lower *L, LLVMValueRef l, LLVMValueRef r, bool mod)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef z = lower_i64(L, 0);
	LLVMValueRef q = LLVMBuildSDiv(b, l, r, ""), m = LLVMBuildSRem(b, l, r, "");
	/* Rounding toward zero is one off where the remainder's sign is not the divisor's. */
	LLVMValueRef ne = LLVMBuildICmp(b, LLVMIntNE, m, z, "");
	LLVMValueRef mneg = LLVMBuildICmp(b, LLVMIntSLT, m, z, "");
	LLVMValueRef rneg = LLVMBuildICmp(b, LLVMIntSLT, r, z, "");
	LLVMValueRef sgn = LLVMBuildICmp(b, LLVMIntNE, mneg, rneg, "");
	LLVMValueRef adj = LLVMBuildAnd(b, ne, sgn, "");
	if (mod)
		return LLVMBuildSelect(b, adj, LLVMBuildAdd(b, m, r, ""), m, "");
	return LLVMBuildSub(b, q, LLVMBuildZExt(b, adj, L->i64, ""), "");
}

/* The i64 value of a leaf of op's index expressions: the operand as a scalar. */
static LLVMValueRef
operand_leaf(Lower *L, IrOp *op, IrValue *v, void *ud)
{
	(void)ud;
	LLVMValueRef x = lower_scalar(L, v);
	if (!x) {
		lower_error(L, op->loc, "index expression uses '%%%s', which is not a scalar",
		            v->name ? v->name : "<unnamed>");
		return lower_i64(L, 0);
	}
	return to_i64(L, x, v->type);
}

LLVMValueRef
lower_expr_with(Lower *L, IrOp *op, const IrExpr *e, LowerLeafFn leaf, void *ud)
{
	LLVMBuilderRef b = L->b;
	int64_t lo, hi;
	switch (e->kind) {
	case IR_EX_CONST:
		return lower_i64(L, e->c);
	case IR_EX_VAL:
		return leaf(L, op, ir_op_value(op, e->opnd), ud);
	case IR_EX_NEG:
		return LLVMBuildNeg(b, lower_expr_with(L, op, e->l, leaf, ud), "");
	default:
		break;
	}
	LLVMValueRef l = lower_expr_with(L, op, e->l, leaf, ud);
	LLVMValueRef r = lower_expr_with(L, op, e->r, leaf, ud);
	bool nonneg = ir_expr_range(op, e->l, &lo, &hi) && lo >= 0;
	switch (e->kind) {
	case IR_EX_ADD:
		return LLVMBuildAdd(b, l, r, "");
	case IR_EX_SUB:
		return LLVMBuildSub(b, l, r, "");
	case IR_EX_MUL:
		return LLVMBuildMul(b, l, r, "");
	case IR_EX_FLOORDIV:
		if (nonneg && e->r->kind == IR_EX_CONST && e->r->c > 0)
			return LLVMBuildUDiv(b, l, r, "");
		return lower_floor_divmod(L, l, r, false);
	case IR_EX_MOD:
		if (nonneg && e->r->kind == IR_EX_CONST && e->r->c > 0)
			return LLVMBuildURem(b, l, r, "");
		return lower_floor_divmod(L, l, r, true);
	default: {
		static const LLVMIntPredicate pred[IR_EX_COUNT] = {
		    [IR_EX_EQ] = LLVMIntEQ,  [IR_EX_NE] = LLVMIntNE,  [IR_EX_LT] = LLVMIntSLT,
		    [IR_EX_LE] = LLVMIntSLE, [IR_EX_GT] = LLVMIntSGT, [IR_EX_GE] = LLVMIntSGE,
		};
		return LLVMBuildZExt(b, LLVMBuildICmp(b, pred[e->kind], l, r, ""), L->i64, "");
	}
	}
}

LLVMValueRef
lower_expr(Lower *L, IrOp *op, const IrExpr *e)
{
	return lower_expr_with(L, op, e, operand_leaf, NULL);
}

static int64_t
gcd(int64_t a, int64_t b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

#define DIV_ALL ((int64_t)1 << 40) /* the divisor of 0: everything */

static int64_t expr_div(const IrOp *op, const IrExpr *e, int depth);

static int64_t
value_div(const IrValue *v, int depth)
{
	if (depth > 12)
		return 1;
	int64_t c;
	if (ir_value_const(v, &c))
		return c ? (c < 0 ? -c : c) : DIV_ALL;
	if (v->kind == IR_VAL_RESULT && v->op->code == IR_OP_INDEX)
		return expr_div(v->op, v->op->item[0].e, depth + 1);
	if (v->kind == IR_VAL_ARG && v->index == 0) {
		IrOp *f = ir_block_parent_op(v->block);
		if (f && f->code == IR_OP_FOR)
			return gcd(expr_div(f, f->item[0].e, depth + 1),
			           expr_div(f, f->item[2].e, depth + 1));
	}
	return 1;
}

static int64_t
expr_div(const IrOp *op, const IrExpr *e, int depth)
{
	int64_t d;
	switch (e->kind) {
	case IR_EX_CONST:
		return e->c ? (e->c < 0 ? -e->c : e->c) : DIV_ALL;
	case IR_EX_VAL:
		return value_div(ir_op_value(op, e->opnd), depth);
	case IR_EX_NEG:
		return expr_div(op, e->l, depth);
	case IR_EX_ADD:
	case IR_EX_SUB:
		return gcd(expr_div(op, e->l, depth), expr_div(op, e->r, depth));
	case IR_EX_MUL:
		d = expr_div(op, e->l, depth) * expr_div(op, e->r, depth);
		return d > DIV_ALL || d <= 0 ? DIV_ALL : d;
	case IR_EX_MOD:
		if (e->r->kind == IR_EX_CONST)
			return gcd(expr_div(op, e->l, depth), e->r->c);
		return 1;
	default:
		return 1;
	}
}

int64_t
lower_expr_div(const IrOp *op, const IrExpr *e)
{
	return expr_div(op, e, 0);
}
