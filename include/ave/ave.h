/* ave.h — the public C API of ave: parse `.ave` kernels, compile them for a target, cache the
 * results, and load and launch them on a device (host interpreter, CUDA, HIP).
 *
 * Two libraries implement it:
 *   libave_rt  contexts, diagnostics, devices, buffers, streams, launch, bundles, cache lookup;
 *              depends only on libc, libdl and pthreads (the host device interprets the IR);
 *   libave     everything above plus the compiler (links LLVM and Z3).
 * Functions marked [compiler] need libave.
 *
 * Conventions: handles are single-pointer structs passed by value; a NULL `ptr` is a null
 * handle. Functions return AveResult; outputs go through pointers. "Owned by the caller" means
 * the caller destroys the object with the matching Destroy/Close function; "borrowed" means it
 * lives as long as the object it came from. Strings passed in are copied. Thread safety: see
 * docs/jit.md.
 *
 * Lifetimes: modules must be destroyed before their context, buffers and streams before their
 * device is closed; a compiled kernel holds what it needs and may outlive its module and
 * context, and so may a device. Once its context is destroyed, such an object's errors reach no
 * handler. A launch's errors go to the device's context. Using an object after it (or the object it must not outlive) is destroyed, or
 * destroying an object twice, is undefined, as with free(). Every other misuse (a null handle,
 * a bad value, a size that does not fit) returns an error and reports its reason: to the
 * diagnostic handler of the context involved, when there is one, and always as the calling
 * thread's last error (aveGetLastError). */
#ifndef AVE_AVE_H
#define AVE_AVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AVE_API __attribute__((visibility("default")))
#else
#define AVE_API
#endif

#define AVE_DEFINE_HANDLE(name) \
	typedef struct name {   \
		void *ptr;      \
	} name

AVE_DEFINE_HANDLE(AveContext);
AVE_DEFINE_HANDLE(AveModule);
AVE_DEFINE_HANDLE(AveCompileOptions);
AVE_DEFINE_HANDLE(AveKernel);
AVE_DEFINE_HANDLE(AveDevice);
AVE_DEFINE_HANDLE(AveBuffer);
AVE_DEFINE_HANDLE(AveStream);
AVE_DEFINE_HANDLE(AveArgs);
AVE_DEFINE_HANDLE(AveDiagnostic);
AVE_DEFINE_HANDLE(AveWorld);

typedef enum AveResult {
	AVE_SUCCESS = 0,
	AVE_ERROR_INVALID_ARGUMENT, /* a null handle, a bad enum, a size that does not fit */
	AVE_ERROR_PARSE,            /* the text is not valid `.ave` (diagnostics say where) */
	AVE_ERROR_VERIFY,           /* the IR breaks a rule of the language */
	AVE_ERROR_CHECK,            /* an invariant cannot be proved (counterexample attached) */
	AVE_ERROR_COMPILE,          /* lowering or code generation failed */
	AVE_ERROR_UNSUPPORTED,      /* the target or device cannot do what was asked */
	AVE_ERROR_NOT_FOUND,        /* no such kernel, argument, file or device */
	AVE_ERROR_DEVICE,           /* the device could not be opened (library, driver, hardware) */
	AVE_ERROR_OUT_OF_MEMORY,
	AVE_ERROR_LAUNCH,           /* the launch was rejected (arguments, resources) */
	AVE_ERROR_RUNTIME,          /* the kernel failed while running (the host device says why) */
	AVE_ERROR_IO,
	AVE_RESULT_COUNT
} AveResult;

/* The version this header describes; aveGetVersion() says which library is loaded. */
#define AVE_VERSION_MAJOR 0
#define AVE_VERSION_MINOR 1
#define AVE_VERSION_PATCH 0

/* The library's version ("0.1.0"); static storage. */
AVE_API const char *aveGetVersion(void);

/* The targets this build of libave compiles for, in the order of the target registry, "host"
 * included (libave_rt, which compiles nothing, has none): their count, and the name of the i-th
 * (static storage; NULL out of range). */
AVE_API int aveTargetCount(void);
AVE_API const char *aveTargetName(int i);

/* A short English name for a result ("AVE_ERROR_PARSE"); static storage. */
AVE_API const char *aveResultGetName(AveResult r);

/* The reason for the last error reported on the calling thread by any ave function (a misuse,
 * with or without a context, or any error diagnostic, whether or not a handler is set), or NULL
 * when none was reported since the previous call. Like dlerror(), reading it clears it; the text
 * is per thread and stays valid until the thread calls aveGetLastError again. */
AVE_API const char *aveGetLastError(void);

/* ---- diagnostics ---- */

typedef enum AveSeverity {
	AVE_SEVERITY_ERROR,
	AVE_SEVERITY_WARNING,
	AVE_SEVERITY_NOTE,
	AVE_SEVERITY_REMARK
} AveSeverity;

/* Called once per diagnostic, on the thread that caused it. The diagnostic is borrowed for the
 * duration of the call. */
typedef void (*AveDiagnosticHandler)(AveDiagnostic d, void *user_data);

AVE_API AveSeverity aveDiagnosticGetSeverity(AveDiagnostic d);
AVE_API const char *aveDiagnosticGetMessage(AveDiagnostic d);
AVE_API const char *aveDiagnosticGetCode(AveDiagnostic d); /* "parse", "verify", a pass name */
AVE_API const char *aveDiagnosticGetFile(AveDiagnostic d);
AVE_API unsigned aveDiagnosticGetLine(AveDiagnostic d);
AVE_API unsigned aveDiagnosticGetColumn(AveDiagnostic d);
AVE_API int aveDiagnosticGetNumNotes(AveDiagnostic d);
AVE_API AveDiagnostic aveDiagnosticGetNote(AveDiagnostic d, int i);
/* The counterexample of a failed check: NULL-free key/value pairs (variable assignments first,
 * then "role", "slot", "found", "expected", "culprit" where known). 0 when there is none. */
AVE_API int aveDiagnosticGetNumCounterexampleEntries(AveDiagnostic d);
AVE_API const char *aveDiagnosticGetCounterexampleKey(AveDiagnostic d, int i);
AVE_API const char *aveDiagnosticGetCounterexampleValue(AveDiagnostic d, int i);
/* Renders it as the tools do (clang style, or one JSON object). Returns the length written
 * (excluding the NUL) or needed when buf is too small. */
AVE_API size_t aveDiagnosticFormat(AveDiagnostic d, int json, char *buf, size_t size);

/* ---- contexts ---- */

/* Owned by the caller. Contexts are independent of each other. */
AVE_API AveResult aveContextCreate(AveContext *out);
AVE_API void aveContextDestroy(AveContext c);
/* Replaces the handler (NULL restores the default, which prints to stderr). */
AVE_API void aveContextSetDiagnosticHandler(AveContext c, AveDiagnosticHandler h, void *user_data);
/* Remarks (what the compiler chose: shared-memory plans, budgets) are not delivered unless
 * enabled; errors, warnings and notes always are. */
AVE_API void aveContextSetRemarks(AveContext c, int enable);
/* The compile cache's directory (default $AVE_CACHE_DIR, else $XDG_CACHE_HOME/ave, else
 * ~/.cache/ave), created when first written. NULL disables the disk layer; "" or a path that
 * names something other than a directory is AVE_ERROR_INVALID_ARGUMENT. */
AVE_API AveResult aveContextSetCacheDir(AveContext c, const char *dir);
/* Counters since the context was created: compiles served from memory, from disk, compiled,
 * and disk entries found corrupt (and recompiled). Any pointer may be NULL. */
AVE_API void aveContextGetCacheStats(AveContext c, uint64_t *memory_hits, uint64_t *disk_hits,
				     uint64_t *misses, uint64_t *corrupt);

/* ---- modules ---- */

/* Parses and verifies `.ave` text; `name` is used in diagnostics. Owned by the caller. */
AVE_API AveResult aveModuleParse(AveContext c, const char *text, size_t len, const char *name,
				 AveModule *out);
AVE_API AveResult aveModuleParseFile(AveContext c, const char *path, AveModule *out);
AVE_API void aveModuleDestroy(AveModule m);
AVE_API int aveModuleGetNumKernels(AveModule m);
AVE_API const char *aveModuleGetKernelName(AveModule m, int i); /* borrowed, without '@' */

/* ---- compiling [compiler] ---- */

/* Owned by the caller. Defaults: target "host", -O2, the default pipeline. */
AVE_API AveResult aveCompileOptionsCreate(AveCompileOptions *out);
AVE_API void aveCompileOptionsDestroy(AveCompileOptions o);
/* "sm_90a", "sm_80", "gfx942", "gfx90a" or "host". */
AVE_API AveResult aveCompileOptionsSetTarget(AveCompileOptions o, const char *target);
AVE_API AveResult aveCompileOptionsSetOptLevel(AveCompileOptions o, int level); /* 0..3 */
/* Extra passes run before lowering ("canonicalize,cse"); NULL for the default pipeline. */
AVE_API AveResult aveCompileOptionsSetPipeline(AveCompileOptions o, const char *passes);
/* Debug information in the binary, as `ave compile` gives it: 0 none (the default); 1 line tables
 * (-lineinfo: PTX .loc/.file and the cubin's .debug_line, or the HSACO's .debug_line, naming the
 * .ave lines; the code is optimized as without); 2 full DWARF (-g; on NVIDIA ptxas then makes
 * unoptimized device-debug code). Part of the cache key. The host target ignores it: the
 * interpreter always knows the .ave lines. */
AVE_API AveResult aveCompileOptionsSetDebugInfo(AveCompileOptions o, int level);

/* Compiles kernel `name` (without '@') of m, with options o (a null handle means the defaults).
 * Served from the cache when the same IR text, target, options, ave version and LLVM version
 * were compiled before. Owned by the caller. */
AVE_API AveResult aveKernelCompile(AveModule m, const char *name, AveCompileOptions o,
				   AveKernel *out);

/* ---- compiled kernels (and bundles) ---- */

/* A bundle is one file holding a compiled kernel's binary and metadata; libave_rt alone loads
 * it. Owned by the caller. */
AVE_API AveResult aveKernelLoadBundle(AveContext c, const char *path, AveKernel *out);
AVE_API AveResult aveKernelLoadBundleFromMemory(AveContext c, const void *data, size_t size,
						AveKernel *out);
AVE_API AveResult aveKernelWriteBundle(AveKernel k, const char *path);
AVE_API void aveKernelDestroy(AveKernel k);

AVE_API const char *aveKernelGetName(AveKernel k);   /* borrowed */
AVE_API const char *aveKernelGetTarget(AveKernel k); /* borrowed */
AVE_API int aveKernelGetThreads(AveKernel k);        /* threads per CTA */
AVE_API uint64_t aveKernelGetSharedMemoryBytes(AveKernel k);
AVE_API int aveKernelGetRegisters(AveKernel k);      /* per thread; 0 when not known */
AVE_API uint64_t aveKernelGetSpillBytes(AveKernel k);
AVE_API int aveKernelGetNumArgs(AveKernel k);
AVE_API const char *aveKernelGetArgName(AveKernel k, int i); /* borrowed, without '%' */
typedef enum AveArgKind { AVE_ARG_TENSOR, AVE_ARG_POINTER, AVE_ARG_INT, AVE_ARG_FLOAT } AveArgKind;
AVE_API AveArgKind aveKernelGetArgKind(AveKernel k, int i);
/* The element type of a tensor or pointer argument, or a scalar's type ("bf16", "f32", "i32",
 * "index", ...); borrowed, NULL for no such argument. */
AVE_API const char *aveKernelGetArgType(AveKernel k, int i);
/* A tensor argument's rank (0 for other arguments), and the size and stride of dimension d as
 * declared: -1 where the kernel leaves it to the launch (`?`), -2 for no such dimension. */
AVE_API int aveKernelGetArgRank(AveKernel k, int i);
AVE_API int64_t aveKernelGetArgDim(AveKernel k, int i, int d);
AVE_API int64_t aveKernelGetArgStride(AveKernel k, int i, int d);
/* The whole metadata as JSON (the schema of `ave compile --emit-metadata`); borrowed. */
AVE_API const char *aveKernelGetMetadataJson(AveKernel k);
/* The binary the kernel runs from (a cubin, an HSACO, or the `.ave` text for host) and its size
 * in *size (which may be NULL); borrowed. NULL (size 0) for a null kernel. */
AVE_API const void *aveKernelGetBinary(AveKernel k, size_t *size);

/* ---- devices, buffers, streams ---- */

/* kind: "host", "cuda" or "hip"; ordinal selects among devices of that kind. A device that
 * cannot be opened fails with AVE_ERROR_DEVICE and a diagnostic saying why (library missing, no
 * device, driver too old). Owned by the caller. */
AVE_API AveResult aveDeviceOpen(AveContext c, const char *kind, int ordinal, AveDevice *out);
AVE_API void aveDeviceClose(AveDevice d);
AVE_API const char *aveDeviceGetName(AveDevice d); /* borrowed */
AVE_API AveResult aveDeviceSynchronize(AveDevice d);
/* Host device only: each launch runs `schedules` interleavings of the warp roles, starting from
 * `seed`, and fails on the first that errors (races, deadlocks, results that differ). */
AVE_API AveResult aveDeviceSetSchedules(AveDevice d, int schedules, uint64_t seed);

/* Device memory. Owned by the caller. */
AVE_API AveResult aveBufferCreate(AveDevice d, size_t bytes, AveBuffer *out);
/* Wraps `bytes` (> 0) of memory the caller owns, starting at `ptr`, as a buffer of d, without
 * copying: a host pointer on the host device, a device address (CUdeviceptr, hipMalloc'd memory,
 * torch's data_ptr()) on cuda and hip. Kernels launched with it read and write that memory in
 * place. The handle is owned by the caller; aveBufferDestroy frees the handle, never the memory,
 * which must stay valid until the buffer is destroyed and until launches using it are finished.
 * A null ptr, 0 bytes, or memory the driver says is not this device's (cuda: unknown to the
 * driver, on another device, or running past the end of its allocation; hip: outside a HIP
 * allocation) is AVE_ERROR_INVALID_ARGUMENT with the reason. On GPU devices a launch refuses a
 * wrapped buffer whose address is not aligned to its elements' size. */
AVE_API AveResult aveBufferWrap(AveDevice d, void *ptr, size_t bytes, AveBuffer *out);
AVE_API void aveBufferDestroy(AveBuffer b); /* frees the memory unless it was wrapped */
AVE_API size_t aveBufferGetSize(AveBuffer b);
AVE_API AveResult aveBufferUpload(AveBuffer b, size_t offset, const void *src, size_t bytes);
AVE_API AveResult aveBufferDownload(AveBuffer b, size_t offset, void *dst, size_t bytes);

/* Owned by the caller; a null stream means the device's default stream. */
AVE_API AveResult aveStreamCreate(AveDevice d, AveStream *out);
/* Wraps a stream another library created, so that launches on it are ordered with that
 * library's work: a CUstream on cuda (torch.cuda.current_stream().cuda_stream; it must belong to
 * the device's primary context, as torch's and the CUDA runtime's do; NULL and the special
 * handles CU_STREAM_LEGACY / CU_STREAM_PER_THREAD are accepted), a hipStream_t on hip. The host
 * device has no native streams: it wraps only NULL (its default stream) and refuses any other
 * handle with AVE_ERROR_UNSUPPORTED. The handle is owned by the caller; aveStreamDestroy frees
 * the handle, never the native stream, which must outlive it. A stream of another context or
 * device is AVE_ERROR_INVALID_ARGUMENT. */
AVE_API AveResult aveStreamWrap(AveDevice d, void *native_stream, AveStream *out);
AVE_API void aveStreamDestroy(AveStream s); /* destroys the native stream unless it was wrapped */
/* The native stream behind s (a CUstream, a hipStream_t), for another library to order its work
 * with ave's; borrowed. NULL for the default stream, on the host device, and for a null s. */
AVE_API void *aveStreamGetNative(AveStream s);
AVE_API AveResult aveStreamSynchronize(AveStream s);

/* ---- launching ---- */

/* An argument list in the kernel's order. Owned by the caller; reusable across launches. */
AVE_API AveResult aveArgsCreate(AveArgs *out);
AVE_API void aveArgsDestroy(AveArgs a);
AVE_API void aveArgsClear(AveArgs a);
/* A tensor: the buffer, its rank, and its sizes and strides in elements (strides may be NULL for
 * row-major). The element type is the kernel's; the buffer is borrowed until the launch ends. */
AVE_API AveResult aveArgsAddTensor(AveArgs a, AveBuffer b, int rank, const int64_t *sizes,
				   const int64_t *strides);
/* The same, stating the element type the buffer holds ("f32", "bf16", ...): the launch refuses
 * it unless it is the kernel's (aveKernelGetArgType). */
AVE_API AveResult aveArgsAddTensorTyped(AveArgs a, AveBuffer b, const char *elem, int rank,
					const int64_t *sizes, const int64_t *strides);
AVE_API AveResult aveArgsAddInt(AveArgs a, int64_t v);
AVE_API AveResult aveArgsAddFloat(AveArgs a, double v);

/* Launches k on d over grid[0] x grid[1] x grid[2] CTAs. The kernel must have been compiled for
 * the device's target. Asynchronous on GPU devices (synchronize the stream); the host device runs
 * to completion and reports run-time errors as diagnostics (AVE_ERROR_RUNTIME). */
AVE_API AveResult aveKernelLaunch(AveKernel k, AveDevice d, const uint32_t grid[3], AveArgs args,
				  AveStream s);

/* ---- worlds: kernels that communicate (SPEC 5.9) ---- */

/* A world of `size` ranks (1..64) on one device: each rank's copy of each symmetric buffer (a
 * module's ave.symm.alloc) is an allocation of its own on d, and aveWorldLaunch runs every
 * rank's grid at once, so that the ranks' puts, signals and waits reach each other as they would
 * across GPUs. Devices: host (the interpreter runs the ranks), sim-* (every CTA of every rank
 * resident in the simulator), cuda (a world on one GPU: each rank's grid on a stream of its own,
 * refused when the GPU cannot hold every CTA of every rank at once); hip is
 * AVE_ERROR_UNSUPPORTED. Owned by the caller; destroy it before closing d. */
AVE_API AveResult aveWorldCreate(AveDevice d, int size, AveWorld *out);
AVE_API void aveWorldDestroy(AveWorld w);
AVE_API int aveWorldGetSize(AveWorld w); /* 0 for a null world */
/* Rank `rank`'s copy of symmetric buffer `symbol` (with or without '@') of kernel k's module:
 * made at first use, zero-filled, its size that of the buffer's type; borrowed (valid until the
 * world is destroyed; never aveBufferDestroy it). Upload a rank's inputs into it, download its
 * results from it. A symbol the module does not allocate is AVE_ERROR_NOT_FOUND; the same
 * symbol with another type or size in another kernel is AVE_ERROR_INVALID_ARGUMENT. */
AVE_API AveResult aveWorldGetBuffer(AveWorld w, AveKernel k, const char *symbol, int rank,
				    AveBuffer *out);
/* Launches k on every rank of w over grid[0] x grid[1] x grid[2] CTAs each: args[r] holds rank
 * r's arguments (aveWorldGetSize(w) lists). Each launch is an epoch of the symmetric buffers it
 * uses (one more than their last), so chunk signals need no reset between launches. Runs to
 * completion on host and simulated devices; asynchronous on cuda (ordered after the work queued
 * on s, which waits for every rank). */
AVE_API AveResult aveWorldLaunch(AveKernel k, AveWorld w, const uint32_t grid[3],
				 const AveArgs *args, AveStream s);

#ifdef __cplusplus
}
#endif

#endif
