#!/usr/bin/env python3
"""mutate.py — mutation test of the invariant checker.

Applies every single-token mutation of an index expression, a parity or a synchronization constant
to a kernel (by default examples/gemm_ws.ave), runs `ave check` on each mutant and reports which
ones the checker rejects. Where the `ave` binary has a `run` command (the reference interpreter),
each mutant is also run under --schedules and compared with the original: the figure of merit is
how many mutants that break the interpreter's result the checker also rejects.

Usage:
  bench/check/mutate.py [--ave PATH] [--kernel FILE] [--run-args ARGS] [--no-run] [-v] [--json OUT]

  --ave PATH       the ave driver (default: build/tools/ave next to this script's repository)
  --kernel FILE    the kernel to mutate (default: examples/gemm_ws.ave)
  --run-args ARGS  arguments after `ave run MUTANT` (default: see DEFAULT_RUN_ARGS); the run
                   breaks when its exit status or its standard output differs from the
                   original's, or when it exceeds --run-timeout seconds (a hang)
  --no-run         only the checker side, even when `ave run` exists
  -v               one line per mutant
  --json OUT       write every mutant and its verdicts to OUT

Mutation classes:
  sync  slot and barrier indices, parities and their initial values, phase.next (ring size, or
        replaced by xor), expect_tx bytes, arrival counts, tag arguments, mma.wait pending
  data  global-memory coordinates, slice offsets, loop bounds (not synchronization: the checker
        catches them where the kernel ties data to its address, as examples/gemm_ws.ave does:
        copies and the store tagged with a region, the consumer's slice under a `holds`)
A mutant that no longer parses or verifies is counted as invalid, not as caught.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_RUN_ARGS = ("--kernel=@gemm_ws --grid=2,1 --device=host --schedules=16 "
                    "--arg A=rand:256x320:bf16:1 --arg B=rand:256x320:bf16:2 "
                    "--arg C=zeros:256x256:f32 --arg K=320 --out C={out}")


class Mutant:
    def __init__(self, cls, line, what, text):
        self.cls, self.line, self.what, self.text = cls, line, what, text
        self.check = None  # 'rejected', 'accepted', 'invalid'
        self.cex = False
        self.names_line = False
        self.span = 0
        self.run = None  # 'broken', 'same', None
        self.first_error = ""


def replace_at(line, start, end, new):
    return line[:start] + new + line[end:]


def int_mutations(line, cls, pattern, group=1):
    """Each integer matched by `pattern` (in `group`) changed by -1 and +1."""
    out = []
    for m in re.finditer(pattern, line):
        s, e = m.span(group)
        v = int(line[s:e])
        for d in (-1, 1):
            if v + d < 0:
                continue
            out.append((cls, f"{line[s:e]} -> {v + d} in '{m.group(0).strip()}'",
                        replace_at(line, s, e, str(v + d))))
    return out


def mutations_of_line(line):
    """(class, description, new line) for every single-token mutation of one line."""
    out = []
    code = line.split("//")[0]
    if not code.strip() or "ave.tag.func" in code:
        return out
    # Initial parities of iter_args: flip the literal.
    for m in re.finditer(r"(%\w+) = ([01]) : i1", code):
        s, e = m.span(2)
        out.append(("sync", f"initial {m.group(1)} {m.group(2)} -> {1 - int(m.group(2))}",
                    replace_at(line, s, e, str(1 - int(m.group(2))))))
    # ave.index expressions: constants +-1, mod <-> floordiv, and the ring size swapped.
    m = re.search(r"= ave\.index (.*)$", code)
    if m:
        base = m.start(1)
        expr = m.group(1)
        for mm in re.finditer(r"\b(\d+)\b", expr):
            v = int(mm.group(1))
            s, e = base + mm.start(1), base + mm.end(1)
            for nv in sorted({v - 1, v + 1, v * 2, max(v // 2, 1)} - {v}):
                if nv >= 0:
                    out.append(("sync", f"index constant {v} -> {nv}", replace_at(line, s, e, str(nv))))
        for mm in re.finditer(r"\b(mod|floordiv)\b", expr):
            s, e = base + mm.start(1), base + mm.end(1)
            other = "floordiv" if mm.group(1) == "mod" else "mod"
            out.append(("sync", f"{mm.group(1)} -> {other}", replace_at(line, s, e, other)))
        for mm in re.finditer(r"%k\b", expr):
            s, e = base + mm.start(), base + mm.end()
            out.append(("sync", "index %k -> (%k + 1)", replace_at(line, s, e, "(%k + 1)")))
    # phase.next: ring size +-1, or replaced by an xor with 1.
    m = re.search(r"(%\w+) = ave\.phase\.next (%\w+) at\((%\w+), (\d+)\)", code)
    if m:
        out += int_mutations(line, "sync", r"at\(%\w+, (\d+)\)")
        ind = re.match(r"\s*", line).group(0)
        out.append(("sync", "phase.next -> xor 1",
                    f"{ind}%one_m = ave.const 1 : i1\n{ind}{m.group(1)} = ave.xor {m.group(2)}, %one_m : i1"))
    # Slot and barrier indices written inline: shift by one.
    for mm in re.finditer(r"(%(?:sA|sB|full|empty))\[(%s)\]", code):
        s, e = mm.span(2)
        out.append(("sync", f"{mm.group(1)}[%s] -> {mm.group(1)}[(%s + 1) mod 4]",
                    replace_at(line, s, e, "(%s + 1) mod 4")))
    # Synchronization constants.
    out += int_mutations(line, "sync", r"bytes\((\d+)\)")
    out += int_mutations(line, "sync", r"count\((\d+)\)")
    out += int_mutations(line, "sync", r"pending\((\d+)\)")
    # Tag arguments.
    for mm in re.finditer(r"@[AB]\(([^)]*)\)", code):
        for am in re.finditer(r"%\w+", mm.group(1)):
            s, e = mm.start(1) + am.start(), mm.start(1) + am.end()
            for d in ("+ 1", "- 1"):
                out.append(("sync", f"tag argument {am.group(0)} -> {am.group(0)} {d}",
                            replace_at(line, s, e, f"{am.group(0)} {d}")))
    # Global coordinates, slice offsets, loop bounds and the trip count: data, not sync.
    for mm in re.finditer(r"%[ABC]\[([^\]]*)\]", code):
        for cm in re.finditer(r"\b(\d+)\b", mm.group(1)):
            s, e = mm.start(1) + cm.start(1), mm.start(1) + cm.end(1)
            v = int(cm.group(1))
            for nv in (v - 1, v + 1):
                if nv >= 0:
                    out.append(("data", f"coordinate constant {v} -> {nv}", replace_at(line, s, e, str(nv))))
    out += int_mutations(line, "data", r"rows\(%wg \* (\d+), \d+\)")
    out += int_mutations(line, "data", r"ave\.for %k = (\d+) to")
    out += int_mutations(line, "data", r"step (\d+)")
    out += int_mutations(line, "data", r"ave\.cdiv %K, (\d+)")
    return out


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def run_result(ave, path, run_args, timeout, out):
    """Runs the kernel on the interpreter; the result is the exit status and the output tensor."""
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = run([ave, "run", path] + [x.replace("{out}", out) for x in run_args], timeout)
    data = open(out, "rb").read() if rc == 0 and os.path.exists(out) else b""
    return rc, data, err


def has_run_command(ave):
    rc, out, err = run([ave, "run", "--help"], 30)
    return rc == 0 and "usage" in (out + err).lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ave", default=os.path.join(ROOT, "build", "tools", "ave"))
    ap.add_argument("--kernel", default=os.path.join(ROOT, "examples", "gemm_ws.ave"))
    ap.add_argument("--run-args", default=DEFAULT_RUN_ARGS)
    ap.add_argument("--run-timeout", type=float, default=120)
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()

    src = open(a.kernel).read().split("\n")
    mutants = []
    for i, line in enumerate(src):
        for cls, what, new in mutations_of_line(line):
            text = "\n".join(src[:i] + [new] + src[i + 1:])
            mutants.append(Mutant(cls, i + 1, what, text))
            mutants[-1].span = new.count("\n")  # lines the mutation adds after its own

    rc0, _, err0 = run([a.ave, "check", a.kernel], 120)
    if rc0 != 0:
        sys.exit(f"mutate: the original kernel does not check clean:\n{err0}")
    interp = not a.no_run and has_run_command(a.ave)
    run_args = a.run_args.split()
    with tempfile.TemporaryDirectory() as tmp:
      outfile = os.path.join(tmp, "out.npy")
      if interp:
          orig_run = run_result(a.ave, a.kernel, run_args, a.run_timeout, outfile)
          if orig_run[0] != 0:
              sys.exit(f"mutate: `ave run` fails on the original kernel:\n{orig_run[2]}")
      if True:
        path = os.path.join(tmp, "mutant.ave")
        for n, m in enumerate(mutants):
            open(path, "w").write(m.text)
            rc, out, err = run([a.ave, "check", path], 120)
            if rc == 0:
                m.check = "accepted"
            elif "check-invariants" in err or "cannot check" in err or re.search(
                    r"error: (this |two (CTAs|replicas) |'holds'|'eq'|'ready'|phase \d|slot index|barrier index)", err):
                m.check = "rejected"
                m.first_error = next((l for l in err.splitlines() if ": error: " in l), "")
            else:
                m.check = "invalid"
                m.first_error = next((l for l in err.splitlines() if ": error: " in l), "")
            if m.check == "rejected":
                # How the rejection reads: a counterexample, and the mutated line named (as
                # the error's or a note's location, or "line N" in the text).
                m.cex = "counterexample:" in err
                m.names_line = any(re.search(r"\.ave:%d:\d+: (error|note)|\(line %d[,)]|line %d\b"
                                             % (ln, ln, ln), err)
                                   for ln in range(m.line, m.line + m.span + 1))
                # Parse/verify errors come first: a mutant rejected by the verifier is invalid.
                rc2, _, err2 = run([os.path.join(os.path.dirname(a.ave), "ave-opt"), path], 60)
                if rc2 != 0:
                    m.check = "invalid"
            if interp and m.check != "invalid":
                r = run_result(a.ave, path, run_args, a.run_timeout, outfile)
                m.run = "same" if (r[0], r[1]) == (orig_run[0], orig_run[1]) else "broken"
            if a.v:
                print(f"{n + 1:3d} {m.cls:4s} line {m.line:3d} {m.what:55s} check={m.check:8s}"
                      + (f" run={m.run}" if m.run else "") + (f"  [{m.first_error.split(': error: ')[-1][:70]}]"
                                                              if m.first_error and a.v else ""))

    def count(pred):
        return sum(1 for m in mutants if pred(m))

    print(f"kernel: {os.path.relpath(a.kernel)}; {len(mutants)} mutants")
    for cls in ("sync", "data"):
        valid = [m for m in mutants if m.cls == cls and m.check != "invalid"]
        rej = [m for m in valid if m.check == "rejected"]
        inval = count(lambda m: m.cls == cls and m.check == "invalid")
        print(f"  {cls}: {len(valid)} valid ({inval} invalid), rejected by the checker: {len(rej)}, "
              f"accepted: {len(valid) - len(rej)}")
        print(f"        of the rejected: {sum(1 for m in rej if m.cex)} with a counterexample, "
              f"{sum(1 for m in rej if m.names_line)} naming the mutated line")
        if interp:
            broken = [m for m in valid if m.run == "broken"]
            both = [m for m in broken if m.check == "rejected"]
            print(f"        break the interpreter's result: {len(broken)}; of those rejected by the "
                  f"checker: {len(both)}")
    if not interp:
        print("  (no `ave run` command in this driver: interpreter side not measured)")
    acc = [m for m in mutants if m.cls == "sync" and m.check == "accepted"]
    if acc:
        print("accepted sync mutants:")
        for m in acc:
            print(f"  line {m.line}: {m.what}")
    if a.json:
        json.dump([vars(m) | {"text": None} for m in mutants], open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
