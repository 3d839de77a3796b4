# SPDX-License-Identifier: Apache-2.0
"""Checks and the one conversion of the arrays passed to dpselect, before the C++ core sees them.

The rule (docs/python.md, "Arrays"):

- An array of a dtype the function reads (float32 or float64 for selection and quantiles, float64
  for pricing and the sparse vector) is taken as it is, never copied: a NumPy array (C-contiguous)
  or any object with ``__dlpack__`` (CuPy, PyTorch, JAX), in host memory or on a CUDA device.
- Anything else in host memory (a list, a tuple, an integer or bool array, ...) is converted ONCE
  with ``numpy.asarray(x, dtype=numpy.float64)`` (in C order). An integer whose magnitude exceeds
  2**53 has no exact float64 and is refused with a ValueError naming the parameter, the position
  and the value, before any work or privacy budget is spent.
- The in-place noise functions (``convert=False``) convert nothing: the noise would go into a copy.
  Device arrays are never copied either: a device array of another dtype is refused, and so is one
  that offers only ``__cuda_array_interface__`` (Numba), which ``numpy.asarray`` would copy to the
  host.

Anything that cannot be read as numbers is refused with a message that says how to fix it.
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Union

import numpy as np
import numpy.typing as npt


class SupportsDLPack(Protocol):
    """An array that can be handed over through DLPack (CuPy, PyTorch, JAX, NumPy)."""

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...

    def __dlpack_device__(self) -> tuple[int, int]: ...


# What the array parameters take: a NumPy array, a (nested) sequence of numbers or anything else
# numpy.asarray reads, or a DLPack producer (CuPy, PyTorch, JAX).
ArrayLike = Union[npt.ArrayLike, SupportsDLPack]

# What ``labels=`` takes: a sequence (list, tuple, range, ...) or a 1-D NumPy array, looked up by
# position. Objects with ``__array__`` (pandas Series and Index) are read with numpy.asarray.
LabelsLike = Union[Sequence[Any], npt.NDArray[Any]]

# DLPack device types (dlpack.h): host memory, CUDA device memory, CUDA pinned and managed memory.
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3
_DL_CUDA_MANAGED = 13

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
FLOAT64 = (np.dtype(np.float64),)

# The largest magnitude up to which every integer has an exact float64 (2**53 + 1 has none).
EXACT_INTEGER_LIMIT = 2**53


def _type_name(value) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _dtype_words(dtypes) -> str:
    return " or ".join(str(d) for d in dtypes)


def _check_shape(array: np.ndarray, name: str, ndim: int) -> np.ndarray:
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


def _position(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]" if index else ""


def _too_large(name: str, index: tuple[int, ...], value) -> ValueError:
    return ValueError(
        f"{name}{_position(index)} is the integer {int(value)}, whose magnitude exceeds 2**53: float64 cannot "
        f"represent it exactly, so dpselect does not convert it; scale the values, or convert them to float "
        f"yourself if rounding is acceptable"
    )


def check_exact_number(value, name: str) -> None:
    """Raises the ValueError of the 2**53 rule for an integer scalar without an exact float64."""
    if _is_large_integer(value):
        raise _too_large(name, (), value)


def _is_large_integer(value) -> bool:
    return (isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
            and abs(int(value)) > EXACT_INTEGER_LIMIT)


def _element(values, index: tuple[int, ...]):
    item = values
    for i in index:
        item = item[i]
    return item


def _first_large_integer(values, index: tuple[int, ...] = ()):
    """(index, value) of the first integer beyond 2**53 in a nested sequence, or None."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind in "iu":
            return _first_large_in_integers(values, index)
        if values.dtype.kind != "O":
            return None
        for flat, value in enumerate(values.reshape(-1)):
            if _is_large_integer(value) or isinstance(value, (list, tuple, np.ndarray)):
                position = index + tuple(int(i) for i in np.unravel_index(flat, values.shape))
                found = _first_large_integer(value, position)
                if found is not None:
                    return found
        return None
    if isinstance(values, (list, tuple)):
        for i, value in enumerate(values):
            found = _first_large_integer(value, index + (i,))
            if found is not None:
                return found
        return None
    return (index, values) if _is_large_integer(values) else None


def _first_large_in_integers(array: np.ndarray, index: tuple[int, ...] = ()):
    above = array > EXACT_INTEGER_LIMIT
    if array.dtype.kind == "i":
        above |= array < -EXACT_INTEGER_LIMIT
    bad = np.flatnonzero(above)
    if bad.size == 0:
        return None
    position = tuple(int(i) for i in np.unravel_index(int(bad[0]), array.shape))
    return index + position, array[position]


def _refuse_unreadable(values, name: str, error: Exception | None = None) -> TypeError:
    detail = f": {error}" if error is not None else ""
    return TypeError(
        f"{name} must be numbers: a NumPy array, a sequence of numbers or an object with __dlpack__ "
        f"(CuPy, PyTorch, JAX) (got {_type_name(values)}){detail}"
    )


def _refuse_device_copy(values, name: str) -> None:
    # numpy.asarray would copy such an array to the host (Numba's DeviceNDArray.__array__ does)
    # and the release would run on the CPU: device memory is taken through DLPack or not at all.
    if hasattr(values, "__cuda_array_interface__"):
        raise TypeError(
            f"{name} is a device array without DLPack (a {_type_name(values)} with __cuda_array_interface__ but "
            f"no __dlpack__/__dlpack_device__); device arrays are never copied to the host: pass it through "
            f"DLPack (cupy.asarray({name}) or torch.as_tensor({name}, device='cuda') share its memory), or copy "
            f"it to the host yourself ({name}.copy_to_host())"
        )


def to_float64(values, name: str) -> np.ndarray:
    """The one conversion: numpy.asarray(values, dtype=numpy.float64) in C order, after refusing
    what it would get wrong (integers beyond 2**53, strings, complex numbers, ragged nesting,
    device arrays, which it would copy to the host)."""
    if isinstance(values, (str, bytes, dict, set, frozenset)) or values is None:
        raise _refuse_unreadable(values, name)
    if not isinstance(values, (np.ndarray, list, tuple)):
        _refuse_device_copy(values, name)
        try:  # objects with __array__ (pandas, xarray, ...) and ranges; a generator is refused below
            values = np.asarray(values)
        except (TypeError, ValueError) as error:
            raise _refuse_unreadable(values, name, error) from None
        if values.dtype.kind == "O" and values.ndim == 0:
            raise _refuse_unreadable(values.item(), name)
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "biufO":
            raise TypeError(f"{name} must hold real numbers (got dtype {values.dtype}); dpselect converts "
                            f"bool, integer and float arrays with numpy.asarray({name}, dtype=numpy.float64)")
        if values.dtype.kind in "iu":
            found = _first_large_in_integers(values)
            if found is not None:
                raise _too_large(name, *found)
    try:
        array = np.asarray(values, dtype=np.float64, order="C")
    except OverflowError:  # a Python integer beyond the range of float64
        found = _first_large_integer(values)
        if found is not None:
            raise _too_large(name, *found) from None
        raise
    except (TypeError, ValueError) as error:
        if "sequence" in str(error) or "inhomogeneous" in str(error):
            raise ValueError(f"{name} must be a rectangular array of numbers: {error}") from None
        raise _refuse_unreadable(values, name, error) from None
    if not (isinstance(values, np.ndarray) and values.dtype.kind in "biuf"):
        # Lists, tuples and object arrays: an integer of them beyond 2**53 became a double >= 2**53
        # in magnitude; look at the originals of those positions only (usually there are none).
        candidates = np.flatnonzero(np.abs(array) >= EXACT_INTEGER_LIMIT) if array.ndim else ()
        for flat in candidates:
            index = tuple(int(i) for i in np.unravel_index(int(flat), array.shape))
            original = _element(values, index)
            if _is_large_integer(original):
                raise _too_large(name, index, original)
    return array


def _host_view(values) -> np.ndarray:
    # NumPy >= 2.1 lets the producer copy unless told not to; an in-place release into a copy
    # would charge the budget and leave the caller's values untouched.
    try:
        return np.from_dlpack(values, copy=False)
    except TypeError:  # NumPy < 2.1: no copy argument, and from_dlpack never copies
        return np.from_dlpack(values)


def _refuse_dtype(name: str, dtype, dtypes, why: str | None) -> TypeError:
    reason = f": {why}" if why else ""
    return TypeError(f"{name} must hold {_dtype_words(dtypes)} values (got {dtype}){reason}; "
                     f"convert with {name}.astype(numpy.float64)")


def _host_array(array: np.ndarray, name: str, ndim: int, dtypes, convert: bool, why: str | None) -> np.ndarray:
    if array.dtype in dtypes:
        return _check_shape(array, name, ndim)
    if not convert:
        raise _refuse_dtype(name, array.dtype, dtypes, why)
    return _check_shape(to_float64(array, name), name, ndim)


def _device_array(values, name: str, ndim: int, dtypes):
    dtype = str(getattr(values, "dtype", ""))
    if not any(dtype.endswith(str(d)) for d in dtypes):
        raise TypeError(f"{name} must hold {_dtype_words(dtypes)} values (got {dtype or 'an unknown dtype'}); "
                        f"device arrays are never copied: convert on the device ({name}.astype(float64))")
    shape = tuple(getattr(values, "shape", ()))
    if len(shape) != ndim:
        raise ValueError(f"{name} must be {ndim}-D (got shape {shape})")
    contiguous = getattr(values, "is_contiguous", None)
    if callable(contiguous) and not contiguous():
        raise ValueError(f"{name} must be contiguous; pass {name}.contiguous()")
    flags = getattr(values, "flags", None)
    if flags is not None and not getattr(flags, "c_contiguous", True):
        raise ValueError(f"{name} must be C-contiguous; pass cupy.ascontiguousarray({name})")
    return values


def as_host_or_device(values, name: str, ndim: int = 1, *, dtypes=FLOATS, convert: bool = True,
                      why: str | None = None):
    """("host", ndarray) or ("device", dlpack_object), checked; raises TypeError/ValueError.

    ``dtypes``: the dtypes taken as they are. ``convert``: whether host values of any other kind
    are converted with :func:`to_float64` (False: refused, saying ``why``).
    """
    if isinstance(values, np.ndarray):
        return "host", _host_array(values, name, ndim, dtypes, convert, why)
    if hasattr(values, "__dlpack_device__") and hasattr(values, "__dlpack__"):
        device_type, _ = values.__dlpack_device__()
        if device_type in (_DL_CPU, _DL_CUDA_HOST):
            # A zero-copy NumPy view of host memory (PyTorch CPU tensors, JAX CPU arrays, ...).
            dtype = getattr(values, "dtype", None)
            if not convert and dtype is not None and not any(str(dtype).endswith(str(d)) for d in dtypes):
                raise _refuse_dtype(name, dtype, dtypes, why)
            return "host", _host_array(_host_view(values), name, ndim, dtypes, convert, why)
        if device_type == _DL_CUDA_MANAGED:
            raise ValueError(f"{name} is in CUDA managed memory, which dpselect's Python layer does not take; "
                             f"pass a device array (cupy.asarray({name}), {name}.cuda()) or a host one")
        if device_type == _DL_CUDA:
            return "device", _device_array(values, name, ndim, dtypes)
        raise ValueError(f"{name} lives on DLPack device type {device_type}; dpselect reads host and CUDA memory")
    if not convert:
        raise TypeError(
            f"{name} must be a NumPy array or an object with __dlpack__ (CuPy, PyTorch, JAX) "
            f"(got {_type_name(values)}); convert with numpy.asarray({name}, dtype=numpy.float64)"
        )
    return "host", _check_shape(to_float64(values, name), name, ndim)


def length_of(where: str, array) -> tuple[int, ...]:
    """The shape of a checked host or device array."""
    return tuple(int(n) for n in (array.shape if where == "host" else getattr(array, "shape", ())))


def _refuse_labels(labels, why: str = "") -> TypeError:
    return TypeError(f"labels must be a sequence or a 1-D NumPy array with one label per candidate, e.g. a list "
                     f"(got {_type_name(labels)}){why}")


def check_labels(labels, candidates: int, what: str = "candidates"):
    """The labels as they are looked up (by position), checked before anything is charged or drawn.

    Takes a 1-D NumPy array or a sequence (not a str or bytes); an object with ``__array__``
    (a pandas Series or Index) is read with numpy.asarray, so that ``labels[i]`` is the i-th label
    and not the one whose key is i. A mapping and anything else is a TypeError, a wrong shape or
    number of labels a ValueError (naming both lengths). Returns None for None.
    """
    if labels is None:
        return None
    if isinstance(labels, (str, bytes, Mapping)):
        why = ": a mapping's keys are not positions; pass list(labels.values())" if isinstance(labels, Mapping) else ""
        raise _refuse_labels(labels, why)
    if not isinstance(labels, (np.ndarray, Sequence)):
        if not hasattr(labels, "__array__"):
            raise _refuse_labels(labels)
        _refuse_device_copy(labels, "labels")
        try:
            labels = np.asarray(labels)
        except (TypeError, ValueError) as error:
            raise _refuse_labels(labels, f": {error}") from None
    if isinstance(labels, np.ndarray) and labels.ndim != 1:
        raise ValueError(f"labels must be 1-D (got shape {labels.shape})")
    if len(labels) != candidates:
        raise ValueError(f"labels has {len(labels)} entries but there are {candidates} {what}: "
                         f"give exactly one label per candidate")
    return labels


def pick_labels(labels, indices):
    """labels[indices] for labels checked by :func:`check_labels`: a NumPy array for NumPy
    labels, a list otherwise."""
    if isinstance(labels, np.ndarray):
        return labels[np.asarray(indices, dtype=np.int64)]
    return [labels[int(i)] for i in indices]


def params_of(kind, params, fields: dict, defaults: dict | None = None, required: Sequence[str] = (),
              name: str = "params"):
    """``params`` (an instance of ``kind``) or ``kind(**fields)``, never both.

    ``fields``: the keyword parameters as the caller's function received them; ``defaults``: that
    function's ``__kwdefaults__``. A keyword that differs from its default counts as given
    (:func:`keywords_given`).
    ``required``: the fields that have no default (None) and must be given when ``params`` is not.
    """
    if params is None:
        for key in required:
            if fields[key] is None:
                listed = ", ".join(key for key in required if fields[key] is None)
                raise TypeError(f"{listed} must be given (as keyword arguments) or {name} "
                                f"(a {_public_name(kind)}) passed")
        if defaults is None:
            return kind(**fields)
        # Only what differs from the defaults (they are the constructor's): fewer keywords to parse.
        return kind(**{key: value for key, value in fields.items() if value is not defaults[key]})
    given = keywords_given(fields, defaults)
    if given:
        raise TypeError(f"give {name} or keyword arguments, not both (got {name} and {given})")
    if not isinstance(params, kind):
        raise TypeError(f"{name} must be a {_public_name(kind)} (got {type(params).__name__})")
    return params


def _public_name(kind) -> str:
    module = "dpselect.audit" if kind.__module__.endswith(".audit") else "dpselect"
    return f"{module}.{kind.__name__}"


def keywords_given(fields: dict, defaults: dict | None) -> list[str]:
    """The keywords of ``fields`` that differ from their ``defaults`` (a function's
    ``__kwdefaults__``; None: every keyword counts), sorted: the rule behind "params or keywords,
    not both".

    A keyword equal to its default is not given: numbers compare by value (``utility_bound=0`` is
    the default 0.0, ``monotone=0`` the default False), enums and everything else by identity.
    """
    if defaults is None:
        return sorted(fields)
    return sorted(key for key, value in fields.items() if not is_default(value, defaults[key]))


def is_default(value, default) -> bool:
    """Whether a keyword's value is its default, by the rule of :func:`keywords_given`."""
    if value is default:
        return True
    if isinstance(value, enum.Enum) or isinstance(default, enum.Enum):
        return False  # an enum member is its default only as itself
    if isinstance(value, numbers.Number) and isinstance(default, numbers.Number):
        try:
            return bool(value == default)
        except (TypeError, ValueError):
            return False
    return False
