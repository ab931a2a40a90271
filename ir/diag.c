/* diag.c — the diagnostics engine: building diagnostics with notes and counterexamples,
 * handing them to the context's handler, and rendering them as clang-style text or JSON. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

void
ir_diag_set_handler(IrCtx *c, IrDiagHandler h, void *ud)
{
	c->handler = h ? h : ir_diag_default_handler;
	c->handler_ud = h ? ud : c;
}

static void
drop(void *ud, const IrDiag *d)
{
	(void)ud;
	(void)d;
}

void
ir_diag_hold(IrCtx *c, IrDiagHold *s, IrDiagHandler h, void *ud)
{
	*s = (IrDiagHold){c->handler, c->handler_ud, c->nerrors, c->nwarnings, c->last_code};
	c->handler = h ? h : drop;
	c->handler_ud = ud;
}

void
ir_diag_release(IrCtx *c, const IrDiagHold *s)
{
	c->handler = s->h;
	c->handler_ud = s->ud;
	c->nerrors = s->nerrors;
	c->nwarnings = s->nwarnings;
	c->last_code = s->last_code;
}

char *
ir_ctx_strdup(IrCtx *c, const char *s)
{
	return ir_arena_strndup(&c->arena, s, strlen(s));
}

static char *
vfmt(IrCtx *c, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	char *s = ir_xalloc(c->al, (size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *
ir_ctx_printf(IrCtx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *tmp = vfmt(c, fmt, ap);
	va_end(ap);
	char *s = ir_ctx_strdup(c, tmp);
	ir_xfree(c->al, tmp, strlen(tmp) + 1);
	return s;
}

IrDiag *
ir_diag_beginv(IrCtx *c, IrSeverity sev, IrLoc loc, const char *fmt, va_list ap)
{
	IrDiag *d = ir_xalloc(c->al, sizeof *d);
	memset(d, 0, sizeof *d);
	d->sev = sev;
	d->loc = loc;
	d->code = c->code;
	d->msg = vfmt(c, fmt, ap);
	return d;
}

IrDiag *
ir_diag_begin(IrCtx *c, IrSeverity sev, IrLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	IrDiag *d = ir_diag_beginv(c, sev, loc, fmt, ap);
	va_end(ap);
	return d;
}

void
ir_diag_note(IrCtx *c, IrDiag *d, IrLoc loc, const char *fmt, ...)
{
	IrDiag *notes = ir_xalloc(c->al, sizeof *notes * (size_t)(d->nnote + 1));
	if (d->nnote)
		memcpy(notes, d->note, sizeof *notes * (size_t)d->nnote);
	ir_xfree(c->al, d->note, sizeof *notes * (size_t)d->nnote);
	d->note = notes;
	IrDiag *n = &d->note[d->nnote++];
	memset(n, 0, sizeof *n);
	n->sev = IR_SEV_NOTE;
	n->loc = loc;
	n->code = d->code;
	va_list ap;
	va_start(ap, fmt);
	n->msg = vfmt(c, fmt, ap);
	va_end(ap);
}

IrCex *
ir_diag_cex(IrCtx *c, IrDiag *d)
{
	if (!d->cex) {
		d->cex = ir_arena_alloc(&c->arena, sizeof *d->cex);
	}
	return d->cex;
}

void
ir_cex_var(IrCtx *c, IrCex *x, const char *name, const char *value)
{
	IrCexVar *v = ir_arena_alloc(&c->arena, sizeof *v * (size_t)(x->nvar + 1));
	if (x->nvar)
		memcpy(v, x->var, sizeof *v * (size_t)x->nvar);
	v[x->nvar].name = ir_ctx_strdup(c, name);
	v[x->nvar].value = ir_ctx_strdup(c, value);
	x->var = v;
	x->nvar++;
}

static void
release(IrCtx *c, IrDiag *d)
{
	for (int i = 0; i < d->nnote; i++)
		ir_xfree(c->al, d->note[i].msg, strlen(d->note[i].msg) + 1);
	ir_xfree(c->al, d->note, sizeof *d->note * (size_t)d->nnote);
	ir_xfree(c->al, d->msg, strlen(d->msg) + 1);
	ir_xfree(c->al, d, sizeof *d);
}

void
ir_diag_emit(IrCtx *c, IrDiag *d)
{
	if (d->sev == IR_SEV_ERROR) {
		c->nerrors++;
		c->last_code = d->code;
	}
	else if (d->sev == IR_SEV_WARNING)
		c->nwarnings++;
	c->handler(c->handler_ud, d);
	release(c, d);
}

#define EMIT(sev)                                                  \
	va_list ap;                                                \
	va_start(ap, fmt);                                         \
	IrDiag *d = ir_diag_beginv(c, sev, loc, fmt, ap);          \
	va_end(ap);                                                \
	ir_diag_emit(c, d)

void
ir_error(IrCtx *c, IrLoc loc, const char *fmt, ...)
{
	EMIT(IR_SEV_ERROR);
}

void
ir_warning(IrCtx *c, IrLoc loc, const char *fmt, ...)
{
	EMIT(IR_SEV_WARNING);
}

void
ir_remark(IrCtx *c, IrLoc loc, const char *fmt, ...)
{
	EMIT(IR_SEV_REMARK);
}

static const char *const sev_name[] = {"error", "warning", "note", "remark"};

/* Finds the text of line `line` (file numbering) in f; returns its length or -1. */
static int
source_line(const IrFile *f, uint32_t line, const char **start)
{
	if (!f->text || line < f->line0)
		return -1;
	const char *p = f->text, *end = f->text + f->len;
	for (uint32_t l = f->line0; l < line; l++) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return -1;
		p++;
	}
	const char *e = memchr(p, '\n', (size_t)(end - p));
	*start = p;
	return (int)((e ? e : end) - p);
}

static void
print_one(IrCtx *c, const IrDiag *d, FILE *out, bool color)
{
	const IrFile *f = ir_ctx_file(c, d->loc.file);
	static const char *const sev_color[] = {"\033[1;31m", "\033[1;35m", "\033[1;36m", "\033[1;32m"};
	fputs(color ? "\033[1m" : "", out);
	if (d->loc.line)
		fprintf(out, "%s:%u:%u: ", f->name, d->loc.line, d->loc.col);
	else if (d->loc.file)
		fprintf(out, "%s: ", f->name);
	else {
		/* No location: the program and the file it works on, what is known of them. */
		if (c->tool)
			fprintf(out, "%s: ", c->tool);
		if (c->input)
			fprintf(out, "%s: ", c->input);
	}
	fprintf(out, "%s%s:%s %s%s\n", color ? sev_color[d->sev] : "", sev_name[d->sev],
		color ? "\033[0m\033[1m" : "", d->msg, color ? "\033[0m" : "");
	const char *src;
	int n = d->loc.line ? source_line(f, d->loc.line, &src) : -1;
	if (n < 0)
		return;
	fprintf(out, "%.*s\n", n, src);
	/* The caret keeps tabs so that it lines up under the source. */
	for (uint32_t i = 1; i < d->loc.col && (int)i <= n; i++)
		fputc(src[i - 1] == '\t' ? '\t' : ' ', out);
	fprintf(out, "%s^%s\n", color ? "\033[1;32m" : "", color ? "\033[0m" : "");
}

void
ir_diag_print_text(IrCtx *c, const IrDiag *d, FILE *out, bool color)
{
	print_one(c, d, out, color);
	if (d->cex) {
		const IrCex *x = d->cex;
		fputs("  counterexample:", out);
		if (!x->nvar)
			fputs(" any values", out); /* a property of the kernel's text, not of values */
		for (int i = 0; i < x->nvar; i++)
			fprintf(out, "%s %s = %s", i ? "," : "", x->var[i].name, x->var[i].value);
		fputc('\n', out);
		if (x->role)
			fprintf(out, "    role: %s\n", x->role);
		if (x->slot)
			fprintf(out, "    slot: %s\n", x->slot);
		if (x->found)
			fprintf(out, "    may hold: %s\n", x->found);
		if (x->expected)
			fprintf(out, "    required: %s\n", x->expected);
		if (x->culprit)
			fprintf(out, "    likely cause: %s\n", x->culprit);
	}
	for (int i = 0; i < d->nnote; i++)
		print_one(c, &d->note[i], out, color);
}


static void
json_loc(IrCtx *c, const IrDiag *d, FILE *out)
{
	fputs("\"file\":", out);
	ir_json_str(out, d->loc.file ? ir_ctx_file(c, d->loc.file)->name : c->input ? c->input : "");
	fprintf(out, ",\"line\":%u,\"col\":%u,\"severity\":\"%s\",\"code\":", d->loc.line, d->loc.col,
		sev_name[d->sev]);
	ir_json_str(out, d->code);
	fputs(",\"message\":", out);
	ir_json_str(out, d->msg);
}

void
ir_diag_print_json(IrCtx *c, const IrDiag *d, FILE *out)
{
	fputc('{', out);
	json_loc(c, d, out);
	fputs(",\"notes\":[", out);
	for (int i = 0; i < d->nnote; i++) {
		if (i)
			fputc(',', out);
		fputc('{', out);
		json_loc(c, &d->note[i], out);
		fputc('}', out);
	}
	fputc(']', out);
	if (d->cex) {
		const IrCex *x = d->cex;
		fputs(",\"counterexample\":{\"vars\":{", out);
		for (int i = 0; i < x->nvar; i++) {
			if (i)
				fputc(',', out);
			ir_json_str(out, x->var[i].name);
			fputc(':', out);
			ir_json_str(out, x->var[i].value);
		}
		fputc('}', out);
		const char *keys[] = {"role", "slot", "found", "expected", "culprit"};
		const char *vals[] = {x->role, x->slot, x->found, x->expected, x->culprit};
		for (int i = 0; i < 5; i++) {
			if (!vals[i])
				continue;
			fprintf(out, ",\"%s\":", keys[i]);
			ir_json_str(out, vals[i]);
		}
		if (x->culprit_loc.line)
			fprintf(out, ",\"culprit_line\":%u,\"culprit_col\":%u", x->culprit_loc.line,
				x->culprit_loc.col);
		fputc('}', out);
	}
	fputs("}\n", out);
}

void
ir_diag_summary(int nerrors, int nwarnings, FILE *out)
{
	if (nerrors <= 0)
		return;
	if (nwarnings > 0)
		fprintf(out, "%d warning%s and ", nwarnings, nwarnings == 1 ? "" : "s");
	fprintf(out, "%d error%s generated.\n", nerrors, nerrors == 1 ? "" : "s");
}

void
ir_diag_default_handler(void *ud, const IrDiag *d)
{
	ir_diag_print_text(ud, d, stderr, false);
}

/* Edit distance of a[0, n) and b, at most 64 bytes each: insertions, deletions, substitutions
 * and transpositions of adjacent bytes ("bf61" is one edit from "bf16"). */
static int
distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	if (n > 64 || m > 64)
		return 1 << 20;
	int d[65][65];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

const char *
ir_closest(const char *s, size_t n, const char *const *cands, int ncand)
{
	const char *best = NULL;
	int bd = 1 << 20;
	for (int i = 0; i < ncand; i++) {
		int d = distance(s, n, cands[i]);
		if (d < bd)
			bd = d, best = cands[i];
	}
	/* Close enough to be a typo: a third of the name, at least one edit, at most three. */
	int limit = (int)(n / 3) < 1 ? 1 : (int)(n / 3) > 3 ? 3 : (int)(n / 3);
	return bd <= limit ? best : NULL;
}
