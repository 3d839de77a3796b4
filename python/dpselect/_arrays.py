# SPDX-License-Identifier: Apache-2.0
"""Checks of the arrays passed to dpselect, before the C++ core sees them.

Nothing is copied: a NumPy array (float32 or float64, C-contiguous) goes to the core as it is,
and any object with ``__dlpack__`` (CuPy, PyTorch, JAX) is handed over through DLPack, to the
host path when it lives in host memory and to the device path when it lives on a CUDA device.
Anything else is refused with a message that says how to make it acceptable.
"""

from __future__ import annotations

import numpy as np

# DLPack device types (dlpack.h): host memory, CUDA device memory, CUDA pinned and managed memory.
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3
_DL_CUDA_MANAGED = 13

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _type_name(value) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _check_numpy(array: np.ndarray, name: str, ndim: int) -> np.ndarray:
    if array.dtype not in _FLOATS:
        raise TypeError(
            f"{name} must hold float32 or float64 values (got {array.dtype}); "
            f"convert with {name}.astype(numpy.float64)"
        )
    if array.ndim != ndim:
        hint = (
            "for one pick per row use select_rows, or pass a 1-D view"
            if ndim == 1
            else "reshape it to (rows, cols)"
        )
        raise ValueError(f"{name} must be {ndim}-D (got shape {array.shape}); {hint}")
    if not array.flags.c_contiguous:
        raise ValueError(
            f"{name} must be C-contiguous (got strides {array.strides}); "
            f"pass numpy.ascontiguousarray({name}), which copies it once"
        )
    return array


def _host_view(values) -> np.ndarray:
    # NumPy >= 2.1 lets the producer copy unless told not to; an in-place release into a copy
    # would charge the budget and leave the caller's values untouched.
    try:
        return np.from_dlpack(values, copy=False)
    except TypeError:  # NumPy < 2.1: no copy argument, and from_dlpack never copies
        return np.from_dlpack(values)


def as_host_or_device(values, name: str, ndim: int = 1):
    """("host", array) or ("device", dlpack_object), checked; raises TypeError/ValueError."""
    if isinstance(values, np.ndarray):
        return "host", _check_numpy(values, name, ndim)
    if hasattr(values, "__dlpack_device__") and hasattr(values, "__dlpack__"):
        device_type, _ = values.__dlpack_device__()
        if device_type in (_DL_CPU, _DL_CUDA_HOST):
            # A zero-copy NumPy view of host memory (PyTorch CPU tensors, JAX CPU arrays, ...).
            return "host", _check_numpy(_host_view(values), name, ndim)
        if device_type == _DL_CUDA_MANAGED:
            raise ValueError(f"{name} is in CUDA managed memory, which dpselect's Python layer does not take; "
                             f"pass a device array (cupy.asarray({name}), {name}.cuda()) or a host one")
        if device_type == _DL_CUDA:
            dtype = str(getattr(values, "dtype", ""))
            if not (dtype.endswith("float32") or dtype.endswith("float64")):
                raise TypeError(f"{name} must hold float32 or float64 values (got {dtype or 'an unknown dtype'})")
            shape = tuple(getattr(values, "shape", ()))
            if len(shape) != ndim:
                raise ValueError(f"{name} must be {ndim}-D (got shape {shape})")
            contiguous = getattr(values, "is_contiguous", None)
            if callable(contiguous) and not contiguous():
                raise ValueError(f"{name} must be contiguous; pass {name}.contiguous()")
            flags = getattr(values, "flags", None)
            if flags is not None and not getattr(flags, "c_contiguous", True):
                raise ValueError(f"{name} must be C-contiguous; pass cupy.ascontiguousarray({name})")
            return "device", values
        raise ValueError(f"{name} lives on DLPack device type {device_type}; dpselect reads host and CUDA memory")
    raise TypeError(
        f"{name} must be a NumPy array or an object with __dlpack__ (CuPy, PyTorch, JAX) "
        f"(got {_type_name(values)}); convert with numpy.asarray({name}, dtype=numpy.float64)"
    )


def as_float64(values, name: str, why: str):
    """as_host_or_device for the entry points that take doubles only; ``why`` says why in the error."""

    def refuse(dtype) -> TypeError:
        return TypeError(f"{name} must hold float64 values (got {dtype}): {why}; "
                         f"convert with {name}.astype(numpy.float64)")

    # Checked on the object first, so that an integer array gets this message rather than the
    # float32-or-float64 one, and again on the host view of a DLPack object that has no dtype.
    dtype = getattr(values, "dtype", None)
    if dtype is not None and not str(dtype).endswith("float64"):
        raise refuse(dtype)
    where, array = as_host_or_device(values, name)
    if where == "host" and array.dtype != np.float64:
        raise refuse(array.dtype)
    return where, array


def params_of(kind, params, fields: dict, name: str = "params"):
    """``params`` (an instance of ``kind``) or ``kind(**fields)``, never both."""
    if params is not None and fields:
        raise TypeError(f"give {name} or keyword arguments, not both (got {name} and {sorted(fields)})")
    if params is None:
        return kind(**fields)
    if not isinstance(params, kind):
        module = "dpselect.audit" if kind.__module__.endswith(".audit") else "dpselect"
        raise TypeError(f"{name} must be a {module}.{kind.__name__} (got {type(params).__name__})")
    return params
