/* interp_mem.c — global and shared memory: masked tile loads and stores on tensor arguments
 * (every address checked against the buffer given for the tensor), asynchronous copies (issued,
 * then landed by the scheduler), and shared memory with per-element state: written or not,
 * a copy landing in it, async MMAs reading it, plain stores not yet fenced, and its tag labels. */
#include <string.h>

#include "interp_impl.h"

static Val *
item(Run *r, Task *t, IOp *o, const IrItem *it)
{
	return interp_val(r, t, o->slot[ir_item_opnd(it)]);
}

/* ---- walking a tile over a tensor ---- */

/* The tile (rank <= 3) is padded on the left to three dimensions. */
void
interp_walk_init(Walk *w, const Tens *g, const IrType *tile, const int64_t *at)
{
	int k = 3 - tile->rank;
	for (int d = 0; d < 3; d++) {
		if (d < k) {
			w->td[d] = 1;
			w->c[d] = 0;
			w->D[d] = 1;
			w->S[d] = 0;
		} else {
			w->td[d] = tile->dims[d - k];
			w->c[d] = at[d - k];
			w->D[d] = g->dims[d - k];
			w->S[d] = g->str[d - k];
		}
	}
	w->i0 = w->i1 = 0;
}

bool
interp_walk_row(Walk *w, Row *row)
{
	if (w->i0 >= w->td[0])
		return false;
	row->base = (w->i0 * w->td[1] + w->i1) * w->td[2];
	bool in = true;
	int64_t g0, g1;
	in &= !__builtin_add_overflow(w->c[0], w->i0, &g0) && g0 >= 0 && g0 < w->D[0];
	in &= !__builtin_add_overflow(w->c[1], w->i1, &g1) && g1 >= 0 && g1 < w->D[1];
	int64_t td2 = w->td[2], c2 = w->c[2], lo = 0, hi = td2, room;
	if (c2 < 0)
		lo = c2 <= -td2 ? td2 : -c2;
	if (__builtin_sub_overflow(w->D[2], c2, &room))
		room = INT64_MAX;
	if (room < hi)
		hi = room;
	if (!in || hi < lo)
		hi = lo;
	row->lo = lo;
	row->hi = hi;
	row->ovf = false;
	row->start = 0;
	if (hi > lo) {
		int64_t a, b, c;
		row->g[0] = g0;
		row->g[1] = g1;
		row->g[2] = c2 + lo;
		row->ovf = __builtin_mul_overflow(g0, w->S[0], &a) ||
		           __builtin_mul_overflow(g1, w->S[1], &b) ||
		           __builtin_mul_overflow(row->g[2], w->S[2], &c) ||
		           __builtin_add_overflow(a, b, &a) ||
		           __builtin_add_overflow(a, c, &row->start);
	}
	if (++w->i1 == w->td[1]) {
		w->i1 = 0;
		w->i0++;
	}
	return true;
}

static void
coords_str(const Tens *g, const int64_t *g3, int64_t extra, char *buf, size_t n)
{
	buf[0] = 0;
	int k = 3 - g->rank;
	for (int d = k; d < 3; d++) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%lld", d > k ? ", " : "",
		         (long long)(g3[d] + (d == 2 ? extra : 0)));
	}
}

void
interp_tens_name(Run *r, const Tens *g, char *buf, size_t n)
{
	if (!g->sym)
		snprintf(buf, n, "%%%s", interp_vname(g->arg));
	else if (r->world > 1)
		snprintf(buf, n, "@%s of rank %d", g->sym, g->owner);
	else
		snprintf(buf, n, "@%s", g->sym);
}

Tens *
interp_tens_of(Run *r, Task *t, IOp *o, const IrItem *it)
{
	if (it->kind != IR_IT_SYMBOL)
		return item(r, t, o, it)->u.g;
	for (int k = 0; k < r->nsymm; k++)
		if (r->symm_op[k]->item[0].s == it->s)
			return &r->symm[r->rank * r->nsymm + k];
	ir_unreachable("a verified symbol that names no symmetric buffer");
}

/* Checks that the in-bounds part of a row lies inside the tensor's buffer. */
bool
interp_row_in_buffer(Run *r, Task *t, IOp *o, const Tens *g, const Walk *w, const Row *row)
{
	if (row->hi == row->lo)
		return true;
	int64_t last, n = row->hi - row->lo - 1, step;
	bool ovf = row->ovf || __builtin_mul_overflow(n, w->S[2], &step) ||
	           __builtin_add_overflow(row->start, step, &last);
	int64_t bad = -1, off = 0;
	if (ovf || row->start < 0 || row->start >= g->nelem) {
		bad = 0;
		off = row->start;
	} else if (last < 0 || last >= g->nelem) {
		bad = n;
		off = last;
	}
	if (bad < 0)
		return true;
	char cs[96], nm[128];
	coords_str(g, row->g, bad, cs, sizeof cs);
	interp_tens_name(r, g, nm, sizeof nm);
	if (ovf)
		interp_err(
		    r, t, o,
		    "out-of-bounds access: element [%s] of '%s' has an offset that does not "
		    "fit 64 bits",
		    cs, nm);
	else
		interp_err(
		    r, t, o,
		    "out-of-bounds access: element [%s] of '%s' is at offset %lld, outside "
		    "the %lld-element buffer given for it",
		    cs, nm, (long long)off, (long long)g->nelem);
	return false;
}

bool
interp_coords(Run *r, Task *t, IOp *o, const IrItem *it, int64_t *at)
{
	for (int i = 0; i < it->ncoord; i++) {
		bool ok = true;
		at[i] = interp_expr(r, t, o, it->coord[i].e, &ok);
		if (!ok) {
			interp_err(r, t, o,
			           "index expression divides by a value that is not positive");
			return false;
		}
	}
	return true;
}

/* Reads a tile at `at` into dst (storage of the element type), `other` where out of bounds.
 * Returns the union of the labels read. */
static bool
gather(Run *r, Task *t, IOp *o, const Tens *g, const IrType *tile, const int64_t *at,
       const void *other, Tile *dst, uint32_t *tags)
{
	Walk w;
	Row row;
	interp_walk_init(&w, g, tile, at);
	size_t sz = interp_sk_size(dst->sk);
	unsigned char *d = dst->data;
	uint32_t lt = 0, last = 0;
	while (interp_walk_row(&w, &row)) {
		if (!interp_row_in_buffer(r, t, o, g, &w, &row))
			return false;
		for (int64_t i = 0; i < w.td[2]; i++)
			if (i < row.lo || i >= row.hi)
				memcpy(d + (size_t)(row.base + i) * sz, other, sz);
		if (row.hi > row.lo)
			interp_mem_to_sk(g->elem, g->data, row.start, w.S[2], row.hi - row.lo,
			                 d + (size_t)(row.base + row.lo) * sz);
		if (g->labels)
			for (int64_t i = 0; i < row.hi - row.lo; i++) {
				uint32_t l = g->labels[row.start + i * w.S[2]];
				if (l != last) {
					lt = interp_label_union(r, lt, l);
					last = l;
				}
			}
	}
	*tags = lt;
	return true;
}

int
interp_load(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	Tens *g = op->code == IR_OP_GET ? interp_get_src(r, t, o)
					 : interp_tens_of(r, t, o, &op->item[0]);
	if (!g)
		return EX_ERR;
	IrType *tile = op->res[0].type;
	int64_t at[3];
	if (!interp_coords(r, t, o, &op->item[0], at))
		return EX_ERR;
	union {
		float f;
		double d;
		int64_t i;
	} other = {.i = 0};
	IrGroup *og = ir_op_group(op, r->c->kw.other);
	if (og) {
		Val ov = {0};
		const IrItem *it = &og->item[0];
		if (it->kind == IR_IT_FLOAT) {
			ov.k = V_FLT;
			ov.u.f = interp_round_f(tile->elem->fk, it->f);
		} else {
			int64_t x;
			ir_expr_eval_const(it->e, &x);
			ov.k = V_INT;
			ov.u.i = ir_type_is_int(tile->elem)
			             ? (int64_t)interp_wrap(
			                   tile->elem->kind == IR_TY_INDEX ? 64 : tile->elem->bits,
			                   (uint64_t)x)
			             : x;
		}
		interp_scalar_to_sk(tile->elem, &ov, &other);
	}
	Tile *d = interp_tile_new(r, interp_sk(tile->elem), ir_type_numel(tile));
	uint32_t tags;
	if (!gather(r, t, o, g, tile, at, &other, d, &tags) ||
	    (g->sym && !interp_symm_access(r, t, o, g, tile, at, false))) {
		interp_tile_release(r, d);
		return EX_ERR;
	}
	Val v = {.k = V_TILE, .tags = tags};
	v.u.t = d;
	interp_set(r, t, o->res, v);
	return EX_OK;
}

int
interp_store(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	Val *x = item(r, t, o, &op->item[0]);
	IrType *tile = ir_item_value(op, &op->item[0])->type;
	const IrItem *dst = &ir_op_group(op, r->c->kw.into)->item[0];
	Tens *g = interp_tens_of(r, t, o, dst);
	int64_t at[3];
	if (!interp_coords(r, t, o, dst, at))
		return EX_ERR;
	IrGroup *tg = ir_op_group(op, r->c->kw.tag);
	if (tg && !interp_store_tag_ok(r, t, o, &tg->item[0], at))
		return EX_ERR;
	if (x->tags && !g->labels) {
		g->labels = ir_xalloc(r->al, sizeof(uint32_t) * (size_t)g->nelem);
		memset(g->labels, 0, sizeof(uint32_t) * (size_t)g->nelem);
	}
	if (!g->written && g->nelem > 0) {
		g->written = ir_xalloc(r->al, (size_t)g->nelem);
		memset(g->written, 0, (size_t)g->nelem);
	}
	/* check the whole tile first so that a failing store writes nothing */
	for (int pass = 0; pass < 2; pass++) {
		Walk w;
		Row row;
		interp_walk_init(&w, g, tile, at);
		size_t sz = interp_sk_size(x->u.t->sk);
		const unsigned char *s = x->u.t->data;
		while (interp_walk_row(&w, &row)) {
			if (!pass) {
				if (!interp_row_in_buffer(r, t, o, g, &w, &row))
					return EX_ERR;
				continue;
			}
			if (g->sym && row.base == 0 && !interp_symm_access(r, t, o, g, tile, at, true))
				return EX_ERR;
			if (row.hi == row.lo)
				continue;
			interp_sk_to_mem(g->elem, s + (size_t)(row.base + row.lo) * sz, g->data,
			                 row.start, w.S[2], row.hi - row.lo);
			if (g->labels)
				for (int64_t i = 0; i < row.hi - row.lo; i++)
					g->labels[row.start + i * w.S[2]] = x->tags;
			for (int64_t i = 0; i < row.hi - row.lo; i++)
				g->written[row.start + i * w.S[2]] = 1;
		}
	}
	return EX_OK;
}

/* ---- shared memory ---- */

int
interp_smem_alloc(Run *r, Task *t, IOp *o)
{
	Cta *c = r->cta;
	IrType *ty = o->op->res[0].type;
	Smem *m = c->stat[o->id];
	if (!m) {
		IrType *tile = ty->kind == IR_TY_RING ? ty->elem : ty;
		m = ir_xalloc(r->al, sizeof *m);
		memset(m, 0, sizeof *m);
		m->name = &o->op->res[0];
		m->elem = tile->elem;
		m->sk = interp_sk(tile->elem);
		m->ssz = interp_sk_size(m->sk);
		m->ring = ty->kind == IR_TY_RING;
		m->nslots = m->ring ? ty->n : 1;
		m->rank = tile->rank;
		memcpy(m->dims, tile->dims, sizeof(int64_t) * (size_t)tile->rank);
		m->numel = ir_type_numel(tile);
		int64_t total = m->numel * m->nslots;
		if (total > ((int64_t)1 << 28)) {
			ir_xfree(r->al, m, sizeof *m);
			interp_err(r, t, o,
			           "shared-memory allocation of %lld elements is too large",
			           (long long)total);
			return EX_ERR;
		}
		/* Each allocation is bounded above; so is the CTA's sum, by the largest target. */
		const TargetInfo *big = target_smem_max();
		const char *tname = big->name;
		int64_t limit = big->smem_limit;
		int64_t bytes = total * ((ir_type_elem_bits(tile) + 7) / 8);
		if (bytes > limit - c->smem_bytes) {
			ir_xfree(r->al, m, sizeof *m);
			interp_err(r, t, o,
			           "this CTA's shared memory would total %lld bytes, more than any "
			           "target has (%lld bytes on %s)",
			           (long long)(c->smem_bytes + bytes), (long long)limit, tname);
			return EX_ERR;
		}
		c->smem_bytes += bytes;
		m->data = ir_xalloc(r->al, (size_t)total * m->ssz);
		memset(m->data, 0, (size_t)total * m->ssz);
		m->meta = ir_xalloc(r->al, sizeof(uint32_t) * (size_t)total);
		memset(m->meta, 0, sizeof(uint32_t) * (size_t)total);
		m->flags = ir_xalloc(r->al, (size_t)total);
		memset(m->flags, 0, (size_t)total);
		m->readers = ir_xalloc(r->al, sizeof(uint16_t) * (size_t)total);
		memset(m->readers, 0, sizeof(uint16_t) * (size_t)total);
		c->stat[o->id] = m;
	}
	Val v = {.k = V_SMEM};
	v.u.v.m = m;
	v.u.v.slot = ty->kind == IR_TY_RING ? -1 : 0;
	v.u.v.rank = m->rank;
	int64_t s = 1;
	for (int d = m->rank - 1; d >= 0; d--) {
		v.u.v.dims[d] = m->dims[d];
		v.u.v.str[d] = s;
		s *= m->dims[d];
	}
	interp_set(r, t, o->res, v);
	return EX_OK;
}

/* The origins of labelled writes, made at the first one (untagged kernels never need them). */
int64_t *
interp_smem_origin(Run *r, Smem *m)
{
	if (!m->origin) {
		size_t total = (size_t)(m->numel * m->nslots);
		m->origin = ir_xalloc(r->al, sizeof(int64_t) * total);
		memset(m->origin, 0, sizeof(int64_t) * total);
	}
	return m->origin;
}

void
interp_smem_free(Run *r, Smem *m)
{
	size_t total = (size_t)(m->numel * m->nslots);
	ir_xfree(r->al, m->data, total * m->ssz);
	ir_xfree(r->al, m->meta, sizeof(uint32_t) * total);
	if (m->origin)
		ir_xfree(r->al, m->origin, sizeof(int64_t) * total);
	ir_xfree(r->al, m->flags, total);
	ir_xfree(r->al, m->readers, sizeof(uint16_t) * total);
	ir_xfree(r->al, m, sizeof *m);
}

bool
interp_view_of(Run *r, Task *t, IOp *o, const IrItem *it, View *v)
{
	Val *x = item(r, t, o, it);
	*v = x->u.v;
	if (v->slot >= 0)
		return true;
	bool ok = true;
	int64_t s = interp_expr(r, t, o, it->coord[0].e, &ok);
	if (!ok) {
		interp_err(r, t, o, "index expression divides by a value that is not positive");
		return false;
	}
	if (s < 0 || s >= v->m->nslots) {
		interp_err(r, t, o, "slot index %lld is out of range for '%%%s' (%lld slots)",
		           (long long)s, interp_vname(v->m->name), (long long)v->m->nslots);
		return false;
	}
	v->slot = s;
	v->off = s * v->m->numel;
	return true;
}

void
interp_view_name(Run *r, const View *v, char *buf, size_t n)
{
	(void)r;
	bool whole = v->off == v->slot * v->m->numel && v->rank == v->m->rank &&
	             !memcmp(v->dims, v->m->dims, sizeof(int64_t) * (size_t)v->rank);
	if (v->m->ring)
		snprintf(buf, n, "%s'%%%s[%lld]'", whole ? "" : "a slice of ",
		         interp_vname(v->m->name), (long long)v->slot);
	else
		snprintf(buf, n, "%s'%%%s'", whole ? "" : "a slice of ", interp_vname(v->m->name));
}

/* Element coordinates inside a view as "i, j". */
static void
vcoords(const View *v, const int64_t *i3, char *buf, size_t n)
{
	buf[0] = 0;
	int k = 3 - v->rank;
	for (int d = k; d < 3; d++) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%lld", d > k ? ", " : "", (long long)i3[d]);
	}
}

/* Iterates the elements of a view: idx is the buffer element, i3 its coordinates (padded). */
#define VIEW_FOR(v, i3, idx)                                                                       \
	int64_t vd_[3], vs_[3], i3[3], idx;                                                        \
	for (int d_ = 0; d_ < 3; d_++) {                                                           \
		int k_ = d_ - (3 - (v)->rank);                                                     \
		vd_[d_] = k_ < 0 ? 1 : (v)->dims[k_];                                              \
		vs_[d_] = k_ < 0 ? 0 : (v)->str[k_];                                               \
	}                                                                                          \
	for (i3[0] = 0; i3[0] < vd_[0]; i3[0]++)                                                   \
		for (i3[1] = 0; i3[1] < vd_[1]; i3[1]++)                                           \
			for (i3[2] = 0, idx = (v)->off + i3[0] * vs_[0] + i3[1] * vs_[1];          \
			     i3[2] < vd_[2]; i3[2]++, idx += vs_[2])

static Copy *
copy_into(Cta *c, const Smem *m, int64_t idx)
{
	for (int k = 0; k < c->ncopy; k++) {
		View *v = &c->copy[k].dst;
		if (v->m != m)
			continue;
		VIEW_FOR(v, i3, e)
		if (e == idx)
			return &c->copy[k];
	}
	return NULL;
}

static AMma *
mma_reading(Cta *c, const Smem *m, int64_t idx)
{
	for (int ti = 0; ti < c->ntask; ti++) {
		Task *t = c->task[ti];
		for (int k = 0; k < t->nmma; k++)
			for (int j = 0; j < t->mma[k].nv; j++) {
				View *v = &t->mma[k].v[j];
				if (v->m != m)
					continue;
				VIEW_FOR(v, i3, e)
				if (e == idx)
					return &t->mma[k];
			}
	}
	return NULL;
}

static const char *
opname(IOp *o)
{
	return ir_op_name(o->op->code);
}

/* Reports why element idx of a view cannot be written now (a copy landing, an async MMA
 * reading it); false when it can. */
static bool
write_conflict(Run *r, Task *t, IOp *o, const View *v, int64_t idx, const int64_t *i3)
{
	Smem *m = v->m;
	char nm[128], cs[64];
	if (!(m->flags[idx] & SM_INFLIGHT) && !m->readers[idx])
		return false;
	interp_view_name(r, v, nm, sizeof nm);
	vcoords(v, i3, cs, sizeof cs);
	if (m->flags[idx] & SM_INFLIGHT) {
		Copy *cp = copy_into(r->cta, m, idx);
		IrLoc l = cp ? cp->o->op->loc : o->op->loc;
		interp_err(
		    r, t, o,
		    "'%s' overwrites element [%s] of %s while the async copy issued at %u:%u "
		    "(by %s) is still landing in it",
		    opname(o), cs, nm, l.line, l.col, cp ? cp->who : "?");
		return true;
	}
	AMma *am = mma_reading(r->cta, m, idx);
	IrLoc l = am ? am->o->op->loc : o->op->loc;
	interp_err(r, t, o,
	           "'%s' overwrites element [%s] of %s, an operand of the 'ave.mma.async' at %u:%u "
	           "that no 'ave.mma.wait' has waited for yet",
	           opname(o), cs, nm, l.line, l.col);
	return true;
}

bool
interp_view_read(Run *r, Task *t, IOp *o, const View *v, Tile *dst, uint32_t *tags,
                 const char *what)
{
	Smem *m = v->m;
	uint32_t lt = 0, last = 1;
	unsigned char *d = dst ? dst->data : NULL, *src = m->data;
	size_t sz = m->ssz;
	int64_t k = 0;
	VIEW_FOR(v, i3, idx)
	{
		uint32_t meta = m->meta[idx];
		if (!meta || (m->flags[idx] & SM_INFLIGHT)) {
			char nm[128], cs[64], who[96];
			interp_view_name(r, v, nm, sizeof nm);
			vcoords(v, i3, cs, sizeof cs);
			if (what && what[0])
				snprintf(who, sizeof who, "%s '%s'", what, opname(o));
			else
				snprintf(who, sizeof who, "'%s'", opname(o));
			if (m->flags[idx] & SM_INFLIGHT) {
				Copy *cp = copy_into(r->cta, m, idx);
				IrLoc l = cp ? cp->o->op->loc : o->op->loc;
				interp_err(
				    r, t, o,
				    "%s reads element [%s] of %s while the async copy issued at "
				    "%u:%u (by %s) is still landing in it",
				    who, cs, nm, l.line, l.col, cp ? cp->who : "?");
			} else {
				interp_err(r, t, o,
				           "%s reads element [%s] of %s, which was never written",
				           who, cs, nm);
			}
			return false;
		}
		if (meta != last) {
			lt = interp_label_union(r, lt, meta - 1);
			last = meta;
		}
		if (d)
			memcpy(d + (size_t)k * sz, src + (size_t)idx * sz, sz);
		k++;
	}
	*tags = lt;
	return true;
}

int
interp_smem_load(Run *r, Task *t, IOp *o)
{
	View v;
	if (!interp_view_of(r, t, o, &o->op->item[0], &v))
		return EX_ERR;
	int64_t n = 1;
	for (int d = 0; d < v.rank; d++)
		n *= v.dims[d];
	Tile *d = interp_tile_new(r, v.m->sk, n);
	uint32_t tags;
	if (!interp_view_read(r, t, o, &v, d, &tags, NULL)) {
		interp_tile_release(r, d);
		return EX_ERR;
	}
	Val x = {.k = V_TILE, .tags = tags};
	x.u.t = d;
	interp_set(r, t, o->res, x);
	return EX_OK;
}

int
interp_smem_store(Run *r, Task *t, IOp *o)
{
	Val *x = item(r, t, o, &o->op->item[0]);
	View v;
	if (!interp_view_of(r, t, o, &ir_op_group(o->op, r->c->kw.into)->item[0], &v))
		return EX_ERR;
	Smem *m = v.m;
	{
		VIEW_FOR(&v, i3, idx)
		if (write_conflict(r, t, o, &v, idx, i3))
			return EX_ERR;
	}
	const unsigned char *s = x->u.t->data;
	int64_t *origin = x->tags ? interp_smem_origin(r, m) : NULL;
	int64_t k = 0;
	{
		VIEW_FOR(&v, i3, idx)
		{
			memcpy((unsigned char *)m->data + (size_t)idx * m->ssz,
			       s + (size_t)k * m->ssz, m->ssz);
			m->meta[idx] = x->tags + 1;
			if (origin)
				origin[idx] = v.off;
			m->flags[idx] |= SM_UNFENCED;
			k++;
		}
	}
	if (t->nunf == t->capunf) {
		int cap = t->capunf ? 2 * t->capunf : 4;
		t->unf = ir_xrealloc(r->al, t->unf, sizeof *t->unf * (size_t)t->capunf,
		                     sizeof *t->unf * (size_t)cap);
		t->capunf = cap;
	}
	t->unf[t->nunf++] = v;
	return EX_OK;
}

int
interp_fence(Run *r, Task *t, IOp *o)
{
	if (o->op->mode != r->c->kw.async_shared)
		return EX_OK; /* acq_rel_gpu, acq_rel_sys: one task at a time is already ordered */
	for (int i = 0; i < t->nunf; i++) {
		View *v = &t->unf[i];
		VIEW_FOR(v, i3, idx)
		v->m->flags[idx] &= (uint8_t)~SM_UNFENCED;
	}
	t->nunf = 0;
	return EX_OK;
}

int
interp_slice(Run *r, Task *t, IOp *o)
{
	View v;
	if (!interp_view_of(r, t, o, &o->op->item[0], &v))
		return EX_ERR;
	IrStr kws[2] = {r->c->kw.rows, r->c->kw.cols};
	for (int d = 0; d < 2; d++) {
		IrGroup *g = ir_op_group(o->op, kws[d]);
		if (!g)
			continue;
		bool ok = true;
		int64_t off = interp_expr(r, t, o, g->item[0].e, &ok);
		int64_t n = interp_expr(r, t, o, g->item[1].e, &ok);
		if (!ok) {
			interp_err(r, t, o,
			           "index expression divides by a value that is not positive");
			return EX_ERR;
		}
		if (off < 0 || n < 1 || off > v.dims[d] - n) {
			char nm[128];
			interp_view_name(r, &v, nm, sizeof nm);
			interp_err(r, t, o, "slice %s [%lld, %lld) runs past the %lld %s of %s",
			           d ? "cols" : "rows", (long long)off, (long long)(off + n),
			           (long long)v.dims[d], d ? "columns" : "rows", nm);
			return EX_ERR;
		}
		v.off += off * v.str[d];
		v.dims[d] = n;
	}
	Val x = {.k = V_SMEM};
	x.u.v = v;
	interp_set(r, t, o->res, x);
	return EX_OK;
}

/* ---- asynchronous copies ---- */

int
interp_copy_async(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	Cta *c = r->cta;
	Copy cp;
	memset(&cp, 0, sizeof cp);
	cp.o = o;
	cp.src = interp_tens_of(r, t, o, &op->item[0]);
	if (!interp_coords(r, t, o, &op->item[0], cp.at))
		return EX_ERR;
	if (!interp_view_of(r, t, o, &ir_op_group(op, r->c->kw.into)->item[0], &cp.dst))
		return EX_ERR;
	if (!interp_mbar_ref(r, t, o, &ir_op_group(op, r->c->kw.arrive)->item[0], &cp.bar, &cp.bi))
		return EX_ERR;
	IrGroup *tg = ir_op_group(op, r->c->kw.tag);
	if (tg) {
		cp.tagged = true;
		if (!interp_tag_call(r, t, o, &tg->item[0], &cp.tag))
			return EX_ERR;
	}
	/* the source rows must lie in the buffer; the destination must be free */
	IrType *dt = ir_item_value(op, &ir_op_group(op, r->c->kw.into)->item[0])->type;
	IrType *tile = dt->kind == IR_TY_RING ? dt->elem : dt;
	Walk w;
	Row row;
	interp_walk_init(&w, cp.src, tile, cp.at);
	while (interp_walk_row(&w, &row))
		if (!interp_row_in_buffer(r, t, o, cp.src, &w, &row))
			return EX_ERR;
	/* a copy from symmetric memory counts as read when it is issued */
	if (cp.src->sym && !interp_symm_access(r, t, o, cp.src, tile, cp.at, false))
		return EX_ERR;
	{
		VIEW_FOR(&cp.dst, i3, idx)
		if (write_conflict(r, t, o, &cp.dst, idx, i3))
			return EX_ERR;
	}
	{
		VIEW_FOR(&cp.dst, i3, idx)
		cp.dst.m->flags[idx] |= SM_INFLIGHT;
	}
	cp.bytes = ir_type_numel(tile) * (int64_t)interp_elem_size(tile->elem);
	interp_where(r, t, cp.who, sizeof cp.who);
	if (c->ncopy == c->capcopy) {
		int cap = c->capcopy ? 2 * c->capcopy : 8;
		c->copy = ir_xrealloc(r->al, c->copy, sizeof *c->copy * (size_t)c->capcopy,
		                      sizeof *c->copy * (size_t)cap);
		c->capcopy = cap;
	}
	c->copy[c->ncopy++] = cp;
	return EX_OK;
}

/* The copy lands: it reads the global tile now (zero where out of bounds), writes the slot, and
 * counts its full bytes on the barrier. */
bool
interp_copy_land(Run *r, Copy *cp)
{
	View *v = &cp->dst;
	Smem *m = v->m;
	IrOp *op = cp->o->op;
	IrType *dt = ir_item_value(op, &ir_op_group(op, r->c->kw.into)->item[0])->type;
	IrType *tile = dt->kind == IR_TY_RING ? dt->elem : dt;
	Tile *tmp = interp_tile_new(r, m->sk, ir_type_numel(tile));
	int64_t zero = 0;
	uint32_t tags;
	/* the source was checked at issue; the buffers do not move */
	Walk w;
	Row row;
	interp_walk_init(&w, cp->src, tile, cp->at);
	size_t sz = m->ssz;
	unsigned char *d = tmp->data;
	uint32_t lt = 0;
	while (interp_walk_row(&w, &row)) {
		for (int64_t i = 0; i < w.td[2]; i++)
			if (i < row.lo || i >= row.hi)
				memcpy(d + (size_t)(row.base + i) * sz, &zero, sz);
		if (row.hi > row.lo)
			interp_mem_to_sk(cp->src->elem, cp->src->data, row.start, w.S[2],
			                 row.hi - row.lo, d + (size_t)(row.base + row.lo) * sz);
		if (cp->src->labels && !cp->tagged)
			for (int64_t i = 0; i < row.hi - row.lo; i++)
				lt = interp_label_union(r, lt,
				                        cp->src->labels[row.start + i * w.S[2]]);
	}
	tags = cp->tagged ? cp->tag : lt;
	int64_t *origin = tags ? interp_smem_origin(r, m) : NULL;
	int64_t k = 0;
	{
		VIEW_FOR(v, i3, idx)
		{
			memcpy((unsigned char *)m->data + (size_t)idx * sz, d + (size_t)k * sz, sz);
			m->meta[idx] = tags + 1;
			if (origin)
				origin[idx] = v->off;
			m->flags[idx] &= (uint8_t) ~(SM_INFLIGHT | SM_UNFENCED);
			k++;
		}
	}
	interp_tile_release(r, tmp);
	return interp_bar_complete_tx(r, cp->o, cp->who, cp->bar, cp->bi, cp->bytes);
}
