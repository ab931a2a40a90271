/* wrap.c — memory and streams the caller owns, wrapped without copies (aveBufferWrap,
 * aveStreamWrap): vadd runs on malloc'd arrays and its results are in them with no download;
 * the misuses are errors with reasons. With "cuda", the same on memory and a stream made with the
 * CUDA driver itself (dlopen'd, as an application or torch would hold them).
 * usage: capi-wrap EXAMPLES_DIR [cuda] */
#include <dlfcn.h>

#include "capi.h"

static void
result(const char *what, AveResult r)
{
	const char *e = aveGetLastError();
	printf("%s: %s%s%s\n", what, aveResultGetName(r), e ? ": " : "", e ? e : "");
}

static AveKernel
compile_vadd(AveContext c, const char *dir, const char *target)
{
	char path[1024];
	AveModule m;
	AveCompileOptions o;
	AveKernel k;
	snprintf(path, sizeof path, "%s/vadd.ave", dir);
	CHECK_OK(aveModuleParseFile(c, path, &m));
	CHECK_OK(aveCompileOptionsCreate(&o));
	CHECK_OK(aveCompileOptionsSetTarget(o, target));
	CHECK_OK(aveKernelCompile(m, "vadd", o, &k));
	aveCompileOptionsDestroy(o);
	aveModuleDestroy(m);
	return k;
}

/* vadd over n elements of wrapped buffers a, b, c on stream s. */
static AveResult
vadd(AveKernel k, AveDevice d, AveBuffer a, AveBuffer b, AveBuffer c, int64_t n, AveStream s)
{
	AveArgs args;
	CHECK_OK(aveArgsCreate(&args));
	CHECK_OK(aveArgsAddTensor(args, a, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, b, 1, &n, NULL));
	CHECK_OK(aveArgsAddTensor(args, c, 1, &n, NULL));
	uint32_t grid[3] = {(uint32_t)((n + 1023) / 1024), 1, 1};
	AveResult r = aveKernelLaunch(k, d, grid, args, s);
	aveArgsDestroy(args);
	return r;
}

static int
host(AveContext c, const char *dir)
{
	AveDevice d, other;
	CHECK_OK(aveDeviceOpen(c, "host", 0, &d));
	CHECK_OK(aveDeviceOpen(c, "host", 0, &other));
	AveKernel k = compile_vadd(c, dir, "host");
	enum { N = 3000 };
	float *a = malloc(N * 4), *b = malloc(N * 4), *out = malloc(N * 4);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = 1.0f / (float)(i + 1);
		out[i] = -1;
	}
	AveBuffer ba, bb, bc;
	CHECK_OK(aveBufferWrap(d, a, N * 4, &ba));
	CHECK_OK(aveBufferWrap(d, b, N * 4, &bb));
	CHECK_OK(aveBufferWrap(d, out, N * 4, &bc));
	printf("wrapped size: %zu\n", aveBufferGetSize(bc));
	AveStream s;
	CHECK_OK(aveStreamWrap(d, NULL, &s));
	printf("native of the host stream: %p\n", aveStreamGetNative(s));
	CHECK_OK(vadd(k, d, ba, bb, bc, N, s));
	CHECK_OK(aveStreamSynchronize(s));
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += out[i] != a[i] + b[i];
	printf("vadd in place: %d mismatches\n", bad);

	/* A window into the middle of the caller's arrays: only that window is written. */
	for (int i = 0; i < N; i++)
		out[i] = -1;
	AveBuffer wa, wb, wc;
	CHECK_OK(aveBufferWrap(d, a + 100, 1000 * 4, &wa));
	CHECK_OK(aveBufferWrap(d, b + 100, 1000 * 4, &wb));
	CHECK_OK(aveBufferWrap(d, out + 100, 1000 * 4, &wc));
	CHECK_OK(vadd(k, d, wa, wb, wc, 1000, (AveStream){NULL}));
	bad = 0;
	for (int i = 0; i < N; i++)
		bad += i >= 100 && i < 1100 ? out[i] != a[i] + b[i] : out[i] != -1;
	printf("vadd window: %d mismatches\n", bad);

	/* Upload and download go through the caller's memory too. */
	float v = 42;
	CHECK_OK(aveBufferUpload(wc, 4, &v, 4));
	printf("upload into wrapped: out[101] = %g\n", out[101]);
	out[102] = 7;
	CHECK_OK(aveBufferDownload(wc, 8, &v, 4));
	printf("download from wrapped: %g\n", v);

	/* Misuse. */
	AveBuffer x;
	result("wrap null ptr", aveBufferWrap(d, NULL, 4, &x));
	printf("  out cleared: %s\n", x.ptr ? "no" : "yes");
	result("wrap 0 bytes", aveBufferWrap(d, a, 0, &x));
	result("wrap null device", aveBufferWrap((AveDevice){NULL}, a, 4, &x));
	result("wrap null out", aveBufferWrap(d, a, 4, NULL));
	result("wrap past the end of memory", aveBufferWrap(d, (void *)(uintptr_t)-16, 64, &x));
	AveStream xs;
	result("stream wrap handle on host", aveStreamWrap(d, (void *)0x1234, &xs));
	printf("  out cleared: %s\n", xs.ptr ? "no" : "yes");
	result("stream wrap null device", aveStreamWrap((AveDevice){NULL}, NULL, &xs));
	result("stream wrap null out", aveStreamWrap(d, NULL, NULL));
	/* A wrapped buffer or stream of one device used on another. */
	AveBuffer oc;
	CHECK_OK(aveBufferWrap(other, out, N * 4, &oc));
	result("buffer of another device", vadd(k, d, ba, bb, oc, N, (AveStream){NULL}));
	AveStream os;
	CHECK_OK(aveStreamWrap(other, NULL, &os));
	result("stream of another device", vadd(k, d, ba, bb, bc, N, os));
	/* A tensor larger than the memory wrapped. */
	result("tensor past the wrapped bytes", vadd(k, d, wa, wb, wc, 1001, (AveStream){NULL}));

	/* Destroying wrapped buffers and streams leaves the memory to its owner: writing it after
	 * and freeing it once is fine (ASan would report a double free). */
	aveBufferDestroy(ba);
	aveBufferDestroy(bb);
	aveBufferDestroy(bc);
	aveBufferDestroy(wa);
	aveBufferDestroy(wb);
	aveBufferDestroy(wc);
	aveBufferDestroy(oc);
	aveStreamDestroy(s);
	aveStreamDestroy(os);
	out[0] = 1;
	a[0] = 2;
	printf("memory still the caller's: %g %g\n", out[0], a[0]);
	free(a);
	free(b);
	free(out);
	aveKernelDestroy(k);
	aveDeviceClose(d);
	aveDeviceClose(other);
	return 0;
}

/* The driver calls a CUDA application makes itself. */
typedef int (*PFN_init)(unsigned);
typedef int (*PFN_dev)(int *, int);
typedef int (*PFN_pctx)(void **, int);
typedef int (*PFN_setctx)(void *);
typedef int (*PFN_alloc)(unsigned long long *, size_t);
typedef int (*PFN_free)(unsigned long long);
typedef int (*PFN_htod)(unsigned long long, const void *, size_t);
typedef int (*PFN_dtoh)(void *, unsigned long long, size_t);
typedef int (*PFN_screate)(void **, unsigned);
typedef int (*PFN_sdestroy)(void *);

static void *
sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p) {
		printf("FAIL: libcuda lacks %s\n", name);
		exit(1);
	}
	return p;
}

#define CU(call)                                                          \
	do {                                                              \
		int e_ = (call);                                          \
		if (e_) {                                                 \
			printf("FAIL: %s returned %d\n", #call, e_);      \
			exit(1);                                          \
		}                                                         \
	} while (0)

static int
cuda(AveContext c, const char *dir)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		printf("FAIL: %s\n", dlerror());
		return 1;
	}
	PFN_init init;
	PFN_dev get;
	PFN_pctx retain;
	PFN_setctx setctx;
	PFN_alloc alloc;
	PFN_free mfree;
	PFN_htod htod;
	PFN_dtoh dtoh;
	PFN_screate screate;
	PFN_sdestroy sdestroy;
	/* dlsym returns an object pointer; a byte copy makes it a function pointer (ISO C). */
#define LOAD(v, name)                               \
	do {                                        \
		void *p_ = sym(lib, name);          \
		memcpy(&v, &p_, sizeof v);          \
	} while (0)
	LOAD(init, "cuInit");
	LOAD(get, "cuDeviceGet");
	LOAD(retain, "cuDevicePrimaryCtxRetain");
	LOAD(setctx, "cuCtxSetCurrent");
	LOAD(alloc, "cuMemAlloc_v2");
	LOAD(mfree, "cuMemFree_v2");
	LOAD(htod, "cuMemcpyHtoD_v2");
	LOAD(dtoh, "cuMemcpyDtoH_v2");
	LOAD(screate, "cuStreamCreate");
	LOAD(sdestroy, "cuStreamDestroy_v2");
	int dev;
	void *ctx;
	CU(init(0));
	CU(get(&dev, 0));
	CU(retain(&ctx, dev));
	CU(setctx(ctx));
	AveDevice d;
	CHECK_OK(aveDeviceOpen(c, "cuda", 0, &d));
	/* sm_80 code runs on every device ave supports (8.0 and newer). */
	AveKernel k = compile_vadd(c, dir, "sm_80");
	enum { N = 5000 };
	float *a = malloc(N * 4), *b = malloc(N * 4), *out = malloc(N * 4);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = 0.25f * (float)i;
	}
	unsigned long long da, db, dc;
	CU(alloc(&da, N * 4));
	CU(alloc(&db, N * 4));
	CU(alloc(&dc, N * 4 + 4));
	CU(htod(da, a, N * 4));
	CU(htod(db, b, N * 4));
	void *native;
	CU(screate(&native, 0));
	AveBuffer ba, bb, bc;
	CHECK_OK(aveBufferWrap(d, (void *)(uintptr_t)da, N * 4, &ba));
	CHECK_OK(aveBufferWrap(d, (void *)(uintptr_t)db, N * 4, &bb));
	CHECK_OK(aveBufferWrap(d, (void *)(uintptr_t)dc, N * 4, &bc));
	AveStream s;
	CHECK_OK(aveStreamWrap(d, native, &s));
	printf("cuda native stream given back: %s\n", aveStreamGetNative(s) == native ? "yes" : "no");
	CHECK_OK(vadd(k, d, ba, bb, bc, N, s));
	CHECK_OK(aveStreamSynchronize(s));
	CU(dtoh(out, dc, N * 4));
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += out[i] != a[i] + b[i];
	printf("cuda vadd in place: %d mismatches\n", bad);

	AveBuffer x;
	result("cuda wrap host pointer", aveBufferWrap(d, a, N * 4, &x));
	result("cuda wrap past the allocation", aveBufferWrap(d, (void *)(uintptr_t)da, N * 8, &x));
	/* An f32 tensor one byte into its allocation is misaligned. */
	AveBuffer mis;
	CHECK_OK(aveBufferWrap(d, (void *)(uintptr_t)(dc + 1), N * 4, &mis));
	result("cuda misaligned", vadd(k, d, ba, bb, mis, N, s));

	aveBufferDestroy(ba);
	aveBufferDestroy(bb);
	aveBufferDestroy(bc);
	aveBufferDestroy(mis);
	aveStreamDestroy(s);
	/* The stream and memory are still ours to destroy. */
	CU(sdestroy(native));
	CU(mfree(da));
	CU(mfree(db));
	CU(mfree(dc));
	printf("cuda: the caller freed its memory and stream\n");
	free(a);
	free(b);
	free(out);
	aveKernelDestroy(k);
	aveDeviceClose(d);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	AveContext c;
	CHECK_OK(aveContextCreate(&c));
	aveContextSetDiagnosticHandler(c, print_diag, NULL);
	CHECK_OK(aveContextSetCacheDir(c, NULL));
	int r = argc > 2 && !strcmp(argv[2], "cuda") ? cuda(c, argv[1]) : host(c, argv[1]);
	aveContextDestroy(c);
	return r;
}
