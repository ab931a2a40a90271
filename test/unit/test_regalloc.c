/* test_regalloc.c — the register plan's proof must be able to fail: plans regalloc builds are
 * proved, and forged ones (two live tiles given the same slots, a tile outside its budget, budgets
 * that break NVIDIA's setmaxnreg rules or AMDGPU's occupancy) are refused by Z3 with a
 * counterexample naming the values and the point. */
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

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	Log log = {0};
	ir_diag_set_handler(c, log_diag, &log);
	test_overlap(c, &log);
	test_roles(c);
	test_amdgpu(c);
	ir_ctx_free(c);
	return unit_summary();
}
