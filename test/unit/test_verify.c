/* test_verify.c — what only edited IR can show: the verifier's dominance check (a use moved
 * above its definition, out of its region, into another kernel), and the pass manager's
 * verification after each pass, which names the pass that broke the IR. */
#include <string.h>

#include "frontend.h"
#include "ir.h"
#include "regalloc.h"
#include "unit.h"

typedef struct Log {
	char msg[8][256];
	int n;
} Log;

static void
log_diag(void *ud, const IrDiag *d)
{
	Log *l = ud;
	if (d->sev == IR_SEV_ERROR && l->n < 8)
		snprintf(l->msg[l->n++], sizeof l->msg[0], "%s", d->msg);
}

static bool
logged(const Log *l, const char *text)
{
	for (int i = 0; i < l->n; i++)
		if (strstr(l->msg[i], text))
			return true;
	return false;
}

static const char *src =
	"ave.kernel @k(%a: i32, %c: i1) {threads = 32} {\n"
	"  %x = ave.add %a, %a : i32\n"
	"  %y = ave.mul %x, %a : i32\n"
	"  ave.if %c {\n"
	"    %z = ave.add %y, %y : i32\n"
	"    %w = ave.mul %z, %z : i32\n"
	"  }\n"
	"  ave.return\n"
	"}\n"
	"ave.kernel @k2(%b: i32) {threads = 32} {\n"
	"  %v = ave.neg %b : i32\n"
	"  ave.return\n"
	"}\n";

static IrModule *
fresh(IrCtx *c)
{
	IrModule *m = fe_parse(c, "verify.ave", src, strlen(src), 1);
	CHECK(m && ir_verify(m));
	return m;
}

static void
test_dominance(IrCtx *c, Log *log)
{
	/* A use moved above its definition in the same block. */
	IrModule *m = fresh(c);
	IrOp *k = m->body->first;
	IrOp *x = k->reg[0].block->first, *y = x->next;
	ir_op_unlink(y);
	ir_op_insert_before(x, y);
	log->n = 0;
	CHECK(!ir_verify(m));
	CHECK(logged(log, "'ave.mul' uses '%x', which does not dominate it"));
	ir_module_free(m);

	/* A use moved out of the region that defines its operand. */
	m = fresh(c);
	k = m->body->first;
	IrOp *iff = k->reg[0].block->first->next->next;
	IrOp *z = iff->reg[0].block->first, *w = z->next;
	ir_op_unlink(w);
	ir_op_insert_after(iff, w);
	log->n = 0;
	CHECK(!ir_verify(m));
	CHECK(logged(log, "'ave.mul' uses '%z', which does not dominate it"));
	ir_module_free(m);

	/* An op moved into another kernel: kernels see no values of other kernels. */
	m = fresh(c);
	k = m->body->first;
	IrOp *k2 = k->next;
	y = k->reg[0].block->first->next;
	/* Make %y's users read %a instead so that only the moved op is wrong. */
	ir_replace_all_uses(&y->res[0], k->reg[0].block->arg[0]);
	ir_op_unlink(y);
	ir_block_prepend(k2->reg[0].block, y);
	log->n = 0;
	CHECK(!ir_verify(m));
	CHECK(logged(log, "uses '%x', which does not dominate it"));
	/* The first kernel is still fine on its own: the error is in @k2 only. */
	CHECK_EQ(log->n, 1);
	ir_module_free(m);

	/* Moving a use down, below its definition, is fine. */
	m = fresh(c);
	k = m->body->first;
	x = k->reg[0].block->first;
	y = x->next;
	IrOp *ret = k->reg[0].block->last;
	ir_op_unlink(y);
	ir_op_insert_before(ret, y);
	log->n = 0;
	CHECK(!ir_verify(m)); /* %z inside the ave.if read %y, which now comes after it */
	CHECK(logged(log, "'ave.add' uses '%y', which does not dominate it"));
	ir_module_free(m);
}

/* ---- the pass manager ---- */

static bool
pass_nothing(IrModule *m, const IrPassOpts *o)
{
	(void)m;
	(void)o;
	return true;
}

/* Breaks the IR: drops the first kernel's terminator. */
static bool
pass_break(IrModule *m, const IrPassOpts *o)
{
	(void)o;
	ir_op_erase(m->body->first->reg[0].block->last);
	return true;
}

/* Reports an error but returns true: the manager still fails. */
static bool
pass_complain(IrModule *m, const IrPassOpts *o)
{
	(void)o;
	ir_error(m->ctx, m->body->first->loc, "complaint");
	return true;
}

static const IrPass registry[] = {
	{"nothing", "does nothing", pass_nothing, ""},
	{"break", "drops a terminator", pass_break, ""},
	{"complain", "reports an error", pass_complain, ""},
};

static void
test_pipeline(IrCtx *c, Log *log)
{
	IrModule *m = fresh(c);
	IrPassOpts po = {.verify_each = true};
	log->n = 0;
	CHECK(ir_run_pipeline(m, registry, 3, "nothing, nothing,nothing", &po));
	CHECK_EQ(log->n, 0);
	CHECK(ir_run_pipeline(m, registry, 3, "", &po));

	/* An unknown name fails before any pass runs. */
	CHECK(!ir_run_pipeline(m, registry, 3, "nothing,brake", &po));
	CHECK(logged(log, "unknown pass 'brake' (see --help for the list)"));

	/* A pass that leaves invalid IR is named. */
	log->n = 0;
	char *dump = NULL;
	size_t dn = 0;
	FILE *f = open_memstream(&dump, &dn);
	IrPassOpts pt = {.verify_each = true, .time_passes = true, .print_after_all = true, .dump = f};
	CHECK(!ir_run_pipeline(m, registry, 3, "nothing,break,nothing", &pt));
	fclose(f);
	CHECK(logged(log, "kernel body must end with 'ave.return'"));
	CHECK(logged(log, "IR does not verify after pass 'break'"));
	/* The pipeline stops there: the dump shows both passes that ran, the second as failed. */
	CHECK(strstr(dump, "// ----- IR after nothing -----") != NULL);
	CHECK(strstr(dump, "// ----- IR after break (failed) -----") != NULL);
	CHECK(strstr(dump, "ave pass execution timing") != NULL);
	CHECK(strstr(dump, "nothing") && strstr(dump, "break"));
	free(dump);
	ir_module_free(m);

	/* Without verification the broken IR goes through; an error from a pass still fails it. */
	m = fresh(c);
	IrPassOpts nv = {.verify_each = false};
	CHECK(ir_run_pipeline(m, registry, 3, "break", &nv));
	log->n = 0;
	CHECK(!ir_run_pipeline(m, registry, 3, "complain", &nv));
	CHECK(logged(log, "complaint"));
	ir_module_free(m);
}

/* The target registry and the register rules read from it (regalloc/). */
static void
test_targets(void)
{
	const TargetInfo *sm80 = &target_table[TARGET_SM_80], *sm90 = &target_table[TARGET_SM_90A];
	const TargetInfo *gfx = &target_table[TARGET_GFX942], *host = &target_table[TARGET_HOST];
	for (int i = 0; i < TARGET_COUNT; i++) {
		CHECK_EQ(target_table[i].id, (TargetId)i);
		CHECK(target_find(target_table[i].name) == &target_table[i]);
	}
	CHECK(!target_find("sm_70") && !target_find(NULL));
	/* An sm_80 cubin runs on an sm_90 device; an sm_90a one only there. */
	CHECK(target_runs_on(sm80, sm90) && target_runs_on(sm90, sm90));
	CHECK(!target_runs_on(sm90, sm80) && !target_runs_on(gfx, sm90) && !target_runs_on(sm80, host));
	CHECK(target_for_cc(90) == sm90 && target_for_cc(89) == sm80 && target_for_cc(100) == sm80);
	CHECK(target_for_cc(75) == NULL);
	char buf[128];
	CHECK(!strcmp(target_names(buf, sizeof buf, TARGET_GPUS, " or "), "sm_80, sm_90a, gfx942 or gfx90a"));
	/* Entry budgets: 65536 / threads, at most 255, down to a multiple of 8 (NVIDIA); what a lane
	 * has when the waves share the SIMDs (AMDGPU); none on the host. */
	CHECK_EQ(ra_entry_regs(sm90, 384), 168);
	CHECK_EQ(ra_entry_regs(sm90, 128), 248);
	CHECK_EQ(ra_entry_regs(sm90, 1024), 64);
	CHECK_EQ(ra_entry_regs(gfx, 256), 512);
	CHECK_EQ(ra_entry_regs(gfx, 1024), 128);
	CHECK_EQ(ra_entry_regs(host, 256), 0);
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	Log log = {.n = 0};
	ir_diag_set_handler(c, log_diag, &log);
	test_dominance(c, &log);
	test_pipeline(c, &log);
	test_targets();
	ir_ctx_free(c);
	return unit_summary();
}
