/* cmd_run.c — `ave run FILE --kernel=@k --grid=X[,Y[,Z]] --arg NAME=VALUE ... --out NAME=F.npy`:
 * runs a kernel on a device (today the `host` reference interpreter) with arguments made from
 * .npy files, the `rand:` generator or literals, and writes tensor arguments back as .npy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "../lower/lower.h"
#include "../passes/passes.h"
#include "../runtime/interp/interp.h"
#include "../runtime/rt.h"
#include "driver.h"
#include "run.h"

static const char usage_text[] =
    "usage: ave run FILE [--kernel=@NAME] [--grid=X[,Y[,Z]]] [--device=host|cuda|hip|sim-T]\n"
    "               [--target=T]\n"
    "               [--arg NAME=VALUE]... [--out NAME=FILE.npy]...\n"
    "               [--schedules=N] [--seed=S] [--no-compare] [--print-stats]\n"
    "               [--world=N] [--launches=N] [--print-schedule=@S]\n"
    "               [--diagnostics-format=text|json]\n"
    "\n"
    "Runs kernel @NAME of FILE (--kernel; default the file's only kernel) on a grid of X*Y*Z\n"
    "CTAs (--grid; default 1, one CTA: on the host device a warning names each output with\n"
    "elements no CTA wrote). VALUE is one of:\n"
    "  FILE.npy               a NumPy array (its shape binds the '?' sizes)\n"
    "  rand:DIMS:DTYPE:SEED   reproducible standard-normal values, e.g. rand:128x64:bf16:7\n"
    "  zeros:DIMS:DTYPE       zeros, e.g. zeros:128x128:f32\n"
    "  a literal              for scalar arguments, e.g. --arg K=512\n"
    "--out NAME=FILE.npy writes tensor argument NAME after the run.\n"
    "--world=N runs N ranks (1 to 64) in one process (host, or sim-T: every CTA of every\n"
    "rank resident), each with its own copy of every\n"
    "ave.symm.alloc (zeros unless given). '--arg @SYM=VALUE' fills buffer @SYM and\n"
    "'--out @SYM=FILE.npy' writes it; NAME@R=VALUE gives rank R its own value; '{r}' in a\n"
    "VALUE or FILE stands for the rank. With N > 1, an --out FILE without '{r}' is written\n"
    "once per rank as FILE.rankR.npy. --launches=N launches the kernel N times on the same\n"
    "memory (epochs 1..N). --print-schedule=@S prints chunk schedule @S for N ranks and exits.\n"
    "--schedules=N runs N interleavings of the warp roles (seeds S, S+1, ...) and fails on the\n"
    "first that errors or that leaves a different result (unless --no-compare); --seed=S\n"
    "replays one. --print-stats prints CTAs, tasks, ops, copies, MMA work and the time.\n"
    "--device=cuda|hip compiles the kernel for the device (or --target=T) and runs it there;\n"
    "--device=sim-T (sim-sm_80, sim-sm_90a, sim-gfx90a, sim-gfx942) compiles it for target T\n"
    "and runs the code the backend emits on the CPU, thread by thread (docs/testing.md);\n"
    "FILE may also be a bundle (.avb, from 'ave compile --emit=bundle'), run as it is.\n"
    "-h, --help prints this help.\n"
    "Exit status: 0 success, 1 an error in the kernel or its run, 2 a usage error.\n";

typedef RunArg NamedArg;

static bool
split_named(const char *s, const char *opt, NamedArg *out)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || !eq[1]) {
		fprintf(stderr, "ave run: %s expects NAME=VALUE, found '%s'\n", opt, s);
		return false;
	}
	char *name = strndup(s[0] == '%' ? s + 1 : s, (size_t)(eq - s) - (s[0] == '%'));
	out->name = name;
	out->value = eq + 1;
	out->used = false;
	return true;
}

static bool
parse_grid(const char *s, int64_t grid[3])
{
	grid[0] = grid[1] = grid[2] = 1;
	for (int d = 0; d < 3; d++) {
		char *e;
		errno = 0;
		long long v = strtoll(s, &e, 10);
		if (e == s || errno || v < 1)
			return false;
		grid[d] = v;
		if (!*e)
			return true;
		if (*e != ',')
			return false;
		s = e + 1;
	}
	return false;
}

static bool
parse_u64(const char *s, uint64_t *out)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 0);
	if (e == s || *e || errno || s[0] == '-')
		return false;
	*out = v;
	return true;
}

/* The value of the option `--name=V` or `--name V`; advances *i over a separate value. */
static const char *
opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] == 0 && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

typedef struct RunOpts {
	DriverCommon common;
	const char *kernel, *device, *target;
	int64_t grid[3];
	NamedArg *args, *outs;
	int nargs, nouts;
	InterpOptions io;
	bool stats;
	int world;
	const char *print_schedule;
} RunOpts;

static void
free_opts(RunOpts *o)
{
	for (int i = 0; i < o->nargs; i++)
		free((char *)o->args[i].name);
	for (int i = 0; i < o->nouts; i++)
		free((char *)o->outs[i].name);
	free(o->args);
	free(o->outs);
}

/* Returns 0 when parsed, else the exit status (2 for a usage error, 0 after --help). */
static int
parse_opts(int argc, char **argv, RunOpts *o)
{
	o->grid[0] = o->grid[1] = o->grid[2] = 1;
	o->io.schedules = 1;
	o->world = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (driver_common_opt(&o->common, a))
			continue;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return -1;
		}
		if (!strcmp(a, "--print-stats")) {
			o->stats = true;
		} else if (!strcmp(a, "--no-compare")) {
			o->io.no_compare = true;
		} else if ((v = opt_value(argc, argv, &i, "--kernel"))) {
			o->kernel = v;
		} else if ((v = opt_value(argc, argv, &i, "--device"))) {
			o->device = v;
		} else if ((v = opt_value(argc, argv, &i, "--target"))) {
			o->target = v;
			if (!tool_target("ave run", v, TARGET_ALL))
				return 2;
		} else if ((v = opt_value(argc, argv, &i, "--grid"))) {
			if (!parse_grid(v, o->grid)) {
				fprintf(stderr,
				        "ave run: --grid expects X[,Y[,Z]] of positive integers, "
				        "found '%s'\n",
				        v);
				return 2;
			}
		} else if ((v = opt_value(argc, argv, &i, "--arg"))) {
			o->args = realloc(o->args, sizeof *o->args * (size_t)(o->nargs + 1));
			if (!split_named(v, "--arg", &o->args[o->nargs]))
				return 2;
			o->nargs++;
		} else if ((v = opt_value(argc, argv, &i, "--out"))) {
			o->outs = realloc(o->outs, sizeof *o->outs * (size_t)(o->nouts + 1));
			if (!split_named(v, "--out", &o->outs[o->nouts]))
				return 2;
			o->nouts++;
		} else if ((v = opt_value(argc, argv, &i, "--schedules"))) {
			uint64_t n;
			if (!parse_u64(v, &n) || n < 1 || n > 1000000) {
				fprintf(stderr,
				        "ave run: --schedules expects a count in [1, 1000000], "
				        "found '%s'\n",
				        v);
				return 2;
			}
			o->io.schedules = (int)n;
		} else if ((v = opt_value(argc, argv, &i, "--world"))) {
			uint64_t n;
			if (!parse_u64(v, &n) || n < 1 || n > INTERP_MAX_WORLD) {
				fprintf(stderr, "ave run: --world expects a rank count in [1, %d], "
					"found '%s'\n", INTERP_MAX_WORLD, v);
				return 2;
			}
			o->world = (int)n;
		} else if ((v = opt_value(argc, argv, &i, "--launches"))) {
			uint64_t n;
			if (!parse_u64(v, &n) || n < 1 || n > 1000) {
				fprintf(stderr, "ave run: --launches expects a count in [1, 1000], "
					"found '%s'\n", v);
				return 2;
			}
			o->io.launches = (int)n;
		} else if ((v = opt_value(argc, argv, &i, "--print-schedule"))) {
			o->print_schedule = v;
		} else if ((v = opt_value(argc, argv, &i, "--seed"))) {
			if (!parse_u64(v, &o->io.seed)) {
				fprintf(stderr,
				        "ave run: --seed expects an unsigned integer, found '%s'\n",
				        v);
				return 2;
			}
		} else if (a[0] == '-' && a[1]) {
			tool_unknown_option("ave run", a, usage_text);
			return 2;
		} else if (o->common.input) {
			fprintf(stderr, "ave run: more than one input file ('%s', '%s')\n",
			        o->common.input, a);
			return 2;
		} else {
			o->common.input = a;
		}
	}
	if (!o->common.input) {
		fputs("ave run: no input file (see 'ave run --help')\n", stderr);
		return 2;
	}
	if (o->device && strcmp(o->device, "host") && strcmp(o->device, "cuda") &&
	    strcmp(o->device, "hip") && strncmp(o->device, "sim-", 4)) {
		char near[32];
		if (tool_closest_word(o->device, "host|cuda|hip", near))
			fprintf(stderr, "ave run: unknown device '%s'; did you mean '%s'? (devices: host, "
				"cuda, hip, %s)\n", o->device, near, sim_device_kinds());
		else
			fprintf(stderr, "ave run: unknown device '%s' (devices: host, cuda, hip, %s)\n",
				o->device, sim_device_kinds());
		return 2;
	}
	return 0;
}

static IrOp *
pick_kernel(IrModule *m, const char *name)
{
	if (name)
		return interp_find_kernel(m, name);
	IrOp *only = NULL;
	int n = 0;
	for (IrOp *op = m->body->first; op; op = op->next) {
		if (op->code == IR_OP_KERNEL) {
			only = op;
			n++;
		}
		if (op->code == IR_OP_MODULE)
			for (IrOp *k = op->reg[0].block->first; k; k = k->next)
				if (k->code == IR_OP_KERNEL) {
					only = k;
					n++;
				}
	}
	return n == 1 ? only : NULL;
}

/* "; did you mean '@k'?" for the kernel of m that NAME most likely misspells, or "". */
static const char *
kernel_hint(IrModule *m, const char *name, char *buf, size_t n)
{
	enum { MAXC = 64 };
	const char *cand[MAXC];
	int nc = 0;
	for (IrOp *op = m->body->first; op && nc < MAXC; op = op->next) {
		if (op->code == IR_OP_KERNEL)
			cand[nc++] = op->item[0].s;
		for (IrOp *k = op->code == IR_OP_MODULE ? op->reg[0].block->first : NULL;
		     k && nc < MAXC; k = k->next)
			if (k->code == IR_OP_KERNEL)
				cand[nc++] = k->item[0].s;
	}
	name += name[0] == '@';
	const char *near = ir_closest(name, strlen(name), cand, nc);
	buf[0] = 0;
	if (near)
		snprintf(buf, n, "; did you mean '@%s'?", near);
	return buf;
}

/* Whether NAME (without a rank) is a kernel argument, a tensor one, or a symmetric buffer. */
static bool
known_name(IrOp *k, const char *name, size_t len, bool tensor)
{
	if (name[0] == '@') {
		for (int i = 0; interp_symm_alloc(k, i); i++) {
			const char *s = interp_symm_alloc(k, i)->item[0].s;
			if (strlen(s) == len - 1 && !strncmp(s, name + 1, len - 1))
				return true;
		}
		return false;
	}
	IrBlock *b = k->reg[0].block;
	for (int i = 0; i < b->narg; i++)
		if (b->arg[i]->name && strlen(b->arg[i]->name) == len &&
		    !strncmp(b->arg[i]->name, name, len))
			return !tensor || b->arg[i]->type->kind == IR_TY_TENSOR;
	return false;
}

/* "; did you mean '%b'?" for the argument (tensor argument, symmetric buffer) of k that NAME most
 * likely misspells, or "". */
static const char *
name_hint(IrOp *k, const char *name, size_t len, bool tensor, char *buf, size_t n)
{
	enum { MAXC = 64 };
	const char *cand[MAXC];
	int nc = 0;
	bool symm = name[0] == '@';
	IrBlock *b = k->reg[0].block;
	for (int i = 0; symm && nc < MAXC && interp_symm_alloc(k, i); i++)
		cand[nc++] = interp_symm_alloc(k, i)->item[0].s;
	for (int i = 0; !symm && i < b->narg && nc < MAXC; i++)
		if (b->arg[i]->name && (!tensor || b->arg[i]->type->kind == IR_TY_TENSOR))
			cand[nc++] = b->arg[i]->name;
	const char *near = ir_closest(name + symm, len - symm, cand, nc);
	buf[0] = 0;
	if (near)
		snprintf(buf, n, "; did you mean '%s%s'?", symm ? "@" : "%", near);
	return buf;
}

/* Every --arg and --out names an argument or buffer, and a rank of the run. */
static bool
check_names(IrOp *k, RunOpts *o)
{
	for (int pass = 0; pass < 2; pass++) {
		NamedArg *a = pass ? o->outs : o->args;
		int n = pass ? o->nouts : o->nargs;
		const char *opt = pass ? "--out" : "--arg";
		for (int j = 0; j < n; j++) {
			size_t len;
			long q;
			if (!run_split_rank(a[j].name, &len, &q)) {
				fprintf(stderr, "ave run: %s %s: expected NAME or NAME@RANK\n", opt,
					a[j].name);
				return false;
			}
			if (q >= o->world) {
				fprintf(stderr, "ave run: %s %s: rank %ld is not one of the %d ranks "
					"(--world)\n", opt, a[j].name, q, o->world);
				return false;
			}
			for (int i = 0; i < j; i++)
				if (!strcmp(a[i].name, a[j].name)) {
					if (pass)
						fprintf(stderr, "ave run: --out '%s' is given twice\n",
							a[j].name);
					else
						fprintf(stderr, "ave run: argument '%s%s' is given twice\n",
							a[j].name[0] == '@' ? "" : "%", a[j].name);
					return false;
				}
			if (known_name(k, a[j].name, len, pass))
				continue;
			char hint[160];
			name_hint(k, a[j].name, len, pass, hint, sizeof hint);
			if (a[j].name[0] == '@')
				fprintf(stderr, "ave run: %s %s: the module has no symmetric buffer "
					"'%.*s'%s\n", opt, a[j].name, (int)len, a[j].name, hint);
			else if (pass)
				fprintf(stderr, "ave run: --out %s: kernel '@%s' has no tensor argument "
					"'%%%.*s'%s\n", a[j].name, k->item[0].s, (int)len, a[j].name, hint);
			else
				fprintf(stderr, "ave run: kernel '@%s' has no argument '%%%.*s'%s\n",
					k->item[0].s, (int)len, a[j].name, hint);
			return false;
		}
	}
	return true;
}

/* Makes rank q's arguments from --arg values; false after a message. */
static bool
make_args(IrCtx *c, IrOp *k, RunOpts *o, int q, InterpValue *vals)
{
	IrBlock *b = k->reg[0].block;
	for (int i = 0; i < b->narg; i++) {
		IrValue *av = b->arg[i];
		NamedArg *na = av->name ? run_find_named(o->args, o->nargs, av->name, q) : NULL;
		if (!na) {
			fprintf(stderr,
			        "ave run: no value for argument '%%%s' of type '%s'%s (give --arg "
			        "%s=VALUE)\n",
			        av->name ? av->name : "?", ir_type_str(c, av->type),
			        o->world > 1 ? " on every rank" : "", av->name ? av->name : "?");
			return false;
		}
		char err[512], *v = run_subst_rank(na->value, q);
		bool ok = interp_value_parse(c, v, av->type, &vals[i], err, sizeof err);
		free(v);
		if (!ok) {
			fprintf(stderr, "ave run: --arg %s: %s\n", na->name, err);
			return false;
		}
	}
	return true;
}

/* Makes rank q's symmetric buffers: the --arg @S value, else zeros. */
static bool
make_symm(IrCtx *c, IrOp *k, RunOpts *o, int q, InterpValue *vals, InterpTensor *ts)
{
	for (int i = 0; interp_symm_alloc(k, i); i++) {
		IrOp *s = interp_symm_alloc(k, i);
		IrType *ty = s->type[0];
		char name[256];
		snprintf(name, sizeof name, "@%s", s->item[0].s);
		NamedArg *na = run_find_named(o->args, o->nargs, name, q);
		if (na) {
			char err[512], *v = run_subst_rank(na->value, q);
			bool ok = interp_value_parse(c, v, ty, &vals[i], err, sizeof err);
			free(v);
			if (!ok) {
				fprintf(stderr, "ave run: --arg %s: %s\n", na->name, err);
				return false;
			}
		} else {
			InterpTensor *t = &vals[i].arg.t;
			vals[i].arg.tensor = true;
			*t = interp_symm_tensor(s, NULL);
			t->data = vals[i].owned = calloc((size_t)t->nelem, interp_elem_size(ty->elem));
		}
		ts[i] = vals[i].arg.t;
	}
	return true;
}

/* Writes the --out files of rank q (its arguments and its copies of the buffers). */
static bool
write_outs(IrOp *k, RunOpts *o, int q, InterpValue *vals, InterpValue *svals)
{
	IrBlock *b = k->reg[0].block;
	for (int j = 0; j < o->nouts; j++) {
		size_t len;
		long rank;
		run_split_rank(o->outs[j].name, &len, &rank);
		if (rank >= 0 && rank != q)
			continue;
		char base[256];
		snprintf(base, sizeof base, "%.*s", (int)len, o->outs[j].name);
		if (rank < 0 && run_find_named(o->outs, o->nouts, base, q) != &o->outs[j])
			continue; /* this rank has an --out of its own */
		const InterpTensor *t = NULL;
		const IrType *elem = NULL;
		if (base[0] == '@') {
			for (int i = 0; interp_symm_alloc(k, i); i++)
				if (!strcmp(interp_symm_alloc(k, i)->item[0].s, base + 1)) {
					t = &svals[i].arg.t;
					elem = interp_symm_alloc(k, i)->type[0]->elem;
				}
		} else {
			for (int i = 0; i < b->narg; i++)
				if (b->arg[i]->name && !strcmp(b->arg[i]->name, base)) {
					t = &vals[i].arg.t;
					elem = b->arg[i]->type->elem;
				}
		}
		char err[512], *path = run_out_path(o->outs[j].value, q, rank >= 0 ? 1 : o->world);
		bool ok = interp_npy_write(path, elem, t->rank, t->dims, t->data, err, sizeof err);
		free(path);
		if (!ok) {
			fprintf(stderr, "ave run: --out %s: %s\n", o->outs[j].name, err);
			return false;
		}
	}
	return true;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* A GPU device, or a bundle on any device: through the public API (compile, buffers, launch). */
static int
run_api(RunOpts *o)
{
	AveContext ctx;
	AveKernel k = {NULL};
	AveModule m = {NULL};
	int rc = 1;
	const char *device = o->device ? o->device : "host";
	if (aveContextCreate(&ctx))
		return 1;
	RunDiag rd = {"ave run", 0, 0};
	aveContextSetDiagnosticHandler(ctx, run_print_diag, &rd);
	IrCtx *c = ir_ctx_new(NULL);
	RunRequest r = {.tool = "ave run", .ctx = ctx, .device = device, .args = o->args,
			.nvalues = o->nargs, .outs = o->outs, .nouts = o->nouts,
			.schedules = o->io.schedules, .seed = o->io.seed, .stats = o->stats,
			.world = o->world, .launches = o->io.launches};
	memcpy(r.grid, o->grid, sizeof r.grid);
	if (ends_with(o->common.input, ".avb")) {
		if (aveKernelLoadBundle(ctx, o->common.input, &k))
			goto out;
		if (o->kernel && strcmp(o->kernel + (o->kernel[0] == '@'), aveKernelGetName(k))) {
			fprintf(stderr, "ave run: the bundle holds '@%s', not '%s'\n", aveKernelGetName(k),
				o->kernel);
			rc = 2;
			goto out;
		}
	} else {
		/* Compile for the device: its own target unless --target says otherwise. */
		const char *target = o->target;
		char simt[64];
		if (!strncmp(device, "sim-", 4)) {
			/* Names the device's errors (an unknown target) before compiling for it. */
			AveDevice d;
			if (aveDeviceOpen(ctx, device, 0, &d))
				goto out;
			aveDeviceClose(d);
		}
		if (!target && !strncmp(device, "sim-", 4)) {
			/* A simulated device runs its target's LLVM IR. */
			snprintf(simt, sizeof simt, "%s", device);
			target = simt;
		} else if (target && !strncmp(device, "sim-", 4)) {
			snprintf(simt, sizeof simt, "sim-%s", target);
			target = simt;
		}
		if (!target) {
			/* The device's own target, or its vendor's first where it cannot say. */
			AveDevice d;
			if (aveDeviceOpen(ctx, device, 0, &d))
				goto out;
			const RtDevice *rd = d.ptr;
			const TargetInfo *t = rd->target ? rd->target : target_of_vendor(rd->vendor);
			target = t ? t->name : NULL;
			aveDeviceClose(d);
			if (!target)
				goto out;
		}
		if (aveModuleParseFile(ctx, o->common.input, &m))
			goto out;
		AveCompileOptions co;
		aveCompileOptionsCreate(&co);
		AveResult res = aveCompileOptionsSetTarget(co, target);
		if (res) {
			fprintf(stderr, "ave run: unknown target '%s'\n", target);
			aveCompileOptionsDestroy(co);
			rc = 2;
			goto out;
		}
		const char *name = o->kernel;
		if (!name && aveModuleGetNumKernels(m) == 1)
			name = aveModuleGetKernelName(m, 0);
		if (!name) {
			fprintf(stderr, "ave run: choose a kernel with --kernel=@NAME\n");
			aveCompileOptionsDestroy(co);
			rc = 2;
			goto out;
		}
		res = aveKernelCompile(m, name + (name[0] == '@'), co, &k);
		aveCompileOptionsDestroy(co);
		if (res)
			goto out;
	}
	r.kernel = k;
	r.nargs = aveKernelGetNumArgs(k);
	IrType **types = calloc((size_t)r.nargs + 1, sizeof *types);
	const char **names = calloc((size_t)r.nargs + 1, sizeof *names);
	r.types = types;
	r.names = names;
	if (run_kernel_types(c, k, types, names))
		rc = run_on_device(c, &r);
	free(types);
	free(names);
out:
	aveKernelDestroy(k);
	aveModuleDestroy(m);
	aveContextDestroy(ctx);
	ir_diag_summary(rd.nerrors, rd.nwarnings, stderr);
	ir_ctx_free(c);
	return rc;
}

int
cmd_run(int argc, char **argv)
{
	RunOpts o;
	memset(&o, 0, sizeof o);
	o.common.tool = "ave run";
	int rc = parse_opts(argc, argv, &o);
	if (rc) {
		free_opts(&o);
		return rc < 0 ? 0 : rc;
	}
	if ((o.device && strcmp(o.device, "host")) || ends_with(o.common.input, ".avb")) {
		rc = run_api(&o);
		free_opts(&o);
		return rc;
	}
	DiagSink sink;
	IrCtx *c = driver_ctx(&o.common, &sink);
	IrModule *m = fe_parse_file(c, o.common.input);
	InterpValue *vals = NULL, *svals = NULL;
	int nk = 0, ns = 0, W = 0;
	rc = 1;
	if (!m || !ir_verify(m))
		goto out;
	IrOp *k = pick_kernel(m, o.kernel);
	if (!k) {
		char hint[160];
		if (o.kernel)
			fprintf(stderr, "ave run: no kernel '%s%s' in '%s'%s\n",
			        o.kernel[0] == '@' ? "" : "@", o.kernel, o.common.input,
			        kernel_hint(m, o.kernel, hint, sizeof hint));
		else
			fprintf(stderr,
			        "ave run: '%s' has several kernels (or none); choose one with "
			        "--kernel=@NAME\n",
			        o.common.input);
		rc = 2;
		goto out;
	}
	/* `overlap` changes what a kernel computes across ranks (it adds the communication a
	 * local kernel leaves out), so the interpreter runs the kernel it makes, as every target
	 * does. */
	if (ir_op_attr(k, c->kw.overlap) && !pass_overlap(m, NULL))
		goto out;
	if (o.print_schedule) {
		const char *sn = o.print_schedule + (o.print_schedule[0] == '@');
		IrOp *sc = ir_symbol_lookup(c, k, ir_intern_cstr(c, sn));
		if (!sc || sc->code != IR_OP_CHUNK_SCHEDULE) {
			fprintf(stderr, "ave run: --print-schedule: no chunk schedule '@%s' next to "
				"kernel '@%s'\n", sn, k->item[0].s);
			rc = 2;
			goto out;
		}
		rc = ir_chunk_schedule_print(c, sc, o.world, stdout) ? 0 : 1;
		goto out;
	}
	if (!check_names(k, &o)) {
		rc = 2;
		goto out;
	}
	W = o.world;
	/* As for a world launch through the runtime (docs/jit.md): a copy of a CTA along a grid
	 * dimension the kernel never reads would signal its chunks again. */
	bool signals;
	unsigned rd = lower_grid_read(c, k, &signals);
	for (int d = 0; d < 3 && signals; d++)
		if (o.grid[d] > 1 && !(rd & 1u << d)) {
			fprintf(stderr, "ave run: kernel '@%s' never reads 'ave.program_id dim(%d)': a run "
				"on a world of ranks takes --grid with 1 there, not %lld (each copy of a "
				"CTA along that dimension would signal its chunks again, and a signal "
				"counts a launch)\n", k->item[0].s, d, (long long)o.grid[d]);
			rc = 2;
			goto out;
		}
	nk = k->reg[0].block->narg;
	while (interp_symm_alloc(k, ns))
		ns++;
	vals = calloc((size_t)(W * nk) + 1, sizeof *vals);
	svals = calloc((size_t)(W * ns) + 1, sizeof *svals);
	InterpArg *args = calloc((size_t)(W * nk) + 1, sizeof *args);
	InterpTensor *symm = calloc((size_t)(W * ns) + 1, sizeof *symm);
	InterpLaunch *ls = calloc((size_t)W, sizeof *ls);
	bool made = true;
	for (int q = 0; q < W && made; q++) {
		made = make_args(c, k, &o, q, vals + q * nk) &&
		       make_symm(c, k, &o, q, svals + q * ns, symm + q * ns);
		for (int i = 0; i < nk; i++)
			args[q * nk + i] = vals[q * nk + i].arg;
		ls[q] = (InterpLaunch){.kernel = k, .args = args + q * nk, .nargs = nk, .rank = q,
				       .world_size = W, .symm = symm + q * ns, .nsymm = ns};
		memcpy(ls[q].grid, o.grid, sizeof ls[q].grid);
	}
	bool ok = false;
	InterpStats st = {0};
	if (made) {
		o.io.gather = true; /* the runtime's world launch does it itself */
		ok = interp_run_world(m, ls, W, &o.io, &st);
		run_report_interp("ave run", &st, o.grid, o.io.seed, o.io.schedules, ok, o.stats);
	}
	free(args);
	free(symm);
	free(ls);
	if (!made)
		rc = 2;
	else if (ok) {
		rc = 0;
		for (int q = 0; q < W && !rc; q++)
			if (!write_outs(k, &o, q, vals + q * nk, svals + q * ns))
				rc = 1;
	}
out:
	for (int i = 0; i < W * nk; i++)
		interp_value_free(&vals[i]);
	for (int i = 0; i < W * ns; i++)
		interp_value_free(&svals[i]);
	free(vals);
	free(svals);
	ir_module_free(m);
	diag_sink_summary(&sink);
	ir_ctx_free(c);
	free_opts(&o);
	return rc;
}
