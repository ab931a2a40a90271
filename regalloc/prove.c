/* prove.c — the register plan checked by Z3 (SPEC 5.10): the allocation's slots and live intervals
 * and the budgets become integer facts, and each property is asked as its negation over a free
 * program point; a model is a counterexample naming the classes and the point. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <z3.h>

#include "../check/check.h"
#include "regalloc.h"

typedef struct Z {
	Z3_context z;
	RaPlan *p;
	Z3_ast *slot, *size, *budget; /* per class; budget per group */
	Z3_ast *live;                 /* per class: a formula in h, its live half-points */
	Z3_ast h;                     /* the program point (half-point) */
} Z;

static Z3_ast
num(Z *s, int64_t v)
{
	return Z3_mk_int64(s->z, v, Z3_mk_int_sort(s->z));
}

static Z3_ast
var(Z *s, const char *fmt, int i)
{
	char name[64];
	snprintf(name, sizeof name, fmt, i);
	return Z3_mk_const(s->z, Z3_mk_string_symbol(s->z, name), Z3_mk_int_sort(s->z));
}

static Z3_ast
and2(Z *s, Z3_ast a, Z3_ast b)
{
	Z3_ast x[2] = {a, b};
	return Z3_mk_and(s->z, 2, x);
}

static Z3_ast
le(Z *s, Z3_ast a, Z3_ast b)
{
	return Z3_mk_le(s->z, a, b);
}

static Z3_ast
lt(Z *s, Z3_ast a, Z3_ast b)
{
	return Z3_mk_lt(s->z, a, b);
}

static Z3_ast
add(Z *s, Z3_ast a, Z3_ast b)
{
	Z3_ast x[2] = {a, b};
	return Z3_mk_add(s->z, 2, x);
}

/* Class k is live at h: h lies in one of the runs of half-points where the plan has it live. */
static Z3_ast
live(Z *s, int k)
{
	return s->live[k];
}

static Z3_ast
live_formula(Z *s, int k)
{
	RaPlan *p = s->p;
	IrVec runs = {0};
	int nh = 2 * p->npoint;
	for (int h = 0; h < nh; h++) {
		if (!ra_class_live(p, k, h) || (h > 0 && ra_class_live(p, k, h - 1)))
			continue;
		int e = h;
		while (e + 1 < nh && ra_class_live(p, k, e + 1))
			e++;
		Z3_ast r = and2(s, le(s, num(s, h), s->h), le(s, s->h, num(s, e)));
		ir_vec_push(p->c->al, &runs, &r, sizeof r);
	}
	Z3_ast f = runs.len ? Z3_mk_or(s->z, (unsigned)runs.len, runs.data) : Z3_mk_false(s->z);
	ir_vec_free(p->c->al, &runs, sizeof(Z3_ast));
	return f;
}

/* A solver holding the plan's facts: each class's slot, size and interval, each group's budget. */
static Z3_solver
facts(Z *s)
{
	RaPlan *p = s->p;
	Z3_solver sv = Z3_mk_simple_solver(s->z);
	Z3_solver_inc_ref(s->z, sv);
	for (int k = 0; k < p->nclass; k++) {
		Z3_solver_assert(s->z, sv, Z3_mk_eq(s->z, s->slot[k], num(s, p->cls[k].slot)));
		Z3_solver_assert(s->z, sv, Z3_mk_eq(s->z, s->size[k], num(s, p->cls[k].regs)));
	}
	for (int g = 0; g < p->ngroup; g++)
		Z3_solver_assert(s->z, sv,
		                 Z3_mk_eq(s->z, s->budget[g], num(s, p->group[g].budget)));
	Z3_solver_assert(s->z, sv, le(s, num(s, 0), s->h));
	Z3_solver_assert(s->z, sv, lt(s, s->h, num(s, 2 * (int64_t)p->npoint)));
	return sv;
}

/* Checks `bad` with the facts. SAT: returns the model (the caller releases it); UNSAT: NULL
 * with *unknown false. */
static Z3_model
refute(Z *s, Z3_ast bad, bool *unknown)
{
	Z3_solver sv = facts(s);
	Z3_solver_assert(s->z, sv, bad);
	Z3_lbool r = Z3_solver_check(s->z, sv);
	Z3_model m = NULL;
	*unknown = r == Z3_L_UNDEF;
	if (r == Z3_L_TRUE) {
		m = Z3_solver_get_model(s->z, sv);
		Z3_model_inc_ref(s->z, m);
	}
	Z3_solver_dec_ref(s->z, sv);
	return m;
}

static bool
holds(Z *s, Z3_model m, Z3_ast e)
{
	Z3_ast v;
	return Z3_model_eval(s->z, m, e, true, &v) && Z3_get_bool_value(s->z, v) == Z3_L_TRUE;
}

static int64_t
value(Z *s, Z3_model m, Z3_ast e)
{
	Z3_ast v;
	int64_t out = -1;
	if (Z3_model_eval(s->z, m, e, true, &v))
		Z3_get_numeral_int64(s->z, v, &out);
	return out;
}

static void
fail(RaCex *cex, RaFail f, int group, int a, int b, int half, const char *fmt, ...)
{
	cex->fail = f;
	cex->group = group;
	cex->a = a;
	cex->b = b;
	cex->half = half;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cex->what, sizeof cex->what, fmt, ap);
	va_end(ap);
}

/* Refutes the disjunction of `terms` (freed here) with the plan's facts: true when none can
 * hold. Else false, with *m the model, or NULL after an undecided query, which is reported as
 * the solver giving no answer on `what`. */
static bool
refute_any(Z *s, IrVec *terms, const char *what, RaCex *cex, Z3_model *m)
{
	bool unknown = false;
	*m = terms->len ? refute(s, Z3_mk_or(s->z, (unsigned)terms->len, terms->data), &unknown)
	                : NULL;
	ir_vec_free(s->p->c->al, terms, sizeof(Z3_ast));
	if (unknown)
		fail(cex, RA_FAIL_UNKNOWN, -1, -1, -1, -1, "the solver gave no answer on %s", what);
	return !unknown && !*m;
}

static const char *
cname(RaPlan *p, int k)
{
	IrValue *v = p->tile[p->cls[k].rep].v;
	return v->name ? v->name : "<unnamed>";
}

/* No two classes of a group live at one point share a slot. */
static bool
no_overlap(Z *s, RaCex *cex)
{
	RaPlan *p = s->p;
	IrVec terms = {0};
	for (int i = 0; i < p->nclass; i++)
		for (int j = i + 1; j < p->nclass; j++) {
			if (p->cls[i].group != p->cls[j].group)
				continue;
			Z3_ast x[6] = {live(s, i),
			               live(s, j),
			               lt(s, s->slot[i], add(s, s->slot[j], s->size[j])),
			               lt(s, s->slot[j], add(s, s->slot[i], s->size[i])),
			               lt(s, num(s, 0), s->size[i]),
			               lt(s, num(s, 0), s->size[j])};
			Z3_ast t = Z3_mk_and(s->z, 6, x);
			ir_vec_push(p->c->al, &terms, &t, sizeof t);
		}
	Z3_model m;
	if (refute_any(s, &terms, "overlaps", cex, &m))
		return true;
	if (!m)
		return false;
	int h = (int)value(s, m, s->h);
	for (int i = 0; i < p->nclass && cex->fail == RA_OK; i++)
		for (int j = i + 1; j < p->nclass && cex->fail == RA_OK; j++)
			if (p->cls[i].group == p->cls[j].group && holds(s, m, live(s, i)) &&
			    holds(s, m, live(s, j)) && p->cls[i].regs && p->cls[j].regs &&
			    p->cls[i].slot < p->cls[j].slot + p->cls[j].regs &&
			    p->cls[j].slot < p->cls[i].slot + p->cls[i].regs)
				fail(cex, RA_FAIL_OVERLAP, p->cls[i].group, i, j, h,
				     "'%%%s' (slots %d to %d) and '%%%s' (slots %d to %d) are both "
				     "live "
				     "and share registers",
				     cname(p, i), p->cls[i].slot,
				     p->cls[i].slot + p->cls[i].regs - 1, cname(p, j),
				     p->cls[j].slot, p->cls[j].slot + p->cls[j].regs - 1);
	Z3_model_dec_ref(s->z, m);
	return false;
}

/* Every class lies in [0, its group's budget). */
static bool
in_range(Z *s, RaCex *cex)
{
	RaPlan *p = s->p;
	IrVec terms = {0};
	for (int k = 0; k < p->nclass; k++) {
		if (!p->cls[k].regs)
			continue;
		Z3_ast x[2] = {lt(s, s->slot[k], num(s, 0)),
		               lt(s, s->budget[p->cls[k].group], add(s, s->slot[k], s->size[k]))};
		Z3_ast t = Z3_mk_or(s->z, 2, x);
		ir_vec_push(p->c->al, &terms, &t, sizeof t);
	}
	Z3_model m;
	if (refute_any(s, &terms, "slot ranges", cex, &m))
		return true;
	if (!m)
		return false;
	for (int k = 0; k < p->nclass && cex->fail == RA_OK; k++) {
		RaGroup *g = &p->group[p->cls[k].group];
		if (p->cls[k].regs &&
		    (p->cls[k].slot < 0 || p->cls[k].slot + p->cls[k].regs > g->budget))
			fail(cex, RA_FAIL_RANGE, p->cls[k].group, k, -1, p->cls[k].start,
			     "'%%%s' takes slots %d to %d, outside the budget of %d", cname(p, k),
			     p->cls[k].slot, p->cls[k].slot + p->cls[k].regs - 1, g->budget);
	}
	Z3_model_dec_ref(s->z, m);
	return false;
}

/* At every point, the tiles live in a group fit its budget. */
static bool
peak_fits(Z *s, RaCex *cex)
{
	RaPlan *p = s->p;
	IrVec terms = {0}, sum = {0};
	for (int g = 0; g < p->ngroup; g++) {
		sum.len = 0;
		for (int k = 0; k < p->nclass; k++)
			if (p->cls[k].group == g) {
				Z3_ast t = Z3_mk_ite(s->z, live(s, k), s->size[k], num(s, 0));
				ir_vec_push(p->c->al, &sum, &t, sizeof t);
			}
		if (!sum.len)
			continue;
		Z3_ast total = Z3_mk_add(s->z, (unsigned)sum.len, sum.data);
		Z3_ast t = lt(s, s->budget[g], total);
		ir_vec_push(p->c->al, &terms, &t, sizeof t);
	}
	ir_vec_free(p->c->al, &sum, sizeof(Z3_ast));
	Z3_model m;
	if (refute_any(s, &terms, "peaks", cex, &m))
		return true;
	if (!m)
		return false;
	int h = (int)value(s, m, s->h);
	for (int g = 0; g < p->ngroup && cex->fail == RA_OK; g++) {
		int total = 0;
		for (int k = 0; k < p->nclass; k++)
			if (p->cls[k].group == g && ra_class_live(p, k, h))
				total += p->cls[k].regs;
		if (total > p->group[g].budget)
			fail(cex, RA_FAIL_PEAK, g, -1, -1, h,
			     "the tiles live there take %d registers per thread, over the budget "
			     "of %d",
			     total, p->group[g].budget);
	}
	Z3_model_dec_ref(s->z, m);
	return false;
}

/* The target's rules for budgets. Each rule is one term of a disjunction of violations; the model
 * says which holds. */
typedef struct Rule {
	Z3_ast bad;
	int group;
	char what[160];
} Rule;

static void
rule(Z *s, IrVec *rules, Z3_ast bad, int group, const char *fmt, ...)
{
	Rule r;
	r.bad = bad;
	r.group = group;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r.what, sizeof r.what, fmt, ap);
	va_end(ap);
	ir_vec_push(s->p->c->al, rules, &r, sizeof r);
}

static Z3_ast
not_mult8(Z *s, Z3_ast b)
{
	return Z3_mk_not(s->z, Z3_mk_eq(s->z, Z3_mk_mod(s->z, b, num(s, 8)), num(s, 0)));
}

static bool
budgets_ok(Z *s, RaCex *cex)
{
	RaPlan *p = s->p;
	const TargetInfo *t = p->t;
	if (!t || !t->regfile)
		return true;
	IrVec rules = {0};
	if (t->setmaxnreg) {
		IrVec pool = {0};
		IrOp *ws = NULL;
		for (int g = 1; g <= p->ngroup; g++) {
			/* One pool per ave.warp_specialize: flush when the next group starts
			 * another. */
			if (g == p->ngroup || p->group[g].ws != ws) {
				if (pool.len) {
					Z3_ast need =
					    Z3_mk_add(s->z, (unsigned)pool.len, pool.data);
					rule(s, &rules,
					     lt(s, num(s, (int64_t)p->entry * p->threads), need),
					     -1,
					     "the role budgets need more than the %lld registers "
					     "the "
					     "launch gives (%d per thread)",
					     (long long)p->entry * p->threads, p->entry);
				}
				pool.len = 0;
				if (g == p->ngroup)
					break;
				ws = p->group[g].ws;
			}
			RaGroup *r = &p->group[g];
			Z3_ast b = s->budget[g];
			/* setmaxnreg's rules bind the budgets a role has (given or chosen); a
			 * role without one runs with the launch's registers. */
			if (r->given || r->chosen) {
				Z3_ast x[2] = {lt(s, b, num(s, 24)), lt(s, num(s, 256), b)};
				rule(s, &rules, Z3_mk_or(s->z, 2, x), g,
				     "budget %d is outside [24, 256]", r->budget);
				rule(s, &rules, not_mult8(s, b), g, "budget %d is not a multiple of 8",
				     r->budget);
			}
			/* In the pool, a role without a budget holds what the launch gives. */
			Z3_ast m[2] = {r->given || r->chosen ? b : num(s, p->entry),
			               num(s, r->threads * r->replicas)};
			Z3_ast term = Z3_mk_mul(s->z, 2, m);
			ir_vec_push(p->c->al, &pool, &term, sizeof term);
		}
		ir_vec_free(p->c->al, &pool, sizeof(Z3_ast));
	} else if (t->vendor == TARGET_VENDOR_AMD) {
		int waves = (int)((p->threads + t->warp - 1) / t->warp);
		int resident = (waves + t->simds - 1) / t->simds;
		for (int g = 0; g < p->ngroup; g++) {
			Z3_ast b = s->budget[g];
			rule(s, &rules, lt(s, num(s, 512), b), g,
			     "budget %d exceeds the 512 VGPRs and AGPRs of a lane",
			     p->group[g].budget);
			rule(s, &rules, not_mult8(s, b), g, "budget %d is not a multiple of 8",
			     p->group[g].budget);
			/* Occupancy: w waves per SIMD leave floor(512 / w) rounded down to 8 per
			 * lane (gfx942: 1:512 2:256 3:168 4:128 5:96 6:80 7:72 8:64). */
			Z3_ast m[2] = {b, num(s, resident)};
			rule(s, &rules, lt(s, num(s, t->regfile), Z3_mk_mul(s->z, 2, m)), g,
			     "budget %d leaves no room for the %d waves per SIMD of a %d-wave "
			     "workgroup",
			     p->group[g].budget, resident, waves);
			if (p->waves_per_eu) {
				Z3_ast w[2] = {num(s, p->group[g].slots), num(s, p->waves_per_eu)};
				rule(s, &rules, lt(s, num(s, t->regfile), Z3_mk_mul(s->z, 2, w)), g,
				     "%d registers per lane do not allow %d waves per SIMD",
				     p->group[g].slots, p->waves_per_eu);
			}
		}
	} else {
		for (int g = 0; g < p->ngroup; g++)
			rule(s, &rules, lt(s, num(s, t->max_regs), s->budget[g]), g,
			     "budget %d exceeds the %d registers a thread may have",
			     p->group[g].budget, t->max_regs);
	}
	IrVec terms = {0};
	for (int i = 0; i < rules.len; i++)
		ir_vec_push(p->c->al, &terms, &IR_VEC_AT(rules, Rule, i).bad, sizeof(Z3_ast));
	Z3_model m;
	bool ok = refute_any(s, &terms, "budgets", cex, &m);
	if (m) {
		for (int i = 0; i < rules.len && cex->fail == RA_OK; i++) {
			Rule *r = &IR_VEC_AT(rules, Rule, i);
			if (holds(s, m, r->bad))
				fail(cex, RA_FAIL_BUDGET, r->group, -1, -1, -1, "%s", r->what);
		}
		Z3_model_dec_ref(s->z, m);
	}
	ir_vec_free(p->c->al, &rules, sizeof(Rule));
	return ok;
}

bool
ra_prove(RaPlan *p, RaCex *cex)
{
	memset(cex, 0, sizeof *cex);
	cex->a = cex->b = cex->group = cex->half = -1;
	Z s = {0};
	s.p = p;
	/* The checker's context for this thread (made once, kept between compiles). No timeout:
	 * every variable but the point is fixed by a fact and the point is bounded, so each query
	 * is decided at once (and a timeout would start Z3's timer threads, whose locks compiles
	 * on several threads would share). */
	s.z = pass_ck_z3_acquire();
	size_t n = (size_t)p->nclass + 1, ng = (size_t)p->ngroup + 1;
	s.slot = malloc(sizeof(Z3_ast) * n);
	s.size = malloc(sizeof(Z3_ast) * n);
	s.live = malloc(sizeof(Z3_ast) * n);
	s.budget = malloc(sizeof(Z3_ast) * ng);
	for (int k = 0; k < p->nclass; k++) {
		s.slot[k] = var(&s, "slot%d", k);
		s.size[k] = var(&s, "size%d", k);
	}
	for (int g = 0; g < p->ngroup; g++)
		s.budget[g] = var(&s, "budget%d", g);
	s.h = var(&s, "point%d", 0);
	for (int k = 0; k < p->nclass; k++)
		s.live[k] = live_formula(&s, k);
	bool ok =
	    no_overlap(&s, cex) && in_range(&s, cex) && peak_fits(&s, cex) && budgets_ok(&s, cex);
	free(s.slot);
	free(s.size);
	free(s.live);
	free(s.budget);
	pass_ck_z3_release(s.z);
	p->proved = ok;
	return ok;
}

void
ra_prove_report(RaPlan *p, const RaCex *cex)
{
	IrOp *at = cex->half >= 0 ? ra_point_op(p, cex->half) : NULL;
	const char *who = cex->group >= 0 ? p->group[cex->group].name : NULL;
	bool role = cex->group >= 0 && p->group[cex->group].role;
	IrDiag *d = ir_diag_begin(
	    p->c, IR_SEV_ERROR, at ? at->loc : p->kernel->loc,
	    "register plan of kernel '@%s' is not proved%s%s%s%s: %s", p->kernel->item[0].s,
	    who ? (role ? " in role '@" : " in kernel '@") : "", who ? who : "", who ? "'" : "",
	    at ? ir_ctx_printf(p->c, " at '%s'", ir_op_name(at->code)) : "", cex->what);
	d->code = "regalloc";
	IrCex *x = ir_diag_cex(p->c, d);
	if (cex->a >= 0)
		ir_cex_var(p->c, x, "value", ir_ctx_printf(p->c, "%%%s", cname(p, cex->a)));
	if (cex->b >= 0)
		ir_cex_var(p->c, x, "other", ir_ctx_printf(p->c, "%%%s", cname(p, cex->b)));
	if (cex->half >= 0)
		ir_cex_var(p->c, x, "point", ir_ctx_printf(p->c, "%d", cex->half));
	if (who)
		x->role = who;
	ir_diag_emit(p->c, d);
}
