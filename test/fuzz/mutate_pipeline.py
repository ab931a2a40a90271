#!/usr/bin/env python3
"""Mutation fuzzing of the whole pipeline: mutate the repository's valid kernels (numbers, types,
op names, lines), keep the mutants that parse and verify, and run every command on them
(`ave check`, `ave compile` for each GPU target at -O0 and -O2, `ave-opt` with the default
pipeline). Whatever a command prints, it must exit 0, 1 or 2 in time: a signal, a sanitizer
report, an LLVM verifier failure or an internal error is a crash. Reproducers go to --out.

usage: mutate_pipeline.py BIN_DIR SRC_DIR [--mutants N] [--seed S] [--timeout T] [--out DIR]
Prints "N passed, N failed" (mutants without and with a crash) on its last line."""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

TARGETS = ["sm_90a", "sm_80", "gfx942", "gfx90a"]
TYPES = ["bf16", "f16", "f32", "f8e4m3", "f8e5m2", "i32", "i8", "i1", "index"]
OPS = [("ave.add", "ave.mul"), ("ave.max", "ave.min"), ("ave.exp", "ave.sqrt"),
       ("pending(0)", "pending(1)"), ("ave.mma ", "ave.mma.async "), ("transpose_b", "")]
NUMBERS = [0, 1, 2, 3, 7, 8, 16, 31, 64, 127, 128, 255, 256, 1024, 65536, 2**31, 2**40, -1]
BAD = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:|internal error|LLVM ERROR|"
                 r"Assertion .* failed|does not verify|Stack dump|UNREACHABLE")


def mutate(text, rng):
    lines = text.split("\n")
    kind = rng.randrange(5)
    if kind == 0:  # a number
        spots = [m for m in re.finditer(r"(?<![\w%@#.])\d+(?![\w.])", text)]
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + str(rng.choice(NUMBERS)) + text[m.end():]
    if kind == 1:  # an element type
        spots = [m for m in re.finditer(r"\b(bf16|f16|f32|f8e4m3|f8e5m2|i32|i8)\b", text)]
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(TYPES) + text[m.end():]
    if kind == 2:  # an op
        a, b = rng.choice(OPS)
        if rng.random() < 0.5:
            a, b = b, a
        if a and a in text:
            i = rng.choice([m.start() for m in re.finditer(re.escape(a), text)])
            return text[:i] + b + text[i + len(a):]
    if kind == 3 and len(lines) > 4:  # delete a line inside a body
        i = rng.randrange(1, len(lines) - 1)
        return "\n".join(lines[:i] + lines[i + 1:])
    if len(lines) > 4:  # duplicate a line
        i = rng.randrange(1, len(lines) - 1)
        return "\n".join(lines[:i] + [lines[i]] + lines[i:])
    return text


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout after %ds" % timeout
    if p.returncode not in (0, 1, 2):
        return "exit status %d" % p.returncode
    m = BAD.search(p.stdout + p.stderr)
    if m:
        return "printed '%s'" % m.group(0)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("src")
    ap.add_argument("--mutants", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    seeds = []
    for d in ("examples", "test/ir"):
        for f in sorted(os.listdir(os.path.join(a.src, d))):
            if f.endswith(".ave") and (d == "examples" or f.startswith("roundtrip-")):
                seeds.append(open(os.path.join(a.src, d, f)).read())
    ave, opt = os.path.join(a.bin, "ave"), os.path.join(a.bin, "ave-opt")
    out = a.out or tempfile.mkdtemp(prefix="ave-mutants.")
    os.makedirs(out, exist_ok=True)
    ok = bad = tried = 0
    while ok + bad < a.mutants and tried < 200 * a.mutants:
        tried += 1
        text = rng.choice(seeds)
        for _ in range(rng.randrange(1, 3)):
            text = mutate(text, rng)
        path = os.path.join(out, "mutant-%d.ave" % tried)
        with open(path, "w") as f:
            f.write(text)
        why = run([opt, path, "-o", os.devnull], a.timeout)
        if why:
            bad += 1
            print("CRASH ave-opt %s: %s" % (path, why))
            continue
        if subprocess.run([opt, path, "-o", os.devnull], capture_output=True).returncode != 0:
            os.unlink(path)  # does not verify: not a mutant that reaches the pipeline
            continue
        cmds = [[ave, "check", path]]
        for t in TARGETS:
            cmds.append([ave, "compile", path, "--target=" + t, "--no-check", "--emit=llvm", "-O0",
                         "-o", os.devnull])
            cmds.append([ave, "compile", path, "--target=" + t, "--no-check", "--emit=llvm", "-O2",
                         "-o", os.devnull])
        cmds.append([opt, path, "--passes=default", "--target=sm_90a", "-o", os.devnull])
        crashed = False
        for c in cmds:
            why = run(c, a.timeout)
            if why:
                crashed = True
                print("CRASH %s: %s" % (" ".join(c), why))
        if crashed:
            bad += 1
        else:
            ok += 1
            os.unlink(path)
    print("mutate_pipeline: seed %d, %d mutants tried, %d reached the pipeline" % (a.seed, tried, ok + bad))
    print("%d passed, %d failed" % (ok, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
