/* interp_exec.c — executes one op of a task: scalars, elementwise math on whole tiles, control
 * flow (pushing and popping the task's frames), compute (reductions, MMA) and the dispatch table
 * that sends memory, synchronization and tag ops to their files. */
#include <math.h>
#include <string.h>

#include "interp_impl.h"

typedef int (*ExecFn)(Run *r, Task *t, IOp *o);

const char *
interp_vname(const IrValue *v)
{
	return v && v->name ? v->name : "<unnamed>";
}

static Val *
opnd(Run *r, Task *t, IOp *o, int i)
{
	return interp_val(r, t, o->slot[i]);
}

static Val *
item(Run *r, Task *t, IOp *o, const IrItem *it)
{
	return opnd(r, t, o, ir_item_opnd(it));
}

static IrType *
rtype(IOp *o)
{
	return o->op->res[0].type;
}

static void
set_res(Run *r, Task *t, IOp *o, int i, Val v)
{
	interp_set(r, t, o->res + i, v);
}

static Val
int_val(int64_t i)
{
	Val v = {.k = V_INT};
	v.u.i = i;
	return v;
}

static Val
flt_val(double f)
{
	Val v = {.k = V_FLT};
	v.u.f = f;
	return v;
}

/* A scalar of type `t` from an int64 or a double, rounded or wrapped to it. */
static Val
scalar_of(const IrType *t, bool is_int, int64_t i, double f)
{
	if (t->kind == IR_TY_FLOAT)
		return flt_val(interp_round_f(t->fk, is_int ? (double)i : f));
	int bits = t->kind == IR_TY_INDEX ? 64 : t->bits;
	return int_val((int64_t)interp_wrap(bits, (uint64_t)i));
}

/* The value of a literal item (INT or FLOAT) as a scalar of type `t`. */
static Val
literal(const IrItem *it, const IrType *t)
{
	return scalar_of(t, it->kind == IR_IT_INT, it->i, it->f);
}

int64_t
interp_expr(Run *r, Task *t, IOp *o, const IrExpr *e, bool *ok)
{
	int64_t l, rr;
	switch (e->kind) {
	case IR_EX_CONST:
		return e->c;
	case IR_EX_VAL:
		return opnd(r, t, o, e->opnd)->u.i;
	case IR_EX_NEG:
		return (int64_t)(0 - (uint64_t)interp_expr(r, t, o, e->l, ok));
	default:
		break;
	}
	l = interp_expr(r, t, o, e->l, ok);
	rr = interp_expr(r, t, o, e->r, ok);
	switch (e->kind) {
	case IR_EX_ADD:
		return (int64_t)((uint64_t)l + (uint64_t)rr);
	case IR_EX_SUB:
		return (int64_t)((uint64_t)l - (uint64_t)rr);
	case IR_EX_MUL:
		return (int64_t)((uint64_t)l * (uint64_t)rr);
	case IR_EX_FLOORDIV:
	case IR_EX_MOD:
		if (rr <= 0) {
			*ok = false;
			return 0;
		}
		return e->kind == IR_EX_MOD ? ir_mod(l, rr) : ir_floordiv(l, rr);
	case IR_EX_EQ:
		return l == rr;
	case IR_EX_NE:
		return l != rr;
	case IR_EX_LT:
		return l < rr;
	case IR_EX_LE:
		return l <= rr;
	case IR_EX_GT:
		return l > rr;
	case IR_EX_GE:
		return l >= rr;
	default:
		ir_unreachable("bad expression kind");
	}
}

/* Evaluates an index expression; reports a non-positive divisor. */
static bool
expr(Run *r, Task *t, IOp *o, const IrExpr *e, int64_t *out)
{
	bool ok = true;
	*out = interp_expr(r, t, o, e, &ok);
	if (!ok)
		interp_err(r, t, o, "index expression divides by a value that is not positive");
	return ok;
}

static bool
group_expr(Run *r, Task *t, IOp *o, IrStr kw, int i, int64_t *out)
{
	IrGroup *g = ir_op_group(o->op, kw);
	return expr(r, t, o, g->item[i].e, out);
}

/* ---- scalars ---- */

static int
ex_const(Run *r, Task *t, IOp *o)
{
	set_res(r, t, o, 0, literal(&o->op->item[0], rtype(o)));
	return EX_OK;
}

static int
ex_index(Run *r, Task *t, IOp *o)
{
	int64_t v;
	if (!expr(r, t, o, o->op->item[0].e, &v))
		return EX_ERR;
	set_res(r, t, o, 0, scalar_of(rtype(o), true, v, 0));
	return EX_OK;
}

static int
ex_program_id(Run *r, Task *t, IOp *o)
{
	int64_t d;
	if (!group_expr(r, t, o, r->c->kw.dim, 0, &d))
		return EX_ERR;
	int64_t v = o->op->code == IR_OP_PROGRAM_ID ? r->cta->pid[d] : r->grid[d];
	set_res(r, t, o, 0, scalar_of(rtype(o), true, v, 0));
	return EX_OK;
}

/* A walking persistent kernel's CTA (along x) and the CTAs launched. */
static int
ex_cta_id(Run *r, Task *t, IOp *o)
{
	int64_t v = o->op->code == IR_OP_CTA_ID ? r->cta->pid[0] : r->ncta;
	set_res(r, t, o, 0, scalar_of(rtype(o), true, v, 0));
	return EX_OK;
}

static int64_t
int_item(Run *r, Task *t, IOp *o, int i)
{
	const IrItem *it = &o->op->item[i];
	return it->kind == IR_IT_VALUE ? item(r, t, o, it)->u.i : it->i;
}

static int
ex_cdiv(Run *r, Task *t, IOp *o)
{
	int64_t a = int_item(r, t, o, 0), b = int_item(r, t, o, 1), q;
	if (b == 0) {
		interp_err(r, t, o, "integer division by zero in 'ave.cdiv'");
		return EX_ERR;
	}
	if (b == -1)
		q = (int64_t)(0 - (uint64_t)a);
	else {
		q = a / b;
		if (a % b != 0 && (a < 0) == (b < 0))
			q++;
	}
	set_res(r, t, o, 0, scalar_of(rtype(o), true, q, 0));
	return EX_OK;
}

static int
ex_replica_id(Run *r, Task *t, IOp *o)
{
	set_res(r, t, o, 0, scalar_of(rtype(o), true, t->replica, 0));
	return EX_OK;
}

static int
ex_phase_next(Run *r, Task *t, IOp *o)
{
	int64_t s, n;
	Val *ph = item(r, t, o, &o->op->item[0]);
	if (!group_expr(r, t, o, r->c->kw.at, 0, &s) || !group_expr(r, t, o, r->c->kw.at, 1, &n))
		return EX_ERR;
	Val v = int_val(ph->u.i ^ (s == n - 1));
	v.tags = ph->tags;
	set_res(r, t, o, 0, v);
	return EX_OK;
}

/* ---- elementwise ---- */

typedef union Lit {
	int64_t i;
	double d;
	float f;
} Lit;

static Val
tile_val(Tile *tl, uint32_t tags)
{
	Val v = {.k = V_TILE, .tags = tags};
	v.u.t = tl;
	return v;
}

static int
ex_ew(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	IrType *rt = rtype(o), *re = ir_type_elem(rt);
	bool tile = rt->kind == IR_TY_TILE;
	int64_t n = tile ? ir_type_numel(rt) : 1;
	IrType *in = re;
	if (op->code == IR_OP_CMP) {
		for (int k = 0; k < op->nitem; k++)
			if (op->item[k].kind == IR_IT_VALUE) {
				in = ir_type_elem(ir_item_value(op, &op->item[k])->type);
				break;
			}
	}
	const void *ops[3];
	int st[3];
	Lit lit[3];
	uint32_t tags = 0;
	for (int k = 0; k < op->nitem && k < 3; k++) {
		const IrItem *it = &op->item[k];
		IrType *et = op->code == IR_OP_SELECT && k == 0 ? r->c->t_i1 : in;
		if (it->kind == IR_IT_VALUE) {
			Val *v = item(r, t, o, it);
			tags = interp_label_union(r, tags, v->tags);
			if (v->k == V_TILE) {
				ops[k] = v->u.t->data;
				st[k] = 1;
				continue;
			}
			interp_scalar_to_sk(et, v, &lit[k]);
		} else {
			Val lv = literal(it, et);
			interp_scalar_to_sk(et, &lv, &lit[k]);
		}
		ops[k] = &lit[k];
		st[k] = 0;
	}
	Sk rsk = interp_sk(re);
	Tile *res = tile ? interp_tile_new(r, rsk, n) : NULL;
	Lit rbuf;
	void *dst = tile ? res->data : &rbuf;
	int64_t bad = 0;
	if (!interp_ew(op->code, op->mode, &r->c->kw, in, op->nitem, ops, st, dst, n, &bad)) {
		if (tile)
			interp_tile_release(r, res);
		if (tile)
			interp_err(r, t, o,
			           "integer division by zero in '%s' (element %lld of the tile)",
			           ir_op_name(op->code), (long long)bad);
		else
			interp_err(r, t, o, "integer division by zero in '%s'",
			           ir_op_name(op->code));
		return EX_ERR;
	}
	if (op->code != IR_OP_CMP)
		interp_round(re, rsk, dst, n);
	Val v = tile ? tile_val(res, tags) : interp_sk_to_scalar(re, dst);
	v.tags = tags;
	set_res(r, t, o, 0, v);
	return EX_OK;
}

static int
ex_cvt(Run *r, Task *t, IOp *o)
{
	Val *a = item(r, t, o, &o->op->item[0]);
	IrType *from = ir_type_elem(ir_item_value(o->op, &o->op->item[0])->type);
	IrType *rt = rtype(o), *to = ir_type_elem(rt);
	if (a->k == V_TILE) {
		Tile *res = interp_tile_new(r, interp_sk(to), a->u.t->n);
		interp_cvt(from, a->u.t->data, to, res->data, a->u.t->n);
		set_res(r, t, o, 0, tile_val(res, a->tags));
		return EX_OK;
	}
	Lit s, d;
	interp_scalar_to_sk(from, a, &s);
	interp_cvt(from, &s, to, &d, 1);
	Val v = interp_sk_to_scalar(to, &d);
	v.tags = a->tags;
	set_res(r, t, o, 0, v);
	return EX_OK;
}

/* ---- tiles ---- */

static int
ex_zeros(Run *r, Task *t, IOp *o)
{
	IrType *rt = rtype(o);
	Tile *res = interp_tile_new(r, interp_sk(rt->elem), ir_type_numel(rt));
	memset(res->data, 0, (size_t)res->n * interp_sk_size(res->sk));
	set_res(r, t, o, 0, tile_val(res, 0));
	return EX_OK;
}

static void
fill(Tile *tl, const void *x)
{
	size_t sz = interp_sk_size(tl->sk);
	unsigned char *d = tl->data;
	for (int64_t i = 0; i < tl->n; i++)
		memcpy(d + (size_t)i * sz, x, sz);
}

static int
ex_full(Run *r, Task *t, IOp *o)
{
	IrType *rt = rtype(o);
	const IrItem *it = &o->op->item[0];
	Val x = it->kind == IR_IT_VALUE ? *item(r, t, o, it) : literal(it, rt->elem);
	Lit s;
	interp_scalar_to_sk(rt->elem, &x, &s);
	Tile *res = interp_tile_new(r, interp_sk(rt->elem), ir_type_numel(rt));
	fill(res, &s);
	set_res(r, t, o, 0, tile_val(res, x.tags));
	return EX_OK;
}

/* Splits a shape around dimension d into outer x dims[d] x inner. */
static void
around(const IrType *tt, int64_t d, int64_t *outer, int64_t *inner)
{
	*outer = *inner = 1;
	for (int i = 0; i < tt->rank; i++) {
		if (i < d)
			*outer *= tt->dims[i];
		else if (i > d)
			*inner *= tt->dims[i];
	}
}

static int
ex_bcast(Run *r, Task *t, IOp *o)
{
	int64_t d, outer, inner;
	if (!group_expr(r, t, o, r->c->kw.dim, 0, &d))
		return EX_ERR;
	Val *a = item(r, t, o, &o->op->item[0]);
	IrType *rt = rtype(o);
	around(rt, d, &outer, &inner);
	int64_t len = rt->dims[d];
	size_t sz = interp_sk_size(a->u.t->sk);
	Tile *res = interp_tile_new(r, a->u.t->sk, ir_type_numel(rt));
	const unsigned char *s = a->u.t->data;
	unsigned char *dst = res->data;
	for (int64_t i = 0; i < outer; i++)
		for (int64_t k = 0; k < len; k++)
			memcpy(dst + (size_t)((i * len + k) * inner) * sz,
			       s + (size_t)(i * inner) * sz, (size_t)inner * sz);
	set_res(r, t, o, 0, tile_val(res, a->tags));
	return EX_OK;
}

static int
ex_reduce(Run *r, Task *t, IOp *o)
{
	int64_t d, outer, inner;
	if (!group_expr(r, t, o, r->c->kw.dim, 0, &d))
		return EX_ERR;
	Val *a = item(r, t, o, &o->op->item[0]);
	IrType *at = ir_item_value(o->op, &o->op->item[0])->type, *rt = rtype(o);
	around(at, d, &outer, &inner);
	Tile *res = interp_tile_new(r, a->u.t->sk, ir_type_numel(rt));
	interp_reduce(o->op->mode, &r->c->kw, at->elem, a->u.t->data, res->data, outer, at->dims[d],
	              inner);
	interp_round(rt->elem, res->sk, res->data, res->n);
	set_res(r, t, o, 0, tile_val(res, a->tags));
	return EX_OK;
}

static int
ex_trans(Run *r, Task *t, IOp *o)
{
	Val *a = item(r, t, o, &o->op->item[0]);
	IrType *at = ir_item_value(o->op, &o->op->item[0])->type;
	int64_t R = at->dims[0], C = at->dims[1];
	size_t sz = interp_sk_size(a->u.t->sk);
	Tile *res = interp_tile_new(r, a->u.t->sk, R * C);
	const unsigned char *s = a->u.t->data;
	unsigned char *dst = res->data;
	for (int64_t i = 0; i < R; i++)
		for (int64_t j = 0; j < C; j++)
			memcpy(dst + (size_t)(j * R + i) * sz, s + (size_t)(i * C + j) * sz, sz);
	set_res(r, t, o, 0, tile_val(res, a->tags));
	return EX_OK;
}

/* ---- MMA ---- */

/* An MMA operand as contiguous storage: a register tile as it is, shared memory gathered (after
 * the read checks). *own is set when the caller must release the returned tile. */
static Tile *
mma_operand(Run *r, Task *t, IOp *o, int i, uint32_t *tags, View *v, bool *is_smem)
{
	const IrItem *it = &o->op->item[i];
	IrValue *iv = ir_item_value(o->op, it);
	*is_smem = false;
	if (!it->suffix && iv && ir_type_is_reg_tile(iv->type)) {
		Val *x = item(r, t, o, it);
		*tags = x->tags;
		x->u.t->refs++;
		return x->u.t;
	}
	if (!interp_view_of(r, t, o, it, v))
		return NULL;
	*is_smem = true;
	int64_t n = v->dims[0] * v->dims[1];
	Tile *tl = interp_tile_new(r, v->m->sk, n);
	if (!interp_view_read(r, t, o, v, tl, tags, i ? "the B operand of" : "the A operand of")) {
		interp_tile_release(r, tl);
		return NULL;
	}
	return tl;
}

void
interp_mma_retire(Run *r, Task *t, int k)
{
	AMma *m = &t->mma[k];
	for (int i = 0; i < m->nv; i++) {
		View *v = &m->v[i];
		for (int64_t a = 0; a < v->dims[0]; a++)
			for (int64_t b = 0; b < v->dims[1]; b++)
				v->m->readers[v->off + a * v->str[0] + b * v->str[1]]--;
	}
	memmove(&t->mma[k], &t->mma[k + 1], sizeof *m * (size_t)(t->nmma - k - 1));
	t->nmma--;
	(void)r;
}

static int
ex_mma(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	bool async = op->code == IR_OP_MMA_ASYNC;
	uint32_t ta = 0, tb = 0;
	View va, vb;
	bool sa, sb;
	Tile *A = mma_operand(r, t, o, 0, &ta, &va, &sa);
	if (!A)
		return EX_ERR;
	Tile *B = mma_operand(r, t, o, 1, &tb, &vb, &sb);
	if (!B) {
		interp_tile_release(r, A);
		return EX_ERR;
	}
	if (async) {
		/* the async proxy reads shared memory: plain stores need a fence first */
		View *vs[2] = {sa ? &va : NULL, sb ? &vb : NULL};
		for (int i = 0; i < 2; i++) {
			View *v = vs[i];
			if (!v)
				continue;
			for (int64_t a = 0; a < v->dims[0]; a++)
				for (int64_t b = 0; b < v->dims[1]; b++)
					if (v->m->flags[v->off + a * v->str[0] + b * v->str[1]] &
					    SM_UNFENCED) {
						char nm[96];
						interp_view_name(r, v, nm, sizeof nm);
						interp_tile_release(r, A);
						interp_tile_release(r, B);
						interp_err(
						    r, t, o,
						    "'ave.mma.async' reads %s, written by "
						    "'ave.smem.store' "
						    "without an 'ave.fence async_shared' since",
						    nm);
						return EX_ERR;
					}
		}
	}
	Val *C = item(r, t, o, &op->item[2]);
	IrType *ct = ir_item_value(op, &op->item[2])->type;
	IrType *abt = sa ? va.m->elem : ir_item_value(op, &op->item[0])->type->elem;
	int64_t M = ct->dims[0], N = ct->dims[1];
	bool trb = ir_op_group(op, r->c->kw.transpose_b) != NULL;
	int64_t K = sa ? va.dims[1] : ir_item_value(op, &op->item[0])->type->dims[1];
	size_t need = (size_t)(K * N) * 8;
	if (r->scratch_bytes < need) { /* B transposed: one buffer for the whole run */
		ir_xfree(r->al, r->scratch, r->scratch_bytes);
		r->scratch = ir_xalloc(r->al, need);
		r->scratch_bytes = need;
	}
	Tile *D = interp_tile_new(r, SK_F32, M * N);
	interp_mma(abt, A->data, B->data, trb, C->u.t->data, D->data, M, N, K, r->scratch);
	r->st.macs += M * N * K;
	interp_tile_release(r, A);
	interp_tile_release(r, B);
	uint32_t tags = interp_label_union(r, interp_label_union(r, ta, tb), C->tags);
	Val v = tile_val(D, tags);
	if (async) {
		v.k = V_PEND;
		v.seq = ++t->mma_seq;
		if (t->nmma == t->capmma) {
			int cap = t->capmma ? 2 * t->capmma : 4;
			t->mma = ir_xrealloc(r->al, t->mma, sizeof *t->mma * (size_t)t->capmma,
			                     sizeof *t->mma * (size_t)cap);
			t->capmma = cap;
		}
		AMma *m = &t->mma[t->nmma++];
		memset(m, 0, sizeof *m);
		m->seq = v.seq;
		m->o = o;
		if (sa)
			m->v[m->nv++] = va;
		if (sb)
			m->v[m->nv++] = vb;
		for (int i = 0; i < m->nv; i++) {
			View *w = &m->v[i];
			for (int64_t a = 0; a < w->dims[0]; a++)
				for (int64_t b = 0; b < w->dims[1]; b++)
					w->m->readers[w->off + a * w->str[0] + b * w->str[1]]++;
		}
	}
	set_res(r, t, o, 0, v);
	return EX_OK;
}

/* ave.mma.wait %t pending(n): %t and everything the task issued before it are done, and of the
 * async MMAs issued after %t only the newest n may remain in flight. */
static int
ex_mma_wait(Run *r, Task *t, IOp *o)
{
	Val *p = item(r, t, o, &o->op->item[0]);
	int64_t n;
	if (!group_expr(r, t, o, r->c->kw.pending, 0, &n))
		return EX_ERR;
	Task *owners[2] = {t, t->parent};
	for (int w = 0; w < 2; w++) {
		Task *ow = owners[w];
		if (!ow)
			continue;
		int after = 0;
		for (int k = 0; k < ow->nmma; k++)
			after += ow->mma[k].seq > p->seq;
		for (int k = 0; k < ow->nmma;) {
			if (ow->mma[k].seq <= p->seq || (ow->mma[k].seq > p->seq && after > n)) {
				if (ow->mma[k].seq > p->seq)
					after--;
				interp_mma_retire(r, ow, k);
			} else {
				k++;
			}
		}
	}
	Val v = tile_val(p->u.t, p->tags);
	p->u.t->refs++;
	set_res(r, t, o, 0, v);
	return EX_OK;
}

/* ---- control flow ---- */

static Val
init_value(Run *r, Task *t, IOp *o, int i)
{
	const IrItem *it = &o->op->item[3 + i];
	if (it->kind == IR_IT_VALUE)
		return interp_val_copy(item(r, t, o, it));
	return literal(it, o->op->res[i].type);
}

static int
ex_for(Run *r, Task *t, IOp *o)
{
	IrOp *op = o->op;
	int64_t lb, ub, step;
	if (!expr(r, t, o, op->item[0].e, &lb) || !expr(r, t, o, op->item[1].e, &ub) ||
	    !expr(r, t, o, op->item[2].e, &step))
		return EX_ERR;
	if (step <= 0) {
		interp_err(r, t, o, "'ave.for' step must be positive, found %lld", (long long)step);
		return EX_ERR;
	}
	int ninit = op->nitem - 3;
	if (lb >= ub) {
		for (int i = 0; i < ninit; i++)
			set_res(r, t, o, i, init_value(r, t, o, i));
		return EX_OK;
	}
	IBlock *b = o->reg[0];
	Val *vals = ir_xalloc(r->al, sizeof(Val) * (size_t)(ninit + 1));
	for (int i = 0; i < ninit; i++)
		vals[i] = init_value(r, t, o, i);
	interp_push(r, t, b);
	Frame *f = &t->fr[t->depth - 1];
	f->iv = lb;
	f->ub = ub;
	f->step = step;
	interp_set(r, t, b->arg[0], int_val(lb));
	for (int i = 0; i < ninit; i++)
		interp_set(r, t, b->arg[1 + i], vals[i]);
	ir_xfree(r->al, vals, sizeof(Val) * (size_t)(ninit + 1));
	return EX_OK;
}

static int
ex_if(Run *r, Task *t, IOp *o)
{
	Val *c = item(r, t, o, &o->op->item[0]);
	if (c->u.i)
		interp_push(r, t, o->reg[0]);
	else if (o->op->nreg > 1)
		interp_push(r, t, o->reg[1]);
	return EX_OK;
}

static int
ex_yield(Run *r, Task *t, IOp *o)
{
	Frame *f = &t->fr[t->depth - 1];
	IOp *owner = f->b->owner;
	int n = o->op->nitem;
	Val *vals = ir_xalloc(r->al, sizeof(Val) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		vals[i] = interp_val_copy(item(r, t, o, &o->op->item[i]));
	if (owner->op->code == IR_OP_FOR) {
		int64_t next;
		bool more = !__builtin_add_overflow(f->iv, f->step, &next) && next < f->ub;
		if (more) {
			f->iv = next;
			f->pc = 0;
			interp_set(r, t, f->b->arg[0], int_val(next));
			for (int i = 0; i < n; i++)
				interp_set(r, t, f->b->arg[1 + i], vals[i]);
			ir_xfree(r->al, vals, sizeof(Val) * (size_t)(n + 1));
			return EX_JUMP;
		}
	}
	t->depth--;
	for (int i = 0; i < n; i++)
		set_res(r, t, owner, i, vals[i]);
	ir_xfree(r->al, vals, sizeof(Val) * (size_t)(n + 1));
	return EX_JUMP;
}

static int
ex_return(Run *r, Task *t, IOp *o)
{
	(void)r;
	(void)t;
	(void)o;
	return EX_DONE;
}

static int
ex_nop(Run *r, Task *t, IOp *o)
{
	(void)r;
	(void)t;
	(void)o;
	return EX_OK;
}

static int64_t
role_replicas(Run *r, IOp *role)
{
	return ir_role_info(r->c, role->op).replicas;
}

/* The CTA's task starts one task per role replica, then waits for all of them. */
static int
ex_warp_specialize(Run *r, Task *t, IOp *o)
{
	Cta *cta = r->cta;
	if (!t->spawned) {
		t->spawned = true;
		t->child0 = cta->ntask;
		t->nchild = 0;
		IBlock *b = o->reg[0];
		for (int i = 0; i < b->nops; i++) {
			IOp *role = &b->ops[i];
			int64_t n = role_replicas(r, role);
			cta->rbar[role->id].arrived = 0;
			for (int64_t k = 0; k < n; k++) {
				interp_spawn(r, role, k, t);
				t->nchild++;
			}
		}
	}
	for (int i = 0; i < t->nchild; i++)
		if (cta->task[t->child0 + i]->st != T_DONE) {
			t->wait_op = o;
			return EX_BLOCK;
		}
	for (int i = 0; i < t->nchild; i++)
		interp_task_retire(r, cta->task[t->child0 + i]);
	t->spawned = false;
	return EX_OK;
}

/* ---- the table ---- */

/* X(opcode, handler, scheduling point). Ops without a row are not supported. */
#define INTERP_OPS(X)                                                                              \
	X(RETURN, ex_return, 0)                                                                    \
	X(CONST, ex_const, 0)                                                                      \
	X(INDEX, ex_index, 0)                                                                      \
	X(PROGRAM_ID, ex_program_id, 0)                                                            \
	X(NUM_PROGRAMS, ex_program_id, 0)                                                          \
	X(CDIV, ex_cdiv, 0)                                                                        \
	X(ADD, ex_ew, 0)                                                                           \
	X(SUB, ex_ew, 0)                                                                           \
	X(MUL, ex_ew, 0)                                                                           \
	X(DIV, ex_ew, 0)                                                                           \
	X(REM, ex_ew, 0)                                                                           \
	X(MAX, ex_ew, 0)                                                                           \
	X(MIN, ex_ew, 0)                                                                           \
	X(AND, ex_ew, 0)                                                                           \
	X(OR, ex_ew, 0)                                                                            \
	X(XOR, ex_ew, 0)                                                                           \
	X(SHL, ex_ew, 0)                                                                           \
	X(SHR, ex_ew, 0)                                                                           \
	X(NEG, ex_ew, 0)                                                                           \
	X(EXP2, ex_ew, 0)                                                                          \
	X(EXP, ex_ew, 0)                                                                           \
	X(LOG2, ex_ew, 0)                                                                          \
	X(SQRT, ex_ew, 0)                                                                          \
	X(RSQRT, ex_ew, 0)                                                                         \
	X(ABS, ex_ew, 0)                                                                           \
	X(FMA, ex_ew, 0)                                                                           \
	X(CMP, ex_ew, 0)                                                                           \
	X(SELECT, ex_ew, 0)                                                                        \
	X(CVT, ex_cvt, 0)                                                                          \
	X(BCAST, ex_bcast, 0)                                                                      \
	X(FOR, ex_for, 0)                                                                          \
	X(IF, ex_if, 0)                                                                            \
	X(YIELD, ex_yield, 0)                                                                      \
	X(LOAD, interp_load, 1)                                                                    \
	X(STORE, interp_store, 1)                                                                  \
	X(SMEM_ALLOC, interp_smem_alloc, 0)                                                        \
	X(COPY_ASYNC, interp_copy_async, 1)                                                        \
	X(SMEM_LOAD, interp_smem_load, 1)                                                          \
	X(SMEM_STORE, interp_smem_store, 1)                                                        \
	X(SLICE, interp_slice, 0)                                                                  \
	X(ZEROS, ex_zeros, 0)                                                                      \
	X(FULL, ex_full, 0)                                                                        \
	X(MMA, ex_mma, 0) /* a point when it reads shared memory (interp_prep.c) */                \
	X(MMA_ASYNC, ex_mma, 1)                                                                    \
	X(MMA_WAIT, ex_mma_wait, 1)                                                                \
	X(REDUCE, ex_reduce, 0)                                                                    \
	X(TRANS, ex_trans, 0)                                                                      \
	X(MBAR_ALLOC, interp_mbar_alloc, 0)                                                        \
	X(MBAR_EXPECT_TX, interp_mbar_expect_tx, 1)                                                \
	X(MBAR_ARRIVE, interp_mbar_arrive, 1)                                                      \
	X(MBAR_WAIT, interp_mbar_wait, 1)                                                          \
	X(PHASE_NEXT, ex_phase_next, 0)                                                            \
	X(BARRIER, interp_barrier, 1)                                                              \
	X(FENCE, interp_fence, 1)                                                                  \
	X(WARP_SPECIALIZE, ex_warp_specialize, 1)                                                  \
	X(ROLE, ex_nop, 0) /* runs as tasks started by ave.warp_specialize */                      \
	X(CTA_ID, ex_cta_id, 0)                                                                    \
	X(NUM_CTAS, ex_cta_id, 0)                                                                  \
	X(REPLICA_ID, ex_replica_id, 0)                                                            \
	X(TAG_FUNC, ex_nop, 0)                                                                     \
	X(TAG, interp_tag, 0)                                                                      \
	X(TAG_ASSERT, interp_tag_assert, 1)                                                        \
	X(RANK, interp_rank_op, 0)                                                                 \
	X(WORLD_SIZE, interp_rank_op, 0)                                                           \
	X(CHUNK_WAIT, interp_chunk_wait, 1)                                                        \
	X(CHUNK_SIGNAL, interp_chunk_signal, 1)                                                    \
	X(PUT, interp_put, 1)                                                                      \
	X(GET, interp_load, 1)

static const struct {
	ExecFn fn;
	bool point;
} exec_table[IR_OP_COUNT] = {
#define X(id, fn, point) [IR_OP_##id] = {fn, point},
    INTERP_OPS(X)
#undef X
};

bool
interp_op_supported(IrOpcode code, bool *point)
{
	*point = exec_table[code].point;
	return exec_table[code].fn != NULL;
}

int
interp_exec(Run *r, Task *t, IOp *o)
{
	return exec_table[o->op->code].fn(r, t, o);
}
