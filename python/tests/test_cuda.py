"""torch CUDA tensors and CUDA DLPack tensors launched in place (no copies) on torch's streams,
against torch's own results. Every test skips, with the reason, where there is no CUDA GPU; lit
runs this file where there is one (test/python/pytest-cuda.test, REQUIRES: cuda-gpu)."""
import os

import numpy as np
import pytest

import ave
from ave import _lib

from conftest import EXAMPLES

VADD = os.path.join(EXAMPLES, "vadd.ave")
GEMM = os.path.join(EXAMPLES, "gemm.ave")


@pytest.fixture
def cuda(torch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU (torch.cuda.is_available() is False)")
    if getattr(torch.version, "hip", None):
        pytest.skip("torch is built for ROCm: these tests are for the cuda device")
    return torch


def _target(torch):
    major, _ = torch.cuda.get_device_capability()
    return "sm_90a" if major >= 9 else "sm_80"


@pytest.fixture
def vadd(cuda):
    return ave.compile(VADD, target=_target(cuda))


class DLPackOnly:
    def __init__(self, t):
        self.t = t
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def _count_copies(monkeypatch):
    calls = {"wrap": 0, "create": 0}
    for name, key in (("aveBufferWrap", "wrap"), ("aveBufferCreate", "create")):
        f = getattr(_lib.lib, name)

        def spy(*a, f=f, key=key):
            calls[key] += 1
            return f(*a)
        monkeypatch.setattr(_lib.lib, name, spy)
    return calls


def test_torch_cuda_in_place(cuda, vadd, monkeypatch):
    """CUDA tensors by pointer, on torch's current stream: torch's next op sees the result
    without any synchronization by the caller."""
    torch = cuda
    a = torch.arange(5000, dtype=torch.float32, device="cuda")
    b = torch.rand(5000, device="cuda")
    c = torch.zeros(5000, device="cuda")
    calls = _count_copies(monkeypatch)
    vadd[5](a, b, c)
    assert torch.equal(c, a + b)
    assert calls == {"wrap": 3, "create": 0}


def test_torch_cuda_side_stream(cuda, vadd):
    torch = cuda
    s = torch.cuda.Stream()
    a = torch.arange(4096, dtype=torch.float32, device="cuda")
    b = torch.full((4096,), 2.0, device="cuda")
    c = torch.zeros(4096, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):  # torch's current stream is s: the launch goes there
        vadd[4](a, b, c)
        d = c * 1  # ordered after the kernel on s
    s.synchronize()
    assert torch.equal(d, a + b)
    c2 = torch.zeros(4096, device="cuda")
    vadd.launch(4, [a, b, c2], stream=s)  # a torch stream given explicitly
    s.synchronize()
    assert torch.equal(c2, a + b)
    c3 = torch.zeros(4096, device="cuda")
    vadd.launch(4, [a, b, c3], stream=s.cuda_stream)  # the raw CUstream
    s.synchronize()
    assert torch.equal(c3, a + b)


def test_cuda_dlpack(cuda, vadd):
    """CUDA DLPack tensors by pointer; the producer is told the stream the launch runs on."""
    torch = cuda
    a = torch.arange(2048, dtype=torch.float32, device="cuda")
    b = torch.ones(2048, device="cuda")
    c = torch.zeros(2048, device="cuda")
    wc = DLPackOnly(c)
    vadd[2](DLPackOnly(a), DLPackOnly(b), wc)
    assert torch.equal(c, a + b)
    assert wc.streams == [1]  # no torch tensor among the arguments: the legacy default stream


def test_gemm_bf16_cuda(cuda):
    torch = cuda
    k = ave.compile(GEMM, target=_target(torch))
    M, N, K = 256, 256, 128
    g = torch.Generator(device="cuda").manual_seed(0)
    A = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    B = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
    C = torch.zeros(M, N, device="cuda")
    k[M // 128, N // 128](A, B, C, K)
    ref = A.float() @ B.float().T
    torch.testing.assert_close(C, ref, rtol=1e-3, atol=1e-3)


def test_numpy_staged_to_cuda(cuda, vadd):
    """Host arrays for a GPU launch are staged (copied in and back), synchronously."""
    a = np.arange(3000, dtype=np.float32)
    b = np.ones(3000, np.float32)
    c = np.zeros(3000, np.float32)
    vadd[3](a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_cuda_errors(cuda, vadd):
    torch = cuda
    host = ave.compile(VADD)
    x = torch.zeros(1024, device="cuda")
    with pytest.raises(ValueError, match=r"argument 0 \('%a'\): the tensor is on cuda:0, but kernel @vadd "
                       r"\(target host\) runs on the host device"):
        host[1](x, np.zeros(1024, np.float32), np.zeros(1024, np.float32))
    with pytest.raises(TypeError, match=r"argument 1 \('%b'\).*f32.*int32"):
        vadd[1](x, torch.zeros(1024, dtype=torch.int32, device="cuda"), x)
    with pytest.raises(ValueError, match=r"argument 2 \('%c'\).*stride 1"):
        vadd[1](x, x, torch.zeros(2048, device="cuda")[::2])
    if torch.cuda.device_count() > 1:
        y = torch.zeros(1024, device="cuda:1")
        with pytest.raises(ValueError, match=r"argument 1 \('%b'\): the tensor is on cuda:1, but the launch runs on cuda:0"):
            vadd[1](x, y, x)
