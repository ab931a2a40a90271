/* test_regalloc.c — the register plan's proof must be able to fail: plans regalloc builds are
 * proved, and forged ones (two live tiles given the same slots, a tile outside its budget, budgets
 * that break NVIDIA's setmaxnreg rules or AMDGPU's occupancy) are refused by Z3 with a
 * counterexample naming the values and the point. And a cubin's own account of a kernel (the
 * .nv.info records of its registers and stack frame) is read from a forged ELF, and a truncated
 * or foreign one gives no figures. */
#include <stdint.h>
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "regalloc.h"
#include "unit.h"

typedef struct Log {
	char msg[8][512];
	char var[8][3][64];
	int n;
} Log;

static void
log_diag(void *ud, const IrDiag *d)
{
	Log *l = ud;
	if (d->sev != IR_SEV_ERROR || l->n >= 8)
		return;
	snprintf(l->msg[l->n], sizeof l->msg[0], "%s", d->msg);
	for (int i = 0; d->cex && i < d->cex->nvar && i < 3; i++)
		snprintf(l->var[l->n][i], sizeof l->var[0][0], "%s=%s", d->cex->var[i].name,
		         d->cex->var[i].value);
	l->n++;
}

/* Two 128x64 f32 tiles live at once over 128 threads: 64 registers each. */
static const char *two_tiles =
    "ave.kernel @two(%A: !ave.tensor<128x64xf32, global>, %C: !ave.tensor<128x64xf32, global>) "
    "{threads = 128} {\n"
    "  %a = ave.load %A[0, 0] : !ave.tile<128x64xf32, reg>\n"
    "  %b = ave.load %A[0, 0] : !ave.tile<128x64xf32, reg>\n"
    "  %c = ave.add %a, %b : !ave.tile<128x64xf32, reg>\n"
    "  ave.store %c into(%C[0, 0])\n"
    "  ave.return\n"
    "}\n";

/* A producer role and two consumer replicas holding a 64x256 f32 accumulator (128 registers). */
static const char *roles =
    "ave.kernel @ws(%A: !ave.tensor<128x64xbf16, global>, %C: !ave.tensor<128x256xf32, global>) "
    "{threads = 384} {\n"
    "  ave.warp_specialize {\n"
    "    ave.role @load warps(4) {\n"
    "      %i = ave.const 0 : index\n"
    "    }\n"
    "    ave.role @mma warps(4) replicate(2) {\n"
    "      %wg = ave.replica_id : index\n"
    "      %z = ave.zeros : !ave.tile<64x256xf32, reg>\n"
    "      %o = ave.exp2 %z : !ave.tile<64x256xf32, reg>\n"
    "      ave.store %o into(%C[%wg * 64, 0])\n"
    "    }\n"
    "  }\n"
    "  ave.return\n"
    "}\n";

static IrModule *
parse(IrCtx *c, const char *src)
{
	IrModule *m = fe_parse(c, "regalloc.ave", src, strlen(src), 1);
	CHECK(m && ir_verify(m));
	return m;
}

/* The plan of the module's first kernel on t, budgets chosen (written into m). */
static void
plan(IrModule *m, const TargetInfo *t, RaPlan *p)
{
	IrOp *k = m->body->first;
	uint32_t n = ir_number_values(k);
	int32_t *regs = malloc(sizeof(int32_t) * (n + 1));
	for (uint32_t i = 0; i <= n; i++)
		regs[i] = -1;
	CHECK(ra_blocked_regs(m->ctx, k, t, regs));
	ra_plan_build(p, m->ctx, k, t, regs, RA_RESERVE);
	free(regs);
	CHECK(ra_plan_budgets(p, m));
}

static int
class_of(RaPlan *p, const char *name)
{
	for (int i = 0; i < p->ntile; i++)
		if (p->tile[i].v->name && !strcmp(p->tile[i].v->name, name))
			return p->tile[i].cls;
	return -1;
}

static int
group_of(RaPlan *p, const char *name)
{
	for (int g = 0; g < p->ngroup; g++)
		if (!strcmp(p->group[g].name, name))
			return g;
	return -1;
}

static bool
has(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

static void
test_overlap(IrCtx *c, Log *log)
{
	IrModule *m = parse(c, two_tiles);
	RaPlan p;
	RaCex cex;
	plan(m, target_find("sm_90a"), &p);
	int a = class_of(&p, "a"), b = class_of(&p, "b");
	CHECK(a >= 0 && b >= 0 && a != b);
	CHECK_EQ(p.cls[a].regs, 64);
	CHECK_EQ(p.group[0].peak, 128);
	CHECK(p.cls[a].slot != p.cls[b].slot);
	CHECK(ra_prove(&p, &cex));
	CHECK(p.proved);

	/* Forged: %b in %a's slots while both are live. */
	p.cls[b].slot = p.cls[a].slot;
	CHECK(!ra_prove(&p, &cex));
	CHECK(!p.proved);
	CHECK_EQ(cex.fail, RA_FAIL_OVERLAP);
	CHECK((cex.a == a && cex.b == b) || (cex.a == b && cex.b == a));
	IrOp *at = ra_point_op(&p, cex.half);
	/* Both are live from %b's definition to the add that reads them. */
	CHECK(at && (at->code == IR_OP_LOAD || at->code == IR_OP_ADD));
	CHECK(ra_class_live(&p, a, cex.half) && ra_class_live(&p, b, cex.half));
	log->n = 0;
	ra_prove_report(&p, &cex);
	CHECK_EQ(log->n, 1);
	CHECK(has(log->msg[0], "register plan of kernel '@two' is not proved"));
	CHECK(has(log->msg[0], "'%a' (slots 0 to 63) and '%b' (slots 0 to 63) are both live"));
	CHECK(!strcmp(log->var[0][0], "value=%a"));
	CHECK(!strcmp(log->var[0][1], "other=%b"));
	CHECK(has(log->var[0][2], "point="));

	/* Forged: %b past the budget. */
	p.cls[b].slot = p.group[0].budget - 8;
	CHECK(!ra_prove(&p, &cex));
	CHECK_EQ(cex.fail, RA_FAIL_RANGE);
	CHECK_EQ(cex.a, b);

	/* Forged: a budget below what is live at once (slots 0..127 kept, budget 120). */
	p.cls[b].slot = 64;
	p.group[0].budget = 120;
	CHECK(!ra_prove(&p, &cex));
	CHECK(cex.fail == RA_FAIL_RANGE || cex.fail == RA_FAIL_PEAK);
	ra_plan_free(&p);
	ir_module_free(m);
}

static void
test_roles(IrCtx *c)
{
	IrModule *m = parse(c, roles);
	RaPlan p;
	RaCex cex;
	plan(m, target_find("sm_90a"), &p);
	int load = group_of(&p, "load"), mma = group_of(&p, "mma");
	CHECK(load > 0 && mma > 0);
	CHECK_EQ(p.group[mma].peak, 128);
	/* 40 for the producer; the pool's rest, in multiples of 8, for the two consumers:
	 * (65536 / 384 rounded down to 8) * 384 = 64512 = 40 * 128 + 232 * 256. */
	CHECK_EQ(p.group[load].budget, 40);
	CHECK_EQ(p.group[mma].budget, 232);
	CHECK(p.group[load].chosen && p.group[mma].chosen);
	CHECK(ra_prove(&p, &cex));

	p.group[mma].budget = 236; /* not a multiple of 8 */
	CHECK(!ra_prove(&p, &cex));
	CHECK_EQ(cex.fail, RA_FAIL_BUDGET);
	CHECK(has(cex.what, "budget 236 is not a multiple of 8"));

	p.group[mma].budget = 232;
	p.group[load].budget = 48; /* 48 * 128 + 232 * 256 > 64512 */
	CHECK(!ra_prove(&p, &cex));
	CHECK_EQ(cex.fail, RA_FAIL_BUDGET);
	CHECK(has(cex.what, "more than the 64512 registers the launch gives"));

	p.group[load].budget = 16; /* below setmaxnreg's 24 */
	CHECK(!ra_prove(&p, &cex));
	CHECK(has(cex.what, "budget 16 is outside [24, 256]"));
	ra_plan_free(&p);
	ir_module_free(m);
}

static void
test_amdgpu(IrCtx *c)
{
	IrModule *m = parse(c, two_tiles);
	RaPlan p;
	RaCex cex;
	plan(m, target_find("gfx942"), &p);
	/* 128 threads are two waves: one per SIMD, 512 VGPRs and AGPRs per lane. */
	CHECK_EQ(p.group[0].budget, 512);
	CHECK(ra_prove(&p, &cex));
	p.group[0].budget = 520;
	CHECK(!ra_prove(&p, &cex));
	CHECK(has(cex.what, "exceeds the 512 VGPRs and AGPRs of a lane"));
	ra_plan_free(&p);
	ir_module_free(m);

	/* 1024 threads: 16 waves, 4 on each SIMD, 128 registers per lane at most (gfx942's table:
	 * 4 waves per EU leave 128). */
	const char *wide =
	    "ave.kernel @wide(%C: !ave.tensor<1024x64xf32, global>) {threads = 1024} {\n"
	    "  %z = ave.zeros : !ave.tile<1024x64xf32, reg>\n"
	    "  %e = ave.exp2 %z : !ave.tile<1024x64xf32, reg>\n"
	    "  ave.store %e into(%C[0, 0])\n"
	    "  ave.return\n"
	    "}\n";
	m = parse(c, wide);
	plan(m, target_find("gfx942"), &p);
	CHECK_EQ(p.group[0].budget, 128);
	CHECK(ra_prove(&p, &cex));
	p.group[0].budget = 136;
	CHECK(!ra_prove(&p, &cex));
	CHECK(has(cex.what, "leaves no room for the 4 waves per SIMD of a 16-wave workgroup"));
	ra_plan_free(&p);
	ir_module_free(m);
}

/* ---- the cubin's own account (.nv.info), read from a forged ELF64 ---- */

static void
put(unsigned char *b, size_t at, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* A section header at index i. */
static void
shdr(unsigned char *e, int i, uint32_t name, uint32_t type, uint64_t off, uint64_t size,
     uint32_t link, uint64_t entsize)
{
	size_t h = 0x200 + (size_t)i * 64;
	put(e, h, name, 4);
	put(e, h + 4, type, 4);
	put(e, h + 0x18, off, 8);
	put(e, h + 0x20, size, 8);
	put(e, h + 0x28, link, 4);
	put(e, h + 0x38, entsize, 8);
}

/* An ELF64 with .shstrtab, .strtab (symbols "k" and "other"), .symtab and .nv.info holding
 * REGCOUNT and FRAME_SIZE records for both (k: 168 registers, a 96-byte frame). */
static size_t
forge_cubin(unsigned char *e)
{
	memset(e, 0, 1024);
	memcpy(e, "\177ELF", 4);
	e[4] = 2; /* ELFCLASS64 */
	e[5] = 1; /* little-endian */
	put(e, 0x28, 0x200, 8); /* e_shoff */
	put(e, 0x3a, 64, 2);    /* e_shentsize */
	put(e, 0x3c, 5, 2);     /* e_shnum */
	put(e, 0x3e, 1, 2);     /* e_shstrndx */
	const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.nv.info";
	memcpy(e + 0x40, shstr, sizeof shstr);
	const char str[] = "\0k\0other";
	memcpy(e + 0x80, str, sizeof str);
	/* .symtab: the null symbol, "k" (index 1), "other" (index 2). */
	put(e, 0xa0 + 24, 1, 4);
	put(e, 0xa0 + 48, 3, 4);
	/* .nv.info: SVAL records {format 4, attribute, size 8, symbol, value}. */
	size_t at = 0x100;
	const uint32_t rec[][3] = {{RA_EIATTR_REGCOUNT, 2, 40}, {RA_EIATTR_REGCOUNT, 1, 168},
				   {RA_EIATTR_FRAME_SIZE, 1, 96}, {RA_EIATTR_FRAME_SIZE, 2, 0}};
	for (int i = 0; i < 4; i++, at += 12) {
		e[at] = 4;
		e[at + 1] = (unsigned char)rec[i][0];
		put(e, at + 2, 8, 2);
		put(e, at + 4, rec[i][1], 4);
		put(e, at + 8, rec[i][2], 4);
	}
	shdr(e, 1, 1, 3, 0x40, sizeof shstr, 0, 0);      /* .shstrtab */
	shdr(e, 2, 11, 3, 0x80, sizeof str, 0, 0);       /* .strtab */
	shdr(e, 3, 19, 2, 0xa0, 72, 2, 24);              /* .symtab */
	shdr(e, 4, 27, 0x70000000, 0x100, 48, 0, 0);     /* .nv.info */
	return 0x200 + 5 * 64;
}

static void
test_cubin(void)
{
	unsigned char e[1024];
	size_t len = forge_cubin(e);
	CHECK_EQ(ra_cubin_regcount(e, len, "k"), 168);
	CHECK_EQ(ra_cubin_frame(e, len, "k"), 96);
	CHECK_EQ(ra_cubin_regcount(e, len, "other"), 40);
	CHECK_EQ(ra_cubin_frame(e, len, "other"), 0);
	CHECK_EQ(ra_cubin_regcount(e, len, "missing"), -1);
	CHECK_EQ(ra_cubin_attr(e, len, "k", 0x23), -1); /* no such record */
	/* Cut short (the section table gone) or not an ELF: no figures, no crash. */
	CHECK_EQ(ra_cubin_frame(e, 0x180, "k"), -1);
	e[1] = 'X';
	CHECK_EQ(ra_cubin_regcount(e, len, "k"), -1);
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	Log log = {0};
	ir_diag_set_handler(c, log_diag, &log);
	test_overlap(c, &log);
	test_roles(c);
	test_amdgpu(c);
	test_cubin();
	ir_ctx_free(c);
	return unit_summary();
}
