/* check_internal.h — the invariant checker's internals, shared by the files of check/ only. */
#ifndef AVE_CHECK_INTERNAL_H
#define AVE_CHECK_INTERNAL_H

#include "check.h"
#include <z3.h>

typedef enum CkRes { CK_UNSAT, CK_SAT, CK_UNKNOWN } CkRes;

/* check_invariants_smt.c: integer terms with exact floordiv/mod by constants. Fresh variables
 * carry side conditions (their domain, or the definition of a quotient) that every query that
 * mentions them picks up. */
typedef struct CkSmt {
	const IrAllocator *al;
	Z3_context z;
	Z3_sort is, bs;  /* Int, Bool */
	IrMap side;      /* uninterpreted constant -> its side condition */
	IrVec exact;     /* Z3_ast pairs (variable, condition): nonlinear definitions that
			    queries leave out (their variables carry linear consequences as side
			    conditions) and add back to confirm a model: see pass_ck_exact */
	IrMap divs;      /* (dividend, divisor) -> quotient variable */
	IrArena arena;   /* keys of `divs` */
	Z3_solver solver; /* made on the first query */
	unsigned timeout_ms, rlimit;
	PassCkStats *st;
	const char *unknown_reason; /* why the last query came back unknown */
	bool quantified; /* the queries being asked hold a quantifier (the chunk-signal checks):
			    linear quantifier elimination first, then the SMT core */
	bool overflow;   /* constant folding overflowed int64 since the kernel began: its terms
			    are exact integers, but the kernel's 64-bit arithmetic wraps, so no
			    answer about it can be trusted (queries answer unsat; the checker reports
			    that it cannot check the kernel) */
} CkSmt;

void pass_ck_smt_init(CkSmt *s, const IrAllocator *al, unsigned timeout_ms, unsigned rlimit,
		      PassCkStats *st);
void pass_ck_smt_free(CkSmt *s);
Z3_ast pass_ck_num(CkSmt *s, int64_t v);
Z3_ast pass_ck_fresh(CkSmt *s, const char *prefix);
void pass_ck_side(CkSmt *s, Z3_ast var, Z3_ast cond); /* conjoined with what var has */
/* A definition of `var` beyond linear arithmetic. A query is solved without it; a model it
 * finds must also satisfy the definitions of the variables the query mentions (a second query
 * with them: unsat then means the property holds, unknown that the checker cannot tell). */
void pass_ck_exact(CkSmt *s, Z3_ast var, Z3_ast cond);
Z3_ast pass_ck_add(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_sub(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_mulc(CkSmt *s, Z3_ast a, int64_t c);
Z3_ast pass_ck_mul(CkSmt *s, Z3_ast a, Z3_ast b); /* a product of two unknowns is nonlinear */
/* name(args...): an uninterpreted integer function of n <= 4 integers (equal arguments, equal
 * values: the solver's congruence, not arithmetic). */
Z3_ast pass_ck_uf(CkSmt *s, const char *name, int n, const Z3_ast *args);
Z3_ast pass_ck_floordiv(CkSmt *s, Z3_ast a, int64_t c); /* c > 0 */
Z3_ast pass_ck_mod(CkSmt *s, Z3_ast a, int64_t c);      /* c > 0; in [0, c) */
Z3_ast pass_ck_ite(CkSmt *s, Z3_ast b, Z3_ast x, Z3_ast y);
Z3_ast pass_ck_eq(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_lt(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_le(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_not(CkSmt *s, Z3_ast a);
Z3_ast pass_ck_and(CkSmt *s, int n, Z3_ast *a); /* folds true/false */
Z3_ast pass_ck_or(CkSmt *s, int n, Z3_ast *a);
Z3_ast pass_ck_and2(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_or2(CkSmt *s, Z3_ast a, Z3_ast b);
Z3_ast pass_ck_b2i(CkSmt *s, Z3_ast b);
bool pass_ck_is_num(CkSmt *s, Z3_ast a, int64_t *v);
bool pass_ck_is_true(CkSmt *s, Z3_ast a);
bool pass_ck_is_false(CkSmt *s, Z3_ast a);
/* True when `a` mentions the constant `x` (syntactically: not through side conditions). */
bool pass_ck_mentions(CkSmt *s, Z3_ast a, Z3_ast x);
/* True when the value of `a` may depend on `x`: `a` or the side conditions of its variables
 * (a quotient's definition, say) mention it. */
bool pass_ck_depends(CkSmt *s, Z3_ast a, Z3_ast x);
/* Appends to `out` (Z3_ast) the uninterpreted constants `f` mentions, each once (not through
 * side conditions). */
void pass_ck_consts(CkSmt *s, Z3_ast f, IrVec *out);
/* Calls fn on each application in f once (inside quantifiers' bodies only with `bodies`),
 * until it returns false. */
void pass_ck_each_app(CkSmt *s, Z3_ast f, bool bodies, bool (*fn)(void *ud, Z3_ast t, Z3_app app),
                      void *ud);
/* `f` and the side conditions of every variable it mentions, transitively. */
Z3_ast pass_ck_closure(CkSmt *s, Z3_ast f);
/* Is `f` (with the side conditions of its variables) satisfiable? On CK_SAT and a non-NULL
 * `model`, returns a model (release with pass_ck_model_free). */
CkRes pass_ck_check(CkSmt *s, Z3_ast f, Z3_model *model);
/* A substitution of terms (a case of a query: conditions and values put in). */
#define CK_SUBST_MAX 64
/* Replicas of one role the checks enumerate one by one (a kernel has at most 32 warps). */
#define CK_MAX_REPLICAS 32
typedef struct CkSubst {
	unsigned n;
	Z3_ast from[CK_SUBST_MAX], to[CK_SUBST_MAX];
} CkSubst;
/* Adds to sub the quotient variables (floordiv by a constant) whose dividends sub makes
 * constants, with their values, until no more do. */
void pass_ck_subst_close(CkSmt *s, CkSubst *sub);
/* Is x a quotient variable (of a floordiv by a constant: its side condition always holds for
 * one value)? */
bool pass_ck_is_quotient(CkSmt *s, Z3_ast x);
/* The constants c of the quotients floordiv(a, c) made so far (at most max). */
int pass_ck_divisors(CkSmt *s, Z3_ast a, int64_t *out, int max);
/* f with sub applied, simplified. */
Z3_ast pass_ck_subst(CkSmt *s, const CkSubst *sub, Z3_ast f);
/* pass_ck_closure of f under sub: each side condition gathered has sub applied first, so
 * variables the substitution leaves unused drop out with theirs. */
Z3_ast pass_ck_closure_subst(CkSmt *s, Z3_ast f, const CkSubst *sub);
/* A proof of a formula with a quantifier by Z3's general solver (model-based quantifier
 * instantiation), its side conditions gathered under sub (may be NULL): CK_UNSAT, CK_SAT
 * (with the solver's model in *model, the caller's to confirm with pass_ck_confirm_none and
 * free, when model is non-NULL) or CK_UNKNOWN. */
CkRes pass_ck_prove_quantified(CkSmt *s, Z3_ast f, const CkSubst *sub, Z3_model *model);
/* Whether m, a model the general solver gave of f (under sub, as above), is one: f is
 * quantifier-free but for a universal "no instance of `inner` holds" whose free variables
 * are f's. Confirmed when f's conjuncts outside the quantifier and the exact definitions of
 * its variables hold in m, and inner, with f's variables at their values in m, is
 * unsatisfiable (a quantifier-free query). */
bool pass_ck_confirm_none(CkSmt *s, Z3_model m, Z3_ast f, const CkSubst *sub, Z3_ast inner);
/* A model of `f` that minimizes |obj[0]|, then |obj[1]|, ...; falls back to any model. */
CkRes pass_ck_minimize(CkSmt *s, Z3_ast f, int nobj, Z3_ast *obj, Z3_model *model);
bool pass_ck_eval(CkSmt *s, Z3_model m, Z3_ast t, int64_t *out);
void pass_ck_model_free(CkSmt *s, Z3_model m);

/* check_invariants_model.c: roles, the ops the checker reasons about (sites), evaluation of SSA
 * values as terms in an instance of the enclosing roles and loops, closed forms of loop-carried
 * scalars, and the phase structure of barriers. */
typedef enum CkKind {
	CK_WAIT,    /* ave.mbar.wait */
	CK_ARRIVE,  /* ave.mbar.arrive */
	CK_EXPECT,  /* ave.mbar.expect_tx */
	CK_COPY,    /* ave.copy.async: writes a slot, lands on a barrier */
	CK_STORE,   /* ave.smem.store */
	CK_READ,    /* ave.smem.load, ave.mma, ave.mma.async reading shared memory */
	CK_ASSERT,  /* ave.tag.assert */
	CK_BARRIER, /* ave.barrier */
	CK_CHUNK,   /* ave.chunk.wait */
	CK_SYMM,    /* ave.load / ave.get of a symmetric buffer */
	CK_PUT,     /* ave.put into a symmetric buffer */
	CK_KIND_COUNT
} CkKind;

typedef struct CkRole {
	IrOp *op;        /* ave.role, or the kernel for the code outside roles */
	const char *name;
	int index;
	int64_t nrep;    /* replicas */
	IrValue *rep_val; /* an ave.replica_id result, for naming */
	IrBlock *body;
	int ws_seg;      /* the kernel pseudo-role: position of ave.warp_specialize, or -1 */
	IrOp *sync_loop; /* the role-level loop holding its waits and arrivals, if any */
	int sync_seg;
	int lift_seg;    /* its sync ops from role-body op lift_seg - 1 on rank late (0: none;
	                  * see rank_of in check_invariants_rules.c) */
	int lift_epoch;  /* ... in this epoch */
	/* A tile loop around the k-loop: the role's waits and arrivals sit in `flat_inner`, a
	 * loop directly in the body of `flat_outer`, itself in the role body. The sites of
	 * flat_inner then count their iterations across tiles: use u = t1 * n2 + t2 at
	 * iteration t1 of the tile loop and t2 of the k-loop, n2 being the k-loop's trip count
	 * (the same in every tile). */
	IrOp *flat_outer, *flat_inner;
	int flat_pos;    /* index of flat_inner in flat_outer's body */
	/* Waits or arrivals in flat_outer outside flat_inner (an order between tiles, on a
	 * barrier array of their own): their iteration is the tile t1. */
	bool tile_sync;
} CkRole;

typedef struct CkGroup CkGroup;

/* A term of pass_ck_waited_before, kept: the guarantees of a drain's waits build on each other. */
typedef struct CkLoMemo {
	const void *role, *bar, *w;
	Z3_ast r, idx, lo;
} CkLoMemo;
typedef struct CkWaitForm CkWaitForm;

typedef struct CkFlatMemo {
	Z3_ast n2, u, t1, t2;
} CkFlatMemo;

typedef struct CkSite {
	CkKind kind;
	IrOp *op;
	CkRole *role;
	int seg;        /* index of the role-body op holding the site */
	IrOp *loop;     /* the ave.for in the role body holding it, or NULL */
	int pos;        /* index of the loop-body op holding it (0 outside loops) */
	bool cond;      /* under an ave.if */
	bool nested;    /* inside an inner loop */
	int ord;        /* its op's place in a pre-order walk of the role body: within one
			   role-body (or loop-body) op, outside inner loops, program order */
	/* An arrival of a group: under `ave.if` in the loop, it releases use t - shift of its
	 * barrier (its guard is exactly t >= shift); after the loop (tail), the loop's last use. */
	int64_t shift;
	bool tail;
	bool tail_in;   /* a tail inside the loop: under 'ave.if' on its last iteration */
	/* barrier (WAIT, ARRIVE, EXPECT, COPY) */
	IrValue *bar;
	int bar_item;   /* item index (or -1: the group item `arrive`) */
	const IrItem *bar_it;
	int64_t count;  /* ARRIVE: arrivals; EXPECT: 1 */
	/* shared memory (COPY, STORE, READ) */
	IrValue *mem;   /* the ring or smem tile */
	IrOp *slot_op;  /* op whose expression gives the slot (the access or a slice) */
	const IrItem *slot_it;
	int64_t bytes;  /* COPY: tile bytes */
	IrOp *slice[4]; /* the ave.slice ops between the access and its slot, innermost first */
	int nslice;     /* (more than 4: the access counts as one of the whole slot) */
	IrOp *end_op;   /* READ by ave.mma.async: the ave.mma.wait that ends it (NULL: none found),
	                 * or the ave.if whose branches each hold one */
	int end_shift;  /* ... in the same iteration (0) or the next (1) */
	int64_t end_pend[2]; /* pending(n) of that wait (of the then and else waits) */
	int end_seg, end_pos;
	CkGroup *group;
	CkWaitForm *wf;
	bool may_block; /* WAIT: not proved to return (set by the completion check) */
	int id;
} CkSite;

/* An evaluation scope: the kernel, one replica of a role, or one iteration of a loop. */
typedef struct CkEnv {
	struct CkEnv *parent;
	IrOp *scope;  /* ave.kernel, ave.role or ave.for */
	Z3_ast iter;  /* ave.for: normalized iteration t (k = lb + step * t) */
	Z3_ast rep;   /* ave.role: replica */
	IrMap memo;   /* IrValue* -> Z3_ast */
} CkEnv;

/* One execution of a site: a replica, an iteration of the role-level loop, and the env. */
typedef struct CkInst {
	CkSite *site;
	CkEnv *env;
	Z3_ast r, t;  /* t NULL outside loops */
} CkInst;

#define CK_MAX_FORM_REPLICAS 4

/* How the completed phases a wait guarantees grow along its iterations: per residue class of the
 * iteration modulo `period`, g = floordiv(t, period) + delta (lin) or g = c (constant). */
struct CkWaitForm {
	int64_t period;
	int nclass;
	bool *lin;
	int64_t *val;   /* delta or c */
	bool uniform;   /* every class is lin with the same delta */
	/* When the form differs between replicas (a per-replica barrier whose first wait is
	 * vacuous in one replica and not in another, as ping-pong's order barriers): the form of
	 * each replica, nrep of them (0: one form for all). */
	int nrep;
	struct CkWaitForm *rep[CK_MAX_FORM_REPLICAS];
};

/* The arrivals of one role on one barrier array: every site of the group runs once per iteration
 * of the same loop on the same barrier, so iteration t contributes to phase floordiv(t, period). */
struct CkGroup {
	CkRole *role;
	IrValue *bar;
	IrOp *loop;
	int64_t period;
	int nsite;
	CkSite **site;
	int64_t arrivals; /* per replica and iteration */
	int64_t copy_bytes;
	int64_t shift;    /* the largest shift of its loop sites */
};

typedef struct Ck {
	IrModule *m;
	IrCtx *c;
	CkSmt *smt;       /* shared by the kernels of a module */
	const PassCkOpts *opts;
	IrArena arena;
	IrOp *kernel;
	CkEnv *root;
	CkRole *roles;
	int nroles;
	IrVec sites;     /* CkSite* */
	IrVec envs;      /* CkEnv* (their memo maps are freed at the end) */
	IrMap loopforms; /* ave.for -> its closed forms */
	IrVec groups;    /* CkGroup* */
	IrVec lomemo;    /* CkLoMemo: pass_ck_waited_before's terms */
	IrVec flatmemo;  /* CkFlatMemo: a use split into tile and k-loop iterations */
	IrVec flattrip;  /* CkFlatMemo: (n2, u = n1, t1 = uses of the flat loop) */
	IrMap reported;  /* IrOp* -> that op already carries an error */
	Z3_ast pid[3], npid[3], rank, world;
	IrValue *pid_val[3];
	/* A persistent kernel that walks its tiles itself: ave.cta_id and ave.num_ctas are pid[0]
	 * and npid[0], ave.num_programs the logical grid lgrid[d] (the same in every CTA). */
	bool walks;
	Z3_ast lgrid[3];
	int64_t mods[32]; /* floordiv/mod constants met by the evaluator since the last reset */
	int nmods;
	int hops, max_hops; /* barrier hops in happens-before chains: now, at most */
	int depth;        /* evaluation nesting */
	int nopaque;      /* values made unknown so far (the solver knows nothing of them) */
	const char *opaque_name; /* the last of them */
	/* Within the global-store check: products, quotients and remainders of values met (the
	 * solver knows only some of their arithmetic: a proof holds, a counterexample may not). */
	int npartial;
	const char *partial_name;
	/* The global-store check: loops stepping by ave.num_programs from ave.program_id along one
	 * grid dimension (grid-stride loops) get their loop variable as a fresh term; each one
	 * made is listed with that dimension. */
	bool gstride;
	Z3_ast gs_x[8];
	int gs_dim[8];
	int ngs;
	bool broken;      /* the kernel's structure is beyond the analysis: stop */
	/* Some role waits or arrives in its tile loop outside the k-loop: the deadlock check ranks
	 * by (tile, replica skew, place in the tile, k-step) (rank_of in
	 * check_invariants_rules.c); skew: the replica comes right after the tile. */
	bool tiled, skew;
	int skew_dir;     /* 1: replica 0 first, -1: the last replica first */
	/* A wait whose parity in residue class bad_parity_class of its barrier index follows no
	 * form (alternating per use, or constant): reported by pass_ck_check_kernel as an error with
	 * a counterexample, where it leaves the form it follows longest. */
	CkSite *bad_parity;
	int bad_parity_class;
	IrOp *overflow_op; /* the first op whose index expression overflowed int64, if known */
} Ck;

void pass_ck_begin(Ck *k, IrOp *kernel);
/* Parity a wait needs at occurrence j of its residue class: alternating (lin) with delta `val`,
 * or constant (val 0 needs parity 1, val 1 needs 0). */
Z3_ast pass_ck_form_parity(Ck *k, bool lin, int64_t val, Z3_ast j);
/* The forms a wait's parity may follow, in the order the phase analysis tries them (the report
 * of a parity that follows none searches the same ones). */
typedef struct CkForm {
	bool lin;
	int64_t val;
} CkForm;
enum { CK_NFORMS = 4 };
extern const CkForm pass_ck_forms[CK_NFORMS];
/* True, after reporting that the kernel cannot be checked, when constant folding overflowed. */
bool pass_ck_overflowed(Ck *k);
void pass_ck_end(Ck *k);
/* Collects roles and sites; false (after an error) when the structure cannot be analyzed. */
bool pass_ck_collect(Ck *k);
/* A fresh instance of `site`: fresh replica and iteration variables with their domains. */
CkInst pass_ck_inst(Ck *k, CkSite *site, const char *tag);
/* The instance at replica r and role-loop iteration t (not checked to exist). */
CkInst pass_ck_inst_at(Ck *k, CkSite *site, Z3_ast r, Z3_ast t);
/* The condition that iteration t of `loop` exists in env `parent` (0 <= t < trip count). */
Z3_ast pass_ck_iter_exists(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t);
Z3_ast pass_ck_inst_exists(Ck *k, const CkInst *in);
/* The number of uses of the loop a site sits in (its role's loop, or the uses a tile loop's
 * k-loop numbers across tiles), replica r; NULL outside loops. */
Z3_ast pass_ck_site_trip(Ck *k, CkSite *s, Z3_ast r);
Z3_ast pass_ck_value(Ck *k, CkEnv *e, IrValue *v);
Z3_ast pass_ck_expr(Ck *k, CkEnv *e, IrOp *op, const IrExpr *x);
Z3_ast pass_ck_bar_index(Ck *k, const CkInst *in);
Z3_ast pass_ck_slot(Ck *k, const CkInst *in);
Z3_ast pass_ck_parity(Ck *k, const CkInst *in);
Z3_ast pass_ck_bytes(Ck *k, const CkInst *in); /* EXPECT: its bytes */
/* Whether the parts of their slots that two accesses touch (slices of a slot, or the whole)
 * can share an element. */
Z3_ast pass_ck_regions_meet(Ck *k, const CkInst *a, const CkInst *b);
/* Whether element (e0, e1) of its slot is one the access touches. */
void pass_ck_span(Ck *k, const CkInst *in, int d, Z3_ast *lo, Z3_ast *len);
Z3_ast pass_ck_region_has(Ck *k, const CkInst *in, Z3_ast e0, Z3_ast e1);
CkEnv *pass_ck_role_env(Ck *k, CkRole *r, Z3_ast rep);
CkEnv *pass_ck_loop_env(Ck *k, CkEnv *parent, IrOp *loop, Z3_ast t);
/* Phase structure: groups and wait forms; false after an error. */
bool pass_ck_phases(Ck *k);
/* Completed phases of its barrier that the wait instance guarantees on return. */
Z3_ast pass_ck_wait_g(Ck *k, const CkInst *in);
/* The phases of bar[idx] that role replica r's waits on `bar` guarantee before site w (NULL: at
 * the role's end), a drain's waits after the loop included. */
Z3_ast pass_ck_waited_before(Ck *k, CkRole *role, IrValue *bar, CkSite *w, Z3_ast r, Z3_ast idx);
/* Does the wait instance wait at all (rather than return at once)? */
Z3_ast pass_ck_wait_advances(Ck *k, const CkInst *in);
/* Phase of its barrier that a group site's instance contributes to. */
Z3_ast pass_ck_phase(Ck *k, const CkInst *in);
/* The use of `g`'s barrier array, for replica r, that contributes to phase n of barrier i (the
 * iteration of g's loop, for sites without shift); *ok says whether it exists. */
Z3_ast pass_ck_group_iter(Ck *k, CkGroup *g, Z3_ast r, Z3_ast i, Z3_ast n, Z3_ast *ok);
/* The instance of group site `s` for replica r that releases use u; *ok says whether it runs. */
CkInst pass_ck_group_site(Ck *k, CkSite *s, Z3_ast r, Z3_ast u, Z3_ast *ok);
/* Whether the instance runs as far as its enclosing `ave.if`s go (true outside them); *known is
 * cleared when a condition is not expressible. */
Z3_ast pass_ck_guard(Ck *k, const CkInst *in, bool *known);
/* The first iteration of wait site `w`, for replica r, on barrier i that guarantees m completed
 * phases; *ok says whether it exists. */
Z3_ast pass_ck_wait_iter(Ck *k, CkSite *w, Z3_ast r, Z3_ast i, Z3_ast m, Z3_ast *ok);
const char *pass_ck_vname(const IrValue *v);
/* Resolves a shared-memory operand of `op` to its ring or tile (s->mem) and slot (s->slot_*). */
bool pass_ck_mem(Ck *k, CkSite *s, IrOp *op, const IrItem *it);
Z3_ast pass_ck_world(Ck *k); /* also makes the rank variable */
bool pass_ck_error_once(Ck *k, IrOp *op); /* true the first time an op gets an error */
/* A site for `op` in role `r` that the checks do not iterate over (its instances only). */
CkSite *pass_ck_site_detached(Ck *k, IrOp *op, CkRole *r);

/* Another CTA: while entered, values evaluate in a fresh kernel scope whose program ids are
 * fresh variables (same grid, same kernel arguments); pid[] receives them. */
typedef struct CkCta {
	CkEnv *root;
	Z3_ast pid[3];
	IrValue *pid_val[3];
} CkCta;
/* Enters another CTA: pid[d] NULL gets a fresh program id in the grid; a term given is used as
 * it is (the caller states that it lies in the grid). */
void pass_ck_cta_enter(Ck *k, CkCta *save, Z3_ast pid[3]);
void pass_ck_cta_leave(Ck *k, const CkCta *save);

/* check_invariants_hb.c: happens-before between points of the roles, through program order,
 * role barriers and chains of barrier phases (arrive/expect_tx/copy -> phase -> wait). */
typedef struct CkPoint {
	CkRole *role;
	Z3_ast r;
	int seg, pos;
	int ord;          /* CkSite.ord; -1 where unknown (an asynchronous product's end) */
	bool nested;      /* in an inner loop (ord orders nothing there) */
	IrOp *loop;
	Z3_ast t;         /* NULL outside loops */
	const CkInst *landing; /* the landing of this copy instead of a program point */
	Z3_ast when;      /* NULL, or the condition that the point is reached at all */
} CkPoint;

CkPoint pass_ck_point(const CkInst *in);
CkPoint pass_ck_point_end(Ck *k, const CkInst *in); /* where a read ends (mma.wait) */
bool pass_ck_point_never(const CkPoint *p);
/* A formula that implies `a` happens before `b` (sound, not complete). */
Z3_ast pass_ck_hb(Ck *k, const CkPoint *a, const CkPoint *b);
Z3_ast pass_ck_po(Ck *k, const CkPoint *a, const CkPoint *b); /* same thread, a before b */

/* check_invariants_rules.c: the checks and their reports. */
void pass_ck_check_kernel(Ck *k);
/* Is the k-loop wait `w` of a flat role ever passed twice in a row on one barrier with one
 * parity (a ring restarting at every tile)? Reports it with a counterexample: true. */
bool pass_ck_flat_restart(Ck *k, CkSite *w);
bool pass_ck_is_flat(const CkSite *s);
/* The tile t1 and k-step t2 of a flat site's instance (its use u = t1 * n2 + t2). */
void pass_ck_tile_split(Ck *k, const CkInst *in, Z3_ast *t1, Z3_ast *t2);

#endif
