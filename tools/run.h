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
	const char *tool;         /* "ave run", "ave-rt-run": names its messages */
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
	int world;                /* ranks (a world launch when > 1 or the kernel has symmetric
				     buffers; NAME@R, '{r}' and '@SYM' as for the interpreter) */
	int launches;             /* world launches in a row (epochs 1..N) */
} RunRequest;

/* What a run on the host device says after the launch, the same from `ave run` and `ave-rt-run`:
 * with --print-stats (or when it took over 10 s, then on stderr) the interpreter's statistics,
 * "N schedules (seeds S to T) agree" after several schedules, or which seed failed and how to
 * replay it. `asked` is the number of schedules asked for, `ok` whether the run succeeded. */
void run_report_interp(const char *tool, const InterpStats *s, const int64_t grid[3],
		       uint64_t seed, int asked, bool ok, bool print_stats);
/* Makes the values, uploads them, launches, downloads and writes the outputs. Returns the exit
 * status (0, 1 for an error of the run, 2 for a usage error); messages on stderr. */
int run_on_device(IrCtx *c, const RunRequest *r);
/* The argument types of a compiled kernel, from its metadata (for bundles). */
bool run_kernel_types(IrCtx *c, AveKernel k, IrType **types, const char **names);
/* The user data of run_print_diag: the tool's name and the counts for the closing summary. */
typedef struct RunDiag {
	const char *tool;
	int nerrors, nwarnings;
} RunDiag;
/* `v` with every "{r}" replaced by rank q (malloc'd). */
char *run_subst_rank(const char *v, int q);
/* Where --out FILE goes for rank q: '{r}' replaced, else FILE.rankQ.npy when there are ranks
 * (malloc'd). */
char *run_out_path(const char *v, int q, int world);
/* The --arg or --out for NAME ("%x" as "x", a buffer as "@S") on rank q: NAME@q, else NAME. */
RunArg *run_find_named(RunArg *a, int n, const char *name, int q);
/* Splits "NAME@R" into NAME (len) and R; R = -1 without a rank. False when R is not a number. */
bool run_split_rank(const char *name, size_t *len, long *rank);
/* Prints an AveDiagnostic like the tools do (ud: a RunDiag) and counts it. */
void run_print_diag(AveDiagnostic d, void *ud);

#endif
