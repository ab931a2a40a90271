/* pass.c — the pass manager.
 *
 *   .ave ──parse──▶ IR ──verify──▶ pass 1 ─▶ [verify] ─▶ pass 2 ─▶ [verify] ─▶ ... ─▶ print
 *                                    │                     │
 *                                    └─ --print-after-all ─┴─ --time-passes
 *
 * A pipeline is a comma-separated list of registered pass names, each with optional options in
 * MLIR's syntax (`name{key=value key2=value2}`). Every pass leaves IR that
 * verifies; with verify_each the manager checks that after each pass and names the pass that
 * broke it. */
#include <errno.h>
#include <stdlib.h>
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

const char *
ir_pass_arg(const IrPassOpts *o, const char *key)
{
	for (int i = 0; o && i < o->nargs; i++)
		if (!strcmp(o->key[i], key))
			return o->val[i];
	return NULL;
}

bool
ir_pass_arg_int(IrCtx *c, const IrPassOpts *o, const char *pass, const char *key, int64_t dflt,
		int64_t lo, int64_t hi, int64_t *out)
{
	const char *v = ir_pass_arg(o, key);
	*out = dflt;
	if (!v)
		return true;
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (!*v || *end || errno || x < lo || x > hi) {
		ir_error(c, (IrLoc){0, 0, 0}, "option '%s' of pass '%s' takes an integer from %lld to %lld, "
			 "not '%s'", key, pass, (long long)lo, (long long)hi, v);
		return false;
	}
	*out = x;
	return true;
}

/* Whether `key` (n bytes) is one of the space-separated names in `list`. */
static bool
listed(const char *list, const char *key, size_t n)
{
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, " ");
		if (k == n && !memcmp(p, key, n))
			return true;
		p += k;
		p += strspn(p, " ");
	}
	return false;
}

/* One pass of a pipeline: the pass and its options (strings owned by `buf`). */
typedef struct PlanItem {
	const IrPass *pass;
	int nargs;
	const char *key[IR_PASS_MAX_ARGS], *val[IR_PASS_MAX_ARGS];
} PlanItem;

/* Parses the options between the braces of `name{...}` (text, n bytes) into it, copying the
 * strings into the arena. */
static bool
parse_args(IrCtx *c, IrArena *a, const char *pipeline, const char *text, size_t n, PlanItem *it)
{
	IrLoc none = {0, 0, 0};
	for (size_t i = 0; i < n;) {
		while (i < n && text[i] == ' ')
			i++;
		if (i == n)
			break;
		size_t k0 = i;
		while (i < n && text[i] != '=' && text[i] != ' ')
			i++;
		size_t klen = i - k0;
		if (i == n || text[i] != '=' || !klen) {
			ir_error(c, none, "pass '%s': expected 'key=value' in its options, found '%.*s' (in "
				 "'%s')", it->pass->name, (int)(i - k0 ? i - k0 : 1), text + k0, pipeline);
			return false;
		}
		i++;
		size_t v0 = i;
		while (i < n && text[i] != ' ')
			i++;
		if (i == v0) {
			ir_error(c, none, "pass '%s': option '%.*s' has no value", it->pass->name, (int)klen,
				 text + k0);
			return false;
		}
		if (!listed(it->pass->options, text + k0, klen)) {
			if (it->pass->options && *it->pass->options)
				ir_error(c, none, "pass '%s' has no option '%.*s' (it takes: %s)", it->pass->name,
					 (int)klen, text + k0, it->pass->options);
			else
				ir_error(c, none, "pass '%s' takes no options, found '%.*s'", it->pass->name,
					 (int)klen, text + k0);
			return false;
		}
		if (it->nargs == IR_PASS_MAX_ARGS) {
			ir_error(c, none, "pass '%s': more than %d options", it->pass->name, IR_PASS_MAX_ARGS);
			return false;
		}
		it->key[it->nargs] = ir_arena_strndup(a, text + k0, klen);
		it->val[it->nargs] = ir_arena_strndup(a, text + v0, i - v0);
		it->nargs++;
	}
	return true;
}

bool
ir_run_pipeline(IrModule *m, const IrPass *reg, int npass, const char *pipeline,
		const IrPassOpts *o)
{
	IrCtx *c = m->ctx;
	FILE *dump = o && o->dump ? o->dump : stderr;
	IrLoc none = {0, 0, 0};
	enum { MAXP = 64 };
	PlanItem plan[MAXP];
	int n = 0;
	IrArena strs;
	ir_arena_init(&strs, c->al);
	bool parsed = true;

	/* Resolve every name and option first so that a typo fails before any pass runs. */
	for (const char *p = pipeline ? pipeline : ""; *p && parsed;) {
		/* The item ends at a comma outside braces. */
		const char *e = p, *brace = NULL;
		int depth = 0;
		for (; *e && (depth || *e != ','); e++) {
			if (*e == '{' && !depth++)
				brace = brace ? brace : e;
			else if (*e == '}' && depth)
				depth--;
		}
		size_t len = (size_t)(e - p);
		while (len && *p == ' ')
			p++, len--;
		while (len && p[len - 1] == ' ')
			len--;
		size_t nlen = brace && brace < p + len ? (size_t)(brace - p) : len;
		while (nlen && p[nlen - 1] == ' ')
			nlen--;
		if (depth || (brace && p[len - 1] != '}')) {
			ir_error(c, none, "unbalanced '{' in the pipeline '%s'", pipeline);
			parsed = false;
			break;
		}
		if (!nlen) {
			ir_error(c, none, "empty pass name in the pipeline '%s'", pipeline);
			parsed = false;
			break;
		}
		const IrPass *pass = ir_pass_find(reg, npass, p, nlen);
		if (!pass) {
			const char *names[MAXP];
			int nn = 0;
			for (int i = 0; i < npass && nn < MAXP; i++)
				names[nn++] = reg[i].name;
			const char *near = ir_closest(p, nlen, names, nn);
			if (near)
				ir_error(c, none, "unknown pass '%.*s'; did you mean '%s'?", (int)nlen, p, near);
			else
				ir_error(c, none, "unknown pass '%.*s' (see --help for the list)", (int)nlen, p);
			parsed = false;
			break;
		}
		if (n == MAXP) {
			ir_error(c, none, "pipeline is longer than %d passes", MAXP);
			parsed = false;
			break;
		}
		plan[n] = (PlanItem){pass, 0, {0}, {0}};
		if (brace && brace < p + len &&
		    !parse_args(c, &strs, pipeline, brace + 1, (size_t)(p + len - 1 - (brace + 1)), &plan[n])) {
			parsed = false;
			break;
		}
		n++;
		p = *e ? e + 1 : e;
	}
	if (!parsed) {
		ir_arena_free(&strs);
		return false;
	}

	double total = 0;
	IrPassTiming times[MAXP];
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		const char *saved = c->code;
		c->code = plan[i].pass->name;
		int errs = c->nerrors;
		double t0 = ir_now();
		IrPassOpts po = o ? *o : (IrPassOpts){0};
		po.nargs = plan[i].nargs;
		memcpy(po.key, plan[i].key, sizeof po.key);
		memcpy(po.val, plan[i].val, sizeof po.val);
		ok = plan[i].pass->run(m, &po) && c->nerrors == errs;
		double dt = ir_now() - t0;
		c->code = saved;
		times[i] = (IrPassTiming){plan[i].pass->name, dt};
		total += dt;
		if (o && o->after_pass)
			o->after_pass(o->after_pass_ud, plan[i].pass->name, dt);
		if (ok && o && o->verify_each && !ir_verify(m)) {
			ir_error(c, none, "IR does not verify after pass '%s'", plan[i].pass->name);
			ok = false;
		}
		if (o && o->print_after_all) {
			fprintf(dump, "// ----- IR after %s%s -----\n", plan[i].pass->name, ok ? "" : " (failed)");
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
	ir_arena_free(&strs);
	return ok;
}
