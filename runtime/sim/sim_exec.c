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
#include <unistd.h>

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

/* One CTA being run: its threads' fibers and stacks, its pending asynchronous work. */
typedef struct CtaRun {
	SimCta c;          /* first: a SimCta * is a CtaRun * */
	uint8_t *stacks;   /* one STACK_BYTES stack per thread */
	Fiber *fibers;
	SimAsync *async, **async_tail;
	int next;          /* round robin: the thread to try first */
	int index;         /* in the run, for its shared-memory backing */
	bool done, started;
} CtaRun;

typedef struct SimRun {
	SimProgram *p;
	const SimLaunch *l; /* the launch (a world's first rank: seed, verbosity) */
	CtaRun *ctas;       /* the CTAs resident together: one, or every CTA of a world launch */
	int ncta;
	CtaRun *mapped;     /* whose shared memory is in the program's window */
	int smem_fd;        /* -1, or the backing of every resident CTA's shared memory */
	uint64_t rng;
	uint64_t progress;  /* model calls (other than polling) and exits, in every CTA */
	ucontext_t sched;
	void *sched_fake, *sched_tsan;
	const void *sched_bottom;
	size_t sched_size;
	SimThread *cur;
	bool failed;
	char *err;
	size_t errlen;
	long steps;
} SimRun;

static _Thread_local SimRun *cur_run;

static CtaRun *
cta_run(SimCta *c)
{
	return (CtaRun *)c;
}

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
	CtaRun *cr = cta_run(t->cta);
	size_t i = (size_t)(t - cr->c.th);
	__sanitizer_start_switch_fiber(&r->sched_fake, cr->stacks + i * STACK_BYTES, STACK_BYTES);
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
	r->p->entry(t->cta->params);
	if (r->p->model->thread_end)
		r->p->model->thread_end(t);
	t->state = SIM_DONE;
	t->cta->progress++;
	r->progress++;
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

/* Progress anywhere counts: a poll may wait for another CTA (of another rank). */
static bool
progressed(SimThread *t)
{
	return t->cta->run->progress != t->wait_val;
}

void
sim_wait_progress(SimThread *t, const char *where)
{
	sim_wait(t, progressed, NULL, t->cta->run->progress, where);
}

/* Progress made by threads outside t's warp. */
static uint64_t
others(const SimThread *t)
{
	uint64_t own = t->warp >= 0 && t->warp < SIM_MAX_WARPS ? t->cta->warp_calls[t->warp] : 0;
	return t->cta->run->progress - own;
}

static bool
others_progressed(SimThread *t)
{
	return others(t) != t->wait_val;
}

void
sim_wait_others(SimThread *t, uint64_t since, const char *where)
{
	sim_wait(t, others_progressed, NULL, since, where);
}

void
sim_yield(SimThread *t)
{
	to_scheduler(t, false);
}

/* "CTA (x, y, z)", with its rank in a world launch. */
static int
cta_name(const SimCta *c, char *buf, size_t len)
{
	if (c->rank >= 0)
		return snprintf(buf, len, "CTA (%u, %u, %u) of rank %d", c->ctaid[0], c->ctaid[1],
		                c->ctaid[2], c->rank);
	return snprintf(buf, len, "CTA (%u, %u, %u)", c->ctaid[0], c->ctaid[1], c->ctaid[2]);
}

void
sim_fail(SimThread *t, const char *fmt, ...)
{
	SimRun *r = t->cta->run;
	char cta[64];
	cta_name(t->cta, cta, sizeof cta);
	int n = snprintf(r->err, r->errlen, "thread %d (warp %d, lane %d) of %s: ", t->tid, t->warp,
	                 t->lane, cta);
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
	CtaRun *cr = cta_run(c);
	a->next = NULL;
	*cr->async_tail = a;
	cr->async_tail = &a->next;
}

static void
async_complete(SimCta *c, SimAsync **at)
{
	CtaRun *cr = cta_run(c);
	SimAsync *a = *at;
	*at = a->next;
	if (cr->async_tail == &a->next)
		cr->async_tail = at;
	c->run->progress++; /* memory changed: a poll may see it */
	a->complete(c, a); /* frees a */
}

void
sim_async_drain(SimCta *c, bool (*pred)(const SimAsync *a, const void *u), const void *u)
{
	CtaRun *cr = cta_run(c);
	for (SimAsync **at = &cr->async; *at;) {
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
	t->seen = others(t);
	t->prev = t->call;
	t->call = k;
	if (!k->idle) {
		t->cta->progress++;
		r->progress++;
		if (t->warp >= 0 && t->warp < SIM_MAX_WARPS)
			t->cta->warp_calls[t->warp]++;
	}
	/* Seeded: another thread may run before this one's next step. */
	if (r->l->seed && sim_rand(t->cta) % 8 == 0)
		sim_yield(t);
	k->fn(t, k, args, res);
}

/* ---- the scheduler ---- */

static bool
runnable(SimThread *t)
{
	return t->state == SIM_RUN || (t->state == SIM_WAIT && t->ready(t));
}

/* Puts cr's shared memory in the program's window (a world launch: each resident CTA has its
 * own, swapped in when one of its threads or its asynchronous work runs). */
static bool
map_smem(SimRun *r, CtaRun *cr)
{
	if (r->mapped == cr)
		return true;
	if (r->smem_fd >= 0 &&
	    mmap(r->p->smem, r->p->smem_cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
	         r->smem_fd, (off_t)cr->index * (off_t)r->p->smem_cap) == MAP_FAILED) {
		if (!r->failed)
			snprintf(r->err, r->errlen, "cannot map the shared memory of a resident CTA");
		r->failed = true;
		r->mapped = NULL;
		return false;
	}
	r->mapped = cr;
	return true;
}

/* The live threads' common position, or NULL when they differ. */
static const char *
common_where(const SimCta *c, int *live)
{
	const char *same = NULL;
	*live = 0;
	for (int i = 0; i < c->nthreads; i++)
		if (c->th[i].state != SIM_DONE) {
			if (!same)
				same = c->th[i].where;
			else if (strcmp(same, c->th[i].where))
				return NULL;
			++*live;
		}
	return same;
}

/* Each warp's position, lanes that agree folded together (with many CTAs, one line for a CTA
 * whose live threads all wait at one place). */
static int
hang_cta(SimRun *r, SimCta *c, int n)
{
	char cta[64];
	int live;
	const char *same = r->ncta > 1 ? common_where(c, &live) : NULL;
	const char *ind = r->ncta > 1 ? "  " : "";
	cta_name(c, cta, sizeof cta);
	if (same && n >= 0 && (size_t)n < r->errlen)
		n += snprintf(r->err + n, r->errlen - (size_t)n, "\n  %s, %d thread%s: %s", cta, live,
		              live == 1 ? "" : "s", same);
	else if (r->ncta > 1 && n >= 0 && (size_t)n < r->errlen)
		n += snprintf(r->err + n, r->errlen - (size_t)n, "\n  %s:", cta);
	for (int w = 0; !same && w * c->warp_size < c->nthreads && n >= 0 && (size_t)n < r->errlen;
	     w++) {
		int first = w * c->warp_size, last = first + c->warp_size;
		if (last > c->nthreads)
			last = c->nthreads;
		for (int i = first; i < last;) {
			int j = i + 1;
			while (j < last && !strcmp(c->th[j].where, c->th[i].where))
				j++;
			n += snprintf(r->err + n, r->errlen - (size_t)n, "\n  %swarp %d, lanes %d-%d: %s",
			              ind, w, i - first, j - 1 - first, c->th[i].where);
			i = j;
			if (n < 0 || (size_t)n >= r->errlen)
				break;
		}
	}
	map_smem(r, cta_run(c));
	const char *why = r->p->model->cta_check ? r->p->model->cta_check(c) : NULL;
	if (why && n >= 0 && (size_t)n < r->errlen)
		n += snprintf(r->err + n, r->errlen - (size_t)n, "\n  %s%s", ind, why);
	return n;
}

static void
hang_report(SimRun *r)
{
	int n;
	if (r->ncta == 1) {
		char cta[64];
		cta_name(&r->ctas[0].c, cta, sizeof cta);
		n = snprintf(r->err, r->errlen,
		             "hang in %s: no thread can go on and no asynchronous work is pending",
		             cta);
	} else {
		n = snprintf(r->err, r->errlen,
		             "hang: no thread of the %d resident CTAs can go on and no asynchronous "
		             "work is pending",
		             r->ncta);
	}
	for (int i = 0; i < r->ncta; i++)
		if (!r->ctas[i].done)
			n = hang_cta(r, &r->ctas[i].c, n);
}

/* Makes cr's threads (fibers at the kernel's entry) and the model's CTA state. */
static void
cta_start(SimRun *r, CtaRun *cr)
{
	SimCta *c = &cr->c;
	SimProgram *p = r->p;
	map_smem(r, cr);
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
		t->fiber = &cr->fibers[i];
		snprintf(t->where, sizeof t->where, "not started");
		Fiber *f = t->fiber;
		getcontext(&f->uc);
		f->uc.uc_stack.ss_sp = cr->stacks + (size_t)i * STACK_BYTES;
		f->uc.uc_stack.ss_size = STACK_BYTES;
		f->uc.uc_link = NULL;
		makecontext(&f->uc, fiber_main, 0);
#ifdef SIM_TSAN
		f->tsan = __tsan_create_fiber(0);
#endif
	}
	cr->next = 0;
	cr->done = false;
	cr->started = true;
	if (p->model->cta_begin)
		p->model->cta_begin(c);
}

/* Ends cr: its pending work completes (when nothing failed) and the model checks that none is
 * left; false with the reason in r->err. */
static bool
cta_finish(SimRun *r, CtaRun *cr, bool ok)
{
	SimCta *c = &cr->c;
	SimProgram *p = r->p;
	map_smem(r, cr);
	if (ok && cr->async)
		sim_async_drain(c, NULL, NULL);
	ok = ok && !r->failed;
	if (ok && p->model->cta_check) {
		const char *why = p->model->cta_check(c);
		if (why) {
			char cta[64];
			cta_name(c, cta, sizeof cta);
			snprintf(r->err, r->errlen, "%s finished with %s", cta, why);
			ok = false;
		}
	}
	if (p->model->cta_end)
		p->model->cta_end(c);
	/* Pending work of a failed CTA is dropped. */
	while (cr->async) {
		SimAsync *a = cr->async;
		cr->async = a->next;
		free(a);
	}
	cr->async_tail = &cr->async;
#ifdef SIM_TSAN
	for (int i = 0; i < c->nthreads; i++)
		__tsan_destroy_fiber(cr->fibers[i].tsan);
#endif
	cr->done = true;
	cr->started = false;
	return ok;
}

enum { STEP_RAN, STEP_IDLE, STEP_DONE, STEP_FAIL };

/* One step of cr: seeded, perhaps some of its pending work; then one of its threads runs until
 * it waits, or (none can) its oldest pending work completes. */
static int
cta_step(SimRun *r, CtaRun *cr)
{
	SimCta *c = &cr->c;
	if (!map_smem(r, cr))
		return STEP_FAIL;
	if (cr->async && r->l->seed && sim_rand(c) % 4 == 0) {
		/* Seeded: some pending work completes now, a random one of it. */
		SimAsync **at = &cr->async;
		for (uint64_t k = sim_rand(c) % 4; k && (*at)->next; k--)
			at = &(*at)->next;
		async_complete(c, at);
		if (r->failed)
			return STEP_FAIL;
	}
	int start = r->l->seed ? (int)(sim_rand(c) % (uint64_t)c->nthreads) : cr->next;
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
			return STEP_FAIL;
	}
	if (r->failed)
		return STEP_FAIL;
	if (!t) {
		if (cr->async) {
			async_complete(c, &cr->async);
			return r->failed ? STEP_FAIL : STEP_RAN;
		}
		return live ? STEP_IDLE : STEP_DONE;
	}
	/* Round robin: the thread runs until it waits; the next one after it goes next. */
	cr->next = (t->tid + 1) % c->nthreads;
	to_thread(r, t);
	return r->failed ? STEP_FAIL : STEP_RAN;
}

/* Runs the resident CTAs to their ends: the current one while it can go on (seeded, another one
 * now and then), then the next that can; none can is a hang. */
static bool
run_resident(SimRun *r)
{
	for (int i = 0; i < r->ncta; i++)
		cta_start(r, &r->ctas[i]);
	int cur = 0, left = r->ncta;
	bool ok = true;
	while (left > 0 && ok) {
		if (r->ncta > 1 && r->l->seed && sim_rand(&r->ctas[0].c) % 16 == 0)
			cur = (int)(sim_rand(&r->ctas[0].c) % (uint64_t)r->ncta);
		bool stepped = false;
		for (int k = 0; k < r->ncta && !stepped && ok; k++) {
			CtaRun *cr = &r->ctas[(cur + k) % r->ncta];
			if (cr->done)
				continue;
			int s = cta_step(r, cr);
			if (s == STEP_FAIL) {
				ok = false;
			} else if (s == STEP_DONE) {
				ok = cta_finish(r, cr, true);
				left--;
				stepped = true;
			} else if (s == STEP_RAN) {
				cur = (cur + k) % r->ncta;
				stepped = true;
			}
		}
		if (ok && !stepped) {
			hang_report(r);
			ok = false;
		}
	}
	for (int i = 0; i < r->ncta; i++)
		if (r->ctas[i].started)
			cta_finish(r, &r->ctas[i], false);
	return ok && !r->failed;
}

static bool
launch_ok(SimProgram *p, const SimLaunch *l, char *err, size_t errlen)
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
	return true;
}

/* Runs `nl` launches of p (a world's ranks; one for a plain launch). A plain launch runs one
 * CTA at a time; a world launch keeps every CTA of every rank resident, as a GPU must for a
 * kernel whose CTAs wait for each other's signals. */
static bool
run_launches(SimProgram *p, const SimLaunch *ls, int nl, bool world, char *err, size_t errlen)
{
	for (int i = 0; i < nl; i++)
		if (!launch_ok(p, &ls[i], err, errlen))
			return false;
	for (int i = 1; i < nl; i++)
		if (memcmp(ls[i].grid, ls[0].grid, sizeof ls[0].grid) || ls[i].threads != ls[0].threads) {
			snprintf(err, errlen, "every rank of a world launch runs the same grid");
			return false;
		}
	const SimLaunch *l = &ls[0];
	uint64_t per = 0, all = 0;
	bool big = __builtin_mul_overflow((uint64_t)l->grid[0], (uint64_t)l->grid[1], &per) ||
	           __builtin_mul_overflow(per, (uint64_t)l->grid[2], &per) ||
	           __builtin_mul_overflow(per, (uint64_t)nl, &all);
	if (world && (big || all > SIM_MAX_RESIDENT || !per)) {
		snprintf(err, errlen,
		         "a world launch keeps every CTA of every rank resident: %d ranks of %u x %u x %u "
		         "CTAs is more than the simulator's %d",
		         nl, l->grid[0], l->grid[1], l->grid[2], SIM_MAX_RESIDENT);
		return false;
	}
	int ncta = world ? (int)all : 1;
	pthread_mutex_lock(&p->mu);
	SimRun r;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.l = l;
	r.err = err;
	r.errlen = errlen;
	r.rng = l->seed * 0x9E3779B97F4A7C15ULL + 1;
	r.smem_fd = -1;
	r.ncta = ncta;
	r.ctas = calloc((size_t)ncta, sizeof *r.ctas);
	bool ok = true;
	if (ncta > 1) {
		r.smem_fd = memfd_create("ave-sim-smem", 0);
		ok = r.smem_fd >= 0 && !ftruncate(r.smem_fd, (off_t)ncta * (off_t)p->smem_cap);
		if (!ok)
			snprintf(err, errlen, "cannot make the shared memory of %d resident CTAs", ncta);
	}
	for (int i = 0; i < ncta && ok; i++) {
		CtaRun *cr = &r.ctas[i];
		SimCta *c = &cr->c;
		const SimLaunch *li = &ls[world ? i / (int)per : 0];
		c->run = &r;
		c->nthreads = li->threads;
		c->warp_size = p->target->warp;
		c->target = p->target;
		c->smem = p->smem;
		c->smem_size = p->smem_cap;
		c->params = li->params;
		c->rank = world ? i / (int)per : -1;
		for (int d = 0; d < 3; d++)
			c->nctaid[d] = li->grid[d];
		if (world) {
			uint64_t id = (uint64_t)i % per;
			c->ctaid[0] = (uint32_t)(id % l->grid[0]);
			c->ctaid[1] = (uint32_t)(id / l->grid[0] % l->grid[1]);
			c->ctaid[2] = (uint32_t)(id / l->grid[0] / l->grid[1]);
		}
		cr->index = i;
		cr->async_tail = &cr->async;
		c->th = calloc((size_t)li->threads, sizeof *c->th);
		cr->fibers = calloc((size_t)li->threads, sizeof *cr->fibers);
		cr->stacks = mmap(NULL, (size_t)li->threads * STACK_BYTES, PROT_READ | PROT_WRITE,
		                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (cr->stacks == MAP_FAILED) {
			cr->stacks = NULL;
			snprintf(err, errlen, "cannot map %d fiber stacks", li->threads);
			ok = false;
		}
	}
	SimRun *saved = cur_run;
	cur_run = &r;
#ifdef SIM_TSAN
	r.sched_tsan = __tsan_get_current_fiber();
#endif
	if (ok && world) {
		ok = run_resident(&r);
	} else if (ok) {
		SimCta *c = &r.ctas[0].c;
		for (uint32_t z = 0; ok && z < l->grid[2]; z++)
			for (uint32_t y = 0; ok && y < l->grid[1]; y++)
				for (uint32_t x = 0; ok && x < l->grid[0]; x++) {
					c->ctaid[0] = x;
					c->ctaid[1] = y;
					c->ctaid[2] = z;
					ok = run_resident(&r);
				}
	}
	cur_run = saved;
	if (r.smem_fd >= 0) {
		r.mapped = NULL;
		/* The window goes back to private memory of its own. */
		mmap(p->smem, p->smem_cap, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		close(r.smem_fd);
	}
	for (int i = 0; i < ncta; i++) {
		CtaRun *cr = &r.ctas[i];
		if (cr->stacks)
			munmap(cr->stacks, (size_t)cr->c.nthreads * STACK_BYTES);
		free(cr->fibers);
		free(cr->c.th);
	}
	free(r.ctas);
	pthread_mutex_unlock(&p->mu);
	if (ok && l->verbose)
		fprintf(stderr, "sim: %ld model calls\n", r.steps);
	return ok;
}

bool
sim_run(SimProgram *p, const SimLaunch *l, char *err, size_t errlen)
{
	return run_launches(p, l, 1, false, err, errlen);
}

bool
sim_run_world(SimProgram *p, const SimLaunch *ranks, int world, char *err, size_t errlen)
{
	if (world < 1) {
		snprintf(err, errlen, "a world launch needs at least one rank");
		return false;
	}
	return run_launches(p, ranks, world, true, err, errlen);
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
