"""The compile cache: libave's, shared with the C API and the tools; safe across threads."""
import os
import subprocess
import sys
import threading

import ave

from conftest import EXAMPLES

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _unique_source(tag):
    # A kernel text no other test compiles, so the cache starts cold for it.
    text = open(os.path.join(EXAMPLES, "vadd.ave")).read()
    return text.replace("@vadd", "@vadd_%s" % tag)


def _entries(d):
    return sorted(f for _, _, fs in os.walk(d) for f in fs)


def test_threads_share_the_cache(tmp_path):
    src = _unique_source("threads")
    barrier = threading.Barrier(2)
    out, errs = [None, None], []

    def work(i):
        try:
            barrier.wait()
            out[i] = ave.compile(src, cache_dir=tmp_path)
        except Exception as e:  # reported below
            errs.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs, errs
    assert all(k.name == "vadd_threads" for k in out)
    st = ave.cache_stats(tmp_path)
    assert st["memory_hits"] + st["disk_hits"] + st["misses"] == 2 and st["misses"] >= 1
    assert len(_entries(tmp_path)) == 1  # one entry, whichever thread wrote it last

    # A fresh process (a fresh libave context) finds it on disk, through $AVE_CACHE_DIR.
    code = ("import ave,sys; ave.compile(sys.argv[1]); s=ave.cache_stats(); "
            "print(s['disk_hits'], s['misses'])")
    env = dict(os.environ, AVE_CACHE_DIR=str(tmp_path), PYTHONPATH=PKG)
    p = tmp_path.parent / "src.ave"
    p.write_text(src)
    r = subprocess.run([sys.executable, "-c", code, str(p)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "0"]


def test_many_threads_compile_and_launch(tmp_path):
    import numpy as np
    errs = []

    def work(i):
        try:
            k = ave.compile(_unique_source("t%d" % (i % 3)), cache_dir=tmp_path)
            a = np.full(1024, i, np.float32)
            c = np.zeros(1024, np.float32)
            k[1](a, a, c)
            assert (c == 2 * i).all()
        except Exception as e:
            errs.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs, errs
    assert len(_entries(tmp_path)) == 3


def test_no_disk_cache(tmp_path):
    k = ave.compile(_unique_source("nodisk"), cache_dir=False)
    assert k.name == "vadd_nodisk"


def test_a_cache_hit_reports_the_compile_warnings(tmp_path):
    # The warnings of the compile that filled an entry come back with every hit, from memory
    # and from the disk (another process), with their locations.
    src = _unique_source("warn").replace("{threads = 256}", "{threads = 256, persistant = 4}")
    first = ave.compile(src, cache_dir=tmp_path)
    again = ave.compile(src, cache_dir=tmp_path)
    msgs = [(d.severity, d.line, d.column, d.message) for d in first.diagnostics]
    assert any("did you mean 'persistent'" in m for _, _, _, m in msgs), msgs
    assert [(d.severity, d.line, d.column, d.message) for d in again.diagnostics] == msgs
    code = ("import ave, sys\n"
            "k = ave.compile(sys.argv[1], cache_dir=sys.argv[2])\n"
            "print(ave.cache_stats(sys.argv[2])['disk_hits'], [d.message for d in k.diagnostics])\n")
    p = tmp_path / "k.ave"
    p.write_text(src)
    out = subprocess.run([sys.executable, "-c", code, str(p), str(tmp_path)], check=True,
                         capture_output=True, text=True, env=dict(os.environ)).stdout
    assert out.startswith("1 ") and "did you mean 'persistent'" in out, out
