/* parser.y — the `.ave` grammar (SPEC §3), LALR(1) with no conflicts. Actions build IR directly:
 * values are resolved through lexical scopes as soon as they are read, ops are built when they
 * are reduced, and a region's block is appended to as its ops arrive. */
%code requires {
#include "frontend.h"

typedef struct FeBody {
	FeList *items, *groups, *attrs, *regions, *types;
	bool has_types;
	IrLoc types_loc;
} FeBody;

typedef struct FeParam {
	IrStr name;
	IrType *type;
	IrLoc loc;
} FeParam;

typedef struct FeAveBody {
	bool is_int;
	int64_t i;
	IrStr kw;
	FeList *kvs;
} FeAveBody;

typedef struct FeIter {
	FeList *names;  /* FeName* */
	FeList *inits;  /* IrItem* */
	FeList *types;  /* IrType* */
} FeIter;
}

%code provides {
#define YYSTYPE FE_YYSTYPE
#define YYLTYPE FE_YYLTYPE
int fe_yylex(FE_YYSTYPE *lval, FE_YYLTYPE *lloc, void *scanner);
int fe_yyparse(FeParser *p, void *scanner);
}

%code {
#include <string.h>

/* Room for FE_MAX_NESTING nested regions (each ave.for takes about 15 entries of the stack);
 * the nesting limit, not bison, then reports deeper input. */
#define YYMAXDEPTH 40000

#define L(x) fe_loc(p, (x).first_line, (x).first_column)
#define M p->m
#define C p->c

static IrItem *new_item(FeParser *p, IrItemKind k, IrLoc loc);
static IrExpr *mk_bin(FeParser *p, IrExprKind k, IrExpr *l, IrExpr *r, IrLoc loc);
static FeBody *body_new(FeParser *p);
static IrOp *build_generic(FeParser *p, FeList *results, int code, IrStr mode, FeBody *b,
			   IrLoc loc);
static IrOp *build_kernel(FeParser *p, IrStr name, IrLoc nameloc, FeList *attrs, IrRegion *r,
			  IrLoc loc);
static IrOp *build_for(FeParser *p, FeList *results, IrExpr *lb, IrExpr *ub, IrExpr *step,
		       IrLoc lbloc, IrLoc ubloc, IrLoc steploc, FeIter *it, FeList *attrs,
		       IrRegion *r, IrLoc loc);
static IrOp *build_if(FeParser *p, FeList *results, IrItem *cond, FeList *types, IrRegion *then,
		      IrRegion *els, IrLoc loc);
static IrOp *build_index(FeParser *p, FeList *results, IrExpr *e, IrLoc eloc, IrType *t,
			 IrLoc loc);
static bool enter_region(FeParser *p, IrLoc loc);
static IrRegion *leave_region(FeParser *p);
static bool enter_args(FeParser *p, FeList *names, FeList *types, IrLoc loc, bool isolate);
static bool append_op(FeParser *p, IrOp *op);
static void result_locs(IrOp *op, FeList *results);
static IrItem *decl_item(FeParser *p, IrStr name, FeList *params, IrLoc loc);
static IrType *make_tile(FeParser *p, FeShape *s, IrStr space, IrAttr *layout, IrLoc loc,
			 bool tensor, FeList *strides);
static IrAttr *make_ave_attr(FeParser *p, IrStr name, IrStr kw, FeList *kvs);

/* Only "memory exhausted" reaches here (syntax errors go through yyreport_syntax_error). */
static void
fe_yyerror(YYLTYPE *l, FeParser *p, void *scanner, const char *msg)
{
	(void)scanner;
	fe_error(p, fe_loc(p, l->first_line, l->first_column), "%s: input is nested too deeply", msg);
}
}

%define api.pure full
%define api.prefix {fe_yy}
%define parse.error custom
%define parse.lac full
%locations
%parse-param {FeParser *p} {void *scanner}
%lex-param {void *scanner}

%union {
	int64_t i;
	double f;
	IrStr s;
	IrType *type;
	IrAttr *attr;
	IrExpr *expr;
	IrItem *item;
	FeList *list;
	FeShape *shape;
	int op;
	IrOp *node;
	IrRegion *region;
	IrGroup *group;
	IrNamedAttr *nattr;
	FeBody *body;
	FeParam *param;
	FeIter *iter;
	IrExprKind ek;
	IrCoord *coord;
	FeAveBody *avebody;
}

%token <s> IDENT "keyword" GROUPKW "group keyword" SYMBOL "symbol" VALUE "value"
%token <s> DEFVALUE "value definition" STRING "string" ATTR_ALIAS "attribute alias"
%token <s> AVE_ATTR "'#ave.' attribute" TYPE_ALIAS "type alias"
%token <s> TO "'to'" STEP "'step'" ITER_ARGS "'iter_args'" ELSE "'else'" MOD "'mod'"
%token <s> FLOORDIV "'floordiv'" TRUE "'true'" FALSE "'false'" INF "'inf'" NAN_ "'nan'"
%token <i> INTEGER "integer"
%token <f> FLOAT "float"
%token <shape> SHAPE "shape"
%token <type> SCALAR_TYPE "scalar type"
%token <op> OPNAME "op name"
%token KW_KERNEL "'ave.kernel'" KW_FOR "'ave.for'" KW_IF "'ave.if'" KW_INDEX "'ave.index'"
%token T_TILE "'!ave.tile'" T_TENSOR "'!ave.tensor'" T_RING "'!ave.ring'" T_MBAR "'!ave.mbar'"
%token T_PTR "'!ave.ptr'" T_TOKEN "'!ave.token'"
%token ARROW "'->'" EQEQ "'=='" NEQ "'!='" LEQ "'<='" GEQ "'>='" LBRACE_ATTR "attribute dictionary"

%type <node> op generic_op kernel_op for_op if_op index_op
%type <list> results results_opt operands gitems coords call_args decl_params kparams kparams_opt
%type <list> groups groups1 attrs_opt kvs regions_opt types_opt type_list strides attr_list
%type <list> arrow_opt iter_list
%type <body> body tail
%type <item> operand gitem int_lit float_lit init
%type <coord> coord
%type <group> group pgroup
%type <expr> expr aexpr mexpr uexpr primary
%type <ek> cmpop
%type <type> type type_opt
%type <attr> attribute layout_opt
%type <avebody> ave_body
%type <nattr> kv
%type <s> key
%type <region> region else_opt
%type <param> kparam
%type <iter> iter_opt
%type <i> stride

%%

file
	: %empty
	| file top
	;

/* Nothing the grammar allocated for a top-level item is needed once it is built (the lookahead
 * after it is an op, an alias or the end, whose values are interned). */
top
	: alias_def                     { ir_arena_reset(&p->scratch); }
	| op                            { if (!append_op(p, $1)) YYABORT; ir_arena_reset(&p->scratch); }
	;

/* alias-def ::= '#' ident '=' attribute | '!' ident '=' type */
alias_def
	: ATTR_ALIAS '=' attribute      { if (!fe_def_alias(p, $1, false, $3, NULL, L(@1))) YYABORT; }
	| TYPE_ALIAS '=' type           { if (!fe_def_alias(p, $1, true, NULL, $3, L(@1))) YYABORT; }
	;

op
	: generic_op
	| kernel_op
	| for_op
	| if_op
	| index_op
	;

results_opt
	: %empty                        { $$ = NULL; }
	| results '='                   { $$ = $1; }
	;

results
	: DEFVALUE                      { $$ = fe_list_new(p); FeName *n = fe_alloc(p, sizeof *n);
					  n->name = $1; n->loc = L(@1); fe_list_push(p, $$, n); }
	| results ',' DEFVALUE          { $$ = $1; FeName *n = fe_alloc(p, sizeof *n);
					  n->name = $3; n->loc = L(@3); fe_list_push(p, $$, n); }
	;

/* op ::= results? op-name mode? operands? group* attr-dict? region* (':' type-list)?
 * A keyword right after the op name is the mode (a group keyword is followed by '('). */
generic_op
	: results_opt OPNAME IDENT body { $$ = build_generic(p, $1, $2, $3, $4, L(@2)); if (!$$) YYABORT;
					  result_locs($$, $1); }
	| results_opt OPNAME body       { $$ = build_generic(p, $1, $2, NULL, $3, L(@2)); if (!$$) YYABORT;
					  result_locs($$, $1); }
	;

body
	: operands groups tail          { $$ = $3; $$->items = $1; $$->groups = $2; }
	| groups1 tail                  { $$ = $2; $$->groups = $1; }
	| tail                          { $$ = $1; }
	;

tail
	: attrs_opt regions_opt types_opt
					{ $$ = body_new(p); $$->attrs = $1; $$->regions = $2;
					  $$->types = $3; $$->has_types = $3 != NULL; $$->types_loc = L(@3); }
	;

operands
	: operand                       { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| operands ',' operand          { $$ = $1; fe_list_push(p, $$, $3); }
	;

/* operand ::= value-id index-suffix? | symbol index-suffix? | symbol-call | symbol-decl
 *           | '-'? integer | '-'? float */
operand
	: VALUE                         { $$ = new_item(p, IR_IT_VALUE, L(@1));
					  if (!($$->pv = fe_lookup(p, $1, L(@1)))) YYABORT; }
	| VALUE '[' coords ']'          { $$ = new_item(p, IR_IT_VALUE, L(@1));
					  if (!($$->pv = fe_lookup(p, $1, L(@1)))) YYABORT;
					  $$->suffix = true; $$->ncoord = $3->n;
					  $$->coord = fe_alloc(p, sizeof(IrCoord) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) $$->coord[i] = *(IrCoord *)$3->v[i]; }
	| SYMBOL                        { $$ = new_item(p, IR_IT_SYMBOL, L(@1)); $$->s = $1; }
	| SYMBOL '[' coords ']'         { $$ = new_item(p, IR_IT_SYMBOL, L(@1)); $$->s = $1;
					  $$->suffix = true; $$->ncoord = $3->n;
					  $$->coord = fe_alloc(p, sizeof(IrCoord) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) $$->coord[i] = *(IrCoord *)$3->v[i]; }
	| SYMBOL '(' ')'                { $$ = new_item(p, IR_IT_CALL, L(@1)); $$->s = $1; }
	| SYMBOL '(' call_args ')'      { $$ = new_item(p, IR_IT_CALL, L(@1)); $$->s = $1;
					  $$->ncoord = $3->n;
					  $$->coord = fe_alloc(p, sizeof(IrCoord) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) {
						  $$->coord[i].e = $3->v[i]; $$->coord[i].len = -1; } }
	| SYMBOL '(' decl_params ')'    { $$ = decl_item(p, $1, $3, L(@1)); if (!$$) YYABORT; }
	| int_lit
	| float_lit
	;

int_lit
	: INTEGER                       { $$ = new_item(p, IR_IT_INT, L(@1)); $$->i = $1; }
	| '-' INTEGER                   { $$ = new_item(p, IR_IT_INT, L(@1));
					  $$->i = (int64_t)(0 - (uint64_t)$2); }
	;

float_lit
	: FLOAT                         { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = $1; }
	| '-' FLOAT                     { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = -$2; }
	| INF                           { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = __builtin_inf(); }
	| '-' INF                       { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = -__builtin_inf(); }
	| NAN_                          { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = __builtin_nan(""); }
	| '-' NAN_                      { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = -__builtin_nan(""); }
	;

call_args
	: expr                          { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| call_args ',' expr            { $$ = $1; fe_list_push(p, $$, $3); }
	;

decl_params
	: VALUE ':' type                { $$ = fe_list_new(p); FeParam *x = fe_alloc(p, sizeof *x);
					  x->name = $1; x->type = $3; x->loc = L(@1); fe_list_push(p, $$, x); }
	| decl_params ',' VALUE ':' type
					{ $$ = $1; FeParam *x = fe_alloc(p, sizeof *x);
					  x->name = $3; x->type = $5; x->loc = L(@3); fe_list_push(p, $$, x); }
	;

/* index-suffix ::= '[' coord (',' coord)* ']';  coord ::= index-expr (':' integer)? */
coords
	: coord                         { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| coords ',' coord              { $$ = $1; fe_list_push(p, $$, $3); }
	;

coord
	: expr                          { $$ = fe_alloc(p, sizeof *$$); $$->e = $1; $$->len = -1; }
	| expr ':' INTEGER              { $$ = fe_alloc(p, sizeof *$$); $$->e = $1; $$->len = $3; }
	;

/* group ::= keyword ('(' (group-item (',' group-item)*)? ')')? */
groups
	: %empty                        { $$ = fe_list_new(p); }
	| groups group                  { $$ = $1; fe_list_push(p, $$, $2); }
	;

groups1
	: pgroup                        { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| groups1 group                 { $$ = $1; fe_list_push(p, $$, $2); }
	;

group
	: pgroup
	| IDENT                         { $$ = fe_alloc(p, sizeof *$$); $$->kw = $1; $$->loc = L(@1); }
	;

pgroup
	: GROUPKW '(' ')'               { $$ = fe_alloc(p, sizeof *$$); $$->kw = $1; $$->loc = L(@1); }
	| GROUPKW '(' gitems ')'        { $$ = fe_alloc(p, sizeof *$$); $$->kw = $1; $$->loc = L(@1);
					  $$->nitem = $3->n;
					  $$->item = fe_alloc(p, sizeof(IrItem) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) $$->item[i] = *(IrItem *)$3->v[i]; }
	;

gitems
	: gitem                         { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| gitems ',' gitem              { $$ = $1; fe_list_push(p, $$, $3); }
	;

/* A lone value, an integer, a negated integer or a parenthesised expression is an index
 * expression; `%v[...]`, symbols, floats, strings and keywords are operands. */
gitem
	: expr                          { $$ = new_item(p, IR_IT_EXPR, L(@1)); $$->e = $1; }
	| VALUE '[' coords ']'          { $$ = new_item(p, IR_IT_VALUE, L(@1));
					  if (!($$->pv = fe_lookup(p, $1, L(@1)))) YYABORT;
					  $$->suffix = true; $$->ncoord = $3->n;
					  $$->coord = fe_alloc(p, sizeof(IrCoord) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) $$->coord[i] = *(IrCoord *)$3->v[i]; }
	| SYMBOL                        { $$ = new_item(p, IR_IT_SYMBOL, L(@1)); $$->s = $1; }
	| SYMBOL '[' coords ']'         { $$ = new_item(p, IR_IT_SYMBOL, L(@1)); $$->s = $1;
					  $$->suffix = true; $$->ncoord = $3->n;
					  $$->coord = fe_alloc(p, sizeof(IrCoord) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) $$->coord[i] = *(IrCoord *)$3->v[i]; }
	| SYMBOL '(' ')'                { $$ = new_item(p, IR_IT_CALL, L(@1)); $$->s = $1; }
	| SYMBOL '(' call_args ')'      { $$ = new_item(p, IR_IT_CALL, L(@1)); $$->s = $1;
					  $$->ncoord = $3->n;
					  $$->coord = fe_alloc(p, sizeof(IrCoord) * (size_t)$3->n);
					  for (int i = 0; i < $3->n; i++) {
						  $$->coord[i].e = $3->v[i]; $$->coord[i].len = -1; } }
	| SYMBOL '(' decl_params ')'    { $$ = decl_item(p, $1, $3, L(@1)); if (!$$) YYABORT; }
	| FLOAT                         { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = $1; }
	| '-' FLOAT                     { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = -$2; }
	| INF                           { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = __builtin_inf(); }
	| '-' INF                       { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = -__builtin_inf(); }
	| NAN_                          { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = __builtin_nan(""); }
	| '-' NAN_                      { $$ = new_item(p, IR_IT_FLOAT, L(@1)); $$->f = -__builtin_nan(""); }
	| STRING                        { $$ = new_item(p, IR_IT_STRING, L(@1)); $$->s = $1; }
	| IDENT                         { $$ = new_item(p, IR_IT_KEYWORD, L(@1)); $$->s = $1; }
	;

/* index-expr: unary '-' binds tightest; then '*' 'floordiv' 'mod'; then '+' '-';
 * comparisons are non-associative and lowest. */
expr
	: aexpr
	| aexpr cmpop aexpr             { $$ = mk_bin(p, $2, $1, $3, L(@2)); if (!$$) YYABORT; }
	;

cmpop
	: EQEQ                          { $$ = IR_EX_EQ; }
	| NEQ                           { $$ = IR_EX_NE; }
	| '<'                           { $$ = IR_EX_LT; }
	| LEQ                           { $$ = IR_EX_LE; }
	| '>'                           { $$ = IR_EX_GT; }
	| GEQ                           { $$ = IR_EX_GE; }
	;

aexpr
	: mexpr
	| aexpr '+' mexpr               { $$ = mk_bin(p, IR_EX_ADD, $1, $3, L(@2)); if (!$$) YYABORT; }
	| aexpr '-' mexpr               { $$ = mk_bin(p, IR_EX_SUB, $1, $3, L(@2)); if (!$$) YYABORT; }
	;

mexpr
	: uexpr
	| mexpr '*' uexpr               { $$ = mk_bin(p, IR_EX_MUL, $1, $3, L(@2)); if (!$$) YYABORT; }
	| mexpr FLOORDIV uexpr          { $$ = mk_bin(p, IR_EX_FLOORDIV, $1, $3, L(@2)); if (!$$) YYABORT; }
	| mexpr MOD uexpr               { $$ = mk_bin(p, IR_EX_MOD, $1, $3, L(@2)); if (!$$) YYABORT; }
	;

uexpr
	: primary
	| '-' uexpr                     { if ($2->kind == IR_EX_CONST)
						  { $$ = $2; $$->c = (int64_t)(0 - (uint64_t)$2->c); }
					  else { $$ = mk_bin(p, IR_EX_NEG, $2, NULL, L(@1)); if (!$$) YYABORT; } }
	;

primary
	: VALUE                         { IrValue *v = fe_lookup(p, $1, L(@1)); if (!v) YYABORT;
					  $$ = ir_expr_value(M, v); }
	| INTEGER                       { $$ = ir_expr_const(M, $1); }
	| '(' expr ')'                  { $$ = $2; }
	;

attrs_opt
	: %empty                        { $$ = NULL; }
	| LBRACE_ATTR kvs '}'           { $$ = $2; }
	;

kvs
	: kv                            { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| kvs ',' kv                    { $$ = $1; fe_list_push(p, $$, $3); }
	;

kv
	: key '=' attribute             { $$ = fe_alloc(p, sizeof *$$); $$->name = $1; $$->attr = $3;
					  $$->loc = L(@1); }
	;

/* Reserved words and scalar type names are allowed as attribute keys. */
key
	: IDENT | TO | STEP | ITER_ARGS | ELSE | MOD | FLOORDIV | TRUE | FALSE | INF | NAN_
	| SCALAR_TYPE                   { $$ = ir_intern_cstr(C, ir_type_str(C, $1)); }
	;

regions_opt
	: %empty                        { $$ = NULL; }
	| regions_opt region            { $$ = $1 ? $1 : fe_list_new(p); fe_list_push(p, $$, $2); }
	;

region
	: '{'                           { if (!enter_region(p, L(@1))) YYABORT; }
	  ops '}'                       { $$ = leave_region(p); }
	;

ops
	: %empty
	| ops op                        { if (!append_op(p, $2)) YYABORT; }
	;

types_opt
	: %empty                        { $$ = NULL; }
	| ':' type_list                 { $$ = $2; }
	;

type_list
	: type                          { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| type_list ',' type            { $$ = $1; fe_list_push(p, $$, $3); }
	;

type_opt
	: %empty                        { $$ = NULL; }
	| ':' type                      { $$ = $2; }
	;

type
	: SCALAR_TYPE
	| TYPE_ALIAS                    { $$ = fe_type_alias(p, $1, L(@1)); if (!$$) YYABORT; }
	| T_TOKEN                       { $$ = ir_type_token(C); }
	| T_PTR '<' type '>'            { $$ = ir_type_ptr(C, $3); }
	| T_TENSOR '<' SHAPE ',' IDENT '>'
					{ $$ = make_tile(p, $3, $5, NULL, L(@5), true, NULL); if (!$$) YYABORT; }
	| T_TENSOR '<' SHAPE ',' IDENT ',' '[' strides ']' '>'
					{ $$ = make_tile(p, $3, $5, NULL, L(@5), true, $8); if (!$$) YYABORT; }
	| T_TILE '<' SHAPE ',' IDENT layout_opt '>'
					{ $$ = make_tile(p, $3, $5, $6, L(@5), false, NULL); if (!$$) YYABORT; }
	| T_RING '<' INTEGER IDENT type '>'
					{ if (strcmp($4, "x")) { fe_error(p, L(@4), "expected 'x' in '!ave.ring<N x "
					  "!ave.tile<...>>', found '%s'", $4); YYABORT; }
					  $$ = ir_type_ring(C, $3, $5); }
	| T_MBAR '<' INTEGER '>'        { $$ = ir_type_mbar(C, $3); }
	;

layout_opt
	: %empty                        { $$ = NULL; }
	| ',' attribute                 { $$ = $2; }
	;

strides
	: stride                        { $$ = fe_list_new(p); int64_t *x = fe_alloc(p, sizeof *x);
					  *x = $1; fe_list_push(p, $$, x); }
	| strides ',' stride            { $$ = $1; int64_t *x = fe_alloc(p, sizeof *x);
					  *x = $3; fe_list_push(p, $$, x); }
	;

stride
	: INTEGER                       { $$ = $1; }
	| '?'                           { $$ = IR_DYN; }
	;

/* attribute ::= '-'? integer | '-'? float | string | true | false | symbol | type | '#' ident
 *             | '[' attributes ']' | '#ave.' ident '<' ... '>' */
attribute
	: int_lit                       { $$ = ir_attr_int(C, $1->i); }
	| float_lit                     { $$ = ir_attr_float(C, $1->f); }
	| STRING                        { $$ = ir_attr_str(C, $1); }
	| TRUE                          { $$ = ir_attr_bool(C, true); }
	| FALSE                         { $$ = ir_attr_bool(C, false); }
	| SYMBOL                        { $$ = ir_attr_sym(C, $1); }
	| type                          { $$ = ir_attr_type(C, $1); }
	| ATTR_ALIAS                    { $$ = fe_attr_alias(p, $1, L(@1)); if (!$$) YYABORT; }
	| '[' ']'                       { $$ = ir_attr_array(C, 0, NULL); }
	| '[' attr_list ']'             { $$ = ir_attr_array(C, $2->n, (IrAttr **)$2->v); }
	| AVE_ATTR '<' ave_body '>'     { $$ = $3->is_int ? ir_attr_ave_int(C, $1, $3->i)
							  : make_ave_attr(p, $1, $3->kw, $3->kvs);
					  if (!$$) YYABORT; }
	;

ave_body
	: int_lit                       { $$ = fe_alloc(p, sizeof *$$); $$->is_int = true; $$->i = $1->i; }
	| kvs                           { $$ = fe_alloc(p, sizeof *$$); $$->kvs = $1; }
	| IDENT                         { $$ = fe_alloc(p, sizeof *$$); $$->kw = $1; $$->kvs = fe_list_new(p); }
	| IDENT ',' kvs                 { $$ = fe_alloc(p, sizeof *$$); $$->kw = $1; $$->kvs = $3; }
	;

attr_list
	: attribute                     { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| attr_list ',' attribute       { $$ = $1; fe_list_push(p, $$, $3); }
	;

/* ave.kernel symbol '(' (value-id ':' type (',' value-id ':' type)*)? ')' attr-dict? region */
kernel_op
	: KW_KERNEL SYMBOL '(' kparams_opt ')' attrs_opt
					{ FeList *names = fe_list_new(p), *types = fe_list_new(p);
					  for (int i = 0; i < $4->n; i++) {
						  FeParam *x = $4->v[i]; FeName *n = fe_alloc(p, sizeof *n);
						  n->name = x->name; n->loc = x->loc;
						  fe_list_push(p, names, n); fe_list_push(p, types, x->type); }
					  if (!enter_args(p, names, types, L(@1), true)) YYABORT; }
	  region                        { fe_scope_pop(p); p->iso = 0;
					  $$ = build_kernel(p, $2, L(@2), $6, $8, L(@1)); if (!$$) YYABORT; }
	;

kparams_opt
	: %empty                        { $$ = fe_list_new(p); }
	| kparams
	;

kparams
	: kparam                        { $$ = fe_list_new(p); fe_list_push(p, $$, $1); }
	| kparams ',' kparam            { $$ = $1; fe_list_push(p, $$, $3); }
	;

kparam
	: VALUE ':' type                { $$ = fe_alloc(p, sizeof *$$); $$->name = $1; $$->type = $3;
					  $$->loc = L(@1); }
	;

/* results? ave.for value-id '=' index-expr 'to' index-expr 'step' index-expr
 *          ('iter_args' '(' value-id '=' operand (':' type)? ... ')' '->' '(' type-list ')')?
 *          attr-dict? region */
for_op
	: results_opt KW_FOR DEFVALUE '=' expr TO expr STEP expr iter_opt attrs_opt
					{ FeList *names = fe_list_new(p), *types = fe_list_new(p);
					  FeName *iv = fe_alloc(p, sizeof *iv); iv->name = $3; iv->loc = L(@3);
					  fe_list_push(p, names, iv); fe_list_push(p, types, C->t_index);
					  if ($10) {
						  if ($10->names->n != $10->types->n) {
							  fe_error(p, L(@10), "'ave.for' has %d iter_args but %d "
								   "types after '->'", $10->names->n, $10->types->n);
							  YYABORT; }
						  for (int i = 0; i < $10->names->n; i++) {
							  fe_list_push(p, names, $10->names->v[i]);
							  fe_list_push(p, types, $10->types->v[i]); } }
					  if (!enter_args(p, names, types, L(@2), false)) YYABORT; }
	  region                        { fe_scope_pop(p);
					  $$ = build_for(p, $1, $5, $7, $9, L(@5), L(@7), L(@9), $10, $11, $13, L(@2));
					  if (!$$) YYABORT;
					  result_locs($$, $1); }
	;

iter_opt
	: %empty                        { $$ = NULL; }
	| ITER_ARGS '(' iter_list ')' ARROW '(' type_list ')'
					{ $$ = fe_alloc(p, sizeof *$$); $$->names = fe_list_new(p);
					  $$->inits = fe_list_new(p); $$->types = $7;
					  for (int i = 0; i < $3->n; i += 2) {
						  fe_list_push(p, $$->names, $3->v[i]);
						  fe_list_push(p, $$->inits, $3->v[i + 1]); } }
	;

iter_list
	: DEFVALUE '=' init             { $$ = fe_list_new(p); FeName *n = fe_alloc(p, sizeof *n);
					  n->name = $1; n->loc = L(@1); fe_list_push(p, $$, n);
					  fe_list_push(p, $$, $3); }
	| iter_list ',' DEFVALUE '=' init
					{ $$ = $1; FeName *n = fe_alloc(p, sizeof *n);
					  n->name = $3; n->loc = L(@3); fe_list_push(p, $$, n);
					  fe_list_push(p, $$, $5); }
	;

init
	: VALUE type_opt                { $$ = new_item(p, IR_IT_VALUE, L(@1)); $$->type = $2;
					  if (!($$->pv = fe_lookup(p, $1, L(@1)))) YYABORT; }
	| DEFVALUE type_opt             { $$ = new_item(p, IR_IT_VALUE, L(@1)); $$->type = $2;
					  if (!($$->pv = fe_lookup(p, $1, L(@1)))) YYABORT; }
	| int_lit type_opt              { $$ = $1; $$->type = $2; }
	| float_lit type_opt            { $$ = $1; $$->type = $2; }
	;

/* results? ave.if operand ('->' '(' type-list ')')? region ('else' region)? */
if_op
	: results_opt KW_IF operand arrow_opt region else_opt
					{ $$ = build_if(p, $1, $3, $4, $5, $6, L(@2)); if (!$$) YYABORT;
					  result_locs($$, $1); }
	;

arrow_opt
	: %empty                        { $$ = NULL; }
	| ARROW '(' type_list ')'       { $$ = $3; }
	;

else_opt
	: %empty                        { $$ = NULL; }
	| ELSE region                   { $$ = $2; }
	;

/* value-id '=' ave.index index-expr (':' type)? */
index_op
	: results_opt KW_INDEX expr type_opt
					{ $$ = build_index(p, $1, $3, L(@3), $4, L(@2)); if (!$$) YYABORT;
					  result_locs($$, $1); }
	;

%%

static IrItem *
new_item(FeParser *p, IrItemKind k, IrLoc loc)
{
	IrItem *it = fe_alloc(p, sizeof *it);
	it->kind = k;
	it->opnd = -1;
	it->loc = loc;
	return it;
}

static IrExpr *
mk_bin(FeParser *p, IrExprKind k, IrExpr *l, IrExpr *r, IrLoc loc)
{
	int64_t c;
	if (ir_expr_depth(l) >= FE_MAX_EXPR_DEPTH || (r && ir_expr_depth(r) >= FE_MAX_EXPR_DEPTH)) {
		fe_error(p, loc,
			 "index expression is nested more than %d levels deep (each operator of a chain "
			 "such as a + b + c is one level)",
			 FE_MAX_EXPR_DEPTH);
		return NULL;
	}
	if (k == IR_EX_NEG)
		return ir_expr_neg(p->m, l);
	if (k == IR_EX_MUL && !ir_expr_is_const(l) && !ir_expr_is_const(r)) {
		fe_error(p, loc, "'*' needs a constant factor (index expressions are quasi-affine)");
		return NULL;
	}
	if (k == IR_EX_FLOORDIV || k == IR_EX_MOD) {
		const char *name = k == IR_EX_MOD ? "mod" : "floordiv";
		if (!ir_expr_is_const(r)) {
			fe_error(p, loc, "'%s' needs a constant right-hand side", name);
			return NULL;
		}
		if (!ir_expr_eval_const(r, &c) || c <= 0) {
			fe_error(p, loc, "'%s' by a non-positive constant", name);
			return NULL;
		}
	}
	return ir_expr_bin(p->m, k, l, r);
}

static FeBody *
body_new(FeParser *p)
{
	return fe_alloc(p, sizeof(FeBody));
}

static bool
enter_region(FeParser *p, IrLoc loc)
{
	if (++p->nesting > FE_MAX_NESTING) {
		fe_error(p, loc, "regions are nested more than %d levels deep", FE_MAX_NESTING);
		return false;
	}
	IrRegion *r = ir_region_new(p->m);
	if (p->pending) {
		r->block = p->pending;
		r->block->parent = r;
		p->pending = NULL;
	}
	fe_scope_push(p);
	ir_vec_push(p->c->al, &p->blocks, &r, sizeof r);
	ir_vec_push(p->c->al, &p->opens, &loc, sizeof loc);
	return true;
}

static IrRegion *
leave_region(FeParser *p)
{
	p->nesting--;
	p->opens.len--;
	fe_scope_pop(p);
	return IR_VEC_AT(p->blocks, IrRegion *, --p->blocks.len);
}

/* Results are located at their names (a redefinition points at the name, not the op). */
static void
result_locs(IrOp *op, FeList *results)
{
	for (int i = 0; results && i < results->n && i < op->nres; i++)
		op->res[i].loc = ((FeName *)results->v[i])->loc;
}

static bool
append_op(FeParser *p, IrOp *op)
{
	IrBlock *b = p->blocks.len ? IR_VEC_AT(p->blocks, IrRegion *, p->blocks.len - 1)->block
				   : p->m->body;
	ir_block_append(b, op);
	for (int i = 0; i < op->nres; i++)
		if (op->res[i].name && !fe_define(p, &op->res[i]))
			return false;
	return true;
}

/* Opens the scope of a kernel's or loop's block arguments; the next region takes the block. */
static bool
enter_args(FeParser *p, FeList *names, FeList *types, IrLoc loc, bool isolate)
{
	(void)loc;
	IrRegion *r = ir_region_new(p->m);
	IrBlock *b = r->block;
	fe_scope_push(p);
	if (isolate)
		p->iso = p->level;
	for (int i = 0; i < names->n; i++) {
		FeName *n = names->v[i];
		IrValue *v = ir_block_add_arg(p->m, b, types->v[i], n->name, n->loc);
		if (!fe_define(p, v))
			return false;
	}
	p->pending = b;
	return true;
}

static IrItem *
decl_item(FeParser *p, IrStr name, FeList *params, IrLoc loc)
{
	IrItem *it = new_item(p, IR_IT_DECL, loc);
	it->s = name;
	it->nparam = params->n;
	it->param = fe_alloc(p, sizeof(IrValue *) * (size_t)params->n);
	/* The parameters are visible in the rest of the op (its groups). */
	fe_scope_push(p);
	ir_vec_push(p->c->al, &p->decls, &p->level, sizeof p->level);
	for (int i = 0; i < params->n; i++) {
		FeParam *x = params->v[i];
		IrValue *v = ir_param_new(p->m, x->type, x->name, x->loc);
		v->index = i;
		it->param[i] = v;
		if (!fe_define(p, v))
			return NULL;
	}
	return it;
}

static void
close_decls(FeParser *p)
{
	while (p->decls.len && IR_VEC_AT(p->decls, int, p->decls.len - 1) == p->level) {
		fe_scope_pop(p);
		p->decls.len--;
	}
}

static void
copy_items(FeParser *p, IrOpState *st, FeList *l)
{
	for (int i = 0; l && i < l->n; i++) {
		IrItem *it = ir_state_item(p->m, st, IR_IT_VALUE);
		*it = *(IrItem *)l->v[i];
	}
}

static void
copy_common(FeParser *p, IrOpState *st, FeBody *b)
{
	copy_items(p, st, b->items);
	for (int i = 0; b->groups && i < b->groups->n; i++) {
		IrGroup *g = ir_state_group(p->m, st, NULL);
		*g = *(IrGroup *)b->groups->v[i];
	}
	for (int i = 0; b->attrs && i < b->attrs->n; i++) {
		IrNamedAttr *a = b->attrs->v[i];
		IrNamedAttr *na = ir_vec_push(p->c->al, &st->attrs, a, sizeof *a);
		(void)na;
		/* Ops keep attributes they do not know; a typo of one they do know is worth a word. */
		IrOpcode owner;
		IrStr near = ir_op_attr_closest(p->c, st->code, a->name, &owner);
		char what[64], where[80] = "";
		if (st->code == IR_OP_KERNEL)
			snprintf(what, sizeof what, "kernel attribute");
		else
			snprintf(what, sizeof what, "'%s' attribute", ir_op_name(st->code));
		if (near && owner != st->code)
			snprintf(where, sizeof where, " ('%s' is an attribute of %s%s%s)", near,
				 owner == IR_OP_KERNEL ? "a kernel" : "'",
				 owner == IR_OP_KERNEL ? "" : ir_op_name(owner),
				 owner == IR_OP_KERNEL ? "" : "'");
		if (near == a->name && st->code == IR_OP_KERNEL)
			ir_warning(p->c, a->loc, "attribute '%s' has no meaning on a kernel%s", a->name,
				   where);
		else if (near == a->name)
			ir_warning(p->c, a->loc, "attribute '%s' has no meaning on '%s'%s", a->name,
				   ir_op_name(st->code), where);
		else if (near)
			ir_warning(p->c, a->loc, "unknown %s '%s'; did you mean '%s'?%s", what, a->name,
				   near, where);
	}
	for (int i = 0; b->regions && i < b->regions->n; i++)
		ir_state_region(p->m, st, b->regions->v[i]);
}

static IrOp *
build_generic(FeParser *p, FeList *results, int code, IrStr mode, FeBody *b, IrLoc loc)
{
	const IrOpInfo *info = ir_opinfo(p->c, (IrOpcode)code);
	IrOpState st;
	ir_state_init(&st, (IrOpcode)code, loc);
	st.mode = mode;
	copy_common(p, &st, b);
	close_decls(p);

	/* An empty call where the op declares a symbol is a declaration without parameters. */
	if (st.items.len && (info->item[0].kinds & (1u << IR_IT_DECL))) {
		IrItem *it = &IR_VEC_AT(st.items, IrItem, 0);
		if (it->kind == IR_IT_CALL && it->ncoord == 0)
			it->kind = IR_IT_DECL;
	}

	int nnames = results ? results->n : 0;
	int ntypes = b->has_types ? b->types->n : 0;
	if (nnames) {
		if (!b->has_types) {
			/* Ops whose result type the spec leaves implicit: ave.phase.next (i1) and
			 * ave.tag (its operand's type). */
			IrType *t = code == IR_OP_PHASE_NEXT ? p->c->t_i1 : NULL;
			if (code == IR_OP_TAG && st.items.len) {
				IrItem *it = &IR_VEC_AT(st.items, IrItem, 0);
				if (it->kind == IR_IT_VALUE && !it->suffix && it->pv)
					t = it->pv->type;
			}
			if (!t || nnames != 1) {
				fe_error(p, loc, "expected ': type' after '%s' for its result%s", info->name,
					 nnames == 1 ? "" : "s");
				goto fail;
			}
			ir_state_result(p->m, &st, t, ((FeName *)results->v[0])->name);
		} else {
			if (ntypes != nnames) {
				fe_error(p, b->types_loc, "'%s' names %d result%s but lists %d type%s",
					 info->name, nnames, nnames == 1 ? "" : "s", ntypes,
					 ntypes == 1 ? "" : "s");
				goto fail;
			}
			for (int i = 0; i < nnames; i++)
				ir_state_result(p->m, &st, b->types->v[i], ((FeName *)results->v[i])->name);
		}
	} else if (b->has_types) {
		if (info->traits & IR_TRAIT_DECL_TYPES) {
			for (int i = 0; i < ntypes; i++)
				ir_state_type(p->m, &st, b->types->v[i]);
		} else if (info->nres > 0) {
			for (int i = 0; i < ntypes; i++)
				ir_state_result(p->m, &st, b->types->v[i], NULL);
		} else {
			fe_error(p, b->types_loc, "'%s' has no results; unexpected type list", info->name);
			goto fail;
		}
	} else if (info->nres > 0) {
		if (code == IR_OP_PHASE_NEXT) {
			ir_state_result(p->m, &st, p->c->t_i1, NULL);
		} else {
			fe_error(p, loc, "expected ': type' after '%s' for its result", info->name);
			goto fail;
		}
	}
	return ir_op_build(p->m, &st);
fail:
	ir_state_free(p->m, &st);
	return NULL;
}

static IrOp *
build_kernel(FeParser *p, IrStr name, IrLoc nameloc, FeList *attrs, IrRegion *r, IrLoc loc)
{
	IrOpState st;
	ir_state_init(&st, IR_OP_KERNEL, loc);
	IrItem *it = ir_state_item(p->m, &st, IR_IT_SYMBOL);
	it->s = name;
	it->loc = nameloc;
	FeBody b = {.attrs = attrs};
	copy_common(p, &st, &b);
	ir_state_region(p->m, &st, r);
	return ir_op_build(p->m, &st);
}

static void
implicit_yield(FeParser *p, IrRegion *r, IrLoc loc)
{
	IrBlock *b = r->block;
	if (b->last && b->last->code == IR_OP_YIELD)
		return;
	IrOpState st;
	ir_state_init(&st, IR_OP_YIELD, loc);
	ir_block_append(b, ir_op_build(p->m, &st));
}

static IrExpr *
checked_bound(FeParser *p, IrExpr *e, IrLoc loc, const char *what)
{
	if (ir_expr_has_cmp(e)) {
		fe_error(p, loc, "loop %s cannot be a comparison", what);
		return NULL;
	}
	return e;
}

static IrOp *
build_for(FeParser *p, FeList *results, IrExpr *lb, IrExpr *ub, IrExpr *step, IrLoc lbloc,
	  IrLoc ubloc, IrLoc steploc, FeIter *iter, FeList *attrs, IrRegion *r, IrLoc loc)
{
	int n = iter ? iter->names->n : 0;
	if (results && results->n != n) {
		fe_error(p, loc, "'ave.for' has %d iter_arg%s but names %d result%s", n, n == 1 ? "" : "s",
			 results->n, results->n == 1 ? "" : "s");
		return NULL;
	}
	if (!checked_bound(p, lb, lbloc, "lower bound") || !checked_bound(p, ub, ubloc, "upper bound") ||
	    !checked_bound(p, step, steploc, "step"))
		return NULL;
	IrOpState st;
	ir_state_init(&st, IR_OP_FOR, loc);
	IrExpr *bounds[3] = {lb, ub, step};
	IrLoc locs[3] = {lbloc, ubloc, steploc};
	for (int i = 0; i < 3; i++) {
		IrItem *it = ir_state_item(p->m, &st, IR_IT_EXPR);
		it->e = bounds[i];
		it->loc = locs[i];
	}
	for (int i = 0; i < n; i++) {
		IrItem *it = ir_state_item(p->m, &st, IR_IT_VALUE);
		*it = *(IrItem *)iter->inits->v[i];
		/* A literal's type is the iter_arg's; an explicit type on a value is checked by the
		 * verifier and not printed (the value's own type says it). */
		if (it->kind != IR_IT_VALUE && !it->type)
			it->type = iter->types->v[i];
		ir_state_result(p->m, &st, iter->types->v[i],
				results ? ((FeName *)results->v[i])->name : NULL);
	}
	FeBody b = {.attrs = attrs};
	copy_common(p, &st, &b);
	if (!n)
		implicit_yield(p, r, loc);
	ir_state_region(p->m, &st, r);
	return ir_op_build(p->m, &st);
}

static IrOp *
build_if(FeParser *p, FeList *results, IrItem *cond, FeList *types, IrRegion *then, IrRegion *els,
	 IrLoc loc)
{
	int n = types ? types->n : 0;
	if (results && results->n != n) {
		fe_error(p, loc, "'ave.if' yields %d value%s but names %d result%s", n, n == 1 ? "" : "s",
			 results->n, results->n == 1 ? "" : "s");
		return NULL;
	}
	IrOpState st;
	ir_state_init(&st, IR_OP_IF, loc);
	IrItem *it = ir_state_item(p->m, &st, IR_IT_VALUE);
	*it = *cond;
	for (int i = 0; i < n; i++)
		ir_state_result(p->m, &st, types->v[i], results ? ((FeName *)results->v[i])->name : NULL);
	if (!n) {
		implicit_yield(p, then, loc);
		if (els)
			implicit_yield(p, els, loc);
	}
	ir_state_region(p->m, &st, then);
	if (els)
		ir_state_region(p->m, &st, els);
	return ir_op_build(p->m, &st);
}

static IrOp *
build_index(FeParser *p, FeList *results, IrExpr *e, IrLoc eloc, IrType *t, IrLoc loc)
{
	if (!results || results->n != 1) {
		fe_error(p, loc, "'ave.index' defines exactly one value, as in '%%x = ave.index ...'");
		return NULL;
	}
	IrOpState st;
	ir_state_init(&st, IR_OP_INDEX, loc);
	IrItem *it = ir_state_item(p->m, &st, IR_IT_EXPR);
	it->e = e;
	it->loc = eloc;
	ir_state_result(p->m, &st, t ? t : p->c->t_index, ((FeName *)results->v[0])->name);
	return ir_op_build(p->m, &st);
}

static IrType *
make_tile(FeParser *p, FeShape *s, IrStr space, IrAttr *layout, IrLoc loc, bool tensor,
	  FeList *strides)
{
	if (!s->elem) {
		fe_error(p, loc, "bad element type in shape");
		return NULL;
	}
	IrSpace sp;
	if (!strcmp(space, "global"))
		sp = IR_SPACE_GLOBAL;
	else if (!strcmp(space, "symm"))
		sp = IR_SPACE_SYMM;
	else if (!strcmp(space, "reg"))
		sp = IR_SPACE_REG;
	else if (!strcmp(space, "smem"))
		sp = IR_SPACE_SMEM;
	else {
		static const char *const spaces[] = {"global", "symm", "reg", "smem"};
		const char *near = ir_closest(space, strlen(space), spaces, 4);
		if (near)
			fe_error(p, loc, "unknown memory space '%s'; did you mean '%s'?", space, near);
		else
			fe_error(p, loc, "unknown memory space '%s'", space);
		return NULL;
	}
	if (tensor) {
		if (sp != IR_SPACE_GLOBAL && sp != IR_SPACE_SYMM) {
			fe_error(p, loc, "a tensor lives in 'global' or 'symm', found '%s'", space);
			return NULL;
		}
		int64_t st[IR_MAX_RANK];
		if (strides) {
			if (strides->n != s->rank) {
				fe_error(p, loc, "tensor of rank %d lists %d strides", s->rank, strides->n);
				return NULL;
			}
			for (int i = 0; i < s->rank; i++)
				st[i] = *(int64_t *)strides->v[i];
		}
		return ir_type_tensor(p->c, s->rank, s->dims, s->elem, sp, strides ? st : NULL);
	}
	if (sp != IR_SPACE_REG && sp != IR_SPACE_SMEM) {
		fe_error(p, loc, "a tile lives in 'reg' or 'smem', found '%s'", space);
		return NULL;
	}
	if (s->rank > 3) {
		fe_error(p, loc, "tiles have 1 to 3 dimensions, found %d", s->rank);
		return NULL;
	}
	for (int i = 0; i < s->rank; i++)
		if (s->dims[i] == IR_DYN) {
			fe_error(p, loc, "a tile has a static shape; '?' is only allowed in tensors");
			return NULL;
		}
	return ir_type_tile(p->c, s->rank, s->dims, s->elem, sp, layout);
}

static IrAttr *
make_ave_attr(FeParser *p, IrStr name, IrStr kw, FeList *kvs)
{
	int n = kvs->n;
	IrStr *keys = fe_alloc(p, sizeof *keys * (size_t)(n ? n : 1));
	IrAttr **vals = fe_alloc(p, sizeof *vals * (size_t)(n ? n : 1));
	IrMap seen;
	ir_map_init(&seen, p->c->al);
	for (int i = 0; i < n; i++) {
		IrNamedAttr *a = kvs->v[i];
		if (ir_map_get(&seen, ir_hash_ptr(a->name), a->name, NULL)) {
			fe_error(p, a->loc, "key '%s' appears twice in '#ave.%s'", a->name, name);
			ir_map_free(&seen);
			return NULL;
		}
		ir_map_put(&seen, ir_hash_ptr(a->name), a->name, (void *)a->name, NULL);
		keys[i] = a->name;
		vals[i] = a->attr;
	}
	ir_map_free(&seen);
	return ir_attr_ave(p->c, name, kw, n, keys, vals);
}

/* "expected X or Y, found 'tok'" with the real text of the offending token. Tokens that can
 * start an op are summarised as "an op"; at end of file the innermost open region is noted. */
static int
yyreport_syntax_error(const yypcontext_t *ctx, FeParser *p, void *scanner)
{
	(void)scanner;
	enum { MAXEXP = 24 };
	yysymbol_kind_t exp[MAXEXP];
	int n = yypcontext_expected_tokens(ctx, exp, MAXEXP);
	yysymbol_kind_t got = yypcontext_token(ctx);
	const YYLTYPE *l = yypcontext_location(ctx);
	IrLoc loc = fe_loc(p, l->first_line, l->first_column);
	char found[80];
	if (got == YYSYMBOL_YYEOF)
		snprintf(found, sizeof found, "end of file");
	else
		snprintf(found, sizeof found, "'%.*s'", p->toklen > 40 ? 40 : (int)p->toklen, p->tok);
	const char *names[MAXEXP + 1];
	int k = 0;
	bool op = false;
	for (int i = 0; i < n && i < MAXEXP; i++)
		op |= exp[i] == YYSYMBOL_OPNAME;
	for (int i = 0; i < n && i < MAXEXP; i++) {
		switch (exp[i]) {
		case YYSYMBOL_OPNAME:
		case YYSYMBOL_DEFVALUE:
		case YYSYMBOL_KW_KERNEL:
		case YYSYMBOL_KW_FOR:
		case YYSYMBOL_KW_IF:
		case YYSYMBOL_KW_INDEX:
			if (op)
				continue;
			break;
		default:
			break;
		}
		names[k++] = yysymbol_name(exp[i]);
	}
	if (op) {
		/* Drop the other op starters once "an op" stands for them. */
		int j = 0;
		for (int i = 0; i < k; i++)
			if (strcmp(names[i], "\"value definition\"") && strcmp(names[i], "\"'ave.for'\"") &&
			    strcmp(names[i], "\"'ave.if'\"") && strcmp(names[i], "\"'ave.index'\"") &&
			    strcmp(names[i], "\"'ave.kernel'\""))
				names[j++] = names[i];
		k = j;
		names[k++] = "an op";
	}
	if (n <= 0 || n > MAXEXP || k > 8) {
		IrDiag *d = ir_diag_begin(p->c, IR_SEV_ERROR, loc, "unexpected %s", found);
		if (got == YYSYMBOL_YYEOF && p->opens.len) {
			IrLoc o = IR_VEC_AT(p->opens, IrLoc, p->opens.len - 1);
			ir_diag_note(p->c, d, o, "this '{' is not closed");
		}
		ir_diag_emit(p->c, d);
		p->failed = true;
		return 0;
	}
	char buf[512] = "";
	for (int i = 0; i < k; i++) {
		size_t len = strlen(buf);
		const char *t = names[i];
		/* Bison quotes string aliases; single-character tokens come as "'x'". */
		size_t tl = strlen(t);
		if (tl >= 2 && t[0] == '"' && t[tl - 1] == '"') {
			t++;
			tl -= 2;
		}
		snprintf(buf + len, sizeof buf - len, "%s%.*s", i == 0 ? "" : i == k - 1 ? " or " : ", ",
			 (int)tl, t);
	}
	/* A word where a scalar type goes: the type it most likely misspells. */
	const char *near = NULL;
	for (int i = 0; i < n && i < MAXEXP && (got == YYSYMBOL_IDENT || got == YYSYMBOL_GROUPKW); i++)
		if (exp[i] == YYSYMBOL_SCALAR_TYPE)
			near = ir_closest(p->tok, p->toklen, fe_scalar_names, FE_NSCALAR);
	IrDiag *d = ir_diag_begin(p->c, IR_SEV_ERROR, loc, "expected %s, found %s%s%s%s", buf, found,
				  near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	if (got == YYSYMBOL_YYEOF && p->opens.len) {
		IrLoc o = IR_VEC_AT(p->opens, IrLoc, p->opens.len - 1);
		ir_diag_note(p->c, d, o, "this '{' is not closed");
	}
	ir_diag_emit(p->c, d);
	p->failed = true;
	return 0;
}
