/* lower_frag.c — fragment arithmetic: where a thread's registers sit in the tile, conversions
 * between layouts (a register permutation, or a round trip through shared memory), fragments to
 * and from shared-memory tiles, broadcasts and transposes as views, and reductions (registers,
 * then warp shuffles, then shared memory across warps). */
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

LowerFrag
lower_frag_new(Lower *L, const LowerLayout *l)
{
	LowerFrag f;
	f.layout = l;
	f.v = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)lower_layout_nregs(l));
	return f;
}

static bool
zero_basis(const LowerLayout *l, int k, int i)
{
	for (int d = 0; d < l->rank; d++)
		if (l->basis[k][i][d])
			return false;
	return true;
}

static LLVMValueRef
warp_l(Lower *L)
{
	int p = 1 << L->scope.warp_bits;
	if (p == 1)
		return lower_i32(L, 0);
	return LLVMBuildAnd(L->b, L->scope.warp, lower_i32(L, p - 1), "");
}

/* The thread's part of the coordinates: lane and warp bits, in runs of consecutive bits. */
static void
thread_coord(Lower *L, const LowerLayout *l, LLVMValueRef *tc, bool disjoint)
{
	LLVMBuilderRef b = L->b;
	for (int d = 0; d < l->rank; d++)
		tc[d] = lower_i32(L, 0);
	for (int k = LOWER_LANE; k < LOWER_BIT_KINDS; k++) {
		LLVMValueRef idx = k == LOWER_LANE ? L->scope.lane : warp_l(L);
		for (int i = 0; i < l->nbits[k];) {
			if (zero_basis(l, k, i)) {
				i++;
				continue;
			}
			const int32_t *bs = l->basis[k][i];
			int dim = -1, nd = 0;
			for (int d = 0; d < l->rank; d++)
				if (bs[d]) {
					dim = d;
					nd++;
				}
			int sh = nd == 1 ? lower_log2(bs[dim]) : -1;
			int len = 1;
			if (sh >= 0)
				while (i + len < l->nbits[k]) {
					const int32_t *n = l->basis[k][i + len];
					bool ok = n[dim] == bs[dim] << len;
					for (int d = 0; d < l->rank; d++)
						ok &= d == dim || n[d] == 0;
					if (!ok)
						break;
					len++;
				}
			LLVMValueRef bits =
			    LLVMBuildAnd(b, LLVMBuildLShr(b, idx, lower_i32(L, i), ""),
			                 lower_i32(L, (1 << len) - 1), "");
			for (int d = 0; d < l->rank; d++) {
				if (!bs[d])
					continue;
				LLVMValueRef term =
				    sh >= 0 ? LLVMBuildShl(b, bits, lower_i32(L, sh), "")
				            : LLVMBuildMul(b, bits, lower_i32(L, bs[d]), "");
				tc[d] = disjoint ? LLVMBuildOr(b, tc[d], term, "")
				                 : LLVMBuildXor(b, tc[d], term, "");
			}
			i += len;
		}
	}
}

void
lower_frag_thread(Lower *L, const LowerLayout *l, LLVMValueRef *tc)
{
	thread_coord(L, l, tc, lower_layout_disjoint(l));
}

void
lower_frag_coord_at(Lower *L, const LowerLayout *l, LLVMValueRef *tc, int reg, LLVMValueRef *coord)
{
	bool dis = lower_layout_disjoint(l);
	int64_t rc[LOWER_MAX_RANK];
	lower_layout_coord(l, (uint32_t)reg, 0, 0, rc);
	for (int d = 0; d < l->rank; d++) {
		LLVMValueRef c = lower_i32(L, rc[d]);
		coord[d] = !rc[d] ? tc[d]
		           : dis  ? LLVMBuildAdd(L->b, tc[d], c, "")
		                  : LLVMBuildXor(L->b, tc[d], c, "");
	}
}

void
lower_frag_coord(Lower *L, const LowerLayout *l, int reg, LLVMValueRef *coord)
{
	LLVMValueRef tc[LOWER_MAX_RANK];
	lower_frag_thread(L, l, tc);
	lower_frag_coord_at(L, l, tc, reg, coord);
}

LLVMValueRef
lower_frag_primary(Lower *L, const LowerLayout *l)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
	int ml = 0, mw = 0;
	for (int i = 0; i < l->nbits[LOWER_LANE]; i++)
		if (zero_basis(l, LOWER_LANE, i))
			ml |= 1 << i;
	for (int i = 0; i < l->nbits[LOWER_WARP]; i++)
		if (zero_basis(l, LOWER_WARP, i))
			mw |= 1 << i;
	if (ml)
		ok = LLVMBuildICmp(b, LLVMIntEQ,
		                   LLVMBuildAnd(b, L->scope.lane, lower_i32(L, ml), ""),
		                   lower_i32(L, 0), "");
	if (mw)
		ok = LLVMBuildAnd(b, ok,
		                  LLVMBuildICmp(b, LLVMIntEQ,
		                                LLVMBuildAnd(b, warp_l(L), lower_i32(L, mw), ""),
		                                lower_i32(L, 0), ""),
		                  "");
	if ((1 << L->scope.warp_bits) != L->scope.nwarps)
		ok = LLVMBuildAnd(b, ok,
		                  LLVMBuildICmp(b, LLVMIntULT, L->scope.warp,
		                                lower_i32(L, 1 << L->scope.warp_bits), ""),
		                  "");
	return ok;
}

static bool
is_true(LLVMValueRef v)
{
	return LLVMIsConstant(v) && LLVMConstIntGetZExtValue(v) == 1;
}

/* The widest vector (in registers, a power of two) for accesses along the view's contiguous
 * dimension. */
static int
smem_vec(const LowerFrag *f, const LowerSmem *s, int esize)
{
	const LowerSmemLayout *y = s->layout;
	int fast = y->order[0];
	int v = lower_layout_vec_bits(f->layout, fast);
	while (v > 0 &&
	       ((1 << v) * esize > 16 || (1 << v) > y->panel_elems ||
	        (s->org[fast] && s->org_div[fast] % (1 << v)) || y->row_bytes % ((1 << v) * esize)))
		v--;
	return v;
}

typedef struct Access {
	LLVMTypeRef memt, vect;
	int vec, esize;
} Access;

static Access
access_of(Lower *L, IrType *elem, int vbits)
{
	Access a;
	a.memt = lower_mem_type(L, elem);
	a.esize = lower_elem_bytes(elem);
	a.vec = 1 << vbits;
	a.vect = a.vec > 1 ? LLVMVectorType(a.memt, (unsigned)a.vec) : a.memt;
	return a;
}

static LLVMValueRef
to_mem(Lower *L, IrType *elem, LLVMValueRef v)
{
	return elem == L->c->t_i1 ? LLVMBuildZExt(L->b, v, L->i8, "") : v;
}

static LLVMValueRef
from_mem(Lower *L, IrType *elem, LLVMValueRef v)
{
	return elem == L->c->t_i1 ? LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "")
	                          : v;
}

bool
lower_frag_to_smem(Lower *L, IrOp *at, const LowerFrag *f, IrType *elem, const LowerSmem *s)
{
	(void)at;
	LLVMBuilderRef b = L->b;
	Access a = access_of(L, elem, smem_vec(f, s, lower_elem_bytes(elem)));
	LLVMValueRef prim = lower_frag_primary(L, f->layout);
	LLVMBasicBlockRef merge = is_true(prim) ? NULL : lower_if_begin(L, prim, "primary");
	LLVMValueRef tc[LOWER_MAX_RANK];
	lower_frag_thread(L, f->layout, tc);
	for (int r = 0; r < lower_layout_nregs(f->layout); r += a.vec) {
		LLVMValueRef c[LOWER_MAX_RANK];
		lower_frag_coord_at(L, f->layout, tc, r, c);
		LLVMValueRef p = lower_smem_ptr(L, lower_smem_elem(L, s, c));
		LLVMValueRef v;
		if (a.vec == 1) {
			v = to_mem(L, elem, f->v[r]);
		} else {
			v = LLVMGetUndef(a.vect);
			for (int j = 0; j < a.vec; j++)
				v = LLVMBuildInsertElement(b, v, to_mem(L, elem, f->v[r + j]),
				                           lower_i32(L, j), "");
		}
		LLVMValueRef st = LLVMBuildStore(b, v, p);
		LLVMSetAlignment(st, (unsigned)(a.vec * a.esize));
	}
	if (merge)
		lower_if_end(L, merge);
	return true;
}

bool
lower_frag_from_smem(Lower *L, IrOp *at, const LowerSmem *s, IrType *elem, LowerFrag *f)
{
	(void)at;
	LLVMBuilderRef b = L->b;
	Access a = access_of(L, elem, smem_vec(f, s, lower_elem_bytes(elem)));
	LLVMValueRef tc[LOWER_MAX_RANK];
	lower_frag_thread(L, f->layout, tc);
	for (int r = 0; r < lower_layout_nregs(f->layout); r += a.vec) {
		LLVMValueRef c[LOWER_MAX_RANK];
		lower_frag_coord_at(L, f->layout, tc, r, c);
		LLVMValueRef p = lower_smem_ptr(L, lower_smem_elem(L, s, c));
		LLVMValueRef v = LLVMBuildLoad2(b, a.vect, p, "");
		LLVMSetAlignment(v, (unsigned)(a.vec * a.esize));
		if (a.vec == 1)
			f->v[r] = from_mem(L, elem, v);
		else
			for (int j = 0; j < a.vec; j++)
				f->v[r + j] = from_mem(
				    L, elem, LLVMBuildExtractElement(b, v, lower_i32(L, j), ""));
	}
	return true;
}

LowerSmem
lower_scratch_view(Lower *L, IrOp *at, int rank, const int64_t *shape, IrType *elem)
{
	LowerSmemLayout *y = ir_arena_alloc(&L->arena, sizeof *y);
	y->rank = rank;
	y->esize = lower_elem_bytes(elem);
	int64_t rows = 1;
	for (int d = 0; d < rank; d++) {
		y->shape[d] = shape[d];
		y->order[d] = rank - 1 - d;
		if (d < rank - 1)
			rows *= shape[d];
	}
	y->panel_elems = shape[rank - 1];
	y->row_bytes = y->panel_elems * y->esize;
	y->bytes = rows * y->row_bytes;
	y->align = 16;
	LowerSmem s = {0};
	s.layout = y;
	s.rank = rank;
	for (int d = 0; d < rank; d++) {
		s.shape[d] = shape[d];
		s.org_div[d] = 1;
	}
	s.base = lower_scratch(L, at, y->bytes, 16);
	return s;
}

bool
lower_frag_convert(Lower *L, IrOp *at, const LowerFrag *from, const LowerLayout *to, IrType *elem,
                   LowerFrag *out)
{
	if (from->layout == to || lower_layout_equal(from->layout, to)) {
		*out = *from;
		out->layout = to;
		return true;
	}
	int n = lower_layout_nregs(to);
	int *perm = ir_arena_alloc(&L->arena, sizeof(int) * (size_t)n);
	*out = lower_frag_new(L, to);
	if (lower_layout_regperm(from->layout, to, perm)) {
		for (int r = 0; r < n; r++)
			out->v[r] = from->v[perm[r]];
		return true;
	}
	LowerSmem s = lower_scratch_view(L, at, to->rank, to->shape, elem);
	if (!lower_group_barrier(L, at) || !lower_frag_to_smem(L, at, from, elem, &s))
		return false;
	L->last_barrier = NULL;
	if (!lower_group_barrier(L, at) || !lower_frag_from_smem(L, at, &s, elem, out))
		return false;
	L->last_barrier = NULL;
	return lower_group_barrier(L, at);
}

/* ---- views ---- */

bool
lower_op_bcast(Lower *L, IrOp *op)
{
	IrValue *src = ir_item_value(op, &op->item[0]);
	const LowerLayout *rl = L->lay[op->res[0].id];
	int64_t d = 0;
	ir_expr_eval_const(ir_op_group(op, L->c->kw.dim)->item[0].e, &d);
	LowerLayout sl;
	int *regmap = ir_arena_alloc(&L->arena, sizeof(int) * (size_t)lower_layout_nregs(rl));
	lower_layout_slice(rl, (int)d, &sl, regmap);
	LowerFrag sf;
	if (!lower_frag_convert(L, op, &lower_val(L, src)->f, lower_layout_dup(L, &sl),
	                        src->type->elem, &sf))
		return false;
	LowerFrag f = lower_frag_new(L, rl);
	for (int r = 0; r < lower_layout_nregs(rl); r++)
		f.v[r] = sf.v[regmap[r]];
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	x->f = f;
	return true;
}

bool
lower_op_trans(Lower *L, IrOp *op)
{
	IrValue *src = ir_item_value(op, &op->item[0]);
	LowerFrag *sf = &lower_val(L, src)->f;
	LowerLayout tl;
	lower_layout_transpose(sf->layout, &tl);
	LowerFrag view = *sf;
	view.layout = lower_layout_dup(L, &tl);
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	return lower_frag_convert(L, op, &view, L->lay[op->res[0].id], src->type->elem, &x->f);
}

/* ---- reductions ---- */

/* One step of a reduction. f8 is carried as i8 bits: like elementwise math, the step happens in
 * f32 and rounds back (exact for max and min). */
static LLVMValueRef
combine(Lower *L, IrOp *op, IrType *t, LLVMValueRef a, LLVMValueRef b)
{
	LLVMBuilderRef bd = L->b;
	IrKeywords *k = &L->c->kw;
	bool fl = ir_type_is_float(t);
	if (fl && (t->fk == IR_F8E4M3 || t->fk == IR_F8E5M2)) {
		IrType *f32 = L->c->t_f32;
		LLVMValueRef wa = lower_convert(L, op, a, t, f32);
		LLVMValueRef wb = wa ? lower_convert(L, op, b, t, f32) : NULL;
		LLVMValueRef r = wb ? combine(L, op, f32, wa, wb) : NULL;
		return r ? lower_convert(L, op, r, f32, t) : NULL;
	}
	if (op->mode == k->add)
		return fl ? LLVMBuildFAdd(bd, a, b, "") : LLVMBuildAdd(bd, a, b, "");
	bool mx = op->mode == k->max;
	if (fl) {
		LLVMTypeRef ty = LLVMTypeOf(a);
		char name[48];
		snprintf(name, sizeof name, "llvm.%s.%s", mx ? "maxnum" : "minnum",
		         ty == L->f32   ? "f32"
		         : ty == L->f64 ? "f64"
		         : ty == L->f16 ? "f16"
		                        : "bf16");
		LLVMValueRef args[2] = {a, b};
		return lower_call(L, name, ty, args, 2);
	}
	bool u = t->kind == IR_TY_INT && t->bits == 1;
	LLVMIntPredicate p = u ? (mx ? LLVMIntUGT : LLVMIntULT) : (mx ? LLVMIntSGT : LLVMIntSLT);
	return LLVMBuildSelect(bd, LLVMBuildICmp(bd, p, a, b, ""), a, b, "");
}

/* Exchanges a value of any scalar type with lane ^ mask, 32 bits at a time. */
static LLVMValueRef
shfl(Lower *L, LLVMValueRef v, int mask)
{
	LLVMBuilderRef b = L->b;
	LLVMTypeRef ty = LLVMTypeOf(v);
	unsigned bits = LLVMGetTypeKind(ty) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(ty)
	                : ty == L->f64                             ? 64
	                : ty == L->f32                             ? 32
	                                                           : 16;
	LLVMTypeRef it = LLVMIntTypeInContext(L->ctx, bits);
	LLVMValueRef x =
	    LLVMGetTypeKind(ty) == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
	LLVMValueRef r;
	if (bits == 64) {
		LLVMValueRef lo = LLVMBuildTrunc(b, x, L->i32, "");
		LLVMValueRef hi = LLVMBuildTrunc(
		    b, LLVMBuildLShr(b, x, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
		lo = L->t->shfl_xor(L, lo, mask);
		hi = L->t->shfl_xor(L, hi, mask);
		LLVMValueRef lo64 = LLVMBuildZExt(b, lo, L->i64, "");
		LLVMValueRef hi64 = LLVMBuildShl(b, LLVMBuildZExt(b, hi, L->i64, ""),
		                                 LLVMConstInt(L->i64, 32, 0), "");
		r = LLVMBuildOr(b, lo64, hi64, "");
	} else if (bits == 32) {
		r = L->t->shfl_xor(L, x, mask);
	} else {
		r = LLVMBuildTrunc(b, L->t->shfl_xor(L, LLVMBuildZExt(b, x, L->i32, ""), mask), it,
		                   "");
	}
	return LLVMGetTypeKind(ty) == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, ty, "");
}

bool
lower_op_reduce(Lower *L, IrOp *op)
{
	LLVMBuilderRef b = L->b;
	IrValue *src = ir_item_value(op, &op->item[0]);
	IrType *t = src->type->elem;
	const LowerFrag *sf = &lower_val(L, src)->f;
	const LowerLayout *l = sf->layout;
	int64_t d = 0;
	ir_expr_eval_const(ir_op_group(op, L->c->kw.dim)->item[0].e, &d);
	LowerLayout sl;
	int n = lower_layout_nregs(l);
	int *regmap = ir_arena_alloc(&L->arena, sizeof(int) * (size_t)n);
	lower_layout_slice(l, (int)d, &sl, regmap);
	const LowerLayout *slp = lower_layout_dup(L, &sl);
	LowerFrag acc = lower_frag_new(L, slp);
	int m = lower_layout_nregs(slp);
	for (int i = 0; i < m; i++)
		acc.v[i] = NULL;
	/* 1. Registers. */
	for (int r = 0; r < n; r++) {
		int s = regmap[r];
		acc.v[s] = acc.v[s] ? combine(L, op, t, acc.v[s], sf->v[r]) : sf->v[r];
	}
	/* 2. Lanes: butterflies over the lane bits along d. */
	for (int i = 0; i < l->nbits[LOWER_LANE]; i++)
		if (l->basis[LOWER_LANE][i][d])
			for (int s = 0; s < m; s++)
				acc.v[s] = combine(L, op, t, acc.v[s], shfl(L, acc.v[s], 1 << i));
	/* 3. Warps: through shared memory, one slot per (warp, lane, register). */
	int wmask = 0, nw = 1 << L->scope.warp_bits;
	for (int i = 0; i < l->nbits[LOWER_WARP]; i++)
		if (l->basis[LOWER_WARP][i][d])
			wmask |= 1 << i;
	if (wmask) {
		int es = lower_elem_bytes(t), lanes = L->t->info->warp;
		LLVMTypeRef mt = lower_mem_type(L, t);
		LLVMValueRef base = lower_scratch(L, op, (int64_t)nw * lanes * m * es, 16);
		LLVMValueRef wl = LLVMBuildAnd(b, L->scope.warp, lower_i32(L, nw - 1), "");
		if (!lower_group_barrier(L, op))
			return false;
		LLVMValueRef inwarps =
		    LLVMBuildICmp(b, LLVMIntULT, L->scope.warp, lower_i32(L, nw), "");
		LLVMBasicBlockRef merge = lower_if_begin(L, inwarps, "red.write");
		for (int s = 0; s < m; s++) {
			LLVMValueRef slot = LLVMBuildAdd(
			    b,
			    LLVMBuildMul(b,
			                 LLVMBuildAdd(b,
			                              LLVMBuildMul(b, wl, lower_i32(L, lanes), ""),
			                              L->scope.lane, ""),
			                 lower_i32(L, m), ""),
			    lower_i32(L, s), "");
			LLVMValueRef p = lower_smem_ptr(
			    L,
			    LLVMBuildAdd(b, base, LLVMBuildMul(b, slot, lower_i32(L, es), ""), ""));
			LLVMBuildStore(b, to_mem(L, t, acc.v[s]), p);
		}
		lower_if_end(L, merge);
		L->last_barrier = NULL;
		if (!lower_group_barrier(L, op))
			return false;
		int bits[LOWER_MAX_BITS], nb = 0;
		for (int i = 0; i < L->scope.warp_bits; i++)
			if (wmask >> i & 1)
				bits[nb++] = i;
		LLVMValueRef keep = LLVMBuildAnd(b, wl, lower_i32(L, ~wmask & (nw - 1)), "");
		LowerFrag tot = lower_frag_new(L, slp);
		for (int s = 0; s < m; s++)
			tot.v[s] = NULL;
		for (int j = 0; j < (1 << nb); j++) {
			int dep = 0;
			for (int q = 0; q < nb; q++)
				if (j >> q & 1)
					dep |= 1 << bits[q];
			LLVMValueRef w = LLVMBuildOr(b, keep, lower_i32(L, dep), "");
			for (int s = 0; s < m; s++) {
				LLVMValueRef slot = LLVMBuildAdd(
				    b,
				    LLVMBuildMul(
				        b,
				        LLVMBuildAdd(b, LLVMBuildMul(b, w, lower_i32(L, lanes), ""),
				                     L->scope.lane, ""),
				        lower_i32(L, m), ""),
				    lower_i32(L, s), "");
				LLVMValueRef p = lower_smem_ptr(
				    L,
				    LLVMBuildAdd(b, base,
				                 LLVMBuildMul(b, slot, lower_i32(L, es), ""), ""));
				LLVMValueRef v = from_mem(L, t, LLVMBuildLoad2(b, mt, p, ""));
				tot.v[s] = tot.v[s] ? combine(L, op, t, tot.v[s], v) : v;
			}
		}
		acc = tot;
		L->last_barrier = NULL;
		if (!lower_group_barrier(L, op))
			return false;
	}
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	return lower_frag_convert(L, op, &acc, L->lay[op->res[0].id], t, &x->f);
}
