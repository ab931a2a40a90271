/* pipeline.c — the `pipeline` pass: an ave.for with `stages = N` (N >= 2) at a kernel's top level,
 * whose tile loads read global tensors at coordinates affine in the induction variable, becomes an
 * N-slot shared-memory ring fed by asynchronous copies and run by the whole CTA. With T the trip
 * count and t = u - (N-1), one loop issues tile u and consumes tile t:
 *
 *   %sX = ave.smem.alloc : !ave.ring<N x tile>          (one per load)
 *   %full = ave.mbar.alloc count(1) : !ave.mbar<N>
 *   for %u = 0 to T + N - 1 step 1 iter_args(...) {
 *     ave.barrier                                       // every thread is done with slot u mod N
 *     ave.mbar.expect_tx %full[u mod N] bytes(B)
 *     ave.copy.async X(lb + u * step) into(%sX[u mod N]) arrive(%full[u mod N]) tag(@x.tile(..))
 *     ave.mbar.wait %full[(u + 1) mod N] parity(((u + 1) floordiv N + 1) mod 2)
 *     if u >= N - 1 { ave.tag.assert holds(%sX[(u + 1) mod N], @x.tile(.. at %k))
 *                     %x = ave.smem.load %sX[(u + 1) mod N]; body at %k = lb + t * step }
 *   }
 *   %tail = ave.max T, 1 - N                            // the drain: uses tail .. tail + N - 2
 *   ave.mbar.wait %full[(tail + j) mod N] parity((tail + j) floordiv N mod 2)   (j < N - 1)
 *
 * The tag functions (one per load, its coordinates) state what the pass intends, slot k holds
 * tile k, for check-invariants to prove. A tile used only as an ave.mma's A or B operand needs no ave.smem.load: the MMA reads the slot
 * (SPEC 5.5), and its ring is swizzled as gemm_ws's are.
 *
 * The first N-1 waits have parity 1 on fresh barriers and return at once (t < 0: no tile yet), so
 * the prologue and the steady state are one loop: check-invariants analyzes one arrival loop per
 * barrier array, not a prologue outside it. The drain after the loop waits for the N-1 copies the
 * loop issued but did not wait for (tail waits, docs/invariants.md), so none is in flight when the
 * kernel exits. Copies past the tensor's end land zeros (SPEC 2, 5.6), the loads' `other(0)`. */
#include "ring.h"

static bool
pipeline_loop(IrModule *m, IrOp *f, const TargetInfo *t, int64_t stages_opt)
{
	IrCtx *c = m->ctx;
	RingPlan p;
	if (!ring_plan(m, f, t, stages_opt, &p))
		return false;
	const char *why = NULL;
	if (t && t->copy == TARGET_COPY_NONE)
		why = ir_ctx_printf(c, "target '%s' has no asynchronous copy", t->name);
	else if (t && t->copy == TARGET_COPY_BUFFER)
		/* docs/amdgpu.md: the copy completes within the issuing wave, so a ring would not
		 * overlap a wave's loads with its own compute; prefetch's loads a stage ahead into
		 * registers do. */
		why = ir_ctx_printf(c, "on target '%s' ave.copy.async completes within the issuing "
				    "wave, so a ring overlaps nothing; 'prefetch' loads the next tiles "
				    "into registers instead", t->name);
	else
		why = p.why;
	if (why) {
		ir_remark(c, f->loc, "pipeline: loop '%%%s' not pipelined: %s", p.ivname, why);
		return false;
	}
	int64_t N = p.stages;
	int n = p.nload;
	IrOp *kernel = p.kernel;
	IrBlock *body = f->reg[0].block;
	IrValue *iv = p.iv;

	/* The ring and its barriers, at the kernel's top level. */
	IrValue *ring[RING_MAX_LOADS];
	ring_alloc(m, &p, ring);
	IrValue *full = ring_mbar(m, &p, 1, "full");
	IrStr tags[RING_MAX_LOADS];
	ring_tag_funcs(m, &p, tags);

	/* The new loop's block: %u and the carried values. */
	IrRegion *nr = ir_region_new(m);
	IrBlock *nb = nr->block;
	IrValue *u =
	    ir_block_add_arg(m, nb, c->t_index, ring_fresh(c, kernel, iv->name, "it"), f->loc);
	IrValue *carried[RING_MAX_CARRIED];
	int ncar = body->narg - 1;
	for (int i = 0; i < ncar; i++)
		carried[i] = ir_block_add_arg(m, nb, body->arg[i + 1]->type, body->arg[i + 1]->name,
		                              body->arg[i + 1]->loc);
	IrBuilder b;
	ir_builder_at_end(&b, m, nb, f->loc);
	ir_b_op(&b, IR_OP_BARRIER, 0, NULL, 0, NULL);
	/* Issue tile u: %ki = lb + u * step into slot u mod N. */
	IrExpr *kie = ring_k(m, &p, ring_V(m, u));
	IrValue *ki = kie->kind == IR_EX_VAL
	                  ? u
	                  : ring_named(ir_b_index(&b, kie), ring_fresh(c, kernel, iv->name, "next"));
	IrValue *sn = ring_named(ir_b_index(&b, ring_B(m, IR_EX_MOD, ring_V(m, u), ring_C(m, N))),
	                         ring_fresh(c, kernel, iv->name, "in"));
	ring_expect_tx(&b, full, sn, p.bytes);
	ring_copies(&b, &p, ki, ring, full, sn, tags);
	/* Wait for tile t = u - (N-1) in slot (u + 1) mod N (at once while t < 0). */
	IrExpr *u1 = ring_B(m, IR_EX_ADD, ring_V(m, u), ring_C(m, 1));
	IrValue *sc_ = ring_named(ir_b_index(&b, ring_B(m, IR_EX_MOD, u1, ring_C(m, N))),
	                          ring_fresh(c, kernel, iv->name, "slot"));
	IrExpr *u1b = ring_B(m, IR_EX_ADD, ring_V(m, u), ring_C(m, 1));
	ring_wait(&b, full, sc_,
	          ring_B(m, IR_EX_MOD,
	                 ring_B(m, IR_EX_ADD, ring_B(m, IR_EX_FLOORDIV, u1b, ring_C(m, N)),
	                        ring_C(m, 1)),
	                 ring_C(m, 2)));
	/* %v = u >= N - 1: a tile to consume. */
	IrValue *valid;
	{
		IrOpState s;
		ir_state_init(&s, IR_OP_CMP, f->loc);
		s.mode = c->kw.ge;
		ir_state_value(m, &s, u);
		ir_state_item(m, &s, IR_IT_INT)->i = N - 1;
		ir_state_result(m, &s, ir_type_int(c, 1), ring_fresh(c, kernel, iv->name, "ready"));
		valid = &ir_b_insert(&b, ir_op_build(m, &s))->res[0];
	}
	/* The consumer: the old body under `ave.if %v`. */
	IrRegion *then = ir_region_new(m);
	IrBuilder tb;
	ir_builder_at_end(&tb, m, then->block, f->loc);
	IrValue *kc_val = NULL;
	IrOp *oldy = body->last;
	while (body->first != oldy) {
		IrOp *op = body->first;
		ir_op_unlink(op);
		ir_block_append(then->block, op);
	}
	{
		/* The tile consumed, k = lb + (u - N + 1) * step (the old loop variable's name,
		 * free once it is gone), and what its slots hold. */
		IrBuilder kb2;
		if (then->block->first)
			ir_builder_before(&kb2, m, then->block->first);
		else
			ir_builder_at_end(&kb2, m, then->block, f->loc);
		kb2.loc = f->loc;
		IrValue *kc = ir_b_index(
		    &kb2, ring_k(m, &p, ring_B(m, IR_EX_SUB, ring_V(m, u), ring_C(m, N - 1))));
		kc_val = ring_named(kc, iv->name);
		for (int i = 0; i < n; i++)
			ring_holds(&kb2, &p, i, kc, ring[i], sc_, tags[i]);
		ir_replace_all_uses(iv, kc_val);
	}
	for (int i = 0; i < n; i++) {
		IrOp *ld = p.load[i];
		if (p.direct[i]) {
			IrValue *v = &ld->res[0];
			while (v->uses)
				ring_read_slot(m, v->uses->user, v, ring[i], sc_);
			ir_op_erase(ld);
			continue;
		}
		IrOpState s;
		ir_state_init(&s, IR_OP_SMEM_LOAD, ld->loc);
		ring_slot_state_item(m, &s, ring[i], sc_);
		ir_state_result(m, &s, ld->res[0].type, ld->res[0].name);
		IrOp *sl = ir_op_build(m, &s);
		ir_op_insert_before(ld, sl);
		ir_replace_all_uses(&ld->res[0], &sl->res[0]);
		ir_op_erase(ld);
	}
	for (int i = 0; i < ncar; i++)
		ir_replace_all_uses(body->arg[i + 1], carried[i]);
	IrValue *yv[RING_MAX_CARRIED];
	int ny = 0;
	for (int i = 0; i < oldy->nitem && ny < RING_MAX_CARRIED; i++)
		if (oldy->item[i].kind == IR_IT_VALUE)
			yv[ny++] = ir_op_value(oldy, oldy->item[i].opnd);
	IrOpState is;
	ir_state_init(&is, IR_OP_IF, f->loc);
	ir_state_value(m, &is, valid);
	for (int i = 0; i < ncar; i++)
		ir_state_result(m, &is, carried[i]->type, NULL);
	ir_b_yield(&tb, ny, yv, ncar > 0);
	ir_state_region(m, &is, then);
	if (ncar) {
		IrRegion *els = ir_region_new(m);
		IrBuilder eb;
		ir_builder_at_end(&eb, m, els->block, f->loc);
		ir_b_yield(&eb, ncar, carried, true);
		ir_state_region(m, &is, els);
	}
	IrOp *ifop = ir_b_insert(&b, ir_op_build(m, &is));
	IrValue *ifres[RING_MAX_CARRIED];
	for (int i = 0; i < ncar; i++)
		ifres[i] = &ifop->res[i];
	ir_b_yield(&b, ncar, ifres, ncar > 0);

	/* The loop: 0 to trip + N - 1, trip = (ub - lb + step - 1) floordiv step. */
	IrOpState s;
	ir_state_init(&s, IR_OP_FOR, f->loc);
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_C(m, 0);
	ir_state_item(m, &s, IR_IT_EXPR)->e =
	    ring_B(m, IR_EX_ADD, ring_trip(m, &p), ring_C(m, N - 1));
	ir_state_item(m, &s, IR_IT_EXPR)->e = ring_C(m, 1);
	for (int i = 3; i < f->nitem; i++)
		ring_copy_item(m, f, &f->item[i], ir_state_item(m, &s, f->item[i].kind), NULL, NULL);
	for (int i = 0; i < f->nattr; i++)
		if (f->attr[i].name != c->kw.stages)
			ir_state_attr(m, &s, f->attr[i].name, f->attr[i].attr);
	for (int i = 0; i < f->nres; i++)
		ir_state_result(m, &s, f->res[i].type, f->res[i].name);
	ir_state_region(m, &s, nr);
	IrOp *nf = ir_op_build(m, &s);
	ir_op_insert_before(f, nf);
	/* The drain: the loop waited for uses 0 .. trip - 1 and issued trip .. trip + N - 2 as
	 * well; wait for those after it, use v in slot v mod N with parity (v floordiv N) mod 2. */
	{
		IrBuilder db;
		ir_builder_before(&db, m, f);
		db.loc = f->loc;
		/* From use max(trip, 1 - N): with trip <= 0 the loop waited for nothing and issued
		 * uses 0 .. trip + N - 2; the drain's waits for uses v < 0 have parity 1 on
		 * barriers no copy used and return at once. The bound keeps v >= 1 - N, where
		 * (v floordiv N) mod 2 is 1, when the loop runs no iteration at all. */
		IrValue *tv = ir_b_index(&db, ring_trip(m, &p));
		IrValue *mx[2] = {tv, ir_b_const_int(&db, c->t_index, 1 - N, NULL)};
		IrType *ity = c->t_index;
		IrValue *tail = ring_named(&ir_b_op(&db, IR_OP_MAX, 1, &ity, 2, mx)->res[0],
		                           ring_fresh(c, kernel, iv->name, "tail"));
		for (int64_t j = 0; j < N - 1; j++) {
			IrExpr *v = ring_B(m, IR_EX_ADD, ring_V(m, tail), ring_C(m, j));
			IrValue *ds = ring_named(ir_b_index(&db, ring_B(m, IR_EX_MOD, v, ring_C(m, N))),
			                         ring_fresh(c, kernel, iv->name, "drain"));
			IrExpr *v2 = ring_B(m, IR_EX_ADD, ring_V(m, tail), ring_C(m, j));
			ring_wait(&db, full, ds,
			          ring_B(m, IR_EX_MOD, ring_B(m, IR_EX_FLOORDIV, v2, ring_C(m, N)),
			                 ring_C(m, 2)));
		}
	}
	for (int i = 0; i < f->nres; i++)
		ir_replace_all_uses(&f->res[i], &nf->res[i]);
	ir_op_erase(f);
	ir_remark(c, nf->loc, "pipeline: loop '%%%s': %lld stages, %d operand%s, ring %lld bytes",
	          p.ivname, (long long)N, n, n == 1 ? "" : "s", (long long)(N * p.bytes));
	return true;
}

static void
visit(IrModule *m, IrOp *loop, const TargetInfo *t, void *ud)
{
	pipeline_loop(m, loop, t, *(const int64_t *)ud);
}

bool
pass_pipeline(IrModule *m, const IrPassOpts *o)
{
	int64_t stages;
	if (!ir_pass_arg_int(m->ctx, o, "pipeline", "stages", 0, 2, 16, &stages))
		return false;
	pass_for_each_loop(m, o ? o->target : NULL, visit, &stages);
	return true;
}
