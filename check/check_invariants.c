/* check_invariants.c — the check-invariants pass (SPEC §5.8): for each kernel with something to
 * prove, builds the model (roles, sites, phase structure) and runs the checks. It never changes
 * the IR; a failure is an error with a counterexample (docs/invariants.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"

typedef struct Run {
	const PassCkOpts *co;
	PassCkStats *st;
	CkSmt smt;
	bool smt_made;
} Run;

/* FNV-1a of the kernel as printed: equal for the same program. 0 when it cannot be printed. */
static uint64_t
kernel_hash(IrModule *m, IrOp *kernel)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return 0;
	ir_op_print(m, kernel, f, 0);
	fclose(f);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	free(buf);
	return h ? h : 1;
}

static bool
proved_before(IrModule *m, uint64_t h)
{
	for (int i = 0; h && i < m->proved.len; i++)
		if (IR_VEC_AT(m->proved, uint64_t, i) == h)
			return true;
	return false;
}

static void
check_kernel(IrModule *m, IrOp *kernel, Run *run)
{
	const PassCkOpts *co = run->co;
	/* A kernel proved already (by the pass that built it) and unchanged since is not proved
	 * again; the strict mode of `ave check` always proves. */
	uint64_t h = co->gstore_strict || co->stats ? 0 : kernel_hash(m, kernel);
	if (proved_before(m, h))
		return;
	int errs = m->ctx->nerrors;
	Ck k;
	memset(&k, 0, sizeof k);
	k.m = m;
	k.c = m->ctx;
	k.opts = co;
	k.max_hops = co->max_hops > 0 ? co->max_hops : 3;
	k.hops = k.max_hops;
	pass_ck_begin(&k, kernel);
	if (pass_ck_collect(&k)) {
		/* Only modules with something to prove pay for a solver context. */
		run->st->kernels++;
		if (!run->smt_made) {
			double t0 = ir_now();
			pass_ck_smt_init(&run->smt, k.c->al, co->timeout_ms, co->rlimit, run->st);
			run->st->setup_s = ir_now() - t0;
		}
		run->smt_made = true;
		k.smt = &run->smt;
		k.smt->overflow = false; /* the solver context is the module's; overflow is per kernel */
		pass_ck_check_kernel(&k);
	}
	pass_ck_end(&k);
	if (h && m->ctx->nerrors == errs)
		ir_vec_push(m->ctx->al, &m->proved, &h, sizeof h);
}

static void
walk_block(IrModule *m, IrBlock *b, Run *run)
{
	for (IrOp *op = b->first; op; op = op->next) {
		if (op->code == IR_OP_KERNEL)
			check_kernel(m, op, run);
		else if (op->code == IR_OP_MODULE)
			walk_block(m, op->reg[0].block, run);
	}
}

bool
pass_check_invariants_with(IrModule *m, const PassCkOpts *co)
{
	PassCkOpts dflt = {0};
	PassCkStats local;
	if (!co)
		co = &dflt;
	PassCkStats *st = co->stats ? co->stats : &local;
	memset(st, 0, sizeof *st);
	IrCtx *c = m->ctx;
	const char *code = c->code;
	c->code = "check-invariants";
	int errs = c->nerrors;
	double t0 = ir_now();
	Run run = {co, st, {0}, false};
	walk_block(m, m->body, &run);
	if (run.smt_made)
		pass_ck_smt_free(&run.smt);
	st->total_s = ir_now() - t0;
	c->code = code;
	return c->nerrors == errs;
}

bool
pass_check_invariants(IrModule *m, const IrPassOpts *o)
{
	int64_t ms;
	if (!ir_pass_arg_int(m->ctx, o, "check-invariants", "timeout-ms", 0, 0, 3600000, &ms))
		return false;
	if (!ms)
		return pass_check_invariants_with(m, NULL);
	PassCkOpts co = {0};
	co.timeout_ms = (unsigned)ms;
	return pass_check_invariants_with(m, &co);
}
