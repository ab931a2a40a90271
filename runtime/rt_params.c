/* rt_params.c — builds a launch's parameter list in the kernel's ABI order, as the metadata's
 * "params" list describes it (docs/targets.md): "ptr" (a tensor's or pointer's buffer), "size"
 * and "stride" (of dimension "dim", int64), "scalar" (of IR type "type"), "grid" (a persistent
 * kernel's logical grid, int32) and "target" (a descriptor the device builds, e.g. a TMA tensor
 * map). A record without "params" (host bundles) needs none. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "rt.h"

enum { SLOT = 128 };

static uint8_t *
next_slot(RtLaunchParams *lp, int *cap)
{
	if (lp->n == *cap) {
		/* Storage moves when it grows; pointers are filled in at the end. */
		*cap = *cap ? *cap * 2 : 16;
		uint8_t *s = aligned_alloc(64, (size_t)*cap * SLOT);
		memset(s, 0, (size_t)*cap * SLOT);
		if (lp->storage)
			memcpy(s, lp->storage, (size_t)lp->n * SLOT);
		free(lp->storage);
		lp->storage = s;
	}
	return lp->storage + (size_t)lp->n++ * SLOT;
}

void
rt_params_free(RtLaunchParams *lp)
{
	free(lp->ptrs);
	free(lp->storage);
	memset(lp, 0, sizeof *lp);
}

/* Stores scalar argument `a` as IR type `type` ("i32", "index", "f16", ...). */
static bool
put_scalar(uint8_t *slot, const char *type, const RtArg *a)
{
	if (!type)
		return false;
	int64_t i = a->kind == AVE_ARG_FLOAT ? (int64_t)a->f : a->i;
	double f = a->kind == AVE_ARG_FLOAT ? a->f : (double)a->i;
	if (!strcmp(type, "index") || !strcmp(type, "i64")) {
		memcpy(slot, &i, 8);
	} else if (!strcmp(type, "i32")) {
		int32_t x = (int32_t)i;
		memcpy(slot, &x, 4);
	} else if (!strcmp(type, "i16")) {
		int16_t x = (int16_t)i;
		memcpy(slot, &x, 2);
	} else if (!strcmp(type, "i8") || !strcmp(type, "i1")) {
		int8_t x = (int8_t)(!strcmp(type, "i1") ? i != 0 : i);
		memcpy(slot, &x, 1);
	} else if (!strcmp(type, "f32")) {
		float x = (float)f;
		memcpy(slot, &x, 4);
	} else if (!strcmp(type, "f64")) {
		memcpy(slot, &f, 8);
	} else if (!strcmp(type, "f16") || !strcmp(type, "bf16")) {
		uint16_t x = (uint16_t)interp_f64_to_bits(!strcmp(type, "f16") ? IR_F16 : IR_BF16, f);
		memcpy(slot, &x, 2);
	} else {
		return false;
	}
	return true;
}

/* A value of the descriptor's small expression language: {"value": n}, {"param": i} or
 * {"times": t, "factors": [...]} (the product). */
static bool
eval(const RtJson *e, const int64_t *vals, int nvals, int64_t *out)
{
	if (!e || e->kind != RT_JSON_OBJECT)
		return false;
	RtJson *v = rt_json_get(e, "value"), *p = rt_json_get(e, "param"), *f = rt_json_get(e, "factors");
	if (v && v->kind == RT_JSON_NUMBER) {
		*out = v->i;
		return true;
	}
	if (p && p->kind == RT_JSON_NUMBER) {
		if (p->i < 0 || p->i >= nvals)
			return false;
		*out = vals[p->i];
		return true;
	}
	if (f && f->kind == RT_JSON_ARRAY) {
		int64_t x = rt_json_int(e, "times", 1);
		for (int i = 0; i < f->n; i++) {
			int64_t y;
			if (!eval(f->items[i], vals, nvals, &y))
				return false;
			x *= y;
		}
		*out = x;
		return true;
	}
	return false;
}

/* Reads a TMA tensor map description with the launch's values, and checks what the hardware
 * needs of the tensor it copies from (CUDA's cuTensorMapEncodeTiled, PTX ISA tensor copies): a
 * 16-byte-aligned base and byte strides that are multiples of 16, so that the error names the
 * argument and says why, on every device. */
static AveResult
tensor_map(RtKernel *k, RtDevice *d, const RtJson *desc, const int64_t *vals, int nvals,
	   RtTensorMap *m)
{
	memset(m, 0, sizeof *m);
	const char *kind = rt_json_str(desc, "kind");
	if (!kind || strcmp(kind, "cuda_tensor_map")) {
		rt_error(d->ctx, "kernel '%s': unknown kernel parameter description '%s'", k->name,
			 kind ? kind : "?");
		return AVE_ERROR_LAUNCH;
	}
	m->rank = (int)rt_json_int(desc, "rank", 0);
	RtJson *dims = rt_json_get(desc, "dims"), *box = rt_json_get(desc, "box"),
	       *es = rt_json_get(desc, "element_strides");
	int bp = (int)rt_json_int(desc, "base_param", -1);
	bool ok = m->rank >= 1 && m->rank <= 5 && dims && dims->kind == RT_JSON_ARRAY &&
		  dims->n == m->rank && box && box->kind == RT_JSON_ARRAY && box->n == m->rank &&
		  bp >= 0 && bp < nvals;
	for (int i = 0; ok && i < m->rank; i++) {
		int64_t size, stride;
		ok = eval(rt_json_get(dims->items[i], "size"), vals, nvals, &size) &&
		     eval(rt_json_get(dims->items[i], "stride_bytes"), vals, nvals, &stride);
		m->dims[i] = (uint64_t)size;
		if (i)
			m->strides[i - 1] = (uint64_t)stride;
		m->box[i] = (uint32_t)box->items[i]->i;
		m->elem_strides[i] = es && es->kind == RT_JSON_ARRAY && es->n == m->rank
					     ? (uint32_t)es->items[i]->i
					     : 1;
	}
	if (!ok) {
		rt_error(d->ctx, "kernel '%s': malformed tensor map description in its metadata",
			 k->name);
		return AVE_ERROR_LAUNCH;
	}
	m->base = (uint64_t)vals[bp];
	m->dtype = (int)rt_json_int(desc, "dtype", -1);
	m->elem_bytes = (int)rt_json_int(desc, "elem_bytes", 0);
	m->interleave = (int)rt_json_int(desc, "interleave", 0);
	m->swizzle = (int)rt_json_int(desc, "swizzle", 0);
	m->l2_promotion = (int)rt_json_int(desc, "l2_promotion", 2);
	m->oob_fill = (int)rt_json_int(desc, "oob_fill", 0);
	RtJson *params = rt_json_get(k->rec, "params");
	const char *arg = params && params->kind == RT_JSON_ARRAY && bp < params->n
				  ? rt_json_str(params->items[bp], "arg")
				  : NULL;
	if (!arg)
		arg = "?";
	if (m->base % 16) {
		rt_error(d->ctx, "kernel '%s': tensor argument '%%%s' starts at 0x%llx; its tiles are "
				 "copied with TMA, which needs a 16-byte-aligned base",
			 k->name, arg, (unsigned long long)m->base);
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	for (int i = 1; i < m->rank; i++)
		if (m->strides[i - 1] % 16) {
			rt_error(d->ctx, "kernel '%s': tensor argument '%%%s' has a stride of %lld bytes in "
					 "dimension %lld; its tiles are copied with TMA, which needs strides "
					 "that are multiples of 16 bytes (pad the rows, or compile for a "
					 "target without TMA such as sm_80)",
				 k->name, arg, (long long)m->strides[i - 1],
				 (long long)rt_json_int(dims->items[i], "tensor_dim", i));
			return AVE_ERROR_INVALID_ARGUMENT;
		}
	return AVE_SUCCESS;
}

AveResult
rt_build_params(RtKernel *k, RtDevice *d, const RtArgs *args, const uint32_t grid[3],
		RtLaunchParams *lp, RtMapEncoder encode, const RtWorldRank *w)
{
	memset(lp, 0, sizeof *lp);
	/* A persistent kernel runs on min(N, tiles) CTAs along x (a kernel that walks its tiles
	 * itself reads that count as ave.num_ctas, as the interpreter gives it). */
	uint64_t tiles = (uint64_t)grid[0] * grid[1] * grid[2];
	for (int i = 0; i < 3; i++)
		lp->grid[i] = k->persistent > 0
		                  ? (i ? 1
		                       : (uint32_t)((uint64_t)k->persistent < tiles ? (uint64_t)k->persistent
		                                                                   : (tiles ? tiles : 1)))
		                  : grid[i];
	int cap = 0;
	RtJson *params = rt_json_get(k->rec, "params");
	int n = params && params->kind == RT_JSON_ARRAY ? params->n : 0;
	int64_t *vals = calloc((size_t)(n ? n : 1), sizeof *vals);
	AveResult r = AVE_SUCCESS;
	for (int i = 0; i < n && !r; i++) {
		RtJson *p = params->items[i];
		const char *kind = rt_json_str(p, "kind");
		int ai = (int)rt_json_int(p, "arg_index", -1), dim = (int)rt_json_int(p, "dim", 0);
		uint8_t *slot = next_slot(lp, &cap);
		const RtArg *a = ai >= 0 && ai < args->n ? &args->arg[ai] : NULL;
		bool needs_arg = kind && strcmp(kind, "target") && strcmp(kind, "grid");
		bool world_param = kind && (!strcmp(kind, "symm") || !strcmp(kind, "peers") ||
					    !strcmp(kind, "rank") || !strcmp(kind, "world") ||
					    !strcmp(kind, "epoch"));
		const RtWorldSymm *ws = NULL;
		if (world_param && w && (!strcmp(kind, "symm") || !strcmp(kind, "peers")) &&
		    !(ws = rt_world_symm_find(w, rt_json_str(p, "symbol")))) {
			rt_error(d->ctx, "kernel '%s': parameter %d names symmetric buffer '@%s', which "
				 "its metadata does not list", k->name, i,
				 rt_json_str(p, "symbol") ? rt_json_str(p, "symbol") : "?");
			r = AVE_ERROR_LAUNCH;
		} else if (world_param && !w) {
			/* SPEC 5.9 kernels run on a world of ranks with a symmetric heap. */
			rt_error(d->ctx, "kernel '%s' communicates (parameter %d is a '%s'): launch it on "
				 "a world of ranks (aveWorldLaunch; 'ave run --world=N')",
				 k->name, i, kind);
			r = AVE_ERROR_UNSUPPORTED;
		} else if (world_param) {
			if (!strcmp(kind, "symm") || !strcmp(kind, "peers")) {
				vals[i] = (int64_t)(uintptr_t)(!strcmp(kind, "symm")
							       ? ws->rank[w->rank]->ptr
							       : ws->peers);
				memcpy(slot, &vals[i], 8);
			} else if (!strcmp(kind, "epoch")) {
				vals[i] = w->epoch;
				memcpy(slot, &vals[i], 8);
			} else {
				int32_t v = !strcmp(kind, "rank") ? w->rank : w->size;
				vals[i] = v;
				memcpy(slot, &v, 4);
			}
		} else if (!kind || (needs_arg && !a) || dim < 0 || dim >= IR_MAX_RANK) {
			rt_error(d->ctx, "kernel '%s': malformed parameter %d in its metadata", k->name, i);
			r = AVE_ERROR_LAUNCH;
		} else if (!strcmp(kind, "ptr")) {
			RtBuffer *b = a->buffer;
			int64_t v = (int64_t)(uintptr_t)b->ptr;
			memcpy(slot, &v, 8);
			vals[i] = v;
		} else if (!strcmp(kind, "size") || !strcmp(kind, "stride")) {
			vals[i] = !strcmp(kind, "size") ? a->sizes[dim] : a->strides[dim];
			memcpy(slot, &vals[i], 8);
		} else if (!strcmp(kind, "scalar")) {
			if (!put_scalar(slot, rt_json_str(p, "type"), a)) {
				rt_error(d->ctx, "kernel '%s': parameter %d has an unknown scalar type", k->name,
					 i);
				r = AVE_ERROR_LAUNCH;
			}
			vals[i] = a->i;
		} else if (!strcmp(kind, "grid")) {
			int32_t g = (int32_t)grid[dim < 3 ? dim : 0];
			memcpy(slot, &g, 4);
			vals[i] = g;
		} else if (!strcmp(kind, "target")) {
			RtJson *desc = rt_json_get(p, "desc");
			if (!encode || rt_json_int(p, "bytes", 0) > SLOT) {
				rt_error(d->ctx, "kernel '%s' needs a '%s' parameter, which device '%s' cannot "
					 "build", k->name, desc ? rt_json_str(desc, "kind") : "target", d->name);
				r = AVE_ERROR_UNSUPPORTED;
			} else {
				RtTensorMap m;
				if (!(r = tensor_map(k, d, desc, vals, i, &m)))
					r = encode(d, &m, slot);
			}
		} else {
			rt_error(d->ctx, "kernel '%s': parameter %d of kind '%s' is not supported by the "
				 "runtime", k->name, i, kind);
			r = AVE_ERROR_UNSUPPORTED;
		}
	}
	free(vals);
	if (r) {
		rt_params_free(lp);
		return r;
	}
	lp->ptrs = malloc(sizeof(void *) * (size_t)(lp->n ? lp->n : 1));
	for (int i = 0; i < lp->n; i++)
		lp->ptrs[i] = lp->storage + (size_t)i * SLOT;
	return AVE_SUCCESS;
}
