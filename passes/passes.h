/* passes.h — the transformation and analysis passes over the IR, and their registry. */
#ifndef AVE_PASSES_H
#define AVE_PASSES_H

#include "../ir/ir.h"

extern const IrPass pass_registry[];
extern const int pass_registry_count;

#define PASS(name, fn, summary) bool fn(IrModule *m, const IrPassOpts *o);
#include "passes.def"
#undef PASS

/* ---- fold.c: constant folding shared by canonicalize and the interpreter ---- */

/* Folds an integer op (ave.add ... ave.shr, ave.cdiv) of width `bits` (64 for index); false if
 * the op does not fold (division by zero, unknown op). */
bool pass_fold_int(IrOpcode code, int bits, int64_t a, int64_t b, int64_t *out);
/* Wraps v to `bits` (sign-extended; i1 gives 0 or 1). */
int64_t pass_wrap_int(int64_t v, int bits);

#endif
