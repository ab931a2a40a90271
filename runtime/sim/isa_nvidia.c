/* isa_nvidia.c — the NVIDIA primitives of isa.h (scalar conversions, mma.sync m16n8k16, ldmatrix,
 * wgmma descriptors and wgmma.mma_async m64nNk16), written from the PTX ISA (8.x/9.x) and,
 * where the ISA only has a figure, from CUTLASS's transcription of that figure. Deliberately
 * independent of backend-nvptx/ and lower/: a disagreement with them is what we look for. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "isa.h"

/* ---- scalar conversions ---- */

static uint32_t
f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float
bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* bf16 is the upper half of an f32: every bf16 value, NaNs and subnormals included, is exact. */
float
sim_bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. Every value is exact in f32;
 * subnormals (exponent 0) are renormalised, NaN payloads kept in the top fraction bits. */
float
sim_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;

	if (exp == 0x1f)
		return bits_f32(sign | 0x7f800000u | man << 13);
	if (exp != 0)
		return bits_f32(sign | (exp + 112) << 23 | man << 13);
	if (man == 0)
		return bits_f32(sign);
	/* Subnormal: man * 2^-24. Shift the leading one up to bit 10 (the implicit bit). */
	exp = 113;
	while (!(man & 0x400)) {
		man <<= 1;
		exp--;
	}
	return bits_f32(sign | exp << 23 | (man & 0x3ff) << 13);
}

/* Round to nearest even by adding 0x7fff plus the lowest kept bit: a tie rounds up exactly
 * when the kept part is odd, and a carry out of the fraction steps the exponent (to infinity
 * from the largest finite values, which is the right overflow). NaN is kept quiet and signed. */
uint16_t
sim_f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)(u >> 16 | 0x0040);
	u += 0x7fff + (u >> 16 & 1);
	return (uint16_t)(u >> 16);
}

/* Keep the top `shift` bits of m rounded to nearest even (shift in 1..31). */
static uint32_t
rne_shift(uint32_t m, int shift)
{
	uint32_t q = m >> shift;
	uint32_t rem = m & ((1u << shift) - 1);
	uint32_t half = 1u << (shift - 1);

	if (rem > half || (rem == half && (q & 1)))
		q++;
	return q;
}

uint16_t
sim_f32_to_f16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
	int e = (int)(u >> 23 & 0xff) - 127;
	uint32_t man = u & 0x7fffff;

	if (e == 128) /* inf or NaN: NaN stays a quiet NaN with the top payload bits */
		return man ? (uint16_t)(sign | 0x7e00 | man >> 13) : (uint16_t)(sign | 0x7c00);
	if (e >= 16)
		return sign | 0x7c00;
	if (e >= -14) {
		/* Normal range: the rounding carry may step the exponent, up to 0x7c00 (infinity)
		 * for values at or above 65520. */
		uint32_t h = (uint32_t)(e + 15) << 10 | man >> 13;
		uint32_t rem = man & 0x1fff;
		if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	/* Subnormal result in units of 2^-24: (1.man * 2^e) / 2^-24 = (man | 1 << 23) >> -(e + 1).
	 * f32 subnormals (e == -127) and anything below 2^-26 round to zero. A carry into bit 10
	 * gives the smallest normal, which is the right encoding. */
	if (e < -25)
		return sign;
	return (uint16_t)(sign | rne_shift(man | 0x800000, -(e + 1)));
}

/* One 16-bit element of a packed register or of memory, as f32. */
static float
elem_f32(SimElem ab, uint16_t h)
{
	return ab == SIM_BF16 ? sim_bf16_to_f32(h) : sim_f16_to_f32(h);
}

static uint16_t
load_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* ---- mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 ----
 *
 * PTX ISA 9.7.14.5.8, "Matrix Fragments for mma.m16n8k16 with floating point type", with
 * groupID g = lane >> 2 and threadID_in_group t = lane % 4, element i of a fragment being the
 * lower (even i) or upper (odd i) half of register i / 2:
 *   A a0..a7: row g for i in {0,1,4,5}, g + 8 otherwise; col 2t + (i & 1) (+ 8 for i >= 4)
 *   B b0..b3: row 2t + (i & 1) (+ 8 for i >= 2); col g
 *   C c0..c3: row g (+ 8 for i >= 2); col 2t + (i & 1)
 * Products of two bf16/f16 values are exact in f32; they are added to c one by one in k order,
 * each addition rounded to f32 (the hardware's internal order and precision are not
 * documented; the model fixes this order so that its results are reproducible). */
void
sim_mma_m16n8k16(SimElem ab, const uint32_t a[32][4], const uint32_t b[32][2], const float c[32][4],
                 float d[32][4])
{
	float am[16][16], bm[16][8], cm[16][8];

	assert(ab == SIM_BF16 || ab == SIM_F16);
	for (int l = 0; l < 32; l++) {
		int g = l >> 2, t = l & 3;
		for (int i = 0; i < 8; i++) {
			uint16_t h = (uint16_t)(a[l][i / 2] >> (16 * (i & 1)));
			int row = g + ((i & 2) ? 8 : 0);
			int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
			am[row][col] = elem_f32(ab, h);
		}
		for (int i = 0; i < 4; i++) {
			uint16_t h = (uint16_t)(b[l][i / 2] >> (16 * (i & 1)));
			bm[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = elem_f32(ab, h);
		}
		/* C is gathered whole before D is written, so c and d may be the same array. */
		for (int i = 0; i < 4; i++)
			cm[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = c[l][i];
	}
	for (int l = 0; l < 32; l++) {
		int g = l >> 2, t = l & 3;
		for (int i = 0; i < 4; i++) {
			int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
			float acc = cm[row][col];
			for (int k = 0; k < 16; k++)
				acc += am[row][k] * bm[k][col];
			d[l][i] = acc;
		}
	}
}

/* ---- ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 ----
 *
 * PTX ISA 9.7.14.5.15: lanes 8j..8j+7 supply the addresses of rows 0..7 of matrix j (16 bytes
 * each); lane l receives in register j the elements (row l / 4, cols 2(l % 4) and 2(l % 4) + 1),
 * the lower column in the lower half. With .trans the matrix delivered is the transpose of the
 * one in memory: element (row, col) is memory row col, element row. Registers j >= num are
 * not written. Elements are little endian in memory, as in shared memory. */
void
sim_ldmatrix(int num, bool trans, const uint8_t *const row_addr[32], uint32_t out[32][4])
{
	assert(num == 1 || num == 2 || num == 4);
	for (int j = 0; j < num; j++) {
		const uint8_t *const *rows = row_addr + 8 * j;
		for (int l = 0; l < 32; l++) {
			int r = l / 4, c = 2 * (l % 4);
			uint16_t lo, hi;
			if (!trans) {
				lo = load_u16(rows[r] + 2 * c);
				hi = load_u16(rows[r] + 2 * (c + 1));
			} else {
				lo = load_u16(rows[c] + 2 * r);
				hi = load_u16(rows[c + 1] + 2 * r);
			}
			out[l][j] = (uint32_t)lo | (uint32_t)hi << 16;
		}
	}
}

/* ---- wgmma descriptors (PTX ISA 9.7.15.5.1.2.2, "Matrix Descriptor Format") ----
 *
 * bits 0-13 start address >> 4, 16-29 leading dimension byte offset >> 4, 32-45 stride
 * dimension byte offset >> 4, 49-51 matrix base offset, 62-63 swizzle mode (0 none, 1 128B,
 * 2 64B, 3 32B). The other bits are reserved and ignored. */
SimSmemDesc
sim_smem_desc(uint64_t d)
{
	SimSmemDesc s;
	s.start = (uint32_t)(d & 0x3fff) << 4;
	s.lbo = (uint32_t)(d >> 16 & 0x3fff) << 4;
	s.sbo = (uint32_t)(d >> 32 & 0x3fff) << 4;
	s.base_offset = (int)(d >> 49 & 7);
	s.swizzle = (int)(d >> 62 & 3);
	return s;
}

/* Address bits the swizzle XORs: mode 1 (128B) 3 bits, 2 (64B) 2 bits, 3 (32B) 1 bit, 0 none. */
static const int swz_bits[4] = {0, 3, 2, 1};

/* Byte offset from the start address of element (x, k) of an operand, x its M or N index and
 * k in 0..15, before the swizzle. PTX ISA 9.7.15.5.1.2.1.3 "Canonical Layouts" (CuTe notation,
 * T = 8 16-bit elements = 16 bytes, s the swizzle bits, span = 16 << s bytes):
 *   K-major,  none:  ((8,m),(T,2k)):((1T,SBO),(1,LBO))
 *   K-major,  s > 0: ((8,m),(T,2k)):((2^s T,SBO),(1,T))       LBO unused ("assumed 1")
 *   MN-major, none:  ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
 *   MN-major, s > 0: ((T,2^s,m),(8,k)):((1,T,LBO),(2^s T,SBO))
 * i.e. a core matrix is 8 rows of 16 bytes; K-major none: SBO steps 8 MN rows, LBO the second
 * 16-byte K chunk; K-major swizzled: MN rows are span bytes apart, SBO steps 8 of them, K is
 * contiguous within the row; MN-major none: SBO steps 8 MN elements, LBO 8 K rows; MN-major
 * swizzled: a K row holds span / 2 MN elements, LBO steps to the next span / 2 MN elements,
 * K rows are span bytes apart and SBO steps 8 of them. Matches CUTLASS make_gmma_desc
 * (cute/atom/mma_traits_sm90_gmma.hpp). */
static uint32_t
operand_offset(int tnsp, int s, uint32_t lbo, uint32_t sbo, int x, int k)
{
	uint32_t span = 16u << s;
	uint32_t xu = (uint32_t)x, ku = (uint32_t)k;

	if (!tnsp) {
		if (!s)
			return xu % 8 * 16 + xu / 8 * sbo + ku % 8 * 2 + ku / 8 * lbo;
		return xu % 8 * span + xu / 8 * sbo + ku * 2;
	}
	if (!s)
		return xu % 8 * 2 + xu / 8 * sbo + ku % 8 * 16 + ku / 8 * lbo;
	return xu % (span / 2) * 2 + xu / (span / 2) * lbo + ku % 8 * span + ku / 8 * sbo;
}

/* The swizzle as CuTe's Swizzle<s,4,3> on the byte address: bits [4, 4+s) ^= bits [7, 7+s)
 * (128B: [4:6] ^= [7:9], 64B: [4:5] ^= [7:8], 32B: 4 ^= 7), the 16-byte chunk within a span
 * permuted by the row. It is applied to the whole shared address, not to the offset from the
 * start: the ISA anchors the pattern to absolute 1024/512/256-byte boundaries (the base offset
 * field exists for patterns that do not start on one, 9.7.15.5.1.2.2), and that is what lets
 * a start address advanced within a swizzled row (start + 32 for the second k16 slice of a
 * 128-byte row, as CUTLASS and TMA-fed kernels do) read the chunks a TMA put there. */
static uint32_t
swizzle(uint32_t addr, int s)
{
	uint32_t mask = (1u << s) - 1;
	return addr ^ (addr >> 7 & mask) << 4;
}

enum { SMEM_WINDOW = 1 << 18 };

/* Decode one shared-memory operand into rows x 16 floats, out[x * xs + k * ks], scaled by
 * scale (the imm-scale, +1 or -1: exact). */
static bool
load_operand(const SimSmem *sm, uint64_t desc, int tnsp, int rows, SimElem ab, float scale,
             float *out, int xs, int ks, const char *name, char *err, size_t errlen)
{
	SimSmemDesc d = sim_smem_desc(desc);
	int s = swz_bits[d.swizzle];

	/* The ISA defines base offset only by how to compute it for a pattern that does not
	 * start on its boundary, not how the hardware applies it; rather than guess, reject it.
	 * ("valid for all swizzling modes except the no-swizzle mode": ignored there.) */
	if (s && d.base_offset) {
		snprintf(err, errlen, "wgmma: %s descriptor base offset %d is not modelled", name,
		         d.base_offset);
		return false;
	}
	for (int x = 0; x < rows; x++) {
		for (int k = 0; k < 16; k++) {
			uint32_t off = operand_offset(tnsp, s, d.lbo, d.sbo, x, k);
			uint32_t addr = swizzle((d.start + off) % SMEM_WINDOW, s);
			if ((size_t)addr + 2 > sm->size) {
				snprintf(
				    err, errlen,
				    "wgmma: %s element (%s %d, k %d) at shared address 0x%x is "
				    "outside the shared memory window of 0x%zx bytes",
				    name, name[0] == 'A' ? "m" : "n", x, k, addr, sm->size);
				return false;
			}
			out[x * xs + k * ks] = scale * elem_f32(ab, load_u16(sm->base + addr));
		}
	}
	return true;
}

/* ---- wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} ----
 *
 * Register fragments (PTX ISA 9.7.15.5.1.1.1; the ISA gives them only as Figures 148/149, whose
 * formulas below are CUTLASS's CLayout_64xN / ALayout_64x16 in mma_traits_sm90_gmma.hpp): lane
 * l of the warpgroup is lane ll = l % 32 of warp w = l / 32, g = ll / 4, t = ll % 4;
 *   D d_i (i < N/2): row 16w + g (+ 8 if i & 2), col 8(i / 4) + 2t + (i & 1)
 *   A a_i (i < 8, register i / 2, lower half first): row 16w + g (+ 8 if i & 2),
 *     col 2t + (i & 1) (+ 8 for i >= 4) — mma.m16n8k16's A fragment, one warp per 16 rows.
 * B (N x 16) and a shared-memory A (64 x 16) are read through their descriptors; tnsp 1 is
 * the MN-major layout. Register A takes no transpose (the ISA has no imm-trans-a for it), so
 * tnsp_a must be 0 there. Accumulation as sim_mma_m16n8k16: D = C (or 0) + products, in k
 * order, rounded to f32 at each step. On an error nothing is written to acc. */
bool
sim_wgmma(int n, SimElem ab, const SimSmem *sm, uint64_t desc_a, const uint32_t (*a_regs)[4],
          uint64_t desc_b, int tnsp_a, int tnsp_b, bool scale_d, int imm_scale_a, int imm_scale_b,
          float (*acc)[128], char *err, size_t errlen)
{
	/* am[m][k], bm[k][n] with n contiguous: the product below runs along rows of D, which
	 * vectorises while each element still sums in k order. */
	float am[64][16], bm[16][256];

	if (!err || !errlen) {
		static char sink[1];
		err = sink;
		errlen = sizeof sink;
	}
	if (n < 8 || n > 256 || n % 8) {
		snprintf(err, errlen, "wgmma: n %d is not a multiple of 8 in 8..256", n);
		return false;
	}
	if (ab != SIM_BF16 && ab != SIM_F16) {
		snprintf(err, errlen, "wgmma: element type %d is not bf16 or f16", (int)ab);
		return false;
	}
	if ((imm_scale_a != 1 && imm_scale_a != -1) || (imm_scale_b != 1 && imm_scale_b != -1)) {
		snprintf(err, errlen, "wgmma: imm-scale-a %d / imm-scale-b %d is not 1 or -1",
		         imm_scale_a, imm_scale_b);
		return false;
	}
	if ((tnsp_a != 0 && tnsp_a != 1) || (tnsp_b != 0 && tnsp_b != 1) || (a_regs && tnsp_a)) {
		snprintf(err, errlen, "wgmma: bad imm-trans-a %d / imm-trans-b %d%s", tnsp_a,
		         tnsp_b, a_regs ? " (A in registers takes no transpose)" : "");
		return false;
	}
	if (!sm || !sm->base) {
		snprintf(err, errlen, "wgmma: no shared memory window");
		return false;
	}

	if (a_regs) {
		for (int l = 0; l < 128; l++) {
			int w = l / 32, g = l % 32 / 4, t = l % 4;
			for (int i = 0; i < 8; i++) {
				uint16_t h = (uint16_t)(a_regs[l][i / 2] >> (16 * (i & 1)));
				int row = 16 * w + g + ((i & 2) ? 8 : 0);
				int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
				am[row][col] = (float)imm_scale_a * elem_f32(ab, h);
			}
		}
	} else if (!load_operand(sm, desc_a, tnsp_a, 64, ab, (float)imm_scale_a, &am[0][0], 16, 1,
	                         "A", err, errlen)) {
		return false;
	}
	if (!load_operand(sm, desc_b, tnsp_b, n, ab, (float)imm_scale_b, &bm[0][0], 1, 256, "B",
	                  err, errlen))
		return false;

	/* The four lanes 32w + 4g + t (t = 0..3) hold rows 16w + g and 16w + g + 8 of D: gather
	 * the two rows, multiply, scatter them back. Register 4q + j of lane t is column
	 * 8q + 2t + (j & 1) of the row j < 2 ? 16w + g : 16w + g + 8 (d_i above). */
	for (int w = 0; w < 4; w++) {
		for (int g = 0; g < 8; g++) {
			float d[2][256];
			for (int t = 0; t < 4; t++) {
				const float *r = acc[32 * w + 4 * g + t];
				for (int q = 0; q < n / 8; q++) {
					int col = 8 * q + 2 * t;
					d[0][col] = scale_d ? r[4 * q] : 0.0f;
					d[0][col + 1] = scale_d ? r[4 * q + 1] : 0.0f;
					d[1][col] = scale_d ? r[4 * q + 2] : 0.0f;
					d[1][col + 1] = scale_d ? r[4 * q + 3] : 0.0f;
				}
			}
			for (int h = 0; h < 2; h++) {
				const float *ar = am[16 * w + g + 8 * h];
				/* 8 columns at a time in a register-sized block: a fixed
				 * trip count the compilers vectorise, k order kept */
				for (int c0 = 0; c0 < n; c0 += 8) {
					float v[8];
					for (int c = 0; c < 8; c++)
						v[c] = d[h][c0 + c];
					for (int k = 0; k < 16; k++)
						for (int c = 0; c < 8; c++)
							v[c] += ar[k] * bm[k][c0 + c];
					for (int c = 0; c < 8; c++)
						d[h][c0 + c] = v[c];
				}
			}
			for (int t = 0; t < 4; t++) {
				float *r = acc[32 * w + 4 * g + t];
				for (int q = 0; q < n / 8; q++) {
					int col = 8 * q + 2 * t;
					r[4 * q] = d[0][col];
					r[4 * q + 1] = d[0][col + 1];
					r[4 * q + 2] = d[1][col];
					r[4 * q + 3] = d[1][col + 1];
				}
			}
		}
	}
	return true;
}
