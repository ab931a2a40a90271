/* check.h — the invariant checker (SPEC 5.8; docs/invariants.md): proves a module's tag
 * assertions and its built-in synchronization invariants with Z3, and reports a counterexample
 * for each one that can fail. The `check-invariants` pass runs it. */
#ifndef AVE_CHECK_H
#define AVE_CHECK_H

#include "../ir/ir.h"

/* What one run of the checker did; filled when asked for (ave check --stats, bench/check). */
typedef struct PassCkStats {
	int kernels;        /* kernels that had something to prove */
	int queries;        /* Z3 satisfiability and optimization calls */
	int sat, unsat, unknown;
	double solver_s;    /* seconds inside Z3 check calls */
	double max_query_s; /* the slowest single call */
	double setup_s;     /* creating the Z3 context (once per module) */
	double total_s;     /* the whole pass */
} PassCkStats;

typedef struct PassCkOpts {
	unsigned timeout_ms; /* per query; 0 takes the default (2000) */
	unsigned rlimit;     /* per-query resource limit (deterministic; 0 = none), for tests */
	int max_hops;        /* barrier hops in a happens-before chain; 0 takes the default (3) */
	PassCkStats *stats;  /* filled when non-NULL */
	/* A global store the race check cannot decide is an error (`ave check`); else (the
	 * compile pipeline, ave-opt) a warning: that check is an addition to SPEC 5.8. */
	bool gstore_strict;
} PassCkOpts;

/* Proves the module's tag assertions and the built-in synchronization invariants, emitting an
 * error with a counterexample for each one that can fail (or that the analysis cannot decide).
 * Never changes the IR. Returns false when it emitted errors. */
bool pass_check_invariants_with(IrModule *m, const PassCkOpts *co);

/* A Z3 context for one compile's proofs (a Z3_context, as void * to keep z3.h out of this
 * header). Making one costs about 50 ms; a released context is kept for the thread's next
 * acquire (the checker, then regalloc's proof, then the next compile on that thread), and made
 * anew after 32 uses so that the terms of old compiles do not pile up. A context is used by
 * one thread at a time: acquire gives it to the caller alone. Contexts have "model" on and
 * ignore Z3's error callbacks (a failed call answers unknown). */
void *pass_ck_z3_acquire(void);
void pass_ck_z3_release(void *z3_context);

/* The `check-invariants` pass: the checker with the default options. */
bool pass_check_invariants(IrModule *m, const IrPassOpts *o);

#endif
