/* warp_specialize.c — the `warp-specialize` pass (SPEC 5.7, docs/passes.md): on a target with
 * per-role register budgets (setmaxnreg: sm_90a), a loop with `stages = N` at a kernel's top
 * level whose body is tile loads feeding one ave.mma into a carried accumulator becomes the
 * producer/consumer kernel of examples/gemm_ws.ave:
 *
 *   %x.ring = ave.smem.alloc : !ave.ring<N x tile>       (one per load, swizzled for the MMA)
 *   %k.full = ave.mbar.alloc count(1), %k.empty = ave.mbar.alloc count(C) : !ave.mbar<N>
 *   ave.tag.func @x.tile(%i0: index, ...)                (one per load: its coordinates)
 *   ave.warp_specialize {
 *     ave.role @producer warps(4) regs(40) issue(1) {
 *       for %u = 0 to T { s = u mod N
 *         wait %k.empty[s] parity((u floordiv N + 1) mod 2); expect_tx %k.full[s] bytes(B)
 *         copy.async tile(k) into(%x.ring[s]) arrive(%k.full[s]) tag(@x.tile(coords(k))) } }
 *     ave.role @consumer warps(4) regs(R) replicate(C) {
 *       %wg = ave.replica_id; acc = zeros (M/C rows)
 *       for %u = 0 to T { s = u mod N; wait %k.full[s] parity((u floordiv N) mod 2)
 *         tag.assert holds(%x.ring[s], @x.tile(coords(k)))
 *         t = mma.async slice(A slot, rows wg*M/C) , B slot, acc
 *         inflight 0 (default): acc = mma.wait t pending(0); arrive %k.empty[s]
 *         inflight 1: acc = mma.wait t pending(u == T-1 ? 0 : 1); if u > 0: arrive %k.empty[(u-1) mod N] }
 *       inflight 1: if T > 0: arrive %k.empty[(T-1) mod N]
 *       the loop's epilogue (elementwise ops and stores of the accumulator), its rows split }
 *   }
 *
 * with k = lb + u * step and T the trip count. `inflight=1` is the form that keeps one wgmma
 * group in flight where an MMA may accumulate into a pending tile; SPEC 5.5 lets only
 * ave.mma.wait use one, so each MMA needs the finished result of the one before, its pending(1)
 * retires it at once (wgmma.wait_group 0) and the form only releases each slot an iteration
 * later. It is built on request and proved, not by default. The kernel's threads become 128 * (C + 1): its
 * C warpgroups (threads / 128 unless `consumers` says otherwise) consume, a new one produces.
 * The budgets are the producer's 40 and what the pool rule leaves each consumer, a multiple of
 * 8 (at most 256). The result is checked at once (check-invariants): a specialized kernel that
 * does not prove is an internal error, never a kernel compiled anyway. A loop it does not take
 * gets a remark saying why, and `pipeline` may still take it.
 *
 * mode=pingpong (persistent kernels): two consumers, each on whole tiles, take alternate tiles of
 * the roles' walk over pairs of tiles (tile 2 * pair + wg); each has a ring of its own (slot
 * wg * N + pos mod N in allocations of 2N, `empty` counting one arrival), filled by replica wg
 * of a producer of two replicas of two warps (one warpgroup). The epilogue runs under
 * `tile < tiles`: an odd count's last pair has a second tile that runs and is not stored. The
 * consumers take turns: consumer wg waits on order[wg] (parity (turn + 1 + wg) mod 2, turn its
 * tiles so far) before its k-loop and arrives on order[1 - wg] after it, so their main loops
 * alternate and each epilogue runs beside the other's main loop. */
#include <string.h>

#include "../regalloc/regalloc.h"
#include "ring.h"

#define PRODUCER_REGS 40

typedef struct WsOpts {
	int64_t consumers; /* 0: the kernel's threads / 128 */
	int64_t inflight;  /* async MMAs left in flight across an iteration: 0 or 1 */
	int64_t fault;     /* tests only: 1 builds the consumers' waits with the wrong parity */
	int64_t group;     /* a persistent walk's tiles: rows of tiles per group (1: row order) */
	const TargetInfo *target;
	bool changed;
	bool failed;
	bool walked;    /* some kernel's roles walk its tiles */
	bool pingpong;  /* mode=pingpong: two consumers on alternate tiles of the walk */
	IrModule *orig; /* the input as written, copied before the first rewrite */
	/* Tile sizes for the register check (IrPassOpts.tile_regs; NULL: the blocked estimate). */
	bool (*tile_regs)(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs);
	IrOp *dead[8]; /* kernels put back by a copy (visit): their loops are no longer the module's */
	int ndead;
} WsOpts;

/* A persistent kernel's tile walk (`persistent = N`): each role walks the logical grid itself,
 *
 *   ave.for %t = %cta to %tiles step %nctas iter_args(%base = 0) { program ids from %t;
 *     the role's k-loop, its ring position carried from %base; ave.yield the position after }
 *
 * so barriers are set up once, phases go on across tiles and the producer fills the next
 * tile's slots while the consumers run this tile's epilogue. With inflight=1 the consumers'
 * `u > 0` release is by the position (`pos > 0`: a tile's first k gives back the previous
 * tile's last slot) and the one after the k-loop moves after the walk, on its last position. */
typedef struct Walk {
	bool on;
	bool pairs; /* ping-pong: the walk goes over pairs of tiles, replica wg of a role takes
	             * tile 2 * pair + wg of each (a tile past the last of an odd count is run
	             * but not stored) */
	IrValue *cta, *nctas, *grid[3], *tiles; /* at the kernel's top */
	IrValue *npairs;                        /* (tiles + 1) floordiv 2, with pairs */
	IrValue *order; /* ping-pong: the consumers' turn barriers, 2 of count 1 */
	bool dim[3];                            /* grid dimensions the kernel reads */
	IrOp *dep[64];                          /* top-level ops computed from program ids */
	int ndep;
	int64_t group; /* tiles in groups of this many rows (x) for L2 reuse; 1: x fastest */
} Walk;

/* Marks which ops after loop f depend on its results (`dep`, by op number in the kernel's top
 * block) and says why they cannot move into the consumers with their rows split, or NULL. */
typedef struct Epi {
	IrOp *op[256];
	int n;
} Epi;

static bool
in_epi(const Epi *e, const IrValue *v, const IrOp *f)
{
	if (v->kind != IR_VAL_RESULT)
		return false;
	if (v->op == f)
		return true;
	for (int i = 0; i < e->n; i++)
		if (e->op[i] == v->op)
			return true;
	return false;
}

/* True when v is defined before loop f (a kernel argument, or an op of the kernel's top block
 * ahead of f): visible where the roles are placed. */
static bool
before_loop(const IrValue *v, IrOp *f)
{
	if (v->kind == IR_VAL_ARG)
		return ir_block_parent_op(v->block) == ir_kernel_of(f);
	if (v->kind != IR_VAL_RESULT || v->op->parent != f->parent)
		return false;
	for (IrOp *o = v->op; o; o = o->next)
		if (o == f)
			return true;
	return false;
}

static bool
rows_tile(const IrType *t, int64_t rows)
{
	return ir_type_is_reg_tile(t) && !t->layout && t->rank == 2 && t->dims[0] == rows;
}

/* True when op computes each row of its tile results from the same rows of its tile operands
 * (all of `rows` rows), so each consumer can run it on its own rows: elementwise ops, ave.zeros
 * and ave.full, ave.reduce and ave.bcast along dim 1. */
static bool
keeps_rows(IrCtx *c, IrOp *op, int64_t rows)
{
	if (op->nreg)
		return false;
	bool ew = ir_op_has_trait(c, op, IR_TRAIT_ELEMWISE) || op->code == IR_OP_ZEROS ||
	          op->code == IR_OP_FULL;
	if (op->code == IR_OP_REDUCE || op->code == IR_OP_BCAST) {
		IrGroup *d = ir_op_group(op, c->kw.dim);
		int64_t dim;
		ew = d && d->nitem == 1 && ir_expr_eval_const(d->item[0].e, &dim) && dim == 1;
	}
	if (!ew)
		return false;
	for (int i = 0; i < op->nopnd; i++) {
		IrType *t = ir_op_value(op, i)->type;
		if (t->kind == IR_TY_TILE && !rows_tile(t, rows))
			return false;
	}
	for (int i = 0; i < op->nres; i++)
		if (op->res[i].type->kind == IR_TY_TILE && !rows_tile(op->res[i].type, rows))
			return false;
	return true;
}

/* The row coordinate of the tensor an ave.load reads or an ave.store writes, plus `off`. */
static void
row_plus(IrModule *m, const IrOp *op, const IrGroup *g, IrItem *it, void *ud)
{
	/* A load's one item is the tensor it reads; a store's `into` the one it writes. */
	bool row = op->code == IR_OP_LOAD ? !g && it->kind == IR_IT_VALUE && it->ncoord == 2
	                                  : g && g->kw == m->ctx->kw.into;
	if (row)
		it->coord[0].e = ir_expr_bin(m, IR_EX_ADD, it->coord[0].e, ud);
}

/* Rebuilds ave.store or ave.load `op` with `off` added to the row coordinate of the tensor it
 * writes or reads. */
static void
shift_rows(IrModule *m, IrOp *op, IrExpr *off)
{
	ring_rebuild(m, op, row_plus, off);
}

/* A tile every consumer needs whole: one row (a bias row, before ave.bcast along dim 0). */
static bool
row_tile(const IrType *t)
{
	return ir_type_is_reg_tile(t) && !t->layout && t->rank == 2 && t->dims[0] == 1;
}

/* An op on one-row tiles only (each consumer computes it whole), elementwise. */
static bool
keeps_row(IrCtx *c, IrOp *op)
{
	if (op->nreg || !(ir_op_has_trait(c, op, IR_TRAIT_ELEMWISE) || op->code == IR_OP_ZEROS ||
	                  op->code == IR_OP_FULL))
		return false;
	for (int i = 0; i < op->nopnd; i++)
		if (ir_op_value(op, i)->type->kind == IR_TY_TILE && !row_tile(ir_op_value(op, i)->type))
			return false;
	for (int i = 0; i < op->nres; i++)
		if (!row_tile(op->res[i].type))
			return false;
	return true;
}

/* ave.bcast along dim 0 of a one-row tile to the loop's rows: each consumer makes its rows. */
static bool
bcast_rows(IrCtx *c, IrOp *op, int64_t rows)
{
	IrGroup *d = ir_op_group(op, c->kw.dim);
	int64_t dim;
	return op->code == IR_OP_BCAST && d && d->nitem == 1 &&
	       ir_expr_eval_const(d->item[0].e, &dim) && dim == 0 &&
	       row_tile(ir_op_value(op, 0)->type) && rows_tile(op->res[0].type, rows);
}

/* A load of two coordinates (the row one is shifted for a consumer's rows). */
static bool
load_2d(IrOp *op)
{
	const IrItem *it = &op->item[0];
	return op->code == IR_OP_LOAD && it->ncoord == 2 && it->coord[0].len < 0;
}

typedef struct Nested {
	const Epi *e;
	const IrOp *f, *top;
	bool uses;
} Nested;

static bool
nested_use(IrOp *op, void *ud)
{
	Nested *n = ud;
	for (int i = 0; op != n->top && i < op->nopnd; i++)
		n->uses |= in_epi(n->e, ir_op_value(op, i), n->f);
	return !n->uses;
}

/* The ops after loop f that move into the consumers: those that use its results, and the tiles
 * they combine them with (a residual loaded after the loop, a bias row broadcast along dim 0),
 * each consumer on its rows. Why not, or NULL. */
static const char *
epilogue(IrCtx *c, IrOp *f, int64_t rows, Epi *e)
{
	for (IrOp *op = f->next; op; op = op->next) {
		if (op->code == IR_OP_RETURN)
			break;
		bool dep = false;
		for (int i = 0; i < op->nopnd; i++)
			dep |= in_epi(e, ir_op_value(op, i), f);
		bool tile = false;
		for (int i = 0; i < op->nres; i++)
			tile |= op->res[i].type->kind == IR_TY_TILE;
		if (!dep && !tile) {
			Nested n = {e, f, op, false};
			if (op->nreg)
				ir_walk_op(op, nested_use, &n);
			if (n.uses)
				return ir_ctx_printf(c, "'%s' after the loop uses its result inside its "
						     "region (the pass moves the ops of the kernel body "
						     "that use it, not ops nested in others)",
						     ir_opinfo(c, op->code)->name);
			if (!ir_op_has_trait(c, op, IR_TRAIT_PURE))
				return ir_ctx_printf(c, "'%s' after the loop has effects and does not "
						     "use its result", ir_opinfo(c, op->code)->name);
			continue;
		}
		bool ok;
		if (op->code == IR_OP_STORE) {
			IrGroup *into = ir_op_group(op, c->kw.into);
			if (!into || into->nitem != 1 || into->item[0].ncoord != 2 ||
			    into->item[0].coord[0].len >= 0)
				return "a store of the result does not name two coordinates";
			ok = rows_tile(ir_op_value(op, op->item[0].opnd)->type, rows);
		} else if (op->code == IR_OP_LOAD) {
			ok = load_2d(op) && (rows_tile(op->res[0].type, rows) || row_tile(op->res[0].type));
		} else {
			ok = keeps_rows(c, op, rows) || keeps_row(c, op) || bcast_rows(c, op, rows);
		}
		if (!ok)
			return dep ? ir_ctx_printf(c, "the loop's result feeds '%s', which cannot be "
						   "split by rows", ir_opinfo(c, op->code)->name)
			           : ir_ctx_printf(c, "'%s' after the loop makes a tile that cannot be "
						   "split by rows", ir_opinfo(c, op->code)->name);
		for (int i = 0; i < op->nopnd; i++) {
			IrValue *v = ir_op_value(op, i);
			if (in_epi(e, v, f))
				continue;
			if (ir_type_is_reg_tile(v->type))
				return ir_ctx_printf(c, "'%s' after the loop combines its result with "
						     "a tile made before it", ir_opinfo(c, op->code)->name);
			if (!before_loop(v, f))
				return ir_ctx_printf(c, "'%s' after the loop uses '%%%s', which is computed "
						     "after the loop by an op that does not use its "
						     "result (compute it before the loop)",
						     ir_opinfo(c, op->code)->name, v->name ? v->name : "?");
		}
		if (e->n == (int)(sizeof e->op / sizeof e->op[0]))
			return "the epilogue is too long";
		e->op[e->n++] = op;
	}
	return NULL;
}

/* A moved epilogue op, on a consumer's rows: stores and loads of the loop's rows shifted. */
static void
shift_epilogue(IrModule *m, IrOp *op, int64_t M, IrExpr *off)
{
	if (!off)
		return;
	if (op->code == IR_OP_STORE || (op->code == IR_OP_LOAD && rows_tile(op->res[0].type, M)))
		shift_rows(m, op, ir_expr_clone(m, off));
}

/* A consumer's tiles have `rows` rows, laid out over one warpgroup's 128 threads, which takes
 * a power of two; why not, or NULL. */
static const char *
pow2_rows(IrCtx *c, int64_t rows)
{
	if (rows & (rows - 1))
		return ir_ctx_printf(c, "each consumer warpgroup would hold %lld rows, not a power of "
				     "two (a register tile over one warpgroup's 128 threads needs one)",
				     (long long)rows);
	return NULL;
}

/* The consumers (the kernel's warpgroups unless the option says) and the rows each owns of the
 * loop's M rows, a multiple of 64 (wgmma's M); why not, or NULL. */
static const char *
split(IrCtx *c, const RingPlan *p, const WsOpts *o, int64_t M, int64_t *consumers, int64_t *rows)
{
	int64_t threads = 0;
	IrAttr *th = ir_op_attr(p->kernel, c->kw.threads);
	if (th && th->kind == IR_ATTR_INT)
		threads = th->i;
	if (o->pingpong) {
		/* Two consumers, each on whole tiles. */
		if (o->consumers && o->consumers != 2)
			return ir_ctx_printf(c, "ping-pong has two consumer warpgroups, not %lld",
					     (long long)o->consumers);
		*consumers = 2;
		*rows = M;
		if (M % 64)
			return ir_ctx_printf(c, "its %lld rows are not a multiple of 64 (one consumer "
					     "warpgroup's tile in ping-pong)", (long long)M);
		return pow2_rows(c, M);
	}
	*consumers = o->consumers ? o->consumers : threads / 128;
	if (!o->consumers && (threads % 128 || !*consumers))
		return ir_ctx_printf(c, "the kernel's %lld threads are not whole warpgroups",
				     (long long)threads);
	*rows = M / *consumers;
	if (M % *consumers || *rows % 64)
		return ir_ctx_printf(c, "its %lld rows do not split into %lld consumer%s of a "
				     "multiple of 64 rows", (long long)M, (long long)*consumers,
				     *consumers == 1 ? "" : "s");
	return pow2_rows(c, *rows);
}

/* Why the plan's loop cannot be split into roles, or NULL; fills what the rewrite needs. */
typedef struct Shape {
	IrOp *mma;
	int a, b;        /* the loads feeding the MMA's A and B */
	IrOp *init;      /* ave.zeros of the accumulator */
	int64_t consumers, rows; /* C, and the rows each consumer owns */
	Epi epi;
} Shape;

static const char *
shape(IrModule *m, const RingPlan *p, const WsOpts *o, Shape *s)
{
	IrCtx *c = m->ctx;
	IrOp *f = p->loop;
	IrBlock *body = f->reg[0].block;
	memset(s, 0, sizeof *s);
	s->a = s->b = -1;
	for (IrOp *op = body->first; op; op = op->next) {
		if (op->code == IR_OP_LOAD || op->code == IR_OP_YIELD)
			continue;
		if (op->code != IR_OP_MMA || s->mma)
			return ir_ctx_printf(c, "its body has '%s' besides its loads and one ave.mma",
					     ir_opinfo(c, op->code)->name);
		s->mma = op;
	}
	if (!s->mma)
		return "its body has no ave.mma";
	for (int i = 0; i < p->nload; i++) {
		if (!p->direct[i])
			return "a loaded tile is used other than as an ave.mma operand";
		IrValue *v = &p->load[i]->res[0];
		if (ir_op_value(s->mma, s->mma->item[0].opnd) == v)
			s->a = i;
		else if (ir_op_value(s->mma, s->mma->item[1].opnd) == v)
			s->b = i;
	}
	if (s->a < 0 || s->b < 0 || p->nload != 2)
		return "the MMA's operands are not two loads of the loop";
	if (body->narg != 2 || f->nres != 1)
		return "it carries values besides the accumulator";
	IrOp *y = body->last;
	if (ir_op_value(s->mma, s->mma->item[2].opnd) != body->arg[1] || y->nopnd != 1 ||
	    ir_op_value(y, 0) != &s->mma->res[0])
		return "the MMA does not accumulate into the carried value";
	IrValue *init = ir_op_value(f, f->item[3].opnd);
	if (init->kind != IR_VAL_RESULT || init->op->code != IR_OP_ZEROS)
		return "the accumulator does not start from ave.zeros";
	s->init = init->op;
	IrType *acc = f->res[0].type;
	if (acc->layout || acc->rank != 2)
		return "the accumulator has a layout attribute";
	const char *why = split(c, p, o, acc->dims[0], &s->consumers, &s->rows);
	if (why)
		return why;
	return epilogue(c, f, acc->dims[0], &s->epi);
}

/* The budgets: the producer's, and what the pool rule leaves each consumer (a multiple of 8,
 * at most 256). */
static int64_t
consumer_regs(const TargetInfo *t, int64_t consumers)
{
	int64_t entry = ra_entry_regs(t, 128 * (consumers + 1));
	int64_t r = (entry * (consumers + 1) - PRODUCER_REGS) / consumers / 8 * 8;
	return r > 256 ? 256 : r;
}

static IrOp *
role(IrModule *m, IrBlock *ws, const char *name, int64_t warps, int64_t regs, int64_t issue,
     int64_t replicate, IrRegion *body, IrLoc loc)
{
	IrCtx *c = m->ctx;
	IrOpState s;
	ir_state_init(&s, IR_OP_ROLE, loc);
	ir_state_item(m, &s, IR_IT_SYMBOL)->s = ir_intern_cstr(c, name);
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.warps), ring_C(m, warps));
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.regs), ring_C(m, regs));
	if (issue)
		ir_group_add_expr(m, ir_state_group(m, &s, c->kw.issue), ring_C(m, issue));
	if (replicate > 1)
		ir_group_add_expr(m, ir_state_group(m, &s, c->kw.replicate), ring_C(m, replicate));
	ir_state_region(m, &s, body);
	IrOp *r = ir_op_build(m, &s);
	ir_block_append(ws, r);
	return r;
}

/* `ave.for %u = 0 to T step 1` with `ninit` carried values; its block is returned in *blk. */
static IrOpState
loop_state(IrModule *m, const RingPlan *p, IrRegion **reg, IrValue **u, const char *uname)
{
	IrCtx *c = m->ctx;
	IrOpState s;
	ir_state_init(&s, IR_OP_FOR, p->loop->loc);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_C(m, 0);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_trip(m, p);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_C(m, 1);
	*reg = ir_region_new(m);
	*u = ir_block_add_arg(m, (*reg)->block, c->t_index,
	                      ring_fresh(c, p->kernel, p->iv->name, uname), p->loop->loc);
	return s;
}

/* The ring position of the loop's iteration: u itself, or (in a tile walk) a value the loop
 * carries from `base`, the position at the tile's start, added last to its state. */
static IrValue *
loop_pos(IrModule *m, IrOpState *ls, IrBlock *lb, IrValue *base, const RingPlan *p)
{
	if (!base)
		return lb->arg[0];
	IrCtx *c = m->ctx;
	ir_state_value(m, ls, base);
	ir_state_result(m, ls, c->t_index, NULL);
	return ir_block_add_arg(m, lb, c->t_index, ring_fresh(c, p->kernel, p->iv->name, "pos"),
	                        p->loop->loc);
}

/* The loop's ave.yield of the n values vals[], or of the values the yield `y` yields (then
 * erased), and of pos + 1 when it carries a position. */
static void
pos_yield(IrBuilder *b, int n, IrValue *const *vals, IrOp *y, IrValue *base, IrValue *pos)
{
	const IrAllocator *al = b->m->ctx->al;
	if (y)
		n = y->nitem;
	IrValue **v = ir_xalloc(al, sizeof *v * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		v[i] = y ? ir_item_value(y, &y->item[i]) : vals[i];
	int nv = n;
	if (base)
		v[nv++] = ir_b_index(b, ring_B(b->m, IR_EX_ADD, ring_V(b->m, pos), ring_C(b->m, 1)));
	ir_b_yield(b, nv, v, true);
	ir_xfree(al, v, sizeof *v * (size_t)(n + 1));
	if (y)
		ir_op_erase(y);
}

/* %k = lb + u * step, or u itself. */
static IrValue *
loop_k(IrBuilder *b, const RingPlan *p, IrValue *u)
{
	IrExpr *e = ring_k(b->m, p, ring_V(b->m, u));
	if (e->kind == IR_EX_VAL)
		return u;
	return ring_named(ir_b_index(b, e), ring_fresh(b->m->ctx, p->kernel, p->iv->name, "k"));
}

/* (u floordiv N + add) mod 2 */
static IrExpr *
parity(IrModule *m, IrValue *u, int64_t N, int64_t add)
{
	return ring_B(m, IR_EX_MOD,
	              ring_B(m, IR_EX_ADD,
	                     ring_B(m, IR_EX_FLOORDIV, ring_V(m, u), ring_C(m, N)), ring_C(m, add)),
	              ring_C(m, 2));
}

/* The slot of ring position `pos`: pos mod N, or with a lane (ping-pong: the replica id) the
 * lane's own ring of N slots, lane * N + pos mod N. */
static IrExpr *
slot_of(IrModule *m, IrExpr *pos, int64_t N, IrValue *lane)
{
	IrExpr *s = ring_B(m, IR_EX_MOD, pos, ring_C(m, N));
	if (!lane)
		return s;
	return ring_B(m, IR_EX_ADD, ring_B(m, IR_EX_MUL, ring_V(m, lane), ring_C(m, N)), s);
}

/* `%wg.<suffix> = ave.replica_id : index` at the end of block `blk`. */
static IrValue *
replica_id(IrModule *m, IrBlock *blk, IrOp *kernel, const char *suffix, IrLoc loc)
{
	IrCtx *c = m->ctx;
	IrBuilder b;
	ir_builder_at_end(&b, m, blk, loc);
	IrType *ity = c->t_index;
	return ring_named(&ir_b_op(&b, IR_OP_REPLICA_ID, 1, &ity, 0, NULL)->res[0],
	                  ring_fresh(c, kernel, ir_intern_cstr(c, "wg"), suffix));
}

/* %d = ave.mma.wait %t pending(n) */
static IrValue *
mma_wait(IrBuilder *b, IrValue *t, int64_t n)
{
	IrModule *m = b->m;
	IrOpState s;
	ir_state_init(&s, IR_OP_MMA_WAIT, b->loc);
	ir_state_value(m, &s, t);
	ir_group_add_expr(m, ir_state_group(m, &s, m->ctx->kw.pending), ring_C(m, n));
	ir_state_result(m, &s, t->type, NULL);
	return &ir_b_insert(b, ir_op_build(m, &s))->res[0];
}

/* ave.if %cond { ave.mbar.arrive %bar[e] count(1) } */
static void
arrive_if(IrBuilder *b, IrValue *cond, IrValue *bar, IrExpr *slot)
{
	IrModule *m = b->m;
	IrRegion *then = ir_region_new(m);
	IrBuilder tb;
	ir_builder_at_end(&tb, m, then->block, b->loc);
	ring_arrive(&tb, bar, ir_b_index(&tb, slot));
	ir_b_yield(&tb, 0, NULL, false);
	IrOpState s;
	ir_state_init(&s, IR_OP_IF, b->loc);
	ir_state_value(m, &s, cond);
	ir_state_region(m, &s, then);
	ir_b_insert(b, ir_op_build(m, &s));
}

/* ---- the tile walk of a persistent kernel ---- */

static bool
dep_of(const Walk *w, const IrValue *v)
{
	for (int i = 0; v->kind == IR_VAL_RESULT && i < w->ndep; i++)
		if (w->dep[i] == v->op)
			return true;
	return false;
}

static bool
moves(IrOp *const *mv, int n, const IrOp *op)
{
	for (int i = 0; i < n; i++)
		if (ir_op_is_ancestor(mv[i], op))
			return true;
	return false;
}

/* Plans the walk of a persistent kernel whose loop and the ops `mv` (the loop, its epilogue,
 * the consumers' prologue) move into the roles: the ops at the kernel's top computed from
 * program ids must be scalars the roles can compute again per tile, used by nothing else.
 * Returns why the kernel cannot walk (w->on stays false), or NULL. */
static const char *
walk_plan(IrCtx *c, IrOp *kernel, IrOp *const *mv, int nmv, Walk *w)
{
	memset(w, 0, sizeof *w);
	if (!ir_op_attr(kernel, c->kw.persistent))
		return NULL;
	if (ir_kernel_walks(kernel))
		return "the kernel walks its tiles itself already (it reads 'ave.cta_id')";
	for (IrOp *op = kernel->reg[0].block->first; op; op = op->next) {
		if (moves(mv, nmv, op))
			continue;
		bool d = op->code == IR_OP_PROGRAM_ID;
		for (int i = 0; i < op->nopnd && !d; i++)
			d = dep_of(w, op->opnd[i].val);
		if (!d)
			continue;
		int64_t x;
		if (op->code == IR_OP_PROGRAM_ID &&
		    ir_expr_eval_const(ir_op_group(op, c->kw.dim)->item[0].e, &x) && x >= 0 && x < 3)
			w->dim[x] = true;
		if (op->nres == 0)
			return ir_ctx_printf(c, "'%s' uses a program id and stays outside the roles",
					     ir_op_name(op->code));
		if (op->nres != 1 || op->nreg || !ir_op_has_trait(c, op, IR_TRAIT_PURE) ||
		    !ir_type_is_int(op->res[0].type))
			return ir_ctx_printf(c, "'%%%s' is computed from a program id before the loop "
					     "and is not a scalar each role can compute per tile",
					     op->nres && op->res[0].name ? op->res[0].name : "?");
		if (w->ndep == (int)(sizeof w->dep / sizeof w->dep[0]))
			return "too many values are computed from the program ids";
		w->dep[w->ndep++] = op;
	}
	/* The k-loop's bounds: a trip count that changes from tile to tile is beyond the
	 * checker's tile loops. */
	IrOp *f = mv[0];
	for (int i = 0; i < f->nopnd; i++)
		if (dep_of(w, f->opnd[i].val) && f->opnd[i].val->kind == IR_VAL_RESULT)
			return ir_ctx_printf(c, "the loop's bounds or starting values depend on a "
					     "program id ('%%%s'), and a k-loop whose trip count changes "
					     "from tile to tile is beyond the checker's tile walks",
					     f->opnd[i].val->name ? f->opnd[i].val->name : "?");
	for (int i = 0; i < w->ndep; i++)
		for (IrUse *u = w->dep[i]->res[0].uses; u; u = u->next)
			if (!(u->user->nres && dep_of(w, &u->user->res[0])) &&
			    !moves(mv, nmv, u->user))
				return ir_ctx_printf(c, "'%%%s', computed from a program id, is used "
						     "outside the loop and its epilogue",
						     w->dep[i]->res[0].name ? w->dep[i]->res[0].name : "?");
	w->group = 1;
	w->on = true;
	return NULL;
}

static IrValue *
scalar_op(IrBuilder *b, IrOpcode code, int dim, const char *name, IrOp *kernel)
{
	IrCtx *c = b->m->ctx;
	return ring_named(ring_grid_op(b, code, dim),
	                  ring_fresh(c, kernel, ir_intern_cstr(c, name), "w"));
}

/* The CTA, the CTAs launched, the logical grid along the dimensions read and its tiles, at the
 * kernel's top before `at`. */
static void
walk_top(IrModule *m, IrOp *kernel, IrOp *at, Walk *w)
{
	IrBuilder b;
	ir_builder_before(&b, m, at);
	w->cta = scalar_op(&b, IR_OP_CTA_ID, -1, "cta", kernel);
	w->nctas = scalar_op(&b, IR_OP_NUM_CTAS, -1, "nctas", kernel);
	w->tiles = NULL;
	static const char *gn[3] = {"gridx", "gridy", "gridz"};
	for (int d = 0; d < 3; d++) {
		if (!w->dim[d])
			continue;
		w->grid[d] = scalar_op(&b, IR_OP_NUM_PROGRAMS, d, gn[d], kernel);
		if (!w->tiles) {
			w->tiles = w->grid[d];
			continue;
		}
		IrType *ity = m->ctx->t_index;
		IrValue *v[2] = {w->tiles, w->grid[d]};
		w->tiles = ring_named(&ir_b_op(&b, IR_OP_MUL, 1, &ity, 2, v)->res[0],
		                      ring_fresh(m->ctx, kernel, ir_intern_cstr(m->ctx, "tiles"), "w"));
	}
	/* A kernel that reads no program id has one tile (the grid the checker assumes for a
	 * dimension never read): copies of it would store the same tile again. */
	if (!w->tiles)
		w->tiles = ring_named(ir_b_index(&b, ring_C(m, 1)),
		                      ring_fresh(m->ctx, kernel, ir_intern_cstr(m->ctx, "tiles"), "w"));
	if (w->pairs)
		w->npairs = ring_named(
		    ir_b_index(&b, ring_B(m, IR_EX_FLOORDIV,
		                          ring_B(m, IR_EX_ADD, ring_V(m, w->tiles), ring_C(m, 1)),
		                          ring_C(m, 2))),
		    ring_fresh(m->ctx, kernel, ir_intern_cstr(m->ctx, "pairs"), "w"));
}

/* The tiles of a 2-D grid in groups of G rows of x for L2 reuse (the order Triton's matmul
 * tutorial and CUTLASS's rasterization use): with n = G * gy tiles per group, tile t is in group
 * t / n, whose first row is f = (t / n) * G and which has s = max(min(gx - f, G), 1) rows; its
 * row is f + (t rem n) rem s and its column (t rem n) / s. Consecutive tiles share a column of B
 * and G rows of A. */
static void
grouped(IrBuilder *b, IrOp *kernel, const Walk *w, IrValue *t, IrValue *pid[3])
{
	IrModule *m = b->m;
	IrCtx *c = m->ctx;
	IrType *ity = c->t_index;
	int64_t G = w->group;
#define NAMED(v, n) ring_named((v), ring_fresh(c, kernel, ir_intern_cstr(c, n), "w"))
	IrValue *n = NAMED(ir_b_index(b, ring_B(m, IR_EX_MUL, ring_V(m, w->grid[1]), ring_C(m, G))),
	                   "group");
	IrValue *tn[2] = {t, n};
	IrValue *g = NAMED(&ir_b_op(b, IR_OP_DIV, 1, &ity, 2, tn)->res[0], "gid");
	IrValue *u = NAMED(&ir_b_op(b, IR_OP_REM, 1, &ity, 2, tn)->res[0], "gpos");
	IrValue *f = NAMED(ir_b_index(b, ring_B(m, IR_EX_MUL, ring_V(m, g), ring_C(m, G))), "first");
	IrValue *left = ir_b_index(b, ring_B(m, IR_EX_SUB, ring_V(m, w->grid[0]), ring_V(m, f)));
	IrValue *gc = ir_b_index(b, ring_C(m, G)), *one = ir_b_index(b, ring_C(m, 1));
	IrValue *lg[2] = {left, gc};
	IrValue *s0 = &ir_b_op(b, IR_OP_MIN, 1, &ity, 2, lg)->res[0];
	IrValue *so[2] = {s0, one};
	IrValue *s = NAMED(&ir_b_op(b, IR_OP_MAX, 1, &ity, 2, so)->res[0], "rows");
	IrValue *us[2] = {u, s};
	IrValue *r = &ir_b_op(b, IR_OP_REM, 1, &ity, 2, us)->res[0];
	pid[0] = NAMED(ir_b_index(b, ring_B(m, IR_EX_ADD, ring_V(m, f), ring_V(m, r))), "pidx");
	pid[1] = NAMED(&ir_b_op(b, IR_OP_DIV, 1, &ity, 2, us)->res[0], "pidy");
#undef NAMED
}

/* Opens a role's walk: its region (the loop's body), the tile %t, the ring position %base at the
 * tile's start, and the program ids and the values computed from them, again from %t (the
 * dimensions read, x fastest: the tile's id along one is the quotient by the ones before
 * (ave.div), modulo its own size (ave.rem) unless it is the last). Uses inside the role are
 * re-pointed by walk_close. A walk over pairs steps through %pair and takes %t = 2 * %pair +
 * lane (the role's replica id); *tile receives %t (tile may be NULL). */
static IrRegion *
walk_open(IrModule *m, IrOp *kernel, const Walk *w, IrValue *lane, IrValue **base, IrValue **tile,
	  IrValue **turn, IrMap *vmap, IrLoc loc)
{
	IrCtx *c = m->ctx;
	IrRegion *r = ir_region_new(m);
	IrValue *t = ir_block_add_arg(
	    m, r->block, c->t_index,
	    ring_fresh(c, kernel, ir_intern_cstr(c, w->pairs ? "pair" : "tile"), "w"), loc);
	*base = ir_block_add_arg(m, r->block, c->t_index,
	                         ring_fresh(c, kernel, ir_intern_cstr(c, "pos"), "w"), loc);
	if (turn)
		*turn = ir_block_add_arg(m, r->block, c->t_index,
		                         ring_fresh(c, kernel, ir_intern_cstr(c, "turn"), "w"), loc);
	IrBuilder b;
	ir_builder_at_end(&b, m, r->block, loc);
	if (w->pairs)
		t = ring_named(ir_b_index(&b, ring_B(m, IR_EX_ADD,
		                                     ring_B(m, IR_EX_MUL, ring_V(m, t), ring_C(m, 2)),
		                                     ring_V(m, lane))),
		               ring_fresh(c, kernel, ir_intern_cstr(c, "tile"), "w"));
	if (tile)
		*tile = t;
	int last = 2;
	while (last >= 0 && !w->dim[last])
		last--;
	IrValue *pid[3] = {NULL, NULL, NULL}, *q = t;
	IrType *ity = c->t_index;
	static const char *pn[3] = {"pidx", "pidy", "pidz"};
	bool group = w->group > 1 && w->dim[0] && w->dim[1] && !w->dim[2];
	if (group)
		grouped(&b, kernel, w, t, pid);
	for (int d = 0; d <= last && !group; d++) {
		if (!w->dim[d])
			continue;
		IrValue *v[2] = {q, w->grid[d]};
		pid[d] = d == last ? q : &ir_b_op(&b, IR_OP_REM, 1, &ity, 2, v)->res[0];
		if (d != last)
			q = &ir_b_op(&b, IR_OP_DIV, 1, &ity, 2, v)->res[0];
		if (pid[d] != t)
			ring_named(pid[d], ring_fresh(c, kernel, ir_intern_cstr(c, pn[d]), "w"));
	}
	for (int i = 0; i < w->ndep; i++) {
		IrOp *op = w->dep[i];
		IrValue *nv;
		if (op->code == IR_OP_PROGRAM_ID) {
			int64_t d = 0;
			ir_expr_eval_const(ir_op_group(op, c->kw.dim)->item[0].e, &d);
			nv = pid[d];
			if (op->res[0].type != c->t_index) {
				IrType *ty = op->res[0].type;
				IrOpState s;
				ir_state_init(&s, IR_OP_INDEX, loc);
				ir_state_item(m, &s, IR_IT_EXPR)->e = ring_V(m, nv);
				ir_state_result(m, &s, ty, NULL);
				nv = &ir_b_insert(&b, ir_op_build(m, &s))->res[0];
			}
		} else {
			nv = &ir_b_insert(&b, ir_op_clone(m, op, vmap))->res[0];
		}
		ring_named(nv, ring_fresh(c, kernel, op->res[0].name ? op->res[0].name
		                                                     : ir_intern_cstr(c, "v"), "w"));
		ir_map_put(vmap, ir_hash_ptr(&op->res[0]), &op->res[0], nv, NULL);
	}
	return r;
}

/* Closes a role's walk into `into`: yields the position after the tile, re-points the role's
 * uses of the values computed from program ids to the walk's own. Returns the tile loop, whose
 * result is the ring position after the role's last tile. */
static IrOp *
walk_close(IrModule *m, const Walk *w, IrRegion *r, IrValue *end, IrValue *turn, IrMap *vmap,
	   IrBlock *into, IrLoc loc)
{
	IrBuilder b;
	ir_builder_at_end(&b, m, r->block, loc);
	IrValue *ys[2] = {end, NULL};
	if (turn)
		ys[1] = ir_b_index(&b, ring_B(m, IR_EX_ADD, ring_V(m, turn), ring_C(m, 1)));
	ir_b_yield(&b, turn ? 2 : 1, ys, true);
	IrOpState s;
	ir_state_init(&s, IR_OP_FOR, loc);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_V(m, w->cta);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_V(m, w->pairs ? w->npairs : w->tiles);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_V(m, w->nctas);
	IrBuilder kb;
	ir_builder_at_end(&kb, m, into, loc);
	IrValue *zero = ir_b_index(&kb, ring_C(m, 0));
	ir_state_value(m, &s, zero);
	ir_state_result(m, &s, m->ctx->t_index, NULL);
	if (turn) {
		ir_state_value(m, &s, zero);
		ir_state_result(m, &s, m->ctx->t_index, NULL);
	}
	ir_state_region(m, &s, r);
	IrOp *loop = ir_b_insert(&kb, ir_op_build(m, &s));
	for (int i = 0; i < w->ndep; i++) {
		IrValue *v = &w->dep[i]->res[0];
		IrValue *nv = ir_map_get(vmap, ir_hash_ptr(v), v, NULL);
		for (IrUse *u = v->uses, *next; u; u = next) {
			next = u->next;
			if (ir_op_is_ancestor(loop, u->user))
				ir_use_set(u, nv);
		}
	}
	return loop;
}

/* The producer role into ws: for each tile, wait for its slot to be empty, expect its bytes,
 * issue the tagged copies. */
static void
producer(IrModule *m, const RingPlan *p, IrValue **ring, IrValue *full, IrValue *empty,
	 IrStr *tags, IrRegion *wsr, const Walk *w)
{
	IrCtx *c = m->ctx;
	IrOp *f = p->loop, *kernel = p->kernel;
	int64_t N = p->stages;
	IrRegion *pr = ir_region_new(m), *wr = NULL;
	IrValue *base = NULL, *lane = NULL;
	IrMap vmap;
	if (w && w->pairs) /* ping-pong: replica wg fills ring wg for consumer wg's tiles */
		lane = replica_id(m, pr->block, kernel, "p", f->loc);
	if (w) {
		ir_map_init(&vmap, c->al);
		wr = walk_open(m, kernel, w, lane, &base, NULL, NULL, &vmap, f->loc);
	}
	IrRegion *lr;
	IrValue *u;
	IrOpState ls = loop_state(m, p, &lr, &u, "p");
	IrValue *pos = loop_pos(m, &ls, lr->block, base, p);
	IrBuilder b;
	ir_builder_at_end(&b, m, lr->block, f->loc);
	IrValue *s = ring_named(ir_b_index(&b, slot_of(m, ring_V(m, pos), N, lane)),
	                        ring_fresh(c, kernel, p->iv->name, "ps"));
	ring_wait(&b, empty, s, parity(m, pos, N, 1));
	ring_expect_tx(&b, full, s, p->bytes);
	ring_copies(&b, p, loop_k(&b, p, u), ring, full, s, tags);
	pos_yield(&b, 0, NULL, NULL, base, pos);
	ir_state_region(m, &ls, lr);
	IrOp *loop = ir_op_build(m, &ls);
	ir_block_append(w ? wr->block : pr->block, loop);
	if (w) {
		walk_close(m, w, wr, &loop->res[0], NULL, &vmap, pr->block, f->loc);
		ir_map_free(&vmap);
	}
	/* Ping-pong: two replicas of two warps, one warpgroup (setmaxnreg's unit) together. */
	if (lane)
		role(m, wsr->block, "producer", 2, PRODUCER_REGS, 1, 2, pr, f->loc);
	else
		role(m, wsr->block, "producer", 4, PRODUCER_REGS, 1, 1, pr, f->loc);
}

/* ---- the general form: any body whose ops keep rows apart ----
 *
 * A body with more than one MMA and elementwise work between them (attention's online softmax)
 * runs in the consumers as written, on each consumer's rows: the loads become ring slots (an
 * MMA's B operand whole, its A operand the consumer's rows of the slot), every register tile has
 * the loop's M rows and each consumer owns M/C of them, ave.mma stays synchronous (it reads the
 * slot and completes), and after the body the consumer gives the slot back. The tiles the loop
 * uses from before it (its carried values' starts, Q loaded once) move into the consumers with
 * their rows split; a load among them reads the consumer's rows. */

typedef struct Rows {
	int64_t consumers, rows, M;
	IrOp *pro[64]; /* ops before the loop that move into the consumers, in order */
	int npro;
	Epi epi;
} Rows;

static bool
is_ring_load(const RingPlan *p, const IrValue *v)
{
	for (int i = 0; i < p->nload; i++)
		if (v == &p->load[i]->res[0])
			return true;
	return false;
}

static bool
in_pro(const Rows *r, const IrOp *op)
{
	for (int i = 0; i < r->npro; i++)
		if (r->pro[i] == op)
			return true;
	return false;
}

/* Why body op `op` cannot run on a consumer's rows, or NULL. */
static const char *
body_op(IrCtx *c, const RingPlan *p, IrOp *op, int64_t M)
{
	if (op->code == IR_OP_LOAD || op->code == IR_OP_YIELD)
		return NULL;
	if (op->code == IR_OP_MMA) {
		IrValue *a = ir_op_value(op, op->item[0].opnd);
		IrValue *b = ir_op_value(op, op->item[1].opnd);
		IrValue *acc = ir_op_value(op, op->item[2].opnd);
		if (!is_ring_load(p, b))
			return "an ave.mma's B operand is not a tile the loop loads";
		if (!is_ring_load(p, a) && !rows_tile(a->type, M))
			return "an ave.mma's A operand has other rows than the loop's tiles";
		if (!rows_tile(acc->type, M) || !rows_tile(op->res[0].type, M))
			return "an ave.mma's accumulator has other rows than the loop's tiles";
		return NULL;
	}
	bool scalar = op->nreg == 0 && ir_op_has_trait(c, op, IR_TRAIT_PURE);
	for (int i = 0; i < op->nopnd && scalar; i++)
		scalar = ir_op_value(op, i)->type->kind != IR_TY_TILE;
	for (int i = 0; i < op->nres && scalar; i++)
		scalar = op->res[i].type->kind != IR_TY_TILE;
	if (scalar || keeps_rows(c, op, M))
		return NULL;
	return ir_ctx_printf(c, "'%s' in its body mixes rows or tiles of other shapes",
			     ir_opinfo(c, op->code)->name);
}

/* Marks the tile ops before loop f that the loop or the marked ops use, in order. */
static const char *
prologue(IrCtx *c, IrOp *f, Rows *r)
{
	/* Backwards: an op moves when a moved op, the loop or its body uses its tile result. */
	for (IrOp *op = f->prev; op; op = op->prev) {
		bool tile = false, used = false;
		for (int i = 0; i < op->nres; i++) {
			if (op->res[i].type->kind != IR_TY_TILE)
				continue;
			tile = true;
			for (IrUse *u = op->res[i].uses; u; u = u->next)
				used |= u->user == f || ir_op_is_ancestor(f, u->user) ||
				        in_pro(r, u->user);
		}
		if (!tile || !used)
			continue;
		for (int i = 0; i < op->nres; i++)
			for (IrUse *u = op->res[i].uses; u; u = u->next)
				if (u->user != f && !ir_op_is_ancestor(f, u->user) &&
				    !in_pro(r, u->user))
					return ir_ctx_printf(c, "'%s' before the loop is also used "
							     "outside it", ir_opinfo(c, op->code)->name);
		bool ok = op->code == IR_OP_LOAD ? rows_tile(op->res[0].type, r->M)
		                                 : keeps_rows(c, op, r->M);
		if (op->code == IR_OP_LOAD && ok) {
			const IrItem *it = &op->item[0];
			ok = it->ncoord == 2 && it->coord[0].len < 0;
		}
		if (!ok)
			return ir_ctx_printf(c, "'%s' before the loop makes a tile that cannot be "
					     "split by rows", ir_opinfo(c, op->code)->name);
		if (r->npro == (int)(sizeof r->pro / sizeof r->pro[0]))
			return "too many tiles are made before the loop";
		memmove(r->pro + 1, r->pro, sizeof(IrOp *) * (size_t)r->npro);
		r->pro[0] = op;
		r->npro++;
	}
	return NULL;
}

static const char *
rows_shape(IrModule *m, const RingPlan *p, const WsOpts *o, Rows *r)
{
	IrCtx *c = m->ctx;
	IrOp *f = p->loop;
	IrBlock *body = f->reg[0].block;
	memset(r, 0, sizeof *r);
	for (int i = 0; i < p->nload; i++)
		if (!p->direct[i])
			return "a loaded tile is used other than as an ave.mma operand";
	if (f->nres < 1)
		return "it carries no tile";
	r->M = f->res[0].type->kind == IR_TY_TILE ? f->res[0].type->dims[0] : 0;
	for (int i = 0; i < f->nres; i++)
		if (!rows_tile(f->res[i].type, r->M))
			return "its carried values are not tiles of the same rows";
	for (IrOp *op = body->first; op; op = op->next) {
		if (op->nreg)
			return ir_ctx_printf(c, "its body has '%s' with regions",
					     ir_opinfo(c, op->code)->name);
		const char *why = body_op(c, p, op, r->M);
		if (why)
			return why;
	}
	const char *why = split(c, p, o, r->M, &r->consumers, &r->rows);
	if (why)
		return why;
	why = epilogue(c, f, r->M, &r->epi);
	if (!why)
		why = prologue(c, f, r);
	return why;
}

typedef struct Swap {
	IrValue *v, *nv;
} Swap;

static void
swap_value(IrModule *m, const IrOp *op, const IrGroup *g, IrItem *it, void *ud)
{
	Swap *w = ud;
	(void)m;
	(void)op;
	if (!g && it->kind == IR_IT_VALUE && it->pv == w->v)
		it->pv = w->nv;
}

/* Rebuilds `op` with its value operand v replaced by nv. */
static void
use_value(IrModule *m, IrOp *op, IrValue *v, IrValue *nv)
{
	ring_rebuild(m, op, swap_value, &(Swap){v, nv});
}

typedef struct Retype {
	IrCtx *c;
	int64_t M, R;
} Retype;

static IrType *
retyped(const Retype *rt, IrType *t)
{
	if (!rows_tile(t, rt->M))
		return t;
	int64_t d[2] = {rt->R, t->dims[1]};
	return ir_type_tile_with_shape(rt->c, t, 2, d);
}

static bool
retype_op(IrOp *op, void *ud)
{
	Retype *rt = ud;
	for (int i = 0; i < op->nres; i++)
		op->res[i].type = retyped(rt, op->res[i].type);
	for (int i = 0; i < op->ntype; i++) /* a yield's declared types */
		op->type[i] = retyped(rt, op->type[i]);
	for (int r = 0; r < op->nreg; r++)
		for (int a = 0; a < op->reg[r].block->narg; a++)
			op->reg[r].block->arg[a]->type = retyped(rt, op->reg[r].block->arg[a]->type);
	return true;
}

/* `ave.slice %ring[slot] rows(wg * R, R)`: a consumer's rows of an A operand's slot. */
static IrValue *
slot_rows(IrBuilder *b, IrValue *ring, IrValue *slot, IrValue *wg, int64_t R)
{
	IrModule *m = b->m;
	IrCtx *c = m->ctx;
	IrType *t = ring->type->elem;
	int64_t dims[2] = {R, t->dims[1]};
	IrOpState ss;
	ir_state_init(&ss, IR_OP_SLICE, b->loc);
	ring_slot_state_item(m, &ss, ring, slot);
	IrGroup *g = ir_state_group(m, &ss, c->kw.rows);
	ir_group_add_expr(m, g, ring_B(m, IR_EX_MUL, ring_V(m, wg), ring_C(m, R)));
	ir_group_add_expr(m, g, ring_C(m, R));
	ir_state_result(m, &ss, ir_type_tile(c, 2, dims, t->elem, IR_SPACE_SMEM, t->layout), NULL);
	return &ir_b_insert(b, ir_op_build(m, &ss))->res[0];
}

/* The consumers' loop: the body of f on each consumer's rows, over slots of the rings. */
static IrOp *
rows_loop(IrModule *m, const RingPlan *p, IrValue **ring, IrValue *full, IrValue *empty,
	  IrStr *tags, IrValue *wg, int64_t R, IrValue *base, IrValue *lane)
{
	IrCtx *c = m->ctx;
	IrOp *f = p->loop;
	IrBlock *body = f->reg[0].block;
	int64_t N = p->stages;
	IrRegion *lr;
	IrValue *u;
	IrOpState ls = loop_state(m, p, &lr, &u, "c");
	IrBlock *lb = lr->block;
	for (int i = 3; i < f->nitem; i++)
		ring_copy_item(m, f, &f->item[i], ir_state_item(m, &ls, f->item[i].kind), NULL, NULL);
	for (int i = 0; i < f->nres; i++)
		ir_state_result(m, &ls, f->res[i].type, f->res[i].name);
	for (int i = 1; i < body->narg; i++) {
		IrValue *a = ir_block_add_arg(m, lb, body->arg[i]->type, body->arg[i]->name,
		                              body->arg[i]->loc);
		ir_replace_all_uses(body->arg[i], a);
	}
	IrValue *pos = loop_pos(m, &ls, lb, base, p);
	IrBuilder b;
	ir_builder_at_end(&b, m, lb, f->loc);
	IrValue *s = ring_named(ir_b_index(&b, slot_of(m, ring_V(m, pos), N, lane)),
	                        ring_fresh(c, p->kernel, p->iv->name, "cs"));
	ring_wait(&b, full, s, parity(m, pos, N, 0));
	IrValue *k = loop_k(&b, p, u);
	for (int i = 0; i < p->nload; i++)
		ring_holds(&b, p, i, k, ring[i], s, tags[i]);
	ir_replace_all_uses(p->iv, k);
	/* The body, its loads read from the slots. */
	IrOp *y = body->last;
	while (body->first != y) {
		IrOp *op = body->first;
		ir_op_unlink(op);
		ir_block_append(lb, op);
	}
	for (int i = 0; i < p->nload; i++) {
		IrValue *v = &p->load[i]->res[0];
		while (v->uses) {
			IrOp *user = v->uses->user;
			IrBuilder ub;
			ir_builder_before(&ub, m, user);
			if (wg && ir_op_value(user, user->item[0].opnd) == v)
				use_value(m, user, v, slot_rows(&ub, ring[i], s, wg, R));
			else
				ring_read_slot(m, user, v, ring[i], s);
		}
		ir_op_erase(p->load[i]);
	}
	/* The MMAs that read the slots have completed: give them back. */
	ring_arrive(&b, empty, s);
	if (base) {
		pos_yield(&b, 0, NULL, y, base, pos); /* the body's yield, and the position after */
	} else {
		ir_op_unlink(y);
		ir_block_append(lb, y);
	}
	ir_state_region(m, &ls, lr);
	return ir_op_build(m, &ls);
}

/* What both forms build around the consumers' code: the rings, the full and empty barriers,
 * the tag functions, the producer role, and the consumers' region with their replica id. */
typedef struct Roles {
	IrValue *ring[RING_MAX_LOADS], *full, *empty;
	IrStr tags[RING_MAX_LOADS];
	IrRegion *ws, *consumer;
	IrBuilder cb;   /* at the end of the consumers' region */
	IrValue *wg;    /* ave.replica_id splitting rows, NULL for one consumer and ping-pong */
	IrExpr *off;    /* wg * rows: the consumer's first row; NULL for one consumer */
	IrValue *lane;  /* ping-pong: ave.replica_id choosing the consumer's tiles and ring */
	IrValue *tile;  /* the consumers' tile in a walk */
	IrRegion *guard; /* ping-pong: the epilogue's region, under `tile < tiles` */
	Walk *walk;     /* NULL: no tile walk */
	IrRegion *cwalk; /* the consumers' walk body (its block holds rs->cb) */
	IrValue *cbase; /* the consumers' ring position at the tile's start */
	IrValue *cend;  /* ... and after the tile's k-loop */
	IrValue *turn;  /* ping-pong: the consumer's tiles so far (its turns) */
	IrMap vmap;     /* values computed from program ids -> the consumers' walk's */
	bool tail;      /* inflight=1 in a walk: the walk's last slot is released after it */
} Roles;

static void
roles_begin(IrModule *m, const RingPlan *p, int64_t C, int64_t R, Walk *w, Roles *rs)
{
	IrCtx *c = m->ctx;
	ring_alloc(m, p, rs->ring);
	rs->full = ring_mbar(m, p, 1, "full");
	/* One arrival per consumer, or in ping-pong the one consumer whose ring it is. */
	rs->empty = ring_mbar(m, p, w && w->on && w->pairs ? 1 : C, "empty");
	ring_tag_funcs(m, p, rs->tags);
	rs->walk = w && w->on ? w : NULL;
	if (rs->walk)
		walk_top(m, p->kernel, p->loop, w);
	if (rs->walk && w->pairs)
		w->order = ring_mbar_n(m, p, 2, 1, "order");
	rs->ws = ir_region_new(m);
	producer(m, p, rs->ring, rs->full, rs->empty, rs->tags, rs->ws, rs->walk);
	rs->consumer = ir_region_new(m);
	rs->cwalk = NULL;
	rs->cbase = rs->cend = NULL;
	rs->tail = false;
	rs->lane = NULL;
	rs->tile = NULL;
	rs->guard = NULL;
	if (rs->walk && w->pairs)
		rs->lane = replica_id(m, rs->consumer->block, p->kernel, "id", p->loop->loc);
	rs->turn = NULL;
	if (rs->walk) {
		ir_map_init(&rs->vmap, c->al);
		rs->cwalk = walk_open(m, p->kernel, w, rs->lane, &rs->cbase, &rs->tile,
		                      rs->lane ? &rs->turn : NULL, &rs->vmap, p->loop->loc);
	}
	ir_builder_at_end(&rs->cb, m, rs->walk ? rs->cwalk->block : rs->consumer->block,
	                  p->loop->loc);
	if (rs->lane) {
		/* Ping-pong's turns (CUTLASS's ordered main loops): consumer wg waits on
		 * order[wg] for the other's main loop of the tile before; consumer 0's first wait
		 * (parity 1 on a fresh barrier) returns at once, consumer 1's waits for consumer
		 * 0's first main loop. turn_end gives the turn back after the k-loop. */
		IrValue *ph = ring_named(
		    ir_b_index(&rs->cb,
		               ring_B(m, IR_EX_MOD,
		                      ring_B(m, IR_EX_ADD,
		                             ring_B(m, IR_EX_ADD, ring_V(m, rs->turn), ring_C(m, 1)),
		                             ring_V(m, rs->lane)),
		                      ring_C(m, 2))),
		    ring_fresh(c, p->kernel, ir_intern_cstr(c, "myturn"), "w"));
		ring_wait(&rs->cb, w->order, rs->lane, ring_V(m, ph));
	}
	rs->wg = NULL;
	rs->off = NULL;
	if (C > 1 && !rs->lane) {
		rs->wg = replica_id(m, rs->cb.block, p->kernel, "id", p->loop->loc);
		rs->off = ring_B(m, IR_EX_MUL, ring_V(m, rs->wg), ring_C(m, R));
	}
}

/* The block the epilogue moves into: the consumers' own, or in ping-pong the region of `ave.if
 * %tile < %tiles` (a pair's second tile past the last is run, not stored), which epi_end closes. */
static IrBlock *
epi_begin(IrModule *m, const RingPlan *p, Roles *rs)
{
	if (!rs->lane)
		return rs->cb.block;
	/* The other consumer's turn: its main loop may start while this one's epilogue runs. */
	IrCtx *c = m->ctx;
	IrValue *other =
	    ring_named(ir_b_index(&rs->cb, ring_B(m, IR_EX_SUB, ring_C(m, 1), ring_V(m, rs->lane))),
	               ring_fresh(c, p->kernel, ir_intern_cstr(c, "other"), "w"));
	ring_arrive(&rs->cb, rs->walk->order, other);
	rs->guard = ir_region_new(m);
	return rs->guard->block;
}

static void
epi_end(IrModule *m, const RingPlan *p, Roles *rs)
{
	if (!rs->guard)
		return;
	IrCtx *c = m->ctx;
	IrBuilder gb;
	ir_builder_at_end(&gb, m, rs->guard->block, p->loop->loc);
	ir_b_yield(&gb, 0, NULL, false);
	IrValue *real = ring_pred(&rs->cb, ir_expr_bin(m, IR_EX_LT, ring_V(m, rs->tile),
	                                               ring_V(m, rs->walk->tiles)),
	                          ring_fresh(c, p->kernel, ir_intern_cstr(c, "real"), "w"));
	IrOpState s;
	ir_state_init(&s, IR_OP_IF, p->loop->loc);
	ir_state_value(m, &s, real);
	ir_state_region(m, &s, rs->guard);
	ir_b_insert(&rs->cb, ir_op_build(m, &s));
}

/* The consumer role (its budget, C replicas), the ave.warp_specialize in the loop's place, and
 * the kernel's threads: a warpgroup per role replica. */
static void
roles_end(IrModule *m, const RingPlan *p, int64_t C, int64_t regs, Roles *rs)
{
	IrCtx *c = m->ctx;
	IrOp *f = p->loop;
	Walk *w = rs->walk;
	if (w) {
		IrOp *wl = walk_close(m, w, rs->cwalk, rs->cend, rs->turn, &rs->vmap,
		                      rs->consumer->block, f->loc);
		ir_map_free(&rs->vmap);
		if (rs->tail) {
			/* inflight=1: each k-loop released the slot of the position before its
			 * first, across tiles; the last position the walk used goes back here. */
			IrBuilder b;
			ir_builder_at_end(&b, m, rs->consumer->block, f->loc);
			IrValue *end = &wl->res[0];
			IrValue *ran = ring_pred(&b, ir_expr_bin(m, IR_EX_GT, ring_V(m, end), ring_C(m, 0)),
			                         ring_fresh(c, p->kernel, p->iv->name, "ran"));
			arrive_if(&b, ran, rs->empty,
			          slot_of(m, ring_B(m, IR_EX_SUB, ring_V(m, end), ring_C(m, 1)),
			                  p->stages, rs->lane));
		}
	}
	role(m, rs->ws->block, "consumer", 4, regs, 0, C, rs->consumer, f->loc);
	IrOpState ws;
	ir_state_init(&ws, IR_OP_WARP_SPECIALIZE, f->loc);
	ir_state_region(m, &ws, rs->ws);
	ir_op_insert_before(f, ir_op_build(m, &ws));
	ir_op_erase(f);
	ir_op_set_attr(m, p->kernel, c->kw.threads, ir_attr_int(c, 128 * (C + 1)));
	/* The roles compute the program ids and what depends on them per tile now. */
	for (int i = w ? w->ndep - 1 : -1; i >= 0; i--)
		if (!ir_value_has_uses(&w->dep[i]->res[0]))
			ir_op_erase(w->dep[i]);
}

/* What a ping-pong specialization built. */
static void
remark_pingpong(IrCtx *c, const RingPlan *p, int64_t regs, const char *what)
{
	ir_remark(c, p->kernel->loc,
	          "warp-specialize: loop '%%%s': ping-pong: producer warpgroup (2 replicas of 2 "
	          "warps, regs %d, issue 1), 2 consumer warpgroups (regs %lld) %s on alternate "
	          "tiles of the walk, each on a ring of its own, %lld stages each, rings %lld bytes",
	          p->ivname, PRODUCER_REGS, (long long)regs, what, (long long)p->stages,
	          (long long)(p->stages * p->rings * p->bytes));
}

static bool
specialize_rows(IrModule *m, const RingPlan *p, const TargetInfo *t, const Rows *r, Walk *w)
{
	IrCtx *c = m->ctx;
	IrOp *f = p->loop;
	int64_t N = p->stages, C = r->consumers, R = r->rows;
	int64_t regs = consumer_regs(t, C);
	Roles rs;
	roles_begin(m, p, C, R, w, &rs);
	IrBlock *cb = rs.cb.block;
	for (int i = 0; i < r->npro; i++) {
		IrOp *op = r->pro[i];
		ir_op_unlink(op);
		ir_block_append(cb, op);
		if (op->code == IR_OP_LOAD && rs.off)
			shift_rows(m, op, ir_expr_clone(m, rs.off));
	}
	IrOp *nl = rows_loop(m, p, rs.ring, rs.full, rs.empty, rs.tags, rs.wg, R, rs.cbase, rs.lane);
	ir_block_append(cb, nl);
	rs.cend = rs.cbase ? &nl->res[nl->nres - 1] : NULL;
	for (int i = 0; i < f->nres; i++)
		ir_replace_all_uses(&f->res[i], &nl->res[i]);
	IrBlock *eb = epi_begin(m, p, &rs);
	for (int i = 0; i < r->epi.n; i++) {
		IrOp *op = r->epi.op[i];
		ir_op_unlink(op);
		ir_block_append(eb, op);
		shift_epilogue(m, op, r->M, rs.off);
	}
	epi_end(m, p, &rs);
	Retype rt = {c, r->M, R};
	ir_walk(cb, retype_op, &rt);
	if (rs.lane)
		remark_pingpong(c, p, regs, "running its body");
	else
		ir_remark(c, p->kernel->loc,
		          "warp-specialize: loop '%%%s': producer warpgroup (regs %d, issue 1), %lld "
		          "consumer warpgroup%s (regs %lld, %lld rows each) running its body on "
		          "their rows, %lld stages, ring %lld bytes",
		          p->ivname, PRODUCER_REGS, (long long)C, C == 1 ? "" : "s",
		          (long long)regs, (long long)R, (long long)N, (long long)(N * p->bytes));
	roles_end(m, p, C, regs, &rs);
	return true;
}

/* ring_smem_check; in ping-pong (a ring per consumer) a ring too deep for the target's shared
 * memory gets fewer stages, down to 2 (the remark says how many). */
static const char *
smem_fit(IrModule *m, RingPlan *p, const TargetInfo *t, IrOp *const *skip, int nskip)
{
	const char *why = ring_smem_check(m, p, t, 2, skip, nskip);
	while (why && p->rings > 1 && p->stages > 2) {
		p->stages--;
		why = ring_smem_check(m, p, t, 2, skip, nskip);
	}
	return why;
}

static bool
specialize(IrModule *m, IrOp *f, WsOpts *o)
{
	IrCtx *c = m->ctx;
	const TargetInfo *t = pass_kernel_target(c, ir_kernel_of(f), o->target);
	RingPlan p;
	if (!ring_plan(m, f, NULL, 0, &p)) /* its shared memory is checked below */
		return false;
	const char *why = NULL;
	Shape sh;
	if (!t)
		why = "no target is named (--target or the kernel's attribute)";
	else if (!t->setmaxnreg)
		why = ir_ctx_printf(c, "target '%s' has no per-role register budgets (setmaxnreg); "
				    "'pipeline' runs the loop in one role", t->name);
	else if (t->copy != TARGET_COPY_TMA)
		why = ir_ctx_printf(c, "target '%s' has no bulk tensor copy", t->name);
	else
		why = p.why;
	if (!why && o->pingpong && !ir_op_attr(p.kernel, c->kw.persistent))
		why = "ping-pong consumers take alternate tiles of a persistent walk, and the kernel "
		      "is not persistent ('persistent = N' on the kernel)";
	int64_t asked = p.stages;
	if (o->pingpong)
		p.rings = 2;
	if (!why) {
		IrOp *found = NULL;
		for (IrOp *op = p.kernel->reg[0].block->first; op && !found; op = op->next)
			if (op->code == IR_OP_WARP_SPECIALIZE)
				found = op;
		if (found)
			why = "the kernel already has warp roles";
	}
	Rows rows;
	bool general = false;
	if (!why) {
		why = shape(m, &p, o, &sh);
		if (why && o->inflight)
			why = ir_ctx_printf(c, "%s, and inflight=1 takes only one MMA into one "
					    "accumulator started from ave.zeros (the general form keeps "
					    "its MMAs synchronous)", why);
		if (why && o->inflight == 0) {
			/* Not one MMA into one accumulator: the body as written, on each consumer's
			 * rows, where its ops allow it. */
			const char *gwhy = rows_shape(m, &p, o, &rows);
			if (!gwhy) {
				IrOp *skip[1 + 64 + sizeof rows.epi.op / sizeof rows.epi.op[0]] = {f};
				memcpy(skip + 1, rows.pro, sizeof(IrOp *) * (size_t)rows.npro);
				memcpy(skip + 1 + rows.npro, rows.epi.op,
				       sizeof(IrOp *) * (size_t)rows.epi.n);
				gwhy = smem_fit(m, &p, t, skip, 1 + rows.npro + rows.epi.n);
			}
			general = !gwhy;
			why = gwhy;
		}
	}
	if (!why && !general) {
		/* The loop and its epilogue become the roles: their tiles are the consumers'
		 * registers and need no scratch (the accumulator's layout is the one stored). */
		IrOp *skip[2 + sizeof sh.epi.op / sizeof sh.epi.op[0]] = {f, sh.init};
		memcpy(skip + 2, sh.epi.op, sizeof(IrOp *) * (size_t)sh.epi.n);
		why = smem_fit(m, &p, t, skip, 2 + sh.epi.n);
	}
	if (!why && o->consumers && 128 * (o->consumers + 1) > 1024)
		why = "too many consumers for one CTA";
	if (why) {
		ir_remark(c, f->loc, "warp-specialize: loop '%%%s' not specialized: %s", p.ivname,
		          why);
		return false;
	}
	/* The input as written, before anything changes: what a failed proof of the output is
	 * compared with (pass_warp_specialize). */
	if (!o->orig)
		o->orig = ir_module_clone(m);
	/* A persistent kernel: the roles walk its tiles (walk_plan says when they cannot). */
	Walk walk;
	{
		IrOp *mv[1 + 64 + 256];
		int nmv = 0;
		mv[nmv++] = f;
		if (general) {
			for (int i = 0; i < rows.npro; i++)
				mv[nmv++] = rows.pro[i];
			for (int i = 0; i < rows.epi.n; i++)
				mv[nmv++] = rows.epi.op[i];
		} else {
			mv[nmv++] = sh.init;
			for (int i = 0; i < sh.epi.n; i++)
				mv[nmv++] = sh.epi.op[i];
		}
		const char *wwhy = walk_plan(c, p.kernel, mv, nmv, &walk);
		walk.group = o->group;
		walk.pairs = o->pingpong;
		if (wwhy && o->pingpong) {
			ir_remark(c, f->loc, "warp-specialize: loop '%%%s' not specialized: ping-pong "
			          "consumers take alternate tiles of the roles' own walk, and the roles "
			          "cannot walk the persistent kernel's tiles: %s", p.ivname, wwhy);
			return false;
		}
		o->walked |= walk.on;
		if (wwhy)
			ir_remark(c, p.kernel->loc,
			          "warp-specialize: the roles do not walk the persistent kernel's "
			          "tiles themselves: %s; each tile runs the kernel's body in turn, "
			          "its barriers set up again", wwhy);
	}
	if (p.stages < asked)
		ir_remark(c, f->loc, "warp-specialize: loop '%%%s': ping-pong: %lld stages per "
		          "consumer's ring (of the %lld asked) fit the shared memory of '%s'",
		          p.ivname, (long long)p.stages, (long long)asked, t->name);
	if (general)
		return specialize_rows(m, &p, t, &rows, &walk);
	int64_t N = p.stages, C = sh.consumers, R = sh.rows;
	int64_t regs = consumer_regs(t, C);
	IrOp *kernel = p.kernel;
	Roles rs;
	roles_begin(m, &p, C, R, &walk, &rs);
	IrValue **ring = rs.ring, *full = rs.full, *empty = rs.empty, *wg = rs.wg;
	IrStr *tags = rs.tags;
	IrBuilder cb = rs.cb;
	IrType *acc = f->res[0].type;
	int64_t adims[2] = {R, acc->dims[1]};
	IrType *racc = ir_type_tile_with_shape(c, acc, 2, adims);
	IrValue *z = &ir_b_op(&cb, IR_OP_ZEROS, 1, &racc, 0, NULL)->res[0];
	IrValue *d;
	{
		IrRegion *lr;
		IrValue *u;
		IrOpState ls = loop_state(m, &p, &lr, &u, "c");
		IrBlock *lb = lr->block;
		IrValue *cacc = ir_block_add_arg(m, lb, racc, f->reg[0].block->arg[1]->name, f->loc);
		ir_state_value(m, &ls, z);
		ir_state_result(m, &ls, racc, f->res[0].name);
		IrValue *pos = loop_pos(m, &ls, lb, rs.cbase, &p);
		IrBuilder b;
		ir_builder_at_end(&b, m, lb, f->loc);
		IrValue *s = ring_named(ir_b_index(&b, slot_of(m, ring_V(m, pos), N, rs.lane)),
		                        ring_fresh(c, kernel, p.iv->name, "cs"));
		ring_wait(&b, full, s, parity(m, pos, N, o->fault ? 1 : 0));
		IrValue *k = loop_k(&b, &p, u);
		for (int i = 0; i < p.nload; i++)
			ring_holds(&b, &p, i, k, ring[i], s, tags[i]);
		/* A's rows of this consumer, or the whole slot. */
		IrOpState ms;
		ir_state_init(&ms, IR_OP_MMA_ASYNC, sh.mma->loc);
		if (wg)
			ir_state_value(m, &ms, slot_rows(&b, ring[sh.a], s, wg, R));
		else
			ring_slot_state_item(m, &ms, ring[sh.a], s);
		ring_slot_state_item(m, &ms, ring[sh.b], s);
		ir_state_value(m, &ms, cacc);
		for (int g = 0; g < sh.mma->ngroup; g++)
			ir_state_group(m, &ms, sh.mma->group[g].kw);
		ir_state_result(m, &ms, racc, NULL);
		IrValue *tok = &ir_b_insert(&b, ir_op_build(m, &ms))->res[0];
		IrValue *nd;
		IrExpr *trip = ring_trip(m, &p);
		if (o->inflight == 0) {
			nd = mma_wait(&b, tok, 0);
			ring_arrive(&b, empty, s);
		} else {
			/* pending(0) at the last iteration, so the accumulator is final after the
			 * loop; pending(1) before it, and the slot of the previous iteration, whose
			 * MMA has now retired, goes back to the producer. */
			IrValue *last = ring_pred(
			    &b,
			    ir_expr_bin(m, IR_EX_EQ, ring_V(m, u),
			                ring_B(m, IR_EX_SUB, ring_trip(m, &p), ring_C(m, 1))),
			    ring_fresh(c, kernel, p.iv->name, "last"));
			IrOpState is;
			ir_state_init(&is, IR_OP_IF, f->loc);
			ir_state_value(m, &is, last);
			ir_state_result(m, &is, racc, NULL);
			for (int br = 0; br < 2; br++) {
				IrRegion *r = ir_region_new(m);
				IrBuilder rb;
				ir_builder_at_end(&rb, m, r->block, f->loc);
				IrValue *w = mma_wait(&rb, tok, br);
				ir_b_yield(&rb, 1, &w, true);
				ir_state_region(m, &is, r);
			}
			nd = &ir_b_insert(&b, ir_op_build(m, &is))->res[0];
			/* In a walk, by the position: the first k of a tile gives back the last
			 * slot of the tile before (its MMA retired with pending(0)). */
			IrValue *prev = ring_pred(
			    &b, ir_expr_bin(m, IR_EX_GT, ring_V(m, rs.cbase ? pos : u), ring_C(m, 0)),
			    ring_fresh(c, kernel, p.iv->name, "prev"));
			arrive_if(&b, prev, empty,
			          slot_of(m, ring_B(m, IR_EX_SUB, ring_V(m, pos), ring_C(m, 1)), N,
			                  rs.lane));
		}
		pos_yield(&b, 1, &nd, NULL, rs.cbase, pos);
		ir_state_region(m, &ls, lr);
		IrOp *cl = ir_b_insert(&cb, ir_op_build(m, &ls));
		d = &cl->res[0];
		rs.cend = rs.cbase ? &cl->res[1] : NULL;
		if (o->inflight && rs.walk) {
			rs.tail = true;
		} else if (o->inflight) {
			IrValue *ran = ring_pred(&cb, ir_expr_bin(m, IR_EX_GT, trip, ring_C(m, 0)),
			                         ring_fresh(c, kernel, p.iv->name, "ran"));
			arrive_if(&cb, ran, empty,
			          slot_of(m, ring_B(m, IR_EX_SUB, ring_trip(m, &p), ring_C(m, 1)), N,
			                  rs.lane));
		}
	}
	/* The epilogue, its rows split among the consumers. */
	ir_replace_all_uses(&f->res[0], d);
	IrBlock *eb = epi_begin(m, &p, &rs);
	for (int i = 0; i < sh.epi.n; i++) {
		IrOp *op = sh.epi.op[i];
		ir_op_unlink(op);
		ir_block_append(eb, op);
		shift_epilogue(m, op, acc->dims[0], rs.off);
	}
	epi_end(m, &p, &rs);
	Retype rt = {c, acc->dims[0], R};
	ir_walk(rs.cb.block, retype_op, &rt);
	roles_end(m, &p, C, regs, &rs);
	if (!ir_value_has_uses(&sh.init->res[0]))
		ir_op_erase(sh.init);
	if (rs.lane)
		remark_pingpong(c, &p, regs,
		                o->inflight ? "releasing each slot after the next MMA (inflight=1)"
		                            : "accumulating whole tiles");
	else
		ir_remark(c, kernel->loc,
		          "warp-specialize: loop '%%%s': producer warpgroup (regs %d, issue 1), %lld "
		          "consumer warpgroup%s (regs %lld, %lld rows each), %lld stages, ring %lld "
		          "bytes%s",
		          p.ivname, PRODUCER_REGS, (long long)C, C == 1 ? "" : "s", (long long)regs,
		          (long long)R, (long long)N, (long long)(N * p.bytes),
		          o->inflight ? ", each slot released after the next MMA (inflight=1)" : "");
	return true;
}

/* Why the roles just built in `kernel` do not fit their register budgets, or NULL: the register
 * tiles live at once in a role (sized as the regalloc pass sizes them) over the role's regs(n).
 * Whole-tile ping-pong consumers are where this bites: a 128x256 f32 accumulator alone is 256
 * registers per thread, over the 232 the pool leaves each of two consumers. */
static const char *
regs_fit(IrModule *m, IrOp *kernel, const TargetInfo *t, const WsOpts *o)
{
	IrCtx *c = m->ctx;
	const char *why = NULL;
	RaPlan p;
	if (ra_plan_sized(&p, c, kernel, t, o->tile_regs, RA_RESERVE)) {
		for (int g = 0; g < p.ngroup && !why; g++) {
			const RaGroup *r = &p.group[g];
			int need = r->slots > r->peak ? r->slots : r->peak;
			IrOp *at = ra_point_op(&p, r->peak_at);
			if (r->role && r->given && need > r->budget)
				why = ir_ctx_printf(c, "role '@%s' would hold %d registers per thread of "
				                    "register tiles at '%s' (line %u), over its budget "
				                    "regs(%d)",
				                    r->name, need, at ? ir_op_name(at->code) : "?",
				                    at ? at->loc.line : 0, r->budget);
		}
		ra_plan_free(&p);
	}
	return why;
}

/* What specialize says, held back while the pass may still undo what it describes. */
typedef struct Held {
	IrSeverity sev[16];
	IrLoc loc[16];
	char *msg[16];
	int n;
	IrCtx *c;
} Held;

static void
hold_diag(void *ud, const IrDiag *d)
{
	Held *h = ud;
	if (h->n < 16) {
		h->sev[h->n] = d->sev;
		h->loc[h->n] = d->loc;
		h->msg[h->n++] = ir_ctx_strdup(h->c, d->msg);
	}
}

static void
replay(const Held *h)
{
	for (int i = 0; i < h->n; i++) {
		if (h->sev[i] == IR_SEV_ERROR)
			ir_error(h->c, h->loc[i], "%s", h->msg[i]);
		else if (h->sev[i] == IR_SEV_WARNING)
			ir_warning(h->c, h->loc[i], "%s", h->msg[i]);
		else
			ir_remark(h->c, h->loc[i], "%s", h->msg[i]);
	}
}

static void
visit(IrModule *m, IrOp *loop, const TargetInfo *t, void *ud)
{
	WsOpts *o = ud;
	IrCtx *c = m->ctx;
	IrOp *kernel = ir_kernel_of(loop);
	for (int i = 0; i < o->ndead; i++)
		if (o->dead[i] == kernel)
			return;
	if (!ir_op_attr(loop, c->kw.stages) || !t || !t->regfile) {
		o->changed |= specialize(m, loop, o);
		return;
	}
	/* The kernel as it is, put back if the roles built do not fit their registers; what
	 * the build says waits until then. */
	IrMap vmap;
	ir_map_init(&vmap, c->al);
	IrOp *saved = ir_op_clone(m, kernel, &vmap);
	ir_map_free(&vmap);
	const char *iv = loop->reg[0].block->arg[0]->name;
	IrLoc at = loop->loc;
	Held h = {.c = c};
	IrDiagHold held;
	bool walked = o->walked;
	ir_diag_hold(c, &held, hold_diag, &h);
	bool done = specialize(m, loop, o);
	ir_diag_release(c, &held);
	const char *why = done ? regs_fit(m, kernel, t, o) : NULL;
	if (why && o->ndead < (int)(sizeof o->dead / sizeof o->dead[0])) {
		ir_op_insert_before(kernel, saved);
		ir_op_erase(kernel);
		o->dead[o->ndead++] = kernel;
		o->walked = walked; /* no walk was kept */
		ir_remark(c, at, "warp-specialize: loop '%%%s' not specialized: %s%s", iv ? iv : "?",
		          o->pingpong ? "ping-pong consumers accumulate whole tiles, and the " : "",
		          why);
		return;
	}
	ir_op_erase(saved);
	replay(&h);
	o->changed |= done;
}

static void
no_diag(void *ud, const IrDiag *d)
{
	(void)ud;
	(void)d;
}

/* Whether check-invariants proves m, saying nothing (the context's counts are kept). */
static bool
proves_quietly(IrModule *m)
{
	IrCtx *c = m->ctx;
	IrDiagHandler h = c->handler;
	void *ud = c->handler_ud;
	int ne = c->nerrors, nw = c->nwarnings;
	const char *last = c->last_code;
	ir_diag_set_handler(c, no_diag, NULL);
	bool ok = pass_check_invariants_with(m, &(PassCkOpts){0});
	ir_diag_set_handler(c, h, ud);
	c->nerrors = ne;
	c->nwarnings = nw;
	c->last_code = last;
	return ok;
}

bool
pass_warp_specialize(IrModule *m, const IrPassOpts *o)
{
	IrCtx *c = m->ctx;
	WsOpts w = {0, 0, 0, 8, o ? o->target : NULL, false, false, false, false, NULL,
	            o ? o->tile_regs : NULL, {NULL}, 0};
	const char *mode = ir_pass_arg(o, "mode");
	if (mode && strcmp(mode, "pingpong") == 0) {
		w.pingpong = true;
	} else if (mode && strcmp(mode, "cooperative") != 0) {
		ir_error(c, (IrLoc){0}, "warp-specialize: unknown mode '%s' (cooperative, "
			 "pingpong)", mode);
		return false;
	}
	if (!ir_pass_arg_int(c, o, "warp-specialize", "consumers", 0, 1, 7, &w.consumers) ||
	    !ir_pass_arg_int(c, o, "warp-specialize", "inflight", 0, 0, 1, &w.inflight) ||
	    !ir_pass_arg_int(c, o, "warp-specialize", "fault", 0, 0, 1, &w.fault) ||
	    !ir_pass_arg_int(c, o, "warp-specialize", "group", 8, 1, 64, &w.group))
		return false;
	pass_for_each_loop(m, w.target, visit, &w);
	bool ok = true;
	if (w.changed) {
		/* The output proves, or it is not compiled (docs/passes.md). */
		int before = c->nerrors;
		if (!pass_check_invariants_with(m, &(PassCkOpts){0})) {
			/* Whose fault: the input's, when it does not prove as written either. */
			if (!proves_quietly(w.orig))
				ir_error(c, (IrLoc){0}, "warp-specialize: the kernel as written does not "
					 "prove either (the %d errors above are in the kernel the pass made "
					 "of it, at the input's lines): fix the input ('ave check', or "
					 "--passes=check-invariants before warp-specialize, shows it as "
					 "written)", c->nerrors - before);
			else
				ir_error(c, (IrLoc){0}, "internal error: warp-specialize built a kernel "
					 "that check-invariants does not prove (%d errors above); please "
					 "report it with the input", c->nerrors - before);
			ok = false;
		}
		/* A walk's stores are proved disjoint with arithmetic the solver knows in part: where
		 * it cannot decide it warns, where the kernel as written got a verdict. That verdict
		 * stands: a race in the input is not let through as a warning. */
		if (ok && w.walked && !proves_quietly(w.orig)) {
			int before = c->nerrors;
			pass_check_invariants_with(w.orig, &(PassCkOpts){0});
			ir_error(c, (IrLoc){0}, "warp-specialize: the kernel as written does not prove "
				 "(the %d errors above); its persistent walk is not built over them",
				 c->nerrors - before);
			ok = false;
		}
	}
	if (w.orig)
		ir_module_free(w.orig);
	return ok;
}
