/* copy.c — ave.copy.async on NVIDIA. sm_90a: TMA (cp.async.bulk.tensor) issued by one elected
 * thread, completing its bytes on the mbarrier; the tensor map is a __grid_constant__ kernel
 * parameter that the runtime encodes at launch from the metadata (cuTensorMapEncodeTiled
 * arguments, with the kernel parameters its sizes and strides come from). Copies TMA cannot do
 * (and every copy on sm_80) are cp.async 16-byte chunks from the group's first warp, zero-filled
 * out of bounds; on sm_80 each lane's completion is an arrival counted into the barrier at init,
 * on sm_90a the warp completes the transaction bytes itself. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "nvptx.h"

int
nvptx_tma_dtype(const IrType *t, const char **name)
{
	static const char *const names[] = {"uint8", "uint16",  "uint32",  "int32",   "uint64",
	                                    "int64", "float16", "float32", "float64", "bfloat16"};
	int d = -1;
	if (t->kind == IR_TY_FLOAT) {
		switch (t->fk) {
		case IR_F16:
			d = 6;
			break;
		case IR_F32:
			d = 7;
			break;
		case IR_F64:
			d = 8;
			break;
		case IR_BF16:
			d = 9;
			break;
		default:
			d = 0; /* f8: moved as bytes */
			break;
		}
	} else if (t->kind == IR_TY_INDEX) {
		d = 5;
	} else if (t->kind == IR_TY_INT) {
		d = t->bits <= 8 ? 0 : t->bits == 16 ? 1 : t->bits == 32 ? 3 : 5;
	}
	if (name)
		*name = d >= 0 ? names[d] : "";
	return d;
}

/* The kernel parameter holding a tensor's base, `?` size or `?` stride, or -1. */
static int
param_of(Lower *L, int arg, IrStr sym, LowerParamKind k, int dim)
{
	LowerParam *ps = L->info.params.data;
	for (int i = 0; i < L->info.params.len; i++) {
		LowerParam *p = &ps[i];
		if (p->kind != k || (k != LOWER_P_SYMM && p->arg != arg) ||
		    (k == LOWER_P_SYMM && p->name != sym))
			continue;
		if ((k == LOWER_P_SIZE || k == LOWER_P_STRIDE) && p->dim != dim)
			continue;
		return i;
	}
	return -1;
}

typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;

static void bprintf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
bprintf(Buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = b->cap * 2 + (size_t)k + 64;
		b->s = realloc(b->s, b->cap);
		if (!b->n)
			b->s[0] = 0;
	}
}

/* A factor of a size or stride: a constant or a parameter. */
static void
size_json(Lower *L, Buf *b, IrType *t, int arg, int d)
{
	if (t->dims[d] != IR_DYN)
		bprintf(b, "{\"value\": %lld}", (long long)t->dims[d]);
	else
		bprintf(b, "{\"param\": %d}", param_of(L, arg, NULL, LOWER_P_SIZE, d));
}

/* stride_bytes = times x the product of the factors. */
static void
stride_json(Lower *L, Buf *b, IrType *t, int arg, int d, int es)
{
	bprintf(b, "{\"times\": %d, \"factors\": [", es);
	if (t->strides) {
		if (t->strides[d] != IR_DYN)
			bprintf(b, "{\"value\": %lld}", (long long)t->strides[d]);
		else
			bprintf(b, "{\"param\": %d}", param_of(L, arg, NULL, LOWER_P_STRIDE, d));
	} else {
		for (int e = d + 1; e < t->rank; e++) {
			if (e > d + 1)
				bprintf(b, ", ");
			size_json(L, b, t, arg, e);
		}
	}
	bprintf(b, "]}");
}

static char *
map_json(Lower *L, const NvMap *m, IrType *t, int es)
{
	Buf b = {0};
	const char *dn;
	int dt = nvptx_tma_dtype(t->elem, &dn);
	int swz = m->swizzle == 128 ? 3 : m->swizzle == 64 ? 2 : m->swizzle == 32 ? 1 : 0;
	int base = m->src_arg >= 0 ? param_of(L, m->src_arg, NULL, LOWER_P_PTR, 0)
	                           : param_of(L, -1, m->src_name, LOWER_P_SYMM, 0);
	bprintf(
	    &b,
	    "{\"kind\": \"cuda_tensor_map\", \"encode\": \"cuTensorMapEncodeTiled\", "
	    "\"base_param\": %d, "
	    "\"dtype\": %d, \"dtype_name\": \"%s\", \"elem_bytes\": %d, \"rank\": %d, \"dims\": [",
	    base, dt, dn, es, m->rank);
	for (int i = 0; i < m->rank; i++) {
		int d = m->dims[i];
		bprintf(&b, "%s{\"tensor_dim\": %d, \"size\": ", i ? ", " : "", d);
		if (m->src_arg >= 0)
			size_json(L, &b, t, m->src_arg, d);
		else
			bprintf(&b, "{\"value\": %lld}", (long long)t->dims[d]);
		bprintf(&b, ", \"stride_bytes\": ");
		if (m->src_arg >= 0) {
			stride_json(L, &b, t, m->src_arg, d, es);
		} else {
			int64_t s = 1;
			for (int e = d + 1; e < t->rank && !t->strides; e++)
				s *= t->dims[e];
			if (t->strides)
				s = t->strides[d];
			bprintf(&b, "{\"times\": %d, \"factors\": [{\"value\": %lld}]}", es,
			        (long long)s);
		}
		bprintf(&b, "}");
	}
	bprintf(&b, "], \"box\": [");
	for (int i = 0; i < m->rank; i++)
		bprintf(&b, "%s%lld", i ? ", " : "", (long long)m->box[i]);
	bprintf(&b, "], \"element_strides\": [");
	for (int i = 0; i < m->rank; i++)
		bprintf(&b, "%s1", i ? ", " : "");
	bprintf(
	    &b,
	    "], \"interleave\": 0, \"swizzle\": %d, \"swizzle_bytes\": %d, \"l2_promotion\": 2, "
	    "\"oob_fill\": 0, \"loads_per_copy\": %d}",
	    swz, m->swizzle, m->panels);
	char *s = ir_ctx_strdup(L->c, b.s);
	free(b.s);
	return s;
}

/* The TMA map a copy can use, or false: the destination is a whole tile or ring slot laid out in
 * the tensor's dimension order with its contiguous dimension innermost, boxes within limits. */
static bool
tma_shape(Lower *L, IrOp *op, NvMap *m, IrType **tensor)
{
	IrCtx *c = L->c;
	IrItem *src = &op->item[0], *dst = &ir_op_group(op, c->kw.into)->item[0];
	IrType *t;
	memset(m, 0, sizeof *m);
	if (src->kind == IR_IT_SYMBOL) {
		IrOp *s = ir_symbol_lookup(c, op, src->s);
		if (!s || s->code != IR_OP_SYMM_ALLOC)
			return false;
		t = s->type[0];
		m->src_arg = -1;
		m->src_name = src->s;
	} else {
		IrValue *v = ir_item_value(op, src);
		if (v->kind != IR_VAL_ARG || ir_block_parent_op(v->block) != L->kernel)
			return false;
		t = v->type;
		m->src_arg = v->index;
		m->src_name = v->name;
	}
	IrValue *dv = ir_item_value(op, dst);
	if (dv->kind != IR_VAL_RESULT || dv->op->code != IR_OP_SMEM_ALLOC)
		return false;
	IrType *tile = dv->type->kind == IR_TY_RING ? dv->type->elem : dv->type;
	LowerSmemLayout y;
	if (!lower_smem_layout(c, tile, &y) || y.pad || t->rank > 5 || t->rank != tile->rank)
		return false;
	int fast = t->rank - 1;
	if (t->strides) {
		fast = -1;
		for (int d = 0; d < t->rank; d++)
			if (t->strides[d] == 1)
				fast = d;
	}
	if (fast < 0 || y.order[0] != fast || nvptx_tma_dtype(t->elem, NULL) < 0)
		return false;
	m->rank = t->rank;
	for (int i = 0; i < t->rank; i++) {
		m->dims[i] = y.order[i];
		m->box[i] = i ? tile->dims[y.order[i]] : y.panel_elems;
		if (m->box[i] > 256)
			return false;
	}
	if ((m->box[0] * y.esize) % 16)
		return false;
	m->swizzle = y.swizzle;
	m->panels = (int)(tile->dims[fast] / y.panel_elems);
	*tensor = t;
	return true;
}

typedef struct CopyScan {
	Lower *L;
	NvState *s;
	bool ok;
} CopyScan;

static bool
scan_copy(IrOp *op, void *ud)
{
	CopyScan *k = ud;
	Lower *L = k->L;
	if (op->code != IR_OP_COPY_ASYNC)
		return true;
	NvMap m;
	IrType *t;
	if (!k->s->sm90 || !tma_shape(L, op, &m, &t))
		return true;
	for (int i = 0; i < k->s->nmaps; i++) {
		NvMap *x = &k->s->maps[i];
		if (x->src_arg == m.src_arg && x->src_name == m.src_name && x->rank == m.rank &&
		    !memcmp(x->dims, m.dims, sizeof m.dims) &&
		    !memcmp(x->box, m.box, sizeof m.box) && x->swizzle == m.swizzle) {
			k->s->copy_map[op->id] = i;
			return true;
		}
	}
	if (k->s->nmaps == 32)
		return true; /* more maps than we pass: the rest use cp.async */
	LowerParam p = {0};
	p.kind = LOWER_P_TARGET;
	p.arg = m.src_arg;
	p.name = ir_intern_cstr(
	    L->c, ir_ctx_printf(L->c, "%s.tmap%d", m.src_name ? m.src_name : "t", k->s->nmaps));
	p.type = t;
	p.llty = L->pgeneric;
	p.bytes = 128;
	p.align = 64;
	m.param = L->info.params.len;
	p.json = map_json(L, &m, t, lower_elem_bytes(t->elem));
	lower_add_param(L, &p);
	k->s->maps[k->s->nmaps] = m;
	k->s->copy_map[op->id] = k->s->nmaps++;
	return true;
}

bool
nvptx_plan_copies(Lower *L)
{
	NvState *s = nv_state(L);
	s->copy_map = ir_arena_alloc(&L->arena, sizeof(int) * (L->nops + 1));
	for (uint32_t i = 0; i <= L->nops; i++)
		s->copy_map[i] = -1;
	CopyScan k = {L, s, true};
	ir_walk_op(L->kernel, scan_copy, &k);
	return k.ok;
}

/* ---- TMA ---- */

static bool
tma_copy(Lower *L, const LowerCopy *cp, const NvMap *m)
{
	LLVMBuilderRef b = L->b;
	LLVMBasicBlockRef merge = lower_elect_begin(L, cp->op, true);
	LLVMValueRef tmap = LLVMBuildPtrToInt(b, lower_param(L, m->param), L->i64, "tmap");
	LLVMValueRef bar = lower_smem_addr32(L, cp->bar);
	const LowerSmemLayout *y = cp->dst.layout;
	for (int p = 0; p < m->panels; p++) {
		char text[256], cons[64];
		int n = snprintf(text, sizeof text,
		                 "cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::"
		                 "complete_tx::bytes [$0], [$1, {",
		                 m->rank);
		for (int i = 0; i < m->rank; i++)
			n += snprintf(text + n, sizeof text - (size_t)n, "%s$%d", i ? ", " : "",
			              2 + i);
		snprintf(text + n, sizeof text - (size_t)n, "}], [$%d];", 2 + m->rank);
		n = snprintf(cons, sizeof cons, "r,l");
		for (int i = 0; i < m->rank; i++)
			n += snprintf(cons + n, sizeof cons - (size_t)n, ",r");
		snprintf(cons + n, sizeof cons - (size_t)n, ",r,~{memory}");
		LLVMValueRef args[8];
		args[0] = lower_smem_addr32(
		    L, LLVMBuildAdd(b, cp->dst.base, lower_i32(L, p * y->panel_bytes), ""));
		args[1] = tmap;
		for (int i = 0; i < m->rank; i++) {
			LLVMValueRef x = LLVMBuildTrunc(b, cp->coord[m->dims[i]], L->i32, "");
			if (i == 0 && p)
				x = LLVMBuildAdd(b, x, lower_i32(L, p * y->panel_elems), "");
			args[2 + i] = x;
		}
		args[2 + m->rank] = bar;
		lower_asm(L, L->voidt, text, cons, args, 3 + m->rank);
	}
	lower_elect_end(L, merge);
	return true;
}

/* ---- cp.async from the group's first warp ---- */

/* One chunk: cp.async of 16 bytes (zero-filled out of range), or one element through a load and
 * a shared store. */
static bool
chunk(Lower *L, const LowerCopy *cp, void *arg, LLVMValueRef *co, LLVMValueRef off,
      LLVMValueRef inb)
{
	LLVMBuilderRef b = L->b;
	bool vec = *(const bool *)arg;
	LowerTensor *t = cp->src;
	LLVMTypeRef mt = lower_mem_type(L, t->type->elem);
	off = LLVMBuildSelect(b, inb, off, lower_i64(L, 0), "");
	LLVMValueRef src = LLVMBuildGEP2(b, L->i8, t->base, &off, 1, "");
	LLVMValueRef dst = lower_smem_elem(L, &cp->dst, co);
	if (vec) {
		LLVMValueRef a[3] = {lower_smem_addr32(L, dst), src,
		                     LLVMBuildSelect(b, inb, lower_i32(L, 16), lower_i32(L, 0), "")};
		lower_asm(L, L->voidt, "cp.async.cg.shared.global [$0], [$1], 16, $2;",
		          "r,l,r,~{memory}", a, 3);
		return true;
	}
	LLVMValueRef v = L->t->load_global(L, t, src, off, mt, lower_elem_bytes(t->type->elem), inb,
	                                   LLVMConstNull(mt));
	if (!v)
		return false;
	LLVMBuildStore(b, v, lower_smem_ptr(L, dst));
	return true;
}

/* Lane l of the first warp moves chunks l, l + 32, ... */
static bool
chunk_copy(Lower *L, const LowerCopy *cp, int ce, bool vec)
{
	return lower_copy_chunks(L, cp, ce, L->scope.lane, 32, chunk, &vec);
}

bool
nvptx_copy_async(Lower *L, const LowerCopy *cp)
{
	NvState *s = nv_state(L);
	int m = s->copy_map[cp->op->id];
	if (m >= 0)
		return tma_copy(L, cp, &s->maps[m]);
	LLVMBuilderRef b = L->b;
	LowerTensor *t = cp->src;
	const LowerSmemLayout *y = cp->dst.layout;
	int es = lower_elem_bytes(t->type->elem), f = y->order[0], ce = 16 / es;
	/* 16-byte chunks when the tile's rows allow them; whether the tensor does is checked at run
	 * time (base, strides, origin, size). */
	bool vec_ok = es <= 16 && t->cstride[f] == 1 && cp->dst.shape[f] % ce == 0 &&
	              y->panel_elems % ce == 0 && (!cp->dst.org[f] || cp->dst.org_div[f] % ce == 0);
	LLVMValueRef lead = LLVMBuildICmp(b, LLVMIntEQ, L->scope.warp, lower_i32(L, 0), "");
	LLVMBasicBlockRef merge = lower_if_begin(L, lead, "copy.warp");
	LLVMValueRef bar = lower_smem_addr32(L, cp->bar);
	if (vec_ok) {
		LLVMValueRef ok = lower_copy_vec_cond(L, cp, ce);
		for (int d = 0; d < t->rank; d++)
			if (d != f && t->cstride[d] != IR_DYN && (t->cstride[d] * es) % 16)
				ok = LLVMConstInt(L->i1, 0, 0);
		LLVMBasicBlockRef vb = lower_block(L, "cp.vec"), sb = lower_block(L, "cp.elem"),
		                  jb = lower_block(L, "cp.done");
		LLVMBuildCondBr(b, ok, vb, sb);
		LLVMPositionBuilderAtEnd(b, vb);
		if (!chunk_copy(L, cp, ce, true))
			return false;
		if (s->sm90)
			lower_asm(L, L->voidt, "cp.async.wait_all;", "~{memory}", NULL, 0);
		else
			lower_asm(L, L->voidt, "cp.async.mbarrier.arrive.noinc.shared.b64 [$0];",
			          "r,~{memory}", &bar, 1);
		LLVMBuildBr(b, jb);
		LLVMPositionBuilderAtEnd(b, sb);
		if (!chunk_copy(L, cp, 1, false))
			return false;
		if (!s->sm90) {
			LLVMValueRef p = lower_smem_ptr(L, cp->bar);
			lower_call(L, "llvm.nvvm.mbarrier.arrive.shared", L->i64, &p, 1);
		}
		LLVMBuildBr(b, jb);
		LLVMPositionBuilderAtEnd(b, jb);
	} else {
		if (!chunk_copy(L, cp, 1, false))
			return false;
		if (!s->sm90) {
			LLVMValueRef p = lower_smem_ptr(L, cp->bar);
			lower_call(L, "llvm.nvvm.mbarrier.arrive.shared", L->i64, &p, 1);
		}
	}
	if (s->sm90) {
		/* The warp's writes, then the bytes: generic writes fenced for async readers
		 * (wgmma), then one lane completes the transaction the expect_tx announced. */
		lower_asm(L, L->voidt, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
		lower_call(L, "llvm.nvvm.bar.warp.sync", L->voidt,
		           (LLVMValueRef[]){lower_i32(L, -1)}, 1);
		LLVMValueRef l0 = LLVMBuildICmp(b, LLVMIntEQ, L->scope.lane, lower_i32(L, 0), "");
		LLVMBasicBlockRef m2 = lower_if_begin(L, l0, "copy.tx");
		lower_asm(L, L->voidt, "fence.acq_rel.cta;", "~{memory}", NULL, 0);
		LLVMValueRef a[2] = {bar, lower_i32(L, (int)cp->bytes)};
		lower_asm(L, L->voidt, "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [$0], $1;",
		          "r,r,~{memory}", a, 2);
		lower_if_end(L, m2);
	}
	lower_if_end(L, merge);
	return true;
}
