/* rt_hip.c — the `hip` device: the HIP runtime (libamdhip64) loaded with dlopen at run time,
 * module loading from HSACO code objects, and launch. Nothing is linked at build time. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef int hipError_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;

#define HIP_FUNCS(X)                                                                         \
	X(hipInit, hipError_t, (unsigned))                                                   \
	X(hipDriverGetVersion, hipError_t, (int *))                                          \
	X(hipGetDeviceCount, hipError_t, (int *))                                            \
	X(hipSetDevice, hipError_t, (int))                                                   \
	X(hipDeviceGetName, hipError_t, (char *, int, int))                                  \
	X(hipMalloc, hipError_t, (void **, size_t))                                          \
	X(hipFree, hipError_t, (void *))                                                     \
	X(hipMemcpyHtoD, hipError_t, (void *, const void *, size_t))                         \
	X(hipMemcpyDtoH, hipError_t, (void *, void *, size_t))                               \
	X(hipStreamCreate, hipError_t, (hipStream_t *))                                      \
	X(hipStreamDestroy, hipError_t, (hipStream_t))                                       \
	X(hipStreamSynchronize, hipError_t, (hipStream_t))                                   \
	X(hipDeviceSynchronize, hipError_t, (void))                                          \
	X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))                      \
	X(hipModuleUnload, hipError_t, (hipModule_t))                                        \
	X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))    \
	X(hipModuleLaunchKernel, hipError_t,                                                 \
	  (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
	   hipStream_t, void **, void **))                                                   \
	X(hipGetErrorName, const char *, (hipError_t))                                       \
	X(hipGetErrorString, const char *, (hipError_t))

typedef struct Hip {
	void *lib;
#define X(name, ret, args) ret(*name) args;
	HIP_FUNCS(X)
#undef X
	/* Optional (checks of wrapped memory and streams; skipped where the runtime lacks them). */
	hipError_t (*hipMemGetAddressRange)(void **, size_t *, void *);
	hipError_t (*hipStreamGetDevice)(hipStream_t, int *);
	int ordinal;
} Hip;

static AveResult
check(RtDevice *d, hipError_t r, const char *what)
{
	Hip *h = d->impl;
	if (r == 0)
		return AVE_SUCCESS;
	rt_error(d->ctx, "hip: %s failed: %s (%s)", what, h->hipGetErrorName(r), h->hipGetErrorString(r));
	return r == 2 ? AVE_ERROR_OUT_OF_MEMORY : AVE_ERROR_DEVICE;
}

static AveResult
hip_open(RtDevice *d, int ordinal)
{
	Hip *h = calloc(1, sizeof *h);
	d->impl = h;
	const char *env = getenv("AVE_LIBHIP");
	const char *names[] = {env, "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
	char why[512] = "";
	for (size_t i = 0; i < sizeof names / sizeof names[0] && !h->lib; i++) {
		if (!names[i])
			continue;
		h->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h->lib && !why[0])
			snprintf(why, sizeof why, "%s", dlerror());
	}
	if (!h->lib) {
		rt_error(d->ctx, "hip: cannot load the HIP runtime library 'libamdhip64.so': %s", why);
		return AVE_ERROR_DEVICE;
	}
#define X(name, ret, args)                                                                  \
	if (!rt_dlsym(h->lib, #name, &h->name)) {                                           \
		rt_error(d->ctx, "hip: the runtime library lacks '%s' (too old?)", #name);  \
		return AVE_ERROR_DEVICE;                                                    \
	}
	HIP_FUNCS(X)
#undef X
	rt_dlsym(h->lib, "hipMemGetAddressRange", &h->hipMemGetAddressRange);
	rt_dlsym(h->lib, "hipStreamGetDevice", &h->hipStreamGetDevice);
	AveResult r;
	int count = 0;
	if ((r = check(d, h->hipInit(0), "hipInit")))
		return r;
	if ((r = check(d, h->hipGetDeviceCount(&count), "hipGetDeviceCount")))
		return r;
	if (ordinal < 0 || ordinal >= count) {
		rt_error(d->ctx, "hip: no device %d (%d device%s present)", ordinal, count,
			 count == 1 ? "" : "s");
		return AVE_ERROR_NOT_FOUND;
	}
	h->ordinal = ordinal;
	h->hipDeviceGetName(d->name, sizeof d->name, ordinal);
	d->vendor = TARGET_VENDOR_AMD;
	d->target = NULL; /* the runtime does not report the ISA portably: any AMDGPU target */
	return check(d, h->hipSetDevice(ordinal), "hipSetDevice");
}

static void
hip_close(RtDevice *d)
{
	Hip *h = d->impl;
	if (!h)
		return;
	if (h->lib)
		dlclose(h->lib);
	free(h);
	d->impl = NULL;
}

#define SET(d) ((Hip *)(d)->impl)->hipSetDevice(((Hip *)(d)->impl)->ordinal)

static AveResult
hip_alloc(RtDevice *d, size_t bytes, void **ptr)
{
	SET(d);
	return check(d, ((Hip *)d->impl)->hipMalloc(ptr, bytes ? bytes : 1), "hipMalloc");
}

static void
hip_free(RtDevice *d, void *ptr)
{
	SET(d);
	((Hip *)d->impl)->hipFree(ptr);
}

static AveResult
hip_upload(RtDevice *d, void *dst, const void *src, size_t n)
{
	SET(d);
	return check(d, ((Hip *)d->impl)->hipMemcpyHtoD(dst, src, n), "hipMemcpyHtoD");
}

static AveResult
hip_download(RtDevice *d, void *dst, const void *src, size_t n)
{
	SET(d);
	return check(d, ((Hip *)d->impl)->hipMemcpyDtoH(dst, (void *)src, n), "hipMemcpyDtoH");
}

static AveResult
hip_stream_create(RtDevice *d, void **s)
{
	SET(d);
	return check(d, ((Hip *)d->impl)->hipStreamCreate((hipStream_t *)s), "hipStreamCreate");
}

static void
hip_stream_destroy(RtDevice *d, void *s)
{
	((Hip *)d->impl)->hipStreamDestroy(s);
}

static AveResult
hip_stream_sync(RtDevice *d, void *s)
{
	return check(d, ((Hip *)d->impl)->hipStreamSynchronize(s), "hipStreamSynchronize");
}

static AveResult
hip_sync(RtDevice *d)
{
	SET(d);
	return check(d, ((Hip *)d->impl)->hipDeviceSynchronize(), "hipDeviceSynchronize");
}

typedef struct HipLoaded {
	hipModule_t mod;
	hipFunction_t fn;
} HipLoaded;

static AveResult
hip_load(RtDevice *d, RtKernel *k, void **handle)
{
	Hip *h = d->impl;
	HipLoaded *l = calloc(1, sizeof *l);
	AveResult r;
	SET(d);
	if ((r = check(d, h->hipModuleLoadData(&l->mod, k->bundle.binary), "hipModuleLoadData"))) {
		free(l);
		return r;
	}
	if ((r = check(d, h->hipModuleGetFunction(&l->fn, l->mod, k->name), "hipModuleGetFunction"))) {
		h->hipModuleUnload(l->mod);
		free(l);
		return r;
	}
	*handle = l;
	return AVE_SUCCESS;
}

static void
hip_unload(RtDevice *d, void *handle)
{
	HipLoaded *l = handle;
	((Hip *)d->impl)->hipModuleUnload(l->mod);
	free(l);
}

static AveResult
hip_launch(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3], const RtArgs *args,
	   void *stream)
{
	Hip *h = d->impl;
	HipLoaded *l = handle;
	RtLaunchParams lp;
	AveResult r = rt_build_params(k, d, args, grid, &lp, NULL, NULL);
	if (r)
		return r;
	SET(d);
	r = check(d,
		  h->hipModuleLaunchKernel(l->fn, lp.grid[0], lp.grid[1], lp.grid[2], (unsigned)k->threads, 1, 1,
					   (unsigned)k->shared_bytes, stream, lp.ptrs, NULL),
		  "hipModuleLaunchKernel");
	rt_params_free(&lp);
	return r;
}

/* Memory HIP allocated (hipMalloc, or another library's allocator over it), and the bytes
 * wrapped within its allocation. */
static AveResult
hip_wrap(RtDevice *d, void *ptr, size_t bytes)
{
	Hip *h = d->impl;
	if (!h->hipMemGetAddressRange)
		return AVE_SUCCESS;
	SET(d);
	void *base = NULL;
	size_t size = 0;
	if (h->hipMemGetAddressRange(&base, &size, ptr) != 0) {
		rt_error(d->ctx, "aveBufferWrap: %p is not device memory HIP knows on device %d "
				 "(a host pointer, or another device's memory?)", ptr, h->ordinal);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	size_t left = (size_t)((char *)base + size - (char *)ptr);
	void *lbase = NULL;
	size_t lsize = 0;
	/* Memory mapped in several pieces is one range to kernels: refuse only when the last
	 * byte is in no allocation. */
	if (bytes > left &&
	    h->hipMemGetAddressRange(&lbase, &lsize, (char *)ptr + bytes - 1) != 0) {
		rt_error(d->ctx, "aveBufferWrap: the %zu bytes at %p run past the end of their "
				 "allocation (%zu bytes left in it)", bytes, ptr, left);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	return AVE_SUCCESS;
}

static AveResult
hip_stream_wrap(RtDevice *d, void *native)
{
	Hip *h = d->impl;
	int dev = -1;
	if (native && h->hipStreamGetDevice && h->hipStreamGetDevice(native, &dev) == 0 &&
	    dev != h->ordinal) {
		rt_error(d->ctx, "aveStreamWrap: the stream belongs to HIP device %d, not device %d",
			 dev, h->ordinal);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	return AVE_SUCCESS;
}

const RtDeviceOps rt_hip_ops = {
	"hip",        hip_open,          hip_close,          hip_alloc,         hip_free,
	hip_upload,   hip_download,      hip_stream_create,  hip_stream_destroy,
	hip_stream_sync, hip_sync,       hip_load,           hip_unload,        hip_launch,
	hip_wrap,     hip_stream_wrap,   NULL,              NULL,
	NULL, /* no worlds on hip: nothing copies device to device */
};
