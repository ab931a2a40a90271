"""What the overlap generators (ov_fuzz.py, rs_fuzz.py) share: running a command, and the main
loop: `GEN.py WORKDIR SEED COUNT` runs COUNT cases from one seed, prints one line per case
("ok ..." or "FAIL ...") and then "N passed, N failed"; exit status 1 when any failed."""
import random
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main(case):
    work, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    r = random.Random(seed)
    bad = 0
    for i in range(count):
        line = case(work, "c%d" % i, r)
        bad += line.startswith("FAIL")
        print(line, flush=True)
    print("%d passed, %d failed" % (count - bad, bad))
    return 1 if bad else 0
