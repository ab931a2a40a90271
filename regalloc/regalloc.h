/* regalloc.h — registers: the budget a kernel launches with, the role register pool (SPEC 5.10),
 * the roles' description for the metadata, and the register use read back from a binary.
 * Arithmetic over the target registry and the role analysis (ir/), with no LLVM: the verifier and
 * both backends call the same functions, so a rule is written once. */
#ifndef AVE_REGALLOC_H
#define AVE_REGALLOC_H

#include "../ir/ir.h"

/* Per-thread registers a kernel of `threads` threads launches with: on NVIDIA the register file
 * divided among the threads, at most max_regs, rounded down to the granule (65536 / threads, at
 * most 255, a multiple of 8); on AMDGPU what a lane has when the workgroup's waves share the SIMDs
 * (512 / waves per SIMD); 0 where nothing limits it (host). */
int ra_entry_regs(const TargetInfo *t, int64_t threads);

/* Registers per thread a transformation may add to a group for tiles it carries across loop
 * iterations (the prefetch pass's register double buffering) before it would likely spill: 128,
 * half of the NVIDIA per-thread maximum, on every target (on AMDGPU more VGPRs would also cost
 * occupancy). `--passes=prefetch{max-regs=N}` overrides it. */
int ra_prefetch_regs(const TargetInfo *t);

/* What the roles of one ave.warp_specialize ask of the register file. */
typedef struct RaRoles {
	int64_t pool_need;     /* setmaxnreg targets: registers the budgets need in all */
	int64_t pool_have;     /* ... and what the launch gives */
	int64_t max_role_regs; /* the largest regs(n), 0 when no role sets one */
	int waves_per_eu;      /* AMDGPU: the occupancy that gives every wave max_role_regs, else 0 */
} RaRoles;

/* Checks the roles of `ws` in a `threads`-thread kernel against target t and fills `out`:
 * on targets with setmaxnreg, a role with regs(n) covers whole aligned warpgroups and the
 * budgets fit the registers the kernel launches with (the pool rule); on AMDGPU, the largest
 * regs(n) binds every wave and must leave room for the workgroup's waves on each SIMD. Emits an
 * error for the first violation and returns false. With `warn`, also warns for each regs(n) a
 * target cannot honour per role. */
bool ra_check_roles(IrCtx *c, const TargetInfo *t, int64_t threads, IrOp *ws, bool warn,
		    RaRoles *out);

/* Appends to `out` (char *, malloc'd) one JSON object per role of `ws`: {"name", "first_warp",
 * "warps", "replicate", "regs"}, names escaped. */
void ra_roles_json(IrCtx *c, IrOp *ws, IrVec *out);

/* Register use of a compiled kernel, as observed in the binary or the tool's report. */
typedef struct RaUsage {
	bool known;
	int regs;                 /* per thread (NVIDIA); VGPRs per lane (AMDGPU) */
	int agprs, sgprs;         /* AMDGPU */
	int64_t stack;            /* bytes of stack / scratch per thread */
	int64_t spill_stores, spill_loads; /* bytes (NVIDIA) */
	int64_t spill_vgprs, spill_sgprs;  /* AMDGPU */
	int barriers;             /* named barriers (NVIDIA) */
	int64_t static_smem;      /* bytes */
	const char *source;       /* where the figures come from: "ptxas", "hsaco" */
} RaUsage;

/* Reads one line of ptxas's --verbose report into u (the kernel's "Used N registers" and "bytes
 * stack frame" lines); false when the line is neither. */
bool ra_ptxas_line(const char *line, RaUsage *u);
/* The register count the cubin's .nv.info section records for kernel `name` (EIATTR_REGCOUNT);
 * -1 when the cubin has no such record. */
int ra_cubin_regcount(const void *elf, size_t len, const char *name);

/* ---- hsaco.c: an AMDGPU code object's own account of its kernels ---- */

/* One kernel of the NT_AMDGPU_METADATA note. */
typedef struct RaHsacoKernel {
	char name[128];
	int64_t vgpr, agpr, sgpr, vgpr_spill, sgpr_spill, scratch, lds, kernarg, max_wg, wave;
} RaHsacoKernel;

/* Reads every kernel's resource usage from an ELF code object; returns the number of kernels
 * (at most max) or -1 when the file has no well-formed AMDGPU metadata note. */
int ra_hsaco_read(const unsigned char *elf, size_t size, RaHsacoKernel *out, int max);

/* What a kernel descriptor (NAME.kd) makes the hardware allocate, read independently of the
 * metadata note (gfx90a and gfx942 encoding: unified VGPR/AGPR file in granules of 8). */
typedef struct RaHsacoDescriptor {
	bool found;
	int vgprs;            /* VGPRs + AGPRs allocated per lane (a multiple of 8) */
	int accum_offset;     /* first AGPR, in VGPR numbering */
	int64_t private_segment, group_segment; /* bytes of scratch per lane, static LDS */
} RaHsacoDescriptor;

bool ra_hsaco_descriptor(const unsigned char *elf, size_t size, const char *name,
			 RaHsacoDescriptor *out);

#endif
