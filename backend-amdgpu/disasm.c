/* disasm.c — an independent reading of an AMDGPU kernel's machine code (SPEC 5.10, docs/
 * regalloc.md): LLVM's disassembler over the kernel symbol's bytes in the HSACO, scanned for the
 * highest VGPR, AGPR and SGPR an instruction names and for the instructions that touch scratch
 * memory. The code object's metadata note and kernel descriptor say what the compiler meant the
 * kernel to use; this says what its instructions do use, and read_back (codegen.c) compares them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>

#include "../regalloc/regalloc.h"
#include "amdgpu.h"

/* Notes the registers named by one register operand starting at p ("v7", "v[4:7]", "a[0:15]",
 * "s[36:51]"); returns the text after it. */
static const char *
operand(const char *p, AmdgpuScan *s)
{
	char kind = p[0];
	int *hi = kind == 'v' ? &s->vgprs : kind == 'a' ? &s->agprs : &s->sgprs;
	char *e;
	long a, b;
	if (p[1] == '[') {
		a = strtol(p + 2, &e, 10);
		if (e == p + 2 || *e != ':')
			return p + 1;
		b = strtol(e + 1, &e, 10);
		if (*e != ']')
			return p + 1;
		e++;
	} else {
		a = b = strtol(p + 1, &e, 10);
		if (e == p + 1)
			return p + 1;
	}
	if (b < a || b > 4096)
		return e;
	if ((int)b + 1 > *hi)
		*hi = (int)b + 1;
	return e;
}

/* One instruction's text: its register operands, and whether it addresses scratch through the
 * scratch_* (flat scratch) instructions, which is how gfx942 (architected flat scratch) reaches
 * it. gfx90a's spills go through MUBUF with the private segment's resource, and nothing in an
 * instruction's text tells that resource from one the kernel built itself (the compiler reuses
 * s[0:3] for its own buffers when there is no scratch): there the descriptor and metadata say
 * whether the kernel has scratch, not this scan. */
static void
scan_text(const char *t, AmdgpuScan *s)
{
	while (isspace((unsigned char)*t))
		t++;
	const char *m = t;
	while (*t && !isspace((unsigned char)*t))
		t++;
	size_t ml = (size_t)(t - m);
	if (ml > 8 && !strncmp(m, "scratch_", 8))
		s->scratch++;
	for (const char *p = t; *p;) {
		if (*p == '/' && p[1] == '/')
			break; /* a comment: the encoding */
		bool start = p == t || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		if (start && (*p == 'v' || *p == 'a' || *p == 's') &&
		    (isdigit((unsigned char)p[1]) || (p[1] == '[' && isdigit((unsigned char)p[2])))) {
			p = operand(p, s);
			continue;
		}
		p++;
	}
}

bool
amdgpu_scan_code(const unsigned char *code, uint64_t len, const char *cpu, AmdgpuScan *out,
                 char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	LLVMInitializeAMDGPUTargetInfo();
	LLVMInitializeAMDGPUTargetMC();
	LLVMInitializeAMDGPUDisassembler();
	LLVMDisasmContextRef dc = LLVMCreateDisasmCPU("amdgcn-amd-amdhsa", cpu, NULL, 0, NULL, NULL);
	if (!dc) {
		snprintf(err, errlen, "LLVM has no AMDGPU disassembler for '%s'", cpu);
		return false;
	}
	char text[512];
	uint64_t at = 0;
	bool ok = true;
	while (at < len) {
		size_t n = LLVMDisasmInstruction(dc, (uint8_t *)(uintptr_t)(code + at), len - at, at, text,
		                                 sizeof text);
		if (!n) {
			/* Padding after s_endpgm (s_code_end fills with s_nop; zeros are not code). */
			bool zeros = true;
			for (uint64_t i = at; i < len && zeros; i++)
				zeros = !code[i];
			if (!zeros) {
				snprintf(err, errlen, "the code at offset %llu is not a valid instruction",
				         (unsigned long long)at);
				ok = false;
			}
			break;
		}
		scan_text(text, out);
		out->insns++;
		at += n;
	}
	LLVMDisasmDispose(dc);
	return ok;
}

bool
amdgpu_scan_check(const AmdgpuScan *s, int vgprs, int agprs, int accum_offset, int64_t scratch,
                  char *why, size_t len)
{
	/* The unified file of gfx90a / gfx942: VGPRs below accum_offset, AGPRs from it. */
	if (s->vgprs > accum_offset) {
		snprintf(why, len, "its code uses v%d, but the descriptor puts the AGPRs from register "
		         "%d on", s->vgprs - 1, accum_offset);
		return false;
	}
	if (accum_offset + s->agprs > vgprs && s->agprs) {
		snprintf(why, len, "its code uses a%d, but the descriptor allocates %d registers per lane "
		         "with AGPRs from %d", s->agprs - 1, vgprs, accum_offset);
		return false;
	}
	if (s->vgprs > vgprs) {
		snprintf(why, len, "its code uses v%d, but the descriptor allocates %d registers per lane",
		         s->vgprs - 1, vgprs);
		return false;
	}
	if (agprs >= 0 && s->agprs > agprs) {
		snprintf(why, len, "its code uses a%d, but the metadata counts %d AGPRs", s->agprs - 1,
		         agprs);
		return false;
	}
	if (s->scratch && !scratch) {
		snprintf(why, len, "%d of its instructions access scratch memory, but the kernel has "
		         "none allocated", s->scratch);
		return false;
	}
	return true;
}
