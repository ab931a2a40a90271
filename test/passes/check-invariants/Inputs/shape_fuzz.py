"""Generated warp-specialized GEMMs of many shapes, and mutants of them, for check-invariants and
the interpreter (the richer sibling of tile_fuzz.py).

Each kernel draws, where the combination makes sense:
  - stages 2 to 8, 1 to 3 consumer replicas (`replicate(C)`, each on its rows of the A slot
    through `ave.slice ... rows(%wg * R, R)`; the empty barriers count C arrivals), BM 64 to 192,
    BN 16 to 128, BK 16 to 64 (the rings fit sm_90a's shared memory);
  - no tile loop (a 2-D grid, one tile per CTA; each role's ring phase an i1 carried with
    ave.phase.next or computed from %k), or a tile loop around the k-loop with the ring position
    carried across tiles: a panel of %T column tiles, a grid-stride loop over row tiles, or a
    persistent walk (`persistent = P`, ave.cta_id / ave.num_ctas over the logical grid);
  - the release: plain (pending(0), release slot k), or one MMA in flight (pending(1) except on
    the last k, release slot k - 1 under `k > 0`, `%it > 0` on the carried position in a tile
    loop) with the last slot released after the loop under `nk > 0`, or (no tile loop) inside it
    under `k == nk - 1`;
  - a producer drain after its loop (slot (nk - 1) mod S, parity ((nk - 1) floordiv S) mod 2,
    nk clamped at 0; no tile loop);
  - a loop-free epilogue role: each consumer replica stores its rows of the accumulator into a
    shared tile and arrives on %done (count C); the epilogue waits, loads it and writes C (no
    tile loop);
  - a role barrier (ave.barrier in the consumer role after its k-loop);
  - one full barrier for both operands (one expect_tx of both tiles, count 1, or one per
    operand, count 2), or a full barrier per ring (A and B); each expect_tx before its copies or
    after them.
The K of each run is ragged: 0, shorter than one tile, and several tiles (past the ring).

Every correct kernel must check with no error, warning or undecided query (else a FALSE
REJECTION), and agree with the plain C GEMM (ave-interp-ref) after 4 interpreter schedules on
each of the three shapes. Then one to three mutants of it, drawn among those that apply, are
checked: rejected with a counterexample, rejected as "cannot check", rejected otherwise (an error
that carries no counterexample), or ACCEPTED. Each accepted mutant runs in the interpreter over
24 schedules on three shapes: if a run fails (deadlock, race, an assertion) or differs from the C
GEMM it is a MISSED bug; otherwise it is "accepted, equivalent?", with the reason it should be
equivalent where one is known (24 random schedules need not produce the interleaving that
shows a race a mutant opens: a release before the MMA's wait, rejected by the proof, passes
them; the reason, not the interpreter alone, makes an accepted mutant "equivalent").

The mutants: a parity off (producer, consumer, a period of S + 1), a wrong slot (copy, arrival
of a copy, expect_tx, full wait, empty wait, release), a release before the MMA's wait (of this
slot, or of the in-flight form's releases), arrival counts (empty, full, done, an arrival of 2),
expect_tx bytes, a tag, the empty wait left out; for one MMA in flight: the `k > 0` guard left
out or on %k in a tile loop, the last release left out, unguarded, on the slot before, or under
`nk > 1`, pending(1) on the last k; for tile loops: a ring restarting per tile, a counter
stepping by 2, a tile loop stepping by 1; drains: parity, slot, the loop's carried parity, nk
not clamped, a second drain wait; epilogues: parity, done count, the done arrival before the
store, no wait, every replica on the same rows; the role barrier only in replica 0; a full
barrier per ring: one wait left out, the two byte counts swapped.

  shape_fuzz.py WORKDIR SEED COUNT [--known] [--interp-all]

--known also draws the shapes the checker is known to reject although they are correct, so that
a run shows whether that still holds (none today: the role barrier in a tile loop, the last one,
is understood now). --interp-all runs
every rejected mutant in the interpreter too ("[interpreter: agrees]" marks a rejection only the
proof sees, or one of a mutant that is in fact correct); a rejected mutant expected to be
equivalent always is, and says why.

A rejection that names a line of the mutant that differs from the kernel (as the error's or a
note's location, or "line N" in the text) says "[cause's line named]".

Prints "ok shape N: ..." per kernel, one line per mutant, FAIL / MISSED lines, and the summary
  "N kernels, F failures; mutants: X counterexample, Y cannot check, Z accepted (W equivalent),
   V missed; R rejected otherwise; L rejections name the mutated line"
and exits 0 (a FileCheck run decides).
"""
import difflib
import os
import random
import re
import subprocess
import sys
import time

SMEM = 200 * 1024
KNOWN = False  # --known: also draw the shapes the checker is known to reject falsely
INTERP_ALL = False  # --interp-all: run every rejected mutant in the interpreter too


def run(cmd, timeout=300):
    # A tool being rebuilt is missing (or busy) for a moment: try again for up to a minute.
    for attempt in range(30):
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return 124, "timed out after %d s" % timeout
        except OSError as err:
            if attempt == 29:
                return 127, "cannot run %s: %s" % (cmd[0], err)
            time.sleep(2)
            continue
        if p.returncode in (126, 127) and attempt < 29:
            time.sleep(2)
            continue
        return p.returncode, p.stdout


def cdiv(a, b):
    return -(-a // b)


# ---------------------------------------------------------------------------------------------
# Drawing a kernel


def draw(r):
    p = {}
    p["C"] = C = r.choice([1, 1, 2, 2, 3])
    p["rm"] = rm = 64 if C > 1 else r.choice([64, 128])
    p["bm"] = bm = rm * C
    p["pers"] = r.choice([None, None, None, "panel", "gs", "walk"])
    pers = p["pers"]
    p["rel"] = r.choice(["plain", "after", "tail"] if not pers else ["plain", "after"])
    p["drain"] = not pers and r.random() < 0.4
    p["epi"] = not pers and r.random() < 0.4
    # A role barrier after the k-loop (in a tile loop too).
    p["rbar"] = r.random() < 0.35
    p["split"] = r.random() < 0.4
    # The ring phase of each role (no tile loop): an i1 carried with ave.phase.next, or computed
    # from %k; the two roles draw theirs apart.
    p["pform"] = "carried" if pers else r.choice(["next", "calc"])
    p["cform"] = "carried" if pers else r.choice(["next", "calc"])
    # One full barrier for both operands: one expect_tx of both tiles' bytes (count 1), or one
    # per operand (count 2).
    p["tx2"] = not p["split"] and r.random() < 0.3
    # Each expect_tx after the copies it announces instead of before them.
    p["txlate"] = r.random() < 0.2
    p["clamp"] = p["drain"] or (not pers and r.random() < 0.2)
    S = r.randint(2, 8)
    bn = r.choice([16, 32, 64, 64, 128])
    bk = r.choice([16, 32, 64])

    def size(S, bn, bk):
        return S * (bm + bn) * bk * 2 + (bm * bn * 4 if p["epi"] else 0)
    while size(S, bn, bk) > SMEM and bk > 16:
        bk //= 2
    while size(S, bn, bk) > SMEM and bn > 16:
        bn //= 2
    while size(S, bn, bk) > SMEM and S > 2:
        S -= 1
    p["S"], p["bn"], p["bk"] = S, bn, bk
    p["threads"] = 128 * (1 + C + (1 if p["epi"] else 0))
    # The shapes: the grid, M and N (ragged), and the K of each run.
    if pers is None:
        p["M"] = r.randint(1, 2 * bm)
        p["N"] = r.randint(1, 2 * bn)
        p["grid"] = "%d,%d" % (cdiv(p["M"], bm), cdiv(p["N"], bn))
    elif pers == "panel":
        g = r.randint(1, 2)
        p["T"] = r.randint(1, 3)
        p["M"] = g * bm - r.choice([0, 0, 7])
        p["N"] = max(1, p["T"] * bn - r.choice([0, 0, 3]))
        p["grid"] = "%d" % g
    elif pers == "gs":
        p["M"] = r.randint(1, 4 * bm)
        p["N"] = r.choice([bn, r.randint(1, bn)])
        p["grid"] = "%d" % r.randint(1, 3)
    else:
        p["P"] = r.randint(1, 3)
        p["M"] = r.randint(1, 3 * bm)
        p["N"] = r.randint(1, 2 * bn)
        p["grid"] = "%d,%d" % (cdiv(p["M"], bm), cdiv(p["N"], bn))
    # K: zero, shorter than one tile, and ragged over several tiles (the ring wraps when > S).
    p["Ks"] = [0, r.randint(1, bk - 1), r.randint(2, S + 3) * bk - r.choice([0, 0, 1, bk // 2])]
    return p


def describe(p):
    d = "S=%d C=%d bm=%d bn=%d bk=%d %s rel=%s" % (
        p["S"], p["C"], p["bm"], p["bn"], p["bk"],
        {None: "flat/%s/%s" % (p["pform"], p["cform"]), "panel": "panel T=%d" % p.get("T", 0), "gs": "grid-stride",
         "walk": "walk P=%d" % p.get("P", 0)}[p["pers"]], p["rel"])
    for f in ("drain", "epi", "rbar", "split", "tx2", "txlate", "clamp"):
        if p[f]:
            d += " " + f
    d += " M=%d N=%d K=%s grid=%s" % (p["M"], p["N"], "/".join(map(str, p["Ks"])), p["grid"])
    return d


# ---------------------------------------------------------------------------------------------
# The kernel text. `mut` names a mutation (MUTANTS below); None builds the correct kernel.


def build(p, mut=None):
    S, C, rm, bm, bn, bk = p["S"], p["C"], p["rm"], p["bm"], p["bn"], p["bk"]
    pers, rel = p["pers"], p["rel"]
    inflight = rel != "plain"
    L = []

    def e(ind, s):
        L.append("  " * ind + s)

    acc_t = "!ave.tile<%dx%dxf32, reg>" % (rm, bn)
    args = ("%A: !ave.tensor<?x?xbf16, global, [?, 1]>, %B: !ave.tensor<?x?xbf16, global, [?, 1]>,\n"
            "             %C: !ave.tensor<?x?xf32, global, [?, 1]>, %K: index")
    if pers == "panel":
        args += ", %T: index"
    if pers == "gs":
        args += ", %M: index"
    attrs = 'threads = %d, target = "sm_90a"' % p["threads"]
    if pers == "walk":
        attrs += ", persistent = %d" % p["P"]
    e(0, "ave.kernel @g(%s) {%s} {" % (args, attrs))
    e(1, "ave.tag.func @A(%m: index, %k: index)")
    e(1, "ave.tag.func @B(%n: index, %k: index)")
    if p["epi"]:
        e(1, "ave.tag.func @Acc(%m: index, %n: index)")
    e(1, "%%sA = ave.smem.alloc : !ave.ring<%d x !ave.tile<%dx%dxbf16, smem>>" % (S, bm, bk))
    e(1, "%%sB = ave.smem.alloc : !ave.ring<%d x !ave.tile<%dx%dxbf16, smem>>" % (S, bn, bk))
    if p["epi"]:
        e(1, "%%sC = ave.smem.alloc : !ave.tile<%dx%dxf32, smem>" % (bm, bn))
    fc = (2 if p["tx2"] else 1) + (1 if mut == "full-count" else 0)
    if mut == "tx2-count1":
        fc = 1
    fulls = ["%fullA", "%fullB"] if p["split"] else ["%full"]
    for i, f in enumerate(fulls):
        e(1, "%s = ave.mbar.alloc count(%d) : !ave.mbar<%d>" % (f, fc if i == 0 else 1, S))
    ec = C + 1 if mut == "empty-count-over" else C - 1 if mut == "empty-count-under" else C
    e(1, "%%empty = ave.mbar.alloc count(%d) : !ave.mbar<%d>" % (ec, S))
    if p["epi"]:
        dc = C + 1 if mut == "done-count-over" else C - 1 if mut == "done-count-under" else C
        e(1, "%%done = ave.mbar.alloc count(%d) : !ave.mbar<1>" % dc)
    if pers == "walk":
        e(1, "%cta = ave.cta_id : index")
        e(1, "%nctas = ave.num_ctas : index")
        e(1, "%gx = ave.num_programs dim(0) : index")
        e(1, "%gy = ave.num_programs dim(1) : index")
        e(1, "%tiles = ave.mul %gx, %gy : index")
    else:
        e(1, "%pm = ave.program_id dim(0) : index")
        if pers is None:
            e(1, "%pn = ave.program_id dim(1) : index")
        if pers == "gs":
            e(1, "%np = ave.num_programs dim(0) : index")
            e(1, "%%nt = ave.cdiv %%M, %d : index" % bm)
    if p["clamp"] and mut != "drain-no-clamp":
        e(1, "%%nk0 = ave.cdiv %%K, %d : index" % bk)
        e(1, "%pos = ave.index %nk0 > 0 : i1")
        e(1, "%nk = ave.select %pos, %nk0, 0 : index")
    else:
        e(1, "%%nk = ave.cdiv %%K, %d : index" % bk)

    # Tile coordinates (of A's rows, B's rows) and their tags.
    if pers is None:
        mt, nt, mrow, ncol = "%pm", "%pn", "%%pm * %d" % bm, "%%pn * %d" % bn
    elif pers == "panel":
        mt, nt, mrow, ncol = "%pm", "%tl", "%%pm * %d" % bm, "%%tl * %d" % bn
    elif pers == "gs":
        mt, nt, mrow, ncol = "%tl", "0", "%%tl * %d" % bm, "0"
    else:
        mt, nt, mrow, ncol = "%pm", "%pn", "%%pm * %d" % bm, "%%pn * %d" % bn

    def tile_loop_open(ind):
        if pers == "panel":
            hdr = "%tl = 0 to %T step 1"
        elif pers == "gs":
            hdr = "%%tl = %%pm to %%nt step %s" % ("1" if mut == "tile-step" else "%np")
        else:
            hdr = "%%tl = %%cta to %%tiles step %s" % ("1" if mut == "tile-step" else "%nctas")
        e(ind, "%%e = ave.for %s iter_args(%%it0 = 0 : index) -> (index) {" % hdr)
        if pers == "walk":
            e(ind + 1, "%pm = ave.rem %tl, %gx : index")
            e(ind + 1, "%pn = ave.div %tl, %gx : index")

    # The ring position: %k (no tile loop) or the carried %it.
    pos = "%it" if pers else "%k"

    e(1, "ave.warp_specialize {")
    # ---- producer
    e(2, "ave.role @load warps(4) {")
    ind = 3
    if pers:
        tile_loop_open(ind)
        ind += 1
        start = "0" if mut == "reset-producer" else "%it0"
        e(ind, "%%it1 = ave.for %%k = 0 to %%nk step 1 iter_args(%%it = %s : index) -> (index) {" % start)
    elif p["pform"] == "next":
        e(ind, "%%phx = ave.for %%k = 0 to %%nk step 1 iter_args(%%ph = %d : i1) -> (i1) {" % (
            0 if mut == "prod-parity" else 1))
    else:
        e(ind, "ave.for %k = 0 to %nk step 1 {")
    ind += 1
    e(ind, "%%s = ave.index %s mod %d" % (pos, S))
    if p["pform"] != "next":
        e(ind, "%%ph = ave.index (%s floordiv %d%s) mod 2" % (pos, S, "" if mut == "prod-parity" else " + 1"))
    if mut != "no-empty-wait":
        e(ind, "ave.mbar.wait %%empty[%s] parity(%%ph)" % (
            "(%%s + 1) mod %d" % S if mut == "prod-wait-slot" else "%s"))
    abytes, bbytes = bm * bk * 2, bn * bk * 2
    extra = 128 if mut == "expect-bytes" else 0
    aslot = "%%sA[(%%s + 1) mod %d]" % S if mut == "copy-wrong-slot" else "%sA[%s]"
    btag = "%k + 1" if mut == "tag-off" else "%k"
    aarr = "(%%s + 1) mod %d" % S if mut == "copy-arrive-slot" else "%s"
    acopy = "ave.copy.async %%A[%s, %%k * %d] into(%s) arrive(%s[%s]) tag(@A(%s, %%k))" % (
        mrow, bk, aslot, fulls[0], aarr, mt)
    bcopy = "ave.copy.async %%B[%s, %%k * %d] into(%%sB[%%s]) arrive(%s[%%s]) tag(@B(%s, %s))" % (
        ncol, bk, fulls[-1], nt, btag)
    # (expect_tx, the copies it announces): before them, or after them with txlate (the copies'
    # bytes may land first; the phase still waits for the expect_tx's arrival).
    if p["split"]:
        ab, bb = (bbytes, abytes) if mut == "split-bytes-swap" else (abytes, bbytes)
        groups = [("ave.mbar.expect_tx %%fullA[%%s] bytes(%d)" % (ab + extra), [acopy]),
                  ("ave.mbar.expect_tx %%fullB[%%s] bytes(%d)" % bb, [bcopy])]
    elif p["tx2"]:
        groups = [("ave.mbar.expect_tx %%full[%%s] bytes(%d)" % (abytes + extra), [acopy]),
                  ("ave.mbar.expect_tx %%full[%%s] bytes(%d)" % bbytes, [bcopy])]
    else:
        groups = [("ave.mbar.expect_tx %%full[%%s] bytes(%d)" % (abytes + bbytes + extra),
                   [acopy, bcopy])]
    if mut == "expect-slot":
        groups[0] = (groups[0][0].replace("[%s]", "[(%%s + 1) mod %d]" % S), groups[0][1])
    for tx, copies in groups:
        late = p["txlate"]
        for l in ([] if late else [tx]) + copies + ([tx] if late else []):
            e(ind, l)
    if pers:
        e(ind, "%n = ave.index %it + 1")
        e(ind, "ave.yield %n : index")
    elif p["pform"] == "next":
        e(ind, "%%ph1 = ave.phase.next %%ph at(%%s, %d)" % S)
        e(ind, "ave.yield %ph1 : i1")
    ind -= 1
    e(ind, "}")
    if pers:
        e(ind, "ave.yield %it1 : index")
        ind -= 1
        e(ind, "}")
    if p["drain"]:
        slot = "%%nk mod %d" % S if mut == "drain-slot" else "(%%nk - 1) mod %d" % S
        e(ind, "%%sl = ave.index %s" % slot)
        e(ind, "%%pl = ave.index ((%%nk - 1) floordiv %d%s) mod 2 : i1" % (
            S, " + 1" if mut == "drain-parity" else ""))
        e(ind, "ave.mbar.wait %%empty[%%sl] parity(%s)" % ("%phx" if mut == "drain-carried" else "%pl"))
        if mut == "drain-twice":
            e(ind, "ave.mbar.wait %empty[%sl] parity(%pl)")
    e(2, "}")

    # ---- consumers
    e(2, "ave.role @mma warps(4) replicate(%d) {" % C)
    ind = 3
    e(ind, "%wg = ave.replica_id : index")
    e(ind, "%%z = ave.zeros : %s" % acc_t)
    if pers:
        tile_loop_open(ind)
        ind += 1
        start = "0" if mut == "reset-consumer" else "%it0"
        e(ind, "%%acc, %%it1 = ave.for %%k = 0 to %%nk step 1 iter_args(%%c = %%z, %%it = %s : index) -> (%s, index) {" % (start, acc_t))
    elif p["cform"] == "next":
        e(ind, "%%acc, %%phy = ave.for %%k = 0 to %%nk step 1 iter_args(%%c = %%z, %%ph = %d : i1) -> (%s, i1) {" % (
            1 if mut == "cons-parity" else 0, acc_t))
    else:
        e(ind, "%%acc = ave.for %%k = 0 to %%nk step 1 iter_args(%%c = %%z) -> (%s) {" % acc_t)
    ind += 1
    e(ind, "%%s = ave.index %s mod %d" % (pos, S))
    if p["cform"] != "next":
        e(ind, "%%ph = ave.index (%s floordiv %d%s) mod 2" % (
            pos, S + 1 if mut == "cons-period" else S, " + 1" if mut == "cons-parity" else ""))
    wslot = "(%%s + 1) mod %d" % S if mut == "wait-wrong-slot" else "%s"
    for f in fulls:
        if mut == "split-wait-one" and f == "%fullB":
            continue
        e(ind, "ave.mbar.wait %s[%s] parity(%%ph)" % (f, wslot))
    e(ind, "ave.tag.assert holds(%%sA[%%s], @A(%s, %%k))" % mt)
    e(ind, "ave.tag.assert holds(%%sB[%%s], @B(%s, %%k))" % nt)
    e(ind, "%%a = ave.slice %%sA[%%s] rows(%%wg * %d, %d) : !ave.tile<%dx%dxbf16, smem>" % (rm, rm, rm, bk))
    e(ind, "%%t = ave.mma.async %%a, %%sB[%%s], %%c transpose_b : %s" % acc_t)
    acount = 2 if mut == "arrive-count" else 1
    if not inflight:
        rslot = "(%%s + 1) mod %d" % S if mut == "release-wrong-slot" else "%s"
        release = "ave.mbar.arrive %%empty[%s] count(%d)" % (rslot, acount)
        if mut == "release-early":
            e(ind, release)
        e(ind, "%%d = ave.mma.wait %%t pending(0) : %s" % acc_t)
        if mut != "release-early":
            e(ind, release)
    else:
        prev_slot = "(%s %s 1) mod %d" % (pos, "+" if mut == "release-wrong-slot" else "-", S)
        prev_cond = "%k > 0" if mut == "guard-k" else "%s > 0" % pos

        def prev_release():
            if mut == "drop-guard":
                e(ind, "ave.mbar.arrive %%empty[%s] count(%d)" % (prev_slot, acount))
                return
            e(ind, "%%prev = ave.index %s : i1" % prev_cond)
            e(ind, "ave.if %prev {")
            e(ind + 1, "ave.mbar.arrive %%empty[%s] count(%d)" % (prev_slot, acount))
            e(ind, "}")

        def tail_release():
            if rel == "tail" and mut != "drop-last-release":
                e(ind, "ave.if %last {")
                e(ind + 1, "ave.mbar.arrive %empty[%s] count(1)")
                e(ind, "}")

        e(ind, "%last = ave.index %k == %nk - 1 : i1")
        early = mut == "release-early"
        if mut == "release-current-early":
            e(ind, "ave.mbar.arrive %empty[%s] count(1)")
        if early:
            prev_release()
            tail_release()
        e(ind, "%%d = ave.if %%last -> (%s) {" % acc_t)
        e(ind + 1, "%%d0 = ave.mma.wait %%t pending(%d) : %s" % (1 if mut == "last-pending1" else 0, acc_t))
        e(ind + 1, "ave.yield %%d0 : %s" % acc_t)
        e(ind, "} else {")
        e(ind + 1, "%%d1 = ave.mma.wait %%t pending(1) : %s" % acc_t)
        e(ind + 1, "ave.yield %%d1 : %s" % acc_t)
        e(ind, "}")
        if not early and mut != "release-current-early":
            prev_release()
            tail_release()
    if pers:
        e(ind, "%%n = ave.index %%it + %d" % (2 if mut == "consumer-step" else 1))
        e(ind, "ave.yield %%d, %%n : %s, index" % acc_t)
    elif p["cform"] == "next":
        e(ind, "%%ph1 = ave.phase.next %%ph at(%%s, %d)" % (S + 1 if mut == "cons-period" else S))
        e(ind, "ave.yield %%d, %%ph1 : %s, i1" % acc_t)
    else:
        e(ind, "ave.yield %%d : %s" % acc_t)
    ind -= 1
    e(ind, "}")

    def after_release(ind, last):
        if rel != "after" or mut in ("drop-last-release", "release-current-early"):
            return
        slot = "(%s - %d) mod %d" % (last, 2 if mut == "last-release-slot" else 1, S)
        if mut == "unguarded-last-release":
            e(ind, "ave.mbar.arrive %%empty[%s] count(1)" % slot)
            return
        e(ind, "%%ran = ave.index %s > %d : i1" % (last, 1 if mut == "last-guard-off" else 0))
        e(ind, "ave.if %ran {")
        e(ind + 1, "ave.mbar.arrive %%empty[%s] count(1)" % slot)
        e(ind, "}")

    def role_barrier(ind):
        if not p["rbar"]:
            return
        if mut == "rbar-some":
            e(ind, "%first = ave.index %wg == 0 : i1")
            e(ind, "ave.if %first {")
            e(ind + 1, "ave.barrier")
            e(ind, "}")
        else:
            e(ind, "ave.barrier")

    if not pers:
        after_release(ind, "%nk")
    role_barrier(ind)
    if p["epi"]:
        e(ind, "%%acct = ave.tag %%acc, @Acc(%%pm, %%pn) : %s" % acc_t)
        e(ind, "%%u = ave.slice %%sC rows(%s, %d) : !ave.tile<%dx%dxf32, smem>" % (
            "0" if mut == "epi-slice" else "%%wg * %d" % rm, rm, rm, bn))
        if mut == "epi-signal-early":
            e(ind, "ave.mbar.arrive %done[0] count(1)")
        e(ind, "ave.smem.store %acct into(%u)")
        if mut != "epi-signal-early":
            e(ind, "ave.mbar.arrive %done[0] count(1)")
    else:
        e(ind, "ave.store %%acc into(%%C[%s + %%wg * %d, %s])" % (mrow, rm, ncol))
    if pers:
        e(ind, "ave.yield %it1 : index")
        ind -= 1
        e(ind, "}")
        after_release(ind, "%e")
    e(2, "}")

    # ---- epilogue
    if p["epi"]:
        e(2, "ave.role @epilogue warps(4) {")
        if mut != "epi-no-wait":
            e(3, "ave.mbar.wait %%done[0] parity(%d)" % (1 if mut == "epi-parity" else 0))
        e(3, "ave.tag.assert holds(%sC, @Acc(%pm, %pn))")
        e(3, "%%v = ave.smem.load %%sC : !ave.tile<%dx%dxf32, reg>" % (bm, bn))
        e(3, "ave.store %%v into(%%C[%%pm * %d, %%pn * %d])" % (bm, bn))
        e(2, "}")
    e(1, "}")
    e(1, "ave.return")
    e(0, "}")
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------------------------------------
# Mutants: (name, applies(p)). Each changes the protocol; some are equivalent in some shapes
# (EQUIVALENT says why, for the ones expected to be accepted).

MUTANTS = [
    ("prod-parity", lambda p: True),
    ("cons-parity", lambda p: True),
    ("copy-wrong-slot", lambda p: True),
    ("wait-wrong-slot", lambda p: True),
    ("release-wrong-slot", lambda p: True),
    ("release-early", lambda p: True),
    ("no-empty-wait", lambda p: True),
    ("expect-bytes", lambda p: True),
    ("tag-off", lambda p: True),
    ("empty-count-over", lambda p: True),
    ("empty-count-under", lambda p: p["C"] > 1),
    ("arrive-count", lambda p: True),
    ("full-count", lambda p: True),
    ("prod-wait-slot", lambda p: True),
    ("expect-slot", lambda p: True),
    ("copy-arrive-slot", lambda p: True),
    ("last-guard-off", lambda p: p["rel"] == "after"),
    ("drain-twice", lambda p: p["drain"]),
    ("epi-slice", lambda p: p["epi"] and p["C"] > 1),
    ("tx2-count1", lambda p: p["tx2"]),
    ("cons-period", lambda p: True),
    ("tile-step", lambda p: p["pers"] in ("gs", "walk")),
    ("release-current-early", lambda p: p["rel"] != "plain"),
    ("drop-guard", lambda p: p["rel"] != "plain"),
    ("drop-last-release", lambda p: p["rel"] != "plain"),
    ("unguarded-last-release", lambda p: p["rel"] == "after"),
    ("last-release-slot", lambda p: p["rel"] == "after"),
    ("last-pending1", lambda p: p["rel"] != "plain"),
    ("guard-k", lambda p: p["pers"] and p["rel"] != "plain"),
    ("reset-producer", lambda p: p["pers"]),
    ("reset-consumer", lambda p: p["pers"]),
    ("consumer-step", lambda p: p["pers"]),
    ("drain-parity", lambda p: p["drain"]),
    ("drain-slot", lambda p: p["drain"]),
    ("drain-carried", lambda p: p["drain"] and p["pform"] == "next"),
    ("drain-no-clamp", lambda p: p["drain"]),
    ("rbar-some", lambda p: p["rbar"]),
    ("epi-parity", lambda p: p["epi"]),
    ("done-count-over", lambda p: p["epi"]),
    ("done-count-under", lambda p: p["epi"] and p["C"] > 1),
    ("epi-signal-early", lambda p: p["epi"]),
    ("epi-no-wait", lambda p: p["epi"]),
    ("split-wait-one", lambda p: p["split"]),
    ("split-bytes-swap", lambda p: p["split"] and p["bm"] != p["bn"]),
]


def equivalent(name, p):
    """Why an accepted mutant the interpreter agrees with should be equivalent, or None."""
    if name == "last-pending1":
        return ("ave.mma.wait finishes its own token whatever pending(n) is (SPEC 5.5) and no "
                "MMA follows it: pending(1) on the last k is pending(0)")
    if name == "release-early" and p["rel"] == "after":
        return ("slot k-1's MMA was retired by its own wait in iteration k-1, so releasing it "
                "before iteration k's wait frees nothing still read")
    if name == "release-early" and p["rel"] == "tail":
        return ("slot k-1's MMA was retired in iteration k-1; the last use, released before its "
                "wait, is never written again (no tile loop; a drain only waits)")
    if name == "drop-last-release" and not p["drain"]:
        return ("no wait needs the release of the last use (no drain; the producer's last wait "
                "is for use nk-1-S)")
    if name == "rbar-some" and p["C"] == 1:
        return "one replica: %wg == 0 always holds"
    if name == "release-wrong-slot" and p["rel"] != "plain" and p["S"] == 2:
        return "with 2 stages (k + 1) mod 2 = (k - 1) mod 2"
    if name == "drain-twice":
        return ("the second drain wait, same barrier and parity, returns at once once the first "
                "has")
    if name == "last-guard-off" and not p["drain"]:
        return ("the last use's release is skipped only when nk = 1, and no wait needs it (no "
                "drain)")
    return None


# ---------------------------------------------------------------------------------------------
# Running


def shape_args(p, K, seed):
    args = ["--grid=" + p["grid"],
            "--arg", "A=rand:%dx%d:bf16:%d" % (p["M"], K, seed),
            "--arg", "B=rand:%dx%d:bf16:%d" % (p["N"], K, seed + 100),
            "--arg", "C=zeros:%dx%d:f32" % (p["M"], p["N"]),
            "--arg", "K=%d" % K]
    if p["pers"] == "panel":
        args += ["--arg", "T=%d" % p["T"]]
    if p["pers"] == "gs":
        args += ["--arg", "M=%d" % p["M"]]
    return args


def interp(work, tag, path, p, schedules, seed):
    """Runs each K of p; returns None if every run agrees with the C GEMM, else the failure."""
    for j, K in enumerate(p["Ks"]):
        o = {n: os.path.join(work, "%s.K%d.%s.npy" % (tag, j, n)) for n in "ABC"}
        rc, out = run(["ave", "run", path] + shape_args(p, K, seed + j) +
                      ["--schedules=%d" % schedules, "--out", "A=" + o["A"], "--out", "B=" + o["B"],
                       "--out", "C=" + o["C"]])
        if rc != 0:
            return "K=%d: the interpreter failed: %s" % (K, out.strip().replace("\n", "\n    "))
        rc, out = run(["ave-interp-ref", "gemm", o["A"], o["B"], o["C"]])
        if rc != 0 or "PASS" not in out:
            return "K=%d: differs from the C GEMM: %s" % (K, out.strip().replace("\n", "\n    "))
    return None


def changed_lines(src, msrc):
    """The lines of the mutant (1-based) that differ from the kernel's: replaced or inserted
    lines, and for a deletion the lines on either side of it."""
    out = set()
    sm = difflib.SequenceMatcher(None, src.splitlines(), msrc.splitlines(), autojunk=False)
    for op, _, _, j1, j2 in sm.get_opcodes():
        if op in ("replace", "insert"):
            out.update(range(j1 + 1, j2 + 1))
        elif op == "delete":
            out.update((j1, j1 + 1))
    return out


def names_line(out, lines):
    """Does the report name one of `lines`: an error's or a note's location, or "line N"?"""
    return any(re.search(r"\.ave:%d:\d+: (error|note)|\(line %d[,)]|line %d\b" % (n, n, n), out)
               for n in lines)


def first_error(out):
    lines = [l for l in out.splitlines() if "error:" in l or "warning:" in l]
    return lines[0].strip() if lines else out.strip().splitlines()[-1] if out.strip() else ""


def main():
    global KNOWN, INTERP_ALL
    KNOWN = "--known" in sys.argv[4:]
    INTERP_ALL = "--interp-all" in sys.argv[4:]
    work, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    r = random.Random(seed)
    fails = 0
    n = {"counterexample": 0, "cannot check": 0, "accepted": 0, "equivalent": 0, "missed": 0,
         "other": 0, "rejected-agrees": 0, "named": 0}
    for i in range(count):
        p = draw(r)
        desc = describe(p)
        src = build(p)
        path = os.path.join(work, "s%d.ave" % i)
        with open(path, "w") as f:
            f.write(src)
        rc, out = run(["ave", "check", "--stats", path])
        bad = interp(work, "s%d" % i, path, p, 4, 1 + 10 * i)
        if rc != 0 or "error" in out or "warning" in out or " 0 unknown" not in out:
            print("FAIL shape %d (%s): FALSE REJECTION of the correct kernel %s (%s)\n%s" % (
                i, desc, path, "and the interpreter fails too: " + bad if bad else
                "the interpreter agrees with the C GEMM", out.rstrip()))
            fails += 1
            sys.stdout.flush()
            continue
        if bad:
            print("FAIL shape %d (%s): the correct kernel %s: %s" % (i, desc, path, bad))
            fails += 1
            sys.stdout.flush()
            continue
        print("ok shape %d: %s" % (i, desc))
        # One to three mutants, drawn among those that apply.
        names = [m for m, ok in MUTANTS if ok(p)]
        for name in r.sample(names, min(len(names), r.choice([1, 2, 2, 3]))):
            msrc = build(p, name)
            if msrc == src:
                print("FAIL mutant %s of shape %d: the mutation changed nothing" % (name, i))
                fails += 1
                continue
            mpath = os.path.join(work, "s%d.%s.ave" % (i, name))
            with open(mpath, "w") as f:
                f.write(msrc)
            rc, out = run(["ave", "check", mpath])
            if rc != 0:
                if "counterexample:" in out:
                    kind = "counterexample"
                elif any(w in out for w in ("cannot check", "cannot prove", "cannot tell")):
                    kind = "cannot check"
                else:
                    kind = "other"
                n[kind] += 1
                note = ""
                if names_line(out, changed_lines(src, msrc)):
                    n["named"] += 1
                    note = " [cause's line named]"
                why = equivalent(name, p)
                if INTERP_ALL or why:
                    bad = interp(work, "s%d.%s" % (i, name), mpath, p, 24, 7 + 10 * i)
                    note = " [interpreter: %s]" % ("fails" if bad else "agrees")
                    if not bad:
                        n["rejected-agrees"] += 1
                    if why:
                        note += " [equivalent? %s]" % why
                print("rejected %s of shape %d: %s: %s%s" % (
                    name, i, "rejected otherwise" if kind == "other" else kind, first_error(out),
                    note))
                continue
            # Accepted: is it wrong? Many schedules, every K.
            n["accepted"] += 1
            warn = " (with a warning: %s)" % first_error(out) if "warning" in out else ""
            bad = interp(work, "s%d.%s" % (i, name), mpath, p, 24, 7 + 10 * i)
            if bad:
                n["missed"] += 1
                print("MISSED %s of shape %d (%s): accepted%s, but %s\n    kernel: %s" % (
                    name, i, desc, warn, bad, mpath))
            else:
                n["equivalent"] += 1
                why = equivalent(name, p)
                print("accepted, equivalent? %s of shape %d%s: the interpreter agrees (24 "
                      "schedules, K=%s): %s" % (name, i, warn, "/".join(map(str, p["Ks"])),
                                                why or "NO KNOWN REASON, look at " + mpath))
            sys.stdout.flush()
        sys.stdout.flush()
    print("%d kernels, %d failures; mutants: %d counterexample, %d cannot check, %d accepted "
          "(%d equivalent), %d missed; %d rejected otherwise; %d rejections name the "
          "mutated line" % (
              count, fails, n["counterexample"], n["cannot check"], n["accepted"],
              n["equivalent"], n["missed"], n["other"], n["named"]))
    if INTERP_ALL:
        print("rejected mutants the interpreter agrees with (24 schedules): %d" % n["rejected-agrees"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
