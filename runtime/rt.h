/* rt.h — the runtime behind include/ave/ave.h: contexts, diagnostics, bundles, the compile
 * cache, devices (host, cuda, hip), buffers, streams, arguments and launch. Prototypes are
 * grouped by source file. Nothing here links LLVM or Z3. */
#ifndef AVE_RT_H
#define AVE_RT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/ave/ave.h"
#include "../ir/ir.h"

/* ---- rt_sha256.c ---- */

typedef struct RtSha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t nbuf;
} RtSha256;

void rt_sha256_init(RtSha256 *s);
void rt_sha256_update(RtSha256 *s, const void *data, size_t n);
void rt_sha256_final(RtSha256 *s, uint8_t out[32]);
void rt_sha256(const void *data, size_t n, uint8_t out[32]);
void rt_hex(const uint8_t *p, size_t n, char *out); /* out has room for 2n + 1 */

/* ---- rt_json.c ---- */

typedef enum RtJsonKind {
	RT_JSON_NULL,
	RT_JSON_BOOL,
	RT_JSON_NUMBER,
	RT_JSON_STRING,
	RT_JSON_ARRAY,
	RT_JSON_OBJECT
} RtJsonKind;

typedef struct RtJson {
	RtJsonKind kind;
	int64_t i;    /* BOOL, NUMBER (integral part) */
	double f;     /* NUMBER */
	char *s;      /* STRING */
	int n;        /* ARRAY, OBJECT */
	struct RtJson **items;
	char **keys;  /* OBJECT */
} RtJson;

/* Parses text into `a`; NULL with *err set on malformed input. */
RtJson *rt_json_parse(IrArena *a, const char *text, size_t len, const char **err);
RtJson *rt_json_get(const RtJson *o, const char *key);
int64_t rt_json_int(const RtJson *o, const char *key, int64_t dflt);
const char *rt_json_str(const RtJson *o, const char *key);

/* ---- rt_bundle.c: the bundle file format ----
 *
 *   "AVEBNDL1" | u32 version | u32 nsect | nsect x { u32 kind, u32 0, u64 offset, u64 size,
 *   u8 sha256[32] } | payloads (8-byte aligned) | u8 sha256[32] of all that precedes
 *
 * Sections: metadata JSON, binary (cubin, HSACO, or `.ave` text for host), source `.ave`. */

enum { RT_SECT_META = 1, RT_SECT_BINARY = 2, RT_SECT_SOURCE = 3 };

typedef struct RtBundle {
	uint8_t *data; /* the encoded bundle (owned) */
	size_t size;
	const char *meta;
	size_t meta_len;
	const uint8_t *binary;
	size_t binary_len;
	const char *source;
	size_t source_len;
} RtBundle;

/* Encodes into a malloc'd buffer. */
uint8_t *rt_bundle_encode(const char *meta, size_t meta_len, const void *bin, size_t bin_len,
			  const char *src, size_t src_len, size_t *out_len);
/* Checks every checksum and fills b (taking ownership of data on success). */
bool rt_bundle_decode(uint8_t *data, size_t size, RtBundle *b, const char **err);
void rt_bundle_free(RtBundle *b);

/* ---- rt_cache.c: content-addressed compile cache (memory + disk) ---- */

typedef struct RtCacheStats {
	uint64_t memory_hits, disk_hits, misses, corrupt;
} RtCacheStats;

typedef struct RtCache {
	pthread_mutex_t mu;
	char *dir;      /* NULL: memory only */
	IrMap mem;      /* key (interned hex) -> RtCacheEntry* */
	IrArena keys;
	RtCacheStats stats;
} RtCache;

void rt_cache_init(RtCache *c, const char *dir);
void rt_cache_free(RtCache *c);
void rt_cache_set_dir(RtCache *c, const char *dir);
/* The default directory: $AVE_CACHE_DIR, $XDG_CACHE_HOME/ave, or $HOME/.cache/ave (malloc'd). */
char *rt_cache_default_dir(void);
/* Looks the key up in memory, then on disk (verifying the bundle). `ident` is the request the
 * key was made from (any text without NUL): an entry stored for another request (a file moved
 * or copied between keys) is counted corrupt, removed and missed. Returns a malloc'd copy of
 * the encoded bundle, or NULL on a miss; counts hits, misses and corrupt entries. */
uint8_t *rt_cache_get(RtCache *c, const uint8_t key[32], const char *ident, size_t *size);
/* Stores an encoded bundle under key with its request, in memory and atomically on disk (temp
 * file + rename). A disk entry is "AVECACHE1 <ident length>\n", ident, then the bundle. */
void rt_cache_put(RtCache *c, const uint8_t key[32], const char *ident, const uint8_t *data,
		  size_t size);

/* ---- rt_context.c: contexts and diagnostics ---- */

typedef struct RtCtx {
	pthread_mutex_t mu;
	AveDiagnosticHandler handler;
	void *handler_ud;
	bool remarks;       /* deliver remarks (off by default) */
	RtCache cache;
	int refs;           /* the user's handle, and every kernel, device and IR context made on it */
	bool destroyed;     /* aveContextDestroy ran: diagnostics reach no handler (last error only) */
} RtCtx;

/* Objects that may outlive their context (kernels, devices, the IR contexts they own) hold a
 * reference to it, so that their errors never read freed memory; the last release frees it. */
void rt_ctx_retain(RtCtx *c);
void rt_ctx_release(RtCtx *c);

/* An IrCtx whose diagnostics go to the AveContext's handler (one per module or kernel, so that
 * independent objects never share mutable IR state across threads). */
IrCtx *rt_ir_ctx(RtCtx *c);
void rt_ir_ctx_free(IrCtx *ir);
/* From now on, keeps the warnings and remarks ir reports (a compile's, for its cache entry);
 * rt_ir_ctx_recorded returns them as a JSON array of ir_diag_print_json objects (malloc'd). */
void rt_ir_ctx_record(IrCtx *ir);
char *rt_ir_ctx_recorded(IrCtx *ir);
/* Reports a runtime diagnostic (no source location) through the context's handler. */
void rt_error(RtCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports a misuse (a null handle or pointer, a bad value): through c when there is one, and
 * always as the thread's last error (aveGetLastError). Returns AVE_ERROR_INVALID_ARGUMENT. */
AveResult rt_misuse(RtCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Looks `name` up in the dlopen'd `lib` and stores it in the function pointer at `fp`: ISO C does
 * not convert dlsym's object pointer to a function pointer, a byte copy does. False when absent
 * (*fp is then NULL). */
bool rt_dlsym(void *lib, const char *name, void *fp);

/* ---- rt_api.c: modules ---- */

typedef struct RtModule {
	RtCtx *ctx;
	IrCtx *ir;          /* private to the module */
	IrModule *m;
	char *text;         /* the source as given: compiles re-parse it, so locations match */
	size_t len;
	char *name;
	pthread_mutex_t mu; /* guards reads of m by compiles on several threads */
	int nkernels;
	IrOp **kernels;
} RtModule;

/* ---- rt_kernel.c: compiled kernels (from bundles) and their metadata ---- */

typedef struct RtArgInfo {
	const char *name;
	AveArgKind kind;
	const char *type; /* element type of a tensor or pointer, or the scalar's type */
	int rank;
	int64_t dims[IR_MAX_RANK];    /* -1 for `?` */
	int64_t strides[IR_MAX_RANK]; /* -1 for `?` */
} RtArgInfo;

struct RtDevice;

typedef struct RtLoaded {
	struct RtDevice *dev;
	void *handle; /* device-specific: a CUmodule/CUfunction pair, a parsed module, ... */
	struct RtLoaded *next;
} RtLoaded;

typedef struct RtKernel {
	RtCtx *ctx;
	RtBundle bundle;
	IrArena arena;
	RtJson *meta;
	RtJson *rec;           /* the kernel's record in meta */
	const char *meta_text; /* NUL-terminated copy of the metadata section */
	int64_t persistent;    /* CTAs of a persistent kernel, or 0 */
	const char *name, *target;
	int threads, registers;
	uint64_t shared_bytes, spill_bytes;
	int nargs;
	RtArgInfo *args;
	pthread_mutex_t mu; /* guards `loaded` */
	RtLoaded *loaded;
} RtKernel;

/* Takes ownership of the encoded bundle (data) and reads its metadata. */
AveResult rt_kernel_from_bundle(RtCtx *c, uint8_t *data, size_t size, RtKernel **out);
/* The same, reporting nothing on failure (for probing cache entries). */
AveResult rt_kernel_load_quiet(RtCtx *c, uint8_t *data, size_t size, RtKernel **out);
void rt_kernel_free(RtKernel *k);

/* ---- rt_device.c and rt_{host,cuda,hip}.c: devices ---- */

typedef struct RtArg {
	AveArgKind kind;
	void *buffer;  /* TENSOR/POINTER: the RtBuffer */
	int rank;
	int64_t sizes[IR_MAX_RANK], strides[IR_MAX_RANK];
	int64_t i;
	double f;
	char elem[16]; /* TENSOR: the element type the caller stated, or "" */
} RtArg;

typedef struct RtArgs {
	int n, cap;
	RtArg *arg;
} RtArgs;

typedef struct RtBuffer {
	struct RtDevice *dev;
	void *ptr;     /* host pointer, or device address */
	size_t size;
	bool wrapped;  /* aveBufferWrap: the caller's memory, never freed by ave */
	bool borrowed; /* a world's symmetric buffer: aveBufferDestroy refuses it */
} RtBuffer;

struct RtWorldRank;

typedef struct RtDeviceOps {
	const char *kind;
	/* Opens device `ordinal`; on failure reports why through the context and returns an error. */
	AveResult (*open)(struct RtDevice *d, int ordinal);
	void (*close)(struct RtDevice *d);
	AveResult (*alloc)(struct RtDevice *d, size_t bytes, void **ptr);
	void (*free)(struct RtDevice *d, void *ptr);
	AveResult (*upload)(struct RtDevice *d, void *dst, const void *src, size_t bytes);
	AveResult (*download)(struct RtDevice *d, void *dst, const void *src, size_t bytes);
	AveResult (*stream_create)(struct RtDevice *d, void **s);
	void (*stream_destroy)(struct RtDevice *d, void *s);
	AveResult (*stream_sync)(struct RtDevice *d, void *s);
	AveResult (*sync)(struct RtDevice *d);
	/* Prepares k for launches on d (loads its binary); the result is cached per device. */
	AveResult (*load)(struct RtDevice *d, RtKernel *k, void **handle);
	void (*unload)(struct RtDevice *d, void *handle);
	AveResult (*launch)(struct RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3],
			    const RtArgs *args, void *stream);
	/* aveBufferWrap: checks, as far as the driver can tell, that [ptr, ptr + bytes) is memory
	 * this device's kernels can use; reports why not. */
	AveResult (*wrap)(struct RtDevice *d, void *ptr, size_t bytes);
	/* aveStreamWrap: checks that the native stream handle can carry this device's launches. */
	AveResult (*stream_wrap)(struct RtDevice *d, void *native);
	/* aveDeviceSetSchedules, where the device runs seeded schedules (NULL: it does not). */
	AveResult (*set_schedules)(struct RtDevice *d, int schedules, uint64_t seed);
	/* aveWorldLaunch: every rank's launch of k at once (rank r: args[r], ranks[r]); NULL where
	 * the device cannot run a world. */
	AveResult (*launch_world)(struct RtDevice *d, RtKernel *k, void *handle,
				  const uint32_t grid[3], const RtArgs *args,
				  const struct RtWorldRank *ranks, int size, void *stream);
	/* Device memory to device memory, in order with the device's work (NULL: stage through
	 * the host with download and upload). */
	AveResult (*copy)(struct RtDevice *d, void *dst, const void *src, size_t bytes);
} RtDeviceOps;

typedef struct RtDevice {
	RtCtx *ctx;
	const RtDeviceOps *ops;
	pthread_mutex_t mu;   /* guards kernels */
	RtKernel **kernels;   /* kernels loaded on this device (unloaded when it closes) */
	int nkernels;
	char name[256];
	/* The target its kernels must be compiled for (a kernel for an older target of the same vendor
	 * may run too: target_runs_on), or NULL when the device cannot say which of its vendor's. */
	const TargetInfo *target;
	TargetVendor vendor;
	void *impl;
} RtDevice;

extern const RtDeviceOps rt_host_ops, rt_cuda_ops, rt_hip_ops;
/* Adds a device kind (a kind ending in '-' names a family: "sim-" opens "sim-sm_90a"); the
 * library holding it calls this when loaded. */
void rt_device_kind_add(const RtDeviceOps *ops);
/* The simulated devices, in words (runtime/sim/rt_sim.c: libave and the tools, not libave_rt). */
const char *sim_device_kinds(void);
/* The interpreter's statistics of the last launch on a host device; false for other devices. */
struct InterpStats;
bool rt_host_last_stats(RtDevice *d, struct InterpStats *out);

/* Checks args against k's signature; reports the first mismatch through d's context. */
AveResult rt_args_check(RtKernel *k, const RtArgs *args, RtDevice *d);

typedef struct RtStream {
	RtDevice *dev;
	void *s;      /* the native stream (NULL: the default stream) */
	bool wrapped; /* aveStreamWrap: the caller's, never destroyed by ave */
} RtStream;

/* ---- rt_world.c: a world of ranks on one device (SPEC 5.9) ---- */

/* One symmetric buffer of a world: each rank's copy, and the table of their addresses (the
 * "peers" parameter: size device pointers in device memory). */
typedef struct RtWorldSymm {
	char *symbol;
	char *type;      /* element type */
	size_t bytes;
	RtBuffer **rank; /* size copies, owned by the world */
	void *peers;     /* device address of the table */
	int64_t epochs;  /* launches that used it so far */
} RtWorldSymm;

/* What a world launch gives rank `rank`'s parameters ("symm", "peers", "rank", "world",
 * "epoch" in the metadata): symm[i] is the world's buffer of the kernel's i-th symmetric
 * buffer (its "symmetric" list). */
typedef struct RtWorldRank {
	int rank, size;
	int64_t epoch;
	RtWorldSymm *const *symm;
	int nsymm;
} RtWorldRank;

/* The world's buffer named `symbol` (without '@'), or NULL. */
const RtWorldSymm *rt_world_symm_find(const RtWorldRank *w, const char *symbol);

/* Checks that k can be launched on d (its binary kind, its target, the stream's device) with
 * each of the nargs argument lists, and loads it there once; the device's handle in *handle. */
AveResult rt_kernel_prepare(RtKernel *k, RtDevice *d, RtDevice *stream_dev, const RtArgs *args,
			    int nargs, void **handle);

/* ---- rt_params.c: kernel parameters in the ABI order of the metadata's "params" ---- */

typedef struct RtLaunchParams {
	int n;
	void **ptrs;      /* one pointer per parameter, into storage */
	uint8_t *storage; /* 64-byte aligned slots */
	uint32_t grid[3]; /* the grid to launch: the logical one, or a persistent kernel's CTAs
			     (which walk the logical grid passed among the parameters) */
} RtLaunchParams;

/* A TMA tensor map ("cuda_tensor_map" in the metadata, docs/targets.md) with the launch's values:
 * what cuTensorMapEncodeTiled takes. rt_build_params reads and checks it once. */
typedef struct RtTensorMap {
	int rank;                  /* 1..5 */
	int dtype;                 /* CUtensorMapDataType */
	int elem_bytes;
	uint64_t base;             /* the tensor's address */
	uint64_t dims[5];          /* elements per dimension, innermost first */
	uint64_t strides[5];       /* byte strides of dimensions 1..rank-1 */
	uint32_t box[5], elem_strides[5];
	int interleave, swizzle, l2_promotion, oob_fill; /* the CUDA enums' values */
} RtTensorMap;

/* Encodes a target parameter (a 128-byte TMA descriptor) from its tensor map. */
typedef AveResult (*RtMapEncoder)(RtDevice *d, const RtTensorMap *m, void *out);

/* w: the rank of a world launch, or NULL (then a communicating kernel is refused). */
AveResult rt_build_params(RtKernel *k, RtDevice *d, const RtArgs *args, const uint32_t grid[3],
			  RtLaunchParams *lp, RtMapEncoder encode, const RtWorldRank *w);
void rt_params_free(RtLaunchParams *lp);

#endif
