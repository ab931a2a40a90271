/* cse.c — common subexpression elimination over pure ops with no regions. A scoped table holds
 * the ops available at each point: an op defined in a block is available in the rest of that
 * block and in the regions nested below it, as dominance in structured regions dictates. */
#include <string.h>

#include "passes.h"

typedef struct Cse {
	IrModule *m;
	IrCtx *c;
	IrMap table;  /* hash -> IrOp* chain head is not needed: we keep a list per hash */
	IrVec undo;   /* IrOp* inserted, in order */
	IrVec marks;
	bool changed;
} Cse;

static uint64_t
hash_item(const IrOp *op, const IrItem *it, uint64_t h)
{
	h = ir_hash_mix(h, it->kind);
	if (it->kind == IR_IT_VALUE)
		h = ir_hash_mix(h, (uint64_t)(uintptr_t)ir_op_value(op, it->opnd));
	h = ir_hash_mix(h, (uint64_t)(uintptr_t)it->s);
	h = ir_hash_mix(h, (uint64_t)it->i);
	h = ir_hash_mix(h, (uint64_t)it->ncoord);
	return h;
}

static uint64_t
hash_op(const IrOp *op)
{
	uint64_t h = ir_hash_mix(op->code, (uint64_t)(uintptr_t)op->mode);
	for (int i = 0; i < op->nopnd; i++)
		h = ir_hash_mix(h, (uint64_t)(uintptr_t)op->opnd[i].val);
	for (int i = 0; i < op->nitem; i++)
		h = hash_item(op, &op->item[i], h);
	for (int i = 0; i < op->nres; i++)
		h = ir_hash_mix(h, (uint64_t)(uintptr_t)op->res[i].type);
	return h;
}

static bool
expr_same(const IrOp *a, const IrExpr *x, const IrOp *b, const IrExpr *y)
{
	if (!x || !y)
		return x == y;
	if (x->kind != y->kind)
		return false;
	if (x->kind == IR_EX_CONST)
		return x->c == y->c;
	if (x->kind == IR_EX_VAL)
		return ir_op_value(a, x->opnd) == ir_op_value(b, y->opnd);
	return expr_same(a, x->l, b, y->l) && expr_same(a, x->r, b, y->r);
}

static bool
item_same(const IrOp *a, const IrItem *x, const IrOp *b, const IrItem *y)
{
	if (x->kind != y->kind || x->s != y->s || x->suffix != y->suffix || x->ncoord != y->ncoord ||
	    x->i != y->i || x->type != y->type || x->nparam || y->nparam)
		return false;
	if (x->kind == IR_IT_FLOAT && memcmp(&x->f, &y->f, sizeof x->f))
		return false;
	if (x->kind == IR_IT_VALUE && ir_op_value(a, x->opnd) != ir_op_value(b, y->opnd))
		return false;
	for (int i = 0; i < x->ncoord; i++)
		if (x->coord[i].len != y->coord[i].len || !expr_same(a, x->coord[i].e, b, y->coord[i].e))
			return false;
	return expr_same(a, x->e, b, y->e);
}

static bool
op_same(const IrOp *a, const IrOp *b)
{
	if (a->code != b->code || a->mode != b->mode || a->nitem != b->nitem ||
	    a->ngroup != b->ngroup || a->nattr != b->nattr || a->nres != b->nres)
		return false;
	for (int i = 0; i < a->nres; i++)
		if (a->res[i].type != b->res[i].type)
			return false;
	for (int i = 0; i < a->nitem; i++)
		if (!item_same(a, &a->item[i], b, &b->item[i]))
			return false;
	for (int g = 0; g < a->ngroup; g++) {
		if (a->group[g].kw != b->group[g].kw || a->group[g].nitem != b->group[g].nitem)
			return false;
		for (int i = 0; i < a->group[g].nitem; i++)
			if (!item_same(a, &a->group[g].item[i], b, &b->group[g].item[i]))
				return false;
	}
	for (int i = 0; i < a->nattr; i++)
		if (a->attr[i].name != b->attr[i].name || a->attr[i].attr != b->attr[i].attr)
			return false;
	return true;
}

/* The table maps a hash to a chain of ops threaded through the undo vector indices. */
typedef struct Entry {
	IrOp *op;
	struct Entry *next;
} Entry;

static void cse_block(Cse *k, IrBlock *b);

static void
scope_push(Cse *k)
{
	int mark = k->undo.len;
	ir_vec_push(k->c->al, &k->marks, &mark, sizeof mark);
}

static void
scope_pop(Cse *k)
{
	int mark = IR_VEC_AT(k->marks, int, --k->marks.len);
	while (k->undo.len > mark) {
		Entry *e = IR_VEC_AT(k->undo, Entry *, --k->undo.len);
		uint64_t h = hash_op(e->op);
		if (e->next)
			ir_map_put(&k->table, h, (void *)(uintptr_t)h, e->next, NULL);
		else
			ir_map_del(&k->table, h, (void *)(uintptr_t)h, NULL);
	}
}

static void
cse_block(Cse *k, IrBlock *b)
{
	scope_push(k);
	IrOp *next;
	for (IrOp *op = b->first; op; op = next) {
		next = op->next;
		for (int r = 0; r < op->nreg; r++)
			cse_block(k, op->reg[r].block);
		if (!ir_op_has_trait(k->c, op, IR_TRAIT_PURE) || op->nreg || !op->nres)
			continue;
		/* The replica id differs per replica only inside a role: same role, same value. */
		uint64_t h = hash_op(op);
		Entry *head = ir_map_get(&k->table, h, (void *)(uintptr_t)h, NULL);
		Entry *hit = NULL;
		for (Entry *e = head; e && !hit; e = e->next)
			if (op_same(e->op, op))
				hit = e;
		if (hit) {
			for (int i = 0; i < op->nres; i++)
				ir_replace_all_uses(&op->res[i], &hit->op->res[i]);
			ir_op_erase(op);
			k->changed = true;
			continue;
		}
		Entry *e = ir_arena_alloc(&k->m->arena, sizeof *e);
		e->op = op;
		e->next = head;
		ir_map_put(&k->table, h, (void *)(uintptr_t)h, e, NULL);
		ir_vec_push(k->c->al, &k->undo, &e, sizeof e);
	}
	scope_pop(k);
}

bool
pass_cse(IrModule *m, const IrPassOpts *o)
{
	(void)o;
	Cse k = {.m = m, .c = m->ctx};
	ir_map_init(&k.table, m->ctx->al);
	cse_block(&k, m->body);
	ir_map_free(&k.table);
	ir_vec_free(m->ctx->al, &k.undo, sizeof(Entry *));
	ir_vec_free(m->ctx->al, &k.marks, sizeof(int));
	return true;
}
