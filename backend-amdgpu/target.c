/* target.c — the gfx942 and gfx90a targets: their LowerTarget tables, work-item and workgroup
 * indices, cross-lane exchange (ds_bpermute), global memory through buffer resources (bounds in
 * hardware: out-of-range reads return 0, stores are dropped), math, f8 conversions in integer
 * arithmetic, the kernel function's attributes, and the checks that a kernel fits the target. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "amdgpu.h"

static void
llvm_init_once(void)
{
	LLVMInitializeAMDGPUTargetInfo();
	LLVMInitializeAMDGPUTarget();
	LLVMInitializeAMDGPUTargetMC();
	LLVMInitializeAMDGPUAsmPrinter();
}

/* Runs on every compile, possibly on several threads at once: LLVM's target registration is not
 * thread-safe (a racing thread could find no target for the triple), so it happens once. */
static void
llvm_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, llvm_init_once);
}

/* -O3 runs LLVM's full pipeline with the target machine: the AMDGPU attributor it ends with drops
 * the hidden kernel arguments a kernel does not use (kernarg 32 bytes instead of 288). -O1 and -O2
 * run a lean pipeline that keeps what matters here: the attributor, inlining of the scoped-atomic
 * helpers, promotion of the shared layer's register arrays, cleanups, and unswitching of loops on
 * the run-time vector tests (two loops, each with one access path, instead of one loop holding
 * both: without it gemm.ave needs 312 VGPRs instead of 184). It executes a third fewer
 * instructions than default<O3> for gemm.ave, with the same occupancy (docs/amdgpu.md). */
static const char *
llvm_passes(int opt)
{
	static const char *const lean =
		"always-inline,amdgpu-attributor,function(amdgpu-promote-alloca-to-vector,sroa,early-cse<memssa>,"
		"instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(loop-rotate,simple-loop-unswitch<nontrivial;"
		"trivial>),simplifycfg,loop(loop-unroll-full),sroa,gvn,instcombine<no-verify-fixpoint>,adce,simplifycfg)";
	if (opt >= 3)
		return "default<O3>";
	return opt >= 1 ? lean : NULL;
}

/* ---- indices ---- */

static LLVMValueRef
thread_id(Lower *L)
{
	return lower_call(L, "llvm.amdgcn.workitem.id.x", L->i32, NULL, 0);
}

static LLVMValueRef
block_id(Lower *L, int dim)
{
	static const char *const n[3] = {"llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y",
					 "llvm.amdgcn.workgroup.id.z"};
	return lower_call(L, n[dim], L->i32, NULL, 0);
}

/* The workgroup count from the code object v5 implicit arguments (hidden_block_count_x/y/z,
 * u32 at 0, 4, 8), which the runtime fills at dispatch. */
static LLVMValueRef
num_blocks(Lower *L, int dim)
{
	LLVMTypeRef p4 = LLVMPointerTypeInContext(L->ctx, 4);
	LLVMValueRef ia = lower_call(L, "llvm.amdgcn.implicitarg.ptr", p4, NULL, 0);
	LLVMValueRef off = lower_i64(L, 4 * dim);
	LLVMValueRef p = LLVMBuildGEP2(L->b, L->i8, ia, &off, 1, "");
	LLVMValueRef v = LLVMBuildLoad2(L->b, L->i32, p, "nblocks");
	LLVMSetAlignment(v, 4);
	unsigned kind = LLVMGetMDKindIDInContext(L->ctx, "invariant.load", 14);
	LLVMSetMetadata(v, kind, LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, NULL, 0)));
	return v;
}

static LLVMValueRef
uniform(Lower *L, LLVMValueRef v)
{
	return lower_call(L, "llvm.amdgcn.readfirstlane.i32", L->i32, &v, 1);
}

static LLVMValueRef
shfl_xor(Lower *L, LLVMValueRef v, int mask)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef src = LLVMBuildXor(b, L->scope.lane, lower_i32(L, mask), "");
	LLVMValueRef a[2] = {LLVMBuildShl(b, src, lower_i32(L, 2), ""), v};
	return lower_call(L, "llvm.amdgcn.ds.bpermute", L->i32, a, 2);
}

/* ---- global memory through buffer resources ---- */

/* The integer type a buffer instruction moves `bytes` in, or NULL. */
static LLVMTypeRef
buffer_type(Lower *L, unsigned bytes, const char **suffix)
{
	switch (bytes) {
	case 1:
		*suffix = "i8";
		return L->i8;
	case 2:
		*suffix = "i16";
		return L->i16;
	case 4:
		*suffix = "i32";
		return L->i32;
	case 8:
		*suffix = "v2i32";
		return LLVMVectorType(L->i32, 2);
	case 16:
		*suffix = "v4i32";
		return LLVMVectorType(L->i32, 4);
	default:
		return NULL;
	}
}

static unsigned
type_bytes(Lower *L, LLVMTypeRef ty)
{
	LLVMTargetDataRef td = LLVMGetModuleDataLayout(L->mod);
	return (unsigned)LLVMStoreSizeOfType(td, ty);
}

LLVMValueRef
amdgpu_buffer_load(Lower *L, LLVMValueRef rsrc, LLVMValueRef off, LLVMTypeRef ty)
{
	const char *suf;
	LLVMTypeRef it = buffer_type(L, type_bytes(L, ty), &suf);
	if (!it)
		return NULL;
	char name[64];
	snprintf(name, sizeof name, "llvm.amdgcn.raw.ptr.buffer.load.%s", suf);
	LLVMValueRef a[4] = {rsrc, off, lower_i32(L, 0), lower_i32(L, 0)};
	LLVMValueRef v = lower_call(L, name, it, a, 4);
	return it == ty ? v : LLVMBuildBitCast(L->b, v, ty, "");
}

bool
amdgpu_buffer_store(Lower *L, LLVMValueRef rsrc, LLVMValueRef off, LLVMValueRef v)
{
	const char *suf;
	LLVMTypeRef it = buffer_type(L, type_bytes(L, LLVMTypeOf(v)), &suf);
	if (!it)
		return false;
	char name[64];
	snprintf(name, sizeof name, "llvm.amdgcn.raw.ptr.buffer.store.%s", suf);
	if (LLVMTypeOf(v) != it)
		v = LLVMBuildBitCast(L->b, v, it, "");
	LLVMValueRef a[5] = {v, rsrc, off, lower_i32(L, 0), lower_i32(L, 0)};
	lower_call(L, name, L->voidt, a, 5);
	return true;
}

/* The byte span of a tensor with static sizes and strides, or -1. */
static int64_t
static_span(const LowerTensor *t)
{
	int64_t n = 0;
	for (int d = 0; d < t->rank; d++) {
		if (t->cdim[d] == IR_DYN || t->cstride[d] == IR_DYN)
			return -1;
		if (t->cdim[d] == 0)
			return 0;
		if (t->cstride[d] < 0)
			return -1;
		n += (t->cdim[d] - 1) * t->cstride[d];
	}
	return (n + 1) * lower_elem_bytes(t->type->elem);
}

LLVMValueRef
amdgpu_rsrc(Lower *L, const LowerTensor *t)
{
	AmdState *s = amd_state(L);
	LLVMValueRef n = NULL;
	for (int i = 0; i < s->nrec && !n; i++)
		if (s->rec[i].t == t)
			n = s->rec[i].bytes;
	if (!n) {
		int64_t span = static_span(t);
		n = lower_i32(L, span >= 0 && span <= AMDGPU_BUFFER_LIMIT ? span : AMDGPU_BUFFER_LIMIT);
	}
	LLVMTypeRef p8 = LLVMPointerTypeInContext(L->ctx, 8);
	/* word3 0x00020000: DATA_FORMAT 32 bits (required non-zero on gfx9; ignored by untyped
	 * accesses); stride 0: a raw buffer whose num_records counts bytes. */
	LLVMValueRef a[4] = {t->base, LLVMConstInt(L->i16, 0, 0), n, lower_i32(L, 0x00020000)};
	return lower_call(L, "llvm.amdgcn.make.buffer.rsrc.p1", p8, a, 4);
}

static bool
always(LLVMValueRef mask)
{
	return !mask || (LLVMIsConstant(mask) && LLVMConstIntGetZExtValue(mask) == 1);
}

/* The 32-bit offset of an access: masked-off lanes get one past every resource. */
static LLVMValueRef
voffset(Lower *L, LLVMValueRef off, LLVMValueRef mask)
{
	LLVMValueRef o = LLVMBuildTrunc(L->b, off, L->i32, "");
	return always(mask) ? o : LLVMBuildSelect(L->b, mask, o, lower_i32(L, AMDGPU_OOB), "");
}

static LLVMValueRef
load_global(Lower *L, const LowerTensor *t, LLVMValueRef ptr, LLVMValueRef off, LLVMTypeRef ty, int align,
	    LLVMValueRef mask, LLVMValueRef other)
{
	(void)ptr;
	(void)align;
	LLVMValueRef rsrc = amdgpu_rsrc(L, t), vo = voffset(L, off, mask);
	LLVMValueRef v = amdgpu_buffer_load(L, rsrc, vo, ty);
	if (!v) {
		lower_error(L, L->kernel->loc, "internal error: no buffer load of %u bytes on target '%s'",
			    type_bytes(L, ty), L->t->info->name);
		return NULL;
	}
	if (!always(mask) && other && !LLVMIsNull(other))
		v = LLVMBuildSelect(L->b, mask, v, other, "");
	return v;
}

static bool
store_global(Lower *L, const LowerTensor *t, LLVMValueRef ptr, LLVMValueRef off, LLVMValueRef v, int align,
	     LLVMValueRef mask)
{
	(void)ptr;
	(void)align;
	LLVMValueRef rsrc = amdgpu_rsrc(L, t), vo = voffset(L, off, mask);
	if (!amdgpu_buffer_store(L, rsrc, vo, v))
		return lower_error(L, L->kernel->loc, "internal error: no buffer store of %u bytes on target '%s'",
				   type_bytes(L, LLVMTypeOf(v)), L->t->info->name);
	return true;
}

/* At entry: each tensor argument's byte span as num_records, and a trap where a span exceeds
 * what a 32-bit buffer offset reaches (or a stride is negative): the launch fails instead of
 * reading zeros. */
static bool
buffer_entry(Lower *L)
{
	AmdState *s = amd_state(L);
	LLVMBuilderRef b = L->b;
	IrBlock *body = L->kernel->reg[0].block;
	LLVMValueRef bad = LLVMConstInt(L->i1, 0, 0);
	s->rec = ir_arena_alloc(&L->arena, sizeof(AmdRecords) * (size_t)(body->narg + 1));
	for (int i = 0; i < body->narg; i++) {
		LowerVal *x = lower_val(L, body->arg[i]);
		if (x->kind != LOWER_V_TENSOR)
			continue;
		const LowerTensor *t = x->t;
		LLVMValueRef span = lower_i64(L, 0), empty = LLVMConstInt(L->i1, 0, 0);
		for (int d = 0; d < t->rank; d++) {
			LLVMValueRef dm1 = LLVMBuildSub(b, t->dim[d], lower_i64(L, 1), "");
			span = LLVMBuildAdd(b, span, LLVMBuildMul(b, dm1, t->stride[d], ""), "");
			empty = LLVMBuildOr(b, empty, LLVMBuildICmp(b, LLVMIntSLE, t->dim[d], lower_i64(L, 0), ""), "");
			bad = LLVMBuildOr(b, bad, LLVMBuildICmp(b, LLVMIntSLT, t->stride[d], lower_i64(L, 0), ""), "");
		}
		span = LLVMBuildMul(b, LLVMBuildAdd(b, span, lower_i64(L, 1), ""),
				    lower_i64(L, lower_elem_bytes(t->type->elem)), "");
		span = LLVMBuildSelect(b, empty, lower_i64(L, 0), span, "span");
		bad = LLVMBuildOr(b, bad, LLVMBuildICmp(b, LLVMIntSGT, span, lower_i64(L, AMDGPU_BUFFER_LIMIT), ""), "");
		s->rec[s->nrec].t = t;
		s->rec[s->nrec++].bytes = LLVMBuildTrunc(b, span, L->i32, "nrec");
	}
	if (LLVMIsConstant(bad) && !LLVMConstIntGetZExtValue(bad))
		return true;
	LLVMBasicBlockRef trap = lower_block(L, "span.trap"), ok = lower_block(L, "span.ok");
	LLVMBuildCondBr(b, bad, trap, ok);
	LLVMPositionBuilderAtEnd(b, trap);
	lower_call(L, "llvm.trap", L->voidt, NULL, 0);
	LLVMBuildUnreachable(b);
	LLVMPositionBuilderAtEnd(b, ok);
	return true;
}

/* Symmetric buffers have static shapes: a span past the buffer limit is a compile error. */
static bool
check_symm_spans(Lower *L)
{
	LowerParam *ps = L->info.params.data;
	for (int i = 0; i < L->info.params.len; i++) {
		if (ps[i].kind != LOWER_P_SYMM)
			continue;
		IrType *t = ps[i].type;
		int64_t n = 0;
		bool known = true;
		for (int d = 0; d < t->rank; d++) {
			int64_t st = 1;
			if (t->strides)
				st = t->strides[d];
			else
				for (int e = d + 1; e < t->rank; e++)
					st *= t->dims[e];
			if (t->dims[d] == IR_DYN || st == IR_DYN || st < 0)
				known = false;
			else if (t->dims[d] > 0)
				n += (t->dims[d] - 1) * st;
		}
		int64_t bytes = (n + 1) * lower_elem_bytes(t->elem);
		if (!known || bytes > AMDGPU_BUFFER_LIMIT)
			return lower_error(L, L->kernel->loc, "symmetric buffer '@%s' spans %s bytes; target '%s' "
					   "addresses global memory through buffer resources of at most %lld bytes",
					   ps[i].name, known ? ir_ctx_printf(L->c, "%lld", (long long)bytes) : "unknown",
					   L->t->info->name, (long long)AMDGPU_BUFFER_LIMIT);
	}
	return true;
}

/* ---- math ---- */

/* exp2, exp, log2, sqrt, rsqrt of x (f32, or f64 where the hardware has it); NULL makes the
 * shared layer report the op unsupported. */
static LLVMValueRef
math(Lower *L, IrOp *op, LLVMValueRef x, IrType *t)
{
	bool f32 = t->kind == IR_TY_FLOAT && t->fk == IR_F32, f64 = t->kind == IR_TY_FLOAT && t->fk == IR_F64;
	/* AMDGPU has no f64 exp2/exp/log2 instruction and LLVM no library to call: unsupported. */
	switch (op->code) {
	case IR_OP_EXP2:
		return f32 ? lower_call(L, "llvm.exp2.f32", L->f32, &x, 1) : NULL;
	case IR_OP_EXP:
		return f32 ? lower_call(L, "llvm.exp.f32", L->f32, &x, 1) : NULL;
	case IR_OP_LOG2:
		return f32 ? lower_call(L, "llvm.log2.f32", L->f32, &x, 1) : NULL;
	case IR_OP_SQRT:
		if (f32)
			return lower_call(L, "llvm.sqrt.f32", L->f32, &x, 1);
		return f64 ? lower_call(L, "llvm.sqrt.f64", L->f64, &x, 1) : NULL;
	case IR_OP_RSQRT:
		if (f32)
			return lower_call(L, "llvm.amdgcn.rsq.f32", L->f32, &x, 1);
		return f64 ? lower_call(L, "llvm.amdgcn.rsq.f64", L->f64, &x, 1) : NULL;
	default:
		return NULL;
	}
}

/* ---- the kernel ---- */

static void
fn_attr(Lower *L, const char *key, const char *value)
{
	LLVMAttributeRef a = LLVMCreateStringAttribute(L->ctx, key, (unsigned)strlen(key), value,
						       (unsigned)strlen(value));
	LLVMAddAttributeAtIndex(L->fn, LLVMAttributeFunctionIndex, a);
}

/* The kernel function: calling convention, launch bounds, the budget of the roles. */
static void
finish(Lower *L)
{
	AmdState *s = amd_state(L);
	char v[32];
	LLVMSetFunctionCallConv(L->fn, LLVMAMDGPUKERNELCallConv);
	snprintf(v, sizeof v, "%d,%d", L->info.threads, L->info.threads);
	fn_attr(L, "amdgpu-flat-work-group-size", v);
	/* Grids are whole workgroups (a grid counts CTAs). */
	fn_attr(L, "uniform-work-group-size", "true");
	if (s->waves_per_eu) {
		snprintf(v, sizeof v, "%d", s->waves_per_eu);
		fn_attr(L, "amdgpu-waves-per-eu", v);
	}
	L->info.barriers = (s->s_barrier ? 1 : 0) + (s->group_barrier ? s->group_ids : 0);
	if (s->waves_per_eu) {
		char js[64];
		snprintf(js, sizeof js, "{\"waves_per_eu\": %d}", s->waves_per_eu);
		L->info.target_json = strdup(js);
	}
}

/* Roles on CDNA: one register allocation for every wave of a kernel, so the largest regs(...)
 * binds them all through amdgpu-waves-per-eu; it must leave room for the workgroup's waves
 * (regalloc/ checks it and warns for each role's regs). */
static bool
check_roles(Lower *L, IrOp *ws)
{
	AmdState *s = amd_state(L);
	RaRoles rr;
	if (!ra_check_roles(L->c, L->t->info, L->info.threads, ws, true, &rr)) {
		L->ok = false;
		return false;
	}
	if (rr.max_role_regs > s->max_role_regs) {
		s->max_role_regs = rr.max_role_regs;
		s->waves_per_eu = rr.waves_per_eu;
	}
	ra_roles_json(L->c, ws, &L->info.roles);
	return true;
}

typedef struct RoleScan {
	Lower *L;
	bool ok;
	IrVec ws; /* IrOp* */
} RoleScan;

static bool
scan_roles(IrOp *op, void *ud)
{
	RoleScan *r = ud;
	if (op->code == IR_OP_WARP_SPECIALIZE) {
		ir_vec_push(r->L->c->al, &r->ws, &op, sizeof op);
		if (!check_roles(r->L, op))
			r->ok = false;
	}
	return r->ok;
}

/* Before lowering: the per-kernel state, a warning when the kernel names another target, the
 * roles' budget (an error when the workgroup's waves cannot all have it), symmetric spans. */
static bool
prepare(Lower *L)
{
	IrCtx *c = L->c;
	AmdState *s = ir_arena_alloc(&L->arena, sizeof *s);
	L->tstate = s;
	IrAttr *ta = ir_op_attr(L->kernel, c->kw.target);
	if (ta && ta->kind == IR_ATTR_STR && strcmp(ta->s, L->t->info->name))
		ir_warning(c, L->kernel->loc, "kernel '@%s' names target '%s'; compiling it for '%s' (the "
			   "driver's --target wins)", L->kernel->item[0].s, ta->s, L->t->info->name);
	RoleScan rs = {L, true, {0}};
	ir_walk_op(L->kernel, scan_roles, &rs);
	ir_vec_free(c->al, &rs.ws, sizeof(IrOp *));
	return rs.ok && check_symm_spans(L);
}

/* At entry: buffer sizes and their guard, the emulated group barriers' words. */
static bool
entry(Lower *L)
{
	return buffer_entry(L) && amdgpu_sync_entry(L);
}

static const char *const emits[] = {"asm", "hsaco", NULL};

#define AMDGPU_TARGET(var, id)                                                                          \
	const LowerTarget var = {                                                                       \
		.info = &target_table[id],                                                              \
		.global_as = 1,                                                                         \
		.smem_as = 3,                                                                           \
		.smem_base_align = 1024, /* LDS is placed at link time: align it for 128B swizzles */    \
		.emits = emits,                                                                         \
		.llvm_init = llvm_init,                                                                 \
		.prepare = prepare,                                                                     \
		.finish = finish,                                                                       \
		.entry = entry,                                                                         \
		.llvm_passes = llvm_passes,                                                             \
		.tool = "ld.lld",                                                                       \
		.thread_id = thread_id,                                                                 \
		.block_id = block_id,                                                                   \
		.num_blocks = num_blocks,                                                               \
		.uniform = uniform,                                                                     \
		.barrier = amdgpu_barrier,                                                              \
		.warp_sync = amdgpu_wave_sync,                                                          \
		.fence = amdgpu_fence,                                                                  \
		.shfl_xor = shfl_xor,                                                                   \
		.load_global = load_global,                                                             \
		.store_global = store_global,                                                           \
		.mbar_init = amdgpu_mbar_init,                                                          \
		.mbar_arrive = amdgpu_mbar_arrive,                                                      \
		.mbar_expect_tx = amdgpu_mbar_expect_tx,                                                \
		.mbar_wait = amdgpu_mbar_wait,                                                          \
		.comm_load_acquire = amdgpu_comm_load_acquire,                                          \
		.comm_nap = amdgpu_comm_nap,                                                            \
		.comm_signal = amdgpu_comm_signal,                                                      \
		.comm_reduce_ok = amdgpu_comm_reduce_ok,                                                \
		.comm_reduce = amdgpu_comm_reduce,                                                      \
		.copy_async = amdgpu_copy_async,                                                        \
		.mma_plan = amdgpu_mma_plan,                                                            \
		.mma_emit = amdgpu_mma_emit,                                                            \
		.role_enter = amdgpu_role_enter,                                                        \
		.math = math,                                                                           \
		.codegen = amdgpu_codegen,                                                              \
	}

AMDGPU_TARGET(amdgpu_gfx942, TARGET_GFX942);
AMDGPU_TARGET(amdgpu_gfx90a, TARGET_GFX90A);
