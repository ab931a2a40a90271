/* rt_kernel.c — compiled kernels: reading a bundle's metadata (name, target, threads, shared
 * memory, registers, arguments), writing bundles, and the public getters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../regalloc/regalloc.h"
#include "rt.h"

static AveArgKind
arg_kind(const char *s)
{
	if (s && !strcmp(s, "tensor"))
		return AVE_ARG_TENSOR;
	if (s && !strcmp(s, "pointer"))
		return AVE_ARG_POINTER;
	if (s && !strcmp(s, "float"))
		return AVE_ARG_FLOAT;
	return AVE_ARG_INT;
}

static bool
read_dims(const RtJson *a, int64_t *out, int rank)
{
	if (!a)
		return true;
	if (a->kind != RT_JSON_ARRAY || a->n != rank)
		return false;
	for (int i = 0; i < rank; i++)
		out[i] = a->items[i]->kind == RT_JSON_NUMBER ? a->items[i]->i : -1;
	return true;
}

static AveResult kernel_from_bundle(RtCtx *c, uint8_t *data, size_t size, RtKernel **out,
				    bool quiet);

AveResult
rt_kernel_from_bundle(RtCtx *c, uint8_t *data, size_t size, RtKernel **out)
{
	return kernel_from_bundle(c, data, size, out, false);
}

AveResult
rt_kernel_load_quiet(RtCtx *c, uint8_t *data, size_t size, RtKernel **out)
{
	return kernel_from_bundle(c, data, size, out, true);
}

/* rt_error unless quiet (a cache probe reports nothing: the caller recompiles). */
#define FAIL(...)                                  \
	do {                                       \
		if (!quiet)                        \
			rt_error(c, __VA_ARGS__);  \
	} while (0)

/* Whether the binary (a cubin or an AMDGPU code object) records for kernel `name` registers or
 * a stack frame other than the metadata's; `why` says which. A binary that records neither
 * (host: the .ave text) has nothing to disagree with. */
static bool
binary_disagrees(RtKernel *k, const char *name, int64_t regs, int64_t frame, char *why,
                 size_t n)
{
	const uint8_t *b = k->bundle.binary;
	size_t len = k->bundle.binary_len;
	if (!name || len < 4 || memcmp(b, "\177ELF", 4))
		return false;
	int64_t br = ra_cubin_regcount(b, len, name), bf = ra_cubin_frame(b, len, name);
	if (br < 0) {
		RaHsacoKernel hk[64];
		int nk = ra_hsaco_read(b, len, hk, 64);
		for (int i = 0; i < nk; i++)
			if (!strcmp(hk[i].name, name)) {
				br = hk[i].vgpr;
				bf = hk[i].scratch;
			}
	}
	if (br >= 0 && br != regs) {
		snprintf(why, n,
		         "its binary's kernel '%s' uses %lld registers per thread, but its "
		         "metadata says %lld (the binary is not the one compiled)",
		         name, (long long)br, (long long)regs);
		return true;
	}
	if (bf >= 0 && bf != frame) {
		snprintf(why, n,
		         "its binary's kernel '%s' has a %lld-byte stack frame, but its metadata "
		         "says %lld (the binary is not the one compiled)",
		         name, (long long)bf, (long long)frame);
		return true;
	}
	return false;
}

/* Whether the kernel uses more registers than its register plan's largest budget allows (the
 * plan the compile validated; a bundle without one has nothing to hold them to). */
static bool
over_plan(RtJson *rec, int64_t regs, char *why, size_t n)
{
	RtJson *ra = rt_json_get(rec, "regalloc");
	RtJson *groups = ra ? rt_json_get(ra, "groups") : NULL;
	int64_t most = -1;
	for (int i = 0; groups && groups->kind == RT_JSON_ARRAY && i < groups->n; i++) {
		int64_t b = rt_json_int(groups->items[i], "budget", -1);
		if (b > most)
			most = b;
	}
	if (most < 0 || regs <= most)
		return false;
	snprintf(why, n,
	         "its kernel uses %lld registers per thread, over its register plan's largest "
	         "budget, %lld",
	         (long long)regs, (long long)most);
	return true;
}

static AveResult
kernel_from_bundle(RtCtx *c, uint8_t *data, size_t size, RtKernel **out, bool quiet)
{
	RtKernel *k = calloc(1, sizeof *k);
	const char *err = NULL;
	k->ctx = c;
	rt_ctx_retain(c);
	ir_arena_init(&k->arena, NULL);
	pthread_mutex_init(&k->mu, NULL);
	if (!rt_bundle_decode(data, size, &k->bundle, &err)) {
		FAIL("cannot load bundle: %s", err);
		free(data);
		rt_kernel_free(k);
		return AVE_ERROR_IO;
	}
	k->meta = rt_json_parse(&k->arena, k->bundle.meta, k->bundle.meta_len, &err);
	if (!k->meta || k->meta->kind != RT_JSON_OBJECT) {
		FAIL("bundle metadata is not a JSON object: %s", err ? err : "wrong type");
		rt_kernel_free(k);
		return AVE_ERROR_IO;
	}
	k->meta_text = ir_arena_strndup(&k->arena, k->bundle.meta, k->bundle.meta_len);
	/* The backends' schema (docs/targets.md): {"format": "ave-kernels-1", "target", "kernels":
	 * [one kernel record]}. */
	const char *format = rt_json_str(k->meta, "format");
	RtJson *kernels = rt_json_get(k->meta, "kernels");
	if (!format || strcmp(format, "ave-kernels-1") || !kernels || kernels->kind != RT_JSON_ARRAY ||
	    kernels->n != 1 || kernels->items[0]->kind != RT_JSON_OBJECT) {
		FAIL("bundle metadata is not an 'ave-kernels-1' record of one kernel");
		rt_kernel_free(k);
		return AVE_ERROR_IO;
	}
	RtJson *rec = kernels->items[0];
	k->rec = rec;
	k->target = rt_json_str(k->meta, "target");
	k->name = rt_json_str(rec, "name");
	/* Numbers from the metadata, held to the ranges they can have (a hand-made bundle may say
	 * anything). */
	int64_t threads = rt_json_int(rec, "threads", 0), smem = rt_json_int(rec, "shared_bytes", 0);
	int64_t regs = rt_json_int(rec, "registers", 0), pers = rt_json_int(rec, "persistent", 0);
	int64_t sps = rt_json_int(rec, "spill_stores", 0), spl = rt_json_int(rec, "spill_loads", 0);
	if (threads < 1 || threads > 1024 || smem < 0 || smem > ((int64_t)1 << 30) || regs < 0 ||
	    regs > 65536 || pers < 0 || pers > ((int64_t)1 << 31) || sps < 0 || spl < 0 ||
	    sps > ((int64_t)1 << 40) || spl > ((int64_t)1 << 40)) {
		FAIL("bundle metadata has a count out of range (threads, shared_bytes, registers, "
		     "spills or persistent)");
		rt_kernel_free(k);
		return AVE_ERROR_IO;
	}
	/* The binary's own account of the kernel's registers and stack frame must be the
	 * metadata's, which the register plan was validated against: a binary swapped or edited
	 * after the compile (a bundle is checksummed, not signed) would launch with resources no
	 * plan holds. */
	char why[256];
	if (binary_disagrees(k, rt_json_str(rec, "name"), regs, rt_json_int(rec, "stack_frame", 0),
	                     why, sizeof why) ||
	    over_plan(rec, regs, why, sizeof why)) {
		FAIL("bundle: %s", why);
		rt_kernel_free(k);
		return AVE_ERROR_IO;
	}
	k->threads = (int)threads;
	k->shared_bytes = (uint64_t)smem;
	k->registers = (int)regs;
	k->spill_bytes = (uint64_t)(sps + spl);
	k->persistent = pers;
	RtJson *args = rt_json_get(rec, "args");
	if (!k->name || !k->target || k->threads <= 0 || !args || args->kind != RT_JSON_ARRAY) {
		FAIL("bundle metadata lacks the kernel's name, target, threads or args");
		rt_kernel_free(k);
		return AVE_ERROR_IO;
	}
	k->nargs = args->n;
	k->args = ir_arena_alloc(&k->arena, sizeof *k->args * (size_t)(args->n + 1));
	for (int i = 0; i < args->n; i++) {
		RtJson *a = args->items[i];
		RtArgInfo *info = &k->args[i];
		info->name = rt_json_str(a, "name");
		info->kind = arg_kind(rt_json_str(a, "kind"));
		info->type = rt_json_str(a, "type");
		info->rank = (int)rt_json_int(a, "rank", 0);
		if (!info->name || info->rank < 0 || info->rank > IR_MAX_RANK ||
		    !read_dims(rt_json_get(a, "dims"), info->dims, info->rank) ||
		    !read_dims(rt_json_get(a, "strides"), info->strides, info->rank)) {
			FAIL("bundle metadata: malformed argument %d", i);
			rt_kernel_free(k);
			return AVE_ERROR_IO;
		}
	}
	*out = k;
	return AVE_SUCCESS;
}

void
rt_kernel_free(RtKernel *k)
{
	if (!k)
		return;
	for (RtLoaded *l = k->loaded, *next; l; l = next) {
		next = l->next;
		RtDevice *d = l->dev;
		pthread_mutex_lock(&d->mu);
		for (int i = 0; i < d->nkernels; i++)
			if (d->kernels[i] == k) {
				d->kernels[i] = d->kernels[--d->nkernels];
				break;
			}
		pthread_mutex_unlock(&d->mu);
		d->ops->unload(d, l->handle);
		free(l);
	}
	rt_bundle_free(&k->bundle);
	ir_arena_free(&k->arena);
	pthread_mutex_destroy(&k->mu);
	rt_ctx_release(k->ctx);
	free(k);
}

static uint8_t *
read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *p = malloc(cap);
	size_t got;
	while ((got = fread(p + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			p = realloc(p, cap *= 2);
	}
	fclose(f);
	*size = n;
	return p;
}

AveResult
aveKernelLoadBundle(AveContext c, const char *path, AveKernel *out)
{
	if (!c.ptr || !path || !out)
		return rt_misuse(c.ptr, "aveKernelLoadBundle: %s is null",
				 !c.ptr ? "the context" : !path ? "'path'" : "'out'");
	size_t size;
	uint8_t *data = read_file(path, &size);
	if (!data) {
		rt_error(c.ptr, "cannot read bundle '%s'", path);
		return AVE_ERROR_IO;
	}
	RtKernel *k;
	AveResult r = rt_kernel_from_bundle(c.ptr, data, size, &k);
	out->ptr = r ? NULL : k;
	return r;
}

AveResult
aveKernelLoadBundleFromMemory(AveContext c, const void *data, size_t size, AveKernel *out)
{
	if (!c.ptr || !data || !out)
		return rt_misuse(c.ptr, "aveKernelLoadBundleFromMemory: %s is null",
				 !c.ptr ? "the context" : !data ? "'data'" : "'out'");
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	RtKernel *k;
	AveResult r = rt_kernel_from_bundle(c.ptr, copy, size, &k);
	out->ptr = r ? NULL : k;
	return r;
}

AveResult
aveKernelWriteBundle(AveKernel h, const char *path)
{
	RtKernel *k = h.ptr;
	if (!k || !path)
		return rt_misuse(k ? k->ctx : NULL, "aveKernelWriteBundle: %s is null",
				 !k ? "the kernel" : "'path'");
	FILE *f = fopen(path, "wb");
	if (!f) {
		rt_error(k->ctx, "cannot write bundle '%s'", path);
		return AVE_ERROR_IO;
	}
	bool ok = fwrite(k->bundle.data, 1, k->bundle.size, f) == k->bundle.size;
	ok = fclose(f) == 0 && ok;
	if (!ok) {
		rt_error(k->ctx, "cannot write bundle '%s'", path);
		return AVE_ERROR_IO;
	}
	return AVE_SUCCESS;
}

void
aveKernelDestroy(AveKernel h)
{
	rt_kernel_free(h.ptr);
}

#define K(h) ((RtKernel *)(h).ptr)

const char *
aveKernelGetName(AveKernel h)
{
	return K(h) ? K(h)->name : NULL;
}

const char *
aveKernelGetTarget(AveKernel h)
{
	return K(h) ? K(h)->target : NULL;
}

int
aveKernelGetThreads(AveKernel h)
{
	return K(h) ? K(h)->threads : 0;
}

uint64_t
aveKernelGetSharedMemoryBytes(AveKernel h)
{
	return K(h) ? K(h)->shared_bytes : 0;
}

int
aveKernelGetRegisters(AveKernel h)
{
	return K(h) ? K(h)->registers : 0;
}

uint64_t
aveKernelGetSpillBytes(AveKernel h)
{
	return K(h) ? K(h)->spill_bytes : 0;
}

int
aveKernelGetNumArgs(AveKernel h)
{
	return K(h) ? K(h)->nargs : 0;
}

const char *
aveKernelGetArgName(AveKernel h, int i)
{
	return K(h) && i >= 0 && i < K(h)->nargs ? K(h)->args[i].name : NULL;
}

AveArgKind
aveKernelGetArgKind(AveKernel h, int i)
{
	return K(h) && i >= 0 && i < K(h)->nargs ? K(h)->args[i].kind : AVE_ARG_INT;
}

const char *
aveKernelGetArgType(AveKernel h, int i)
{
	return K(h) && i >= 0 && i < K(h)->nargs ? K(h)->args[i].type : NULL;
}

int
aveKernelGetArgRank(AveKernel h, int i)
{
	return K(h) && i >= 0 && i < K(h)->nargs ? K(h)->args[i].rank : 0;
}

int64_t
aveKernelGetArgDim(AveKernel h, int i, int d)
{
	if (!K(h) || i < 0 || i >= K(h)->nargs || d < 0 || d >= K(h)->args[i].rank)
		return -2;
	return K(h)->args[i].dims[d];
}

int64_t
aveKernelGetArgStride(AveKernel h, int i, int d)
{
	if (!K(h) || i < 0 || i >= K(h)->nargs || d < 0 || d >= K(h)->args[i].rank)
		return -2;
	return K(h)->args[i].strides[d];
}

const char *
aveKernelGetMetadataJson(AveKernel h)
{
	return K(h) ? K(h)->meta_text : NULL;
}

const void *
aveKernelGetBinary(AveKernel h, size_t *size)
{
	RtKernel *k = h.ptr;
	if (size)
		*size = k ? k->bundle.binary_len : 0;
	return k ? k->bundle.binary : NULL;
}
