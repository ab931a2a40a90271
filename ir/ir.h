/* ir.h — the ave IR shared by the frontend, the passes, the interpreter and the backends.
 * Prototypes are grouped by the source file that defines them (arena.c, ctx.c, type.c, ...).
 * Ownership: the context owns strings, types and attributes; a module owns everything else. */
#ifndef AVE_IR_H
#define AVE_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "target.h"

typedef struct IrCtx IrCtx;
typedef struct IrType IrType;
typedef struct IrAttr IrAttr;
typedef struct IrExpr IrExpr;
typedef struct IrValue IrValue;
typedef struct IrUse IrUse;
typedef struct IrOp IrOp;
typedef struct IrBlock IrBlock;
typedef struct IrRegion IrRegion;
typedef struct IrModule IrModule;
typedef struct IrDiag IrDiag;
typedef const char *IrStr; /* interned: equal strings are equal pointers */

#define ir_unreachable(msg) ir_fatal(__FILE__, __LINE__, msg)
_Noreturn void ir_fatal(const char *file, int line, const char *msg);

/* ---- arena.c: allocation ---- */

/* A pluggable allocator; every byte the library takes comes through one. */
typedef struct IrAllocator {
	void *(*alloc)(void *ud, size_t n);
	void *(*realloc)(void *ud, void *p, size_t old, size_t n);
	void (*free)(void *ud, void *p, size_t n);
	void *ud;
} IrAllocator;

extern const IrAllocator ir_default_allocator;

typedef struct IrArenaChunk IrArenaChunk;
typedef struct IrArena {
	const IrAllocator *al;
	IrArenaChunk *head;
	size_t total; /* bytes obtained from the allocator */
} IrArena;

void ir_arena_init(IrArena *a, const IrAllocator *al);
void *ir_arena_alloc(IrArena *a, size_t n);     /* zeroed, 8-byte aligned */
void *ir_arena_alloc_raw(IrArena *a, size_t n); /* not zeroed: for what is written at once */
char *ir_arena_strndup(IrArena *a, const char *s, size_t n);
void ir_arena_free(IrArena *a);
void ir_arena_reset(IrArena *a); /* frees everything allocated, keeps one chunk for reuse */

void *ir_xalloc(const IrAllocator *al, size_t n);
void *ir_xrealloc(const IrAllocator *al, void *p, size_t old, size_t n);
void ir_xfree(const IrAllocator *al, void *p, size_t n);

/* Growable array of pointers or plain values: `IrVec v = {0}; ir_vec_push(al, &v, &x, sizeof x)`. */
typedef struct IrVec {
	void *data;
	int len, cap;
} IrVec;
void *ir_vec_push(const IrAllocator *al, IrVec *v, const void *elt, size_t size);
void ir_vec_free(const IrAllocator *al, IrVec *v, size_t size);
#define IR_VEC_AT(v, T, i) (((T *)(v).data)[i])

/* ---- hash.c: open-addressing hash map from (hash, key pointer) to value pointer ---- */

typedef struct IrMapSlot {
	uint64_t hash; /* 0 = empty slot; stored hashes are forced non-zero */
	const void *key;
	void *val;
} IrMapSlot;

typedef struct IrMap {
	const IrAllocator *al;
	IrMapSlot *slot; /* one array: a probe touches one cache line */
	size_t cap, len;
} IrMap;

typedef bool (*IrMapEq)(const void *a, const void *b);
void ir_map_init(IrMap *m, const IrAllocator *al);
void ir_map_free(IrMap *m);
/* Finds the key equal to `key` (by `eq`, or pointer identity when eq is NULL). */
void *ir_map_get(const IrMap *m, uint64_t h, const void *key, IrMapEq eq);
/* Inserts or replaces; returns the previous value or NULL. */
void *ir_map_put(IrMap *m, uint64_t h, const void *key, void *val, IrMapEq eq);
bool ir_map_del(IrMap *m, uint64_t h, const void *key, IrMapEq eq);
/* Iteration: slots 0..cap-1; a slot is used when its hash is non-zero. */
#define IR_MAP_USED(m, i) ((m)->slot[i].hash != 0)
uint64_t ir_hash_bytes(const void *p, size_t n);
uint64_t ir_hash_ptr(const void *p);
uint64_t ir_hash_mix(uint64_t h, uint64_t v);

/* ---- ctx.c: the context ---- */

typedef struct IrLoc {
	uint32_t file; /* index into the context's file table; 0 = unknown */
	uint32_t line, col;
} IrLoc;

typedef enum IrSeverity { IR_SEV_ERROR, IR_SEV_WARNING, IR_SEV_NOTE, IR_SEV_REMARK } IrSeverity;

/* One named variable of a counterexample (`k = 1`). */
typedef struct IrCexVar {
	const char *name, *value;
} IrCexVar;

/* A concrete assignment that violates a checked property, with what was found and expected. */
typedef struct IrCex {
	int nvar;
	IrCexVar *var;
	const char *role, *slot, *found, *expected, *culprit; /* any may be NULL */
	IrLoc culprit_loc;
} IrCex;

struct IrDiag {
	IrSeverity sev;
	IrLoc loc;
	const char *code; /* category: "parse", "verify", a pass name, ... */
	char *msg;
	int nnote;
	IrDiag *note;
	IrCex *cex;
};

typedef void (*IrDiagHandler)(void *ud, const IrDiag *d);

typedef struct IrFile {
	const char *name;
	const char *text; /* NUL-terminated; may be NULL */
	size_t len;
	uint32_t line0; /* the first line's number (split inputs keep file numbering) */
	size_t owned;   /* when non-zero: text came from the context's allocator with this size */
} IrFile;

/* Interned keywords that the library compares against (see ir/keywords.def). */
typedef struct IrKeywords {
#define KW(id, text) IrStr id;
#include "keywords.def"
#undef KW
} IrKeywords;

typedef struct IrOpInfo IrOpInfo;

struct IrCtx {
	const IrAllocator *al;
	IrArena arena; /* strings, types, attributes, file copies */
	IrMap strings, types, attrs;
	IrVec files; /* IrFile */
	IrDiagHandler handler;
	void *handler_ud;
	const char *code; /* default diagnostic category for this phase */
	const char *tool; /* the program ("ave compile"), named by diagnostics without a location */
	const char *input; /* the file the program works on, named there too (NULL: none) */
	int nerrors, nwarnings;
	const char *last_code; /* category of the last error emitted */
	IrKeywords kw;
	IrOpInfo *opinfo; /* parsed op table, one entry per opcode */
	IrMap opnames;    /* interned op name -> opcode + 1 */
	IrType *t_i1, *t_i8, *t_i16, *t_i32, *t_i64, *t_index;
	IrType *t_f16, *t_bf16, *t_f32, *t_f64, *t_f8e4m3, *t_f8e5m2, *t_token;
};

IrCtx *ir_ctx_new(const IrAllocator *al); /* al may be NULL for malloc */
void ir_ctx_free(IrCtx *c);
IrStr ir_intern(IrCtx *c, const char *s, size_t n);
IrStr ir_intern_cstr(IrCtx *c, const char *s);
/* Registers a source buffer for locations and carets; the text is copied. */
uint32_t ir_ctx_add_file(IrCtx *c, const char *name, const char *text, size_t len, uint32_t line0);
/* The same, taking ownership of `text` (allocated with the context's allocator, `size` bytes). */
uint32_t ir_ctx_take_file(IrCtx *c, const char *name, char *text, size_t len, size_t size,
			  uint32_t line0);
const IrFile *ir_ctx_file(IrCtx *c, uint32_t id);

/* ---- diag.c: diagnostics engine ---- */

void ir_diag_set_handler(IrCtx *c, IrDiagHandler h, void *ud);
/* Diagnostics held back while a tool asks a question whose failure is not the user's (a trial
 * plan, a proof of a rewrite it may undo): ir_diag_hold hands them to h (NULL: drops them) and
 * remembers the handler and counts; ir_diag_release puts those back as they were. */
typedef struct IrDiagHold {
	IrDiagHandler h;
	void *ud;
	int nerrors, nwarnings;
	const char *last_code;
} IrDiagHold;
void ir_diag_hold(IrCtx *c, IrDiagHold *s, IrDiagHandler h, void *ud);
void ir_diag_release(IrCtx *c, const IrDiagHold *s);
IrDiag *ir_diag_begin(IrCtx *c, IrSeverity sev, IrLoc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
IrDiag *ir_diag_beginv(IrCtx *c, IrSeverity sev, IrLoc loc, const char *fmt, va_list ap);
void ir_diag_note(IrCtx *c, IrDiag *d, IrLoc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
IrCex *ir_diag_cex(IrCtx *c, IrDiag *d); /* attaches an empty counterexample */
void ir_cex_var(IrCtx *c, IrCex *x, const char *name, const char *value);
char *ir_ctx_strdup(IrCtx *c, const char *s); /* lives in the context arena */
char *ir_ctx_printf(IrCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the diagnostic to the handler and releases it. */
void ir_diag_emit(IrCtx *c, IrDiag *d);
void ir_error(IrCtx *c, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ir_warning(IrCtx *c, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ir_remark(IrCtx *c, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Renderers used by the default handler and the tools. */
void ir_diag_print_text(IrCtx *c, const IrDiag *d, FILE *out, bool color);
void ir_diag_print_json(IrCtx *c, const IrDiag *d, FILE *out);
void ir_diag_default_handler(void *ud, const IrDiag *d); /* ud = IrCtx*; text to stderr */
/* Clang's closing line, "2 errors generated." ("1 warning and 1 error generated." with
 * warnings); nothing when there were no errors. For the tools, after the last diagnostic. */
void ir_diag_summary(int nerrors, int nwarnings, FILE *out);

/* ---- type.c: types (uniqued; compare by pointer) ---- */

typedef enum IrTypeKind {
	IR_TY_INT,
	IR_TY_INDEX,
	IR_TY_FLOAT,
	IR_TY_PTR,
	IR_TY_TENSOR,
	IR_TY_TILE,
	IR_TY_RING,
	IR_TY_MBAR,
	IR_TY_TOKEN,
	IR_TY_COUNT
} IrTypeKind;

typedef enum IrFloatKind { IR_F16, IR_BF16, IR_F32, IR_F64, IR_F8E4M3, IR_F8E5M2, IR_FK_COUNT } IrFloatKind;

typedef enum IrSpace { IR_SPACE_GLOBAL, IR_SPACE_SYMM, IR_SPACE_REG, IR_SPACE_SMEM, IR_SPACE_COUNT } IrSpace;

#define IR_DYN INT64_MIN /* a `?` dimension or stride */
#define IR_MAX_RANK 8

struct IrType {
	IrTypeKind kind;
	uint64_t hash;
	int bits;           /* INT and FLOAT: width in bits; INDEX: 64 */
	IrFloatKind fk;     /* FLOAT */
	IrType *elem;       /* PTR, TENSOR, TILE: element; RING: the slot's tile type */
	int rank;           /* TENSOR, TILE */
	int64_t *dims;      /* rank entries; IR_DYN for `?` */
	int64_t *strides;   /* TENSOR: rank entries when written, else NULL */
	IrSpace space;      /* TENSOR: GLOBAL or SYMM; TILE: REG or SMEM */
	IrAttr *layout;     /* TILE: optional layout attribute */
	int64_t n;          /* RING: slots; MBAR: barriers */
};

IrType *ir_type_int(IrCtx *c, int bits);
IrType *ir_type_index(IrCtx *c);
IrType *ir_type_float(IrCtx *c, IrFloatKind fk);
IrType *ir_type_ptr(IrCtx *c, IrType *elem);
IrType *ir_type_tensor(IrCtx *c, int rank, const int64_t *dims, IrType *elem, IrSpace space,
		       const int64_t *strides);
IrType *ir_type_tile(IrCtx *c, int rank, const int64_t *dims, IrType *elem, IrSpace space,
		     IrAttr *layout);
IrType *ir_type_ring(IrCtx *c, int64_t slots, IrType *tile);
IrType *ir_type_mbar(IrCtx *c, int64_t n);
IrType *ir_type_token(IrCtx *c);
/* The same tile with another element type / shape (layout kept / dropped). */
IrType *ir_type_tile_with_elem(IrCtx *c, IrType *tile, IrType *elem);
IrType *ir_type_tile_with_shape(IrCtx *c, IrType *tile, int rank, const int64_t *dims);
bool ir_type_is_int(const IrType *t);      /* INT or INDEX */
bool ir_type_is_float(const IrType *t);
bool ir_type_is_scalar(const IrType *t);   /* INT, INDEX or FLOAT */
bool ir_type_is_reg_tile(const IrType *t);
bool ir_type_is_smem(const IrType *t);     /* smem TILE or RING */
IrType *ir_type_elem(IrType *t);           /* scalar: itself; tile/tensor: element */
int64_t ir_type_numel(const IrType *t);    /* static tiles; -1 if dynamic */
/* Bytes of a static tile (a ring: all its slots), elements packed; -1 if dynamic. */
int64_t ir_type_bytes(const IrType *t);
int ir_type_elem_bits(const IrType *t);
const char *ir_float_name(IrFloatKind fk);
const char *ir_space_name(IrSpace s);
/* Prints `t` as it is written in `.ave` text. The hook, when given, may print an alias name for
 * any nested type or attribute instead (it returns true when it did). */
typedef bool (*IrAliasHook)(void *ud, const void *obj, bool is_type, FILE *out);
void ir_type_print(IrCtx *c, const IrType *t, FILE *out);
void ir_type_print_ex(IrCtx *c, const IrType *t, FILE *out, IrAliasHook hook, void *ud);
char *ir_type_str(IrCtx *c, const IrType *t); /* context-owned */

/* ---- attr.c: attributes (uniqued; compare by pointer) ---- */

typedef enum IrAttrKind {
	IR_ATTR_INT,
	IR_ATTR_FLOAT,
	IR_ATTR_STR,
	IR_ATTR_BOOL,
	IR_ATTR_SYM,
	IR_ATTR_TYPE,
	IR_ATTR_ARRAY,
	IR_ATTR_AVE, /* #ave.name<...> */
	IR_ATTR_COUNT
} IrAttrKind;

struct IrAttr {
	IrAttrKind kind;
	uint64_t hash;
	int64_t i;     /* INT, BOOL; AVE with an integer form (#ave.pad<8>) */
	double f;      /* FLOAT */
	IrStr s;       /* STR text, SYM name (without @), AVE name (without #ave.) */
	IrType *type;  /* TYPE */
	int n;         /* ARRAY elements; AVE key/value pairs */
	IrAttr **elts; /* ARRAY elements; AVE values */
	IrStr *keys;   /* AVE keys */
	IrStr kw;      /* AVE: leading keyword (#ave.reg<blocked, ...>) or NULL */
	bool int_form; /* AVE: #ave.name<integer> */
};

IrAttr *ir_attr_int(IrCtx *c, int64_t v);
IrAttr *ir_attr_float(IrCtx *c, double v);
IrAttr *ir_attr_str(IrCtx *c, IrStr s);
IrAttr *ir_attr_bool(IrCtx *c, bool v);
IrAttr *ir_attr_sym(IrCtx *c, IrStr name);
IrAttr *ir_attr_type(IrCtx *c, IrType *t);
IrAttr *ir_attr_array(IrCtx *c, int n, IrAttr **elts);
IrAttr *ir_attr_ave(IrCtx *c, IrStr name, IrStr kw, int n, IrStr *keys, IrAttr **vals);
IrAttr *ir_attr_ave_int(IrCtx *c, IrStr name, int64_t v);
IrAttr *ir_attr_ave_get(const IrAttr *a, IrStr key); /* value of a key of an AVE attr */
void ir_attr_print(IrCtx *c, const IrAttr *a, FILE *out);
void ir_attr_print_ex(IrCtx *c, const IrAttr *a, FILE *out, IrAliasHook hook, void *ud);
void ir_print_float(double v, FILE *out); /* shortest text that reads back to v */
void ir_print_string(const char *s, FILE *out);

/* ---- expr.c: quasi-affine index expressions over an op's operands ---- */

typedef enum IrExprKind {
	IR_EX_CONST,
	IR_EX_VAL, /* operand `opnd` of the owning op */
	IR_EX_NEG,
	IR_EX_ADD,
	IR_EX_SUB,
	IR_EX_MUL,
	IR_EX_FLOORDIV,
	IR_EX_MOD,
	IR_EX_EQ,
	IR_EX_NE,
	IR_EX_LT,
	IR_EX_LE,
	IR_EX_GT,
	IR_EX_GE,
	IR_EX_COUNT
} IrExprKind;

struct IrExpr {
	IrExprKind kind;
	int opnd;   /* VAL: operand index in the owning op */
	int64_t c;  /* CONST */
	IrExpr *l, *r;
	IrValue *pv; /* VAL while the op is being built; NULL afterwards */
};

IrExpr *ir_expr_const(IrModule *m, int64_t c);
IrExpr *ir_expr_value(IrModule *m, IrValue *v); /* a leaf bound when the op is built */
IrExpr *ir_expr_bin(IrModule *m, IrExprKind k, IrExpr *l, IrExpr *r);
IrExpr *ir_expr_neg(IrModule *m, IrExpr *e);
IrExpr *ir_expr_clone(IrModule *m, const IrExpr *e);
bool ir_expr_is_const(const IrExpr *e);          /* no value leaves */
bool ir_expr_is_cmp(const IrExpr *e);
bool ir_expr_has_cmp(const IrExpr *e);
int ir_expr_depth(const IrExpr *e);
/* Constant folding of a leaf-free expression; false on division by a non-positive constant. */
bool ir_expr_eval_const(const IrExpr *e, int64_t *out);
/* Evaluation with operand values from `vals` (indexed by operand number). */
bool ir_expr_eval(const IrExpr *e, const int64_t *vals, int64_t *out);
bool ir_expr_equal(const IrExpr *a, const IrExpr *b);
uint64_t ir_expr_hash(const IrExpr *e);
int64_t ir_floordiv(int64_t a, int64_t b);
int64_t ir_mod(int64_t a, int64_t b);
/* Prints with minimal parentheses; `name(i)` gives operand i's text. */
void ir_expr_print(const IrExpr *e, FILE *out, void (*name)(void *ud, int opnd, FILE *out),
		   void *ud);

/* ---- fold.c: integer folding with the language's wrap-around semantics ---- */

/* Folds an integer op (ave.add ... ave.shr, ave.cdiv) of width `bits` (64 for index); false if
 * it does not fold (division by zero, an op that is not integer arithmetic). */
bool ir_fold_int(int code, int bits, int64_t a, int64_t b, int64_t *out);
/* Wraps v to `bits` (sign-extended; i1 gives 0 or 1). */
int64_t ir_wrap_int(int64_t v, int bits);

/* ---- ir.c: ops, regions, blocks, values and use lists ---- */

typedef enum IrOpcode {
#define OP(id, name, nres, nreg, traits, mode, items, groups, verify) IR_OP_##id,
#include "ops.def"
#undef OP
	IR_OP_COUNT
} IrOpcode;

enum {
	IR_TRAIT_PURE = 1 << 0,       /* no side effects: CSE and DCE may act */
	IR_TRAIT_TERM = 1 << 1,       /* terminator */
	IR_TRAIT_SYMBOL = 1 << 2,     /* defines the symbol named by its first item */
	IR_TRAIT_SYMTAB = 1 << 3,     /* its region is a symbol table */
	IR_TRAIT_ISOLATED = 1 << 4,   /* sees no values from outside */
	IR_TRAIT_CUSTOM = 1 << 5,     /* custom assembly form */
	IR_TRAIT_ELEMWISE = 1 << 6,   /* elementwise over tiles */
	IR_TRAIT_TYPE_OPT = 1 << 7,   /* result types may be left out (inferred) */
	IR_TRAIT_DECL_TYPES = 1 << 8, /* `: types` declares types though the op has no result */
	IR_TRAIT_IMPLICIT_TERM = 1 << 9, /* regions end with an implicit empty ave.yield */
	IR_TRAIT_TOP = 1 << 10,       /* lives at file or ave.module level */
};

typedef enum IrValueKind { IR_VAL_RESULT, IR_VAL_ARG, IR_VAL_PARAM } IrValueKind;

struct IrValue {
	IrValueKind kind;
	int index;     /* result / argument / parameter number */
	IrType *type;
	IrStr name;    /* without '%'; may be NULL for values made by passes */
	IrUse *uses;   /* first use */
	IrOp *op;      /* RESULT, PARAM: owning op */
	IrBlock *block; /* ARG: owning block */
	IrLoc loc;
	uint32_t id;   /* scratch number for analyses (ir_number_values) */
};

struct IrUse {
	IrValue *val;
	IrOp *user;
	IrUse *next, **prev; /* prev points at the link that points at this use */
};

typedef enum IrItemKind {
	IR_IT_VALUE,   /* %v or %v[coords] */
	IR_IT_SYMBOL,  /* @s or @s[coords] */
	IR_IT_CALL,    /* @s(exprs) */
	IR_IT_DECL,    /* @s(%p: T, ...) */
	IR_IT_INT,     /* literal (operand position); `type` set for typed literals */
	IR_IT_FLOAT,
	IR_IT_EXPR,    /* index expression (group position) */
	IR_IT_STRING,
	IR_IT_KEYWORD,
	IR_IT_COUNT
} IrItemKind;

typedef struct IrCoord {
	IrExpr *e;
	int64_t len; /* `: n` range length, or -1 */
} IrCoord;

typedef struct IrItem {
	IrItemKind kind;
	int opnd;         /* VALUE: operand index */
	int ncoord;       /* coords, or CALL arguments (len = -1) */
	int nparam;       /* DECL */
	IrStr s;          /* SYMBOL, CALL, DECL: name; STRING, KEYWORD: text */
	union {
		IrCoord *coord;   /* VALUE/SYMBOL suffix, CALL arguments (ncoord of them) */
		IrValue **param;  /* DECL (nparam of them) */
	};
	union {
		int64_t i;        /* INT */
		double f;         /* FLOAT */
	};
	IrType *type;     /* INT/FLOAT/VALUE with an explicit `: type` (ave.for inits) */
	IrExpr *e;        /* EXPR */
	IrValue *pv;      /* VALUE while being built */
	IrLoc loc;
	bool suffix;      /* VALUE, SYMBOL: has `[...]` */
} IrItem;

typedef struct IrGroup {
	IrStr kw;
	IrItem *item;
	int nitem;
	IrLoc loc;
} IrGroup;

typedef struct IrNamedAttr {
	IrStr name;
	IrAttr *attr;
	IrLoc loc;
} IrNamedAttr;

struct IrOp {
	IrOpcode code;
	IrLoc loc;
	IrOp *next, *prev;
	IrBlock *parent;
	IrStr mode;
	IrUse *opnd;   /* distinct values the op reads, in order of first mention */
	IrItem *item;
	IrGroup *group;
	IrNamedAttr *attr;
	IrValue *res;
	IrRegion *reg;
	IrType **type; /* declared types of ops without results (ave.yield, ave.symm.alloc) */
	int nopnd, nitem, ngroup, nattr, nres, nreg, ntype;
	uint32_t id;   /* scratch number for analyses */
};

struct IrBlock {
	IrRegion *parent;
	IrOp *first, *last;
	int narg;
	IrValue **arg;
	int argcap;
};

struct IrRegion {
	IrOp *parent;
	IrBlock *block; /* structured IR: exactly one block per region */
};

/* `#name = attr` or `!name = type` at file level. */
typedef struct IrAlias {
	IrStr name;
	bool is_type;
	IrAttr *attr;
	IrType *type;
} IrAlias;

struct IrModule {
	IrCtx *ctx;
	IrArena arena;
	IrBlock *body; /* top-level ops (ave.kernel, ave.module, ...) */
	IrVec aliases;    /* IrAlias, in definition order */
	IrStr name;       /* file name */
	IrVec proved;     /* uint64_t: hashes of the printed kernels check-invariants proved, so
	                     a kernel a pass proved and nothing changed since is not proved twice */
};

IrModule *ir_module_new(IrCtx *c, const char *name);
void ir_module_free(IrModule *m);
IrModule *ir_module_clone(IrModule *m);

/* Op construction: fill an IrOpState, then ir_op_build. Items and groups refer to values through
 * `pv`/expression leaves; building collects them into the op's operand list. */
typedef struct IrOpState {
	IrOpcode code;
	IrLoc loc;
	IrStr mode;
	IrVec items;   /* IrItem */
	IrVec groups;  /* IrGroup */
	IrVec attrs;   /* IrNamedAttr */
	IrVec restypes; /* IrType* */
	IrVec resnames; /* IrStr (NULL for unnamed) */
	IrVec types;   /* IrType*: declared types */
	IrVec regions; /* IrRegion* (already built, detached) */
} IrOpState;

void ir_state_init(IrOpState *st, IrOpcode code, IrLoc loc);
void ir_state_free(IrModule *m, IrOpState *st); /* frees the vectors, not what they point to */
IrItem *ir_state_item(IrModule *m, IrOpState *st, IrItemKind k);
IrItem *ir_state_value(IrModule *m, IrOpState *st, IrValue *v);
IrGroup *ir_state_group(IrModule *m, IrOpState *st, IrStr kw);
IrItem *ir_group_add(IrModule *m, IrGroup *g, IrItemKind k); /* grows g->item */
IrItem *ir_group_add_expr(IrModule *m, IrGroup *g, IrExpr *e);
void ir_state_attr(IrModule *m, IrOpState *st, IrStr name, IrAttr *a);
void ir_state_result(IrModule *m, IrOpState *st, IrType *t, IrStr name);
void ir_state_type(IrModule *m, IrOpState *st, IrType *t);
void ir_state_region(IrModule *m, IrOpState *st, IrRegion *r);
/* Builds a detached op and frees st. Items, groups and their coordinate and parameter arrays may
 * live in temporary memory: the op gets its own copies (expressions and values are shared). */
IrOp *ir_op_build(IrModule *m, IrOpState *st);

/* ---- build.c: short builders for passes (one call per op) ---- */

/* Where built ops go: before `before`, or (before == NULL) at the end of `block`. */
typedef struct IrBuilder {
	IrModule *m;
	IrBlock *block;
	IrOp *before;
	IrLoc loc; /* of the ops it builds */
} IrBuilder;

void ir_builder_before(IrBuilder *b, IrModule *m, IrOp *pos); /* at pos's location */
void ir_builder_at_end(IrBuilder *b, IrModule *m, IrBlock *blk, IrLoc loc);
IrOp *ir_b_insert(IrBuilder *b, IrOp *op); /* a detached op, at the builder's point */
/* An op whose items are the values `vals` (in order) and whose results have the types `res`. */
IrOp *ir_b_op(IrBuilder *b, IrOpcode code, int nres, IrType *const *res, int nval,
	      IrValue *const *vals);
IrValue *ir_b_index(IrBuilder *b, IrExpr *e);                     /* ave.index e */
IrValue *ir_b_const_int(IrBuilder *b, IrType *t, int64_t v, IrStr name); /* ave.const v : t */
/* ave.yield of vals, with their types written out when `typed`. */
IrOp *ir_b_yield(IrBuilder *b, int n, IrValue *const *vals, bool typed);

IrRegion *ir_region_new(IrModule *m);   /* with one empty block */
IrValue *ir_block_add_arg(IrModule *m, IrBlock *b, IrType *t, IrStr name, IrLoc loc);
IrValue *ir_param_new(IrModule *m, IrType *t, IrStr name, IrLoc loc); /* DECL parameter */

void ir_block_append(IrBlock *b, IrOp *op);
void ir_block_prepend(IrBlock *b, IrOp *op);
void ir_op_insert_before(IrOp *pos, IrOp *op);
void ir_op_insert_after(IrOp *pos, IrOp *op);
void ir_op_unlink(IrOp *op);
/* Drops the op's uses (and those of ops nested in it) and unlinks it. Its results must be dead. */
void ir_op_erase(IrOp *op);
void ir_replace_all_uses(IrValue *from, IrValue *to);
/* Recomputes op->opnd from its items and groups after a pass edited them: leaves and VALUE
 * items with `pv` set take that value, the others keep the value of their old operand. */
void ir_op_refresh_operands(IrModule *m, IrOp *op);
void ir_use_set(IrUse *u, IrValue *v); /* re-points one use */
bool ir_value_has_uses(const IrValue *v);
int ir_value_nuses(const IrValue *v);
IrOp *ir_op_parent_op(const IrOp *op);         /* op owning the region that holds op */
IrOp *ir_block_parent_op(const IrBlock *b);
bool ir_op_is_ancestor(const IrOp *anc, const IrOp *op); /* anc contains op (or anc == op) */
IrOp *ir_op_clone(IrModule *m, IrOp *op, IrMap *vmap); /* deep copy; vmap maps old→new values */
IrValue *ir_op_value(const IrOp *op, int opnd);  /* the value read by operand `opnd` */
/* The value an item names: a VALUE item, or an index expression that is a lone value (SPEC §3
 * stores `into(%s)` as an expression); NULL otherwise. */
IrValue *ir_item_value(const IrOp *op, const IrItem *it);
/* The operand number of the value an item names (as ir_item_value), or -1. */
int ir_item_opnd(const IrItem *it);
IrGroup *ir_op_group(const IrOp *op, IrStr kw);
const IrGroup *ir_op_group_named(const IrOp *op, const char *kw); /* by text */
IrAttr *ir_op_attr(const IrOp *op, IrStr name);
void ir_op_set_attr(IrModule *m, IrOp *op, IrStr name, IrAttr *a);
uint32_t ir_number_values(IrOp *root); /* numbers values and ops below root; returns the count */
IrOp *ir_kernel_of(IrOp *op);       /* the enclosing ave.kernel */
/* Whether a persistent kernel walks its tiles itself: it reads ave.cta_id or ave.num_ctas, and
 * runs once per CTA (docs/language.md, "Kernel attributes"). */
bool ir_kernel_walks(IrOp *kernel);
IrOp *ir_role_of(IrOp *op);         /* the enclosing ave.role or NULL */
/* A value name `base.suffix` (or `base.suffixN`) that no value of `kernel` (its arguments
 * included) has. */
IrStr ir_fresh_name(IrCtx *c, IrOp *kernel, const char *base, const char *suffix);
/* v is an `ave.smem.alloc {spill = true}`: where regalloc keeps a register tile a while. */
bool ir_spill_buffer(IrCtx *c, const IrValue *v);

/* Walks ops in pre-order (op, then the ops of its regions). Returns false to stop early. */
typedef bool (*IrWalkFn)(IrOp *op, void *ud);
bool ir_walk(IrBlock *b, IrWalkFn fn, void *ud);
bool ir_walk_op(IrOp *op, IrWalkFn fn, void *ud);

/* ---- opinfo.c: the op table ---- */

/* One kind set of an item pattern: a bit per IrItemKind, plus flags. */
typedef struct IrItemPat {
	uint32_t kinds;  /* bit (1 << IrItemKind) */
	bool suffix_ok;  /* VALUE/SYMBOL may carry [...] */
	bool repeat;     /* '*': zero or more */
} IrItemPat;

typedef struct IrGroupPat {
	IrStr kw;
	bool required;
	int nitem;       /* -1 for a bare group (no parentheses) */
	IrItemPat item[4];
} IrGroupPat;

struct IrOpInfo {
	const char *name;
	IrStr iname;
	int nres;        /* -1: variadic */
	int nreg;        /* -1: 1 or 2 */
	unsigned traits;
	int nmode;
	IrStr mode[8];
	int nitem;
	IrItemPat item[4];
	int ngroup;
	IrGroupPat group[12];
	bool (*verify)(IrCtx *c, IrOp *op);
};

/* Builds the table in the context (called by ir_ctx_new). */
void ir_opinfo_init(IrCtx *c);
const IrOpInfo *ir_opinfo(const IrCtx *c, IrOpcode code);
bool ir_opinfo_mode_required(IrOpcode code);
bool ir_opcode_lookup(const IrCtx *c, const char *name, size_t n, IrOpcode *out);
const char *ir_op_name(IrOpcode code);
/* The op name closest to s[0, n) when it looks like a typo of one ("did you mean"), or NULL. */
const char *ir_op_closest(const char *s, size_t n);
/* For an attribute key `name` (interned) of an op `code`: NULL when it has a meaning on that op
 * (attrs.def) or looks like none that has one; else the meaningful name it is, or looks like a
 * typo of, preferring the op's own names, with the op it belongs to in *owner. */
IrStr ir_op_attr_closest(IrCtx *c, IrOpcode code, IrStr name, IrOpcode *owner);
bool ir_op_has_trait(const IrCtx *c, const IrOp *op, unsigned t);

/* ---- print.c: the canonical printer ---- */

typedef struct IrPrintOpts {
	bool generic;   /* no alias substitution */
	bool locations; /* trailing `// line:col` comments (debugging) */
} IrPrintOpts;

void ir_module_print(IrModule *m, FILE *out, const IrPrintOpts *o);
void ir_op_print(IrModule *m, IrOp *op, FILE *out, int indent);
char *ir_op_str(IrModule *m, IrOp *op); /* one line, context-owned */

/* ---- verify.c: structural and per-op verification ---- */

/* Emits a diagnostic per failure; true when the module is valid. */
bool ir_verify(IrModule *m);
/* Helpers for op verifier hooks (verify_ops.c). */
bool ir_verify_op_shape(IrCtx *c, IrOp *op);
IrOp *ir_symbol_lookup(IrCtx *c, IrOp *from, IrStr name); /* innermost symbol table first */
IrStr ir_op_symbol(const IrOp *op);               /* symbol an op defines, or NULL */
/* Interval of an index expression from what its leaves are defined by; false if unbounded. */
bool ir_expr_range(const IrOp *op, const IrExpr *e, int64_t *lo, int64_t *hi);
bool ir_value_range(const IrValue *v, int64_t *lo, int64_t *hi);
bool ir_value_const(const IrValue *v, int64_t *out);

/* ---- verify_ops.c: one hook per op (named in ops.def) ---- */

/* Rules every type obeys wherever it appears (tile ranks, static shapes, layouts, rings). */
bool ir_check_type(IrCtx *c, IrLoc loc, const IrType *t);
#define OP(id, name, nres, nreg, traits, mode, items, groups, verify) bool verify(IrCtx *c, IrOp *op);
#include "ops.def"
#undef OP

/* ---- roles.c: the role analysis (SPEC 5.7) ---- */

/* One role of an ave.warp_specialize: its place in the CTA and what it asks for. Groups that are
 * missing take their defaults; malformed ones are the verifier's to report. */
typedef struct IrRoleInfo {
	IrOp *op;           /* the ave.role */
	const char *name;
	int64_t first_warp; /* its first warp in the CTA */
	int64_t warps;      /* per replica */
	int64_t replicas;
	int64_t issue;      /* issue(n), 0 when unset (every warp issues) */
	int64_t regs;       /* regs(n), 0 when unset (the entry budget) */
} IrRoleInfo;

IrRoleInfo ir_role_info(IrCtx *c, IrOp *role);
/* The roles of ave.warp_specialize `ws` in order: fills at most `max` and returns how many there
 * are. */
int ir_roles(IrCtx *c, IrOp *ws, IrRoleInfo *out, int max);
/* Warps of all roles and replicas together. */
int64_t ir_role_warps_total(IrCtx *c, IrOp *ws);

/* The candidate closest to s[0, n) when it is close enough to be a typo ("did you mean"), or
 * NULL (diag.c). */
const char *ir_closest(const char *s, size_t n, const char *const *cands, int ncand);

/* Writes s as a JSON string, quoted and escaped (json.c; the one JSON string writer). */
void ir_json_str(FILE *out, const char *s);

/* ---- pass.c: the pass manager ---- */

typedef struct IrPassOpts IrPassOpts;
typedef struct IrPass {
	const char *name;
	const char *summary;
	bool (*run)(IrModule *m, const IrPassOpts *o); /* false after emitting errors */
	const char *options; /* the option names it takes, space-separated ("" for none) */
} IrPass;

enum { IR_PASS_MAX_ARGS = 8 };

struct IrPassOpts {
	bool print_after_all;
	bool time_passes;
	bool verify_each;
	const TargetInfo *target; /* --target, or NULL */
	FILE *dump;         /* where --print-after-all and --time-passes write */
	/* Called after each pass with its name and wall time (ave compile -v), or NULL. */
	void (*after_pass)(void *ud, const char *pass, double seconds);
	void *after_pass_ud;
	/* The 32-bit registers per thread of each register tile of `kernel` as the lowering for t
	 * lays it out, by value id (regalloc/regalloc.h, RaTileRegsFn): set by tools that link the
	 * lowering; NULL elsewhere (regalloc then sizes tiles by their blocked layout). */
	bool (*tile_regs)(IrCtx *c, IrOp *kernel, const TargetInfo *t, int32_t *regs);
	/* Registers `regalloc` keeps for what is not a tile in the kernels named (ra_kernel[i],
	 * without '@'), where a compile found its default too few: ptxas spilled a kernel whose
	 * plan fit, and the compile runs again (runtime/jit_backends.c). A `reserve` or `remat`
	 * option given to the pass wins. */
	int nra;
	const char *const *ra_kernel;
	const int *ra_reserve;
	bool ra_no_remat; /* ... and those kernels' loaded tiles wait in shared memory too */
	int *ra_applied;  /* counts the kernels regalloc took them for (with spilling on) */
	/* The running pass's options from `name{key=value ...}` (set by the pass manager). */
	int nargs;
	const char *key[IR_PASS_MAX_ARGS], *val[IR_PASS_MAX_ARGS];
};

typedef struct IrPassTiming {
	const char *name;
	double seconds;
} IrPassTiming;

/* Runs the comma-separated pipeline (names from `registry`, each optionally followed by its
 * options in MLIR's syntax: `warp-specialize{mode=pingpong consumers=2}`). Every name and option
 * is resolved before any pass runs; an unknown one is an error. Returns false on failure. */
bool ir_run_pipeline(IrModule *m, const IrPass *registry, int npass, const char *pipeline,
		     const IrPassOpts *o);
const IrPass *ir_pass_find(const IrPass *registry, int npass, const char *name, size_t n);
/* The value of option `key` of the running pass, or NULL when not given. */
const char *ir_pass_arg(const IrPassOpts *o, const char *key);
/* An integer option: `dflt` when not given; false (after an error naming the pass) when the value
 * is not an integer in [lo, hi]. */
bool ir_pass_arg_int(IrCtx *c, const IrPassOpts *o, const char *pass, const char *key,
		     int64_t dflt, int64_t lo, int64_t hi, int64_t *out);
double ir_now(void);

/* ---- chunk.c: chunks and chunk schedules (SPEC 5.9) ---- */

/* A box of a symmetric buffer: per dimension its first element and length. */
typedef struct IrChunkBox {
	IrOp *buf; /* the ave.symm.alloc */
	int rank;
	int64_t lo[IR_MAX_RANK], len[IR_MAX_RANK];
} IrChunkBox;

/* One wave of a chunk schedule on one rank: the chunk that becomes ready and the rank it comes
 * from (the rank itself for its local chunk). */
typedef struct IrChunkStep {
	int64_t chunk, peer;
} IrChunkStep;

/* The region (`region(...)`) or the signal slot (`signal(...)`, lengths 1) of chunk `ch`, an
 * ave.chunk, for its arguments `args` (one per parameter). False with a message in err when an
 * expression divides by a value that is not positive. A coordinate without `: n` is one element. */
bool ir_chunk_box(IrCtx *c, IrOp *ch, IrStr which, const int64_t *args, IrChunkBox *out,
		  char *err, size_t errlen);
/* Chunk q of `ch`, the chunk a kernel's launch gathers (`gathered = @ch`): its region and signal
 * slot, checked to be what the launch can copy (rows of contiguous elements inside a buffer of
 * rank 1 or 2, a 32- or 64-bit integer slot inside its buffer). False with a message in err.
 * The verifier, the lowering's metadata and the interpreter's gather share it. */
bool ir_gathered_chunk(IrCtx *c, IrOp *ch, int64_t q, IrChunkBox *region, IrChunkBox *slot,
		       char *err, size_t errlen);
/* The ave.chunk a schedule is for. */
IrOp *ir_chunk_schedule_for(IrCtx *c, IrOp *sched);
/* The step of schedule `sched` for `rank` at `wave` (both in [0, world)) of a `world`-rank job:
 * its chunk(...)/peer(...) expressions, or its template (docs/language.md defines them). False
 * with a message in err when an expression fails or gives a peer outside [0, world). */
bool ir_chunk_schedule_step(IrCtx *c, IrOp *sched, int64_t world, int64_t rank, int64_t wave,
			    IrChunkStep *out, char *err, size_t errlen);
/* Prints every rank's waves with the chunk, the peer and the chunk's region (tools' --print). */
bool ir_chunk_schedule_print(IrCtx *c, IrOp *sched, int64_t world, FILE *out);

#endif
