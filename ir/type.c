/* type.c — construction (uniqued in the context), queries and printing of types (SPEC §4). */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static uint64_t
type_hash(const IrType *t)
{
	uint64_t h = ir_hash_mix(t->kind, (uint64_t)t->bits);
	h = ir_hash_mix(h, t->fk);
	h = ir_hash_mix(h, (uint64_t)(uintptr_t)t->elem);
	h = ir_hash_mix(h, (uint64_t)t->rank);
	for (int i = 0; i < t->rank; i++)
		h = ir_hash_mix(h, (uint64_t)t->dims[i]);
	h = ir_hash_mix(h, t->strides != NULL);
	if (t->strides)
		for (int i = 0; i < t->rank; i++)
			h = ir_hash_mix(h, (uint64_t)t->strides[i]);
	h = ir_hash_mix(h, t->space);
	h = ir_hash_mix(h, (uint64_t)(uintptr_t)t->layout);
	return ir_hash_mix(h, (uint64_t)t->n);
}

static bool
type_eq(const void *pa, const void *pb)
{
	const IrType *a = pa, *b = pb;
	if (a->kind != b->kind || a->bits != b->bits || a->fk != b->fk || a->elem != b->elem ||
	    a->rank != b->rank || a->space != b->space || a->layout != b->layout || a->n != b->n)
		return false;
	if (a->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
		return false;
	if ((a->strides == NULL) != (b->strides == NULL))
		return false;
	if (a->strides && memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->rank))
		return false;
	return true;
}

static IrType *
unique(IrCtx *c, IrType *probe)
{
	probe->hash = type_hash(probe);
	IrType *t = ir_map_get(&c->types, probe->hash, probe, type_eq);
	if (t)
		return t;
	t = ir_arena_alloc(&c->arena, sizeof *t);
	*t = *probe;
	if (probe->rank) {
		size_t n = sizeof(int64_t) * (size_t)probe->rank;
		t->dims = ir_arena_alloc(&c->arena, n);
		memcpy(t->dims, probe->dims, n);
		if (probe->strides) {
			t->strides = ir_arena_alloc(&c->arena, n);
			memcpy(t->strides, probe->strides, n);
		}
	}
	ir_map_put(&c->types, t->hash, t, t, type_eq);
	return t;
}

IrType *
ir_type_int(IrCtx *c, int bits)
{
	IrType p = {.kind = IR_TY_INT, .bits = bits};
	return unique(c, &p);
}

IrType *
ir_type_index(IrCtx *c)
{
	IrType p = {.kind = IR_TY_INDEX, .bits = 64};
	return unique(c, &p);
}

static const int float_bits[IR_FK_COUNT] = {16, 16, 32, 64, 8, 8};
static const char *const float_names[IR_FK_COUNT] = {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"};

IrType *
ir_type_float(IrCtx *c, IrFloatKind fk)
{
	IrType p = {.kind = IR_TY_FLOAT, .fk = fk, .bits = float_bits[fk]};
	return unique(c, &p);
}

IrType *
ir_type_ptr(IrCtx *c, IrType *elem)
{
	IrType p = {.kind = IR_TY_PTR, .elem = elem};
	return unique(c, &p);
}

IrType *
ir_type_tensor(IrCtx *c, int rank, const int64_t *dims, IrType *elem, IrSpace space,
	       const int64_t *strides)
{
	IrType p = {.kind = IR_TY_TENSOR, .rank = rank, .dims = (int64_t *)dims, .elem = elem,
		    .space = space, .strides = (int64_t *)strides};
	return unique(c, &p);
}

IrType *
ir_type_tile(IrCtx *c, int rank, const int64_t *dims, IrType *elem, IrSpace space, IrAttr *layout)
{
	IrType p = {.kind = IR_TY_TILE, .rank = rank, .dims = (int64_t *)dims, .elem = elem,
		    .space = space, .layout = layout};
	return unique(c, &p);
}

IrType *
ir_type_ring(IrCtx *c, int64_t slots, IrType *tile)
{
	IrType p = {.kind = IR_TY_RING, .n = slots, .elem = tile};
	return unique(c, &p);
}

IrType *
ir_type_mbar(IrCtx *c, int64_t n)
{
	IrType p = {.kind = IR_TY_MBAR, .n = n};
	return unique(c, &p);
}

IrType *
ir_type_token(IrCtx *c)
{
	IrType p = {.kind = IR_TY_TOKEN};
	return unique(c, &p);
}

IrType *
ir_type_tile_with_elem(IrCtx *c, IrType *t, IrType *elem)
{
	return ir_type_tile(c, t->rank, t->dims, elem, t->space, t->layout);
}

IrType *
ir_type_tile_with_shape(IrCtx *c, IrType *t, int rank, const int64_t *dims)
{
	return ir_type_tile(c, rank, dims, t->elem, t->space, NULL);
}

bool
ir_type_is_int(const IrType *t)
{
	return t->kind == IR_TY_INT || t->kind == IR_TY_INDEX;
}

bool
ir_type_is_float(const IrType *t)
{
	return t->kind == IR_TY_FLOAT;
}

bool
ir_type_is_scalar(const IrType *t)
{
	return ir_type_is_int(t) || ir_type_is_float(t);
}

bool
ir_type_is_reg_tile(const IrType *t)
{
	return t->kind == IR_TY_TILE && t->space == IR_SPACE_REG;
}

bool
ir_type_is_smem(const IrType *t)
{
	return (t->kind == IR_TY_TILE && t->space == IR_SPACE_SMEM) || t->kind == IR_TY_RING;
}

IrType *
ir_type_elem(IrType *t)
{
	if (t->kind == IR_TY_TILE || t->kind == IR_TY_TENSOR || t->kind == IR_TY_PTR)
		return t->elem;
	if (t->kind == IR_TY_RING)
		return t->elem->elem;
	return t;
}

int64_t
ir_type_numel(const IrType *t)
{
	if (t->kind == IR_TY_RING)
		return ir_type_numel(t->elem);
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] == IR_DYN)
			return -1;
		if (__builtin_mul_overflow(n, t->dims[i], &n))
			return INT64_MAX; /* unverified; the verifier refuses such shapes */
	}
	return n;
}

int64_t
ir_type_bytes(const IrType *t)
{
	const IrType *tile = t->kind == IR_TY_RING ? t->elem : t;
	int64_t n = ir_type_numel(tile);
	if (n < 0)
		return -1;
	return (t->kind == IR_TY_RING ? t->n : 1) * n * ir_type_elem_bits(tile) / 8;
}

int
ir_type_elem_bits(const IrType *t)
{
	return ir_type_elem((IrType *)t)->bits;
}

const char *
ir_float_name(IrFloatKind fk)
{
	return float_names[fk];
}

const char *
ir_space_name(IrSpace s)
{
	static const char *const names[IR_SPACE_COUNT] = {"global", "symm", "reg", "smem"};
	return names[s];
}

static void
print_dims(const IrType *t, FILE *out)
{
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] == IR_DYN)
			fputc('?', out);
		else
			fprintf(out, "%lld", (long long)t->dims[i]);
		fputc('x', out);
	}
}

void
ir_type_print(IrCtx *c, const IrType *t, FILE *out)
{
	ir_type_print_ex(c, t, out, NULL, NULL);
}

void
ir_type_print_ex(IrCtx *c, const IrType *t, FILE *out, IrAliasHook hook, void *ud)
{
	if (hook && hook(ud, t, true, out))
		return;
	switch (t->kind) {
	case IR_TY_INT:
		fprintf(out, "i%d", t->bits);
		break;
	case IR_TY_INDEX:
		fputs("index", out);
		break;
	case IR_TY_FLOAT:
		fputs(float_names[t->fk], out);
		break;
	case IR_TY_PTR:
		fputs("!ave.ptr<", out);
		ir_type_print_ex(c, t->elem, out, hook, ud);
		fputc('>', out);
		break;
	case IR_TY_TENSOR:
		fputs("!ave.tensor<", out);
		/* A shape is one token (`?x4xf32`): its element type is always spelled out. */
		print_dims(t, out);
		ir_type_print_ex(c, t->elem, out, NULL, NULL);
		fprintf(out, ", %s", ir_space_name(t->space));
		if (t->strides) {
			fputs(", [", out);
			for (int i = 0; i < t->rank; i++) {
				if (i)
					fputs(", ", out);
				if (t->strides[i] == IR_DYN)
					fputc('?', out);
				else
					fprintf(out, "%lld", (long long)t->strides[i]);
			}
			fputc(']', out);
		}
		fputc('>', out);
		break;
	case IR_TY_TILE:
		fputs("!ave.tile<", out);
		print_dims(t, out);
		ir_type_print_ex(c, t->elem, out, NULL, NULL);
		fprintf(out, ", %s", ir_space_name(t->space));
		if (t->layout) {
			fputs(", ", out);
			ir_attr_print_ex(c, t->layout, out, hook, ud);
		}
		fputc('>', out);
		break;
	case IR_TY_RING:
		fprintf(out, "!ave.ring<%lld x ", (long long)t->n);
		ir_type_print_ex(c, t->elem, out, hook, ud);
		fputc('>', out);
		break;
	case IR_TY_MBAR:
		fprintf(out, "!ave.mbar<%lld>", (long long)t->n);
		break;
	case IR_TY_TOKEN:
		fputs("!ave.token", out);
		break;
	default:
		ir_unreachable("bad type kind");
	}
}

char *
ir_type_str(IrCtx *c, const IrType *t)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		ir_unreachable("open_memstream failed");
	ir_type_print(c, t, f);
	fclose(f);
	char *s = ir_arena_strndup(&c->arena, buf, n);
	free(buf);
	return s;
}
