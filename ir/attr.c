/* attr.c — attributes, uniqued in the context, and their canonical printing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static uint64_t
attr_hash(const IrAttr *a)
{
	uint64_t h = ir_hash_mix(a->kind, (uint64_t)a->i);
	uint64_t fb;
	memcpy(&fb, &a->f, sizeof fb);
	h = ir_hash_mix(h, fb);
	h = ir_hash_mix(h, (uint64_t)(uintptr_t)a->s);
	h = ir_hash_mix(h, (uint64_t)(uintptr_t)a->type);
	h = ir_hash_mix(h, (uint64_t)a->n);
	for (int i = 0; i < a->n; i++) {
		h = ir_hash_mix(h, (uint64_t)(uintptr_t)a->elts[i]);
		if (a->keys)
			h = ir_hash_mix(h, (uint64_t)(uintptr_t)a->keys[i]);
	}
	h = ir_hash_mix(h, (uint64_t)(uintptr_t)a->kw);
	return ir_hash_mix(h, a->int_form);
}

static bool
attr_eq(const void *pa, const void *pb)
{
	const IrAttr *a = pa, *b = pb;
	if (a->kind != b->kind || a->i != b->i || a->s != b->s || a->type != b->type ||
	    a->n != b->n || a->kw != b->kw || a->int_form != b->int_form)
		return false;
	/* Bitwise float equality keeps -0.0 and NaN payloads distinct and uniquing total. */
	if (memcmp(&a->f, &b->f, sizeof a->f))
		return false;
	if ((a->keys == NULL) != (b->keys == NULL))
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->elts[i] != b->elts[i] || (a->keys && a->keys[i] != b->keys[i]))
			return false;
	return true;
}

static IrAttr *
unique(IrCtx *c, IrAttr *p)
{
	p->hash = attr_hash(p);
	IrAttr *a = ir_map_get(&c->attrs, p->hash, p, attr_eq);
	if (a)
		return a;
	a = ir_arena_alloc(&c->arena, sizeof *a);
	*a = *p;
	if (p->n) {
		a->elts = ir_arena_alloc(&c->arena, sizeof *a->elts * (size_t)p->n);
		memcpy(a->elts, p->elts, sizeof *a->elts * (size_t)p->n);
		if (p->keys) {
			a->keys = ir_arena_alloc(&c->arena, sizeof *a->keys * (size_t)p->n);
			memcpy(a->keys, p->keys, sizeof *a->keys * (size_t)p->n);
		}
	}
	ir_map_put(&c->attrs, a->hash, a, a, attr_eq);
	return a;
}

IrAttr *
ir_attr_int(IrCtx *c, int64_t v)
{
	IrAttr p = {.kind = IR_ATTR_INT, .i = v};
	return unique(c, &p);
}

IrAttr *
ir_attr_float(IrCtx *c, double v)
{
	IrAttr p = {.kind = IR_ATTR_FLOAT, .f = v};
	return unique(c, &p);
}

IrAttr *
ir_attr_str(IrCtx *c, IrStr s)
{
	IrAttr p = {.kind = IR_ATTR_STR, .s = s};
	return unique(c, &p);
}

IrAttr *
ir_attr_bool(IrCtx *c, bool v)
{
	IrAttr p = {.kind = IR_ATTR_BOOL, .i = v};
	return unique(c, &p);
}

IrAttr *
ir_attr_sym(IrCtx *c, IrStr name)
{
	IrAttr p = {.kind = IR_ATTR_SYM, .s = name};
	return unique(c, &p);
}

IrAttr *
ir_attr_type(IrCtx *c, IrType *t)
{
	IrAttr p = {.kind = IR_ATTR_TYPE, .type = t};
	return unique(c, &p);
}

IrAttr *
ir_attr_array(IrCtx *c, int n, IrAttr **elts)
{
	IrAttr p = {.kind = IR_ATTR_ARRAY, .n = n, .elts = elts};
	return unique(c, &p);
}

IrAttr *
ir_attr_ave(IrCtx *c, IrStr name, IrStr kw, int n, IrStr *keys, IrAttr **vals)
{
	IrAttr p = {.kind = IR_ATTR_AVE, .s = name, .kw = kw, .n = n, .keys = n ? keys : NULL,
		    .elts = vals};
	return unique(c, &p);
}

IrAttr *
ir_attr_ave_int(IrCtx *c, IrStr name, int64_t v)
{
	IrAttr p = {.kind = IR_ATTR_AVE, .s = name, .i = v, .int_form = true};
	return unique(c, &p);
}

IrAttr *
ir_attr_ave_get(const IrAttr *a, IrStr key)
{
	if (!a || a->kind != IR_ATTR_AVE)
		return NULL;
	for (int i = 0; i < a->n; i++)
		if (a->keys[i] == key)
			return a->elts[i];
	return NULL;
}

void
ir_print_float(double v, FILE *out)
{
	if (isnan(v)) {
		fputs(signbit(v) ? "-nan" : "nan", out);
		return;
	}
	if (isinf(v)) {
		fputs(v < 0 ? "-inf" : "inf", out);
		return;
	}
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* The grammar needs a '.' or an exponent to read a float back. */
	char *e = strchr(buf, 'e');
	if (!strchr(buf, '.')) {
		if (e) {
			char tmp[64];
			snprintf(tmp, sizeof tmp, "%.*s.0%s", (int)(e - buf), buf, e);
			memcpy(buf, tmp, sizeof tmp);
		} else {
			strcat(buf, ".0");
		}
	}
	e = strchr(buf, 'e');
	if (e && e[1] == '+')
		memmove(e + 1, e + 2, strlen(e + 2) + 1);
	fputs(buf, out);
}

void
ir_print_string(const char *s, FILE *out)
{
	fputc('"', out);
	for (; *s; s++) {
		switch (*s) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			fputc(*s, out);
		}
	}
	fputc('"', out);
}

void
ir_attr_print(IrCtx *c, const IrAttr *a, FILE *out)
{
	ir_attr_print_ex(c, a, out, NULL, NULL);
}

void
ir_attr_print_ex(IrCtx *c, const IrAttr *a, FILE *out, IrAliasHook hook, void *ud)
{
	if (hook && hook(ud, a, false, out))
		return;
	switch (a->kind) {
	case IR_ATTR_INT:
		fprintf(out, "%lld", (long long)a->i);
		break;
	case IR_ATTR_FLOAT:
		ir_print_float(a->f, out);
		break;
	case IR_ATTR_STR:
		ir_print_string(a->s, out);
		break;
	case IR_ATTR_BOOL:
		fputs(a->i ? "true" : "false", out);
		break;
	case IR_ATTR_SYM:
		fprintf(out, "@%s", a->s);
		break;
	case IR_ATTR_TYPE:
		ir_type_print_ex(c, a->type, out, hook, ud);
		break;
	case IR_ATTR_ARRAY:
		fputc('[', out);
		for (int i = 0; i < a->n; i++) {
			if (i)
				fputs(", ", out);
			ir_attr_print_ex(c, a->elts[i], out, hook, ud);
		}
		fputc(']', out);
		break;
	case IR_ATTR_AVE:
		fprintf(out, "#ave.%s<", a->s);
		if (a->int_form) {
			fprintf(out, "%lld>", (long long)a->i);
			break;
		}
		if (a->kw)
			fputs(a->kw, out);
		for (int i = 0; i < a->n; i++) {
			if (i || a->kw)
				fputs(", ", out);
			fprintf(out, "%s = ", a->keys[i]);
			ir_attr_print_ex(c, a->elts[i], out, hook, ud);
		}
		fputc('>', out);
		break;
	default:
		ir_unreachable("bad attribute kind");
	}
}
