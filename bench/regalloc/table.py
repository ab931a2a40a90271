"""The register plan beside what the binary uses, for every example on every GPU target: compiles
each with --emit-metadata and prints one Markdown row per kernel and target (the plan's groups with
their budget, peak and tiles kept in shared memory; the registers and spill bytes the assembler or
code object reports; `validated`). docs/regalloc.md keeps the last table.

  python3 bench/regalloc/table.py [BUILD_DIR] [FILES...]     (default: examples/*.ave)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

TARGETS = ["sm_80", "sm_90a", "gfx942", "gfx90a"]


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = sys.argv[1:]
    build = args.pop(0) if args and os.path.isdir(args[0]) else os.path.join(root, "build")
    files = args or sorted(glob.glob(os.path.join(root, "examples", "*.ave")))
    ave = os.path.join(build, "tools", "ave")
    print("| kernel | target | groups: budget / peak (kept in shared memory) | observed | validated |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            for t in TARGETS:
                out = os.path.join(tmp, "k.bin")
                p = subprocess.run([ave, "compile", f, "--target=" + t, "-o", out,
                                    "--emit-metadata"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                name = os.path.basename(f)
                if p.returncode:
                    err = [l for l in p.stdout.splitlines() if "error:" in l]
                    msg = err[0].split("error: ", 1)[1] if err else "failed"
                    print("| `%s` | `%s` | not compiled: %s | | |" % (name, t, msg[:110]))
                    continue
                meta = json.load(open(out + ".json"))
                for k in meta.get("kernels", []):
                    ra = k.get("regalloc")
                    if not ra:
                        continue
                    groups = []
                    for g in ra["groups"]:
                        who = "@" + (g.get("role") or g.get("kernel"))
                        sp = " (%d B)" % g["spilled_bytes"] if g.get("spilled_bytes") else ""
                        groups.append("%s %d / %d%s" % (who, g["budget"], g["peak"], sp))
                    ob = ra.get("observed", {})
                    obs = "%s regs, %s B spilled" % (ob.get("registers", "?"),
                                                     ob.get("spill_bytes", "?"))
                    print("| `%s` @%s | `%s` | %s | %s | %s |" % (
                        name, k.get("name", "?"), t, ", ".join(groups), obs,
                        "yes" if ra.get("validated") else "**no**"))


if __name__ == "__main__":
    main()
