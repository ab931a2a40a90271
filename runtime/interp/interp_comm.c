/* interp_comm.c — communication between ranks (SPEC 5.9): rank and world size, puts and gets on
 * the symmetric heap (one copy of every ave.symm.alloc per rank), chunk signals and waits with
 * epochs, and the race detector for symmetric memory. Ordering is tracked per CTA: a signal
 * releases the writes its CTA made before it, a completed chunk wait acquires what the signals
 * that reached its slot released, for the chunk's region. */
#include <string.h>

#include "interp_impl.h"

static Val
int_val(int64_t i)
{
	Val v = {.k = V_INT};
	v.u.i = i;
	return v;
}

int
interp_rank_op(Run *r, Task *t, IOp *o)
{
	int64_t v = o->op->code == IR_OP_RANK ? r->rank : r->world;
	interp_set(r, t, o->res, int_val(v));
	return EX_OK;
}

static int
symm_index(Run *r, const IrOp *buf)
{
	for (int k = 0; k < r->nsymm; k++)
		if (r->symm_op[k] == buf || r->symm_op[k]->item[0].s == buf->item[0].s)
			return k;
	ir_unreachable("a chunk over a buffer that is not in the launch's symmetric heap");
}

static int
rank_of(Run *r, int32_t gid)
{
	return (int)(gid / r->ncta);
}

void
interp_cta_name(Run *r, int32_t gid, char *buf, size_t n)
{
	int64_t k = gid % r->ncta;
	if (r->walk) {
		snprintf(buf, n, "rank %d CTA %lld", rank_of(r, gid), (long long)k);
		return;
	}
	snprintf(buf, n, "rank %d CTA (%lld, %lld, %lld)", rank_of(r, gid),
		 (long long)(k % r->grid[0]), (long long)(k / r->grid[0] % r->grid[1]),
		 (long long)(k / (r->grid[0] * r->grid[1])));
}

/* The value of `peer(...)`, checked to name a rank. */
static bool
peer_of(Run *r, Task *t, IOp *o, int *peer)
{
	bool ok = true;
	int64_t p = interp_expr(r, t, o, ir_op_group(o->op, r->c->kw.peer)->item[0].e, &ok);
	if (!ok) {
		interp_err(r, t, o, "index expression divides by a value that is not positive");
		return false;
	}
	if (p < 0 || p >= r->world) {
		interp_err(r, t, o, "peer %lld is not a rank of this %d-rank run", (long long)p,
			   r->world);
		return false;
	}
	*peer = (int)p;
	return true;
}

/* The chunk a call item `@C(args)` names, its arguments, its signal slot (buffer index and
 * element offset) and its region. */
typedef struct ChunkRef {
	IrOp *ch;
	int64_t args[IR_MAX_RANK];
	int k;
	int64_t off;
	IrChunkBox slot, region;
} ChunkRef;

/* v[0 .. k) as text, `1, 2, 3`, into buf. */
static void
ints_text(const int64_t *v, int k, char *buf, size_t n)
{
	buf[0] = 0;
	for (int i = 0; i < k; i++) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)v[i]);
	}
}

static bool
chunk_ref(Run *r, Task *t, IOp *o, ChunkRef *cr)
{
	const IrItem *it = &o->op->item[0];
	memset(cr, 0, sizeof *cr);
	cr->ch = ir_symbol_lookup(r->c, o->op, it->s);
	bool ok = true;
	for (int i = 0; i < it->ncoord && i < IR_MAX_RANK; i++)
		cr->args[i] = interp_expr(r, t, o, it->coord[i].e, &ok);
	char err[256];
	if (!ok) {
		interp_err(r, t, o, "index expression divides by a value that is not positive");
		return false;
	}
	if (!ir_chunk_box(r->c, cr->ch, r->c->kw.signal, cr->args, &cr->slot, err, sizeof err) ||
	    !ir_chunk_box(r->c, cr->ch, r->c->kw.region, cr->args, &cr->region, err, sizeof err)) {
		interp_err(r, t, o, "%s", err);
		return false;
	}
	cr->k = symm_index(r, cr->slot.buf);
	const Tens *g = &r->symm[cr->k];
	for (int d = 0; d < g->rank; d++) {
		if (cr->slot.lo[d] < 0 || cr->slot.lo[d] >= g->dims[d]) {
			char args[96];
			ints_text(cr->args, it->ncoord < IR_MAX_RANK ? it->ncoord : IR_MAX_RANK, args,
				  sizeof args);
			interp_err(r, t, o,
				   "the signal slot of chunk '@%s(%s)' is outside '@%s': index "
				   "%lld of dimension %d (size %lld)",
				   it->s, args, g->sym, (long long)cr->slot.lo[d], d,
				   (long long)g->dims[d]);
			return false;
		}
		cr->off += cr->slot.lo[d] * g->str[d];
	}
	return true;
}

static Tens *
copy_on(Run *r, int rank, int k)
{
	return &r->symm[rank * r->nsymm + k];
}

/* ---- a collective before the launch ---- */

bool
interp_gather(Run *r)
{
	IrCtx *c = r->c;
	IrAttr *ga = ir_op_attr(r->p->kernel, c->kw.gathered);
	IrOp *ch = ga && ga->kind == IR_ATTR_SYM ? ir_symbol_lookup(c, r->p->kernel, ga->s) : NULL;
	if (!ch || ch->code != IR_OP_CHUNK)
		return true;
	for (int64_t q = 0; q < r->world; q++) {
		IrChunkBox reg, sl;
		char err[512];
		if (!ir_gathered_chunk(c, ch, q, &reg, &sl, err, sizeof err)) {
			ir_error(c, r->p->kernel->loc, "'gathered = @%s': %s", ga->s, err);
			return false;
		}
		int k = symm_index(r, reg.buf), ks = symm_index(r, sl.buf);
		const Tens *src = copy_on(r, (int)q, k), *s0 = copy_on(r, 0, ks);
		int64_t n = 1, sidx = 0;
		for (int d = 0; d < reg.rank; d++)
			n *= reg.len[d];
		for (int d = 0; d < sl.rank; d++)
			sidx += sl.lo[d] * s0->str[d];
		for (int p = 0; p < r->world; p++) {
			if (p == q)
				continue;
			Tens *dst = copy_on(r, p, k), *sg = copy_on(r, p, ks);
			for (int64_t e = 0; e < n; e++) {
				int64_t rest = e, off = 0;
				for (int d = reg.rank - 1; d >= 0; d--) {
					off += (reg.lo[d] + rest % reg.len[d]) * src->str[d];
					rest /= reg.len[d];
				}
				memcpy(dst->data + (size_t)off * dst->esz, src->data + (size_t)off * src->esz,
				       src->esz);
			}
			interp_mem_set_i64(sg->elem, sg->data, sidx,
					   interp_mem_get_i64(sg->elem, sg->data, sidx) + 1);
		}
	}
	return true;
}

/* ---- signals and waits ---- */

int
interp_chunk_signal(Run *r, Task *t, IOp *o)
{
	ChunkRef cr;
	int p = 0;
	bool all = !ir_op_group(o->op, r->c->kw.peer);
	if (!chunk_ref(r, t, o, &cr) || (!all && !peer_of(r, t, o, &p)))
		return EX_ERR;
	uint32_t clk = ++r->clk;
	/* without peer(...), every rank */
	for (int q = all ? 0 : p; q < (all ? r->world : p + 1); q++) {
		Tens *g = copy_on(r, q, cr.k);
		interp_mem_set_i64(g->elem, g->data, cr.off,
				   interp_mem_get_i64(g->elem, g->data, cr.off) + 1);
		if (r->narr == r->caparr) {
			int cap = r->caparr ? 2 * r->caparr : 64;
			r->arr = ir_xrealloc(r->al, r->arr, sizeof *r->arr * (size_t)r->caparr,
					     sizeof *r->arr * (size_t)cap);
			r->caparr = cap;
		}
		r->arr[r->narr++] = (Arrival){cr.k, q, cr.off, r->cta->gid, clk};
		/* waiters on rank q may run again */
		for (int i = 0; i < r->nact; i++)
			if (r->act[i]->rank == q)
				r->act[i]->epoch++;
	}
	return EX_OK;
}

static bool
same_box(const IrChunkBox *a, const IrChunkBox *b)
{
	return a->buf == b->buf && a->rank == b->rank &&
	       !memcmp(a->lo, b->lo, sizeof(int64_t) * (size_t)a->rank) &&
	       !memcmp(a->len, b->len, sizeof(int64_t) * (size_t)a->rank);
}

static void
acquire(Run *r, Cta *c, int32_t from, uint32_t upto, const IrChunkBox *box)
{
	for (int i = 0; i < c->nacq; i++)
		if (c->acq[i].from == from && same_box(&c->acq[i].box, box)) {
			if (c->acq[i].upto < upto)
				c->acq[i].upto = upto;
			return;
		}
	if (c->nacq == c->capacq) {
		int cap = c->capacq ? 2 * c->capacq : 8;
		c->acq = ir_xrealloc(r->al, c->acq, sizeof *c->acq * (size_t)c->capacq,
				     sizeof *c->acq * (size_t)cap);
		c->capacq = cap;
	}
	c->acq[c->nacq++] = (Acq){from, upto, *box};
}

int
interp_chunk_wait(Run *r, Task *t, IOp *o)
{
	ChunkRef cr;
	if (!chunk_ref(r, t, o, &cr))
		return EX_ERR;
	Tens *g = copy_on(r, r->rank, cr.k);
	if (interp_mem_get_i64(g->elem, g->data, cr.off) < r->epoch) {
		t->wait_op = o;
		return EX_BLOCK;
	}
	for (int i = 0; i < r->narr; i++) {
		const Arrival *a = &r->arr[i];
		if (a->k == cr.k && a->rank == r->rank && a->off == cr.off)
			acquire(r, r->cta, a->from, a->clk, &cr.region);
	}
	r->clk++;
	interp_set(r, t, o->res, int_val(0));
	return EX_OK;
}

/* The wave of the kernel's overlap schedule in which this rank expects chunk c, if any. */
static void
schedule_note(Run *r, int64_t c, char *buf, size_t n)
{
	IrAttr *a = ir_op_attr(r->p->kernel, r->c->kw.overlap);
	if (!a || a->kind != IR_ATTR_SYM)
		return;
	IrOp *s = ir_symbol_lookup(r->c, r->p->kernel, a->s);
	if (!s || s->code != IR_OP_CHUNK_SCHEDULE)
		return;
	char err[256];
	for (int64_t w = 0; w < r->world; w++) {
		IrChunkStep st;
		if (!ir_chunk_schedule_step(r->c, s, r->world, r->rank, w, &st, err, sizeof err))
			return;
		if (st.chunk == c) {
			size_t len = strlen(buf);
			snprintf(buf + len, n - len, "; schedule @%s expects it at wave %lld from rank %lld",
				 a->s, (long long)w, (long long)st.peer);
			return;
		}
	}
}

void
interp_describe_chunk_wait(Run *r, Task *t, char *buf, size_t n)
{
	ChunkRef cr;
	IOp *o = t->wait_op;
	const IrItem *it = &o->op->item[0];
	buf[0] = 0;
	if (!chunk_ref(r, t, o, &cr)) /* evaluated before, when it blocked */
		ir_unreachable("a blocked chunk wait whose chunk no longer evaluates");
	const Tens *g = copy_on(r, r->rank, cr.k);
	char args[96], slot[96];
	ints_text(cr.args, it->ncoord < IR_MAX_RANK ? it->ncoord : IR_MAX_RANK, args, sizeof args);
	ints_text(cr.slot.lo, g->rank, slot, sizeof slot);
	snprintf(buf, n,
		 "for chunk @%s(%s) (its signal @%s[%s] on rank %d is %lld; launch %lld needs %lld)",
		 it->s, args, g->sym, slot, r->rank,
		 (long long)interp_mem_get_i64(g->elem, g->data, cr.off), (long long)r->epoch,
		 (long long)r->epoch);
	schedule_note(r, cr.args[0], buf, n);
}

/* ---- puts and gets ---- */

static Tens *
peer_copy(Run *r, Task *t, IOp *o, const IrItem *it, int *peer)
{
	if (!peer_of(r, t, o, peer))
		return NULL;
	for (int k = 0; k < r->nsymm; k++)
		if (r->symm_op[k]->item[0].s == it->s)
			return copy_on(r, *peer, k);
	ir_unreachable("a verified symbol that names no symmetric buffer");
}

static double
tile_f(const Tile *x, int64_t i)
{
	return x->sk == SK_F32 ? ((const float *)x->data)[i] : ((const double *)x->data)[i];
}

int
interp_put(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	const IrItem *src = &op->item[0];
	Val *x = interp_val(r, t, o->slot[ir_item_opnd(src)]);
	IrType *tile = ir_item_value(op, src)->type;
	const IrItem *dst = &ir_op_group(op, r->c->kw.into)->item[0];
	IrGroup *rg = ir_op_group(op, r->c->kw.reduce);
	IrStr mode = rg ? rg->item[0].s : NULL;
	int p;
	Tens *g = peer_copy(r, t, o, dst, &p);
	int64_t at[3];
	if (!g || !interp_coords(r, t, o, dst, at))
		return EX_ERR;
	Walk w;
	Row row;
	interp_walk_init(&w, g, tile, at);
	while (interp_walk_row(&w, &row))
		if (!interp_row_in_buffer(r, t, o, g, &w, &row))
			return EX_ERR;
	if (!interp_symm_access(r, t, o, g, tile, at, true))
		return EX_ERR;
	const Tile *v = x->u.t;
	size_t sz = interp_sk_size(v->sk);
	bool isint = v->sk == SK_I64;
	interp_walk_init(&w, g, tile, at);
	while (interp_walk_row(&w, &row)) {
		if (row.hi == row.lo)
			continue;
		if (!mode) {
			interp_sk_to_mem(g->elem, (const unsigned char *)v->data +
						      (size_t)(row.base + row.lo) * sz,
					 g->data, row.start, w.S[2], row.hi - row.lo);
			continue;
		}
		/* reduce: one read-modify-write per element, rounded once to the element type */
		for (int64_t i = 0; i < row.hi - row.lo; i++) {
			int64_t e = row.start + i * w.S[2], k = row.base + row.lo + i;
			if (isint) {
				int64_t a = interp_mem_get_i64(g->elem, g->data, e);
				int64_t b = ((const int64_t *)v->data)[k];
				int64_t c = mode == r->c->kw.add ? (int64_t)((uint64_t)a + (uint64_t)b)
					    : mode == r->c->kw.max ? (a > b ? a : b)
								   : (a < b ? a : b);
				interp_mem_set_i64(g->elem, g->data, e, c);
			} else {
				double a = interp_mem_get_f64(g->elem, g->data, e), b = tile_f(v, k);
				double c = mode == r->c->kw.add ? a + b
					   : mode == r->c->kw.max ? (a > b || a != a ? a : b)
								  : (a < b || a != a ? a : b);
				interp_mem_set_f64(g->elem, g->data, e, c);
			}
		}
	}
	return EX_OK;
}

Tens *
interp_get_src(Run *r, Task *t, IOp *o)
{
	int p;
	return peer_copy(r, t, o, &o->op->item[0], &p);
}

/* ---- the race detector ---- */

static bool
box_has(const IrChunkBox *b, const Tens *g, const int64_t *x)
{
	if (b->buf->item[0].s != g->sym)
		return false;
	for (int d = 0; d < g->rank; d++)
		if (x[d] < b->lo[d] || x[d] >= b->lo[d] + b->len[d])
			return false;
	return true;
}

/* Whether CTA c acquired the write (or read) CTA `from` made at clock `clk`; with g, through a
 * wait whose chunk covers element x of g. */
static bool
ordered(const Cta *c, int32_t from, uint32_t clk, const Tens *g, const int64_t *x)
{
	for (int i = 0; i < c->nacq; i++) {
		const Acq *a = &c->acq[i];
		if (a->from == from && a->upto > clk && (!g || box_has(&a->box, g, x)))
			return true;
	}
	return false;
}

static void
track_alloc(Run *r, Tens *g)
{
	if (g->wcta)
		return;
	size_t n = (size_t)g->nelem;
	g->wcta = ir_xalloc(r->al, sizeof(int32_t) * n);
	g->wop = ir_xalloc(r->al, sizeof(int32_t) * n);
	g->rcta = ir_xalloc(r->al, sizeof(int32_t) * n);
	g->rop = ir_xalloc(r->al, sizeof(int32_t) * n);
	g->wclk = ir_xalloc(r->al, sizeof(uint32_t) * n);
	g->rclk = ir_xalloc(r->al, sizeof(uint32_t) * n);
	memset(g->wcta, 0, sizeof(int32_t) * n);
	memset(g->rcta, 0, sizeof(int32_t) * n);
}

static void
coords_of(const Tens *g, const Row *row, int64_t i, int64_t *x, char *buf, size_t n)
{
	int k = 3 - g->rank;
	buf[0] = 0;
	for (int d = 0; d < g->rank; d++) {
		x[d] = row->g[k + d] + (k + d == 2 ? i : 0);
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)x[d]);
	}
}

bool
interp_symm_access(Run *r, Task *t, IOp *o, Tens *g, const IrType *tile, const int64_t *at,
		   bool write)
{
	track_alloc(r, g);
	Cta *c = r->cta;
	int32_t me = c->gid + 1;
	uint32_t now = ++r->clk;
	/* the reader's own copy needs a wait covering the element (SPEC `ready`) */
	const Tens *cover = g->owner == r->rank ? g : NULL;
	Walk w;
	Row row;
	interp_walk_init(&w, g, tile, at);
	while (interp_walk_row(&w, &row)) {
		for (int64_t i = 0; i < row.hi - row.lo; i++) {
			int64_t e = row.start + i * w.S[2], x[IR_MAX_RANK];
			int32_t other = write ? g->rcta[e] : g->wcta[e];
			uint32_t oclk = write ? g->rclk[e] : g->wclk[e];
			if (other && other != me && rank_of(r, other - 1) != r->rank) {
				char cs[96], nm[128], who[96];
				coords_of(g, &row, i, x, cs, sizeof cs);
				if (ordered(c, other - 1, oclk, write ? NULL : cover, x))
					goto ok;
				interp_tens_name(r, g, nm, sizeof nm);
				interp_cta_name(r, other - 1, who, sizeof who);
				IrLoc l = r->p->ops[write ? g->rop[e] : g->wop[e]]->op->loc;
				if (write)
					interp_err(r, t, o,
						   "race on '%s': this write of element [%s] is not "
						   "ordered after its read by %s at %u:%u (no chunk wait "
						   "of this CTA acquired a signal sent after that read)",
						   nm, cs, who, l.line, l.col);
				else
					interp_err(r, t, o,
						   "race on '%s': element [%s] was written by %s at "
						   "%u:%u and no completed 'ave.chunk.wait' of this CTA "
						   "%sacquired that write (read before ready)",
						   nm, cs, who, l.line, l.col,
						   cover ? "covering it " : "");
				return false;
			}
		ok:
			if (write) {
				g->wcta[e] = me;
				g->wclk[e] = now;
				g->wop[e] = o->id;
			} else {
				g->rcta[e] = me;
				g->rclk[e] = now;
				g->rop[e] = o->id;
			}
		}
	}
	return true;
}
