/* ave-rt-run — runs a kernel bundle (`ave compile --emit=bundle`) on a device. It links only the
 * runtime (no LLVM, no Z3), so it goes where kernels ship: a GPU machine without a compiler.
 *   ave-rt-run BUNDLE --device=cuda|hip|host --grid=X[,Y[,Z]] --arg NAME=VALUE... --out NAME=F.npy
 * VALUE: FILE.npy, rand:DIMS:DTYPE:SEED, zeros:DIMS:DTYPE or a scalar literal (as `ave run`). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static int
usage(FILE *f, int rc)
{
	fputs("usage: ave-rt-run BUNDLE [--device=cuda|hip|host] [--grid=X[,Y[,Z]]]\n"
	      "                  [--arg NAME=VALUE]... [--out NAME=FILE.npy]... [--print-stats]\n"
	      "                  [--repeat=N [--flops=F]]   (time N more launches; F: work of one)\n"
	      "                  [--schedules=N] [--seed=S]   (host device)\n"
	      "       ave-rt-run --version\n",
	      f);
	return rc;
}

static bool
named(const char *s, RunArg *out)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || !eq[1])
		return false;
	out->name = strndup(s[0] == '%' ? s + 1 : s, (size_t)(eq - s) - (s[0] == '%'));
	out->value = eq + 1;
	return true;
}

int
main(int argc, char **argv)
{
	const char *bundle = NULL;
	RunRequest r = {.device = "cuda", .grid = {1, 1, 1}, .schedules = 1};
	RunArg *args = calloc((size_t)argc, sizeof *args), *outs = calloc((size_t)argc, sizeof *outs);
	int na = 0, no = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strncmp(a, "--device=", 9)) {
			r.device = a + 9;
		} else if (!strncmp(a, "--grid=", 7)) {
			char *e;
			const char *s = a + 7;
			for (int d = 0; d < 3 && *s; d++) {
				r.grid[d] = strtoll(s, &e, 10);
				if (e == s || r.grid[d] < 1)
					return usage(stderr, 2);
				s = *e == ',' ? e + 1 : e;
			}
		} else if ((!strcmp(a, "--arg") || !strcmp(a, "--out")) && v) {
			if (!named(v, a[2] == 'a' ? &args[na++] : &outs[no++]))
				return usage(stderr, 2);
			i++;
		} else if (!strncmp(a, "--schedules=", 12)) {
			r.schedules = atoi(a + 12);
		} else if (!strncmp(a, "--seed=", 7)) {
			r.seed = strtoull(a + 7, NULL, 0);
		} else if (!strcmp(a, "--print-stats")) {
			r.stats = true;
		} else if (!strncmp(a, "--repeat=", 9)) {
			r.repeat = atoi(a + 9);
		} else if (!strncmp(a, "--flops=", 8)) {
			r.flops = strtod(a + 8, NULL);
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			return usage(stdout, 0);
		} else if (!strcmp(a, "--version")) {
			printf("ave-rt-run %s\n", AVE_VERSION);
			return 0;
		} else if (a[0] != '-' && !bundle) {
			bundle = a;
		} else {
			return usage(stderr, 2);
		}
	}
	if (!bundle)
		return usage(stderr, 2);
	r.args = args;
	r.nvalues = na;
	r.outs = outs;
	r.nouts = no;
	int rc = 1;
	IrCtx *c = ir_ctx_new(NULL);
	aveContextCreate(&r.ctx);
	aveContextSetDiagnosticHandler(r.ctx, run_print_diag, (void *)"ave-rt-run");
	if (!aveKernelLoadBundle(r.ctx, bundle, &r.kernel)) {
		r.nargs = aveKernelGetNumArgs(r.kernel);
		IrType **types = calloc((size_t)r.nargs + 1, sizeof *types);
		const char **names = calloc((size_t)r.nargs + 1, sizeof *names);
		r.types = types;
		r.names = names;
		if (run_kernel_types(c, r.kernel, types, names))
			rc = run_on_device(c, &r);
		free(types);
		free(names);
		aveKernelDestroy(r.kernel);
	}
	aveContextDestroy(r.ctx);
	ir_ctx_free(c);
	for (int i = 0; i < na; i++)
		free((char *)args[i].name);
	for (int i = 0; i < no; i++)
		free((char *)outs[i].name);
	free(args);
	free(outs);
	return rc;
}
