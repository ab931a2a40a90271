/* lower_sync.c — synchronization and warp roles (SPEC §5.6, §5.7): transaction barriers in shared
 * memory, group barriers and fences, and ave.warp_specialize as one kernel with a branch per role
 * on the warp index. Arrivals, expect_tx and copies run once per role replica (one elected
 * thread); waits run in every thread. */
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

/* ---- counting the copies that arrive on a barrier in one phase ---- */

static bool
expr_same(const IrOp *oa, const IrExpr *a, const IrOp *ob, const IrExpr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case IR_EX_CONST:
		return a->c == b->c;
	case IR_EX_VAL:
		return ir_op_value(oa, a->opnd) == ir_op_value(ob, b->opnd);
	default:
		return expr_same(oa, a->l, ob, b->l) && expr_same(oa, a->r, ob, b->r);
	}
}

static bool
same_barrier(const IrOp *oa, const IrItem *a, const IrOp *ob, const IrItem *b)
{
	if (ir_item_value(oa, a) != ir_item_value(ob, b) || a->suffix != b->suffix)
		return false;
	return !a->suffix || expr_same(oa, a->coord[0].e, ob, b->coord[0].e);
}

typedef struct CopyCount {
	IrCtx *c;
	IrValue *bar;
	IrVec tx, copies; /* IrOp* */
	int narrive;      /* plain ave.mbar.arrive ops on the barrier */
} CopyCount;

static bool
count_walk(IrOp *op, void *ud)
{
	CopyCount *k = ud;
	IrItem *it = NULL;
	if (op->code == IR_OP_MBAR_ARRIVE && ir_item_value(op, &op->item[0]) == k->bar)
		k->narrive++;
	if (op->code == IR_OP_MBAR_EXPECT_TX)
		it = &op->item[0];
	else if (op->code == IR_OP_COPY_ASYNC)
		it = &ir_op_group(op, k->c->kw.arrive)->item[0];
	if (it && ir_item_value(op, it) == k->bar)
		ir_vec_push(k->c->al, op->code == IR_OP_COPY_ASYNC ? &k->copies : &k->tx, &op,
		            sizeof op);
	return true;
}

static const IrItem *
bar_item(IrCtx *c, IrOp *op)
{
	return op->code == IR_OP_COPY_ASYNC ? &ir_op_group(op, c->kw.arrive)->item[0]
	                                    : &op->item[0];
}

/* Copies per phase on barrier v (of `count` arrivals per phase): every copy sits in the block of
 * an expect_tx on the same barrier entry, and every such expect_tx has the same number c of them.
 * A phase then receives c copies per expect_tx that arrives in it: `count` of them when the
 * barrier has no plain arrivals (the phase is all expect_tx), else one per expect_tx op and
 * replica of its role (each runs once per phase). -1 when unknown. */
static int64_t
copies_per_phase(Lower *L, IrValue *v, int64_t count)
{
	CopyCount k = {L->c, v, {0}, {0}, 0};
	ir_walk_op(L->kernel, count_walk, &k);
	int64_t per = k.copies.len ? -2 : 0, txs = 0;
	for (int i = 0; i < k.copies.len && per != -1; i++) {
		IrOp *cp = IR_VEC_AT(k.copies, IrOp *, i);
		bool owned = false;
		for (int j = 0; j < k.tx.len; j++) {
			IrOp *tx = IR_VEC_AT(k.tx, IrOp *, j);
			owned |= tx->parent == cp->parent &&
			         same_barrier(tx, bar_item(L->c, tx), cp, bar_item(L->c, cp));
		}
		if (!owned)
			per = -1;
	}
	for (int j = 0; j < k.tx.len && per != -1 && k.copies.len; j++) {
		IrOp *tx = IR_VEC_AT(k.tx, IrOp *, j);
		int64_t n = 0;
		for (int i = 0; i < k.copies.len; i++) {
			IrOp *cp = IR_VEC_AT(k.copies, IrOp *, i);
			n += tx->parent == cp->parent &&
			     same_barrier(tx, bar_item(L->c, tx), cp, bar_item(L->c, cp));
		}
		IrOp *role = ir_role_of(tx);
		txs += role ? ir_role_info(L->c, role).replicas : 1;
		per = per == -2 || per == n ? n : -1;
	}
	if (per >= 0 && k.copies.len) {
		int64_t e = k.narrive ? txs : count;
		per = e <= count ? per * e : -1;
	}
	ir_vec_free(L->c->al, &k.tx, sizeof(IrOp *));
	ir_vec_free(L->c->al, &k.copies, sizeof(IrOp *));
	return per == -2 ? -1 : per;
}

bool
lower_op_mbar_alloc(Lower *L, IrOp *op)
{
	if (L->scope.role)
		return lower_unsupported(
		    L, op, "inside a role (allocate barriers before ave.warp_specialize)");
	int64_t count = 1;
	ir_expr_eval_const(ir_op_group(op, L->c->kw.count)->item[0].e, &count);
	int64_t copies = copies_per_phase(L, &op->res[0], count);
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_MBAR;
	x->v = lower_buffer_base(L, op);
	x->n = op->res[0].type->n;
	LLVMBasicBlockRef merge = lower_elect_begin(L, op, false);
	for (int64_t i = 0; i < x->n; i++)
		if (!L->t->mbar_init(
		        L, op, LLVMBuildAdd(L->b, x->v, lower_i32(L, L->facts->mbar_bytes * i), ""),
		        count, copies))
			return false;
	if (L->t->mbar_init_done && !L->t->mbar_init_done(L, op))
		return false;
	lower_elect_end(L, merge);
	L->last_barrier = NULL;
	return lower_group_barrier(L, op);
}

bool
lower_op_mbar(Lower *L, IrOp *op)
{
	LLVMValueRef addr = lower_mbar_item(L, op, &op->item[0]);
	if (op->code == IR_OP_MBAR_WAIT) {
		IrGroup *g = ir_op_group(op, L->c->kw.parity);
		LLVMValueRef p = LLVMBuildTrunc(L->b, lower_expr(L, op, g->item[0].e), L->i1, "");
		L->last_barrier = NULL;
		return L->t->mbar_wait(L, op, addr, p);
	}
	LLVMBasicBlockRef merge = lower_elect_begin(L, op, true);
	bool ok;
	if (op->code == IR_OP_MBAR_EXPECT_TX) {
		IrGroup *g = ir_op_group(op, L->c->kw.bytes);
		ok = L->t->mbar_expect_tx(
		    L, op, addr, LLVMBuildTrunc(L->b, lower_expr(L, op, g->item[0].e), L->i32, ""));
	} else {
		int64_t n = 1;
		IrGroup *g = ir_op_group(op, L->c->kw.count);
		if (g)
			ir_expr_eval_const(g->item[0].e, &n);
		ok = L->t->mbar_arrive(L, op, addr, n);
	}
	lower_elect_end(L, merge);
	L->last_barrier = NULL;
	return ok;
}

bool
lower_op_barrier(Lower *L, IrOp *op)
{
	if (L->scope.role_nthreads == L->scope.nthreads)
		return lower_group_barrier(L, op);
	/* Every replica of the role: it orders each replica's threads too. */
	if (!L->t->barrier(L, op, L->scope.role_bar_id, L->scope.role_nthreads))
		return false;
	L->last_barrier = LLVMGetLastInstruction(LLVMGetInsertBlock(L->b));
	return true;
}

bool
lower_op_fence(Lower *L, IrOp *op)
{
	IrKeywords *k = &L->c->kw;
	LowerFence f = op->mode == k->async_shared  ? LOWER_FENCE_ASYNC_SHARED
	               : op->mode == k->acq_rel_gpu ? LOWER_FENCE_ACQ_REL_GPU
	                                            : LOWER_FENCE_ACQ_REL_SYS;
	L->last_barrier = NULL;
	return L->t->fence(L, op, f);
}

/* ---- roles ---- */

bool
lower_op_warp_specialize(Lower *L, IrOp *op)
{
	IrCtx *c = L->c;
	LLVMBuilderRef b = L->b;
	if (L->scope.role)
		return lower_unsupported(L, op, "nested in a role");
	int64_t total = ir_role_warps_total(c, op);
	if (total * L->t->info->warp != L->info.threads)
		return lower_error(L, op->loc,
		                   "roles use %lld warps x %d threads = %lld threads on target "
		                   "'%s', but the kernel has 'threads' = %d",
		                   (long long)total, L->t->info->warp, (long long)(total * L->t->info->warp),
		                   L->t->info->name, L->info.threads);
	LowerScope outer = L->scope;
	LLVMBasicBlockRef join = lower_block(L, "roles.end");
	int64_t start = 0;
	for (IrOp *r = op->reg[0].block->first; r; r = r->next) {
		IrRoleInfo ri = ir_role_info(c, r);
		int64_t w = ri.warps, rep = ri.replicas;
		int64_t n = w * rep;
		LLVMValueRef wv = outer.warp;
		LLVMValueRef lo = LLVMBuildICmp(b, LLVMIntUGE, wv, lower_i32(L, start), "");
		LLVMValueRef hi = LLVMBuildICmp(b, LLVMIntULT, wv, lower_i32(L, start + n), "");
		LLVMValueRef in = LLVMBuildAnd(b, lo, hi, "");
		char name[96];
		snprintf(name, sizeof name, "role.%s", r->item[0].s);
		LLVMBasicBlockRef rb = lower_block(L, name), next = lower_block(L, "roles.next");
		LLVMBuildCondBr(b, in, rb, next);
		LLVMPositionBuilderAtEnd(b, rb);
		/* The replica's geometry and indices. */
		LLVMValueRef rw = LLVMBuildSub(b, wv, lower_i32(L, start), "");
		LLVMValueRef rep_i = LLVMBuildUDiv(b, rw, lower_i32(L, w), "replica");
		LLVMValueRef wi =
		    LLVMBuildSub(b, rw, LLVMBuildMul(b, rep_i, lower_i32(L, w), ""), "");
		L->scope.tid = LLVMBuildAdd(b, LLVMBuildMul(b, wi, lower_i32(L, L->t->info->warp), ""),
		                            outer.lane, "rtid");
		L->scope.lane = outer.lane;
		L->scope.warp = L->t->uniform(L, wi);
		L->scope.replica = LLVMBuildZExt(b, rep_i, L->i64, "");
		L->scope.first_warp = (int)start;
		int id = L->next_bar_id;
		L->next_bar_id += (int)rep;
		L->scope.bar_id = LLVMBuildAdd(b, lower_i32(L, id), rep_i, "");
		/* ave.barrier waits for the whole role, every replica (SPEC 5.6): its own id. */
		bool wide = lower_role_wide_barrier(c, r);
		int last = id + (int)rep - 1;
		if (wide)
			last = L->next_bar_id++;
		lower_scope_enter(L, r, r->reg[0].block);
		L->scope.role_bar_id = wide ? lower_i32(L, last) : L->scope.bar_id;
		L->scope.role_nthreads = L->scope.nthreads * (wide ? (int)rep : 1);
		L->last_barrier = NULL;
		if (wide && last > 15)
			return lower_error(
			    L, r->loc,
			    "role '@%s' needs a barrier for its %lld replicas together (its "
			    "ave.barrier) and one for each, but target '%s' has 15 named barriers",
			    r->item[0].s, (long long)rep, L->t->info->name);
		if (id + rep - 1 > 15 && L->scope.generic_smem)
			return lower_error(
			    L, r->loc,
			    "role '@%s' needs barriers for %lld replicas, but target "
			    "'%s' has 15 named barriers",
			    r->item[0].s, (long long)rep, L->t->info->name);
		IrGroup *g = ir_op_group(r, c->kw.regs);
		if (g) {
			int64_t regs = 0;
			ir_expr_eval_const(g->item[0].e, &regs);
			if (L->t->role_enter && !L->t->role_enter(L, r, regs))
				return false;
		}
		if (!lower_ops(L, r->reg[0].block))
			return false;
		LLVMBuildBr(b, join);
		LLVMPositionBuilderAtEnd(b, next);
		L->scope = outer;
		start += n;
	}
	LLVMBuildBr(b, join);
	LLVMMoveBasicBlockAfter(join, LLVMGetInsertBlock(b));
	LLVMPositionBuilderAtEnd(b, join);
	L->scope = outer;
	L->last_barrier = NULL;
	return true;
}

bool
lower_op_replica_id(Lower *L, IrOp *op)
{
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = L->scope.replica ? L->scope.replica : lower_i64(L, 0);
	if (op->res[0].type->kind == IR_TY_INT && op->res[0].type->bits < 64)
		x->v = LLVMBuildTrunc(L->b, x->v, lower_type(L, op->res[0].type), "");
	return true;
}
