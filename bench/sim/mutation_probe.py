#!/usr/bin/env python3
"""The simulator's mutation probe: one-line defects put into the backends, each of which must make
a simulator test fail (docs/testing.md). For each mutation: apply it to the source, rebuild the
tools, run the named lit tests, record whether they failed, and restore the source (also on an
interrupt). The last line is `N caught, N missed`; the exit status is 1 when any was missed.

    python3 bench/sim/mutation_probe.py [--build build] [--only NAME,...]
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT = "/usr/lib/llvm-19/build/utils/lit/lit.py"

# name, file, text to find (exactly once), its replacement, the tests that must fail, what it is
MUTATIONS = [
    ("ldmatrix-rows", "backend-nvptx/mma.c",
     "row = LLVMBuildAdd(b, m0, LLVMBuildAdd(b, mb, rr, \"\"), \"\");",
     "row = LLVMBuildAdd(b, m0, rr, \"\");",
     ["sim/examples-nvidia.test"], "sm_80: ldmatrix row addresses lose the matrix's 8-row offset"),
    ("wgmma-sbo", "backend-nvptx/mma.c",
     "uint64_t sbo = (uint64_t)(8 * y->row_bytes) >> 4;",
     "uint64_t sbo = (uint64_t)(4 * y->row_bytes) >> 4;",
     ["sim/examples-nvidia.test"], "sm_90a: the wgmma descriptor's stride byte offset halved"),
    ("mfma-acc-map", "backend-amdgpu/mma.c",
     "\tadd(&a, LOWER_REG, 1, 0);\n\tadd(&a, LOWER_REG, 2, 0);",
     "\tadd(&a, LOWER_REG, 2, 0);\n\tadd(&a, LOWER_REG, 1, 0);",
     ["sim/examples-amdgpu.test"], "gfx942/gfx90a: two register bits of the MFMA accumulator map swapped"),
    ("tma-box", "backend-nvptx/copy.c",
     "bprintf(&b, \"%s%lld\", i ? \", \" : \"\", (long long)m->box[i]);",
     "bprintf(&b, \"%s%lld\", i ? \", \" : \"\", (long long)(i ? m->box[i] / 2 : m->box[i]));",
     ["sim/examples-nvidia.test"], "sm_90a: the TMA box of every outer dimension halved"),
    ("wait-group-count", "backend-nvptx/mma.c",
     "return after < pending ? after : pending;",
     "return pending + 0 * after;",
     ["sim/inflight.test"], "sm_90a: wgmma.wait_group N = pending(N) as written, not min(N, groups after)"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--only")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    caught = missed = 0
    for name, path, old, new, tests, what in MUTATIONS:
        if only and name not in only:
            continue
        full = os.path.join(ROOT, path)
        src = open(full).read()
        if src.count(old) != 1:
            print("ERROR %-18s the text to mutate occurs %d times in %s" % (name, src.count(old), path))
            missed += 1
            continue
        t0 = time.time()
        try:
            open(full, "w").write(src.replace(old, new))
            b = run(["cmake", "--build", args.build])
            if b.returncode:
                print("ERROR %-18s the mutant does not build:\n%s" % (name, b.stdout[-2000:]))
                missed += 1
                continue
            r = run([sys.executable, LIT, "-q"] + [os.path.join(args.build, "test", t) for t in tests])
        finally:
            open(full, "w").write(src)
        ok = r.returncode != 0
        caught += ok
        missed += not ok
        print("%s %-18s %-40s %s (%.0f s)" % ("caught" if ok else "MISSED", name, " ".join(tests),
                                             what, time.time() - t0), flush=True)
    b = run(["cmake", "--build", args.build])
    if b.returncode:
        print("ERROR: the restored source does not build")
        return 1
    print("%d caught, %d missed" % (caught, missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
