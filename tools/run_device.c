/* run_device.c — `ave run` on a device through the public API: values from --arg (the
 * interpreter's value syntax: .npy files, rand:, zeros:, literals) become device buffers, the
 * kernel is launched and timed, and --out tensors are written back as .npy. */
#include <stdlib.h>
#include <string.h>

#include "../runtime/rt.h"
#include "run.h"

void
run_print_diag(AveDiagnostic d, void *ud)
{
	RunDiag *rd = ud;
	char buf[8192];
	size_t n = aveDiagnosticFormat(d, 0, buf, sizeof buf);
	n = n < sizeof buf ? n : sizeof buf - 1;
	rd->nerrors += aveDiagnosticGetSeverity(d) == AVE_SEVERITY_ERROR;
	rd->nwarnings += aveDiagnosticGetSeverity(d) == AVE_SEVERITY_WARNING;
	/* A diagnostic without a location names the tool, not a file. */
	const char *p = buf;
	if (!strncmp(buf, "<unknown>: ", 11)) {
		fprintf(stderr, "%s: ", rd->tool);
		p += 11;
		n -= 11;
	}
	fwrite(p, 1, n, stderr);
}

void
run_report_interp(const char *tool, const InterpStats *s, const int64_t grid[3], uint64_t seed,
		  int asked, bool ok, bool print_stats)
{
	int64_t ncta = 1;
	for (int d = 0; d < 3; d++)
		if (__builtin_mul_overflow(ncta, grid[d], &ncta))
			ncta = INT64_MAX;
	FILE *f = print_stats ? stdout : s->seconds > 10 ? stderr : NULL;
	if (f) {
		fprintf(f,
			"%s: %d schedule%s, %lld CTA%s (%lld per schedule), %lld tasks, %lld ops, "
			"%lld async copies, %lld MMA MACs, %.3f s",
			tool, s->schedules, s->schedules == 1 ? "" : "s", (long long)s->ctas,
			s->ctas == 1 ? "" : "s", (long long)ncta, (long long)s->tasks, (long long)s->ops,
			(long long)s->copies, (long long)s->macs, s->seconds);
		if (s->macs && s->seconds > 0)
			fprintf(f, " (%.2f GMAC/s)", (double)s->macs / s->seconds * 1e-9);
		fputc('\n', f);
		fflush(f);
	}
	if (ok && s->schedules > 1)
		fprintf(stderr, "%s: %d schedules (seeds %llu to %llu) agree\n", tool, s->schedules,
			(unsigned long long)seed,
			(unsigned long long)(seed + (uint64_t)s->schedules - 1));
	if (!ok && s->failed && asked > 1)
		fprintf(stderr,
			"%s: schedule with seed %llu failed (after %d that passed); replay it with "
			"--seed=%llu\n",
			tool, (unsigned long long)s->failed_seed, (int)(s->failed_seed - seed),
			(unsigned long long)s->failed_seed);
}

static IrType *
scalar_named(IrCtx *c, const char *s)
{
	IrType *all[] = {c->t_i1,  c->t_i8,  c->t_i16, c->t_i32, c->t_i64,    c->t_index,
			 c->t_f16, c->t_bf16, c->t_f32, c->t_f64, c->t_f8e4m3, c->t_f8e5m2};
	for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
		if (!strcmp(ir_type_str(c, all[i]), s))
			return all[i];
	return NULL;
}

bool
run_kernel_types(IrCtx *c, AveKernel k, IrType **types, const char **names)
{
	RtKernel *rk = k.ptr;
	for (int i = 0; i < rk->nargs; i++) {
		const RtArgInfo *a = &rk->args[i];
		IrType *e = scalar_named(c, a->type);
		if (!e) {
			fprintf(stderr, "ave: argument '%s' has an unknown type '%s'\n", a->name,
				a->type ? a->type : "?");
			return false;
		}
		names[i] = a->name;
		if (a->kind == AVE_ARG_TENSOR) {
			int64_t dims[IR_MAX_RANK], strides[IR_MAX_RANK];
			for (int d = 0; d < a->rank; d++) {
				dims[d] = a->dims[d] < 0 ? IR_DYN : a->dims[d];
				strides[d] = a->strides[d] < 0 ? IR_DYN : a->strides[d];
			}
			types[i] = ir_type_tensor(c, a->rank, dims, e, IR_SPACE_GLOBAL, strides);
		} else if (a->kind == AVE_ARG_POINTER) {
			types[i] = ir_type_ptr(c, e);
		} else {
			types[i] = e;
		}
	}
	return true;
}

#define TRY(call, what)                                                                  \
	do {                                                                             \
		AveResult r_ = (call);                                                   \
		if (r_) {                                                                \
			fprintf(stderr, "%s: %s failed: %s\n", r->tool, what, aveResultGetName(r_)); \
			goto fail;                                                       \
		}                                                                        \
	} while (0)

int
run_on_device(IrCtx *c, const RunRequest *r)
{
	int n = r->nargs, rc = 1;
	InterpValue *vals = calloc((size_t)n + 1, sizeof *vals);
	AveBuffer *bufs = calloc((size_t)n + 1, sizeof *bufs);
	AveArgs args = {NULL};
	AveDevice dev = {NULL};
	bool *used = calloc((size_t)r->nvalues + 1, 1);

	for (int i = 0; i < n; i++) {
		IrType *t = r->params ? r->params[i]->type : r->types[i];
		const char *name = r->params ? r->params[i]->name : r->names[i];
		const RunArg *a = NULL;
		for (int j = 0; j < r->nvalues; j++)
			if (name && !strcmp(r->args[j].name, name)) {
				a = &r->args[j];
				used[j] = true;
			}
		if (!a) {
			fprintf(stderr, "%s: no value for argument '%%%s' of type '%s' (give --arg "
				"%s=VALUE)\n", r->tool, name ? name : "?", ir_type_str(c, t), name ? name : "?");
			rc = 2;
			goto fail;
		}
		char err[512];
		if (!interp_value_parse(c, a->value, t, &vals[i], err, sizeof err)) {
			fprintf(stderr, "%s: --arg %s: %s\n", r->tool, a->name, err);
			rc = 2;
			goto fail;
		}
	}
	for (int j = 0; j < r->nvalues; j++)
		if (!used[j]) {
			fprintf(stderr, "%s: the kernel has no argument '%%%s'\n", r->tool, r->args[j].name);
			rc = 2;
			goto fail;
		}

	TRY(aveDeviceOpen(r->ctx, r->device, 0, &dev), "opening the device");
	/* The host explores interleavings of the IR, a simulated device those of the emitted code
	 * (seed 0 alone is its deterministic schedule). */
	bool simd = !strncmp(r->device, "sim-", 4);
	if ((!strcmp(r->device, "host") && r->schedules > 1) ||
	    (simd && (r->schedules > 1 || r->seed)))
		TRY(aveDeviceSetSchedules(dev, r->schedules, r->seed), "setting schedules");
	TRY(aveArgsCreate(&args), "aveArgsCreate");
	for (int i = 0; i < n; i++) {
		IrType *t = r->params ? r->params[i]->type : r->types[i];
		if (vals[i].arg.tensor) {
			const InterpTensor *x = &vals[i].arg.t;
			size_t bytes = (size_t)x->nelem * interp_elem_size(ir_type_elem(t));
			TRY(aveBufferCreate(dev, bytes, &bufs[i]), "allocating a buffer");
			TRY(aveBufferUpload(bufs[i], 0, x->data, bytes), "uploading an argument");
			TRY(aveArgsAddTensor(args, bufs[i], x->rank, x->dims, x->strides), "adding a tensor");
		} else if (ir_type_is_float(t)) {
			TRY(aveArgsAddFloat(args, vals[i].arg.f), "adding a scalar");
		} else {
			TRY(aveArgsAddInt(args, vals[i].arg.i), "adding a scalar");
		}
	}
	uint32_t grid[3] = {(uint32_t)r->grid[0], (uint32_t)r->grid[1], (uint32_t)r->grid[2]};
	double t0 = ir_now();
	AveResult launched = aveKernelLaunch(r->kernel, dev, grid, args, (AveStream){NULL});
	AveResult ran = launched ? AVE_SUCCESS : aveDeviceSynchronize(dev);
	double t1 = ir_now();
	/* The report comes before a failure's message: on the host it names the failing seed. */
	InterpStats st = {0};
	if (rt_host_last_stats(dev.ptr, &st))
		run_report_interp(r->tool, &st, r->grid, r->seed, r->schedules, !launched && !ran,
				  r->stats);
	else if (simd && r->schedules > 1 && !launched && !ran)
		fprintf(stderr, "%s: %d schedules of the emitted code (seeds %llu to %llu) agree\n",
			r->tool, r->schedules, (unsigned long long)r->seed,
			(unsigned long long)(r->seed + (uint64_t)r->schedules - 1));
	if (!rt_host_last_stats(dev.ptr, &st) && r->stats && !launched && !ran)
		printf("%s: %s on %s: %.3f ms (first launch + synchronize)\n", r->tool,
		       aveKernelGetName(r->kernel), aveDeviceGetName(dev), (t1 - t0) * 1e3);
	TRY(launched, "the launch");
	TRY(ran, "the kernel");
	if (r->repeat > 0) {
		/* Back-to-back launches, then one synchronize: the device's time per launch. */
		double s0 = ir_now();
		for (int i = 0; i < r->repeat; i++)
			TRY(aveKernelLaunch(r->kernel, dev, grid, args, (AveStream){NULL}), "the launch");
		TRY(aveDeviceSynchronize(dev), "the kernel");
		double per = (ir_now() - s0) / r->repeat;
		printf("%s: %s on %s: %.3f ms per launch over %d launches", r->tool,
		       aveKernelGetName(r->kernel), aveDeviceGetName(dev), per * 1e3, r->repeat);
		if (r->flops > 0)
			printf(", %.1f TFLOP/s", r->flops / per * 1e-12);
		printf("\n");
	}
	for (int j = 0; j < r->nouts; j++) {
		int i = 0;
		const char *name = NULL;
		for (; i < n; i++) {
			name = r->params ? r->params[i]->name : r->names[i];
			if (name && !strcmp(name, r->outs[j].name))
				break;
		}
		if (i == n || !vals[i].arg.tensor) {
			fprintf(stderr, "%s: --out %s: the kernel has no tensor argument '%%%s'\n",
				r->tool, r->outs[j].name, r->outs[j].name);
			rc = 2;
			goto fail;
		}
		IrType *t = r->params ? r->params[i]->type : r->types[i];
		InterpTensor *x = &vals[i].arg.t;
		size_t bytes = (size_t)x->nelem * interp_elem_size(ir_type_elem(t));
		TRY(aveBufferDownload(bufs[i], 0, x->data, bytes), "downloading a result");
		char err[512];
		if (!interp_npy_write(r->outs[j].value, ir_type_elem(t), x->rank, x->dims, x->data, err,
				      sizeof err)) {
			fprintf(stderr, "%s: --out %s: %s\n", r->tool, r->outs[j].name, err);
			goto fail;
		}
	}
	rc = 0;
fail:
	aveArgsDestroy(args);
	for (int i = 0; i < n; i++) {
		aveBufferDestroy(bufs[i]);
		interp_value_free(&vals[i]);
	}
	aveDeviceClose(dev);
	free(bufs);
	free(vals);
	free(used);
	return rc;
}
