/* test_mbar.c — an exhaustive model check of the AMDGPU transaction-barrier protocol
 * (backend-amdgpu/sync.c, docs/amdgpu.md): every interleaving of the atomics of 2-3 waves over
 * 2-3 phases, compared with NVIDIA's mbarrier applied in the same order. The protocol sync.c
 * emits must never diverge from it; the protocol it emitted before (one re-arm whose result is
 * not examined) must be caught hanging, so the check can fail. */
#include <stdint.h>
#include <string.h>

#include "../../backend-amdgpu/amdgpu.h"
#include "unit.h"

/* ---- the model ----
 *
 * One model step is one LDS access of the emitted code, nothing more:
 *   - an event (ave.mbar.arrive, ave.mbar.expect_tx, a copy wave's complete_tx) is the first
 *     `atomicrmw add` of sync.c's update() (ds_add_rtn_u64) with the same delta;
 *   - a re-arm is one `atomicrmw add` of the block mbar.rearm in update(): the re-armer steps
 *     the phase of the value the previous atomic left and adds `count` arrivals;
 *   - a wait is the poll (ds_read_b64 in amdgpu_mbar_wait) that sees the parity flipped; polls
 *     that see it unchanged change nothing and are not steps.
 * Arithmetic between the atomics is local to the wave, so these are all the interleavings. (LLVM's
 * AMDGPU atomic optimizer may merge the atomics of a wave's active lanes into one, which gives
 * each lane the result of a consecutive order: one of the interleavings explored here.) */

enum { EV_ARRIVE, EV_EXPECT, EV_COMPLETE, EV_WAIT };
enum { MAXW = 3, MAXSTEPS = 16 };

typedef struct Step {
	int kind;
	int64_t n; /* arrivals (EV_ARRIVE), bytes (EV_EXPECT, EV_COMPLETE), phase index (EV_WAIT) */
} Step;

typedef struct Scenario {
	int count;      /* ave.mbar.alloc count(n) */
	int nphases;    /* phases the events make up */
	int64_t phase0; /* the phase bits at the start (0xfffe crosses the 16-bit wrap) */
	int nwaves;
	int len[MAXW];
	Step prog[MAXW][MAXSTEPS];
} Scenario;

typedef enum Protocol { PROTO_OLD, PROTO_NEW } Protocol;

/* A state: the LDS word, each wave's position (and, while it re-arms, the value its last atomic
 * left), and NVIDIA's barrier after the same events: pending arrivals, transaction count, phases
 * completed. emu_done counts the model's completions (re-arms). */
typedef struct State {
	int64_t word;
	int64_t w[MAXW];
	int64_t ref_tx;
	int32_t ref_arr;
	uint8_t pc[MAXW], rearming[MAXW];
	uint8_t emu_done, ref_done, pad[4]; /* no padding the compiler could leave undefined */
} State;

static const int64_t MASK = ((int64_t)1 << AMDGPU_MBAR_PHASE_BITS) - 1;

/* sync.c's deltas: arrive subtracts count << 40, expect_tx adds (bytes - 2^24) << 16, a copy
 * wave's complete_tx subtracts bytes << 16. */
static int64_t
delta(const Step *s)
{
	switch (s->kind) {
	case EV_ARRIVE:
		return amdgpu_mbar_word(-s->n, 0, 0);
	case EV_EXPECT:
		return (int64_t)((uint64_t)(s->n - ((int64_t)1 << AMDGPU_MBAR_ARRIVAL_SHIFT))
		                 << AMDGPU_MBAR_PHASE_BITS);
	default:
		return (int64_t)((uint64_t)-s->n << AMDGPU_MBAR_PHASE_BITS);
	}
}

static int64_t
pending(int64_t w)
{
	return w >> AMDGPU_MBAR_PHASE_BITS;
}

/* The re-arm of mbar.rearm: `count` arrivals plus one phase step (-0xffff from 0xffff). */
static int64_t
rearm_delta(int64_t w, int count)
{
	return amdgpu_mbar_word(count, 0, 0) + ((w & MASK) == MASK ? -MASK : 1);
}

/* ---- the explorer: depth first, states memoized ---- */

typedef struct Slot {
	State s;
	uint32_t gen;
	uint64_t paths; /* complete valid interleavings from here */
} Slot;

enum { TABLE_BITS = 18, TRACE_MAX = 64 };

typedef struct Check {
	const Scenario *sc;
	Protocol proto;
	Slot *table;
	uint32_t gen;
	/* figures, over every scenario checked */
	uint64_t states, interleavings, ambiguous, pruned;
	uint64_t diverged; /* quiescent states whose word differs from NVIDIA's barrier */
	uint64_t early;    /* waits released before their phase completed */
	uint64_t hangs;    /* final states where NVIDIA completed phases the model did not */
	uint64_t overflow;
	/* the path being explored, and the first violation's (hang first) */
	int depth, path[TRACE_MAX];
	int bad_depth, bad_path[TRACE_MAX];
	const char *bad_kind;
	Scenario bad_sc;
} Check;

/* Keeps the current path as the counterexample, unless a hang already is one. */
static void
violation(Check *c, const char *kind)
{
	if (c->bad_kind && (!strcmp(c->bad_kind, "hang") || strcmp(kind, "hang")))
		return;
	c->bad_kind = kind;
	c->bad_sc = *c->sc;
	c->bad_depth = c->depth < TRACE_MAX ? c->depth : TRACE_MAX;
	memcpy(c->bad_path, c->path, sizeof c->path);
}

static uint64_t
hash(const State *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < sizeof *s; i++)
		h = (h ^ p[i]) * 1099511628211u;
	return h;
}

static Slot *
lookup(Check *c, const State *s, bool *found)
{
	size_t m = ((size_t)1 << TABLE_BITS) - 1;
	for (size_t i = hash(s) & m, probes = 0; probes <= m; i = (i + 1) & m, probes++) {
		Slot *e = &c->table[i];
		if (e->gen != c->gen) {
			e->gen = c->gen;
			e->s = *s;
			*found = false;
			return e;
		}
		if (!memcmp(&e->s, s, sizeof *s)) {
			*found = true;
			return e;
		}
	}
	return NULL;
}

/* Applies wave i's next step to s. Returns false where the step is not enabled: a blocked wait,
 * or an event NVIDIA's barrier could not take in this order, so that the order is no valid
 * execution of the program there either: an arrival with none pending (undefined), or one that
 * leaves no arrival pending and more bytes completed than announced (bytes of a later phase's
 * copy counted in this one: the phase can never complete). */
static bool
step(Check *c, State *s, int i)
{
	const Scenario *sc = c->sc;
	if (s->rearming[i]) {
		/* One atomicrmw of mbar.rearm. */
		int64_t d = rearm_delta(s->w[i], sc->count), old = s->word;
		s->word += d;
		s->emu_done++;
		int64_t next = old + d;
		if (c->proto == PROTO_NEW && pending(next) <= 0) {
			s->w[i] = next; /* the next phase is complete too: re-arm it */
		} else {
			s->rearming[i] = 0;
			s->w[i] = 0;
			s->pc[i]++;
		}
		return true;
	}
	const Step *st = &sc->prog[i][s->pc[i]];
	if (st->kind == EV_WAIT) {
		/* Released when the phase's parity differs from the parity of the phase waited for.
		 */
		int64_t want = (sc->phase0 + st->n) & 1;
		if ((s->word & 1) == want)
			return false;
		if (s->emu_done <= st->n || s->ref_done <= st->n) {
			c->early++;
			violation(c, "early");
		}
		s->pc[i]++;
		return true;
	}
	/* NVIDIA: the event applies to the current phase, which completes when arrivals and
	 * transactions are both zero and re-arms. */
	int32_t arr = s->ref_arr - (st->kind == EV_ARRIVE ? (int32_t)st->n : st->kind == EV_EXPECT);
	int64_t tx = s->ref_tx + (st->kind == EV_EXPECT     ? st->n
	                          : st->kind == EV_COMPLETE ? -st->n
	                                                    : 0);
	if (arr < 0 || (arr == 0 && tx < 0))
		return false;
	s->ref_arr = arr;
	s->ref_tx = tx;
	if (!s->ref_arr && !s->ref_tx) {
		s->ref_done++;
		s->ref_arr = sc->count;
	}
	/* The model: update()'s first atomicrmw; the result with pending == 0 completes the phase.
	 */
	int64_t d = delta(st), old = s->word;
	s->word += d;
	if (pending(old + d) == 0) {
		s->rearming[i] = 1;
		s->w[i] = old + d;
	} else {
		s->pc[i]++;
	}
	return true;
}

static bool
quiescent(const State *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s->rearming[i])
			return false;
	return true;
}

static uint64_t
explore(Check *c, const State *s)
{
	bool found;
	Slot *e = lookup(c, s, &found);
	if (!e) {
		c->overflow++;
		return 0;
	}
	if (found)
		return e->paths;
	c->states++;
	const Scenario *sc = c->sc;
	/* The model may lag NVIDIA while a re-arm is under way, never lead it, and agrees with it
	 * word for word whenever no wave is re-arming. */
	if (s->emu_done > s->ref_done ||
	    (quiescent(s, sc->nwaves) &&
	     s->word !=
	         amdgpu_mbar_word(s->ref_arr, s->ref_tx, (sc->phase0 + s->ref_done) & MASK))) {
		c->diverged++;
		violation(c, "diverged");
	}
	uint64_t paths = 0;
	bool moved = false, events_left = false;
	for (int i = 0; i < sc->nwaves; i++) {
		if (s->pc[i] >= sc->len[i])
			continue;
		if (sc->prog[i][s->pc[i]].kind != EV_WAIT || s->rearming[i])
			events_left = true;
		State t = *s;
		if (!step(c, &t, i))
			continue;
		moved = true;
		if (c->depth < TRACE_MAX)
			c->path[c->depth] = i;
		c->depth++;
		paths += explore(c, &t);
		c->depth--;
	}
	if (!moved) {
		/* A final state. A hang: the model completed fewer phases than NVIDIA, or a wave
		 * waits for a phase NVIDIA completed and the model did not. Otherwise a wave still
		 * waiting was left two phases behind, its parity back (ambiguous on NVIDIA too:
		 * counted, not judged), or an event is left that NVIDIA's barrier could not take
		 * (no execution: pruned). */
		bool hang = s->emu_done < s->ref_done;
		for (int i = 0; i < sc->nwaves; i++)
			if (s->pc[i] < sc->len[i] && sc->prog[i][s->pc[i]].kind == EV_WAIT &&
			    sc->prog[i][s->pc[i]].n < s->ref_done &&
			    s->emu_done <= sc->prog[i][s->pc[i]].n)
				hang = true;
		if (hang) {
			c->hangs++;
			violation(c, "hang");
		} else if (events_left || s->ref_done != sc->nphases) {
			c->pruned++; /* no valid way on: NVIDIA's barrier would be stuck as well */
		} else if (s->pc[0] < sc->len[0] || s->pc[1] < sc->len[1] ||
		           (sc->nwaves > 2 && s->pc[2] < sc->len[2])) {
			c->ambiguous++; /* a waiter two phases behind: ambiguous on NVIDIA too */
		} else {
			paths = 1;
		}
	}
	e->paths = paths; /* slots never move */
	return paths;
}

static State
initial(const Scenario *sc)
{
	State s;
	memset(&s, 0, sizeof s);
	s.word = amdgpu_mbar_word(sc->count, 0, sc->phase0);
	s.ref_arr = sc->count;
	return s;
}

static void
check(Check *c, const Scenario *sc)
{
	c->sc = sc;
	if (++c->gen == 0) {
		memset(c->table, 0, sizeof(Slot) << TABLE_BITS);
		c->gen = 1;
	}
	State s = initial(sc);
	c->depth = 0;
	c->interleavings += explore(c, &s);
}

/* Replays the counterexample found, printing each step. */
static void
print_bad(Check *c)
{
	const Scenario *sc = &c->bad_sc;
	static const char *const kind[] = {"arrive", "expect_tx", "complete_tx", "wait"};
	c->sc = sc;
	printf("counterexample, %s (count(%d), phase bits from %#llx):\n", c->bad_kind, sc->count,
	       (unsigned long long)sc->phase0);
	for (int i = 0; i < sc->nwaves; i++) {
		printf("  wave %d:", i);
		for (int j = 0; j < sc->len[i]; j++)
			printf(" %s(%lld)", kind[sc->prog[i][j].kind], (long long)sc->prog[i][j].n);
		printf("\n");
	}
	State s = initial(sc);
	for (int k = 0; k < c->bad_depth; k++) {
		int i = c->bad_path[k];
		bool re = s.rearming[i];
		const Step *st = &sc->prog[i][s.pc[i]];
		step(c, &s, i);
		int64_t p = pending(s.word),
		        arr = (p + ((int64_t)1 << (AMDGPU_MBAR_ARRIVAL_SHIFT - 1))) >>
		              AMDGPU_MBAR_ARRIVAL_SHIFT;
		printf("  %2d. wave %d %-16s -> pending %lld arrivals %+lld bytes, phase %#llx; "
		       "NVIDIA: %d phases done\n",
		       k + 1, i, re ? "re-arm" : kind[st->kind], (long long)arr,
		       (long long)(p - arr * ((int64_t)1 << AMDGPU_MBAR_ARRIVAL_SHIFT)),
		       (unsigned long long)(s.word & MASK), s.ref_done);
	}
	for (int i = 0; i < sc->nwaves; i++)
		if (s.pc[i] < sc->len[i] && sc->prog[i][s.pc[i]].kind == EV_WAIT)
			printf("  wave %d waits for phase %lld (parity %lld) forever\n", i,
			       (long long)sc->prog[i][s.pc[i]].n,
			       (long long)((sc->phase0 + sc->prog[i][s.pc[i]].n) & 1));
	printf("  end: %d phases completed, NVIDIA completed %d\n", s.emu_done, s.ref_done);
}

/* ---- scenarios ---- */

static void
add(Scenario *sc, int w, int kind, int64_t n)
{
	sc->prog[w][sc->len[w]++] = (Step){kind, n};
}

/* The families: each phase of a count(2) barrier is one expect_tx of 32 bytes (an arrival), two
 * copies of 16 bytes and one arrive, dealt in every way to two event waves (in phase order; a
 * wave holding both copies and the expect_tx lands a copy first); a third wave waits for every
 * phase by parity. */
static void
family(Check *c, int nphases, int64_t phase0, int *scenarios)
{
	static const Step ev[4] = {
	    {EV_COMPLETE, 16}, {EV_EXPECT, 32}, {EV_COMPLETE, 16}, {EV_ARRIVE, 1}};
	int nev = 4 * nphases;
	for (unsigned deal = 0; deal < 1u << nev; deal++) {
		Scenario sc;
		memset(&sc, 0, sizeof sc);
		sc.count = 2;
		sc.nphases = nphases;
		sc.phase0 = phase0;
		sc.nwaves = 3;
		for (int e = 0; e < nev; e++)
			add(&sc, (int)(deal >> e & 1), ev[e % 4].kind, ev[e % 4].n);
		for (int p = 0; p < nphases; p++)
			add(&sc, 2, EV_WAIT, p);
		check(c, &sc);
		(*scenarios)++;
	}
}

/* Hand-written ones: arrivals of count(c) from waves that never wait; a copy that completes a
 * phase while the next phase's expect_tx and copy come from other waves. */
static void
handwritten(Check *c, int64_t phase0, int *scenarios)
{
	Scenario sc;
	/* count(1): wave 0 arrives once, wave 1 once; both then wait for the second phase. */
	memset(&sc, 0, sizeof sc);
	sc = (Scenario){.count = 1, .nphases = 2, .phase0 = phase0, .nwaves = 2};
	add(&sc, 0, EV_ARRIVE, 1);
	add(&sc, 0, EV_WAIT, 0);
	add(&sc, 0, EV_WAIT, 1);
	add(&sc, 1, EV_ARRIVE, 1);
	check(c, &sc);
	(*scenarios)++;
	/* count(2), three waves, three phases: arrivals of count 1 and 2 dealt unevenly. */
	memset(&sc, 0, sizeof sc);
	sc = (Scenario){.count = 2, .nphases = 3, .phase0 = phase0, .nwaves = 3};
	add(&sc, 0, EV_ARRIVE, 1);
	add(&sc, 0, EV_ARRIVE, 2);
	add(&sc, 1, EV_ARRIVE, 1);
	add(&sc, 1, EV_ARRIVE, 2);
	add(&sc, 2, EV_WAIT, 0);
	add(&sc, 2, EV_WAIT, 1);
	add(&sc, 2, EV_WAIT, 2);
	check(c, &sc);
	(*scenarios)++;
	/* count(1), the pipeline: wave 0 announces 64 bytes per phase, wave 1 copies phase 0's,
	 * wave 2 phase 1's and phase 2's, in 32-byte halves. */
	memset(&sc, 0, sizeof sc);
	sc = (Scenario){.count = 1, .nphases = 3, .phase0 = phase0, .nwaves = 3};
	for (int p = 0; p < 3; p++)
		add(&sc, 0, EV_EXPECT, 64);
	add(&sc, 1, EV_COMPLETE, 32);
	add(&sc, 1, EV_COMPLETE, 32);
	add(&sc, 1, EV_WAIT, 0);
	add(&sc, 1, EV_WAIT, 1);
	add(&sc, 1, EV_WAIT, 2);
	for (int h = 0; h < 4; h++)
		add(&sc, 2, EV_COMPLETE, 32);
	check(c, &sc);
	(*scenarios)++;
}

static void
run(Check *c, Protocol proto, int *scenarios)
{
	memset(c, 0, sizeof *c);
	c->table = calloc((size_t)1 << TABLE_BITS, sizeof(Slot));
	c->proto = proto;
	*scenarios = 0;
	for (int w = 0; w < 2; w++) {
		int64_t phase0 = w ? 0xfffe : 0;
		handwritten(c, phase0, scenarios);
		family(c, 2, phase0, scenarios);
		family(c, 3, phase0, scenarios);
	}
	free(c->table);
	c->table = NULL;
}

int
main(void)
{
	static Check c;
	int scenarios;

	run(&c, PROTO_NEW, &scenarios);
	printf("new protocol: %d scenarios, %llu states, %llu interleavings, %llu ambiguous on "
	       "NVIDIA too, "
	       "%llu pruned; %llu diverged, %llu early, %llu hangs\n",
	       scenarios, (unsigned long long)c.states, (unsigned long long)c.interleavings,
	       (unsigned long long)c.ambiguous, (unsigned long long)c.pruned,
	       (unsigned long long)c.diverged, (unsigned long long)c.early,
	       (unsigned long long)c.hangs);
	CHECK(c.states > 0 && c.interleavings > 0);
	CHECK_EQ(c.overflow, 0);
	CHECK_EQ(c.diverged, 0);
	CHECK_EQ(c.early, 0);
	CHECK_EQ(c.hangs, 0);
	if (c.bad_kind)
		print_bad(&c);

	run(&c, PROTO_OLD, &scenarios);
	printf("old protocol: %d scenarios, %llu states, %llu interleavings; %llu diverged, %llu "
	       "early, %llu hangs\n",
	       scenarios, (unsigned long long)c.states, (unsigned long long)c.interleavings,
	       (unsigned long long)c.diverged, (unsigned long long)c.early,
	       (unsigned long long)c.hangs);
	CHECK_EQ(c.overflow, 0);
	CHECK(c.hangs > 0);
	CHECK(c.diverged > 0);
	CHECK_EQ(c.early, 0);
	if (c.bad_kind)
		print_bad(&c);
	return unit_summary();
}
