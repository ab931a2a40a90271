/* sync.c — NVIDIA synchronization: bar.sync / barrier.sync for CTAs and role replicas, fences,
 * mbarrier transaction barriers (sm_80: init/arrive/test_wait.parity, with copies counted as
 * arrivals; sm_90a: arrive.expect_tx, try_wait.parity), and setmaxnreg at role entry. */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "nvptx.h"

bool
nvptx_barrier(Lower *L, IrOp *at, LLVMValueRef id, int nthreads)
{
	(void)at;
	if (LLVMIsConstant(id) && LLVMConstIntGetZExtValue(id) == 0 &&
	    nthreads == L->info.threads) {
		lower_call(L, "llvm.nvvm.barrier0", L->voidt, NULL, 0);
		return true;
	}
	LLVMValueRef a[2] = {id, lower_i32(L, nthreads)};
	lower_call(L, "llvm.nvvm.barrier.sync.cnt", L->voidt, a, 2);
	return true;
}

bool
nvptx_fence(Lower *L, IrOp *at, LowerFence kind)
{
	(void)at;
	switch (kind) {
	case LOWER_FENCE_ASYNC_SHARED:
		/* sm_80 has no async proxy: cp.async and mma.sync see generic writes. */
		if (nvptx_is_sm90(L))
			lower_asm(L, L->voidt, "fence.proxy.async.shared::cta;", "~{memory}", NULL,
			          0);
		return true;
	case LOWER_FENCE_ACQ_REL_GPU:
		lower_asm(L, L->voidt, "fence.acq_rel.gpu;", "~{memory}", NULL, 0);
		return true;
	default:
		lower_asm(L, L->voidt, "fence.acq_rel.sys;", "~{memory}", NULL, 0);
		return true;
	}
}

static LLVMValueRef
addr32(Lower *L, LLVMValueRef off)
{
	return lower_smem_addr32(L, off);
}

bool
nvptx_mbar_init(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count, int64_t copies)
{
	/* sm_90a copies complete transaction bytes; sm_80 has none, so there each copy.async is
	 * 32 arrivals (one per lane of the issuing warp) counted into the barrier at init. */
	int64_t extra = 0;
	if (!nvptx_is_sm90(L) && copies < 0)
		return lower_error(
		    L, at->loc,
		    "the copies arriving on '%%%s' cannot be counted per phase on "
		    "target '%s', where each copy.async arrives on its barrier; put them next to "
		    "the 'ave.mbar.expect_tx' of the same barrier, the same number each time",
		    at->res[0].name ? at->res[0].name : "<unnamed>", L->t->info->name);
	if (!nvptx_is_sm90(L))
		extra = 32 * copies;
	LLVMValueRef a[2] = {lower_smem_ptr(L, addr), lower_i32(L, count + extra)};
	lower_call(L, "llvm.nvvm.mbarrier.init.shared", L->voidt, a, 2);
	return true;
}

bool
nvptx_mbar_init_done(Lower *L, IrOp *at)
{
	(void)at;
	/* Make the initialization visible to the async proxy (TMA) too. */
	if (nvptx_is_sm90(L))
		lower_asm(L, L->voidt, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL,
		          0);
	return true;
}

bool
nvptx_mbar_arrive(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count)
{
	(void)at;
	if (nvptx_is_sm90(L)) {
		LLVMValueRef a[2] = {addr32(L, addr), lower_i32(L, count)};
		lower_asm(L, L->voidt, "mbarrier.arrive.shared::cta.b64 _, [$0], $1;",
		          "r,r,~{memory}", a, 2);
		return true;
	}
	/* sm_80 arrives one at a time (a counted arrive needs .noComplete there). */
	LLVMValueRef p = lower_smem_ptr(L, addr);
	for (int64_t i = 0; i < count; i++)
		lower_call(L, "llvm.nvvm.mbarrier.arrive.shared", L->i64, &p, 1);
	return true;
}

bool
nvptx_mbar_expect_tx(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef bytes)
{
	(void)at;
	if (nvptx_is_sm90(L)) {
		LLVMValueRef a[2] = {addr32(L, addr), bytes};
		lower_asm(L, L->voidt, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
		          "r,r,~{memory}", a, 2);
		return true;
	}
	/* sm_80 has no transaction count: the copies were counted as arrivals at init, so
	 * expect_tx is its one arrival. */
	LLVMValueRef p = lower_smem_ptr(L, addr);
	lower_call(L, "llvm.nvvm.mbarrier.arrive.shared", L->i64, &p, 1);
	return true;
}

bool
nvptx_mbar_wait(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef parity)
{
	(void)at;
	LLVMBuilderRef b = L->b;
	LLVMValueRef a[2] = {addr32(L, addr), LLVMBuildZExt(b, parity, L->i32, "")};
	if (nvptx_is_sm90(L)) {
		lower_asm(
		    L, L->voidt,
		    "{\n.reg .pred P1;\nWAIT_${:uid}:\nmbarrier.try_wait.parity.shared::cta.b64 "
		    "P1, [$0], $1;\n"
		    "@!P1 bra WAIT_${:uid};\n}",
		    "r,r,~{memory}", a, 2);
		return true;
	}
	LLVMBasicBlockRef loop = lower_block(L, "mbar.wait"), done = lower_block(L, "mbar.done");
	LLVMBuildBr(b, loop);
	LLVMPositionBuilderAtEnd(b, loop);
	LLVMValueRef ok =
	    lower_asm(L, L->i1, "mbarrier.test_wait.parity.shared::cta.b64 $0, [$1], $2;",
	              "=b,r,r,~{memory}", a, 2);
	LLVMBuildCondBr(b, ok, done, loop);
	LLVMPositionBuilderAtEnd(b, done);
	return true;
}

bool
nvptx_role_enter(Lower *L, IrOp *role, int64_t regs)
{
	NvState *s = nv_state(L);
	(void)role;
	if (!s->sm90 || regs == s->entry_regs)
		return true;
	LLVMValueRef n = lower_i32(L, regs);
	lower_call(L,
	           regs > s->entry_regs ? "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"
	                                : "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32",
	           L->voidt, &n, 1);
	s->setmaxnreg = true;
	return true;
}

/* ---- chunk signals (SPEC 5.9): 64-bit counters in global memory, possibly a peer's ---- */

LLVMValueRef
nvptx_comm_load_acquire(Lower *L, LLVMValueRef ptr)
{
	return lower_asm(L, L->i64, "ld.acquire.sys.global.u64 $0, [$1];", "=l,l,~{memory}", &ptr, 1);
}

void
nvptx_comm_nap(Lower *L)
{
	lower_asm(L, L->voidt, "nanosleep.u32 64;", "~{memory}", NULL, 0);
}

/* One thread, after fence.acq_rel.sys: red.relaxed.sys adds 1. */
bool
nvptx_comm_signal(Lower *L, IrOp *at, LLVMValueRef ptr)
{
	(void)at;
	LLVMValueRef a[2] = {ptr, lower_i64(L, 1)};
	lower_asm(L, L->voidt, "red.relaxed.sys.global.add.u64 [$0], $1;", "l,l,~{memory}", a, 2);
	return true;
}

/* A put's reduce: red.relaxed.sys on global memory. add on f32, f64, f16 (sm_70 and later),
 * bf16 (sm_90), and 32/64-bit integers; max and min on integers only (PTX has no float red.max;
 * those are refused). */
bool
nvptx_comm_reduce_ok(Lower *L, IrType *elem, IrStr mode)
{
	bool add = !strcmp(mode, "add");
	if (elem->kind == IR_TY_INT || elem->kind == IR_TY_INDEX)
		return elem->bits == 32 || elem->bits == 64;
	if (elem->kind != IR_TY_FLOAT || !add)
		return false;
	return elem->fk == IR_F32 || elem->fk == IR_F64 || elem->fk == IR_F16 ||
	       (elem->fk == IR_BF16 && nvptx_is_sm90(L));
}

bool
nvptx_comm_reduce(Lower *L, IrOp *at, LLVMValueRef ptr, LLVMValueRef v, IrType *elem, IrStr mode)
{
	(void)at;
	const char *ty, *cons;
	bool fl = elem->kind == IR_TY_FLOAT;
	if (fl) {
		ty = elem->fk == IR_F32 ? "f32" : elem->fk == IR_F64 ? "f64"
		     : elem->fk == IR_F16 ? "noftz.f16" : "noftz.bf16";
		cons = elem->fk == IR_F32 ? "l,f,~{memory}" : elem->fk == IR_F64 ? "l,d,~{memory}"
		                                                                : "l,h,~{memory}";
		if (elem->fk == IR_F16 || elem->fk == IR_BF16)
			v = LLVMBuildBitCast(L->b, v, L->i16, "");
	} else {
		ty = elem->bits == 64 ? (strcmp(mode, "add") ? "s64" : "u64")
		                      : (strcmp(mode, "add") ? "s32" : "u32");
		cons = elem->bits == 64 ? "l,l,~{memory}" : "l,r,~{memory}";
	}
	char text[96];
	snprintf(text, sizeof text, "red.relaxed.sys.global.%s.%s [$0], $1;", mode, ty);
	LLVMValueRef a[2] = {ptr, v};
	lower_asm(L, L->voidt, text, cons, a, 2);
	return true;
}
