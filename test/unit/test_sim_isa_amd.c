/* test_sim_isa_amd.c — the simulator's MFMA model (runtime/sim/isa_amd.c) and TMA model
 * (runtime/sim/isa_tma.c) against first principles: operands placed in lane registers by index
 * formulas written here from AMD's tables, entries quoted from AMD's matrix instruction
 * calculator, a naive product; TMA boxes against a direct per-element reference and the swizzle
 * against a formula written with divisions rather than the model's bit masks. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../runtime/sim/isa.h"
#include "unit.h"

/* ---- MFMA ---- */

/* The six instructions as the CDNA2/CDNA3 ISA guides list them: M = N, K, the input type. */
typedef struct Inst {
	SimMfma m;
	const char *suffix;
	int mn, k;
	SimElem ab;
} Inst;

static const Inst insts[] = {
    {SIM_MFMA_32X32X8_BF16_1K, "f32.32x32x8bf16.1k", 32, 8, SIM_BF16},
    {SIM_MFMA_16X16X16_BF16_1K, "f32.16x16x16bf16.1k", 16, 16, SIM_BF16},
    {SIM_MFMA_32X32X8_F16, "f32.32x32x8f16", 32, 8, SIM_F16},
    {SIM_MFMA_16X16X16_F16, "f32.16x16x16f16", 16, 16, SIM_F16},
    {SIM_MFMA_32X32X2_F32, "f32.32x32x2f32", 32, 2, SIM_F32},
    {SIM_MFMA_16X16X4_F32, "f32.16x16x4f32", 16, 4, SIM_F32},
};
enum { NINST = sizeof insts / sizeof insts[0] };
static const int gfxs[2] = {90, 94};

/* Where A[i][k] lives (the calculator's A tables, `-A -R`): rows of A run along the lanes of a
 * lane group of mn lanes; K is split into 64/mn groups of E consecutive k, E = 4 for 16-bit
 * inputs (v0 lo, v0 hi, v1 lo, v1 hi), 1 for f32. B[k][j] is the same with j for i. */
static void
ab_place(const Inst *t, int row, int k, int *lane, int *elem)
{
	int e = t->ab == SIM_F32 ? 1 : 4;
	*lane = row + t->mn * (k / e);
	*elem = k % e;
}

/* Where D[i][j] (and C[i][j]) lives (the calculator's D tables): column j along the lanes of a
 * group; for 32x32 the rows go in blocks of 8: rows 8b..8b+3 in lanes 0-31 and 8b+4..8b+7 in
 * lanes 32-63, registers 4b..4b+3; for 16x16 rows 4g..4g+3 in lane group g, registers 0..3. */
static void
d_place(const Inst *t, int i, int j, int *lane, int *reg)
{
	if (t->mn == 32) {
		*lane = j + 32 * ((i / 4) % 2);
		*reg = 4 * (i / 8) + i % 4;
	} else {
		*lane = j + 16 * (i / 4);
		*reg = i % 4;
	}
}

static uint16_t
to16(SimElem ab, float f)
{
	return ab == SIM_BF16 ? sim_f32_to_bf16(f) : sim_f32_to_f16(f);
}

static float
from16(SimElem ab, uint16_t h)
{
	return ab == SIM_BF16 ? sim_bf16_to_f32(h) : sim_f16_to_f32(h);
}

/* The value f rounded to the instruction's input type. */
static float
round_in(const Inst *t, float f)
{
	return t->ab == SIM_F32 ? f : from16(t->ab, to16(t->ab, f));
}

static void
put(const Inst *t, uint32_t r[64][2], int lane, int elem, float f)
{
	if (t->ab == SIM_F32) {
		memcpy(&r[lane][0], &f, 4);
		return;
	}
	uint32_t *w = &r[lane][elem / 2];
	int sh = 16 * (elem % 2);
	*w = (*w & ~(0xffffu << sh)) | (uint32_t)to16(t->ab, f) << sh;
}

/* Matrices in row-major order, at most 32 x 16 / 16 x 32 / 32 x 32. */
typedef struct Mats {
	float a[32 * 16], b[16 * 32], c[32 * 32];
} Mats;

static void
load(const Inst *t, const Mats *x, uint32_t a[64][2], uint32_t b[64][2], float c[64][16])
{
	int mn = t->mn, kk = t->k, lane, e;
	memset(a, 0, sizeof(uint32_t[64][2]));
	memset(b, 0, sizeof(uint32_t[64][2]));
	memset(c, 0, sizeof(float[64][16]));
	for (int i = 0; i < mn; i++)
		for (int k = 0; k < kk; k++) {
			ab_place(t, i, k, &lane, &e);
			put(t, a, lane, e, x->a[i * kk + k]);
			ab_place(t, i, k, &lane, &e); /* B[k][j] with j = i */
			put(t, b, lane, e, x->b[k * mn + i]);
		}
	for (int i = 0; i < mn; i++)
		for (int j = 0; j < mn; j++) {
			d_place(t, i, j, &lane, &e);
			c[lane][e] = x->c[i * mn + j];
		}
}

/* sim_mfma on the test's writable arrays (ISO C before C2x does not convert T (*)[n] to
 * const T (*)[n] implicitly). */
static bool
run(SimMfma m, int gfx, uint32_t a[64][2], uint32_t b[64][2], float c[64][16], float d[64][16],
    int blgp, char *err, size_t errlen)
{
	return sim_mfma(m, gfx, (const uint32_t(*)[2])a, (const uint32_t(*)[2])b,
	                (const float(*)[16])c, d, 0, 0, blgp, err, errlen);
}

/* Runs the model and compares D with C + A·B in double: exactly, or within tol relative to
 * sum |a b| + |c|. Returns the entries that differ. */
static int
compare(const Inst *t, int gfx, const Mats *x, double tol)
{
	static uint32_t a[64][2], b[64][2];
	static float c[64][16], d[64][16];
	char err[128] = "";
	int mn = t->mn, kk = t->k, bad = 0, lane, r;

	load(t, x, a, b, c);
	memset(d, 0xff, sizeof d);
	if (!run(t->m, gfx, a, b, c, d, 0, err, sizeof err))
		return -1;
	for (int i = 0; i < mn; i++)
		for (int j = 0; j < mn; j++) {
			double s = x->c[i * mn + j], mag = fabs(s);
			for (int k = 0; k < kk; k++) {
				double p = (double)x->a[i * kk + k] * x->b[k * mn + j];
				s += p;
				mag += fabs(p);
			}
			d_place(t, i, j, &lane, &r);
			if (fabs(d[lane][r] - s) > tol * mag)
				bad++;
		}
	/* Registers past the accumulators are not written. */
	for (int l = 0; l < 64; l++)
		for (r = sim_mfma_acc_regs(t->m); r < 16; r++)
			if (!isnan(d[l][r]))
				bad++;
	return bad;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float
frand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng >> 40) & 0xffff) / 32768.0f - 1.0f;
}

static void
test_mfma_tables(void)
{
	CHECK_EQ((int)SIM_MFMA_COUNT, (int)NINST);
	for (int n = 0; n < NINST; n++) {
		const Inst *t = &insts[n];
		CHECK_EQ(sim_mfma_find(t->suffix), (int)t->m);
		CHECK_EQ(sim_mfma_ab_regs(t->m), t->ab == SIM_F32 ? 1 : 2);
		CHECK_EQ(sim_mfma_acc_regs(t->m), t->mn == 32 ? 16 : 4);
		/* 64 lanes hold all of A and B, each element once. */
		CHECK_EQ(64 * sim_mfma_ab_regs(t->m) * (t->ab == SIM_F32 ? 1 : 2), t->mn * t->k);
	}
	CHECK_EQ(sim_mfma_find("f32.32x32x1f32"), -1); /* multi-block: not modelled */
	CHECK_EQ(sim_mfma_find("llvm.amdgcn.mfma.f32.32x32x8f16"), -1);
	CHECK_EQ(sim_mfma_find("f32.32x32x8bf16"), -1);
	CHECK_EQ(sim_mfma_find(""), -1);
}

/* Small integers: every product and sum is exact in f32, so any order of summation gives the
 * double result exactly. */
static void
test_mfma_exact(void)
{
	static Mats x;
	for (int n = 0; n < NINST; n++) {
		const Inst *t = &insts[n];
		int mn = t->mn, kk = t->k;
		for (int i = 0; i < mn; i++)
			for (int k = 0; k < kk; k++)
				x.a[i * kk + k] = (float)((i * 3 + k * 5 + n) % 7 - 3);
		for (int k = 0; k < kk; k++)
			for (int j = 0; j < mn; j++)
				x.b[k * mn + j] = (float)((k * 2 + j * 7) % 5 - 2);
		for (int i = 0; i < mn; i++)
			for (int j = 0; j < mn; j++)
				x.c[i * mn + j] = (float)((i + 2 * j) % 9 - 4) * 0.5f;
		for (int g = 0; g < 2; g++)
			CHECK_EQ(compare(t, gfxs[g], &x, 0.0), 0);
	}
}

static void
test_mfma_random(void)
{
	static Mats x;
	for (int n = 0; n < NINST; n++) {
		const Inst *t = &insts[n];
		int mn = t->mn, kk = t->k;
		for (int rep = 0; rep < 4; rep++) {
			for (int q = 0; q < mn * kk; q++) {
				x.a[q] = round_in(t, frand() * 4);
				x.b[q] = round_in(t, frand());
			}
			for (int q = 0; q < mn * mn; q++)
				x.c[q] = frand() * 8;
			for (int g = 0; g < 2; g++)
				CHECK_EQ(compare(t, gfxs[g], &x, 1e-5), 0);
		}
	}
}

/* Entries quoted from AMD's matrix instruction calculator (`matrix_calculator.py -a <arch> -i
 * <inst> -g -A -I i -K k`, `-B -K k -J j`, `-D -I i -J j`): A[i][k] = v<ra>{la}.[half],
 * B[k][j] = v<rb>{lb}.[half], D[i][j] = v<rd>{ld}. With A = the unit matrix entry (i, k), B = 2
 * at (k, j) and C = 0, D is 2 at (i, j) and 0 elsewhere. */
static const struct Spot {
	int inst, gfx, i, k, j;
	int la, ra, ha, lb, rb, hb, ld, rd;
} spots[] = {
    {0, 90, 13, 7, 30, 45, 1, 1, 62, 1, 1, 62, 5},  {0, 94, 29, 1, 2, 29, 0, 1, 2, 0, 1, 34, 13},
    {1, 90, 9, 14, 5, 57, 1, 0, 53, 1, 0, 37, 1},   {1, 94, 2, 5, 11, 18, 0, 1, 27, 0, 1, 11, 2},
    {2, 90, 22, 3, 17, 22, 1, 1, 17, 1, 1, 49, 10}, {2, 94, 5, 6, 3, 37, 1, 0, 35, 1, 0, 35, 1},
    {3, 90, 15, 9, 0, 47, 0, 1, 32, 0, 1, 48, 3},   {3, 94, 7, 10, 12, 39, 1, 0, 44, 1, 0, 28, 3},
    {4, 90, 31, 1, 8, 63, 0, 0, 40, 0, 0, 40, 15},  {4, 94, 12, 0, 25, 12, 0, 0, 25, 0, 0, 57, 4},
    {5, 90, 6, 3, 14, 54, 0, 0, 62, 0, 0, 30, 2},   {5, 94, 11, 2, 1, 43, 0, 0, 33, 0, 0, 33, 3},
};

static void
set_reg(const Inst *t, uint32_t r[64][2], int lane, int reg, int half, float f)
{
	if (t->ab == SIM_F32)
		memcpy(&r[lane][0], &f, 4);
	else
		r[lane][reg] |= (uint32_t)to16(t->ab, f) << (16 * half);
}

static void
test_mfma_spots(void)
{
	static uint32_t a[64][2], b[64][2];
	static float c[64][16], d[64][16];
	char err[128];
	for (size_t s = 0; s < sizeof spots / sizeof spots[0]; s++) {
		const struct Spot *p = &spots[s];
		const Inst *t = &insts[p->inst];
		memset(a, 0, sizeof a);
		memset(b, 0, sizeof b);
		memset(c, 0, sizeof c);
		set_reg(t, a, p->la, p->ra, p->ha, 1.0f);
		set_reg(t, b, p->lb, p->rb, p->hb, 2.0f);
		CHECK(run(t->m, p->gfx, a, b, c, d, 0, err, sizeof err));
		int nz = 0;
		for (int l = 0; l < 64; l++)
			for (int r = 0; r < sim_mfma_acc_regs(t->m); r++)
				nz += d[l][r] != 0.0f;
		CHECK_EQ(nz, 1);
		CHECK_EQ(d[p->ld][p->rd], 2.0f);
		/* The test's own placement agrees with the calculator. */
		int lane, e;
		ab_place(t, p->i, p->k, &lane, &e);
		CHECK(lane == p->la && (t->ab == SIM_F32 || e == 2 * p->ra + p->ha));
		ab_place(t, p->j, p->k, &lane, &e);
		CHECK(lane == p->lb && (t->ab == SIM_F32 || e == 2 * p->rb + p->hb));
		d_place(t, p->i, p->j, &lane, &e);
		CHECK(lane == p->ld && e == p->rd);
	}
}

/* D may be C: the backends accumulate in place. */
static void
test_mfma_inplace(void)
{
	static uint32_t a[64][2], b[64][2];
	static float c[64][16], acc[64][16], d[64][16];
	static Mats x;
	char err[128];
	for (int n = 0; n < NINST; n++) {
		const Inst *t = &insts[n];
		for (int q = 0; q < t->mn * t->k; q++) {
			x.a[q] = round_in(t, frand());
			x.b[q] = round_in(t, frand());
		}
		for (int q = 0; q < t->mn * t->mn; q++)
			x.c[q] = frand();
		load(t, &x, a, b, c);
		memcpy(acc, c, sizeof c);
		CHECK(run(t->m, 94, a, b, c, d, 0, err, sizeof err));
		CHECK(run(t->m, 94, a, b, acc, acc, 0, err, sizeof err));
		int acc_regs = sim_mfma_acc_regs(t->m), same = 1;
		for (int l = 0; l < 64; l++)
			for (int r = 0; r < acc_regs; r++)
				same &= acc[l][r] == d[l][r];
		CHECK(same);
	}
}

/* A NaN in A[i][k] makes row i of D NaN and nothing else. */
static void
test_mfma_nan(void)
{
	static uint32_t a[64][2], b[64][2];
	static float c[64][16], d[64][16];
	static Mats x;
	char err[128];
	for (int n = 0; n < NINST; n++) {
		const Inst *t = &insts[n];
		int mn = t->mn, kk = t->k, lane, r, row = 5, ok = 1;
		for (int q = 0; q < mn * kk; q++) {
			x.a[q] = 1.0f;
			x.b[q] = 1.0f;
		}
		memset(x.c, 0, sizeof x.c);
		x.a[row * kk + kk - 1] = NAN;
		load(t, &x, a, b, c);
		CHECK(run(t->m, 90, a, b, c, d, 0, err, sizeof err));
		for (int i = 0; i < mn; i++)
			for (int j = 0; j < mn; j++) {
				d_place(t, i, j, &lane, &r);
				ok &= i == row ? isnan(d[lane][r]) : d[lane][r] == (float)kk;
			}
		CHECK(ok);
	}
}

/* BLGP, as the CDNA2/CDNA3 ISA guides' table words it: 1 broadcasts lanes 0-31 to 32-63, 2
 * lanes 32-63 to 0-31, 3 rotates the lanes down by 16, 4..7 broadcast lane group 0..3 to all
 * four. Written as the B the instruction would have seen without BLGP. */
static void
blgp_view(int blgp, uint32_t b[64][2], uint32_t out[64][2])
{
	for (int l = 0; l < 64; l++) {
		int from = l;
		if (blgp == 1 && l >= 32)
			from = l - 32;
		else if (blgp == 2 && l < 32)
			from = l + 32;
		else if (blgp == 3)
			from = l < 48 ? l + 16 : l - 48;
		else if (blgp >= 4)
			from = (blgp - 4) * 16 + l % 16;
		out[l][0] = b[from][0];
		out[l][1] = b[from][1];
	}
}

static void
test_mfma_blgp(void)
{
	static uint32_t a[64][2], b[64][2], bv[64][2];
	static float c[64][16], d1[64][16], d2[64][16];
	static Mats x;
	char err[128];
	for (int n = 0; n < NINST; n++) {
		const Inst *t = &insts[n];
		for (int q = 0; q < t->mn * t->k; q++) {
			x.a[q] = round_in(t, frand());
			x.b[q] = round_in(t, frand());
		}
		for (int q = 0; q < t->mn * t->mn; q++)
			x.c[q] = frand();
		load(t, &x, a, b, c);
		for (int blgp = 1; blgp < 8; blgp++) {
			blgp_view(blgp, b, bv);
			int same = 1;
			CHECK(run(t->m, 90, a, b, c, d1, blgp, err, sizeof err));
			CHECK(run(t->m, 90, a, bv, c, d2, 0, err, sizeof err));
			for (int l = 0; l < 64; l++)
				for (int r = 0; r < sim_mfma_acc_regs(t->m); r++)
					same &= d1[l][r] == d2[l][r];
			CHECK(same);
			/* gfx942 keeps BLGP for the f32 instructions only (the calculator). */
			err[0] = 0;
			bool ok = run(t->m, 94, a, b, c, d1, blgp, err, sizeof err);
			CHECK_EQ(ok, t->ab == SIM_F32);
			CHECK(ok || err[0]);
		}
	}
	/* Calculator entries under BLGP: B[k][j] = v<r>{lane}. */
	static const struct {
		int inst, gfx, blgp, k, j, lane, reg, half;
	} bs[] = {
	    {2, 90, 1, 5, 3, 3, 0, 1},  {1, 90, 6, 13, 2, 34, 0, 1}, {5, 94, 7, 0, 7, 55, 0, 0},
	    {4, 94, 2, 0, 4, 36, 0, 0}, {4, 90, 3, 1, 20, 4, 0, 0},
	};
	for (size_t s = 0; s < sizeof bs / sizeof bs[0]; s++) {
		const Inst *t = &insts[bs[s].inst];
		int lane, r;
		memset(a, 0, sizeof a);
		memset(b, 0, sizeof b);
		memset(c, 0, sizeof c);
		ab_place(t, 0, bs[s].k, &lane, &r); /* A[0][k] = 1: row 0 of D is row k of B */
		put(t, a, lane, r, 1.0f);
		set_reg(t, b, bs[s].lane, bs[s].reg, bs[s].half, 3.0f);
		CHECK(run(t->m, bs[s].gfx, a, b, c, d1, bs[s].blgp, err, sizeof err));
		d_place(t, 0, bs[s].j, &lane, &r);
		CHECK_EQ(d1[lane][r], 3.0f);
	}
}

static void
test_mfma_reject(void)
{
	static const uint32_t a[64][2], b[64][2];
	static const float c[64][16];
	static float d[64][16];
	char err[128];
	const SimMfma m = SIM_MFMA_16X16X16_F16;
	err[0] = 0;
	CHECK(!sim_mfma(m, 90, a, b, c, d, 1, 0, 0, err, sizeof err) && err[0]);
	err[0] = 0;
	CHECK(!sim_mfma(m, 94, a, b, c, d, 0, 2, 0, err, sizeof err) && err[0]);
	err[0] = 0;
	CHECK(!sim_mfma(m, 90, a, b, c, d, 0, 0, 8, err, sizeof err) && err[0]);
	err[0] = 0;
	CHECK(!sim_mfma(m, 90, a, b, c, d, 0, 0, -1, err, sizeof err) && err[0]);
	err[0] = 0;
	CHECK(!sim_mfma(m, 908, a, b, c, d, 0, 0, 0, err, sizeof err) && err[0]);
	err[0] = 0;
	CHECK(!sim_mfma(SIM_MFMA_COUNT, 90, a, b, c, d, 0, 0, 0, err, sizeof err) && err[0]);
	CHECK(!sim_mfma(m, 95, a, b, c, d, 0, 0, 0, NULL, 0));
	CHECK(sim_mfma(m, 94, a, b, c, d, 0, 0, 0, NULL, 0));
	CHECK_EQ(sim_mfma_acc_regs(SIM_MFMA_COUNT), 0);
	CHECK_EQ(sim_mfma_ab_regs(SIM_MFMA_COUNT), 0);
}

/* ---- TMA ---- */

enum { GMAX = 1 << 16, DMAX = 1 << 16 };
static _Alignas(16) uint8_t gmem[GMAX];
static uint8_t got[DMAX + 64], want[DMAX + 64];

/* Global memory filled with a pattern no two nearby elements share. */
static void
fill_gmem(void)
{
	for (size_t q = 0; q < GMAX; q++)
		gmem[q] = (uint8_t)(q * 7 + (q >> 8) * 13 + 1);
}

static SimTensorMap
map(uint32_t rank, uint32_t eb, const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
    uint32_t swizzle, uint32_t nan)
{
	SimTensorMap m;
	memset(&m, 0, sizeof m);
	m.magic = SIM_TMAP_MAGIC;
	m.rank = rank;
	m.elem_bytes = eb;
	m.swizzle = swizzle;
	m.base = (uint64_t)(uintptr_t)gmem;
	for (uint32_t d = 0; d < rank; d++) {
		m.dims[d] = dims[d];
		m.box[d] = box[d];
		if (d)
			m.strides[d - 1] = strides[d - 1];
	}
	m.oob_nan = nan;
	return m;
}

/* The swizzle as the CUDA guide's pictures draw it: within each 128-byte line of shared memory,
 * the 16-byte slot s of a span goes to slot s XOR (line number mod slots per span). */
static size_t
ref_swizzle(size_t p, uint32_t span)
{
	if (!span)
		return p;
	size_t slots = span / 16, slot = (p / 16) % slots, line = p / 128;
	return p - slot * 16 + ((slot ^ (line % slots)) * 16);
}

/* The reference load, one element at a time: box element n (row-major, innermost dimension
 * fastest) has box index n / (product of the inner box sizes) % box; returns the elements that
 * fall outside the tensor. */
static long
ref_load(const SimTensorMap *m, const int32_t *coord, uint8_t *out)
{
	size_t eb = m->elem_bytes, count = 1;
	long oob = 0;
	for (uint32_t d = 0; d < m->rank; d++)
		count *= m->box[d];
	for (size_t n = 0; n < count; n++) {
		size_t g = 0, inner = 1;
		int in = 1;
		for (uint32_t d = 0; d < m->rank; d++) {
			int64_t x = coord[d] + (int64_t)(n / inner % m->box[d]);
			inner *= m->box[d];
			if (x < 0 || x >= (int64_t)m->dims[d])
				in = 0;
			else
				g += (size_t)x * (d ? m->strides[d - 1] : eb);
		}
		uint8_t *q = out + ref_swizzle(n * eb, m->swizzle);
		if (in) {
			memcpy(q, gmem + g, eb);
			continue;
		}
		oob++;
		memset(q, m->oob_nan ? 0xff : 0, eb);
		if (m->oob_nan)
			q[eb - 1] = 0x7f; /* 0x7fff..: NaN in every float format of that size */
	}
	return oob;
}

/* Loads through the model and the reference; 1 when they agree byte for byte, the count is
 * box * elem_bytes, bytes past it are untouched and the out-of-bounds count is as expected
 * (-1: any). */
static int
agree(const SimTensorMap *m, const int32_t *coord, long want_oob)
{
	char err[160] = "";
	size_t n = m->elem_bytes;
	for (uint32_t d = 0; d < m->rank; d++)
		n *= m->box[d];
	memset(got, 0xa5, sizeof got);
	memset(want, 0xa5, sizeof want);
	long oob = ref_load(m, coord, want);
	size_t r = sim_tma_load(m, coord, got, err, sizeof err);
	if (r != n) {
		fprintf(stderr, "tma: returned %zu, want %zu (%s)\n", r, n, err);
		return 0;
	}
	if (want_oob >= 0 && oob != want_oob) {
		fprintf(stderr, "tma: reference saw %ld out of bounds, test expects %ld\n", oob,
		        want_oob);
		return 0;
	}
	return !memcmp(got, want, n + 64);
}

static void
test_tma_rank1(void)
{
	uint64_t dims[1] = {100};
	uint32_t box[1] = {32};
	SimTensorMap m = map(1, 2, dims, NULL, box, 0, 0);
	CHECK(agree(&m, (int32_t[5]){0}, 0));
	CHECK(agree(&m, (int32_t[5]){68}, 0));
	CHECK(agree(&m, (int32_t[5]){80}, 12));
	CHECK(agree(&m, (int32_t[5]){-10}, 10));
	CHECK(agree(&m, (int32_t[5]){100}, 32));
	CHECK(agree(&m, (int32_t[5]){-32}, 32));
	m.oob_nan = 1;
	CHECK(agree(&m, (int32_t[5]){90}, 22));
	/* The NaN fill is a NaN whether the 16-bit elements are f16 or bf16. */
	sim_tma_load(&m, (int32_t[5]){90}, got, NULL, 0);
	uint16_t h;
	memcpy(&h, got + 2 * 31, 2);
	CHECK(isnan(sim_f16_to_f32(h)) && isnan(sim_bf16_to_f32(h)));
	memcpy(&h, got + 2 * 9, 2);
	CHECK(!memcmp(&h, gmem + 2 * 99, 2));
}

/* A 2-D f32 tensor of 40 x 24 with padded rows (stride 192 bytes), an 8 x 4 box moved across
 * every edge and corner. */
static void
test_tma_rank2(void)
{
	uint64_t dims[2] = {40, 24}, strides[1] = {192};
	uint32_t box[2] = {8, 4};
	for (uint32_t nan = 0; nan < 2; nan++) {
		SimTensorMap m = map(2, 4, dims, strides, box, 0, nan);
		CHECK(agree(&m, (int32_t[5]){8, 4}, 0));
		CHECK(agree(&m, (int32_t[5]){32, 20}, 0));
		CHECK(agree(&m, (int32_t[5]){-3, 10}, 12)); /* left */
		CHECK(agree(&m, (int32_t[5]){36, 10}, 16)); /* right */
		CHECK(agree(&m, (int32_t[5]){10, -1}, 8));  /* top */
		CHECK(agree(&m, (int32_t[5]){10, 22}, 16)); /* bottom */
		CHECK(agree(&m, (int32_t[5]){-5, -2}, 26)); /* corners */
		CHECK(agree(&m, (int32_t[5]){35, 23}, 27));
		CHECK(agree(&m, (int32_t[5]){-2, 21}, 14));
		CHECK(agree(&m, (int32_t[5]){39, -3}, 31));
		CHECK(agree(&m, (int32_t[5]){-100, 5}, 32)); /* wholly outside */
		CHECK(agree(&m, (int32_t[5]){5, 1000}, 32));
		CHECK(agree(&m, (int32_t[5]){INT32_MAX, INT32_MIN}, 32));
	}
	/* One element by hand: box (1, 2) from coordinate (6, 3) is global (7, 5). */
	SimTensorMap m = map(2, 4, dims, strides, box, 0, 1);
	float f;
	CHECK_EQ(sim_tma_load(&m, (int32_t[5]){6, 3}, got, NULL, 0), 128u);
	CHECK(!memcmp(got + (2 * 8 + 1) * 4, gmem + 5 * 192 + 7 * 4, 4));
	sim_tma_load(&m, (int32_t[5]){-1, 0}, got, NULL, 0);
	memcpy(&f, got + 8 * 4, 4);
	CHECK(isnan(f));
	m.oob_nan = 0;
	sim_tma_load(&m, (int32_t[5]){-1, 0}, got, NULL, 0);
	memcpy(&f, got + 8 * 4, 4);
	CHECK(f == 0.0f && !signbit(f));
}

static void
test_tma_rank3(void)
{
	uint64_t dims[3] = {37, 5, 6}, strides[2] = {48, 48 * 5 + 16};
	uint32_t box[3] = {16, 3, 2};
	for (uint32_t nan = 0; nan < 2; nan++) {
		SimTensorMap m = map(3, 1, dims, strides, box, 0, nan);
		CHECK(agree(&m, (int32_t[5]){0, 0, 0}, 0));
		CHECK(agree(&m, (int32_t[5]){21, 2, 4}, 0));
		CHECK(agree(&m, (int32_t[5]){30, 1, 1}, 54));
		CHECK(agree(&m, (int32_t[5]){3, 4, 2}, 64));
		CHECK(agree(&m, (int32_t[5]){3, 1, 5}, 48));
		CHECK(agree(&m, (int32_t[5]){-8, -1, -1}, -1));
		CHECK(agree(&m, (int32_t[5]){0, 0, 6}, 96));
	}
	/* Rank 5 with 8-byte elements, straddling the outer dimensions. */
	uint64_t d5[5] = {6, 3, 2, 3, 2}, s5[4] = {48, 160, 336, 1024};
	uint32_t b5[5] = {2, 2, 2, 2, 2};
	SimTensorMap m = map(5, 8, d5, s5, b5, 0, 0);
	CHECK(agree(&m, (int32_t[5]){4, 1, 0, 1, 0}, 0));
	CHECK(agree(&m, (int32_t[5]){5, 2, 1, 2, 1}, -1));
	CHECK(agree(&m, (int32_t[5]){-1, 0, 0, 0, 1}, -1));
}

/* Each swizzle with the inner box equal to the span and, for 128B, half of it (two rows share a
 * 128-byte line), at coordinates in and across the edges. */
static void
test_tma_swizzle(void)
{
	static const uint32_t spans[3] = {32, 64, 128};
	for (int s = 0; s < 3; s++)
		for (int half = 0; half < 2; half++) {
			uint32_t span = spans[s], inner = half ? span / 2 : span;
			if (half && span != 128)
				continue;
			uint64_t dims[2] = {inner / 2 + 8, 40}, strides[1] = {512};
			uint32_t box[2] = {inner / 2, 16};
			SimTensorMap m = map(2, 2, dims, strides, box, span, 0);
			CHECK(agree(&m, (int32_t[5]){0, 0}, 0));
			CHECK(agree(&m, (int32_t[5]){8, 24}, 0));
			CHECK(agree(&m, (int32_t[5]){-4, -3}, -1));
			CHECK(agree(&m, (int32_t[5]){12, 30}, -1));
			m.oob_nan = 1;
			CHECK(agree(&m, (int32_t[5]){5, 35}, -1));
			/* The swizzle moved something: differs from the unswizzled box. */
			SimTensorMap plain = m;
			plain.swizzle = 0;
			static uint8_t p[DMAX];
			sim_tma_load(&plain, (int32_t[5]){0, 0}, p, NULL, 0);
			sim_tma_load(&m, (int32_t[5]){0, 0}, got, NULL, 0);
			CHECK(memcmp(p, got, (size_t)inner * 16) != 0);
		}

	/* Literal placements. 128B, 128-byte rows of bf16 (64 elements): row r's 16-byte chunk c
	 * lands in chunk c ^ (r % 8) of its row. */
	uint64_t dims[2] = {64, 16}, strides[1] = {128};
	uint32_t box[2] = {64, 16};
	SimTensorMap m = map(2, 2, dims, strides, box, 128, 0);
	CHECK_EQ(sim_tma_load(&m, (int32_t[5]){0, 0}, got, NULL, 0), 2048u);
	CHECK(!memcmp(got + 0, gmem + 0, 16));              /* row 0 chunk 0 stays */
	CHECK(!memcmp(got + 128 + 16 * 1, gmem + 128, 16)); /* row 1 chunk 0 -> 1 */
	CHECK(!memcmp(got + 5 * 128 + 16 * 6, gmem + 5 * 128 + 16 * 3, 16));   /* 3 ^ 5 */
	CHECK(!memcmp(got + 15 * 128 + 16 * 0, gmem + 15 * 128 + 16 * 7, 16)); /* 7 ^ 7 */
	/* 32B, 32-byte rows: rows 0-3 stay, rows 4-7 swap their two chunks (period 256 bytes). */
	uint64_t d32[2] = {16, 16}, s32[1] = {32};
	uint32_t b32[2] = {16, 16};
	m = map(2, 2, d32, s32, b32, 32, 0);
	sim_tma_load(&m, (int32_t[5]){0, 0}, got, NULL, 0);
	CHECK(!memcmp(got + 3 * 32, gmem + 3 * 32, 32));
	CHECK(!memcmp(got + 4 * 32, gmem + 4 * 32 + 16, 16));
	CHECK(!memcmp(got + 4 * 32 + 16, gmem + 4 * 32, 16));
	CHECK(!memcmp(got + 8 * 32, gmem + 8 * 32, 32));
	/* 64B, 64-byte rows: rows 2k, 2k+1 share XOR value k % 4 (period 512 bytes). */
	uint64_t d64[2] = {32, 16}, s64[1] = {64};
	uint32_t b64[2] = {32, 16};
	m = map(2, 2, d64, s64, b64, 64, 0);
	sim_tma_load(&m, (int32_t[5]){0, 0}, got, NULL, 0);
	CHECK(!memcmp(got + 1 * 64, gmem + 1 * 64, 64));
	CHECK(!memcmp(got + 3 * 64 + 16 * 0, gmem + 3 * 64 + 16 * 1, 16));
	CHECK(!memcmp(got + 6 * 64 + 16 * 1, gmem + 6 * 64 + 16 * 2, 16)); /* 1 ^ 3 = 2 */
	CHECK(!memcmp(got + 8 * 64, gmem + 8 * 64, 64));
}

static void
test_tma_reject(void)
{
	uint64_t dims[2] = {64, 16}, strides[1] = {128};
	uint32_t box[2] = {16, 4};
	const SimTensorMap good = map(2, 4, dims, strides, box, 64, 0);
	int32_t co[5] = {0, 0, 0, 0, 0};
	char err[160];
	SimTensorMap m;
#define REJECT(stmt)                                                                               \
	do {                                                                                       \
		m = good;                                                                          \
		stmt;                                                                              \
		err[0] = 0;                                                                        \
		CHECK(sim_tma_load(&m, co, got, err, sizeof err) == 0 && err[0]);                  \
	} while (0)
	m = good;
	CHECK_EQ(sim_tma_load(&m, co, got, err, sizeof err), 256u);
	REJECT(m.magic = 0);
	REJECT(m.rank = 0);
	REJECT(m.rank = 6);
	REJECT(m.elem_bytes = 3);
	REJECT(m.elem_bytes = 16);
	REJECT(m.swizzle = 16);
	REJECT(m.swizzle = 256);
	REJECT(m.oob_nan = 2);
	REJECT(m.base += 8);
	REJECT(m.dims[1] = 0);
	REJECT(m.dims[0] = (1ull << 32) + 1);
	REJECT(m.box[1] = 0);
	REJECT(m.box[1] = 257);
	REJECT(m.strides[0] = 120);
	REJECT(m.strides[0] = 1ull << 40);
	REJECT((m.swizzle = 0, m.box[0] = 6)); /* 24 bytes, not a multiple of 16 */
	REJECT((m.swizzle = 0, m.elem_bytes = 1, m.box[0] = 8)); /* 8 bytes */
	REJECT(m.box[0] = 32);                                   /* 128 bytes over a 64-byte span */
	REJECT((m.swizzle = 128, m.box[0] = 8, m.box[1] = 3));   /* 96 bytes: not whole spans */
	CHECK(sim_tma_load(NULL, co, got, err, sizeof err) == 0);
	m = good;
	m.magic = 1;
	CHECK(sim_tma_load(&m, co, got, NULL, 0) == 0); /* no err buffer: still refused */
	/* Dimensions past the rank are not looked at. */
	m = good;
	m.rank = 1;
	m.box[1] = 999;
	m.dims[1] = 0;
	CHECK_EQ(sim_tma_load(&m, co, got, err, sizeof err), 64u);
#undef REJECT
}

int
main(void)
{
	test_mfma_tables();
	test_mfma_exact();
	test_mfma_random();
	test_mfma_spots();
	test_mfma_inplace();
	test_mfma_nan();
	test_mfma_blgp();
	test_mfma_reject();
	fill_gmem();
	test_tma_rank1();
	test_tma_rank2();
	test_tma_rank3();
	test_tma_swizzle();
	test_tma_reject();
	return unit_summary();
}
