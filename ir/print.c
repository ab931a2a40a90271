/* print.c — the canonical printer. Output re-parses to the same IR and printing it again gives
 * the same bytes: one stored form per construct, aliases printed by name, value names kept
 * where they are unique in scope and made unique where they are not. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct Printer {
	IrModule *m;
	IrCtx *c;
	FILE *out;
	const IrPrintOpts *o;
	IrMap names;   /* IrValue* -> IrStr, for the values printed under another name */
	IrMap typestr; /* IrType* -> its text (with aliases), printed once per module */
	IrMap visible; /* IrStr -> count of visible definitions */
	IrVec undo;    /* IrStr, names defined in open scopes */
	IrVec marks;   /* int, undo length at each scope entry */
	int alias_limit; /* aliases usable while printing alias definitions */
	int counter;
} Printer;

static bool
alias_hook(void *ud, const void *obj, bool is_type, FILE *out)
{
	Printer *p = ud;
	if (p->o && p->o->generic)
		return false;
	for (int i = 0; i < p->alias_limit; i++) {
		IrAlias *a = &IR_VEC_AT(p->m->aliases, IrAlias, i);
		if (a->is_type != is_type)
			continue;
		if ((is_type && (const void *)a->type == obj) ||
		    (!is_type && (const void *)a->attr == obj)) {
			fprintf(out, "%c%s", is_type ? '!' : '#', a->name);
			return true;
		}
	}
	return false;
}

static void
type(Printer *p, IrType *t)
{
	/* While alias definitions print, what a type prints as changes; cache only after. */
	if (p->alias_limit != p->m->aliases.len) {
		ir_type_print_ex(p->c, t, p->out, alias_hook, p);
		return;
	}
	const char *s = ir_map_get(&p->typestr, ir_hash_ptr(t), t, NULL);
	if (!s) {
		char *buf = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&buf, &n);
		if (!f)
			ir_unreachable("open_memstream failed");
		FILE *out = p->out;
		p->out = f;
		ir_type_print_ex(p->c, t, f, alias_hook, p);
		p->out = out;
		fclose(f);
		s = ir_ctx_strdup(p->c, buf);
		free(buf);
		ir_map_put(&p->typestr, ir_hash_ptr(t), t, (void *)s, NULL);
	}
	fputs(s, p->out);
}

static void
attr(Printer *p, IrAttr *a)
{
	ir_attr_print_ex(p->c, a, p->out, alias_hook, p);
}

/* ---- value names ---- */

static void
scope_push(Printer *p)
{
	int mark = p->undo.len;
	ir_vec_push(p->c->al, &p->marks, &mark, sizeof mark);
}

static void
scope_pop(Printer *p)
{
	int mark = IR_VEC_AT(p->marks, int, --p->marks.len);
	while (p->undo.len > mark) {
		IrStr s = IR_VEC_AT(p->undo, IrStr, --p->undo.len);
		uintptr_t n = (uintptr_t)ir_map_get(&p->visible, ir_hash_ptr(s), s, NULL);
		if (n <= 1)
			ir_map_del(&p->visible, ir_hash_ptr(s), s, NULL);
		else
			ir_map_put(&p->visible, ir_hash_ptr(s), s, (void *)(n - 1), NULL);
	}
}

static bool
taken(Printer *p, IrStr s)
{
	return ir_map_get(&p->visible, ir_hash_ptr(s), s, NULL) != NULL;
}

static void
make_visible(Printer *p, IrStr s)
{
	uintptr_t n = (uintptr_t)ir_map_get(&p->visible, ir_hash_ptr(s), s, NULL);
	ir_map_put(&p->visible, ir_hash_ptr(s), s, (void *)(n + 1), NULL);
	ir_vec_push(p->c->al, &p->undo, &s, sizeof s);
}

/* Chooses v's printed name, unique among the visible ones, without making it visible yet (an
 * op's results are named before the op prints but are visible only after it). */
static IrStr
choose(Printer *p, IrValue *v)
{
	IrStr s = v->name;
	char buf[96];
	if (!s || taken(p, s)) {
		const char *base = v->name;
		do {
			if (base)
				snprintf(buf, sizeof buf, "%.64s_%d", base, ++p->counter);
			else
				snprintf(buf, sizeof buf, "%d", p->counter++);
			s = ir_intern_cstr(p->c, buf);
		} while (taken(p, s));
	}
	/* Most values keep their own name; only the renamed ones need remembering. */
	if (s != v->name)
		ir_map_put(&p->names, ir_hash_ptr(v), v, (void *)s, NULL);
	else if (p->names.len)
		ir_map_del(&p->names, ir_hash_ptr(v), v, NULL);
	return s;
}

/* Gives v a printed name unique among the visible ones and makes it visible. */
static void
define(Printer *p, IrValue *v)
{
	make_visible(p, choose(p, v));
}

static void
value(Printer *p, IrValue *v)
{
	IrStr s = v && p->names.len ? ir_map_get(&p->names, ir_hash_ptr(v), v, NULL) : NULL;
	if (!s)
		s = v && v->name ? v->name : "<<undefined>>";
	fputc('%', p->out);
	fputs(s, p->out);
}

typedef struct NameCtx {
	Printer *p;
	IrOp *op;
} NameCtx;

static void
expr_name(void *ud, int opnd, FILE *out)
{
	NameCtx *n = ud;
	(void)out;
	value(n->p, ir_op_value(n->op, opnd));
}

static void
expr(Printer *p, IrOp *op, IrExpr *e)
{
	NameCtx n = {p, op};
	ir_expr_print(e, p->out, expr_name, &n);
}

/* ---- items and groups ---- */

static void
coords(Printer *p, IrOp *op, const IrItem *it, char open, char close)
{
	fputc(open, p->out);
	for (int i = 0; i < it->ncoord; i++) {
		if (i)
			fputs(", ", p->out);
		expr(p, op, it->coord[i].e);
		if (it->coord[i].len >= 0)
			fprintf(p->out, " : %lld", (long long)it->coord[i].len);
	}
	fputc(close, p->out);
}

static void
item(Printer *p, IrOp *op, const IrItem *it)
{
	switch (it->kind) {
	case IR_IT_VALUE:
		value(p, ir_op_value(op, it->opnd));
		if (it->suffix)
			coords(p, op, it, '[', ']');
		break;
	case IR_IT_SYMBOL:
		fprintf(p->out, "@%s", it->s);
		if (it->suffix)
			coords(p, op, it, '[', ']');
		break;
	case IR_IT_CALL:
		fprintf(p->out, "@%s", it->s);
		coords(p, op, it, '(', ')');
		break;
	case IR_IT_DECL:
		fprintf(p->out, "@%s(", it->s);
		for (int i = 0; i < it->nparam; i++) {
			if (i)
				fputs(", ", p->out);
			value(p, it->param[i]);
			fputs(": ", p->out);
			type(p, it->param[i]->type);
		}
		fputc(')', p->out);
		break;
	case IR_IT_INT:
		fprintf(p->out, "%lld", (long long)it->i);
		break;
	case IR_IT_FLOAT:
		ir_print_float(it->f, p->out);
		break;
	case IR_IT_EXPR:
		expr(p, op, it->e);
		break;
	case IR_IT_STRING:
		ir_print_string(it->s, p->out);
		break;
	case IR_IT_KEYWORD:
		fputs(it->s, p->out);
		break;
	default:
		ir_unreachable("bad item kind");
	}
	if (it->type && (it->kind == IR_IT_INT || it->kind == IR_IT_FLOAT)) {
		fputs(" : ", p->out);
		type(p, it->type);
	}
}

static void
groups(Printer *p, IrOp *op)
{
	for (int g = 0; g < op->ngroup; g++) {
		IrGroup *gr = &op->group[g];
		fprintf(p->out, " %s", gr->kw);
		if (!gr->nitem)
			continue;
		fputc('(', p->out);
		for (int i = 0; i < gr->nitem; i++) {
			if (i)
				fputs(", ", p->out);
			item(p, op, &gr->item[i]);
		}
		fputc(')', p->out);
	}
}

static void
attrs(Printer *p, IrOp *op)
{
	if (!op->nattr)
		return;
	fputs(" {", p->out);
	for (int i = 0; i < op->nattr; i++) {
		fprintf(p->out, "%s%s = ", i ? ", " : "", op->attr[i].name);
		attr(p, op->attr[i].attr);
	}
	fputc('}', p->out);
}

static void
types(Printer *p, int n, IrType **ts, IrValue *vs)
{
	fputs(" : ", p->out);
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", p->out);
		type(p, ts ? ts[i] : vs[i].type);
	}
}

static void print_op(Printer *p, IrOp *op, int ind);

static void
indent(Printer *p, int n)
{
	for (int i = 0; i < n; i++)
		fputs("  ", p->out);
}

/* Region 'r' of op: its block arguments are already defined by the caller. */
static void
region_body(Printer *p, IrOp *op, int r, int ind, bool elide_empty_yield)
{
	IrBlock *b = op->reg[r].block;
	fputs("{\n", p->out);
	scope_push(p);
	for (IrOp *o = b->first; o; o = o->next) {
		if (elide_empty_yield && o == b->last && o->code == IR_OP_YIELD && !o->nitem)
			break;
		print_op(p, o, ind + 1);
	}
	scope_pop(p);
	indent(p, ind);
	fputc('}', p->out);
}

static void
results(Printer *p, IrOp *op)
{
	if (!op->nres)
		return;
	for (int i = 0; i < op->nres; i++) {
		if (i)
			fputs(", ", p->out);
		value(p, &op->res[i]);
	}
	fputs(" = ", p->out);
}

static void
print_kernel(Printer *p, IrOp *op, int ind)
{
	IrBlock *b = op->reg[0].block;
	fprintf(p->out, "ave.kernel @%s(", op->item[0].s);
	scope_push(p);
	for (int i = 0; i < b->narg; i++) {
		define(p, b->arg[i]);
		if (i)
			fputs(", ", p->out);
		value(p, b->arg[i]);
		fputs(": ", p->out);
		type(p, b->arg[i]->type);
	}
	fputc(')', p->out);
	attrs(p, op);
	fputc(' ', p->out);
	region_body(p, op, 0, ind, false);
	scope_pop(p);
}

static void
print_for(Printer *p, IrOp *op, int ind)
{
	IrBlock *b = op->reg[0].block;
	results(p, op);
	fputs("ave.for ", p->out);
	scope_push(p);
	define(p, b->arg[0]);
	value(p, b->arg[0]);
	fputs(" = ", p->out);
	expr(p, op, op->item[0].e);
	fputs(" to ", p->out);
	expr(p, op, op->item[1].e);
	fputs(" step ", p->out);
	expr(p, op, op->item[2].e);
	if (op->nitem > 3) {
		fputs(" iter_args(", p->out);
		for (int i = 3; i < op->nitem; i++) {
			if (i > 3)
				fputs(", ", p->out);
			define(p, b->arg[i - 2]);
			value(p, b->arg[i - 2]);
			fputs(" = ", p->out);
			item(p, op, &op->item[i]);
		}
		fputs(") -> (", p->out);
		for (int i = 0; i < op->nres; i++) {
			if (i)
				fputs(", ", p->out);
			type(p, op->res[i].type);
		}
		fputc(')', p->out);
	}
	attrs(p, op);
	fputc(' ', p->out);
	region_body(p, op, 0, ind, op->nitem == 3);
	scope_pop(p);
}

static void
print_if(Printer *p, IrOp *op, int ind)
{
	results(p, op);
	fputs("ave.if ", p->out);
	item(p, op, &op->item[0]);
	if (op->nres) {
		fputs(" -> (", p->out);
		for (int i = 0; i < op->nres; i++) {
			if (i)
				fputs(", ", p->out);
			type(p, op->res[i].type);
		}
		fputc(')', p->out);
	}
	attrs(p, op);
	fputc(' ', p->out);
	region_body(p, op, 0, ind, !op->nres);
	if (op->nreg > 1) {
		fputs(" else ", p->out);
		region_body(p, op, 1, ind, !op->nres);
	}
}

static void
print_generic(Printer *p, IrOp *op, int ind)
{
	const IrOpInfo *info = ir_opinfo(p->c, op->code);
	results(p, op);
	fputs(info->name, p->out);
	if (op->mode)
		fprintf(p->out, " %s", op->mode);
	/* Declaration parameters are visible in the rest of the op (its groups). */
	bool decl = false;
	for (int i = 0; i < op->nitem; i++) {
		if (op->item[i].kind == IR_IT_DECL) {
			if (!decl)
				scope_push(p);
			decl = true;
			for (int k = 0; k < op->item[i].nparam; k++)
				define(p, op->item[i].param[k]);
		}
	}
	for (int i = 0; i < op->nitem; i++) {
		fputs(i ? ", " : " ", p->out);
		item(p, op, &op->item[i]);
	}
	groups(p, op);
	attrs(p, op);
	for (int r = 0; r < op->nreg; r++) {
		fputc(' ', p->out);
		region_body(p, op, r, ind, false);
	}
	if (decl)
		scope_pop(p);
	if (op->nres) {
		bool infer = false;
		if (info->traits & IR_TRAIT_TYPE_OPT) {
			IrType *t = op->res[0].type;
			infer = op->nres == 1 &&
				((op->code == IR_OP_INDEX && t == p->c->t_index) ||
				 (op->code == IR_OP_PHASE_NEXT && t == p->c->t_i1));
		}
		if (!infer)
			types(p, op->nres, NULL, op->res);
	} else if (op->code == IR_OP_YIELD) {
		/* A yield always states the types it yields. */
		if (op->nitem) {
			fputs(" : ", p->out);
			for (int i = 0; i < op->nitem; i++) {
				IrValue *v = ir_item_value(op, &op->item[i]);
				if (i)
					fputs(", ", p->out);
				if (v)
					type(p, v->type);
			}
		}
	} else if (op->ntype) {
		types(p, op->ntype, op->type, NULL);
	}
}

static void
print_index(Printer *p, IrOp *op)
{
	results(p, op);
	fputs("ave.index ", p->out);
	expr(p, op, op->item[0].e);
	if (op->res[0].type != p->c->t_index) {
		fputs(" : ", p->out);
		type(p, op->res[0].type);
	}
}

static void
print_op(Printer *p, IrOp *op, int ind)
{
	IrStr names[16], *nv = op->nres <= 16 ? names : ir_xalloc(p->c->al, sizeof(IrStr) * (size_t)op->nres);
	/* Siblings must not pick the same name: make each visible while choosing the next. */
	scope_push(p);
	for (int i = 0; i < op->nres; i++)
		make_visible(p, nv[i] = choose(p, &op->res[i]));
	scope_pop(p);
	indent(p, ind);
	switch (op->code) {
	case IR_OP_KERNEL:
		print_kernel(p, op, ind);
		break;
	case IR_OP_FOR:
		print_for(p, op, ind);
		break;
	case IR_OP_IF:
		print_if(p, op, ind);
		break;
	case IR_OP_INDEX:
		print_index(p, op);
		break;
	default:
		print_generic(p, op, ind);
	}
	if (p->o && p->o->locations && op->loc.line)
		fprintf(p->out, "  // %u:%u", op->loc.line, op->loc.col);
	fputc('\n', p->out);
	/* Results become visible after the op (not inside its regions). */
	for (int i = 0; i < op->nres; i++)
		make_visible(p, nv[i]);
	if (nv != names)
		ir_xfree(p->c->al, nv, sizeof(IrStr) * (size_t)op->nres);
}

static void
printer_init(Printer *p, IrModule *m, FILE *out, const IrPrintOpts *o)
{
	memset(p, 0, sizeof *p);
	p->m = m;
	p->c = m->ctx;
	p->out = out;
	p->o = o;
	p->alias_limit = m->aliases.len;
	ir_map_init(&p->names, p->c->al);
	ir_map_init(&p->typestr, p->c->al);
	ir_map_init(&p->visible, p->c->al);
}

static void
printer_free(Printer *p)
{
	ir_map_free(&p->names);
	ir_map_free(&p->typestr);
	ir_map_free(&p->visible);
	ir_vec_free(p->c->al, &p->undo, sizeof(IrStr));
	ir_vec_free(p->c->al, &p->marks, sizeof(int));
}

/* The results of an op print with names that depend on what precedes it; define them first
 * (in order) so that a single op prints as it would inside its module. */
static bool
define_all(IrOp *op, void *ud)
{
	Printer *p = ud;
	for (int i = 0; i < op->nres; i++)
		define(p, &op->res[i]);
	for (int i = 0; i < op->nitem; i++)
		for (int k = 0; k < op->item[i].nparam; k++)
			define(p, op->item[i].param[k]);
	for (int r = 0; r < op->nreg; r++)
		for (int a = 0; a < op->reg[r].block->narg; a++)
			define(p, op->reg[r].block->arg[a]);
	return true;
}

void
ir_module_print(IrModule *m, FILE *out, const IrPrintOpts *o)
{
	Printer p;
	printer_init(&p, m, out, o);
	if (!(o && o->generic)) {
		for (int i = 0; i < m->aliases.len; i++) {
			IrAlias *a = &IR_VEC_AT(m->aliases, IrAlias, i);
			p.alias_limit = i;
			if (a->is_type) {
				fprintf(out, "!%s = ", a->name);
				type(&p, a->type);
			} else {
				fprintf(out, "#%s = ", a->name);
				attr(&p, a->attr);
			}
			fputc('\n', out);
		}
		p.alias_limit = m->aliases.len;
		if (m->aliases.len && m->body->first)
			fputc('\n', out);
	} else {
		p.alias_limit = 0;
	}
	for (IrOp *op = m->body->first; op; op = op->next) {
		print_op(&p, op, 0);
		if (op->next)
			fputc('\n', out);
	}
	printer_free(&p);
}

void
ir_op_print(IrModule *m, IrOp *op, FILE *out, int ind)
{
	Printer p;
	printer_init(&p, m, out, NULL);
	IrOp *k = ir_kernel_of(op);
	if (k && k != op) {
		/* Name everything in the kernel the way the module printer would, near enough. */
		for (int a = 0; a < k->reg[0].block->narg; a++)
			define(&p, k->reg[0].block->arg[a]);
		ir_walk(k->reg[0].block, define_all, &p);
	}
	print_op(&p, op, ind);
	printer_free(&p);
}

char *
ir_op_str(IrModule *m, IrOp *op)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		ir_unreachable("open_memstream failed");
	ir_op_print(m, op, f, 0);
	fclose(f);
	/* First line only: enough to name the op in a message. */
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	char *s = ir_ctx_strdup(m->ctx, buf);
	free(buf);
	return s;
}
