/* rt_host.c — the `host` device: buffers in host memory, kernels run by the reference
 * interpreter on the `.ave` text carried in their bundle. */
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "interp/interp.h"
#include "rt.h"

typedef struct HostDevice {
	int schedules; /* interleavings each launch runs (aveDeviceSetSchedules) */
	uint64_t seed;
	pthread_mutex_t mu; /* guards last */
	InterpStats last;   /* the statistics of the last launch (rt_host_last_stats) */
} HostDevice;

static AveResult
host_open(RtDevice *d, int ordinal)
{
	if (ordinal != 0) {
		rt_error(d->ctx, "host: no device %d (there is one host device)", ordinal);
		return AVE_ERROR_NOT_FOUND;
	}
	HostDevice *hd = calloc(1, sizeof *hd);
	hd->schedules = 1;
	pthread_mutex_init(&hd->mu, NULL);
	d->impl = hd;
	strcpy(d->name, "host (reference interpreter)");
	d->vendor = TARGET_VENDOR_HOST;
	d->target = &target_table[TARGET_HOST];
	return AVE_SUCCESS;
}

static void
host_close(RtDevice *d)
{
	HostDevice *hd = d->impl;
	if (hd)
		pthread_mutex_destroy(&hd->mu);
	free(hd);
	d->impl = NULL;
}

static AveResult
host_alloc(RtDevice *d, size_t bytes, void **ptr)
{
	*ptr = calloc(1, bytes ? bytes : 1);
	if (!*ptr) {
		rt_error(d->ctx, "host: out of memory allocating %zu bytes", bytes);
		return AVE_ERROR_OUT_OF_MEMORY;
	}
	return AVE_SUCCESS;
}

static void
host_free(RtDevice *d, void *ptr)
{
	(void)d;
	free(ptr);
}

static AveResult
host_copy(RtDevice *d, void *dst, const void *src, size_t n)
{
	(void)d;
	memcpy(dst, src, n);
	return AVE_SUCCESS;
}

static AveResult
host_stream_create(RtDevice *d, void **s)
{
	(void)d;
	*s = NULL;
	return AVE_SUCCESS;
}

static void
host_stream_destroy(RtDevice *d, void *s)
{
	(void)d;
	(void)s;
}

static AveResult
host_sync_stream(RtDevice *d, void *s)
{
	(void)d;
	(void)s;
	return AVE_SUCCESS; /* host launches complete before they return */
}

static AveResult
host_sync(RtDevice *d)
{
	(void)d;
	return AVE_SUCCESS;
}

/* A kernel prepared for the host device: its module re-parsed from the bundle's `.ave` text in
 * a private IR context, so that launches of different kernels never share IR state. */
typedef struct HostLoaded {
	IrCtx *ir;
	IrModule *m;
	IrOp *kernel;
	pthread_mutex_t mu; /* one launch of a kernel at a time (diagnostics go through its context) */
} HostLoaded;

static AveResult
host_load(RtDevice *d, RtKernel *k, void **handle)
{
	HostLoaded *l = calloc(1, sizeof *l);
	l->ir = rt_ir_ctx(d->ctx);
	const char *file = rt_json_str(k->rec, "file");
	l->m = fe_parse(l->ir, file && *file ? file : k->name, (const char *)k->bundle.binary,
			k->bundle.binary_len, 1);
	bool mismatch = false;
	if (l->m && ir_verify(l->m) && (l->kernel = interp_find_kernel(l->m, k->name)) &&
	    l->kernel->reg[0].block->narg != k->nargs) {
		/* The metadata and the kernel's text disagree (a hand-made bundle). */
		rt_error(d->ctx, "host: kernel '%s' takes %d arguments but its metadata lists %d",
			 k->name, l->kernel->reg[0].block->narg, k->nargs);
		mismatch = true;
	}
	if (!l->m || mismatch || !l->kernel) {
		if (l->m && !l->kernel)
			rt_error(d->ctx, "host: the bundle of kernel '%s' does not contain it", k->name);
		ir_module_free(l->m);
		rt_ir_ctx_free(l->ir);
		free(l);
		return AVE_ERROR_LAUNCH;
	}
	pthread_mutex_init(&l->mu, NULL);
	*handle = l;
	return AVE_SUCCESS;
}

static void
host_unload(RtDevice *d, void *handle)
{
	(void)d;
	HostLoaded *l = handle;
	ir_module_free(l->m);
	rt_ir_ctx_free(l->ir);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* The interpreter's arguments from a launch's (tensors read and written in place). */
static InterpArg *
interp_args(const HostLoaded *l, const RtArgs *args)
{
	IrBlock *body = l->kernel->reg[0].block;
	InterpArg *ia = calloc((size_t)(args->n ? args->n : 1), sizeof *ia);
	for (int i = 0; i < args->n; i++) {
		const RtArg *a = &args->arg[i];
		if (a->kind == AVE_ARG_TENSOR || a->kind == AVE_ARG_POINTER) {
			RtBuffer *b = a->buffer;
			IrType *t = body->arg[i]->type;
			size_t es = interp_elem_size(ir_type_elem(t));
			ia[i].tensor = true;
			ia[i].t.data = b->ptr;
			ia[i].t.nelem = (int64_t)(b->size / (es ? es : 1));
			ia[i].t.rank = a->rank;
			memcpy(ia[i].t.dims, a->sizes, sizeof a->sizes);
			memcpy(ia[i].t.strides, a->strides, sizeof a->strides);
		} else {
			ia[i].i = a->i;
			ia[i].f = a->kind == AVE_ARG_FLOAT ? a->f : (double)a->i;
		}
	}
	return ia;
}

/* Runs the ranks' launches (one for a plain launch) and keeps the statistics. */
static AveResult
host_run(RtDevice *d, HostLoaded *l, const InterpLaunch *ls, int world)
{
	HostDevice *hd = d->impl;
	InterpOptions o = {.schedules = hd->schedules, .seed = hd->seed};
	InterpStats st = {0};
	pthread_mutex_lock(&l->mu);
	bool ok = world ? interp_run_world(l->m, ls, world, &o, &st) : interp_run(l->m, ls, &o, &st);
	pthread_mutex_unlock(&l->mu);
	pthread_mutex_lock(&hd->mu);
	hd->last = st;
	pthread_mutex_unlock(&hd->mu);
	return ok ? AVE_SUCCESS : AVE_ERROR_RUNTIME;
}

static AveResult
host_launch(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3], const RtArgs *args,
	    void *stream)
{
	(void)stream;
	(void)k;
	HostLoaded *l = handle;
	/* Symmetric buffers, if any, are zeros of a world of one. */
	InterpArg *ia = interp_args(l, args);
	InterpLaunch launch = {.kernel = l->kernel, .args = ia, .nargs = args->n, .world_size = 1};
	for (int i = 0; i < 3; i++)
		launch.grid[i] = grid[i];
	AveResult r = host_run(d, l, &launch, 0);
	free(ia);
	return r;
}

/* A world: the interpreter runs the ranks together, each rank's symmetric buffers the world's
 * host memory. */
static AveResult
host_launch_world(RtDevice *d, RtKernel *k, void *handle, const uint32_t grid[3],
		  const RtArgs *args, const RtWorldRank *ranks, int size, void *stream)
{
	(void)stream;
	HostLoaded *l = handle;
	int ns = 0;
	while (interp_symm_alloc(l->kernel, ns))
		ns++;
	InterpLaunch *ls = calloc((size_t)size, sizeof *ls);
	InterpTensor *symm = calloc((size_t)(size * ns) + 1, sizeof *symm);
	AveResult r = AVE_SUCCESS;
	for (int i = 0; i < ns && !r; i++) {
		IrOp *a = interp_symm_alloc(l->kernel, i);
		const RtWorldSymm *ws = rt_world_symm_find(&ranks[0], a->item[0].s);
		if (!ws) {
			rt_error(d->ctx, "kernel '%s': symmetric buffer '@%s' is missing from its "
					 "metadata", k->name, a->item[0].s);
			r = AVE_ERROR_LAUNCH;
			break;
		}
		for (int q = 0; q < size; q++) {
			InterpTensor *x = &symm[q * ns + i];
			*x = interp_symm_tensor(a, ws->rank[q]->ptr);
			x->nelem = (int64_t)(ws->bytes / interp_elem_size(x->elem));
		}
	}
	for (int q = 0; q < size; q++) {
		ls[q] = (InterpLaunch){.kernel = l->kernel, .args = interp_args(l, &args[q]),
				       .nargs = args[q].n, .rank = q, .world_size = size,
				       .symm = symm + q * ns, .nsymm = ns, .epoch = ranks[q].epoch};
		for (int i = 0; i < 3; i++)
			ls[q].grid[i] = grid[i];
	}
	if (!r)
		r = host_run(d, l, ls, size);
	for (int q = 0; q < size; q++)
		free((void *)ls[q].args);
	free(ls);
	free(symm);
	return r;
}

/* Any host memory will do: the interpreter reads and writes elements with memcpy, so neither
 * the base nor the strides need alignment. */
static AveResult
host_wrap(RtDevice *d, void *ptr, size_t bytes)
{
	(void)d;
	(void)ptr;
	(void)bytes;
	return AVE_SUCCESS;
}

/* The host device has no streams of its own (launches run to completion), so the only native
 * stream it can wrap is NULL, which is its default stream. */
static AveResult
host_stream_wrap(RtDevice *d, void *native)
{
	if (!native)
		return AVE_SUCCESS;
	rt_error(d->ctx, "aveStreamWrap: the host device has no native streams; only NULL (its "
			 "default stream) can be wrapped, given %p", native);
	return AVE_ERROR_UNSUPPORTED;
}

const RtDeviceOps rt_host_ops = {
	"host",        host_open,          host_close,          host_alloc,       host_free,
	host_copy,     host_copy,          host_stream_create,  host_stream_destroy,
	host_sync_stream, host_sync,       host_load,           host_unload,      host_launch,
	host_wrap,     host_stream_wrap,   NULL,             host_launch_world,
	host_copy,
};

bool
rt_host_last_stats(RtDevice *d, InterpStats *out)
{
	if (d->ops != &rt_host_ops)
		return false;
	HostDevice *hd = d->impl;
	pthread_mutex_lock(&hd->mu);
	*out = hd->last;
	pthread_mutex_unlock(&hd->mu);
	return true;
}

AveResult
aveDeviceSetSchedules(AveDevice h, int schedules, uint64_t seed)
{
	RtDevice *d = h.ptr;
	if (!d)
		return rt_misuse(NULL, "aveDeviceSetSchedules: the device is null");
	if ((d->ops != &rt_host_ops && !d->ops->set_schedules) || schedules < 1) {
		rt_error(d->ctx, "%s", schedules < 1 ? "the number of schedules must be at least 1"
						     : "schedules can only be set on the host device and "
						       "simulated devices");
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	if (d->ops->set_schedules)
		return d->ops->set_schedules(d, schedules, seed);
	HostDevice *hd = d->impl;
	hd->schedules = schedules;
	hd->seed = seed;
	return AVE_SUCCESS;
}
