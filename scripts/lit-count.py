#!/usr/bin/env python3
"""Counts a lit run honestly from its JSON report (lit -o REPORT.json): passed (PASS, FLAKYPASS,
XFAIL), failed (FAIL, XPASS, UNRESOLVED, TIMEOUT) and skipped (UNSUPPORTED, SKIPPED, EXCLUDED);
a unit-test program (test/unit/*.test) counts as its checks, read from the "N passed, N failed"
line it leaves in Output/<test>.tmp.out, not as one test. Prints "PASSED FAILED SKIPPED", and
the name of every test that did not pass on stderr. Usage: lit-count.py REPORT.json OBJ_ROOT"""
import json
import os
import re
import sys

PASS = {"PASS", "FLAKYPASS", "XFAIL"}
SKIP = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}


def unit_counts(obj_root, name):
    rel = name.split(" :: ", 1)[1]  # unit/unit_rt.test
    path = os.path.join(obj_root, "test", os.path.dirname(rel), "Output",
                        os.path.basename(rel) + ".tmp.out")
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.findall(r"^(\d+) passed, (\d+) failed$", text, re.M)
    return (int(m[-1][0]), int(m[-1][1])) if m else None


def main(report, obj_root):
    tests = json.load(open(report))["tests"]
    passed = failed = skipped = 0
    for t in tests:
        code, name = t["code"], t["name"]
        if ":" in name.split(" :: ", 1)[-1] and name.count("::") > 1:
            continue  # a micro-test, counted with its parent
        unit = unit_counts(obj_root, name) if " :: unit/" in name and code not in SKIP else None
        if code in SKIP:
            skipped += 1
        elif unit and code in PASS:
            passed += unit[0]
            failed += unit[1]
        elif unit:
            # The program ran but lit failed it (a crash, a nonzero exit): its failed checks,
            # and at least one failure.
            passed += unit[0]
            failed += max(unit[1], 1)
            print(f"{code}: {name} ({unit[1]} checks failed)", file=sys.stderr)
        elif code in PASS:
            passed += 1
        else:
            failed += 1
            print(f"{code}: {name}", file=sys.stderr)
    print(passed, failed, skipped)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
