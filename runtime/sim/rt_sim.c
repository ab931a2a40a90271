/* rt_sim.c — the simulated devices `sim-<target>` (sim-sm_80, sim-sm_90a, sim-gfx90a,
 * sim-gfx942): buffers in host memory; kernels compiled for the target to LLVM IR (a bundle whose
 * metadata says "binary": "llvm"), JIT-compiled for the host and run by the simulator (sim.h).
 * With several schedules, each launch runs once per seed from the same inputs and the buffers
 * must come out the same. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rt.h"
#include "sim.h"

typedef struct SimDevice {
	int schedules;
	uint64_t seed;
} SimDevice;

static AveResult
sim_open(RtDevice *d, int ordinal)
{
	/* The kind the caller asked for is in d->name: "sim-<target>". */
	const char *tn = d->name + 4;
	const TargetInfo *t = target_find(tn);
	if (!t || t->vendor == TARGET_VENDOR_HOST) {
		char names[256];
		rt_error(d->ctx, "unknown simulated device '%s' (expected sim- and one of %s)", d->name,
		         target_names(names, sizeof names, TARGET_GPUS, " or "));
		return AVE_ERROR_NOT_FOUND;
	}
	if (ordinal != 0) {
		rt_error(d->ctx, "%s: no device %d (there is one)", d->name, ordinal);
		return AVE_ERROR_NOT_FOUND;
	}
	SimDevice *sd = calloc(1, sizeof *sd);
	sd->schedules = 1;
	d->impl = sd;
	d->target = t;
	d->vendor = t->vendor;
	snprintf(d->name, sizeof d->name, "sim-%s (simulated %s)", t->name, t->name);
	return AVE_SUCCESS;
}

static void
sim_close(RtDevice *d)
{
	free(d->impl);
	d->impl = NULL;
}

static AveResult
sim_alloc(RtDevice *d, size_t bytes, void **ptr)
{
	/* 256-byte aligned, as cudaMalloc's are. */
	*ptr = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
	if (!*ptr) {
		rt_error(d->ctx, "sim: out of memory allocating %zu bytes", bytes);
		return AVE_ERROR_OUT_OF_MEMORY;
	}
	memset(*ptr, 0, bytes);
	return AVE_SUCCESS;
}

static void
sim_free(RtDevice *d, void *ptr)
{
	(void)d;
	free(ptr);
}

static AveResult
sim_copy(RtDevice *d, void *dst, const void *src, size_t n)
{
	(void)d;
	memcpy(dst, src, n);
	return AVE_SUCCESS;
}

static AveResult
sim_stream_create(RtDevice *d, void **s)
{
	(void)d;
	*s = NULL;
	return AVE_SUCCESS;
}

static void
sim_stream_destroy(RtDevice *d, void *s)
{
	(void)d;
	(void)s;
}

static AveResult
sim_sync_stream(RtDevice *d, void *s)
{
	(void)d;
	(void)s;
	return AVE_SUCCESS;
}

static AveResult
sim_sync(RtDevice *d)
{
	(void)d;
	return AVE_SUCCESS;
}

static AveResult
sim_load(RtDevice *d, RtKernel *k, void **handle)
{
	/* aveKernelLaunch let only a kernel compiled for a simulated device ("binary": "llvm")
	 * come here. */
	char err[1024];
	SimProgram *p = sim_program_create(d->target, (const char *)k->bundle.binary,
	                                   k->bundle.binary_len, k->name, err, sizeof err);
	if (!p) {
		rt_error(d->ctx, "%s: kernel '%s': %s", d->name, k->name, err);
		return AVE_ERROR_LAUNCH;
	}
	*handle = p;
	return AVE_SUCCESS;
}

static void
sim_unload(RtDevice *d, void *handle)
{
	(void)d;
	sim_program_free(handle);
}

/* The simulator's tensor map, from what the CUDA device gives the driver. */
static AveResult
sim_encode_map(RtDevice *d, const RtTensorMap *tm, void *out)
{
	bool ok = tm->swizzle >= 0 && tm->swizzle <= 3 && tm->interleave == 0 &&
	          (tm->elem_bytes == 1 || tm->elem_bytes == 2 || tm->elem_bytes == 4 ||
	           tm->elem_bytes == 8);
	for (int i = 0; ok && i < tm->rank; i++)
		ok = tm->elem_strides[i] == 1;
	if (!ok) {
		rt_error(d->ctx, "%s: a tensor map the simulator does not model (interleave %d, "
		                 "element strides other than 1, or swizzle mode %d)",
		         d->name, tm->interleave, tm->swizzle);
		return AVE_ERROR_LAUNCH;
	}
	SimTensorMap m;
	memset(&m, 0, sizeof m);
	m.magic = SIM_TMAP_MAGIC;
	m.rank = (uint32_t)tm->rank;
	m.elem_bytes = (uint32_t)tm->elem_bytes;
	m.swizzle = tm->swizzle ? 16u << tm->swizzle : 0; /* CU_TENSOR_MAP_SWIZZLE_32B.. = 1.. */
	m.oob_nan = tm->oob_fill != 0;
	m.base = tm->base;
	for (int i = 0; i < tm->rank; i++) {
		m.dims[i] = tm->dims[i];
		m.box[i] = tm->box[i];
		if (i)
			m.strides[i - 1] = tm->strides[i - 1];
	}
	memcpy(out, &m, sizeof m);
	return AVE_SUCCESS;
}

typedef struct Snap {
	void *ptr;
	size_t size;
	uint8_t *in, *out;
} Snap;

/* Every buffer a launch writes may be one of these: the arguments' buffers of each rank, and a
 * world's symmetric buffers. With several schedules each is put back before each run and
 * compared after. */
static int
snap_add(Snap *snaps, int nb, const RtBuffer *b)
{
	for (int i = 0; i < nb; i++)
		if (snaps[i].ptr == b->ptr)
			return nb;
	snaps[nb].ptr = b->ptr;
	snaps[nb].size = b->size;
	snaps[nb].in = malloc(b->size + 1);
	memcpy(snaps[nb].in, b->ptr, b->size);
	return nb + 1;
}

/* Runs the launch (nr > 1 or a world: the ranks' launches together) under the device's
 * schedules. */
static AveResult
sim_go(RtDevice *d, RtKernel *k, void *handle, const RtLaunchParams *lps, int nr, bool world,
       const RtArgs *args, const RtWorldRank *ranks)
{
	SimDevice *sd = d->impl;
	AveResult r = AVE_SUCCESS;
	int cap = 1;
	for (int q = 0; q < nr; q++)
		cap += args[q].n;
	for (int i = 0; ranks && i < ranks->nsymm; i++)
		cap += ranks->size;
	Snap *snaps = calloc((size_t)cap, sizeof *snaps);
	int nb = 0;
	for (int q = 0; sd->schedules > 1 && q < nr; q++)
		for (int i = 0; i < args[q].n; i++) {
			const RtArg *a = &args[q].arg[i];
			if (a->buffer && (a->kind == AVE_ARG_TENSOR || a->kind == AVE_ARG_POINTER))
				nb = snap_add(snaps, nb, a->buffer);
		}
	for (int i = 0; sd->schedules > 1 && ranks && i < ranks->nsymm; i++)
		for (int q = 0; q < ranks->size; q++)
			nb = snap_add(snaps, nb, ranks->symm[i]->rank[q]);
	SimLaunch *ls = calloc((size_t)nr, sizeof *ls);
	char err[8192];
	for (int s = 0; s < sd->schedules && !r; s++) {
		uint64_t seed = sd->schedules > 1 || sd->seed ? sd->seed + (uint64_t)s : 0;
		for (int q = 0; q < nr; q++)
			ls[q] = (SimLaunch){{lps[q].grid[0], lps[q].grid[1], lps[q].grid[2]},
			                    k->threads,
			                    (size_t)k->shared_bytes,
			                    lps[q].ptrs,
			                    seed,
			                    0};
		for (int i = 0; s && i < nb; i++)
			memcpy(snaps[i].ptr, snaps[i].in, snaps[i].size);
		bool ok = world ? sim_run_world(handle, ls, nr, err, sizeof err)
		                : sim_run(handle, ls, err, sizeof err);
		if (!ok) {
			rt_error(d->ctx, "%s: kernel '%s'%s%s: %s", d->name, k->name,
			         world ? " on a world of ranks" : "",
			         sd->schedules > 1 || sd->seed ? " (schedule seed)" : "", err);
			if (sd->schedules > 1 || sd->seed)
				rt_error(d->ctx, "%s: the failing schedule's seed is %llu", d->name,
				         (unsigned long long)seed);
			r = AVE_ERROR_LAUNCH;
			break;
		}
		for (int i = 0; i < nb; i++) {
			if (!s) {
				snaps[i].out = malloc(snaps[i].size + 1);
				memcpy(snaps[i].out, snaps[i].ptr, snaps[i].size);
			} else if (memcmp(snaps[i].out, snaps[i].ptr, snaps[i].size)) {
				rt_error(d->ctx, "%s: kernel '%s': schedules with seeds %llu and %llu leave "
				                 "different bytes in a buffer (a race in the emitted code)",
				         d->name, k->name, (unsigned long long)sd->seed,
				         (unsigned long long)seed);
				r = AVE_ERROR_LAUNCH;
				break;
			}
		}
	}
	for (int i = 0; i < nb; i++) {
		free(snaps[i].in);
		free(snaps[i].out);
	}
	free(snaps);
	free(ls);
	return r;
}

static AveResult
sim_launch(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3], const RtArgs *args,
           void *stream)
{
	(void)stream;
	RtLaunchParams lp;
	AveResult r = rt_build_params(k, d, args, grid, &lp, sim_encode_map, NULL);
	if (r)
		return r;
	r = sim_go(d, k, handle, &lp, 1, false, args, NULL);
	rt_params_free(&lp);
	return r;
}

/* A world: every CTA of every rank resident in one simulated run (sim_run_world). */
static AveResult
sim_launch_world(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3],
                 const RtArgs *args, const RtWorldRank *ranks, int size, void *stream)
{
	(void)stream;
	RtLaunchParams *lps = calloc((size_t)size, sizeof *lps);
	AveResult r = AVE_SUCCESS;
	int made = 0;
	for (; made < size && !r; made++)
		r = rt_build_params(k, d, &args[made], grid, &lps[made], sim_encode_map, &ranks[made]);
	if (!r)
		r = sim_go(d, k, handle, lps, size, true, args, ranks);
	for (int q = 0; q < made; q++)
		rt_params_free(&lps[q]);
	free(lps);
	return r;
}

static AveResult
sim_wrap(RtDevice *d, void *ptr, size_t bytes)
{
	(void)d;
	(void)ptr;
	(void)bytes;
	return AVE_SUCCESS;
}

static AveResult
sim_stream_wrap(RtDevice *d, void *native)
{
	/* Launches run to completion: the default stream (NULL) is the only one. */
	if (!native)
		return AVE_SUCCESS;
	rt_error(d->ctx, "aveStreamWrap: a simulated device has no native streams (only the "
	                 "default stream, NULL)");
	return AVE_ERROR_INVALID_ARGUMENT;
}

static AveResult
sim_set_schedules(RtDevice *d, int schedules, uint64_t seed)
{
	SimDevice *sd = d->impl;
	sd->schedules = schedules;
	sd->seed = seed;
	return AVE_SUCCESS;
}

const RtDeviceOps rt_sim_ops = {
    .kind = "sim-",
    .open = sim_open,
    .close = sim_close,
    .alloc = sim_alloc,
    .free = sim_free,
    .upload = sim_copy,
    .download = sim_copy,
    .copy = sim_copy,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_sync = sim_sync_stream,
    .sync = sim_sync,
    .load = sim_load,
    .unload = sim_unload,
    .launch = sim_launch,
    .wrap = sim_wrap,
    .stream_wrap = sim_stream_wrap,
    .set_schedules = sim_set_schedules,
    .launch_world = sim_launch_world,
};

/* Registered with the runtime when the library that holds the simulator is loaded. */
__attribute__((constructor)) static void
sim_register(void)
{
	rt_device_kind_add(&rt_sim_ops);
}

static char kinds[256];

static void
list_kinds(void)
{
	size_t n = 0;
	for (int i = 0; i < TARGET_COUNT; i++)
		if (target_table[i].vendor != TARGET_VENDOR_HOST && n < sizeof kinds)
			n += (size_t)snprintf(kinds + n, sizeof kinds - n, "%ssim-%s", n ? ", " : "",
			                      target_table[i].name);
}

/* One per GPU target of the registry. */
const char *
sim_device_kinds(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, list_kinds);
	return kinds;
}
