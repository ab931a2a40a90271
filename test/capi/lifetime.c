/* lifetime.c — a compiled kernel outlives its context (ave.h): launches after the context is
 * destroyed, refused or not, and writing its bundle, read no freed memory (the ASan build runs
 * it). Launch-time errors reach the launching device's context. usage: capi-lifetime EXAMPLES */
#include "capi.h"

#define SHOW(what, call) printf("%s: %s\n", what, aveResultGetName(call))

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char path[1024];
	snprintf(path, sizeof path, "%s/vadd.ave", argv[1]);
	AveContext c1, c2;
	CHECK_OK(aveContextCreate(&c1));
	CHECK_OK(aveContextCreate(&c2));
	aveContextSetDiagnosticHandler(c1, print_diag, "c1 ");
	aveContextSetDiagnosticHandler(c2, print_diag, "c2 ");
	CHECK_OK(aveContextSetCacheDir(c1, NULL));
	AveModule m;
	AveKernel k;
	CHECK_OK(aveModuleParseFile(c1, path, &m));
	CHECK_OK(aveKernelCompile(m, "vadd", (AveCompileOptions){NULL}, &k));
	aveModuleDestroy(m);

	/* A device on the kernel's own context, which is destroyed before the device is used. */
	AveDevice d1, d2;
	CHECK_OK(aveDeviceOpen(c1, "host", 0, &d1));
	CHECK_OK(aveDeviceOpen(c2, "host", 0, &d2));
	aveContextDestroy(c1);

	AveArgs a;
	CHECK_OK(aveArgsCreate(&a));
	uint32_t grid[3] = {1, 1, 1};
	/* Refused: no arguments. On a live context's device the reason reaches its handler. */
	SHOW("refused on d2", aveKernelLaunch(k, d2, grid, a, (AveStream){NULL}));
	/* On the destroyed context's device no handler is called (its user data may be gone). */
	SHOW("refused on d1", aveKernelLaunch(k, d1, grid, a, (AveStream){NULL}));
	SHOW("write to a directory", aveKernelWriteBundle(k, "/"));

	/* A launch that runs, after the context is gone. */
	float x[1024], y[1024], z[1024];
	for (int i = 0; i < 1024; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
	}
	AveBuffer bx, by, bz;
	CHECK_OK(aveBufferCreate(d1, sizeof x, &bx));
	CHECK_OK(aveBufferCreate(d1, sizeof y, &by));
	CHECK_OK(aveBufferCreate(d1, sizeof z, &bz));
	CHECK_OK(aveBufferUpload(bx, 0, x, sizeof x));
	CHECK_OK(aveBufferUpload(by, 0, y, sizeof y));
	int64_t n = 1024;
	CHECK_OK(aveArgsAddTensor(a, bx, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(a, by, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(a, bz, 1, &n, NULL));
	SHOW("launch on d1", aveKernelLaunch(k, d1, grid, a, (AveStream){NULL}));
	CHECK_OK(aveBufferDownload(bz, 0, z, sizeof z));
	int bad = 0;
	for (int i = 0; i < 1024; i++)
		bad += z[i] != x[i] + 1.0f;
	printf("mismatches: %d\n", bad);
	aveBufferDestroy(bx);
	aveBufferDestroy(by);
	aveBufferDestroy(bz);
	aveArgsDestroy(a);
	aveDeviceClose(d1);
	aveKernelDestroy(k);
	aveDeviceClose(d2);
	aveContextDestroy(c2);
	return 0;
}
