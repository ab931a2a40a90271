"""Compile errors carry their diagnostics; bad arguments are refused before anything runs."""
import os

import numpy as np
import pytest

import ave

from conftest import EXAMPLES

VADD = os.path.join(EXAMPLES, "vadd.ave")
GEMM = os.path.join(EXAMPLES, "gemm.ave")

BAD_PARSE = """ave.kernel @k() {threads = 64} {
  %x = ave.const 1 : i32
  %y = ave.add %x, %q : i32
  ave.return
}
"""
BAD_VERIFY = """ave.kernel @k() {threads = 64} {
  %x = ave.const 1 : i32
  %y = ave.const 2 : i32
  %z = ave.add %x, %y : f32
  ave.return
}
"""


def test_parse_error_location():
    with pytest.raises(ave.CompileError) as ei:
        ave.compile(BAD_PARSE)
    e = ei.value
    assert e.result == "AVE_ERROR_PARSE"
    d = e.diagnostics[0]
    assert (d.file, d.line, d.column, d.severity) == ("<string>", 3, 20, "error")
    assert "'%q'" in d.message
    assert "<string>:3:20: error" in str(e)


def test_parse_error_in_file(tmp_path):
    p = tmp_path / "bad.ave"
    p.write_text(BAD_PARSE)
    with pytest.raises(ave.CompileError) as ei:
        ave.compile(str(p))
    d = ei.value.diagnostics[0]
    assert d.file.endswith("bad.ave") and (d.line, d.column) == (3, 20)


def test_verify_error():
    with pytest.raises(ave.CompileError) as ei:
        ave.compile(BAD_VERIFY)
    assert ei.value.result == "AVE_ERROR_VERIFY"
    assert ei.value.diagnostics[0].line == 4


def test_check_error_counterexample():
    with pytest.raises(ave.CompileError) as ei:
        ave.compile(os.path.join(EXAMPLES, "bad_parity.ave"))
    e = ei.value
    assert e.result == "AVE_ERROR_CHECK"
    first = e.diagnostics[0]
    assert first.file.endswith("bad_parity.ave") and first.line > 0 and first.column > 0
    assert first.code == "check-invariants"
    cex = [d.counterexample for d in e.diagnostics if d.counterexample]
    assert cex and all(isinstance(c, dict) for c in cex)
    assert any("%k" in c and "role" in c for c in cex)


def test_bad_options():
    with pytest.raises(ValueError, match="unknown target"):
        ave.compile(VADD, target="sm_99")
    with pytest.raises(ValueError, match="unknown target 'sn_80'; did you mean 'sm_80'"):
        ave.compile(VADD, target="sn_80")
    # A pass error has no place in the file: it names no '<unknown>' one.
    with pytest.raises(ave.CompileError) as e:
        ave.compile(VADD, pipeline="csee", cache_dir=False)
    assert "<unknown>" not in str(e.value)
    assert "error: unknown pass 'csee'; did you mean 'cse'?" in str(e.value)
    with pytest.raises(ValueError, match="opt"):
        ave.compile(VADD, opt=7)
    with pytest.raises(ave.CompileError):
        ave.compile(VADD, pipeline="no-such-pass")
    with pytest.raises(FileNotFoundError):
        ave.compile("does/not/exist.ave")


@pytest.fixture(scope="module")
def vadd():
    return ave.compile(VADD)


@pytest.fixture(scope="module")
def gemm():
    return ave.compile(GEMM)


def f32(n):
    return np.zeros(n, np.float32)


def test_wrong_dtype(vadd):
    with pytest.raises(TypeError, match=r"argument 1 \('%b'\).*f32.*float64"):
        vadd[1](f32(1024), np.zeros(1024), f32(1024))
    with pytest.raises(TypeError, match="bf16"):
        gemm_ = ave.compile(GEMM)
        gemm_[1, 1](np.zeros((128, 64), np.int32), np.zeros((128, 64), np.uint16),
                    np.zeros((128, 128), np.float32), 64)


def test_wrong_kind(vadd):
    with pytest.raises(TypeError, match="expects a tensor"):
        vadd[1](f32(1024), [1.0] * 1024, f32(1024))


def test_wrong_rank(vadd):
    with pytest.raises(ValueError, match="rank 1"):
        vadd[1](f32(1024), np.zeros((32, 32), np.float32), f32(1024))


def test_wrong_stride(vadd):
    with pytest.raises(ValueError, match="stride 1"):
        vadd[1](f32(1024), f32(2048)[::2], f32(1024))


def test_wrong_count(vadd):
    with pytest.raises(TypeError, match="takes 3 arguments"):
        vadd[1](f32(1024), f32(1024))


def test_scalars(gemm):
    A = np.zeros((128, 64), np.uint16)
    C = np.zeros((128, 128), np.float32)
    with pytest.raises(TypeError, match=r"argument 3 \('%K'\).*integer"):
        gemm[1, 1](A, A, C, 64.0)
    with pytest.raises(TypeError, match="integer"):
        gemm[1, 1](A, A, C, "64")
    with pytest.raises(ValueError, match="does not fit index"):
        gemm[1, 1](A, A, C, 1 << 63)
    gemm[1, 1](A, A, C, np.int64(64))  # NumPy integers are integers


def test_scalar_float():
    k = ave.compile("""ave.kernel @scale(%x: !ave.tensor<?xf32, global, [1]>, %a: f32) {threads = 32} {
  %v = ave.load %x[0] : !ave.tile<32xf32, reg>
  %r = ave.mul %v, %a : !ave.tile<32xf32, reg>
  ave.store %r into(%x[0])
  ave.return
}
""")
    x = np.arange(32, dtype=np.float32)
    k[1](x, 2)  # an int is a valid f32
    np.testing.assert_array_equal(x, 2 * np.arange(32, dtype=np.float32))
    with pytest.raises(ValueError, match="overflows f32"):
        k[1](x, 1e39)
    with pytest.raises(TypeError, match="number"):
        k[1](x, "2")
    with pytest.raises(TypeError, match="number"):
        k[1](x, True)


def test_grid(vadd):
    with pytest.raises(ValueError, match="grid"):
        vadd[0](f32(1024), f32(1024), f32(1024))
    with pytest.raises(TypeError, match="grid"):
        vadd[1, 1, 1, 1](f32(1024), f32(1024), f32(1024))


def test_device_mismatch(vadd):
    with pytest.raises(ValueError, match="compiled for host"):
        vadd.launch(1, [f32(1024), f32(1024), f32(1024)], device="cuda")


def test_elements_outside_shape_are_masked(vadd):
    """Elements outside a tensor's shape are masked by the kernel's loads and stores, not errors."""
    a = np.arange(1000, dtype=np.float32)
    c = np.zeros(1000, np.float32)
    vadd[1](a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_foreign_stream(vadd):
    with pytest.raises(TypeError, match="ave.Stream"):
        vadd.launch(1, [f32(1024), f32(1024), f32(1024)], stream=object())


def test_library_not_found(tmp_path):
    """A bad AVE_LIBRARY is an OSError that names it."""
    import subprocess
    import sys
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=pkg, AVE_LIBRARY=str(tmp_path / "nope.so"))
    r = subprocess.run([sys.executable, "-c", "import ave"], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "OSError: ave: AVE_LIBRARY names" in r.stderr and "nope.so" in r.stderr


def test_static_sizes_and_pointer():
    k = ave.compile("""ave.kernel @sig(%n: index, %f: bf16, %p: !ave.ptr<f32>,
                  %B: !ave.tensor<4x?x8xi8, global, [?, ?, 1]>) {threads = 32} {
  ave.return
}
""")
    assert [(a["kind"], a["type"]) for a in k.args] == [
        ("int", "index"), ("float", "bf16"), ("pointer", "f32"), ("tensor", "i8")]
    p = np.zeros(16, np.float32)
    k[1](3, 1.5, p, np.zeros((4, 5, 8), np.int8))
    k[1](3, 1.5, p, np.zeros((4, 5, 8), np.uint8))  # either sign carries i8
    with pytest.raises(ValueError, match="size 4 in dimension 0"):
        k[1](3, 1.5, p, np.zeros((3, 5, 8), np.int8))
    with pytest.raises(TypeError, match="f32"):
        k[1](3, 1.5, np.zeros(16, np.int32), np.zeros((4, 5, 8), np.int8))
    with pytest.raises(ValueError, match="overflows bf16"):
        k[1](3, 1e39, p, np.zeros((4, 5, 8), np.int8))
