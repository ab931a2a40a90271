/* overlap.c — the `overlap` pass (SPEC 5.9, docs/passes.md): a local kernel that carries
 * `overlap = @schedule, overlap_operand = @X` reads the symmetric buffer @X as if every rank's
 * chunk were present. For an all-gather schedule the pass makes it communicate:
 *
 *   - tiles are visited in chunk-arrival order: when the grid along the dimension whose program
 *     id picks the rows is exactly one wave of tiles per rank, program id p becomes the tile
 *     (chunk of wave p / P) * P + p mod P, P tiles per chunk, so the CTAs that start first
 *     compute the local chunk and later waves the chunks in the order they arrive;
 *   - CTA 0 (every program id 0) puts the rank's own chunk into every other rank and signals
 *     it there, in the order the ranks receive it, before computing its own tile;
 *   - each tile whose chunk is not the rank's own waits for that chunk before the first op that
 *     reads @X.
 *
 * For `reduce_scatter.ring` the local kernel writes @X instead (one `ave.store` of its partial
 * product, as if it were the sum): tiles are visited in the ring's order, chunk (r - w - 1) mod W
 * at wave w (own chunk last); the first rank to compute a tile puts it into rank r + 1's copy of
 * @X at the same place; every later one waits for it there, adds its own partial and passes the
 * sum on; the chunk's owner stores the total into its own rows. Each tile's hop has a signal of
 * its own: the pass adds the chunk `@X.part(%c, %i, %j)` (chunk, tile row, tile column) and its
 * signal buffer `@X.sig`. A hand-written schedule (chunk(...) and peer(...)) of a kernel that
 * stores into @X is a reduce-scatter in its own wave order: the pass evaluates it at every rank
 * and wave, and takes it when the rank's own chunk comes last, each wave gives each chunk to
 * one rank, peer(r, w) names the rank the partial arrives from, and every partial goes to the
 * same neighbour (the hop, 1 or W - 1, which the puts name instead of r + 1): the ring one way
 * or the other, which is what the pass writes.
 *
 * On a GPU target a cost model first weighs the overlapped all-gather against an all-gather
 * before the kernel (one CTA's puts against a collective's bandwidth, the GEMM work of a chunk);
 * when the collective wins, the kernel keeps its order, waits for its tile's chunk, and is
 * marked `gathered = @chunk`: its launch gathers every chunk first (collective_wins, gather).
 *
 * What it needs, else a warning naming the reason and the kernel stays as written: a template
 * `all_gather.ring`, `all_gather.swizzle1d` or `reduce_scatter.ring`, or a hand-written schedule,
 * with backend "peer_store" (or none); a chunk
 * `@c(%i) region(@X[%i * R : R, lo : len])` of a buffer of rank 2 with world x R rows (the
 * module's `world`, a constant in what the pass writes); reads of @X that are `ave.load`s
 * outside roles, each at rows `%p * T + o` with %p one `ave.program_id` dimension,
 * R a multiple of T, and the tile's rows inside [o, T) (reduce-scatter: one `ave.store` into @X
 * at the kernel's top level with such rows, at columns `%q * TN + o2` inside [o2, TN) or a
 * constant, of a tile of @X's element type, and no read of @X). check-invariants then proves the result
 * (every read covered, every wait signalled once per launch); a kernel it does not prove is an
 * internal error, never compiled. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ring.h"

typedef struct Ov {
	IrModule *m;
	IrCtx *c;
	IrOp *kernel, *sched, *chunk, *buf;
	IrStr name;          /* the buffer */
	bool swizzle;        /* all_gather.swizzle1d, else all_gather.ring */
	bool hand;           /* a hand-written schedule: chunk(...) and peer(...) */
	bool rs;             /* a reduce-scatter (reduce_scatter.ring, or a hand-written schedule
	                      * of a kernel that stores into the buffer): the kernel writes it */
	int64_t hop;         /* rs: each partial goes to rank (r + hop) mod W (the ring: 1) */
	IrOp *store;         /* rs: the kernel's one ave.store into the buffer */
	IrValue *colv;       /* rs: the program id picking the store's columns, or NULL */
	int cdim;            /* rs: colv's dimension, or -1 */
	int64_t TN, C0;      /* rs: colv's stride and the columns' offset; without colv, the
	                      * store's constant column and its width */
	int64_t NC;          /* rs: column tiles of the buffer */
	int64_t R;           /* rows per chunk */
	int64_t T;           /* rows per tile */
	int dim;             /* the program id dimension that picks the rows */
	IrOp *first;         /* top-level op holding the first read */
	IrVec made;          /* IrStr: names given so far (ops not yet in the kernel) */
	IrVec pids;          /* IrOp *: the kernel's program ids along the rows (erased last) */
	int ndims;           /* grid dimensions the kernel's program ids use */
	int64_t W;           /* the module's world size */
	const char *why;     /* why not, or NULL */
	IrOp *bad;           /* the op the reason is about */
	const TargetInfo *target; /* the GPU target compiled for, or NULL */
} Ov;

/* e (in op's operands) as coef * v + cst, v one value leaf or none. */
static bool
linear(const IrOp *op, const IrExpr *e, IrValue **v, int64_t *coef, int64_t *cst)
{
	int64_t k;
	switch (e->kind) {
	case IR_EX_CONST:
		*cst += e->c;
		return true;
	case IR_EX_VAL: {
		IrValue *x = ir_op_value(op, e->opnd);
		if (*v && *v != x)
			return false;
		*v = x;
		*coef += 1;
		return true;
	}
	case IR_EX_ADD:
		return linear(op, e->l, v, coef, cst) && linear(op, e->r, v, coef, cst);
	case IR_EX_MUL: {
		const IrExpr *x = e->l;
		if (ir_expr_eval_const(e->l, &k))
			x = e->r;
		else if (!ir_expr_eval_const(e->r, &k))
			return false;
		IrValue *v2 = NULL;
		int64_t c2 = 0, s2 = 0;
		if (!linear(op, x, &v2, &c2, &s2) || (*v && v2 && *v != v2))
			return false;
		if (v2)
			*v = v2;
		*coef += c2 * k;
		*cst += s2 * k;
		return true;
	}
	default:
		return false;
	}
}

static bool
fail(Ov *o, IrOp *at, const char *why)
{
	if (!o->why) {
		o->why = why;
		o->bad = at;
	}
	return false;
}

/* The top-level op of the kernel body that holds op. */
static IrOp *
top_of(Ov *o, IrOp *op)
{
	IrBlock *body = o->kernel->reg[0].block;
	while (op && op->parent != body)
		op = ir_op_parent_op(op);
	return op;
}

typedef struct Scan {
	Ov *o;
	int nread;
	bool chunk_ops;
} Scan;

static bool
names_buf(const IrItem *it, IrStr s)
{
	return (it->kind == IR_IT_SYMBOL || it->kind == IR_IT_CALL) && it->s == s;
}

/* The rows of a tile of `rows` rows at item it of op: `%p * T + o` with %p one program id,
 * inside one chunk; sets T and the dimension (the same for every access). */
static bool
tile_rows(Ov *o, IrOp *op, const IrItem *it, int64_t rows)
{
	IrCtx *c = o->c;
	IrValue *v = NULL;
	int64_t coef = 0, cst = 0;
	if (!it->ncoord || !linear(op, it->coord[0].e, &v, &coef, &cst) || !v ||
	    v->kind != IR_VAL_RESULT || v->op->code != IR_OP_PROGRAM_ID || coef <= 0)
		return fail(o, op, ir_ctx_printf(c, "the row coordinate of this %s '@%s' is not "
		                                 "'%%p * T + o' with %%p an 'ave.program_id'",
		                                 op->code == IR_OP_STORE ? "store into" : "read of",
		                                 o->name));
	int64_t d;
	IrGroup *dg = ir_op_group(v->op, c->kw.dim);
	if (!dg || !ir_expr_eval_const(dg->item[0].e, &d))
		d = -1;
	if (o->T && (o->T != coef || o->dim != d))
		return fail(o, op, "reads of the buffer step by different program ids or tile heights");
	o->T = coef;
	o->dim = (int)d;
	if (o->R % coef || cst < 0 || cst + rows > coef)
		return fail(o, op, ir_ctx_printf(c, "a tile of %lld rows at %%p * %lld + %lld does not "
		                                 "lie in one chunk of %lld rows", (long long)rows,
		                                 (long long)coef, (long long)cst, (long long)o->R));
	return true;
}

static bool
in_roles(Ov *o, IrOp *op)
{
	for (IrOp *p = ir_op_parent_op(op); p && p != o->kernel; p = ir_op_parent_op(p))
		if (p->code == IR_OP_WARP_SPECIALIZE)
			return true;
	return false;
}

/* One read of the buffer: `ave.load @X[%p * T + o, ...]`. */
static void
scan_read(Ov *o, IrOp *op, const IrItem *it)
{
	IrCtx *c = o->c;
	if (op->code != IR_OP_LOAD || op->nres != 1 || op->res[0].type->kind != IR_TY_TILE) {
		fail(o, op, ir_ctx_printf(c, "'%s' uses '@%s' (only 'ave.load' reads are rewritten)",
		                          ir_opinfo(c, op->code)->name, o->name));
		return;
	}
	if (in_roles(o, op)) {
		fail(o, op, "a read inside 'ave.warp_specialize' (write the local kernel "
		            "without roles; warp-specialize runs after overlap)");
		return;
	}
	if (!tile_rows(o, op, it, op->res[0].type->dims[0]))
		return;
	IrOp *top = top_of(o, op);
	if (!o->first)
		o->first = top;
}

/* The write of a reduce-scatter: `ave.store %v into(@X[%p * T + o, %q * TN + o2])` (or a
 * constant column) at the kernel's top level. */
static void
scan_store(Ov *o, IrOp *op, const IrItem *it)
{
	IrCtx *c = o->c;
	if (op->code != IR_OP_STORE) {
		fail(o, op, ir_ctx_printf(c, "'%s' writes '@%s' (a reduce-scatter rewrites one "
		                          "'ave.store')", ir_opinfo(c, op->code)->name, o->name));
		return;
	}
	if (o->store) {
		fail(o, op, ir_ctx_printf(c, "a second store into '@%s' (a reduce-scatter rewrites "
		                          "one)", o->name));
		return;
	}
	o->store = op;
	if (op->parent != o->kernel->reg[0].block) {
		fail(o, op, ir_ctx_printf(c, "the store into '@%s' is not at the kernel's top level "
		                          "(in a loop, an 'ave.if' or a role)", o->name));
		return;
	}
	IrType *t = ir_op_value(op, op->item[0].opnd)->type, *bt = o->buf->type[0];
	if (t->kind != IR_TY_TILE || t->rank != 2 || t->elem != bt->elem) {
		fail(o, op, ir_ctx_printf(c, "the tile stored into '@%s' is not a tile of rank 2 of "
		                          "its element type", o->name));
		return;
	}
	if (!tile_rows(o, op, it, t->dims[0]))
		return;
	IrValue *v = NULL;
	int64_t coef = 0, cst = 0, w = t->dims[1];
	if (it->ncoord != 2 || !linear(op, it->coord[1].e, &v, &coef, &cst) ||
	    (v && (v->kind != IR_VAL_RESULT || v->op->code != IR_OP_PROGRAM_ID || coef <= 0))) {
		fail(o, op, ir_ctx_printf(c, "the column of the store into '@%s' is not '%%q * TN + o' "
		                          "with %%q an 'ave.program_id', nor a constant", o->name));
		return;
	}
	int64_t d = -1;
	if (v) {
		IrGroup *dg = ir_op_group(v->op, c->kw.dim);
		if (!dg || !ir_expr_eval_const(dg->item[0].e, &d) || d == o->dim) {
			fail(o, op, "the store's columns are not picked by a program id dimension of "
			            "their own");
			return;
		}
		if (cst < 0 || cst + w > coef) {
			fail(o, op, ir_ctx_printf(c, "a tile of %lld columns at %%q * %lld + %lld "
			                          "overlaps the next one", (long long)w,
			                          (long long)coef, (long long)cst));
			return;
		}
	}
	o->colv = v;
	o->cdim = (int)d;
	o->TN = v ? coef : w;
	o->C0 = cst;
	o->NC = v ? (bt->dims[1] + coef - 1) / coef : 1;
}

/* A chunk op: a kernel holding one communicates already. */
static bool
communicates(const IrOp *op)
{
	return op->code == IR_OP_CHUNK_WAIT || op->code == IR_OP_CHUNK_SIGNAL ||
	       op->code == IR_OP_PUT || op->code == IR_OP_GET;
}

static bool
scan(IrOp *op, void *ud)
{
	Scan *s = ud;
	Ov *o = s->o;
	if (communicates(op)) {
		s->chunk_ops = true;
		return true;
	}
	for (int i = 0; i < op->nitem; i++)
		if (names_buf(&op->item[i], o->name)) {
			s->nread++;
			if (o->rs)
				fail(o, op, ir_ctx_printf(o->c, "'%s' reads '@%s' (a reduce-scatter's "
				                          "operand is only stored)",
				                          ir_opinfo(o->c, op->code)->name, o->name));
			else
				scan_read(o, op, &op->item[i]);
		}
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			if (names_buf(&op->group[g].item[i], o->name)) {
				if (o->rs)
					scan_store(o, op, &op->group[g].item[i]);
				else
					fail(o, op, ir_ctx_printf(o->c, "'%s' writes '@%s'",
					                          ir_opinfo(o->c, op->code)->name,
					                          o->name));
			}
	return true;
}

/* A hand-written reduce-scatter, its waves in tab[r * W + w] (every chunk once per rank, the
 * rank's own last): the partial of rank r's wave w arrives from the rank that computed its
 * chunk at wave w - 1, which peer(r, w) must name, and every partial goes the same distance
 * round the ring (o->hop), to a neighbour (1 or W - 1: longer strides are refused, their
 * proofs take the solver seconds). That also gives each chunk one rank a wave: were two ranks
 * on one chunk at wave w, another chunk would have none there, and the first rank to take it
 * up after w would have no partial to wait for. */
static bool
hand_rs(Ov *o, const int64_t *tab, const int64_t *peer)
{
	IrCtx *c = o->c;
	int64_t W = o->W;
	o->hop = -1;
	for (int64_t w = 0; w < W; w++)
		for (int64_t r = 0; r < W; r++) {
			int64_t ch = tab[r * W + w], from = -1, to = -1;
			for (int64_t q = 0; q < W; q++) {
				if (w > 0 && tab[q * W + w - 1] == ch)
					from = q;
				if (w + 1 < W && tab[q * W + w + 1] == ch)
					to = q;
			}
			if (w > 0 && peer[r * W + w] != from)
				return fail(o, o->sched, ir_ctx_printf(
				    c, "the hand-written reduce-scatter's peer at rank %lld, wave %lld is "
				    "%lld, but the partial sum of chunk %lld arrives from %s (which adds "
				    "to it at wave %lld)", (long long)r, (long long)w,
				    (long long)peer[r * W + w], (long long)ch,
				    from < 0 ? "no rank" : ir_ctx_printf(c, "rank %lld", (long long)from),
				    (long long)(w - 1)));
			if (w + 1 == W)
				continue;
			if (to < 0)
				return fail(o, o->sched, ir_ctx_printf(
				    c, "the hand-written reduce-scatter gives chunk %lld to no rank at wave "
				    "%lld: rank %lld's partial sum of it at wave %lld goes nowhere",
				    (long long)ch, (long long)(w + 1), (long long)r, (long long)w));
			int64_t hop = ((to - r) % W + W) % W;
			if (o->hop >= 0 && hop != o->hop)
				return fail(o, o->sched, ir_ctx_printf(
				    c, "the hand-written reduce-scatter passes rank %lld's partial sum "
				    "of wave %lld to rank %lld (%lld on), where others go %lld on "
				    "(overlap passes every partial sum the same distance round the ring)",
				    (long long)r, (long long)w, (long long)to, (long long)hop,
				    (long long)o->hop));
			o->hop = hop;
		}
	if (o->hop != 1 && o->hop != W - 1)
		return fail(o, o->sched, ir_ctx_printf(
		    c, "the hand-written reduce-scatter passes partial sums %lld ranks on (overlap "
		    "passes them to a neighbour, 1 or W - 1 on: the proof of a longer stride asks "
		    "the solver which waves give a chunk, seconds a query on 8 ranks)",
		    (long long)o->hop));
	return true;
}

/* A hand-written schedule, evaluated at every rank and wave of the world: each rank's waves
 * must visit every chunk once (the tiles of wave w are those of the wave's chunk: a chunk
 * visited twice would be computed twice and another never), an all-gather's own chunk first
 * (it is there from the start), a reduce-scatter's own chunk last (it ends with the sum). */
static bool
hand_waves(Ov *o)
{
	IrCtx *c = o->c;
	int64_t W = o->W;
	if (W > 256)
		return fail(o, o->sched, "a hand-written schedule on more than 256 ranks");
	char err[256];
	int64_t seen[256];
	int64_t *tab = ir_arena_alloc(&o->m->arena, sizeof(int64_t) * (size_t)(2 * W * W));
	int64_t *peer = tab + W * W;
	for (int64_t r = 0; r < W; r++) {
		for (int64_t w = 0; w < W; w++)
			seen[w] = -1;
		for (int64_t w = 0; w < W; w++) {
			IrChunkStep st;
			if (!ir_chunk_schedule_step(c, o->sched, W, r, w, &st, err, sizeof err))
				return fail(o, o->sched, ir_ctx_strdup(c, err));
			const char *why = NULL;
			if (st.chunk < 0 || st.chunk >= W)
				why = "gives a chunk outside the world";
			else if (!o->rs && w == 0 && st.chunk != r)
				why = "does not start with the rank's own chunk";
			else if (o->rs && w == W - 1 && st.chunk != r)
				why = "does not end with the rank's own chunk";
			else if (seen[st.chunk] >= 0)
				why = ir_ctx_printf(c, "visits the chunk twice (wave %lld too)",
				                    (long long)seen[st.chunk]);
			else if (!o->rs && st.peer != st.chunk)
				why = ir_ctx_printf(c, "names peer %lld, but chunk q of an all-gather "
				                    "comes from rank q, its owner", (long long)st.peer);
			if (why)
				return fail(o, o->sched,
				            ir_ctx_printf(c, "the hand-written schedule %s: rank %lld, wave "
				                          "%lld, chunk %lld (overlap computes each chunk's "
				                          "tiles in its wave, the rank's own at wave %s)",
				                          why, (long long)r, (long long)w,
				                          (long long)st.chunk,
				                          o->rs ? "W - 1 in a reduce-scatter" : "0"));
			seen[st.chunk] = w;
			tab[r * W + w] = st.chunk;
			peer[r * W + w] = st.peer;
		}
	}
	return !o->rs || hand_rs(o, tab, peer);
}

/* What a kernel does with the buffer before the pass: stores into it, reads it, already
 * communicates (a chunk op: written by hand, or by this pass). */
typedef struct Uses {
	IrStr name;
	bool store, read, comm;
} Uses;

static bool
uses_buf(IrOp *op, void *ud)
{
	Uses *u = ud;
	if (communicates(op)) {
		u->comm = true;
		return true;
	}
	for (int i = 0; i < op->nitem; i++)
		u->read |= names_buf(&op->item[i], u->name);
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			u->store |= op->code == IR_OP_STORE && names_buf(&op->group[g].item[i], u->name);
	return true;
}

/* The schedule, chunk and buffer; false (o->why set) when they are not an all-gather of row
 * blocks of a buffer of rank 2. */
static bool
plan(Ov *o, IrAttr *ov, IrAttr *opnd)
{
	IrCtx *c = o->c;
	o->sched = ir_symbol_lookup(c, o->kernel, ov->s);
	if (!o->sched || o->sched->code != IR_OP_CHUNK_SCHEDULE)
		return fail(o, o->kernel, "the schedule is not an 'ave.chunk_schedule'");
	IrGroup *tg = ir_op_group(o->sched, c->kw.template_);
	const char *tn = tg ? tg->item[0].s : NULL;
	if (tn && strcmp(tn, "all_gather.ring") && strcmp(tn, "all_gather.swizzle1d") &&
	    strcmp(tn, "reduce_scatter.ring"))
		return fail(o, o->sched, ir_ctx_printf(c, "template \"%s\": overlap rewrites "
		                                      "all_gather.ring, all_gather.swizzle1d, "
		                                      "reduce_scatter.ring and hand-written "
		                                      "schedules", tn));
	o->hand = !tn;
	o->swizzle = tn && !strcmp(tn, "all_gather.swizzle1d");
	o->rs = tn && !strcmp(tn, "reduce_scatter.ring");
	o->hop = 1;
	Uses u = {opnd->s, false, false, false};
	if (o->hand) {
		ir_walk_op(o->kernel, uses_buf, &u);
		o->rs = u.store && !u.read; /* it only stores into the buffer: a reduce-scatter */
	}
	IrAttr *be = ir_op_attr(o->sched, c->kw.backend);
	if (be && (be->kind != IR_ATTR_STR || strcmp(be->s, "peer_store")))
		return fail(o, o->sched, "backend other than \"peer_store\"");
	IrGroup *fg = ir_op_group(o->sched, c->kw.for_);
	o->chunk = fg ? ir_symbol_lookup(c, o->sched, fg->item[0].s) : NULL;
	if (!o->chunk || o->chunk->code != IR_OP_CHUNK || o->chunk->item[0].nparam != 1)
		return fail(o, o->sched, "the schedule's chunk does not take exactly one index");
	IrItem *reg = &ir_op_group(o->chunk, c->kw.region)->item[0];
	if (reg->s != opnd->s)
		return fail(o, o->chunk, "the chunk's region is not in the overlap operand");
	o->name = opnd->s;
	o->buf = ir_symbol_lookup(c, o->kernel, o->name);
	if (!o->buf || o->buf->code != IR_OP_SYMM_ALLOC || o->buf->type[0]->rank != 2 ||
	    reg->ncoord != 2)
		return fail(o, o->chunk, "overlap rewrites a symmetric buffer of rank 2");
	IrValue *v = NULL;
	int64_t coef = 0, cst = 0, lo;
	if (!linear(o->chunk, reg->coord[0].e, &v, &coef, &cst) ||
	    v != o->chunk->item[0].param[0] || cst != 0 || coef <= 0 || reg->coord[0].len != coef ||
	    !ir_expr_eval_const(reg->coord[1].e, &lo) || reg->coord[1].len <= 0)
		return fail(o, o->chunk, "the chunk's region is not '@X[%c * R : R, lo : len]'");
	o->R = coef;
	/* Every chunk of the buffer must have an owner, or tiles would read rows nobody writes. */
	IrOp *mod = ir_op_parent_op(o->kernel);
	IrAttr *w = mod && mod->code == IR_OP_MODULE ? ir_op_attr(mod, c->kw.world) : NULL;
	int64_t rows = o->buf->type[0]->dims[0];
	if (!w || w->kind != IR_ATTR_INT)
		return fail(o, o->kernel, "the module has no 'world' (overlap gathers one chunk per "
		                          "rank and needs the number of ranks)");
	o->W = w->i;
	if (rows != w->i * coef)
		return fail(o, o->buf, ir_ctx_printf(c, "'@%s' has %lld rows, not world (%lld) x %lld "
		                                     "(a chunk per rank)", o->name, (long long)rows,
		                                     (long long)w->i, (long long)coef));
	if (o->rs && (lo != 0 || reg->coord[1].len != o->buf->type[0]->dims[1]))
		return fail(o, o->chunk, "the chunk's region is not whole rows of the buffer (a "
		                         "reduce-scatter sums whole rows)");
	if (o->rs && o->W < 2)
		return fail(o, o->kernel, "a world of one rank has nothing to reduce");
	/* A kernel that communicates already is left alone (scan), its schedule unread. */
	return !o->hand || u.comm || hand_waves(o);
}

/* ---- building ---- */

static IrValue *
op0(IrBuilder *b, IrOpcode code, IrType *t)
{
	return &ir_b_op(b, code, 1, &t, 0, NULL)->res[0];
}

static IrValue *
sel(IrBuilder *b, IrValue *cond, IrValue *x, IrValue *y)
{
	IrValue *v[3] = {cond, x, y};
	IrType *t = b->m->ctx->t_index;
	return &ir_b_op(b, IR_OP_SELECT, 1, &t, 3, v)->res[0];
}

/* A name `ov.suffix` (or `ov.suffixN`) no value of the kernel, and none this rewrite gave to
 * ops not yet inserted, has. */
static IrStr
fresh(Ov *o, const char *suffix)
{
	IrStr base = ir_intern_cstr(o->c, "ov");
	for (int n = 0;; n++) {
		IrStr s = ring_fresh(o->c, o->kernel, base,
		                     n ? ir_ctx_printf(o->c, "%s%d", suffix, n) : suffix);
		bool dup = false;
		for (int i = 0; i < o->made.len && !dup; i++)
			dup = IR_VEC_AT(o->made, IrStr, i) == s;
		if (!dup) {
			ir_vec_push(o->c->al, &o->made, &s, sizeof s);
			return s;
		}
	}
}

static IrValue *
named(Ov *o, IrValue *v, const char *suffix)
{
	return ring_named(v, fresh(o, suffix));
}

/* (x + sign * e) mod W, the floor modulo: a rank. */
static IrExpr *
wrap(IrModule *m, IrValue *x, int sign, IrExpr *e, int64_t W)
{
	return ring_B(m, IR_EX_MOD, ring_B(m, sign > 0 ? IR_EX_ADD : IR_EX_SUB, ring_V(m, x), e),
	              ring_C(m, W));
}

/* `ave.if %cond { ... }`: the builder of its body into tb; finish with if_end. */
static IrRegion *
if_begin(IrBuilder *b, IrBuilder *tb)
{
	IrRegion *r = ir_region_new(b->m);
	ir_builder_at_end(tb, b->m, r->block, b->loc);
	return r;
}

static void
if_end(IrBuilder *b, IrBuilder *tb, IrValue *cond, IrRegion *r)
{
	ir_b_yield(tb, 0, NULL, false);
	IrOpState s;
	ir_state_init(&s, IR_OP_IF, b->loc);
	ir_state_value(b->m, &s, cond);
	ir_state_region(b->m, &s, r);
	ir_b_insert(b, ir_op_build(b->m, &s));
}

/* `ave.for %iv = lo to hi step 1 { ... }`: its induction variable, body builder into tb. */
static IrRegion *
for_begin(Ov *o, IrBuilder *b, IrBuilder *tb, IrValue **iv, const char *name)
{
	IrRegion *r = ir_region_new(b->m);
	*iv = ir_block_add_arg(b->m, r->block, o->c->t_index,
	                       fresh(o, name), b->loc);
	ir_builder_at_end(tb, b->m, r->block, b->loc);
	return r;
}

static void
for_end(IrBuilder *b, IrBuilder *tb, IrExpr *lo, IrExpr *hi, IrRegion *r)
{
	ir_b_yield(tb, 0, NULL, false);
	IrOpState s;
	ir_state_init(&s, IR_OP_FOR, b->loc);
	ir_state_item(b->m, &s, IR_IT_EXPR)->e = lo;
	ir_state_item(b->m, &s, IR_IT_EXPR)->e = hi;
	ir_state_item(b->m, &s, IR_IT_EXPR)->e = ring_C(b->m, 1);
	ir_state_region(b->m, &s, r);
	ir_b_insert(b, ir_op_build(b->m, &s));
}

/* `@X[r0, c0]` into item it. */
static void
buf_item(Ov *o, IrItem *it, IrExpr *r0, IrExpr *c0)
{
	it->s = o->name;
	it->suffix = true;
	it->ncoord = 2;
	it->coord = ir_arena_alloc(&o->m->arena, 2 * sizeof(IrCoord));
	it->coord[0] = (IrCoord){r0, -1};
	it->coord[1] = (IrCoord){c0, -1};
}

/* `@chunk(%x)` into item it. */
static void
call_item(Ov *o, IrItem *it, IrValue *x)
{
	it->s = o->chunk->item[0].s;
	it->ncoord = 1;
	it->coord = ir_arena_alloc(&o->m->arena, sizeof(IrCoord));
	it->coord[0] = (IrCoord){ring_V(o->m, x), -1};
}

/* The largest power of two at most `cap` that divides n. */
static int64_t
pow2_div(int64_t n, int64_t cap)
{
	int64_t t = 1;
	while (t * 2 <= cap && n % (t * 2) == 0)
		t *= 2;
	return t;
}

/* Row r * R + ri * tr and column lo + ci * tc of the chunk's tile (ri, ci). */
static IrExpr *
chunk_row(Ov *o, IrValue *r, IrValue *ri, int64_t tr)
{
	IrModule *m = o->m;
	return ring_B(m, IR_EX_ADD, ring_B(m, IR_EX_MUL, ring_V(m, r), ring_C(m, o->R)),
	              ring_B(m, IR_EX_MUL, ring_V(m, ri), ring_C(m, tr)));
}

static IrExpr *
chunk_col(Ov *o, int64_t lo, IrValue *ci, int64_t tc)
{
	IrModule *m = o->m;
	return ring_B(m, IR_EX_ADD, ring_C(m, lo), ring_B(m, IR_EX_MUL, ring_V(m, ci), ring_C(m, tc)));
}

/* A destination rank, base + c + sign * q (base may be NULL), written into each op's `peer`
 * as a term of the loop's variable q (the checker's signal query then stays linear). */
typedef struct Dest {
	IrValue *base, *q;
	int64_t c;
	int sign;
} Dest;

static IrExpr *
dest_expr(IrModule *m, Dest d)
{
	IrExpr *e = ring_V(m, d.q);
	if (d.sign < 0)
		e = ring_B(m, IR_EX_SUB, ring_C(m, d.c), e);
	else
		e = ring_B(m, IR_EX_ADD, e, ring_C(m, d.c));
	return d.base ? ring_B(m, IR_EX_ADD, ring_V(m, d.base), e) : e;
}

/* The put of the rank's chunk into rank `dest`'s copy, tile by tile, then its signal there. */
static void
send_chunk(Ov *o, IrBuilder *b, IrValue *r, Dest dest)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	IrItem *reg = &ir_op_group(o->chunk, c->kw.region)->item[0];
	int64_t lo, len = reg->coord[1].len;
	ir_expr_eval_const(reg->coord[1].e, &lo);
	IrType *bt = o->buf->type[0];
	int64_t tr = pow2_div(o->R, 64), tc = pow2_div(len, 128);
	int64_t dims[2] = {tr, tc};
	IrType *tt = ir_type_tile(c, 2, dims, bt->elem, IR_SPACE_REG, NULL);
	IrBuilder rb, cb;
	IrValue *ri, *ci;
	IrRegion *rr = for_begin(o, b, &rb, &ri, "row");
	IrRegion *cr = for_begin(o, &rb, &cb, &ci, "col");
	IrOpState s;
	ir_state_init(&s, IR_OP_LOAD, b->loc);
	buf_item(o, ir_state_item(m, &s, IR_IT_SYMBOL), chunk_row(o, r, ri, tr),
	         chunk_col(o, lo, ci, tc));
	ir_state_result(m, &s, tt, fresh(o, "tile"));
	IrValue *t = &ir_b_insert(&cb, ir_op_build(m, &s))->res[0];
	/* Fresh expressions: a built op's leaves name its own operands. */
	ir_state_init(&s, IR_OP_PUT, b->loc);
	ir_state_value(m, &s, t);
	buf_item(o, ir_group_add(m, ir_state_group(m, &s, c->kw.into), IR_IT_SYMBOL),
	         chunk_row(o, r, ri, tr), chunk_col(o, lo, ci, tc));
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.peer), dest_expr(m, dest));
	ir_b_insert(&cb, ir_op_build(m, &s));
	for_end(&rb, &cb, ring_C(m, 0), ring_C(m, len / tc), cr);
	for_end(b, &rb, ring_C(m, 0), ring_C(m, o->R / tr), rr);
	ir_state_init(&s, IR_OP_CHUNK_SIGNAL, b->loc);
	call_item(o, ir_state_item(m, &s, IR_IT_CALL), r);
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.peer), dest_expr(m, dest));
	ir_b_insert(b, ir_op_build(m, &s));
}

/* The kernel's ave.program_id ops along the rows' dimension (ud[1], IrVec of IrOp *) and the
 * number of grid dimensions it uses (ud[2]). */
static bool
find_pids(IrOp *op, void *ud)
{
	void **u = ud;
	Ov *o = u[0];
	if (op->code != IR_OP_PROGRAM_ID && op->code != IR_OP_NUM_PROGRAMS)
		return true;
	int64_t d;
	IrGroup *g = ir_op_group(op, o->c->kw.dim);
	if (!g || !ir_expr_eval_const(g->item[0].e, &d))
		return true;
	int *dims = u[2];
	if (d + 1 > *dims)
		*dims = (int)d + 1;
	if (op->code == IR_OP_PROGRAM_ID && d == o->dim)
		ir_vec_push(o->c->al, u[1], &op, sizeof op);
	return true;
}

/* Expression e of the schedule with its parameters (%r, %w) replaced by r and w. */
static IrExpr *
sched_expr(Ov *o, const IrExpr *e, IrValue *r, IrValue *w)
{
	IrModule *m = o->m;
	const IrItem *d = &o->sched->item[0];
	switch (e->kind) {
	case IR_EX_CONST:
		return ring_C(m, e->c);
	case IR_EX_VAL: {
		IrValue *v = ir_op_value(o->sched, e->opnd);
		return ring_V(m, v == d->param[0] ? r : w);
	}
	case IR_EX_NEG:
		return ir_expr_neg(m, sched_expr(o, e->l, r, w));
	default:
		return ir_expr_bin(m, e->kind, sched_expr(o, e->l, r, w), sched_expr(o, e->r, r, w));
	}
}

/* Wave order, before the kernel's first op: the rank, the program id along the rows, and the
 * tile it computes, (chunk of wave pid / P) * P + pid mod P when the grid is one wave of P
 * tiles per rank, else the program id as it is; every program id along the rows becomes the
 * tile. Leaves b before the first op and the old program ids in pids (to erase last). */
static IrValue *
wave_order(Ov *o, IrBuilder *b, IrValue **rank, IrValue **pidp)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	int64_t P = o->R / o->T, W = o->W;
	void *ud[3] = {o, &o->pids, &o->ndims};
	ir_walk_op(o->kernel, find_pids, ud);
	ir_builder_before(b, m, o->kernel->reg[0].block->first);
	b->loc = o->kernel->loc;
	/* The world is the module's (ave.world_size equals it at run time): a constant here, so
	 * the ranks' arithmetic stays linear for the proof. */
	IrValue *r = named(o, op0(b, IR_OP_RANK, c->t_index), "rank");
	IrValue *pid = named(o, ring_grid_op(b, IR_OP_PROGRAM_ID, o->dim), "pid");
	IrValue *np = named(o, ring_grid_op(b, IR_OP_NUM_PROGRAMS, o->dim), "np");
	IrValue *wave = named(o, ir_b_index(b, ring_B(m, IR_EX_FLOORDIV, ring_V(m, pid),
	                                              ring_C(m, P))), "wave");
	/* ring: r - w; swizzle1d: r + w; reduce_scatter.ring: r - w - 1 (own chunk last); a
	 * hand-written all-gather: its chunk(...) at (r, w); a hand-written reduce-scatter, which
	 * hand_rs found equal at every rank and wave to the ring one way or the other: r - w - 1
	 * (partials to r + 1) or r + w + 1 (to r - 1), the forms the proof settles at once. */
	IrExpr *step = ring_V(m, wave);
	if (o->rs)
		step = ring_B(m, IR_EX_ADD, step, ring_C(m, 1));
	bool up = o->swizzle || (o->rs && o->hop == W - 1 && W > 2);
	IrExpr *we = o->hand && !o->rs
	                 ? sched_expr(o, ir_op_group(o->sched, c->kw.chunk)->item[0].e, r, wave)
	                 : wrap(m, r, up ? 1 : -1, step, W);
	IrValue *wc = named(o, ir_b_index(b, we), "wchunk");
	IrValue *whole = named(o, ring_pred(b, ring_B(m, IR_EX_EQ, ring_V(m, np), ring_C(m, W * P)),
	                                    NULL), "whole");
	IrValue *re = ir_b_index(b, ring_B(m, IR_EX_ADD, ring_B(m, IR_EX_MUL, ring_V(m, wc), ring_C(m, P)),
	                                   ring_B(m, IR_EX_MOD, ring_V(m, pid), ring_C(m, P))));
	IrValue *pm = named(o, sel(b, whole, re, pid), "tile");
	for (int i = 0; i < o->pids.len; i++)
		ir_replace_all_uses(&IR_VEC_AT(o->pids, IrOp *, i)->res[0], pm);
	*rank = r;
	if (pidp)
		*pidp = pid;
	return pm;
}

static void
erase_pids(Ov *o)
{
	for (int i = 0; i < o->pids.len; i++)
		ir_op_erase(IR_VEC_AT(o->pids, IrOp *, i));
	ir_vec_free(o->c->al, &o->pids, sizeof(IrOp *));
}

/* The wait, before the first op that reads the buffer, when tile pm's chunk is another
 * rank's (r). */
static void
add_wait(Ov *o, IrValue *r, IrValue *pm)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	int64_t P = o->R / o->T, W = o->W;
	IrBuilder wb;
	ir_builder_before(&wb, m, o->first);
	IrValue *ch = named(o, ir_b_index(&wb, ring_B(m, IR_EX_FLOORDIV, ring_V(m, pm), ring_C(m, P))),
	                    "chunk");
	/* A tile past the world's chunks reads no chunk (past the buffer: nothing). */
	IrValue *inw = named(o, ring_pred(&wb, ring_B(m, IR_EX_LT, ring_V(m, ch), ring_C(m, W)), NULL),
	                     "inworld");
	IrBuilder ib;
	IrRegion *ir = if_begin(&wb, &ib);
	IrValue *far = named(o, ring_pred(&ib, ring_B(m, IR_EX_NE, ring_V(m, ch), ring_V(m, r)), NULL),
	                     "remote");
	IrBuilder fb;
	IrRegion *fr = if_begin(&ib, &fb);
	IrOpState s;
	ir_state_init(&s, IR_OP_CHUNK_WAIT, o->first->loc);
	call_item(o, ir_state_item(m, &s, IR_IT_CALL), ch);
	ir_state_result(m, &s, c->t_token, fresh(o, "tk"));
	ir_b_insert(&fb, ir_op_build(m, &s));
	if_end(&ib, &fb, far, fr);
	if_end(&wb, &ib, inw, ir);
}

static void
rewrite(Ov *o, const char *cost)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	int64_t P = o->R / o->T, W = o->W;
	IrBuilder b;
	IrValue *r, *pid;
	IrValue *pm = wave_order(o, &b, &r, &pid);

	/* The sender: CTA 0 (every program id 0) puts the rank's chunk into each other rank and
	 * signals it there, in the order the ranks receive it: r + 1 .. W - 1, 0 .. r - 1 (ring),
	 * or r - 1 .. 0, W - 1 .. r + 1 (swizzle1d). (Spreading the chunks over the first W - 1
	 * CTAs, where the grid has them, made the checker's signal query time out.) */
	IrExpr *zero = ring_V(m, pid);
	for (int d = 0; d < o->ndims; d++)
		if (d != o->dim)
			zero = ring_B(m, IR_EX_ADD, zero, ring_V(m, ring_grid_op(&b, IR_OP_PROGRAM_ID, d)));
	IrValue *snd = named(o, ring_pred(&b, ring_B(m, IR_EX_EQ, zero, ring_C(m, 0)), NULL), "sender");
	IrBuilder sb;
	IrRegion *sr = if_begin(&b, &sb);
	for (int half = 0; half < 2; half++) {
		IrBuilder qb;
		IrValue *q;
		IrRegion *qr = for_begin(o, &sb, &qb, &q, o->swizzle ? "q" : "peer");
		IrExpr *lo, *hi;
		Dest dest = {NULL, q, 0, 1};
		if (!o->swizzle) {
			lo = half ? ring_C(m, 0) : ring_B(m, IR_EX_ADD, ring_V(m, r), ring_C(m, 1));
			hi = half ? ring_V(m, r) : ring_C(m, W);
		} else {
			/* q counts up; the rank counts down from r - 1, then from W - 1. */
			lo = ring_C(m, 0);
			hi = half ? ring_B(m, IR_EX_SUB, ring_C(m, W - 1), ring_V(m, r)) : ring_V(m, r);
			dest = half ? (Dest){NULL, q, W - 1, -1} : (Dest){r, q, -1, -1};
		}
		send_chunk(o, &qb, r, dest);
		for_end(&sb, &qb, lo, hi, qr);
	}
	if_end(&b, &sb, snd, sr);

	add_wait(o, r, pm);
	/* Last: the builders above insert before the body's first op, maybe one of these. */
	erase_pids(o);
	ir_remark(c, o->kernel->loc,
	          "overlap: kernel '@%s': all-gather of '@%s' (%s) on %lld ranks, %lld tiles of %lld "
	          "rows per chunk along program id %d, chunk waits before the first read, sends "
	          "from CTA 0%s",
	          o->kernel->item[0].s, o->name,
	          o->hand ? "hand-written" : o->swizzle ? "swizzle1d" : "ring", (long long)W,
	          (long long)P, (long long)o->T, o->dim, cost);
}

/* ---- reduce-scatter ---- */

static bool
other_pid(IrOp *op, void *ud)
{
	Ov *o = ud;
	int64_t d;
	IrGroup *g = op->code == IR_OP_PROGRAM_ID ? ir_op_group(op, o->c->kw.dim) : NULL;
	if (g && ir_expr_eval_const(g->item[0].e, &d) && d != o->dim && d != o->cdim)
		fail(o, op, ir_ctx_printf(o->c, "program id dim(%lld) picks neither the rows nor the "
		                          "columns of the store into '@%s' (two CTAs would store one "
		                          "tile)", (long long)d, o->name));
	return true;
}

/* Every program id the kernel reads picks the stored tile: else several CTAs would pass on
 * partial sums of one tile. */
static void
other_pids(Ov *o)
{
	ir_walk_op(o->kernel, other_pid, o);
}

/* `@X.part(%c, %i, %j) region(@X[%c * R + %i * T : T, cols]) signal(@X.sig[...])`, the hop of
 * tile (i, j) of chunk c, and its signal buffer, declared before the kernel; returns the
 * chunk's name. */
static IrStr
rs_decls(Ov *o)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	int64_t P = o->R / o->T;
	IrStr part = NULL, sig = NULL;
	for (int n = 0; !part; n++) {
		IrStr a = ir_intern_cstr(c, n ? ir_ctx_printf(c, "%s.part%d", o->name, n)
		                              : ir_ctx_printf(c, "%s.part", o->name));
		IrStr g = ir_intern_cstr(c, n ? ir_ctx_printf(c, "%s.sig%d", o->name, n)
		                              : ir_ctx_printf(c, "%s.sig", o->name));
		if (!ir_symbol_lookup(c, o->kernel, a) && !ir_symbol_lookup(c, o->kernel, g)) {
			part = a;
			sig = g;
		}
	}
	IrBuilder b;
	ir_builder_before(&b, m, o->kernel);
	b.loc = o->chunk->loc;
	IrOpState s;
	ir_state_init(&s, IR_OP_SYMM_ALLOC, b.loc);
	ir_state_item(m, &s, IR_IT_SYMBOL)->s = sig;
	int64_t n = o->W * P * o->NC;
	ir_state_type(m, &s, ir_type_tensor(c, 1, &n, c->t_i64, IR_SPACE_SYMM, NULL));
	ir_b_insert(&b, ir_op_build(m, &s));

	ir_state_init(&s, IR_OP_CHUNK, b.loc);
	IrItem *it = ir_state_item(m, &s, IR_IT_DECL);
	static const char *const pn[3] = {"c", "i", "j"};
	it->s = part;
	it->nparam = 3;
	it->param = ir_arena_alloc(&m->arena, 3 * sizeof(IrValue *));
	for (int j = 0; j < 3; j++) {
		it->param[j] = ir_param_new(m, c->t_index, ir_intern_cstr(c, pn[j]), b.loc);
		it->param[j]->index = j;
	}
	IrValue **x = it->param;
	IrItem *reg = ir_group_add(m, ir_state_group(m, &s, c->kw.region), IR_IT_SYMBOL);
	reg->s = o->name;
	reg->suffix = true;
	reg->ncoord = 2;
	reg->coord = ir_arena_alloc(&m->arena, 2 * sizeof(IrCoord));
	reg->coord[0] = (IrCoord){ring_B(m, IR_EX_ADD, ring_B(m, IR_EX_MUL, ring_V(m, x[0]),
	                                                      ring_C(m, o->R)),
	                                 ring_B(m, IR_EX_MUL, ring_V(m, x[1]), ring_C(m, o->T))),
	                          o->T};
	reg->coord[1] = o->colv ? (IrCoord){ring_B(m, IR_EX_MUL, ring_V(m, x[2]), ring_C(m, o->TN)),
	                                    o->TN}
	                        : (IrCoord){ring_C(m, o->C0), o->TN};
	IrItem *sg = ir_group_add(m, ir_state_group(m, &s, c->kw.signal), IR_IT_SYMBOL);
	sg->s = sig;
	sg->suffix = true;
	sg->ncoord = 1;
	sg->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
	IrExpr *e = ring_B(m, IR_EX_ADD, ring_B(m, IR_EX_MUL, ring_V(m, x[0]), ring_C(m, P * o->NC)),
	                   ring_B(m, IR_EX_MUL, ring_V(m, x[1]), ring_C(m, o->NC)));
	sg->coord[0] = (IrCoord){ring_B(m, IR_EX_ADD, e, ring_V(m, x[2])), -1};
	ir_b_insert(&b, ir_op_build(m, &s));
	return part;
}

/* `@part(%ch, %ti, %cj)` (%cj: 0 without a column program id) into item it. */
static void
part_item(Ov *o, IrItem *it, IrStr part, IrValue *ch, IrValue *ti)
{
	IrModule *m = o->m;
	it->s = part;
	it->ncoord = 3;
	it->coord = ir_arena_alloc(&m->arena, 3 * sizeof(IrCoord));
	it->coord[0] = (IrCoord){ring_V(m, ch), -1};
	it->coord[1] = (IrCoord){ring_V(m, ti), -1};
	it->coord[2] = (IrCoord){o->colv ? ring_V(m, o->colv) : ring_C(m, 0), -1};
}

/* The hop of tile (ch, ti): `ave.put %v into(@X[<the store's place>]) peer((r + hop) mod W)`,
 * then its signal there. */
static void
rs_pass_on(Ov *o, IrBuilder *b, IrValue *v, IrValue *r, IrStr part, IrValue *ch, IrValue *ti)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	const IrItem *at = &ir_op_group(o->store, c->kw.into)->item[0];
	IrOpState s;
	ir_state_init(&s, IR_OP_PUT, b->loc);
	ir_state_value(m, &s, v);
	ring_copy_item(m, o->store, at, ir_group_add(m, ir_state_group(m, &s, c->kw.into),
	                                            IR_IT_SYMBOL), NULL, NULL);
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.peer), wrap(m, r, 1, ring_C(m, o->hop), o->W));
	ir_b_insert(b, ir_op_build(m, &s));
	ir_state_init(&s, IR_OP_CHUNK_SIGNAL, b->loc);
	part_item(o, ir_state_item(m, &s, IR_IT_CALL), part, ch, ti);
	ir_group_add_expr(m, ir_state_group(m, &s, c->kw.peer), wrap(m, r, 1, ring_C(m, o->hop), o->W));
	ir_b_insert(b, ir_op_build(m, &s));
}

/* `ave.if %c0 { ave.if %c1 { ... } }` over the non-NULL conditions of c[0..n): tb builds the
 * innermost body; rs_ifs_end closes them. */
typedef struct RsIfs {
	IrBuilder b[3];
	IrRegion *r[3];
	IrValue *c[3];
	int n;
} RsIfs;

static RsIfs
rs_ifs(IrBuilder *b, IrBuilder *tb, IrValue **c, int n)
{
	RsIfs x = {.n = 0};
	IrBuilder cur = *b;
	for (int i = 0; i < n; i++)
		if (c[i]) {
			x.b[x.n] = cur;
			x.c[x.n] = c[i];
			x.r[x.n] = if_begin(&x.b[x.n], &cur);
			x.n++;
		}
	*tb = cur;
	return x;
}

static void
rs_ifs_end(IrBuilder *tb, RsIfs *x)
{
	for (int i = x->n - 1; i >= 0; i--) {
		if_end(&x->b[i], tb, x->c[i], x->r[i]);
		*tb = x->b[i];
	}
}

/* The chunk rank r computes at wave 0, r - hop: r - 1 on the ring, r + 1 the other way. */
static IrExpr *
wave0(Ov *o, IrValue *r)
{
	return wrap(o->m, r, 1, ring_C(o->m, o->hop == 1 ? o->W - 1 : 1), o->W);
}

static void
rewrite_rs(Ov *o)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	int64_t P = o->R / o->T, W = o->W;
	IrBuilder b;
	IrValue *r;
	IrValue *pm = wave_order(o, &b, &r, NULL);
	IrStr part = rs_decls(o);
	IrOp *st = o->store;
	IrValue *v = ir_op_value(st, st->item[0].opnd);
	const IrItem *at = &ir_op_group(st, c->kw.into)->item[0];
	IrBuilder sb;
	ir_builder_before(&sb, m, st);
	sb.loc = st->loc;
	IrValue *ch = named(o, ir_b_index(&sb, ring_B(m, IR_EX_FLOORDIV, ring_V(m, pm), ring_C(m, P))),
	                    "chunk");
	IrValue *ti = named(o, ir_b_index(&sb, ring_B(m, IR_EX_MOD, ring_V(m, pm), ring_C(m, P))),
	                    "trow");
	/* A tile past the world's chunks (or the buffer's columns) stores nothing; the first rank
	 * to compute a tile (its chunk is wave 0's: r - 1 on the ring, chunk(r, 0) by hand) starts
	 * the sum, every later one waits for it. */
	IrValue *inworld = named(o, ring_pred(&sb, ring_B(m, IR_EX_LT, ring_V(m, ch), ring_C(m, W)),
	                                      NULL), "inworld");
	IrValue *incols = o->colv ? named(o, ring_pred(&sb, ring_B(m, IR_EX_LT, ring_V(m, o->colv),
	                                                           ring_C(m, o->NC)), NULL), "incols")
	                          : NULL;
	IrValue *first = named(o, ring_pred(&sb, ring_B(m, IR_EX_EQ, ring_V(m, ch), wave0(o, r)),
	                                    NULL), "first");
	IrValue *later = named(o, ring_pred(&sb, ring_B(m, IR_EX_NE, ring_V(m, ch), wave0(o, r)),
	                                    NULL), "later");
	IrValue *conds[3] = {inworld, incols, later};
	/* The wait, alone under its conditions, before the tile's hop (the checker takes a wait
	 * of an earlier op of the kernel body as covering what follows, as for all-gathers). */
	IrBuilder lb;
	RsIfs wi = rs_ifs(&sb, &lb, conds, 3);
	IrOpState s;
	ir_state_init(&s, IR_OP_CHUNK_WAIT, st->loc);
	part_item(o, ir_state_item(m, &s, IR_IT_CALL), part, ch, ti);
	ir_state_result(m, &s, c->t_token, fresh(o, "tk"));
	ir_b_insert(&lb, ir_op_build(m, &s));
	rs_ifs_end(&lb, &wi);
	IrBuilder ib;
	RsIfs ii = rs_ifs(&sb, &ib, conds, 2);
	IrBuilder fb;
	IrRegion *fr = if_begin(&ib, &fb);
	rs_pass_on(o, &fb, v, r, part, ch, ti);
	if_end(&ib, &fb, first, fr);
	IrRegion *lr = if_begin(&ib, &lb);
	ir_state_init(&s, IR_OP_LOAD, st->loc);
	ring_copy_item(m, st, at, ir_state_item(m, &s, IR_IT_SYMBOL), NULL, NULL);
	ir_state_result(m, &s, v->type, fresh(o, "partial"));
	IrValue *in = &ir_b_insert(&lb, ir_op_build(m, &s))->res[0];
	IrValue *ab[2] = {v, in};
	IrValue *sum = named(o, &ir_b_op(&lb, IR_OP_ADD, 1, &v->type, 2, ab)->res[0], "sum");
	IrValue *mid = named(o, ring_pred(&lb, ring_B(m, IR_EX_NE, ring_V(m, ch), ring_V(m, r)), NULL),
	                     "pass");
	IrBuilder pb;
	IrRegion *pr = if_begin(&lb, &pb);
	rs_pass_on(o, &pb, sum, r, part, ch, ti);
	if_end(&lb, &pb, mid, pr);
	IrValue *own = named(o, ring_pred(&lb, ring_B(m, IR_EX_EQ, ring_V(m, ch), ring_V(m, r)), NULL),
	                     "own");
	IrBuilder ob;
	IrRegion *orr = if_begin(&lb, &ob);
	ir_state_init(&s, IR_OP_STORE, st->loc);
	ir_state_value(m, &s, sum);
	ring_copy_item(m, st, at, ir_group_add(m, ir_state_group(m, &s, c->kw.into), IR_IT_SYMBOL),
	               NULL, NULL);
	ir_b_insert(&ob, ir_op_build(m, &s));
	if_end(&lb, &ob, own, orr);
	if_end(&ib, &lb, later, lr);
	rs_ifs_end(&ib, &ii);
	ir_op_erase(st);
	erase_pids(o);
	ir_remark(c, o->kernel->loc,
	          "overlap: kernel '@%s': reduce-scatter of '@%s' (%s) on %lld ranks, %lld tiles of "
	          "%lld rows per chunk along program id %d, each tile's partial sum passed to rank "
	          "r + %lld through '@%s'%s",
	          o->kernel->item[0].s, o->name, o->hand ? "hand-written" : "ring", (long long)W,
	          (long long)P, (long long)o->T, o->dim, (long long)o->hop, part,
	          o->target ? " (the cost model weighs all-gathers only: a reduce-scatter has no "
	                      "collective after the kernel to weigh against)"
	                    : "");
}

/* ---- does overlap pay? (docs/passes.md, "The cost model") ---- */

/* What the model takes of the GPUs a target's kernels run on: SMs (CUs), dense 16-bit MMA
 * peak and how much slower f32 operands run (CUDA cores or f32 MFMA) or faster f8 ones, the bus
 * bandwidth of a collective all-gather over the GPUs' links, what the one CTA that sends a
 * rank's chunk reaches with its puts, and a collective's fixed cost (its launch and
 * synchronization). The vendors' figures, and estimates where none is published (one CTA's
 * puts); `overlap{tflops= coll-gbps= put-gbps=}` replaces them. */
typedef struct Machine {
	const char *gpu;
	double sms, tflops, f32_div, f8_mul, coll_gbps, put_gbps, coll_us;
} Machine;

static const Machine machines[TARGET_COUNT] = {
    [TARGET_SM_80] = {"A100 SXM", 108, 312, 16, 1, 230, 60, 15},
    [TARGET_SM_90A] = {"H100/H200 SXM", 132, 989, 15, 2, 360, 100, 15},
    [TARGET_GFX942] = {"MI300X", 304, 1307, 8, 2, 330, 50, 20},
    [TARGET_GFX90A] = {"MI250X GCD", 110, 191, 4, 1, 150, 40, 20},
};

enum { MMA_EFFICIENCY_PCT = 75 }; /* of the peak, inside one tile's main loop */

/* The overrides of the model's figures (0: the target's). */
typedef struct Knobs {
	int64_t tflops, coll_gbps, put_gbps;
} Knobs;

/* The trip count of loop op when constant, else -1. */
static int64_t
const_trip(IrOp *op)
{
	int64_t lb, ub, st;
	if (!ir_expr_eval_const(op->item[0].e, &lb) || !ir_expr_eval_const(op->item[1].e, &ub) ||
	    !ir_expr_eval_const(op->item[2].e, &st) || st <= 0)
		return -1;
	return ub > lb ? (ub - lb + st - 1) / st : 0;
}

typedef struct Work {
	Ov *o;
	const Machine *mc;
	double flops;          /* one CTA's MMA work, in 16-bit FLOPs (f32 and f8 weighted by their
	                        * speed); < 0 when a loop's trip count is unknown */
	int nmma;
	int64_t ext[3];        /* CTAs along each grid dimension, from a store's static extent */
	unsigned read;         /* bit d: the kernel reads program id d */
} Work;

static bool
work_scan(IrOp *op, void *ud)
{
	Work *w = ud;
	IrCtx *c = w->o->c;
	if (op->code == IR_OP_PROGRAM_ID) {
		int64_t d;
		IrGroup *g = ir_op_group(op, c->kw.dim);
		if (g && ir_expr_eval_const(g->item[0].e, &d) && d >= 0 && d < 3)
			w->read |= 1u << d;
	}
	if ((op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC) && w->flops >= 0) {
		IrValue *a = ir_item_value(op, &op->item[0]);
		IrType *at = a ? a->type : NULL, *rt = op->res[0].type;
		if (at && at->kind == IR_TY_RING)
			at = at->elem;
		w->nmma++;
		double f = at && at->rank == 2 ? 2.0 * (double)rt->dims[0] * (double)rt->dims[1] *
		                                     (double)at->dims[1]
		                               : -1;
		int bits = at ? ir_type_elem_bits(at) : 16;
		f = f < 0 ? f : bits >= 32 ? f * w->mc->f32_div : bits <= 8 ? f / w->mc->f8_mul : f;
		for (IrOp *p = ir_op_parent_op(op); p && p != w->o->kernel && f > 0;
		     p = ir_op_parent_op(p)) {
			int64_t n = p->code == IR_OP_FOR ? const_trip(p) : 1;
			f = n < 0 ? -1 : f * (double)n;
		}
		w->flops = f < 0 ? -1 : w->flops + f;
	}
	/* A store into a tensor of static extent at `%q * TN + o`: ceil(extent / TN) CTAs along
	 * q's dimension write it. */
	IrGroup *into = op->code == IR_OP_STORE ? ir_op_group(op, c->kw.into) : NULL;
	IrValue *tv = into ? ir_item_value(op, &into->item[0]) : NULL;
	for (int d = 0; tv && tv->type->kind == IR_TY_TENSOR && d < into->item[0].ncoord &&
	                d < tv->type->rank; d++) {
		IrValue *v = NULL;
		int64_t coef = 0, cst = 0, pd;
		IrGroup *g;
		if (linear(op, into->item[0].coord[d].e, &v, &coef, &cst) && v && coef > 0 &&
		    v->kind == IR_VAL_RESULT && v->op->code == IR_OP_PROGRAM_ID &&
		    (g = ir_op_group(v->op, c->kw.dim)) && ir_expr_eval_const(g->item[0].e, &pd) &&
		    pd >= 0 && pd < 3 && tv->type->dims[d] != IR_DYN && !w->ext[pd])
			w->ext[pd] = (tv->type->dims[d] + coef - 1) / coef;
	}
	return true;
}

/* The two estimates for `ncta` CTAs a chunk, each doing `t` microseconds of MMA work on an SM
 * of its own (a grid of more CTAs than SMs takes rounds):
 *   all the tiles     G    = ceil(W ncta / sms) t
 *   the last chunk's  Cw   = ceil(ncta / sms) t
 *   overlapped        Tov  = max(G, (W - 1) S / put + Cw)
 *   collective first  Tcol = fixed + (W - 1) S / coll + G
 * with S the chunk's bytes: one CTA sends the rank's chunk to each rank in turn while the grid
 * computes the chunks that have arrived (the SMs take the next CTAs as they free up), so the
 * kernel ends with the tiles, or with the last chunk's tiles after it arrives; the collective
 * moves the chunks at the links' bus bandwidth, and the kernel computes after it. */
static void
estimate(const Machine *mc, double W, double S, double ncta, double t, double *tov, double *tcol)
{
	double g = ceil(W * ncta / mc->sms) * t, cw = ceil(ncta / mc->sms) * t;
	double last = (W - 1) * S / (mc->put_gbps * 1e3) + cw;
	*tov = g > last ? g : last;
	*tcol = mc->coll_us + (W - 1) * S / (mc->coll_gbps * 1e3) + g;
}

/* The model's verdict for an all-gather: true when the collective before the kernel wins;
 * *why is what `-v` says. Times in microseconds, per launch on one rank. */
static bool
collective_wins(Ov *o, const TargetInfo *t, const Knobs *kn, const char **why)
{
	IrCtx *c = o->c;
	*why = "";
	if (!t || !machines[t->id].gpu) {
		*why = " (no GPU target: the cost model is not applied)";
		return false;
	}
	Machine mc = machines[t->id];
	mc.tflops = kn->tflops ? (double)kn->tflops : mc.tflops;
	mc.coll_gbps = kn->coll_gbps ? (double)kn->coll_gbps : mc.coll_gbps;
	mc.put_gbps = kn->put_gbps ? (double)kn->put_gbps : mc.put_gbps;
	IrItem *reg = &ir_op_group(o->chunk, c->kw.region)->item[0];
	double W = (double)o->W, P = (double)(o->R / o->T);
	double S = (double)o->R * (double)reg->coord[1].len * ir_type_elem_bits(o->buf->type[0]) / 8;
	Work w = {o, &mc, 0, 0, {0}, 0};
	ir_walk_op(o->kernel, work_scan, &w);
	const char *mach = ir_ctx_printf(c, "%s: %.0f SMs, %.0f TFLOP/s, all-gather %.0f GB/s, "
	                                 "one CTA's puts %.0f GB/s", mc.gpu, mc.sms, mc.tflops,
	                                 mc.coll_gbps, mc.put_gbps);
	if (w.flops <= 0) {
		*why = ir_ctx_printf(c, "; cost model (%s): no estimate, %s: overlapped", mach,
		                     w.flops < 0 ? "a loop around an 'ave.mma' has no constant trip "
		                                   "count"
		                     : w.nmma    ? "its MMAs are in loops that run no iteration"
		                                 : "the kernel has no 'ave.mma'");
		return false;
	}
	/* One CTA's MMA work on one SM, in microseconds. */
	double tcta = w.flops / (mc.tflops * 1e6 * MMA_EFFICIENCY_PCT / 100 / mc.sms);
	double known = P, tov, tcol;
	const char *unknown = NULL;
	for (int d = 0; d < 3; d++)
		if (d != o->dim && (w.read >> d & 1)) {
			if (!w.ext[d])
				unknown = ir_ctx_printf(c, "program id %d", d);
			else
				known *= (double)w.ext[d];
		}
	if (unknown) {
		/* The first count of CTAs along it where overlap pays, and the count from which it
		 * pays at every count up to the bound (rounds of SMs make the model's choice come and
		 * go between them). */
		enum { BOUND = 1 << 14 };
		int64_t first = 0, from = 0;
		for (int64_t n = 1; n <= BOUND; n++) {
			estimate(&mc, W, S, known * (double)n, tcta, &tov, &tcol);
			if (tov < tcol && !first)
				first = n;
			if (tov < tcol && !from)
				from = n;
			if (tov >= tcol)
				from = 0;
		}
		const char *pre = ir_ctx_printf(c, "; cost model (%s): the grid along %s is not known "
		                                "here; ", mach, unknown);
		*why = !first ? ir_ctx_printf(c, "%soverlap does not pay up to %d CTAs along it, but "
		                              "is applied", pre, BOUND)
		       : first == from
		           ? ir_ctx_printf(c, "%soverlap pays from %lld CTAs along it, so it is "
		                           "applied", pre, (long long)first)
		       : from ? ir_ctx_printf(c, "%soverlap pays at %lld CTAs along it and at every "
		                              "count from %lld (not at some between: the model counts "
		                              "rounds of SMs), so it is applied", pre,
		                              (long long)first, (long long)from)
		              : ir_ctx_printf(c, "%soverlap pays at %lld CTAs along it and at some "
		                              "larger counts, so it is applied", pre,
		                              (long long)first);
		return false;
	}
	estimate(&mc, W, S, known, tcta, &tov, &tcol);
	bool lose = tov >= tcol;
	*why = ir_ctx_printf(c, "; cost model (%s): %.0f CTAs a chunk, overlapped ~%.1f us, "
	                     "all-gather then the kernel ~%.1f us: %s", mach, known, tov, tcol,
	                     lose ? "the collective first" : "overlap pays");
	return lose;
}

/* The kernel as written, behind a collective: the launch gathers every rank's chunk into
 * every rank and signals it there before the kernel starts (`gathered = @chunk`, which the
 * runtime and the interpreter carry out); the kernel waits for its tile's chunk as the
 * overlapped one does, so the same proof covers its reads. */
static void
gather(Ov *o, const char *cost)
{
	IrModule *m = o->m;
	IrCtx *c = o->c;
	IrBuilder b;
	ir_builder_before(&b, m, o->kernel->reg[0].block->first);
	b.loc = o->kernel->loc;
	IrValue *r = named(o, op0(&b, IR_OP_RANK, c->t_index), "rank");
	IrValue *pid = named(o, ring_grid_op(&b, IR_OP_PROGRAM_ID, o->dim), "pid");
	add_wait(o, r, pid);
	ir_op_set_attr(m, o->kernel, c->kw.gathered, ir_attr_sym(c, o->chunk->item[0].s));
	ir_remark(c, o->kernel->loc,
	          "overlap: kernel '@%s': '@%s' gathered before the launch (gathered = @%s) on %lld "
	          "ranks, the tiles in their own order, chunk waits before the first read%s",
	          o->kernel->item[0].s, o->name, o->chunk->item[0].s, (long long)o->W, cost);
}

static bool
overlap_kernel(IrModule *m, IrOp *k, const IrPassOpts *opts, const char *mode, const Knobs *kn)
{
	const TargetInfo *t = pass_kernel_target(m->ctx, k, opts ? opts->target : NULL);
	IrCtx *c = m->ctx;
	IrAttr *ov = ir_op_attr(k, c->kw.overlap), *opnd = ir_op_attr(k, c->kw.overlap_operand);
	if (!ov || ov->kind != IR_ATTR_SYM || !opnd || opnd->kind != IR_ATTR_SYM)
		return false;
	Ov o = {.m = m, .c = c, .kernel = k, .dim = -1};
	o.target = t && t->vendor != TARGET_VENDOR_HOST ? t : NULL;
	if (plan(&o, ov, opnd)) {
		Scan s = {&o, 0, false};
		ir_walk_op(k, scan, &s);
		if (s.chunk_ops)
			return false; /* already communicates: written by hand or rewritten */
		if (ir_op_attr(k, c->kw.gathered))
			fail(&o, k, "its launch gathers the chunks already ('gathered'): sends of its "
			            "own would signal every chunk twice");
		if (!o.rs && !s.nread)
			fail(&o, k, ir_ctx_printf(c, "the kernel does not read '@%s'", o.name));
		if (o.rs && !o.store)
			fail(&o, k, ir_ctx_printf(c, "the kernel does not store into '@%s'", o.name));
		if (o.rs && !o.why)
			other_pids(&o);
		if (!o.why && o.dim < 0)
			fail(&o, k, "the program id dimension of the reads is not a constant");
	}
	if (o.why) {
		ir_vec_free(c->al, &o.made, sizeof(IrStr));
		ir_warning(c, o.bad ? o.bad->loc : k->loc,
		           "'overlap = @%s' is not applied to kernel '@%s': %s", ov->s, k->item[0].s,
		           o.why);
		return false;
	}
	if (o.rs) {
		if (!strcmp(mode, "gather")) {
			ir_error(c, k->loc, "overlap{mode=gather}: kernel '@%s' is a reduce-scatter; a "
			         "collective after the kernel is not built (mode=gather takes "
			         "all-gathers)", k->item[0].s);
			ir_vec_free(c->al, &o.made, sizeof(IrStr));
			return false;
		}
		rewrite_rs(&o);
	} else {
		const char *why = "";
		bool coll = !strcmp(mode, "gather") ||
		            (!strcmp(mode, "auto") && collective_wins(&o, t, kn, &why));
		if (strcmp(mode, "auto"))
			why = ir_ctx_printf(c, " (mode=%s)", mode);
		if (coll)
			gather(&o, why);
		else
			rewrite(&o, why);
	}
	ir_vec_free(c->al, &o.made, sizeof(IrStr));
	return true;
}

/* Forwards diagnostics, counting the reads of symmetric memory no chunk covers. */
typedef struct Watch {
	IrDiagHandler h;
	void *ud;
	int uncovered;
} Watch;

static void
watch(void *ud, const IrDiag *d)
{
	Watch *w = ud;
	w->uncovered += d->sev == IR_SEV_ERROR &&
	                !strncmp(d->msg, "this read of symmetric memory", 29);
	w->h(w->ud, d);
}

static void
collect(IrBlock *blk, IrVec *ks, const IrAllocator *al)
{
	for (IrOp *op = blk->first; op; op = op->next) {
		if (op->code == IR_OP_KERNEL)
			ir_vec_push(al, ks, &op, sizeof op);
		else if (op->code == IR_OP_MODULE)
			collect(op->reg[0].block, ks, al);
	}
}

bool
pass_overlap(IrModule *m, const IrPassOpts *opts)
{
	IrCtx *c = m->ctx;
	const char *mode = ir_pass_arg(opts, "mode");
	if (!mode)
		mode = "auto";
	if (strcmp(mode, "auto") && strcmp(mode, "overlap") && strcmp(mode, "gather")) {
		ir_error(c, (IrLoc){0}, "overlap: mode=%s: expected auto, overlap or gather", mode);
		return false;
	}
	Knobs kn;
	if (!ir_pass_arg_int(c, opts, "overlap", "tflops", 0, 1, 100000, &kn.tflops) ||
	    !ir_pass_arg_int(c, opts, "overlap", "coll-gbps", 0, 1, 100000, &kn.coll_gbps) ||
	    !ir_pass_arg_int(c, opts, "overlap", "put-gbps", 0, 1, 100000, &kn.put_gbps))
		return false;
	IrVec ks = {0};
	collect(m->body, &ks, c->al);
	bool changed = false;
	int before = c->nerrors;
	for (int i = 0; i < ks.len; i++)
		changed |= overlap_kernel(m, IR_VEC_AT(ks, IrOp *, i), opts, mode, &kn);
	if (c->nerrors > before) {
		ir_vec_free(c->al, &ks, sizeof(IrOp *));
		return false;
	}
	ir_vec_free(c->al, &ks, sizeof(IrOp *));
	if (!changed)
		return c->nerrors == 0;
	/* The rewrite waits for the chunk each read's rows lie in; a read the proof finds
	 * uncovered reads columns no chunk holds: the input's error, not the pass's. */
	Watch w = {c->handler, c->handler_ud, 0};
	c->handler = watch;
	c->handler_ud = &w;
	bool ok = pass_check_invariants_with(m, &(PassCkOpts){0});
	c->handler = w.h;
	c->handler_ud = w.ud;
	if (!ok && w.uncovered)
		ir_error(c, (IrLoc){0}, "overlap: a kernel reads its symmetric buffer outside the "
		         "regions of its chunks (the %d errors above): no chunk wait can cover that "
		         "read; widen the chunk's region or read inside it", c->nerrors - before);
	else if (!ok)
		ir_error(c, (IrLoc){0}, "internal error: overlap built a kernel that check-invariants "
		         "does not prove (%d errors above); please report it with the input",
		         c->nerrors - before);
	return ok;
}
