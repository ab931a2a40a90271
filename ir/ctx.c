/* ctx.c — the context: interned strings, the file table, built-in types and keywords. */
#include <string.h>

#include "ir.h"

typedef struct StrKey {
	const char *s;
	size_t n;
} StrKey;

static bool
str_eq(const void *a, const void *b)
{
	/* Stored keys are interned C strings; probes are StrKey. Both sides arrive as probes here
	 * because ir_intern passes a StrKey and the map stores pointers to StrKey records. */
	const StrKey *x = a, *y = b;
	return x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
}

IrStr
ir_intern(IrCtx *c, const char *s, size_t n)
{
	StrKey probe = {s, n};
	uint64_t h = ir_hash_bytes(s, n);
	StrKey *k = ir_map_get(&c->strings, h, &probe, str_eq);
	if (k)
		return k->s;
	k = ir_arena_alloc(&c->arena, sizeof *k);
	k->s = ir_arena_strndup(&c->arena, s, n);
	k->n = n;
	ir_map_put(&c->strings, h, k, k, str_eq);
	return k->s;
}

IrStr
ir_intern_cstr(IrCtx *c, const char *s)
{
	return ir_intern(c, s, strlen(s));
}

IrCtx *
ir_ctx_new(const IrAllocator *al)
{
	if (!al)
		al = &ir_default_allocator;
	IrCtx *c = ir_xalloc(al, sizeof *c);
	memset(c, 0, sizeof *c);
	c->al = al;
	ir_arena_init(&c->arena, al);
	ir_map_init(&c->strings, al);
	ir_map_init(&c->types, al);
	ir_map_init(&c->attrs, al);
	ir_map_init(&c->opnames, al);
	c->handler = ir_diag_default_handler;
	c->handler_ud = c;
	c->code = "ave";
	IrFile unknown = {"<unknown>", NULL, 0, 1, 0};
	ir_vec_push(al, &c->files, &unknown, sizeof unknown);
#define KW(id, text) c->kw.id = ir_intern_cstr(c, text);
#include "keywords.def"
#undef KW
	c->t_i1 = ir_type_int(c, 1);
	c->t_i8 = ir_type_int(c, 8);
	c->t_i16 = ir_type_int(c, 16);
	c->t_i32 = ir_type_int(c, 32);
	c->t_i64 = ir_type_int(c, 64);
	c->t_index = ir_type_index(c);
	c->t_f16 = ir_type_float(c, IR_F16);
	c->t_bf16 = ir_type_float(c, IR_BF16);
	c->t_f32 = ir_type_float(c, IR_F32);
	c->t_f64 = ir_type_float(c, IR_F64);
	c->t_f8e4m3 = ir_type_float(c, IR_F8E4M3);
	c->t_f8e5m2 = ir_type_float(c, IR_F8E5M2);
	c->t_token = ir_type_token(c);
	ir_opinfo_init(c);
	return c;
}

void
ir_ctx_free(IrCtx *c)
{
	if (!c)
		return;
	const IrAllocator *al = c->al;
	ir_map_free(&c->strings);
	ir_map_free(&c->types);
	ir_map_free(&c->attrs);
	ir_map_free(&c->opnames);
	for (int i = 0; i < c->files.len; i++) {
		IrFile *f = &IR_VEC_AT(c->files, IrFile, i);
		if (f->owned)
			ir_xfree(al, (char *)f->text, f->owned);
	}
	ir_vec_free(al, &c->files, sizeof(IrFile));
	ir_arena_free(&c->arena);
	ir_xfree(al, c, sizeof *c);
}

uint32_t
ir_ctx_add_file(IrCtx *c, const char *name, const char *text, size_t len, uint32_t line0)
{
	IrFile f;
	f.name = ir_arena_strndup(&c->arena, name, strlen(name));
	f.text = text ? ir_arena_strndup(&c->arena, text, len) : NULL;
	f.len = text ? len : 0;
	f.line0 = line0 ? line0 : 1;
	f.owned = 0;
	ir_vec_push(c->al, &c->files, &f, sizeof f);
	return (uint32_t)c->files.len - 1;
}

uint32_t
ir_ctx_take_file(IrCtx *c, const char *name, char *text, size_t len, size_t size, uint32_t line0)
{
	IrFile f;
	f.name = ir_arena_strndup(&c->arena, name, strlen(name));
	f.text = text;
	f.len = len;
	f.line0 = line0 ? line0 : 1;
	f.owned = size;
	ir_vec_push(c->al, &c->files, &f, sizeof f);
	return (uint32_t)c->files.len - 1;
}

const IrFile *
ir_ctx_file(IrCtx *c, uint32_t id)
{
	if (id >= (uint32_t)c->files.len)
		id = 0;
	return &IR_VEC_AT(c->files, IrFile, id);
}
