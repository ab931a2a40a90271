/* ave-opt — parses `.ave`, verifies it, runs a pipeline of passes and prints the result.
 * The test tool: --verify-diagnostics checks `expected-error` annotations, --split-input-file
 * treats `// -----` separated chunks as independent inputs. */
#include <stdlib.h>
#include <string.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"
#include "diagcheck.h"

typedef struct Opts {
	const char *input, *output, *passes;
	bool split, verify_diags, generic, locations, no_verify;
	IrPassOpts po;
} Opts;

static const char usage_text[] =
	      "usage: ave-opt [options] [FILE]   (FILE defaults to standard input)\n"
	      "\n"
	      "options:\n"
	      "  --passes=a,b,c              run these passes in order ('default': the pipeline 'ave\n"
	      "                              compile' runs for --target)\n"
	      "  --print-after-all           print the IR after every pass (to stderr)\n"
	      "  --time-passes               report the wall time of each pass (to stderr)\n"
	      "  --no-verify-each            do not verify the IR after each pass\n"
	      "  --no-verify                 do not verify the input either (to study the verifier)\n"
	      "  --target=T                  target for passes that need one (see below)\n"
	      "  --verify-diagnostics        check diagnostics against expected-error/warning/note annotations\n"
	      "  --split-input-file          process '// -----' separated chunks independently\n"
	      "  --diagnostics-format=F      text (default) or json\n"
	      "  --print-generic             print without alias names\n"
	      "  --print-locations           append '// line:col' to each op\n"
	      "  -o FILE                     write the output to FILE\n"
	      "  -h, --help                  this help\n"
	      "  --version                   print the version\n";

static void
usage(FILE *f)
{
	fputs(usage_text, f);
	fputs("\npasses:\n", f);
	for (int i = 0; i < pass_registry_count; i++)
		fprintf(f, "  %-26s  %s\n", pass_registry[i].name, pass_registry[i].summary);
	char names[256];
	fprintf(f, "\npass options: --passes='name{key=value ...}' (MLIR's syntax)\n"
		"targets: %s\n", target_names(names, sizeof names, TARGET_ALL, ", "));
}

static int
process(IrCtx *c, DiagSink *sink, Opts *o, const char *name, const char *text, size_t len,
	uint32_t line0, FILE *out)
{
	int errs = c->nerrors;
	IrModule *m = fe_parse(c, name, text, len, line0);
	bool ok = m != NULL;
	if (ok && !o->no_verify)
		ok = ir_verify(m);
	if (ok && o->passes) {
		/* `default` stands for the pipeline ave compile and libave run for --target. */
		char pl[2048];
		if (!pass_expand_pipeline(o->po.target, true, o->passes, pl, sizeof pl)) {
			ir_error(c, (IrLoc){0, 0, 0}, "the pipeline is longer than %zu bytes",
				 sizeof pl - 1);
			ok = false;
		} else {
			ok = ir_run_pipeline(m, pass_registry, pass_registry_count, pl, &o->po);
		}
	}
	if (ok) {
		IrPrintOpts po = {o->generic, o->locations};
		ir_module_print(m, out, &po);
	}
	ir_module_free(m);
	if (o->verify_diags) {
		int bad = diag_verify(sink, name, text, len, line0);
		diag_sink_reset(sink);
		return bad ? 1 : 0;
	}
	return ok && c->nerrors == errs ? 0 : 1;
}

int
main(int argc, char **argv)
{
	Opts o = {0};
	o.po.verify_each = true;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strncmp(a, "--passes=", 9))
			o.passes = a + 9;
		else if (!strcmp(a, "--print-after-all"))
			o.po.print_after_all = true;
		else if (!strcmp(a, "--time-passes"))
			o.po.time_passes = true;
		else if (!strcmp(a, "--no-verify-each"))
			o.po.verify_each = false;
		else if (!strncmp(a, "--target=", 9)) {
			if (!(o.po.target = tool_target("ave-opt", a + 9, TARGET_ALL)))
				return 2;
		}
		else if (!strcmp(a, "--verify-diagnostics"))
			o.verify_diags = true;
		else if (!strcmp(a, "--split-input-file"))
			o.split = true;
		else if (!strcmp(a, "--diagnostics-format=json"))
			json = true;
		else if (!strcmp(a, "--diagnostics-format=text"))
			json = false;
		else if (!strcmp(a, "--print-generic"))
			o.generic = true;
		else if (!strcmp(a, "--print-locations"))
			o.locations = true;
		else if (!strcmp(a, "--no-verify"))
			o.no_verify = true;
		else if (!strcmp(a, "-o") && i + 1 < argc)
			o.output = argv[++i];
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("ave-opt %s\n", AVE_VERSION);
			return 0;
		} else if (a[0] == '-' && a[1]) {
			tool_unknown_option("ave-opt", a, usage_text);
			return 2;
		} else if (!o.input)
			o.input = a;
		else {
			fprintf(stderr, "ave-opt: more than one input file\n");
			return 2;
		}
	}
	if (!o.input)
		o.input = "-";

	IrCtx *c = ir_ctx_new(NULL);
	c->tool = "ave-opt";
	c->input = strcmp(o.input, "-") ? o.input : NULL;
	DiagSink sink = {.c = c, .json = json, .collect = o.verify_diags};
	ir_diag_set_handler(c, diag_sink_handler, &sink);
	size_t len;
	char *text = fe_read_file(c, o.input, &len);
	if (!text) {
		diag_sink_summary(&sink);
		ir_ctx_free(c);
		return 1;
	}
	const char *name = strcmp(o.input, "-") ? o.input : "<stdin>";
	FILE *out = stdout;
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "ave-opt: cannot write '%s'\n", o.output);
		free(text);
		ir_ctx_free(c);
		return 1;
	}
	o.po.dump = stderr;

	int rc = 0;
	if (!o.split) {
		rc = process(c, &sink, &o, name, text, len, 1, out);
	} else {
		/* Chunks end at lines that start with "// -----". */
		const char *p = text, *end = text + len, *start = text;
		uint32_t line = 1, start_line = 1;
		bool first = true;
		while (p <= end) {
			const char *eol = memchr(p, '\n', (size_t)(end - p));
			bool sep = !strncmp(p, "// -----", 8) && (size_t)(end - p) >= 8;
			if (sep || !eol) {
				const char *chunk_end = sep ? p : end;
				if (!first)
					fputs("// -----\n", out);
				first = false;
				rc |= process(c, &sink, &o, name, start, (size_t)(chunk_end - start), start_line,
					      out);
				if (!eol)
					break;
				start = eol + 1;
				start_line = line + 1;
			}
			if (!eol)
				break;
			p = eol + 1;
			line++;
		}
	}
	if (out != stdout)
		fclose(out);
	diag_sink_summary(&sink);
	diag_sink_reset(&sink);
	free(sink.rec);
	free(text);
	ir_ctx_free(c);
	return rc;
}
