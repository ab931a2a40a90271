/* targets.c — compiles kernels for each target through the C API and reads their metadata;
 * a kernel whose invariants fail is refused with AVE_ERROR_CHECK and a counterexample.
 * usage: capi-targets EXAMPLES_DIR TARGET... */
#include "capi.h"

static void
show(AveModule m, const char *kernel, AveCompileOptions o, const char *target)
{
	AveKernel k;
	CHECK_OK(aveCompileOptionsSetTarget(o, target));
	AveResult r = aveKernelCompile(m, kernel, o, &k);
	if (r) {
		printf("%s %s: %s\n", target, kernel, aveResultGetName(r));
		return;
	}
	printf("%s %s: target=%s threads=%d smem=%llu regs=%s spills=%llu args=%d", target,
	       aveKernelGetName(k), aveKernelGetTarget(k), aveKernelGetThreads(k),
	       (unsigned long long)aveKernelGetSharedMemoryBytes(k),
	       aveKernelGetRegisters(k) > 0 ? "yes" : "no",
	       (unsigned long long)aveKernelGetSpillBytes(k), aveKernelGetNumArgs(k));
	for (int i = 0; i < aveKernelGetNumArgs(k); i++)
		printf(" %s", aveKernelGetArgName(k, i));
	printf("\n");
	/* Each argument's type and declared shape, without parsing the metadata. */
	printf("  signature:");
	for (int i = 0; i < aveKernelGetNumArgs(k); i++) {
		printf(" %s:%s", aveKernelGetArgName(k, i), aveKernelGetArgType(k, i));
		for (int d = 0; d < aveKernelGetArgRank(k, i); d++) {
			int64_t n = aveKernelGetArgDim(k, i, d), s = aveKernelGetArgStride(k, i, d);
			printf("%s%s", d ? "x" : "[", n < 0 ? "?" : "");
			if (n >= 0)
				printf("%lld", (long long)n);
			printf("/%s", s < 0 ? "?" : "");
			if (s >= 0)
				printf("%lld", (long long)s);
		}
		printf("%s", aveKernelGetArgRank(k, i) ? "]" : "");
	}
	printf(" (out of range: %lld %s)\n", (long long)aveKernelGetArgDim(k, 0, 9),
	       aveKernelGetArgType(k, 99) ? "type" : "no type");
	const char *json = aveKernelGetMetadataJson(k);
	printf("  metadata: %s\n", json && strstr(json, "\"format\": \"ave-kernels-1\"") ? "ave-kernels-1" : "?");
	aveKernelDestroy(k);
}

int
main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	AveContext c;
	AveCompileOptions o;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	CHECK_OK(aveCompileOptionsCreate(&o));
	printf("header %d.%d.%d library %s targets:", AVE_VERSION_MAJOR, AVE_VERSION_MINOR,
	       AVE_VERSION_PATCH, aveGetVersion());
	for (int i = 0; i < aveTargetCount(); i++)
		printf(" %s", aveTargetName(i));
	printf(" (%s)\n", aveTargetName(aveTargetCount()) ? "?" : "end");
	const char *names[] = {"vadd", "gemm", "gemm_ws"};
	for (int f = 0; f < 3; f++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s.ave", argv[1], names[f]);
		AveModule m;
		CHECK_OK(aveModuleParseFile(c, path, &m));
		for (int t = 2; t < argc; t++)
			show(m, names[f], o, argv[t]);
		aveModuleDestroy(m);
	}
	/* The checker runs as part of compiling. */
	char path[1024];
	snprintf(path, sizeof path, "%s/bad_parity.ave", argv[1]);
	AveModule m;
	CHECK_OK(aveModuleParseFile(c, path, &m));
	aveContextSetDiagnosticHandler(c, NULL, NULL);
	AveKernel k;
	CHECK_OK(aveCompileOptionsSetTarget(o, argv[2]));
	AveResult r = aveKernelCompile(m, "bad_parity", o, &k);
	printf("bad_parity: %s\n", aveResultGetName(r));
	aveModuleDestroy(m);
	aveCompileOptionsDestroy(o);
	aveContextDestroy(c);
	return 0;
}
