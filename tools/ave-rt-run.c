/* ave-rt-run — runs a kernel bundle (`ave compile --emit=bundle`) on a device. It links only the
 * runtime (no LLVM, no Z3), so it goes where kernels ship: a GPU machine without a compiler.
 *   ave-rt-run BUNDLE --device=cuda|hip|host --grid=X[,Y[,Z]] --arg NAME=VALUE... --out NAME=F.npy
 * VALUE: FILE.npy, rand:DIMS:DTYPE:SEED, zeros:DIMS:DTYPE or a scalar literal (as `ave run`). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diagcheck.h"
#include "run.h"

static const char usage_text[] =
	"usage: ave-rt-run BUNDLE [--device=cuda|hip|host] [--grid=X[,Y[,Z]]]\n"
	"                  [--arg NAME=VALUE]... [--out NAME=FILE.npy]... [--print-stats]\n"
	"                  [--repeat=N [--flops=F]]   (time N more launches; F: work of one)\n"
	"                  [--schedules=N] [--seed=S]   (the host device)\n"
	"                  [--world=N [--launches=N]]   (a world of N ranks on the device)\n"
	"       ave-rt-run --version | -h | --help\n"
	"--device defaults to cuda and --grid to 1 (one CTA); VALUE is FILE.npy, rand:DIMS:DTYPE:SEED,\n"
	"zeros:DIMS:DTYPE or a scalar literal, as for 'ave run'. On the host device a warning names\n"
	"each output with elements no CTA wrote, and --print-stats prints what 'ave run' prints.\n"
	"--world=N launches a communicating kernel on N ranks (aveWorldLaunch): NAME@R=VALUE is\n"
	"rank R's value, '{r}' in a VALUE or FILE the rank, '@SYM=VALUE' fills symmetric buffer\n"
	"@SYM and '--out @SYM=FILE.npy' writes it; outputs are written per rank as FILE.rankR.npy.\n";

static int
usage(FILE *f, int rc)
{
	fputs(usage_text, f);
	return rc;
}

/* A usage error: the message, then a pointer to --help; returns 2. */
static int
bad(const char *what, const char *arg)
{
	fprintf(stderr, "ave-rt-run: %s '%s' (see 'ave-rt-run --help')\n", what, arg);
	return 2;
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

/* Reads the command line into r, args and outs; returns -1 to run, else the exit status. */
static int
parse(int argc, char **argv, RunRequest *rq, RunArg *args, int *na, RunArg *outs, int *no,
      const char **bundle)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strncmp(a, "--device=", 9)) {
			rq->device = a + 9;
			char near[32];
			if (!strncmp(rq->device, "sim-", 4))
				return bad("simulated devices run under 'ave run --device=sim-T' (ave-rt-run "
					   "links only libave_rt): --device", rq->device);
			if (strcmp(rq->device, "cuda") && strcmp(rq->device, "hip") &&
			    strcmp(rq->device, "host")) {
				if (tool_closest_word(rq->device, "cuda|hip|host", near))
					fprintf(stderr, "ave-rt-run: unknown device '%s'; did you mean '%s'? "
						"(cuda, hip or host)\n", rq->device, near);
				else
					fprintf(stderr, "ave-rt-run: unknown device '%s' (cuda, hip or host)\n",
						rq->device);
				return 2;
			}
		} else if (!strncmp(a, "--grid=", 7)) {
			char *e;
			const char *s = a + 7;
			for (int d = 0; d < 3 && *s; d++) {
				rq->grid[d] = strtoll(s, &e, 10);
				if (e == s || rq->grid[d] < 1 || (*e && *e != ',') || (d == 2 && *e))
					return bad("--grid expects X[,Y[,Z]] of positive integers, found", a + 7);
				s = *e == ',' ? e + 1 : e;
			}
		} else if ((!strcmp(a, "--arg") || !strcmp(a, "--out")) && v) {
			if (!named(v, a[2] == 'a' ? &args[(*na)++] : &outs[(*no)++]))
				return bad(a[2] == 'a' ? "--arg expects NAME=VALUE, found"
						       : "--out expects NAME=FILE.npy, found", v);
			i++;
		} else if (!strncmp(a, "--schedules=", 12)) {
			char *e;
			long n = strtol(a + 12, &e, 10);
			if (e == a + 12 || *e || n < 1 || n > 1000000)
				return bad("--schedules expects a count in [1, 1000000], found", a + 12);
			rq->schedules = (int)n;
		} else if (!strncmp(a, "--seed=", 7)) {
			rq->seed = strtoull(a + 7, NULL, 0);
		} else if (!strncmp(a, "--world=", 8) || !strncmp(a, "--launches=", 11)) {
			bool w = a[2] == 'w';
			const char *x = a + (w ? 8 : 11);
			char *e;
			long n = strtol(x, &e, 10);
			if (e == x || *e || n < 1 || n > (w ? 64 : 1000))
				return bad(w ? "--world expects a rank count in [1, 64], found"
					     : "--launches expects a count in [1, 1000], found", x);
			*(w ? &rq->world : &rq->launches) = (int)n;
		} else if (!strcmp(a, "--print-stats")) {
			rq->stats = true;
		} else if (!strncmp(a, "--repeat=", 9)) {
			char *e;
			long n = strtol(a + 9, &e, 10);
			if (e == a + 9 || *e || n < 0 || n > 1000000)
				return bad("--repeat expects a count in [0, 1000000], found", a + 9);
			rq->repeat = (int)n;
		} else if (!strncmp(a, "--flops=", 8)) {
			rq->flops = strtod(a + 8, NULL);
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			return usage(stdout, 0);
		} else if (!strcmp(a, "--version")) {
			printf("ave-rt-run %s\n", AVE_VERSION);
			return 0;
		} else if (a[0] != '-' && !*bundle) {
			*bundle = a;
		} else if (a[0] != '-') {
			return bad("more than one bundle: found", a);
		} else {
			tool_unknown_option("ave-rt-run", a, usage_text);
			return 2;
		}
	}
	if (!*bundle) {
		fputs("ave-rt-run: no bundle (see 'ave-rt-run --help')\n", stderr);
		return 2;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	const char *bundle = NULL;
	RunRequest r = {.tool = "ave-rt-run", .device = "cuda", .grid = {1, 1, 1}, .schedules = 1,
			.world = 1};
	RunArg *args = calloc((size_t)argc, sizeof *args), *outs = calloc((size_t)argc, sizeof *outs);
	int na = 0, no = 0;
	int rc = parse(argc, argv, &r, args, &na, outs, &no, &bundle);
	if (rc >= 0)
		goto done;
	r.args = args;
	r.nvalues = na;
	r.outs = outs;
	r.nouts = no;
	rc = 1;
	IrCtx *c = ir_ctx_new(NULL);
	aveContextCreate(&r.ctx);
	RunDiag rd = {"ave-rt-run", 0, 0};
	aveContextSetDiagnosticHandler(r.ctx, run_print_diag, &rd);
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
	ir_diag_summary(rd.nerrors, rd.nwarnings, stderr);
	ir_ctx_free(c);
done:
	for (int i = 0; i < na; i++)
		free((char *)args[i].name);
	for (int i = 0; i < no; i++)
		free((char *)outs[i].name);
	free(args);
	free(outs);
	return rc;
}
