"""The DLPack protocol, consumed with ctypes: `__dlpack_device__()` says where a tensor lives and
`__dlpack__()` hands over a capsule holding a DLManagedTensor (or, from producers that support
DLPack 1.x and are asked for it, a DLManagedTensorVersioned).

Capsule rules (dlpack.h, the array API's `__dlpack__`): a capsule named "dltensor"
("dltensor_versioned") is unconsumed; the consumer renames it "used_dltensor"
("used_dltensor_versioned") when it takes the tensor over, so that the capsule's destructor no
longer frees it, and then calls the tensor's own deleter once it is done with the memory."""
from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from typing import Any, List, Optional, Tuple

# DLDeviceType
CPU, CUDA, CUDA_HOST, ROCM, ROCM_HOST, CUDA_MANAGED = 1, 2, 3, 10, 11, 13
DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                9: "vpi", 10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed",
                14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}
# Memory the host can read and write in place (pinned and managed memory included).
HOST_ACCESSIBLE = (CPU, CUDA_HOST, ROCM_HOST, CUDA_MANAGED)

READ_ONLY = 1 << 0  # DLPACK_FLAG_BITMASK_READ_ONLY


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


# The deleter runs with the GIL held (PYFUNCTYPE): producers such as NumPy drop Python
# references in it.
_DELETER = ctypes.PYFUNCTYPE(None, c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", _DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", _DELETER),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_SetName.restype = c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, c_char_p]

# PyCapsule_SetName keeps the pointer it is given: these bytes live as long as the module.
_NAMES = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}

# (code, bits) -> the dtype name NumPy or torch gives those elements. DLPack 1.1 numbers the
# float8 formats 7..13; ave's f8e4m3 is float8_e4m3fn (code 10), f8e5m2 float8_e5m2 (code 12).
_DTYPES = {
    (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (4, 16): "bfloat16", (6, 8): "bool",
    (10, 8): "float8_e4m3fn", (12, 8): "float8_e5m2",
}
_CODES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex", 6: "bool"}


def dtype_name(dt: DLDataType) -> str:
    if dt.lanes != 1:
        return "%s%d x%d (vector lanes)" % (_CODES.get(dt.code, "code %d " % dt.code), dt.bits, dt.lanes)
    return _DTYPES.get((dt.code, dt.bits)) or "%s%d" % (_CODES.get(dt.code, "code %d " % dt.code), dt.bits)


def device_of(obj: Any) -> Tuple[int, int]:
    """(DLDeviceType, device id) of an object with `__dlpack_device__` (CPU when it has none)."""
    if not hasattr(obj, "__dlpack_device__"):
        return CPU, 0
    t, i = obj.__dlpack_device__()
    return int(t), int(i)


class Imported:
    """A tensor taken over from a DLPack capsule: its address (data + byte_offset), shape,
    strides in elements (row-major when the producer gave none), dtype name, itemsize, device and
    read-only flag. The producer's memory stays valid until `release()`, which calls the
    producer's deleter exactly once (also when the object is collected without it)."""

    def __init__(self, obj: Any, stream: Optional[int] = None):
        kw = {} if stream is None else {"stream": stream}
        try:
            cap = obj.__dlpack__(max_version=(1, 0), **kw)
        except TypeError:  # a producer of DLPack 0.x: no max_version, an unversioned capsule
            cap = obj.__dlpack__(**kw)
        self._managed: Optional[int] = None
        self._deleter: Any = None
        if _api.PyCapsule_IsValid(cap, b"dltensor_versioned"):
            name = b"dltensor_versioned"
            p = _api.PyCapsule_GetPointer(cap, name)
            m = DLManagedTensorVersioned.from_address(p)
            if m.version.major != 1:
                # Not ours to read: the capsule keeps the tensor and frees it when collected.
                raise BufferError("a DLPack %d.%d tensor (this package reads 1.x)"
                                  % (m.version.major, m.version.minor))
            flags, t = int(m.flags), m.dl_tensor
        elif _api.PyCapsule_IsValid(cap, b"dltensor"):
            name = b"dltensor"
            p = _api.PyCapsule_GetPointer(cap, name)
            m = DLManagedTensor.from_address(p)
            flags, t = 0, m.dl_tensor
        else:
            raise BufferError("__dlpack__() returned %r, not an unconsumed DLPack capsule" % (cap,))
        # Ours from here on: the capsule no longer frees it, release() does.
        _api.PyCapsule_SetName(cap, _NAMES[name])
        self._managed = p
        self._deleter = m.deleter if m.deleter else None
        self.device_type = int(t.device.device_type)
        self.device_id = int(t.device.device_id)
        self.read_only = bool(flags & READ_ONLY)
        self.dtype = dtype_name(t.dtype)
        self.itemsize = max(1, (int(t.dtype.bits) * int(t.dtype.lanes) + 7) // 8)
        nd = int(t.ndim)
        self.shape: List[int] = [int(t.shape[i]) for i in range(nd)]
        if t.strides:
            self.strides: List[int] = [int(t.strides[i]) for i in range(nd)]
        else:
            self.strides, acc = [0] * nd, 1
            for i in range(nd - 1, -1, -1):
                self.strides[i] = acc
                acc *= max(self.shape[i], 1)
        self.ptr = (t.data or 0) + int(t.byte_offset)

    def release(self) -> None:
        p, d = self._managed, self._deleter
        self._managed = self._deleter = None
        if p is not None and d is not None:
            d(p)

    def __del__(self) -> None:
        self.release()
