/* jit_compile.c — aveKernelCompile (libave only): options, the compile cache key, and the
 * compile itself — the host target carries the module's canonical `.ave` text and a metadata
 * record; GPU targets go through their backend. Results are cached by content hash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "jit.h"
#include "rt.h"

typedef struct JitOptions {
	char target[32];
	int opt;
	char *pipeline;
} JitOptions;

AveResult
aveCompileOptionsCreate(AveCompileOptions *out)
{
	if (!out)
		return AVE_ERROR_INVALID_ARGUMENT;
	JitOptions *o = calloc(1, sizeof *o);
	strcpy(o->target, "host");
	o->opt = 2;
	out->ptr = o;
	return AVE_SUCCESS;
}

void
aveCompileOptionsDestroy(AveCompileOptions h)
{
	JitOptions *o = h.ptr;
	if (!o)
		return;
	free(o->pipeline);
	free(o);
}

static bool
known_target(const char *t)
{
	static const char *const names[] = {"host", "sm_80", "sm_90a", "gfx942", "gfx90a"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(t, names[i]))
			return true;
	return false;
}

AveResult
aveCompileOptionsSetTarget(AveCompileOptions h, const char *target)
{
	JitOptions *o = h.ptr;
	if (!o || !target || !known_target(target))
		return AVE_ERROR_INVALID_ARGUMENT;
	snprintf(o->target, sizeof o->target, "%s", target);
	return AVE_SUCCESS;
}

AveResult
aveCompileOptionsSetOptLevel(AveCompileOptions h, int level)
{
	JitOptions *o = h.ptr;
	if (!o || level < 0 || level > 3)
		return AVE_ERROR_INVALID_ARGUMENT;
	o->opt = level;
	return AVE_SUCCESS;
}

AveResult
aveCompileOptionsSetPipeline(AveCompileOptions h, const char *passes)
{
	JitOptions *o = h.ptr;
	if (!o)
		return AVE_ERROR_INVALID_ARGUMENT;
	free(o->pipeline);
	o->pipeline = passes ? strdup(passes) : NULL;
	return AVE_SUCCESS;
}

/* ---- metadata for the host target ---- */

static void
json_type(FILE *f, IrCtx *c, const IrType *t)
{
	fprintf(f, "\"%s\"", ir_type_str(c, t));
}

/* The kernel's signature as the runtime reads it (docs/jit.md, "metadata"). */
char *
jit_host_metadata(IrCtx *c, IrOp *kernel, const char *target)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	IrAttr *th = ir_op_attr(kernel, c->kw.threads);
	fprintf(f, "{\"kernel\":\"%s\",\"target\":\"%s\",\"threads\":%lld,\"shared_bytes\":0,"
		   "\"registers\":0,\"spill_bytes\":0,\"args\":[",
		kernel->item[0].s, target, th ? (long long)th->i : 0LL);
	IrBlock *b = kernel->reg[0].block;
	for (int i = 0; i < b->narg; i++) {
		IrValue *a = b->arg[i];
		IrType *t = a->type;
		fprintf(f, "%s{\"name\":\"%s\",", i ? "," : "", a->name ? a->name : "");
		if (t->kind == IR_TY_TENSOR) {
			fputs("\"kind\":\"tensor\",\"type\":", f);
			json_type(f, c, t->elem);
			fprintf(f, ",\"rank\":%d,\"dims\":[", t->rank);
			for (int d = 0; d < t->rank; d++)
				fprintf(f, "%s%lld", d ? "," : "", t->dims[d] == IR_DYN ? -1LL : (long long)t->dims[d]);
			fputs("],\"strides\":[", f);
			for (int d = 0; d < t->rank; d++) {
				long long s = -1;
				if (t->strides)
					s = t->strides[d] == IR_DYN ? -1 : t->strides[d];
				else if (d == t->rank - 1)
					s = 1;
				else {
					/* Row-major default: static when every inner dimension is. */
					long long p = 1;
					for (int e = d + 1; e < t->rank && p >= 0; e++)
						p = t->dims[e] == IR_DYN ? -1 : p * t->dims[e];
					s = p;
				}
				fprintf(f, "%s%lld", d ? "," : "", s);
			}
			fputs("]}", f);
		} else if (t->kind == IR_TY_PTR) {
			fputs("\"kind\":\"pointer\",\"type\":", f);
			json_type(f, c, t->elem);
			fputs(",\"rank\":0}", f);
		} else {
			fprintf(f, "\"kind\":\"%s\",\"type\":", ir_type_is_float(t) ? "float" : "int");
			json_type(f, c, t);
			fputs(",\"rank\":0}", f);
		}
	}
	fputs("]}", f);
	fclose(f);
	return buf;
}
