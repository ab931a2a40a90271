/* lower_scalar.c — scalars, indices and elementwise math (SPEC §5.2): one element function,
 * applied to scalars or register by register to fragments (tile operands in the result's layout,
 * scalar operands applying to every element). Integers follow the language's wrap-around
 * semantics (passes/fold.c); floats are IEEE with round-to-nearest-even conversions. */
#include <math.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

static bool
is_f8(const IrType *t)
{
	return t->kind == IR_TY_FLOAT && (t->fk == IR_F8E4M3 || t->fk == IR_F8E5M2);
}

static bool
is_half(const IrType *t)
{
	return t->kind == IR_TY_FLOAT && (t->fk == IR_F16 || t->fk == IR_BF16);
}

/* A literal item as a constant of type t. */
static LLVMValueRef
literal(Lower *L, const IrItem *it, IrType *t)
{
	LLVMTypeRef ty = lower_type(L, t);
	double f = it->kind == IR_IT_FLOAT ? it->f : (double)it->i;
	if (ir_type_is_float(t)) {
		if (is_f8(t)) {
			/* The target's conversion where it has one, else integer arithmetic (which
			 * folds to the constant's bits): never a silent 0. */
			LLVMValueRef r = lower_convert(L, NULL, LLVMConstReal(L->f32, f), L->c->t_f32, t);
			return r ? r : LLVMConstInt(L->i8, 0, 0);
		}
		return LLVMConstReal(ty, f);
	}
	return LLVMConstInt(ty, (unsigned long long)(it->kind == IR_IT_FLOAT ? (int64_t)f : it->i),
	                    1);
}

/* ---- f8 in integer arithmetic (targets without f8 instructions) ---- */

static LLVMValueRef
ci32(LLVMContextRef ctx, int64_t v)
{
	return LLVMConstInt(LLVMInt32TypeInContext(ctx), (unsigned long long)v, 1);
}

LLVMValueRef
lower_f8_to_f32(LLVMBuilderRef b, LLVMContextRef ctx, LLVMValueRef x, bool e4m3)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), f32 = LLVMFloatTypeInContext(ctx);
	int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, emax = e4m3 ? 15 : 31;
	LLVMValueRef v = LLVMBuildZExt(b, x, i32, "");
	LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildLShr(b, v, ci32(ctx, 7), ""), ci32(ctx, 31), "");
	LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, v, ci32(ctx, mb), ""), ci32(ctx, emax), "");
	LLVMValueRef m = LLVMBuildAnd(b, v, ci32(ctx, (1 << mb) - 1), "");
	/* Normal: rebias the exponent, widen the mantissa. */
	LLVMValueRef ne = LLVMBuildShl(b, LLVMBuildAdd(b, e, ci32(ctx, 127 - bias), ""), ci32(ctx, 23), "");
	LLVMValueRef nm = LLVMBuildShl(b, m, ci32(ctx, 23 - mb), "");
	LLVMValueRef nb = LLVMBuildOr(b, ne, nm, "");
	/* Subnormal: m x 2^(1 - bias - mb), exact in f32. */
	LLVMValueRef sf = LLVMBuildFMul(b, LLVMBuildUIToFP(b, m, f32, ""),
					LLVMConstReal(f32, 1.0 / (double)(1 << (bias - 1 + mb))), "");
	LLVMValueRef sb = LLVMBuildBitCast(b, sf, i32, "");
	LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, e, ci32(ctx, 0), ""), sb, nb, "");
	/* E4M3FN: S.1111.111 is NaN (no infinities). E5M2: exponent 31 is inf (m = 0) or NaN. */
	LLVMValueRef special;
	LLVMValueRef special_bits;
	if (e4m3) {
		special = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, v, ci32(ctx, 0x7f), ""), ci32(ctx, 0x7f), "");
		special_bits = ci32(ctx, 0x7fc00000);
	} else {
		special = LLVMBuildICmp(b, LLVMIntEQ, e, ci32(ctx, 31), "");
		special_bits = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, m, ci32(ctx, 0), ""), ci32(ctx, 0x7f800000),
					       ci32(ctx, 0x7fc00000), "");
	}
	r = LLVMBuildSelect(b, special, special_bits, r, "");
	return LLVMBuildBitCast(b, LLVMBuildOr(b, r, sign, ""), f32, "");
}

LLVMValueRef
lower_f32_to_f8(LLVMBuilderRef b, LLVMContextRef ctx, LLVMValueRef x, bool e4m3)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), f32 = LLVMFloatTypeInContext(ctx);
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx);
	int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
	int64_t maxcode = e4m3 ? 0x7e : 0x7b, nancode = e4m3 ? 0x7f : 0x7e;
	LLVMValueRef bits = LLVMBuildBitCast(b, x, i32, "");
	LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, bits, ci32(ctx, 24), ""), ci32(ctx, 0x80), "");
	LLVMValueRef abits = LLVMBuildAnd(b, bits, ci32(ctx, 0x7fffffff), "");
	LLVMValueRef a = LLVMBuildBitCast(b, abits, f32, "");
	/* Normal range: round the f32 mantissa to mb bits (to nearest, ties to even) in the bits;
	 * a carry moves into the exponent as it should. */
	int sh = 23 - mb;
	LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, abits, ci32(ctx, sh), ""), ci32(ctx, 1), "");
	LLVMValueRef rnd = LLVMBuildAdd(b, abits, LLVMBuildAdd(b, ci32(ctx, (1 << (sh - 1)) - 1), odd, ""), "");
	LLVMValueRef nc = LLVMBuildSub(b, LLVMBuildLShr(b, rnd, ci32(ctx, sh), ""), ci32(ctx, (127 - bias) << mb), "");
	/* Below the smallest normal: multiples of the subnormal quantum, rounded by an f32 add
	 * (ties to even) against 2^23 quanta. */
	double q = 1.0 / (double)(1 << (bias - 1 + mb)), big = q * (double)(1 << 23);
	LLVMValueRef n = LLVMBuildFSub(b, LLVMBuildFAdd(b, a, LLVMConstReal(f32, big), ""), LLVMConstReal(f32, big), "");
	LLVMValueRef scode = LLVMBuildFPToUI(b, LLVMBuildFMul(b, n, LLVMConstReal(f32, 1.0 / q), ""), i32, "");
	double minnorm = 1.0 / (double)(1 << (bias - 1));
	LLVMValueRef sub = LLVMBuildFCmp(b, LLVMRealOLT, a, LLVMConstReal(f32, minnorm), "");
	LLVMValueRef code = LLVMBuildSelect(b, sub, scode, nc, "");
	/* Saturate (also infinities), keep NaN. */
	LLVMValueRef over = LLVMBuildICmp(b, LLVMIntUGT, code, ci32(ctx, maxcode), "");
	code = LLVMBuildSelect(b, over, ci32(ctx, maxcode), code, "");
	LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, abits, ci32(ctx, 0x7f800000), "");
	code = LLVMBuildSelect(b, nan, ci32(ctx, nancode), code, "");
	return LLVMBuildTrunc(b, LLVMBuildOr(b, code, sign, ""), i8, "");
}

LLVMValueRef
lower_convert(Lower *L, IrOp *op, LLVMValueRef x, IrType *from, IrType *to)
{
	LLVMBuilderRef b = L->b;
	if (from == to)
		return x;
	if (is_f8(from) || is_f8(to)) {
		bool bad = false;
		LLVMValueRef r = L->t->cvt ? L->t->cvt(L, op, x, from, to, &bad) : NULL;
		if (r || bad)
			return r;
		/* Through f32, in integer arithmetic. */
		IrType *f32 = L->c->t_f32;
		if (is_f8(from)) {
			x = lower_f8_to_f32(b, L->ctx, x, from->fk == IR_F8E4M3);
			return lower_convert(L, op, x, f32, to);
		}
		x = lower_convert(L, op, x, from, f32);
		return x ? lower_f32_to_f8(b, L->ctx, x, to->fk == IR_F8E4M3) : NULL;
	}
	LLVMTypeRef ty = lower_type(L, to);
	bool fi = ir_type_is_float(from), ft = ir_type_is_float(to);
	bool from_bool = from->kind == IR_TY_INT && from->bits == 1;
	if (!fi && !ft) {
		int fb = from->kind == IR_TY_INDEX ? 64 : from->bits,
		    tb = to->kind == IR_TY_INDEX ? 64 : to->bits;
		if (tb == 1)
			return LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstInt(LLVMTypeOf(x), 0, 0),
			                     "");
		if (fb == tb)
			return x;
		if (fb > tb)
			return LLVMBuildTrunc(b, x, ty, "");
		return from_bool ? LLVMBuildZExt(b, x, ty, "") : LLVMBuildSExt(b, x, ty, "");
	}
	if (!fi && ft)
		return from_bool ? LLVMBuildUIToFP(b, x, ty, "") : LLVMBuildSIToFP(b, x, ty, "");
	if (fi && !ft) {
		if (to->kind == IR_TY_INT && to->bits == 1)
			return LLVMBuildFCmp(b, LLVMRealUNE, x, LLVMConstReal(LLVMTypeOf(x), 0),
			                     "");
		/* Saturating, NaN to 0: defined for every input. */
		char name[64];
		snprintf(name, sizeof name, "llvm.fptosi.sat.i%d.%s",
		         to->kind == IR_TY_INDEX ? 64 : to->bits,
		         from->fk == IR_F16    ? "f16"
		         : from->fk == IR_BF16 ? "bf16"
		         : from->fk == IR_F32  ? "f32"
		                               : "f64");
		if (is_half(from)) {
			x = LLVMBuildFPExt(b, x, L->f32, "");
			snprintf(name, sizeof name, "llvm.fptosi.sat.i%d.f32",
			         to->kind == IR_TY_INDEX ? 64 : to->bits);
		}
		return lower_call(L, name, ty, &x, 1);
	}
	int fw = from->bits, tw = to->bits;
	if (fw == tw) /* f16 <-> bf16 */
		return LLVMBuildFPTrunc(b, LLVMBuildFPExt(b, x, L->f32, ""), ty, "");
	return fw < tw ? LLVMBuildFPExt(b, x, ty, "") : LLVMBuildFPTrunc(b, x, ty, "");
}

static LLVMValueRef
intrinsic1(Lower *L, const char *base, LLVMValueRef x)
{
	char name[64];
	LLVMTypeRef t = LLVMTypeOf(x);
	const char *suf = t == L->f32 ? "f32" : t == L->f64 ? "f64" : t == L->f16 ? "f16" : "bf16";
	snprintf(name, sizeof name, "llvm.%s.%s", base, suf);
	return lower_call(L, name, t, &x, 1);
}

static LLVMValueRef
intrinsic2(Lower *L, const char *base, LLVMValueRef x, LLVMValueRef y)
{
	char name[64];
	LLVMTypeRef t = LLVMTypeOf(x);
	const char *suf = t == L->f32 ? "f32" : t == L->f64 ? "f64" : t == L->f16 ? "f16" : "bf16";
	snprintf(name, sizeof name, "llvm.%s.%s", base, suf);
	LLVMValueRef a[2] = {x, y};
	return lower_call(L, name, t, a, 2);
}

/* Shift amounts at or above the width give 0 (shl) or the sign (shr), as in fold.c. */
static LLVMValueRef
shift(Lower *L, IrOpcode code, LLVMValueRef x, LLVMValueRef n, int bits)
{
	LLVMBuilderRef b = L->b;
	LLVMTypeRef t = LLVMTypeOf(x);
	LLVMValueRef w = LLVMConstInt(t, (unsigned long long)bits, 0);
	LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, n, w, "");
	LLVMValueRef safe = LLVMBuildSelect(b, big, LLVMConstInt(t, 0, 0), n, "");
	if (code == IR_OP_SHL)
		return LLVMBuildSelect(b, big, LLVMConstInt(t, 0, 0), LLVMBuildShl(b, x, safe, ""),
		                       "");
	LLVMValueRef sign =
	    LLVMBuildAShr(b, x, LLVMConstInt(t, (unsigned long long)(bits - 1), 0), "");
	return LLVMBuildSelect(b, big, sign, LLVMBuildAShr(b, x, safe, ""), "");
}

/* One element of an elementwise op: args are of the operand element type `t` (for cvt: `t`;
 * select: args[0] is i1); the result has the result element type `rt`. */
static LLVMValueRef
element(Lower *L, IrOp *op, IrType *t, IrType *rt, LLVMValueRef *args)
{
	LLVMBuilderRef b = L->b;
	IrCtx *c = L->c;
	bool fl = ir_type_is_float(t);
	bool boolean = t->kind == IR_TY_INT && t->bits == 1;
	int bits = t->kind == IR_TY_INDEX ? 64 : t->bits;
	LLVMValueRef x = args[0], y = args[1];
	if (is_f8(t) && op->code != IR_OP_CVT && op->code != IR_OP_SELECT) {
		/* f8 math happens in f32 and rounds back. */
		LLVMValueRef w[3];
		int n = op->code == IR_OP_FMA ? 3 : op->nitem;
		for (int i = 0; i < n && i < 3; i++)
			if (!(w[i] = lower_convert(L, op, args[i], t, c->t_f32)))
				return NULL;
		LLVMValueRef r = element(L, op, c->t_f32, op->code == IR_OP_CMP ? rt : c->t_f32, w);
		return r && op->code != IR_OP_CMP ? lower_convert(L, op, r, c->t_f32, t) : r;
	}
	switch (op->code) {
	case IR_OP_ADD:
		return fl ? LLVMBuildFAdd(b, x, y, "") : LLVMBuildAdd(b, x, y, "");
	case IR_OP_SUB:
		return fl ? LLVMBuildFSub(b, x, y, "") : LLVMBuildSub(b, x, y, "");
	case IR_OP_MUL:
		return fl ? LLVMBuildFMul(b, x, y, "") : LLVMBuildMul(b, x, y, "");
	case IR_OP_DIV:
		return fl        ? LLVMBuildFDiv(b, x, y, "")
		       : boolean ? LLVMBuildUDiv(b, x, y, "")
		                 : LLVMBuildSDiv(b, x, y, "");
	case IR_OP_REM:
		return fl        ? LLVMBuildFRem(b, x, y, "")
		       : boolean ? LLVMBuildURem(b, x, y, "")
		                 : LLVMBuildSRem(b, x, y, "");
	case IR_OP_MAX:
	case IR_OP_MIN: {
		bool mx = op->code == IR_OP_MAX;
		if (fl)
			return intrinsic2(L, mx ? "maxnum" : "minnum", x, y);
		LLVMIntPredicate p =
		    boolean ? (mx ? LLVMIntUGT : LLVMIntULT) : (mx ? LLVMIntSGT : LLVMIntSLT);
		return LLVMBuildSelect(b, LLVMBuildICmp(b, p, x, y, ""), x, y, "");
	}
	case IR_OP_AND:
		return LLVMBuildAnd(b, x, y, "");
	case IR_OP_OR:
		return LLVMBuildOr(b, x, y, "");
	case IR_OP_XOR:
		return LLVMBuildXor(b, x, y, "");
	case IR_OP_SHL:
	case IR_OP_SHR:
		return shift(L, op->code, x, y, bits);
	case IR_OP_NEG:
		return fl ? LLVMBuildFNeg(b, x, "") : LLVMBuildNeg(b, x, "");
	case IR_OP_ABS:
		if (fl)
			return intrinsic1(L, "fabs", x);
		LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, x, LLVMConstInt(LLVMTypeOf(x), 0, 0), "");
		LLVMValueRef minus = LLVMBuildNeg(b, x, "");
		return LLVMBuildSelect(b, neg, minus, x, "");
	case IR_OP_EXP2:
	case IR_OP_EXP:
	case IR_OP_LOG2:
	case IR_OP_SQRT:
	case IR_OP_RSQRT: {
		bool promote = is_half(t);
		LLVMValueRef a = promote ? LLVMBuildFPExt(b, x, L->f32, "") : x;
		LLVMValueRef r = L->t->math ? L->t->math(L, op, a, promote ? c->t_f32 : t) : NULL;
		if (!r) {
			if (L->ok)
				lower_unsupported(L, op, "on '%s'", ir_type_str(c, t));
			return NULL;
		}
		return promote ? LLVMBuildFPTrunc(b, r, lower_type(L, t), "") : r;
	}
	case IR_OP_FMA: {
		if (!fl)
			return NULL;
		LLVMValueRef a3[3] = {args[0], args[1], args[2]};
		char name[64];
		LLVMTypeRef ty = LLVMTypeOf(x);
		snprintf(name, sizeof name, "llvm.fma.%s",
		         ty == L->f32   ? "f32"
		         : ty == L->f64 ? "f64"
		         : ty == L->f16 ? "f16"
		                        : "bf16");
		return lower_call(L, name, ty, a3, 3);
	}
	case IR_OP_CMP: {
		IrStr m = op->mode;
		IrKeywords *k = &c->kw;
		if (fl) {
			LLVMRealPredicate p = m == k->eq   ? LLVMRealOEQ
			                      : m == k->ne ? LLVMRealONE
			                      : m == k->lt ? LLVMRealOLT
			                      : m == k->le ? LLVMRealOLE
			                      : m == k->gt ? LLVMRealOGT
			                                   : LLVMRealOGE;
			return LLVMBuildFCmp(b, p, x, y, "");
		}
		LLVMIntPredicate p;
		if (boolean)
			p = m == k->eq   ? LLVMIntEQ
			    : m == k->ne ? LLVMIntNE
			    : m == k->lt ? LLVMIntULT
			    : m == k->le ? LLVMIntULE
			    : m == k->gt ? LLVMIntUGT
			                 : LLVMIntUGE;
		else
			p = m == k->eq   ? LLVMIntEQ
			    : m == k->ne ? LLVMIntNE
			    : m == k->lt ? LLVMIntSLT
			    : m == k->le ? LLVMIntSLE
			    : m == k->gt ? LLVMIntSGT
			                 : LLVMIntSGE;
		return LLVMBuildICmp(b, p, x, y, "");
	}
	case IR_OP_SELECT:
		return LLVMBuildSelect(b, args[0], args[1], args[2], "");
	case IR_OP_CVT:
		return lower_convert(L, op, x, t, rt);
	default:
		lower_unsupported(L, op, "%s", "");
		return NULL;
	}
}

/* The element type elementwise operands have: the compared type for cmp, the source for cvt. */
static IrType *
operand_elem(Lower *L, IrOp *op)
{
	IrType *rt = ir_type_elem(op->res[0].type);
	if (op->code == IR_OP_CMP || op->code == IR_OP_CVT) {
		for (int i = 0; i < op->nitem; i++) {
			IrValue *v = op->item[i].kind == IR_IT_VALUE
			                 ? ir_item_value(op, &op->item[i])
			                 : NULL;
			if (v)
				return ir_type_elem(v->type);
		}
	}
	(void)L;
	return rt;
}

bool
lower_op_elementwise(Lower *L, IrOp *op)
{
	IrType *res = op->res[0].type, *rt = ir_type_elem(res), *t = operand_elem(L, op);
	int n = op->nitem;
	LLVMValueRef args[3];
	if (!ir_type_is_reg_tile(res)) {
		for (int i = 0; i < n; i++) {
			IrItem *it = &op->item[i];
			IrType *want = op->code == IR_OP_SELECT && i == 0 ? L->c->t_i1 : t;
			args[i] = it->kind == IR_IT_VALUE ? lower_scalar(L, ir_item_value(op, it))
			                                  : literal(L, it, want);
			if (!args[i])
				return lower_error(L, op->loc,
				                   "'%s' operand %d has no scalar value",
				                   ir_op_name(op->code), i + 1);
		}
		LLVMValueRef r = element(L, op, t, rt, args);
		if (!r)
			return false;
		LowerVal *x = lower_val(L, &op->res[0]);
		x->kind = LOWER_V_SCALAR;
		x->v = r;
		return true;
	}
	const LowerLayout *l = L->lay[op->res[0].id];
	LowerFrag opf[3];
	bool tile[3] = {false, false, false};
	for (int i = 0; i < n; i++) {
		IrItem *it = &op->item[i];
		IrType *want = op->code == IR_OP_SELECT && i == 0 ? L->c->t_i1 : t;
		if (it->kind != IR_IT_VALUE) {
			args[i] = literal(L, it, want);
			continue;
		}
		IrValue *v = ir_item_value(op, it);
		LowerVal *x = lower_val(L, v);
		if (x->kind == LOWER_V_FRAG) {
			tile[i] = true;
			if (!lower_frag_convert(L, op, &x->f, l, ir_type_elem(v->type), &opf[i]))
				return false;
		} else {
			args[i] = x->v;
		}
	}
	LowerFrag f = lower_frag_new(L, l);
	for (int r = 0; r < lower_layout_nregs(l); r++) {
		LLVMValueRef a[3];
		for (int i = 0; i < n; i++)
			a[i] = tile[i] ? opf[i].v[r] : args[i];
		if (!(f.v[r] = element(L, op, t, rt, a)))
			return false;
	}
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	x->f = f;
	return true;
}

bool
lower_op_const(Lower *L, IrOp *op)
{
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = literal(L, &op->item[0], op->res[0].type);
	return true;
}

static LLVMValueRef
fit(Lower *L, LLVMValueRef v64, IrType *t)
{
	LLVMTypeRef ty = lower_type(L, t);
	if (ty == L->i64)
		return v64;
	if (t->bits == 1)
		return LLVMBuildICmp(L->b, LLVMIntNE, v64, lower_i64(L, 0), "");
	return LLVMBuildTrunc(L->b, v64, ty, "");
}

bool
lower_op_index(Lower *L, IrOp *op)
{
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = fit(L, lower_expr(L, op, op->item[0].e), op->res[0].type);
	return L->ok;
}

bool
lower_op_program_id(Lower *L, IrOp *op)
{
	int64_t d = 0;
	ir_expr_eval_const(ir_op_group(op, L->c->kw.dim)->item[0].e, &d);
	/* A persistent kernel's ids and grid are the logical ones of the tile it is working on. */
	LLVMValueRef v;
	if (op->code == IR_OP_PROGRAM_ID)
		v = L->pid[d] ? L->pid[d] : L->t->block_id(L, (int)d);
	else
		v = L->grid[d] ? L->grid[d] : L->t->num_blocks(L, (int)d);
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = fit(L, LLVMBuildZExt(L->b, v, L->i64, ""), op->res[0].type);
	return true;
}

/* A walking persistent kernel's CTA and the CTAs launched (along x). */
bool
lower_op_cta_id(Lower *L, IrOp *op)
{
	LLVMValueRef v = op->code == IR_OP_CTA_ID ? L->t->block_id(L, 0) : L->t->num_blocks(L, 0);
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = fit(L, LLVMBuildZExt(L->b, v, L->i64, ""), op->res[0].type);
	return true;
}

bool
lower_op_cdiv(Lower *L, IrOp *op)
{
	IrType *t = op->res[0].type;
	LLVMValueRef a[2];
	for (int i = 0; i < 2; i++) {
		IrItem *it = &op->item[i];
		a[i] = it->kind == IR_IT_VALUE ? lower_scalar(L, ir_item_value(op, it))
		                               : literal(L, it, t);
	}
	/* ceil(a / b) for b > 0, rounding toward +inf for negative a too (fold.c). */
	LLVMBuilderRef b = L->b;
	LLVMTypeRef ty = LLVMTypeOf(a[0]);
	LLVMValueRef z = LLVMConstInt(ty, 0, 0);
	LLVMValueRef q = LLVMBuildSDiv(b, a[0], a[1], ""), r = LLVMBuildSRem(b, a[0], a[1], "");
	LLVMValueRef rnz = LLVMBuildICmp(b, LLVMIntNE, r, z, "");
	LLVMValueRef rpos = LLVMBuildICmp(b, LLVMIntSGT, r, z, "");
	LLVMValueRef up = LLVMBuildAnd(b, rnz, rpos, "");
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = LLVMBuildAdd(b, q, LLVMBuildZExt(b, up, ty, ""), "");
	return true;
}

bool
lower_op_tag(Lower *L, IrOp *op)
{
	*lower_val(L, &op->res[0]) = *lower_val(L, ir_item_value(op, &op->item[0]));
	return true;
}

bool
lower_op_full(Lower *L, IrOp *op)
{
	IrType *t = op->res[0].type, *e = t->elem;
	LLVMValueRef v;
	if (op->code == IR_OP_ZEROS)
		v = ir_type_is_float(e) && !is_f8(e) ? LLVMConstReal(lower_type(L, e), 0.0)
		                                     : LLVMConstInt(lower_type(L, e), 0, 0);
	else if (op->item[0].kind == IR_IT_VALUE)
		v = lower_scalar(L, ir_item_value(op, &op->item[0]));
	else
		v = literal(L, &op->item[0], e);
	const LowerLayout *l = L->lay[op->res[0].id];
	LowerFrag f = lower_frag_new(L, l);
	for (int r = 0; r < lower_layout_nregs(l); r++)
		f.v[r] = v; /* a view: every register is the same value */
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	x->f = f;
	return true;
}

bool
lower_op_phase_next(Lower *L, IrOp *op)
{
	IrGroup *g = ir_op_group(op, L->c->kw.at);
	LLVMValueRef s = lower_expr(L, op, g->item[0].e), n = lower_expr(L, op, g->item[1].e);
	LLVMValueRef last =
	    LLVMBuildICmp(L->b, LLVMIntEQ, s, LLVMBuildSub(L->b, n, lower_i64(L, 1), ""), "");
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = LLVMBuildXor(L->b, lower_scalar(L, ir_item_value(op, &op->item[0])), last, "");
	return true;
}
