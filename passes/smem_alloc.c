/* smem_alloc.c — shared-memory allocation by liveness: every smem.alloc and mbar.alloc gets an
 * offset; buffers that are never live at the same time may share bytes. The `smem-alloc` pass
 * records the offsets ({offset = N}) and the kernel's total ({smem_bytes = N}), reports the total,
 * and rejects a kernel whose buffers exceed the target's limit, naming them. The lowering runs the
 * same planner with its scratch buffers added. */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

const TargetInfo *
pass_kernel_target(IrCtx *c, IrOp *kernel, const TargetInfo *target)
{
	if (target)
		return target;
	IrAttr *a = ir_op_attr(kernel, c->kw.target);
	return a && a->kind == IR_ATTR_STR ? target_find(a->s) : NULL;
}

uint32_t
lower_op_end(IrOp *op)
{
	for (int r = op->nreg - 1; r >= 0; r--)
		if (op->reg[r].block->last)
			return lower_op_end(op->reg[r].block->last);
	return op->id;
}

static int64_t
align_up(int64_t v, int64_t a)
{
	return (v + a - 1) / a * a;
}

/* Widens the range [*lo, *hi] by the use at `user` of a buffer allocated at `def`. */
static void
widen(IrOp *def, IrOp *user, uint32_t *lo, uint32_t *hi)
{
	IrOp *ext = user;
	for (IrOp *p = ir_op_parent_op(user); p && p->code != IR_OP_KERNEL;
	     p = ir_op_parent_op(p)) {
		if (p->code == IR_OP_WARP_SPECIALIZE) {
			ext = p; /* roles run concurrently: the whole construct */
			continue;
		}
		if (ir_op_is_ancestor(p, def))
			continue;
		if (p->code == IR_OP_FOR)
			ext = p;
	}
	if (ext->id < *lo)
		*lo = ext->id;
	uint32_t e = lower_op_end(ext);
	if (e > *hi)
		*hi = e;
}

static void
widen_uses(IrOp *def, IrValue *v, uint32_t *lo, uint32_t *hi)
{
	for (IrUse *u = v->uses; u; u = u->next) {
		widen(def, u->user, lo, hi);
		if (u->user->code == IR_OP_SLICE)
			widen_uses(def, &u->user->res[0], lo, hi);
	}
}

typedef struct Collect {
	IrCtx *c;
	IrVec *bufs;
	int mbar_bytes;
	bool ok;
} Collect;

static bool
collect_op(IrOp *op, void *ud)
{
	Collect *k = ud;
	if (op->code != IR_OP_SMEM_ALLOC && op->code != IR_OP_MBAR_ALLOC)
		return true;
	IrValue *v = &op->res[0];
	IrType *t = v->type;
	LowerSmemBuf b = {0};
	b.value = v;
	b.loc = op->loc;
	b.name = ir_ctx_printf(k->c, "%%%s", v->name ? v->name : "<unnamed>");
	if (t->kind == IR_TY_MBAR) {
		b.bytes = k->mbar_bytes * t->n;
		b.align = 8;
	} else {
		LowerSmemLayout s;
		IrType *tile = t->kind == IR_TY_RING ? t->elem : t;
		if (!lower_smem_layout(k->c, tile, &s)) {
			ir_error(k->c, op->loc, "cannot lay out shared-memory tile '%s'",
			         ir_type_str(k->c, tile));
			k->ok = false;
			return true;
		}
		b.align = s.align;
		b.bytes = t->kind == IR_TY_RING ? t->n * align_up(s.bytes, s.align) : s.bytes;
	}
	b.start = op->id;
	b.end = op->id;
	widen(op, op, &b.start, &b.end);
	widen_uses(op, v, &b.start, &b.end);
	ir_vec_push(k->c->al, k->bufs, &b, sizeof b);
	return true;
}

bool
lower_smem_collect(IrCtx *c, IrOp *kernel, const TargetInfo *f, IrVec *bufs)
{
	ir_number_values(kernel);
	Collect k = {c, bufs, f ? f->mbar_bytes : 8, true};
	ir_walk_op(kernel, collect_op, &k);
	return k.ok;
}

static int
by_size(const void *pa, const void *pb)
{
	const LowerSmemBuf *a = *(const LowerSmemBuf *const *)pa,
	                   *b = *(const LowerSmemBuf *const *)pb;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

int64_t
lower_smem_assign(LowerSmemBuf *b, int n)
{
	LowerSmemBuf **order = malloc(sizeof *order * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++) {
		order[i] = &b[i];
		b[i].shared = false;
	}
	qsort(order, (size_t)n, sizeof *order, by_size);
	int64_t total = 0;
	for (int i = 0; i < n; i++) {
		LowerSmemBuf *x = order[i];
		int64_t off = 0;
		for (bool moved = true; moved;) {
			moved = false;
			for (int j = 0; j < i; j++) {
				LowerSmemBuf *y = order[j];
				bool live = x->start <= y->end && y->start <= x->end;
				if (live && off < y->offset + y->bytes &&
				    y->offset < off + x->bytes) {
					off = align_up(y->offset + y->bytes, x->align);
					moved = true;
				}
			}
		}
		x->offset = off;
		if (off + x->bytes > total)
			total = off + x->bytes;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && b[i].offset < b[j].offset + b[j].bytes &&
			    b[j].offset < b[i].offset + b[i].bytes)
				b[i].shared = true;
	free(order);
	return total;
}

bool
lower_smem_check(IrCtx *c, IrOp *kernel, const TargetInfo *f, const LowerSmemBuf *b, int n,
                 int64_t total)
{
	if (!f || total <= f->smem_limit)
		return true;
	IrDiag *d =
	    ir_diag_begin(c, IR_SEV_ERROR, kernel->loc,
	                  "kernel '@%s' needs %lld bytes of shared memory, but target '%s' "
	                  "allows %lld per CTA",
	                  kernel->item[0].s, (long long)total, f->name, (long long)f->smem_limit);
	for (int i = 0; i < n; i++)
		ir_diag_note(c, d, b[i].loc,
		             b[i].value ? "'%s' takes %lld bytes at offset %lld"
		                        : "%s takes %lld bytes at offset %lld",
		             b[i].name, (long long)b[i].bytes, (long long)b[i].offset);
	ir_diag_emit(c, d);
	return false;
}

static bool
plan_kernel(IrModule *m, IrOp *k, const IrPassOpts *o)
{
	IrCtx *c = m->ctx;
	IrVec bufs = {0};
	const TargetInfo *f = pass_kernel_target(c, k, o ? o->target : NULL);
	bool ok = lower_smem_collect(c, k, f, &bufs);
	LowerSmemBuf *b = bufs.data;
	int64_t total = lower_smem_assign(b, bufs.len);
	if (ok)
		ok = lower_smem_check(c, k, f, b, bufs.len, total);
	if (ok) {
		IrStr off = ir_intern_cstr(c, "offset");
		for (int i = 0; i < bufs.len; i++)
			ir_op_set_attr(m, b[i].value->op, off, ir_attr_int(c, b[i].offset));
		ir_op_set_attr(m, k, ir_intern_cstr(c, "smem_bytes"), ir_attr_int(c, total));
		if (f)
			ir_remark(c, k->loc,
			          "kernel '@%s' uses %lld bytes of shared memory in %d buffer%s "
			          "(target '%s' allows %lld)",
			          k->item[0].s, (long long)total, bufs.len,
			          bufs.len == 1 ? "" : "s", f->name, (long long)f->smem_limit);
		else
			ir_remark(c, k->loc,
			          "kernel '@%s' uses %lld bytes of shared memory in %d buffer%s",
			          k->item[0].s, (long long)total, bufs.len,
			          bufs.len == 1 ? "" : "s");
	}
	ir_vec_free(c->al, &bufs, sizeof(LowerSmemBuf));
	return ok;
}

/* Whether the kernels that name a target fit its shared memory (what `ave check` asks): the
 * same plan, neither recorded nor remarked. */
static bool
fits_block(IrModule *m, IrBlock *blk)
{
	IrCtx *c = m->ctx;
	bool ok = true;
	for (IrOp *op = blk->first; op; op = op->next) {
		if (op->code == IR_OP_MODULE) {
			ok &= fits_block(m, op->reg[0].block);
			continue;
		}
		const TargetInfo *f = op->code == IR_OP_KERNEL ? pass_kernel_target(c, op, NULL) : NULL;
		if (!f)
			continue;
		IrVec bufs = {0};
		bool kok = lower_smem_collect(c, op, f, &bufs);
		LowerSmemBuf *b = bufs.data;
		int64_t total = lower_smem_assign(b, bufs.len);
		ok &= kok && lower_smem_check(c, op, f, b, bufs.len, total);
		ir_vec_free(c->al, &bufs, sizeof(LowerSmemBuf));
	}
	return ok;
}

bool
pass_smem_fits(IrModule *m)
{
	return fits_block(m, m->body);
}

static bool
plan_block(IrModule *m, IrBlock *blk, const IrPassOpts *o)
{
	bool ok = true;
	for (IrOp *op = blk->first; op; op = op->next) {
		if (op->code == IR_OP_KERNEL)
			ok &= plan_kernel(m, op, o);
		else if (op->code == IR_OP_MODULE)
			ok &= plan_block(m, op->reg[0].block, o);
	}
	return ok;
}

bool
pass_smem_alloc(IrModule *m, const IrPassOpts *o)
{
	return plan_block(m, m->body, o);
}
