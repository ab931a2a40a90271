"""Tensors passed in place on the host device (aveBufferWrap, no staging copies): NumPy arrays and
torch CPU tensors, directly and through DLPack capsules, and the errors naming the argument."""
import ctypes
import os
import sys

import numpy as np
import pytest

import ave
from ave import _lib

from conftest import EXAMPLES

VADD = os.path.join(EXAMPLES, "vadd.ave")
GEMM = os.path.join(EXAMPLES, "gemm.ave")

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]


@pytest.fixture(scope="module")
def vadd():
    return ave.compile(VADD)


class DLPackOnly:
    """Exposes only the DLPack protocol of a tensor, and keeps the capsules it handed out."""

    def __init__(self, t, device=None):
        self.t = t
        self.device = device
        self.capsules = []
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        c = self.t.__dlpack__()
        self.capsules.append(c)
        return c

    def __dlpack_device__(self):
        return self.device if self.device is not None else self.t.__dlpack_device__()


class Spy:
    """Counts the libave calls a launch makes for its tensors."""

    NAMES = ("aveBufferWrap", "aveBufferCreate", "aveBufferUpload", "aveBufferDownload")

    def __init__(self, monkeypatch):
        self.calls = {n: 0 for n in self.NAMES}
        for n in self.NAMES:
            monkeypatch.setattr(_lib.lib, n, self._count(n, getattr(_lib.lib, n)))

    def _count(self, name, f):
        def call(*a):
            self.calls[name] += 1
            return f(*a)
        return call


def test_numpy_in_place(vadd, monkeypatch):
    """NumPy arrays are wrapped: nothing is allocated, uploaded or downloaded."""
    spy = Spy(monkeypatch)
    a = np.arange(3000, dtype=np.float32)
    b = np.full(3000, 0.25, np.float32)
    c = np.zeros(3000, np.float32)
    vadd[3](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    assert spy.calls == {"aveBufferWrap": 3, "aveBufferCreate": 0, "aveBufferUpload": 0,
                         "aveBufferDownload": 0}


def test_numpy_dlpack_in_place(vadd, monkeypatch):
    """A DLPack capsule of host memory is wrapped too: the kernel writes the producer's array;
    the capsules are renamed "used_dltensor" and their deleters ran (the arrays' references are
    back to what they were)."""
    a = np.arange(2048, dtype=np.float32)
    b = np.ones(2048, np.float32)
    c = np.zeros(2048, np.float32)
    wa, wb, wc = DLPackOnly(a), DLPackOnly(b), DLPackOnly(c)
    refs = [sys.getrefcount(x) for x in (a, b, c)]
    spy = Spy(monkeypatch)
    vadd[2](wa, wb, wc)
    np.testing.assert_array_equal(c, a + b)
    assert spy.calls["aveBufferWrap"] == 3 and spy.calls["aveBufferCreate"] == 0
    for w in (wa, wb, wc):
        assert [_api.PyCapsule_GetName(x) for x in w.capsules] == [b"used_dltensor"]
        assert w.streams == [None]  # host memory: no stream is asked for
        w.capsules.clear()
    assert [sys.getrefcount(x) for x in (a, b, c)] == refs


def test_dlpack_views(vadd):
    """Strided and reversed views through DLPack: a unit-stride window is written in place; a
    reversed output is copied and written back."""
    a = np.arange(3000, dtype=np.float32)
    b = np.full(3000, 2.0, np.float32)
    wide = np.full(3100, -1.0, np.float32)
    vadd[3](DLPackOnly(a), DLPackOnly(b), DLPackOnly(wide[50:3050]))
    np.testing.assert_array_equal(wide[50:3050], a + b)
    assert (wide[:50] == -1).all() and (wide[3050:] == -1).all()
    rev = np.zeros(3000, np.float32)
    vadd[3](DLPackOnly(a), DLPackOnly(b), DLPackOnly(rev[::-1]))
    np.testing.assert_array_equal(rev[::-1], a + b)


def test_read_only_is_copied(vadd):
    """A read-only array is passed as a copy: the kernel's stores do not reach it."""
    a = np.arange(1024, dtype=np.float32)
    c = np.zeros(1024, np.float32)
    c.flags.writeable = False
    vadd[1](a, a, c)
    assert (c == 0).all()


def test_torch_cpu_in_place(torch, monkeypatch):
    k = ave.compile(VADD)
    a = torch.arange(2048, dtype=torch.float32)
    b = torch.full((2048,), 0.5)
    c = torch.zeros(2048)
    spy = Spy(monkeypatch)
    k[2](a, b, c)
    assert torch.equal(c, a + b)
    assert spy.calls["aveBufferWrap"] == 3 and spy.calls["aveBufferCreate"] == 0


def test_torch_cpu_dlpack(torch, monkeypatch):
    """torch CPU tensors through their DLPack capsules, checked against NumPy."""
    k = ave.compile(VADD)
    a = torch.arange(3000, dtype=torch.float32)
    b = torch.linspace(0, 1, 3000)
    c = torch.zeros(3000)
    wa, wb, wc = DLPackOnly(a), DLPackOnly(b), DLPackOnly(c)
    spy = Spy(monkeypatch)
    k[3](wa, wb, wc)
    np.testing.assert_array_equal(c.numpy(), a.numpy() + b.numpy())
    assert spy.calls["aveBufferWrap"] == 3 and spy.calls["aveBufferCreate"] == 0
    assert all(_api.PyCapsule_GetName(w.capsules[0]) == b"used_dltensor" for w in (wa, wb, wc))


def test_torch_bf16_dlpack(torch):
    """bf16 from DLPack (type code 4) is the kernel's bf16, passed as it is."""
    k = ave.compile(GEMM)
    M, N, K = 128, 128, 64
    g = torch.Generator().manual_seed(5)
    A = torch.randn(M, K, generator=g).to(torch.bfloat16)
    B = torch.randn(N, K, generator=g).to(torch.bfloat16)
    C = torch.zeros(M, N)
    k[1, 1](DLPackOnly(A), DLPackOnly(B), DLPackOnly(C), K)
    ref = A.float().numpy() @ B.float().numpy().T
    np.testing.assert_allclose(C.numpy(), ref, rtol=1e-5, atol=1e-4)


def test_dlpack_errors(vadd, torch):
    f = np.zeros(1024, np.float32)
    with pytest.raises(TypeError, match=r"argument 1 \('%b'\): expects elements of type f32.*DLPack tensor of int32"):
        vadd[1](f, DLPackOnly(torch.zeros(1024, dtype=torch.int32)), f)
    with pytest.raises(ValueError, match=r"argument 2 \('%c'\).*stride 1"):
        vadd[1](f, f, DLPackOnly(np.zeros(2048, np.float32)[::2]))
    # A GPU tensor for a kernel that runs on the host: refused before its capsule is taken.
    gpu = DLPackOnly(np.zeros(1024, np.float32), device=(2, 0))
    with pytest.raises(ValueError, match=r"argument 0 \('%a'\): the tensor is on cuda:0, but kernel "
                       r"@vadd \(target host\) runs on the host device"):
        vadd[1](gpu, f, f)
    assert gpu.capsules == []
    with pytest.raises(TypeError, match=r"argument 0 \('%a'\): a DLPack tensor on device type vulkan"):
        vadd[1](DLPackOnly(f, device=(7, 0)), f, f)


def test_dlpack_released_on_error(vadd):
    """A capsule taken over is released when a later check refuses the launch."""
    a = np.zeros((32, 32), np.float32)
    w = DLPackOnly(a)
    before = sys.getrefcount(a)
    with pytest.raises(ValueError, match="rank 1"):
        vadd[1](np.zeros(1024, np.float32), w, np.zeros(1024, np.float32))
    assert _api.PyCapsule_GetName(w.capsules[0]) == b"used_dltensor"
    w.capsules.clear()
    assert sys.getrefcount(a) == before


def test_not_a_capsule(vadd):
    class Bad:
        def __dlpack__(self, stream=None):
            return 42

        def __dlpack_device__(self):
            return (1, 0)
    f = np.zeros(1024, np.float32)
    with pytest.raises(BufferError, match="not an unconsumed DLPack capsule"):
        vadd[1](f, Bad(), f)


def test_host_streams(vadd):
    f = np.zeros(1024, np.float32)

    class TorchLike:
        cuda_stream = 0x1234
    with pytest.raises(ValueError, match="host device has no native streams"):
        vadd.launch(1, [f, f, f], stream=TorchLike())
    vadd.launch(1, [f, f, f], stream=ave.Stream("host"))
