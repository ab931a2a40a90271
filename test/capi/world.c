/* world.c — a communicating kernel (all-gather + GEMM, SPEC 5.9) through the C API on a world
 * of ranks: compiled for each device kind given (host, sim-sm_90a, ...), every rank's chunk
 * uploaded into its copy of the symmetric buffer, launched twice without a reset (epochs 1 and
 * 2), then a kernel of the same module that signals nothing, then the first again (its epoch 3:
 * the other kernel spent none); every rank's gathered buffer and C checked against a C
 * reference; then the API's misuse. */
#include "capi.h"

static const char *const text =
    "ave.module @tp {world = 2} {\n"
    "  ave.symm.alloc @A_full : !ave.tensor<128x32xf32, symm>\n"
    "  ave.symm.alloc @sig : !ave.tensor<2xi64, symm>\n"
    "  ave.chunk @Ach(%c: index) region(@A_full[%c * 64 : 64, 0 : 32]) signal(@sig[%c])\n"
    "  ave.chunk_schedule @ag(%r: index, %w: index) for(@Ach) template(\"all_gather.ring\")\n"
    "  ave.kernel @ag_gemm(%B: !ave.tensor<32x32xf32, global>,\n"
    "                      %C: !ave.tensor<128x32xf32, global>)\n"
    "      {threads = 128, overlap = @ag, overlap_operand = @A_full} {\n"
    "    %pm = ave.program_id dim(0) : index\n"
    "    %z = ave.zeros : !ave.tile<32x32xf32, reg>\n"
    "    %acc = ave.for %k = 0 to 2 step 1 iter_args(%c = %z) -> (!ave.tile<32x32xf32, reg>) {\n"
    "      %a = ave.load @A_full[%pm * 32, %k * 16] : !ave.tile<32x16xf32, reg>\n"
    "      %b = ave.load %B[0, %k * 16] : !ave.tile<32x16xf32, reg>\n"
    "      %d = ave.mma %a, %b, %c transpose_b : !ave.tile<32x32xf32, reg>\n"
    "      ave.yield %d : !ave.tile<32x32xf32, reg>\n"
    "    }\n"
    "    ave.store %acc into(%C[%pm * 32, 0])\n"
    "    ave.return\n"
    "  }\n"
    "  ave.kernel @nop(%C: !ave.tensor<128x32xf32, global>) {threads = 128} {\n"
    "    ave.return\n"
    "  }\n"
    "}\n";

enum { W = 2, ROWS = 128, K = 32, N = 32 };

static AveKernel
compile(AveModule m, const char *name, const char *target)
{
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetTarget(o, target));
	AveKernel k;
	CHECK_OK(aveKernelCompile(m, name, o, &k));
	aveCompileOptionsDestroy(o);
	return k;
}

static float
val(int rank, int i, int j)
{
	return (float)((rank * 7 + i * 3 + j * 5) % 11) - 5.0f;
}

/* One device kind ("host", "sim-sm_90a", or "cuda:sm_90a": a device and the target to compile
 * for): returns the number of wrong elements (or -1 when the run failed). */
static int
run(AveContext ctx, AveModule m, const char *spec)
{
	char kind[64], target[64];
	snprintf(kind, sizeof kind, "%s", spec);
	snprintf(target, sizeof target, "%s", spec);
	char *colon = strchr(kind, ':');
	if (colon) {
		*colon = 0;
		snprintf(target, sizeof target, "%s", colon + 1);
	}
	AveKernel k = compile(m, "ag_gemm", target);
	AveDevice d;
	CHECK_OK(aveDeviceOpen(ctx, kind, 0, &d));
	AveWorld w;
	CHECK_OK(aveWorldCreate(d, W, &w));
	static float a[ROWS * K], b[N * K], c[ROWS * N], got[ROWS * K];
	for (int i = 0; i < N * K; i++)
		b[i] = val(9, i / K, i % K);
	AveBuffer bb, cb[W];
	AveArgs args[W];
	CHECK_OK(aveBufferCreate(d, sizeof b, &bb));
	CHECK_OK(aveBufferUpload(bb, 0, b, sizeof b));
	int64_t bs[2] = {N, K}, cs[2] = {ROWS, N};
	for (int r = 0; r < W; r++) {
		/* Rank r holds its own chunk (rows 64 r ..) and noise elsewhere. */
		for (int i = 0; i < ROWS * K; i++)
			a[i] = i / K / 64 == r ? val(r, i / K, i % K) : 1e6f;
		AveBuffer ab;
		CHECK_OK(aveWorldGetBuffer(w, k, "@A_full", r, &ab));
		CHECK_OK(aveBufferUpload(ab, 0, a, sizeof a));
		CHECK_OK(aveBufferCreate(d, sizeof c, &cb[r]));
		CHECK_OK(aveArgsCreate(&args[r]));
		CHECK_OK(aveArgsAddTensor(args[r], bb, 2, bs, NULL));
		CHECK_OK(aveArgsAddTensor(args[r], cb[r], 2, cs, NULL));
	}
	AveKernel nop = compile(m, "nop", target);
	AveArgs nargs[W];
	for (int r = 0; r < W; r++) {
		CHECK_OK(aveArgsCreate(&nargs[r]));
		CHECK_OK(aveArgsAddTensor(nargs[r], cb[r], 2, cs, NULL));
	}
	uint32_t grid[3] = {4, 1, 1};
	int bad = 0;
	for (int launch = 0; launch < 4 && bad >= 0; launch++) {
		AveResult res = launch == 2 ? aveWorldLaunch(nop, w, grid, nargs, (AveStream){NULL})
					    : aveWorldLaunch(k, w, grid, args, (AveStream){NULL});
		if (!res)
			res = aveDeviceSynchronize(d);
		if (res) {
			printf("%s: launch %d: %s\n", kind, launch + 1, aveResultGetName(res));
			bad = -1;
		}
	}
	for (int r = 0; r < W && bad >= 0; r++) {
		AveBuffer ab;
		CHECK_OK(aveWorldGetBuffer(w, k, "A_full", r, &ab));
		CHECK_OK(aveBufferDownload(ab, 0, got, sizeof got));
		CHECK_OK(aveBufferDownload(cb[r], 0, c, sizeof c));
		for (int i = 0; i < ROWS; i++) {
			for (int j = 0; j < K; j++)
				bad += got[i * K + j] != val(i / 64, i, j);
			for (int j = 0; j < N; j++) {
				float ref = 0;
				for (int q = 0; q < K; q++)
					ref += val(i / 64, i, q) * b[j * K + q];
				bad += c[i * N + j] != ref;
			}
		}
	}
	printf("%s: %d ranks, 3 launches and another kernel's: %d wrong elements\n", kind, W, bad);
	fflush(stdout);
	aveKernelDestroy(nop);
	for (int r = 0; r < W; r++) {
		aveArgsDestroy(nargs[r]);
		aveArgsDestroy(args[r]);
		aveBufferDestroy(cb[r]);
	}
	aveBufferDestroy(bb);
	aveWorldDestroy(w);
	aveDeviceClose(d);
	aveKernelDestroy(k);
	return bad;
}

static void
misuse(AveContext ctx, AveModule m)
{
	AveKernel k = compile(m, "ag_gemm", "sim-sm_90a");
	AveDevice d;
	CHECK_OK(aveDeviceOpen(ctx, "sim-sm_90a", 0, &d));
	AveWorld w = {NULL};
	printf("size 0: %s\n", aveResultGetName(aveWorldCreate(d, 0, &w)));
	printf("size 65: %s\n", aveResultGetName(aveWorldCreate(d, 65, &w)));
	printf("null device: %s\n", aveResultGetName(aveWorldCreate((AveDevice){NULL}, 2, &w)));
	CHECK_OK(aveWorldCreate(d, 2, &w));
	printf("size: %d, null: %d\n", aveWorldGetSize(w), aveWorldGetSize((AveWorld){NULL}));
	AveBuffer b;
	printf("unknown symbol: %s\n", aveResultGetName(aveWorldGetBuffer(w, k, "@nope", 0, &b)));
	printf("rank 2: %s\n", aveResultGetName(aveWorldGetBuffer(w, k, "@A_full", 2, &b)));
	CHECK_OK(aveWorldGetBuffer(w, k, "@sig", 1, &b));
	printf("sig bytes: %zu\n", aveBufferGetSize(b));
	/* A plain launch of a communicating kernel is refused with the way to run it. */
	AveArgs a;
	CHECK_OK(aveArgsCreate(&a));
	AveBuffer x;
	CHECK_OK(aveBufferCreate(d, 128 * 32 * 4, &x));
	int64_t s[2] = {32, 32}, t[2] = {128, 32};
	CHECK_OK(aveArgsAddTensor(a, x, 2, s, NULL));
	CHECK_OK(aveArgsAddTensor(a, x, 2, t, NULL));
	uint32_t grid[3] = {4, 1, 1};
	printf("plain launch: %s\n",
	       aveResultGetName(aveKernelLaunch(k, d, grid, a, (AveStream){NULL})));
	printf("null args: %s\n", aveResultGetName(aveWorldLaunch(k, w, grid, NULL, (AveStream){NULL})));
	AveArgs two[2] = {a, {NULL}};
	printf("null rank args: %s\n",
	       aveResultGetName(aveWorldLaunch(k, w, grid, two, (AveStream){NULL})));
	/* The world's own buffer: destroying its handle is refused, and the world goes on. */
	AveBuffer sig;
	CHECK_OK(aveWorldGetBuffer(w, k, "@sig", 0, &sig));
	aveBufferDestroy(sig);
	CHECK_OK(aveWorldGetBuffer(w, k, "@sig", 0, &sig));
	printf("sig bytes after a refused destroy: %zu\n", aveBufferGetSize(sig));
	/* A grid whose CTA count overflows is refused, not wrapped around. */
	AveKernel nop = compile(m, "nop", "sim-sm_90a");
	AveArgs na[2];
	for (int r = 0; r < 2; r++) {
		CHECK_OK(aveArgsCreate(&na[r]));
		CHECK_OK(aveArgsAddTensor(na[r], x, 2, t, NULL));
	}
	uint32_t huge[3] = {2, 2147549185u, 4294836226u};
	printf("huge grid: %s\n", aveResultGetName(aveWorldLaunch(nop, w, huge, na, (AveStream){NULL})));
	/* A signalling kernel with more than one CTA along a dimension it never reads. */
	uint32_t two_y[3] = {4, 2, 1};
	AveArgs ka[2] = {a, a};
	printf("grid.y = 2: %s\n", aveResultGetName(aveWorldLaunch(k, w, two_y, ka, (AveStream){NULL})));
	for (int r = 0; r < 2; r++)
		aveArgsDestroy(na[r]);
	aveKernelDestroy(nop);
	aveArgsDestroy(a);
	aveBufferDestroy(x);
	aveWorldDestroy(w);
	aveWorldDestroy((AveWorld){NULL});
	aveDeviceClose(d);
	aveKernelDestroy(k);
}

int
main(int argc, char **argv)
{
	AveContext ctx;
	CHECK_OK(aveContextCreate(&ctx));
	aveContextSetDiagnosticHandler(ctx, print_diag, NULL);
	AveModule m;
	CHECK_OK(aveModuleParse(ctx, text, strlen(text), "world.ave", &m));
	int bad = 0;
	for (int i = 1; i < argc; i++)
		bad += run(ctx, m, argv[i]) != 0;
	misuse(ctx, m);
	aveModuleDestroy(m);
	aveContextDestroy(ctx);
	return bad != 0;
}
