/* pass.c — the pass manager.
 *
 *   .ave ──parse──▶ IR ──verify──▶ pass 1 ─▶ [verify] ─▶ pass 2 ─▶ [verify] ─▶ ... ─▶ print
 *                                    │                     │
 *                                    └─ --print-after-all ─┴─ --time-passes
 *
 * A pipeline is a comma-separated list of registered pass names. Every pass leaves IR that
 * verifies; with verify_each the manager checks that after each pass and names the pass that
 * broke it. */
#include <string.h>
#include <time.h>

#include "ir.h"

double
ir_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const IrPass *
ir_pass_find(const IrPass *reg, int n, const char *name, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(reg[i].name) == len && !memcmp(reg[i].name, name, len))
			return &reg[i];
	return NULL;
}

bool
ir_run_pipeline(IrModule *m, const IrPass *reg, int npass, const char *pipeline,
		const IrPassOpts *o)
{
	IrCtx *c = m->ctx;
	FILE *dump = o && o->dump ? o->dump : stderr;
	IrLoc none = {0, 0, 0};
	enum { MAXP = 64 };
	const IrPass *plan[MAXP];
	int n = 0;

	/* Resolve every name first so that a typo fails before any pass runs. */
	for (const char *p = pipeline ? pipeline : ""; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		while (len && *p == ' ')
			p++, len--;
		while (len && p[len - 1] == ' ')
			len--;
		if (!len) {
			ir_error(c, none, "empty pass name in the pipeline '%s'", pipeline);
			return false;
		}
		{
			const IrPass *pass = ir_pass_find(reg, npass, p, len);
			if (!pass) {
				ir_error(c, none, "unknown pass '%.*s' (see --help for the list)", (int)len, p);
				return false;
			}
			if (n == MAXP) {
				ir_error(c, none, "pipeline is longer than %d passes", MAXP);
				return false;
			}
			plan[n++] = pass;
		}
		p = e ? e + 1 : p + strlen(p);
	}

	double total = 0;
	IrPassTiming times[MAXP];
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		const char *saved = c->code;
		c->code = plan[i]->name;
		int errs = c->nerrors;
		double t0 = ir_now();
		ok = plan[i]->run(m, o) && c->nerrors == errs;
		double dt = ir_now() - t0;
		c->code = saved;
		times[i] = (IrPassTiming){plan[i]->name, dt};
		total += dt;
		if (ok && o && o->verify_each && !ir_verify(m)) {
			ir_error(c, none, "IR does not verify after pass '%s'", plan[i]->name);
			ok = false;
		}
		if (o && o->print_after_all) {
			fprintf(dump, "// ----- IR after %s%s -----\n", plan[i]->name, ok ? "" : " (failed)");
			ir_module_print(m, dump, NULL);
		}
		if (!ok)
			n = i + 1;
	}
	if (o && o->time_passes) {
		fputs("===-------------------------------------------------------------===\n", dump);
		fputs("                       ave pass execution timing\n", dump);
		fputs("===-------------------------------------------------------------===\n", dump);
		fprintf(dump, "  Total: %.4f ms\n", total * 1e3);
		fputs("   wall (ms)    %   pass\n", dump);
		for (int i = 0; i < n; i++)
			fprintf(dump, "  %10.4f  %5.1f%%  %s\n", times[i].seconds * 1e3,
				total > 0 ? 100.0 * times[i].seconds / total : 0.0, times[i].name);
	}
	return ok;
}
