/* misuse.c — the C API under misuse: each call returns an error and says why (through the
 * diagnostic handler), never crashes. Run under the ASan+UBSan build too. */
#include "capi.h"

#define SHOW(what, call) printf("%s: %s\n", what, aveResultGetName(call))

/* The result and the thread's last error, which reading clears. */
static void
last(const char *what, AveResult r)
{
	const char *e = aveGetLastError();
	printf("%s: %s: %s\n", what, aveResultGetName(r), e ? e : "(none)");
	e = aveGetLastError();
	if (e)
		printf("FAIL: the last error was not cleared: %s\n", e);
}

/* Calls with a null handle or pointer: each says why, with or without a context to report to. */
static void
null_arguments(void)
{
	AveContext c, none = {NULL};
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	printf("no error yet: %s\n", aveGetLastError() ? "set" : "(none)");
	last("context out", aveContextCreate(NULL));
	AveModule m;
	last("parse no context", aveModuleParse(none, "", 0, "x.ave", &m));
	last("parse null text", aveModuleParse(c, NULL, 0, "x.ave", &m));
	last("parse null path", aveModuleParseFile(c, NULL, &m));
	const char *text = "ave.kernel @k() {threads = 32} {\n  ave.return\n}\n";
	CHECK_OK(aveModuleParse(c, text, strlen(text), "k.ave", &m));
	AveKernel k;
	last("compile null name", aveKernelCompile(m, NULL, (AveCompileOptions){NULL}, &k));
	last("compile null module", aveKernelCompile((AveModule){NULL}, "k",
						       (AveCompileOptions){NULL}, &k));
	CHECK_OK(aveKernelCompile(m, "k", (AveCompileOptions){NULL}, &k));
	AveDevice d;
	last("open null kind", aveDeviceOpen(c, NULL, 0, &d));
	CHECK_OK(aveDeviceOpen(c, "host", 0, &d));
	AveArgs a;
	CHECK_OK(aveArgsCreate(&a));
	uint32_t grid[3] = {1, 1, 1};
	AveStream s = {NULL};
	last("launch null device", aveKernelLaunch(k, (AveDevice){NULL}, grid, a, s));
	last("launch null grid", aveKernelLaunch(k, d, NULL, a, s));
	last("launch null args", aveKernelLaunch(k, d, grid, (AveArgs){NULL}, s));
	last("launch null kernel", aveKernelLaunch((AveKernel){NULL}, d, grid, a, s));
	last("load null path", aveKernelLoadBundle(c, NULL, &k));
	last("load null data", aveKernelLoadBundleFromMemory(c, NULL, 0, &k));
	last("write null kernel", aveKernelWriteBundle((AveKernel){NULL}, "x.bundle"));
	last("add int null list", aveArgsAddInt((AveArgs){NULL}, 1));
	last("sync null device", aveDeviceSynchronize((AveDevice){NULL}));
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	last("unknown target", aveCompileOptionsSetTarget(o, "sm_99"));
	last("opt level 7", aveCompileOptionsSetOptLevel(o, 7));
	/* An error diagnostic sets it too, whether or not a handler is set. */
	aveContextSetDiagnosticHandler(c, NULL, NULL);
	CHECK_OK(aveArgsAddInt(a, 1));
	last("launch one argument too many", aveKernelLaunch(k, d, grid, a, s));
	/* A buffer of the wrong element type, when the caller says which it holds. */
	{
		AveModule mt;
		AveKernel kt;
		const char *tt = "ave.kernel @t(%x: !ave.tensor<?xf32, global>) {threads = 32} {\n"
				 "  ave.return\n}\n";
		CHECK_OK(aveModuleParse(c, tt, strlen(tt), "t.ave", &mt));
		CHECK_OK(aveKernelCompile(mt, "t", (AveCompileOptions){NULL}, &kt));
		AveBuffer b;
		CHECK_OK(aveBufferCreate(d, 64, &b));
		AveArgs at;
		int64_t n = 16;
		CHECK_OK(aveArgsCreate(&at));
		CHECK_OK(aveArgsAddTensorTyped(at, b, "bf16", 1, &n, NULL));
		last("launch bf16 buffer for f32", aveKernelLaunch(kt, d, grid, at, s));
		aveArgsClear(at);
		CHECK_OK(aveArgsAddTensorTyped(at, b, "f32", 1, &n, NULL));
		printf("launch f32 buffer: %s\n", aveResultGetName(aveKernelLaunch(kt, d, grid, at, s)));
		last("typed tensor null type", aveArgsAddTensorTyped(at, b, NULL, 1, &n, NULL));
		aveArgsDestroy(at);
		aveBufferDestroy(b);
		aveKernelDestroy(kt);
		aveModuleDestroy(mt);
	}
	/* A scalar is checked against its declared type. */
	AveModule m8;
	AveKernel k8;
	const char *t8 = "ave.kernel @s(%n: i8) {threads = 32} {\n  ave.return\n}\n";
	CHECK_OK(aveModuleParse(c, t8, strlen(t8), "s.ave", &m8));
	CHECK_OK(aveKernelCompile(m8, "s", (AveCompileOptions){NULL}, &k8));
	AveArgs a8;
	CHECK_OK(aveArgsCreate(&a8));
	CHECK_OK(aveArgsAddInt(a8, 300));
	last("launch i8 = 300", aveKernelLaunch(k8, d, grid, a8, s));
	aveArgsDestroy(a8);
	CHECK_OK(aveArgsCreate(&a8));
	CHECK_OK(aveArgsAddInt(a8, 255));
	printf("launch i8 = 255: %s\n", aveResultGetName(aveKernelLaunch(k8, d, grid, a8, s)));
	aveArgsDestroy(a8);
	aveKernelDestroy(k8);
	aveModuleDestroy(m8);
	aveCompileOptionsDestroy(o);
	aveArgsDestroy(a);
	aveDeviceClose(d);
	aveKernelDestroy(k);
	aveModuleDestroy(m);
	aveContextDestroy(c);
}

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
	(void)aveGetLastError();
	null_arguments();
	return 0;
}
