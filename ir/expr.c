/* expr.c — quasi-affine index expressions: construction, evaluation, comparison, printing.
 * Leaves name the owning op's operands by number, so the SMT checker sees them as written. */
#include <string.h>

#include "ir.h"

static IrExpr *
mk(IrModule *m, IrExprKind k)
{
	IrExpr *e = ir_arena_alloc(&m->arena, sizeof *e);
	e->kind = k;
	e->opnd = -1;
	return e;
}

IrExpr *
ir_expr_const(IrModule *m, int64_t c)
{
	IrExpr *e = mk(m, IR_EX_CONST);
	e->c = c;
	return e;
}

IrExpr *
ir_expr_value(IrModule *m, IrValue *v)
{
	IrExpr *e = mk(m, IR_EX_VAL);
	e->pv = v;
	return e;
}

IrExpr *
ir_expr_bin(IrModule *m, IrExprKind k, IrExpr *l, IrExpr *r)
{
	IrExpr *e = mk(m, k);
	e->l = l;
	e->r = r;
	return e;
}

IrExpr *
ir_expr_neg(IrModule *m, IrExpr *x)
{
	IrExpr *e = mk(m, IR_EX_NEG);
	e->l = x;
	return e;
}

IrExpr *
ir_expr_clone(IrModule *m, const IrExpr *x)
{
	if (!x)
		return NULL;
	IrExpr *e = mk(m, x->kind);
	*e = *x;
	e->l = ir_expr_clone(m, x->l);
	e->r = ir_expr_clone(m, x->r);
	return e;
}

bool
ir_expr_is_const(const IrExpr *e)
{
	if (!e)
		return true;
	if (e->kind == IR_EX_VAL)
		return false;
	return ir_expr_is_const(e->l) && ir_expr_is_const(e->r);
}

bool
ir_expr_is_cmp(const IrExpr *e)
{
	return e->kind >= IR_EX_EQ && e->kind <= IR_EX_GE;
}

bool
ir_expr_has_cmp(const IrExpr *e)
{
	if (!e)
		return false;
	return ir_expr_is_cmp(e) || ir_expr_has_cmp(e->l) || ir_expr_has_cmp(e->r);
}

int
ir_expr_depth(const IrExpr *e)
{
	if (!e)
		return 0;
	int l = ir_expr_depth(e->l), r = ir_expr_depth(e->r);
	return 1 + (l > r ? l : r);
}

int64_t
ir_floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

int64_t
ir_mod(int64_t a, int64_t b)
{
	int64_t r = a % b;
	if (r < 0)
		r += b < 0 ? -b : b;
	return r;
}

/* Wrapping 64-bit arithmetic (the language's index type is 64-bit two's complement). */
static int64_t
wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t
wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t
wrap_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static bool
eval(const IrExpr *e, const int64_t *vals, int64_t *out)
{
	int64_t l = 0, r = 0;
	switch (e->kind) {
	case IR_EX_CONST:
		*out = e->c;
		return true;
	case IR_EX_VAL:
		if (!vals)
			return false;
		*out = vals[e->opnd];
		return true;
	case IR_EX_NEG:
		if (!eval(e->l, vals, &l))
			return false;
		*out = wrap_sub(0, l);
		return true;
	default:
		break;
	}
	if (!eval(e->l, vals, &l) || !eval(e->r, vals, &r))
		return false;
	switch (e->kind) {
	case IR_EX_ADD:
		*out = wrap_add(l, r);
		return true;
	case IR_EX_SUB:
		*out = wrap_sub(l, r);
		return true;
	case IR_EX_MUL:
		*out = wrap_mul(l, r);
		return true;
	case IR_EX_FLOORDIV:
		if (r <= 0)
			return false;
		*out = ir_floordiv(l, r);
		return true;
	case IR_EX_MOD:
		if (r <= 0)
			return false;
		*out = ir_mod(l, r);
		return true;
	case IR_EX_EQ:
		*out = l == r;
		return true;
	case IR_EX_NE:
		*out = l != r;
		return true;
	case IR_EX_LT:
		*out = l < r;
		return true;
	case IR_EX_LE:
		*out = l <= r;
		return true;
	case IR_EX_GT:
		*out = l > r;
		return true;
	case IR_EX_GE:
		*out = l >= r;
		return true;
	default:
		ir_unreachable("bad expression kind");
	}
}

bool
ir_expr_eval_const(const IrExpr *e, int64_t *out)
{
	return eval(e, NULL, out);
}

bool
ir_expr_eval(const IrExpr *e, const int64_t *vals, int64_t *out)
{
	return eval(e, vals, out);
}

bool
ir_expr_equal(const IrExpr *a, const IrExpr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind)
		return false;
	if (a->kind == IR_EX_CONST)
		return a->c == b->c;
	if (a->kind == IR_EX_VAL)
		return a->opnd == b->opnd && a->pv == b->pv;
	return ir_expr_equal(a->l, b->l) && ir_expr_equal(a->r, b->r);
}

uint64_t
ir_expr_hash(const IrExpr *e)
{
	if (!e)
		return 0;
	uint64_t h = ir_hash_mix(e->kind, (uint64_t)e->c);
	h = ir_hash_mix(h, (uint64_t)e->opnd);
	h = ir_hash_mix(h, ir_expr_hash(e->l));
	return ir_hash_mix(h, ir_expr_hash(e->r));
}

/* Precedence levels: 1 comparison, 2 additive, 3 multiplicative, 4 unary, 5 primary. */
static int
prec(const IrExpr *e)
{
	switch (e->kind) {
	case IR_EX_CONST:
		return e->c < 0 ? 4 : 5;
	case IR_EX_VAL:
		return 5;
	case IR_EX_NEG:
		return 4;
	case IR_EX_MUL:
	case IR_EX_FLOORDIV:
	case IR_EX_MOD:
		return 3;
	case IR_EX_ADD:
	case IR_EX_SUB:
		return 2;
	default:
		return 1;
	}
}

static const char *const binop_text[IR_EX_COUNT] = {
	[IR_EX_ADD] = " + ", [IR_EX_SUB] = " - ", [IR_EX_MUL] = " * ", [IR_EX_FLOORDIV] = " floordiv ",
	[IR_EX_MOD] = " mod ", [IR_EX_EQ] = " == ", [IR_EX_NE] = " != ", [IR_EX_LT] = " < ",
	[IR_EX_LE] = " <= ", [IR_EX_GT] = " > ", [IR_EX_GE] = " >= ",
};

static void
print_sub(const IrExpr *e, int min_prec, FILE *out, void (*name)(void *, int, FILE *), void *ud)
{
	bool paren = prec(e) < min_prec;
	if (paren)
		fputc('(', out);
	ir_expr_print(e, out, name, ud);
	if (paren)
		fputc(')', out);
}

void
ir_expr_print(const IrExpr *e, FILE *out, void (*name)(void *ud, int opnd, FILE *out), void *ud)
{
	switch (e->kind) {
	case IR_EX_CONST:
		fprintf(out, "%lld", (long long)e->c);
		return;
	case IR_EX_VAL:
		name(ud, e->opnd, out);
		return;
	case IR_EX_NEG:
		fputc('-', out);
		/* `- -3` would read back as the constant 3 under a unary minus; keep it apart. */
		print_sub(e->l, e->l->kind == IR_EX_CONST && e->l->c < 0 ? 5 : 4, out, name, ud);
		return;
	default:
		break;
	}
	int p = prec(e);
	/* Left-associative: the left side may share our level, the right side must bind tighter.
	 * Comparisons are non-associative, so both sides must bind tighter. */
	print_sub(e->l, p == 1 ? 2 : p, out, name, ud);
	fputs(binop_text[e->kind], out);
	print_sub(e->r, p + 1, out, name, ud);
}
