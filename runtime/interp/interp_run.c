/* interp_run.c — launching a kernel: binding arguments, running the grid CTA by CTA, and inside a
 * CTA the seeded scheduler over tasks (the CTA's own task, one per role replica) and in-flight
 * copies. Tasks keep explicit frame stacks, so a blocked op simply returns and is retried later.
 *
 *   schedule s (seed + s) ──▶ CTAs in a seeded order ──▶ per CTA:
 *       candidates = runnable tasks + landing copies ──splitmix64──▶ pick one
 *       task: run ops up to the next scheduling point │ copy: land it, count its bytes
 *       nothing to pick while a task is blocked ──▶ deadlock report */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

/* ---- values ---- */

Val *
interp_val(Run *r, Task *t, int slot)
{
	if (r->p->depth[slot] == 0 && t->parent)
		t = t->parent;
	return &t->env[slot];
}

void
interp_val_release(Run *r, Val *v)
{
	if (v->k == V_TILE || v->k == V_PEND)
		interp_tile_release(r, v->u.t);
	v->k = V_NONE;
}

Val
interp_val_copy(const Val *v)
{
	if (v->k == V_TILE || v->k == V_PEND)
		v->u.t->refs++;
	return *v;
}

void
interp_set(Run *r, Task *t, int slot, Val v)
{
	Val *d = interp_val(r, t, slot);
	interp_val_release(r, d);
	*d = v;
}

/* splitmix64: the scheduler's only source of choices */
uint64_t
interp_rand(Run *r)
{
	uint64_t z = (r->rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* ---- diagnostics ---- */

static void
appendf(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

static void
loops(Task *t, char *buf, size_t n)
{
	for (int i = 0; i < t->depth; i++) {
		IOp *owner = t->fr[i].b->owner;
		if (owner && owner->op->code == IR_OP_FOR)
			appendf(buf, n, ", %%%s = %lld",
			        interp_vname(owner->op->reg[0].block->arg[0]),
			        (long long)t->fr[i].iv);
	}
}

void
interp_where(Run *r, Task *t, char *buf, size_t n)
{
	Cta *c = r->cta;
	buf[0] = 0;
	appendf(buf, n, "CTA (%lld, %lld, %lld)", (long long)c->pid[0], (long long)c->pid[1],
	        (long long)c->pid[2]);
	if (t->parent)
		loops(t->parent, buf, n);
	if (t->role)
		appendf(buf, n, ", role @%s replica %lld", t->role->op->item[0].s,
		        (long long)t->replica);
	loops(t, buf, n);
}

static void
seed_note(Run *r, IrDiag *d)
{
	if (r->nsched <= 1)
		return;
	IrLoc loc = {r->p->kernel->loc.file, 0, 0};
	ir_diag_note(
	    r->c, d, loc, "under schedule %d of %d (seed %llu); replay it with --seed=%llu",
	    r->sched + 1, r->nsched, (unsigned long long)r->seed, (unsigned long long)r->seed);
}

static void
err_v(Run *r, IOp *o, const char *where, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	IrDiag *d = ir_diag_begin(r->c, IR_SEV_ERROR, o->op->loc, "%s; in %s", msg, where);
	d->code = "interp";
	seed_note(r, d);
	ir_diag_emit(r->c, d);
}

void
interp_err(Run *r, Task *t, IOp *o, const char *fmt, ...)
{
	char where[512];
	interp_where(r, t, where, sizeof where);
	va_list ap;
	va_start(ap, fmt);
	err_v(r, o, where, fmt, ap);
	va_end(ap);
}

void
interp_err_where(Run *r, IOp *o, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_v(r, o, where, fmt, ap);
	va_end(ap);
}

/* ---- tasks ---- */

void
interp_push(Run *r, Task *t, IBlock *b)
{
	if (t->depth == t->cap) {
		int cap = t->cap ? 2 * t->cap : 8;
		t->fr = ir_xrealloc(r->al, t->fr, sizeof *t->fr * (size_t)t->cap,
		                    sizeof *t->fr * (size_t)cap);
		t->cap = cap;
	}
	Frame *f = &t->fr[t->depth++];
	memset(f, 0, sizeof *f);
	f->b = b;
}

Task *
interp_spawn(Run *r, IOp *role, int64_t replica, Task *parent)
{
	Cta *c = r->cta;
	Task *t = ir_xalloc(r->al, sizeof *t);
	memset(t, 0, sizeof *t);
	t->id = c->ntask;
	t->role = role;
	t->replica = replica;
	t->parent = parent;
	t->env = ir_xalloc(r->al, sizeof(Val) * (size_t)(r->p->nslots + 1));
	memset(t->env, 0, sizeof(Val) * (size_t)(r->p->nslots + 1));
	interp_push(r, t, role ? role->reg[0] : r->p->body);
	if (c->ntask == c->captask) {
		int cap = c->captask ? 2 * c->captask : 8;
		c->task = ir_xrealloc(r->al, c->task, sizeof *c->task * (size_t)c->captask,
		                      sizeof *c->task * (size_t)cap);
		c->captask = cap;
	}
	c->task[c->ntask++] = t;
	r->st.tasks++;
	return t;
}

void
interp_task_retire(Run *r, Task *t)
{
	while (t->nmma) /* a task that ends with async MMAs in flight: they are done now */
		interp_mma_retire(r, t, 0);
	if (t->env)
		for (int i = 0; i < r->p->nslots; i++)
			interp_val_release(r, &t->env[i]);
	ir_xfree(r->al, t->env, sizeof(Val) * (size_t)(r->p->nslots + 1));
	ir_xfree(r->al, t->fr, sizeof *t->fr * (size_t)t->cap);
	ir_xfree(r->al, t->mma, sizeof *t->mma * (size_t)t->capmma);
	ir_xfree(r->al, t->unf, sizeof *t->unf * (size_t)t->capunf);
	t->env = NULL;
	t->fr = NULL;
	t->mma = NULL;
	t->unf = NULL;
	t->cap = t->capmma = t->capunf = t->depth = t->nmma = t->nunf = 0;
}

static void
task_free(Run *r, Task *t)
{
	interp_task_retire(r, t);
	ir_xfree(r->al, t, sizeof *t);
}

enum { S_YIELD, S_BLOCKED, S_DONE, S_ERR };

/* Runs the task up to its next scheduling point, a block, its end or an error. */
static int
step(Run *r, Task *t)
{
	Cta *c = r->cta;
	for (;;) {
		if (t->depth == 0) {
			t->st = T_DONE;
			c->epoch++;
			return S_DONE;
		}
		Frame *f = &t->fr[t->depth - 1];
		if (f->pc >= f->b->nops) { /* the end of a role's body */
			t->depth--;
			continue;
		}
		IOp *o = &f->b->ops[f->pc];
		if (o->point && !t->announced) {
			t->announced = true;
			t->st = T_READY;
			return S_YIELD;
		}
		int d = t->depth;
		int rc = interp_exec(r, t, o);
		switch (rc) {
		case EX_OK:
			t->fr[d - 1].pc++;
			break;
		case EX_JUMP:
			break;
		case EX_BLOCK:
			t->st = T_BLOCKED;
			t->blocked_at = c->epoch;
			return S_BLOCKED;
		case EX_DONE:
			t->depth = 0;
			continue;
		default:
			return S_ERR;
		}
		t->announced = false;
		t->wait_op = NULL;
		r->st.ops++;
	}
}

/* ---- deadlocks ---- */

static void
who(Task *t, char *buf, size_t n)
{
	if (t->role)
		snprintf(buf, n, "role @%s replica %lld", t->role->op->item[0].s,
		         (long long)t->replica);
	else
		snprintf(buf, n, "the CTA");
}

/* Every live task is blocked and no copy is in flight: says who waits for what, a role first. */
static void
deadlock(Run *r)
{
	Cta *c = r->cta;
	Task *first = NULL;
	for (int i = 0; i < c->ntask; i++) {
		Task *t = c->task[i];
		if (t->st != T_DONE && t->wait_op && (!first || (!first->role && t->role)))
			first = t;
	}
	if (!first)
		ir_unreachable("a blocked task without the op it waits at");
	char desc[512], where[512], w[160];
	interp_describe_wait(r, first, desc, sizeof desc);
	interp_where(r, first, where, sizeof where);
	who(first, w, sizeof w);
	IrLoc l = first->wait_op->op->loc;
	IrDiag *d = ir_diag_begin(r->c, IR_SEV_ERROR, l, "deadlock: %s waits at %u:%u %s; in %s", w,
	                          l.line, l.col, desc, where);
	d->code = "interp";
	for (int i = 0; i < c->ntask; i++) {
		Task *t = c->task[i];
		if (t == first || t->st == T_DONE || !t->wait_op)
			continue;
		interp_describe_wait(r, t, desc, sizeof desc);
		interp_where(r, t, where, sizeof where);
		who(t, w, sizeof w);
		IrLoc tl = t->wait_op->op->loc;
		ir_diag_note(r->c, d, tl, "%s waits at %u:%u %s; in %s", w, tl.line, tl.col, desc,
		             where);
	}
	seed_note(r, d);
	ir_diag_emit(r->c, d);
}

/* ---- one CTA ---- */

static void
cta_free(Run *r, Cta *c)
{
	for (int i = 0; i < c->ntask; i++)
		task_free(r, c->task[i]);
	ir_xfree(r->al, c->task, sizeof *c->task * (size_t)c->captask);
	ir_xfree(r->al, c->copy, sizeof *c->copy * (size_t)c->capcopy);
	for (int i = 0; i < r->p->nops; i++) {
		if (!c->stat[i])
			continue;
		if (r->p->ops[i]->op->code == IR_OP_SMEM_ALLOC)
			interp_smem_free(r, c->stat[i]);
		else
			interp_mbar_free(r, c->stat[i]);
	}
	ir_xfree(r->al, c->stat, sizeof(void *) * (size_t)(r->p->nops + 1));
	ir_xfree(r->al, c->rbar, sizeof(RoleBar) * (size_t)(r->p->nops + 1));
}

static void
bind_args(Run *r, Task *t)
{
	IrBlock *kb = r->p->kernel->reg[0].block;
	for (int i = 0; i < kb->narg; i++) {
		IrType *ty = kb->arg[i]->type;
		const InterpArg *a = &r->l->args[i];
		Val v = {0};
		if (ty->kind == IR_TY_TENSOR) {
			v.k = V_TENS;
			v.u.g = &r->tens[i];
		} else if (ty->kind == IR_TY_FLOAT) {
			v.k = V_FLT;
			v.u.f = interp_round_f(ty->fk, a->f);
		} else if (ir_type_is_int(ty)) {
			v.k = V_INT;
			v.u.i = (int64_t)interp_wrap(ty->kind == IR_TY_INDEX ? 64 : ty->bits,
			                             (uint64_t)a->i);
		}
		interp_set(r, t, r->p->body->arg[i], v);
	}
}

/* The index in cand (nt tasks first, then landing copies) this schedule runs next. */
static int
pick_candidate(Run *r, const int *cand, int n, int nt)
{
	int nc = n - nt;
	switch (r->policy) {
	case 1: /* copies land late: when no task can run, or now and then */
		if (nt && interp_rand(r) % 16)
			return (int)(interp_rand(r) % (uint64_t)nt);
		break;
	case 2: /* copies land early */
		if (nc && interp_rand(r) % 16)
			return nt + (int)(interp_rand(r) % (uint64_t)nc);
		break;
	case 3: { /* tasks in a seeded priority order, the first runnable one most of the time */
		if (!nt || !(interp_rand(r) % 4))
			break;
		int best = 0;
		uint64_t bp = 0;
		for (int i = 0; i < nt; i++) {
			uint64_t z = (r->seed ^ 0x5851F42D4C957F2Dull) * (uint64_t)(cand[i] + 1) *
			             0x9E3779B97F4A7C15ull;
			z ^= z >> 29;
			if (i == 0 || z > bp) {
				bp = z;
				best = i;
			}
		}
		return best;
	}
	default:
		break;
	}
	return (int)(interp_rand(r) % (uint64_t)n);
}

static bool
run_cta(Run *r, const int64_t pid[3])
{
	Cta cta;
	memset(&cta, 0, sizeof cta);
	memcpy(cta.pid, pid, sizeof cta.pid);
	cta.stat = ir_xalloc(r->al, sizeof(void *) * (size_t)(r->p->nops + 1));
	memset(cta.stat, 0, sizeof(void *) * (size_t)(r->p->nops + 1));
	cta.rbar = ir_xalloc(r->al, sizeof(RoleBar) * (size_t)(r->p->nops + 1));
	memset(cta.rbar, 0, sizeof(RoleBar) * (size_t)(r->p->nops + 1));
	r->cta = &cta;
	r->st.ctas++;
	Task *main = interp_spawn(r, NULL, 0, NULL);
	bind_args(r, main);
	int *cand = NULL, capcand = 0;
	bool ok = true;
	for (;;) {
		int n = 0;
		int need = cta.ntask + cta.ncopy;
		if (need > capcand) {
			int cap = need * 2;
			cand = ir_xrealloc(r->al, cand, sizeof(int) * (size_t)capcand,
			                   sizeof(int) * (size_t)cap);
			capcand = cap;
		}
		bool live = false;
		for (int i = 0; i < cta.ntask; i++) {
			Task *t = cta.task[i];
			if (t->st == T_DONE)
				continue;
			live = true;
			if (t->st == T_READY || t->blocked_at < cta.epoch)
				cand[n++] = i;
		}
		for (int i = 0; i < cta.ncopy; i++)
			cand[n++] = cta.ntask + i;
		if (!n) {
			if (live) {
				deadlock(r);
				ok = false;
			}
			break;
		}
		int pick = cand[n == 1 ? 0 : pick_candidate(r, cand, n, n - cta.ncopy)];
		if (pick >= cta.ntask) {
			int k = pick - cta.ntask;
			Copy cp = cta.copy[k];
			memmove(&cta.copy[k], &cta.copy[k + 1],
			        sizeof cp * (size_t)(cta.ncopy - k - 1));
			cta.ncopy--;
			r->st.copies++;
			if (!interp_copy_land(r, &cp)) {
				ok = false;
				break;
			}
			continue;
		}
		if (step(r, cta.task[pick]) == S_ERR) {
			ok = false;
			break;
		}
	}
	ir_xfree(r->al, cand, sizeof(int) * (size_t)capcand);
	cta_free(r, &cta);
	r->cta = NULL;
	return ok;
}

/* ---- arguments ---- */

static bool
bind_tensors(Run *r)
{
	IrCtx *c = r->c;
	IrBlock *kb = r->p->kernel->reg[0].block;
	const InterpLaunch *l = r->l;
	if (l->nargs != kb->narg) {
		ir_error(c, r->p->kernel->loc, "kernel '@%s' takes %d argument%s, %d given",
		         r->p->kernel->item[0].s, kb->narg, kb->narg == 1 ? "" : "s", l->nargs);
		return false;
	}
	for (int i = 0; i < kb->narg; i++) {
		IrValue *av = kb->arg[i];
		IrType *ty = av->type;
		const InterpArg *a = &l->args[i];
		bool want = ty->kind == IR_TY_TENSOR || ty->kind == IR_TY_PTR;
		if (want != a->tensor) {
			ir_error(c, av->loc, "argument '%%%s' of type '%s' needs %s",
			         interp_vname(av), ir_type_str(c, ty),
			         want ? "an array" : "a scalar");
			return false;
		}
		if (ty->kind != IR_TY_TENSOR)
			continue;
		Tens *g = &r->tens[i];
		const InterpTensor *at = &a->t;
		g->arg = av;
		g->elem = ty->elem;
		g->esz = interp_elem_size(ty->elem);
		g->data = at->data;
		g->nelem = at->nelem;
		g->rank = ty->rank;
		if (at->elem && at->elem != ty->elem) {
			ir_error(c, av->loc, "argument '%%%s' of type '%s' holds '%s', the array '%s'",
				 interp_vname(av), ir_type_str(c, ty), ir_type_str(c, ty->elem),
				 ir_type_str(c, at->elem));
			return false;
		}
		if (at->rank != ty->rank) {
			ir_error(c, av->loc,
			         "argument '%%%s' of type '%s' has rank %d, the array %d",
			         interp_vname(av), ir_type_str(c, ty), ty->rank, at->rank);
			return false;
		}
		for (int d = 0; d < ty->rank; d++) {
			if (ty->dims[d] != IR_DYN && ty->dims[d] != at->dims[d]) {
				ir_error(c, av->loc,
				         "argument '%%%s' of type '%s' has %lld elements in "
				         "dimension %d, the array %lld",
				         interp_vname(av), ir_type_str(c, ty),
				         (long long)ty->dims[d], d, (long long)at->dims[d]);
				return false;
			}
			if (at->dims[d] < 0) {
				ir_error(c, av->loc, "argument '%%%s': negative size %lld",
				         interp_vname(av), (long long)at->dims[d]);
				return false;
			}
			g->dims[d] = at->dims[d];
		}
		/* strides: written in the type, else `?` from the array, else row-major */
		int64_t s = 1;
		for (int d = ty->rank - 1; d >= 0; d--) {
			if (!ty->strides)
				g->str[d] = s;
			else if (ty->strides[d] != IR_DYN)
				g->str[d] = ty->strides[d];
			else
				g->str[d] = at->strides[d];
			s *= g->dims[d];
		}
	}
	return true;
}

/* ---- schedules ---- */

static size_t
tens_bytes(const Tens *g)
{
	return g->nelem > 0 ? (size_t)g->nelem * g->esz : 0;
}

static void
describe_elem(const Tens *g, int64_t k, char *buf, size_t n)
{
	double v = interp_mem_get_f64(g->elem, g->data, k);
	snprintf(buf, n, "%.9g", v);
}

/* Compares the arguments with the first schedule's results; reports the first difference. */
static bool
same_results(Run *r, unsigned char **ref, uint64_t ref_seed)
{
	IrBlock *kb = r->p->kernel->reg[0].block;
	for (int i = 0; i < kb->narg; i++) {
		Tens *g = &r->tens[i];
		if (!g->arg || !tens_bytes(g) || !memcmp(ref[i], g->data, tens_bytes(g)))
			continue;
		int64_t k = 0;
		while (!memcmp(ref[i] + (size_t)k * g->esz, g->data + (size_t)k * g->esz, g->esz))
			k++;
		char a[64], b[64];
		Tens tmp = *g;
		tmp.data = ref[i];
		describe_elem(&tmp, k, a, sizeof a);
		describe_elem(g, k, b, sizeof b);
		IrDiag *d =
		    ir_diag_begin(r->c, IR_SEV_ERROR, r->p->kernel->loc,
		                  "the result depends on the schedule: element %lld of '%%%s' "
		                  "is %s under seed %llu but %s under seed %llu (a race between "
		                  "roles or CTAs)",
		                  (long long)k, interp_vname(g->arg), a,
		                  (unsigned long long)ref_seed, b, (unsigned long long)r->seed);
		d->code = "interp";
		seed_note(r, d);
		ir_diag_emit(r->c, d);
		return false;
	}
	return true;
}

static uint64_t
gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Runs every CTA once. CTAs are independent, so they run in a seeded order: i -> (a i + b) mod n
 * with a coprime to n, a permutation that needs no memory however large the grid. */
static bool
run_schedule(Run *r)
{
	uint64_t n = (uint64_t)(r->grid[0] * r->grid[1] * r->grid[2]);
	uint64_t a = 1 + interp_rand(r) % n, b = interp_rand(r) % n;
	while (gcd(a, n) != 1)
		a = a % n + 1;
	bool ok = true;
	for (uint64_t i = 0; i < n && ok; i++) {
		/* (a * i + b) mod n without overflow: a, i < n < 2^63 */
		uint64_t k = 0, x = a % n, y = i;
		while (y) {
			if (y & 1)
				k = (k + x) % n;
			x = (x + x) % n;
			y >>= 1;
		}
		k = (k + b) % n;
		int64_t pid[3] = {(int64_t)k % r->grid[0], ((int64_t)k / r->grid[0]) % r->grid[1],
		                  (int64_t)k / (r->grid[0] * r->grid[1])};
		ok = run_cta(r, pid);
	}
	return ok;
}

IrOp *
interp_find_kernel(IrModule *m, const char *name)
{
	if (name[0] == '@')
		name++;
	for (IrOp *op = m->body->first; op; op = op->next) {
		if (op->code == IR_OP_KERNEL && !strcmp(op->item[0].s, name))
			return op;
		if (op->code == IR_OP_MODULE)
			for (IrOp *k = op->reg[0].block->first; k; k = k->next)
				if (k->code == IR_OP_KERNEL && !strcmp(k->item[0].s, name))
					return k;
	}
	return NULL;
}

/* Warns about each tensor the kernel stored into that still has elements no CTA wrote (a grid
 * too small, a bound off by a tile): they keep their input values. */
static void
unwritten_warnings(Run *r)
{
	IrBlock *kb = r->p->kernel->reg[0].block;
	for (int i = 0; i < kb->narg; i++) {
		const Tens *g = &r->tens[i];
		if (!g->written)
			continue;
		int64_t idx[IR_MAX_RANK] = {0}, total = 1, missed = 0;
		for (int d = 0; d < g->rank; d++)
			total *= g->dims[d];
		for (int64_t k = 0; k < total; k++) {
			int64_t off = 0;
			for (int d = 0; d < g->rank; d++)
				off += idx[d] * g->str[d];
			missed += off >= 0 && off < g->nelem && !g->written[off];
			for (int d = g->rank - 1; d >= 0 && ++idx[d] == g->dims[d]; d--)
				idx[d] = 0;
		}
		if (missed) {
			IrLoc none = {0, 0, 0};
			ir_warning(r->c, none, "output %%%s: %lld of %lld elements were not written by any "
				   "CTA (grid %lldx%lldx%lld)", interp_vname(g->arg), (long long)missed,
				   (long long)total, (long long)r->grid[0], (long long)r->grid[1],
				   (long long)r->grid[2]);
		}
	}
}

bool
interp_run(IrModule *m, const InterpLaunch *l, const InterpOptions *o, InterpStats *stats)
{
	IrCtx *c = m->ctx;
	InterpOptions dflt = {0};
	if (!o)
		o = &dflt;
	if (!l->kernel || l->kernel->code != IR_OP_KERNEL)
		ir_unreachable("interp_run needs an ave.kernel");
	if (l->world_size > 1) {
		ir_error(c, l->kernel->loc,
		         "launches on %d ranks are not supported by the interpreter "
		         "yet",
		         l->world_size);
		return false;
	}
	int64_t ncta = 1;
	for (int d = 0; d < 3; d++) {
		if (l->grid[d] < 1) {
			ir_error(c, l->kernel->loc,
			         "grid dimension %d must be at least 1, found %lld", d,
			         (long long)l->grid[d]);
			return false;
		}
		if (__builtin_mul_overflow(ncta, l->grid[d], &ncta) || ncta > ((int64_t)1 << 62)) {
			ir_error(c, l->kernel->loc, "the grid has too many CTAs");
			return false;
		}
	}
	double t0 = ir_now();
	Run r;
	memset(&r, 0, sizeof r);
	r.c = c;
	r.al = c->al;
	r.l = l;
	r.o = o;
	memcpy(r.grid, l->grid, sizeof r.grid);
	r.nsched = o->schedules > 0 ? o->schedules : 1;
	r.p = interp_prep(c, l->kernel);
	if (!r.p)
		return false;
	int nargs = r.p->kernel->reg[0].block->narg;
	r.tens = ir_xalloc(r.al, sizeof(Tens) * (size_t)(nargs + 1));
	memset(r.tens, 0, sizeof(Tens) * (size_t)(nargs + 1));
	bool ok = bind_tensors(&r);
	unsigned char **pristine = NULL, **ref = NULL;
	if (ok && r.nsched > 1) {
		pristine = ir_xalloc(r.al, sizeof *pristine * (size_t)(nargs + 1));
		ref = ir_xalloc(r.al, sizeof *ref * (size_t)(nargs + 1));
		for (int i = 0; i < nargs; i++) {
			size_t b = tens_bytes(&r.tens[i]);
			pristine[i] = ref[i] = NULL;
			if (!b)
				continue;
			pristine[i] = ir_xalloc(r.al, b);
			memcpy(pristine[i], r.tens[i].data, b);
			ref[i] = ir_xalloc(r.al, b);
		}
	}
	for (int s = 0; ok && s < r.nsched; s++) {
		r.sched = s;
		r.seed = o->seed + (uint64_t)s;
		r.rng = r.seed;
		/* Seed 0 picks uniformly; other seeds also try extremes: copies landing as late as
		 * possible, as early as possible, or one role running ahead of the others. */
		r.policy = r.seed ? (int)(interp_rand(&r) % 4) : 0;
		r.rng = r.seed;
		interp_labels_init(&r);
		if (s > 0)
			for (int i = 0; i < nargs; i++)
				if (pristine[i])
					memcpy(r.tens[i].data, pristine[i], tens_bytes(&r.tens[i]));
		ok = run_schedule(&r);
		for (int i = 0; i < nargs; i++) {
			ir_xfree(r.al, r.tens[i].labels,
			         sizeof(uint32_t) * (size_t)r.tens[i].nelem);
			r.tens[i].labels = NULL;
		}
		interp_labels_free(&r);
		if (!ok) {
			r.st.failed = true;
			r.st.failed_seed = r.seed;
			break;
		}
		r.st.schedules++;
		if (r.nsched > 1 && s == 0) {
			for (int i = 0; i < nargs; i++)
				if (ref[i])
					memcpy(ref[i], r.tens[i].data, tens_bytes(&r.tens[i]));
		} else if (r.nsched > 1 && !o->no_compare && !same_results(&r, ref, o->seed)) {
			ok = false;
			r.st.failed = true;
			r.st.failed_seed = r.seed;
		}
	}
	if (ok)
		unwritten_warnings(&r);
	for (int i = 0; i < nargs; i++)
		ir_xfree(r.al, r.tens[i].written, r.tens[i].written ? (size_t)r.tens[i].nelem : 0);
	if (pristine) {
		for (int i = 0; i < nargs; i++) {
			ir_xfree(r.al, pristine[i], tens_bytes(&r.tens[i]));
			ir_xfree(r.al, ref[i], tens_bytes(&r.tens[i]));
		}
		ir_xfree(r.al, pristine, sizeof *pristine * (size_t)(nargs + 1));
		ir_xfree(r.al, ref, sizeof *ref * (size_t)(nargs + 1));
	}
	ir_xfree(r.al, r.tens, sizeof(Tens) * (size_t)(nargs + 1));
	ir_xfree(r.al, r.scratch, r.scratch_bytes);
	interp_prog_free(r.p);
	r.st.seconds = ir_now() - t0;
	if (stats)
		*stats = r.st;
	return ok;
}
