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
	if (r->o->launches > 1)
		appendf(buf, n, "launch %lld, ", (long long)r->epoch);
	if (r->world > 1)
		appendf(buf, n, "rank %d, ", r->rank);
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
	ir_xfree(r->al, c->acq, sizeof *c->acq * (size_t)c->capacq);
}

/* Makes r->cta, its rank's arguments and launch current. */
static void
switch_to(Run *r, Cta *c)
{
	r->cta = c;
	r->rank = c->rank;
	r->l = &r->ls[c->rank];
	r->tens = r->all + (size_t)c->rank * (size_t)r->nargs;
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

/* Starts CTA `pid` of `rank`: its own task with the arguments bound. */
static void
cta_init(Run *r, Cta *c, int rank, const int64_t pid[3])
{
	memset(c, 0, sizeof *c);
	memcpy(c->pid, pid, sizeof c->pid);
	c->rank = rank;
	int64_t lin = r->walk ? pid[0] : pid[0] + r->grid[0] * (pid[1] + r->grid[1] * pid[2]);
	c->gid = r->ncta * r->world < INT32_MAX ? (int32_t)(rank * r->ncta + lin) : 0;
	c->stat = ir_xalloc(r->al, sizeof(void *) * (size_t)(r->p->nops + 1));
	memset(c->stat, 0, sizeof(void *) * (size_t)(r->p->nops + 1));
	c->rbar = ir_xalloc(r->al, sizeof(RoleBar) * (size_t)(r->p->nops + 1));
	memset(c->rbar, 0, sizeof(RoleBar) * (size_t)(r->p->nops + 1));
	switch_to(r, c);
	r->st.ctas++;
	Task *main = interp_spawn(r, NULL, 0, NULL);
	bind_args(r, main);
}

static bool
run_cta(Run *r, const int64_t pid[3])
{
	Cta cta;
	cta_init(r, &cta, 0, pid);
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

/* Every buffer of the run: each rank's arguments, then each rank's symmetric copies. */
static int
nflat(const Run *r)
{
	return r->world * (r->nargs + r->nsymm);
}

static Tens *
flat(Run *r, int i)
{
	int na = r->world * r->nargs;
	return i < na ? &r->all[i] : &r->symm[i - na];
}

static void
describe_elem(const Tens *g, int64_t k, char *buf, size_t n)
{
	double v = interp_mem_get_f64(g->elem, g->data, k);
	snprintf(buf, n, "%.9g", v);
}

/* Compares the buffers with the first schedule's results; reports the first difference. */
static bool
same_results(Run *r, unsigned char **ref, uint64_t ref_seed)
{
	for (int i = 0; i < nflat(r); i++) {
		Tens *g = flat(r, i);
		if ((!g->arg && !g->sym) || !tens_bytes(g) || !memcmp(ref[i], g->data, tens_bytes(g)))
			continue;
		int64_t k = 0;
		while (!memcmp(ref[i] + (size_t)k * g->esz, g->data + (size_t)k * g->esz, g->esz))
			k++;
		char a[64], b[64], nm[128];
		Tens tmp = *g;
		tmp.data = ref[i];
		describe_elem(&tmp, k, a, sizeof a);
		describe_elem(g, k, b, sizeof b);
		interp_tens_name(r, g, nm, sizeof nm);
		if (!g->sym && r->world > 1) {
			size_t len = strlen(nm);
			snprintf(nm + len, sizeof nm - len, " of rank %d", i / r->nargs);
		}
		IrDiag *d =
		    ir_diag_begin(r->c, IR_SEV_ERROR, r->p->kernel->loc,
		                  "the result depends on the schedule: element %lld of '%s' "
		                  "is %s under seed %llu but %s under seed %llu (a race between "
		                  "%s)",
		                  (long long)k, nm, a, (unsigned long long)ref_seed, b,
		                  (unsigned long long)r->seed,
		                  r->world > 1 ? "ranks, roles or CTAs" : "roles or CTAs");
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

/* A seeded permutation of [0, n): i -> (a i + b) mod n with a coprime to n, which needs no memory
 * however large the grid. */
typedef struct Perm {
	uint64_t a, b, n;
} Perm;

static Perm
perm_new(Run *r, uint64_t n)
{
	Perm p = {0, 0, n};
	p.a = 1 + interp_rand(r) % n;
	p.b = interp_rand(r) % n;
	while (gcd(p.a, n) != 1)
		p.a = p.a % n + 1;
	return p;
}

static void
perm_pid(Run *r, const Perm *p, uint64_t i, int64_t pid[3])
{
	/* (a * i + b) mod n without overflow: a, i < n < 2^63 */
	uint64_t n = p->n, k = 0, x = p->a % n, y = i;
	while (y) {
		if (y & 1)
			k = (k + x) % n;
		x = (x + x) % n;
		y >>= 1;
	}
	k = (k + p->b) % n;
	if (r->walk) {
		pid[0] = (int64_t)k;
		pid[1] = pid[2] = 0;
		return;
	}
	pid[0] = (int64_t)k % r->grid[0];
	pid[1] = ((int64_t)k / r->grid[0]) % r->grid[1];
	pid[2] = (int64_t)k / (r->grid[0] * r->grid[1]);
}

/* Runs every CTA once. CTAs are independent, so they run one after another in a seeded order. */
static bool
run_schedule(Run *r)
{
	Perm p = perm_new(r, (uint64_t)r->ncta);
	bool ok = true;
	for (uint64_t i = 0; i < p.n && ok; i++) {
		int64_t pid[3];
		perm_pid(r, &p, i, pid);
		ok = run_cta(r, pid);
	}
	return ok;
}

/* ---- many ranks ---- */

/* Every live task of every started CTA is blocked, no copy is in flight and no CTA is left to
 * start: the first task waiting for a chunk (else any) is the error, the others notes. */
static void
deadlock_world(Run *r)
{
	Task *first = NULL;
	Cta *fc = NULL;
	for (int i = 0; i < r->nact; i++)
		for (int j = 0; j < r->act[i]->ntask; j++) {
			Task *t = r->act[i]->task[j];
			if (t->st == T_DONE || !t->wait_op)
				continue;
			bool chunk = t->wait_op->op->code == IR_OP_CHUNK_WAIT;
			if (!first || (chunk && first->wait_op->op->code != IR_OP_CHUNK_WAIT)) {
				first = t;
				fc = r->act[i];
			}
		}
	if (!first)
		ir_unreachable("a blocked task without the op it waits at");
	char desc[512], where[512], w[160];
	switch_to(r, fc);
	interp_describe_wait(r, first, desc, sizeof desc);
	interp_where(r, first, where, sizeof where);
	who(first, w, sizeof w);
	IrLoc l = first->wait_op->op->loc;
	IrDiag *d = ir_diag_begin(r->c, IR_SEV_ERROR, l,
	                          "deadlock: rank %d (%s) waits at %u:%u %s; in %s", fc->rank, w,
	                          l.line, l.col, desc, where);
	d->code = "interp";
	int notes = 0, more = 0;
	for (int i = 0; i < r->nact; i++)
		for (int j = 0; j < r->act[i]->ntask; j++) {
			Task *t = r->act[i]->task[j];
			if (t == first || t->st == T_DONE || !t->wait_op)
				continue;
			if (notes == 16) {
				more++;
				continue;
			}
			notes++;
			switch_to(r, r->act[i]);
			interp_describe_wait(r, t, desc, sizeof desc);
			interp_where(r, t, where, sizeof where);
			who(t, w, sizeof w);
			IrLoc tl = t->wait_op->op->loc;
			ir_diag_note(r->c, d, tl, "rank %d (%s) waits at %u:%u %s; in %s", r->rank, w,
			             tl.line, tl.col, desc, where);
		}
	if (more) {
		IrLoc none = {r->p->kernel->loc.file, 0, 0};
		ir_diag_note(r->c, d, none, "and %d more blocked tasks", more);
	}
	seed_note(r, d);
	ir_diag_emit(r->c, d);
}

static bool
cta_finished(const Cta *c)
{
	if (c->ncopy)
		return false;
	for (int i = 0; i < c->ntask; i++)
		if (c->task[i]->st != T_DONE)
			return false;
	return true;
}

typedef struct Cand {
	Cta *c;
	int i; /* a task, ntask + a copy, or -1 - rank: start that rank's next CTA */
} Cand;

/* Runs the CTAs of all ranks interleaved: a candidate is a runnable task or landing copy of a
 * started CTA, or the start of a rank's next CTA while fewer than two of its CTAs run. When
 * nothing else can run, another CTA starts (as if every CTA were resident), so only a wait that
 * nothing left can complete is a deadlock. */
static bool
run_world(Run *r)
{
	Perm *perm = ir_xalloc(r->al, sizeof *perm * (size_t)r->world);
	uint64_t *next = ir_xalloc(r->al, sizeof *next * (size_t)r->world);
	int *running = ir_xalloc(r->al, sizeof *running * (size_t)r->world);
	for (int q = 0; q < r->world; q++) {
		perm[q] = perm_new(r, (uint64_t)r->ncta);
		next[q] = 0;
		running[q] = 0;
	}
	Cand *cand = NULL;
	int capcand = 0;
	bool ok = true;
	for (;;) {
		int need = r->world;
		for (int i = 0; i < r->nact; i++)
			need += r->act[i]->ntask + r->act[i]->ncopy;
		if (need > capcand) {
			int cap = need * 2;
			cand = ir_xrealloc(r->al, cand, sizeof *cand * (size_t)capcand,
			                   sizeof *cand * (size_t)cap);
			capcand = cap;
		}
		int n = 0;
		for (int i = 0; i < r->nact; i++) {
			Cta *c = r->act[i];
			for (int j = 0; j < c->ntask; j++) {
				Task *t = c->task[j];
				if (t->st != T_DONE && (t->st == T_READY || t->blocked_at < c->epoch))
					cand[n++] = (Cand){c, j};
			}
			for (int j = 0; j < c->ncopy; j++)
				cand[n++] = (Cand){c, c->ntask + j};
		}
		for (int q = 0; q < r->world; q++)
			if (next[q] < perm[q].n && (running[q] < 2 || !n))
				cand[n++] = (Cand){NULL, -1 - q};
		if (!n && r->nact) {
			for (int q = 0; q < r->world; q++)
				if (next[q] < perm[q].n)
					cand[n++] = (Cand){NULL, -1 - q};
		}
		if (!n) {
			if (r->nact) {
				deadlock_world(r);
				ok = false;
			}
			break;
		}
		Cand pick = cand[n == 1 ? 0 : (int)(interp_rand(r) % (uint64_t)n)];
		Cta *c = pick.c;
		if (!c) {
			int q = -1 - pick.i;
			int64_t pid[3];
			perm_pid(r, &perm[q], next[q]++, pid);
			c = ir_xalloc(r->al, sizeof *c);
			if (r->nact == r->capact) {
				int cap = r->capact ? 2 * r->capact : 16;
				r->act = ir_xrealloc(r->al, r->act, sizeof *r->act * (size_t)r->capact,
				                     sizeof *r->act * (size_t)cap);
				r->capact = cap;
			}
			r->act[r->nact++] = c;
			running[q]++;
			cta_init(r, c, q, pid);
		} else if (pick.i >= c->ntask) {
			switch_to(r, c);
			int k = pick.i - c->ntask;
			Copy cp = c->copy[k];
			memmove(&c->copy[k], &c->copy[k + 1], sizeof cp * (size_t)(c->ncopy - k - 1));
			c->ncopy--;
			r->st.copies++;
			if (!interp_copy_land(r, &cp)) {
				ok = false;
				break;
			}
		} else {
			switch_to(r, c);
			if (step(r, c->task[pick.i]) == S_ERR) {
				ok = false;
				break;
			}
		}
		if (cta_finished(c)) {
			int i = 0;
			while (r->act[i] != c)
				i++;
			r->act[i] = r->act[--r->nact];
			running[c->rank]--;
			cta_free(r, c);
			ir_xfree(r->al, c, sizeof *c);
		}
	}
	while (r->nact) {
		Cta *c = r->act[--r->nact];
		switch_to(r, c);
		cta_free(r, c);
		ir_xfree(r->al, c, sizeof *c);
	}
	r->cta = NULL;
	ir_xfree(r->al, cand, sizeof *cand * (size_t)capcand);
	ir_xfree(r->al, perm, sizeof *perm * (size_t)r->world);
	ir_xfree(r->al, next, sizeof *next * (size_t)r->world);
	ir_xfree(r->al, running, sizeof *running * (size_t)r->world);
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

IrOp *
interp_symm_alloc(IrOp *kernel, int k)
{
	for (IrOp *op = kernel->parent->first; op; op = op->next)
		if (op->code == IR_OP_SYMM_ALLOC && k-- == 0)
			return op;
	return NULL;
}

InterpTensor
interp_symm_tensor(const IrOp *alloc, void *data)
{
	const IrType *ty = alloc->type[0];
	InterpTensor t = {.data = data, .elem = ty->elem, .rank = ty->rank, .nelem = 1};
	int64_t st = 1;
	for (int d = ty->rank - 1; d >= 0; d--) {
		t.dims[d] = ty->dims[d];
		t.strides[d] = ty->strides ? ty->strides[d] : st;
		st *= ty->dims[d];
		t.nelem += (ty->dims[d] - 1) * t.strides[d];
	}
	return t;
}

/* Warns about each tensor the kernel stored into that still has elements no CTA wrote (a grid
 * too small, a bound off by a tile): they keep their input values. */
static void
unwritten_warnings(Run *r)
{
	for (int i = 0; i < r->world * r->nargs; i++) {
		const Tens *g = &r->all[i];
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
			char rk[32] = "";
			if (r->world > 1)
				snprintf(rk, sizeof rk, " of rank %d", i / r->nargs);
			ir_warning(r->c, none, "output %%%s%s: %lld of %lld elements were not written by "
				   "any CTA (grid %lldx%lldx%lld)", interp_vname(g->arg), rk,
				   (long long)missed, (long long)total, (long long)r->grid[0],
				   (long long)r->grid[1], (long long)r->grid[2]);
		}
	}
}

/* Binds rank q's copy of every symmetric buffer: the memory given, else zeros of its own. */
static bool
bind_symm(Run *r, int q)
{
	IrCtx *c = r->c;
	const InterpLaunch *l = &r->ls[q];
	if (l->nsymm > r->nsymm) {
		ir_error(c, r->p->kernel->loc, "the launch of rank %d gives %d symmetric buffers, the "
			 "module declares %d", q, l->nsymm, r->nsymm);
		return false;
	}
	for (int k = 0; k < r->nsymm; k++) {
		IrOp *s = r->symm_op[k];
		IrType *ty = s->type[0];
		Tens *g = &r->symm[q * r->nsymm + k];
		g->sym = s->item[0].s;
		g->owner = q;
		g->elem = ty->elem;
		g->esz = interp_elem_size(ty->elem);
		g->rank = ty->rank;
		InterpTensor view = interp_symm_tensor(s, NULL);
		int64_t need = view.nelem;
		memcpy(g->dims, view.dims, sizeof view.dims);
		memcpy(g->str, view.strides, sizeof view.strides);
		const InterpTensor *at = l->symm && k < l->nsymm && l->symm[k].data ? &l->symm[k] : NULL;
		if (!at) {
			g->nelem = need;
			g->data = ir_xalloc(r->al, (size_t)need * g->esz);
			memset(g->data, 0, (size_t)need * g->esz);
			g->own_data = true;
			continue;
		}
		bool same = at->rank == ty->rank && (!at->elem || at->elem == ty->elem);
		for (int d = 0; same && d < ty->rank; d++)
			same = at->dims[d] == ty->dims[d];
		if (!same || at->nelem < need) {
			ir_error(c, s->loc, "the memory given for '@%s' on rank %d does not hold a '%s'",
				 g->sym, q, ir_type_str(c, ty));
			return false;
		}
		g->data = at->data;
		g->nelem = at->nelem;
	}
	return true;
}

/* Clears what the race detector knows: each launch starts ordered after the previous one. */
static void
new_launch(Run *r)
{
	r->narr = 0;
	for (int i = 0; i < r->world * r->nsymm; i++) {
		Tens *g = &r->symm[i];
		if (g->wcta) {
			memset(g->wcta, 0, sizeof(int32_t) * (size_t)g->nelem);
			memset(g->rcta, 0, sizeof(int32_t) * (size_t)g->nelem);
		}
	}
}

static void
free_tens(Run *r, Tens *g)
{
	size_t n = (size_t)g->nelem;
	ir_xfree(r->al, g->written, g->written ? n : 0);
	ir_xfree(r->al, g->labels, g->labels ? sizeof(uint32_t) * n : 0);
	if (g->wcta) {
		ir_xfree(r->al, g->wcta, sizeof(int32_t) * n);
		ir_xfree(r->al, g->wop, sizeof(int32_t) * n);
		ir_xfree(r->al, g->rcta, sizeof(int32_t) * n);
		ir_xfree(r->al, g->rop, sizeof(int32_t) * n);
		ir_xfree(r->al, g->wclk, sizeof(uint32_t) * n);
		ir_xfree(r->al, g->rclk, sizeof(uint32_t) * n);
	}
	if (g->own_data)
		ir_xfree(r->al, g->data, n * g->esz);
}

/* Whether the kernel communicates: then its CTAs (of every rank) must run interleaved. */
static bool
communicates(const Prog *p)
{
	for (int i = 0; i < p->nops; i++)
		switch (p->ops[i]->op->code) {
		case IR_OP_CHUNK_WAIT:
		case IR_OP_CHUNK_SIGNAL:
		case IR_OP_PUT:
		case IR_OP_GET:
			return true;
		default:
			break;
		}
	return false;
}

static bool
check_ranks(IrCtx *c, const InterpLaunch *ls, int world)
{
	const InterpLaunch *l = ls;
	if (!l->kernel || l->kernel->code != IR_OP_KERNEL)
		ir_unreachable("interp_run needs an ave.kernel");
	if (world < 1 || world > INTERP_MAX_WORLD) {
		ir_error(c, l->kernel->loc, "a run has 1 to %d ranks, found %d", INTERP_MAX_WORLD,
			 world);
		return false;
	}
	for (int q = 0; q < world; q++) {
		const InterpLaunch *lq = &ls[q];
		int ws = lq->world_size ? lq->world_size : 1;
		if (lq->kernel != l->kernel || memcmp(lq->grid, l->grid, sizeof l->grid) ||
		    lq->rank != q || ws != world || lq->epoch != l->epoch) {
			ir_error(c, l->kernel->loc, "the launch of rank %d differs from rank 0's in its "
				 "kernel, grid, epoch or world size, or says rank %d", q, lq->rank);
			return false;
		}
	}
	/* a module written for a number of ranks runs on that many */
	IrRegion *rg = l->kernel->parent ? l->kernel->parent->parent : NULL;
	IrOp *mod = rg ? rg->parent : NULL;
	IrAttr *wa = mod && mod->code == IR_OP_MODULE ? ir_op_attr(mod, c->kw.world) : NULL;
	if (wa && wa->kind == IR_ATTR_INT && wa->i != world) {
		ir_error(c, mod->loc, "module '@%s' is written for %lld ranks ('world = %lld'), the run "
			 "has %d", mod->item[0].s, (long long)wa->i, (long long)wa->i, world);
		return false;
	}
	for (int d = 0; d < 3; d++)
		if (l->grid[d] < 1) {
			ir_error(c, l->kernel->loc, "grid dimension %d must be at least 1, found %lld",
			         d, (long long)l->grid[d]);
			return false;
		}
	return true;
}

bool
interp_run(IrModule *m, const InterpLaunch *l, const InterpOptions *o, InterpStats *stats)
{
	if (l->world_size > 1) {
		ir_error(m->ctx, l->kernel->loc,
		         "a launch on %d ranks runs with all of them (interp_run_world), not one",
		         l->world_size);
		return false;
	}
	return interp_run_world(m, l, 1, o, stats);
}

bool
interp_run_world(IrModule *m, const InterpLaunch *ls, int world, const InterpOptions *o,
		 InterpStats *stats)
{
	IrCtx *c = m->ctx;
	InterpOptions dflt = {0};
	if (!o)
		o = &dflt;
	if (!check_ranks(c, ls, world))
		return false;
	const InterpLaunch *l = ls;
	int64_t ncta = 1;
	for (int d = 0; d < 3; d++)
		if (__builtin_mul_overflow(ncta, l->grid[d], &ncta) || ncta > ((int64_t)1 << 62)) {
			ir_error(c, l->kernel->loc, "the grid has too many CTAs");
			return false;
		}
	double t0 = ir_now();
	Run r;
	memset(&r, 0, sizeof r);
	r.c = c;
	r.al = c->al;
	r.ls = ls;
	r.l = l;
	r.o = o;
	r.world = world;
	/* A persistent kernel that walks its tiles itself runs on min(N, tiles) CTAs along x. */
	IrAttr *pers = ir_op_attr(l->kernel, c->kw.persistent);
	r.walk = pers && pers->kind == IR_ATTR_INT && ir_kernel_walks(l->kernel);
	if (r.walk && pers->i < ncta)
		ncta = pers->i;
	r.ncta = ncta;
	r.epoch = l->epoch > 0 ? l->epoch : 1;
	memcpy(r.grid, l->grid, sizeof r.grid);
	r.nsched = o->schedules > 0 ? o->schedules : 1;
	int launches = o->launches > 0 ? o->launches : 1;
	r.p = interp_prep(c, l->kernel);
	if (!r.p)
		return false;
	r.comm = world > 1 || communicates(r.p);
	if (r.comm && ncta * world >= INT32_MAX) {
		ir_error(c, l->kernel->loc, "a run that communicates has fewer than 2^31 CTAs in all "
			 "ranks, found %lld", (long long)(ncta * world));
		interp_prog_free(r.p);
		return false;
	}
	int nargs = r.nargs = r.p->kernel->reg[0].block->narg;
	while (interp_symm_alloc(l->kernel, r.nsymm))
		r.nsymm++;
	r.symm_op = ir_xalloc(r.al, sizeof(IrOp *) * (size_t)(r.nsymm + 1));
	for (int k = 0; k < r.nsymm; k++)
		r.symm_op[k] = interp_symm_alloc(l->kernel, k);
	size_t nall = (size_t)world * (size_t)nargs + 1, nsy = (size_t)world * (size_t)r.nsymm + 1;
	r.all = ir_xalloc(r.al, sizeof(Tens) * nall);
	memset(r.all, 0, sizeof(Tens) * nall);
	r.symm = ir_xalloc(r.al, sizeof(Tens) * nsy);
	memset(r.symm, 0, sizeof(Tens) * nsy);
	bool ok = true;
	for (int q = 0; ok && q < world; q++) {
		r.l = &ls[q];
		r.tens = r.all + (size_t)q * (size_t)nargs;
		ok = bind_tensors(&r) && bind_symm(&r, q);
	}
	int nf = nflat(&r);
	unsigned char **pristine = NULL, **ref = NULL;
	if (ok && (r.nsched > 1)) {
		pristine = ir_xalloc(r.al, sizeof *pristine * (size_t)(nf + 1));
		ref = ir_xalloc(r.al, sizeof *ref * (size_t)(nf + 1));
		for (int i = 0; i < nf; i++) {
			size_t b = tens_bytes(flat(&r, i));
			pristine[i] = ref[i] = NULL;
			if (!b)
				continue;
			pristine[i] = ir_xalloc(r.al, b);
			memcpy(pristine[i], flat(&r, i)->data, b);
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
			for (int i = 0; i < nf; i++)
				if (pristine[i])
					memcpy(flat(&r, i)->data, pristine[i], tens_bytes(flat(&r, i)));
		for (int e = 0; ok && e < launches; e++) {
			r.epoch = (l->epoch > 0 ? l->epoch : 1) + e;
			if (o->gather && !interp_gather(&r)) {
				ok = false;
				break;
			}
			new_launch(&r);
			ok = r.comm ? run_world(&r) : run_schedule(&r);
		}
		for (int i = 0; i < nf; i++) {
			Tens *g = flat(&r, i);
			ir_xfree(r.al, g->labels, g->labels ? sizeof(uint32_t) * (size_t)g->nelem : 0);
			g->labels = NULL;
		}
		interp_labels_free(&r);
		if (!ok) {
			r.st.failed = true;
			r.st.failed_seed = r.seed;
			break;
		}
		r.st.schedules++;
		if (r.nsched > 1 && s == 0) {
			for (int i = 0; i < nf; i++)
				if (ref[i])
					memcpy(ref[i], flat(&r, i)->data, tens_bytes(flat(&r, i)));
		} else if (r.nsched > 1 && !o->no_compare && !same_results(&r, ref, o->seed)) {
			ok = false;
			r.st.failed = true;
			r.st.failed_seed = r.seed;
		}
	}
	if (ok)
		unwritten_warnings(&r);
	if (pristine) {
		for (int i = 0; i < nf; i++) {
			ir_xfree(r.al, pristine[i], tens_bytes(flat(&r, i)));
			ir_xfree(r.al, ref[i], tens_bytes(flat(&r, i)));
		}
		ir_xfree(r.al, pristine, sizeof *pristine * (size_t)(nf + 1));
		ir_xfree(r.al, ref, sizeof *ref * (size_t)(nf + 1));
	}
	for (int i = 0; i < nf; i++)
		free_tens(&r, flat(&r, i));
	ir_xfree(r.al, r.all, sizeof(Tens) * nall);
	ir_xfree(r.al, r.symm, sizeof(Tens) * nsy);
	ir_xfree(r.al, r.symm_op, sizeof(IrOp *) * (size_t)(r.nsymm + 1));
	ir_xfree(r.al, r.arr, sizeof *r.arr * (size_t)r.caparr);
	ir_xfree(r.al, r.act, sizeof *r.act * (size_t)r.capact);
	ir_xfree(r.al, r.scratch, r.scratch_bytes);
	interp_prog_free(r.p);
	r.st.seconds = ir_now() - t0;
	if (stats)
		*stats = r.st;
	return ok;
}
