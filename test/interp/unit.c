/* unit.c — ave-interp-unit: the interpreter's numerics against independent references: every
 * f16/bf16/f8 bit pattern round-trips; rounding of midpoints goes to the even neighbour and just
 * off a midpoint to the nearer one; f16 matches the compiler's _Float16; f8 saturates (satfinite);
 * integer wrapping; the rand: generator's mean and variance. */
#include <math.h>
#include <string.h>

#include "../unit/unit.h"
#include "interp.h"

__extension__ typedef _Float16 f16; /* the C compiler's IEEE half, for reference values */

static const IrFloatKind narrow[] = {IR_F16, IR_BF16, IR_F8E4M3, IR_F8E5M2};
static const int nbits[] = {16, 16, 8, 8};

static bool
is_nan_bits(IrFloatKind fk, uint32_t b)
{
	return isnan(interp_bits_to_f64(fk, b));
}

static uint64_t
mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* All codes of a format: decode then encode gives the code back (NaNs give a NaN; f8 clamps
 * infinities to the largest finite value, checked in f8_values). */
static void
round_trips(void)
{
	for (int f = 0; f < 4; f++) {
		int ok = 1;
		for (uint32_t b = 0; b < (1u << nbits[f]); b++) {
			double v = interp_bits_to_f64(narrow[f], b);
			uint32_t back = interp_f64_to_bits(narrow[f], v);
			if (isinf(v) && nbits[f] == 8)
				continue;
			ok &= isnan(v) ? is_nan_bits(narrow[f], back) : back == b;
		}
		CHECK(ok);
	}
}

/* Between each pair of adjacent positive finite codes: the midpoint goes to the even code, a
 * hair below to the lower, a hair above to the upper. */
static void
midpoints(void)
{
	for (int f = 0; f < 4; f++) {
		IrFloatKind fk = narrow[f];
		int ok = 1;
		uint32_t top = 1u << (nbits[f] - 1);
		for (uint32_t b = 0; b + 1 < top; b++) {
			double lo = interp_bits_to_f64(fk, b), hi = interp_bits_to_f64(fk, b + 1);
			if (!isfinite(lo) || !isfinite(hi))
				break;
			double mid = (lo + hi) / 2;
			uint32_t even = (b & 1) ? b + 1 : b;
			ok &= interp_f64_to_bits(fk, mid) == even;
			ok &= interp_f64_to_bits(fk, nextafter(mid, 0)) == b;
			ok &= interp_f64_to_bits(fk, nextafter(mid, INFINITY)) == b + 1;
			ok &= interp_f64_to_bits(fk, -mid) == (even | top);
		}
		CHECK(ok);
	}
}

static void
f16_matches_compiler(void)
{
	uint64_t s = 42;
	int ok = 1;
	for (int i = 0; i < 200000; i++) {
		uint64_t z = mix(&s);
		double x;
		if (i & 1) { /* around the f16 range, including subnormals and overflow */
			x = ldexp((double)(z >> 11) / 9007199254740992.0, (int)(z % 50) - 30);
			if (z & (1ull << 10))
				x = -x;
		} else {
			memcpy(&x, &z, 8);
			if (isnan(x))
				continue;
		}
		f16 h = (f16)x;
		uint16_t hb;
		memcpy(&hb, &h, 2);
		ok &= interp_f64_to_bits(IR_F16, x) == hb;
		ok &= interp_bits_to_f64(IR_F16, hb) == (double)h || isnan((double)h);
	}
	CHECK(ok);
}

static void
bf16_matches_bit_trick(void)
{
	uint64_t s = 7;
	int ok = 1;
	for (int i = 0; i < 200000; i++) {
		uint32_t u = (uint32_t)mix(&s);
		float x;
		memcpy(&x, &u, 4);
		if (isnan(x))
			continue;
		uint32_t r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16;
		ok &= interp_f64_to_bits(IR_BF16, x) == r;
	}
	CHECK(ok);
	CHECK_EQ(interp_f64_to_bits(IR_BF16, 1.0), 0x3F80u);
	CHECK_EQ(interp_f64_to_bits(IR_BF16, INFINITY), 0x7F80u);
	CHECK_EQ(interp_f64_to_bits(IR_BF16, 1e39), 0x7F80u); /* overflow rounds to infinity */
}

static void
f8_values(void)
{
	/* e4m3 (FN): no infinities, max 448, NaN 0x7F, satfinite overflow */
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, 1.0), 0x38u);
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, 448.0), 0x7Eu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, 464.0), 0x7Eu); /* tie to even: 448 */
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, 1000.0), 0x7Eu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, INFINITY), 0x7Eu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, -INFINITY), 0xFEu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, NAN), 0x7Fu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, ldexp(1, -9)), 0x01u);  /* smallest subnormal */
	CHECK_EQ(interp_f64_to_bits(IR_F8E4M3, ldexp(1, -11)), 0x00u); /* below half of it */
	CHECK(interp_bits_to_f64(IR_F8E4M3, 0x7E) == 448.0);
	CHECK(isnan(interp_bits_to_f64(IR_F8E4M3, 0xFF)));
	CHECK(interp_bits_to_f64(IR_F8E4M3, 0x78) == 256.0); /* exponent 15 is a normal number */
	/* e5m2: IEEE-like, max 57344; satfinite clamps overflow and infinities */
	CHECK_EQ(interp_f64_to_bits(IR_F8E5M2, 1.0), 0x3Cu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E5M2, 57344.0), 0x7Bu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E5M2, 1e6), 0x7Bu);
	CHECK_EQ(interp_f64_to_bits(IR_F8E5M2, INFINITY), 0x7Bu);
	CHECK(isinf(interp_bits_to_f64(IR_F8E5M2, 0x7C)));
	CHECK(isnan(interp_bits_to_f64(IR_F8E5M2, interp_f64_to_bits(IR_F8E5M2, NAN))));
	/* f16 */
	CHECK_EQ(interp_f64_to_bits(IR_F16, 65504.0), 0x7BFFu);
	CHECK_EQ(interp_f64_to_bits(IR_F16, 65520.0), 0x7C00u); /* rounds to infinity */
	CHECK_EQ(interp_f64_to_bits(IR_F16, ldexp(1, -24)), 0x0001u);
	CHECK_EQ(interp_f64_to_bits(IR_F16, -0.0), 0x8000u);
}

static void
memory_formats(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	unsigned char buf[16];
	interp_mem_set_i64(c->t_i8, buf, 0, 200);
	CHECK_EQ(interp_mem_get_i64(c->t_i8, buf, 0), -56);
	interp_mem_set_i64(c->t_i1, buf, 0, 3);
	CHECK_EQ(interp_mem_get_i64(c->t_i1, buf, 0), 1);
	interp_mem_set_f64(c->t_bf16, buf, 1, 3.0);
	CHECK(interp_mem_get_f64(c->t_bf16, buf, 1) == 3.0);
	interp_mem_set_f64(c->t_f8e4m3, buf, 3, -0.5);
	CHECK_EQ(buf[3], 0xB0);
	CHECK_EQ(interp_elem_size(c->t_i1), 1u);
	CHECK_EQ(interp_elem_size(c->t_bf16), 2u);
	CHECK_EQ(interp_elem_size(c->t_index), 8u);
	ir_ctx_free(c);
}

static void
rand_moments(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	enum { N = 100000 };
	static double a[N], b[N];
	interp_rand_fill(c->t_f64, 3, N, a);
	interp_rand_fill(c->t_f64, 3, N, b);
	CHECK(!memcmp(a, b, sizeof a)); /* same seed, same bits */
	double m = 0, v = 0, mx = 0;
	for (int i = 0; i < N; i++)
		m += a[i];
	m /= N;
	for (int i = 0; i < N; i++) {
		v += (a[i] - m) * (a[i] - m);
		mx = fabs(a[i]) > mx ? fabs(a[i]) : mx;
	}
	v /= N;
	CHECK(fabs(m) < 0.02);
	CHECK(fabs(v - 1) < 0.02);
	CHECK(mx < 6);
	interp_rand_fill(c->t_f64, 4, N, b);
	CHECK(memcmp(a, b, sizeof a)); /* another seed, other values */
	ir_ctx_free(c);
}

int
main(void)
{
	round_trips();
	midpoints();
	f16_matches_compiler();
	bf16_matches_bit_trick();
	f8_values();
	memory_formats();
	rand_moments();
	return unit_summary();
}
