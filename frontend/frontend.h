/* frontend.h — the `.ave` text frontend: a flex lexer and a bison parser (SPEC §3) that build
 * the IR directly, resolving value names through lexical scopes as they are read. */
#ifndef AVE_FRONTEND_H
#define AVE_FRONTEND_H

#include "../ir/ir.h"

/* Limits (SPEC §3 asks for at least 256 levels and 64 MiB). */
enum {
	FE_MAX_NESTING = 1024,  /* regions inside regions */
	FE_MAX_EXPR_DEPTH = 512 /* nesting inside one index expression */
};
#define FE_MAX_INPUT ((size_t)1 << 30)

/* Parses `len` bytes of `.ave` text. `line0` is the number of the first line (split inputs keep
 * the file's numbering). Returns NULL after emitting diagnostics. The caller owns the module. */
IrModule *fe_parse(IrCtx *c, const char *name, const char *text, size_t len, uint32_t line0);
/* Reads and parses a file ("-" is standard input). */
IrModule *fe_parse_file(IrCtx *c, const char *path);
/* Reads a whole file into a malloc'd, NUL-terminated buffer; NULL with an error emitted. */
char *fe_read_file(IrCtx *c, const char *path, size_t *len);
/* Parses text allocated with the context's allocator (`size` bytes), which the context keeps for
 * its diagnostics: no copy is made. Returns NULL after emitting diagnostics. */
IrModule *fe_parse_taken(IrCtx *c, const char *name, char *text, size_t len, size_t size);

/* ---- internal: shared by parse.c, lexer.l and parser.y ---- */

typedef struct FeList {
	void **v;
	int n, cap;
} FeList;

typedef struct FeShape {
	int rank;
	int64_t dims[IR_MAX_RANK];
	IrType *elem;
} FeShape;

typedef struct FeName {
	IrStr name;
	IrLoc loc;
} FeName;

typedef struct FeParser {
	IrCtx *c;
	IrModule *m;
	const char *src;
	size_t len, off;
	size_t feed;     /* bytes handed to the scanner so far */
	uint32_t file, line, col;
	const char *tok; /* the last token's text (for messages) */
	size_t toklen;
	void *scanner;
	IrMap names;     /* IrStr -> FeEntry* */
	size_t vscan_end; /* value_token: where the last look-ahead over `, %x` stopped */
	int vscan_tok;    /* ... and what it decided for every value of that list */
	IrMap aliases[2]; /* attribute [0] and type [1] aliases: IrStr -> index + 1 in m->aliases */
	IrVec undo;      /* FeEntry* in definition order */
	IrVec marks;     /* int */
	IrVec decls;     /* int: scope levels opened by declarations */
	int level, iso, nesting;
	IrBlock *pending; /* block (with arguments) for the next region */
	IrVec blocks;     /* IrRegion*: the regions being filled, innermost last */
	IrVec opens;      /* IrLoc of each open region's '{' */
	IrArena scratch;  /* the grammar's temporaries: reset after each top-level op */
	IrArena names_arena; /* scope entries, for the whole parse */
	bool failed;
} FeParser;

void *fe_alloc(FeParser *p, size_t n); /* temporary: gone after the current top-level op */
void fe_list_push(FeParser *p, FeList *l, void *x);
FeList *fe_list_new(FeParser *p);
IrLoc fe_loc(FeParser *p, int line, int col);
void fe_error(FeParser *p, IrLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void fe_scope_push(FeParser *p);
void fe_scope_pop(FeParser *p);
bool fe_define(FeParser *p, IrValue *v);
IrValue *fe_lookup(FeParser *p, IrStr name, IrLoc loc);

IrType *fe_type_alias(FeParser *p, IrStr name, IrLoc loc);
IrAttr *fe_attr_alias(FeParser *p, IrStr name, IrLoc loc);
bool fe_def_alias(FeParser *p, IrStr name, bool is_type, IrAttr *a, IrType *t, IrLoc loc);

void *fe_lexer_new(FeParser *p);
void fe_lexer_free(void *scanner);

/* The scalar type names, as the lexer knows them (for "did you mean"). */
enum { FE_NSCALAR = 12 };
extern const char *const fe_scalar_names[FE_NSCALAR];

#endif
