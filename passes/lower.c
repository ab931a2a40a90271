/* lower.c — lowering one kernel to LLVM IR: the kernel ABI (SPEC §4), the op dispatch table
 * (lower_ops.def), values, index expressions, shared-memory placeholders patched once the
 * buffers and scratch are placed, and the small helpers the target hooks build with. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "passes.h"

typedef bool (*LowerOpFn)(Lower *L, IrOp *op);

static const LowerOpFn dispatch[IR_OP_COUNT] = {
#define LOWER(opcode, fn) [IR_OP_##opcode] = fn,
#include "lower_ops.def"
#undef LOWER
};

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
	                   ir_op_name(op->code), what[0] ? " " : "", what, L->t->name);
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

/* ---- placeholders: shared-memory offsets known only after planning ---- */

typedef enum PhKind { PH_BUFFER, PH_SCRATCH, PH_REUSE, PH_PAD } PhKind;

typedef struct Placeholder {
	PhKind kind;
	LLVMValueRef call;
	IrValue *value; /* PH_BUFFER, PH_REUSE */
	int index;      /* PH_SCRATCH */
	IrOp *at;
	LowerScope scope; /* PH_REUSE: who synchronizes */
} Placeholder;

static LLVMValueRef
placeholder(Lower *L, PhKind k, IrValue *v, int index, IrOp *at)
{
	LLVMValueRef arg = lower_i32(L, L->placeholders.len);
	LLVMValueRef call = lower_call(L, k == PH_REUSE ? "ave.reuse" : "ave.offset",
	                               k == PH_REUSE ? L->voidt : L->i32, &arg, 1);
	Placeholder p = {k, call, v, index, at, L->scope};
	ir_vec_push(L->c->al, &L->placeholders, &p, sizeof p);
	return call;
}

LLVMValueRef
lower_scratch(Lower *L, IrOp *at, int64_t bytes, int64_t align)
{
	LowerSmemBuf b = {0};
	b.name = ir_ctx_printf(L->c, "the scratch of '%s'", ir_op_name(at->code));
	b.loc = at->loc;
	b.bytes = bytes;
	b.align = align < 16 ? 16 : align;
	b.start = b.end = at->id;
	for (IrOp *p = ir_op_parent_op(at); p && p->code != IR_OP_KERNEL; p = ir_op_parent_op(p))
		if (p->code == IR_OP_WARP_SPECIALIZE) {
			b.start = p->id;
			b.end = lower_op_end(p);
		}
	ir_vec_push(L->c->al, &L->scratch, &b, sizeof b);
	return placeholder(L, PH_SCRATCH, NULL, L->scratch.len - 1, at);
}

void
lower_scratch_extend(Lower *L, IrOp *until)
{
	LowerSmemBuf *b = &IR_VEC_AT(L->scratch, LowerSmemBuf, L->scratch.len - 1);
	uint32_t e = lower_op_end(until);
	if (e > b->end)
		b->end = e;
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

/* A shared-memory offset placeholder: pure, so a barrier may merge across it. */
static bool
is_offset_placeholder(LLVMValueRef i)
{
	if (!LLVMIsACallInst(i))
		return false;
	LLVMValueRef f = LLVMGetCalledValue(i);
	size_t n = 0;
	const char *name = f ? LLVMGetValueName2(f, &n) : NULL;
	return name && n == 10 && !memcmp(name, "ave.offset", 10);
}

bool
lower_group_barrier(Lower *L, IrOp *at)
{
	LLVMBasicBlockRef bb = LLVMGetInsertBlock(L->b);
	LLVMValueRef last = LLVMGetLastInstruction(bb);
	while (last && last != L->last_barrier && is_offset_placeholder(last))
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
	if (converge && L->scope.generic_smem && L->scope.nthreads > L->t->warp)
		lower_group_barrier(L, at);
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
lower_expr(Lower *L, IrOp *op, const IrExpr *e)
{
	LLVMBuilderRef b = L->b;
	int64_t lo, hi;
	switch (e->kind) {
	case IR_EX_CONST:
		return lower_i64(L, e->c);
	case IR_EX_VAL: {
		IrValue *v = ir_op_value(op, e->opnd);
		LLVMValueRef x = lower_scalar(L, v);
		if (!x) {
			lower_error(L, op->loc,
			            "index expression uses '%%%s', which is not a scalar",
			            v->name ? v->name : "<unnamed>");
			return lower_i64(L, 0);
		}
		return to_i64(L, x, v->type);
	}
	case IR_EX_NEG:
		return LLVMBuildNeg(b, lower_expr(L, op, e->l), "");
	default:
		break;
	}
	LLVMValueRef l = lower_expr(L, op, e->l), r = lower_expr(L, op, e->r);
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
		{
			LLVMValueRef q = LLVMBuildSDiv(b, l, r, ""), m = LLVMBuildSRem(b, l, r, "");
			LLVMValueRef z = lower_i64(L, 0);
			LLVMValueRef ne = LLVMBuildICmp(b, LLVMIntNE, m, z, "");
			LLVMValueRef mneg = LLVMBuildICmp(b, LLVMIntSLT, m, z, "");
			LLVMValueRef rneg = LLVMBuildICmp(b, LLVMIntSLT, r, z, "");
			LLVMValueRef sgn = LLVMBuildICmp(b, LLVMIntNE, mneg, rneg, "");
			LLVMValueRef adj =
			    LLVMBuildZExt(b, LLVMBuildAnd(b, ne, sgn, ""), L->i64, "");
			return LLVMBuildSub(b, q, adj, "");
		}
	case IR_EX_MOD:
		if (nonneg && e->r->kind == IR_EX_CONST && e->r->c > 0)
			return LLVMBuildURem(b, l, r, "");
		{
			LLVMValueRef m = LLVMBuildSRem(b, l, r, "");
			LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, m, lower_i64(L, 0), "");
			return LLVMBuildSelect(b, neg, LLVMBuildAdd(b, m, r, ""), m, "");
		}
	default: {
		static const LLVMIntPredicate pred[IR_EX_COUNT] = {
		    [IR_EX_EQ] = LLVMIntEQ,  [IR_EX_NE] = LLVMIntNE,  [IR_EX_LT] = LLVMIntSLT,
		    [IR_EX_LE] = LLVMIntSLE, [IR_EX_GT] = LLVMIntSGT, [IR_EX_GE] = LLVMIntSGE,
		};
		return LLVMBuildZExt(b, LLVMBuildICmp(b, pred[e->kind], l, r, ""), L->i64, "");
	}
	}
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

/* ---- the kernel ---- */

static void
init_types(Lower *L)
{
	LLVMContextRef x = L->ctx;
	L->i1 = LLVMInt1TypeInContext(x);
	L->i8 = LLVMInt8TypeInContext(x);
	L->i16 = LLVMInt16TypeInContext(x);
	L->i32 = LLVMInt32TypeInContext(x);
	L->i64 = LLVMInt64TypeInContext(x);
	L->f16 = LLVMHalfTypeInContext(x);
	L->bf16 = LLVMBFloatTypeInContext(x);
	L->f32 = LLVMFloatTypeInContext(x);
	L->f64 = LLVMDoubleTypeInContext(x);
	L->voidt = LLVMVoidTypeInContext(x);
	L->pglobal = LLVMPointerTypeInContext(x, L->t->global_as);
	L->psmem = LLVMPointerTypeInContext(x, L->t->smem_as);
	L->pgeneric = LLVMPointerTypeInContext(x, 0);
}

/* Collects symmetric buffers the kernel reads (`@sym[...]` items naming ave.symm.alloc). */
typedef struct SymmScan {
	Lower *L;
	IrVec syms; /* IrOp* */
} SymmScan;

static bool
scan_symm(IrOp *op, void *ud)
{
	SymmScan *s = ud;
	for (int i = 0; i < op->nitem; i++) {
		IrItem *it = &op->item[i];
		if (it->kind != IR_IT_SYMBOL)
			continue;
		IrOp *d = ir_symbol_lookup(s->L->c, op, it->s);
		if (!d || d->code != IR_OP_SYMM_ALLOC)
			continue;
		bool seen = false;
		for (int k = 0; k < s->syms.len; k++)
			seen |= IR_VEC_AT(s->syms, IrOp *, k) == d;
		if (!seen)
			ir_vec_push(s->L->c->al, &s->syms, &d, sizeof d);
	}
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++) {
			IrItem *it = &op->group[g].item[i];
			if (it->kind != IR_IT_SYMBOL)
				continue;
			IrOp *d = ir_symbol_lookup(s->L->c, op, it->s);
			if (!d || d->code != IR_OP_SYMM_ALLOC)
				continue;
			bool seen = false;
			for (int k = 0; k < s->syms.len; k++)
				seen |= IR_VEC_AT(s->syms, IrOp *, k) == d;
			if (!seen)
				ir_vec_push(s->L->c->al, &s->syms, &d, sizeof d);
		}
	return true;
}

/* The ABI: a tensor is its base pointer, then its `?` sizes, then its `?` strides (i64 each);
 * scalars as themselves (i1 as one byte); then symmetric buffers the kernel reads. */
static void
abi_params(Lower *L, IrVec *symms)
{
	IrBlock *body = L->kernel->reg[0].block;
	for (int i = 0; i < body->narg; i++) {
		IrValue *a = body->arg[i];
		IrType *t = a->type;
		LowerParam p = {0};
		p.arg = i;
		p.name = a->name;
		p.type = t;
		if (t->kind == IR_TY_TENSOR) {
			p.kind = LOWER_P_PTR;
			p.llty = L->pglobal;
			lower_add_param(L, &p);
			for (int d = 0; d < t->rank; d++)
				if (t->dims[d] == IR_DYN) {
					LowerParam q = p;
					q.kind = LOWER_P_SIZE;
					q.dim = d;
					q.llty = L->i64;
					lower_add_param(L, &q);
				}
			for (int d = 0; t->strides && d < t->rank; d++)
				if (t->strides[d] == IR_DYN) {
					LowerParam q = p;
					q.kind = LOWER_P_STRIDE;
					q.dim = d;
					q.llty = L->i64;
					lower_add_param(L, &q);
				}
		} else if (t->kind == IR_TY_PTR) {
			p.kind = LOWER_P_PTR;
			p.llty = L->pglobal;
			lower_add_param(L, &p);
		} else {
			p.kind = LOWER_P_SCALAR;
			p.llty = lower_mem_type(L, t);
			lower_add_param(L, &p);
		}
	}
	if (L->info.persistent)
		for (int d = 0; d < 3; d++) {
			LowerParam p = {0};
			p.kind = LOWER_P_GRID;
			p.arg = -1;
			p.dim = d;
			p.name = ir_intern_cstr(L->c, d == 0 ? "grid.x" : d == 1 ? "grid.y" : "grid.z");
			p.llty = L->i32;
			lower_add_param(L, &p);
		}
	for (int k = 0; k < symms->len; k++) {
		IrOp *s = IR_VEC_AT(*symms, IrOp *, k);
		LowerParam p = {0};
		p.kind = LOWER_P_SYMM;
		p.arg = -1;
		p.name = ir_op_symbol(s);
		p.type = s->type[0];
		p.llty = L->pglobal;
		lower_add_param(L, &p);
	}
}

static LowerTensor *
make_tensor(Lower *L, IrType *t, IrStr name, int arg)
{
	LowerTensor *x = ir_arena_alloc(&L->arena, sizeof *x);
	x->type = t;
	x->rank = t->rank;
	x->name = name;
	x->arg = arg;
	for (int d = 0; d < t->rank; d++) {
		x->cdim[d] = t->dims[d];
		x->cstride[d] = t->strides ? t->strides[d] : IR_DYN;
		if (t->dims[d] != IR_DYN)
			x->dim[d] = lower_i64(L, t->dims[d]);
		if (t->strides && t->strides[d] != IR_DYN)
			x->stride[d] = lower_i64(L, t->strides[d]);
	}
	if (!t->strides) { /* row-major contiguous: static as far as the sizes are */
		int64_t cs = 1;
		for (int d = t->rank - 1; d >= 0; d--) {
			x->cstride[d] = cs;
			if (cs != IR_DYN)
				x->stride[d] = lower_i64(L, cs);
			cs = cs != IR_DYN && t->dims[d] != IR_DYN ? cs * t->dims[d] : IR_DYN;
		}
	}
	return x;
}

/* Row-major strides over dynamic sizes, once the sizes are bound; and whether the base and the
 * dynamic strides allow 16-byte vectors (checked once, at entry). */
static void
finish_strides(Lower *L, LowerTensor *t)
{
	LLVMBuilderRef b = L->b;
	for (int d = t->rank - 2; d >= 0; d--)
		if (!t->stride[d])
			t->stride[d] = LLVMBuildMul(b, t->stride[d + 1], t->dim[d + 1], "");
	int es = lower_elem_bytes(t->type->elem);
	LLVMValueRef a = LLVMBuildPtrToInt(b, t->base, L->i64, "");
	LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, a, lower_i64(L, 15), ""),
	                                lower_i64(L, 0), "");
	for (int d = 0; d < t->rank; d++)
		if (t->cstride[d] == IR_DYN) {
			LLVMValueRef sb = LLVMBuildMul(b, t->stride[d], lower_i64(L, es), "");
			ok = LLVMBuildAnd(b, ok,
			                  LLVMBuildICmp(b, LLVMIntEQ,
			                                LLVMBuildAnd(b, sb, lower_i64(L, 15), ""),
			                                lower_i64(L, 0), ""),
			                  "");
		}
	t->aligned = ok;
}

/* Binds kernel arguments and symmetric buffers to the function's parameters. */
static void
bind_params(Lower *L)
{
	IrBlock *body = L->kernel->reg[0].block;
	LowerParam *ps = L->info.params.data;
	for (int i = 0; i < L->info.params.len; i++) {
		LowerParam *p = &ps[i];
		LLVMValueRef v = lower_param(L, i);
		LLVMSetValueName2(v, p->name ? p->name : "p", strlen(p->name ? p->name : "p"));
		if (p->kind == LOWER_P_TARGET)
			continue;
		if (p->kind == LOWER_P_GRID) {
			L->grid[p->dim] = v;
			continue;
		}
		if (p->kind == LOWER_P_SYMM)
			continue; /* looked up by name where an item names the buffer */
		IrValue *a = body->arg[p->arg];
		LowerVal *x = lower_val(L, a);
		if (p->kind == LOWER_P_SCALAR) {
			x->kind = LOWER_V_SCALAR;
			x->v = a->type == L->c->t_i1 ? LLVMBuildTrunc(L->b, v, L->i1, "") : v;
		} else if (p->kind == LOWER_P_PTR && a->type->kind == IR_TY_PTR) {
			x->kind = LOWER_V_SCALAR;
			x->v = v;
		} else if (p->kind == LOWER_P_PTR) {
			x->kind = LOWER_V_TENSOR;
			x->t = make_tensor(L, a->type, a->name, p->arg);
			x->t->base = v;
		} else if (p->kind == LOWER_P_SIZE) {
			x->t->dim[p->dim] = v;
		} else if (p->kind == LOWER_P_STRIDE) {
			x->t->stride[p->dim] = v;
		}
	}
	for (int i = 0; i < body->narg; i++) {
		LowerVal *x = lower_val(L, body->arg[i]);
		if (x->kind == LOWER_V_TENSOR)
			finish_strides(L, x->t);
	}
}

LowerTensor *
lower_symm_tensor(Lower *L, IrOp *op, IrStr name)
{
	IrOp *s = ir_symbol_lookup(L->c, op, name);
	LowerParam *ps = L->info.params.data;
	for (int i = 0; s && i < L->info.params.len; i++)
		if (ps[i].kind == LOWER_P_SYMM && ps[i].name == name) {
			LowerTensor *x = make_tensor(L, s->type[0], name, -1);
			x->base = lower_param(L, i);
			finish_strides(L, x);
			return x;
		}
	return NULL;
}

bool
lower_ops(Lower *L, IrBlock *b)
{
	for (IrOp *op = b->first; op && L->ok; op = op->next) {
		LowerOpFn fn = dispatch[op->code];
		if (!fn)
			return lower_error(L, op->loc, "'%s' is not supported on target '%s'%s",
			                   ir_op_name(op->code), L->t->name,
			                   op->code >= IR_OP_RANK
			                       ? " (communication ops need the 'overlap' "
			                         "lowering)"
			                       : "");
		if (!fn(L, op))
			return L->ok = false;
	}
	return L->ok;
}

bool
lower_op_nothing(Lower *L, IrOp *op)
{
	(void)L;
	(void)op;
	return true;
}

bool
lower_op_return(Lower *L, IrOp *op)
{
	if (L->next_tile)
		LLVMBuildBr(L->b, L->next_tile); /* a persistent kernel goes on with its next tile */
	else
		LLVMBuildRetVoid(L->b);
	/* Anything after a return (there is nothing in valid IR) lands in a dead block. */
	if (op->next || ir_op_parent_op(op)->code != IR_OP_KERNEL)
		LLVMPositionBuilderAtEnd(L->b, lower_block(L, "dead"));
	return true;
}

static bool
count_op(IrOp *op, void *ud)
{
	(void)op;
	(*(uint32_t *)ud)++;
	return true;
}

typedef struct GridScan {
	IrCtx *c;
	int dims;
} GridScan;

static bool
grid_dims(IrOp *op, void *ud)
{
	GridScan *g = ud;
	if (op->code == IR_OP_PROGRAM_ID || op->code == IR_OP_NUM_PROGRAMS) {
		int64_t d = 0;
		IrGroup *gr = ir_op_group(op, g->c->kw.dim);
		if (gr)
			ir_expr_eval_const(gr->item[0].e, &d);
		if (d + 1 > g->dims)
			g->dims = (int)d + 1;
	}
	return true;
}

/* Places the buffers and scratch, patches the placeholders, and emits reuse barriers. */
static bool
finish_smem(Lower *L)
{
	IrVec bufs = {0};
	bool ok = lower_smem_collect(L->c, L->kernel, L->facts, &bufs);
	int nexplicit = bufs.len;
	for (int i = 0; i < L->scratch.len; i++)
		ir_vec_push(L->c->al, &bufs, &IR_VEC_AT(L->scratch, LowerSmemBuf, i),
		            sizeof(LowerSmemBuf));
	LowerSmemBuf *b = bufs.data;
	int64_t total = lower_smem_assign(b, bufs.len), align = 16;
	for (int i = 0; i < bufs.len; i++)
		if (b[i].align > align)
			align = b[i].align;
	int64_t base_align = L->t->smem_base_align > 16 ? L->t->smem_base_align : 16;
	int64_t launch = total ? total + (align > base_align ? align : 0) : 0;
	if (ok && !lower_smem_check(L->c, L->kernel, L->facts, b, bufs.len, launch))
		ok = false;
	Placeholder *ph = L->placeholders.data;
	for (int i = 0; i < L->placeholders.len; i++) {
		Placeholder *p = &ph[i];
		LLVMValueRef with = NULL;
		int64_t off = 0;
		bool reuse = false;
		if (p->kind == PH_SCRATCH) {
			off = b[nexplicit + p->index].offset;
		} else {
			for (int k = 0; k < nexplicit; k++)
				if (b[k].value == p->value) {
					off = b[k].offset;
					reuse = b[k].shared;
				}
		}
		if (p->kind == PH_PAD) {
			LLVMBasicBlockRef bb = LLVMGetInstructionParent(p->call);
			LLVMPositionBuilder(L->b, bb, p->call);
			with = lower_i32(L, 0);
			if (align > base_align) {
				LLVMValueRef a = LLVMBuildPtrToInt(L->b, L->smem, L->i32, "");
				with = LLVMBuildAnd(L->b, LLVMBuildNeg(L->b, a, ""),
				                    lower_i32(L, align - 1), "smem.pad");
			}
		} else if (p->kind == PH_REUSE) {
			if (reuse && ok) {
				LLVMBasicBlockRef bb = LLVMGetInstructionParent(p->call);
				LLVMPositionBuilder(L->b, bb, p->call);
				LowerScope saved = L->scope;
				L->scope = p->scope;
				L->last_barrier = NULL;
				ok &= lower_group_barrier(L, p->at);
				L->scope = saved;
			}
			LLVMInstructionEraseFromParent(p->call);
			continue;
		} else {
			with = lower_i32(L, off);
		}
		LLVMReplaceAllUsesWith(p->call, with);
		LLVMInstructionEraseFromParent(p->call);
	}
	L->info.smem_bytes = launch;
	L->info.buffers = bufs;
	return ok;
}

/* A persistent kernel (`persistent = N`, launched with up to N CTAs along x): each CTA walks
 * the logical grid's tiles t = ctaid.x, ctaid.x + nctaid.x, ... below grid.x * grid.y * grid.z,
 * running the body once per tile with program ids (t mod x, t / x mod y, t / (x y)); a return
 * goes on with the next tile, after a CTA barrier so shared memory can be reused. */
static void
persistent_begin(Lower *L, LLVMBasicBlockRef *head, LLVMValueRef *t, LLVMBasicBlockRef *exit)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef first = L->t->block_id(L, 0);
	LLVMValueRef total =
	    LLVMBuildMul(b, LLVMBuildMul(b, L->grid[0], L->grid[1], ""), L->grid[2], "tiles");
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	*head = lower_block(L, "tile.head");
	LLVMBasicBlockRef body = lower_block(L, "tile");
	*exit = lower_block(L, "tiles.done");
	LLVMBuildBr(b, *head);
	LLVMPositionBuilderAtEnd(b, *head);
	*t = LLVMBuildPhi(b, L->i32, "t");
	LLVMAddIncoming(*t, &first, &pre, 1);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, *t, total, ""), body, *exit);
	LLVMPositionBuilderAtEnd(b, body);
	L->pid[0] = LLVMBuildURem(b, *t, L->grid[0], "pid.x");
	LLVMValueRef q = LLVMBuildUDiv(b, *t, L->grid[0], "");
	L->pid[1] = LLVMBuildURem(b, q, L->grid[1], "pid.y");
	L->pid[2] = LLVMBuildUDiv(b, q, L->grid[1], "pid.z");
	L->next_tile = lower_block(L, "tile.next");
}

static bool
persistent_end(Lower *L, LLVMBasicBlockRef head, LLVMValueRef t, LLVMBasicBlockRef exit,
	       LLVMValueRef *next)
{
	LLVMBuilderRef b = L->b;
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(b)))
		LLVMBuildBr(b, L->next_tile);
	LLVMMoveBasicBlockAfter(L->next_tile, LLVMGetInsertBlock(b));
	LLVMPositionBuilderAtEnd(b, L->next_tile);
	L->last_barrier = NULL;
	if (!lower_group_barrier(L, L->kernel))
		return false;
	*next = LLVMBuildAdd(b, t, L->t->num_blocks(L, 0), "t.next");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMAddIncoming(t, next, &latch, 1);
	LLVMBuildBr(b, head);
	LLVMMoveBasicBlockAfter(exit, latch);
	LLVMPositionBuilderAtEnd(b, exit);
	LLVMBuildRetVoid(b);
	L->next_tile = NULL;
	return true;
}

void
lower_scope_shape(Lower *L, IrOp *role, LowerScope *s)
{
	IrCtx *c = L->c;
	memset(s, 0, sizeof *s);
	s->role = role;
	int warp = L->t->warp;
	s->lane_bits = lower_log2(warp);
	if (role) {
		int64_t w = 1, iss = 0;
		IrGroup *g = ir_op_group(role, c->kw.warps);
		if (g)
			ir_expr_eval_const(g->item[0].e, &w);
		g = ir_op_group(role, c->kw.issue);
		if (g)
			ir_expr_eval_const(g->item[0].e, &iss);
		s->nwarps = (int)w;
		s->issue_warps = iss ? (int)iss : (int)w;
	} else {
		s->nwarps = L->info.threads / warp;
		s->issue_warps = s->nwarps;
	}
	if (s->nwarps < 1)
		s->nwarps = 1;
	s->nthreads = s->nwarps * warp;
	while ((1 << (s->warp_bits + 1)) <= s->nwarps)
		s->warp_bits++;
}

/* Pre-scan: does the group touch shared memory with plain loads and stores? */
static bool
scan_generic(IrOp *op, void *ud)
{
	Lower *L = ud;
	switch (op->code) {
	case IR_OP_SMEM_LOAD:
	case IR_OP_SMEM_STORE:
	case IR_OP_REDUCE:
	case IR_OP_TRANS:
		L->scope.generic_smem = true;
		break;
	case IR_OP_MMA:
	case IR_OP_MMA_ASYNC:
		if (!L->has_plan[op->id] || !L->plans[op->id]->async_proxy)
			L->scope.generic_smem = true;
		break;
	default:
		break;
	}
	return !L->scope.generic_smem;
}

void
lower_scope_enter(Lower *L, IrOp *role, IrBlock *body)
{
	LowerScope s = L->scope;
	lower_scope_shape(L, role, &L->scope);
	L->scope.tid = s.tid;
	L->scope.lane = s.lane;
	L->scope.warp = s.warp;
	L->scope.replica = s.replica;
	L->scope.first_warp = s.first_warp;
	L->scope.bar_id = s.bar_id;
	L->scope.generic_smem = false;
	if (body)
		ir_walk(body, scan_generic, L);
}

bool
lower_kernel(Lower *L)
{
	IrCtx *c = L->c;
	IrOp *k = L->kernel;
	L->ok = true;
	ir_arena_init(&L->arena, c->al);
	IrAttr *th = ir_op_attr(k, c->kw.threads);
	L->info.name = k->item[0].s;
	L->info.loc = k->loc;
	L->info.args_json = lower_args_json(L->c, k);
	L->info.threads = th && th->kind == IR_ATTR_INT ? (int)th->i : 0;
	IrAttr *pers = ir_op_attr(k, c->kw.persistent);
	L->info.persistent = pers && pers->kind == IR_ATTR_INT ? pers->i : 0;
	IrAttr *ov = ir_op_attr(k, c->kw.overlap), *ovo = ir_op_attr(k, c->kw.overlap_operand);
	if (ov && ov->kind == IR_ATTR_SYM)
		ir_warning(c, k->loc,
		           "'overlap = @%s' is not applied on target '%s' (no chunk waits were "
		           "inserted): the kernel reads '@%s' as if every chunk were present",
		           ov->s, L->t->name, ovo && ovo->kind == IR_ATTR_SYM ? ovo->s : "?");
	if (L->info.threads % L->t->warp || L->info.threads > L->facts->max_threads)
		return lower_error(L, k->loc,
		                   "'threads' = %d is not a whole number of %d-thread warps "
		                   "(at most %d threads) on target '%s'",
		                   L->info.threads, L->t->warp, L->facts->max_threads, L->t->name);
	L->nvals = ir_number_values(k);
	L->nops = 0;
	ir_walk_op(k, count_op, &L->nops);
	L->vals = ir_arena_alloc(&L->arena, sizeof(LowerVal) * (L->nvals + 1));
	L->lay = ir_arena_alloc(&L->arena, sizeof(LowerLayout *) * (L->nvals + 1));
	L->plans = ir_arena_alloc(&L->arena, sizeof(LowerMmaPlan *) * (L->nops + 1));
	L->has_plan = ir_arena_alloc(&L->arena, L->nops + 1);
	GridScan gs = {c, 1};
	ir_walk_op(k, grid_dims, &gs);
	L->info.grid_dims = gs.dims;
	init_types(L);

	SymmScan ss = {L, {0}};
	ir_walk_op(k, scan_symm, &ss);
	abi_params(L, &ss.syms);
	ir_vec_free(c->al, &ss.syms, sizeof(IrOp *));
	if (!lower_assign_layouts(L))
		return false;
	if (L->t->prepare && !L->t->prepare(L))
		return false;

	/* The function. */
	int np = L->info.params.len;
	LLVMTypeRef *pt = ir_arena_alloc(&L->arena, sizeof(LLVMTypeRef) * (size_t)(np + 1));
	for (int i = 0; i < np; i++)
		pt[i] = IR_VEC_AT(L->info.params, LowerParam, i).llty;
	LLVMTypeRef fty = LLVMFunctionType(L->voidt, pt, (unsigned)np, 0);
	L->fn = LLVMAddFunction(L->mod, k->item[0].s, fty);
	L->b = LLVMCreateBuilderInContext(L->ctx);
	LLVMPositionBuilderAtEnd(L->b, lower_block(L, "entry"));
	L->smem = LLVMGetNamedGlobal(L->mod, "ave_smem");
	if (!L->smem) {
		L->smem = LLVMAddGlobalInAddressSpace(L->mod, LLVMArrayType(L->i8, 0), "ave_smem",
		                                      L->t->smem_as);
		LLVMSetLinkage(L->smem, LLVMExternalLinkage);
		LLVMSetAlignment(L->smem, L->t->smem_base_align > 16 ? (unsigned)L->t->smem_base_align : 16);
	}
	L->smem_pad = placeholder(L, PH_PAD, NULL, 0, k);
	bind_params(L);

	/* The CTA scope. */
	LLVMValueRef tid = L->t->thread_id(L);
	L->scope.tid = tid;
	lower_scope_enter(L, NULL, k->reg[0].block);
	int lb = lower_log2(L->t->warp);
	L->scope.lane = LLVMBuildAnd(L->b, tid, lower_i32(L, L->t->warp - 1), "lane");
	L->scope.warp = L->t->uniform(L, LLVMBuildLShr(L->b, tid, lower_i32(L, lb), "warp"));
	L->scope.bar_id = lower_i32(L, 0);
	L->next_bar_id = 1;
	/* The target's entry code runs once per CTA, before a persistent kernel's tile loop. */
	bool ok = !L->t->entry || L->t->entry(L);
	LLVMBasicBlockRef tile_head = NULL, tile_exit = NULL;
	LLVMValueRef tile = NULL, tile_next = NULL;
	if (ok && L->info.persistent)
		persistent_begin(L, &tile_head, &tile, &tile_exit);

	ok = ok && lower_ops(L, k->reg[0].block);
	if (ok && L->info.persistent)
		ok = persistent_end(L, tile_head, tile, tile_exit, &tile_next);
	if (ok && !k->reg[0].block->last)
		LLVMBuildRetVoid(L->b);
	else if (ok && k->reg[0].block->last->code != IR_OP_RETURN &&
	         LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)) == NULL)
		LLVMBuildRetVoid(L->b);
	/* Blocks left without a terminator (dead code after returns) end in unreachable. */
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(L->fn); bb;
	     bb = LLVMGetNextBasicBlock(bb))
		if (!LLVMGetBasicBlockTerminator(bb)) {
			LLVMPositionBuilderAtEnd(L->b, bb);
			LLVMBuildUnreachable(L->b);
		}
	if (ok)
		ok = finish_smem(L);
	if (ok && L->t->finish)
		L->t->finish(L);
	LLVMDisposeBuilder(L->b);
	L->b = NULL;
	ir_vec_free(c->al, &L->placeholders, sizeof(Placeholder));
	ir_vec_free(c->al, &L->scratch, sizeof(LowerSmemBuf));
	return ok && L->ok;
}

LLVMValueRef
lower_buffer_base(Lower *L, IrOp *op)
{
	if (!L->scope.role)
		placeholder(L, PH_REUSE, &op->res[0], 0, op);
	return placeholder(L, PH_BUFFER, &op->res[0], 0, op);
}
