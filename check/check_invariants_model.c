/* check_invariants_model.c — what the invariant checker reasons about: the roles of a kernel, the
 * ops that synchronize or touch shared memory (sites), SSA values as Z3 terms in one instance of
 * their enclosing role replica and loop iterations, closed forms of loop-carried scalars, and the
 * phase structure of barriers (which phase each arrival feeds, which phases each wait needs). */
#include <string.h>


#include "check_internal.h"

#define S (k->smt)

const char *
pass_ck_vname(const IrValue *v)
{
	return v && v->name ? v->name : "<unnamed>";
}

bool
pass_ck_error_once(Ck *k, IrOp *op)
{
	uint64_t h = ir_hash_ptr(op);
	if (ir_map_get(&k->reported, h, op, NULL))
		return false;
	ir_map_put(&k->reported, h, op, op, NULL);
	return true;
}

/* Reports that the kernel's structure is beyond the analysis; later checks are skipped. */
static bool
beyond(Ck *k, IrOp *op, const char *what)
{
	if (pass_ck_error_once(k, op)) {
		IrDiag *d = ir_diag_begin(k->c, IR_SEV_ERROR, op->loc,
		                          "cannot check this kernel's invariants: %s", what);
		ir_diag_note(k->c, d, op->loc,
		             "the shapes the checker analyzes are in docs/invariants.md (\"What the "
		             "checker analyzes\"); 'ave compile --no-check' compiles the kernel "
		             "without the proof");
		ir_diag_emit(k->c, d);
	}
	k->broken = true;
	return false;
}

bool
pass_ck_overflowed(Ck *k)
{
	if (!S->overflow)
		return false;
	beyond(k, k->overflow_op ? k->overflow_op : k->kernel,
	       "its index arithmetic overflows 64-bit integers (a constant offset or size too large)");
	return true;
}

/* ---- environments ---- */

static CkEnv *
env_new(Ck *k, CkEnv *parent, IrOp *scope)
{
	CkEnv *e = ir_arena_alloc(&k->arena, sizeof *e);
	e->parent = parent;
	e->scope = scope;
	ir_map_init(&e->memo, k->c->al);
	ir_vec_push(k->c->al, &k->envs, &e, sizeof e);
	return e;
}

static void
env_seed(CkEnv *e, IrValue *v, Z3_ast t)
{
	ir_map_put(&e->memo, ir_hash_ptr(v), v, (void *)t, NULL);
}

void
pass_ck_begin(Ck *k, IrOp *kernel)
{
	k->kernel = kernel;
	k->walks = ir_op_attr(kernel, k->c->kw.persistent) && ir_kernel_walks(kernel);
	ir_arena_init(&k->arena, k->c->al);
	ir_map_init(&k->loopforms, k->c->al);
	ir_map_init(&k->reported, k->c->al);
	k->root = env_new(k, NULL, kernel);
}

void
pass_ck_end(Ck *k)
{
	for (int i = 0; i < k->envs.len; i++)
		ir_map_free(&IR_VEC_AT(k->envs, CkEnv *, i)->memo);
	ir_vec_free(k->c->al, &k->envs, sizeof(CkEnv *));
	ir_vec_free(k->c->al, &k->sites, sizeof(CkSite *));
	ir_vec_free(k->c->al, &k->groups, sizeof(CkGroup *));
	ir_vec_free(k->c->al, &k->lomemo, sizeof(CkLoMemo));
	ir_vec_free(k->c->al, &k->flatmemo, sizeof(CkFlatMemo));
	ir_vec_free(k->c->al, &k->flattrip, sizeof(CkFlatMemo));
	ir_map_free(&k->loopforms);
	ir_map_free(&k->reported);
	ir_arena_free(&k->arena);
}

CkEnv *
pass_ck_role_env(Ck *k, CkRole *r, Z3_ast rep)
{
	if (r->op == k->kernel)
		return k->root;
	CkEnv *e = env_new(k, k->root, r->op);
	e->rep = rep;
	return e;
}

CkEnv *
pass_ck_loop_env(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t)
{
	CkEnv *e = env_new(k, parent, loop);
	e->iter = t;
	return e;
}

/* ---- values as terms ---- */

static void
note_mod(Ck *k, int64_t c)
{
	for (int i = 0; i < k->nmods; i++)
		if (k->mods[i] == c)
			return;
	if (k->nmods < (int)(sizeof k->mods / sizeof k->mods[0]))
		k->mods[k->nmods++] = c;
}

static Z3_ast
opaque(Ck *k, IrType *t, const char *name)
{
	Z3_ast v = pass_ck_fresh(S, name ? name : "v");
	k->nopaque++;
	k->opaque_name = name;
	if (t && t->kind == IR_TY_INT && t->bits == 1)
		pass_ck_side(S, v,
		             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), v),
		                          pass_ck_le(S, v, pass_ck_num(S, 1))));
	return v;
}

static IrOp *
value_scope(const IrValue *v)
{
	if (v->kind == IR_VAL_ARG)
		return ir_block_parent_op(v->block);
	if (v->kind != IR_VAL_RESULT)
		return NULL;
	for (IrOp *p = ir_op_parent_op(v->op); p; p = ir_op_parent_op(p))
		if (p->code == IR_OP_KERNEL || p->code == IR_OP_ROLE || p->code == IR_OP_FOR)
			return p;
	return NULL;
}

static Z3_ast value_in(Ck *k, CkEnv *e, IrValue *v);

static Z3_ast
item_term(Ck *k, CkEnv *e, IrOp *op, const IrItem *it)
{
	switch (it->kind) {
	case IR_IT_VALUE:
		return it->suffix ? NULL : pass_ck_value(k, e, ir_item_value(op, it));
	case IR_IT_INT:
		return pass_ck_num(S, it->type && it->type->kind == IR_TY_INT && it->type->bits == 1
		                          ? (it->i & 1)
		                          : it->i);
	case IR_IT_EXPR:
		return pass_ck_expr(k, e, op, it->e);
	default:
		return NULL;
	}
}

static Z3_ast congruent(Ck *k, const char *op, Z3_ast a, Z3_ast b, const char *name);

Z3_ast
pass_ck_expr(Ck *k, CkEnv *e, IrOp *op, const IrExpr *x)
{
	Z3_ast a, b;
	int64_t c;
	switch (x->kind) {
	case IR_EX_CONST:
		return pass_ck_num(S, x->c);
	case IR_EX_VAL: {
		IrValue *v = ir_op_value(op, x->opnd);
		Z3_ast t = pass_ck_value(k, e, v);
		return t ? t : opaque(k, v->type, v->name);
	}
	case IR_EX_NEG:
		return pass_ck_sub(S, pass_ck_num(S, 0), pass_ck_expr(k, e, op, x->l));
	default:
		break;
	}
	a = pass_ck_expr(k, e, op, x->l);
	b = pass_ck_expr(k, e, op, x->r);
	if (!k->overflow_op && S->overflow)
		k->overflow_op = op;
	switch (x->kind) {
	case IR_EX_ADD:
		return pass_ck_add(S, a, b);
	case IR_EX_SUB:
		return pass_ck_sub(S, a, b);
	case IR_EX_MUL:
		if (pass_ck_is_num(S, b, &c))
			return pass_ck_mulc(S, a, c);
		if (pass_ck_is_num(S, a, &c))
			return pass_ck_mulc(S, b, c);
		return opaque(k, NULL, "mul");
	case IR_EX_FLOORDIV:
	case IR_EX_MOD:
		if (pass_ck_is_num(S, b, &c) && c <= 0)
			return opaque(k, NULL, "div");
		if (!pass_ck_is_num(S, b, &c))
			return congruent(k, x->kind == IR_EX_MOD ? "mod" : "floordiv", a, b,
			                 x->kind == IR_EX_MOD ? "mod" : "floordiv");
		note_mod(k, c);
		return x->kind == IR_EX_MOD ? pass_ck_mod(S, a, c) : pass_ck_floordiv(S, a, c);
	case IR_EX_EQ:
		return pass_ck_b2i(S, pass_ck_eq(S, a, b));
	case IR_EX_NE:
		return pass_ck_b2i(S, pass_ck_not(S, pass_ck_eq(S, a, b)));
	case IR_EX_LT:
		return pass_ck_b2i(S, pass_ck_lt(S, a, b));
	case IR_EX_LE:
		return pass_ck_b2i(S, pass_ck_le(S, a, b));
	case IR_EX_GT:
		return pass_ck_b2i(S, pass_ck_lt(S, b, a));
	case IR_EX_GE:
		return pass_ck_b2i(S, pass_ck_le(S, b, a));
	default:
		return opaque(k, NULL, "x");
	}
}

Z3_ast
pass_ck_value(Ck *k, CkEnv *e, IrValue *v)
{
	IrOp *scope = value_scope(v);
	CkEnv *de = e;
	while (de && de->scope != scope)
		de = de->parent;
	if (!de) /* not in this instance's scopes: knows nothing about it */
		return ir_type_is_int(v->type) ? opaque(k, v->type, v->name) : NULL;
	uint64_t h = ir_hash_ptr(v);
	Z3_ast t = ir_map_get(&de->memo, h, v, NULL);
	if (t)
		return t;
	/* Closed forms evaluate other iterations; a bound on the nesting keeps any cycle finite
	 * (the value is then unknown, which is sound). */
	if (k->depth > 512)
		return ir_type_is_int(v->type) ? opaque(k, v->type, v->name) : NULL;
	k->depth++;
	t = value_in(k, de, v);
	k->depth--;
	if (t)
		ir_map_put(&de->memo, h, v, (void *)t, NULL);
	return t;
}

static Z3_ast
program_id(Ck *k, int64_t d, bool num)
{
	if (d < 0 || d > 2)
		return NULL;
	if (!k->pid[d]) {
		k->npid[d] = pass_ck_fresh(S, "npid");
		pass_ck_side(S, k->npid[d], pass_ck_le(S, pass_ck_num(S, 1), k->npid[d]));
		k->pid[d] = pass_ck_fresh(S, "pid");
		pass_ck_side(S, k->pid[d],
		             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), k->pid[d]),
		                          pass_ck_lt(S, k->pid[d], k->npid[d])));
	}
	return num ? k->npid[d] : k->pid[d];
}

Z3_ast
pass_ck_world(Ck *k)
{
	if (!k->world) {
		IrOp *mod = ir_op_parent_op(k->kernel);
		IrAttr *w =
		    mod && mod->code == IR_OP_MODULE ? ir_op_attr(mod, k->c->kw.world) : NULL;
		if (w && w->kind == IR_ATTR_INT) {
			k->world = pass_ck_num(S, w->i);
		} else {
			k->world = pass_ck_fresh(S, "world");
			pass_ck_side(S, k->world, pass_ck_le(S, pass_ck_num(S, 1), k->world));
		}
		k->rank = pass_ck_fresh(S, "rank");
		pass_ck_side(S, k->rank,
		             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), k->rank),
		                          pass_ck_lt(S, k->rank, k->world)));
	}
	return k->world;
}

static bool
loop_step(Ck *k, IrOp *loop, int64_t *step)
{
	(void)k;
	return ir_expr_eval_const(loop->item[2].e, step) && *step > 0;
}

/* Is `loop` a grid-stride loop `ave.for %t = program_id(d) to ... step num_programs(d)`? */
static int
grid_stride_dim(Ck *k, IrOp *loop)
{
	const IrExpr *lb = loop->item[0].e, *st = loop->item[2].e;
	if (lb->kind != IR_EX_VAL || st->kind != IR_EX_VAL)
		return -1;
	IrValue *a = ir_op_value(loop, lb->opnd), *b = ir_op_value(loop, st->opnd);
	if (a->kind != IR_VAL_RESULT || b->kind != IR_VAL_RESULT)
		return -1;
	if (a->op->code == IR_OP_CTA_ID && b->op->code == IR_OP_NUM_CTAS)
		return 0; /* a walking persistent kernel's CTAs, along x */
	if (a->op->code != IR_OP_PROGRAM_ID || b->op->code != IR_OP_NUM_PROGRAMS)
		return -1;
	int64_t da, db;
	IrGroup *ga = ir_op_group(a->op, k->c->kw.dim), *gb = ir_op_group(b->op, k->c->kw.dim);
	if (!ga || !gb || !ir_expr_eval_const(ga->item[0].e, &da) ||
	    !ir_expr_eval_const(gb->item[0].e, &db) || da != db || da < 0 || da > 2)
		return -1;
	return (int)da;
}

/* A grid-stride loop (step num_programs >= 1): its trip count n and its variable at iteration t
 * are uninterpreted functions of the bounds, the step and t (two roles running the same loop
 * agree on them), with their linear consequences; the products only confirm counterexamples. */
static Z3_ast
gs_trips(Ck *k, Z3_ast lb, Z3_ast ub, Z3_ast st)
{
	Z3_ast n = pass_ck_uf(S, "trips", 3, (Z3_ast[]){lb, ub, st});
	Z3_ast zero = pass_ck_num(S, 0), one = pass_ck_num(S, 1);
	Z3_ast some = pass_ck_lt(S, lb, ub);
	Z3_ast lin = pass_ck_and2(S, pass_ck_le(S, one, n), pass_ck_le(S, n, pass_ck_sub(S, ub, lb)));
	pass_ck_side(S, n, pass_ck_ite(S, some, lin, pass_ck_eq(S, n, zero)));
	Z3_ast last = pass_ck_add(S, lb, pass_ck_mul(S, pass_ck_sub(S, n, one), st));
	pass_ck_exact(S, n,
	              pass_ck_or2(S, pass_ck_not(S, some),
	                          pass_ck_and2(S, pass_ck_lt(S, last, ub),
	                                       pass_ck_le(S, ub, pass_ck_add(S, last, st)))));
	return n;
}

static Z3_ast
gs_at(Ck *k, Z3_ast lb, Z3_ast st, Z3_ast t)
{
	Z3_ast x = pass_ck_uf(S, "stride_at", 3, (Z3_ast[]){lb, st, t});
	Z3_ast zero = pass_ck_num(S, 0);
	pass_ck_side(S, x,
	             pass_ck_and2(S, pass_ck_eq(S, pass_ck_eq(S, t, zero), pass_ck_eq(S, x, lb)),
	                          pass_ck_or2(S, pass_ck_lt(S, t, zero),
	                                      pass_ck_le(S, pass_ck_add(S, lb, t), x))));
	pass_ck_exact(S, x, pass_ck_eq(S, x, pass_ck_add(S, lb, pass_ck_mul(S, t, st))));
	return x;
}

Z3_ast
pass_ck_iter_exists(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t)
{
	int64_t step;
	if (k->gstride && grid_stride_dim(k, loop) >= 0) {
		/* The loop variable's range is its own (value_in), stated where the variable is
		 * used; that the loop runs at all holds also where it is not (a store whose
		 * coordinates ignore the tile, in a walk that leaves this CTA without one). */
		Z3_ast lb = pass_ck_expr(k, parent, loop, loop->item[0].e);
		Z3_ast ub = pass_ck_expr(k, parent, loop, loop->item[1].e);
		return pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), t), pass_ck_lt(S, lb, ub));
	}
	if (grid_stride_dim(k, loop) >= 0) {
		Z3_ast lb = pass_ck_expr(k, parent, loop, loop->item[0].e);
		Z3_ast ub = pass_ck_expr(k, parent, loop, loop->item[1].e);
		Z3_ast st = pass_ck_expr(k, parent, loop, loop->item[2].e);
		return pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), t),
		                    pass_ck_lt(S, t, gs_trips(k, lb, ub, st)));
	}
	if (!loop_step(k, loop, &step))
		return Z3_mk_false(S->z);
	Z3_ast lb = pass_ck_expr(k, parent, loop, loop->item[0].e);
	Z3_ast ub = pass_ck_expr(k, parent, loop, loop->item[1].e);
	return pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), t),
	                    pass_ck_lt(S, pass_ck_add(S, lb, pass_ck_mulc(S, t, step)), ub));
}

/* Trip count of `loop` in env `parent`. */
static Z3_ast
trip_count(Ck *k, CkEnv *parent, IrOp *loop)
{
	int64_t step;
	if (!k->gstride && grid_stride_dim(k, loop) >= 0)
		return gs_trips(k, pass_ck_expr(k, parent, loop, loop->item[0].e),
		                pass_ck_expr(k, parent, loop, loop->item[1].e),
		                pass_ck_expr(k, parent, loop, loop->item[2].e));
	if (!loop_step(k, loop, &step))
		return NULL;
	Z3_ast lb = pass_ck_expr(k, parent, loop, loop->item[0].e);
	Z3_ast ub = pass_ck_expr(k, parent, loop, loop->item[1].e);
	Z3_ast n = pass_ck_floordiv(
	    S, pass_ck_add(S, pass_ck_sub(S, ub, lb), pass_ck_num(S, step - 1)), step);
	return pass_ck_ite(S, pass_ck_lt(S, lb, ub), n, pass_ck_num(S, 0));
}

/* ---- closed forms of loop-carried scalars ---- */

/* COUNTER: x + c per iteration; STEP: x + d per iteration, d a term the iteration and the
 * carried values do not change (a ring position carried through a tile loop advances by the
 * k-loop's trip count). */
typedef enum LfKind { LF_OPAQUE, LF_INVARIANT, LF_COUNTER, LF_STEP, LF_XOR, LF_STATELESS } LfKind;

typedef struct LoopForms {
	int n;
	LfKind *kind;
	int64_t *c; /* COUNTER: increment; XOR: period */
} LoopForms;

static IrOp *
loop_yield(IrOp *loop)
{
	IrOp *y = loop->reg[0].block->last;
	return y && y->code == IR_OP_YIELD ? y : NULL;
}

/* A generic env for the scopes enclosing `op` (fresh replica and iterations). */
static CkEnv *
generic_env(Ck *k, IrOp *op)
{
	IrOp *chain[64];
	int n = 0;
	for (IrOp *p = ir_op_parent_op(op); p && n < 64; p = ir_op_parent_op(p))
		if (p->code == IR_OP_ROLE || p->code == IR_OP_FOR)
			chain[n++] = p;
	CkEnv *e = k->root;
	for (int i = n - 1; i >= 0; i--) {
		if (chain[i]->code == IR_OP_ROLE) {
			int64_t rep = ir_role_info(k->c, chain[i]).replicas;
			Z3_ast r = pass_ck_fresh(S, "r");
			pass_ck_side(S, r,
			             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), r),
			                          pass_ck_lt(S, r, pass_ck_num(S, rep))));
			e = env_new(k, e, chain[i]);
			e->rep = r;
		} else {
			Z3_ast t = pass_ck_fresh(S, "t");
			pass_ck_side(S, t, pass_ck_iter_exists(k, e, chain[i], t));
			e = pass_ck_loop_env(k, e, chain[i], t);
		}
	}
	return e;
}

/* Loop env with every iter arg seeded: xs[j] (or `one` for arg j0 when given). */
static CkEnv *
probe_env(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t, Z3_ast *xs, int j0, Z3_ast one)
{
	CkEnv *e = pass_ck_loop_env(k, parent, loop, t);
	IrBlock *b = loop->reg[0].block;
	for (int j = 0; j + 1 < b->narg; j++)
		env_seed(e, b->arg[j + 1], j == j0 ? one : xs[j]);
	return e;
}

static Z3_ast
yield_term(Ck *k, CkEnv *e, IrOp *loop, int j)
{
	IrOp *y = loop_yield(loop);
	if (!y || j >= y->nitem)
		return NULL;
	return item_term(k, e, y, &y->item[j]);
}

static bool
valid(Ck *k, Z3_ast claim)
{
	return pass_ck_check(S, pass_ck_not(S, claim), NULL) == CK_UNSAT;
}

static LoopForms *
loop_forms(Ck *k, IrOp *loop)
{
	uint64_t h = ir_hash_ptr(loop);
	LoopForms *lf = ir_map_get(&k->loopforms, h, loop, NULL);
	if (lf)
		return lf;
	IrBlock *b = loop->reg[0].block;
	/* The probes below are placeholders, not unknowns of the kernel: they do not count. They
	 * see a grid-stride variable as its closed form in the probe's iteration (the global-store
	 * check's fresh variable per instance would make `%acc + %t` look like a constant step). */
	int nopaque = k->nopaque, npartial = k->npartial;
	bool gstride = k->gstride;
	k->gstride = false;
	lf = ir_arena_alloc(&k->arena, sizeof *lf);
	lf->n = b->narg - 1;
	lf->kind = ir_arena_alloc(&k->arena, sizeof *lf->kind * (size_t)(lf->n + 1));
	lf->c = ir_arena_alloc(&k->arena, sizeof *lf->c * (size_t)(lf->n + 1));
	ir_map_put(&k->loopforms, h, loop, lf, NULL);
	CkEnv *parent = generic_env(k, loop);
	Z3_ast y = pass_ck_fresh(S, "t");
	pass_ck_side(S, y, pass_ck_le(S, pass_ck_num(S, 0), y));
	Z3_ast *xs = ir_arena_alloc(&k->arena, sizeof *xs * (size_t)(lf->n + 1));
	for (int j = 0; j < lf->n; j++)
		xs[j] = opaque(k, b->arg[j + 1]->type, "x");
	CkEnv *pe = probe_env(k, parent, loop, y, xs, -1, NULL);
	for (int j = 0; j < lf->n; j++) {
		IrType *ty = b->arg[j + 1]->type;
		lf->kind[j] = LF_OPAQUE;
		if (!ir_type_is_int(ty))
			continue;
		Z3_ast v = yield_term(k, pe, loop, j);
		if (!v)
			continue;
		if (v == xs[j]) {
			lf->kind[j] = LF_INVARIANT;
			continue;
		}
		bool other = false, self = pass_ck_depends(S, v, xs[j]);
		for (int i = 0; i < lf->n && !other; i++)
			other = i != j && pass_ck_depends(S, v, xs[i]);
		if (other)
			continue;
		if (!self) {
			lf->kind[j] = LF_STATELESS;
			continue;
		}
		int64_t c;
		Z3_ast d = Z3_simplify(S->z, pass_ck_sub(S, v, xs[j]));
		if (pass_ck_is_num(S, d, &c)) {
			lf->kind[j] = LF_COUNTER;
			lf->c[j] = c;
			continue;
		}
		bool moves = pass_ck_depends(S, d, y);
		for (int i = 0; i < lf->n && !moves; i++)
			moves = pass_ck_depends(S, d, xs[i]);
		if (!moves) {
			lf->kind[j] = LF_STEP;
			continue;
		}
		if (!(ty->kind == IR_TY_INT && ty->bits == 1))
			continue;
		/* An i1 updated as x xor f(t): f must not depend on x, and be periodic in t. */
		k->nmods = 0;
		Z3_ast f0 =
		    yield_term(k, probe_env(k, parent, loop, y, xs, j, pass_ck_num(S, 0)), loop, j);
		Z3_ast f1 =
		    yield_term(k, probe_env(k, parent, loop, y, xs, j, pass_ck_num(S, 1)), loop, j);
		if (!f0 || !f1 ||
		    !valid(k, pass_ck_eq(S, pass_ck_add(S, f0, f1), pass_ck_num(S, 1))))
			continue;
		int64_t cand[33];
		int nc = 0;
		cand[nc++] = 1;
		for (int i = 0; i < k->nmods; i++)
			cand[nc++] = k->mods[i];
		for (int i = 0; i < nc; i++) /* ascending */
			for (int m = i + 1; m < nc; m++)
				if (cand[m] < cand[i]) {
					int64_t x = cand[i];
					cand[i] = cand[m];
					cand[m] = x;
				}
		for (int i = 0; i < nc; i++) {
			if (i && cand[i] == cand[i - 1])
				continue;
			CkEnv *pp =
			    probe_env(k, parent, loop, pass_ck_add(S, y, pass_ck_num(S, cand[i])),
			              xs, j, pass_ck_num(S, 0));
			Z3_ast fp = yield_term(k, pp, loop, j);
			if (fp && valid(k, pass_ck_eq(S, fp, f0))) {
				lf->kind[j] = LF_XOR;
				lf->c[j] = cand[i];
				break;
			}
		}
	}
	k->gstride = gstride;
	k->npartial = npartial;
	k->nopaque = nopaque;
	return lf;
}

static Z3_ast
iter_init(Ck *k, CkEnv *parent, IrOp *loop, int j)
{
	const IrItem *it = &loop->item[3 + j];
	IrType *ty = loop->reg[0].block->arg[j + 1]->type;
	if (it->kind == IR_IT_INT)
		return pass_ck_num(S, ty->kind == IR_TY_INT && ty->bits == 1 ? (it->i & 1) : it->i);
	Z3_ast t = item_term(k, parent, loop, it);
	return t ? t : opaque(k, ty, "init");
}

/* A tile loop's ring position advancing by a multiple c of the k-loop's trip count n2 (c = 1:
 * one step per k; a counter stepping by 2 advances by 2 * n2), at tile t1 of a use
 * u = t1 * n2 + t2: t1 * d is c * (u - t2) (NULL when d is no such multiple). The k-loop then
 * adds c * t2, and its counter simplifies to a term of u alone: the barrier checks see no
 * split. */
static Z3_ast
flat_product(Ck *k, Z3_ast t, Z3_ast d)
{
	for (int i = 0; i < k->flatmemo.len; i++) {
		CkFlatMemo *m = &IR_VEC_AT(k->flatmemo, CkFlatMemo, i);
		if (m->t1 != t)
			continue;
		Z3_ast sd = Z3_simplify(S->z, d);
		for (int64_t c = 1; c <= 8; c++)
			for (int sign = 1; sign >= -1; sign -= 2)
				if (Z3_simplify(S->z, pass_ck_mulc(S, m->n2, sign * c)) == sd)
					return pass_ck_mulc(S, pass_ck_sub(S, m->u, m->t2), sign * c);
	}
	return NULL;
}

static Z3_ast flat_inner_trip(Ck *k, CkRole *ro, CkEnv *renv, Z3_ast t1);
static Z3_ast flat_trip(Ck *k, CkRole *ro, CkEnv *renv);

/* A tile loop's carried value after the loop (t its trip count n1) stepping by d = c * n2 per
 * tile: n1 * d is c times the uses of the role's flat loop, the term the k-loop's sites count
 * with (a product the solver otherwise gets only to confirm). NULL when it is not that. */
static Z3_ast
flat_total(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t, Z3_ast d)
{
	for (int i = 0; i < k->nroles; i++) {
		CkRole *ro = &k->roles[i];
		if (ro->flat_outer != loop || t != trip_count(k, parent, loop))
			continue;
		Z3_ast n2 = flat_inner_trip(k, ro, parent, pass_ck_num(S, 0));
		Z3_ast sd = Z3_simplify(S->z, d);
		for (int64_t c = 1; c <= 8 && n2; c++)
			for (int sign = 1; sign >= -1; sign -= 2)
				if (Z3_simplify(S->z, pass_ck_mulc(S, n2, sign * c)) == sd) {
					Z3_ast n = flat_trip(k, ro, parent);
					return n ? pass_ck_mulc(S, n, sign * c) : NULL;
				}
	}
	return NULL;
}

static bool
flat_inner_iter(Ck *k, Z3_ast t)
{
	for (int i = 0; i < k->flatmemo.len; i++)
		if (IR_VEC_AT(k->flatmemo, CkFlatMemo, i).t2 == t)
			return true;
	return false;
}

/* Iter arg j of `loop` at iteration t (which may be the trip count: the loop's result). */
static Z3_ast
iter_arg_at(Ck *k, CkEnv *parent, IrOp *loop, int j, Z3_ast t)
{
	LoopForms *lf = loop_forms(k, loop);
	IrType *ty = loop->reg[0].block->arg[j + 1]->type;
	if (j >= lf->n || !ir_type_is_int(ty))
		return NULL;
	Z3_ast init = iter_init(k, parent, loop, j);
	switch (lf->kind[j]) {
	case LF_INVARIANT:
		return init;
	case LF_COUNTER: {
		Z3_ast d = pass_ck_num(S, lf->c[j]);
		Z3_ast v = flat_product(k, t, d);
		if (v)
			return pass_ck_add(S, init, v);
		if (flat_inner_iter(k, t))
			return Z3_simplify(S->z, pass_ck_add(S, init, pass_ck_mulc(S, t, lf->c[j])));
		return pass_ck_add(S, init, pass_ck_mulc(S, t, lf->c[j]));
	}
	case LF_STEP: {
		/* The step, in this env: x + d at iteration t, the carried values as placeholders
		 * (d depends on none of them). */
		int nopaque = k->nopaque;
		Z3_ast *xs = ir_arena_alloc(&k->arena, sizeof *xs * (size_t)(lf->n + 1));
		for (int i = 0; i < lf->n; i++)
			xs[i] = opaque(k, loop->reg[0].block->arg[i + 1]->type, "x");
		Z3_ast v = yield_term(k, probe_env(k, parent, loop, t, xs, -1, NULL), loop, j);
		k->nopaque = nopaque;
		if (!v)
			return opaque(k, ty, pass_ck_vname(loop->reg[0].block->arg[j + 1]));
		Z3_ast d = Z3_simplify(S->z, pass_ck_sub(S, v, xs[j]));
		Z3_ast p = flat_product(k, t, d);
		if (!p)
			p = flat_total(k, parent, loop, t, d);
		return pass_ck_add(S, init, p ? p : pass_ck_mul(S, t, d));
	}
	case LF_STATELESS: {
		CkEnv *e = pass_ck_loop_env(k, parent, loop, pass_ck_sub(S, t, pass_ck_num(S, 1)));
		Z3_ast prev = yield_term(k, e, loop, j);
		return pass_ck_ite(S, pass_ck_eq(S, t, pass_ck_num(S, 0)), init,
		                   prev ? prev : opaque(k, ty, "prev"));
	}
	case LF_XOR: {
		int64_t p = lf->c[j];
		Z3_ast *xs = ir_arena_alloc(&k->arena, sizeof *xs * (size_t)(lf->n + 1));
		for (int i = 0; i < lf->n; i++)
			xs[i] = opaque(k, loop->reg[0].block->arg[i + 1]->type, "x");
		Z3_ast sum = pass_ck_num(S, 0), part = pass_ck_num(S, 0), tm = pass_ck_mod(S, t, p);
		for (int64_t q = 0; q < p; q++) {
			CkEnv *e =
			    probe_env(k, parent, loop, pass_ck_num(S, q), xs, j, pass_ck_num(S, 0));
			Z3_ast f = yield_term(k, e, loop, j);
			if (!f)
				return opaque(k, ty, "ph");
			sum = pass_ck_add(S, sum, f);
			part = pass_ck_add(S, part,
			                   pass_ck_ite(S, pass_ck_lt(S, pass_ck_num(S, q), tm), f,
			                               pass_ck_num(S, 0)));
		}
		Z3_ast wraps =
		    pass_ck_ite(S, pass_ck_eq(S, pass_ck_mod(S, sum, 2), pass_ck_num(S, 1)),
		                pass_ck_floordiv(S, t, p), pass_ck_num(S, 0));
		return pass_ck_mod(S, pass_ck_add(S, pass_ck_add(S, init, wraps), part), 2);
	}
	default:
		return opaque(k, ty, pass_ck_vname(loop->reg[0].block->arg[j + 1]));
	}
}

static Z3_ast
int_item(Ck *k, CkEnv *e, IrOp *op, int i)
{
	if (i >= op->nitem)
		return NULL;
	return item_term(k, e, op, &op->item[i]);
}

static Z3_ast
pow2(Ck *k, Z3_ast b, int64_t *out)
{
	int64_t c;
	if (!pass_ck_is_num(S, b, &c) || c < 0 || c > 62)
		return NULL;
	*out = (int64_t)1 << c;
	return b;
}

/* Truncating division by a positive constant (ave.div / ave.rem on integers). */
static Z3_ast
tdiv(Ck *k, Z3_ast a, int64_t c)
{
	Z3_ast pos = pass_ck_floordiv(S, a, c);
	Z3_ast neg = pass_ck_sub(S, pass_ck_num(S, 0),
	                         pass_ck_floordiv(S, pass_ck_sub(S, pass_ck_num(S, 0), a), c));
	return pass_ck_ite(S, pass_ck_le(S, pass_ck_num(S, 0), a), pos, neg);
}

/* The term of value v, defined in env e's scope (e->scope is v's defining scope). */
/* A product, quotient or remainder of two unknowns (the tile's row from a tile index, %t / %nn)
 * is beyond the solver's arithmetic, a value it cannot express as opaque() says; but the same
 * operation on the same operands in two roles is the same value: an uninterpreted function of
 * its operands (tags built from it agree across roles). */
static Z3_ast
congruent(Ck *k, const char *op, Z3_ast a, Z3_ast b, const char *name)
{
	bool dv = strcmp(op, "mul") != 0;
	if (k->gstride) {
		k->npartial++;
		if (name || !k->partial_name)
			k->partial_name = name ? name : "?";
	} else {
		k->nopaque++;
		k->opaque_name = name;
	}
	Z3_ast r = pass_ck_uf(S, op, 2, (Z3_ast[]){a, b});
	Z3_ast zero = pass_ck_num(S, 0);
	if (!dv) {
		/* A product's sign, and a product by zero (a loop bound %nm * %nn of an empty
		 * grid is no trip). */
		Z3_ast az = pass_ck_le(S, zero, a), bz = pass_ck_le(S, zero, b);
		Z3_ast an = pass_ck_le(S, a, zero), bn = pass_ck_le(S, b, zero);
		Z3_ast rz = pass_ck_le(S, zero, r), rn = pass_ck_le(S, r, zero);
		Z3_ast f[5] = {
		    pass_ck_or2(S, pass_ck_not(S, pass_ck_and2(S, az, bz)), rz),
		    pass_ck_or2(S, pass_ck_not(S, pass_ck_and2(S, an, bn)), rz),
		    pass_ck_or2(S, pass_ck_not(S, pass_ck_and2(S, az, bn)), rn),
		    pass_ck_or2(S, pass_ck_not(S, pass_ck_and2(S, an, bz)), rn),
		    pass_ck_or2(S,
		                pass_ck_not(S, pass_ck_or2(S, pass_ck_eq(S, a, zero),
		                                           pass_ck_eq(S, b, zero))),
		                pass_ck_eq(S, r, zero)),
		};
		pass_ck_side(S, r, pass_ck_and(S, 5, f));
		return r;
	}
	/* What the solver may know of a quotient q and remainder r of a by b != 0: a is a
	 * function of (q, r, b) (a = b q + r), so two dividends with the same quotient and
	 * remainder are equal -- what tells the tiles of a raster apart; and for a >= 0 < b,
	 * 0 <= r < b and q >= 0 (truncating and floor division agree there). */
	bool fl = strcmp(op, "floordiv") == 0 || strcmp(op, "mod") == 0;
	Z3_ast q = pass_ck_uf(S, fl ? "floordiv" : "div", 2, (Z3_ast[]){a, b});
	Z3_ast m = pass_ck_uf(S, fl ? "mod" : "rem", 2, (Z3_ast[]){a, b});
	Z3_ast nz = pass_ck_not(S, pass_ck_eq(S, b, zero));
	Z3_ast inv = pass_ck_eq(S, a, pass_ck_uf(S, fl ? "unfloordiv" : "undiv", 3,
	                                          (Z3_ast[]){q, m, b}));
	Z3_ast pos = pass_ck_and2(S, pass_ck_le(S, zero, a), pass_ck_lt(S, zero, b));
	Z3_ast rng = pass_ck_and(S, 3,
	                         (Z3_ast[]){pass_ck_le(S, zero, m), pass_ck_lt(S, m, b),
	                                    pass_ck_le(S, zero, q)});
	Z3_ast ax = pass_ck_and2(S, pass_ck_or2(S, pass_ck_not(S, nz), inv),
	                         pass_ck_or2(S, pass_ck_not(S, pos), rng));
	pass_ck_side(S, r, ax);
	return r;
}

static Z3_ast
value_in(Ck *k, CkEnv *e, IrValue *v)
{
	IrType *ty = v->type;
	bool is_int = ir_type_is_int(ty);
	bool i1 = ty->kind == IR_TY_INT && ty->bits == 1;
	if (v->kind == IR_VAL_ARG) {
		IrOp *owner = ir_block_parent_op(v->block);
		if (!is_int)
			return NULL;
		if (owner->code == IR_OP_FOR) {
			if (v->index == 0) {
				int64_t step;
				int d = k->gstride && e->iter ? grid_stride_dim(k, owner) : -1;
				if (d >= 0 && k->ngs < 8) {
					/* lb <= x < ub; x = lb + j * num_programs is not linear: the
					 * global-store check adds what it needs (two CTAs' x differ). */
					Z3_ast x = pass_ck_fresh(S, v->name ? v->name : "x");
					Z3_ast lb =
					    pass_ck_expr(k, e->parent, owner, owner->item[0].e);
					Z3_ast ub =
					    pass_ck_expr(k, e->parent, owner, owner->item[1].e);
					pass_ck_side(S, x,
					             pass_ck_and2(S, pass_ck_le(S, lb, x),
					                          pass_ck_lt(S, x, ub)));
					k->gs_x[k->ngs] = x;
					k->gs_dim[k->ngs++] = d;
					return x;
				}
				if (e->iter && grid_stride_dim(k, owner) >= 0)
					return gs_at(k, pass_ck_expr(k, e->parent, owner, owner->item[0].e),
					             pass_ck_expr(k, e->parent, owner, owner->item[2].e),
					             e->iter);
				if (!e->iter || !loop_step(k, owner, &step))
					return opaque(k, ty, v->name);
				Z3_ast lb = pass_ck_expr(k, e->parent, owner, owner->item[0].e);
				return pass_ck_add(S, lb, pass_ck_mulc(S, e->iter, step));
			}
			if (!e->iter)
				return opaque(k, ty, v->name);
			return iter_arg_at(k, e->parent, owner, v->index - 1, e->iter);
		}
		return opaque(k, ty, v->name);
	}
	if (v->kind != IR_VAL_RESULT)
		return NULL;
	IrOp *op = v->op;
	if (op->code == IR_OP_FOR) {
		Z3_ast n = is_int ? trip_count(k, e, op) : NULL;
		return n ? iter_arg_at(k, e, op, v->index, n)
		         : (is_int ? opaque(k, ty, v->name) : NULL);
	}
	if (!is_int)
		return NULL;
	Z3_ast a = NULL, b = NULL;
	int64_t c;
	switch (op->code) {
	case IR_OP_CONST:
		return op->item[0].kind == IR_IT_INT
		           ? pass_ck_num(S, i1 ? (op->item[0].i & 1) : op->item[0].i)
		           : opaque(k, ty, v->name);
	case IR_OP_INDEX: {
		/* An i1 result wraps the expression to one bit: a comparison is 0 or 1 already,
		 * anything else (`%nk - %k - 1 : i1`) is its value mod 2. */
		const IrExpr *x = op->item[0].e;
		Z3_ast r = pass_ck_expr(k, e, op, x);
		if (i1 && r && (x->kind < IR_EX_EQ || x->kind > IR_EX_GE))
			r = pass_ck_mod(S, r, 2);
		return r;
	}
	case IR_OP_CTA_ID:
	case IR_OP_NUM_CTAS: {
		Z3_ast t = program_id(k, 0, op->code == IR_OP_NUM_CTAS);
		if (op->code == IR_OP_CTA_ID)
			k->pid_val[0] = v;
		return t;
	}
	case IR_OP_PROGRAM_ID:
	case IR_OP_NUM_PROGRAMS: {
		IrGroup *g = ir_op_group(op, k->c->kw.dim);
		if (k->walks && op->code == IR_OP_NUM_PROGRAMS && g &&
		    ir_expr_eval_const(g->item[0].e, &c) && c >= 0 && c <= 2) {
			/* the logical grid a walking kernel walks: one launch, every CTA's */
			if (!k->lgrid[c]) {
				k->lgrid[c] = pass_ck_fresh(S, v->name ? v->name : "grid");
				pass_ck_side(S, k->lgrid[c],
				             pass_ck_le(S, pass_ck_num(S, 1), k->lgrid[c]));
			}
			return k->lgrid[c];
		}
		if (g && ir_expr_eval_const(g->item[0].e, &c)) {
			Z3_ast t = program_id(k, c, op->code == IR_OP_NUM_PROGRAMS);
			if (t && op->code == IR_OP_PROGRAM_ID)
				k->pid_val[c] = v;
			if (t)
				return t;
		}
		return opaque(k, ty, v->name);
	}
	case IR_OP_REPLICA_ID:
		/* the role's replica, also where the id is read inside one of its loops */
		for (CkEnv *x = e; x; x = x->parent)
			if (x->rep)
				return x->rep;
		return pass_ck_num(S, 0);
	case IR_OP_RANK:
		pass_ck_world(k);
		return k->rank;
	case IR_OP_WORLD_SIZE:
		return pass_ck_world(k);
	case IR_OP_IF: {
		Z3_ast cond = int_item(k, e, op, 0);
		IrOp *ty0 = op->nreg > 0 ? op->reg[0].block->last : NULL;
		IrOp *ty1 = op->nreg > 1 ? op->reg[1].block->last : NULL;
		if (!cond || !ty0 || !ty1 || ty0->code != IR_OP_YIELD || ty1->code != IR_OP_YIELD ||
		    v->index >= ty0->nitem || v->index >= ty1->nitem)
			return opaque(k, ty, v->name);
		a = int_item(k, e, ty0, v->index);
		b = int_item(k, e, ty1, v->index);
		if (!a || !b)
			return opaque(k, ty, v->name);
		return pass_ck_ite(S, pass_ck_not(S, pass_ck_eq(S, cond, pass_ck_num(S, 0))), a, b);
	}
	case IR_OP_PHASE_NEXT: {
		IrGroup *g = ir_op_group(op, k->c->kw.at);
		a = int_item(k, e, op, 0);
		if (!a || !g || !ir_expr_eval_const(g->item[1].e, &c))
			return opaque(k, ty, v->name);
		note_mod(k, c);
		Z3_ast s = pass_ck_expr(k, e, op, g->item[0].e);
		return pass_ck_mod(
		    S, pass_ck_add(S, a, pass_ck_b2i(S, pass_ck_eq(S, s, pass_ck_num(S, c - 1)))),
		    2);
	}
	default:
		break;
	}
	/* Scalar arithmetic. */
	a = int_item(k, e, op, 0);
	b = int_item(k, e, op, 1);
	switch (op->code) {
	case IR_OP_CDIV:
		if (a && b && pass_ck_is_num(S, b, &c) && c > 0) {
			note_mod(k, c);
			return pass_ck_floordiv(S, pass_ck_add(S, a, pass_ck_num(S, c - 1)), c);
		}
		break;
	case IR_OP_ADD:
		if (a && b && !i1)
			return pass_ck_add(S, a, b);
		if (a && b)
			return pass_ck_mod(S, pass_ck_add(S, a, b), 2);
		break;
	case IR_OP_SUB:
		if (a && b && !i1)
			return pass_ck_sub(S, a, b);
		break;
	case IR_OP_MUL:
		if (a && b && pass_ck_is_num(S, b, &c))
			return pass_ck_mulc(S, a, c);
		if (a && b && pass_ck_is_num(S, a, &c))
			return pass_ck_mulc(S, b, c);
		if (a && b && !i1)
			return congruent(k, "mul", a, b, v->name);
		break;
	case IR_OP_DIV:
		if (a && b && pass_ck_is_num(S, b, &c) && c > 0)
			return tdiv(k, a, c);
		if (a && b && !i1)
			return congruent(k, "div", a, b, v->name);
		break;
	case IR_OP_REM:
		if (a && b && pass_ck_is_num(S, b, &c) && c > 0)
			return pass_ck_sub(S, a, pass_ck_mulc(S, tdiv(k, a, c), c));
		if (a && b && !i1)
			return congruent(k, "rem", a, b, v->name);
		break;
	case IR_OP_MAX:
		if (a && b)
			return pass_ck_ite(S, pass_ck_le(S, a, b), b, a);
		break;
	case IR_OP_MIN:
		if (a && b)
			return pass_ck_ite(S, pass_ck_le(S, a, b), a, b);
		break;
	case IR_OP_AND:
	case IR_OP_OR:
	case IR_OP_XOR:
		if (a && b && i1) {
			Z3_ast one = pass_ck_num(S, 1);
			Z3_ast x = pass_ck_eq(S, a, one), y = pass_ck_eq(S, b, one);
			if (op->code == IR_OP_AND)
				return pass_ck_b2i(S, pass_ck_and2(S, x, y));
			if (op->code == IR_OP_OR)
				return pass_ck_b2i(S, pass_ck_or2(S, x, y));
			return pass_ck_mod(S, pass_ck_add(S, a, b), 2);
		}
		break;
	case IR_OP_SHL:
		if (a && b && pow2(k, b, &c) && !i1)
			return pass_ck_mulc(S, a, c);
		break;
	case IR_OP_SHR:
		if (a && b && pow2(k, b, &c) && !i1)
			return pass_ck_floordiv(S, a, c);
		break;
	case IR_OP_NEG:
		if (a && !i1)
			return pass_ck_sub(S, pass_ck_num(S, 0), a);
		break;
	case IR_OP_CMP:
		if (a && b &&
		    ir_type_is_int(ir_item_value(op, &op->item[0])
		                       ? ir_item_value(op, &op->item[0])->type
		                       : k->c->t_index)) {
			IrKeywords *kw = &k->c->kw;
			Z3_ast r = NULL;
			if (op->mode == kw->eq)
				r = pass_ck_eq(S, a, b);
			else if (op->mode == kw->ne)
				r = pass_ck_not(S, pass_ck_eq(S, a, b));
			else if (op->mode == kw->lt)
				r = pass_ck_lt(S, a, b);
			else if (op->mode == kw->le)
				r = pass_ck_le(S, a, b);
			else if (op->mode == kw->gt)
				r = pass_ck_lt(S, b, a);
			else if (op->mode == kw->ge)
				r = pass_ck_le(S, b, a);
			if (r)
				return pass_ck_b2i(S, r);
		}
		break;
	case IR_OP_SELECT: {
		Z3_ast f = int_item(k, e, op, 2);
		if (a && b && f)
			return pass_ck_ite(S, pass_ck_not(S, pass_ck_eq(S, a, pass_ck_num(S, 0))),
			                   b, f);
		break;
	}
	case IR_OP_CVT:
		if (a)
			return i1 ? pass_ck_mod(S, a, 2) : a;
		break;
	default:
		break;
	}
	return opaque(k, ty, v->name);
}

/* ---- roles and sites ---- */

/* Position of `op` in role `r`: the role-body op holding it, the role-level loop, the loop-body
 * op holding it; whether an ave.if or an inner loop lies between. */
static void
position(CkRole *r, IrOp *op, int *seg, IrOp **loop, int *pos, bool *cond, bool *nested)
{
	IrOp *top = op, *inloop = NULL, *flat = NULL;
	*cond = *nested = false;
	while (top->parent != r->body) {
		IrOp *p = ir_op_parent_op(top);
		if (p->code == IR_OP_IF)
			*cond = true;
		if (p == r->flat_inner) {
			flat = top; /* the k-loop of a tile loop: the role's loop, iterated flat */
		} else if (p->code == IR_OP_FOR && p->parent == r->body) {
			inloop = top;
		} else if (p->code == IR_OP_FOR) {
			*nested = true;
		}
		top = p;
	}
	if (flat) {
		*seg = 0;
		for (IrOp *p = top->prev; p; p = p->prev)
			(*seg)++;
		*loop = r->flat_inner;
		*pos = 0;
		for (IrOp *p = flat->prev; p; p = p->prev)
			(*pos)++;
		return;
	}
	*seg = 0;
	for (IrOp *p = top->prev; p; p = p->prev)
		(*seg)++;
	*loop = inloop ? top : NULL;
	*pos = 0;
	if (inloop)
		for (IrOp *p = inloop->prev; p; p = p->prev)
			(*pos)++;
}

static int64_t
role_replicas(Ck *k, IrOp *role)
{
	return ir_role_info(k->c, role).replicas;
}

static bool
find_replica_id(IrOp *op, void *ud)
{
	IrValue **out = ud;
	if (op->code == IR_OP_REPLICA_ID && !*out) {
		*out = &op->res[0];
		return false;
	}
	return true;
}

/* A tile loop around the k-loop: the first wait or arrival of the role two loops deep, the
 * outer one in the role body and the inner one directly in its body, makes the pair the role's
 * flat loop (position() then places the inner loop's sites in it). */
typedef struct FlatScan {
	CkRole *r;
	IrOp *skip;
} FlatScan;

static bool
find_flat(IrOp *op, void *ud)
{
	FlatScan *fs = ud;
	CkRole *r = fs->r;
	if (fs->skip && ir_op_is_ancestor(fs->skip, op))
		return true;
	if (r->flat_inner || (op->code != IR_OP_MBAR_WAIT && op->code != IR_OP_MBAR_ARRIVE &&
	                      op->code != IR_OP_MBAR_EXPECT_TX && op->code != IR_OP_COPY_ASYNC))
		return true;
	IrOp *f[3];
	int n = 0;
	for (IrOp *p = ir_op_parent_op(op); p && p != r->op && n < 3; p = ir_op_parent_op(p))
		if (p->code == IR_OP_FOR)
			f[n++] = p;
	if (n == 2 && f[1]->parent == r->body && f[0]->parent == f[1]->reg[0].block) {
		r->flat_outer = f[1];
		r->flat_inner = f[0];
		for (IrOp *p = f[0]->prev; p; p = p->prev)
			r->flat_pos++;
	}
	return true;
}

typedef struct Ord {
	IrOp *target;
	int n;
} Ord;

static bool
ord_walk(IrOp *op, void *ud)
{
	Ord *o = ud;
	if (op == o->target)
		return false;
	o->n++;
	return true;
}

CkSite *
pass_ck_site_detached(Ck *k, IrOp *op, CkRole *r)
{
	CkSite *s = ir_arena_alloc(&k->arena, sizeof *s);
	s->kind = CK_KIND_COUNT;
	s->op = op;
	s->role = r;
	s->bar_item = -1;
	s->id = -1;
	position(r, op, &s->seg, &s->loop, &s->pos, &s->cond, &s->nested);
	Ord o = {op, 0};
	s->ord = ir_walk(r->body, ord_walk, &o) ? -1 : o.n;
	/* Within another ave.warp_specialize's role the walk's order is no program order. */
	for (IrOp *p = ir_op_parent_op(op); p && p->reg[0].block != r->body; p = ir_op_parent_op(p))
		if (p->code == IR_OP_ROLE || p->code == IR_OP_WARP_SPECIALIZE)
			s->ord = -1;
	return s;
}

static CkSite *
site_new(Ck *k, CkKind kind, IrOp *op, CkRole *r)
{
	CkSite *s = pass_ck_site_detached(k, op, r);
	s->kind = kind;
	s->id = k->sites.len;
	ir_vec_push(k->c->al, &k->sites, &s, sizeof s);
	return s;
}

/* Resolves a shared-memory operand to its ring or tile and the op/item giving the slot. */
bool
pass_ck_mem(Ck *k, CkSite *s, IrOp *op, const IrItem *it)
{
	if (!ir_item_value(op, it))
		return false;
	for (int guard = 0; guard < 256; guard++) {
		IrValue *v = ir_item_value(op, it);
		if (it->suffix) {
			if (v->type->kind != IR_TY_RING)
				return false;
			s->mem = v;
			s->slot_op = op;
			s->slot_it = it;
			return true;
		}
		if (v->type->kind != IR_TY_TILE || v->type->space != IR_SPACE_SMEM)
			return false;
		if (v->kind == IR_VAL_RESULT && v->op->code == IR_OP_SLICE) {
			if (s->nslice < 4)
				s->slice[s->nslice] = v->op;
			s->nslice++;
			op = v->op;
			it = &op->item[0];
			continue;
		}
		if (v->kind == IR_VAL_RESULT && v->op->code == IR_OP_SMEM_ALLOC) {
			s->mem = v;
			return true;
		}
		beyond(k, s->op,
		       "a shared-memory operand that is not a ring slot, an allocated tile or a "
		       "slice of one");
		return false;
	}
	return false;
}

static bool
is_smem_item(IrOp *op, const IrItem *it)
{
	if (!ir_item_value(op, it))
		return false;
	IrType *t = ir_item_value(op, it)->type;
	return t->kind == IR_TY_RING || (t->kind == IR_TY_TILE && t->space == IR_SPACE_SMEM);
}

static int64_t
tile_bytes(const IrType *t)
{
	if (t->kind == IR_TY_RING)
		t = t->elem;
	int64_t n = ir_type_numel(t);
	return n < 0 ? -1 : n * ir_type_elem_bits(t) / 8;
}

/* Where an ave.mma.async stops reading shared memory: the ave.mma.wait of its result, in the same
 * iteration or (through an iter arg) in the next one. */
static int64_t
pending_of(Ck *k, IrOp *wait)
{
	int64_t n = 0;
	IrGroup *g = ir_op_group(wait, k->c->kw.pending);
	if (g)
		ir_expr_eval_const(g->item[0].e, &n);
	return n;
}

static bool
count_mma_async(IrOp *op, void *ud)
{
	*(int *)ud += op->code == IR_OP_MMA_ASYNC;
	return true;
}

/* The wait on `op`'s result in block b (a direct op of it), or NULL. */
static IrOp *
wait_in(IrOp *op, IrBlock *b)
{
	for (IrUse *u = op->res[0].uses; u; u = u->next)
		if (u->user->code == IR_OP_MMA_WAIT && u->user->parent == b)
			return u->user;
	return NULL;
}

/* Where an ave.mma.async stops reading shared memory: at `ave.mma.wait %t pending(n)` on its
 * own token, whatever n (SPEC 5.5: %t is finished; at most n MMAs issued after it may still run;
 * the sm_90a lowering emits wgmma.wait_group min(n, groups committed after %t)). The wait may be
 * the two branches of an ave.if. */
static void
mma_end(Ck *k, CkSite *s)
{
	IrOp *op = s->op;
	IrOp *w = wait_in(op, op->parent);
	if (w) {
		s->end_op = w;
		s->end_pend[0] = s->end_pend[1] = pending_of(k, w);
	} else {
		for (IrUse *u = op->res[0].uses; u && !s->end_op; u = u->next) {
			IrOp *iff = ir_block_parent_op(u->user->parent);
			if (!iff || iff->code != IR_OP_IF || iff->parent != op->parent || iff->nreg < 2)
				continue;
			IrOp *w0 = wait_in(op, iff->reg[0].block), *w1 = wait_in(op, iff->reg[1].block);
			if (!w0 || !w1)
				continue;
			s->end_op = iff;
			s->end_pend[0] = pending_of(k, w0);
			s->end_pend[1] = pending_of(k, w1);
		}
	}
	/* The wait on this MMA's own token finishes it, whatever its pending(n). */
	s->end_pend[0] = s->end_pend[1] = 0;
	if (s->end_op) {
		s->end_shift = 0;
		int n = 0;
		if (s->loop)
			ir_walk(s->loop->reg[0].block, count_mma_async, &n);
		bool late = s->end_pend[0] > 0 || s->end_pend[1] > 0;
		if (late && (!s->loop || n != 1 || op->parent != s->loop->reg[0].block ||
		             s->end_pend[0] > 1 || s->end_pend[1] > 1))
			s->end_op = NULL; /* never known to end */
		return;
	}
	for (int depth = 0; depth < 8 && op; depth++) {
		IrOp *next = NULL;
		for (IrUse *u = op->res[0].uses; u; u = u->next) {
			IrOp *user = u->user;
			if (user->code == IR_OP_MMA_WAIT && user->parent == op->parent) {
				s->end_op = user;
				s->end_shift = 0;
				return;
			}
			if (user->code == IR_OP_MMA_ASYNC && user->parent == op->parent)
				next = user;
			if (user->code == IR_OP_YIELD && user->parent == op->parent && s->loop &&
			    ir_block_parent_op(user->parent) == s->loop) {
				for (int i = 0; i < user->nitem; i++) {
					if (user->item[i].kind != IR_IT_VALUE ||
					    ir_item_value(user, &user->item[i]) != &op->res[0])
						continue;
					IrValue *arg = s->loop->reg[0].block->arg[i + 1];
					for (IrUse *w = arg->uses; w; w = w->next)
						if (w->user->code == IR_OP_MMA_WAIT &&
						    w->user->parent == user->parent) {
							s->end_op = w->user;
							s->end_shift = 1;
						}
				}
			}
		}
		if (s->end_op)
			return;
		op = next;
	}
}

typedef struct Collect {
	Ck *k;
	CkRole *role;
	IrOp *skip; /* the ave.warp_specialize when collecting the kernel pseudo-role */
	bool any;   /* something needs proving */
} Collect;

static void
bar_of(CkSite *s, IrOp *op, const IrItem *it)
{
	s->bar_it = it;
	s->bar = ir_item_value(op, it); /* a VALUE item, or a lone value (SPEC §3) */
}

static bool
collect_op(IrOp *op, void *ud)
{
	Collect *cl = ud;
	Ck *k = cl->k;
	if (cl->skip && ir_op_is_ancestor(cl->skip, op))
		return true;
	CkSite *s;
	switch (op->code) {
	case IR_OP_MBAR_WAIT:
		s = site_new(k, CK_WAIT, op, cl->role);
		bar_of(s, op, &op->item[0]);
		break;
	case IR_OP_MBAR_ARRIVE: {
		s = site_new(k, CK_ARRIVE, op, cl->role);
		bar_of(s, op, &op->item[0]);
		s->count = 1;
		IrGroup *g = ir_op_group(op, k->c->kw.count);
		if (g)
			ir_expr_eval_const(g->item[0].e, &s->count);
		break;
	}
	case IR_OP_MBAR_EXPECT_TX:
		s = site_new(k, CK_EXPECT, op, cl->role);
		bar_of(s, op, &op->item[0]);
		s->count = 1;
		break;
	case IR_OP_COPY_ASYNC: {
		s = site_new(k, CK_COPY, op, cl->role);
		bar_of(s, op, &ir_op_group(op, k->c->kw.arrive)->item[0]);
		const IrItem *into = &ir_op_group(op, k->c->kw.into)->item[0];
		pass_ck_mem(k, s, op, into);
		s->bytes = tile_bytes(ir_item_value(op, into)->type);
		break;
	}
	case IR_OP_STORE:
		/* A store into global memory: the global-store check has something to prove, also
		 * in a kernel without synchronization. */
		cl->any = true;
		return true;
	case IR_OP_SMEM_STORE:
		s = site_new(k, CK_STORE, op, cl->role);
		pass_ck_mem(k, s, op, &ir_op_group(op, k->c->kw.into)->item[0]);
		break;
	case IR_OP_SMEM_LOAD:
		s = site_new(k, CK_READ, op, cl->role);
		pass_ck_mem(k, s, op, &op->item[0]);
		break;
	case IR_OP_MMA:
	case IR_OP_MMA_ASYNC:
		for (int i = 0; i < 2; i++) {
			if (!is_smem_item(op, &op->item[i]))
				continue;
			s = site_new(k, CK_READ, op, cl->role);
			pass_ck_mem(k, s, op, &op->item[i]);
			if (op->code == IR_OP_MMA_ASYNC)
				mma_end(k, s);
		}
		break;
	case IR_OP_TAG_ASSERT:
		site_new(k, CK_ASSERT, op, cl->role);
		break;
	case IR_OP_BARRIER:
		site_new(k, CK_BARRIER, op, cl->role);
		/* Replicas pair at it only when all of them pass it alike: to prove. */
		if (cl->role->nrep > 1)
			break;
		return true;
	case IR_OP_CHUNK_WAIT:
		site_new(k, CK_CHUNK, op, cl->role);
		break;
	case IR_OP_LOAD:
	case IR_OP_GET:
		if (op->item[0].kind != IR_IT_SYMBOL)
			return true;
		site_new(k, CK_SYMM, op, cl->role);
		break;
	case IR_OP_PUT:
		site_new(k, CK_PUT, op, cl->role);
		break;
	default:
		return true;
	}
	cl->any = true;
	return true;
}

static bool
kernel_alloc(Ck *k, const IrValue *v, IrOpcode code)
{
	return v->kind == IR_VAL_RESULT && v->op->code == code &&
	       v->op->parent == k->kernel->reg[0].block;
}

/* The first ave.warp_specialize not at the kernel's top level. */
static bool
nested_ws(IrOp *op, void *ud)
{
	IrOp **deep = ud;
	if (op->code == IR_OP_WARP_SPECIALIZE && ir_op_parent_op(op)->code != IR_OP_KERNEL) {
		*deep = op;
		return false;
	}
	return true;
}

bool
pass_ck_collect(Ck *k)
{
	IrBlock *body = k->kernel->reg[0].block;
	IrOp *ws = NULL;
	int nws = 0, wseg = 0, seg = 0;
	for (IrOp *op = body->first; op; op = op->next, seg++)
		if (op->code == IR_OP_WARP_SPECIALIZE) {
			ws = op;
			wseg = seg;
			nws++;
		}
	int nroles = 1;
	if (ws)
		for (IrOp *r = ws->reg[0].block->first; r; r = r->next)
			nroles += r->code == IR_OP_ROLE;
	k->roles = ir_arena_alloc(&k->arena, sizeof *k->roles * (size_t)nroles);
	k->nroles = nroles;
	CkRole *kr = &k->roles[0];
	kr->op = k->kernel;
	kr->name = ir_ctx_printf(k->c, "@%s", k->kernel->item[0].s);
	kr->nrep = 1;
	kr->body = body;
	kr->ws_seg = ws ? wseg : -1;
	FlatScan fs = {kr, ws};
	ir_walk(body, find_flat, &fs);
	Collect cl = {k, kr, ws, false};
	ir_walk(body, collect_op, &cl);
	bool any = cl.any;
	int i = 1;
	if (ws) {
		for (IrOp *r = ws->reg[0].block->first; r; r = r->next) {
			if (r->code != IR_OP_ROLE)
				continue;
			CkRole *ro = &k->roles[i];
			ro->op = r;
			ro->index = i++;
			ro->name = ir_ctx_printf(k->c, "@%s", r->item[0].s);
			ro->nrep = role_replicas(k, r);
			if (ro->nrep > CK_MAX_REPLICAS)
				return beyond(k, r, "a role of more than 32 replicas");
			ro->body = r->reg[0].block;
			ro->ws_seg = -1;
			ir_walk(ro->body, find_replica_id, &ro->rep_val);
			fs = (FlatScan){ro, NULL};
			ir_walk(ro->body, find_flat, &fs);
			cl.role = ro;
			cl.skip = NULL;
			cl.any = false;
			ir_walk(ro->body, collect_op, &cl);
			any |= cl.any;
		}
	}
	if (!any || k->broken)
		return any && !k->broken;
	if (nws > 1)
		return beyond(k, ws, "several 'ave.warp_specialize' regions in one kernel");
	IrOp *deep = NULL;
	ir_walk(body, nested_ws, &deep);
	if (deep)
		return beyond(k, deep,
		              "an 'ave.warp_specialize' inside an 'ave.if' or 'ave.for' (its roles "
		              "run at once; only one at the kernel's top level is analyzed)");
	for (int j = 0; j < k->sites.len; j++) {
		CkSite *s = IR_VEC_AT(k->sites, CkSite *, j);
		int64_t step;
		/* Role barriers pair the replicas' instances one to one; a barrier that some
		 * replica may skip or repeat breaks the pairing (and may deadlock). */
		if (s->kind == CK_BARRIER && s->role->nrep > 1 && s->nested)
			return beyond(k, s->op,
			              "an 'ave.barrier' in a nested loop of a replicated role (the "
			              "replicas' barriers may not pair up)");
		/* One barrier array or ring for the whole kernel: allocated once, at its top level.
		 */
		if (s->bar && !kernel_alloc(k, s->bar, IR_OP_MBAR_ALLOC))
			return beyond(k, s->op,
			              "a barrier that is not allocated by 'ave.mbar.alloc' at the "
			              "kernel's top level");
		if (s->mem && !kernel_alloc(k, s->mem, IR_OP_SMEM_ALLOC))
			return beyond(k, s->op,
			              "shared memory that is not allocated by 'ave.smem.alloc' "
			              "at the kernel's top level");
		/* Every enclosing loop: an iteration domain the solver can express (a loop with any
		 * other step would leave the site with no instances, proving everything about it).
		 */
		for (IrOp *p = ir_op_parent_op(s->op); p && p != k->kernel; p = ir_op_parent_op(p))
			if (p->code == IR_OP_FOR && !loop_step(k, p, &step) &&
			    !(p == s->role->flat_outer && grid_stride_dim(k, p) >= 0))
				return beyond(k, p,
				              "a loop whose step is not a positive constant holds "
				              "synchronization or shared-memory operations");
		if (s->end_op) {
			bool c, n;
			IrOp *l;
			position(s->role, s->end_op, &s->end_seg, &l, &s->end_pos, &c, &n);
		}
	}
	return true;
}

/* ---- another CTA ---- */

void
pass_ck_cta_enter(Ck *k, CkCta *save, Z3_ast pid[3])
{
	save->root = k->root;
	IrBlock *kb = k->kernel->reg[0].block;
	Z3_ast args[64];
	int na = kb->narg < 64 ? kb->narg : 64;
	for (int i = 0; i < na; i++)
		args[i] = ir_type_is_int(kb->arg[i]->type) ? pass_ck_value(k, k->root, kb->arg[i]) : NULL;
	for (int d = 0; d < 3; d++) {
		program_id(k, d, true);
		save->pid[d] = k->pid[d];
		save->pid_val[d] = k->pid_val[d];
		if (!pid[d]) {
			pid[d] = pass_ck_fresh(S, "pid");
			pass_ck_side(S, pid[d],
			             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), pid[d]),
			                          pass_ck_lt(S, pid[d], k->npid[d])));
		}
		k->pid[d] = pid[d];
	}
	k->root = env_new(k, NULL, k->kernel);
	for (int i = 0; i < na; i++)
		if (args[i])
			env_seed(k->root, kb->arg[i], args[i]);
}

void
pass_ck_cta_leave(Ck *k, const CkCta *save)
{
	k->root = save->root;
	for (int d = 0; d < 3; d++) {
		k->pid[d] = save->pid[d];
		if (save->pid_val[d])
			k->pid_val[d] = save->pid_val[d];
	}
}

/* ---- instances ---- */

bool
pass_ck_is_flat(const CkSite *s)
{
	return s->loop && s->loop == s->role->flat_inner;
}

/* The k-loop's trip count in iteration t1 of the tile loop (the same in every tile: checked by
 * pass_ck_phases). */
static Z3_ast
flat_inner_trip(Ck *k, CkRole *ro, CkEnv *renv, Z3_ast t1)
{
	return trip_count(k, pass_ck_loop_env(k, renv, ro->flat_outer, t1), ro->flat_inner);
}

/* Use u of a flat role's loop as iterations (t1, t2) of the tile loop and the k-loop:
 * u = t1 * n2 + t2 with 0 <= t2 < n2 (for u out of range, t1 is too). The pair is two
 * uninterpreted functions of (u, n2), so equal uses give equal pairs in any role (congruence,
 * not arithmetic). With n2 a constant the definition is linear; otherwise the solver gets its
 * linear consequences and the product only to confirm a counterexample (pass_ck_exact). */
static void
flat_split(Ck *k, CkRole *ro, CkEnv *renv, Z3_ast u, Z3_ast *t1, Z3_ast *t2)
{
	Z3_ast n2 = flat_inner_trip(k, ro, renv, pass_ck_num(S, 0));
	for (int i = 0; i < k->flatmemo.len; i++) {
		CkFlatMemo *m = &IR_VEC_AT(k->flatmemo, CkFlatMemo, i);
		if (m->n2 == n2 && m->u == u) {
			*t1 = m->t1;
			*t2 = m->t2;
			return;
		}
	}
	Z3_ast args[2] = {u, n2};
	Z3_ast a = pass_ck_uf(S, "tile_of", 2, args), b = pass_ck_uf(S, "k_of", 2, args);
	Z3_ast zero = pass_ck_num(S, 0);
	Z3_ast pos = pass_ck_lt(S, zero, n2);
	Z3_ast v = pass_ck_sub(S, u, b); /* t1 * n2 */
	Z3_ast exact = pass_ck_eq(S, v, pass_ck_mul(S, a, n2));
	int64_t c;
	bool linear = pass_ck_is_num(S, n2, &c);
	Z3_ast facts[5] = {pass_ck_le(S, zero, b), pass_ck_lt(S, b, n2), exact, NULL, NULL};
	if (!linear) {
		facts[2] = pass_ck_eq(S, pass_ck_eq(S, a, zero), pass_ck_eq(S, v, zero));
		facts[3] = pass_ck_or2(S, pass_ck_le(S, a, zero),
		                       pass_ck_and2(S, pass_ck_le(S, n2, v), pass_ck_le(S, a, v)));
		facts[4] = pass_ck_or2(S, pass_ck_le(S, zero, a),
		                       pass_ck_le(S, v, pass_ck_sub(S, zero, n2)));
	}
	Z3_ast none = pass_ck_and2(S, pass_ck_eq(S, a, zero), pass_ck_eq(S, b, u));
	Z3_ast def = pass_ck_or2(S, pass_ck_and2(S, pos, pass_ck_and(S, linear ? 3 : 5, facts)),
	                         pass_ck_and2(S, pass_ck_not(S, pos), none));
	pass_ck_side(S, a, def);
	pass_ck_side(S, b, def);
	if (!linear)
		pass_ck_exact(S, a, pass_ck_or2(S, pass_ck_not(S, pos), exact));
	CkFlatMemo m = {n2, u, a, b};
	ir_vec_push(k->c->al, &k->flatmemo, &m, sizeof m);
	*t1 = a;
	*t2 = b;
}

void
pass_ck_tile_split(Ck *k, const CkInst *in, Z3_ast *t1, Z3_ast *t2)
{
	CkRole *ro = in->site->role;
	flat_split(k, ro, pass_ck_role_env(k, ro, in->r), in->t, t1, t2);
}

/* Uses of a flat role's loop, n1 * n2 (a variable, when both are unknowns, whose product
 * only confirms counterexamples). */
static Z3_ast
flat_trip(Ck *k, CkRole *ro, CkEnv *renv)
{
	Z3_ast n1 = trip_count(k, renv, ro->flat_outer);
	Z3_ast n2 = flat_inner_trip(k, ro, renv, pass_ck_num(S, 0));
	int64_t c;
	if (!n1 || !n2)
		return NULL;
	if (pass_ck_is_num(S, n2, &c) || pass_ck_is_num(S, n1, &c))
		return pass_ck_mul(S, n1, n2);
	for (int i = 0; i < k->flattrip.len; i++) {
		CkFlatMemo *m = &IR_VEC_AT(k->flattrip, CkFlatMemo, i);
		if (m->n2 == n2 && m->u == n1)
			return m->t1;
	}
	Z3_ast n = pass_ck_fresh(S, "uses");
	CkFlatMemo m = {n2, n1, n, NULL};
	ir_vec_push(k->c->al, &k->flattrip, &m, sizeof m);
	Z3_ast zero = pass_ck_num(S, 0);
	Z3_ast some = pass_ck_and2(S, pass_ck_lt(S, zero, n1), pass_ck_lt(S, zero, n2));
	Z3_ast big = pass_ck_and(
	    S, 3, (Z3_ast[]){pass_ck_le(S, n1, n), pass_ck_le(S, n2, n), pass_ck_lt(S, zero, n)});
	pass_ck_side(S, n, pass_ck_or2(S, pass_ck_and2(S, some, big),
	                               pass_ck_and2(S, pass_ck_not(S, some),
	                                            pass_ck_eq(S, n, zero))));
	pass_ck_exact(S, n, pass_ck_eq(S, n, pass_ck_mul(S, pass_ck_ite(S, some, n1, zero), n2)));
	return n;
}

/* Iteration t of the loop of `site` (env `le` is that loop's) exists: for a flat role, use t
 * of the uses of the tile loop and k-loop together. */
static Z3_ast
site_iter_exists(Ck *k, const CkSite *site, CkEnv *le, Z3_ast t)
{
	if (!pass_ck_is_flat(site))
		return pass_ck_iter_exists(k, le->parent, site->loop, t);
	Z3_ast n = flat_trip(k, site->role, le->parent->parent);
	if (!n)
		return Z3_mk_false(S->z);
	return pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), t), pass_ck_lt(S, t, n));
}

CkInst
pass_ck_inst_at(Ck *k, CkSite *site, Z3_ast r, Z3_ast t)
{
	CkInst in = {site, NULL, r, t};
	CkEnv *e = pass_ck_role_env(k, site->role, r);
	IrOp *chain[64];
	int n = 0;
	Z3_ast t2 = NULL;
	for (IrOp *p = ir_op_parent_op(site->op); p && p != site->role->op && n < 64;
	     p = ir_op_parent_op(p))
		if (p->code == IR_OP_FOR)
			chain[n++] = p;
	for (int i = n - 1; i >= 0; i--) {
		if (t && pass_ck_is_flat(site) && chain[i] == site->role->flat_outer) {
			Z3_ast t1;
			flat_split(k, site->role, e, t, &t1, &t2);
			e = pass_ck_loop_env(k, e, chain[i], t1);
		} else if (chain[i] == site->loop) {
			e = pass_ck_loop_env(k, e, chain[i], t2 ? t2 : t);
		} else {
			Z3_ast u = pass_ck_fresh(S, "u");
			pass_ck_side(S, u, pass_ck_iter_exists(k, e, chain[i], u));
			e = pass_ck_loop_env(k, e, chain[i], u);
		}
	}
	in.env = e;
	return in;
}

CkInst
pass_ck_inst(Ck *k, CkSite *site, const char *tag)
{
	Z3_ast r = pass_ck_num(S, 0);
	if (site->role->nrep > 1) {
		r = pass_ck_fresh(S, "r");
		pass_ck_side(S, r,
		             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), r),
		                          pass_ck_lt(S, r, pass_ck_num(S, site->role->nrep))));
	}
	Z3_ast t = NULL;
	if (site->loop)
		t = pass_ck_fresh(S, tag ? tag : "t");
	CkInst in = pass_ck_inst_at(k, site, r, t);
	if (t) {
		CkEnv *re = in.env;
		while (re->scope != site->loop)
			re = re->parent;
		pass_ck_side(S, t, site_iter_exists(k, site, re, t));
	}
	return in;
}

Z3_ast
pass_ck_inst_exists(Ck *k, const CkInst *in)
{
	Z3_ast ok = pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), in->r),
	                         pass_ck_lt(S, in->r, pass_ck_num(S, in->site->role->nrep)));
	if (!in->t)
		return ok;
	CkEnv *re = in->env;
	while (re->scope != in->site->loop)
		re = re->parent;
	return pass_ck_and2(S, ok, site_iter_exists(k, in->site, re, in->t));
}

Z3_ast
pass_ck_guard(Ck *k, const CkInst *in, bool *known)
{
	Z3_ast on = Z3_mk_true(S->z);
	IrOp *role = in->site->role->op;
	for (IrOp *child = in->site->op, *p = ir_op_parent_op(child); p && p != role;
	     child = p, p = ir_op_parent_op(p)) {
		if (p->code != IR_OP_IF)
			continue;
		const IrItem *ci = &p->item[0];
		int before = k->nopaque;
		Z3_ast cond = ci->kind == IR_IT_VALUE && !ci->suffix
		                  ? pass_ck_value(k, in->env, ir_item_value(p, ci))
		                  : NULL;
		if (!cond || k->nopaque != before) {
			*known = false;
			return Z3_mk_false(S->z);
		}
		Z3_ast taken = pass_ck_not(S, pass_ck_eq(S, cond, pass_ck_num(S, 0)));
		bool then = p->nreg > 0 && child->parent == p->reg[0].block;
		on = pass_ck_and2(S, on, then ? taken : pass_ck_not(S, taken));
	}
	return on;
}

static Z3_ast
coord0(Ck *k, CkEnv *e, IrOp *op, const IrItem *it)
{
	if (!it || !it->suffix || it->ncoord < 1)
		return pass_ck_num(S, 0);
	return pass_ck_expr(k, e, op, it->coord[0].e);
}

Z3_ast
pass_ck_bar_index(Ck *k, const CkInst *in)
{
	return coord0(k, in->env, in->site->op, in->site->bar_it);
}

Z3_ast
pass_ck_slot(Ck *k, const CkInst *in)
{
	return coord0(k, in->env, in->site->slot_op, in->site->slot_it);
}

Z3_ast
pass_ck_parity(Ck *k, const CkInst *in)
{
	IrGroup *g = ir_op_group(in->site->op, k->c->kw.parity);
	Z3_ast p = pass_ck_expr(k, in->env, in->site->op, g->item[0].e);
	return pass_ck_mod(S, p, 2);
}

Z3_ast
pass_ck_bytes(Ck *k, const CkInst *in)
{
	IrGroup *g = ir_op_group(in->site->op, k->c->kw.bytes);
	return pass_ck_expr(k, in->env, in->site->op, g->item[0].e);
}

/* The rows (d = 0) or columns (d = 1) of its slot an access touches: [*lo, *lo + *len). */
void
pass_ck_span(Ck *k, const CkInst *in, int d, Z3_ast *lo, Z3_ast *len)
{
	const CkSite *s = in->site;
	IrType *t = s->mem->type->kind == IR_TY_RING ? s->mem->type->elem : s->mem->type;
	*lo = pass_ck_num(S, 0);
	*len = pass_ck_num(S, d < t->rank ? t->dims[d] : 1);
	if (s->nslice > 4)
		return;
	bool inner = true;
	for (int i = 0; i < s->nslice; i++) {
		IrOp *op = s->slice[i];
		IrGroup *g = ir_op_group(op, d == 0 ? k->c->kw.rows : k->c->kw.cols);
		if (!g)
			continue;
		int64_t n;
		if (inner && ir_expr_eval_const(g->item[1].e, &n))
			*len = pass_ck_num(S, n);
		inner = false;
		*lo = pass_ck_add(S, *lo, pass_ck_expr(k, in->env, op, g->item[0].e));
	}
}

Z3_ast
pass_ck_region_has(Ck *k, const CkInst *in, Z3_ast e0, Z3_ast e1)
{
	Z3_ast c[4];
	for (int d = 0; d < 2; d++) {
		Z3_ast lo, n, e = d ? e1 : e0;
		pass_ck_span(k, in, d, &lo, &n);
		c[2 * d] = pass_ck_le(S, lo, e);
		c[2 * d + 1] = pass_ck_lt(S, e, pass_ck_add(S, lo, n));
	}
	return pass_ck_and(S, 4, c);
}

Z3_ast
pass_ck_regions_meet(Ck *k, const CkInst *a, const CkInst *b)
{
	Z3_ast c[4];
	for (int d = 0; d < 2; d++) {
		Z3_ast la, na, lb, nb;
		pass_ck_span(k, a, d, &la, &na);
		pass_ck_span(k, b, d, &lb, &nb);
		c[2 * d] = pass_ck_lt(S, la, pass_ck_add(S, lb, nb));
		c[2 * d + 1] = pass_ck_lt(S, lb, pass_ck_add(S, la, na));
	}
	return pass_ck_and(S, 4, c);
}

/* ---- phase structure ---- */

static int64_t
bar_size(const CkSite *s)
{
	return s->bar && s->bar->type->kind == IR_TY_MBAR ? s->bar->type->n : 1;
}

/* The smallest period P (from the constants met while evaluating it, and the barrier array size)
 * with which the site's barrier index repeats along the role-level loop, taking distinct values
 * within a period. 0 when there is none. */
static int64_t
index_period(Ck *k, CkSite *s)
{
	CkInst in = pass_ck_inst(k, s, "t");
	k->nmods = 0;
	Z3_ast idx = pass_ck_bar_index(k, &in);
	/* Candidates: the constants met and the barrier count, then their divisors (a step of 2
	 * over k mod 4 repeats every 2 iterations), then 1. A period that passes both tests below
	 * is the least one (a smaller period would repeat a barrier within it), so the order only
	 * matters for speed: the likely ones first. */
	if (!pass_ck_depends(S, idx, in.t))
		return 1;
	int64_t cand[258];
	int nc = 0, nb;
	for (int i = 0; i < k->nmods; i++)
		cand[nc++] = k->mods[i];
	cand[nc++] = bar_size(s);
	nb = nc;
	for (int i = 0; i < nb; i++)
		for (int64_t d = 2; d < cand[i] && d <= 256 && nc < 256; d++)
			if (cand[i] % d == 0)
				cand[nc++] = d;
	cand[nc++] = 1;
	for (int i = 0; i < nc; i++) {
		int64_t p = cand[i];
		bool seen = p > 256;
		for (int j = 0; j < i && !seen; j++)
			seen = cand[j] == p;
		if (seen)
			continue;
		CkInst sh = pass_ck_inst_at(k, s, in.r, pass_ck_add(S, in.t, pass_ck_num(S, p)));
		Z3_ast periodic = pass_ck_eq(S, pass_ck_bar_index(k, &sh), idx);
		if (p == 1) {
			if (valid(k, periodic))
				return 1;
			continue;
		}
		/* Periodic, and distinct within a period: one query for both. */
		Z3_ast d = pass_ck_fresh(S, "d");
		pass_ck_side(S, d,
		             pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 1), d),
		                          pass_ck_lt(S, d, pass_ck_num(S, p))));
		CkInst sd = pass_ck_inst_at(k, s, in.r, pass_ck_add(S, in.t, d));
		if (valid(k, pass_ck_and2(
		                 S, periodic,
		                 pass_ck_not(S, pass_ck_eq(S, pass_ck_bar_index(k, &sd), idx)))))
			return p;
	}
	return 0;
}

static bool
same_bar(const CkSite *a, const CkSite *b)
{
	return a->bar && a->bar == b->bar;
}

/* Parity a wait needs at occurrence j (per form): lin delta: (j + 1 - delta) mod 2; const 0: 1;
 * const 1: 0. */
const CkForm pass_ck_forms[CK_NFORMS] = {{true, 1}, {true, 0}, {false, 0}, {false, 1}};

Z3_ast
pass_ck_form_parity(Ck *k, bool lin, int64_t val, Z3_ast j)
{
	if (lin)
		return pass_ck_mod(S, pass_ck_add(S, j, pass_ck_num(S, 1 - val)), 2);
	return pass_ck_num(S, val ? 0 : 1);
}

/* The form of wait w's parity with period p, for replica r (a term: every replica, or one):
 * -1 when some residue class follows none (*bad its class). */
static int
form_of(Ck *k, CkSite *w, int64_t p, Z3_ast r, CkWaitForm *f, int *bad)
{
	f->period = p;
	f->nclass = (int)p;
	f->lin = ir_arena_alloc(&k->arena, sizeof *f->lin * (size_t)p);
	f->val = ir_arena_alloc(&k->arena, sizeof *f->val * (size_t)p);
	CkInst in = pass_ck_inst(k, w, "t");
	if (r)
		in = pass_ck_inst_at(k, w, r, in.t);
	Z3_ast occ = pass_ck_floordiv(S, in.t, p), par = pass_ck_parity(k, &in);
	/* The first use's parity usually decides delta: 0 waits (delta 1), 1 does not (delta 0). */
	CkInst i0 = pass_ck_inst_at(k, w, in.r, pass_ck_num(S, 0));
	int64_t p0 = -1;
	pass_ck_is_num(S, pass_ck_parity(k, &i0), &p0);
	for (int delta = 1; delta >= 0; delta--) {
		if (p0 >= 0 && delta != 1 - p0)
			continue;
		if (valid(k, pass_ck_eq(S, par, pass_ck_form_parity(k, true, delta, occ)))) {
			f->uniform = true;
			for (int c = 0; c < p; c++) {
				f->lin[c] = true;
				f->val[c] = delta;
			}
			return 0;
		}
	}
	/* Class by class: iterations t = j * p + c. */
	for (int c = 0; c < p; c++) {
		Z3_ast j = pass_ck_fresh(S, "j");
		pass_ck_side(S, j, pass_ck_le(S, pass_ck_num(S, 0), j));
		Z3_ast t = pass_ck_add(S, pass_ck_mulc(S, j, p), pass_ck_num(S, c));
		CkInst ic = pass_ck_inst_at(k, w, in.r, t);
		Z3_ast exists = pass_ck_inst_exists(k, &ic), pc = pass_ck_parity(k, &ic);
		const CkForm *forms = pass_ck_forms;
		bool found = false;
		for (int i = 0; i < CK_NFORMS && !found; i++) {
			Z3_ast bad_c = pass_ck_and2(
			    S, exists,
			    pass_ck_not(
			        S,
			        pass_ck_eq(S, pc, pass_ck_form_parity(k, forms[i].lin, forms[i].val, j))));
			if (pass_ck_check(S, bad_c, NULL) == CK_UNSAT) {
				f->lin[c] = forms[i].lin;
				f->val[c] = forms[i].val;
				found = true;
			}
		}
		if (!found) {
			*bad = c;
			return -1;
		}
	}
	return 0;
}

static bool
wait_form(Ck *k, CkSite *w)
{
	if (pass_ck_is_flat(w) && pass_ck_flat_restart(k, w)) {
		k->broken = true;
		return false;
	}
	int64_t p = index_period(k, w);
	if (!p)
		return beyond(
		    k, w->op,
		    "the barrier index of this 'ave.mbar.wait' is not a one-to-one "
		    "periodic function of the loop iteration with a period the checker tries "
		    "(1, and up to 256: the barrier count, the 'mod'/'floordiv' constants the "
		    "index uses and their divisors)");
	CkWaitForm *f = ir_arena_alloc(&k->arena, sizeof *f);
	w->wf = f;
	int bad = 0;
	if (form_of(k, w, p, NULL, f, &bad) == 0)
		return true;
	/* One form per replica: ping-pong's order barriers, where replica 0's first wait returns
	 * at once and replica 1's waits for replica 0. */
	int64_t nrep = w->role->nrep;
	bool each = nrep > 1 && nrep <= CK_MAX_FORM_REPLICAS;
	for (int64_t q = 0; q < nrep && each; q++) {
		int badq = 0;
		f->rep[q] = ir_arena_alloc(&k->arena, sizeof *f);
		each = form_of(k, w, p, pass_ck_num(S, q), f->rep[q], &badq) == 0;
	}
	if (each) {
		f->nrep = (int)nrep;
		return true;
	}
	/* Most often a wrong parity: reported with a counterexample (the rules). */
	if (!k->bad_parity) {
		k->bad_parity = w;
		k->bad_parity_class = bad;
	}
	k->broken = true;
	return false;
}

/* Do sites a and b name the same barrier in every instance (same replica and iteration)? */
static bool
same_index(Ck *k, CkSite *a, CkSite *b)
{
	CkInst ia = pass_ck_inst(k, a, "t");
	Z3_ast tb = ia.t;
	if (tb && b->shift != a->shift)
		tb = pass_ck_add(S, tb, pass_ck_num(S, b->shift - a->shift));
	CkInst ib = pass_ck_inst_at(k, b, ia.r, tb);
	return valid(k, pass_ck_eq(S, pass_ck_bar_index(k, &ia), pass_ck_bar_index(k, &ib)));
}

static Z3_ast exists_at(Ck *k, CkSite *s, Z3_ast r, Z3_ast t);

/* A plain arrival under `ave.if` in the loop: its guard must be exactly "t >= d" for some
 * 1 <= d <= 8 (k > 0, k >= 2, ...); it then releases use t - d. Or exactly "t is the loop's
 * last iteration" (k == nk - 1): it then releases the loop's last use, as a release after the
 * loop would (in_loop_tail). */
static bool
arrival_shift(Ck *k, CkSite *s)
{
	if (s->kind != CK_ARRIVE)
		return beyond(k, s->op, "an 'ave.mbar.expect_tx' or 'ave.copy.async' under 'ave.if'");
	CkInst in = pass_ck_inst(k, s, "t");
	bool known = true;
	Z3_ast g = pass_ck_guard(k, &in, &known);
	if (known)
		for (int64_t d = 1; d <= 8; d++)
			if (valid(k, pass_ck_eq(S, g, pass_ck_le(S, pass_ck_num(S, d), in.t)))) {
				s->shift = d;
				return true;
			}
	if (known) {
		/* Where iteration t exists: the guard holds exactly when t + 1 does not. */
		CkInst nx = pass_ck_inst_at(k, s, in.r, pass_ck_add(S, in.t, pass_ck_num(S, 1)));
		Z3_ast last = pass_ck_not(S, pass_ck_inst_exists(k, &nx));
		Z3_ast claim = pass_ck_or2(S, pass_ck_not(S, pass_ck_inst_exists(k, &in)),
		                           pass_ck_eq(S, g, last));
		if (valid(k, claim)) {
			s->tail = s->tail_in = true;
			return true;
		}
	}
	return beyond(k, s->op,
	              "an arrival under 'ave.if' whose condition is neither 'the loop is at least "
	              "d iterations in' (k > 0, k >= 2, ...; d <= 8: the checker releases use "
	              "k - d of the barrier there) nor 'this is the loop's last iteration' (k == "
	              "nk - 1: the release of its last use)");
}

/* A release after the loop of its last use: the barrier it names is the one the loop's
 * arrivals would name for that use. The check that it only runs when that use exists is
 * check_tail_orphans' (it has a counterexample). */
static bool
tail_index_ok(Ck *k, CkGroup *g, CkSite *s)
{
	if (s->kind != CK_ARRIVE)
		return beyond(k, s->op, "an 'ave.mbar.expect_tx' or 'ave.copy.async' after a loop "
		                        "whose arrivals release the previous iteration's use");
	CkSite *s0 = g->site[0];
	CkInst in0 = pass_ck_inst(k, s0, "t");
	Z3_ast tl = pass_ck_fresh(S, "tl");
	Z3_ast last = pass_ck_and2(S, exists_at(k, s0, in0.r, tl),
	                           pass_ck_not(S, exists_at(k, s0, in0.r,
	                                                    pass_ck_add(S, tl, pass_ck_num(S, 1)))));
	CkInst at = pass_ck_inst_at(k, s0, in0.r, pass_ck_add(S, tl, pass_ck_num(S, s0->shift)));
	CkInst ti = pass_ck_inst_at(k, s, in0.r, s->tail_in ? tl : NULL);
	Z3_ast bad = pass_ck_and2(
	    S, last, pass_ck_not(S, pass_ck_eq(S, pass_ck_bar_index(k, &at), pass_ck_bar_index(k, &ti))));
	CkRes r = pass_ck_check(S, bad, NULL);
	if (r == CK_UNSAT)
		return true;
	if (r == CK_UNKNOWN)
		return beyond(k, s->op,
		              "a release of the loop's last use whose barrier the solver could not "
		              "match with that use's within its time limit (an undecided query; "
		              "--timeout-ms raises the limit)");
	return beyond(k, s->op,
	              s->tail_in ? "a release on the loop's last iteration, not on the barrier of "
	                           "that iteration's use (the loop's last use)"
	                         : "an arrival after the loop on a barrier array whose loop "
	                           "arrivals release the previous iteration's use, but not on "
	                           "the barrier of the loop's last use");
}

/* The group of arrival site s: same role, barrier array and loop, and the same barrier in every
 * iteration. */
static CkGroup *
group_of(Ck *k, CkSite *s)
{
	for (int i = 0; i < k->groups.len; i++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, i);
		if (g->role == s->role && g->bar == s->bar && g->loop == s->loop &&
		    same_index(k, g->site[0], s))
			return g;
	}
	CkGroup *g = ir_arena_alloc(&k->arena, sizeof *g);
	g->role = s->role;
	g->bar = s->bar;
	g->loop = s->loop;
	g->site = ir_arena_alloc(&k->arena, sizeof *g->site * (size_t)k->sites.len);
	ir_vec_push(k->c->al, &k->groups, &g, sizeof g);
	return g;
}

bool
pass_ck_phases(Ck *k)
{
	/* A tile loop around the k-loop: the k-loop's uses are numbered across tiles, which
	 * needs the same trip count in every tile, and the ops on shared memory and barriers in
	 * the k-loop (elsewhere in the tile loop they would fall between two uses). */
	for (int i = 0; i < k->nroles; i++) {
		CkRole *ro = &k->roles[i];
		if (!ro->flat_outer)
			continue;
		CkEnv *renv = pass_ck_role_env(k, ro, ro->nrep > 1 ? pass_ck_fresh(S, "r") : NULL);
		Z3_ast t1 = pass_ck_fresh(S, "t");
		Z3_ast n2 = flat_inner_trip(k, ro, renv, t1);
		if (!n2 || pass_ck_depends(S, n2, t1))
			return beyond(k, ro->flat_inner,
			              "a k-loop in a tile loop whose trip count changes from tile to "
			              "tile (the uses of its barriers are numbered across tiles)");
	}
	/* Elsewhere in the tile loop: waits and arrivals on a barrier array of their own (an
	 * order between tiles, as ping-pong's consumers take turns), numbered by the tile. */
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *s = IR_VEC_AT(k->sites, CkSite *, i);
		if (!s->role->flat_outer || s->loop != s->role->flat_outer)
			continue;
		if (s->kind == CK_BARRIER && !s->nested)
			continue; /* a role barrier: its replicas pass it alike (check_barrier_pairing) */
		if ((s->kind != CK_WAIT && s->kind != CK_ARRIVE) || s->cond || s->nested)
			return beyond(k, s->op,
			              ir_ctx_printf(k->c,
			                            "'%s'%s in a tile loop outside its k-loop (there "
			                            "only waits and arrivals on a barrier array the "
			                            "k-loops do not use, outside 'ave.if', are "
			                            "understood)",
			                            ir_op_name(s->op->code),
			                            s->cond ? " under 'ave.if'" : ""));
		for (int j = 0; j < k->sites.len; j++) {
			CkSite *o = IR_VEC_AT(k->sites, CkSite *, j);
			if (o->bar == s->bar && pass_ck_is_flat(o))
				return beyond(k, s->op,
				              "a barrier array used both in a k-loop and in its tile "
				              "loop outside it (the k-loop's uses are numbered across "
				              "tiles, the tile loop's by tile)");
		}
		s->role->tile_sync = k->tiled = true;
		k->skew |= s->role->nrep > 1;
	}
	/* Replicas that take turns rank apart (rank_of): a role barrier between them would make a
	 * replica wait for one ranked later, which the deadlock check does not see. */
	for (int i = 0; i < k->sites.len && k->skew; i++) {
		CkSite *s = IR_VEC_AT(k->sites, CkSite *, i);
		if (s->kind == CK_BARRIER && s->role->tile_sync && s->role->nrep > 1)
			return beyond(k, s->op,
			              "an 'ave.barrier' in a role whose replicas take turns through "
			              "barriers in its tile loop (their ranks differ by replica)");
	}
	for (int i = 0; i < k->sites.len && k->tiled; i++) {
		CkSite *s = IR_VEC_AT(k->sites, CkSite *, i);
		bool sync = s->kind == CK_WAIT || s->kind == CK_ARRIVE || s->kind == CK_EXPECT ||
		            s->kind == CK_COPY;
		if (sync && s->loop && !s->role->flat_outer)
			return beyond(k, s->op,
			              "a role synchronizing in a loop that is not a tile loop around a "
			              "k-loop, beside a role whose tile loop synchronizes outside its "
			              "k-loop");
	}
	/* A role's waits and arrivals sit in one role-level loop (or outside loops): the deadlock
	 * check ranks them by its iteration. */
	for (int i = 0; i < k->sites.len; i++) {
		CkSite *s = IR_VEC_AT(k->sites, CkSite *, i);
		bool sync = s->kind == CK_WAIT || s->kind == CK_ARRIVE || s->kind == CK_EXPECT ||
		            s->kind == CK_COPY;
		if (!sync || !s->loop)
			continue;
		IrOp *was = s->role->sync_loop;
		CkRole *ro = s->role;
		bool tiles = ro->tile_sync && (was == ro->flat_outer || was == ro->flat_inner) &&
		             (s->loop == ro->flat_outer || s->loop == ro->flat_inner);
		if (was && was != s->loop && !tiles)
			return beyond(k, s->op,
			              "waits and arrivals of one role in two different loops");
		if (!was || pass_ck_is_flat(s))
			s->role->sync_loop = s->loop;
		s->role->sync_seg = s->seg;
	}
	/* Waits: one role-level loop wait per role and barrier array, or top-level waits only. */
	for (int i = 0; i < k->sites.len && !k->broken; i++) {
		CkSite *w = IR_VEC_AT(k->sites, CkSite *, i);
		if (w->kind != CK_WAIT)
			continue;
		if (!w->bar)
			return beyond(k, w->op,
			              "a wait on a barrier that is not an 'ave.mbar.alloc' result");
		if (w->cond || w->nested)
			return beyond(k, w->op,
			              w->cond ? "an 'ave.mbar.wait' under 'ave.if'"
			                      : "an 'ave.mbar.wait' in a nested loop (a tile loop "
			                        "around the k-loop is understood when the k-loop sits "
			                        "directly in the tile loop, itself in the role body)");
		/* A loop wait may be followed by top-level waits of its role on its array after
		 * the loop (tail waits, a drain): their guarantee starts from the loop's last
		 * wait on each barrier (top_wait_lo). */
		for (int j = 0; j < k->sites.len; j++) {
			CkSite *o = IR_VEC_AT(k->sites, CkSite *, j);
			if (o == w || o->kind != CK_WAIT || o->role != w->role || !same_bar(o, w) ||
			    (!o->loop && !w->loop))
				continue;
			if (o->loop && w->loop)
				return beyond(k, o->op,
				              "several waits of one role on one barrier array in a "
				              "loop");
			CkSite *top = o->loop ? w : o, *in = o->loop ? o : w;
			if (top->seg <= in->seg)
				return beyond(
				    k, top->op,
				    "a wait on a barrier array before the loop that waits "
				    "on it again (only waits after the loop, a drain, "
				    "are understood)");
		}
		if (w->loop && !wait_form(k, w))
			return false;
	}
	/* Arrivals: per role and barrier array, all in one loop (or all outside loops), once per
	 * use of the barrier array, on the same barrier. Under `ave.if` in the loop, an arrival
	 * whose guard is exactly `t >= d` releases use t - d (the slot consumed d iterations
	 * ago); an arrival after the loop then releases its last use. */
	for (int i = 0; i < k->sites.len && !k->broken; i++) {
		CkSite *s = IR_VEC_AT(k->sites, CkSite *, i);
		if (s->kind != CK_ARRIVE && s->kind != CK_EXPECT && s->kind != CK_COPY)
			continue;
		if (!s->bar)
			return beyond(k, s->op,
			              "an arrival on a barrier that is not an 'ave.mbar.alloc' "
			              "result");
		if (s->nested)
			return beyond(k, s->op,
			              "an arrival on a barrier in a nested loop (a tile loop "
			              "around the k-loop is understood when the k-loop sits "
			              "directly in the tile loop, itself in the role body)");
		if (s->cond && s->loop && !arrival_shift(k, s))
			return false;
		CkGroup *tail_of = NULL;
		/* In the loop, on its last iteration: the release of the last use of the group the
		 * loop's other arrivals (releasing a use late) make, which come first. */
		for (int j = 0; j < i && s->tail_in && !tail_of; j++) {
			CkSite *o = IR_VEC_AT(k->sites, CkSite *, j);
			if (o->group && o->role == s->role && o->bar == s->bar && o->loop == s->loop &&
			    !o->tail && o->group->shift > 0)
				tail_of = o->group;
		}
		if (s->tail_in && !tail_of)
			return beyond(k, s->op,
			              "a release on the loop's last iteration where no arrival before "
			              "it in the loop releases a use late (under 'ave.if' k > 0): the "
			              "last use is released by the loop's own arrivals");
		for (int j = 0; j < i; j++) {
			CkSite *o = IR_VEC_AT(k->sites, CkSite *, j);
			if (!o->group || o->role != s->role || o->bar != s->bar || o->loop == s->loop)
				continue;
			/* After the loop whose arrivals release a use late: the last use. */
			if (!s->loop && o->loop && o->group->shift > 0 && s->seg > o->seg) {
				tail_of = o->group;
				continue;
			}
			return beyond(k, s->op,
			              "arrivals of one role on one barrier array in different loops, "
			              "or inside and outside a loop (except, after a loop whose "
			              "arrivals under 'ave.if' release the use of the previous "
			              "iteration, the release of the last use)");
		}
		if (s->cond && !s->loop && !tail_of)
			return beyond(k, s->op, "an arrival on a barrier under 'ave.if' outside a "
			                        "loop (other than a release of a loop's last use)");
		CkGroup *g;
		if (tail_of) {
			if (tail_of->shift != 1)
				return beyond(k, s->op,
				              "a release after the loop of the last use, where the loop's "
				              "arrivals release the use of 2 or more iterations ago");
			for (int j = 0; j < tail_of->nsite; j++)
				if (tail_of->site[j]->tail)
					return beyond(k, s->op,
					              "a second release of the loop's last use (after "
					              "the loop or on its last iteration)");
			s->tail = true;
			s->shift = 1;
			g = tail_of;
			if (!tail_index_ok(k, g, s))
				return false;
		} else {
			g = group_of(k, s);
		}
		if (s->loop && g->nsite && s->shift > g->shift)
			g->shift = s->shift;
		else if (!g->nsite)
			g->shift = s->shift;
		g->site[g->nsite++] = s;
		s->group = g;
		if (s->tail)
			continue; /* per use, the loop's arrivals are the group's */
		if (s->kind == CK_COPY)
			g->copy_bytes += s->bytes;
		else
			g->arrivals += s->count;
	}
	/* A release of the last use arrives as often as the loop's late releases of a use do
	 * (fewer leaves its phase open, more completes one no use accounts for). */
	for (int i = 0; i < k->groups.len && !k->broken; i++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, i);
		int64_t late = 0;
		CkSite *tl = NULL, *first_late = NULL;
		for (int j = 0; j < g->nsite; j++) {
			CkSite *s = g->site[j];
			if (s->tail)
				tl = s;
			else if (s->shift > 0) {
				late += s->count;
				if (!first_late)
					first_late = s;
			}
		}
		if (tl && tl->count != late) {
			if (pass_ck_error_once(k, tl->op)) {
				/* Static counts: the counterexample is every instance; either release
				 * may be the wrong one, so both are named. */
				IrDiag *d = ir_diag_begin(
				    k->c, IR_SEV_ERROR, tl->op->loc,
				    "this release of the loop's last use of '%%%s' arrives %lld time%s, "
				    "where the loop's late releases of each use arrive %lld time%s: %s",
				    pass_ck_vname(tl->bar), (long long)tl->count,
				    tl->count == 1 ? "" : "s", (long long)late, late == 1 ? "" : "s",
				    tl->count < late ? "the last use's phase never completes"
				                     : "the extra arrivals complete a phase no use "
				                       "accounts for");
				IrCex *cx = ir_diag_cex(k->c, d);
				cx->role = tl->role->name;
				cx->found = ir_ctx_printf(k->c, "%lld arrival%s on the last use",
				                          (long long)tl->count, tl->count == 1 ? "" : "s");
				cx->expected = ir_ctx_printf(k->c, "%lld, as on every other use",
				                             (long long)late);
				if (first_late)
					ir_diag_note(k->c, d, first_late->op->loc,
					             "the loop's release of the use before arrives %lld "
					             "time%s here",
					             (long long)first_late->count,
					             first_late->count == 1 ? "" : "s");
				ir_diag_emit(k->c, d);
			}
			k->broken = true;
			return false;
		}
	}
	for (int i = 0; i < k->groups.len && !k->broken; i++) {
		CkGroup *g = IR_VEC_AT(k->groups, CkGroup *, i);
		CkSite *s0 = g->site[0];
		g->period = 1;
		if (g->loop && !(g->period = index_period(k, s0)))
			return beyond(
			    k, s0->op,
			    "the barrier index of this arrival is not a one-to-one "
			    "periodic function of the loop iteration with a period the checker "
			    "tries (1, and up to 256: the barrier count, the 'mod'/'floordiv' "
			    "constants the index uses and their divisors)");
	}
	return !k->broken;
}

static Z3_ast residue_of(Ck *k, CkSite *s, Z3_ast r, Z3_ast i, int64_t p);
static Z3_ast trip_count(Ck *k, CkEnv *parent, IrOp *loop);
static Z3_ast waited_before(Ck *k, CkRole *role, IrValue *bar, CkSite *w, Z3_ast r, Z3_ast idx);

/* The phases of bar[idx] a loop wait `o` (replica r) guarantees once its loop has ended: the
 * guarantee of its last instance on that barrier, 0 when none names it. */
static Z3_ast
loop_wait_final_at(Ck *k, CkSite *o, Z3_ast r, Z3_ast idx)
{
	CkWaitForm *f = o->wf;
	int64_t p = f->period, c;
	Z3_ast rho = residue_of(k, o, r, idx, p);
	CkEnv *renv = pass_ck_role_env(k, o->role, r);
	Z3_ast trip = pass_ck_is_flat(o) ? flat_trip(k, o->role, renv) : trip_count(k, renv, o->loop);
	if (!trip)
		return pass_ck_num(S, 0);
	Z3_ast has =
	    pass_ck_and2(S, pass_ck_lt(S, rho, pass_ck_num(S, p)), pass_ck_lt(S, rho, trip));
	/* The last iteration on bar[idx]: rho + p * j, j = (trip - 1 - rho) floordiv p. */
	Z3_ast j =
	    pass_ck_floordiv(S, pass_ck_sub(S, pass_ck_sub(S, trip, pass_ck_num(S, 1)), rho), p);
	if (pass_ck_is_num(S, rho, &c) && !f->nrep) {
		/* A known residue class: the wait form's guarantee at occurrence j, directly. */
		if (c >= p)
			return pass_ck_num(S, 0);
		Z3_ast g = f->lin[c] ? pass_ck_add(S, j, pass_ck_num(S, f->val[c]))
		                     : pass_ck_num(S, f->val[c]);
		return pass_ck_ite(S, has, g, pass_ck_num(S, 0));
	}
	CkInst last = pass_ck_inst_at(k, o, r, pass_ck_add(S, rho, pass_ck_mulc(S, j, p)));
	return pass_ck_ite(S, has, pass_ck_wait_g(k, &last), pass_ck_num(S, 0));
}

Z3_ast
pass_ck_site_trip(Ck *k, CkSite *s, Z3_ast r)
{
	if (!s->loop)
		return NULL;
	CkEnv *renv = pass_ck_role_env(k, s->role, r);
	return pass_ck_is_flat(s) ? flat_trip(k, s->role, renv) : trip_count(k, renv, s->loop);
}

/* As loop_wait_final_at; an index not known is split into the barriers of the array (each a
 * known residue class when the loop's index depends on the iteration only), kept per barrier. */
static Z3_ast
loop_wait_final(Ck *k, CkSite *o, Z3_ast r, Z3_ast idx)
{
	for (int i = 0; i < k->lomemo.len; i++) {
		CkLoMemo *e = &IR_VEC_AT(k->lomemo, CkLoMemo, i);
		if (e->role == (const void *)o->loop && e->bar == o && e->r == r && e->idx == idx)
			return e->lo;
	}
	int64_t n = bar_size(o), x;
	Z3_ast lo;
	if (pass_ck_is_num(S, idx, &x) || n > 64) {
		lo = loop_wait_final_at(k, o, r, idx);
	} else {
		lo = pass_ck_num(S, 0);
		for (int64_t b = n - 1; b >= 0; b--) {
			Z3_ast bi = pass_ck_num(S, b);
			lo = pass_ck_ite(S, pass_ck_eq(S, idx, bi), loop_wait_final(k, o, r, bi),
			                 lo);
		}
	}
	CkLoMemo e = {o->loop, o, NULL, r, idx, lo};
	ir_vec_push(k->c->al, &k->lomemo, &e, sizeof e);
	return lo;
}

/* The phases of bar[idx] that role replica r's waits on `bar` guarantee before site `w` (NULL:
 * at the role's end). */
Z3_ast
pass_ck_waited_before(Ck *k, CkRole *role, IrValue *bar, CkSite *w, Z3_ast r, Z3_ast idx)
{
	for (int i = 0; i < k->lomemo.len; i++) {
		CkLoMemo *e = &IR_VEC_AT(k->lomemo, CkLoMemo, i);
		if (e->role == role && e->bar == bar && e->w == w && e->r == r && e->idx == idx)
			return e->lo;
	}
	Z3_ast lo = waited_before(k, role, bar, w, r, idx);
	CkLoMemo e = {role, bar, w, r, idx, lo};
	ir_vec_push(k->c->al, &k->lomemo, &e, sizeof e);
	return lo;
}

/* Do top-level waits o and w (one role) name different barriers in every replica? */
static bool
distinct_waits(Ck *k, CkSite *o, CkSite *w)
{
	for (int i = 0; i < k->lomemo.len; i++) {
		CkLoMemo *e = &IR_VEC_AT(k->lomemo, CkLoMemo, i);
		if (!e->role && e->bar == o && e->w == w)
			return e->lo != NULL;
	}
	CkInst wi = pass_ck_inst(k, w, "t");
	CkInst oi = pass_ck_inst_at(k, o, wi.r, NULL);
	bool d = valid(
	    k, pass_ck_not(S, pass_ck_eq(S, pass_ck_bar_index(k, &oi), pass_ck_bar_index(k, &wi))));
	CkLoMemo e = {NULL, o, w, NULL, NULL, d ? pass_ck_num(S, 1) : NULL};
	ir_vec_push(k->c->al, &k->lomemo, &e, sizeof e);
	return d;
}

static Z3_ast
waited_before(Ck *k, CkRole *role, IrValue *bar, CkSite *w, Z3_ast r, Z3_ast idx)
{
	Z3_ast lo = pass_ck_num(S, 0);
	bool drain = false;
	for (int i = 0; i < k->sites.len; i++) { /* sites are in program order */
		CkSite *o = IR_VEC_AT(k->sites, CkSite *, i);
		if (o == w)
			break;
		if (o->kind != CK_WAIT || o->role != role || o->bar != bar)
			continue;
		if (o->loop) {
			/* A drain: waits after the loop continue from its last wait. */
			lo = loop_wait_final(k, o, r, idx);
			drain = true;
			continue;
		}
		/* A drain's waits name distinct barriers, as a rule: then one does not build on
		 * another (a smaller term, one query per pair to know). */
		if (drain && w && distinct_waits(k, o, w))
			continue;
		CkInst oi = pass_ck_inst_at(k, o, r, NULL);
		Z3_ast g;
		if (drain) {
			/* Where o names bar[idx], its guarantee is that of bar[idx] before it:
			 * built at idx, the terms of one query share one index. */
			Z3_ast lo_o = pass_ck_waited_before(k, role, bar, o, r, idx);
			Z3_ast adv = pass_ck_eq(S, pass_ck_mod(S, lo_o, 2), pass_ck_parity(k, &oi));
			g = pass_ck_add(S, lo_o, pass_ck_b2i(S, adv));
		} else {
			g = pass_ck_wait_g(k, &oi);
		}
		lo = pass_ck_ite(S, pass_ck_eq(S, pass_ck_bar_index(k, &oi), idx), g, lo);
	}
	return lo;
}

/* Top-level waits: the guarantee of one, from the earlier ones of its role on its barrier. */
static Z3_ast
top_wait_lo(Ck *k, CkSite *w, Z3_ast r, Z3_ast idx)
{
	return pass_ck_waited_before(k, w->role, w->bar, w, r, idx);
}

/* The phases a loop wait with form f guarantees at iteration t. */
static Z3_ast
wait_g_form(Ck *k, const CkWaitForm *f, Z3_ast t)
{
	Z3_ast occ = pass_ck_floordiv(S, t, f->period);
	if (f->uniform)
		return pass_ck_add(S, occ, pass_ck_num(S, f->val[0]));
	Z3_ast cls = pass_ck_mod(S, t, f->period), g = pass_ck_num(S, 0);
	for (int c = f->nclass - 1; c >= 0; c--) {
		Z3_ast gc = f->lin[c] ? pass_ck_add(S, occ, pass_ck_num(S, f->val[c]))
		                      : pass_ck_num(S, f->val[c]);
		g = pass_ck_ite(S, pass_ck_eq(S, cls, pass_ck_num(S, c)), gc, g);
	}
	return g;
}

/* Whether a loop wait with form f at iteration t waits for a phase (is not vacuous). */
static Z3_ast
wait_advances_form(Ck *k, const CkWaitForm *f, Z3_ast t)
{
	Z3_ast occ = pass_ck_floordiv(S, t, f->period);
	Z3_ast cls = pass_ck_mod(S, t, f->period), a = Z3_mk_false(S->z);
	for (int c = f->nclass - 1; c >= 0; c--) {
		Z3_ast ac;
		if (f->lin[c])
			ac = f->val[c] ? Z3_mk_true(S->z) : pass_ck_le(S, pass_ck_num(S, 1), occ);
		else
			ac = f->val[c] ? pass_ck_eq(S, occ, pass_ck_num(S, 0)) : Z3_mk_false(S->z);
		if (f->uniform)
			return ac;
		a = pass_ck_ite(S, pass_ck_eq(S, cls, pass_ck_num(S, c)), ac, a);
	}
	return a;
}

/* fn of the form of replica r (a choice over the replicas when r is not known). */
static Z3_ast
per_replica(Ck *k, const CkWaitForm *f, Z3_ast r,
            Z3_ast (*fn)(Ck *, const CkWaitForm *, Z3_ast), Z3_ast t)
{
	int64_t q;
	if (!f->nrep)
		return fn(k, f, t);
	if (pass_ck_is_num(S, r, &q) && q >= 0 && q < f->nrep)
		return fn(k, f->rep[q], t);
	Z3_ast res = fn(k, f->rep[f->nrep - 1], t);
	for (int i = f->nrep - 2; i >= 0; i--)
		res = pass_ck_ite(S, pass_ck_eq(S, r, pass_ck_num(S, i)), fn(k, f->rep[i], t), res);
	return res;
}

Z3_ast
pass_ck_wait_g(Ck *k, const CkInst *in)
{
	CkSite *w = in->site;
	if (!w->loop) {
		Z3_ast lo = top_wait_lo(k, w, in->r, pass_ck_bar_index(k, in));
		Z3_ast adv = pass_ck_eq(S, pass_ck_mod(S, lo, 2), pass_ck_parity(k, in));
		return pass_ck_add(S, lo, pass_ck_b2i(S, adv));
	}
	return per_replica(k, w->wf, in->r, wait_g_form, in->t);
}

Z3_ast
pass_ck_wait_advances(Ck *k, const CkInst *in)
{
	CkSite *w = in->site;
	if (!w->loop) {
		Z3_ast lo = top_wait_lo(k, w, in->r, pass_ck_bar_index(k, in));
		return pass_ck_eq(S, pass_ck_mod(S, lo, 2), pass_ck_parity(k, in));
	}
	return per_replica(k, w->wf, in->r, wait_advances_form, in->t);
}

Z3_ast
pass_ck_phase(Ck *k, const CkInst *in)
{
	CkGroup *g = in->site->group;
	if (!g || !g->loop)
		return pass_ck_num(S, 0);
	if (in->site->tail_in) /* on the last iteration, of its own use */
		return pass_ck_floordiv(S, in->t, g->period);
	if (in->site->tail) {
		/* The last use: the last iteration of the loop (-1 when it runs none). */
		CkSite *s0 = g->site[0];
		Z3_ast tl = pass_ck_fresh(S, "tl");
		Z3_ast nx = exists_at(k, s0, in->r, pass_ck_add(S, tl, pass_ck_num(S, 1)));
		Z3_ast ex = exists_at(k, s0, in->r, tl);
		pass_ck_side(S, tl,
		             pass_ck_or2(S, pass_ck_and2(S, ex, pass_ck_not(S, nx)),
		                         pass_ck_and2(S, pass_ck_not(S, exists_at(k, s0, in->r,
		                                                                  pass_ck_num(S, 0))),
		                                      pass_ck_eq(S, tl, pass_ck_num(S, -1)))));
		return pass_ck_floordiv(S, tl, g->period);
	}
	return pass_ck_floordiv(S, pass_ck_add(S, in->t, pass_ck_num(S, -in->site->shift)),
	                        g->period);
}

/* The first use c in [0, p) at which the site's barrier index (replica r) is i; p if none. */
static Z3_ast
residue_of(Ck *k, CkSite *s, Z3_ast r, Z3_ast i, int64_t p)
{
	Z3_ast res = pass_ck_num(S, p);
	bool identity = true;
	for (int64_t c = p - 1; c >= 0; c--) {
		CkInst in = pass_ck_inst_at(k, s, r, pass_ck_num(S, c + s->shift));
		Z3_ast x = pass_ck_bar_index(k, &in);
		int64_t v;
		identity &= pass_ck_is_num(S, x, &v) && v == c;
		res = pass_ck_ite(S, pass_ck_eq(S, x, i), pass_ck_num(S, c), res);
	}
	/* Iteration c names barrier c (as with k mod p): the residue is i itself. */
	if (identity)
		return pass_ck_ite(S,
		                   pass_ck_and2(S, pass_ck_le(S, pass_ck_num(S, 0), i),
		                                pass_ck_lt(S, i, pass_ck_num(S, p))),
		                   i, pass_ck_num(S, p));
	return res;
}

static Z3_ast
exists_at(Ck *k, CkSite *s, Z3_ast r, Z3_ast t)
{
	CkInst in = pass_ck_inst_at(k, s, r, t);
	return pass_ck_inst_exists(k, &in);
}

Z3_ast
pass_ck_group_iter(Ck *k, CkGroup *g, Z3_ast r, Z3_ast i, Z3_ast n, Z3_ast *ok)
{
	CkSite *s0 = g->site[0];
	if (!g->loop) {
		CkInst in = pass_ck_inst_at(k, s0, r, NULL);
		*ok = pass_ck_and2(S, pass_ck_eq(S, n, pass_ck_num(S, 0)),
		                   pass_ck_eq(S, pass_ck_bar_index(k, &in), i));
		return NULL;
	}
	Z3_ast rho = residue_of(k, s0, r, i, g->period);
	Z3_ast t = pass_ck_add(S, pass_ck_mulc(S, n, g->period), rho);
	/* Use t exists when iteration t of the loop does. */
	Z3_ast conds[3] = {pass_ck_lt(S, rho, pass_ck_num(S, g->period)),
	                   pass_ck_le(S, pass_ck_num(S, 0), n),
	                   exists_at(k, s0, r, t)};
	*ok = pass_ck_and(S, 3, conds);
	return t;
}

CkInst
pass_ck_group_site(Ck *k, CkSite *s, Z3_ast r, Z3_ast u, Z3_ast *ok)
{
	CkGroup *g = s->group;
	if (!g->loop) {
		CkInst in = pass_ck_inst_at(k, s, r, NULL);
		*ok = Z3_mk_true(S->z);
		return in;
	}
	if (s->tail) {
		/* The loop's last use: iteration u exists, u + 1 does not (an in-loop tail runs
		 * on that iteration). */
		CkSite *s0 = g->site[0];
		Z3_ast u0 = u;
		CkInst in = pass_ck_inst_at(k, s, r, s->tail_in ? u : NULL);
		bool known = true;
		Z3_ast gd = pass_ck_guard(k, &in, &known);
		Z3_ast c[3] = {exists_at(k, s0, r, u0),
		               pass_ck_not(S, exists_at(k, s0, r, pass_ck_add(S, u0, pass_ck_num(S, 1)))),
		               gd};
		*ok = pass_ck_and(S, 3, c);
		return in;
	}
	if (!s->shift) { /* use u is iteration u: pass_ck_group_iter's *ok says it exists */
		*ok = Z3_mk_true(S->z);
		return pass_ck_inst_at(k, s, r, u);
	}
	CkInst in = pass_ck_inst_at(k, s, r, pass_ck_add(S, u, pass_ck_num(S, s->shift)));
	*ok = pass_ck_inst_exists(k, &in);
	return in;
}

static Z3_ast wait_iter_form(Ck *k, CkSite *w, const CkWaitForm *f, Z3_ast r, Z3_ast i,
                             Z3_ast m, Z3_ast *ok);

Z3_ast
pass_ck_wait_iter(Ck *k, CkSite *w, Z3_ast r, Z3_ast i, Z3_ast m, Z3_ast *ok)
{
	if (!w->loop) {
		CkInst in = pass_ck_inst_at(k, w, r, NULL);
		*ok = pass_ck_and2(S, pass_ck_eq(S, pass_ck_bar_index(k, &in), i),
		                   pass_ck_le(S, m, pass_ck_wait_g(k, &in)));
		return NULL;
	}
	CkWaitForm *f = w->wf;
	if (f->nrep) {
		int64_t q;
		if (pass_ck_is_num(S, r, &q) && q >= 0 && q < f->nrep)
			return wait_iter_form(k, w, f->rep[q], r, i, m, ok);
		Z3_ast t = NULL;
		for (int e = f->nrep - 1; e >= 0; e--) {
			Z3_ast oke, te = wait_iter_form(k, w, f->rep[e], r, i, m, &oke);
			Z3_ast is = pass_ck_eq(S, r, pass_ck_num(S, e));
			t = t ? pass_ck_ite(S, is, te, t) : te;
			*ok = e == f->nrep - 1 ? oke : pass_ck_ite(S, is, oke, *ok);
		}
		return t;
	}
	return wait_iter_form(k, w, f, r, i, m, ok);
}

/* pass_ck_wait_iter with the form f. */
static Z3_ast
wait_iter_form(Ck *k, CkSite *w, const CkWaitForm *f, Z3_ast r, Z3_ast i, Z3_ast m, Z3_ast *ok)
{
	Z3_ast rho = residue_of(k, w, r, i, f->period), j;
	if (f->uniform) {
		j = pass_ck_sub(S, m, pass_ck_num(S, f->val[0]));
	} else {
		j = pass_ck_num(S, -1);
		for (int c = f->nclass - 1; c >= 0; c--) {
			Z3_ast jc =
			    f->lin[c] ? pass_ck_sub(S, m, pass_ck_num(S, f->val[c]))
			              : pass_ck_ite(S, pass_ck_le(S, m, pass_ck_num(S, f->val[c])),
			                            pass_ck_num(S, 0), pass_ck_num(S, -1));
			j = pass_ck_ite(S, pass_ck_eq(S, rho, pass_ck_num(S, c)), jc, j);
		}
	}
	/* lin: the first occurrence at or after j = m - delta; never before occurrence 0. */
	j = pass_ck_ite(S, pass_ck_lt(S, j, pass_ck_num(S, 0)), f->uniform ? pass_ck_num(S, 0) : j,
	                j);
	Z3_ast t = pass_ck_add(S, pass_ck_mulc(S, j, f->period), rho);
	Z3_ast conds[3] = {pass_ck_lt(S, rho, pass_ck_num(S, f->period)),
	                   pass_ck_le(S, pass_ck_num(S, 0), j), exists_at(k, w, r, t)};
	*ok = pass_ck_and(S, 3, conds);
	return t;
}
