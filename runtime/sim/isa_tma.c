/* isa_tma.c — cp.async.bulk.tensor in tile mode, global to shared: the box a tensor map and a
 * coordinate select, with out-of-bounds fill and the shared-memory swizzle, modelled from the
 * CUDA driver's description of cuTensorMapEncodeTiled / CUtensorMapSwizzle and the PTX ISA's
 * tensor-copy sections, independently of the NVPTX backend. */
#include <stdio.h>
#include <string.h>

#include "isa.h"

/* Reports msg (a format taking one unsigned long long, or none) and returns 0. */
static size_t
bad(char *err, size_t errlen, const char *msg, unsigned long long v)
{
	if (err && errlen)
		snprintf(err, errlen, msg, v);
	return 0;
}

/* The checks cuTensorMapEncodeTiled makes on what the map holds (CUDA driver API, "Tensor Map
 * Object Management"): rank 1..5 (interleave is always none here), element size 1/2/4/8, a
 * 16-byte-aligned base, dims in 1..2^32, strides multiples of 16 below 2^40, box sizes 1..256
 * with the inner one a multiple of 16 bytes, and, for a swizzle, an inner box of at most the
 * swizzle span ("the inner dimension of the box must be <= the swizzle size"). One check is the
 * model's own: a swizzle moves 16-byte chunks within a span-aligned span of the destination, so
 * a box whose bytes are not a whole number of spans would be swizzled past its end; the
 * hardware's behaviour there is not documented, so such maps are refused rather than guessed
 * at. (Every box with the inner dimension equal to the span passes.) */
static size_t
check_map(const SimTensorMap *m, char *err, size_t errlen)
{
	if (!m)
		return bad(err, errlen, "tensor map: null map", 0);
	if (m->magic != SIM_TMAP_MAGIC)
		return bad(err, errlen, "tensor map: bad magic 0x%llx", m->magic);
	if (m->rank < 1 || m->rank > 5)
		return bad(err, errlen, "tensor map: rank %llu outside 1..5", m->rank);
	uint32_t eb = m->elem_bytes;
	if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
		return bad(err, errlen, "tensor map: element size %llu is not 1, 2, 4 or 8", eb);
	if (m->swizzle != 0 && m->swizzle != 32 && m->swizzle != 64 && m->swizzle != 128)
		return bad(err, errlen, "tensor map: swizzle %llu is not 0, 32, 64 or 128",
		           m->swizzle);
	if (m->oob_nan > 1)
		return bad(err, errlen, "tensor map: oob fill %llu is not 0 or 1", m->oob_nan);
	if (m->base % 16)
		return bad(err, errlen, "tensor map: base 0x%llx not 16-byte aligned", m->base);
	size_t total = eb;
	for (uint32_t d = 0; d < m->rank; d++) {
		if (m->dims[d] < 1 || m->dims[d] > (1ull << 32))
			return bad(err, errlen, "tensor map: dimension size %llu outside 1..2^32",
			           m->dims[d]);
		if (m->box[d] < 1 || m->box[d] > 256)
			return bad(err, errlen, "tensor map: box size %llu outside 1..256",
			           m->box[d]);
		if (d > 0 && (m->strides[d - 1] % 16 || m->strides[d - 1] >= (1ull << 40)))
			return bad(err, errlen,
			           "tensor map: stride %llu not a multiple of 16 below 2^40",
			           m->strides[d - 1]);
		total *= m->box[d];
	}
	uint64_t inner = (uint64_t)m->box[0] * eb;
	if (inner % 16)
		return bad(err, errlen, "tensor map: inner box of %llu bytes not a multiple of 16",
		           inner);
	if (m->swizzle && inner > m->swizzle)
		return bad(err, errlen,
		           "tensor map: inner box of %llu bytes exceeds the swizzle span", inner);
	if (m->swizzle && total % m->swizzle)
		return bad(err, errlen,
		           "tensor map: box of %llu bytes is not a whole number of swizzle spans",
		           total);
	return total;
}

/* Where the byte at offset o of the box lands in shared memory. The swizzle modes are XORs of
 * address bits: the 16-byte chunk index within the span (bits 4 .. 4+b-1, b = log2(span / 16))
 * takes the XOR of bits 7 .. 7+b-1, i.e. of the index of the 128-byte line, so the pattern
 * repeats every 8 spans (256, 512, 1024 bytes). That is CUTLASS's Swizzle<b,4,3> for
 * CU_TENSOR_MAP_SWIZZLE_{32,64,128}B (cute/atom/copy_traits_sm90_tma_swizzle.hpp) and the
 * repeat lengths of the CUDA programming guide's TMA swizzle table and the PTX ISA's swizzling
 * figures. For rows of exactly the span (the common case) bits 7.. are the row index for 128B
 * only: with 64B rows, two rows share one 128-byte line and one XOR value. The hardware takes the
 * bits of the shared address; the model takes them of the offset in dst, i.e. dst stands for an
 * address aligned to the repeat (the alignment the CUDA guide asks of a swizzled destination). */
static size_t
swizzled(size_t o, uint32_t swizzle)
{
	if (!swizzle)
		return o;
	size_t mask = swizzle / 16 - 1;
	return o ^ (((o >> 7) & mask) << 4);
}

/* The fill of an out-of-bounds element: zeros, or a NaN in every float format of that size.
 * The map carries no data type, so the NaN is 0x7f followed by all-ones bytes (little endian:
 * all-ones low bytes, 0x7f top byte): a quiet NaN as f64, f32, f16 and bf16, and NaN as e4m3
 * and e5m2 (0x7f). The hardware's exact NaN bits are not documented (CUDA names the mode
 * CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA); a NaN test sees one either way. */
static void
fill(uint8_t *p, uint32_t eb, bool nan)
{
	memset(p, nan ? 0xff : 0, eb);
	if (nan)
		p[eb - 1] = 0x7f;
}

size_t
sim_tma_load(const SimTensorMap *m, const int32_t coord[5], uint8_t *dst, char *err, size_t errlen)
{
	size_t total = check_map(m, err, errlen);
	if (!total)
		return 0;
	if (!coord || !dst)
		return bad(err, errlen, "tma load: null coordinates or destination", 0);
	uint32_t rank = m->rank, eb = m->elem_bytes;
	uint32_t box[5] = {1, 1, 1, 1, 1};
	for (uint32_t d = 0; d < rank; d++)
		box[d] = m->box[d];
	const uint8_t *g = (const uint8_t *)(uintptr_t)m->base;

	/* Walk the box innermost first; dst offset o is the packed box position. */
	uint32_t i[5] = {0, 0, 0, 0, 0};
	for (size_t o = 0; o < total; o += eb) {
		bool in = true;
		uint64_t off = 0;
		for (uint32_t d = 0; d < rank; d++) {
			int64_t x = (int64_t)coord[d] + i[d];
			if (x < 0 || (uint64_t)x >= m->dims[d]) {
				in = false;
				break;
			}
			off += d ? (uint64_t)x * m->strides[d - 1] : (uint64_t)x * eb;
		}
		uint8_t *p = dst + swizzled(o, m->swizzle);
		if (in)
			memcpy(p, g + off, eb);
		else
			fill(p, eb, m->oob_nan);
		for (uint32_t d = 0; d < 5 && ++i[d] == box[d]; d++)
			i[d] = 0;
	}
	return total;
}
