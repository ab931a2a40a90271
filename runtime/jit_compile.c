/* jit_compile.c — aveKernelCompile (libave only): options, the compile cache key, and the
 * compile itself — the host target carries the module's canonical `.ave` text and a metadata
 * record; GPU targets go through their backend. Results are cached by content hash. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <llvm-c/Core.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "jit.h"
#include "rt.h"

typedef struct JitOptions {
	const TargetInfo *target;
	int opt;
	char *pipeline;
	int debug; /* aveCompileOptionsSetDebugInfo */
	bool sim;  /* target "sim-<name>": the target's LLVM IR for a simulated device */
} JitOptions;

AveResult
aveCompileOptionsCreate(AveCompileOptions *out)
{
	if (!out)
		return rt_misuse(NULL, "aveCompileOptionsCreate: 'out' is null");
	JitOptions *o = calloc(1, sizeof *o);
	o->target = &target_table[TARGET_HOST];
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

AveResult
aveCompileOptionsSetTarget(AveCompileOptions h, const char *target)
{
	JitOptions *o = h.ptr;
	if (!o || !target)
		return rt_misuse(NULL, "aveCompileOptionsSetTarget: %s is null",
				 !o ? "the options" : "'target'");
	/* "sim-<target>": compiled for <target>, kept as LLVM IR for a simulated device. */
	bool sim = !strncmp(target, "sim-", 4);
	const TargetInfo *t = target_find(sim ? target + 4 : target);
	if (t && sim && t->vendor == TARGET_VENDOR_HOST)
		t = NULL;
	if (!t) {
		char names[256];
		return rt_misuse(NULL, "aveCompileOptionsSetTarget: unknown target '%s' (expected %s; "
				       "or a simulated device's: %s)",
				 target, target_names(names, sizeof names, TARGET_ALL, " or "),
				 sim_device_kinds());
	}
	o->target = t;
	o->sim = sim;
	return AVE_SUCCESS;
}

AveResult
aveCompileOptionsSetOptLevel(AveCompileOptions h, int level)
{
	JitOptions *o = h.ptr;
	if (!o)
		return rt_misuse(NULL, "aveCompileOptionsSetOptLevel: the options are null");
	if (level < 0 || level > 3)
		return rt_misuse(NULL, "aveCompileOptionsSetOptLevel: level %d is outside 0..3", level);
	o->opt = level;
	return AVE_SUCCESS;
}

AveResult
aveCompileOptionsSetPipeline(AveCompileOptions h, const char *passes)
{
	JitOptions *o = h.ptr;
	if (!o)
		return rt_misuse(NULL, "aveCompileOptionsSetPipeline: the options are null");
	free(o->pipeline);
	o->pipeline = passes ? strdup(passes) : NULL;
	return AVE_SUCCESS;
}

AveResult
aveCompileOptionsSetDebugInfo(AveCompileOptions h, int level)
{
	JitOptions *o = h.ptr;
	if (!o)
		return rt_misuse(NULL, "aveCompileOptionsSetDebugInfo: the options are null");
	if (level < 0 || level > 2)
		return rt_misuse(NULL, "aveCompileOptionsSetDebugInfo: level %d is outside 0..2 (0 none, "
				       "1 line tables, 2 full)", level);
	o->debug = level;
	return AVE_SUCCESS;
}

/* ---- metadata for the host target ---- */

/* The kernel's record in the schema the backends write (docs/targets.md): the interpreter needs
 * no parameters or buffers, only the signature. */
char *
jit_host_metadata(IrCtx *c, IrOp *kernel, const TargetInfo *target, const char *file)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	IrAttr *th = ir_op_attr(kernel, c->kw.threads);
	long long threads = th ? (long long)th->i : 0LL;
	fputs("{\n  \"format\": \"ave-kernels-1\",\n  \"target\": ", f);
	ir_json_str(f, target->name);
	fprintf(f, ",\n  \"warp_size\": %d,\n  \"kernels\": [\n    {\n      \"name\": ", target->warp);
	ir_json_str(f, kernel->item[0].s);
	fprintf(f, ",\n      \"threads\": %lld,\n      \"block\": [%lld, 1, 1],\n      \"shared_bytes\": 0,\n"
		   "      \"args\": %s,\n      \"params\": [],\n",
		threads, threads, lower_args_json(c, kernel));
	const char *symm = lower_symm_json(c, kernel);
	if (symm)
		fprintf(f, "      \"symmetric\": %s,\n", symm);
	char *gather;
	if (!lower_gather_json(c, kernel, &gather)) {
		fclose(f);
		free(buf);
		return NULL; /* reported: a kernel without what its launch must gather is no kernel */
	}
	if (gather)
		fprintf(f, "      \"gather\": %s,\n", gather);
	if (lower_world(c, kernel))
		fprintf(f, "      \"world\": %lld,\n", (long long)lower_world(c, kernel));
	bool signals;
	unsigned rd = lower_grid_read(c, kernel, &signals);
	lower_grid_json(f, rd, signals);
	fputs("      \"file\": ", f);
	/* The file name, so that the interpreter's errors name the user's file. */
	ir_json_str(f, file ? file : "");
	fputs("\n    }\n  ]\n}\n", f);
	fclose(f);
	return buf;
}

/* ---- a cache entry remembers the compile's diagnostics ---- */

/* meta with the member "compile_diagnostics": said (a JSON array) first; malloc'd. */
static char *
with_diagnostics(const char *meta, const char *said)
{
	const char *body = strchr(meta, '{');
	body = body ? body + 1 : meta;
	size_t n = strlen(meta) + (said ? strlen(said) : 2) + 64;
	char *out = malloc(n);
	snprintf(out, n, "{\n  \"compile_diagnostics\": %s,%s", said ? said : "[]", body);
	return out;
}

static IrSeverity
severity_of(const char *s)
{
	return s && !strcmp(s, "warning") ? IR_SEV_WARNING
	       : s && !strcmp(s, "note")  ? IR_SEV_NOTE
	       : s && !strcmp(s, "error") ? IR_SEV_ERROR
	                                  : IR_SEV_REMARK;
}

static IrLoc
loc_of(const RtJson *d, uint32_t file)
{
	uint32_t line = (uint32_t)rt_json_int(d, "line", 0);
	return (IrLoc){line ? file : 0, line, (uint32_t)rt_json_int(d, "col", 0)};
}

/* Reports again what the compile that filled a cache entry reported (`list`, the entry's
 * "compile_diagnostics"), located in the module's canonical text as it was then. */
static void
replay(RtCtx *c, const RtJson *list, const char *name, const char *text, size_t len)
{
	if (!list || list->kind != RT_JSON_ARRAY || !list->n)
		return;
	IrCtx *ir = rt_ir_ctx(c);
	uint32_t f = ir_ctx_add_file(ir, name ? name : "<string>", text, len, 1);
	for (int i = 0; i < list->n; i++) {
		const RtJson *d = list->items[i];
		const char *code = rt_json_str(d, "code"), *msg = rt_json_str(d, "message");
		ir->code = ir_ctx_strdup(ir, code ? code : "ave");
		IrDiag *dg = ir_diag_begin(ir, severity_of(rt_json_str(d, "severity")), loc_of(d, f),
					   "%s", msg ? msg : "");
		const RtJson *notes = rt_json_get(d, "notes");
		for (int j = 0; notes && notes->kind == RT_JSON_ARRAY && j < notes->n; j++) {
			const char *nm = rt_json_str(notes->items[j], "message");
			ir_diag_note(ir, dg, loc_of(notes->items[j], f), "%s", nm ? nm : "");
		}
		ir_diag_emit(ir, dg);
	}
	rt_ir_ctx_free(ir);
}

/* ---- compiling ---- */

static IrOp *
find_kernel(IrModule *m, const char *name)
{
	for (IrOp *o = m->body->first; o; o = o->next) {
		if (o->code == IR_OP_KERNEL && !strcmp(o->item[0].s, name))
			return o;
		if (o->code == IR_OP_MODULE)
			for (IrOp *k = o->reg[0].block->first; k; k = k->next)
				if (k->code == IR_OP_KERNEL && !strcmp(k->item[0].s, name))
					return k;
	}
	return NULL;
}

static char *
module_text(IrModule *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	ir_module_print(m, f, NULL);
	fclose(f);
	return buf;
}

/* The request a cache entry answers, as text: ave's and LLVM's versions, the target, the
 * options, the kernel and the SHA-256 of the source. Its SHA-256 is the cache key; the entry
 * stores it, so that an entry found under a key is used only for this request (malloc'd). */
static char *
cache_ident(const JitOptions *o, const char *kernel, const char *text, size_t len)
{
	unsigned major = 0, minor = 0, patch = 0;
	LLVMGetVersion(&major, &minor, &patch);
	uint8_t sum[32];
	char hex[65];
	rt_sha256(text, len, sum);
	rt_hex(sum, 32, hex);
	const char *pl = o->pipeline ? o->pipeline : "";
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	/* The pipeline is the only free text: its length keeps the fields apart. */
	fprintf(f, "ave-cache-v3\nave %s\nllvm %u.%u.%u\ntarget %s\n-O%d\n", AVE_VERSION, major,
		minor, patch, o->target->name, o->opt);
	/* The compiler's own build: a rebuilt compiler (same version, new code) never reuses what
	 * an older build compiled. The file holding this code, by size and modification time. */
	Dl_info di;
	struct stat st;
	/* (A program's own name comes as it was invoked: a bare name is found through /proc.) */
	static const char anchor;
	if (dladdr(&anchor, &di) && di.dli_fname &&
	    !stat(strchr(di.dli_fname, '/') ? di.dli_fname : "/proc/self/exe", &st))
		fprintf(f, "build %lld %lld.%09ld\n", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			(long)st.st_mtim.tv_nsec);
	/* Debug info changes the binary; without it the request reads as before, so that entries
	 * written before the option existed stay valid. */
	if (o->debug)
		fprintf(f, "debug %d\n", o->debug);
	if (o->sim)
		fputs("simulated\n", f);
	fprintf(f, "pipeline %zu %s\nkernel %s\nsource %s\n", strlen(pl), pl, kernel, hex);
	fclose(f);
	return buf;
}

/* Whether a kernel loaded from the cache is the one requested (its bundle's own record). */
static bool
entry_matches(const RtKernel *k, const char *name, const char *target, const char *text,
	      size_t len)
{
	return k->name && !strcmp(k->name, name) && k->target && !strcmp(k->target, target) &&
	       k->bundle.source_len == len && !memcmp(k->bundle.source, text, len);
}

/* The host target: the module after the requested passes, as canonical text, and the kernel's
 * signature as metadata. */
static bool
compile_host(const JitRequest *rq, JitOutput *out)
{
	if (!jit_compile_pipeline(rq->m, &target_table[TARGET_HOST], rq->check, rq->pipeline,
				  NULL))
		return false;
	/* The interpreter runs the source as written when no pass asked to change it, so its
	 * run-time errors point at the user's lines; `overlap` changes what a kernel computes
	 * across ranks (it adds the communication the local kernel leaves out), so an overlapped
	 * kernel runs as the pass made it, as on every target. */
	size_t len;
	char *text;
	if (rq->source && !rq->pipeline && !ir_op_attr(rq->kernel, rq->m->ctx->kw.overlap)) {
		len = rq->source_len;
		text = malloc(len + 1);
		memcpy(text, rq->source, len + 1);
	} else {
		text = module_text(rq->m, &len);
	}
	out->binary = (uint8_t *)text;
	out->binary_len = len;
	out->meta = jit_host_metadata(rq->m->ctx, rq->kernel, rq->target, rq->m->name);
	return out->meta != NULL;
}

/* What a failed compile was: an invariant that could not be proved, or anything else. */
static AveResult
jit_failure_kind(IrCtx *ir, int errs)
{
	(void)errs;
	return ir->last_code && !strcmp(ir->last_code, "check-invariants") ? AVE_ERROR_CHECK
									 : AVE_ERROR_COMPILE;
}

bool
jit_build(const JitRequest *rq, JitOutput *out)
{
	return rq->target->vendor == TARGET_VENDOR_HOST ? compile_host(rq, out) : jit_build_gpu(rq, out);
}

AveResult
aveKernelCompile(AveModule mh, const char *name, AveCompileOptions oh, AveKernel *out)
{
	RtModule *mod = mh.ptr;
	JitOptions *o = oh.ptr, dflt = {&target_table[TARGET_HOST], 2, NULL, 0, false};
	if (!mod || !name || !out)
		return rt_misuse(mod ? mod->ctx : NULL, "aveKernelCompile: %s is null",
				 !mod ? "the module" : !name ? "'name'" : "'out'");
	if (!o)
		o = &dflt;
	out->ptr = NULL;
	if (name[0] == '@')
		name++;
	RtCtx *c = mod->ctx;

	IrOp *k = find_kernel(mod->m, name);
	/* The module is never changed: compiles parse its source again, so their diagnostics
	 * point at the lines the user wrote. */
	size_t len = mod->len;
	char *text = NULL;
	if (k) {
		text = malloc(len + 1);
		memcpy(text, mod->text, len + 1);
	}
	if (!k) {
		rt_error(c, "no kernel '@%s' in the module", name);
		return AVE_ERROR_NOT_FOUND;
	}

	uint8_t key[32];
	char *ident = cache_ident(o, name, text, len);
	rt_sha256(ident, strlen(ident), key);
	size_t size;
	uint8_t *bundle = rt_cache_get(&c->cache, key, ident, &size);
	if (bundle) {
		/* An entry that verifies but does not load (written by another version of the
		 * metadata schema), or holds another kernel than its request says, is stale: count
		 * it with the corrupt ones and compile again. */
		RtKernel *rk;
		if (rt_kernel_load_quiet(c, bundle, size, &rk) == AVE_SUCCESS) {
			if (entry_matches(rk, name, o->target->name, text, len)) {
				replay(c, rt_json_get(rk->meta, "compile_diagnostics"), mod->name, text, len);
				free(ident);
				free(text);
				out->ptr = rk;
				return AVE_SUCCESS;
			}
			rt_kernel_free(rk);
		}
		pthread_mutex_lock(&c->cache.mu);
		c->cache.stats.corrupt++;
		pthread_mutex_unlock(&c->cache.mu);
	}

	if (o->target->vendor != TARGET_VENDOR_HOST && !jit_lower_target(o->target)) {
		rt_error(c, "target '%s' is not available in this build of ave (targets: %s)",
			 o->target->name, jit_target_names());
		free(ident);
		free(text);
		return AVE_ERROR_UNSUPPORTED;
	}
	/* The backend works on a private copy parsed from the canonical text: the module itself is
	 * never changed, and compiles of one module run in parallel. */
	IrCtx *ir = rt_ir_ctx(c);
	rt_ir_ctx_record(ir);
	IrModule *copy = fe_parse(ir, mod->name, text, len, 1);
	AveResult r = AVE_SUCCESS;
	JitOutput jo = {0};
	if (!copy || !ir_verify(copy)) {
		rt_error(c, "internal error: the module does not re-parse from its printed form");
		r = AVE_ERROR_COMPILE;
	} else {
		JitRequest rq = {copy, find_kernel(copy, name), o->target, o->opt, o->pipeline, true,
				 text, len, o->debug, o->sim};
		int errs = ir->nerrors;
		if (!jit_build(&rq, &jo))
			r = jit_failure_kind(ir, errs);
	}
	ir_module_free(copy);
	char *said = rt_ir_ctx_recorded(ir);
	rt_ir_ctx_free(ir);
	if (!r) {
		/* The compile's warnings and remarks go with the entry: a cache hit reports them
		 * again (replay). */
		char *meta = with_diagnostics(jo.meta, said);
		bundle = rt_bundle_encode(meta, strlen(meta), jo.binary, jo.binary_len, text, len,
					  &size);
		free(meta);
		rt_cache_put(&c->cache, key, ident, bundle, size);
		RtKernel *rk;
		r = rt_kernel_from_bundle(c, bundle, size, &rk);
		out->ptr = r ? NULL : rk;
	}
	free(jo.binary);
	free(jo.meta);
	free(said);
	free(ident);
	free(text);
	return r;
}
