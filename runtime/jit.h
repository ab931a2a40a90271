/* jit.h — the compiler half of the JIT library (libave): how a kernel of a parsed module becomes
 * a bundle for a target. Backends plug in through JitBackend. */
#ifndef AVE_JIT_H
#define AVE_JIT_H

#include "../lower/lower.h"
#include "rt.h"

/* What a backend produces for one kernel: the binary (cubin, HSACO, or `.ave` text for host)
 * and the metadata JSON the runtime reads (docs/jit.md). Both malloc'd. */
typedef struct JitOutput {
	uint8_t *binary;
	size_t binary_len;
	char *meta;
} JitOutput;

typedef struct JitRequest {
	IrModule *m;        /* a private copy: the backend may transform it */
	IrOp *kernel;
	const TargetInfo *target;
	int opt;            /* 0..3 */
	const char *pipeline; /* extra passes before the compile pipeline, or NULL */
	bool check;         /* run check-invariants (a failure stops the compile) */
	const char *source; /* the module's text as written, or NULL (host bundles carry it) */
	size_t source_len;
	int debug;          /* 0: none; 1: line tables (-lineinfo); 2: full (-g); GPU targets only */
	bool sim;           /* the target's LLVM IR for a simulated device ("binary": "llvm") */
} JitRequest;

/* ---- jit_backends.c ---- */

/* The lowering target (backend) of t in this build, or NULL; the names, for messages. */
const LowerTarget *jit_lower_target(const TargetInfo *t);
/* regalloc's tile sizes (IrPassOpts.tile_regs): the layouts the target's lowering assigns, else
 * (no backend for t) the blocked layouts. */
bool jit_tile_regs(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs);
const char *jit_target_names(void);
/* Runs `passes` (a pipeline in ave-opt's syntax; the word `default` stands for the default
 * pipeline, without check-invariants when !check) instead of the default pipeline. */
bool jit_run_passes(IrModule *m, const TargetInfo *target, bool check, const char *passes,
		    const IrPassOpts *hooks);
/* Runs the compile pipeline (SPEC §1, the passes this build has) before lowering for `target`,
 * after the `extra` comma-separated passes; `hooks` (or NULL) gives the after_pass callback. */
bool jit_compile_pipeline(IrModule *m, const TargetInfo *target, bool check, const char *extra,
			  const IrPassOpts *hooks);
/* Compiles rq->kernel for a GPU target into its binary and metadata. */
bool jit_build_gpu(const JitRequest *rq, JitOutput *out);
/* Runs a pipeline on m with `hooks` (their ra_* fields set): what jit_lower calls again. */
typedef bool (*JitPipeFn)(IrModule *m, const IrPassOpts *hooks, void *ud);
/* Whether `lo` makes a binary whose register use jit_lower checks against the plan (a cubin or
 * an HSACO): then the caller keeps a copy of the module before its pipeline for jit_lower. */
bool jit_lower_replans(const LowerTarget *t, const LowerOptions *lo);
/* lower_compile for *m, already through its pipeline. When the assembler spills a kernel that
 * has no per-role budgets although its register plan fit, the kernel is compiled again from
 * `orig` (the module before the pipeline, through `pipe`) with regalloc keeping more registers
 * for what is not a tile in that kernel (what the binary needed, and at least 8 more each
 * time), so that tiles wait in shared memory instead: up to three times. A spill that remains
 * is an error (lower_spill_error). *m and *res are then the module and result compiled last:
 * a module of its own, which the caller frees besides the one it passed, when *m changed.
 * With orig NULL it is lower_compile. */
bool jit_lower(IrModule **m, IrModule *orig, const LowerTarget *t, LowerOptions *lo,
	       LowerResult *res, JitPipeFn pipe, void *ud, const IrPassOpts *hooks);

/* ---- jit_compile.c ---- */

/* Compiles for any target, host included (what `ave compile --emit=bundle` and the JIT use). */
bool jit_build(const JitRequest *rq, JitOutput *out);

/* The metadata of a kernel compiled for `host` (its signature; the runtime's schema); NULL
 * after an error (reported). */
char *jit_host_metadata(IrCtx *c, IrOp *kernel, const TargetInfo *target, const char *file);

#endif
