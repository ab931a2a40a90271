/* rt_api.c — the public device, buffer, stream, argument and launch functions, and modules
 * (parsing and verifying `.ave` text with a private IR context per module). */
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "rt.h"

/* ---- modules ---- */

static bool
collect(IrOp *op, void *ud)
{
	RtModule *m = ud;
	if (op->code == IR_OP_KERNEL) {
		m->kernels = realloc(m->kernels, sizeof *m->kernels * (size_t)(m->nkernels + 1));
		m->kernels[m->nkernels++] = op;
	}
	return true;
}

AveResult
aveModuleParse(AveContext c, const char *text, size_t len, const char *name, AveModule *out)
{
	if (!c.ptr || !text || !out)
		return rt_misuse(c.ptr, "aveModuleParse: %s is null",
				 !c.ptr ? "the context" : !text ? "'text'" : "'out'");
	out->ptr = NULL;
	if (len > ((size_t)1 << 30)) {
		rt_error(c.ptr, "module text of %zu bytes is larger than the 1 GiB limit", len);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	RtModule *m = calloc(1, sizeof *m);
	m->ctx = c.ptr;
	m->ir = rt_ir_ctx(c.ptr);
	pthread_mutex_init(&m->mu, NULL);
	m->name = strdup(name ? name : "<module>");
	m->text = malloc(len + 1);
	memcpy(m->text, text, len);
	m->text[len] = 0;
	m->len = len;
	m->m = fe_parse(m->ir, m->name, text, len, 1);
	AveResult r = AVE_SUCCESS;
	if (!m->m)
		r = AVE_ERROR_PARSE;
	else if (!ir_verify(m->m))
		r = AVE_ERROR_VERIFY;
	if (r) {
		aveModuleDestroy((AveModule){m});
		return r;
	}
	ir_walk(m->m->body, collect, m);
	out->ptr = m;
	return AVE_SUCCESS;
}

AveResult
aveModuleParseFile(AveContext c, const char *path, AveModule *out)
{
	if (!c.ptr || !path || !out)
		return rt_misuse(c.ptr, "aveModuleParseFile: %s is null",
				 !c.ptr ? "the context" : !path ? "'path'" : "'out'");
	IrCtx *tmp = rt_ir_ctx(c.ptr);
	size_t len;
	char *text = fe_read_file(tmp, path, &len);
	rt_ir_ctx_free(tmp);
	if (!text)
		return AVE_ERROR_IO;
	AveResult r = aveModuleParse(c, text, len, path, out);
	free(text);
	return r;
}

void
aveModuleDestroy(AveModule h)
{
	RtModule *m = h.ptr;
	if (!m)
		return;
	ir_module_free(m->m);
	rt_ir_ctx_free(m->ir);
	free(m->text);
	free(m->name);
	pthread_mutex_destroy(&m->mu);
	free(m->kernels);
	free(m);
}

int
aveModuleGetNumKernels(AveModule h)
{
	RtModule *m = h.ptr;
	return m ? m->nkernels : 0;
}

const char *
aveModuleGetKernelName(AveModule h, int i)
{
	RtModule *m = h.ptr;
	return m && i >= 0 && i < m->nkernels ? m->kernels[i]->item[0].s : NULL;
}

/* ---- devices ---- */

static const RtDeviceOps *device_kinds[8] = {&rt_host_ops, &rt_cuda_ops, &rt_hip_ops};
static int ndevice_kinds = 3;
static pthread_mutex_t kinds_mu = PTHREAD_MUTEX_INITIALIZER;

void
rt_device_kind_add(const RtDeviceOps *ops)
{
	pthread_mutex_lock(&kinds_mu);
	if (ndevice_kinds < (int)(sizeof device_kinds / sizeof device_kinds[0]))
		device_kinds[ndevice_kinds++] = ops;
	pthread_mutex_unlock(&kinds_mu);
}

static bool
kind_matches(const char *family, const char *kind)
{
	size_t n = strlen(family);
	return n && family[n - 1] == '-' ? !strncmp(family, kind, n) && kind[n] : !strcmp(family, kind);
}

AveResult
aveDeviceOpen(AveContext c, const char *kind, int ordinal, AveDevice *out)
{
	if (!c.ptr || !kind || !out)
		return rt_misuse(c.ptr, "aveDeviceOpen: %s is null",
				 !c.ptr ? "the context" : !kind ? "'kind'" : "'out'");
	out->ptr = NULL;
	const RtDeviceOps *ops = NULL;
	pthread_mutex_lock(&kinds_mu);
	bool sim = false; /* simulated devices are in this build (for the message) */
	for (int i = 0; i < ndevice_kinds; i++) {
		if (kind_matches(device_kinds[i]->kind, kind))
			ops = device_kinds[i];
		sim = sim || !strcmp(device_kinds[i]->kind, "sim-");
	}
	pthread_mutex_unlock(&kinds_mu);
	if (!ops) {
		rt_error(c.ptr, "unknown device kind '%s' (expected host, cuda, hip%s)", kind,
			 sim ? " or sim-<target>" : "");
		return AVE_ERROR_NOT_FOUND;
	}
	RtDevice *d = calloc(1, sizeof *d);
	d->ctx = c.ptr;
	rt_ctx_retain(d->ctx);
	d->ops = ops;
	/* The kind as asked for: a family's member ("sim-sm_90a") reads its name from here. */
	snprintf(d->name, sizeof d->name, "%s", kind);
	pthread_mutex_init(&d->mu, NULL);
	AveResult r = ops->open(d, ordinal);
	if (r) {
		ops->close(d);
		pthread_mutex_destroy(&d->mu);
		rt_ctx_release(d->ctx);
		free(d);
		return r;
	}
	out->ptr = d;
	return AVE_SUCCESS;
}

void
aveDeviceClose(AveDevice h)
{
	RtDevice *d = h.ptr;
	if (!d)
		return;
	/* Kernels that ran here let go of what they loaded on this device. */
	pthread_mutex_lock(&d->mu);
	RtKernel **ks = d->kernels;
	int n = d->nkernels;
	d->kernels = NULL;
	d->nkernels = 0;
	pthread_mutex_unlock(&d->mu);
	for (int i = 0; i < n; i++) {
		RtKernel *k = ks[i];
		pthread_mutex_lock(&k->mu);
		for (RtLoaded **p = &k->loaded; *p; p = &(*p)->next) {
			if ((*p)->dev != d)
				continue;
			RtLoaded *l = *p;
			*p = l->next;
			d->ops->unload(d, l->handle);
			free(l);
			break;
		}
		pthread_mutex_unlock(&k->mu);
	}
	free(ks);
	d->ops->close(d);
	pthread_mutex_destroy(&d->mu);
	rt_ctx_release(d->ctx);
	free(d);
}

const char *
aveDeviceGetName(AveDevice h)
{
	RtDevice *d = h.ptr;
	return d ? d->name : NULL;
}

AveResult
aveDeviceSynchronize(AveDevice h)
{
	RtDevice *d = h.ptr;
	return d ? d->ops->sync(d) : rt_misuse(NULL, "aveDeviceSynchronize: the device is null");
}

/* ---- buffers ---- */

AveResult
aveBufferCreate(AveDevice h, size_t bytes, AveBuffer *out)
{
	RtDevice *d = h.ptr;
	if (!d || !out)
		return rt_misuse(d ? d->ctx : NULL, "aveBufferCreate: %s is null",
				 !d ? "the device" : "'out'");
	out->ptr = NULL;
	RtBuffer *b = calloc(1, sizeof *b);
	b->dev = d;
	b->size = bytes;
	AveResult r = d->ops->alloc(d, bytes, &b->ptr);
	if (r) {
		free(b);
		return r;
	}
	out->ptr = b;
	return AVE_SUCCESS;
}

AveResult
aveBufferWrap(AveDevice h, void *ptr, size_t bytes, AveBuffer *out)
{
	RtDevice *d = h.ptr;
	if (out)
		out->ptr = NULL;
	if (!d || !ptr || !out)
		return rt_misuse(d ? d->ctx : NULL, "aveBufferWrap: %s is null",
				 !d ? "the device" : !ptr ? "'ptr'" : "'out'");
	if (!bytes)
		return rt_misuse(d->ctx, "aveBufferWrap: 'bytes' is 0 (wrap at least one byte; an "
					 "empty tensor can use a buffer of aveBufferCreate)");
	if ((uintptr_t)ptr + bytes - 1 < (uintptr_t)ptr)
		return rt_misuse(d->ctx, "aveBufferWrap: %zu bytes at %p wrap around the address space",
				 bytes, ptr);
	AveResult r = d->ops->wrap(d, ptr, bytes);
	if (r)
		return r;
	RtBuffer *b = calloc(1, sizeof *b);
	b->dev = d;
	b->ptr = ptr;
	b->size = bytes;
	b->wrapped = true;
	out->ptr = b;
	return AVE_SUCCESS;
}

void
aveBufferDestroy(AveBuffer h)
{
	RtBuffer *b = h.ptr;
	if (!b)
		return;
	if (b->borrowed) {
		rt_misuse(b->dev->ctx, "aveBufferDestroy: the buffer is a world's symmetric buffer "
			  "(aveWorldGetBuffer); the world frees it");
		return;
	}
	if (!b->wrapped)
		b->dev->ops->free(b->dev, b->ptr);
	free(b);
}

size_t
aveBufferGetSize(AveBuffer h)
{
	RtBuffer *b = h.ptr;
	return b ? b->size : 0;
}

static AveResult
range_ok(RtBuffer *b, size_t off, size_t n, const void *p)
{
	if (!b)
		return rt_misuse(NULL, "buffer access through a null buffer");
	if (!p && n) {
		rt_error(b->dev->ctx, "buffer access of %zu bytes with a null host pointer", n);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	if (off > b->size || n > b->size - off) {
		rt_error(b->dev->ctx, "buffer access [%zu, %zu) is outside the buffer's %zu bytes", off,
			 off + n, b->size);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	return AVE_SUCCESS;
}

AveResult
aveBufferUpload(AveBuffer h, size_t off, const void *src, size_t n)
{
	RtBuffer *b = h.ptr;
	AveResult r = range_ok(b, off, n, src);
	if (r || !n)
		return r;
	return b->dev->ops->upload(b->dev, (char *)b->ptr + off, src, n);
}

AveResult
aveBufferDownload(AveBuffer h, size_t off, void *dst, size_t n)
{
	RtBuffer *b = h.ptr;
	AveResult r = range_ok(b, off, n, dst);
	if (r || !n)
		return r;
	return b->dev->ops->download(b->dev, dst, (char *)b->ptr + off, n);
}

/* ---- streams ---- */

AveResult
aveStreamCreate(AveDevice h, AveStream *out)
{
	RtDevice *d = h.ptr;
	if (!d || !out)
		return rt_misuse(d ? d->ctx : NULL, "aveStreamCreate: %s is null",
				 !d ? "the device" : "'out'");
	RtStream *s = calloc(1, sizeof *s);
	s->dev = d;
	AveResult r = d->ops->stream_create(d, &s->s);
	if (r) {
		free(s);
		out->ptr = NULL;
		return r;
	}
	out->ptr = s;
	return AVE_SUCCESS;
}

AveResult
aveStreamWrap(AveDevice h, void *native, AveStream *out)
{
	RtDevice *d = h.ptr;
	if (out)
		out->ptr = NULL;
	if (!d || !out)
		return rt_misuse(d ? d->ctx : NULL, "aveStreamWrap: %s is null",
				 !d ? "the device" : "'out'");
	AveResult r = d->ops->stream_wrap(d, native);
	if (r)
		return r;
	RtStream *s = calloc(1, sizeof *s);
	s->dev = d;
	s->s = native;
	s->wrapped = true;
	out->ptr = s;
	return AVE_SUCCESS;
}

void
aveStreamDestroy(AveStream h)
{
	RtStream *s = h.ptr;
	if (!s)
		return;
	if (!s->wrapped)
		s->dev->ops->stream_destroy(s->dev, s->s);
	free(s);
}

void *
aveStreamGetNative(AveStream h)
{
	RtStream *s = h.ptr;
	return s ? s->s : NULL;
}

AveResult
aveStreamSynchronize(AveStream h)
{
	RtStream *s = h.ptr;
	return s ? s->dev->ops->stream_sync(s->dev, s->s)
		 : rt_misuse(NULL, "aveStreamSynchronize: the stream is null");
}

/* ---- arguments ---- */

AveResult
aveArgsCreate(AveArgs *out)
{
	if (!out)
		return rt_misuse(NULL, "aveArgsCreate: 'out' is null");
	out->ptr = calloc(1, sizeof(RtArgs));
	return AVE_SUCCESS;
}

void
aveArgsDestroy(AveArgs h)
{
	RtArgs *a = h.ptr;
	if (!a)
		return;
	free(a->arg);
	free(a);
}

void
aveArgsClear(AveArgs h)
{
	RtArgs *a = h.ptr;
	if (a)
		a->n = 0;
}

static RtArg *
push(RtArgs *a)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 8;
		a->arg = realloc(a->arg, sizeof *a->arg * (size_t)a->cap);
	}
	RtArg *x = &a->arg[a->n++];
	memset(x, 0, sizeof *x);
	return x;
}

AveResult
aveArgsAddTensor(AveArgs h, AveBuffer b, int rank, const int64_t *sizes, const int64_t *strides)
{
	RtArgs *a = h.ptr;
	RtCtx *c = b.ptr ? ((RtBuffer *)b.ptr)->dev->ctx : NULL;
	if (!a || !b.ptr || (rank && !sizes))
		return rt_misuse(c, "aveArgsAddTensor: %s is null",
				 !a ? "the argument list" : !b.ptr ? "the buffer" : "'sizes'");
	if (rank < 0 || rank > IR_MAX_RANK)
		return rt_misuse(c, "aveArgsAddTensor: rank %d is outside [0, %d]", rank, IR_MAX_RANK);
	/* Validate everything before the argument is added: a refused tensor leaves no entry. */
	int64_t sz[IR_MAX_RANK], sd[IR_MAX_RANK], st = 1;
	for (int i = rank - 1; i >= 0; i--) {
		if (sizes[i] < 0)
			return rt_misuse(c, "aveArgsAddTensor: size %lld in dimension %d is negative",
					 (long long)sizes[i], i);
		sz[i] = sizes[i];
		sd[i] = strides ? strides[i] : st;
		if (!strides && __builtin_mul_overflow(st, sizes[i] ? sizes[i] : 1, &st))
			return rt_misuse(c, "aveArgsAddTensor: the row-major strides of the sizes "
					 "overflow 64 bits");
	}
	RtArg *x = push(a);
	x->kind = AVE_ARG_TENSOR;
	x->buffer = b.ptr;
	x->rank = rank;
	x->elem[0] = 0;
	for (int i = 0; i < rank; i++) {
		x->sizes[i] = sz[i];
		x->strides[i] = sd[i];
	}
	return AVE_SUCCESS;
}

AveResult
aveArgsAddTensorTyped(AveArgs h, AveBuffer b, const char *elem, int rank, const int64_t *sizes,
		      const int64_t *strides)
{
	RtCtx *c = b.ptr ? ((RtBuffer *)b.ptr)->dev->ctx : NULL;
	if (!elem || !*elem || strlen(elem) >= sizeof ((RtArg *)0)->elem)
		return rt_misuse(c, "aveArgsAddTensorTyped: %s", !elem ? "'elem' is null"
								: "'elem' is not an element type");
	RtArgs *a = h.ptr;
	AveResult r = aveArgsAddTensor(h, b, rank, sizes, strides);
	if (r == AVE_SUCCESS)
		snprintf(a->arg[a->n - 1].elem, sizeof a->arg[a->n - 1].elem, "%s", elem);
	return r;
}

AveResult
aveArgsAddInt(AveArgs h, int64_t v)
{
	RtArgs *a = h.ptr;
	if (!a)
		return rt_misuse(NULL, "aveArgsAddInt: the argument list is null");
	RtArg *x = push(a);
	x->kind = AVE_ARG_INT;
	x->i = v;
	return AVE_SUCCESS;
}

AveResult
aveArgsAddFloat(AveArgs h, double v)
{
	RtArgs *a = h.ptr;
	if (!a)
		return rt_misuse(NULL, "aveArgsAddFloat: the argument list is null");
	RtArg *x = push(a);
	x->kind = AVE_ARG_FLOAT;
	x->f = v;
	return AVE_SUCCESS;
}

static int
elem_bytes(const char *t)
{
	if (!t)
		return 0;
	if (!strcmp(t, "i1") || !strcmp(t, "i8") || !strcmp(t, "f8e4m3") || !strcmp(t, "f8e5m2"))
		return 1;
	if (!strcmp(t, "i16") || !strcmp(t, "f16") || !strcmp(t, "bf16"))
		return 2;
	if (!strcmp(t, "i32") || !strcmp(t, "f32"))
		return 4;
	return 8;
}

AveResult
rt_args_check(RtKernel *k, const RtArgs *args, RtDevice *d)
{
	if (args->n != k->nargs) {
		rt_error(d->ctx, "kernel '%s' takes %d arguments, %d given", k->name, k->nargs, args->n);
		return AVE_ERROR_LAUNCH;
	}
	for (int i = 0; i < args->n; i++) {
		const RtArg *a = &args->arg[i];
		const RtArgInfo *info = &k->args[i];
		bool buf = info->kind == AVE_ARG_TENSOR || info->kind == AVE_ARG_POINTER;
		bool given_buf = a->kind == AVE_ARG_TENSOR;
		if (buf != given_buf || (!buf && info->kind != a->kind &&
					 !(info->kind == AVE_ARG_FLOAT && a->kind == AVE_ARG_INT))) {
			rt_error(d->ctx, "kernel '%s': argument %d ('%%%s') has the wrong kind", k->name, i,
				 info->name);
			return AVE_ERROR_LAUNCH;
		}
		/* An integer scalar fits its declared type, signed or unsigned (as a literal in the
		 * source may): 300 is no i8, 2 no i1. */
		if (!buf && info->kind == AVE_ARG_INT && a->kind == AVE_ARG_INT && info->type &&
		    info->type[0] == 'i' && atoi(info->type + 1) > 0 && atoi(info->type + 1) < 64) {
			int bits = atoi(info->type + 1);
			int64_t lo = bits == 1 ? 0 : -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << bits) - 1;
			if (a->i < lo || a->i > hi) {
				rt_error(d->ctx, "kernel '%s': argument %d ('%%%s') is %lld, which does not fit "
					 "type '%s'", k->name, i, info->name, (long long)a->i, info->type);
				return AVE_ERROR_LAUNCH;
			}
		}
		if (!buf)
			continue;
		RtBuffer *b = a->buffer;
		if (b->dev != d) {
			rt_error(d->ctx, "kernel '%s': the buffer of argument '%%%s' belongs to another device",
				 k->name, info->name);
			return AVE_ERROR_LAUNCH;
		}
		if (a->elem[0] && info->type && strcmp(a->elem, info->type)) {
			rt_error(d->ctx, "kernel '%s': argument '%%%s' holds %s elements, given a buffer of %s",
				 k->name, info->name, info->type, a->elem);
			return AVE_ERROR_LAUNCH;
		}
		/* GPU loads and stores of one element need it aligned to its size (vectors check
		 * their own alignment at run time); the interpreter copies bytes. Only memory the
		 * caller wrapped can be misaligned: allocations are aligned. */
		int es = elem_bytes(info->type);
		if (b->wrapped && d->ops != &rt_host_ops && es > 1 && (uintptr_t)b->ptr % (uintptr_t)es) {
			rt_error(d->ctx, "kernel '%s': argument '%%%s' holds %d-byte %s elements but its "
				 "wrapped memory at %p is not aligned to %d bytes", k->name, info->name, es,
				 info->type, b->ptr, es);
			return AVE_ERROR_LAUNCH;
		}
		if (info->kind == AVE_ARG_POINTER)
			continue;
		if (a->rank != info->rank) {
			rt_error(d->ctx, "kernel '%s': argument '%%%s' has rank %d, given %d", k->name,
				 info->name, info->rank, a->rank);
			return AVE_ERROR_LAUNCH;
		}
		int64_t last = 0;
		for (int j = 0; j < a->rank; j++) {
			if (info->dims[j] >= 0 && info->dims[j] != a->sizes[j]) {
				rt_error(d->ctx, "kernel '%s': argument '%%%s' has size %lld in dimension %d, "
					 "given %lld", k->name, info->name, (long long)info->dims[j], j,
					 (long long)a->sizes[j]);
				return AVE_ERROR_LAUNCH;
			}
			if (info->strides[j] >= 0 && info->strides[j] != a->strides[j]) {
				rt_error(d->ctx, "kernel '%s': argument '%%%s' has stride %lld in dimension %d, "
					 "given %lld", k->name, info->name, (long long)info->strides[j], j,
					 (long long)a->strides[j]);
				return AVE_ERROR_LAUNCH;
			}
			int64_t span;
			if (a->sizes[j] &&
			    (__builtin_mul_overflow(a->sizes[j] - 1, a->strides[j], &span) ||
			     __builtin_add_overflow(last, span, &last))) {
				rt_error(d->ctx, "kernel '%s': argument '%%%s' spans more bytes than memory "
					 "holds", k->name, info->name);
				return AVE_ERROR_LAUNCH;
			}
		}
		size_t need;
		if (last < 0 || __builtin_mul_overflow((size_t)last + 1, (size_t)elem_bytes(info->type),
						       &need)) {
			rt_error(d->ctx, "kernel '%s': argument '%%%s' has a negative or too large span",
				 k->name, info->name);
			return AVE_ERROR_LAUNCH;
		}
		bool empty = false;
		for (int j = 0; j < a->rank; j++)
			empty |= a->sizes[j] == 0;
		if (!empty && need > b->size) {
			rt_error(d->ctx, "kernel '%s': argument '%%%s' spans %zu bytes but its buffer has %zu",
				 k->name, info->name, need, b->size);
			return AVE_ERROR_LAUNCH;
		}
	}
	return AVE_SUCCESS;
}

/* ---- launch ---- */

static bool
target_fits(const char *kernel, const RtDevice *d)
{
	const TargetInfo *k = target_find(kernel);
	if (!k)
		return false;
	return d->target ? target_runs_on(k, d->target) : k->vendor == d->vendor;
}

AveResult
rt_kernel_prepare(RtKernel *k, RtDevice *d, RtDevice *stream_dev, const RtArgs *args, int nargs,
		  void **handle)
{
	const char *bin = rt_json_str(k->meta, "binary");
	bool sim_kernel = bin && !strcmp(bin, "llvm"), sim_device = !strcmp(d->ops->kind, "sim-");
	if (sim_kernel != sim_device) {
		rt_error(d->ctx, sim_kernel ? "kernel '%s' was compiled for the simulator ('sim-%s'); "
					      "device '%s' runs binaries of its target"
					    : "kernel '%s' was compiled to a '%s' binary, which simulated "
					      "device '%s' cannot run (compile it for 'sim-<target>')",
			 k->name, k->target, d->name);
		return AVE_ERROR_UNSUPPORTED;
	}
	if (!target_fits(k->target, d)) {
		rt_error(d->ctx, "kernel '%s' was compiled for '%s', which device '%s' (%s) cannot run",
			 k->name, k->target, d->name, d->ops->kind);
		return AVE_ERROR_UNSUPPORTED;
	}
	if (stream_dev != d) {
		rt_error(d->ctx, "kernel '%s': the stream belongs to another device than '%s'", k->name,
			 d->name);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	AveResult r = AVE_SUCCESS;
	for (int i = 0; i < nargs; i++)
		if ((r = rt_args_check(k, &args[i], d)))
			return r;
	pthread_mutex_lock(&k->mu);
	RtLoaded *l = k->loaded;
	while (l && l->dev != d)
		l = l->next;
	if (!l) {
		void *h;
		r = d->ops->load(d, k, &h);
		if (!r) {
			l = calloc(1, sizeof *l);
			l->dev = d;
			l->handle = h;
			l->next = k->loaded;
			k->loaded = l;
			pthread_mutex_lock(&d->mu);
			d->kernels = realloc(d->kernels, sizeof *d->kernels * (size_t)(d->nkernels + 1));
			d->kernels[d->nkernels++] = k;
			pthread_mutex_unlock(&d->mu);
		}
	}
	pthread_mutex_unlock(&k->mu);
	*handle = l ? l->handle : NULL;
	return r;
}

AveResult
aveKernelLaunch(AveKernel kh, AveDevice dh, const uint32_t grid[3], AveArgs ah, AveStream sh)
{
	RtKernel *k = kh.ptr;
	RtDevice *d = dh.ptr;
	RtArgs *args = ah.ptr;
	RtStream *s = sh.ptr;
	if (!k || !d || !grid || !args)
		return rt_misuse(d ? d->ctx : k ? k->ctx : NULL, "aveKernelLaunch: %s is null",
				 !k ? "the kernel" : !d ? "the device" : !grid ? "'grid'"
							: "the argument list");
	void *handle;
	AveResult r = rt_kernel_prepare(k, d, s ? s->dev : d, args, 1, &handle);
	if (r)
		return r;
	return d->ops->launch(d, k, handle, grid, args, s ? s->s : NULL);
}
