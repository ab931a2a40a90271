/* interp_prep.c — turns a verified kernel into the interpreter's program: one IOp per op with
 * the slot of every operand and result resolved, nested blocks, and the scheduling points.
 * Ops the interpreter does not run are rejected here, before anything runs. */
#include <string.h>

#include "interp_impl.h"

typedef struct Prep {
	IrCtx *c;
	Prog *p;
	IrMap slots; /* IrValue* -> slot + 1 */
	IrVec vals;  /* IrValue* by slot */
	IrVec depth; /* uint8_t by slot */
	bool ok;
} Prep;

static int
new_slot(Prep *pp, IrValue *v, uint8_t depth)
{
	int s = pp->vals.len;
	ir_vec_push(pp->c->al, &pp->vals, &v, sizeof v);
	ir_vec_push(pp->c->al, &pp->depth, &depth, 1);
	ir_map_put(&pp->slots, ir_hash_ptr(v), v, (void *)(uintptr_t)(s + 1), NULL);
	return s;
}

static int
slot_of(Prep *pp, IrValue *v)
{
	return (int)(uintptr_t)ir_map_get(&pp->slots, ir_hash_ptr(v), v, NULL) - 1;
}

static void
reject(Prep *pp, IrLoc loc, const char *fmt, const char *what)
{
	if (!pp->ok)
		return;
	ir_error(pp->c, loc, fmt, what);
	pp->ok = false;
}

/* Every op the kernel holds must have a rule; `ready(...)` assertions are the checker's. */
static void
check_supported(Prep *pp, IrOp *op)
{
	bool point;
	if (!interp_op_supported(op->code, &point)) {
		reject(pp, op->loc, "'%s' is not supported by the interpreter yet",
		       ir_op_name(op->code));
		return;
	}
	IrGroup *gr = op->code == IR_OP_TAG_ASSERT ? ir_op_group(op, pp->c->kw.ready) : NULL;
	if (gr)
		reject(pp, gr->loc, "%s is not supported by the interpreter yet",
		       "'ave.tag.assert ready(...)'");
	gr = op->code == IR_OP_TAG_ASSERT ? ir_op_group(op, pp->c->kw.holds) : NULL;
	if (gr && gr->item[0].kind == IR_IT_SYMBOL)
		reject(pp, gr->loc, "%s is not supported by the interpreter yet",
		       "'holds(...)' on a symmetric buffer");
}

/* An MMA is a scheduling point when it reads shared memory. */
static bool
mma_reads_smem(IrOp *op)
{
	for (int i = 0; i < 2; i++) {
		const IrItem *it = &op->item[i];
		if (it->suffix)
			return true;
		IrValue *v = ir_item_value(op, it);
		if (v && v->type->kind == IR_TY_TILE && v->type->space == IR_SPACE_SMEM)
			return true;
	}
	return false;
}

static IBlock *
prep_block(Prep *pp, IrBlock *b, IOp *owner, uint8_t depth)
{
	Prog *p = pp->p;
	IBlock *ib = ir_arena_alloc(&p->arena, sizeof *ib);
	ib->owner = owner;
	ib->narg = b->narg;
	ib->arg = ir_arena_alloc(&p->arena, sizeof(int) * (size_t)(b->narg + 1));
	for (int i = 0; i < b->narg; i++)
		ib->arg[i] = new_slot(pp, b->arg[i], depth);
	for (IrOp *op = b->first; op; op = op->next)
		ib->nops++;
	ib->ops = ir_arena_alloc(&p->arena, sizeof(IOp) * (size_t)(ib->nops + 1));
	int k = 0;
	for (IrOp *op = b->first; op; op = op->next, k++) {
		IOp *o = &ib->ops[k];
		o->op = op;
		o->id = p->nops++;
		check_supported(pp, op);
		interp_op_supported(op->code, &o->point);
		if (op->code == IR_OP_MMA)
			o->point = mma_reads_smem(op);
		o->slot = ir_arena_alloc(&p->arena, sizeof(int) * (size_t)(op->nopnd + 1));
		for (int i = 0; i < op->nopnd; i++)
			o->slot[i] =
			    slot_of(pp, op->opnd[i].val); /* -1: a declaration's parameter */
		uint8_t inner = op->code == IR_OP_ROLE ? 1 : depth;
		for (int r = 0; r < op->nreg && r < 2; r++)
			o->reg[r] = prep_block(pp, op->reg[r].block, o, inner);
		o->res = pp->vals.len;
		for (int i = 0; i < op->nres; i++) {
			new_slot(pp, &op->res[i], depth);
			IrType *t = op->res[i].type;
			if (t->kind == IR_TY_RING)
				t = t->elem;
			if (t->kind == IR_TY_TILE && ir_type_numel(t) > INTERP_MAX_TILE)
				reject(pp, op->loc,
				       "'%s' is too large for the interpreter (at most 2^26 "
				       "elements per tile)",
				       ir_type_str(pp->c, t));
		}
	}
	return ib;
}

static void
index_ops(Prog *p, IBlock *b)
{
	for (int i = 0; i < b->nops; i++) {
		p->ops[b->ops[i].id] = &b->ops[i];
		for (int k = 0; k < 2; k++)
			if (b->ops[i].reg[k])
				index_ops(p, b->ops[i].reg[k]);
	}
}

Prog *
interp_prep(IrCtx *c, IrOp *kernel)
{
	Prog *p = ir_xalloc(c->al, sizeof *p);
	memset(p, 0, sizeof *p);
	p->c = c;
	p->kernel = kernel;
	ir_arena_init(&p->arena, c->al);
	Prep pp = {.c = c, .p = p, .ok = true};
	ir_map_init(&pp.slots, c->al);
	p->body = prep_block(&pp, kernel->reg[0].block, NULL, 0);
	p->nslots = pp.vals.len;
	p->val = ir_arena_alloc(&p->arena, sizeof(IrValue *) * (size_t)(p->nslots + 1));
	p->depth = ir_arena_alloc(&p->arena, (size_t)p->nslots + 1);
	if (p->nslots) {
		memcpy(p->val, pp.vals.data, sizeof(IrValue *) * (size_t)p->nslots);
		memcpy(p->depth, pp.depth.data, (size_t)p->nslots);
	}
	p->ops = ir_arena_alloc(&p->arena, sizeof(IOp *) * (size_t)(p->nops + 1));
	index_ops(p, p->body);
	ir_map_free(&pp.slots);
	ir_vec_free(c->al, &pp.vals, sizeof(IrValue *));
	ir_vec_free(c->al, &pp.depth, 1);
	if (!pp.ok) {
		interp_prog_free(p);
		return NULL;
	}
	return p;
}

void
interp_prog_free(Prog *p)
{
	if (!p)
		return;
	const IrAllocator *al = p->c->al;
	ir_arena_free(&p->arena);
	ir_xfree(al, p, sizeof *p);
}
