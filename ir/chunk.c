/* chunk.c — chunks and chunk schedules (SPEC 5.9) as numbers: the region and signal slot of a
 * chunk for its arguments, and the (chunk, peer) a schedule gives rank r at wave w, from its
 * expressions or a template. The interpreter and the passes share these definitions. */
#include <string.h>

#include "ir.h"

/* The operand values of a declaration op whose leaves are its own parameters. */
static void
bind_params(const IrOp *op, const int64_t *args, int64_t *vals)
{
	const IrItem *d = &op->item[0];
	for (int i = 0; i < op->nopnd; i++) {
		vals[i] = 0;
		for (int j = 0; j < d->nparam; j++)
			if (op->opnd[i].val == d->param[j])
				vals[i] = args[j];
	}
}

bool
ir_chunk_box(IrCtx *c, IrOp *ch, IrStr which, const int64_t *args, IrChunkBox *out, char *err,
	     size_t errlen)
{
	int64_t vals[16];
	if (ch->nopnd > 16) {
		snprintf(err, errlen, "'@%s' has too many operands", ch->item[0].s);
		return false;
	}
	bind_params(ch, args, vals);
	const IrItem *it = &ir_op_group(ch, which)->item[0];
	memset(out, 0, sizeof *out);
	out->buf = ir_symbol_lookup(c, ch, it->s);
	out->rank = it->ncoord;
	for (int i = 0; i < it->ncoord; i++) {
		if (!ir_expr_eval(it->coord[i].e, vals, &out->lo[i])) {
			snprintf(err, errlen, "the %s of '@%s' divides by a value that is not positive",
				 which, ch->item[0].s);
			return false;
		}
		out->len[i] = it->coord[i].len < 0 ? 1 : it->coord[i].len;
	}
	return true;
}

bool
ir_gathered_chunk(IrCtx *c, IrOp *ch, int64_t q, IrChunkBox *region, IrChunkBox *slot,
		  char *err, size_t errlen)
{
	char why[256];
	if (!ir_chunk_box(c, ch, c->kw.region, &q, region, why, sizeof why) ||
	    !ir_chunk_box(c, ch, c->kw.signal, &q, slot, why, sizeof why)) {
		snprintf(err, errlen, "chunk %lld: %s", (long long)q, why);
		return false;
	}
	const IrType *bt = region->buf->type[0], *st = slot->buf->type[0];
	bool ok = bt->rank <= 2 && (!bt->strides || bt->strides[bt->rank - 1] == 1) &&
		  ir_type_is_int(st->elem) && st->elem != c->t_index &&
		  (ir_type_elem_bits(st) == 32 || ir_type_elem_bits(st) == 64);
	for (int d = 0; ok && d < bt->rank; d++)
		ok = region->lo[d] >= 0 && region->len[d] > 0 &&
		     region->lo[d] + region->len[d] <= bt->dims[d];
	for (int d = 0; ok && d < st->rank; d++)
		ok = slot->lo[d] >= 0 && slot->lo[d] < st->dims[d];
	if (!ok)
		snprintf(err, errlen, "chunk %lld is not rows of contiguous elements inside '@%s' "
			 "(rank 1 or 2, last stride 1) with a 32- or 64-bit integer signal slot inside "
			 "'@%s': the launch could not gather it", (long long)q,
			 region->buf->item[0].s, slot->buf->item[0].s);
	return ok;
}

IrOp *
ir_chunk_schedule_for(IrCtx *c, IrOp *sched)
{
	return ir_symbol_lookup(c, sched, ir_op_group(sched, c->kw.for_)->item[0].s);
}

static int64_t
wrap(int64_t x, int64_t w)
{
	return ir_mod(x, w);
}

/* The templates, for rank r at wave w of W ranks. Wave 0 is always the rank's own chunk (peer r).
 *   all_gather.ring       chunk (r - w) mod W, from (r - 1) mod W: each wave forwards the chunk
 *                         that arrived one wave earlier to the next rank of the ring
 *   all_gather.swizzle1d  chunk (r + w) mod W, from its owner (r + w) mod W: every rank starts at
 *                         a different chunk, so no two ranks read the same owner in one wave
 *   reduce_scatter.ring   chunk (r - w - 1) mod W, from (r - 1) mod W (wave 0 starts the partial
 *                         sum alone); the last wave, W - 1, completes chunk r
 *   all_to_all            chunk (r - w) mod W (chunks named by their source), from that source */
static bool
template_step(const char *t, int64_t W, int64_t r, int64_t w, IrChunkStep *s)
{
	if (!strcmp(t, "all_gather.ring")) {
		s->chunk = wrap(r - w, W);
		s->peer = w ? wrap(r - 1, W) : r;
	} else if (!strcmp(t, "all_gather.swizzle1d")) {
		s->chunk = s->peer = wrap(r + w, W);
	} else if (!strcmp(t, "reduce_scatter.ring")) {
		s->chunk = wrap(r - w - 1, W);
		s->peer = w ? wrap(r - 1, W) : r;
	} else if (!strcmp(t, "all_to_all")) {
		s->chunk = s->peer = wrap(r - w, W);
	} else {
		return false;
	}
	return true;
}

bool
ir_chunk_schedule_step(IrCtx *c, IrOp *sched, int64_t world, int64_t rank, int64_t wave,
		       IrChunkStep *out, char *err, size_t errlen)
{
	IrGroup *t = ir_op_group(sched, c->kw.template_);
	if (t) {
		if (!template_step(t->item[0].s, world, rank, wave, out)) {
			snprintf(err, errlen, "unknown schedule template \"%s\"", t->item[0].s);
			return false;
		}
		return true;
	}
	int64_t args[2] = {rank, wave}, vals[16];
	if (sched->nopnd > 16) {
		snprintf(err, errlen, "'@%s' has too many operands", sched->item[0].s);
		return false;
	}
	bind_params(sched, args, vals);
	IrGroup *cg = ir_op_group(sched, c->kw.chunk), *pg = ir_op_group(sched, c->kw.peer);
	if (!ir_expr_eval(cg->item[0].e, vals, &out->chunk) ||
	    !ir_expr_eval(pg->item[0].e, vals, &out->peer)) {
		snprintf(err, errlen,
			 "schedule '@%s' divides by a value that is not positive at rank %lld, wave %lld",
			 sched->item[0].s, (long long)rank, (long long)wave);
		return false;
	}
	if (out->peer < 0 || out->peer >= world) {
		snprintf(err, errlen,
			 "schedule '@%s' names peer %lld at rank %lld, wave %lld, outside the %lld ranks",
			 sched->item[0].s, (long long)out->peer, (long long)rank, (long long)wave,
			 (long long)world);
		return false;
	}
	return true;
}

static void
print_box(const IrChunkBox *b, FILE *out)
{
	fprintf(out, "@%s[", b->buf ? b->buf->item[0].s : "?");
	for (int i = 0; i < b->rank; i++)
		fprintf(out, "%s%lld : %lld", i ? ", " : "", (long long)b->lo[i], (long long)b->len[i]);
	fputc(']', out);
}

bool
ir_chunk_schedule_print(IrCtx *c, IrOp *sched, int64_t world, FILE *out)
{
	IrOp *ch = ir_chunk_schedule_for(c, sched);
	IrGroup *t = ir_op_group(sched, c->kw.template_);
	fprintf(out, "schedule @%s for @%s (%s) on %lld ranks\n", sched->item[0].s, ch->item[0].s,
		t ? t->item[0].s : "expressions", (long long)world);
	char err[256];
	for (int64_t r = 0; r < world; r++)
		for (int64_t w = 0; w < world; w++) {
			IrChunkStep s;
			IrChunkBox b;
			int64_t args[IR_MAX_RANK] = {0};
			if (!ir_chunk_schedule_step(c, sched, world, r, w, &s, err, sizeof err)) {
				ir_error(c, sched->loc, "%s", err);
				return false;
			}
			/* a chunk of several parameters is printed with the first one bound */
			args[0] = s.chunk;
			fprintf(out, "rank %lld wave %lld: chunk %lld from %lld", (long long)r,
				(long long)w, (long long)s.chunk, (long long)s.peer);
			if (ch->item[0].nparam <= IR_MAX_RANK &&
			    ir_chunk_box(c, ch, c->kw.region, args, &b, err, sizeof err)) {
				fputs(" region ", out);
				print_box(&b, out);
			}
			fputc('\n', out);
		}
	return true;
}
