/* ref.c — ave-interp-ref: plain C reference implementations for the interpreter's tests. It
 * reads the .npy files `ave run --out` wrote (its own small reader, sharing no code with the
 * interpreter), recomputes the result in double precision and compares within the tolerance given
 * on the command line, printing the errors and PASS or FAIL for FileCheck.
 *
 *   ave-interp-ref vadd A B C                      C == A + B exactly (f32)
 *   ave-interp-ref gemm A B C [--atol=X --rtol=Y]  C = A * B^T (bf16 inputs, f32 output)
 *   ave-interp-ref attention Q K V O S SCALE [...] O = softmax2(SCALE * Q K^T) V per 128-row head
 *   ave-interp-ref same A B                        A and B hold the same values
 *   ave-interp-ref info FILE [N]                   descriptor, shape and the first N values
 *   ave-interp-ref rand SEED N                     the documented rand: generator, recomputed
 *   ave-interp-ref make FILE TYPE DIMS V...        writes a .npy (TYPE f32 f64 f16 bf16 i8 i32
 *                                                  i64 b1 u16; bf16 from its value, u16 raw bits)
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef _Float16 f16; /* the C compiler's IEEE half, for reference values */

typedef struct Arr {
	char descr[96];
	char type[16]; /* f32 f64 f16 bf16 f8e4m3 f8e5m2 i8 i16 i32 i64 b1 */
	int rank;
	long long dims[8], n;
	int size;
	unsigned char *data;
	double *v; /* the values, decoded once */
} Arr;

static double decode_elem(const Arr *a, long long i);

static void
die(const char *msg, const char *arg)
{
	fprintf(stderr, "ave-interp-ref: %s%s\n", msg, arg ? arg : "");
	exit(2);
}

static void
load(const char *path, Arr *a)
{
	memset(a, 0, sizeof *a);
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open ", path);
	unsigned char pre[10];
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) || pre[6] != 1)
		die("not a version 1.0 .npy file: ", path);
	int hl = pre[8] | pre[9] << 8;
	char *h = calloc((size_t)hl + 1, 1);
	if (fread(h, 1, (size_t)hl, f) != (size_t)hl)
		die("truncated header: ", path);
	char *d = strstr(h, "'descr': ");
	char *s = strstr(h, "'shape': (");
	if (!d || !s)
		die("bad header: ", path);
	d += 9;
	char *e = strstr(d, ", 'fortran_order'");
	if (!e || e - d >= (long)sizeof a->descr)
		die("bad descr: ", path);
	memcpy(a->descr, d, (size_t)(e - d));
	static const struct {
		const char *descr, *type;
		int size;
	} known[] = {
	    {"'<f4'", "f32", 4},
	    {"'<f8'", "f64", 8},
	    {"'<f2'", "f16", 2},
	    {"'|i1'", "i8", 1},
	    {"'<i2'", "i16", 2},
	    {"'<i4'", "i32", 4},
	    {"'<i8'", "i64", 8},
	    {"'|b1'", "b1", 1},
	    {"[('bf16', '<u2')]", "bf16", 2},
	    {"[('f8e4m3', '|u1')]", "f8e4m3", 1},
	    {"[('f8e5m2', '|u1')]", "f8e5m2", 1},
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(a->descr, known[i].descr)) {
			strcpy(a->type, known[i].type);
			a->size = known[i].size;
		}
	if (!a->size)
		die("unknown descr in ", path);
	a->n = 1;
	for (char *p = s + 10; *p != ')';) {
		a->dims[a->rank] = strtoll(p, &p, 10);
		a->n *= a->dims[a->rank++];
		while (*p == ',' || *p == ' ')
			p++;
	}
	a->data = malloc((size_t)(a->n * a->size) + 1);
	if (fread(a->data, 1, (size_t)(a->n * a->size), f) != (size_t)(a->n * a->size))
		die("truncated data: ", path);
	free(h);
	fclose(f);
	a->v = malloc(sizeof(double) * (size_t)(a->n + 1));
	for (long long i = 0; i < a->n; i++)
		a->v[i] = decode_elem(a, i);
	free(a->data);
	a->data = NULL;
}

static double
get(const Arr *a, long long i)
{
	return a->v[i];
}

/* small float formats decoded from first principles */
static double
decode(unsigned bits, int ebits, int mbits, int bias, int fn)
{
	unsigned emask = (1u << ebits) - 1, mmask = (1u << mbits) - 1;
	int neg = (bits >> (ebits + mbits)) & 1;
	unsigned ex = (bits >> mbits) & emask, m = bits & mmask;
	double v;
	if (ex == emask && !fn)
		v = m ? NAN : INFINITY;
	else if (ex == emask && fn && m == mmask)
		v = NAN;
	else if (ex == 0)
		v = ldexp(m, 1 - bias - mbits);
	else
		v = ldexp(m + (double)(1u << mbits), (int)ex - bias - mbits);
	return neg ? -v : v;
}

static double
decode_elem(const Arr *a, long long i)
{
	const unsigned char *p = a->data + i * a->size;
	if (!strcmp(a->type, "f32")) {
		float x;
		memcpy(&x, p, 4);
		return x;
	}
	if (!strcmp(a->type, "f64")) {
		double x;
		memcpy(&x, p, 8);
		return x;
	}
	if (!strcmp(a->type, "bf16")) {
		uint32_t u = (uint32_t)(p[0] | p[1] << 8) << 16;
		float x;
		memcpy(&x, &u, 4);
		return x;
	}
	if (!strcmp(a->type, "f16"))
		return decode((unsigned)(p[0] | p[1] << 8), 5, 10, 15, 0);
	if (!strcmp(a->type, "f8e4m3"))
		return decode(p[0], 4, 3, 7, 1);
	if (!strcmp(a->type, "f8e5m2"))
		return decode(p[0], 5, 2, 15, 0);
	if (!strcmp(a->type, "i8"))
		return (int8_t)p[0];
	if (!strcmp(a->type, "b1"))
		return p[0];
	if (!strcmp(a->type, "i16")) {
		int16_t x;
		memcpy(&x, p, 2);
		return x;
	}
	if (!strcmp(a->type, "i32")) {
		int32_t x;
		memcpy(&x, p, 4);
		return x;
	}
	int64_t x;
	memcpy(&x, p, 8);
	return (double)x;
}

typedef struct Tol {
	double atol, rtol;
} Tol;

static void
tol_args(int argc, char **argv, int from, Tol *t)
{
	for (int i = from; i < argc; i++) {
		if (!strncmp(argv[i], "--atol=", 7))
			t->atol = atof(argv[i] + 7);
		else if (!strncmp(argv[i], "--rtol=", 7))
			t->rtol = atof(argv[i] + 7);
		else
			die("unknown option ", argv[i]);
	}
}

/* Compares got with want (n values); prints the errors and PASS or FAIL. */
static int
compare(const Arr *got, const double *want, long long n, Tol t)
{
	double max_abs = 0, max_rel = 0;
	long long bad = 0, first = -1;
	for (long long i = 0; i < n; i++) {
		double g = get(got, i), w = want[i];
		double ae = fabs(g - w), re = w != 0 ? ae / fabs(w) : ae;
		if (isnan(g) != isnan(w) || ae > t.atol + t.rtol * fabs(w)) {
			if (first < 0)
				first = i;
			bad++;
		}
		if (ae > max_abs)
			max_abs = ae;
		if (re > max_rel && fabs(w) > 1e-3)
			max_rel = re;
	}
	printf("compared %lld values: max abs err %.3g, max rel err %.3g (atol %g, rtol %g)\n", n,
	       max_abs, max_rel, t.atol, t.rtol);
	if (bad) {
		printf("FAIL: %lld values out of tolerance, first at %lld: got %.9g, want %.9g\n",
		       bad, first, get(got, first), want[first]);
		return 1;
	}
	printf("PASS\n");
	return 0;
}

static int
vadd(char **argv)
{
	Arr a, b, c;
	load(argv[2], &a);
	load(argv[3], &b);
	load(argv[4], &c);
	if (a.n != b.n || a.n != c.n)
		die("vadd: sizes differ", NULL);
	double *want = malloc(sizeof(double) * (size_t)a.n);
	for (long long i = 0; i < a.n; i++)
		want[i] = (float)((float)get(&a, i) + (float)get(&b, i)); /* one f32 rounding */
	int rc = compare(&c, want, c.n, (Tol){0, 0});
	free(want);
	free(a.v);
	free(b.v);
	free(c.v);
	return rc;
}

static int
gemm(int argc, char **argv)
{
	Arr A, B, C;
	load(argv[2], &A);
	load(argv[3], &B);
	load(argv[4], &C);
	Tol t = {1e-3, 1e-4};
	tol_args(argc, argv, 5, &t);
	long long M = A.dims[0], K = A.dims[1], N = B.dims[0];
	if (B.dims[1] != K || C.dims[0] != M || C.dims[1] != N)
		die("gemm: shapes do not match A (MxK), B (NxK), C (MxN)", NULL);
	double *want = malloc(sizeof(double) * (size_t)(M * N));
	for (long long i = 0; i < M; i++)
		for (long long j = 0; j < N; j++) {
			double s = 0;
			for (long long k = 0; k < K; k++)
				s += get(&A, i * K + k) * get(&B, j * K + k);
			want[i * N + j] = s;
		}
	printf("gemm %lldx%lldx%lld\n", M, N, K);
	int rc = compare(&C, want, M * N, t);
	free(want);
	free(A.v);
	free(B.v);
	free(C.v);
	return rc;
}

/* Per (batch, head) block of S rows: O = softmax over keys of 2^(scale * q.k), times V. */
static int
attention(int argc, char **argv)
{
	Arr Q, Kx, V, O;
	load(argv[2], &Q);
	load(argv[3], &Kx);
	load(argv[4], &V);
	load(argv[5], &O);
	long long S = atoll(argv[6]);
	double scale = atof(argv[7]);
	Tol t = {2e-2, 2e-2};
	tol_args(argc, argv, 8, &t);
	long long rows = Q.dims[0], D = Q.dims[1];
	double *want = malloc(sizeof(double) * (size_t)(rows * D));
	double *w = malloc(sizeof(double) * (size_t)S);
	for (long long bh = 0; bh < rows / S; bh++)
		for (long long i = 0; i < S; i++) {
			long long qi = bh * S + i;
			double mx = -INFINITY, sum = 0;
			for (long long j = 0; j < S; j++) {
				double s = 0;
				for (long long d = 0; d < D; d++)
					s += get(&Q, qi * D + d) * get(&Kx, (bh * S + j) * D + d);
				w[j] = s * scale;
				mx = w[j] > mx ? w[j] : mx;
			}
			for (long long j = 0; j < S; j++) {
				w[j] = exp2(w[j] - mx);
				sum += w[j];
			}
			for (long long d = 0; d < D; d++) {
				double o = 0;
				for (long long j = 0; j < S; j++)
					o += w[j] * get(&V, (bh * S + j) * D + d);
				want[qi * D + d] = o / sum;
			}
		}
	printf("attention %lld rows, head dim %lld, %lld keys per head\n", rows, D, S);
	int rc = compare(&O, want, rows * D, t);
	free(want);
	free(w);
	free(Q.v);
	free(Kx.v);
	free(V.v);
	free(O.v);
	return rc;
}

static int
same(char **argv)
{
	Arr a, b;
	load(argv[2], &a);
	load(argv[3], &b);
	if (a.n != b.n)
		die("same: sizes differ", NULL);
	double *want = malloc(sizeof(double) * (size_t)(a.n + 1));
	for (long long i = 0; i < a.n; i++)
		want[i] = get(&a, i);
	int rc = compare(&b, want, b.n, (Tol){0, 0});
	free(want);
	free(a.v);
	free(b.v);
	return rc;
}

static int
info(int argc, char **argv)
{
	Arr a;
	load(argv[2], &a);
	long long n = argc > 3 ? atoll(argv[3]) : 0;
	printf("descr %s type %s shape (", a.descr, a.type);
	for (int d = 0; d < a.rank; d++)
		printf("%s%lld", d ? ", " : "", a.dims[d]);
	printf(")\n");
	bool integer = a.type[0] == 'i' || !strcmp(a.type, "b1");
	for (long long i = 0; i < n && i < a.n; i++)
		if (integer)
			printf("[%lld] = %lld\n", i, (long long)get(&a, i));
		else
			printf("[%lld] = %.9g\n", i, get(&a, i));
	free(a.v);
	return 0;
}

/* The generator as docs/interp.md states it. */
static int
randgen(char **argv)
{
	uint64_t s = strtoull(argv[2], NULL, 0);
	long long n = atoll(argv[3]);
	for (long long i = 0; i < n; i++) {
		uint64_t sum = 0;
		for (int k = 0; k < 6; k++) {
			uint64_t z = (s += 0x9E3779B97F4A7C15ull);
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
			z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
			z ^= z >> 31;
			sum += (z >> 32) + (z & 0xFFFFFFFFu);
		}
		printf("[%lld] = %.9g\n", i,
		       (double)(float)(((double)sum - 6.0 * 4294967296.0) / 4294967296.0));
	}
	return 0;
}

/* round-to-nearest-even float -> bf16 bits, the textbook way */
static unsigned
to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	return (u + 0x7FFF + ((u >> 16) & 1)) >> 16;
}

static int
make(int argc, char **argv)
{
	const char *path = argv[2], *type = argv[3];
	static const struct {
		const char *type, *descr;
		int size;
	} kinds[] = {{"f32", "'<f4'", 4}, {"f64", "'<f8'", 8},
	             {"f16", "'<f2'", 2}, {"bf16", "[('bf16', '<u2')]", 2},
	             {"i8", "'|i1'", 1},  {"i32", "'<i4'", 4},
	             {"i64", "'<i8'", 8}, {"b1", "'|b1'", 1},
	             {"u16", "'<u2'", 2}};
	int k = -1;
	for (int i = 0; i < (int)(sizeof kinds / sizeof kinds[0]); i++)
		if (!strcmp(kinds[i].type, type))
			k = i;
	if (k < 0)
		die("make: unknown type ", type);
	char shape[128] = "(";
	long long n = 1;
	for (char *p = argv[4]; *p;) {
		long long d = strtoll(p, &p, 10);
		n *= d;
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%lld,%s", d,
		         *p == 'x' ? " " : "");
		if (*p == 'x')
			p++;
	}
	strcat(shape, ")");
	if (argc - 5 != n)
		die("make: the number of values does not match the shape", NULL);
	char dict[256];
	int dl = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': %s, }",
	                  kinds[k].descr, shape);
	int pad = (64 - (10 + dl + 1) % 64) % 64, hl = dl + pad + 1;
	FILE *f = fopen(path, "wb");
	if (!f)
		die("cannot write ", path);
	unsigned char pre[10] = {
	    0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)hl, (unsigned char)(hl >> 8)};
	fwrite(pre, 1, 10, f);
	fprintf(f, "%s%*s\n", dict, pad, "");
	for (long long i = 0; i < n; i++) {
		double v = strtod(argv[5 + i], NULL);
		unsigned char b[8];
		if (!strcmp(type, "f32")) {
			float x = (float)v;
			memcpy(b, &x, 4);
		} else if (!strcmp(type, "f64")) {
			memcpy(b, &v, 8);
		} else if (!strcmp(type, "f16")) {
			f16 h = (f16)v;
			memcpy(b, &h, 2);
		} else if (!strcmp(type, "bf16")) {
			unsigned u = to_bf16((float)v);
			b[0] = (unsigned char)u;
			b[1] = (unsigned char)(u >> 8);
		} else if (!strcmp(type, "u16")) {
			unsigned u = (unsigned)strtoul(argv[5 + i], NULL, 0);
			b[0] = (unsigned char)u;
			b[1] = (unsigned char)(u >> 8);
		} else {
			long long x = strtoll(argv[5 + i], NULL, 0);
			memcpy(b, &x, 8); /* little-endian: the low bytes first */
		}
		fwrite(b, 1, (size_t)kinds[k].size, f);
	}
	fclose(f);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "make"))
		return make(argc, argv);
	if (argc >= 5 && !strcmp(argv[1], "vadd"))
		return vadd(argv);
	if (argc >= 5 && !strcmp(argv[1], "gemm"))
		return gemm(argc, argv);
	if (argc >= 8 && !strcmp(argv[1], "attention"))
		return attention(argc, argv);
	if (argc >= 4 && !strcmp(argv[1], "same"))
		return same(argv);
	if (argc >= 3 && !strcmp(argv[1], "info"))
		return info(argc, argv);
	if (argc >= 4 && !strcmp(argv[1], "rand"))
		return randgen(argv);
	die("usage: ave-interp-ref vadd|gemm|attention|same|info|rand|make ...", NULL);
	return 2;
}
