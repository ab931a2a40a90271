/* check_invariants_rules.c — the invariants the checker proves and how it reports a failure: tag
 * assertions (holds, eq..ge, ready), the built-in synchronization invariants (indices in range,
 * every wait completes, byte and arrival counts per phase, no arrival before the previous phase
 * completes, no unordered access to a slot, no ambiguous waiter), and symmetric-memory reads.
 * Each check is one Z3 query "can it fail?"; a model becomes a minimal counterexample. */
#include <stdlib.h>
#include <string.h>


#include "check_internal.h"

#define S (k->smt)

/* ---- small helpers ---- */

static int
line_of(const IrOp *op)
{
	return op ? (int)op->loc.line : 0;
}

static int64_t
ev(Ck *k, Z3_model m, Z3_ast t)
{
	int64_t v = 0;
	if (t)
		pass_ck_eval(S, m, t, &v);
	return v;
}

static int64_t
bar_count(Ck *k, const IrValue *bar)
{
	if (bar->kind != IR_VAL_RESULT || bar->op->code != IR_OP_MBAR_ALLOC)
		return 1;
	IrGroup *g = ir_op_group(bar->op, k->c->kw.count);
	int64_t n = 1;
	if (g)
		ir_expr_eval_const(g->item[0].e, &n);
	return n;
}

static CkSite *
site_at(Ck *k, int i)
{
	return IR_VEC_AT(k->sites, CkSite *, i);
}

/* A model minimizing the instances' iterations and replicas first, then the program ids and
 * the kernel arguments; the terms in `show` are mentioned so the model gives them values. */
static Z3_model
solve_min_with(Ck *k, Z3_ast f, CkInst **in, int n, Z3_ast *show, int nshow,
               const Z3_ast *extra, int nextra)
{
	Z3_ast obj[64];
	int no = 0;
	for (int i = 0; i < nextra && no < 16; i++)
		obj[no++] = extra[i];
	for (int i = 0; i < n && no < 40; i++) {
		for (CkEnv *e = in[i]->env; e && no < 40; e = e->parent) {
			if (e->iter && e->scope == in[i]->site->loop)
				obj[no++] = e->iter;
		}
		if (in[i]->site->role->nrep > 1)
			obj[no++] = in[i]->r;
	}
	for (int d = 0; d < 3; d++)
		if (k->pid[d])
			obj[no++] = k->pid[d];
	if (k->rank)
		obj[no++] = k->rank;
	IrBlock *kb = k->kernel->reg[0].block;
	Z3_ast fc = pass_ck_closure(S, f);
	for (int i = 0; i < kb->narg && no < 64; i++)
		if (ir_type_is_int(kb->arg[i]->type)) {
			Z3_ast a = pass_ck_value(k, k->root, kb->arg[i]);
			if (a && pass_ck_mentions(S, fc, a))
				obj[no++] = a;
		}
	Z3_ast g = f;
	for (int i = 0; i < nshow; i++)
		if (show[i])
			g = pass_ck_and2(S, g, Z3_mk_eq(S->z, show[i], show[i]));
	for (int i = 0; i < no; i++)
		g = pass_ck_and2(S, g, Z3_mk_eq(S->z, obj[i], obj[i]));
	Z3_model m = NULL;
	if (pass_ck_minimize(S, g, no, obj, &m) == CK_SAT)
		return m;
	/* Not minimized within the limits: any model of it. */
	if (pass_ck_check(S, g, &m) == CK_SAT)
		return m;
	return NULL;
}

static Z3_model
solve_min(Ck *k, Z3_ast f, CkInst **in, int n, Z3_ast *show, int nshow)
{
	return solve_min_with(k, f, in, n, show, nshow, NULL, 0);
}

/* Adds a counterexample variable unless one of that name is there already. */
static void
cex_var(Ck *k, IrCex *x, const char *name, int64_t v)
{
	for (int i = 0; i < x->nvar; i++)
		if (!strcmp(x->var[i].name, name))
			return;
	ir_cex_var(k->c, x, name, ir_ctx_printf(k->c, "%lld", (long long)v));
}

/* Counterexample variables of one instance: its loop variables and replica. */
static void
cex_inst(Ck *k, IrCex *x, Z3_model m, const CkInst *in, bool main)
{
	IrOp *loops[16];
	CkEnv *envs[16];
	int nl = 0;
	for (CkEnv *e = in->env; e && nl < 16; e = e->parent)
		if (e->scope && e->scope->code == IR_OP_FOR) {
			loops[nl] = e->scope;
			envs[nl++] = e;
		}
	const char *role = in->site->role->name;
	for (int i = nl - 1; i >= 0; i--) {
		IrValue *iv = loops[i]->reg[0].block->arg[0];
		Z3_ast t = pass_ck_value(k, envs[i], iv);
		char *name = main ? ir_ctx_printf(k->c, "%%%s", pass_ck_vname(iv))
		                  : ir_ctx_printf(k->c, "%%%s in %s", pass_ck_vname(iv), role);
		cex_var(k, x, name, ev(k, m, t));
		/* A named upper bound tells how many iterations the counterexample needs. */
		const IrExpr *ub = loops[i]->item[1].e;
		if (main && ub->kind == IR_EX_VAL) {
			IrValue *bv = ir_op_value(loops[i], ub->opnd);
			Z3_ast bt = pass_ck_value(k, envs[i]->parent, bv);
			if (bt && bv->name && !pass_ck_is_num(S, bt, &(int64_t){0}))
				cex_var(k, x, ir_ctx_printf(k->c, "%%%s", bv->name), ev(k, m, bt));
		}
	}
	if (in->site->role->nrep > 1) {
		const char *rn =
		    in->site->role->rep_val
		        ? ir_ctx_printf(k->c, "%%%s", pass_ck_vname(in->site->role->rep_val))
		        : "replica";
		char *name = main ? (char *)rn : ir_ctx_printf(k->c, "%s in %s", rn, role);
		cex_var(k, x, name, ev(k, m, in->r));
	}
}

static void
cex_globals(Ck *k, IrCex *x, Z3_model m, Z3_ast f)
{
	f = pass_ck_closure(S, f);
	for (int d = 0; d < 3; d++)
		if (k->pid[d] && k->pid_val[d] && pass_ck_mentions(S, f, k->pid[d]))
			cex_var(k, x, ir_ctx_printf(k->c, "%%%s", pass_ck_vname(k->pid_val[d])),
			        ev(k, m, k->pid[d]));
	if (k->rank && pass_ck_mentions(S, f, k->rank))
		cex_var(k, x, "rank", ev(k, m, k->rank));
	IrBlock *kb = k->kernel->reg[0].block;
	for (int i = 0; i < kb->narg; i++) {
		if (!ir_type_is_int(kb->arg[i]->type))
			continue;
		Z3_ast a = pass_ck_value(k, k->root, kb->arg[i]);
		if (a && pass_ck_mentions(S, f, a))
			cex_var(k, x, ir_ctx_printf(k->c, "%%%s", pass_ck_vname(kb->arg[i])),
			        ev(k, m, a));
	}
}

static void
cex_show(Ck *k, IrCex *x, Z3_model m, const char *name, Z3_ast t)
{
	if (t)
		cex_var(k, x, name, ev(k, m, t));
}

/* The counterexample of an instance on one rank of a world: the rank, the world size, the
 * instance's variables and the launch's values that `fail` names. */
static void
cex_rank_inst(Ck *k, IrCex *x, Z3_model m, Z3_ast rank, const CkInst *in, Z3_ast fail)
{
	cex_show(k, x, m, "rank", rank);
	cex_show(k, x, m, "world", k->world);
	cex_inst(k, x, m, in, true);
	cex_globals(k, x, m, fail);
}

static const char *
bar_str(Ck *k, Z3_model m, IrValue *bar, Z3_ast i)
{
	if (bar->type->kind == IR_TY_MBAR && bar->type->n == 1)
		return ir_ctx_printf(k->c, "%%%s", pass_ck_vname(bar));
	return ir_ctx_printf(k->c, "%%%s[%lld]", pass_ck_vname(bar), (long long)ev(k, m, i));
}

static const char *
slot_str(Ck *k, Z3_model m, IrValue *mem, Z3_ast x)
{
	if (mem->type->kind != IR_TY_RING)
		return ir_ctx_printf(k->c, "%%%s", pass_ck_vname(mem));
	return ir_ctx_printf(k->c, "%%%s[%lld]", pass_ck_vname(mem), (long long)ev(k, m, x));
}

static const char *
msg_suffix(Ck *k, IrOp *op)
{
	IrGroup *g = ir_op_group(op, k->c->kw.msg);
	if (!g || g->item[0].kind != IR_IT_STRING)
		return "";
	return ir_ctx_printf(k->c, " (\"%s\")", g->item[0].s);
}

static const char *
role_it(Ck *k, Z3_model m, const CkInst *in)
{
	const char *rep = "";
	if (in->site->role->nrep > 1)
		rep = ir_ctx_printf(k->c, " replica %lld", (long long)ev(k, m, in->r));
	if (!in->t)
		return ir_ctx_printf(k->c, "%s%s", in->site->role->name, rep);
	IrValue *iv = in->site->loop->reg[0].block->arg[0];
	CkEnv *e = in->env;
	while (e && e->scope != in->site->loop)
		e = e->parent;
	const char *tile = "";
	if (pass_ck_is_flat(in->site) && e && e->parent) {
		/* A k-loop in a tile loop: the tile too. */
		IrValue *tv = in->site->role->flat_outer->reg[0].block->arg[0];
		tile = ir_ctx_printf(k->c, " %%%s = %lld,", pass_ck_vname(tv),
		                     (long long)ev(k, m, pass_ck_value(k, e->parent, tv)));
	}
	return ir_ctx_printf(k->c, "%s%s at%s %%%s = %lld", in->site->role->name, rep, tile,
	                     pass_ck_vname(iv),
	                     (long long)ev(k, m, e ? pass_ck_value(k, e, iv) : NULL));
}

/* Emits an unknown-answer error: the checker could not decide. */
static void
undecided(Ck *k, IrOp *op, const char *what)
{
	if (!pass_ck_error_once(k, op))
		return;
	if (S->rlimit)
		ir_error(k->c, op->loc,
		         "cannot prove %s: the solver gave up (%s) within its limits of "
		         "%u ms and %u resource units per query",
		         what, S->unknown_reason ? S->unknown_reason : "unknown", S->timeout_ms,
		         S->rlimit);
	else
		ir_error(k->c, op->loc,
		         "cannot prove %s: the solver gave up (%s) within %u ms per query", what,
		         S->unknown_reason ? S->unknown_reason : "unknown", S->timeout_ms);
}

/* Runs `fail`; true when it is unsatisfiable (the property holds). On unknown, reports. */
static bool
holds_query(Ck *k, IrOp *op, Z3_ast fail, const char *what)
{
	CkRes r = pass_ck_check(S, fail, NULL);
	if (r == CK_UNKNOWN)
		undecided(k, op, what);
	return r == CK_UNSAT;
}

/* Iterative deepening over barrier hops: a check first builds its happens-before formulas with
 * at most two hops (small, fast queries) and only when that fails rebuilds them with the
 * configured maximum. attempt() runs one try; it returns true when done, with *proven telling
 * whether the property holds (an undecided query is reported here and counts as done). */
static int
shallow_hops(Ck *k)
{
	return k->max_hops < 2 ? k->max_hops : 2;
}

static bool
attempt(Ck *k, IrOp *op, Z3_ast fail, const char *what, bool *proven)
{
	CkRes r = pass_ck_check(S, fail, NULL);
	*proven = r == CK_UNSAT;
	if (r == CK_UNSAT)
		return true;
	if (k->hops < k->max_hops)
		return false;
	if (r == CK_UNKNOWN) {
		undecided(k, op, what);
		*proven = true; /* reported */
	}
	return true;
}

/* attempt() for a query about an instance whose replica r (a variable, of a role with nrep
 * replicas) chooses its slot (`by`: ping-pong's rings, one per replica): first asked once per
 * replica, r put in. The solver then sees terms such as `2 * x + r` at r = 0 as the `2 * x`
 * another role computes, where with r a variable only arithmetic joined with congruence shows
 * them equal (seconds, where the cases take tens of milliseconds). Every case unsatisfiable:
 * proved. A satisfiable case: that case, with r = q kept (*fail becomes it, for the report's
 * model). Else the query as it is. A slot that does not depend on the replica asks the query
 * as it is at once (splitting it only costs time there). */
static bool
attempt_by_replica(Ck *k, IrOp *op, Z3_ast *fail, const char *what, bool *proven, Z3_ast r,
                   int64_t nrep, Z3_ast by)
{
	int64_t v;
	Z3_ast whole = *fail;
	bool split = nrep > 1 && nrep <= 4 && r && !pass_ck_is_num(S, r, &v) &&
	             pass_ck_depends(S, by, r);
	for (int64_t q = 0; split && q < nrep; q++) {
		CkSubst sub;
		sub.n = 1;
		sub.from[0] = r;
		sub.to[0] = pass_ck_num(S, q);
		pass_ck_subst_close(S, &sub);
		/* Fast: r put in, then the side conditions of what the query mentions. A term
		 * that mentioned r loses its own, so the case is weaker than the query at r = q:
		 * its unsat proves that case. */
		CkRes res = pass_ck_check(S, pass_ck_closure_subst(S, *fail, &sub), NULL);
		if (res == CK_SAT) {
			/* Exact: every side condition first, then r put in. */
			Z3_ast fq = pass_ck_subst(S, &sub, pass_ck_closure(S, *fail));
			res = pass_ck_check(S, fq, NULL);
			if (res == CK_SAT) /* r kept, at its value, for the report's model */
				*fail = pass_ck_and2(S, fq, pass_ck_eq(S, r, sub.to[0]));
		}
		split = res == CK_UNSAT;
	}
	if (split) {
		*proven = true;
		return true;
	}
	if (*fail != whole) {
		/* The failing case, with r = q: a counterexample if it stands. Unsat there (a
		 * rewritten term's lost side condition let the case fail) decides nothing for the
		 * other replicas: the query as it is does. */
		bool done = attempt(k, op, *fail, what, proven);
		if (!done || !*proven)
			return done;
		*fail = whole;
	}
	return attempt(k, op, *fail, what, proven);
}

/* ---- regions of tensors ---- */

typedef struct Region {
	IrStr buf;
	int n;
	Z3_ast lo[IR_MAX_RANK], len[IR_MAX_RANK];
} Region;

static Region
region_of(Ck *k, CkEnv *e, IrOp *op, const IrItem *it, const IrType *tile)
{
	Region r = {it->s, 0, {0}, {0}};
	r.n = it->ncoord < IR_MAX_RANK ? it->ncoord : IR_MAX_RANK;
	for (int d = 0; d < r.n; d++) {
		r.lo[d] = pass_ck_expr(k, e, op, it->coord[d].e);
		int64_t len = it->coord[d].len >= 0 ? it->coord[d].len
		                                    : (tile && d < tile->rank ? tile->dims[d] : 1);
		r.len[d] = pass_ck_num(S, len);
	}
	return r;
}

/* A region as text, `@X[lo : len, ...]` (a tensor argument: `%X[...]`, sigil '%'), in model m. */
static char *
region_text_in(Ck *k, Z3_model m, const Region *r, char sigil)
{
	char buf[128];
	size_t n = 0;
	buf[0] = 0;
	for (int d = 0; d < r->n; d++) {
		int w = snprintf(buf + n, sizeof buf - n, "%s%lld : %lld", d ? ", " : "",
		                 (long long)ev(k, m, r->lo[d]), (long long)ev(k, m, r->len[d]));
		if (w < 0 || (size_t)w >= sizeof buf - n)
			break;
		n += (size_t)w;
	}
	return ir_ctx_printf(k->c, "%c%s[%s]", sigil, r->buf ? r->buf : "?", buf);
}

static char *
region_text(Ck *k, Z3_model m, const Region *r)
{
	return region_text_in(k, m, r, '@');
}

/* An environment for the expressions of a declaration (a chunk's, a tag function's) with its
 * first n parameters bound to the terms a[0 .. n); other values come from `parent` (NULL:
 * none). */
static CkEnv *
args_env(Ck *k, CkEnv *parent, const IrItem *decl, const Z3_ast *a, int n)
{
	CkEnv *pe = ir_arena_alloc(&k->arena, sizeof *pe);
	pe->parent = parent;
	pe->scope = NULL;
	ir_map_init(&pe->memo, k->c->al);
	ir_vec_push(k->c->al, &k->envs, &pe, sizeof pe);
	for (int i = 0; i < decl->nparam && i < n; i++)
		ir_map_put(&pe->memo, ir_hash_ptr(decl->param[i]), decl->param[i], (void *)a[i], NULL);
	return pe;
}

/* ---- labels ---- */

typedef enum LabelKind { LB_TAG, LB_NONE, LB_UNKNOWN } LabelKind;

typedef struct LabelOne {
	IrStr f;
	int n;
	Z3_ast a[8];
	CkEnv *env; /* where the arguments were evaluated */
	IrOp *user; /* the op that names the label */
} LabelOne;

/* The labels data may carry: TAG with one or more members (a compute result carries the union
 * of its operands' labels), NONE (untagged), or UNKNOWN (a source the checker does not track). */
typedef struct Label {
	LabelKind kind;
	int nm;
	LabelOne m[4];
} Label;

static Label
call_label(Ck *k, CkEnv *e, IrOp *op, const IrItem *call)
{
	Label l = {LB_TAG, 1, {{call->s, 0, {0}, e, op}}};
	l.m[0].n = call->ncoord < 8 ? call->ncoord : 8;
	for (int i = 0; i < l.m[0].n; i++)
		l.m[0].a[i] = pass_ck_expr(k, e, op, call->coord[i].e);
	return l;
}

static Label
label_union(Label a, const Label *b)
{
	if (a.kind == LB_UNKNOWN || b->kind == LB_UNKNOWN || a.nm + b->nm > 4) {
		a.kind = LB_UNKNOWN;
		return a;
	}
	for (int i = 0; i < b->nm; i++)
		a.m[a.nm++] = b->m[i];
	a.kind = a.nm ? LB_TAG : LB_NONE;
	return a;
}

/* The labels of a register value (SPEC 5.8): ave.tag sets them; compute ops carry the union of
 * their operands' labels; global loads and constants carry none. */
static Label
reg_label(Ck *k, CkEnv *e, IrValue *v, int depth)
{
	Label none = {LB_NONE, 0, {{0}}}, unknown = {LB_UNKNOWN, 0, {{0}}};
	if (depth > 64 || v->kind != IR_VAL_RESULT)
		return ir_type_is_scalar(v->type) ? none : unknown;
	IrOp *op = v->op;
	switch (op->code) {
	case IR_OP_TAG:
		return call_label(k, e, op, &op->item[1]);
	case IR_OP_LOAD:
	case IR_OP_GET:
	case IR_OP_ZEROS:
	case IR_OP_CONST:
	case IR_OP_INDEX:
	case IR_OP_PROGRAM_ID:
	case IR_OP_NUM_PROGRAMS:
	case IR_OP_CTA_ID:
	case IR_OP_NUM_CTAS:
	case IR_OP_REPLICA_ID:
	case IR_OP_RANK:
	case IR_OP_WORLD_SIZE:
		return none;
	case IR_OP_SMEM_LOAD:
	case IR_OP_FOR:
	case IR_OP_IF:
		return unknown;
	default:
		break;
	}
	if (ir_type_is_scalar(v->type))
		return none;
	/* Compute: the union over the operands (a shared-memory operand's labels are not derived
	 * here, so they make it unknown). */
	Label l = none;
	for (int i = 0; i < op->nitem && l.kind != LB_UNKNOWN; i++) {
		const IrItem *it = &op->item[i];
		if (it->kind != IR_IT_VALUE)
			continue;
		if (it->suffix || ir_type_is_smem(ir_item_value(op, it)->type)) {
			l = unknown;
			break;
		}
		Label o = reg_label(k, e, ir_item_value(op, it), depth + 1);
		l = label_union(l, &o);
	}
	return l;
}

/* The labels a write puts in its slot. */
static Label
write_label(Ck *k, const CkInst *w)
{
	Label l = {LB_NONE, 0, {{0}}};
	IrOp *op = w->site->op;
	if (op->code == IR_OP_COPY_ASYNC) {
		IrGroup *g = ir_op_group(op, k->c->kw.tag);
		if (g)
			l = call_label(k, w->env, op, &g->item[0]);
		return l;
	}
	return reg_label(k, w->env, ir_item_value(op, &op->item[0]), 0);
}

/* Does data labelled `a` hold exactly the single label `b`? */
static Z3_ast
label_eq(Ck *k, const Label *a, const Label *b)
{
	if (a->kind != LB_TAG || b->kind != LB_TAG || b->nm != 1)
		return Z3_mk_false(S->z);
	Z3_ast all[4];
	for (int j = 0; j < a->nm; j++) {
		const LabelOne *x = &a->m[j], *y = &b->m[0];
		if (x->f != y->f || x->n != y->n)
			return Z3_mk_false(S->z);
		Z3_ast c[8];
		for (int i = 0; i < x->n; i++)
			c[i] = pass_ck_eq(S, x->a[i], y->a[i]);
		all[j] = pass_ck_and(S, x->n, c);
	}
	return pass_ck_and(S, a->nm, all);
}

/* The region of the tensor label `l` stands for (its tag function's `region`), false when it
 * names none. */
static bool
label_region(Ck *k, const LabelOne *l, Region *out, IrValue **tensor)
{
	IrOp *tf = ir_symbol_lookup(k->c, l->user, l->f);
	IrGroup *rg = tf && tf->code == IR_OP_TAG_FUNC ? ir_op_group(tf, k->c->kw.region) : NULL;
	if (!rg)
		return false;
	CkEnv *pe = args_env(k, l->env, &tf->item[0], l->a, l->n);
	*out = region_of(k, pe, tf, &rg->item[0], NULL);
	*tensor = ir_item_value(tf, &rg->item[0]);
	return *tensor != NULL;
}

/* Two single labels under different names whose tag functions both name a region: the
 * regions and their tensors. */
static bool
label_regions(Ck *k, const Label *a, const Label *b, Region *ra, Region *rb, IrValue **ta,
              IrValue **tb)
{
	return a->kind == LB_TAG && b->kind == LB_TAG && a->nm == 1 && b->nm == 1 &&
	       a->m[0].f != b->m[0].f && label_region(k, &a->m[0], ra, ta) &&
	       label_region(k, &b->m[0], rb, tb);
}

/* Regions label_match compares element by element: in one tensor, of rank 1 or 2. */
static bool
comparable(const Region *ra, const Region *rb, const IrValue *ta, const IrValue *tb)
{
	return ta == tb && ra->n == rb->n && ra->n <= 2;
}

/* Does the data a write `w` labelled `a` put where reader `r` looks stand for `b`? Under one
 * name: the arguments agree (label_eq). Under two names whose tag functions both name a region
 * of the same tensor (a slice of a slot asserted to hold a part of the slot's tile): each
 * element the reader sees is the tensor element `b`'s region puts there, and the reader's view
 * is as long as that region. */
static Z3_ast
label_match(Ck *k, const Label *a, const CkInst *w, const Label *b, const CkInst *r)
{
	Region ra, rb;
	IrValue *ta, *tb;
	if (r && label_regions(k, a, b, &ra, &rb, &ta, &tb) && comparable(&ra, &rb, ta, tb)) {
		Z3_ast c[4];
		for (int d = 0; d < ra.n; d++) {
			Z3_ast wl, wn, rl, rn;
			pass_ck_span(k, w, d, &wl, &wn);
			pass_ck_span(k, r, d, &rl, &rn);
			c[2 * d] = pass_ck_eq(S, pass_ck_sub(S, ra.lo[d], wl),
			                      pass_ck_sub(S, rb.lo[d], rl));
			c[2 * d + 1] = pass_ck_eq(S, rn, rb.len[d]);
		}
		return pass_ck_and(S, 2 * ra.n, c);
	}
	return label_eq(k, a, b);
}

static const char *
label_str(Ck *k, Z3_model m, const Label *l)
{
	if (l->kind == LB_NONE)
		return "untagged data";
	if (l->kind == LB_UNKNOWN)
		return "data with labels the checker does not track";
	char buf[512];
	int n = l->nm > 1 ? snprintf(buf, sizeof buf, "a mix of ") : 0;
	buf[n] = 0;
	for (int j = 0; j < l->nm && n < (int)sizeof buf - 64; j++) {
		n += snprintf(buf + n, sizeof buf - (size_t)n, "%s@%s(", j ? " and " : "", l->m[j].f);
		for (int i = 0; i < l->m[j].n && n < (int)sizeof buf - 32; i++)
			n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", i ? ", " : "",
				      (long long)ev(k, m, l->m[j].a[i]));
		n += snprintf(buf + n, sizeof buf - (size_t)n, ")");
	}
	return ir_ctx_strdup(k->c, buf);
}

/* ---- instances relative to a point ---- */

/* The last instance of site u (in the point's role and replica) before point p. */
static bool
last_before(Ck *k, CkSite *u, const CkPoint *p, CkInst *out, Z3_ast *ok)
{
	if (u->role != p->role || u->cond || u->nested)
		return false;
	if (u->seg < p->seg) {
		if (!u->loop) {
			*out = pass_ck_inst_at(k, u, p->r, NULL);
			*ok = Z3_mk_true(S->z);
			return true;
		}
		/* The last iteration: t with t + 1 not an iteration (-1 when there is none). */
		Z3_ast t = pass_ck_fresh(S, "tl");
		*out = pass_ck_inst_at(k, u, p->r, t);
		CkInst nx = pass_ck_inst_at(k, u, p->r, pass_ck_add(S, t, pass_ck_num(S, 1)));
		CkInst first = pass_ck_inst_at(k, u, p->r, pass_ck_num(S, 0));
		Z3_ast ex = pass_ck_inst_exists(k, out);
		pass_ck_side(
		    S, t,
		    pass_ck_or2(S, pass_ck_and2(S, ex, pass_ck_not(S, pass_ck_inst_exists(k, &nx))),
		                pass_ck_and2(S, pass_ck_not(S, pass_ck_inst_exists(k, &first)),
		                             pass_ck_eq(S, t, pass_ck_num(S, -1)))));
		*ok = ex;
		return true;
	}
	if (u->seg == p->seg && u->loop && p->t && u->loop == p->loop) {
		Z3_ast t = u->pos < p->pos ? p->t : pass_ck_sub(S, p->t, pass_ck_num(S, 1));
		*out = pass_ck_inst_at(k, u, p->r, t);
		*ok = pass_ck_inst_exists(k, out);
		return true;
	}
	return false;
}

static CkPoint
landing_point(const CkInst *w)
{
	CkPoint p = pass_ck_point(w);
	if (w->site->kind == CK_COPY)
		p.landing = w;
	return p;
}

/* The value an expression of op reads when it is a single operand, else NULL. */
static IrValue *
expr_value(IrOp *op, const IrExpr *e)
{
	return e && e->kind == IR_EX_VAL ? ir_op_value(op, e->opnd) : NULL;
}

/* The value a barrier or slot index (`%b[%s]`) reads when it is a single operand, else NULL. */
static IrValue *
index_value(IrOp *op, const IrItem *it)
{
	return op && it && it->suffix && it->ncoord > 0 ? expr_value(op, it->coord[0].e) : NULL;
}

/* ---- the checks ---- */

static void
check_ranges(Ck *k)
{
	/* One query for every index of the kernel; only when it fails, one per index. */
	IrVec outs = {0}, ins = {0}, bars = {0};
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *s = site_at(k, i);
		for (int which = 0; which < 2; which++) {
			bool bar = which == 0;
			if (bar ? !(s->bar && s->bar_it && s->bar_it->suffix)
			        : !(s->mem && s->slot_it && s->mem->type->kind == IR_TY_RING))
				continue;
			int64_t n = bar ? s->bar->type->n : s->mem->type->n;
			CkInst *in = ir_arena_alloc(&k->arena, sizeof *in);
			*in = pass_ck_inst(k, s, "t");
			Z3_ast x = bar ? pass_ck_bar_index(k, in) : pass_ck_slot(k, in);
			Z3_ast out = pass_ck_or2(S, pass_ck_lt(S, x, pass_ck_num(S, 0)),
			                         pass_ck_le(S, pass_ck_num(S, n), x));
			ir_vec_push(k->c->al, &outs, &out, sizeof out);
			ir_vec_push(k->c->al, &ins, &in, sizeof in);
			ir_vec_push(k->c->al, &bars, &bar, sizeof bar);
		}
	}
	Z3_ast any = pass_ck_or(S, outs.len, (Z3_ast *)outs.data);
	if (pass_ck_check(S, any, NULL) != CK_UNSAT) {
		for (int j = 0; j < outs.len; j++) {
			CkInst *in = IR_VEC_AT(ins, CkInst *, j);
			CkSite *s = in->site;
			Z3_ast out = IR_VEC_AT(outs, Z3_ast, j);
			bool bar = IR_VEC_AT(bars, bool, j);
			int64_t n = bar ? s->bar->type->n : s->mem->type->n;
			Z3_ast x = bar ? pass_ck_bar_index(k, in) : pass_ck_slot(k, in);
			if (holds_query(k, s->op, out, "that the index is in range"))
				continue;
			if (!pass_ck_error_once(k, s->op))
				continue;
			CkInst *ins1[1] = {in};
			Z3_model m = solve_min(k, out, ins1, 1, &x, 1);
			IrDiag *d =
			    ir_diag_begin(k->c, IR_SEV_ERROR, s->op->loc,
			                  "%s index of '%%%s' may be out of range [0, %lld)",
			                  bar ? "barrier" : "slot",
			                  pass_ck_vname(bar ? s->bar : s->mem), (long long)n);
			IrCex *cx = ir_diag_cex(k->c, d);
			cex_inst(k, cx, m, in, true);
			cex_globals(k, cx, m, out);
			cx->role = s->role->name;
			cx->found = ir_ctx_printf(k->c, "index %lld", (long long)ev(k, m, x));
			cx->expected = ir_ctx_printf(k->c, "an index in [0, %lld)", (long long)n);
			IrValue *iv = bar ? index_value(s->op, s->bar_it)
			                  : index_value(s->slot_op, s->slot_it);
			if (iv && iv->kind == IR_VAL_RESULT && line_of(iv->op) != line_of(s->op))
				ir_diag_note(k->c, d, iv->op->loc, "the index '%%%s' is computed here",
				             pass_ck_vname(iv));
			ir_diag_emit(k->c, d);
			pass_ck_model_free(S, m);
			k->broken = true;
		}
	}
	ir_vec_free(k->c->al, &outs, sizeof(Z3_ast));
	ir_vec_free(k->c->al, &ins, sizeof(CkInst *));
	ir_vec_free(k->c->al, &bars, sizeof(bool));
}

/* Per phase n of bar[i]: arrivals, bytes expected by expect_tx and bytes the copies deliver. */
static void
phase_totals(Ck *k, IrValue *bar, Z3_ast i, Z3_ast n, Z3_ast *arr, Z3_ast *exp, Z3_ast *cp)
{
	*arr = *exp = *cp = pass_ck_num(S, 0);
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (g->bar != bar)
			continue;
		for (int64_t q = 0; q < g->role->nrep; q++) {
			Z3_ast ok, r = pass_ck_num(S, q);
			Z3_ast u = pass_ck_group_iter(k, g, r, i, n, &ok);
			Z3_ast zero = pass_ck_num(S, 0);
			bool plain = !g->shift;
			if (plain) {
				*arr = pass_ck_add(
				    S, *arr, pass_ck_ite(S, ok, pass_ck_num(S, g->arrivals), zero));
				*cp = pass_ck_add(
				    S, *cp, pass_ck_ite(S, ok, pass_ck_num(S, g->copy_bytes), zero));
			}
			for (int s = 0; s < g->nsite; s++) {
				CkSite *c = g->site[s];
				if (plain && c->kind != CK_EXPECT)
					continue;
				Z3_ast oks;
				CkInst in = pass_ck_group_site(k, c, r, u, &oks);
				oks = pass_ck_and2(S, ok, oks);
				if (c->kind == CK_EXPECT)
					*exp = pass_ck_add(S, *exp,
					                   pass_ck_ite(S, oks, pass_ck_bytes(k, &in), zero));
				else if (c->kind == CK_COPY)
					*cp = pass_ck_add(S, *cp,
					                  pass_ck_ite(S, oks, pass_ck_num(S, c->bytes), zero));
				else
					*arr = pass_ck_add(S, *arr,
					                   pass_ck_ite(S, oks, pass_ck_num(S, c->count), zero));
			}
		}
	}
}

/* Where a wait's barrier index and parity come from, with their values in the model: a note at
 * the op computing the index (`%s = ave.index %k mod 4`), at the loop whose iter_args start
 * the parity and at the op that changes it each iteration (`ave.phase.next`), and at the index
 * of the arrivals on that barrier array from other roles. The op most likely wrong is one of
 * these (a slot or parity mutated there shows at the wait). */
static void
provenance_notes(Ck *k, IrDiag *d, Z3_model m, const CkInst *w)
{
	CkSite *ws = w->site;
	IrOp *op = ws->op;
	int line = line_of(op);
	IrValue *iv = index_value(op, ws->bar_it);
	int64_t v;
	if (iv && iv->kind == IR_VAL_RESULT && line_of(iv->op) != line &&
	    pass_ck_eval(S, m, pass_ck_value(k, w->env, iv), &v))
		ir_diag_note(k->c, d, iv->op->loc, "the wait's barrier index '%%%s' is %lld here",
		             pass_ck_vname(iv), (long long)v);
	IrGroup *pg = ir_op_group(op, k->c->kw.parity);
	IrValue *pv = pg ? expr_value(op, pg->item[0].e) : NULL;
	if (pv && pv->kind == IR_VAL_ARG) {
		IrBlock *body = pv->block;
		IrOp *loop = ir_block_parent_op(body);
		int ai = pv->index;
		if (loop && loop->code == IR_OP_FOR && ai > 0) {
			bool known = pass_ck_eval(S, m, pass_ck_value(k, w->env, pv), &v);
			v = ir_mod(v, 2); /* an i1: its value modulo 2 */
			ir_diag_note(k->c, d, loop->loc,
			             known ? "the wait's parity '%%%s' (%lld here) starts in this loop's "
			                     "iter_args"
			                   : "the wait's parity '%%%s' starts in this loop's iter_args",
			             pass_ck_vname(pv), (long long)(known ? v : 0));
			IrOp *y = body->last;
			IrValue *nx = y && y->code == IR_OP_YIELD && ai - 1 < y->nitem
			                  ? ir_item_value(y, &y->item[ai - 1])
			                  : NULL;
			if (nx && nx->kind == IR_VAL_RESULT && nx->op->parent == body)
				ir_diag_note(k->c, d, nx->op->loc,
				             "and becomes '%%%s' here for the next iteration",
				             pass_ck_vname(nx));
		}
	} else if (pv && pv->kind == IR_VAL_RESULT && line_of(pv->op) != line &&
	           pass_ck_eval(S, m, pass_ck_value(k, w->env, pv), &v)) {
		v = ir_mod(v, 2);
		ir_diag_note(k->c, d, pv->op->loc, "the wait's parity '%%%s' is %lld here",
		             pass_ck_vname(pv), (long long)v);
	}
	/* The index the other roles' arrivals on that array name. */
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (g->bar != ws->bar || g->role == ws->role || !g->nsite)
			continue;
		CkSite *a = g->site[0];
		IrValue *av = index_value(a->op, a->bar_it);
		if (av && av->kind == IR_VAL_RESULT && line_of(av->op) != line_of(a->op))
			ir_diag_note(k->c, d, av->op->loc,
			             "%s's arrivals on '%%%s' (line %d) name the barrier '%%%s' computed "
			             "here",
			             g->role->name, pass_ck_vname(ws->bar), line_of(a->op),
			             pass_ck_vname(av));
		else if (!av)
			ir_diag_note(k->c, d, a->op->loc,
			             "%s's arrivals on '%%%s' name their barrier here", g->role->name,
			             pass_ck_vname(ws->bar));
		break;
	}
}

/* The wait instance needs a phase that never gets its arrivals or bytes. */
static Z3_ast
wait_dead(Ck *k, const CkInst *u)
{
	Z3_ast i = pass_ck_bar_index(k, u), g = pass_ck_wait_g(k, u);
	Z3_ast arr, exp, cp;
	phase_totals(k, u->site->bar, i, pass_ck_sub(S, g, pass_ck_num(S, 1)), &arr, &exp, &cp);
	Z3_ast shortage =
	    pass_ck_or2(S, pass_ck_lt(S, arr, pass_ck_num(S, bar_count(k, u->site->bar))),
	                pass_ck_lt(S, cp, exp));
	return pass_ck_and2(S, pass_ck_wait_advances(k, u), shortage);
}

/* The instance can run: the last instance of each wait before it in its thread returns (a
 * wait that never returns makes what follows it unreachable). */
static Z3_ast
live(Ck *k, const CkInst *v)
{
	CkPoint p = pass_ck_point(v);
	IrVec parts = {0};
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *u = site_at(k, i);
		CkInst U;
		Z3_ast ok;
		if (u->kind != CK_WAIT || !u->may_block || !last_before(k, u, &p, &U, &ok))
			continue;
		Z3_ast alive = pass_ck_not(S, pass_ck_and2(S, ok, wait_dead(k, &U)));
		ir_vec_push(k->c->al, &parts, &alive, sizeof alive);
	}
	Z3_ast res = pass_ck_and(S, parts.len, (Z3_ast *)parts.data);
	ir_vec_free(k->c->al, &parts, sizeof(Z3_ast));
	return res;
}

static const char *
contributors(Ck *k, IrValue *bar)
{
	char buf[512];
	int n = 0;
	buf[0] = 0;
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (g->bar != bar || !g->arrivals)
			continue;
		/* Replicas whose index names their own barrier (per-replica rings, turns) each
		 * arrive on another one. */
		CkInst in = pass_ck_inst(k, g->site[0], "t");
		bool own = g->role->nrep > 1 && pass_ck_depends(S, pass_ck_bar_index(k, &in), in.r);
		n += snprintf(buf + n, sizeof buf - (size_t)n,
		              own ? "%s%s: %lld per replica, on the barrier its index names (%lld "
		                    "replicas)"
		                  : "%s%s: %lld per replica x %lld",
		              n ? "; " : "", g->role->name, (long long)g->arrivals,
		              (long long)g->role->nrep);
		if (n >= (int)sizeof buf - 64)
			break;
	}
	return n ? ir_ctx_strdup(k->c, buf) : "no arrivals at all";
}

/* A phase short of arrivals because a contributing loop stops before the use that phase
 * needs: notes at that loop and at the waiting one, with their trip counts in the model (a
 * producer and a consumer whose loops do not run alike: the cause is one of the two bounds). */
static void
trip_notes(Ck *k, IrDiag *d, Z3_model m, const CkInst *w, Z3_ast i, Z3_ast n)
{
	CkSite *ws = w->site;
	Z3_ast tw = pass_ck_site_trip(k, ws, w->r);
	int64_t nw = 0;
	bool known_w = tw && pass_ck_eval(S, m, tw, &nw);
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (g->bar != ws->bar || !g->loop || g->role == ws->role)
			continue;
		CkSite *s0 = g->site[0];
		Z3_ast r = pass_ck_num(S, 0), ok;
		Z3_ast u = pass_ck_group_iter(k, g, r, i, n, &ok);
		Z3_ast tg = pass_ck_site_trip(k, s0, r);
		int64_t uv, ng, rho;
		if (!u || !tg || !pass_ck_eval(S, m, u, &uv) || !pass_ck_eval(S, m, tg, &ng) ||
		    uv < ng || uv < 0)
			continue;
		/* The use would be iteration uv of the group's loop (when the barrier is one the
		 * loop names at all: its residue within the period). */
		if (!pass_ck_eval(S, m, pass_ck_sub(S, u, pass_ck_mulc(S, n, g->period)), &rho) ||
		    rho >= g->period)
			continue;
		ir_diag_note(k->c, d, g->loop->loc,
		             "%s would arrive on '%%%s' for that phase in iteration %lld of this "
		             "loop, but the loop runs %lld iteration%s here (it never gets there)",
		             g->role->name, pass_ck_vname(ws->bar), (long long)uv, (long long)ng,
		             ng == 1 ? "" : "s");
		/* Where its bound comes from, when the kernel computes it on a line of its own. */
		const IrExpr *ub = g->loop->item[1].e;
		IrValue *bv = ub->kind == IR_EX_VAL ? ir_op_value(g->loop, ub->opnd) : NULL;
		int64_t bval;
		if (bv && bv->kind == IR_VAL_RESULT && line_of(bv->op) != line_of(g->loop) &&
		    bv->op->parent == k->kernel->reg[0].block &&
		    pass_ck_eval(S, m, pass_ck_value(k, k->root, bv), &bval))
			ir_diag_note(k->c, d, bv->op->loc, "the loop's bound '%%%s' is %lld here",
			             pass_ck_vname(bv), (long long)bval);
		if (known_w && ws->loop && nw != ng)
			ir_diag_note(k->c, d, ws->loop->loc,
			             "while the waiting loop of %s runs %lld iteration%s: one of the "
			             "two bounds is wrong",
			             ws->role->name, (long long)nw, nw == 1 ? "" : "s");
		return;
	}
}

/* Every wait that waits returns: the phase it needs gets its arrivals and its bytes. */
static void
check_waits_complete(Ck *k)
{
	for (int si = 0; si < k->sites.len; si++) {
		CkSite *w = site_at(k, si);
		if (w->kind != CK_WAIT)
			continue;
		CkInst in = pass_ck_inst(k, w, "t");
		Z3_ast i = pass_ck_bar_index(k, &in), g = pass_ck_wait_g(k, &in);
		Z3_ast n = pass_ck_sub(S, g, pass_ck_num(S, 1));
		Z3_ast arr, exp, cp;
		phase_totals(k, w->bar, i, n, &arr, &exp, &cp);
		int64_t cnt = bar_count(k, w->bar);
		Z3_ast shortage =
		    pass_ck_or2(S, pass_ck_lt(S, arr, pass_ck_num(S, cnt)), pass_ck_lt(S, cp, exp));
		Z3_ast fail = pass_ck_and2(S, pass_ck_wait_advances(k, &in), shortage);
		if (holds_query(k, w->op, fail, "that this wait returns"))
			continue;
		w->may_block = true;
		if (!pass_ck_error_once(k, w->op))
			continue;
		CkInst *ins[1] = {&in};
		Z3_ast show[5] = {i, g, arr, exp, cp};
		Z3_model m = solve_min(k, fail, ins, 1, show, 5);
		int64_t a = ev(k, m, arr), e = ev(k, m, exp), c = ev(k, m, cp);
		const char *b = bar_str(k, m, w->bar, i);
		IrDiag *d;
		if (a < cnt)
			d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, w->op->loc,
			    "this wait can never return: phase %lld of %s gets %lld arrival%s but "
			    "the barrier counts %lld",
			    (long long)(ev(k, m, g) - 1), b, (long long)a, a == 1 ? "" : "s",
			    (long long)cnt);
		else
			d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, w->op->loc,
			    "this wait can never return: phase %lld of %s expects %lld bytes but "
			    "the copies deliver %lld",
			    (long long)(ev(k, m, g) - 1), b, (long long)e, (long long)c);
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_inst(k, cx, m, &in, true);
		cex_globals(k, cx, m, fail);
		cex_show(k, cx, m, "phase", n);
		cx->role = w->role->name;
		cx->found = a < cnt ? ir_ctx_printf(k->c, "%lld arrivals (%s)", (long long)a,
		                                    contributors(k, w->bar))
		                    : ir_ctx_printf(k->c, "%lld bytes from copies", (long long)c);
		cx->expected = a < cnt ? ir_ctx_printf(k->c, "%lld arrivals", (long long)cnt)
		                       : ir_ctx_printf(k->c, "%lld bytes", (long long)e);
		ir_diag_note(k->c, d, w->bar->op->loc, "'%%%s' is allocated here with count(%lld)",
		             pass_ck_vname(w->bar), (long long)cnt);
		if (a < cnt)
			trip_notes(k, d, m, &in, i, n);
		provenance_notes(k, d, m, &in);
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* Phases of bar[i] every waiting role (every replica, up to 8) has seen complete by its end. */
static Z3_ast
in_flight_from(Ck *k, IrValue *bar, Z3_ast i, Z3_ast n)
{
	IrVec parts = {0};
	for (int ri = 0; ri < k->sites.len; ri++) {
		CkSite *w = site_at(k, ri);
		bool first = w->kind == CK_WAIT && w->bar == bar;
		for (int o = 0; o < ri && first; o++)
			first = !(site_at(k, o)->kind == CK_WAIT && site_at(k, o)->bar == bar &&
			          site_at(k, o)->role == w->role);
		if (!first)
			continue;
		for (int64_t q = 0; q < w->role->nrep && q < CK_MAX_REPLICAS; q++) {
			Z3_ast g =
			    pass_ck_waited_before(k, w->role, bar, NULL, pass_ck_num(S, q), i);
			Z3_ast ge = pass_ck_le(S, g, n);
			ir_vec_push(k->c->al, &parts, &ge, sizeof ge);
		}
	}
	Z3_ast res = pass_ck_and(S, parts.len, (Z3_ast *)parts.data);
	ir_vec_free(k->c->al, &parts, sizeof(Z3_ast));
	return res;
}

/* Nothing is in flight when the kernel exits: every phase of a barrier that copies land on is
 * waited for by some thread (a CTA whose threads have all exited may not have copies into its
 * shared memory outstanding). A role that waits on the array after its loop (a drain) makes a
 * copy left in flight an error; without a drain it is a warning. */
static void
check_in_flight_at_exit(Ck *k)
{
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (!g->copy_bytes)
			continue;
		bool done = false, drain = false;
		for (int o = 0; o < gi && !done; o++)
			done = IR_VEC_AT(k->groups, CkGroup *, o)->bar == g->bar &&
			       IR_VEC_AT(k->groups, CkGroup *, o)->copy_bytes;
		if (done)
			continue;
		for (int si = 0; si < k->sites.len; si++) {
			CkSite *w = site_at(k, si);
			drain |= w->kind == CK_WAIT && w->bar == g->bar && !w->loop &&
			         w->role->sync_loop && w->seg > w->role->sync_seg;
		}
		Z3_ast n = pass_ck_fresh(S, "n");
		int64_t size = g->bar->type->kind == IR_TY_MBAR ? g->bar->type->n : 1;
		CkSite *at = g->site[0];
		for (int s = 0; s < g->nsite; s++)
			if (g->site[s]->kind == CK_COPY) {
				at = g->site[s];
				break;
			}
		/* One query per barrier of the array (a constant index keeps them small). */
		Z3_ast fails[64], i = NULL, fail = NULL;
		int nb = size < 64 ? (int)size : 64;
		bool unknown = false;
		for (int b = 0; b < nb; b++) {
			Z3_ast bi = pass_ck_num(S, b);
			IrVec alts = {0};
			for (int hi = gi; hi < k->groups.len; hi++) {
				CkGroup *h = IR_VEC_AT(k->groups, CkGroup *, hi);
				if (h->bar != g->bar || !h->copy_bytes)
					continue;
				for (int64_t q = 0; q < h->role->nrep && q < CK_MAX_REPLICAS; q++) {
					Z3_ast ok;
					pass_ck_group_iter(k, h, pass_ck_num(S, q), bi, n, &ok);
					ir_vec_push(k->c->al, &alts, &ok, sizeof ok);
				}
			}
			Z3_ast issued = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
			ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
			fails[b] = pass_ck_and2(S, issued, in_flight_from(k, g->bar, bi, n));
			CkRes r = pass_ck_check(S, fails[b], NULL);
			unknown |= r == CK_UNKNOWN;
			if (r == CK_SAT && !fail) {
				fail = fails[b];
				i = bi;
			}
		}
		if (!fail) {
			if (unknown)
				undecided(k, at->op,
				          "that no copy is in flight when the kernel exits");
			continue;
		}
		if (drain && !pass_ck_error_once(k, at->op))
			continue;
		Z3_model m = solve_min(k, fail, NULL, 0, (Z3_ast[]){n}, 1);
		/* How many: the barriers with a phase in flight for these kernel arguments and
		 * program ids (one phase each in a drained-but-short ring; at least one). */
		IrVec fix = {0};
		for (int d = 0; d < 3; d++)
			if (k->pid[d]) {
				Z3_ast e =
				    pass_ck_eq(S, k->pid[d], pass_ck_num(S, ev(k, m, k->pid[d])));
				ir_vec_push(k->c->al, &fix, &e, sizeof e);
			}
		IrBlock *kb = k->kernel->reg[0].block;
		for (int a = 0; a < kb->narg; a++) {
			Z3_ast v = ir_type_is_int(kb->arg[a]->type)
			               ? pass_ck_value(k, k->root, kb->arg[a])
			               : NULL;
			if (v) {
				Z3_ast e = pass_ck_eq(S, v, pass_ck_num(S, ev(k, m, v)));
				ir_vec_push(k->c->al, &fix, &e, sizeof e);
			}
		}
		Z3_ast fixed = pass_ck_and(S, fix.len, (Z3_ast *)fix.data);
		ir_vec_free(k->c->al, &fix, sizeof(Z3_ast));
		int64_t phases = 0;
		for (int b = 0; b < nb; b++)
			phases +=
			    pass_ck_check(S, pass_ck_and2(S, fails[b], fixed), NULL) == CK_SAT;
		if (!phases)
			phases = 1;
		int ncopy = 0;
		char rings[256] = "";
		int len = 0;
		for (int hi = gi; hi < k->groups.len; hi++) {
			CkGroup *h = IR_VEC_AT(k->groups, CkGroup *, hi);
			for (int s = 0; h->bar == g->bar && s < h->nsite; s++) {
				CkSite *c = h->site[s];
				if (c->kind != CK_COPY || !c->mem)
					continue;
				ncopy++;
				if (len < (int)sizeof rings - 64)
					len += snprintf(rings + len, sizeof rings - (size_t)len,
					                "%s%%%s", len ? ", " : "",
					                pass_ck_vname(c->mem));
			}
		}
		int64_t total = phases * (ncopy ? ncopy : 1);
		IrDiag *d = ir_diag_begin(
		    k->c, drain ? IR_SEV_ERROR : IR_SEV_WARNING, at->op->loc,
		    "%lld cop%s into %s may still be in flight when the kernel exits: nothing "
		    "waits "
		    "for phase %lld of %s%s",
		    (long long)total, total == 1 ? "y" : "ies", len ? rings : "shared memory",
		    (long long)ev(k, m, n), bar_str(k, m, g->bar, i),
		    drain ? "" : " (drain it: wait for the last copies after the loop)");
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_globals(k, cx, m, fail);
		cex_show(k, cx, m, "phase", n);
		cx->role = at->role->name;
		cx->culprit = "no wait after the last copies";
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* Per phase: no more arrivals than the count, and expect_tx bytes equal the copies' bytes. */
static void
check_phase_totals(Ck *k)
{
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		CkInst in = pass_ck_inst(k, g->site[0], "t");
		Z3_ast i = pass_ck_bar_index(k, &in), n = pass_ck_phase(k, &in);
		Z3_ast arr, exp, cp;
		phase_totals(k, g->bar, i, n, &arr, &exp, &cp);
		int64_t cnt = bar_count(k, g->bar);
		CkSite *at = NULL;
		for (int s = 0; s < g->nsite && !at; s++)
			if (g->site[s]->kind != CK_COPY)
				at = g->site[s];
		Z3_ast over = pass_ck_lt(S, pass_ck_num(S, cnt), arr);
		if (at && !holds_query(k, at->op, over, "the arrival count") &&
		    pass_ck_error_once(k, at->op)) {
			CkInst *ins[1] = {&in};
			Z3_ast show[2] = {i, arr};
			Z3_model m = solve_min(k, over, ins, 1, show, 2);
			IrDiag *d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, at->op->loc,
			    "phase %lld of %s gets %lld arrivals, more than the barrier's "
			    "count(%lld)",
			    (long long)ev(k, m, n), bar_str(k, m, g->bar, i),
			    (long long)ev(k, m, arr), (long long)cnt);
			IrCex *cx = ir_diag_cex(k->c, d);
			cex_inst(k, cx, m, &in, true);
			cex_globals(k, cx, m, over);
			cx->role = g->role->name;
			cx->found =
			    ir_ctx_printf(k->c, "%lld arrivals (%s)", (long long)ev(k, m, arr),
			                  contributors(k, g->bar));
			cx->expected = ir_ctx_printf(k->c, "at most %lld", (long long)cnt);
			ir_diag_note(k->c, d, g->bar->op->loc,
			             "'%%%s' is allocated here with count(%lld)",
			             pass_ck_vname(g->bar), (long long)cnt);
			ir_diag_emit(k->c, d);
			pass_ck_model_free(S, m);
		}
		CkSite *ex = NULL;
		for (int s = 0; s < g->nsite && !ex; s++)
			if (g->site[s]->kind == CK_EXPECT)
				ex = g->site[s];
		if (!ex) {
			for (int s = 0; s < g->nsite && !ex; s++)
				if (g->site[s]->kind == CK_COPY)
					ex = g->site[s];
		}
		if (!ex)
			continue;
		Z3_ast diff = pass_ck_not(S, pass_ck_eq(S, exp, cp));
		if (holds_query(k, ex->op, diff, "the byte count") ||
		    !pass_ck_error_once(k, ex->op))
			continue;
		CkInst *ins[1] = {&in};
		Z3_ast show[3] = {i, exp, cp};
		Z3_model m = solve_min(k, diff, ins, 1, show, 3);
		IrDiag *d =
		    ir_diag_begin(k->c, IR_SEV_ERROR, ex->op->loc,
		                  "phase %lld of %s expects %lld bytes (expect_tx) but the copies "
		                  "arriving on it deliver %lld",
		                  (long long)ev(k, m, n), bar_str(k, m, g->bar, i),
		                  (long long)ev(k, m, exp), (long long)ev(k, m, cp));
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_inst(k, cx, m, &in, true);
		cex_globals(k, cx, m, diff);
		cx->role = g->role->name;
		cx->found = ir_ctx_printf(k->c, "%lld bytes from copies", (long long)ev(k, m, cp));
		cx->expected = ir_ctx_printf(k->c, "%lld bytes", (long long)ev(k, m, exp));
		for (int gi2 = 0; gi2 < k->groups.len; gi2++) {
			CkGroup *h = IR_VEC_AT(k->groups, CkGroup *, gi2);
			for (int s = 0; h->bar == g->bar && s < h->nsite; s++)
				if (h->site[s]->kind == CK_COPY)
					ir_diag_note(k->c, d, h->site[s]->op->loc,
					             "this copy delivers %lld bytes",
					             (long long)h->site[s]->bytes);
		}
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* An arrival (or copy) for phase n >= 1 of bar[i] comes after phase n - 1 completed, else it
 * would count toward the earlier phase. */
static void
check_no_overflow(Ck *k)
{
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (!g->loop)
			continue;
		/* One replica whose plain arrivals complete a phase per use of the barrier (no bytes,
		 * no other arriving group): the arrival that completed phase n - 1 comes earlier in
		 * the same thread, and a plain arrival completes at once. */
		bool solo = g->role->nrep == 1 && g->arrivals == bar_count(k, g->bar);
		for (int o = 0; o < k->groups.len && solo; o++)
			solo = o == gi || IR_VEC_AT(k->groups, CkGroup *, o)->bar != g->bar;
		for (int si = 0; si < k->sites.len && solo; si++) {
			CkSite *u = site_at(k, si);
			solo = !(u->bar == g->bar && (u->kind == CK_COPY || u->kind == CK_EXPECT));
		}
		if (solo)
			continue;
		bool reported = false;
		for (int s = 0; s < g->nsite && !reported; s++) {
			CkSite *c = g->site[s];
			CkInst in;
			Z3_ast i, n, fail;
			bool proven;
			for (k->hops = shallow_hops(k);; k->hops = k->max_hops) {
				in = pass_ck_inst(k, c, "t");
				CkPoint cp = pass_ck_point(&in);
				i = pass_ck_bar_index(k, &in);
				n = pass_ck_phase(k, &in);
				IrVec alts = {0};
				for (int wi = 0; wi < k->sites.len; wi++) {
					CkSite *u = site_at(k, wi);
					if (u->kind != CK_WAIT || u->bar != c->bar)
						continue;
					for (int64_t q = 0; q < u->role->nrep && q < CK_MAX_REPLICAS; q++) {
						Z3_ast ok;
						Z3_ast t = pass_ck_wait_iter(
						    k, u, pass_ck_num(S, q), i, n, &ok);
						CkInst ui =
						    pass_ck_inst_at(k, u, pass_ck_num(S, q), t);
						CkPoint up = pass_ck_point(&ui);
						Z3_ast alt =
						    pass_ck_and2(S, ok, pass_ck_hb(k, &up, &cp));
						ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
					}
				}
				Z3_ast ordered = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
				ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
				/* A release on the loop's last iteration runs only there. */
				bool known = true;
				Z3_ast runs = c->tail_in ? pass_ck_guard(k, &in, &known)
				                         : Z3_mk_true(S->z);
				fail =
				    pass_ck_and(S, 4,
				                (Z3_ast[]){pass_ck_le(S, pass_ck_num(S, 1), n),
				                           live(k, &in), pass_ck_not(S, ordered), runs});
				if (attempt(k, c->op, fail,
				            "that this arrival waits for the previous phase",
				            &proven))
					break;
			}
			if (proven || !pass_ck_error_once(k, c->op))
				continue;
			CkInst *ins[1] = {&in};
			Z3_ast show[2] = {i, n};
			Z3_model m = solve_min(k, fail, ins, 1, show, 2);
			IrDiag *d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, c->op->loc,
			    "this %s for phase %lld of %s may happen before phase %lld "
			    "completes, so it may count toward the earlier phase",
			    c->kind == CK_COPY ? "copy's arrival" : "arrival",
			    (long long)ev(k, m, n), bar_str(k, m, c->bar, i),
			    (long long)(ev(k, m, n) - 1));
			IrCex *cx = ir_diag_cex(k->c, d);
			cex_inst(k, cx, m, &in, true);
			cex_globals(k, cx, m, fail);
			cx->role = c->role->name;
			cx->culprit =
			    ir_ctx_printf(k->c,
			                  "no wait orders this op after the completion of phase "
			                  "%lld of %s",
			                  (long long)(ev(k, m, n) - 1), bar_str(k, m, c->bar, i));
			ir_diag_emit(k->c, d);
			reported = true;
			pass_ck_model_free(S, m);
		}
	}
}

/* A release after the loop of its last use runs only when that use exists: when the loop runs
 * no iteration, its arrival would count toward a phase no use of the loop accounts for. */
static void
check_tail_orphans(Ck *k)
{
	for (int si = 0; si < k->sites.len; si++) {
		CkSite *c = site_at(k, si);
		if (!c->tail)
			continue;
		CkSite *s0 = c->group->site[0];
		CkInst in = pass_ck_inst(k, c, "t");
		CkInst first = pass_ck_inst_at(k, s0, in.r, pass_ck_num(S, 0));
		bool known = true;
		Z3_ast g = pass_ck_guard(k, &in, &known);
		Z3_ast fail = pass_ck_and2(S, g, pass_ck_not(S, pass_ck_inst_exists(k, &first)));
		if (holds_query(k, c->op, fail, "that this release follows a use") ||
		    !pass_ck_error_once(k, c->op))
			continue;
		Z3_ast i = pass_ck_bar_index(k, &in);
		CkInst *ins[1] = {&in};
		Z3_model m = solve_min(k, fail, ins, 1, &i, 1);
		IrDiag *d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, c->op->loc,
		    "this release of the loop's last use of '%%%s' also runs when the loop runs no "
		    "iteration: its arrival on %s then counts toward a phase that no use accounts "
		    "for (guard it with 'ave.if' on the trip count)",
		    pass_ck_vname(c->bar), bar_str(k, m, c->bar, i));
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_inst(k, cx, m, &in, true);
		const IrExpr *ub = s0->loop->item[1].e;
		if (ub->kind == IR_EX_VAL) {
			IrValue *bv = ir_op_value(s0->loop, ub->opnd);
			if (bv->name)
				cex_show(k, cx, m, ir_ctx_printf(k->c, "%%%s", bv->name),
				         pass_ck_value(k, first.env->parent, bv));
		}
		cex_globals(k, cx, m, fail);
		cx->role = c->role->name;
		cx->culprit = ir_ctx_printf(k->c, "the loop at line %d runs no iteration",
		                            line_of(s0->loop));
		cx->culprit_loc = s0->loop->loc;
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* A tile loop around the k-loop whose ring restarts at every tile: a wait passed at use u and
 * u + 1 on the same barrier with the same parity returns at u + 1 on the phase of use u (a
 * consumer reads the previous tile's data, a producer overwrites a slot still being read). The
 * solver looks for such a pair; none found leaves the kernel to the other checks. */
bool
pass_ck_flat_restart(Ck *k, CkSite *w)
{
	Z3_ast r = pass_ck_num(S, 0);
	Z3_ast u = pass_ck_fresh(S, "u");
	CkInst a = pass_ck_inst_at(k, w, r, u);
	CkInst b = pass_ck_inst_at(k, w, r, pass_ck_add(S, u, pass_ck_num(S, 1)));
	bool ka = true, kb = true;
	Z3_ast ga = pass_ck_guard(k, &a, &ka), gb = pass_ck_guard(k, &b, &kb);
	if (!ka || !kb)
		return false;
	Z3_ast ia = pass_ck_bar_index(k, &a), ib = pass_ck_bar_index(k, &b);
	Z3_ast f = pass_ck_and(
	    S, 6,
	    (Z3_ast[]){pass_ck_inst_exists(k, &a), pass_ck_inst_exists(k, &b), ga, gb,
	               pass_ck_eq(S, ia, ib),
	               pass_ck_eq(S, pass_ck_parity(k, &a), pass_ck_parity(k, &b))});
	/* The loop variables shown, mentioned so that the model gives them their exact values. */
	IrValue *kv = w->loop->reg[0].block->arg[0];
	IrValue *tv = w->role->flat_outer->reg[0].block->arg[0];
	Z3_ast shown[4] = {pass_ck_value(k, a.env->parent, tv), pass_ck_value(k, b.env->parent, tv),
	                   pass_ck_value(k, a.env, kv), pass_ck_value(k, b.env, kv)};
	for (int i = 0; i < 4; i++)
		if (shown[i])
			f = pass_ck_and2(S, f, Z3_mk_eq(S->z, shown[i], shown[i]));
	CkInst *ins[2] = {&a, &b};
	Z3_model m = solve_min(k, f, ins, 2, &ia, 1);
	if (!m)
		return false;
	IrDiag *d = ir_diag_begin(
	    k->c, IR_SEV_ERROR, w->op->loc,
	    "this wait is passed twice in a row on %s with the same parity: the second returns on "
	    "the first one's phase (the ring position or phase restarts at every tile of the "
	    "tile loop; carry them across tiles, through the tile loop's iter_args)",
	    bar_str(k, m, w->bar, ia));
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, &a, true);
	cex_show(k, cx, m, ir_ctx_printf(k->c, "next %%%s", pass_ck_vname(tv)), shown[1]);
	cex_show(k, cx, m, ir_ctx_printf(k->c, "next %%%s", pass_ck_vname(kv)), shown[3]);
	cex_globals(k, cx, m, f);
	cx->role = w->role->name;
	cx->found = ir_ctx_printf(k->c, "parity %lld at both uses",
	                          (long long)ev(k, m, pass_ck_parity(k, &a)));
	cx->expected = "consecutive uses of one barrier to wait for consecutive phases";
	cx->culprit = ir_ctx_printf(k->c,
	                            "the loop at line %d starts its ring position or parity anew at "
	                            "every tile of the tile loop at line %d",
	                            line_of(w->loop), line_of(w->role->flat_outer));
	cx->culprit_loc = w->loop->loc;
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
	return true;
}

/* Iteration comparison for the deadlock check: both sites in role-level loops. */
static bool
cyc_dfs(int v, int n, const bool *edge, int *state)
{
	state[v] = 1;
	for (int w = 0; w < n; w++) {
		if (!edge[v * n + w])
			continue;
		if (state[w] == 1)
			return true;
		if (state[w] == 0 && cyc_dfs(w, n, edge, state))
			return true;
	}
	state[v] = 2;
	return false;
}

typedef struct Edge {
	CkSite *wait;
	CkGroup *group;
	int64_t q;
	bool tail;
} Edge;

/* Rank of an instance for the deadlock check: an epoch, then before its role's synchronization
 * loop, an iteration of it, or after it (a role without one: iteration 0; its arrivals before
 * its first wait, before every loop). Ordered by epoch, stage, then iteration: no iteration,
 * however large, ranks with what follows the loop. A wait outside loops that needs an arrival
 * ranked late lifts its role from that wait on (lift_roles): a role without a loop, or the part
 * of a role after its loop, to "after the loops" of the arrival's epoch; a role with a loop,
 * waiting before it, into the epoch after the arrival's (its loop runs after theirs). */
typedef struct Rank {
	int epoch;
	int stage; /* 0 before the loop, 1 in it (iteration t), 2 after it */
	Z3_ast t;
	/* A kernel whose roles synchronize in a tile loop outside its k-loop (k->tiled): stage 1
	 * is ordered by tile t1, then (k->skew) the replica, then the place in the tile (0 before
	 * the k-loop, 1 in it at k-step t2, 2 after it). Ping-pong's consumers take turns: consumer
	 * 1's tile j waits for consumer 0's tile j to end, consumer 0's tile j + 1 for consumer 1's
	 * tile j, which this order ranks lower and the flat use does not. */
	Z3_ast t1, rho, t2;
	Z3_ast u; /* a k-loop's use (sub 1), else NULL */
	int sub;
} Rank;

/* The tiled form of a stage-1 rank (k->tiled). */
static Rank
rank_tiled(Ck *k, const CkInst *in, Rank r)
{
	CkSite *s = in->site;
	Z3_ast zero = pass_ck_num(S, 0);
	r.rho = zero;
	if (k->skew && s->role->nrep > 1)
		r.rho = k->skew_dir < 0 ? pass_ck_sub(S, pass_ck_num(S, s->role->nrep - 1), in->r)
		                        : in->r;
	if (!s->loop) { /* a role without a loop, after its first wait: "iteration 0" */
		r.t1 = r.t2 = zero;
		r.sub = 1;
	} else if (pass_ck_is_flat(s)) {
		pass_ck_tile_split(k, in, &r.t1, &r.t2);
		r.u = in->t;
		r.sub = 1;
	} else {
		r.t1 = in->t;
		r.t2 = zero;
		r.sub = s->pos < s->role->flat_pos ? 0 : 2;
	}
	return r;
}

static Rank
rank_of(Ck *k, const CkInst *in)
{
	CkSite *s = in->site;
	CkRole *ro = s->role;
	bool lifted = ro->lift_seg && s->seg >= ro->lift_seg - 1;
	bool before_loop = ro->sync_loop && ro->lift_seg - 1 < ro->sync_seg;
	if (lifted && (!ro->sync_loop || !before_loop))
		return (Rank){.epoch = ro->lift_epoch, .stage = 2};
	int epoch = lifted ? ro->lift_epoch : 0;
	if (s->loop)
		return k->tiled ? rank_tiled(k, in, (Rank){.epoch = epoch, .stage = 1, .t = in->t})
		                : (Rank){.epoch = epoch, .stage = 1, .t = in->t};
	if (!ro->sync_loop) {
		/* An arrival no wait of its thread precedes always runs: before every loop. */
		bool waited = s->kind == CK_WAIT;
		for (int i = 0; i < k->sites.len && !waited; i++) {
			CkSite *o = site_at(k, i);
			waited = o->kind == CK_WAIT && o->role == ro &&
			         (o->seg < s->seg || (o->seg == s->seg && o->pos < s->pos));
		}
		Rank r0 = {.stage = 1, .t = pass_ck_num(S, 0)};
		if (!waited)
			return (Rank){.stage = 0};
		return k->tiled ? rank_tiled(k, in, r0) : r0;
	}
	return (Rank){.epoch = epoch, .stage = s->seg < ro->sync_seg ? 0 : 2};
}

/* a < b lexicographically over (t1, rho, sub, t2), or a == b. Two uses of k-loops (sub 1)
 * of replicas ranked alike compare as their uses u = t1 * n2 + t2 do, without the split. */
static Z3_ast
tiled_cmp(Ck *k, Rank a, Rank b, bool lt)
{
	if (a.sub == 1 && b.sub == 1 && a.u && b.u) {
		Z3_ast same = pass_ck_eq(S, a.rho, b.rho);
		Z3_ast by_u = lt ? pass_ck_lt(S, a.u, b.u) : pass_ck_eq(S, a.u, b.u);
		if (pass_ck_is_true(S, same))
			return by_u;
		Rank a2 = a, b2 = b;
		a2.u = b2.u = NULL;
		return pass_ck_ite(S, same, by_u, tiled_cmp(k, a2, b2, lt));
	}
	Z3_ast in_tile =
	    a.sub != b.sub ? (a.sub < b.sub && lt ? Z3_mk_true(S->z) : Z3_mk_false(S->z))
	    : a.sub == 1   ? (lt ? pass_ck_lt(S, a.t2, b.t2) : pass_ck_eq(S, a.t2, b.t2))
	                   : (lt ? Z3_mk_false(S->z) : Z3_mk_true(S->z));
	Z3_ast same_rho = pass_ck_eq(S, a.rho, b.rho);
	Z3_ast by_rho = lt ? pass_ck_or2(S, pass_ck_lt(S, a.rho, b.rho),
	                                 pass_ck_and2(S, same_rho, in_tile))
	                   : pass_ck_and2(S, same_rho, in_tile);
	Z3_ast same_t1 = pass_ck_eq(S, a.t1, b.t1);
	return lt ? pass_ck_or2(S, pass_ck_lt(S, a.t1, b.t1), pass_ck_and2(S, same_t1, by_rho))
	          : pass_ck_and2(S, same_t1, by_rho);
}

static Z3_ast
rank_lt(Ck *k, Rank a, Rank b)
{
	if (a.epoch != b.epoch)
		return a.epoch < b.epoch ? Z3_mk_true(S->z) : Z3_mk_false(S->z);
	if (a.stage != b.stage)
		return a.stage < b.stage ? Z3_mk_true(S->z) : Z3_mk_false(S->z);
	if (a.stage == 1 && a.t1 && b.t1)
		return tiled_cmp(k, a, b, true);
	return a.stage == 1 ? pass_ck_lt(S, a.t, b.t) : Z3_mk_false(S->z);
}

static Z3_ast
rank_eq(Ck *k, Rank a, Rank b)
{
	if (a.epoch != b.epoch || a.stage != b.stage)
		return Z3_mk_false(S->z);
	if (a.stage == 1 && a.t1 && b.t1)
		return tiled_cmp(k, a, b, false);
	return a.stage == 1 ? pass_ck_eq(S, a.t, b.t) : Z3_mk_true(S->z);
}

/* The dependency of wait `w` on group `g`'s replica q: the contributing instance `ci` for the
 * phase an instance `in` of the wait needs, and the condition that it needs it. */
static Z3_ast
dependency(Ck *k, CkSite *w, CkGroup *g, int64_t q, bool tail, CkInst *in, CkInst *ci)
{
	*in = pass_ck_inst(k, w, "t");
	Z3_ast i = pass_ck_bar_index(k, in), gg = pass_ck_wait_g(k, in);
	Z3_ast ok, oks;
	Z3_ast u = pass_ck_group_iter(k, g, pass_ck_num(S, q), i,
	                              pass_ck_sub(S, gg, pass_ck_num(S, 1)), &ok);
	/* The last (plain, if any) arrival of the use: in the loop, or the release after it. In
	 * the loop, the one that releases the use latest (the largest shift), then the last in
	 * program order. */
	CkSite *c = NULL;
	int64_t late = 0;
	for (int s = 0; s < g->nsite; s++)
		if (g->site[s]->tail == tail && g->site[s]->shift > late)
			late = g->site[s]->shift;
	for (int s = 0; s < g->nsite; s++)
		if (g->site[s]->tail == tail && (tail || g->site[s]->shift == late) &&
		    (!c || g->site[s]->kind != CK_COPY))
			c = g->site[s];
	*ci = pass_ck_group_site(k, c, pass_ck_num(S, q), u, &oks);
	return pass_ck_and(S, 3, (Z3_ast[]){pass_ck_wait_advances(k, in), ok, oks});
}

static bool
group_has_tail(const CkGroup *g)
{
	for (int s = 0; s < g->nsite; s++)
		if (g->site[s]->tail)
			return true;
	return false;
}

static void
deadlock_report(Ck *k, CkInst *in, CkInst *ci, Z3_ast fail, const char *why)
{
	CkSite *w = in->site, *c = ci->site;
	Z3_ast i = pass_ck_bar_index(k, in), gg = pass_ck_wait_g(k, in);
	CkInst *ins[2] = {in, ci};
	Z3_model m = solve_min(k, fail, ins, 2, &i, 1);
	IrDiag *d = ir_diag_begin(
	    k->c, IR_SEV_ERROR, w->op->loc,
	    "this wait may deadlock: it waits for phase %lld of %s, which needs an "
	    "arrival from %s %s",
	    (long long)(ev(k, m, gg) - 1), bar_str(k, m, w->bar, i), c->role->name, why);
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, in, true);
	cex_inst(k, cx, m, ci, false);
	cex_globals(k, cx, m, fail);
	cx->role = w->role->name;
	cx->culprit = ir_ctx_printf(k->c, "'%s' at line %d (%s)", ir_op_name(c->op->code),
	                            line_of(c->op), role_it(k, m, ci));
	cx->culprit_loc = c->op->loc;
	provenance_notes(k, d, m, in);
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

static bool
is_sync(const CkSite *s)
{
	return s->kind == CK_WAIT || s->kind == CK_ARRIVE || s->kind == CK_EXPECT ||
	       s->kind == CK_COPY;
}

/* Can two sync sites of one role run at the same rank, a before b? */
static bool
same_rank_before(const CkSite *a, const CkSite *b)
{
	if (a->role != b->role || (a->seg == b->seg && a->pos >= b->pos) || a->seg > b->seg)
		return false;
	if (a->loop || b->loop)
		return a->loop == b->loop;
	/* Outside loops: on the same side of the role's synchronization loop. */
	int l = a->role->sync_loop ? a->role->sync_seg : -1;
	return l < 0 || (a->seg < l) == (b->seg < l);
}

/* No wait waits for an arrival that can only come after it. Every instance gets a rank (rank_of,
 * then its place in its thread); a wait must only need arrivals of lower rank, or of the same
 * rank without a cycle of waits and arrivals through program order, so by induction every wait
 * returns. Within a thread that is program order; across roles an arrival from a later
 * iteration is a deadlock, and one from the same iteration adds an edge to the graph of sync ops
 * (program order within a role, "needed by" across), which must stay acyclic. */
/* A role without a synchronization loop (an epilogue) that waits for an arrival another role
 * sends after its loop: from that wait on, its ops rank after every loop iteration (they run
 * after it in program order), so that wait ties with the arrival instead of preceding it. */
#define CK_MAX_EPOCH 3

/* The lift wait w (outside loops) of role ro needs: the epoch its role's ops from w on must
 * rank in, or -1 when no arrival it may need ranks late (after the loops of an epoch, or in a
 * later epoch than w's). */
static int
lift_target(Ck *k, CkRole *ro, CkSite *w)
{
	bool before_loop = ro->sync_loop && w->seg < ro->sync_seg;
	CkInst wi = pass_ck_inst(k, w, "t");
	Rank rw = rank_of(k, &wi);
	int target = -1;
	for (int gi = 0; gi < k->groups.len; gi++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
		if (g->bar != w->bar || g->role == ro)
			continue;
		for (int t = 0; t < 2 * g->role->nrep && t < 2 * CK_MAX_REPLICAS; t++) {
			if ((t & 1) && !group_has_tail(g))
				continue;
			CkInst in, ci;
			Z3_ast need = dependency(k, w, g, t >> 1, t & 1, &in, &ci);
			Rank rc = rank_of(k, &ci);
			bool late = rc.stage == 2 || rc.epoch > rw.epoch;
			if (!late || rc.epoch < rw.epoch)
				continue;
			int e = before_loop ? rc.epoch + 1 : rc.epoch;
			if (e <= target || (e == rw.epoch && rw.stage == 2 && !before_loop))
				continue; /* no later than it ranks already */
			if (pass_ck_check(S, need, NULL) != CK_UNSAT)
				target = e;
		}
	}
	return target > CK_MAX_EPOCH ? -1 : target;
}

static void
lift_roles(Ck *k)
{
	/* To a fixpoint: a role lifted from some wait on sends what it sends after that late too,
	 * so a role waiting for it is lifted in turn (an epilogue chain). A lift only moves
	 * earlier in the role or into a later epoch, at most CK_MAX_EPOCH. */
	for (int rounds = 0; rounds < 4 * k->nroles * (CK_MAX_EPOCH + 1); rounds++) {
		bool again = false;
		for (int ri = 1; ri < k->nroles; ri++) {
			CkRole *ro = &k->roles[ri];
			for (int si = 0; si < k->sites.len; si++) {
				CkSite *w = site_at(k, si);
				if (w->kind != CK_WAIT || w->role != ro || w->loop ||
				    (ro->lift_seg && w->seg + 1 > ro->lift_seg))
					continue;
				/* A role with a loop is lifted from one side of it only. */
				if (ro->lift_seg && ro->sync_loop &&
				    (w->seg < ro->sync_seg) != (ro->lift_seg - 1 < ro->sync_seg))
					continue;
				int e = lift_target(k, ro, w);
				if (e < 0 || (ro->lift_seg == w->seg + 1 && e <= ro->lift_epoch))
					continue;
				ro->lift_seg = w->seg + 1;
				if (e > ro->lift_epoch)
					ro->lift_epoch = e;
				again = true;
				break;
			}
		}
		if (!again)
			break;
	}
}

/* One try of the deadlock check with the ranks as they are; quiet: no report, false at the
 * first wait it cannot prove. */
static bool
deadlock_order(Ck *k, bool quiet)
{
	for (int i = 0; i < k->nroles; i++)
		k->roles[i].lift_seg = k->roles[i].lift_epoch = 0;
	lift_roles(k);
	bool ok = true;
	int ns = k->sites.len;
	Edge *edge = ir_xalloc(k->c->al, sizeof *edge * (size_t)(ns * ns));
	memset(edge, 0, sizeof *edge * (size_t)(ns * ns));
	bool *adj = ir_xalloc(k->c->al, sizeof *adj * (size_t)(ns * ns));
	memset(adj, 0, sizeof *adj * (size_t)(ns * ns));
	for (int a = 0; a < ns; a++)
		for (int b = 0; b < ns; b++)
			if (is_sync(site_at(k, a)) && is_sync(site_at(k, b)) &&
			    same_rank_before(site_at(k, a), site_at(k, b)))
				adj[a * ns + b] = true;
	for (int si = 0; si < ns; si++) {
		CkSite *w = site_at(k, si);
		if (w->kind != CK_WAIT)
			continue;
		for (int gi = 0; gi < k->groups.len; gi++) {
			CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, gi);
			if (g->bar != w->bar)
				continue;
			for (int64_t qt = 0; qt < 2 * g->role->nrep && qt < 2 * CK_MAX_REPLICAS; qt++) {
				int64_t q = qt >> 1;
				bool tail = qt & 1;
				if (tail && !group_has_tail(g))
					continue;
				CkInst in, ci;
				Z3_ast need = dependency(k, w, g, q, tail, &in, &ci);
				Rank tw = rank_of(k, &in), tc = rank_of(k, &ci);
				Z3_ast later;
				bool same_role = g->role == w->role;
				CkSite *c = ci.site;
				if (same_role) {
					/* The same replica: program order; another replica: the
					 * rank. */
					CkPoint cp = pass_ck_point(&ci), wp = pass_ck_point(&in);
					later =
					    pass_ck_and2(S, pass_ck_eq(S, in.r, ci.r),
					                 pass_ck_not(S, pass_ck_po(k, &cp, &wp)));
					bool c_after = c->seg > w->seg ||
					               (c->seg == w->seg && c->pos >= w->pos);
					Z3_ast other = pass_ck_and2(
					    S, pass_ck_not(S, pass_ck_eq(S, in.r, ci.r)),
					    pass_ck_or2(S, rank_lt(k, tw, tc),
					                c_after ? rank_eq(k, tw, tc)
					                        : Z3_mk_false(S->z)));
					later = pass_ck_or2(S, later, other);
				} else {
					later = rank_lt(k, tw, tc);
				}
				Z3_ast fail = pass_ck_and2(S, need, later);
				bool proved = quiet ? pass_ck_check(S, fail, NULL) == CK_UNSAT
				                    : holds_query(k, w->op, fail,
				                                  "that this wait cannot deadlock");
				if (!proved && quiet) {
					ok = false;
					goto done;
				}
				if (!proved) {
					if (pass_ck_error_once(k, w->op))
						deadlock_report(k, &in, &ci, fail,
						                "that comes after it");
					continue;
				}
				if (same_role)
					continue;
				Z3_ast tie = pass_ck_and2(S, need, rank_eq(k, tw, tc));
				if (pass_ck_check(S, tie, NULL) == CK_UNSAT)
					continue;
				for (int s = 0; s < g->nsite; s++) {
					if (g->site[s]->tail != tail)
						continue;
					int from = g->site[s]->id;
					adj[from * ns + si] = true;
					if (!edge[from * ns + si].wait)
						edge[from * ns + si] = (Edge){w, g, q, tail};
				}
			}
		}
	}
	int *state = ir_xalloc(k->c->al, sizeof *state * (size_t)ns);
	memset(state, 0, sizeof *state * (size_t)ns);
	for (int v = 0; v < ns; v++) {
		if (state[v] || !cyc_dfs(v, ns, adj, state))
			continue;
		ok = false;
		if (quiet)
			break;
		/* Report at the first wait (in source order) whose dependency edge lies on a cycle.
		 */
		Edge *at = NULL;
		for (int a = 0; a < ns * ns; a++) {
			if (!edge[a].wait)
				continue;
			int from = a / ns, to = a % ns;
			int *st = ir_xalloc(k->c->al, sizeof *st * (size_t)ns);
			memset(st, 0, sizeof *st * (size_t)ns);
			/* On a cycle: `from` is reachable from `to`. */
			int *stack = ir_xalloc(k->c->al, sizeof *stack * (size_t)ns);
			int sp = 0;
			bool back = false;
			stack[sp++] = to;
			st[to] = 1;
			while (sp && !back) {
				int x = stack[--sp];
				for (int y = 0; y < ns; y++)
					if (adj[x * ns + y] && !st[y]) {
						st[y] = 1;
						stack[sp++] = y;
						back |= y == from;
					}
				back |= x == from;
			}
			ir_xfree(k->c->al, stack, sizeof *stack * (size_t)ns);
			ir_xfree(k->c->al, st, sizeof *st * (size_t)ns);
			if (back && (!at || edge[a].wait->op->loc.line < at->wait->op->loc.line))
				at = &edge[a];
		}
		if (at && pass_ck_error_once(k, at->wait->op)) {
			CkInst in, ci;
			Z3_ast need = dependency(k, at->wait, at->group, at->q, at->tail, &in, &ci);
			Z3_ast tie =
			    pass_ck_and2(S, need, rank_eq(k, rank_of(k, &in), rank_of(k, &ci)));
			deadlock_report(
			    k, &in, &ci, tie,
			    "that itself waits, directly or through other roles, for this wait to "
			    "return (check the initial parity of the phase)");
		}
		break;
	}
	ir_xfree(k->c->al, state, sizeof *state * (size_t)ns);
done:
	ir_xfree(k->c->al, adj, sizeof *adj * (size_t)(ns * ns));
	ir_xfree(k->c->al, edge, sizeof *edge * (size_t)(ns * ns));
	return ok;
}

/* Deadlock freedom holds when some ranking of the instances passes (every wait needs only
 * arrivals ranked lower, or ranked alike without a cycle). Where roles take turns by tile
 * (k->skew), the replicas may go in either order: each is tried quietly, and an error is
 * reported from the first. */
static void
check_deadlock_order(Ck *k)
{
	if (k->skew) {
		for (int dir = 1; dir >= -1; dir -= 2) {
			k->skew_dir = dir;
			if (deadlock_order(k, true))
				return;
		}
		k->skew_dir = 1;
	}
	deadlock_order(k, false);
}

/* A waiter never falls two or more phases behind: the phase after the one it waits for cannot
 * complete before it returns. */
static void
check_ambiguity(Ck *k)
{
	for (int si = 0; si < k->sites.len; si++) {
		CkSite *w = site_at(k, si);
		if (w->kind != CK_WAIT)
			continue;
		CkInst in;
		Z3_ast i, g, fail;
		bool proven;
		for (k->hops = shallow_hops(k);; k->hops = k->max_hops) {
			in = pass_ck_inst(k, w, "t");
			CkPoint wp = pass_ck_point(&in);
			i = pass_ck_bar_index(k, &in);
			g = pass_ck_wait_g(k, &in);
			IrVec all = {0};
			int ngroups = 0;
			for (int gi = 0; gi < k->groups.len; gi++) {
				CkGroup *gr = IR_VEC_AT(k->groups, CkGroup *, gi);
				if (gr->bar != w->bar)
					continue;
				ngroups++;
				for (int64_t q = 0; q < gr->role->nrep && q < CK_MAX_REPLICAS; q++) {
					Z3_ast ok;
					Z3_ast t =
					    pass_ck_group_iter(k, gr, pass_ck_num(S, q), i, g, &ok);
					for (int s = 0; s < gr->nsite; s++) {
						Z3_ast oks;
						CkInst ci = pass_ck_group_site(k, gr->site[s],
						                               pass_ck_num(S, q), t, &oks);
						CkPoint cp = pass_ck_point(&ci);
						/* An arrival that does not exist orders nothing. */
						Z3_ast bad = pass_ck_or2(
						    S, pass_ck_not(S, pass_ck_and2(S, ok, oks)),
						    pass_ck_not(S, pass_ck_hb(k, &wp, &cp)));
						ir_vec_push(k->c->al, &all, &bad, sizeof bad);
					}
				}
			}
			Z3_ast alive = live(k, &in);
			ir_vec_push(k->c->al, &all, &alive, sizeof alive);
			/* ... and phase g gets all it needs to complete. */
			Z3_ast arr, exp, cp;
			phase_totals(k, w->bar, i, g, &arr, &exp, &cp);
			Z3_ast done = pass_ck_and2(
			    S, pass_ck_le(S, pass_ck_num(S, bar_count(k, w->bar)), arr),
			    pass_ck_le(S, exp, cp));
			ir_vec_push(k->c->al, &all, &done, sizeof done);
			fail = ngroups ? pass_ck_and(S, all.len, (Z3_ast *)all.data)
			               : Z3_mk_false(S->z);
			ir_vec_free(k->c->al, &all, sizeof(Z3_ast));
			if (attempt(k, w->op, fail, "that this wait is never two phases behind",
			            &proven))
				break;
		}
		if (proven || !pass_ck_error_once(k, w->op))
			continue;
		CkInst *ins[1] = {&in};
		Z3_ast show[2] = {i, g};
		Z3_model m = solve_min(k, fail, ins, 1, show, 2);
		IrDiag *d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, w->op->loc,
		    "this wait may fall behind: phase %lld of %s may complete before it "
		    "returns, and then its parity no longer tells the phases apart (it is "
		    "two phases behind, or blocks on a phase it meant to skip)",
		    (long long)ev(k, m, g), bar_str(k, m, w->bar, i));
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_inst(k, cx, m, &in, true);
		cex_globals(k, cx, m, fail);
		cex_show(k, cx, m, "completed phases it relies on", g);
		cx->role = w->role->name;
		cx->culprit = "no arrival of that later phase is ordered after this wait";
		provenance_notes(k, d, m, &in);
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* ---- races on shared memory ---- */

/* Does op a come before op b in b's block (a, or the op holding it there)? */
static bool
before_in_block(IrOp *a, IrOp *b)
{
	while (a && a->parent != b->parent)
		a = ir_block_parent_op(a->parent);
	if (!a || a == b)
		return false;
	for (IrOp *o = a->next; o; o = o->next)
		if (o == b)
			return true;
	return false;
}

/* A plain arrival of role `by` in `loop` (of its own iteration's use) before `end` in program
 * order, on a barrier role `waiter` waits on; NULL if none. */
static CkSite *
arrival_before(Ck *k, CkRole *by, IrOp *loop, IrOp *end, CkRole *waiter)
{
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *a = site_at(k, i);
		if (a->kind != CK_ARRIVE || a->role != by || a->loop != loop || a->shift || a->tail ||
		    !before_in_block(a->op, end))
			continue;
		for (int j = 0; j < k->sites.len; j++) {
			CkSite *o = site_at(k, j);
			if (o->kind == CK_WAIT && o->role == waiter && o->bar == a->bar)
				return a;
		}
	}
	return NULL;
}

/* A write that may overwrite what a role still reads: when that role releases the slot (an
 * arrival, in the read's iteration, on a barrier the writer waits on) before the read ends (its
 * 'ave.mma.wait' for an async MMA, else the read), the release is the likely cause. */
static void
early_release_note(Ck *k, IrDiag *d, CkSite *w, CkSite *x)
{
	if (w->role == x->role || !x->loop)
		return;
	CkSite *a = arrival_before(k, x->role, x->loop, x->end_op ? x->end_op : x->op, w->role);
	if (!a)
		return;
	if (x->end_op)
		ir_diag_note(k->c, d, a->op->loc,
		             "this release lets %s reuse the slot before the async MMA reading it "
		             "(line %d) is retired by its 'ave.mma.wait' (line %d): release after "
		             "that wait",
		             w->role->name, line_of(x->op), line_of(x->end_op));
	else
		ir_diag_note(k->c, d, a->op->loc,
		             "this release lets %s reuse the slot before %s (line %d): release after "
		             "it",
		             w->role->name,
		             x->op->code == IR_OP_TAG_ASSERT ? "the assertion on it" : "the read of it",
		             line_of(x->op));
}

/* A read that may see a write before it lands: when the writer signals the slot (an arrival,
 * in the write's iteration, on a barrier the reader waits on) before the write, the signal is
 * the likely cause. */
static void
early_publish_note(Ck *k, IrDiag *d, CkSite *w, CkSite *x)
{
	if (w->role == x->role || w->kind == CK_COPY)
		return;
	CkSite *a = arrival_before(k, w->role, w->loop, w->op, x->role);
	if (a)
		ir_diag_note(k->c, d, a->op->loc,
		             "this arrival tells %s the slot is ready before the write into it (line "
		             "%d): arrive after the write",
		             x->role->name, line_of(w->op));
}

static void
race_report(Ck *k, Z3_ast fail, CkInst *w, CkInst *x, bool waw)
{
	CkInst *ins[2] = {w, x};
	Z3_ast sw = pass_ck_slot(k, w);
	Z3_model m = solve_min(k, fail, ins, 2, &sw, 1);
	/* The write comes after the read started: in a later iteration, or later in the same
	 * iteration (or outside loops) of the same thread. */
	bool same_thread = w->site->role == x->site->role && ev(k, m, w->r) == ev(k, m, x->r);
	bool later_here = same_thread && (w->site->seg > x->site->seg ||
	                                  (w->site->seg == x->site->seg && w->site->pos > x->site->pos));
	bool overwrite =
	    waw || (w->t && x->t
	                ? ev(k, m, w->t) > ev(k, m, x->t) ||
	                      (ev(k, m, w->t) == ev(k, m, x->t) && later_here)
	                : later_here);
	if (waw && w->t && x->t && ev(k, m, w->t) < ev(k, m, x->t)) {
		CkInst *tmp = w;
		w = x;
		x = tmp;
	}
	const char *slot = slot_str(k, m, w->site->mem, sw);
	IrOp *at = overwrite ? w->site->op : x->site->op;
	if (!pass_ck_error_once(k, at)) {
		pass_ck_model_free(S, m);
		return;
	}
	IrDiag *d;
	if (waw)
		d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, at->loc,
		    "this write may overwrite %s before the data of the earlier write into it "
		    "(line %d) has been consumed",
		    slot, line_of(x->site->op));
	else if (overwrite)
		d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, at->loc,
		    "this write may overwrite %s while %s may still read it (line %d)", slot,
		    x->site->role->name, line_of(x->site->op));
	else
		d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, at->loc,
		    "this read of %s may happen before the write into it (line %d) has "
		    "landed, or while it is being overwritten",
		    slot, line_of(w->site->op));
	IrCex *cx = ir_diag_cex(k->c, d);
	CkInst *main = overwrite ? w : x, *other = overwrite ? x : w;
	cex_inst(k, cx, m, main, true);
	cex_inst(k, cx, m, other, main->site->role == other->site->role ? false : false);
	cex_globals(k, cx, m, fail);
	cx->role = main->site->role->name;
	cx->slot = slot;
	IrOp *cul = other->site->op;
	cx->culprit =
	    ir_ctx_printf(k->c, "nothing orders '%s' (line %d, %s) and '%s' (line %d, %s)",
	                  ir_op_name(w->site->op->code), line_of(w->site->op), role_it(k, m, w),
	                  ir_op_name(x->site->op->code), line_of(x->site->op), role_it(k, m, x));
	const CkSite *xs = x->site;
	if (!waw && xs->end_op && (xs->end_pend[0] || xs->end_pend[1]))
		cx->culprit = ir_ctx_printf(
		    k->c,
		    "%s; the 'ave.mma.wait' with pending(1) (line %d) leaves the async MMA in "
		    "flight until the wait of the next iteration",
		    cx->culprit, line_of(xs->end_op));
	cx->culprit_loc = cul->loc;
	if (overwrite && !waw)
		early_release_note(k, d, w->site, x->site);
	else if (!waw)
		early_publish_note(k, d, w->site, x->site);
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

static void
check_races(Ck *k)
{
	for (int a = 0; a < k->sites.len; a++) {
		CkSite *w = site_at(k, a);
		if ((w->kind != CK_COPY && w->kind != CK_STORE) || !w->mem)
			continue;
		for (int b = 0; b < k->sites.len; b++) {
			CkSite *x = site_at(k, b);
			if (!x->mem || x->mem != w->mem)
				continue;
			bool waw = x->kind == CK_COPY || x->kind == CK_STORE;
			if (x->kind != CK_READ && !(waw && b >= a))
				continue;
			if (waw && a == b && !w->loop && w->role->nrep == 1)
				continue;
			CkInst wi, xi;
			Z3_ast fail;
			bool proven;
			for (k->hops = shallow_hops(k);; k->hops = k->max_hops) {
				wi = pass_ck_inst(k, w, "t");
				xi = pass_ck_inst(k, x, "t");
				Z3_ast same = pass_ck_and2(
				    S, pass_ck_eq(S, pass_ck_slot(k, &wi), pass_ck_slot(k, &xi)),
				    pass_ck_regions_meet(k, &wi, &xi));
				Z3_ast distinct = Z3_mk_true(S->z);
				if (waw && a == b) {
					Z3_ast rlt = pass_ck_lt(S, wi.r, xi.r);
					distinct =
					    w->loop ? pass_ck_or2(
					                  S, pass_ck_lt(S, wi.t, xi.t),
					                  pass_ck_and2(S, pass_ck_eq(S, wi.t, xi.t),
					                               rlt))
					            : rlt;
				}
				CkPoint wl = landing_point(&wi), wiss = pass_ck_point(&wi);
				if (waw) {
					CkPoint xl = landing_point(&xi), xiss = pass_ck_point(&xi);
					fail = pass_ck_and(
					    S, 6,
					    (Z3_ast[]){same, distinct, live(k, &wi), live(k, &xi),
					               pass_ck_not(S, pass_ck_hb(k, &wl, &xiss)),
					               pass_ck_not(S, pass_ck_hb(k, &xl, &wiss))});
				} else {
					CkPoint xs = pass_ck_point(&xi),
					        xe = pass_ck_point_end(k, &xi);
					Z3_ast after = pass_ck_point_never(&xe)
					                   ? Z3_mk_false(S->z)
					                   : pass_ck_hb(k, &xe, &wiss);
					fail = pass_ck_and(
					    S, 5,
					    (Z3_ast[]){same, live(k, &wi), live(k, &xi),
					               pass_ck_not(S, pass_ck_hb(k, &wl, &xs)),
					               pass_ck_not(S, after)});
				}
				if (attempt(k, waw ? w->op : x->op, fail,
				            "that this access is ordered", &proven))
					break;
			}
			if (proven)
				continue;
			race_report(k, fail, &wi, &xi, waw);
		}
	}
}

/* ---- tag assertions ---- */

typedef struct Cand {
	Z3_ast ok;    /* the candidate write landed before the point, into the slot, labelled L */
	CkInst w;     /* the write */
	CkSite *wait; /* the wait that orders it (NULL: program order) */
	CkInst wi;    /* ... its instance */
} Cand;

/* Where a `holds` assertion or the load it follows reads: a site, instance and memory. */
typedef struct Reader {
	CkInst in;
	IrValue *mem;
	Z3_ast slot;
	bool by_region; /* a holds on a view of shared memory: labels may compare by region */
} Reader;

/* A view of a slot that holds another part of a tensor than the one asserted, under another
 * label with a region: the view's slices (or the assertion, without one) are the likely cause,
 * not the wait. Says so in cx; false when that is not the case. */
static bool
view_culprit(Ck *k, Z3_model m, IrCex *cx, const Reader *rd, const CkInst *w, const Label *wl,
             const Label *want, IrOp *as)
{
	Region ra, rb;
	IrValue *ta = NULL, *tb = NULL;
	const CkSite *rs = rd->in.site;
	if (!rd->by_region || !label_regions(k, wl, want, &ra, &rb, &ta, &tb))
		return false;
	if (ta != tb) {
		cx->culprit = ir_ctx_printf(k->c, "'@%s' names a region of '%%%s', but the slot holds "
		                            "%s, a region of '%%%s'",
		                            want->m[0].f, tb->name ? tb->name : "?",
		                            label_str(k, m, wl), ta->name ? ta->name : "?");
		cx->culprit_loc = as->loc;
		return true;
	}
	if (!comparable(&ra, &rb, ta, tb) || ev(k, m, label_match(k, wl, w, want, &rd->in)))
		return false;
	Region view = ra;
	for (int d = 0; d < ra.n; d++) {
		Z3_ast wlo, wn, rlo, rn;
		pass_ck_span(k, w, d, &wlo, &wn);
		pass_ck_span(k, &rd->in, d, &rlo, &rn);
		view.lo[d] = pass_ck_add(S, ra.lo[d], pass_ck_sub(S, rlo, wlo));
		view.len[d] = rn;
	}
	view.buf = rb.buf = ta->name ? ta->name : "?";
	const char *vt = region_text_in(k, m, &view, '%'), *bt = region_text_in(k, m, &rb, '%');
	if (!rs->nslice) {
		cx->culprit = ir_ctx_printf(k->c, "the slot holds %s of %s, but '@%s' is %s", vt,
		                            label_str(k, m, wl), want->m[0].f, bt);
		cx->culprit_loc = as->loc;
		return true;
	}
	/* The slices in program order (the one taken of the slot first). */
	char lines[64] = "";
	size_t n = 0;
	for (int i = rs->nslice - 1; i >= 0; i--) {
		int wr = snprintf(lines + n, sizeof lines - n, "%s%d",
		                  i == rs->nslice - 1 ? "" : i == 0 ? " and " : ", ",
		                  line_of(rs->slice[i]));
		if (wr < 0 || (size_t)wr >= sizeof lines - n)
			break;
		n += (size_t)wr;
	}
	cx->culprit = ir_ctx_printf(k->c, "the slice%s at line%s %s take%s %s of %s, but '@%s' is %s",
	                            rs->nslice > 1 ? "s" : "", rs->nslice > 1 ? "s" : "", lines,
	                            rs->nslice > 1 ? "" : "s", vt, label_str(k, m, wl),
	                            want->m[0].f, bt);
	cx->culprit_loc = rs->slice[rs->nslice - 1]->loc;
	return true;
}

static void
holds_report(Ck *k, IrOp *as, const Reader *rd, const Label *want, Z3_ast fail, Cand *c, int nc,
             IrVec *bads, IrVec *badw, Z3_ast e0, Z3_ast e1)
{
	if (!pass_ck_error_once(k, as))
		return;
	CkInst *ins[9];
	int ni = 0;
	ins[ni++] = (CkInst *)&rd->in;
	for (int i = 0; i < bads->len && ni < 9; i++)
		ins[ni++] = IR_VEC_AT(*badw, CkInst *, i);
	/* Shown: the slot, the element, and the parity of each wait the report may name (a
	 * term the query need not mention: without its definition in the model it would read
	 * as any number). */
	Z3_ast show[3 + 8] = {rd->slot, e0, e1};
	int nshow = 3;
	for (int i = 0; i < nc && nshow < 3 + 8; i++)
		if (c[i].wait)
			show[nshow++] = pass_ck_parity(k, &c[i].wi);
	Z3_model m = solve_min(k, fail, ins, ni, show, nshow);
	const char *slot = slot_str(k, m, rd->mem, rd->slot);
	IrDiag *d = ir_diag_begin(k->c, IR_SEV_ERROR, as->loc,
	                          "'holds' assertion may fail%s: %s may not hold %s",
	                          msg_suffix(k, as), slot, label_str(k, m, want));
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, (CkInst *)&rd->in, true);
	/* Where writes go through slices, the element that may be missing or foreign. */
	bool sliced = false;
	for (int i = 0; i < k->sites.len && !sliced; i++) {
		CkSite *w = site_at(k, i);
		sliced = (w->kind == CK_COPY || w->kind == CK_STORE) && w->mem == rd->mem && w->nslice;
	}
	if (sliced)
		ir_cex_var(k->c, cx, "element",
		           ir_ctx_printf(k->c, "[%lld, %lld]", (long long)ev(k, m, e0),
		                         (long long)ev(k, m, e1)));
	cx->role = rd->in.site->role->name;
	cx->slot = slot;
	cx->expected = label_str(k, m, want);
	int any = -1;
	for (int i = 0; i < nc && any < 0; i++)
		if (ev(k, m, c[i].ok))
			any = i;
	if (any < 0) {
		/* No write with the label is known to have landed: explain with the wait, and the
		 * write into this slot it orders (a replica of the writer with a ring of its own
		 * writes other slots: not that one). */
		Cand *why = NULL;
		for (int i = 0; i < nc && !why; i++)
			if (c[i].wait && c[i].w.site &&
			    ev(k, m, pass_ck_inst_exists(k, &c[i].w)) &&
			    ev(k, m, pass_ck_eq(S, pass_ck_slot(k, &c[i].w), rd->slot)))
				why = &c[i];
		for (int i = 0; i < nc && !why; i++)
			if (c[i].wait)
				why = &c[i];
		if (!why) {
			cx->found =
			    "nothing known: no wait before this point orders it after a write into "
			    "the slot";
		} else {
			CkInst *u = &why->wi;
			Z3_ast g = pass_ck_wait_g(k, u), ui = pass_ck_bar_index(k, u);
			Z3_ast par = pass_ck_parity(k, u);
			int64_t gv = ev(k, m, g);
			const char *b = bar_str(k, m, why->wait->bar, ui);
			IrValue *pv = expr_value(
			    why->wait->op, ir_op_group(why->wait->op, k->c->kw.parity)->item[0].e);
			cex_show(k, cx, m,
			         pv && pv->name ? ir_ctx_printf(k->c, "%%%s", pv->name)
			                        : ir_ctx_printf(k->c, "parity at line %d",
			                                        line_of(why->wait->op)),
			         par);
			if (gv < 1) {
				cx->found = "nothing, or an older tile: no copy into the slot is "
				            "known to have "
				            "landed";
				cx->culprit = ir_ctx_printf(
				    k->c,
				    "the wait on %s with parity %lld (line %d) is "
				    "vacuous here: it waits for no phase",
				    b, (long long)ev(k, m, par), line_of(why->wait->op));
			} else if (!why->w.site) {
				cx->found = ir_ctx_printf(
				    k->c,
				    "nothing known: no write into %%%s arrives on "
				    "%%%s",
				    pass_ck_vname(rd->mem), pass_ck_vname(why->wait->bar));
				cx->culprit = ir_ctx_printf(
				    k->c,
				    "the wait on %s (line %d) orders nothing that "
				    "writes %%%s",
				    b, line_of(why->wait->op), pass_ck_vname(rd->mem));
			} else {
				Label wl = write_label(k, &why->w);
				Z3_ast ws = pass_ck_slot(k, &why->w);
				Z3_ast wex = pass_ck_inst_exists(k, &why->w);
				if (ev(k, m, wex))
					cx->found = ir_ctx_printf(
					    k->c, "%s written into %s (line %d, %s)",
					    label_str(k, m, &wl), slot_str(k, m, rd->mem, ws),
					    line_of(why->w.site->op), role_it(k, m, &why->w));
				else
					cx->found =
					    "nothing: the phase it waits for carries no such write";
				if (ev(k, m, wex) && view_culprit(k, m, cx, rd, &why->w, &wl, want, as))
					goto done;
				cx->culprit = ir_ctx_printf(
				    k->c,
				    "the wait on %s with parity %lld (line %d) "
				    "waits for phase %lld of it, which does not "
				    "carry %s",
				    b, (long long)ev(k, m, par), line_of(why->wait->op),
				    (long long)(gv - 1), label_str(k, m, want));
			}
			cx->culprit_loc = why->wait->op->loc;
			provenance_notes(k, d, m, u);
		}
	} else {
		for (int i = 0; i < bads->len; i++) {
			if (!ev(k, m, IR_VEC_AT(*bads, Z3_ast, i)))
				continue;
			CkInst *v = IR_VEC_AT(*badw, CkInst *, i);
			Label vl = write_label(k, v);
			cex_inst(k, cx, m, v, false);
			cx->found = ir_ctx_printf(k->c, "%s (line %d, %s)", label_str(k, m, &vl),
			                          line_of(v->site->op), role_it(k, m, v));
			cx->culprit =
			    ir_ctx_printf(k->c,
			                  "nothing orders '%s' at line %d (%s) before the "
			                  "write of %s or after this point",
			                  ir_op_name(v->site->op->code), line_of(v->site->op),
			                  role_it(k, m, v), label_str(k, m, want));
			cx->culprit_loc = v->site->op->loc;
			if (!d->nnote)
				early_release_note(k, d, v->site, rd->in.site);
			break;
		}
	}
done:
	cex_globals(k, cx, m, fail);
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

/* holds(mem[slot], want) at the reader's point: true when proved, or when done reporting. */
static bool
holds_at_once(Ck *k, IrOp *as, const Reader *rd, const Label *want)
{
	CkPoint ap = pass_ck_point(&rd->in);
	const CkInst *view = rd->by_region ? &rd->in : NULL; /* labels may compare by region */
	IrVec cands = {0};
	/* Per element: some element e of the asserted region may be left uncovered by the writes
	 * labelled `want`, or touched by another write (writes through slices cover part of a
	 * slot). */
	Z3_ast e0 = pass_ck_fresh(S, "e"), e1 = pass_ck_fresh(S, "e");
	Z3_ast in_region = pass_ck_region_has(k, &rd->in, e0, e1);
	for (int ui = 0; ui < k->sites.len; ui++) {
		CkSite *u = site_at(k, ui);
		CkInst U;
		Z3_ast oku;
		if (u->kind != CK_WAIT || !last_before(k, u, &ap, &U, &oku))
			continue;
		Z3_ast g = pass_ck_wait_g(k, &U), i = pass_ck_bar_index(k, &U);
		Z3_ast n = pass_ck_sub(S, g, pass_ck_num(S, 1));
		Z3_ast base = pass_ck_and2(S, oku, pass_ck_le(S, pass_ck_num(S, 1), g));
		for (int wi = 0; wi < k->sites.len; wi++) {
			CkSite *w = site_at(k, wi);
			if (w->mem != rd->mem || (w->kind != CK_COPY && w->kind != CK_STORE))
				continue;
			for (int gi = 0; gi < k->groups.len; gi++) {
				CkGroup *gr = IR_VEC_AT(k->groups, CkGroup *, gi);
				if (gr->bar != u->bar || gr->role != w->role)
					continue;
				if (w->kind == CK_COPY && w->group != gr)
					continue;
				CkSite *rel = NULL;
				for (int s = 0; s < gr->nsite && !rel; s++)
					if (gr->site[s]->kind != CK_COPY)
						rel = gr->site[s];
				if (w->kind == CK_STORE && !rel)
					continue;
				for (int64_t q = 0; q < w->role->nrep && q < CK_MAX_REPLICAS; q++) {
					Z3_ast okg;
					Z3_ast r = pass_ck_num(S, q);
					Z3_ast t = pass_ck_group_iter(k, gr, r, i, n, &okg);
					Cand c = {NULL, {0}, u, U};
					Z3_ast okw = Z3_mk_true(S->z);
					if (w->kind == CK_COPY) {
						c.w = pass_ck_group_site(k, w, r, t, &okw);
					} else {
						Z3_ast okr;
						CkInst ri = pass_ck_group_site(k, rel, r, t, &okr);
						okg = pass_ck_and2(S, okg, okr);
						CkPoint rp = pass_ck_point(&ri);
						if (!last_before(k, w, &rp, &c.w, &okw))
							continue;
					}
					Label wl = write_label(k, &c.w);
					Z3_ast parts[5] = {
					    base, okg, okw,
					    pass_ck_eq(S, pass_ck_slot(k, &c.w), rd->slot),
					    label_match(k, &wl, &c.w, want, view)};
					c.ok = pass_ck_and(S, 5, parts);
					ir_vec_push(k->c->al, &cands, &c, sizeof c);
				}
			}
		}
		/* Keep the wait for the explanation even when no write matches it. */
		bool any = false;
		for (int ci = 0; ci < cands.len; ci++)
			any |= IR_VEC_AT(cands, Cand, ci).wait == u;
		if (!any) {
			Cand c = {Z3_mk_false(S->z), {0}, u, U};
			ir_vec_push(k->c->al, &cands, &c, sizeof c);
		}
	}
	/* A role barrier: the last store of another replica before the last barrier of the role
	 * before the point. */
	for (int bi = 0; bi < k->sites.len && rd->in.site->role->nrep > 1; bi++) {
		CkSite *b = site_at(k, bi);
		CkInst B;
		Z3_ast okb;
		if (b->kind != CK_BARRIER || !last_before(k, b, &ap, &B, &okb))
			continue;
		for (int wi = 0; wi < k->sites.len; wi++) {
			CkSite *w = site_at(k, wi);
			if (w->mem != rd->mem || w->kind != CK_STORE || w->role != b->role)
				continue;
			for (int64_t q = 0; q < w->role->nrep && q < CK_MAX_REPLICAS; q++) {
				CkPoint bp = pass_ck_point(&B);
				bp.r = pass_ck_num(S, q);
				Cand c = {NULL, {0}, NULL, {0}};
				Z3_ast okw;
				if (!last_before(k, w, &bp, &c.w, &okw))
					continue;
				Label wl = write_label(k, &c.w);
				c.ok = pass_ck_and(
				    S, 4,
				    (Z3_ast[]){okb, okw,
				               pass_ck_eq(S, pass_ck_slot(k, &c.w), rd->slot),
				               label_match(k, &wl, &c.w, want, view)});
				ir_vec_push(k->c->al, &cands, &c, sizeof c);
			}
		}
	}
	/* Fork: the last store of the code before ave.warp_specialize, for a point in a role. */
	CkRole *kr = &k->roles[0];
	if (rd->in.site->role != kr && kr->ws_seg >= 0) {
		CkPoint fork;
		memset(&fork, 0, sizeof fork);
		fork.role = kr;
		fork.r = pass_ck_num(S, 0);
		fork.seg = kr->ws_seg;
		for (int wi = 0; wi < k->sites.len; wi++) {
			CkSite *w = site_at(k, wi);
			Cand c = {NULL, {0}, NULL, {0}};
			Z3_ast okw;
			if (w->mem != rd->mem || w->kind != CK_STORE ||
			    !last_before(k, w, &fork, &c.w, &okw))
				continue;
			Label wl = write_label(k, &c.w);
			c.ok = pass_ck_and(
			    S, 3,
			    (Z3_ast[]){okw, pass_ck_eq(S, pass_ck_slot(k, &c.w), rd->slot),
			               label_match(k, &wl, &c.w, want, view)});
			ir_vec_push(k->c->al, &cands, &c, sizeof c);
		}
	}
	/* Program order: the last store by this thread. */
	for (int wi = 0; wi < k->sites.len; wi++) {
		CkSite *w = site_at(k, wi);
		Cand c = {NULL, {0}, NULL, {0}};
		Z3_ast okw;
		if (w->mem != rd->mem || w->kind != CK_STORE || !last_before(k, w, &ap, &c.w, &okw))
			continue;
		Label wl = write_label(k, &c.w);
		c.ok = pass_ck_and(S, 3,
		                   (Z3_ast[]){okw, pass_ck_eq(S, pass_ck_slot(k, &c.w), rd->slot),
		                              label_match(k, &wl, &c.w, want, view)});
		ir_vec_push(k->c->al, &cands, &c, sizeof c);
	}
	/* fail = for every candidate: it does not apply, or some other write is unordered. */
	IrVec conj = {0}, bads = {0}, badw = {0};
	for (int ci = 0; ci < cands.len; ci++) {
		Cand *c = &IR_VEC_AT(cands, Cand, ci);
		if (pass_ck_is_false(S, c->ok))
			continue;
		CkPoint wp = pass_ck_point(&c->w);
		IrVec alts = {0};
		for (int vi = 0; vi < k->sites.len; vi++) {
			CkSite *v = site_at(k, vi);
			if (v->mem != rd->mem || (v->kind != CK_COPY && v->kind != CK_STORE))
				continue;
			CkInst *V = ir_arena_alloc(&k->arena, sizeof *V);
			*V = pass_ck_inst(k, v, "tw");
			Label vl = write_label(k, V);
			CkPoint vland = landing_point(V), viss = pass_ck_point(V);
			Z3_ast parts[6] = {pass_ck_eq(S, pass_ck_slot(k, V), rd->slot),
			                   pass_ck_not(S, label_match(k, &vl, V, want, view)),
			                   live(k, V),
			                   pass_ck_not(S, pass_ck_hb(k, &vland, &wp)),
			                   pass_ck_not(S, pass_ck_hb(k, &ap, &viss)),
			                   pass_ck_region_has(k, V, e0, e1)};
			Z3_ast bad = pass_ck_and(S, 6, parts);
			ir_vec_push(k->c->al, &alts, &bad, sizeof bad);
			ir_vec_push(k->c->al, &bads, &bad, sizeof bad);
			ir_vec_push(k->c->al, &badw, &V, sizeof V);
		}
		Z3_ast covers = pass_ck_and2(S, c->ok, pass_ck_region_has(k, &c->w, e0, e1));
		Z3_ast term = pass_ck_or2(S, pass_ck_not(S, covers),
		                          pass_ck_or(S, alts.len, (Z3_ast *)alts.data));
		ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
		ir_vec_push(k->c->al, &conj, &term, sizeof term);
	}
	Z3_ast alive = live(k, &rd->in);
	ir_vec_push(k->c->al, &conj, &alive, sizeof alive);
	ir_vec_push(k->c->al, &conj, &in_region, sizeof in_region);
	/* Only where the assertion runs: under its `ave.if`s (a pipelined loop asserts what a
	 * slot holds only in the iterations that consume a tile). A guard the solver cannot
	 * express is left out: the assertion is then checked on more instances, never fewer. */
	bool known = true;
	Z3_ast runs = pass_ck_guard(k, &rd->in, &known);
	if (known)
		ir_vec_push(k->c->al, &conj, &runs, sizeof runs);
	Z3_ast fail = pass_ck_and(S, conj.len, (Z3_ast *)conj.data);
	ir_vec_free(k->c->al, &conj, sizeof(Z3_ast));
	bool proven, done = attempt_by_replica(k, as, &fail, "this 'holds' assertion", &proven,
	                                       rd->in.r, rd->in.site->role->nrep, rd->slot);
	if (done && !proven)
		holds_report(k, as, rd, want, fail, (Cand *)cands.data, cands.len, &bads, &badw, e0,
		             e1);
	ir_vec_free(k->c->al, &cands, sizeof(Cand));
	ir_vec_free(k->c->al, &bads, sizeof(Z3_ast));
	ir_vec_free(k->c->al, &badw, sizeof(CkInst *));
	return done;
}

static void
check_holds_at(Ck *k, IrOp *as, const Reader *rd, const Label *want)
{
	for (k->hops = shallow_hops(k);; k->hops = k->max_hops)
		if (holds_at_once(k, as, rd, want))
			break;
}

static CkSite *
site_of_op(Ck *k, IrOp *op)
{
	for (int i = 0; i < k->sites.len; i++)
		if (site_at(k, i)->op == op)
			return site_at(k, i);
	return NULL;
}

static void
check_holds(Ck *k, CkSite *as, const IrGroup *g)
{
	CkInst in = pass_ck_inst(k, as, "t");
	Label want = call_label(k, in.env, as->op, &g->item[1]);
	const IrItem *x = &g->item[0];
	Reader rd;
	memset(&rd, 0, sizeof rd);
	if (ir_item_value(as->op, x) && !x->suffix &&
	    ir_type_is_reg_tile(ir_item_value(as->op, x)->type)) {
		IrValue *v = ir_item_value(as->op, x);
		if (v->kind == IR_VAL_RESULT && v->op->code == IR_OP_TAG) {
			Label have = call_label(k, in.env, v->op, &v->op->item[1]);
			Z3_ast fail = pass_ck_not(S, label_eq(k, &have, &want));
			if (holds_query(k, as->op, fail, "this 'holds' assertion") ||
			    !pass_ck_error_once(k, as->op))
				return;
			CkInst *ins[1] = {&in};
			Z3_model m = solve_min(k, fail, ins, 1, NULL, 0);
			IrDiag *d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, as->op->loc,
			    "'holds' assertion may fail%s: '%%%s' is labelled %s, not %s",
			    msg_suffix(k, as->op), pass_ck_vname(v), label_str(k, m, &have),
			    label_str(k, m, &want));
			IrCex *cx = ir_diag_cex(k->c, d);
			cex_inst(k, cx, m, &in, true);
			cex_globals(k, cx, m, fail);
			cx->role = as->role->name;
			cx->found = label_str(k, m, &have);
			cx->expected = label_str(k, m, &want);
			cx->culprit = ir_ctx_printf(k->c, "'ave.tag' at line %d", line_of(v->op));
			cx->culprit_loc = v->op->loc;
			ir_diag_emit(k->c, d);
			pass_ck_model_free(S, m);
			return;
		}
		CkSite *ld = v->kind == IR_VAL_RESULT && v->op->code == IR_OP_SMEM_LOAD
		                 ? site_of_op(k, v->op)
		                 : NULL;
		if (!ld || ld->role != as->role || (ld->loop && ld->loop != as->loop) || !ld->mem) {
			if (pass_ck_error_once(k, as->op))
				ir_error(k->c, as->op->loc,
				         "cannot prove 'holds' on '%%%s': the checker tracks "
				         "labels of register "
				         "values made by 'ave.tag' or loaded with 'ave.smem.load' "
				         "in the same "
				         "loop body",
				         pass_ck_vname(v));
			return;
		}
		rd.in = pass_ck_inst_at(k, ld, in.r, ld->loop ? in.t : NULL);
		rd.mem = ld->mem;
		rd.slot = pass_ck_slot(k, &rd.in);
		want = call_label(k, in.env, as->op, &g->item[1]);
		check_holds_at(k, as->op, &rd, &want);
		return;
	}
	CkSite tmp = *as;
	tmp.mem = NULL;
	tmp.slot_op = NULL;
	tmp.slot_it = NULL;
	if (!ir_item_value(as->op, x) || !ir_type_is_smem(ir_item_value(as->op, x)->type)) {
		if (pass_ck_error_once(k, as->op))
			ir_error(k->c, as->op->loc,
			         "cannot prove 'holds' on global memory: labels are tracked "
			         "in shared memory and registers");
		return;
	}
	if (!pass_ck_mem(k, &tmp, as->op, x))
		return;
	if (tmp.nslice > 4) {
		if (pass_ck_error_once(k, as->op))
			ir_error(k->c, as->op->loc,
			         "cannot prove 'holds' on a view %d slices deep: the checker follows "
			         "at most 4 nested 'ave.slice'", tmp.nslice);
		return;
	}
	rd.in = in;
	rd.in.site = &tmp;
	rd.by_region = true;
	rd.mem = tmp.mem;
	rd.slot = pass_ck_slot(k, &rd.in);
	check_holds_at(k, as->op, &rd, &want);
}

static void
check_compare(Ck *k, CkSite *as, const IrGroup *g)
{
	IrKeywords *kw = &k->c->kw;
	CkInst in = pass_ck_inst(k, as, "t");
	Z3_ast a = pass_ck_expr(k, in.env, as->op, g->item[0].e);
	Z3_ast b = pass_ck_expr(k, in.env, as->op, g->item[1].e);
	Z3_ast claim = g->kw == kw->eq   ? pass_ck_eq(S, a, b)
	               : g->kw == kw->ne ? pass_ck_not(S, pass_ck_eq(S, a, b))
	               : g->kw == kw->lt ? pass_ck_lt(S, a, b)
	               : g->kw == kw->le ? pass_ck_le(S, a, b)
	               : g->kw == kw->gt ? pass_ck_lt(S, b, a)
	                                 : pass_ck_le(S, b, a);
	Z3_ast fail = pass_ck_and2(S, live(k, &in), pass_ck_not(S, claim));
	if (holds_query(k, as->op, fail, "this assertion") || !pass_ck_error_once(k, as->op))
		return;
	CkInst *ins[1] = {&in};
	Z3_ast show[2] = {a, b};
	Z3_model m = solve_min(k, fail, ins, 1, show, 2);
	IrDiag *d = ir_diag_begin(
	    k->c, IR_SEV_ERROR, as->op->loc,
	    "'%s' assertion may fail%s: the left side is %lld and the right side %lld", g->kw,
	    msg_suffix(k, as->op), (long long)ev(k, m, a), (long long)ev(k, m, b));
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, &in, true);
	cex_globals(k, cx, m, fail);
	cx->role = as->role->name;
	cx->found =
	    ir_ctx_printf(k->c, "%lld vs %lld", (long long)ev(k, m, a), (long long)ev(k, m, b));
	cx->expected = ir_ctx_printf(k->c, "%s", g->kw);
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

/* ---- symmetric memory: ready regions and reads ---- */

/* An environment for the expressions of a declaration (a chunk's, a tag function's) with its
 * parameters bound to the arguments of `call`, evaluated in `e` at `user`; other values come from
 * `parent` (NULL: none). */
static CkEnv *
call_env(Ck *k, CkEnv *parent, CkEnv *e, IrOp *user, const IrItem *decl, const IrItem *call)
{
	Z3_ast a[IR_MAX_RANK * 2];
	int n = 0;
	for (; n < decl->nparam && n < call->ncoord && n < IR_MAX_RANK * 2; n++)
		a[n] = pass_ck_expr(k, e, user, call->coord[n].e);
	return args_env(k, parent, decl, a, n);
}

/* The region of chunk `call` (evaluated with its parameters bound to the call's arguments). */
static bool
chunk_region(Ck *k, CkEnv *e, IrOp *user, const IrItem *call, Region *out)
{
	IrOp *ch = ir_symbol_lookup(k->c, user, call->s);
	if (!ch || ch->code != IR_OP_CHUNK)
		return false;
	CkEnv *pe = call_env(k, NULL, e, user, &ch->item[0], call);
	*out = region_of(k, pe, ch, &ir_op_group(ch, k->c->kw.region)->item[0], NULL);
	return true;
}

static Z3_ast
covers(Ck *k, const Region *outer, const Region *in)
{
	if (outer->buf != in->buf || outer->n != in->n)
		return Z3_mk_false(S->z);
	Z3_ast c[2 * IR_MAX_RANK];
	for (int d = 0; d < in->n; d++) {
		c[2 * d] = pass_ck_le(S, outer->lo[d], in->lo[d]);
		c[2 * d + 1] = pass_ck_le(S, pass_ck_add(S, in->lo[d], in->len[d]),
		                          pass_ck_add(S, outer->lo[d], outer->len[d]));
	}
	return pass_ck_and(S, 2 * in->n, c);
}

/* Does every rank hold its own chunk under schedule `sched`: an all_gather template, or a
 * hand-written schedule whose wave 0 is, at every rank of the module's constant world, the
 * rank's own chunk from itself? */
static bool
owns_own_chunk(Ck *k, IrOp *sched)
{
	IrGroup *t = ir_op_group(sched, k->c->kw.template_);
	if (t)
		return !strncmp(t->item[0].s, "all_gather.", 11);
	IrOp *mod = ir_op_parent_op(k->kernel);
	IrAttr *w = mod && mod->code == IR_OP_MODULE ? ir_op_attr(mod, k->c->kw.world) : NULL;
	if (!w || w->kind != IR_ATTR_INT || w->i < 1 || w->i > 4096)
		return false;
	char err[256];
	for (int64_t r = 0; r < w->i; r++) {
		IrChunkStep st;
		if (!ir_chunk_schedule_step(k->c, sched, w->i, r, 0, &st, err, sizeof err) ||
		    st.chunk != r || st.peer != r)
			return false;
	}
	return true;
}

/* Does `a` come before `b` in a's block: b itself, or the op of a's block that holds b, after
 * a? */
static bool
precedes_in_block(const IrOp *a, const IrOp *b)
{
	const IrOp *holder = b;
	while (holder && holder->parent != a->parent)
		holder = ir_op_parent_op(holder);
	if (!holder || holder == a)
		return false;
	for (const IrOp *x = a->next; x; x = x->next)
		if (x == holder)
			return true;
	return false;
}

/* Covered by the chunks this thread has waited for (last instance of each chunk.wait before the
 * point), or by the rank's own chunk under an all_gather schedule. */
static Z3_ast
ready_cover(Ck *k, const CkInst *in, const Region *r)
{
	CkPoint p = pass_ck_point(in);
	IrVec alts = {0};
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *cw = site_at(k, i);
		CkInst ci;
		Z3_ast ok;
		if (cw->kind != CK_CHUNK)
			continue;
		bool before_roles = cw->role == &k->roles[0] && cw->role != p.role;
		/* Role sites number their segments in the role's body; the kernel's top level
		 * reaches the roles at its ave.warp_specialize (ws_seg). */
		if ((cw->cond || before_roles) && !cw->loop && !cw->nested &&
		    (before_roles ? cw->seg < k->roles[0].ws_seg
		                  : cw->role == p.role &&
		                        (cw->seg < p.seg ||
		                         (cw->seg == p.seg && precedes_in_block(cw->op, in->site->op))))) {
			/* A wait outside loops before the point, under an ave.if (it covers when its
			 * condition held: the overlap pass waits only for other ranks' chunks; in
			 * the point's own block, or one holding it, it ran wherever the point runs),
			 * or before the roles (every thread passed it before entering its role). */
			bool known = true;
			ci = pass_ck_inst_at(k, cw, before_roles ? pass_ck_num(S, 0) : p.r, NULL);
			ok = cw->cond ? pass_ck_guard(k, &ci, &known) : Z3_mk_true(S->z);
			if (!known)
				continue;
		} else if (!last_before(k, cw, &p, &ci, &ok))
			continue;
		Region cr;
		if (!chunk_region(k, ci.env, cw->op, &cw->op->item[0], &cr))
			continue;
		Z3_ast alt = pass_ck_and2(S, ok, covers(k, &cr, r));
		ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
	}
	IrOp *mod = ir_op_parent_op(k->kernel);
	for (IrOp *op = mod && mod->code == IR_OP_MODULE ? mod->reg[0].block->first : NULL; op;
	     op = op->next) {
		if (op->code != IR_OP_CHUNK_SCHEDULE || !owns_own_chunk(k, op))
			continue;
		IrGroup *f = ir_op_group(op, k->c->kw.for_);
		IrOp *ch = ir_symbol_lookup(k->c, op, f->item[0].s);
		if (!ch || ch->code != IR_OP_CHUNK || ch->item[0].nparam != 1)
			continue;
		/* Rank r owns chunk r. */
		pass_ck_world(k);
		CkEnv *pe = ir_arena_alloc(&k->arena, sizeof *pe);
		ir_map_init(&pe->memo, k->c->al);
		ir_vec_push(k->c->al, &k->envs, &pe, sizeof pe);
		ir_map_put(&pe->memo, ir_hash_ptr(ch->item[0].param[0]), ch->item[0].param[0],
		           (void *)k->rank, NULL);
		Region own = region_of(k, pe, ch, &ir_op_group(ch, k->c->kw.region)->item[0], NULL);
		Z3_ast alt = covers(k, &own, r);
		ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
	}
	/* A kernel behind a collective (`gathered = @ch`): every chunk of the world is there
	 * before it starts. */
	IrAttr *ga = ir_op_attr(k->kernel, k->c->kw.gathered);
	IrOp *gch = ga && ga->kind == IR_ATTR_SYM ? ir_symbol_lookup(k->c, k->kernel, ga->s) : NULL;
	IrAttr *gw = mod && mod->code == IR_OP_MODULE ? ir_op_attr(mod, k->c->kw.world) : NULL;
	for (int64_t q = 0; gch && gch->code == IR_OP_CHUNK && gw && gw->kind == IR_ATTR_INT &&
	                    q < gw->i && q < 256; q++) {
		Z3_ast a[1] = {pass_ck_num(S, q)};
		CkEnv *pe = args_env(k, NULL, &gch->item[0], a, 1);
		Region cr = region_of(k, pe, gch, &ir_op_group(gch, k->c->kw.region)->item[0], NULL);
		Z3_ast alt = covers(k, &cr, r);
		ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
	}
	Z3_ast res = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
	ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
	return res;
}

static bool
communicates(IrOp *op, void *ud)
{
	bool *yes = ud;
	if (op->code == IR_OP_CHUNK_WAIT || op->code == IR_OP_CHUNK_SIGNAL || op->code == IR_OP_PUT ||
	    op->code == IR_OP_GET)
		*yes = true;
	return !*yes;
}

/* The local form the overlap pass rewrites: an overlap kernel without any communication. */
static bool
awaiting_overlap(Ck *k, const char *buf)
{
	IrAttr *ov = ir_op_attr(k->kernel, k->c->kw.overlap);
	IrAttr *opnd = ir_op_attr(k->kernel, k->c->kw.overlap_operand);
	if (!ov || !opnd || opnd->kind != IR_ATTR_SYM || opnd->s != buf)
		return false;
	bool yes = false;
	ir_walk_op(k->kernel, communicates, &yes);
	return !yes;
}

/* What lies outside a symmetric buffer's static bounds is no memory (a load masks it, a store
 * or put skips it): *in_b is the part of r inside; returns "r is wholly outside". */
static Z3_ast
in_bounds(Ck *k, IrOp *op, const Region *r, Region *in_b)
{
	IrOp *decl = ir_symbol_lookup(k->c, op, r->buf);
	IrType *bt = decl && decl->code == IR_OP_SYMM_ALLOC ? decl->type[0] : NULL;
	*in_b = *r;
	Z3_ast nothing = Z3_mk_false(S->z);
	for (int d = 0; bt && d < r->n && d < bt->rank; d++) {
		if (bt->dims[d] == IR_DYN)
			continue;
		Z3_ast dim = pass_ck_num(S, bt->dims[d]);
		Z3_ast hi = pass_ck_add(S, r->lo[d], r->len[d]);
		in_b->len[d] = Z3_mk_ite(S->z, pass_ck_lt(S, dim, hi), pass_ck_sub(S, dim, r->lo[d]),
		                         r->len[d]);
		nothing = pass_ck_or2(S, nothing, pass_ck_le(S, dim, r->lo[d]));
	}
	return nothing;
}

/* The instance runs: under the ave.if conditions around it (a condition beyond the solver is
 * left out, which asks more, never less). */
static Z3_ast
runs(Ck *k, const CkInst *in)
{
	bool known = true;
	Z3_ast on = pass_ck_guard(k, in, &known);
	return known ? on : Z3_mk_true(S->z);
}

/* A chunk's arguments a[0 .. n) as text, `1, 2, 3`, in model m. */
static char *
args_text(Ck *k, Z3_model m, const Z3_ast *a, int n)
{
	char buf[160];
	int len = 0;
	buf[0] = 0;
	for (int i = 0; i < n && len < 120; i++)
		len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%lld", i ? ", " : "",
		                (long long)ev(k, m, a[i]));
	return ir_ctx_strdup(k->c, buf);
}

static void
check_ready(Ck *k, CkSite *s, const IrItem *it, const IrType *tile, bool is_assert)
{
	if (!is_assert && awaiting_overlap(k, it->s))
		return;
	CkInst in = pass_ck_inst(k, s, "t");
	Region r = region_of(k, in.env, s->op, it, tile), in_b;
	Z3_ast nothing = in_bounds(k, s->op, &r, &in_b);
	Z3_ast fail = pass_ck_not(S, pass_ck_or2(S, nothing, ready_cover(k, &in, &in_b)));
	fail = pass_ck_and2(S, runs(k, &in), fail);
	if (holds_query(k, s->op, fail, "that the region is ready") ||
	    !pass_ck_error_once(k, s->op))
		return;
	CkInst *ins[1] = {&in};
	Z3_model m = solve_min(k, fail, ins, 1, r.lo, r.n);
	char *buf = region_text(k, m, &r);
	IrDiag *d = ir_diag_begin(
	    k->c, IR_SEV_ERROR, s->op->loc,
	    is_assert ? "'ready' assertion may fail%s: %s is not covered by a completed "
	                "'ave.chunk.wait' or by the rank's own chunk%s"
	              : "this read of symmetric memory%s (%s) is not covered by a completed "
	                "'ave.chunk.wait' or by the rank's own chunk%s",
	    is_assert ? msg_suffix(k, s->op) : "", buf,
	    ir_op_attr(k->kernel, k->c->kw.gathered) ? ", nor lies in one chunk its launch gathers"
	                                             : "");
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, &in, true);
	cex_globals(k, cx, m, fail);
	cx->role = s->role->name;
	cx->found = "no covering chunk wait";
	cx->expected = buf;
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

static void
check_asserts(Ck *k)
{
	IrKeywords *kw = &k->c->kw;
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *s = site_at(k, i);
		if (s->kind != CK_ASSERT)
			continue;
		for (int gi = 0; gi < s->op->ngroup; gi++) {
			const IrGroup *g = &s->op->group[gi];
			if (g->kw == kw->holds)
				check_holds(k, s, g);
			else if (g->kw == kw->ready)
				check_ready(k, s, &g->item[0], NULL, true);
			else if (g->kw != kw->msg)
				check_compare(k, s, g);
		}
	}
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *s = site_at(k, i);
		if (s->kind == CK_SYMM)
			check_ready(k, s, &s->op->item[0], s->op->res[0].type, false);
		/* A copy from symmetric memory reads it when issued (SPEC 5.9's `ready`). */
		if (s->kind == CK_COPY && s->op->item[0].kind == IR_IT_SYMBOL) {
			IrValue *dst = ir_item_value(s->op, &ir_op_group(s->op, kw->into)->item[0]);
			IrType *t = dst ? dst->type : NULL;
			if (t && t->kind == IR_TY_RING)
				t = t->elem;
			check_ready(k, s, &s->op->item[0], t, false);
		}
	}
}

/* ---- puts are published: a signal after each put covers it ---- */

static bool
signals_chunk_of(IrOp *op, void *ud)
{
	void **u = ud;
	Ck *k = u[0];
	IrStr buf = u[1];
	if (op->code == IR_OP_CHUNK_SIGNAL) {
		IrOp *ch = ir_symbol_lookup(k->c, op, op->item[0].s);
		if (ch && ch->code == IR_OP_CHUNK &&
		    ir_op_group(ch, k->c->kw.region)->item[0].s == buf)
			u[2] = op;
	}
	return !u[2];
}

/* SPEC 5.9: a chunk's signal publishes its region. A put into a buffer whose chunks the kernel
 * signals must be followed in its thread by a signal, to the put's rank, of a chunk whose
 * region covers what the put writes: an `ave.chunk.signal` after it in its block or in an
 * enclosing one (not under an `ave.if` the put is not in). Otherwise the peer may read the
 * region before the put lands (a signal sent before the put, or none). */
static void
check_put_published(Ck *k)
{
	for (int i = 0; i < k->sites.len && !k->broken; i++) {
		CkSite *s = site_at(k, i);
		if (s->kind != CK_PUT)
			continue;
		IrOp *put = s->op;
		const IrItem *into = &ir_op_group(put, k->c->kw.into)->item[0];
		if (into->kind != IR_IT_SYMBOL)
			continue;
		void *u[3] = {k, (void *)into->s, NULL};
		ir_walk_op(k->kernel, signals_chunk_of, u);
		if (!u[2])
			continue; /* no chunk of the buffer is signalled here: published otherwise */
		pass_ck_world(k);
		CkInst in = pass_ck_inst(k, s, "t");
		IrType *t = ir_op_value(put, put->item[0].opnd)->type;
		Region r = region_of(k, in.env, put, into, t), in_b;
		Z3_ast nothing = in_bounds(k, put, &r, &in_b);
		Z3_ast peer = pass_ck_expr(k, in.env, put, ir_op_group(put, k->c->kw.peer)->item[0].e);
		IrVec alts = {0};
		for (IrOp *x = put; x && x != k->kernel; x = ir_op_parent_op(x)) {
			IrOp *up = ir_op_parent_op(x);
			if (up && up->code == IR_OP_WARP_SPECIALIZE)
				break;
			for (IrOp *n = x->next; n; n = n->next) {
				Region cr;
				if (n->code != IR_OP_CHUNK_SIGNAL ||
				    !chunk_region(k, in.env, n, &n->item[0], &cr))
					continue;
				IrGroup *pg = ir_op_group(n, k->c->kw.peer);
				Z3_ast to = pg ? pass_ck_eq(S, pass_ck_expr(k, in.env, n, pg->item[0].e), peer)
				               : Z3_mk_true(S->z);
				Z3_ast alt = pass_ck_and2(S, to, covers(k, &cr, &in_b));
				ir_vec_push(k->c->al, &alts, &alt, sizeof alt);
			}
		}
		Z3_ast any = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
		ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
		Z3_ast fail = pass_ck_and(S, 3, (Z3_ast[]){pass_ck_inst_exists(k, &in), runs(k, &in),
		                                           pass_ck_not(S, pass_ck_or2(S, nothing, any))});
		fail = pass_ck_and2(S, fail, Z3_mk_eq(S->z, peer, peer));
		if (holds_query(k, put, fail, "that this put is published by a later signal") ||
		    !pass_ck_error_once(k, put))
			continue;
		CkInst *ins[1] = {&in};
		Z3_model m = solve_min(k, fail, ins, 1, r.lo, r.n);
		char *buf = region_text(k, m, &r);
		IrDiag *d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, put->loc,
		    "this put into %s of rank %lld is not published: no 'ave.chunk.signal' after it "
		    "in its thread signals a chunk covering it to that rank (the rank may read the "
		    "region before the put lands)",
		    buf, (long long)ev(k, m, peer));
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_rank_inst(k, cx, m, k->rank, &in, fail);
		cx->role = s->role->name;
		cx->found = "no later signal covering the put";
		cx->expected = ir_ctx_printf(k->c, "an 'ave.chunk.signal' of a chunk covering %s with "
		                             "peer %lld after the put", buf, (long long)ev(k, m, peer));
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* ---- tag regions: a copy tagged @L(args) reads the region @L names, a store writes it ---- */

static CkRole *role_of_op(Ck *k, IrOp *op);

/* A label whose tag function has `region(%T[lo : len, ...])` stands for that tile of %T: every
 * ave.copy.async tagged with it must read exactly it, and every ave.store tagged with it must write
 * exactly it (the same tensor, the region's lengths as its tile, and its origin for every
 * instance: other coordinates are an error with a counterexample). Without a region a copy's
 * label is only a name, as before (the verifier refuses a store's tag without one). */
static void
check_tag_region(Ck *k, CkSite *s)
{
	IrKeywords *kw = &k->c->kw;
	IrOp *op = s->op;
	IrGroup *tg = ir_op_group(op, kw->tag);
	if (!tg)
		return;
	const IrItem *call = &tg->item[0];
	IrOp *tf = ir_symbol_lookup(k->c, op, call->s);
	IrGroup *rg = tf && tf->code == IR_OP_TAG_FUNC ? ir_op_group(tf, kw->region) : NULL;
	if (!rg)
		return;
	bool store = op->code == IR_OP_STORE;
	const char *what = store ? "store" : "copy", *does = store ? "writes" : "reads";
	IrGroup *ig = ir_op_group(op, kw->into);
	const IrItem *reg = &rg->item[0], *src = store ? &ig->item[0] : &op->item[0];
	IrValue *rv = ir_item_value(tf, reg), *sv = ir_item_value(op, src);
	const char *sname = sv && sv->name ? ir_ctx_printf(k->c, "%%%s", sv->name)
	                    : src->s       ? ir_ctx_printf(k->c, "@%s", src->s)
	                                   : "?";
	const IrType *tile = store ? ir_item_value(op, &op->item[0])->type
	                           : ir_item_value(op, &ig->item[0])->type;
	if (tile->kind == IR_TY_RING)
		tile = tile->elem;
	if (rv != sv) {
		if (pass_ck_error_once(k, op))
			ir_error(k->c, op->loc,
			         "this %s is tagged '@%s' but %s '%s'; the region of '@%s' is in "
			         "'%%%s'", what, call->s, does, sname, call->s,
			         rv && rv->name ? rv->name : "?");
		return;
	}
	if (tile->rank != reg->ncoord || src->ncoord != reg->ncoord)
		return; /* the verifier's */
	for (int d = 0; d < reg->ncoord; d++)
		if (tile->dims[d] != reg->coord[d].len) {
			if (pass_ck_error_once(k, op))
				ir_error(k->c, op->loc,
				         "this %s tagged '@%s' moves a tile of %lld along dimension %d; "
				         "the region of '@%s' is %lld long there",
				         what, call->s, (long long)tile->dims[d], d, call->s,
				         (long long)reg->coord[d].len);
			return;
		}
	CkInst in = pass_ck_inst(k, s, "t");
	/* The region's expressions with the tag's parameters bound to this op's arguments; other
	 * values (the kernel's) evaluate where the op is. */
	CkEnv *pe = call_env(k, in.env, in.env, op, &tf->item[0], call);
	Z3_ast got[IR_MAX_RANK], want[IR_MAX_RANK], differ = Z3_mk_false(S->z);
	for (int d = 0; d < reg->ncoord; d++) {
		got[d] = pass_ck_expr(k, in.env, op, src->coord[d].e);
		want[d] = pass_ck_expr(k, pe, tf, reg->coord[d].e);
		differ = pass_ck_or2(S, differ, pass_ck_not(S, pass_ck_eq(S, got[d], want[d])));
	}
	/* Only where it runs: under its `ave.if`s. */
	Z3_ast fail = pass_ck_and(S, 3, (Z3_ast[]){live(k, &in), differ, runs(k, &in)});
	if (holds_query(k, op, fail,
	                store ? "that this store writes its tag's region"
	                      : "that this copy reads its tag's region") ||
	    !pass_ck_error_once(k, op))
		return;
	CkInst *ins[1] = {&in};
	Z3_ast show[2 * IR_MAX_RANK];
	for (int d = 0; d < reg->ncoord; d++) {
		show[2 * d] = got[d];
		show[2 * d + 1] = want[d];
	}
	Z3_model m = solve_min(k, fail, ins, 1, show, 2 * reg->ncoord);
	char a[160] = "", b[160] = "";
	int na = 0, nb = 0;
	for (int d = 0; d < reg->ncoord; d++) {
		na += snprintf(a + na, sizeof a - (size_t)(na < (int)sizeof a ? na : (int)sizeof a),
		               "%s%lld", d ? ", " : "", (long long)ev(k, m, got[d]));
		nb += snprintf(b + nb, sizeof b - (size_t)(nb < (int)sizeof b ? nb : (int)sizeof b),
		               "%s%lld", d ? ", " : "", (long long)ev(k, m, want[d]));
	}
	IrDiag *dg = ir_diag_begin(k->c, IR_SEV_ERROR, op->loc,
	                           "this %s tagged '@%s' may %s the wrong tile: it %s '%s' "
	                           "at [%s], but the region of '@%s' starts at [%s]",
	                           what, call->s, store ? "write" : "read", does, sname, a, call->s,
	                           b);
	IrCex *cx = ir_diag_cex(k->c, dg);
	cex_inst(k, cx, m, &in, true);
	cex_globals(k, cx, m, fail);
	cx->role = s->role->name;
	cx->found = ir_ctx_printf(k->c, "[%s]", a);
	cx->expected = ir_ctx_printf(k->c, "[%s]", b);
	ir_diag_note(k->c, dg, tf->loc, "the region of '@%s' is declared here", call->s);
	ir_diag_emit(k->c, dg);
	pass_ck_model_free(S, m);
}

static bool
collect_tagged_store(IrOp *op, void *ud)
{
	Ck *k = ud;
	if (op->code == IR_OP_STORE && ir_op_group(op, k->c->kw.tag))
		check_tag_region(k, pass_ck_site_detached(k, op, role_of_op(k, op)));
	return true;
}

static void
check_tag_regions(Ck *k)
{
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *s = site_at(k, i);
		if (s->kind == CK_COPY)
			check_tag_region(k, s);
	}
	ir_walk_op(k->kernel, collect_tagged_store, k);
}

/* ---- chunk signals: every chunk wait gets a signal, from some CTA of some rank ---- */

static bool
collect_signal(IrOp *op, void *ud)
{
	IrVec *v = ((void **)ud)[1];
	Ck *k = ((void **)ud)[0];
	if (op->code == IR_OP_CHUNK_SIGNAL)
		ir_vec_push(k->c->al, v, &op, sizeof op);
	return true;
}

static CkRole *
role_of_op(Ck *k, IrOp *op)
{
	IrOp *role = ir_role_of(op);
	for (int r = 1; r < k->nroles && role; r++)
		if (k->roles[r].op == role)
			return &k->roles[r];
	return &k->roles[0];
}

/* The arguments of the chunk call in item 0 of `op` (a wait or a signal), as terms. */
static int
chunk_args(Ck *k, CkEnv *e, IrOp *op, Z3_ast *a, int max)
{
	const IrItem *call = &op->item[0];
	int n = call->ncoord < max ? call->ncoord : max;
	for (int i = 0; i < n; i++)
		a[i] = pass_ck_expr(k, e, op, call->coord[i].e);
	return n;
}

/* A term of the launch: the world size, the grid, a scalar argument of the kernel. */
static bool
launch_term(Ck *k, Z3_ast x)
{
	if (x == k->world)
		return true;
	for (int d = 0; d < 3; d++)
		if (x == k->npid[d])
			return true;
	IrBlock *kb = k->kernel->reg[0].block;
	for (int i = 0; i < kb->narg; i++)
		if (ir_type_is_int(kb->arg[i]->type) && pass_ck_value(k, k->root, kb->arg[i]) == x)
			return true;
	return false;
}

static bool
is_global(Ck *k, Z3_ast x, Z3_ast waiter_rank)
{
	if (x == waiter_rank || launch_term(k, x))
		return true;
	for (int d = 0; d < 3; d++)
		if (x == k->pid[d])
			return true;
	return false;
}

typedef struct CaseWalk {
	Ck *k;
	Z3_ast *out;
	int n;
} CaseWalk;

static bool
case_app(void *ud, Z3_ast t, Z3_app app)
{
	CaseWalk *cw = ud;
	Ck *k = cw->k;
	Z3_context z = S->z;
	(void)t;
	if (Z3_get_app_num_args(z, app) != 3 ||
	    Z3_get_decl_kind(z, Z3_get_app_decl(z, app)) != Z3_OP_ITE)
		return true;
	Z3_ast c = Z3_get_app_arg(z, app, 0);
	IrVec cs = {0};
	pass_ck_consts(S, c, &cs);
	bool launch = cs.len > 0;
	for (int i = 0; i < cs.len && launch; i++)
		launch = launch_term(k, IR_VEC_AT(cs, Z3_ast, i));
	for (int i = 0; i < cw->n && launch; i++)
		launch = !Z3_is_eq_ast(z, cw->out[i], c);
	if (launch)
		cw->out[cw->n++] = c;
	ir_vec_free(k->c->al, &cs, sizeof(Z3_ast));
	return cw->n < 3;
}

/* The conditions of the `ite`s of f outside its quantifier that name only the launch's terms
 * (grid, world, scalar arguments), at most 3: the chunk-signal query is split on them (a
 * kernel in wave order has one, "the grid is one wave per rank"). */
static int
launch_cases(Ck *k, Z3_ast f, Z3_ast *out)
{
	CaseWalk cw = {k, out, 0};
	pass_ck_each_app(S, f, false, case_app, &cw);
	return cw.n;
}

/* One signal instance in a CTA of its own on a rank of its own. */
typedef struct SigInst {
	CkInst in;
	Z3_ast rank, pid[3], on, dest; /* dest NULL: every rank */
	Z3_ast c[8];
	int nc;
} SigInst;

/* rank and pid[d] NULL: fresh ones (anywhere in the world and the grid); given: those terms,
 * and the instance exists only where they lie in the world and the grid. */
static SigInst
sig_inst_at(Ck *k, IrOp *sop, bool *known, Z3_ast rank, Z3_ast const pid[3])
{
	SigInst x;
	memset(&x, 0, sizeof x);
	Z3_ast saved = k->rank, inside = Z3_mk_true(S->z);
	if (rank) {
		x.rank = rank;
		inside = pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), rank),
		                      pass_ck_lt(S, rank, k->world));
	} else {
		x.rank = pass_ck_fresh(S, "rank");
		pass_ck_side(S, x.rank, pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), x.rank),
		                                     pass_ck_lt(S, x.rank, k->world)));
	}
	k->rank = x.rank;
	for (int d = 0; pid && d < 3; d++)
		if ((x.pid[d] = pid[d]))
			inside = pass_ck_and(S, 3, (Z3_ast[]){inside,
			                                      pass_ck_le(S, pass_ck_num(S, 0), pid[d]),
			                                      pass_ck_lt(S, pid[d], k->npid[d])});
	CkCta save;
	pass_ck_cta_enter(k, &save, x.pid);
	x.in = pass_ck_inst(k, pass_ck_site_detached(k, sop, role_of_op(k, sop)), "ts");
	x.on = pass_ck_and(S, 3, (Z3_ast[]){inside, pass_ck_inst_exists(k, &x.in),
	                                    pass_ck_guard(k, &x.in, known)});
	x.nc = chunk_args(k, x.in.env, sop, x.c, 8);
	IrGroup *pg = ir_op_group(sop, k->c->kw.peer);
	x.dest = pg ? pass_ck_expr(k, x.in.env, sop, pg->item[0].e) : NULL;
	pass_ck_cta_leave(k, &save);
	k->rank = saved;
	return x;
}

static SigInst
sig_inst(Ck *k, IrOp *sop, bool *known)
{
	return sig_inst_at(k, sop, known, NULL, NULL);
}

/* Signal instance x runs and signals the chunk cw[0 .. nw) to rank rw. */
static Z3_ast
sig_matches(Ck *k, const SigInst *x, Z3_ast rw, const Z3_ast *cw, int nw)
{
	Z3_ast parts[11];
	int np = 0;
	parts[np++] = x->on;
	parts[np++] = x->dest ? pass_ck_eq(S, x->dest, rw) : Z3_mk_true(S->z);
	for (int a = 0; a < nw && a < x->nc && np < 11; a++)
		parts[np++] = pass_ck_eq(S, x->c[a], cw[a]);
	return pass_ck_and(S, np, parts);
}

/* Signals count epochs (SPEC 5.9): a chunk signalled twice to one rank in one launch lets a wait
 * of the next launch return on this launch's extra signal. Two distinct signal instances (any
 * ranks, CTAs, replicas, iterations) of one chunk with the same arguments to the same rank are
 * an error. */
/* Marks in used[] the grid dimension `op` reads, if it is an ave.program_id or
 * ave.num_programs. */
static void
note_dim(Ck *k, IrOp *op, bool *used)
{
	int64_t d;
	IrGroup *g;
	if (op->code == IR_OP_CTA_ID || op->code == IR_OP_NUM_CTAS) {
		used[0] = true; /* a walking kernel's CTAs are along x */
		return;
	}
	if (k->walks && op->code == IR_OP_NUM_PROGRAMS)
		return; /* the logical grid, not the CTAs */
	if ((op->code == IR_OP_PROGRAM_ID || op->code == IR_OP_NUM_PROGRAMS) &&
	    (g = ir_op_group(op, k->c->kw.dim)) && ir_expr_eval_const(g->item[0].e, &d) && d >= 0 &&
	    d < 3)
		used[d] = true;
}

static bool
mark_dims(IrOp *op, void *ud)
{
	note_dim(((void **)ud)[1], op, ((void **)ud)[0]);
	return true;
}

static void
check_signal_epochs(Ck *k, IrVec *sigs)
{
	/* As for global stores: CTAs that differ only along a grid dimension the kernel never
	 * reads are not told apart (they are the same CTA, launched again). */
	bool used[3] = {false, false, false};
	void *ud[2] = {used, k};
	ir_walk_op(k->kernel, mark_dims, ud);
	for (int i = 0; i < sigs->len && !k->broken; i++)
		for (int j = i; j < sigs->len; j++) {
			IrOp *a = IR_VEC_AT(*sigs, IrOp *, i), *b = IR_VEC_AT(*sigs, IrOp *, j);
			if (a->item[0].s != b->item[0].s)
				continue;
			pass_ck_world(k);
			bool known = true;
			SigInst x = sig_inst(k, a, &known), y = sig_inst(k, b, &known);
			if (!known)
				continue; /* the waits' check said it cannot decide */
			IrVec parts = {0};
			ir_vec_push(k->c->al, &parts, &x.on, sizeof x.on);
			ir_vec_push(k->c->al, &parts, &y.on, sizeof y.on);
			for (int c = 0; c < x.nc && c < y.nc; c++) {
				Z3_ast e = pass_ck_eq(S, x.c[c], y.c[c]);
				ir_vec_push(k->c->al, &parts, &e, sizeof e);
			}
			if (x.dest && y.dest) {
				Z3_ast e = pass_ck_eq(S, x.dest, y.dest);
				ir_vec_push(k->c->al, &parts, &e, sizeof e);
			}
			if (a == b) {
				/* The same op: distinct instances differ in rank, CTA or an iteration. */
				IrVec diff = {0};
				Z3_ast d = pass_ck_not(S, pass_ck_eq(S, x.rank, y.rank));
				ir_vec_push(k->c->al, &diff, &d, sizeof d);
				for (int dd = 0; dd < 3; dd++)
					if (used[dd]) {
						d = pass_ck_not(S, pass_ck_eq(S, x.pid[dd], y.pid[dd]));
						ir_vec_push(k->c->al, &diff, &d, sizeof d);
					}
				d = pass_ck_not(S, pass_ck_eq(S, x.in.r, y.in.r));
				ir_vec_push(k->c->al, &diff, &d, sizeof d);
				for (CkEnv *ex = x.in.env, *ey = y.in.env; ex && ey;
				     ex = ex->parent, ey = ey->parent)
					if (ex->iter && ey->iter) {
						d = pass_ck_not(S, pass_ck_eq(S, ex->iter, ey->iter));
						ir_vec_push(k->c->al, &diff, &d, sizeof d);
					}
				Z3_ast any = pass_ck_or(S, diff.len, (Z3_ast *)diff.data);
				ir_vec_push(k->c->al, &parts, &any, sizeof any);
				ir_vec_free(k->c->al, &diff, sizeof(Z3_ast));
			}
			for (int dd = 0; dd < 3; dd++)
				if (!used[dd]) {
					Z3_ast e = pass_ck_eq(S, x.pid[dd], y.pid[dd]);
					ir_vec_push(k->c->al, &parts, &e, sizeof e);
				}
			Z3_ast dest = x.dest ? x.dest : y.dest ? y.dest : pass_ck_num(S, 0);
			Z3_ast fail = pass_ck_and(S, parts.len, (Z3_ast *)parts.data);
			ir_vec_free(k->c->al, &parts, sizeof(Z3_ast));
			for (int c = 0; c < x.nc; c++)
				fail = pass_ck_and2(S, fail, Z3_mk_eq(S->z, x.c[c], x.c[c]));
			fail = pass_ck_and2(S, fail, Z3_mk_eq(S->z, dest, dest));
			if (holds_query(k, b, fail, "that each chunk is signalled once per rank") ||
			    !pass_ck_error_once(k, b))
				continue;
			CkInst *ins[2] = {&x.in, &y.in};
			Z3_model m = solve_min(k, fail, ins, 2, x.c, x.nc);
			char *args = args_text(k, m, x.c, x.nc);
			IrDiag *d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, b->loc,
			    "chunk @%s(%s) may be signalled twice to rank %lld in one launch (%s): "
			    "signals count launches, so a wait of the next launch returns on this "
			    "launch's second signal",
			    a->item[0].s, args, (long long)ev(k, m, dest),
			    a == b ? "by two executions of this signal"
			           : ir_ctx_printf(k->c, "here and at line %d", line_of(a)));
			IrCex *cx = ir_diag_cex(k->c, d);
			cex_show(k, cx, m, "rank", x.rank);
			cex_show(k, cx, m, "other rank", y.rank);
			cex_show(k, cx, m, "world", k->world);
			cex_inst(k, cx, m, &x.in, true);
			cex_inst(k, cx, m, &y.in, false);
			cx->role = x.in.site->role->name;
			cx->found = "two signals of the chunk to one rank";
			cx->expected = "one signal of each chunk to each rank per launch";
			ir_diag_emit(k->c, d);
			pass_ck_model_free(S, m);
		}
}

/* The chunk-signal query of one wait: some instance of the wait (wpart: it exists, its guard,
 * its chunk's arguments cw) for which no signal instance matches (any, quantified over what the
 * signals introduce); every term of `from` replaced by the one of `to` (a case), simplified. */
typedef struct SigQuery {
	Z3_ast any, *wpart, *cw;
	int nw;
	Z3_ast rw;
	CkSubst sub;
	int64_t world; /* a constant world of at most 16 ranks, else 0 */
	Z3_ast hints; /* ground instances of the signals (see signal_hints), or NULL */
} SigQuery;

static Z3_ast
signal_query(Ck *k, const SigQuery *q, bool *quant)
{
	int nw = q->nw;
	Z3_ast wpart[2 + 8], cw[8];
	for (int a = 0; a < 2 + nw; a++)
		wpart[a] = pass_ck_subst(S, &q->sub, q->wpart[a]);
	for (int a = 0; a < nw; a++)
		cw[a] = pass_ck_subst(S, &q->sub, q->cw[a]);
	Z3_ast wf = pass_ck_and(S, 2, wpart);
	/* Bound: what the signals' instances introduce, not the waiter's terms or the
	 * launch's (grid, world, arguments). A case's values go in before the side conditions
	 * are gathered, so the variables a case leaves unused drop out with theirs. */
	Z3_ast inner = pass_ck_closure_subst(S, q->any, &q->sub);
	IrVec mine = {0}, theirs = {0}, bound = {0};
	Z3_ast wall = pass_ck_closure_subst(S, pass_ck_and(S, 2 + nw, wpart), &q->sub);
	pass_ck_consts(S, wall, &mine);
	for (int a = 0; a < nw; a++)
		pass_ck_consts(S, pass_ck_closure_subst(S, Z3_mk_eq(S->z, cw[a], cw[a]), &q->sub),
		               &mine);
	pass_ck_consts(S, inner, &theirs);
	for (int a = 0; a < theirs.len; a++) {
		Z3_ast x = IR_VEC_AT(theirs, Z3_ast, a);
		bool skip = is_global(k, x, q->rw);
		for (int b = 0; b < mine.len && !skip; b++)
			skip = IR_VEC_AT(mine, Z3_ast, b) == x;
		if (!skip) {
			Z3_ast ap = (Z3_ast)Z3_to_app(S->z, x);
			ir_vec_push(k->c->al, &bound, &ap, sizeof ap);
		} else {
			/* Free in the quantifier: its domain (a grid of at least one CTA)
			 * holds outside it too. */
			wf = pass_ck_and2(S, wf, Z3_mk_eq(S->z, x, x));
		}
	}
	Z3_ast none = pass_ck_not(S, inner);
	*quant = bound.len > 0;
	if (bound.len)
		none = Z3_mk_forall_const(S->z, 0, (unsigned)bound.len, (Z3_app *)bound.data, 0,
		                          NULL, none);
	ir_vec_free(k->c->al, &mine, sizeof(Z3_ast));
	ir_vec_free(k->c->al, &theirs, sizeof(Z3_ast));
	ir_vec_free(k->c->al, &bound, sizeof(Z3_ast));
	/* Mention the chunk's arguments so that the model gives them values. */
	Z3_ast fail = pass_ck_and2(S, wf, none);
	for (int a = 0; a < nw; a++)
		fail = pass_ck_and2(S, fail, Z3_mk_eq(S->z, cw[a], cw[a]));
	for (unsigned i = 0; i < q->sub.n; i++)
		fail = pass_ck_and2(S, fail, Z3_mk_eq(S->z, q->sub.from[i], q->sub.to[i]));
	return fail;
}

/* Is e `x == c` (either way round) with x a constant of the launch and c a numeral? */
static bool
const_eq(Ck *k, Z3_ast e, Z3_ast *x, Z3_ast *c)
{
	Z3_context z = S->z;
	if (Z3_get_ast_kind(z, e) != Z3_APP_AST)
		return false;
	Z3_app app = Z3_to_app(z, e);
	if (Z3_get_decl_kind(z, Z3_get_app_decl(z, app)) != Z3_OP_EQ ||
	    Z3_get_app_num_args(z, app) != 2)
		return false;
	Z3_ast a = Z3_get_app_arg(z, app, 0), b = Z3_get_app_arg(z, app, 1);
	int64_t v;
	if (pass_ck_is_num(S, a, &v)) {
		Z3_ast t = a;
		a = b;
		b = t;
	}
	if (!pass_ck_is_num(S, b, &v) || !launch_term(k, a))
		return false;
	*x = a;
	*c = b;
	return true;
}

/* Does m (with its side conditions) bring only quotients, the launch's terms and the
 * variables in ok? */
static bool
hint_vars_ok(Ck *k, Z3_ast m, const IrVec *ok)
{
	IrVec vs = {0};
	pass_ck_consts(S, pass_ck_closure(S, m), &vs);
	bool good = true;
	for (int i = 0; i < vs.len && good; i++) {
		Z3_ast x = IR_VEC_AT(vs, Z3_ast, i);
		bool known = launch_term(k, x);
		for (int j = 0; j < ok->len && !known; j++)
			known = IR_VEC_AT(*ok, Z3_ast, j) == x;
		good = known || pass_ck_is_quotient(S, x);
	}
	ir_vec_free(k->c->al, &vs, sizeof(Z3_ast));
	return good;
}

/* Ground instances of the signals, as hints for a proof: "no signal matches" holds for every
 * instance, so it holds for these, and saying so outright spares the solver the search for the
 * one that matters (an instantiation by terms of the waiter, which model-based instantiation
 * finds only value by value). Each signal at every rank of a constant world, in the CTAs whose
 * program ids are the waiter's, 0, or the waiter's plus or minus a divisor the kernel divides
 * that program id by (a wave of tiles before or after). NULL when none or too many. */
static Z3_ast
signal_hints(Ck *k, const SigQuery *q, IrOp *const *sops, int nsop)
{
	int64_t world = q->world;
	Z3_ast rw = q->rw;
	Z3_ast cand[3][10];
	int nc[3], total = (int)world * nsop;
	for (int d = 0; d < 3; d++) {
		nc[d] = 1;
		cand[d][0] = NULL;
		if (!k->pid[d] || !k->npid[d])
			continue;
		cand[d][0] = k->pid[d];
		cand[d][nc[d]++] = pass_ck_num(S, 0);
		int64_t div[4];
		int nd = pass_ck_divisors(S, k->pid[d], div, 4);
		for (int i = 0; i < nd; i++) {
			cand[d][nc[d]++] = pass_ck_sub(S, k->pid[d], pass_ck_num(S, div[i]));
			cand[d][nc[d]++] = pass_ck_add(S, k->pid[d], pass_ck_num(S, div[i]));
		}
		total *= nc[d];
	}
	if (!world || !nsop || total > 256)
		return NULL;
	/* An instance is stated outright, so the side conditions of its variables hold in the
	 * query: it may bring only variables whose side conditions always hold for some value
	 * (quotients) besides the waiter's and the launch's. A variable with a domain that can be
	 * empty (an iteration of a loop that may not run) would make the query unsatisfiable by
	 * itself, a proof of anything: such an instance is left out. */
	IrVec ok = {0};
	pass_ck_consts(S, pass_ck_closure(S, pass_ck_and(S, 2 + q->nw, q->wpart)), &ok);
	IrVec neg = {0};
	for (int i = 0; i < nsop; i++)
		for (int64_t v = 0; v < world; v++)
			for (int c0 = 0; c0 < nc[0]; c0++)
				for (int c1 = 0; c1 < nc[1]; c1++)
					for (int c2 = 0; c2 < nc[2]; c2++) {
						Z3_ast pid[3] = {cand[0][c0], cand[1][c1], cand[2][c2]};
						bool known = true;
						SigInst x = sig_inst_at(k, sops[i], &known, pass_ck_num(S, v), pid);
						if (!known)
							continue;
						Z3_ast m = sig_matches(k, &x, rw, q->cw, q->nw);
						if (!hint_vars_ok(k, m, &ok))
							continue;
						m = pass_ck_not(S, m);
						ir_vec_push(k->c->al, &neg, &m, sizeof m);
					}
	Z3_ast h = neg.len ? pass_ck_and(S, neg.len, (Z3_ast *)neg.data) : NULL;
	ir_vec_free(k->c->al, &neg, sizeof(Z3_ast));
	ir_vec_free(k->c->al, &ok, sizeof(Z3_ast));
	return h;
}

/* How the split into cases ended. */
typedef enum CaseRes {
	CASES_PROVED,    /* every case unsat */
	CASES_FAILED,    /* a case is satisfiable: *failp is it, with its model */
	CASES_UNDECIDED, /* no case failed, some could not be decided: *failp is the first */
	CASES_NONE,      /* no split: the query as a whole is still to be asked */
} CaseRes;

/* A proof of the chunk-signal query split into cases, each small enough for Z3's
 * model-based quantifier instantiation: the launch's conditions in `fail` (a grid of one wave
 * per rank, or not) each true and false, times the waiter's rank at each value of a constant
 * world (up to 16). Cases cover every assignment, so unsat in each is unsat. A case the
 * instantiation does not settle goes the general way (elimination) too. A case found
 * satisfiable ends the split (its model, confirmed, is one of the whole query: the case asserts
 * its values); a case neither way decides is remembered and the split goes on, since a later
 * case may fail, and the answer is then "undecided", never a proof (a second try of that case
 * alone, which may succeed where the first timed out, would say nothing of the cases after
 * it). */
static CaseRes
proved_by_cases(Ck *k, SigQuery *q, Z3_ast *failp, bool *quantp, Z3_model *modelp)
{
	Z3_ast fail = *failp;
	Z3_ast cases[3];
	int nc = launch_cases(k, fail, cases);
	int nr = (int)q->world;
	if (!nc && !nr)
		return pass_ck_prove_quantified(S, fail, NULL, NULL) == CK_UNSAT ? CASES_PROVED
		                                                                  : CASES_NONE;
	CaseRes res = CASES_PROVED;
	for (unsigned m = 0; m < 1u << nc && res != CASES_FAILED; m++)
		for (int v = 0; v < (nr ? nr : 1) && res != CASES_FAILED; v++) {
			CkSubst *sub = &q->sub;
			sub->n = 0;
			for (int i = 0; i < nc; i++, sub->n++) {
				sub->from[sub->n] = cases[i];
				sub->to[sub->n] = m >> i & 1 ? Z3_mk_true(S->z) : Z3_mk_false(S->z);
			}
			/* A true `x == c` also puts c for x (a grid of exactly one wave per rank:
			 * the program ids are bounded by a constant then). */
			for (int i = 0; i < nc; i++) {
				Z3_ast x, c;
				if (m >> i & 1 && const_eq(k, cases[i], &x, &c) && sub->n < CK_SUBST_MAX - 1) {
					sub->from[sub->n] = x;
					sub->to[sub->n++] = c;
				}
			}
			if (nr) {
				sub->from[sub->n] = q->rw;
				sub->to[sub->n++] = pass_ck_num(S, v);
			}
			pass_ck_subst_close(S, sub);
			bool quant;
			Z3_ast f = signal_query(k, q, &quant);
			if (q->hints)
				f = pass_ck_and2(S, f, pass_ck_subst(S, sub, q->hints));
			Z3_model cand = NULL;
			CkRes r = quant ? pass_ck_prove_quantified(S, f, sub, &cand)
			                : pass_ck_check(S, f, &cand);
			if (r == CK_SAT && quant) {
				/* A model the instantiation found, confirmed by a query without the
				 * quantifier: a counterexample of the whole query. */
				Z3_ast inner = pass_ck_closure_subst(S, q->any, sub);
				if (!pass_ck_confirm_none(S, cand, f, sub, inner)) {
					r = CK_UNKNOWN;
					pass_ck_model_free(S, cand);
					cand = NULL;
				}
			}
			if (r == CK_UNKNOWN && quant) {
				/* Not proved that way (which says nothing about a model): the general
				 * way on this case before going on; a case it proves is proved. */
				S->quantified = true;
				r = pass_ck_check(S, f, &cand);
				S->quantified = false;
			}
			if (r == CK_SAT) {
				*failp = f;
				*quantp = quant;
				*modelp = cand;
				res = CASES_FAILED;
			} else if (r == CK_UNKNOWN && res == CASES_PROVED) {
				*failp = f;
				*quantp = quant;
				res = CASES_UNDECIDED;
			}
		}
	q->sub.n = 0;
	return res;
}

/* A wait on the chunk a kernel's launch gathers (`gathered = @ch`): the launch signals chunk q
 * once on every rank but q, for q in [0, world); a wait for the rank's own chunk, or one outside
 * the world, never returns. */
static void
check_gathered_wait(Ck *k, CkSite *w)
{
	pass_ck_world(k);
	CkInst in = pass_ck_inst(k, w, "t");
	bool known = true;
	Z3_ast gw = pass_ck_guard(k, &in, &known);
	Z3_ast cw[8];
	int nw = chunk_args(k, in.env, w->op, cw, 8);
	if (!known || nw != 1) {
		if (pass_ck_error_once(k, w->op))
			ir_error(k->c, w->op->loc,
			         "cannot check that this 'ave.chunk.wait' on a chunk the launch gathers "
			         "gets a signal: %s", nw != 1 ? "the chunk does not take one index"
			                                      : "a condition around it is beyond the "
			                                        "solver");
		return;
	}
	Z3_ast bad[3] = {pass_ck_eq(S, cw[0], k->rank), pass_ck_lt(S, cw[0], pass_ck_num(S, 0)),
	                 pass_ck_le(S, k->world, cw[0])};
	Z3_ast fail = pass_ck_and2(S, pass_ck_and2(S, pass_ck_inst_exists(k, &in), gw),
	                           pass_ck_or(S, 3, bad));
	if (holds_query(k, w->op, fail, "that this chunk wait gets a signal") ||
	    !pass_ck_error_once(k, w->op))
		return;
	CkInst *ins[1] = {&in};
	Z3_model m = solve_min(k, fail, ins, 1, cw, 1);
	if (!m)
		return;
	int64_t c = ev(k, m, cw[0]), r = ev(k, m, k->rank);
	IrDiag *d = ir_diag_begin(
	    k->c, IR_SEV_ERROR, w->op->loc,
	    "this 'ave.chunk.wait' for @%s(%lld) on rank %lld never returns: the launch gathers "
	    "chunk q into every rank but q (gathered = @%s), and %s", w->op->item[0].s,
	    (long long)c, (long long)r, w->op->item[0].s,
	    c == r ? "this is the rank's own chunk (guard the wait with the chunk != rank)"
	           : "this chunk is outside the world");
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_rank_inst(k, cx, m, k->rank, &in, fail);
	cx->role = w->role->name;
	cx->found = "no signal of the chunk to this rank";
	cx->expected = "a wait for another rank's chunk";
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

/* SPEC 5.9: an `ave.chunk.wait @ch(c)` on rank r returns once chunk c has been signalled to r.
 * For each wait instance (any rank, CTA, replica, iteration) the solver looks for one for which
 * no signal instance of any CTA of any rank (a quantified instance: its rank, program ids,
 * replica and iterations bound) names chunk c and rank r (its peer, or no peer: every rank). */
static void
check_chunk_signals(Ck *k)
{
	IrVec sigs = {0};
	void *ud[2] = {k, &sigs};
	ir_walk_op(k->kernel, collect_signal, ud);
	for (int i = 0; i < k->sites.len && !k->broken; i++) {
		CkSite *w = site_at(k, i);
		if (w->kind != CK_CHUNK)
			continue;
		/* A chunk this kernel never signals is published by another kernel or a collective:
		 * nothing here to match. */
		bool signalled = false;
		for (int j = 0; j < sigs.len && !signalled; j++)
			signalled = IR_VEC_AT(sigs, IrOp *, j)->item[0].s == w->op->item[0].s;
		IrAttr *ga = ir_op_attr(k->kernel, k->c->kw.gathered);
		if (!signalled && ga && ga->kind == IR_ATTR_SYM && ga->s == w->op->item[0].s) {
			check_gathered_wait(k, w);
			continue;
		}
		if (!signalled)
			continue;
		pass_ck_world(k);
		Z3_ast rw = k->rank;
		CkInst in = pass_ck_inst(k, w, "t");
		bool known = true;
		Z3_ast gw = pass_ck_guard(k, &in, &known);
		Z3_ast cw[8];
		int nw = chunk_args(k, in.env, w->op, cw, 8);
		/* The signals, each in a CTA of its own on a rank of its own. */
		IrVec alts = {0};
		IrOp *sops[8]; /* the first 8: the hints' (see signal_hints) */
		int nsop = 0;
		for (int j = 0; j < sigs.len && known; j++) {
			IrOp *sop = IR_VEC_AT(sigs, IrOp *, j);
			if (sop->item[0].s != w->op->item[0].s)
				continue;
			SigInst x = sig_inst(k, sop, &known);
			Z3_ast m = sig_matches(k, &x, rw, cw, nw);
			ir_vec_push(k->c->al, &alts, &m, sizeof m);
			if (nsop < 8)
				sops[nsop++] = sop;
		}
		if (!known) {
			if (pass_ck_error_once(k, w->op))
				ir_error(k->c, w->op->loc,
				         "cannot check that this 'ave.chunk.wait' gets a signal: a "
				         "condition around it or around a signal is beyond the solver");
			ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
			continue;
		}
		SigQuery q;
		memset(&q, 0, sizeof q);
		q.rw = rw;
		q.nw = nw;
		q.cw = cw;
		int64_t wn;
		q.world = pass_ck_is_num(S, k->world, &wn) && wn >= 1 && wn <= 16 ? wn : 0;
		q.any = pass_ck_or(S, alts.len, (Z3_ast *)alts.data);
		ir_vec_free(k->c->al, &alts, sizeof(Z3_ast));
		Z3_ast wpart[2 + 8] = {pass_ck_inst_exists(k, &in), gw};
		for (int a = 0; a < nw; a++)
			wpart[2 + a] = pass_ck_eq(S, cw[a], cw[a]);
		/* The waiter's rank (and so the world size) is in the outer formula, with its
		 * domain, even where the chunk does not depend on it. */
		wpart[1] = pass_ck_and2(S, gw, Z3_mk_eq(S->z, rw, rw));
		q.wpart = wpart;
		bool quant;
		Z3_ast fail = signal_query(k, &q, &quant);
		if (quant)
			q.hints = signal_hints(k, &q, sops, nsop);
		/* A failing case of the split comes with its model (confirmed, not minimized:
		 * minimizing under the quantifier takes the general way, seconds for a world of
		 * four, and its answer would depend on the machine's speed). */
		Z3_model m = NULL;
		CaseRes cr = quant ? proved_by_cases(k, &q, &fail, &quant, &m) : CASES_NONE;
		if (cr == CASES_PROVED)
			continue;
		if (cr == CASES_UNDECIDED) {
			undecided(k, w->op, "that this chunk wait gets a signal");
			continue;
		}
		S->quantified = quant;
		bool holds = cr == CASES_FAILED
		                 ? false
		                 : holds_query(k, w->op, fail, "that this chunk wait gets a signal");
		if (holds || !pass_ck_error_once(k, w->op)) {
			S->quantified = false;
			pass_ck_model_free(S, m);
			continue;
		}
		CkInst *ins[1] = {&in};
		if (!m)
			m = solve_min(k, fail, ins, 1, cw, nw);
		S->quantified = false;
		if (!m) {
			ir_error(k->c, w->op->loc,
			         "this 'ave.chunk.wait' may never return: the solver finds an instance "
			         "of it that no 'ave.chunk.signal' of any CTA on any rank signals, but "
			         "gives no model of it to show (a deadlock across ranks)");
			continue;
		}
		char *args = args_text(k, m, cw, nw);
		IrDiag *d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, w->op->loc,
		    "this 'ave.chunk.wait' for @%s(%s) on rank %lld never returns: no "
		    "'ave.chunk.signal' of any CTA on any rank signals that chunk to rank %lld (a "
		    "deadlock across ranks)",
		    w->op->item[0].s, args, (long long)ev(k, m, rw), (long long)ev(k, m, rw));
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_rank_inst(k, cx, m, rw, &in, fail);
		for (int dd = 0; dd < 3; dd++)
			if (k->npid[dd] && pass_ck_mentions(S, pass_ck_closure(S, fail), k->npid[dd]))
				cex_show(k, cx, m, ir_ctx_printf(k->c, "num_programs(%d)", dd),
				         k->npid[dd]);
		cx->role = w->role->name;
		int64_t g0 = k->npid[0] ? ev(k, m, k->npid[0]) : 0, wv = ev(k, m, k->world);
		if (k->npid[0] && g0 < wv)
			ir_diag_note(k->c, d, w->op->loc,
			             "with %lld CTAs for %lld ranks: a kernel whose CTA p signals rank "
			             "p needs a grid of at least the world size, which nothing in the "
			             "kernel states; signal every rank from each CTA (a loop over the "
			             "peers) to work with any grid",
			             (long long)g0, (long long)wv);
		cx->found = "no signal of the chunk to this rank";
		cx->expected = ir_ctx_printf(k->c, "an 'ave.chunk.signal @%s(%s)' with peer %lld (or "
		                                   "no peer) on some rank",
		                             w->op->item[0].s, args, (long long)ev(k, m, rw));
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
	check_signal_epochs(k, &sigs);
	ir_vec_free(k->c->al, &sigs, sizeof(IrOp *));
}

/* ---- chunk signal slots: inside their buffer ---- */

static const char *pid_name(Ck *k, int d, const char *suffix);

/* The signal slot of the chunk named in item 0 of `op` (a wait or a signal), at arguments
 * a[0 .. n), executed on `rank` in the CTA `pid` when `on` holds, lies inside its buffer's static bounds for every
 * instance: a slot outside is memory of something else (the interpreter stops there; a GPU
 * would count a signal into it, or wait on it). */
static void
check_slot(Ck *k, IrOp *op, CkInst *in, Z3_ast on, Z3_ast rank, Z3_ast const pid[3], Z3_ast *a,
           int n)
{
	IrOp *ch = ir_symbol_lookup(k->c, op, op->item[0].s);
	IrGroup *sg = ch && ch->code == IR_OP_CHUNK ? ir_op_group(ch, k->c->kw.signal) : NULL;
	if (!sg)
		return;
	if (ch->item[0].nparam > n) {
		if (pass_ck_error_once(k, op))
			ir_error(k->c, op->loc,
			         "cannot check that the signal slot of chunk @%s lies inside its buffer: "
			         "a chunk of more than 8 parameters is beyond the checker",
			         op->item[0].s);
		return;
	}
	Region r = region_of(k, args_env(k, NULL, &ch->item[0], a, n), ch, &sg->item[0], NULL);
	IrOp *decl = ir_symbol_lookup(k->c, ch, r.buf);
	IrType *bt = decl && decl->code == IR_OP_SYMM_ALLOC ? decl->type[0] : NULL;
	if (!bt)
		return;
	Z3_ast out = Z3_mk_false(S->z);
	for (int d = 0; d < r.n && d < bt->rank; d++) {
		out = pass_ck_or2(S, out, pass_ck_lt(S, r.lo[d], pass_ck_num(S, 0)));
		if (bt->dims[d] != IR_DYN)
			out = pass_ck_or2(S, out, pass_ck_lt(S, pass_ck_num(S, bt->dims[d]),
			                                    pass_ck_add(S, r.lo[d], r.len[d])));
	}
	Z3_ast fail = pass_ck_and2(S, on, out);
	if (holds_query(k, op, fail, "that the chunk's signal slot lies inside its buffer") ||
	    !pass_ck_error_once(k, op))
		return;
	CkInst *ins[1] = {in};
	Z3_model m = solve_min(k, fail, ins, 1, a, n);
	char *args = args_text(k, m, a, n);
	char *slot = region_text(k, m, &r);
	char shape[64];
	int ns = 0;
	for (int d = 0; d < bt->rank && ns < 48; d++)
		ns += bt->dims[d] == IR_DYN
		          ? snprintf(shape + ns, sizeof shape - (size_t)ns, "%s?", d ? "x" : "")
		          : snprintf(shape + ns, sizeof shape - (size_t)ns, "%s%lld", d ? "x" : "",
		                     (long long)bt->dims[d]);
	IrDiag *d = ir_diag_begin(k->c, IR_SEV_ERROR, op->loc,
	                          "the signal slot of chunk @%s(%s), %s, lies outside @%s "
	                          "(%s): a signal there would count in other memory",
	                          op->item[0].s, args, slot, r.buf, shape);
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_show(k, cx, m, "rank", rank);
	Z3_ast fc = pass_ck_closure(S, fail);
	for (int dd = 0; dd < 3; dd++)
		if (pid[dd] && pass_ck_mentions(S, fc, pid[dd]))
			cex_var(k, cx, pid_name(k, dd, ""), ev(k, m, pid[dd]));
	cex_inst(k, cx, m, in, true);
	cex_globals(k, cx, m, fail);
	cx->role = in->site->role->name;
	cx->found = slot;
	cx->expected = ir_ctx_printf(k->c, "a slot inside @%s (%s)", r.buf, shape);
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

static void
check_signal_slots(Ck *k)
{
	for (int i = 0; i < k->sites.len && !k->broken; i++) {
		CkSite *w = site_at(k, i);
		if (w->kind != CK_CHUNK)
			continue;
		pass_ck_world(k);
		CkInst in = pass_ck_inst(k, w, "t");
		Z3_ast a[8];
		int n = chunk_args(k, in.env, w->op, a, 8);
		check_slot(k, w->op, &in, pass_ck_and2(S, pass_ck_inst_exists(k, &in), runs(k, &in)),
		           k->rank, k->pid, a, n);
	}
	IrVec sigs = {0};
	void *ud[2] = {k, &sigs};
	ir_walk_op(k->kernel, collect_signal, ud);
	for (int i = 0; i < sigs.len && !k->broken; i++) {
		IrOp *sop = IR_VEC_AT(sigs, IrOp *, i);
		bool known = true;
		pass_ck_world(k);
		SigInst x = sig_inst(k, sop, &known);
		/* A guard beyond the solver is left out: the slot is asked of more instances. */
		if (!known)
			x.on = pass_ck_and2(S, pass_ck_inst_exists(k, &x.in),
			                    Z3_mk_eq(S->z, x.rank, x.rank));
		check_slot(k, sop, &x.in, x.on, x.rank, x.pid, x.c, x.nc);
	}
	ir_vec_free(k->c->al, &sigs, sizeof(IrOp *));
}

/* ---- global stores: no two CTAs or role replicas write the same element ---- */

/* One instance of an ave.store into a global tensor argument: the element coordinates of its
 * tile's origin, when it executes (its iterations exist and its ave.if guards hold), and whether
 * everything it depends on is known to the solver (else it is not checked: an unknown value
 * could differ between the CTAs). */
typedef struct GWrite {
	CkInst in;
	Z3_ast pid[3];
	Z3_ast c[IR_MAX_RANK];
	Z3_ast on;
	bool known;
	const char *unknown; /* the name of a value it depends on that the solver cannot express */
	const char *partial; /* a quotient or remainder by a value it depends on, or NULL */
	Z3_ast gs_x[8];      /* the variables of its grid-stride loops, and their grid dimension */
	int gs_dim[8], ngs;
} GWrite;

/* The tensor argument an ave.store writes, or NULL when the store is not checked. */
static IrValue *
gstore_dst(Ck *k, IrOp *op)
{
	if (op->code != IR_OP_STORE)
		return NULL;
	IrGroup *g = ir_op_group(op, k->c->kw.into);
	const IrItem *it = g ? &g->item[0] : NULL;
	if (!it || it->kind != IR_IT_VALUE || !it->suffix)
		return NULL;
	IrValue *t = ir_item_value(op, it), *v = ir_item_value(op, &op->item[0]);
	if (!t || !v || t->kind != IR_VAL_ARG || ir_block_parent_op(t->block) != k->kernel ||
	    t->type->kind != IR_TY_TENSOR || t->type->space != IR_SPACE_GLOBAL ||
	    v->type->kind != IR_TY_TILE || v->type->rank != t->type->rank ||
	    it->ncoord != t->type->rank)
		return NULL;
	for (int d = 0; d < it->ncoord; d++)
		if (it->coord[d].len >= 0 || v->type->dims[d] == IR_DYN)
			return NULL;
	return t;
}

static GWrite
gwrite(Ck *k, CkSite *s)
{
	GWrite w;
	memset(&w, 0, sizeof w);
	CkCta save;
	pass_ck_cta_enter(k, &save, w.pid);
	int before = k->nopaque, pbefore = k->npartial;
	k->opaque_name = NULL;
	k->partial_name = NULL;
	k->gstride = true;
	k->ngs = 0;
	w.in = pass_ck_inst(k, s, "t");
	const IrItem *it = &ir_op_group(s->op, k->c->kw.into)->item[0];
	for (int d = 0; d < it->ncoord; d++)
		w.c[d] = pass_ck_expr(k, w.in.env, s->op, it->coord[d].e);
	w.on = pass_ck_inst_exists(k, &w.in);
	for (IrOp *child = s->op, *p = ir_op_parent_op(s->op); p && p != s->role->op;
	     child = p, p = ir_op_parent_op(p)) {
		if (p->code != IR_OP_IF)
			continue;
		const IrItem *ci = &p->item[0];
		Z3_ast cond = ci->kind == IR_IT_VALUE && !ci->suffix
		                  ? pass_ck_value(k, w.in.env, ir_item_value(p, ci))
		                  : NULL;
		if (!cond) {
			k->nopaque++;
			k->opaque_name = "the condition of an 'ave.if'";
			continue;
		}
		Z3_ast taken = pass_ck_not(S, pass_ck_eq(S, cond, pass_ck_num(S, 0)));
		bool then = p->nreg > 0 && child->parent == p->reg[0].block;
		w.on = pass_ck_and2(S, w.on, then ? taken : pass_ck_not(S, taken));
	}
	w.known = k->nopaque == before;
	w.unknown = k->opaque_name;
	w.partial = k->npartial != pbefore ? k->partial_name : NULL;
	w.ngs = k->ngs;
	for (int i = 0; i < k->ngs; i++) {
		w.gs_x[i] = k->gs_x[i];
		w.gs_dim[i] = k->gs_dim[i];
	}
	k->gstride = false;
	pass_ck_cta_leave(k, &save);
	return w;
}

/* The store cannot be decided: an error under `ave check`, a warning in the pipeline. */
static void
gstore_cannot(Ck *k, IrOp *op, const char *why)
{
	if (!pass_ck_error_once(k, op))
		return;
	if (k->opts->gstore_strict)
		ir_error(k->c, op->loc, "cannot check this store for data races on global memory: %s",
		         why);
	else
		ir_warning(k->c, op->loc,
		           "cannot check this store for data races on global memory: %s", why);
}

/* A counterexample that rests on a product, quotient or remainder of values may not be real
 * (the solver knows only some of their arithmetic): "cannot check", not a race. */
static bool
gstore_partial(Ck *k, IrOp *op, const GWrite *a, const GWrite *b)
{
	const char *p = a->partial ? a->partial : b->partial;
	if (!p)
		return false;
	gstore_cannot(k, op,
	              ir_ctx_printf(k->c,
	                            "its coordinates or guard depend on '%%%s', a product, "
	                            "quotient or remainder of values, whose arithmetic the "
	                            "solver knows only in part: it found no proof, and a "
	                            "counterexample may not be real",
	                            p));
	return true;
}

/* Whether a role orders its replicas with ave.barrier (then two of them may write in turn). */
static bool
role_has_barrier(Ck *k, CkRole *r)
{
	for (int i = 0; i < k->sites.len; i++)
		if (site_at(k, i)->kind == CK_BARRIER && site_at(k, i)->role == r)
			return true;
	return false;
}

/* How a counterexample names program id d: the value's name, with `suffix` (a prime for the
 * second instance). */
static const char *
pid_name(Ck *k, int d, const char *suffix)
{
	return k->pid_val[d] ? ir_ctx_printf(k->c, "%%%s%s", pass_ck_vname(k->pid_val[d]), suffix)
	                     : ir_ctx_printf(k->c, "program_id(%d)%s", d, suffix);
}

/* Counterexample variables of the second instance: its loop variables, replica and program
 * ids, primed. */
static void
gcex_other(Ck *k, IrCex *x, Z3_model m, const GWrite *w, const bool *used)
{
	for (CkEnv *e = w->in.env; e; e = e->parent)
		if (e->scope && e->scope->code == IR_OP_FOR) {
			IrValue *iv = e->scope->reg[0].block->arg[0];
			cex_var(k, x, ir_ctx_printf(k->c, "%%%s'", pass_ck_vname(iv)),
			        ev(k, m, pass_ck_value(k, e, iv)));
		}
	if (w->in.site->role->nrep > 1)
		cex_var(k, x,
		        w->in.site->role->rep_val
		            ? ir_ctx_printf(k->c, "%%%s'", pass_ck_vname(w->in.site->role->rep_val))
		            : "replica'",
		        ev(k, m, w->in.r));
	for (int d = 0; d < 3; d++)
		if (used[d])
			cex_var(k, x, pid_name(k, d, "'"), ev(k, m, w->pid[d]));
}

static void
gstore_report(Ck *k, Z3_ast fail, GWrite *a, GWrite *b, IrValue *dst, Z3_ast *pt, int rank,
              bool cta, const bool *used, bool addr)
{
	IrOp *at = b->in.site->op;
	if (!pass_ck_error_once(k, at))
		return;
	CkInst *ins[2] = {&a->in, &b->in};
	Z3_ast obj[6];
	int no = 0;
	for (int d = 0; d < 3; d++)
		if (used[d]) {
			obj[no++] = a->pid[d];
			obj[no++] = b->pid[d];
		}
	Z3_model m = solve_min_with(k, fail, ins, 2, pt, rank, obj, no);
	if (!m) {
		undecided(k, at, "that no two instances of this store write the same element");
		return;
	}
	char el[256];
	int n = snprintf(el, sizeof el, "[");
	for (int d = 0; d < rank && n < (int)sizeof el - 24; d++)
		n += snprintf(el + n, sizeof el - (size_t)n, "%s%lld", d ? ", " : "",
		              (long long)ev(k, m, pt[d]));
	snprintf(el + n, sizeof el - (size_t)n, "]%s",
	         addr ? " (or another element at its address: the type's strides make "
	                "coordinates share addresses)"
	              : "");
	const char *who = cta ? "two CTAs" : "two replicas of the role";
	IrDiag *d;
	if (a->in.site == b->in.site)
		d = ir_diag_begin(k->c, IR_SEV_ERROR, at->loc,
		                  "%s may both write element %s of '%%%s' with this store: a data "
		                  "race on global memory",
		                  who, el, pass_ck_vname(dst));
	else
		d = ir_diag_begin(k->c, IR_SEV_ERROR, at->loc,
		                  "this store and the store at line %d may both write element %s of "
		                  "'%%%s' from %s: a data race on global memory",
		                  line_of(a->in.site->op), el, pass_ck_vname(dst), who);
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, &a->in, true);
	for (int i = 0; i < 3; i++)
		if (used[i])
			cex_var(k, cx, pid_name(k, i, ""), ev(k, m, a->pid[i]));
	gcex_other(k, cx, m, b, used);
	cex_globals(k, cx, m, fail);
	cx->role = b->in.site->role->name;
	cx->found = ir_ctx_printf(k->c, "element %s written by both", el);
	cx->expected = cta ? "the CTAs' stores to be disjoint (each element written by one CTA)"
	                   : "the replicas' stores to be disjoint (each element written by one "
	                     "replica)";
	/* The loops around the store whose variables the counterexample names: their bounds and
	 * steps decide which tiles an instance writes (a tile loop stepping by 1 instead of by the
	 * grid). */
	for (IrOp *p = ir_op_parent_op(at); p && p != k->kernel; p = ir_op_parent_op(p)) {
		if (p->code != IR_OP_FOR || !p->reg[0].block->narg)
			continue;
		IrValue *iv = p->reg[0].block->arg[0];
		const char *nm = ir_ctx_printf(k->c, "%%%s", pass_ck_vname(iv));
		for (int i = 0; i < cx->nvar; i++)
			if (!strcmp(cx->var[i].name, nm)) {
				ir_diag_note(k->c, d, p->loc,
				             "the store runs in this loop over '%s': its bounds and step "
				             "decide which tiles each instance writes",
				             nm);
				break;
			}
	}
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

/* One pair of stores: can two distinct instances (other CTAs, or, for one store in a
 * replicated role, other replicas of one CTA) write a common in-bounds element? Program ids
 * that neither store depends on are taken equal: a kernel that does not use a grid dimension
 * is launched with one CTA along it. */
static void
gstore_pair(Ck *k, CkSite *sa, CkSite *sb, IrValue *dst, const bool *kernel_dims)
{
	GWrite a = gwrite(k, sa), b = gwrite(k, sb);
	if (!a.known || !b.known) {
		GWrite *u = !b.known ? &b : &a;
		gstore_cannot(
		    k, u->in.site->op,
		    ir_ctx_printf(k->c,
		                  "its coordinates or guard depend on %s%s%s, which the solver "
		                  "cannot express (a product of two values, a loaded value, a "
		                  "loop-carried value without closed form, a loop whose step is "
		                  "neither a constant nor the grid-stride 'ave.num_programs' from "
		                  "'ave.program_id')",
		                  u->unknown ? "'%" : "a value", u->unknown ? u->unknown : "",
		                  u->unknown ? "'" : ""));
		return;
	}
	IrOp *oa = sa->op, *ob = sb->op;
	IrType *ta = ir_item_value(oa, &oa->item[0])->type, *tb = ir_item_value(ob, &ob->item[0])->type;
	int rank = dst->type->rank;
	Z3_ast parts[8 * IR_MAX_RANK + 8], pt[IR_MAX_RANK];
	int np = 0;
	/* Static strides written in the type may make two coordinates share an address (a stride
	 * smaller than the next dimension's extent, a zero stride): compare addresses then, each
	 * instance writing its own in-bounds element. Row-major contiguous strides, and `?`
	 * strides (taken to be a layout without overlap, docs/invariants.md), compare
	 * coordinates. */
	const IrType *tt = dst->type;
	bool by_addr = tt->strides != NULL;
	bool contiguous = tt->strides != NULL && tt->strides[rank - 1] == 1;
	for (int d = 0; d < rank && by_addr; d++) {
		by_addr = tt->strides[d] != IR_DYN;
		if (d + 1 < rank)
			contiguous &= tt->dims[d + 1] != IR_DYN &&
			              tt->strides[d] == tt->strides[d + 1] * tt->dims[d + 1];
	}
	by_addr &= !contiguous;
	if (by_addr) {
		Z3_ast aa = pass_ck_num(S, 0), ab = pass_ck_num(S, 0);
		for (int d = 0; d < rank; d++) {
			Z3_ast xa = pass_ck_fresh(S, "ea"), xb = pass_ck_fresh(S, "eb");
			const GWrite *w[2] = {&a, &b};
			Z3_ast x[2] = {xa, xb};
			const IrType *tw[2] = {ta, tb};
			for (int q = 0; q < 2; q++) {
				parts[np++] = pass_ck_le(S, w[q]->c[d], x[q]);
				parts[np++] = pass_ck_lt(
				    S, x[q], pass_ck_add(S, w[q]->c[d], pass_ck_num(S, tw[q]->dims[d])));
				parts[np++] = pass_ck_le(S, pass_ck_num(S, 0), x[q]);
				if (tt->dims[d] != IR_DYN)
					parts[np++] = pass_ck_lt(S, x[q], pass_ck_num(S, tt->dims[d]));
			}
			aa = pass_ck_add(S, aa, pass_ck_mulc(S, xa, tt->strides[d]));
			ab = pass_ck_add(S, ab, pass_ck_mulc(S, xb, tt->strides[d]));
			pt[d] = xa;
		}
		parts[np++] = pass_ck_eq(S, aa, ab);
	}
	for (int d = 0; d < rank && !by_addr; d++) {
		Z3_ast ea = pass_ck_add(S, a.c[d], pass_ck_num(S, ta->dims[d]));
		Z3_ast eb = pass_ck_add(S, b.c[d], pass_ck_num(S, tb->dims[d]));
		pt[d] = pass_ck_ite(S, pass_ck_le(S, a.c[d], b.c[d]), b.c[d], a.c[d]);
		parts[np++] = pass_ck_lt(S, pt[d], ea);
		parts[np++] = pass_ck_lt(S, pt[d], eb);
		parts[np++] = pass_ck_le(S, pass_ck_num(S, 0), pt[d]);
		if (dst->type->dims[d] != IR_DYN)
			parts[np++] = pass_ck_lt(S, pt[d], pass_ck_num(S, dst->type->dims[d]));
	}
	parts[np++] = a.on;
	parts[np++] = b.on;
	/* Grid-stride loops along one dimension: x = pid + j * num_programs, so two CTAs that
	 * differ along it never share x (the only fact the check needs of x beyond its range). */
	for (int i = 0; i < a.ngs; i++)
		for (int j = 0; j < b.ngs && np < 8 * IR_MAX_RANK + 8; j++)
			if (a.gs_dim[i] == b.gs_dim[j]) {
				int d = a.gs_dim[i];
				parts[np++] = pass_ck_or2(
				    S, pass_ck_not(S, pass_ck_eq(S, a.gs_x[i], b.gs_x[j])),
				    pass_ck_eq(S, a.pid[d], b.pid[d]));
			}
	Z3_ast both = pass_ck_and(S, np, parts);
	/* Other CTAs: some used program id differs (unused ones are equal). */
	Z3_ast dif[3], eq[3], unused[3];
	bool used[3];
	int nd = 0, ne = 0, nu = 0;
	for (int d = 0; d < 3; d++) {
		Z3_ast same = pass_ck_eq(S, a.pid[d], b.pid[d]);
		used[d] = kernel_dims[d] || pass_ck_depends(S, both, a.pid[d]) ||
		          pass_ck_depends(S, both, b.pid[d]);
		if (used[d])
			dif[nd++] = pass_ck_not(S, same);
		else
			unused[nu++] = same;
		eq[ne++] = same;
	}
	Z3_ast cta = nd ? pass_ck_and2(S, pass_ck_or(S, nd, dif), pass_ck_and(S, nu, unused))
	                : Z3_mk_false(S->z);
	Z3_ast fail = pass_ck_and2(S, both, cta);
	bool proven;
	if (attempt(k, ob, fail, "that no two CTAs write the same element", &proven) && !proven) {
		if (!gstore_partial(k, ob, &a, &b))
			gstore_report(k, fail, &a, &b, dst, pt, rank, true, used, by_addr);
		return;
	}
	if (sa->role != sb->role || sa->role->nrep < 2)
		return;
	/* One CTA, two replicas of the role. */
	Z3_ast rep = pass_ck_and2(S, pass_ck_and(S, ne, eq),
	                          pass_ck_not(S, pass_ck_eq(S, a.in.r, b.in.r)));
	fail = pass_ck_and2(S, both, rep);
	if (!attempt(k, ob, fail, "that no two replicas write the same element", &proven) ||
	    proven)
		return;
	/* With ave.barrier in the role, the replicas may take turns writing an element: not
	 * a race the check can rule in or out. */
	if (role_has_barrier(k, sa->role)) {
		gstore_cannot(k, ob,
		              ir_ctx_printf(k->c,
		                            "two replicas of %s may write the same element, and "
		                            "the role's 'ave.barrier' may or may not order them",
		                            sa->role->name));
		return;
	}
	if (!gstore_partial(k, ob, &a, &b))
		gstore_report(k, fail, &a, &b, dst, pt, rank, false, used, by_addr);
}

/* The kernel's checked global stores (as sites of their roles) and the grid dimensions it reads
 * (program_id or num_programs along them). */
typedef struct GStores {
	Ck *k;
	IrVec sites; /* CkSite* */
	bool dims[3];
} GStores;

static bool
collect_gstores(IrOp *op, void *ud)
{
	GStores *gs = ud;
	Ck *k = gs->k;
	note_dim(k, op, gs->dims);
	if (!gstore_dst(k, op)) {
		/* A store into global memory that the check does not model is said so. */
		IrGroup *g = op->code == IR_OP_STORE ? ir_op_group(op, k->c->kw.into) : NULL;
		const IrItem *it = g ? &g->item[0] : NULL;
		IrValue *t = it && it->kind == IR_IT_VALUE ? ir_item_value(op, it) : NULL;
		if (t && t->type->kind == IR_TY_TENSOR && t->type->space == IR_SPACE_GLOBAL)
			gstore_cannot(k, op,
			              "the check models stores of a tile with static dimensions "
			              "at one coordinate per dimension into a tensor argument of "
			              "the kernel");
		return true;
	}
	CkSite *s = pass_ck_site_detached(k, op, role_of_op(k, op));
	ir_vec_push(k->c->al, &gs->sites, &s, sizeof s);
	return true;
}

/* Beyond SPEC §5.8's list (docs/invariants.md): global stores of distinct CTAs, and of distinct
 * replicas of a role, write disjoint elements. */
static void
check_global_stores(Ck *k)
{
	GStores gs = {k, {0}, {false, false, false}};
	k->hops = k->max_hops;
	ir_walk_op(k->kernel, collect_gstores, &gs);
	for (int i = 0; i < gs.sites.len; i++)
		for (int j = 0; j <= i; j++) {
			CkSite *a = IR_VEC_AT(gs.sites, CkSite *, j), *b = IR_VEC_AT(gs.sites, CkSite *, i);
			IrValue *da = gstore_dst(k, a->op), *db = gstore_dst(k, b->op);
			if (da == db)
				gstore_pair(k, a, b, da, gs.dims);
		}
	ir_vec_free(k->c->al, &gs.sites, sizeof(CkSite *));
}

/* ---- fences: shared memory stored, then read by an async MMA (SPEC 5.6) ---- */

/* Ops of a role body in program (text) order. */
typedef struct Order {
	Ck *k;
	IrMap idx; /* IrOp* -> index + 1 */
	int n;
	IrVec fences; /* IrOp*: ave.fence async_shared */
	IrVec releases; /* IrOp*: arrivals, expect_tx, ave.barrier (what lets another role read) */
} Order;

static bool
order_op(IrOp *op, void *ud)
{
	Order *o = ud;
	ir_map_put(&o->idx, ir_hash_ptr(op), op, (void *)(uintptr_t)++o->n, NULL);
	if (op->code == IR_OP_FENCE && op->mode == o->k->c->kw.async_shared)
		ir_vec_push(o->k->c->al, &o->fences, &op, sizeof op);
	if (op->code == IR_OP_MBAR_ARRIVE || op->code == IR_OP_MBAR_EXPECT_TX ||
	    op->code == IR_OP_BARRIER)
		ir_vec_push(o->k->c->al, &o->releases, &op, sizeof op);
	return true;
}

static int
order_of(const Order *o, const IrOp *op)
{
	return (int)(uintptr_t)ir_map_get(&o->idx, ir_hash_ptr(op), op, NULL);
}

/* The innermost ave.for holding op, below `top` (NULL: none). */
static IrOp *
loop_of(IrOp *op, const IrOp *top)
{
	for (IrOp *p = ir_op_parent_op(op); p && p != top; p = ir_op_parent_op(p))
		if (p->code == IR_OP_FOR)
			return p;
	return NULL;
}

/* Whether op lies in block b (in one of its ops, at any depth). */
static bool
within(const IrOp *op, const IrBlock *b)
{
	for (; op; op = ir_op_parent_op(op))
		if (op->parent == b)
			return true;
	return false;
}

/* Whether fence f runs whenever store s does: every ave.if and ave.for around f (below the
 * role) is also around s, s in the same branch of it as f (a fence in the other branch of an
 * ave.if never runs with the store). */
static bool
runs_with(IrOp *f, IrOp *s, const IrOp *top)
{
	for (IrOp *c = f, *p = ir_op_parent_op(f); p && p != top; c = p, p = ir_op_parent_op(p))
		if ((p->code == IR_OP_IF || p->code == IR_OP_FOR) && !within(s, c->parent))
			return false;
	return true;
}

/* A fence of the writer's role between store w and the async read x: after w in the writer's
 * program (in the same iteration of w's innermost loop), and, when x is in the same role,
 * before x (or, for x reading an earlier iteration's store, anywhere in that loop after w or
 * before x). */
static bool
fenced(Ck *k, Order *o, CkSite *w, CkSite *x)
{
	IrOp *top = w->role->op;
	int iw = order_of(o, w->op), ix = x->role == w->role ? order_of(o, x->op) : 0;
	IrOp *lw = loop_of(w->op, top);
	/* For another role's read, the fence must also come before the writer's first release
	 * after the store (in the store's iteration): the release is what lets the reader in. */
	int rel = INT32_MAX;
	for (int i = 0; i < o->releases.len; i++) {
		IrOp *r = IR_VEC_AT(o->releases, IrOp *, i);
		int ri = order_of(o, r);
		if (ri > iw && ri < rel && (!lw || ir_op_is_ancestor(lw, r)))
			rel = ri;
	}
	for (int i = 0; i < o->fences.len; i++) {
		IrOp *f = IR_VEC_AT(o->fences, IrOp *, i);
		int fi = order_of(o, f);
		if (!runs_with(f, w->op, top))
			continue;
		bool in_lw = !lw || ir_op_is_ancestor(lw, f);
		if (!ix) {
			/* Another role reads: the fence follows the store in its iteration (the kernel
			 * code before ave.warp_specialize: before the fork). */
			if (fi > iw && fi < rel && in_lw &&
			    (w->role != &k->roles[0] || w->role->ws_seg < 0 || !x->role ||
			     fi < order_of(o, ir_op_parent_op(x->role->op))))
				return true;
		} else if (iw < ix) {
			if (fi > iw && fi < ix)
				return true;
		} else if (in_lw && lw && ir_op_is_ancestor(lw, x->op) && (fi > iw || fi < ix)) {
			return true;
		}
	}
	return false;
}

/* Every shared-memory buffer read is written somewhere in the kernel (an ave.smem.store or an
 * ave.copy.async into it, in any role): a read of one nothing writes sees what the memory held
 * before the launch, whatever the order of the rest. */
static void
check_written(Ck *k)
{
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *r = site_at(k, i);
		if (r->kind != CK_READ || !r->mem)
			continue;
		bool written = false;
		for (int j = 0; j < k->sites.len && !written; j++) {
			CkSite *w = site_at(k, j);
			written = (w->kind == CK_STORE || w->kind == CK_COPY) && w->mem == r->mem;
		}
		if (written || !pass_ck_error_once(k, r->op))
			continue;
		IrOp *def = r->mem->kind == IR_VAL_RESULT ? r->mem->op : NULL;
		IrDiag *d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, r->op->loc,
		    "this '%s' reads shared memory '%%%s' that no op of the kernel writes (no "
		    "'ave.smem.store' or 'ave.copy.async' into it): it reads what the memory held "
		    "before the launch",
		    ir_op_name(r->op->code), pass_ck_vname(r->mem));
		if (def)
			ir_diag_note(k->c, d, def->loc, "'%%%s' is allocated here",
			             pass_ck_vname(r->mem));
		ir_diag_emit(k->c, d);
	}
}

static void
check_fences(Ck *k)
{
	for (int a = 0; a < k->sites.len; a++) {
		CkSite *w = site_at(k, a);
		if (w->kind != CK_STORE || !w->mem)
			continue;
		Order o = {k, {0}, 0, {0}, {0}};
		ir_map_init(&o.idx, k->c->al);
		IrBlock *body = w->role->body;
		ir_walk(body, order_op, &o);
		for (int b = 0; b < k->sites.len; b++) {
			CkSite *x = site_at(k, b);
			if (x->kind != CK_READ || x->op->code != IR_OP_MMA_ASYNC || x->mem != w->mem)
				continue;
			if (fenced(k, &o, w, x))
				continue;
			/* Only when the read can see this store's slot. */
			CkInst wi = pass_ck_inst(k, w, "t"), xi = pass_ck_inst(k, x, "t");
			Z3_ast meet = pass_ck_and(
			    S, 3,
			    (Z3_ast[]){pass_ck_eq(S, pass_ck_slot(k, &wi), pass_ck_slot(k, &xi)),
			               pass_ck_regions_meet(k, &wi, &xi), pass_ck_inst_exists(k, &xi)});
			if (pass_ck_check(S, meet, NULL) == CK_UNSAT || !pass_ck_error_once(k, x->op))
				continue;
			/* The counterexample: a store and a read of the same slot and elements. */
			CkInst *ins[2] = {&xi, &wi};
			Z3_ast show[2] = {pass_ck_slot(k, &xi), pass_ck_slot(k, &wi)};
			Z3_model m = solve_min(k, meet, ins, 2, show, 2);
			IrDiag *d = ir_diag_begin(
			    k->c, IR_SEV_ERROR, x->op->loc,
			    "'ave.mma.async' reads '%%%s', written by 'ave.smem.store' (line %d, %s) "
			    "with no 'ave.fence async_shared' between them (SPEC 5.6)",
			    pass_ck_vname(x->mem), line_of(w->op), w->role->name);
			if (m) {
				IrCex *cx = ir_diag_cex(k->c, d);
				cex_inst(k, cx, m, &xi, true);
				cex_inst(k, cx, m, &wi, false);
				cex_globals(k, cx, m, meet);
				cx->role = x->role->name;
				cx->slot = slot_str(k, m, x->mem, show[0]);
			}
			ir_diag_note(k->c, d, w->op->loc,
			             "put 'ave.fence async_shared' after this store, in %s, before the "
			             "read",
			             w->role->name);
			ir_diag_emit(k->c, d);
			if (m)
				pass_ck_model_free(S, m);
		}
		ir_vec_free(k->c->al, &o.fences, sizeof(IrOp *));
		ir_vec_free(k->c->al, &o.releases, sizeof(IrOp *));
		ir_map_free(&o.idx);
	}
}

/* ave.barrier in a replicated role pairs the replicas' executions one to one, iteration for
 * iteration of the role's loop (the happens-before edges use that). Under ave.if or in a loop,
 * that holds when every replica runs it in the same iterations (the same conditions, the same
 * trip count): proved here, else a deadlock with the replica that waits, the one that never
 * comes, and the iteration. */
static void
check_barrier_pairing(Ck *k)
{
	for (int i = 0; i < k->sites.len && !k->broken; i++) {
		CkSite *s = site_at(k, i);
		if (s->kind != CK_BARRIER || s->role->nrep < 2 || (!s->cond && !s->loop))
			continue;
		CkInst a = pass_ck_inst(k, s, "b");
		Z3_ast r2 = pass_ck_fresh(S, "r");
		pass_ck_side(S, r2, pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), r2),
		                                 pass_ck_lt(S, r2, pass_ck_num(S, s->role->nrep))));
		CkInst b = pass_ck_inst_at(k, s, r2, a.t);
		bool ka = true, kb = true;
		Z3_ast ga = pass_ck_and2(S, pass_ck_inst_exists(k, &a), pass_ck_guard(k, &a, &ka));
		Z3_ast gb = pass_ck_and2(S, pass_ck_inst_exists(k, &b), pass_ck_guard(k, &b, &kb));
		if (!ka || !kb) {
			if (pass_ck_error_once(k, s->op))
				ir_error(k->c, s->op->loc,
				         "cannot check that the replicas of role %s all pass this "
				         "'ave.barrier': its condition is beyond the solver",
				         s->role->name);
			k->broken = true;
			continue;
		}
		Z3_ast fail = pass_ck_and2(S, ga, pass_ck_not(S, gb));
		if (holds_query(k, s->op, fail, "that the replicas pass this barrier alike"))
			continue;
		k->broken = true; /* the orderings it would give do not exist */
		if (!pass_ck_error_once(k, s->op))
			continue;
		CkInst *ins[2] = {&a, &b};
		Z3_model m = solve_min(k, fail, ins, 2, NULL, 0);
		IrDiag *d = ir_diag_begin(
		    k->c, IR_SEV_ERROR, s->op->loc,
		    "deadlock: replica %lld of role %s waits at this 'ave.barrier', which replica "
		    "%lld does not reach in the same iteration",
		    (long long)ev(k, m, a.r), s->role->name, (long long)ev(k, m, r2));
		IrCex *cx = ir_diag_cex(k->c, d);
		cex_inst(k, cx, m, &a, true);
		cex_var(k, cx, "replica that never arrives", ev(k, m, r2));
		cex_globals(k, cx, m, fail);
		cx->role = s->role->name;
		ir_diag_emit(k->c, d);
		pass_ck_model_free(S, m);
	}
}

/* A wait whose parity, in one residue class of its barrier index, neither alternates once per
 * use of the barrier nor stays constant (the phase analysis stopped there). The form it follows
 * longest (the latest first failure) is taken as the one meant; the first use that leaves it is
 * the counterexample. */
static void
report_bad_parity(Ck *k)
{
	CkSite *w = k->bad_parity;
	int64_t p = w->wf ? w->wf->period : 1, c = k->bad_parity_class;
	if (!pass_ck_error_once(k, w->op))
		return;
	const CkForm *forms = pass_ck_forms;
	CkInst in = pass_ck_inst(k, w, "t");
	Z3_ast j = pass_ck_fresh(S, "j");
	pass_ck_side(S, j, pass_ck_le(S, pass_ck_num(S, 0), j));
	Z3_ast t = pass_ck_add(S, pass_ck_mulc(S, j, p), pass_ck_num(S, c));
	CkInst ic = pass_ck_inst_at(k, w, in.r, t);
	Z3_ast exists = pass_ck_inst_exists(k, &ic), pc = pass_ck_parity(k, &ic);
	/* An alternating form that holds for a use or more is preferred: the protocol alternates. */
	int best = -1;
	int64_t best_j = -1;
	bool best_lin = false;
	for (int i = 0; i < CK_NFORMS; i++) {
		Z3_ast bad = pass_ck_and2(
		    S, exists,
		    pass_ck_not(S, pass_ck_eq(S, pc, pass_ck_form_parity(k, forms[i].lin,
		                                                         forms[i].val, j))));
		Z3_model m = NULL;
		int64_t v;
		bool lin = false;
		if (pass_ck_minimize(S, bad, 1, &j, &m) == CK_SAT && pass_ck_eval(S, m, j, &v)) {
			lin = forms[i].lin && v >= 1;
			if ((lin && !best_lin) || (lin == best_lin && v > best_j)) {
				best = i;
				best_j = v;
				best_lin = lin;
			}
		}
		if (m)
			pass_ck_model_free(S, m);
	}
	Z3_model m = NULL;
	Z3_ast want = NULL, fail = NULL, bi = pass_ck_bar_index(k, &ic);
	if (best >= 0) {
		want = pass_ck_form_parity(k, forms[best].lin, forms[best].val, j);
		fail = pass_ck_and(S, 3,
		                   (Z3_ast[]){exists, pass_ck_not(S, pass_ck_eq(S, pc, want)),
		                              pass_ck_eq(S, j, pass_ck_num(S, best_j))});
		CkInst *ins[1] = {&ic};
		Z3_ast show[3] = {pc, want, bi};
		m = solve_min(k, fail, ins, 1, show, 3);
	}
	if (!m) {
		ir_error(k->c, w->op->loc,
		         "cannot tell which phase of '%%%s' this wait waits for: its parity neither "
		         "alternates once per use of the barrier nor stays constant",
		         pass_ck_vname(w->bar));
		return;
	}
	int64_t got = ir_mod(ev(k, m, pc), 2), need = ir_mod(ev(k, m, want), 2);
	const char *bar = bar_str(k, m, w->bar, bi);
	IrDiag *d;
	if (forms[best].lin)
		d = ir_diag_begin(k->c, IR_SEV_ERROR, w->op->loc,
		                  "this wait's parity is %lld at use %lld of %s, which needs %lld: it "
		                  "alternates once per use of the barrier before that use, not after "
		                  "(a wait for a phase that has completed returns at once; one for a "
		                  "phase that never comes hangs)",
		                  (long long)got, (long long)best_j, bar, (long long)need);
	else
		d = ir_diag_begin(k->c, IR_SEV_ERROR, w->op->loc,
		                  "this wait's parity is %lld at use %lld of %s, but %lld at every use "
		                  "before: it neither alternates once per use of the barrier nor stays "
		                  "constant",
		                  (long long)got, (long long)best_j, bar, (long long)need);
	IrCex *cx = ir_diag_cex(k->c, d);
	cex_inst(k, cx, m, &ic, true);
	cex_globals(k, cx, m, fail);
	cx->role = w->role->name;
	IrGroup *pg = ir_op_group(w->op, k->c->kw.parity);
	IrValue *pv = pg ? expr_value(w->op, pg->item[0].e) : NULL;
	if (pv && pv->kind == IR_VAL_RESULT && pv->op) {
		cx->culprit = ir_ctx_printf(k->c, "the parity '%%%s' computed at line %d",
		                            pass_ck_vname(pv), line_of(pv->op));
		cx->culprit_loc = pv->op->loc;
	}
	provenance_notes(k, d, m, &ic);
	ir_diag_emit(k->c, d);
	pass_ck_model_free(S, m);
}

void
pass_ck_check_kernel(Ck *k)
{
	/* Each check is followed by a look at the constant folding: once it overflowed, the queries
	 * answered nothing and the kernel is reported as beyond the analysis. */
	static void (*const checks[])(Ck *) = {
	    check_tail_orphans, check_waits_complete, check_deadlock_order, check_asserts,
	    check_phase_totals, check_no_overflow,    check_races,          check_ambiguity,
	    check_fences,       check_in_flight_at_exit, check_chunk_signals, check_put_published,
	    check_signal_slots,
	    check_tag_regions, check_written,
	};
	check_barrier_pairing(k);
	check_ranges(k);
	if (pass_ck_overflowed(k) || k->broken || !pass_ck_phases(k) || pass_ck_overflowed(k)) {
		if (k->bad_parity && !pass_ck_overflowed(k))
			report_bad_parity(k);
		return;
	}
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		checks[i](k);
		if (pass_ck_overflowed(k))
			return;
	}
	if (!k->broken)
		check_global_stores(k);
	pass_ck_overflowed(k);
}
