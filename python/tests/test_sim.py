"""Kernels compiled for a simulated device (target "sim-<gpu target>"): the emitted code of that
target run on the CPU (docs/testing.md), launched from Python with NumPy arrays in place."""
import os

import numpy as np
import pytest

import ave

from conftest import EXAMPLES

VADD = os.path.join(EXAMPLES, "vadd.ave")
GEMM = os.path.join(EXAMPLES, "gemm.ave")


@pytest.mark.parametrize("target", ["sim-sm_80", "sim-gfx942"])
def test_vadd_on_a_simulated_device(target):
    k = ave.compile(VADD, target=target)
    assert k.default_device() == target
    assert k.metadata["binary"] == "llvm"
    a = np.arange(1000, dtype=np.float32)
    b = np.full(1000, 0.5, dtype=np.float32)
    c = np.zeros(1000, dtype=np.float32)
    k[(1000 + 255) // 256](a, b, c)
    np.testing.assert_array_equal(c, a + 0.5)


def test_gemm_matches_the_interpreter_bit_for_bit():
    rng = np.random.default_rng(3)
    A = ave.bf16_bits(rng.standard_normal((130, 72), dtype=np.float32))
    B = ave.bf16_bits(rng.standard_normal((96, 72), dtype=np.float32))
    outs = []
    for target in ("host", "sim-sm_90a"):
        k = ave.compile(GEMM, target=target)
        C = np.zeros((130, 96), dtype=np.float32)
        k[(2, 1)](A, B, C, 72)
        outs.append(C)
    assert outs[0].tobytes() == outs[1].tobytes()


def test_a_simulated_kernel_does_not_run_on_the_host_device():
    k = ave.compile(VADD, target="sim-sm_80")
    x = np.zeros(64, dtype=np.float32)
    with pytest.raises(ValueError, match="runs on a sim-sm_80 device, not host"):
        k.launch(1, [x, x, x], device="host")
