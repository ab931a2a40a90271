/* rt_cuda.c — the `cuda` device: the CUDA driver API loaded with dlopen("libcuda.so.1") at run
 * time (nothing is linked at build time), module loading from cubins, TMA tensor maps built at
 * launch from the kernel metadata, large dynamic shared memory, and launch. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* The few driver types and entry points used, declared here so that no CUDA header is needed. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
typedef struct {
	_Alignas(64) uint64_t opaque[16];
} CUtensorMap;

enum {
	CUDA_SUCCESS = 0,
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_STREAM_NON_BLOCKING = 1,
	CU_EVENT_DISABLE_TIMING = 2,
};

#define CUDA_FUNCS(X)                                                                       \
	X(cuInit, CUresult, (unsigned))                                                     \
	X(cuDriverGetVersion, CUresult, (int *))                                            \
	X(cuDeviceGetCount, CUresult, (int *))                                              \
	X(cuDeviceGet, CUresult, (CUdevice *, int))                                         \
	X(cuDeviceGetName, CUresult, (char *, int, CUdevice))                               \
	X(cuDeviceGetAttribute, CUresult, (int *, int, CUdevice))                           \
	X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))                      \
	X(cuDevicePrimaryCtxRelease, CUresult, (CUdevice))                                  \
	X(cuCtxSetCurrent, CUresult, (CUcontext))                                           \
	X(cuCtxSynchronize, CUresult, (void))                                               \
	X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))                                 \
	X(cuMemFree_v2, CUresult, (CUdeviceptr))                                            \
	X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t))                   \
	X(cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))                         \
	X(cuMemcpyDtoD_v2, CUresult, (CUdeviceptr, CUdeviceptr, size_t))                    \
	X(cuStreamCreate, CUresult, (CUstream *, unsigned))                                 \
	X(cuStreamDestroy_v2, CUresult, (CUstream))                                         \
	X(cuStreamSynchronize, CUresult, (CUstream))                                        \
	X(cuModuleLoadData, CUresult, (CUmodule *, const void *))                           \
	X(cuModuleUnload, CUresult, (CUmodule))                                             \
	X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))            \
	X(cuFuncSetAttribute, CUresult, (CUfunction, int, int))                             \
	X(cuLaunchKernel, CUresult,                                                         \
	  (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
	   CUstream, void **, void **))                                                     \
	X(cuGetErrorName, CUresult, (CUresult, const char **))                              \
	X(cuGetErrorString, CUresult, (CUresult, const char **))

typedef CUresult (*PFN_cuTensorMapEncodeTiled)(CUtensorMap *, int, unsigned, void *,
					       const uint64_t *, const uint64_t *, const unsigned *,
					       const unsigned *, int, int, int, int);

typedef struct Cuda {
	void *lib;
#define X(name, ret, args) ret(*name) args;
	CUDA_FUNCS(X)
#undef X
	PFN_cuTensorMapEncodeTiled cuTensorMapEncodeTiled; /* NULL on drivers older than 12.0 */
	/* Optional: the checks of wrapped memory and streams, skipped where the driver lacks them. */
	CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
	CUresult (*cuMemGetAddressRange_v2)(CUdeviceptr *, size_t *, CUdeviceptr);
	CUresult (*cuStreamGetCtx)(CUstream, CUcontext *);
	/* Optional: world launches (each rank on a stream of its own, all resident). */
	CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
	CUresult (*cuEventCreate)(CUevent *, unsigned);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventDestroy_v2)(CUevent);
	CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
	CUdevice dev;
	int ordinal;
	CUcontext ctx;
	int cc_major, cc_minor;
	char path[1024]; /* the driver library that was loaded, as the dynamic linker found it */
} Cuda;

/* What the driver's codes mean, for drivers (and stubs) that cannot name them. */
static const struct {
	CUresult code;
	const char *name, *what;
} known_errors[] = {
	{1, "CUDA_ERROR_INVALID_VALUE", "an argument is out of range"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of device memory"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "the driver is not initialized"},
	{4, "CUDA_ERROR_DEINITIALIZED", "the driver is shutting down"},
	{34, "CUDA_ERROR_STUB_LIBRARY",
	 "the stub library cannot run kernels: it is the CUDA toolkit's link-time stand-in for "
	 "libcuda, not the driver (install the NVIDIA driver, or point AVE_LIBCUDA at its "
	 "libcuda.so.1)"},
	{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is busy or unavailable (compute mode?)"},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA device is present"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "no such device"},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "the cubin is not for this device"},
	{218, "CUDA_ERROR_INVALID_PTX", "the PTX does not compile"},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the driver is too old for the PTX"},
	{801, "CUDA_ERROR_NOT_SUPPORTED", "the operation is not supported"},
	{802, "CUDA_ERROR_SYSTEM_NOT_READY", "the system is not ready (fabric manager?)"},
	{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "the driver library and the kernel module differ"},
	{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	 "the forward-compatibility driver does not support this device"},
	{999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static AveResult
check(RtDevice *d, CUresult r, const char *what)
{
	Cuda *cu = d->impl;
	if (r == CUDA_SUCCESS)
		return AVE_SUCCESS;
	/* The driver's own name and description when it has them; the stub has neither. */
	const char *name = NULL, *str = NULL;
	if (cu->cuGetErrorName && cu->cuGetErrorName(r, &name) != CUDA_SUCCESS)
		name = NULL;
	if (cu->cuGetErrorString && cu->cuGetErrorString(r, &str) != CUDA_SUCCESS)
		str = NULL;
	for (size_t i = 0; i < sizeof known_errors / sizeof known_errors[0]; i++)
		if (known_errors[i].code == r) {
			if (!name)
				name = known_errors[i].name;
			if (!str || r == 34)
				str = known_errors[i].what;
		}
	rt_error(d->ctx, "cuda: %s failed with error %d (%s: %s) in '%s'", what, r,
		 name ? name : "an unknown code", str ? str : "no description", cu->path);
	return r == 2 ? AVE_ERROR_OUT_OF_MEMORY : AVE_ERROR_DEVICE;
}

static AveResult
cuda_open(RtDevice *d, int ordinal)
{
	Cuda *cu = calloc(1, sizeof *cu);
	d->impl = cu;
	const char *libname = getenv("AVE_LIBCUDA") ? getenv("AVE_LIBCUDA") : "libcuda.so.1";
	cu->lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib) {
		rt_error(d->ctx, "cuda: cannot load the CUDA driver library '%s': %s", libname, dlerror());
		return AVE_ERROR_DEVICE;
	}
	struct link_map *lm = NULL;
	snprintf(cu->path, sizeof cu->path, "%s",
		 dlinfo(cu->lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name
			 ? lm->l_name : libname);
#define X(name, ret, args)                                                                 \
	if (!rt_dlsym(cu->lib, #name, &cu->name)) {                                          \
		rt_error(d->ctx, "cuda: the driver library '%s' lacks '%s' (driver too old?)", \
			 cu->path, #name);                                                  \
		return AVE_ERROR_DEVICE;                                                   \
	}
	CUDA_FUNCS(X)
#undef X
	rt_dlsym(cu->lib, "cuTensorMapEncodeTiled", &cu->cuTensorMapEncodeTiled);
	rt_dlsym(cu->lib, "cuPointerGetAttribute", &cu->cuPointerGetAttribute);
	rt_dlsym(cu->lib, "cuMemGetAddressRange_v2", &cu->cuMemGetAddressRange_v2);
	rt_dlsym(cu->lib, "cuStreamGetCtx", &cu->cuStreamGetCtx);
	rt_dlsym(cu->lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
		 &cu->cuOccupancyMaxActiveBlocksPerMultiprocessor);
	rt_dlsym(cu->lib, "cuEventCreate", &cu->cuEventCreate);
	rt_dlsym(cu->lib, "cuEventRecord", &cu->cuEventRecord);
	rt_dlsym(cu->lib, "cuEventDestroy_v2", &cu->cuEventDestroy_v2);
	rt_dlsym(cu->lib, "cuStreamWaitEvent", &cu->cuStreamWaitEvent);
	AveResult r;
	if ((r = check(d, cu->cuInit(0), "cuInit")))
		return r;
	int version = 0, count = 0;
	cu->cuDriverGetVersion(&version);
	if (version < 11080) {
		rt_error(d->ctx, "cuda: the driver is too old (CUDA %d.%d); ave needs 11.8 or newer",
			 version / 1000, version % 1000 / 10);
		return AVE_ERROR_DEVICE;
	}
	if ((r = check(d, cu->cuDeviceGetCount(&count), "cuDeviceGetCount")))
		return r;
	if (ordinal < 0 || ordinal >= count) {
		rt_error(d->ctx, "cuda: no device %d (%d device%s present)", ordinal, count,
			 count == 1 ? "" : "s");
		return AVE_ERROR_NOT_FOUND;
	}
	if ((r = check(d, cu->cuDeviceGet(&cu->dev, ordinal), "cuDeviceGet")))
		return r;
	cu->ordinal = ordinal;
	cu->cuDeviceGetName(d->name, sizeof d->name, cu->dev);
	cu->cuDeviceGetAttribute(&cu->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu->dev);
	cu->cuDeviceGetAttribute(&cu->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu->dev);
	d->vendor = TARGET_VENDOR_NVIDIA;
	d->target = target_for_cc(cu->cc_major * 10 + cu->cc_minor);
	if (cu->cc_major < 8) {
		rt_error(d->ctx, "cuda: device '%s' has compute capability %d.%d; ave needs 8.0 or newer",
			 d->name, cu->cc_major, cu->cc_minor);
		return AVE_ERROR_UNSUPPORTED;
	}
	if ((r = check(d, cu->cuDevicePrimaryCtxRetain(&cu->ctx, cu->dev), "cuDevicePrimaryCtxRetain")))
		return r;
	return check(d, cu->cuCtxSetCurrent(cu->ctx), "cuCtxSetCurrent");
}

static void
cuda_close(RtDevice *d)
{
	Cuda *cu = d->impl;
	if (!cu)
		return;
	if (cu->ctx)
		cu->cuDevicePrimaryCtxRelease(cu->dev);
	if (cu->lib)
		dlclose(cu->lib);
	free(cu);
	d->impl = NULL;
}

static AveResult
cuda_alloc(RtDevice *d, size_t bytes, void **ptr)
{
	Cuda *cu = d->impl;
	CUdeviceptr p = 0;
	cu->cuCtxSetCurrent(cu->ctx);
	AveResult r = check(d, cu->cuMemAlloc_v2(&p, bytes ? bytes : 1), "cuMemAlloc");
	*ptr = (void *)(uintptr_t)p;
	return r;
}

static void
cuda_free(RtDevice *d, void *ptr)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	cu->cuMemFree_v2((CUdeviceptr)(uintptr_t)ptr);
}

static AveResult
cuda_upload(RtDevice *d, void *dst, const void *src, size_t n)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	return check(d, cu->cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)dst, src, n), "cuMemcpyHtoD");
}

static AveResult
cuda_download(RtDevice *d, void *dst, const void *src, size_t n)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	return check(d, cu->cuMemcpyDtoH_v2(dst, (CUdeviceptr)(uintptr_t)src, n), "cuMemcpyDtoH");
}

static AveResult
cuda_copy(RtDevice *d, void *dst, const void *src, size_t n)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	return check(d, cu->cuMemcpyDtoD_v2((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
					    n), "cuMemcpyDtoD");
}

static AveResult
cuda_stream_create(RtDevice *d, void **s)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	return check(d, cu->cuStreamCreate((CUstream *)s, 0), "cuStreamCreate");
}

static void
cuda_stream_destroy(RtDevice *d, void *s)
{
	Cuda *cu = d->impl;
	cu->cuStreamDestroy_v2(s);
}

static AveResult
cuda_stream_sync(RtDevice *d, void *s)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	return check(d, cu->cuStreamSynchronize(s), "cuStreamSynchronize");
}

static AveResult
cuda_sync(RtDevice *d)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	return check(d, cu->cuCtxSynchronize(), "cuCtxSynchronize");
}

typedef struct CudaLoaded {
	CUmodule mod;
	CUfunction fn;
} CudaLoaded;

static AveResult
cuda_load(RtDevice *d, RtKernel *k, void **handle)
{
	Cuda *cu = d->impl;
	CudaLoaded *l = calloc(1, sizeof *l);
	AveResult r;
	cu->cuCtxSetCurrent(cu->ctx);
	if ((r = check(d, cu->cuModuleLoadData(&l->mod, k->bundle.binary), "cuModuleLoadData"))) {
		free(l);
		return r;
	}
	if ((r = check(d, cu->cuModuleGetFunction(&l->fn, l->mod, k->name), "cuModuleGetFunction"))) {
		cu->cuModuleUnload(l->mod);
		free(l);
		return r;
	}
	if (k->shared_bytes > 48 * 1024 &&
	    (r = check(d, cu->cuFuncSetAttribute(l->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
						 (int)k->shared_bytes),
		       "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"))) {
		cu->cuModuleUnload(l->mod);
		free(l);
		return r;
	}
	*handle = l;
	return AVE_SUCCESS;
}

static void
cuda_unload(RtDevice *d, void *handle)
{
	Cuda *cu = d->impl;
	CudaLoaded *l = handle;
	cu->cuCtxSetCurrent(cu->ctx);
	cu->cuModuleUnload(l->mod);
	free(l);
}


/* Encodes a TMA tensor map with the driver. */
static AveResult
encode_map(RtDevice *d, const RtTensorMap *m, void *out)
{
	Cuda *cu = d->impl;
	if (!cu->cuTensorMapEncodeTiled) {
		rt_error(d->ctx, "cuda: the driver has no cuTensorMapEncodeTiled (needs CUDA 12.0+)");
		return AVE_ERROR_DEVICE;
	}
	uint64_t dims[5], strides[5];
	unsigned box[5], es[5];
	for (int i = 0; i < m->rank; i++) {
		dims[i] = m->dims[i];
		strides[i] = m->strides[i];
		box[i] = m->box[i];
		es[i] = m->elem_strides[i];
	}
	return check(d,
		     cu->cuTensorMapEncodeTiled(out, m->dtype, (unsigned)m->rank,
						(void *)(uintptr_t)m->base, dims, strides, box, es,
						m->interleave, m->swizzle, m->l2_promotion,
						m->oob_fill),
		     "cuTensorMapEncodeTiled");
}

/* Kernel parameters follow the ABI recorded in the metadata's "params" list. */
static AveResult
cuda_launch(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3], const RtArgs *args,
	    void *stream)
{
	Cuda *cu = d->impl;
	CudaLoaded *l = handle;
	RtLaunchParams lp;
	AveResult r = rt_build_params(k, d, args, grid, &lp, encode_map, NULL);
	if (r)
		return r;
	cu->cuCtxSetCurrent(cu->ctx);
	r = check(d,
		  cu->cuLaunchKernel(l->fn, lp.grid[0], lp.grid[1], lp.grid[2], (unsigned)k->threads, 1, 1,
				     (unsigned)k->shared_bytes, stream, lp.ptrs, NULL),
		  "cuLaunchKernel");
	rt_params_free(&lp);
	return r;
}

/* A world on one GPU: rank r's copies of the symmetric buffers are allocations of this device,
 * and each rank's grid goes to a stream of its own, after the work queued on `stream` and
 * before what is queued there next. Ranks wait for each other's signals, so every CTA of every
 * rank must be resident at once: a world the GPU cannot hold whole (by the driver's occupancy
 * for this kernel) would hang, and is refused with the numbers. Other work running on the GPU
 * at the same time can still take the room; the launch cannot see it. */
static AveResult
cuda_launch_world(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3],
		  const RtArgs *args, const RtWorldRank *ranks, int size, void *stream)
{
	Cuda *cu = d->impl;
	CudaLoaded *l = handle;
	if (!cu->cuOccupancyMaxActiveBlocksPerMultiprocessor || !cu->cuEventCreate ||
	    !cu->cuEventRecord || !cu->cuEventDestroy_v2 || !cu->cuStreamWaitEvent) {
		rt_error(d->ctx, "cuda: the driver library '%s' lacks the occupancy, event or stream "
				 "entry points a world launch needs (driver too old?)", cu->path);
		return AVE_ERROR_DEVICE;
	}
	cu->cuCtxSetCurrent(cu->ctx);
	RtLaunchParams *lps = calloc((size_t)size, sizeof *lps);
	CUstream *ss = calloc((size_t)size, sizeof *ss);
	CUevent start = NULL, *done = calloc((size_t)size, sizeof *done);
	AveResult r = AVE_SUCCESS;
	int made = 0;
	for (; made < size && !r; made++)
		r = rt_build_params(k, d, &args[made], grid, &lps[made], encode_map, &ranks[made]);
	int per_sm = 0, sms = 0;
	if (!r)
		r = check(d, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(
				     &per_sm, l->fn, k->threads, (size_t)k->shared_bytes),
			  "cuOccupancyMaxActiveBlocksPerMultiprocessor");
	if (!r)
		r = check(d, cu->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
						      cu->dev),
			  "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
	uint64_t ctas = r ? 0 : (uint64_t)lps[0].grid[0] * lps[0].grid[1] * lps[0].grid[2];
	if (!r && ctas * (uint64_t)size > (uint64_t)per_sm * (uint64_t)sms) {
		rt_error(d->ctx, "cuda: kernel '%s': a world launch keeps every CTA of every rank "
				 "resident: %d ranks x %llu CTAs = %llu, but '%s' holds %d of them (%d per "
				 "multiprocessor x %d)", k->name, size, (unsigned long long)ctas,
			 (unsigned long long)ctas * (unsigned long long)size, d->name, per_sm * sms,
			 per_sm, sms);
		r = AVE_ERROR_LAUNCH;
	}
	if (!r)
		r = check(d, cu->cuEventCreate(&start, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	if (!r)
		r = check(d, cu->cuEventRecord(start, stream), "cuEventRecord");
	/* Everything that can fail before any rank runs: a world launched in part would hang. */
	for (int q = 0; q < size && !r; q++) {
		r = check(d, cu->cuStreamCreate(&ss[q], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
		if (!r)
			r = check(d, cu->cuStreamWaitEvent(ss[q], start, 0), "cuStreamWaitEvent");
		if (!r)
			r = check(d, cu->cuEventCreate(&done[q], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	}
	int queued = 0;
	for (; queued < size && !r; queued += !r)
		r = check(d,
			  cu->cuLaunchKernel(l->fn, lps[queued].grid[0], lps[queued].grid[1],
					     lps[queued].grid[2], (unsigned)k->threads, 1, 1,
					     (unsigned)k->shared_bytes, ss[queued], lps[queued].ptrs, NULL),
			  "cuLaunchKernel");
	for (int q = 0; q < queued && !r; q++) {
		r = check(d, cu->cuEventRecord(done[q], ss[q]), "cuEventRecord");
		if (!r)
			r = check(d, cu->cuStreamWaitEvent(stream, done[q], 0), "cuStreamWaitEvent");
	}
	if (r && queued)
		/* Nothing takes back a queued kernel: ranks that wait for a rank that never started
		 * never finish. Say so, rather than leave a hang unexplained. */
		rt_error(d->ctx, "cuda: kernel '%s': the world launch failed after %d of its %d ranks "
				 "were queued; they may wait forever for the others' signals (the device "
				 "needs a reset), and the world's signal counters are no longer in step "
				 "(destroy it)", k->name, queued, size);
	/* Streams and events with work still queued are released once it completes. */
	for (int q = 0; q < size; q++) {
		if (done[q])
			cu->cuEventDestroy_v2(done[q]);
		if (ss[q])
			cu->cuStreamDestroy_v2(ss[q]);
	}
	if (start)
		cu->cuEventDestroy_v2(start);
	for (int q = 0; q < made; q++)
		rt_params_free(&lps[q]);
	free(lps);
	free(ss);
	free(done);
	return r;
}

enum { CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9 };

/* Memory the driver knows (cuMemAlloc, a caching allocator over it such as torch's, managed or
 * registered host memory) on this device, and the bytes wrapped within its allocation. */
static AveResult
cuda_wrap(RtDevice *d, void *ptr, size_t bytes)
{
	Cuda *cu = d->impl;
	CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;
	cu->cuCtxSetCurrent(cu->ctx);
	int ord = -1;
	if (cu->cuPointerGetAttribute &&
	    cu->cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) != CUDA_SUCCESS) {
		rt_error(d->ctx, "aveBufferWrap: %p is not memory the CUDA driver knows (a host "
				 "pointer that was never registered?)", ptr);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	if (cu->cuPointerGetAttribute && ord != cu->ordinal) {
		rt_error(d->ctx, "aveBufferWrap: the memory at %p is on CUDA device %d, not device %d",
			 ptr, ord, cu->ordinal);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	CUdeviceptr base = 0;
	size_t size = 0;
	if (cu->cuMemGetAddressRange_v2 &&
	    cu->cuMemGetAddressRange_v2(&base, &size, p) == CUDA_SUCCESS && bytes > base + size - p) {
		/* Virtual memory mapped in several pieces (cuMemMap, as torch's expandable segments
		 * do) is one range to kernels: refuse only when the last byte is not this device's. */
		int last = -1;
		if (!cu->cuPointerGetAttribute ||
		    cu->cuPointerGetAttribute(&last, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					      p + bytes - 1) != CUDA_SUCCESS ||
		    last != cu->ordinal) {
			rt_error(d->ctx, "aveBufferWrap: the %zu bytes at %p run past the end of their "
					 "allocation (%zu bytes left in it)", bytes, ptr,
				 (size_t)(base + size - p));
			return AVE_ERROR_INVALID_ARGUMENT;
		}
	}
	return AVE_SUCCESS;
}

/* A stream of the device's primary context (the one torch and the runtime API use); NULL and the
 * special handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) resolve to the current context, which
 * is set to it first. */
static AveResult
cuda_stream_wrap(RtDevice *d, void *native)
{
	Cuda *cu = d->impl;
	cu->cuCtxSetCurrent(cu->ctx);
	CUcontext sc = NULL;
	if (!cu->cuStreamGetCtx)
		return AVE_SUCCESS;
	AveResult r = check(d, cu->cuStreamGetCtx(native, &sc), "cuStreamGetCtx");
	if (r)
		return r == AVE_ERROR_OUT_OF_MEMORY ? r : AVE_ERROR_INVALID_ARGUMENT;
	if (sc != cu->ctx) {
		rt_error(d->ctx, "aveStreamWrap: the stream belongs to another CUDA context than the "
				 "primary context of device %d", cu->ordinal);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	return AVE_SUCCESS;
}

const RtDeviceOps rt_cuda_ops = {
	"cuda",        cuda_open,          cuda_close,          cuda_alloc,       cuda_free,
	cuda_upload,   cuda_download,      cuda_stream_create,  cuda_stream_destroy,
	cuda_stream_sync, cuda_sync,       cuda_load,           cuda_unload,      cuda_launch,
	cuda_wrap,     cuda_stream_wrap,   NULL,             cuda_launch_world,
	cuda_copy,
};
