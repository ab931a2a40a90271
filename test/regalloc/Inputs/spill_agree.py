"""Keeps register tiles in shared memory (the regalloc pass's spills) and checks that the program
computes what it computed: the interpreter gives identical results (element for element, over
several schedules, on ragged shapes) before and after `regalloc`, and check-invariants proves the
rewritten kernel. Prints one line per case for FileCheck.

  spill_agree.py fixed WORKDIR KERNELS.ave     each kernel of the file (its `// run:` line says
                                               how to run it), spilled on its own target
  spill_agree.py fuzz WORKDIR SEED COUNT       generated kernels: tiles defined and read at
                                               random points, loops carrying a tile, branches
                                               yielding one, a budget the tiles do not fit
"""
import os
import random
import re
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def agree(work, name, src, target, runs, schedules=4, compile_to=None, remat=True):
    """runs: list of `ave run` argument lists (without file and --out). Returns a line. With
    remat=False (regalloc{remat=0}) a loaded tile waits in shared memory rather than being
    loaded again."""
    orig = os.path.join(work, name + ".ave")
    spilled = os.path.join(work, name + (".s.ave" if remat else ".s0.ave"))
    with open(orig, "w") as f:
        f.write(src)
    rc, out = run(["ave-opt", orig, "--target=" + target,
                   "--passes=regalloc" + ("" if remat else "{remat=0}"), "-o", spilled])
    if rc:
        return "FAIL %s: regalloc: %s" % (name, out.strip())
    text = open(spilled).read()
    nspill = text.count("{spill = true}")
    nremat = out.count("is loaded again from global memory")
    if not nspill + nremat:
        return "FAIL %s: nothing kept in shared memory or loaded again: %s" % (name, out.strip())
    if not remat and nremat:
        return "FAIL %s: loaded again with remat=0" % name
    if out.count("waits in shared memory") != nspill:
        return "FAIL %s: %d spills, %d remarks" % (name, nspill, out.count("waits in shared"))
    if len(re.findall(r"= ave\.load [^\n]*", text)) < len(re.findall(r"= ave\.load ", src)):
        return "FAIL %s: a load was lost" % name
    rc, out = run(["ave-opt", spilled, "--passes=check-invariants", "-o", os.devnull])
    if rc:
        return "FAIL %s: check-invariants: %s" % (name, out.strip())
    for i, args in enumerate(runs):
        outs = []
        for tag, f, sch in (("orig", orig, 1), ("spill", spilled, schedules)):
            o = os.path.join(work, "%s.%d.%s.npy" % (name, i, tag))
            outv = [a for a in args if a.startswith("--out=")][0][len("--out="):]
            rest = [a for a in args if not a.startswith("--out=")]
            rc, out = run(["ave", "run", f] + rest + ["--out", "%s=%s" % (outv, o),
                                                      "--schedules=%d" % sch])
            if rc:
                return "FAIL %s (%s, run %d): %s" % (name, tag, i, out.strip())
            outs.append(o)
        rc, out = run(["ave-interp-ref", "same", outs[0], outs[1]])
        if rc or "max abs err 0," not in out or "PASS" not in out:
            return "FAIL %s (run %d): outputs differ: %s" % (name, i, out.strip())
    if compile_to:
        # Through the lowering and the target's code generation (whether ptxas then needs more
        # registers than the plan left is another matter: the budgets' reserve).
        rc, out = run(["ave", "compile", orig, "--target=" + compile_to, "-v", "-o", os.devnull,
                       "--emit=" + ("asm" if compile_to.startswith("gfx") else "ptx")])
        if rc:
            return "FAIL %s: compile for %s: %s" % (name, compile_to, out.strip())
        if "waits in shared memory" not in out and "loaded again" not in out:
            # ave-opt sizes tiles by their blocked layouts, the compile by the lowering's: the
            # kernel may fit there as written.
            return "ok %s (%d spilled, %d loaded again; none with the lowering's tile sizes)" % (
                name, nspill, nremat)
    return "ok %s (%d spilled%s)" % (name, nspill,
                                    ", %d loaded again" % nremat if nremat else "")


def fixed(work, path):
    src = open(path).read()
    # Kernels are separated by a line `// ---`; each has `// run: NAME TARGET ARGS...` lines.
    for part in src.split("\n// ---\n"):
        m = re.search(r"ave\.kernel @(\w+)", part)
        if not m:
            continue
        name = m.group(1)
        target = re.search(r'target = "(\w+)"', part).group(1)
        runs = [l.split()[2:] for l in part.splitlines() if l.startswith("// run:")]
        runs = [["--kernel=@" + name] + r for r in runs]
        print(agree(work, name, part, target, runs, remat=False))
        print(agree(work, name, part, target, runs))


# ---- generated kernels ----

TILE = "!ave.tile<{r}x{c}xf32, reg>"


class Gen:
    def __init__(self, rng, r, c, row="%pm"):
        self.rng, self.r, self.c, self.row = rng, r, c, row
        self.n = 0
        self.loops = 0
        self.ty = TILE.format(r=r, c=c)

    def fresh(self, p="t"):
        self.n += 1
        return "%%%s%d" % (p, self.n)

    def load(self, ind, k=None):
        v = self.fresh()
        row = "%s * %d + %d" % (self.row, self.r, self.rng.randrange(0, 40))
        col = ("%s * 16 + %d" % (k, self.rng.randrange(0, 8))) if k else str(self.rng.randrange(0, 24))
        return v, "%s%s = ave.load %%X[%s, %s] : %s" % (ind, v, row, col, self.ty)

    def binop(self, ind, a, b):
        v = self.fresh()
        op = self.rng.choice(["add", "mul", "max", "sub"])
        return v, "%s%s = ave.%s %s, %s : %s" % (ind, v, op, a, b, self.ty)

    def sum_all(self, body, tiles, ind):
        """Every tile is read at the end, in a random order: long lifetimes, many live at once.
        Returns the sum."""
        self.rng.shuffle(tiles)
        acc = tiles[0]
        for t in tiles[1:]:
            v = self.fresh("s")
            body.append("%s%s = ave.add %s, %s : %s" % (ind, v, acc, t, self.ty))
            acc = v
        return acc

    def block(self, ind, live, depth, nstmt, k=None):
        """Statements over `live` (tiles readable here); returns (lines, tiles defined here)."""
        lines, mine = [], []
        for _ in range(nstmt):
            pick = self.rng.random()
            avail = live + mine
            if pick < 0.35 or len(avail) < 2:
                v, l = self.load(ind, k)
                lines.append(l)
            elif pick < 0.75 or depth >= 2:
                a, b = self.rng.sample(avail, 2)
                v, l = self.binop(ind, a, b)
                lines.append(l)
            elif pick < 0.88:
                self.loops += 1
                kv = "%%k%d" % self.loops
                c = "%%c%d" % self.loops
                init = self.rng.choice(avail)
                v = self.fresh()
                body, bm = self.block(ind + "  ", avail + [c], depth + 1,
                                      self.rng.randrange(2, 4), kv)
                y, l = self.binop(ind + "  ", c, (bm or [c])[-1])
                body.append(l)
                lines.append("%s%s = ave.for %s = 0 to %%n step 1 iter_args(%s = %s) -> (%s) {"
                             % (ind, v, kv, c, init, self.ty))
                lines += body
                lines.append("%s  ave.yield %s : %s" % (ind, y, self.ty))
                lines.append("%s}" % ind)
            else:
                v = self.fresh()
                arms = []
                for _ in range(2):
                    body, bm = self.block(ind + "  ", avail, depth + 1, self.rng.randrange(1, 3), k)
                    arms.append((body, (bm or avail)[-1]))
                lines.append("%s%s = ave.if %%p -> (%s) {" % (ind, v, self.ty))
                lines += arms[0][0]
                lines.append("%s  ave.yield %s : %s" % (ind, arms[0][1], self.ty))
                lines.append("%s} else {" % ind)
                lines += arms[1][0]
                lines.append("%s  ave.yield %s : %s" % (ind, arms[1][1], self.ty))
                lines.append("%s}" % ind)
            mine.append(v)
        return lines, mine


def generate(rng, idx):
    if rng.random() < 0.3:
        return generate_roles(rng, idx)
    r, c, threads = rng.choice([(64, 64, 256), (128, 64, 512), (128, 128, 1024), (64, 128, 512)])
    target = rng.choice(["sm_80", "sm_80", "sm_90a", "gfx942"])
    g = Gen(rng, r, c)
    body, tiles = g.block("  ", [], 0, rng.randrange(6, 12))
    acc = g.sum_all(body, tiles, "  ")
    name = "f%d" % idx
    src = ("ave.kernel @%s(%%X: !ave.tensor<?x?xf32, global, [?, 1]>, "
           "%%C: !ave.tensor<?x?xf32, global, [?, 1]>, %%n: index) "
           "{threads = %d, target = \"%s\"} {\n" % (name, threads, target))
    src += "  %pm = ave.program_id dim(0) : index\n"
    src += "  %p = ave.cmp lt %pm, 1 : i1\n"
    src += "\n".join(body) + "\n"
    src += "  ave.store %s into(%%C[%%pm * %d, 0])\n  ave.return\n}\n" % (acc, r)
    return name, src, target, r, c, 2


def generate_roles(rng, idx):
    """sm_90a: a producer-like role and two replicas of a consumer with a stated budget, each
    replica working on its own rows (the spill buffer is then a ring over the replicas)."""
    r, c = rng.choice([(64, 64), (64, 128)])
    budget = rng.choice([96, 120, 152, 184, 232])
    g = Gen(rng, r, c, row="%wg")
    body, tiles = g.block("      ", [], 0, rng.randrange(6, 12))
    acc = g.sum_all(body, tiles, "      ")
    name = "f%d" % idx
    src = ("ave.kernel @%s(%%X: !ave.tensor<?x?xf32, global, [?, 1]>, "
           "%%C: !ave.tensor<?x?xf32, global, [?, 1]>, %%n: index) "
           "{threads = 384, target = \"sm_90a\"} {\n" % name)
    src += "  ave.warp_specialize {\n"
    src += "    ave.role @load warps(4) regs(40) {\n      %i = ave.const 0 : index\n    }\n"
    src += "    ave.role @mma warps(4) regs(%d) replicate(2) {\n" % budget
    # The replica id first or not: the pass names a slot by it where it is defined.
    if rng.random() < 0.5:
        src += "      %j = ave.const 1 : index\n"
    src += "      %wg = ave.replica_id : index\n      %p = ave.cmp lt %wg, 1 : i1\n"
    src += "\n".join(body) + "\n"
    src += "      ave.store %s into(%%C[%%wg * %d, 0])\n    }\n  }\n  ave.return\n}\n" % (acc, r)
    return name, src, "sm_90a", r, c, 1


def fuzz(work, seed, count):
    rng = random.Random(seed)
    done = tries = 0
    while done < count and tries < count * 20:
        tries += 1
        name, src, target, r, c, grid = generate(rng, tries)
        path = os.path.join(work, name + ".probe.ave")
        with open(path, "w") as f:
            f.write(src)
        # Only kernels the tiles do not fit: regalloc must keep some in shared memory.
        rc, out = run(["ave-opt", path, "--target=" + target, "--passes=regalloc{spill=0}",
                       "-o", os.devnull])
        if rc == 0 or "needs" not in out:
            continue
        rc2, out2 = run(["ave-opt", path, "--target=" + target, "--passes=regalloc",
                         "-o", os.devnull])
        if rc2:
            # No tile could wait, or not enough: the error must say why.
            if not re.search(r"note: (no tile live there|with \d+ of them|keeping tiles)", out2):
                print("FAIL %s: error without the reason: %s" % (name, out2.strip()))
            continue
        m, n = rng.randrange(r // 2, 2 * r + 7), rng.randrange(c // 2, c + 40)
        runs = [["--kernel=@" + name, "--grid=%d" % grid, "--arg", "X=rand:%dx%d:f32:%d" % (m, n, seed + done),
                 "--arg", "C=zeros:%dx%d:f32" % (2 * r, c), "--arg", "n=%d" % nn,
                 "--out=C"] for nn in (0, 2)]
        print(agree(work, name, src, target, runs, schedules=3,
                    compile_to=target if done % 5 == 0 else None))
        done += 1
    print("fuzz: %d kernels spilled and agreed out of %d generated" % (done, tries))


def main():
    mode, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    if mode == "fixed":
        fixed(work, sys.argv[3])
    else:
        fuzz(work, int(sys.argv[3]), int(sys.argv[4]))


if __name__ == "__main__":
    main()
