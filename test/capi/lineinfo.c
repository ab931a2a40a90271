/* lineinfo.c — debug information through libave (aveCompileOptionsSetDebugInfo): compiles vadd
 * for a target without and with it and writes both binaries (aveKernelGetBinary) for the test to
 * read with llvm-readelf / llvm-dwarfdump; the level is part of the cache key.
 * usage: capi-lineinfo EXAMPLES_DIR TARGET LEVEL OUT (writes OUT and OUT.plain) */
#include "capi.h"

static AveKernel
compile(AveModule m, const char *target, int level)
{
	AveCompileOptions o;
	AveKernel k;
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetTarget(o, target));
	CHECK_OK(aveCompileOptionsSetDebugInfo(o, level));
	CHECK_OK(aveKernelCompile(m, "vadd", o, &k));
	aveCompileOptionsDestroy(o);
	return k;
}

static void
write(AveKernel k, const char *path)
{
	size_t n;
	const void *p = aveKernelGetBinary(k, &n);
	FILE *f = fopen(path, "wb");
	if (!f || !p || fwrite(p, 1, n, f) != n) {
		printf("FAIL: cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
}

int
main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	AveContext c;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	char path[1024];
	snprintf(path, sizeof path, "%s/vadd.ave", argv[1]);
	AveModule m;
	CHECK_OK(aveModuleParseFile(c, path, &m));
	AveKernel plain = compile(m, argv[2], 0);
	AveKernel dbg = compile(m, argv[2], atoi(argv[3]));
	AveKernel again = compile(m, argv[2], atoi(argv[3]));
	uint64_t mem, disk, miss, bad;
	aveContextGetCacheStats(c, &mem, &disk, &miss, &bad);
	printf("cache: %llu memory hits, %llu misses\n", (unsigned long long)mem,
	       (unsigned long long)miss);
	char plain_path[1100];
	snprintf(plain_path, sizeof plain_path, "%s.plain", argv[4]);
	write(dbg, argv[4]);
	write(plain, plain_path);
	size_t n0, n1;
	aveKernelGetBinary(plain, &n0);
	aveKernelGetBinary(dbg, &n1);
	printf("binaries differ: %s\n", n0 != n1 ? "yes" : "no");
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	AveResult r = aveCompileOptionsSetDebugInfo(o, 3);
	printf("level 3: %s: %s\n", aveResultGetName(r), aveGetLastError());
	size_t none = 1;
	const void *nb = aveKernelGetBinary((AveKernel){NULL}, &none); /* before reading `none` */
	printf("null kernel binary: %p %zu\n", nb, none);
	aveCompileOptionsDestroy(o);
	aveKernelDestroy(plain);
	aveKernelDestroy(dbg);
	aveKernelDestroy(again);
	aveModuleDestroy(m);
	aveContextDestroy(c);
	return 0;
}
