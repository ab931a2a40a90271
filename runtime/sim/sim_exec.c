/* sim_exec.c — running a simulated kernel: each GPU thread a fiber (ucontext) on the host, one
 * CTA at a time, under a scheduler that switches threads at the points where GPU threads can
 * wait for each other (barriers, collectives, mbarrier waits) and, when seeded, at any model
 * call; asynchronous work (copies, TMA) completes at points the scheduler chooses. A state where
 * no thread can go on and no work is pending is a hang, reported with each warp's position. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "sim.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define SIM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define SIM_TSAN 1
#endif
#ifdef SIM_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif
#ifdef SIM_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

enum { STACK_BYTES = 512 << 10 };

typedef struct Fiber {
	ucontext_t uc;
	void *fake; /* ASan's fake stack across a switch */
	void *tsan;
} Fiber;

typedef struct SimRun {
	SimProgram *p;
	const SimLaunch *l;
	SimCta cta;
	uint64_t rng;
	ucontext_t sched;
	void *sched_fake, *sched_tsan;
	const void *sched_bottom;
	size_t sched_size;
	uint8_t *stacks; /* one STACK_BYTES stack per thread */
	Fiber *fibers;
	SimThread *cur;
	SimAsync *async, **async_tail;
	bool failed;
	char *err;
	size_t errlen;
	long steps;
} SimRun;

static _Thread_local SimRun *cur_run;

SimThread *
sim_self(void)
{
	return cur_run ? cur_run->cur : NULL;
}

uint64_t
sim_rand(SimCta *c)
{
	SimRun *r = c->run;
	if (!r->l->seed)
		return 0;
	/* xorshift64* */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return r->rng * 0x2545F4914F6CDD1DULL;
}

/* ---- switching ---- */

static void
to_scheduler(SimThread *t, bool dying)
{
	SimRun *r = t->cta->run;
	Fiber *f = t->fiber;
#ifdef SIM_ASAN
	__sanitizer_start_switch_fiber(dying ? NULL : &f->fake, r->sched_bottom, r->sched_size);
#endif
#ifdef SIM_TSAN
	__tsan_switch_to_fiber(r->sched_tsan, 0);
#endif
	(void)dying;
	swapcontext(&f->uc, &r->sched);
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(f->fake, NULL, NULL);
#endif
}

static void
to_thread(SimRun *r, SimThread *t)
{
	Fiber *f = t->fiber;
	r->cur = t;
#ifdef SIM_ASAN
	size_t i = (size_t)(t - r->cta.th);
	__sanitizer_start_switch_fiber(&r->sched_fake, r->stacks + i * STACK_BYTES, STACK_BYTES);
#endif
#ifdef SIM_TSAN
	__tsan_switch_to_fiber(f->tsan, 0);
#endif
	swapcontext(&r->sched, &f->uc);
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(r->sched_fake, &r->sched_bottom, &r->sched_size);
#endif
	r->cur = NULL;
}

static void
fiber_main(void)
{
	SimRun *r = cur_run;
	SimThread *t = r->cur;
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(NULL, &r->sched_bottom, &r->sched_size);
#endif
	if (r->p->model->thread_begin)
		r->p->model->thread_begin(t);
	r->p->entry(r->l->params);
	if (r->p->model->thread_end)
		r->p->model->thread_end(t);
	t->state = SIM_DONE;
	t->cta->progress++;
	snprintf(t->where, sizeof t->where, "exited");
	to_scheduler(t, true);
	abort(); /* a finished fiber is never resumed */
}

void
sim_wait(SimThread *t, bool (*ready)(SimThread *t), const void *on, uint64_t val,
         const char *where)
{
	t->ready = ready;
	t->wait_on = on;
	t->wait_val = val;
	if (ready(t))
		return;
	t->state = SIM_WAIT;
	snprintf(t->where, sizeof t->where, "%s", where);
	to_scheduler(t, false);
	t->state = SIM_RUN;
}

static bool
progressed(SimThread *t)
{
	return t->cta->progress != t->wait_val;
}

void
sim_wait_progress(SimThread *t, const char *where)
{
	sim_wait(t, progressed, NULL, t->cta->progress, where);
}

void
sim_yield(SimThread *t)
{
	to_scheduler(t, false);
}

void
sim_fail(SimThread *t, const char *fmt, ...)
{
	SimRun *r = t->cta->run;
	SimCta *c = t->cta;
	int n = snprintf(r->err, r->errlen, "thread %d (warp %d, lane %d) of CTA (%u, %u, %u): ",
	                 t->tid, t->warp, t->lane, c->ctaid[0], c->ctaid[1], c->ctaid[2]);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = true;
	to_scheduler(t, true);
	abort();
}

/* ---- asynchronous work ---- */

void
sim_async_post(SimCta *c, SimAsync *a)
{
	SimRun *r = c->run;
	a->next = NULL;
	*r->async_tail = a;
	r->async_tail = &a->next;
}

static void
async_complete(SimCta *c, SimAsync **at)
{
	SimRun *r = c->run;
	SimAsync *a = *at;
	*at = a->next;
	if (r->async_tail == &a->next)
		r->async_tail = at;
	a->complete(c, a); /* frees a */
}

void
sim_async_drain(SimCta *c, bool (*pred)(const SimAsync *a, const void *u), const void *u)
{
	SimRun *r = c->run;
	for (SimAsync **at = &r->async; *at;) {
		if (!pred || pred(*at, u))
			async_complete(c, at);
		else
			at = &(*at)->next;
	}
}

/* ---- the model calls ---- */

void
sim_dispatch(int id, const uint8_t *args, uint8_t *res)
{
	SimRun *r = cur_run;
	SimThread *t = r->cur;
	const SimCall *k = r->p->calls[id];
	r->steps++;
	if (!k->idle)
		r->cta.progress++;
	/* Seeded: another thread may run before this one's next step. */
	if (r->l->seed && sim_rand(&r->cta) % 8 == 0)
		sim_yield(t);
	k->fn(t, k, args, res);
}

/* ---- the scheduler ---- */

static bool
runnable(SimThread *t)
{
	return t->state == SIM_RUN || (t->state == SIM_WAIT && t->ready(t));
}

/* Each warp's position, lanes that agree folded together. */
static void
hang_report(SimRun *r)
{
	SimCta *c = &r->cta;
	int n = snprintf(r->err, r->errlen,
	                 "hang in CTA (%u, %u, %u): no thread can go on and no asynchronous work is "
	                 "pending",
	                 c->ctaid[0], c->ctaid[1], c->ctaid[2]);
	for (int w = 0; w * c->warp_size < c->nthreads && n >= 0 && (size_t)n < r->errlen; w++) {
		int first = w * c->warp_size, last = first + c->warp_size;
		if (last > c->nthreads)
			last = c->nthreads;
		for (int i = first; i < last;) {
			int j = i + 1;
			while (j < last && !strcmp(c->th[j].where, c->th[i].where))
				j++;
			n += snprintf(r->err + n, r->errlen - (size_t)n, "\n  warp %d, lanes %d-%d: %s",
			              w, i - first, j - 1 - first, c->th[i].where);
			i = j;
			if (n < 0 || (size_t)n >= r->errlen)
				break;
		}
	}
	const char *why = r->p->model->cta_check ? r->p->model->cta_check(c) : NULL;
	if (why && n >= 0 && (size_t)n < r->errlen)
		snprintf(r->err + n, r->errlen - (size_t)n, "\n  %s", why);
}

static bool
run_cta(SimRun *r)
{
	SimCta *c = &r->cta;
	SimProgram *p = r->p;
	/* Shared memory starts as all ones: a read of a byte never written is a NaN or -1, not a
	 * lucky zero. */
	memset(c->smem, 0xff, c->smem_size);
	for (int i = 0; i < c->nthreads; i++) {
		SimThread *t = &c->th[i];
		memset(t, 0, sizeof *t);
		t->cta = c;
		t->tid = i;
		t->warp = i / c->warp_size;
		t->lane = i % c->warp_size;
		t->state = SIM_RUN;
		t->fiber = &r->fibers[i];
		snprintf(t->where, sizeof t->where, "not started");
		Fiber *f = t->fiber;
		getcontext(&f->uc);
		f->uc.uc_stack.ss_sp = r->stacks + (size_t)i * STACK_BYTES;
		f->uc.uc_stack.ss_size = STACK_BYTES;
		f->uc.uc_link = NULL;
		makecontext(&f->uc, fiber_main, 0);
#ifdef SIM_TSAN
		f->tsan = __tsan_create_fiber(0);
#endif
	}
	if (p->model->cta_begin)
		p->model->cta_begin(c);
	int next = 0;
	bool ok = true;
	for (;;) {
		if (r->async && r->l->seed && sim_rand(c) % 4 == 0) {
			/* Seeded: some pending work completes now, a random one of it. */
			SimAsync **at = &r->async;
			for (uint64_t k = sim_rand(c) % 4; k && (*at)->next; k--)
				at = &(*at)->next;
			async_complete(c, at);
			if (r->failed) {
				ok = false;
				break;
			}
		}
		int start = r->l->seed ? (int)(sim_rand(c) % (uint64_t)c->nthreads) : next;
		SimThread *t = NULL;
		bool live = false;
		for (int k = 0; k < c->nthreads; k++) {
			SimThread *u = &c->th[(start + k) % c->nthreads];
			if (u->state != SIM_DONE)
				live = true;
			if (u->state != SIM_DONE && runnable(u)) {
				t = u;
				break;
			}
			if (r->failed)
				break;
		}
		if (r->failed) {
			ok = false;
			break;
		}
		if (!t) {
			if (r->async) {
				async_complete(c, &r->async);
				if (r->failed) {
					ok = false;
					break;
				}
				continue;
			}
			if (!live)
				break;
			hang_report(r);
			ok = false;
			break;
		}
		/* Round robin: the thread runs until it waits; the next one after it goes next. */
		next = (t->tid + 1) % c->nthreads;
		to_thread(r, t);
		if (r->failed) {
			ok = false;
			break;
		}
	}
	if (ok && r->async)
		sim_async_drain(c, NULL, NULL);
	if (ok && !r->failed && p->model->cta_check) {
		const char *why = p->model->cta_check(c);
		if (why) {
			snprintf(r->err, r->errlen, "CTA (%u, %u, %u) finished with %s", c->ctaid[0],
			         c->ctaid[1], c->ctaid[2], why);
			ok = false;
		}
	}
	if (p->model->cta_end)
		p->model->cta_end(c);
	/* Pending work of a failed CTA is dropped. */
	while (r->async) {
		SimAsync *a = r->async;
		r->async = a->next;
		free(a);
	}
	r->async_tail = &r->async;
#ifdef SIM_TSAN
	for (int i = 0; i < c->nthreads; i++)
		__tsan_destroy_fiber(r->fibers[i].tsan);
#endif
	return ok && !r->failed;
}

bool
sim_run(SimProgram *p, const SimLaunch *l, char *err, size_t errlen)
{
	if (l->threads < 1 || l->threads > 1024) {
		snprintf(err, errlen, "the simulator runs 1 to 1024 threads per CTA, not %d", l->threads);
		return false;
	}
	if (l->shared_bytes > p->smem_cap) {
		snprintf(err, errlen, "the kernel needs %zu bytes of shared memory; the simulator has %zu",
		         l->shared_bytes, p->smem_cap);
		return false;
	}
	SimRun r;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.l = l;
	r.err = err;
	r.errlen = errlen;
	r.rng = l->seed * 0x9E3779B97F4A7C15ULL + 1;
	r.async_tail = &r.async;
	SimCta *c = &r.cta;
	c->run = &r;
	c->nthreads = l->threads;
	c->warp_size = p->target->warp;
	c->target = p->target;
	c->smem = p->smem;
	c->smem_size = p->smem_cap;
	for (int d = 0; d < 3; d++)
		c->nctaid[d] = l->grid[d];
	c->th = calloc((size_t)l->threads, sizeof *c->th);
	r.fibers = calloc((size_t)l->threads, sizeof *r.fibers);
	r.stacks = mmap(NULL, (size_t)l->threads * STACK_BYTES, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	bool ok = r.stacks != MAP_FAILED;
	if (!ok)
		snprintf(err, errlen, "cannot map %d fiber stacks", l->threads);
	SimRun *saved = cur_run;
	cur_run = &r;
#ifdef SIM_TSAN
	r.sched_tsan = __tsan_get_current_fiber();
#endif
	for (uint32_t z = 0; ok && z < l->grid[2]; z++)
		for (uint32_t y = 0; ok && y < l->grid[1]; y++)
			for (uint32_t x = 0; ok && x < l->grid[0]; x++) {
				c->ctaid[0] = x;
				c->ctaid[1] = y;
				c->ctaid[2] = z;
				ok = run_cta(&r);
			}
	cur_run = saved;
	if (r.stacks != MAP_FAILED)
		munmap(r.stacks, (size_t)l->threads * STACK_BYTES);
	free(r.fibers);
	free(c->th);
	if (ok && l->verbose)
		fprintf(stderr, "sim: %ld model calls\n", r.steps);
	return ok;
}

/* ---- rendezvous ---- */

static int
group_needed(SimCta *c, const SimGroup *g)
{
	if (g->count)
		return g->count;
	int live = 0;
	for (int i = g->first; i < g->first + g->n && i < c->nthreads; i++)
		live += c->th[i].state != SIM_DONE;
	return live;
}

static bool
group_ready(SimThread *t)
{
	SimGroup *g = (SimGroup *)t->wait_on;
	if (g->gen != t->wait_val)
		return true;
	if (g->arrived < group_needed(t->cta, g))
		return false;
	g->arrived = 0;
	g->what = NULL;
	g->gen++;
	if (g->done)
		g->done(t->cta, g->u);
	return true;
}

void
sim_group_arrive(SimThread *t, SimGroup *g, int first, int n, int count, const void *what,
                 void (*done)(SimCta *c, void *u), void *u, const char *where)
{
	if (g->arrived && g->what != what)
		sim_fail(t, "%s while other threads of its group wait at %s (divergence)", where,
		         g->where);
	if (!g->arrived) {
		g->what = what;
		g->first = first;
		g->n = n;
		g->count = count;
		g->done = done;
		g->u = u;
		snprintf(g->where, sizeof g->where, "%s", where);
	}
	g->arrived++;
	if (count && g->arrived > count)
		sim_fail(t, "%s: more than the %d threads the barrier counts arrived", where, count);
	sim_wait(t, group_ready, g, g->gen, where);
}

static void
lanes_done(SimCta *c, void *u)
{
	SimLanes *w = u;
	w->err[0] = 0;
	w->fn(c, w);
	for (int l = 0; l < 64; l++)
		w->lane_in[l] = false;
}

void
sim_lanes_run(SimThread *t, SimLanes *w, const void *what, void (*fn)(SimCta *c, SimLanes *w),
              const char *where)
{
	w->lane_in[t->lane] = true;
	w->fn = fn;
	int ws = t->cta->warp_size;
	sim_group_arrive(t, &w->g, t->warp * ws, ws, 0, what, lanes_done, w, where);
	if (w->err[0])
		sim_fail(t, "%s", w->err);
}

/* ---- shared by the models ---- */

bool
sim_bind_intrinsic(SimCall *k, const SimIntrinsic *table, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(k->name, table[i].prefix, strlen(table[i].prefix))) {
			k->fn = table[i].fn;
			return true;
		}
	snprintf(err, errlen, "the simulator has no model of the intrinsic llvm.%s", k->name);
	return false;
}

void
sim_trap(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)k;
	(void)args;
	(void)res;
	sim_fail(t, "the kernel trapped");
}
