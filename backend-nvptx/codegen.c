/* codegen.c — from the optimized LLVM module to PTX (LLVMTargetMachineEmitToMemoryBuffer) and a
 * cubin: ptxas as a subprocess in whole-program mode (-v; its info log gives registers, spills,
 * shared memory and C-coded messages per kernel), or nvJitLink in-process (dlopen'd; it compiles
 * relocatable code, so it refuses kernels that use setmaxnreg, which it would drop: C7504). */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "nvptx.h"

extern char **environ;

static IrLoc
noloc(void)
{
	IrLoc l = {0, 0, 0};
	return l;
}

char *
nvptx_find_ptxas(const char *tool_dir)
{
	static const char *const names[] = {"ptxas", NULL};
	static const char *const fallback[] = {"/usr/local/cuda/bin/ptxas", "/opt/cuda/bin/ptxas", NULL};
	return lower_find_tool("AVE_PTXAS", tool_dir, names, fallback);
}

/* ---- the ptxas info log ---- */

static LowerKernelInfo *
info_named(LowerKernelInfo *infos, int n, const char *name, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(infos[i].name) == len && !memcmp(infos[i].name, name, len))
			return &infos[i];
	return NULL;
}

static void
add_diag(const IrAllocator *al, LowerKernelInfo *k, const char *line, size_t n)
{
	char *s = malloc(n + 1);
	memcpy(s, line, n);
	s[n] = 0;
	ir_vec_push(al, &k->diags, &s, sizeof s);
}

static const char *
after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) ? NULL : s + n;
}

void
nvptx_parse_ptxas_log(const IrAllocator *al, const char *log, LowerKernelInfo *infos, int n)
{
	LowerKernelInfo *cur = NULL;
	RaUsage cur_use = {0};
	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		size_t len = (size_t)(end - line);
		const char *rest;
		char tmp[1024];
		snprintf(tmp, sizeof tmp, "%.*s", (int)len, line);
		if ((rest = after(tmp, "ptxas info    : Compiling entry function '")) ||
		    (rest = after(tmp, "ptxas info    : Function properties for "))) {
			size_t k = strcspn(rest, "'\n :");
			cur = info_named(infos, n, rest, k);
			cur_use = (RaUsage){0};
			if (cur) {
				cur_use.known = cur->stats;
				cur_use.regs = cur->regs;
				cur_use.barriers = cur->barriers;
				cur_use.static_smem = cur->static_smem;
				cur_use.stack = cur->stack;
				cur_use.spill_stores = cur->spill_stores;
				cur_use.spill_loads = cur->spill_loads;
			}
		} else if (cur && ra_ptxas_line(tmp, &cur_use)) {
			/* The figures are regalloc's to read (one reader of register use). */
			cur->stats = cur->stats || cur_use.known;
			cur->regs = cur_use.regs;
			cur->barriers = cur_use.barriers;
			cur->static_smem = cur_use.static_smem;
			cur->stack = cur_use.stack;
			cur->spill_stores = cur_use.spill_stores;
			cur->spill_loads = cur_use.spill_loads;
		} else if ((rest = after(tmp, "ptxas info    : (C")) ||
		           after(tmp, "ptxas warning")) {
			const char *msg = strchr(tmp, ':');
			msg = msg ? msg + 2 : tmp;
			if (cur)
				add_diag(al, cur, msg, strlen(msg));
			else
				for (int i = 0; i < n; i++)
					add_diag(al, &infos[i], msg, strlen(msg));
		}
		line = *end ? end + 1 : end;
	}
}

/* ---- running ptxas ---- */

/* Reports the error lines of a tool's log as one diagnostic. */
static void
tool_error(IrCtx *c, const char *tool, const char *log, int status)
{
	IrDiag *d =
	    ir_diag_begin(c, IR_SEV_ERROR, noloc(), "%s failed (exit status %d)", tool, status);
	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len && (strstr(line, "error") || strstr(line, "fatal")) &&
		    (size_t)(strstr(line, "error") - line) < len)
			ir_diag_note(c, d, noloc(), "%.*s", (int)len, line);
		else if (len && strstr(line, "fatal") &&
		         (size_t)(strstr(line, "fatal") - line) < len)
			ir_diag_note(c, d, noloc(), "%.*s", (int)len, line);
		line = end ? end + 1 : NULL;
	}
	ir_diag_emit(c, d);
}

static bool
run_ptxas(IrCtx *c, const char *ptx, size_t ptxlen, const char *arch, const LowerOptions *o,
          LowerKernelInfo *infos, int ninfo, char **out, size_t *outlen)
{
	char *exe = nvptx_find_ptxas(o->tool_dir);
	if (!exe) {
		ir_error(
		    c, noloc(),
		    "ptxas not found: the cubin step needs it (set AVE_PTXAS, put it on PATH, "
		    "or install the CUDA toolkit in /usr/local/cuda); --emit=ptx works without it");
		return false;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/ave-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ir_error(c, noloc(), "cannot create a temporary directory for ptxas: %s",
		         strerror(errno));
		free(exe);
		return false;
	}
	char in[4200], cub[4200], logp[4200], opt[8], archopt[64];
	snprintf(in, sizeof in, "%s/k.ptx", dir);
	snprintf(cub, sizeof cub, "%s/k.cubin", dir);
	snprintf(logp, sizeof logp, "%s/log", dir);
	/* -g: the PTX targets "sm_XX, debug", which ptxas compiles only as device debug code,
	 * unoptimized (-g -O0). */
	snprintf(opt, sizeof opt, "-O%d", o->debug > 1 || o->opt < 0 ? 0 : o->opt > 3 ? 3 : o->opt);
	snprintf(archopt, sizeof archopt, "-arch=%s", arch);
	bool ok = lower_write_file(in, ptx, ptxlen);
	if (!ok)
		ir_error(c, noloc(), "cannot write '%s'", in);
	int status = -1;
	if (ok) {
		char *argv[] = {exe, archopt, "-v", opt, in, "-o", cub, NULL, NULL};
		if (o->debug > 1) {
			argv[4] = "-g";
			argv[5] = in;
			argv[6] = "-o";
			argv[7] = cub;
		}
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
		pid_t pid;
		int e = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		if (e) {
			ir_error(c, noloc(), "cannot run '%s': %s", exe, strerror(e));
			ok = false;
		} else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
			ir_error(c, noloc(), "'%s' did not finish", exe);
			ok = false;
		} else {
			status = WEXITSTATUS(status);
		}
	}
	char *log = ok ? lower_read_file(logp, NULL) : NULL;
	if (ok && status) {
		tool_error(c, "ptxas", log ? log : "", status);
		ok = false;
	}
	if (ok) {
		nvptx_parse_ptxas_log(c->al, log ? log : "", infos, ninfo);
		*out = lower_read_file(cub, outlen);
		if (!*out) {
			ir_error(c, noloc(), "ptxas wrote no cubin");
			ok = false;
		}
	}
	free(log);
	unlink(in);
	unlink(cub);
	unlink(logp);
	rmdir(dir);
	free(exe);
	return ok;
}

/* ---- nvJitLink, loaded at run time ---- */

typedef int (*JlCreate)(void **h, unsigned n, const char **opts);
typedef int (*JlAdd)(void *h, int kind, const void *data, size_t size, const char *name);
typedef int (*JlComplete)(void *h);
typedef int (*JlSize)(void *h, size_t *n);
typedef int (*JlGet)(void *h, void *buf);
typedef int (*JlDestroy)(void **h);

/* Looks up an nvJitLink entry point (versioned name first) into the function pointer at fp: a
 * byte copy, as ISO C does not convert dlsym's object pointer to a function pointer. */
static bool
sym(void *lib, const char *name, void *fp)
{
	char v[128];
	snprintf(v, sizeof v, "__%s_13_0", name);
	void *p = dlsym(lib, v);
	if (!p)
		p = dlsym(lib, name);
	memcpy(fp, &p, sizeof p);
	return p != NULL;
}

static bool
run_nvjitlink(IrCtx *c, const char *ptx, size_t ptxlen, const char *arch, const LowerOptions *o,
              LowerKernelInfo *infos, int ninfo, char **out, size_t *outlen)
{
	for (int i = 0; i < ninfo; i++)
		if (infos[i].setmaxnreg) {
			ir_error(
			    c, infos[i].loc,
			    "kernel '@%s' sets per-role register budgets (setmaxnreg), which "
			    "nvJitLink "
			    "drops (C7504: it compiles relocatable code); use --assembler=ptxas",
			    infos[i].name);
			return false;
		}
	const char *names[] = {"libnvJitLink.so.13", "libnvJitLink.so",
	                       "/usr/local/cuda/lib64/libnvJitLink.so.13"};
	void *lib = NULL;
	for (int i = 0; i < 3 && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		ir_error(c, noloc(),
		         "nvJitLink is not available (libnvJitLink.so.13 not found); use "
		         "--assembler=ptxas");
		return false;
	}
	JlCreate create = NULL;
	JlAdd add = NULL;
	JlComplete complete = NULL;
	JlSize cubsize = NULL, errsize = NULL, infosize = NULL;
	JlGet cubin = NULL, errlog = NULL, infolog = NULL;
	JlDestroy destroy = NULL;
	bool found = sym(lib, "nvJitLinkCreate", &create) && sym(lib, "nvJitLinkAddData", &add) &&
	             sym(lib, "nvJitLinkComplete", &complete) &&
	             sym(lib, "nvJitLinkGetLinkedCubinSize", &cubsize) &&
	             sym(lib, "nvJitLinkGetErrorLogSize", &errsize) &&
	             sym(lib, "nvJitLinkGetInfoLogSize", &infosize) &&
	             sym(lib, "nvJitLinkGetLinkedCubin", &cubin) &&
	             sym(lib, "nvJitLinkGetErrorLog", &errlog) &&
	             sym(lib, "nvJitLinkGetInfoLog", &infolog) &&
	             sym(lib, "nvJitLinkDestroy", &destroy);
	if (!found) {
		ir_error(c, noloc(), "nvJitLink lacks the entry points this build expects");
		return false;
	}
	char archopt[64], opt[8];
	snprintf(archopt, sizeof archopt, "-arch=%s", arch);
	snprintf(opt, sizeof opt, "-O%d", o->opt > 0 && o->debug < 2 ? 3 : 0);
	const char *opts[] = {archopt, "-verbose", opt, "-g"}; /* -g: device debug, as ptxas */
	void *h = NULL;
	bool ok = create(&h, o->debug > 1 ? 4 : 3, opts) == 0;
	int r = ok ? add(h, 2 /* PTX */, ptx, ptxlen + 1, "kernel.ptx") : -1;
	if (ok && r == 0)
		r = complete(h);
	size_t n = 0;
	if (ok && r) {
		char *el = NULL;
		if (!errsize(h, &n) && n) {
			el = calloc(1, n + 1);
			errlog(h, el);
		}
		tool_error(c, "nvJitLink", el ? el : "", r);
		free(el);
		ok = false;
	} else if (ok) {
		if (!infosize(h, &n) && n) {
			char *il = calloc(1, n + 1);
			infolog(h, il);
			/* Its log prefixes stack lines with "ptxas         ." instead of spaces. */
			for (char *p = strstr(il, "ptxas         ."); p;
			     p = strstr(p, "ptxas         ."))
				memset(p, ' ', 15);
			nvptx_parse_ptxas_log(c->al, il, infos, ninfo);
			free(il);
		}
		if (!cubsize(h, &n)) {
			*out = malloc(n ? n : 1);
			*outlen = n;
			ok = cubin(h, *out) == 0;
		}
	} else {
		ir_error(c, noloc(), "nvJitLink did not start");
	}
	if (h)
		destroy(&h);
	/* The library stays loaded: it brings its own C++ runtime, whose emergency exception pool
	 * would read as a leak once unmapped, and a later compile finds it loaded. */
	return ok;
}

bool
nvptx_codegen(IrCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *emit,
              const LowerOptions *o, LowerKernelInfo *infos, int ninfo, char **out, size_t *outlen,
              double *timings)
{
	double t0 = ir_now();
	char *err = NULL;
	LLVMMemoryBufferRef buf = NULL;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
		ir_error(c, noloc(), "internal error: LLVM could not emit PTX: %s", err ? err : "");
		LLVMDisposeMessage(err);
		return false;
	}
	size_t n = LLVMGetBufferSize(buf);
	char *ptx = malloc(n + 1);
	memcpy(ptx, LLVMGetBufferStart(buf), n);
	ptx[n] = 0;
	LLVMDisposeMemoryBuffer(buf);
	timings[LOWER_T_CODEGEN] = ir_now() - t0;
	if (!strcmp(emit, "ptx")) {
		*out = ptx;
		*outlen = n;
		return true;
	}
	if (strcmp(emit, "cubin")) {
		ir_error(c, noloc(), "unknown output kind '%s'", emit);
		free(ptx);
		return false;
	}
	char *arch = LLVMGetTargetMachineCPU(tm);
	double t1 = ir_now();
	bool ok;
	if (o->assembler && !strcmp(o->assembler, "nvjitlink"))
		ok = run_nvjitlink(c, ptx, n, arch, o, infos, ninfo, out, outlen);
	else
		ok = run_ptxas(c, ptx, n, arch, o, infos, ninfo, out, outlen);
	timings[LOWER_T_ASSEMBLE] = ir_now() - t1;
	char tname[32];
	snprintf(tname, sizeof tname, "%s", arch);
	LLVMDisposeMessage(arch);
	free(ptx);
	/* The binary has the last word: the register count the cubin records must be the one the
	 * tool reported (metadata and budgets are built on it). */
	for (int i = 0; ok && i < ninfo; i++) {
		/* A register hint ptxas ignored is an error, not a line in the metadata: the roles would
		 * run with budgets other than the ones the kernel states and the pool rule proved. */
		for (int j = 0; j < infos[i].diags.len; j++) {
			const char *d = IR_VEC_AT(infos[i].diags, char *, j);
			if (strstr(d, "(C7504)") || strstr(d, "(C7507)") || strstr(d, "(C7508)")) {
				IrDiag *e = ir_diag_begin(c, IR_SEV_ERROR, infos[i].loc,
							  "kernel '@%s': ptxas ignored its per-role register "
							  "budgets (setmaxnreg)", infos[i].name);
				ir_diag_note(c, e, infos[i].loc, "ptxas: %s", d);
				ir_diag_note(c, e, infos[i].loc, "a role needs more registers than its 'regs' "
					     "allows; raise that budget (within the pool rule) or give the role "
					     "less to hold");
				ir_diag_emit(c, e);
				ok = false;
				break;
			}
		}
		if (!ok)
			break;
		int regs = ra_cubin_regcount(*out, *outlen, infos[i].name);
		int64_t frame = ra_cubin_frame(*out, *outlen, infos[i].name);
		bool logged = infos[i].stats;
		if (regs >= 0 && logged && regs != infos[i].regs) {
			ir_error(c, infos[i].loc, "kernel '@%s': the cubin records %d registers per thread, but "
				 "the assembler reported %d", infos[i].name, regs, infos[i].regs);
			ok = false;
		} else if (regs >= 0 && !logged) {
			infos[i].stats = true;
			infos[i].regs = regs;
		}
		if (frame >= 0 && logged && frame != infos[i].stack) {
			ir_error(c, infos[i].loc, "kernel '@%s': the cubin records a stack frame of %lld "
				 "bytes per thread, but the assembler reported %lld", infos[i].name,
				 (long long)frame, (long long)infos[i].stack);
			ok = false;
		} else if (frame >= 0 && !logged) {
			infos[i].stack = frame;
		}
		/* A spill is never silent. In optimized code it breaks the register plan: without
		 * per-role budgets the caller compiles again (LowerOptions.replan) or it is an error;
		 * with them it breaks what the pool rule proved, an error, as on AMDGPU. Unoptimized
		 * code: a warning beside the plan (and a line in the metadata). */
		LowerKernelInfo *k = &infos[i];
		if (ok && k->stats && (k->spill_stores || k->spill_loads)) {
			char msg[320];
			snprintf(msg, sizeof msg, "kernel '@%s' %s%s", k->name,
				 lower_spill_what(c, k, tname, false),
				 k->regalloc_budget > 0 ? "" : " (no register plan)");
			/* -g (ptxas -G) and -O0 make unoptimized code, which spills as it likes. */
			bool optimized = o->debug < 2 && o->opt > 0;
			if (optimized && !k->setmaxnreg && o->replan && k->regalloc_budget > 0) {
				k->replan = true; /* the caller compiles again, or reports it */
			} else if (optimized && !k->setmaxnreg) {
				lower_spill_error(c, k, tname, false, NULL);
				ok = false;
			} else if (k->setmaxnreg && optimized) {
				IrDiag *e = ir_diag_begin(c, IR_SEV_ERROR, k->loc, "%s, although its roles' "
							  "budgets were planned to fit", msg);
				ir_diag_note(c, e, k->loc, "the plan's largest budget is %d registers per "
					     "thread; give the role that spills a larger 'regs' (within the "
					     "pool rule) or less to hold", k->regalloc_budget);
				ir_diag_emit(c, e);
				ok = false;
			} else {
				if (k->regalloc_budget > 0)
					snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
						 "; its register plan's budget is %d", k->regalloc_budget);
				ir_warning(c, k->loc, "%s", msg);
				add_diag(c->al, k, msg, strlen(msg));
			}
		} else if (ok && !logged && frame > 0) {
			/* No report from the assembler (nvJitLink): the binary's stack frame is local
			 * memory the kernel uses, spills or arrays, which is no more silent. */
			char msg[320];
			snprintf(msg, sizeof msg,
				 "kernel '@%s' uses a stack frame of %lld bytes per thread in local memory "
				 "on target '%s' (spilled registers or local arrays; the assembler reported "
				 "no figures)%s",
				 k->name, (long long)frame, tname,
				 k->regalloc_budget > 0 ? "" : " (no register plan)");
			ir_warning(c, k->loc, "%s", msg);
			add_diag(c->al, k, msg, strlen(msg));
		}
	}
	return ok;
}
