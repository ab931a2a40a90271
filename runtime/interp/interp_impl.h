/* interp_impl.h — internals of the reference interpreter shared by its files: the prepared
 * program, values and tiles, global and shared memory, barriers, tags, tasks with their explicit
 * frame stacks, CTAs and the run. Prototypes are grouped by the file that defines them. */
#ifndef AVE_INTERP_IMPL_H
#define AVE_INTERP_IMPL_H

#include "interp.h"

/* How an element is held while the kernel runs: f32 and narrower floats as float (always exactly
 * representable in their type: every op rounds to it), f64 as double, integers and index as
 * int64 (wrapped to their width; i1 is 0 or 1). */
typedef enum Sk { SK_F32, SK_F64, SK_I64, SK_COUNT } Sk;

/* An immutable register tile (or a scalar's storage), reference counted. */
typedef struct Tile {
	int refs;
	Sk sk;
	int64_t n;
	size_t bytes; /* of the whole allocation */
	void *data;   /* 64-byte aligned, inside the same allocation */
} Tile;

typedef struct Smem Smem;
typedef struct Mbar Mbar;
typedef struct Tens Tens;
typedef struct IOp IOp;
typedef struct IBlock IBlock;
typedef struct Task Task;
typedef struct Cta Cta;
typedef struct Run Run;

/* A view of shared memory: a ring, a ring slot, a tile or a slice of one (row-major strides). */
typedef struct View {
	Smem *m;
	int64_t slot; /* ring slot; -1 for a whole ring that still needs an index */
	int64_t off;  /* first element in the buffer */
	int rank;
	int64_t dims[3], str[3];
} View;

typedef enum VKind { V_NONE, V_INT, V_FLT, V_TILE, V_PEND, V_TENS, V_SMEM, V_MBAR } VKind;

typedef struct Val {
	VKind k;
	uint32_t tags; /* label set (0: none) */
	uint64_t seq;  /* V_PEND: the async MMA that produced it */
	union {
		int64_t i;
		double f;
		Tile *t; /* V_TILE, V_PEND */
		Tens *g;
		Mbar *b;
		View v;
	} u;
} Val;

/* ---- the prepared program (interp_prep.c) ---- */

#define INTERP_MAX_TILE ((int64_t)1 << 26) /* elements of one tile or shared-memory slot */

struct IOp {
	IrOp *op;
	int id;    /* number of the op in its kernel */
	int *slot; /* the slot of each operand */
	int res;   /* the slot of the first result */
	IBlock *reg[2];
	bool point; /* a scheduling point: it touches memory or barriers */
};

struct IBlock {
	IOp *ops;
	int nops;
	int *arg; /* slots of the block arguments */
	int narg;
	IOp *owner;
};

typedef struct Prog {
	IrCtx *c;
	IrOp *kernel;
	IBlock *body;
	int nslots, nops;
	uint8_t *depth; /* per slot: 0 for values of the CTA, 1 for values defined inside a role */
	IrValue **val;  /* per slot */
	IOp **ops;      /* per op id */
	IrArena arena;
} Prog;

/* Builds the program of a verified kernel; NULL after a diagnostic (unsupported op). */
Prog *interp_prep(IrCtx *c, IrOp *kernel);
void interp_prog_free(Prog *p);

/* ---- memory and barriers ---- */

/* A tensor argument bound for the launch. */
struct Tens {
	IrValue *arg;
	IrType *elem;
	size_t esz;
	unsigned char *data;
	int64_t nelem;
	int rank;
	int64_t dims[IR_MAX_RANK], str[IR_MAX_RANK];
	uint32_t *labels; /* per element label set, made at the first labelled store */
	unsigned char *written; /* per element: some CTA stored it (made at the first store) */
	/* a symmetric buffer's copy on rank `owner` (sym != NULL): per element the last writer and
	 * reader of this launch (CTA gid + 1, 0 none), the logical clock and the writing op's id */
	const char *sym;
	int owner;
	bool own_data; /* the interpreter allocated `data` (zeros: no memory was given) */
	int32_t *wcta, *wop, *rcta, *rop;
	uint32_t *wclk, *rclk;
};

enum { SM_INFLIGHT = 1, SM_UNFENCED = 2 };

/* A shared-memory allocation (a tile, or a ring of slots) of one CTA. */
struct Smem {
	IrValue *name;
	IrType *elem;
	Sk sk;
	size_t ssz; /* bytes per element as stored */
	bool ring;
	int64_t nslots, numel; /* numel: elements per slot */
	int rank;
	int64_t dims[3];
	void *data;
	uint32_t *meta;    /* per element: 0 never written, else label set + 1 */
	int64_t *origin;   /* per element: the first buffer element of the labelled write last into
	                    * it (where its tile's origin sits, for holds on another view); NULL
	                    * before the first labelled write (interp_smem_origin) */
	uint8_t *flags;    /* SM_* */
	uint16_t *readers; /* async MMAs that read the element and were not waited for yet */
};

typedef struct Bar {
	int64_t phase;   /* phases completed */
	int64_t pending; /* arrivals still missing in the current phase */
	int64_t
	    tx; /* bytes expected and not landed (below 0 while arrivals are pending, as in PTX) */
	int64_t tx_exp, tx_got; /* bytes expected / landed in the current phase */
	int64_t *seen; /* per task id: phases completed when the task last passed a wait; -1 none */
	int nseen;
} Bar;

struct Mbar {
	IrValue *name;
	int64_t count, n;
	Bar *b;
};

/* An asynchronous copy in flight. */
typedef struct Copy {
	IOp *o;
	Tens *src;
	int64_t at[3];
	View dst;
	Mbar *bar;
	int64_t bi;
	int64_t bytes;
	bool tagged;
	uint32_t tag;
	char who[192]; /* the issuing task and its iterations */
} Copy;

/* An async MMA that was not waited for. */
typedef struct AMma {
	uint64_t seq;
	IOp *o;
	int nv;
	View v[2]; /* its shared-memory operands */
} AMma;

/* ---- tasks, CTAs and the run (interp_run.c) ---- */

typedef struct Frame {
	IBlock *b;
	int pc;
	int64_t iv, ub, step;
} Frame;

typedef enum TState { T_READY, T_BLOCKED, T_DONE } TState;

struct Task {
	int id;
	IOp *role; /* NULL for the CTA's own task */
	int64_t replica;
	Task *parent;
	Val *env;
	Frame *fr;
	int depth, cap;
	TState st;
	uint64_t blocked_at; /* the CTA's epoch when it last blocked */
	bool announced;      /* the next op is a scheduling point the scheduler already saw */
	/* what it waits for, for deadlock reports */
	IOp *wait_op;
	Mbar *wait_bar;
	int64_t wait_bi, wait_par;
	/* ave.barrier */
	bool in_barrier;
	uint64_t barrier_gen;
	/* ave.warp_specialize: the role tasks it started */
	bool spawned;
	int child0, nchild;
	/* async MMAs in flight, oldest first */
	AMma *mma;
	int nmma, capmma;
	uint64_t mma_seq;
	/* shared memory written by ave.smem.store since the last ave.fence async_shared */
	View *unf;
	int nunf, capunf;
};

typedef struct RoleBar {
	int64_t arrived;
	uint64_t gen;
} RoleBar;

struct Cta {
	int64_t pid[3];
	Task **task;
	int ntask, captask;
	Copy *copy;
	int ncopy, capcopy;
	uint64_t epoch; /* advances whenever a blocked task may have become runnable */
	void **stat;    /* per op id: its Smem or Mbar (allocations are static per op) */
	int64_t smem_bytes; /* shared memory allocated so far, as a GPU would hold it */
	RoleBar *rbar;  /* per op id of an ave.role */
	/* multi-rank runs */
	int rank;
	int32_t gid;  /* rank * CTAs per rank + the CTA's linear id */
	struct Acq *acq; /* what its completed chunk waits acquired */
	int nacq, capacq;
};

/* A completed ave.chunk.wait of a CTA acquired the writes CTA `from` made before clock `upto`
 * (the signal's release), for the chunk's region `box`. */
typedef struct Acq {
	int32_t from;
	uint32_t upto;
	IrChunkBox box;
} Acq;

/* A chunk signal that reached slot `off` of rank `rank`'s copy of signal buffer `k`. */
typedef struct Arrival {
	int k, rank;
	int64_t off;
	int32_t from;
	uint32_t clk;
} Arrival;

typedef struct Labels {
	IrMap lab, set;
	IrVec labv, setv; /* Label*, LSet* by id */
	IrArena arena;
} Labels;

struct Run {
	IrCtx *c;
	const IrAllocator *al;
	Prog *p;
	const InterpLaunch *l;
	const InterpOptions *o;
	Tens *tens; /* per kernel argument (unused for scalars) */
	int64_t grid[3];
	uint64_t rng;
	int policy; /* how this schedule picks among candidates (a function of its seed) */
	uint64_t seed;
	int sched, nsched;
	Cta *cta;
	Labels lab;
	InterpStats st;
	void *scratch; /* for the MMA's transposed operand */
	size_t scratch_bytes;
	/* multi-rank runs (SPEC 5.9): ranks, the launch's epoch, the symmetric heap */
	int world, rank;  /* ranks; the rank of r->cta */
	const InterpLaunch *ls; /* per rank; r->l is r->rank's */
	int64_t epoch;    /* launch number: a chunk wait needs its signal counter >= epoch */
	bool comm;        /* the kernel communicates: the CTAs of all ranks run interleaved */
	int nargs;
	Tens *all;        /* rank q's arguments at [q * nargs]; r->tens points at r->rank's */
	int nsymm;
	IrOp **symm_op;   /* the ave.symm.alloc ops, in module order */
	Tens *symm;       /* rank q's copy of buffer k at [q * nsymm + k] */
	uint32_t clk;     /* logical clock of reads, writes, signals and waits on symmetric memory */
	Arrival *arr;
	int narr, caparr;
	Cta **act;        /* the CTAs started and not finished (multi-rank runs) */
	int nact, capact;
	int64_t ncta;     /* CTAs per rank */
	bool walk;        /* a persistent kernel that walks its tiles itself: ncta CTAs along x,
	                   * grid[] the logical grid it walks */
};

enum { EX_OK, EX_JUMP, EX_BLOCK, EX_DONE, EX_ERR };

Val *interp_val(Run *r, Task *t, int slot);
void interp_set(Run *r, Task *t, int slot, Val v); /* takes the reference v holds */
void interp_val_release(Run *r, Val *v);
Val interp_val_copy(const Val *v); /* a new reference */
/* Reports a run-time error at `o` with the task's role, replica, CTA and iterations. */
void interp_err(Run *r, Task *t, IOp *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with the task's description already made (copies landing after their task moved on). */
void interp_err_where(Run *r, IOp *o, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "CTA (0, 1, 0), role @mma replica 1, %k = 3" */
void interp_where(Run *r, Task *t, char *buf, size_t n);
void interp_push(Run *r, Task *t, IBlock *b);
Task *interp_spawn(Run *r, IOp *role, int64_t replica, Task *parent);
/* Frees what a finished task holds (its values and frames); the Task stays for the CTA. */
void interp_task_retire(Run *r, Task *t);
uint64_t interp_rand(Run *r);

/* ---- op execution (interp_exec.c) ---- */

/* Executes one op: EX_OK (next op), EX_JUMP (the op moved the frame itself), EX_BLOCK (nothing
 * happened; retry later), EX_DONE (the task ended), EX_ERR (reported). */
int interp_exec(Run *r, Task *t, IOp *o);
/* Whether the interpreter runs ops of this kind, and whether they are scheduling points. */
bool interp_op_supported(IrOpcode code, bool *point);
/* An index expression over the op's operands; *ok becomes false on a non-positive divisor. */
int64_t interp_expr(Run *r, Task *t, IOp *o, const IrExpr *e, bool *ok);
const char *interp_vname(const IrValue *v);
/* Ends the k-th async MMA in flight of the task: its shared-memory operands are free again. */
void interp_mma_retire(Run *r, Task *t, int k);

/* ---- memory (interp_mem.c) ---- */

/* Walks the rows of a tile (rank <= 3, padded on the left to three dimensions) over a tensor. */
typedef struct Walk {
	int64_t td[3], c[3], D[3], S[3];
	int64_t i0, i1;
} Walk;

typedef struct Row {
	int64_t base;   /* the row's first element in the tile */
	int64_t lo, hi; /* its in-bounds part */
	int64_t start;  /* tensor offset of element lo */
	int64_t g[3];   /* tensor coordinates of element lo */
	bool ovf;       /* the offset does not fit 64 bits */
} Row;

void interp_walk_init(Walk *w, const Tens *g, const IrType *tile, const int64_t *at);
bool interp_walk_row(Walk *w, Row *row);
bool interp_row_in_buffer(Run *r, Task *t, IOp *o, const Tens *g, const Walk *w, const Row *row);
/* "%C", or "@A_full of rank 2" */
void interp_tens_name(Run *r, const Tens *g, char *buf, size_t n);
/* The tensor an address item names: a tensor value, or this rank's copy of a symmetric buffer. */
Tens *interp_tens_of(Run *r, Task *t, IOp *o, const IrItem *it);
bool interp_coords(Run *r, Task *t, IOp *o, const IrItem *it, int64_t *at);

int interp_load(Run *r, Task *t, IOp *o);
int interp_store(Run *r, Task *t, IOp *o);
int interp_copy_async(Run *r, Task *t, IOp *o);
bool interp_copy_land(Run *r, Copy *cp);
int interp_smem_load(Run *r, Task *t, IOp *o);
int interp_smem_store(Run *r, Task *t, IOp *o);
int interp_slice(Run *r, Task *t, IOp *o);
int interp_smem_alloc(Run *r, Task *t, IOp *o);
/* The view an address item names (`%ring[%s]`, `%tile`); false after an error. */
bool interp_view_of(Run *r, Task *t, IOp *o, const IrItem *it, View *v);
int64_t *interp_smem_origin(Run *r, Smem *m);
/* A tagged ave.store's coordinates `at` against its tag's region; false after reporting. */
bool interp_store_tag_ok(Run *r, Task *t, IOp *o, const IrItem *call, const int64_t *at);
/* Checks that the view was written and no copy is landing in it, and gathers it into a new tile
 * (dst NULL: check only). Returns the union of its labels in *tags. */
bool interp_view_read(Run *r, Task *t, IOp *o, const View *v, Tile *dst, uint32_t *tags,
                      const char *what);
void interp_view_name(Run *r, const View *v, char *buf, size_t n);
int interp_fence(Run *r, Task *t, IOp *o);
void interp_smem_free(Run *r, Smem *m);

/* ---- synchronization (interp_sync.c) ---- */

int interp_mbar_alloc(Run *r, Task *t, IOp *o);
int interp_mbar_arrive(Run *r, Task *t, IOp *o);
int interp_mbar_expect_tx(Run *r, Task *t, IOp *o);
int interp_mbar_wait(Run *r, Task *t, IOp *o);
int interp_barrier(Run *r, Task *t, IOp *o);
/* Bytes landing on barrier `bi` of `b` (a copy); false after an error. */
bool interp_bar_complete_tx(Run *r, IOp *o, const char *who, Mbar *b, int64_t bi, int64_t bytes);
bool interp_mbar_ref(Run *r, Task *t, IOp *o, const IrItem *it, Mbar **b, int64_t *bi);
void interp_describe_wait(Run *r, Task *t, char *buf, size_t n);
void interp_mbar_free(Run *r, Mbar *b);

/* ---- communication (interp_comm.c) ---- */

int interp_rank_op(Run *r, Task *t, IOp *o);
int interp_chunk_wait(Run *r, Task *t, IOp *o);
/* `gathered = @chunk` on the kernel: rank q's chunk q copied into every other rank and
 * signalled there, before a launch (InterpOptions.gather). False after an error. */
bool interp_gather(Run *r);
int interp_chunk_signal(Run *r, Task *t, IOp *o);
int interp_put(Run *r, Task *t, IOp *o);
/* The peer's copy an ave.get reads (its `peer(...)`); NULL after an error. */
Tens *interp_get_src(Run *r, Task *t, IOp *o);
/* Checks and records a read (write) of the tile at `at` of a symmetric buffer by r->cta: a read
 * of what another rank wrote needs a chunk wait that acquired the write (and covers it, on the
 * reader's own copy); a write over what another rank read needs a wait that orders it after the
 * read. False after reporting the race. */
bool interp_symm_access(Run *r, Task *t, IOp *o, Tens *g, const IrType *tile, const int64_t *at,
                        bool write);
void interp_describe_chunk_wait(Run *r, Task *t, char *buf, size_t n);
void interp_cta_name(Run *r, int32_t gid, char *buf, size_t n);

/* ---- numerics and storage (interp_num.c) ---- */

Sk interp_sk(const IrType *scalar);
size_t interp_sk_size(Sk sk);
/* Rounds floats held as float to their type (no-op for f32) / wraps integers to their width. */
void interp_round(const IrType *scalar, Sk sk, void *data, int64_t n);
uint64_t interp_wrap(int bits, uint64_t x);
double interp_round_f(IrFloatKind fk, double x);
/* Element conversion between memory format (`elem`) and storage, over a strided run. */
void interp_mem_to_sk(const IrType *elem, const unsigned char *base, int64_t start, int64_t stride,
		      int64_t n, void *dst);
void interp_sk_to_mem(const IrType *elem, const void *src, unsigned char *base, int64_t start,
		      int64_t stride, int64_t n);
/* A scalar (int64 or double) as one element of the storage of type `elem`, and back. */
void interp_scalar_to_sk(const IrType *elem, const Val *v, void *dst);
Val interp_sk_to_scalar(const IrType *elem, const void *src);

/* ---- compute on tiles (interp_tile.c) ---- */

Tile *interp_tile_new(Run *r, Sk sk, int64_t n);
void interp_tile_release(Run *r, Tile *t);
/* Elementwise op `code` on n elements: operand k at ops[k] with stride st[k] (0 broadcasts a
 * scalar). `in` is the operand element type (the compare type for ave.cmp). For integer division
 * by zero returns false with the element in *bad. */
bool interp_ew(IrOpcode code, IrStr mode, const IrKeywords *kw, const IrType *in, int nops,
	       const void *const *ops, const int *st, void *res, int64_t n, int64_t *bad);
/* Converts n elements between element types (cvt semantics: RNE for floats, toward zero with
 * saturation from float to integer, wrapping between integers). */
void interp_cvt(const IrType *from, const void *src, const IrType *to, void *dst, int64_t n);
/* d = a * b + c over float storage; a: MxK, b: KxN (or NxK with tb), c and d: MxN f32. */
void interp_mma(const IrType *ab, const void *a, const void *b, bool tb, const float *c, float *d,
		int64_t M, int64_t N, int64_t K, void *scratch);
/* Reduces the middle dimension of an outer x len x inner array (max, min or add). */
void interp_reduce(IrStr mode, const IrKeywords *kw, const IrType *elem, const void *src, void *dst,
		   int64_t outer, int64_t len, int64_t inner);

/* ---- tags (interp_tags.c) ---- */

void interp_labels_init(Run *r);
void interp_labels_free(Run *r);
uint32_t interp_label_set1(Run *r, IrStr fn, int n, const int64_t *args); /* {fn(args)} */
uint32_t interp_label_union(Run *r, uint32_t a, uint32_t b);
void interp_label_str(Run *r, uint32_t set, char *buf, size_t n);
int interp_tag(Run *r, Task *t, IOp *o);
int interp_tag_assert(Run *r, Task *t, IOp *o);
/* The label set of a tag call item `@A(%m, %k)`; false after an error. */
bool interp_tag_call(Run *r, Task *t, IOp *o, const IrItem *it, uint32_t *set);

#endif
