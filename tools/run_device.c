/* run_device.c — `ave run` on a device through the public API: values from --arg (the
 * interpreter's value syntax: .npy files, rand:, zeros:, literals) become device buffers, the
 * kernel is launched and timed, and --out tensors are written back as .npy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/rt.h"
#include "run.h"

/* `v` with every "{r}" replaced by rank q (malloc'd). */
char *
run_subst_rank(const char *v, int q)
{
	size_t n = strlen(v) + 1;
	for (const char *p = strstr(v, "{r}"); p; p = strstr(p + 3, "{r}"))
		n += 8;
	char *out = malloc(n), *d = out;
	while (*v) {
		if (!strncmp(v, "{r}", 3)) {
			d += sprintf(d, "%d", q);
			v += 3;
		} else {
			*d++ = *v++;
		}
	}
	*d = 0;
	return out;
}

/* Where --out FILE goes for rank q: '{r}' replaced, else FILE.rankQ.npy when there are ranks. */
char *
run_out_path(const char *v, int q, int world)
{
	if (strstr(v, "{r}") || world == 1)
		return run_subst_rank(v, q);
	size_t n = strlen(v);
	bool npy = n >= 4 && !strcmp(v + n - 4, ".npy");
	char *out = malloc(n + 24);
	sprintf(out, "%.*s.rank%d%s", (int)(npy ? n - 4 : n), v, q, npy ? ".npy" : "");
	return out;
}

/* The --arg or --out for NAME ("%x" as "x", a buffer as "@S") on rank q: NAME@q, else NAME. */
RunArg *
run_find_named(RunArg *a, int n, const char *name, int q)
{
	size_t len = strlen(name), l;
	long rank;
	for (int j = 0; j < n; j++)
		if (run_split_rank(a[j].name, &l, &rank) && rank == q && l == len &&
		    !strncmp(a[j].name, name, len))
			return &a[j];
	for (int j = 0; j < n; j++)
		if (!strcmp(a[j].name, name))
			return &a[j];
	return NULL;
}

/* Splits "NAME@R" into NAME (len) and R; R = -1 without a rank. False when R is not a number. */
bool
run_split_rank(const char *name, size_t *len, long *rank)
{
	const char *at = strrchr(name, '@');
	*len = strlen(name);
	*rank = -1;
	if (!at || at == name)
		return true;
	char *e;
	errno = 0;
	long r = strtol(at + 1, &e, 10);
	if (e == at + 1 || *e || errno || r < 0)
		return false;
	*len = (size_t)(at - name);
	*rank = r;
	return true;
}

void
run_print_diag(AveDiagnostic d, void *ud)
{
	RunDiag *rd = ud;
	char buf[8192];
	size_t n = aveDiagnosticFormat(d, 0, buf, sizeof buf);
	n = n < sizeof buf ? n : sizeof buf - 1;
	rd->nerrors += aveDiagnosticGetSeverity(d) == AVE_SEVERITY_ERROR;
	rd->nwarnings += aveDiagnosticGetSeverity(d) == AVE_SEVERITY_WARNING;
	/* A diagnostic without a location names the tool. */
	if (!*aveDiagnosticGetFile(d))
		fprintf(stderr, "%s: ", rd->tool);
	fwrite(buf, 1, n, stderr);
}

void
run_report_interp(const char *tool, const InterpStats *s, const int64_t grid[3], uint64_t seed,
		  int asked, bool ok, bool print_stats)
{
	int64_t ncta = 1;
	for (int d = 0; d < 3; d++)
		if (__builtin_mul_overflow(ncta, grid[d], &ncta))
			ncta = INT64_MAX;
	/* Nothing to say of a launch that failed before any CTA ran. */
	FILE *f = !ok && !s->ctas ? NULL : print_stats ? stdout : s->seconds > 10 ? stderr : NULL;
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


/* Whether a call succeeded; if not, says which step failed. */
static bool
tried(const RunRequest *r, AveResult res, const char *what)
{
	if (res)
		fprintf(stderr, "%s: %s failed: %s\n", r->tool, what, aveResultGetName(res));
	return !res;
}

#define TRY(call, what)                                                                  \
	do {                                                                             \
		if (!tried(r, (call), what))                                             \
			goto fail;                                                       \
	} while (0)

/* Opens the request's device, with its schedules where it runs them: the host explores
 * interleavings of the IR, a simulated device those of the emitted code (seed 0 alone is its
 * deterministic schedule). */
static bool
open_device(const RunRequest *r, AveDevice *dev)
{
	if (!tried(r, aveDeviceOpen(r->ctx, r->device, 0, dev), "opening the device"))
		return false;
	if ((!strcmp(r->device, "host") && r->schedules > 1) ||
	    (!strncmp(r->device, "sim-", 4) && (r->schedules > 1 || r->seed)))
		return tried(r, aveDeviceSetSchedules(*dev, r->schedules, r->seed), "setting schedules");
	return true;
}

/* The argument list of the values vals (the kernel's r->nargs arguments), each tensor uploaded
 * into a buffer of its own (bufs[i]). */
static bool
make_args(const RunRequest *r, AveDevice dev, const InterpValue *vals, AveBuffer *bufs,
	  AveArgs *args)
{
	if (!tried(r, aveArgsCreate(args), "aveArgsCreate"))
		return false;
	for (int i = 0; i < r->nargs; i++) {
		IrType *t = r->params ? r->params[i]->type : r->types[i];
		bool ok;
		if (vals[i].arg.tensor) {
			const InterpTensor *x = &vals[i].arg.t;
			size_t bytes = (size_t)x->nelem * interp_elem_size(ir_type_elem(t));
			ok = tried(r, aveBufferCreate(dev, bytes, &bufs[i]), "allocating a buffer") &&
			     tried(r, aveBufferUpload(bufs[i], 0, x->data, bytes), "uploading an argument") &&
			     tried(r, aveArgsAddTensor(*args, bufs[i], x->rank, x->dims, x->strides),
				   "adding a tensor");
		} else if (ir_type_is_float(t)) {
			ok = tried(r, aveArgsAddFloat(*args, vals[i].arg.f), "adding a scalar");
		} else {
			ok = tried(r, aveArgsAddInt(*args, vals[i].arg.i), "adding a scalar");
		}
		if (!ok)
			return false;
	}
	return true;
}

/* The time per launch of --repeat (what: "launch", "world launch") and, with --flops, the
 * rate. */
static void
print_rate(const RunRequest *r, AveDevice dev, const char *ranks, const char *what, double per)
{
	printf("%s: %s on %s%s: %.3f ms per %s over %d launches", r->tool,
	       aveKernelGetName(r->kernel), aveDeviceGetName(dev), ranks, per * 1e3, what, r->repeat);
	if (r->flops > 0)
		printf(", %.1f TFLOP/s", r->flops / per * 1e-12);
	printf("\n");
}

/* The type of a symmetric buffer's record in the metadata ("symmetric"), or NULL. */
static IrType *
symm_type(IrCtx *c, const RtJson *rec)
{
	IrType *e = scalar_named(c, rt_json_str(rec, "type"));
	RtJson *dims = rt_json_get(rec, "dims"), *strides = rt_json_get(rec, "strides");
	int rank = (int)rt_json_int(rec, "rank", 0);
	if (!e || !dims || !strides || rank < 1 || rank > IR_MAX_RANK || dims->n != rank ||
	    strides->n != rank)
		return NULL;
	int64_t d[IR_MAX_RANK], st[IR_MAX_RANK];
	for (int i = 0; i < rank; i++) {
		d[i] = dims->items[i]->i;
		st[i] = strides->items[i]->i;
	}
	return ir_type_tensor(c, rank, d, e, IR_SPACE_SYMM, st);
}

/* Each --arg and --out names an argument or symmetric buffer (NAME or NAME@RANK, a rank of the
 * world). */
static bool
world_names(const RunRequest *r, RtJson *sl)
{
	for (int pass = 0; pass < 2; pass++) {
		const RunArg *a = pass ? r->outs : r->args;
		int n = pass ? r->nouts : r->nvalues;
		for (int j = 0; j < n; j++) {
			size_t len;
			long q;
			if (!run_split_rank(a[j].name, &len, &q) || q >= r->world) {
				fprintf(stderr, "%s: %s %s: expected NAME or NAME@RANK with a rank below %d\n",
					r->tool, pass ? "--out" : "--arg", a[j].name, r->world);
				return false;
			}
			bool known = false;
			for (int i = 0; i < r->nargs && !known; i++)
				known = r->names[i] && strlen(r->names[i]) == len &&
					!strncmp(r->names[i], a[j].name, len);
			for (int i = 0; a[j].name[0] == '@' && sl && i < sl->n && !known; i++) {
				const char *s = rt_json_str(sl->items[i], "symbol");
				known = s && strlen(s) == len - 1 && !strncmp(s, a[j].name + 1, len - 1);
			}
			if (!known) {
				fprintf(stderr, "%s: %s %s: the kernel has no %s '%.*s'\n", r->tool,
					pass ? "--out" : "--arg", a[j].name,
					a[j].name[0] == '@' ? "symmetric buffer" : "argument", (int)len,
					a[j].name);
				return false;
			}
		}
	}
	return true;
}

/* A world of ranks on the device (aveWorldLaunch): rank q's arguments from NAME@q or NAME
 * ('{r}' in a value is q), each symmetric buffer @S from '--arg @S=VALUE' (zeros otherwise),
 * --launches launches in a row, and --out per rank. */
static int
run_world(IrCtx *c, const RunRequest *r)
{
	int W = r->world, n = r->nargs, rc = 2;
	RtKernel *rk = r->kernel.ptr;
	RtJson *sl = rt_json_get(rk->rec, "symmetric");
	int ns = sl && sl->kind == RT_JSON_ARRAY ? sl->n : 0;
	InterpValue *vals = calloc((size_t)(W * n) + 1, sizeof *vals);
	AveBuffer *bufs = calloc((size_t)(W * n) + 1, sizeof *bufs);
	AveArgs *args = calloc((size_t)W, sizeof *args);
	IrType **stypes = calloc((size_t)ns + 1, sizeof *stypes);
	AveDevice dev = {NULL};
	AveWorld world = {NULL};
	RunArg *all = (RunArg *)r->args, *outs = (RunArg *)r->outs;
	if (!world_names(r, sl))
		goto fail;
	for (int i = 0; i < ns; i++)
		if (!(stypes[i] = symm_type(c, sl->items[i]))) {
			fprintf(stderr, "%s: malformed symmetric buffer %d in the kernel's metadata\n",
				r->tool, i);
			goto fail;
		}
	for (int q = 0; q < W; q++)
		for (int i = 0; i < n; i++) {
			IrType *t = r->params ? r->params[i]->type : r->types[i];
			const char *name = r->params ? r->params[i]->name : r->names[i];
			const RunArg *a = name ? run_find_named(all, r->nvalues, name, q) : NULL;
			if (!a) {
				fprintf(stderr, "%s: no value for argument '%%%s' of type '%s' on rank %d "
					"(give --arg %s=VALUE or %s@%d=VALUE)\n", r->tool, name ? name : "?",
					ir_type_str(c, t), q, name ? name : "?", name ? name : "?", q);
				goto fail;
			}
			char err[512], *v = run_subst_rank(a->value, q);
			bool ok = interp_value_parse(c, v, t, &vals[q * n + i], err, sizeof err);
			free(v);
			if (!ok) {
				fprintf(stderr, "%s: --arg %s: %s\n", r->tool, a->name, err);
				goto fail;
			}
		}
	rc = 1;
	if (!open_device(r, &dev))
		goto fail;
	TRY(aveWorldCreate(dev, W, &world), "making the world");
	for (int q = 0; q < W; q++) {
		if (!make_args(r, dev, vals + q * n, bufs + q * n, &args[q]))
			goto fail;
		for (int i = 0; i < ns; i++) {
			char name[256];
			snprintf(name, sizeof name, "@%s", rt_json_str(sl->items[i], "symbol"));
			const RunArg *a = run_find_named(all, r->nvalues, name, q);
			if (!a)
				continue;
			InterpValue sv = {0};
			char err[512], *v = run_subst_rank(a->value, q);
			bool ok = interp_value_parse(c, v, stypes[i], &sv, err, sizeof err);
			free(v);
			AveBuffer b;
			size_t bytes = ok ? (size_t)sv.arg.t.nelem * interp_elem_size(stypes[i]->elem) : 0;
			bool filled = false;
			if (!ok)
				fprintf(stderr, "%s: --arg %s: %s\n", r->tool, a->name, err);
			else if (aveWorldGetBuffer(world, r->kernel, name, q, &b) ||
				 bytes != aveBufferGetSize(b) || aveBufferUpload(b, 0, sv.arg.t.data, bytes))
				fprintf(stderr, "%s: --arg %s: cannot fill the buffer (%zu bytes)\n", r->tool,
					a->name, bytes);
			else
				filled = true;
			interp_value_free(&sv);
			if (!filled)
				goto fail;
		}
	}
	uint32_t grid[3] = {(uint32_t)r->grid[0], (uint32_t)r->grid[1], (uint32_t)r->grid[2]};
	double t0 = ir_now();
	for (int l = 0; l < (r->launches > 0 ? r->launches : 1); l++) {
		TRY(aveWorldLaunch(r->kernel, world, grid, args, (AveStream){NULL}), "the launch");
		TRY(aveDeviceSynchronize(dev), "the kernel");
	}
	if (r->stats)
		printf("%s: %s on %s, %d ranks: %.3f ms (%d launch%s)\n", r->tool,
		       aveKernelGetName(r->kernel), aveDeviceGetName(dev), W, (ir_now() - t0) * 1e3,
		       r->launches > 0 ? r->launches : 1, r->launches > 1 ? "es" : "");
	if (r->schedules > 1)
		fprintf(stderr, "%s: %d schedules (seeds %llu to %llu) agree\n", r->tool, r->schedules,
			(unsigned long long)r->seed,
			(unsigned long long)(r->seed + (uint64_t)r->schedules - 1));
	if (r->repeat > 0) {
		/* Back-to-back world launches (each an epoch), then one synchronize. */
		double s0 = ir_now();
		for (int i = 0; i < r->repeat; i++)
			TRY(aveWorldLaunch(r->kernel, world, grid, args, (AveStream){NULL}), "the launch");
		TRY(aveDeviceSynchronize(dev), "the kernel");
		char ranks[32];
		snprintf(ranks, sizeof ranks, ", %d ranks", W);
		print_rate(r, dev, ranks, "world launch", (ir_now() - s0) / r->repeat);
	}
	for (int j = 0; j < r->nouts; j++) {
		size_t len;
		long rank;
		run_split_rank(outs[j].name, &len, &rank);
		char base[256];
		snprintf(base, sizeof base, "%.*s", (int)len, outs[j].name);
		for (int q = 0; q < W; q++) {
			if ((rank >= 0 && rank != q) ||
			    (rank < 0 && run_find_named(outs, r->nouts, base, q) != &outs[j]))
				continue;
			const IrType *elem = NULL;
			int xr = 0;
			const int64_t *dims = NULL;
			void *data = NULL;
			size_t bytes = 0;
			AveBuffer b = {NULL};
			if (base[0] == '@') {
				for (int i = 0; i < ns; i++)
					if (!strcmp(rt_json_str(sl->items[i], "symbol"), base + 1)) {
						elem = stypes[i]->elem;
						xr = stypes[i]->rank;
						dims = stypes[i]->dims;
					}
				TRY(aveWorldGetBuffer(world, r->kernel, base, q, &b), "finding a buffer");
				bytes = aveBufferGetSize(b);
			} else {
				for (int i = 0; i < n; i++)
					if (r->names[i] && !strcmp(r->names[i], base) && vals[q * n + i].arg.tensor) {
						IrType *t = r->params ? r->params[i]->type : r->types[i];
						elem = ir_type_elem(t);
						xr = vals[q * n + i].arg.t.rank;
						dims = vals[q * n + i].arg.t.dims;
						b = bufs[q * n + i];
						bytes = (size_t)vals[q * n + i].arg.t.nelem * interp_elem_size(elem);
					}
				if (!b.ptr) {
					fprintf(stderr, "%s: --out %s: the kernel has no tensor argument '%%%s'\n",
						r->tool, outs[j].name, base);
					rc = 2;
					goto fail;
				}
			}
			data = malloc(bytes + 1);
			AveResult dl = aveBufferDownload(b, 0, data, bytes);
			char err[512], *path = run_out_path(outs[j].value, q, rank >= 0 ? 1 : W);
			bool ok = !dl && interp_npy_write(path, elem, xr, dims, data, err, sizeof err);
			if (!ok)
				fprintf(stderr, "%s: --out %s: %s\n", r->tool, outs[j].name,
					dl ? aveResultGetName(dl) : err);
			free(path);
			free(data);
			if (!ok)
				goto fail;
		}
	}
	rc = 0;
fail:
	for (int q = 0; q < W; q++)
		aveArgsDestroy(args[q]);
	for (int i = 0; i < W * n; i++) {
		aveBufferDestroy(bufs[i]);
		interp_value_free(&vals[i]);
	}
	aveWorldDestroy(world);
	aveDeviceClose(dev);
	free(stypes);
	free(args);
	free(bufs);
	free(vals);
	return rc;
}

int
run_on_device(IrCtx *c, const RunRequest *r)
{
	RtKernel *rk = r->kernel.ptr;
	if (r->world > 1 || rt_json_get(rk->rec, "symmetric"))
		return run_world(c, r);
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

	bool simd = !strncmp(r->device, "sim-", 4);
	if (!open_device(r, &dev) || !make_args(r, dev, vals, bufs, &args))
		goto fail;
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
		print_rate(r, dev, "", "launch", (ir_now() - s0) / r->repeat);
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
