/* sim_nvptx.c — the NVIDIA model: NVVM intrinsics and the PTX that ave writes as inline assembly,
 * run on the fibers of sim_exec.c. Warp-wide instructions (mma.sync, ldmatrix, shfl) and
 * warpgroup-wide ones (wgmma) are rendezvous of their lanes, computed once by isa.h's models;
 * mbarriers keep their phase, pending arrivals and transaction count beside shared memory; TMA
 * and cp.async copies are asynchronous work the scheduler completes; a wgmma's accumulators are
 * not written until a wgmma.wait_group retires its group: until then the registers hold NaN
 * tokens, so that code reading them early computes NaNs, and one passing them to another wgmma
 * chains the products. */

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* ---- per-CTA state ---- */

typedef struct Mbar {
	uint32_t addr;   /* shared address (the host address's low 32 bits) */
	int count;       /* arrivals per phase */
	int pending;     /* arrivals left in the current phase */
	int64_t tx;      /* transaction bytes outstanding */
	uint64_t phase;  /* phases completed */
} Mbar;

enum { WG_RING = 64, MAX_WARPS = 32 };

typedef struct WgOp {
	uint32_t seq;
	int n;
	SimElem ab;
	uint64_t da, db;
	bool areg, scale_d, done;
	int tnsp_a, tnsp_b, sa, sb;
	int group;            /* commit group, -1 before commit_group */
	uint32_t (*a)[4];     /* [128][4] register A */
	uint32_t (*in)[128];  /* [128][n/2] accumulator inputs (raw bits, maybe tokens) */
	float (*out)[128];    /* [128][n/2] results once done */
} WgOp;

typedef struct Warpgroup {
	SimGroup g;
	uint32_t seq;         /* ops issued */
	int groups;           /* commit groups so far */
	WgOp *ring[WG_RING];  /* recent ops by seq % WG_RING */
	/* the rendezvous's inputs */
	uint32_t lane_regs[128][4];
	uint32_t lane_acc[128][128];
	uint64_t da, db;
	int scale_d;
	int pending_wait;
	int n;
	char err[256];
	const SimCall *k;
} Warpgroup;


typedef struct NvCta {
	Mbar *mb;
	int nmb, capmb;
	SimLanes warps[MAX_WARPS];
	Warpgroup wgs[MAX_WARPS / 4];
	SimGroup bars[16];
	SimGroup cta_bar;
	uint64_t async_seq;
} NvCta;

static NvCta *
nv(SimCta *c)
{
	return c->model;
}

/* ---- shared memory ---- */

static uint8_t *
smem_at(SimThread *t, uint64_t addr, size_t bytes, const char *what)
{
	SimCta *c = t->cta;
	uint64_t base = (uint64_t)(uintptr_t)c->smem;
	/* 32-bit shared addresses are the host address's low bits (the window is below 2 GiB). */
	if (addr < base || addr + bytes > base + c->smem_size)
		sim_fail(t, "%s: shared address 0x%llx is outside the CTA's shared memory", what,
		         (unsigned long long)addr);
	return (uint8_t *)(uintptr_t)addr;
}

static Mbar *
mbar_find(SimCta *c, uint32_t addr)
{
	NvCta *s = nv(c);
	for (int i = 0; i < s->nmb; i++)
		if (s->mb[i].addr == addr)
			return &s->mb[i];
	return NULL;
}

static Mbar *
mbar_get(SimThread *t, uint64_t addr, const char *what)
{
	smem_at(t, addr, 8, what);
	Mbar *m = mbar_find(t->cta, (uint32_t)addr);
	if (!m)
		sim_fail(t, "%s: no mbarrier was initialized at shared address 0x%llx", what,
		         (unsigned long long)addr);
	return m;
}

static void
mbar_maybe_complete(Mbar *m)
{
	if (m->pending == 0 && m->tx == 0) {
		m->phase++;
		m->pending = m->count;
	}
}

static void
mbar_arrive(SimThread *t, Mbar *m, int count, const char *what)
{
	if (m->pending < count)
		sim_fail(t, "%s: %d arrivals on an mbarrier (count %d) that expects %d more in phase "
		            "%llu",
		         what, count, m->count, m->pending, (unsigned long long)m->phase);
	m->pending -= count;
	mbar_maybe_complete(m);
}

static void
mbar_init(SimThread *t, uint64_t addr, int count)
{
	NvCta *s = nv(t->cta);
	smem_at(t, addr, 8, "mbarrier.init");
	if (count < 1)
		sim_fail(t, "mbarrier.init with count %d", count);
	Mbar *m = mbar_find(t->cta, (uint32_t)addr);
	if (!m) {
		if (s->nmb == s->capmb) {
			s->capmb = s->capmb ? 2 * s->capmb : 16;
			s->mb = realloc(s->mb, sizeof *s->mb * (size_t)s->capmb);
		}
		m = &s->mb[s->nmb++];
	}
	*m = (Mbar){(uint32_t)addr, count, count, 0, 0};
}

static bool
phase_ready(SimThread *t)
{
	const Mbar *m = t->wait_on;
	return (m->phase & 1) != t->wait_val;
}

/* Blocks until the phase of parity `parity` completed (the current phase's parity differs). */
static void
mbar_wait(SimThread *t, Mbar *m, int parity, const char *what)
{
	char where[160];
	snprintf(where, sizeof where,
	         "%s parity %d at shared 0x%x (phase %llu, %d of %d arrivals and %lld bytes "
	         "outstanding)",
	         what, parity, m->addr, (unsigned long long)m->phase, m->pending, m->count,
	         (long long)m->tx);
	sim_wait(t, phase_ready, m, (uint64_t)parity, where);
}

/* ---- the intrinsics ---- */

static void
f_sreg(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	const char *n = k->name + strlen("nvvm.read.ptx.sreg.");
	SimCta *c = t->cta;
	int d = n[strlen(n) - 1] - 'x';
	uint64_t v;
	if (!strncmp(n, "tid.", 4))
		v = d ? 0 : (uint64_t)t->tid;
	else if (!strncmp(n, "ntid.", 5))
		v = d ? 1 : (uint64_t)c->nthreads;
	else if (!strncmp(n, "ctaid.", 6))
		v = c->ctaid[d];
	else if (!strncmp(n, "nctaid.", 7))
		v = c->nctaid[d];
	else if (!strcmp(n, "laneid"))
		v = (uint64_t)t->lane;
	else if (!strcmp(n, "warpid"))
		v = (uint64_t)t->warp;
	else
		sim_fail(t, "no model of %%%s", n);
	sim_res_u64(k, res, 0, v);
}

static void
f_barrier0(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	(void)res;
	sim_group_arrive(t, &nv(t->cta)->cta_bar, 0, t->cta->nthreads, 0, k, NULL, NULL,
	                 "bar.sync 0 (all threads)");
}

static void
named_barrier(SimThread *t, const SimCall *k, int id, int count)
{
	if (id < 0 || id > 15)
		sim_fail(t, "bar.sync %d: barrier ids are 0..15", id);
	if (count % 32 || count < 0 || count > t->cta->nthreads)
		sim_fail(t, "bar.sync %d, %d: the count must be a multiple of 32 up to the CTA's %d "
		            "threads",
		         id, count, t->cta->nthreads);
	char where[96];
	snprintf(where, sizeof where, "bar.sync %d, %d", id, count);
	sim_group_arrive(t, id == 0 && !count ? &nv(t->cta)->cta_bar : &nv(t->cta)->bars[id], 0,
	                 t->cta->nthreads, count, k, NULL, NULL, where);
}

static void
f_barrier_cnt(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)res;
	named_barrier(t, k, (int)sim_arg_u64(k, args, 0), (int)sim_arg_u64(k, args, 1));
}

/* A warp collective of the calling lane (sim_lanes_run over its warp's state). */
static void
warp_collective(SimThread *t, const SimCall *k, void (*fn)(SimCta *c, SimLanes *w),
                const char *what)
{
	if (t->warp >= MAX_WARPS)
		sim_fail(t, "more than %d warps", MAX_WARPS);
	sim_lanes_run(t, &nv(t->cta)->warps[t->warp], k, fn, what);
}

static void
shfl_bfly(SimCta *c, SimLanes *w)
{
	int lanes = c->warp_size;
	for (int l = 0; l < lanes; l++) {
		int src = l ^ (int)(w->in[l][1] & 31);
		w->out[l][0] = w->lane_in[src] ? w->in[src][0] : w->in[l][0];
	}
}

static void
f_shfl_bfly(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	SimLanes *w = &nv(t->cta)->warps[t->warp];
	if (sim_arg_u64(k, args, 0) != 0xffffffffu)
		sim_fail(t, "shfl.sync with member mask 0x%llx: the model takes full warps",
		         (unsigned long long)sim_arg_u64(k, args, 0));
	w->in[t->lane][0] = sim_arg_u64(k, args, 1);
	w->in[t->lane][1] = sim_arg_u64(k, args, 2);
	warp_collective(t, k, shfl_bfly, "shfl.sync.bfly");
	sim_res_u64(k, res, 0, w->out[t->lane][0]);
}

static void
f_bar_warp(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)args;
	(void)res;
	warp_collective(t, k, shfl_bfly, "bar.warp.sync");
}

static void
do_ldmatrix(SimCta *c, SimLanes *w)
{
	int lanes = c->warp_size;
	int num = (int)w->in[0][1], trans = (int)w->in[0][2];
	const uint8_t *rows[32] = {0};
	uint64_t base = (uint64_t)(uintptr_t)c->smem;
	for (int l = 0; l < lanes && l < 32; l++) {
		if (l >= 8 * num)
			continue;
		uint64_t a = w->in[l][0];
		if (a < base || a + 16 > base + c->smem_size) {
			snprintf(w->err, sizeof w->err,
			         "ldmatrix: lane %d's row address 0x%llx is outside shared memory", l,
			         (unsigned long long)a);
			return;
		}
		rows[l] = (const uint8_t *)(uintptr_t)a;
	}
	uint32_t out[32][4];
	sim_ldmatrix(num, trans, rows, out);
	for (int l = 0; l < 32; l++)
		for (int j = 0; j < 4; j++)
			w->out[l][j] = out[l][j];
}

static void
f_ldmatrix(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	SimLanes *w = &nv(t->cta)->warps[t->warp];
	const char *x = strstr(k->name, ".x");
	w->in[t->lane][0] = sim_arg_u64(k, args, 0);
	w->in[t->lane][1] = (uint64_t)(x[2] - '0');
	w->in[t->lane][2] = strstr(k->name, ".trans") != NULL;
	warp_collective(t, k, do_ldmatrix, "ldmatrix");
	for (int j = 0; j < k->nres; j++)
		sim_res_u64(k, res, j, w->out[t->lane][j]);
}

static void
do_mma(SimCta *c, SimLanes *w)
{
	(void)c;
	uint32_t a[32][4], b[32][2];
	float cc[32][4], d[32][4];
	for (int l = 0; l < 32; l++) {
		for (int j = 0; j < 4; j++) {
			a[l][j] = (uint32_t)w->in[l][j];
			uint32_t bits = (uint32_t)(w->in[l][4 + j / 2] >> (32 * (j % 2)));
			memcpy(&cc[l][j], &bits, 4);
		}
		b[l][0] = (uint32_t)w->in[l][6];
		b[l][1] = (uint32_t)(w->in[l][6] >> 32);
	}
	sim_mma_m16n8k16(w->in[0][7] ? SIM_F16 : SIM_BF16, (const uint32_t(*)[4])a, (const uint32_t(*)[2])b,
	                 (const float(*)[4])cc, d);
	for (int l = 0; l < 32; l++)
		for (int j = 0; j < 4; j++) {
			uint32_t bits;
			memcpy(&bits, &d[l][j], 4);
			w->out[l][j] = bits;
		}
}

static void
f_mma(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	SimLanes *w = &nv(t->cta)->warps[t->warp];
	if (k->nargs != 10 || k->nres != 4)
		sim_fail(t, "no model of %s with %d operands", k->name, k->nargs);
	uint64_t *in = w->in[t->lane];
	for (int j = 0; j < 4; j++)
		in[j] = sim_arg_u64(k, args, j) & 0xffffffffu;
	in[4] = (sim_arg_u64(k, args, 6) & 0xffffffffu) | sim_arg_u64(k, args, 7) << 32;
	in[5] = (sim_arg_u64(k, args, 8) & 0xffffffffu) | sim_arg_u64(k, args, 9) << 32;
	in[6] = (sim_arg_u64(k, args, 4) & 0xffffffffu) | sim_arg_u64(k, args, 5) << 32;
	in[7] = strstr(k->name, "bf16") == NULL; /* the f16 form is named by its f32 types */
	warp_collective(t, k, do_mma, "mma.sync.m16n8k16");
	for (int j = 0; j < 4; j++)
		sim_res_u64(k, res, j, w->out[t->lane][j]);
}

static void
f_mbar_init(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)res;
	mbar_init(t, sim_arg_u64(k, args, 0), (int)sim_arg_u64(k, args, 1));
}

static void
f_mbar_arrive(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	Mbar *m = mbar_get(t, sim_arg_u64(k, args, 0), "mbarrier.arrive");
	uint64_t phase = m->phase;
	mbar_arrive(t, m, 1, "mbarrier.arrive");
	if (k->nres)
		sim_res_u64(k, res, 0, phase);
}

static float
f32_of(uint64_t bits)
{
	uint32_t b = (uint32_t)bits;
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static uint64_t
bits_of(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static void
f_math(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	const char *n = k->name + 5;
	if (k->arg[0].bits == 64) {
		double x, r;
		uint64_t b = sim_arg_u64(k, args, 0);
		memcpy(&x, &b, 8);
		if (!strncmp(n, "rsqrt", 5))
			r = 1.0 / sqrt(x);
		else
			sim_fail(t, "no model of %s", k->name);
		memcpy(&b, &r, 8);
		sim_res_u64(k, res, 0, b);
		return;
	}
	float x = f32_of(sim_arg_u64(k, args, 0)), r;
	if (!strncmp(n, "ex2", 3))
		r = exp2f(x);
	else if (!strncmp(n, "lg2", 3))
		r = log2f(x);
	else if (!strncmp(n, "rsqrt", 5))
		r = 1.0f / sqrtf(x);
	else
		sim_fail(t, "no model of %s", k->name);
	sim_res_u64(k, res, 0, bits_of(r));
}

static void
f_setmaxnreg(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	(void)res;
	int64_t n = (int64_t)sim_arg_u64(k, args, 0);
	if (n < 24 || n > 256 || n % 8)
		sim_fail(t, "%s %lld: the count must be a multiple of 8 in [24, 256]", k->name,
		         (long long)n);
}

/* ---- PTX in inline assembly ---- */

enum { OP_REG, OP_IMM, OP_PRED, OP_SINK, OP_LIST, OP_ADDR, OP_LABEL };

typedef struct Opnd {
	int kind;
	int64_t v;         /* OP_REG: operand number; OP_IMM: value; OP_PRED: predicate index */
	int64_t disp;      /* OP_ADDR: displacement */
	struct Opnd *sub;  /* OP_LIST / OP_ADDR items */
	int nsub;
	char *label;
} Opnd;

typedef struct Insn {
	char op[96];
	int guard;         /* predicate index + 1, negative for @!, 0 none */
	Opnd o[8];
	int n;
	char *label;       /* a label defined here (no op) */
} Insn;

typedef struct AsmProg {
	Insn *ins;
	int n;
	char preds[8][16];
	int npred;
	int tie[SIM_MAX_OPS]; /* output i's tied input operand number, or -1 */
	int nout, nin;
} AsmProg;

static const char *
skip(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static int
pred_index(AsmProg *a, const char *name, size_t n, bool declare)
{
	for (int i = 0; i < a->npred; i++)
		if (strlen(a->preds[i]) == n && !strncmp(a->preds[i], name, n))
			return i;
	if (!declare || a->npred == 8 || n >= 16)
		return -1;
	memcpy(a->preds[a->npred], name, n);
	a->preds[a->npred][n] = 0;
	return a->npred++;
}

static const char *parse_opnd(AsmProg *a, const char *p, Opnd *o, bool *ok);

static const char *
parse_list(AsmProg *a, const char *p, char close, Opnd *o, bool *ok)
{
	o->sub = calloc(40, sizeof *o->sub);
	int cap = 40;
	for (;;) {
		p = skip(p);
		if (*p == close) {
			p++;
			break;
		}
		if (o->nsub == cap) {
			cap *= 2;
			o->sub = realloc(o->sub, sizeof *o->sub * (size_t)cap);
		}
		memset(&o->sub[o->nsub], 0, sizeof *o->sub);
		if (close == ']' && *p == '+') {
			p = skip(p + 1);
			o->disp = strtoll(p, (char **)&p, 0);
			continue;
		}
		p = parse_opnd(a, p, &o->sub[o->nsub++], ok);
		if (!*ok)
			return p;
		p = skip(p);
		if (*p == ',')
			p++;
		else if (*p != close && !(close == ']' && *p == '+')) {
			*ok = false;
			return p;
		}
	}
	return p;
}

static const char *
parse_opnd(AsmProg *a, const char *p, Opnd *o, bool *ok)
{
	p = skip(p);
	memset(o, 0, sizeof *o);
	if (*p == '$' && isdigit((unsigned char)p[1])) {
		o->kind = OP_REG;
		o->v = strtol(p + 1, (char **)&p, 10);
	} else if (*p == '-' || isdigit((unsigned char)*p)) {
		o->kind = OP_IMM;
		o->v = strtoll(p, (char **)&p, 0);
	} else if (*p == '{') {
		o->kind = OP_LIST;
		p = parse_list(a, p + 1, '}', o, ok);
	} else if (*p == '[') {
		o->kind = OP_ADDR;
		p = parse_list(a, p + 1, ']', o, ok);
	} else if (*p == '_' && !(isalnum((unsigned char)p[1]) || p[1] == '_')) {
		o->kind = OP_SINK;
		p++;
	} else if (isalpha((unsigned char)*p) || *p == '_') {
		const char *s = p;
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '$' || *p == '{' || *p == ':' ||
		       *p == '}')
			p++;
		int pi = pred_index(a, s, (size_t)(p - s), false);
		if (pi >= 0) {
			o->kind = OP_PRED;
			o->v = pi;
		} else {
			o->kind = OP_LABEL;
			o->label = strndup(s, (size_t)(p - s));
		}
	} else {
		*ok = false;
	}
	return p;
}

static void
free_opnd(Opnd *o)
{
	for (int i = 0; i < o->nsub; i++)
		free_opnd(&o->sub[i]);
	free(o->sub);
	free(o->label);
}

static void
asm_free(AsmProg *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->n; i++) {
		for (int j = 0; j < a->ins[i].n; j++)
			free_opnd(&a->ins[i].o[j]);
		free(a->ins[i].label);
	}
	free(a->ins);
	free(a);
}

static void
nv_unbind(SimCall *k)
{
	if (!k->name)
		asm_free(k->prep);
	k->prep = NULL;
}

/* Parses the constraint string: outputs first, then inputs; a digit ties an input to an output. */
static bool
parse_cons(AsmProg *a, const char *cons)
{
	int nout = 0, nin = 0;
	for (int i = 0; i < SIM_MAX_OPS; i++)
		a->tie[i] = -1;
	const char *p = cons;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (*p == '~') {
			/* a clobber */
		} else if (*p == '=') {
			nout++;
		} else {
			if (isdigit((unsigned char)*p)) {
				int o = atoi(p);
				if (o < 0 || o >= nout)
					return false;
				a->tie[o] = nout + nin;
			}
			nin++;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	a->nout = nout;
	a->nin = nin;
	return true;
}

static AsmProg *
asm_parse(const char *text, const char *cons, char *err, size_t errlen)
{
	AsmProg *a = calloc(1, sizeof *a);
	if (!parse_cons(a, cons)) {
		snprintf(err, errlen, "cannot read the constraints \"%s\"", cons);
		asm_free(a);
		return NULL;
	}
	int cap = 8;
	a->ins = calloc((size_t)cap, sizeof *a->ins);
	const char *p = text;
	bool ok = true;
	while (ok) {
		p = skip(p);
		if (!*p)
			break;
		if (*p == '{' || *p == '}' || *p == ';') {
			p++;
			continue;
		}
		if (a->n == cap) {
			cap *= 2;
			a->ins = realloc(a->ins, sizeof *a->ins * (size_t)cap);
		}
		Insn *in = &a->ins[a->n];
		memset(in, 0, sizeof *in);
		if (!strncmp(p, ".reg", 4)) {
			/* .reg .pred p, q; */
			p = skip(p + 4);
			if (strncmp(p, ".pred", 5)) {
				ok = false;
				break;
			}
			p += 5;
			for (;;) {
				p = skip(p);
				const char *s = p;
				while (isalnum((unsigned char)*p) || *p == '_')
					p++;
				if (p == s || pred_index(a, s, (size_t)(p - s), true) < 0) {
					ok = false;
					break;
				}
				p = skip(p);
				if (*p == ',') {
					p++;
					continue;
				}
				break;
			}
			continue;
		}
		if (*p == '@') {
			bool neg = p[1] == '!';
			p += neg ? 2 : 1;
			const char *s = p;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			int pi = pred_index(a, s, (size_t)(p - s), false);
			if (pi < 0) {
				ok = false;
				break;
			}
			in->guard = neg ? -(pi + 1) : pi + 1;
			p = skip(p);
		}
		const char *s = p;
		/* An opcode may hold "::" (shared::cta); a label ends in one ':'. */
		while (*p && !isspace((unsigned char)*p) && *p != ';' &&
		       !(*p == ':' && p[1] != ':' && p[-1] != ':'))
			p++;
		if (*p == ':') {
			in->label = strndup(s, (size_t)(p - s));
			p++;
			a->n++;
			continue;
		}
		if ((size_t)(p - s) >= sizeof in->op) {
			ok = false;
			break;
		}
		memcpy(in->op, s, (size_t)(p - s));
		for (;;) {
			p = skip(p);
			if (*p == ';' || !*p)
				break;
			if (in->n == 8) {
				ok = false;
				break;
			}
			p = parse_opnd(a, p, &in->o[in->n++], &ok);
			if (!ok)
				break;
			p = skip(p);
			if (*p == ',')
				p++;
		}
		a->n++;
	}
	if (!ok) {
		snprintf(err, errlen, "the simulator cannot read the PTX \"%s\" near \"%.30s\"", text, p);
		asm_free(a);
		return NULL;
	}
	return a;
}

/* The running state of one assembly call. */
typedef struct AsmRun {
	SimThread *t;
	const SimCall *k;
	const AsmProg *a;
	uint64_t r[2 * SIM_MAX_OPS];
	bool pred[8];
} AsmRun;

static uint64_t
val(AsmRun *x, const Opnd *o)
{
	switch (o->kind) {
	case OP_REG:
		if (o->v < 0 || o->v >= x->a->nout + x->a->nin)
			sim_fail(x->t, "PTX operand $%lld does not exist", (long long)o->v);
		return x->r[o->v];
	case OP_IMM:
		return (uint64_t)o->v;
	case OP_PRED:
		return x->pred[o->v];
	default:
		sim_fail(x->t, "PTX operand of an unexpected kind in \"%s\"", x->k->text);
	}
}

static void
set(AsmRun *x, const Opnd *o, uint64_t v)
{
	if (o->kind == OP_PRED)
		x->pred[o->v] = v != 0;
	else if (o->kind == OP_REG && o->v < x->a->nout)
		x->r[o->v] = v;
	else if (o->kind != OP_SINK)
		sim_fail(x->t, "PTX writes an input operand in \"%s\"", x->k->text);
}

static uint64_t
addr_of(AsmRun *x, const Opnd *o)
{
	if (o->kind != OP_ADDR || o->nsub < 1)
		sim_fail(x->t, "PTX: expected an address in \"%s\"", x->k->text);
	return val(x, &o->sub[0]) + (uint64_t)o->disp;
}

static bool
has(const char *op, const char *w)
{
	return strstr(op, w) != NULL;
}

static int
width_of(const char *op)
{
	if (has(op, ".b16") || has(op, ".u16") || has(op, ".s16") || has(op, ".f16"))
		return 2;
	if (has(op, ".b64") || has(op, ".u64") || has(op, ".s64") || has(op, ".f64"))
		return 8;
	if (has(op, ".b8") || has(op, ".u8") || has(op, ".s8"))
		return 1;
	return 4;
}

/* ld / st on global (or generic) memory: host addresses. */
static void
ld_st(AsmRun *x, const Insn *in, bool load)
{
	int w = width_of(in->op);
	int vec = has(in->op, ".v4") ? 4 : has(in->op, ".v2") ? 2 : 1;
	const Opnd *regs = load ? &in->o[0] : &in->o[1];
	const Opnd *ad = load ? &in->o[1] : &in->o[0];
	uint8_t *p = (uint8_t *)(uintptr_t)addr_of(x, ad);
	if ((uintptr_t)p % (uintptr_t)(w * vec))
		sim_fail(x->t, "%s at %p: misaligned for %d bytes", in->op, (void *)p, w * vec);
	for (int i = 0; i < vec; i++) {
		const Opnd *o = regs->kind == OP_LIST ? &regs->sub[i] : regs;
		if (load) {
			uint64_t v = 0;
			memcpy(&v, p + i * w, (size_t)w);
			set(x, o, v);
		} else {
			uint64_t v = val(x, o);
			memcpy(p + i * w, &v, (size_t)w);
		}
	}
}

/* red.<sem>.<scope>.global.<op>.<type> [a], v: a read-modify-write of global memory (a peer's,
 * for a put's reduce or a chunk signal). One host thread runs every simulated one, so the
 * update is atomic as it is. */
static void
red(AsmRun *x, const Insn *in)
{
	const char *op = in->op;
	int w = width_of(op);
	uint8_t *p = (uint8_t *)(uintptr_t)addr_of(x, &in->o[0]);
	if ((uintptr_t)p % (uintptr_t)w)
		sim_fail(x->t, "%s at %p: misaligned for %d bytes", op, (void *)p, w);
	uint64_t v = val(x, &in->o[1]), m = 0;
	memcpy(&m, p, (size_t)w);
	bool add = has(op, ".add."), max = has(op, ".max."), min = has(op, ".min.");
	if (!add && !max && !min)
		sim_fail(x->t, "no model of \"%s\"", op);
	if (has(op, ".f32") || has(op, ".f64") || has(op, ".f16") || has(op, ".bf16")) {
		if (!add)
			sim_fail(x->t, "no model of \"%s\"", op);
		if (w == 8) {
			double a, b;
			memcpy(&a, &m, 8);
			memcpy(&b, &v, 8);
			a += b;
			memcpy(&m, &a, 8);
		} else if (w == 4) {
			float a, b;
			uint32_t ma = (uint32_t)m, vb = (uint32_t)v;
			memcpy(&a, &ma, 4);
			memcpy(&b, &vb, 4);
			a += b;
			memcpy(&ma, &a, 4);
			m = ma;
		} else if (has(op, ".bf16")) {
			m = sim_f32_to_bf16(sim_bf16_to_f32((uint16_t)m) + sim_bf16_to_f32((uint16_t)v));
		} else {
			m = sim_f32_to_f16(sim_f16_to_f32((uint16_t)m) + sim_f16_to_f32((uint16_t)v));
		}
	} else if (add) {
		m += v;
	} else {
		bool sgn = has(op, ".s32") || has(op, ".s64");
		int sh = 64 - 8 * w;
		int64_t sa = (int64_t)(m << sh) >> sh, sb = (int64_t)(v << sh) >> sh;
		uint64_t ua = sh ? m & ((1ULL << (8 * w)) - 1) : m, ub = sh ? v & ((1ULL << (8 * w)) - 1) : v;
		bool take = sgn ? (max ? sb > sa : sb < sa) : (max ? ub > ua : ub < ua);
		if (take)
			m = v;
	}
	memcpy(p, &m, (size_t)w);
}

/* ---- asynchronous copies ---- */

typedef struct TmaJob {
	SimAsync a;
	SimTensorMap map;
	int32_t coord[5];
	uint8_t *dst;
	uint32_t mbar;
	SimThread *t;
} TmaJob;

static void
tma_complete(SimCta *c, SimAsync *as)
{
	TmaJob *j = (TmaJob *)as;
	char err[200];
	size_t rows = 1;
	for (uint32_t d = 1; d < j->map.rank && d < 5; d++)
		rows *= j->map.box[d];
	size_t bytes = j->map.rank >= 1 && j->map.rank <= 5
	                   ? (size_t)j->map.box[0] * j->map.elem_bytes * rows
	                   : 0;
	uint64_t base = (uint64_t)(uintptr_t)c->smem;
	if (!bytes || (uint64_t)(uintptr_t)j->dst + bytes > base + c->smem_size) {
		SimThread *t = j->t;
		free(j);
		sim_fail(t, "cp.async.bulk.tensor: the box does not fit in shared memory");
	}
	size_t n = sim_tma_load(&j->map, j->coord, j->dst, err, sizeof err);
	Mbar *m = mbar_find(c, j->mbar);
	SimThread *t = j->t;
	free(j);
	if (!n)
		sim_fail(t, "cp.async.bulk.tensor: %s", err);
	if (!m)
		sim_fail(t, "cp.async.bulk.tensor: no mbarrier at shared 0x%x", j->mbar);
	m->tx -= (int64_t)n;
	mbar_maybe_complete(m);
}

static void
tma_issue(AsmRun *x, const Insn *in)
{
	if (in->n != 3 || in->o[1].kind != OP_ADDR || in->o[1].nsub != 2 ||
	    in->o[1].sub[1].kind != OP_LIST)
		sim_fail(x->t, "no model of \"%s\"", in->op);
	TmaJob *j = calloc(1, sizeof *j);
	j->t = x->t;
	const void *map = (const void *)(uintptr_t)val(x, &in->o[1].sub[0]);
	memcpy(&j->map, map, sizeof j->map);
	if (j->map.magic != SIM_TMAP_MAGIC) {
		free(j);
		sim_fail(x->t, "cp.async.bulk.tensor: the tensor map was not encoded for a simulated "
		               "device");
	}
	const Opnd *cl = &in->o[1].sub[1];
	for (int d = 0; d < cl->nsub && d < 5; d++)
		j->coord[d] = (int32_t)val(x, &cl->sub[d]);
	j->dst = smem_at(x->t, addr_of(x, &in->o[0]), 1, "cp.async.bulk.tensor");
	j->mbar = (uint32_t)addr_of(x, &in->o[2]);
	mbar_get(x->t, j->mbar, "cp.async.bulk.tensor");
	j->a.complete = tma_complete;
	snprintf(j->a.what, sizeof j->a.what, "TMA load to shared 0x%x",
	         (uint32_t)(uintptr_t)j->dst);
	sim_async_post(x->t->cta, &j->a);
}

typedef struct CpJob {
	SimAsync a;
	SimThread *t;
	uint64_t seq;
	uint8_t *dst;
	const uint8_t *src;
	int bytes, src_bytes;
	uint32_t mbar; /* an arrive-on job: the mbarrier, else 0 */
} CpJob;

static bool
earlier_copy_of(const SimAsync *a, const void *u)
{
	const CpJob *j = (const CpJob *)a, *me = u;
	return a->complete == me->a.complete && j->t == me->t && j->seq < me->seq;
}

static void
cp_complete(SimCta *c, SimAsync *as)
{
	CpJob *j = (CpJob *)as;
	if (j->mbar) {
		/* The arrive-on fires after the thread's earlier copies: complete them first. */
		sim_async_drain(c, earlier_copy_of, j);
		Mbar *m = mbar_find(c, j->mbar);
		SimThread *t = j->t;
		if (!m) {
			free(j);
			sim_fail(t, "cp.async.mbarrier.arrive: no mbarrier");
		}
		if (m->pending < 1) {
			free(j);
			sim_fail(t, "cp.async.mbarrier.arrive.noinc: the mbarrier expects no more arrivals");
		}
		m->pending--;
		mbar_maybe_complete(m);
	} else {
		memcpy(j->dst, j->src, (size_t)j->src_bytes);
		memset(j->dst + j->src_bytes, 0, (size_t)(j->bytes - j->src_bytes));
	}
	free(j);
}

static void
cp_async(AsmRun *x, const Insn *in)
{
	CpJob *j = calloc(1, sizeof *j);
	j->t = x->t;
	j->seq = ++nv(x->t->cta)->async_seq;
	j->a.complete = cp_complete;
	if (has(in->op, "mbarrier.arrive")) {
		j->mbar = (uint32_t)addr_of(x, &in->o[0]);
		mbar_get(x->t, j->mbar, in->op);
		snprintf(j->a.what, sizeof j->a.what, "cp.async arrive-on of thread %d", x->t->tid);
	} else {
		j->bytes = (int)val(x, &in->o[2]);
		j->src_bytes = in->n > 3 ? (int)val(x, &in->o[3]) : j->bytes;
		if (j->bytes != 4 && j->bytes != 8 && j->bytes != 16) {
			free(j);
			sim_fail(x->t, "cp.async of %d bytes (4, 8 or 16)", (int)val(x, &in->o[2]));
		}
		if (j->src_bytes < 0 || j->src_bytes > j->bytes) {
			free(j);
			sim_fail(x->t, "cp.async: src-size %d outside 0..cp-size", (int)val(x, &in->o[3]));
		}
		j->dst = smem_at(x->t, addr_of(x, &in->o[0]), (size_t)j->bytes, "cp.async");
		j->src = (const uint8_t *)(uintptr_t)addr_of(x, &in->o[1]);
		if ((uintptr_t)j->dst % (uintptr_t)j->bytes || (uintptr_t)j->src % (uintptr_t)j->bytes) {
			free(j);
			sim_fail(x->t, "cp.async: misaligned addresses");
		}
		snprintf(j->a.what, sizeof j->a.what, "cp.async of thread %d", x->t->tid);
	}
	sim_async_post(x->t->cta, &j->a);
}

static bool
copy_of_thread(const SimAsync *a, const void *u)
{
	return a->complete == cp_complete && ((const CpJob *)a)->t == u &&
	       !((const CpJob *)a)->mbar;
}

/* ---- wgmma ---- */

/* A wgmma's pending accumulator register: a quiet NaN whose payload names the op (14 bits of
 * its sequence number) and the register (7 bits), bit 21 set. */
#define TOKEN_MARK 0x7FE00000u
static bool
is_token(uint32_t b)
{
	return (b & 0xFFE00000u) == TOKEN_MARK;
}
static uint32_t
token(uint32_t seq, int reg)
{
	return TOKEN_MARK | (seq & 0x3FFF) << 7 | (uint32_t)reg;
}

static Warpgroup *
wg_of(SimThread *t)
{
	if (t->cta->nthreads % 128)
		sim_fail(t, "wgmma in a CTA of %d threads (not whole warpgroups)", t->cta->nthreads);
	return &nv(t->cta)->wgs[t->tid / 128];
}

static WgOp *
wg_find(Warpgroup *g, uint32_t tok)
{
	uint32_t s14 = (tok >> 7) & 0x3FFF;
	for (int i = 0; i < WG_RING; i++) {
		WgOp *o = g->ring[i];
		if (o && (o->seq & 0x3FFF) == s14)
			return o;
	}
	return NULL;
}

static void
wg_op_free(WgOp *o)
{
	if (!o)
		return;
	free(o->a);
	free(o->in);
	free(o->out);
	free(o);
}

static void
wg_issue_done(SimCta *c, void *u)
{
	(void)c;
	Warpgroup *g = u;
	uint32_t seq = g->seq++;
	WgOp *o = calloc(1, sizeof *o);
	o->seq = seq;
	o->n = g->n;
	o->group = -1;
	o->da = g->da;
	o->db = g->db;
	o->scale_d = g->scale_d;
	o->areg = g->k->cons[0] && strstr(g->k->text, "}, {") != NULL;
	o->ab = strstr(g->k->text, ".f16.f16") ? SIM_F16 : SIM_BF16;
	const char *s = strstr(g->k->text, ", p, ");
	int imm[4] = {1, 1, 0, 0};
	if (s)
		sscanf(s + 5, "%d, %d, %d, %d", &imm[0], &imm[1], &imm[2], &imm[3]);
	o->sa = imm[0];
	o->sb = imm[1];
	if (o->areg) {
		o->tnsp_b = imm[2];
	} else {
		o->tnsp_a = imm[2];
		o->tnsp_b = imm[3];
	}
	o->in = calloc(128, sizeof *o->in);
	if (o->areg)
		o->a = calloc(128, sizeof *o->a);
	for (int l = 0; l < 128; l++) {
		memcpy(o->in[l], g->lane_acc[l], sizeof o->in[l]);
		if (o->areg)
			memcpy(o->a[l], g->lane_regs[l], sizeof o->a[l]);
	}
	WgOp **slot = &g->ring[seq % WG_RING];
	if (*slot && !(*slot)->done)
		snprintf(g->err, sizeof g->err,
		         "more than %d wgmma operations in flight in one warpgroup", WG_RING);
	else
		wg_op_free(*slot);
	*slot = o;
}

/* wgmma.mma_async inside the text "{ .reg .pred p; setp.ne.b32 p, $S, 0; wgmma... }". */
static void
wgmma_issue(AsmRun *x, const Insn *in)
{
	SimThread *t = x->t;
	Warpgroup *g = wg_of(t);
	int n = 0;
	const char *mp = strstr(in->op, ".m64n");
	if (mp)
		n = atoi(mp + 5);
	if (n < 8 || n > 256 || n % 8 || in->o[0].kind != OP_LIST || in->o[0].nsub != n / 2)
		sim_fail(t, "no model of \"%s\"", in->op);
	int l = t->tid % 128;
	g->n = n;
	g->k = x->k;
	for (int i = 0; i < n / 2; i++)
		g->lane_acc[l][i] = (uint32_t)val(x, &in->o[0].sub[i]);
	int next = 1;
	if (in->o[1].kind == OP_LIST) {
		for (int i = 0; i < 4; i++)
			g->lane_regs[l][i] = (uint32_t)val(x, &in->o[1].sub[i]);
	} else {
		g->da = val(x, &in->o[1]);
	}
	next = 2;
	g->db = val(x, &in->o[next]);
	g->scale_d = (int)val(x, &in->o[next + 1]);
	sim_group_arrive(t, &g->g, t->tid / 128 * 128, 128, 0, x->k, wg_issue_done, g,
	                 "wgmma.mma_async");
	if (g->err[0])
		sim_fail(t, "%s", g->err);
	uint32_t seq = g->seq - 1;
	for (int i = 0; i < n / 2; i++)
		set(x, &in->o[0].sub[i], token(seq, i));
}

static void
wg_commit_done(SimCta *c, void *u)
{
	(void)c;
	Warpgroup *g = u;
	for (int i = 0; i < WG_RING; i++)
		if (g->ring[i] && g->ring[i]->group < 0)
			g->ring[i]->group = g->groups;
	g->groups++;
}

static bool
wg_run_op(Warpgroup *g, SimCta *c, WgOp *o)
{
	/* The accumulator inputs that are tokens of earlier ops take their results. */
	float (*acc)[128] = calloc(128, sizeof *acc);
	for (int l = 0; l < 128; l++)
		for (int i = 0; i < o->n / 2; i++) {
			uint32_t b = o->in[l][i];
			if (o->scale_d && is_token(b)) {
				WgOp *p = wg_find(g, b);
				if (!p || !p->done || p == o) {
					snprintf(g->err, sizeof g->err,
					         "a wgmma reads accumulator register %d of lane %d from a wgmma "
					         "that has not completed",
					         i, l);
					free(acc);
					return false;
				}
				acc[l][i] = p->out[l][b & 127];
			} else {
				memcpy(&acc[l][i], &b, 4);
			}
		}
	SimSmem sm = {c->smem, c->smem_size};
	char err[200];
	if (!sim_wgmma(o->n, o->ab, &sm, o->da, o->areg ? (const uint32_t(*)[4])o->a : NULL, o->db,
	               o->tnsp_a, o->tnsp_b, o->scale_d, o->sa, o->sb, acc, err, sizeof err)) {
		snprintf(g->err, sizeof g->err, "wgmma: %s", err);
		free(acc);
		return false;
	}
	o->out = acc;
	o->done = true;
	return true;
}

static void
wg_wait_done(SimCta *c, void *u)
{
	Warpgroup *g = u;
	int keep = g->pending_wait;
	g->err[0] = 0;
	/* Groups g->groups - keep .. g->groups - 1 may stay in flight; the rest complete, in
	 * issue order. */
	for (uint32_t s = g->seq > WG_RING ? g->seq - WG_RING : 0; s < g->seq; s++) {
		WgOp *o = g->ring[s % WG_RING];
		if (!o || o->seq != s || o->done || o->group < 0 || o->group >= g->groups - keep)
			continue;
		if (!wg_run_op(g, c, o))
			return;
	}
}

static void
wgmma_wait(AsmRun *x, const Insn *in)
{
	SimThread *t = x->t;
	Warpgroup *g = wg_of(t);
	g->pending_wait = (int)val(x, &in->o[0]);
	sim_group_arrive(t, &g->g, t->tid / 128 * 128, 128, 0, x->k, wg_wait_done, g,
	                 "wgmma.wait_group");
	if (g->err[0])
		sim_fail(t, "%s", g->err);
	/* The registers passed through the wait take the results of the completed ops. */
	int l = t->tid % 128;
	for (int i = 0; i < x->a->nout; i++) {
		uint32_t b = (uint32_t)x->r[i];
		if (!is_token(b))
			continue;
		WgOp *o = wg_find(g, b);
		if (!o)
			sim_fail(t, "wgmma.wait_group: register $%d holds the result of a wgmma that is "
			            "no longer tracked (read before the wait that retired it?)",
			         i);
		if (o->done) {
			uint32_t v;
			memcpy(&v, &o->out[l][b & 127], 4);
			x->r[i] = v;
		}
	}
}

static void
wg_simple(AsmRun *x, const char *what, void (*done)(SimCta *c, void *u))
{
	Warpgroup *g = wg_of(x->t);
	sim_group_arrive(x->t, &g->g, x->t->tid / 128 * 128, 128, 0, x->k, done, g, what);
}


/* ---- f8 conversions (cvt with .e4m3x2 / .e5m2x2) ---- */

/* The value of an f8 byte: e4m3 (bias 7, no infinities, S.1111.111 NaN) or e5m2 (bias 15, IEEE
 * infinities and NaNs). */
static float
f8_value(uint8_t v, bool e4m3)
{
	int eb = e4m3 ? 4 : 5, mb = 7 - eb, bias = e4m3 ? 7 : 15;
	int sign = v >> 7, e = (v >> mb) & ((1 << eb) - 1), m = v & ((1 << mb) - 1);
	float r;
	if (e4m3 && e == 15 && m == 7)
		r = NAN;
	else if (!e4m3 && e == 31)
		r = m ? NAN : INFINITY;
	else if (!e)
		r = ldexpf((float)m, 1 - bias - mb);
	else
		r = ldexpf((float)(m + (1 << mb)), e - bias - mb);
	return sign ? -r : r;
}

/* cvt.rn.satfinite to f8: the nearest finite value, ties to an even mantissa, beyond the largest
 * finite value that value; NaN stays NaN. */
static uint8_t
f8_of(float x, bool e4m3)
{
	if (isnan(x))
		return 0x7f; /* S.1111.111 is a NaN in both formats */
	uint8_t sign = signbit(x) ? 0x80 : 0;
	float a = fabsf(x);
	int best = 0;
	float bd = INFINITY;
	for (int v = 0; v < 128; v++) {
		float f = f8_value((uint8_t)v, e4m3);
		if (isnan(f) || isinf(f))
			continue;
		float d = fabsf(f - a);
		if (d < bd || (d == bd && !(v & 1))) {
			bd = d;
			best = v;
		}
	}
	return (uint8_t)(sign | best);
}

static void
cvt_f8(AsmRun *x, const Insn *in)
{
	const char *op = in->op;
	bool e4m3 = has(op, "e4m3");
	if (has(op, ".f16x2.")) {
		/* two f8 bytes to two f16: the low byte to the low half */
		uint64_t v = val(x, &in->o[1]);
		uint32_t lo = sim_f32_to_f16(f8_value((uint8_t)v, e4m3));
		uint32_t hi = sim_f32_to_f16(f8_value((uint8_t)(v >> 8), e4m3));
		set(x, &in->o[0], lo | hi << 16);
	} else if (has(op, ".f32") && in->n == 3) {
		/* two f32 to two f8: a to the upper byte, b to the lower */
		uint8_t hi = f8_of(f32_of(val(x, &in->o[1])), e4m3);
		uint8_t lo = f8_of(f32_of(val(x, &in->o[2])), e4m3);
		set(x, &in->o[0], (uint64_t)lo | (uint64_t)hi << 8);
	} else {
		sim_fail(x->t, "no model of \"%s\"", op);
	}
}

/* ---- running a program ---- */

static int
find_label(const AsmProg *a, const char *l)
{
	for (int i = 0; i < a->n; i++)
		if (a->ins[i].label && !strcmp(a->ins[i].label, l))
			return i;
	return -1;
}

static void
exec_insn(AsmRun *x, const Insn *in, int *pc)
{
	const char *op = in->op;
	SimThread *t = x->t;
	if (!strncmp(op, "setp.", 5)) {
		uint64_t a = val(x, &in->o[1]), b = val(x, &in->o[2]);
		int w = width_of(op);
		uint64_t mask = w == 8 ? ~0ULL : ((1ULL << (8 * w)) - 1);
		a &= mask;
		b &= mask;
		bool r;
		if (has(op, ".ne."))
			r = a != b;
		else if (has(op, ".eq."))
			r = a == b;
		else
			sim_fail(t, "no model of \"%s\"", op);
		set(x, &in->o[0], r);
	} else if (!strncmp(op, "cvt.", 4) && (has(op, "e4m3") || has(op, "e5m2"))) {
		cvt_f8(x, in);
	} else if (!strncmp(op, "mov.", 4)) {
		int w = width_of(op);
		uint64_t v = val(x, &in->o[1]);
		set(x, &in->o[0], w == 8 ? v : v & ((1ULL << (8 * w)) - 1));
	} else if (!strncmp(op, "ld.global", 9) || !strncmp(op, "ld.", 3)) {
		ld_st(x, in, true);
	} else if (!strncmp(op, "st.", 3)) {
		ld_st(x, in, false);
	} else if (!strncmp(op, "red.", 4)) {
		red(x, in);
	} else if (!strncmp(op, "nanosleep", 9)) {
		/* A polling loop's nap: the thread waits until some thread of some CTA does
		 * something, so that polling nobody will answer is a hang, not a loop. */
		sim_wait_progress(t, "nanosleep (polling global memory)");
	} else if (!strcmp(op, "bra") || !strncmp(op, "bra.", 4)) {
		int to = in->o[0].label ? find_label(x->a, in->o[0].label) : -1;
		if (to < 0)
			sim_fail(t, "bra to an unknown label in \"%s\"", x->k->text);
		*pc = to;
	} else if (!strncmp(op, "fence.", 5) || !strcmp(op, "membar.cta") ||
	           !strcmp(op, "membar.gl")) {
		/* Memory is one coherent host memory; ordering is the scheduler's. */
	} else if (!strncmp(op, "mbarrier.init", 13)) {
		mbar_init(t, addr_of(x, &in->o[0]), (int)val(x, &in->o[1]));
	} else if (!strncmp(op, "mbarrier.arrive.expect_tx", 25)) {
		Mbar *m = mbar_get(t, addr_of(x, &in->o[1]), op);
		m->tx += (int64_t)val(x, &in->o[2]);
		mbar_arrive(t, m, 1, op);
	} else if (!strncmp(op, "mbarrier.expect_tx", 18)) {
		Mbar *m = mbar_get(t, addr_of(x, &in->o[0]), op);
		m->tx += (int64_t)val(x, &in->o[1]);
	} else if (!strncmp(op, "mbarrier.complete_tx", 20)) {
		Mbar *m = mbar_get(t, addr_of(x, &in->o[0]), op);
		m->tx -= (int64_t)val(x, &in->o[1]);
		mbar_maybe_complete(m);
	} else if (!strncmp(op, "mbarrier.arrive", 15)) {
		Mbar *m = mbar_get(t, addr_of(x, &in->o[1]), op);
		uint64_t ph = m->phase;
		mbar_arrive(t, m, in->n > 2 ? (int)val(x, &in->o[2]) : 1, op);
		set(x, &in->o[0], ph);
	} else if (!strncmp(op, "mbarrier.test_wait.parity", 25) ||
	           !strncmp(op, "mbarrier.try_wait.parity", 24)) {
		Mbar *m = mbar_get(t, addr_of(x, &in->o[1]), op);
		int par = (int)(val(x, &in->o[2]) & 1);
		bool done = (m->phase & 1) != (uint64_t)par;
		if (!done && has(op, "try_wait")) {
			mbar_wait(t, m, par, "mbarrier.try_wait");
			done = true;
		} else if (!done) {
			/* A test that fails lets the others run; the thread sleeps until the phase
			 * moves, so that a spin that can never end is a hang, not a loop. */
			mbar_wait(t, m, par, "mbarrier.test_wait (spinning)");
		}
		set(x, &in->o[0], done);
	} else if (!strncmp(op, "cp.async.bulk.tensor", 20)) {
		if (!has(op, ".global.mbarrier::complete_tx::bytes") || !has(op, ".shared::cluster"))
			sim_fail(t, "no model of \"%s\"", op);
		tma_issue(x, in);
	} else if (!strncmp(op, "cp.async.wait_all", 17) || !strncmp(op, "cp.async.wait_group", 19)) {
		if (has(op, "wait_group") && val(x, &in->o[0]) != 0)
			sim_fail(t, "no model of \"%s\" with groups left in flight", op);
		sim_async_drain(t->cta, copy_of_thread, t);
	} else if (!strncmp(op, "cp.async.commit_group", 21)) {
		/* every copy is waited by wait_all / wait_group 0 */
	} else if (!strncmp(op, "cp.async.", 9)) {
		cp_async(x, in);
	} else if (!strncmp(op, "wgmma.fence", 11)) {
		wg_simple(x, "wgmma.fence", NULL);
	} else if (!strncmp(op, "wgmma.commit_group", 18)) {
		wg_simple(x, "wgmma.commit_group", wg_commit_done);
	} else if (!strncmp(op, "wgmma.wait_group", 16)) {
		wgmma_wait(x, in);
	} else if (!strncmp(op, "wgmma.mma_async", 15)) {
		if (!has(op, ".f32.bf16.bf16") && !has(op, ".f32.f16.f16"))
			sim_fail(t, "no model of \"%s\"", op);
		wgmma_issue(x, in);
	} else if (!strncmp(op, "bar.sync", 8) || !strncmp(op, "barrier.sync", 12)) {
		named_barrier(t, x->k, (int)val(x, &in->o[0]), in->n > 1 ? (int)val(x, &in->o[1]) : 0);
	} else if (!strncmp(op, "setmaxnreg", 10)) {
		int64_t n = (int64_t)val(x, &in->o[0]);
		if (n < 24 || n > 256 || n % 8)
			sim_fail(t, "%s %lld: the count must be a multiple of 8 in [24, 256]", op,
			         (long long)n);
	} else {
		sim_fail(t, "the simulator has no model of the PTX instruction \"%s\"", op);
	}
}

static void
f_asm(SimThread *t, const SimCall *k, const uint8_t *args, uint8_t *res)
{
	const AsmProg *a = k->prep;
	/* On the fiber's stack: a failing instruction leaves the fiber for good. */
	AsmRun run;
	memset(&run, 0, sizeof run);
	AsmRun *x = &run;
	x->t = t;
	x->k = k;
	x->a = a;
	for (int i = 0; i < a->nin && i < k->nargs; i++)
		x->r[a->nout + i] = sim_arg_u64(k, args, i);
	for (int i = 0; i < a->nout; i++)
		x->r[i] = a->tie[i] >= 0 ? x->r[a->tie[i]] : 0;
	for (int pc = 0; pc < a->n; pc++) {
		const Insn *in = &a->ins[pc];
		if (in->label)
			continue;
		if (in->guard) {
			bool p = x->pred[(in->guard > 0 ? in->guard : -in->guard) - 1];
			if (in->guard < 0 ? p : !p)
				continue;
		}
		int before = pc;
		exec_insn(x, in, &pc);
		if (pc != before)
			pc--; /* a branch: the loop's increment lands on the label */
	}
	for (int i = 0; i < a->nout && i < k->nres; i++)
		sim_res_u64(k, res, i, x->r[i]);
}

/* ---- binding ---- */

static const SimIntrinsic intrinsics[] = {
    {"nvvm.read.ptx.sreg.", f_sreg},
    {"nvvm.barrier0", f_barrier0},
    {"nvvm.barrier.sync.cnt", f_barrier_cnt},
    {"nvvm.bar.warp.sync", f_bar_warp},
    {"nvvm.shfl.sync.bfly.i32", f_shfl_bfly},
    {"nvvm.ldmatrix.sync.aligned.m8n8.", f_ldmatrix},
    {"nvvm.mma.m16n8k16.row.col.", f_mma},
    {"nvvm.mbarrier.init.shared", f_mbar_init},
    {"nvvm.mbarrier.arrive.shared", f_mbar_arrive},
    {"nvvm.ex2.approx.", f_math},
    {"nvvm.lg2.approx.", f_math},
    {"nvvm.rsqrt.approx.", f_math},
    {"nvvm.setmaxnreg.", f_setmaxnreg},
    {"trap", sim_trap},
    {"debugtrap", sim_trap},
};

static bool
nv_bind(SimCall *k, char *err, size_t errlen)
{
	if (k->name)
		return sim_bind_intrinsic(k, intrinsics, sizeof intrinsics / sizeof intrinsics[0], err,
		                          errlen);
	AsmProg *a = asm_parse(k->text, k->cons, err, errlen);
	if (!a)
		return false;
	if (a->nout != k->nres || a->nin != k->nargs) {
		snprintf(err, errlen, "the constraints \"%s\" do not match the call's operands",
		         k->cons);
		asm_free(a);
		return false;
	}
	for (int i = 0; i < a->n; i++) {
		const char *op = a->ins[i].op;
		if (!a->ins[i].label && !strcmp(op, "")) {
			snprintf(err, errlen, "empty PTX instruction in \"%s\"", k->text);
			asm_free(a);
			return false;
		}
	}
	k->prep = a;
	k->fn = f_asm;
	/* A poll (an acquire load, a nap) changes nothing: it is not progress. */
	k->idle = true;
	for (int i = 0; i < a->n; i++)
		if (!a->ins[i].label && strncmp(a->ins[i].op, "nanosleep", 9) &&
		    strncmp(a->ins[i].op, "ld.acquire", 10))
			k->idle = false;
	return true;
}

static void
nv_cta_begin(SimCta *c)
{
	c->model = calloc(1, sizeof(NvCta));
}

static void
nv_cta_end(SimCta *c)
{
	NvCta *s = c->model;
	if (!s)
		return;
	for (int w = 0; w < MAX_WARPS / 4; w++)
		for (int i = 0; i < WG_RING; i++)
			wg_op_free(s->wgs[w].ring[i]);
	free(s->mb);
	free(s);
	c->model = NULL;
}

static const char *
nv_cta_check(SimCta *c)
{
	NvCta *s = c->model;
	static _Thread_local char why[160];
	if (!s)
		return NULL;
	for (int w = 0; w < MAX_WARPS / 4; w++)
		for (int i = 0; i < WG_RING; i++) {
			WgOp *o = s->wgs[w].ring[i];
			if (o && !o->done) {
				snprintf(why, sizeof why,
				         "a wgmma of warpgroup %d never completed (no wgmma.wait_group "
				         "retired it)",
				         w);
				return why;
			}
		}
	return NULL;
}

const SimModel sim_nvptx_model = {
    .bind = nv_bind,
    .unbind = nv_unbind,
    .cta_begin = nv_cta_begin,
    .cta_end = nv_cta_end,
    .cta_check = nv_cta_check,
};
