/* lower_emit.c — one compilation from IR to the target's output: lower every kernel into one
 * LLVM module, verify it, run LLVM's pipeline at -O<n>, and hand it to the target's code
 * generator; then the kernels' metadata as JSON for the runtime and for users. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "lower.h"

LLVMTargetMachineRef
lower_target_machine(IrCtx *c, const LowerTarget *t, int opt)
{
	IrLoc none = {0, 0, 0};
	if (t->llvm_init)
		t->llvm_init();
	LLVMTargetRef T;
	char *err = NULL;
	if (LLVMGetTargetFromTriple(t->info->triple, &T, &err)) {
		ir_error(c, none, "LLVM has no target for '%s': %s", t->info->triple, err ? err : "");
		LLVMDisposeMessage(err);
		return NULL;
	}
	LLVMCodeGenOptLevel lv = opt <= 0   ? LLVMCodeGenLevelNone
	                         : opt == 1 ? LLVMCodeGenLevelLess
	                         : opt == 2 ? LLVMCodeGenLevelDefault
	                                    : LLVMCodeGenLevelAggressive;
	return LLVMCreateTargetMachine(T, t->info->triple, t->info->cpu, t->info->features, lv, LLVMRelocDefault,
	                               LLVMCodeModelDefault);
}

typedef struct Kernels {
	const char *only;
	IrVec ops; /* IrOp* */
} Kernels;

static void
find_kernels(IrCtx *c, IrBlock *b, Kernels *k)
{
	for (IrOp *op = b->first; op; op = op->next) {
		if (op->code == IR_OP_MODULE)
			find_kernels(c, op->reg[0].block, k);
		else if (op->code == IR_OP_KERNEL && (!k->only || !strcmp(k->only, op->item[0].s)))
			ir_vec_push(c->al, &k->ops, &op, sizeof op);
	}
}

static char *
dup_bytes(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static bool compile(IrModule *m, const LowerTarget *t, const LowerOptions *o, LowerResult *r);

/* Diagnostics of lowering and code generation carry the phase "lower". */
bool
lower_compile(IrModule *m, const LowerTarget *t, const LowerOptions *o, LowerResult *r)
{
	IrCtx *c = m->ctx;
	const char *saved = c->code;
	c->code = "lower";
	bool ok = compile(m, t, o, r);
	c->code = saved;
	return ok;
}

static bool
compile(IrModule *m, const LowerTarget *t, const LowerOptions *o, LowerResult *r)
{
	IrCtx *c = m->ctx;
	IrLoc none = {0, 0, 0};
	memset(r, 0, sizeof *r);
	r->target = t;
	r->emit = o->emit;
	r->al = c->al;
	const TargetInfo *facts = t->info;
	Kernels ks = {o->kernel, {0}};
	find_kernels(c, m->body, &ks);
	if (!ks.ops.len) {
		if (o->kernel)
			ir_error(c, none, "no kernel '@%s' in the input", o->kernel);
		else
			ir_error(c, none, "the input has no kernel");
		return false;
	}
	double t0 = ir_now();
	LLVMTargetMachineRef tm = lower_target_machine(c, t, o->opt);
	if (!tm)
		return false;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(m->name ? m->name : "ave", ctx);
	LLVMSetTarget(mod, t->info->triple);
	LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(mod, dl);
	LLVMDisposeTargetData(dl);
	r->kernels = calloc((size_t)ks.ops.len, sizeof(LowerKernelInfo));
	/* -lineinfo / -g: a compile unit for the source file; each kernel adds its subprogram and
	 * each op its line (lower_debug_loc). */
	LLVMDIBuilderRef dib = NULL;
	LLVMMetadataRef di_file = NULL;
	if (o->debug) {
		IrOp *k0 = IR_VEC_AT(ks.ops, IrOp *, 0);
		const char *path = ir_ctx_file(c, k0->loc.file)->name;
		const char *slash = strrchr(path, '/');
		const char *base = slash ? slash + 1 : path;
		size_t dirlen = slash ? (size_t)(slash - path) : 1;
		dib = LLVMCreateDIBuilder(mod);
		di_file = LLVMDIBuilderCreateFile(dib, base, strlen(base), slash ? path : ".", dirlen);
		/* Line tables: NVPTX marks the PTX "debug" for any DWARF beyond directives, and ptxas
		 * then refuses to optimize, so there -lineinfo is LLVM's DebugDirectivesOnly (3 in
		 * DICompileUnit's enum, which the C API casts to; nvcc -lineinfo's form: .file and
		 * .loc only); AMDGPU gets a .debug_line section from LineTablesOnly. */
		LLVMDWARFEmissionKind lines = t->info->vendor == TARGET_VENDOR_NVIDIA
						  ? (LLVMDWARFEmissionKind)3
						  : LLVMDWARFEmissionLineTablesOnly;
		LLVMDIBuilderCreateCompileUnit(dib, LLVMDWARFSourceLanguageC99, di_file, "ave", 3,
					       o->opt > 0, "", 0, 0, "", 0,
					       o->debug == 1 ? lines : LLVMDWARFEmissionFull, 0, false,
					       false, "", 0, "", 0);
		LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
		LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
				  LLVMValueAsMetadata(LLVMConstInt(i32, LLVMDebugMetadataVersion(), 0)));
		LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
				  LLVMValueAsMetadata(LLVMConstInt(i32, t->info->vendor ==
								   TARGET_VENDOR_AMD ? 5 : 2, 0)));
	}
	bool ok = true;
	for (int i = 0; i < ks.ops.len && ok; i++) {
		Lower L;
		memset(&L, 0, sizeof L);
		L.c = c;
		L.m = m;
		L.kernel = IR_VEC_AT(ks.ops, IrOp *, i);
		L.t = t;
		L.facts = facts;
		L.o = o;
		L.ctx = ctx;
		L.mod = mod;
		L.dib = dib;
		L.di_file = di_file;
		ok = lower_kernel(&L);
		r->kernels[r->nkernels++] = L.info;
		ir_arena_free(&L.arena);
	}
	ir_vec_free(c->al, &ks.ops, sizeof(IrOp *));
	if (dib) {
		LLVMDIBuilderFinalize(dib);
		LLVMDisposeDIBuilder(dib);
	}
	char *msg = NULL;
	if (ok && LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
		ir_error(c, none,
		         "internal error: the LLVM module for target '%s' does not verify: %s",
		         t->info->name, msg ? msg : "");
		ok = false;
	}
	if (msg)
		LLVMDisposeMessage(msg);
	double t1 = ir_now();
	r->t[LOWER_T_IRBUILD] = t1 - t0;
	if (ok && o->opt > 0) {
		/* Kernels are straight-line code over fragments plus a few loops: the cleanups that
		 * matter (SROA, CSE, instcombine, GVN) at a fraction of default<O3>'s time. No
		 * LICM: hoisting address arithmetic out of loops costs registers the fragments need
		 * (gemm.ave on sm_90a before prefetch: 167 registers here, 220 with LICM, 210 with
		 * default<O3>). */
		const char *pipeline = o->opt == 1 ? "function(sroa,early-cse<memssa>,instcombine<"
		                                     "no-verify-fixpoint>,simplifycfg)"
		                                   : "function(sroa,early-cse<memssa>,instcombine<"
		                                     "no-verify-fixpoint>,simplifycfg,"
		                                     "gvn,adce)";
		const char *own = t->llvm_passes ? t->llvm_passes(o->opt) : NULL;
		if (own)
			pipeline = own;
		const char *env = getenv("AVE_LLVM_PASSES");
		if (env && *env)
			pipeline = env;
		LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
		LLVMErrorRef e = LLVMRunPasses(mod, pipeline, tm, po);
		LLVMDisposePassBuilderOptions(po);
		if (e) {
			char *em = LLVMGetErrorMessage(e);
			ir_error(c, none, "internal error: LLVM passes failed: %s", em);
			LLVMDisposeErrorMessage(em);
			ok = false;
		}
	}
	double t2 = ir_now();
	r->t[LOWER_T_OPT] = t2 - t1;
	if (ok && !strcmp(o->emit, "llvm")) {
		char *s = LLVMPrintModuleToString(mod);
		r->len = strlen(s);
		r->data = dup_bytes(s, r->len);
		LLVMDisposeMessage(s);
	} else if (ok) {
		ok = t->codegen(c, mod, tm, o->emit, o, r->kernels, r->nkernels, &r->data, &r->len,
		                r->t);
	}
	LLVMDisposeModule(mod);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return ok;
}

void
lower_result_free(LowerResult *r)
{
	const IrAllocator *al = r->al;
	for (int i = 0; i < r->nkernels; i++) {
		LowerKernelInfo *k = &r->kernels[i];
		ir_vec_free(al, &k->params, sizeof(LowerParam));
		ir_vec_free(al, &k->buffers, sizeof(LowerSmemBuf));
		for (int j = 0; j < k->diags.len; j++)
			free(IR_VEC_AT(k->diags, char *, j));
		ir_vec_free(al, &k->diags, sizeof(char *));
		for (int j = 0; j < k->roles.len; j++)
			free(IR_VEC_AT(k->roles, char *, j));
		ir_vec_free(al, &k->roles, sizeof(char *));
		free(k->target_json);
		free(k->regalloc_json);
	}
	free(r->kernels);
	free(r->data);
	memset(r, 0, sizeof *r);
}

/* ---- JSON ---- */


char *
lower_args_json(IrCtx *c, IrOp *kernel)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	IrBlock *b = kernel->reg[0].block;
	fputc('[', f);
	for (int i = 0; i < b->narg; i++) {
		IrValue *a = b->arg[i];
		IrType *t = a->type;
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		ir_json_str(f, a->name ? a->name : "");
		const char *kind = t->kind == IR_TY_TENSOR ? "tensor"
				   : t->kind == IR_TY_PTR  ? "pointer"
				   : ir_type_is_float(t)   ? "float"
							   : "int";
		fprintf(f, ", \"kind\": \"%s\", \"type\": ", kind);
		ir_json_str(f, ir_type_str(c, ir_type_elem(t)));
		int rank = t->kind == IR_TY_TENSOR ? t->rank : 0;
		fprintf(f, ", \"rank\": %d", rank);
		if (rank) {
			fputs(", \"dims\": [", f);
			for (int d = 0; d < rank; d++)
				fprintf(f, "%s%lld", d ? ", " : "",
					t->dims[d] == IR_DYN ? -1LL : (long long)t->dims[d]);
			fputs("], \"strides\": [", f);
			for (int d = 0; d < rank; d++) {
				long long st = -1;
				if (t->strides) {
					st = t->strides[d] == IR_DYN ? -1 : t->strides[d];
				} else {
					/* Row-major default: known when every inner dimension is. */
					st = 1;
					for (int e = d + 1; e < rank && st >= 0; e++)
						st = t->dims[e] == IR_DYN ? -1 : st * t->dims[e];
				}
				fprintf(f, "%s%lld", d ? ", " : "", st);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputc(']', f);
	fclose(f);
	char *out = ir_ctx_strdup(c, buf);
	free(buf);
	return out;
}

typedef struct SigScan {
	IrCtx *c;
	IrOp *buf;    /* the symmetric buffer asked about */
	bool signals; /* a chunk signal or wait of the kernel counts in it */
} SigScan;

static bool
sig_scan(IrOp *op, void *ud)
{
	SigScan *g = ud;
	if ((op->code != IR_OP_CHUNK_SIGNAL && op->code != IR_OP_CHUNK_WAIT) || !op->nitem)
		return true;
	IrOp *ch = ir_symbol_lookup(g->c, op, op->item[0].s);
	IrGroup *sg = ch && ch->code == IR_OP_CHUNK ? ir_op_group(ch, g->c->kw.signal) : NULL;
	if (sg && ir_symbol_lookup(g->c, ch, sg->item[0].s) == g->buf)
		g->signals = true;
	return true;
}

/* Strides of symmetric buffer type t, in elements. */
static void
symm_strides(const IrType *t, int64_t *strides)
{
	int64_t st = 1;
	for (int d = t->rank - 1; d >= 0; d--) {
		strides[d] = t->strides ? t->strides[d] : st;
		st *= t->dims[d];
	}
}

/* The symmetric buffers of the kernel's module (SPEC 5.9: each rank's copy of each), for a
 * runtime that makes them: [{"symbol", "type" (element), "rank", "dims", "strides", "bytes",
 * "signals"}] ("signals": the kernel's chunk signals or waits count in it, so a launch is an
 * epoch of it), or NULL when there are none. */
char *
lower_symm_json(IrCtx *c, IrOp *kernel)
{
	char *buf = NULL;
	size_t n = 0;
	int count = 0;
	FILE *f = open_memstream(&buf, &n);
	fputc('[', f);
	for (IrOp *op = kernel->parent ? kernel->parent->first : NULL; op; op = op->next) {
		if (op->code != IR_OP_SYMM_ALLOC)
			continue;
		IrType *t = op->type[0];
		fprintf(f, "%s{\"symbol\": ", count++ ? ", " : "");
		ir_json_str(f, op->item[0].s);
		fputs(", \"type\": ", f);
		ir_json_str(f, ir_type_str(c, t->elem));
		fprintf(f, ", \"rank\": %d, \"dims\": [", t->rank);
		int64_t last = 0, strides[IR_MAX_RANK];
		symm_strides(t, strides);
		for (int d = 0; d < t->rank; d++)
			last += (t->dims[d] - 1) * strides[d];
		for (int d = 0; d < t->rank; d++)
			fprintf(f, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
		fputs("], \"strides\": [", f);
		for (int d = 0; d < t->rank; d++)
			fprintf(f, "%s%lld", d ? ", " : "", (long long)strides[d]);
		SigScan g = {c, op, false};
		ir_walk_op(kernel, sig_scan, &g);
		fprintf(f, "], \"bytes\": %lld, \"signals\": %s}",
		        (long long)(last + 1) * lower_elem_bytes(t->elem), g.signals ? "true" : "false");
	}
	fputc(']', f);
	fclose(f);
	char *out = count ? ir_ctx_strdup(c, buf) : NULL;
	free(buf);
	return out;
}

int64_t
lower_world(IrCtx *c, IrOp *kernel)
{
	IrOp *mod = ir_op_parent_op(kernel);
	IrAttr *w = mod && mod->code == IR_OP_MODULE ? ir_op_attr(mod, c->kw.world) : NULL;
	return w && w->kind == IR_ATTR_INT && w->i > 0 ? w->i : 0;
}

bool
lower_gather_json(IrCtx *c, IrOp *kernel, char **out)
{
	*out = NULL;
	IrAttr *ga = ir_op_attr(kernel, c->kw.gathered);
	if (!ga || ga->kind != IR_ATTR_SYM)
		return true;
	IrOp *ch = ir_symbol_lookup(c, kernel, ga->s), *mod = ir_op_parent_op(kernel);
	IrAttr *w = mod ? ir_op_attr(mod, c->kw.world) : NULL;
	if (!ch || ch->code != IR_OP_CHUNK || !w || w->kind != IR_ATTR_INT)
		return true; /* the verifier says why */
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	fputc('[', f);
	bool ok = true;
	for (int64_t q = 0; q < w->i && ok; q++) {
		IrChunkBox r, s;
		char err[512];
		int64_t rs[IR_MAX_RANK], ss[IR_MAX_RANK], ro = 0, so = 0;
		if (!(ok = ir_gathered_chunk(c, ch, q, &r, &s, err, sizeof err))) {
			ir_error(c, kernel->loc, "'gathered = @%s': %s", ga->s, err);
			break;
		}
		const IrType *rt = r.buf->type[0], *st = s.buf->type[0];
		symm_strides(rt, rs);
		symm_strides(st, ss);
		int last = rt->rank - 1;
		for (int d = 0; d < rt->rank; d++)
			ro += r.lo[d] * rs[d];
		for (int d = 0; d < st->rank; d++)
			so += s.lo[d] * ss[d];
		int64_t eb = lower_elem_bytes(rt->elem);
		fprintf(f, "%s{\"buffer\": ", q ? ", " : "");
		ir_json_str(f, r.buf->item[0].s);
		fprintf(f, ", \"offset\": %lld, \"rows\": %lld, \"row_bytes\": %lld, \"pitch\": %lld, "
		        "\"signal\": ", (long long)(ro * eb), (long long)(rt->rank == 2 ? r.len[0] : 1),
		        (long long)(r.len[last] * eb), (long long)(rt->rank == 2 ? rs[0] * eb : 0));
		ir_json_str(f, s.buf->item[0].s);
		fprintf(f, ", \"slot\": %lld, \"slot_bytes\": %d}",
		        (long long)(so * lower_elem_bytes(st->elem)), lower_elem_bytes(st->elem));
	}
	fputc(']', f);
	fclose(f);
	if (ok)
		*out = ir_ctx_strdup(c, buf);
	free(buf);
	return ok;
}

void
lower_grid_json(FILE *f, unsigned read, bool signals)
{
	fprintf(f, "      \"grid_read\": [%s, %s, %s],\n      \"signals\": %s,\n",
	        read & 1 ? "true" : "false", read & 2 ? "true" : "false", read & 4 ? "true" : "false",
	        signals ? "true" : "false");
}

static const char *const param_kinds[LOWER_P_KINDS] = {
    "ptr", "size", "stride", "scalar", "symm", "target", "grid", "peers", "rank", "world", "epoch"};

void
lower_write_metadata(IrCtx *c, const LowerResult *r, FILE *f)
{
	fprintf(f, "{\n  \"format\": \"ave-kernels-1\",\n");
	/* The binary is the target's LLVM IR (a simulated device's kernel, docs/testing.md). */
	if (r->emit && !strcmp(r->emit, "llvm"))
		fprintf(f, "  \"binary\": \"llvm\",\n");
	fprintf(f, "  \"target\": ");
	ir_json_str(f, r->target->info->name);
	fprintf(f, ",\n  \"warp_size\": %d,\n  \"kernels\": [", r->target->info->warp);
	for (int i = 0; i < r->nkernels; i++) {
		const LowerKernelInfo *k = &r->kernels[i];
		fprintf(f, "%s\n    {\n      \"name\": ", i ? "," : "");
		ir_json_str(f, k->name);
		fprintf(f,
		        ",\n      \"threads\": %d,\n      \"block\": [%d, 1, 1],\n      "
		        "\"grid_dims\": %d,\n",
		        k->threads, k->threads, k->grid_dims);
		lower_grid_json(f, k->grid_read, k->signals);
		fprintf(f, "      \"shared_bytes\": %lld,\n", (long long)k->smem_bytes);
		if (k->args_json)
			fprintf(f, "      \"args\": %s,\n", k->args_json);
		if (k->symm_json)
			fprintf(f, "      \"symmetric\": %s,\n", k->symm_json);
		if (k->gather_json)
			fprintf(f, "      \"gather\": %s,\n", k->gather_json);
		if (k->world)
			fprintf(f, "      \"world\": %lld,\n", (long long)k->world);
		if (k->persistent)
			fprintf(f, "      \"persistent\": %lld,\n", (long long)k->persistent);
		fprintf(f, "      \"params\": [");
		const LowerParam *ps = k->params.data;
		for (int j = 0; j < k->params.len; j++) {
			const LowerParam *p = &ps[j];
			fprintf(f, "%s\n        {\"index\": %d, \"kind\": \"%s\"", j ? "," : "", j,
			        param_kinds[p->kind]);
			if (p->name) {
				fprintf(f, ", \"%s\": ",
				        p->kind == LOWER_P_SYMM || p->kind == LOWER_P_PEERS ? "symbol"
				        : p->kind == LOWER_P_TARGET || p->kind == LOWER_P_GRID || p->kind >= LOWER_P_RANK
				            ? "name"
				            : "arg");
				ir_json_str(f, p->name);
			}
			if (p->arg >= 0 && p->kind != LOWER_P_TARGET)
				fprintf(f, ", \"arg_index\": %d", p->arg);
			if (p->kind == LOWER_P_SIZE || p->kind == LOWER_P_STRIDE ||
			    p->kind == LOWER_P_GRID)
				fprintf(f, ", \"dim\": %d", p->dim);
			if (p->kind == LOWER_P_GRID || p->kind == LOWER_P_RANK || p->kind == LOWER_P_WORLD)
				fprintf(f, ", \"ctype\": \"int32\"");
			if (p->kind == LOWER_P_EPOCH)
				fprintf(f, ", \"ctype\": \"int64\"");
			if (p->type && (p->kind == LOWER_P_PTR || p->kind == LOWER_P_SCALAR ||
			                p->kind == LOWER_P_SYMM)) {
				fprintf(f, ", \"type\": ");
				ir_json_str(f, ir_type_str(c, p->type));
			}
			if (p->kind == LOWER_P_SIZE || p->kind == LOWER_P_STRIDE)
				fprintf(f, ", \"ctype\": \"int64\"");
			if (p->kind == LOWER_P_PTR || p->kind == LOWER_P_SYMM || p->kind == LOWER_P_PEERS)
				fprintf(f, ", \"bytes\": 8");
			if (p->kind == LOWER_P_TARGET)
				fprintf(f, ", \"bytes\": %lld, \"align\": %lld, \"desc\": %s",
				        (long long)p->bytes, (long long)p->align,
				        p->json ? p->json : "null");
			fprintf(f, "}");
		}
		fprintf(f, "\n      ],\n      \"buffers\": [");
		const LowerSmemBuf *bs = k->buffers.data;
		for (int j = 0; j < k->buffers.len; j++) {
			fprintf(f, "%s\n        {\"name\": ", j ? "," : "");
			ir_json_str(f, bs[j].name);
			fprintf(f, ", \"offset\": %lld, \"bytes\": %lld, \"align\": %lld}",
			        (long long)bs[j].offset, (long long)bs[j].bytes,
			        (long long)bs[j].align);
		}
		fprintf(f, "\n      ],\n      \"setmaxnreg\": %s",
		        k->setmaxnreg ? "true" : "false");
		if (k->roles.len) {
			fprintf(f, ",\n      \"roles\": [");
			for (int j = 0; j < k->roles.len; j++)
				fprintf(f, "%s%s", j ? ", " : "", IR_VEC_AT(k->roles, char *, j));
			fprintf(f, "]");
		}
		if (k->stats)
			fprintf(f,
			        ",\n      \"registers\": %d,\n      \"barriers\": %d,\n      "
			        "\"stack_frame\": %lld,\n"
			        "      \"spill_stores\": %lld,\n      \"spill_loads\": %lld,\n     "
			        " \"static_shared\": %lld",
			        k->regs, k->barriers, (long long)k->stack,
			        (long long)k->spill_stores, (long long)k->spill_loads,
			        (long long)k->static_smem);
		if (k->regalloc_json) {
			/* The plan beside what the binary uses: validated when no thread needs more
			 * registers than the largest budget and nothing spills. */
			size_t n = strlen(k->regalloc_json);
			fprintf(f, ",\n      \"regalloc\": %.*s", (int)(n - 1), k->regalloc_json);
			if (k->stats)
				fprintf(f, ", \"observed\": {\"registers\": %d, \"spill_bytes\": %lld}, "
				        "\"validated\": %s}",
				        k->regs, (long long)(k->spill_stores + k->spill_loads),
				        k->regs <= k->regalloc_budget && !k->spill_stores && !k->spill_loads
				            ? "true"
				            : "false");
			else
				fprintf(f, ", \"validated\": false}");
		}
		fprintf(f, ",\n      \"diagnostics\": [");
		for (int j = 0; j < k->diags.len; j++) {
			fprintf(f, "%s", j ? ", " : "");
			ir_json_str(f, IR_VEC_AT(k->diags, char *, j));
		}
		fprintf(f, "]");
		if (k->target_json) {
			fputs(",\n      ", f);
			ir_json_str(f, r->target->info->name);
			fprintf(f, ": %s", k->target_json);
		}
		fprintf(f, "\n    }");
	}
	fprintf(f, "\n  ]\n}\n");
}

/* ---- files and external tools, for the backends' code generation ---- */

bool
lower_is_exe(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK);
}

char *
lower_find_tool(const char *env, const char *tool_dir, const char *const *names,
		const char *const *fallback)
{
	char buf[4096];
	const char *e = env ? getenv(env) : NULL;
	if (e && *e)
		return lower_is_exe(e) ? strdup(e) : NULL;
	for (int k = 0; names[k]; k++) {
		if (tool_dir) {
			snprintf(buf, sizeof buf, "%s/%s", tool_dir, names[k]);
			if (lower_is_exe(buf))
				return strdup(buf);
		}
		const char *path = getenv("PATH");
		for (const char *p = path; p && *p;) {
			const char *end = strchr(p, ':');
			size_t n = end ? (size_t)(end - p) : strlen(p);
			snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, names[k]);
			if (n && lower_is_exe(buf))
				return strdup(buf);
			p = end ? end + 1 : p + n;
		}
	}
	for (int i = 0; fallback && fallback[i]; i++)
		if (lower_is_exe(fallback[i]))
			return strdup(fallback[i]);
	return NULL;
}

char *
lower_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
	size_t got = fread(s, 1, (size_t)(n > 0 ? n : 0), f);
	fclose(f);
	s[got] = 0;
	if (len)
		*len = got;
	return s;
}

bool
lower_write_file(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(s, 1, n, f) == n;
	return fclose(f) == 0 && ok;
}
