/* registry.c — the table of passes that ave-opt and the driver run by name. */
#include "passes.h"

const IrPass pass_registry[] = {
#define PASS(name, fn, summary) {name, summary, fn},
#include "passes.def"
#undef PASS
};

const int pass_registry_count = sizeof pass_registry / sizeof pass_registry[0];
