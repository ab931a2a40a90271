/* registry.c — the table of passes that ave-opt, the driver and libave run by name, and the
 * default pipeline they all compile with.
 *
 *   .ave ─parse─▶ IR ─verify─▶ canonicalize ─▶ cse ─▶ dce ─▶ overlap ─▶ warp-specialize
 *        ─▶ pipeline ─▶ prefetch ─▶ check-invariants ─▶ regalloc ─▶ smem-alloc ─▶ lower/ (LLVM IR, backend
 *        hooks)
 *
 * warp-specialize comes before pipeline (SPEC §1 draws them the other way): both start from
 * the loop with `stages` (SPEC 5.7), and a loop warp-specialize splits into roles no longer
 * carries it, so pipeline takes the loops it left (docs/passes.md).
 *
 * On the host target the interpreter runs the program as written: only overlap (which adds the
 * communication a multi-rank run needs) and the checker run. */
#include <stdio.h>
#include <string.h>

#include "passes.h"

const IrPass pass_registry[] = {
#define PASS(name, fn, summary, options) {name, summary, fn, options},
#include "passes.def"
#undef PASS
};

const int pass_registry_count = sizeof pass_registry / sizeof pass_registry[0];

/* The default pipeline: SPEC §1's order, warp-specialize ahead of pipeline (above). */
static const struct {
	const char *name;
	bool host;  /* runs for the host target too */
	bool check; /* the invariant checker (dropped by --no-check) */
} pipeline[] = {
    {"canonicalize", false, false},    {"cse", false, false},
    {"dce", false, false},             {"overlap", true, false},
    {"warp-specialize", false, false},
    {"pipeline", false, false},        {"prefetch", false, false},
    {"check-invariants", true, true},  {"regalloc", false, false},
    {"smem-alloc", false, false},
};

char *
pass_expand_pipeline(const TargetInfo *t, bool check, const char *passes, char *buf, size_t n)
{
	char dflt[512];
	pass_default_pipeline(t, check, dflt, sizeof dflt);
	size_t len = 0;
	if (!n)
		return NULL;
	buf[0] = 0;
	/* Entries are separated by commas outside braces (options never hold one). */
	for (const char *p = passes;;) {
		const char *e = p;
		int depth = 0;
		while (*e && (depth || *e != ',')) {
			depth += *e == '{' ? 1 : *e == '}' ? -1 : 0;
			e++;
		}
		size_t w = (size_t)(e - p);
		const char *text = p;
		if (w == 7 && !strncmp(p, "default", 7)) {
			text = dflt;
			w = strlen(dflt);
		}
		if (len + w + 2 > n)
			return NULL;
		memcpy(buf + len, text, w);
		len += w;
		if (!*e)
			break;
		buf[len++] = ',';
		p = e + 1;
	}
	buf[len] = 0;
	return buf;
}

char *
pass_default_pipeline(const TargetInfo *t, bool check, char *buf, size_t n)
{
	size_t len = 0;
	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof pipeline / sizeof pipeline[0]; i++) {
		if ((pipeline[i].check && !check) || (t && t->vendor == TARGET_VENDOR_HOST && !pipeline[i].host))
			continue;
		int w = snprintf(buf + len, n > len ? n - len : 0, "%s%s", len ? "," : "", pipeline[i].name);
		if (w > 0)
			len += (size_t)w;
	}
	return buf;
}
