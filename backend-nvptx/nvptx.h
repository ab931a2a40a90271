/* nvptx.h — the NVPTX backend (sm_80, sm_90a): the hooks of passes/passes.h's LowerTarget that
 * name NVIDIA instructions (NVVM intrinsics where LLVM 19 has them, inline PTX where it does not),
 * PTX through LLVM, and cubins through ptxas (whole-program) or nvJitLink. */
#ifndef AVE_NVPTX_H
#define AVE_NVPTX_H

#include "../lower/lower.h"

/* The targets, for the driver's table. */
extern const LowerTarget nvptx_sm80, nvptx_sm90a;

/* ---- internal ---- */

/* A TMA descriptor the kernel takes as a __grid_constant__ parameter. */
typedef struct NvMap {
	int param;   /* kernel parameter index */
	int src_arg; /* the tensor's kernel argument, or -1 (symmetric buffer) */
	IrStr src_name;
	int rank;
	int dims[5]; /* tensor dimension of each TMA dimension (0 = innermost) */
	int64_t box[5];
	int swizzle; /* bytes: 0, 32, 64, 128 */
	int panels;  /* loads per copy (the box covers one panel) */
} NvMap;

/* Per-kernel state (Lower.tstate). */
typedef struct NvState {
	bool sm90;
	bool setmaxnreg; /* a role changed its register budget */
	int entry_regs;  /* registers per thread at launch (setmaxnreg) */
	int nmaps;
	NvMap maps[32];
	int *copy_map; /* by op id: the map a copy.async uses, -1 for cp.async */
} NvState;

static inline NvState *
nv_state(Lower *L)
{
	return L->tstate;
}

/* target.c */
bool nvptx_prepare(Lower *L);
bool nvptx_is_sm90(const Lower *L);

/* sync.c: barriers, transaction barriers, roles */
bool nvptx_barrier(Lower *L, IrOp *at, LLVMValueRef id, int nthreads);
bool nvptx_fence(Lower *L, IrOp *at, LowerFence kind);
LLVMValueRef nvptx_comm_load_acquire(Lower *L, LLVMValueRef ptr);
void nvptx_comm_nap(Lower *L);
bool nvptx_comm_signal(Lower *L, IrOp *at, LLVMValueRef ptr);
bool nvptx_comm_reduce_ok(Lower *L, IrType *elem, IrStr mode);
bool nvptx_comm_reduce(Lower *L, IrOp *at, LLVMValueRef ptr, LLVMValueRef v, IrType *elem,
		       IrStr mode);
bool nvptx_mbar_init(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count, int64_t copies);
bool nvptx_mbar_init_done(Lower *L, IrOp *at);
bool nvptx_mbar_arrive(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count);
bool nvptx_mbar_expect_tx(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef bytes);
bool nvptx_mbar_wait(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef parity);
bool nvptx_role_enter(Lower *L, IrOp *role, int64_t regs);

/* copy.c: copy.async (TMA on sm_90a, cp.async otherwise) and the tensor maps */
bool nvptx_plan_copies(Lower *L);
bool nvptx_copy_async(Lower *L, const LowerCopy *cp);
/* The CUtensorMapDataType of an element type, or -1. */
int nvptx_tma_dtype(const IrType *t, const char **name);

/* mma.c: mma.sync and wgmma */
bool nvptx_mma_plan(Lower *L, const LowerMmaReq *r, LowerMmaPlan *p);
bool nvptx_mma_emit(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
                    const LowerOperand *b, LowerFrag *acc);
bool nvptx_mma_wait(Lower *L, IrOp *at, LowerFrag *acc, int64_t pending);
/* The N of the wgmma.wait_group for `ave.mma.wait ... pending(pending)`: at most `pending` and at
 * most the groups (ops `commits` accepts) surely committed after the waited product. */
int64_t nvptx_wait_groups(IrOp *wait, int64_t pending, bool (*commits)(void *u, IrOp *op), void *u);
/* The fragment atoms (PTX ISA): mma.m16n8k16 A, B and C/D; wgmma m64nNk16 A and D. */
LowerAtom nvptx_atom_mma_a(void);
LowerAtom nvptx_atom_mma_b(void);
LowerAtom nvptx_atom_mma_c(void);
LowerAtom nvptx_atom_wgmma_a(void);
LowerAtom nvptx_atom_wgmma_d(int n);

/* codegen.c: PTX, ptxas, nvJitLink */
bool nvptx_codegen(IrCtx *c, LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *emit,
                   const LowerOptions *o, LowerKernelInfo *infos, int ninfo, char **out,
                   size_t *outlen, double *timings);
/* Parses a ptxas -v log into the kernels' infos (registers, spills, smem, C-code messages). */
void nvptx_parse_ptxas_log(const IrAllocator *al, const char *log, LowerKernelInfo *infos,
                           int ninfo);
/* Where ptxas is: $AVE_PTXAS, then tool_dir, PATH, /usr/local/cuda/bin; NULL if nowhere. */
char *nvptx_find_ptxas(const char *tool_dir);

#endif
