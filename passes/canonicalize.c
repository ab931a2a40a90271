/* canonicalize.c — local simplifications applied to a fixed point:
 *   - index expressions: integer constants (ave.const) substituted, constant subterms folded,
 *     x + 0, x - 0, x * 1, 0 + x, 1 * x, x * 0, 0 * x, - -x simplified;
 *   - ave.index with a constant expression becomes ave.const;
 *   - integer ops on constants fold (ave.add ... ave.shr, ave.cdiv, ave.cmp, ave.select);
 *   - identities: x + 0, x - 0, x * 1, x | 0, x ^ 0, x shl 0, max/min(x, x), ave.cvt to the same
 *     type, ave.select with a constant condition; float x * 1.0, x - 0.0, x + -0.0;
 *   - ave.if with a constant condition is replaced by the taken region;
 *   - ave.for that provably runs zero times is replaced by its initial values. */
#include <math.h>
#include <string.h>

#include "passes.h"

typedef struct Canon {
	IrModule *m;
	IrCtx *c;
	bool changed;
} Canon;

/* The integer constant an operand value holds, if it is defined by ave.const. */
static bool
int_const(const IrValue *v, int64_t *out)
{
	if (!v || v->kind != IR_VAL_RESULT || v->op->code != IR_OP_CONST)
		return false;
	const IrItem *it = &v->op->item[0];
	if (it->kind != IR_IT_INT || !ir_type_is_int(v->type))
		return false;
	/* `ave.const 255 : i8` and `ave.const -1 : i8` are the same value. */
	*out = ir_wrap_int(it->i, v->type->bits);
	return true;
}

static bool
float_const(const IrValue *v, double *out)
{
	if (!v || v->kind != IR_VAL_RESULT || v->op->code != IR_OP_CONST)
		return false;
	const IrItem *it = &v->op->item[0];
	if (!ir_type_is_float(v->type))
		return false;
	*out = it->kind == IR_IT_FLOAT ? it->f : (double)it->i;
	return true;
}

static bool
is_c(const IrExpr *e, int64_t v)
{
	return e->kind == IR_EX_CONST && e->c == v;
}

/* Simplifies e bottom-up; leaves are bound (pv) so the op can be refreshed afterwards. */
static IrExpr *
simplify(Canon *k, IrOp *op, IrExpr *e, bool *changed)
{
	if (!e)
		return NULL;
	if (e->kind == IR_EX_VAL) {
		IrValue *v = e->pv ? e->pv : ir_op_value(op, e->opnd);
		int64_t c;
		if (int_const(v, &c)) {
			*changed = true;
			return ir_expr_const(k->m, c);
		}
		e->pv = v;
		return e;
	}
	e->l = simplify(k, op, e->l, changed);
	e->r = simplify(k, op, e->r, changed);
	int64_t c;
	if (e->kind != IR_EX_CONST && ir_expr_is_const(e) && ir_expr_eval_const(e, &c)) {
		*changed = true;
		return ir_expr_const(k->m, c);
	}
	switch (e->kind) {
	case IR_EX_ADD:
		if (is_c(e->r, 0) || is_c(e->l, 0)) {
			*changed = true;
			return is_c(e->r, 0) ? e->l : e->r;
		}
		break;
	case IR_EX_SUB:
		if (is_c(e->r, 0)) {
			*changed = true;
			return e->l;
		}
		break;
	case IR_EX_MUL:
		if (is_c(e->r, 1) || is_c(e->l, 1)) {
			*changed = true;
			return is_c(e->r, 1) ? e->l : e->r;
		}
		if (is_c(e->r, 0) || is_c(e->l, 0)) {
			*changed = true;
			return ir_expr_const(k->m, 0);
		}
		break;
	case IR_EX_FLOORDIV:
		if (is_c(e->r, 1)) {
			*changed = true;
			return e->l;
		}
		break;
	case IR_EX_NEG:
		if (e->l->kind == IR_EX_NEG) {
			*changed = true;
			return e->l->l;
		}
		break;
	default:
		break;
	}
	return e;
}

static void
simplify_item(Canon *k, IrOp *op, IrItem *it, bool *changed)
{
	if (it->kind == IR_IT_VALUE && !it->pv)
		it->pv = ir_op_value(op, it->opnd);
	for (int i = 0; i < it->ncoord; i++)
		it->coord[i].e = simplify(k, op, it->coord[i].e, changed);
	if (it->e)
		it->e = simplify(k, op, it->e, changed);
}

static void
simplify_exprs(Canon *k, IrOp *op)
{
	bool changed = false;
	for (int i = 0; i < op->nitem; i++)
		simplify_item(k, op, &op->item[i], &changed);
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			simplify_item(k, op, &op->group[g].item[i], &changed);
	/* Every leaf is bound now; rebuild the operand list (constants may have dropped out). */
	ir_op_refresh_operands(k->m, op);
	if (changed)
		k->changed = true;
}

static IrOp *
make_const_int(Canon *k, IrOp *at, IrType *t, int64_t v)
{
	IrBuilder b;
	ir_builder_before(&b, k->m, at);
	return ir_b_const_int(&b, t, v, at->nres ? at->res[0].name : NULL)->op;
}

/* Replaces op's single result by v and erases op. */
static void
replace(Canon *k, IrOp *op, IrValue *v)
{
	ir_replace_all_uses(&op->res[0], v);
	ir_op_erase(op);
	k->changed = true;
}

static IrValue *
operand_value(IrOp *op, int i)
{
	return ir_item_value(op, &op->item[i]);
}

static bool
item_int(IrOp *op, int i, int64_t *out)
{
	const IrItem *it = &op->item[i];
	if (it->kind == IR_IT_INT) {
		IrType *t = ir_type_elem(op->res[0].type);
		if (op->code == IR_OP_CMP || op->code == IR_OP_SELECT) {
			/* Literals take the type of the value operands. */
			IrValue *other = NULL;
			for (int k = 0; k < op->nitem && !other; k++)
				other = ir_item_value(op, &op->item[k]);
			if (other && op->code == IR_OP_SELECT)
				other = ir_item_value(op, &op->item[i == 1 ? 2 : 1]);
			t = other ? ir_type_elem(other->type) : t;
		}
		*out = ir_type_is_int(t) ? ir_wrap_int(it->i, t->bits) : it->i;
		return true;
	}
	return int_const(operand_value(op, i), out);
}

static bool
item_float(IrOp *op, int i, double *out)
{
	const IrItem *it = &op->item[i];
	if (it->kind == IR_IT_FLOAT) {
		*out = it->f;
		return true;
	}
	if (it->kind == IR_IT_INT) {
		*out = (double)it->i;
		return true;
	}
	return float_const(operand_value(op, i), out);
}

/* Identities of binary ops; returns the surviving operand value or NULL. */
static IrValue *
identity(Canon *k, IrOp *op)
{
	IrType *t = op->res[0].type;
	IrValue *a = operand_value(op, 0), *b = operand_value(op, 1);
	int64_t cb, ca;
	double fb, fa;
	bool isint = ir_type_is_int(ir_type_elem(t));
	(void)k;
	if (op->code == IR_OP_MAX || op->code == IR_OP_MIN)
		return a && a == b && a->type == t ? a : NULL;
	if (isint) {
		if (a && a->type == t && item_int(op, 1, &cb)) {
			switch (op->code) {
			case IR_OP_ADD:
			case IR_OP_SUB:
			case IR_OP_OR:
			case IR_OP_XOR:
			case IR_OP_SHL:
			case IR_OP_SHR:
				if (cb == 0)
					return a;
				break;
			case IR_OP_MUL:
			case IR_OP_DIV:
				if (cb == 1)
					return a;
				break;
			default:
				break;
			}
		}
		if (b && b->type == t && item_int(op, 0, &ca)) {
			if ((op->code == IR_OP_ADD || op->code == IR_OP_OR || op->code == IR_OP_XOR) && ca == 0)
				return b;
			if (op->code == IR_OP_MUL && ca == 1)
				return b;
		}
		return NULL;
	}
	if (a && a->type == t && item_float(op, 1, &fb)) {
		if (op->code == IR_OP_MUL && fb == 1.0)
			return a;
		if (op->code == IR_OP_SUB && fb == 0.0 && !signbit(fb))
			return a;
		if (op->code == IR_OP_ADD && fb == 0.0 && signbit(fb))
			return a;
	}
	if (b && b->type == t && item_float(op, 0, &fa)) {
		if (op->code == IR_OP_MUL && fa == 1.0)
			return b;
		if (op->code == IR_OP_ADD && fa == 0.0 && signbit(fa))
			return b;
	}
	return NULL;
}

static bool
cmp_holds(IrStr mode, IrCtx *c, int64_t a, int64_t b)
{
	if (mode == c->kw.eq)
		return a == b;
	if (mode == c->kw.ne)
		return a != b;
	if (mode == c->kw.lt)
		return a < b;
	if (mode == c->kw.le)
		return a <= b;
	if (mode == c->kw.gt)
		return a > b;
	return a >= b;
}

/* Moves the ops of `b` (but its terminator) before `at`, mapping its yields to `res`. */
static void
inline_region(Canon *k, IrOp *at, IrBlock *b)
{
	IrOp *y = b->last;
	for (int i = 0; i < at->nres; i++)
		ir_replace_all_uses(&at->res[i], ir_item_value(y, &y->item[i]));
	IrOp *next;
	for (IrOp *o = b->first; o && o != y; o = next) {
		next = o->next;
		ir_op_unlink(o);
		ir_op_insert_before(at, o);
	}
	ir_op_erase(at);
	k->changed = true;
}

static void
canon_op(Canon *k, IrOp *op)
{
	IrCtx *c = k->c;
	int64_t a, b, v;
	simplify_exprs(k, op);
	switch (op->code) {
	case IR_OP_INDEX:
		if (op->item[0].e->kind == IR_EX_CONST) {
			IrType *t = op->res[0].type;
			IrOp *cst = make_const_int(k, op, t, ir_wrap_int(op->item[0].e->c, t->bits));
			replace(k, op, &cst->res[0]);
		} else if (op->item[0].e->kind == IR_EX_VAL &&
			   ir_op_value(op, op->item[0].e->opnd)->type == op->res[0].type) {
			replace(k, op, ir_op_value(op, op->item[0].e->opnd));
		}
		return;
	case IR_OP_ADD:
	case IR_OP_SUB:
	case IR_OP_MUL:
	case IR_OP_DIV:
	case IR_OP_REM:
	case IR_OP_MAX:
	case IR_OP_MIN:
	case IR_OP_AND:
	case IR_OP_OR:
	case IR_OP_XOR:
	case IR_OP_SHL:
	case IR_OP_SHR:
	case IR_OP_CDIV: {
		IrType *t = op->res[0].type;
		if (ir_type_is_int(t) && item_int(op, 0, &a) && item_int(op, 1, &b) &&
		    ir_fold_int(op->code, t->bits, a, b, &v)) {
			IrOp *cst = make_const_int(k, op, t, v);
			replace(k, op, &cst->res[0]);
			return;
		}
		if (op->code == IR_OP_CDIV)
			return;
		IrValue *id = identity(k, op);
		if (id)
			replace(k, op, id);
		return;
	}
	case IR_OP_CMP:
		if (op->res[0].type == c->t_i1 && item_int(op, 0, &a) && item_int(op, 1, &b)) {
			IrOp *cst = make_const_int(k, op, c->t_i1, cmp_holds(op->mode, c, a, b));
			replace(k, op, &cst->res[0]);
		}
		return;
	case IR_OP_SELECT:
		if (int_const(operand_value(op, 0), &a)) {
			IrValue *pick = operand_value(op, a ? 1 : 2);
			if (pick && pick->type == op->res[0].type)
				replace(k, op, pick);
		}
		return;
	case IR_OP_CVT:
		if (operand_value(op, 0)->type == op->res[0].type)
			replace(k, op, operand_value(op, 0));
		return;
	case IR_OP_IF:
		if (int_const(operand_value(op, 0), &a)) {
			if (a)
				inline_region(k, op, op->reg[0].block);
			else if (op->nreg > 1)
				inline_region(k, op, op->reg[1].block);
			else if (!op->nres) {
				ir_op_erase(op);
				k->changed = true;
			}
		}
		return;
	case IR_OP_FOR: {
		int64_t lb, ub;
		if (op->item[0].e->kind == IR_EX_CONST && op->item[1].e->kind == IR_EX_CONST) {
			lb = op->item[0].e->c;
			ub = op->item[1].e->c;
			if (lb >= ub) {
				bool ok = true;
				for (int i = 0; i < op->nres; i++)
					ok &= operand_value(op, 3 + i) != NULL;
				if (!ok)
					return; /* literal inits: leave it for now */
				for (int i = 0; i < op->nres; i++)
					ir_replace_all_uses(&op->res[i], operand_value(op, 3 + i));
				ir_op_erase(op);
				k->changed = true;
			}
		}
		return;
	}
	default:
		return;
	}
}

static void
canon_block(Canon *k, IrBlock *b)
{
	IrOp *next;
	for (IrOp *op = b->first; op; op = next) {
		next = op->next;
		for (int r = 0; r < op->nreg; r++)
			canon_block(k, op->reg[r].block);
		canon_op(k, op);
	}
}

bool
pass_canonicalize(IrModule *m, const IrPassOpts *o)
{
	(void)o;
	Canon k = {m, m->ctx, true};
	for (int round = 0; k.changed && round < 16; round++) {
		k.changed = false;
		canon_block(&k, m->body);
	}
	return true;
}
