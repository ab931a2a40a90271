"""Launching: checking Python arguments against a kernel's signature and passing them to libave.

Every tensor is staged through an ave buffer of the launch device: its memory span is uploaded
before the launch and, when the source is writable, downloaded back after it (ave.h has no call
that wraps memory it did not allocate). On the host device that is two memcpy per tensor."""
from __future__ import annotations

import ctypes
import math
import numbers
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._core import Device, Kernel, Stream, _target_device, device as _device
from ._diag import Collect, LaunchError
from ._lib import Handle, lib

# The element types of a tensor argument, and the dtypes (NumPy's or torch's names) that carry
# them bit for bit: integers of either sign, and bf16 / f8 as their bit patterns.
ACCEPT = {
    "f64": ("float64",),
    "f32": ("float32",),
    "f16": ("float16",),
    "bf16": ("bfloat16", "uint16", "int16"),
    "f8e4m3": ("float8_e4m3fn", "uint8", "int8"),
    "f8e5m2": ("float8_e5m2", "uint8", "int8"),
    "i64": ("int64", "uint64"),
    "index": ("int64", "uint64"),
    "i32": ("int32", "uint32"),
    "i16": ("int16", "uint16"),
    "i8": ("int8", "uint8"),
    "i1": ("bool", "uint8", "int8"),
}
# Float arrays the package converts (rounding to nearest even); such a converted copy is an input
# only: what the kernel writes to it is not copied back.
CONVERT = {"bf16": ("float32", "float64"), "f16": ("float32", "float64")}
INT_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64}
FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38,
             "f64": math.inf}


def bf16_bits(x: Any) -> np.ndarray:
    """float32 values as bf16 bit patterns (uint16), rounded to nearest even; NaN stays NaN."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), r)


def bf16_to_float32(bits: Any) -> np.ndarray:
    """bf16 bit patterns (uint16) as float32 values (exact)."""
    return (np.asarray(bits).astype(np.uint16).astype(np.uint32) << 16).view(np.float32)


def describe(a: dict) -> str:
    if a["kind"] == "tensor":
        dims = "x".join("?" if d < 0 else str(d) for d in a["dims"])
        st = ", ".join("?" if s < 0 else str(s) for s in a["strides"])
        return "tensor<%s%s%s, [%s]>" % (dims, "x" if dims else "", a["type"], st)
    if a["kind"] == "pointer":
        return "ptr<%s>" % a.get("type", "?")
    return a.get("type", a["kind"])


def _torch() -> Any:
    import sys
    return sys.modules.get("torch")  # only if the caller imported it: never import torch here


class _Staged:
    """One tensor argument as host memory: address, sizes and strides in elements, and what to
    do after the launch (copy the buffer back into it, then `finish`)."""

    def __init__(self, ptr: int, shape: Sequence[int], strides: Sequence[int], itemsize: int,
                 keep: Any, writeback: bool, finish: Optional[Callable[[], None]] = None):
        self.ptr = ptr
        self.shape = [int(n) for n in shape]
        self.strides = [int(s) for s in strides]
        self.itemsize = itemsize
        self.keep = keep
        self.writeback = writeback
        self.finish = finish
        empty = any(n == 0 for n in self.shape)
        self.span = 0 if empty else 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        self.nbytes = self.span * itemsize


def _where(k: Kernel, i: int) -> str:
    return "kernel @%s: argument %d ('%%%s')" % (k.name, i, k.args[i]["name"])


def _dtype_ok(k: Kernel, i: int, t: str, name: str) -> bool:
    """Whether dtype `name` carries element type `t`; False when it must be converted."""
    if name in ACCEPT.get(t, ()):
        return True
    if name in CONVERT.get(t, ()):
        return False
    allowed = ACCEPT.get(t, ()) + CONVERT.get(t, ())
    raise TypeError("%s: expects elements of type %s (dtype %s), got dtype %s"
                    % (_where(k, i), t, " or ".join(allowed) or "?", name))


def _from_numpy(k: Kernel, i: int, arr: np.ndarray, t: str, writable: Optional[bool] = None) -> _Staged:
    name = arr.dtype.name if arr.dtype.names is None else "structured"
    if arr.dtype.names == ("bf16",) and t == "bf16":  # what `ave run --out` writes for bf16
        arr = arr.view(np.uint16).reshape(arr.shape)
        name = "uint16"
    if not _dtype_ok(k, i, t, name):
        conv = bf16_bits(arr) if t == "bf16" else np.ascontiguousarray(arr, dtype=np.float16)
        return _Staged(conv.ctypes.data, conv.shape, [s // conv.itemsize for s in conv.strides],
                       conv.itemsize, conv, False)
    it = arr.itemsize
    w = arr.flags.writeable if writable is None else writable
    if all(s >= 0 and s % it == 0 for s in arr.strides):
        return _Staged(arr.ctypes.data, arr.shape, [s // it for s in arr.strides], it, arr, w)
    tmp = np.ascontiguousarray(arr)  # negative or unaligned strides: a C-order copy
    if w and not arr.flags.writeable:
        try:
            arr = arr.view()
            arr.flags.writeable = True  # memory a DLPack producer gave as writable
        except ValueError:
            w = False

    def back() -> None:
        arr[...] = tmp
    return _Staged(tmp.ctypes.data, tmp.shape, [s // it for s in tmp.strides], it, tmp, w, back)


def _from_torch(k: Kernel, i: int, t_: Any, t: str) -> _Staged:
    name = str(t_.dtype).replace("torch.", "")
    src = t_.detach()
    exact = _dtype_ok(k, i, t, name)
    torch = _torch()
    if not exact:
        conv = src.to(torch.bfloat16 if t == "bf16" else torch.float16).cpu().contiguous()
        return _Staged(conv.data_ptr(), conv.shape, conv.stride(), conv.element_size(), conv, False)
    if src.device.type == "cpu":
        return _Staged(src.data_ptr(), src.shape, src.stride(), src.element_size(), src, True)
    # A GPU tensor: staged through host memory (ave.h cannot wrap a device pointer or a torch
    # stream); .cpu() waits for the work queued on torch's current stream.
    host = src.contiguous().cpu()

    def back() -> None:
        src.copy_(host)
    return _Staged(host.data_ptr(), host.shape, host.stride(), host.element_size(), host, True, back)


def _tensor(k: Kernel, i: int, v: Any, t: str) -> _Staged:
    torch = _torch()
    if isinstance(v, np.ndarray):
        return _from_numpy(k, i, v, t)
    if torch is not None and isinstance(v, torch.Tensor):
        return _from_torch(k, i, v, t)
    if hasattr(v, "__dlpack__"):
        dev = v.__dlpack_device__()[0] if hasattr(v, "__dlpack_device__") else 1
        if dev == 1:  # kDLCPU: NumPy marks the import read-only, the memory is the producer's
            return _from_numpy(k, i, np.from_dlpack(v), t, writable=True)
        if torch is not None:
            return _from_torch(k, i, torch.utils.dlpack.from_dlpack(v), t)
        raise TypeError("%s: a DLPack tensor on device type %d needs torch imported" % (_where(k, i), dev))
    raise TypeError("%s: expects a tensor (NumPy array, torch tensor or DLPack object), got %s"
                    % (_where(k, i), type(v).__name__))


def _scalar(k: Kernel, i: int, v: Any, a: dict) -> Tuple[str, Union[int, float]]:
    t = a.get("type", "")
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    torch = _torch()
    if torch is not None and isinstance(v, torch.Tensor) and v.dim() == 0:
        v = v.item()
    if a["kind"] == "int":
        if not isinstance(v, numbers.Integral):
            raise TypeError("%s: expects an integer (%s), got %s %r" % (_where(k, i), t, type(v).__name__, v))
        n = int(v)
        bits = INT_BITS.get(t, 64)
        lo, hi = (0, 1) if bits == 1 else (-(1 << (bits - 1)), (1 << bits) - 1 if t != "index" else (1 << 63) - 1)
        if not lo <= n <= hi:
            raise ValueError("%s: %d does not fit %s (%d..%d)" % (_where(k, i), n, t, lo, hi))
        return "int", n
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError("%s: expects a number (%s), got %s %r" % (_where(k, i), t, type(v).__name__, v))
    f = float(v)
    if math.isfinite(f) and abs(f) > FLOAT_MAX.get(t, math.inf) * (1 + 2 ** -9):
        raise ValueError("%s: %r overflows %s" % (_where(k, i), v, t))
    return "float", f


def _grid(grid: Any) -> Tuple[int, int, int]:
    g = [grid] if isinstance(grid, numbers.Integral) else list(grid)
    if not 1 <= len(g) <= 3 or not all(isinstance(x, numbers.Integral) for x in g):
        raise TypeError("ave: grid must be an int or a tuple of 1 to 3 ints, got %r" % (grid,))
    g = [int(x) for x in g] + [1] * (3 - len(g))
    if not all(1 <= x < 1 << 32 for x in g):
        raise ValueError("ave: grid sizes must be in 1..2^32-1, got %r" % (grid,))
    return g[0], g[1], g[2]


def _pick_device(k: Kernel, args: List[Any], dev: Union[str, Device, None]) -> Device:
    if dev is None:
        torch = _torch()
        for v in args:
            if torch is not None and isinstance(v, torch.Tensor) and v.device.type == "cuda":
                dev = "cuda:%d" % (v.device.index or 0)
                break
        else:
            dev = k.default_device()
    kind = dev.kind if isinstance(dev, Device) else dev.partition(":")[0]
    want = _target_device(k.target)
    if kind != want:
        raise ValueError("ave: kernel @%s is compiled for %s, which runs on a %s device, not %s"
                         % (k.name, k.target, want, kind))
    return _device(dev)


def launch(k: Kernel, grid: Any, args: List[Any], dev: Union[str, Device, None],
           stream: Optional[Stream]) -> None:
    g = _grid(grid)
    if len(args) != len(k.args):
        raise TypeError("kernel @%s takes %d arguments (%s), %d given"
                        % (k.name, len(k.args), ", ".join("%" + n for n in k.arg_names), len(args)))
    # Check everything before anything runs.
    plan: List[Any] = []
    for i, (v, a) in enumerate(zip(args, k.args)):
        if a["kind"] == "tensor":
            st = _tensor(k, i, v, a["type"])
            if len(st.shape) != a["rank"]:
                raise ValueError("%s: expects rank %d (%s), got shape %s"
                                 % (_where(k, i), a["rank"], describe(a), tuple(st.shape)))
            for j, (n, want) in enumerate(zip(st.shape, a["dims"])):
                if want >= 0 and n != want:
                    raise ValueError("%s: expects size %d in dimension %d (%s), got shape %s"
                                     % (_where(k, i), want, j, describe(a), tuple(st.shape)))
            for j, (s, want) in enumerate(zip(st.strides, a["strides"])):
                if want >= 0 and st.shape[j] > 1 and s != want:
                    raise ValueError("%s: expects stride %d in dimension %d (%s), got strides %s "
                                     "(in elements); pass a contiguous array"
                                     % (_where(k, i), want, j, describe(a), tuple(st.strides)))
            # A dimension of size 1 may carry any stride; give it the declared one.
            st.strides = [want if want >= 0 and n <= 1 else s
                          for s, n, want in zip(st.strides, st.shape, a["strides"])]
            plan.append(st)
        elif a["kind"] == "pointer":
            st = _tensor(k, i, v, a.get("type", ""))
            st.shape, st.strides = [st.span], [1]
            plan.append(st)
        else:
            plan.append(_scalar(k, i, v, a))
    if stream is not None and not isinstance(stream, Stream):
        raise TypeError("ave: stream must be an ave.Stream (ave.h cannot wrap another library's "
                        "stream, such as torch's), got %s" % type(stream).__name__)
    d = _pick_device(k, args, dev)
    if stream is not None and stream.device is not d:
        raise ValueError("ave: the stream belongs to %r, the launch runs on %r" % (stream.device, d))

    bufs: List[Handle] = []
    h = Handle()
    with Collect() as diags:
        try:
            if lib.aveArgsCreate(ctypes.byref(h)):
                raise LaunchError("creating arguments", 1, diags)
            for x in plan:
                if isinstance(x, tuple):
                    r = lib.aveArgsAddInt(h, x[1]) if x[0] == "int" else lib.aveArgsAddFloat(h, x[1])
                else:
                    b = Handle()
                    r = lib.aveBufferCreate(d._h, max(x.nbytes, 1), ctypes.byref(b))
                    if r:
                        raise LaunchError("allocating %d bytes on %s" % (x.nbytes, d.kind), r, diags)
                    bufs.append(b)
                    if x.nbytes:
                        r = lib.aveBufferUpload(b, 0, x.ptr, x.nbytes)
                        if r:
                            raise LaunchError("uploading an argument", r, diags)
                    rank = len(x.shape)
                    sizes = (ctypes.c_int64 * max(rank, 1))(*x.shape)
                    strides = (ctypes.c_int64 * max(rank, 1))(*x.strides)
                    r = lib.aveArgsAddTensor(h, b, rank, sizes, strides)
                if r:
                    raise LaunchError("adding an argument", r, diags)
            gr = (ctypes.c_uint32 * 3)(*g)
            r = lib.aveKernelLaunch(k._h, d._h, gr, h, stream._h if stream is not None else Handle())
            if r:
                raise LaunchError("launching @%s on %s" % (k.name, d.kind), r, diags)
            r = lib.aveStreamSynchronize(stream._h) if stream is not None else lib.aveDeviceSynchronize(d._h)
            if r:
                raise LaunchError("running @%s on %s" % (k.name, d.kind), r, diags)
            it = iter(bufs)
            for x in plan:
                if isinstance(x, tuple):
                    continue
                b = next(it)
                if x.writeback and x.nbytes:
                    r = lib.aveBufferDownload(b, 0, x.ptr, x.nbytes)
                    if r:
                        raise LaunchError("downloading a result", r, diags)
                if x.writeback and x.finish is not None:
                    x.finish()
        finally:
            for b in bufs:
                lib.aveBufferDestroy(b)
            if h:
                lib.aveArgsDestroy(h)
