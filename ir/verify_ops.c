/* verify_ops.c — the per-op verifier hooks named in ops.def (SPEC §5). The generic verifier has
 * already checked the op's shape (items, groups, modes, result and region counts), placement,
 * visibility and index-expression leaves; a hook checks types and values. */
#include <string.h>

#include "ir.h"
#include "../regalloc/regalloc.h"

#define ERR(loc, ...) (ir_error(c, (loc), __VA_ARGS__), false)

static const char *
ts(IrCtx *c, const IrType *t)
{
	return ir_type_str(c, t);
}

static const char *
opname(const IrOp *op)
{
	return ir_op_name(op->code);
}

static const char *
vn(const IrValue *v)
{
	return v && v->name ? v->name : "<unnamed>";
}

static IrType *
rtype(const IrOp *op)
{
	return op->res[0].type;
}

static IrValue *
ival(const IrOp *op, int i)
{
	return ir_item_value(op, &op->item[i]);
}

/* A constant index expression item (after folding); reports what it is for. */
static bool
const_item(IrCtx *c, const IrItem *it, int64_t *out, const char *what)
{
	if (it->kind == IR_IT_EXPR && ir_expr_eval_const(it->e, out))
		return true;
	if (it->kind == IR_IT_INT) {
		*out = it->i;
		return true;
	}
	return ERR(it->loc, "%s must be a constant", what);
}

static bool
group_const(IrCtx *c, const IrOp *op, IrStr kw, int idx, int64_t *out, const char *what)
{
	IrGroup *g = ir_op_group(op, kw);
	if (!g)
		return false;
	return const_item(c, &g->item[idx], out, what);
}

static IrAttr *
attr_of(const IrOp *op, IrStr name)
{
	return ir_op_attr(op, name);
}

/* ---- target facts: the registry (targets.def); the backends own the instructions ---- */

static const TargetInfo *
target_facts(const char *name)
{
	return target_find(name);
}

static const char *
kernel_target(IrCtx *c, IrOp *op)
{
	IrOp *k = ir_kernel_of(op);
	IrAttr *t = k ? attr_of(k, c->kw.target) : NULL;
	return t && t->kind == IR_ATTR_STR ? t->s : NULL;
}

/* ---- addresses: `%tensor[coords]`, `@symm[coords]`, `%ring[slot]`, `%smem`, `%mbar[i]` ---- */

enum { A_TENSOR = 1, A_SMEM = 2, A_MBAR = 4 };

typedef struct Addr {
	int kind;
	IrType *type; /* tensor type, smem tile type, or mbar type */
	IrOp *sym;    /* symm.alloc for symbol addresses */
	IrValue *base;
} Addr;

static const char *
addr_kinds(int allowed)
{
	switch (allowed) {
	case A_TENSOR:
		return "a tensor or symmetric buffer";
	case A_SMEM:
		return "a shared-memory tile or ring slot";
	case A_MBAR:
		return "a barrier";
	case A_TENSOR | A_SMEM:
		return "a tensor or a shared-memory tile";
	default:
		return "an address";
	}
}

static bool
index_in_range(IrCtx *c, const IrOp *op, const IrItem *it, int64_t n, const char *what,
	       const IrValue *base)
{
	int64_t lo, hi;
	if (ir_expr_range(op, it->coord[0].e, &lo, &hi) && (lo < 0 || hi >= n)) {
		if (lo == hi)
			return ERR(it->loc, "%s index %lld is out of range for '%%%s' (%lld %s)", what,
				   (long long)lo, vn(base), (long long)n, what[0] == 'b' ? "barriers" : "slots");
		return ERR(it->loc, "%s index in [%lld, %lld] may be out of range for '%%%s' (%lld %s)",
			   what, (long long)lo, (long long)hi, vn(base), (long long)n,
			   what[0] == 'b' ? "barriers" : "slots");
	}
	return true;
}

/* Range coordinates (`x : n`): only where the op takes them, n >= 1, and within the dimension
 * when it is static (for some value of x). */
static bool
coord_ranges(IrCtx *c, IrOp *op, const IrItem *it, const IrType *t, bool ranges_ok)
{
	(void)c;
	for (int i = 0; i < it->ncoord; i++) {
		int64_t n = it->coord[i].len, lo, hi;
		if (n < 0)
			continue;
		if (!ranges_ok)
			return ERR(it->loc, "'%s' does not take a range coordinate", opname(op));
		if (n < 1)
			return ERR(it->loc, "a range coordinate needs at least one element, found ': %lld'",
				   (long long)n);
		int64_t d = t->dims[i];
		if (d != IR_DYN && (n > d || (ir_expr_range(op, it->coord[i].e, &lo, &hi) &&
					      (hi < 0 || lo > d - n))))
			return ERR(it->loc, "range %d (': %lld') never fits dimension %d of size %lld", i,
				   (long long)n, i, (long long)d);
	}
	return true;
}

static bool
addr(IrCtx *c, IrOp *op, const IrItem *it, int allowed, bool ranges_ok, Addr *a)
{
	memset(a, 0, sizeof *a);
	if (it->kind == IR_IT_SYMBOL) {
		IrOp *s = ir_symbol_lookup(c, op, it->s);
		if (!s)
			return ERR(it->loc, "use of undefined symbol '@%s'", it->s);
		if (s->code != IR_OP_SYMM_ALLOC || !(allowed & A_TENSOR))
			return ERR(it->loc, "'%s' expects %s, found '@%s' ('%s')", opname(op),
				   addr_kinds(allowed), it->s, opname(s));
		a->kind = A_TENSOR;
		a->type = s->ntype ? s->type[0] : NULL;
		a->sym = s;
		if (!a->type || a->type->kind != IR_TY_TENSOR)
			return ERR(it->loc, "'@%s' has no tensor type (declare it as 'ave.symm.alloc @%s : "
				   "!ave.tensor<...>')", it->s, it->s);
		if (!it->suffix || it->ncoord != a->type->rank)
			return ERR(it->loc, "'@%s' has rank %d; expected %d coordinates, found %d", it->s,
				   a->type->rank, a->type->rank, it->suffix ? it->ncoord : 0);
		return coord_ranges(c, op, it, a->type, ranges_ok);
	}
	IrValue *v = ir_item_value(op, it);
	if (!v)
		return ERR(it->loc, "'%s' expects %s", opname(op), addr_kinds(allowed));
	IrType *t = v->type;
	a->base = v;
	switch (t->kind) {
	case IR_TY_TENSOR:
		if (!(allowed & A_TENSOR))
			break;
		a->kind = A_TENSOR;
		a->type = t;
		if (!it->suffix || it->ncoord != t->rank)
			return ERR(it->loc, "'%%%s' has rank %d; expected %d coordinates, found %d", vn(v),
				   t->rank, t->rank, it->suffix ? it->ncoord : 0);
		return coord_ranges(c, op, it, t, ranges_ok);
	case IR_TY_RING:
		if (!(allowed & A_SMEM))
			break;
		a->kind = A_SMEM;
		a->type = t->elem;
		if (!it->suffix || it->ncoord != 1)
			return ERR(it->loc, "ring '%%%s' needs one slot index, as in '%%%s[%%slot]'", vn(v),
				   vn(v));
		return index_in_range(c, op, it, t->n, "slot", v);
	case IR_TY_TILE:
		if (t->space != IR_SPACE_SMEM || !(allowed & A_SMEM))
			break;
		a->kind = A_SMEM;
		a->type = t;
		if (it->suffix)
			return ERR(it->loc, "shared-memory tile '%%%s' takes no index", vn(v));
		return true;
	case IR_TY_MBAR:
		if (!(allowed & A_MBAR))
			break;
		a->kind = A_MBAR;
		a->type = t;
		if (!it->suffix) {
			if (t->n != 1)
				return ERR(it->loc, "'%%%s' holds %lld barriers; name one, as in '%%%s[%%i]'",
					   vn(v), (long long)t->n, vn(v));
			return true;
		}
		if (it->ncoord != 1)
			return ERR(it->loc, "a barrier takes one index, found %d", it->ncoord);
		return index_in_range(c, op, it, t->n, "barrier", v);
	default:
		break;
	}
	return ERR(it->loc, "'%s' expects %s, found '%%%s' of type '%s'", opname(op),
		   addr_kinds(allowed), vn(v), ts(c, t));
}

static bool
static_shape(IrCtx *c, IrLoc loc, const IrType *t)
{
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] == IR_DYN)
			return ERR(loc, "tile type '%s' must have a static shape", ts(c, t));
	return true;
}

static bool
same_shape(const IrType *a, const IrType *b)
{
	return a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

static bool
reg_tile(IrCtx *c, IrLoc loc, const IrType *t, const char *what)
{
	if (!ir_type_is_reg_tile(t))
		return ERR(loc, "%s must be a register tile, found '%s'", what, ts(c, t));
	return static_shape(c, loc, t);
}

static bool
check_layout(IrCtx *c, IrLoc loc, const IrType *t)
{
	IrAttr *l = t->layout;
	if (!l)
		return true;
	if (l->kind != IR_ATTR_AVE)
		return ERR(loc, "layout of '%s' must be an '#ave.' attribute", ts(c, t));
	if (t->space == IR_SPACE_SMEM) {
		if (l->s == c->kw.pad) {
			if (!l->int_form || l->i < 0 || l->i > ((int64_t)1 << 20))
				return ERR(loc, "'#ave.pad<n>' needs an element count in [0, 2^20]");
			return true;
		}
		if (l->s != c->kw.smem)
			return ERR(loc, "shared-memory tile takes '#ave.smem<...>' or '#ave.pad<n>', found '#ave.%s'",
				   l->s);
		for (int i = 0; i < l->n; i++) {
			IrAttr *v = l->elts[i];
			if (l->keys[i] == c->kw.swizzle) {
				if (v->kind != IR_ATTR_INT ||
				    (v->i != 0 && v->i != 32 && v->i != 64 && v->i != 128))
					return ERR(loc, "swizzle must be 0, 32, 64 or 128");
				int64_t row = t->rank ? t->dims[t->rank - 1] * ir_type_elem_bits(t) / 8 : 0;
				if (v->i && row % v->i)
					return ERR(loc, "a %lld-byte swizzle needs rows that are a multiple of "
						   "%lld bytes; '%s' has %lld-byte rows",
						   (long long)v->i, (long long)v->i, ts(c, t), (long long)row);
			} else if (l->keys[i] == c->kw.order) {
				if (v->kind != IR_ATTR_ARRAY || v->n != t->rank)
					return ERR(loc, "order must list the %d dimensions", t->rank);
				unsigned seen = 0;
				for (int k = 0; k < v->n; k++) {
					if (v->elts[k]->kind != IR_ATTR_INT || v->elts[k]->i < 0 ||
					    v->elts[k]->i >= t->rank || (seen & (1u << v->elts[k]->i)))
						return ERR(loc, "order must be a permutation of the dimensions");
					seen |= 1u << v->elts[k]->i;
				}
			} else {
				return ERR(loc, "unknown key '%s' in '#ave.smem'", l->keys[i]);
			}
		}
		return true;
	}
	if (l->s != c->kw.reg)
		return ERR(loc, "register tile takes '#ave.reg<...>', found '#ave.%s'", l->s);
	if (!l->kw || (l->kw != c->kw.blocked && l->kw != c->kw.mma_acc && l->kw != c->kw.mma_a &&
		       l->kw != c->kw.mma_b))
		return ERR(loc, "'#ave.reg' kind must be blocked, mma_acc, mma_a or mma_b");
	if (l->kw != c->kw.blocked && t->rank != 2)
		return ERR(loc, "'#ave.reg<%s>' is an MMA layout and needs a 2-D tile, found '%s'", l->kw,
			   ts(c, t));
	/* The target chooses instruction shapes and warp arrangements: no parameters yet. */
	if (l->n)
		return ERR(loc, "unknown key '%s' in '#ave.reg' (it takes only a kind: the target "
			   "chooses the instruction shape)", l->keys[0]);
	return true;
}

bool
ir_check_type(IrCtx *c, IrLoc loc, const IrType *t)
{
	/* Limits that keep every size in 64-bit arithmetic: tiles of at most 2^31 elements,
	 * tensors of at most 2^48 elements (static dimensions and strides), rings and barrier
	 * arrays of at most 2^16 entries. */
	const int64_t tile_max = (int64_t)1 << 31, tensor_max = (int64_t)1 << 48;
	int64_t n = 1;
	switch (t->kind) {
	case IR_TY_TILE:
		if (t->rank < 1 || t->rank > 3)
			return ERR(loc, "tiles have 1 to 3 dimensions, '%s' has %d", ts(c, t), t->rank);
		if (!static_shape(c, loc, t))
			return false;
		for (int i = 0; i < t->rank; i++)
			if (t->dims[i] > tile_max / (n ? n : 1) || (n *= t->dims[i]) > tile_max)
				return ERR(loc, "tile '%s' has more than 2^31 elements", ts(c, t));
		return check_layout(c, loc, t);
	case IR_TY_TENSOR:
		for (int i = 0; i < t->rank; i++) {
			if (t->dims[i] != IR_DYN &&
			    (t->dims[i] > tensor_max / (n ? n : 1) || (n *= t->dims[i]) > tensor_max))
				return ERR(loc, "tensor '%s' has more than 2^48 elements", ts(c, t));
			if (t->strides && t->strides[i] != IR_DYN &&
			    (t->strides[i] > tensor_max || t->strides[i] < -tensor_max))
				return ERR(loc, "tensor '%s' has a stride beyond 2^48 elements", ts(c, t));
		}
		return true;
	case IR_TY_RING:
		if (t->n < 1)
			return ERR(loc, "a ring needs at least one slot");
		if (t->n > 65536)
			return ERR(loc, "a ring has at most 2^16 slots, '%s' has %lld", ts(c, t), (long long)t->n);
		if (t->elem->kind != IR_TY_TILE || t->elem->space != IR_SPACE_SMEM)
			return ERR(loc, "ring slots must be shared-memory tiles, found '%s'", ts(c, t->elem));
		return ir_check_type(c, loc, t->elem);
	case IR_TY_MBAR:
		if (t->n < 1)
			return ERR(loc, "'!ave.mbar' needs at least one barrier");
		if (t->n > 65536)
			return ERR(loc, "'!ave.mbar' has at most 2^16 barriers, found %lld", (long long)t->n);
		return true;
	default:
		return true;
	}
}

static bool
check_result_types(IrCtx *c, IrOp *op)
{
	for (int i = 0; i < op->nres; i++)
		if (!ir_check_type(c, op->loc, op->res[i].type))
			return false;
	return true;
}

/* ---- structure ---- */

bool
v_module(IrCtx *c, IrOp *op)
{
	for (int i = 0; i < op->nattr; i++) {
		IrNamedAttr *a = &op->attr[i];
		if (a->name == c->kw.world && (a->attr->kind != IR_ATTR_INT || a->attr->i < 1))
			return ERR(a->loc, "'world' must be a positive integer");
	}
	return true;
}

static bool
kernel_arg_ok(IrCtx *c, IrValue *a)
{
	IrType *t = a->type;
	if (t->kind == IR_TY_TENSOR) {
		if (t->space != IR_SPACE_GLOBAL)
			return ERR(a->loc, "kernel argument '%%%s' must be a global tensor; symmetric buffers "
				   "are declared with 'ave.symm.alloc'", vn(a));
		if (!ir_type_is_scalar(t->elem))
			return ERR(a->loc, "tensor element type must be a scalar");
		return true;
	}
	if (t->kind == IR_TY_PTR || ir_type_is_scalar(t))
		return true;
	return ERR(a->loc, "kernel argument '%%%s' has type '%s'; expected a tensor, a pointer or a "
		   "scalar", vn(a), ts(c, t));
}

bool
v_kernel(IrCtx *c, IrOp *op)
{
	IrBlock *b = op->reg[0].block;
	for (int i = 0; i < b->narg; i++)
		if (!kernel_arg_ok(c, b->arg[i]))
			return false;
	IrAttr *threads = attr_of(op, c->kw.threads);
	if (!threads)
		return ERR(op->loc, "kernel '@%s' needs a 'threads' attribute", op->item[0].s);
	IrLoc tloc = op->loc;
	for (int i = 0; i < op->nattr; i++)
		if (op->attr[i].name == c->kw.threads && op->attr[i].loc.line)
			tloc = op->attr[i].loc;
	if (threads->kind != IR_ATTR_INT || threads->i < 1 || threads->i > 1024 || threads->i % 32)
		return ERR(tloc, "'threads' must be a multiple of 32 in [32, 1024]");
	for (int i = 0; i < op->nattr; i++) {
		IrNamedAttr *a = &op->attr[i];
		if (a->name == c->kw.target) {
			if (a->attr->kind != IR_ATTR_STR || !target_facts(a->attr->s))
			{
				char names[256] = "";
				for (int t = 0; t < TARGET_COUNT; t++)
					snprintf(names + strlen(names), sizeof names - strlen(names), "%s\"%s\"",
						 t ? ", " : "", target_table[t].name);
				const char *near =
				    a->attr->kind == IR_ATTR_STR ? target_closest(a->attr->s, TARGET_ALL) : NULL;
				if (near)
					return ERR(a->loc, "unknown target; did you mean \"%s\"? (expected one of %s)",
						   near, names);
				return ERR(a->loc, "unknown target; expected one of %s", names);
			}
			const TargetInfo *f = target_facts(a->attr->s);
			if (threads->i % f->warp)
				return ERR(op->loc, "'threads' = %lld is not a whole number of %d-thread "
					   "warps on target '%s'", (long long)threads->i, f->warp, f->name);
		} else if (a->name == c->kw.persistent) {
			if (a->attr->kind != IR_ATTR_INT || a->attr->i < 1)
				return ERR(a->loc, "'persistent' must be a positive integer");
		} else if (a->name == c->kw.gathered) {
			/* The launch gathers every rank's chunk into every rank (docs/passes.md). */
			IrOp *ch = a->attr->kind == IR_ATTR_SYM ? ir_symbol_lookup(c, op, a->attr->s)
			                                        : NULL;
			IrOp *mod = ir_op_parent_op(op);
			IrAttr *w = mod && mod->code == IR_OP_MODULE ? attr_of(mod, c->kw.world) : NULL;
			if (!ch || ch->code != IR_OP_CHUNK || ch->item[0].nparam != 1)
				return ERR(a->loc, "'gathered' must name an 'ave.chunk' of one index");
			if (!w || w->kind != IR_ATTR_INT)
				return ERR(a->loc, "'gathered = @%s' needs the module's 'world' (a chunk per "
					   "rank)", a->attr->s);
			/* What the launch copies: rank q's chunk q, rows of contiguous elements inside
			 * its buffer, and a 4- or 8-byte integer signal slot inside its own. */
			for (int64_t q = 0; q < w->i; q++) {
				IrChunkBox r, sl;
				char err[512];
				if (!ir_gathered_chunk(c, ch, q, &r, &sl, err, sizeof err))
					return ERR(a->loc, "'gathered = @%s': %s", a->attr->s, err);
			}
		} else if (a->name == c->kw.overlap || a->name == c->kw.overlap_operand) {
			if (a->attr->kind != IR_ATTR_SYM)
				return ERR(a->loc, "'%s' must be a symbol", a->name);
			IrOp *s = ir_symbol_lookup(c, op, a->attr->s);
			IrOpcode want = a->name == c->kw.overlap ? IR_OP_CHUNK_SCHEDULE : IR_OP_SYMM_ALLOC;
			if (!s)
				return ERR(a->loc, "use of undefined symbol '@%s'", a->attr->s);
			if (s->code != want)
				return ERR(a->loc, "'%s' must name an '%s', found '%s'", a->name,
					   ir_op_name(want), opname(s));
		}
	}
	IrAttr *ov = attr_of(op, c->kw.overlap), *ovo = attr_of(op, c->kw.overlap_operand);
	if ((ov == NULL) != (ovo == NULL))
		return ERR(op->loc, "'overlap' and 'overlap_operand' go together");
	if (ov) {
		/* The operand is the buffer whose chunks the schedule moves (SPEC 5.9). */
		IrOp *sch = ir_symbol_lookup(c, op, ov->s);
		IrGroup *f = sch ? ir_op_group(sch, c->kw.for_) : NULL;
		IrOp *ch = f ? ir_symbol_lookup(c, sch, f->item[0].s) : NULL;
		IrGroup *r = ch && ch->code == IR_OP_CHUNK ? ir_op_group(ch, c->kw.region) : NULL;
		if (r && r->item[0].kind == IR_IT_SYMBOL && r->item[0].s != ovo->s)
			return ERR(op->loc, "'overlap_operand = @%s' is not the buffer schedule '@%s' moves "
				   "(its chunk '@%s' covers '@%s')", ovo->s, ov->s, ch->item[0].s,
				   r->item[0].s);
	}
	return true;
}

bool
v_return(IrCtx *c, IrOp *op)
{
	(void)c;
	(void)op;
	return true;
}

/* ---- scalars ---- */

static bool
literal_fits(IrCtx *c, const IrItem *it, const IrType *t)
{
	IrType *e = ir_type_elem((IrType *)t);
	if (it->kind == IR_IT_FLOAT) {
		if (!ir_type_is_float(e))
			return ERR(it->loc, "float literal for integer type '%s'", ts(c, e));
		return true;
	}
	if (it->kind != IR_IT_INT)
		return true;
	if (ir_type_is_float(e))
		return true;
	int bits = e->bits;
	if (bits == 1) {
		if (it->i != 0 && it->i != 1)
			return ERR(it->loc, "integer literal %lld does not fit 'i1' (use 0 or 1)",
				   (long long)it->i);
		return true;
	}
	if (bits < 64) {
		int64_t lo = -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << bits) - 1;
		if (it->i < lo || it->i > hi)
			return ERR(it->loc, "integer literal %lld does not fit '%s'", (long long)it->i,
				   ts(c, e));
	}
	return true;
}

bool
v_const(IrCtx *c, IrOp *op)
{
	IrType *t = rtype(op);
	if (!ir_type_is_scalar(t))
		return ERR(op->loc, "'ave.const' makes a scalar, found '%s' (use 'ave.full' for tiles)",
			   ts(c, t));
	return literal_fits(c, &op->item[0], t);
}

bool
v_index(IrCtx *c, IrOp *op)
{
	IrType *t = rtype(op);
	if (!ir_type_is_int(t))
		return ERR(op->loc, "'ave.index' result must be an integer or index, found '%s'", ts(c, t));
	if (ir_expr_is_cmp(op->item[0].e) && t != c->t_i1)
		return ERR(op->loc, "a comparison yields 'i1', found result type '%s'", ts(c, t));
	return true;
}

static bool
dim_const(IrCtx *c, IrOp *op, int rank, int64_t *d)
{
	if (!group_const(c, op, c->kw.dim, 0, d, "'dim'"))
		return false;
	if (*d < 0 || *d >= rank)
		return ERR(ir_op_group(op, c->kw.dim)->loc, "dim(%lld) is out of range [0, %d)",
			   (long long)*d, rank);
	return true;
}

bool
v_program_id(IrCtx *c, IrOp *op)
{
	int64_t d;
	if (!dim_const(c, op, 3, &d))
		return false;
	if (!ir_type_is_int(rtype(op)))
		return ERR(op->loc, "'%s' result must be an integer or index, found '%s'", opname(op),
			   ts(c, rtype(op)));
	IrOp *k = ir_kernel_of(op);
	if (op->code == IR_OP_PROGRAM_ID && k && ir_op_attr(k, c->kw.persistent) &&
	    ir_kernel_walks(k))
		return ERR(op->loc, "'ave.program_id' in a persistent kernel that walks its tiles "
			   "itself (it reads 'ave.cta_id' or 'ave.num_ctas'): the tile's coordinates "
			   "come from the walk's variable");
	return true;
}

bool
v_index_result(IrCtx *c, IrOp *op)
{
	if (!ir_type_is_int(rtype(op)))
		return ERR(op->loc, "'%s' result must be an integer or index, found '%s'", opname(op),
			   ts(c, rtype(op)));
	return true;
}

/* ave.cta_id / ave.num_ctas: the CTA and the CTAs launched of a persistent kernel, which then
 * walks the logical grid's tiles itself. */
bool
v_cta_id(IrCtx *c, IrOp *op)
{
	IrOp *k = ir_kernel_of(op);
	if (k && !ir_op_attr(k, c->kw.persistent))
		return ERR(op->loc, "'%s' is only in a persistent kernel ('persistent = N'); "
			   "elsewhere a CTA is 'ave.program_id'", opname(op));
	return v_index_result(c, op);
}

bool
v_cdiv(IrCtx *c, IrOp *op)
{
	IrType *t = rtype(op);
	if (!ir_type_is_int(t))
		return ERR(op->loc, "'ave.cdiv' works on integers, found '%s'", ts(c, t));
	for (int i = 0; i < 2; i++) {
		IrValue *v = ival(op, i);
		if (v && v->type != t)
			return ERR(op->item[i].loc, "operand '%%%s' has type '%s'; expected '%s'", vn(v),
				   ts(c, v->type), ts(c, t));
		if (!v && !literal_fits(c, &op->item[i], t))
			return false;
	}
	if (op->item[1].kind == IR_IT_INT && op->item[1].i <= 0)
		return ERR(op->item[1].loc, "'ave.cdiv' divisor must be positive");
	return true;
}

/* Operands of elementwise ops: values of the result type T, or scalars of T's element type
 * (applied to every element), or literals; at least one value. */
static bool
elementwise_operands(IrCtx *c, IrOp *op, int first, IrType *t)
{
	bool any = false;
	IrType *e = ir_type_elem(t);
	if (!ir_type_is_scalar(t) && !ir_type_is_reg_tile(t))
		return ERR(op->loc, "'%s' works on scalars and register tiles, found '%s'", opname(op),
			   ts(c, t));
	if (!ir_check_type(c, op->loc, t))
		return false;
	for (int i = first; i < op->nitem; i++) {
		IrValue *v = ival(op, i);
		if (!v) {
			if (!literal_fits(c, &op->item[i], t))
				return false;
			continue;
		}
		any = true;
		if (v->type == t || v->type == e)
			continue;
		if (ir_type_is_reg_tile(v->type) && ir_type_is_reg_tile(t) && same_shape(v->type, t) &&
		    v->type->elem == e)
			continue; /* same tile up to layout */
		if (ir_type_is_reg_tile(v->type) && ir_type_is_reg_tile(t) && !same_shape(v->type, t))
			return ERR(op->item[i].loc,
				   "operand '%%%s' has shape '%s' but the result is '%s'; use 'ave.bcast' "
				   "to repeat a size-1 dimension", vn(v), ts(c, v->type), ts(c, t));
		if (t == e)
			return ERR(op->item[i].loc, "operand '%%%s' has type '%s'; expected '%s'", vn(v),
				   ts(c, v->type), ts(c, t));
		return ERR(op->item[i].loc, "operand '%%%s' has type '%s'; expected '%s' or '%s'", vn(v),
			   ts(c, v->type), ts(c, t), ts(c, e));
	}
	if (!any)
		return ERR(op->loc, "'%s' needs at least one value operand", opname(op));
	return true;
}

bool
v_binary(IrCtx *c, IrOp *op)
{
	return elementwise_operands(c, op, 0, rtype(op));
}

bool
v_binary_int(IrCtx *c, IrOp *op)
{
	if (!ir_type_is_int(ir_type_elem(rtype(op))))
		return ERR(op->loc, "'%s' works on integers, found '%s'", opname(op), ts(c, rtype(op)));
	return elementwise_operands(c, op, 0, rtype(op));
}

bool
v_unary(IrCtx *c, IrOp *op)
{
	IrValue *v = ival(op, 0);
	if (v->type != rtype(op))
		return ERR(op->loc, "'%s' result type '%s' differs from operand type '%s'", opname(op),
			   ts(c, rtype(op)), ts(c, v->type));
	return elementwise_operands(c, op, 0, rtype(op));
}

bool
v_unary_float(IrCtx *c, IrOp *op)
{
	if (!ir_type_is_float(ir_type_elem(rtype(op))))
		return ERR(op->loc, "'%s' works on floats, found '%s'", opname(op), ts(c, rtype(op)));
	return v_unary(c, op);
}

bool
v_fma(IrCtx *c, IrOp *op)
{
	if (!ir_type_is_float(ir_type_elem(rtype(op))))
		return ERR(op->loc, "'ave.fma' works on floats, found '%s'", ts(c, rtype(op)));
	return elementwise_operands(c, op, 0, rtype(op));
}

bool
v_cmp(IrCtx *c, IrOp *op)
{
	IrType *r = rtype(op);
	IrType *operand = NULL;
	for (int i = 0; i < 2 && !operand; i++) {
		IrValue *v = ival(op, i);
		if (v && ir_type_is_reg_tile(v->type))
			operand = v->type;
	}
	for (int i = 0; i < 2 && !operand; i++) {
		IrValue *v = ival(op, i);
		if (v)
			operand = v->type;
	}
	if (!operand)
		return ERR(op->loc, "'ave.cmp' needs at least one value operand");
	if (ir_type_is_reg_tile(operand)) {
		if (!ir_type_is_reg_tile(r) || !same_shape(r, operand) || r->elem != c->t_i1)
			return ERR(op->loc, "'ave.cmp' on '%s' yields a tile of 'i1' of the same shape, "
				   "found '%s'", ts(c, operand), ts(c, r));
	} else if (r != c->t_i1) {
		return ERR(op->loc, "'ave.cmp' on scalars yields 'i1', found '%s'", ts(c, r));
	}
	return elementwise_operands(c, op, 0, operand);
}

bool
v_select(IrCtx *c, IrOp *op)
{
	IrType *t = rtype(op);
	IrValue *cond = ival(op, 0);
	bool ok = cond->type == c->t_i1 ||
		  (ir_type_is_reg_tile(cond->type) && ir_type_is_reg_tile(t) &&
		   cond->type->elem == c->t_i1 && same_shape(cond->type, t));
	if (!ok)
		return ERR(op->loc, "'ave.select' condition must be 'i1' or a tile of 'i1' shaped like "
			   "the result, found '%s'", ts(c, cond->type));
	return elementwise_operands(c, op, 1, t);
}

bool
v_cvt(IrCtx *c, IrOp *op)
{
	IrType *from = ival(op, 0)->type, *to = rtype(op);
	if (ir_type_is_scalar(from) && ir_type_is_scalar(to))
		return true;
	if (ir_type_is_reg_tile(from) && ir_type_is_reg_tile(to)) {
		if (!same_shape(from, to))
			return ERR(op->loc, "'ave.cvt' keeps the shape: '%s' to '%s'", ts(c, from), ts(c, to));
		return ir_check_type(c, op->loc, to);
	}
	return ERR(op->loc, "'ave.cvt' converts a scalar to a scalar or a register tile to a register "
		   "tile, found '%s' to '%s'", ts(c, from), ts(c, to));
}

bool
v_bcast(IrCtx *c, IrOp *op)
{
	IrType *from = ival(op, 0)->type, *to = rtype(op);
	if (!reg_tile(c, op->loc, from, "'ave.bcast' operand") ||
	    !reg_tile(c, op->loc, to, "'ave.bcast' result"))
		return false;
	int64_t d;
	if (!dim_const(c, op, from->rank, &d))
		return false;
	if (to->rank != from->rank || to->elem != from->elem)
		return ERR(op->loc, "'ave.bcast' keeps rank and element type: '%s' to '%s'", ts(c, from),
			   ts(c, to));
	if (from->dims[d] != 1)
		return ERR(op->loc, "'ave.bcast' repeats a size-1 dimension, but dim %lld of '%s' is %lld",
			   (long long)d, ts(c, from), (long long)from->dims[d]);
	for (int i = 0; i < to->rank; i++)
		if (i != d && to->dims[i] != from->dims[i])
			return ERR(op->loc, "'ave.bcast' changes only dim %lld: '%s' to '%s'", (long long)d,
				   ts(c, from), ts(c, to));
	return ir_check_type(c, op->loc, to);
}

/* ---- control flow ---- */

static bool
yield_matches(IrCtx *c, IrOp *owner, IrBlock *b)
{
	IrOp *y = b->last;
	if (y->nitem != owner->nres)
		return ERR(y->loc, "'ave.yield' yields %d value%s; '%s' has %d result%s", y->nitem,
			   y->nitem == 1 ? "" : "s", opname(owner), owner->nres, owner->nres == 1 ? "" : "s");
	for (int i = 0; i < y->nitem; i++) {
		IrValue *v = ir_item_value(y, &y->item[i]);
		if (v->type != owner->res[i].type)
			return ERR(y->loc, "'ave.yield' value %d '%%%s' has type '%s'; expected '%s'", i + 1,
				   vn(v), ts(c, v->type), ts(c, owner->res[i].type));
	}
	return true;
}

bool
v_for(IrCtx *c, IrOp *op)
{
	IrBlock *b = op->reg[0].block;
	int ninit = op->nitem - 3;
	if (b->narg != ninit + 1 || op->nres != ninit)
		return ERR(op->loc, "'ave.for' has %d iter_args, %d results and %d region arguments",
			   ninit, op->nres, b->narg - 1);
	if (b->arg[0]->type != c->t_index)
		return ERR(op->loc, "the induction variable must be 'index'");
	int64_t lo, hi;
	if (ir_expr_range(op, op->item[2].e, &lo, &hi) && hi <= 0) {
		if (lo == hi)
			return ERR(op->item[2].loc, "'ave.for' step must be positive, found %lld",
				   (long long)lo);
		return ERR(op->item[2].loc, "'ave.for' step must be positive, found one in [%lld, %lld]",
			   (long long)lo, (long long)hi);
	}
	for (int i = 0; i < ninit; i++) {
		const IrItem *it = &op->item[3 + i];
		IrType *t = op->res[i].type;
		if (b->arg[i + 1]->type != t)
			return ERR(op->loc, "iter_arg %d has type '%s' but the result has '%s'", i + 1,
				   ts(c, b->arg[i + 1]->type), ts(c, t));
		IrValue *v = ir_item_value(op, it);
		if (v && v->type != t)
			return ERR(it->loc, "initial value '%%%s' of iter_arg %d has type '%s'; expected '%s'",
				   vn(v), i + 1, ts(c, v->type), ts(c, t));
		if (it->type && it->type != t)
			return ERR(it->loc, "initial value of iter_arg %d is typed '%s'; expected '%s'", i + 1,
				   ts(c, it->type), ts(c, t));
		if (!v) {
			if (!ir_type_is_scalar(t))
				return ERR(it->loc, "a literal initial value needs a scalar type, found '%s'",
					   ts(c, t));
			if (!literal_fits(c, it, t))
				return false;
		}
		if (!ir_check_type(c, op->loc, t))
			return false;
	}
	IrAttr *st = attr_of(op, c->kw.stages);
	if (st && (st->kind != IR_ATTR_INT || st->i < 1))
		return ERR(op->loc, "'stages' must be a positive integer");
	return yield_matches(c, op, b);
}

bool
v_if(IrCtx *c, IrOp *op)
{
	IrValue *cond = ival(op, 0);
	if (cond->type != c->t_i1)
		return ERR(op->item[0].loc, "'ave.if' condition must be 'i1', found '%s'", ts(c, cond->type));
	if (op->item[0].suffix)
		return ERR(op->item[0].loc, "'ave.if' condition takes no index");
	if (op->nres && op->nreg != 2)
		return ERR(op->loc, "'ave.if' with results needs an 'else' region");
	for (int r = 0; r < op->nreg; r++)
		if (!yield_matches(c, op, op->reg[r].block))
			return false;
	return check_result_types(c, op);
}

bool
v_yield(IrCtx *c, IrOp *op)
{
	if (op->ntype && op->ntype != op->nitem)
		return ERR(op->loc, "'ave.yield' lists %d types for %d values", op->ntype, op->nitem);
	for (int i = 0; i < op->ntype; i++) {
		IrValue *v = ival(op, i);
		if (v->type != op->type[i])
			return ERR(op->loc, "'ave.yield' value '%%%s' has type '%s', not '%s'", vn(v),
				   ts(c, v->type), ts(c, op->type[i]));
	}
	return true;
}

/* ---- memory ---- */

static bool
tile_matches_tensor(IrCtx *c, IrLoc loc, const IrType *tile, const IrType *tensor, const char *what)
{
	if (tile->elem != tensor->elem)
		return ERR(loc, "%s: element type '%s' differs from the tensor's '%s'", what,
			   ts(c, tile->elem), ts(c, tensor->elem));
	if (tile->rank != tensor->rank)
		return ERR(loc, "%s: tile rank %d differs from the tensor's rank %d", what, tile->rank,
			   tensor->rank);
	for (int i = 0; i < tile->rank; i++)
		if (tensor->dims[i] != IR_DYN && tile->dims[i] > tensor->dims[i])
			return ERR(loc, "%s: tile '%s' is larger than tensor '%s'", what, ts(c, tile),
				   ts(c, tensor));
	return true;
}

bool
v_load(IrCtx *c, IrOp *op)
{
	Addr a;
	if (!addr(c, op, &op->item[0], A_TENSOR, false, &a))
		return false;
	IrType *t = rtype(op);
	if (!reg_tile(c, op->loc, t, "'ave.load' result") || !ir_check_type(c, op->loc, t))
		return false;
	IrGroup *g = ir_op_group(op, c->kw.other);
	if (g) {
		IrItem *it = &g->item[0];
		int64_t v;
		if (it->kind == IR_IT_EXPR && !ir_expr_eval_const(it->e, &v))
			return ERR(it->loc, "'other' must be a constant");
		if (it->kind == IR_IT_FLOAT && !ir_type_is_float(t->elem))
			return ERR(it->loc, "float 'other' for an integer tile");
	}
	return tile_matches_tensor(c, op->loc, t, a.type, "'ave.load'");
}

/* The declaration a call `@name(args)` names: an op of kind `code` (a tag function, a chunk)
 * taking as many parameters as the call has arguments; NULL after an error that calls it a
 * `noun` ("tag") and, when another op has the name, not `a_kind` ("a tag function"). */
static IrOp *
decl_call(IrCtx *c, IrOp *op, const IrItem *it, IrOpcode code, const char *noun,
	  const char *a_kind)
{
	IrOp *f = ir_symbol_lookup(c, op, it->s);
	if (!f)
		ir_error(c, it->loc, "use of undefined %s '@%s'", noun, it->s);
	else if (f->code != code)
		ir_error(c, it->loc, "'@%s' is not %s ('%s')", it->s, a_kind, opname(f));
	else if (f->item[0].nparam != it->ncoord)
		ir_error(c, it->loc, "%s '@%s' takes %d argument%s, found %d", noun, it->s,
			 f->item[0].nparam, f->item[0].nparam == 1 ? "" : "s", it->ncoord);
	else
		return f;
	return NULL;
}

static bool
tag_call(IrCtx *c, IrOp *op, const IrItem *it)
{
	return decl_call(c, op, it, IR_OP_TAG_FUNC, "tag", "a tag function") != NULL;
}

bool
v_store(IrCtx *c, IrOp *op)
{
	IrValue *v = ival(op, 0);
	if (!reg_tile(c, op->loc, v->type, "'ave.store' value"))
		return false;
	Addr a;
	if (!addr(c, op, &ir_op_group(op, c->kw.into)->item[0], A_TENSOR, false, &a))
		return false;
	if (!tile_matches_tensor(c, op->loc, v->type, a.type, "'ave.store'"))
		return false;
	/* A store's tag says which region it writes; labels are not kept in global memory, so a
	 * tag without a region would say nothing and is refused. */
	IrGroup *tag = ir_op_group(op, c->kw.tag);
	if (!tag)
		return true;
	IrOp *f = decl_call(c, op, &tag->item[0], IR_OP_TAG_FUNC, "tag", "a tag function");
	if (!f)
		return false;
	if (!ir_op_group(f, c->kw.region))
		return ERR(tag->item[0].loc, "'ave.store' is tagged '@%s', which names no region: a "
				    "store's tag says which tile of the tensor it writes ('ave.tag.func "
				    "@%s(...) region(%%T[lo : len, ...])')", tag->item[0].s, tag->item[0].s);
	return true;
}

bool
v_smem_alloc(IrCtx *c, IrOp *op)
{
	IrType *t = rtype(op);
	if (!ir_type_is_smem(t))
		return ERR(op->loc, "'ave.smem.alloc' makes a shared-memory tile or ring, found '%s'",
			   ts(c, t));
	IrAttr *sp = ir_op_attr(op, c->kw.spill);
	if (sp && sp->kind != IR_ATTR_BOOL)
		return ERR(op->loc, "'spill' of 'ave.smem.alloc' is true or false");
	return ir_check_type(c, op->loc, t);
}

static bool
smem_tile_matches(IrCtx *c, IrLoc loc, const IrType *a, const IrType *b, const char *what)
{
	if (a->elem != b->elem || !same_shape(a, b))
		return ERR(loc, "%s: '%s' does not match '%s'", what, ts(c, a), ts(c, b));
	return true;
}

bool
v_copy_async(IrCtx *c, IrOp *op)
{
	Addr src, dst, bar;
	if (!addr(c, op, &op->item[0], A_TENSOR, false, &src))
		return false;
	if (!addr(c, op, &ir_op_group(op, c->kw.into)->item[0], A_SMEM, false, &dst))
		return false;
	if (!addr(c, op, &ir_op_group(op, c->kw.arrive)->item[0], A_MBAR, false, &bar))
		return false;
	if (!tile_matches_tensor(c, op->loc, dst.type, src.type, "'ave.copy.async'"))
		return false;
	IrGroup *tag = ir_op_group(op, c->kw.tag);
	return !tag || tag_call(c, op, &tag->item[0]);
}

bool
v_smem_load(IrCtx *c, IrOp *op)
{
	Addr a;
	if (!addr(c, op, &op->item[0], A_SMEM, false, &a))
		return false;
	IrType *t = rtype(op);
	if (!reg_tile(c, op->loc, t, "'ave.smem.load' result") || !ir_check_type(c, op->loc, t))
		return false;
	return smem_tile_matches(c, op->loc, t, a.type, "'ave.smem.load'");
}

bool
v_smem_store(IrCtx *c, IrOp *op)
{
	IrValue *v = ival(op, 0);
	if (!reg_tile(c, op->loc, v->type, "'ave.smem.store' value"))
		return false;
	Addr a;
	if (!addr(c, op, &ir_op_group(op, c->kw.into)->item[0], A_SMEM, false, &a))
		return false;
	return smem_tile_matches(c, op->loc, v->type, a.type, "'ave.smem.store'");
}

bool
v_slice(IrCtx *c, IrOp *op)
{
	Addr a;
	if (!addr(c, op, &op->item[0], A_SMEM, false, &a))
		return false;
	IrType *from = a.type, *to = rtype(op);
	if (to->kind != IR_TY_TILE || to->space != IR_SPACE_SMEM)
		return ERR(op->loc, "'ave.slice' result must be a shared-memory tile, found '%s'", ts(c, to));
	if (from->rank != 2)
		return ERR(op->loc, "'ave.slice' works on 2-D tiles, found '%s'", ts(c, from));
	IrGroup *rows = ir_op_group(op, c->kw.rows), *cols = ir_op_group(op, c->kw.cols);
	if (!rows && !cols)
		return ERR(op->loc, "'ave.slice' needs 'rows(offset, n)' or 'cols(offset, n)'");
	int64_t want[2] = {from->dims[0], from->dims[1]};
	IrGroup *gs[2] = {rows, cols};
	for (int d = 0; d < 2; d++) {
		if (!gs[d])
			continue;
		int64_t n;
		if (!const_item(c, &gs[d]->item[1], &n, "slice size"))
			return false;
		if (n < 1 || n > from->dims[d])
			return ERR(gs[d]->loc, "slice size %lld is out of range [1, %lld]", (long long)n,
				   (long long)from->dims[d]);
		int64_t lo, hi;
		if (ir_expr_range(op, gs[d]->item[0].e, &lo, &hi) && (lo < 0 || hi + n > from->dims[d]))
			return ERR(gs[d]->loc, "slice [%lld, %lld) may run past the %lld %s of '%s'",
				   (long long)lo, (long long)(hi + n), (long long)from->dims[d],
				   d ? "columns" : "rows", ts(c, from));
		want[d] = n;
	}
	if (to->elem != from->elem || to->rank != 2 || to->dims[0] != want[0] || to->dims[1] != want[1])
		return ERR(op->loc, "'ave.slice' of '%s' yields %lldx%lldx%s, found '%s'", ts(c, from),
			   (long long)want[0], (long long)want[1], ts(c, from->elem), ts(c, to));
	return ir_check_type(c, op->loc, to);
}

/* ---- compute ---- */

bool
v_zeros(IrCtx *c, IrOp *op)
{
	return reg_tile(c, op->loc, rtype(op), "'ave.zeros' result") && ir_check_type(c, op->loc, rtype(op));
}

bool
v_full(IrCtx *c, IrOp *op)
{
	IrType *t = rtype(op);
	if (!reg_tile(c, op->loc, t, "'ave.full' result") || !ir_check_type(c, op->loc, t))
		return false;
	IrValue *v = ival(op, 0);
	if (v && v->type != t->elem)
		return ERR(op->loc, "'ave.full' takes a '%s' scalar, found '%%%s' of type '%s'",
			   ts(c, t->elem), vn(v), ts(c, v->type));
	if (!v)
		return literal_fits(c, &op->item[0], t);
	return true;
}

static bool
mma_operand(IrCtx *c, IrOp *op, int i, IrType **t)
{
	const IrItem *it = &op->item[i];
	if (it->kind == IR_IT_VALUE && !it->suffix && ir_type_is_reg_tile(ival(op, i)->type)) {
		*t = ival(op, i)->type;
		return static_shape(c, it->loc, *t);
	}
	IrValue *v = it->kind == IR_IT_VALUE && !it->suffix ? ival(op, i) : NULL;
	if (v && v->type->kind != IR_TY_TILE && v->type->kind != IR_TY_RING)
		return ERR(it->loc, "'%s' operand %d must be a register tile or a shared-memory tile or "
			   "ring slot, found '%s'", opname(op), i + 1, ts(c, v->type));
	Addr a;
	if (!addr(c, op, it, A_SMEM, false, &a))
		return false;
	*t = a.type;
	return true;
}

bool
v_mma(IrCtx *c, IrOp *op)
{
	IrType *a, *b, *acc = ival(op, 2)->type, *d = rtype(op);
	if (!mma_operand(c, op, 0, &a) || !mma_operand(c, op, 1, &b))
		return false;
	if (!reg_tile(c, op->loc, acc, "accumulator"))
		return false;
	bool tb = ir_op_group(op, c->kw.transpose_b) != NULL;
	if (a->rank != 2 || b->rank != 2 || acc->rank != 2)
		return ERR(op->loc, "'%s' operands must be 2-D tiles", opname(op));
	int64_t M = a->dims[0], K = a->dims[1];
	int64_t Kb = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
	if (K != Kb)
		return ERR(op->loc, "'%s' inner dimensions differ: A is %lldx%lld, B%s is %lldx%lld",
			   opname(op), (long long)M, (long long)K, tb ? "^T" : "", (long long)Kb,
			   (long long)N);
	if (acc->dims[0] != M || acc->dims[1] != N)
		return ERR(op->loc, "'%s' accumulator must be %lldx%lld, found '%s'", opname(op),
			   (long long)M, (long long)N, ts(c, acc));
	if (a->elem != b->elem)
		return ERR(op->loc,
			   "'%s' A and B element types differ: '%s' and '%s' (no target multiplies mixed "
			   "types: sm_80, sm_90a, gfx942 and gfx90a need equal ones)",
			   opname(op), ts(c, a->elem), ts(c, b->elem));
	if (acc->elem != c->t_f32)
		return ERR(op->loc, "'%s' accumulates in 'f32', found '%s'", opname(op), ts(c, acc->elem));
	if (d->elem != acc->elem || !same_shape(d, acc))
		return ERR(op->loc, "'%s' result '%s' must match the accumulator '%s'", opname(op),
			   ts(c, d), ts(c, acc));
	IrFloatKind fk = a->elem->fk;
	if (!ir_type_is_float(a->elem))
		return ERR(op->loc, "'%s' needs float operands, found '%s'", opname(op), ts(c, a->elem));
	const TargetInfo *f = target_facts(kernel_target(c, op));
	if (f) {
		/* f8 everywhere: sm_90a's wgmma, FMAs after integer conversion elsewhere. */
		if (fk == IR_F64)
			return ERR(op->loc, "'%s' on '%s' operands is not supported on target '%s'",
				   opname(op), ts(c, a->elem), f->name);
		if (M % f->mma_m || N % f->mma_n || K % f->mma_k)
			return ERR(op->loc, "'%s' shape %lldx%lldx%lld is not supported on target '%s' (M, N, "
				   "K must be multiples of %d, %d, %d)", opname(op), (long long)M, (long long)N,
				   (long long)K, f->name, f->mma_m, f->mma_n, f->mma_k);
	}
	if (op->code == IR_OP_MMA_ASYNC) {
		for (IrUse *u = op->res[0].uses; u; u = u->next)
			if (u->user->code != IR_OP_MMA_WAIT)
				return ERR(u->user->loc, "the pending tile of 'ave.mma.async' may only be used "
					   "by 'ave.mma.wait', found '%s'", opname(u->user));
	}
	return ir_check_type(c, op->loc, d);
}

bool
v_mma_wait(IrCtx *c, IrOp *op)
{
	IrValue *t = ival(op, 0);
	if (t->kind != IR_VAL_RESULT || t->op->code != IR_OP_MMA_ASYNC)
		return ERR(op->loc, "'ave.mma.wait' waits for the result of 'ave.mma.async', found '%%%s'",
			   vn(t));
	if (rtype(op) != t->type)
		return ERR(op->loc, "'ave.mma.wait' result '%s' must match the pending tile '%s'",
			   ts(c, rtype(op)), ts(c, t->type));
	int64_t n;
	if (!group_const(c, op, c->kw.pending, 0, &n, "'pending'"))
		return false;
	if (n < 0)
		return ERR(op->loc, "'pending' must not be negative");
	return true;
}

bool
v_reduce(IrCtx *c, IrOp *op)
{
	IrType *from = ival(op, 0)->type, *to = rtype(op);
	if (!reg_tile(c, op->loc, from, "'ave.reduce' operand") ||
	    !reg_tile(c, op->loc, to, "'ave.reduce' result"))
		return false;
	int64_t d;
	if (!dim_const(c, op, from->rank, &d))
		return false;
	bool ok = to->rank == from->rank && to->elem == from->elem && to->dims[d] == 1;
	for (int i = 0; ok && i < to->rank; i++)
		ok = i == d || to->dims[i] == from->dims[i];
	if (!ok)
		return ERR(op->loc, "'ave.reduce' over dim %lld of '%s' keeps the rank with size 1 there, "
			   "found '%s'", (long long)d, ts(c, from), ts(c, to));
	if (op->mode == c->kw.add && !ir_type_is_float(from->elem) && !ir_type_is_int(from->elem))
		return ERR(op->loc, "'ave.reduce add' needs a numeric tile");
	return ir_check_type(c, op->loc, to);
}

bool
v_trans(IrCtx *c, IrOp *op)
{
	IrType *from = ival(op, 0)->type, *to = rtype(op);
	if (!reg_tile(c, op->loc, from, "'ave.trans' operand") ||
	    !reg_tile(c, op->loc, to, "'ave.trans' result"))
		return false;
	if (from->rank != 2)
		return ERR(op->loc, "'ave.trans' transposes a 2-D tile, found '%s'", ts(c, from));
	if (to->rank != 2 || to->dims[0] != from->dims[1] ||
	    to->dims[1] != from->dims[0] || to->elem != from->elem)
		return ERR(op->loc, "'ave.trans' of '%s' yields %lldx%lldx%s, found '%s'", ts(c, from),
			   (long long)from->dims[1], (long long)from->dims[0],
			   ts(c, from->elem), ts(c, to));
	return ir_check_type(c, op->loc, to);
}

/* ---- synchronization ---- */

bool
v_mbar_alloc(IrCtx *c, IrOp *op)
{
	if (rtype(op)->kind != IR_TY_MBAR)
		return ERR(op->loc, "'ave.mbar.alloc' makes '!ave.mbar<N>', found '%s'", ts(c, rtype(op)));
	int64_t n;
	if (!group_const(c, op, c->kw.count, 0, &n, "'count'"))
		return false;
	if (n < 1 || n >= ((int64_t)1 << 20))
		return ERR(op->loc, "'count' must be in [1, 2^20), found %lld", (long long)n);
	return ir_check_type(c, op->loc, rtype(op));
}

bool
v_mbar_expect_tx(IrCtx *c, IrOp *op)
{
	Addr a;
	if (!addr(c, op, &op->item[0], A_MBAR, false, &a))
		return false;
	int64_t lo, hi;
	IrGroup *g = ir_op_group(op, c->kw.bytes);
	if (ir_expr_range(op, g->item[0].e, &lo, &hi) && hi < 1) {
		if (lo == hi)
			return ERR(g->loc, "'bytes' must be positive, found %lld", (long long)lo);
		return ERR(g->loc, "'bytes' must be positive, found one in [%lld, %lld]",
			   (long long)lo, (long long)hi);
	}
	if (ir_expr_range(op, g->item[0].e, &lo, &hi) && hi >= ((int64_t)1 << 20))
		return ERR(g->loc, "'bytes' must be below 2^20 (the barrier's transaction count)");
	return true;
}

bool
v_mbar_arrive(IrCtx *c, IrOp *op)
{
	Addr a;
	if (!addr(c, op, &op->item[0], A_MBAR, false, &a))
		return false;
	int64_t n;
	if (ir_op_group(op, c->kw.count)) {
		if (!group_const(c, op, c->kw.count, 0, &n, "'count'"))
			return false;
		if (n < 1)
			return ERR(op->loc, "'count' must be at least 1, found %lld", (long long)n);
	}
	return true;
}

bool
v_mbar_wait(IrCtx *c, IrOp *op)
{
	Addr a;
	if (!addr(c, op, &op->item[0], A_MBAR, false, &a))
		return false;
	/* The parity is a bit: an 'i1' value, or an index expression that stays in [0, 1]. */
	IrGroup *g = ir_op_group(op, c->kw.parity);
	const IrExpr *e = g ? g->item[0].e : NULL;
	if (!e)
		return true;
	if (e->kind == IR_EX_VAL) {
		IrType *t = ir_op_value(op, e->opnd)->type;
		if (t != c->t_i1 && t->kind != IR_TY_INDEX)
			return ERR(g->loc, "'parity' takes an 'i1' value or an index expression, found '%s'",
				   ts(c, t));
	}
	int64_t lo, hi;
	if (ir_expr_range(op, e, &lo, &hi) && (lo < 0 || hi > 1)) {
		if (lo == hi)
			return ERR(g->loc, "'parity' must be 0 or 1, found %lld", (long long)lo);
		return ERR(g->loc, "'parity' must be 0 or 1, found a value in [%lld, %lld]",
			   (long long)lo, (long long)hi);
	}
	return true;
}

bool
v_phase_next(IrCtx *c, IrOp *op)
{
	IrValue *ph = ival(op, 0);
	if (ph->type != c->t_i1)
		return ERR(op->loc, "'ave.phase.next' takes an 'i1' phase, found '%s'", ts(c, ph->type));
	if (rtype(op) != c->t_i1)
		return ERR(op->loc, "'ave.phase.next' yields 'i1'");
	int64_t n;
	if (!group_const(c, op, c->kw.at, 1, &n, "ring size in 'at'"))
		return false;
	if (n < 1)
		return ERR(op->loc, "ring size in 'at' must be positive");
	return true;
}

bool
v_none(IrCtx *c, IrOp *op)
{
	(void)c;
	(void)op;
	return true;
}

/* ---- warp roles ---- */

static int64_t
role_num(IrCtx *c, IrOp *role, IrStr kw, int64_t dflt)
{
	int64_t v = dflt;
	IrGroup *g = ir_op_group(role, kw);
	if (g)
		ir_expr_eval_const(g->item[0].e, &v);
	(void)c;
	return v;
}

bool
v_warp_specialize(IrCtx *c, IrOp *op)
{
	IrOp *k = ir_kernel_of(op);
	IrAttr *ta = attr_of(k, c->kw.threads);
	if (!ta || ta->kind != IR_ATTR_INT)
		return true; /* the kernel reports the missing or malformed attribute */
	int64_t threads = ta->i;
	const TargetInfo *f = target_facts(kernel_target(c, op));
	if (!op->reg[0].block->first)
		return ERR(op->loc, "'ave.warp_specialize' needs at least one 'ave.role'");
	int64_t warps = ir_role_warps_total(c, op);
	if (f) {
		if (warps * f->warp != threads)
			return ERR(op->loc, "roles use %lld warps x %d threads = %lld threads on target '%s', "
				   "but the kernel has 'threads' = %lld", (long long)warps, f->warp,
				   (long long)(warps * f->warp), f->name, (long long)threads);
	} else if (warps * 32 != threads && warps * 64 != threads) {
		return ERR(op->loc, "roles use %lld warps, which is neither the %lld 32-thread warps nor "
			   "the %lld 64-thread wavefronts of the kernel's 'threads' = %lld", (long long)warps,
			   (long long)(threads / 32), (long long)(threads / 64), (long long)threads);
	}
	/* SPEC 5.10: whole warpgroups where a role sets regs, and the pool rule (regalloc/). */
	RaRoles rr;
	return ra_check_roles(c, f, threads, op, false, &rr);
}

bool
v_role(IrCtx *c, IrOp *op)
{
	int64_t n;
	IrStr kws[] = {c->kw.warps, c->kw.replicate, c->kw.issue};
	for (int i = 0; i < 3; i++) {
		IrGroup *g = ir_op_group(op, kws[i]);
		if (!g)
			continue;
		char what[32];
		snprintf(what, sizeof what, "'%s'", kws[i]);
		if (!const_item(c, &g->item[0], &n, what))
			return false;
		if (n < 1)
			return ERR(g->loc, "'%s' must be at least 1, found %lld", kws[i], (long long)n);
		if (n > 1024)
			return ERR(g->loc, "'%s' must be at most 1024, found %lld", kws[i], (long long)n);
	}
	int64_t warps = role_num(c, op, c->kw.warps, 1);
	if (role_num(c, op, c->kw.issue, 1) > warps)
		return ERR(ir_op_group(op, c->kw.issue)->loc, "'issue' cannot exceed 'warps' (%lld)",
			   (long long)warps);
	IrGroup *g = ir_op_group(op, c->kw.regs);
	if (g) {
		if (!const_item(c, &g->item[0], &n, "'regs'"))
			return false;
		if (n < 24 || n > 256 || n % 8)
			return ERR(g->loc, "'regs' must be a multiple of 8 in [24, 256], found %lld",
				   (long long)n);
	}
	return true;
}

bool
v_replica_id(IrCtx *c, IrOp *op)
{
	return v_index_result(c, op);
}

/* ---- tags ---- */

bool
v_tag_func(IrCtx *c, IrOp *op)
{
	const IrItem *d = &op->item[0];
	/* The checker keeps a label's arguments in a fixed array (docs/language.md). */
	if (d->nparam > 8)
		return ERR(d->loc, "tag function '@%s' takes %d parameters; at most 8", d->s, d->nparam);
	for (int i = 0; i < d->nparam; i++)
		if (!ir_type_is_int(d->param[i]->type))
			return ERR(d->loc, "tag parameter '%%%s' must be an integer or index, found '%s'",
				   vn(d->param[i]), ts(c, d->param[i]->type));
	/* region(%T[lo : len, ...]): the global tile the label stands for, which every copy
	 * tagged with it must read (docs/invariants.md). */
	IrGroup *g = ir_op_group(op, c->kw.region);
	if (!g)
		return true;
	const IrItem *it = &g->item[0];
	IrValue *t = ir_item_value(op, it);
	if (!t || t->type->kind != IR_TY_TENSOR)
		return ERR(it->loc, "the region of a tag names a tensor: 'region(%%T[lo : len, ...])'");
	if (it->ncoord != t->type->rank)
		return ERR(it->loc, "the region of tag '@%s' has %d coordinates for a rank-%d tensor",
			   d->s, it->ncoord, t->type->rank);
	for (int i = 0; i < it->ncoord; i++)
		if (it->coord[i].len < 1)
			return ERR(it->loc, "coordinate %d of the region of tag '@%s' needs a constant "
					    "length ('lo : len')", i, d->s);
	return true;
}

bool
v_tag(IrCtx *c, IrOp *op)
{
	if (rtype(op) != ival(op, 0)->type)
		return ERR(op->loc, "'ave.tag' result must have the operand's type '%s'",
			   ts(c, ival(op, 0)->type));
	return tag_call(c, op, &op->item[1]);
}

bool
v_tag_assert(IrCtx *c, IrOp *op)
{
	int preds = 0;
	for (int g = 0; g < op->ngroup; g++) {
		IrGroup *gr = &op->group[g];
		if (gr->kw == c->kw.msg)
			continue;
		preds++;
		if (gr->kw == c->kw.holds) {
			const IrItem *x = &gr->item[0];
			IrValue *xv = ir_item_value(op, x);
			if (xv && !x->suffix && xv->type->kind != IR_TY_RING) {
				IrType *t = xv->type;
				if (t->kind != IR_TY_TILE)
					return ERR(x->loc, "'holds' takes a tile or a ring slot, found '%s'", ts(c, t));
			} else {
				Addr a;
				if (!addr(c, op, x, A_SMEM | A_TENSOR, true, &a))
					return false;
			}
			if (!tag_call(c, op, &gr->item[1]))
				return false;
		} else if (gr->kw == c->kw.ready) {
			Addr a;
			if (gr->item[0].kind != IR_IT_SYMBOL)
				return ERR(gr->loc, "'ready' takes a region of a symmetric buffer");
			if (!addr(c, op, &gr->item[0], A_TENSOR, true, &a))
				return false;
		}
	}
	if (preds != 1)
		return ERR(op->loc, "'ave.tag.assert' needs exactly one of holds, ready, eq, ne, lt, le, gt, "
			   "ge; found %d", preds);
	return true;
}

/* ---- communication ---- */

bool
v_symm_alloc(IrCtx *c, IrOp *op)
{
	if (op->ntype != 1)
		return ERR(op->loc, "'ave.symm.alloc' needs its buffer type, as in ': !ave.tensor<...>'");
	IrType *t = op->type[0];
	if (t->kind != IR_TY_TENSOR || t->space != IR_SPACE_SYMM)
		return ERR(op->loc, "'ave.symm.alloc' makes a 'symm' tensor, found '%s'", ts(c, t));
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] == IR_DYN || (t->strides && t->strides[i] == IR_DYN))
			return ERR(op->loc, "a symmetric buffer has a static shape and strides, found '%s'",
				   ts(c, t));
	return true;
}

static bool
index_params(IrCtx *c, IrOp *op)
{
	const IrItem *d = &op->item[0];
	for (int i = 0; i < d->nparam; i++)
		if (!ir_type_is_int(d->param[i]->type))
			return ERR(d->loc, "parameter '%%%s' must be an integer or index", vn(d->param[i]));
	return true;
}

bool
v_chunk(IrCtx *c, IrOp *op)
{
	if (!index_params(c, op))
		return false;
	Addr a;
	IrGroup *r = ir_op_group(op, c->kw.region), *s = ir_op_group(op, c->kw.signal);
	if (r->item[0].kind != IR_IT_SYMBOL || s->item[0].kind != IR_IT_SYMBOL)
		return ERR(op->loc, "'ave.chunk' region and signal name symmetric buffers");
	if (!addr(c, op, &r->item[0], A_TENSOR, true, &a))
		return false;
	if (!addr(c, op, &s->item[0], A_TENSOR, false, &a))
		return false;
	if (!ir_type_is_int(a.type->elem))
		return ERR(s->loc, "a chunk's signal must be an integer buffer, found '%s'", ts(c, a.type));
	return true;
}

bool
v_chunk_schedule(IrCtx *c, IrOp *op)
{
	if (!index_params(c, op))
		return false;
	if (op->item[0].nparam != 2)
		return ERR(op->item[0].loc, "a chunk schedule takes the rank and the wave: '@%s(%%r: index, "
			   "%%w: index)'", op->item[0].s);
	IrGroup *f = ir_op_group(op, c->kw.for_);
	IrOp *ch = ir_symbol_lookup(c, op, f->item[0].s);
	if (!ch || ch->code != IR_OP_CHUNK)
		return ERR(f->loc, "'for' must name an 'ave.chunk', found '@%s'", f->item[0].s);
	IrGroup *t = ir_op_group(op, c->kw.template_);
	IrGroup *cg = ir_op_group(op, c->kw.chunk), *pg = ir_op_group(op, c->kw.peer);
	if (t) {
		static const char *const known[] = {"all_gather.ring", "all_gather.swizzle1d",
						    "reduce_scatter.ring", "all_to_all"};
		bool ok = false;
		for (int i = 0; i < 4; i++)
			ok |= !strcmp(t->item[0].s, known[i]);
		if (!ok)
			return ERR(t->loc, "unknown schedule template \"%s\"", t->item[0].s);
		if (cg || pg)
			return ERR(op->loc, "a chunk schedule takes a template or chunk(...) and peer(...), "
				   "not both");
	} else if (!cg || !pg) {
		return ERR(op->loc, "a chunk schedule needs template(\"...\") or both chunk(...) and "
			   "peer(...)");
	}
	IrAttr *b = attr_of(op, c->kw.backend);
	if (b && b->kind != IR_ATTR_STR)
		return ERR(op->loc, "'backend' must be a string");
	return true;
}

static bool
chunk_call(IrCtx *c, IrOp *op, const IrItem *it)
{
	return decl_call(c, op, it, IR_OP_CHUNK, "chunk", "a chunk") != NULL;
}

bool
v_chunk_wait(IrCtx *c, IrOp *op)
{
	if (rtype(op) != c->t_token)
		return ERR(op->loc, "'ave.chunk.wait' yields '!ave.token'");
	return chunk_call(c, op, &op->item[0]);
}

bool
v_chunk_signal(IrCtx *c, IrOp *op)
{
	return chunk_call(c, op, &op->item[0]);
}

bool
v_put(IrCtx *c, IrOp *op)
{
	IrValue *v = ival(op, 0);
	if (!reg_tile(c, op->loc, v->type, "'ave.put' value"))
		return false;
	Addr a;
	IrItem *into = &ir_op_group(op, c->kw.into)->item[0];
	if (into->kind != IR_IT_SYMBOL)
		return ERR(into->loc, "'ave.put' writes into a symmetric buffer");
	if (!addr(c, op, into, A_TENSOR, false, &a))
		return false;
	IrGroup *r = ir_op_group(op, c->kw.reduce);
	if (r && r->item[0].s != c->kw.add && r->item[0].s != c->kw.max && r->item[0].s != c->kw.min)
		return ERR(r->loc, "'reduce' must be add, max or min, found '%s'", r->item[0].s);
	return tile_matches_tensor(c, op->loc, v->type, a.type, "'ave.put'");
}

bool
v_get(IrCtx *c, IrOp *op)
{
	if (!ir_check_type(c, op->loc, rtype(op)))
		return false;
	Addr a;
	if (op->item[0].kind != IR_IT_SYMBOL)
		return ERR(op->item[0].loc, "'ave.get' reads a symmetric buffer");
	if (!addr(c, op, &op->item[0], A_TENSOR, false, &a))
		return false;
	IrType *t = rtype(op);
	if (!reg_tile(c, op->loc, t, "'ave.get' result"))
		return false;
	return tile_matches_tensor(c, op->loc, t, a.type, "'ave.get'");
}
