/* sim.h — the simulated GPU devices (`sim-<target>`): the LLVM IR ave emits for a GPU target,
 * after ave's LLVM passes, rewritten so that every target intrinsic and inline-assembly
 * instruction is a call into a C model of the hardware (isa.h and sim_nvptx.c / sim_amdgpu.c),
 * JIT-compiled for the host, and run thread by thread as fibers under a seeded scheduler, with
 * warp, warpgroup and CTA collectives as rendezvous points (docs/testing.md). */
#ifndef AVE_SIM_H
#define AVE_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ir/target.h"
#include "isa.h"

/* The shape of one value crossing a model call: an integer, a float, a pointer, or a vector of
 * `lanes` of them; `bits` is the element width. */
typedef enum SimClass { SIM_INT, SIM_FLOAT, SIM_PTR } SimClass;
typedef struct SimTy {
	SimClass cls;
	int bits;  /* element width */
	int lanes; /* 1 for scalars */
} SimTy;

#define SIM_MAX_OPS 300

struct SimThread;
struct SimCall;
/* A model: reads the call's operands from args and writes its results to res (both laid out by
 * the call's arg_off / res_off). */
typedef void (*SimFn)(struct SimThread *t, const struct SimCall *k, const uint8_t *args,
                      uint8_t *res);

/* One kind of call site in the JIT'd module: an intrinsic (name without "llvm.") or an
 * inline-assembly text with its constraints. The id is its index in the program's table. */
typedef struct SimCall {
	char *name;    /* "nvvm.barrier0", or NULL for inline assembly */
	char *text;    /* the assembly text, unescaped */
	char *cons;    /* its constraint string */
	int nargs, nres;
	SimTy arg[SIM_MAX_OPS], res[SIM_MAX_OPS];
	uint32_t arg_off[SIM_MAX_OPS], res_off[SIM_MAX_OPS];
	SimFn fn;      /* bound when the program is prepared */
	bool idle;     /* a polling instruction (s_sleep): does not count as progress */
	void *prep;    /* the model's parsed form (an assembly program), or NULL */
} SimCall;

/* A kernel compiled for a simulated target. */
typedef struct SimProgram SimProgram;

/* Builds the program from the target module's LLVM IR text (what `ave compile --emit=llvm`
 * prints for t) for kernel `name`; NULL with a reason in err. */
SimProgram *sim_program_create(const TargetInfo *t, const char *ir, size_t len, const char *name,
                               char *err, size_t errlen);
void sim_program_free(SimProgram *p);

/* One launch: the kernel's parameters in ABI order (pointers to each value, as cuLaunchKernel
 * takes them; byval parameters point at their bytes). */
typedef struct SimLaunch {
	uint32_t grid[3];
	int threads;
	size_t shared_bytes;
	void **params;
	uint64_t seed;    /* 0: round robin, async work completed as late as possible */
	int verbose;
} SimLaunch;

/* Runs the launch; false with the reason (a hang with each warp's position, a model's error, a
 * trap) in err. */
bool sim_run(SimProgram *p, const SimLaunch *l, char *err, size_t errlen);
/* Runs one launch per rank of a world (SPEC 5.9) together: every CTA of every rank is resident
 * (its own threads and shared memory), and the scheduler moves between CTAs when one waits for
 * another (a chunk wait polling for a peer's signal), so a wait nobody will satisfy is a hang
 * naming each CTA's rank. At most SIM_MAX_RESIDENT CTAs in all. */
bool sim_run_world(SimProgram *p, const SimLaunch *ranks, int world, char *err, size_t errlen);
enum { SIM_MAX_RESIDENT = 256 };

/* ---- inside the simulator (sim_exec.c) ---- */

typedef struct SimCta SimCta;

typedef struct SimThread {
	SimCta *cta;
	int tid, lane, warp;
	int state;           /* SIM_RUN, SIM_WAIT, SIM_DONE */
	bool (*ready)(struct SimThread *t); /* SIM_WAIT: whether it may go on */
	const void *wait_on; /* what it waits for (ready's argument) */
	uint64_t wait_val;
	char where[160];     /* what it waits for, in words (hang reports) */
	void *fiber;         /* the fiber's context and stack */
	void *model;         /* the target model's per-thread state */
	uint64_t seen;       /* the progress count of other warps (sim_others) when its latest
	                        model call began: what its memory accesses since the call before
	                        could have seen */
	const struct SimCall *call, *prev; /* its latest model call, and the one before */
} SimThread;

enum { SIM_RUN, SIM_WAIT, SIM_DONE };
enum { SIM_MAX_WARPS = 64 }; /* warps a CTA's progress is counted for apart */

struct SimCta {
	struct SimRun *run;
	uint32_t ctaid[3], nctaid[3];
	int nthreads, warp_size;
	SimThread *th;
	uint8_t *smem;       /* shared memory (below 2 GiB: 32-bit shared addresses are host ones) */
	size_t smem_size;
	void *model;         /* the target model's per-CTA state */
	uint64_t progress;   /* model calls (other than polling) and exits so far */
	uint64_t warp_calls[SIM_MAX_WARPS]; /* ... the model calls among them each warp's threads
	                                        made */
	const TargetInfo *target; /* the simulated target */
	void **params;       /* the launch's parameters (its rank's, in a world launch) */
	int rank;            /* the rank of a world launch, else -1 */
};

/* The calling thread (the fiber running now). */
SimThread *sim_self(void);
/* Blocks the calling thread until ready(t) holds (checked by the scheduler); `where` describes it. */
void sim_wait(SimThread *t, bool (*ready)(SimThread *t), const void *on, uint64_t val,
              const char *where);
/* Blocks the calling thread until another one makes progress (a model call or an exit): what a
 * polling loop waits for, so that polling that can never end is a hang. */
void sim_wait_progress(SimThread *t, const char *where);
/* Blocks the calling thread until threads of other warps (any CTA) make progress beyond
 * `since` (a SimThread.seen): a warp whose lanes run one at a time here but in lockstep on a GPU
 * (an AMDGPU wave) waits for others, not for its own lanes. */
void sim_wait_others(SimThread *t, uint64_t since, const char *where);
/* Lets the scheduler run another thread (a point where interleavings may differ). */
void sim_yield(SimThread *t);
/* Stops the launch with an error (the message names the thread). Does not return. */
_Noreturn void sim_fail(SimThread *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A number from the launch's seeded generator (0 when the seed is 0). */
uint64_t sim_rand(SimCta *c);

/* Asynchronous work (copies, TMA) completed by the scheduler at a point it chooses: at once
 * when seeded so, else when no thread can run. */
typedef struct SimAsync {
	struct SimAsync *next;
	void (*complete)(SimCta *c, struct SimAsync *a);
	char what[96];
} SimAsync;
void sim_async_post(SimCta *c, SimAsync *a);
/* Completes every pending asynchronous operation `pred` accepts (NULL: all), in order. */
void sim_async_drain(SimCta *c, bool (*pred)(const SimAsync *a, const void *u), const void *u);

/* A rendezvous of threads (a warp, a warpgroup, a named barrier, the CTA): it completes when
 * `count` threads arrived (0: every member of [first, first + n) that has not exited); the last
 * arrival (or the scheduler, when a member's exit completes it) runs done(c, u) once, then all go
 * on. `what` is the instruction of the first arrival: a member arriving with another one is a
 * divergence error. */
typedef struct SimGroup {
	int arrived;
	uint64_t gen;
	const void *what;
	int first, n, count;
	void (*done)(SimCta *c, void *u);
	void *u;
	char where[96];
} SimGroup;
void sim_group_arrive(SimThread *t, SimGroup *g, int first, int n, int count, const void *what,
                      void (*done)(SimCta *c, void *u), void *u, const char *where);

/* A collective of one warp or wavefront: each lane leaves its operands in in[lane] and arrives;
 * the last arrival runs fn once over all lanes (lane_in[l]: lane l took part), which leaves
 * results in out[lane] or a reason in err; then every lane reads its results. */
typedef struct SimLanes {
	SimGroup g;
	uint64_t in[64][12];
	uint64_t out[64][8];
	bool lane_in[64];
	char err[256];
	void (*fn)(SimCta *c, struct SimLanes *w);
} SimLanes;
/* Runs the calling lane's part of a collective of its warp (w: that warp's state); fails the
 * launch with w->err when fn set it. */
void sim_lanes_run(SimThread *t, SimLanes *w, const void *what, void (*fn)(SimCta *c, SimLanes *w),
                   const char *where);

/* ---- the targets' models ---- */

typedef struct SimModel {
	/* Binds k->fn (and k->prep) for a call kind; false with a reason naming the instruction. */
	bool (*bind)(SimCall *k, char *err, size_t errlen);
	void (*cta_begin)(SimCta *c);
	void (*cta_end)(SimCta *c);
	void (*thread_begin)(SimThread *t);
	void (*thread_end)(SimThread *t);
	void (*unbind)(SimCall *k);
	/* Why a CTA cannot finish (pending work), or NULL. */
	const char *(*cta_check)(SimCta *c);
} SimModel;

extern const SimModel sim_nvptx_model, sim_amdgpu_model;

/* A model's intrinsics by name prefix (after "llvm."); binds k->fn from the first that matches,
 * else says which intrinsic has no model. */
typedef struct SimIntrinsic {
	const char *prefix;
	SimFn fn;
} SimIntrinsic;
bool sim_bind_intrinsic(SimCall *k, const SimIntrinsic *table, size_t n, char *err, size_t errlen);
/* llvm.trap and llvm.debugtrap: the launch fails, naming the thread. */
void sim_trap(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res);

struct SimProgram {
	const TargetInfo *target;
	const SimModel *model;
	void *jit;            /* LLVMOrcLLJITRef */
	void (*entry)(void **params);
	SimCall **calls;
	int ncalls, cap;
	uint8_t *smem; /* the shared-memory window (below 2 GiB, aligned to its size) */
	size_t smem_cap;
	void *map;     /* the mapping that holds it */
	pthread_mutex_t mu; /* one run at a time: they share the window */
	size_t map_len;
	char *name;
};

/* What the JIT'd code calls for every model call (sim_exec.c). */
void sim_dispatch(int id, const uint8_t *args, uint8_t *res);

/* Operand access for models. */
static inline uint64_t
sim_arg_u64(const SimCall *k, const uint8_t *args, int i)
{
	uint64_t v = 0;
	int bytes = k->arg[i].bits * k->arg[i].lanes / 8;
	if (bytes < 1)
		bytes = 1;
	for (int b = 0; b < bytes && b < 8; b++)
		v |= (uint64_t)args[k->arg_off[i] + (uint32_t)b] << (8 * b);
	return v;
}
static inline const void *
sim_arg_ptr(const SimCall *k, const uint8_t *args, int i)
{
	return args + k->arg_off[i];
}
static inline void
sim_res_u64(const SimCall *k, uint8_t *res, int i, uint64_t v)
{
	int bytes = k->res[i].bits * k->res[i].lanes / 8;
	if (bytes < 1)
		bytes = 1;
	for (int b = 0; b < bytes && b < 8; b++)
		res[k->res_off[i] + (uint32_t)b] = (uint8_t)(v >> (8 * b));
}
static inline void *
sim_res_ptr(const SimCall *k, uint8_t *res, int i)
{
	return res + k->res_off[i];
}

#endif
