/* cmd_check.c — `ave check FILE`: parse, verify and (where available) check invariants. */
#include <string.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "driver.h"

bool
driver_common_opt(DriverCommon *c, const char *a)
{
	if (!strcmp(a, "--diagnostics-format=json")) {
		c->json = true;
		return true;
	}
	if (!strcmp(a, "--diagnostics-format=text")) {
		c->json = false;
		return true;
	}
	return false;
}

IrCtx *
driver_ctx(DriverCommon *o, DiagSink *sink)
{
	IrCtx *c = ir_ctx_new(NULL);
	memset(sink, 0, sizeof *sink);
	sink->c = c;
	sink->json = o->json;
	ir_diag_set_handler(c, diag_sink_handler, sink);
	return c;
}

int
cmd_check(int argc, char **argv)
{
	DriverCommon o = {0};
	for (int i = 1; i < argc; i++) {
		if (driver_common_opt(&o, argv[i]))
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: ave check [--diagnostics-format=text|json] FILE\n"
			     "Parses and verifies FILE; exits 1 if it has errors.");
			return 0;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "ave check: unknown option '%s'\n", argv[i]);
			return 2;
		}
		o.input = argv[i];
	}
	if (!o.input) {
		fputs("ave check: no input file\n", stderr);
		return 2;
	}
	DiagSink sink;
	IrCtx *c = driver_ctx(&o, &sink);
	IrModule *m = fe_parse_file(c, o.input);
	bool ok = m && ir_verify(m);
	ir_module_free(m);
	ir_ctx_free(c);
	return ok ? 0 : 1;
}
