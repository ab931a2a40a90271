/* mma.c — ave.mma on CDNA matrix cores: v_mfma 32x32 and 16x16 for bf16, f16 and f32 operands
 * (the intrinsics LLVM 19 accepts on both gfx90a and gfx942; bf16 operands are <4 x i16>). The
 * accumulator is the instruction's D fragment tiled over the waves; operands come from LDS (the
 * shared layer stages register operands there) with one 8-byte read per lane where K is
 * contiguous. LLVM keeps accumulators in AGPRs where its budget allows. MFMA completes in order,
 * so ave.mma.async is an ordinary product and its wait has nothing to do. */
#include <string.h>

#include <llvm-c/Core.h>

#include "amdgpu.h"

static const AmdMfmaInfo mfma[AMD_MFMA_COUNT] = {
	[AMD_MFMA_32X32X8_BF16] = {"llvm.amdgcn.mfma.f32.32x32x8bf16.1k", 32, 32, 8, 4, IR_BF16},
	[AMD_MFMA_16X16X16_BF16] = {"llvm.amdgcn.mfma.f32.16x16x16bf16.1k", 16, 16, 16, 4, IR_BF16},
	[AMD_MFMA_32X32X8_F16] = {"llvm.amdgcn.mfma.f32.32x32x8f16", 32, 32, 8, 4, IR_F16},
	[AMD_MFMA_16X16X16_F16] = {"llvm.amdgcn.mfma.f32.16x16x16f16", 16, 16, 16, 4, IR_F16},
	[AMD_MFMA_32X32X2_F32] = {"llvm.amdgcn.mfma.f32.32x32x2f32", 32, 32, 2, 1, IR_F32},
	[AMD_MFMA_16X16X4_F32] = {"llvm.amdgcn.mfma.f32.16x16x4f32", 16, 16, 4, 1, IR_F32},
};

const AmdMfmaInfo *
amdgpu_mfma_info(AmdMfma i)
{
	return &mfma[i];
}

/* ---- fragments ----
 * From the AMD matrix instruction calculator (identical for CDNA2 and CDNA3), with l the lane:
 *   D[m x n], m = n = 32: lane l, register r holds row 8 (r / 4) + 4 (l / 32) + r % 4, col l % 32;
 *             m = n = 16: row 4 (l / 16) + r, col l % 16.
 *   A[m x k]: lane l, element e holds A[l % m][e + E (l / m)] (E = elements per lane, 4 or 1).
 *   B[k x n]: lane l, element e holds B[e + E (l / n)][l % n].
 * The accumulator of an ave.mma is D transposed (atom C): the backend computes C^T = B^T A^T,
 * passing B's fragment where the instruction reads A and A's where it reads B (both read the
 * same lanes and elements). Then a lane's registers run along C's columns, so stores are
 * 16-byte vectors, and C's layout is, register for register, the A-operand layout of a
 * following product (attention's P.V): no trip through LDS. */

static void
add(LowerAtom *a, int kind, int32_t r, int32_t c)
{
	int i = a->nbits[kind]++;
	a->basis[kind][i][0] = r;
	a->basis[kind][i][1] = c;
}

LowerAtom
amdgpu_atom_d(AmdMfma i)
{
	const AmdMfmaInfo *f = &mfma[i];
	LowerAtom a;
	memset(&a, 0, sizeof a);
	a.rows = f->m;
	a.cols = f->n;
	add(&a, LOWER_REG, 1, 0);
	add(&a, LOWER_REG, 2, 0);
	for (int c = 1; c < f->n; c *= 2)
		add(&a, LOWER_LANE, 0, c);
	if (f->m == 32) {
		add(&a, LOWER_LANE, 4, 0);
		add(&a, LOWER_REG, 8, 0);
		add(&a, LOWER_REG, 16, 0);
	} else {
		add(&a, LOWER_LANE, 4, 0);
		add(&a, LOWER_LANE, 8, 0);
	}
	return a;
}

LowerAtom
amdgpu_atom_c(AmdMfma i)
{
	LowerAtom d = amdgpu_atom_d(i), c = d;
	c.rows = d.cols;
	c.cols = d.rows;
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int b = 0; b < d.nbits[k]; b++) {
			c.basis[k][b][0] = d.basis[k][b][1];
			c.basis[k][b][1] = d.basis[k][b][0];
		}
	return c;
}

/* The A fragment (m x k) or B fragment (k x n): `outer` is m or n. */
static LowerAtom
operand_atom(AmdMfma i, bool b)
{
	const AmdMfmaInfo *f = &mfma[i];
	LowerAtom a;
	memset(&a, 0, sizeof a);
	int o = b ? 1 : 0, k = b ? 0 : 1; /* the outer (m or n) and k dimensions */
	int outer = b ? f->n : f->m;
	int32_t v[2];
	a.rows = b ? f->k : f->m;
	a.cols = b ? f->n : f->k;
	for (int e = 1; e < f->ab_elems; e *= 2) {
		v[o] = 0;
		v[k] = e;
		add(&a, LOWER_REG, v[0], v[1]);
	}
	for (int c = 1; c < outer; c *= 2) {
		v[o] = c;
		v[k] = 0;
		add(&a, LOWER_LANE, v[0], v[1]);
	}
	for (int c = f->ab_elems; a.nbits[LOWER_LANE] < 6; c *= 2) {
		v[o] = 0;
		v[k] = c;
		add(&a, LOWER_LANE, v[0], v[1]);
	}
	return a;
}

LowerAtom
amdgpu_atom_a(AmdMfma i)
{
	return operand_atom(i, false);
}

LowerAtom
amdgpu_atom_b(AmdMfma i)
{
	return operand_atom(i, true);
}

/* ---- planning ---- */

static int
ilog2(int64_t v)
{
	int k = 0;
	while (((int64_t)1 << (k + 1)) <= v)
		k++;
	return k;
}

/* Whether a register operand comes from another product (through elementwise ops): its layout
 * is then an accumulator's, which lines up with the A operand when the warps split rows. */
static bool
from_mma(IrCtx *c, IrValue *v, int depth)
{
	if (!v || v->kind != IR_VAL_RESULT || depth > 16)
		return false;
	IrOp *op = v->op;
	if (op->code == IR_OP_MMA || op->code == IR_OP_MMA_WAIT)
		return true;
	if (!ir_op_has_trait(c, op, IR_TRAIT_ELEMWISE) && op->code != IR_OP_TAG)
		return false;
	for (int i = 0; i < op->nitem; i++)
		if (op->item[i].kind == IR_IT_VALUE && ir_type_is_reg_tile(ir_item_value(op, &op->item[i])->type) &&
		    from_mma(c, ir_item_value(op, &op->item[i]), depth + 1))
			return true;
	return false;
}

/* The warp bits along rows for an instruction, and how many warps it keeps busy. With `rows`
 * the warps go to rows first (chained products). */
static int
split(const LowerMmaReq *r, const AmdMfmaInfo *f, bool rows, int *wm)
{
	int mb = ilog2(r->m / f->m), nb = ilog2(r->n / f->n), wb = r->warp_bits, best = 1 << 30;
	*wm = 0;
	for (int x = 0; x <= wb && x <= mb; x++) {
		int y = wb - x < nb ? wb - x : nb;
		int lm = ilog2(r->m) - x, ln = ilog2(r->n) - y;
		int idle = x + y < wb ? 64 * (wb - x - y) : 0;
		int cost = idle + (rows ? 2 * (mb - x) : (lm > ln ? lm - ln : ln - lm));
		if (cost < best) {
			best = cost;
			*wm = x;
		}
	}
	int y = wb - *wm < nb ? wb - *wm : nb;
	return *wm + y;
}

/* The A-operand layout (m x k) matching an accumulator: the atom's bits, the accumulator's warp
 * bits along rows (replicated where they split columns), registers over the rest, k first. */
static bool
operand_layout(LowerLayout *l, int64_t m, int64_t k, const LowerAtom *a, const LowerLayout *acc)
{
	memset(l, 0, sizeof *l);
	if (m % a->rows || k % a->cols)
		return false;
	l->kind = LOWER_MMA_A;
	l->rank = 2;
	l->shape[0] = m;
	l->shape[1] = k;
	for (int kind = 0; kind < LOWER_BIT_KINDS; kind++)
		for (int i = 0; i < a->nbits[kind]; i++) {
			int j = l->nbits[kind]++;
			l->basis[kind][j][0] = a->basis[kind][i][0];
			l->basis[kind][j][1] = a->basis[kind][i][1];
		}
	int64_t used = 0;
	for (int i = 0; i < acc->nbits[LOWER_WARP]; i++) {
		int j = l->nbits[LOWER_WARP]++;
		l->basis[LOWER_WARP][j][0] = acc->basis[LOWER_WARP][i][0];
		l->basis[LOWER_WARP][j][1] = 0;
		used |= acc->basis[LOWER_WARP][i][0];
	}
	for (int64_t s = a->cols; s < k; s *= 2) {
		if (l->nbits[LOWER_REG] >= LOWER_MAX_BITS)
			return false;
		int j = l->nbits[LOWER_REG]++;
		l->basis[LOWER_REG][j][0] = 0;
		l->basis[LOWER_REG][j][1] = (int32_t)s;
	}
	for (int64_t s = a->rows; s < m; s *= 2)
		if (!(used & s)) {
			if (l->nbits[LOWER_REG] >= LOWER_MAX_BITS)
				return false;
			int j = l->nbits[LOWER_REG]++;
			l->basis[LOWER_REG][j][0] = (int32_t)s;
			l->basis[LOWER_REG][j][1] = 0;
		}
	return lower_layout_nregs(l) <= LOWER_MAX_REGS;
}

/* B's staging buffer. With transpose_b the value is n x k with K contiguous: staged as it is (a
 * row-major tile, 16-byte stores). Without it, for 2-byte operands, the value is k x n and a lane
 * reads E = 4 elements along K, so it is staged K contiguous however the value is stored: panels
 * of E elements (8 bytes, one fragment's), n rows of them per panel, panels along K, 128-byte
 * swizzle (the generic XOR of the 16-byte chunk with address bits 7..9). Each fragment is then one
 * ds_read_b64, and 16 consecutive lanes (consecutive n) read 128 consecutive bytes, permuted: no
 * bank conflict. The stores (one element each from the blocked load, consecutive lanes 8 apart
 * along n) land in 8 different 16-byte chunks of 16 lanes. A row-major k x n tile instead needs E
 * ds_read_u16 per fragment; K contiguous rows of the whole K would put the stores of a wave in
 * one bank (rows 128 bytes apart, swizzled by n % 8, which they share). f32 reads one element per
 * lane: row-major. */
void
amdgpu_b_stage(LowerSmemLayout *s, int64_t k, int64_t n, int es, int nelem, bool trans_b)
{
	if (trans_b || nelem == 1 || k % nelem) {
		lower_stage_layout(s, trans_b ? n : k, trans_b ? k : n, es, true);
		return;
	}
	memset(s, 0, sizeof *s);
	s->rank = 2;
	s->shape[0] = k;
	s->shape[1] = n;
	s->order[0] = 0; /* K fastest */
	s->order[1] = 1;
	s->esize = es;
	s->panel_elems = nelem;
	s->row_bytes = nelem * es;
	s->panel_bytes = n * s->row_bytes;
	s->bytes = (k / nelem) * s->panel_bytes;
	for (int z = 128; z >= 32 && !s->swizzle; z /= 2)
		if (s->panel_bytes % z == 0)
			s->swizzle = z;
	s->align = s->swizzle ? 8 * s->swizzle : 128;
	if (s->align < 128)
		s->align = 128;
}

bool
amdgpu_frag_vec(const LowerSmemLayout *y, int sdim, int nelem)
{
	return nelem > 1 && y->order[0] == sdim && y->panel_elems % nelem == 0 &&
	       y->row_bytes % (nelem * y->esize) == 0;
}

bool
amdgpu_mma_plan(Lower *L, const LowerMmaReq *r, LowerMmaPlan *p)
{
	IrCtx *c = L->c;
	memset(p, 0, sizeof *p);
	if (r->acc != c->t_f32 || r->ab->kind != IR_TY_FLOAT)
		return false; /* FMAs */
	AmdMfma big, small;
	switch (r->ab->fk) {
	case IR_BF16:
		big = AMD_MFMA_32X32X8_BF16;
		small = AMD_MFMA_16X16X16_BF16;
		break;
	case IR_F16:
		big = AMD_MFMA_32X32X8_F16;
		small = AMD_MFMA_16X16X16_F16;
		break;
	case IR_F32:
		big = AMD_MFMA_32X32X2_F32;
		small = AMD_MFMA_16X16X4_F32;
		break;
	default:
		return false; /* f8 (gfx942's MFMA takes the FNUZ formats, not OCP's), f64: FMAs */
	}
	/* r->op is NULL when layout assignment asks for the layouts of a product (#ave.reg). */
	IrValue *av = r->op ? ir_item_value(r->op, &r->op->item[0]) : NULL;
	bool rows = r->chain || (av && ir_type_is_reg_tile(av->type) && from_mma(c, av, 0));
	AmdMfma cand[2] = {big, small};
	int pick = -1, used = -1, wm = 0;
	for (int i = 0; i < 2; i++) {
		const AmdMfmaInfo *f = &mfma[cand[i]];
		if (r->m % f->m || r->n % f->n || r->k % f->k)
			continue;
		int w, u = split(r, f, rows, &w);
		if (u > used) {
			used = u;
			pick = i;
			wm = w;
		}
	}
	if (pick < 0)
		return false;
	AmdMfma ins = cand[pick];
	const AmdMfmaInfo *f = &mfma[ins];
	LowerAtom ca = amdgpu_atom_c(ins), aa = amdgpu_atom_a(ins);
	int64_t shape[2] = {r->m, r->n};
	if (!lower_layout_tiled(&p->acc, LOWER_MMA_ACC, shape, &ca, 6, r->warp_bits, wm))
		return false;
	p->impl = (int)ins;
	p->inst_m = f->m;
	p->inst_n = f->n;
	p->inst_k = f->k;
	/* A from registers where they already hold its fragments (a product's result); B, and A
	 * otherwise, from LDS: the shared layer stages register operands there. */
	p->a_reg = operand_layout(&p->a, r->m, r->k, &aa, &p->acc);
	p->b_reg = false;
	int es = lower_elem_bytes(r->ab);
	lower_stage_layout(&p->a_stage, r->m, r->k, es, true);
	amdgpu_b_stage(&p->b_stage, r->k, r->n, es, f->ab_elems, r->trans_b);
	return true;
}

/* ---- emission ---- */

/* The origin (i32 row, col) of the accumulator block at register q: the wave's part plus the
 * register's. */
static void
block_origin(Lower *L, const LowerLayout *l, int q, LLVMValueRef *o)
{
	LLVMBuilderRef b = L->b;
	int64_t rc[2];
	lower_layout_coord(l, (uint32_t)q, 0, 0, rc);
	int nw = 1 << L->scope.warp_bits;
	LLVMValueRef w = LLVMBuildAnd(b, L->scope.warp, lower_i32(L, nw - 1), "");
	for (int d = 0; d < 2; d++) {
		LLVMValueRef v = lower_i32(L, rc[d]);
		for (int i = 0; i < l->nbits[LOWER_WARP]; i++) {
			int32_t s = l->basis[LOWER_WARP][i][d];
			if (!s)
				continue;
			LLVMValueRef bit = LLVMBuildAnd(b, LLVMBuildLShr(b, w, lower_i32(L, i), ""), lower_i32(L, 1), "");
			v = LLVMBuildAdd(b, v, LLVMBuildMul(b, bit, lower_i32(L, s), ""), "");
		}
		o[d] = v;
	}
}

/* A layout of one wave holding an atom (for the lane part of its coordinates). */
static LowerLayout
atom_layout(const LowerAtom *a)
{
	LowerLayout l;
	memset(&l, 0, sizeof l);
	l.kind = LOWER_OTHER;
	l.rank = 2;
	l.shape[0] = a->rows;
	l.shape[1] = a->cols;
	for (int k = 0; k < LOWER_BIT_KINDS; k++) {
		l.nbits[k] = k == LOWER_WARP ? 0 : a->nbits[k];
		for (int i = 0; i < l.nbits[k]; i++) {
			l.basis[k][i][0] = a->basis[k][i][0];
			l.basis[k][i][1] = a->basis[k][i][1];
		}
	}
	return l;
}

/* Reads one operand fragment from LDS: the lane's elements of the atom at (r0, c0) in (row, col)
 * coordinates of the operand (A: m x k, B: k x n); `trans` when the view stores it transposed
 * (B as n x k). One vector load where the elements are contiguous, else one load each. */
static LLVMValueRef
read_frag(Lower *L, const LowerSmem *s, const LowerLayout *al, LLVMValueRef *tc, LLVMValueRef r0, LLVMValueRef c0,
	  bool trans, int kdim, IrType *elem, int nelem)
{
	LLVMBuilderRef b = L->b;
	const LowerSmemLayout *y = s->layout;
	LLVMTypeRef mt = elem->fk == IR_BF16 ? L->i16 : lower_type(L, elem);
	int es = lower_elem_bytes(elem);
	LLVMValueRef base[2] = {LLVMBuildAdd(b, r0, tc[0], ""), LLVMBuildAdd(b, c0, tc[1], "")};
	int sdim = trans ? 1 - kdim : kdim; /* the view dimension K runs along */
	bool vec = amdgpu_frag_vec(y, sdim, nelem) && (!s->org[sdim] || s->org_div[sdim] % nelem == 0);
	LLVMValueRef coord[2];
	if (vec) {
		coord[0] = trans ? base[1] : base[0];
		coord[1] = trans ? base[0] : base[1];
		LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)nelem);
		LLVMValueRef v = LLVMBuildLoad2(b, vt, lower_smem_ptr(L, lower_smem_elem(L, s, coord)), "frag");
		LLVMSetAlignment(v, (unsigned)(nelem * es));
		return v;
	}
	LLVMValueRef v = nelem > 1 ? LLVMGetUndef(LLVMVectorType(mt, (unsigned)nelem)) : NULL;
	for (int e = 0; e < nelem; e++) {
		int64_t rc[2];
		lower_layout_coord(al, (uint32_t)e, 0, 0, rc);
		LLVMValueRef x[2] = {LLVMBuildAdd(b, base[0], lower_i32(L, rc[0]), ""),
				     LLVMBuildAdd(b, base[1], lower_i32(L, rc[1]), "")};
		coord[0] = trans ? x[1] : x[0];
		coord[1] = trans ? x[0] : x[1];
		LLVMValueRef ld = LLVMBuildLoad2(b, mt, lower_smem_ptr(L, lower_smem_elem(L, s, coord)), "");
		LLVMSetAlignment(ld, (unsigned)es);
		if (nelem == 1)
			return ld;
		v = LLVMBuildInsertElement(b, v, ld, lower_i32(L, e), "");
	}
	return v;
}

/* The A fragment of the block at rows rel_m.., k.. from registers in the plan's A layout: the
 * atom's elements are its lowest register bits. */
static LLVMValueRef
reg_frag(Lower *L, const LowerLayout *l, LLVMValueRef *v, int64_t rel_m, int64_t k, const AmdMfmaInfo *f)
{
	int base = -1;
	for (int q = 0; q < lower_layout_nregs(l) && base < 0; q++) {
		int64_t x[2];
		lower_layout_coord(l, (uint32_t)q, 0, 0, x);
		if (x[0] == rel_m && x[1] == k)
			base = q;
	}
	if (base < 0 || base % f->ab_elems)
		return NULL;
	if (f->ab_elems == 1)
		return v[base];
	LLVMTypeRef et = LLVMTypeOf(v[base]);
	LLVMValueRef x = LLVMGetUndef(LLVMVectorType(et, (unsigned)f->ab_elems));
	for (int e = 0; e < f->ab_elems; e++)
		x = LLVMBuildInsertElement(L->b, x, v[base + e], lower_i32(L, e), "");
	return x;
}

bool
amdgpu_mma_emit(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
		const LowerOperand *bop, LowerFrag *acc)
{
	LLVMBuilderRef b = L->b;
	AmdMfma ins = (AmdMfma)p->impl;
	const AmdMfmaInfo *f = &mfma[ins];
	if (bop->reg)
		return lower_error(L, r->op->loc, "internal error: MFMA reads B from LDS on target '%s'", L->t->info->name);
	LowerAtom aa = amdgpu_atom_a(ins), ba = amdgpu_atom_b(ins), da = amdgpu_atom_c(ins);
	LowerLayout al = atom_layout(&aa), bl = atom_layout(&ba);
	LLVMValueRef atc[2], btc[2];
	lower_frag_thread(L, &al, atc);
	lower_frag_thread(L, &bl, btc);
	int per = 1 << da.nbits[LOWER_REG], nregs = lower_layout_nregs(&p->acc), nblk = nregs / per;
	LLVMTypeRef dt = LLVMVectorType(L->f32, (unsigned)per);
	LLVMValueRef *blk = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)nblk);
	LLVMValueRef (*org)[2] = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef[2]) * (size_t)nblk);
	int64_t (*rel)[2] = ir_arena_alloc(&L->arena, sizeof(int64_t[2]) * (size_t)nblk);
	for (int q = 0; q < nblk; q++) {
		block_origin(L, &p->acc, q * per, org[q]);
		lower_layout_coord(&p->acc, (uint32_t)(q * per), 0, 0, rel[q]);
		LLVMValueRef v = LLVMGetUndef(dt);
		for (int i = 0; i < per; i++)
			v = LLVMBuildInsertElement(b, v, acc->v[q * per + i], lower_i32(L, i), "");
		blk[q] = v;
	}
	/* Fragments read once per k step and reused by every block of the same rows (columns). */
	LLVMValueRef *afr = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)nblk);
	LLVMValueRef *bfr = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)nblk);
	LLVMTypeRef opt = f->ab == IR_BF16 ? LLVMVectorType(L->i16, 4) : f->ab == IR_F16 ? LLVMVectorType(L->f16, 4)
										: L->f32;
	IrType *elem = r->ab;
	for (int64_t kk = 0; kk < r->k; kk += f->k) {
		LLVMValueRef k0 = lower_i32(L, kk);
		for (int q = 0; q < nblk; q++) {
			afr[q] = bfr[q] = NULL;
			for (int j = 0; j < q && !afr[q]; j++)
				if (rel[j][0] == rel[q][0])
					afr[q] = afr[j];
			for (int j = 0; j < q && !bfr[q]; j++)
				if (rel[j][1] == rel[q][1])
					bfr[q] = bfr[j];
			if (!afr[q] && a->reg && !(afr[q] = reg_frag(L, a->f.layout, a->f.v, rel[q][0], kk, f)))
				return lower_error(L, r->op->loc, "internal error: no A register for (%lld, %lld)",
						   (long long)rel[q][0], (long long)kk);
			if (!afr[q])
				afr[q] = read_frag(L, &a->s, &al, atc, org[q][0], k0, false, 1, elem, f->ab_elems);
			if (!bfr[q])
				bfr[q] = read_frag(L, &bop->s, &bl, btc, k0, org[q][1], r->trans_b, 0, elem, f->ab_elems);
			LLVMValueRef x = afr[q], y = bfr[q];
			if (LLVMTypeOf(x) != opt)
				x = LLVMBuildBitCast(b, x, opt, "");
			if (LLVMTypeOf(y) != opt)
				y = LLVMBuildBitCast(b, y, opt, "");
			/* C^T += B^T A^T: B's fragment in the instruction's A slot. */
			LLVMValueRef args[6] = {y, x, blk[q], lower_i32(L, 0), lower_i32(L, 0), lower_i32(L, 0)};
			blk[q] = lower_call(L, f->intrinsic, dt, args, 6);
		}
	}
	for (int q = 0; q < nblk; q++)
		for (int i = 0; i < per; i++)
			acc->v[q * per + i] = LLVMBuildExtractElement(b, blk[q], lower_i32(L, i), "");
	return true;
}
