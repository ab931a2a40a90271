/* layout.c — the arithmetic of distributed tile layouts (linear layouts over GF(2)) and of
 * shared-memory tile layouts with swizzles. No LLVM here: the lowering builds code from these
 * descriptions, and the unit tests check them element by element. */
#include <string.h>

#include "layout.h"

int
lower_log2(int64_t v)
{
	if (v <= 0 || (v & (v - 1)))
		return -1;
	int k = 0;
	while (((int64_t)1 << k) < v)
		k++;
	return k;
}

int
lower_layout_nregs(const LowerLayout *l)
{
	return 1 << l->nbits[LOWER_REG];
}

int
lower_layout_regs32(const LowerLayout *l, int elem_bytes)
{
	int64_t bytes = (int64_t)lower_layout_nregs(l) * elem_bytes;
	return (int)((bytes + 3) / 4);
}

static void
push(LowerLayout *l, LowerBitKind k, int dim, int64_t val)
{
	int32_t *b = l->basis[k][l->nbits[k]++];
	memset(b, 0, sizeof(int32_t) * LOWER_MAX_RANK);
	if (dim >= 0)
		b[dim] = (int32_t)val;
}

static bool
shape_bits(int rank, const int64_t *shape, int *bits)
{
	if (rank < 1 || rank > LOWER_MAX_RANK)
		return false;
	for (int d = 0; d < rank; d++)
		if ((bits[d] = lower_log2(shape[d])) < 0 || bits[d] > 24)
			return false;
	return true;
}

bool
lower_layout_blocked(LowerLayout *l, int rank, const int64_t *shape, int elem_bytes, int lane_bits,
                     int warp_bits)
{
	int left[LOWER_MAX_RANK], used[LOWER_MAX_RANK] = {0};
	memset(l, 0, sizeof *l);
	if (!shape_bits(rank, shape, left))
		return false;
	l->kind = LOWER_BLOCKED;
	l->rank = rank;
	memcpy(l->shape, shape, sizeof(int64_t) * (size_t)rank);
	int last = rank - 1;
	/* Vector: up to 16 bytes along the last dimension. */
	int vec = lower_log2(16 / (elem_bytes > 0 && elem_bytes <= 16 ? elem_bytes : 16));
	if (vec > left[last])
		vec = left[last];
	for (int i = 0; i < vec; i++)
		push(l, LOWER_REG, last, (int64_t)1 << used[last]++);
	left[last] -= vec;
	/* Lanes: fastest dimension first. */
	for (int d = last; d >= 0; d--)
		while (left[d] && l->nbits[LOWER_LANE] < lane_bits) {
			push(l, LOWER_LANE, d, (int64_t)1 << used[d]++);
			left[d]--;
		}
	while (l->nbits[LOWER_LANE] < lane_bits)
		push(l, LOWER_LANE, -1, 0);
	/* Warps: slowest dimension first. */
	for (int d = 0; d < rank; d++)
		while (left[d] && l->nbits[LOWER_WARP] < warp_bits) {
			push(l, LOWER_WARP, d, (int64_t)1 << used[d]++);
			left[d]--;
		}
	while (l->nbits[LOWER_WARP] < warp_bits)
		push(l, LOWER_WARP, -1, 0);
	/* Registers repeat over the rest, fastest dimension first. */
	for (int d = last; d >= 0; d--)
		while (left[d]) {
			if (l->nbits[LOWER_REG] >= LOWER_MAX_BITS ||
			    (1 << (l->nbits[LOWER_REG] + 1)) > LOWER_MAX_REGS)
				return false;
			push(l, LOWER_REG, d, (int64_t)1 << used[d]++);
			left[d]--;
		}
	return true;
}

bool
lower_layout_tiled(LowerLayout *l, LowerLayoutKind kind, const int64_t shape[2], const LowerAtom *a,
                   int lane_bits, int warp_bits, int warp_m_bits)
{
	int sb[2];
	memset(l, 0, sizeof *l);
	if (!shape_bits(2, shape, sb) || lower_log2(a->rows) < 0 || lower_log2(a->cols) < 0 ||
	    shape[0] % a->rows || shape[1] % a->cols || a->nbits[LOWER_LANE] != lane_bits ||
	    a->nbits[LOWER_WARP] > warp_bits)
		return false;
	l->kind = kind;
	l->rank = 2;
	l->shape[0] = shape[0];
	l->shape[1] = shape[1];
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = 0; i < a->nbits[k]; i++) {
			int32_t *b = l->basis[k][l->nbits[k]++];
			b[0] = a->basis[k][i][0];
			b[1] = a->basis[k][i][1];
		}
	int left_m = sb[0] - lower_log2(a->rows), left_n = sb[1] - lower_log2(a->cols);
	int64_t next_m = a->rows, next_n = a->cols;
	int free_w = warp_bits - a->nbits[LOWER_WARP];
	for (int i = 0; i < free_w; i++) {
		if (i < warp_m_bits && left_m) {
			push(l, LOWER_WARP, 0, next_m);
			next_m <<= 1;
			left_m--;
		} else if (left_n) {
			push(l, LOWER_WARP, 1, next_n);
			next_n <<= 1;
			left_n--;
		} else if (left_m) {
			push(l, LOWER_WARP, 0, next_m);
			next_m <<= 1;
			left_m--;
		} else {
			push(l, LOWER_WARP, -1, 0);
		}
	}
	while (left_n || left_m) {
		if (l->nbits[LOWER_REG] >= LOWER_MAX_BITS ||
		    (1 << (l->nbits[LOWER_REG] + 1)) > LOWER_MAX_REGS)
			return false;
		if (left_n) {
			push(l, LOWER_REG, 1, next_n);
			next_n <<= 1;
			left_n--;
		} else {
			push(l, LOWER_REG, 0, next_m);
			next_m <<= 1;
			left_m--;
		}
	}
	return true;
}

void
lower_layout_coord(const LowerLayout *l, uint32_t reg, uint32_t lane, uint32_t warp, int64_t *coord)
{
	uint32_t idx[LOWER_BIT_KINDS] = {reg, lane, warp};
	for (int d = 0; d < l->rank; d++)
		coord[d] = 0;
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = 0; i < l->nbits[k]; i++)
			if (idx[k] >> i & 1)
				for (int d = 0; d < l->rank; d++)
					coord[d] ^= l->basis[k][i][d];
}

/* Flattens the coordinates bitwise: the shape's bits, dimension 0 highest. */
static uint64_t
flat_bits(const LowerLayout *l, const int32_t *b)
{
	uint64_t v = 0;
	for (int d = 0; d < l->rank; d++)
		v = (v << lower_log2(l->shape[d])) | (uint32_t)b[d];
	return v;
}

bool
lower_layout_check(const LowerLayout *l, char *why, size_t n)
{
	int total = 0;
	for (int d = 0; d < l->rank; d++) {
		int b = lower_log2(l->shape[d]);
		if (b < 0) {
			snprintf(why, n, "dimension %d (%lld) is not a power of two", d,
			         (long long)l->shape[d]);
			return false;
		}
		total += b;
	}
	/* Gaussian elimination over GF(2) on the non-zero bases; register bases must be non-zero.
	 */
	uint64_t rows[3 * LOWER_MAX_BITS];
	int nrows = 0;
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = 0; i < l->nbits[k]; i++) {
			for (int d = 0; d < l->rank; d++)
				if (l->basis[k][i][d] < 0 || l->basis[k][i][d] >= l->shape[d]) {
					snprintf(why, n, "basis %d of kind %d is outside the tile",
					         i, k);
					return false;
				}
			uint64_t v = flat_bits(l, l->basis[k][i]);
			if (!v) {
				if (k == LOWER_REG) {
					snprintf(why, n, "register bit %d has a zero basis", i);
					return false;
				}
				continue;
			}
			rows[nrows++] = v;
		}
	int rank = 0;
	for (int bit = 63; bit >= 0; bit--) {
		int piv = -1;
		for (int r = rank; r < nrows; r++)
			if (rows[r] >> bit & 1) {
				piv = r;
				break;
			}
		if (piv < 0)
			continue;
		uint64_t t = rows[piv];
		rows[piv] = rows[rank];
		rows[rank] = t;
		for (int r = 0; r < nrows; r++)
			if (r != rank && (rows[r] >> bit & 1))
				rows[r] ^= t;
		rank++;
	}
	if (rank != nrows) {
		snprintf(why, n, "two (register, lane, warp) combinations hold the same element");
		return false;
	}
	if (rank != total) {
		snprintf(why, n, "the layout holds %d of the tile's %d coordinate bits", rank,
		         total);
		return false;
	}
	return true;
}

void
lower_layout_slice(const LowerLayout *l, int dim, LowerLayout *out, int *regmap)
{
	LowerLayout r = *l;
	r.kind = LOWER_SLICED;
	r.shape[dim] = 1;
	int keep[LOWER_MAX_BITS], nkeep = 0;
	for (int k = 0; k < LOWER_BIT_KINDS; k++) {
		int n = 0;
		for (int i = 0; i < l->nbits[k]; i++) {
			int32_t b[LOWER_MAX_RANK];
			memcpy(b, l->basis[k][i], sizeof b);
			b[dim] = 0;
			bool zero = true;
			for (int d = 0; d < l->rank; d++)
				zero &= b[d] == 0;
			if (k == LOWER_REG && zero)
				continue;
			if (k == LOWER_REG)
				keep[nkeep++] = i;
			memcpy(r.basis[k][n++], b, sizeof b);
		}
		r.nbits[k] = n;
	}
	if (regmap)
		for (int reg = 0; reg < lower_layout_nregs(l); reg++) {
			int v = 0;
			for (int j = 0; j < nkeep; j++)
				v |= (reg >> keep[j] & 1) << j;
			regmap[reg] = v;
		}
	*out = r;
}

void
lower_layout_transpose(const LowerLayout *l, LowerLayout *out)
{
	LowerLayout r = *l;
	r.shape[0] = l->shape[1];
	r.shape[1] = l->shape[0];
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = 0; i < l->nbits[k]; i++) {
			r.basis[k][i][0] = l->basis[k][i][1];
			r.basis[k][i][1] = l->basis[k][i][0];
		}
	if (r.kind != LOWER_BLOCKED)
		r.kind = LOWER_OTHER;
	*out = r;
}

static bool
basis_eq(const int32_t *a, const int32_t *b, int rank)
{
	return !memcmp(a, b, sizeof(int32_t) * (size_t)rank);
}

bool
lower_layout_equal(const LowerLayout *a, const LowerLayout *b)
{
	if (a->rank != b->rank || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank))
		return false;
	for (int k = 0; k < LOWER_BIT_KINDS; k++) {
		if (a->nbits[k] != b->nbits[k])
			return false;
		for (int i = 0; i < a->nbits[k]; i++)
			if (!basis_eq(a->basis[k][i], b->basis[k][i], a->rank))
				return false;
	}
	return true;
}

bool
lower_layout_regperm(const LowerLayout *from, const LowerLayout *to, int *perm)
{
	if (from->rank != to->rank ||
	    memcmp(from->shape, to->shape, sizeof(int64_t) * (size_t)from->rank))
		return false;
	for (int k = LOWER_LANE; k < LOWER_BIT_KINDS; k++) {
		if (from->nbits[k] != to->nbits[k])
			return false;
		for (int i = 0; i < from->nbits[k]; i++)
			if (!basis_eq(from->basis[k][i], to->basis[k][i], from->rank))
				return false;
	}
	int n = to->nbits[LOWER_REG];
	if (from->nbits[LOWER_REG] != n)
		return false;
	int map[LOWER_MAX_BITS];
	for (int i = 0; i < n; i++) {
		map[i] = -1;
		for (int j = 0; j < n && map[i] < 0; j++)
			if (basis_eq(to->basis[LOWER_REG][i], from->basis[LOWER_REG][j], to->rank))
				map[i] = j;
		if (map[i] < 0)
			return false;
	}
	for (int r = 0; r < (1 << n); r++) {
		int v = 0;
		for (int i = 0; i < n; i++)
			v |= (r >> i & 1) << map[i];
		perm[r] = v;
	}
	return true;
}

bool
lower_layout_disjoint(const LowerLayout *l)
{
	int64_t seen[LOWER_MAX_RANK] = {0};
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = 0; i < l->nbits[k]; i++) {
			int dims = 0;
			for (int d = 0; d < l->rank; d++) {
				int32_t v = l->basis[k][i][d];
				if (!v)
					continue;
				if (v & (v - 1) || (seen[d] & v))
					return false;
				seen[d] |= v;
				dims++;
			}
			if (dims > 1)
				return false;
		}
	return true;
}

int
lower_layout_vec_bits(const LowerLayout *l, int dim)
{
	int v = 0;
	while (v < l->nbits[LOWER_REG]) {
		const int32_t *b = l->basis[LOWER_REG][v];
		bool ok = b[dim] == (int32_t)1 << v;
		for (int d = 0; d < l->rank; d++)
			ok &= d == dim || b[d] == 0;
		if (!ok)
			break;
		v++;
	}
	/* Every other basis must keep the low v bits of the coordinate clear. */
	int32_t low = (int32_t)((1u << v) - 1);
	for (int k = 0; k < LOWER_BIT_KINDS; k++)
		for (int i = k == LOWER_REG ? v : 0; i < l->nbits[k]; i++)
			while (l->basis[k][i][dim] & low) {
				v--;
				low = (int32_t)((1u << v) - 1);
			}
	return v;
}

void
lower_layout_print(const LowerLayout *l, FILE *out)
{
	static const char *const kinds[] = {"reg", "lane", "warp"};
	fprintf(out, "shape [");
	for (int d = 0; d < l->rank; d++)
		fprintf(out, "%s%lld", d ? ", " : "", (long long)l->shape[d]);
	fprintf(out, "]");
	for (int k = 0; k < LOWER_BIT_KINDS; k++) {
		fprintf(out, " %s [", kinds[k]);
		for (int i = 0; i < l->nbits[k]; i++) {
			fprintf(out, "%s(", i ? ", " : "");
			for (int d = 0; d < l->rank; d++)
				fprintf(out, "%s%d", d ? "," : "", l->basis[k][i][d]);
			fprintf(out, ")");
		}
		fprintf(out, "]");
	}
}

/* ---- shared memory ---- */

int
lower_elem_bytes(const IrType *t)
{
	return t->bits <= 8 ? 1 : t->bits / 8;
}

int64_t
lower_smem_swizzle(int swizzle, int64_t off)
{
	if (swizzle < 32)
		return off;
	int64_t mask = swizzle / 16 - 1;
	return off ^ (((off >> 7) & mask) << 4);
}

int64_t
lower_smem_offset(const LowerSmemLayout *s, const int64_t *coord)
{
	int64_t row = 0;
	for (int i = s->rank - 1; i >= 1; i--) {
		int d = s->order[i];
		row = row * s->shape[d] + coord[d];
	}
	int64_t fc = coord[s->order[0]];
	int64_t p = fc / s->panel_elems, w = fc % s->panel_elems;
	int64_t off = p * s->panel_bytes + row * s->row_bytes + w * s->esize;
	return lower_smem_swizzle(s->swizzle, off);
}

bool
lower_smem_layout(IrCtx *c, const IrType *t, LowerSmemLayout *s)
{
	memset(s, 0, sizeof *s);
	if (t->kind != IR_TY_TILE || t->rank < 1 || t->rank > LOWER_MAX_RANK)
		return false;
	s->rank = t->rank;
	s->esize = lower_elem_bytes(t->elem);
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] == IR_DYN || t->dims[d] < 1)
			return false;
		s->shape[d] = t->dims[d];
		s->order[d] = t->rank - 1 - d;
	}
	int swz = -1;
	IrAttr *l = t->layout;
	if (l && l->kind == IR_ATTR_AVE && l->s == c->kw.pad) {
		s->pad = l->i;
		swz = 0;
	} else if (l && l->kind == IR_ATTR_AVE && l->s == c->kw.smem) {
		IrAttr *z = ir_attr_ave_get(l, c->kw.swizzle), *o = ir_attr_ave_get(l, c->kw.order);
		if (z && z->kind == IR_ATTR_INT)
			swz = (int)z->i;
		if (o && o->kind == IR_ATTR_ARRAY && o->n == t->rank)
			for (int i = 0; i < o->n; i++)
				s->order[i] = (int)o->elts[i]->i;
	}
	int64_t fast = s->shape[s->order[0]], rows = 1;
	for (int i = 1; i < s->rank; i++)
		rows *= s->shape[s->order[i]];
	int64_t row_bytes = fast * s->esize;
	if (swz < 0) {
		/* The default: the widest swizzle that divides the row, when there are rows. */
		swz = 0;
		if (s->rank > 1)
			for (int z = 128; z >= 32 && !swz; z /= 2)
				if (row_bytes % z == 0)
					swz = z;
	}
	if (swz && row_bytes % swz)
		return false;
	s->swizzle = swz;
	if (swz) {
		s->panel_elems = swz / s->esize;
		s->row_bytes = swz;
		s->panel_bytes = rows * swz;
		s->bytes = (row_bytes / swz) * s->panel_bytes;
		s->align = 8 * swz;
	} else {
		s->panel_elems = fast;
		s->row_bytes = (fast + s->pad) * s->esize;
		s->panel_bytes = 0;
		s->bytes = rows * s->row_bytes;
		s->align = 16;
	}
	if (s->align < 128)
		s->align = 128; /* TMA destinations and vector accesses */
	return true;
}

void
lower_stage_layout(LowerSmemLayout *s, int64_t rows, int64_t cols, int es, bool swizzle)
{
	memset(s, 0, sizeof *s);
	s->rank = 2;
	s->shape[0] = rows;
	s->shape[1] = cols;
	s->order[0] = 1;
	s->order[1] = 0;
	s->esize = es;
	int64_t rb = cols * es;
	int z = 0;
	for (int c = 128; swizzle && rows > 1 && c >= 32 && !z; c /= 2)
		if (rb % c == 0)
			z = c;
	s->swizzle = z;
	if (z) {
		s->panel_elems = z / es;
		s->row_bytes = z;
		s->panel_bytes = rows * z;
		s->bytes = (rb / z) * s->panel_bytes;
		s->align = 8 * z;
	} else {
		s->panel_elems = cols;
		s->row_bytes = rb;
		s->bytes = rows * rb;
	}
	if (s->align < 128)
		s->align = 128;
}
