/* rt_params.c — builds a launch's parameter list in the kernel's ABI order. The metadata's
 * "params" array says what each parameter is: {"kind":"ptr","arg":i}, {"kind":"size","arg":i,
 * "dim":d}, {"kind":"stride","arg":i,"dim":d}, {"kind":"int"|"float","arg":i,"type":T},
 * {"kind":"tensor_map","arg":i,"map":{...}}. Without it the SPEC §4 ABI is assumed: a tensor
 * is its base pointer, then its `?` sizes, then its `?` strides (i64 each); scalars follow. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { SLOT = 128 };

static int
type_bytes(const char *t)
{
	if (!t)
		return 8;
	if (!strcmp(t, "i1") || !strcmp(t, "i8"))
		return 1;
	if (!strcmp(t, "i16") || !strcmp(t, "f16") || !strcmp(t, "bf16"))
		return 2;
	if (!strcmp(t, "i32") || !strcmp(t, "f32"))
		return 4;
	return 8;
}

static void
put_int(uint8_t *slot, const char *type, int64_t v)
{
	switch (type_bytes(type)) {
	case 1: {
		int8_t x = (int8_t)v;
		memcpy(slot, &x, 1);
		break;
	}
	case 2: {
		int16_t x = (int16_t)v;
		memcpy(slot, &x, 2);
		break;
	}
	case 4: {
		int32_t x = (int32_t)v;
		memcpy(slot, &x, 4);
		break;
	}
	default:
		memcpy(slot, &v, 8);
	}
}

static void
put_float(uint8_t *slot, const char *type, double v)
{
	if (type && !strcmp(type, "f32")) {
		float x = (float)v;
		memcpy(slot, &x, 4);
	} else {
		memcpy(slot, &v, 8);
	}
}

void
rt_params_free(RtLaunchParams *lp)
{
	free(lp->ptrs);
	free(lp->storage);
	memset(lp, 0, sizeof *lp);
}

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

AveResult
rt_build_params(RtKernel *k, RtDevice *d, const RtArgs *args, RtLaunchParams *lp,
		RtMapEncoder encode)
{
	memset(lp, 0, sizeof *lp);
	int cap = 0;
	RtJson *params = rt_json_get(k->meta, "params");
	if (params && params->kind == RT_JSON_ARRAY) {
		for (int i = 0; i < params->n; i++) {
			RtJson *p = params->items[i];
			const char *kind = rt_json_str(p, "kind");
			int ai = (int)rt_json_int(p, "arg", -1), dim = (int)rt_json_int(p, "dim", 0);
			if (!kind || ai < 0 || ai >= args->n || dim < 0 || dim >= IR_MAX_RANK) {
				rt_error(d->ctx, "kernel '%s': malformed parameter %d in its metadata", k->name, i);
				rt_params_free(lp);
				return AVE_ERROR_LAUNCH;
			}
			const RtArg *a = &args->arg[ai];
			uint8_t *slot = next_slot(lp, &cap);
			if (!strcmp(kind, "ptr")) {
				RtBuffer *b = a->buffer;
				memcpy(slot, &b->ptr, sizeof b->ptr);
			} else if (!strcmp(kind, "size")) {
				memcpy(slot, &a->sizes[dim], 8);
			} else if (!strcmp(kind, "stride")) {
				memcpy(slot, &a->strides[dim], 8);
			} else if (!strcmp(kind, "int")) {
				put_int(slot, rt_json_str(p, "type"), a->i);
			} else if (!strcmp(kind, "float")) {
				put_float(slot, rt_json_str(p, "type"), a->f);
			} else if (!strcmp(kind, "tensor_map")) {
				AveResult r;
				if (!encode) {
					rt_error(d->ctx, "kernel '%s' needs tensor maps, which device '%s' cannot "
						 "build", k->name, d->name);
					rt_params_free(lp);
					return AVE_ERROR_UNSUPPORTED;
				}
				if ((r = encode(d, rt_json_get(p, "map"), a, slot))) {
					rt_params_free(lp);
					return r;
				}
			} else {
				rt_error(d->ctx, "kernel '%s': unknown parameter kind '%s'", k->name, kind);
				rt_params_free(lp);
				return AVE_ERROR_LAUNCH;
			}
		}
	} else {
		for (int ai = 0; ai < args->n; ai++) {
			const RtArg *a = &args->arg[ai];
			const RtArgInfo *info = &k->args[ai];
			if (a->kind == AVE_ARG_TENSOR || a->kind == AVE_ARG_POINTER) {
				RtBuffer *b = a->buffer;
				memcpy(next_slot(lp, &cap), &b->ptr, sizeof b->ptr);
				for (int i = 0; a->kind == AVE_ARG_TENSOR && i < info->rank; i++)
					if (info->dims[i] < 0)
						memcpy(next_slot(lp, &cap), &a->sizes[i], 8);
				for (int i = 0; a->kind == AVE_ARG_TENSOR && i < info->rank; i++)
					if (info->strides[i] < 0)
						memcpy(next_slot(lp, &cap), &a->strides[i], 8);
			} else if (a->kind == AVE_ARG_INT) {
				put_int(next_slot(lp, &cap), info->type, a->i);
			} else {
				put_float(next_slot(lp, &cap), info->type, a->f);
			}
		}
	}
	lp->ptrs = malloc(sizeof(void *) * (size_t)(lp->n ? lp->n : 1));
	for (int i = 0; i < lp->n; i++)
		lp->ptrs[i] = lp->storage + (size_t)i * SLOT;
	return AVE_SUCCESS;
}
