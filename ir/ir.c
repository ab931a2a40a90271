/* ir.c — modules, op construction, the intrusive op lists, use lists, cloning and walks. */
#include <string.h>

#include "ir.h"

IrModule *
ir_module_new(IrCtx *c, const char *name)
{
	IrModule *m = ir_xalloc(c->al, sizeof *m);
	memset(m, 0, sizeof *m);
	m->ctx = c;
	ir_arena_init(&m->arena, c->al);
	m->body = ir_arena_alloc(&m->arena, sizeof *m->body);
	m->name = ir_intern_cstr(c, name ? name : "<module>");
	return m;
}

void
ir_module_free(IrModule *m)
{
	if (!m)
		return;
	const IrAllocator *al = m->ctx->al;
	ir_vec_free(al, &m->aliases, sizeof(IrAlias));
	ir_vec_free(al, &m->proved, sizeof(uint64_t));
	ir_arena_free(&m->arena);
	ir_xfree(al, m, sizeof *m);
}

/* ---- op state ---- */

void
ir_state_init(IrOpState *st, IrOpcode code, IrLoc loc)
{
	memset(st, 0, sizeof *st);
	st->code = code;
	st->loc = loc;
}

void
ir_state_free(IrModule *m, IrOpState *st)
{
	const IrAllocator *al = m->ctx->al;
	ir_vec_free(al, &st->items, sizeof(IrItem));
	ir_vec_free(al, &st->groups, sizeof(IrGroup));
	ir_vec_free(al, &st->attrs, sizeof(IrNamedAttr));
	ir_vec_free(al, &st->restypes, sizeof(IrType *));
	ir_vec_free(al, &st->resnames, sizeof(IrStr));
	ir_vec_free(al, &st->types, sizeof(IrType *));
	ir_vec_free(al, &st->regions, sizeof(IrRegion *));
}

IrItem *
ir_state_item(IrModule *m, IrOpState *st, IrItemKind k)
{
	IrItem *it = ir_vec_push(m->ctx->al, &st->items, NULL, sizeof(IrItem));
	it->kind = k;
	it->opnd = -1;
	it->loc = st->loc;
	return it;
}

IrItem *
ir_state_value(IrModule *m, IrOpState *st, IrValue *v)
{
	IrItem *it = ir_state_item(m, st, IR_IT_VALUE);
	it->pv = v;
	return it;
}

IrGroup *
ir_state_group(IrModule *m, IrOpState *st, IrStr kw)
{
	IrGroup *g = ir_vec_push(m->ctx->al, &st->groups, NULL, sizeof(IrGroup));
	g->kw = kw;
	g->loc = st->loc;
	return g;
}

IrItem *
ir_group_add(IrModule *m, IrGroup *g, IrItemKind k)
{
	/* Groups are short: grow by copying into the arena (the old array is simply dropped). */
	IrItem *items = ir_arena_alloc(&m->arena, sizeof(IrItem) * (size_t)(g->nitem + 1));
	if (g->nitem)
		memcpy(items, g->item, sizeof(IrItem) * (size_t)g->nitem);
	g->item = items;
	IrItem *it = &g->item[g->nitem++];
	it->kind = k;
	it->opnd = -1;
	it->loc = g->loc;
	return it;
}

IrItem *
ir_group_add_expr(IrModule *m, IrGroup *g, IrExpr *e)
{
	IrItem *it = ir_group_add(m, g, IR_IT_EXPR);
	it->e = e;
	return it;
}

void
ir_state_attr(IrModule *m, IrOpState *st, IrStr name, IrAttr *a)
{
	IrNamedAttr na = {name, a, st->loc};
	ir_vec_push(m->ctx->al, &st->attrs, &na, sizeof na);
}

void
ir_state_result(IrModule *m, IrOpState *st, IrType *t, IrStr name)
{
	ir_vec_push(m->ctx->al, &st->restypes, &t, sizeof t);
	ir_vec_push(m->ctx->al, &st->resnames, &name, sizeof name);
}

void
ir_state_type(IrModule *m, IrOpState *st, IrType *t)
{
	ir_vec_push(m->ctx->al, &st->types, &t, sizeof t);
}

void
ir_state_region(IrModule *m, IrOpState *st, IrRegion *r)
{
	ir_vec_push(m->ctx->al, &st->regions, &r, sizeof r);
}

/* ---- building: collect every value mentioned into the operand list ---- */

/* The distinct values an op mentions, in order of first mention. Ops mention few values, so a
 * linear scan beats hashing; a map takes over for the rare op with many. */
typedef struct Collect {
	IrModule *m;
	IrVec vals; /* IrValue* */
	IrMap index; /* value -> index + 1, once vals is long */
	bool hashed;
} Collect;

enum { COLLECT_LINEAR = 16 };

static int
collect_value(Collect *c, IrValue *v)
{
	IrValue **vals = c->vals.data;
	if (!c->hashed) {
		for (int i = 0; i < c->vals.len; i++)
			if (vals[i] == v)
				return i;
		if (c->vals.len == COLLECT_LINEAR) {
			ir_map_init(&c->index, c->m->ctx->al);
			for (int i = 0; i < c->vals.len; i++)
				ir_map_put(&c->index, ir_hash_ptr(vals[i]), vals[i], (void *)(uintptr_t)(i + 1),
					   NULL);
			c->hashed = true;
		}
	}
	if (c->hashed) {
		uintptr_t i = (uintptr_t)ir_map_get(&c->index, ir_hash_ptr(v), v, NULL);
		if (i)
			return (int)i - 1;
	}
	ir_vec_push(c->m->ctx->al, &c->vals, &v, sizeof v);
	if (c->hashed)
		ir_map_put(&c->index, ir_hash_ptr(v), v, (void *)(uintptr_t)c->vals.len, NULL);
	return c->vals.len - 1;
}

static void
collect_free(Collect *c)
{
	if (c->hashed)
		ir_map_free(&c->index);
	ir_vec_free(c->m->ctx->al, &c->vals, sizeof(IrValue *));
}

static void
collect_expr(Collect *c, IrExpr *e)
{
	if (!e)
		return;
	if (e->kind == IR_EX_VAL && e->pv) {
		e->opnd = collect_value(c, e->pv);
		e->pv = NULL;
	}
	collect_expr(c, e->l);
	collect_expr(c, e->r);
}

static void
collect_item(Collect *c, IrItem *it)
{
	if (it->kind == IR_IT_VALUE && it->pv) {
		it->opnd = collect_value(c, it->pv);
		it->pv = NULL;
	}
	for (int i = 0; i < it->ncoord; i++)
		collect_expr(c, it->coord[i].e);
	collect_expr(c, it->e);
}

static void
link_use(IrUse *u, IrValue *v, IrOp *user)
{
	u->val = v;
	u->user = user;
	u->next = v->uses;
	if (v->uses)
		v->uses->prev = &u->next;
	u->prev = &v->uses;
	v->uses = u;
}

static void
unlink_use(IrUse *u)
{
	if (!u->val)
		return;
	*u->prev = u->next;
	if (u->next)
		u->next->prev = u->prev;
	u->val = NULL;
	u->next = NULL;
	u->prev = NULL;
}

static void
bind_expr(const IrOp *op, IrExpr *e)
{
	if (!e)
		return;
	if (e->kind == IR_EX_VAL && !e->pv)
		e->pv = op->opnd[e->opnd].val;
	bind_expr(op, e->l);
	bind_expr(op, e->r);
}

static void
bind_item(const IrOp *op, IrItem *it)
{
	if (it->kind == IR_IT_VALUE && !it->pv)
		it->pv = op->opnd[it->opnd].val;
	for (int i = 0; i < it->ncoord; i++)
		bind_expr(op, it->coord[i].e);
	bind_expr(op, it->e);
}

void
ir_op_refresh_operands(IrModule *m, IrOp *op)
{
	for (int i = 0; i < op->nitem; i++)
		bind_item(op, &op->item[i]);
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			bind_item(op, &op->group[g].item[i]);
	for (int i = 0; i < op->nopnd; i++)
		unlink_use(&op->opnd[i]);
	Collect c = {.m = m};
	for (int i = 0; i < op->nitem; i++)
		collect_item(&c, &op->item[i]);
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			collect_item(&c, &op->group[g].item[i]);
	op->nopnd = c.vals.len;
	op->opnd = ir_arena_alloc(&m->arena, sizeof(IrUse) * (size_t)op->nopnd);
	for (int i = 0; i < op->nopnd; i++)
		link_use(&op->opnd[i], IR_VEC_AT(c.vals, IrValue *, i), op);
	collect_free(&c);
}

/* Gives the items their own coordinate and parameter arrays in the module's arena. */
static void
own_items(IrModule *m, IrItem *it, int n)
{
	for (int i = 0; i < n; i++) {
		if (it[i].ncoord) {
			IrCoord *c = ir_arena_alloc_raw(&m->arena, sizeof(IrCoord) * (size_t)it[i].ncoord);
			memcpy(c, it[i].coord, sizeof(IrCoord) * (size_t)it[i].ncoord);
			it[i].coord = c;
		}
		if (it[i].nparam) {
			IrValue **p = ir_arena_alloc_raw(&m->arena, sizeof(IrValue *) * (size_t)it[i].nparam);
			memcpy(p, it[i].param, sizeof(IrValue *) * (size_t)it[i].nparam);
			it[i].param = p;
		}
	}
}

IrOp *
ir_op_build(IrModule *m, IrOpState *st)
{
	IrOp *op = ir_arena_alloc(&m->arena, sizeof *op);
	op->code = st->code;
	op->loc = st->loc;
	op->mode = st->mode;

	op->nitem = st->items.len;
	op->item = ir_arena_alloc_raw(&m->arena, sizeof(IrItem) * (size_t)op->nitem);
	if (op->nitem)
		memcpy(op->item, st->items.data, sizeof(IrItem) * (size_t)op->nitem);
	own_items(m, op->item, op->nitem);
	op->ngroup = st->groups.len;
	op->group = ir_arena_alloc_raw(&m->arena, sizeof(IrGroup) * (size_t)op->ngroup);
	if (op->ngroup)
		memcpy(op->group, st->groups.data, sizeof(IrGroup) * (size_t)op->ngroup);
	for (int g = 0; g < op->ngroup; g++) {
		IrGroup *gr = &op->group[g];
		IrItem *items = ir_arena_alloc_raw(&m->arena, sizeof(IrItem) * (size_t)gr->nitem);
		if (gr->nitem)
			memcpy(items, gr->item, sizeof(IrItem) * (size_t)gr->nitem);
		gr->item = items;
		own_items(m, items, gr->nitem);
	}
	op->nattr = st->attrs.len;
	op->attr = ir_arena_alloc_raw(&m->arena, sizeof(IrNamedAttr) * (size_t)op->nattr);
	if (op->nattr)
		memcpy(op->attr, st->attrs.data, sizeof(IrNamedAttr) * (size_t)op->nattr);
	op->ntype = st->types.len;
	op->type = ir_arena_alloc_raw(&m->arena, sizeof(IrType *) * (size_t)op->ntype);
	if (op->ntype)
		memcpy(op->type, st->types.data, sizeof(IrType *) * (size_t)op->ntype);

	Collect c = {.m = m};
	for (int i = 0; i < op->nitem; i++)
		collect_item(&c, &op->item[i]);
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			collect_item(&c, &op->group[g].item[i]);
	op->nopnd = c.vals.len;
	op->opnd = ir_arena_alloc(&m->arena, sizeof(IrUse) * (size_t)op->nopnd);
	for (int i = 0; i < op->nopnd; i++)
		link_use(&op->opnd[i], IR_VEC_AT(c.vals, IrValue *, i), op);
	collect_free(&c);

	/* Parameters of a declaration belong to the op. */
	for (int i = 0; i < op->nitem; i++)
		for (int p = 0; p < op->item[i].nparam; p++)
			op->item[i].param[p]->op = op;

	op->nres = st->restypes.len;
	op->res = ir_arena_alloc(&m->arena, sizeof(IrValue) * (size_t)op->nres);
	for (int i = 0; i < op->nres; i++) {
		IrValue *v = &op->res[i];
		v->kind = IR_VAL_RESULT;
		v->index = i;
		v->type = IR_VEC_AT(st->restypes, IrType *, i);
		v->name = IR_VEC_AT(st->resnames, IrStr, i);
		v->op = op;
		v->loc = op->loc;
	}

	op->nreg = st->regions.len;
	op->reg = ir_arena_alloc(&m->arena, sizeof(IrRegion) * (size_t)op->nreg);
	for (int i = 0; i < op->nreg; i++) {
		IrRegion *r = IR_VEC_AT(st->regions, IrRegion *, i);
		op->reg[i].parent = op;
		op->reg[i].block = r->block;
		r->block->parent = &op->reg[i];
	}
	ir_state_free(m, st);
	return op;
}

IrRegion *
ir_region_new(IrModule *m)
{
	IrRegion *r = ir_arena_alloc(&m->arena, sizeof *r);
	r->block = ir_arena_alloc(&m->arena, sizeof *r->block);
	r->block->parent = r;
	return r;
}

IrValue *
ir_block_add_arg(IrModule *m, IrBlock *b, IrType *t, IrStr name, IrLoc loc)
{
	if (b->narg == b->argcap) {
		int cap = b->argcap ? b->argcap * 2 : 4;
		IrValue **a = ir_arena_alloc(&m->arena, sizeof *a * (size_t)cap);
		if (b->narg)
			memcpy(a, b->arg, sizeof *a * (size_t)b->narg);
		b->arg = a;
		b->argcap = cap;
	}
	IrValue *v = ir_arena_alloc(&m->arena, sizeof *v);
	v->kind = IR_VAL_ARG;
	v->index = b->narg;
	v->type = t;
	v->name = name;
	v->block = b;
	v->loc = loc;
	b->arg[b->narg++] = v;
	return v;
}

IrValue *
ir_param_new(IrModule *m, IrType *t, IrStr name, IrLoc loc)
{
	IrValue *v = ir_arena_alloc(&m->arena, sizeof *v);
	v->kind = IR_VAL_PARAM;
	v->type = t;
	v->name = name;
	v->loc = loc;
	return v;
}

/* ---- lists ---- */

void
ir_block_append(IrBlock *b, IrOp *op)
{
	op->parent = b;
	op->next = NULL;
	op->prev = b->last;
	if (b->last)
		b->last->next = op;
	else
		b->first = op;
	b->last = op;
}

void
ir_block_prepend(IrBlock *b, IrOp *op)
{
	op->parent = b;
	op->prev = NULL;
	op->next = b->first;
	if (b->first)
		b->first->prev = op;
	else
		b->last = op;
	b->first = op;
}

void
ir_op_insert_before(IrOp *pos, IrOp *op)
{
	IrBlock *b = pos->parent;
	op->parent = b;
	op->next = pos;
	op->prev = pos->prev;
	if (pos->prev)
		pos->prev->next = op;
	else
		b->first = op;
	pos->prev = op;
}

void
ir_op_insert_after(IrOp *pos, IrOp *op)
{
	if (pos->next)
		ir_op_insert_before(pos->next, op);
	else
		ir_block_append(pos->parent, op);
}

void
ir_op_unlink(IrOp *op)
{
	IrBlock *b = op->parent;
	if (!b)
		return;
	if (op->prev)
		op->prev->next = op->next;
	else
		b->first = op->next;
	if (op->next)
		op->next->prev = op->prev;
	else
		b->last = op->prev;
	op->next = op->prev = NULL;
	op->parent = NULL;
}

static void
drop_uses(IrOp *op)
{
	for (int i = 0; i < op->nopnd; i++)
		unlink_use(&op->opnd[i]);
	for (int r = 0; r < op->nreg; r++)
		for (IrOp *o = op->reg[r].block->first; o; o = o->next)
			drop_uses(o);
}

void
ir_op_erase(IrOp *op)
{
	drop_uses(op);
	ir_op_unlink(op);
}

void
ir_use_set(IrUse *u, IrValue *v)
{
	IrOp *user = u->user;
	unlink_use(u);
	link_use(u, v, user);
}

void
ir_replace_all_uses(IrValue *from, IrValue *to)
{
	if (from == to)
		return;
	while (from->uses)
		ir_use_set(from->uses, to);
}

bool
ir_value_has_uses(const IrValue *v)
{
	return v->uses != NULL;
}

int
ir_value_nuses(const IrValue *v)
{
	int n = 0;
	for (IrUse *u = v->uses; u; u = u->next)
		n++;
	return n;
}

IrOp *
ir_block_parent_op(const IrBlock *b)
{
	return b && b->parent ? b->parent->parent : NULL;
}

IrOp *
ir_op_parent_op(const IrOp *op)
{
	return ir_block_parent_op(op->parent);
}

bool
ir_op_is_ancestor(const IrOp *anc, const IrOp *op)
{
	for (; op; op = ir_op_parent_op(op))
		if (op == anc)
			return true;
	return false;
}

IrValue *
ir_op_value(const IrOp *op, int opnd)
{
	return opnd >= 0 && opnd < op->nopnd ? op->opnd[opnd].val : NULL;
}

IrValue *
ir_item_value(const IrOp *op, const IrItem *it)
{
	if (it->kind == IR_IT_VALUE)
		return ir_op_value(op, it->opnd);
	if (it->kind == IR_IT_EXPR && it->e && it->e->kind == IR_EX_VAL)
		return it->e->pv ? it->e->pv : ir_op_value(op, it->e->opnd);
	return NULL;
}

int
ir_item_opnd(const IrItem *it)
{
	if (it->kind == IR_IT_VALUE)
		return it->opnd;
	if (it->kind == IR_IT_EXPR && it->e && it->e->kind == IR_EX_VAL)
		return it->e->opnd;
	return -1;
}

IrGroup *
ir_op_group(const IrOp *op, IrStr kw)
{
	for (int i = 0; i < op->ngroup; i++)
		if (op->group[i].kw == kw)
			return &op->group[i];
	return NULL;
}

const IrGroup *
ir_op_group_named(const IrOp *op, const char *kw)
{
	for (int i = 0; i < op->ngroup; i++)
		if (!strcmp(op->group[i].kw, kw))
			return &op->group[i];
	return NULL;
}

IrAttr *
ir_op_attr(const IrOp *op, IrStr name)
{
	for (int i = 0; i < op->nattr; i++)
		if (op->attr[i].name == name)
			return op->attr[i].attr;
	return NULL;
}

void
ir_op_set_attr(IrModule *m, IrOp *op, IrStr name, IrAttr *a)
{
	for (int i = 0; i < op->nattr; i++) {
		if (op->attr[i].name == name) {
			op->attr[i].attr = a;
			return;
		}
	}
	IrNamedAttr *na = ir_arena_alloc(&m->arena, sizeof *na * (size_t)(op->nattr + 1));
	if (op->nattr)
		memcpy(na, op->attr, sizeof *na * (size_t)op->nattr);
	na[op->nattr] = (IrNamedAttr){name, a, op->loc};
	op->attr = na;
	op->nattr++;
}

IrOp *
ir_kernel_of(IrOp *op)
{
	for (; op; op = ir_op_parent_op(op))
		if (op->code == IR_OP_KERNEL)
			return op;
	return NULL;
}

static bool
reads_cta(IrOp *op, void *ud)
{
	*(bool *)ud |= op->code == IR_OP_CTA_ID || op->code == IR_OP_NUM_CTAS;
	return !*(bool *)ud;
}

bool
ir_kernel_walks(IrOp *kernel)
{
	bool walks = false;
	if (kernel && kernel->code == IR_OP_KERNEL)
		ir_walk_op(kernel, reads_cta, &walks);
	return walks;
}

IrOp *
ir_role_of(IrOp *op)
{
	for (op = op ? ir_op_parent_op(op) : NULL; op; op = ir_op_parent_op(op))
		if (op->code == IR_OP_ROLE)
			return op;
	return NULL;
}

bool
ir_spill_buffer(IrCtx *c, const IrValue *v)
{
	if (!v || v->kind != IR_VAL_RESULT || v->op->code != IR_OP_SMEM_ALLOC)
		return false;
	IrAttr *a = ir_op_attr(v->op, c->kw.spill);
	return a && a->kind == IR_ATTR_BOOL && a->i;
}

typedef struct NameFind {
	IrStr name;
	bool found;
} NameFind;

static bool
name_used(IrOp *op, void *ud)
{
	NameFind *nf = ud;
	for (int i = 0; i < op->nres; i++)
		nf->found |= op->res[i].name == nf->name;
	for (int r = 0; r < op->nreg; r++)
		for (int a = 0; a < op->reg[r].block->narg; a++)
			nf->found |= op->reg[r].block->arg[a]->name == nf->name;
	return !nf->found;
}

IrStr
ir_fresh_name(IrCtx *c, IrOp *kernel, const char *base, const char *suffix)
{
	for (int n = 0;; n++) {
		char *s = n ? ir_ctx_printf(c, "%s.%s%d", base, suffix, n)
		            : ir_ctx_printf(c, "%s.%s", base, suffix);
		NameFind nf = {ir_intern_cstr(c, s), false};
		ir_walk_op(kernel, name_used, &nf);
		if (!nf.found)
			return nf.name;
	}
}

/* ---- walks and numbering ---- */

bool
ir_walk_op(IrOp *op, IrWalkFn fn, void *ud)
{
	if (!fn(op, ud))
		return false;
	for (int r = 0; r < op->nreg; r++)
		if (!ir_walk(op->reg[r].block, fn, ud))
			return false;
	return true;
}

bool
ir_walk(IrBlock *b, IrWalkFn fn, void *ud)
{
	IrOp *next;
	for (IrOp *op = b->first; op; op = next) {
		next = op->next; /* the callback may unlink op */
		if (!ir_walk_op(op, fn, ud))
			return false;
	}
	return true;
}

typedef struct Numbering {
	uint32_t nv, nop;
} Numbering;

static bool
number_op(IrOp *op, void *ud)
{
	Numbering *n = ud;
	op->id = n->nop++;
	for (int i = 0; i < op->nres; i++)
		op->res[i].id = n->nv++;
	for (int i = 0; i < op->nitem; i++)
		for (int p = 0; p < op->item[i].nparam; p++)
			op->item[i].param[p]->id = n->nv++;
	for (int r = 0; r < op->nreg; r++)
		for (int a = 0; a < op->reg[r].block->narg; a++)
			op->reg[r].block->arg[a]->id = n->nv++;
	return true;
}

uint32_t
ir_number_values(IrOp *root)
{
	Numbering n = {0, 0};
	ir_walk_op(root, number_op, &n);
	return n.nv;
}

/* ---- cloning ---- */

static IrValue *
mapped(IrMap *vmap, IrValue *v)
{
	IrValue *n = ir_map_get(vmap, ir_hash_ptr(v), v, NULL);
	return n ? n : v;
}

static void
clone_items(IrModule *m, IrItem *dst, const IrItem *src, int n, IrMap *vmap)
{
	for (int i = 0; i < n; i++) {
		dst[i] = src[i];
		if (src[i].ncoord) {
			dst[i].coord = ir_arena_alloc(&m->arena, sizeof(IrCoord) * (size_t)src[i].ncoord);
			for (int k = 0; k < src[i].ncoord; k++) {
				dst[i].coord[k].len = src[i].coord[k].len;
				dst[i].coord[k].e = ir_expr_clone(m, src[i].coord[k].e);
			}
		}
		dst[i].e = ir_expr_clone(m, src[i].e);
		if (src[i].nparam) {
			dst[i].param = ir_arena_alloc(&m->arena, sizeof(IrValue *) * (size_t)src[i].nparam);
			for (int p = 0; p < src[i].nparam; p++) {
				IrValue *ov = src[i].param[p];
				IrValue *nv = ir_param_new(m, ov->type, ov->name, ov->loc);
				nv->index = ov->index;
				dst[i].param[p] = nv;
				ir_map_put(vmap, ir_hash_ptr(ov), ov, nv, NULL);
			}
		}
	}
}

static IrBlock *
clone_block(IrModule *m, IrBlock *src, IrRegion *parent, IrMap *vmap)
{
	IrRegion *r = ir_region_new(m);
	IrBlock *b = r->block;
	b->parent = parent;
	for (int a = 0; a < src->narg; a++) {
		IrValue *ov = src->arg[a];
		IrValue *nv = ir_block_add_arg(m, b, ov->type, ov->name, ov->loc);
		ir_map_put(vmap, ir_hash_ptr(ov), ov, nv, NULL);
	}
	for (IrOp *o = src->first; o; o = o->next)
		ir_block_append(b, ir_op_clone(m, o, vmap));
	return b;
}

IrOp *
ir_op_clone(IrModule *m, IrOp *src, IrMap *vmap)
{
	IrOp *op = ir_arena_alloc(&m->arena, sizeof *op);
	*op = *src;
	op->next = op->prev = NULL;
	op->parent = NULL;
	op->item = ir_arena_alloc(&m->arena, sizeof(IrItem) * (size_t)src->nitem);
	clone_items(m, op->item, src->item, src->nitem, vmap);
	for (int i = 0; i < op->nitem; i++)
		for (int p = 0; p < op->item[i].nparam; p++)
			op->item[i].param[p]->op = op;
	op->group = ir_arena_alloc(&m->arena, sizeof(IrGroup) * (size_t)src->ngroup);
	for (int g = 0; g < src->ngroup; g++) {
		op->group[g] = src->group[g];
		op->group[g].item = ir_arena_alloc(&m->arena, sizeof(IrItem) * (size_t)src->group[g].nitem);
		clone_items(m, op->group[g].item, src->group[g].item, src->group[g].nitem, vmap);
	}
	op->attr = ir_arena_alloc(&m->arena, sizeof(IrNamedAttr) * (size_t)src->nattr);
	if (src->nattr)
		memcpy(op->attr, src->attr, sizeof(IrNamedAttr) * (size_t)src->nattr);
	op->type = ir_arena_alloc(&m->arena, sizeof(IrType *) * (size_t)src->ntype);
	if (src->ntype)
		memcpy(op->type, src->type, sizeof(IrType *) * (size_t)src->ntype);
	op->opnd = ir_arena_alloc(&m->arena, sizeof(IrUse) * (size_t)src->nopnd);
	for (int i = 0; i < src->nopnd; i++)
		link_use(&op->opnd[i], mapped(vmap, src->opnd[i].val), op);
	op->res = ir_arena_alloc(&m->arena, sizeof(IrValue) * (size_t)src->nres);
	for (int i = 0; i < src->nres; i++) {
		op->res[i] = src->res[i];
		op->res[i].uses = NULL;
		op->res[i].op = op;
		ir_map_put(vmap, ir_hash_ptr(&src->res[i]), &src->res[i], &op->res[i], NULL);
	}
	op->reg = ir_arena_alloc(&m->arena, sizeof(IrRegion) * (size_t)src->nreg);
	for (int r = 0; r < src->nreg; r++) {
		op->reg[r].parent = op;
		op->reg[r].block = clone_block(m, src->reg[r].block, &op->reg[r], vmap);
	}
	return op;
}

IrModule *
ir_module_clone(IrModule *src)
{
	IrModule *m = ir_module_new(src->ctx, src->name);
	const IrAllocator *al = src->ctx->al;
	for (int i = 0; i < src->aliases.len; i++)
		ir_vec_push(al, &m->aliases, &IR_VEC_AT(src->aliases, IrAlias, i), sizeof(IrAlias));
	IrMap vmap;
	ir_map_init(&vmap, al);
	for (IrOp *o = src->body->first; o; o = o->next)
		ir_block_append(m->body, ir_op_clone(m, o, &vmap));
	ir_map_free(&vmap);
	return m;
}
