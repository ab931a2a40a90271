/* opinfo.c — reads ops.def into per-context op descriptions: names, traits, modes, and the
 * operand and group patterns that the generic verifier checks before an op's own hook runs. */
#include <string.h>

#include "ir.h"

typedef struct OpRow {
	const char *name;
	int nres, nreg;
	unsigned traits;
	const char *modes, *items, *groups;
	bool (*verify)(IrCtx *, IrOp *);
} OpRow;

static const OpRow rows[IR_OP_COUNT] = {
#define OP(id, name, nres, nreg, traits, mode, items, groups, verify) \
	{name, nres, nreg, traits, mode, items, groups, verify},
#include "ops.def"
#undef OP
};

const char *
ir_op_name(IrOpcode code)
{
	return code < IR_OP_COUNT ? rows[code].name : "<bad op>";
}

static uint32_t
kind_bit(char ch, bool *suffix)
{
	switch (ch) {
	case 'v':
		return 1u << IR_IT_VALUE;
	case 'a':
		*suffix = true;
		return 1u << IR_IT_VALUE | 1u << IR_IT_SYMBOL;
	case 's':
		return 1u << IR_IT_SYMBOL;
	case 'c':
		return 1u << IR_IT_CALL;
	case 'd':
		return 1u << IR_IT_DECL;
	case 'i':
		return 1u << IR_IT_INT;
	case 'f':
		return 1u << IR_IT_FLOAT;
	case 'n':
		return 1u << IR_IT_INT | 1u << IR_IT_FLOAT;
	case 'e':
		return 1u << IR_IT_EXPR;
	case 't':
		return 1u << IR_IT_STRING;
	case 'w':
		return 1u << IR_IT_KEYWORD;
	default:
		ir_unreachable("bad kind letter in ops.def");
	}
}

/* Parses "v|n,v|n*" into patterns; returns the count. */
static int
parse_items(const char *s, const char *end, IrItemPat *pat, int max)
{
	int n = 0;
	while (s < end) {
		if (n == max)
			ir_unreachable("too many item positions in ops.def");
		IrItemPat *p = &pat[n++];
		memset(p, 0, sizeof *p);
		for (; s < end && *s != ','; s++) {
			if (*s == '|')
				continue;
			if (*s == '*') {
				p->repeat = true;
				continue;
			}
			p->kinds |= kind_bit(*s, &p->suffix_ok);
		}
		if (s < end)
			s++;
	}
	return n;
}

static void
parse_groups(IrCtx *c, IrOpInfo *info, const char *s)
{
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		const char *w = s;
		while (*s && *s != ' ' && *s != '(' && *s != '!')
			s++;
		IrGroupPat *g = &info->group[info->ngroup++];
		memset(g, 0, sizeof *g);
		g->kw = ir_intern(c, w, (size_t)(s - w));
		if (*s == '!') {
			g->required = true;
			s++;
		}
		if (*s == '(') {
			const char *e = strchr(s, ')');
			g->nitem = parse_items(s + 1, e, g->item, 4);
			s = e + 1;
		} else {
			g->nitem = -1;
		}
	}
}

void
ir_opinfo_init(IrCtx *c)
{
	c->opinfo = ir_arena_alloc(&c->arena, sizeof(IrOpInfo) * IR_OP_COUNT);
	for (int i = 0; i < IR_OP_COUNT; i++) {
		const OpRow *r = &rows[i];
		IrOpInfo *info = &c->opinfo[i];
		info->name = r->name;
		info->iname = ir_intern_cstr(c, r->name);
		info->nres = r->nres;
		info->nreg = r->nreg;
		info->traits = r->traits;
		info->verify = r->verify;
		const char *m = r->modes;
		if (*m == '!')
			m++; /* required modes are checked by the verifier hook */
		while (*m) {
			while (*m == ' ')
				m++;
			const char *w = m;
			while (*m && *m != ' ')
				m++;
			if (m > w)
				info->mode[info->nmode++] = ir_intern(c, w, (size_t)(m - w));
		}
		info->nitem = parse_items(r->items, r->items + strlen(r->items), info->item, 4);
		parse_groups(c, info, r->groups);
		ir_map_put(&c->opnames, ir_hash_ptr(info->iname), info->iname,
			   (void *)(uintptr_t)(i + 1), NULL);
	}
}

bool
ir_opinfo_mode_required(IrOpcode code)
{
	return rows[code].modes[0] == '!';
}

const IrOpInfo *
ir_opinfo(const IrCtx *c, IrOpcode code)
{
	return &c->opinfo[code];
}

bool
ir_opcode_lookup(const IrCtx *c, const char *name, size_t n, IrOpcode *out)
{
	IrStr s = ir_intern((IrCtx *)c, name, n);
	uintptr_t i = (uintptr_t)ir_map_get(&c->opnames, ir_hash_ptr(s), s, NULL);
	if (!i)
		return false;
	*out = (IrOpcode)(i - 1);
	return true;
}

bool
ir_op_has_trait(const IrCtx *c, const IrOp *op, unsigned t)
{
	return (c->opinfo[op->code].traits & t) != 0;
}

/* The op name closest to s[0, n) when it looks like a typo of one, else NULL. The names share
 * "ave.", which does not count towards how close is close enough ('ave.nop' is no 'ave.or'). */
const char *
ir_op_closest(const char *s, size_t n)
{
	const char *names[IR_OP_COUNT];
	size_t skip = n > 4 && !memcmp(s, "ave.", 4) ? 4 : 0;
	for (int i = 0; i < IR_OP_COUNT; i++)
		names[i] = rows[i].name + skip;
	const char *near = ir_closest(s + skip, n - skip, names, IR_OP_COUNT);
	return near ? near - skip : NULL;
}

static const struct {
	IrOpcode op;
	const char *names;
} attr_rows[] = {
#define ATTRS(id, names) {IR_OP_##id, names},
#include "attrs.def"
#undef ATTRS
};

/* The names with a meaning on `code` (own) or on any other op, interned into cands. */
static int
attr_names(IrCtx *c, IrOpcode code, bool own, IrStr *cands, IrOpcode *owners, int max)
{
	int n = 0;
	for (size_t r = 0; r < sizeof attr_rows / sizeof attr_rows[0]; r++) {
		if ((attr_rows[r].op == code) != own)
			continue;
		for (const char *p = attr_rows[r].names; *p && n < max;) {
			size_t k = strcspn(p, " ");
			owners[n] = attr_rows[r].op;
			cands[n++] = ir_intern(c, p, k);
			p += k;
			p += strspn(p, " ");
		}
	}
	return n;
}

IrStr
ir_op_attr_closest(IrCtx *c, IrOpcode code, IrStr name, IrOpcode *owner)
{
	IrStr cands[32];
	IrOpcode owners[32];
	for (int pass = 0; pass < 2; pass++) {
		int n = attr_names(c, code, pass == 0, cands, owners, 32);
		for (int i = 0; i < n; i++)
			if (cands[i] == name) {
				*owner = owners[i];
				return pass == 0 ? NULL : name; /* a name with a meaning here, or elsewhere */
			}
		const char *near = ir_closest(name, strlen(name), (const char *const *)cands, n);
		for (int i = 0; near && i < n; i++)
			if (cands[i] == near) {
				*owner = owners[i];
				return cands[i];
			}
	}
	return NULL;
}
