/* api.c — ave-interp-api: the interpreter's C API as the JIT library will use it: a kernel
 * parsed from text, launched on caller-owned buffers (one of them a strided view), scalars,
 * schedules and stats, errors through the context's handler, and two launches in separate
 * contexts running at the same time on two threads. */
#include <pthread.h>
#include <string.h>

#include "../unit/unit.h"
#include "frontend.h"
#include "interp.h"

static const char src[] =
    "ave.kernel @axpy(%x: !ave.tensor<?x?xf32, global, [?, 1]>,\n"
    "                 %y: !ave.tensor<?x?xf32, global, [?, 1]>, %a: f32) {threads = 32} {\n"
    "  %p = ave.program_id dim(0) : index\n"
    "  %u = ave.load %x[%p * 4, 0] : !ave.tile<4x4xf32, reg>\n"
    "  %v = ave.load %y[%p * 4, 0] : !ave.tile<4x4xf32, reg>\n"
    "  %w = ave.fma %u, %a, %v : !ave.tile<4x4xf32, reg>\n"
    "  ave.store %w into(%y[%p * 4, 0])\n"
    "  ave.return\n"
    "}\n";

typedef struct Errors {
	int n;
	char last[512];
} Errors;

static void
collect(void *ud, const IrDiag *d)
{
	Errors *e = ud;
	if (d->sev == IR_SEV_ERROR) {
		e->n++;
		snprintf(e->last, sizeof e->last, "%s", d->msg);
	}
}

static InterpArg
tensor(float *data, int64_t nelem, int64_t rows, int64_t cols, int64_t stride)
{
	InterpArg a = {.tensor = true};
	a.t.data = data;
	a.t.nelem = nelem;
	a.t.rank = 2;
	a.t.dims[0] = rows;
	a.t.dims[1] = cols;
	a.t.strides[0] = stride;
	a.t.strides[1] = 1;
	return a;
}

/* y = a * x + y on 8x4 matrices, x read through a view with row stride 6 (padding columns) */
static int
axpy(int schedules, Errors *e, bool wrong_elem, int world)
{
	IrCtx *c = ir_ctx_new(NULL);
	ir_diag_set_handler(c, collect, e);
	IrModule *m = fe_parse(c, "axpy.ave", src, sizeof src - 1, 1);
	int bad = 0;
	if (!m || !ir_verify(m))
		return 1000;
	float x[8 * 6], y[8 * 4];
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 6; j++)
			x[i * 6 + j] = j < 4 ? (float)(i * 4 + j) : -1000.0f;
	for (int i = 0; i < 32; i++)
		y[i] = 1.0f;
	InterpArg args[3] = {tensor(x, 48, 8, 4, 6), tensor(y, 32, 8, 4, 4), {.f = 0.5}};
	if (wrong_elem)
		args[0].t.elem = c->t_f64;
	InterpLaunch l = {.kernel = interp_find_kernel(m, "@axpy"),
	                  .grid = {2, 1, 1},
	                  .args = args,
	                  .nargs = 3,
	                  .world_size = world};
	InterpOptions o = {.schedules = schedules, .seed = 5};
	InterpStats st;
	if (!interp_run(m, &l, &o, &st)) {
		bad = -1;
	} else {
		for (int i = 0; i < 32; i++)
			bad += y[i] != 1.0f + 0.5f * (float)i;
		bad += st.schedules != schedules || st.ctas != 2 * schedules || st.failed;
	}
	ir_module_free(m);
	ir_ctx_free(c);
	return bad;
}

static void *
thread_main(void *arg)
{
	Errors e = {0};
	*(int *)arg = axpy(3, &e, false, 1) + e.n;
	return NULL;
}

int
main(void)
{
	Errors e = {0};
	CHECK_EQ(axpy(1, &e, false, 1), 0);
	CHECK_EQ(axpy(4, &e, false, 0), 0);
	CHECK_EQ(e.n, 0);

	CHECK_EQ(axpy(1, &e, true, 1), -1);
	CHECK_EQ(e.n, 1);
	CHECK(strstr(e.last, "argument '%x' of type '!ave.tensor<?x?xf32, global, [?, 1]>' holds "
	                     "'f32', the array 'f64'") != NULL);

	CHECK_EQ(axpy(1, &e, false, 2), -1);
	CHECK(strstr(e.last, "a launch on 2 ranks runs with all of them (interp_run_world)") !=
	      NULL);

	pthread_t th[2];
	int res[2] = {-7, -7};
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, thread_main, &res[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(res[0], 0);
	CHECK_EQ(res[1], 0);
	return unit_summary();
}
