"""Contexts, compiling, kernels and devices over libave.

One libave context per cache directory, created on first use and kept for the process (libave's
in-memory cache lives in the context, so every compile of the process shares it); devices are
opened once per (kind, ordinal) and kept open. Both tables are locked, so threads may compile
and launch at once; libave itself is thread-safe for that (docs/jit.md)."""
from __future__ import annotations

import ctypes
import difflib
import json
import os
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._diag import Collect, CompileError, DeviceError, Diagnostic, HANDLER, LaunchError
from ._lib import Handle, lib

_DEFAULT = object()  # the key of the context that uses libave's default cache directory
_lock = threading.Lock()
_contexts: Dict[Any, Handle] = {}
_devices: Dict[Tuple[str, int], "Device"] = {}


def _context(cache_dir: Any = _DEFAULT) -> Handle:
    """The context for `cache_dir`: _DEFAULT (libave's default directory), False (no disk
    cache) or a path."""
    key = _DEFAULT if cache_dir is _DEFAULT else (os.path.abspath(os.fspath(cache_dir)) if cache_dir else False)
    with _lock:
        c = _contexts.get(key)
        if c is not None:
            return c
        c = Handle()
        with Collect() as diags:
            r = lib.aveContextCreate(ctypes.byref(c))
            if r:
                raise DeviceError("creating a context", r, diags)
            lib.aveContextSetDiagnosticHandler(c, HANDLER, None)
            if key is not _DEFAULT:
                if key:
                    os.makedirs(key, exist_ok=True)
                r = lib.aveContextSetCacheDir(c, key.encode() if key else None)
                if r:
                    lib.aveContextDestroy(c)
                    raise ValueError("ave: cache_dir %r cannot be used (%s)" % (cache_dir, _lib.result_name(r)))
        _contexts[key] = c
        return c


def cache_stats(cache_dir: Any = _DEFAULT) -> Dict[str, int]:
    """libave's cache counters for the context of `cache_dir` (default: the default cache)."""
    v = [ctypes.c_uint64() for _ in range(4)]
    lib.aveContextGetCacheStats(_context(cache_dir), *[ctypes.byref(x) for x in v])
    return dict(zip(("memory_hits", "disk_hits", "misses", "corrupt"), (x.value for x in v)))


# ---- devices ----

class Device:
    """An opened device: 'host' (the interpreter), 'cuda' or 'hip', with an ordinal."""

    def __init__(self, kind: str, ordinal: int, handle: Handle):
        self.kind = kind
        self.ordinal = ordinal
        self._h = handle
        self.name = _lib.s(lib.aveDeviceGetName(handle))

    def __repr__(self) -> str:
        return "ave.Device(%r, %d: %s)" % (self.kind, self.ordinal, self.name)

    def synchronize(self) -> None:
        with Collect() as diags:
            r = lib.aveDeviceSynchronize(self._h)
        if r:
            raise DeviceError("synchronizing %s" % self.kind, r, diags)

    def set_schedules(self, schedules: int, seed: int = 0) -> None:
        """Host device only: run each launch under `schedules` interleavings of the warp roles."""
        with Collect() as diags:
            r = lib.aveDeviceSetSchedules(self._h, schedules, seed)
        if r:
            raise DeviceError("setting schedules", r, diags)


def device(spec: Union[str, Device, None] = "host", ordinal: Optional[int] = None) -> Device:
    """The device named `spec`: 'host', 'cuda', 'cuda:1', 'hip', or a Device (returned as is).
    Opened once and kept for the process."""
    if isinstance(spec, Device):
        return spec
    kind = spec or "host"
    if ":" in kind:
        kind, _, o = kind.partition(":")
        ordinal = int(o)
    ordinal = ordinal or 0
    with _lock:
        d = _devices.get((kind, ordinal))
    if d is not None:
        return d
    ctx = _context()
    h = Handle()
    with Collect() as diags:
        r = lib.aveDeviceOpen(ctx, kind.encode(), ordinal, ctypes.byref(h))
    if r:
        raise DeviceError("opening device %s:%d" % (kind, ordinal), r, diags)
    with _lock:
        if (kind, ordinal) in _devices:  # another thread opened it meanwhile
            lib.aveDeviceClose(h)
        else:
            _devices[(kind, ordinal)] = Device(kind, ordinal, h)
        return _devices[(kind, ordinal)]


class Stream:
    """A stream of a device (GPU devices; on host launches run to completion)."""

    def __init__(self, dev: Union[str, Device] = "cuda"):
        self.device = device(dev)
        self._h = Handle()
        with Collect() as diags:
            r = lib.aveStreamCreate(self.device._h, ctypes.byref(self._h))
        if r:
            raise DeviceError("creating a stream", r, diags)

    def synchronize(self) -> None:
        with Collect() as diags:
            r = lib.aveStreamSynchronize(self._h)
        if r:
            raise DeviceError("synchronizing a stream", r, diags)

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h and lib is not None:
            self._h = Handle()
            lib.aveStreamDestroy(h)


# ---- compiling ----

def _target_device(target: str) -> str:
    if target.startswith("sim-"):  # a simulated device runs what it was compiled for
        return target
    if target.startswith("sm_"):
        return "cuda"
    if target.startswith("gfx"):
        return "hip"
    return "host"


_device_fn = device  # World's parameter is named device

# NumPy dtypes of the element types a symmetric buffer may hold (bf16 and f8 as bit patterns).
_SYMM_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "uint16",
                "f8e4m3": "uint8", "f8e5m2": "uint8", "i64": "int64", "index": "int64",
                "i32": "int32", "i16": "int16", "i8": "int8", "i1": "uint8"}


class World:
    """A world of `size` ranks on one device (SPEC 5.9) for kernels that communicate: each
    rank's copy of each symmetric buffer (`ave.symm.alloc`) is an allocation of its own, and
    `launch` runs every rank's grid at once, so puts, signals and waits reach the other ranks.
    Devices: 'host' (the interpreter), 'sim-<target>' (the emitted code, every CTA of every rank
    resident) and 'cuda' (ranks as allocations of one GPU). See docs/jit.md, "Worlds".

        w = ave.World(4, device="sim-sm_90a")
        for r in range(4):
            w.write(k, "@A_full", r, a[r])           # rank r's copy
        w.launch(k, grid, [[b, c[r]] for r in range(4)])
        gathered = w.read(k, "@A_full", 0)
    """

    def __init__(self, size: int, device: Union[str, "Device", None] = "host"):
        import numpy  # noqa: F401  (read/write need it)
        self.device = _device_fn(device)
        self.size = size
        self._h = Handle()
        with Collect() as diags:
            r = lib.aveWorldCreate(self.device._h, size, ctypes.byref(self._h))
        if r:
            raise DeviceError("making a world of %d ranks on %s" % (size, self.device.kind), r,
                              diags)

    def __repr__(self) -> str:
        return "ave.World(%d, device=%r)" % (self.size, self.device.kind)

    def _symm(self, kernel: "Kernel", symbol: str, rank: int) -> Tuple[Handle, Dict[str, Any]]:
        name = symbol.lstrip("@")
        info = next((x for x in kernel.metadata.get("symmetric", []) if x["symbol"] == name), None)
        if info is None:
            raise KeyError("kernel @%s: its module has no symmetric buffer '@%s'"
                           % (kernel.name, name))
        if not 0 <= rank < self.size:
            raise IndexError("rank %d is not one of the world's %d" % (rank, self.size))
        b = Handle()
        with Collect() as diags:
            r = lib.aveWorldGetBuffer(self._h, kernel._h, name.encode(), rank, ctypes.byref(b))
        if r:
            raise DeviceError("finding '@%s' of rank %d" % (name, rank), r, diags)
        return b, info

    def read(self, kernel: "Kernel", symbol: str, rank: int) -> Any:
        """A copy of rank `rank`'s buffer `symbol` (of kernel's module), shaped as its type
        (bf16 and f8 as their bit patterns)."""
        import numpy as np
        b, info = self._symm(kernel, symbol, rank)
        dt = np.dtype(_SYMM_DTYPES[info["type"]])
        raw = np.empty(info["bytes"] // dt.itemsize, dt)
        with Collect() as diags:
            r = lib.aveBufferDownload(b, 0, raw.ctypes.data, raw.nbytes)
        if r:
            raise DeviceError("reading '%s' of rank %d" % (symbol, rank), r, diags)
        view = np.lib.stride_tricks.as_strided(
            raw, shape=info["dims"], strides=[s * dt.itemsize for s in info["strides"]])
        return np.array(view)

    def write(self, kernel: "Kernel", symbol: str, rank: int, value: Any) -> None:
        """Fills rank `rank`'s buffer `symbol` with `value` (an array of the buffer's shape;
        f32 values for a bf16 buffer are rounded to it)."""
        import numpy as np
        from ._launch import bf16_bits
        b, info = self._symm(kernel, symbol, rank)
        dt = np.dtype(_SYMM_DTYPES[info["type"]])
        v = np.asarray(value)
        if info["type"] == "bf16" and v.dtype.kind == "f":
            v = bf16_bits(v)
        if tuple(v.shape) != tuple(info["dims"]):
            raise ValueError("'%s' has shape %s; the value has shape %s"
                             % (symbol, tuple(info["dims"]), tuple(v.shape)))
        raw = np.zeros(info["bytes"] // dt.itemsize, dt)
        view = np.lib.stride_tricks.as_strided(
            raw, shape=info["dims"], strides=[s * dt.itemsize for s in info["strides"]])
        view[...] = v.astype(dt, copy=False)
        with Collect() as diags:
            r = lib.aveBufferUpload(b, 0, raw.ctypes.data, raw.nbytes)
        if r:
            raise DeviceError("writing '%s' of rank %d" % (symbol, rank), r, diags)

    def launch(self, kernel: "Kernel", grid: Union[int, Sequence[int]],
               args: Sequence[Sequence[Any]]) -> None:
        """Launches `kernel` on every rank at once: args[r] is rank r's argument list (checked
        like Kernel.launch's). Each launch is one epoch: signals need no reset between them.
        Runs to completion; tensors then hold what each rank wrote."""
        from ._launch import launch_world
        launch_world(kernel, self, grid, args)

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h and lib is not None:
            self._h = Handle()
            lib.aveWorldDestroy(h)


class Kernel:
    """A compiled kernel. `metadata` is libave's JSON metadata, parsed (name, target, threads,
    block, shared_bytes, registers, args with kind/type/rank/dims/strides, params, ...);
    `diagnostics` holds the warnings and remarks of its compile.

    Launch with `kernel[grid](*args)` or `kernel.launch(grid, args, device=None, stream=None)`."""

    def __init__(self, handle: Handle, diagnostics: List[Diagnostic]):
        self._h = handle
        self.diagnostics = diagnostics
        self.name = _lib.s(lib.aveKernelGetName(handle))
        self.target = _lib.s(lib.aveKernelGetTarget(handle))
        self.threads = lib.aveKernelGetThreads(handle)
        self.shared_bytes = lib.aveKernelGetSharedMemoryBytes(handle)
        self.registers = lib.aveKernelGetRegisters(handle)
        self.spill_bytes = lib.aveKernelGetSpillBytes(handle)
        doc = json.loads(_lib.s(lib.aveKernelGetMetadataJson(handle)))
        rec = next((r for r in doc.get("kernels", []) if r.get("name") == self.name), doc)
        # The kernel's record, with the document's target-wide fields (target, warp_size).
        self.metadata: Dict[str, Any] = {**{k: v for k, v in doc.items() if k != "kernels"}, **rec}
        self.metadata.setdefault("registers", self.registers)
        self.args: List[Dict[str, Any]] = list(self.metadata.get("args", []))

    @property
    def arg_names(self) -> List[str]:
        return [a["name"] for a in self.args]

    @property
    def signature(self) -> str:
        from ._launch import describe
        return "@%s(%s)" % (self.name, ", ".join("%%%s: %s" % (a["name"], describe(a)) for a in self.args))

    def __repr__(self) -> str:
        return "ave.Kernel(%s, target=%r, threads=%d)" % (self.signature, self.target, self.threads)

    def __getitem__(self, grid: Union[int, Sequence[int]]) -> "_Bound":
        return _Bound(self, grid)

    def launch(self, grid: Union[int, Sequence[int]], args: Sequence[Any],
               device: Union[str, Device, None] = None, stream: Any = None) -> None:
        """Checks `args` against the signature (TypeError/ValueError before anything runs) and
        launches over `grid` CTAs, passing tensors in place where the device can use them.
        `stream`: None (torch's current stream when a torch GPU tensor is among the arguments,
        else the default stream), an ave.Stream, a torch.cuda.Stream or a native handle (int).
        On return tensors hold what the kernel wrote, except for a GPU launch whose tensors are
        all GPU memory passed in place: that one is queued on the stream, as a torch op is."""
        from ._launch import launch
        launch(self, grid, list(args), device, stream)

    @property
    def binary(self) -> bytes:
        """The binary the kernel runs from: a cubin, an HSACO, or the .ave text for host."""
        n = ctypes.c_size_t()
        p = lib.aveKernelGetBinary(self._h, ctypes.byref(n))
        return ctypes.string_at(p, n.value) if p else b""

    def default_device(self) -> str:
        if self.metadata.get("binary") == "llvm":  # compiled for a simulated device
            return "sim-" + self.target
        return _target_device(self.target)

    def write_bundle(self, path: Union[str, os.PathLike]) -> None:
        with Collect() as diags:
            r = lib.aveKernelWriteBundle(self._h, os.fsencode(path))
        if r:
            raise DeviceError("writing bundle %s" % os.fspath(path), r, diags)

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h and lib is not None:  # module globals may be gone at interpreter exit
            self._h = Handle()
            lib.aveKernelDestroy(h)


class _Bound:
    def __init__(self, kernel: Kernel, grid: Union[int, Sequence[int]]):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args: Any, device: Union[str, Device, None] = None,
                 stream: Any = None) -> None:
        self.kernel.launch(self.grid, args, device=device, stream=stream)


class Module:
    """Every kernel of a source with several, compiled; `module["name"]`, `module.name`."""

    def __init__(self, kernels: Dict[str, Kernel]):
        self.kernels = kernels

    def __getitem__(self, name: str) -> Kernel:
        return self.kernels[name.lstrip("@")]

    def __getattr__(self, name: str) -> Kernel:
        try:
            return self.__dict__["kernels"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)

    def __repr__(self) -> str:
        return "ave.Module(%s)" % ", ".join(self.kernels)


def load_bundle(path: Union[str, os.PathLike]) -> Kernel:
    """A kernel from a bundle file (`ave compile --emit=bundle`, Kernel.write_bundle)."""
    h = Handle()
    with Collect() as diags:
        r = lib.aveKernelLoadBundle(_context(), os.fsencode(path), ctypes.byref(h))
    if r:
        raise CompileError("loading bundle %s" % os.fspath(path), r, diags)
    return Kernel(h, diags)


def _is_text(src: str) -> bool:
    return "\n" in src or "ave.kernel" in src


def compile(source: Union[str, os.PathLike], target: str = "host", opt: int = 2,
            pipeline: Optional[str] = None, kernel: Optional[str] = None,
            cache_dir: Union[str, os.PathLike, None, bool] = None,
            lineinfo: bool = False, debug: bool = False) -> Union[Kernel, Module]:
    """Compiles `.ave` source (a path, or the text itself) for `target`.

    Returns the Kernel named `kernel`, or the only kernel of the source, or a Module holding every
    kernel when there are several and `kernel` is None. Raises CompileError with the
    diagnostics when parsing, verifying, checking or compiling fails.

    cache_dir: None uses libave's default ($AVE_CACHE_DIR, else $XDG_CACHE_HOME/ave, else
    ~/.cache/ave), shared with the C API and the `ave` tools; a path uses that directory; False
    turns the disk cache off (the in-memory cache of the process still serves repeats).

    lineinfo=True puts line tables in the binary (`ave compile -lineinfo`: PTX .loc, the cubin's
    or HSACO's .debug_line, naming the .ave lines; code optimized as without); debug=True full
    DWARF (`-g`, unoptimized device code on NVIDIA). The host target ignores both."""
    ctx = _context(_DEFAULT if cache_dir is None else cache_dir)
    if not isinstance(opt, int) or not 0 <= opt <= 3:
        raise ValueError("ave.compile: opt must be 0..3, got %r" % (opt,))
    with Collect() as diags:
        mod = Handle()
        if isinstance(source, os.PathLike) or (isinstance(source, str) and not _is_text(source)):
            p = os.fspath(source)
            if not os.path.exists(p):
                raise FileNotFoundError("ave.compile: no such file: %r" % p)
            r = lib.aveModuleParseFile(ctx, os.fsencode(p), ctypes.byref(mod))
            what = "parsing %s" % p
        elif isinstance(source, str):
            data = source.encode()
            r = lib.aveModuleParse(ctx, data, len(data), b"<string>", ctypes.byref(mod))
            what = "parsing <string>"
        else:
            raise TypeError("ave.compile: expected a path or .ave text, got %s" % type(source).__name__)
        if r:
            raise CompileError(what, r, list(diags))
        opts = Handle()
        try:
            r = lib.aveCompileOptionsCreate(ctypes.byref(opts))
            if r:
                raise CompileError("creating compile options", r, list(diags))
            if lib.aveCompileOptionsSetTarget(opts, target.encode()):
                names = ["sm_90a", "sm_80", "gfx942", "gfx90a", "host"]
                near = difflib.get_close_matches(target, names, n=1, cutoff=0.6)
                raise ValueError("ave.compile: unknown target %r%s (sm_90a, sm_80, gfx942, gfx90a or host)"
                                 % (target, "; did you mean %r?" % near[0] if near else ""))
            lib.aveCompileOptionsSetOptLevel(opts, opt)
            level = 2 if debug else 1 if lineinfo else 0
            if lib.aveCompileOptionsSetDebugInfo(opts, level):
                raise CompileError("setting debug info level %d" % level, 1, list(diags))
            if pipeline is not None:
                r = lib.aveCompileOptionsSetPipeline(opts, pipeline.encode())
                if r:
                    raise CompileError("setting pipeline %r" % pipeline, r, list(diags))
            names = [_lib.s(lib.aveModuleGetKernelName(mod, i)) for i in range(lib.aveModuleGetNumKernels(mod))]
            if kernel is not None:
                want = kernel.lstrip("@")
                if want not in names:
                    raise ValueError("ave.compile: no kernel @%s (the source has %s)"
                                     % (want, ", ".join("@" + n for n in names) or "none"))
                names = [want]
            if not names:
                raise ValueError("ave.compile: the source holds no kernel")
            out: Dict[str, Kernel] = {}
            for n in names:
                k = Handle()
                start = len(diags)
                r = lib.aveKernelCompile(mod, n.encode(), opts, ctypes.byref(k))
                if r:
                    raise CompileError("compiling @%s for %s" % (n, target), r, list(diags))
                out[n] = Kernel(k, diags[start:])
        finally:
            if opts:
                lib.aveCompileOptionsDestroy(opts)
            lib.aveModuleDestroy(mod)
    if len(out) == 1:
        return next(iter(out.values()))
    return Module(out)
