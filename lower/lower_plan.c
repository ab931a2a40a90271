/* lower_plan.c — shared-memory offsets known only after the whole kernel is lowered: placeholders
 * for buffer bases, scratch areas and the base padding, then the plan (lower_smem_collect and
 * lower_smem_assign of passes/smem_alloc.c with the scratch added) patched into them, with a
 * group barrier where a buffer reuses bytes of another. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

/* ---- placeholders: shared-memory offsets known only after planning ---- */

typedef enum PhKind { PH_BUFFER, PH_SCRATCH, PH_REUSE, PH_PAD } PhKind;

typedef struct Placeholder {
	PhKind kind;
	LLVMValueRef call;
	IrValue *value; /* PH_BUFFER, PH_REUSE */
	int index;      /* PH_SCRATCH */
	IrOp *at;
	LowerScope scope; /* PH_REUSE: who synchronizes */
} Placeholder;

static LLVMValueRef
placeholder(Lower *L, PhKind k, IrValue *v, int index, IrOp *at)
{
	LLVMValueRef arg = lower_i32(L, L->placeholders.len);
	LLVMValueRef call = lower_call(L, k == PH_REUSE ? "ave.reuse" : "ave.offset",
	                               k == PH_REUSE ? L->voidt : L->i32, &arg, 1);
	Placeholder p = {k, call, v, index, at, L->scope};
	ir_vec_push(L->c->al, &L->placeholders, &p, sizeof p);
	return call;
}

LLVMValueRef
lower_scratch(Lower *L, IrOp *at, int64_t bytes, int64_t align)
{
	LowerSmemBuf b = {0};
	b.name = ir_ctx_printf(L->c, "the scratch of '%s'", ir_op_name(at->code));
	b.loc = at->loc;
	b.bytes = bytes;
	b.align = align < 16 ? 16 : align;
	b.start = b.end = at->id;
	for (IrOp *p = ir_op_parent_op(at); p && p->code != IR_OP_KERNEL; p = ir_op_parent_op(p))
		if (p->code == IR_OP_WARP_SPECIALIZE) {
			b.start = p->id;
			b.end = lower_op_end(p);
		}
	/* The replicas of a role run this op at once, each on its own data: each gets its own
	 * copy of the scratch (one shared copy let one replica's wgmma read the tile another
	 * replica had just staged there). */
	int64_t reps = L->scope.role ? ir_role_info(L->c, L->scope.role).replicas : 1;
	int64_t stride = (bytes + b.align - 1) / b.align * b.align;
	if (reps > 1)
		b.bytes = stride * reps;
	ir_vec_push(L->c->al, &L->scratch, &b, sizeof b);
	LLVMValueRef off = placeholder(L, PH_SCRATCH, NULL, L->scratch.len - 1, at);
	if (reps > 1 && L->scope.replica)
		off = LLVMBuildAdd(L->b, off,
		                   LLVMBuildMul(L->b, LLVMBuildTrunc(L->b, L->scope.replica, L->i32, ""),
		                                lower_i32(L, stride), ""),
		                   "scratch.replica");
	return off;
}

void
lower_scratch_extend(Lower *L, IrOp *until)
{
	LowerSmemBuf *b = &IR_VEC_AT(L->scratch, LowerSmemBuf, L->scratch.len - 1);
	uint32_t e = lower_op_end(until);
	if (e > b->end)
		b->end = e;
}

void
lower_scratch_from(Lower *L, IrOp *from)
{
	LowerSmemBuf *b = &IR_VEC_AT(L->scratch, LowerSmemBuf, L->scratch.len - 1);
	if (from->id < b->start)
		b->start = from->id;
}

/* A shared-memory offset placeholder: pure, so a barrier may merge across it. */
bool
lower_is_offset_placeholder(LLVMValueRef i)
{
	if (!LLVMIsACallInst(i))
		return false;
	LLVMValueRef f = LLVMGetCalledValue(i);
	size_t n = 0;
	const char *name = f ? LLVMGetValueName2(f, &n) : NULL;
	return name && n == 10 && !memcmp(name, "ave.offset", 10);
}

/* Places the buffers and scratch, patches the placeholders, and emits reuse barriers. */
bool
lower_plan_finish(Lower *L)
{
	IrVec bufs = {0};
	bool ok = lower_smem_collect(L->c, L->kernel, L->facts, &bufs);
	int nexplicit = bufs.len;
	for (int i = 0; i < L->scratch.len; i++)
		ir_vec_push(L->c->al, &bufs, &IR_VEC_AT(L->scratch, LowerSmemBuf, i),
		            sizeof(LowerSmemBuf));
	LowerSmemBuf *b = bufs.data;
	int64_t total = lower_smem_assign(b, bufs.len), align = 16;
	for (int i = 0; i < bufs.len; i++)
		if (b[i].align > align)
			align = b[i].align;
	int64_t base_align = L->t->smem_base_align > 16 ? L->t->smem_base_align : 16;
	int64_t launch = total ? total + (align > base_align ? align : 0) : 0;
	if (ok && !lower_smem_check(L->c, L->kernel, L->facts, b, bufs.len, launch))
		ok = false;
	Placeholder *ph = L->placeholders.data;
	for (int i = 0; i < L->placeholders.len; i++) {
		Placeholder *p = &ph[i];
		LLVMValueRef with = NULL;
		int64_t off = 0;
		bool reuse = false;
		if (p->kind == PH_SCRATCH) {
			off = b[nexplicit + p->index].offset;
		} else {
			for (int k = 0; k < nexplicit; k++)
				if (b[k].value == p->value) {
					off = b[k].offset;
					reuse = b[k].shared;
				}
		}
		if (p->kind == PH_PAD) {
			LLVMBasicBlockRef bb = LLVMGetInstructionParent(p->call);
			LLVMPositionBuilder(L->b, bb, p->call);
			with = lower_i32(L, 0);
			if (align > base_align) {
				LLVMValueRef a = LLVMBuildPtrToInt(L->b, L->smem, L->i32, "");
				with = LLVMBuildAnd(L->b, LLVMBuildNeg(L->b, a, ""),
				                    lower_i32(L, align - 1), "smem.pad");
			}
		} else if (p->kind == PH_REUSE) {
			if (reuse && ok) {
				LLVMBasicBlockRef bb = LLVMGetInstructionParent(p->call);
				LLVMPositionBuilder(L->b, bb, p->call);
				LowerScope saved = L->scope;
				L->scope = p->scope;
				L->last_barrier = NULL;
				ok &= lower_group_barrier(L, p->at);
				L->scope = saved;
			}
			LLVMInstructionEraseFromParent(p->call);
			continue;
		} else {
			with = lower_i32(L, off);
		}
		LLVMReplaceAllUsesWith(p->call, with);
		LLVMInstructionEraseFromParent(p->call);
	}
	L->info.smem_bytes = launch;
	L->info.buffers = bufs;
	return ok;
}

LLVMValueRef
lower_buffer_base(Lower *L, IrOp *op)
{
	if (!L->scope.role)
		placeholder(L, PH_REUSE, &op->res[0], 0, op);
	return placeholder(L, PH_BUFFER, &op->res[0], 0, op);
}

LLVMValueRef
lower_pad_placeholder(Lower *L, IrOp *kernel)
{
	return placeholder(L, PH_PAD, NULL, 0, kernel);
}

void
lower_plan_free(Lower *L)
{
	ir_vec_free(L->c->al, &L->placeholders, sizeof(Placeholder));
	ir_vec_free(L->c->al, &L->scratch, sizeof(LowerSmemBuf));
	ir_vec_free(L->c->al, &L->hoisted, sizeof(LowerHoisted));
}
