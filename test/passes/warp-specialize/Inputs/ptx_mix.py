"""Compares the instruction mix of two PTX files: prints the count of each memory, barrier,
copy and MMA instruction in both, then `same` when they agree on all of them, else `differ`
with the instructions that do not (and exits 1). Register moves, arithmetic and predicates
are left out: they differ with how a kernel keeps its parities."""
import re
import sys

KEY = re.compile(r"^(wgmma|cp\.async|mbarrier|setmaxnreg|bar\.|fence|ld\.|st\.|red\.|atom\.)")


def mix(path):
    counts = {}
    for line in open(path):
        m = re.match(r"\s*(?:@!?%p\d+\s+)?([a-z][\w.:]*)", line)
        if m and KEY.match(m.group(1)):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


a, b = mix(sys.argv[1]), mix(sys.argv[2])
bad = []
for op in sorted(set(a) | set(b)):
    print(op, a.get(op, 0), b.get(op, 0))
    if a.get(op, 0) != b.get(op, 0):
        bad.append(op)
print("same" if not bad else "differ: " + " ".join(bad))
sys.exit(1 if bad else 0)
