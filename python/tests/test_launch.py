"""Compiling and running the examples on the host device, with NumPy arrays."""
import os

import numpy as np
import pytest

import ave

from conftest import EXAMPLES

VADD = os.path.join(EXAMPLES, "vadd.ave")


def bf16_gemm_inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    A = ave.bf16_bits(rng.standard_normal((M, K), dtype=np.float32))
    B = ave.bf16_bits(rng.standard_normal((N, K), dtype=np.float32))
    ref = ave.bf16_to_float32(A) @ ave.bf16_to_float32(B).T
    return A, B, ref


def test_library_and_version():
    assert ave.__version__.count(".") == 2
    assert os.path.basename(ave.library_path).startswith("libave.so")


def test_vadd_numpy():
    k = ave.compile(VADD)
    assert isinstance(k, ave.Kernel)
    a = np.arange(4096, dtype=np.float32)
    b = np.full(4096, 0.5, np.float32)
    c = np.zeros(4096, np.float32)
    k[4](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    c2 = np.zeros_like(c)
    k.launch((4, 1, 1), [a, b, c2], device="host")
    np.testing.assert_array_equal(c2, a + b)


def test_metadata():
    k = ave.compile(VADD, target="host", opt=2)
    assert k.name == "vadd" and k.target == "host" and k.threads == 256
    m = k.metadata
    assert m["target"] == "host" and m["threads"] == 256 and m["block"] == [256, 1, 1]
    assert "registers" in m
    assert [(a["name"], a["kind"], a["type"], a["rank"]) for a in m["args"]] == [
        ("a", "tensor", "f32", 1), ("b", "tensor", "f32", 1), ("c", "tensor", "f32", 1)]
    assert k.arg_names == ["a", "b", "c"]
    assert "%a: tensor<?xf32, [1]>" in k.signature


def test_text_source_and_module():
    text = open(VADD).read()
    k = ave.compile(text)
    assert k.name == "vadd"
    two = text + text.replace("@vadd", "@vadd2").replace("ave.add", "ave.sub")
    mod = ave.compile(two)
    assert isinstance(mod, ave.Module) and list(mod) == ["vadd", "vadd2"]
    a = np.arange(1024, dtype=np.float32)
    b = np.ones(1024, np.float32)
    c = np.zeros(1024, np.float32)
    mod["vadd2"][1](a, b, c)
    np.testing.assert_array_equal(c, a - b)
    assert ave.compile(two, kernel="@vadd2").name == "vadd2"
    with pytest.raises(ValueError, match="no kernel @nope"):
        ave.compile(two, kernel="nope")


def test_gemm_bf16_bits():
    """bf16 tensors are passed as their bit patterns (uint16), as `ave run` reads `<u2` .npy."""
    k = ave.compile(os.path.join(EXAMPLES, "gemm.ave"))
    M, N, K = 256, 128, 192
    A, B, ref = bf16_gemm_inputs(M, N, K)
    C = np.zeros((M, N), np.float32)
    k[M // 128, N // 128](A, B, C, K)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)


def test_gemm_bf16_from_float32():
    """float32 arrays for bf16 parameters are rounded to bf16 (nearest even) by the package."""
    k = ave.compile(os.path.join(EXAMPLES, "gemm.ave"))
    M, N, K = 128, 128, 64
    A, B, ref = bf16_gemm_inputs(M, N, K, seed=1)
    C = np.zeros((M, N), np.float32)
    Af, Bf = ave.bf16_to_float32(A), ave.bf16_to_float32(B)
    k[1, 1](Af, Bf, C, K)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(Af, ave.bf16_to_float32(A))  # inputs left alone


def test_gemm_strided_view():
    """A row-strided view (stride > row length) is passed with its own strides, no copy."""
    k = ave.compile(os.path.join(EXAMPLES, "gemm.ave"))
    M, N, K = 128, 128, 64
    A, B, ref = bf16_gemm_inputs(M, N, K, seed=2)
    wide = np.zeros((M, K + 32), np.uint16)
    wide[:, :K] = A
    Cwide = np.full((M, N + 8), -1.0, np.float32)
    k[1, 1](wide[:, :K], B, Cwide[:, :N], K)
    np.testing.assert_allclose(Cwide[:, :N], ref, rtol=1e-5, atol=1e-4)
    assert (Cwide[:, N:] == -1).all()


def test_gemm_ws():
    """The hand-written warp-specialized GEMM, run by the interpreter with its roles."""
    k = ave.compile(os.path.join(EXAMPLES, "gemm_ws.ave"))
    assert k.threads == 384
    M, N, K = 128, 256, 256
    A, B, ref = bf16_gemm_inputs(M, N, K, seed=3)
    C = np.zeros((M, N), np.float32)
    k[1, 1](A, B, C, K)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)


def test_gemm_ws_schedules():
    k = ave.compile(os.path.join(EXAMPLES, "gemm_ws.ave"))
    dev = ave.device("host")
    M, N, K = 128, 256, 128
    A, B, ref = bf16_gemm_inputs(M, N, K, seed=4)
    C = np.zeros((M, N), np.float32)
    dev.set_schedules(3, seed=7)
    try:
        k.launch((1, 1), [A, B, C, K], device=dev)
    finally:
        dev.set_schedules(1, seed=0)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)


class _DLPackOnly:
    """Exposes only the DLPack protocol of an array."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack():
    k = ave.compile(VADD)
    a = np.arange(1024, dtype=np.float32)
    b = np.ones(1024, np.float32)
    c = np.zeros(1024, np.float32)
    k[1](_DLPackOnly(a), _DLPackOnly(b), _DLPackOnly(c))
    np.testing.assert_array_equal(c, a + b)


def test_bundle_roundtrip(tmp_path):
    k = ave.compile(VADD)
    p = tmp_path / "vadd.avb"
    k.write_bundle(p)
    k2 = ave.load_bundle(p)
    assert k2.name == "vadd" and k2.target == "host"
    a = np.arange(1024, dtype=np.float32)
    c = np.zeros(1024, np.float32)
    k2[1](a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_gemm_bf16_structured_npy(tmp_path):
    """A `[('bf16', '<u2')]` array, what `ave run --out` writes for bf16, is read as its bits."""
    k = ave.compile(os.path.join(EXAMPLES, "gemm.ave"))
    M, N, K = 128, 128, 64
    A, B, ref = bf16_gemm_inputs(M, N, K, seed=5)
    bf16 = np.dtype([("bf16", "<u2")])
    p = tmp_path / "a.npy"
    np.save(p, A.view(bf16).reshape(A.shape))
    As = np.load(p)
    assert As.dtype == bf16
    C = np.zeros((M, N), np.float32)
    k[1, 1](As, B.view(bf16).reshape(B.shape), C, K)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)


def test_lineinfo_reaches_the_binary():
    """lineinfo=True: the binary carries a line table naming the .ave file (the HSACO's
    .debug_line, which LLVM writes in-process; NVIDIA's goes through ptxas); without it, none."""
    try:
        k = ave.compile(VADD, target="gfx942", lineinfo=True, cache_dir=False)
    except ave.CompileError as e:
        pytest.skip("gfx942 does not compile in this build: %s" % e)
    plain = ave.compile(VADD, target="gfx942", cache_dir=False)
    assert k.binary[:4] == b"\x7fELF" and plain.binary[:4] == b"\x7fELF"
    assert b".debug_line" in k.binary and b"vadd.ave" in k.binary
    assert b".debug_line" not in plain.binary
    host = ave.compile(VADD, lineinfo=True)  # ignored on host: the binary is the .ave text
    assert host.binary.startswith(b"// c[i] = a[i] + b[i]")


def test_a_grid_too_small_warns():
    # The host device's warning about outputs no CTA fully wrote reaches Python's warnings,
    # pointing at the caller's line; a grid that covers them says nothing.
    import warnings
    k = ave.compile(os.path.join(EXAMPLES, "vadd.ave"))
    a = np.ones(3000, np.float32)
    c = np.zeros(3000, np.float32)
    with pytest.warns(ave.LaunchWarning, match="1976 of 3000 elements were not written") as w:
        k[1](a, a, c)
    assert w[0].filename == __file__
    assert w[0].message.diagnostic.severity == "warning"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[3](a, a, c)
    np.testing.assert_array_equal(c, 2 * a)
