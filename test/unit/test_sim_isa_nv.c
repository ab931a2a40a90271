/* test_sim_isa_nv.c — the NVIDIA models of runtime/sim/isa_nvidia.c against first principles:
 * conversions on known bit patterns and exhaustively, mma / wgmma against a naive matmul with
 * fragments placed by inverse index maps written here from the PTX ISA tables, ldmatrix on
 * known patterns, and wgmma operands laid out the way a TMA writes a tile (dense rows, address
 * XOR swizzle) in every layout a descriptor can express. Values are small dyadic numbers, so
 * every product and sum is exact and results are compared for equality. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "isa.h"
#include "unit.h"

static uint32_t rng_state = 0x12345678u;

static uint32_t
rng(void)
{
	uint32_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

/* A multiple of 1/4 in [-2, 2]: exact in bf16 and f16, products exact, sums exact. */
static float
small(void)
{
	return (float)((int)(rng() % 17) - 8) / 4.0f;
}

static uint16_t
pack(SimElem ab, float f)
{
	return ab == SIM_BF16 ? sim_f32_to_bf16(f) : sim_f32_to_f16(f);
}

static uint32_t
fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float
bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* ---- conversions ---- */

static void
test_conversions(void)
{
	/* bf16 -> f32 */
	CHECK(sim_bf16_to_f32(0x3f80) == 1.0f);
	CHECK(sim_bf16_to_f32(0xc020) == -2.5f);
	CHECK(sim_bf16_to_f32(0x7f7f) == bitsf(0x7f7f0000u)); /* largest finite */
	CHECK(sim_bf16_to_f32(0x0001) == ldexpf(1.0f, -133)); /* smallest subnormal */
	CHECK(isinf(sim_bf16_to_f32(0xff80)) && sim_bf16_to_f32(0xff80) < 0);
	CHECK(isnan(sim_bf16_to_f32(0x7fc0)));
	CHECK(fbits(sim_bf16_to_f32(0x8000)) == 0x80000000u);

	/* f32 -> bf16, round to nearest even */
	CHECK(sim_f32_to_bf16(1.0f) == 0x3f80);
	CHECK(sim_f32_to_bf16(-2.5f) == 0xc020);
	CHECK(sim_f32_to_bf16(1.0f + ldexpf(1, -8)) == 0x3f80);     /* tie, even below */
	CHECK(sim_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)) == 0x3f82); /* tie, even above */
	CHECK(sim_f32_to_bf16(bitsf(0x3f808001u)) == 0x3f81);       /* just above the tie */
	CHECK(sim_f32_to_bf16(bitsf(0x3f807fffu)) == 0x3f80);       /* just below */
	CHECK(sim_f32_to_bf16(bitsf(0x7f7fffffu)) == 0x7f80);       /* FLT_MAX overflows */
	CHECK(sim_f32_to_bf16(bitsf(0x7f7f7fffu)) == 0x7f7f);
	CHECK(sim_f32_to_bf16(bitsf(0x00018000u)) == 0x0002); /* subnormal tie to even */
	CHECK(sim_f32_to_bf16(bitsf(0x00008000u)) == 0x0000);
	CHECK(sim_f32_to_bf16(bitsf(0x80000001u)) == 0x8000);
	CHECK(sim_f32_to_bf16(INFINITY) == 0x7f80);
	{
		uint16_t h = sim_f32_to_bf16(bitsf(0x7f800001u)); /* signalling NaN, low payload */
		CHECK((h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0);
		CHECK((sim_f32_to_bf16(-NAN) & 0x8000) != 0);
	}

	/* f16 -> f32 */
	CHECK(sim_f16_to_f32(0x3c00) == 1.0f);
	CHECK(sim_f16_to_f32(0xc100) == -2.5f);
	CHECK(sim_f16_to_f32(0x7bff) == 65504.0f);
	CHECK(sim_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
	CHECK(sim_f16_to_f32(0x03ff) == ldexpf(1023.0f, -24));
	CHECK(sim_f16_to_f32(0x0400) == ldexpf(1.0f, -14));
	CHECK(sim_f16_to_f32(0x8001) == -ldexpf(1.0f, -24));
	CHECK(isinf(sim_f16_to_f32(0x7c00)));
	CHECK(isnan(sim_f16_to_f32(0x7e00)) && isnan(sim_f16_to_f32(0x7c01)));
	CHECK(fbits(sim_f16_to_f32(0x8000)) == 0x80000000u);

	/* f32 -> f16 */
	CHECK(sim_f32_to_f16(1.0f) == 0x3c00);
	CHECK(sim_f32_to_f16(-2.5f) == 0xc100);
	CHECK(sim_f32_to_f16(65504.0f) == 0x7bff);
	CHECK(sim_f32_to_f16(65519.0f) == 0x7bff);
	CHECK(sim_f32_to_f16(65520.0f) == 0x7c00); /* tie between 65504 and 2^16: even = inf */
	CHECK(sim_f32_to_f16(-1e10f) == 0xfc00);
	CHECK(sim_f32_to_f16(1.0f + ldexpf(1, -11)) == 0x3c00);     /* tie, even below */
	CHECK(sim_f32_to_f16(1.0f + 3 * ldexpf(1, -11)) == 0x3c02); /* tie, even above */
	CHECK(sim_f32_to_f16(ldexpf(1, -14)) == 0x0400);
	CHECK(sim_f32_to_f16(ldexpf(1023, -24)) == 0x03ff);
	CHECK(sim_f32_to_f16(ldexpf(2047, -25)) == 0x0400); /* rounds up into the normals */
	CHECK(sim_f32_to_f16(ldexpf(1, -24)) == 0x0001);
	CHECK(sim_f32_to_f16(ldexpf(1, -25)) == 0x0000); /* tie: even is zero */
	CHECK(sim_f32_to_f16(ldexpf(3, -26)) == 0x0001); /* 0.75 ulp */
	CHECK(sim_f32_to_f16(ldexpf(3, -25)) == 0x0002); /* 1.5 ulp: tie to even */
	CHECK(sim_f32_to_f16(ldexpf(5, -25)) == 0x0002); /* 2.5 ulp: tie to even */
	CHECK(sim_f32_to_f16(-ldexpf(1, -30)) == 0x8000);
	CHECK(sim_f32_to_f16(bitsf(0x00000001u)) == 0x0000);
	CHECK(sim_f32_to_f16(-0.0f) == 0x8000);
	CHECK(sim_f32_to_f16(INFINITY) == 0x7c00);
	{
		uint16_t h = sim_f32_to_f16(bitsf(0x7f800001u));
		CHECK((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
	}

	/* Every f16 and bf16 value survives the round trip through f32 (NaN as some NaN), and
	 * the value between two neighbouring positives rounds to the even one. */
	{
		int bad16 = 0, badb = 0, badtie = 0;
		for (uint32_t h = 0; h < 0x10000; h++) {
			float f = sim_f16_to_f32((uint16_t)h);
			uint16_t back = sim_f32_to_f16(f);
			if (isnan(f) ? !isnan(sim_f16_to_f32(back)) : back != h)
				bad16++;
			float g = sim_bf16_to_f32((uint16_t)h);
			uint16_t backb = sim_f32_to_bf16(g);
			if (isnan(g) ? !isnan(sim_bf16_to_f32(backb)) : backb != h)
				badb++;
			if (h < 0x7bff) {
				double mid = ((double)f + sim_f16_to_f32((uint16_t)(h + 1))) / 2;
				uint16_t want = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
				if (sim_f32_to_f16((float)mid) != want)
					badtie++;
			}
		}
		CHECK_EQ(bad16, 0);
		CHECK_EQ(badb, 0);
		CHECK_EQ(badtie, 0);
	}
}

/* ---- mma.m16n8k16 ----
 *
 * Inverse maps from the PTX ISA tables (9.7.14.5.8): which lane and which element i (register
 * i / 2, half i % 2) hold a matrix element. groupID = lane / 4 runs over rows of A and C and
 * columns of B; threadID_in_group = lane % 4 over pairs of columns (A, C) or rows (B). */
static void
a_slot(int row, int col, int *lane, int *i)
{
	*lane = 4 * (row % 8) + (col % 8) / 2;
	*i = col % 2 + 2 * (row / 8) + 4 * (col / 8);
}

static void
b_slot(int k, int n, int *lane, int *i)
{
	*lane = 4 * n + (k % 8) / 2;
	*i = k % 2 + 2 * (k / 8);
}

static void
c_slot(int row, int col, int *lane, int *i)
{
	*lane = 4 * (row % 8) + col / 2;
	*i = col % 2 + 2 * (row / 8);
}

static void
put_half(uint32_t *regs, int i, uint16_t h)
{
	regs[i / 2] &= ~(0xffffu << (16 * (i % 2)));
	regs[i / 2] |= (uint32_t)h << (16 * (i % 2));
}

static void
test_mma(SimElem ab)
{
	float A[16][16], B[16][8], C[16][8];
	uint32_t a[32][4], b[32][2];
	float c[32][4], d[32][4];
	int lane, i, bad = 0;

	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	for (int r = 0; r < 16; r++)
		for (int k = 0; k < 16; k++) {
			A[r][k] = small();
			a_slot(r, k, &lane, &i);
			put_half(a[lane], i, pack(ab, A[r][k]));
		}
	for (int k = 0; k < 16; k++)
		for (int n = 0; n < 8; n++) {
			B[k][n] = small();
			b_slot(k, n, &lane, &i);
			put_half(b[lane], i, pack(ab, B[k][n]));
		}
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			C[r][n] = small() * 8;
			c_slot(r, n, &lane, &i);
			c[lane][i] = C[r][n];
		}
	sim_mma_m16n8k16(ab, (const uint32_t(*)[4])a, (const uint32_t(*)[2])b, (const float(*)[4])c,
	                 d);
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			double want = C[r][n];
			for (int k = 0; k < 16; k++)
				want += (double)A[r][k] * B[k][n];
			c_slot(r, n, &lane, &i);
			if (d[lane][i] != (float)want)
				bad++;
		}
	CHECK_EQ(bad, 0);

	/* d may be c itself: C is read before D is written. */
	float cd[32][4];
	memcpy(cd, c, sizeof cd);
	sim_mma_m16n8k16(ab, (const uint32_t(*)[4])a, (const uint32_t(*)[2])b,
	                 (const float(*)[4])cd, cd);
	CHECK(memcmp(cd, d, sizeof d) == 0);

	/* The sum is C plus the products one at a time in k order, rounded each step: with
	 * C = 2^24 every +1 is lost (ties to even), so D stays 2^24 rather than 2^24 + 16. */
	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	for (int r = 0; r < 16; r++)
		for (int k = 0; k < 16; k++) {
			a_slot(r, k, &lane, &i);
			put_half(a[lane], i, pack(ab, 1.0f));
		}
	for (int k = 0; k < 16; k++)
		for (int n = 0; n < 8; n++) {
			b_slot(k, n, &lane, &i);
			put_half(b[lane], i, pack(ab, 1.0f));
		}
	for (int l = 0; l < 32; l++)
		for (int j = 0; j < 4; j++)
			c[l][j] = 16777216.0f;
	sim_mma_m16n8k16(ab, (const uint32_t(*)[4])a, (const uint32_t(*)[2])b, (const float(*)[4])c,
	                 d);
	CHECK(d[0][0] == 16777216.0f && d[31][3] == 16777216.0f);
}

/* ---- ldmatrix ---- */

/* Element (row, col) of matrix j in the ldmatrix tests. */
static uint16_t
lm_val(int j, int row, int col)
{
	return (uint16_t)(0x1000 * (j + 1) + 0x100 * row + col);
}

static void
store_row(uint8_t *p, const uint16_t v[8])
{
	for (int c = 0; c < 8; c++) {
		p[2 * c] = (uint8_t)v[c];
		p[2 * c + 1] = (uint8_t)(v[c] >> 8);
	}
}

static void
test_ldmatrix(void)
{
	/* 32 rows at scattered places (row 8j + r of the x4 load at slot 31 - (8j + r), 32 bytes
	 * apart), so a model reading consecutive rows from one address would be caught. */
	static uint8_t mem[32 * 32], memt[32 * 32];
	const uint8_t *addr[32], *addrt[32];
	uint32_t out[32][4], outt[32][4];
	int bad = 0, badt = 0;

	for (int j = 0; j < 4; j++)
		for (int r = 0; r < 8; r++) {
			uint16_t v[8], vt[8];
			int slot = 31 - (8 * j + r);
			for (int c = 0; c < 8; c++) {
				v[c] = lm_val(j, r, c);
				vt[c] = lm_val(j, c, r); /* the transpose, stored */
			}
			store_row(mem + 32 * slot, v);
			store_row(memt + 32 * slot, vt);
			addr[8 * j + r] = mem + 32 * slot;
			addrt[8 * j + r] = memt + 32 * slot;
		}

	/* Without .trans: lane l, register j = matrix j's (l / 4, 2(l % 4)) and (.., +1). */
	sim_ldmatrix(4, false, addr, out);
	for (int l = 0; l < 32; l++)
		for (int j = 0; j < 4; j++)
			if (out[l][j] != ((uint32_t)lm_val(j, l / 4, 2 * (l % 4)) |
			                  (uint32_t)lm_val(j, l / 4, 2 * (l % 4) + 1) << 16))
				bad++;
	CHECK_EQ(bad, 0);

	/* .trans on M delivers what the plain load of M's transpose does, and vice versa. */
	sim_ldmatrix(4, true, addrt, outt);
	CHECK(memcmp(out, outt, sizeof out) == 0);
	sim_ldmatrix(4, true, addr, outt);
	sim_ldmatrix(4, false, addrt, out);
	CHECK(memcmp(out, outt, sizeof out) == 0);
	for (int l = 0; l < 32; l++)
		if (outt[l][1] != ((uint32_t)lm_val(1, 2 * (l % 4), l / 4) |
		                   (uint32_t)lm_val(1, 2 * (l % 4) + 1, l / 4) << 16))
			badt++;
	CHECK_EQ(badt, 0);

	/* .x1 / .x2 read only lanes 0-7 / 0-15 (the rest are NULL here) and leave the other
	 * registers alone. */
	{
		const uint8_t *part[32] = {0};
		for (int l = 0; l < 16; l++)
			part[l] = addr[l];
		for (int l = 0; l < 32; l++)
			for (int j = 0; j < 4; j++)
				out[l][j] = 0xdeadbeefu;
		sim_ldmatrix(1, false, part, out);
		CHECK(out[5][0] == ((uint32_t)lm_val(0, 1, 2) | (uint32_t)lm_val(0, 1, 3) << 16));
		CHECK(out[5][1] == 0xdeadbeefu && out[31][3] == 0xdeadbeefu);
		sim_ldmatrix(2, true, part, out);
		CHECK(out[6][1] == ((uint32_t)lm_val(1, 4, 1) | (uint32_t)lm_val(1, 5, 1) << 16));
		CHECK(out[6][2] == 0xdeadbeefu);
	}

	/* ldmatrix feeds mma: .x4 over a row-major 16x16 A (lane l -> row l % 16, col 8(l / 16))
	 * is the A fragment, .x2.trans over a row-major 16x8 (k x n) B is the B fragment. */
	{
		static uint8_t am[16 * 32], bm[16 * 16];
		uint32_t fa[32][4] = {{0}}, fb[32][4] = {{0}}, ra[32][4], rb[32][4];
		const uint8_t *pa[32], *pb[32] = {0};
		int lane, i, bada = 0, badb = 0;
		for (int r = 0; r < 16; r++)
			for (int k = 0; k < 16; k++) {
				uint16_t h = (uint16_t)(r * 16 + k);
				am[r * 32 + 2 * k] = (uint8_t)h;
				am[r * 32 + 2 * k + 1] = (uint8_t)(h >> 8);
				a_slot(r, k, &lane, &i);
				put_half(fa[lane], i, h);
			}
		for (int k = 0; k < 16; k++)
			for (int n = 0; n < 8; n++) {
				uint16_t h = (uint16_t)(0x8000 + k * 8 + n);
				bm[k * 16 + 2 * n] = (uint8_t)h;
				bm[k * 16 + 2 * n + 1] = (uint8_t)(h >> 8);
				b_slot(k, n, &lane, &i);
				put_half(fb[lane], i, h);
			}
		for (int l = 0; l < 32; l++)
			pa[l] = am + (l % 16) * 32 + 16 * (l / 16);
		for (int l = 0; l < 16; l++)
			pb[l] = bm + l * 16;
		sim_ldmatrix(4, false, pa, ra);
		sim_ldmatrix(2, true, pb, rb);
		for (int l = 0; l < 32; l++) {
			for (int j = 0; j < 4; j++)
				bada += ra[l][j] != fa[l][j];
			for (int j = 0; j < 2; j++)
				badb += rb[l][j] != fb[l][j];
		}
		CHECK_EQ(bada, 0);
		CHECK_EQ(badb, 0);
	}
}

/* ---- wgmma ---- */

static void
test_desc(void)
{
	uint64_t d = 0x1234u | (uint64_t)0x0567 << 16 | (uint64_t)0x0abc << 32 | (uint64_t)5 << 49 |
	             (uint64_t)2 << 62;
	/* reserved bits set: 14-15, 30-31, 46-48, 52-61 */
	d |= (uint64_t)3 << 14 | (uint64_t)3 << 30 | (uint64_t)7 << 46 | (uint64_t)0x3ff << 52;
	SimSmemDesc s = sim_smem_desc(d);
	CHECK(s.start == 0x12340 && s.lbo == 0x5670 && s.sbo == 0xabc0);
	CHECK(s.base_offset == 5 && s.swizzle == 2);
	s = sim_smem_desc((uint64_t)1 << 62 | 0x3fff);
	CHECK(s.swizzle == 1 && s.start == 0x3fff0 && s.lbo == 0 && s.base_offset == 0);
}

enum { SMEM = 1 << 16, A_AT = 0x0000, B_AT = 0x4000 };
static _Alignas(1024) uint8_t smem[SMEM];

/* How an operand tile is laid out. mode: 0 none, 1 128B, 2 64B, 3 32B (the descriptor's
 * encoding); tnsp: 0 K-major, 1 MN-major; var (mode 0 only): 0 the K-direction core matrices
 * adjacent, 1 the MN-direction ones adjacent. */
typedef struct Lay {
	int mode, tnsp, var;
} Lay;

static int
span_of(int mode)
{
	return mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 16;
}

/* The swizzle a TMA applies when writing: the 16-byte chunk index within a span-byte row is
 * XORed with the row index taken from the address bits just above 128 bytes (PTX ISA
 * "swizzling modes": 128B: bits [4:6] ^= [7:9], 64B: [4:5] ^= [7:8], 32B: 4 ^= 7). */
static uint32_t
tma_swizzle(uint32_t addr, int mode)
{
	uint32_t chunks = (uint32_t)span_of(mode) / 16;
	return mode ? addr ^ ((addr >> 7) & (chunks - 1)) << 4 : addr;
}

static void
put16(uint32_t addr, uint16_t h)
{
	if (addr + 2 > SMEM) {
		fprintf(stderr, "test bug: store at 0x%x\n", addr);
		abort();
	}
	smem[addr] = (uint8_t)h;
	smem[addr + 1] = (uint8_t)(h >> 8);
}

static uint64_t
mkdesc(uint32_t start, uint32_t lbo, uint32_t sbo, int mode)
{
	return (start >> 4 & 0x3fff) | (uint64_t)(lbo >> 4 & 0x3fff) << 16 |
	       (uint64_t)(sbo >> 4 & 0x3fff) << 32 | (uint64_t)mode << 62;
}

/* Write an R x bk operand (v[x * bk + k], x its M or N index) at T in layout L, and give the
 * descriptor of each k16 slice. The swizzled tiles are what a TMA box writes: K-major, one
 * span-byte row per x holding all bk elements; MN-major, one span-byte row per k holding
 * span / 2 consecutive x, the box repeated along x every bk rows. */
static void
place(uint32_t T, Lay L, int R, int bk, const float *v, SimElem ab, uint64_t desc[4])
{
	int span = span_of(L.mode);
	for (int x = 0; x < R; x++)
		for (int k = 0; k < bk; k++) {
			uint32_t a;
			uint32_t core = 16u * (uint32_t)(L.tnsp ? (k % 8) : (x % 8)) +
			                2u * (uint32_t)(L.tnsp ? (x % 8) : (k % 8));
			if (L.mode == 0 && L.var == 0) /* K groups of 8 adjacent (128 B apart) */
				a = T + (uint32_t)(x / 8) * (uint32_t)(bk / 8) * 128 +
				    (uint32_t)(k / 8) * 128 + core;
			else if (L.mode == 0) /* MN groups of 8 adjacent */
				a = T + (uint32_t)(k / 8) * (uint32_t)(R / 8) * 128 +
				    (uint32_t)(x / 8) * 128 + core;
			else if (!L.tnsp)
				a = tma_swizzle(T + (uint32_t)(x * span + 2 * k), L.mode);
			else
				a = tma_swizzle(T + (uint32_t)((x / (span / 2)) * bk * span +
				                               k * span + (x % (span / 2)) * 2),
				                L.mode);
			put16(a, pack(ab, v[x * bk + k]));
		}
	for (int s = 0; s < bk / 16; s++) {
		if (L.mode == 0) {
			/* core matrices: the K-direction step and the MN-direction step */
			uint32_t kstep = L.var == 0 ? 128 : (uint32_t)(R / 8) * 128;
			uint32_t mnstep = L.var == 0 ? (uint32_t)(bk / 8) * 128 : 128;
			/* K-major: LBO steps K, SBO steps MN; MN-major none: LBO steps K too
			 * ("offset from the first 8 columns to the next 8"), SBO steps MN. */
			desc[s] = mkdesc(T + 2 * kstep * (uint32_t)s, kstep, mnstep, 0);
		} else if (!L.tnsp) {
			/* LBO is unused for swizzled K-major: give it a junk value */
			desc[s] = mkdesc(T + 32 * (uint32_t)s, 0x1230, 8 * (uint32_t)span, L.mode);
		} else {
			desc[s] = mkdesc(T + 16 * (uint32_t)span * (uint32_t)s,
			                 (uint32_t)(bk * span), 8 * (uint32_t)span, L.mode);
		}
	}
}

/* Inverse accumulator map (Figure 149; CUTLASS CLayout_64xN): element (m, n) of D is register
 * 4(n / 8) + 2((m % 16) / 8) + n % 2 of lane 32(m / 16) + 4(m % 8) + (n % 8) / 2. */
static void
d_slot(int m, int n, int *lane, int *i)
{
	*lane = 32 * (m / 16) + 4 * (m % 8) + (n % 8) / 2;
	*i = 4 * (n / 8) + 2 * ((m % 16) / 8) + n % 2;
}

/* Inverse register-A map (Figure 148; CUTLASS ALayout_64x16): mma's A fragment per warp. */
static void
ra_slot(int m, int k, int *lane, int *i)
{
	a_slot(m % 16, k, lane, i);
	*lane += 32 * (m / 16);
}

static float Av[64 * 64], Bv[256 * 64]; /* Av[m * bk + k], Bv[n * bk + k] */
static float acc[128][128], ref[64][256];

typedef struct Case {
	int n, bk;
	SimElem ab;
	Lay la, lb;
	bool reg_a;
	int sa, sb;  /* imm-scale-a / -b */
	bool zero_c; /* first slice with scale-d = 0, over NaN accumulators */
} Case;

/* Run bk / 16 wgmmas over the tiles of one case; true when D equals the exact product. */
static bool
run_case(Case cs)
{
	uint64_t da[4] = {0}, db[4] = {0};
	char err[256];
	int lane, i, bad = 0;

	memset(smem, 0, sizeof smem);
	for (int m = 0; m < 64; m++)
		for (int k = 0; k < cs.bk; k++)
			Av[m * cs.bk + k] = small();
	for (int n = 0; n < cs.n; n++)
		for (int k = 0; k < cs.bk; k++)
			Bv[n * cs.bk + k] = small();
	for (int m = 0; m < 64; m++)
		for (int n = 0; n < cs.n; n++) {
			ref[m][n] = cs.zero_c ? 0.0f : small() * 8;
			d_slot(m, n, &lane, &i);
			acc[lane][i] = cs.zero_c ? NAN : ref[m][n];
		}
	if (!cs.reg_a)
		place(A_AT, cs.la, 64, cs.bk, Av, cs.ab, da);
	place(B_AT, cs.lb, cs.n, cs.bk, Bv, cs.ab, db);

	for (int s = 0; s < cs.bk / 16; s++) {
		uint32_t regs[128][4];
		memset(regs, 0, sizeof regs);
		if (cs.reg_a)
			for (int m = 0; m < 64; m++)
				for (int k = 0; k < 16; k++) {
					ra_slot(m, k, &lane, &i);
					put_half(regs[lane], i,
					         pack(cs.ab, Av[m * cs.bk + 16 * s + k]));
				}
		SimSmem sm = {smem, SMEM};
		err[0] = 0;
		if (!sim_wgmma(cs.n, cs.ab, &sm, da[s],
		               cs.reg_a ? (const uint32_t(*)[4])regs : NULL, db[s],
		               cs.reg_a ? 0 : cs.la.tnsp, cs.lb.tnsp, !(cs.zero_c && s == 0), cs.sa,
		               cs.sb, acc, err, sizeof err)) {
			fprintf(stderr, "sim_wgmma: %s\n", err);
			return false;
		}
	}
	for (int m = 0; m < 64; m++)
		for (int n = 0; n < cs.n; n++) {
			double want = ref[m][n];
			for (int k = 0; k < cs.bk; k++)
				want +=
				    (double)cs.sa * Av[m * cs.bk + k] * cs.sb * Bv[n * cs.bk + k];
			d_slot(m, n, &lane, &i);
			if (acc[lane][i] != (float)want)
				bad++;
		}
	if (bad)
		fprintf(stderr, "wgmma case n=%d bk=%d A(%d,%d,%d%s) B(%d,%d,%d): %d mismatches\n",
		        cs.n, cs.bk, cs.la.mode, cs.la.tnsp, cs.la.var, cs.reg_a ? " regs" : "",
		        cs.lb.mode, cs.lb.tnsp, cs.lb.var, bad);
	return bad == 0;
}

static const Lay KNONE0 = {0, 0, 0}, KNONE1 = {0, 0, 1}, K128 = {1, 0, 0}, K64 = {2, 0, 0},
                 K32 = {3, 0, 0}, MNNONE0 = {0, 1, 0}, MNNONE1 = {0, 1, 1}, MN128 = {1, 1, 0},
                 MN64 = {2, 1, 0}, MN32 = {3, 1, 0};

static void
test_wgmma_layouts(void)
{
	/* K-major, no swizzle: both arrangements of the core matrices, two k16 slices. */
	CHECK(run_case((Case){64, 32, SIM_BF16, KNONE0, KNONE0, false, 1, 1, false}));
	CHECK(run_case((Case){8, 32, SIM_F16, KNONE1, KNONE1, false, 1, 1, false}));
	/* K-major swizzled: a 128/64/32-byte row of K per M or N, the slices at start + 32s. */
	CHECK(run_case((Case){256, 64, SIM_BF16, K128, K128, false, 1, 1, false}));
	CHECK(run_case((Case){128, 32, SIM_F16, K64, K64, false, 1, 1, false}));
	CHECK(run_case((Case){24, 16, SIM_BF16, K32, K32, false, 1, 1, false}));
	/* MN-major: swizzled (B wider than one atom, so LBO steps atoms) and not. */
	CHECK(run_case((Case){256, 32, SIM_BF16, MN128, MN128, false, 1, 1, false}));
	CHECK(run_case((Case){8, 16, SIM_F16, MN128, MN128, false, 1, 1, false}));
	CHECK(run_case((Case){96, 16, SIM_F16, MN64, MN64, false, 1, 1, false}));
	CHECK(run_case((Case){40, 32, SIM_BF16, MN32, MN32, false, 1, 1, false}));
	CHECK(run_case((Case){16, 32, SIM_F16, MNNONE0, MNNONE1, false, 1, 1, false}));
	CHECK(run_case((Case){72, 16, SIM_BF16, MNNONE1, MNNONE0, false, 1, 1, false}));
	/* Mixed majorness, as a TN / NN GEMM has. */
	CHECK(run_case((Case){128, 64, SIM_BF16, K128, MN128, false, 1, 1, false}));
	CHECK(run_case((Case){64, 32, SIM_F16, MN64, K64, false, 1, 1, false}));
	/* A from registers. */
	CHECK(run_case((Case){64, 64, SIM_BF16, K128, K128, true, 1, 1, false}));
	CHECK(run_case((Case){192, 16, SIM_F16, K128, MN64, true, 1, 1, false}));
	/* scale-d = 0 ignores C (NaN here); imm-scale -1 negates. */
	CHECK(run_case((Case){32, 32, SIM_BF16, K128, K128, false, 1, 1, true}));
	CHECK(run_case((Case){32, 16, SIM_F16, K32, MN32, false, -1, 1, false}));
	CHECK(run_case((Case){16, 16, SIM_BF16, K64, K64, true, -1, -1, true}));
}

/* A descriptor address is taken modulo 2^18: an LBO of 2^18 - 0x100 steps back 0x100 bytes. */
static void
test_wgmma_wrap(void)
{
	SimSmem sm = {smem, SMEM};
	uint32_t T = 0x100, lbo = (1u << 18) - 0x100, sbo = 0x200;
	char err[256];
	int lane, i, bad = 0;

	memset(smem, 0, sizeof smem);
	memset(acc, 0, sizeof acc);
	/* A K-major no swizzle: K chunk 0 of row group g at T + g * SBO, chunk 1 0x100 below. */
	for (int m = 0; m < 64; m++)
		for (int k = 0; k < 16; k++) {
			Av[m * 16 + k] = small();
			uint32_t a = (k < 8 ? T : T - 0x100) + (uint32_t)(m / 8) * sbo +
			             (uint32_t)(m % 8) * 16 + (uint32_t)(k % 8) * 2;
			put16(a, pack(SIM_BF16, Av[m * 16 + k]));
		}
	/* B: 8 x 16, K-major 32B swizzle at B_AT. */
	for (int n = 0; n < 8; n++)
		for (int k = 0; k < 16; k++) {
			Bv[n * 16 + k] = small();
			put16(tma_swizzle(B_AT + (uint32_t)(n * 32 + 2 * k), 3),
			      pack(SIM_BF16, Bv[n * 16 + k]));
		}
	CHECK(sim_wgmma(8, SIM_BF16, &sm, mkdesc(T, lbo, sbo, 0), NULL, mkdesc(B_AT, 16, 256, 3), 0,
	                0, false, 1, 1, acc, err, sizeof err));
	for (int m = 0; m < 64; m++)
		for (int n = 0; n < 8; n++) {
			float want = 0;
			for (int k = 0; k < 16; k++)
				want += Av[m * 16 + k] * Bv[n * 16 + k];
			d_slot(m, n, &lane, &i);
			bad += acc[lane][i] != want;
		}
	CHECK_EQ(bad, 0);
}

static void
test_wgmma_errors(void)
{
	SimSmem sm = {smem, SMEM};
	uint64_t ka = mkdesc(A_AT, 16, 1024, 1), kb = mkdesc(B_AT, 16, 1024, 1);
	char err[256];

	for (int l = 0; l < 128; l++)
		for (int i = 0; i < 128; i++)
			acc[l][i] = 7.0f;

	/* A starts at the end of the 64 KiB window. */
	err[0] = 0;
	CHECK(!sim_wgmma(64, SIM_BF16, &sm, mkdesc(SMEM, 16, 1024, 1), NULL, kb, 0, 0, true, 1, 1,
	                 acc, err, sizeof err));
	CHECK(strstr(err, "outside") != NULL);
	CHECK(acc[0][0] == 7.0f && acc[127][31] == 7.0f); /* nothing written */
	/* B's last rows run past the window (n = 256 rows of 128 bytes from 0xc000). */
	err[0] = 0;
	CHECK(!sim_wgmma(256, SIM_BF16, &sm, ka, NULL, mkdesc(0xc000, 16, 1024, 1), 0, 0, true, 1,
	                 1, acc, err, sizeof err));
	CHECK(strstr(err, "B element") != NULL);
	/* A wrapped address lands at 2^18 - 16, far outside a 64 KiB window. */
	CHECK(!sim_wgmma(8, SIM_F16, &sm, mkdesc(0, (1u << 18) - 16, 128, 0), NULL, kb, 0, 0, true,
	                 1, 1, acc, err, sizeof err));
	/* A window smaller than the data. */
	SimSmem small_sm = {smem, 1024};
	CHECK(!sim_wgmma(8, SIM_BF16, &small_sm, ka, NULL, kb, 0, 0, true, 1, 1, acc, err,
	                 sizeof err));
	/* Bad shapes and immediates. */
	CHECK(!sim_wgmma(12, SIM_BF16, &sm, ka, NULL, kb, 0, 0, true, 1, 1, acc, err, sizeof err));
	CHECK(!sim_wgmma(264, SIM_BF16, &sm, ka, NULL, kb, 0, 0, true, 1, 1, acc, err, sizeof err));
	CHECK(!sim_wgmma(0, SIM_BF16, &sm, ka, NULL, kb, 0, 0, true, 1, 1, acc, err, sizeof err));
	CHECK(!sim_wgmma(8, SIM_F32, &sm, ka, NULL, kb, 0, 0, true, 1, 1, acc, err, sizeof err));
	CHECK(!sim_wgmma(8, SIM_BF16, &sm, ka, NULL, kb, 0, 0, true, 2, 1, acc, err, sizeof err));
	CHECK(!sim_wgmma(8, SIM_BF16, &sm, ka, NULL, kb, 0, 2, true, 1, 1, acc, err, sizeof err));
	{
		static uint32_t regs[128][4];
		CHECK(!sim_wgmma(8, SIM_BF16, &sm, 0, (const uint32_t(*)[4])regs, kb, 1, 0, true, 1,
		                 1, acc, err, sizeof err));
	}
	/* A non-zero base offset with a swizzle is rejected (not modelled); err may be NULL. */
	CHECK(!sim_wgmma(8, SIM_BF16, &sm, ka | (uint64_t)3 << 49, NULL, kb, 0, 0, true, 1, 1, acc,
	                 NULL, 0));
	CHECK(acc[0][0] == 7.0f && acc[127][127] == 7.0f);
	/* ... and ignored without one ("valid for all swizzling modes except no-swizzle"). */
	CHECK(sim_wgmma(8, SIM_BF16, &sm, mkdesc(A_AT, 128, 256, 0) | (uint64_t)3 << 49, NULL, kb,
	                0, 0, true, 1, 1, acc, err, sizeof err));
}

int
main(void)
{
	test_conversions();
	test_mma(SIM_BF16);
	test_mma(SIM_F16);
	test_ldmatrix();
	test_desc();
	test_wgmma_layouts();
	test_wgmma_wrap();
	test_wgmma_errors();
	return unit_summary();
}
