/* misuse.c — the C API under misuse: each call returns an error and says why (through the
 * diagnostic handler), never crashes. Run under the ASan+UBSan build too. */
#include "capi.h"

#define SHOW(what, call) printf("%s: %s\n", what, aveResultGetName(call))

int
main(void)
{
	AveContext c;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);

	/* A null diagnostic reads as empty. */
	AveDiagnostic nd = {NULL};
	printf("null diag: '%s' %u %d %d\n", aveDiagnosticGetMessage(nd), aveDiagnosticGetLine(nd),
	       aveDiagnosticGetNumNotes(nd), aveDiagnosticGetNumCounterexampleEntries(nd));

	/* Text too large to be a module. */
	AveModule m;
	SHOW("parse SIZE_MAX", aveModuleParse(c, "x", (size_t)-1, "big.ave", &m));

	/* Cache directories that cannot be one. */
	SHOW("cache dir empty", aveContextSetCacheDir(c, ""));
	SHOW("cache dir file", aveContextSetCacheDir(c, "/dev/null"));
	CHECK_OK(aveContextSetCacheDir(c, NULL));

	/* A long kernel name and pipeline make a long cache key. */
	char text[2048], name[600];
	memset(name, 'k', sizeof name - 1);
	name[sizeof name - 1] = 0;
	snprintf(text, sizeof text, "ave.kernel @%s() {threads = 32} {\n  ave.return\n}\n", name);
	CHECK_OK(aveModuleParse(c, text, strlen(text), "long.ave", &m));
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	char pipe[1100] = "";
	for (int i = 0; i < 60; i++)
		strcat(pipe, i ? ",canonicalize" : "canonicalize");
	CHECK_OK(aveCompileOptionsSetPipeline(o, pipe));
	AveKernel k;
	SHOW("long key", aveKernelCompile(m, name, o, &k));
	aveKernelDestroy(k);
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);

	/* Tensor sizes whose strides overflow are refused, and leave no argument behind. */
	AveDevice d;
	CHECK_OK(aveDeviceOpen(c, "host", 0, &d));
	AveBuffer b;
	CHECK_OK(aveBufferCreate(d, 64, &b));
	AveArgs a;
	CHECK_OK(aveArgsCreate(&a));
	int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
	SHOW("overflowing sizes", aveArgsAddTensor(a, b, 3, huge, NULL));
	SHOW("upload null", aveBufferUpload(b, 0, NULL, 8));
	SHOW("schedules 0", aveDeviceSetSchedules(d, 0, 0));
	aveArgsDestroy(a);
	aveBufferDestroy(b);
	aveDeviceClose(d);
	aveContextDestroy(c);
	return 0;
}
