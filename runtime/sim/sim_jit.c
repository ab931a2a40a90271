/* sim_jit.c — a simulated target's kernel as host code: the target module's LLVM IR (after ave's
 * LLVM passes) with its address spaces dropped, every target intrinsic and inline-assembly call
 * replaced by a call to avesim_call(id, args, res) (the operands stored to a buffer, the results
 * loaded back), an entry that takes the parameters as cuLaunchKernel does, all JIT-compiled for
 * the host with ORC. What runs is LLVM's own optimized IR for the target; what is trusted beyond
 * it is the target's code generator and assembler. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "sim.h"

static void
fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

/* ---- the module's text: what the host's code generator cannot take ---- */

typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;

static void
put(Buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static bool
starts(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(end - p) >= n && !memcmp(p, w, n);
}

static bool
ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '$' || c == '-';
}

/* The rewritten text: no datalayout or triple (the host's are set), no address spaces (a cast
 * between them becomes a bitcast: on the host every space is the one memory), no kernel calling
 * conventions, target intrinsics renamed to plain functions `avesim.<rest>` (the calls are then
 * replaced), other intrinsics' pointer suffixes made .p0, and no target attributes. */
static char *
host_text(const char *ir, size_t len)
{
	Buf b = {0};
	const char *p = ir, *end = ir + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		eol = eol ? eol + 1 : end;
		if (starts(p, end, "target datalayout") || starts(p, end, "target triple")) {
			p = eol;
			continue;
		}
		const char *q = p;
		while (q < eol) {
			if (starts(q, eol, ", addrspace(") || starts(q, eol, " addrspace(")) {
				const char *c = strchr(q, ')');
				q = c && c < eol ? c + 1 : eol;
				continue;
			}
			if (starts(q, eol, "addrspacecast")) {
				put(&b, "bitcast", 7);
				q += 13;
				continue;
			}
			if ((starts(q, eol, "ptx_kernel ") || starts(q, eol, "amdgpu_kernel ")) &&
			    (q == p || !ident_char(q[-1]))) {
				q = strchr(q, ' ') + 1;
				continue;
			}
			if (starts(q, eol, " immarg")) {
				q += 7;
				continue;
			}
			if (starts(q, eol, "\"target-cpu\"=\"") || starts(q, eol, "\"target-features\"=\"")) {
				const char *c = strchr(q, '=') + 2;
				c = strchr(c, '"');
				q = c && c < eol ? c + 1 : eol;
				continue;
			}
			if (starts(q, eol, "@llvm.nvvm.") || starts(q, eol, "@llvm.amdgcn.") ||
			    starts(q, eol, "@llvm.trap") || starts(q, eol, "@llvm.debugtrap")) {
				put(&b, "@avesim.", 8);
				q += 6;
				continue;
			}
			if (starts(q, eol, "@llvm.")) {
				const char *e = q + 1;
				while (e < eol && ident_char(*e))
					e++;
				for (const char *s = q; s < e; s++) {
					if (s + 2 < e && s[0] == '.' && s[1] == 'p' && isdigit((unsigned char)s[2])) {
						const char *d = s + 2;
						while (d < e && isdigit((unsigned char)*d))
							d++;
						if (d == e || *d == '.') {
							put(&b, ".p0", 3);
							s = d - 1;
							continue;
						}
					}
					put(&b, s, 1);
				}
				q = e;
				continue;
			}
			put(&b, q, 1);
			q++;
		}
		p = eol;
	}
	return b.s ? b.s : strdup("");
}

/* ---- the call kinds ---- */

static bool
classify(LLVMTypeRef t, SimTy *out)
{
	int lanes = 1;
	if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
		lanes = (int)LLVMGetVectorSize(t);
		t = LLVMGetElementType(t);
	}
	out->lanes = lanes;
	switch (LLVMGetTypeKind(t)) {
	case LLVMIntegerTypeKind:
		out->cls = SIM_INT;
		out->bits = (int)LLVMGetIntTypeWidth(t);
		return true;
	case LLVMHalfTypeKind:
	case LLVMBFloatTypeKind:
		out->cls = SIM_FLOAT;
		out->bits = 16;
		return true;
	case LLVMFloatTypeKind:
		out->cls = SIM_FLOAT;
		out->bits = 32;
		return true;
	case LLVMDoubleTypeKind:
		out->cls = SIM_FLOAT;
		out->bits = 64;
		return true;
	case LLVMPointerTypeKind:
		out->cls = SIM_PTR;
		out->bits = 64;
		return lanes == 1;
	default:
		return false;
	}
}

static uint32_t
ty_bytes(const SimTy *t)
{
	uint32_t b = (uint32_t)((t->bits + 7) / 8 * t->lanes);
	return (b + 7) & ~7u;
}

/* Decodes an LLVM string literal body ("...\0A...") up to its closing quote; returns the char
 * after it. */
static const char *
llvm_string(const char *p, Buf *out)
{
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char h[3] = {p[1], p[2], 0};
			char c = (char)strtol(h, NULL, 16);
			put(out, &c, 1);
			p += 2;
		} else if (*p == '\\' && p[1] == '\\') {
			put(out, "\\", 1);
			p++;
		} else {
			put(out, p, 1);
		}
	}
	return *p ? p + 1 : p;
}



/* The kind of an intrinsic or assembly call (added once per distinct signature). */
static int
call_kind(SimProgram *p, LLVMValueRef call, char *err, size_t errlen)
{
	LLVMValueRef callee = LLVMGetCalledValue(call);
	SimCall k;
	memset(&k, 0, sizeof k);
	Buf text = {0}, cons = {0};
	if (LLVMIsAInlineAsm(callee)) {
		char *s = LLVMPrintValueToString(call);
		const char *a = strstr(s, " asm ");
		if (!a) {
			fail(err, errlen, "cannot read the inline assembly of: %s", s);
			LLVMDisposeMessage(s);
			return -1;
		}
		a = strchr(a, '"');
		a = llvm_string(a + 1, &text);
		a = strchr(a, '"');
		llvm_string(a + 1, &cons);
		LLVMDisposeMessage(s);
	} else {
		size_t n;
		const char *nm = LLVMGetValueName2(callee, &n);
		k.name = strndup(nm + 7, n - 7); /* after "avesim." */
	}
	k.text = text.s ? text.s : (k.name ? NULL : strdup(""));
	k.cons = cons.s ? cons.s : (k.name ? NULL : strdup(""));
	int na = (int)LLVMGetNumArgOperands(call);
	LLVMTypeRef rt = LLVMTypeOf(call);
	int nr = LLVMGetTypeKind(rt) == LLVMVoidTypeKind     ? 0
	         : LLVMGetTypeKind(rt) == LLVMStructTypeKind ? (int)LLVMCountStructElementTypes(rt)
	                                                     : 1;
	if (na > SIM_MAX_OPS || nr > SIM_MAX_OPS)
		goto bad;
	k.nargs = na;
	k.nres = nr;
	uint32_t off = 0;
	for (int i = 0; i < na; i++) {
		if (!classify(LLVMTypeOf(LLVMGetOperand(call, (unsigned)i)), &k.arg[i]))
			goto bad;
		k.arg_off[i] = off;
		off += ty_bytes(&k.arg[i]);
	}
	off = 0;
	for (int i = 0; i < nr; i++) {
		LLVMTypeRef ft = LLVMGetTypeKind(rt) == LLVMStructTypeKind
		                     ? LLVMStructGetTypeAtIndex(rt, (unsigned)i)
		                     : rt;
		if (!classify(ft, &k.res[i]))
			goto bad;
		k.res_off[i] = off;
		off += ty_bytes(&k.res[i]);
	}
	for (int i = 0; i < p->ncalls; i++) {
		SimCall *o = p->calls[i];
		if (o->nargs != k.nargs || o->nres != k.nres ||
		    (k.name ? !o->name || strcmp(o->name, k.name)
		            : o->name || strcmp(o->text, k.text) || strcmp(o->cons, k.cons)) ||
		    memcmp(o->arg, k.arg, sizeof(SimTy) * (size_t)k.nargs) ||
		    memcmp(o->res, k.res, sizeof(SimTy) * (size_t)k.nres))
			continue;
		free(k.name);
		free(k.text);
		free(k.cons);
		return i;
	}
	if (!p->model->bind(&k, err, errlen)) {
		free(k.name);
		free(k.text);
		free(k.cons);
		return -1;
	}
	if (p->ncalls == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 32;
		p->calls = realloc(p->calls, sizeof *p->calls * (size_t)p->cap);
	}
	p->calls[p->ncalls] = malloc(sizeof k);
	*p->calls[p->ncalls] = k;
	return p->ncalls++;
bad:;
	char *s = LLVMPrintValueToString(call);
	fail(err, errlen, "the simulator cannot pass the operands of: %s", s);
	LLVMDisposeMessage(s);
	free(k.name);
	free(k.text);
	free(k.cons);
	return -1;
}

static bool
is_model_call(LLVMValueRef ins)
{
	if (!LLVMIsACallInst(ins))
		return false;
	LLVMValueRef callee = LLVMGetCalledValue(ins);
	if (LLVMIsAInlineAsm(callee))
		return true;
	if (!LLVMIsAFunction(callee))
		return false;
	size_t n;
	const char *nm = LLVMGetValueName2(callee, &n);
	return n > 7 && !strncmp(nm, "avesim.", 7);
}

/* Replaces every model call of f by a call of avesim_call through two buffers in its frame. */
static bool
rewrite_function(SimProgram *p, LLVMModuleRef mod, LLVMValueRef f, LLVMValueRef simcall,
                 LLVMTypeRef simcall_t, char *err, size_t errlen)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx),
	            i64 = LLVMInt64TypeInContext(ctx);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMValueRef abuf = NULL, rbuf = NULL;
	uint32_t amax = 8, rmax = 8;
	bool ok = true;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb && ok; bb = LLVMGetNextBasicBlock(bb)) {
		LLVMValueRef next;
		for (LLVMValueRef ins = LLVMGetFirstInstruction(bb); ins && ok; ins = next) {
			next = LLVMGetNextInstruction(ins);
			if (!is_model_call(ins))
				continue;
			int id = call_kind(p, ins, err, errlen);
			if (id < 0) {
				ok = false;
				break;
			}
			SimCall *k = p->calls[id];
			if (!abuf) {
				LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(f);
				LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(entry));
				/* Sized at the end, when every call is known. */
				abuf = LLVMBuildAlloca(b, LLVMArrayType2(i8, 8), "simargs");
				rbuf = LLVMBuildAlloca(b, LLVMArrayType2(i8, 8), "simres");
				LLVMSetAlignment(abuf, 16);
				LLVMSetAlignment(rbuf, 16);
			}
			LLVMPositionBuilderBefore(b, ins);
			uint32_t at = 0;
			for (int i = 0; i < k->nargs; i++) {
				LLVMValueRef off = LLVMConstInt(i64, k->arg_off[i], 0);
				LLVMValueRef ptr = LLVMBuildGEP2(b, i8, abuf, &off, 1, "");
				LLVMValueRef st = LLVMBuildStore(b, LLVMGetOperand(ins, (unsigned)i), ptr);
				LLVMSetAlignment(st, 8);
				at = k->arg_off[i] + ty_bytes(&k->arg[i]);
			}
			if (at > amax)
				amax = at;
			LLVMValueRef cargs[3] = {LLVMConstInt(i32, (unsigned long long)id, 0), abuf, rbuf};
			LLVMBuildCall2(b, simcall_t, simcall, cargs, 3, "");
			LLVMTypeRef rt = LLVMTypeOf(ins);
			LLVMValueRef val = NULL;
			at = 0;
			for (int i = 0; i < k->nres; i++) {
				LLVMTypeRef ft = LLVMGetTypeKind(rt) == LLVMStructTypeKind
				                     ? LLVMStructGetTypeAtIndex(rt, (unsigned)i)
				                     : rt;
				LLVMValueRef off = LLVMConstInt(i64, k->res_off[i], 0);
				LLVMValueRef ptr = LLVMBuildGEP2(b, i8, rbuf, &off, 1, "");
				LLVMValueRef v = LLVMBuildLoad2(b, ft, ptr, "");
				LLVMSetAlignment(v, 8);
				at = k->res_off[i] + ty_bytes(&k->res[i]);
				if (LLVMGetTypeKind(rt) == LLVMStructTypeKind)
					val = LLVMBuildInsertValue(b, val ? val : LLVMGetUndef(rt), v,
					                           (unsigned)i, "");
				else
					val = v;
			}
			if (at > rmax)
				rmax = at;
			if (val)
				LLVMReplaceAllUsesWith(ins, val);
			LLVMInstructionEraseFromParent(ins);
		}
	}
	if (abuf) {
		/* Resize the buffers: new allocas of the final sizes replace the placeholders. */
		LLVMPositionBuilderBefore(b, abuf);
		LLVMValueRef a2 = LLVMBuildAlloca(b, LLVMArrayType2(i8, amax), "simargs");
		LLVMValueRef r2 = LLVMBuildAlloca(b, LLVMArrayType2(i8, rmax), "simres");
		LLVMSetAlignment(a2, 16);
		LLVMSetAlignment(r2, 16);
		LLVMReplaceAllUsesWith(abuf, a2);
		LLVMReplaceAllUsesWith(rbuf, r2);
		LLVMInstructionEraseFromParent(abuf);
		LLVMInstructionEraseFromParent(rbuf);
	}
	LLVMDisposeBuilder(b);
	return ok;
}

/* avesim_entry(params): loads each parameter as cuLaunchKernel's array gives it and calls the
 * kernel (byval parameters are passed their bytes' address). */
static void
build_entry(LLVMModuleRef mod, LLVMValueRef kernel)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
	LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(ctx), &ptr, 1, 0);
	LLVMValueRef f = LLVMAddFunction(mod, "avesim_entry", ft);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
	unsigned n = LLVMCountParams(kernel);
	LLVMValueRef *args = calloc(n + 1, sizeof *args);
	unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
	LLVMTypeRef kt = LLVMGlobalGetValueType(kernel);
	LLVMTypeRef *pt = calloc(n + 1, sizeof *pt);
	LLVMGetParamTypes(kt, pt);
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(ctx), i, 0);
		LLVMValueRef slot = LLVMBuildGEP2(b, ptr, LLVMGetParam(f, 0), &idx, 1, "");
		LLVMValueRef vp = LLVMBuildLoad2(b, ptr, slot, "");
		bool bv = LLVMGetEnumAttributeAtIndex(kernel, i + 1, byval) != NULL;
		/* A byval parameter (a TMA map) becomes a plain pointer to the launch's copy: the
		 * kernel only reads it. */
		if (bv)
			LLVMRemoveEnumAttributeAtIndex(kernel, i + 1, byval);
		args[i] = bv ? vp : LLVMBuildLoad2(b, pt[i], vp, "");
	}
	LLVMBuildCall2(b, kt, kernel, args, n, "");
	LLVMBuildRetVoid(b);
	LLVMDisposeBuilder(b);
	free(args);
	free(pt);
}

/* Helpers the host's code generator may call for bfloat conversions (no libgcc of this
 * vintage has them): round to nearest even, NaN kept quiet. */
static const char bf16_helpers[] =
    "\ndefine weak bfloat @__truncsfbf2(float %x) {\n"
    "  %i = bitcast float %x to i32\n"
    "  %a = and i32 %i, 2147483647\n"
    "  %nan = icmp ugt i32 %a, 2139095040\n"
    "  %h = lshr i32 %i, 16\n"
    "  %l = and i32 %h, 1\n"
    "  %bias = add i32 %l, 32767\n"
    "  %r = add i32 %i, %bias\n"
    "  %rh = lshr i32 %r, 16\n"
    "  %q = or i32 %h, 64\n"
    "  %s = select i1 %nan, i32 %q, i32 %rh\n"
    "  %t = trunc i32 %s to i16\n"
    "  %b = bitcast i16 %t to bfloat\n"
    "  ret bfloat %b\n"
    "}\n"
    "define weak bfloat @__truncdfbf2(double %x) {\n"
    "  %f = fptrunc double %x to float\n"
    "  %b = call bfloat @__truncsfbf2(float %f)\n"
    "  ret bfloat %b\n"
    "}\n";

static bool
take_error(LLVMErrorRef e, const char *what, char *err, size_t errlen)
{
	if (!e)
		return true;
	char *m = LLVMGetErrorMessage(e);
	fail(err, errlen, "%s: %s", what, m);
	LLVMDisposeErrorMessage(m);
	return false;
}


static void
sim_llvm_init(void)
{
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
	LLVMInitializeNativeAsmParser();
}

SimProgram *
sim_program_create(const TargetInfo *t, const char *ir, size_t len, const char *name, char *err,
                   size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, sim_llvm_init);
	SimProgram *p = calloc(1, sizeof *p);
	pthread_mutex_init(&p->mu, NULL);
	p->target = t;
	p->model = t->vendor == TARGET_VENDOR_NVIDIA ? &sim_nvptx_model : &sim_amdgpu_model;
	p->name = strdup(name);
	/* Shared memory / LDS: one window per program, below 2 GiB so that the 32-bit shared
	 * addresses the code computes are host addresses, and aligned to its 256 KiB size so that
	 * an address's low 18 bits (what a wgmma descriptor keeps) are its offset in the window. */
	p->smem_cap = (size_t)1 << 18;
	p->map_len = 2 * p->smem_cap;
	p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		fail(err, errlen, "cannot map the simulated shared memory below 2 GiB");
		sim_program_free(p);
		return NULL;
	}
	p->smem = (uint8_t *)(((uintptr_t)p->map + p->smem_cap - 1) & ~(uintptr_t)(p->smem_cap - 1));
	char *text = host_text(ir, len);
	Buf all = {0};
	put(&all, text, strlen(text));
	put(&all, bf16_helpers, sizeof bf16_helpers - 1);
	free(text);

	char *triple = LLVMGetDefaultTargetTriple();
	char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
	LLVMTargetRef tgt;
	char *msg = NULL;
	if (LLVMGetTargetFromTriple(triple, &tgt, &msg)) {
		fail(err, errlen, "no host target in this LLVM: %s", msg ? msg : "");
		LLVMDisposeMessage(msg);
		LLVMDisposeMessage(triple);
		LLVMDisposeMessage(cpu);
		LLVMDisposeMessage(feat);
		free(all.s);
		sim_program_free(p);
		return NULL;
	}
	LLVMTargetMachineRef tm = LLVMCreateTargetMachine(tgt, triple, cpu, feat,
	                                                  LLVMCodeGenLevelLess, LLVMRelocPIC,
	                                                  LLVMCodeModelDefault);
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	char *dl = LLVMCopyStringRepOfTargetData(td);
	LLVMDisposeTargetData(td);

	LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
	LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
	LLVMMemoryBufferRef mb =
	    LLVMCreateMemoryBufferWithMemoryRangeCopy(all.s, all.n, "simulated-kernel");
	free(all.s);
	LLVMModuleRef mod = NULL;
	bool ok = true;
	if (LLVMParseIRInContext(ctx, mb, &mod, &msg)) {
		fail(err, errlen, "the kernel's LLVM IR does not parse for the host: %s", msg);
		LLVMDisposeMessage(msg);
		ok = false;
	}
	LLVMValueRef kernel = ok ? LLVMGetNamedFunction(mod, name) : NULL;
	if (ok && !kernel) {
		fail(err, errlen, "no function '%s' in the kernel's LLVM IR", name);
		ok = false;
	}
	if (ok) {
		LLVMSetDataLayout(mod, dl);
		LLVMSetTarget(mod, triple);
		LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
		LLVMTypeRef pa[3] = {LLVMInt32TypeInContext(ctx), ptr, ptr};
		LLVMTypeRef sct = LLVMFunctionType(LLVMVoidTypeInContext(ctx), pa, 3, 0);
		LLVMValueRef sc = LLVMAddFunction(mod, "avesim_call", sct);
		for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && ok; f = LLVMGetNextFunction(f)) {
			LLVMSetFunctionCallConv(f, LLVMCCallConv);
			if (!LLVMIsDeclaration(f))
				ok = rewrite_function(p, mod, f, sc, sct, err, errlen);
		}
		/* Calls to kernels and helpers: their calling convention was the target's. */
		for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && ok; f = LLVMGetNextFunction(f))
			for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb;
			     bb = LLVMGetNextBasicBlock(bb))
				for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;
				     i = LLVMGetNextInstruction(i))
					if (LLVMIsACallInst(i))
						LLVMSetInstructionCallConv(i, LLVMCCallConv);
		/* The renamed intrinsics are declarations no call uses now. */
		LLVMValueRef nf;
		for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && ok; f = nf) {
			nf = LLVMGetNextFunction(f);
			size_t n;
			const char *nm = LLVMGetValueName2(f, &n);
			if (n > 7 && !strncmp(nm, "avesim.", 7) && !LLVMGetFirstUse(f))
				LLVMDeleteFunction(f);
		}
		if (ok)
			build_entry(mod, kernel);
		if (ok && LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
			fail(err, errlen, "internal error: the simulated module does not verify: %s", msg);
			ok = false;
		}
		if (msg)
			LLVMDisposeMessage(msg);
		msg = NULL;
	}
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(feat);
	LLVMDisposeMessage(dl);
	if (!ok) {
		if (mod)
			LLVMDisposeModule(mod);
		LLVMOrcDisposeThreadSafeContext(tsc);
		LLVMDisposeTargetMachine(tm);
		sim_program_free(p);
		return NULL;
	}
	LLVMOrcJITTargetMachineBuilderRef jtmb =
	    LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm);
	LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, jtmb);
	LLVMOrcLLJITRef jit = NULL;
	ok = take_error(LLVMOrcCreateLLJIT(&jit, jb), "cannot create the JIT", err, errlen);
	p->jit = jit;
	if (ok) {
		LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
		LLVMOrcCSymbolMapPair syms[2] = {
		    {LLVMOrcLLJITMangleAndIntern(jit, "avesim_call"),
		     {(LLVMOrcJITTargetAddress)(uintptr_t)sim_dispatch,
		      {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0}}},
		    {LLVMOrcLLJITMangleAndIntern(jit, "ave_smem"),
		     {(LLVMOrcJITTargetAddress)(uintptr_t)p->smem,
		      {LLVMJITSymbolGenericFlagsExported, 0}}},
		};
		ok = take_error(LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(syms, 2)),
		                "cannot define the simulator's symbols", err, errlen);
		LLVMOrcDefinitionGeneratorRef gen = NULL;
		if (ok)
			ok = take_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
			                    &gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL),
			                "cannot search the process's symbols", err, errlen);
		if (ok)
			LLVMOrcJITDylibAddGenerator(jd, gen);
		LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
		mod = NULL;
		if (ok)
			ok = take_error(LLVMOrcLLJITAddLLVMIRModule(jit, jd, tsm),
			                "cannot add the kernel to the JIT", err, errlen);
		else
			LLVMOrcDisposeThreadSafeModule(tsm);
		LLVMOrcExecutorAddress addr = 0;
		if (ok)
			ok = take_error(LLVMOrcLLJITLookup(jit, &addr, "avesim_entry"),
			                "cannot compile the simulated kernel", err, errlen);
		p->entry = (void (*)(void **))(uintptr_t)addr;
	} else {
		LLVMDisposeModule(mod);
	}
	LLVMOrcDisposeThreadSafeContext(tsc);
	if (!ok) {
		sim_program_free(p);
		return NULL;
	}
	return p;
}

void
sim_program_free(SimProgram *p)
{
	if (!p)
		return;
	if (p->jit)
		LLVMOrcDisposeLLJIT((LLVMOrcLLJITRef)p->jit);
	for (int i = 0; i < p->ncalls; i++) {
		if (p->calls[i]->prep && p->model->unbind)
			p->model->unbind(p->calls[i]);
		free(p->calls[i]->name);
		free(p->calls[i]->text);
		free(p->calls[i]->cons);
		free(p->calls[i]);
	}
	free(p->calls);
	if (p->map)
		munmap(p->map, p->map_len);
	pthread_mutex_destroy(&p->mu);
	free(p->name);
	free(p);
}
