/* lower.h — the target-independent lowering to LLVM IR (library ave_lower) and the contract a
 * backend implements (LowerTarget, QBE's Target). Only lower/ and backend-*\/ include it. */
#ifndef AVE_LOWER_H
#define AVE_LOWER_H

#include <llvm-c/DebugInfo.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Types.h>

#include "../passes/passes.h"
#include "../regalloc/regalloc.h"
#include "layout.h"

/* ==== The target-independent lowering to LLVM IR (lower_*.c; library ave_lower) ====
 *
 *   kernel ──assign layouts──▶ a layout per register tile (lower_assign.c)
 *          ──lower ops──▶ LLVM IR, through the target's hooks (lower.c and lower_*.c)
 *          ──plan shared memory (buffers + scratch)──▶ offsets patched in (lower_emit.c)
 *   module ──LLVM passes──▶ the target's codegen (PTX + cubin, object + HSACO)
 *
 * Register tiles become fragments: per-thread arrays of LLVM values in a LowerLayout. Scalars are
 * uniform: every thread of the executing group computes them. Shared memory is one dynamic
 * buffer; addresses into it are i32 byte offsets from its (aligned) base. */

typedef struct Lower Lower;
typedef struct LowerTarget LowerTarget;

/* A register tile: value v[r] is register r of the layout. */
typedef struct LowerFrag {
	const LowerLayout *layout;
	LLVMValueRef *v;
} LowerFrag;

/* A shared-memory tile: a buffer (base offset, layout) and the view's origin inside it. */
typedef struct LowerSmem {
	LLVMValueRef base;                   /* i32 byte offset of the buffer */
	const LowerSmemLayout *layout;       /* of the whole buffer tile */
	int rank;
	int64_t shape[LOWER_MAX_RANK];       /* of the view */
	LLVMValueRef org[LOWER_MAX_RANK];    /* i32 element origin of the view, NULL for 0 */
	int64_t org_div[LOWER_MAX_RANK];     /* a known divisor of each origin */
} LowerSmem;

/* A tensor in global memory: a kernel argument's ABI expansion or a symmetric buffer. */
typedef struct LowerTensor {
	IrType *type;
	int rank;
	IrStr name;
	int arg;                             /* kernel argument index, -1 for a symmetric buffer */
	LLVMValueRef base;                   /* pointer in the global address space */
	LLVMValueRef dim[IR_MAX_RANK], stride[IR_MAX_RANK]; /* i64 */
	int64_t cdim[IR_MAX_RANK], cstride[IR_MAX_RANK];    /* constants, or IR_DYN */
	LLVMValueRef aligned;                /* i1: the base and the `?` strides allow 16-byte vectors */
} LowerTensor;

typedef enum LowerValKind {
	LOWER_V_NONE,
	LOWER_V_SCALAR, /* v */
	LOWER_V_FRAG,   /* f: register tiles and pending MMA tiles */
	LOWER_V_SMEM,   /* s */
	LOWER_V_RING,   /* s is slot 0; n slots `stride` bytes apart */
	LOWER_V_MBAR,   /* v: i32 offset of barrier 0; n barriers 8 bytes apart */
	LOWER_V_TENSOR, /* t */
	LOWER_V_TOKEN,
	LOWER_V_KINDS
} LowerValKind;

typedef struct LowerVal {
	LowerValKind kind;
	LLVMValueRef v;
	LowerFrag f;
	LowerSmem s;
	LowerTensor *t;
	int64_t n, stride;
} LowerVal;

/* The threads executing the current op: the CTA, or one replica of a role. */
typedef struct LowerScope {
	IrOp *role;                 /* NULL outside ave.warp_specialize */
	int nthreads, nwarps;
	int lane_bits, warp_bits;   /* layouts use 2^warp_bits warps; the others replicate */
	int first_warp;             /* of the group, in the CTA */
	LLVMValueRef bar_id;        /* i32 barrier id of the group: the constant 0 for the CTA */
	LLVMValueRef role_bar_id;   /* i32 id of the barrier of all the role's replicas (a user's
				       ave.barrier in a replicated role, SPEC 5.6), else bar_id */
	int role_nthreads;          /* ... and its threads, else nthreads */
	int issue_warps;            /* warps that issue asynchronous copies (role issue(n)) */
	bool generic_smem;          /* the group reads or writes shared memory with plain loads and
				       stores, so an elected arrival first waits for the group */
	LLVMValueRef tid, lane, warp; /* i32 indices inside the group */
	LLVMValueRef replica;       /* i64 replica index (ave.replica_id), NULL outside roles */
} LowerScope;

/* A copy.async to lower: the tile at `coord` of `src` into `dst`, counted on barrier `bar`. */
typedef struct LowerCopy {
	IrOp *op;
	LowerTensor *src;
	LLVMValueRef coord[IR_MAX_RANK]; /* i64 origin of the tile */
	int64_t shape[LOWER_MAX_RANK];
	LowerSmem dst;
	LLVMValueRef bar;                /* i32 offset of the barrier */
	int64_t bytes;                   /* the tile's full size, counted even where out of bounds */
} LowerCopy;

/* One chunk of a copy the threads deal among themselves: `ce` elements along the destination's
 * contiguous dimension at tile coordinates co (i32), read from byte offset `off` (i64) of the
 * source where `inb` (i1) says the chunk is inside the tensor. */
typedef bool (*LowerChunkFn)(Lower *L, const LowerCopy *cp, void *arg, LLVMValueRef *co,
			     LLVMValueRef off, LLVMValueRef inb);
/* Deals the destination's chunks of `ce` elements round-robin: the thread whose index is `first`
 * (i32) takes chunks first, first + step, ...; unrolled when each takes at most 8, else a loop.
 * fn builds each chunk's access. */
bool lower_copy_chunks(Lower *L, const LowerCopy *cp, int ce, LLVMValueRef first, int64_t step,
		       LowerChunkFn fn, void *arg);
/* The run-time half of whether a copy can move chunks of `ce` elements: the tensor's base and
 * dynamic strides aligned, the origin and the size along the contiguous dimension multiples of
 * ce. The static half (tile shape, layout, static strides) is the target's. */
LLVMValueRef lower_copy_vec_cond(Lower *L, const LowerCopy *cp, int ce);

/* An ave.mma / ave.mma.async to plan: D[m x n] += A[m x k] . B[k x n]. */
typedef struct LowerMmaReq {
	IrOp *op;
	int64_t m, n, k;
	IrType *ab, *acc;                  /* element types */
	bool trans_b;                      /* B is stored n x k */
	bool async;
	bool chain;                        /* the result also feeds an A operand: keep warps on rows */
	const LowerSmemLayout *a_smem, *b_smem; /* layouts of shared-memory operands, else NULL */
	int nwarps, warp_bits;             /* of the executing group */
	int first_warp;                    /* of the group in the CTA (warpgroup alignment) */
} LowerMmaReq;

/* The target's answer. The shared layer converts register operands to `a`/`b` when the target
 * takes that operand from registers and the conversion is a register permutation; otherwise it
 * stages the operand in shared memory in `a_stage`/`b_stage` (also when a shared-memory operand's
 * layout is not one the instruction reads: `a_restage`). */
typedef struct LowerMmaPlan {
	LowerLayout acc;
	bool a_reg, b_reg;
	LowerLayout a, b;
	LowerSmemLayout a_stage, b_stage;
	bool a_restage, b_restage;
	bool async_proxy;                  /* reads shared memory through the async proxy (wgmma) */
	int impl;                          /* target-private */
	int inst_m, inst_n, inst_k;
} LowerMmaPlan;

typedef struct LowerOperand {
	bool reg;
	LowerFrag f;                       /* reg: in the plan's layout */
	LowerSmem s;                       /* else: a shared-memory view */
	bool staged;                       /* just written by plain stores (fence before async reads) */
} LowerOperand;

/* An MMA operand from registers staged in shared memory once, before the loop it does not
 * change in (lower_mma.c), and reused by every iteration. */
typedef struct LowerHoisted {
	IrValue *v;
	const LowerSmemLayout *y;
	IrType *elem;
	LowerOperand out;
} LowerHoisted;

typedef enum LowerFence {
	LOWER_FENCE_ASYNC_SHARED, /* plain shared-memory writes before async-proxy reads */
	LOWER_FENCE_ACQ_REL_GPU,
	LOWER_FENCE_ACQ_REL_SYS,
	LOWER_FENCES
} LowerFence;

/* A kernel parameter of the ABI, in order (the metadata lists them for the runtime). */
typedef enum LowerParamKind {
	LOWER_P_PTR,     /* a tensor's base pointer, or an !ave.ptr argument */
	LOWER_P_SIZE,    /* a tensor's `?` dimension `dim`, i64 */
	LOWER_P_STRIDE,  /* a tensor's `?` stride of dimension `dim`, i64 */
	LOWER_P_SCALAR,  /* a scalar argument */
	LOWER_P_SYMM,    /* the local address of a symmetric buffer */
	LOWER_P_TARGET,  /* target-defined (a TMA tensor map): `bytes`, `align`, described by json */
	LOWER_P_GRID,    /* a persistent kernel's logical grid size along `dim`, i32 */
	LOWER_P_PEERS,   /* a communicating kernel: the device address of a table of world size
			    global pointers, rank r's copy of symmetric buffer `name` at index r */
	LOWER_P_RANK,    /* a communicating kernel: this device's rank, i32 */
	LOWER_P_WORLD,   /* a communicating kernel: the number of ranks, i32 */
	LOWER_P_EPOCH,   /* a communicating kernel: the launch's epoch (1, 2, ...: SPEC 5.9), i64 */
	LOWER_P_KINDS
} LowerParamKind;

typedef struct LowerParam {
	LowerParamKind kind;
	int arg, dim;        /* kernel argument (-1: none) and dimension */
	IrStr name;          /* argument or symbol name */
	IrType *type;        /* the argument's type */
	LLVMTypeRef llty;
	int64_t bytes, align;
	char *json;          /* LOWER_P_TARGET: a JSON object (arena-owned) */
} LowerParam;

/* What the runtime and users need to know about a compiled kernel. */
typedef struct LowerKernelInfo {
	IrStr name;
	IrLoc loc;                /* the ave.kernel op, for diagnostics after code generation */
	int threads;
	int64_t smem_bytes;       /* dynamic shared memory to launch with */
	int grid_dims;            /* program_id/num_programs dimensions used (1..3) */
	unsigned grid_read;       /* bit d: the kernel reads grid dimension d (lower_grid_read) */
	bool signals;             /* the kernel has an ave.chunk.signal */
	int64_t persistent;       /* ctas of a persistent kernel, or 0 */
	IrVec params;             /* LowerParam */
	IrVec buffers;            /* LowerSmemBuf, placed */
	bool setmaxnreg;          /* per-role register budgets were emitted */
	IrVec roles;              /* char*: JSON objects describing roles */
	/* filled by the target after code generation */
	bool stats;
	int regs, barriers;
	int64_t stack, spill_stores, spill_loads, static_smem;
	IrVec diags;              /* char*: tool messages worth keeping (ptxas C-codes, warnings) */
	char *target_json;        /* extra JSON members for the target, or NULL */
	char *args_json;          /* the kernel's arguments (lower_args_json) */
	char *symm_json;          /* its module's symmetric buffers (lower_symm_json), or NULL */
	char *gather_json;        /* what its launch gathers first (lower_gather_json), or NULL */
	int64_t world;            /* its module's `world` (ranks it is written for), or 0 */
	char *regalloc_json;      /* the register plan (ra_plan_json, malloc'd), or NULL */
	int regalloc_budget;      /* the largest budget of the plan's groups */
	int regalloc_peak;        /* the most registers of tiles the plan holds at once (slots) */
	/* With LowerOptions.replan: ptxas spilled this kernel, which has no per-role budgets,
	 * although its plan fit; nothing was reported (the caller compiles again or reports it,
	 * lower_spill_error). */
	bool replan;
} LowerKernelInfo;

typedef struct LowerOptions {
	const char *emit;          /* "llvm", "ptx", "cubin", ... */
	int opt;                   /* 0..3 */
	const char *kernel;        /* only this kernel (name without '@'), or NULL */
	const char *assembler;     /* target-specific ("ptxas", "nvjitlink"), or NULL */
	const char *tool_dir;      /* where to look for external tools first, or NULL */
	bool keep_log;             /* keep the external tool's log */
	int debug;                 /* 0: none; 1: line tables (-lineinfo); 2: full (-g) */
	bool replan;               /* a spill against the plan sets info.replan, see there */
} LowerOptions;

/* The hooks a backend implements: QBE's Target. Everything that names an instruction of the
 * target is here; the shared layer calls these and never emits target instructions itself.
 * Unless a hook says otherwise it builds at the builder's position in L->b, reports unsupported
 * input with lower_unsupported(L, op, ...) (a diagnostic naming the op and the target) and returns
 * false (or NULL). The comments say what the shared layer guarantees and what an implementation
 * must do; AMDGPU's wave64, LDS and MFMA fit the same contracts. */
struct LowerTarget {
	const TargetInfo *info;    /* the registry's row: name, warp size, LLVM triple, ... */
	unsigned global_as, smem_as;
	int smem_base_align;       /* the alignment the target gives the dynamic shared-memory base
				      (0: 16); buffers aligned beyond it cost padding at launch */
	const char *const *emits;  /* the --emit kinds beyond ir and llvm, NULL-terminated */
	void (*llvm_init)(void);   /* registers the LLVM target (idempotent) */

	/* Before lowering: checks that the kernel fits the target (roles, budgets, ...), with
	 * errors naming the target, and adds target parameters (lower_add_param) such as TMA
	 * descriptors. May be NULL. */
	bool (*prepare)(Lower *L);
	/* After the body: calling convention, launch bounds for L->info.threads, and whatever else
	 * the kernel function needs (grid_constant annotations, amdgpu-flat-work-group-size). */
	void (*finish)(Lower *L);
	/* At the kernel's entry, before the body: the parameters are bound (tensors have their
	 * sizes and strides) and L->scope holds the CTA's thread, lane and warp indices. For setup
	 * every later hook may rely on (checks of launch arguments, initialized synchronization
	 * words). May be NULL. */
	bool (*entry)(Lower *L);
	/* LLVM's pass pipeline at -O`opt` (1..3), e.g. "default<O3>" where a target's own passes
	 * must run; NULL (or a NULL hook) keeps the shared layer's lighter pipeline. */
	const char *(*llvm_passes)(int opt);
	/* What LOWER_T_ASSEMBLE times, for reports: "ptxas", "ld.lld". */
	const char *tool;

	/* Hardware indices, i32: the thread in the CTA (x), the CTA index and the CTA count along a
	 * dimension (0..2). */
	LLVMValueRef (*thread_id)(Lower *L);
	LLVMValueRef (*block_id)(Lower *L, int dim);
	LLVMValueRef (*num_blocks)(Lower *L, int dim);
	/* A warp-uniform copy of v (i32): the shared layer uses it for warp and role indices so
	 * branches on them stay uniform (AMDGPU: readfirstlane; NVIDIA: may return v). */
	LLVMValueRef (*uniform)(Lower *L, LLVMValueRef v);

	/* Synchronization. barrier: all `nthreads` threads of a group reach it (id 0: the CTA; ids
	 * 1..15: one role replica, whole warps; NVIDIA: bar.sync / barrier.sync id, n; AMDGPU has
	 * s_barrier for the workgroup only and emulates replica barriers with LDS counters or
	 * refuses them). fence: the memory-ordering fences of ave.fence and LowerFence (a target
	 * without an async proxy makes LOWER_FENCE_ASYNC_SHARED a no-op). */
	bool (*barrier)(Lower *L, IrOp *at, LLVMValueRef id, int nthreads);
	bool (*fence)(Lower *L, IrOp *at, LowerFence kind);
	/* The lanes of one warp converge before an elected lane publishes what they did (an
	 * arrival after the warp's shared-memory accesses), every lane executing it. AMDGPU: the
	 * wave barrier (a wave runs in lockstep, which this tells LLVM and the simulator, whose
	 * lanes run one at a time); NULL where the target adds nothing. */
	void (*warp_sync)(Lower *L);
	/* The i32 value of lane (lane ^ mask) of the same warp (0 < mask < warp); every lane of the
	 * warp executes it (NVIDIA shfl.sync.bfly; AMDGPU ds_swizzle/DPP or ds_bpermute). */
	LLVMValueRef (*shfl_xor)(Lower *L, LLVMValueRef v32, int mask);

	/* Global memory. `ptr` = t->base + off bytes; ty is a scalar or a vector of at most 16 bytes;
	 * mask (i1, NULL = always) says whether to access at all; a masked-off load yields `other`
	 * (NULL: anything). The shared layer guarantees `align` (the bytes of ty when vectorized) and
	 * that a masked-on access is in bounds of the tensor. AMDGPU may build buffer resources from
	 * t->base and use the offset, with out-of-bounds reads returning 0. */
	LLVMValueRef (*load_global)(Lower *L, const LowerTensor *t, LLVMValueRef ptr, LLVMValueRef off,
				    LLVMTypeRef ty, int align, LLVMValueRef mask, LLVMValueRef other);
	bool (*store_global)(Lower *L, const LowerTensor *t, LLVMValueRef ptr, LLVMValueRef off,
			     LLVMValueRef v, int align, LLVMValueRef mask);

	/* Transaction barriers (SPEC 5.6). addr is the barrier's i32 smem offset (each barrier takes
	 * the target's mbar_bytes, targets.def: an mbarrier word on NVIDIA; the phase, pending and
	 * expected words of the LDS emulation on AMDGPU). init runs in one thread: `count` arrivals per
	 * phase, and `copies` copy.async completions per phase when the shared layer could count them
	 * (-1 when not), for targets that count copies as arrivals (sm_80). arrive, expect_tx run in
	 * one elected thread of the group after it converged; wait runs in every thread and returns
	 * once the phase with parity `parity` (i1) has completed, with acquire semantics (PTX
	 * test_wait.parity; AMDGPU: a polling loop on the phase word with s_sleep). */
	/* Chunk signals (SPEC 5.9) on 64-bit counters in global memory, possibly a peer's. A wait
	 * polls in every thread: comm_load_acquire reads the counter at ptr (i64) with acquire
	 * semantics at system scope, comm_nap sleeps a little between polls. comm_signal runs in one
	 * elected thread, after a system-scope release fence, and adds 1 to the counter at ptr at
	 * system scope. */
	LLVMValueRef (*comm_load_acquire)(Lower *L, LLVMValueRef ptr);
	void (*comm_nap)(Lower *L);
	bool (*comm_signal)(Lower *L, IrOp *at, LLVMValueRef ptr);
	/* A put's reduce(mode) (add, max, min) on elements of type elem: whether the target has an
	 * atomic for it, and one relaxed system-scope read-modify-write of the element at ptr. */
	bool (*comm_reduce_ok)(Lower *L, IrType *elem, IrStr mode);
	bool (*comm_reduce)(Lower *L, IrOp *at, LLVMValueRef ptr, LLVMValueRef v, IrType *elem,
			    IrStr mode);

	bool (*mbar_init)(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count, int64_t copies);
	bool (*mbar_init_done)(Lower *L, IrOp *at); /* after the inits, before the CTA barrier */
	bool (*mbar_arrive)(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count);
	bool (*mbar_expect_tx)(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef bytes);
	bool (*mbar_wait)(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef parity);

	/* copy.async: the tile lands in cp->dst (its layout, swizzle included, out-of-bounds elements
	 * zero) and, when it has, counts cp->bytes toward the barrier's current phase, releasing the
	 * data to the waiters. Runs in every thread of the group; the target chooses which threads
	 * issue (L->scope.issue_warps, or one elected thread). NVIDIA: TMA or cp.async; AMDGPU:
	 * buffer loads into registers or LDS, s_waitcnt, then the byte count on the LDS barrier. */
	bool (*copy_async)(Lower *L, const LowerCopy *cp);

	/* Matrix multiply. plan: fill p for r (called during layout assignment, so it must not
	 * build code); false when the target has no instruction for it (the shared layer then
	 * multiplies with FMAs). r->op is NULL when layout assignment asks for the layouts of a
	 * product the kernel does not contain (to instantiate #ave.reg<mma_*>). The accumulator
	 * layout is the instruction's fragment (LowerAtom)
	 * tiled over the group (lower_layout_tiled). emit: acc (in p->acc) += a . b; a and b are
	 * registers in p->a/p->b or shared-memory views (staged in a_stage/b_stage, or the program's
	 * own tiles); an instruction that reads only registers (MFMA) loads shared-memory operands
	 * itself, per k step. With r->async the result may stay pending until wait (wgmma);
	 * otherwise it is complete. wait: the pending product of the mma op `at` (or its wait) is
	 * complete once at most `pending` later ones are in flight. */
	bool (*mma_plan)(Lower *L, const LowerMmaReq *r, LowerMmaPlan *p);
	bool (*mma_emit)(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
			 const LowerOperand *b, LowerFrag *acc);
	bool (*mma_wait)(Lower *L, IrOp *at, LowerFrag *acc, int64_t pending);

	/* Roles: at the start of a role with regs(n), in all its threads (setmaxnreg on sm_90a;
	 * a target without it warns and ignores it). */
	bool (*role_enter)(Lower *L, IrOp *role, int64_t regs);

	/* Math the shared layer cannot express portably: exp2, exp, log2, sqrt, rsqrt on x of
	 * scalar type t (NULL: unsupported), and conversions LLVM cannot do (f8): NULL when the
	 * pair is not special (the shared layer converts), or sets *bad when unsupported. */
	LLVMValueRef (*math)(Lower *L, IrOp *op, LLVMValueRef x, IrType *t);
	LLVMValueRef (*cvt)(Lower *L, IrOp *op, LLVMValueRef x, IrType *from, IrType *to, bool *bad);

	/* Code generation for --emit kinds beyond llvm: the optimized module in, bytes out (PTX text,
	 * a cubin, an object or HSACO), with per-kernel facts filled into the infos (registers,
	 * spills). */
	bool (*codegen)(IrCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *emit,
			const LowerOptions *o, LowerKernelInfo *infos, int ninfo,
			char **out, size_t *outlen, double *timings);
};

/* Stage timings of one compilation, seconds. */
enum { LOWER_T_IRBUILD, LOWER_T_OPT, LOWER_T_CODEGEN, LOWER_T_ASSEMBLE, LOWER_T_COUNT };

typedef struct LowerResult {
	char *data;                /* the --emit output (malloc'd) */
	size_t len;
	LowerKernelInfo *kernels;  /* malloc'd array (strings live in the context) */
	int nkernels;
	double t[LOWER_T_COUNT];
	const LowerTarget *target;
	const char *emit;          /* what `data` holds ("llvm", "ptx", "cubin", ...) */
	const IrAllocator *al;     /* of the vectors in the infos */
} LowerResult;

/* The lowering state of one kernel. Hooks may read everything and use the helpers below. */
struct Lower {
	IrCtx *c;
	IrModule *m;
	IrOp *kernel;
	const LowerTarget *t;
	const TargetInfo *facts;    /* = t->info */
	const LowerOptions *o;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMValueRef fn;
	LLVMDIBuilderRef dib;       /* with -lineinfo or -g (LowerOptions.debug), else NULL */
	LLVMMetadataRef di_file, di_sp; /* the source file's DIFile; the kernel's DISubprogram */
	LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, voidt, pglobal, psmem, pgeneric;
	IrArena arena;              /* per kernel */
	uint32_t nvals, nops;
	LowerVal *vals;             /* by IrValue id */
	const LowerLayout **lay;    /* by IrValue id: the assigned layout of register tiles */
	LowerMmaPlan **plans;       /* by IrOp id: plans of mma ops */
	char *has_plan;             /* by IrOp id: the target planned it (else FMA fallback) */
	LowerScope scope;
	LLVMValueRef smem;          /* the dynamic shared-memory symbol */
	LLVMValueRef smem_pad;      /* i32: bytes to its aligned base (patched at the end) */
	LLVMValueRef pid[3];        /* persistent kernels: the logical program ids, else NULL */
	LLVMValueRef grid[3];       /* persistent kernels: the logical grid (i32 parameters) */
	LLVMBasicBlockRef next_tile; /* persistent kernels: where ave.return goes */
	IrVec placeholders;         /* lowering-internal: offsets patched after planning */
	IrVec scratch;              /* LowerSmemBuf of scratch uses */
	LLVMValueRef last_barrier;  /* the last barrier call emitted, to merge back-to-back ones */
	IrOp *loop;                 /* the innermost ave.for being lowered, or NULL */
	LLVMBasicBlockRef loop_pre; /* ... the block that enters it (ends in its branch) */
	IrVec hoisted;              /* LowerHoisted: MMA operands staged once before their loop */
	int next_bar_id;
	LowerKernelInfo info;
	void *tstate;               /* the target's per-kernel state */
	bool layouts_only;          /* lower_tile_regs: assign layouts, say nothing about them */
	bool ok;
};

/* ---- lower_emit.c: driving a compilation ---- */

/* Compiles every kernel of the module (or o->kernel) for the target: lower, verify, optimize,
 * and produce o->emit ("llvm" or one of target->emits). Diagnostics go to the context. */
bool lower_compile(IrModule *m, const LowerTarget *t, const LowerOptions *o, LowerResult *r);
void lower_result_free(LowerResult *r);
/* Files and external tools for the backends: whether p is an executable file; the first of
 * `names` found as $env, in tool_dir, on PATH, then the `fallback` paths (NULL-terminated lists;
 * malloc'd result or NULL); a whole file (malloc'd, NUL-terminated) and writing one. */
bool lower_is_exe(const char *p);
char *lower_find_tool(const char *env, const char *tool_dir, const char *const *names,
		      const char *const *fallback);
char *lower_read_file(const char *path, size_t *len);
bool lower_write_file(const char *path, const char *s, size_t n);
/* Writes the kernels' metadata as JSON (docs/targets.md). */
void lower_write_metadata(IrCtx *c, const LowerResult *r, FILE *out);
/* The error for a kernel without per-role budgets that the code generator spilled to memory
 * (local memory on NVIDIA, scratch on AMDGPU; k's figures), with its register plan beside what
 * the binary needed (`scratch`: AMDGPU's VGPRs in scratch); `tried` (or NULL) says what was
 * done about it, as a note. */
void lower_spill_error(IrCtx *c, const LowerKernelInfo *k, const char *target, bool scratch,
                       const char *tried);
/* Its words for the spill: "spills registers to local memory on target 'T': N bytes stored and
 * N loaded, with N registers per thread" (or the VGPRs to scratch); context-owned. */
const char *lower_spill_what(IrCtx *c, const LowerKernelInfo *k, const char *target, bool scratch);
/* The kernel's arguments as a JSON array (context-owned): [{"name", "kind": "tensor" | "pointer"
 * | "int" | "float", "type": element or scalar type, "rank", "dims", "strides" (-1 for `?`)}]. */
char *lower_args_json(IrCtx *c, IrOp *kernel);
char *lower_symm_json(IrCtx *c, IrOp *kernel);
/* What the launch of a kernel with `gathered = @chunk` copies before it starts, *out (NULL
 * without the attribute): for each chunk q of the module's world, in order, [{"buffer",
 * "offset" (bytes), "rows", "row_bytes", "pitch" (bytes between rows), "signal", "slot"
 * (bytes), "slot_bytes"}]: rank q's copy of those rows goes to every other rank, whose slot is
 * then signalled (one more, as an ave.chunk.signal). False after an error (a chunk that is not
 * whole rows of contiguous elements, a signal slot that is not an integer). */
bool lower_gather_json(IrCtx *c, IrOp *kernel, char **out);
/* The `world` of the kernel's module (the ranks it is written for), or 0. */
int64_t lower_world(IrCtx *c, IrOp *kernel);
/* The grid dimensions the kernel reads (ave.program_id / ave.num_programs): bit d for d; in
 * *signals (unless NULL) whether it has an ave.chunk.signal. */
unsigned lower_grid_read(IrCtx *c, IrOp *kernel, bool *signals);
/* Writes the metadata fields "grid_read" (the dimensions read) and "signals". */
void lower_grid_json(FILE *f, unsigned read, bool signals);
/* Creates the target machine (initializing LLVM's targets once); NULL after an error. */
LLVMTargetMachineRef lower_target_machine(IrCtx *c, const LowerTarget *t, int opt);

/* ---- lower.c: the kernel driver ---- */

/* Lowers one kernel into L->mod (L->ctx, L->mod set by the caller). */
bool lower_kernel(Lower *L);
/* The 32-bit registers per thread of every register tile of `kernel` in the layouts this
 * lowering assigns for target t (regs[value id], ir_number_values; lower_layout_regs32): the
 * sizes regalloc plans with (IrPassOpts.tile_regs). Builds no LLVM IR and reports nothing:
 * false when the layouts cannot be assigned (the lowering reports why if it compiles the
 * kernel). */
bool lower_tile_regs(IrCtx *c, IrOp *kernel, const LowerTarget *t, int32_t *regs);

/* ---- lower_plan.c: shared-memory offsets patched after the kernel is lowered ---- */

/* The placeholder of the padding to the aligned shared-memory base (at the kernel's entry). */
LLVMValueRef lower_pad_placeholder(Lower *L, IrOp *kernel);
/* Places the buffers and scratch, patches the placeholders, emits reuse barriers. */
bool lower_plan_finish(Lower *L);
void lower_plan_free(Lower *L);
/* Whether i is a shared-memory offset placeholder (pure, so a barrier may merge across it). */
bool lower_is_offset_placeholder(LLVMValueRef i);

/* ---- lower_util.c: helpers for op lowerings and target hooks ---- */

/* A diagnostic at op: "'<op>' <what> is not supported on target '<target>'". Returns false. */
bool lower_unsupported(Lower *L, IrOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool lower_error(Lower *L, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LowerVal *lower_val(Lower *L, IrValue *v);
LLVMValueRef lower_scalar(Lower *L, IrValue *v);
LLVMTypeRef lower_type(Lower *L, IrType *t);       /* scalar types; f8 as i8 */
LLVMTypeRef lower_mem_type(Lower *L, IrType *t);   /* in memory: i1 as i8 */
LLVMValueRef lower_i32(Lower *L, int64_t v);
LLVMValueRef lower_i64(Lower *L, int64_t v);
/* Calls intrinsic `name` (declaring it on first use). */
LLVMValueRef lower_call(Lower *L, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n);
/* Calls inline assembly: `ret` may be void or a struct; side effects always. */
LLVMValueRef lower_asm(Lower *L, LLVMTypeRef ret, const char *text, const char *cons,
		       LLVMValueRef *args, int n);
/* Shared-memory addressing: an i32 offset from the aligned base to a pointer, or to the 32-bit
 * shared-window address that inline assembly takes. */
LLVMValueRef lower_smem_ptr(Lower *L, LLVMValueRef off);
LLVMValueRef lower_smem_addr32(Lower *L, LLVMValueRef off);
/* Byte offset (i32) of element `coord` (i32 values, view coordinates) of a view. */
LLVMValueRef lower_smem_elem(Lower *L, const LowerSmem *s, LLVMValueRef *coord);
/* A scratch buffer for the current op (live for the op only, separated by group barriers);
 * returns its i32 offset. */
LLVMValueRef lower_scratch(Lower *L, IrOp *at, int64_t bytes, int64_t align);
/* Extends the live range of the last scratch buffer to op `until` (async readers). */
void lower_scratch_extend(Lower *L, IrOp *until);
/* Starts the live range of the last scratch buffer at op `from` (written before its op). */
void lower_scratch_from(Lower *L, IrOp *from);
/* A plain row-major scratch view of `shape` for the current op. */
LowerSmem lower_scratch_view(Lower *L, IrOp *at, int rank, const int64_t *shape, IrType *elem);
/* A barrier among the threads of the current group (merged with a barrier just before). */
bool lower_group_barrier(Lower *L, IrOp *at);
/* True when `role` is replicated and has an ave.barrier, which waits for all its replicas: the
 * role takes one more barrier id than its replicas (lower_op_barrier). */
bool lower_role_wide_barrier(IrCtx *c, IrOp *role);
/* Runs `then` code in one elected thread of the group: returns the merge block the caller
 * branches to after building its code (the builder is left in the elected block). */
LLVMBasicBlockRef lower_elect_begin(Lower *L, IrOp *at, bool converge);
void lower_elect_end(Lower *L, LLVMBasicBlockRef merge);
/* Adds a kernel parameter (only in prepare); returns its index. */
int lower_add_param(Lower *L, const LowerParam *p);
LLVMValueRef lower_param(Lower *L, int index);
/* Floor division (mod: the floor modulo, the divisor's sign) of i64 values. */
LLVMValueRef lower_floor_divmod(Lower *L, LLVMValueRef l, LLVMValueRef r, bool mod);
/* The i64 value of index expression e over op's operands. */
LLVMValueRef lower_expr(Lower *L, IrOp *op, const IrExpr *e);
/* The same with each leaf's value (an operand of op) from `leaf` (a declaration's expressions,
 * whose parameters stand for a call's arguments). */
typedef LLVMValueRef (*LowerLeafFn)(Lower *L, IrOp *op, IrValue *v, void *ud);
LLVMValueRef lower_expr_with(Lower *L, IrOp *op, const IrExpr *e, LowerLeafFn leaf, void *ud);
/* A known positive divisor of an index expression's value (1 when nothing is known). */
int64_t lower_expr_div(const IrOp *op, const IrExpr *e);
/* Emits `if (cond)` and returns the merge block (builder in the then block). */
LLVMBasicBlockRef lower_if_begin(Lower *L, LLVMValueRef cond, const char *name);
void lower_if_end(Lower *L, LLVMBasicBlockRef merge);
LLVMBasicBlockRef lower_block(Lower *L, const char *name);

/* The tensor a symbol names (a symmetric buffer the kernel reads), or NULL. */
LowerTensor *lower_symm_tensor(Lower *L, IrOp *op, IrStr name);

/* ---- lower_comm.c: communication (SPEC 5.9) ---- */

/* The kernel uses ave.rank, ave.world_size, puts, gets or chunk ops: it takes the peer tables,
 * rank, world size and epoch parameters. */
bool lower_communicates(IrOp *kernel);
/* Rank `peer`'s copy (an index expression of op) of symmetric buffer `name`: its base loaded
 * from the buffer's peer table, after a trap for a peer outside the world. */
LowerTensor *lower_peer_tensor(Lower *L, IrOp *op, IrStr name, const IrExpr *peer);
/* The base offset (i32) of the buffer op allocates, placed after lowering; where the buffer shares
 * bytes with another one, a group barrier at op separates their users. */
LLVMValueRef lower_buffer_base(Lower *L, IrOp *op);
/* Enters the geometry of a group (role NULL: the CTA), keeping the thread indices in L->scope;
 * scans body for plain shared-memory traffic. */
void lower_scope_enter(Lower *L, IrOp *role, IrBlock *body);

/* Converts scalar x between scalar types (round-to-nearest-even; f8 through the target). */
LLVMValueRef lower_convert(Lower *L, IrOp *op, LLVMValueRef x, IrType *from, IrType *to);
/* f8 (E4M3FN or E5M2, as i8 bits) <-> f32 in integer arithmetic: round to nearest even, finite
 * values saturate to the largest finite code, NaN stays NaN. */
LLVMValueRef lower_f8_to_f32(LLVMBuilderRef b, LLVMContextRef ctx, LLVMValueRef x, bool e4m3);
LLVMValueRef lower_f32_to_f8(LLVMBuilderRef b, LLVMContextRef ctx, LLVMValueRef x, bool e4m3);
/* The shared-memory view an operand item names (a tile, a ring slot, a slice). */
bool lower_smem_item(Lower *L, IrOp *op, const IrItem *it, LowerSmem *out);
/* The i32 smem offset of the barrier an item names (`%b[%i]`). */
LLVMValueRef lower_mbar_item(Lower *L, IrOp *op, const IrItem *it);

/* ---- lower_frag.c: fragments ---- */

/* Coordinates (i32) of register `reg` of the current thread in layout l. The thread's part can
 * be computed once (lower_frag_thread) and reused for every register (lower_frag_coord_at). */
void lower_frag_coord(Lower *L, const LowerLayout *l, int reg, LLVMValueRef *coord);
void lower_frag_thread(Lower *L, const LowerLayout *l, LLVMValueRef *tc);
void lower_frag_coord_at(Lower *L, const LowerLayout *l, LLVMValueRef *tc, int reg, LLVMValueRef *coord);
/* True when the current thread is the primary holder of its elements (not a replica). */
LLVMValueRef lower_frag_primary(Lower *L, const LowerLayout *l);
LowerFrag lower_frag_new(Lower *L, const LowerLayout *l);
/* Converts a fragment to another layout of the same shape (a register permutation, or through
 * shared memory). */
bool lower_frag_convert(Lower *L, IrOp *at, const LowerFrag *from, const LowerLayout *to, IrType *elem,
			LowerFrag *out);
/* Writes a fragment into a shared-memory view / reads one from it (plain accesses). */
bool lower_frag_to_smem(Lower *L, IrOp *at, const LowerFrag *f, IrType *elem, const LowerSmem *s);
bool lower_frag_from_smem(Lower *L, IrOp *at, const LowerSmem *s, IrType *elem, LowerFrag *f);
/* An arena copy of a layout. */
const LowerLayout *lower_layout_dup(Lower *L, const LowerLayout *l);

/* ---- lower_mma.c ---- */

/* The request for an mma op (sa/sb receive the layouts of shared-memory operands). */
void lower_mma_request(Lower *L, IrOp *op, LowerMmaReq *r, LowerSmemLayout *sa, LowerSmemLayout *sb);
/* Fills the request's group (warps, warp bits, first warp) for a product inside `role` (NULL: the
 * CTA). */
void lower_mma_group(Lower *L, IrOp *role, LowerMmaReq *r);

/* ---- lower_assign.c: layout assignment ---- */

/* Gives every register tile of the kernel a layout (L->lay) and plans its MMAs (L->plans). */
bool lower_assign_layouts(Lower *L);
/* The group (CTA or role replica) geometry for ops inside `role` (NULL: the CTA). */
void lower_scope_shape(Lower *L, IrOp *role, LowerScope *s);

/* ---- the op lowerings (lower_*.c), one per row of lower_ops.def ---- */
#define LOWER(opcode, fn) bool fn(Lower *L, IrOp *op);
#include "lower_ops.def"
#undef LOWER
/* Lowers the ops of a block in order. */
bool lower_ops(Lower *L, IrBlock *b);
void lower_debug_loc(Lower *L, IrOp *op);

#endif
