/* jit.h — the compiler half of the JIT library (libave): how a kernel of a parsed module becomes
 * a bundle for a target. Backends plug in through JitBackend. */
#ifndef AVE_JIT_H
#define AVE_JIT_H

#include "rt.h"

/* What a backend produces for one kernel: the binary (cubin, HSACO, or `.ave` text for host)
 * and the metadata JSON the runtime reads (docs/jit.md). Both malloc'd. */
typedef struct JitOutput {
	uint8_t *binary;
	size_t binary_len;
	char *meta;
} JitOutput;

typedef struct JitRequest {
	IrModule *m;        /* a private copy: the backend may transform it */
	IrOp *kernel;
	const char *target; /* "sm_90a", ... */
	int opt;            /* 0..3 */
	const char *pipeline; /* extra passes before lowering, or NULL */
} JitRequest;

/* Compiles for a GPU target; false after emitting diagnostics through the module's context. */
typedef bool (*JitBackend)(const JitRequest *rq, JitOutput *out);

/* The backend for a GPU target, or NULL when this build has none (jit_backends.c). */
JitBackend jit_gpu_backend(const char *target);

/* The metadata of a kernel compiled for `host` (its signature; the runtime's schema). */
char *jit_host_metadata(IrCtx *c, IrOp *kernel, const char *target);

#endif
