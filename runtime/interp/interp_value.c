/* interp_value.c — the values `ave run --arg NAME=VALUE` accepts: a .npy file, `rand:` (the
 * reproducible normal generator), `zeros:`, or a scalar literal. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Element i (in C order) takes six splitmix64 outputs; their twelve 32-bit halves u_k are uniform
 * on [0, 2^32). x = (sum u_k - 6 * 2^32) / 2^32 is Irwin-Hall(12) - 6: mean 0, variance 1, range
 * (-6, 6). The sum fits 36 bits, so x is exact in double: no floating-point step can differ
 * between machines before the one rounding to the element type. */
void
interp_rand_fill(const IrType *elem, uint64_t seed, int64_t n, void *out)
{
	uint64_t s = seed;
	for (int64_t i = 0; i < n; i++) {
		uint64_t sum = 0;
		for (int k = 0; k < 6; k++) {
			uint64_t z = splitmix64(&s);
			sum += (z >> 32) + (z & 0xFFFFFFFFu);
		}
		double x = ldexp((double)((int64_t)sum - ((int64_t)6 << 32)), -32);
		if (elem->kind == IR_TY_FLOAT)
			interp_mem_set_f64(elem, out, i, x);
		else if (elem->kind == IR_TY_INT && elem->bits == 1)
			interp_mem_set_i64(elem, out, i, x > 0);
		else
			interp_mem_set_i64(elem, out, i, (int64_t)nearbyint(x));
	}
}

static bool
errf(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return false;
}

static IrType *
dtype(IrCtx *c, const char *s, size_t n)
{
	static const char *const names[] = {"i1",  "i8",   "i16", "i32", "i64",    "index",
	                                    "f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"};
	IrType *types[] = {c->t_i1,  c->t_i8,   c->t_i16, c->t_i32, c->t_i64,    c->t_index,
	                   c->t_f16, c->t_bf16, c->t_f32, c->t_f64, c->t_f8e4m3, c->t_f8e5m2};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == n && !strncmp(names[i], s, n))
			return types[i];
	return NULL;
}

/* "128x64" */
static bool
parse_dims(const char *s, size_t len, int *rank, int64_t *dims)
{
	*rank = 0;
	const char *p = s, *end = s + len;
	while (p < end) {
		char *q;
		errno = 0;
		long long d = strtoll(p, &q, 10);
		if (q == p || errno || d < 0 || *rank == IR_MAX_RANK || q > end)
			return false;
		dims[(*rank)++] = d;
		p = q;
		if (p < end && *p != 'x')
			return false;
		if (p < end)
			p++;
		if (p == end && p[-1] == 'x')
			return false;
	}
	return *rank > 0;
}

static bool
alloc_tensor(InterpValue *out, IrType *elem, int rank, const int64_t *dims, char *err, size_t n)
{
	int64_t nel = 1;
	for (int d = 0; d < rank; d++) {
		if (dims[d] && nel > ((int64_t)1 << 40) / dims[d])
			return errf(err, n, "array of more than 2^40 elements");
		nel *= dims[d];
	}
	size_t bytes = (size_t)nel * interp_elem_size(elem);
	out->owned = calloc(bytes ? bytes : 1, 1);
	if (!out->owned)
		return errf(err, n, "out of memory for %lld elements", (long long)nel);
	InterpTensor *t = &out->arg.t;
	out->arg.tensor = true;
	t->data = out->owned;
	t->nelem = nel;
	t->rank = rank;
	int64_t s = 1;
	for (int d = rank - 1; d >= 0; d--) {
		t->dims[d] = dims[d];
		t->strides[d] = s;
		s *= dims[d];
	}
	return true;
}

static bool
parse_scalar(const char *text, IrType *t, InterpValue *out, char *err, size_t n)
{
	char *end;
	errno = 0;
	if (ir_type_is_int(t)) {
		long long v = strtoll(text, &end, 0);
		if (end == text || *end || errno)
			return errf(err, n, "'%s' is not an integer", text);
		/* Signed or unsigned in the type's width, as literals in the source. */
		int bits = t->kind == IR_TY_INDEX ? 64 : t->bits;
		if (bits == 1 ? (v != 0 && v != 1)
		              : bits < 64 && (v < -(1LL << (bits - 1)) || v >= (1LL << bits)))
			return errf(err, n, "'%s' does not fit type 'i%d'", text, bits);
		out->arg.i = v;
		return true;
	}
	double v = strtod(text, &end);
	if (end == text || *end)
		return errf(err, n, "'%s' is not a number", text);
	out->arg.f = v;
	return true;
}

bool
interp_value_parse(IrCtx *c, const char *text, IrType *t, InterpValue *out, char *err,
                   size_t errlen)
{
	memset(out, 0, sizeof *out);
	bool array = t->kind == IR_TY_TENSOR || t->kind == IR_TY_PTR;
	IrType *elem = array ? t->elem : t;
	bool is_rand = !strncmp(text, "rand:", 5), is_zeros = !strncmp(text, "zeros:", 6);
	size_t len = strlen(text);
	bool is_npy = len > 4 && !strcmp(text + len - 4, ".npy");
	if (!array) {
		if (is_rand || is_zeros || is_npy)
			return errf(err, errlen,
			            "a scalar of type '%s' takes a literal, found '%s'",
			            ir_type_str(c, t), text);
		if (!ir_type_is_scalar(t))
			return errf(err, errlen, "arguments of type '%s' cannot be given",
			            ir_type_str(c, t));
		return parse_scalar(text, t, out, err, errlen);
	}
	if (is_rand || is_zeros) {
		/* rand:DIMS:DTYPE:SEED, zeros:DIMS:DTYPE */
		const char *p = text + (is_rand ? 5 : 6);
		const char *c1 = strchr(p, ':');
		const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c1 || (is_rand && !c2) || (!is_rand && c2))
			return errf(err, errlen, "expected '%s', found '%s'",
			            is_rand ? "rand:DIMS:DTYPE:SEED" : "zeros:DIMS:DTYPE", text);
		int rank;
		int64_t dims[IR_MAX_RANK];
		if (!parse_dims(p, (size_t)(c1 - p), &rank, dims))
			return errf(err, errlen, "bad dimensions '%.*s' (expected e.g. 128x64)",
			            (int)(c1 - p), p);
		const char *te = c2 ? c2 : text + len;
		IrType *dt = dtype(c, c1 + 1, (size_t)(te - c1 - 1));
		if (!dt)
			return errf(err, errlen, "unknown element type '%.*s'", (int)(te - c1 - 1),
			            c1 + 1);
		if (dt != elem)
			return errf(err, errlen, "the argument holds '%s', the value gives '%s'",
			            ir_type_str(c, elem), ir_type_str(c, dt));
		uint64_t seed = 0;
		if (is_rand) {
			char *end;
			errno = 0;
			seed = strtoull(c2 + 1, &end, 0);
			if (end == c2 + 1 || *end || errno)
				return errf(err, errlen, "bad seed '%s'", c2 + 1);
		}
		if (!alloc_tensor(out, elem, rank, dims, err, errlen))
			return false;
		if (is_rand)
			interp_rand_fill(elem, seed, out->arg.t.nelem, out->owned);
		return true;
	}
	if (!is_npy)
		return errf(err, errlen,
		            "an argument of type '%s' takes a .npy file, rand:... or "
		            "zeros:..., found '%s'",
		            ir_type_str(c, t), text);
	InterpNpy a;
	if (!interp_npy_read(text, &a, err, errlen))
		return false;
	bool ok = alloc_tensor(out, elem, a.rank, a.dims, err, errlen) &&
	          interp_npy_convert(&a, elem, out->owned, err, errlen);
	free(a.data);
	if (!ok)
		interp_value_free(out);
	return ok;
}

void
interp_value_free(InterpValue *v)
{
	free(v->owned);
	v->owned = NULL;
}
