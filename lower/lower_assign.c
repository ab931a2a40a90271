/* lower_assign.c — layout assignment: every register tile of a kernel gets a distributed layout.
 *
 *   values that must (or had better) share a layout form classes: loop-carried values, if
 *   results, the operands and result of an elementwise op, an MMA's accumulator and result;
 *   a value whose type carries #ave.reg<kind> gets the target's layout of that kind; a class
 *   holding an MMA result takes the target's accumulator layout, else the layout of its first
 *   #ave.reg value; reductions, broadcasts and transposes derive layouts from their neighbours;
 *   the rest is blocked.
 *
 * The choice only affects speed: where two layouts meet, the lowering converts (by register
 * permutation where it can, else through shared memory). A kind the target cannot give a tile is
 * an error at the op that defines it. */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

typedef struct Assign {
	Lower *L;
	int *parent;
	const LowerLayout **cls; /* by root */
	IrValue **val;           /* by id: register tiles, else NULL */
	IrOp **role;             /* by id */
	int *esize;              /* by root */
	bool *chain_a;           /* by root: a member is an A operand of an MMA */
	const LowerLayout **pin; /* by id: the layout #ave.reg fixes, else NULL */
	IrOp **mma_acc, **mma_a, **mma_b; /* by root: the first planned product whose result, A or
					      B operand (from registers) is a member */
	IrValue **cls_pin;       /* by root: the pinned member whose layout the class took */
} Assign;

static int
find(Assign *a, int x)
{
	while (a->parent[x] != x) {
		a->parent[x] = a->parent[a->parent[x]];
		x = a->parent[x];
	}
	return x;
}

static void
unite(Assign *a, IrValue *x, IrValue *y)
{
	if (!x || !y || !a->val[x->id] || !a->val[y->id] || a->role[x->id] != a->role[y->id])
		return;
	if (x->type->rank != y->type->rank ||
	    memcmp(x->type->dims, y->type->dims, sizeof(int64_t) * (size_t)x->type->rank))
		return;
	int rx = find(a, (int)x->id), ry = find(a, (int)y->id);
	if (rx != ry)
		a->parent[rx] = ry;
}

static IrOp *
scope_role(IrOp *op)
{
	return op->code == IR_OP_ROLE ? op : ir_role_of(op);
}

static void
note_value(Assign *a, IrValue *v, IrOp *scope_op)
{
	if (!ir_type_is_reg_tile(v->type))
		return;
	a->val[v->id] = v;
	a->role[v->id] = scope_role(scope_op);
}

static bool
collect(IrOp *op, void *ud)
{
	Assign *a = ud;
	for (int i = 0; i < op->nres; i++)
		note_value(a, &op->res[i], op);
	for (int r = 0; r < op->nreg; r++)
		for (int i = 0; i < op->reg[r].block->narg; i++)
			note_value(a, op->reg[r].block->arg[i], op);
	return true;
}

static IrValue *
item_val(IrOp *op, int i)
{
	return i < op->nitem && op->item[i].kind == IR_IT_VALUE && !op->item[i].suffix
	           ? ir_item_value(op, &op->item[i])
	           : NULL;
}

static bool
unify(IrOp *op, void *ud)
{
	Assign *a = ud;
	IrCtx *c = a->L->c;
	if (ir_op_has_trait(c, op, IR_TRAIT_ELEMWISE) || op->code == IR_OP_TAG) {
		for (int i = 0; i < op->nitem; i++)
			unite(a, item_val(op, i), &op->res[0]);
	} else if (op->code == IR_OP_FOR) {
		IrBlock *b = op->reg[0].block;
		IrOp *y = b->last;
		for (int i = 0; i < op->nres; i++) {
			unite(a, item_val(op, 3 + i), b->arg[i + 1]);
			if (y && y->code == IR_OP_YIELD)
				unite(a, item_val(y, i), b->arg[i + 1]);
			unite(a, &op->res[i], b->arg[i + 1]);
		}
	} else if (op->code == IR_OP_IF) {
		for (int r = 0; r < op->nreg; r++) {
			IrOp *y = op->reg[r].block->last;
			for (int i = 0; y && y->code == IR_OP_YIELD && i < op->nres; i++)
				unite(a, item_val(y, i), &op->res[i]);
		}
	} else if (op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC) {
		unite(a, item_val(op, 2), &op->res[0]);
	} else if (op->code == IR_OP_MMA_WAIT) {
		unite(a, item_val(op, 0), &op->res[0]);
	} else if (op->code == IR_OP_SMEM_LOAD) {
		/* A tile regalloc kept in shared memory comes back in the layout it left in: each
		 * thread reads what it wrote, with no conversion. */
		IrValue *buf = ir_item_value(op, &op->item[0]);
		for (IrUse *u = ir_spill_buffer(c, buf) ? buf->uses : NULL; u; u = u->next)
			if (u->user->code == IR_OP_SMEM_STORE)
				unite(a, item_val(u->user, 0), &op->res[0]);
	}
	return true;
}

static bool
mark_chain(IrOp *op, void *ud)
{
	Assign *a = ud;
	if (op->code != IR_OP_MMA && op->code != IR_OP_MMA_ASYNC)
		return true;
	IrValue *x = item_val(op, 0);
	if (x && a->val[x->id])
		a->chain_a[find(a, (int)x->id)] = true;
	return true;
}

static bool
plan(IrOp *op, void *ud)
{
	Assign *a = ud;
	Lower *L = a->L;
	if (op->code != IR_OP_MMA && op->code != IR_OP_MMA_ASYNC)
		return true;
	LowerSmemLayout sa, sb;
	LowerMmaReq r;
	lower_mma_request(L, op, &r, &sa, &sb);
	int root = find(a, (int)op->res[0].id);
	r.chain = a->chain_a[root];
	LowerMmaPlan *p = ir_arena_alloc(&L->arena, sizeof *p);
	L->plans[op->id] = p;
	if (L->t->mma_plan && L->t->mma_plan(L, &r, p)) {
		L->has_plan[op->id] = 1;
		if (!a->cls[root])
			a->cls[root] = &p->acc;
	}
	return true;
}

static const LowerLayout *
dup(Lower *L, const LowerLayout *l)
{
	LowerLayout *x = ir_arena_alloc(&L->arena, sizeof *x);
	*x = *l;
	return x;
}

const LowerLayout *
lower_layout_dup(Lower *L, const LowerLayout *l)
{
	return dup(L, l);
}

typedef struct Derive {
	Assign *a;
	bool changed;
} Derive;

static bool
derive(IrOp *op, void *ud)
{
	Derive *dv = ud;
	Assign *a = dv->a;
	Lower *L = a->L;
	if (op->code != IR_OP_REDUCE && op->code != IR_OP_BCAST && op->code != IR_OP_TRANS)
		return true;
	IrValue *x = item_val(op, 0), *y = &op->res[0];
	if (!x || !a->val[x->id] || !a->val[y->id])
		return true;
	int rx = find(a, (int)x->id), ry = find(a, (int)y->id);
	/* From the layout a pinned neighbour really has, not its class's. */
	const LowerLayout *lx = a->pin[x->id] ? a->pin[x->id] : a->cls[rx];
	const LowerLayout *ly = a->pin[y->id] ? a->pin[y->id] : a->cls[ry];
	LowerLayout t;
	int64_t d = 0;
	IrGroup *g = ir_op_group(op, L->c->kw.dim);
	if (g)
		ir_expr_eval_const(g->item[0].e, &d);
	if (op->code == IR_OP_REDUCE && lx && !a->cls[ry]) {
		lower_layout_slice(lx, (int)d, &t, NULL);
		a->cls[ry] = dup(L, &t);
		dv->changed = true;
	} else if (op->code == IR_OP_BCAST && ly && !a->cls[rx]) {
		lower_layout_slice(ly, (int)d, &t, NULL);
		a->cls[rx] = dup(L, &t);
		dv->changed = true;
	} else if (op->code == IR_OP_TRANS && lx && !a->cls[ry]) {
		lower_layout_transpose(lx, &t);
		a->cls[ry] = dup(L, &t);
		dv->changed = true;
	} else if (op->code == IR_OP_TRANS && ly && !a->cls[rx]) {
		lower_layout_transpose(ly, &t);
		a->cls[rx] = dup(L, &t);
		dv->changed = true;
	}
	return true;
}

/* ---- #ave.reg: layouts the program fixes ---- */

static IrStr
pin_kind(IrCtx *c, const IrType *t)
{
	const IrAttr *l = t->layout;
	return l && l->kind == IR_ATTR_AVE && l->s == c->kw.reg ? l->kw : NULL;
}

static const char *
vname(const IrValue *v)
{
	return v->name ? v->name : "<unnamed>";
}

static IrLoc
vloc(const IrValue *v)
{
	return v->kind == IR_VAL_RESULT ? v->op->loc : v->loc;
}

/* "'ave.load' result", "'ave.for' region argument": what defines v, for messages. */
static void
vwhat(const IrValue *v, char *buf, size_t n)
{
	const IrOp *o = v->kind == IR_VAL_RESULT ? v->op
	                : v->kind == IR_VAL_ARG && v->block->parent ? v->block->parent->parent
	                                                            : NULL;
	if (!o)
		snprintf(buf, n, "value");
	else
		snprintf(buf, n, "'%s' %s", ir_op_name(o->code),
		         v->kind == IR_VAL_RESULT ? "result" : "region argument");
}

static bool
index_mmas(IrOp *op, void *ud)
{
	Assign *a = ud;
	if ((op->code != IR_OP_MMA && op->code != IR_OP_MMA_ASYNC) || !a->L->has_plan[op->id])
		return true;
	const LowerMmaPlan *p = a->L->plans[op->id];
	int r = find(a, (int)op->res[0].id);
	if (!a->mma_acc[r])
		a->mma_acc[r] = op;
	IrValue *x = item_val(op, 0), *y = item_val(op, 1);
	if (x && a->val[x->id] && p->a_reg && !a->mma_a[r = find(a, (int)x->id)])
		a->mma_a[r] = op;
	if (y && a->val[y->id] && p->b_reg && !a->mma_b[r = find(a, (int)y->id)])
		a->mma_b[r] = op;
	return true;
}

/* The target's layout of kind mma_acc / mma_a / mma_b for tile v: from the product that uses
 * v's class that way, else from the plan of a product of bf16 operands into f32 for which v is
 * that tile (the target chooses the instruction); NULL where the target has none. */
static const LowerLayout *
mma_pin(Assign *a, IrValue *v, IrStr kind)
{
	Lower *L = a->L;
	IrCtx *c = L->c;
	IrType *t = v->type;
	int root = find(a, (int)v->id);
	IrOp *op = kind == c->kw.mma_acc ? a->mma_acc[root]
	           : kind == c->kw.mma_a ? a->mma_a[root]
	                                 : a->mma_b[root];
	if (op) {
		const LowerMmaPlan *p = L->plans[op->id];
		return kind == c->kw.mma_acc ? &p->acc : kind == c->kw.mma_a ? &p->a : &p->b;
	}
	if (t->rank != 2 || !L->t->mma_plan) /* the verifier refuses MMA kinds on other ranks */
		return NULL;
	LowerMmaReq r;
	memset(&r, 0, sizeof r);
	r.ab = c->t_bf16;
	r.acc = c->t_f32;
	lower_mma_group(L, a->role[v->id], &r);
	if (kind == c->kw.mma_acc) {
		r.m = t->dims[0], r.n = t->dims[1], r.k = 16;
		r.chain = a->chain_a[root];
	} else if (kind == c->kw.mma_a) {
		r.m = t->dims[0], r.k = t->dims[1], r.n = 64;
		r.chain = true; /* warps along rows, as for an accumulator that feeds A */
	} else {
		r.k = t->dims[0], r.n = t->dims[1], r.m = 16; /* warps along N */
	}
	LowerMmaPlan *p = ir_arena_alloc(&L->arena, sizeof *p);
	if (!L->t->mma_plan(L, &r, p))
		return NULL;
	if (kind == c->kw.mma_acc)
		return &p->acc;
	if (kind == c->kw.mma_a)
		return p->a_reg ? &p->a : NULL;
	return p->b_reg ? &p->b : NULL;
}

/* Instantiates the #ave.reg layout of every register tile that has one (a.pin). */
static bool
pin_layouts(Assign *a, uint32_t n)
{
	Lower *L = a->L;
	IrCtx *c = L->c;
	for (uint32_t i = 0; i < n; i++) {
		IrValue *v = a->val[i];
		IrStr kind = v ? pin_kind(c, v->type) : NULL;
		if (!kind)
			continue;
		IrType *t = v->type;
		int root = find(a, (int)i);
		const LowerLayout *l = NULL;
		char why[128] = "";
		if (kind == c->kw.blocked) {
			LowerScope s;
			lower_scope_shape(L, a->role[i], &s);
			LowerLayout b;
			if (lower_layout_blocked(&b, t->rank, t->dims, a->esize[root], s.lane_bits,
			                         s.warp_bits))
				l = dup(L, &b);
			else
				snprintf(why, sizeof why,
				         ": every dimension must be a power of two and a thread may "
				         "hold at most %d elements",
				         LOWER_MAX_REGS);
		} else {
			l = mma_pin(a, v, kind);
			if (!l && kind == c->kw.mma_acc)
				snprintf(why, sizeof why, ": no MMA instruction of the target has an "
				                          "accumulator that tiles it");
			else if (!l)
				snprintf(why, sizeof why,
				         ": no MMA instruction of the target reads %s operand of that "
				         "shape from registers",
				         kind == c->kw.mma_a ? "an A" : "a B");
		}
		if (!l) {
			char what[64];
			vwhat(v, what, sizeof what);
			return lower_error(L, vloc(v),
			                   "%s '%%%s' asks for '#ave.reg<%s>', which target '%s' "
			                   "cannot give '%s'%s",
			                   what, vname(v), kind, L->t->info->name, ir_type_str(c, t), why);
		}
		a->pin[i] = l;
	}
	return true;
}

/* A register tile used by an op of another group than the one that defined it. */
static bool
check_scopes(IrOp *op, void *ud)
{
	Assign *a = ud;
	IrOp *r = scope_role(op);
	for (int i = 0; i < op->nopnd; i++) {
		IrValue *v = ir_op_value(op, i);
		if (a->val[v->id] && a->role[v->id] != r && op->code != IR_OP_ROLE) {
			IrOp *from = a->role[v->id];
			return lower_error(
			    a->L, op->loc,
			    "register tile '%%%s' is defined %s%s%s and used "
			    "%s%s%s; a register tile lives in the threads of one group",
			    v->name ? v->name : "<unnamed>", from ? "in role '@" : "outside roles",
			    from ? from->item[0].s : "", from ? "'" : "",
			    r ? "in role '@" : "outside roles", r ? r->item[0].s : "",
			    r ? "'" : "");
		}
	}
	return true;
}

/* ---- remarks: what a pinned layout costs ---- */

static const char *
kind_name(LowerLayoutKind k)
{
	static const char *const names[LOWER_LAYOUT_KINDS] = {
	    [LOWER_BLOCKED] = "blocked", [LOWER_MMA_ACC] = "mma_acc", [LOWER_MMA_A] = "mma_a",
	    [LOWER_MMA_B] = "mma_b",     [LOWER_SLICED] = "sliced",   [LOWER_OTHER] = "other"};
	return k >= 0 && k < LOWER_LAYOUT_KINDS ? names[k] : "other";
}

/* How v's layout is named in remarks: its #ave.reg, the one its class took from a pinned
 * member, or the kind the compiler chose. */
static void
lay_desc(Assign *a, IrValue *v, char *buf, size_t n)
{
	IrCtx *c = a->L->c;
	IrStr k = pin_kind(c, v->type);
	IrValue *p = a->cls_pin[find(a, (int)v->id)];
	if (k)
		snprintf(buf, n, "'#ave.reg<%s>'", k);
	else if (p)
		snprintf(buf, n, "the '#ave.reg<%s>' of '%%%s'", pin_kind(c, p->type), vname(p));
	else
		snprintf(buf, n, "%s", kind_name(a->L->lay[v->id]->kind));
}

static const char *
how(Lower *L, const LowerLayout *from, const LowerLayout *to)
{
	int *perm = ir_arena_alloc(&L->arena, sizeof(int) * (size_t)lower_layout_nregs(to));
	return lower_layout_regperm(from, to, perm) ? "a register permutation"
	                                            : "through shared memory";
}

/* A remark at op when the layout `v` has (`have`) is not the one op works in (`need`, described
 * by `needs`) and a #ave.reg is involved: the lowering converts there. */
static void
conv_remark(Assign *a, IrOp *op, const char *role, IrValue *v, const LowerLayout *have,
            const LowerLayout *need, const char *needs, bool to_need)
{
	Lower *L = a->L;
	if (lower_layout_equal(have, need))
		return;
	char d[128];
	lay_desc(a, v, d, sizeof d);
	ir_remark(L->c, op->loc, "'%s' converts %s '%%%s' from %s to %s on target '%s' (%s)",
	          ir_op_name(op->code), role, vname(v), to_need ? d : needs, to_need ? needs : d,
	          L->t->info->name, to_need ? how(L, have, need) : how(L, need, have));
}

static bool
pinned(Assign *a, IrValue *v)
{
	return v && a->val[v->id] && a->pin[v->id];
}

/* v is pinned, or its class took the layout of a pinned member. */
static bool
touched(Assign *a, IrValue *v)
{
	return pinned(a, v) || (v && a->val[v->id] && a->cls_pin[find(a, (int)v->id)]);
}

static bool
report(IrOp *op, void *ud)
{
	Assign *a = ud;
	Lower *L = a->L;
	const LowerLayout **lay = L->lay;
	char need[192];
	IrValue *x = item_val(op, 0), *y = op->nres ? &op->res[0] : NULL;
	if ((op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC) && L->has_plan[op->id]) {
		const LowerMmaPlan *p = L->plans[op->id];
		IrValue *acc = item_val(op, 2);
		snprintf(need, sizeof need, "the instruction's accumulator layout (%s)",
		         kind_name(p->acc.kind));
		if (pinned(a, acc))
			conv_remark(a, op, "accumulator", acc, lay[acc->id], &p->acc, need, true);
		if (op->code == IR_OP_MMA && pinned(a, y))
			conv_remark(a, op, "its result", y, lay[y->id], &p->acc, need, false);
		for (int i = 0; i < 2; i++) {
			IrValue *v = item_val(op, i);
			bool reg = i ? p->b_reg : p->a_reg;
			const LowerLayout *w = i ? &p->b : &p->a;
			if (!touched(a, v))
				continue;
			snprintf(need, sizeof need, "the instruction's %s layout (%s)", i ? "B" : "A",
			         kind_name(w->kind));
			if (reg)
				conv_remark(a, op, i ? "B operand" : "A operand", v, lay[v->id], w,
				            need, true);
			else
				ir_remark(L->c, op->loc,
				          "'%s' stages %s operand '%%%s' in shared memory for the "
				          "instruction on target '%s', which reads it from there",
				          ir_op_name(op->code), i ? "B" : "A", vname(v), L->t->info->name);
		}
	} else if (op->code == IR_OP_MMA_WAIT && x && x->kind == IR_VAL_RESULT &&
	           L->has_plan[x->op->id] && pinned(a, y)) {
		const LowerMmaPlan *p = L->plans[x->op->id];
		snprintf(need, sizeof need, "the instruction's accumulator layout (%s)",
		         kind_name(p->acc.kind));
		conv_remark(a, op, "its result", y, lay[y->id], &p->acc, need, false);
	} else if ((op->code == IR_OP_REDUCE || op->code == IR_OP_BCAST ||
	            op->code == IR_OP_TRANS) &&
	           x && a->val[x->id] && y && a->val[y->id] && (touched(a, x) || touched(a, y))) {
		LowerLayout t;
		int64_t d = 0;
		IrGroup *g = ir_op_group(op, L->c->kw.dim);
		if (g)
			ir_expr_eval_const(g->item[0].e, &d);
		if (op->code == IR_OP_BCAST) {
			lower_layout_slice(lay[y->id], (int)d, &t, NULL);
			snprintf(need, sizeof need, "the slice of its result's layout");
			conv_remark(a, op, "operand", x, lay[x->id], &t, need, true);
		} else {
			if (op->code == IR_OP_REDUCE)
				lower_layout_slice(lay[x->id], (int)d, &t, NULL);
			else
				lower_layout_transpose(lay[x->id], &t);
			snprintf(need, sizeof need, "the %s of its operand's layout",
			         op->code == IR_OP_REDUCE ? "slice" : "transpose");
			conv_remark(a, op, "its result", y, lay[y->id], &t, need, false);
		}
	} else if (ir_op_has_trait(L->c, op, IR_TRAIT_ELEMWISE) && y && a->val[y->id]) {
		for (int i = 0; i < op->nitem; i++) {
			IrValue *v = item_val(op, i);
			if (!v || !a->val[v->id] || (!touched(a, v) && !touched(a, y)))
				continue;
			char d[128];
			lay_desc(a, y, d, sizeof d);
			snprintf(need, sizeof need, "its result's layout (%s)", d);
			conv_remark(a, op, "operand", v, lay[v->id], lay[y->id], need, true);
		}
	}
	return true;
}

/* The pending tile of a planned ave.mma.async stays in the instruction's accumulator registers
 * until its ave.mma.wait, which converts it to the wait's layout (the same type, so the same
 * #ave.reg). */
static bool
pending(IrOp *op, void *ud)
{
	Lower *L = ((Assign *)ud)->L;
	if (op->code == IR_OP_MMA_ASYNC && L->has_plan[op->id])
		L->lay[op->res[0].id] = &L->plans[op->id]->acc;
	return true;
}

/* A remark per register tile whose layout #ave.reg fixes: the bases it got. */
static void
pin_remarks(Assign *a, uint32_t n)
{
	Lower *L = a->L;
	for (uint32_t i = 0; i < n; i++) {
		IrValue *v = a->val[i];
		if (!v || !a->pin[i] || L->lay[i] != a->pin[i])
			continue; /* not pinned, or pending (see `pending`) */
		char what[64], *buf = NULL;
		size_t len = 0;
		vwhat(v, what, sizeof what);
		FILE *f = open_memstream(&buf, &len);
		if (!f)
			ir_unreachable("open_memstream failed");
		lower_layout_print(a->pin[i], f);
		fclose(f);
		ir_remark(L->c, vloc(v), "%s '%%%s' has layout '#ave.reg<%s>' on target '%s': %s",
		          what, vname(v), pin_kind(L->c, v->type), L->t->info->name, buf);
		free(buf);
	}
}

bool
lower_assign_layouts(Lower *L)
{
	uint32_t n = L->nvals + 1;
	Assign a = {L, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	a.parent = ir_arena_alloc(&L->arena, sizeof(int) * n);
	a.cls = ir_arena_alloc(&L->arena, sizeof(LowerLayout *) * n);
	a.val = ir_arena_alloc(&L->arena, sizeof(IrValue *) * n);
	a.role = ir_arena_alloc(&L->arena, sizeof(IrOp *) * n);
	a.esize = ir_arena_alloc(&L->arena, sizeof(int) * n);
	a.chain_a = ir_arena_alloc(&L->arena, n);
	a.pin = ir_arena_alloc(&L->arena, sizeof(LowerLayout *) * n);
	a.mma_acc = ir_arena_alloc(&L->arena, sizeof(IrOp *) * n);
	a.mma_a = ir_arena_alloc(&L->arena, sizeof(IrOp *) * n);
	a.mma_b = ir_arena_alloc(&L->arena, sizeof(IrOp *) * n);
	a.cls_pin = ir_arena_alloc(&L->arena, sizeof(IrValue *) * n);
	for (uint32_t i = 0; i < n; i++)
		a.parent[i] = (int)i;
	ir_walk_op(L->kernel, collect, &a);
	if (!ir_walk_op(L->kernel, check_scopes, &a))
		return false;
	ir_walk_op(L->kernel, unify, &a);
	for (uint32_t i = 0; i < n; i++)
		if (a.val[i]) {
			int r = find(&a, (int)i), e = lower_elem_bytes(a.val[i]->type->elem);
			if (e > a.esize[r])
				a.esize[r] = e;
		}
	ir_walk_op(L->kernel, mark_chain, &a);
	ir_walk_op(L->kernel, plan, &a);
	ir_walk_op(L->kernel, index_mmas, &a);
	if (!pin_layouts(&a, n))
		return false;
	/* A class without an MMA result takes the layout of its first pinned member. */
	for (uint32_t i = 0; i < n; i++)
		if (a.pin[i] && !a.cls[find(&a, (int)i)]) {
			a.cls[find(&a, (int)i)] = a.pin[i];
			a.cls_pin[find(&a, (int)i)] = a.val[i];
		}
	for (Derive dv = {&a, true}; dv.changed;) {
		dv.changed = false;
		ir_walk_op(L->kernel, derive, &dv);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (!a.val[i])
			continue;
		int r = find(&a, (int)i);
		if (!a.cls[r]) {
			LowerScope s;
			lower_scope_shape(L, a.role[i], &s);
			IrType *t = a.val[i]->type;
			LowerLayout l;
			if (!lower_layout_blocked(&l, t->rank, t->dims, a.esize[r], s.lane_bits,
			                          s.warp_bits)) {
				IrValue *v = a.val[i];
				return lower_error(
				    L, v->kind == IR_VAL_RESULT ? v->op->loc : v->loc,
				    "register tile '%s' cannot be distributed over %d "
				    "threads on target '%s': every dimension must be a power of "
				    "two and a thread may hold at most %d elements",
				    ir_type_str(L->c, t), s.nthreads, L->t->info->name, LOWER_MAX_REGS);
			}
			a.cls[r] = dup(L, &l);
		}
		L->lay[i] = a.pin[i] ? a.pin[i] : a.cls[r];
	}
	ir_walk_op(L->kernel, pending, &a);
	if (L->layouts_only)
		return true;
	pin_remarks(&a, n);
	ir_walk_op(L->kernel, report, &a);
	return true;
}
