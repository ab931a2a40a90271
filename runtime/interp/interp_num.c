/* interp_num.c — numerics of the interpreter: the narrow float formats (f16, bf16, f8e4m3,
 * f8e5m2) with round-to-nearest-even conversions, integer wrapping, and the conversion between
 * host memory formats and the storage the interpreter computes in. */
#include <math.h>
#include <string.h>

#include "interp_impl.h"

/* A small binary float format. `fn`: no infinities, the all-ones pattern is NaN (e4m3fn);
 * `sat`: overflow saturates to the largest finite value (cvt ... satfinite). */
typedef struct Fmt {
	int ebits, mbits, bias;
	bool fn, sat;
	uint32_t nan;
} Fmt;

static const Fmt fmts[IR_FK_COUNT] = {
    [IR_F16] = {5, 10, 15, false, false, 0x7E00},
    [IR_BF16] = {8, 7, 127, false, false, 0x7FC0},
    [IR_F8E4M3] = {4, 3, 7, true, true, 0x7F},
    [IR_F8E5M2] = {5, 2, 15, false, true, 0x7E},
};

static uint32_t
max_bits(const Fmt *f)
{
	uint32_t emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
	return f->fn ? (emax << f->mbits) | (mmax - 1) : ((emax - 1) << f->mbits) | mmax;
}

double
interp_bits_to_f64(IrFloatKind fk, uint32_t bits)
{
	const Fmt *f = &fmts[fk];
	uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
	bool neg = (bits >> (f->ebits + f->mbits)) & 1;
	uint32_t e = (bits >> f->mbits) & emask, m = bits & mmask;
	double v;
	if (e == emask && !f->fn)
		v = m ? NAN : INFINITY;
	else if (e == emask && m == mmask)
		v = NAN;
	else if (e == 0)
		v = ldexp((double)m, 1 - f->bias - f->mbits);
	else
		v = ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
	return neg ? -v : v;
}

uint32_t
interp_f64_to_bits(IrFloatKind fk, double x)
{
	const Fmt *f = &fmts[fk];
	uint32_t sign = signbit(x) ? 1u << (f->ebits + f->mbits) : 0;
	if (isnan(x))
		return sign | f->nan;
	double a = fabs(x);
	double maxf = interp_bits_to_f64(fk, max_bits(f));
	if (isinf(a))
		return sign | (f->sat || f->fn ? max_bits(f) : ((1u << f->ebits) - 1) << f->mbits);
	if (a == 0)
		return sign;
	int e, emin = 1 - f->bias;
	frexp(a, &e);
	int E = e - 1 < emin ? emin : e - 1;
	/* a / q is exact (a power-of-two scaling) and below 2^(mbits+1): one rounding, to nearest
	 * even under the default rounding mode. */
	double q = ldexp(1.0, E - f->mbits);
	double rq = nearbyint(a / q), v = rq * q;
	if (v > maxf)
		return sign | (f->sat || f->fn ? max_bits(f) : ((1u << f->ebits) - 1) << f->mbits);
	if (rq == 0)
		return sign;
	frexp(v, &e);
	if (e - 1 < emin)
		return sign | (uint32_t)rq; /* subnormal: v = rq * 2^(emin - mbits) */
	uint32_t mant = (uint32_t)(ldexp(v, f->mbits - (e - 1)) - ldexp(1.0, f->mbits));
	return sign | ((uint32_t)(e - 1 + f->bias) << f->mbits) | mant;
}

/* f32 -> bf16 bits, round to nearest even (exact for every float input). */
static inline uint16_t
f32_to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7FFFFFFFu) > 0x7F800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7FFFu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static inline float
bf16_to_f32(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float x;
	memcpy(&x, &u, 4);
	return x;
}

double
interp_round_f(IrFloatKind fk, double x)
{
	switch (fk) {
	case IR_F64:
		return x;
	case IR_F32:
		return (float)x;
	default:
		return interp_bits_to_f64(fk, interp_f64_to_bits(fk, x));
	}
}

uint64_t
interp_wrap(int bits, uint64_t x)
{
	if (bits >= 64)
		return x;
	if (bits == 1)
		return x & 1;
	uint64_t m = (uint64_t)1 << (bits - 1);
	x &= (m << 1) - 1;
	return (x ^ m) - m; /* sign-extend from `bits` */
}

size_t
interp_elem_size(const IrType *e)
{
	if (e->kind == IR_TY_INDEX)
		return 8;
	return e->bits <= 8 ? 1 : (size_t)e->bits / 8;
}

Sk
interp_sk(const IrType *e)
{
	if (e->kind == IR_TY_FLOAT)
		return e->fk == IR_F64 ? SK_F64 : SK_F32;
	return SK_I64;
}

size_t
interp_sk_size(Sk sk)
{
	return sk == SK_F32 ? 4 : 8;
}

/* ---- host memory formats ---- */

double
interp_mem_get_f64(const IrType *e, const void *base, int64_t i)
{
	const unsigned char *p = (const unsigned char *)base + (size_t)i * interp_elem_size(e);
	if (e->kind != IR_TY_FLOAT)
		return (double)interp_mem_get_i64(e, base, i);
	switch (e->fk) {
	case IR_F32: {
		float x;
		memcpy(&x, p, 4);
		return x;
	}
	case IR_F64: {
		double x;
		memcpy(&x, p, 8);
		return x;
	}
	case IR_BF16:
	case IR_F16: {
		uint16_t b;
		memcpy(&b, p, 2);
		return interp_bits_to_f64(e->fk, b);
	}
	default:
		return interp_bits_to_f64(e->fk, *p);
	}
}

int64_t
interp_mem_get_i64(const IrType *e, const void *base, int64_t i)
{
	const unsigned char *p = (const unsigned char *)base + (size_t)i * interp_elem_size(e);
	if (e->kind == IR_TY_FLOAT) {
		double t = trunc(interp_mem_get_f64(e, base, i));
		return isnan(t)      ? 0
		       : t >= 0x1p63 ? INT64_MAX
		       : t < -0x1p63 ? INT64_MIN
		                     : (int64_t)t;
	}
	int bits = e->kind == IR_TY_INDEX ? 64 : e->bits;
	switch (bits) {
	case 1:
		return *p != 0;
	case 8:
		return (int8_t)*p;
	case 16: {
		int16_t x;
		memcpy(&x, p, 2);
		return x;
	}
	case 32: {
		int32_t x;
		memcpy(&x, p, 4);
		return x;
	}
	default: {
		int64_t x;
		memcpy(&x, p, 8);
		return x;
	}
	}
}

void
interp_mem_set_f64(const IrType *e, void *base, int64_t i, double v)
{
	unsigned char *p = (unsigned char *)base + (size_t)i * interp_elem_size(e);
	if (e->kind != IR_TY_FLOAT) {
		double t = trunc(v);
		int64_t x = isnan(t)      ? 0
		            : t >= 0x1p63 ? INT64_MAX
		            : t < -0x1p63 ? INT64_MIN
		                          : (int64_t)t;
		interp_mem_set_i64(e, base, i, x);
		return;
	}
	switch (e->fk) {
	case IR_F32: {
		float x = (float)v;
		memcpy(p, &x, 4);
		return;
	}
	case IR_F64:
		memcpy(p, &v, 8);
		return;
	case IR_BF16:
	case IR_F16: {
		uint16_t b = (uint16_t)interp_f64_to_bits(e->fk, v);
		memcpy(p, &b, 2);
		return;
	}
	default:
		*p = (unsigned char)interp_f64_to_bits(e->fk, v);
		return;
	}
}

void
interp_mem_set_i64(const IrType *e, void *base, int64_t i, int64_t v)
{
	unsigned char *p = (unsigned char *)base + (size_t)i * interp_elem_size(e);
	if (e->kind == IR_TY_FLOAT) {
		interp_mem_set_f64(e, base, i, (double)v);
		return;
	}
	int bits = e->kind == IR_TY_INDEX ? 64 : e->bits;
	switch (bits) {
	case 1:
		*p = (unsigned char)(v & 1);
		return;
	case 8:
		*p = (unsigned char)v;
		return;
	case 16: {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
		return;
	}
	case 32: {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
		return;
	}
	default:
		memcpy(p, &v, 8);
		return;
	}
}

/* ---- memory <-> storage over strided runs (the inner loops of loads, stores and copies) ---- */

void
interp_mem_to_sk(const IrType *e, const unsigned char *base, int64_t start, int64_t stride,
                 int64_t n, void *dst)
{
	if (e->kind == IR_TY_FLOAT && e->fk == IR_BF16) {
		float *d = dst;
		const unsigned char *p = base + start * 2;
		for (int64_t i = 0; i < n; i++) {
			uint16_t b;
			memcpy(&b, p + i * stride * 2, 2);
			d[i] = bf16_to_f32(b);
		}
		return;
	}
	if (e->kind == IR_TY_FLOAT && e->fk == IR_F32) {
		float *d = dst;
		const unsigned char *p = base + start * 4;
		if (stride == 1) {
			memcpy(d, p, (size_t)n * 4);
			return;
		}
		for (int64_t i = 0; i < n; i++)
			memcpy(&d[i], p + i * stride * 4, 4);
		return;
	}
	switch (interp_sk(e)) {
	case SK_F32: {
		float *d = dst;
		for (int64_t i = 0; i < n; i++)
			d[i] = (float)interp_mem_get_f64(e, base, start + i * stride);
		return;
	}
	case SK_F64: {
		double *d = dst;
		for (int64_t i = 0; i < n; i++)
			d[i] = interp_mem_get_f64(e, base, start + i * stride);
		return;
	}
	default: {
		int64_t *d = dst;
		for (int64_t i = 0; i < n; i++)
			d[i] = interp_mem_get_i64(e, base, start + i * stride);
		return;
	}
	}
}

void
interp_sk_to_mem(const IrType *e, const void *src, unsigned char *base, int64_t start,
                 int64_t stride, int64_t n)
{
	if (e->kind == IR_TY_FLOAT && e->fk == IR_BF16) {
		const float *s = src;
		unsigned char *p = base + start * 2;
		for (int64_t i = 0; i < n; i++) {
			uint16_t b = f32_to_bf16(s[i]);
			memcpy(p + i * stride * 2, &b, 2);
		}
		return;
	}
	if (e->kind == IR_TY_FLOAT && e->fk == IR_F32) {
		const float *s = src;
		unsigned char *p = base + start * 4;
		if (stride == 1) {
			memcpy(p, s, (size_t)n * 4);
			return;
		}
		for (int64_t i = 0; i < n; i++)
			memcpy(p + i * stride * 4, &s[i], 4);
		return;
	}
	switch (interp_sk(e)) {
	case SK_F32: {
		const float *s = src;
		for (int64_t i = 0; i < n; i++)
			interp_mem_set_f64(e, base, start + i * stride, s[i]);
		return;
	}
	case SK_F64: {
		const double *s = src;
		for (int64_t i = 0; i < n; i++)
			interp_mem_set_f64(e, base, start + i * stride, s[i]);
		return;
	}
	default: {
		const int64_t *s = src;
		for (int64_t i = 0; i < n; i++)
			interp_mem_set_i64(e, base, start + i * stride, s[i]);
		return;
	}
	}
}

/* ---- rounding whole arrays to their type ---- */

void
interp_round(const IrType *e, Sk sk, void *data, int64_t n)
{
	if (sk == SK_I64) {
		int bits = e->kind == IR_TY_INDEX ? 64 : e->bits;
		if (bits >= 64)
			return;
		int64_t *d = data;
		for (int64_t i = 0; i < n; i++)
			d[i] = (int64_t)interp_wrap(bits, (uint64_t)d[i]);
		return;
	}
	if (sk != SK_F32 || e->fk == IR_F32)
		return;
	float *d = data;
	if (e->fk == IR_BF16) {
		for (int64_t i = 0; i < n; i++)
			d[i] = bf16_to_f32(f32_to_bf16(d[i]));
		return;
	}
	for (int64_t i = 0; i < n; i++)
		d[i] = (float)interp_round_f(e->fk, d[i]);
}

void
interp_scalar_to_sk(const IrType *e, const Val *v, void *dst)
{
	switch (interp_sk(e)) {
	case SK_F32: {
		float x =
		    v->k == V_INT ? (float)interp_round_f(e->fk, (double)v->u.i) : (float)v->u.f;
		memcpy(dst, &x, 4);
		return;
	}
	case SK_F64: {
		double x = v->k == V_INT ? (double)v->u.i : v->u.f;
		memcpy(dst, &x, 8);
		return;
	}
	default:
		memcpy(dst, &v->u.i, 8);
		return;
	}
}

Val
interp_sk_to_scalar(const IrType *e, const void *src)
{
	Val v = {0};
	switch (interp_sk(e)) {
	case SK_F32: {
		float x;
		memcpy(&x, src, 4);
		v.k = V_FLT;
		v.u.f = x;
		break;
	}
	case SK_F64:
		v.k = V_FLT;
		memcpy(&v.u.f, src, 8);
		break;
	default:
		v.k = V_INT;
		memcpy(&v.u.i, src, 8);
		break;
	}
	return v;
}
