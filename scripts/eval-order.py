#!/usr/bin/env python3
"""Finds calls with two or more arguments that each emit LLVM instructions, e.g.
LLVMBuildAnd(b, LLVMBuildICmp(...), LLVMBuildICmp(...), ""). C leaves the order of evaluating
arguments unspecified (clang goes left to right, GCC on x86-64 right to left), so such code emits
instructions in a compiler-dependent order and golden tests differ between builds. Hoist the
arguments into locals instead. Heuristic: an argument emits when it calls LLVMBuild* or any
helper whose first argument is the lowering state or the builder (L, b), except the pure helpers
listed below. Usage: scripts/eval-order.py FILE.c...; exits 1 when it finds any."""
import re
import sys

# Helpers taking L or b that build no instructions (constants, lookups, names).
PURE = {"lower_i32", "lower_i64", "ci32", "lower_type", "lower_val", "lower_layout_dup", "ab_name",
        "lower_error", "type_bytes", "lower_elem_bytes"}
FIRST = r"(?:L|b|L->b)"


def calls(src):
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", src):
        if m.group(1) in ("if", "while", "for", "switch", "return", "sizeof"):
            continue
        i, depth, args, cur = m.end(), 1, [], ""
        while i < len(src) and depth:
            ch = src[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if not depth:
                    break
            if ch == "," and depth == 1:
                args.append(cur)
                cur = ""
            else:
                cur += ch
            i += 1
        args.append(cur)
        yield m.start(), m.group(1), args


def emitter(arg):
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(\s*" + FIRST + r"\s*[,)]", arg):
        n = m.group(1)
        if n in PURE or (n.startswith("LLVM") and not n.startswith("LLVMBuild")):
            continue
        return n
    return None


def main(paths):
    found = 0
    for path in paths:
        src = open(path).read()
        blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
        src = re.sub(r"/\*.*?\*/", blank, src, flags=re.S)
        src = re.sub(r"//[^\n]*", blank, src)
        src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
        for pos, name, args in calls(src):
            em = [e for e in map(emitter, args) if e]
            if len(em) >= 2:
                line = src.count("\n", 0, pos) + 1
                print(f"{path}:{line}: {name}(): arguments emit instructions in an unspecified "
                      f"order ({', '.join(em)})")
                found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
