/* test_expr.c — index expressions: floordiv and mod by constants at the int64 edges (rounding
 * toward -inf, results in [0, c)), wrapping evaluation, and printing: random trees print with
 * minimal parentheses (removing any pair changes the parse) and re-parse to the same tree. */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "unit.h"

#define MIN INT64_MIN
#define MAX INT64_MAX

/* Reference floordiv/mod in 128-bit arithmetic, for positive divisors. */
__extension__ typedef __int128 i128; /* exact reference arithmetic */

static int64_t
ref_floordiv(int64_t a, int64_t b)
{
	i128 q = (i128)a / b;
	if ((i128)q * b != a && a < 0)
		q--;
	return (int64_t)q;
}

static int64_t
ref_mod(int64_t a, int64_t b)
{
	i128 r = (i128)a % b;
	if (r < 0)
		r += b;
	return (int64_t)r;
}

static void
test_edges(IrModule *m)
{
	static const int64_t as[] = {0, 1, -1, 2, -2, 7, -7, 63, -64, MAX, MAX - 1, MIN, MIN + 1,
				     (int64_t)1 << 62, -((int64_t)1 << 62), 1000000007, -1000000007};
	static const int64_t bs[] = {1, 2, 3, 4, 7, 64, 1000, MAX, MAX - 1, (int64_t)1 << 62,
				     ((int64_t)1 << 32) + 1};
	int bad = 0;
	for (size_t i = 0; i < sizeof as / sizeof as[0]; i++)
		for (size_t j = 0; j < sizeof bs / sizeof bs[0]; j++) {
			int64_t a = as[i], b = bs[j];
			int64_t q = ir_floordiv(a, b), r = ir_mod(a, b);
			bad += q != ref_floordiv(a, b) || r != ref_mod(a, b);
			/* The defining identities: a == q * b + r with 0 <= r < b. */
			bad += !(r >= 0 && r < b);
			bad += (int64_t)((uint64_t)q * (uint64_t)b + (uint64_t)r) != a;
			/* The same through constant expression trees. */
			int64_t v;
			IrExpr *e = ir_expr_bin(m, IR_EX_FLOORDIV, ir_expr_const(m, a), ir_expr_const(m, b));
			bad += !ir_expr_eval_const(e, &v) || v != q;
			e = ir_expr_bin(m, IR_EX_MOD, ir_expr_const(m, a), ir_expr_const(m, b));
			bad += !ir_expr_eval_const(e, &v) || v != r;
		}
	CHECK_EQ(bad, 0);
	CHECK_EQ(ir_floordiv(MIN, 1), MIN);
	CHECK_EQ(ir_floordiv(MIN, 2), MIN / 2);
	CHECK_EQ(ir_floordiv(MIN, MAX), -2);
	CHECK_EQ(ir_mod(MIN, MAX), MAX - 1);
	CHECK_EQ(ir_floordiv(-1, MAX), -1);
	CHECK_EQ(ir_mod(-1, MAX), MAX - 1);
	CHECK_EQ(ir_floordiv(MAX, MAX), 1);
	CHECK_EQ(ir_mod(MIN + 1, 2), 1);

	/* Division by a non-positive constant does not evaluate. */
	int64_t v;
	CHECK(!ir_expr_eval_const(ir_expr_bin(m, IR_EX_MOD, ir_expr_const(m, 5), ir_expr_const(m, 0)),
				  &v));
	CHECK(!ir_expr_eval_const(
		ir_expr_bin(m, IR_EX_FLOORDIV, ir_expr_const(m, 5), ir_expr_const(m, -2)), &v));
	/* Arithmetic wraps at 64 bits (no undefined behaviour under UBSan). */
	CHECK(ir_expr_eval_const(ir_expr_bin(m, IR_EX_ADD, ir_expr_const(m, MAX), ir_expr_const(m, 1)),
				 &v) && v == MIN);
	CHECK(ir_expr_eval_const(ir_expr_bin(m, IR_EX_MUL, ir_expr_const(m, MIN), ir_expr_const(m, -1)),
				 &v) && v == MIN);
	CHECK(ir_expr_eval_const(ir_expr_neg(m, ir_expr_const(m, MIN)), &v) && v == MIN);
	CHECK(ir_expr_eval_const(ir_expr_bin(m, IR_EX_SUB, ir_expr_const(m, MIN), ir_expr_const(m, 1)),
				 &v) && v == MAX);
	/* Comparisons yield 0 or 1. */
	CHECK(ir_expr_eval_const(ir_expr_bin(m, IR_EX_LT, ir_expr_const(m, MIN), ir_expr_const(m, MAX)),
				 &v) && v == 1);
	/* With operand values. */
	IrExpr *leaf = ir_expr_const(m, 0);
	leaf->kind = IR_EX_VAL;
	leaf->opnd = 1;
	int64_t vals[2] = {0, -9};
	CHECK(ir_expr_eval(ir_expr_bin(m, IR_EX_MOD, leaf, ir_expr_const(m, 4)), vals, &v) && v == 3);
	CHECK(!ir_expr_eval_const(leaf, &v));
}

/* ---- random trees, printed and re-parsed ---- */

typedef struct Rng {
	uint64_t s;
} Rng;

static uint32_t
rnd(Rng *r, uint32_t n)
{
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(r->s >> 33) % n;
}

static IrExpr *
leaf(IrModule *m, int opnd)
{
	IrExpr *e = ir_expr_const(m, 0);
	e->kind = IR_EX_VAL;
	e->opnd = opnd;
	return e;
}

static IrExpr *gen(IrModule *m, Rng *r, int depth, bool need_var);

/* A constant subtree (the right side of floordiv/mod, a factor of '*'); positive ones stay small
 * enough that their sums cannot wrap. */
static IrExpr *
gen_const(IrModule *m, Rng *r, int depth, bool positive)
{
	static const int64_t small[] = {1, 2, 3, 4, 8, 16, 100, 4096};
	static const int64_t any[] = {0, -1, -3, -64, 7, MAX, MIN + 1, MIN};
	if (depth > 0 && rnd(r, 3) == 0)
		return ir_expr_bin(m, IR_EX_ADD, gen_const(m, r, depth - 1, true),
				   gen_const(m, r, depth - 1, true));
	if (positive || rnd(r, 2))
		return ir_expr_const(m, small[rnd(r, 8)]);
	return ir_expr_const(m, any[rnd(r, 8)]);
}

static IrExpr *
gen(IrModule *m, Rng *r, int depth, bool need_var)
{
	if (depth <= 0 || rnd(r, 5) == 0)
		return need_var || rnd(r, 3) ? leaf(m, (int)rnd(r, 3)) : gen_const(m, r, 0, false);
	switch (rnd(r, 6)) {
	case 0:
		return ir_expr_bin(m, IR_EX_ADD, gen(m, r, depth - 1, need_var), gen(m, r, depth - 1, false));
	case 1:
		return ir_expr_bin(m, IR_EX_SUB, gen(m, r, depth - 1, false), gen(m, r, depth - 1, need_var));
	case 2:
		/* Quasi-affine: one side of '*' is constant. */
		if (rnd(r, 2))
			return ir_expr_bin(m, IR_EX_MUL, gen(m, r, depth - 1, need_var),
					   gen_const(m, r, depth - 1, false));
		return ir_expr_bin(m, IR_EX_MUL, gen_const(m, r, depth - 1, false),
				   gen(m, r, depth - 1, need_var));
	case 3:
		return ir_expr_bin(m, IR_EX_FLOORDIV, gen(m, r, depth - 1, need_var),
				   gen_const(m, r, depth - 1, true));
	case 4:
		return ir_expr_bin(m, IR_EX_MOD, gen(m, r, depth - 1, need_var),
				   gen_const(m, r, depth - 1, true));
	default:
		/* The parser folds '-' of a constant, so a NEG node is always over a variable part. */
		return ir_expr_neg(m, gen(m, r, depth - 1, true));
	}
}

static void
print_name(void *ud, int opnd, FILE *out)
{
	(void)ud;
	fprintf(out, "%%%c", 'a' + opnd);
}

static char *
expr_text(const IrExpr *e)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	ir_expr_print(e, f, print_name, NULL);
	fclose(f);
	return buf;
}

/* Structural equality, leaves compared by the kernel argument they name. */
static bool
same_tree(const IrExpr *want, const IrOp *op, const IrExpr *got)
{
	if (!want || !got)
		return want == got;
	if (want->kind != got->kind)
		return false;
	if (want->kind == IR_EX_CONST)
		return want->c == got->c;
	if (want->kind == IR_EX_VAL) {
		const IrValue *v = ir_op_value(op, got->opnd);
		return v && v->kind == IR_VAL_ARG && v->index == want->opnd;
	}
	return same_tree(want->l, op, got->l) && same_tree(want->r, op, got->r);
}

/* Parses `%x = ave.index TEXT` over %a %b %c and returns the ave.index op (NULL on error). */
static IrOp *
parse_expr(IrCtx *c, IrModule **mp, const char *text, bool pred)
{
	char *src = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&src, &n);
	fprintf(f,
		"ave.kernel @k(%%a: index, %%b: index, %%c: index) {threads = 32} {\n"
		"  %%x = ave.index %s%s\n  ave.return\n}\n",
		text, pred ? " : i1" : "");
	fclose(f);
	*mp = fe_parse(c, "expr.ave", src, n, 1);
	free(src);
	if (!*mp)
		return NULL;
	return (*mp)->body->first->reg[0].block->first;
}

static void
quiet(void *ud, const IrDiag *d)
{
	(void)ud;
	(void)d;
}

static void
test_print_reparse(IrCtx *c, IrModule *m)
{
	Rng r = {12345};
	int roundtrip_bad = 0, minimal_bad = 0, eval_bad = 0, tried = 0, cuts = 0;
	ir_diag_set_handler(c, quiet, NULL);
	for (int iter = 0; iter < 400; iter++) {
		IrExpr *e = gen(m, &r, 1 + (int)rnd(&r, 5), true);
		bool pred = rnd(&r, 4) == 0;
		if (pred) {
			static const IrExprKind cmps[] = {IR_EX_EQ, IR_EX_NE, IR_EX_LT,
							  IR_EX_LE, IR_EX_GT, IR_EX_GE};
			e = ir_expr_bin(m, cmps[rnd(&r, 6)], e, gen(m, &r, 2, false));
		}
		char *text = expr_text(e);
		IrModule *pm;
		IrOp *op = parse_expr(c, &pm, text, pred);
		tried++;
		if (!op || !same_tree(e, op, op->item[0].e)) {
			if (roundtrip_bad++ < 5)
				fprintf(stderr, "does not re-parse to the same tree: %s\n", text);
			ir_module_free(pm);
			free(text);
			continue;
		}
		/* The parsed tree evaluates like the original. */
		int64_t vals[3] = {(int64_t)rnd(&r, 1000) - 500, MIN + (int64_t)rnd(&r, 9), MAX - 3};
		int64_t pv[3];
		for (int i = 0; i < op->nopnd; i++)
			pv[i] = vals[ir_op_value(op, i)->index];
		int64_t v1, v2;
		bool ok1 = ir_expr_eval(e, vals, &v1), ok2 = ir_expr_eval(op->item[0].e, pv, &v2);
		eval_bad += ok1 != ok2 || (ok1 && v1 != v2);
		ir_module_free(pm);

		/* Minimal parentheses: dropping any matching pair changes what is parsed. */
		size_t len = strlen(text);
		for (size_t i = 0; i < len; i++) {
			if (text[i] != '(')
				continue;
			int depth = 0;
			size_t j = i;
			for (; j < len; j++) {
				depth += text[j] == '(' ? 1 : text[j] == ')' ? -1 : 0;
				if (!depth)
					break;
			}
			cuts++;
			char *cut = malloc(len + 1);
			memcpy(cut, text, i);
			memcpy(cut + i, text + i + 1, j - i - 1);
			memcpy(cut + j - 1, text + j + 1, len - j);
			IrModule *cm;
			IrOp *cop = parse_expr(c, &cm, cut, pred);
			if (cop && same_tree(e, cop, cop->item[0].e)) {
				if (minimal_bad++ < 5)
					fprintf(stderr, "redundant parentheses: %s (also %s)\n", text, cut);
			}
			ir_module_free(cm);
			free(cut);
		}
		free(text);
	}
	ir_diag_set_handler(c, NULL, NULL);
	CHECK_EQ(tried, 400);
	CHECK_EQ(roundtrip_bad, 0);
	CHECK_EQ(minimal_bad, 0);
	CHECK_EQ(eval_bad, 0);
	CHECK(cuts > 100); /* the minimality check had parentheses to try */
}

static void
test_print_forms(IrModule *m)
{
	/* A few exact forms. */
	struct {
		IrExpr *e;
		const char *text;
	} cases[] = {
		{ir_expr_bin(m, IR_EX_SUB, leaf(m, 0), ir_expr_bin(m, IR_EX_SUB, leaf(m, 1), ir_expr_const(m, 1))),
		 "%a - (%b - 1)"},
		{ir_expr_bin(m, IR_EX_SUB, ir_expr_bin(m, IR_EX_SUB, leaf(m, 0), leaf(m, 1)), ir_expr_const(m, 1)),
		 "%a - %b - 1"},
		{ir_expr_bin(m, IR_EX_MUL, ir_expr_bin(m, IR_EX_ADD, leaf(m, 0), ir_expr_const(m, 1)),
			     ir_expr_const(m, 4)),
		 "(%a + 1) * 4"},
		{ir_expr_neg(m, ir_expr_bin(m, IR_EX_MUL, leaf(m, 0), ir_expr_const(m, 2))), "-(%a * 2)"},
		{ir_expr_bin(m, IR_EX_MUL, ir_expr_neg(m, leaf(m, 0)), ir_expr_const(m, 2)), "-%a * 2"},
		{ir_expr_bin(m, IR_EX_ADD, leaf(m, 0), ir_expr_const(m, -3)), "%a + -3"},
		{ir_expr_bin(m, IR_EX_MOD, ir_expr_const(m, -3), ir_expr_const(m, 4)), "-3 mod 4"},
		{ir_expr_bin(m, IR_EX_FLOORDIV, leaf(m, 2),
			     ir_expr_bin(m, IR_EX_FLOORDIV, ir_expr_const(m, 8), ir_expr_const(m, 2))),
		 "%c floordiv (8 floordiv 2)"},
		{ir_expr_bin(m, IR_EX_LE, ir_expr_bin(m, IR_EX_ADD, leaf(m, 0), ir_expr_const(m, 1)),
			     ir_expr_bin(m, IR_EX_MUL, leaf(m, 1), ir_expr_const(m, 2))),
		 "%a + 1 <= %b * 2"},
		{ir_expr_const(m, MIN), "-9223372036854775808"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *t = expr_text(cases[i].e);
		if (strcmp(t, cases[i].text))
			fprintf(stderr, "printed '%s', want '%s'\n", t, cases[i].text);
		CHECK(!strcmp(t, cases[i].text));
		free(t);
	}
	/* Depth, constness and comparison queries. */
	IrExpr *e = cases[8].e;
	CHECK(ir_expr_is_cmp(e) && ir_expr_has_cmp(e) && !ir_expr_has_cmp(e->l));
	CHECK_EQ(ir_expr_depth(e), 3);
	CHECK(!ir_expr_is_const(e) && ir_expr_is_const(cases[6].e));
	/* Equality and hashing are structural. */
	IrExpr *a = ir_expr_clone(m, cases[2].e);
	CHECK(a != cases[2].e && ir_expr_equal(a, cases[2].e));
	CHECK_EQ(ir_expr_hash(a), ir_expr_hash(cases[2].e));
	CHECK(!ir_expr_equal(cases[0].e, cases[1].e));
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	IrModule *m = ir_module_new(c, "expr");
	test_edges(m);
	test_print_forms(m);
	test_print_reparse(c, m);
	ir_module_free(m);
	ir_ctx_free(c);
	return unit_summary();
}
