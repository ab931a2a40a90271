/* interp_tags.c — tag labels at run time (SPEC §5.8): labels `@A(0, 3)` and sets of them are
 * interned per run; register values carry a set, shared memory and labelled global memory one per
 * element. ave.tag.assert checks holds(...) and the comparisons on the values this run has. */
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

typedef struct Label {
	IrStr fn;
	int n;
	int64_t *arg;
} Label;

typedef struct LSet {
	int n;
	uint32_t *l; /* label ids, sorted */
} LSet;

static bool
label_eq(const void *a, const void *b)
{
	const Label *x = a, *y = b;
	return x->fn == y->fn && x->n == y->n &&
	       !memcmp(x->arg, y->arg, sizeof(int64_t) * (size_t)x->n);
}

static bool
set_eq(const void *a, const void *b)
{
	const LSet *x = a, *y = b;
	return x->n == y->n && !memcmp(x->l, y->l, sizeof(uint32_t) * (size_t)x->n);
}

static uint32_t
intern_set(Run *r, int n, const uint32_t *l)
{
	Labels *lb = &r->lab;
	LSet key = {n, (uint32_t *)l};
	uint64_t h = ir_hash_bytes(l, sizeof(uint32_t) * (size_t)n);
	void *got = ir_map_get(&lb->set, h, &key, set_eq);
	if (got)
		return (uint32_t)(uintptr_t)got - 1;
	LSet *s = ir_arena_alloc(&lb->arena, sizeof *s);
	s->n = n;
	s->l = ir_arena_alloc(&lb->arena, sizeof(uint32_t) * (size_t)(n + 1));
	if (n)
		memcpy(s->l, l, sizeof(uint32_t) * (size_t)n);
	uint32_t id = (uint32_t)lb->setv.len;
	ir_vec_push(r->al, &lb->setv, &s, sizeof s);
	ir_map_put(&lb->set, h, s, (void *)(uintptr_t)(id + 1), set_eq);
	return id;
}

void
interp_labels_init(Run *r)
{
	Labels *lb = &r->lab;
	memset(lb, 0, sizeof *lb);
	ir_map_init(&lb->lab, r->al);
	ir_map_init(&lb->set, r->al);
	ir_arena_init(&lb->arena, r->al);
	intern_set(r, 0, NULL); /* set 0: no label */
}

void
interp_labels_free(Run *r)
{
	Labels *lb = &r->lab;
	ir_map_free(&lb->lab);
	ir_map_free(&lb->set);
	ir_vec_free(r->al, &lb->labv, sizeof(Label *));
	ir_vec_free(r->al, &lb->setv, sizeof(LSet *));
	ir_arena_free(&lb->arena);
}

uint32_t
interp_label_set1(Run *r, IrStr fn, int n, const int64_t *args)
{
	Labels *lb = &r->lab;
	Label key = {fn, n, (int64_t *)args};
	uint64_t h = ir_hash_mix(ir_hash_ptr(fn), ir_hash_bytes(args, sizeof(int64_t) * (size_t)n));
	void *got = ir_map_get(&lb->lab, h, &key, label_eq);
	uint32_t id;
	if (got) {
		id = (uint32_t)(uintptr_t)got - 1;
	} else {
		Label *l = ir_arena_alloc(&lb->arena, sizeof *l);
		l->fn = fn;
		l->n = n;
		l->arg = ir_arena_alloc(&lb->arena, sizeof(int64_t) * (size_t)(n + 1));
		if (n)
			memcpy(l->arg, args, sizeof(int64_t) * (size_t)n);
		id = (uint32_t)lb->labv.len;
		ir_vec_push(r->al, &lb->labv, &l, sizeof l);
		ir_map_put(&lb->lab, h, l, (void *)(uintptr_t)(id + 1), label_eq);
	}
	return intern_set(r, 1, &id);
}

uint32_t
interp_label_union(Run *r, uint32_t a, uint32_t b)
{
	if (a == b || b == 0)
		return a;
	if (a == 0)
		return b;
	const LSet *x = IR_VEC_AT(r->lab.setv, LSet *, a), *y = IR_VEC_AT(r->lab.setv, LSet *, b);
	uint32_t *m = ir_xalloc(r->al, sizeof(uint32_t) * (size_t)(x->n + y->n));
	int i = 0, j = 0, k = 0;
	while (i < x->n || j < y->n) {
		if (j == y->n || (i < x->n && x->l[i] < y->l[j]))
			m[k++] = x->l[i++];
		else if (i == x->n || y->l[j] < x->l[i])
			m[k++] = y->l[j++];
		else {
			m[k++] = x->l[i++];
			j++;
		}
	}
	uint32_t id = intern_set(r, k, m);
	ir_xfree(r->al, m, sizeof(uint32_t) * (size_t)(x->n + y->n));
	return id;
}

void
interp_label_str(Run *r, uint32_t set, char *buf, size_t n)
{
	const LSet *s = IR_VEC_AT(r->lab.setv, LSet *, set);
	buf[0] = 0;
	if (!s->n) {
		snprintf(buf, n, "no label");
		return;
	}
	for (int i = 0; i < s->n; i++) {
		const Label *l = IR_VEC_AT(r->lab.labv, Label *, s->l[i]);
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s@%s(", i ? " and " : "", l->fn);
		for (int k = 0; k < l->n; k++) {
			len = strlen(buf);
			snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)l->arg[k]);
		}
		len = strlen(buf);
		snprintf(buf + len, n - len, ")");
	}
}

bool
interp_tag_call(Run *r, Task *t, IOp *o, const IrItem *it, uint32_t *set)
{
	int64_t args[16];
	int n = it->ncoord < 16 ? it->ncoord : 16;
	for (int i = 0; i < n; i++) {
		bool ok = true;
		args[i] = interp_expr(r, t, o, it->coord[i].e, &ok);
		if (!ok) {
			interp_err(r, t, o,
			           "index expression divides by a value that is not positive");
			return false;
		}
	}
	*set = interp_label_set1(r, it->s, n, args);
	return true;
}

/* %t2 = ave.tag %t, @L(...): the value, now labelled exactly {L}. */
int
interp_tag(Run *r, Task *t, IOp *o)
{
	uint32_t set;
	if (!interp_tag_call(r, t, o, &o->op->item[1], &set))
		return EX_ERR;
	Val v = interp_val_copy(interp_val(r, t, o->slot[o->op->item[0].opnd]));
	v.tags = set;
	interp_set(r, t, o->res, v);
	return EX_OK;
}

static void
expr_name(void *ud, int opnd, FILE *out)
{
	IrOp *op = ud;
	fprintf(out, "%%%s", interp_vname(ir_op_value(op, opnd)));
}

static char *
expr_text(IrOp *op, const IrExpr *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	ir_expr_print(e, f, expr_name, op);
	fclose(f);
	return buf;
}

static void
fail(Run *r, Task *t, IOp *o, const char *what)
{
	IrGroup *msg = ir_op_group(o->op, r->c->kw.msg);
	if (msg)
		interp_err(r, t, o, "tag assertion failed: %s: %s", what, msg->item[0].s);
	else
		interp_err(r, t, o, "tag assertion failed: %s", what);
}

/* The tile of a tensor that a single label stands for: its tag function's `region` with the
 * parameters bound to the label's arguments (other values are the kernel's, read in task t). */
typedef struct LBox {
	uint32_t set; /* the label set it was made for, + 1 (0: not made yet) */
	bool ok;
	IrStr fn;
	IrValue *tensor;
	int rank;
	int64_t lo[IR_MAX_RANK], len[IR_MAX_RANK];
} LBox;

static void
label_box(Run *r, Task *t, IrOp *user, uint32_t set, LBox *b)
{
	memset(b, 0, sizeof *b);
	const LSet *s = IR_VEC_AT(r->lab.setv, LSet *, set);
	if (s->n != 1)
		return;
	const Label *l = IR_VEC_AT(r->lab.labv, Label *, s->l[0]);
	b->fn = l->fn;
	IrOp *tf = ir_symbol_lookup(r->c, user, l->fn);
	IrGroup *rg = tf && tf->code == IR_OP_TAG_FUNC ? ir_op_group(tf, r->c->kw.region) : NULL;
	if (!rg || tf->nopnd > 32 || rg->item[0].ncoord > IR_MAX_RANK)
		return;
	IOp *to = NULL;
	for (int i = 0; i < r->p->nops && !to; i++)
		if (r->p->ops[i] && r->p->ops[i]->op == tf)
			to = r->p->ops[i];
	int64_t vals[32];
	const IrItem *d = &tf->item[0];
	for (int i = 0; i < tf->nopnd; i++) {
		IrValue *v = tf->opnd[i].val;
		vals[i] = 0;
		int j = 0;
		while (j < d->nparam && d->param[j] != v)
			j++;
		if (j < d->nparam && j < l->n)
			vals[i] = l->arg[j];
		else if (to && ir_type_is_scalar(v->type) && !ir_type_is_float(v->type))
			vals[i] = interp_val(r, t, to->slot[i])->u.i;
	}
	const IrItem *it = &rg->item[0];
	b->tensor = ir_item_value(tf, it);
	b->rank = it->ncoord;
	for (int k = 0; k < it->ncoord; k++) {
		if (!ir_expr_eval(it->coord[k].e, vals, &b->lo[k]))
			return;
		b->len[k] = it->coord[k].len;
	}
	b->ok = b->tensor != NULL;
}

/* ave.store ... tag(@L(...)): the store writes exactly @L's region (the verifier requires one):
 * its coordinates `at` are the region's origin, as the checker proves (docs/invariants.md). */
bool
interp_store_tag_ok(Run *r, Task *t, IOp *o, const IrItem *call, const int64_t *at)
{
	uint32_t set;
	if (!interp_tag_call(r, t, o, call, &set))
		return false;
	LBox b;
	label_box(r, t, o->op, set, &b);
	const IrItem *dst = &ir_op_group(o->op, r->c->kw.into)->item[0];
	if (!b.ok || b.rank != dst->ncoord) {
		interp_err(r, t, o, "cannot evaluate the region of '@%s' for this store", call->s);
		return false;
	}
	bool same = b.tensor == ir_item_value(o->op, dst);
	for (int d = 0; d < b.rank && same; d++)
		same = at[d] == b.lo[d];
	if (same)
		return true;
	char got[160] = "", want[160] = "";
	size_t ng = 0, nw = 0;
	for (int d = 0; d < b.rank; d++) {
		int a1 = snprintf(got + ng, sizeof got - ng, "%s%lld", d ? ", " : "", (long long)at[d]);
		int a2 = snprintf(want + nw, sizeof want - nw, "%s%lld", d ? ", " : "",
		                  (long long)b.lo[d]);
		if (a1 < 0 || a2 < 0 || (size_t)a1 >= sizeof got - ng || (size_t)a2 >= sizeof want - nw)
			break;
		ng += (size_t)a1;
		nw += (size_t)a2;
	}
	interp_err(r, t, o,
	           "this store tagged '@%s' writes at [%s], but the region of '@%s' is at [%s]%s",
	           call->s, got, call->s, want,
	           b.tensor == ir_item_value(o->op, dst) ? "" : " of another tensor");
	return false;
}

/* Under a label of another name than the one asserted, an element of view v may still be the
 * element asserted: both labels name regions of one tensor (rank 1 or 2, as the checker), and
 * the element's place in the write that labelled it (from that write's first element, where its
 * tile's origin sits) under its label is the tensor element its place in the view is under the
 * asserted label (docs/invariants.md, "Views of a slot"). */
static bool
same_element(const View *v, const LBox *got, const LBox *want, int64_t idx, const int64_t *i3)
{
	const Smem *m = v->m;
	if (!got->ok || !want->ok || got->fn == want->fn || got->tensor != want->tensor ||
	    got->rank != want->rank || want->rank != v->rank || want->rank != m->rank ||
	    want->rank > 2)
		return false;
	if (!m->origin)
		return false;
	int64_t local = idx - m->origin[idx];
	for (int d = m->rank - 1; d >= 0; d--) {
		int64_t at = local % m->dims[d];
		local /= m->dims[d];
		if (got->lo[d] + at != want->lo[d] + i3[3 - m->rank + d] ||
		    v->dims[d] != want->len[d])
			return false;
	}
	return true;
}

/* What x holds: its label set, or a reason it holds nothing definite. */
static bool
holds_smem(Run *r, Task *t, IOp *o, const View *v, uint32_t want, char *why, size_t n)
{
	Smem *m = v->m;
	char nm[128];
	interp_view_name(r, v, nm, sizeof nm);
	int64_t d0 = v->rank > 2 ? v->dims[v->rank - 3] : 1,
	        d1 = v->rank > 1 ? v->dims[v->rank - 2] : 1;
	int64_t s0 = v->rank > 2 ? v->str[v->rank - 3] : 0,
	        s1 = v->rank > 1 ? v->str[v->rank - 2] : 0;
	int64_t d2 = v->dims[v->rank - 1], s2 = v->str[v->rank - 1];
	uint32_t all = 0;
	bool mixed = false;
	LBox wbox = {0}, gbox = {0};
	for (int64_t a = 0; a < d0; a++)
		for (int64_t b = 0; b < d1; b++)
			for (int64_t c = 0; c < d2; c++) {
				int64_t idx = v->off + a * s0 + b * s1 + c * s2;
				if (m->flags[idx] & SM_INFLIGHT) {
					snprintf(why, n,
					         "%s holds data still landing from an async copy",
					         nm);
					return false;
				}
				if (!m->meta[idx]) {
					snprintf(why, n, "%s holds nothing (never written)", nm);
					return false;
				}
				uint32_t got = m->meta[idx] - 1;
				if (got != want) {
					if (wbox.set != want + 1) {
						label_box(r, t, o->op, want, &wbox);
						wbox.set = want + 1;
					}
					if (gbox.set != got + 1) {
						label_box(r, t, o->op, got, &gbox);
						gbox.set = got + 1;
					}
					int64_t i3[3] = {a, b, c};
					if (same_element(v, &gbox, &wbox, idx, i3))
						continue;
					mixed = true;
				}
				all = interp_label_union(r, all, got);
			}
	if (!mixed)
		return true;
	char got[256], exp[256];
	interp_label_str(r, all, got, sizeof got);
	interp_label_str(r, want, exp, sizeof exp);
	if (snprintf(why, n, "%s holds %s, not %s", nm, got, exp) >= (int)n && n > 4)
		memcpy(why + n - 4, "...", 4); /* cut short: say so */
	(void)t;
	(void)o;
	return false;
}

static int
holds(Run *r, Task *t, IOp *o, IrGroup *g)
{
	uint32_t want;
	if (!interp_tag_call(r, t, o, &g->item[1], &want))
		return EX_ERR;
	const IrItem *x = &g->item[0];
	IrValue *xv = ir_item_value(o->op, x);
	Val *val = interp_val(r, t, o->slot[ir_item_opnd(x)]);
	char why[640];
	if (val->k == V_SMEM) {
		View v;
		if (!interp_view_of(r, t, o, x, &v))
			return EX_ERR;
		if (holds_smem(r, t, o, &v, want, why, sizeof why))
			return EX_OK;
		fail(r, t, o, why);
		return EX_ERR;
	}
	uint32_t got;
	if (val->k == V_TENS) {
		Tens *gt = val->u.g;
		int64_t off = 0;
		for (int i = 0; i < x->ncoord; i++) {
			bool ok = true;
			int64_t c = interp_expr(r, t, o, x->coord[i].e, &ok);
			if (!ok || c < 0 || c >= gt->dims[i]) {
				interp_err(r, t, o, "'holds' names an element outside '%%%s'",
				           interp_vname(gt->arg));
				return EX_ERR;
			}
			off += c * gt->str[i];
		}
		if (off < 0 || off >= gt->nelem) {
			interp_err(r, t, o, "'holds' names an element outside the buffer of '%%%s'",
			           interp_vname(gt->arg));
			return EX_ERR;
		}
		got = gt->labels ? gt->labels[off] : 0;
	} else {
		got = val->tags;
	}
	if (got == want)
		return EX_OK;
	char gs[256], ws[256];
	interp_label_str(r, got, gs, sizeof gs);
	interp_label_str(r, want, ws, sizeof ws);
	snprintf(why, sizeof why, "'%%%s' holds %s, not %s", interp_vname(xv), gs, ws);
	fail(r, t, o, why);
	return EX_ERR;
}

int
interp_tag_assert(Run *r, Task *t, IOp *o)
{
	IrCtx *c = r->c;
	for (int gi = 0; gi < o->op->ngroup; gi++) {
		IrGroup *g = &o->op->group[gi];
		if (g->kw == c->kw.msg)
			continue;
		if (g->kw == c->kw.holds)
			return holds(r, t, o, g);
		IrStr cmps[6] = {c->kw.eq, c->kw.ne, c->kw.lt, c->kw.le, c->kw.gt, c->kw.ge};
		int k = 0;
		while (k < 6 && cmps[k] != g->kw)
			k++;
		if (k == 6)
			ir_unreachable("tag assertion kind (ready is rejected when preparing)");
		bool ok = true;
		int64_t a = interp_expr(r, t, o, g->item[0].e, &ok);
		int64_t b = interp_expr(r, t, o, g->item[1].e, &ok);
		if (!ok) {
			interp_err(r, t, o,
			           "index expression divides by a value that is not positive");
			return EX_ERR;
		}
		bool res[6] = {a == b, a != b, a<b, a <= b, a> b, a >= b};
		if (res[k])
			return EX_OK;
		char *ta = expr_text(o->op, g->item[0].e), *tb = expr_text(o->op, g->item[1].e);
		char why[640];
		snprintf(why, sizeof why, "%s(%s, %s) is %s(%lld, %lld)", g->kw, ta ? ta : "?",
		         tb ? tb : "?", g->kw, (long long)a, (long long)b);
		free(ta);
		free(tb);
		fail(r, t, o, why);
		return EX_ERR;
	}
	return EX_OK;
}
