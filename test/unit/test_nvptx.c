/* test_nvptx.c — the NVPTX fragment layouts against the PTX ISA's formulas (mma.m16n8k16 A, B,
 * C/D; wgmma m64nNk16 A and D), every planned MMA layout checked element by element (each
 * (thread, register) pair lands on the tile, each element held once up to replication; the
 * accumulator and A layouts of a chained product agree on their threads), the ptxas log
 * parser on the log formats ptxas and nvJitLink print, and the wgmma.wait_group counts of random
 * programs against their executions. */
#include <stdarg.h>
#include <string.h>

#include "../../backend-nvptx/nvptx.h"
#include "frontend.h"
#include "unit.h"

static LowerLayout
single(const LowerAtom *a, int warp_bits)
{
	LowerLayout l;
	int64_t shape[2] = {a->rows, a->cols};
	CHECK(lower_layout_tiled(&l, LOWER_OTHER, shape, a, 5, warp_bits, 0));
	return l;
}

static void
test_atoms(void)
{
	LowerAtom c = nvptx_atom_mma_c(), a = nvptx_atom_mma_a(), b = nvptx_atom_mma_b();
	LowerLayout lc = single(&c, 0), la = single(&a, 0), lb = single(&b, 0);
	char why[128];
	CHECK(lower_layout_check(&lc, why, sizeof why));
	CHECK(lower_layout_check(&la, why, sizeof why));
	CHECK(lower_layout_check(&lb, why, sizeof why));
	for (uint32_t lane = 0; lane < 32; lane++) {
		int64_t g = lane >> 2, t = lane & 3, x[2];
		for (uint32_t i = 0; i < 4; i++) { /* C/D: c0..c3 */
			lower_layout_coord(&lc, i, lane, 0, x);
			CHECK(x[0] == g + 8 * (i >> 1) && x[1] == 2 * t + (i & 1));
		}
		for (uint32_t i = 0; i < 8; i++) { /* A: a0..a7, row-major 16x16 */
			lower_layout_coord(&la, i, lane, 0, x);
			int64_t row = (i == 0 || i == 1 || i == 4 || i == 5) ? g : g + 8;
			int64_t col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
			CHECK(x[0] == row && x[1] == col);
		}
		for (uint32_t i = 0; i < 4; i++) { /* B: b0..b3, k x n */
			lower_layout_coord(&lb, i, lane, 0, x);
			CHECK(x[0] == 2 * t + (i & 1) + (i >= 2 ? 8 : 0) && x[1] == g);
		}
	}
	for (int n = 8; n <= 256; n *= 2) {
		LowerAtom d = nvptx_atom_wgmma_d(n);
		LowerLayout ld = single(&d, 2);
		CHECK(lower_layout_check(&ld, why, sizeof why));
		CHECK_EQ(lower_layout_nregs(&ld), n / 2);
		for (uint32_t w = 0; w < 4; w++)
			for (uint32_t lane = 0; lane < 32; lane++)
				for (uint32_t i = 0; i < (uint32_t)n / 2; i++) {
					int64_t x[2];
					lower_layout_coord(&ld, i, lane, w, x);
					CHECK(x[0] == 16 * w + (lane >> 2) + 8 * ((i >> 1) & 1) &&
					      x[1] == 8 * (i >> 2) + 2 * (lane & 3) + (i & 1));
				}
	}
	LowerAtom wa = nvptx_atom_wgmma_a();
	LowerLayout lwa = single(&wa, 2);
	CHECK(lower_layout_check(&lwa, why, sizeof why));
	for (uint32_t w = 0; w < 4; w++)
		for (uint32_t i = 0; i < 8; i++) {
			int64_t x[2], y[2];
			lower_layout_coord(&lwa, i, 5, w, x);
			lower_layout_coord(&la, i, 5, 0, y);
			CHECK(x[0] == y[0] + 16 * w && x[1] == y[1]);
		}
}

static bool
covers(const LowerLayout *l)
{
	char why[128];
	return lower_layout_check(l, why, sizeof why);
}

static void
test_plans(IrCtx *c)
{
	static const struct {
		const LowerTarget *t;
		int64_t m, n, k;
		int warp_bits;
		bool trans_b, chain;
		int impl_wgmma;
	} cases[] = {
	    {&nvptx_sm80, 128, 128, 64, 3, true, false, 0},
	    {&nvptx_sm80, 64, 64, 32, 2, false, false, 0},
	    {&nvptx_sm80, 128, 128, 128, 3, true, true, 0},
	    {&nvptx_sm80, 16, 8, 16, 3, false, false, 0}, /* more warps than blocks: replication */
	    {&nvptx_sm90a, 128, 128, 64, 3, true, false, 1},
	    {&nvptx_sm90a, 64, 256, 64, 2, true, false, 1},
	    {&nvptx_sm90a, 128, 128, 128, 3, false, true, 1},
	    {&nvptx_sm90a, 64, 128, 64, 3, true, false, 1},  /* two warpgroups split N */
	    {&nvptx_sm90a, 128, 512, 64, 2, true, false, 1}, /* two n256 instructions, two m64 */
	    {&nvptx_sm90a, 32, 64, 16, 2, true, false, 0},   /* too few rows for wgmma */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Lower L;
		memset(&L, 0, sizeof L);
		L.c = c;
		L.t = cases[i].t;
		LowerMmaReq r = {0};
		r.m = cases[i].m;
		r.n = cases[i].n;
		r.k = cases[i].k;
		r.ab = c->t_bf16;
		r.acc = c->t_f32;
		r.trans_b = cases[i].trans_b;
		r.chain = cases[i].chain;
		r.warp_bits = cases[i].warp_bits;
		r.nwarps = 1 << r.warp_bits;
		LowerMmaPlan p;
		CHECK(nvptx_mma_plan(&L, &r, &p));
		CHECK_EQ(p.impl == 1, cases[i].impl_wgmma == 1);
		CHECK(covers(&p.acc));
		CHECK(!p.a_reg || covers(&p.a));
		CHECK(p.a_stage.bytes == r.m * r.k * 2);
		if (cases[i].chain) {
			/* The accumulator becomes the next A (k = n) by a register permutation. */
			int perm[LOWER_MAX_REGS];
			LowerLayout a2 = p.acc;
			LowerMmaReq r2 = r;
			r2.k = r.n;
			LowerMmaPlan p2;
			CHECK(nvptx_mma_plan(&L, &r2, &p2));
			CHECK(p2.a_reg && lower_layout_regperm(&a2, &p2.a, perm));
		}
	}
	/* f32 operands have no tensor-core form: the shared layer multiplies with FMAs. */
	Lower L;
	memset(&L, 0, sizeof L);
	L.c = c;
	L.t = &nvptx_sm90a;
	LowerMmaReq r = {0};
	r.m = r.n = 64;
	r.k = 16;
	r.ab = c->t_f32;
	r.acc = c->t_f32;
	r.warp_bits = 2;
	r.nwarps = 4;
	LowerMmaPlan p;
	CHECK(!nvptx_mma_plan(&L, &r, &p));
}

static void
test_log(IrCtx *c)
{
	LowerKernelInfo k[2];
	memset(k, 0, sizeof k);
	k[0].name = "ws";
	k[1].name = "gemm";
	const char *log =
	    "ptxas info    : 0 bytes gmem\n"
	    "ptxas info    : Compiling entry function 'ws' for 'sm_90a'\n"
	    "ptxas info    : Function properties for ws\n"
	    "    520 bytes stack frame, 748 bytes spill stores, 752 bytes spill loads\n"
	    "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to "
	    "determine "
	    "register count at entry.\n"
	    "ptxas info    : Used 168 registers, used 2 barriers, 4096 bytes smem, 520 bytes "
	    "cumulative stack size\n"
	    "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
	    "ptxas info    : Function properties for gemm\n"
	    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	    "ptxas info    : Used 90 registers, used 1 barriers, 372 bytes cmem[0]\n"
	    "ptxas info    : Compile time = 26.760 ms\n";
	nvptx_parse_ptxas_log(c->al, log, k, 2);
	CHECK(k[0].stats && k[0].regs == 168 && k[0].barriers == 2 && k[0].static_smem == 4096);
	CHECK(k[0].stack == 520 && k[0].spill_stores == 748 && k[0].spill_loads == 752);
	CHECK_EQ(k[0].diags.len, 1);
	CHECK(k[0].diags.len == 1 && strstr(IR_VEC_AT(k[0].diags, char *, 0), "(C7508)"));
	CHECK(k[1].stats && k[1].regs == 90 && k[1].barriers == 1 && k[1].static_smem == 0);
	CHECK(k[1].spill_stores == 0 && k[1].diags.len == 0);
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < k[i].diags.len; j++)
			free(IR_VEC_AT(k[i].diags, char *, j));
		ir_vec_free(c->al, &k[i].diags, sizeof(char *));
	}
	/* ptxas is looked up on AVE_PTXAS first; a missing one is NULL, not a guess. */
	setenv("AVE_PTXAS", "/nonexistent/ptxas", 1);
	CHECK(nvptx_find_ptxas(NULL) == NULL);
	unsetenv("AVE_PTXAS");
}

/* ---- wgmma.wait_group counts ---- */

/* A random kernel of ave.mma.async, ave.mma and ave.mma.wait (on any product in scope, any
 * pending(0..3)) in nested loops (0 to 2 trips) and branches. */
typedef struct {
	char buf[1 << 16];
	size_t n;
	uint32_t seed;
	int nval, ntok, scope[256];
} Gen;

static uint32_t
rnd(uint32_t *s, uint32_t n)
{
	*s = *s * 1664525u + 1013904223u;
	return (*s >> 8) % n;
}

static void
emit(Gen *g, int depth, const char *fmt, ...)
{
	g->n += (size_t)snprintf(g->buf + g->n, sizeof g->buf - g->n, "%*s", 2 * depth + 2, "");
	va_list ap;
	va_start(ap, fmt);
	g->n += (size_t)vsnprintf(g->buf + g->n, sizeof g->buf - g->n, fmt, ap);
	va_end(ap);
}

#define TILE "!ave.tile<64x64xf32, reg>"

static void
gen_body(Gen *g, int depth, int len)
{
	int base = g->ntok;
	for (int i = 0; i < len && g->n < sizeof g->buf - 4096; i++) {
		uint32_t k = rnd(&g->seed, depth < 3 ? 10 : 8);
		if (k < 3) {
			emit(g, depth,
			     "%%t%d = ave.mma.async %%sa, %%sa, %%z transpose_b : " TILE "\n",
			     g->nval);
			g->scope[g->ntok++] = g->nval++;
		} else if (k < 4) {
			emit(g, depth, "%%v%d = ave.mma %%sa, %%sa, %%z transpose_b : " TILE "\n",
			     g->nval++);
		} else if (k < 8) {
			if (!g->ntok)
				continue;
			int t = g->scope[rnd(&g->seed, (uint32_t)g->ntok)];
			emit(g, depth, "%%v%d = ave.mma.wait %%t%d pending(%u) : " TILE "\n",
			     g->nval++, t, rnd(&g->seed, 4));
		} else if (k < 9) {
			emit(g, depth, "ave.for %%i%d = 0 to %u step 1 {\n", g->nval++,
			     rnd(&g->seed, 3));
			gen_body(g, depth + 1, 1 + (int)rnd(&g->seed, 5));
			emit(g, depth, "}\n");
		} else {
			emit(g, depth, "ave.if %%p {\n");
			gen_body(g, depth + 1, 1 + (int)rnd(&g->seed, 4));
			emit(g, depth, "} else {\n");
			gen_body(g, depth + 1, (int)rnd(&g->seed, 3));
			emit(g, depth, "}\n");
		}
	}
	g->ntok = base; /* this body's products are out of scope after it */
}

static bool
every_mma(void *u, IrOp *op)
{
	(void)u;
	return op->code == IR_OP_MMA || op->code == IR_OP_MMA_ASYNC;
}

/* Runs a block as a thread would (each branch taken at random), numbering the groups committed.
 * At each wait the count must keep to `pending` and leave the waited product finished: no more
 * than the groups committed since its latest issue. Where only ops without regions separate the
 * product from its wait in one block, the count must be exactly the smaller of the two. */
typedef struct {
	IrCtx *c;
	IrOp *op[512];
	int64_t seq[512];
	int nop;
	int64_t groups;
	uint32_t seed;
	int waits, exact, bad;
} Exec;

static int64_t *
seq_of(Exec *x, IrOp *op)
{
	for (int i = 0; i < x->nop; i++)
		if (x->op[i] == op)
			return &x->seq[i];
	x->op[x->nop] = op;
	return &x->seq[x->nop++];
}

static void
exec_wait(Exec *x, IrOp *w)
{
	IrOp *t = ir_item_value(w, &w->item[0])->op;
	int64_t after = x->groups - *seq_of(x, t), p = -1;
	ir_expr_eval_const(ir_op_group(w, x->c->kw.pending)->item[0].e, &p);
	int64_t n = nvptx_wait_groups(w, p, every_mma, NULL);
	bool plain = t->parent == w->parent;
	for (IrOp *q = t->next; plain && q != w; q = q->next)
		plain = !q->nreg;
	int64_t want = after < p ? after : p;
	x->waits++;
	x->exact += plain;
	if (n < 0 || n > p || n > after || (plain && n != want)) {
		if (!x->bad++)
			fprintf(stderr,
			        "wait at line %u: wait_group %lld, pending(%lld), %lld groups "
			        "after the product%s\n",
			        w->loc.line, (long long)n, (long long)p, (long long)after,
			        plain ? " (straight line)" : "");
	}
}

static void
exec_block(Exec *x, IrBlock *b)
{
	for (IrOp *op = b->first; op; op = op->next) {
		if (op->code == IR_OP_MMA_ASYNC) {
			*seq_of(x, op) = ++x->groups;
		} else if (op->code == IR_OP_MMA) {
			++x->groups;
		} else if (op->code == IR_OP_MMA_WAIT) {
			exec_wait(x, op);
		} else if (op->code == IR_OP_FOR) {
			int64_t n = 0;
			ir_expr_eval_const(op->item[1].e, &n);
			for (int64_t i = 0; i < n; i++)
				exec_block(x, op->reg[0].block);
		} else if (op->code == IR_OP_IF) {
			exec_block(x, op->reg[rnd(&x->seed, (uint32_t)op->nreg)].block);
		}
	}
}

static void
test_wait_groups(IrCtx *c)
{
	static Gen g;
	int waits = 0, exact = 0, bad = 0;
	for (uint32_t prog = 0; prog < 300; prog++) {
		memset(&g, 0, sizeof g);
		g.seed = prog * 7919u + 1;
		g.n = (size_t)snprintf(
		    g.buf, sizeof g.buf,
		    "ave.kernel @k(%%p: i1) {threads = 128, target = \"sm_90a\"} {\n"
		    "  %%sa = ave.smem.alloc : !ave.tile<64x64xbf16, smem, "
		    "#ave.smem<swizzle = 128, order = [1, 0]>>\n"
		    "  %%z = ave.zeros : " TILE "\n");
		gen_body(&g, 0, 4 + (int)rnd(&g.seed, 12));
		emit(&g, 0, "ave.return\n}\n");
		IrModule *m = fe_parse(c, "waits.ave", g.buf, g.n, 1);
		CHECK(m && ir_verify(m));
		if (!m)
			continue;
		for (int run = 0; run < 4; run++) {
			Exec x = {.c = c, .seed = prog * 31u + (uint32_t)run};
			exec_block(&x, m->body->first->reg[0].block);
			waits += x.waits;
			exact += x.exact;
			bad += x.bad;
			if (x.bad)
				fprintf(stderr, "in program %u:\n%s", prog, g.buf);
		}
		ir_module_free(m);
	}
	CHECK_EQ(bad, 0);
	CHECK(waits > 1000 && exact > 100); /* the programs exercise both kinds of wait */
}

int
main(void)
{
	IrCtx *c = ir_ctx_new(NULL);
	test_atoms();
	test_plans(c);
	test_log(c);
	test_wait_groups(c);
	ir_ctx_free(c);
	return unit_summary();
}
