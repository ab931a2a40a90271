/* lower.c — lowering one kernel to LLVM IR: the kernel ABI (SPEC §4) and its parameters, the op
 * dispatch table (lower_ops.def), persistent tile loops, the scopes of roles, and the driver that
 * runs them (lower_kernel). Helpers live in lower_util.c, the shared-memory plan in lower_plan.c. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "lower.h"

typedef bool (*LowerOpFn)(Lower *L, IrOp *op);

static const LowerOpFn dispatch[IR_OP_COUNT] = {
#define LOWER(opcode, fn) [IR_OP_##opcode] = fn,
#include "lower_ops.def"
#undef LOWER
};

/* ---- the kernel ---- */

static void
init_types(Lower *L)
{
	LLVMContextRef x = L->ctx;
	L->i1 = LLVMInt1TypeInContext(x);
	L->i8 = LLVMInt8TypeInContext(x);
	L->i16 = LLVMInt16TypeInContext(x);
	L->i32 = LLVMInt32TypeInContext(x);
	L->i64 = LLVMInt64TypeInContext(x);
	L->f16 = LLVMHalfTypeInContext(x);
	L->bf16 = LLVMBFloatTypeInContext(x);
	L->f32 = LLVMFloatTypeInContext(x);
	L->f64 = LLVMDoubleTypeInContext(x);
	L->voidt = LLVMVoidTypeInContext(x);
	L->pglobal = LLVMPointerTypeInContext(x, L->t->global_as);
	L->psmem = LLVMPointerTypeInContext(x, L->t->smem_as);
	L->pgeneric = LLVMPointerTypeInContext(x, 0);
}

/* Collects symmetric buffers the kernel reads (`@sym[...]` items naming ave.symm.alloc). */
typedef struct SymmScan {
	Lower *L;
	IrVec syms; /* IrOp* */
} SymmScan;

/* Adds the symmetric buffer an item names (a chunk call: its signal buffer), once. */
static void
note_symm(SymmScan *s, IrOp *op, const IrItem *it)
{
	if (it->kind != IR_IT_SYMBOL && it->kind != IR_IT_CALL)
		return;
	IrOp *d = ir_symbol_lookup(s->L->c, op, it->s);
	if (d && d->code == IR_OP_CHUNK && it->kind == IR_IT_CALL) {
		const IrItem *sig = &ir_op_group(d, s->L->c->kw.signal)->item[0];
		d = ir_symbol_lookup(s->L->c, d, sig->s);
	} else if (it->kind != IR_IT_SYMBOL) {
		return;
	}
	if (!d || d->code != IR_OP_SYMM_ALLOC)
		return;
	for (int k = 0; k < s->syms.len; k++)
		if (IR_VEC_AT(s->syms, IrOp *, k) == d)
			return;
	ir_vec_push(s->L->c->al, &s->syms, &d, sizeof d);
}

static bool
scan_symm(IrOp *op, void *ud)
{
	SymmScan *s = ud;
	for (int i = 0; i < op->nitem; i++)
		note_symm(s, op, &op->item[i]);
	for (int g = 0; g < op->ngroup; g++)
		for (int i = 0; i < op->group[g].nitem; i++)
			note_symm(s, op, &op->group[g].item[i]);
	return true;
}

/* The ABI: a tensor is its base pointer, then its `?` sizes, then its `?` strides (i64 each);
 * scalars as themselves (i1 as one byte); then symmetric buffers the kernel reads. */
static void
abi_params(Lower *L, IrVec *symms)
{
	IrBlock *body = L->kernel->reg[0].block;
	for (int i = 0; i < body->narg; i++) {
		IrValue *a = body->arg[i];
		IrType *t = a->type;
		LowerParam p = {0};
		p.arg = i;
		p.name = a->name;
		p.type = t;
		if (t->kind == IR_TY_TENSOR) {
			p.kind = LOWER_P_PTR;
			p.llty = L->pglobal;
			lower_add_param(L, &p);
			for (int d = 0; d < t->rank; d++)
				if (t->dims[d] == IR_DYN) {
					LowerParam q = p;
					q.kind = LOWER_P_SIZE;
					q.dim = d;
					q.llty = L->i64;
					lower_add_param(L, &q);
				}
			for (int d = 0; t->strides && d < t->rank; d++)
				if (t->strides[d] == IR_DYN) {
					LowerParam q = p;
					q.kind = LOWER_P_STRIDE;
					q.dim = d;
					q.llty = L->i64;
					lower_add_param(L, &q);
				}
		} else if (t->kind == IR_TY_PTR) {
			p.kind = LOWER_P_PTR;
			p.llty = L->pglobal;
			lower_add_param(L, &p);
		} else {
			p.kind = LOWER_P_SCALAR;
			p.llty = lower_mem_type(L, t);
			lower_add_param(L, &p);
		}
	}
	if (L->info.persistent)
		for (int d = 0; d < 3; d++) {
			LowerParam p = {0};
			p.kind = LOWER_P_GRID;
			p.arg = -1;
			p.dim = d;
			p.name = ir_intern_cstr(L->c, d == 0 ? "grid.x" : d == 1 ? "grid.y" : "grid.z");
			p.llty = L->i32;
			lower_add_param(L, &p);
		}
	for (int k = 0; k < symms->len; k++) {
		IrOp *s = IR_VEC_AT(*symms, IrOp *, k);
		LowerParam p = {0};
		p.kind = LOWER_P_SYMM;
		p.arg = -1;
		p.name = ir_op_symbol(s);
		p.type = s->type[0];
		p.llty = L->pglobal;
		lower_add_param(L, &p);
	}
	if (!lower_communicates(L->kernel))
		return;
	/* SPEC 5.9 on a GPU: where every rank's copy of each buffer is, who this is, and which
	 * launch (docs/targets.md, "Communicating kernels"). */
	for (int k = 0; k < symms->len; k++) {
		IrOp *s = IR_VEC_AT(*symms, IrOp *, k);
		LowerParam p = {0};
		p.kind = LOWER_P_PEERS;
		p.arg = -1;
		p.name = ir_op_symbol(s);
		p.llty = L->pglobal;
		lower_add_param(L, &p);
	}
	static const char *const names[3] = {"rank", "world", "epoch"};
	for (int k = 0; k < 3; k++) {
		LowerParam p = {0};
		p.kind = k == 0 ? LOWER_P_RANK : k == 1 ? LOWER_P_WORLD : LOWER_P_EPOCH;
		p.arg = -1;
		p.name = ir_intern_cstr(L->c, names[k]);
		p.llty = k == 2 ? L->i64 : L->i32;
		lower_add_param(L, &p);
	}
}

static LowerTensor *
make_tensor(Lower *L, IrType *t, IrStr name, int arg)
{
	LowerTensor *x = ir_arena_alloc(&L->arena, sizeof *x);
	x->type = t;
	x->rank = t->rank;
	x->name = name;
	x->arg = arg;
	for (int d = 0; d < t->rank; d++) {
		x->cdim[d] = t->dims[d];
		x->cstride[d] = t->strides ? t->strides[d] : IR_DYN;
		if (t->dims[d] != IR_DYN)
			x->dim[d] = lower_i64(L, t->dims[d]);
		if (t->strides && t->strides[d] != IR_DYN)
			x->stride[d] = lower_i64(L, t->strides[d]);
	}
	if (!t->strides) { /* row-major contiguous: static as far as the sizes are */
		int64_t cs = 1;
		for (int d = t->rank - 1; d >= 0; d--) {
			x->cstride[d] = cs;
			if (cs != IR_DYN)
				x->stride[d] = lower_i64(L, cs);
			cs = cs != IR_DYN && t->dims[d] != IR_DYN ? cs * t->dims[d] : IR_DYN;
		}
	}
	return x;
}

/* Row-major strides over dynamic sizes, once the sizes are bound; and whether the base and the
 * dynamic strides allow 16-byte vectors (checked once, at entry). */
static void
finish_strides(Lower *L, LowerTensor *t)
{
	LLVMBuilderRef b = L->b;
	for (int d = t->rank - 2; d >= 0; d--)
		if (!t->stride[d])
			t->stride[d] = LLVMBuildMul(b, t->stride[d + 1], t->dim[d + 1], "");
	int es = lower_elem_bytes(t->type->elem);
	LLVMValueRef a = LLVMBuildPtrToInt(b, t->base, L->i64, "");
	LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, a, lower_i64(L, 15), ""),
	                                lower_i64(L, 0), "");
	for (int d = 0; d < t->rank; d++)
		if (t->cstride[d] == IR_DYN) {
			LLVMValueRef sb = LLVMBuildMul(b, t->stride[d], lower_i64(L, es), "");
			ok = LLVMBuildAnd(b, ok,
			                  LLVMBuildICmp(b, LLVMIntEQ,
			                                LLVMBuildAnd(b, sb, lower_i64(L, 15), ""),
			                                lower_i64(L, 0), ""),
			                  "");
		}
	t->aligned = ok;
}

/* Binds kernel arguments and symmetric buffers to the function's parameters. */
static void
bind_params(Lower *L)
{
	IrBlock *body = L->kernel->reg[0].block;
	LowerParam *ps = L->info.params.data;
	for (int i = 0; i < L->info.params.len; i++) {
		LowerParam *p = &ps[i];
		LLVMValueRef v = lower_param(L, i);
		LLVMSetValueName2(v, p->name ? p->name : "p", strlen(p->name ? p->name : "p"));
		if (p->kind == LOWER_P_TARGET)
			continue;
		if (p->kind == LOWER_P_GRID) {
			L->grid[p->dim] = v;
			continue;
		}
		if (p->kind == LOWER_P_SYMM || p->kind >= LOWER_P_PEERS)
			continue; /* looked up where an op needs it (lower_comm.c) */
		IrValue *a = body->arg[p->arg];
		LowerVal *x = lower_val(L, a);
		if (p->kind == LOWER_P_SCALAR) {
			x->kind = LOWER_V_SCALAR;
			x->v = a->type == L->c->t_i1 ? LLVMBuildTrunc(L->b, v, L->i1, "") : v;
		} else if (p->kind == LOWER_P_PTR && a->type->kind == IR_TY_PTR) {
			x->kind = LOWER_V_SCALAR;
			x->v = v;
		} else if (p->kind == LOWER_P_PTR) {
			x->kind = LOWER_V_TENSOR;
			x->t = make_tensor(L, a->type, a->name, p->arg);
			x->t->base = v;
		} else if (p->kind == LOWER_P_SIZE) {
			x->t->dim[p->dim] = v;
		} else if (p->kind == LOWER_P_STRIDE) {
			x->t->stride[p->dim] = v;
		}
	}
	for (int i = 0; i < body->narg; i++) {
		LowerVal *x = lower_val(L, body->arg[i]);
		if (x->kind == LOWER_V_TENSOR)
			finish_strides(L, x->t);
	}
}

LowerTensor *
lower_symm_tensor(Lower *L, IrOp *op, IrStr name)
{
	IrOp *s = ir_symbol_lookup(L->c, op, name);
	LowerParam *ps = L->info.params.data;
	for (int i = 0; s && i < L->info.params.len; i++)
		if (ps[i].kind == LOWER_P_SYMM && ps[i].name == name) {
			LowerTensor *x = make_tensor(L, s->type[0], name, -1);
			x->base = lower_param(L, i);
			finish_strides(L, x);
			return x;
		}
	return NULL;
}

/* Line info (-lineinfo, -g): for the kernel op, its DISubprogram on L->fn; for any other op, its
 * source line and column as the builder's debug location, which the instructions it lowers to
 * carry into PTX's .loc and the HSACO's .debug_line. Nothing without L->dib. */
void
lower_debug_loc(Lower *L, IrOp *op)
{
	if (!L->dib || !op->loc.line)
		return;
	if (op == L->kernel) {
		const char *name = op->item[0].s;
		LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(L->dib, L->di_file, NULL, 0,
								       LLVMDIFlagZero);
		L->di_sp = LLVMDIBuilderCreateFunction(L->dib, L->di_file, name, strlen(name), name,
						       strlen(name), L->di_file, op->loc.line, ty,
						       false, true, op->loc.line, LLVMDIFlagZero,
						       L->o->opt > 0);
		LLVMSetSubprogram(L->fn, L->di_sp);
	}
	LLVMSetCurrentDebugLocation2(
	    L->b, LLVMDIBuilderCreateDebugLocation(L->ctx, op->loc.line, op->loc.col, L->di_sp, NULL));
}

bool
lower_ops(Lower *L, IrBlock *b)
{
	for (IrOp *op = b->first; op && L->ok; op = op->next) {
		LowerOpFn fn = dispatch[op->code];
		lower_debug_loc(L, op);
		if (!fn)
			return lower_error(L, op->loc, "'%s' is not supported on target '%s'%s",
			                   ir_op_name(op->code), L->t->info->name,
			                   "");
		if (!fn(L, op))
			return L->ok = false;
	}
	return L->ok;
}

bool
lower_op_nothing(Lower *L, IrOp *op)
{
	(void)L;
	(void)op;
	return true;
}

bool
lower_op_return(Lower *L, IrOp *op)
{
	if (L->next_tile)
		LLVMBuildBr(L->b, L->next_tile); /* a persistent kernel goes on with its next tile */
	else
		LLVMBuildRetVoid(L->b);
	/* Anything after a return (there is nothing in valid IR) lands in a dead block. */
	if (op->next || ir_op_parent_op(op)->code != IR_OP_KERNEL)
		LLVMPositionBuilderAtEnd(L->b, lower_block(L, "dead"));
	return true;
}

static bool
count_op(IrOp *op, void *ud)
{
	(void)op;
	(*(uint32_t *)ud)++;
	return true;
}

typedef struct GridScan {
	IrCtx *c;
	int dims;
	unsigned read; /* bit d: the kernel reads dimension d */
	bool signals;  /* it has an ave.chunk.signal */
} GridScan;

static bool
grid_dims(IrOp *op, void *ud)
{
	GridScan *g = ud;
	if (op->code == IR_OP_PROGRAM_ID || op->code == IR_OP_NUM_PROGRAMS) {
		int64_t d = 0;
		IrGroup *gr = ir_op_group(op, g->c->kw.dim);
		if (gr)
			ir_expr_eval_const(gr->item[0].e, &d);
		if (d + 1 > g->dims)
			g->dims = (int)d + 1;
		if (d >= 0 && d < 3)
			g->read |= 1u << d;
	}
	g->signals |= op->code == IR_OP_CHUNK_SIGNAL;
	return true;
}

unsigned
lower_grid_read(IrCtx *c, IrOp *kernel, bool *signals)
{
	GridScan gs = {c, 1, 0, false};
	ir_walk_op(kernel, grid_dims, &gs);
	if (signals)
		*signals = gs.signals;
	return gs.read;
}

/* A persistent kernel (`persistent = N`, launched with up to N CTAs along x): each CTA walks
 * the logical grid's tiles t = ctaid.x, ctaid.x + nctaid.x, ... below grid.x * grid.y * grid.z,
 * running the body once per tile with program ids (t mod x, t / x mod y, t / (x y)); a return
 * goes on with the next tile, after a CTA barrier so shared memory can be reused. */
static void
persistent_begin(Lower *L, LLVMBasicBlockRef *head, LLVMValueRef *t, LLVMBasicBlockRef *exit)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef first = L->t->block_id(L, 0);
	LLVMValueRef total =
	    LLVMBuildMul(b, LLVMBuildMul(b, L->grid[0], L->grid[1], ""), L->grid[2], "tiles");
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	*head = lower_block(L, "tile.head");
	LLVMBasicBlockRef body = lower_block(L, "tile");
	*exit = lower_block(L, "tiles.done");
	LLVMBuildBr(b, *head);
	LLVMPositionBuilderAtEnd(b, *head);
	*t = LLVMBuildPhi(b, L->i32, "t");
	LLVMAddIncoming(*t, &first, &pre, 1);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, *t, total, ""), body, *exit);
	LLVMPositionBuilderAtEnd(b, body);
	L->pid[0] = LLVMBuildURem(b, *t, L->grid[0], "pid.x");
	LLVMValueRef q = LLVMBuildUDiv(b, *t, L->grid[0], "");
	L->pid[1] = LLVMBuildURem(b, q, L->grid[1], "pid.y");
	L->pid[2] = LLVMBuildUDiv(b, q, L->grid[1], "pid.z");
	L->next_tile = lower_block(L, "tile.next");
}

static bool
persistent_end(Lower *L, LLVMBasicBlockRef head, LLVMValueRef t, LLVMBasicBlockRef exit,
	       LLVMValueRef *next)
{
	LLVMBuilderRef b = L->b;
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(b)))
		LLVMBuildBr(b, L->next_tile);
	LLVMMoveBasicBlockAfter(L->next_tile, LLVMGetInsertBlock(b));
	LLVMPositionBuilderAtEnd(b, L->next_tile);
	L->last_barrier = NULL;
	if (!lower_group_barrier(L, L->kernel))
		return false;
	*next = LLVMBuildAdd(b, t, L->t->num_blocks(L, 0), "t.next");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMAddIncoming(t, next, &latch, 1);
	LLVMBuildBr(b, head);
	LLVMMoveBasicBlockAfter(exit, latch);
	LLVMPositionBuilderAtEnd(b, exit);
	LLVMBuildRetVoid(b);
	L->next_tile = NULL;
	return true;
}

void
lower_scope_shape(Lower *L, IrOp *role, LowerScope *s)
{
	IrCtx *c = L->c;
	memset(s, 0, sizeof *s);
	s->role = role;
	int warp = L->t->info->warp;
	s->lane_bits = lower_log2(warp);
	if (role) {
		IrRoleInfo ri = ir_role_info(c, role);
		s->nwarps = (int)ri.warps;
		s->issue_warps = ri.issue ? (int)ri.issue : (int)ri.warps;
	} else {
		s->nwarps = L->info.threads / warp;
		s->issue_warps = s->nwarps;
	}
	if (s->nwarps < 1)
		s->nwarps = 1;
	s->nthreads = s->nwarps * warp;
	while ((1 << (s->warp_bits + 1)) <= s->nwarps)
		s->warp_bits++;
}

/* Pre-scan: does the group touch shared memory with plain loads and stores? */
static bool
scan_generic(IrOp *op, void *ud)
{
	Lower *L = ud;
	switch (op->code) {
	case IR_OP_SMEM_LOAD:
	case IR_OP_SMEM_STORE:
	case IR_OP_REDUCE:
	case IR_OP_TRANS:
		L->scope.generic_smem = true;
		break;
	case IR_OP_MMA:
	case IR_OP_MMA_ASYNC:
		if (!L->has_plan[op->id] || !L->plans[op->id]->async_proxy)
			L->scope.generic_smem = true;
		break;
	default:
		break;
	}
	return !L->scope.generic_smem;
}

void
lower_scope_enter(Lower *L, IrOp *role, IrBlock *body)
{
	LowerScope s = L->scope;
	lower_scope_shape(L, role, &L->scope);
	L->scope.tid = s.tid;
	L->scope.lane = s.lane;
	L->scope.warp = s.warp;
	L->scope.replica = s.replica;
	L->scope.first_warp = s.first_warp;
	L->scope.bar_id = s.bar_id;
	L->scope.generic_smem = false;
	if (body)
		ir_walk(body, scan_generic, L);
}

typedef struct TileSizes {
	Lower *L;
	int32_t *regs;
} TileSizes;

static void
tile_size(TileSizes *ts, IrValue *v)
{
	const LowerLayout *l = ts->L->lay[v->id];
	if (l && ir_type_is_reg_tile(v->type))
		ts->regs[v->id] = lower_layout_regs32(l, lower_elem_bytes(v->type->elem));
}

static bool
tile_sizes(IrOp *op, void *ud)
{
	for (int i = 0; i < op->nres; i++)
		tile_size(ud, &op->res[i]);
	for (int r = 0; r < op->nreg; r++)
		for (int i = 0; i < op->reg[r].block->narg; i++)
			tile_size(ud, op->reg[r].block->arg[i]);
	return true;
}

/* The register plan of the kernel's tiles in the layouts just assigned (regalloc/): checked
 * against the budgets, proved, and kept for the metadata. */
static bool
plan_registers(Lower *L)
{
	int32_t *regs = ir_arena_alloc(&L->arena, sizeof(int32_t) * (L->nvals + 1));
	for (uint32_t i = 0; i <= L->nvals; i++)
		regs[i] = -1;
	ir_walk_op(L->kernel, tile_sizes, &(TileSizes){L, regs});
	RaPlan p;
	ra_plan_build(&p, L->c, L->kernel, L->facts, regs, RA_RESERVE);
	p.sizes = "lowering";
	bool ok = ra_plan_budgets(&p, NULL);
	RaCex cex;
	if (ok && !ra_prove(&p, &cex)) {
		ra_prove_report(&p, &cex);
		ok = false;
	}
	if (ok) {
		free(L->info.regalloc_json);
		L->info.regalloc_json = ra_plan_json(&p);
		for (int g = 0; g < p.ngroup; g++) {
			if (p.group[g].budget > L->info.regalloc_budget)
				L->info.regalloc_budget = p.group[g].budget;
			if (p.group[g].slots > L->info.regalloc_peak)
				L->info.regalloc_peak = p.group[g].slots;
		}
	}
	ra_plan_free(&p);
	return ok;
}

const char *
lower_spill_what(IrCtx *c, const LowerKernelInfo *k, const char *target, bool scratch)
{
	return scratch
	        ? ir_ctx_printf(c, "spills %lld VGPRs to scratch on target '%s', with %d registers "
	                           "per lane",
	                        (long long)(k->spill_stores / 4), target, k->regs)
	        : ir_ctx_printf(c, "spills registers to local memory on target '%s': %lld bytes "
	                           "stored and %lld loaded, with %d registers per thread",
	                        target, (long long)k->spill_stores, (long long)k->spill_loads,
	                        k->regs);
}

void
lower_spill_error(IrCtx *c, const LowerKernelInfo *k, const char *target, bool scratch,
                  const char *tried)
{
	const char *what = lower_spill_what(c, k, target, scratch);
	IrDiag *e = ir_diag_begin(
	    c, IR_SEV_ERROR, k->loc, "kernel '@%s' %s%s", k->name, what,
	    k->regalloc_budget > 0
	        ? ir_ctx_printf(c, ", although its register plan fit (%d registers of tiles at "
	                           "most, of a budget of %d)",
	                        k->regalloc_peak, k->regalloc_budget)
	        : " (no register plan)");
	if (tried)
		ir_diag_note(c, e, k->loc, "%s", tried);
	ir_diag_note(c, e, k->loc,
	             "what is not a tile (addresses, indices, loop state) needs more registers "
	             "than the plan left it: give the kernel smaller tiles or fewer live at once, "
	             "or keep more registers free ('regalloc{reserve=N}' in --passes, %d by "
	             "default), so that tiles wait in shared memory",
	             RA_RESERVE);
	ir_diag_emit(c, e);
}

bool
lower_tile_regs(IrCtx *c, IrOp *kernel, const LowerTarget *t, int32_t *regs)
{
	Lower L;
	memset(&L, 0, sizeof L);
	L.c = c;
	L.kernel = kernel;
	L.t = t;
	L.facts = t->info;
	L.layouts_only = true;
	L.ok = true;
	ir_arena_init(&L.arena, c->al);
	IrAttr *th = ir_op_attr(kernel, c->kw.threads);
	L.info.threads = th && th->kind == IR_ATTR_INT ? (int)th->i : 0;
	L.nvals = ir_number_values(kernel);
	ir_walk_op(kernel, count_op, &L.nops);
	L.lay = ir_arena_alloc(&L.arena, sizeof(LowerLayout *) * (L.nvals + 1));
	L.plans = ir_arena_alloc(&L.arena, sizeof(LowerMmaPlan *) * (L.nops + 1));
	L.has_plan = ir_arena_alloc(&L.arena, L.nops + 1);
	/* What fails here is the lowering's to report, if it compiles this kernel: say nothing. */
	IrDiagHold held;
	ir_diag_hold(c, &held, NULL, NULL);
	bool ok = L.info.threads > 0 && L.info.threads % t->info->warp == 0 &&
		  lower_assign_layouts(&L);
	if (ok)
		ir_walk_op(kernel, tile_sizes, &(TileSizes){&L, regs});
	ir_diag_release(c, &held);
	ir_arena_free(&L.arena);
	return ok;
}

bool
lower_kernel(Lower *L)
{
	IrCtx *c = L->c;
	IrOp *k = L->kernel;
	L->ok = true;
	ir_arena_init(&L->arena, c->al);
	IrAttr *th = ir_op_attr(k, c->kw.threads);
	L->info.name = k->item[0].s;
	L->info.loc = k->loc;
	L->info.args_json = lower_args_json(L->c, k);
	L->info.symm_json = lower_symm_json(L->c, k);
	if (!lower_gather_json(L->c, k, &L->info.gather_json))
		L->ok = false;
	L->info.world = lower_world(L->c, k);
	L->info.threads = th && th->kind == IR_ATTR_INT ? (int)th->i : 0;
	IrAttr *pers = ir_op_attr(k, c->kw.persistent);
	L->info.persistent = pers && pers->kind == IR_ATTR_INT ? pers->i : 0;
	IrAttr *ov = ir_op_attr(k, c->kw.overlap), *ovo = ir_op_attr(k, c->kw.overlap_operand);
	if (ov && ov->kind == IR_ATTR_SYM && !lower_communicates(k))
		ir_warning(c, k->loc,
		           "'overlap = @%s' is not applied on target '%s' (no chunk waits were "
		           "inserted): the kernel reads '@%s' as if every chunk were present",
		           ov->s, L->t->info->name, ovo && ovo->kind == IR_ATTR_SYM ? ovo->s : "?");
	if (L->info.threads % L->t->info->warp || L->info.threads > L->facts->max_threads)
		return lower_error(L, k->loc,
		                   "'threads' = %d is not a whole number of %d-thread warps "
		                   "(at most %d threads) on target '%s'",
		                   L->info.threads, L->t->info->warp, L->facts->max_threads, L->t->info->name);
	L->nvals = ir_number_values(k);
	L->nops = 0;
	ir_walk_op(k, count_op, &L->nops);
	L->vals = ir_arena_alloc(&L->arena, sizeof(LowerVal) * (L->nvals + 1));
	L->lay = ir_arena_alloc(&L->arena, sizeof(LowerLayout *) * (L->nvals + 1));
	L->plans = ir_arena_alloc(&L->arena, sizeof(LowerMmaPlan *) * (L->nops + 1));
	L->has_plan = ir_arena_alloc(&L->arena, L->nops + 1);
	GridScan gs = {c, 1, 0, false};
	ir_walk_op(k, grid_dims, &gs);
	L->info.grid_dims = gs.dims;
	L->info.grid_read = gs.read;
	L->info.signals = gs.signals;
	init_types(L);

	SymmScan ss = {L, {0}};
	ir_walk_op(k, scan_symm, &ss);
	abi_params(L, &ss.syms);
	ir_vec_free(c->al, &ss.syms, sizeof(IrOp *));
	if (!lower_assign_layouts(L))
		return false;
	if (L->t->prepare && !L->t->prepare(L))
		return false;
	if (!plan_registers(L))
		return false;

	/* The function. */
	int np = L->info.params.len;
	LLVMTypeRef *pt = ir_arena_alloc(&L->arena, sizeof(LLVMTypeRef) * (size_t)(np + 1));
	for (int i = 0; i < np; i++)
		pt[i] = IR_VEC_AT(L->info.params, LowerParam, i).llty;
	LLVMTypeRef fty = LLVMFunctionType(L->voidt, pt, (unsigned)np, 0);
	L->fn = LLVMAddFunction(L->mod, k->item[0].s, fty);
	L->b = LLVMCreateBuilderInContext(L->ctx);
	LLVMPositionBuilderAtEnd(L->b, lower_block(L, "entry"));
	lower_debug_loc(L, k);
	L->smem = LLVMGetNamedGlobal(L->mod, "ave_smem");
	if (!L->smem) {
		L->smem = LLVMAddGlobalInAddressSpace(L->mod, LLVMArrayType(L->i8, 0), "ave_smem",
		                                      L->t->smem_as);
		LLVMSetLinkage(L->smem, LLVMExternalLinkage);
		LLVMSetAlignment(L->smem, L->t->smem_base_align > 16 ? (unsigned)L->t->smem_base_align : 16);
	}
	L->smem_pad = lower_pad_placeholder(L, k);
	bind_params(L);

	/* The CTA scope. */
	LLVMValueRef tid = L->t->thread_id(L);
	L->scope.tid = tid;
	lower_scope_enter(L, NULL, k->reg[0].block);
	int lb = lower_log2(L->t->info->warp);
	L->scope.lane = LLVMBuildAnd(L->b, tid, lower_i32(L, L->t->info->warp - 1), "lane");
	L->scope.warp = L->t->uniform(L, LLVMBuildLShr(L->b, tid, lower_i32(L, lb), "warp"));
	L->scope.bar_id = lower_i32(L, 0);
	L->scope.role_bar_id = L->scope.bar_id;
	L->scope.role_nthreads = L->scope.nthreads;
	L->next_bar_id = 1;
	/* The target's entry code runs once per CTA, before a persistent kernel's tile loop. */
	bool ok = !L->t->entry || L->t->entry(L);
	LLVMBasicBlockRef tile_head = NULL, tile_exit = NULL;
	LLVMValueRef tile = NULL, tile_next = NULL;
	/* A kernel that walks its tiles itself (ave.cta_id) runs its body once per CTA. */
	bool wrap = L->info.persistent && !ir_kernel_walks(k);
	if (ok && wrap)
		persistent_begin(L, &tile_head, &tile, &tile_exit);

	ok = ok && lower_ops(L, k->reg[0].block);
	if (ok && wrap)
		ok = persistent_end(L, tile_head, tile, tile_exit, &tile_next);
	if (ok && !k->reg[0].block->last)
		LLVMBuildRetVoid(L->b);
	else if (ok && k->reg[0].block->last->code != IR_OP_RETURN &&
	         LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)) == NULL)
		LLVMBuildRetVoid(L->b);
	/* Blocks left without a terminator (dead code after returns) end in unreachable. */
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(L->fn); bb;
	     bb = LLVMGetNextBasicBlock(bb))
		if (!LLVMGetBasicBlockTerminator(bb)) {
			LLVMPositionBuilderAtEnd(L->b, bb);
			LLVMBuildUnreachable(L->b);
		}
	if (ok)
		ok = lower_plan_finish(L);
	if (ok && L->t->finish)
		L->t->finish(L);
	LLVMDisposeBuilder(L->b);
	L->b = NULL;
	lower_plan_free(L);
	return ok && L->ok;
}
