/* main.c — embedding ave: parse a kernel, compile it (for the host interpreter by default, or a
 * GPU target), run it on a device and check the result. Built against the installed library:
 * see examples/embed/CMakeLists.txt and README.md.
 * usage: embed [TARGET [DEVICE]]   e.g. `embed`, `embed sm_90a cuda` */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ave/ave.h>

static const char *kernel_text =
	"// y = a * x + y, 1024 elements per CTA\n"
	"ave.kernel @saxpy(%x: !ave.tensor<?xf32, global>, %y: !ave.tensor<?xf32, global>,\n"
	"                  %a: f32) {threads = 256} {\n"
	"  %p = ave.program_id dim(0) : index\n"
	"  %xs = ave.load %x[%p * 1024] : !ave.tile<1024xf32, reg>\n"
	"  %ys = ave.load %y[%p * 1024] : !ave.tile<1024xf32, reg>\n"
	"  %r = ave.fma %xs, %a, %ys : !ave.tile<1024xf32, reg>\n"
	"  ave.store %r into(%y[%p * 1024])\n"
	"  ave.return\n"
	"}\n";

static void
on_diagnostic(AveDiagnostic d, void *user_data)
{
	(void)user_data;
	char buf[4096];
	aveDiagnosticFormat(d, 0, buf, sizeof buf);
	fputs(buf, stderr);
}

#define TRY(call)                                                                   \
	do {                                                                        \
		AveResult r_ = (call);                                              \
		if (r_ != AVE_SUCCESS) {                                            \
			fprintf(stderr, "embed: %s: %s\n", #call, aveResultGetName(r_)); \
			return 1;                                                   \
		}                                                                   \
	} while (0)

int
main(int argc, char **argv)
{
	const char *target = argc > 1 ? argv[1] : "host";
	const char *kind = argc > 2 ? argv[2] : "host";
	AveContext ctx;
	AveModule mod;
	AveCompileOptions opts;
	AveKernel kernel;
	AveDevice dev;

	TRY(aveContextCreate(&ctx));
	aveContextSetDiagnosticHandler(ctx, on_diagnostic, NULL);
	TRY(aveModuleParse(ctx, kernel_text, strlen(kernel_text), "saxpy.ave", &mod));
	TRY(aveCompileOptionsCreate(&opts));
	TRY(aveCompileOptionsSetTarget(opts, target));
	TRY(aveKernelCompile(mod, "saxpy", opts, &kernel));
	printf("compiled @%s for %s: %d threads, %d registers\n", aveKernelGetName(kernel),
	       aveKernelGetTarget(kernel), aveKernelGetThreads(kernel), aveKernelGetRegisters(kernel));

	TRY(aveDeviceOpen(ctx, kind, 0, &dev));
	enum { N = 5000 };
	float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
	}
	AveBuffer bx, by;
	TRY(aveBufferCreate(dev, N * sizeof *x, &bx));
	TRY(aveBufferCreate(dev, N * sizeof *y, &by));
	TRY(aveBufferUpload(bx, 0, x, N * sizeof *x));
	TRY(aveBufferUpload(by, 0, y, N * sizeof *y));

	AveArgs args;
	int64_t n = N;
	TRY(aveArgsCreate(&args));
	TRY(aveArgsAddTensor(args, bx, 1, &n, NULL));
	TRY(aveArgsAddTensor(args, by, 1, &n, NULL));
	TRY(aveArgsAddFloat(args, 2.0));
	uint32_t grid[3] = {(N + 1023) / 1024, 1, 1};
	TRY(aveKernelLaunch(kernel, dev, grid, args, (AveStream){NULL}));
	TRY(aveDeviceSynchronize(dev));
	TRY(aveBufferDownload(by, 0, out, N * sizeof *out));

	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += out[i] != 2.0f * x[i] + 1.0f;
	printf("saxpy on %s: %s\n", aveDeviceGetName(dev), bad ? "WRONG" : "ok");

	aveArgsDestroy(args);
	aveBufferDestroy(bx);
	aveBufferDestroy(by);
	aveKernelDestroy(kernel);
	aveDeviceClose(dev);
	aveCompileOptionsDestroy(opts);
	aveModuleDestroy(mod);
	aveContextDestroy(ctx);
	free(x);
	free(y);
	free(out);
	return bad != 0;
}
