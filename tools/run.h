/* run.h — running kernels from the command line on a device through the public API: shared by
 * `ave run --device=cuda|hip` and `ave-rt-run` (bundles, linked without LLVM or Z3). */
#ifndef AVE_RUN_H
#define AVE_RUN_H

#include "../include/ave/ave.h"
#include "../ir/ir.h"
#include "../runtime/interp/interp.h"

typedef struct RunArg {
	const char *name, *value;
	bool used;
} RunArg;

typedef struct RunRequest {
	AveContext ctx;
	AveKernel kernel;
	const char *device;       /* "host", "cuda" or "hip" */
	int64_t grid[3];
	int nargs;
	IrValue **params;         /* the kernel's arguments (types and names), or NULL */
	IrType **types;           /* their types when params is NULL (bundles) */
	const char **names;
	const RunArg *args;       /* --arg NAME=VALUE */
	int nvalues;
	const RunArg *outs;       /* --out NAME=FILE.npy */
	int nouts;
	int schedules;            /* host device */
	uint64_t seed;
	bool stats;
	int repeat;               /* launches to time (the first, which loads the kernel, excluded) */
	double flops;             /* work of one launch, to report TFLOP/s */
} RunRequest;

/* Makes the values, uploads them, launches, downloads and writes the outputs. Returns the exit
 * status (0, 1 for an error of the run, 2 for a usage error); messages on stderr. */
int run_on_device(IrCtx *c, const RunRequest *r);
/* The argument types of a compiled kernel, from its metadata (for bundles). */
bool run_kernel_types(IrCtx *c, AveKernel k, IrType **types, const char **names);
/* Prints an AveDiagnostic like the tools do. */
void run_print_diag(AveDiagnostic d, void *ud);

#endif
