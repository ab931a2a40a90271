/* codegen.c — from the optimized LLVM module to AMDGPU assembly or an HSACO: LLVM emits an ELF
 * object, lld links it as a shared object (in-process through liblld where built, else ld.lld as
 * a process), and the code object's metadata gives each kernel's registers, spills, scratch, LDS
 * and kernarg size. The HSACO must hold every kernel: LLVM removes a kernel it cannot compile
 * for the target rather than failing. */
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

#include "amdgpu.h"

extern char **environ;

static IrLoc
noloc(void)
{
	IrLoc l = {0, 0, 0};
	return l;
}

/* ---- LLVM's diagnostics (else an error would end the process) ---- */

typedef struct LlvmDiags {
	IrCtx *c;
	const char *target;
	int errors;
} LlvmDiags;

static void
on_llvm_diag(LLVMDiagnosticInfoRef di, void *ud)
{
	LlvmDiags *d = ud;
	LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
	if (sev != LLVMDSError && sev != LLVMDSWarning)
		return;
	char *msg = LLVMGetDiagInfoDescription(di);
	if (sev == LLVMDSError) {
		ir_error(d->c, noloc(), "LLVM cannot compile for target '%s': %s", d->target, msg);
		d->errors++;
	} else {
		ir_warning(d->c, noloc(), "LLVM (target '%s'): %s", d->target, msg);
	}
	LLVMDisposeMessage(msg);
}

/* ---- files and processes ---- */

/* ld.lld: $AVE_LLD, then tool_dir, PATH (ld.lld-19, ld.lld), LLVM 19's bin; NULL if nowhere. */
static char *
find_lld(const char *tool_dir)
{
	static const char *const names[] = {"ld.lld-19", "ld.lld", NULL};
	static const char *const fallback[] = {"/usr/lib/llvm-19/bin/ld.lld", NULL};
	return lower_find_tool("AVE_LLD", tool_dir, names, fallback);
}

static void
link_error(IrCtx *c, const char *how, int status, const char *log)
{
	IrDiag *d = ir_diag_begin(c, IR_SEV_ERROR, noloc(), "linking the HSACO with %s failed (exit status %d)",
				  how, status);
	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len)
			ir_diag_note(c, d, noloc(), "%.*s", (int)len, line);
		line = end ? end + 1 : NULL;
	}
	ir_diag_emit(c, d);
}

static bool
spawn_lld(IrCtx *c, const char *exe, char **argv, const char *logp)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int st = 0, e = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e) {
		ir_error(c, noloc(), "cannot run '%s': %s", exe, strerror(e));
		return false;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) {
		ir_error(c, noloc(), "'%s' did not finish", exe);
		return false;
	}
	if (WEXITSTATUS(st)) {
		char *log = lower_read_file(logp, NULL);
		link_error(c, exe, WEXITSTATUS(st), log);
		free(log);
		return false;
	}
	return true;
}

/* Links the object into an HSACO: in-process lld unless the options ask for ld.lld (or this
 * build has no liblld). */
static bool
link_hsaco(IrCtx *c, const char *obj, size_t objlen, const LowerOptions *o, char **out, size_t *outlen)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/ave-lld-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ir_error(c, noloc(), "cannot create a temporary directory for the linker: %s", strerror(errno));
		return false;
	}
	char in[4200], hs[4200], logp[4200];
	snprintf(in, sizeof in, "%s/k.o", dir);
	snprintf(hs, sizeof hs, "%s/k.hsaco", dir);
	snprintf(logp, sizeof logp, "%s/log", dir);
	bool ok = lower_write_file(in, obj, objlen);
	if (!ok)
		ir_error(c, noloc(), "cannot write '%s'", in);
	bool process = o->assembler && !strcmp(o->assembler, "ld.lld");
#ifndef AVE_AMDGPU_INPROC_LLD
	if (ok && o->assembler && !strcmp(o->assembler, "lld")) {
		ir_error(c, noloc(), "this build has no in-process lld (liblld-19-dev); use --assembler=ld.lld");
		ok = false;
	}
	process = true;
#endif
	if (ok && process) {
		char *exe = find_lld(o->tool_dir);
		if (!exe) {
			ir_error(c, noloc(), "ld.lld not found: the HSACO step needs it (set AVE_LLD or install lld-19); "
				 "--emit=asm works without it");
			ok = false;
		} else {
			char *argv[] = {exe, "-shared", "--no-undefined", "-o", hs, in, NULL};
			ok = spawn_lld(c, exe, argv, logp);
			free(exe);
		}
	}
#ifdef AVE_AMDGPU_INPROC_LLD
	if (ok && !process) {
		const char *argv[] = {"ld.lld", "-shared", "--no-undefined", "-o", hs, in};
		char *msgs = NULL;
		int rc = amdgpu_lld_link(6, argv, &msgs);
		if (rc) {
			link_error(c, "lld (in-process)", rc, msgs);
			ok = false;
		}
		free(msgs);
	}
#endif
	if (ok && !(*out = lower_read_file(hs, outlen))) {
		ir_error(c, noloc(), "the linker wrote no HSACO");
		ok = false;
	}
	unlink(in);
	unlink(hs);
	unlink(logp);
	rmdir(dir);
	return ok;
}

/* ---- reading the HSACO back ---- */

static void
add_diag(const IrAllocator *al, LowerKernelInfo *k, const char *msg)
{
	char *s = strdup(msg);
	ir_vec_push(al, &k->diags, &s, sizeof s);
}

/* Fills the kernels' infos from the code object and checks what LLVM cannot be trusted to
 * refuse: every kernel is there, wave64, LDS within the limit; spills are reported. */
static bool
read_back(IrCtx *c, const char *target, const char *hsaco, size_t len, LowerKernelInfo *infos, int ninfo,
	  const LowerOptions *o)
{
	int max = ninfo + 8;
	RaHsacoKernel *meta = calloc((size_t)max, sizeof *meta);
	int n = ra_hsaco_read((const unsigned char *)hsaco, len, meta, max);
	bool ok = true;
	if (n < 0) {
		ir_error(c, noloc(), "the HSACO for target '%s' has no readable AMDGPU metadata note", target);
		free(meta);
		return false;
	}
	for (int i = 0; i < ninfo; i++) {
		LowerKernelInfo *k = &infos[i];
		RaHsacoKernel *m = NULL;
		for (int j = 0; j < n && !m; j++)
			if (!strcmp(meta[j].name, k->name))
				m = &meta[j];
		if (!m) {
			ir_error(c, k->loc, "kernel '@%s' is missing from the HSACO for target '%s' (LLVM removed it)",
				 k->name, target);
			ok = false;
			continue;
		}
		if (m->wave != AMDGPU_WAVE) {
			ir_error(c, k->loc, "kernel '@%s' was compiled for %lld-lane waves on target '%s', not %d",
				 k->name, (long long)m->wave, target, AMDGPU_WAVE);
			ok = false;
		}
		int64_t lds = m->lds + k->smem_bytes;
		const TargetInfo *f = target_find(target);
		if (f && lds > f->smem_limit) {
			ir_error(c, k->loc, "kernel '@%s' needs %lld bytes of LDS (%lld static + %lld shared), but target "
				 "'%s' allows %lld per workgroup", k->name, (long long)lds, (long long)m->lds,
				 (long long)k->smem_bytes, target, (long long)f->smem_limit);
			ok = false;
		}
		/* Roles set a budget (amdgpu-waves-per-eu): a spill or an overrun breaks the plan. */
		const char *w = k->target_json ? strstr(k->target_json, "\"waves_per_eu\": ") : NULL;
		int wpe = w ? atoi(w + 16) : 0;
		int regfile = f ? f->regfile : 512;
		if (wpe > 0 && (m->vgpr_spill || m->vgpr > regfile / wpe)) {
			ir_error(c, k->loc, "kernel '@%s' does not fit the roles' budget of %d registers per lane "
				 "(amdgpu-waves-per-eu=%d) on target '%s': it uses %lld and spills %lld VGPRs", k->name, regfile / wpe, wpe,
				 target, (long long)m->vgpr, (long long)m->vgpr_spill);
			ok = false;
		}
		/* The descriptor is what the hardware allocates: it must cover what the metadata says the
		 * code uses (an independent reading of the same binary). */
		RaHsacoDescriptor kd;
		if (ra_hsaco_descriptor((const unsigned char *)hsaco, len, k->name, &kd) &&
		    (kd.vgprs < m->vgpr || kd.private_segment != m->scratch)) {
			ir_error(c, k->loc, "kernel '@%s' on target '%s': its descriptor allocates %d registers per "
				 "lane and %lld bytes of scratch, but the code object's metadata says it uses %lld and "
				 "%lld", k->name, target, kd.vgprs, (long long)kd.private_segment, (long long)m->vgpr,
				 (long long)m->scratch);
			ok = false;
		}
		/* And the code itself, read independently of both (disasm.c): the registers and
		 * scratch its instructions name must be what the descriptor allocates. */
		AmdgpuScan sc = {0};
		const unsigned char *code;
		uint64_t clen;
		char why[256];
		bool scanned = false;
		if (!ra_hsaco_code((const unsigned char *)hsaco, len, k->name, &code, &clen)) {
			ir_error(c, k->loc, "kernel '@%s' on target '%s': its code is missing from the "
				 "HSACO", k->name, target);
			ok = false;
		} else if (!amdgpu_scan_code(code, clen, target, &sc, why, sizeof why)) {
			ir_error(c, k->loc, "kernel '@%s' on target '%s': cannot read its code: %s", k->name,
				 target, why);
			ok = false;
		} else if (kd.found && !amdgpu_scan_check(&sc, kd.vgprs, (int)m->agpr, kd.accum_offset,
							 kd.private_segment, why, sizeof why)) {
			ir_error(c, k->loc, "kernel '@%s' on target '%s': %s (the code object's metadata "
				 "says %lld VGPRs, %lld AGPRs, %lld bytes of scratch)", k->name, target, why,
				 (long long)m->vgpr, (long long)m->agpr, (long long)m->scratch);
			ok = false;
		} else {
			scanned = true;
		}
		k->stats = true;
		k->regs = (int)m->vgpr;
		k->stack = m->scratch;
		k->spill_stores = 4 * m->vgpr_spill;
		k->spill_loads = 4 * m->vgpr_spill;
		k->static_smem = m->lds;
		/* VGPRs spilled to scratch in optimized code without the roles' budget, although the
		 * register plan fit: compiled again or an error (lower_spill_error), as on NVIDIA.
		 * SGPRs spilled into VGPR lanes are no memory: a warning. */
		bool optimized = o->opt > 0 && o->debug < 2;
		if (ok && m->vgpr_spill && optimized && o->replan && k->regalloc_budget > 0) {
			k->replan = true;
		} else if (ok && m->vgpr_spill && optimized) {
			lower_spill_error(c, k, target, true, NULL);
			ok = false;
		} else if (m->vgpr_spill || m->sgpr_spill || m->scratch) {
			char msg[256];
			snprintf(msg, sizeof msg, "kernel '@%s' spills %lld VGPRs and %lld SGPRs (%lld bytes of scratch "
				 "per lane) on target '%s'", k->name, (long long)m->vgpr_spill, (long long)m->sgpr_spill,
				 (long long)m->scratch, target);
			ir_warning(c, k->loc, "%s", msg);
			add_diag(c->al, k, msg);
		}
		/* Members the lowering recorded ({"waves_per_eu": 2}) join the object. */
		char extra[256] = "";
		size_t el = k->target_json ? strlen(k->target_json) : 0;
		if (el > 2 && k->target_json[0] == '{' && k->target_json[el - 1] == '}')
			snprintf(extra, sizeof extra, ", %.*s", (int)(el - 2), k->target_json + 1);
		char js[1024], code_json[160] = "null";
		if (scanned)
			snprintf(code_json, sizeof code_json,
				 "{\"instructions\": %d, \"vgprs\": %d, \"agprs\": %d, \"sgprs\": %d, "
				 "\"scratch_instructions\": %d}", sc.insns, sc.vgprs, sc.agprs, sc.sgprs,
				 sc.scratch);
		int agpr = m->agpr < 0 ? 0 : (int)m->agpr;
		snprintf(js, sizeof js,
			 "{\"vgpr_count\": %lld, \"agpr_count\": %d, \"arch_vgpr_count\": %lld, \"sgpr_count\": %lld, "
			 "\"vgpr_spill_count\": %lld, \"sgpr_spill_count\": %lld, \"private_segment_bytes\": %lld, "
			 "\"group_segment_bytes\": %lld, \"kernarg_segment_bytes\": %lld, \"max_flat_workgroup_size\": "
			 "%lld, \"wavefront_size\": %lld, \"buffer_limit_bytes\": %lld, \"code\": %s%s}",
			 (long long)m->vgpr, agpr, (long long)(m->vgpr - agpr), (long long)m->sgpr,
			 (long long)m->vgpr_spill, (long long)m->sgpr_spill, (long long)m->scratch, (long long)m->lds,
			 (long long)m->kernarg, (long long)m->max_wg, (long long)m->wave,
			 (long long)AMDGPU_BUFFER_LIMIT, code_json, extra);
		free(k->target_json);
		k->target_json = strdup(js);
	}
	free(meta);
	return ok;
}

/* --emit=asm: the assembly; --emit=hsaco: object, link, metadata read back into the infos. */
bool
amdgpu_codegen(IrCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *emit, const LowerOptions *o,
	       LowerKernelInfo *infos, int ninfo, char **out, size_t *outlen, double *timings)
{
	if (strcmp(emit, "asm") && strcmp(emit, "hsaco")) {
		ir_error(c, noloc(), "unknown output kind '%s'", emit);
		return false;
	}
	char *cpu = LLVMGetTargetMachineCPU(tm);
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	LlvmDiags diags = {c, cpu, 0};
	LLVMDiagnosticHandler old = LLVMContextGetDiagnosticHandler(ctx);
	void *old_ud = LLVMContextGetDiagnosticContext(ctx);
	LLVMContextSetDiagnosticHandler(ctx, on_llvm_diag, &diags);
	double t0 = ir_now();
	char *err = NULL;
	LLVMMemoryBufferRef buf = NULL;
	bool asm_out = !strcmp(emit, "asm");
	bool ok = !LLVMTargetMachineEmitToMemoryBuffer(tm, mod, asm_out ? LLVMAssemblyFile : LLVMObjectFile, &err,
						       &buf);
	LLVMContextSetDiagnosticHandler(ctx, old, old_ud);
	if (!ok) {
		ir_error(c, noloc(), "internal error: LLVM could not emit code for target '%s': %s", cpu, err ? err : "");
		LLVMDisposeMessage(err);
	} else if (diags.errors) {
		ok = false;
	}
	timings[LOWER_T_CODEGEN] = ir_now() - t0;
	size_t n = ok ? LLVMGetBufferSize(buf) : 0;
	char *bytes = NULL;
	if (ok) {
		bytes = malloc(n + 1);
		memcpy(bytes, LLVMGetBufferStart(buf), n);
		bytes[n] = 0;
	}
	if (buf)
		LLVMDisposeMemoryBuffer(buf);
	if (ok && asm_out) {
		*out = bytes;
		*outlen = n;
		LLVMDisposeMessage(cpu);
		return true;
	}
	double t1 = ir_now();
	if (ok)
		ok = link_hsaco(c, bytes, n, o, out, outlen);
	if (ok)
		ok = read_back(c, cpu, *out, *outlen, infos, ninfo, o);
	timings[LOWER_T_ASSEMBLE] = ir_now() - t1;
	free(bytes);
	LLVMDisposeMessage(cpu);
	return ok;
}
