/* pass.c — the `regalloc` pass (SPEC 5.10, docs/regalloc.md): for every kernel compiled for a GPU
 * target, plans the registers of its tiles (plan.c), chooses the budgets that roles leave unset,
 * keeps tiles in shared memory where nothing reads them when a group does not fit (spill.c),
 * rejects a group that still does not fit, and proves the plan with Z3 (prove.c). It changes no
 * meaning: it writes `regs(n)` into roles that had none, and a spill stores and reloads a tile
 * unchanged, in a rewrite check-invariants proves before it is kept. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check/check.h"
#include "regalloc.h"

typedef struct Run {
	IrModule *m;
	const IrPassOpts *o;
	int64_t verbose, reserve, spill, remat;
	int64_t kreserve, kremat; /* reserve and remat for the kernel at hand (kernel()) */
	bool ok;
	IrVec kernels; /* IrOp * */
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

/* Sizes the tiles of k and builds its plan; false (p untouched) when a tile has no layout. */
static bool
plan_of(Run *run, IrOp *k, const TargetInfo *t, RaPlan *p)
{
	if (!ra_plan_sized(p, run->m->ctx, k, t, run->o->tile_regs, (int)run->kreserve))
		return false;
	p->no_remat = !run->kremat;
	return true;
}

static const char *
group_name(const RaPlan *p, int g, char *buf, size_t n)
{
	snprintf(buf, n, "%s '@%s'", p->group[g].role ? "role" : "kernel", p->group[g].name);
	return buf;
}

/* The decision, at the tile's definition: what waits in shared memory, from where to where,
 * and why. */
static void
spill_remark(RaPlan *p, const RaSpill *s)
{
	char who[160];
	const char *need =
	    s->peak > s->budget
	        ? ir_ctx_printf(p->c,
	                        s->kind == 'g'   ? "over its budget regs(%d)"
	                        : s->kind == 'c' ? "over the %d the pool leaves it"
	                                         : "over the %d registers per thread the target "
	                                           "gives it",
	                        s->budget)
	        : ir_ctx_printf(p->c,
	                        "which leaves %d of the budget of %d for what is not a tile "
	                        "(regalloc keeps %d)",
	                        s->budget - s->peak, s->budget, s->margin);
	const char *name = s->v->name ? s->v->name : "<unnamed>";
	const char *places =
	    s->nload > 1 ? ir_ctx_printf(p->c, " (in %d places)", s->nload) : "";
	if (s->remat) {
		ir_remark(p->c, s->at_def,
		          "%s on target '%s': '%%%s' (%d registers per thread) is loaded again from "
		          "global memory at line %u%s instead of staying live from line %u, where "
		          "nothing reads it: the tiles live at '%s' (line %u) need %d registers, %s",
		          group_name(p, s->group, who, sizeof who), p->t->name, name, s->regs,
		          s->load->loc.line, places, s->at_def.line, ir_op_name(s->at->code),
		          s->at->loc.line, s->peak, need);
		return;
	}
	IrLoc loc = s->v->kind == IR_VAL_RESULT ? s->v->op->loc : s->store->loc;
	ir_remark(p->c, loc,
	          "%s on target '%s': '%%%s' (%d registers per thread) waits in shared memory "
	          "'%%%s' (%lld bytes) from line %u to line %u%s, where nothing reads it: the "
	          "tiles live at '%s' (line %u) need %d registers, %s",
	          group_name(p, s->group, who, sizeof who), p->t->name, name, s->regs,
	          s->buffer->name ? s->buffer->name : "<unnamed>", (long long)s->bytes,
	          s->store->loc.line, s->load->loc.line,
	          s->nload > 1 ? ir_ctx_printf(p->c, " (read back in %d places)", s->nload) : "",
	          ir_op_name(s->at->code), s->at->loc.line, s->peak, need);
}

static bool
add_smem(IrOp *op, void *ud)
{
	if (op->code == IR_OP_SMEM_ALLOC && ir_type_bytes(op->res[0].type) > 0)
		*(int64_t *)ud += ir_type_bytes(op->res[0].type);
	return true;
}

/* The shared memory k allocates, counted without reuse. */
static int64_t
smem_used(IrOp *k)
{
	int64_t n = 0;
	ir_walk_op(k, add_smem, &n);
	return n;
}

/* The group's state after spills that did not make it fit, for the error's note. */
static const char *
still_over(RaPlan *p, int g, int margin, const RaSpill *done, int n)
{
	RaGroup *r = &p->group[g];
	IrOp *at = ra_point_op(p, r->peak_at);
	int64_t bytes = 0;
	int remat = 0;
	const char *where = at ? ir_ctx_printf(p->c, "'%s'", ir_op_name(at->code)) : "?";
	for (int i = 0; i < n; i++) {
		bytes += done[i].bytes;
		remat += done[i].remat;
		if (at && (at == done[i].load || at == done[i].store))
			where = ir_ctx_printf(p->c, "the %s of '%%%s'",
			                      at == done[i].load ? "reload" : "store",
			                      done[i].v->name ? done[i].v->name : "<unnamed>");
	}
	const char *moved =
	    !remat      ? ir_ctx_printf(p->c, "%d of them waiting in shared memory (%lld bytes)", n,
	                                (long long)bytes)
	    : remat < n ? ir_ctx_printf(p->c,
	                                "%d of them waiting in shared memory (%lld bytes) and %d "
	                                "loaded again where read",
	                                n - remat, (long long)bytes, remat)
	                : ir_ctx_printf(p->c, "%d of them loaded again where read", n);
	return ir_ctx_printf(p->c,
	                     "with %s, the tiles live at %s (line %u) would still need %d "
	                     "registers, over %d",
	                     moved, where, at ? at->loc.line : 0,
	                     r->slots > r->peak ? r->slots : r->peak, r->budget - margin);
}

/* The checker on the module, its diagnostics kept to itself: the first error's text in `first`
 * (the kernels it proved before are not proved again). */
typedef struct Quiet {
	char first[320];
} Quiet;

static void
quiet_diag(void *ud, const IrDiag *d)
{
	Quiet *q = ud;
	if (d->sev == IR_SEV_ERROR && !q->first[0])
		snprintf(q->first, sizeof q->first, "%s", d->msg ? d->msg : "an error");
}

static bool
proves(IrModule *m, char *first, size_t n)
{
	Quiet q = {""};
	IrDiagHold held;
	ir_diag_hold(m->ctx, &held, quiet_diag, &q);
	bool ok = pass_check_invariants_with(m, &(PassCkOpts){0});
	ir_diag_release(m->ctx, &held);
	snprintf(first, n, "%s", q.first);
	return ok;
}

/* Spills (spill.c) while a group's tiles exceed its budget less `margin` and a tile can wait;
 * the budgets are computed on a dry run (nothing reported, nothing written), so that the run
 * after this one chooses them from the tiles that remain. With a margin (the reserve) a group
 * with no tile that can wait keeps what it has (its budget alone must hold it), and the buffers
 * may take at most half of the shared memory the kernel leaves (the lowering needs some of its
 * own). When that does not make every group fit, the buffers would not fit the target's shared
 * memory, or the checker does not prove the rewritten kernel, the kernel is put back as it was
 * and *note says why, for group *note_g (NULL when it fits). Leaves p built afresh for the
 * kernel in the module (*k); false when a tile has no layout (p is then freed). */
static bool
attempt(Run *run, IrOp **k, const TargetInfo *t, RaPlan *p, int margin, const char **note,
        int *note_g)
{
	IrModule *m = run->m;
	char why[512];
	IrMap vmap;
	ir_map_init(&vmap, m->ctx->al);
	IrOp *saved = ir_op_clone(m, *k, &vmap);
	ir_map_free(&vmap);
	RaSpill done[RA_MAX_SPILLS];
	/* Groups left as they are in margin mode (every rebuilt plan has the same groups). */
	bool *keep = calloc((size_t)p->ngroup, sizeof *keep);
	int n = 0;
	int64_t bytes = 0, used = smem_used(*k);
	int64_t room = t->smem_limit ? t->smem_limit - used : INT64_MAX;
	if (margin && room > 0)
		room /= 2;
	*note = NULL;
	*note_g = -1;
	for (;;) {
		p->dry = true;
		ra_plan_budgets(p, m);
		int g = -1;
		for (int i = 0; i < p->ngroup && g < 0; i++) {
			RaGroup *r = &p->group[i];
			int mg = r->chosen || !r->slots || keep[i] ? 0 : margin;
			if (t->regfile && r->slots + mg > r->budget)
				g = i;
		}
		if (g < 0) {
			if (bytes > room)
				*note = ir_ctx_printf(
				    p->c,
				    "keeping tiles in shared memory instead would take %lld bytes of it, "
				    "%lld with the kernel's own buffers, over the %lld target '%s' has",
				    (long long)bytes, (long long)(used + bytes),
				    (long long)(margin ? used + room : t->smem_limit), t->name);
			break;
		}
		int mg = p->group[g].chosen ? 0 : margin;
		if (n == RA_MAX_SPILLS || !ra_spill(p, m, g, mg, &done[n], why, sizeof why)) {
			if (mg && p->group[g].slots <= p->group[g].budget) {
				keep[g] = true; /* it fits its budget: no reserve there, but no error */
				continue;
			}
			*note = n ? still_over(p, g, mg, done, n)
			          : ir_ctx_printf(p->c,
			                          "no tile live there can wait in shared memory: %s",
			                          why);
			*note_g = g;
			break;
		}
		bytes += done[n++].bytes;
		ra_plan_free(p);
		if (!plan_of(run, *k, t, p)) {
			free(keep);
			return false;
		}
	}
	free(keep);
	p->dry = false;
	if (!n)
		return true;
	char first[320];
	if (!*note && !proves(m, first, sizeof first))
		*note = ir_ctx_printf(p->c,
		                      "keeping tiles in shared memory instead gives a kernel "
		                      "check-invariants does not prove: %s",
		                      first);
	if (*note) {
		/* Back to the kernel as written: the error is about what the user wrote. */
		ir_op_insert_before(*k, saved);
		ir_op_erase(*k);
		*k = saved;
	}
	ra_plan_free(p);
	if (!plan_of(run, *k, t, p))
		return false;
	for (int i = 0; !*note && i < n; i++)
		spill_remark(p, &done[i]);
	return true;
}

/* Tiles wait in shared memory where that leaves each group the reserve for what is not a
 * tile; failing that, where it makes each group fit its budget; failing that the kernel is as
 * written and p->nospill says why (for the group p->nospill_group). */
static bool
spill(Run *run, IrOp **k, const TargetInfo *t, RaPlan *p)
{
	const char *note = NULL;
	int g = -1;
	if (!attempt(run, k, t, p, (int)run->kreserve, &note, &g))
		return false;
	if (note && !attempt(run, k, t, p, 0, &note, &g))
		return false;
	p->nospill = note;
	p->nospill_group = g;
	return true;
}

static bool
kernel(Run *run, IrOp *k)
{
	IrCtx *c = run->m->ctx;
	const TargetInfo *t = kernel_target(c, k, run->o->target);
	if (!t || !t->regfile)
		return true; /* the interpreter has no register file */
	run->kreserve = run->reserve;
	run->kremat = run->remat;
	for (int i = 0; run->o && i < run->o->nra; i++) {
		if (!k->item[0].s || strcmp(run->o->ra_kernel[i], k->item[0].s))
			continue;
		bool took = false;
		if (!ir_pass_arg(run->o, "reserve") && run->kreserve != run->o->ra_reserve[i]) {
			run->kreserve = run->o->ra_reserve[i];
			took = true;
		}
		if (!ir_pass_arg(run->o, "remat") && run->o->ra_no_remat && run->kremat) {
			run->kremat = 0;
			took = true;
		}
		if (took && run->spill && run->o->ra_applied)
			(*run->o->ra_applied)++;
	}
	RaPlan p;
	if (!plan_of(run, k, t, &p))
		return true; /* a tile no layout holds: the lowering says so if it compiles it */
	if (run->spill && !spill(run, &k, t, &p))
		return true;
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

static bool
collect_kernel(IrOp *op, void *ud)
{
	Run *run = ud;
	if (op->code == IR_OP_KERNEL)
		ir_vec_push(run->m->ctx->al, &run->kernels, &op, sizeof op);
	return true;
}

bool
pass_regalloc(IrModule *m, const IrPassOpts *o)
{
	Run run = {m, o, 0, RA_RESERVE, 1, 1, RA_RESERVE, 1, true, {0}};
	if (!ir_pass_arg_int(m->ctx, o, "regalloc", "verbose", 0, 0, 2, &run.verbose) ||
	    !ir_pass_arg_int(m->ctx, o, "regalloc", "reserve", RA_RESERVE, 0, 232, &run.reserve) ||
	    !ir_pass_arg_int(m->ctx, o, "regalloc", "spill", 1, 0, 1, &run.spill) ||
	    !ir_pass_arg_int(m->ctx, o, "regalloc", "remat", 1, 0, 1, &run.remat))
		return false;
	/* Listed first: spilling may put a kernel back as it was (another op in its place). */
	for (IrOp *op = m->body->first; op; op = op->next)
		ir_walk_op(op, collect_kernel, &run);
	for (int i = 0; i < run.kernels.len; i++)
		kernel(&run, IR_VEC_AT(run.kernels, IrOp *, i));
	ir_vec_free(m->ctx->al, &run.kernels, sizeof(IrOp *));
	return run.ok;
}
