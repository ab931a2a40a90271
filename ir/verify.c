/* verify.c — the verifier's generic half: op shapes against the op table, placement and
 * terminators, SSA visibility (dominance in structured regions, isolation of kernels), symbol
 * tables, and the interval analysis of index expressions used by the per-op hooks. */
#include <string.h>

#include "ir.h"

static const char *
item_kind_name(IrItemKind k)
{
	static const char *const names[IR_IT_COUNT] = {
		"a value", "a symbol", "a symbol call", "a symbol declaration", "an integer",
		"a float", "an index expression", "a string", "a keyword"};
	return names[k];
}

static void
describe_kinds(uint32_t kinds, char *buf, size_t n)
{
	buf[0] = 0;
	int first = 1;
	for (int k = 0; k < IR_IT_COUNT; k++) {
		if (!(kinds & (1u << k)))
			continue;
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s", first ? "" : " or ", item_kind_name((IrItemKind)k));
		first = 0;
	}
}

/* `where` is a printf format with one %d (the position) or one %s (the group keyword). */
static bool
check_item(IrCtx *c, IrOp *op, const IrItem *it, const IrItemPat *pat, const char *fmt, int pos,
	   const char *kw)
{
	char where[80];
#define WHERE() (kw ? snprintf(where, sizeof where, fmt, kw) : snprintf(where, sizeof where, fmt, pos), where)
	const char *name = ir_op_name(op->code);
	if (it->kind == IR_IT_EXPR && it->e->kind == IR_EX_VAL && (pat->kinds & (1u << IR_IT_VALUE)))
		return true; /* a lone value in a group names that value */
	if (!(pat->kinds & (1u << it->kind))) {
		char want[160];
		describe_kinds(pat->kinds, want, sizeof want);
		ir_error(c, it->loc, "'%s' expects %s %s, found %s", name, want, WHERE(),
			 item_kind_name(it->kind));
		return false;
	}
	if ((it->kind == IR_IT_VALUE || it->kind == IR_IT_SYMBOL) && it->suffix && !pat->suffix_ok) {
		ir_error(c, it->loc, "'%s' does not take a '[...]' suffix %s", name, WHERE());
		return false;
	}
	/* Ranges name regions: of symmetric buffers (symbols), and a tag function's region. */
	bool region = op->code == IR_OP_TAG_FUNC && kw && !strcmp(kw, "region");
	for (int i = 0; i < it->ncoord; i++)
		if (it->coord[i].len >= 0 && it->kind != IR_IT_SYMBOL && !region) {
			ir_error(c, it->loc, "a range ': %lld' is only allowed on a symmetric buffer",
				 (long long)it->coord[i].len);
			return false;
		}
	return true;
#undef WHERE
}

static bool
check_items(IrCtx *c, IrOp *op, const IrItem *items, int n, const IrItemPat *pat, int npat,
	    const char *what)
{
	const char *name = ir_op_name(op->code);
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (k >= npat) {
			if (npat == 0)
				ir_error(c, items[i].loc, "'%s' takes no %ss", name, what);
			else
				ir_error(c, items[i].loc, "'%s' takes at most %d %s%s", name, npat, what,
					 npat == 1 ? "" : "s");
			return false;
		}
		if (!check_item(c, op, &items[i], &pat[k], "as operand %d", i + 1, NULL))
			return false;
		if (!pat[k].repeat)
			k++;
	}
	int need = 0;
	for (int j = 0; j < npat; j++)
		if (!pat[j].repeat)
			need++;
	if (n < need && !(npat && pat[npat - 1].repeat && n >= npat - 1)) {
		ir_error(c, op->loc, "'%s' expects %d %s%s, found %d", name, need, what,
			 need == 1 ? "" : "s", n);
		return false;
	}
	return true;
}

bool
ir_verify_op_shape(IrCtx *c, IrOp *op)
{
	const IrOpInfo *info = ir_opinfo(c, op->code);
	const char *name = info->name;

	if (op->mode) {
		bool ok = false;
		for (int i = 0; i < info->nmode; i++)
			ok |= info->mode[i] == op->mode;
		if (!ok) {
			if (info->nmode)
				ir_error(c, op->loc, "unknown mode '%s' for '%s'", op->mode, name);
			else
				ir_error(c, op->loc, "'%s' takes no mode, found '%s'", name, op->mode);
			return false;
		}
	} else if (ir_opinfo_mode_required(op->code)) {
		char buf[128] = "";
		for (int i = 0; i < info->nmode; i++) {
			size_t len = strlen(buf);
			snprintf(buf + len, sizeof buf - len, "%s'%s'", i ? ", " : "", info->mode[i]);
		}
		ir_error(c, op->loc, "'%s' needs a mode: one of %s", name, buf);
		return false;
	}
	if (!check_items(c, op, op->item, op->nitem, info->item, info->nitem, "operand"))
		return false;
	for (int g = 0; g < op->ngroup; g++) {
		const IrGroup *gr = &op->group[g];
		const IrGroupPat *pat = NULL;
		for (int i = 0; i < info->ngroup; i++)
			if (info->group[i].kw == gr->kw)
				pat = &info->group[i];
		if (!pat) {
			const char *cand[sizeof info->group / sizeof info->group[0]];
			for (int i = 0; i < info->ngroup; i++)
				cand[i] = info->group[i].kw;
			const char *near = ir_closest(gr->kw, strlen(gr->kw), cand, info->ngroup);
			if (near)
				ir_error(c, gr->loc, "unknown group '%s' on '%s'; did you mean '%s'?",
				         gr->kw, name, near);
			else
				ir_error(c, gr->loc, "unknown group '%s' on '%s'", gr->kw, name);
			return false;
		}
		for (int h = 0; h < g; h++)
			if (op->group[h].kw == gr->kw) {
				ir_error(c, gr->loc, "group '%s' appears twice", gr->kw);
				return false;
			}
		if (pat->nitem < 0) {
			if (gr->nitem) {
				ir_error(c, gr->loc, "'%s' takes no arguments", gr->kw);
				return false;
			}
			continue;
		}
		if (gr->nitem != pat->nitem) {
			ir_error(c, gr->loc, "'%s(...)' expects %d argument%s, found %d", gr->kw,
				 pat->nitem, pat->nitem == 1 ? "" : "s", gr->nitem);
			return false;
		}
		for (int i = 0; i < gr->nitem; i++)
			if (!check_item(c, op, &gr->item[i], &pat->item[i], "in '%s(...)'", 0, gr->kw))
				return false;
	}
	for (int i = 0; i < info->ngroup; i++)
		if (info->group[i].required && !ir_op_group(op, info->group[i].kw)) {
			ir_error(c, op->loc, "'%s' needs '%s(...)'", name, info->group[i].kw);
			return false;
		}
	if (info->nres >= 0 && op->nres != info->nres) {
		if (info->nres == 0)
			ir_error(c, op->loc, "'%s' has no results, found %d", name, op->nres);
		else
			ir_error(c, op->loc, "'%s' has %d result%s, found %d", name, info->nres,
				 info->nres == 1 ? "" : "s", op->nres);
		return false;
	}
	int nreg = op->nreg;
	if ((info->nreg >= 0 && nreg != info->nreg) || (info->nreg < 0 && (nreg < 1 || nreg > 2))) {
		if (info->nreg == 0)
			ir_error(c, op->loc, "'%s' takes no region", name);
		else
			ir_error(c, op->loc, "'%s' needs %s region%s, found %d", name,
				 info->nreg == 1 ? "one" : "one or two", info->nreg == 1 ? "" : "s", nreg);
		return false;
	}
	IrMap seen;
	ir_map_init(&seen, c->al);
	bool ok = true;
	for (int i = 0; i < op->nattr && ok; i++) {
		IrStr n = op->attr[i].name;
		if (ir_map_get(&seen, ir_hash_ptr(n), n, NULL)) {
			ir_error(c, op->attr[i].loc, "attribute '%s' appears twice", n);
			ok = false;
		}
		ir_map_put(&seen, ir_hash_ptr(n), n, (void *)n, NULL);
	}
	ir_map_free(&seen);
	return ok;
}

/* ---- symbols ---- */

IrStr
ir_op_symbol(const IrOp *op)
{
	if (!op->nitem)
		return NULL;
	const IrItem *it = &op->item[0];
	if (it->kind == IR_IT_SYMBOL || it->kind == IR_IT_DECL || it->kind == IR_IT_CALL)
		return it->s;
	return NULL;
}

static IrOp *
lookup_in(IrBlock *b, IrCtx *c, IrStr name)
{
	for (IrOp *o = b->first; o; o = o->next)
		if (ir_op_has_trait(c, o, IR_TRAIT_SYMBOL) && ir_op_symbol(o) == name)
			return o;
	return NULL;
}

IrOp *
ir_symbol_lookup(IrCtx *c, IrOp *from, IrStr name)
{
	for (IrBlock *b = from->parent; b;) {
		IrOp *owner = ir_block_parent_op(b);
		if (!owner || ir_op_has_trait(c, owner, IR_TRAIT_SYMTAB)) {
			IrOp *o = lookup_in(b, c, name);
			if (o)
				return o;
		}
		if (!owner)
			break;
		b = owner->parent;
	}
	return NULL;
}

/* ---- interval analysis of index expressions ---- */

typedef struct Range {
	int64_t lo, hi;
	bool bounded;
} Range;

static Range range_value(const IrValue *v, int depth);

static Range
unbounded(void)
{
	return (Range){INT64_MIN, INT64_MAX, false};
}

static Range
exact(int64_t c)
{
	return (Range){c, c, true};
}

static bool
add_ok(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

static Range
range_expr(const IrOp *op, const IrExpr *e, int depth)
{
	Range l, r, out;
	int64_t c;
	if (depth > 64)
		return unbounded();
	switch (e->kind) {
	case IR_EX_CONST:
		return exact(e->c);
	case IR_EX_VAL: {
		const IrValue *v = e->pv ? e->pv : ir_op_value(op, e->opnd);
		return v ? range_value(v, depth + 1) : unbounded();
	}
	case IR_EX_NEG:
		l = range_expr(op, e->l, depth + 1);
		if (!l.bounded || l.lo == INT64_MIN)
			return unbounded();
		return (Range){-l.hi, -l.lo, true};
	case IR_EX_ADD:
	case IR_EX_SUB:
		l = range_expr(op, e->l, depth + 1);
		r = range_expr(op, e->r, depth + 1);
		if (!l.bounded || !r.bounded)
			return unbounded();
		if (e->kind == IR_EX_SUB) {
			if (r.lo == INT64_MIN)
				return unbounded();
			r = (Range){-r.hi, -r.lo, true};
		}
		if (!add_ok(l.lo, r.lo, &out.lo) || !add_ok(l.hi, r.hi, &out.hi))
			return unbounded();
		out.bounded = true;
		return out;
	case IR_EX_MUL: {
		l = range_expr(op, e->l, depth + 1);
		r = range_expr(op, e->r, depth + 1);
		if (!l.bounded || !r.bounded)
			return unbounded();
		int64_t p[4];
		if (__builtin_mul_overflow(l.lo, r.lo, &p[0]) || __builtin_mul_overflow(l.lo, r.hi, &p[1]) ||
		    __builtin_mul_overflow(l.hi, r.lo, &p[2]) || __builtin_mul_overflow(l.hi, r.hi, &p[3]))
			return unbounded();
		out = (Range){p[0], p[0], true};
		for (int i = 1; i < 4; i++) {
			out.lo = p[i] < out.lo ? p[i] : out.lo;
			out.hi = p[i] > out.hi ? p[i] : out.hi;
		}
		return out;
	}
	case IR_EX_FLOORDIV:
		if (!ir_expr_eval_const(e->r, &c) || c <= 0)
			return unbounded();
		l = range_expr(op, e->l, depth + 1);
		if (!l.bounded)
			return unbounded();
		return (Range){ir_floordiv(l.lo, c), ir_floordiv(l.hi, c), true};
	case IR_EX_MOD:
		if (!ir_expr_eval_const(e->r, &c) || c <= 0)
			return unbounded();
		l = range_expr(op, e->l, depth + 1);
		if (l.bounded && l.lo >= 0 && l.hi < c)
			return l;
		return (Range){0, c - 1, true};
	default:
		return (Range){0, 1, true};
	}
}

static Range
range_union(Range a, Range b)
{
	if (!a.bounded || !b.bounded)
		return unbounded();
	return (Range){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, true};
}

/* The range of an operand item of an integer op: a value or a literal (wrapped to bits). */
static Range
range_item(const IrOp *op, const IrItem *it, int bits, int depth)
{
	if (it->kind == IR_IT_INT)
		return exact(ir_wrap_int(it->i, bits));
	const IrValue *v = ir_item_value(op, it);
	return v ? range_value(v, depth + 1) : unbounded();
}

/* Integer ops of scalars: exact when both operands are (folded as canonicalize folds them),
 * intervals for + - * min max when nothing can wrap, unbounded otherwise. */
static Range
range_binop(const IrOp *d, const IrValue *v, int depth)
{
	if (!ir_type_is_int(v->type) || d->nitem != 2)
		return unbounded();
	int bits = v->type->bits;
	Range a = range_item(d, &d->item[0], bits, depth), b = range_item(d, &d->item[1], bits, depth);
	if (!a.bounded || !b.bounded)
		return unbounded();
	int64_t x;
	if (a.lo == a.hi && b.lo == b.hi)
		return ir_fold_int(d->code, bits, a.lo, b.lo, &x) ? exact(x) : unbounded();
	Range out = {0, 0, true};
	switch (d->code) {
	case IR_OP_ADD:
		if (!add_ok(a.lo, b.lo, &out.lo) || !add_ok(a.hi, b.hi, &out.hi))
			return unbounded();
		break;
	case IR_OP_SUB:
		if (__builtin_sub_overflow(a.lo, b.hi, &out.lo) || __builtin_sub_overflow(a.hi, b.lo, &out.hi))
			return unbounded();
		break;
	case IR_OP_MIN:
		out.lo = a.lo < b.lo ? a.lo : b.lo;
		out.hi = a.hi < b.hi ? a.hi : b.hi;
		break;
	case IR_OP_MAX:
		out.lo = a.lo > b.lo ? a.lo : b.lo;
		out.hi = a.hi > b.hi ? a.hi : b.hi;
		break;
	default:
		return unbounded();
	}
	if (bits < 64 && (out.lo < -((int64_t)1 << (bits - 1)) || out.hi >= ((int64_t)1 << (bits - 1))))
		return unbounded();
	return out;
}

static Range
range_value(const IrValue *v, int depth)
{
	if (depth > 64)
		return unbounded();
	if (v->type->kind == IR_TY_INT && v->type->bits == 1)
		return (Range){0, 1, true};
	if (v->kind == IR_VAL_RESULT) {
		const IrOp *d = v->op;
		switch (d->code) {
		case IR_OP_CONST:
			if (d->item[0].kind == IR_IT_INT && ir_type_is_int(v->type))
				return exact(ir_wrap_int(d->item[0].i, v->type->bits));
			return unbounded();
		case IR_OP_INDEX: {
			Range r = range_expr(d, d->item[0].e, depth + 1);
			/* The result wraps to its type: only a range that fits survives. */
			if (v->type->kind == IR_TY_INT && v->type->bits < 64 &&
			    (r.lo < -((int64_t)1 << (v->type->bits - 1)) ||
			     r.hi >= ((int64_t)1 << (v->type->bits - 1))))
				return unbounded();
			return r;
		}
		case IR_OP_ADD:
		case IR_OP_SUB:
		case IR_OP_MUL:
		case IR_OP_MIN:
		case IR_OP_MAX:
		case IR_OP_DIV:
		case IR_OP_REM:
		case IR_OP_AND:
		case IR_OP_OR:
		case IR_OP_XOR:
		case IR_OP_SHL:
		case IR_OP_SHR:
		case IR_OP_CDIV:
			return range_binop(d, v, depth);
		case IR_OP_SELECT: {
			if (!ir_type_is_int(v->type))
				return unbounded();
			Range c = range_item(d, &d->item[0], 1, depth);
			Range a = range_item(d, &d->item[1], v->type->bits, depth);
			Range b = range_item(d, &d->item[2], v->type->bits, depth);
			if (c.bounded && c.lo == c.hi)
				return c.lo ? a : b;
			return range_union(a, b);
		}
		case IR_OP_IF: {
			/* Either branch's yielded value (canonicalize may inline either). */
			Range r = {0, 0, false};
			for (int i = 0; i < d->nreg; i++) {
				const IrOp *y = d->reg[i].block->last;
				if (!y || y->code != IR_OP_YIELD || v->index >= y->nitem)
					return unbounded();
				Range b = range_item(y, &y->item[v->index], v->type->bits, depth);
				r = i ? range_union(r, b) : b;
			}
			return d->nreg == 2 ? r : unbounded();
		}
		case IR_OP_REPLICA_ID: {
			IrOp *role = ir_role_of((IrOp *)d);
			const IrGroup *g = role ? ir_op_group_named(role, "replicate") : NULL;
			int64_t n = 1;
			if (g && g->nitem == 1 && g->item[0].kind == IR_IT_EXPR &&
			    !ir_expr_eval_const(g->item[0].e, &n))
				return unbounded();
			return (Range){0, n - 1, true};
		}
		default:
			return unbounded();
		}
	}
	if (v->kind == IR_VAL_ARG && v->index == 0) {
		IrOp *f = ir_block_parent_op(v->block);
		if (f && f->code == IR_OP_FOR) {
			Range lb = range_expr(f, f->item[0].e, depth + 1);
			Range ub = range_expr(f, f->item[1].e, depth + 1);
			int64_t step;
			if (lb.bounded && ub.bounded && ir_expr_eval_const(f->item[2].e, &step) && step > 0 &&
			    ub.hi > INT64_MIN)
				return (Range){lb.lo, ub.hi - 1 < lb.lo ? lb.lo : ub.hi - 1, true};
		}
	}
	return unbounded();
}

bool
ir_expr_range(const IrOp *op, const IrExpr *e, int64_t *lo, int64_t *hi)
{
	Range r = range_expr(op, e, 0);
	*lo = r.lo;
	*hi = r.hi;
	return r.bounded;
}

bool
ir_value_range(const IrValue *v, int64_t *lo, int64_t *hi)
{
	Range r = range_value(v, 0);
	*lo = r.lo;
	*hi = r.hi;
	return r.bounded;
}

bool
ir_value_const(const IrValue *v, int64_t *out)
{
	int64_t lo, hi;
	if (ir_value_range(v, &lo, &hi) && lo == hi) {
		*out = lo;
		return true;
	}
	return false;
}

/* ---- the walk: placement, terminators, visibility, symbols ---- */

typedef struct Verifier {
	IrCtx *c;
	IrModule *m;
	IrMap depth;  /* visible value -> scope depth + 1 */
	IrVec undo;   /* IrValue* defined in open scopes */
	IrVec marks;  /* int */
	int level;    /* current scope depth */
	int iso;      /* values below this depth are invisible (kernel isolation) */
	bool ok;
} Verifier;

static void
vis_push(Verifier *v)
{
	int mark = v->undo.len;
	ir_vec_push(v->c->al, &v->marks, &mark, sizeof mark);
	v->level++;
}

static void
vis_pop(Verifier *v)
{
	int mark = IR_VEC_AT(v->marks, int, --v->marks.len);
	while (v->undo.len > mark) {
		IrValue *x = IR_VEC_AT(v->undo, IrValue *, --v->undo.len);
		ir_map_del(&v->depth, ir_hash_ptr(x), x, NULL);
	}
	v->level--;
}

static void
vis_def(Verifier *v, IrValue *x)
{
	ir_map_put(&v->depth, ir_hash_ptr(x), x, (void *)(uintptr_t)(v->level + 1), NULL);
	ir_vec_push(v->c->al, &v->undo, &x, sizeof x);
}

static const char *
vname(const IrValue *x)
{
	return x->name ? x->name : "<unnamed>";
}

static bool
check_expr_leaves(Verifier *v, IrOp *op, const IrExpr *e, IrLoc loc)
{
	if (!e)
		return true;
	if (e->kind == IR_EX_VAL) {
		IrValue *x = ir_op_value(op, e->opnd);
		if (!x) {
			ir_error(v->c, loc, "index expression refers to a missing operand");
			return false;
		}
		if (!ir_type_is_int(x->type)) {
			ir_error(v->c, loc, "index expression uses '%%%s' of type '%s'; expected an integer",
				 vname(x), ir_type_str(v->c, x->type));
			return false;
		}
		return true;
	}
	return check_expr_leaves(v, op, e->l, loc) && check_expr_leaves(v, op, e->r, loc);
}

static bool
check_item_exprs(Verifier *v, IrOp *op, const IrItem *it, bool cmp_ok, bool value_ok)
{
	if (value_ok && it->kind == IR_IT_EXPR && it->e->kind == IR_EX_VAL)
		return true; /* a lone value standing for a value; its op checks its type */
	for (int i = 0; i < it->ncoord; i++) {
		if (!check_expr_leaves(v, op, it->coord[i].e, it->loc))
			return false;
		if (ir_expr_has_cmp(it->coord[i].e)) {
			ir_error(v->c, it->loc, "a comparison is not allowed in a coordinate");
			return false;
		}
	}
	if (it->e) {
		if (!check_expr_leaves(v, op, it->e, it->loc))
			return false;
		if (ir_expr_has_cmp(it->e) && (!cmp_ok || !ir_expr_is_cmp(it->e))) {
			ir_error(v->c, it->loc, "a comparison is only allowed where a predicate is expected");
			return false;
		}
		if (cmp_ok && ir_expr_is_cmp(it->e) &&
		    (ir_expr_has_cmp(it->e->l) || ir_expr_has_cmp(it->e->r))) {
			ir_error(v->c, it->loc, "comparisons do not chain");
			return false;
		}
	}
	return true;
}

static bool
check_exprs(Verifier *v, IrOp *op)
{
	/* Comparisons are predicates: only an i1 `ave.index` may produce one. */
	bool cmp_ok = op->code == IR_OP_INDEX && op->nres == 1 && op->res[0].type == v->c->t_i1;
	const IrOpInfo *info = ir_opinfo(v->c, op->code);
	for (int i = 0; i < op->nitem; i++)
		if (!check_item_exprs(v, op, &op->item[i], cmp_ok, false))
			return false;
	for (int g = 0; g < op->ngroup; g++) {
		const IrGroupPat *pat = NULL;
		for (int k = 0; k < info->ngroup; k++)
			if (info->group[k].kw == op->group[g].kw)
				pat = &info->group[k];
		for (int i = 0; i < op->group[g].nitem; i++) {
			bool value_ok = pat && i < pat->nitem && (pat->item[i].kinds & (1u << IR_IT_VALUE));
			if (!check_item_exprs(v, op, &op->group[g].item[i], false, value_ok))
				return false;
		}
	}
	return true;
}

static bool
check_visible(Verifier *v, IrOp *op)
{
	for (int i = 0; i < op->nopnd; i++) {
		IrValue *x = op->opnd[i].val;
		if (x->kind == IR_VAL_PARAM && x->op == op)
			continue;
		uintptr_t d = (uintptr_t)ir_map_get(&v->depth, ir_hash_ptr(x), x, NULL);
		if (!d) {
			ir_error(v->c, op->loc, "'%s' uses '%%%s', which does not dominate it",
				 ir_op_name(op->code), vname(x));
			return false;
		}
		if ((int)d - 1 < v->iso) {
			ir_error(v->c, op->loc,
				 "'%%%s' is defined outside the kernel; kernels are isolated from above",
				 vname(x));
			return false;
		}
	}
	return true;
}

static bool
check_placement(Verifier *v, IrOp *op)
{
	IrCtx *c = v->c;
	IrOp *parent = ir_op_parent_op(op);
	IrOpcode pc = parent ? parent->code : IR_OP_COUNT;
	const char *name = ir_op_name(op->code);
	bool top = !parent || pc == IR_OP_MODULE;

	switch (op->code) {
	case IR_OP_MODULE:
		if (parent) {
			ir_error(c, op->loc, "'ave.module' must be at the top level of the file");
			return false;
		}
		return true;
	case IR_OP_KERNEL:
	case IR_OP_SYMM_ALLOC:
	case IR_OP_CHUNK:
	case IR_OP_CHUNK_SCHEDULE:
		if (!top) {
			ir_error(c, op->loc, "'%s' must be at the top level of the file or of an 'ave.module'",
				 name);
			return false;
		}
		return true;
	case IR_OP_TAG_FUNC:
		if (!top && pc != IR_OP_KERNEL) {
			ir_error(c, op->loc,
				 "'ave.tag.func' must be directly inside a kernel, an 'ave.module' or the file");
			return false;
		}
		return true;
	case IR_OP_ROLE:
		if (pc != IR_OP_WARP_SPECIALIZE) {
			ir_error(c, op->loc, "'ave.role' must be directly inside 'ave.warp_specialize'");
			return false;
		}
		return true;
	default:
		break;
	}
	if (top) {
		ir_error(c, op->loc, "'%s' must be inside a kernel", name);
		return false;
	}
	if (pc == IR_OP_WARP_SPECIALIZE) {
		ir_error(c, op->loc, "'ave.warp_specialize' may only contain 'ave.role' ops, found '%s'",
			 name);
		return false;
	}
	if (op->code == IR_OP_WARP_SPECIALIZE) {
		for (IrOp *p = parent; p; p = ir_op_parent_op(p))
			if (p->code == IR_OP_ROLE) {
				ir_error(c, op->loc, "'ave.warp_specialize' cannot be nested inside a role");
				return false;
			}
	}
	if (op->code == IR_OP_REPLICA_ID && !ir_role_of(op)) {
		ir_error(c, op->loc, "'ave.replica_id' must be inside an 'ave.role'");
		return false;
	}
	return true;
}

static bool
check_terminators(Verifier *v, IrOp *op)
{
	IrCtx *c = v->c;
	for (int r = 0; r < op->nreg; r++) {
		IrBlock *b = op->reg[r].block;
		for (IrOp *o = b->first; o; o = o->next) {
			if (!ir_op_has_trait(c, o, IR_TRAIT_TERM))
				continue;
			bool want_yield = op->code == IR_OP_FOR || op->code == IR_OP_IF;
			bool want_ret = op->code == IR_OP_KERNEL;
			if (o->code == IR_OP_YIELD && !want_yield) {
				ir_error(c, o->loc, "'ave.yield' must end an 'ave.for' or 'ave.if' region");
				return false;
			}
			if (o->code == IR_OP_RETURN && !want_ret) {
				ir_error(c, o->loc, "'ave.return' must end a kernel body");
				return false;
			}
			if (o != b->last) {
				ir_error(c, o->loc, "'%s' must be the last op of its region",
					 ir_op_name(o->code));
				return false;
			}
		}
		if (op->code == IR_OP_KERNEL && (!b->last || b->last->code != IR_OP_RETURN)) {
			ir_error(c, b->last ? b->last->loc : op->loc,
				 "kernel body must end with 'ave.return'");
			return false;
		}
		if ((op->code == IR_OP_FOR || op->code == IR_OP_IF) &&
		    (!b->last || b->last->code != IR_OP_YIELD)) {
			ir_error(c, op->loc, "'%s' region must end with 'ave.yield'", ir_op_name(op->code));
			return false;
		}
	}
	return true;
}

static bool
check_symbols_in(Verifier *v, IrBlock *b, bool roles)
{
	IrMap seen;
	ir_map_init(&seen, v->c->al);
	bool ok = true;
	for (IrOp *o = b->first; o && ok; o = o->next) {
		if (!ir_op_has_trait(v->c, o, IR_TRAIT_SYMBOL) || (roles != (o->code == IR_OP_ROLE)))
			continue;
		IrStr s = ir_op_symbol(o);
		if (!s)
			continue;
		IrOp *prev = ir_map_get(&seen, ir_hash_ptr(s), s, NULL);
		if (prev) {
			IrDiag *d = ir_diag_begin(v->c, IR_SEV_ERROR, o->loc, "redefinition of symbol '@%s'", s);
			ir_diag_note(v->c, d, prev->loc, "previous definition is here");
			ir_diag_emit(v->c, d);
			ok = false;
		}
		ir_map_put(&seen, ir_hash_ptr(s), s, o, NULL);
	}
	ir_map_free(&seen);
	return ok;
}

static bool verify_block(Verifier *v, IrBlock *b);

static bool
check_types(Verifier *v, IrOp *op)
{
	IrCtx *c = v->c;
	for (int i = 0; i < op->nres; i++)
		if (!ir_check_type(c, op->loc, op->res[i].type))
			return false;
	for (int i = 0; i < op->ntype; i++)
		if (!ir_check_type(c, op->loc, op->type[i]))
			return false;
	for (int r = 0; r < op->nreg; r++)
		for (int a = 0; a < op->reg[r].block->narg; a++)
			if (!ir_check_type(c, op->reg[r].block->arg[a]->loc, op->reg[r].block->arg[a]->type))
				return false;
	for (int i = 0; i < op->nitem; i++)
		for (int p = 0; p < op->item[i].nparam; p++)
			if (!ir_check_type(c, op->item[i].param[p]->loc, op->item[i].param[p]->type))
				return false;
	return true;
}

static bool
verify_op(Verifier *v, IrOp *op)
{
	IrCtx *c = v->c;
	if (!ir_verify_op_shape(c, op) || !check_placement(v, op) || !check_visible(v, op) ||
	    !check_exprs(v, op) || !check_types(v, op))
		return false;
	bool iso = ir_op_has_trait(c, op, IR_TRAIT_ISOLATED);
	int saved = v->iso;
	/* Declaration parameters are visible to the op's own groups only. */
	if (iso)
		v->iso = v->level + 1;
	bool ok = true;
	for (int r = 0; r < op->nreg && ok; r++)
		ok = verify_block(v, op->reg[r].block);
	v->iso = saved;
	if (!ok)
		return false;
	if (!check_terminators(v, op))
		return false;
	if (op->code == IR_OP_KERNEL || op->code == IR_OP_MODULE)
		if (!check_symbols_in(v, op->reg[0].block, false))
			return false;
	if (op->code == IR_OP_WARP_SPECIALIZE && !check_symbols_in(v, op->reg[0].block, true))
		return false;
	const IrOpInfo *info = ir_opinfo(c, op->code);
	return info->verify(c, op);
}

static bool
verify_block(Verifier *v, IrBlock *b)
{
	bool ok = true;
	vis_push(v);
	for (int a = 0; a < b->narg; a++)
		vis_def(v, b->arg[a]);
	for (IrOp *op = b->first; op; op = op->next) {
		if (!verify_op(v, op)) {
			ok = false;
			/* Keep going at this level so that independent kernels are all checked, but
			 * do not define results of a broken op. */
			IrOp *owner = ir_block_parent_op(b);
			if (owner && owner->code != IR_OP_MODULE)
				break;
			continue;
		}
		for (int i = 0; i < op->nres; i++)
			vis_def(v, &op->res[i]);
	}
	vis_pop(v);
	return ok;
}

bool
ir_verify(IrModule *m)
{
	IrCtx *c = m->ctx;
	const char *saved = c->code;
	c->code = "verify";
	Verifier v = {.c = c, .m = m, .ok = true};
	ir_map_init(&v.depth, c->al);
	bool ok = check_symbols_in(&v, m->body, false);
	ok = verify_block(&v, m->body) && ok;
	ir_map_free(&v.depth);
	ir_vec_free(c->al, &v.undo, sizeof(IrValue *));
	ir_vec_free(c->al, &v.marks, sizeof(int));
	c->code = saved;
	return ok;
}
