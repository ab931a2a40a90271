/* bench_gemm.c — ave-bench-interp: a 512x512x512 bf16 GEMM (f32 accumulation) through
 * examples/gemm.ave on the reference interpreter, one core, against a naive C triple loop over
 * the same data. Prints both rates in GMAC/s and their ratio. Run it with `cmake --build build
 * --target bench-interp` (numbers from a release build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "interp.h"

enum { M = 512, N = 512, K = 512, REPS = 3 };

static float
bf16(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float x;
	memcpy(&x, &u, 4);
	return x;
}

/* C = A * B^T with A: M x K, B: N x K (bf16), C: M x N (f32). */
static void
naive(const uint16_t *A, const uint16_t *B, float *C)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += bf16(A[i * K + k]) * bf16(B[j * K + k]);
			C[i * N + j] = s;
		}
}

static InterpArg
tensor(void *data, int64_t rows, int64_t cols)
{
	InterpArg a = {.tensor = true};
	a.t.data = data;
	a.t.nelem = rows * cols;
	a.t.rank = 2;
	a.t.dims[0] = rows;
	a.t.dims[1] = cols;
	a.t.strides[0] = cols;
	a.t.strides[1] = 1;
	return a;
}

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "examples/gemm.ave";
	IrCtx *c = ir_ctx_new(NULL);
	IrModule *m = fe_parse_file(c, path);
	if (!m || !ir_verify(m))
		return 1;
	IrOp *k = interp_find_kernel(m, "gemm");
	if (!k) {
		fprintf(stderr, "ave-bench-interp: no @gemm in %s\n", path);
		return 1;
	}
	uint16_t *A = malloc(sizeof *A * M * K), *B = malloc(sizeof *B * N * K);
	float *C = calloc(M * N, sizeof *C), *R = calloc(M * N, sizeof *R);
	interp_rand_fill(c->t_bf16, 1, M * K, A);
	interp_rand_fill(c->t_bf16, 2, N * K, B);
	InterpArg args[4] = {tensor(A, M, K), tensor(B, N, K), tensor(C, M, N), {.i = K}};
	InterpLaunch l = {.kernel = k, .grid = {M / 128, N / 128, 1}, .args = args, .nargs = 4};
	double best = 1e30, nbest = 1e30;
	for (int r = 0; r < REPS; r++) {
		InterpStats st;
		if (!interp_run(m, &l, NULL, &st))
			return 1;
		best = st.seconds < best ? st.seconds : best;
	}
	for (int r = 0; r < REPS; r++) {
		double t0 = ir_now();
		naive(A, B, R);
		double t = ir_now() - t0;
		nbest = t < nbest ? t : nbest;
	}
	double maxdiff = 0;
	for (int i = 0; i < M * N; i++) {
		double d = C[i] > R[i] ? C[i] - R[i] : R[i] - C[i];
		maxdiff = d > maxdiff ? d : maxdiff;
	}
	double macs = (double)M * N * K;
	printf("bf16 GEMM %dx%dx%d, one core, best of %d\n", M, N, K, REPS);
	printf("  interpreter (examples/gemm.ave): %8.4f s  %6.2f GMAC/s\n", best,
	       macs / best * 1e-9);
	printf("  naive C triple loop:             %8.4f s  %6.2f GMAC/s\n", nbest,
	       macs / nbest * 1e-9);
	printf("  interpreter / naive:             %6.2fx\n", nbest / best);
	printf("  max |difference|: %.3g\n", maxdiff);
	free(A);
	free(B);
	free(C);
	free(R);
	ir_module_free(m);
	ir_ctx_free(c);
	return 0;
}
