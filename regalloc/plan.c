/* plan.c — register tiles over the structured IR: their live intervals (loops keep what they
 * read and carry live throughout; a pending async product holds its registers until its wait),
 * the classes of values that share registers, a linear scan giving each class a range of
 * per-thread slots, each role's peak, and the budgets (SPEC 5.10). */
#include <stdlib.h>
#include <string.h>

#include "../lower/layout.h"
#include "regalloc.h"

/* ---- tile sizes ---- */

/* The warps a group's tiles are distributed over: the role's (one replica), or the CTA's. */
static int64_t
group_warps(IrCtx *c, IrOp *kernel, IrOp *role, const TargetInfo *t)
{
	if (role)
		return ir_role_info(c, role).warps;
	IrAttr *th = ir_op_attr(kernel, c->kw.threads);
	int64_t threads = th && th->kind == IR_ATTR_INT ? th->i : 0;
	return t && t->warp ? threads / t->warp : 1;
}

static IrOp *
def_op(IrValue *v)
{
	if (v->kind == IR_VAL_RESULT)
		return v->op;
	return v->block && v->block->parent ? v->block->parent->parent : NULL;
}

static IrOp *
value_role(IrValue *v)
{
	IrOp *d = def_op(v);
	if (!d)
		return NULL;
	return d->code == IR_OP_ROLE ? d : ir_role_of(d);
}

typedef struct Blocked {
	IrCtx *c;
	IrOp *kernel;
	const TargetInfo *t;
	int32_t *regs;
	bool ok;
} Blocked;

static void
blocked_one(Blocked *b, IrValue *v)
{
	if (!ir_type_is_reg_tile(v->type))
		return;
	IrType *ty = v->type;
	int64_t w = group_warps(b->c, b->kernel, value_role(v), b->t);
	if (w < 1)
		w = 1;
	int wb = 0;
	while (((int64_t)1 << (wb + 1)) <= w)
		wb++;
	LowerLayout l;
	int lane_bits = lower_log2(b->t && b->t->warp ? b->t->warp : 32);
	if (lower_layout_blocked(&l, ty->rank, ty->dims, lower_elem_bytes(ty->elem), lane_bits, wb))
		b->regs[v->id] = lower_layout_regs32(&l, lower_elem_bytes(ty->elem));
	else
		b->ok = false; /* no layout holds it: the lowering's error */
}

static bool
blocked_walk(IrOp *op, void *ud)
{
	Blocked *b = ud;
	for (int i = 0; i < op->nres; i++)
		blocked_one(b, &op->res[i]);
	for (int r = 0; r < op->nreg; r++)
		for (int i = 0; i < op->reg[r].block->narg; i++)
			blocked_one(b, op->reg[r].block->arg[i]);
	return true;
}

bool
ra_blocked_regs(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs)
{
	Blocked b = {c, kernel, t, regs, true};
	ir_walk_op(kernel, blocked_walk, &b);
	return b.ok;
}

/* ---- program points ---- */

typedef struct Build {
	RaPlan *p;
	const int32_t *regs;
	int *pt, *end;    /* by op id: the op's point, and the point after its regions */
	int *tile_of;     /* by value id: RaTile index or -1 */
	IrVec points;     /* IrOp* */
	int *parent;      /* union-find over tiles */
	uint64_t **cbits; /* by union-find root: the class's live half-points */
	int tw;           /* words of a set of tiles */
} Build;

static void
number_block(Build *b, IrBlock *blk)
{
	for (IrOp *op = blk->first; op; op = op->next) {
		b->pt[op->id] = b->points.len;
		ir_vec_push(b->p->c->al, &b->points, &op, sizeof op);
		for (int r = 0; r < op->nreg; r++)
			number_block(b, op->reg[r].block);
		if (op->nreg) {
			b->end[op->id] = b->points.len;
			ir_vec_push(b->p->c->al, &b->points, &op, sizeof op);
		} else {
			b->end[op->id] = b->pt[op->id];
		}
	}
}

static IrValue *item_val(IrOp *op, int i);

/* Results the lowering makes without registers of their own: ave.zeros and ave.full repeat one
 * value in every register (a constant, or a scalar), ave.bcast and ave.tag reuse their operand's
 * registers (see `alias_of`). */
static bool
view(IrValue *v)
{
	if (v->kind != IR_VAL_RESULT)
		return false;
	IrOpcode k = v->op->code;
	return k == IR_OP_ZEROS || k == IR_OP_FULL || k == IR_OP_BCAST || k == IR_OP_TAG;
}

/* An ave.bcast or ave.tag result reads its operand's registers for as long as it lives. */
static IrValue *
alias_of(IrValue *v)
{
	if (v->kind != IR_VAL_RESULT || (v->op->code != IR_OP_BCAST && v->op->code != IR_OP_TAG))
		return NULL;
	return item_val(v->op, 0);
}

static void
add_tile(Build *b, IrValue *v)
{
	RaPlan *p = b->p;
	if (!ir_type_is_reg_tile(v->type) || b->tile_of[v->id] >= 0)
		return;
	RaTile t = {0};
	t.v = v;
	t.regs = b->regs[v->id] > 0 && !view(v) ? b->regs[v->id] : 0;
	t.start = t.end = -1;
	IrOp *role = value_role(v);
	for (int g = 0; g < p->ngroup; g++)
		if (p->group[g].role == role)
			t.group = g;
	t.live = ir_arena_alloc(&p->arena, sizeof(uint64_t) * (size_t)p->hw);
	b->tile_of[v->id] = p->ntile;
	p->tile[p->ntile++] = t;
}

static bool
collect(IrOp *op, void *ud)
{
	Build *b = ud;
	for (int i = 0; i < op->nres; i++)
		add_tile(b, &op->res[i]);
	for (int r = 0; r < op->nreg; r++)
		for (int i = 0; i < op->reg[r].block->narg; i++)
			add_tile(b, op->reg[r].block->arg[i]);
	return true;
}

/* ---- liveness: backward over the structured program, sets of tiles ---- */

static bool
bit(const uint64_t *s, int i)
{
	return s[i / 64] >> (i % 64) & 1;
}

static void
set_bit(uint64_t *s, int i)
{
	s[i / 64] |= (uint64_t)1 << (i % 64);
}

static void
clear_bit(uint64_t *s, int i)
{
	s[i / 64] &= ~((uint64_t)1 << (i % 64));
}

static uint64_t *
new_set(Build *b)
{
	return ir_arena_alloc(&b->p->arena, sizeof(uint64_t) * (size_t)b->tw);
}

static void
copy_set(Build *b, uint64_t *d, const uint64_t *s)
{
	memcpy(d, s, sizeof(uint64_t) * (size_t)b->tw);
}

static void
or_set(Build *b, uint64_t *d, const uint64_t *s)
{
	for (int i = 0; i < b->tw; i++)
		d[i] |= s[i];
}

static void
add_value(Build *b, uint64_t *s, IrValue *v)
{
	int t = v ? b->tile_of[v->id] : -1;
	if (t >= 0)
		set_bit(s, t);
}

static void
del_value(Build *b, uint64_t *s, IrValue *v)
{
	int t = v ? b->tile_of[v->id] : -1;
	if (t >= 0)
		clear_bit(s, t);
}

/* Every tile of set s is live at half-point h. */
static void
mark(Build *b, int h, const uint64_t *s)
{
	for (int w = 0; w < b->tw; w++)
		for (uint64_t x = s[w]; x; x &= x - 1)
			set_bit(b->p->tile[w * 64 + __builtin_ctzll(x)].live, h);
}

/* The tiles an op reads. An ave.mma.wait also reads the register operands of the asynchronous
 * product it retires, other than the accumulator (the pending result holds those registers):
 * the product reads them until then. An asynchronous product no wait retires reads them to the
 * end of its block. */
static void
uses(Build *b, IrOp *op, uint64_t *s)
{
	for (int i = 0; i < op->nopnd; i++)
		add_value(b, s, ir_op_value(op, i));
	IrValue *t = op->code == IR_OP_MMA_WAIT ? item_val(op, 0) : NULL;
	if (t && t->kind == IR_VAL_RESULT && t->op->code == IR_OP_MMA_ASYNC)
		for (int i = 0; i < 2; i++)
			add_value(b, s, item_val(t->op, i));
	if (op->next)
		return;
	for (IrOp *q = op->parent->first; q; q = q->next) {
		if (q->code != IR_OP_MMA_ASYNC)
			continue;
		bool waited = false;
		for (IrUse *u = q->res[0].uses; u; u = u->next)
			waited |= u->user->code == IR_OP_MMA_WAIT;
		for (int i = 0; !waited && i < 2; i++)
			add_value(b, s, item_val(q, i));
	}
}

static void block_live(Build *b, IrBlock *blk, uint64_t *live);

typedef struct Carry {
	Build *b;
	IrOp *loop;
	uint64_t *set;
} Carry;

/* Adds the tiles op reads that are defined outside the loop. */
static bool
carried(IrOp *op, void *ud)
{
	Carry *cy = ud;
	for (int i = 0; i < op->nopnd; i++) {
		IrValue *v = ir_op_value(op, i);
		IrOp *d = def_op(v);
		if (cy->b->tile_of[v->id] >= 0 && d && !ir_op_is_ancestor(cy->loop, d))
			add_value(cy->b, cy->set, v);
	}
	return true;
}

/* live: the tiles live after op in, those live before it out; marks op's half-points. An op reads
 * its operands in the first half of its point and writes its results in the second. An op with
 * regions has its results live at both halves of its exit point; a region's values are read by
 * its yield, at the yield's point. */
static void
op_live(Build *b, IrOp *op, uint64_t *live)
{
	int p = b->pt[op->id], e = b->end[op->id];
	uint64_t *res = new_set(b);
	for (int i = 0; i < op->nres; i++)
		add_value(b, res, &op->res[i]);
	if (!op->nreg) {
		uint64_t *s = new_set(b);
		copy_set(b, s, live);
		or_set(b, s, res);
		mark(b, 2 * p + 1, s);
		for (int i = 0; i < op->nres; i++)
			del_value(b, live, &op->res[i]);
		uses(b, op, live);
		mark(b, 2 * p, live);
		return;
	}
	uint64_t *s = new_set(b), *out = new_set(b), *in = new_set(b);
	copy_set(b, s, live);
	or_set(b, s, res);
	mark(b, 2 * e + 1, s);
	mark(b, 2 * e, s);
	copy_set(b, out, live);
	for (int i = 0; i < op->nres; i++)
		del_value(b, out, &op->res[i]);
	if (op->code == IR_OP_FOR) {
		/* What the next iteration reads is live at the back edge: every tile the loop reads
		 * that is defined outside it. */
		IrBlock *body = op->reg[0].block;
		uint64_t *carry = new_set(b), *body_out = new_set(b);
		Carry cy = {b, op, carry};
		ir_walk(body, carried, &cy);
		copy_set(b, body_out, out);
		or_set(b, body_out, carry);
		copy_set(b, in, body_out);
		block_live(b, body, in);
		copy_set(b, s, in);
		or_set(b, s, out);
		for (int i = 0; i < body->narg; i++)
			add_value(b, s, body->arg[i]);
		mark(b, 2 * p + 1, s);
		for (int i = 0; i < body->narg; i++)
			del_value(b, in, body->arg[i]);
	} else {
		/* Branches (ave.if), roles, ave.warp_specialize: each region from what is live
		 * after the op; an ave.if without else passes `out` through. */
		uint64_t *r = new_set(b);
		for (int k = 0; k < op->nreg; k++) {
			copy_set(b, r, out);
			block_live(b, op->reg[k].block, r);
			or_set(b, in, r);
		}
		if (op->code == IR_OP_IF && op->nreg < 2)
			or_set(b, in, out);
		copy_set(b, s, in);
		or_set(b, s, out);
		mark(b, 2 * p + 1, s);
	}
	copy_set(b, live, in);
	or_set(b, live, out);
	uses(b, op, live);
	mark(b, 2 * p, live);
}

static void
block_live(Build *b, IrBlock *blk, uint64_t *live)
{
	for (IrOp *op = blk->last; op; op = op->prev)
		op_live(b, op, live);
}

/* ---- classes ---- */

static int
find(Build *b, int x)
{
	while (b->parent[x] != x)
		x = b->parent[x] = b->parent[b->parent[x]];
	return x;
}

static bool
intersect(const uint64_t *x, const uint64_t *y, int n)
{
	for (int i = 0; i < n; i++)
		if (x[i] & y[i])
			return true;
	return false;
}

/* Coalesces the classes of x and y when they are tiles of one group and size and no member of one
 * is live where a member of the other is. */
static bool
coalesce(Build *b, IrValue *x, IrValue *y)
{
	RaPlan *p = b->p;
	if (!x || !y || b->tile_of[x->id] < 0 || b->tile_of[y->id] < 0)
		return false;
	int tx = b->tile_of[x->id], ty = b->tile_of[y->id];
	if (p->tile[tx].group != p->tile[ty].group || p->tile[tx].regs != p->tile[ty].regs ||
	    !p->tile[tx].regs)
		return false;
	int rx = find(b, tx), ry = find(b, ty);
	if (rx == ry)
		return true;
	if (intersect(b->cbits[rx], b->cbits[ry], p->hw))
		return false;
	b->parent[ry] = rx;
	for (int i = 0; i < p->hw; i++)
		b->cbits[rx][i] |= b->cbits[ry][i];
	return true;
}

static IrValue *
item_val(IrOp *op, int i)
{
	return i < op->nitem && op->item[i].kind == IR_IT_VALUE && !op->item[i].suffix
	           ? ir_item_value(op, &op->item[i])
	           : NULL;
}

/* Marks a tile (and its class) live at half-point h. */
static void
extend(Build *b, IrValue *v, int h)
{
	int t = v ? b->tile_of[v->id] : -1;
	if (t < 0)
		return;
	set_bit(b->p->tile[t].live, h);
	set_bit(b->cbits[find(b, t)], h);
}

/* An iter_arg shares registers with its initial value, the value yielded to it and the loop's
 * result; an ave.if result with the values its branches yield; an accumulator with the product.
 * Where they cannot (both live at once), a copy joins them: an iter_arg the yield does not share
 * is written at the yield, an ave.if result at each yield it does not share. */
static bool
unify(IrOp *op, void *ud)
{
	Build *b = ud;
	if (op->code == IR_OP_FOR) {
		IrBlock *blk = op->reg[0].block;
		IrOp *y = blk->last;
		for (int i = 0; i < op->nres; i++) {
			IrValue *arg = blk->arg[i + 1];
			coalesce(b, arg, &op->res[i]);
			coalesce(b, item_val(op, 3 + i), arg);
			if (y && y->code == IR_OP_YIELD && !coalesce(b, arg, item_val(y, i))) {
				extend(b, arg, 2 * b->pt[y->id]);
				extend(b, arg, 2 * b->pt[y->id] + 1);
			}
		}
	} else if (op->code == IR_OP_IF) {
		for (int r = 0; r < op->nreg; r++) {
			IrOp *y = op->reg[r].block->last;
			for (int i = 0; y && y->code == IR_OP_YIELD && i < op->nres; i++)
				if (!coalesce(b, &op->res[i], item_val(y, i))) {
					extend(b, &op->res[i], 2 * b->pt[y->id]);
					extend(b, &op->res[i], 2 * b->pt[y->id] + 1);
				}
		}
	} else if (op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC) {
		coalesce(b, item_val(op, 2), &op->res[0]);
	} else if (op->code == IR_OP_MMA_WAIT) {
		coalesce(b, item_val(op, 0), &op->res[0]);
	}
	return true;
}

/* ---- groups ---- */

static bool
collect_roles(IrOp *op, void *ud)
{
	RaPlan *p = ud;
	if (op->code != IR_OP_ROLE)
		return true;
	RaGroup *g = &p->group[p->ngroup++];
	IrRoleInfo ri = ir_role_info(p->c, op);
	g->role = op;
	g->ws = ir_op_parent_op(op);
	g->name = ri.name;
	g->warps = ri.warps;
	g->replicas = ri.replicas;
	g->threads = ri.warps * (p->t ? p->t->warp : 32);
	g->given = ri.regs > 0;
	g->budget = ri.regs > 0 ? (int)ri.regs : p->launch;
	return true;
}

static bool
count_op(IrOp *op, void *ud)
{
	(void)op;
	++*(uint32_t *)ud;
	return true;
}

static bool
count_roles(IrOp *op, void *ud)
{
	if (op->code == IR_OP_ROLE)
		++*(int *)ud;
	return true;
}

/* ---- allocation ---- */

typedef struct Range {
	int lo, hi; /* [lo, hi) */
} Range;

static int
cmp_range(const void *a, const void *b)
{
	const Range *x = a, *y = b;
	return x->lo - y->lo;
}

static int
cmp_class(const void *a, const void *b, void *ud)
{
	const RaClass *cls = ud;
	int x = *(const int *)a, y = *(const int *)b;
	if (cls[x].regs != cls[y].regs)
		return cls[y].regs - cls[x].regs;
	if (cls[x].start != cls[y].start)
		return cls[x].start - cls[y].start;
	return x - y;
}

/* Largest first (then in order of first live point), each class takes the lowest range of slots
 * that no class already placed and live at some same point holds: first fit over the
 * interference graph, whose size order keeps small tiles from splitting the range a large one
 * needs. */
static void
allocate(RaPlan *p)
{
	int *order = ir_arena_alloc(&p->arena, sizeof(int) * (size_t)(p->nclass + 1));
	Range *busy = ir_arena_alloc(&p->arena, sizeof(Range) * (size_t)(p->nclass + 1));
	for (int i = 0; i < p->nclass; i++)
		order[i] = i;
	qsort_r(order, (size_t)p->nclass, sizeof(int), cmp_class, p->cls);
	for (int oi = 0; oi < p->nclass; oi++) {
		RaClass *k = &p->cls[order[oi]];
		if (!k->regs)
			continue;
		int nb = 0;
		for (int oj = 0; oj < oi; oj++) {
			RaClass *o = &p->cls[order[oj]];
			if (o->group == k->group && o->regs && intersect(o->live, k->live, p->hw))
				busy[nb++] = (Range){o->slot, o->slot + o->regs};
		}
		qsort(busy, (size_t)nb, sizeof(Range), cmp_range);
		int at = 0;
		for (int i = 0; i < nb && busy[i].lo < at + k->regs; i++)
			if (busy[i].hi > at)
				at = busy[i].hi;
		k->slot = at;
		RaGroup *g = &p->group[k->group];
		if (at + k->regs > g->slots)
			g->slots = at + k->regs;
	}
}

bool
ra_class_live(const RaPlan *p, int k, int half)
{
	return half >= 0 && half < 2 * p->npoint && bit(p->cls[k].live, half);
}

IrOp *
ra_point_op(const RaPlan *p, int half)
{
	return half >= 0 && half / 2 < p->npoint ? p->point[half / 2] : NULL;
}

static void
peaks(RaPlan *p)
{
	for (int g = 0; g < p->ngroup; g++)
		p->group[g].peak_at = -1;
	int *sum = ir_arena_alloc(&p->arena, sizeof(int) * (size_t)(p->ngroup + 1));
	for (int h = 0; h < 2 * p->npoint; h++) {
		memset(sum, 0, sizeof(int) * (size_t)p->ngroup);
		for (int i = 0; i < p->nclass; i++)
			if (bit(p->cls[i].live, h))
				sum[p->cls[i].group] += p->cls[i].regs;
		for (int g = 0; g < p->ngroup; g++)
			if (sum[g] > p->group[g].peak) {
				p->group[g].peak = sum[g];
				p->group[g].peak_at = h;
			}
	}
}

/* The first and last half-points of a set (-1 when empty). */
static void
bounds(const uint64_t *s, int nh, int *first, int *last)
{
	*first = *last = -1;
	for (int h = 0; h < nh; h++)
		if (bit(s, h)) {
			if (*first < 0)
				*first = h;
			*last = h;
		}
}

/* Registers per thread a kernel's code may use where no setmaxnreg budget applies: on NVIDIA the
 * register file over the threads in whole granules, at most the per-thread maximum (256 threads:
 * 255, which ptxas may use, where the setmaxnreg pool counts 248); elsewhere the entry budget. */
static int
launch_regs(const TargetInfo *t, int64_t threads)
{
	if (!t || t->vendor != TARGET_VENDOR_NVIDIA || threads <= 0)
		return ra_entry_regs(t, threads);
	int64_t g = t->reg_granule > 0 ? t->reg_granule : 1, e = t->regfile / threads / g * g;
	return (int)(e < t->max_regs ? e : t->max_regs);
}

void
ra_plan_build(RaPlan *p, IrCtx *c, IrOp *kernel, const TargetInfo *t, const int32_t *regs,
              int reserve)
{
	memset(p, 0, sizeof *p);
	p->c = c;
	p->kernel = kernel;
	p->t = t;
	p->reserve = reserve;
	ir_arena_init(&p->arena, c->al);
	IrAttr *th = ir_op_attr(kernel, c->kw.threads);
	p->threads = th && th->kind == IR_ATTR_INT ? th->i : 0;
	p->entry = ra_entry_regs(t, p->threads);
	p->launch = launch_regs(t, p->threads);
	uint32_t n = ir_number_values(kernel); /* the caller's numbering: it is deterministic */
	int nroles = 0;
	ir_walk_op(kernel, count_roles, &nroles);
	p->group = ir_arena_alloc(&p->arena, sizeof(RaGroup) * (size_t)(nroles + 1));
	RaGroup *cta = &p->group[p->ngroup++];
	cta->name = kernel->item[0].s;
	cta->threads = p->threads;
	cta->warps = t && t->warp ? p->threads / t->warp : 1;
	cta->replicas = 1;
	cta->budget = p->launch;
	ir_walk_op(kernel, collect_roles, p);

	Build b = {0};
	b.p = p;
	b.regs = regs;
	uint32_t nops = 0;
	ir_walk_op(kernel, count_op, &nops);
	b.pt = ir_arena_alloc(&p->arena, sizeof(int) * (nops + 1));
	b.end = ir_arena_alloc(&p->arena, sizeof(int) * (nops + 1));
	b.tile_of = ir_arena_alloc(&p->arena, sizeof(int) * (n + 1));
	for (uint32_t i = 0; i <= n; i++)
		b.tile_of[i] = -1;
	number_block(&b, kernel->reg[0].block);
	p->npoint = b.points.len;
	p->hw = (2 * p->npoint + 63) / 64 + 1;
	p->point = ir_arena_alloc(&p->arena, sizeof(IrOp *) * (size_t)(p->npoint + 1));
	if (p->npoint)
		memcpy(p->point, b.points.data, sizeof(IrOp *) * (size_t)p->npoint);
	ir_vec_free(c->al, &b.points, sizeof(IrOp *));
	p->tile = ir_arena_alloc(&p->arena, sizeof(RaTile) * (n + 1));
	ir_walk_op(kernel, collect, &b);

	b.tw = (p->ntile + 63) / 64 + 1;
	uint64_t *live = new_set(&b);
	block_live(&b, kernel->reg[0].block, live);
	/* Views keep what they alias live: latest first, so chains reach their source. */
	for (int i = p->ntile - 1; i >= 0; i--) {
		IrValue *src = alias_of(p->tile[i].v);
		int s = src ? b.tile_of[src->id] : -1;
		for (int w = 0; s >= 0 && w < p->hw; w++)
			p->tile[s].live[w] |= p->tile[i].live[w];
	}
	b.parent = ir_arena_alloc(&p->arena, sizeof(int) * (size_t)(p->ntile + 1));
	b.cbits = ir_arena_alloc(&p->arena, sizeof(uint64_t *) * (size_t)(p->ntile + 1));
	for (int i = 0; i < p->ntile; i++) {
		b.parent[i] = i;
		b.cbits[i] = ir_arena_alloc(&p->arena, sizeof(uint64_t) * (size_t)p->hw);
		memcpy(b.cbits[i], p->tile[i].live, sizeof(uint64_t) * (size_t)p->hw);
	}
	ir_walk_op(kernel, unify, &b);

	p->cls = ir_arena_alloc(&p->arena, sizeof(RaClass) * (size_t)(p->ntile + 1));
	int *cls_of_root = ir_arena_alloc(&p->arena, sizeof(int) * (size_t)(p->ntile + 1));
	for (int i = 0; i < p->ntile; i++)
		cls_of_root[i] = -1;
	for (int i = 0; i < p->ntile; i++) {
		RaTile *tl = &p->tile[i];
		bounds(tl->live, 2 * p->npoint, &tl->start, &tl->end);
		int r = find(&b, i);
		if (cls_of_root[r] < 0) {
			cls_of_root[r] = p->nclass;
			RaClass *k = &p->cls[p->nclass++];
			k->group = tl->group;
			k->rep = i;
			k->live = b.cbits[r];
			bounds(k->live, 2 * p->npoint, &k->start, &k->end);
		}
		RaClass *k = &p->cls[cls_of_root[r]];
		tl->cls = cls_of_root[r];
		if (tl->regs > k->regs)
			k->regs = tl->regs;
	}
	allocate(p);
	peaks(p);
}

bool
ra_plan_sized(RaPlan *p, IrCtx *c, IrOp *kernel, const TargetInfo *t, RaTileRegsFn sizes,
              int reserve)
{
	uint32_t n = ir_number_values(kernel);
	int32_t *regs = malloc(sizeof(int32_t) * (n + 1));
	for (uint32_t i = 0; i <= n; i++)
		regs[i] = -1;
	bool sized = sizes ? sizes(c, kernel, t, regs) : ra_blocked_regs(c, kernel, t, regs);
	if (sized) {
		ra_plan_build(p, c, kernel, t, regs, reserve);
		p->sizes = sizes ? "lowering" : "blocked";
	}
	free(regs);
	return sized;
}

void
ra_plan_free(RaPlan *p)
{
	ir_arena_free(&p->arena);
}

/* ---- budgets ---- */

static int
round8(int64_t v)
{
	return (int)((v + 7) / 8 * 8);
}

/* The tile (member of class k) live at half-point h, for messages: the member whose own interval
 * holds h, else the class's first member. */
static RaTile *
live_member(RaPlan *p, int k, int h)
{
	for (int i = 0; i < p->ntile; i++)
		if (p->tile[i].cls == k && p->tile[i].start <= h && h <= p->tile[i].end)
			return &p->tile[i];
	return &p->tile[p->cls[k].rep];
}

static const char *
vname(const IrValue *v)
{
	return v->name ? v->name : "<unnamed>";
}

static IrLoc
vloc(const IrValue *v)
{
	return v->kind == IR_VAL_RESULT ? v->op->loc : v->loc;
}

static void
group_desc(const RaGroup *g, char *buf, size_t n)
{
	if (g->role)
		snprintf(buf, n, "role '@%s'", g->name);
	else
		snprintf(buf, n, "kernel '@%s'", g->name);
}

/* The error for a group whose allocation exceeds its budget: at the op where the peak occurs,
 * the live tiles with their sizes, the sum and the budget. */
static void
over_budget(RaPlan *p, int gi)
{
	RaGroup *g = &p->group[gi];
	int h = g->peak_at >= 0 ? g->peak_at : 0;
	IrOp *at = ra_point_op(p, h);
	char who[160], live[1024], budget[96];
	group_desc(g, who, sizeof who);
	int len = 0, nlive = 0;
	live[0] = 0;
	for (int k = 0; k < p->nclass; k++) {
		if (p->cls[k].group != gi || !ra_class_live(p, k, h))
			continue;
		RaTile *t = live_member(p, k, h);
		if (len < (int)sizeof live - 64)
			len += snprintf(live + len, sizeof live - (size_t)len, "%s'%%%s' (%d)",
			                nlive ? " + " : "", vname(t->v), p->cls[k].regs);
		nlive++;
	}
	if (g->given)
		snprintf(budget, sizeof budget, "its budget regs(%d)", g->budget);
	else if (g->chosen)
		snprintf(budget, sizeof budget, "the largest budget it can have, %d", g->budget);
	else
		snprintf(budget, sizeof budget, "the %d registers per thread target '%s' gives it",
		         g->budget, p->t ? p->t->name : "?");
	char extent[64] = "";
	if (g->slots > g->peak)
		snprintf(extent, sizeof extent, " (laid out in slots, %d)", g->slots);
	IrDiag *d = ir_diag_begin(p->c, IR_SEV_ERROR, at ? at->loc : p->kernel->loc,
	                          "%s needs %d registers per thread for the register tiles live at "
	                          "'%s': %s = %d%s, over %s",
	                          who, g->slots > g->peak ? g->slots : g->peak,
	                          at ? ir_op_name(at->code) : "?", live, g->peak, extent, budget);
	d->code = "regalloc";
	if (p->nospill && *p->nospill && (p->nospill_group < 0 || p->nospill_group == gi))
		ir_diag_note(p->c, d, at ? at->loc : p->kernel->loc,
		             "%s", p->nospill);
	for (int k = 0; k < p->nclass; k++) {
		if (p->cls[k].group != gi || !ra_class_live(p, k, h))
			continue;
		RaTile *t = live_member(p, k, h);
		ir_diag_note(p->c, d, vloc(t->v), "'%%%s' (%s) takes %d registers per thread",
		             vname(t->v), ir_type_str(p->c, t->v->type), p->cls[k].regs);
	}
	ir_diag_emit(p->c, d);
}

/* Writes regs(n) into a role, after its warps group (the order the language reference uses). */
static void
set_role_regs(IrModule *m, IrOp *role, int regs)
{
	IrCtx *c = m->ctx;
	IrGroup *g = ir_op_group(role, c->kw.regs);
	if (g) {
		g->item[0].e = ir_expr_const(m, regs);
		return;
	}
	IrGroup *ng = ir_arena_alloc(&m->arena, sizeof(IrGroup) * (size_t)(role->ngroup + 1));
	int at = 0, j = 0;
	for (int i = 0; i < role->ngroup; i++)
		if (role->group[i].kw == c->kw.warps)
			at = i + 1;
	for (int i = 0; i < role->ngroup + 1; i++) {
		if (i == at) {
			IrGroup *r = &ng[i];
			r->kw = c->kw.regs;
			r->loc = role->loc;
			ir_group_add_expr(m, r, ir_expr_const(m, regs));
			continue;
		}
		ng[i] = role->group[j++];
	}
	role->group = ng;
	role->ngroup++;
}

/* ra_check_roles on the budgets the roles state, reporting nothing. */
static bool
quietly_check_roles(RaPlan *p, IrOp *ws)
{
	IrDiagHold held;
	ir_diag_hold(p->c, &held, NULL, NULL);
	RaRoles rr;
	bool ok = ra_check_roles(p->c, p->t, p->threads, ws, false, &rr);
	ir_diag_release(p->c, &held);
	return ok;
}

/* The smallest budgets the roles' tiles allow do not fit the pool the launch gives. */
static void
pool_error(RaPlan *p, IrOp *ws, int64_t used, int64_t pool)
{
	char roles[1024];
	int len = 0;
	roles[0] = 0;
	for (int g = 1; g < p->ngroup; g++) {
		RaGroup *r = &p->group[g];
		if (r->ws != ws || len > (int)sizeof roles - 96)
			continue;
		len +=
		    snprintf(roles + len, sizeof roles - (size_t)len,
		             "%s'@%s' %d x %lld threads (%s%d registers of tiles)", len ? ", " : "",
		             r->name, r->budget, (long long)(r->threads * r->replicas),
		             r->given ? "given; " : "", r->slots);
	}
	IrDiag *d = ir_diag_begin(
	    p->c, IR_SEV_ERROR, ws->loc,
	    "the roles' register tiles need budgets of %s, %lld registers in all, "
	    "but target '%s' gives this %lld-thread kernel %d per thread at launch "
	    "(%lld in all)",
	    roles, (long long)used, p->t->name, (long long)p->threads, p->entry, (long long)pool);
	d->code = "regalloc";
	ir_diag_emit(p->c, d);
}

/* Budgets of one ave.warp_specialize that need more than the pool (a dry run, before
 * spilling): the chosen role with the most registers of tiles gets what the pool leaves it, so
 * that it is the group over its budget and what it keeps in shared memory makes the room. */
static void
squeeze(RaPlan *p, IrOp *ws, int64_t used, int64_t pool)
{
	RaGroup *big = NULL;
	for (int g = 1; g < p->ngroup; g++) {
		RaGroup *r = &p->group[g];
		if (r->ws == ws && r->chosen && r->slots &&
		    (!big || r->slots * r->threads * r->replicas >
		                 big->slots * big->threads * big->replicas))
			big = r;
	}
	if (!big)
		return;
	int64_t per = big->threads * big->replicas;
	int64_t left = pool - (used - (int64_t)big->budget * per);
	int fit = left > 0 ? (int)(left / per / 8 * 8) : 0;
	big->budget = fit < 24 ? 24 : fit;
}

/* A role setmaxnreg can give a budget: whole, aligned warpgroups (SPEC 5.7). */
static bool
whole_warpgroups(IrCtx *c, IrOp *role)
{
	IrRoleInfo ri = ir_role_info(c, role);
	return role && ri.warps % 4 == 0 && ri.first_warp % 4 == 0;
}

bool
ra_plan_budgets(RaPlan *p, IrModule *m)
{
	const TargetInfo *t = p->t;
	bool ok = true;
	if (t && t->setmaxnreg && m) {
		/* Per ave.warp_specialize: the pool is what the launch gives the whole CTA. */
		for (int w = 1; w < p->ngroup; w++) {
			IrOp *ws = p->group[w].ws;
			bool first = true;
			for (int v = 1; v < w; v++)
				if (p->group[v].ws == ws)
					first = false;
			if (!first)
				continue;
			int64_t pool = (int64_t)p->entry * p->threads, used = 0;
			bool any = false;
			/* Each role its slots and the reserve; where that exceeds the pool, its
			 * slots alone (the reserve is a wish, the tiles are not). */
			for (int reserve = p->reserve; reserve >= 0; reserve = reserve ? 0 : -1) {
				used = 0;
				for (int g = 1; g < p->ngroup; g++) {
					RaGroup *r = &p->group[g];
					if (r->ws != ws)
						continue;
					if (!r->given && whole_warpgroups(p->c, r->role)) {
						int need = round8(r->slots + reserve);
						r->budget = need < 24    ? 24
						            : need > 256 ? 256
						                         : need;
						r->chosen = any = true;
					}
					used += (int64_t)r->budget * r->threads * r->replicas;
				}
				if (used <= pool)
					break;
			}
			if (!any)
				continue;
			/* Budgets a role states that break the rules are reported where the rules
			 * are applied (the verifier, the backends): choose nothing next to them. */
			RaRoles rr;
			if (!quietly_check_roles(p, ws)) {
				for (int g = 1; g < p->ngroup; g++)
					if (p->group[g].ws == ws && p->group[g].chosen) {
						p->group[g].chosen = false;
						p->group[g].budget = p->launch;
					}
				continue;
			}
			if (used > pool) {
				/* A role whose tiles exceed 256 is the error to report (below). */
				bool capped = false;
				for (int g = 1; g < p->ngroup; g++)
					capped |= p->group[g].ws == ws && p->group[g].chosen &&
					          p->group[g].slots > p->group[g].budget;
				if (p->dry && !capped)
					squeeze(p, ws, used, pool);
				else if (!capped)
					pool_error(p, ws, used, pool);
				ok = false;
				continue;
			}
			/* Spare registers go to the roles that hold tiles, 8 at a time, largest
			 * first. */
			for (bool grew = true; grew;) {
				grew = false;
				for (int g = 1; g < p->ngroup; g++) {
					RaGroup *r = &p->group[g];
					int64_t cost = 8 * r->threads * r->replicas;
					if (r->ws != ws || !r->chosen || !r->slots ||
					    r->budget + 8 > 256 || used + cost > pool)
						continue;
					r->budget += 8;
					used += cost;
					grew = true;
				}
			}
			if (p->dry)
				continue;
			for (int g = 1; g < p->ngroup; g++)
				if (p->group[g].ws == ws && p->group[g].chosen)
					set_role_regs(m, p->group[g].role, p->group[g].budget);
			if (!ra_check_roles(p->c, t, p->threads, ws, false, &rr))
				ok = false;
		}
	} else if (t && t->vendor == TARGET_VENDOR_AMD) {
		/* One budget for every wave: the largest regs(n) a role states, else the entry. */
		int maxr = 0;
		for (int g = 1; g < p->ngroup; g++)
			if (p->group[g].given && p->group[g].budget > maxr)
				maxr = p->group[g].budget;
		for (int g = 0; g < p->ngroup; g++)
			p->group[g].budget = maxr ? maxr : p->launch;
	} else {
		/* Without setmaxnreg (or with nothing to write into) a role runs with the launch's.
		 */
		for (int g = 1; g < p->ngroup; g++)
			if (!p->group[g].given || !t || !t->setmaxnreg)
				p->group[g].budget = p->launch;
	}
	if (t && t->vendor == TARGET_VENDOR_AMD && t->regfile) {
		int need = 0;
		for (int g = 0; g < p->ngroup; g++)
			if (p->group[g].slots + p->reserve > need)
				need = p->group[g].slots + p->reserve;
		need = round8(need);
		int budget = p->group[0].budget;
		if (need > budget)
			need = budget;
		int w = need ? t->regfile / need : t->max_waves_per_simd;
		p->waves_per_eu = w > t->max_waves_per_simd ? t->max_waves_per_simd : w < 1 ? 1 : w;
	}
	for (int g = 0; g < p->ngroup; g++) {
		RaGroup *r = &p->group[g];
		if (!t || !t->regfile || !r->slots)
			continue;
		if (r->slots > r->budget) {
			if (!p->dry)
				over_budget(p, g);
			ok = false;
		}
	}
	return ok;
}

/* ---- JSON ---- */

typedef struct SpillJson {
	const RaPlan *p;
	FILE *f;
	int g, n;
	int64_t bytes;
} SpillJson;

/* One ave.smem.store into a spill buffer (regalloc's) by group sj->g. */
static bool
spill_json(IrOp *op, void *ud)
{
	SpillJson *sj = ud;
	const RaPlan *p = sj->p;
	if (op->code != IR_OP_SMEM_STORE || ir_role_of(op) != p->group[sj->g].role)
		return true;
	IrValue *buf = ir_item_value(op, &ir_op_group(op, p->c->kw.into)->item[0]);
	if (!ir_spill_buffer(p->c, buf))
		return true;
	IrValue *v = ir_item_value(op, &op->item[0]);
	int64_t bytes = ir_type_bytes(buf->type);
	unsigned to = 0;
	for (IrUse *u = buf->uses; u; u = u->next)
		if (u->user->code == IR_OP_SMEM_LOAD && (!to || u->user->loc.line < to))
			to = u->user->loc.line;
	if (!sj->n++)
		fprintf(sj->f, ", \"spills\": [");
	else
		fprintf(sj->f, ", ");
	fprintf(sj->f, "{\"value\": ");
	ir_json_str(sj->f, ir_ctx_printf(p->c, "%%%s", vname(v)));
	fprintf(sj->f, ", \"buffer\": ");
	ir_json_str(sj->f, ir_ctx_printf(p->c, "%%%s", vname(buf)));
	fprintf(sj->f, ", \"bytes\": %lld, \"from_line\": %u, \"to_line\": %u}",
	        (long long)bytes, op->loc.line, to);
	sj->bytes += bytes;
	return true;
}

/* The tiles regalloc keeps in shared memory for group g: "spills" and "spilled_bytes". */
static void
spills_json(const RaPlan *p, FILE *f, int g)
{
	SpillJson sj = {p, f, g, 0, 0};
	ir_walk_op(p->kernel, spill_json, &sj);
	if (sj.n)
		fprintf(f, "]");
	fprintf(f, ", \"spilled_bytes\": %lld", (long long)sj.bytes);
}

char *
ra_plan_json(const RaPlan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		ir_unreachable("open_memstream failed");
	fprintf(f, "{\"proved\": %s, \"sizes\": ", p->proved ? "true" : "false");
	ir_json_str(f, p->sizes ? p->sizes : "lowering");
	if (p->waves_per_eu)
		fprintf(f, ", \"waves_per_eu\": %d", p->waves_per_eu);
	fprintf(f, ", \"groups\": [");
	int out = 0;
	for (int g = 0; g < p->ngroup; g++) {
		const RaGroup *r = &p->group[g];
		if (!r->role && p->ngroup > 1) {
			bool any = false;
			for (int k = 0; k < p->nclass; k++)
				any |= p->cls[k].group == g;
			if (!any)
				continue; /* the CTA holds no tile outside the roles */
		}
		fprintf(f, "%s{\"%s\": ", out++ ? ", " : "", r->role ? "role" : "kernel");
		ir_json_str(f, r->name);
		fprintf(f, ", \"budget\": %d, \"peak\": %d, \"slots\": %d", r->budget, r->peak,
		        r->slots);
		IrOp *at = r->peak_at >= 0 ? ra_point_op(p, r->peak_at) : NULL;
		if (at) {
			const IrFile *fl = ir_ctx_file(p->c, at->loc.file);
			fprintf(f,
			        ", \"point\": {\"op\": \"%s\", \"file\": ", ir_op_name(at->code));
			ir_json_str(f, fl && fl->name ? fl->name : "");
			fprintf(f, ", \"line\": %u, \"col\": %u}", at->loc.line, at->loc.col);
		}
		spills_json(p, f, g);
		fprintf(f, ", \"tiles\": [");
		int nt = 0;
		for (int i = 0; i < p->ntile; i++) {
			const RaTile *t = &p->tile[i];
			if (t->group != g)
				continue;
			fprintf(f, "%s{\"value\": ", nt++ ? ", " : "");
			ir_json_str(f, ir_ctx_printf(p->c, "%%%s", vname(t->v)));
			fprintf(f, ", \"regs\": %d, \"slot\": %d}", t->regs, p->cls[t->cls].slot);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}");
	fclose(f);
	return buf;
}
