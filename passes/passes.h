/* passes.h — the transformation and analysis passes over the IR, and their registry. */
#ifndef AVE_PASSES_H
#define AVE_PASSES_H

#include <llvm-c/TargetMachine.h>
#include <llvm-c/Types.h>

#include "../ir/ir.h"

extern const IrPass pass_registry[];
extern const int pass_registry_count;

#define PASS(name, fn, summary) bool fn(IrModule *m, const IrPassOpts *o);
#include "passes.def"
#undef PASS

/* ---- layout.c: where the elements of a tile live (pure arithmetic, no LLVM) ---- */

enum {
	LOWER_MAX_RANK = 3,
	LOWER_MAX_BITS = 14, /* per kind: 2^14 registers, lanes or warps at most */
	LOWER_MAX_REGS = 4096 /* registers of one fragment; beyond that a tile is too large */
};

typedef enum LowerBitKind { LOWER_REG, LOWER_LANE, LOWER_WARP, LOWER_BIT_KINDS } LowerBitKind;

typedef enum LowerLayoutKind {
	LOWER_BLOCKED, /* 16-byte vectors along the contiguous dimension, lanes, then warps */
	LOWER_MMA_ACC, /* a target's accumulator fragment, tiled */
	LOWER_MMA_A,   /* a target's A-operand register fragment, tiled */
	LOWER_MMA_B,   /* a target's B-operand register fragment, tiled */
	LOWER_SLICED,  /* a reduction's result: a parent layout with one dimension collapsed */
	LOWER_OTHER,
	LOWER_LAYOUT_KINDS
} LowerLayoutKind;

/* A distributed layout of a register tile (a linear layout over GF(2)). Every dimension of the
 * shape is a power of two. Register r of lane l of warp w holds the element whose coordinates
 * are the XOR of the bases of the bits set in r, l and w. A zero lane or warp basis replicates
 * (those threads hold the same elements); register bases are never zero. "Warp" is the target's
 * warp or wavefront; warps count from the first warp of the executing group (CTA or role
 * replica). */
typedef struct LowerLayout {
	LowerLayoutKind kind;
	int rank;
	int64_t shape[LOWER_MAX_RANK];
	int nbits[LOWER_BIT_KINDS];
	int32_t basis[LOWER_BIT_KINDS][LOWER_MAX_BITS][LOWER_MAX_RANK];
} LowerLayout;

/* An instruction's fragment (an "atom"): the rows x cols tile one warp (or a warpgroup: atoms
 * may use warp bits) holds, described by the bases of the register, lane and warp bits it
 * uses, in 2-D (row, col). */
typedef struct LowerAtom {
	int64_t rows, cols;
	int nbits[LOWER_BIT_KINDS];
	int32_t basis[LOWER_BIT_KINDS][8][2];
} LowerAtom;

int lower_log2(int64_t v); /* exact log2 of a power of two, else -1 */
int lower_layout_nregs(const LowerLayout *l);
/* The blocked layout of `shape` for 2^lane_bits lanes and 2^warp_bits warps: vectors of up to 16
 * bytes along the last dimension, lanes fastest-dimension first, warps slowest-dimension first,
 * then registers repeat. False when a dimension is not a power of two or the fragment would
 * exceed LOWER_MAX_REGS registers. */
bool lower_layout_blocked(LowerLayout *l, int rank, const int64_t *shape, int elem_bytes,
			  int lane_bits, int warp_bits);
/* Tiles a 2-D shape with an atom. Of the warp bits the atom does not use, up to `warp_m_bits` go
 * along rows and the rest along columns (what does not fit replicates); registers repeat the
 * atom over what is left, columns first. False when the shape is not a multiple of the atom. */
bool lower_layout_tiled(LowerLayout *l, LowerLayoutKind kind, const int64_t shape[2],
			const LowerAtom *a, int lane_bits, int warp_bits, int warp_m_bits);
/* Coordinates of register `reg` in lane `lane` of warp `warp`. */
void lower_layout_coord(const LowerLayout *l, uint32_t reg, uint32_t lane, uint32_t warp,
			int64_t *coord);
/* Checks that the layout maps (register, lane, warp) onto the tile: every element is held, and
 * held once up to replication. Writes the reason into why on failure. */
bool lower_layout_check(const LowerLayout *l, char *why, size_t n);
/* The layout of the tile with dimension `dim` collapsed to 1 (a reduction's result, a
 * broadcast's source): register bits along `dim` disappear, lane and warp bits along it
 * replicate. regmap (nregs(l) entries, may be NULL) receives, for each register of l, the
 * register of the result holding the collapsed element. */
void lower_layout_slice(const LowerLayout *l, int dim, LowerLayout *out, int *regmap);
void lower_layout_transpose(const LowerLayout *l, LowerLayout *out); /* rank 2 */
bool lower_layout_equal(const LowerLayout *a, const LowerLayout *b);
/* When `to` holds in every thread the same elements as `from` (equal lane and warp bases and the
 * same set of register bases), fills perm[r] = the register of `from` that holds what register r
 * of `to` holds, and returns true. */
bool lower_layout_regperm(const LowerLayout *from, const LowerLayout *to, int *perm);
/* True when every basis points along one dimension and no two share a bit, so coordinates can be
 * added instead of XORed. */
bool lower_layout_disjoint(const LowerLayout *l);
/* Number of leading register bits that walk consecutive elements along dimension `dim` from
 * element 0 (the widest vector the layout allows there), and whether thread offsets along `dim`
 * keep vectors aligned. */
int lower_layout_vec_bits(const LowerLayout *l, int dim);
/* Prints the layout (bases) for diagnostics and tests. */
void lower_layout_print(const LowerLayout *l, FILE *out);

/* How a shared-memory tile is laid out. The dimension order[0] is contiguous; the others form
 * rows. A row is cut into panels `panel_elems` wide (the swizzle span, or the whole row); a
 * panel holds every row, `row_bytes` apart, and panels are `panel_bytes` apart. With a swizzle
 * of S bytes the 16-byte chunks of each address are XORed with address bits 7.. (CUTLASS
 * Swizzle<log2(S/16), 4, 3>, the TMA and wgmma 32/64/128-byte swizzles): offsets are taken from a
 * base aligned to `align`. */
typedef struct LowerSmemLayout {
	int rank;
	int64_t shape[LOWER_MAX_RANK];
	int order[LOWER_MAX_RANK];
	int esize;
	int swizzle;
	int64_t pad;
	int64_t panel_elems, row_bytes, panel_bytes;
	int64_t bytes; /* footprint */
	int64_t align;
} LowerSmemLayout;

/* The layout of an smem tile type: its `#ave.smem`/`#ave.pad` attribute, or the default (the
 * widest swizzle that divides the row, row-major). False for shapes it cannot lay out. */
bool lower_smem_layout(IrCtx *c, const IrType *tile, LowerSmemLayout *out);
int64_t lower_smem_offset(const LowerSmemLayout *s, const int64_t *coord);
/* A row-major rows x cols staging buffer of `es`-byte elements, with the widest swizzle (128, 64
 * or 32 bytes) that divides a row when `swizzle` (and the tile has more than one row), aligned to
 * at least 128 bytes: how MMA operands are staged in shared memory. */
void lower_stage_layout(LowerSmemLayout *s, int64_t rows, int64_t cols, int es, bool swizzle);
int64_t lower_smem_swizzle(int swizzle, int64_t off);
/* Bytes of one element of a scalar type in memory (i1 takes a byte). */
int lower_elem_bytes(const IrType *t);

/* ---- smem_alloc.c: shared-memory allocation by liveness (the `smem-alloc` pass) ---- */

typedef struct LowerTargetFacts {
	const char *name;
	int warp;
	int64_t smem_limit;
	int max_threads;
	int mbar_bytes;
} LowerTargetFacts;

/* The facts of a target (passes/targets.def), or NULL. */
const LowerTargetFacts *lower_target_facts(const char *name);
/* The target a kernel compiles for: `target` when given (the driver's --target), else the
 * kernel's `target` attribute, else NULL. */
const char *lower_kernel_target(IrCtx *c, IrOp *kernel, const char *target);

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
bool lower_smem_collect(IrCtx *c, IrOp *kernel, const LowerTargetFacts *f, IrVec *bufs);
/* Places buffers whose live ranges overlap at disjoint, aligned offsets (largest first, lowest
 * free offset); returns the bytes used. */
int64_t lower_smem_assign(LowerSmemBuf *b, int n);
/* The last op number inside op (its subtree), after numbering. */
uint32_t lower_op_end(IrOp *op);
/* Reports (error) a plan that exceeds the target's limit, naming every buffer. */
bool lower_smem_check(IrCtx *c, IrOp *kernel, const LowerTargetFacts *f, const LowerSmemBuf *b,
		      int n, int64_t total);

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
} LowerKernelInfo;

typedef struct LowerOptions {
	const char *emit;          /* "llvm", "ptx", "cubin", ... */
	int opt;                   /* 0..3 */
	const char *kernel;        /* only this kernel (name without '@'), or NULL */
	const char *assembler;     /* target-specific ("ptxas", "nvjitlink"), or NULL */
	const char *tool_dir;      /* where to look for external tools first, or NULL */
	bool keep_log;             /* keep the external tool's log */
} LowerOptions;

/* The hooks a backend implements: QBE's Target. Everything that names an instruction of the
 * target is here; the shared layer calls these and never emits target instructions itself.
 * Unless a hook says otherwise it builds at the builder's position in L->b, reports unsupported
 * input with lower_unsupported(L, op, ...) (a diagnostic naming the op and the target) and returns
 * false (or NULL). The comments say what the shared layer guarantees and what an implementation
 * must do; AMDGPU's wave64, LDS and MFMA fit the same contracts. */
struct LowerTarget {
	const char *name;          /* "sm_90a", "gfx942" */
	const char *triple, *cpu, *features;
	int warp;                  /* 32, or 64 for AMDGPU wavefronts */
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
	 * multiplies with FMAs). The accumulator layout is the instruction's fragment (LowerAtom)
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
	const IrAllocator *al;     /* of the vectors in the infos */
} LowerResult;

/* The lowering state of one kernel. Hooks may read everything and use the helpers below. */
struct Lower {
	IrCtx *c;
	IrModule *m;
	IrOp *kernel;
	const LowerTarget *t;
	const LowerTargetFacts *facts;
	const LowerOptions *o;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMValueRef fn;
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
	int next_bar_id;
	LowerKernelInfo info;
	void *tstate;               /* the target's per-kernel state */
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
/* The kernel's arguments as a JSON array (context-owned): [{"name", "kind": "tensor" | "pointer"
 * | "int" | "float", "type": element or scalar type, "rank", "dims", "strides" (-1 for `?`)}]. */
char *lower_args_json(IrCtx *c, IrOp *kernel);
/* Creates the target machine (initializing LLVM's targets once); NULL after an error. */
LLVMTargetMachineRef lower_target_machine(IrCtx *c, const LowerTarget *t, int opt);

/* ---- lower.c: kernels, values, helpers for hooks ---- */

/* Lowers one kernel into L->mod (L->ctx, L->mod set by the caller). */
bool lower_kernel(Lower *L);
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
/* A plain row-major scratch view of `shape` for the current op. */
LowerSmem lower_scratch_view(Lower *L, IrOp *at, int rank, const int64_t *shape, IrType *elem);
/* A barrier among the threads of the current group (merged with a barrier just before). */
bool lower_group_barrier(Lower *L, IrOp *at);
/* Runs `then` code in one elected thread of the group: returns the merge block the caller
 * branches to after building its code (the builder is left in the elected block). */
LLVMBasicBlockRef lower_elect_begin(Lower *L, IrOp *at, bool converge);
void lower_elect_end(Lower *L, LLVMBasicBlockRef merge);
/* Adds a kernel parameter (only in prepare); returns its index. */
int lower_add_param(Lower *L, const LowerParam *p);
LLVMValueRef lower_param(Lower *L, int index);
/* The i64 value of index expression e over op's operands. */
LLVMValueRef lower_expr(Lower *L, IrOp *op, const IrExpr *e);
/* A known positive divisor of an index expression's value (1 when nothing is known). */
int64_t lower_expr_div(const IrOp *op, const IrExpr *e);
/* Emits `if (cond)` and returns the merge block (builder in the then block). */
LLVMBasicBlockRef lower_if_begin(Lower *L, LLVMValueRef cond, const char *name);
void lower_if_end(Lower *L, LLVMBasicBlockRef merge);
LLVMBasicBlockRef lower_block(Lower *L, const char *name);

/* The tensor a symbol names (a symmetric buffer the kernel reads), or NULL. */
LowerTensor *lower_symm_tensor(Lower *L, IrOp *op, IrStr name);
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

/* ---- check_invariants*.c: the invariant checker (SPEC §5.8; docs/invariants.md) ---- */

/* What one run of the checker did; filled when asked for (ave check --stats, bench/check). */
typedef struct PassCkStats {
	int kernels;        /* kernels that had something to prove */
	int queries;        /* Z3 satisfiability and optimization calls */
	int sat, unsat, unknown;
	double solver_s;    /* seconds inside Z3 check calls */
	double max_query_s; /* the slowest single call */
	double setup_s;     /* creating the Z3 context (once per module) */
	double total_s;     /* the whole pass */
} PassCkStats;

typedef struct PassCkOpts {
	unsigned timeout_ms; /* per query; 0 takes the default (2000) */
	unsigned rlimit;     /* per-query resource limit (deterministic; 0 = none), for tests */
	int max_hops;        /* barrier hops in a happens-before chain; 0 takes the default (3) */
	PassCkStats *stats;  /* filled when non-NULL */
} PassCkOpts;

/* Proves the module's tag assertions and the built-in synchronization invariants, emitting an
 * error with a counterexample for each one that can fail (or that the analysis cannot decide).
 * Never changes the IR. Returns false when it emitted errors. */
/* Kernels naming a target fit its shared memory (errors name the target and the buffers). */
bool pass_smem_fits(IrModule *m);
bool pass_check_invariants_with(IrModule *m, const PassCkOpts *co);

#ifdef PASS_CK_INTERNAL
/* The checker's internals, shared by its files only (they define PASS_CK_INTERNAL). */
#include <z3.h>

typedef enum CkRes { CK_UNSAT, CK_SAT, CK_UNKNOWN } CkRes;

/* check_invariants_smt.c: integer terms with exact floordiv/mod by constants. Fresh variables
 * carry side conditions (their domain, or the definition of a quotient) that every query that
 * mentions them picks up. */
typedef struct CkSmt {
	const IrAllocator *al;
	Z3_context z;
	Z3_sort is, bs;  /* Int, Bool */
	IrMap side;      /* uninterpreted constant -> its side condition */
	IrMap divs;      /* (dividend, divisor) -> quotient variable */
	IrArena arena;   /* keys of `divs` */
	Z3_solver solver; /* made on the first query */
	unsigned timeout_ms, rlimit;
	PassCkStats *st;
	const char *unknown_reason; /* why the last query came back unknown */
	bool overflow;   /* constant folding overflowed int64 since the kernel began: its terms
			    are exact integers, but the kernel's 64-bit arithmetic wraps, so no
			    answer about it can be trusted (queries answer unsat; the checker reports
			    that it cannot check the kernel) */
} CkSmt;

void pass_ck_smt_init(CkSmt *s, const IrAllocator *al, unsigned timeout_ms, unsigned rlimit,
		      PassCkStats *st);
void pass_ck_smt_free(CkSmt *s);
Z3_ast pass_ck_num(CkSmt *s, int64_t v);
Z3_ast pass_ck_fresh(CkSmt *s, const char *prefix);
void pass_ck_side(CkSmt *s, Z3_ast var, Z3_ast cond); /* conjoined with what var has */
Z3_ast pass_ck_add(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_sub(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_mulc(CkSmt *s, Z3_ast a, int64_t c);
Z3_ast pass_ck_floordiv(CkSmt *s, Z3_ast a, int64_t c); /* c > 0 */
Z3_ast pass_ck_mod(CkSmt *s, Z3_ast a, int64_t c);      /* c > 0; in [0, c) */
Z3_ast pass_ck_ite(CkSmt *s, Z3_ast b, Z3_ast x, Z3_ast y);
Z3_ast pass_ck_eq(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_lt(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_le(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_not(CkSmt *s, Z3_ast a);
Z3_ast pass_ck_and(CkSmt *s, int n, Z3_ast *a); /* folds true/false */
Z3_ast pass_ck_or(CkSmt *s, int n, Z3_ast *a);
Z3_ast pass_ck_and2(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_or2(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_b2i(CkSmt *s, Z3_ast b);
bool pass_ck_is_num(CkSmt *s, Z3_ast a, int64_t *v);
bool pass_ck_is_true(CkSmt *s, Z3_ast a);
bool pass_ck_is_false(CkSmt *s, Z3_ast a);
/* True when `a` mentions the constant `x` (syntactically: not through side conditions). */
bool pass_ck_mentions(CkSmt *s, Z3_ast a, Z3_ast x);
/* True when the value of `a` may depend on `x`: `a` or the side conditions of its variables
 * (a quotient's definition, say) mention it. */
bool pass_ck_depends(CkSmt *s, Z3_ast a, Z3_ast x);
/* `f` and the side conditions of every variable it mentions, transitively. */
Z3_ast pass_ck_closure(CkSmt *s, Z3_ast f);
/* Is `f` (with the side conditions of its variables) satisfiable? On CK_SAT and a non-NULL
 * `model`, returns a model (release with pass_ck_model_free). */
CkRes pass_ck_check(CkSmt *s, Z3_ast f, Z3_model *model);
/* A model of `f` that minimizes |obj[0]|, then |obj[1]|, ...; falls back to any model. */
CkRes pass_ck_minimize(CkSmt *s, Z3_ast f, int nobj, Z3_ast *obj, Z3_model *model);
bool pass_ck_eval(CkSmt *s, Z3_model m, Z3_ast t, int64_t *out);
void pass_ck_model_free(CkSmt *s, Z3_model m);

/* check_invariants_model.c: roles, the ops the checker reasons about (sites), evaluation of SSA
 * values as terms in an instance of the enclosing roles and loops, closed forms of loop-carried
 * scalars, and the phase structure of barriers. */
typedef enum CkKind {
	CK_WAIT,    /* ave.mbar.wait */
	CK_ARRIVE,  /* ave.mbar.arrive */
	CK_EXPECT,  /* ave.mbar.expect_tx */
	CK_COPY,    /* ave.copy.async: writes a slot, lands on a barrier */
	CK_STORE,   /* ave.smem.store */
	CK_READ,    /* ave.smem.load, ave.mma, ave.mma.async reading shared memory */
	CK_ASSERT,  /* ave.tag.assert */
	CK_BARRIER, /* ave.barrier */
	CK_CHUNK,   /* ave.chunk.wait */
	CK_SYMM,    /* ave.load / ave.get of a symmetric buffer */
	CK_KIND_COUNT
} CkKind;

typedef struct CkRole {
	IrOp *op;        /* ave.role, or the kernel for the code outside roles */
	const char *name;
	int index;
	int64_t nrep;    /* replicas */
	IrValue *rep_val; /* an ave.replica_id result, for naming */
	IrBlock *body;
	int ws_seg;      /* the kernel pseudo-role: position of ave.warp_specialize, or -1 */
	IrOp *sync_loop; /* the role-level loop holding its waits and arrivals, if any */
	int sync_seg;
} CkRole;

typedef struct CkGroup CkGroup;
typedef struct CkWaitForm CkWaitForm;

typedef struct CkSite {
	CkKind kind;
	IrOp *op;
	CkRole *role;
	int seg;        /* index of the role-body op holding the site */
	IrOp *loop;     /* the ave.for in the role body holding it, or NULL */
	int pos;        /* index of the loop-body op holding it (0 outside loops) */
	bool cond;      /* under an ave.if */
	bool nested;    /* inside an inner loop */
	/* barrier (WAIT, ARRIVE, EXPECT, COPY) */
	IrValue *bar;
	int bar_item;   /* item index (or -1: the group item `arrive`) */
	const IrItem *bar_it;
	int64_t count;  /* ARRIVE: arrivals; EXPECT: 1 */
	/* shared memory (COPY, STORE, READ) */
	IrValue *mem;   /* the ring or smem tile */
	IrOp *slot_op;  /* op whose expression gives the slot (the access or a slice) */
	const IrItem *slot_it;
	int64_t bytes;  /* COPY: tile bytes */
	IrOp *slice[4]; /* the ave.slice ops between the access and its slot, innermost first */
	int nslice;     /* (more than 4: the access counts as one of the whole slot) */
	IrOp *end_op;   /* READ by ave.mma.async: the ave.mma.wait that ends it (NULL: none found) */
	int end_shift;  /* ... in the same iteration (0) or the next (1) */
	int end_seg, end_pos;
	CkGroup *group;
	CkWaitForm *wf;
	bool may_block; /* WAIT: not proved to return (set by the completion check) */
	int id;
} CkSite;

/* An evaluation scope: the kernel, one replica of a role, or one iteration of a loop. */
typedef struct CkEnv {
	struct CkEnv *parent;
	IrOp *scope;  /* ave.kernel, ave.role or ave.for */
	Z3_ast iter;  /* ave.for: normalized iteration t (k = lb + step * t) */
	Z3_ast rep;   /* ave.role: replica */
	IrMap memo;   /* IrValue* -> Z3_ast */
} CkEnv;

/* One execution of a site: a replica, an iteration of the role-level loop, and the env. */
typedef struct CkInst {
	CkSite *site;
	CkEnv *env;
	Z3_ast r, t;  /* t NULL outside loops */
} CkInst;

/* How the completed phases a wait guarantees grow along its iterations: per residue class of the
 * iteration modulo `period`, g = floordiv(t, period) + delta (lin) or g = c (constant). */
struct CkWaitForm {
	int64_t period;
	int nclass;
	bool *lin;
	int64_t *val;   /* delta or c */
	bool uniform;   /* every class is lin with the same delta */
};

/* The arrivals of one role on one barrier array: every site of the group runs once per iteration
 * of the same loop on the same barrier, so iteration t contributes to phase floordiv(t, period). */
struct CkGroup {
	CkRole *role;
	IrValue *bar;
	IrOp *loop;
	int64_t period;
	int nsite;
	CkSite **site;
	int64_t arrivals; /* per replica and iteration */
	int64_t copy_bytes;
};

typedef struct Ck {
	IrModule *m;
	IrCtx *c;
	CkSmt *smt;       /* shared by the kernels of a module */
	const PassCkOpts *opts;
	IrArena arena;
	IrOp *kernel;
	CkEnv *root;
	CkRole *roles;
	int nroles;
	IrVec sites;     /* CkSite* */
	IrVec envs;      /* CkEnv* (their memo maps are freed at the end) */
	IrMap loopforms; /* ave.for -> its closed forms */
	IrVec groups;    /* CkGroup* */
	IrMap reported;  /* IrOp* -> that op already carries an error */
	Z3_ast pid[3], npid[3], rank, world;
	IrValue *pid_val[3];
	int64_t mods[32]; /* floordiv/mod constants met by the evaluator since the last reset */
	int nmods;
	int hops, max_hops; /* barrier hops in happens-before chains: now, at most */
	int depth;        /* evaluation nesting */
	int nopaque;      /* values made unknown so far (the solver knows nothing of them) */
	bool broken;      /* the kernel's structure is beyond the analysis: stop */
	IrOp *overflow_op; /* the first op whose index expression overflowed int64, if known */
} Ck;

void pass_ck_begin(Ck *k, IrOp *kernel);
/* True, after reporting that the kernel cannot be checked, when constant folding overflowed. */
bool pass_ck_overflowed(Ck *k);
void pass_ck_end(Ck *k);
/* Collects roles and sites; false (after an error) when the structure cannot be analyzed. */
bool pass_ck_collect(Ck *k);
/* A fresh instance of `site`: fresh replica and iteration variables with their domains. */
CkInst pass_ck_inst(Ck *k, CkSite *site, const char *tag);
/* The instance at replica r and role-loop iteration t (not checked to exist). */
CkInst pass_ck_inst_at(Ck *k, CkSite *site, Z3_ast r, Z3_ast t);
/* The condition that iteration t of `loop` exists in env `parent` (0 <= t < trip count). */
Z3_ast pass_ck_iter_exists(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t);
Z3_ast pass_ck_inst_exists(Ck *k, const CkInst *in);
Z3_ast pass_ck_value(Ck *k, CkEnv *e, IrValue *v);
Z3_ast pass_ck_expr(Ck *k, CkEnv *e, IrOp *op, const IrExpr *x);
Z3_ast pass_ck_bar_index(Ck *k, const CkInst *in);
Z3_ast pass_ck_slot(Ck *k, const CkInst *in);
Z3_ast pass_ck_parity(Ck *k, const CkInst *in);
Z3_ast pass_ck_bytes(Ck *k, const CkInst *in); /* EXPECT: its bytes */
/* Whether the parts of their slots that two accesses touch (slices of a slot, or the whole)
 * can share an element. */
Z3_ast pass_ck_regions_meet(Ck *k, const CkInst *a, const CkInst *b);
/* Whether element (e0, e1) of its slot is one the access touches. */
Z3_ast pass_ck_region_has(Ck *k, const CkInst *in, Z3_ast e0, Z3_ast e1);
CkEnv *pass_ck_role_env(Ck *k, CkRole *r, Z3_ast rep);
CkEnv *pass_ck_loop_env(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t);
/* Phase structure: groups and wait forms; false after an error. */
bool pass_ck_phases(Ck *k);
/* Completed phases of its barrier that the wait instance guarantees on return. */
Z3_ast pass_ck_wait_g(Ck *k, const CkInst *in);
/* Does the wait instance wait at all (rather than return at once)? */
Z3_ast pass_ck_wait_advances(Ck *k, const CkInst *in);
/* Phase of its barrier that a group site's instance contributes to. */
Z3_ast pass_ck_phase(Ck *k, const CkInst *in);
/* The iteration of `g`'s loop, for replica r, that contributes to phase n of barrier i; *ok says
 * whether it exists. */
Z3_ast pass_ck_group_iter(Ck *k, CkGroup *g, Z3_ast r, Z3_ast i, Z3_ast n, Z3_ast *ok);
/* The first iteration of wait site `w`, for replica r, on barrier i that guarantees m completed
 * phases; *ok says whether it exists. */
Z3_ast pass_ck_wait_iter(Ck *k, CkSite *w, Z3_ast r, Z3_ast i, Z3_ast m, Z3_ast *ok);
const char *pass_ck_vname(const IrValue *v);
/* Resolves a shared-memory operand of `op` to its ring or tile (s->mem) and slot (s->slot_*). */
bool pass_ck_mem(Ck *k, CkSite *s, IrOp *op, const IrItem *it);
Z3_ast pass_ck_world(Ck *k); /* also makes the rank variable */
bool pass_ck_error_once(Ck *k, IrOp *op); /* true the first time an op gets an error */
/* A site for `op` in role `r` that the checks do not iterate over (its instances only). */
CkSite *pass_ck_site_detached(Ck *k, IrOp *op, CkRole *r);

/* Another CTA: while entered, values evaluate in a fresh kernel scope whose program ids are
 * fresh variables (same grid, same kernel arguments); pid[] receives them. */
typedef struct CkCta {
	CkEnv *root;
	Z3_ast pid[3];
	IrValue *pid_val[3];
} CkCta;
void pass_ck_cta_enter(Ck *k, CkCta *save, Z3_ast pid[3]);
void pass_ck_cta_leave(Ck *k, const CkCta *save);

/* check_invariants_hb.c: happens-before between points of the roles, through program order,
 * role barriers and chains of barrier phases (arrive/expect_tx/copy -> phase -> wait). */
typedef struct CkPoint {
	CkRole *role;
	Z3_ast r;
	int seg, pos;
	IrOp *loop;
	Z3_ast t;         /* NULL outside loops */
	const CkInst *landing; /* the landing of this copy instead of a program point */
} CkPoint;

CkPoint pass_ck_point(const CkInst *in);
CkPoint pass_ck_point_end(Ck *k, const CkInst *in); /* where a read ends (mma.wait) */
bool pass_ck_point_never(const CkPoint *p);
/* A formula that implies `a` happens before `b` (sound, not complete). */
Z3_ast pass_ck_hb(Ck *k, const CkPoint *a, const CkPoint *b);
Z3_ast pass_ck_po(Ck *k, const CkPoint *a, const CkPoint *b); /* same thread, a before b */

/* check_invariants_rules.c: the checks and their reports. */
void pass_ck_check_kernel(Ck *k);

#endif /* PASS_CK_INTERNAL */

#endif
