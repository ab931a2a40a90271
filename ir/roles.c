/* roles.c — the role analysis (SPEC 5.7): where each role of an ave.warp_specialize sits in the
 * CTA, how many warps and replicas it has, and what it asks of the register file. Every folder
 * reads roles through here rather than evaluating their groups again. */
#include "ir.h"

static int64_t
group_num(const IrOp *role, IrStr kw, int64_t dflt)
{
	int64_t v = dflt;
	IrGroup *g = ir_op_group(role, kw);
	if (g && g->nitem > 0)
		ir_expr_eval_const(g->item[0].e, &v);
	return v;
}

static IrRoleInfo
shape(IrCtx *c, IrOp *role, int64_t first_warp)
{
	IrRoleInfo r = {0};
	r.op = role;
	r.name = role->nitem > 0 ? role->item[0].s : "";
	r.warps = group_num(role, c->kw.warps, 1);
	r.replicas = group_num(role, c->kw.replicate, 1);
	r.issue = group_num(role, c->kw.issue, 0);
	r.regs = group_num(role, c->kw.regs, 0);
	r.first_warp = first_warp;
	return r;
}

IrRoleInfo
ir_role_info(IrCtx *c, IrOp *role)
{
	int64_t first = 0;
	for (IrOp *q = role->parent ? role->parent->first : NULL; q && q != role; q = q->next)
		first += group_num(q, c->kw.warps, 1) * group_num(q, c->kw.replicate, 1);
	return shape(c, role, first);
}

int
ir_roles(IrCtx *c, IrOp *ws, IrRoleInfo *out, int max)
{
	int n = 0;
	int64_t first = 0;
	for (IrOp *q = ws->reg[0].block->first; q; q = q->next, n++) {
		IrRoleInfo r = shape(c, q, first);
		first += r.warps * r.replicas;
		if (n < max)
			out[n] = r;
	}
	return n;
}

int64_t
ir_role_warps_total(IrCtx *c, IrOp *ws)
{
	int64_t total = 0;
	for (IrOp *q = ws->reg[0].block->first; q; q = q->next)
		total += group_num(q, c->kw.warps, 1) * group_num(q, c->kw.replicate, 1);
	return total;
}
