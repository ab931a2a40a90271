/* fuzz_parse.c — libFuzzer target over the text frontend: parse + verify + print, then the
 * round-trip properties of SPEC §3 (the printed text re-parses, verifies and prints the same
 * bytes) and the guarantee of §1 that canonicalize, cse and dce leave IR that does the same
 * (run twice, the second time on their own output).
 * Any violation aborts with a message, so libFuzzer saves the input as a crasher. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "passes.h"

/* Larger inputs only slow fuzzing down; huge and deeply nested inputs have their own lit tests
 * (test/ir/invalid-limits.test). */
enum { FUZZ_MAX_INPUT = 1 << 20 };

typedef struct FuzzDiags {
	int nerr;
	char first[256]; /* the first error, for the abort message */
} FuzzDiags;

static void
quiet_handler(void *ud, const IrDiag *d)
{
	FuzzDiags *f = ud;
	if (d->sev != IR_SEV_ERROR)
		return;
	if (!f->nerr++)
		snprintf(f->first, sizeof f->first, "%u:%u: %s", d->loc.line, d->loc.col, d->msg);
}

/* Prints m into a malloc'd buffer. */
static char *
print_module(IrModule *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	ir_module_print(m, f, NULL);
	fclose(f);
	return buf;
}

/* Reports a broken property with the texts involved and aborts (libFuzzer keeps the input). */
static _Noreturn void
fail(const char *what, const FuzzDiags *d, const char *text)
{
	fprintf(stderr, "ave-fuzz: %s\n", what);
	if (d && d->nerr)
		fprintf(stderr, "ave-fuzz: first error: %s\n", d->first);
	if (text)
		fprintf(stderr, "----- text -----\n%s\n----------------\n", text);
	abort();
}

/* Parses and verifies text that the printer produced; it must be valid and print the same.
 */
static IrModule *
reparse(IrCtx *c, FuzzDiags *d, const char *what, const char *text, size_t len)
{
	d->nerr = 0;
	IrModule *m = fe_parse(c, what, text, len, 1);
	if (!m)
		fail("printed IR does not re-parse", d, text);
	if (!ir_verify(m))
		fail("printed IR does not verify", d, text);
	size_t len2;
	char *again = print_module(m, &len2);
	if (len2 != len || memcmp(again, text, len)) {
		fprintf(stderr, "----- second print -----\n%s\n", again);
		fail("printing is not idempotent (print(parse(print(x))) != print(x))", NULL, text);
	}
	free(again);
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	IrCtx *c = ir_ctx_new(NULL);
	FuzzDiags d = {0};
	ir_diag_set_handler(c, quiet_handler, &d);
	IrModule *m = NULL, *m1 = NULL, *m2 = NULL, *m3 = NULL;
	char *t1 = NULL, *t2 = NULL, *t3 = NULL;

	m = fe_parse(c, "input.ave", (const char *)data, size, 1);
	if (!m) {
		if (!d.nerr)
			fail("the parser failed without an error", NULL, NULL);
		goto done;
	}
	if (!ir_verify(m)) {
		if (!d.nerr)
			fail("the verifier failed without an error", NULL, NULL);
		goto done;
	}
	if (d.nerr)
		fail("errors were reported for IR that parsed and verified", &d, NULL);

	/* Round trip of the valid input. */
	size_t len1, len2, len3;
	t1 = print_module(m, &len1);
	m1 = reparse(c, &d, "print1.ave", t1, len1);

	/* The basic passes keep the IR valid and printable. */
	IrPassOpts po = {.verify_each = true};
	d.nerr = 0;
	if (!ir_run_pipeline(m1, pass_registry, pass_registry_count, "canonicalize,cse,dce", &po))
		fail("canonicalize,cse,dce failed on valid IR", &d, t1);
	t2 = print_module(m1, &len2);
	m2 = reparse(c, &d, "print2.ave", t2, len2);

	/* Running them again on their own output is just as safe. */
	d.nerr = 0;
	if (!ir_run_pipeline(m2, pass_registry, pass_registry_count, "canonicalize,cse,dce", &po))
		fail("canonicalize,cse,dce failed on its own output", &d, t2);
	t3 = print_module(m2, &len3);
	m3 = reparse(c, &d, "print3.ave", t3, len3);

done:
	free(t1);
	free(t2);
	free(t3);
	ir_module_free(m3);
	ir_module_free(m2);
	ir_module_free(m1);
	ir_module_free(m);
	ir_ctx_free(c);
	return 0;
}
