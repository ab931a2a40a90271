#!/usr/bin/env python3
"""gen_nested.py KIND N — writes an .ave input that nests KIND N levels deep (or N long) to
stdout, for the limit tests: parens, neg, chain, regions, loops, arrays, ptrs, longline."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
head = "ave.kernel @k(%n: index, %c: i1) {threads = 32} {\n"
tail = "  ave.return\n}\n"
if kind == "parens":
    print(head + "  %x = ave.index " + "(" * n + "%n" + ")" * n + "\n" + tail, end="")
elif kind == "neg":
    print(head + "  %x = ave.index " + "-" * n + "%n\n" + tail, end="")
elif kind == "chain":
    print(head + "  %x = ave.index %n" + " + 1" * n + "\n" + tail, end="")
elif kind == "regions":
    print(head + "ave.if %c {\n" * n + "}\n" * n + tail, end="")
elif kind == "loops":
    out = [head]
    for i in range(n):
        out.append("%%r%d = ave.for %%i%d = 0 to %%n step 1 iter_args(%%x%d = 0 : i32) -> (i32) {\n"
                   % (i, i, i))
    for i in reversed(range(n)):
        out.append("ave.yield %%x%d : i32\n}\n" % i)
    print("".join(out) + tail, end="")
elif kind == "arrays":
    print("ave.kernel @k() {threads = 32, x = " + "[" * n + "]" * n + "} {\n" + tail, end="")
elif kind == "ptrs":
    print("ave.kernel @k(%p: " + "!ave.ptr<" * n + "f32" + ">" * n + ") {threads = 32} {\n" + tail,
          end="")
elif kind == "longline":
    print(head + " " * n + "~\n" + tail, end="")
elif kind == "kernels":
    print("".join("ave.kernel @k%d(%%n: index) {threads = 32} {\n  %%x = ave.index %%n * 4 + 1\n"
                  "  ave.return\n}\n" % i for i in range(n)), end="")
else:
    sys.exit("unknown kind " + kind)
