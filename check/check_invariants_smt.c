/* check_invariants_smt.c — the invariant checker's link to Z3 (C API): integer terms with exact
 * floordiv and mod by constants, side conditions that travel with the variables they constrain,
 * timed queries with a per-query timeout, and counterexample minimization. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_internal.h"

static Z3_ast with_sides(CkSmt *s, Z3_ast f);

static void
on_z3_error(Z3_context z, Z3_error_code e)
{
	/* Recorded by Z3 (Z3_get_error_code); the calls that can fail check it. */
	(void)z;
	(void)e;
}

/* The thread's kept context and how many times it was handed out; a thread that ends deletes
 * it (the key's destructor). */
typedef struct Kept {
	Z3_context z;
	int uses;
} Kept;

enum { CONTEXT_USES = 32 };

static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void
kept_free(void *p)
{
	Kept *k = p;
	if (k->z)
		Z3_del_context(k->z);
	free(k);
}

static void
kept_init(void)
{
	pthread_key_create(&kept_key, kept_free);
}

static Kept *
kept(void)
{
	pthread_once(&kept_once, kept_init);
	Kept *k = pthread_getspecific(kept_key);
	if (!k) {
		k = calloc(1, sizeof *k);
		if (k)
			pthread_setspecific(kept_key, k);
	}
	return k;
}

void *
pass_ck_z3_acquire(void)
{
	Kept *k = kept();
	if (k && k->z) {
		Z3_context z = k->z;
		k->z = NULL;
		return z;
	}
	Z3_config cfg = Z3_mk_config();
	Z3_set_param_value(cfg, "model", "true");
	Z3_context z = Z3_mk_context(cfg);
	Z3_del_config(cfg);
	Z3_set_error_handler(z, on_z3_error);
	if (k)
		k->uses = 0;
	return z;
}

void
pass_ck_z3_release(void *p)
{
	Z3_context z = p;
	Kept *k = kept();
	if (k && !k->z && ++k->uses < CONTEXT_USES) {
		k->z = z;
		return;
	}
	if (k && !k->z)
		k->uses = 0;
	Z3_del_context(z);
}

void
pass_ck_smt_init(CkSmt *s, const IrAllocator *al, unsigned timeout_ms, unsigned rlimit,
                 PassCkStats *st)
{
	memset(s, 0, sizeof *s);
	s->al = al;
	s->z = pass_ck_z3_acquire();
	s->is = Z3_mk_int_sort(s->z);
	s->bs = Z3_mk_bool_sort(s->z);
	ir_map_init(&s->side, al);
	ir_map_init(&s->divs, al);
	ir_arena_init(&s->arena, al);
	s->timeout_ms = timeout_ms ? timeout_ms : 2000;
	s->rlimit = rlimit;
	s->st = st;
}

void
pass_ck_smt_free(CkSmt *s)
{
	ir_map_free(&s->side);
	ir_vec_free(s->al, &s->exact, sizeof(Z3_ast));
	ir_map_free(&s->divs);
	ir_arena_free(&s->arena);
	if (s->solver)
		Z3_solver_dec_ref(s->z, s->solver);
	pass_ck_z3_release(s->z);
}

bool
pass_ck_is_num(CkSmt *s, Z3_ast a, int64_t *v)
{
	return Z3_is_numeral_ast(s->z, a) && Z3_get_numeral_int64(s->z, a, v);
}

bool
pass_ck_is_true(CkSmt *s, Z3_ast a)
{
	return Z3_is_app(s->z, a) &&
	       Z3_get_decl_kind(s->z, Z3_get_app_decl(s->z, Z3_to_app(s->z, a))) == Z3_OP_TRUE;
}

bool
pass_ck_is_false(CkSmt *s, Z3_ast a)
{
	return Z3_is_app(s->z, a) &&
	       Z3_get_decl_kind(s->z, Z3_get_app_decl(s->z, Z3_to_app(s->z, a))) == Z3_OP_FALSE;
}

Z3_ast
pass_ck_num(CkSmt *s, int64_t v)
{
	return Z3_mk_int64(s->z, v, s->is);
}

Z3_ast
pass_ck_fresh(CkSmt *s, const char *prefix)
{
	return Z3_mk_fresh_const(s->z, prefix, s->is);
}

void
pass_ck_side(CkSmt *s, Z3_ast var, Z3_ast cond)
{
	uint64_t h = ir_hash_ptr(var);
	Z3_ast old = ir_map_get(&s->side, h, var, NULL);
	if (old)
		cond = pass_ck_and2(s, old, cond);
	ir_map_put(&s->side, h, var, (void *)cond, NULL);
}

void
pass_ck_exact(CkSmt *s, Z3_ast var, Z3_ast cond)
{
	ir_vec_push(s->al, &s->exact, &var, sizeof var);
	ir_vec_push(s->al, &s->exact, &cond, sizeof cond);
}

Z3_ast
pass_ck_add(CkSmt *s, Z3_ast a, Z3_ast b)
{
	int64_t x, y;
	bool na = pass_ck_is_num(s, a, &x), nb = pass_ck_is_num(s, b, &y);
	int64_t r;
	if (na && nb && !__builtin_add_overflow(x, y, &r))
		return pass_ck_num(s, r);
	s->overflow |= na && nb;
	if (na && x == 0)
		return b;
	if (nb && y == 0)
		return a;
	Z3_ast args[2] = {a, b};
	return Z3_mk_add(s->z, 2, args);
}

Z3_ast
pass_ck_sub(CkSmt *s, Z3_ast a, Z3_ast b)
{
	int64_t x, y;
	bool na = pass_ck_is_num(s, a, &x), nb = pass_ck_is_num(s, b, &y);
	int64_t r;
	if (na && nb && !__builtin_sub_overflow(x, y, &r))
		return pass_ck_num(s, r);
	s->overflow |= na && nb;
	if (nb && y == 0)
		return a;
	if (a == b)
		return pass_ck_num(s, 0);
	Z3_ast args[2] = {a, b};
	return Z3_mk_sub(s->z, 2, args);
}

Z3_ast
pass_ck_mulc(CkSmt *s, Z3_ast a, int64_t c)
{
	int64_t x, r;
	if (pass_ck_is_num(s, a, &x)) {
		if (!__builtin_mul_overflow(x, c, &r))
			return pass_ck_num(s, r);
		s->overflow = true;
	}
	if (c == 0)
		return pass_ck_num(s, 0);
	if (c == 1)
		return a;
	Z3_ast args[2] = {pass_ck_num(s, c), a};
	return Z3_mk_mul(s->z, 2, args);
}

Z3_ast
pass_ck_mul(CkSmt *s, Z3_ast a, Z3_ast b)
{
	int64_t c;
	if (pass_ck_is_num(s, a, &c))
		return pass_ck_mulc(s, b, c);
	if (pass_ck_is_num(s, b, &c))
		return pass_ck_mulc(s, a, c);
	Z3_ast args[2] = {a, b};
	return Z3_mk_mul(s->z, 2, args);
}

Z3_ast
pass_ck_uf(CkSmt *s, const char *name, int n, const Z3_ast *args)
{
	Z3_sort dom[4] = {s->is, s->is, s->is, s->is};
	Z3_symbol sym = Z3_mk_string_symbol(s->z, name);
	Z3_func_decl f = Z3_mk_func_decl(s->z, sym, (unsigned)n, dom, s->is);
	return Z3_mk_app(s->z, f, (unsigned)n, args);
}

typedef struct DivKey {
	Z3_ast a;
	int64_t c;
} DivKey;

static bool
div_eq(const void *x, const void *y)
{
	const DivKey *p = x, *q = y;
	return p->a == q->a && p->c == q->c;
}

/* q = floordiv(a, c) for c > 0, as a fresh variable with c*q <= a < c*q + c. */
Z3_ast
pass_ck_floordiv(CkSmt *s, Z3_ast a, int64_t c)
{
	int64_t x;
	if (pass_ck_is_num(s, a, &x))
		return pass_ck_num(s, ir_floordiv(x, c));
	if (c == 1)
		return a;
	DivKey key = {a, c};
	uint64_t h = ir_hash_mix(ir_hash_ptr(a), (uint64_t)c);
	Z3_ast q = ir_map_get(&s->divs, h, &key, div_eq);
	if (q)
		return q;
	/* floordiv(x + d, c) with a constant d: from floordiv(x, c), so that x + 1, x + 2, ...
	 * share one quotient (the solver need not relate their quotients itself). */
	if (c > 1 && Z3_get_ast_kind(s->z, a) == Z3_APP_AST) {
		Z3_app app = Z3_to_app(s->z, a);
		if (Z3_get_decl_kind(s->z, Z3_get_app_decl(s->z, app)) == Z3_OP_ADD &&
		    Z3_get_app_num_args(s->z, app) == 2) {
			Z3_ast l = Z3_get_app_arg(s->z, app, 0), r = Z3_get_app_arg(s->z, app, 1);
			int64_t d;
			Z3_ast x = NULL;
			if (pass_ck_is_num(s, r, &d))
				x = l;
			else if (pass_ck_is_num(s, l, &d))
				x = r;
			if (x) {
				Z3_ast qx = pass_ck_floordiv(s, x, c);
				Z3_ast rx = pass_ck_sub(s, x, pass_ck_mulc(s, qx, c));
				int64_t dq = ir_floordiv(d, c), dr = ir_mod(d, c);
				Z3_ast carry =
				    pass_ck_ite(s, pass_ck_le(s, pass_ck_num(s, c - dr), rx),
				                pass_ck_num(s, 1), pass_ck_num(s, 0));
				q = pass_ck_add(s, pass_ck_add(s, qx, pass_ck_num(s, dq)),
				                dr ? carry : pass_ck_num(s, 0));
				DivKey *k = ir_arena_alloc(&s->arena, sizeof *k);
				*k = key;
				ir_map_put(&s->divs, h, k, (void *)q, div_eq);
				return q;
			}
		}
	}
	q = pass_ck_fresh(s, "fd");
	Z3_ast cq = pass_ck_mulc(s, q, c);
	pass_ck_side(s, q,
	             pass_ck_and2(s, pass_ck_le(s, cq, a),
	                          pass_ck_lt(s, a, pass_ck_add(s, cq, pass_ck_num(s, c)))));
	DivKey *k = ir_arena_alloc(&s->arena, sizeof *k);
	*k = key;
	ir_map_put(&s->divs, h, k, (void *)q, div_eq);
	return q;
}

Z3_ast
pass_ck_mod(CkSmt *s, Z3_ast a, int64_t c)
{
	int64_t x;
	if (pass_ck_is_num(s, a, &x))
		return pass_ck_num(s, ir_mod(x, c));
	if (c == 1)
		return pass_ck_num(s, 0);
	return pass_ck_sub(s, a, pass_ck_mulc(s, pass_ck_floordiv(s, a, c), c));
}

Z3_ast
pass_ck_ite(CkSmt *s, Z3_ast b, Z3_ast x, Z3_ast y)
{
	if (pass_ck_is_true(s, b) || x == y)
		return x;
	if (pass_ck_is_false(s, b))
		return y;
	return Z3_mk_ite(s->z, b, x, y);
}

Z3_ast
pass_ck_eq(CkSmt *s, Z3_ast a, Z3_ast b)
{
	int64_t x, y;
	if (a == b)
		return Z3_mk_true(s->z);
	if (pass_ck_is_num(s, a, &x) && pass_ck_is_num(s, b, &y))
		return x == y ? Z3_mk_true(s->z) : Z3_mk_false(s->z);
	return Z3_mk_eq(s->z, a, b);
}

Z3_ast
pass_ck_lt(CkSmt *s, Z3_ast a, Z3_ast b)
{
	int64_t x, y;
	if (pass_ck_is_num(s, a, &x) && pass_ck_is_num(s, b, &y))
		return x < y ? Z3_mk_true(s->z) : Z3_mk_false(s->z);
	if (a == b)
		return Z3_mk_false(s->z);
	return Z3_mk_lt(s->z, a, b);
}

Z3_ast
pass_ck_le(CkSmt *s, Z3_ast a, Z3_ast b)
{
	int64_t x, y;
	if (pass_ck_is_num(s, a, &x) && pass_ck_is_num(s, b, &y))
		return x <= y ? Z3_mk_true(s->z) : Z3_mk_false(s->z);
	if (a == b)
		return Z3_mk_true(s->z);
	return Z3_mk_le(s->z, a, b);
}

Z3_ast
pass_ck_not(CkSmt *s, Z3_ast a)
{
	if (pass_ck_is_true(s, a))
		return Z3_mk_false(s->z);
	if (pass_ck_is_false(s, a))
		return Z3_mk_true(s->z);
	return Z3_mk_not(s->z, a);
}

/* Conjunction (is_and) or disjunction with constant folding; n may be 0. */
static Z3_ast
junction(CkSmt *s, bool is_and, int n, Z3_ast *a)
{
	enum { MAX = 64 };
	Z3_ast buf[MAX], *keep = n <= MAX ? buf : ir_xalloc(s->al, sizeof *keep * (size_t)n);
	int m = 0;
	Z3_ast res = NULL;
	for (int i = 0; i < n && !res; i++) {
		bool t = pass_ck_is_true(s, a[i]), f = pass_ck_is_false(s, a[i]);
		if (is_and ? f : t)
			res = a[i];
		else if (!(is_and ? t : f))
			keep[m++] = a[i];
	}
	if (!res) {
		if (m == 0)
			res = is_and ? Z3_mk_true(s->z) : Z3_mk_false(s->z);
		else if (m == 1)
			res = keep[0];
		else
			res = is_and ? Z3_mk_and(s->z, (unsigned)m, keep)
			             : Z3_mk_or(s->z, (unsigned)m, keep);
	}
	if (keep != buf)
		ir_xfree(s->al, keep, sizeof *keep * (size_t)n);
	return res;
}

Z3_ast
pass_ck_and(CkSmt *s, int n, Z3_ast *a)
{
	return junction(s, true, n, a);
}

Z3_ast
pass_ck_or(CkSmt *s, int n, Z3_ast *a)
{
	return junction(s, false, n, a);
}

Z3_ast
pass_ck_and2(CkSmt *s, Z3_ast a, Z3_ast b)
{
	Z3_ast x[2] = {a, b};
	return junction(s, true, 2, x);
}

Z3_ast
pass_ck_or2(CkSmt *s, Z3_ast a, Z3_ast b)
{
	Z3_ast x[2] = {a, b};
	return junction(s, false, 2, x);
}

Z3_ast
pass_ck_b2i(CkSmt *s, Z3_ast b)
{
	return pass_ck_ite(s, b, pass_ck_num(s, 1), pass_ck_num(s, 0));
}

/* ---- walking terms: side conditions and mentions ---- */

typedef struct Walk {
	CkSmt *s;
	IrMap seen;
	IrVec stack; /* Z3_ast */
	IrVec sides; /* Z3_ast: side conditions met */
	Z3_ast find; /* for mentions */
	bool found;
	const CkSubst *sub; /* applied to each side condition met (NULL: none) */
} Walk;

static void
walk_push(Walk *w, Z3_ast a)
{
	uint64_t h = ir_hash_ptr(a);
	if (ir_map_get(&w->seen, h, a, NULL))
		return;
	ir_map_put(&w->seen, h, a, (void *)a, NULL);
	ir_vec_push(w->s->al, &w->stack, &a, sizeof a);
}

/* Visits every subterm of `a`; with `sides`, also the side conditions of the constants met
 * (and theirs, transitively). */
static void
walk_run(Walk *w, Z3_ast a, bool sides)
{
	Z3_context z = w->s->z;
	walk_push(w, a);
	while (w->stack.len) {
		Z3_ast t = IR_VEC_AT(w->stack, Z3_ast, --w->stack.len);
		if (t == w->find)
			w->found = true;
		if (Z3_get_ast_kind(z, t) != Z3_APP_AST)
			continue;
		Z3_app app = Z3_to_app(z, t);
		unsigned n = Z3_get_app_num_args(z, app);
		/* Constants, and applications of uninterpreted functions, carry side conditions. */
		if (sides && (n == 0 || Z3_get_decl_kind(z, Z3_get_app_decl(z, app)) == Z3_OP_UNINTERPRETED)) {
			Z3_ast cond = ir_map_get(&w->s->side, ir_hash_ptr(t), t, NULL);
			if (cond && w->sub)
				cond = pass_ck_subst(w->s, w->sub, cond);
			if (cond) {
				ir_vec_push(w->s->al, &w->sides, &cond, sizeof cond);
				walk_push(w, cond);
			}
		}
		for (unsigned i = 0; i < n; i++)
			walk_push(w, Z3_get_app_arg(z, app, i));
	}
}

static void
walk_init(Walk *w, CkSmt *s)
{
	memset(w, 0, sizeof *w);
	w->s = s;
	ir_map_init(&w->seen, s->al);
}

static void
walk_free(Walk *w)
{
	ir_map_free(&w->seen);
	ir_vec_free(w->s->al, &w->stack, sizeof(Z3_ast));
	ir_vec_free(w->s->al, &w->sides, sizeof(Z3_ast));
}

/* Whether x occurs in a (and, with `sides`, in the side conditions of what a mentions). */
static bool
finds(CkSmt *s, Z3_ast a, Z3_ast x, bool sides)
{
	Walk w;
	walk_init(&w, s);
	w.find = x;
	walk_run(&w, a, sides);
	bool found = w.found;
	walk_free(&w);
	return found;
}

void
pass_ck_each_app(CkSmt *s, Z3_ast f, bool bodies, bool (*fn)(void *ud, Z3_ast t, Z3_app app),
                 void *ud)
{
	Z3_context z = s->z;
	IrMap seen;
	IrVec stack = {0};
	ir_map_init(&seen, s->al);
	ir_vec_push(s->al, &stack, &f, sizeof f);
	while (stack.len) {
		Z3_ast t = IR_VEC_AT(stack, Z3_ast, --stack.len);
		uint64_t h = ir_hash_ptr(t);
		if (ir_map_get(&seen, h, t, NULL))
			continue;
		ir_map_put(&seen, h, t, (void *)t, NULL);
		Z3_ast_kind kind = Z3_get_ast_kind(z, t);
		if (kind == Z3_QUANTIFIER_AST && bodies) {
			Z3_ast b = Z3_get_quantifier_body(z, t);
			ir_vec_push(s->al, &stack, &b, sizeof b);
		}
		if (kind != Z3_APP_AST)
			continue;
		Z3_app app = Z3_to_app(z, t);
		if (!fn(ud, t, app))
			break;
		unsigned n = Z3_get_app_num_args(z, app);
		for (unsigned i = 0; i < n; i++) {
			Z3_ast a = Z3_get_app_arg(z, app, i);
			ir_vec_push(s->al, &stack, &a, sizeof a);
		}
	}
	ir_vec_free(s->al, &stack, sizeof(Z3_ast));
	ir_map_free(&seen);
}

/* A walk that collects into `out`. */
typedef struct OutWalk {
	CkSmt *s;
	IrVec *out;
} OutWalk;

static bool
const_app(void *ud, Z3_ast t, Z3_app app)
{
	OutWalk *cw = ud;
	Z3_context z = cw->s->z;
	if (Z3_get_app_num_args(z, app) == 0 &&
	    Z3_get_decl_kind(z, Z3_get_app_decl(z, app)) == Z3_OP_UNINTERPRETED)
		ir_vec_push(cw->s->al, cw->out, &t, sizeof t);
	return true;
}

void
pass_ck_consts(CkSmt *s, Z3_ast f, IrVec *out)
{
	OutWalk cw = {s, out};
	pass_ck_each_app(s, f, false, const_app, &cw);
}

bool
pass_ck_mentions(CkSmt *s, Z3_ast a, Z3_ast x)
{
	return finds(s, a, x, false);
}

bool
pass_ck_depends(CkSmt *s, Z3_ast a, Z3_ast x)
{
	return finds(s, a, x, true);
}

Z3_ast
pass_ck_subst(CkSmt *s, const CkSubst *sub, Z3_ast f)
{
	if (!sub || !sub->n)
		return f;
	return Z3_simplify(s->z, Z3_substitute(s->z, f, sub->n, sub->from, sub->to));
}

bool
pass_ck_is_quotient(CkSmt *s, Z3_ast x)
{
	for (size_t i = 0; i < s->divs.cap; i++)
		if (s->divs.slot[i].hash && s->divs.slot[i].val == (void *)x)
			return true;
	return false;
}

int
pass_ck_divisors(CkSmt *s, Z3_ast a, int64_t *out, int max)
{
	int n = 0;
	for (size_t i = 0; i < s->divs.cap && n < max; i++) {
		const IrMapSlot *sl = &s->divs.slot[i];
		if (!sl->hash || ((const DivKey *)sl->key)->a != a)
			continue;
		int64_t c = ((const DivKey *)sl->key)->c;
		bool dup = false;
		for (int j = 0; j < n && !dup; j++)
			dup = out[j] == c;
		if (!dup)
			out[n++] = c;
	}
	return n;
}

void
pass_ck_subst_close(CkSmt *s, CkSubst *sub)
{
	for (bool more = true; more && sub->n < CK_SUBST_MAX;) {
		more = false;
		for (size_t i = 0; i < s->divs.cap && sub->n < CK_SUBST_MAX; i++) {
			const IrMapSlot *sl = &s->divs.slot[i];
			if (!sl->hash)
				continue;
			const DivKey *key = sl->key;
			Z3_ast q = sl->val;
			if (Z3_get_ast_kind(s->z, q) != Z3_APP_AST ||
			    Z3_get_app_num_args(s->z, Z3_to_app(s->z, q)) != 0)
				continue; /* a shifted dividend's: an expression of another quotient */
			bool done = false;
			for (unsigned j = 0; j < sub->n && !done; j++)
				done = sub->from[j] == q;
			int64_t x;
			if (done || !pass_ck_is_num(s, pass_ck_subst(s, sub, key->a), &x))
				continue;
			sub->from[sub->n] = q;
			sub->to[sub->n++] = pass_ck_num(s, ir_floordiv(x, key->c));
			more = true;
		}
	}
}

/* `f` conjoined with the side conditions of every variable it mentions (each with `sub`
 * applied, when non-NULL, before its own variables are looked at). */
static Z3_ast
sides_sub(CkSmt *s, Z3_ast f, const CkSubst *sub)
{
	Walk w;
	walk_init(&w, s);
	w.sub = sub;
	walk_run(&w, f, true);
	ir_vec_push(s->al, &w.sides, &f, sizeof f);
	Z3_ast all = pass_ck_and(s, w.sides.len, (Z3_ast *)w.sides.data);
	walk_free(&w);
	return all;
}

Z3_ast
pass_ck_closure_subst(CkSmt *s, Z3_ast f, const CkSubst *sub)
{
	return sides_sub(s, pass_ck_subst(s, sub, f), sub);
}

/* `f` conjoined with the side conditions of every variable it mentions. */
static Z3_ast
with_sides(CkSmt *s, Z3_ast f)
{
	return sides_sub(s, f, NULL);
}

Z3_ast
pass_ck_closure(CkSmt *s, Z3_ast f)
{
	return with_sides(s, f);
}

static void
account(CkSmt *s, double t0, CkRes r)
{
	if (!s->st)
		return;
	double dt = ir_now() - t0;
	s->st->queries++;
	s->st->solver_s += dt;
	if (dt > s->st->max_query_s)
		s->st->max_query_s = dt;
	if (r == CK_SAT)
		s->st->sat++;
	else if (r == CK_UNSAT)
		s->st->unsat++;
	else
		s->st->unknown++;
}

/* The solver's parameters with a timeout of `ms`, and the resource limit. */
static Z3_params
params_ms(CkSmt *s, unsigned ms)
{
	Z3_params p = Z3_mk_params(s->z);
	Z3_params_inc_ref(s->z, p);
	Z3_params_set_uint(s->z, p, Z3_mk_string_symbol(s->z, "timeout"), ms);
	if (s->rlimit)
		Z3_params_set_uint(s->z, p, Z3_mk_string_symbol(s->z, "rlimit"), s->rlimit);
	return p;
}

static Z3_params
mk_params(CkSmt *s)
{
	return params_ms(s, s->timeout_ms);
}

static Z3_solver solver(CkSmt *s);
static CkRes timed_check(CkSmt *s, Z3_solver sv);
static Z3_model take_model(CkSmt *s, Z3_solver sv, Z3_model old);

/* The exact definitions of the variables `all` mentions (with their side conditions), or NULL
 * when none: a model of `all` is one of the kernel only if it satisfies them too. */
static Z3_ast
exact_defs(CkSmt *s, Z3_ast all)
{
	IrVec defs = {0};
	for (int i = 0; i + 1 < s->exact.len; i += 2) {
		Z3_ast v = IR_VEC_AT(s->exact, Z3_ast, i);
		if (pass_ck_mentions(s, all, v)) {
			Z3_ast d = with_sides(s, IR_VEC_AT(s->exact, Z3_ast, i + 1));
			ir_vec_push(s->al, &defs, &d, sizeof d);
		}
	}
	Z3_ast r = defs.len ? pass_ck_and(s, defs.len, (Z3_ast *)defs.data) : NULL;
	ir_vec_free(s->al, &defs, sizeof(Z3_ast));
	return r;
}

static bool
decl_app(void *ud, Z3_ast t, Z3_app app)
{
	OutWalk *dw = ud;
	Z3_context z = dw->s->z;
	Z3_func_decl d = Z3_get_app_decl(z, app);
	(void)t;
	if (Z3_get_decl_kind(z, d) != Z3_OP_UNINTERPRETED)
		return true;
	for (int i = 0; i < dw->out->len; i++)
		if (IR_VEC_AT(*dw->out, Z3_func_decl, i) == d)
			return true;
	ir_vec_push(dw->s->al, dw->out, &d, sizeof d);
	return true;
}

/* The uninterpreted declarations (constants and functions) that `f` uses free, quantifier
 * bodies included, once each, into `out` (Z3_func_decl). */
static void
free_decls(CkSmt *s, Z3_ast f, IrVec *out)
{
	OutWalk dw = {s, out};
	pass_ck_each_app(s, f, true, decl_app, &dw);
}

/* f with each uninterpreted declaration from[i] replaced by to[i] (same sorts), quantifier
 * bodies included: a post-order rebuild of the DAG, each node once. */
static Z3_ast
rename_decls(CkSmt *s, Z3_ast f, const Z3_func_decl *from, const Z3_func_decl *to, int n)
{
	Z3_context z = s->z;
	IrMap done; /* node -> its rebuilt form */
	IrVec stack = {0};
	ir_map_init(&done, s->al);
	ir_vec_push(s->al, &stack, &f, sizeof f);
	while (stack.len) {
		Z3_ast t = IR_VEC_AT(stack, Z3_ast, stack.len - 1);
		uint64_t h = ir_hash_ptr(t);
		if (ir_map_get(&done, h, t, NULL)) {
			stack.len--;
			continue;
		}
		Z3_ast_kind kind = Z3_get_ast_kind(z, t);
		unsigned na = kind == Z3_APP_AST ? Z3_get_app_num_args(z, Z3_to_app(z, t))
		              : kind == Z3_QUANTIFIER_AST ? 1
		                                          : 0;
		Z3_ast kids[16], *kid = na <= 16 ? kids : malloc(sizeof *kid * na);
		bool ready = kid != NULL, failed = !kid;
		for (unsigned a = 0; a < na && kid; a++) {
			Z3_ast c = kind == Z3_APP_AST ? Z3_get_app_arg(z, Z3_to_app(z, t), a)
			                              : Z3_get_quantifier_body(z, t);
			kid[a] = ir_map_get(&done, ir_hash_ptr(c), c, NULL);
			if (!kid[a]) {
				ready = false;
				ir_vec_push(s->al, &stack, &c, sizeof c);
			}
		}
		if (ready) {
			stack.len--;
			Z3_ast r = t;
			if (kind == Z3_APP_AST) {
				Z3_func_decl d = Z3_get_app_decl(z, Z3_to_app(z, t));
				int w = -1;
				for (int i = 0; i < n && w < 0; i++)
					if (from[i] == d)
						w = i;
				r = w >= 0 ? Z3_mk_app(z, to[w], na, kid) : na ? Z3_update_term(z, t, na, kid) : t;
			} else if (kind == Z3_QUANTIFIER_AST) {
				r = Z3_update_term(z, t, 1, kid);
			}
			failed = !r; /* Z3 failed (an error, say out of memory) */
			if (r)
				ir_map_put(&done, h, t, (void *)r, NULL);
		}
		if (kid != kids)
			free(kid);
		if (failed) {
			f = NULL;
			break;
		}
	}
	Z3_ast out = f ? ir_map_get(&done, ir_hash_ptr(f), f, NULL) : NULL;
	ir_vec_free(s->al, &stack, sizeof(Z3_ast));
	ir_map_free(&done);
	return out;
}

/* In a child process: Z3's `qe` tactic on `all`, without a limit of its own (the parent kills
 * the child at its deadline); a quantifier-free result, the conjunction of its one subgoal,
 * written to fd as SMT-LIB2 ("(assert F)") and a NUL byte that ends it. Anything else writes
 * no NUL. */
static void
qe_child(CkSmt *s, Z3_ast all, int fd)
{
	Z3_tactic qe = Z3_mk_tactic(s->z, "qe");
	Z3_tactic_inc_ref(s->z, qe);
	Z3_goal g = Z3_mk_goal(s->z, true, false, false);
	Z3_goal_inc_ref(s->z, g);
	Z3_goal_assert(s->z, g, all);
	Z3_apply_result ar = Z3_tactic_apply(s->z, qe, g);
	if (!ar)
		_exit(3);
	Z3_apply_result_inc_ref(s->z, ar);
	if (Z3_apply_result_get_num_subgoals(s->z, ar) != 1)
		_exit(3);
	Z3_goal sg = Z3_apply_result_get_subgoal(s->z, ar, 0);
	unsigned n = Z3_goal_size(s->z, sg);
	IrVec fs = {0};
	for (unsigned i = 0; i < n; i++) {
		Z3_ast x = Z3_goal_formula(s->z, sg, i);
		ir_vec_push(s->al, &fs, &x, sizeof x);
	}
	Z3_probe pq = Z3_mk_probe(s->z, "has-quantifiers");
	if (!pq)
		_exit(3);
	Z3_probe_inc_ref(s->z, pq);
	if (Z3_probe_apply(s->z, pq, sg) != 0.0)
		_exit(3);
	Z3_ast f = n ? pass_ck_and(s, (int)n, (Z3_ast *)fs.data) : Z3_mk_true(s->z);
	Z3_set_ast_print_mode(s->z, Z3_PRINT_SMTLIB2_COMPLIANT);
	const char *txt = Z3_ast_to_string(s->z, f);
	if (!txt || Z3_get_error_code(s->z) != Z3_OK)
		_exit(3);
	size_t len = strlen(txt);
	const char *parts[3] = {"(assert ", txt, ")"};
	size_t lens[3] = {8, len, 2}; /* ")" and its NUL */
	for (int i = 0; i < 3; i++)
		for (size_t off = 0; off < lens[i];) {
			ssize_t w = write(fd, parts[i] + off, lens[i] - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(3);
			off += (size_t)w;
		}
	_exit(0);
}

/* A query known to hold a quantifier (s->quantified: the universal "no signal instance matches"
 * of the chunk checks), or one the SMT core gave up on because of one: its quantifier-free
 * equivalent by linear quantifier elimination (Z3's qe tactic within the per-query limit, which
 * decides such formulas of linear integer arithmetic), or NULL. The same SMT core then answers
 * it, and its models give every free variable a value.
 *
 * The elimination runs in a child process, its result read back as text, and the limit is the
 * child's deadline: past it the child is killed. Z3 4.8.12's `qe` cancelled by a time limit of
 * its own can crash (a null read) at some moments, and a cancelled tactic may stop half-way
 * with a result; a process killed says nothing. The text must mean what the child's formula
 * means: every uninterpreted declaration of the query is renamed `|ave#i|` for the trip (Z3's
 * printer names shared subterms `a!1`, `a!2`, ... in `let`s, which would capture a constant of
 * that name, and a function named `div` would read back as the built-in); a result that still
 * holds a quantifier is not sent (its bound names could collide the same way). The message
 * ends with a NUL byte, so a write end that another thread's child inherited does not matter.
 * Any failure is NULL (the query stays undecided). Z3 4.8.12's `qe` is also wrong on `mod`
 * inside a quantifier (`forall w1 w2. w1 = 0 or not (A <= w1 mod 3 and w2 <= M)` comes out as
 * `not (A <= 3)`; A = 3 satisfies it): the checker writes floordiv and mod as fresh variables
 * with side conditions and never `Z3_mk_mod`, and a query holding one must not come here. */
static Z3_ast
qe_formula(CkSmt *s, Z3_ast all)
{
	if (!s->quantified &&
	    (!s->unknown_reason || !strstr(s->unknown_reason, "quantifiers")))
		return NULL;
	IrVec decls = {0}, tmp = {0}, names = {0};
	free_decls(s, all, &decls);
	for (int i = 0; i < decls.len; i++) {
		Z3_func_decl d = IR_VEC_AT(decls, Z3_func_decl, i);
		unsigned ar = Z3_get_arity(s->z, d);
		Z3_sort dom[8];
		if (ar > 8)
			break;
		for (unsigned a = 0; a < ar; a++)
			dom[a] = Z3_get_domain(s->z, d, a);
		char nm[32];
		snprintf(nm, sizeof nm, "ave#%d", i);
		Z3_symbol sym = Z3_mk_string_symbol(s->z, nm);
		Z3_func_decl t = Z3_mk_func_decl(s->z, sym, ar, dom, Z3_get_range(s->z, d));
		ir_vec_push(s->al, &tmp, &t, sizeof t);
		ir_vec_push(s->al, &names, &sym, sizeof sym);
	}
	Z3_ast f = NULL, sent = NULL;
	int fd[2] = {-1, -1};
	if (tmp.len == decls.len)
		sent = rename_decls(s, all, (Z3_func_decl *)decls.data, (Z3_func_decl *)tmp.data,
		                    decls.len);
	if (!sent || pipe2(fd, O_CLOEXEC) != 0)
		goto out;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		qe_child(s, sent, fd[1]);
	}
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		goto out;
	}
	IrVec txt = {0};
	double deadline = ir_now() + 1e-3 * s->timeout_ms + 0.1; /* and the fork and the text */
	bool done = false;
	while (!done) {
		double left = deadline - ir_now();
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd[0], .events = POLLIN};
		int r = poll(&p, 1, (int)(left * 1e3) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		char buf[4096];
		ssize_t n = read(fd[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && !done; i++) {
			ir_vec_push(s->al, &txt, &buf[i], 1);
			done = buf[i] == 0;
		}
	}
	close(fd[0]);
	kill(pid, SIGKILL); /* it has written all it will, or is past its deadline */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (done) {
		Z3_ast_vector v = Z3_parse_smtlib2_string(
		    s->z, (const char *)txt.data, 0, NULL, NULL, (unsigned)tmp.len,
		    (Z3_symbol *)names.data, (Z3_func_decl *)tmp.data);
		if (v && Z3_get_error_code(s->z) == Z3_OK) {
			Z3_ast_vector_inc_ref(s->z, v);
			if (Z3_ast_vector_size(s->z, v) == 1)
				f = rename_decls(s, Z3_ast_vector_get(s->z, v, 0),
				                 (Z3_func_decl *)tmp.data, (Z3_func_decl *)decls.data,
				                 tmp.len);
			Z3_ast_vector_dec_ref(s->z, v);
		}
	}
	ir_vec_free(s->al, &txt, 1);
out:
	ir_vec_free(s->al, &decls, sizeof(Z3_func_decl));
	ir_vec_free(s->al, &tmp, sizeof(Z3_func_decl));
	ir_vec_free(s->al, &names, sizeof(Z3_symbol));
	return f;
}

/* One query on the shared solver: f, then (when satisfiable) the nonlinear definitions of
 * `all`, the query f stands for (itself, or what quantifier elimination made of it): a model is
 * one of the kernel only if they hold too. *confirmed says whether they were asked. */
static CkRes
solve_confirmed(CkSmt *s, Z3_ast f, Z3_ast all, Z3_model *model, bool *confirmed)
{
	Z3_solver sv = solver(s);
	Z3_solver_push(s->z, sv);
	Z3_solver_assert(s->z, sv, f);
	CkRes res = timed_check(s, sv);
	Z3_ast ex = res == CK_SAT ? exact_defs(s, all) : NULL;
	if (ex) {
		Z3_solver_assert(s->z, sv, ex);
		res = timed_check(s, sv);
	}
	if (res == CK_SAT && model)
		*model = take_model(s, sv, NULL);
	Z3_solver_pop(s->z, sv, 1);
	if (confirmed)
		*confirmed = ex != NULL;
	return res;
}

static CkRes
qe_check(CkSmt *s, Z3_ast all, Z3_model *model)
{
	Z3_ast f = qe_formula(s, all);
	return f ? solve_confirmed(s, f, all, model, NULL) : CK_UNKNOWN;
}

CkRes
pass_ck_check(CkSmt *s, Z3_ast f, Z3_model *model)
{
	if (model)
		*model = NULL;
	if (pass_ck_is_false(s, f) || s->overflow)
		return CK_UNSAT; /* after an overflow: nothing is reported but pass_ck_overflowed */
	Z3_ast all = with_sides(s, f);
	if (s->quantified) {
		/* Known to hold a quantifier: the SMT core would spend its time before giving up. */
		CkRes q = qe_check(s, all, model);
		if (q != CK_UNKNOWN)
			return q;
	}
	bool confirmed;
	CkRes res = solve_confirmed(s, all, all, model, &confirmed);
	if (res == CK_UNKNOWN && !confirmed && !s->quantified)
		res = qe_check(s, all, model);
	return res;
}

CkRes
pass_ck_prove_quantified(CkSmt *s, Z3_ast f, const CkSubst *sub, Z3_model *model)
{
	if (model)
		*model = NULL;
	if (pass_ck_is_false(s, f) || s->overflow)
		return CK_UNSAT;
	/* A solver of its own, never pushed: Z3 then preprocesses the formula and picks its
	 * quantifier engine (the shared solver's pushed core does not get there in time). */
	Z3_solver sv = Z3_mk_solver(s->z);
	Z3_solver_inc_ref(s->z, sv);
	Z3_params p = mk_params(s);
	Z3_solver_set_params(s->z, sv, p);
	Z3_params_dec_ref(s->z, p);
	Z3_solver_assert(s->z, sv, sides_sub(s, f, sub));
	const char *why = s->unknown_reason;
	CkRes r = timed_check(s, sv);
	if (r == CK_SAT && model)
		*model = take_model(s, sv, NULL);
	Z3_solver_dec_ref(s->z, sv);
	s->unknown_reason = why;
	return r;
}

bool
pass_ck_confirm_none(CkSmt *s, Z3_model m, Z3_ast f, const CkSubst *sub, Z3_ast inner)
{
	Z3_ast all = sides_sub(s, f, sub);
	IrVec xs = {0}, vs = {0};
	pass_ck_consts(s, all, &xs); /* the free ones: a quantifier's body is not entered */
	bool ok = m != NULL;
	for (int i = 0; i < xs.len && ok; i++) {
		Z3_ast v = NULL;
		ok = Z3_model_eval(s->z, m, IR_VEC_AT(xs, Z3_ast, i), true, &v) && v &&
		     Z3_is_numeral_ast(s->z, v);
		ir_vec_push(s->al, &vs, &v, sizeof v);
	}
	Z3_ast ex = ok ? exact_defs(s, all) : NULL, v = NULL;
	if (ex)
		ok = Z3_model_eval(s->z, m, ex, true, &v) && v && pass_ck_is_true(s, v);
	/* The conjuncts of `all` outside the quantifier hold in m (a conjunct that holds one
	 * elsewhere than at the top is not confirmed). */
	IrVec conj = {0};
	ir_vec_push(s->al, &conj, &all, sizeof all);
	while (conj.len && ok) {
		Z3_ast c = IR_VEC_AT(conj, Z3_ast, --conj.len);
		if (Z3_get_ast_kind(s->z, c) == Z3_QUANTIFIER_AST)
			continue; /* the one asked below, by its body */
		if (Z3_get_ast_kind(s->z, c) == Z3_APP_AST &&
		    Z3_get_decl_kind(s->z, Z3_get_app_decl(s->z, Z3_to_app(s->z, c))) == Z3_OP_AND) {
			Z3_app app = Z3_to_app(s->z, c);
			for (unsigned i = 0; i < Z3_get_app_num_args(s->z, app); i++) {
				Z3_ast a = Z3_get_app_arg(s->z, app, i);
				ir_vec_push(s->al, &conj, &a, sizeof a);
			}
			continue;
		}
		ok = Z3_model_eval(s->z, m, c, true, &v) && v && pass_ck_is_true(s, v);
	}
	ir_vec_free(s->al, &conj, sizeof(Z3_ast));
	if (ok) {
		Z3_ast g = Z3_substitute(s->z, inner, (unsigned)xs.len, (Z3_ast *)xs.data,
		                         (Z3_ast *)vs.data);
		bool q = s->quantified;
		s->quantified = false;
		ok = pass_ck_check(s, g, NULL) == CK_UNSAT;
		s->quantified = q;
	}
	ir_vec_free(s->al, &xs, sizeof(Z3_ast));
	ir_vec_free(s->al, &vs, sizeof(Z3_ast));
	return ok;
}

static Z3_solver
solver(CkSmt *s)
{
	if (!s->solver) {
		/* One incremental solver (the SMT core, no preprocessing) serves every query: each
		 * query is a push, an assertion, a check and a pop. */
		s->solver = Z3_mk_simple_solver(s->z);
		Z3_solver_inc_ref(s->z, s->solver);
		Z3_params p = mk_params(s);
		Z3_solver_set_params(s->z, s->solver, p);
		Z3_params_dec_ref(s->z, p);
	}
	return s->solver;
}

static CkRes
timed_check(CkSmt *s, Z3_solver sv)
{
	double t0 = ir_now();
	Z3_lbool r = Z3_solver_check(s->z, sv);
	CkRes res = r == Z3_L_TRUE ? CK_SAT : r == Z3_L_FALSE ? CK_UNSAT : CK_UNKNOWN;
	if (res == CK_UNKNOWN)
		s->unknown_reason = Z3_solver_get_reason_unknown(s->z, sv);
	account(s, t0, res);
	return res;
}

static Z3_model
take_model(CkSmt *s, Z3_solver sv, Z3_model old)
{
	if (old)
		Z3_model_dec_ref(s->z, old);
	Z3_model m = Z3_solver_get_model(s->z, sv);
	Z3_model_inc_ref(s->z, m);
	return m;
}

static void
set_timeout(CkSmt *s, Z3_solver sv, unsigned ms)
{
	Z3_params p = params_ms(s, ms ? ms : 1);
	Z3_solver_set_params(s->z, sv, p);
	Z3_params_dec_ref(s->z, p);
}

/* Whether time is left before `end`; if so the solver's next query gets at most that. Under a
 * resource limit (--rlimit, deterministic) the limit alone bounds each step. */
static bool
step_time(CkSmt *s, Z3_solver sv, double end)
{
	if (s->rlimit)
		return true;
	double left = end - ir_now();
	if (left <= 0)
		return false;
	set_timeout(s, sv, (unsigned)(left * 1e3) + 1);
	return true;
}

/* Lexicographic minimization by tightening: for each objective in turn, a binary search on its
 * absolute value with the earlier ones fixed at their minimum. */
CkRes
pass_ck_minimize(CkSmt *s, Z3_ast f, int nobj, Z3_ast *obj, Z3_model *model)
{
	*model = NULL;
	if (s->overflow)
		return CK_UNSAT;
	Z3_solver sv = solver(s);
	Z3_solver_push(s->z, sv);
	Z3_ast all = with_sides(s, f);
	Z3_ast q0 = s->quantified ? qe_formula(s, all) : NULL;
	if (q0)
		all = q0;
	Z3_solver_assert(s->z, sv, all);
	CkRes res = timed_check(s, sv);
	if (res == CK_UNKNOWN && !q0) {
		/* Past a quantifier the SMT core gave up on: minimize over its elimination. */
		Z3_ast q = qe_formula(s, all);
		if (q) {
			Z3_solver_pop(s->z, sv, 1);
			Z3_solver_push(s->z, sv);
			Z3_solver_assert(s->z, sv, all = q);
			res = timed_check(s, sv);
		}
	}
	Z3_ast ex = res == CK_SAT ? exact_defs(s, all) : NULL;
	if (ex) {
		Z3_solver_assert(s->z, sv, ex);
		res = timed_check(s, sv);
	}
	if (res != CK_SAT) {
		Z3_solver_pop(s->z, sv, 1);
		return res;
	}
	Z3_model m = take_model(s, sv, NULL);
	/* Smaller values are for reading: all of it gets one query's time, each step what is left
	 * of it, and the model found so far stands when it runs out. */
	double end = ir_now() + 1e-3 * s->timeout_ms;
	for (int i = 0; i < nobj && step_time(s, sv, end); i++) {
		Z3_ast zero = pass_ck_num(s, 0);
		Z3_ast abs = Z3_mk_ite(s->z, Z3_mk_lt(s->z, obj[i], zero),
		                       Z3_mk_unary_minus(s->z, obj[i]), obj[i]);
		int64_t hi, lo = 0;
		if (!pass_ck_eval(s, m, abs, &hi))
			continue;
		/* Small bounds first: a solver that cannot place the midpoint of a range of 2^40
		 * usually finds a model under 8 at once, and a counterexample reads best small. */
		static const int64_t probe[] = {0, 1, 8, 64, 1024, 1 << 16, 1 << 24};
		for (size_t j = 0; j < sizeof probe / sizeof *probe && probe[j] < hi; j++) {
			if (probe[j] < lo || !step_time(s, sv, end))
				continue;
			Z3_solver_push(s->z, sv);
			Z3_solver_assert(s->z, sv, Z3_mk_le(s->z, abs, pass_ck_num(s, probe[j])));
			CkRes r = timed_check(s, sv);
			if (r == CK_SAT) {
				m = take_model(s, sv, m);
				if (!pass_ck_eval(s, m, abs, &hi))
					hi = probe[j];
			} else if (r == CK_UNSAT) {
				lo = probe[j] + 1;
			}
			Z3_solver_pop(s->z, sv, 1);
			if (r == CK_SAT)
				break;
		}
		for (int steps = 0; lo < hi && steps < 24 && step_time(s, sv, end); steps++) {
			int64_t mid = lo + (hi - lo) / 2;
			Z3_solver_push(s->z, sv);
			Z3_solver_assert(s->z, sv, Z3_mk_le(s->z, abs, pass_ck_num(s, mid)));
			CkRes r = timed_check(s, sv);
			if (r == CK_SAT) {
				m = take_model(s, sv, m);
				if (!pass_ck_eval(s, m, abs, &hi))
					hi = mid;
			} else {
				lo = mid + 1;
			}
			Z3_solver_pop(s->z, sv, 1);
			if (r == CK_UNKNOWN)
				break;
		}
		Z3_solver_assert(s->z, sv, Z3_mk_eq(s->z, abs, pass_ck_num(s, hi)));
	}
	Z3_solver_pop(s->z, sv, 1);
	if (!s->rlimit)
		set_timeout(s, sv, s->timeout_ms); /* step_time shortened it */
	*model = m;
	return CK_SAT;
}

bool
pass_ck_eval(CkSmt *s, Z3_model m, Z3_ast t, int64_t *out)
{
	Z3_ast v = NULL;
	if (!m || !Z3_model_eval(s->z, m, t, true, &v) || !v)
		return false;
	if (Z3_get_sort_kind(s->z, Z3_get_sort(s->z, v)) == Z3_BOOL_SORT) {
		*out = pass_ck_is_true(s, v);
		return pass_ck_is_true(s, v) || pass_ck_is_false(s, v);
	}
	return pass_ck_is_num(s, v, out);
}

void
pass_ck_model_free(CkSmt *s, Z3_model m)
{
	if (m)
		Z3_model_dec_ref(s->z, m);
}
