"""Launching: checking Python arguments against a kernel's signature and passing them to libave.

Memory the launch device can use is passed in place (aveBufferWrap): host arrays on the host
device, GPU tensors on their GPU, launched on torch's current stream (aveStreamWrap). Only what
cannot be used in place is copied: a host array for a GPU launch (staged: uploaded, downloaded
back), a dtype the package converts, an array with negative strides, read-only memory."""
from __future__ import annotations

import ctypes
import math
import numbers
import os
import sys
import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _dlpack
from ._core import Device, Kernel, Stream, _target_device, device as _device
from ._diag import Collect, LaunchError, LaunchWarning
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


Where = Tuple[str, int]  # ("cpu", 0), ("cuda", n) or ("hip", n)


def _fmt(w: Where) -> str:
    return "cpu" if w[0] == "cpu" else "%s:%d" % w


class _Tensor:
    """One tensor argument: `ptr` in memory at `where`, sizes and strides in elements.
    `temp`: memory the package made (a converted or reordered copy, input only unless `finish`
    copies it back); `writeback`: a host array staged to a GPU is downloaded back into after the
    launch; `finish` runs after that; `release` gives a DLPack producer its memory back."""

    def __init__(self, ptr: int, shape: Sequence[int], strides: Sequence[int], itemsize: int,
                 keep: Any, where: Where = ("cpu", 0), writeback: bool = True,
                 finish: Optional[Callable[[], None]] = None, temp: bool = False):
        self.ptr = ptr
        self.shape = [int(n) for n in shape]
        self.strides = [int(s) for s in strides]
        self.itemsize = itemsize
        self.keep = keep
        self.where = where
        self.writeback = writeback
        self.finish = finish
        self.temp = temp
        self.release: Optional[Callable[[], None]] = None
        self.staged = False  # set when a GPU launch uploads it
        self.dlpack_gpu = False
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


def _from_numpy(k: Kernel, i: int, arr: np.ndarray, t: str, writable: Optional[bool] = None,
                name: Optional[str] = None) -> _Tensor:
    """A host array. In place when its strides are non-negative multiples of its itemsize;
    otherwise a C-order copy that is copied back. A read-only array, and one whose dtype is
    converted, is passed as a copy and never written."""
    if name is None:
        name = arr.dtype.name if arr.dtype.names is None else "structured"
    if arr.dtype.names == ("bf16",) and t == "bf16":  # what `ave run --out` writes for bf16
        arr = arr.view(np.uint16).reshape(arr.shape)
        name = "uint16"
    if not _dtype_ok(k, i, t, name):
        conv = bf16_bits(arr) if t == "bf16" else np.ascontiguousarray(arr, dtype=np.float16)
        return _Tensor(conv.ctypes.data, conv.shape, [s // conv.itemsize for s in conv.strides],
                       conv.itemsize, conv, writeback=False, temp=True)
    it = arr.itemsize
    w = arr.flags.writeable if writable is None else writable
    if not w:  # the kernel may store to any tensor: give it a copy of read-only memory
        tmp = np.ascontiguousarray(arr).copy()
        return _Tensor(tmp.ctypes.data, tmp.shape, [s // it for s in tmp.strides], it, tmp,
                       writeback=False, temp=True)
    if all(s >= 0 and s % it == 0 for s in arr.strides):
        return _Tensor(arr.ctypes.data, arr.shape, [s // it for s in arr.strides], it, arr)
    tmp = np.ascontiguousarray(arr)  # negative or unaligned strides: a C-order copy

    def back() -> None:
        arr[...] = tmp
    return _Tensor(tmp.ctypes.data, tmp.shape, [s // it for s in tmp.strides], it, tmp,
                   finish=back, temp=True)


def _torch_where(v: Any) -> Where:
    if v.device.type == "cpu":
        return ("cpu", 0)
    if v.device.type == "cuda":
        torch = _torch()
        kind = "hip" if getattr(torch.version, "hip", None) else "cuda"
        return (kind, v.device.index if v.device.index is not None else torch.cuda.current_device())
    return (v.device.type, v.device.index or 0)


def _from_torch(k: Kernel, i: int, t_: Any, t: str) -> _Tensor:
    """A torch tensor, by its data_ptr() on its own device; a dtype the package converts becomes
    a converted copy on the same device (input only)."""
    torch = _torch()
    name = str(t_.dtype).replace("torch.", "")
    src = t_.detach()
    where = _torch_where(src)
    if not _dtype_ok(k, i, t, name):
        conv = src.to(torch.bfloat16 if t == "bf16" else torch.float16).contiguous()
        return _Tensor(conv.data_ptr(), conv.shape, conv.stride(), conv.element_size(), conv,
                       where, writeback=False, temp=True)
    if any(s < 0 for s in src.stride()):  # not made by torch itself, but refuse rather than guess
        raise ValueError("%s: negative strides %s" % (_where(k, i), tuple(src.stride())))
    return _Tensor(src.data_ptr(), src.shape, src.stride(), src.element_size(), src, where)


# numpy dtypes that view the bits of the DLPack types NumPy lacks.
_NP_VIEW = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}


def _dlpack_where(k: Kernel, i: int, v: Any) -> Where:
    dt, di = _dlpack.device_of(v)
    if dt in _dlpack.HOST_ACCESSIBLE and dt != _dlpack.CUDA_MANAGED:
        return ("cpu", 0)
    if dt in (_dlpack.CUDA, _dlpack.CUDA_MANAGED):
        return ("cuda", di)
    if dt == _dlpack.ROCM:
        return ("hip", di)
    raise TypeError("%s: a DLPack tensor on device type %s, which ave cannot launch on (cpu, "
                    "cuda, rocm)" % (_where(k, i), _dlpack.DEVICE_NAMES.get(dt, str(dt))))


def _from_dlpack(k: Kernel, i: int, v: Any, t: str, where: Where, stream_hint: Optional[int]) -> _Tensor:
    """Takes the tensor over through its capsule. Host memory becomes a NumPy view of the
    producer's memory (so it goes the way of any host array, in place where strides allow);
    GPU memory is passed by address."""
    imp = _dlpack.Imported(v, stream_hint if where[0] != "cpu" else None)
    try:
        if imp.dtype not in ACCEPT.get(t, ()) and (where[0] != "cpu" or imp.dtype not in CONVERT.get(t, ())):
            allowed = ACCEPT.get(t, ()) + (CONVERT.get(t, ()) if where[0] == "cpu" else ())
            raise TypeError("%s: expects elements of type %s (dtype %s), got a DLPack tensor of %s"
                            % (_where(k, i), t, " or ".join(allowed) or "?", imp.dtype))
        if where[0] == "cpu":
            st = _from_numpy(k, i, _numpy_view(imp), t, writable=not imp.read_only, name=imp.dtype)
        else:
            if any(s < 0 for s in imp.strides):
                raise ValueError("%s: a %s DLPack tensor with negative strides %s (ave copies only "
                                 "host memory; pass a copy)" % (_where(k, i), _fmt(where), tuple(imp.strides)))
            st = _Tensor(imp.ptr, imp.shape, imp.strides, imp.itemsize, imp, where,
                         writeback=not imp.read_only)
            st.dlpack_gpu = True
    except BaseException:
        imp.release()
        raise
    st.release = imp.release
    return st


def _numpy_view(imp: "_dlpack.Imported") -> np.ndarray:
    """A NumPy array over the host memory of an imported DLPack tensor (no copy)."""
    dt = np.dtype(_NP_VIEW.get(imp.dtype, imp.dtype))
    it = dt.itemsize
    if any(n == 0 for n in imp.shape):
        return np.empty(imp.shape, dt)
    lo = sum((n - 1) * s for n, s in zip(imp.shape, imp.strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(imp.shape, imp.strides) if s > 0)
    buf = (ctypes.c_char * ((hi - lo + 1) * it)).from_address(imp.ptr + lo * it)
    return np.ndarray(imp.shape, dt, buffer=buf, offset=-lo * it, strides=[s * it for s in imp.strides])


def _located(k: Kernel, i: int, v: Any) -> Where:
    """Where a tensor argument's memory is, without taking it over."""
    torch = _torch()
    if isinstance(v, np.ndarray):
        return ("cpu", 0)
    if torch is not None and isinstance(v, torch.Tensor):
        return _torch_where(v)
    if hasattr(v, "__dlpack__"):
        return _dlpack_where(k, i, v)
    raise TypeError("%s: expects a tensor (NumPy array, torch tensor or DLPack object), got %s"
                    % (_where(k, i), type(v).__name__))


def _tensor(k: Kernel, i: int, v: Any, t: str, where: Where, stream_hint: Optional[int]) -> _Tensor:
    torch = _torch()
    if isinstance(v, np.ndarray):
        return _from_numpy(k, i, v, t)
    if torch is not None and isinstance(v, torch.Tensor):
        return _from_torch(k, i, v, t)
    return _from_dlpack(k, i, v, t, where, stream_hint)


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


def _pick_device(k: Kernel, wheres: List[Optional[Where]], dev: Union[str, Device, None]) -> Device:
    """The launch device: `dev`, else the kind the kernel's target runs on (the device of the
    first tensor on that kind of GPU). Every GPU tensor must be on it (host arrays may be
    staged), else a ValueError names the argument."""
    want = k.default_device()
    if dev is None:
        gpu = next((w for w in wheres if w is not None and w[0] == want), None)
        dev = "%s:%d" % gpu if gpu else want
    kind = dev.kind if isinstance(dev, Device) else dev.partition(":")[0]
    if kind != want:
        raise ValueError("ave: kernel @%s is compiled for %s, which runs on a %s device, not %s"
                         % (k.name, k.target, want, kind))
    d = _device(dev)
    for i, w in enumerate(wheres):
        if w is None or w[0] == "cpu" or w == (d.kind, d.ordinal):
            continue
        if d.kind == "host":
            raise ValueError("%s: the tensor is on %s, but kernel @%s (target %s) runs on the host "
                             "device: pass host memory, or compile for the GPU"
                             % (_where(k, i), _fmt(w), k.name, k.target))
        raise ValueError("%s: the tensor is on %s, but the launch runs on %s:%d"
                         % (_where(k, i), _fmt(w), d.kind, d.ordinal))
    return d


def _stream(d: Device, stream: Any, args: List[Any],
            wheres: List[Optional[Where]]) -> Tuple[Optional[Handle], Optional[int], bool]:
    """The stream to launch on: (an ave stream handle, or None to wrap the native handle that
    comes second (None on host); whether that is torch's current stream). `stream=None` on a GPU
    device with a torch GPU tensor among the arguments is torch's current stream of the device,
    else the default stream."""
    torch = _torch()
    if isinstance(stream, Stream):
        if stream.device is not d:
            raise ValueError("ave: the stream belongs to %r, the launch runs on %r" % (stream.device, d))
        return stream._h, lib.aveStreamGetNative(stream._h) or 0, False
    native = getattr(stream, "cuda_stream", stream)  # torch.cuda.Stream, or a raw handle
    if stream is not None and (isinstance(native, bool) or not isinstance(native, numbers.Integral)):
        raise TypeError("ave: stream must be an ave.Stream, a torch.cuda.Stream (anything with "
                        "cuda_stream) or a native stream handle (int), got %s" % type(stream).__name__)
    if d.kind == "host":
        if stream is None:
            return None, None, False
        raise ValueError("ave: the host device has no native streams; stream must be None or an "
                         "ave.Stream of the host device, got %s" % type(stream).__name__)
    if stream is None:
        uses_torch = torch is not None and any(
            w is not None and w[0] != "cpu" and isinstance(v, torch.Tensor) for v, w in zip(args, wheres))
        if uses_torch:
            return None, int(torch.cuda.current_stream(d.ordinal).cuda_stream), True
        return None, 0, False
    sdev = getattr(stream, "device", None)
    if sdev is not None and getattr(sdev, "index", None) is not None and sdev.index != d.ordinal:
        raise ValueError("ave: the stream is on %s, the launch runs on %s:%d" % (sdev, d.kind, d.ordinal))
    cur = (torch is not None and torch.cuda.is_available()
           and int(torch.cuda.current_stream(d.ordinal).cuda_stream) == int(native))
    return None, int(native), cur


def _dlpack_stream(native: Optional[int]) -> Optional[int]:
    """The `stream` argument of __dlpack__ for a CUDA/ROCm consumer: 1 is the legacy default
    stream (0 is not allowed: it is ambiguous), else the handle."""
    if native is None:
        return None
    return native if native > 2 else (native or 1)


def launch(k: Kernel, grid: Any, args: List[Any], dev: Union[str, Device, None],
           stream: Any) -> None:
    g = _grid(grid)
    if len(args) != len(k.args):
        raise TypeError("kernel @%s takes %d arguments (%s), %d given"
                        % (k.name, len(k.args), ", ".join("%" + n for n in k.arg_names), len(args)))
    wheres: List[Optional[Where]] = [
        _located(k, i, v) if a["kind"] in ("tensor", "pointer") else None
        for i, (v, a) in enumerate(zip(args, k.args))]
    d = _pick_device(k, wheres, dev)
    sh, native, on_torch = _stream(d, stream, args, wheres)
    plan: List[Any] = []
    try:
        _launch(k, g, args, d, sh, native, on_torch, wheres, plan)
    finally:
        for x in plan:
            if isinstance(x, _Tensor) and x.release is not None:
                x.release()


def _check_shape(k: Kernel, i: int, st: _Tensor, a: dict) -> None:
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


def _plan(k: Kernel, args: List[Any], d: Device, wheres: List[Optional[Where]],
          hint: Optional[int], plan: List[Any]) -> None:
    """Checks each argument against the signature and appends what the launch passes: a
    _Tensor (staged when it is host memory for a GPU device) or a (kind, value) scalar."""
    for i, (v, a) in enumerate(zip(args, k.args)):
        if a["kind"] == "tensor":
            st = _tensor(k, i, v, a["type"], wheres[i], hint)
            plan.append(st)
            _check_shape(k, i, st, a)
        elif a["kind"] == "pointer":
            st = _tensor(k, i, v, a.get("type", ""), wheres[i], hint)
            plan.append(st)
            st.shape, st.strides = [st.span], [1]
        else:
            plan.append(_scalar(k, i, v, a))
    for x in plan:
        if isinstance(x, _Tensor):
            x.staged = d.kind != "host" and x.where[0] == "cpu"


def _caller_level() -> int:
    """The stacklevel, for the function that calls this one, of the first frame outside the
    package (the user's launch)."""
    pkg = os.path.dirname(os.path.abspath(__file__))
    f, level = sys._getframe(1), 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == pkg:
        f, level = f.f_back, level + 1
    return level


def _launch(k: Kernel, g: Tuple[int, int, int], args: List[Any], d: Device, sh: Optional[Handle],
            native: Optional[int], on_torch: bool, wheres: List[Optional[Where]], plan: List[Any]) -> None:
    # Check everything before anything runs.
    _plan(k, args, d, wheres, _dlpack_stream(native) if d.kind != "host" else None, plan)
    tensors = [x for x in plan if isinstance(x, _Tensor)]
    gpu = d.kind != "host"
    torch = _torch()
    if gpu and torch is not None and not on_torch and any(x.temp and not x.staged for x in tensors):
        # The package's converted copies were made on torch's current stream; the launch runs on
        # another one.
        torch.cuda.current_stream(d.ordinal).synchronize()
    # Synchronous unless every tensor is GPU memory of the caller's, passed in place: then the
    # launch is queued on the stream like a torch operation, and the call returns.
    sync = not gpu or any(x.staged or x.temp or x.dlpack_gpu for x in tensors)

    bufs: List[Handle] = []
    h = Handle()
    wrapped = Handle()
    with Collect() as diags:
        try:
            if sh is None and native is not None:
                r = lib.aveStreamWrap(d._h, native or None, ctypes.byref(wrapped))
                if r:
                    raise LaunchError("using stream 0x%x on %s" % (native, d.kind), r, diags)
                sh = wrapped
            _make_args(k, d, plan, h, bufs, diags)
            gr = (ctypes.c_uint32 * 3)(*g)
            r = lib.aveKernelLaunch(k._h, d._h, gr, h, sh if sh is not None else Handle())
            if r:
                raise LaunchError("launching @%s on %s" % (k.name, d.kind), r, diags)
            if sync:
                r = lib.aveStreamSynchronize(sh) if sh is not None else lib.aveDeviceSynchronize(d._h)
                if r:
                    raise LaunchError("running @%s on %s" % (k.name, d.kind), r, diags)
            _finish(plan, bufs, diags)
            for dg in diags:
                if dg.severity == "warning":
                    warnings.warn(LaunchWarning(dg), stacklevel=_caller_level())
        finally:
            for b in bufs:
                lib.aveBufferDestroy(b)  # the handle only, for wrapped memory
            if wrapped:
                lib.aveStreamDestroy(wrapped)
            if h:
                lib.aveArgsDestroy(h)


def _make_args(k: Kernel, d: Device, plan: List[Any], h: Handle, bufs: List[Handle],
               diags: Any) -> None:
    """Fills the argument list h from the checked plan: tensors in place where the device can
    use them, staged copies uploaded; every buffer made is appended to bufs."""
    if lib.aveArgsCreate(ctypes.byref(h)):
        raise LaunchError("creating arguments", 1, diags)
    for i, x in enumerate(plan):
        if isinstance(x, tuple):
            r = lib.aveArgsAddInt(h, x[1]) if x[0] == "int" else lib.aveArgsAddFloat(h, x[1])
        else:
            b = Handle()
            if x.nbytes and not x.staged:
                r = lib.aveBufferWrap(d._h, x.ptr, x.nbytes, ctypes.byref(b))
                what = "passing argument %d ('%%%s') in place" % (i, k.args[i]["name"])
            else:
                r = lib.aveBufferCreate(d._h, max(x.nbytes, 1), ctypes.byref(b))
                what = "allocating %d bytes on %s" % (x.nbytes, d.kind)
            if r:
                raise LaunchError(what, r, diags)
            bufs.append(b)
            if x.staged and x.nbytes:
                r = lib.aveBufferUpload(b, 0, x.ptr, x.nbytes)
                if r:
                    raise LaunchError("uploading an argument", r, diags)
            rank = len(x.shape)
            sizes = (ctypes.c_int64 * max(rank, 1))(*x.shape)
            strides = (ctypes.c_int64 * max(rank, 1))(*x.strides)
            r = lib.aveArgsAddTensor(h, b, rank, sizes, strides)
        if r:
            raise LaunchError("adding an argument", r, diags)


def _finish(plan: List[Any], bufs: List[Handle], diags: Any) -> None:
    """After the launch ran: staged results downloaded, converted copies written back."""
    it = iter(bufs)
    for x in plan:
        if not isinstance(x, _Tensor):
            continue
        b = next(it)
        if x.staged and x.writeback and x.nbytes:
            r = lib.aveBufferDownload(b, 0, x.ptr, x.nbytes)
            if r:
                raise LaunchError("downloading a result", r, diags)
        if x.finish is not None:
            x.finish()


def launch_world(k: Kernel, w: Any, grid: Any, ranks: Sequence[Sequence[Any]]) -> None:
    """Every rank's launch of k at once on world w (aveWorldLaunch): ranks[r] holds rank r's
    arguments, checked like a launch's; runs to completion."""
    g = _grid(grid)
    d = w.device
    if len(ranks) != w.size:
        raise TypeError("a world of %d ranks needs %d argument lists, %d given"
                        % (w.size, w.size, len(ranks)))
    plans: List[List[Any]] = []
    handles: List[Handle] = []
    bufs: List[List[Handle]] = []
    try:
        for q, args in enumerate(ranks):
            args = list(args)
            if len(args) != len(k.args):
                raise TypeError("rank %d: kernel @%s takes %d arguments (%s), %d given"
                                % (q, k.name, len(k.args),
                                   ", ".join("%" + n for n in k.arg_names), len(args)))
            wheres: List[Optional[Where]] = [
                _located(k, i, v) if a["kind"] in ("tensor", "pointer") else None
                for i, (v, a) in enumerate(zip(args, k.args))]
            plan: List[Any] = []
            plans.append(plan)
            _plan(k, args, d, wheres, None, plan)
        with Collect() as diags:
            for plan in plans:
                h = Handle()
                handles.append(h)
                bufs.append([])
                _make_args(k, d, plan, h, bufs[-1], diags)
            gr = (ctypes.c_uint32 * 3)(*g)
            arr = (Handle * len(handles))(*handles)
            r = lib.aveWorldLaunch(k._h, w._h, gr, arr, Handle())
            if r:
                raise LaunchError("launching @%s on a world of %d ranks of %s"
                                  % (k.name, w.size, d.kind), r, diags)
            r = lib.aveDeviceSynchronize(d._h)
            if r:
                raise LaunchError("running @%s on a world of %d ranks of %s"
                                  % (k.name, w.size, d.kind), r, diags)
            for plan, b in zip(plans, bufs):
                _finish(plan, b, diags)
    finally:
        for bl in bufs:
            for b in bl:
                lib.aveBufferDestroy(b)
        for h in handles:
            if h:
                lib.aveArgsDestroy(h)
        for plan in plans:
            for x in plan:
                if isinstance(x, _Tensor) and x.release is not None:
                    x.release()
