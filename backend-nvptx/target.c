/* target.c — the sm_80 and sm_90a targets: their LowerTarget tables, special registers, shuffles,
 * predicated global accesses, math and f8 conversions, the kernel's launch bounds and parameter
 * annotations, and the checks that a kernel fits the target. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "nvptx.h"

bool
nvptx_is_sm90(const Lower *L)
{
	return L->t == &nvptx_sm90a;
}

static void
llvm_init_once(void)
{
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
}

/* Runs on every compile, possibly on several threads at once: LLVM's target registration is not
 * thread-safe (a racing thread could find no target for the triple), so it happens once. */
static void
llvm_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, llvm_init_once);
}

static LLVMValueRef
sreg(Lower *L, const char *name)
{
	char full[64];
	snprintf(full, sizeof full, "llvm.nvvm.read.ptx.sreg.%s", name);
	return lower_call(L, full, L->i32, NULL, 0);
}

static LLVMValueRef
thread_id(Lower *L)
{
	return sreg(L, "tid.x");
}

static LLVMValueRef
block_id(Lower *L, int dim)
{
	static const char *const n[3] = {"ctaid.x", "ctaid.y", "ctaid.z"};
	return sreg(L, n[dim]);
}

static LLVMValueRef
num_blocks(Lower *L, int dim)
{
	static const char *const n[3] = {"nctaid.x", "nctaid.y", "nctaid.z"};
	return sreg(L, n[dim]);
}

static LLVMValueRef
uniform(Lower *L, LLVMValueRef v)
{
	(void)L;
	return v; /* branches on warp indices are warp-uniform by construction */
}

static LLVMValueRef
shfl_xor(Lower *L, LLVMValueRef v, int mask)
{
	LLVMValueRef a[4] = {lower_i32(L, -1), v, lower_i32(L, mask), lower_i32(L, 31)};
	return lower_call(L, "llvm.nvvm.shfl.sync.bfly.i32", L->i32, a, 4);
}

/* ---- predicated global accesses (inline PTX, as LLVM 19 has no predicated load) ---- */

static bool
always(LLVMValueRef mask)
{
	return !mask || (LLVMIsConstant(mask) && LLVMConstIntGetZExtValue(mask) == 1);
}

/* The 32-bit (or 16-bit for 1-2 bytes) words a value of `bytes` travels in. */
static int
words(int bytes, LLVMTypeRef *wt, Lower *L)
{
	if (bytes <= 2) {
		*wt = L->i16;
		return 1;
	}
	*wt = L->i32;
	return bytes / 4;
}

static LLVMValueRef
to_words(Lower *L, LLVMValueRef v, int bytes, int n, LLVMTypeRef wt, LLVMValueRef *w)
{
	LLVMBuilderRef b = L->b;
	LLVMTypeRef it = LLVMIntTypeInContext(L->ctx, (unsigned)bytes * 8);
	if (n == 1) {
		LLVMValueRef x = LLVMBuildBitCast(b, v, it, "");
		w[0] = bytes == 1 ? LLVMBuildZExt(b, x, wt, "") : x;
		return NULL;
	}
	LLVMValueRef x = LLVMBuildBitCast(b, v, LLVMVectorType(wt, (unsigned)n), "");
	for (int i = 0; i < n; i++)
		w[i] = LLVMBuildExtractElement(b, x, lower_i32(L, i), "");
	return NULL;
}

static LLVMValueRef
from_words(Lower *L, LLVMValueRef *w, int bytes, int n, LLVMTypeRef wt, LLVMTypeRef ty)
{
	LLVMBuilderRef b = L->b;
	if (n == 1) {
		LLVMValueRef x = w[0];
		if (bytes == 1)
			x = LLVMBuildTrunc(b, x, L->i8, "");
		return LLVMBuildBitCast(b, x, ty, "");
	}
	LLVMValueRef v = LLVMGetUndef(LLVMVectorType(wt, (unsigned)n));
	for (int i = 0; i < n; i++)
		v = LLVMBuildInsertElement(b, v, w[i], lower_i32(L, i), "");
	return LLVMBuildBitCast(b, v, ty, "");
}

static const char *
ld_suffix(int bytes)
{
	switch (bytes) {
	case 1:
		return "u8";
	case 2:
		return "b16";
	case 4:
		return "b32";
	case 8:
		return "v2.b32";
	default:
		return "v4.b32";
	}
}

static LLVMValueRef
load_global(Lower *L, const LowerTensor *t, LLVMValueRef ptr, LLVMValueRef off, LLVMTypeRef ty,
            int align, LLVMValueRef mask, LLVMValueRef other)
{
	(void)t;
	(void)off;
	LLVMBuilderRef b = L->b;
	if (always(mask)) {
		LLVMValueRef v = LLVMBuildLoad2(b, ty, ptr, "");
		LLVMSetAlignment(v, (unsigned)align);
		return v;
	}
	int bytes = align;
	LLVMTypeRef wt;
	int n = words(bytes, &wt, L);
	LLVMValueRef ow[4];
	if (!other)
		other = LLVMConstNull(ty);
	to_words(L, other, bytes, n, wt, ow);
	char text[512], cons[128];
	const char *reg = wt == L->i16 ? "h" : "r";
	int p = snprintf(text, sizeof text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n", n + 1);
	for (int i = 0; i < n; i++)
		p += snprintf(text + p, sizeof text - (size_t)p, "mov.b%d $%d, $%d;\n",
		              wt == L->i16 ? 16 : 32, i, n + 2 + i);
	p += snprintf(text + p, sizeof text - (size_t)p, "@p ld.global.%s ", ld_suffix(bytes));
	if (n > 1) {
		p += snprintf(text + p, sizeof text - (size_t)p, "{");
		for (int i = 0; i < n; i++)
			p += snprintf(text + p, sizeof text - (size_t)p, "%s$%d", i ? ", " : "", i);
		p += snprintf(text + p, sizeof text - (size_t)p, "}");
	} else {
		p += snprintf(text + p, sizeof text - (size_t)p, "$0");
	}
	snprintf(text + p, sizeof text - (size_t)p, ", [$%d];\n}", n);
	int q = 0;
	for (int i = 0; i < n; i++)
		q += snprintf(cons + q, sizeof cons - (size_t)q, "=%s,", reg);
	q += snprintf(cons + q, sizeof cons - (size_t)q, "l,r");
	for (int i = 0; i < n; i++)
		q += snprintf(cons + q, sizeof cons - (size_t)q, ",%s", reg);
	snprintf(cons + q, sizeof cons - (size_t)q, ",~{memory}");
	LLVMValueRef args[6];
	args[0] = ptr;
	args[1] = LLVMBuildZExt(b, mask, L->i32, "");
	for (int i = 0; i < n; i++)
		args[2 + i] = ow[i];
	LLVMTypeRef rt = wt;
	if (n > 1) {
		LLVMTypeRef el[4] = {wt, wt, wt, wt};
		rt = LLVMStructTypeInContext(L->ctx, el, (unsigned)n, 0);
	}
	LLVMValueRef r = lower_asm(L, rt, text, cons, args, 2 + n);
	LLVMValueRef w[4];
	for (int i = 0; i < n; i++)
		w[i] = n > 1 ? LLVMBuildExtractValue(b, r, (unsigned)i, "") : r;
	return from_words(L, w, bytes, n, wt, ty);
}

static bool
store_global(Lower *L, const LowerTensor *t, LLVMValueRef ptr, LLVMValueRef off, LLVMValueRef v,
             int align, LLVMValueRef mask)
{
	(void)t;
	(void)off;
	LLVMBuilderRef b = L->b;
	if (always(mask)) {
		LLVMValueRef s = LLVMBuildStore(b, v, ptr);
		LLVMSetAlignment(s, (unsigned)align);
		return true;
	}
	int bytes = align;
	LLVMTypeRef wt;
	int n = words(bytes, &wt, L);
	LLVMValueRef w[4];
	to_words(L, v, bytes, n, wt, w);
	char text[512], cons[128];
	int p = snprintf(text, sizeof text,
	                 "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n@p st.global.%s [$1], ",
	                 bytes == 1 ? "u8" : ld_suffix(bytes));
	if (n > 1) {
		p += snprintf(text + p, sizeof text - (size_t)p, "{");
		for (int i = 0; i < n; i++)
			p += snprintf(text + p, sizeof text - (size_t)p, "%s$%d", i ? ", " : "",
			              2 + i);
		p += snprintf(text + p, sizeof text - (size_t)p, "}");
	} else {
		p += snprintf(text + p, sizeof text - (size_t)p, "$2");
	}
	snprintf(text + p, sizeof text - (size_t)p, ";\n}");
	int q = snprintf(cons, sizeof cons, "r,l");
	for (int i = 0; i < n; i++)
		q += snprintf(cons + q, sizeof cons - (size_t)q, ",%s", wt == L->i16 ? "h" : "r");
	snprintf(cons + q, sizeof cons - (size_t)q, ",~{memory}");
	LLVMValueRef args[6] = {LLVMBuildZExt(b, mask, L->i32, ""), ptr};
	for (int i = 0; i < n; i++)
		args[2 + i] = w[i];
	lower_asm(L, L->voidt, text, cons, args, 2 + n);
	return true;
}

/* ---- math ---- */

static LLVMValueRef
math(Lower *L, IrOp *op, LLVMValueRef x, IrType *t)
{
	LLVMBuilderRef b = L->b;
	bool f32 = t->kind == IR_TY_FLOAT && t->fk == IR_F32,
	     f64 = t->kind == IR_TY_FLOAT && t->fk == IR_F64;
	switch (op->code) {
	case IR_OP_EXP2:
		return f32 ? lower_call(L, "llvm.nvvm.ex2.approx.f", L->f32, &x, 1) : NULL;
	case IR_OP_EXP:
		if (!f32)
			return NULL;
		x = LLVMBuildFMul(b, x, LLVMConstReal(L->f32, 1.4426950408889634), "");
		return lower_call(L, "llvm.nvvm.ex2.approx.f", L->f32, &x, 1);
	case IR_OP_LOG2:
		return f32 ? lower_call(L, "llvm.nvvm.lg2.approx.f", L->f32, &x, 1) : NULL;
	case IR_OP_SQRT:
		if (f32)
			return lower_call(L, "llvm.sqrt.f32", L->f32, &x, 1);
		return f64 ? lower_call(L, "llvm.sqrt.f64", L->f64, &x, 1) : NULL;
	case IR_OP_RSQRT:
		if (f32)
			return lower_call(L, "llvm.nvvm.rsqrt.approx.f", L->f32, &x, 1);
		return f64 ? lower_call(L, "llvm.nvvm.rsqrt.approx.d", L->f64, &x, 1) : NULL;
	default:
		return NULL;
	}
}

static bool
is_f8(const IrType *t)
{
	return t->kind == IR_TY_FLOAT && (t->fk == IR_F8E4M3 || t->fk == IR_F8E5M2);
}

/* f8 <-> f32 with cvt (sm_89+: sm_90a here). f32 -> f8 saturates to the largest finite value
 * (.satfinite), as the hardware offers no IEEE-overflowing form. */
static LLVMValueRef
cvt(Lower *L, IrOp *op, LLVMValueRef x, IrType *from, IrType *to, bool *bad)
{
	LLVMBuilderRef b = L->b;
	if (!is_f8(from) && !is_f8(to))
		return NULL;
	if (!nvptx_is_sm90(L))
		return NULL; /* no f8 instructions: the shared layer's integer arithmetic */
	IrType *f32 = L->c->t_f32;
	if (is_f8(from) && is_f8(to)) {
		if (from == to)
			return x;
		LLVMValueRef y = cvt(L, op, x, from, f32, bad);
		return y ? cvt(L, op, y, f32, to, bad) : NULL;
	}
	if (is_f8(from)) {
		const char *f = from->fk == IR_F8E4M3 ? "e4m3x2" : "e5m2x2";
		char text[64];
		snprintf(text, sizeof text, "cvt.rn.f16x2.%s $0, $1;", f);
		LLVMValueRef in = LLVMBuildZExt(b, x, L->i16, "");
		LLVMValueRef r = lower_asm(L, L->i32, text, "=r,h", &in, 1);
		LLVMValueRef h = LLVMBuildBitCast(b, LLVMBuildTrunc(b, r, L->i16, ""), L->f16, "");
		return lower_convert(L, op, h, L->c->t_f16, to);
	}
	LLVMValueRef y = lower_convert(L, op, x, from, f32);
	if (!y)
		return NULL;
	char text[80];
	snprintf(text, sizeof text, "cvt.rn.satfinite.%s.f32 $0, $1, $1;",
	         to->fk == IR_F8E4M3 ? "e4m3x2" : "e5m2x2");
	LLVMValueRef r = lower_asm(L, L->i16, text, "=h,f", &y, 1);
	return LLVMBuildTrunc(b, r, L->i8, "");
}

/* ---- the kernel function ---- */

static void
annotate(Lower *L, const char *key, int value)
{
	LLVMMetadataRef md[3] = {LLVMValueAsMetadata(L->fn),
	                         LLVMMDStringInContext2(L->ctx, key, strlen(key)),
	                         LLVMValueAsMetadata(lower_i32(L, value))};
	LLVMAddNamedMetadataOperand(
	    L->mod, "nvvm.annotations",
	    LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, md, 3)));
}

static void
finish(Lower *L)
{
	NvState *s = nv_state(L);
	LLVMSetFunctionCallConv(L->fn, LLVMPTXKernelCallConv);
	/* .maxntid with .minnctapersm 1: ptxas then knows the registers at entry, which setmaxnreg
	 * needs (else C7508); for other kernels it allows the full per-thread budget. */
	annotate(L, "maxntidx", L->info.threads);
	annotate(L, "minctasm", 1);
	LLVMMetadataRef idx[32];
	int n = 0;
	for (int i = 0; i < s->nmaps && n < 32; i++)
		idx[n++] = LLVMValueAsMetadata(lower_i32(L, s->maps[i].param + 1));
	if (n) {
		const char *key = "grid_constant";
		LLVMMetadataRef md[3] = {LLVMValueAsMetadata(L->fn),
		                         LLVMMDStringInContext2(L->ctx, key, strlen(key)),
		                         LLVMMDNodeInContext2(L->ctx, idx, (size_t)n)};
		LLVMAddNamedMetadataOperand(
		    L->mod, "nvvm.annotations",
		    LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, md, 3)));
		for (int i = 0; i < s->nmaps; i++) {
			LLVMValueRef p = lower_param(L, s->maps[i].param);
			unsigned kind = LLVMGetEnumAttributeKindForName("byval", 5);
			LLVMAttributeRef a =
			    LLVMCreateTypeAttribute(L->ctx, kind, LLVMArrayType(L->i8, 128));
			LLVMAddAttributeAtIndex(L->fn, (unsigned)s->maps[i].param + 1, a);
			LLVMSetParamAlignment(p, 64);
		}
	}
	if (s->setmaxnreg)
		L->info.setmaxnreg = true;
}

/* Roles must fit: whole aligned warpgroups where they set regs, and the register pool
 * (regalloc/); the metadata describes them. */
static bool
check_roles(Lower *L, IrOp *ws)
{
	RaRoles rr;
	if (!ra_check_roles(L->c, L->t->info, L->info.threads, ws, true, &rr)) {
		L->ok = false;
		return false;
	}
	ra_roles_json(L->c, ws, &L->info.roles);
	return true;
}

typedef struct RoleScan {
	Lower *L;
	bool ok;
} RoleScan;

static bool
scan_roles(IrOp *op, void *ud)
{
	RoleScan *r = ud;
	if (op->code == IR_OP_WARP_SPECIALIZE && !check_roles(r->L, op))
		r->ok = false;
	return r->ok;
}

bool
nvptx_prepare(Lower *L)
{
	NvState *s = ir_arena_alloc(&L->arena, sizeof *s);
	L->tstate = s;
	s->sm90 = nvptx_is_sm90(L);
	s->entry_regs = ra_entry_regs(L->t->info, L->info.threads);
	RoleScan rs = {L, true};
	ir_walk_op(L->kernel, scan_roles, &rs);
	if (!rs.ok)
		return false;
	return nvptx_plan_copies(L);
}

static const char *const emits[] = {"ptx", "cubin", NULL};

#define NVPTX_TARGET(var, id)                                                                      \
	const LowerTarget var = {                                                                  \
	    .info = &target_table[id],                                                             \
	    .global_as = 1,                                                                        \
	    .smem_as = 3,                                                                          \
	    .emits = emits,                                                                        \
	    .llvm_init = llvm_init,                                                                \
	    .prepare = nvptx_prepare,                                                              \
	    .finish = finish,                                                                      \
	    .thread_id = thread_id,                                                                \
	    .block_id = block_id,                                                                  \
	    .num_blocks = num_blocks,                                                              \
	    .uniform = uniform,                                                                    \
	    .barrier = nvptx_barrier,                                                              \
	    .fence = nvptx_fence,                                                                  \
	    .shfl_xor = shfl_xor,                                                                  \
	    .load_global = load_global,                                                            \
	    .store_global = store_global,                                                          \
	    .mbar_init = nvptx_mbar_init,                                                          \
	    .mbar_init_done = nvptx_mbar_init_done,                                                \
	    .mbar_arrive = nvptx_mbar_arrive,                                                      \
	    .mbar_expect_tx = nvptx_mbar_expect_tx,                                                \
	    .mbar_wait = nvptx_mbar_wait,                                                          \
	    .comm_load_acquire = nvptx_comm_load_acquire,                                          \
	    .comm_nap = nvptx_comm_nap,                                                            \
	    .comm_signal = nvptx_comm_signal,                                                      \
	    .comm_reduce_ok = nvptx_comm_reduce_ok,                                                \
	    .comm_reduce = nvptx_comm_reduce,                                                      \
	    .copy_async = nvptx_copy_async,                                                        \
	    .mma_plan = nvptx_mma_plan,                                                            \
	    .mma_emit = nvptx_mma_emit,                                                            \
	    .mma_wait = nvptx_mma_wait,                                                            \
	    .role_enter = nvptx_role_enter,                                                        \
	    .math = math,                                                                          \
	    .cvt = cvt,                                                                            \
	    .codegen = nvptx_codegen,                                                              \
	}

NVPTX_TARGET(nvptx_sm80, TARGET_SM_80);
NVPTX_TARGET(nvptx_sm90a, TARGET_SM_90A);
