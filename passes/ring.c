/* ring.c — the ring plan of a loop with `stages` and the builders `pipeline` and
 * `warp-specialize` share (ring.h). */
#include <string.h>

#include "ring.h"

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

IrExpr *
ring_copy_expr(IrModule *m, const IrOp *from, const IrExpr *e, IrValue *iv, IrValue *k)
{
	IrExpr *x = ir_expr_clone(m, e);
	bind_expr(from, x, iv, k);
	return x;
}

/* An item of `from` copied for a new op, `iv` replaced by `k`. */
void
ring_copy_item(IrModule *m, const IrOp *from, const IrItem *src, IrItem *dst, IrValue *iv, IrValue *k)
{
	*dst = *src;
	if (src->kind == IR_IT_VALUE)
		dst->pv = ir_op_value(from, src->opnd);
	if (src->ncoord) {
		dst->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord) * (size_t)src->ncoord);
		for (int i = 0; i < src->ncoord; i++) {
			dst->coord[i].len = src->coord[i].len;
			dst->coord[i].e = ring_copy_expr(m, from, src->coord[i].e, iv, k);
		}
	}
	if (src->e)
		dst->e = ring_copy_expr(m, from, src->e, iv, k);
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
load_problem(IrCtx *ctx, IrOp *loop, IrOp *load, IrValue *iv)
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
	/* A global tensor, or the rank's copy of a symmetric buffer (SPEC 5.4: copy.async accepts
	 * symmetric-buffer addresses). */
	IrOp *sym = it->kind == IR_IT_SYMBOL ? ir_symbol_lookup(ctx, load, it->s) : NULL;
	if (sym ? sym->code != IR_OP_SYMM_ALLOC
	        : it->kind != IR_IT_VALUE || !ir_op_value(load, it->opnd)->type ||
	              ir_op_value(load, it->opnd)->type->kind != IR_TY_TENSOR ||
	              ir_op_value(load, it->opnd)->type->space != IR_SPACE_GLOBAL)
		return "a load does not read a global tensor or a symmetric buffer";
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
	IrOp *const *skip; /* ops whose tiles need no scratch (with their regions) */
	int nskip;
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
	for (int i = 0; i < u->nskip; i++)
		for (IrOp *o = op; o; o = ir_op_parent_op(o))
			if (o == u->skip[i])
				return true;
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

const char *
ring_smem_check(IrModule *m, const RingPlan *p, const TargetInfo *t, int nbars, IrOp *const *skip,
		int nskip)
{
	/* Shared memory the kernel uses besides the ring: its buffers, and as much as its largest
	 * register tile outside `skip` for the lowering's scratch (layout conversions,
	 * reductions), which is placed only later (docs/targets.md). */
	Usage u = {0, 0, skip, nskip};
	ir_walk(p->kernel->reg[0].block, usage_op, &u);
	int64_t other = u.bufs + u.scratch, N = p->stages * p->rings;
	if (N * p->bytes + nbars * N * t->mbar_bytes + other <= t->smem_limit)
		return NULL;
	return ir_ctx_printf(m->ctx,
	                     "its %lld-byte ring and %lld bytes of other buffers and scratch "
	                     "exceed the %lld bytes of shared memory of '%s'",
	                     (long long)(N * p->bytes), (long long)other,
	                     (long long)t->smem_limit, t->name);
}

/* A value name `base.suffix` (or `base.suffixN`) that no value of the kernel has; NULL when
 * there is no base. */
IrStr
ring_fresh(IrCtx *c, IrOp *kernel, IrStr base, const char *suffix)
{
	return base ? ir_fresh_name(c, kernel, base, suffix) : NULL;
}

/* Names the result of the op that defines v. */
IrValue *
ring_named(IrValue *v, IrStr name)
{
	v->name = name;
	return v;
}

IrExpr *
ring_V(IrModule *m, IrValue *v)
{
	return ir_expr_value(m, v);
}

IrExpr *
ring_C(IrModule *m, int64_t c)
{
	return ir_expr_const(m, c);
}

/* l k r, with `x + 0`, `0 + x`, `x - 0` and `x * 1` left out. */
IrExpr *
ring_B(IrModule *m, IrExprKind k, IrExpr *l, IrExpr *r)
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
	IrExpr *span = ring_B(m, IR_EX_SUB, ring_copy_expr(m, f, f->item[1].e, NULL, NULL),
	                 ring_copy_expr(m, f, f->item[0].e, NULL, NULL));
	return step == 1 ? span
	                 : ring_B(m, IR_EX_FLOORDIV, ring_B(m, IR_EX_ADD, span, ring_C(m, step - 1)), ring_C(m, step));
}

/* Makes `it` the value item `%b[slot]`. */
static IrItem *
slot_fill(IrModule *m, IrItem *it, IrValue *b, IrValue *slot)
{
	it->pv = b;
	it->suffix = true;
	it->ncoord = 1;
	it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
	it->coord[0].e = ring_V(m, slot);
	it->coord[0].len = -1;
	return it;
}

/* `%b[slot]` as an item of group g. */
void
ring_slot_item(IrModule *m, IrGroup *g, IrValue *b, IrValue *slot)
{
	slot_fill(m, ir_group_add(m, g, IR_IT_VALUE), b, slot);
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

IrOp *
ring_rebuild(IrModule *m, IrOp *op, RingEdit edit, void *ud)
{
	IrOpState s;
	ir_state_init(&s, op->code, op->loc);
	s.mode = op->mode;
	for (int i = 0; i < op->nitem; i++) {
		IrItem *it = ir_state_item(m, &s, op->item[i].kind);
		ring_copy_item(m, op, &op->item[i], it, NULL, NULL);
		edit(m, op, NULL, it, ud);
	}
	for (int g = 0; g < op->ngroup; g++) {
		IrGroup *ng = ir_state_group(m, &s, op->group[g].kw);
		for (int i = 0; i < op->group[g].nitem; i++) {
			IrItem *it = ir_group_add(m, ng, op->group[g].item[i].kind);
			ring_copy_item(m, op, &op->group[g].item[i], it, NULL, NULL);
			edit(m, op, &op->group[g], it, ud);
		}
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
	return nop;
}

typedef struct SlotRead {
	IrValue *v, *ring, *slot;
} SlotRead;

static void
to_slot(IrModule *m, const IrOp *op, const IrGroup *g, IrItem *it, void *ud)
{
	SlotRead *r = ud;
	(void)op;
	if (!g && it->kind == IR_IT_VALUE && it->pv == r->v)
		slot_fill(m, it, r->ring, r->slot);
}

void
ring_read_slot(IrModule *m, IrOp *op, IrValue *v, IrValue *ring, IrValue *slot)
{
	SlotRead r = {v, ring, slot};
	ring_rebuild(m, op, to_slot, &r);
}


IrExpr *
ring_trip(IrModule *m, const RingPlan *p)
{
	return trip_expr(m, p->loop, p->step);
}

IrExpr *
ring_k(IrModule *m, const RingPlan *p, IrExpr *u)
{
	IrExpr *lb = ring_copy_expr(m, p->loop, p->loop->item[0].e, NULL, NULL);
	return ring_B(m, IR_EX_ADD, lb, ring_B(m, IR_EX_MUL, u, ring_C(m, p->step)));
}

bool
ring_plan(IrModule *m, IrOp *f, const TargetInfo *t, int64_t stages, RingPlan *p)
{
	IrCtx *c = m->ctx;
	memset(p, 0, sizeof *p);
	IrAttr *st = ir_op_attr(f, c->kw.stages);
	if (!st || st->kind != IR_ATTR_INT)
		return false;
	p->stages = stages > 0 ? stages : st->i;
	p->rings = 1;
	if (p->stages < 2)
		return false;
	p->loop = f;
	p->kernel = ir_kernel_of(f);
	IrBlock *body = f->reg[0].block;
	p->iv = body->arg[0];
	p->ivname = p->iv->name ? p->iv->name : "?";
	const char *why = NULL;
	if (ir_op_parent_op(f) != p->kernel)
		why = ir_role_of(f) ? "the loop is inside a role"
		                    : "the loop is not at the kernel's top level";
	else if (!ir_expr_eval_const(f->item[2].e, &p->step) || p->step <= 0)
		why = "its step is not a positive constant";
	Scan sc = {why};
	if (!why)
		ir_walk(body, scan_body, &sc);
	why = sc.why;
	for (IrOp *op = body->first; op && !why; op = op->next) {
		if (op->code != IR_OP_LOAD)
			continue;
		if (p->nload == RING_MAX_LOADS) {
			why = "the loop has too many loads";
			break;
		}
		why = load_problem(c, f, op, p->iv);
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
			p->direct[p->nload] = mma_operand_only(&op->res[0]);
			p->load[p->nload++] = op;
			p->bytes += ir_type_numel(rt) * lower_elem_bytes(rt->elem);
		}
	}
	if (!why && !p->nload)
		why = "it loads no tile";
	if (!why && body->narg - 1 > RING_MAX_CARRIED)
		why = "it carries too many values";
	if (!why && t)
		why = ring_smem_check(m, p, t, 1, NULL, 0);
	p->why = why;
	return true;
}

IrItem *
ring_slot_state_item(IrModule *m, IrOpState *s, IrValue *b, IrValue *slot)
{
	return slot_fill(m, ir_state_item(m, s, IR_IT_VALUE), b, slot);
}

void
ring_alloc(IrModule *m, const RingPlan *p, IrValue **ring)
{
	IrCtx *c = m->ctx;
	IrBuilder b;
	ir_builder_before(&b, m, p->kernel->reg[0].block->first);
	b.loc = p->loop->loc;
	for (int i = 0; i < p->nload; i++) {
		IrType *slot = slot_type(c, p->load[i]->res[0].type, p->direct[i]);
		IrType *rty = ir_type_ring(c, p->stages * p->rings, slot);
		ring[i] = ring_named(&ir_b_op(&b, IR_OP_SMEM_ALLOC, 1, &rty, 0, NULL)->res[0],
		                     ring_fresh(c, p->kernel, p->load[i]->res[0].name, "ring"));
	}
}

IrValue *
ring_mbar(IrModule *m, const RingPlan *p, int64_t count, const char *suffix)
{
	return ring_mbar_n(m, p, p->stages * p->rings, count, suffix);
}

IrValue *
ring_mbar_n(IrModule *m, const RingPlan *p, int64_t n, int64_t count, const char *suffix)
{
	IrCtx *c = m->ctx;
	IrBuilder b;
	ir_builder_before(&b, m, p->kernel->reg[0].block->first);
	b.loc = p->loop->loc;
	/* After the rings ring_alloc put first. */
	while (b.before && b.before->code == IR_OP_SMEM_ALLOC)
		b.before = b.before->next;
	while (b.before && b.before->code == IR_OP_MBAR_ALLOC)
		b.before = b.before->next;
	IrOpState s;
	ir_state_init(&s, IR_OP_MBAR_ALLOC, p->loop->loc);
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.count), ring_C(m, count));
	ir_state_result(m, &s, ir_type_mbar(c, n), NULL);
	return ring_named(&ir_b_insert(&b, ir_op_build(m, &s))->res[0],
	                  ring_fresh(c, p->kernel, p->iv->name, suffix));
}

void
ring_expect_tx(IrBuilder *b, IrValue *bar, IrValue *slot, int64_t bytes)
{
	IrModule *m = b->m;
	IrOpState s;
	ir_state_init(&s, IR_OP_MBAR_EXPECT_TX, b->loc);
	ring_slot_state_item(m, &s, bar, slot);
	ir_group_add_expr(m, ir_state_group(m, &s, m->ctx->kw.bytes), ring_C(m, bytes));
	ir_b_insert(b, ir_op_build(m, &s));
}

void
ring_wait(IrBuilder *b, IrValue *bar, IrValue *slot, IrExpr *ph)
{
	IrModule *m = b->m;
	IrOpState s;
	ir_state_init(&s, IR_OP_MBAR_WAIT, b->loc);
	ring_slot_state_item(m, &s, bar, slot);
	ir_group_add_expr(m, ir_state_group(m, &s, m->ctx->kw.parity), ph);
	ir_b_insert(b, ir_op_build(m, &s));
}

void
ring_arrive(IrBuilder *b, IrValue *bar, IrValue *slot)
{
	IrModule *m = b->m;
	IrOpState s;
	ir_state_init(&s, IR_OP_MBAR_ARRIVE, b->loc);
	ring_slot_state_item(m, &s, bar, slot);
	ir_group_add_expr(m, ir_state_group(m, &s, m->ctx->kw.count), ring_C(m, 1));
	ir_b_insert(b, ir_op_build(m, &s));
}

void
ring_copies(IrBuilder *b, const RingPlan *p, IrValue *k, IrValue **ring, IrValue *full,
	    IrValue *slot, IrStr *tags)
{
	IrModule *m = b->m;
	IrCtx *c = m->ctx;
	for (int i = 0; i < p->nload; i++) {
		IrOp *ld = p->load[i];
		IrOpState s;
		ir_state_init(&s, IR_OP_COPY_ASYNC, ld->loc);
		ring_copy_item(m, ld, &ld->item[0], ir_state_item(m, &s, IR_IT_VALUE), p->iv, k);
		ring_slot_item(m, ir_state_group(m, &s, c->kw.into), ring[i], slot);
		ring_slot_item(m, ir_state_group(m, &s, c->kw.arrive), full, slot);
		if (tags) {
			IrItem *src = &ld->item[0];
			IrItem *it = ir_group_add(m, ir_state_group(m, &s, c->kw.tag), IR_IT_CALL);
			it->s = tags[i];
			it->ncoord = src->ncoord;
			it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord) * (size_t)src->ncoord);
			for (int j = 0; j < src->ncoord; j++) {
				it->coord[j].e = ring_copy_expr(m, ld, src->coord[j].e, p->iv, k);
				it->coord[j].len = -1;
			}
		}
		ir_b_insert(b, ir_op_build(m, &s));
	}
}

IrValue *
ring_pred(IrBuilder *b, IrExpr *e, IrStr name)
{
	IrOpState s;
	ir_state_init(&s, IR_OP_INDEX, b->loc);
	ir_state_item(b->m, &s, IR_IT_EXPR)->e = e;
	ir_state_result(b->m, &s, b->m->ctx->t_i1, name);
	return &ir_b_insert(b, ir_op_build(b->m, &s))->res[0];
}

IrValue *
ring_grid_op(IrBuilder *b, IrOpcode code, int d)
{
	IrModule *m = b->m;
	IrOpState s;
	ir_state_init(&s, code, b->loc);
	if (d >= 0)
		ir_group_add_expr(m, ir_state_group(m, &s, m->ctx->kw.dim), ring_C(m, d));
	ir_state_result(m, &s, m->ctx->t_index, NULL);
	return &ir_b_insert(b, ir_op_build(m, &s))->res[0];
}

void
ring_tag_funcs(IrModule *m, const RingPlan *p, IrStr *tags)
{
	IrCtx *c = m->ctx;
	IrBuilder b;
	ir_builder_before(&b, m, p->loop);
	for (int i = 0; i < p->nload; i++) {
		IrOp *ld = p->load[i];
		IrStr base = ld->res[0].name ? ld->res[0].name : "x";
		tags[i] = NULL;
		for (int n = 0; !tags[i]; n++) {
			IrStr t = ir_intern_cstr(c, n ? ir_ctx_printf(c, "%s.tile%d", base, n)
			                              : ir_ctx_printf(c, "%s.tile", base));
			if (!ir_symbol_lookup(c, p->loop, t))
				tags[i] = t;
		}
		IrOpState s;
		ir_state_init(&s, IR_OP_TAG_FUNC, ld->loc);
		IrItem *it = ir_state_item(m, &s, IR_IT_DECL);
		it->s = tags[i];
		it->nparam = ld->item[0].ncoord;
		it->param = ir_arena_alloc(&m->arena, sizeof(IrValue *) * (size_t)it->nparam);
		for (int j = 0; j < it->nparam; j++) {
			it->param[j] = ir_param_new(m, c->t_index,
			                            ir_intern_cstr(c, ir_ctx_printf(c, "i%d", j)), ld->loc);
			it->param[j]->index = j;
		}
		/* The label stands for the tile the load reads: region(%T[%i0 : rows, ...]), which
		 * the checker proves every copy tagged with it reads (a copy at the wrong
		 * coordinates is then an error, not a kernel computing something else). */
		const IrItem *src = &ld->item[0];
		IrValue *t = src->kind == IR_IT_VALUE ? ir_op_value(ld, src->opnd) : NULL;
		IrType *tt = ld->res[0].type;
		if (t && t->type->kind == IR_TY_TENSOR && tt->kind == IR_TY_TILE &&
		    tt->rank == src->ncoord && t->type->rank == src->ncoord) {
			IrItem *r = ir_group_add(m, ir_state_group(m, &s, c->kw.region), IR_IT_VALUE);
			r->pv = t;
			r->suffix = true;
			r->ncoord = src->ncoord;
			r->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord) * (size_t)src->ncoord);
			for (int j = 0; j < src->ncoord; j++)
				r->coord[j] = (IrCoord){ring_V(m, it->param[j]), tt->dims[j]};
		}
		ir_b_insert(&b, ir_op_build(m, &s));
	}
}

void
ring_holds(IrBuilder *b, const RingPlan *p, int i, IrValue *k, IrValue *ring, IrValue *slot,
	   IrStr tag)
{
	IrOp *ld = p->load[i];
	IrModule *m = b->m;
	IrCtx *c = m->ctx;
	IrOpState s;
	ir_state_init(&s, IR_OP_TAG_ASSERT, ld->loc);
	IrGroup *g = ir_state_group(m, &s, c->kw.holds);
	ring_slot_item(m, g, ring, slot);
	IrItem *it = ir_group_add(m, g, IR_IT_CALL);
	const IrItem *src = &ld->item[0];
	it->s = tag;
	it->ncoord = src->ncoord;
	it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord) * (size_t)src->ncoord);
	for (int j = 0; j < src->ncoord; j++) {
		it->coord[j].e = ring_copy_expr(m, ld, src->coord[j].e, p->iv, k);
		it->coord[j].len = -1;
	}
	ir_b_insert(b, ir_op_build(m, &s));
}
