/* ring.h — what `pipeline` and `warp-specialize` share: the plan of a loop with `stages` (which
 * tile loads become slots of a shared-memory ring, and why a loop cannot have one), and the
 * builders of rings, barriers, copies and waits. Internal to passes/. */
#ifndef AVE_PASSES_RING_H
#define AVE_PASSES_RING_H

#include "passes.h"

#define RING_MAX_LOADS 16
#define RING_MAX_CARRIED 64

/* A loop with `stages = N` and the loads its ring takes. */
typedef struct RingPlan {
	IrOp *loop, *kernel;
	IrValue *iv;
	const char *ivname;  /* for messages ("?" for an unnamed one) */
	int64_t stages;      /* N */
	int64_t rings;       /* rings of N slots side by side in each allocation (warp-specialize's
	                      * ping-pong: one per consumer, slot wg * N + pos mod N); 1 */
	int64_t step;        /* a positive constant */
	int nload;
	IrOp *load[RING_MAX_LOADS];
	bool direct[RING_MAX_LOADS]; /* only an ave.mma's A or B: the MMA reads the slot */
	int64_t bytes;       /* of one stage, over all loads */
	const char *why;     /* why the loop cannot have a ring, or NULL */
} RingPlan;

/* Plans the ring of loop f for target t (NULL: no target's limits). False when f carries no
 * `stages` of at least 2 (nothing asked); else true, with p->why set when it cannot be done:
 * the loop is not at the kernel's top level, its step is not a positive constant, it stores or
 * synchronizes, a load is not affine in the induction variable or fills with a non-zero
 * `other`, or the ring does not fit the target's shared memory. `stages` > 0 overrides the
 * loop's attribute. */
bool ring_plan(IrModule *m, IrOp *f, const TargetInfo *t, int64_t stages, RingPlan *p);

/* Why the ring with `nbars` barrier arrays, the kernel's other buffers and the lowering's scratch
 * for its largest register tile outside the ops `skip` (and their regions) do not fit the shared
 * memory of target t, or NULL. */
const char *ring_smem_check(IrModule *m, const RingPlan *p, const TargetInfo *t, int nbars,
			    IrOp *const *skip, int nskip);

/* Expression builders: v, c, and `l k r` with `x + 0`, `0 + x`, `x - 0`, `x * 1` left out. */
IrExpr *ring_V(IrModule *m, IrValue *v);
IrExpr *ring_C(IrModule *m, int64_t c);
IrExpr *ring_B(IrModule *m, IrExprKind k, IrExpr *l, IrExpr *r);
/* A copy of expression e of op `from`, its leaves bound, `iv` replaced by `k` (k may be NULL). */
IrExpr *ring_copy_expr(IrModule *m, const IrOp *from, const IrExpr *e, IrValue *iv, IrValue *k);
/* Item src of op `from` copied into dst for a new op, `iv` replaced by `k`. */
void ring_copy_item(IrModule *m, const IrOp *from, const IrItem *src, IrItem *dst, IrValue *iv,
		    IrValue *k);
/* The trip count of the plan's loop, (ub - lb + step - 1) floordiv step. */
IrExpr *ring_trip(IrModule *m, const RingPlan *p);
/* The loop's induction variable at iteration u: lb + u * step. */
IrExpr *ring_k(IrModule *m, const RingPlan *p, IrExpr *u);

/* A value name `base.suffix` (or `base.suffixN`) that no value of the kernel has; NULL when
 * there is no base. */
IrStr ring_fresh(IrCtx *c, IrOp *kernel, IrStr base, const char *suffix);
/* Names v, returns it. */
IrValue *ring_named(IrValue *v, IrStr name);
/* `%b[slot]` appended to group g, or (g NULL) as the op's next item. */
void ring_slot_item(IrModule *m, IrGroup *g, IrValue *b, IrValue *slot);
IrItem *ring_slot_state_item(IrModule *m, IrOpState *s, IrValue *b, IrValue *slot);

/* At the kernel's top level (before its first op): the plan's rings, one per load, named after
 * the loads; and an N-barrier array with arrival count `count`, named `<iv>.<suffix>` (N * rings
 * slots and barriers each). */
void ring_alloc(IrModule *m, const RingPlan *p, IrValue **ring);
IrValue *ring_mbar(IrModule *m, const RingPlan *p, int64_t count, const char *suffix);
/* n barriers of `count` arrivals (ring_mbar: one per slot of the plan's rings). */
IrValue *ring_mbar_n(IrModule *m, const RingPlan *p, int64_t n, int64_t count, const char *suffix);
/* ave.mbar.expect_tx %bar[slot] bytes(bytes) */
void ring_expect_tx(IrBuilder *b, IrValue *bar, IrValue *slot, int64_t bytes);
/* ave.mbar.wait %bar[slot] parity(ph) */
void ring_wait(IrBuilder *b, IrValue *bar, IrValue *slot, IrExpr *ph);
/* ave.mbar.arrive %bar[slot] count(1) */
void ring_arrive(IrBuilder *b, IrValue *bar, IrValue *slot);
/* The plan's copies of tile k into slot of the rings, arriving on full[slot]; tagged
 * `@tags[i](coordinates)` when tags is non-NULL. */
void ring_copies(IrBuilder *b, const RingPlan *p, IrValue *k, IrValue **ring, IrValue *full,
		 IrValue *slot, IrStr *tags);
/* Rebuilds `op` (items, groups, attributes, results) in its place, letting `edit` change each
 * copied item (`g`: the group it is in, NULL for the op's own items); returns the new op. */
typedef void (*RingEdit)(IrModule *m, const IrOp *op, const IrGroup *g, IrItem *it, void *ud);
IrOp *ring_rebuild(IrModule *m, IrOp *op, RingEdit edit, void *ud);
/* Rebuilds `op` with every value item that names v replaced by `ring[slot]`. */
void ring_read_slot(IrModule *m, IrOp *op, IrValue *v, IrValue *ring, IrValue *slot);
/* Before the loop: one `ave.tag.func @<load>.tile(%i0: index, ...)` per load (a name no symbol
 * of the kernel has), its parameters the load's coordinates; their names into tags. */
void ring_tag_funcs(IrModule *m, const RingPlan *p, IrStr *tags);
/* ave.tag.assert holds(%ring[slot], @tag(load i's coordinates at k)): slot holds tile k. */
void ring_holds(IrBuilder *b, const RingPlan *p, int i, IrValue *k, IrValue *ring, IrValue *slot,
		IrStr tag);
/* `ave.index e : i1` (a predicate). */
IrValue *ring_pred(IrBuilder *b, IrExpr *e, IrStr name);
/* An index-typed grid query: `code dim(d)` (ave.program_id, ave.num_programs), or with d < 0
 * one without a dimension (ave.cta_id, ave.num_ctas). */
IrValue *ring_grid_op(IrBuilder *b, IrOpcode code, int d);

#endif
