/* lower_prefetch.c — the `prefetch` pass: in an ave.for with `stages >= 2` whose tile loads
 * depend only on the induction variable and values from outside the loop, each iteration loads the
 * next iteration's tiles while it computes with the current ones (register double buffering):
 *
 *   %x0 = load(lb)                        // before the loop
 *   for %k iter_args(..., %x = %x0) {
 *     %xn = load(%k + step)               // first: in flight during the rest of the body
 *     ... uses of the load read %x ...
 *     yield ..., %xn
 *   }
 *
 * A load one step past the end reads masked (in bounds of its tensor or `other`), so it is safe
 * and its value unused. Loops that write global memory are left alone (a load might read what an
 * earlier iteration stored), and so are loops where the carried tiles would need more than
 * ra_prefetch_regs() 32-bit registers per thread (they would spill: attention's K and V tiles;
 * `prefetch{max-regs=N}` overrides it). It runs
 * after `pipeline` (which turns such loads into asynchronous copies, leaving nothing here to do)
 * and removes the `stages` attribute it satisfied. */
#include <string.h>

#include "ring.h"
#include "regalloc.h"


/* 32-bit registers per thread a register tile takes in a group of `threads`. */
static int64_t
tile_regs(const IrType *t, int64_t threads)
{
	if (!ir_type_is_reg_tile(t))
		return 0;
	return (ir_type_numel(t) * lower_elem_bytes(t->elem) + 4 * threads - 1) / (4 * threads);
}

/* Registers the loop keeps live across iterations: its carried tiles and the tiles from outside
 * it reads. */
static int64_t
carried_regs(IrOp *f, int64_t threads)
{
	int64_t n = 0;
	IrBlock *b = f->reg[0].block;
	for (int i = 1; i < b->narg; i++)
		n += tile_regs(b->arg[i]->type, threads);
	for (IrOp *op = b->first; op; op = op->next)
		for (int i = 0; i < op->nopnd; i++) {
			IrValue *v = ir_op_value(op, i);
			IrOp *def = v->kind == IR_VAL_RESULT ? v->op : NULL;
			if (def && !ir_op_is_ancestor(f, def))
				n += tile_regs(v->type, threads);
		}
	return n;
}

/* Threads of the group that runs op: one replica of its role, or the CTA. */
static int64_t
group_threads(IrCtx *c, IrOp *op, const TargetInfo *t)
{
	IrOp *role = ir_role_of(op);
	if (role)
		return ir_role_info(c, role).warps * (t ? t->warp : 32);
	IrAttr *n = ir_op_attr(ir_kernel_of(op), c->kw.threads);
	return n && n->kind == IR_ATTR_INT && n->i > 0 ? n->i : 32;
}


/* A load qualifies when every value it reads is the induction variable or defined outside. */
static bool
invariant_but_iv(IrOp *loop, IrOp *load, IrValue *iv)
{
	for (int i = 0; i < load->nopnd; i++) {
		IrValue *v = ir_op_value(load, i);
		if (v == iv)
			continue;
		IrOp *def = v->kind == IR_VAL_RESULT ? v->op
		            : v->kind == IR_VAL_ARG  ? ir_block_parent_op(v->block)
		                                     : NULL;
		if (!def || ir_op_is_ancestor(loop, def))
			return false;
	}
	return true;
}

static bool
writes_global(IrOp *op, void *ud)
{
	bool *w = ud;
	if (op->code == IR_OP_STORE || op->code == IR_OP_PUT || op->code == IR_OP_CHUNK_SIGNAL)
		*w = true;
	return !*w;
}

/* `%k = ave.index <expr>` built from an expression of `from` (plus `add` times the step). */
static IrOp *
index_op(IrModule *m, IrOp *from, const IrExpr *e, IrValue *base, IrLoc loc)
{
	IrExpr *x = ring_copy_expr(m, from, e, NULL, NULL);
	if (base)
		x = ir_expr_bin(m, IR_EX_ADD, ir_expr_value(m, base), x);
	IrOpState st;
	ir_state_init(&st, IR_OP_INDEX, loc);
	ir_state_item(m, &st, IR_IT_EXPR)->e = x;
	ir_state_result(m, &st, m->ctx->t_index, NULL);
	return ir_op_build(m, &st);
}

/* A copy of `load` reading at induction value `k`. */
static IrOp *
clone_at(IrModule *m, IrOp *load, IrValue *iv, IrValue *k)
{
	IrMap vmap;
	ir_map_init(&vmap, m->ctx->al);
	ir_map_put(&vmap, ir_hash_ptr(iv), iv, k, NULL);
	IrOp *c = ir_op_clone(m, load, &vmap);
	ir_map_free(&vmap);
	c->res[0].name = NULL;
	return c;
}

static bool
prefetch_loop(IrModule *m, IrOp *f, const TargetInfo *t, int64_t max_regs)
{
	IrCtx *c = m->ctx;
	IrAttr *st = ir_op_attr(f, c->kw.stages);
	if (!st || st->kind != IR_ATTR_INT || st->i < 2)
		return false;
	IrBlock *body = f->reg[0].block;
	IrValue *iv = body->arg[0];
	bool w = false;
	ir_walk(body, writes_global, &w);
	if (w)
		return false;
	IrOp *loads[16];
	int n = 0;
	for (IrOp *op = body->first; op && n < 16; op = op->next)
		if (op->code == IR_OP_LOAD && invariant_but_iv(f, op, iv))
			loads[n++] = op;
	if (!n)
		return false;
	int64_t threads = group_threads(c, f, t), regs = carried_regs(f, threads);
	for (int i = 0; i < n; i++)
		regs += tile_regs(loads[i]->res[0].type, threads);
	if (regs > max_regs)
		return false;
	/* Before the loop: the first iteration's tiles. */
	IrOp *k0 = index_op(m, f, f->item[0].e, NULL, f->loc);
	ir_op_insert_before(f, k0);
	IrOp *pre[16];
	for (int i = 0; i < n; i++) {
		pre[i] = clone_at(m, loads[i], iv, &k0->res[0]);
		ir_op_insert_before(f, pre[i]);
	}
	/* The loop, with one more carried tile per load. */
	IrOpState s;
	ir_state_init(&s, IR_OP_FOR, f->loc);
	for (int i = 0; i < f->nitem; i++)
		ring_copy_item(m, f, &f->item[i], ir_state_item(m, &s, f->item[i].kind), NULL, NULL);
	for (int i = 0; i < n; i++)
		ir_state_value(m, &s, &pre[i]->res[0]);
	for (int i = 0; i < f->nattr; i++)
		if (f->attr[i].name != c->kw.stages)
			ir_state_attr(m, &s, f->attr[i].name, f->attr[i].attr);
	for (int i = 0; i < f->nres; i++)
		ir_state_result(m, &s, f->res[i].type, f->res[i].name);
	for (int i = 0; i < n; i++)
		ir_state_result(m, &s, loads[i]->res[0].type, NULL);
	IrRegion *r = ir_arena_alloc(&m->arena, sizeof *r);
	r->block = body;
	ir_state_region(m, &s, r);
	IrOp *nf = ir_op_build(m, &s);
	ir_op_insert_before(f, nf);
	/* In the body: the next tiles first, the current ones from the new block arguments. */
	IrOp *kn = index_op(m, f, f->item[2].e, iv, f->loc);
	ir_block_prepend(body, kn);
	IrOp *after = kn;
	IrValue *next[16];
	for (int i = 0; i < n; i++) {
		IrValue *arg =
		    ir_block_add_arg(m, body, loads[i]->res[0].type, NULL, loads[i]->loc);
		IrOp *nx = clone_at(m, loads[i], iv, &kn->res[0]);
		ir_op_insert_after(after, nx);
		after = nx;
		next[i] = &nx->res[0];
		ir_replace_all_uses(&loads[i]->res[0], arg);
		ir_op_erase(loads[i]);
	}
	/* The yield carries them on. */
	IrOp *y = body->last;
	IrOpState ys;
	ir_state_init(&ys, IR_OP_YIELD, y->loc);
	for (int i = 0; i < y->nitem; i++)
		ring_copy_item(m, y, &y->item[i], ir_state_item(m, &ys, y->item[i].kind), NULL,
		               NULL);
	for (int i = 0; i < n; i++)
		ir_state_value(m, &ys, next[i]);
	for (int i = 0; i < y->ntype; i++)
		ir_state_type(m, &ys, y->type[i]);
	for (int i = 0; y->ntype && i < n; i++)
		ir_state_type(m, &ys, next[i]->type);
	IrOp *ny = ir_op_build(m, &ys);
	ir_op_insert_after(y, ny);
	ir_op_erase(y);
	/* The old loop's results are the new loop's first ones. */
	for (int i = 0; i < f->nres; i++)
		ir_replace_all_uses(&f->res[i], &nf->res[i]);
	f->nreg = 0; /* its region now belongs to nf */
	ir_op_erase(f);
	return true;
}

/* max-regs given as an option, else -1: the target's ra_prefetch_regs. */
static void
visit(IrModule *m, IrOp *loop, const TargetInfo *t, void *ud)
{
	int64_t given = *(const int64_t *)ud;
	prefetch_loop(m, loop, t, given >= 0 ? given : ra_prefetch_regs(t));
}

bool
pass_prefetch(IrModule *m, const IrPassOpts *o)
{
	int64_t given;
	if (!ir_pass_arg_int(m->ctx, o, "prefetch", "max-regs", -1, 0, 1024, &given))
		return false;
	pass_for_each_loop(m, o ? o->target : NULL, visit, &given);
	return true;
}
