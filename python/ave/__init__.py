"""ave from Python: compile `.ave` kernels with libave and launch them on NumPy arrays and torch
tensors. See docs/python.md.

    import ave, numpy as np
    k = ave.compile("examples/vadd.ave")            # target="host": the interpreter
    a, b = np.ones(4096, np.float32), np.arange(4096, dtype=np.float32)
    c = np.empty_like(a)
    k[4](a, b, c)                                   # grid of 4 CTAs
"""
from ._lib import path as library_path
from ._lib import lib as _cdll

from ._diag import CompileError, DeviceError, Diagnostic, Error, LaunchError, LaunchWarning
from ._core import (Device, Kernel, Module, Stream, World, cache_stats, compile, device,
                    load_bundle)
from ._launch import bf16_bits, bf16_to_float32

__version__ = _cdll.aveGetVersion().decode()

__all__ = [
    "compile", "Kernel", "Module", "load_bundle", "device", "Device", "Stream", "World",
    "cache_stats",
    "Diagnostic", "Error", "CompileError", "LaunchError", "LaunchWarning", "DeviceError",
    "bf16_bits", "bf16_to_float32", "library_path", "__version__",
]
