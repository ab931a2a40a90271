/* target.h — the target registry (targets.def): what code outside a backend knows about each
 * compilation target. Data only, no dependencies; options and passes carry a `const TargetInfo *`,
 * never a target name. */
#ifndef AVE_TARGET_H
#define AVE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum TargetVendor { TARGET_VENDOR_HOST, TARGET_VENDOR_NVIDIA, TARGET_VENDOR_AMD, TARGET_VENDOR_COUNT } TargetVendor;

/* How ave.copy.async moves a tile (docs/targets.md). */
typedef enum TargetCopy {
	TARGET_COPY_NONE,     /* the interpreter */
	TARGET_COPY_CP_ASYNC, /* per-thread cp.async, counted as barrier arrivals */
	TARGET_COPY_TMA,      /* the tensor memory accelerator, counted in bytes */
	TARGET_COPY_BUFFER,   /* buffer loads through registers, then the emulated byte count */
	TARGET_COPY_COUNT
} TargetCopy;

typedef enum TargetId {
#define TARGET(id, ...) TARGET_##id,
#include "targets.def"
#undef TARGET
	TARGET_COUNT
} TargetId;

typedef struct TargetInfo {
	TargetId id;
	const char *name;
	TargetVendor vendor;
	int cc;                /* NVIDIA compute capability x10, else 0 */
	bool arch_specific;    /* runs only on devices of exactly `cc` (sm_90a) */
	int warp;              /* threads of a warp or wavefront */
	int64_t smem_limit;    /* shared memory one CTA may use, bytes */
	int max_threads;       /* per CTA */
	int mbar_bytes;        /* shared memory per transaction barrier */
	int regfile;           /* registers of an SM (NVIDIA) or of a lane (AMDGPU); 0: unlimited */
	int max_regs;          /* per thread; 0: unlimited */
	int reg_granule;       /* register budgets are multiples of it */
	int max_waves_per_simd; /* AMDGPU occupancy limit, else 0 */
	int simds;             /* SIMDs a workgroup's waves spread over (AMDGPU), else 1..4 */
	int mma_m, mma_n, mma_k;
	bool setmaxnreg;       /* per-role register budgets from one pool (SPEC 5.10) */
	TargetCopy copy;
	const char *triple, *cpu, *features; /* LLVM's; NULL for host */
} TargetInfo;

extern const TargetInfo target_table[TARGET_COUNT];

/* The target of that name, or NULL. */
const TargetInfo *target_find(const char *name);
/* The names of the targets of the vendors in `vendors` (a bit per TargetVendor), in table order,
 * separated by ", " with `last` (" or ", " and ") before the final one; writes at most n bytes and
 * returns buf. */
char *target_names(char *buf, size_t n, unsigned vendors, const char *last);
#define TARGET_GPUS ((1u << TARGET_VENDOR_NVIDIA) | (1u << TARGET_VENDOR_AMD))
#define TARGET_ALL (TARGET_GPUS | (1u << TARGET_VENDOR_HOST))
/* Whether a kernel compiled for `kernel` runs on a device whose own target is `device`. */
bool target_runs_on(const TargetInfo *kernel, const TargetInfo *device);
/* The NVIDIA target a device of compute capability `cc` (x10) runs best, or NULL. */
const TargetInfo *target_for_cc(int cc);
/* The target of a vendor in `vendors` whose name `name` most likely misspells ("sm90a" for
 * "sm_90a"; never one with other digits), or NULL. */
const char *target_closest(const char *name, unsigned vendors);
/* The most shared memory a CTA may have on any GPU target, in bytes, and that target. */
const TargetInfo *target_smem_max(void);
/* The first target of a vendor (what a device of that vendor reports when it cannot say more). */
const TargetInfo *target_of_vendor(TargetVendor v);

#endif
