/* lower_mma.c — ave.mma, ave.mma.async, ave.mma.wait (SPEC §5.5). The target plans each product
 * (its accumulator layout, which operands it reads from registers, the shared-memory layout it
 * reads the others in); this file brings the operands there: registers by permutation, else a
 * round trip through a staging buffer in shared memory. Products the target has no instruction
 * for are computed with FMAs from shared memory, element by element. */
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

static IrType *
smem_tile(IrOp *op, int i)
{
	IrItem *it = &op->item[i];
	IrType *t = ir_item_value(op, it)->type;
	if (t->kind == IR_TY_RING)
		return t->elem;
	return t->kind == IR_TY_TILE && t->space == IR_SPACE_SMEM ? t : NULL;
}

void
lower_mma_request(Lower *L, IrOp *op, LowerMmaReq *r, LowerSmemLayout *sa, LowerSmemLayout *sb)
{
	IrType *d = op->res[0].type, *ta = smem_tile(op, 0), *tb = smem_tile(op, 1);
	IrType *at = ta ? ta : ir_item_value(op, &op->item[0])->type;
	memset(r, 0, sizeof *r);
	r->op = op;
	r->m = d->dims[0];
	r->n = d->dims[1];
	r->k = at->dims[1];
	r->ab = at->elem;
	r->acc = d->elem;
	r->trans_b = ir_op_group(op, L->c->kw.transpose_b) != NULL;
	r->async = op->code == IR_OP_MMA_ASYNC;
	if (ta && lower_smem_layout(L->c, ta, sa))
		r->a_smem = sa;
	if (tb && lower_smem_layout(L->c, tb, sb))
		r->b_smem = sb;
	lower_mma_group(L, ir_role_of(op), r);
}

void
lower_mma_group(Lower *L, IrOp *role, LowerMmaReq *r)
{
	r->first_warp = 0;
	if (role) {
		LowerScope s;
		lower_scope_shape(L, role, &s);
		r->nwarps = s.nwarps;
		r->warp_bits = s.warp_bits;
		r->first_warp = (int)ir_role_info(L->c, role).first_warp;
	} else {
		LowerScope s;
		lower_scope_shape(L, NULL, &s);
		r->nwarps = s.nwarps;
		r->warp_bits = s.warp_bits;
	}
}

/* The last wait that consumes an async product (scratch it reads must live until then). */
static IrOp *
last_wait(IrOp *op)
{
	IrOp *w = op;
	for (IrUse *u = op->res[0].uses; u; u = u->next)
		if (u->user->id > w->id)
			w = u->user;
	return w;
}

/* Writes a fragment into a fresh staging buffer of layout y. The caller ends the staging with
 * finish_staging (one fence and barrier for both operands). */
static bool
stage(Lower *L, IrOp *op, const LowerFrag *f, IrType *elem, const LowerSmemLayout *y,
      LowerOperand *out, bool *barred)
{
	memset(out, 0, sizeof *out);
	/* Readers of the bytes this op's staging buffers may share finish first (once per op). */
	if (!*barred && !lower_group_barrier(L, op))
		return false;
	*barred = true;
	LowerSmem *s = &out->s;
	s->layout = y;
	s->rank = y->rank;
	for (int d = 0; d < y->rank; d++) {
		s->shape[d] = y->shape[d];
		s->org_div[d] = 1;
	}
	s->base = lower_scratch(L, op, y->bytes, y->align);
	if (op->code == IR_OP_MMA_ASYNC)
		lower_scratch_extend(L, last_wait(op));
	if (!lower_frag_to_smem(L, op, f, elem, s))
		return false;
	out->staged = true;
	return true;
}

static bool
finish_staging(Lower *L, IrOp *op, bool async_proxy)
{
	if (async_proxy && !L->t->fence(L, op, LOWER_FENCE_ASYNC_SHARED))
		return false;
	L->last_barrier = NULL;
	return lower_group_barrier(L, op);
}

/* Whether value v is defined outside `loop` (the same in every iteration of it). */
static bool
invariant_in(const IrValue *v, const IrOp *loop)
{
	/* (The loop's own variable and iter args are defined by the loop itself.) */
	const IrOp *def = v->kind == IR_VAL_RESULT ? v->op : v->block ? ir_block_parent_op(v->block) : NULL;
	if (!def)
		return false;
	for (const IrOp *o = def; o; o = ir_op_parent_op(o))
		if (o == loop)
			return false;
	return true;
}

/* Stages register operand v (loop-invariant) once, at the end of the block that enters the
 * innermost loop, and every iteration reads that copy: without it each iteration rewrites the
 * same tile (attention's Q: 16 KiB of stores, a fence and a barrier per iteration and consumer
 * warpgroup). The scratch lives from the loop's start to its end. */
static bool
stage_hoisted(Lower *L, IrOp *op, IrValue *v, const LowerFrag *f, IrType *elem,
              const LowerSmemLayout *y, const LowerMmaPlan *p, LowerOperand *out)
{
	for (int i = 0; i < L->hoisted.len; i++) {
		LowerHoisted *h = &IR_VEC_AT(L->hoisted, LowerHoisted, i);
		if (h->v == v && h->y == y && h->elem == elem) {
			*out = h->out;
			return true;
		}
	}
	LLVMBasicBlockRef here = LLVMGetInsertBlock(L->b);
	LLVMValueRef saved_bar = L->last_barrier;
	LLVMPositionBuilderBefore(L->b, LLVMGetBasicBlockTerminator(L->loop_pre));
	L->last_barrier = NULL;
	bool barred = false;
	bool ok = stage(L, op, f, elem, y, out, &barred);
	if (ok) {
		lower_scratch_from(L, L->loop);
		lower_scratch_extend(L, L->loop);
		ok = finish_staging(L, op, p->async_proxy);
	}
	LLVMPositionBuilderAtEnd(L->b, here);
	L->last_barrier = saved_bar;
	if (!ok)
		return false;
	out->staged = false; /* fenced and behind a barrier already */
	LowerHoisted h = {v, y, elem, *out};
	ir_vec_push(L->c->al, &L->hoisted, &h, sizeof h);
	return true;
}

/* Brings operand i (0: A, 1: B) where the plan wants it. */
static bool
operand(Lower *L, IrOp *op, int i, const LowerMmaPlan *p, IrType *elem, LowerOperand *out,
        bool *barred)
{
	IrItem *it = &op->item[i];
	IrValue *v = ir_item_value(op, it);
	LowerVal *x = lower_val(L, v);
	bool reg_ok = i ? p->b_reg : p->a_reg;
	const LowerLayout *want = i ? &p->b : &p->a;
	const LowerSmemLayout *st = i ? &p->b_stage : &p->a_stage;
	memset(out, 0, sizeof *out);
	if (x->kind == LOWER_V_FRAG) {
		int n = lower_layout_nregs(want);
		if (reg_ok) {
			int *perm = ir_arena_alloc(&L->arena, sizeof(int) * (size_t)n);
			if (lower_layout_equal(x->f.layout, want) ||
			    lower_layout_regperm(x->f.layout, want, perm)) {
				LowerFrag f;
				lower_frag_convert(L, op, &x->f, lower_layout_dup(L, want), elem,
				                   &f);
				out->reg = true;
				out->f = f;
				return true;
			}
		}
		if (L->loop && L->loop_pre && invariant_in(v, L->loop))
			return stage_hoisted(L, op, v, &x->f, elem, st, p, out);
		return stage(L, op, &x->f, elem, st, out, barred);
	}
	LowerSmem s;
	if (!lower_smem_item(L, op, it, &s))
		return false;
	if (!(i ? p->b_restage : p->a_restage)) {
		out->s = s;
		return true;
	}
	/* Another layout than the instruction reads: through registers into the stage layout. */
	LowerLayout bl;
	if (!lower_layout_blocked(&bl, s.rank, s.shape, lower_elem_bytes(elem), L->scope.lane_bits,
	                          L->scope.warp_bits))
		return lower_unsupported(L, op, "with operand tile '%s'",
		                         ir_type_str(L->c, v->type));
	LowerFrag f = lower_frag_new(L, lower_layout_dup(L, &bl));
	if (!lower_group_barrier(L, op) || !lower_frag_from_smem(L, op, &s, elem, &f))
		return false;
	L->last_barrier = NULL;
	*barred = false;
	return stage(L, op, &f, elem, st, out, barred);
}

/* D = A.B + C with FMAs: the operands in shared memory, each thread walking k for its elements. */
static bool
fma_product(Lower *L, IrOp *op, const LowerMmaReq *r, LowerFrag *acc)
{
	LLVMBuilderRef b = L->b;
	LowerSmem s[2];
	for (int i = 0; i < 2; i++) {
		IrValue *v = ir_item_value(op, &op->item[i]);
		LowerVal *x = lower_val(L, v);
		if (x->kind == LOWER_V_FRAG) {
			s[i] = lower_scratch_view(L, op, 2, v->type->dims, r->ab);
			if (!lower_group_barrier(L, op) ||
			    !lower_frag_to_smem(L, op, &x->f, r->ab, &s[i]))
				return false;
			L->last_barrier = NULL;
		} else if (!lower_smem_item(L, op, &op->item[i], &s[i])) {
			return false;
		}
	}
	if (!lower_group_barrier(L, op))
		return false;
	const LowerLayout *l = acc->layout;
	int n = lower_layout_nregs(l);
	LLVMValueRef(*coord)[2] = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef[2]) * (size_t)n);
	LLVMValueRef tc[LOWER_MAX_RANK];
	lower_frag_thread(L, l, tc);
	for (int q = 0; q < n; q++)
		lower_frag_coord_at(L, l, tc, q, coord[q]);
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), head = lower_block(L, "fma.k"),
	                  done = lower_block(L, "fma.done");
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef k = LLVMBuildPhi(b, L->i32, "k");
	LLVMValueRef zero = lower_i32(L, 0);
	LLVMAddIncoming(k, &zero, &pre, 1);
	LLVMValueRef *ph = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)n);
	LLVMTypeRef at = lower_type(L, r->acc), mt = lower_mem_type(L, r->ab);
	for (int q = 0; q < n; q++) {
		ph[q] = LLVMBuildPhi(b, at, "");
		LLVMAddIncoming(ph[q], &acc->v[q], &pre, 1);
	}
	LLVMValueRef *nx = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)n);
	for (int q = 0; q < n; q++) {
		LLVMValueRef ac[2] = {coord[q][0], k};
		LLVMValueRef bc[2] = {k, coord[q][1]};
		if (r->trans_b) {
			bc[0] = coord[q][1];
			bc[1] = k;
		}
		LLVMValueRef av =
		    LLVMBuildLoad2(b, mt, lower_smem_ptr(L, lower_smem_elem(L, &s[0], ac)), "");
		LLVMValueRef bv =
		    LLVMBuildLoad2(b, mt, lower_smem_ptr(L, lower_smem_elem(L, &s[1], bc)), "");
		av = lower_convert(L, op, av, r->ab, r->acc);
		bv = lower_convert(L, op, bv, r->ab, r->acc);
		if (!av || !bv)
			return false;
		LLVMValueRef args[3] = {av, bv, ph[q]};
		nx[q] = lower_call(L, at == L->f64 ? "llvm.fma.f64" : "llvm.fma.f32", at, args, 3);
	}
	LLVMValueRef kn = LLVMBuildAdd(b, k, lower_i32(L, 1), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMAddIncoming(k, &kn, &latch, 1);
	for (int q = 0; q < n; q++)
		LLVMAddIncoming(ph[q], &nx[q], &latch, 1);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, kn, lower_i32(L, (int)r->k), ""), head,
	                done);
	LLVMPositionBuilderAtEnd(b, done);
	for (int q = 0; q < n; q++)
		acc->v[q] = nx[q];
	L->last_barrier = NULL;
	return lower_group_barrier(L, op);
}

bool
lower_op_mma(Lower *L, IrOp *op)
{
	LowerSmemLayout sa, sb;
	LowerMmaReq r;
	lower_mma_request(L, op, &r, &sa, &sb);
	IrValue *accv = ir_item_value(op, &op->item[2]);
	const LowerLayout *rl = L->lay[op->res[0].id];
	const LowerMmaPlan *p = L->plans[op->id];
	bool planned = L->has_plan[op->id];
	if (r.ab->kind == IR_TY_FLOAT && r.ab->fk == IR_F64)
		return lower_unsupported(L, op, "on '%s' operands", ir_type_str(L->c, r.ab));
	LowerFrag acc;
	if (!lower_frag_convert(L, op, &lower_val(L, accv)->f,
	                        planned ? lower_layout_dup(L, &p->acc) : rl, r.acc, &acc))
		return false;
	LowerFrag work = lower_frag_new(L, acc.layout);
	memcpy(work.v, acc.v, sizeof(LLVMValueRef) * (size_t)lower_layout_nregs(acc.layout));
	if (!planned) {
		if (!fma_product(L, op, &r, &work))
			return false;
	} else {
		LowerOperand a, b;
		bool barred = false;
		if (!operand(L, op, 0, p, r.ab, &a, &barred) ||
		    !operand(L, op, 1, p, r.ab, &b, &barred))
			return false;
		if ((a.staged || b.staged) && !finish_staging(L, op, p->async_proxy))
			return false;
		if (!L->t->mma_emit(L, &r, p, &a, &b, &work))
			return false;
		L->last_barrier = NULL;
	}
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	if (op->code == IR_OP_MMA_ASYNC) {
		x->f = work; /* pending: converted after the wait */
		return true;
	}
	return lower_frag_convert(L, op, &work, rl, r.acc, &x->f);
}

bool
lower_op_mma_wait(Lower *L, IrOp *op)
{
	IrValue *t = ir_item_value(op, &op->item[0]);
	LowerFrag f = lower_val(L, t)->f;
	LowerFrag w = lower_frag_new(L, f.layout);
	memcpy(w.v, f.v, sizeof(LLVMValueRef) * (size_t)lower_layout_nregs(f.layout));
	int64_t n = 0;
	ir_expr_eval_const(ir_op_group(op, L->c->kw.pending)->item[0].e, &n);
	if (L->t->mma_wait && !L->t->mma_wait(L, op, &w, n))
		return false;
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_FRAG;
	return lower_frag_convert(L, op, &w, L->lay[op->res[0].id], op->res[0].type->elem, &x->f);
}
