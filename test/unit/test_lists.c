/* test_lists.c — the intrusive op lists (append, prepend, insert, unlink at every position,
 * parent pointers, walks that unlink as they go) and the use lists (O(1) unlink of any use,
 * replace-all-uses onto a value that already has uses, erase of an op with nested regions). */
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "unit.h"

static IrLoc noloc = {0, 0, 0};

/* A detached `ave.neg %v : T` (or ave.barrier when v is NULL). */
static IrOp *
mk_op(IrModule *m, IrValue *v)
{
	IrOpState st;
	ir_state_init(&st, v ? IR_OP_NEG : IR_OP_BARRIER, noloc);
	if (v) {
		ir_state_value(m, &st, v);
		ir_state_result(m, &st, v->type, NULL);
	}
	return ir_op_build(m, &st);
}

/* The block's ops in order, checked against `want` and for consistent links. */
static bool
block_is(IrBlock *b, IrOp **want, int n)
{
	IrOp *prev = NULL;
	int i = 0;
	for (IrOp *o = b->first; o; o = o->next, i++) {
		if (i >= n || o != want[i] || o->prev != prev || o->parent != b)
			return false;
		prev = o;
	}
	return i == n && b->last == prev;
}

/* Every use of v points back at v, and each prev link points at the link that points at it. */
static int
uses_ok(IrValue *v)
{
	int n = 0;
	IrUse **link = &v->uses;
	for (IrUse *u = v->uses; u; u = u->next, n++) {
		if (u->val != v || u->prev != link)
			return -1;
		link = &u->next;
	}
	return n;
}

static void
test_op_lists(IrCtx *c)
{
	IrModule *m = ir_module_new(c, "lists");
	IrBlock *b = ir_region_new(m)->block;
	IrOp *a = mk_op(m, NULL), *x = mk_op(m, NULL), *y = mk_op(m, NULL), *z = mk_op(m, NULL);

	CHECK(block_is(b, NULL, 0));
	ir_block_append(b, a);
	CHECK(block_is(b, (IrOp *[]){a}, 1));
	ir_block_prepend(b, x);
	CHECK(block_is(b, (IrOp *[]){x, a}, 2));
	ir_op_insert_after(a, y); /* at the tail */
	CHECK(block_is(b, (IrOp *[]){x, a, y}, 3));
	ir_op_insert_before(x, z); /* at the head */
	CHECK(block_is(b, (IrOp *[]){z, x, a, y}, 4));

	/* Unlink at the head, in the middle, at the tail, and the only op. */
	ir_op_unlink(z);
	CHECK(block_is(b, (IrOp *[]){x, a, y}, 3));
	CHECK(z->parent == NULL && z->next == NULL && z->prev == NULL);
	ir_op_unlink(a);
	CHECK(block_is(b, (IrOp *[]){x, y}, 2));
	ir_op_unlink(y);
	CHECK(block_is(b, (IrOp *[]){x}, 1));
	ir_op_unlink(x);
	CHECK(block_is(b, NULL, 0));
	/* Unlinking a detached op does nothing. */
	ir_op_unlink(x);
	CHECK(x->parent == NULL);

	/* Insert before/after in the middle; move an op to another block. */
	ir_block_append(b, x);
	ir_block_append(b, y);
	ir_op_insert_after(x, a);
	ir_op_insert_before(y, z);
	CHECK(block_is(b, (IrOp *[]){x, a, z, y}, 4));
	IrBlock *b2 = ir_region_new(m)->block;
	ir_op_unlink(z);
	ir_block_prepend(b2, z);
	CHECK(block_is(b, (IrOp *[]){x, a, y}, 3));
	CHECK(block_is(b2, (IrOp *[]){z}, 1));

	/* Many ops: order survives removing every third one. */
	enum { N = 3000 };
	IrBlock *big = ir_region_new(m)->block;
	IrOp *ops[N];
	for (int i = 0; i < N; i++)
		ir_block_append(big, ops[i] = mk_op(m, NULL));
	IrOp *keep[N];
	int nk = 0;
	for (int i = 0; i < N; i++) {
		if (i % 3 == 1)
			ir_op_unlink(ops[i]);
		else
			keep[nk++] = ops[i];
	}
	CHECK(block_is(big, keep, nk));
	ir_module_free(m);
}

typedef struct WalkLog {
	IrOpcode seen[64];
	int n;
	bool unlink;
} WalkLog;

static bool
log_op(IrOp *op, void *ud)
{
	WalkLog *w = ud;
	if (w->n < 64)
		w->seen[w->n++] = op->code;
	/* Unlinking the visited op must not derail the walk. */
	if (w->unlink && op->code == IR_OP_BARRIER)
		ir_op_unlink(op);
	return true;
}

static bool
stop_at_if(IrOp *op, void *ud)
{
	(void)ud;
	return op->code != IR_OP_IF;
}

static const char *nested_src =
	"ave.kernel @k(%c: i1, %n: index) {threads = 256} {\n"
	"  %v = ave.index %n + 1\n"
	"  ave.if %c {\n"
	"    %w = ave.index %v * 2\n"
	"    ave.for %i = 0 to %v step 1 {\n"
	"      %u = ave.index %v + %i + %w\n"
	"      ave.barrier\n"
	"    }\n"
	"  }\n"
	"  ave.warp_specialize {\n"
	"    ave.role @r warps(8) {\n"
	"      %q = ave.index %v + 2\n"
	"    }\n"
	"  }\n"
	"  %last = ave.index %v\n"
	"  ave.return\n"
	"}\n";

static void
test_walk_and_parents(IrCtx *c)
{
	IrModule *m = fe_parse(c, "walk.ave", nested_src, strlen(nested_src), 1);
	CHECK(m && ir_verify(m));
	if (!m)
		return;
	IrOp *k = m->body->first;
	WalkLog w = {.n = 0};
	ir_walk(m->body, log_op, &w);
	IrOpcode want[] = {IR_OP_KERNEL, IR_OP_INDEX, IR_OP_IF,         IR_OP_INDEX, IR_OP_FOR,
			   IR_OP_INDEX,  IR_OP_BARRIER, IR_OP_YIELD, IR_OP_YIELD, IR_OP_WARP_SPECIALIZE,
			   IR_OP_ROLE,   IR_OP_INDEX, IR_OP_INDEX,        IR_OP_RETURN};
	CHECK_EQ(w.n, (int)(sizeof want / sizeof want[0]));
	CHECK(!memcmp(w.seen, want, sizeof want));

	/* Stopping early. */
	WalkLog w2 = {.n = 0};
	CHECK(!ir_walk(m->body, stop_at_if, &w2));

	/* Parents, ancestors, the enclosing kernel and role. */
	IrOp *vdef = k->reg[0].block->first;
	IrOp *iff = vdef->next;
	IrOp *forop = iff->reg[0].block->first->next;
	IrOp *u = forop->reg[0].block->first;
	IrOp *ws = iff->next;
	IrOp *role = ws->reg[0].block->first;
	IrOp *q = role->reg[0].block->first;
	CHECK(u->code == IR_OP_INDEX && ir_op_parent_op(u) == forop);
	CHECK(ir_op_parent_op(forop) == iff && ir_op_parent_op(iff) == k);
	CHECK(ir_op_parent_op(k) == NULL);
	CHECK(ir_block_parent_op(m->body) == NULL);
	CHECK(ir_op_is_ancestor(k, u) && ir_op_is_ancestor(iff, u) && ir_op_is_ancestor(u, u));
	CHECK(!ir_op_is_ancestor(u, iff) && !ir_op_is_ancestor(ws, u));
	CHECK(ir_kernel_of(u) == k && ir_kernel_of(k) == k);
	CHECK(ir_role_of(q) == role && ir_role_of(u) == NULL && ir_role_of(role) == NULL);

	/* A walk that unlinks the barrier as it visits it still visits what follows. */
	WalkLog w3 = {.unlink = true};
	ir_walk(m->body, log_op, &w3);
	CHECK_EQ(w3.n, w.n);
	CHECK(forop->reg[0].block->first->next->code == IR_OP_YIELD);

	/* Numbering gives every op and value a distinct id in walk order. */
	uint32_t nv = ir_number_values(k);
	CHECK_EQ(nv, 8u); /* %c %n %v %w %i %u %q %last */
	CHECK(vdef->id < iff->id && iff->id < u->id);
	ir_module_free(m);
}

static void
test_use_lists(IrCtx *c)
{
	IrModule *m = ir_module_new(c, "uses");
	IrBlock *b = ir_region_new(m)->block;
	IrValue *v = ir_block_add_arg(m, b, c->t_f32, ir_intern_cstr(c, "v"), noloc);
	IrValue *w = ir_block_add_arg(m, b, c->t_f32, ir_intern_cstr(c, "w"), noloc);

	/* 20000 users of v; the newest use is first in the list. */
	enum { N = 20000 };
	static IrOp *users[N];
	for (int i = 0; i < N; i++)
		ir_block_append(b, users[i] = mk_op(m, v));
	CHECK_EQ(uses_ok(v), N);
	CHECK(v->uses->user == users[N - 1]);
	CHECK(ir_value_has_uses(v) && !ir_value_has_uses(w));

	/* Erase users from the head, the tail and the middle of the use list; each is O(1), so
	 * this is quick, and the list stays consistent. */
	for (int i = 0; i < N; i += 2)
		ir_op_erase(users[i]);
	CHECK_EQ(uses_ok(v), N / 2);
	ir_op_erase(users[N - 1]); /* the head of the list */
	ir_op_erase(users[1]);     /* the tail */
	CHECK_EQ(uses_ok(v), N / 2 - 2);
	CHECK(users[1]->parent == NULL && users[1]->opnd[0].val == NULL);

	/* Re-point one use. */
	IrUse *one = &users[3]->opnd[0];
	ir_use_set(one, w);
	CHECK_EQ(uses_ok(v), N / 2 - 3);
	CHECK_EQ(uses_ok(w), 1);
	CHECK(ir_op_value(users[3], 0) == w);

	/* Replace-all-uses onto a value that already has uses keeps both lists right. */
	ir_replace_all_uses(v, w);
	CHECK_EQ(uses_ok(v), 0);
	CHECK_EQ(uses_ok(w), N / 2 - 2);
	CHECK(ir_op_value(users[5], 0) == w);
	/* Onto itself: nothing changes. */
	ir_replace_all_uses(w, w);
	CHECK_EQ(uses_ok(w), N / 2 - 2);
	/* And back. */
	ir_replace_all_uses(w, v);
	CHECK_EQ(uses_ok(w), 0);
	CHECK_EQ(ir_value_nuses(v), N / 2 - 2);
	ir_module_free(m);
}

static void
test_erase_nested(IrCtx *c)
{
	IrModule *m = fe_parse(c, "nested.ave", nested_src, strlen(nested_src), 1);
	CHECK(m != NULL);
	if (!m)
		return;
	IrOp *k = m->body->first;
	IrOp *vdef = k->reg[0].block->first;
	IrOp *iff = vdef->next;
	IrValue *v = &vdef->res[0];
	IrValue *n = k->reg[0].block->arg[1];
	/* %v is read by %w, the loop's upper bound, %u (inside the if), %q (in the role), %last. */
	CHECK_EQ(ir_value_nuses(v), 5);
	CHECK_EQ(uses_ok(n), 1);
	/* Erasing the ave.if drops the uses of every op nested in it, at any depth. */
	ir_op_erase(iff);
	CHECK_EQ(uses_ok(v), 2);
	for (IrUse *u = v->uses; u; u = u->next)
		CHECK(!ir_op_is_ancestor(iff, u->user));
	CHECK(k->reg[0].block->first->next->code == IR_OP_WARP_SPECIALIZE);
	/* The rest still verifies; the erased op is detached. */
	CHECK(iff->parent == NULL);
	CHECK(ir_verify(m));
	ir_module_free(m);
}

static void
test_refresh_and_clone(IrCtx *c)
{
	IrModule *m = fe_parse(c, "refresh.ave", nested_src, strlen(nested_src), 1);
	CHECK(m != NULL);
	if (!m)
		return;
	IrOp *k = m->body->first;
	IrOp *vdef = k->reg[0].block->first;
	IrValue *n = k->reg[0].block->arg[1];
	/* Edit %v's expression to read %n twice: refresh keeps one operand per distinct value. */
	IrExpr *e = ir_expr_bin(m, IR_EX_ADD, ir_expr_value(m, n), ir_expr_value(m, n));
	vdef->item[0].e = e;
	ir_op_refresh_operands(m, vdef);
	CHECK_EQ(vdef->nopnd, 1);
	CHECK(ir_op_value(vdef, 0) == n);
	CHECK_EQ(uses_ok(n), 1);
	CHECK(e->l->opnd == 0 && e->r->opnd == 0 && e->l->pv == NULL);
	/* Replacing the only leaf by a constant drops the operand and its use. */
	vdef->item[0].e = ir_expr_const(m, 7);
	ir_op_refresh_operands(m, vdef);
	CHECK_EQ(vdef->nopnd, 0);
	CHECK_EQ(uses_ok(n), 0);

	/* A deep clone of the kernel has its own values: no use crosses between the copies. */
	IrMap vmap;
	ir_map_init(&vmap, c->al);
	IrOp *k2 = ir_op_clone(m, k, &vmap);
	ir_map_free(&vmap);
	ir_block_append(m->body, k2);
	IrOp *v2def = k2->reg[0].block->first;
	CHECK(v2def != vdef && v2def->item[0].e != vdef->item[0].e);
	CHECK_EQ(uses_ok(&v2def->res[0]), uses_ok(&vdef->res[0]));
	for (IrUse *u = v2def->res[0].uses; u; u = u->next)
		CHECK(ir_op_is_ancestor(k2, u->user));
	IrOp *role2 = k2->reg[0].block->first->next->next->reg[0].block->first;
	CHECK(role2->code == IR_OP_ROLE && ir_kernel_of(role2) == k2);
	ir_module_free(m);
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	test_op_lists(c);
	test_walk_and_parents(c);
	test_use_lists(c);
	test_erase_nested(c);
	test_refresh_and_clone(c);
	ir_ctx_free(c);
	return unit_summary();
}
