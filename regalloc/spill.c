/* spill.c — keeping a register tile in shared memory across the stretch where nothing reads it
 * (SPEC 5.10, docs/regalloc.md "Spilling"), so that a group whose tiles do not fit its budget
 * fits:
 *
 *   %a = ...                                %a = ...
 *   ...                                     ave.smem.store %a into(%a.spill)
 *   <the peak: %a live, unread>      ─▶     <the peak: %a's registers free>
 *   %r = ave.add %a, %x                     %a.fill = ave.smem.load %a.spill
 *                                           %r = ave.add %a.fill, %x
 *
 * The stretch is found in the block that defines the tile: between the last op before the peak
 * that defines or reads it and the first op after the peak that reads it, where the op holding
 * the peak reads nothing of it (or is an ave.if whose branch holding the peak reads nothing of
 * it: the other branches read it back themselves). Each thread writes and reads back only the
 * elements it holds
 * (the lowering gives the reload the stored tile's layout), and the buffer is the tile's own: the
 * program computes what it computed. */
#include <stdlib.h>
#include <string.h>

#include "regalloc.h"

static bool
live_at(const RaTile *t, int h)
{
	return t->live[h / 64] >> (h % 64) & 1;
}

/* The op that defines v (a block argument: the op owning the block). */
static IrOp *
def_op(IrValue *v)
{
	if (v->kind == IR_VAL_RESULT)
		return v->op;
	return v->block ? ir_block_parent_op(v->block) : NULL;
}

/* v is defined in block b: by one of its ops, or as one of its arguments. */
static bool
defined_in(IrValue *v, IrBlock *b)
{
	return v->kind == IR_VAL_RESULT ? v->op->parent == b : v->block == b;
}

/* op (or an op nested in it) reads v. */
static bool
reads(IrOp *op, IrValue *v)
{
	for (IrUse *u = v->uses; u; u = u->next)
		if (ir_op_is_ancestor(op, u->user))
			return true;
	return false;
}

/* The op of block b that is or holds op; NULL when op is outside b. */
static IrOp *
in_block(IrOp *op, IrBlock *b)
{
	while (op && op->parent != b)
		op = ir_op_parent_op(op);
	return op;
}

static int
loop_depth(IrBlock *b)
{
	int d = 0;
	for (IrOp *o = ir_block_parent_op(b); o; o = ir_op_parent_op(o))
		d += o->code == IR_OP_FOR;
	return d;
}

/* Why v cannot leave its registers: NULL when it can. Tiles an asynchronous product reads or
 * holds stay where the instruction reads or writes them; a view (ave.bcast, ave.tag) reads its
 * operand's registers for as long as it lives; a predicate tile has no shared-memory form. */
static const char *
unmovable(IrValue *v)
{
	if (v->kind == IR_VAL_RESULT && v->op->code == IR_OP_MMA_ASYNC)
		return "a pending asynchronous product";
	if (ir_type_elem_bits(v->type) < 8)
		return "a predicate tile";
	for (IrUse *u = v->uses; u; u = u->next) {
		IrOpcode k = u->user->code;
		if (k == IR_OP_MMA_ASYNC || k == IR_OP_MMA_WAIT)
			return "read by an asynchronous product";
		if (k == IR_OP_BCAST || k == IR_OP_TAG)
			return "viewed by another value";
	}
	return NULL;
}

typedef struct Cand {
	int tile;
	IrBlock *b;
	IrOp *prev, *next; /* prev NULL: from the start of b (v is its argument); next NULL: not
			      read after the stretch in b */
	IrOp *branch;      /* an ave.if holding the peak in region `quiet`, which does not read the
			      tile, while its other regions do: each gets a reload of its own */
	int quiet;
	int depth;
	int until;         /* the first reload's program point */
	bool remat;        /* loaded again from global memory instead (remat_ok) */
} Cand;

static int
point_of(const RaPlan *p, const IrOp *op)
{
	for (int i = 0; i < p->npoint; i++)
		if (p->point[i] == op)
			return i;
	return -1;
}

bool
ra_remat_load(const IrOp *op)
{
	return op->code == IR_OP_LOAD && op->res[0].name && strstr(op->res[0].name, ".remat");
}

/* An ave.smem.store into, or ave.smem.load from, a buffer regalloc made, or a tile it loads
 * again. */
static bool
spill_op(IrCtx *c, IrOp *op)
{
	if (ra_remat_load(op))
		return true;
	if (op->code == IR_OP_SMEM_LOAD)
		return ir_spill_buffer(c, ir_item_value(op, &op->item[0]));
	if (op->code == IR_OP_SMEM_STORE)
		return ir_spill_buffer(c, ir_item_value(op, &ir_op_group(op, c->kw.into)->item[0]));
	return false;
}

/* The stretch of v's block around `at` (the op holding the peak) where v is not read; NULL, or
 * why there is none. */
static const char *
stretch(IrCtx *cx, IrValue *v, IrOp *at, Cand *c)
{
	IrBlock *b = at->parent;
	IrOp *anc = at;
	while (!defined_in(v, b)) {
		anc = ir_block_parent_op(b);
		if (!anc)
			return "defined elsewhere";
		b = anc->parent;
	}
	if (v->kind == IR_VAL_RESULT && v->op == anc)
		return anc == at ? "defined there" : "defined by the op that holds it";
	c->branch = NULL;
	if (reads(anc, v)) {
		if (anc == at)
			return "read there";
		/* The branch of an ave.if that holds the peak may not read it: the others reload. */
		IrOp *in = at;
		while (ir_op_parent_op(in) != anc)
			in = ir_op_parent_op(in);
		int r = 0;
		while (r < anc->nreg && in->parent != anc->reg[r].block)
			r++;
		bool quiet = anc->code == IR_OP_IF && r < anc->nreg;
		for (IrOp *q = quiet ? anc->reg[r].block->first : NULL; q && quiet; q = q->next)
			quiet = !reads(q, v);
		for (int i = 0; quiet && i < anc->nopnd; i++)
			quiet = ir_op_value(anc, i) != v; /* the condition is an i1, never a tile */
		if (!quiet)
			return "read in the op that holds it";
		c->branch = anc;
		c->quiet = r;
	}
	c->b = b;
	c->prev = c->next = NULL;
	for (IrOp *q = anc->prev; q && !c->prev; q = q->prev)
		if (reads(q, v) || (v->kind == IR_VAL_RESULT && v->op == q))
			c->prev = q;
	for (IrOp *q = anc->next; q && !c->next; q = q->next)
		if (reads(q, v))
			c->next = q;
	c->depth = loop_depth(b);
	if (!c->next && !c->branch)
		return "read next in a later iteration";
	if (c->depth >= 2)
		return "in an inner loop (the checker does not order a store and a reload there)";
	/* Across nothing but another tile's store or reload, the registers come free only where
	 * that tile needs its own: no gain, and no end to the spills. */
	for (IrOp *q = c->prev ? c->prev->next : b->first; q && q != c->next; q = q->next)
		if (!spill_op(cx, q))
			return NULL;
	return "read again right after the reloads before it";
}

/* Whether v, an ave.load of a tensor argument that nothing in the kernel writes, can be loaded
 * again where it is read after the stretch instead of waiting in shared memory
 * (rematerialized): every use of the argument reads it (ave.load, the source of an
 * ave.copy.async, a tag function's region). Distinct tensor arguments are taken not to overlap,
 * as the global-store race check takes them (docs/invariants.md): no CTA, role or later op
 * writes what the load read, so loading it later gives the same data. */
static bool
remat_ok(IrValue *v, const Cand *c)
{
	if (v->kind != IR_VAL_RESULT || v->op->code != IR_OP_LOAD || v->op->parent != c->b)
		return false;
	IrValue *src = ir_item_value(v->op, &v->op->item[0]);
	if (!src || src->kind != IR_VAL_ARG || !src->block ||
	    ir_block_parent_op(src->block)->code != IR_OP_KERNEL)
		return false;
	for (IrUse *u = src->uses; u; u = u->next) {
		IrOp *q = u->user;
		if (q->code == IR_OP_LOAD || q->code == IR_OP_TAG_FUNC)
			continue;
		if (q->code == IR_OP_COPY_ASYNC && q->nitem && ir_item_value(q, &q->item[0]) == src)
			continue;
		return false;
	}
	return true;
}

/* Cheapest first: outside loops, then the smallest tile that covers the excess (else the
 * largest), then the one read again the latest (it frees its registers the longest). */
static bool
better(const RaPlan *p, const Cand *x, const Cand *y, int excess)
{
	if (x->depth != y->depth)
		return x->depth < y->depth;
	if (x->remat != y->remat)
		return x->remat; /* no shared memory, one more load of what the kernel loaded */
	int rx = p->tile[x->tile].regs, ry = p->tile[y->tile].regs;
	bool cx = rx >= excess, cy = ry >= excess;
	if (cx != cy)
		return cx;
	if (rx != ry)
		return cx ? rx < ry : rx > ry;
	if (x->until != y->until)
		return x->until > y->until;
	return x->tile < y->tile;
}

static bool
find_rid(IrOp *op, void *ud)
{
	IrOp **first = ud;
	if (op->code == IR_OP_REPLICA_ID && !*first)
		*first = op;
	return !*first;
}

typedef struct Rids {
	IrCtx *c;
	IrOp *keep;
	IrVec other; /* IrOp * */
} Rids;

static bool
other_rid(IrOp *op, void *ud)
{
	Rids *r = ud;
	if (op->code == IR_OP_REPLICA_ID && op != r->keep)
		ir_vec_push(r->c->al, &r->other, &op, sizeof op);
	return true;
}

/* The role's `ave.replica_id`, moved to the top of its body (it reads nothing), so that it is
 * defined before any op that names a slot by it, and made there when the role has none. Other
 * `ave.replica_id`s of the role are read as that one: one value names the replica everywhere
 * (the checker tells replicas apart by it). */
static IrValue *
replica_id(IrModule *m, IrOp *role)
{
	IrBlock *body = role->reg[0].block;
	IrOp *rid = NULL;
	ir_walk(body, find_rid, &rid);
	if (rid) {
		if (rid != body->first) {
			ir_op_unlink(rid);
			ir_block_prepend(body, rid);
		}
		Rids rs = {m->ctx, rid, {0}};
		ir_walk(body, other_rid, &rs);
		for (int i = 0; i < rs.other.len; i++) {
			IrOp *o = IR_VEC_AT(rs.other, IrOp *, i);
			ir_replace_all_uses(&o->res[0], &rid->res[0]);
			ir_op_erase(o);
		}
		ir_vec_free(m->ctx->al, &rs.other, sizeof(IrOp *));
		return &rid->res[0];
	}
	IrBuilder bl;
	ir_builder_at_end(&bl, m, body, role->loc);
	bl.before = body->first;
	IrType *ity = ir_type_index(m->ctx);
	IrValue *r = &ir_b_op(&bl, IR_OP_REPLICA_ID, 1, &ity, 0, NULL)->res[0];
	r->name = ir_intern_cstr(m->ctx, "spill.replica");
	return r;
}

/* `%buf` or `%buf[%slot]` as item it. */
static void
buffer_item(IrModule *m, IrItem *it, IrValue *buf, IrValue *slot)
{
	it->pv = buf;
	if (!slot)
		return;
	it->suffix = true;
	it->ncoord = 1;
	it->coord = ir_arena_alloc(&m->arena, sizeof(IrCoord));
	it->coord[0].e = ir_expr_value(m, slot);
	it->coord[0].len = -1;
}

/* An ave.smem.load of the buffer before `first` (an op of block b), or with buf NULL the
 * ave.load that made v again (remat): every op from `first` on in b reads it in place of v. */
static void
reload(IrModule *m, IrValue *v, IrBlock *b, IrOp *first, IrValue *buf, IrValue *slot,
       IrStr name, RaSpill *out)
{
	IrBuilder bl;
	ir_builder_before(&bl, m, first);
	IrOp *ld;
	if (buf) {
		IrOpState s;
		ir_state_init(&s, IR_OP_SMEM_LOAD, first->loc);
		buffer_item(m, ir_state_item(m, &s, IR_IT_VALUE), buf, slot);
		ir_state_result(m, &s, v->type, name);
		ir_state_type(m, &s, v->type);
		ld = ir_b_insert(&bl, ir_op_build(m, &s));
	} else {
		IrMap vmap;
		ir_map_init(&vmap, m->ctx->al);
		ld = ir_b_insert(&bl, ir_op_clone(m, v->op, &vmap));
		ir_map_free(&vmap);
		ld->loc = first->loc;
		ld->res[0].name = name;
	}
	if (!out->load || ld->loc.line < out->load->loc.line)
		out->load = ld;
	out->nload++;
	/* Re-pointing a use unlinks it from v's list alone: the next one is kept first. */
	for (IrUse *u = v->uses, *next; u; u = next) {
		next = u->next;
		IrOp *a = in_block(u->user, b);
		bool after = false;
		for (IrOp *q = first; a && q && !after; q = q->next)
			after = q == a;
		if (after)
			ir_use_set(u, &ld->res[0]);
	}
}

/* The reloads (of the buffer, or with buf NULL loads again): in each other branch of an ave.if
 * holding the peak that reads the tile, before its first reader there; and before the first op
 * after the stretch. */
static void
reloads(RaPlan *p, IrModule *m, const Cand *c, IrValue *v, IrValue *buf, IrValue *slot,
        const char *base, RaSpill *out)
{
	const char *suffix = buf ? "fill" : "remat";
	for (int r = 0; c->branch && r < c->branch->nreg; r++) {
		IrBlock *rb = c->branch->reg[r].block;
		IrOp *q = rb->first;
		while (r != c->quiet && q && !reads(q, v))
			q = q->next;
		if (r != c->quiet && q)
			reload(m, v, rb, q, buf, slot, ir_fresh_name(m->ctx, p->kernel, base, suffix),
			       out);
	}
	if (c->next)
		reload(m, v, c->b, c->next, buf, slot,
		       ir_fresh_name(m->ctx, p->kernel, base, suffix), out);
}

static void
rewrite(RaPlan *p, IrModule *m, const Cand *c, RaSpill *out)
{
	IrCtx *cx = m->ctx;
	RaTile *t = &p->tile[c->tile];
	RaGroup *g = &p->group[t->group];
	IrValue *v = t->v;
	IrType *ty = v->type;
	/* A reload kept in shared memory again is named after the tile. */
	const char *base = v->name ? v->name : "tile";
	const char *f = strstr(base, ".fill");
	if (!f)
		f = strstr(base, ".remat");
	if (f && f != base)
		base = ir_ctx_printf(cx, "%.*s", (int)(f - base), base);
	out->v = v;
	out->regs = t->regs;
	out->group = t->group;
	out->load = NULL;
	out->nload = 0;
	if (c->remat) {
		/* Loaded again where it is read: no buffer, no store. */
		out->remat = true;
		reloads(p, m, c, v, NULL, NULL, base, out);
		out->at_def = v->op->loc;
		if (!ir_value_has_uses(v))
			ir_op_erase(v->op); /* read only after the stretch: the load moved there */
		return;
	}
	IrType *sty = ir_type_tile(cx, ty->rank, ty->dims, ty->elem, IR_SPACE_SMEM, NULL);
	IrType *bty = g->replicas > 1 ? ir_type_ring(cx, g->replicas, sty) : sty;

	/* The buffer, with the kernel's other allocations at its top. */
	IrBuilder bl;
	IrBlock *kb = p->kernel->reg[0].block;
	ir_builder_before(&bl, m, kb->first);
	bl.loc = def_op(v) ? def_op(v)->loc : p->kernel->loc;
	while (bl.before && (bl.before->code == IR_OP_SMEM_ALLOC ||
	                     bl.before->code == IR_OP_MBAR_ALLOC))
		bl.before = bl.before->next;
	IrOpState s;
	ir_state_init(&s, IR_OP_SMEM_ALLOC, bl.loc);
	ir_state_attr(m, &s, cx->kw.spill, ir_attr_bool(cx, true));
	ir_state_result(m, &s, bty, ir_fresh_name(cx, p->kernel, base, "spill"));
	IrValue *buf = &ir_b_insert(&bl, ir_op_build(m, &s))->res[0];
	IrValue *slot = g->replicas > 1 ? replica_id(m, g->role) : NULL;

	/* The store after the last op before the stretch (or at the block's start). */
	if (c->prev) {
		ir_builder_before(&bl, m, c->prev->next);
		bl.loc = c->prev->loc;
	} else {
		ir_builder_before(&bl, m, c->b->first); /* v is an argument of c->b */
		bl.loc = v->loc;
	}
	ir_state_init(&s, IR_OP_SMEM_STORE, bl.loc);
	ir_state_value(m, &s, v);
	buffer_item(m, ir_group_add(m, ir_state_group(m, &s, cx->kw.into), IR_IT_VALUE), buf,
	            slot);
	out->store = ir_b_insert(&bl, ir_op_build(m, &s));

	reloads(p, m, c, v, buf, slot, base, out);
	out->buffer = buf;
	out->bytes = ir_type_bytes(bty);
}

bool
ra_spill(RaPlan *p, IrModule *m, int gi, int margin, RaSpill *out, char *why, size_t nwhy)
{
	RaGroup *g = &p->group[gi];
	int h = g->peak_at;
	IrOp *at = ra_point_op(p, h);
	if (g->chosen)
		margin = 0;
	int excess = (g->slots > g->peak ? g->slots : g->peak) + margin - g->budget;
	memset(out, 0, sizeof *out);
	if (why && nwhy)
		why[0] = 0;
	if (!at)
		return false;
	/* A store to shared memory in a role is lowered with a barrier per replica: the roles'
	 * replicas together must leave one (the lowering's 15 named barriers). */
	int64_t reps = 0;
	for (int i = 1; g->role && i < p->ngroup; i++)
		if (p->group[i].ws == g->ws)
			reps += p->group[i].replicas;
	if (reps > 15) {
		if (why && nwhy)
			snprintf(why, nwhy,
			         "its roles' %lld replicas leave no named barrier for a shared-memory "
			         "store",
			         (long long)reps);
		return false;
	}
	Cand best = {-1, NULL, NULL, NULL, NULL, 0, 0, 0, false};
	int len = 0;
	for (int i = 0; i < p->ntile; i++) {
		RaTile *t = &p->tile[i];
		if (t->group != gi || !t->regs || !live_at(t, h))
			continue;
		const char *no = unmovable(t->v);
		Cand c = {i, NULL, NULL, NULL, NULL, 0, 0, 0, false};
		if (!no)
			no = stretch(p->c, t->v, at, &c);
		c.until = no ? 0 : point_of(p, c.next ? c.next : c.branch);
		c.remat = !no && !p->no_remat && remat_ok(t->v, &c);
		if (no) {
			if (why && len < (int)nwhy - 1)
				len += snprintf(why + len, nwhy - (size_t)len, "%s'%%%s' is %s",
				                len ? ", " : "", t->v->name ? t->v->name : "<unnamed>",
				                no);
			continue;
		}
		if (best.tile < 0 || better(p, &c, &best, excess))
			best = c;
	}
	if (best.tile < 0)
		return false;
	out->peak = g->slots > g->peak ? g->slots : g->peak;
	out->budget = g->budget;
	out->kind = g->chosen ? 'c' : g->given ? 'g' : 'l';
	out->margin = margin;
	out->at = at;
	rewrite(p, m, &best, out);
	return true;
}
