/* lower_assign.c — layout assignment: every register tile of a kernel gets a distributed layout.
 *
 *   values that must (or had better) share a layout form classes: loop-carried values, if
 *   results, the operands and result of an elementwise op, an MMA's accumulator and result;
 *   a class holding an MMA result takes the target's accumulator layout; reductions, broadcasts
 *   and transposes derive layouts from their neighbours; the rest is blocked.
 *
 * The choice only affects speed: where two layouts meet, the lowering converts (by register
 * permutation where it can, else through shared memory). */
#include <string.h>

#include "lower.h"

typedef struct Assign {
	Lower *L;
	int *parent;
	const LowerLayout **cls; /* by root */
	IrValue **val;           /* by id: register tiles, else NULL */
	IrOp **role;             /* by id */
	int *esize;              /* by root */
	bool *chain_a;           /* by root: a member is an A operand of an MMA */
} Assign;

static int
find(Assign *a, int x)
{
	while (a->parent[x] != x) {
		a->parent[x] = a->parent[a->parent[x]];
		x = a->parent[x];
	}
	return x;
}

static void
unite(Assign *a, IrValue *x, IrValue *y)
{
	if (!x || !y || !a->val[x->id] || !a->val[y->id] || a->role[x->id] != a->role[y->id])
		return;
	if (x->type->rank != y->type->rank ||
	    memcmp(x->type->dims, y->type->dims, sizeof(int64_t) * (size_t)x->type->rank))
		return;
	int rx = find(a, (int)x->id), ry = find(a, (int)y->id);
	if (rx != ry)
		a->parent[rx] = ry;
}

static IrOp *
scope_role(IrOp *op)
{
	return op->code == IR_OP_ROLE ? op : ir_role_of(op);
}

static void
note_value(Assign *a, IrValue *v, IrOp *scope_op)
{
	if (!ir_type_is_reg_tile(v->type))
		return;
	a->val[v->id] = v;
	a->role[v->id] = scope_role(scope_op);
}

static bool
collect(IrOp *op, void *ud)
{
	Assign *a = ud;
	for (int i = 0; i < op->nres; i++)
		note_value(a, &op->res[i], op);
	for (int r = 0; r < op->nreg; r++)
		for (int i = 0; i < op->reg[r].block->narg; i++)
			note_value(a, op->reg[r].block->arg[i], op);
	return true;
}

static IrValue *
item_val(IrOp *op, int i)
{
	return i < op->nitem && op->item[i].kind == IR_IT_VALUE && !op->item[i].suffix
	           ? ir_item_value(op, &op->item[i])
	           : NULL;
}

static bool
unify(IrOp *op, void *ud)
{
	Assign *a = ud;
	IrCtx *c = a->L->c;
	if (ir_op_has_trait(c, op, IR_TRAIT_ELEMWISE) || op->code == IR_OP_TAG) {
		for (int i = 0; i < op->nitem; i++)
			unite(a, item_val(op, i), &op->res[0]);
	} else if (op->code == IR_OP_FOR) {
		IrBlock *b = op->reg[0].block;
		IrOp *y = b->last;
		for (int i = 0; i < op->nres; i++) {
			unite(a, item_val(op, 3 + i), b->arg[i + 1]);
			if (y && y->code == IR_OP_YIELD)
				unite(a, item_val(y, i), b->arg[i + 1]);
			unite(a, &op->res[i], b->arg[i + 1]);
		}
	} else if (op->code == IR_OP_IF) {
		for (int r = 0; r < op->nreg; r++) {
			IrOp *y = op->reg[r].block->last;
			for (int i = 0; y && y->code == IR_OP_YIELD && i < op->nres; i++)
				unite(a, item_val(y, i), &op->res[i]);
		}
	} else if (op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC) {
		unite(a, item_val(op, 2), &op->res[0]);
	} else if (op->code == IR_OP_MMA_WAIT) {
		unite(a, item_val(op, 0), &op->res[0]);
	}
	return true;
}

static bool
mark_chain(IrOp *op, void *ud)
{
	Assign *a = ud;
	if (op->code != IR_OP_MMA && op->code != IR_OP_MMA_ASYNC)
		return true;
	IrValue *x = item_val(op, 0);
	if (x && a->val[x->id])
		a->chain_a[find(a, (int)x->id)] = true;
	return true;
}

static bool
plan(IrOp *op, void *ud)
{
	Assign *a = ud;
	Lower *L = a->L;
	if (op->code != IR_OP_MMA && op->code != IR_OP_MMA_ASYNC)
		return true;
	LowerSmemLayout sa, sb;
	LowerMmaReq r;
	lower_mma_request(L, op, &r, &sa, &sb);
	int root = find(a, (int)op->res[0].id);
	r.chain = a->chain_a[root];
	LowerMmaPlan *p = ir_arena_alloc(&L->arena, sizeof *p);
	L->plans[op->id] = p;
	if (L->t->mma_plan && L->t->mma_plan(L, &r, p)) {
		L->has_plan[op->id] = 1;
		if (!a->cls[root])
			a->cls[root] = &p->acc;
	}
	return true;
}

static const LowerLayout *
dup(Lower *L, const LowerLayout *l)
{
	LowerLayout *x = ir_arena_alloc(&L->arena, sizeof *x);
	*x = *l;
	return x;
}

const LowerLayout *
lower_layout_dup(Lower *L, const LowerLayout *l)
{
	return dup(L, l);
}

typedef struct Derive {
	Assign *a;
	bool changed;
} Derive;

static bool
derive(IrOp *op, void *ud)
{
	Derive *dv = ud;
	Assign *a = dv->a;
	Lower *L = a->L;
	if (op->code != IR_OP_REDUCE && op->code != IR_OP_BCAST && op->code != IR_OP_TRANS)
		return true;
	IrValue *x = item_val(op, 0), *y = &op->res[0];
	if (!x || !a->val[x->id] || !a->val[y->id])
		return true;
	int rx = find(a, (int)x->id), ry = find(a, (int)y->id);
	LowerLayout t;
	int64_t d = 0;
	IrGroup *g = ir_op_group(op, L->c->kw.dim);
	if (g)
		ir_expr_eval_const(g->item[0].e, &d);
	if (op->code == IR_OP_REDUCE && a->cls[rx] && !a->cls[ry]) {
		lower_layout_slice(a->cls[rx], (int)d, &t, NULL);
		a->cls[ry] = dup(L, &t);
		dv->changed = true;
	} else if (op->code == IR_OP_BCAST && a->cls[ry] && !a->cls[rx]) {
		lower_layout_slice(a->cls[ry], (int)d, &t, NULL);
		a->cls[rx] = dup(L, &t);
		dv->changed = true;
	} else if (op->code == IR_OP_TRANS && a->cls[rx] && !a->cls[ry]) {
		lower_layout_transpose(a->cls[rx], &t);
		a->cls[ry] = dup(L, &t);
		dv->changed = true;
	} else if (op->code == IR_OP_TRANS && a->cls[ry] && !a->cls[rx]) {
		lower_layout_transpose(a->cls[ry], &t);
		a->cls[rx] = dup(L, &t);
		dv->changed = true;
	}
	return true;
}

/* A register tile used by an op of another group than the one that defined it. */
static bool
check_scopes(IrOp *op, void *ud)
{
	Assign *a = ud;
	IrOp *r = scope_role(op);
	for (int i = 0; i < op->nopnd; i++) {
		IrValue *v = ir_op_value(op, i);
		if (a->val[v->id] && a->role[v->id] != r && op->code != IR_OP_ROLE) {
			IrOp *from = a->role[v->id];
			return lower_error(
			    a->L, op->loc,
			    "register tile '%%%s' is defined %s%s%s and used "
			    "%s%s%s; a register tile lives in the threads of one group",
			    v->name ? v->name : "<unnamed>", from ? "in role '@" : "outside roles",
			    from ? from->item[0].s : "", from ? "'" : "",
			    r ? "in role '@" : "outside roles", r ? r->item[0].s : "",
			    r ? "'" : "");
		}
	}
	return true;
}

bool
lower_assign_layouts(Lower *L)
{
	uint32_t n = L->nvals + 1;
	Assign a = {L, NULL, NULL, NULL, NULL, NULL, NULL};
	a.parent = ir_arena_alloc(&L->arena, sizeof(int) * n);
	a.cls = ir_arena_alloc(&L->arena, sizeof(LowerLayout *) * n);
	a.val = ir_arena_alloc(&L->arena, sizeof(IrValue *) * n);
	a.role = ir_arena_alloc(&L->arena, sizeof(IrOp *) * n);
	a.esize = ir_arena_alloc(&L->arena, sizeof(int) * n);
	a.chain_a = ir_arena_alloc(&L->arena, n);
	for (uint32_t i = 0; i < n; i++)
		a.parent[i] = (int)i;
	ir_walk_op(L->kernel, collect, &a);
	if (!ir_walk_op(L->kernel, check_scopes, &a))
		return false;
	ir_walk_op(L->kernel, unify, &a);
	for (uint32_t i = 0; i < n; i++)
		if (a.val[i]) {
			int r = find(&a, (int)i), e = lower_elem_bytes(a.val[i]->type->elem);
			if (e > a.esize[r])
				a.esize[r] = e;
		}
	ir_walk_op(L->kernel, mark_chain, &a);
	ir_walk_op(L->kernel, plan, &a);
	for (Derive dv = {&a, true}; dv.changed;) {
		dv.changed = false;
		ir_walk_op(L->kernel, derive, &dv);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (!a.val[i])
			continue;
		int r = find(&a, (int)i);
		if (!a.cls[r]) {
			LowerScope s;
			lower_scope_shape(L, a.role[i], &s);
			IrType *t = a.val[i]->type;
			LowerLayout l;
			if (!lower_layout_blocked(&l, t->rank, t->dims, a.esize[r], s.lane_bits,
			                          s.warp_bits)) {
				IrValue *v = a.val[i];
				return lower_error(
				    L, v->kind == IR_VAL_RESULT ? v->op->loc : v->loc,
				    "register tile '%s' cannot be distributed over %d "
				    "threads on target '%s': every dimension must be a power of "
				    "two and a thread may hold at most %d elements",
				    ir_type_str(L->c, t), s.nthreads, L->t->info->name, LOWER_MAX_REGS);
			}
			a.cls[r] = dup(L, &l);
		}
		L->lay[i] = a.cls[r];
	}
	return true;
}
