/* bundle_run.c — linked against libave_rt alone (no LLVM, no Z3): loads a vadd bundle, runs it
 * on the host device and checks the result; a corrupted bundle is refused.
 * usage: capi-bundle-run BUNDLE */
#include "capi.h"

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	AveContext c;
	AveKernel k;
	AveDevice host;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveKernelLoadBundle(c, argv[1], &k));
	printf("loaded %s for %s, %d args\n", aveKernelGetName(k), aveKernelGetTarget(k),
	       aveKernelGetNumArgs(k));
	CHECK_OK(aveDeviceOpen(c, "host", 0, &host));
	enum { N = 1500 };
	float a[N], b[N], out[N];
	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = (float)(N - i);
	}
	AveBuffer ba, bb, bc;
	CHECK_OK(aveBufferCreate(host, sizeof a, &ba));
	CHECK_OK(aveBufferCreate(host, sizeof b, &bb));
	CHECK_OK(aveBufferCreate(host, sizeof out, &bc));
	CHECK_OK(aveBufferUpload(ba, 0, a, sizeof a));
	CHECK_OK(aveBufferUpload(bb, 0, b, sizeof b));
	AveArgs args;
	CHECK_OK(aveArgsCreate(&args));
	int64_t n = N;
	CHECK_OK(aveArgsAddTensor(args, ba, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, bb, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, bc, 1, &n, NULL));
	uint32_t grid[3] = {2, 1, 1};
	CHECK_OK(aveKernelLaunch(k, host, grid, args, (AveStream){NULL}));
	CHECK_OK(aveBufferDownload(bc, 0, out, sizeof out));
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += out[i] != (float)N;
	printf("run: %d mismatches\n", bad);

	/* The same bytes with one flipped are refused. */
	size_t len;
	char *bytes = slurp(argv[1], &len);
	bytes[len / 3] ^= 1;
	AveKernel k2;
	printf("corrupt: %s\n", aveResultGetName(aveKernelLoadBundleFromMemory(c, bytes, len, &k2)));
	free(bytes);
	aveArgsDestroy(args);
	aveBufferDestroy(ba);
	aveBufferDestroy(bb);
	aveBufferDestroy(bc);
	aveKernelDestroy(k);
	aveDeviceClose(host);
	aveContextDestroy(c);
	return 0;
}
