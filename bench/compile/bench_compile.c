/* bench_compile.c — ave-bench-compile FILE [TARGET] [N]: compiles FILE to PTX and to a cubin N
 * times (default 10) in one process, as `ave compile` does, and prints the median wall time of each
 * stage (parse+verify, passes, LLVM IR, LLVM opt, LLVM codegen, ptxas) and of the whole, plus the
 * process's CPU time per compile. Run it with `cmake --build build --target bench-compile`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../backend-nvptx/nvptx.h"
#include "frontend.h"
#include "passes.h"

enum { STAGES = 8, MAXN = 100 };
static const char *const stage_names[STAGES] = {"parse+verify", "passes",          "LLVM IR",
                                                "LLVM opt",     "LLVM codegen",    "ptxas",
                                                "total",        "check-invariants"};

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
cpu_now(void)
{
	struct rusage s, c;
	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec +
	                c.ru_stime.tv_sec) +
	       (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
	                c.ru_stime.tv_usec) *
	           1e-6;
}

/* Errors only: the remarks of every run would drown the table. */
static void
quiet(void *ud, const IrDiag *d)
{
	if (d->sev == IR_SEV_ERROR)
		ir_diag_default_handler(ud, d);
}

/* One compile; fills t[STAGES] (seconds). */
static bool
compile_once(const char *file, const LowerTarget *t, const char *emit, bool check, double *tm)
{
	IrCtx *c = ir_ctx_new(NULL);
	ir_diag_set_handler(c, quiet, c);
	double t0 = ir_now();
	IrModule *m = fe_parse_file(c, file);
	bool ok = m && ir_verify(m);
	double t1 = ir_now();
	IrPassOpts po = {0};
	po.verify_each = true;
	po.target = t->info;
	/* The driver's pipeline; the invariant checker is timed on its own. */
	ok = ok && ir_run_pipeline(m, pass_registry, pass_registry_count,
	                           "canonicalize,cse,dce,prefetch", &po);
	double tc = ir_now();
	if (ok && check && ir_pass_find(pass_registry, pass_registry_count, "check-invariants", 16))
		ok =
		    ir_run_pipeline(m, pass_registry, pass_registry_count, "check-invariants", &po);
	double tc2 = ir_now();
	ok = ok && ir_run_pipeline(m, pass_registry, pass_registry_count, "smem-alloc", &po);
	double t2 = ir_now();
	LowerOptions lo = {0};
	lo.emit = emit;
	lo.opt = 3;
	LowerResult r = {0};
	ok = ok && lower_compile(m, t, &lo, &r);
	double t3 = ir_now();
	tm[0] = t1 - t0;
	tm[1] = (t2 - t1) - (tc2 - tc);
	tm[7] = tc2 - tc;
	tm[2] = r.t[LOWER_T_IRBUILD];
	tm[3] = r.t[LOWER_T_OPT];
	tm[4] = r.t[LOWER_T_CODEGEN];
	tm[5] = r.t[LOWER_T_ASSEMBLE];
	tm[6] = t3 - t0;
	lower_result_free(&r);
	ir_module_free(m);
	ir_ctx_free(c);
	return ok;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ave-bench-compile FILE [sm_90a|sm_80] [N]\n");
		return 2;
	}
	const LowerTarget *t = argc > 2 && target_find(argv[2]) == nvptx_sm80.info ? &nvptx_sm80 : &nvptx_sm90a;
	int n = argc > 3 ? atoi(argv[3]) : 10;
	if (n < 1 || n > MAXN)
		n = 10;
	static const struct {
		const char *emit, *title;
		bool check;
	} modes[3] = {{"ptx", "-> ptx", false},
	              {"ptx", "-> ptx, with check-invariants (as `ave compile` runs it)", true},
	              {"cubin", "-> cubin", false}};
	printf("compile latency of %s for %s, median of %d (wall ms; cpu ms per compile)\n",
	       argv[1], t->info->name, n);
	for (int e = 0; e < 3; e++) {
		static double s[STAGES][MAXN];
		double warm[STAGES];
		if (!compile_once(argv[1], t, modes[e].emit, modes[e].check, warm)) { /* warm-up */
			fprintf(stderr, "compile failed\n");
			return 1;
		}
		double cpu0 = cpu_now();
		for (int i = 0; i < n; i++) {
			double tm[STAGES] = {0};
			if (!compile_once(argv[1], t, modes[e].emit, modes[e].check, tm))
				return 1;
			for (int k = 0; k < STAGES; k++)
				s[k][i] = tm[k];
		}
		double cpu = (cpu_now() - cpu0) / n;
		printf("\n%s\n", modes[e].title);
		for (int k = 0; k < STAGES; k++) {
			qsort(s[k], (size_t)n, sizeof(double), cmp);
			if ((k == 5 && strcmp(modes[e].emit, "cubin")) ||
			    (k == 7 && !modes[e].check))
				continue;
			printf("  %-16s %8.2f\n", stage_names[k], s[k][n / 2] * 1e3);
		}
		printf("  %-16s %8.2f\n", "cpu", cpu * 1e3);
	}
	return 0;
}
