/* layout.h — where the elements of a tile live: distributed register layouts (linear layouts over
 * GF(2)) and shared-memory layouts with swizzles. Pure arithmetic on IR types, no LLVM: the
 * lowering, the passes (smem-alloc) and register planning (regalloc/) share it, so a tile's size
 * in registers or bytes has one definition. */
#ifndef AVE_LAYOUT_H
#define AVE_LAYOUT_H

#include "../ir/ir.h"

enum {
	LOWER_MAX_RANK = 3,
	LOWER_MAX_BITS = 14, /* per kind: 2^14 registers, lanes or warps at most */
	LOWER_MAX_REGS = 4096 /* registers of one fragment; beyond that a tile is too large */
};

typedef enum LowerBitKind { LOWER_REG, LOWER_LANE, LOWER_WARP, LOWER_BIT_KINDS } LowerBitKind;

typedef enum LowerLayoutKind {
	LOWER_BLOCKED, /* 16-byte vectors along the contiguous dimension, lanes, then warps */
	LOWER_MMA_ACC, /* a target's accumulator fragment, tiled */
	LOWER_MMA_A,   /* a target's A-operand register fragment, tiled */
	LOWER_MMA_B,   /* a target's B-operand register fragment, tiled */
	LOWER_SLICED,  /* a reduction's result: a parent layout with one dimension collapsed */
	LOWER_OTHER,
	LOWER_LAYOUT_KINDS
} LowerLayoutKind;

/* A distributed layout of a register tile (a linear layout over GF(2)). Every dimension of the
 * shape is a power of two. Register r of lane l of warp w holds the element whose coordinates
 * are the XOR of the bases of the bits set in r, l and w. A zero lane or warp basis replicates
 * (those threads hold the same elements); register bases are never zero. "Warp" is the target's
 * warp or wavefront; warps count from the first warp of the executing group (CTA or role
 * replica). */
typedef struct LowerLayout {
	LowerLayoutKind kind;
	int rank;
	int64_t shape[LOWER_MAX_RANK];
	int nbits[LOWER_BIT_KINDS];
	int32_t basis[LOWER_BIT_KINDS][LOWER_MAX_BITS][LOWER_MAX_RANK];
} LowerLayout;

/* An instruction's fragment (an "atom"): the rows x cols tile one warp (or a warpgroup: atoms
 * may use warp bits) holds, described by the bases of the register, lane and warp bits it
 * uses, in 2-D (row, col). */
typedef struct LowerAtom {
	int64_t rows, cols;
	int nbits[LOWER_BIT_KINDS];
	int32_t basis[LOWER_BIT_KINDS][8][2];
} LowerAtom;

int lower_log2(int64_t v); /* exact log2 of a power of two, else -1 */
int lower_layout_nregs(const LowerLayout *l);
/* The 32-bit registers per thread a tile of `elem_bytes`-byte elements takes in layout l: its
 * bytes per thread over 4, rounded up (16-bit elements pair up, 64-bit ones take two). Register
 * planning (regalloc/) sizes tiles with it. */
int lower_layout_regs32(const LowerLayout *l, int elem_bytes);
/* The blocked layout of `shape` for 2^lane_bits lanes and 2^warp_bits warps: vectors of up to 16
 * bytes along the last dimension, lanes fastest-dimension first, warps slowest-dimension first,
 * then registers repeat. False when a dimension is not a power of two or the fragment would
 * exceed LOWER_MAX_REGS registers. */
bool lower_layout_blocked(LowerLayout *l, int rank, const int64_t *shape, int elem_bytes,
			  int lane_bits, int warp_bits);
/* Tiles a 2-D shape with an atom. Of the warp bits the atom does not use, up to `warp_m_bits` go
 * along rows and the rest along columns (what does not fit replicates); registers repeat the
 * atom over what is left, columns first. False when the shape is not a multiple of the atom. */
bool lower_layout_tiled(LowerLayout *l, LowerLayoutKind kind, const int64_t shape[2],
			const LowerAtom *a, int lane_bits, int warp_bits, int warp_m_bits);
/* Coordinates of register `reg` in lane `lane` of warp `warp`. */
void lower_layout_coord(const LowerLayout *l, uint32_t reg, uint32_t lane, uint32_t warp,
			int64_t *coord);
/* Checks that the layout maps (register, lane, warp) onto the tile: every element is held, and
 * held once up to replication. Writes the reason into why on failure. */
bool lower_layout_check(const LowerLayout *l, char *why, size_t n);
/* The layout of the tile with dimension `dim` collapsed to 1 (a reduction's result, a
 * broadcast's source): register bits along `dim` disappear, lane and warp bits along it
 * replicate. regmap (nregs(l) entries, may be NULL) receives, for each register of l, the
 * register of the result holding the collapsed element. */
void lower_layout_slice(const LowerLayout *l, int dim, LowerLayout *out, int *regmap);
void lower_layout_transpose(const LowerLayout *l, LowerLayout *out); /* rank 2 */
bool lower_layout_equal(const LowerLayout *a, const LowerLayout *b);
/* When `to` holds in every thread the same elements as `from` (equal lane and warp bases and the
 * same set of register bases), fills perm[r] = the register of `from` that holds what register r
 * of `to` holds, and returns true. */
bool lower_layout_regperm(const LowerLayout *from, const LowerLayout *to, int *perm);
/* True when every basis points along one dimension and no two share a bit, so coordinates can be
 * added instead of XORed. */
bool lower_layout_disjoint(const LowerLayout *l);
/* Number of leading register bits that walk consecutive elements along dimension `dim` from
 * element 0 (the widest vector the layout allows there), and whether thread offsets along `dim`
 * keep vectors aligned. */
int lower_layout_vec_bits(const LowerLayout *l, int dim);
/* Prints the layout (bases) for diagnostics and tests. */
void lower_layout_print(const LowerLayout *l, FILE *out);

/* How a shared-memory tile is laid out. The dimension order[0] is contiguous; the others form
 * rows. A row is cut into panels `panel_elems` wide (the swizzle span, or the whole row); a
 * panel holds every row, `row_bytes` apart, and panels are `panel_bytes` apart. With a swizzle
 * of S bytes the 16-byte chunks of each address are XORed with address bits 7.. (CUTLASS
 * Swizzle<log2(S/16), 4, 3>, the TMA and wgmma 32/64/128-byte swizzles): offsets are taken from a
 * base aligned to `align`. */
typedef struct LowerSmemLayout {
	int rank;
	int64_t shape[LOWER_MAX_RANK];
	int order[LOWER_MAX_RANK];
	int esize;
	int swizzle;
	int64_t pad;
	int64_t panel_elems, row_bytes, panel_bytes;
	int64_t bytes; /* footprint */
	int64_t align;
} LowerSmemLayout;

/* The layout of an smem tile type: its `#ave.smem`/`#ave.pad` attribute, or the default (the
 * widest swizzle that divides the row, row-major). False for shapes it cannot lay out. */
bool lower_smem_layout(IrCtx *c, const IrType *tile, LowerSmemLayout *out);
int64_t lower_smem_offset(const LowerSmemLayout *s, const int64_t *coord);
/* A row-major rows x cols staging buffer of `es`-byte elements, with the widest swizzle (128, 64
 * or 32 bytes) that divides a row when `swizzle` (and the tile has more than one row), aligned to
 * at least 128 bytes: how MMA operands are staged in shared memory. */
void lower_stage_layout(LowerSmemLayout *s, int64_t rows, int64_t cols, int es, bool swizzle);
int64_t lower_smem_swizzle(int swizzle, int64_t off);
/* Bytes of one element of a scalar type in memory (i1 takes a byte). */
int lower_elem_bytes(const IrType *t);

#endif
