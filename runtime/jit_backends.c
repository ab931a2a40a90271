/* jit_backends.c — the targets this build can compile for and the compile pipeline, shared by
 * `ave compile` and aveKernelCompile so that both produce the same binaries and metadata. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#ifdef AVE_HAVE_NVPTX
#include "../backend-nvptx/nvptx.h"
#endif
#ifdef AVE_HAVE_AMDGPU
#include "../backend-amdgpu/amdgpu.h"
#endif

static const LowerTarget *const targets[] = {
#ifdef AVE_HAVE_NVPTX
	&nvptx_sm90a,
	&nvptx_sm80,
#endif
#ifdef AVE_HAVE_AMDGPU
	&amdgpu_gfx942,
	&amdgpu_gfx90a,
#endif
	NULL,
};

const LowerTarget *
jit_lower_target(const TargetInfo *t)
{
	for (int i = 0; targets[i]; i++)
		if (targets[i]->info == t)
			return targets[i];
	return NULL;
}

static char target_names_buf[256];

static void
fill_target_names(void)
{
	strcpy(target_names_buf, target_table[TARGET_HOST].name);
	for (int i = 0; targets[i]; i++) {
		strcat(target_names_buf, ", ");
		strcat(target_names_buf, targets[i]->info->name);
	}
}

const char *
jit_target_names(void)
{
	/* Filled once: threads reporting "target not available" at once must not race on it. */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, fill_target_names);
	return target_names_buf;
}

bool
jit_tile_regs(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs)
{
	const LowerTarget *lt = jit_lower_target(t);
	return lt ? lower_tile_regs(c, kernel, lt, regs) : ra_blocked_regs(c, kernel, t, regs);
}

static bool
run_pipeline(IrModule *m, const TargetInfo *target, const char *pl, const IrPassOpts *hooks)
{
	IrPassOpts po = {0};
	po.verify_each = true;
	po.target = target;
	po.dump = stderr;
	if (hooks) {
		po.after_pass = hooks->after_pass;
		po.after_pass_ud = hooks->after_pass_ud;
		po.nra = hooks->nra;
		po.ra_kernel = hooks->ra_kernel;
		po.ra_reserve = hooks->ra_reserve;
		po.ra_no_remat = hooks->ra_no_remat;
		po.ra_applied = hooks->ra_applied;
	}
	po.tile_regs = jit_tile_regs;
	return ir_run_pipeline(m, pass_registry, pass_registry_count, pl, &po);
}

static bool
too_long(IrModule *m, size_t max)
{
	ir_error(m->ctx, (IrLoc){0, 0, 0}, "the pipeline is longer than %zu bytes", max);
	return false;
}

/* The extra passes first, then the default pipeline (passes/registry.c); an unknown pass or
 * option is an error. */
bool
jit_compile_pipeline(IrModule *m, const TargetInfo *target, bool check, const char *extra,
		     const IrPassOpts *hooks)
{
	char dflt[512], pl[1024];
	pass_default_pipeline(target, check, dflt, sizeof dflt);
	int n = snprintf(pl, sizeof pl, "%s%s%s", extra && *extra ? extra : "",
			 extra && *extra && dflt[0] ? "," : "", dflt);
	if (n < 0 || (size_t)n >= sizeof pl)
		return too_long(m, sizeof pl - 1);
	return run_pipeline(m, target, pl, hooks);
}

bool
jit_run_passes(IrModule *m, const TargetInfo *target, bool check, const char *passes,
	       const IrPassOpts *hooks)
{
	char pl[2048];
	if (!pass_expand_pipeline(target, check, passes, pl, sizeof pl))
		return too_long(m, sizeof pl - 1);
	return run_pipeline(m, target, pl, hooks);
}

bool
jit_lower_replans(const LowerTarget *t, const LowerOptions *lo)
{
	return t && lo->emit && (!strcmp(lo->emit, "cubin") || !strcmp(lo->emit, "hsaco")) &&
	       lo->opt > 0 && lo->debug < 2;
}

enum { MAX_REPLAN = 16 };

static bool
remat_load(IrOp *op, void *ud)
{
	bool *found = ud;
	*found |= ra_remat_load(op);
	return !*found;
}

/* Whether regalloc loaded a tile of kernel `name` again where it is read (its `.remat`
 * loads). */
static bool
remats(IrModule *m, const char *name)
{
	bool found = false;
	for (IrOp *op = m->body->first; op && !found; op = op->next)
		if (op->code == IR_OP_KERNEL && op->item[0].s && !strcmp(op->item[0].s, name))
			ir_walk_op(op, remat_load, &found);
	return found;
}

/* The index of `name` among the n names, or n. */
static int
entry(const char *const *names, int n, const char *name)
{
	int e = 0;
	while (e < n && strcmp(names[e], name))
		e++;
	return e;
}

/* What a compile again says, shown but for its warnings: the first compile gave them. */
static void
again_diag(void *ud, const IrDiag *d)
{
	const IrDiagHold *held = ud;
	if (d->sev != IR_SEV_WARNING && held->h)
		held->h(held->ud, d);
}

bool
jit_lower(IrModule **m, IrModule *orig, const LowerTarget *t, LowerOptions *lo,
	  LowerResult *res, JitPipeFn pipe, void *ud, const IrPassOpts *hooks)
{
	IrCtx *c = (*m)->ctx;
	IrModule *first = *m;
	lo->replan = orig && jit_lower_replans(t, lo);
	bool ok = lower_compile(*m, t, lo, res);
	const char *names[MAX_REPLAN];
	int reserves[MAX_REPLAN], prev[MAX_REPLAN], over[MAX_REPLAN + 1] = {0}, n = 0;
	const char *stuck = NULL; /* why compiling again would change nothing */
	for (int round = 0; ok && lo->replan && round < 3 && !stuck; round++) {
		bool again = false, upd[MAX_REPLAN] = {false};
		for (int i = 0; i < res->nkernels; i++) {
			LowerKernelInfo *k = &res->kernels[i];
			if (!k->replan)
				continue;
			int e = entry(names, n, k->name);
			if (e == MAX_REPLAN)
				continue;
			int64_t spilled = k->spill_stores > k->spill_loads ? k->spill_stores
			                                                   : k->spill_loads;
			int need = k->regs + (int)((spilled + 3) / 4) - k->regalloc_peak + 8;
			int cur = e < n ? reserves[e] : RA_RESERVE;
			int want = need > cur + 8 ? need : cur + 8;
			int r = (want + 7) / 8 * 8;
			/* Tiles loaded again where they are read need address registers where the
			 * pressure is: first the same reserve with them in shared memory instead. */
			if (e == n && remats(*m, k->name))
				r = cur;
			if (r > 232) {
				if (e < MAX_REPLAN)
					over[e] = r; /* more than regalloc may keep */
				continue;
			}
			if (e == n)
				names[n++] = k->name;
			prev[e] = cur;
			reserves[e] = r;
			upd[e] = true;
			again = true;
		}
		if (!again)
			break;
		IrModule *fresh = ir_module_clone(orig);
		IrPassOpts h = hooks ? *hooks : (IrPassOpts){0};
		h.nra = n;
		h.ra_kernel = names;
		h.ra_reserve = reserves;
		/* A tile loaded again needs address registers where the pressure is: shared memory. */
		h.ra_no_remat = true;
		int applied = 0;
		h.ra_applied = &applied;
		IrDiagHold held;
		ir_diag_hold(c, &held, again_diag, &held);
		int before = held.nerrors;
		bool piped = pipe(fresh, &h, ud);
		LowerResult r2 = {0};
		bool lowered = piped && applied && lower_compile(fresh, t, lo, &r2);
		int errors = c->nerrors;
		ir_diag_release(c, &held);
		c->nerrors += errors - before; /* the retry's errors count */
		if (piped && !applied) {
			/* The pipeline's own regalloc options (reserve=, remat=, spill=0) win. */
			stuck = "the pipeline's regalloc options (reserve=, remat=, spill=0) leave "
			        "regalloc no other choice for it";
			lower_result_free(&r2);
			ir_module_free(fresh);
			break;
		}
		if (!lowered) {
			lower_result_free(&r2);
			ir_module_free(fresh);
			ok = false;
			break;
		}
		for (int i = 0; i < r2.nkernels; i++)
			for (int e = 0; e < n; e++)
				if (!upd[e] || strcmp(names[e], r2.kernels[i].name))
					continue;
				else if (prev[e] == reserves[e])
					ir_remark(c, r2.kernels[i].loc,
					          "kernel '@%s': the code generator spilled it to memory "
					          "where regalloc had it load tiles again from global "
					          "memory; compiled again with those tiles waiting in shared "
					          "memory instead%s",
					          r2.kernels[i].name,
					          r2.kernels[i].replan ? " (it still spills)" : "");
				else
					ir_remark(c, r2.kernels[i].loc,
					          "kernel '@%s': the code generator spilled it to memory "
					          "with regalloc keeping %d registers for what is not a tile; "
					          "compiled again keeping %d, so that tiles wait in shared "
					          "memory instead%s",
					          r2.kernels[i].name, prev[e], reserves[e],
					          r2.kernels[i].replan ? " (it still spills)" : "");
		lower_result_free(res);
		*res = r2;
		if (*m != first)
			ir_module_free(*m);
		*m = fresh;
	}
	for (int i = 0; ok && i < res->nkernels; i++) {
		LowerKernelInfo *k = &res->kernels[i];
		if (!k->replan)
			continue;
		int e = entry(names, n, k->name);
		const char *tried =
		    stuck ? stuck
		    : over[e]
		        ? ir_ctx_printf(c, "it would need regalloc to keep %d registers for what is "
		                           "not a tile, more than the 232 it may keep%s",
		                        over[e],
		                        e < n ? ir_ctx_printf(c, " (compiled again keeping %d, it "
		                                                 "still spilled)",
		                                              reserves[e])
		                              : "")
		    : e < n ? ir_ctx_printf(c, "compiled again with regalloc keeping %d registers "
		                               "for what is not a tile (%d by default), it still "
		                               "spills",
		                            reserves[e], RA_RESERVE)
		            : "regalloc could not keep more registers free for it";
		lower_spill_error(c, k, t->info->name, t->info->vendor == TARGET_VENDOR_AMD, tried);
		ok = false;
	}
	return ok;
}

/* jit_build_gpu's pipeline again, for jit_lower. */
static bool
again_default(IrModule *m, const IrPassOpts *hooks, void *ud)
{
	const JitRequest *rq = ud;
	return jit_compile_pipeline(m, rq->target, rq->check, rq->pipeline, hooks);
}

/* The binary a bundle carries for a target. */
static const char *
binary_kind(const LowerTarget *t)
{
	for (int i = 0; t->emits[i]; i++)
		if (!strcmp(t->emits[i], "cubin") || !strcmp(t->emits[i], "hsaco"))
			return t->emits[i];
	return NULL;
}

bool
jit_build_gpu(const JitRequest *rq, JitOutput *out)
{
	IrCtx *c = rq->m->ctx;
	const LowerTarget *t = jit_lower_target(rq->target);
	IrLoc none = {0, 0, 0};
	if (!t || !binary_kind(t)) {
		ir_error(c, none, "target '%s' is not available in this build (targets: %s)",
			 rq->target ? rq->target->name : "?", jit_target_names());
		return false;
	}
	LowerOptions lo = {0};
	lo.emit = rq->sim ? "llvm" : binary_kind(t);
	lo.opt = rq->opt;
	lo.debug = rq->debug;
	lo.kernel = rq->kernel->item[0].s;
	IrModule *orig = jit_lower_replans(t, &lo) ? ir_module_clone(rq->m) : NULL;
	if (!jit_compile_pipeline(rq->m, t->info, rq->check, rq->pipeline, NULL)) {
		if (orig)
			ir_module_free(orig);
		return false;
	}
	LowerResult res = {0};
	IrModule *m = rq->m;
	bool ok = jit_lower(&m, orig, t, &lo, &res, again_default, (void *)rq, NULL);
	if (orig)
		ir_module_free(orig);
	if (ok && res.nkernels != 1) {
		ir_error(c, none, "compiling '@%s' for '%s' produced %d kernels", lo.kernel, t->info->name,
			 res.nkernels);
		ok = false;
	}
	if (ok) {
		size_t n = 0;
		FILE *f = open_memstream(&out->meta, &n);
		lower_write_metadata(c, &res, f);
		fclose(f);
		out->binary = malloc(res.len ? res.len : 1);
		memcpy(out->binary, res.data, res.len);
		out->binary_len = res.len;
	}
	lower_result_free(&res);
	if (m != rq->m)
		ir_module_free(m);
	return ok;
}

/* ---- the targets this build compiles for (ave.h) ---- */

/* Registry order; host always, a GPU target where its backend is built. */
static const TargetInfo *
compiled_target(int i)
{
	int n = 0;
	for (int t = 0; t < TARGET_COUNT; t++) {
		const TargetInfo *ti = &target_table[t];
		if (ti->vendor != TARGET_VENDOR_HOST && !jit_lower_target(ti))
			continue;
		if (n++ == i)
			return ti;
	}
	return NULL;
}

int
aveTargetCount(void)
{
	int n = 0;
	while (compiled_target(n))
		n++;
	return n;
}

const char *
aveTargetName(int i)
{
	const TargetInfo *t = i >= 0 ? compiled_target(i) : NULL;
	return t ? t->name : NULL;
}
