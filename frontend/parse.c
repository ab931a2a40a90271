/* parse.c — the frontend's driver and the services its grammar actions use: arena lists,
 * locations, lexical scopes for value names (kernels isolated from above, no redefinition of a
 * visible name) and alias definitions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parser.h"

void *
fe_alloc(FeParser *p, size_t n)
{
	return ir_arena_alloc(&p->scratch, n);
}

FeList *
fe_list_new(FeParser *p)
{
	return fe_alloc(p, sizeof(FeList));
}

void
fe_list_push(FeParser *p, FeList *l, void *x)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 4;
		void **v = fe_alloc(p, sizeof *v * (size_t)cap);
		if (l->n)
			memcpy(v, l->v, sizeof *v * (size_t)l->n);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
}

IrLoc
fe_loc(FeParser *p, int line, int col)
{
	IrLoc l = {p->file, (uint32_t)line, (uint32_t)col};
	return l;
}

void
fe_error(FeParser *p, IrLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	IrDiag *d = ir_diag_beginv(p->c, IR_SEV_ERROR, loc, fmt, ap);
	va_end(ap);
	ir_diag_emit(p->c, d);
	p->failed = true;
}

/* ---- scopes ---- */

typedef struct FeEntry {
	IrValue *v;
	int level;
	struct FeEntry *prev; /* the entry this one hides (only across kernel isolation) */
} FeEntry;

void
fe_scope_push(FeParser *p)
{
	int mark = p->undo.len;
	ir_vec_push(p->c->al, &p->marks, &mark, sizeof mark);
	p->level++;
}

void
fe_scope_pop(FeParser *p)
{
	int mark = IR_VEC_AT(p->marks, int, --p->marks.len);
	while (p->undo.len > mark) {
		FeEntry *e = IR_VEC_AT(p->undo, FeEntry *, --p->undo.len);
		if (e->prev)
			ir_map_put(&p->names, ir_hash_ptr(e->v->name), e->v->name, e->prev, NULL);
		else
			ir_map_del(&p->names, ir_hash_ptr(e->v->name), e->v->name, NULL);
	}
	p->level--;
}

bool
fe_define(FeParser *p, IrValue *v)
{
	FeEntry *old = ir_map_get(&p->names, ir_hash_ptr(v->name), v->name, NULL);
	if (old && old->level >= p->iso) {
		IrDiag *d = ir_diag_begin(p->c, IR_SEV_ERROR, v->loc, "redefinition of value '%%%s'",
					  v->name);
		ir_diag_note(p->c, d, old->v->loc, "previous definition is here");
		ir_diag_emit(p->c, d);
		p->failed = true;
		return false;
	}
	/* Entries inside a top-level op die with its scopes, before the scratch arena is reset. */
	FeEntry *e = ir_arena_alloc(p->level > 0 ? &p->scratch : &p->names_arena, sizeof *e);
	e->v = v;
	e->level = p->level;
	/* A name from outside an isolated kernel may be reused inside it; it comes back after. */
	e->prev = old;
	ir_map_put(&p->names, ir_hash_ptr(v->name), v->name, e, NULL);
	ir_vec_push(p->c->al, &p->undo, &e, sizeof e);
	return true;
}

IrValue *
fe_lookup(FeParser *p, IrStr name, IrLoc loc)
{
	FeEntry *e = ir_map_get(&p->names, ir_hash_ptr(name), name, NULL);
	if (!e) {
		fe_error(p, loc, "use of undefined value '%%%s'", name);
		return NULL;
	}
	if (e->level < p->iso) {
		fe_error(p, loc, "'%%%s' is defined outside the kernel; kernels are isolated from above",
			 name);
		return NULL;
	}
	return e->v;
}

/* ---- aliases ---- */

static IrAlias *
find_alias(FeParser *p, IrStr name, bool is_type)
{
	uintptr_t i = (uintptr_t)ir_map_get(&p->aliases[is_type], ir_hash_ptr(name), name, NULL);
	return i ? &IR_VEC_AT(p->m->aliases, IrAlias, (int)(i - 1)) : NULL;
}

bool
fe_def_alias(FeParser *p, IrStr name, bool is_type, IrAttr *attr, IrType *type, IrLoc loc)
{
	if (find_alias(p, name, is_type)) {
		fe_error(p, loc, "redefinition of alias '%c%s'", is_type ? '!' : '#', name);
		return false;
	}
	IrAlias a = {name, is_type, attr, type};
	ir_vec_push(p->c->al, &p->m->aliases, &a, sizeof a);
	ir_map_put(&p->aliases[is_type], ir_hash_ptr(name), name,
	           (void *)(uintptr_t)p->m->aliases.len, NULL);
	return true;
}

IrType *
fe_type_alias(FeParser *p, IrStr name, IrLoc loc)
{
	IrAlias *a = find_alias(p, name, true);
	if (!a) {
		fe_error(p, loc, "use of undefined type alias '!%s'", name);
		return NULL;
	}
	return a->type;
}

IrAttr *
fe_attr_alias(FeParser *p, IrStr name, IrLoc loc)
{
	IrAlias *a = find_alias(p, name, false);
	if (!a) {
		fe_error(p, loc, "use of undefined attribute alias '#%s'", name);
		return NULL;
	}
	return a->attr;
}

/* ---- driver ---- */

static IrModule *parse(IrCtx *c, const char *name, const char *text, size_t len, uint32_t line0,
		       size_t taken);

IrModule *
fe_parse(IrCtx *c, const char *name, const char *text, size_t len, uint32_t line0)
{
	return parse(c, name, text, len, line0, 0);
}

IrModule *
fe_parse_taken(IrCtx *c, const char *name, char *text, size_t len, size_t size)
{
	return parse(c, name, text, len, 1, size);
}

static IrModule *
parse(IrCtx *c, const char *name, const char *text, size_t len, uint32_t line0, size_t taken)
{
	const char *saved = c->code;
	c->code = "parse";
	FeParser p;
	memset(&p, 0, sizeof p);
	p.c = c;
	p.m = ir_module_new(c, name);
	p.src = text;
	p.len = len;
	p.line = line0 ? line0 : 1;
	p.col = 1;
	p.file = taken ? ir_ctx_take_file(c, name, (char *)text, len, taken, p.line)
		       : ir_ctx_add_file(c, name, text, len, p.line);
	ir_map_init(&p.names, c->al);
	ir_map_init(&p.aliases[0], c->al);
	ir_map_init(&p.aliases[1], c->al);
	ir_arena_init(&p.scratch, c->al);
	ir_arena_init(&p.names_arena, c->al);
	IrLoc start = {p.file, p.line, 1};
	bool ok = false;

	if (len > FE_MAX_INPUT) {
		fe_error(&p, start, "input is %zu bytes; the limit is %zu", len, (size_t)FE_MAX_INPUT);
	} else if (memchr(text, 0, len)) {
		/* Locate the NUL for the message. */
		const char *z = memchr(text, 0, len);
		uint32_t line = p.line, col = 1;
		for (const char *s = text; s < z; s++, col++)
			if (*s == '\n')
				line++, col = 0;
		IrLoc l = {p.file, line, col};
		fe_error(&p, l, "unexpected byte 0x00");
	} else {
		p.scanner = fe_lexer_new(&p);
		if (!p.scanner)
			ir_unreachable("cannot create the lexer");
		int rc = fe_yyparse(&p, p.scanner);
		if (rc == 2 && !p.failed)
			fe_error(&p, start, "input is nested too deeply for the parser");
		ok = rc == 0 && !p.failed;
		fe_lexer_free(p.scanner);
	}
	ir_map_free(&p.names);
	ir_map_free(&p.aliases[0]);
	ir_map_free(&p.aliases[1]);
	ir_arena_free(&p.scratch);
	ir_arena_free(&p.names_arena);
	ir_vec_free(c->al, &p.undo, sizeof(void *));
	ir_vec_free(c->al, &p.marks, sizeof(int));
	ir_vec_free(c->al, &p.decls, sizeof(int));
	ir_vec_free(c->al, &p.blocks, sizeof(void *));
	ir_vec_free(c->al, &p.opens, sizeof(IrLoc));
	c->code = saved;
	if (!ok) {
		ir_module_free(p.m);
		return NULL;
	}
	return p.m;
}

/* Reads the file into a buffer from the context's allocator; *cap gets its size. */
static char *
read_all(IrCtx *c, const char *path, size_t *len, size_t *capp)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	IrLoc none = {0, 0, 0};
	if (!f) {
		ir_error(c, none, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	if (f != stdin && !fseek(f, 0, SEEK_END)) {
		long size = ftell(f);
		if (size > 0 && (size_t)size < FE_MAX_INPUT)
			cap = (size_t)size + 1;
		rewind(f);
	}
	char *buf = ir_xalloc(c->al, cap);
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > FE_MAX_INPUT) {
				ir_error(c, none, "'%s' is larger than %zu bytes", path, (size_t)FE_MAX_INPUT);
				ir_xfree(c->al, buf, cap);
				if (f != stdin)
					fclose(f);
				return NULL;
			}
			buf = ir_xrealloc(c->al, buf, cap, cap * 2);
			cap *= 2;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	bool err = ferror(f);
	if (f != stdin)
		fclose(f);
	if (err) {
		ir_error(c, none, "cannot read '%s'", path);
		ir_xfree(c->al, buf, cap);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	*capp = cap;
	return buf;
}

char *
fe_read_file(IrCtx *c, const char *path, size_t *len)
{
	size_t cap;
	char *buf = read_all(c, path, len, &cap);
	if (!buf)
		return NULL;
	/* Callers free it with free(). */
	char *out = malloc(*len + 1);
	memcpy(out, buf, *len + 1);
	ir_xfree(c->al, buf, cap);
	return out;
}

IrModule *
fe_parse_file(IrCtx *c, const char *path)
{
	size_t len, cap;
	char *buf = read_all(c, path, &len, &cap);
	if (!buf)
		return NULL;
	return parse(c, strcmp(path, "-") ? path : "<stdin>", buf, len, 1, cap);
}
