/* sim_amdgpu.c — the AMDGPU model: the amdgcn intrinsics ave's CDNA backend calls, on the fibers
 * of sim_exec.c. Wavefronts of 64 lanes; MFMA, ds_bpermute and readfirstlane are collectives of
 * the wave, computed once by isa.h's models; global memory through buffer resources, whose
 * range checking is modelled (a load outside num_records reads 0, a store there is dropped);
 * the LDS barrier emulation runs as the backend wrote it, its s_sleep polling waiting for other
 * threads' progress. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { MAX_WAVES = 16 };

typedef struct Rsrc {
	uint64_t base;
	uint32_t num_records;
	uint32_t flags;
	uint32_t stride;
} Rsrc;

typedef struct AmdCta {
	SimLanes waves[MAX_WAVES];
	/* Per wave: what the lane that v_readfirstlane read from last had seen of other waves'
	 * progress (SimThread.seen when it called it, right after its poll's load). A polling loop
	 * decides on that value, so its s_sleep waits for other waves' progress since then, for
	 * every lane alike: the lanes run one at a time here, but a wave's s_sleep is one
	 * instruction, and a lane that waited for progress since its own turn came would wait for
	 * what its wave already saw, the other lanes for it at the next readfirstlane (a hang no
	 * GPU has). The wave's own calls are no progress for it. */
	uint64_t polled[MAX_WAVES];
	SimGroup barrier;
	Rsrc *rs;
	int nrs, caprs;
	uint32_t implicit[16]; /* hidden kernel arguments: block counts, group sizes */
} AmdCta;

static AmdCta *
amd(SimCta *c)
{
	return c->model;
}

static void
f_id(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	const char *n = k->name + strlen("amdgcn.");
	int d = n[strlen(n) - 1] - 'x';
	uint64_t v = !strncmp(n, "workitem.id.", 12) ? (d ? 0 : (uint64_t)t->tid) : t->cta->ctaid[d];
	sim_res_u64(k, res, 0, v);
}

static void
f_implicitarg(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	sim_res_u64(k, res, 0, (uint64_t)(uintptr_t)amd(t->cta)->implicit);
}

static void
f_barrier(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	(void)res;
	sim_group_arrive(t, &amd(t->cta)->barrier, 0, t->cta->nthreads, 0, k, NULL, NULL,
	                 "s_barrier");
}

static void f_readfirstlane(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res);
static SimLanes *wave_of(SimThread *t);

static void
f_sleep(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)k;
	(void)args;
	(void)res;
	(void)wave_of(t); /* in range */
	/* A poll made wave-uniform by readfirstlane just before: what the lane it read saw; else
	 * (a lane's own poll) what this lane saw. */
	bool uniform = t->prev && t->prev->fn == f_readfirstlane;
	sim_wait_others(t, uniform ? amd(t->cta)->polled[t->warp] : t->seen,
	                "s_sleep (polling memory)");
}

static SimLanes *
wave_of(SimThread *t)
{
	if (t->warp >= MAX_WAVES)
		sim_fail(t, "more than %d waves", MAX_WAVES);
	return &amd(t->cta)->waves[t->warp];
}

static void
do_readfirstlane(SimCta *c, SimLanes *w)
{
	int first = 0;
	while (first < c->warp_size && !w->lane_in[first])
		first++;
	for (int l = 0; l < c->warp_size; l++)
		w->out[l][0] = w->in[first][0];
	amd(c)->polled[w - amd(c)->waves] = w->in[first][1];
}

static void
f_readfirstlane(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	SimLanes *w = wave_of(t);
	w->in[t->lane][0] = sim_arg_u64(k, args, 0);
	w->in[t->lane][1] = t->seen;
	sim_lanes_run(t, w, k, do_readfirstlane, "v_readfirstlane");
	sim_res_u64(k, res, 0, w->out[t->lane][0]);
}

/* wave.barrier: the lanes of the wave meet (they run one at a time here, in lockstep on a GPU). */
static void
do_nothing(SimCta *c, SimLanes *w)
{
	(void)c;
	(void)w;
}

static void
f_wave_barrier(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	(void)res;
	sim_lanes_run(t, wave_of(t), k, do_nothing, "wave barrier");
}

/* ds_bpermute: lane l reads `data` of lane (addr / 4) mod 64; an inactive source gives 0. */
static void
do_bpermute(SimCta *c, SimLanes *w)
{
	for (int l = 0; l < c->warp_size; l++) {
		int src = (int)((w->in[l][0] >> 2) & 63);
		w->out[l][0] = w->lane_in[src] ? w->in[src][1] : 0;
	}
}

static void
f_bpermute(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	SimLanes *w = wave_of(t);
	w->in[t->lane][0] = sim_arg_u64(k, args, 0);
	w->in[t->lane][1] = sim_arg_u64(k, args, 1);
	sim_lanes_run(t, w, k, do_bpermute, "ds_bpermute");
	sim_res_u64(k, res, 0, w->out[t->lane][0]);
}

static void
do_mfma(SimCta *c, SimLanes *w)
{
	SimMfma m = (SimMfma)w->in[0][11];
	int gfx = (int)(w->in[0][11] >> 32);
	uint32_t a[64][2], b[64][2];
	float cc[64][16], d[64][16];
	for (int l = 0; l < 64; l++) {
		if (!w->lane_in[l]) {
			snprintf(w->err, sizeof w->err, "MFMA with lane %d inactive (exited)", l);
			return;
		}
		a[l][0] = (uint32_t)w->in[l][0];
		a[l][1] = (uint32_t)(w->in[l][0] >> 32);
		b[l][0] = (uint32_t)w->in[l][1];
		b[l][1] = (uint32_t)(w->in[l][1] >> 32);
		for (int i = 0; i < 8; i++) {
			uint32_t lo = (uint32_t)w->in[l][2 + i], hi = (uint32_t)(w->in[l][2 + i] >> 32);
			memcpy(&cc[l][2 * i], &lo, 4);
			memcpy(&cc[l][2 * i + 1], &hi, 4);
		}
	}
	int cbsz = (int)(w->in[0][10] & 0xff), abid = (int)(w->in[0][10] >> 8 & 0xff),
	    blgp = (int)(w->in[0][10] >> 16 & 0xff);
	char err[200];
	if (!sim_mfma(m, gfx, (const uint32_t(*)[2])a, (const uint32_t(*)[2])b, (const float(*)[16])cc, d, cbsz, abid, blgp, err, sizeof err)) {
		snprintf(w->err, sizeof w->err, "%s", err);
		return;
	}
	(void)c;
	for (int l = 0; l < 64; l++)
		for (int i = 0; i < 8; i++) {
			uint32_t lo, hi;
			memcpy(&lo, &d[l][2 * i], 4);
			memcpy(&hi, &d[l][2 * i + 1], 4);
			w->out[l][i] = lo | (uint64_t)hi << 32;
		}
}

static void
f_mfma(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	int m = sim_mfma_find(k->name + strlen("amdgcn.mfma."));
	if (m < 0 || k->nargs != 6 || k->nres != 1)
		sim_fail(t, "the simulator has no model of llvm.%s", k->name);
	int nacc = sim_mfma_acc_regs((SimMfma)m);
	if (k->arg[2].lanes != nacc || k->res[0].lanes != nacc)
		sim_fail(t, "llvm.%s with %d accumulators (expected %d)", k->name, k->arg[2].lanes, nacc);
	SimLanes *w = wave_of(t);
	uint64_t *in = w->in[t->lane];
	in[0] = sim_arg_u64(k, args, 0);
	in[1] = sim_arg_u64(k, args, 1);
	memset(in + 2, 0, 8 * sizeof *in);
	memcpy(in + 2, sim_arg_ptr(k, args, 2), (size_t)nacc * 4);
	in[10] = (sim_arg_u64(k, args, 3) & 0xff) | (sim_arg_u64(k, args, 4) & 0xff) << 8 |
	         (sim_arg_u64(k, args, 5) & 0xff) << 16;
	int gfx = t->cta->target == &target_table[TARGET_GFX942] ? 94 : 90; /* gfx942 or gfx90a */
	in[11] = (uint64_t)m | (uint64_t)gfx << 32;
	sim_lanes_run(t, w, k, do_mfma, "v_mfma");
	memcpy(sim_res_ptr(k, res, 0), w->out[t->lane], (size_t)nacc * 4);
}

/* ---- buffer resources ---- */

static void
f_make_rsrc(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	AmdCta *s = amd(t->cta);
	Rsrc r = {sim_arg_u64(k, args, 0), (uint32_t)sim_arg_u64(k, args, 2),
	          (uint32_t)sim_arg_u64(k, args, 3), (uint32_t)(sim_arg_u64(k, args, 1) & 0xffff)};
	if (r.stride)
		sim_fail(t, "a buffer resource with stride %u (the model takes raw buffers)", r.stride);
	int i = 0;
	while (i < s->nrs && memcmp(&s->rs[i], &r, sizeof r))
		i++;
	if (i == s->nrs) {
		if (s->nrs == s->caprs) {
			/* Records are never moved once handed out: grow by chunks kept apart. */
			sim_fail(t, "more than %d distinct buffer resources in one CTA", s->caprs);
		}
		s->rs[s->nrs++] = r;
	}
	sim_res_u64(k, res, 0, (uint64_t)(uintptr_t)&s->rs[i]);
}

static const Rsrc *
rsrc_of(SimThread *t, uint64_t p)
{
	AmdCta *s = amd(t->cta);
	const Rsrc *r = (const Rsrc *)(uintptr_t)p;
	if (r < s->rs || r >= s->rs + s->nrs)
		sim_fail(t, "a buffer access through something that is not a buffer resource");
	return r;
}

/* The bytes of a raw buffer access: component by component (dwords, or the whole of a smaller
 * access), each in range when its last byte is below num_records. */
static void
buffer_access(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res, bool store)
{
	int base = store ? 1 : 0;
	const Rsrc *r = rsrc_of(t, sim_arg_u64(k, args, base));
	uint32_t off = (uint32_t)sim_arg_u64(k, args, base + 1) + (uint32_t)sim_arg_u64(k, args, base + 2);
	const SimTy *ty = store ? &k->arg[0] : &k->res[0];
	uint32_t bytes = (uint32_t)(ty->bits * ty->lanes / 8);
	uint32_t comp = bytes < 4 ? bytes : 4;
	uint8_t *data = store ? (uint8_t *)sim_arg_ptr(k, args, 0) : sim_res_ptr(k, res, 0);
	for (uint32_t c = 0; c < bytes; c += comp) {
		bool in = (uint64_t)off + c + comp <= r->num_records;
		uint8_t *g = (uint8_t *)(uintptr_t)(r->base + off + c);
		if (store && in)
			memcpy(g, data + c, comp);
		else if (!store)
			in ? memcpy(data + c, g, comp) : memset(data + c, 0, comp);
	}
}

static void
f_buffer_load(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	buffer_access(t, k, args, res, false);
}

static void
f_buffer_store(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	buffer_access(t, k, args, res, true);
}

static void
f_rsq(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)t;
	uint64_t b = sim_arg_u64(k, args, 0);
	if (k->arg[0].bits == 64) {
		double x;
		memcpy(&x, &b, 8);
		x = 1.0 / sqrt(x);
		memcpy(&b, &x, 8);
	} else {
		uint32_t u = (uint32_t)b;
		float x;
		memcpy(&x, &u, 4);
		x = 1.0f / sqrtf(x);
		memcpy(&u, &x, 4);
		b = u;
	}
	sim_res_u64(k, res, 0, b);
}

static const SimIntrinsic intrinsics[] = {
    {"amdgcn.workitem.id.", f_id},
    {"amdgcn.workgroup.id.", f_id},
    {"amdgcn.implicitarg.ptr", f_implicitarg},
    {"amdgcn.s.barrier", f_barrier},
    {"amdgcn.s.sleep", f_sleep},
    {"amdgcn.wave.barrier", f_wave_barrier},
    {"amdgcn.readfirstlane", f_readfirstlane},
    {"amdgcn.ds.bpermute", f_bpermute},
    {"amdgcn.mfma.", f_mfma},
    {"amdgcn.make.buffer.rsrc", f_make_rsrc},
    {"amdgcn.raw.ptr.buffer.load.", f_buffer_load},
    {"amdgcn.raw.ptr.buffer.store.", f_buffer_store},
    {"amdgcn.rsq.", f_rsq},
    {"trap", sim_trap},
    {"debugtrap", sim_trap},
};

static bool
amd_bind(SimCall *k, char *err, size_t errlen)
{
	if (!k->name) {
		snprintf(err, errlen, "the simulator has no model of the AMDGPU inline assembly \"%s\"",
		         k->text);
		return false;
	}
	if (!sim_bind_intrinsic(k, intrinsics, sizeof intrinsics / sizeof intrinsics[0], err,
	                        errlen))
		return false;
	/* A nap changes nothing. Every other call counts as progress, the lanes' exchanges too:
	 * the LDS atomics that publish a barrier are no model calls, and a wave's next call after
	 * one is what tells the other waves that memory changed. */
	k->idle = k->fn == f_sleep;
	return true;
}

static void
amd_cta_begin(SimCta *c)
{
	AmdCta *s = calloc(1, sizeof *s);
	s->caprs = 4096;
	s->rs = calloc((size_t)s->caprs, sizeof *s->rs);
	for (int d = 0; d < 3; d++)
		s->implicit[d] = c->nctaid[d];
	/* hidden_group_size_x/y/z: u16 at bytes 12, 14, 16 */
	uint16_t g[3] = {(uint16_t)c->nthreads, 1, 1};
	memcpy((uint8_t *)s->implicit + 12, g, sizeof g);
	c->model = s;
}

static void
amd_cta_end(SimCta *c)
{
	AmdCta *s = c->model;
	if (s)
		free(s->rs);
	free(s);
	c->model = NULL;
}

const SimModel sim_amdgpu_model = {
    .bind = amd_bind,
    .cta_begin = amd_cta_begin,
    .cta_end = amd_cta_end,
};
