/* isa_amd.c — the six single-block MFMA instructions of CDNA2 (gfx90a) and CDNA3 (gfx942) over a
 * 64-lane wavefront: which lane and register holds which element of A, B and C/D, and the
 * product. Modelled from AMD's documents, not from backend-amdgpu/, so that a lowering bug shows
 * up as a disagreement with this file. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "isa.h"

/* The register layouts, for an instruction of M = N = mn (32 or 16), depth K, and E elements of
 * A (and of B) per lane (E = 4 for the 16-bit types, two per 32-bit register with the lower half
 * first; E = 1 for f32). Let G = 64 / mn, the lane groups:
 *
 *   A[i][k]  lane i + mn * (k / E), element k % E
 *   B[k][j]  lane j + mn * (k / E), element k % E
 *   D[i][j]  lane j + mn * ((i / 4) % G), accumulator register 4 * (i / (4 * G)) + i % 4
 *
 * so K = G * E, and C has D's layout. Sources: the matrix fused-multiply-add chapters of the
 * CDNA3 and CDNA2 ISA guides; the tables of AMD's matrix instruction calculator
 * (ROCm/amd_matrix_instruction_calculator, `matrix_calculator.py -a cdna2|cdna3 -i <inst>
 * -A|-B|-D -R`), against which the three formulas above were checked entry by entry for all six
 * instructions on both architectures; the ROCm blog "AMD matrix cores" (its worked examples).
 *
 * gfx90a and gfx942 agree on all of these layouts: the calculator gives identical tables for
 * cdna2 and cdna3 (CDNA3 renamed the bf16 instructions, dropping "_1k", and LLVM kept one
 * intrinsic name for both). They differ in one modifier: BLGP, which CDNA3 no longer accepts on
 * the f16 and bf16 instructions (the calculator's 'blgp': False for them), so `gfx` decides
 * whether a nonzero blgp is modelled or rejected. */

typedef struct MfmaInfo {
	const char *suffix; /* after "llvm.amdgcn.mfma." */
	int mn;             /* M = N */
	int k;
	SimElem ab;
} MfmaInfo;

static const MfmaInfo mfma_tab[SIM_MFMA_COUNT] = {
    [SIM_MFMA_32X32X8_BF16_1K] = {"f32.32x32x8bf16.1k", 32, 8, SIM_BF16},
    [SIM_MFMA_16X16X16_BF16_1K] = {"f32.16x16x16bf16.1k", 16, 16, SIM_BF16},
    [SIM_MFMA_32X32X8_F16] = {"f32.32x32x8f16", 32, 8, SIM_F16},
    [SIM_MFMA_16X16X16_F16] = {"f32.16x16x16f16", 16, 16, SIM_F16},
    [SIM_MFMA_32X32X2_F32] = {"f32.32x32x2f32", 32, 2, SIM_F32},
    [SIM_MFMA_16X16X4_F32] = {"f32.16x16x4f32", 16, 4, SIM_F32},
};

int
sim_mfma_find(const char *llvm_suffix)
{
	if (!llvm_suffix)
		return -1;
	for (int m = 0; m < SIM_MFMA_COUNT; m++)
		if (!strcmp(llvm_suffix, mfma_tab[m].suffix))
			return m;
	return -1;
}

/* Elements of A (and of B) per lane. */
static int
per_lane(const MfmaInfo *in)
{
	return in->ab == SIM_F32 ? 1 : 4;
}

int
sim_mfma_ab_regs(SimMfma m)
{
	if ((unsigned)m >= SIM_MFMA_COUNT)
		return 0;
	return per_lane(&mfma_tab[m]) == 4 ? 2 : 1;
}

int
sim_mfma_acc_regs(SimMfma m)
{
	if ((unsigned)m >= SIM_MFMA_COUNT)
		return 0;
	return mfma_tab[m].mn * mfma_tab[m].mn / 64;
}

/* Element e of a lane's operand registers as a float. */
static float
operand(SimElem ab, const uint32_t r[2], int e)
{
	if (ab == SIM_F32) {
		float f;
		memcpy(&f, &r[0], sizeof f);
		return f;
	}
	uint16_t h = (uint16_t)(r[e / 2] >> (16 * (e % 2)));
	return ab == SIM_BF16 ? sim_bf16_to_f32(h) : sim_f16_to_f32(h);
}

/* The lane whose B registers lane l's B operand is read from under BLGP (the "B matrix lane
 * group pattern"): the CDNA2/CDNA3 ISA guides' BLGP table, as the matrix instruction
 * calculator's _get_blgp_transformed_lane states it (one meaning on CDNA2 and, for the f32
 * instructions that still take it, on CDNA3):
 *   0 as is, 1 lanes 0-31 to both halves, 2 lanes 32-63 to both halves, 3 rotate down by 16
 *   (lane l reads lane l + 16 mod 64), 4..7 lanes 16*(blgp-4).. +15 to all four groups. */
static int
blgp_lane(int l, int blgp)
{
	switch (blgp) {
	case 1:
		return l % 32;
	case 2:
		return 32 + l % 32;
	case 3:
		return (l + 16) % 64;
	case 4:
	case 5:
	case 6:
	case 7:
		return 16 * (blgp - 4) + l % 16;
	default:
		return l;
	}
}

static bool
fail(char *err, size_t errlen, const char *msg, int v)
{
	if (err && errlen)
		snprintf(err, errlen, msg, v);
	return false;
}

/* D = C + A·B. The products are summed in K order into the f32 accumulator, one fused
 * multiply-add (fmaf) per step: the documents do not give the hardware's internal order or
 * intermediate precision. (For bf16 and f16 every product is exact in f32, so fmaf and a
 * multiply then add agree; tests that need an exact answer use values whose sums are exact.)
 * Denormal inputs are taken as they are (no flush): the MODE register's denormal controls are
 * not modelled. d[l][r] depends on c only through c[l][r] and is written after it is read, so d
 * may be c. No allocation: the operands are unpacked into two arrays on the stack. */
bool
sim_mfma(SimMfma m, int gfx, const uint32_t a[64][2], const uint32_t b[64][2],
         const float c[64][16], float d[64][16], int cbsz, int abid, int blgp, char *err,
         size_t errlen)
{
	if ((unsigned)m >= SIM_MFMA_COUNT)
		return fail(err, errlen, "unknown mfma instruction %d", (int)m);
	if (gfx != 90 && gfx != 94)
		return fail(err, errlen, "mfma: gfx '%d' is neither 90 (gfx90a) nor 94 (gfx942)",
		            gfx);
	/* CBSZ/ABID broadcast one block of A to the other blocks; these instructions have one block
	 * and the calculator marks them as not taking CBSZ/ABID. */
	if (cbsz)
		return fail(err, errlen, "mfma: cbsz %d on a single-block instruction", cbsz);
	if (abid)
		return fail(err, errlen, "mfma: abid %d on a single-block instruction", abid);
	if (blgp < 0 || blgp > 7)
		return fail(err, errlen, "mfma: blgp %d is outside 0..7", blgp);
	const MfmaInfo *in = &mfma_tab[m];
	if (blgp && gfx == 94 && in->ab != SIM_F32)
		return fail(err, errlen, "mfma: gfx942 takes no blgp (%d) on f16/bf16 instructions",
		            blgp);

	int mn = in->mn, kk = in->k, e_n = per_lane(in), g = 64 / mn;
	float av[256], bv[256]; /* A[i][k] at i * K + k, B[k][j] at k * N + j; M * K <= 256 */

	for (int l = 0; l < 64; l++) {
		int lb = blgp_lane(l, blgp);
		for (int e = 0; e < e_n; e++) {
			int k = (l / mn) * e_n + e;
			av[(l % mn) * kk + k] = operand(in->ab, a[l], e);
			bv[k * mn + l % mn] = operand(in->ab, b[lb], e);
		}
	}
	int nacc = mn * mn / 64;
	for (int l = 0; l < 64; l++) {
		int j = l % mn;
		for (int r = 0; r < nacc; r++) {
			int i = 4 * g * (r / 4) + 4 * (l / mn) + r % 4;
			float acc = c[l][r];
			for (int k = 0; k < kk; k++)
				acc = fmaf(av[i * kk + k], bv[k * mn + j], acc);
			d[l][r] = acc;
		}
	}
	return true;
}
