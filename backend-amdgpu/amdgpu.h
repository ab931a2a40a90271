/* amdgpu.h — the AMDGPU backend (gfx942, gfx90a; wave64): the hooks of passes/passes.h's
 * LowerTarget that name AMD instructions (buffer loads and stores, LDS, MFMA, s_barrier, s_sleep),
 * LLVM's AMDGPU code generator, an HSACO linked by lld, and its metadata read back. */
#ifndef AVE_AMDGPU_H
#define AVE_AMDGPU_H

#include "../lower/lower.h"

/* The targets, for the driver's table. */
extern const LowerTarget amdgpu_gfx942, amdgpu_gfx90a;

/* ---- internal ---- */

enum {
	AMDGPU_WAVE = 64,
	/* the register file, SIMDs and occupancy limits are the registry's (ir/targets.def) */
	AMDGPU_GROUP_BARRIERS = 16,  /* emulated group barriers: id 0 is s_barrier */
	AMDGPU_OOB = (int)0x80000000u /* a buffer offset past every resource: reads 0, stores drop */
};
#define AMDGPU_BUFFER_LIMIT ((int64_t)0x7fffffff) /* bytes a buffer resource may span */

/* Per-kernel state (Lower.tstate). */
typedef struct AmdState {
	int64_t max_role_regs;       /* the largest regs(...) of the kernel's roles, or 0 */
	int waves_per_eu;            /* amdgpu-waves-per-eu bound from it, or 0 */
	LLVMValueRef bars;           /* the LDS words of the emulated group barriers, or NULL */
	bool s_barrier;              /* an s_barrier was emitted */
	bool group_barrier;          /* an emulated group barrier was emitted */
	int group_ids;               /* group barrier ids the roles may use (1..group_ids) */
	int nrec;
	struct AmdRecords *rec;      /* buffer sizes of kernel-argument tensors (arena) */
} AmdState;

struct AmdRecords {
	const LowerTensor *t;
	LLVMValueRef bytes;          /* i32 num_records */
};
typedef struct AmdRecords AmdRecords;

static inline AmdState *
amd_state(Lower *L)
{
	return L->tstate;
}

/* target.c */
/* The buffer resource (ptr addrspace(8)) of a tensor, spanning its elements. */
LLVMValueRef amdgpu_rsrc(Lower *L, const LowerTensor *t);
/* A buffer load of `ty` (1 to 16 bytes) at byte offset `off` (i32) of rsrc; NULL on a type it
 * cannot move. Out-of-range offsets read zeros. */
LLVMValueRef amdgpu_buffer_load(Lower *L, LLVMValueRef rsrc, LLVMValueRef off, LLVMTypeRef ty);
bool amdgpu_buffer_store(Lower *L, LLVMValueRef rsrc, LLVMValueRef off, LLVMValueRef v);

/* sync.c: s_barrier, emulated group barriers, fences, transaction barriers, roles */
bool amdgpu_barrier(Lower *L, IrOp *at, LLVMValueRef id, int nthreads);
/* llvm.amdgcn.wave.barrier: the lanes of the wave converge (every lane executes it). */
void amdgpu_wave_sync(Lower *L);
bool amdgpu_fence(Lower *L, IrOp *at, LowerFence kind);
LLVMValueRef amdgpu_comm_load_acquire(Lower *L, LLVMValueRef ptr);
void amdgpu_comm_nap(Lower *L);
bool amdgpu_comm_signal(Lower *L, IrOp *at, LLVMValueRef ptr);
bool amdgpu_comm_reduce_ok(Lower *L, IrType *elem, IrStr mode);
bool amdgpu_comm_reduce(Lower *L, IrOp *at, LLVMValueRef ptr, LLVMValueRef v, IrType *elem,
			IrStr mode);
bool amdgpu_sync_entry(Lower *L);
bool amdgpu_mbar_init(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count, int64_t copies);
bool amdgpu_mbar_arrive(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count);
bool amdgpu_mbar_expect_tx(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef bytes);
bool amdgpu_mbar_wait(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef parity);
/* Completes `bytes` (i32) of transactions on the barrier at addr that copy.async `copy` arrives
 * on; one lane executes it. */
void amdgpu_mbar_complete_tx(Lower *L, IrOp *copy, LLVMValueRef addr, LLVMValueRef bytes);
bool amdgpu_role_enter(Lower *L, IrOp *role, int64_t regs);
/* The transaction-barrier word arithmetic (docs/amdgpu.md): phase in bits 0..15, the pending
 * count above as arrivals * 2^24 + bytes. */
enum { AMDGPU_MBAR_PHASE_BITS = 16, AMDGPU_MBAR_ARRIVAL_SHIFT = 24 };
int64_t amdgpu_mbar_word(int64_t arrivals, int64_t bytes, int64_t phase);

/* ---- disasm.c: what a kernel's machine code uses, read from the instructions ---- */

typedef struct AmdgpuScan {
	int vgprs, agprs, sgprs; /* the highest register of each file an instruction names, + 1 */
	int scratch;             /* instructions that access scratch memory */
	int insns;
} AmdgpuScan;

/* Disassembles `len` bytes of code for `cpu` ("gfx942") and scans every instruction; false
 * with a reason when the bytes are not code. */
bool amdgpu_scan_code(const unsigned char *code, uint64_t len, const char *cpu, AmdgpuScan *out,
		      char *err, size_t errlen);
/* Whether the scan fits what the kernel descriptor allocates (vgprs per lane, AGPRs from
 * accum_offset, scratch bytes) and the metadata's AGPR count (-1: not given); the first
 * overrun in why otherwise. */
bool amdgpu_scan_check(const AmdgpuScan *s, int vgprs, int agprs, int accum_offset,
		       int64_t scratch, char *why, size_t len);

/* copy.c: copy.async as buffer loads and LDS stores, completing bytes wave by wave */
bool amdgpu_copy_async(Lower *L, const LowerCopy *cp);
/* Bytes wave `w` of `nwaves` issuing waves moves when nchunks chunks of chunk_bytes are dealt
 * round-robin to their threads (thread t takes chunks t, t + threads, ...). */
int64_t amdgpu_wave_bytes(int64_t nchunks, int64_t chunk_bytes, int nwaves, int w);

/* mma.c: MFMA */
typedef enum AmdMfma {
	AMD_MFMA_32X32X8_BF16,
	AMD_MFMA_16X16X16_BF16,
	AMD_MFMA_32X32X8_F16,
	AMD_MFMA_16X16X16_F16,
	AMD_MFMA_32X32X2_F32,
	AMD_MFMA_16X16X4_F32,
	AMD_MFMA_COUNT
} AmdMfma;

typedef struct AmdMfmaInfo {
	const char *intrinsic;       /* valid on gfx90a and gfx942 in LLVM 19 (docs/amdgpu.md lists
					the instructions they become) */
	int m, n, k;
	int ab_elems;                /* elements of A (and B) per lane: 4 (<4 x i16>/<4 x half>) or 1 */
	IrFloatKind ab;              /* operand type */
} AmdMfmaInfo;

const AmdMfmaInfo *amdgpu_mfma_info(AmdMfma i);
/* The fragments of an instruction (AMD matrix instruction calculator, CDNA2 = CDNA3): D (m x n),
 * A (m x k) and B (k x n), as LowerAtoms over one wave; C is the accumulator of an ave.mma, D
 * transposed (mma.c computes C^T = B^T A^T). */
LowerAtom amdgpu_atom_d(AmdMfma i);
LowerAtom amdgpu_atom_c(AmdMfma i);
LowerAtom amdgpu_atom_a(AmdMfma i);
LowerAtom amdgpu_atom_b(AmdMfma i);
bool amdgpu_mma_plan(Lower *L, const LowerMmaReq *r, LowerMmaPlan *p);
/* The staging buffer of a register B operand (k x n, or n x k with transpose_b) whose fragments
 * hold `nelem` elements along K: K contiguous where nelem > 1, addressed in the value's own
 * coordinates. */
void amdgpu_b_stage(LowerSmemLayout *s, int64_t k, int64_t n, int es, int nelem, bool trans_b);
/* Whether a lane's `nelem` elements of a fragment, consecutive along view dimension `sdim`, are
 * one aligned vector in layout y (before any view origin). */
bool amdgpu_frag_vec(const LowerSmemLayout *y, int sdim, int nelem);
bool amdgpu_mma_emit(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
		     const LowerOperand *b, LowerFrag *acc);

/* codegen.c: assembly, object, HSACO */
bool amdgpu_codegen(IrCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *emit,
		    const LowerOptions *o, LowerKernelInfo *infos, int ninfo, char **out,
		    size_t *outlen, double *timings);

/* metadata.c: the NT_AMDGPU_METADATA note (MessagePack) of a code object */
/* lld.cpp: the in-process linker (built where liblld is; C linkage). Runs lld's ELF driver on
 * argv; returns its exit code, with what it printed in a malloc'd *messages. */
int amdgpu_lld_link(int argc, const char **argv, char **messages);

#endif
