/* sync.c — AMDGPU synchronization: s_barrier for the workgroup, group barriers of role replicas
 * emulated with LDS counters (gfx9 has no named barriers), fences, and transaction barriers
 * (SPEC §5.6) emulated with one 64-bit LDS word per barrier, waited on by polling with s_sleep.
 * docs/amdgpu.md describes the protocols. LLVM 19's C API cannot set a synchronization scope, so
 * the workgroup-scope atomics and fences come from a few always-inline helpers written in IR. */
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>

#include "amdgpu.h"

/* ---- scoped atomics and fences ---- */

typedef enum AmdHelper {
#define HELPER(id, name, ret, params, body) id,
#include "helpers.def"
#undef HELPER
	AMD_HELPERS
} AmdHelper;

static const char helper_ir[] =
#define HELPER(id, name, ret, params, body)                                                             \
	"define " ret " @" name "(" params ") alwaysinline {\n" body "}\n"
#include "helpers.def"
#undef HELPER
	;

static const char *const helper_names[AMD_HELPERS] = {
#define HELPER(id, name, ret, params, body) name,
#include "helpers.def"
#undef HELPER
};

/* Calls helper h, linking the helpers into the module on first use. */
static LLVMValueRef
helper(Lower *L, AmdHelper h, LLVMValueRef *args, int n)
{
	LLVMValueRef fn = LLVMGetNamedFunction(L->mod, helper_names[h]);
	if (!fn) {
		LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(helper_ir, sizeof helper_ir - 1,
										  "ave-amdgpu-helpers");
		LLVMModuleRef hm = NULL;
		char *err = NULL;
		if (LLVMParseIRInContext(L->ctx, mb, &hm, &err)) {
			lower_error(L, L->kernel->loc, "internal error: the AMDGPU helpers do not parse: %s", err);
			LLVMDisposeMessage(err);
			return NULL;
		}
		LLVMSetTarget(hm, LLVMGetTarget(L->mod));
		LLVMSetDataLayout(hm, LLVMGetDataLayoutStr(L->mod));
		if (LLVMLinkModules2(L->mod, hm)) {
			lower_error(L, L->kernel->loc, "internal error: the AMDGPU helpers do not link");
			return NULL;
		}
		/* Linked with external linkage (the linker skips unreferenced internal ones), then
		 * made internal so that LLVM drops them once inlined. */
		for (int i = 0; i < AMD_HELPERS; i++)
			LLVMSetLinkage(LLVMGetNamedFunction(L->mod, helper_names[i]), LLVMInternalLinkage);
		fn = LLVMGetNamedFunction(L->mod, helper_names[h]);
	}
	return LLVMBuildCall2(L->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)n, "");
}

static void
wg_fence(Lower *L, AmdHelper h)
{
	helper(L, h, NULL, 0);
}

/* ---- barriers ---- */

/* ave.fence and the shared layer's fences at the scope each asks for. */
bool
amdgpu_fence(Lower *L, IrOp *at, LowerFence kind)
{
	(void)at;
	switch (kind) {
	case LOWER_FENCE_ASYNC_SHARED:
		/* No asynchronous proxy here: copies and MFMA operands go through ordinary LDS
		 * accesses, which a workgroup fence orders. */
		wg_fence(L, AMD_FENCE_WG_ACQ_REL);
		return true;
	case LOWER_FENCE_ACQ_REL_GPU:
		wg_fence(L, AMD_FENCE_AGENT_ACQ_REL);
		return true;
	default:
		LLVMBuildFence(L->b, LLVMAtomicOrderingAcquireRelease, 0, "");
		return true;
	}
}

static LLVMValueRef
bar_word(Lower *L, LLVMValueRef id, int word)
{
	LLVMValueRef idx[3] = {lower_i32(L, 0), id, lower_i32(L, word)};
	LLVMTypeRef at = LLVMArrayType(LLVMArrayType(L->i32, 2), AMDGPU_GROUP_BARRIERS);
	return LLVMBuildGEP2(L->b, at, amd_state(L)->bars, idx, 3, "");
}

/* A barrier among the `nwaves` waves of a role replica: the last wave to arrive resets the
 * count and advances the generation the others poll. */
static bool
group_barrier(Lower *L, IrOp *at, LLVMValueRef id, int nwaves)
{
	AmdState *s = amd_state(L);
	LLVMBuilderRef b = L->b;
	if (!s->bars)
		return lower_error(L, at->loc, "internal error: a group barrier without barrier words on target '%s'",
				   L->t->info->name);
	s->group_barrier = true;
	LLVMValueRef cnt = bar_word(L, id, 0), gen = bar_word(L, id, 1);
	wg_fence(L, AMD_FENCE_WG_RELEASE);
	LLVMValueRef g0 = L->t->uniform(L, helper(L, AMD_LDS_LOAD32, &gen, 1));
	LLVMBasicBlockRef merge = lower_if_begin(L, LLVMBuildICmp(b, LLVMIntEQ, L->scope.lane, lower_i32(L, 0), ""),
						 "gbar.arrive");
	LLVMValueRef a[2] = {cnt, lower_i32(L, 1)};
	LLVMValueRef old = helper(L, AMD_LDS_ADD32, a, 2);
	LLVMBasicBlockRef m2 = lower_if_begin(L, LLVMBuildICmp(b, LLVMIntEQ, old, lower_i32(L, nwaves - 1), ""),
					      "gbar.last");
	LLVMValueRef z[2] = {cnt, lower_i32(L, 0)};
	helper(L, AMD_LDS_STORE32, z, 2);
	LLVMValueRef g[2] = {gen, lower_i32(L, 1)};
	helper(L, AMD_LDS_ADD32, g, 2);
	lower_if_end(L, m2);
	lower_if_end(L, merge);
	LLVMBasicBlockRef poll = lower_block(L, "gbar.poll"), nap = lower_block(L, "gbar.sleep");
	LLVMBasicBlockRef done = lower_block(L, "gbar.done");
	LLVMBuildBr(b, poll);
	LLVMPositionBuilderAtEnd(b, poll);
	LLVMValueRef gn = L->t->uniform(L, helper(L, AMD_LDS_LOAD32, &gen, 1));
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, gn, g0, ""), done, nap);
	LLVMPositionBuilderAtEnd(b, nap);
	LLVMValueRef one = lower_i32(L, 1);
	lower_call(L, "llvm.amdgcn.s.sleep", L->voidt, &one, 1);
	LLVMBuildBr(b, poll);
	LLVMPositionBuilderAtEnd(b, done);
	wg_fence(L, AMD_FENCE_WG_ACQUIRE);
	return true;
}

void
amdgpu_wave_sync(Lower *L)
{
	lower_call(L, "llvm.amdgcn.wave.barrier", L->voidt, NULL, 0);
}

/* The workgroup: s_barrier between fences; one wave: a fence; a multi-wave role replica: the
 * emulated barrier of its id. */
bool
amdgpu_barrier(Lower *L, IrOp *at, LLVMValueRef id, int nthreads)
{
	AmdState *s = amd_state(L);
	bool cta = LLVMIsConstant(id) && LLVMConstIntGetZExtValue(id) == 0 && nthreads == L->info.threads;
	if (cta) {
		wg_fence(L, AMD_FENCE_WG_RELEASE);
		lower_call(L, "llvm.amdgcn.s.barrier", L->voidt, NULL, 0);
		wg_fence(L, AMD_FENCE_WG_ACQUIRE);
		s->s_barrier = true;
		return true;
	}
	/* One wave executes in lockstep and its LDS accesses complete in order: a fence, and the
	 * wave barrier that says so. */
	if (nthreads <= AMDGPU_WAVE) {
		wg_fence(L, AMD_FENCE_WG_ACQ_REL);
		amdgpu_wave_sync(L);
		return true;
	}
	return group_barrier(L, at, id, nthreads / AMDGPU_WAVE);
}

/* The group barrier ids the shared layer hands out: 1 + the replicas of every role, + 1 for a
 * role whose ave.barrier waits for all its replicas. */
typedef struct IdScan {
	IrCtx *c;
	bool multi;  /* a role replica spans several waves */
	int64_t ids;
} IdScan;

static bool
scan_ids(IrOp *op, void *ud)
{
	IdScan *n = ud;
	if (op->code == IR_OP_ROLE) {
		IrRoleInfo ri = ir_role_info(n->c, op);
		n->multi |= ri.warps > 1;
		n->ids += ri.replicas;
		if (lower_role_wide_barrier(n->c, op)) { /* all replicas: several waves */
			n->multi = true;
			n->ids++;
		}
	}
	return true;
}

/* Where a role replica spans several waves, the words of its emulated barrier: static LDS zeroed
 * by thread 0 before an s_barrier. Nothing otherwise. */
bool
amdgpu_sync_entry(Lower *L)
{
	AmdState *s = amd_state(L);
	IdScan n = {L->c, false, 1};
	ir_walk_op(L->kernel, scan_ids, &n);
	if (!n.multi)
		return true;
	s->group_ids = (int)(n.ids - 1 < AMDGPU_GROUP_BARRIERS - 1 ? n.ids - 1 : AMDGPU_GROUP_BARRIERS - 1);
	/* The words of the emulated group barriers: static LDS, zeroed before the body. */
	LLVMTypeRef at = LLVMArrayType(LLVMArrayType(L->i32, 2), AMDGPU_GROUP_BARRIERS);
	char name[160];
	snprintf(name, sizeof name, "ave.amdgpu.bars.%s", L->kernel->item[0].s);
	s->bars = LLVMAddGlobalInAddressSpace(L->mod, at, name, 3);
	LLVMSetLinkage(s->bars, LLVMInternalLinkage);
	LLVMSetInitializer(s->bars, LLVMGetPoison(at));
	LLVMSetAlignment(s->bars, 8);
	LLVMBasicBlockRef merge = lower_if_begin(L, LLVMBuildICmp(L->b, LLVMIntEQ, L->scope.tid, lower_i32(L, 0), ""),
						 "gbar.init");
	for (int64_t i = 0; i < n.ids && i < AMDGPU_GROUP_BARRIERS; i++) {
		LLVMValueRef a[2] = {bar_word(L, lower_i32(L, (int)i), 0), lower_i64(L, 0)};
		helper(L, AMD_LDS_STORE64, a, 2);
	}
	lower_if_end(L, merge);
	L->last_barrier = NULL;
	return lower_group_barrier(L, L->kernel);
}

/* ---- transaction barriers ---- */

int64_t
amdgpu_mbar_word(int64_t arrivals, int64_t bytes, int64_t phase)
{
	return (int64_t)((uint64_t)(arrivals * ((int64_t)1 << AMDGPU_MBAR_ARRIVAL_SHIFT) + bytes)
			 << AMDGPU_MBAR_PHASE_BITS) + phase;
}

/* The count of the barriers an item names: its ave.mbar.alloc's count(n). */
static int64_t
mbar_count(Lower *L, IrOp *op, const IrItem *it)
{
	IrValue *v = ir_item_value(op, it);
	int64_t n = 1;
	if (v->kind == IR_VAL_RESULT && v->op->code == IR_OP_MBAR_ALLOC)
		ir_expr_eval_const(ir_op_group(v->op, L->c->kw.count)->item[0].e, &n);
	return n;
}

/* Adds delta (i64, a multiple of 2^16, negative) to the word at addr. The update whose result has
 * pending == 0 completes the phase and re-arms it: it adds `count` arrivals plus one phase step,
 * and examines what that add returns. Updates that landed between the two atomics belong to the
 * next phase (every delta is negative, so none of them saw zero); if they already bring the
 * re-armed phase to pending <= 0, it is complete as well and is re-armed in turn, until a phase
 * is left with something pending. test/unit/test_mbar.c models these atomics one to one and
 * explores every interleaving. */
static void
update(Lower *L, LLVMValueRef addr, LLVMValueRef delta, int64_t count)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef p = lower_smem_ptr(L, addr);
	LLVMValueRef a[2] = {p, delta};
	LLVMValueRef old = helper(L, AMD_LDS_ADD64, a, 2);
	LLVMValueRef sh = LLVMConstInt(L->i64, AMDGPU_MBAR_PHASE_BITS, 0);
	LLVMValueRef cur = LLVMBuildAdd(b, old, delta, "");
	LLVMBasicBlockRef merge = lower_if_begin(
		L, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAShr(b, cur, sh, ""), lower_i64(L, 0), ""), "mbar.complete");
	LLVMBasicBlockRef entry = LLVMGetInsertBlock(b), rearm = lower_block(L, "mbar.rearm");
	LLVMBuildBr(b, rearm);
	LLVMPositionBuilderAtEnd(b, rearm);
	/* w: the word after the last atomic, whose phase has just completed. */
	LLVMValueRef w = LLVMBuildPhi(b, L->i64, "mbar.w");
	int64_t mask = ((int64_t)1 << AMDGPU_MBAR_PHASE_BITS) - 1;
	LLVMValueRef ph = LLVMBuildAnd(b, w, lower_i64(L, mask), "");
	LLVMValueRef step = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, ph, lower_i64(L, mask), ""),
					    lower_i64(L, -mask), lower_i64(L, 1), "");
	LLVMValueRef d = LLVMBuildAdd(b, lower_i64(L, amdgpu_mbar_word(count, 0, 0)), step, "mbar.rearm");
	LLVMValueRef r[2] = {p, d};
	LLVMValueRef next = LLVMBuildAdd(b, helper(L, AMD_LDS_ADD64, r, 2), d, "");
	LLVMValueRef again = LLVMBuildICmp(b, LLVMIntSLE, LLVMBuildAShr(b, next, sh, ""), lower_i64(L, 0), "");
	LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
	LLVMValueRef in_v[2] = {cur, next};
	LLVMBasicBlockRef in_b[2] = {entry, from};
	LLVMAddIncoming(w, in_v, in_b, 2);
	LLVMBuildCondBr(b, again, rearm, merge);
	LLVMPositionBuilderAtEnd(b, merge);
}

bool
amdgpu_mbar_init(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count, int64_t copies)
{
	(void)at;
	(void)copies; /* copies complete bytes, not arrivals */
	LLVMValueRef a[2] = {lower_smem_ptr(L, addr), lower_i64(L, amdgpu_mbar_word(count, 0, 0))};
	helper(L, AMD_LDS_STORE64, a, 2);
	return true;
}

bool
amdgpu_mbar_arrive(Lower *L, IrOp *at, LLVMValueRef addr, int64_t count)
{
	update(L, addr, lower_i64(L, amdgpu_mbar_word(-count, 0, 0)), mbar_count(L, at, &at->item[0]));
	return true;
}

bool
amdgpu_mbar_expect_tx(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef bytes)
{
	/* One arrival that also announces the bytes: -2^24 + bytes pending, in one update. */
	LLVMBuilderRef b = L->b;
	LLVMValueRef d = LLVMBuildSub(b, LLVMBuildZExt(b, bytes, L->i64, ""),
				      lower_i64(L, (int64_t)1 << AMDGPU_MBAR_ARRIVAL_SHIFT), "");
	d = LLVMBuildShl(b, d, LLVMConstInt(L->i64, AMDGPU_MBAR_PHASE_BITS, 0), "");
	update(L, addr, d, mbar_count(L, at, &at->item[0]));
	return true;
}

void
amdgpu_mbar_complete_tx(Lower *L, IrOp *copy, LLVMValueRef addr, LLVMValueRef bytes)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef d = LLVMBuildNeg(b, LLVMBuildZExt(b, bytes, L->i64, ""), "");
	d = LLVMBuildShl(b, d, LLVMConstInt(L->i64, AMDGPU_MBAR_PHASE_BITS, 0), "");
	update(L, addr, d, mbar_count(L, copy, &ir_op_group(copy, L->c->kw.arrive)->item[0]));
}

/* Every thread: polls the barrier's phase until its parity differs from `parity`, then acquires. */
bool
amdgpu_mbar_wait(Lower *L, IrOp *at, LLVMValueRef addr, LLVMValueRef parity)
{
	(void)at;
	LLVMBuilderRef b = L->b;
	LLVMValueRef p = lower_smem_ptr(L, addr);
	LLVMValueRef want = LLVMBuildZExt(b, parity, L->i32, "");
	LLVMBasicBlockRef poll = lower_block(L, "mbar.poll"), nap = lower_block(L, "mbar.sleep");
	LLVMBasicBlockRef done = lower_block(L, "mbar.done");
	LLVMBuildBr(b, poll);
	LLVMPositionBuilderAtEnd(b, poll);
	/* Wave-uniform: the loop is scalar (readfirstlane, s_cmp, s_cbranch). */
	LLVMValueRef w = LLVMBuildTrunc(b, helper(L, AMD_LDS_LOAD64, &p, 1), L->i32, "");
	LLVMValueRef ph = LLVMBuildAnd(b, L->t->uniform(L, w), lower_i32(L, 1), "");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, ph, want, ""), done, nap);
	LLVMPositionBuilderAtEnd(b, nap);
	LLVMValueRef one = lower_i32(L, 1);
	lower_call(L, "llvm.amdgcn.s.sleep", L->voidt, &one, 1);
	LLVMBuildBr(b, poll);
	LLVMPositionBuilderAtEnd(b, done);
	wg_fence(L, AMD_FENCE_WG_ACQUIRE);
	return true;
}

bool
amdgpu_role_enter(Lower *L, IrOp *role, int64_t regs)
{
	/* CDNA allocates registers once per kernel: prepare() bound the largest budget and warned;
	 * nothing happens at the role's entry. */
	(void)L;
	(void)role;
	(void)regs;
	return true;
}

/* ---- chunk signals (SPEC 5.9): 64-bit counters in global memory, possibly a peer's ---- */

/* An acquire load at system scope (LLVM's default scope). */
LLVMValueRef
amdgpu_comm_load_acquire(Lower *L, LLVMValueRef ptr)
{
	LLVMValueRef v = LLVMBuildLoad2(L->b, L->i64, ptr, "sig");
	LLVMSetOrdering(v, LLVMAtomicOrderingAcquire);
	LLVMSetAlignment(v, 8);
	return v;
}

void
amdgpu_comm_nap(Lower *L)
{
	LLVMValueRef one = lower_i32(L, 1);
	lower_call(L, "llvm.amdgcn.s.sleep", L->voidt, &one, 1);
}

/* One thread, after the system-scope release fence: a relaxed atomic add at system scope. */
bool
amdgpu_comm_signal(Lower *L, IrOp *at, LLVMValueRef ptr)
{
	(void)at;
	LLVMBuildAtomicRMW(L->b, LLVMAtomicRMWBinOpAdd, ptr, lower_i64(L, 1),
	                   LLVMAtomicOrderingMonotonic, 0);
	return true;
}

/* A put's reduce: an LLVM atomicrmw at system scope (relaxed); add, max and min on integers
 * and floats of 16 to 64 bits (LLVM expands what the target has no instruction for into a
 * compare-and-swap loop). */
bool
amdgpu_comm_reduce_ok(Lower *L, IrType *elem, IrStr mode)
{
	(void)L;
	(void)mode;
	if (elem->kind == IR_TY_INT || elem->kind == IR_TY_INDEX)
		return elem->bits == 32 || elem->bits == 64;
	return elem->kind == IR_TY_FLOAT && elem->fk <= IR_F64;
}

bool
amdgpu_comm_reduce(Lower *L, IrOp *at, LLVMValueRef ptr, LLVMValueRef v, IrType *elem,
		   IrStr mode)
{
	(void)at;
	bool fl = elem->kind == IR_TY_FLOAT;
	LLVMAtomicRMWBinOp op = !strcmp(mode, "add") ? (fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd)
	                        : !strcmp(mode, "max") ? (fl ? LLVMAtomicRMWBinOpFMax : LLVMAtomicRMWBinOpMax)
	                                               : (fl ? LLVMAtomicRMWBinOpFMin : LLVMAtomicRMWBinOpMin);
	LLVMBuildAtomicRMW(L->b, op, ptr, v, LLVMAtomicOrderingMonotonic, 0);
	return true;
}
