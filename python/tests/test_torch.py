"""torch CPU tensors on the host device (CUDA tensors: test_cuda.py)."""
import os

import numpy as np
import pytest

import ave

from conftest import EXAMPLES


def test_vadd_torch_cpu(torch):
    k = ave.compile(os.path.join(EXAMPLES, "vadd.ave"))
    a = torch.arange(2048, dtype=torch.float32)
    b = torch.full((2048,), 3.0)
    c = torch.zeros(2048)
    k[2](a, b, c)
    assert torch.equal(c, a + b)


def _gemm_inputs(torch, M, N, K, seed):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(M, K, generator=g).to(torch.bfloat16)
    B = torch.randn(N, K, generator=g).to(torch.bfloat16)
    ref = A.float().numpy() @ B.float().numpy().T
    return A, B, ref


def test_gemm_torch_bf16(torch):
    """torch.bfloat16 tensors are passed as they are (no conversion)."""
    k = ave.compile(os.path.join(EXAMPLES, "gemm.ave"))
    M, N, K = 128, 256, 128
    A, B, ref = _gemm_inputs(torch, M, N, K, 0)
    C = torch.zeros(M, N)
    k[M // 128, N // 128](A, B, C, K)
    np.testing.assert_allclose(C.numpy(), ref, rtol=1e-5, atol=1e-4)


def test_gemm_ws_torch(torch):
    k = ave.compile(os.path.join(EXAMPLES, "gemm_ws.ave"))
    M, N, K = 128, 256, 192
    A, B, ref = _gemm_inputs(torch, M, N, K, 1)
    C = torch.zeros(M, N)
    k[1, 1](A, B, C, K)
    np.testing.assert_allclose(C.numpy(), ref, rtol=1e-5, atol=1e-4)


def test_torch_views_and_errors(torch):
    k = ave.compile(os.path.join(EXAMPLES, "gemm.ave"))
    M, N, K = 128, 128, 64
    A, B, ref = _gemm_inputs(torch, M, N, K, 2)
    wide = torch.zeros(M, N + 16)
    k[1, 1](A, B, wide[:, :N], K)  # a row-strided output view, written in place
    np.testing.assert_allclose(wide[:, :N].numpy(), ref, rtol=1e-5, atol=1e-4)
    assert (wide[:, N:] == 0).all()
    with pytest.raises(TypeError, match="bf16.*int32"):
        k[1, 1](A.to(torch.int32), B, wide[:, :N], K)
    with pytest.raises(ValueError, match="stride 1"):
        k[1, 1](A, B, torch.zeros(N, M).t(), K)  # column-major C
    with pytest.raises(TypeError, match="integer"):
        k[1, 1](A, B, wide[:, :N], torch.tensor(64.0))
    k[1, 1](A, B, wide[:, :N], torch.tensor(64))  # a 0-d integer tensor is a scalar

