/* pipeline.c — the `pipeline` pass: an ave.for with `stages = N` (N >= 2) at a kernel's top level,
 * whose tile loads read global tensors at coordinates affine in the induction variable, becomes an
 * N-slot shared-memory ring fed by asynchronous copies and run by the whole CTA. With T the trip
 * count and t = u - (N-1), one loop issues tile u and consumes tile t:
 *
 *   %sX = ave.smem.alloc : !ave.ring<N x tile>          (one per load)
 *   %full = ave.mbar.alloc count(1) : !ave.mbar<N>
 *   for %u = 0 to T + N - 1 step 1 iter_args(...) {
 *     ave.barrier                                       // every thread is done with slot u mod N
 *     ave.mbar.expect_tx %full[u mod N] bytes(B)
 *     ave.copy.async X(lb + u * step) into(%sX[u mod N]) arrive(%full[u mod N])
 *     ave.mbar.wait %full[(u + 1) mod N] parity(((u + 1) floordiv N + 1) mod 2)
 *     if u >= N - 1 { %x = ave.smem.load %sX[(u + 1) mod N]; body at %k = lb + t * step }
 *   }
 *   %tail = ave.max T, 1 - N                            // the drain: uses tail .. tail + N - 2
 *   ave.mbar.wait %full[(tail + j) mod N] parity((tail + j) floordiv N mod 2)   (j < N - 1)
 *
 * A tile used only as an ave.mma's A or B operand needs no ave.smem.load: the MMA reads the slot
 * (SPEC 5.5), and its ring is swizzled as gemm_ws's are.
 *
 * The first N-1 waits have parity 1 on fresh barriers and return at once (t < 0: no tile yet), so
 * the prologue and the steady state are one loop: check-invariants analyzes one arrival loop per
 * barrier array, not a prologue outside it. The drain after the loop waits for the N-1 copies the
 * loop issued but did not wait for (tail waits, docs/invariants.md), so none is in flight when the
 * kernel exits. Copies past the tensor's end land zeros (SPEC 2, 5.6), the loads' `other(0)`. */
#include <string.h>

#include "passes.h"

#define MAX_LOADS 16
#define MAX_CARRIED 64

/* Binds every value leaf of a cloned expression to the value it names in `from`, with `iv`
 * replaced by `k`. */
static void
bind_expr(const IrOp *from, IrExpr *e, IrValue *iv, IrValue *k)
{
	if (!e)
		return;
	if (e->kind == IR_EX_VAL) {
		e->pv = ir_op_value(from, e->opnd);
		if (e->pv == iv)
			e->pv = k;
	}
	bind_expr(from, e->l, iv, k);
	bind_expr(from, e->r, iv, k);
}

static IrExpr *
copy_expr(IrModule *m, const IrOp *from, const IrExpr *e, IrValue *iv, IrValue *k)
{
	IrExpr *x = ir_expr_clone(m, e);
	bind_expr(from, x, iv, k);
	return x;
}

/* An item of `from` copied for a new op, `iv` replaced by `k`. */
static void
copy_item(IrModule *m, const IrOp *from, const IrItem *src, IrItem *dst, IrValue *iv, IrValue *k)
{
	*dst = *src;
	if (src->kind == IR_IT_VALUE)
		dst->pv = ir_op_value(from, src->opnd);
	if (src->ncoord) {
		dst->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord) * (size_t)src->ncoord);
		for (int i = 0; i < src->ncoord; i++) {
			dst->coord[i].len = src->coord[i].len;
			dst->coord[i].e = copy_expr(m, from, src->coord[i].e, iv, k);
		}
	}
	if (src->e)
		dst->e = copy_expr(m, from, src->e, iv, k);
}

/* True when e is affine in the value of operand `iv` (it appears only under +, -, negation and
 * multiplication by a constant). */
static bool
mentions(const IrExpr *e, int iv)
{
	return e && ((e->kind == IR_EX_VAL && e->opnd == iv) || mentions(e->l, iv) ||
	             mentions(e->r, iv));
}

static bool
affine_in(const IrExpr *e, int iv)
{
	if (!e)
		return true;
	switch (e->kind) {
	case IR_EX_CONST:
	case IR_EX_VAL:
		return true;
	case IR_EX_NEG:
	case IR_EX_ADD:
	case IR_EX_SUB:
	case IR_EX_MUL:
		return affine_in(e->l, iv) && affine_in(e->r, iv);
	default: /* floordiv, mod, comparisons: only over loop-invariant terms */
		return !mentions(e, iv);
	}
}

/* Why a load cannot be turned into a copy, or NULL. */
static const char *
load_problem(IrOp *loop, IrOp *load, IrValue *iv)
{
	int ivop = -1;
	for (int i = 0; i < load->nopnd; i++) {
		IrValue *v = ir_op_value(load, i);
		if (v == iv) {
			ivop = i;
			continue;
		}
		IrOp *def = v->kind == IR_VAL_RESULT ? v->op
		            : v->kind == IR_VAL_ARG  ? ir_block_parent_op(v->block)
		                                     : NULL;
		if (!def || ir_op_is_ancestor(loop, def))
			return "a load reads a value computed in the loop";
	}
	const IrItem *it = &load->item[0];
	if (it->kind != IR_IT_VALUE || !ir_op_value(load, it->opnd)->type ||
	    ir_op_value(load, it->opnd)->type->kind != IR_TY_TENSOR ||
	    ir_op_value(load, it->opnd)->type->space != IR_SPACE_GLOBAL)
		return "a load does not read a global tensor";
	for (int i = 0; i < it->ncoord; i++)
		if (ivop >= 0 && !affine_in(it->coord[i].e, ivop))
			return "a load's coordinates are not affine in the induction variable";
	return NULL;
}

typedef struct Scan {
	const char *why;
} Scan;

static bool
scan_body(IrOp *op, void *ud)
{
	Scan *s = ud;
	switch (op->code) {
	case IR_OP_STORE:
	case IR_OP_PUT:
	case IR_OP_CHUNK_SIGNAL:
		s->why = "the loop stores to global memory";
		break;
	case IR_OP_MBAR_ALLOC:
	case IR_OP_MBAR_EXPECT_TX:
	case IR_OP_MBAR_ARRIVE:
	case IR_OP_MBAR_WAIT:
	case IR_OP_COPY_ASYNC:
	case IR_OP_BARRIER:
	case IR_OP_SMEM_ALLOC:
	case IR_OP_MMA_ASYNC:
	case IR_OP_WARP_SPECIALIZE:
		s->why = "the loop already synchronizes or allocates shared memory";
		break;
	default:
		break;
	}
	return !s->why;
}

typedef struct Usage {
	int64_t bufs, scratch;
} Usage;

static int64_t
tile_bytes(const IrType *t)
{
	return t->kind == IR_TY_TILE && ir_type_numel(t) > 0
	           ? ir_type_numel(t) * lower_elem_bytes(t->elem)
	           : 0;
}

static bool
usage_op(IrOp *op, void *ud)
{
	Usage *u = ud;
	for (int i = 0; i < op->nres; i++) {
		const IrType *t = op->res[i].type;
		if (op->code == IR_OP_SMEM_ALLOC)
			u->bufs +=
			    t->kind == IR_TY_RING ? t->n * tile_bytes(t->elem) : tile_bytes(t);
		else if (ir_type_is_reg_tile(t) && tile_bytes(t) > u->scratch)
			u->scratch = tile_bytes(t);
	}
	return true;
}

/* Shared memory the kernel uses besides a new ring: its buffers, and as much as its largest
 * register tile for the lowering's scratch (layout conversions, reductions), which is placed
 * only later (docs/targets.md). */
static int64_t
other_smem(IrOp *kernel)
{
	Usage u = {0, 0};
	ir_walk(kernel->reg[0].block, usage_op, &u);
	return u.bufs + u.scratch;
}

typedef struct NameFind {
	IrStr name;
	bool found;
} NameFind;

static bool
name_op(IrOp *op, void *ud)
{
	NameFind *nf = ud;
	for (int i = 0; i < op->nres; i++)
		nf->found |= op->res[i].name == nf->name;
	for (int r = 0; r < op->nreg; r++)
		for (int a = 0; a < op->reg[r].block->narg; a++)
			nf->found |= op->reg[r].block->arg[a]->name == nf->name;
	return !nf->found;
}

/* A value name `base.suffix` (or `base.suffixN`) that no value of the kernel has; NULL when
 * there is no base. */
static IrStr
fresh(IrCtx *c, IrOp *kernel, IrStr base, const char *suffix)
{
	if (!base)
		return NULL;
	for (int n = 0;; n++) {
		char *s = n ? ir_ctx_printf(c, "%s.%s%d", base, suffix, n)
		            : ir_ctx_printf(c, "%s.%s", base, suffix);
		NameFind nf = {ir_intern_cstr(c, s), false};
		for (int a = 0; a < kernel->reg[0].block->narg && !nf.found; a++)
			nf.found = kernel->reg[0].block->arg[a]->name == nf.name;
		if (!nf.found)
			ir_walk(kernel->reg[0].block, name_op, &nf);
		if (!nf.found)
			return nf.name;
	}
}

/* Names the result of the op that defines v. */
static IrValue *
named(IrValue *v, IrStr name)
{
	v->name = name;
	return v;
}

/* ave.index from an expression. */
static IrValue *
idx(IrBuilder *b, IrExpr *e)
{
	return ir_b_index(b, e);
}

static IrExpr *
V(IrModule *m, IrValue *v)
{
	return ir_expr_value(m, v);
}

static IrExpr *
C(IrModule *m, int64_t c)
{
	return ir_expr_const(m, c);
}

/* l k r, with `x + 0`, `0 + x`, `x - 0` and `x * 1` left out. */
static IrExpr *
B(IrModule *m, IrExprKind k, IrExpr *l, IrExpr *r)
{
	int64_t v;
	if ((k == IR_EX_ADD || k == IR_EX_SUB) && ir_expr_eval_const(r, &v) && v == 0)
		return l;
	if (k == IR_EX_ADD && ir_expr_eval_const(l, &v) && v == 0)
		return r;
	if (k == IR_EX_MUL && ir_expr_eval_const(r, &v) && v == 1)
		return l;
	return ir_expr_bin(m, k, l, r);
}

/* The trip count of loop f, (ub - lb + step - 1) floordiv step, as a fresh expression. */
static IrExpr *
trip_expr(IrModule *m, IrOp *f, int64_t step)
{
	IrExpr *span = B(m, IR_EX_SUB, copy_expr(m, f, f->item[1].e, NULL, NULL),
	                 copy_expr(m, f, f->item[0].e, NULL, NULL));
	return step == 1 ? span
	                 : B(m, IR_EX_FLOORDIV, B(m, IR_EX_ADD, span, C(m, step - 1)), C(m, step));
}

/* `%b[slot]` as an item of group g. */
static void
slot_item(IrModule *m, IrGroup *g, IrValue *b, IrValue *slot)
{
	IrItem *it = ir_group_add(m, g, IR_IT_VALUE);
	it->pv = b;
	it->suffix = true;
	it->ncoord = 1;
	it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
	it->coord[0].e = V(m, slot);
	it->coord[0].len = -1;
}

/* True when every use of v is as the A or B operand of an ave.mma, which reads shared memory
 * directly (SPEC 5.5): the ring slot can stand for it, with no copy through registers. */
static bool
mma_operand_only(IrValue *v)
{
	if (!v->uses)
		return false;
	for (IrUse *u = v->uses; u; u = u->next) {
		IrOp *op = u->user;
		if (op->code != IR_OP_MMA || ir_op_value(op, op->item[2].opnd) == v)
			return false;
	}
	return true;
}

/* The slot type of a ring: the load's tile in shared memory; swizzled (the widest of 128, 64, 32
 * bytes that divides a row, rows in order [1, 0]) when an MMA reads it directly. */
static IrType *
slot_type(IrCtx *c, IrType *rt, bool direct)
{
	IrAttr *layout = NULL;
	int64_t row = rt->dims[rt->rank - 1] * lower_elem_bytes(rt->elem);
	if (direct && rt->rank == 2 && row % 32 == 0) {
		int64_t sw = row % 128 == 0 ? 128 : row % 64 == 0 ? 64 : 32;
		IrAttr *ord[2] = {ir_attr_int(c, 1), ir_attr_int(c, 0)};
		IrStr keys[2] = {c->kw.swizzle, c->kw.order};
		IrAttr *vals[2] = {ir_attr_int(c, sw), ir_attr_array(c, 2, ord)};
		layout = ir_attr_ave(c, c->kw.smem, NULL, 2, keys, vals);
	}
	return ir_type_tile(c, rt->rank, rt->dims, rt->elem, IR_SPACE_SMEM, layout);
}

/* Rebuilds `op` with every value item that names v replaced by `ring[slot]`. */
static void
read_slot(IrModule *m, IrOp *op, IrValue *v, IrValue *ring, IrValue *slot)
{
	IrOpState s;
	ir_state_init(&s, op->code, op->loc);
	s.mode = op->mode;
	for (int i = 0; i < op->nitem; i++) {
		const IrItem *src = &op->item[i];
		if (src->kind == IR_IT_VALUE && ir_op_value(op, src->opnd) == v) {
			IrItem *it = ir_state_item(m, &s, IR_IT_VALUE);
			it->pv = ring;
			it->suffix = true;
			it->ncoord = 1;
			it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
			it->coord[0].e = V(m, slot);
			it->coord[0].len = -1;
		} else {
			copy_item(m, op, src, ir_state_item(m, &s, src->kind), NULL, NULL);
		}
	}
	for (int g = 0; g < op->ngroup; g++) {
		IrGroup *ng = ir_state_group(m, &s, op->group[g].kw);
		for (int i = 0; i < op->group[g].nitem; i++)
			copy_item(m, op, &op->group[g].item[i],
			          ir_group_add(m, ng, op->group[g].item[i].kind), NULL, NULL);
	}
	for (int i = 0; i < op->nattr; i++)
		ir_state_attr(m, &s, op->attr[i].name, op->attr[i].attr);
	for (int i = 0; i < op->nres; i++)
		ir_state_result(m, &s, op->res[i].type, op->res[i].name);
	IrOp *nop = ir_op_build(m, &s);
	ir_op_insert_before(op, nop);
	for (int i = 0; i < op->nres; i++)
		ir_replace_all_uses(&op->res[i], &nop->res[i]);
	ir_op_erase(op);
}

static bool
pipeline_loop(IrModule *m, IrOp *f, const TargetInfo *t, int64_t stages_opt)
{
	IrCtx *c = m->ctx;
	IrAttr *st = ir_op_attr(f, c->kw.stages);
	if (!st || st->kind != IR_ATTR_INT)
		return false;
	int64_t N = stages_opt > 0 ? stages_opt : st->i;
	if (N < 2)
		return false;
	IrBlock *body = f->reg[0].block;
	IrValue *iv = body->arg[0];
	const char *ivname = iv->name ? iv->name : "?";
	IrOp *kernel = ir_kernel_of(f);
	const char *why = NULL;
	int64_t step = 0;
	if (ir_op_parent_op(f) != kernel)
		why = ir_role_of(f) ? "the loop is inside a role"
		                    : "the loop is not at the kernel's top level";
	else if (t && t->copy == TARGET_COPY_NONE)
		why = ir_ctx_printf(c, "target '%s' has no asynchronous copy", t->name);
	else if (t && t->copy == TARGET_COPY_BUFFER)
		/* docs/amdgpu.md: the copy completes within the issuing wave, so a ring would not
		 * overlap a wave's loads with its own compute; prefetch's loads a stage ahead into
		 * registers do. */
		why = ir_ctx_printf(c, "on target '%s' ave.copy.async completes within the issuing "
				    "wave, so a ring overlaps nothing; 'prefetch' loads the next tiles "
				    "into registers instead", t->name);
	else if (!ir_expr_eval_const(f->item[2].e, &step) || step <= 0)
		why = "its step is not a positive constant";
	Scan sc = {why};
	if (!why)
		ir_walk(body, scan_body, &sc);
	why = sc.why;
	IrOp *loads[MAX_LOADS];
	int n = 0;
	int64_t bytes = 0;
	for (IrOp *op = body->first; op && !why; op = op->next) {
		if (op->code != IR_OP_LOAD)
			continue;
		if (n == MAX_LOADS) {
			why = "the loop has too many loads";
			break;
		}
		why = load_problem(f, op, iv);
		IrGroup *other = ir_op_group(op, c->kw.other);
		if (!why && other && other->nitem) {
			IrItem *o = &other->item[0];
			int64_t v;
			if (!(o->kind == IR_IT_FLOAT && o->f == 0.0) &&
			    !(o->kind == IR_IT_EXPR && ir_expr_eval_const(o->e, &v) && v == 0))
				why = "a load fills out-of-bounds elements with a non-zero 'other'";
		}
		IrType *rt = op->res[0].type;
		if (!why && (!ir_type_is_reg_tile(rt) || ir_type_numel(rt) < 0))
			why = "a load's tile has no static shape";
		if (!why) {
			loads[n++] = op;
			bytes += ir_type_numel(rt) * lower_elem_bytes(rt->elem);
		}
	}
	if (!why && !n)
		why = "it loads no tile";
	if (!why && body->narg - 1 > MAX_CARRIED)
		why = "it carries too many values";
	int64_t other = why || !t ? 0 : other_smem(kernel);
	if (!why && t && N * bytes + N * t->mbar_bytes + other > t->smem_limit)
		why = ir_ctx_printf(
		    c,
		    "its %lld-byte ring and %lld bytes of other buffers and scratch "
		    "exceed the %lld bytes of shared memory of '%s'",
		    (long long)(N * bytes), (long long)other, (long long)t->smem_limit, t->name);
	if (why) {
		ir_remark(c, f->loc, "pipeline: loop '%%%s' not pipelined: %s", ivname, why);
		return false;
	}

	/* The ring and its barriers, at the kernel's top level. */
	IrBuilder b;
	IrBlock *kb = kernel->reg[0].block;
	ir_builder_before(&b, m, kb->first);
	b.loc = f->loc;
	IrValue *ring[MAX_LOADS];
	bool direct[MAX_LOADS];
	for (int i = 0; i < n; i++) {
		IrType *rt = loads[i]->res[0].type;
		direct[i] = mma_operand_only(&loads[i]->res[0]);
		IrType *slot = slot_type(c, rt, direct[i]);
		IrType *rty = ir_type_ring(c, N, slot);
		ring[i] = named(&ir_b_op(&b, IR_OP_SMEM_ALLOC, 1, &rty, 0, NULL)->res[0],
		                fresh(c, kernel, loads[i]->res[0].name, "ring"));
	}
	IrValue *full;
	{
		IrOpState s;
		ir_state_init(&s, IR_OP_MBAR_ALLOC, f->loc);
		ir_group_add_expr(m, ir_state_group(m, &s, c->kw.count), C(m, 1));
		ir_state_result(m, &s, ir_type_mbar(c, N), NULL);
		full = named(&ir_b_insert(&b, ir_op_build(m, &s))->res[0],
		             fresh(c, kernel, iv->name, "full"));
	}

	/* The new loop's block: %u and the carried values. */
	IrRegion *nr = ir_region_new(m);
	IrBlock *nb = nr->block;
	IrValue *u = ir_block_add_arg(m, nb, c->t_index, fresh(c, kernel, iv->name, "it"), f->loc);
	IrValue *carried[MAX_CARRIED];
	int ncar = body->narg - 1;
	for (int i = 0; i < ncar; i++)
		carried[i] = ir_block_add_arg(m, nb, body->arg[i + 1]->type, body->arg[i + 1]->name,
		                              body->arg[i + 1]->loc);
	ir_builder_at_end(&b, m, nb, f->loc);
	ir_b_op(&b, IR_OP_BARRIER, 0, NULL, 0, NULL);
	/* Issue tile u: %ki = lb + u * step into slot u mod N. */
	IrExpr *lb = copy_expr(m, f, f->item[0].e, NULL, NULL);
	IrExpr *kie = B(m, IR_EX_ADD, lb, B(m, IR_EX_MUL, V(m, u), C(m, step)));
	IrValue *ki =
	    kie->kind == IR_EX_VAL ? u : named(idx(&b, kie), fresh(c, kernel, iv->name, "next"));
	IrValue *sn =
	    named(idx(&b, B(m, IR_EX_MOD, V(m, u), C(m, N))), fresh(c, kernel, iv->name, "in"));
	{
		IrOpState s;
		ir_state_init(&s, IR_OP_MBAR_EXPECT_TX, f->loc);
		IrItem *it = ir_state_item(m, &s, IR_IT_VALUE);
		it->pv = full;
		it->suffix = true;
		it->ncoord = 1;
		it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
		it->coord[0].e = V(m, sn);
		it->coord[0].len = -1;
		ir_group_add_expr(m, ir_state_group(m, &s, c->kw.bytes), C(m, bytes));
		ir_b_insert(&b, ir_op_build(m, &s));
	}
	for (int i = 0; i < n; i++) {
		IrOpState s;
		ir_state_init(&s, IR_OP_COPY_ASYNC, loads[i]->loc);
		copy_item(m, loads[i], &loads[i]->item[0], ir_state_item(m, &s, IR_IT_VALUE), iv,
		          ki);
		slot_item(m, ir_state_group(m, &s, c->kw.into), ring[i], sn);
		slot_item(m, ir_state_group(m, &s, c->kw.arrive), full, sn);
		ir_b_insert(&b, ir_op_build(m, &s));
	}
	/* Wait for tile t = u - (N-1) in slot (u + 1) mod N (at once while t < 0). */
	IrValue *sc_ = named(idx(&b, B(m, IR_EX_MOD, B(m, IR_EX_ADD, V(m, u), C(m, 1)), C(m, N))),
	                     fresh(c, kernel, iv->name, "slot"));
	{
		IrOpState s;
		ir_state_init(&s, IR_OP_MBAR_WAIT, f->loc);
		IrItem *it = ir_state_item(m, &s, IR_IT_VALUE);
		it->pv = full;
		it->suffix = true;
		it->ncoord = 1;
		it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
		it->coord[0].e = V(m, sc_);
		it->coord[0].len = -1;
		IrExpr *ph =
		    B(m, IR_EX_MOD,
		      B(m, IR_EX_ADD,
		        B(m, IR_EX_FLOORDIV, B(m, IR_EX_ADD, V(m, u), C(m, 1)), C(m, N)), C(m, 1)),
		      C(m, 2));
		ir_group_add_expr(m, ir_state_group(m, &s, c->kw.parity), ph);
		ir_b_insert(&b, ir_op_build(m, &s));
	}
	/* %v = u >= N - 1: a tile to consume. */
	IrValue *valid;
	{
		IrOpState s;
		ir_state_init(&s, IR_OP_CMP, f->loc);
		s.mode = c->kw.ge;
		ir_state_value(m, &s, u);
		ir_state_item(m, &s, IR_IT_INT)->i = N - 1;
		ir_state_result(m, &s, ir_type_int(c, 1), fresh(c, kernel, iv->name, "ready"));
		valid = &ir_b_insert(&b, ir_op_build(m, &s))->res[0];
	}
	/* The consumer: the old body under `ave.if %v`. */
	IrRegion *then = ir_region_new(m);
	IrBuilder tb;
	ir_builder_at_end(&tb, m, then->block, f->loc);
	IrValue *kc_val = NULL;
	IrOp *oldy = body->last;
	while (body->first != oldy) {
		IrOp *op = body->first;
		ir_op_unlink(op);
		ir_block_append(then->block, op);
	}
	for (int i = 0; i < n; i++) {
		if (direct[i]) {
			IrValue *v = &loads[i]->res[0];
			while (v->uses)
				read_slot(m, v->uses->user, v, ring[i], sc_);
			ir_op_erase(loads[i]);
			continue;
		}
		IrOpState s;
		ir_state_init(&s, IR_OP_SMEM_LOAD, loads[i]->loc);
		IrItem *it = ir_state_item(m, &s, IR_IT_VALUE);
		it->pv = ring[i];
		it->suffix = true;
		it->ncoord = 1;
		it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
		it->coord[0].e = V(m, sc_);
		it->coord[0].len = -1;
		ir_state_result(m, &s, loads[i]->res[0].type, loads[i]->res[0].name);
		IrOp *sl = ir_op_build(m, &s);
		ir_op_insert_before(loads[i], sl);
		ir_replace_all_uses(&loads[i]->res[0], &sl->res[0]);
		ir_op_erase(loads[i]);
	}
	if (ir_value_has_uses(iv)) {
		IrBuilder kb2;
		if (then->block->first)
			ir_builder_before(&kb2, m, then->block->first);
		else
			ir_builder_at_end(&kb2, m, then->block, f->loc);
		kb2.loc = f->loc;
		IrExpr *lb2 = copy_expr(m, f, f->item[0].e, NULL, NULL);
		IrValue *kc = idx(
		    &kb2, B(m, IR_EX_ADD, lb2,
		            B(m, IR_EX_MUL, B(m, IR_EX_SUB, V(m, u), C(m, N - 1)), C(m, step))));
		kc_val =
		    named(kc, iv->name); /* the old loop variable's name, free once it is gone */
	}
	if (kc_val)
		ir_replace_all_uses(iv, kc_val);
	for (int i = 0; i < ncar; i++)
		ir_replace_all_uses(body->arg[i + 1], carried[i]);
	IrValue *yv[MAX_CARRIED];
	int ny = 0;
	for (int i = 0; i < oldy->nitem && ny < MAX_CARRIED; i++)
		if (oldy->item[i].kind == IR_IT_VALUE)
			yv[ny++] = ir_op_value(oldy, oldy->item[i].opnd);
	IrOpState is;
	ir_state_init(&is, IR_OP_IF, f->loc);
	ir_state_value(m, &is, valid);
	for (int i = 0; i < ncar; i++)
		ir_state_result(m, &is, carried[i]->type, NULL);
	ir_b_yield(&tb, ny, yv, ncar > 0);
	ir_state_region(m, &is, then);
	if (ncar) {
		IrRegion *els = ir_region_new(m);
		IrBuilder eb;
		ir_builder_at_end(&eb, m, els->block, f->loc);
		ir_b_yield(&eb, ncar, carried, true);
		ir_state_region(m, &is, els);
	}
	IrOp *ifop = ir_b_insert(&b, ir_op_build(m, &is));
	IrValue *ifres[MAX_CARRIED];
	for (int i = 0; i < ncar; i++)
		ifres[i] = &ifop->res[i];
	ir_b_yield(&b, ncar, ifres, ncar > 0);

	/* The loop: 0 to trip + N - 1, trip = (ub - lb + step - 1) floordiv step. */
	IrOpState s;
	ir_state_init(&s, IR_OP_FOR, f->loc);
	ir_state_item(m, &s, IR_IT_EXPR)->e = C(m, 0);
	ir_state_item(m, &s, IR_IT_EXPR)->e = B(m, IR_EX_ADD, trip_expr(m, f, step), C(m, N - 1));
	ir_state_item(m, &s, IR_IT_EXPR)->e = C(m, 1);
	for (int i = 3; i < f->nitem; i++)
		copy_item(m, f, &f->item[i], ir_state_item(m, &s, f->item[i].kind), NULL, NULL);
	for (int i = 0; i < f->nattr; i++)
		if (f->attr[i].name != c->kw.stages)
			ir_state_attr(m, &s, f->attr[i].name, f->attr[i].attr);
	for (int i = 0; i < f->nres; i++)
		ir_state_result(m, &s, f->res[i].type, f->res[i].name);
	ir_state_region(m, &s, nr);
	IrOp *nf = ir_op_build(m, &s);
	ir_op_insert_before(f, nf);
	/* The drain: the loop waited for uses 0 .. trip - 1 and issued trip .. trip + N - 2 as
	 * well; wait for those after it, use v in slot v mod N with parity (v floordiv N) mod 2. */
	{
		IrBuilder db;
		ir_builder_before(&db, m, f);
		db.loc = f->loc;
		/* From use max(trip, 1 - N): with trip <= 0 the loop waited for nothing and issued
		 * uses 0 .. trip + N - 2; the drain's waits for uses v < 0 have parity 1 on
		 * barriers no copy used and return at once. The bound keeps v >= 1 - N, where
		 * (v floordiv N) mod 2 is 1, when the loop runs no iteration at all. */
		IrValue *tv = idx(&db, trip_expr(m, f, step));
		IrValue *mx[2] = {tv, ir_b_const_int(&db, c->t_index, 1 - N, NULL)};
		IrType *ity = c->t_index;
		IrValue *tail = named(&ir_b_op(&db, IR_OP_MAX, 1, &ity, 2, mx)->res[0],
		                      fresh(c, kernel, iv->name, "tail"));
		for (int64_t j = 0; j < N - 1; j++) {
			IrExpr *v = B(m, IR_EX_ADD, V(m, tail), C(m, j));
			IrValue *ds = named(idx(&db, B(m, IR_EX_MOD, v, C(m, N))),
			                    fresh(c, kernel, iv->name, "drain"));
			IrOpState ws;
			ir_state_init(&ws, IR_OP_MBAR_WAIT, f->loc);
			IrItem *it = ir_state_item(m, &ws, IR_IT_VALUE);
			it->pv = full;
			it->suffix = true;
			it->ncoord = 1;
			it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
			it->coord[0].e = V(m, ds);
			it->coord[0].len = -1;
			IrExpr *v2 = B(m, IR_EX_ADD, V(m, tail), C(m, j));
			ir_group_add_expr(
			    m, ir_state_group(m, &ws, c->kw.parity),
			    B(m, IR_EX_MOD, B(m, IR_EX_FLOORDIV, v2, C(m, N)), C(m, 2)));
			ir_b_insert(&db, ir_op_build(m, &ws));
		}
	}
	for (int i = 0; i < f->nres; i++)
		ir_replace_all_uses(&f->res[i], &nf->res[i]);
	ir_op_erase(f);
	ir_remark(c, nf->loc, "pipeline: loop '%%%s': %lld stages, %d operand%s, ring %lld bytes",
	          ivname, (long long)N, n, n == 1 ? "" : "s", (long long)(N * bytes));
	return true;
}

static void
visit(IrModule *m, IrOp *loop, const TargetInfo *t, void *ud)
{
	pipeline_loop(m, loop, t, *(const int64_t *)ud);
}

bool
pass_pipeline(IrModule *m, const IrPassOpts *o)
{
	int64_t stages;
	if (!ir_pass_arg_int(m->ctx, o, "pipeline", "stages", 0, 2, 16, &stages))
		return false;
	pass_for_each_loop(m, o ? o->target : NULL, visit, &stages);
	return true;
}
