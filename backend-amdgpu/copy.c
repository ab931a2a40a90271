/* copy.c — ave.copy.async on AMDGPU: the issuing waves of the group (role issue(n), else all)
 * deal the tile's chunks round-robin to their lanes, each a buffer load (16 bytes where the
 * layout and, checked at run time, the tensor allow; else one element; out-of-range chunks read
 * zeros) and an LDS store in the destination's layout, swizzle included. LLVM places the
 * s_waitcnt between them. Then every issuing wave completes the bytes it wrote on the barrier
 * (docs/amdgpu.md), so no wave waits for another. */
#include <string.h>

#include <llvm-c/Core.h>

#include "amdgpu.h"

int64_t
amdgpu_wave_bytes(int64_t nchunks, int64_t chunk_bytes, int nwaves, int w)
{
	int64_t threads = (int64_t)nwaves * AMDGPU_WAVE;
	int64_t rest = nchunks % threads - (int64_t)w * AMDGPU_WAVE;
	if (rest < 0)
		rest = 0;
	if (rest > AMDGPU_WAVE)
		rest = AMDGPU_WAVE;
	return (nchunks / threads * AMDGPU_WAVE + rest) * chunk_bytes;
}

typedef struct Chunks {
	int ce;
	LLVMValueRef rsrc;
} Chunks;

/* One chunk: a buffer load (out-of-range chunks read zeros) and an LDS store. */
static bool
chunk(Lower *L, const LowerCopy *cp, void *arg, LLVMValueRef *co, LLVMValueRef off, LLVMValueRef inb)
{
	LLVMBuilderRef b = L->b;
	const Chunks *k = arg;
	int es = lower_elem_bytes(cp->src->type->elem);
	LLVMTypeRef mt = lower_mem_type(L, cp->src->type->elem);
	LLVMTypeRef vt = k->ce > 1 ? LLVMVectorType(mt, (unsigned)k->ce) : mt;
	off = LLVMBuildSelect(b, inb, LLVMBuildTrunc(b, off, L->i32, ""), lower_i32(L, AMDGPU_OOB), "");
	LLVMValueRef v = amdgpu_buffer_load(L, k->rsrc, off, vt);
	if (!v)
		return lower_error(L, cp->op->loc, "internal error: no buffer load of %d bytes on target '%s'",
				   k->ce * es, L->t->info->name);
	LLVMValueRef st = LLVMBuildStore(b, v, lower_smem_ptr(L, lower_smem_elem(L, &cp->dst, co)));
	LLVMSetAlignment(st, (unsigned)(k->ce * es));
	return true;
}

/* The chunks of one path, `ce` elements along the destination's contiguous dimension each, dealt
 * to the lanes of the issuing waves; then each wave completes its bytes. */
static bool
chunks(Lower *L, const LowerCopy *cp, int ce, int nwaves, LLVMValueRef rsrc)
{
	LLVMBuilderRef b = L->b;
	const LowerSmem *d = &cp->dst;
	int es = lower_elem_bytes(cp->src->type->elem);
	int64_t numel = 1;
	for (int i = 0; i < d->rank; i++)
		numel *= d->shape[i];
	int64_t nchunks = numel / ce, threads = (int64_t)nwaves * AMDGPU_WAVE;
	Chunks k = {ce, rsrc};
	if (!lower_copy_chunks(L, cp, ce, L->scope.tid, threads, chunk, &k))
		return false;
	/* The wave's bytes, then one lane completes them: nchunks % threads is static, the wave
	 * index uniform. */
	int64_t full = nchunks / threads * AMDGPU_WAVE, rest = nchunks % threads;
	LLVMValueRef w = LLVMBuildMul(b, L->scope.warp, lower_i32(L, AMDGPU_WAVE), "");
	LLVMValueRef r = LLVMBuildSub(b, lower_i32(L, (int)rest), w, "");
	r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, r, lower_i32(L, 0), ""), lower_i32(L, 0), r, "");
	r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, r, lower_i32(L, AMDGPU_WAVE), ""), lower_i32(L, AMDGPU_WAVE),
			    r, "");
	LLVMValueRef bytes = LLVMBuildMul(b, LLVMBuildAdd(b, r, lower_i32(L, (int)full), ""), lower_i32(L, ce * es),
					  "wave.bytes");
	LLVMValueRef lane0 = LLVMBuildICmp(b, LLVMIntEQ, L->scope.lane, lower_i32(L, 0), "");
	LLVMValueRef some = LLVMBuildICmp(b, LLVMIntNE, bytes, lower_i32(L, 0), "");
	LLVMValueRef go = LLVMBuildAnd(b, lane0, some, "");
	amdgpu_fence(L, cp->op, LOWER_FENCE_ASYNC_SHARED);
	amdgpu_wave_sync(L); /* lane 0 completes the bytes of the whole wave */
	LLVMBasicBlockRef m = lower_if_begin(L, go, "copy.tx");
	amdgpu_mbar_complete_tx(L, cp->op, cp->bar, bytes);
	lower_if_end(L, m);
	return true;
}

/* copy.async: the issuing waves move the tile (16-byte chunks when the tensor allows at run time,
 * else elements) and complete their bytes on the barrier; the other waves skip. */
bool
amdgpu_copy_async(Lower *L, const LowerCopy *cp)
{
	LLVMBuilderRef b = L->b;
	LowerTensor *t = cp->src;
	const LowerSmemLayout *y = cp->dst.layout;
	int es = lower_elem_bytes(t->type->elem), f = y->order[0], ce = 16 / (es <= 16 ? es : 16);
	int nwaves = L->scope.issue_warps < L->scope.nwarps ? L->scope.issue_warps : L->scope.nwarps;
	if (cp->dst.rank != t->rank)
		return lower_unsupported(L, cp->op, "from a rank-%d tensor into a rank-%d tile", t->rank, cp->dst.rank);
	/* 16-byte chunks when the tile's rows allow them (aligned in LDS); whether the tensor does
	 * (base, strides, origin, size) is checked at run time. */
	bool vec_ok = es <= 8 && t->cstride[f] == 1 && cp->dst.shape[f] % ce == 0 && y->panel_elems % ce == 0 &&
		      y->row_bytes % 16 == 0 && y->panel_bytes % 16 == 0 && (!cp->dst.org[f] || cp->dst.org_div[f] % ce == 0);
	for (int d = 0; d < t->rank; d++)
		if (d != f && t->cstride[d] != IR_DYN && (t->cstride[d] * es) % 16)
			vec_ok = false;
	LLVMValueRef rsrc = amdgpu_rsrc(L, t);
	LLVMValueRef lead = LLVMBuildICmp(b, LLVMIntULT, L->scope.warp, lower_i32(L, nwaves), "");
	LLVMBasicBlockRef merge = lower_if_begin(L, lead, "copy.waves");
	if (vec_ok) {
		LLVMValueRef ok = lower_copy_vec_cond(L, cp, ce);
		LLVMBasicBlockRef vb = lower_block(L, "copy.vec"), sb = lower_block(L, "copy.elem");
		LLVMBasicBlockRef jb = lower_block(L, "copy.done");
		LLVMBuildCondBr(b, ok, vb, sb);
		LLVMPositionBuilderAtEnd(b, vb);
		if (!chunks(L, cp, ce, nwaves, rsrc))
			return false;
		LLVMBuildBr(b, jb);
		LLVMPositionBuilderAtEnd(b, sb);
		if (!chunks(L, cp, 1, nwaves, rsrc))
			return false;
		LLVMBuildBr(b, jb);
		LLVMPositionBuilderAtEnd(b, jb);
	} else if (!chunks(L, cp, 1, nwaves, rsrc)) {
		return false;
	}
	lower_if_end(L, merge);
	return true;
}
