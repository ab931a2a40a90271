/* isa.h — the hardware primitives of the simulated targets, modelled from the vendors' ISA
 * documents (PTX ISA 8.x, the CDNA3/CDNA2 ISA guides, the CUDA driver's tensor-map description),
 * independently of the backends' lowering code: the simulator (runtime/sim) checks what the
 * backends emit against these. Pure functions over per-lane register values and host memory; no
 * LLVM, no scheduling. */
#ifndef AVE_SIM_ISA_H
#define AVE_SIM_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Element types of matrix operands. */
typedef enum SimElem {
	SIM_BF16,
	SIM_F16,
	SIM_F32,
	SIM_TF32,
	SIM_E4M3,
	SIM_E5M2,
} SimElem;

/* Scalar conversions (round to nearest even; NaN stays NaN). */
float sim_bf16_to_f32(uint16_t h);
float sim_f16_to_f32(uint16_t h);
uint16_t sim_f32_to_bf16(float f);
uint16_t sim_f32_to_f16(float f);

/* ---- NVIDIA: warp-level mma.sync and ldmatrix (PTX ISA 9.7.14.5) ---- */

/* mma.sync.aligned.m16n8k16.row.col.f32.<ab>.<ab>.f32 over one warp: lane l holds a[l][0..3]
 * (each register two 16-bit elements, the lower half first), b[l][0..1] and c[l][0..3]; the
 * result d[l][0..3] is c + A·B with the fragment layouts of the PTX ISA figures. ab: SIM_BF16 or
 * SIM_F16. */
void sim_mma_m16n8k16(SimElem ab, const uint32_t a[32][4], const uint32_t b[32][2],
                      const float c[32][4], float d[32][4]);

/* ldmatrix.sync.aligned.m8n8.x<num>[.trans].shared.b16 over one warp: row_addr[l] is the
 * address lane l supplies (lanes 8j..8j+7 the eight 16-byte rows of matrix j; for num < 4 the
 * other lanes' addresses are not read); out[l][j] is lane l's register for matrix j. */
void sim_ldmatrix(int num, bool trans, const uint8_t *const row_addr[32], uint32_t out[32][4]);

/* ---- NVIDIA: wgmma.mma_async (PTX ISA 9.7.15) ---- */

/* A shared-memory matrix descriptor decoded (start address and offsets in bytes). */
typedef struct SimSmemDesc {
	uint32_t start; /* bits 0-13, << 4 */
	uint32_t lbo;   /* leading dimension byte offset, bits 16-29, << 4 */
	uint32_t sbo;   /* stride dimension byte offset, bits 32-45, << 4 */
	int base_offset; /* bits 49-51 */
	int swizzle;    /* bits 62-63: 0 none, 1 128B, 2 64B, 3 32B */
} SimSmemDesc;
SimSmemDesc sim_smem_desc(uint64_t d);

/* The shared-memory window of the CTA: a descriptor's 18-bit address (start plus the layout's
 * offsets, modulo 2^18) is an offset in it, read at base + offset; an offset at or past `size`
 * is an error. The swizzle applies to the offset's bits, so `base` is aligned to 1024 bytes at
 * least (the simulator aligns it to 2^18). */
typedef struct SimSmem {
	uint8_t *base;
	size_t size;
} SimSmem;

/* One wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<ab>.<ab> over a warpgroup (128 lanes):
 * acc[l][0..n/2-1] are lane l's accumulator registers (in: C, out: D = scale_d ? C + A·B : A·B),
 * in the accumulator fragment layout of the PTX ISA. A comes from shared memory through desc_a
 * (a_regs == NULL) or from registers a_regs[l][0..3] (the register fragment layout); B from
 * desc_b. tnsp_a / tnsp_b: the transpose immediates (0: K-major). imm_scale_a/b: 1 or -1.
 * Returns false with a reason in err (an address outside the window, a bad n) instead of reading
 * out of bounds. */
bool sim_wgmma(int n, SimElem ab, const SimSmem *sm, uint64_t desc_a, const uint32_t (*a_regs)[4],
               uint64_t desc_b, int tnsp_a, int tnsp_b, bool scale_d, int imm_scale_a,
               int imm_scale_b, float (*acc)[128], char *err, size_t errlen);

/* ---- NVIDIA: TMA (cp.async.bulk.tensor) ---- */

/* The simulator's tensor map: what the runtime encodes for a simulated device from the same
 * description it gives cuTensorMapEncodeTiled (docs/targets.md). 128 bytes. */
typedef struct SimTensorMap {
	uint32_t magic;        /* SIM_TMAP_MAGIC */
	uint32_t rank;         /* 1..5 */
	uint32_t elem_bytes;   /* 1, 2, 4 or 8 */
	uint32_t swizzle;      /* 0 none, 32, 64 or 128 (bytes) */
	uint64_t base;         /* global address */
	uint64_t dims[5];      /* elements per dimension, innermost first */
	uint64_t strides[4];   /* byte strides of dimensions 1..rank-1 */
	uint32_t box[5];       /* box size per dimension, innermost first */
	uint32_t oob_nan;      /* out-of-bounds fill: 0 zeros, 1 NaN */
} SimTensorMap;
#define SIM_TMAP_MAGIC 0x50414d54u /* "TMAP" */

/* cp.async.bulk.tensor.<rank>d.shared::cluster.global.tile: copies the box at coord (signed
 * element coordinates, innermost first) from global memory into dst (shared memory), laid out
 * box-innermost-first with the map's swizzle; elements outside dims are filled per oob_nan. The
 * swizzle XORs the 16-byte chunk index within each span of `swizzle` bytes with the row index
 * (address bits as the PTX ISA's swizzle modes give). Returns the bytes written (the transaction
 * count the mbarrier sees), or 0 with a reason in err for a malformed map. */
size_t sim_tma_load(const SimTensorMap *m, const int32_t coord[5], uint8_t *dst, char *err,
                    size_t errlen);

/* ---- AMDGPU: MFMA (CDNA2 gfx90a, CDNA3 gfx942) ---- */

typedef enum SimMfma {
	SIM_MFMA_32X32X8_BF16_1K,  /* v_mfma_f32_32x32x8bf16_1k (gfx90a) / _32x32x8_bf16 (gfx942) */
	SIM_MFMA_16X16X16_BF16_1K, /* v_mfma_f32_16x16x16bf16_1k / _16x16x16_bf16 */
	SIM_MFMA_32X32X8_F16,
	SIM_MFMA_16X16X16_F16,
	SIM_MFMA_32X32X2_F32,
	SIM_MFMA_16X16X4_F32,
	SIM_MFMA_COUNT,
} SimMfma;

/* The instruction named by an LLVM intrinsic suffix ("f32.32x32x8bf16.1k"), or -1. */
int sim_mfma_find(const char *llvm_suffix);
/* Registers per lane: a and b in 32-bit registers (1 or 2), c/d in floats (4 or 16). */
int sim_mfma_ab_regs(SimMfma m);
int sim_mfma_acc_regs(SimMfma m);

/* One MFMA over a 64-lane wavefront: a[l] / b[l] lane l's operand registers (packed 16-bit
 * elements, low half first, or one f32), c[l] / d[l] its accumulators; cbsz, abid, blgp the
 * broadcast controls (the backends pass 0; others are modelled or rejected through err). gfx: 90
 * (gfx90a) or 94 (gfx942), where their layouts differ. */
bool sim_mfma(SimMfma m, int gfx, const uint32_t a[64][2], const uint32_t b[64][2],
              const float c[64][16], float d[64][16], int cbsz, int abid, int blgp, char *err,
              size_t errlen);

#endif
