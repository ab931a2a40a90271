/* interp_tile.c — compute on whole tiles: elementwise ops, conversions, reductions and the MMA,
 * each a tight loop over the storage of a tile (never a per-element dispatch). These loops are
 * what makes the interpreter fast; CMake builds this file optimized even in debug builds. */
#include <math.h>
#include <string.h>

#include "interp_impl.h"

Tile *
interp_tile_new(Run *r, Sk sk, int64_t n)
{
	size_t bytes = sizeof(Tile) + 64 + (size_t)n * interp_sk_size(sk);
	Tile *t = ir_xalloc(r->al, bytes);
	t->refs = 1;
	t->sk = sk;
	t->n = n;
	t->bytes = bytes;
	t->data = (void *)(((uintptr_t)(t + 1) + 63) & ~(uintptr_t)63);
	return t;
}

void
interp_tile_release(Run *r, Tile *t)
{
	if (t && --t->refs == 0)
		ir_xfree(r->al, t, t->bytes);
}

/* ---- elementwise ---- */

/* max/min ignore a NaN operand (IEEE maxNum/minNum) and order -0 below +0. */
#define FMAXS(x, y)                                                                                \
	((x) != (x)   ? (y)                                                                        \
	 : (y) != (y) ? (x)                                                                        \
	 : (x) == (y) ? (signbit(x) ? (y) : (x))                                                   \
	 : (x) > (y)  ? (x)                                                                        \
	              : (y))
#define FMINS(x, y)                                                                                \
	((x) != (x)   ? (y)                                                                        \
	 : (y) != (y) ? (x)                                                                        \
	 : (x) == (y) ? (signbit(x) ? (x) : (y))                                                   \
	 : (x) < (y)  ? (x)                                                                        \
	              : (y))

/* Loops over n elements with operands broadcast when their stride is 0; the all-contiguous case
 * gets its own loop so that it vectorizes. */
#define UN(T, R, EXPR)                                                                             \
	do {                                                                                       \
		const T *A_ = ops[0];                                                              \
		R *D_ = res;                                                                       \
		int sa_ = st[0];                                                                   \
		for (int64_t i = 0; i < n; i++) {                                                  \
			T x = A_[i * sa_];                                                         \
			D_[i] = (EXPR);                                                            \
		}                                                                                  \
	} while (0)

#define BIN(T, R, EXPR)                                                                            \
	do {                                                                                       \
		const T *A_ = ops[0], *B_ = ops[1];                                                \
		R *D_ = res;                                                                       \
		int sa_ = st[0], sb_ = st[1];                                                      \
		if (sa_ && sb_) {                                                                  \
			for (int64_t i = 0; i < n; i++) {                                          \
				T x = A_[i], y = B_[i];                                            \
				D_[i] = (EXPR);                                                    \
			}                                                                          \
		} else {                                                                           \
			for (int64_t i = 0; i < n; i++) {                                          \
				T x = A_[i * sa_], y = B_[i * sb_];                                \
				D_[i] = (EXPR);                                                    \
			}                                                                          \
		}                                                                                  \
	} while (0)

#define SEL(T)                                                                                     \
	do {                                                                                       \
		const int64_t *C_ = ops[0];                                                        \
		const T *A_ = ops[1], *B_ = ops[2];                                                \
		T *D_ = res;                                                                       \
		for (int64_t i = 0; i < n; i++)                                                    \
			D_[i] = C_[i * st[0]] ? A_[i * st[1]] : B_[i * st[2]];                     \
	} while (0)

enum { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE };

static int
cmp_code(IrStr mode, const IrKeywords *kw)
{
	IrStr m[] = {kw->eq, kw->ne, kw->lt, kw->le, kw->gt, kw->ge};
	for (int i = 0; i < 6; i++)
		if (mode == m[i])
			return i;
	ir_unreachable("bad ave.cmp mode");
}

#define CMPS(T)                                                                                    \
	switch (cc) {                                                                              \
	case C_EQ:                                                                                 \
		BIN(T, int64_t, x == y);                                                           \
		break;                                                                             \
	case C_NE:                                                                                 \
		BIN(T, int64_t, x<y || x> y);                                                      \
		break;                                                                             \
	case C_LT:                                                                                 \
		BIN(T, int64_t, x < y);                                                            \
		break;                                                                             \
	case C_LE:                                                                                 \
		BIN(T, int64_t, x <= y);                                                           \
		break;                                                                             \
	case C_GT:                                                                                 \
		BIN(T, int64_t, x > y);                                                            \
		break;                                                                             \
	default:                                                                                   \
		BIN(T, int64_t, x >= y);                                                           \
		break;                                                                             \
	}

/* exact for a*b of operands of at most 26 significant bits (f16, bf16, f8 values) */
static double
fma_odd(double a, double b, double c)
{
	double p = a * b, s = p + c;
	if (!isfinite(s))
		return s;
	double bb = s - p, err = (p - (s - bb)) + (c - bb); /* TwoSum: s + err == p + c exactly */
	uint64_t u;
	memcpy(&u, &s, 8);
	if (err != 0 && !(u & 1))
		s = nextafter(s, err > 0 ? INFINITY : -INFINITY); /* round to odd */
	return s;
}

static bool
ew_f32(IrOpcode code, int cc, IrFloatKind fk, const void *const *ops, const int *st, void *res,
       int64_t n)
{
	switch (code) {
	case IR_OP_ADD:
		BIN(float, float, x + y);
		break;
	case IR_OP_SUB:
		BIN(float, float, x - y);
		break;
	case IR_OP_MUL:
		BIN(float, float, x *y);
		break;
	case IR_OP_DIV:
		BIN(float, float, x / y);
		break;
	case IR_OP_REM:
		BIN(float, float, fmodf(x, y));
		break;
	case IR_OP_MAX:
		BIN(float, float, FMAXS(x, y));
		break;
	case IR_OP_MIN:
		BIN(float, float, FMINS(x, y));
		break;
	case IR_OP_NEG:
		UN(float, float, -x);
		break;
	case IR_OP_ABS:
		UN(float, float, fabsf(x));
		break;
	case IR_OP_EXP2:
		UN(float, float, exp2f(x));
		break;
	case IR_OP_EXP:
		UN(float, float, expf(x));
		break;
	case IR_OP_LOG2:
		UN(float, float, log2f(x));
		break;
	case IR_OP_SQRT:
		UN(float, float, sqrtf(x));
		break;
	case IR_OP_RSQRT:
		UN(float, float, 1.0f / sqrtf(x));
		break;
	case IR_OP_CMP:
		CMPS(float);
		break;
	case IR_OP_SELECT:
		SEL(float);
		break;
	case IR_OP_FMA: {
		const float *A = ops[0], *B = ops[1], *C = ops[2];
		float *D = res;
		if (fk == IR_F32) {
			for (int64_t i = 0; i < n; i++)
				D[i] = fmaf(A[i * st[0]], B[i * st[1]], C[i * st[2]]);
		} else {
			for (int64_t i = 0; i < n; i++)
				D[i] = (float)interp_round_f(
				    fk, fma_odd(A[i * st[0]], B[i * st[1]], C[i * st[2]]));
		}
		break;
	}
	default:
		ir_unreachable("not an elementwise float op");
	}
	return true;
}

static bool
ew_f64(IrOpcode code, int cc, const void *const *ops, const int *st, void *res, int64_t n)
{
	switch (code) {
	case IR_OP_ADD:
		BIN(double, double, x + y);
		break;
	case IR_OP_SUB:
		BIN(double, double, x - y);
		break;
	case IR_OP_MUL:
		BIN(double, double, x *y);
		break;
	case IR_OP_DIV:
		BIN(double, double, x / y);
		break;
	case IR_OP_REM:
		BIN(double, double, fmod(x, y));
		break;
	case IR_OP_MAX:
		BIN(double, double, FMAXS(x, y));
		break;
	case IR_OP_MIN:
		BIN(double, double, FMINS(x, y));
		break;
	case IR_OP_NEG:
		UN(double, double, -x);
		break;
	case IR_OP_ABS:
		UN(double, double, fabs(x));
		break;
	case IR_OP_EXP2:
		UN(double, double, exp2(x));
		break;
	case IR_OP_EXP:
		UN(double, double, exp(x));
		break;
	case IR_OP_LOG2:
		UN(double, double, log2(x));
		break;
	case IR_OP_SQRT:
		UN(double, double, sqrt(x));
		break;
	case IR_OP_RSQRT:
		UN(double, double, 1.0 / sqrt(x));
		break;
	case IR_OP_CMP:
		CMPS(double);
		break;
	case IR_OP_SELECT:
		SEL(double);
		break;
	case IR_OP_FMA: {
		const double *A = ops[0], *B = ops[1], *C = ops[2];
		double *D = res;
		for (int64_t i = 0; i < n; i++)
			D[i] = fma(A[i * st[0]], B[i * st[1]], C[i * st[2]]);
		break;
	}
	default:
		ir_unreachable("not an elementwise float op");
	}
	return true;
}

#define U64(x) ((uint64_t)(x))

static bool
ew_int(IrOpcode code, int cc, int bits, const void *const *ops, const int *st, void *res, int64_t n,
       int64_t *bad)
{
	switch (code) {
	case IR_OP_ADD:
		BIN(int64_t, int64_t, (int64_t)(U64(x) + U64(y)));
		break;
	case IR_OP_SUB:
		BIN(int64_t, int64_t, (int64_t)(U64(x) - U64(y)));
		break;
	case IR_OP_MUL:
		BIN(int64_t, int64_t, (int64_t)(U64(x) * U64(y)));
		break;
	case IR_OP_DIV:
	case IR_OP_REM: {
		const int64_t *A = ops[0], *B = ops[1];
		int64_t *D = res;
		for (int64_t i = 0; i < n; i++) {
			int64_t x = A[i * st[0]], y = B[i * st[1]];
			if (y == 0) {
				*bad = i;
				return false;
			}
			if (y == -1) /* INT_MIN / -1 wraps */
				D[i] = code == IR_OP_DIV ? (int64_t)(0 - U64(x)) : 0;
			else
				D[i] = code == IR_OP_DIV ? x / y : x % y;
		}
		break;
	}
	case IR_OP_MAX:
		BIN(int64_t, int64_t, x > y ? x : y);
		break;
	case IR_OP_MIN:
		BIN(int64_t, int64_t, x < y ? x : y);
		break;
	case IR_OP_AND:
		BIN(int64_t, int64_t, x & y);
		break;
	case IR_OP_OR:
		BIN(int64_t, int64_t, x | y);
		break;
	case IR_OP_XOR:
		BIN(int64_t, int64_t, x ^ y);
		break;
	case IR_OP_SHL:
		BIN(int64_t, int64_t, y < 0 || y >= bits ? 0 : (int64_t)(U64(x) << y));
		break;
	case IR_OP_SHR:
		BIN(int64_t, int64_t, y < 0 || y >= bits ? (x < 0 ? -1 : 0) : x >> y);
		break;
	case IR_OP_NEG:
		UN(int64_t, int64_t, (int64_t)(0 - U64(x)));
		break;
	case IR_OP_ABS:
		UN(int64_t, int64_t, x < 0 ? (int64_t)(0 - U64(x)) : x);
		break;
	case IR_OP_CMP:
		CMPS(int64_t);
		break;
	case IR_OP_SELECT:
		SEL(int64_t);
		break;
	default:
		ir_unreachable("not an elementwise integer op");
	}
	return true;
}

bool
interp_ew(IrOpcode code, IrStr mode, const IrKeywords *kw, const IrType *in, int nops,
          const void *const *ops, const int *st, void *res, int64_t n, int64_t *bad)
{
	(void)nops;
	int cc = code == IR_OP_CMP ? cmp_code(mode, kw) : 0;
	switch (interp_sk(in)) {
	case SK_F32:
		return ew_f32(code, cc, in->fk, ops, st, res, n);
	case SK_F64:
		return ew_f64(code, cc, ops, st, res, n);
	default:
		return ew_int(code, cc, in->kind == IR_TY_INDEX ? 64 : in->bits, ops, st, res, n,
		              bad);
	}
}

/* ---- conversions ---- */

/* int64 to double rounded to odd when inexact, so that one more rounding to a format of at most
 * 51 bits is correctly rounded. */
static double
i64_to_f64_odd(int64_t x)
{
	uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
	double d;
	if (u < ((uint64_t)1 << 53)) {
		d = (double)u;
	} else {
		int sh = 64 - __builtin_clzll(u) - 53;
		uint64_t kept = u >> sh;
		if (u & (((uint64_t)1 << sh) - 1))
			kept |= 1;
		d = ldexp((double)kept, sh);
	}
	return x < 0 ? -d : d;
}

/* float to integer: toward zero, saturating to the type's range (i1: [0, 1]), NaN to 0 */
static int64_t
f_to_int(double x, int bits)
{
	if (isnan(x))
		return 0;
	double t = trunc(x);
	double lo = bits == 1 ? 0 : -ldexp(1.0, bits - 1),
	       hi = bits == 1 ? 1 : ldexp(1.0, bits - 1);
	if (t < lo)
		return bits >= 64 ? INT64_MIN : (int64_t)lo;
	if (t >= hi)
		return bits >= 64 ? INT64_MAX : bits == 1 ? 1 : (int64_t)hi - 1;
	return (int64_t)t;
}

void
interp_cvt(const IrType *from, const void *src, const IrType *to, void *dst, int64_t n)
{
	Sk fs = interp_sk(from), ts = interp_sk(to);
	int tbits = to->kind == IR_TY_INDEX ? 64 : to->bits;
	if (fs == SK_I64 && ts == SK_I64) {
		const int64_t *s = src;
		int64_t *d = dst;
		for (int64_t i = 0; i < n; i++)
			d[i] = (int64_t)interp_wrap(tbits, (uint64_t)s[i]);
		return;
	}
	if (ts == SK_I64) {
		int64_t *d = dst;
		for (int64_t i = 0; i < n; i++)
			d[i] = f_to_int(fs == SK_F32 ? ((const float *)src)[i]
			                             : ((const double *)src)[i],
			                tbits);
		return;
	}
	if (ts == SK_F64) {
		double *d = dst;
		for (int64_t i = 0; i < n; i++)
			d[i] = fs == SK_I64   ? (double)((const int64_t *)src)[i]
			       : fs == SK_F32 ? (double)((const float *)src)[i]
			                      : ((const double *)src)[i];
		return;
	}
	float *d = dst;
	if (fs == SK_F32) {
		if (d != src)
			memcpy(d, src, (size_t)n * 4);
		interp_round(to, SK_F32, d, n); /* exact for widening, one rounding for narrowing */
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		double x = fs == SK_F64       ? ((const double *)src)[i]
		           : to->fk == IR_F32 ? (double)(float)((const int64_t *)src)[i]
		                              : i64_to_f64_odd(((const int64_t *)src)[i]);
		d[i] = (float)interp_round_f(to->fk, x);
	}
}

/* ---- reductions ---- */

void
interp_reduce(IrStr mode, const IrKeywords *kw, const IrType *e, const void *src, void *dst,
              int64_t outer, int64_t len, int64_t inner)
{
	int m = mode == kw->max ? 0 : mode == kw->min ? 1 : 2;
#define RED(T, MAXF, MINF)                                                                         \
	do {                                                                                       \
		const T *s = src;                                                                  \
		T *d = dst;                                                                        \
		for (int64_t o = 0; o < outer; o++)                                                \
			for (int64_t in = 0; in < inner; in++) {                                   \
				const T *p = s + o * len * inner + in;                             \
				T acc = p[0];                                                      \
				for (int64_t k = 1; k < len; k++) {                                \
					T y = p[k * inner], x = acc;                               \
					acc = m == 0 ? MAXF : m == 1 ? MINF : (T)(x + y);          \
				}                                                                  \
				d[o * inner + in] = acc;                                           \
			}                                                                          \
	} while (0)
	switch (interp_sk(e)) {
	case SK_F32:
		RED(float, FMAXS(x, y), FMINS(x, y));
		break;
	case SK_F64:
		RED(double, FMAXS(x, y), FMINS(x, y));
		break;
	default: {
		/* integer sums wrap (in uint64, then to the type's width by the caller) */
		const int64_t *s = src;
		int64_t *d = dst;
		for (int64_t o = 0; o < outer; o++)
			for (int64_t in = 0; in < inner; in++) {
				const int64_t *p = s + o * len * inner + in;
				int64_t acc = p[0];
				for (int64_t k = 1; k < len; k++) {
					int64_t y = p[k * inner];
					acc = m == 0   ? (acc > y ? acc : y)
					      : m == 1 ? (acc < y ? acc : y)
					               : (int64_t)(U64(acc) + U64(y));
				}
				d[o * inner + in] = acc;
			}
		break;
	}
	}
#undef RED
}

/* ---- MMA ---- */

/* The three product loops below touch only the M x K, K x N and M x N arrays their caller
 * allocated for exactly these shapes; they are exempt from the sanitizers so that their checks
 * do not stop them from vectorizing (everything around them stays instrumented). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MMA_LOOP __attribute__((no_sanitize("address", "undefined")))
#endif
#endif
#ifndef MMA_LOOP
#define MMA_LOOP
#endif

/* D = C + A·B with products exact in f32 (f16, bf16 and f8 operands): summed over k in order, one
 * f32 rounding per step, which is also fma semantics. Bt is K x N. */
MMA_LOOP static void
mma_exact(const float *restrict A, const float *restrict Bt, const float *restrict C,
          float *restrict D, int64_t M, int64_t N, int64_t K)
{
	for (int64_t i = 0; i < M; i++) {
		float *restrict d = D + i * N;
		memcpy(d, C + i * N, (size_t)N * 4);
		const float *a = A + i * K;
		for (int64_t k = 0; k < K; k++) {
			float x = a[k];
			const float *restrict b = Bt + k * N;
			for (int64_t j = 0; j < N; j++)
				d[j] += x * b[j];
		}
	}
}

MMA_LOOP static void
mma_fma32(const float *A, const float *Bt, const float *C, float *D, int64_t M, int64_t N,
          int64_t K)
{
	for (int64_t i = 0; i < M; i++) {
		float *d = D + i * N;
		memcpy(d, C + i * N, (size_t)N * 4);
		for (int64_t k = 0; k < K; k++) {
			float x = A[i * K + k];
			const float *b = Bt + k * N;
			for (int64_t j = 0; j < N; j++)
				d[j] = fmaf(x, b[j], d[j]);
		}
	}
}

MMA_LOOP static void
mma_f64(const double *A, const double *Bt, const float *C, float *D, int64_t M, int64_t N,
        int64_t K)
{
	for (int64_t i = 0; i < M; i++) {
		float *d = D + i * N;
		memcpy(d, C + i * N, (size_t)N * 4);
		for (int64_t k = 0; k < K; k++) {
			double x = A[i * K + k];
			const double *b = Bt + k * N;
			for (int64_t j = 0; j < N; j++)
				d[j] = (float)fma(x, b[j], (double)d[j]);
		}
	}
}

void
interp_mma(const IrType *ab, const void *a, const void *b, bool tb, const float *c, float *d,
           int64_t M, int64_t N, int64_t K, void *scratch)
{
	bool f64 = ab->fk == IR_F64;
	const void *bt = b;
	if (tb) { /* b is N x K: transpose it once so that the inner loop runs along N */
		if (f64) {
			const double *s = b;
			double *t = scratch;
			for (int64_t j = 0; j < N; j++)
				for (int64_t k = 0; k < K; k++)
					t[k * N + j] = s[j * K + k];
		} else {
			const float *s = b;
			float *t = scratch;
			for (int64_t j = 0; j < N; j++)
				for (int64_t k = 0; k < K; k++)
					t[k * N + j] = s[j * K + k];
		}
		bt = scratch;
	}
	if (f64)
		mma_f64(a, bt, c, d, M, N, K);
	else if (ab->fk == IR_F32)
		mma_fma32(a, bt, c, d, M, N, K);
	else
		mma_exact(a, bt, c, d, M, N, K);
}
