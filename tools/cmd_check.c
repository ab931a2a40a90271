/* cmd_check.c — `ave check FILE`: parse, verify and prove the invariants (check-invariants);
 * --stats reports the solver's work. */
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "../regalloc/regalloc.h"
#include "../runtime/jit.h"
#include "driver.h"

bool
driver_common_opt(DriverCommon *c, const char *a)
{
	if (!strcmp(a, "--diagnostics-format=json")) {
		c->json = true;
		return true;
	}
	if (!strcmp(a, "--diagnostics-format=text")) {
		c->json = false;
		return true;
	}
	return false;
}

IrCtx *
driver_ctx(DriverCommon *o, DiagSink *sink)
{
	IrCtx *c = ir_ctx_new(NULL);
	c->tool = o->tool;
	c->input = o->input && strcmp(o->input, "-") ? o->input : NULL;
	memset(sink, 0, sizeof *sink);
	sink->c = c;
	sink->json = o->json;
	ir_diag_set_handler(c, diag_sink_handler, sink);
	return c;
}

static const char usage_text[] =
	"usage: ave check [options] FILE\n"
	"Parses and verifies FILE, then proves its tag assertions and the built-in\n"
	"barrier and shared-memory invariants; exits 1 if it has errors.\n"
	"\n"
	"options:\n"
	"  --diagnostics-format=F   text (default) or json\n"
	"  --stats                  report the number of solver queries and their time\n"
	"  --timeout-ms=N           per-query solver timeout (default 2000)\n"
	"  --rlimit=N               per-query solver resource limit (deterministic)\n"
	"  --max-hops=N             barrier hops in a happens-before chain (default 3)\n"
	"  -h, --help               this help\n";

static bool
has_roles(IrOp *op, void *ud)
{
	bool *found = ud;
	*found |= op->code == IR_OP_WARP_SPECIALIZE;
	return !*found;
}

/* Keeps in blk (a copy of the module) the kernels whose register plan `ave check` makes: those
 * that name their target and hold roles (written by hand: the compile's passes leave them as
 * they are). Others go: the passes may still move their tiles (pipeline, warp-specialize), so
 * their plan is the compile's to make. Returns how many stay. */
static int
keep_planned(IrCtx *c, IrBlock *blk)
{
	int n = 0;
	for (IrOp *op = blk->first, *next; op; op = next) {
		next = op->next;
		if (op->code == IR_OP_MODULE) {
			n += keep_planned(c, op->reg[0].block);
			continue;
		}
		if (op->code != IR_OP_KERNEL)
			continue;
		bool roles = false;
		ir_walk_op(op, has_roles, &roles);
		if (roles && ir_op_attr(op, c->kw.target))
			n++;
		else
			ir_op_erase(op);
	}
	return n;
}

/* SPEC 5.8's "register budgets add up", for the kernels with roles that name their target: the
 * register plan the compile makes (regalloc, on a copy of the module: its spills and chosen
 * budgets are the compile's business), so that a role whose tiles cannot fit its regs(n) is
 * reported here too. The verifier has checked the pool rule. */
static bool
register_plans(IrModule *m)
{
	IrModule *copy = ir_module_clone(m);
	IrPassOpts po = {0};
	po.tile_regs = jit_tile_regs;
	bool ok = !keep_planned(m->ctx, copy->body) || pass_regalloc(copy, &po);
	ir_module_free(copy);
	return ok;
}

int
cmd_check(int argc, char **argv)
{
	DriverCommon o = {.tool = "ave check"};
	PassCkStats st;
	PassCkOpts co = {0};
	bool stats = false;
	co.stats = &st;
	for (int i = 1; i < argc; i++) {
		if (driver_common_opt(&o, argv[i]))
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--stats")) {
			stats = true;
			continue;
		}
		if (!strncmp(argv[i], "--timeout-ms=", 13)) {
			co.timeout_ms = (unsigned)strtoul(argv[i] + 13, NULL, 10);
			continue;
		}
		if (!strncmp(argv[i], "--rlimit=", 9)) {
			co.rlimit = (unsigned)strtoul(argv[i] + 9, NULL, 10);
			continue;
		}
		if (!strncmp(argv[i], "--max-hops=", 11)) {
			co.max_hops = atoi(argv[i] + 11);
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			tool_unknown_option("ave check", argv[i], usage_text);
			return 2;
		}
		if (o.input) {
			fprintf(stderr, "ave check: more than one input file ('%s', '%s')\n", o.input,
			        argv[i]);
			return 2;
		}
		o.input = argv[i];
	}
	if (!o.input) {
		fputs("ave check: no input file\n", stderr);
		return 2;
	}
	DiagSink sink;
	IrCtx *c = driver_ctx(&o, &sink);
	double t0 = ir_now();
	IrModule *m = fe_parse_file(c, o.input);
	bool ok = m && ir_verify(m);
	memset(&st, 0, sizeof st);
	if (ok)
		ok = pass_smem_fits(m);
	co.gstore_strict = true;
	/* A kernel with `overlap` is checked as every target compiles it: after the pass (which
	 * says why when it leaves one as written). */
	if (ok)
		ok = pass_overlap(m, NULL);
	if (ok)
		ok = pass_check_invariants_with(m, &co);
	if (ok)
		ok = register_plans(m);
	double total = ir_now() - t0;
	if (stats)
		fprintf(stderr,
		        "check-invariants: %d kernel%s, %d queries (%d sat, %d unsat, %d unknown), "
		        "solver %.1f ms, %.2f ms/query, slowest %.2f ms, solver setup %.1f ms, "
		        "pass %.1f ms, "
		        "total %.1f ms\n",
		        st.kernels, st.kernels == 1 ? "" : "s", st.queries, st.sat, st.unsat,
		        st.unknown, st.solver_s * 1e3,
		        st.queries ? st.solver_s * 1e3 / st.queries : 0.0, st.max_query_s * 1e3,
		        st.setup_s * 1e3, st.total_s * 1e3, total * 1e3);
	ir_module_free(m);
	diag_sink_summary(&sink);
	ir_ctx_free(c);
	return ok ? 0 : 1;
}
