/* bundle_write.c — compiles a kernel with libave and writes it as a bundle.
 * usage: capi-bundle-write FILE.ave KERNEL TARGET OUT.avb */
#include "capi.h"

int
main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	AveContext c;
	AveModule m;
	AveKernel k;
	AveCompileOptions o;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	CHECK_OK(aveModuleParseFile(c, argv[1], &m));
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetTarget(o, argv[3]));
	CHECK_OK(aveKernelCompile(m, argv[2], o, &k));
	CHECK_OK(aveKernelWriteBundle(k, argv[4]));
	printf("wrote %s (%s)\n", aveKernelGetName(k), aveKernelGetTarget(k));
	aveKernelDestroy(k);
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);
	aveContextDestroy(c);
	return 0;
}
