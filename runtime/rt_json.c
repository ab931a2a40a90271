/* rt_json.c — a small JSON reader (RFC 8259) for kernel metadata, and helpers to look values
 * up. The whole document lives in one arena. */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef struct JsonParser {
	const char *s, *end;
	IrArena *a;
	const char *err;
	int depth;
} JsonParser;

static void
ws(JsonParser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static RtJson *parse_value(JsonParser *p);

static RtJson *
mk(JsonParser *p, RtJsonKind k)
{
	RtJson *j = ir_arena_alloc(p->a, sizeof *j);
	j->kind = k;
	return j;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char *
parse_string(JsonParser *p)
{
	if (p->s >= p->end || *p->s != '"') {
		p->err = "expected a string";
		return NULL;
	}
	p->s++;
	size_t cap = 16, n = 0;
	char *buf = malloc(cap);
	while (p->s < p->end && *p->s != '"') {
		unsigned c = (unsigned char)*p->s++;
		if (c < 0x20) {
			p->err = "control character in string";
			free(buf);
			return NULL;
		}
		if (c == '\\') {
			if (p->s >= p->end)
				break;
			char e = *p->s++;
			switch (e) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned v = 0;
				for (int i = 0; i < 4; i++) {
					int h = p->s < p->end ? hexval(*p->s++) : -1;
					if (h < 0) {
						p->err = "bad \\u escape";
						free(buf);
						return NULL;
					}
					v = v * 16 + (unsigned)h;
				}
				/* Metadata is ASCII; other code points are kept as UTF-8 (no surrogates). */
				if (n + 4 >= cap)
					buf = realloc(buf, cap *= 2);
				if (v < 0x80) {
					buf[n++] = (char)v;
				} else if (v < 0x800) {
					buf[n++] = (char)(0xc0 | v >> 6);
					buf[n++] = (char)(0x80 | (v & 63));
				} else {
					buf[n++] = (char)(0xe0 | v >> 12);
					buf[n++] = (char)(0x80 | ((v >> 6) & 63));
					buf[n++] = (char)(0x80 | (v & 63));
				}
				continue;
			}
			default:
				p->err = "bad escape";
				free(buf);
				return NULL;
			}
		}
		if (n + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		buf[n++] = (char)c;
	}
	if (p->s >= p->end) {
		p->err = "unterminated string";
		free(buf);
		return NULL;
	}
	p->s++;
	char *out = ir_arena_strndup(p->a, buf, n);
	free(buf);
	return out;
}

static RtJson *
parse_value(JsonParser *p)
{
	ws(p);
	if (p->s >= p->end) {
		p->err = "unexpected end";
		return NULL;
	}
	if (++p->depth > 64) {
		p->err = "nested too deeply";
		return NULL;
	}
	RtJson *j = NULL;
	char c = *p->s;
	if (c == '{' || c == '[') {
		bool obj = c == '{';
		j = mk(p, obj ? RT_JSON_OBJECT : RT_JSON_ARRAY);
		p->s++;
		ws(p);
		IrVec items = {0}, keys = {0};
		if (p->s < p->end && *p->s == (obj ? '}' : ']')) {
			p->s++;
		} else {
			for (;;) {
				ws(p);
				if (obj) {
					char *k = parse_string(p);
					if (!k)
						goto fail;
					ir_vec_push(&ir_default_allocator, &keys, &k, sizeof k);
					ws(p);
					if (p->s >= p->end || *p->s != ':') {
						p->err = "expected ':'";
						goto fail;
					}
					p->s++;
				}
				RtJson *v = parse_value(p);
				if (!v)
					goto fail;
				ir_vec_push(&ir_default_allocator, &items, &v, sizeof v);
				ws(p);
				if (p->s < p->end && *p->s == ',') {
					p->s++;
					continue;
				}
				if (p->s < p->end && *p->s == (obj ? '}' : ']')) {
					p->s++;
					break;
				}
				p->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
				goto fail;
			}
		}
		j->n = items.len;
		j->items = ir_arena_alloc(p->a, sizeof(RtJson *) * (size_t)(items.len + 1));
		if (items.len)
			memcpy(j->items, items.data, sizeof(RtJson *) * (size_t)items.len);
		if (obj) {
			j->keys = ir_arena_alloc(p->a, sizeof(char *) * (size_t)(keys.len + 1));
			if (keys.len)
				memcpy(j->keys, keys.data, sizeof(char *) * (size_t)keys.len);
		}
		ir_vec_free(&ir_default_allocator, &items, sizeof(RtJson *));
		ir_vec_free(&ir_default_allocator, &keys, sizeof(char *));
		p->depth--;
		return j;
	fail:
		ir_vec_free(&ir_default_allocator, &items, sizeof(RtJson *));
		ir_vec_free(&ir_default_allocator, &keys, sizeof(char *));
		return NULL;
	}
	if (c == '"') {
		j = mk(p, RT_JSON_STRING);
		if (!(j->s = parse_string(p)))
			return NULL;
	} else if (!strncmp(p->s, "true", 4) && p->end - p->s >= 4) {
		j = mk(p, RT_JSON_BOOL);
		j->i = 1;
		p->s += 4;
	} else if (!strncmp(p->s, "false", 5) && p->end - p->s >= 5) {
		j = mk(p, RT_JSON_BOOL);
		p->s += 5;
	} else if (!strncmp(p->s, "null", 4) && p->end - p->s >= 4) {
		j = mk(p, RT_JSON_NULL);
		p->s += 4;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		char tmp[64];
		size_t n = 0;
		while (p->s + n < p->end && n < sizeof tmp - 1 &&
		       strchr("+-0123456789.eE", p->s[n]))
			n++;
		memcpy(tmp, p->s, n);
		tmp[n] = 0;
		char *e;
		j = mk(p, RT_JSON_NUMBER);
		j->f = strtod(tmp, &e);
		if (e == tmp) {
			p->err = "bad number";
			return NULL;
		}
		long long iv = strtoll(tmp, &e, 10);
		/* A number that is not an integer (or out of range) is clamped into int64. */
		double f = j->f;
		j->i = !*e ? iv
		       : f != f ? 0
		       : f >= 9.2e18 ? INT64_MAX
		       : f <= -9.2e18 ? INT64_MIN
		       : (int64_t)f;
		p->s += n;
	} else {
		p->err = "unexpected character";
		return NULL;
	}
	p->depth--;
	return j;
}

RtJson *
rt_json_parse(IrArena *a, const char *text, size_t len, const char **err)
{
	JsonParser p = {text, text + len, a, NULL, 0};
	RtJson *j = parse_value(&p);
	if (j) {
		ws(&p);
		if (p.s != p.end) {
			p.err = "trailing characters";
			j = NULL;
		}
	}
	if (!j && err)
		*err = p.err ? p.err : "invalid JSON";
	return j;
}

RtJson *
rt_json_get(const RtJson *o, const char *key)
{
	if (!o || o->kind != RT_JSON_OBJECT)
		return NULL;
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

int64_t
rt_json_int(const RtJson *o, const char *key, int64_t dflt)
{
	RtJson *v = rt_json_get(o, key);
	return v && v->kind == RT_JSON_NUMBER ? v->i : dflt;
}

const char *
rt_json_str(const RtJson *o, const char *key)
{
	RtJson *v = rt_json_get(o, key);
	return v && v->kind == RT_JSON_STRING ? v->s : NULL;
}
