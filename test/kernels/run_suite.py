#!/usr/bin/env python3
"""Runs the kernel library (kernels/*.ave, described in manifest.py) and prints one line per kernel.

For each kernel: run it on the host interpreter on every shape of its manifest entry (ragged
sizes, random inputs) and compare with its NumPy reference; compile it with `ave compile` for
sm_90a, sm_80, gfx942 and gfx90a and compare the outcome with the entry's expected diagnostics.
A kernel passes when every shape matches and every target behaves as the manifest says (a compile
that fails unexpectedly, or that passes where a diagnostic is expected, is a failure).

    python3 test/kernels/run_suite.py [--ave build/tools/ave] [--only NAME,...] [--no-compile]
        [--targets sm_90a,...] [-j N] [--json FILE] [--markdown FILE] [--perturb NAME]
        [--run-target host|sm_90a|sm_80|gfx942|gfx90a|sim-T] [--transform PASSES --transform-target T]

The last line is `N passed, N failed`; the exit status is 1 when anything failed. `--perturb NAME`
scales NAME's reference by 1.01, to show that the comparison catches a wrong result.
`--markdown FILE` writes the results as the table of docs/kernels.md. `--run-target` runs the
NumPy comparisons on a GPU (the target's device) instead of the host interpreter.
`--transform PASSES` runs the interpreter on each kernel as `ave-opt --passes=PASSES
--target=T` (`--transform-target`) leaves it, so a pass's output is checked against NumPy on
the same ragged shapes (a kernel the passes give roles runs 8 interleavings of them).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import ave  # noqa: E402
import manifest  # noqa: E402

TARGETS = ["sm_90a", "sm_80", "gfx942", "gfx90a"]
TRANSFORMED = {}  # kernel file -> the file --transform made of it
TMA_STRIDE = "which needs strides that are multiples of 16 bytes"


def find_ptxas():
    for p in (os.environ.get("AVE_PTXAS"), shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"):
        if p and os.path.exists(p):
            return p
    return None


def first_error(text):
    """The first `error:` line of a compile's output, without the file and position."""
    for line in text.splitlines():
        m = re.search(r"\berror: (.*)$", line)
        if m:
            return m.group(1).strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0].strip() if lines else "failed without a message"


def compile_one(tool, entry, target, outdir, emit):
    """Compiles one kernel file for one target; returns (ok, message, seconds, info) where info
    holds, per kernel of the file, what the metadata says (registers, spills, shared memory)
    and the compile's warnings."""
    src = os.path.join(ROOT, "kernels", entry.file)
    out = os.path.join(outdir, "%s.%s.%s" % (entry.name, target, emit))
    meta = out + ".json"
    cmd = [tool, "compile", src, "--target=" + target, "--emit=" + emit, "-o", out,
           "--emit-metadata=" + meta]
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.time() - t0
    info = {"warnings": [m.group(1).strip() for m in re.finditer(r"\bwarning: (.*)", p.stdout)]}
    if p.returncode != 0:
        return False, first_error(p.stdout), dt, info
    try:
        with open(meta) as f:
            doc = json.load(f)
        info["kernels"] = {k["name"]: {x: k.get(x) for x in (
            "registers", "spill_stores", "spill_loads", "stack_frame", "shared_bytes")}
            for k in doc.get("kernels", [])}
    except (OSError, ValueError) as e:
        info["kernels"] = {"error": str(e)}
    return True, "", dt, info


def judge_compile(entry, target, ok, msg):
    """(passed, text) for one target's compile against the manifest's expectation."""
    exp = entry.xfail.get(target)
    if exp is None:
        return (True, "ok") if ok else (False, "FAIL: " + msg)
    pattern, reason = exp
    if ok:
        return False, "FAIL: compiled, but the manifest expects '%s' (%s)" % (pattern, reason)
    if pattern in msg:
        return True, "xfail: " + msg
    return False, "FAIL: %s (expected '%s')" % (msg, pattern)


def compare(got, ref, tol):
    """(ok, max abs error, max allowed) for got against ref with (rtol, atol)."""
    rtol, atol = tol
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return False, float("inf"), 0.0
    err = np.abs(got - ref)
    lim = atol + rtol * np.abs(ref)
    bad = ~(err <= lim)  # NaN in either is a mismatch
    same_nan = np.isnan(got) & np.isnan(ref)
    bad &= ~same_nan
    e = float(np.nanmax(np.where(same_nan, 0, err))) if err.size else 0.0
    return not bad.any(), e, float(np.max(lim)) if lim.size else 0.0


def run_host(entry, perturb, target="host"):
    """Runs every shape of the entry on the host interpreter (or on the device of `target`);
    returns (ok, text). An entry that expects a failure there passes only if it still fails."""
    ok, text = run_shapes(entry, perturb, target)
    # A simulated device runs what its target's compile gives: the target's expectations.
    key = target[4:] if target.startswith("sim-") else target
    if key not in entry.xfail:
        return ok, text
    reason = entry.xfail[key][1]
    if ok:
        return False, "FAIL: ran correctly, but the manifest expects a failure (%s)" % reason
    return True, "xfail: %s (%s)" % (text[len("FAIL: "):], reason)


def run_shapes(entry, perturb, target):
    path = TRANSFORMED.get(entry.file, os.path.join(ROOT, "kernels", entry.file))
    schedules = entry.schedules
    if entry.file in TRANSFORMED and "ave.warp_specialize" in open(path).read():
        schedules = max(schedules, 8)
    try:
        k = ave.compile(path, target=target)
    except ave.CompileError as e:
        return False, "FAIL: %s compile: %s" % (target, str(e).splitlines()[0])
    worst = 0.0
    refused = []
    host = ave.device("host") if target == "host" else None
    shapes = list(entry.shapes)
    i = 0
    while i < len(shapes):
        shape = shapes[i]
        rng = np.random.default_rng(1234 + i)
        # Kernels with warp roles run several interleavings of the roles on the interpreter
        # (a race or a schedule-dependent result is an error).
        if host:
            host.set_schedules(schedules, 1234 + i)
        try:
            checks = entry.run(k, rng, **shape)
        except Exception as e:  # a launch error, or a bug in the entry: this kernel fails
            # ...except the documented refusal of a TMA copy from rows that are not a multiple
            # of 16 bytes (docs/targets.md): that shape is reported as not run.
            if TMA_STRIDE in str(e):
                refused.append(shape)
                # The same shape with the row lengths rounded up to 16 elements (still ragged
                # against the tiles) runs instead, once.
                wider = {n: (v + 15) // 16 * 16 if n in ("N", "K") else v
                         for n, v in shape.items()}
                if wider != shape and wider not in shapes:
                    shapes.append(wider)
                i += 1
                continue
            msg = (str(e).splitlines() or [""])[0]
            return False, "FAIL: %s: %s: %s" % (shape, type(e).__name__, msg)
        finally:
            if host:
                host.set_schedules(1, 0)
        for name, got, ref, tol in checks:
            if perturb:
                ref = np.asarray(ref, np.float64) * 1.01
            ok, err, lim = compare(got, ref, tol)
            worst = max(worst, err)
            if not ok:
                return False, "FAIL: %s %s: max error %.3g over tolerance" % (shape, name, err)
        i += 1
    sched = " x %d schedules" % schedules if schedules > 1 else ""
    ran = len(shapes) - len(refused)
    if not ran:
        return False, "FAIL: every shape refused at launch (%s)" % TMA_STRIDE
    return True, "%d shapes%s ok (max err %.2g)%s" % (
        ran, sched, worst, "; refused at launch (TMA needs rows of a multiple of 16 bytes), "
        "rounded up to 16 elements instead: %s" % ", ".join(str(x) for x in refused)
        if refused else "")


def spill_bytes(info):
    """Spill stores the code generator's report gives, over the kernels of a file."""
    return sum((v.get("spill_stores") or 0) for v in info.get("kernels", {}).values()
               if isinstance(v, dict))


def notes(info):
    """What the line says besides the result: warnings and spills (neither fails a kernel)."""
    out = []
    nw = len(info["warnings"])
    if nw:
        out.append("%d warning%s" % (nw, "s"[:nw != 1]))
    sp = spill_bytes(info)
    if sp:
        out.append("spills %d B" % sp)
    return " (%s)" % ", ".join(out) if out else ""


def cell(t):
    """A target's result for the docs table: ok with the registers per thread, or the
    diagnostic."""
    r = t["result"]
    if r.startswith("xfail: "):
        return "refused (expected): " + r[len("xfail: "):].replace("|", "\\|")
    if r != "ok":
        return r.replace("|", "\\|")
    regs = [v.get("registers") for v in t.get("kernels", {}).values() if isinstance(v, dict)]
    regs = [str(x) for x in regs if x]
    w = len(t["warnings"])
    sp = spill_bytes(t)
    return "ok" + (" (%s regs)" % "/".join(regs) if regs else "") + (
        ", %d warning%s" % (w, "s"[:w != 1]) if w else "") + (", spills %d B" % sp if sp else "")


def write_markdown(path, report, targets, run_target):
    with open(path, "w") as f:
        f.write("| kernel | computes | dtypes | %s | %s |\n" % (run_target, " | ".join(targets)))
        f.write("|---" * (4 + len(targets)) + "|\n")
        for r in report:
            f.write("| [%s](../kernels/%s) | %s | %s | %s | %s |\n" % (
                r["name"], r["file"], r["what"].replace("|", "\\|"), r["dtypes"],
                r["host"].replace("|", "\\|"),
                " | ".join(cell(r["targets"][t]) for t in targets)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ave", default=os.path.join(ROOT, "build", "tools", "ave"))
    ap.add_argument("--only", default="")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--json", default="")
    ap.add_argument("--perturb", default="")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--run-target", default="host")
    ap.add_argument("--transform", default="")
    ap.add_argument("--transform-target", default="sm_90a")
    args = ap.parse_args()

    entries = manifest.ENTRIES
    names = [e.name for e in entries]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("run_suite.py: duplicate manifest names: %s" % ", ".join(sorted(dup)))
    if args.only:
        want = set(args.only.split(","))
        unknown = want - set(names)
        if unknown:
            sys.exit("run_suite.py: unknown kernel(s): %s" % ", ".join(sorted(unknown)))
        entries = [e for e in entries if e.name in want]
    targets = [] if args.no_compile else [t for t in args.targets.split(",") if t]
    ptxas = find_ptxas()

    t0 = time.time()
    results = {e.name: {"targets": {}} for e in entries}
    with tempfile.TemporaryDirectory(prefix="ave-kernels-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        transformed = 0
        for e in entries if args.transform else []:
            out = os.path.join(tmp, "t-" + e.file)
            opt = os.path.join(os.path.dirname(args.ave), "ave-opt")
            src = os.path.join(ROOT, "kernels", e.file)
            # A kernel written for `overlap` is rewritten by it first, as in the pipeline
            # (the pass leaves a kernel alone once it has roles).
            passes = ("overlap," if re.search(r"\boverlap = @", open(src).read()) else "") + \
                args.transform
            p = subprocess.run([opt, src, "--passes=" + passes,
                                "--target=" + args.transform_target, "-o", out],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode:
                sys.exit("run_suite.py: ave-opt --passes=%s on %s: %s" % (
                    args.transform, e.file, first_error(p.stdout)))
            TRANSFORMED[e.file] = out
            transformed += "ave.warp_specialize" in open(out).read()
        if args.transform:
            print("transform: %s for %s; %d kernels with warp roles" % (
                args.transform, args.transform_target, transformed), flush=True)
        futs = {}
        for e in entries:
            for t in targets:
                emit = ("cubin" if ptxas else "ptx") if t.startswith("sm_") else "hsaco"
                futs[(e.name, t)] = pool.submit(compile_one, args.ave, e, t, tmp, emit)
        # The interpreter runs here while the compiles run in the pool.
        for e in entries:
            t1 = time.time()
            ok, text = run_host(e, args.perturb == e.name, args.run_target)
            results[e.name]["host"] = (ok, text, time.time() - t1)
        for (name, t), f in futs.items():
            results[name]["targets"][t] = f.result()

    passed = failed = 0
    report = []
    for e in entries:
        r = results[e.name]
        ok, text, host_s = r["host"]
        parts = ["%s: %s" % (args.run_target, text)]
        row = {"name": e.name, "file": e.file, "what": e.what, "dtypes": e.dtypes,
               "host": text, "host_s": round(host_s, 2), "targets": {}}
        for t in targets:
            cok, msg, dt, info = r["targets"][t]
            good, ttext = judge_compile(e, t, cok, msg)
            ok = ok and good
            parts.append("%s: %s%s" % (t, ttext, notes(info)))
            row["targets"][t] = {"result": ttext, "seconds": round(dt, 2), **info}
        row["ok"] = ok
        report.append(row)
        passed += ok
        failed += not ok
        print("%s %-22s %s" % ("PASS" if ok else "FAIL", e.name, " | ".join(parts)), flush=True)
    if args.markdown:
        write_markdown(args.markdown, report, targets, args.run_target)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": report, "seconds": round(time.time() - t0, 1),
                       "ptxas": bool(ptxas)}, f, indent=1)
    print("time: %.1f s (%d kernels, %d compiles%s)" % (
        time.time() - t0, len(entries), len(entries) * len(targets),
        "" if ptxas or not targets else "; no ptxas: NVIDIA targets checked to PTX only"))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
