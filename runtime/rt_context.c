/* rt_context.c — contexts, result names, and diagnostics: IR diagnostics and runtime errors
 * reach the user's handler as AveDiagnostic handles (borrowed for the call). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt.h"

typedef struct RtDiag {
	IrCtx *ir;        /* for file names; NULL for runtime errors */
	const IrDiag *d;
	struct RtDiag *notes;
	int nentries;     /* counterexample entries */
	const char *keys[64], *vals[64];
} RtDiag;

const char *
aveGetVersion(void)
{
	return AVE_VERSION;
}

const char *
aveResultGetName(AveResult r)
{
	static const char *const names[AVE_RESULT_COUNT] = {
		"AVE_SUCCESS",          "AVE_ERROR_INVALID_ARGUMENT", "AVE_ERROR_PARSE",
		"AVE_ERROR_VERIFY",     "AVE_ERROR_CHECK",            "AVE_ERROR_COMPILE",
		"AVE_ERROR_UNSUPPORTED", "AVE_ERROR_NOT_FOUND",       "AVE_ERROR_DEVICE",
		"AVE_ERROR_OUT_OF_MEMORY", "AVE_ERROR_LAUNCH",        "AVE_ERROR_RUNTIME",
		"AVE_ERROR_IO"};
	return (unsigned)r < AVE_RESULT_COUNT ? names[r] : "AVE_ERROR_UNKNOWN";
}

static void
default_handler(AveDiagnostic d, void *ud)
{
	(void)ud;
	char buf[4096];
	size_t n = aveDiagnosticFormat(d, 0, buf, sizeof buf);
	fwrite(buf, 1, n < sizeof buf ? n : sizeof buf - 1, stderr);
}

static void
view(RtDiag *v, IrCtx *ir, const IrDiag *d)
{
	memset(v, 0, sizeof *v);
	v->ir = ir;
	v->d = d;
	if (d->cex) {
		for (int i = 0; i < d->cex->nvar && v->nentries < 58; i++) {
			v->keys[v->nentries] = d->cex->var[i].name;
			v->vals[v->nentries++] = d->cex->var[i].value;
		}
		const char *k[] = {"role", "slot", "found", "expected", "culprit"};
		const char *x[] = {d->cex->role, d->cex->slot, d->cex->found, d->cex->expected,
				   d->cex->culprit};
		for (int i = 0; i < 5; i++)
			if (x[i]) {
				v->keys[v->nentries] = k[i];
				v->vals[v->nentries++] = x[i];
			}
	}
}

/* The calling thread's last error (aveGetLastError): `text` is written by every error, `out`
 * holds what the last aveGetLastError returned. */
static _Thread_local char last_text[2048], last_out[2048];
static _Thread_local bool last_set;

static void
set_last_error(const char *msg)
{
	snprintf(last_text, sizeof last_text, "%s", msg);
	last_set = true;
}

const char *
aveGetLastError(void)
{
	if (!last_set)
		return NULL;
	memcpy(last_out, last_text, sizeof last_out);
	last_set = false;
	return last_out;
}

void
rt_ctx_retain(RtCtx *c)
{
	pthread_mutex_lock(&c->mu);
	c->refs++;
	pthread_mutex_unlock(&c->mu);
}

void
rt_ctx_release(RtCtx *c)
{
	pthread_mutex_lock(&c->mu);
	int n = --c->refs;
	pthread_mutex_unlock(&c->mu);
	if (n)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static void
deliver(RtCtx *c, IrCtx *ir, const IrDiag *d)
{
	if (d->sev == IR_SEV_ERROR)
		set_last_error(d->msg);
	RtDiag v;
	view(&v, ir, d);
	RtDiag *notes = d->nnote ? calloc((size_t)d->nnote, sizeof *notes) : NULL;
	for (int i = 0; i < d->nnote; i++)
		view(&notes[i], ir, &d->note[i]);
	v.notes = notes;
	AveDiagnostic h = {&v};
	pthread_mutex_lock(&c->mu);
	AveDiagnosticHandler fn = c->destroyed ? NULL : c->handler ? c->handler : default_handler;
	void *ud = c->handler_ud;
	pthread_mutex_unlock(&c->mu);
	if (fn)
		fn(h, ud);
	free(notes);
}

typedef struct IrBridge {
	RtCtx *c;
	IrCtx *ir;
	FILE *rec; /* rt_ir_ctx_record: the warnings and remarks so far, as JSON */
	char *rec_buf;
	size_t rec_len;
	int nrec;
} IrBridge;

static void
bridge_handler(void *ud, const IrDiag *d)
{
	IrBridge *b = ud;
	if (b->rec && (d->sev == IR_SEV_WARNING || d->sev == IR_SEV_REMARK)) {
		fputs(b->nrec++ ? ", " : "", b->rec);
		ir_diag_print_json(b->ir, d, b->rec);
	}
	if (d->sev == IR_SEV_REMARK && !b->c->remarks)
		return;
	deliver(b->c, b->ir, d);
}

void
rt_ir_ctx_record(IrCtx *ir)
{
	IrBridge *b = ir->handler == bridge_handler ? ir->handler_ud : NULL;
	if (b && !b->rec)
		b->rec = open_memstream(&b->rec_buf, &b->rec_len);
}

char *
rt_ir_ctx_recorded(IrCtx *ir)
{
	IrBridge *b = ir->handler == bridge_handler ? ir->handler_ud : NULL;
	if (!b || !b->rec)
		return NULL;
	fflush(b->rec);
	size_t n = b->rec_len + 3;
	char *out = malloc(n);
	snprintf(out, n, "[%s]", b->rec_buf ? b->rec_buf : "");
	return out;
}

IrCtx *
rt_ir_ctx(RtCtx *c)
{
	IrCtx *ir = ir_ctx_new(NULL);
	IrBridge *b = calloc(1, sizeof *b);
	rt_ctx_retain(c);
	b->c = c;
	b->ir = ir;
	ir_diag_set_handler(ir, bridge_handler, b);
	return ir;
}

void
rt_ir_ctx_free(IrCtx *ir)
{
	if (!ir)
		return;
	IrBridge *b = ir->handler == bridge_handler ? ir->handler_ud : NULL;
	ir_ctx_free(ir);
	if (b && b->rec) {
		fclose(b->rec);
		free(b->rec_buf);
	}
	if (b) {
		rt_ctx_release(b->c);
		free(b);
	}
}

bool
rt_dlsym(void *lib, const char *name, void *fp)
{
	void *p = dlsym(lib, name);
	memcpy(fp, &p, sizeof p);
	return p != NULL;
}

void
rt_error(RtCtx *c, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	IrDiag d;
	memset(&d, 0, sizeof d);
	d.sev = IR_SEV_ERROR;
	d.code = "runtime";
	d.msg = msg;
	deliver(c, NULL, &d);
}

AveResult
rt_misuse(RtCtx *c, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c)
		rt_error(c, "%s", msg);
	else
		set_last_error(msg);
	return AVE_ERROR_INVALID_ARGUMENT;
}

/* ---- public: contexts ---- */

AveResult
aveContextCreate(AveContext *out)
{
	if (!out)
		return rt_misuse(NULL, "aveContextCreate: 'out' is null");
	RtCtx *c = calloc(1, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	c->refs = 1;
	char *dir = rt_cache_default_dir();
	rt_cache_init(&c->cache, dir);
	free(dir);
	out->ptr = c;
	return AVE_SUCCESS;
}

void
aveContextDestroy(AveContext h)
{
	RtCtx *c = h.ptr;
	if (!c)
		return;
	/* Kernels and devices may still hold it: they keep the struct, not the handler (its user
	 * data may be gone) or the cache (only compiles, on modules already destroyed, use it). */
	pthread_mutex_lock(&c->mu);
	c->destroyed = true;
	c->handler = NULL;
	c->handler_ud = NULL;
	pthread_mutex_unlock(&c->mu);
	rt_cache_free(&c->cache);
	rt_ctx_release(c);
}

void
aveContextSetDiagnosticHandler(AveContext h, AveDiagnosticHandler fn, void *ud)
{
	RtCtx *c = h.ptr;
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->handler = fn;
	c->handler_ud = ud;
	pthread_mutex_unlock(&c->mu);
}

void
aveContextSetRemarks(AveContext h, int enable)
{
	RtCtx *c = h.ptr;
	if (c)
		c->remarks = enable != 0;
}

AveResult
aveContextSetCacheDir(AveContext h, const char *dir)
{
	RtCtx *c = h.ptr;
	if (!c)
		return rt_misuse(NULL, "aveContextSetCacheDir: the context is null");
	/* A directory, or a path to create one at; not "" and not an existing file. */
	struct stat sb;
	if (dir && (!*dir || (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)))) {
		rt_error(c, "cache directory '%s' is %s", dir,
			 *dir ? "not a directory" : "an empty path");
		return AVE_ERROR_INVALID_ARGUMENT;
	}
	rt_cache_set_dir(&c->cache, dir);
	return AVE_SUCCESS;
}

void
aveContextGetCacheStats(AveContext h, uint64_t *mem, uint64_t *disk, uint64_t *miss,
			uint64_t *corrupt)
{
	RtCtx *c = h.ptr;
	RtCacheStats s = {0, 0, 0, 0};
	if (c) {
		pthread_mutex_lock(&c->cache.mu);
		s = c->cache.stats;
		pthread_mutex_unlock(&c->cache.mu);
	}
	if (mem)
		*mem = s.memory_hits;
	if (disk)
		*disk = s.disk_hits;
	if (miss)
		*miss = s.misses;
	if (corrupt)
		*corrupt = s.corrupt;
}

/* ---- public: diagnostics ---- */

/* A null diagnostic handle reads as an empty diagnostic. */
static const IrDiag *
D(AveDiagnostic h)
{
	static const IrDiag empty = {.msg = (char *)""};
	return h.ptr ? ((RtDiag *)h.ptr)->d : &empty;
}

AveSeverity
aveDiagnosticGetSeverity(AveDiagnostic h)
{
	return (AveSeverity)D(h)->sev;
}

const char *
aveDiagnosticGetMessage(AveDiagnostic h)
{
	return D(h)->msg;
}

const char *
aveDiagnosticGetCode(AveDiagnostic h)
{
	return D(h)->code ? D(h)->code : "";
}

const char *
aveDiagnosticGetFile(AveDiagnostic h)
{
	RtDiag *v = h.ptr;
	if (!v || !v->ir || !v->d->loc.file)
		return "";
	return ir_ctx_file(v->ir, v->d->loc.file)->name;
}

unsigned
aveDiagnosticGetLine(AveDiagnostic h)
{
	return D(h)->loc.line;
}

unsigned
aveDiagnosticGetColumn(AveDiagnostic h)
{
	return D(h)->loc.col;
}

int
aveDiagnosticGetNumNotes(AveDiagnostic h)
{
	return D(h)->nnote;
}

AveDiagnostic
aveDiagnosticGetNote(AveDiagnostic h, int i)
{
	RtDiag *v = h.ptr;
	AveDiagnostic n = {NULL};
	if (v && i >= 0 && i < v->d->nnote && v->notes)
		n.ptr = &v->notes[i];
	return n;
}

int
aveDiagnosticGetNumCounterexampleEntries(AveDiagnostic h)
{
	return h.ptr ? ((RtDiag *)h.ptr)->nentries : 0;
}

const char *
aveDiagnosticGetCounterexampleKey(AveDiagnostic h, int i)
{
	RtDiag *v = h.ptr;
	return v && i >= 0 && i < v->nentries ? v->keys[i] : NULL;
}

const char *
aveDiagnosticGetCounterexampleValue(AveDiagnostic h, int i)
{
	RtDiag *v = h.ptr;
	return v && i >= 0 && i < v->nentries ? v->vals[i] : NULL;
}

size_t
aveDiagnosticFormat(AveDiagnostic h, int json, char *buf, size_t size)
{
	RtDiag *v = h.ptr;
	if (!v) {
		if (buf && size)
			buf[0] = 0;
		return 0;
	}
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return 0;
	if (v->ir) {
		if (json)
			ir_diag_print_json(v->ir, v->d, f);
		else
			ir_diag_print_text(v->ir, v->d, f, false);
	} else if (json) {
		fputs("{\"file\":\"\",\"line\":0,\"col\":0,\"severity\":\"error\",\"code\":", f);
		ir_json_str(f, v->d->code ? v->d->code : "runtime");
		fputs(",\"message\":", f);
		ir_json_str(f, v->d->msg);
		fputs(",\"notes\":[]}\n", f);
	} else {
		fprintf(f, "error: %s\n", v->d->msg);
	}
	fclose(f);
	if (size) {
		size_t k = n < size - 1 ? n : size - 1;
		memcpy(buf, text, k);
		buf[k] = 0;
	}
	free(text);
	return n;
}
