/* pass.c — the `regalloc` pass (SPEC 5.10, docs/regalloc.md): for every kernel compiled for a GPU
 * target, plans the registers of its tiles (plan.c), chooses the budgets that roles leave unset,
 * rejects a group whose tiles do not fit, and proves the plan with Z3 (prove.c). It changes no
 * meaning: it only writes `regs(n)` into roles that had none. */
#include <stdlib.h>

#include "regalloc.h"

typedef struct Run {
	IrModule *m;
	const IrPassOpts *o;
	int64_t verbose, reserve;
	bool ok;
} Run;

static void
remarks(RaPlan *p, int64_t verbose)
{
	for (int g = 0; g < p->ngroup; g++) {
		RaGroup *r = &p->group[g];
		if (!r->role && p->ngroup > 1 && !r->slots)
			continue;
		IrOp *at = r->peak_at >= 0 ? ra_point_op(p, r->peak_at) : NULL;
		ir_remark(p->c, at ? at->loc : (r->role ? r->role->loc : p->kernel->loc),
		          "%s '@%s' on target '%s': %d registers per thread of register tiles at "
		          "most%s%s%s "
		          "(%d slots), budget %d%s; %s",
		          r->role ? "role" : "kernel", r->name, p->t->name, r->peak,
		          at ? ", at '" : "", at ? ir_op_name(at->code) : "", at ? "'" : "",
		          r->slots, r->budget,
		          r->chosen  ? " (chosen)"
		          : r->given ? " (given)"
		                     : " (the launch's)",
		          p->proved ? "proved" : "not proved");
	}
	if (verbose < 2)
		return;
	for (int i = 0; i < p->ntile; i++) {
		RaTile *t = &p->tile[i];
		int s = p->cls[t->cls].slot;
		IrLoc loc = t->v->kind == IR_VAL_RESULT ? t->v->op->loc : t->v->loc;
		if (t->regs)
			ir_remark(p->c, loc, "'%%%s' takes slots %d to %d",
			          t->v->name ? t->v->name : "<unnamed>", s, s + t->regs - 1);
	}
}

/* A budget rule broken by budgets the roles state (none chosen here): the verifier and the
 * backends report it with the rule (ra_check_roles), so the plan stays unproved in silence. */
static bool
stated_budget(RaPlan *p, const RaCex *cex)
{
	if (cex->fail != RA_FAIL_BUDGET)
		return false;
	if (cex->group >= 0)
		return !p->group[cex->group].chosen;
	for (int g = 0; g < p->ngroup; g++)
		if (p->group[g].chosen)
			return false;
	return true;
}

static const TargetInfo *
kernel_target(IrCtx *c, IrOp *k, const TargetInfo *given)
{
	if (given)
		return given;
	IrAttr *a = ir_op_attr(k, c->kw.target);
	return a && a->kind == IR_ATTR_STR ? target_find(a->s) : NULL;
}

static bool
kernel(IrOp *k, void *ud)
{
	Run *run = ud;
	if (k->code != IR_OP_KERNEL)
		return true;
	IrCtx *c = run->m->ctx;
	const TargetInfo *t = kernel_target(c, k, run->o->target);
	if (!t || !t->regfile)
		return true; /* the interpreter has no register file */
	uint32_t n = ir_number_values(k);
	int32_t *regs = malloc(sizeof(int32_t) * (n + 1));
	for (uint32_t i = 0; i <= n; i++)
		regs[i] = -1;
	bool sized =
	    run->o->tile_regs ? run->o->tile_regs(c, k, t, regs) : ra_blocked_regs(c, k, t, regs);
	if (!sized) { /* a tile no layout holds: the lowering says so if it compiles the kernel */
		free(regs);
		return true;
	}
	RaPlan p;
	ra_plan_build(&p, c, k, t, regs, (int)run->reserve);
	p.sizes = run->o->tile_regs ? "lowering" : "blocked";
	free(regs);
	if (!ra_plan_budgets(&p, run->m)) {
		run->ok = false;
	} else {
		RaCex cex;
		if (!ra_prove(&p, &cex) && !stated_budget(&p, &cex)) {
			ra_prove_report(&p, &cex);
			run->ok = false;
		}
	}
	if (run->verbose)
		remarks(&p, run->verbose);
	ra_plan_free(&p);
	return true;
}

bool
pass_regalloc(IrModule *m, const IrPassOpts *o)
{
	Run run = {m, o, 0, RA_RESERVE, true};
	if (!ir_pass_arg_int(m->ctx, o, "regalloc", "verbose", 0, 0, 2, &run.verbose) ||
	    !ir_pass_arg_int(m->ctx, o, "regalloc", "reserve", RA_RESERVE, 0, 232, &run.reserve))
		return false;
	for (IrOp *op = m->body->first; op; op = op->next)
		ir_walk_op(op, kernel, &run);
	return run.ok;
}
