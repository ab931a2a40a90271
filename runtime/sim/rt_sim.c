/* rt_sim.c — the simulated devices `sim-<target>` (sim-sm_80, sim-sm_90a, sim-gfx90a,
 * sim-gfx942): buffers in host memory; kernels compiled for the target to LLVM IR (a bundle whose
 * metadata says "binary": "llvm"), JIT-compiled for the host and run by the simulator (sim.h).
 * With several schedules, each launch runs once per seed from the same inputs and the buffers
 * must come out the same. */
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
	const char *bin = rt_json_str(k->meta, "binary");
	if (!bin || strcmp(bin, "llvm")) {
		rt_error(d->ctx, "kernel '%s' was compiled to a %s binary; a simulated device runs "
		                 "kernels compiled for 'sim-%s'",
		         k->name, k->target, k->target);
		return AVE_ERROR_UNSUPPORTED;
	}
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

/* The simulator's tensor map, from the description the CUDA device gives the driver. */
static AveResult
sim_encode_map(RtDevice *d, const RtJson *desc, const int64_t *vals, int nvals, void *out)
{
	const char *kind = rt_json_str(desc, "kind");
	if (!kind || strcmp(kind, "cuda_tensor_map")) {
		rt_error(d->ctx, "%s: unknown kernel parameter description '%s'", d->name,
		         kind ? kind : "?");
		return AVE_ERROR_LAUNCH;
	}
	SimTensorMap m;
	memset(&m, 0, sizeof m);
	m.magic = SIM_TMAP_MAGIC;
	int rank = (int)rt_json_int(desc, "rank", 0);
	RtJson *dims = rt_json_get(desc, "dims"), *box = rt_json_get(desc, "box");
	int bp = (int)rt_json_int(desc, "base_param", -1);
	/* CUtensorMapDataType: element sizes. */
	static const int esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
	int dt = (int)rt_json_int(desc, "dtype", -1);
	int sw = (int)rt_json_int(desc, "swizzle", 0);
	bool ok = rank >= 1 && rank <= 5 && dims && dims->kind == RT_JSON_ARRAY &&
	          dims->n == rank && box && box->kind == RT_JSON_ARRAY && box->n == rank &&
	          bp >= 0 && bp < nvals && dt >= 0 && dt < (int)(sizeof esize / sizeof esize[0]) &&
	          sw >= 0 && sw <= 3 && rt_json_int(desc, "interleave", 0) == 0;
	for (int i = 0; ok && i < rank; i++) {
		RtJson *sz = rt_json_get(dims->items[i], "size"),
		       *st = rt_json_get(dims->items[i], "stride_bytes");
		int64_t size, stride;
		ok = rt_eval_param_expr(sz, vals, nvals, &size) &&
		     rt_eval_param_expr(st, vals, nvals, &stride);
		m.dims[i] = (uint64_t)size;
		if (i)
			m.strides[i - 1] = (uint64_t)stride;
		m.box[i] = (uint32_t)box->items[i]->i;
	}
	RtJson *es = rt_json_get(desc, "element_strides");
	for (int i = 0; ok && es && es->kind == RT_JSON_ARRAY && i < es->n; i++)
		ok = es->items[i]->i == 1;
	if (!ok) {
		rt_error(d->ctx, "%s: a tensor map description the simulator cannot encode", d->name);
		return AVE_ERROR_LAUNCH;
	}
	m.rank = (uint32_t)rank;
	m.elem_bytes = (uint32_t)esize[dt];
	m.swizzle = sw ? 16u << sw : 0;
	m.oob_nan = rt_json_int(desc, "oob_fill", 0) != 0;
	m.base = (uint64_t)vals[bp];
	memcpy(out, &m, sizeof m);
	return AVE_SUCCESS;
}

typedef struct Snap {
	void *ptr;
	size_t size;
	uint8_t *in, *out;
} Snap;

static AveResult
sim_launch(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3], const RtArgs *args,
           void *stream)
{
	(void)stream;
	SimDevice *sd = d->impl;
	RtLaunchParams lp;
	AveResult r = rt_build_params(k, d, args, grid, &lp, sim_encode_map);
	if (r)
		return r;
	/* Several schedules: every buffer is put back before each run and compared after. */
	int nb = 0;
	Snap *snaps = calloc((size_t)args->n + 1, sizeof *snaps);
	for (int i = 0; sd->schedules > 1 && i < args->n; i++) {
		RtBuffer *b = args->arg[i].buffer;
		if (!b || (args->arg[i].kind != AVE_ARG_TENSOR && args->arg[i].kind != AVE_ARG_POINTER))
			continue;
		snaps[nb].ptr = b->ptr;
		snaps[nb].size = b->size;
		snaps[nb].in = malloc(b->size + 1);
		memcpy(snaps[nb].in, b->ptr, b->size);
		nb++;
	}
	char err[4096];
	for (int s = 0; s < sd->schedules && !r; s++) {
		SimLaunch l = {{lp.grid[0], lp.grid[1], lp.grid[2]},
		               k->threads,
		               (size_t)k->shared_bytes,
		               lp.ptrs,
		               sd->schedules > 1 || sd->seed ? sd->seed + (uint64_t)s : 0,
		               0};
		for (int i = 0; s && i < nb; i++)
			memcpy(snaps[i].ptr, snaps[i].in, snaps[i].size);
		if (!sim_run(handle, &l, err, sizeof err)) {
			rt_error(d->ctx, "%s: kernel '%s'%s: %s", d->name, k->name,
			         sd->schedules > 1 || sd->seed ? " (schedule seed)" : "", err);
			if (sd->schedules > 1 || sd->seed)
				rt_error(d->ctx, "%s: the failing schedule's seed is %llu", d->name,
				         (unsigned long long)l.seed);
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
				         (unsigned long long)l.seed);
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
	rt_params_free(&lp);
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
};

/* Registered with the runtime when the library that holds the simulator is loaded. */
__attribute__((constructor)) static void
sim_register(void)
{
	rt_device_kind_add(&rt_sim_ops);
}

const char *
sim_device_kinds(void)
{
	return "sim-sm_80, sim-sm_90a, sim-gfx90a, sim-gfx942";
}
