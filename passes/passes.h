/* passes.h — the IR-to-IR passes and their registry (passes.def), the default pipeline, and the
 * shared-memory plan the lowering reuses. No LLVM here: the lowering is lower/, the invariant
 * checker check/. */
#ifndef AVE_PASSES_H
#define AVE_PASSES_H

#include "../check/check.h"
#include "../ir/ir.h"
#include "../lower/layout.h"
#include "../regalloc/regalloc.h"

extern const IrPass pass_registry[];
extern const int pass_registry_count;

#define PASS(name, fn, summary, options) bool fn(IrModule *m, const IrPassOpts *o);
#include "passes.def"
#undef PASS

/* Calls fn on every ave.for of the module, inner loops before the loops around them, with the
 * target its kernel compiles for (`target`, else the kernel's attribute, else NULL). fn may
 * replace or erase the loop it is given. */
typedef void (*PassLoopFn)(IrModule *m, IrOp *loop, const TargetInfo *t, void *ud);
void pass_for_each_loop(IrModule *m, const TargetInfo *target, PassLoopFn fn, void *ud);

/* The default pipeline for target t (NULL: a GPU target), in the order of SPEC §1, without the
 * invariant checker unless `check`: the passes' names, comma-separated, into buf (n bytes). The
 * driver, ave-opt and libave compile with it. */
char *pass_default_pipeline(const TargetInfo *t, bool check, char *buf, size_t n);
/* `passes` (a pipeline in --passes syntax) with each entry `default` replaced by the default
 * pipeline for t (without check-invariants when !check), into buf; NULL when it does not fit.
 * Other entries are copied as written, for the pass manager to judge. */
char *pass_expand_pipeline(const TargetInfo *t, bool check, const char *passes, char *buf,
			   size_t n);

/* ---- smem_alloc.c: shared-memory allocation by liveness (the `smem-alloc` pass) ---- */

/* Kernels naming a target fit its shared memory (errors name the target and the buffers). */
bool pass_smem_fits(IrModule *m);

/* The target a kernel compiles for: `target` when given (the driver's --target), else the
 * kernel's `target` attribute (when it names a registered target), else NULL. */
const TargetInfo *pass_kernel_target(IrCtx *c, IrOp *kernel, const TargetInfo *target);

/* A buffer to place: live from op number `start` to `end` (pre-order numbers, inclusive). */
typedef struct LowerSmemBuf {
	const char *name; /* for messages: "%sA", or what the scratch is for */
	IrLoc loc;
	IrValue *value;   /* the smem.alloc / mbar.alloc result, or NULL for scratch */
	int64_t bytes, align;
	uint32_t start, end;
	int64_t offset; /* result */
	bool shared;    /* result: shares bytes with a buffer live at another time */
} LowerSmemBuf;

/* Numbers the kernel's ops (ir_number_values) and appends its smem.alloc and mbar.alloc buffers
 * (f->mbar_bytes per barrier; 8 without a target) to `bufs` (LowerSmemBuf) with their live ranges: from the allocation to the last use (through
 * slices), widened to whole loops and to the whole ave.warp_specialize, since roles run at the
 * same time. False after an error (a tile it cannot lay out). */
bool lower_smem_collect(IrCtx *c, IrOp *kernel, const TargetInfo *f, IrVec *bufs);
/* Places buffers whose live ranges overlap at disjoint, aligned offsets (largest first, lowest
 * free offset); returns the bytes used. */
int64_t lower_smem_assign(LowerSmemBuf *b, int n);
/* The last op number inside op (its subtree), after numbering. */
uint32_t lower_op_end(IrOp *op);
/* Reports (error) a plan that exceeds the target's limit, naming every buffer. */
bool lower_smem_check(IrCtx *c, IrOp *kernel, const TargetInfo *f, const LowerSmemBuf *b,
		      int n, int64_t total);

#endif
