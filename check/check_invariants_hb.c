/* check_invariants_hb.c — happens-before for the invariant checker. A point is a program point of
 * one replica of a role in one iteration (or the landing of an async copy). `a` happens before
 * `b` through program order, a role barrier, the fork/join around ave.warp_specialize, or a chain
 * of barrier hops: a release (arrive / expect_tx) after `a` feeds phase n of a barrier, a wait
 * that guarantees n + 1 completed phases returns in another thread, and so on until `b`. Each
 * hop is chosen canonically (the first release after the point, the first wait instance that
 * guarantees the phase), so the result is a quantifier-free formula that implies the ordering. */
#include <string.h>


#include "check_internal.h"

#define S (k->smt)

CkPoint
pass_ck_point(const CkInst *in)
{
	CkPoint p;
	memset(&p, 0, sizeof p);
	p.role = in->site->role;
	p.r = in->r;
	p.seg = in->site->seg;
	p.pos = in->site->pos;
	p.ord = in->site->ord;
	p.nested = in->site->nested;
	p.loop = in->site->loop;
	p.t = in->t;
	return p;
}

CkPoint
pass_ck_point_end(Ck *k, const CkInst *in)
{
	CkPoint p = pass_ck_point(in);
	const CkSite *s = in->site;
	if (s->op->code != IR_OP_MMA_ASYNC)
		return p;
	if (!s->end_op || s->end_seg != s->seg || (s->end_shift && !s->loop)) {
		p.role = NULL; /* never known to end */
		return p;
	}
	p.pos = s->end_pos;
	p.ord = -1;
	if (s->end_shift)
		p.t = pass_ck_add(S, in->t, pass_ck_num(S, 1));
	if (s->end_pend[0] || s->end_pend[1]) {
		/* pending(1): the wait of this iteration when it is a pending(0) one, else the
		 * wait of the next iteration (which must exist). */
		Z3_ast done;
		if (s->end_op->code == IR_OP_IF) {
			const IrItem *ci = &s->end_op->item[0];
			int before = k->nopaque;
			Z3_ast c = ci->kind == IR_IT_VALUE && !ci->suffix
			               ? pass_ck_value(k, in->env, ir_item_value(s->end_op, ci))
			               : NULL;
			if (!c || k->nopaque != before) {
				p.role = NULL;
				return p;
			}
			Z3_ast taken = pass_ck_not(S, pass_ck_eq(S, c, pass_ck_num(S, 0)));
			Z3_ast d0 = s->end_pend[0] ? Z3_mk_false(S->z) : Z3_mk_true(S->z);
			Z3_ast d1 = s->end_pend[1] ? Z3_mk_false(S->z) : Z3_mk_true(S->z);
			done = pass_ck_or2(S, pass_ck_and2(S, taken, d0),
			                   pass_ck_and2(S, pass_ck_not(S, taken), d1));
		} else {
			done = Z3_mk_false(S->z);
		}
		Z3_ast nx = pass_ck_add(S, in->t, pass_ck_num(S, 1));
		CkInst next = pass_ck_inst_at(k, in->site, in->r, nx);
		p.t = pass_ck_ite(S, done, in->t, nx);
		p.when = pass_ck_or2(S, done, pass_ck_inst_exists(k, &next));
	}
	return p;
}

bool
pass_ck_point_never(const CkPoint *p)
{
	return !p->role;
}

Z3_ast
pass_ck_po(Ck *k, const CkPoint *a, const CkPoint *b)
{
	if (!a->role || !b->role || a->role != b->role || a->landing || b->landing)
		return Z3_mk_false(S->z);
	Z3_ast same = pass_ck_eq(S, a->r, b->r);
	if (a->seg != b->seg)
		return a->seg < b->seg ? same : Z3_mk_false(S->z);
	/* Within one role-body (or loop-body) op, an ave.if around them: the walk's order is
	 * program order (in two branches of one ave.if they never both run, so either order
	 * holds). Not in an inner loop, whose iterations the instances do not tell apart. */
	bool inner = a->ord >= 0 && b->ord >= 0 && a->ord < b->ord && !a->nested && !b->nested;
	if (!a->loop || !a->t || !b->t)
		return inner && !a->loop && !b->loop ? same : Z3_mk_false(S->z);
	if (a->loop != b->loop)
		return Z3_mk_false(S->z); /* a tile loop's op and its k-loop's: not ordered here */
	Z3_ast lt = pass_ck_lt(S, a->t, b->t);
	if (a->pos < b->pos || (a->pos == b->pos && inner))
		lt = pass_ck_or2(S, lt, pass_ck_eq(S, a->t, b->t));
	return pass_ck_and2(S, same, lt);
}

/* The first instance of site c (in a's role and replica) after point a. */
static bool
first_after(Ck *k, CkSite *c, const CkPoint *a, CkInst *out, Z3_ast *ok)
{
	/* A release under `ave.if` (guard t >= shift, or a tail's guard): its first instance
	 * after the point whose guard holds. */
	if (c->role != a->role || c->nested || (c->cond && !c->group))
		return false;
	if (c->tail_in && (c->seg > a->seg || (c->seg == a->seg && a->t && c->loop == a->loop))) {
		/* A release on the loop's last iteration: that iteration, when it comes after a. */
		Z3_ast tl = pass_ck_fresh(S, "tl");
		CkInst nx = pass_ck_inst_at(k, c, a->r, pass_ck_add(S, tl, pass_ck_num(S, 1)));
		*out = pass_ck_inst_at(k, c, a->r, tl);
		/* tl is the last iteration (-1 when the loop runs none): a function of the loop, not
		 * a free choice under a negation. */
		CkInst i0 = pass_ck_inst_at(k, c, a->r, pass_ck_num(S, 0));
		pass_ck_side(S, tl,
		             pass_ck_or2(S,
		                         pass_ck_and2(S, pass_ck_inst_exists(k, out),
		                                      pass_ck_not(S, pass_ck_inst_exists(k, &nx))),
		                         pass_ck_and2(S, pass_ck_not(S, pass_ck_inst_exists(k, &i0)),
		                                      pass_ck_eq(S, tl, pass_ck_num(S, -1)))));
		Z3_ast from = c->seg > a->seg       ? pass_ck_num(S, 0)
		              : c->pos > a->pos     ? a->t
		                                    : pass_ck_add(S, a->t, pass_ck_num(S, 1));
		bool known = true;
		Z3_ast parts[4] = {pass_ck_inst_exists(k, out), pass_ck_not(S, pass_ck_inst_exists(k, &nx)),
		                   pass_ck_le(S, from, tl), pass_ck_guard(k, out, &known)};
		*ok = known ? pass_ck_and(S, 4, parts) : Z3_mk_false(S->z);
		return true;
	}
	if (c->seg > a->seg) {
		Z3_ast t0 = c->loop ? pass_ck_num(S, c->shift) : NULL;
		*out = pass_ck_inst_at(k, c, a->r, t0);
		*ok = pass_ck_inst_exists(k, out);
	} else if (c->seg == a->seg && c->loop && a->t && c->loop == a->loop) {
		Z3_ast t = c->pos > a->pos ? a->t : pass_ck_add(S, a->t, pass_ck_num(S, 1));
		if (c->shift)
			t = pass_ck_ite(S, pass_ck_lt(S, t, pass_ck_num(S, c->shift)),
			                pass_ck_num(S, c->shift), t);
		*out = pass_ck_inst_at(k, c, a->r, t);
		*ok = pass_ck_inst_exists(k, out);
	} else {
		return false;
	}
	if (c->cond && !c->loop) {
		bool known = true;
		*ok = pass_ck_and2(S, *ok, pass_ck_guard(k, out, &known));
	}
	return true;
}

static Z3_ast hb_point(Ck *k, const CkPoint *a, const CkPoint *b, int depth);

/* Phase n of barrier bar[i] completes, then b. */
static Z3_ast
hb_phase(Ck *k, IrValue *bar, Z3_ast i, Z3_ast n, const CkPoint *b, int depth)
{
	if (depth <= 0)
		return Z3_mk_false(S->z);
	IrVec alts = {0};
	Z3_ast m = pass_ck_add(S, n, pass_ck_num(S, 1));
	for (int s = 0; s < k->sites.len; s++) {
		CkSite *u = IR_VEC_AT(k->sites, CkSite *, s);
		if (u->kind != CK_WAIT || u->bar != bar || u->cond || u->nested)
			continue;
		if (depth == 1 && u->role != b->role && b->role != &k->roles[0])
			continue;
		int64_t nq = u->role->nrep > 8 ? 8 : u->role->nrep;
		bool last_only = u->role == b->role && depth == 1;
		for (int64_t q = 0; q < (last_only ? 1 : nq); q++) {
			Z3_ast r = last_only ? b->r : pass_ck_num(S, q);
			Z3_ast ok;
			Z3_ast t = pass_ck_wait_iter(k, u, r, i, m, &ok);
			if (pass_ck_is_false(S, ok))
				continue;
			CkInst ui = pass_ck_inst_at(k, u, r, t);
			CkPoint up = pass_ck_point(&ui);
			Z3_ast rest = hb_point(k, &up, b, depth - 1);
			Z3_ast alt = pass_ck_and2(S, ok, rest);
			ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
		}
	}
	Z3_ast res = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
	ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
	return res;
}

static Z3_ast
hb_point(Ck *k, const CkPoint *a, const CkPoint *b, int depth)
{
	if (!a->role || !b->role)
		return Z3_mk_false(S->z);
	IrVec alts = {0};
	Z3_ast alt = pass_ck_po(k, a, b);
	ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
	/* Fork and join around ave.warp_specialize. */
	CkRole *kr = &k->roles[0];
	if ((a->role == kr && b->role != kr && kr->ws_seg >= 0 && a->seg < kr->ws_seg) ||
	    (b->role == kr && a->role != kr && kr->ws_seg >= 0 && b->seg > kr->ws_seg)) {
		alt = Z3_mk_true(S->z);
		ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
	}
	for (int s = 0; s < k->sites.len; s++) {
		CkSite *c = IR_VEC_AT(k->sites, CkSite *, s);
		CkInst ci;
		Z3_ast ok;
		if (c->role != a->role)
			continue;
		if (c->kind == CK_BARRIER && a->role == b->role && a->role->nrep > 1 &&
		    first_after(k, c, a, &ci, &ok)) {
			/* A role barrier: every replica passes the same instance. */
			CkPoint bp = pass_ck_point(&ci);
			bp.r = b->r;
			alt = pass_ck_and2(S, ok, pass_ck_po(k, &bp, b));
			ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
		}
		if (depth <= 0 || (c->kind != CK_ARRIVE && c->kind != CK_EXPECT) || !c->group ||
		    !first_after(k, c, a, &ci, &ok))
			continue;
		Z3_ast i = pass_ck_bar_index(k, &ci), n = pass_ck_phase(k, &ci);
		alt = pass_ck_and2(S, ok, hb_phase(k, c->bar, i, n, b, depth));
		ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
	}
	Z3_ast res = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
	ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
	return res;
}

Z3_ast
pass_ck_hb(Ck *k, const CkPoint *a, const CkPoint *b)
{
	if (!a->role || !b->role || b->landing)
		return Z3_mk_false(S->z);
	if (a->when) {
		CkPoint a2 = *a;
		a2.when = NULL;
		return pass_ck_and2(S, a->when, pass_ck_hb(k, &a2, b));
	}
	if (a->landing) {
		const CkInst *c = a->landing;
		if (!c->site->group)
			return Z3_mk_false(S->z);
		return hb_phase(k, c->site->bar, pass_ck_bar_index(k, c), pass_ck_phase(k, c), b,
		                k->hops);
	}
	return hb_point(k, a, b, k->hops);
}
