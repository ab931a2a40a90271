/* diagnostics.c — parse and verify errors reach the context's callback with locations, codes
 * and notes; results say what failed; the default handler can be restored. */
#include "capi.h"

int
main(void)
{
	AveContext c;
	AveModule m;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);

	const char *bad = "ave.kernel @k() {threads = 64} {\n  %x = ave.const 1 : i32\n  %y = ave.add %x, %q : i32\n  ave.return\n}\n";
	AveResult r = aveModuleParse(c, bad, strlen(bad), "bad.ave", &m);
	printf("parse: %s null=%d\n", aveResultGetName(r), m.ptr == NULL);

	const char *unver = "ave.kernel @k() {threads = 64} {\n  %x = ave.const 1 : i32\n  %y = ave.const 2 : i32\n  %z = ave.add %x, %y : f32\n  ave.return\n}\n";
	r = aveModuleParse(c, unver, strlen(unver), "verify.ave", &m);
	printf("verify: %s\n", aveResultGetName(r));

	const char *redef = "ave.kernel @k() {threads = 64} {\n  %x = ave.const 1 : i32\n  %x = ave.const 2 : i32\n  ave.return\n}\n";
	r = aveModuleParse(c, redef, strlen(redef), "redef.ave", &m);
	printf("redef: %s\n", aveResultGetName(r));

	const char *good = "ave.kernel @a() {threads = 64} {\n  ave.return\n}\nave.kernel @b() {threads = 32} {\n  ave.return\n}\n";
	CHECK_OK(aveModuleParse(c, good, strlen(good), "good.ave", &m));
	printf("kernels: %d %s %s\n", aveModuleGetNumKernels(m), aveModuleGetKernelName(m, 0),
	       aveModuleGetKernelName(m, 1));

	/* An unknown kernel and bad arguments are errors, not crashes. */
	AveKernel k;
	AveCompileOptions o;
	CHECK_OK(aveCompileOptionsCreate(&o));
	printf("target bogus: %s\n", aveResultGetName(aveCompileOptionsSetTarget(o, "sm_99")));
	printf("missing: %s\n", aveResultGetName(aveKernelCompile(m, "nope", o, &k)));
	printf("null module: %s\n", aveResultGetName(aveKernelCompile((AveModule){NULL}, "a", o, &k)));
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);
	aveContextDestroy(c);
	return 0;
}
