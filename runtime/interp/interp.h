/* interp.h — the reference interpreter (the `host` device): runs a verified kernel of an IrModule
 * on the CPU with the semantics of SPEC §2 and §5, under a seeded scheduler that explores the
 * interleavings of warp roles. Also the helpers `ave run` shares: memory formats, the `rand:`
 * generator, argument values and NumPy .npy files. docs/interp.md describes the behaviour. */
#ifndef AVE_INTERP_H
#define AVE_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* ---- launching (interp_run.c) ---- */

/* A tensor (or pointer) argument: host memory holding `nelem` elements of the kernel argument's
 * element type in its memory format (interp_elem_size; bf16/f16/f8 as bit patterns, i1 as one
 * byte 0/1). Sizes the type fixes must equal `dims`; a stride the type fixes wins over `strides`
 * (as in the kernel ABI, which passes only the `?` ones). Every access the kernel makes is checked
 * against [data, data + nelem). The memory stays the caller's. */
typedef struct InterpTensor {
	void *data;
	const IrType *elem; /* NULL, or the element type meant (of the module's context; checked) */
	int64_t nelem;
	int rank;
	int64_t dims[IR_MAX_RANK];
	int64_t strides[IR_MAX_RANK]; /* in elements */
} InterpTensor;

/* One kernel argument, in order. Scalars: integers and index in `i`, floats in `f` (rounded to
 * the argument's type at launch). */
typedef struct InterpArg {
	bool tensor;
	InterpTensor t;
	int64_t i;
	double f;
} InterpArg;

/* What to run: one rank's launch. A multi-rank job (SPEC 5.9) is one launch per rank, all of the
 * same kernel and grid, that differ in `rank`, their arguments and their symmetric buffers
 * (interp_run_world). */
typedef struct InterpLaunch {
	IrOp *kernel;    /* an ave.kernel of the module */
	int64_t grid[3]; /* CTAs per dimension, each >= 1 */
	const InterpArg *args;
	int nargs;
	int rank, world_size; /* 0 and 1 for a single device (0 is read as 1) */
	/* this rank's copy of each ave.symm.alloc (interp_symm_alloc's order); NULL, or an entry
	 * with NULL data, gets zeros that the interpreter allocates and frees */
	const InterpTensor *symm;
	int nsymm;
	/* the number of this launch of the kernel on these symmetric buffers, from 1 (0 is read as
	 * 1): an ave.chunk.wait returns once its signal counter is at least the epoch, so signals
	 * need no reset between launches (docs/interp.md) */
	int64_t epoch;
} InterpLaunch;

typedef struct InterpOptions {
	int schedules;   /* interleavings to run (<= 0 means 1); each restarts from the inputs */
	uint64_t seed;   /* schedule i runs with seed + i */
	bool no_compare; /* do not fail when two schedules leave different results */
	int launches;    /* launches in a row on the same memory (<= 0 means 1); launch i (from 0)
	                    has epoch `epoch + i` */
	bool gather;     /* carry out the kernel's `gathered = @chunk` before each launch (a
	                    runtime that launches it does that itself) */
} InterpOptions;

typedef struct InterpStats {
	int schedules; /* schedules run to completion */
	bool failed;
	uint64_t failed_seed;     /* the seed of the schedule that failed */
	int64_t ctas, tasks, ops; /* summed over the schedules run */
	int64_t copies, macs;     /* async copies landed; multiply-adds done by ave.mma(.async) */
	double seconds;
} InterpStats;

/* Runs the launch `schedules` times, each from the original argument memory, and leaves the
 * result of the last one in the argument memory. Errors (bad arguments, unsupported ops, run-time
 * errors with the op's location, role, replica, CTA and loop iterations, deadlocks, schedules that
 * disagree) go to the module context's diagnostic handler; returns false after one. `o` and
 * `stats` may be NULL. The module and context are only read, except that diagnostics are emitted through the
 * context, so launches in separate contexts may run on separate threads at the same time. */
bool interp_run(IrModule *m, const InterpLaunch *l, const InterpOptions *o, InterpStats *stats);
/* The same for a `world`-rank job (1..INTERP_MAX_WORLD), launch q being rank q's: the CTAs of all
 * ranks run interleaved under one scheduler, so a chunk wait may block on another rank's signal;
 * a wait no signal can complete is a deadlock, a read of symmetric memory another rank wrote
 * without a chunk wait ordering it is a race (both reported with the ranks). interp_run is this
 * with world 1, and refuses a launch whose world_size is above 1. */
bool interp_run_world(IrModule *m, const InterpLaunch *ranks, int world, const InterpOptions *o,
		      InterpStats *stats);
#define INTERP_MAX_WORLD 64
/* The k-th ave.symm.alloc of the kernel's module (those next to the kernel, in order); NULL past
 * the last. */
IrOp *interp_symm_alloc(IrOp *kernel, int k);
/* The tensor of symmetric buffer `alloc` (an ave.symm.alloc) over data: its type's element,
 * dims and strides (row-major where the type gives none); nelem is the elements it spans. */
InterpTensor interp_symm_tensor(const IrOp *alloc, void *data);

/* The kernel named `name` (with or without '@'), at file level or inside an ave.module. */
IrOp *interp_find_kernel(IrModule *m, const char *name);

/* ---- memory formats and conversions (interp_num.c) ---- */

/* Bytes per element of a scalar type in host memory (i1 and f8 take one byte). */
size_t interp_elem_size(const IrType *elem);
/* Round-to-nearest-even conversion of a double to the bit pattern of a float type (IR_F16,
 * IR_BF16, IR_F8E4M3, IR_F8E5M2): one rounding, subnormals kept; f16/bf16 overflow to infinity,
 * f8 saturates to the largest finite value (infinities too; NaN stays NaN). */
uint32_t interp_f64_to_bits(IrFloatKind fk, double x);
/* The exact value of a bit pattern of those types. */
double interp_bits_to_f64(IrFloatKind fk, uint32_t bits);
/* Element `i` of memory in `elem`'s format as a double / as an int64 (integers sign-extend, i1 is
 * 0 or 1), and the reverse (rounding or wrapping to the type). */
double interp_mem_get_f64(const IrType *elem, const void *base, int64_t i);
int64_t interp_mem_get_i64(const IrType *elem, const void *base, int64_t i);
void interp_mem_set_f64(const IrType *elem, void *base, int64_t i, double v);
void interp_mem_set_i64(const IrType *elem, void *base, int64_t i, int64_t v);

/* ---- `ave run` values (interp_value.c) ---- */

/* Fills n elements of `elem` with the `rand:` generator (docs/interp.md): approximately standard
 * normal values from splitmix64, computed with integer arithmetic only, so the same seed gives the
 * same bits on every machine. Integer types get the value rounded to nearest, i1 (value > 0). */
void interp_rand_fill(const IrType *elem, uint64_t seed, int64_t n, void *out);

/* A parsed argument value that owns its memory (free with interp_value_free). */
typedef struct InterpValue {
	InterpArg arg;
	void *owned;
} InterpValue;

/* Parses an `--arg` VALUE for a kernel argument of type `t`: a .npy path, `rand:DIMS:DTYPE:SEED`,
 * `zeros:DIMS:DTYPE`, or a scalar literal. On failure writes a message (no trailing period) to
 * err and returns false. */
bool interp_value_parse(IrCtx *c, const char *text, IrType *t, InterpValue *out, char *err,
                        size_t errlen);
void interp_value_free(InterpValue *v);

/* ---- NumPy .npy files (interp_npy.c) ---- */

/* A .npy array as read: its dtype descriptor and C-order data (malloc'd; free with free()). */
typedef struct InterpNpy {
	char descr[96]; /* as written in the header, e.g. "<f4" or "[('bf16', '<u2')]" */
	char kind;      /* 'f', 'i', 'u', 'b' (bool), 'V' (raw bytes) */
	int size;       /* bytes per element */
	char field[16]; /* structured one-field dtype: the field name ("bf16"), else "" */
	int rank;
	int64_t dims[IR_MAX_RANK];
	int64_t nelem;
	void *data;
} InterpNpy;

bool interp_npy_read(const char *path, InterpNpy *out, char *err, size_t errlen);
/* Writes n-dimensional C-order data of element type `elem` (descriptors in docs/interp.md). */
bool interp_npy_write(const char *path, const IrType *elem, int rank, const int64_t *dims,
                      const void *data, char *err, size_t errlen);
/* The descriptor interp_npy_write uses for `elem`. */
const char *interp_npy_descr(const IrType *elem);
/* Converts an array read from a file to `elem`'s memory format in `out` (nelem elements): the
 * same type, bit patterns of the same size (unsigned or raw) for f16/bf16/f8, or float data of
 * another float type (rounded to nearest even). */
bool interp_npy_convert(const InterpNpy *a, const IrType *elem, void *out, char *err,
                        size_t errlen);

#endif
