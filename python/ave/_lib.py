"""Finding and loading libave, and the ctypes prototypes of include/ave/ave.h.

The library is looked for in this order: $AVE_LIBRARY; next to the package (the package's own
folder, then the lib/ folder of an installed prefix, P/lib/python3/dist-packages/ave -> P/lib);
the build tree when the package is imported from the source tree (build/runtime/); the system
loader's search path (libave.so.0).
"""
from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint, c_uint32, c_uint64, c_void_p
from typing import List, Optional

_NAMES = ("libave.so.0", "libave.so")


def _candidates() -> List[str]:
    """Every path tried, in order (the last entries are names for the system loader)."""
    out: List[str] = []
    env = os.environ.get("AVE_LIBRARY")
    if env:
        out.append(env)
    pkg = os.path.dirname(os.path.abspath(__file__))
    prefix_lib = os.path.normpath(os.path.join(pkg, "..", "..", ".."))  # P/lib/python3/dist-packages/ave
    for d in (pkg, os.path.dirname(pkg), prefix_lib):
        out.extend(os.path.join(d, n) for n in _NAMES)
    src_root = os.path.normpath(os.path.join(pkg, "..", ".."))  # <src>/python/ave
    if os.path.exists(os.path.join(src_root, "include", "ave", "ave.h")):
        out.extend(os.path.join(src_root, "build", "runtime", n) for n in _NAMES)
    out.extend(_NAMES)
    return out


def _load() -> ctypes.CDLL:
    tried: List[str] = []
    env = os.environ.get("AVE_LIBRARY")
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            if path == env:
                raise OSError("ave: AVE_LIBRARY names %r, which does not exist" % env)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            if path == env:
                raise OSError("ave: AVE_LIBRARY=%r cannot be loaded: %s" % (env, e)) from None
            tried.append("%s (%s)" % (path, e))
    raise OSError("ave: libave not found; set AVE_LIBRARY to its path (e.g. build/runtime/libave.so). "
                  "Looked at:\n  " + "\n  ".join(tried))


class Handle(ctypes.Structure):
    """Every ave handle: a struct holding one pointer, passed by value."""
    _fields_ = [("ptr", c_void_p)]

    def __bool__(self) -> bool:
        return bool(self.ptr)


DIAG_HANDLER = ctypes.CFUNCTYPE(None, Handle, c_void_p)

lib = _load()
path: Optional[str] = getattr(lib, "_name", None)

_H = Handle
_P = POINTER(Handle)
_PROTOS = {
    "aveGetVersion": (c_char_p, []),
    "aveResultGetName": (c_char_p, [c_int]),
    "aveDiagnosticGetSeverity": (c_int, [_H]),
    "aveDiagnosticGetMessage": (c_char_p, [_H]),
    "aveDiagnosticGetCode": (c_char_p, [_H]),
    "aveDiagnosticGetFile": (c_char_p, [_H]),
    "aveDiagnosticGetLine": (c_uint, [_H]),
    "aveDiagnosticGetColumn": (c_uint, [_H]),
    "aveDiagnosticGetNumNotes": (c_int, [_H]),
    "aveDiagnosticGetNote": (_H, [_H, c_int]),
    "aveDiagnosticGetNumCounterexampleEntries": (c_int, [_H]),
    "aveDiagnosticGetCounterexampleKey": (c_char_p, [_H, c_int]),
    "aveDiagnosticGetCounterexampleValue": (c_char_p, [_H, c_int]),
    "aveDiagnosticFormat": (c_size_t, [_H, c_int, c_char_p, c_size_t]),
    "aveContextCreate": (c_int, [_P]),
    "aveContextDestroy": (None, [_H]),
    "aveContextSetDiagnosticHandler": (None, [_H, DIAG_HANDLER, c_void_p]),
    "aveContextSetRemarks": (None, [_H, c_int]),
    "aveContextSetCacheDir": (c_int, [_H, c_char_p]),
    "aveContextGetCacheStats": (None, [_H, POINTER(c_uint64), POINTER(c_uint64), POINTER(c_uint64),
                                       POINTER(c_uint64)]),
    "aveModuleParse": (c_int, [_H, c_char_p, c_size_t, c_char_p, _P]),
    "aveModuleParseFile": (c_int, [_H, c_char_p, _P]),
    "aveModuleDestroy": (None, [_H]),
    "aveModuleGetNumKernels": (c_int, [_H]),
    "aveModuleGetKernelName": (c_char_p, [_H, c_int]),
    "aveCompileOptionsCreate": (c_int, [_P]),
    "aveCompileOptionsDestroy": (None, [_H]),
    "aveCompileOptionsSetTarget": (c_int, [_H, c_char_p]),
    "aveCompileOptionsSetOptLevel": (c_int, [_H, c_int]),
    "aveCompileOptionsSetPipeline": (c_int, [_H, c_char_p]),
    "aveCompileOptionsSetDebugInfo": (c_int, [_H, c_int]),
    "aveKernelCompile": (c_int, [_H, c_char_p, _H, _P]),
    "aveKernelLoadBundle": (c_int, [_H, c_char_p, _P]),
    "aveKernelWriteBundle": (c_int, [_H, c_char_p]),
    "aveKernelDestroy": (None, [_H]),
    "aveKernelGetName": (c_char_p, [_H]),
    "aveKernelGetTarget": (c_char_p, [_H]),
    "aveKernelGetThreads": (c_int, [_H]),
    "aveKernelGetSharedMemoryBytes": (c_uint64, [_H]),
    "aveKernelGetRegisters": (c_int, [_H]),
    "aveKernelGetSpillBytes": (c_uint64, [_H]),
    "aveKernelGetNumArgs": (c_int, [_H]),
    "aveKernelGetArgName": (c_char_p, [_H, c_int]),
    "aveKernelGetArgKind": (c_int, [_H, c_int]),
    "aveKernelGetMetadataJson": (c_char_p, [_H]),
    "aveKernelGetBinary": (c_void_p, [_H, POINTER(c_size_t)]),
    "aveDeviceOpen": (c_int, [_H, c_char_p, c_int, _P]),
    "aveDeviceClose": (None, [_H]),
    "aveDeviceGetName": (c_char_p, [_H]),
    "aveDeviceSynchronize": (c_int, [_H]),
    "aveDeviceSetSchedules": (c_int, [_H, c_int, c_uint64]),
    "aveBufferCreate": (c_int, [_H, c_size_t, _P]),
    "aveBufferWrap": (c_int, [_H, c_void_p, c_size_t, _P]),
    "aveBufferDestroy": (None, [_H]),
    "aveBufferGetSize": (c_size_t, [_H]),
    "aveBufferUpload": (c_int, [_H, c_size_t, c_void_p, c_size_t]),
    "aveBufferDownload": (c_int, [_H, c_size_t, c_void_p, c_size_t]),
    "aveStreamCreate": (c_int, [_H, _P]),
    "aveStreamWrap": (c_int, [_H, c_void_p, _P]),
    "aveStreamGetNative": (c_void_p, [_H]),
    "aveStreamDestroy": (None, [_H]),
    "aveStreamSynchronize": (c_int, [_H]),
    "aveArgsCreate": (c_int, [_P]),
    "aveArgsDestroy": (None, [_H]),
    "aveArgsClear": (None, [_H]),
    "aveArgsAddTensor": (c_int, [_H, _H, c_int, POINTER(c_int64), POINTER(c_int64)]),
    "aveArgsAddInt": (c_int, [_H, c_int64]),
    "aveArgsAddFloat": (c_int, [_H, c_double]),
    "aveKernelLaunch": (c_int, [_H, _H, POINTER(c_uint32), _H, _H]),
    "aveWorldCreate": (c_int, [_H, c_int, _P]),
    "aveWorldDestroy": (None, [_H]),
    "aveWorldGetSize": (c_int, [_H]),
    "aveWorldGetBuffer": (c_int, [_H, _H, c_char_p, c_int, _P]),
    "aveWorldLaunch": (c_int, [_H, _H, POINTER(c_uint32), POINTER(Handle), _H]),
}
for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

SEVERITIES = ("error", "warning", "note", "remark")
SUCCESS = 0


def result_name(r: int) -> str:
    return lib.aveResultGetName(r).decode()


def s(b: Optional[bytes]) -> str:
    """A borrowed C string as str ('' for NULL)."""
    return b.decode("utf-8", "replace") if b else ""
