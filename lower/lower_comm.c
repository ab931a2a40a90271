/* lower_comm.c — communication ops (SPEC 5.9) on GPU targets: the parameters a communicating
 * kernel takes (each symmetric buffer's table of the ranks' copies, the rank, the world size,
 * the launch's epoch), ave.rank and ave.world_size, the peer's copy a put or get addresses, and
 * chunk signals and waits over the signal counters. The memory-order instructions are the
 * target's (comm_load_acquire, comm_nap, comm_signal); the shared layer orders the CTA's writes before a signal
 * with a group barrier, so the elected thread's system-scope release covers them. */
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

static bool
comm_walk(IrOp *op, void *ud)
{
	bool *yes = ud;
	switch (op->code) {
	case IR_OP_RANK:
	case IR_OP_WORLD_SIZE:
	case IR_OP_PUT:
	case IR_OP_GET:
	case IR_OP_CHUNK_WAIT:
	case IR_OP_CHUNK_SIGNAL:
		*yes = true;
		return false;
	default:
		return true;
	}
}

bool
lower_communicates(IrOp *kernel)
{
	bool yes = false;
	ir_walk_op(kernel, comm_walk, &yes);
	return yes;
}

/* The parameter of kind `kind` (and symbol name, for peer tables), or -1. */
static int
find_param(Lower *L, LowerParamKind kind, IrStr name)
{
	const LowerParam *ps = L->info.params.data;
	for (int i = 0; i < L->info.params.len; i++)
		if (ps[i].kind == kind && (!name || ps[i].name == name))
			return i;
	return -1;
}

static LLVMValueRef
comm_scalar(Lower *L, IrOp *op, LowerParamKind kind)
{
	int i = find_param(L, kind, NULL);
	if (i < 0) {
		lower_error(L, op->loc, "internal error: no %s parameter for '%s'",
		            kind == LOWER_P_RANK ? "rank" : kind == LOWER_P_WORLD ? "world" : "epoch",
		            ir_op_name(op->code));
		return NULL;
	}
	LLVMValueRef v = lower_param(L, i);
	return LLVMTypeOf(v) == L->i64 ? v : LLVMBuildZExt(L->b, v, L->i64, "");
}

static bool
int_result(Lower *L, IrOp *op, LLVMValueRef v64)
{
	if (!v64)
		return false;
	LLVMTypeRef ty = lower_type(L, op->res[0].type);
	LowerVal *x = lower_val(L, &op->res[0]);
	x->kind = LOWER_V_SCALAR;
	x->v = ty == L->i64 ? v64 : LLVMBuildTrunc(L->b, v64, ty, "");
	return true;
}

bool
lower_op_rank(Lower *L, IrOp *op)
{
	return int_result(L, op, comm_scalar(L, op, LOWER_P_RANK));
}

bool
lower_op_world_size(Lower *L, IrOp *op)
{
	return int_result(L, op, comm_scalar(L, op, LOWER_P_WORLD));
}

/* Traps unless 0 <= p < world (a peer outside the world is a run-time error, SPEC 5.9). */
static bool
check_peer(Lower *L, IrOp *op, LLVMValueRef p)
{
	LLVMValueRef w = comm_scalar(L, op, LOWER_P_WORLD);
	if (!w)
		return false;
	LLVMValueRef bad = LLVMBuildICmp(L->b, LLVMIntUGE, p, w, "peer.bad");
	LLVMBasicBlockRef merge = lower_if_begin(L, bad, "peer.trap");
	lower_call(L, "llvm.trap", L->voidt, NULL, 0);
	lower_if_end(L, merge);
	return true;
}

/* The global pointer to rank p's copy of the symmetric buffer `name`. */
static LLVMValueRef
peer_base(Lower *L, IrOp *op, IrStr name, LLVMValueRef p)
{
	int i = find_param(L, LOWER_P_PEERS, name);
	if (i < 0) {
		lower_error(L, op->loc, "internal error: no peer table for '@%s'", name);
		return NULL;
	}
	if (!check_peer(L, op, p))
		return NULL;
	LLVMValueRef slot = LLVMBuildGEP2(L->b, L->pglobal, lower_param(L, i), &p, 1, "");
	LLVMValueRef v = LLVMBuildLoad2(L->b, L->pglobal, slot, "peer.base");
	LLVMSetAlignment(v, 8);
	return v;
}

LowerTensor *
lower_peer_tensor(Lower *L, IrOp *op, IrStr name, const IrExpr *peer)
{
	LowerTensor *local = lower_symm_tensor(L, op, name);
	if (!local) {
		lower_error(L, op->loc, "'@%s' is not a symmetric buffer of this kernel", name);
		return NULL;
	}
	LLVMValueRef base = peer_base(L, op, name, lower_expr(L, op, peer));
	if (!base)
		return NULL;
	LowerTensor *t = ir_arena_alloc(&L->arena, sizeof *t);
	*t = *local;
	t->base = base;
	return t;
}

/* ---- chunks ---- */

/* A leaf of a chunk declaration's expression: the call's argument for its parameter. */
typedef struct DeclArgs {
	LLVMValueRef *args;
	int nargs;
} DeclArgs;

static LLVMValueRef
decl_leaf(Lower *L, IrOp *decl, IrValue *v, void *ud)
{
	const DeclArgs *a = ud;
	const IrItem *d = &decl->item[0];
	for (int i = 0; i < d->nparam && i < a->nargs; i++)
		if (d->param[i] == v)
			return a->args[i];
	lower_error(L, decl->loc, "internal error: a chunk expression names a value that is not a "
	            "parameter");
	return lower_i64(L, 0);
}

/* The chunk op op's call names, with the byte offset of its signal counter in the signal
 * buffer; NULL after an error. */
static IrOp *
chunk_slot(Lower *L, IrOp *op, IrStr *sigbuf, LLVMValueRef *off)
{
	const IrItem *call = &op->item[0];
	IrOp *ch = ir_symbol_lookup(L->c, op, call->s);
	if (!ch || ch->code != IR_OP_CHUNK) {
		lower_error(L, op->loc, "'@%s' is not a chunk", call->s);
		return NULL;
	}
	LLVMValueRef args[IR_MAX_RANK];
	int n = call->ncoord < IR_MAX_RANK ? call->ncoord : IR_MAX_RANK;
	for (int i = 0; i < n; i++)
		args[i] = lower_expr(L, op, call->coord[i].e);
	const IrItem *sig = &ir_op_group(ch, L->c->kw.signal)->item[0];
	IrOp *sb = ir_symbol_lookup(L->c, ch, sig->s);
	IrType *st = sb ? sb->type[0] : NULL;
	if (!st || st->elem->kind != IR_TY_INT || st->elem->bits != 64) {
		lower_unsupported(L, op, "with signal buffer '@%s' of %s elements (signal counters "
		                  "are 64-bit integers on this target)",
		                  sig->s, st ? ir_type_str(L->c, st->elem) : "unknown");
		return NULL;
	}
	LowerTensor *t = lower_symm_tensor(L, op, sig->s);
	if (!t) {
		lower_error(L, op->loc, "internal error: no parameter for signal buffer '@%s'", sig->s);
		return NULL;
	}
	LLVMValueRef o = lower_i64(L, 0);
	DeclArgs da = {args, n};
	for (int d = 0; d < sig->ncoord && d < t->rank; d++) {
		LLVMValueRef x = lower_expr_with(L, ch, sig->coord[d].e, decl_leaf, &da);
		o = LLVMBuildAdd(L->b, o, LLVMBuildMul(L->b, x, t->stride[d], ""), "");
	}
	*sigbuf = sig->s;
	*off = LLVMBuildMul(L->b, o, lower_i64(L, 8), "sig.off");
	return L->ok ? ch : NULL;
}

bool
lower_op_chunk_wait(Lower *L, IrOp *op)
{
	IrStr sb;
	LLVMValueRef off;
	if (!chunk_slot(L, op, &sb, &off))
		return false;
	LowerTensor *t = lower_symm_tensor(L, op, sb);
	LLVMValueRef epoch = comm_scalar(L, op, LOWER_P_EPOCH);
	if (!epoch)
		return false;
	LLVMValueRef p = LLVMBuildGEP2(L->b, L->i8, t->base, &off, 1, "sig");
	L->last_barrier = NULL;
	/* Every thread polls until the counter reaches the launch's epoch. */
	LLVMBuilderRef b = L->b;
	LLVMBasicBlockRef poll = lower_block(L, "sig.poll"), nap = lower_block(L, "sig.sleep");
	LLVMBasicBlockRef done = lower_block(L, "sig.done");
	LLVMBuildBr(b, poll);
	LLVMPositionBuilderAtEnd(b, poll);
	LLVMValueRef v = L->t->comm_load_acquire(L, p);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGE, v, epoch, ""), done, nap);
	LLVMPositionBuilderAtEnd(b, nap);
	L->t->comm_nap(L);
	LLVMBuildBr(b, poll);
	LLVMPositionBuilderAtEnd(b, done);
	return true;
}

/* Adds 1 to the signal counter at byte `off` of rank p's copy of buffer sb. */
static bool
signal_one(Lower *L, IrOp *op, IrStr sb, LLVMValueRef off, LLVMValueRef p)
{
	LLVMValueRef base = peer_base(L, op, sb, p);
	if (!base)
		return false;
	return L->t->comm_signal(L, op, LLVMBuildGEP2(L->b, L->i8, base, &off, 1, "sig"));
}

bool
lower_op_chunk_signal(Lower *L, IrOp *op)
{
	/* Every thread's writes before the signal, then one release at system scope. */
	if (!lower_op_barrier(L, op))
		return false;
	IrStr sb;
	LLVMValueRef off;
	if (!chunk_slot(L, op, &sb, &off))
		return false;
	LLVMBasicBlockRef merge = lower_elect_begin(L, op, false);
	if (!L->t->fence(L, op, LOWER_FENCE_ACQ_REL_SYS))
		return false;
	IrGroup *pg = ir_op_group(op, L->c->kw.peer);
	if (pg) {
		if (!signal_one(L, op, sb, off, lower_expr(L, op, pg->item[0].e)))
			return false;
	} else {
		/* No peer: every rank, in a loop over the world. */
		LLVMValueRef w = comm_scalar(L, op, LOWER_P_WORLD);
		if (!w)
			return false;
		LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b), body = lower_block(L, "signal.all"),
		                  done = lower_block(L, "signal.done");
		LLVMBuildBr(L->b, body);
		LLVMPositionBuilderAtEnd(L->b, body);
		LLVMValueRef r = LLVMBuildPhi(L->b, L->i64, "r"), zero = lower_i64(L, 0);
		LLVMAddIncoming(r, &zero, &pre, 1);
		if (!signal_one(L, op, sb, off, r))
			return false;
		LLVMValueRef nx = LLVMBuildAdd(L->b, r, lower_i64(L, 1), "");
		LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
		LLVMAddIncoming(r, &nx, &latch, 1);
		LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntULT, nx, w, ""), body, done);
		LLVMPositionBuilderAtEnd(L->b, done);
	}
	lower_elect_end(L, merge);
	L->last_barrier = NULL;
	return true;
}
