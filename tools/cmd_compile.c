/* cmd_compile.c — `ave compile FILE --target=T`: parse, verify, run the compile pipeline, lower
 * to LLVM IR and the target's output (PTX, cubin, AMDGPU assembly, HSACO), and write the
 * kernels' metadata. */
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "../runtime/jit.h"
#include "driver.h"

typedef struct Opts {
	DriverCommon common;
	const char *target, *emit, *out, *kernel, *meta, *assembler, *passes;
	bool want_meta, time, verbose, no_check;
	int opt, debug;
} Opts;

static const char usage_text[] =
	      "usage: ave compile FILE --target=T [options]\n"
	      "\n"
	      "Compiles the kernels of FILE for target T and writes the result.\n"
	      "\n"
	      "options:\n"
	      "  --target=T              the target (the list below; wins over a kernel's 'target'\n"
	      "                          attribute); sim-T (e.g. sim-sm_90a) makes a bundle for the\n"
	      "                          simulated device of target T (docs/testing.md)\n"
	      "  --emit=K                ir (after the compile pipeline), llvm, ptx or cubin (default)\n"
	      "                          for NVIDIA; ir, llvm, asm or hsaco (default) for AMDGPU;\n"
	      "                          bundle: one kernel with its metadata, for ave-rt-run and\n"
	      "                          libave_rt (the default for host and sim-T)\n"
	      "  -o OUT                  output file ('-' for standard output; text outputs default to it,\n"
	      "                          a binary to FILE's stem with .cubin or .hsaco)\n"
	      "  -O0 .. -O3              optimization level of LLVM and ptxas (default -O3)\n"
	      "  --kernel=@name          only this kernel\n"
	      "  --emit-metadata[=FILE]  write the kernels' metadata as JSON (default: OUT.json)\n"
	      "  --assembler=A           ptxas (default, whole-program) or nvjitlink (in-process; refuses\n"
	      "                          kernels with per-role register budgets); for AMDGPU the linker:\n"
	      "                          lld (in-process, the default where built) or ld.lld (a process)\n"
	      "  --no-check              skip check-invariants (for kernels 'ave check' has proved)\n"
	      "  --passes=P              run the passes P (ave-opt's syntax, options in braces:\n"
	      "                          'warp-specialize{consumers=1}') instead of the default\n"
	      "                          pipeline; the word 'default' stands for it (see\n"
	      "                          docs/passes.md); not with --emit=bundle\n"
	      "  -lineinfo               line tables: PTX .loc / DWARF .debug_line name the .ave lines\n"
	      "  -g                      full debug info (DWARF), line tables included\n"
	      "  --time                  print each stage with its time to standard error as the\n"
	      "                          compile runs (parse, verify, each pass, lower, LLVM passes,\n"
	      "                          codegen, ptxas or lld)\n"
	      "  -v                      --time, and report remarks (shared-memory use, the layouts\n"
	      "                          #ave.reg fixes and the conversions they cost, ...)\n"
	      "  --diagnostics-format=F  text (default) or json\n"
	      "  -h, --help              this help\n";

static void
usage(FILE *f)
{
	fputs(usage_text, f);
	char names[256];
	fprintf(f, "\ntargets: %s\n", target_names(names, sizeof names, TARGET_ALL, ", "));
}

typedef struct Filter {
	DiagSink *sink;
	bool remarks;
} Filter;

static void
filter_handler(void *ud, const IrDiag *d)
{
	Filter *f = ud;
	if (d->sev == IR_SEV_REMARK && !f->remarks)
		return;
	diag_sink_handler(f->sink, d);
}

/* --time and -v: one line per stage on stderr as the compile runs. */
static void
stage(const char *name, double seconds)
{
	fprintf(stderr, "  %-24s %9.3f ms\n", name, seconds * 1e3);
}

static void
pass_done(void *ud, const char *pass, double seconds)
{
	(void)ud;
	char name[64];
	snprintf(name, sizeof name, "pass %s", pass);
	stage(name, seconds);
}

static bool
write_out(const char *path, const char *data, size_t len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
	if (!f) {
		fprintf(stderr, "ave compile: cannot write '%s'\n", path);
		return false;
	}
	bool ok = fwrite(data, 1, len, f) == len;
	if (f != stdout)
		ok &= fclose(f) == 0;
	else
		fflush(f);
	if (!ok)
		fprintf(stderr, "ave compile: cannot write '%s'\n", path);
	return ok;
}

/* The target of the first kernel that names one. */
static const char *
attr_target(IrCtx *c, IrBlock *b)
{
	for (IrOp *op = b->first; op; op = op->next) {
		if (op->code == IR_OP_MODULE) {
			const char *t = attr_target(c, op->reg[0].block);
			if (t)
				return t;
		}
		if (op->code == IR_OP_KERNEL) {
			IrAttr *a = ir_op_attr(op, c->kw.target);
			if (a && a->kind == IR_ATTR_STR)
				return a->s;
		}
	}
	return NULL;
}

static int
parse_args(int argc, char **argv, Opts *o)
{
	o->emit = NULL; /* the target's last --emit kind */
	o->opt = 3;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (driver_common_opt(&o->common, a))
			continue;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strncmp(a, "--target=", 9))
			o->target = a + 9;
		else if (!strncmp(a, "--emit=", 7))
			o->emit = a + 7;
		else if (!strcmp(a, "-o") && i + 1 < argc)
			o->out = argv[++i];
		else if (!strcmp(a, "-o")) {
			fputs("ave compile: -o needs a file name (or - for standard output)\n", stderr);
			return 2;
		}
		else if (!strncmp(a, "-o", 2) && a[2])
			o->out = a + 2;
		else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3])
			o->opt = a[2] - '0';
		else if (!strncmp(a, "--kernel=", 9))
			o->kernel = a[9] == '@' ? a + 10 : a + 9;
		else if (!strcmp(a, "--emit-metadata"))
			o->want_meta = true;
		else if (!strncmp(a, "--emit-metadata=", 16)) {
			o->want_meta = true;
			o->meta = a + 16;
		} else if (!strncmp(a, "--assembler=", 12))
			o->assembler = a + 12;
		else if (!strcmp(a, "--time"))
			o->time = true;
		else if (!strcmp(a, "-v"))
			o->time = o->verbose = true;
		else if (!strcmp(a, "--no-check"))
			o->no_check = true;
		else if (!strncmp(a, "--passes=", 9))
			o->passes = a + 9;
		else if (!strcmp(a, "-lineinfo"))
			o->debug = o->debug > 1 ? o->debug : 1;
		else if (!strcmp(a, "-g"))
			o->debug = 2;
		else if (a[0] == '-' && a[1]) {
			tool_unknown_option("ave compile", a, usage_text);
			return 2;
		} else if (o->common.input) {
			fprintf(stderr, "ave compile: more than one input file\n");
			return 2;
		} else {
			o->common.input = a;
		}
	}
	if (!o->common.input) {
		fprintf(stderr, "ave compile: no input file\n");
		return 2;
	}
	if (o->assembler && strcmp(o->assembler, "ptxas") && strcmp(o->assembler, "nvjitlink") &&
	    strcmp(o->assembler, "lld") && strcmp(o->assembler, "ld.lld")) {
		char near[32];
		if (tool_closest_word(o->assembler, "ptxas|nvjitlink|lld|ld.lld", near))
			fprintf(stderr, "ave compile: unknown assembler '%s'; did you mean '%s'? (ptxas, "
				"nvjitlink, lld or ld.lld)\n", o->assembler, near);
		else
			fprintf(stderr, "ave compile: unknown assembler '%s' (ptxas, nvjitlink, lld or "
				"ld.lld)\n", o->assembler);
		return 2;
	}
	return -1;
}

static char *
default_out(const char *input, const char *ext)
{
	const char *base = strrchr(input, '/');
	base = base ? base + 1 : input;
	size_t n = strlen(base);
	const char *dot = strrchr(base, '.');
	if (dot)
		n = (size_t)(dot - base);
	char *s = malloc(n + strlen(ext) + 2);
	snprintf(s, n + strlen(ext) + 2, "%.*s.%s", (int)n, base, ext);
	return s;
}

static void
count_kernels(IrBlock *b, const char *name, IrOp **found, int *n)
{
	for (IrOp *op = b->first; op; op = op->next) {
		if (op->code == IR_OP_MODULE)
			count_kernels(op->reg[0].block, name, found, n);
		if (op->code != IR_OP_KERNEL)
			continue;
		(*n)++;
		if (!*found && (!name || !strcmp(op->item[0].s, name)))
			*found = op;
	}
}

/* The one kernel a bundle holds: --kernel, or the file's only kernel. */
static IrOp *
bundle_kernel(IrCtx *c, IrModule *m, const char *name)
{
	IrOp *found = NULL;
	int n = 0;
	IrLoc none = {0, 0, 0};
	count_kernels(m->body, name, &found, &n);
	if (name && !found) {
		ir_error(c, none, "no kernel '@%s' in the file", name);
		return NULL;
	}
	if (!name && n != 1) {
		ir_error(c, none, "a bundle holds one kernel and the file has %d: choose one with "
			 "--kernel=@name", n);
		return NULL;
	}
	return found;
}

static int
emit_bundle(IrCtx *c, IrModule *m, const Opts *o, const TargetInfo *target, bool sim)
{
	IrOp *k = bundle_kernel(c, m, o->kernel);
	if (!k)
		return 1;
	char *src = NULL;
	size_t srclen = 0;
	FILE *f = open_memstream(&src, &srclen);
	ir_module_print(m, f, NULL);
	fclose(f);
	const IrFile *file = ir_ctx_file(c, 1); /* the input, as written */
	JitRequest rq = {m, k, target, o->opt, NULL, !o->no_check, file->text, file->len, o->debug, sim};
	JitOutput jo = {0};
	int rc = 1;
	if (jit_build(&rq, &jo)) {
		size_t len;
		uint8_t *bundle = rt_bundle_encode(jo.meta, strlen(jo.meta), jo.binary, jo.binary_len,
						   src, srclen, &len);
		char *def = NULL;
		const char *out = o->out ? o->out : (def = default_out(o->common.input, "avb"));
		rc = write_out(out, (const char *)bundle, len) ? 0 : 1;
		if (!rc && o->want_meta) {
			char mp[4096];
			snprintf(mp, sizeof mp, "%s.json", out);
			rc = write_out(o->meta ? o->meta : mp, jo.meta, strlen(jo.meta)) ? 0 : 1;
		}
		free(bundle);
		free(def);
	}
	free(jo.binary);
	free(jo.meta);
	free(src);
	return rc;
}

/* The compile pipeline of the command line, run again by jit_lower with other hooks. */
typedef struct Again {
	const TargetInfo *ti;
	const Opts *o;
} Again;

static bool
pipe_again(IrModule *m, const IrPassOpts *hooks, void *ud)
{
	const Again *a = ud;
	return a->o->passes ? jit_run_passes(m, a->ti, !a->o->no_check, a->o->passes, hooks)
	                    : jit_compile_pipeline(m, a->ti, !a->o->no_check, NULL, hooks);
}

int
cmd_compile(int argc, char **argv)
{
	Opts o = {.common.tool = "ave compile"};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	DiagSink sink;
	IrCtx *c = driver_ctx(&o.common, &sink);
	Filter filter = {&sink, o.verbose};
	ir_diag_set_handler(c, filter_handler, &filter);
	double t0 = ir_now();
	if (o.time)
		fprintf(stderr, "ave compile: %s\n", o.common.input);
	IrModule *m = fe_parse_file(c, o.common.input);
	double tp = ir_now();
	if (o.time)
		stage("parse", tp - t0);
	bool ok = m && ir_verify(m);
	if (o.time && m)
		stage("verify", ir_now() - tp);
	const char *tname = o.target ? o.target : m ? attr_target(c, m->body) : NULL;
	const LowerTarget *t = NULL;
	char *out_alloc = NULL;
	IrLoc none = {0, 0, 0};
	bool usage = false; /* a bad option value: exit status 2 (docs/driver.md) */
	/* sim-T: the kernel for a simulated device (a bundle of T's LLVM IR, docs/testing.md). */
	bool sim = tname && !strncmp(tname, "sim-", 4);
	if (sim)
		tname += 4;
	const TargetInfo *ti = target_find(tname);
	bool host = ti && ti->vendor == TARGET_VENDOR_HOST;
	if (ok && sim && (host || (o.emit && strcmp(o.emit, "bundle")))) {
		ir_error(c, none, host ? "there is no simulated host device: 'sim-' takes a GPU target"
				       : "a simulated device runs bundles: --target=sim-%s takes "
					 "--emit=bundle (the default), not --emit=%s",
			 tname, o.emit);
		ok = false;
	}
	if (ok && sim && !o.emit)
		o.emit = "bundle";
	if (ok && !tname) {
		char names[256];
		ir_error(c, none, "no target: pass --target=T, one of %s",
			 target_names(names, sizeof names, TARGET_ALL, " or "));
		ok = false;
	} else if (ok && !host && !(t = ti ? jit_lower_target(ti) : NULL)) {
		const char *near = ti ? NULL : target_closest(tname, sim ? TARGET_GPUS : TARGET_ALL);
		const char *pre = sim ? "sim-" : "";
		if (near)
			ir_error(c, none, "unknown target '%s%s'; did you mean '%s%s'? (this build has: %s)",
				 pre, tname, pre, near, jit_target_names());
		else
			ir_error(c, none, "unknown target '%s%s' for 'ave compile' (this build has: %s)",
				 pre, tname, jit_target_names());
		ok = false;
		usage = true;
	}
	if (ok && !o.emit) {
		int n = 0;
		while (!host && t->emits[n])
			n++;
		o.emit = host ? "bundle" : n ? t->emits[n - 1] : "llvm";
	}
	if (ok) {
		bool known = !strcmp(o.emit, "ir") || !strcmp(o.emit, "bundle") ||
			     (!host && !strcmp(o.emit, "llvm"));
		for (int i = 0; !host && t->emits[i] && !known; i++)
			known = !strcmp(t->emits[i], o.emit);
		if (!known) {
			char kinds[128] = "ir|bundle", near[32];
			if (!host)
				strcat(kinds, "|llvm");
			for (int i = 0; !host && t->emits[i]; i++)
				snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "|%s",
					 t->emits[i]);
			if (tool_closest_word(o.emit, kinds, near))
				ir_error(c, none, "unknown --emit kind '%s' for target '%s'; did you mean "
					 "'%s'?", o.emit, tname, near);
			else
				ir_error(c, none, "unknown --emit kind '%s' for target '%s'", o.emit, tname);
			ok = false;
			usage = true;
		}
	}
	/* A bundle holds one kernel, compiled the way aveKernelCompile compiles it. */
	if (ok && o.passes && o.emit && !strcmp(o.emit, "bundle")) {
		ir_error(c, none, "--passes does not apply to --emit=bundle: a bundle is compiled "
				  "with the default pipeline, as aveKernelCompile compiles it (its "
				  "aveCompileOptionsSetPipeline adds passes before that pipeline)");
		ok = false;
	}
	if (ok && !strcmp(o.emit, "bundle")) {
		int rc2 = emit_bundle(c, m, &o, ti, sim);
		ir_module_free(m);
		diag_sink_summary(&sink);
		ir_ctx_free(c);
		return rc2;
	}
	/* The compile pipeline; a copy of the module before it, where jit_lower may compile again. */
	IrPassOpts hooks = {.after_pass = o.time ? pass_done : NULL};
	LowerOptions lo = {0};
	lo.emit = o.emit;
	lo.opt = o.opt;
	lo.kernel = o.kernel;
	lo.assembler = o.assembler;
	lo.debug = o.debug;
	IrModule *orig = ok && o.emit && jit_lower_replans(t, &lo) ? ir_module_clone(m) : NULL;
	Again again = {ti, &o};
	if (ok)
		ok = pipe_again(m, &hooks, &again);
	if (!o.emit)
		o.emit = "llvm";
	bool text = !strcmp(o.emit, "ir") || !strcmp(o.emit, "llvm") || !strcmp(o.emit, "ptx") ||
		    !strcmp(o.emit, "asm");
	const char *out = o.out;
	if (!out)
		out = text ? "-" : (out_alloc = default_out(o.common.input, o.emit));
	LowerResult res = {0};
	if (ok && !strcmp(o.emit, "ir")) {
		FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
		if (!f) {
			fprintf(stderr, "ave compile: cannot write '%s'\n", out);
			ok = false;
		} else {
			ir_module_print(m, f, NULL);
			if (f != stdout)
				fclose(f);
		}
	} else if (ok) {
		lo.emit = o.emit;
		IrModule *mm = m;
		ok = jit_lower(&mm, orig, t, &lo, &res, pipe_again, &again, &hooks);
		if (mm != m)
			ir_module_free(mm);
		if (o.time) {
			/* The stages lower_compile ran, as far as it got. */
			bool binary = !strcmp(o.emit, "cubin") || !strcmp(o.emit, "hsaco");
			stage("lower (LLVM IR)", res.t[LOWER_T_IRBUILD]);
			if (o.opt > 0)
				stage("LLVM passes", res.t[LOWER_T_OPT]);
			if (strcmp(o.emit, "llvm") && (ok || res.t[LOWER_T_CODEGEN] > 0))
				stage("LLVM codegen", res.t[LOWER_T_CODEGEN]);
			if (binary && (ok || res.t[LOWER_T_ASSEMBLE] > 0))
				stage(o.assembler                         ? o.assembler
				      : ti->vendor == TARGET_VENDOR_AMD ? "lld"
									: "ptxas",
				      res.t[LOWER_T_ASSEMBLE]);
		}
		if (ok)
			ok = write_out(out, res.data, res.len);
		if (ok && o.want_meta) {
			char *mp = o.meta ? NULL : malloc(strlen(out) + 6);
			if (mp)
				snprintf(mp, strlen(out) + 6, "%s.json",
				         strcmp(out, "-") ? out : "kernels");
			const char *path = o.meta ? o.meta : mp;
			FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
			if (!f) {
				fprintf(stderr, "ave compile: cannot write '%s'\n", path);
				ok = false;
			} else {
				lower_write_metadata(c, &res, f);
				if (f != stdout)
					fclose(f);
			}
			free(mp);
		}
	}
	if (o.time) {
		char total[64];
		snprintf(total, sizeof total, "total (%s)", ti ? ti->name : "no target");
		stage(total, ir_now() - t0);
	}
	lower_result_free(&res);
	free(out_alloc);
	if (orig)
		ir_module_free(orig);
	ir_module_free(m);
	diag_sink_summary(&sink);
	ir_ctx_free(c);
	return ok ? 0 : usage ? 2 : 1;
}
