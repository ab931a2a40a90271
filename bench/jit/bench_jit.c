/* bench_jit.c — the JIT's fixed costs: a compile served from the in-memory cache, one served from
 * the disk cache (a fresh context), a cold compile, and the overhead of a host launch of a
 * trivial kernel (1 CTA, 32 threads). Prints medians; run on demand (`bench-jit`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ave/ave.h"

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

static const char *src = "ave.kernel @tiny(%x: !ave.tensor<32xf32, global>) {threads = 32} {\n"
			 "  %v = ave.load %x[0] : !ave.tile<32xf32, reg>\n"
			 "  %w = ave.add %v, 1.0 : !ave.tile<32xf32, reg>\n"
			 "  ave.store %w into(%x[0])\n"
			 "  ave.return\n"
			 "}\n";

int
main(int argc, char **argv)
{
	const char *target = argc > 1 ? argv[1] : "host";
	enum { N = 200 };
	double t[N];
	char dir[] = "/tmp/ave-bench-jit-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	AveContext c;
	AveModule m;
	AveCompileOptions o;
	AveKernel k;
	aveContextCreate(&c);
	aveContextSetCacheDir(c, dir);
	aveModuleParse(c, src, strlen(src), "tiny.ave", &m);
	aveCompileOptionsCreate(&o);
	if (aveCompileOptionsSetTarget(o, target))
		return 1;

	double t0 = now();
	if (aveKernelCompile(m, "tiny", o, &k))
		return 1;
	double cold = now() - t0;
	aveKernelDestroy(k);

	for (int i = 0; i < N; i++) {
		t0 = now();
		aveKernelCompile(m, "tiny", o, &k);
		t[i] = now() - t0;
		aveKernelDestroy(k);
	}
	double warm = median(t, N);

	for (int i = 0; i < 20; i++) {
		AveContext c2;
		AveModule m2;
		aveContextCreate(&c2);
		aveContextSetCacheDir(c2, dir);
		aveModuleParse(c2, src, strlen(src), "tiny.ave", &m2);
		t0 = now();
		aveKernelCompile(m2, "tiny", o, &k);
		t[i] = now() - t0;
		aveKernelDestroy(k);
		aveModuleDestroy(m2);
		aveContextDestroy(c2);
	}
	double disk = median(t, 20);
	printf("JIT compile of a tiny kernel for %s (medians)\n", target);
	printf("  cold compile:              %9.3f ms\n", cold * 1e3);
	printf("  warm, in-memory cache:     %9.3f ms  (target < 1 ms: %s)\n", warm * 1e3,
	       warm < 1e-3 ? "met" : "NOT met");
	printf("  warm, disk cache (new ctx):%9.3f ms\n", disk * 1e3);

	if (!strcmp(target, "host")) {
		AveDevice d;
		AveBuffer b;
		AveArgs a;
		float x[32] = {0};
		int64_t n = 32;
		uint32_t grid[3] = {1, 1, 1};
		aveKernelCompile(m, "tiny", o, &k);
		aveDeviceOpen(c, "host", 0, &d);
		aveBufferCreate(d, sizeof x, &b);
		aveBufferUpload(b, 0, x, sizeof x);
		aveArgsCreate(&a);
		aveArgsAddTensor(a, b, 1, &n, NULL);
		aveKernelLaunch(k, d, grid, a, (AveStream){NULL}); /* loads the kernel */
		for (int i = 0; i < N; i++) {
			t0 = now();
			aveKernelLaunch(k, d, grid, a, (AveStream){NULL});
			t[i] = now() - t0;
		}
		printf("  host launch, 1 CTA x 32 threads (whole launch): %7.3f us\n", median(t, N) * 1e6);
		aveBufferDownload(b, 0, x, sizeof x);
		printf("  (x[0] after %d launches: %g)\n", N + 1, (double)x[0]);
		aveArgsDestroy(a);
		aveBufferDestroy(b);
		aveKernelDestroy(k);
		aveDeviceClose(d);
	}
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);
	aveContextDestroy(c);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}
