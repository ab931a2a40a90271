/* host_run.c — compile vadd and gemm for the host target through the C API, read their metadata,
 * run them on the host device and compare with plain C references.
 * usage: capi-host-run EXAMPLES_DIR */
#include <math.h>

#include "capi.h"

static uint16_t
f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1); /* round to nearest even (inputs are finite) */
	return (uint16_t)(u >> 16);
}

static float
bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static AveModule
load(AveContext c, const char *dir, const char *name)
{
	char path[1024];
	AveModule m;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	CHECK_OK(aveModuleParseFile(c, path, &m));
	return m;
}

static void
describe(AveKernel k)
{
	printf("kernel %s target %s threads %d args %d:", aveKernelGetName(k), aveKernelGetTarget(k),
	       aveKernelGetThreads(k), aveKernelGetNumArgs(k));
	static const char *kinds[] = {"tensor", "pointer", "int", "float"};
	for (int i = 0; i < aveKernelGetNumArgs(k); i++)
		printf(" %s:%s", aveKernelGetArgName(k, i), kinds[aveKernelGetArgKind(k, i)]);
	printf("\n");
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	AveContext c;
	AveDevice host;
	AveCompileOptions o;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	CHECK_OK(aveDeviceOpen(c, "host", 0, &host));
	printf("device: %s\n", aveDeviceGetName(host));
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetTarget(o, "host"));

	/* vadd on 3000 elements: three CTAs, the last one masked. */
	AveModule mv = load(c, argv[1], "vadd.ave");
	AveKernel kv;
	CHECK_OK(aveKernelCompile(mv, "vadd", o, &kv));
	describe(kv);
	enum { N = 3000 };
	float *a = malloc(N * 4), *b = malloc(N * 4), *out = malloc(N * 4);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = 1.0f / (float)(i + 1);
	}
	AveBuffer ba, bb, bc;
	CHECK_OK(aveBufferCreate(host, N * 4, &ba));
	CHECK_OK(aveBufferCreate(host, N * 4, &bb));
	CHECK_OK(aveBufferCreate(host, N * 4, &bc));
	CHECK_OK(aveBufferUpload(ba, 0, a, N * 4));
	CHECK_OK(aveBufferUpload(bb, 0, b, N * 4));
	AveArgs args;
	CHECK_OK(aveArgsCreate(&args));
	int64_t n = N;
	CHECK_OK(aveArgsAddTensor(args, ba, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, bb, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, bc, 1, &n, NULL));
	uint32_t grid[3] = {3, 1, 1};
	CHECK_OK(aveKernelLaunch(kv, host, grid, args, (AveStream){NULL}));
	CHECK_OK(aveDeviceSynchronize(host));
	CHECK_OK(aveBufferDownload(bc, 0, out, N * 4));
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += out[i] != a[i] + b[i];
	printf("vadd: %d mismatches\n", bad);

	/* A launch with the wrong number of arguments is refused with a reason. */
	aveArgsClear(args);
	CHECK_OK(aveArgsAddTensor(args, ba, 1, &n, NULL));
	printf("short args: %s\n", aveResultGetName(aveKernelLaunch(kv, host, grid, args, (AveStream){NULL})));

	/* gemm 200 x 136 x 100 (not tile multiples) in bf16 with f32 accumulation. */
	AveModule mg = load(c, argv[1], "gemm.ave");
	AveKernel kg;
	CHECK_OK(aveKernelCompile(mg, "gemm", o, &kg));
	describe(kg);
	enum { M = 200, NN = 136, K = 100 };
	uint16_t *A = malloc(M * K * 2), *B = malloc(NN * K * 2);
	float *C = malloc(M * NN * 4);
	for (int i = 0; i < M * K; i++)
		A[i] = f32_to_bf16((float)((i * 37) % 17 - 8) / 8.0f);
	for (int i = 0; i < NN * K; i++)
		B[i] = f32_to_bf16((float)((i * 11) % 13 - 6) / 4.0f);
	AveBuffer bA, bB, bC;
	CHECK_OK(aveBufferCreate(host, M * K * 2, &bA));
	CHECK_OK(aveBufferCreate(host, NN * K * 2, &bB));
	CHECK_OK(aveBufferCreate(host, M * NN * 4, &bC));
	CHECK_OK(aveBufferUpload(bA, 0, A, M * K * 2));
	CHECK_OK(aveBufferUpload(bB, 0, B, NN * K * 2));
	aveArgsClear(args);
	int64_t sa[2] = {M, K}, sb[2] = {NN, K}, sc[2] = {M, NN};
	CHECK_OK(aveArgsAddTensor(args, bA, 2, sa, NULL));
	CHECK_OK(aveArgsAddTensor(args, bB, 2, sb, NULL));
	CHECK_OK(aveArgsAddTensor(args, bC, 2, sc, NULL));
	CHECK_OK(aveArgsAddInt(args, K));
	uint32_t g2[3] = {(M + 127) / 128, (NN + 127) / 128, 1};
	CHECK_OK(aveKernelLaunch(kg, host, g2, args, (AveStream){NULL}));
	CHECK_OK(aveBufferDownload(bC, 0, C, M * NN * 4));
	double maxerr = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < NN; j++) {
			double ref = 0;
			for (int k = 0; k < K; k++)
				ref += (double)bf16_to_f32(A[i * K + k]) * bf16_to_f32(B[j * K + k]);
			double e = fabs(ref - C[i * NN + j]);
			maxerr = e > maxerr ? e : maxerr;
		}
	printf("gemm: max abs err %s 1e-3\n", maxerr < 1e-3 ? "<" : ">=");

	aveBufferDestroy(ba);
	aveBufferDestroy(bb);
	aveBufferDestroy(bc);
	aveBufferDestroy(bA);
	aveBufferDestroy(bB);
	aveBufferDestroy(bC);
	aveArgsDestroy(args);
	aveKernelDestroy(kv);
	aveKernelDestroy(kg);
	aveModuleDestroy(mv);
	aveModuleDestroy(mg);
	aveCompileOptionsDestroy(o);
	aveDeviceClose(host);
	aveContextDestroy(c);
	free(a);
	free(b);
	free(out);
	free(A);
	free(B);
	free(C);
	return 0;
}
