/* interp_sync.c — transaction barriers with PTX mbarrier semantics (phases, arrival counts,
 * transaction bytes, parity waits) and ave.barrier over the CTA or a role's replicas. A wait
 * that cannot pass returns EX_BLOCK and changes nothing, so the scheduler can retry it. */
#include <string.h>

#include "interp_impl.h"

static Val *
item(Run *r, Task *t, IOp *o, const IrItem *it)
{
	return interp_val(r, t, o->slot[ir_item_opnd(it)]);
}

static bool
group_int(Run *r, Task *t, IOp *o, IrStr kw, int64_t dflt, int64_t *out)
{
	IrGroup *g = ir_op_group(o->op, kw);
	*out = dflt;
	if (!g)
		return true;
	bool ok = true;
	*out = interp_expr(r, t, o, g->item[0].e, &ok);
	if (!ok)
		interp_err(r, t, o, "index expression divides by a value that is not positive");
	return ok;
}

int
interp_mbar_alloc(Run *r, Task *t, IOp *o)
{
	Cta *c = r->cta;
	Mbar *b = c->stat[o->id];
	if (!b) {
		int64_t count;
		if (!group_int(r, t, o, r->c->kw.count, 1, &count))
			return EX_ERR;
		b = ir_xalloc(r->al, sizeof *b);
		b->name = &o->op->res[0];
		b->count = count;
		b->n = o->op->res[0].type->n;
		b->b = ir_xalloc(r->al, sizeof(Bar) * (size_t)b->n);
		memset(b->b, 0, sizeof(Bar) * (size_t)b->n);
		for (int64_t i = 0; i < b->n; i++)
			b->b[i].pending = count;
		c->stat[o->id] = b;
	}
	Val v = {.k = V_MBAR};
	v.u.b = b;
	interp_set(r, t, o->res, v);
	return EX_OK;
}

void
interp_mbar_free(Run *r, Mbar *b)
{
	for (int64_t i = 0; i < b->n; i++)
		ir_xfree(r->al, b->b[i].seen, sizeof(int64_t) * (size_t)b->b[i].nseen);
	ir_xfree(r->al, b->b, sizeof(Bar) * (size_t)b->n);
	ir_xfree(r->al, b, sizeof *b);
}

bool
interp_mbar_ref(Run *r, Task *t, IOp *o, const IrItem *it, Mbar **b, int64_t *bi)
{
	*b = item(r, t, o, it)->u.b;
	*bi = 0;
	if (!it->suffix)
		return true;
	bool ok = true;
	*bi = interp_expr(r, t, o, it->coord[0].e, &ok);
	if (!ok) {
		interp_err(r, t, o, "index expression divides by a value that is not positive");
		return false;
	}
	if (*bi < 0 || *bi >= (*b)->n) {
		interp_err(r, t, o, "barrier index %lld is out of range for '%%%s' (%lld barriers)",
		           (long long)*bi, interp_vname((*b)->name), (long long)(*b)->n);
		return false;
	}
	return true;
}

static void
bar_name(const Mbar *b, int64_t bi, char *buf, size_t n)
{
	snprintf(buf, n, "'%%%s[%lld]'", interp_vname(b->name), (long long)bi);
}

static void
complete(Run *r, const Mbar *b, Bar *x)
{
	x->phase++;
	x->pending = b->count;
	x->tx = x->tx_exp = x->tx_got = 0;
	r->cta->epoch++;
}

/* One execution's arrivals (expect_tx is one arrival that also expects bytes). */
static bool
arrive(Run *r, Task *t, IOp *o, Mbar *b, int64_t bi, int64_t n)
{
	Bar *x = &b->b[bi];
	char nm[96];
	bar_name(b, bi, nm, sizeof nm);
	if (x->pending == 0) {
		interp_err(
		    r, t, o,
		    "arrival on %s beyond its count: phase %lld already has all %lld arrivals "
		    "and waits for %lld more bytes",
		    nm, (long long)x->phase, (long long)b->count, (long long)x->tx);
		return false;
	}
	if (n > x->pending) {
		interp_err(
		    r, t, o,
		    "%lld arrivals on %s exceed the %lld still missing in phase %lld (count %lld)",
		    (long long)n, nm, (long long)x->pending, (long long)x->phase,
		    (long long)b->count);
		return false;
	}
	x->pending -= n;
	r->cta->epoch++;
	if (x->pending == 0) {
		if (x->tx < 0) {
			interp_err(r, t, o,
			           "tx-byte mismatch: phase %lld of %s received %lld bytes but "
			           "expected %lld",
			           (long long)x->phase, nm, (long long)x->tx_got,
			           (long long)x->tx_exp);
			return false;
		}
		if (x->tx == 0)
			complete(r, b, x);
	}
	return true;
}

int
interp_mbar_arrive(Run *r, Task *t, IOp *o)
{
	Mbar *b;
	int64_t bi, n;
	if (!interp_mbar_ref(r, t, o, &o->op->item[0], &b, &bi) ||
	    !group_int(r, t, o, r->c->kw.count, 1, &n))
		return EX_ERR;
	if (n < 1) {
		interp_err(r, t, o, "'count' must be at least 1, found %lld", (long long)n);
		return EX_ERR;
	}
	return arrive(r, t, o, b, bi, n) ? EX_OK : EX_ERR;
}

int
interp_mbar_expect_tx(Run *r, Task *t, IOp *o)
{
	Mbar *b;
	int64_t bi, bytes;
	if (!interp_mbar_ref(r, t, o, &o->op->item[0], &b, &bi) ||
	    !group_int(r, t, o, r->c->kw.bytes, 0, &bytes))
		return EX_ERR;
	if (bytes < 0) {
		interp_err(r, t, o, "'bytes' must not be negative, found %lld", (long long)bytes);
		return EX_ERR;
	}
	Bar *x = &b->b[bi];
	if (x->pending > 0) {
		x->tx += bytes;
		x->tx_exp += bytes;
	}
	return arrive(r, t, o, b, bi, 1) ? EX_OK : EX_ERR;
}

bool
interp_bar_complete_tx(Run *r, IOp *o, const char *who, Mbar *b, int64_t bi, int64_t bytes)
{
	Bar *x = &b->b[bi];
	if (x->pending == 0 && bytes > x->tx) {
		char nm[96];
		bar_name(b, bi, nm, sizeof nm);
		interp_err_where(r, o, who,
		                 "tx-byte mismatch: the async copy of %lld bytes lands on %s in "
		                 "phase %lld, which expects only %lld more (expect_tx announced "
		                 "%lld, %lld landed before)",
		                 (long long)bytes, nm, (long long)x->phase, (long long)x->tx,
		                 (long long)x->tx_exp, (long long)x->tx_got);
		return false;
	}
	x->tx -= bytes;
	x->tx_got += bytes;
	r->cta->epoch++;
	if (x->pending == 0 && x->tx == 0)
		complete(r, b, x);
	return true;
}

static int64_t
seen_get(const Bar *x, int id)
{
	return id < x->nseen ? x->seen[id] : -1;
}

static void
seen_set(Run *r, Bar *x, int id, int64_t phase)
{
	if (id >= x->nseen) {
		int n = id + 8;
		x->seen = ir_xrealloc(r->al, x->seen, sizeof(int64_t) * (size_t)x->nseen,
		                      sizeof(int64_t) * (size_t)n);
		for (int i = x->nseen; i < n; i++)
			x->seen[i] = -1;
		x->nseen = n;
	}
	x->seen[id] = phase;
}

/* Passes once the current phase's parity differs from p. A task that finds the barrier two or
 * more phases past the last one it passed has lost track of the parity: an error. */
int
interp_mbar_wait(Run *r, Task *t, IOp *o)
{
	Mbar *b;
	int64_t bi, p;
	if (!interp_mbar_ref(r, t, o, &o->op->item[0], &b, &bi) ||
	    !group_int(r, t, o, r->c->kw.parity, 0, &p))
		return EX_ERR;
	p &= 1;
	Bar *x = &b->b[bi];
	int64_t seen = seen_get(x, t->id);
	if (seen >= 0 && x->phase - seen >= 2) {
		char nm[96];
		bar_name(b, bi, nm, sizeof nm);
		interp_err(
		    r, t, o,
		    "'ave.mbar.wait' on %s parity %lld is %lld phases behind: the barrier "
		    "completed phases %lld to %lld since this task last passed a wait on it, so "
		    "its parity is ambiguous",
		    nm, (long long)p, (long long)(x->phase - seen), (long long)seen,
		    (long long)(x->phase - 1));
		return EX_ERR;
	}
	if ((x->phase & 1) != p) {
		seen_set(r, x, t->id, x->phase);
		return EX_OK;
	}
	t->wait_op = o;
	t->wait_bar = b;
	t->wait_bi = bi;
	t->wait_par = p;
	return EX_BLOCK;
}

static int64_t
replicas(Run *r, IOp *role)
{
	return ir_role_info(r->c, role->op).replicas;
}

/* ave.barrier: the CTA's own task is alone outside roles; inside a role, its replicas meet. */
int
interp_barrier(Run *r, Task *t, IOp *o)
{
	if (!t->role)
		return EX_OK;
	RoleBar *rb = &r->cta->rbar[t->role->id];
	int64_t n = replicas(r, t->role);
	if (!t->in_barrier) {
		t->in_barrier = true;
		t->barrier_gen = rb->gen;
		if (++rb->arrived == n) {
			rb->arrived = 0;
			rb->gen++;
			r->cta->epoch++;
		}
	}
	if (rb->gen != t->barrier_gen) {
		t->in_barrier = false;
		return EX_OK;
	}
	t->wait_op = o;
	return EX_BLOCK;
}

void
interp_describe_wait(Run *r, Task *t, char *buf, size_t n)
{
	IOp *o = t->wait_op;
	switch (o->op->code) {
	case IR_OP_MBAR_WAIT: {
		Bar *x = &t->wait_bar->b[t->wait_bi];
		char nm[96];
		bar_name(t->wait_bar, t->wait_bi, nm, sizeof nm);
		snprintf(
		    buf, n, "on %s parity %lld (phase %lld never completes: %lld of %lld arrivals",
		    nm, (long long)t->wait_par, (long long)x->phase,
		    (long long)(t->wait_bar->count - x->pending), (long long)t->wait_bar->count);
		size_t len = strlen(buf);
		if (x->tx_exp || x->tx_got)
			snprintf(buf + len, n - len, ", %lld of %lld bytes)", (long long)x->tx_got,
			         (long long)x->tx_exp);
		else
			snprintf(buf + len, n - len, ")");
		return;
	}
	case IR_OP_BARRIER:
		snprintf(buf, n, "at 'ave.barrier' (%lld of %lld replicas of role @%s arrived)",
		         (long long)r->cta->rbar[t->role->id].arrived,
		         (long long)replicas(r, t->role), t->role->op->item[0].s);
		return;
	case IR_OP_CHUNK_WAIT:
		interp_describe_chunk_wait(r, t, buf, n);
		return;
	default:
		snprintf(buf, n, "for its roles to finish");
		return;
	}
}
