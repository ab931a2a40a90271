"""objdump_regs.py META.json TARGET < DISASSEMBLY: the highest VGPR/AGPR/SGPR and the scratch
instructions of each kernel in `llvm-objdump -d` output, against what the compile's own scan of
the code (backend-amdgpu/disasm.c) recorded in the metadata ("code")."""
import json
import re
import sys

meta = json.load(open(sys.argv[1]))
target = sys.argv[2]
dis = sys.stdin.read()
bad = 0
for k in meta["kernels"]:
    code = k[target]["code"]
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?=^[0-9a-f]+ <|\Z)" % re.escape(k["name"]), dis, re.S | re.M)
    hi = {"v": 0, "a": 0, "s": 0}
    scratch = 0
    for line in m.group(1).splitlines():
        line = line.split("//")[0]
        words = line.split(None, 1)
        if not words:
            continue
        if words[0].startswith("scratch_"):
            scratch += 1
        for r in re.finditer(r"(?<![\w])([vas])(?:(\d+)|\[(\d+):(\d+)\])", line):
            hi[r.group(1)] = max(hi[r.group(1)], int(r.group(2) or r.group(4)) + 1)
    mine = (code["vgprs"], code["agprs"], code["sgprs"], code["scratch_instructions"])
    theirs = (hi["v"], hi["a"], hi["s"], scratch)
    print("%s: scan %s, objdump %s: %s" % (k["name"], mine, theirs, "agree" if mine == theirs else "DIFFER"))
    bad += mine != theirs
sys.exit(1 if bad else 0)
