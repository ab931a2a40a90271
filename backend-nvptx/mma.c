/* mma.c — ave.mma on NVIDIA tensor cores. sm_90a with whole warpgroups: wgmma m64nNk16 (A from
 * registers or a swizzled shared-memory descriptor, B from a descriptor; K-major or MN-major,
 * 32/64/128-byte swizzles), fenced, committed and waited (ave.mma.async leaves the group in
 * flight until ave.mma.wait). Otherwise mma.sync m16n8k16 with fragments from registers or
 * ldmatrix. Fragment layouts follow the PTX ISA figures; docs/layouts.md derives them. */
#include <string.h>

#include <llvm-c/Core.h>

#include "nvptx.h"

enum { IMPL_MMA_SYNC, IMPL_WGMMA };

/* ---- atoms ---- */

static void
atom_lanes(LowerAtom *a)
{
	/* g = lane >> 2 walks rows, t = lane & 3 walks column pairs (PTX
	 * "groupID"/"threadID_in_group"). */
	static const int32_t l[5][2] = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
	a->nbits[LOWER_LANE] = 5;
	memcpy(a->basis[LOWER_LANE], l, sizeof l);
}

LowerAtom
nvptx_atom_mma_c(void)
{
	LowerAtom a = {16, 8, {2, 0, 0}, {{{0, 1}, {8, 0}}}};
	atom_lanes(&a);
	return a;
}

LowerAtom
nvptx_atom_mma_a(void)
{
	LowerAtom a = {16, 16, {3, 0, 0}, {{{0, 1}, {8, 0}, {0, 8}}}};
	atom_lanes(&a);
	return a;
}

LowerAtom
nvptx_atom_mma_b(void)
{
	/* K x N: b_i at k = 2t + (i & 1) + 8 (i >> 1), n = g. */
	LowerAtom a = {
	    16, 8, {2, 5, 0}, {{{1, 0}, {8, 0}}, {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}}};
	return a;
}

LowerAtom
nvptx_atom_wgmma_a(void)
{
	LowerAtom a = nvptx_atom_mma_a();
	a.rows = 64;
	a.nbits[LOWER_WARP] = 2;
	a.basis[LOWER_WARP][0][0] = 16;
	a.basis[LOWER_WARP][1][0] = 32;
	return a;
}

LowerAtom
nvptx_atom_wgmma_d(int n)
{
	/* d[i] at row 16 w + g + 8 ((i >> 1) & 1), col 8 (i >> 2) + 2 t + (i & 1). */
	LowerAtom a = nvptx_atom_mma_c();
	a.rows = 64;
	a.cols = n;
	for (int c = 8; c < n; c *= 2) {
		int k = a.nbits[LOWER_REG]++;
		a.basis[LOWER_REG][k][0] = 0;
		a.basis[LOWER_REG][k][1] = c;
	}
	a.nbits[LOWER_WARP] = 2;
	a.basis[LOWER_WARP][0][0] = 16;
	a.basis[LOWER_WARP][1][0] = 32;
	return a;
}

/* ---- planning ---- */

static void
push(LowerLayout *l, int k, int32_t r, int32_t c)
{
	int i = l->nbits[k]++;
	memset(l->basis[k][i], 0, sizeof l->basis[k][i]);
	l->basis[k][i][0] = r;
	l->basis[k][i][1] = c;
}

/* An operand layout of shape rows x cols tiled from an atom, its free warp bits following the
 * accumulator's: `wdim[i]` is the operand dimension warp bit i walks (0 rows, 1 cols) with the
 * accumulator's step, or -1 (the operand is replicated there). */
static bool
operand_layout(LowerLayout *l, LowerLayoutKind kind, int64_t rows, int64_t cols, const LowerAtom *a,
               int warp_bits, const int *wdim, const int32_t *wstep)
{
	memset(l, 0, sizeof *l);
	if (rows % a->rows || cols % a->cols)
		return false;
	l->kind = kind;
	l->rank = 2;
	l->shape[0] = rows;
	l->shape[1] = cols;
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = 0; i < a->nbits[k]; i++)
			push(l, k, a->basis[k][i][0], a->basis[k][i][1]);
	int64_t used[2] = {0, 0};
	for (int i = a->nbits[LOWER_WARP]; i < warp_bits; i++) {
		int d = wdim[i];
		if (d < 0) {
			push(l, LOWER_WARP, 0, 0);
			continue;
		}
		push(l, LOWER_WARP, d == 0 ? wstep[i] : 0, d == 1 ? wstep[i] : 0);
		used[d] |= wstep[i];
	}
	int64_t lim[2] = {rows, cols}, from[2] = {a->rows, a->cols};
	for (int d = 1; d >= 0; d--)
		for (int64_t s = from[d]; s < lim[d]; s *= 2)
			if (!(used[d] & s)) {
				if (l->nbits[LOWER_REG] >= LOWER_MAX_BITS)
					return false;
				push(l, LOWER_REG, d == 0 ? (int32_t)s : 0,
				     d == 1 ? (int32_t)s : 0);
			}
	return true;
}

/* The accumulator's free warp bits: which dimension each walks and by how much. */
static void
warp_dims(const LowerLayout *acc, int first, int *mdim, int32_t *mstep, int *ndim, int32_t *nstep)
{
	for (int i = first; i < acc->nbits[LOWER_WARP]; i++) {
		const int32_t *b = acc->basis[LOWER_WARP][i];
		mdim[i] = b[0] ? 0 : -1; /* for A (rows = M) */
		mstep[i] = b[0];
		ndim[i] = b[1] ? 1 : -1; /* for B in (k, n) coordinates */
		nstep[i] = b[1];
	}
}

/* wgmma reads a shared-memory operand whose rows of 16-byte chunks are swizzled, K- or
 * MN-major. */
static bool
wgmma_smem_ok(const LowerSmemLayout *s)
{
	return s->rank == 2 && s->swizzle >= 32 && !s->pad;
}

static int
ilog2(int64_t v)
{
	int k = 0;
	while (((int64_t)1 << (k + 1)) <= v)
		k++;
	return k;
}

bool
nvptx_mma_plan(Lower *L, const LowerMmaReq *r, LowerMmaPlan *p)
{
	IrCtx *c = L->c;
	memset(p, 0, sizeof *p);
	bool half = r->ab == c->t_bf16 || r->ab == c->t_f16;
	if (!half || r->acc != c->t_f32)
		return false; /* FMAs */
	int es = 2;
	int64_t kb = r->trans_b ? r->n : r->k, nb = r->trans_b ? r->k : r->n; /* B's rows, cols */
	bool wg = nvptx_is_sm90(L) && r->nwarps % 4 == 0 && r->warp_bits >= 2 &&
	          r->first_warp % 4 == 0 && r->m % 64 == 0 && r->k % 16 == 0 && r->n % 8 == 0 &&
	          (r->trans_b || r->n >= 16);
	int64_t acc_shape[2] = {r->m, r->n};
	if (wg) {
		int wgb = r->warp_bits - 2, m64 = ilog2(r->m / 64), n8 = ilog2(r->n / 8);
		int wm = wgb < m64 ? wgb : m64, wn = wgb - wm < n8 ? wgb - wm : n8;
		int64_t nwg = r->n >> wn, natom = nwg < 256 ? nwg : 256;
		if (!r->trans_b && natom * es < 32)
			wg = false;
		LowerAtom d = nvptx_atom_wgmma_d((int)natom);
		if (wg &&
		    !lower_layout_tiled(&p->acc, LOWER_MMA_ACC, acc_shape, &d, 5, r->warp_bits, wm))
			wg = false;
		if (wg) {
			p->impl = IMPL_WGMMA;
			p->inst_m = 64;
			p->inst_n = (int)natom;
			p->inst_k = 16;
			p->async_proxy = true;
			int md[LOWER_MAX_BITS], nd[LOWER_MAX_BITS];
			int32_t ms[LOWER_MAX_BITS], ns[LOWER_MAX_BITS];
			warp_dims(&p->acc, 2, md, ms, nd, ns);
			LowerAtom aa = nvptx_atom_wgmma_a();
			p->a_reg = operand_layout(&p->a, LOWER_MMA_A, r->m, r->k, &aa, r->warp_bits,
			                          md, ms);
			lower_stage_layout(&p->a_stage, r->m, r->k, es, true);
			lower_stage_layout(&p->b_stage, kb, nb, es, true);
			p->a_restage = r->a_smem && !wgmma_smem_ok(r->a_smem);
			p->b_restage = r->b_smem && !wgmma_smem_ok(r->b_smem);
			return true;
		}
	}
	if (r->m % 16 || r->n % 8 || r->k % 16)
		return false;
	int m16 = ilog2(r->m / 16), n8 = ilog2(r->n / 8), wb = r->warp_bits, wm, wn;
	if (r->chain) {
		wm = wb < m16 ? wb : m16;
	} else {
		/* Square-ish warp tiles, using every warp the shape allows. */
		wm = 0;
		int best = 1 << 30;
		for (int x = 0; x <= wb && x <= m16; x++) {
			int y = wb - x < n8 ? wb - x : n8;
			int lm = ilog2(r->m) - x, ln = ilog2(r->n) - y;
			int cost = (x + y < wb ? 64 : 0) + (lm > ln ? lm - ln : ln - lm);
			if (cost < best) {
				best = cost;
				wm = x;
			}
		}
	}
	wn = wb - wm < n8 ? wb - wm : n8;
	(void)wn;
	LowerAtom cat = nvptx_atom_mma_c();
	if (!lower_layout_tiled(&p->acc, LOWER_MMA_ACC, acc_shape, &cat, 5, wb, wm))
		return false;
	p->impl = IMPL_MMA_SYNC;
	p->inst_m = 16;
	p->inst_n = 8;
	p->inst_k = 16;
	int md[LOWER_MAX_BITS], nd[LOWER_MAX_BITS];
	int32_t ms[LOWER_MAX_BITS], ns[LOWER_MAX_BITS];
	warp_dims(&p->acc, 0, md, ms, nd, ns);
	LowerAtom aa = nvptx_atom_mma_a(), ba = nvptx_atom_mma_b();
	p->a_reg = operand_layout(&p->a, LOWER_MMA_A, r->m, r->k, &aa, wb, md, ms);
	LowerLayout bl;
	p->b_reg = operand_layout(&bl, LOWER_MMA_B, r->k, r->n, &ba, wb, nd, ns);
	if (r->trans_b)
		lower_layout_transpose(&bl, &p->b);
	else
		p->b = bl;
	p->b.kind = LOWER_MMA_B;
	lower_stage_layout(&p->a_stage, r->m, r->k, es, true);
	lower_stage_layout(&p->b_stage, kb, nb, es, true);
	return true;
}

/* ---- shared helpers for emission ---- */

/* The coordinates (i32) of the accumulator element register `reg` holds, less this thread's
 * lane part: the warp's (or warpgroup's, from warp bit `first`) origin plus the register's. */
static void
block_origin(Lower *L, const LowerLayout *l, int reg, int first_warp_bit, LLVMValueRef *o)
{
	LLVMBuilderRef b = L->b;
	int64_t rc[2];
	lower_layout_coord(l, (uint32_t)reg, 0, 0, rc);
	int p = 1 << L->scope.warp_bits;
	LLVMValueRef w = LLVMBuildAnd(b, L->scope.warp, lower_i32(L, p - 1), "");
	for (int d = 0; d < 2; d++) {
		LLVMValueRef v = lower_i32(L, rc[d]);
		for (int i = first_warp_bit; i < l->nbits[LOWER_WARP]; i++) {
			int32_t s = l->basis[LOWER_WARP][i][d];
			if (!s)
				continue;
			LLVMValueRef bit = LLVMBuildAnd(b, LLVMBuildLShr(b, w, lower_i32(L, i), ""),
			                                lower_i32(L, 1), "");
			v = LLVMBuildAdd(b, v, LLVMBuildMul(b, bit, lower_i32(L, s), ""), "");
		}
		o[d] = v;
	}
}

/* The register of an operand layout whose register coordinates are (r, c), or -1. */
static int
reg_at(const LowerLayout *l, int64_t r, int64_t c)
{
	for (int q = 0; q < lower_layout_nregs(l); q++) {
		int64_t x[2];
		lower_layout_coord(l, (uint32_t)q, 0, 0, x);
		if (x[0] == r && x[1] == c)
			return q;
	}
	return -1;
}

static LLVMValueRef
pack2(Lower *L, LLVMValueRef lo, LLVMValueRef hi)
{
	LLVMBuilderRef b = L->b;
	LLVMTypeRef ht = LLVMTypeOf(lo);
	LLVMValueRef v = LLVMGetUndef(LLVMVectorType(ht, 2));
	v = LLVMBuildInsertElement(b, v, lo, lower_i32(L, 0), "");
	v = LLVMBuildInsertElement(b, v, hi, lower_i32(L, 1), "");
	return LLVMBuildBitCast(b, v, L->i32, "");
}

/* Buffer coordinates of view element (r, c) (the view's origin added). */
static void
view_coord(Lower *L, const LowerSmem *s, LLVMValueRef r, LLVMValueRef c, LLVMValueRef *out)
{
	out[0] = s->org[0] ? LLVMBuildAdd(L->b, r, s->org[0], "") : r;
	out[1] = s->org[1] ? LLVMBuildAdd(L->b, c, s->org[1], "") : c;
}

/* The unswizzled byte offset of buffer element (r, c): what a wgmma descriptor's start address
 * or an ldmatrix row address names (the swizzle applies in hardware / is added here). */
static LLVMValueRef
raw_offset(Lower *L, const LowerSmem *s, LLVMValueRef *bc, bool swizzled)
{
	LowerSmem t = *s;
	for (int d = 0; d < 2; d++)
		t.org[d] = NULL;
	LowerSmemLayout y = *s->layout;
	if (!swizzled)
		y.swizzle = 0;
	t.layout = &y;
	return lower_smem_elem(L, &t, bc);
}

/* ---- wgmma ---- */

static LLVMValueRef
descriptor(Lower *L, const LowerSmem *s, LLVMValueRef r, LLVMValueRef c, bool mn_major)
{
	LLVMBuilderRef b = L->b;
	const LowerSmemLayout *y = s->layout;
	LLVMValueRef bc[2];
	view_coord(L, s, r, c, bc);
	LLVMValueRef a = lower_smem_addr32(L, raw_offset(L, s, bc, false));
	LLVMValueRef lo =
	    LLVMBuildLShr(b, LLVMBuildAnd(b, a, lower_i32(L, 0x3FFFF), ""), lower_i32(L, 4), "");
	uint64_t lbo =
	    mn_major ? (uint64_t)(y->panel_bytes ? y->panel_bytes : y->row_bytes * 8) >> 4 : 1;
	uint64_t sbo = (uint64_t)(8 * y->row_bytes) >> 4;
	uint64_t mode = y->swizzle == 128 ? 1 : y->swizzle == 64 ? 2 : 3;
	uint64_t hi = (lbo & 0x3FFF) << 16 | (sbo & 0x3FFF) << 32 | mode << 62;
	return LLVMBuildOr(b, LLVMBuildZExt(b, lo, L->i64, ""), LLVMConstInt(L->i64, hi, 0),
	                   "desc");
}

static const char *
ab_name(Lower *L, IrType *t)
{
	return t == L->c->t_bf16 ? "bf16" : "f16";
}

/* A constant zero (either sign: D = A.B + 0 and D = A.B agree). */
static bool
is_zero(LLVMValueRef v)
{
	LLVMBool lost;
	return LLVMIsAConstantFP(v) && LLVMConstRealGetDouble(v, &lost) == 0.0;
}

/* wgmma.fence.sync.aligned, after the definitions of the n registers *v[i]: each is an in-out
 * operand ("+r"/"+f"), so LLVM cannot move its definition below the fence, and *v[i] becomes the
 * fence's output. Beyond 128 operands the first ones pass through empty asm statements before
 * the fence (side effects keep their order). */
static void
fence(Lower *L, LLVMValueRef **v, int n)
{
	int c0 = 0;
	do {
		int m = n - c0 < 128 ? n - c0 : 128;
		bool last = c0 + m == n;
		char cons[1024];
		LLVMTypeRef ft[128];
		LLVMValueRef in[128];
		int cp = 0;
		for (int i = 0; i < m; i++) {
			in[i] = *v[c0 + i];
			ft[i] = LLVMTypeOf(in[i]);
			cp += snprintf(cons + cp, sizeof cons - (size_t)cp, "=%c,",
			               ft[i] == L->f32 ? 'f' : 'r');
		}
		for (int i = 0; i < m; i++)
			cp += snprintf(cons + cp, sizeof cons - (size_t)cp, "%d,", i);
		snprintf(cons + cp, sizeof cons - (size_t)cp, "~{memory}");
		LLVMTypeRef st = m ? LLVMStructTypeInContext(L->ctx, ft, (unsigned)m, 0) : L->voidt;
		LLVMValueRef r =
		    lower_asm(L, st, last ? "wgmma.fence.sync.aligned;" : "", cons, in, m);
		for (int i = 0; i < m; i++)
			*v[c0 + i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
		c0 += m;
	} while (c0 < n);
}

static bool
emit_wgmma(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
           const LowerOperand *bop, LowerFrag *acc)
{
	LLVMBuilderRef b = L->b;
	int n = p->inst_n, R = n / 2;
	int nregs = lower_layout_nregs(&p->acc);
	/* Which dimensions of the shared-memory operands are contiguous. */
	bool a_mn = !a->reg && a->s.layout->order[0] == 0; /* A stored M-major */
	int bfast = bop->s.layout->order[0];
	bool b_kmajor = r->trans_b ? bfast == 1 : bfast == 0; /* B's K contiguous */
	int tb = b_kmajor ? 0 : 1, ta = a_mn ? 1 : 0;
	for (int d = 0; d < 2; d++) {
		if (!a->reg && a->s.org[d] && a->s.org_div[d] % 8)
			return lower_unsupported(
			    L, r->op,
			    "reading A from a slice offset by %lld (not a multiple of 8 rows) "
			    "with wgmma",
			    (long long)a->s.org_div[d]);
		if (bop->s.org[d] && bop->s.org_div[d] % 8)
			return lower_unsupported(
			    L, r->op,
			    "reading B from a slice offset by %lld (not a multiple of 8 rows) "
			    "with wgmma",
			    (long long)bop->s.org_div[d]);
	}
	char text[4096], cons[2048];
	int ops = a->reg ? 4 : 1;
	int tp = snprintf(text, sizeof text,
	                  "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n"
	                  "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {",
	                  R + ops + 1, n, ab_name(L, r->ab), ab_name(L, r->ab));
	for (int i = 0; i < R; i++)
		tp += snprintf(text + tp, sizeof text - (size_t)tp, i ? ", $%d" : "$%d", i);
	if (a->reg)
		tp += snprintf(text + tp, sizeof text - (size_t)tp,
		               "}, {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d;\n}", R, R + 1, R + 2,
		               R + 3, R + 4, tb);
	else
		tp += snprintf(text + tp, sizeof text - (size_t)tp,
		               "}, $%d, $%d, p, 1, 1, %d, %d;\n}", R, R + 1, ta, tb);
	int cp = 0;
	for (int i = 0; i < R; i++)
		cp += snprintf(cons + cp, sizeof cons - (size_t)cp, "=f,");
	cp += snprintf(cons + cp, sizeof cons - (size_t)cp, a->reg ? "r,r,r,r,l,r" : "l,l,r");
	for (int i = 0; i < R; i++)
		cp += snprintf(cons + cp, sizeof cons - (size_t)cp, ",%d", i);
	LLVMTypeRef *ft = ir_arena_alloc(&L->arena, sizeof(LLVMTypeRef) * (size_t)R);
	for (int i = 0; i < R; i++)
		ft[i] = L->f32;
	LLVMTypeRef st = LLVMStructTypeInContext(L->ctx, ft, (unsigned)R, 0);
	/* The registers the wgmmas read are written before the fence (PTX ISA: wgmma.fence orders
	 * register accesses before the wgmmas that read the accumulator or A from them): the A
	 * fragments are packed here, and they and the accumulators go through the fence. An
	 * accumulator block that is all zeros is not read: its first k step multiplies with scale-d
	 * 0. */
	int na_regs = a->reg ? lower_layout_nregs(a->f.layout) : 0;
	LLVMValueRef *apk = ir_arena_alloc(&L->arena, sizeof(LLVMValueRef) * (size_t)(na_regs + 1));
	LLVMValueRef **fenced =
	    ir_arena_alloc(&L->arena, sizeof(LLVMValueRef *) * (size_t)(nregs + na_regs + 1));
	bool *zero = ir_arena_alloc(&L->arena, (size_t)(nregs / R + 1));
	int nf = 0;
	for (int q = 0; q < nregs; q += R) {
		zero[q / R] = true;
		for (int i = 0; i < R; i++)
			zero[q / R] = zero[q / R] && is_zero(acc->v[q + i]);
		for (int i = 0; i < R && !zero[q / R]; i++)
			fenced[nf++] = &acc->v[q + i];
		int64_t rel[2];
		lower_layout_coord(&p->acc, (uint32_t)q, 0, 0, rel);
		for (int64_t kk = 0; kk < r->k && a->reg; kk += 16) {
			int base = reg_at(a->f.layout, rel[0], kk);
			if (base < 0)
				return lower_error(L, r->op->loc,
				                   "internal error: no A register for (%lld, %lld)",
				                   (long long)rel[0], (long long)kk);
			for (int j = base; j < base + 8; j += 2)
				if (!apk[j]) {
					apk[j] = pack2(L, a->f.v[j], a->f.v[j + 1]);
					fenced[nf++] = &apk[j];
				}
		}
	}
	fence(L, fenced, nf);
	LLVMValueRef args[300];
	for (int q = 0; q < nregs; q += R) {
		LLVMValueRef org[2];
		block_origin(L, &p->acc, q, 2, org);
		int64_t rel[2];
		lower_layout_coord(&p->acc, (uint32_t)q, 0, 0, rel);
		for (int64_t kk = 0; kk < r->k; kk += 16) {
			int na = 0;
			if (a->reg) {
				int base = reg_at(a->f.layout, rel[0], kk);
				for (int j = 0; j < 4; j++)
					args[na++] = apk[base + 2 * j];
			} else {
				args[na++] = descriptor(L, &a->s, org[0], lower_i32(L, kk), a_mn);
			}
			LLVMValueRef bd =
			    r->trans_b
			        ? descriptor(L, &bop->s, org[1], lower_i32(L, kk), !b_kmajor)
			        : descriptor(L, &bop->s, lower_i32(L, kk), org[1], !b_kmajor);
			args[na++] = bd;
			bool scale0 = zero[q / R] && kk == 0;
			args[na++] = lower_i32(L, scale0 ? 0 : 1);
			for (int i = 0; i < R; i++)
				args[na++] = scale0 ? LLVMGetUndef(L->f32) : acc->v[q + i];
			LLVMValueRef res = lower_asm(L, st, text, cons, args, na);
			for (int i = 0; i < R; i++)
				acc->v[q + i] = LLVMBuildExtractValue(b, res, (unsigned)i, "");
		}
	}
	lower_asm(L, L->voidt, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0);
	if (!r->async)
		return nvptx_mma_wait(L, r->op, acc, 0);
	return true;
}

/* wgmma.wait_group N leaves the N newest commit groups of the thread in flight, whichever
 * products they hold, while `ave.mma.wait %t pending(n)` (SPEC 5.5) needs %t's group finished and
 * allows n of the groups committed after it: N = min(n, groups committed after %t's). The groups
 * counted are those of the ops `commits` accepts between %t and the wait in program order, in the
 * wait's block and the blocks around it up to %t's: on a later trip through a loop that encloses
 * the wait but not %t, more groups came after %t, never fewer. An op with regions between them (a
 * loop that may run no iteration, a branch that may be skipped) counts none, and a pending tile
 * that is no op's result counts none: the count is a lower bound on every path (0 always is). */
int64_t
nvptx_wait_groups(IrOp *wait, int64_t pending, bool (*commits)(void *u, IrOp *op), void *u)
{
	IrValue *t = ir_item_value(wait, &wait->item[0]);
	if (t->kind != IR_VAL_RESULT)
		return 0;
	int64_t after = 0;
	for (IrOp *at = wait;;) {
		IrOp *q = at->prev;
		for (; q && q != t->op; q = q->prev)
			if (commits(u, q)) /* the ops inside q's regions are not looked at */
				after++;
		if (q)
			break;
		at = at->parent->parent ? at->parent->parent->parent : NULL;
		if (!at)
			return 0; /* %t is not above the wait */
	}
	return after < pending ? after : pending;
}

/* The ops that commit a wgmma group: ave.mma and ave.mma.async planned as wgmma. */
static bool
commits_group(void *u, IrOp *op)
{
	Lower *L = u;
	return (op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC) && L->has_plan[op->id] &&
	       L->plans[op->id]->impl == IMPL_WGMMA;
}

bool
nvptx_mma_wait(Lower *L, IrOp *at, LowerFrag *acc, int64_t pending)
{
	/* Only wgmma products are in flight; mma.sync ones completed when issued. `at` is the wait
	 * (its operand the ave.mma.async) or the ave.mma itself. */
	IrOp *mma = at;
	if (at->code == IR_OP_MMA_WAIT) {
		IrValue *t = ir_item_value(at, &at->item[0]);
		mma = t->kind == IR_VAL_RESULT ? t->op : NULL;
	}
	if (!mma || !L->has_plan[mma->id] || L->plans[mma->id]->impl != IMPL_WGMMA)
		return true;
	if (at->code == IR_OP_MMA_WAIT)
		pending = nvptx_wait_groups(at, pending, commits_group, L);
	int n = lower_layout_nregs(acc->layout);
	for (int q0 = 0; q0 < n; q0 += 128) {
		int m = n - q0 < 128 ? n - q0 : 128;
		char text[64], cons[1024];
		snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %lld;",
		         (long long)pending);
		int cp = 0;
		for (int i = 0; i < m; i++)
			cp += snprintf(cons + cp, sizeof cons - (size_t)cp, "=f,");
		for (int i = 0; i < m; i++)
			cp += snprintf(cons + cp, sizeof cons - (size_t)cp, "%d,", i);
		snprintf(cons + cp, sizeof cons - (size_t)cp, "~{memory}");
		LLVMTypeRef ft[128];
		for (int i = 0; i < m; i++)
			ft[i] = L->f32;
		LLVMTypeRef st = LLVMStructTypeInContext(L->ctx, ft, (unsigned)m, 0);
		LLVMValueRef r = lower_asm(L, st, text, cons, acc->v + q0, m);
		for (int i = 0; i < m; i++)
			acc->v[q0 + i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
	}
	return true;
}

/* ---- mma.sync ---- */

/* ldmatrix needs 16-byte rows (8 halves) contiguous along `dim` of the view, aligned. */
static bool
ldmatrix_ok(const LowerSmem *s, int dim)
{
	const LowerSmemLayout *y = s->layout;
	return y->order[0] == dim && y->panel_elems % 8 == 0 && y->row_bytes % 16 == 0 &&
	       (!s->org[dim] || s->org_div[dim] % 8 == 0);
}

static LLVMValueRef
lane_addr(Lower *L, const LowerSmem *s, LLVMValueRef r, LLVMValueRef c)
{
	LLVMValueRef bc[2];
	view_coord(L, s, r, c, bc);
	return lower_smem_ptr(L, raw_offset(L, s, bc, true));
}

/* Four or two b16x2 registers through ldmatrix; matrix j's row address comes from lanes 8j..8j+7.
 */
static void
ldmatrix(Lower *L, int x, bool trans, LLVMValueRef ptr, LLVMValueRef *out)
{
	char name[96];
	snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16.p3", x,
	         trans ? ".trans" : "");
	LLVMTypeRef el[4] = {L->i32, L->i32, L->i32, L->i32};
	LLVMTypeRef st = LLVMStructTypeInContext(L->ctx, el, (unsigned)x, 0);
	LLVMValueRef v = lower_call(L, name, st, &ptr, 1);
	for (int i = 0; i < x; i++)
		out[i] = LLVMBuildExtractValue(L->b, v, (unsigned)i, "");
}

static LLVMValueRef
load_half(Lower *L, const LowerSmem *s, IrType *t, LLVMValueRef r, LLVMValueRef c)
{
	LLVMValueRef bc[2] = {r, c};
	LLVMValueRef v = LLVMBuildLoad2(L->b, lower_type(L, t),
	                                lower_smem_ptr(L, lower_smem_elem(L, s, bc)), "");
	return v;
}

/* A's four registers for the 16x16 block at rows m0.., cols k0.. (view coordinates). */
static void
a_regs(Lower *L, const LowerSmem *s, IrType *t, LLVMValueRef m0, int64_t k0, LLVMValueRef *out)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef lane = L->scope.lane;
	if (ldmatrix_ok(s, 1) || ldmatrix_ok(s, 0)) {
		bool trans = !ldmatrix_ok(s, 1);
		LLVMValueRef j = LLVMBuildLShr(b, lane, lower_i32(L, 3), ""),
		             rr = LLVMBuildAnd(b, lane, lower_i32(L, 7), "");
		LLVMValueRef mb =
		    LLVMBuildMul(b, LLVMBuildAnd(b, j, lower_i32(L, 1), ""), lower_i32(L, 8), "");
		LLVMValueRef kb =
		    LLVMBuildMul(b, LLVMBuildLShr(b, j, lower_i32(L, 1), ""), lower_i32(L, 8), "");
		LLVMValueRef row, col;
		if (!trans) { /* row m0 + mb + rr, 8 contiguous k from k0 + kb */
			row = LLVMBuildAdd(b, m0, LLVMBuildAdd(b, mb, rr, ""), "");
			col = LLVMBuildAdd(b, lower_i32(L, k0), kb, "");
		} else { /* k row k0 + kb + rr, 8 contiguous m from m0 + mb */
			row = LLVMBuildAdd(b, m0, mb, "");
			col = LLVMBuildAdd(b, lower_i32(L, k0), LLVMBuildAdd(b, kb, rr, ""), "");
		}
		ldmatrix(L, 4, trans, lane_addr(L, s, row, col), out);
		return;
	}
	LLVMValueRef g = LLVMBuildLShr(b, lane, lower_i32(L, 2), ""),
	             tt = LLVMBuildAnd(b, lane, lower_i32(L, 3), "");
	for (int j = 0; j < 4; j++) {
		LLVMValueRef row =
		    LLVMBuildAdd(b, m0, LLVMBuildAdd(b, g, lower_i32(L, (j & 1) * 8), ""), "");
		LLVMValueRef col = LLVMBuildAdd(b, lower_i32(L, k0 + (j >> 1) * 8),
		                                LLVMBuildMul(b, tt, lower_i32(L, 2), ""), "");
		LLVMValueRef lo = load_half(L, s, t, row, col);
		LLVMValueRef hi = load_half(L, s, t, row, LLVMBuildAdd(b, col, lower_i32(L, 1), ""));
		out[j] = pack2(L, lo, hi);
	}
}

/* B's two registers for the k16 x n8 block at k0.., n0.. (B stored k x n, or n x k when trans). */
static void
b_regs(Lower *L, const LowerSmem *s, IrType *t, bool trans_b, int64_t k0, LLVMValueRef n0,
       LLVMValueRef *out)
{
	LLVMBuilderRef b = L->b;
	LLVMValueRef lane = L->scope.lane;
	int kdim = trans_b ? 1 : 0, ndim = trans_b ? 0 : 1;
	if (ldmatrix_ok(s, kdim) || ldmatrix_ok(s, ndim)) {
		bool kfast = ldmatrix_ok(s, kdim);
		LLVMValueRef j = LLVMBuildAnd(b, LLVMBuildLShr(b, lane, lower_i32(L, 3), ""),
		                              lower_i32(L, 1), "");
		LLVMValueRef rr = LLVMBuildAnd(b, lane, lower_i32(L, 7), "");
		LLVMValueRef kb = LLVMBuildMul(b, j, lower_i32(L, 8), "");
		LLVMValueRef k, n;
		if (kfast) { /* n row n0 + rr, 8 contiguous k: plain ldmatrix gives b */
			n = LLVMBuildAdd(b, n0, rr, "");
			k = LLVMBuildAdd(b, lower_i32(L, k0), kb, "");
		} else { /* k row, 8 contiguous n: .trans */
			n = n0;
			k = LLVMBuildAdd(b, lower_i32(L, k0), LLVMBuildAdd(b, kb, rr, ""), "");
		}
		LLVMValueRef p = trans_b ? lane_addr(L, s, n, k) : lane_addr(L, s, k, n);
		ldmatrix(L, 2, !kfast, p, out);
		return;
	}
	LLVMValueRef g = LLVMBuildLShr(b, lane, lower_i32(L, 2), ""),
	             tt = LLVMBuildAnd(b, lane, lower_i32(L, 3), "");
	LLVMValueRef n = LLVMBuildAdd(b, n0, g, "");
	for (int j = 0; j < 2; j++) {
		LLVMValueRef k = LLVMBuildAdd(b, lower_i32(L, k0 + 8 * j),
		                              LLVMBuildMul(b, tt, lower_i32(L, 2), ""), "");
		LLVMValueRef k1 = LLVMBuildAdd(b, k, lower_i32(L, 1), "");
		LLVMValueRef lo = trans_b ? load_half(L, s, t, n, k) : load_half(L, s, t, k, n);
		LLVMValueRef hi = trans_b ? load_half(L, s, t, n, k1) : load_half(L, s, t, k1, n);
		out[j] = pack2(L, lo, hi);
	}
}

static bool
emit_mma_sync(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
              const LowerOperand *bop, LowerFrag *acc)
{
	LLVMBuilderRef b = L->b;
	bool bf = r->ab == L->c->t_bf16;
	const char *name =
	    bf ? "llvm.nvvm.mma.m16n8k16.row.col.bf16" : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
	LLVMTypeRef f4[4] = {L->f32, L->f32, L->f32, L->f32};
	LLVMTypeRef rt = LLVMStructTypeInContext(L->ctx, f4, 4, 0);
	LLVMTypeRef h2 = LLVMVectorType(L->f16, 2);
	int nregs = lower_layout_nregs(&p->acc);
	/* The warp's blocks: m16 x n8 accumulators at register offsets q. */
	for (int64_t k0 = 0; k0 < r->k; k0 += 16) {
		for (int q = 0; q < nregs; q += 4) {
			LLVMValueRef org[2];
			block_origin(L, &p->acc, q, 0, org);
			int64_t rel[2];
			lower_layout_coord(&p->acc, (uint32_t)q, 0, 0, rel);
			LLVMValueRef av[4], bv[2];
			if (a->reg) {
				int base = reg_at(a->f.layout, rel[0], k0);
				if (base < 0)
					return lower_error(
					    L, r->op->loc,
					    "internal error: no A register for (%lld, %lld)",
					    (long long)rel[0], (long long)k0);
				for (int j = 0; j < 4; j++)
					av[j] = pack2(L, a->f.v[base + 2 * j],
					              a->f.v[base + 2 * j + 1]);
			} else {
				a_regs(L, &a->s, r->ab, org[0], k0, av);
			}
			if (bop->reg) {
				int64_t kr = k0, nc = rel[1];
				int base = r->trans_b ? reg_at(bop->f.layout, nc, kr)
				                      : reg_at(bop->f.layout, kr, nc);
				if (base < 0)
					return lower_error(L, r->op->loc,
					                   "internal error: no B register");
				for (int j = 0; j < 2; j++)
					bv[j] = pack2(L, bop->f.v[base + 2 * j],
					              bop->f.v[base + 2 * j + 1]);
			} else {
				b_regs(L, &bop->s, r->ab, r->trans_b, k0, org[1], bv);
			}
			LLVMValueRef args[10];
			for (int j = 0; j < 4; j++)
				args[j] = bf ? av[j] : LLVMBuildBitCast(b, av[j], h2, "");
			for (int j = 0; j < 2; j++)
				args[4 + j] = bf ? bv[j] : LLVMBuildBitCast(b, bv[j], h2, "");
			for (int j = 0; j < 4; j++)
				args[6 + j] = acc->v[q + j];
			LLVMValueRef res = lower_call(L, name, rt, args, 10);
			for (int j = 0; j < 4; j++)
				acc->v[q + j] = LLVMBuildExtractValue(b, res, (unsigned)j, "");
		}
	}
	return true;
}

bool
nvptx_mma_emit(Lower *L, const LowerMmaReq *r, const LowerMmaPlan *p, const LowerOperand *a,
               const LowerOperand *b, LowerFrag *acc)
{
	if (p->impl == IMPL_WGMMA) {
		if (b->reg)
			return lower_error(L, r->op->loc,
			                   "internal error: wgmma takes B from shared memory");
		return emit_wgmma(L, r, p, a, b, acc);
	}
	return emit_mma_sync(L, r, p, a, b, acc);
}
