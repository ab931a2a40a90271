/* compile_bench.c — compile latency of a kernel file to an HSACO (or another --emit kind) for an
 * AMDGPU target, stage by stage: the median (and minimum) over N compilations in one process,
 * plus the process CPU time per compilation, which the load of a shared machine disturbs less
 * than wall time. Usage: compile-amdgpu-bench FILE [--target=gfx942] [--emit=hsaco] [-O3] [-n 10]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../backend-amdgpu/amdgpu.h"
#include "../../frontend/frontend.h"
#include "../../passes/passes.h"

enum { ST_PARSE, ST_PASSES, ST_IR, ST_OPT, ST_CODEGEN, ST_LINK, ST_TOTAL, ST_CPU, ST_COUNT };
static const char *const stage_names[ST_COUNT] = {"parse+verify", "passes", "LLVM IR", "LLVM opt", "LLVM codegen",
						  "link (lld)", "total", "CPU (process)"};

static double
cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Errors and warnings to stderr; remarks (shared-memory use) are not news here. */
static void
on_diag(void *ud, const IrDiag *d)
{
	if (d->sev != IR_SEV_REMARK)
		ir_diag_default_handler(ud, d);
}

/* One compilation from text; fills the stage times (seconds). */
static bool
compile_once(const char *path, const LowerTarget *t, const char *emit, int opt, double *st)
{
	IrCtx *c = ir_ctx_new(NULL);
	ir_diag_set_handler(c, on_diag, c);
	double c0 = cpu_now(), t0 = ir_now();
	IrModule *m = fe_parse_file(c, path);
	bool ok = m && ir_verify(m);
	double t1 = ir_now();
	IrPassOpts po = {0};
	po.target = t->info;
	po.dump = stderr;
	if (ok)
		ok = ir_run_pipeline(m, pass_registry, pass_registry_count, "canonicalize,cse,dce,smem-alloc", &po);
	double t2 = ir_now();
	LowerOptions lo = {0};
	lo.emit = emit;
	lo.opt = opt;
	LowerResult r = {0};
	if (ok)
		ok = lower_compile(m, t, &lo, &r);
	double t3 = ir_now();
	st[ST_PARSE] = t1 - t0;
	st[ST_PASSES] = t2 - t1;
	st[ST_IR] = r.t[LOWER_T_IRBUILD];
	st[ST_OPT] = r.t[LOWER_T_OPT];
	st[ST_CODEGEN] = r.t[LOWER_T_CODEGEN];
	st[ST_LINK] = r.t[LOWER_T_ASSEMBLE];
	st[ST_TOTAL] = t3 - t0;
	st[ST_CPU] = cpu_now() - c0;
	lower_result_free(&r);
	if (m)
		ir_module_free(m);
	ir_ctx_free(c);
	return ok;
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *target = amdgpu_gfx942.info->name, *emit = "hsaco";
	int n = 10, opt = 3;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--target=", 9))
			target = argv[i] + 9;
		else if (!strncmp(argv[i], "--emit=", 7))
			emit = argv[i] + 7;
		else if (argv[i][0] == '-' && argv[i][1] == 'O' && argv[i][2] >= '0' && argv[i][2] <= '3' && !argv[i][3])
			opt = argv[i][2] - '0';
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else
			path = argv[i];
	}
	const LowerTarget *t = target_find(target) == amdgpu_gfx90a.info   ? &amdgpu_gfx90a
			       : target_find(target) == amdgpu_gfx942.info ? &amdgpu_gfx942
									   : NULL;
	if (!path || !t || n < 1) {
		fprintf(stderr, "usage: compile-amdgpu-bench FILE [--target=gfx942|gfx90a] [--emit=hsaco|asm|llvm] [-O0..3] [-n N]\n");
		return 2;
	}
	double *s = calloc((size_t)n * ST_COUNT, sizeof *s), first[ST_COUNT];
	for (int i = 0; i < n; i++)
		if (!compile_once(path, t, emit, opt, s + (size_t)i * ST_COUNT)) {
			fprintf(stderr, "compile-amdgpu-bench: %s does not compile for %s\n", path, target);
			return 1;
		}
	memcpy(first, s, sizeof first);
	printf("%s -> %s for %s at -O%d, %d compilations in one process (ms)\n", path, emit, target, opt, n);
	printf("  %-14s %9s %9s %9s\n", "stage", "median", "min", "first");
	double *col = calloc((size_t)n, sizeof *col);
	for (int k = 0; k < ST_COUNT; k++) {
		for (int i = 0; i < n; i++)
			col[i] = s[(size_t)i * ST_COUNT + k];
		qsort(col, (size_t)n, sizeof *col, by_value);
		double med = n % 2 ? col[n / 2] : (col[n / 2 - 1] + col[n / 2]) / 2;
		printf("  %-14s %9.2f %9.2f %9.2f\n", stage_names[k], med * 1e3, col[0] * 1e3, first[k] * 1e3);
	}
	free(col);
	free(s);
	return 0;
}
