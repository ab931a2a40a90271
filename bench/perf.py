#!/usr/bin/env python3
"""Writes docs/perf.md: the figures that need no GPU, measured on this machine.

  bench/perf.py [--build build] [-n 10] [--out docs/perf.md]

- Compile latency of each example for each target: the CPU time of `ave compile` (process and
  children: ptxas, ld.lld), median of n, against LLVM's own tools on the LLVM IR ave emits for
  it (`llc -O3`, then `ptxas` or `ld.lld`): their ratio is what ave's front end, passes,
  checker and lowering add. CPU time, not wall time, so a busy machine disturbs it less; the
  stages of one compile (`ave compile -v`, wall clock) beside it.
- The invariant checker on each example that has something to prove (`ave check --stats`).
- Registers, spills, stack and shared memory of each example on each target, from the
  metadata the compile writes (ptxas's report and the cubin, or the HSACO).
- The interpreter's rate on a bf16 GEMM (MAC/s), against NumPy's float32 matmul of the same
  shape on this CPU.
GPU throughput is measured on a GPU with scripts/gpu-check.sh and recorded in the same file
(this script keeps a section headed "## GPU" that it finds there).
"""
import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["vadd", "gemm", "gemm_ws", "attention"]
TARGETS = {
    "sm_90a": ("nvptx64-nvidia-cuda", "sm_90a", "+ptx80"),
    "sm_80": ("nvptx64-nvidia-cuda", "sm_80", "+ptx80"),
    "gfx942": ("amdgcn-amd-amdhsa", "gfx942", ""),
    "gfx90a": ("amdgcn-amd-amdhsa", "gfx90a", ""),
}


def cpu_run(cmd, **kw):
    """Runs cmd; returns (rc, output, CPU seconds of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, p.stdout, cpu


def tool(name, candidates):
    for c in candidates:
        if c and os.path.exists(c):
            return c
    sys.exit("bench/perf.py: %s not found (looked in %s)" % (name, ", ".join(candidates)))


def stages(text):
    """The stages `ave compile -v` prints, one line each: the passes summed, LLVM's optimization
    and code generation, and the assembler or linker."""
    out = {"passes": 0.0}
    names = {"LLVM passes": "LLVM opt", "LLVM codegen": "LLVM codegen", "ptxas": "ptxas",
             "lld": "ld.lld", "ld.lld": "ld.lld"}
    for m in re.finditer(r"^\s+(pass \S+|lower \(LLVM IR\)|LLVM passes|LLVM codegen|ptxas|ld\.lld|"
                         r"lld|total[^0-9]*?)\s+([0-9.]+) ms\s*$", text, re.M):
        name, ms = m.group(1), float(m.group(2))
        if name.startswith("pass "):
            out["passes"] += ms
        elif name in names:
            out[names[name]] = ms
    return out


def compile_figures(ave, llc, ptxas, lld, ex, target, n, tmp):
    src = os.path.join(ROOT, "examples", ex + ".ave")
    out = os.path.join(tmp, "%s.%s.bin" % (ex, target))
    meta = os.path.join(tmp, "%s.%s.json" % (ex, target))
    rc, text, _ = cpu_run([ave, "compile", src, "--target=" + target, "-v", "-o", out,
                           "--emit-metadata=" + meta])
    if rc:
        first = next((l for l in text.splitlines() if "error: " in l), text.strip()[:200])
        return {"error": first.split("error: ", 1)[-1]}
    st = stages(text)
    kern = json.load(open(meta))["kernels"][0]
    ave_cpu = statistics.median(cpu_run([ave, "compile", src, "--target=" + target, "-o", out])[2]
                                for _ in range(n))
    ll = os.path.join(tmp, "%s.%s.ll" % (ex, target))
    cpu_run([ave, "compile", src, "--target=" + target, "--emit=llvm", "-o", ll])
    triple, cpu, feats = TARGETS[target]
    base = [llc, "-O3", "-mtriple=" + triple, "-mcpu=" + cpu] + (["-mattr=" + feats] if feats else [])
    llvm_times = []
    for _ in range(n):
        if triple.startswith("nvptx"):
            s = os.path.join(tmp, "x.s")
            _, _, t1 = cpu_run(base + [ll, "-o", s])
            _, _, t2 = cpu_run([ptxas, "-arch=" + cpu, s, "-o", os.path.join(tmp, "x.cubin")])
        else:
            o = os.path.join(tmp, "x.o")
            _, _, t1 = cpu_run(base + ["-filetype=obj", ll, "-o", o])
            _, _, t2 = cpu_run([lld, "-shared", o, "-o", os.path.join(tmp, "x.hsaco")])
        llvm_times.append(t1 + t2)
    llvm_cpu = statistics.median(llvm_times)
    return {
        "stages_ms": st, "ave_cpu_s": ave_cpu, "llvm_cpu_s": llvm_cpu,
        "ratio": ave_cpu / llvm_cpu if llvm_cpu > 0 else None,
        "registers": kern.get("registers"), "spill_stores": kern.get("spill_stores"),
        "spill_loads": kern.get("spill_loads"), "stack": kern.get("stack_frame", kern.get("scratch_bytes")),
        "shared": kern.get("shared_bytes"), "threads": kern.get("threads"),
        "roles": kern.get("roles"), "vgprs": kern.get("vgprs"), "agprs": kern.get("agprs"),
        "diagnostics": kern.get("diagnostics"),
    }


def check_figures(ave, ex):
    src = os.path.join(ROOT, "examples", ex + ".ave")
    rc, text, cpu = cpu_run([ave, "check", "--stats", src])
    m = re.search(r"(\d+) quer\w+ \((\d+) sat, (\d+) unsat, (\d+) unknown\).*?pass ([0-9.]+) ms", text)
    if not m:
        return {"rc": rc, "cpu_s": cpu, "text": text.strip().splitlines()[-1] if text.strip() else ""}
    return {"rc": rc, "cpu_s": cpu, "queries": int(m.group(1)), "pass_ms": float(m.group(5))}


def interp_figures(ave, tmp, py):
    m, n, k = 256, 256, 512
    src = os.path.join(ROOT, "examples", "gemm.ave")
    t0 = time.perf_counter()
    rc, text, cpu = cpu_run([ave, "run", src, "--kernel=@gemm", "--grid=2,2",
                             "--arg", "A=rand:%dx%d:bf16:1" % (m, k),
                             "--arg", "B=rand:%dx%d:bf16:2" % (n, k),
                             "--arg", "C=zeros:%dx%d:f32" % (m, n), "--arg", "K=%d" % k])
    wall = time.perf_counter() - t0
    res = {"shape": [m, n, k], "rc": rc, "cpu_s": cpu, "wall_s": wall,
           "mac_per_s": m * n * k / cpu if cpu > 0 else None}
    if py:
        code = ("import numpy as np, time\n"
                "a = np.random.rand(%d, %d).astype(np.float32); b = np.random.rand(%d, %d).astype(np.float32)\n"
                "ts = []\n"
                "for _ in range(5):\n"
                "    t = time.process_time(); a @ b.T; ts.append(time.process_time() - t)\n"
                "print(sorted(ts)[2])\n" % (m, k, n, k))
        p = subprocess.run([py, "-c", code], stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
        try:
            t = float(p.stdout.strip())
            res["numpy_mac_per_s"] = m * n * k / t if t > 0 else None
        except ValueError:
            pass
    return res


SIM_TARGETS = ["sm_80", "sm_90a", "gfx942", "gfx90a"]


def sim_figures(ave, tmp):
    """examples/gemm.ave at 256^3 on each simulated device (the emitted code run on the CPU),
    compile included (a fresh cache), and whether its result equals the interpreter's."""
    m = n = k = 256
    src = os.path.join(ROOT, "examples", "gemm.ave")
    args = ["--kernel=@gemm", "--grid=2,2", "--arg", "A=rand:%dx%d:bf16:1" % (m, k),
            "--arg", "B=rand:%dx%d:bf16:2" % (n, k), "--arg", "C=zeros:%dx%d:f32" % (m, n),
            "--arg", "K=%d" % k]
    ref = os.path.join(tmp, "sim-host.npy")
    cpu_run([ave, "run", src] + args + ["--out", "C=" + ref])
    res = {"shape": [m, n, k], "targets": {}}
    for t in SIM_TARGETS:
        out = os.path.join(tmp, "sim-%s.npy" % t)
        env = dict(os.environ, AVE_CACHE_DIR=os.path.join(tmp, "sim-cache-" + t))
        t0 = time.perf_counter()
        p = subprocess.run([ave, "run", src, "--device=sim-" + t] + args + ["--out", "C=" + out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        wall = time.perf_counter() - t0
        same = p.returncode == 0 and open(ref, "rb").read() == open(out, "rb").read()
        res["targets"][t] = {"rc": p.returncode, "wall_s": wall, "exact": same}
    return res


def world_figures(ave, tmp):
    """kernels/ag_gemm_bf16.ave (all-gather + GEMM, made to communicate by `overlap`) on a world
    of 4 ranks: the host interpreter, then each simulated device (every CTA of every rank
    resident), compile included (a fresh cache); whether every rank's C equals the host's."""
    src = os.path.join(ROOT, "kernels", "ag_gemm_bf16.ave")
    n = 100
    args = ["--world=4", "--grid=4,%d" % ((n + 63) // 64), "--arg", "@X=rand:512x128:bf16:{r}",
            "--arg", "W=rand:%dx128:bf16:9" % n, "--arg", "C=zeros:512x%d:f32" % n]
    res = {"world": 4, "n": n, "targets": {}}
    for t in ["host"] + list(SIM_TARGETS):
        out = os.path.join(tmp, "world-%s.npy" % t)
        env = dict(os.environ, AVE_CACHE_DIR=os.path.join(tmp, "world-cache-" + t))
        t0 = time.perf_counter()
        p = subprocess.run([ave, "run", src, "--device=" + (t if t == "host" else "sim-" + t)] +
                           args + ["--out", "C=" + out], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=env)
        wall = time.perf_counter() - t0
        same = p.returncode == 0 and all(
            open(out[:-4] + ".rank%d.npy" % r, "rb").read() ==
            open(os.path.join(tmp, "world-host.rank%d.npy" % r), "rb").read() for r in range(4))
        res["targets"][t] = {"rc": p.returncode, "wall_s": wall, "exact": same}
    return res


def world_section(w):
    L = ["### A world of ranks", ""]
    L.append("`ave run kernels/ag_gemm_bf16.ave --world=%d` (all-gather + GEMM: N = %d, the puts, "
             "chunk signals and waits that `overlap` adds; on a simulated device every CTA of "
             "every rank resident), compile included; every rank's C against the host "
             "interpreter's." % (w["world"], w["n"]))
    L.append("")
    L.append("| device | seconds (wall) | result |")
    L.append("|---|---|---|")
    for t, r in w["targets"].items():
        L.append("| %s | %.2f | %s |" % (t if t == "host" else "sim-" + t, r["wall_s"],
                                         "error" if r["rc"] else "the reference" if t == "host"
                                         else "bit-identical" if r["exact"] else "DIFFERS"))
    L.append("")
    return L


def fmt_ms(v):
    return "%.0f" % v if v is not None else "-"


def report(fig, args):
    L = []
    L.append("# Performance")
    L.append("")
    L.append("Figures measured without a GPU by `bench/perf.py` (%s, %s, %d CPUs, %s), median of %d "
             "runs. Regenerate with `bench/run.sh` (tables and plots; `python3 bench/perf.py --build build` "
             "for the tables alone) after a build." %
             (time.strftime("%Y-%m-%d"), platform.machine(), os.cpu_count() or 0,
              platform.platform(terse=True), args.n))
    L.append("")
    L.append("## Compile latency (CPU seconds, process and children)")
    L.append("")
    L.append("`ave` is `ave compile` of the example to a cubin or HSACO (parse, passes with the "
             "invariant checker, lowering, LLVM, ptxas or ld.lld); `llc+tool` is LLVM's `llc -O3` on "
             "the LLVM IR ave emits, then `ptxas` or `ld.lld`. The ratio is what ave adds over "
             "LLVM's own code generation of the same IR. The stage columns are the wall-clock stages of one "
             "`ave compile -v` (on a loaded machine they run long).")
    L.append("")
    L.append("| example | target | ave s | llc+tool s | ratio | passes ms | LLVM opt ms | codegen ms | ptxas/lld ms |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for ex in EXAMPLES:
        for t in TARGETS:
            c = fig["compile"][ex][t]
            if "error" in c:
                L.append("| %s | %s | %s | | | | | | |" % (ex, t, c["error"].replace("|", "/")))
                continue
            st = c["stages_ms"]
            L.append("| %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s |" % (
                ex, t, c["ave_cpu_s"], c["llvm_cpu_s"],
                "%.2fx" % c["ratio"] if c["ratio"] else "-", fmt_ms(st.get("passes")),
                fmt_ms(st.get("LLVM opt")), fmt_ms(st.get("LLVM codegen")),
                fmt_ms(st.get("ptxas", st.get("ld.lld")))))
    L.append("")
    L.append("## Registers, spills and shared memory")
    L.append("")
    L.append("| example | target | threads | registers | spill st/ld bytes | stack | shared bytes | roles (regs) |")
    L.append("|---|---|---|---|---|---|---|---|")
    for ex in EXAMPLES:
        for t in TARGETS:
            c = fig["compile"][ex][t]
            if "error" in c:
                continue
            roles = ", ".join("%s x%d (%s)" % (r["name"], r.get("replicate", 1), r.get("regs") or "-")
                              for r in (c.get("roles") or []))
            L.append("| %s | %s | %s | %s | %s/%s | %s | %s | %s |" % (
                ex, t, c["threads"], c["registers"], c["spill_stores"], c["spill_loads"],
                c["stack"], c["shared"], roles or "-"))
    L.append("")
    L.append("## Invariant checker (`ave check --stats`)")
    L.append("")
    L.append("| example | queries | pass ms | process CPU s |")
    L.append("|---|---|---|---|")
    for ex in EXAMPLES:
        c = fig["check"][ex]
        L.append("| %s | %s | %s | %.2f |" % (ex, c.get("queries", "-"), fmt_ms(c.get("pass_ms")),
                                          c["cpu_s"]))
    L.append("")
    it = fig["interp"]
    L.append("## Interpreter")
    L.append("")
    L.append("`ave run examples/gemm.ave` on the host device, M = N = %d, K = %d, a 2x2 grid of "
             "128x128 tiles, bf16 in, f32 out: %.2f s CPU, %.1f MMAC/s%s." % (
                 it["shape"][0], it["shape"][2], it["cpu_s"],
                 (it["mac_per_s"] or 0) / 1e6,
                 "; NumPy float32 matmul of the same shape, one thread: %.0f MMAC/s (%.0fx)" % (
                     it["numpy_mac_per_s"] / 1e6, it["numpy_mac_per_s"] / it["mac_per_s"])
                 if it.get("numpy_mac_per_s") and it.get("mac_per_s") else ""))
    L.append("")
    sim = fig.get("sim")
    if sim:
        L.append("## Simulated targets")
        L.append("")
        L.append("`ave run examples/gemm.ave --device=sim-T` (docs/testing.md: the code the backend "
                 "emits, run thread by thread on the CPU), M = N = K = %d, a 2x2 grid, compile "
                 "included; the result against the interpreter's." % sim["shape"][0])
        L.append("")
        L.append("| device | seconds (wall) | result |")
        L.append("|---|---|---|")
        for t, r in sim["targets"].items():
            L.append("| sim-%s | %.2f | %s |" % (t, r["wall_s"], "bit-identical" if r["exact"]
                                                else "error" if r["rc"] else "DIFFERS"))
        L.append("")
    if fig.get("world"):
        L += world_section(fig["world"])
    return "\n".join(L)


def plots(fig, outdir):
    """Writes the PNG plots of docs/perf.md into outdir; returns their names, or None (and says
    why) where matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench/perf.py: matplotlib is not installed (Debian: python3-matplotlib; bench/run.sh "
              "installs it): no plots written", file=sys.stderr)
        return None
    os.makedirs(outdir, exist_ok=True)
    names = []
    targets = list(TARGETS)
    ok = [(ex, t) for ex in EXAMPLES for t in targets if "error" not in fig["compile"][ex][t]]
    width = 0.8 / len(targets)

    def grouped(key, ylabel, title, fname, line=None):
        f, ax = plt.subplots(figsize=(8, 4))
        for i, t in enumerate(targets):
            xs, ys = [], []
            for j, ex in enumerate(EXAMPLES):
                c = fig["compile"][ex][t]
                v = key(c) if "error" not in c else None
                if v is not None:
                    xs.append(j + (i - (len(targets) - 1) / 2) * width)
                    ys.append(v)
            ax.bar(xs, ys, width, label=t)
        if line is not None:
            ax.axhline(line, color="gray", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(EXAMPLES)))
        ax.set_xticklabels(EXAMPLES)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize="small")
        f.tight_layout()
        f.savefig(os.path.join(outdir, fname), dpi=100)
        plt.close(f)
        names.append(fname)

    grouped(lambda c: c["ratio"], "ave / (llc -O3 + ptxas or ld.lld), CPU time",
            "Compile latency relative to LLVM's code generation of the same IR",
            "compile-ratio.png", line=1.0)
    grouped(lambda c: c["registers"], "registers per thread (NVIDIA) or VGPRs (AMDGPU)",
            "Registers per example and target", "registers.png")
    # The stages of one compile, stacked.
    f, ax = plt.subplots(figsize=(9, 4))
    labels = ["%s\n%s" % (ex, t) for ex, t in ok]
    bottom = [0.0] * len(ok)
    for stage, get in (("passes", lambda st: st.get("passes")),
                       ("LLVM opt", lambda st: st.get("LLVM opt")),
                       ("LLVM codegen", lambda st: st.get("LLVM codegen")),
                       ("ptxas / ld.lld", lambda st: st.get("ptxas", st.get("ld.lld")))):
        vals = [get(fig["compile"][ex][t]["stages_ms"]) or 0.0 for ex, t in ok]
        ax.bar(range(len(ok)), vals, 0.7, bottom=bottom, label=stage)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(ok)))
    ax.set_xticklabels(labels, fontsize="x-small")
    ax.set_ylabel("wall-clock ms (one ave compile -v)")
    ax.set_title("Where a compile's time goes")
    ax.legend(fontsize="small")
    f.tight_layout()
    f.savefig(os.path.join(outdir, "compile-stages.png"), dpi=100)
    plt.close(f)
    names.append("compile-stages.png")
    # The checker.
    f, ax = plt.subplots(figsize=(6, 3.5))
    exs = [ex for ex in EXAMPLES if fig["check"][ex].get("pass_ms") is not None]
    ax.bar(range(len(exs)), [fig["check"][ex]["pass_ms"] for ex in exs], 0.6)
    ax.set_xticks(range(len(exs)))
    ax.set_xticklabels(exs)
    ax.set_ylabel("ms")
    ax.set_title("Invariant checker (ave check --stats: pass time)")
    f.tight_layout()
    f.savefig(os.path.join(outdir, "checker.png"), dpi=100)
    plt.close(f)
    names.append("checker.png")
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "perf.md"))
    args = ap.parse_args()
    ave = tool("ave", [os.path.join(args.build, "tools", "ave")])
    llc = tool("llc", ["/usr/lib/llvm-19/bin/llc", "/usr/bin/llc-19"])
    ptxas = tool("ptxas", ["/usr/local/cuda/bin/ptxas"])
    lld = tool("ld.lld", ["/usr/lib/llvm-19/bin/ld.lld", "/usr/bin/ld.lld-19"])
    py = next((p for p in ("/usr/bin/python3", sys.executable)
               if subprocess.run([p, "-c", "import numpy"], stderr=subprocess.DEVNULL).returncode == 0),
              None)
    fig = {"compile": {}, "check": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for ex in EXAMPLES:
            fig["compile"][ex] = {}
            for t in TARGETS:
                print("bench/perf.py: %s for %s ..." % (ex, t), file=sys.stderr, flush=True)
                fig["compile"][ex][t] = compile_figures(ave, llc, ptxas, lld, ex, t, args.n, tmp)
            fig["check"][ex] = check_figures(ave, ex)
        print("bench/perf.py: interpreter ...", file=sys.stderr, flush=True)
        fig["interp"] = interp_figures(ave, tmp, py)
        print("bench/perf.py: simulated targets ...", file=sys.stderr, flush=True)
        fig["sim"] = sim_figures(ave, tmp)
        print("bench/perf.py: a world of ranks ...", file=sys.stderr, flush=True)
        fig["world"] = world_figures(ave, tmp)
    text = report(fig, args)
    pngs = plots(fig, os.path.join(os.path.dirname(os.path.abspath(args.out)), "perf"))
    if pngs:
        text += "\n## Plots\n\n" + "\n\n".join(
            "![%s](perf/%s)" % (n[:-4].replace("-", " "), n) for n in pngs) + "\n"
    gpu = ""
    if os.path.exists(args.out):
        old = open(args.out).read()
        i = old.find("\n## GPU")
        if i >= 0:
            gpu = old[i:]
    if not gpu:
        gpu = ("\n## GPU\n\nNo GPU figures yet: `scripts/gpu-check.sh` records them here when it "
               "runs on a GPU (TFLOP/s of the gemm and attention examples against torch).\n")
    with open(args.out, "w") as f:
        f.write(text + gpu)
    with open(os.path.join(args.build, "bench-perf.json"), "w") as f:
        json.dump(fig, f, indent=1)
    print("bench/perf.py: wrote %s" % args.out, file=sys.stderr)


if __name__ == "__main__":
    main()
