/* test_layout.c — the layout arithmetic of passes/layout.c checked element by element: every
 * blocked and tiled layout maps (register, lane, warp) onto its tile exactly once up to
 * replication; slices, transposes and register permutations agree with coordinates; shared-memory
 * layouts are injective, swizzle inside 16-byte chunks and stay inside their footprint; the
 * allocator never overlaps buffers that are live together. */
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "passes.h"
#include "unit.h"

/* Exhaustive check: threads whose replicating bits are zero hold every element exactly once; a
 * replicating thread holds what its primary holds. */
static bool
covers_once(const LowerLayout *l)
{
	int64_t n = 1;
	for (int d = 0; d < l->rank; d++)
		n *= l->shape[d];
	unsigned char *seen = calloc((size_t)n, 1);
	bool ok = true;
	uint32_t nl = 1u << l->nbits[LOWER_LANE], nw = 1u << l->nbits[LOWER_WARP];
	for (uint32_t w = 0; w < nw; w++)
		for (uint32_t ln = 0; ln < nl; ln++) {
			uint32_t pw = w, pl = ln; /* primary: replicating bits cleared */
			for (int i = 0; i < l->nbits[LOWER_WARP]; i++)
				if (!l->basis[LOWER_WARP][i][0] && !l->basis[LOWER_WARP][i][1] &&
				    !l->basis[LOWER_WARP][i][2])
					pw &= ~(1u << i);
			for (int i = 0; i < l->nbits[LOWER_LANE]; i++)
				if (!l->basis[LOWER_LANE][i][0] && !l->basis[LOWER_LANE][i][1] &&
				    !l->basis[LOWER_LANE][i][2])
					pl &= ~(1u << i);
			for (int r = 0; r < lower_layout_nregs(l); r++) {
				int64_t c[3], p[3];
				lower_layout_coord(l, (uint32_t)r, ln, w, c);
				lower_layout_coord(l, (uint32_t)r, pl, pw, p);
				int64_t idx = 0;
				for (int d = 0; d < l->rank; d++) {
					ok &= c[d] == p[d] && c[d] >= 0 && c[d] < l->shape[d];
					idx = idx * l->shape[d] + c[d];
				}
				if (pw == w && pl == ln && idx >= 0 && idx < n)
					ok &= seen[idx]++ == 0;
			}
		}
	for (int64_t i = 0; i < n; i++)
		ok &= seen[i] == 1;
	free(seen);
	return ok;
}

static void
test_blocked(void)
{
	static const struct {
		int rank;
		int64_t shape[3];
		int esize, lanes, warps, nregs;
	} cases[] = {
	    {1, {1024}, 4, 5, 3, 4},     /* vadd: 4 floats per thread, one 16-byte vector */
	    {2, {128, 64}, 2, 5, 3, 32}, /* a bf16 gemm operand */
	    {2, {128, 128}, 4, 5, 3, 64},
	    {2, {128, 1}, 4, 5, 3, 1}, /* fewer elements than threads: replication */
	    {2, {64, 256}, 4, 5, 2, 128},
	    {3, {4, 8, 32}, 2, 5, 2, 8},
	    {2, {16, 16}, 2, 6, 2, 8}, /* wave64: vectors first, then replication */
	    {1, {32}, 4, 5, 0, 4},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		LowerLayout l;
		char why[128];
		CHECK(lower_layout_blocked(&l, cases[i].rank, cases[i].shape, cases[i].esize,
		                           cases[i].lanes, cases[i].warps));
		CHECK_EQ(lower_layout_nregs(&l), cases[i].nregs);
		CHECK(lower_layout_check(&l, why, sizeof why));
		CHECK(covers_once(&l));
		CHECK(lower_layout_disjoint(&l));
	}
	/* Vectors: 16 bytes along the contiguous dimension. */
	LowerLayout l;
	int64_t s[2] = {128, 64};
	lower_layout_blocked(&l, 2, s, 2, 5, 3);
	CHECK_EQ(lower_layout_vec_bits(&l, 1), 3);
	CHECK_EQ(lower_layout_vec_bits(&l, 0), 0);
	int64_t c[2];
	lower_layout_coord(&l, 0, 1, 0, c); /* lane 1 starts the next 8 columns */
	CHECK(c[0] == 0 && c[1] == 8);
	lower_layout_coord(&l, 0, 8, 1, c); /* lane 8: next row group; warp 1: rows 4.. */
	CHECK(c[0] == 5 && c[1] == 0);
	/* Not a power of two, or too large: refused. */
	int64_t bad[2] = {96, 64}, huge[2] = {4096, 4096};
	CHECK(!lower_layout_blocked(&l, 2, bad, 4, 5, 3));
	CHECK(!lower_layout_blocked(&l, 2, huge, 4, 5, 0));
}

/* The m16n8 accumulator atom of mma.sync (PTX ISA: row = g + 8*(i>>1), col = 2t + (i&1)). */
static LowerAtom
acc_atom(void)
{
	LowerAtom a = {
	    16, 8, {2, 5, 0}, {{{0, 1}, {8, 0}}, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}}};
	return a;
}

static void
test_tiled(void)
{
	LowerAtom a = acc_atom();
	LowerLayout l;
	char why[128];
	int64_t s[2] = {128, 128};
	CHECK(lower_layout_tiled(&l, LOWER_MMA_ACC, s, &a, 5, 3, 3));
	CHECK_EQ(lower_layout_nregs(&l), 64);
	CHECK(lower_layout_check(&l, why, sizeof why));
	CHECK(covers_once(&l));
	/* Warps along rows: warp w owns rows 16w..16w+15; register 4j.. walks 8-column blocks. */
	for (uint32_t lane = 0; lane < 32; lane++)
		for (uint32_t r = 0; r < 64; r++) {
			int64_t c[2];
			lower_layout_coord(&l, r, lane, 5, c);
			int64_t row = 80 + (lane >> 2) + 8 * ((r >> 1) & 1);
			int64_t col = 8 * (r >> 2) + 2 * (lane & 3) + (r & 1);
			CHECK(c[0] == row && c[1] == col);
		}
	/* 2 x 4 warps; a small tile replicates over the warps it cannot use. */
	CHECK(lower_layout_tiled(&l, LOWER_MMA_ACC, s, &a, 5, 3, 1));
	CHECK(covers_once(&l));
	int64_t small[2] = {16, 8};
	CHECK(lower_layout_tiled(&l, LOWER_MMA_ACC, small, &a, 5, 3, 3));
	CHECK(covers_once(&l));
	CHECK_EQ(lower_layout_nregs(&l), 4);
	int64_t odd[2] = {8, 8};
	CHECK(!lower_layout_tiled(&l, LOWER_MMA_ACC, odd, &a, 5, 3, 3));
}

static void
test_slice_transpose_perm(void)
{
	LowerAtom a = acc_atom();
	LowerLayout l, sl, tr, back;
	int64_t s[2] = {64, 32};
	CHECK(lower_layout_tiled(&l, LOWER_MMA_ACC, s, &a, 5, 2, 2));
	int regmap[LOWER_MAX_REGS];
	lower_layout_slice(&l, 1, &sl, regmap);
	CHECK_EQ(sl.shape[1], 1);
	CHECK(covers_once(&sl));
	/* Each register of the parent maps to the slice register holding its row. */
	for (uint32_t lane = 0; lane < 32; lane++)
		for (int r = 0; r < lower_layout_nregs(&l); r++) {
			int64_t pc[2], sc[2];
			lower_layout_coord(&l, (uint32_t)r, lane, 1, pc);
			lower_layout_coord(&sl, (uint32_t)regmap[r], lane, 1, sc);
			CHECK(pc[0] == sc[0] && sc[1] == 0);
		}
	lower_layout_transpose(&l, &tr);
	CHECK(covers_once(&tr));
	int64_t c1[2], c2[2];
	lower_layout_coord(&l, 5, 7, 2, c1);
	lower_layout_coord(&tr, 5, 7, 2, c2);
	CHECK(c1[0] == c2[1] && c1[1] == c2[0]);
	lower_layout_transpose(&tr, &back);
	back.kind = l.kind;
	CHECK(lower_layout_equal(&back, &l));
	/* The same elements per thread in another register order: a permutation. */
	LowerLayout p = l;
	memcpy(p.basis[LOWER_REG][0], l.basis[LOWER_REG][2], sizeof p.basis[0][0]);
	memcpy(p.basis[LOWER_REG][2], l.basis[LOWER_REG][0], sizeof p.basis[0][0]);
	int perm[LOWER_MAX_REGS];
	CHECK(lower_layout_regperm(&l, &p, perm));
	for (int r = 0; r < lower_layout_nregs(&p); r++) {
		lower_layout_coord(&p, (uint32_t)r, 9, 3, c1);
		lower_layout_coord(&l, (uint32_t)perm[r], 9, 3, c2);
		CHECK(c1[0] == c2[0] && c1[1] == c2[1]);
	}
	LowerLayout b;
	CHECK(lower_layout_blocked(&b, 2, s, 4, 5, 2));
	CHECK(!lower_layout_regperm(&l, &b, perm));
}

static void
test_smem(IrCtx *c)
{
	static const char *src = "#sw = #ave.smem<swizzle = 128, order = [1, 0]>\n"
	                         "ave.kernel @k() {threads = 128} {\n"
	                         "  %a = ave.smem.alloc : !ave.tile<128x64xbf16, smem, #sw>\n"
	                         "  %b = ave.smem.alloc : !ave.tile<64x128xbf16, smem>\n"
	                         "  %p = ave.smem.alloc : !ave.tile<32x32xf32, smem, #ave.pad<4>>\n"
	                         "  %t = ave.smem.alloc : !ave.tile<64x32xf16, smem, "
	                         "#ave.smem<swizzle = 64, order = [0, 1]>>\n"
	                         "  ave.return\n"
	                         "}\n";
	IrModule *m = fe_parse(c, "s.ave", src, strlen(src), 1);
	CHECK(m && ir_verify(m));
	if (!m)
		return;
	IrOp *op = m->body->first->reg[0].block->first;
	for (int i = 0; i < 4; i++, op = op->next) {
		LowerSmemLayout s;
		CHECK(lower_smem_layout(c, op->res[0].type, &s));
		int64_t n = s.shape[0] * s.shape[1];
		unsigned char *seen = calloc((size_t)s.bytes, 1);
		bool ok = true;
		for (int64_t r = 0; r < s.shape[0]; r++)
			for (int64_t q = 0; q < s.shape[1]; q++) {
				int64_t co[2] = {r, q}, off = lower_smem_offset(&s, co);
				ok &= off >= 0 && off + s.esize <= s.bytes && off % s.esize == 0;
				if (ok)
					ok &= seen[off]++ == 0;
				/* A swizzle moves whole 16-byte chunks inside their row's span. */
				int64_t plain = off ^ lower_smem_swizzle(s.swizzle, off);
				ok &= (plain & ~(int64_t)0x70) == 0;
			}
		CHECK(ok);
		CHECK(s.bytes >= n * s.esize);
		free(seen);
		if (i == 0) {
			CHECK(s.swizzle == 128 && s.align == 1024 && s.bytes == 16384);
			int64_t co[2] = {9, 8}; /* row 9: chunk 1 XOR (9 & 7) = chunk 0 */
			CHECK_EQ(lower_smem_offset(&s, co), 9 * 128 + 0);
		}
		if (i == 1) { /* 256-byte rows: two 128-byte panels */
			CHECK(s.swizzle == 128 && s.panel_elems == 64 && s.panel_bytes == 64 * 128);
			int64_t co[2] = {0, 64};
			CHECK_EQ(lower_smem_offset(&s, co), 8192);
		}
		if (i == 2)
			CHECK(s.swizzle == 0 && s.row_bytes == 36 * 4 && s.bytes == 32 * 36 * 4);
		if (i == 3)
			CHECK(s.swizzle == 64 && s.order[0] == 0 && s.row_bytes == 64);
	}
	ir_module_free(m);
}

static void
test_assign(void)
{
	LowerSmemBuf b[4] = {
	    {.bytes = 1000, .align = 128, .start = 0, .end = 10},
	    {.bytes = 2000, .align = 1024, .start = 5, .end = 20},
	    {.bytes = 3000, .align = 16, .start = 21, .end = 30}, /* may reuse */
	    {.bytes = 8, .align = 8, .start = 0, .end = 30},
	};
	int64_t total = lower_smem_assign(b, 4);
	for (int i = 0; i < 4; i++) {
		CHECK(b[i].offset % b[i].align == 0);
		CHECK(b[i].offset + b[i].bytes <= total);
		for (int j = 0; j < 4; j++) {
			bool live = b[i].start <= b[j].end && b[j].start <= b[i].end;
			bool overlap = b[i].offset < b[j].offset + b[j].bytes &&
			               b[j].offset < b[i].offset + b[i].bytes;
			CHECK(i == j || !(live && overlap));
		}
	}
	CHECK(total < 1000 + 2000 + 3000 + 8);
	CHECK(b[2].shared);
	CHECK(!b[3].shared);
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	test_blocked();
	test_tiled();
	test_slice_transpose_perm();
	test_smem(c);
	test_assign();
	ir_ctx_free(c);
	return unit_summary();
}
