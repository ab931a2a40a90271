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
/* Per-function attributes of a cubin's .nv.info section: EIATTR_REGCOUNT (registers per thread)
 * and EIATTR_FRAME_SIZE (bytes of stack frame per thread, in local memory: what ptxas reports as
 * "bytes stack frame", spills included). */
enum { RA_EIATTR_FRAME_SIZE = 0x11, RA_EIATTR_REGCOUNT = 0x2f };
/* The value the cubin's .nv.info section records for kernel `name` under attribute `attr`; -1
 * when the cubin has no such record (or is not a well-formed ELF64). */
int64_t ra_cubin_attr(const void *elf, size_t len, const char *name, int attr);
int ra_cubin_regcount(const void *elf, size_t len, const char *name);
int64_t ra_cubin_frame(const void *elf, size_t len, const char *name);

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
/* The machine code of kernel `name` (its symbol's bytes), for an independent reading of what the
 * code uses; false when the symbol is absent or runs outside the file. */
bool ra_hsaco_code(const unsigned char *elf, size_t size, const char *name,
		   const unsigned char **code, uint64_t *len);

/* ---- plan.c: liveness and allocation of register tiles (SPEC 5.10; docs/regalloc.md) ----
 *
 * Program points number the ops of a kernel in order; an op with regions has a second point
 * after them, where its results are defined. Each point has two halves: an op reads its operands
 * in the first and writes its results in the second, so a result may take the slots of an
 * operand whose last use is that op. Liveness is computed backward over the structured program
 * (a loop keeps every tile it reads from outside live across its back edge, each branch of an
 * ave.if is on its own), so a tile is live at a set of half-points, with holes where a branch
 * does not need it. */

/* Registers per thread kept for what is not a tile (addresses, indices, loop state, predicates)
 * when regalloc chooses a budget; `regalloc{reserve=N}` overrides it. */
enum { RA_RESERVE = 40 };
/* Tiles the regalloc pass may make wait in shared memory in one kernel. */
enum { RA_MAX_SPILLS = 32 };

/* One register-tile value. */
typedef struct RaTile {
	IrValue *v;
	int group;      /* index into RaPlan.group */
	int regs;       /* 32-bit registers per thread */
	uint64_t *live; /* the half-points where it is live (a bit each; RaPlan.hw words) */
	int start, end; /* the first and last of them (-1: never live) */
	int cls;        /* allocation class: coalesced values share one slot range */
} RaTile;

/* Values that share one range of slots: an iter_arg with its initial value, the yielded value
 * and the loop's result; an accumulator with the product; an ave.if result with its yields. */
typedef struct RaClass {
	int group;
	int regs;
	uint64_t *live; /* its members' half-points: where the slots are held */
	int start, end; /* the first and last of them */
	int slot;       /* first slot; the class holds [slot, slot + regs) */
	int rep;        /* first member (RaPlan.tile index) */
} RaClass;

/* A group of threads whose tiles share registers: a role, or the CTA outside roles. */
typedef struct RaGroup {
	IrOp *role;     /* NULL: the CTA outside ave.warp_specialize */
	IrOp *ws;       /* the role's ave.warp_specialize */
	const char *name;
	int64_t threads; /* of one replica */
	int64_t warps, replicas;
	int peak;       /* registers of the tiles live at once, at most */
	int peak_at;    /* the first half-point where it occurs (-1: no tile) */
	int slots;      /* the allocation's extent: the highest slot in use + 1 */
	int budget;     /* registers per thread the group may use */
	bool chosen;    /* regalloc chose the budget (regs was unset) */
	bool given;     /* the role states regs(n) */
} RaGroup;

typedef struct RaPlan {
	IrCtx *c;
	IrOp *kernel;
	const TargetInfo *t;
	int64_t threads;
	int entry;      /* ra_entry_regs: the setmaxnreg pool's per-thread share */
	int launch;     /* what code without a setmaxnreg budget may use (NVIDIA: up to 255) */
	int reserve;    /* registers kept for scalars when choosing budgets */
	const char *sizes; /* where tile sizes came from: "lowering" or "blocked" */
	int ntile, nclass, ngroup, npoint;
	int hw;         /* words of a set of half-points */
	RaTile *tile;
	RaClass *cls;
	RaGroup *group;
	IrOp **point;   /* the op at each point */
	int waves_per_eu; /* AMDGPU: the occupancy the budget allows (0 elsewhere) */
	bool proved;    /* ra_prove accepted it */
	bool dry;       /* ra_plan_budgets only computes: no error, nothing written into roles */
	bool no_remat;  /* ra_spill keeps loaded tiles in shared memory too (regalloc{remat=0}) */
	const char *nospill; /* why no tile could wait in shared memory (a note on the error) */
	int nospill_group;   /* ... the group it is about (-1: the kernel's first over budget) */
	IrArena arena;
} RaPlan;

/* Fills one entry per value id of `kernel` (after ir_number_values) with the 32-bit registers per
 * thread of each register tile (other entries untouched): the lowering's layouts where a tool
 * linking it sets IrPassOpts.tile_regs, else ra_blocked_regs. False, reporting nothing, when a
 * tile has no layout: the lowering reports that, and regalloc leaves the kernel alone. */
typedef bool (*RaTileRegsFn)(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs);
/* Sizes from the blocked layout every tile would get without an MMA (lower_layout_blocked over
 * the tile's group): the estimate where the lowering is not linked. */
bool ra_blocked_regs(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs);

/* Computes liveness, classes, slots, peaks and budgets (given ones, else the entry budget; no
 * choice yet) for `kernel` on target t, with tile sizes from `regs` (by value id, -1 where not a
 * tile; numbered by the caller with ir_number_values). The plan owns its memory. */
void ra_plan_build(RaPlan *p, IrCtx *c, IrOp *kernel, const TargetInfo *t, const int32_t *regs,
		   int reserve);
void ra_plan_free(RaPlan *p);
/* ra_plan_build with the tiles sized by `sizes` (IrPassOpts.tile_regs), or by ra_blocked_regs
 * when it is NULL (the kernel's values numbered here); false, p untouched, when a tile has no
 * layout. */
bool ra_plan_sized(RaPlan *p, IrCtx *c, IrOp *kernel, const TargetInfo *t, RaTileRegsFn sizes,
                   int reserve);
/* Chooses budgets for the roles without regs(n) of each ave.warp_specialize on a target with
 * setmaxnreg (multiples of 8 in [24, 256] that fit each role's allocation plus the reserve and the
 * pool rule; spare registers go to the roles holding tiles) and writes them into the roles
 * (`regs(n)`, in module m; with m NULL nothing is chosen and such roles keep the launch's
 * budget). Then checks every group against its budget: an error per group whose
 * tiles do not fit, naming the role, the op where the peak occurs, the live tiles and their sizes,
 * the sum and the budget. False after an error. */
bool ra_plan_budgets(RaPlan *p, IrModule *m);
/* The half-point's op, and whether class k is live there. */
IrOp *ra_point_op(const RaPlan *p, int half);
bool ra_class_live(const RaPlan *p, int k, int half);
/* The plan as a JSON object (docs/regalloc.md), without "validated" (the caller adds what it
 * observed); malloc'd. */
char *ra_plan_json(const RaPlan *p);

/* ---- spill.c: keeping a tile in shared memory where nothing reads it ---- */

typedef struct RaSpill {
	IrValue *v;        /* the tile */
	int nload;         /* its reloads: before the first op after the stretch, and in each
			      other branch of an ave.if holding the peak that reads it */
	IrValue *buffer;   /* the ave.smem.alloc {spill = true} (a ring over a role's replicas) */
	IrOp *store, *load; /* the store; the reload on the earliest line */
	IrOp *at;          /* the op where the group's peak was */
	int group, regs;   /* the group; the tile's registers per thread */
	int peak, budget;  /* the group's registers before, and its budget */
	int margin;        /* of the budget, what the spill leaves for what is not a tile */
	char kind;         /* the budget: 'g' stated (regs), 'c' regalloc's trial choice within the
			      pool, 'l' what the launch gives */
	int64_t bytes;     /* shared memory the buffer takes */
	bool remat;        /* v, an ave.load of a tensor argument, is loaded again where it is read
			      instead (buffer and store NULL, bytes 0; `load` the first such load;
			      the load as written is gone when nothing before reads it) */
	IrLoc at_def;      /* remat: where v was loaded */
} RaSpill;

/* Rewrites the kernel so that one register tile of group g live at the group's peak, and not
 * read there, waits in shared memory across the stretch of its block where nothing reads it:
 * an ave.smem.store after the last op before the peak that defines or reads it, an
 * ave.smem.load before the first op after it that reads it, which reads the load from then on
 * (and, where an ave.if holds the peak in a branch that does not read it, one at the first
 * reader of each other branch).
 * Chooses the tile outside loops first, then the smallest that covers the excess. False when no
 * tile can wait (each is read at the peak, carried by a loop, or read by an asynchronous product:
 * `why`, if given, says so per tile). The plan is stale after a rewrite. */
bool ra_spill(RaPlan *p, IrModule *m, int g, int margin, RaSpill *out, char *why, size_t nwhy);
/* Whether op is a load ra_spill made of a tile loaded again where it is read (`%v.remat`). */
bool ra_remat_load(const IrOp *op);

/* The `regalloc` pass (passes/passes.def; pass.c): options verbose=0..2, reserve=N, spill=0|1. */
bool pass_regalloc(IrModule *m, const IrPassOpts *o);

/* ---- prove.c: the plan's proof with Z3 ---- */

typedef enum RaFail {
	RA_OK,
	RA_FAIL_OVERLAP,  /* two classes live at one point share a slot */
	RA_FAIL_RANGE,    /* a class's slots leave [0, budget) */
	RA_FAIL_PEAK,     /* the tiles live at a point exceed the budget */
	RA_FAIL_BUDGET,   /* a budget breaks the target's rules (multiple, range, pool, occupancy) */
	RA_FAIL_UNKNOWN   /* the solver gave no answer */
} RaFail;

/* What a failed proof found: the property, the group, the two classes (or one) and the point. */
typedef struct RaCex {
	RaFail fail;
	int group, a, b; /* class indices; -1 where not relevant */
	int half;        /* the half-point */
	char what[256];  /* the failure in words */
} RaCex;

/* Proves with Z3 that no two classes of a group live at the same half-point share a slot, that
 * every class lies within its group's budget, that the tiles live at any point fit the budget,
 * and the target's budget rules: NVIDIA budgets multiples of 8 in [24, 256] whose pool fits the
 * launch (setmaxnreg), AMDGPU VGPR+AGPR budget at most 512 per lane and within the occupancy
 * table for the waves per SIMD the workgroup needs. Sets p->proved; on failure fills cex. */
bool ra_prove(RaPlan *p, RaCex *cex);
/* Emits the failure as an error with a counterexample (the values, the point). */
void ra_prove_report(RaPlan *p, const RaCex *cex);

#endif
