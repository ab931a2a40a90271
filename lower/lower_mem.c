/* lower_mem.c — memory ops (SPEC §5.4): tile loads and stores against global tensors with
 * bounds masks and 16-byte vectors where the layout and alignment allow (checked statically, or
 * once at run time with a scalar fallback path), shared-memory buffers, views and slices, tile
 * traffic to and from shared memory, and copy.async handed to the target. */
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

/* ---- addresses ---- */

bool
lower_smem_item(Lower *L, IrOp *op, const IrItem *it, LowerSmem *out)
{
	IrValue *v = ir_item_value(op, it); /* `%s`, `%r[%i]`, or a lone value in a group */
	if (!v)
		return lower_error(L, it->loc, "expected a shared-memory tile");
	LowerVal *x = lower_val(L, v);
	if (x->kind == LOWER_V_SMEM) {
		*out = x->s;
		return true;
	}
	if (x->kind != LOWER_V_RING || !it->suffix)
		return lower_error(L, it->loc, "'%%%s' is not a shared-memory tile",
		                   v->name ? v->name : "<unnamed>");
	*out = x->s;
	LLVMValueRef slot = LLVMBuildTrunc(L->b, lower_expr(L, op, it->coord[0].e), L->i32, "");
	out->base = LLVMBuildAdd(L->b, x->s.base,
	                         LLVMBuildMul(L->b, slot, lower_i32(L, x->stride), ""), "slot");
	return true;
}

LLVMValueRef
lower_mbar_item(Lower *L, IrOp *op, const IrItem *it)
{
	LowerVal *x = lower_val(L, ir_item_value(op, it));
	if (!it->suffix)
		return x->v;
	LLVMValueRef i = LLVMBuildTrunc(L->b, lower_expr(L, op, it->coord[0].e), L->i32, "");
	return LLVMBuildAdd(L->b, x->v,
	                    LLVMBuildMul(L->b, i, lower_i32(L, L->facts->mbar_bytes), ""), "bar");
}

static LowerTensor *
tensor_item(Lower *L, IrOp *op, const IrItem *it)
{
	if (it->kind == IR_IT_SYMBOL) {
		LowerTensor *t = lower_symm_tensor(L, op, it->s);
		if (!t)
			lower_error(L, it->loc, "'@%s' is not a symmetric buffer of this kernel",
			            it->s);
		return t;
	}
	LowerVal *x = lower_val(L, ir_item_value(op, it));
	if (x->kind != LOWER_V_TENSOR) {
		lower_error(L, it->loc, "expected a tensor");
		return NULL;
	}
	return x->t;
}

/* ---- global loads and stores ---- */

enum { UNROLL_REGS = 8 };

typedef struct GAccess {
	IrOp *op;
	LowerTensor *t;
	IrType *elem;
	LLVMValueRef org[LOWER_MAX_RANK]; /* i64 */
	const LowerLayout *l;
	int fast; /* the stride-1 dimension, or -1 */
	bool store;
	IrStr reduce;                      /* stores (puts): combine with what is there, or NULL */
	LLVMValueRef other;                /* loads: element value where masked off */
	LLVMValueRef base[LOWER_MAX_RANK]; /* i64: origin + the thread's coordinates */
	LLVMValueRef prim;                 /* stores: the thread is a primary holder */
} GAccess;

/* The thread's part of every address: computed once per access. */
static void
access_setup(Lower *L, GAccess *g)
{
	LLVMValueRef tc[LOWER_MAX_RANK];
	lower_frag_thread(L, g->l, tc);
	for (int d = 0; d < g->l->rank; d++)
		g->base[d] =
		    LLVMBuildAdd(L->b, g->org[d], LLVMBuildSExt(L->b, tc[d], L->i64, ""), "");
	g->prim = g->store ? lower_frag_primary(L, g->l) : NULL;
}

/* Mask and byte offset of the element at base + rc (i64 coordinates relative to the thread). */
static LLVMValueRef
element_at(Lower *L, GAccess *g, LLVMValueRef *rc, LLVMValueRef *mask)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef off = lower_i64(L, 0), m = g->prim;
	for (int d = 0; d < g->l->rank; d++) {
		LLVMValueRef x = LLVMIsConstant(rc[d]) && !LLVMConstIntGetSExtValue(rc[d])
		                     ? g->base[d]
		                     : LLVMBuildAdd(b, g->base[d], rc[d], "");
		LLVMValueRef in = LLVMBuildICmp(b, LLVMIntULT, x, g->t->dim[d], "");
		m = m ? LLVMBuildAnd(b, m, in, "") : in;
		off = LLVMBuildAdd(b, off, LLVMBuildMul(b, x, g->t->stride[d], ""), "");
	}
	*mask = m;
	return LLVMBuildMul(b, off, lower_i64(L, lower_elem_bytes(g->elem)), "");
}

/* A store, or (a put with `reduce`) an atomic read-modify-write of one element where the mask
 * holds, at system scope (the target's comm_reduce). */
static bool
store_or_reduce(Lower *L, GAccess *g, LLVMValueRef p, LLVMValueRef off, LLVMValueRef v, int bytes,
      LLVMValueRef mask)
{
	if (!g->reduce)
		return L->t->store_global(L, g->t, p, off, v, bytes, mask);
	LLVMBasicBlockRef merge = mask ? lower_if_begin(L, mask, "red") : NULL;
	bool ok = L->t->comm_reduce(L, g->op, p, v, g->elem, g->reduce);
	if (merge)
		lower_if_end(L, merge);
	return ok;
}

/* The vector path: one access per run of 2^vbits registers along `fast`, unrolled. */
static bool
access_path(Lower *L, GAccess *g, int vbits, LowerFrag *f)
{
	LLVMBuilderRef b = L->b;
	const LowerLayout *l = g->l;
	int vec = 1 << vbits, es = lower_elem_bytes(g->elem);
	LLVMTypeRef mt = lower_mem_type(L, g->elem);
	LLVMTypeRef vt = vec > 1 ? LLVMVectorType(mt, (unsigned)vec) : mt;
	LLVMValueRef other = NULL;
	if (!g->store && g->other) {
		LLVMValueRef o =
		    g->elem == L->c->t_i1 ? LLVMBuildZExt(b, g->other, L->i8, "") : g->other;
		other = o;
		if (vec > 1) {
			other = LLVMGetUndef(vt);
			for (int j = 0; j < vec; j++)
				other = LLVMBuildInsertElement(b, other, o, lower_i32(L, j), "");
		}
	}
	for (int r = 0; r < lower_layout_nregs(l); r += vec) {
		int64_t rc[LOWER_MAX_RANK];
		lower_layout_coord(l, (uint32_t)r, 0, 0, rc);
		LLVMValueRef rcv[LOWER_MAX_RANK], mask;
		for (int d = 0; d < l->rank; d++)
			rcv[d] = lower_i64(L, rc[d]);
		LLVMValueRef off = element_at(L, g, rcv, &mask);
		LLVMValueRef p = LLVMBuildGEP2(b, L->i8, g->t->base, &off, 1, "");
		if (g->store) {
			LLVMValueRef v;
			if (vec == 1) {
				v = f->v[r];
				if (g->elem == L->c->t_i1)
					v = LLVMBuildZExt(b, v, L->i8, "");
			} else {
				v = LLVMGetUndef(vt);
				for (int j = 0; j < vec; j++) {
					LLVMValueRef e = f->v[r + j];
					if (g->elem == L->c->t_i1)
						e = LLVMBuildZExt(b, e, L->i8, "");
					v = LLVMBuildInsertElement(b, v, e, lower_i32(L, j), "");
				}
			}
			if (!store_or_reduce(L, g, p, off, v, vec * es, mask))
				return false;
		} else {
			LLVMValueRef v =
			    L->t->load_global(L, g->t, p, off, vt, vec * es, mask, other);
			if (!v)
				return false;
			for (int j = 0; j < vec; j++) {
				LLVMValueRef e =
				    vec == 1 ? v
				             : LLVMBuildExtractElement(b, v, lower_i32(L, j), "");
				if (g->elem == L->c->t_i1)
					e = LLVMBuildICmp(b, LLVMIntNE, e,
					                  LLVMConstInt(L->i8, 0, 0), "");
				f->v[r + j] = e;
			}
		}
	}
	return true;
}

/* The fallback paths: one element at a time in a loop over the registers, small code for
 * accesses whose alignment only the run time knows. Registers cannot be indexed, so both go
 * through a local copy: a load fills it in the loop and reads it back after, a store fills it
 * before the loop and reads element e in it. (A store used to pick register e with a tree of
 * selects on e's bits: in a loop that keeps every register and half the tree live at once, and a
 * 128x128 f16 tile on one warpgroup then spilled.) */

typedef struct ElemLoop {
	LLVMBasicBlockRef body, done;
	LLVMValueRef e, bits[LOWER_MAX_BITS];
	LLVMValueRef ptr, off, mask;
} ElemLoop;

/* Opens the loop over e = 0 .. nregs - 1 and computes element e's address and mask. */
static void
loop_begin(Lower *L, GAccess *g, ElemLoop *x)
{
	LLVMBuilderRef b = L->b;
	const LowerLayout *l = g->l;
	LLVMValueRef zero = lower_i32(L, 0);
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	x->body = lower_block(L, "elem");
	x->done = lower_block(L, "elem.done");
	LLVMBuildBr(b, x->body);
	LLVMPositionBuilderAtEnd(b, x->body);
	x->e = LLVMBuildPhi(b, L->i32, "e");
	LLVMAddIncoming(x->e, &zero, &pre, 1);
	bool dis = lower_layout_disjoint(l);
	LLVMValueRef rc[LOWER_MAX_RANK];
	for (int d = 0; d < l->rank; d++)
		rc[d] = zero;
	for (int i = 0; i < l->nbits[LOWER_REG]; i++) {
		x->bits[i] = LLVMBuildAnd(b, LLVMBuildLShr(b, x->e, lower_i32(L, i), ""),
		                          lower_i32(L, 1), "");
		for (int d = 0; d < l->rank; d++) {
			int32_t s = l->basis[LOWER_REG][i][d];
			if (!s)
				continue;
			LLVMValueRef t = LLVMBuildMul(b, x->bits[i], lower_i32(L, s), "");
			rc[d] = dis ? LLVMBuildAdd(b, rc[d], t, "") : LLVMBuildXor(b, rc[d], t, "");
		}
	}
	for (int d = 0; d < l->rank; d++)
		rc[d] = LLVMBuildZExt(b, rc[d], L->i64, "");
	x->off = element_at(L, g, rc, &x->mask);
	x->ptr = LLVMBuildGEP2(b, L->i8, g->t->base, &x->off, 1, "");
}

static void
loop_end(Lower *L, GAccess *g, ElemLoop *x)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef en = LLVMBuildAdd(b, x->e, lower_i32(L, 1), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMAddIncoming(x->e, &en, &latch, 1);
	LLVMValueRef more =
	    LLVMBuildICmp(b, LLVMIntULT, en, lower_i32(L, lower_layout_nregs(g->l)), "");
	LLVMBuildCondBr(b, more, x->body, x->done);
	LLVMPositionBuilderAtEnd(b, x->done);
}

static bool
access_loop(Lower *L, GAccess *g, LowerFrag *f)
{
	LLVMBuilderRef b = L->b;
	int n = lower_layout_nregs(g->l), es = lower_elem_bytes(g->elem);
	LLVMTypeRef mt = lower_mem_type(L, g->elem), at = LLVMArrayType(mt, (unsigned)n);
	bool i1 = g->elem == L->c->t_i1;
	LLVMValueRef zero = lower_i32(L, 0), arr = NULL;
	LLVMBasicBlockRef here = LLVMGetInsertBlock(b), entry = LLVMGetEntryBasicBlock(L->fn);
	LLVMValueRef first = LLVMGetFirstInstruction(entry);
	if (first)
		LLVMPositionBuilderBefore(b, first);
	else
		LLVMPositionBuilderAtEnd(b, entry);
	arr = LLVMBuildAlloca(b, at, "regs");
	LLVMPositionBuilderAtEnd(b, here);
	for (int r = 0; g->store && r < n; r++) {
		LLVMValueRef ix[2] = {zero, lower_i32(L, r)};
		LLVMValueRef v = i1 ? LLVMBuildZExt(b, f->v[r], L->i8, "") : f->v[r];
		LLVMBuildStore(b, v, LLVMBuildGEP2(b, at, arr, ix, 2, ""));
	}
	ElemLoop x;
	loop_begin(L, g, &x);
	if (g->store) {
		LLVMValueRef idx[2] = {zero, x.e};
		LLVMValueRef v = LLVMBuildLoad2(b, mt, LLVMBuildGEP2(b, at, arr, idx, 2, ""), "");
		if (!store_or_reduce(L, g, x.ptr, x.off, v, es, x.mask))
			return false;
	} else {
		LLVMValueRef o = i1 ? LLVMBuildZExt(b, g->other, L->i8, "") : g->other;
		LLVMValueRef v = L->t->load_global(L, g->t, x.ptr, x.off, mt, es, x.mask, o);
		if (!v)
			return false;
		LLVMValueRef idx[2] = {zero, x.e};
		LLVMBuildStore(b, v, LLVMBuildGEP2(b, at, arr, idx, 2, ""));
	}
	loop_end(L, g, &x);
	if (!g->store)
		for (int r = 0; r < n; r++) {
			LLVMValueRef ix[2] = {zero, lower_i32(L, r)};
			LLVMValueRef v =
			    LLVMBuildLoad2(b, mt, LLVMBuildGEP2(b, at, arr, ix, 2, ""), "");
			f->v[r] =
			    i1 ? LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "") : v;
		}
	return true;
}

/* Vector width along the stride-1 dimension and the condition that allows it: NULL when it
 * holds statically, else an i1 to test at run time. Returns 0 bits when it cannot hold. */
static int
plan_vector(Lower *L, GAccess *g, const IrItem *it, LLVMValueRef *cond)
{
	LLVMBuilderRef b = L->b;
	*cond = NULL;
	if (g->fast < 0 || g->reduce)
		return 0;
	int es = lower_elem_bytes(g->elem);
	int v = lower_layout_vec_bits(g->l, g->fast);
	while (v > 0 && (1 << v) * es > 16)
		v--;
	if (v == 0)
		return 0;
	int vec = 1 << v, vb = vec * es;
	LowerTensor *t = g->t;
	/* Static strides of the other dimensions must keep vectors aligned. */
	for (int d = 0; d < t->rank; d++)
		if (d != g->fast && t->cstride[d] != IR_DYN && (t->cstride[d] * es) % vb)
			return 0;
	LLVMValueRef c = t->aligned;
	/* The origin along the fast dimension. */
	if (lower_expr_div(g->op, it->coord[g->fast].e) % vec) {
		LLVMValueRef r = LLVMBuildAnd(b, g->org[g->fast], lower_i64(L, vec - 1), "");
		c = LLVMBuildAnd(b, c, LLVMBuildICmp(b, LLVMIntEQ, r, lower_i64(L, 0), ""), "");
	}
	/* Vectors must not straddle the end of the fast dimension. */
	if (t->cdim[g->fast] == IR_DYN) {
		LLVMValueRef r = LLVMBuildAnd(b, t->dim[g->fast], lower_i64(L, vec - 1), "");
		c = LLVMBuildAnd(b, c, LLVMBuildICmp(b, LLVMIntEQ, r, lower_i64(L, 0), ""), "");
	} else if (t->cdim[g->fast] % vec) {
		return 0;
	}
	*cond = c;
	return v;
}

static bool
global_access(Lower *L, GAccess *g, const IrItem *it, LowerFrag *f)
{
	LLVMBuilderRef b = L->b;
	LowerTensor *t = g->t;
	for (int d = 0; d < t->rank; d++)
		g->org[d] = lower_expr(L, g->op, it->coord[d].e);
	g->fast = -1;
	for (int d = t->rank - 1; d >= 0 && g->fast < 0; d--)
		if (t->cstride[d] == 1)
			g->fast = d;
	LLVMValueRef cond;
	int v = plan_vector(L, g, it, &cond);
	access_setup(L, g);
	/* Element by element: unrolled for a few registers, else a loop (small code). */
	bool unroll = lower_layout_nregs(g->l) <= UNROLL_REGS;
	if (v == 0 || (cond && LLVMIsConstant(cond) && !LLVMConstIntGetZExtValue(cond)))
		return unroll ? access_path(L, g, 0, f) : access_loop(L, g, f);
	if (!cond || (LLVMIsConstant(cond) && LLVMConstIntGetZExtValue(cond)))
		return access_path(L, g, v, f);
	/* Both paths, chosen once at run time; loads merge their registers. */
	LLVMBasicBlockRef vb = lower_block(L, "vec"), sb = lower_block(L, "scalar"),
	                  mb = lower_block(L, "merge");
	LLVMBuildCondBr(b, cond, vb, sb);
	int n = lower_layout_nregs(g->l);
	LowerFrag fv = *f, fs = *f;
	if (!g->store) {
		fv = lower_frag_new(L, g->l);
		fs = lower_frag_new(L, g->l);
	}
	LLVMPositionBuilderAtEnd(b, vb);
	if (!access_path(L, g, v, &fv))
		return false;
	LLVMBasicBlockRef vend = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, mb);
	LLVMPositionBuilderAtEnd(b, sb);
	if (!(unroll ? access_path(L, g, 0, &fs) : access_loop(L, g, &fs)))
		return false;
	LLVMBasicBlockRef send = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, mb);
	LLVMPositionBuilderAtEnd(b, mb);
	if (!g->store)
		for (int r = 0; r < n; r++) {
			LLVMValueRef ph = LLVMBuildPhi(b, LLVMTypeOf(fv.v[r]), "");
			LLVMValueRef in[2] = {fv.v[r], fs.v[r]};
			LLVMBasicBlockRef from[2] = {vend, send};
			LLVMAddIncoming(ph, in, from, 2);
			f->v[r] = ph;
		}
	return true;
}

static LLVMValueRef
other_value(Lower *L, IrOp *op, IrType *elem)
{
	IrGroup *g = ir_op_group(op, L->c->kw.other);
	LLVMTypeRef ty = lower_type(L, elem);
	double f = 0;
	int64_t i = 0;
	if (g && g->item[0].kind == IR_IT_FLOAT)
		f = g->item[0].f;
	else if (g && g->item[0].kind == IR_IT_EXPR && ir_expr_eval_const(g->item[0].e, &i))
		f = (double)i;
	if (ir_type_is_float(elem)) {
		if (elem->fk == IR_F8E4M3 || elem->fk == IR_F8E5M2)
			return lower_convert(L, op, LLVMConstReal(L->f32, f), L->c->t_f32, elem);
		return LLVMConstReal(ty, f);
	}
	return LLVMConstInt(
	    ty, (unsigned long long)(g && g->item[0].kind == IR_IT_FLOAT ? (int64_t)f : i), 1);
}

/* A tile load of tensor t (a kernel argument's, the rank's copy of a symmetric buffer, or a
 * peer's) at the coordinates of op's item 0. */
static bool
load_tile(Lower *L, IrOp *op, LowerTensor *t)
{
	IrType *rt = op->res[0].type;
	GAccess g = {0};
	g.op = op;
	g.t = t;
	if (!g.t)
		return false;
	g.elem = rt->elem;
	g.l = L->lay[op->res[0].id];
	g.other = other_value(L, op, rt->elem);
	if (!g.other)
		return false;
	LowerFrag f = lower_frag_new(L, g.l);
	if (!global_access(L, &g, &op->item[0], &f))
		return false;
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	x->f = f;
	return true;
}

/* A tile store (reduce NULL) or reduction of op's item 0 into tensor t at `into`. */
static bool
store_tile(Lower *L, IrOp *op, LowerTensor *t, const IrItem *into, IrStr reduce)
{
	IrValue *v = ir_item_value(op, &op->item[0]);
	GAccess g = {0};
	g.op = op;
	g.t = t;
	if (!g.t)
		return false;
	g.elem = v->type->elem;
	g.store = true;
	g.reduce = reduce;
	LowerFrag f = lower_val(L, v)->f;
	g.l = f.layout;
	return global_access(L, &g, into, &f);
}

bool
lower_op_load(Lower *L, IrOp *op)
{
	return load_tile(L, op, tensor_item(L, op, &op->item[0]));
}

bool
lower_op_store(Lower *L, IrOp *op)
{
	IrItem *into = &ir_op_group(op, L->c->kw.into)->item[0];
	return store_tile(L, op, tensor_item(L, op, into), into, NULL);
}

/* A put or get (SPEC 5.9): a plain store or load of rank p's copy of the symmetric buffer,
 * whose base the kernel reads from the buffer's peer table. A put's `reduce` is an atomic
 * read-modify-write per element at system scope, where the target has one for the type. */
bool
lower_op_put(Lower *L, IrOp *op)
{
	IrType *elem = ir_item_value(op, &op->item[0])->type->elem;
	IrItem *into = &ir_op_group(op, L->c->kw.into)->item[0];
	IrGroup *red = ir_op_group(op, L->c->kw.reduce);
	IrStr mode = red ? red->item[0].s : NULL;
	if (mode && (!L->t->comm_reduce_ok || !L->t->comm_reduce_ok(L, elem, mode)))
		return lower_unsupported(L, op, "with reduce(%s) on '%s'", mode,
		                         ir_type_str(L->c, elem));
	LowerTensor *t =
	    lower_peer_tensor(L, op, into->s, ir_op_group(op, L->c->kw.peer)->item[0].e);
	return store_tile(L, op, t, into, mode);
}

bool
lower_op_get(Lower *L, IrOp *op)
{
	return load_tile(
	    L, op, lower_peer_tensor(L, op, op->item[0].s, ir_op_group(op, L->c->kw.peer)->item[0].e));
}

/* ---- shared memory ---- */

bool
lower_op_smem_alloc(Lower *L, IrOp *op)
{
	IrType *t = op->res[0].type;
	IrType *tile = t->kind == IR_TY_RING ? t->elem : t;
	LowerSmemLayout *y = ir_arena_alloc(&L->arena, sizeof *y);
	if (!lower_smem_layout(L->c, tile, y))
		return lower_error(L, op->loc, "cannot lay out shared-memory tile '%s'",
		                   ir_type_str(L->c, tile));
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = t->kind == IR_TY_RING ? LOWER_V_RING : LOWER_V_SMEM;
	x->s.base = lower_buffer_base(L, op);
	x->s.layout = y;
	x->s.rank = tile->rank;
	for (int d = 0; d < tile->rank; d++) {
		x->s.shape[d] = tile->dims[d];
		x->s.org_div[d] = 1;
	}
	x->n = t->kind == IR_TY_RING ? t->n : 1;
	x->stride = (y->bytes + y->align - 1) / y->align * y->align;
	return true;
}

bool
lower_op_slice(Lower *L, IrOp *op)
{
	LowerSmem s;
	if (!lower_smem_item(L, op, &op->item[0], &s))
		return false;
	IrGroup *g[2] = {ir_op_group(op, L->c->kw.rows), ir_op_group(op, L->c->kw.cols)};
	for (int d = 0; d < 2; d++) {
		if (!g[d])
			continue;
		int64_t n = 0, dv = lower_expr_div(op, g[d]->item[0].e);
		ir_expr_eval_const(g[d]->item[1].e, &n);
		LLVMValueRef o =
		    LLVMBuildTrunc(L->b, lower_expr(L, op, g[d]->item[0].e), L->i32, "");
		if (s.org[d]) {
			int64_t a = s.org_div[d], bb = dv;
			while (bb) {
				int64_t tt = a % bb;
				a = bb;
				bb = tt;
			}
			s.org_div[d] = a;
			s.org[d] = LLVMBuildAdd(L->b, s.org[d], o, "");
		} else {
			s.org[d] = o;
			s.org_div[d] = dv;
		}
		s.shape[d] = n;
	}
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SMEM;
	x->s = s;
	return true;
}

bool
lower_op_smem_load(Lower *L, IrOp *op)
{
	LowerSmem s;
	if (!lower_smem_item(L, op, &op->item[0], &s))
		return false;
	LowerFrag f = lower_frag_new(L, L->lay[op->res[0].id]);
	if (!lower_frag_from_smem(L, op, &s, op->res[0].type->elem, &f))
		return false;
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	x->f = f;
	L->last_barrier = NULL;
	return true;
}

/* The allocation a shared-memory item names: through ave.slice views to the ave.smem.alloc. */
static IrValue *
smem_root(IrOp *op, const IrItem *it)
{
	IrValue *v = ir_item_value(op, it);
	while (v && v->kind == IR_VAL_RESULT && v->op->code == IR_OP_SLICE)
		v = ir_item_value(v->op, &v->op->item[0]);
	return v;
}

typedef struct AsyncRead {
	Lower *L;
	IrValue *buf;
	bool found;
} AsyncRead;

static bool
async_read_walk(IrOp *op, void *ud)
{
	AsyncRead *a = ud;
	if (op->code != IR_OP_MMA || !a->L->has_plan[op->id] || !a->L->plans[op->id]->async_proxy)
		return true;
	for (int i = 0; i < 2 && !a->found; i++)
		a->found = op->item[i].kind == IR_IT_VALUE && smem_root(op, &op->item[i]) == a->buf;
	return !a->found;
}

/* A synchronous ave.mma the target runs through the async proxy (wgmma) reads buffer buf: SPEC
 * 5.6 asks for no fence there (only before an asynchronous product), so the writes are made
 * visible to that proxy here. */
static bool
read_by_async_proxy(Lower *L, IrValue *buf)
{
	AsyncRead a = {L, buf, false};
	if (buf)
		ir_walk_op(L->kernel, async_read_walk, &a);
	return a.found;
}

bool
lower_op_smem_store(Lower *L, IrOp *op)
{
	LowerSmem s;
	IrValue *v = ir_item_value(op, &op->item[0]);
	const IrItem *into = &ir_op_group(op, L->c->kw.into)->item[0];
	if (!lower_smem_item(L, op, into, &s))
		return false;
	/* Readers of the old contents finish first; the new contents are complete after. */
	if (!lower_group_barrier(L, op) ||
	    !lower_frag_to_smem(L, op, &lower_val(L, v)->f, v->type->elem, &s))
		return false;
	if (read_by_async_proxy(L, smem_root(op, into)) &&
	    !L->t->fence(L, op, LOWER_FENCE_ASYNC_SHARED))
		return false;
	L->last_barrier = NULL;
	return lower_group_barrier(L, op);
}

bool
lower_copy_chunks(Lower *L, const LowerCopy *cp, int ce, LLVMValueRef first, int64_t step,
		  LowerChunkFn fn, void *arg)
{
	LLVMBuilderRef b = L->b;
	const LowerSmem *d = &cp->dst;
	const LowerSmemLayout *y = d->layout;
	LowerTensor *t = cp->src;
	int es = lower_elem_bytes(t->type->elem), rank = d->rank, f = y->order[0];
	int64_t per_row = d->shape[f] / ce, numel = 1;
	for (int i = 0; i < rank; i++)
		numel *= d->shape[i];
	int64_t nchunks = numel / ce, iters = (nchunks + step - 1) / step;
	bool loop = iters > 8;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), body = NULL, done = NULL;
	LLVMValueRef itv = NULL;
	if (loop) {
		body = lower_block(L, "chunks");
		done = lower_block(L, "chunks.done");
		LLVMBuildBr(b, body);
		LLVMPositionBuilderAtEnd(b, body);
		itv = LLVMBuildPhi(b, L->i32, "it");
		LLVMValueRef z = lower_i32(L, 0);
		LLVMAddIncoming(itv, &z, &pre, 1);
	}
	for (int64_t it = 0; it < (loop ? 1 : iters); it++) {
		LLVMValueRef c = LLVMBuildAdd(b, first,
		                              loop ? LLVMBuildMul(b, itv, lower_i32(L, (int)step), "")
		                                   : lower_i32(L, (int)(it * step)),
		                              "chunk");
		LLVMBasicBlockRef merge = NULL;
		if (loop || (it + 1) * step > nchunks)
			merge = lower_if_begin(
			    L, LLVMBuildICmp(b, LLVMIntULT, c, lower_i32(L, (int)nchunks), ""),
			    "chunk");
		LLVMValueRef co[LOWER_MAX_RANK];
		co[f] = LLVMBuildMul(b, LLVMBuildURem(b, c, lower_i32(L, (int)per_row), ""),
		                     lower_i32(L, ce), "");
		LLVMValueRef row = LLVMBuildUDiv(b, c, lower_i32(L, (int)per_row), "");
		for (int i = 1; i < rank; i++) {
			int dd = y->order[i];
			co[dd] = LLVMBuildURem(b, row, lower_i32(L, (int)d->shape[dd]), "");
			row = LLVMBuildUDiv(b, row, lower_i32(L, (int)d->shape[dd]), "");
		}
		LLVMValueRef off = lower_i64(L, 0), inb = LLVMConstInt(L->i1, 1, 0);
		for (int i = 0; i < rank; i++) {
			LLVMValueRef x =
			    LLVMBuildAdd(b, cp->coord[i], LLVMBuildZExt(b, co[i], L->i64, ""), "");
			inb = LLVMBuildAnd(b, inb, LLVMBuildICmp(b, LLVMIntULT, x, t->dim[i], ""),
			                   "");
			off = LLVMBuildAdd(b, off, LLVMBuildMul(b, x, t->stride[i], ""), "");
		}
		off = LLVMBuildMul(b, off, lower_i64(L, es), "");
		if (!fn(L, cp, arg, co, off, inb))
			return false;
		if (merge)
			lower_if_end(L, merge);
	}
	if (loop) {
		LLVMValueRef next = LLVMBuildAdd(b, itv, lower_i32(L, 1), "");
		LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
		LLVMAddIncoming(itv, &next, &latch, 1);
		LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, next, lower_i32(L, (int)iters), ""),
		                body, done);
		LLVMPositionBuilderAtEnd(b, done);
	}
	return true;
}

LLVMValueRef
lower_copy_vec_cond(Lower *L, const LowerCopy *cp, int ce)
{
	LLVMBuilderRef b = L->b;
	LowerTensor *t = cp->src;
	int f = cp->dst.layout->order[0];
	LLVMValueRef ok = t->aligned;
	LLVMValueRef o = LLVMBuildAnd(b, cp->coord[f], lower_i64(L, ce - 1), "");
	ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, o, lower_i64(L, 0), ""), "");
	LLVMValueRef dm = LLVMBuildAnd(b, t->dim[f], lower_i64(L, ce - 1), "");
	return LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, dm, lower_i64(L, 0), ""), "");
}

bool
lower_op_copy_async(Lower *L, IrOp *op)
{
	LowerCopy cp = {0};
	cp.op = op;
	cp.src = tensor_item(L, op, &op->item[0]);
	if (!cp.src || !lower_smem_item(L, op, &ir_op_group(op, L->c->kw.into)->item[0], &cp.dst))
		return false;
	for (int d = 0; d < cp.src->rank; d++)
		cp.coord[d] = lower_expr(L, op, op->item[0].coord[d].e);
	cp.bar = lower_mbar_item(L, op, &ir_op_group(op, L->c->kw.arrive)->item[0]);
	cp.bytes = lower_elem_bytes(cp.src->type->elem);
	for (int d = 0; d < cp.dst.rank; d++) {
		cp.shape[d] = cp.dst.shape[d];
		cp.bytes *= cp.dst.shape[d];
	}
	if (!L->t->copy_async)
		return lower_unsupported(L, op, "%s", "");
	L->last_barrier = NULL;
	return L->t->copy_async(L, &cp);
}
