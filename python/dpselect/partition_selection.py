# SPDX-License-Identifier: Apache-2.0
"""Private partition selection: which keys of an unknown domain may be released.

The keys (search queries, URLs, product ids) come from the users' own data. Each user keeps at
most ``max_partitions`` of its distinct keys (chosen at random with the release's stream), each
key's number of distinct users n is counted, and the key is released with probability
``keep_probability(params, n)``, a function the strategy fixes in advance:

* ``TRUNCATED_GEOMETRIC``: the optimal probability for (epsilon, delta) (Desfontaines, Voss,
  Gipson & Mandayam 2022, Thm 1), per key at epsilon / m and delta / m;
* ``LAPLACE_THRESHOLD``: a Laplace-noised count above a threshold (Korolova et al. 2009; Wilson
  et al. 2020);
* ``GAUSSIAN_THRESHOLD``: the same with Gaussian noise (Wilson et al. 2020).

The weighted strategies weigh keys instead of counting their users: a user keeping t keys adds
at most 1 to the L2 norm of the weights, and a key of weight w is released with probability
``weighted_keep_probability(round, w)`` (they run on the CPU):

* ``WEIGHTED_GAUSSIAN``: each of a user's t keys weighs 1/sqrt(t) (Gopi, Gulhane, Kulkarni, Shen,
  Shokouhi & Yekhanin 2020, "Differentially private set union");
* ``POLICY_GAUSSIAN``: the users one after another (in an order drawn from the stream) spend
  their budget on their keys still below a cutoff (Gopi et al. 2020, L2 descent);
* ``DP_SIPS``: the weighted Gaussian in ``rounds`` rounds of growing budget, each on the keys no
  earlier round released (Swanberg, Desfontaines & Haney 2023).

Example::

    import dpselect
    users = [1, 1, 2, 3, 3, 3]
    queries = ["cats", "dogs", "cats", "cats", "dogs", "owls"]
    kept = dpselect.select_partitions(dpselect.Context(), users, queries, epsilon=1.0, delta=1e-6)
    kept.keys   # the released queries (with so few users, most likely none)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._checks import check_module as _check_module
from . import _dpselect as _core
from ._arrays import _type_name, params_of
from ._dpselect import (
    Backend,
    Context,
    InvalidArgument,
    PartitionKeepRule,
    PartitionSelectionParams,
    PartitionSelectionReport,
    PartitionStrategy,
    WeightedRound,
    is_weighted,
    keep_probability,
    partition_keep_rule,
    weighted_keep_probability,
)

__all__ = [
    "PartitionKeepRule", "PartitionSelection", "PartitionSelectionParams", "PartitionSelectionReport",
    "PartitionStrategy", "WeightedRound", "is_weighted", "keep_probability", "partition_keep_rule",
    "select_partitions", "weighted_keep_probability",
]


class PartitionSelection:
    """The released keys and the report of one partition selection.

    Parameters
    ----------
    keys : numpy.ndarray or list
        The released keys, ascending, in the type the keys were given in (a NumPy array of the
        input's integer dtype, or a list of the input's strings or bytes).
    report : PartitionSelectionReport
        What the selection did (``keys_considered`` is NOT PRIVATE).
    """

    def __init__(self, keys: Any, report: PartitionSelectionReport) -> None:
        self.keys = keys
        self.report = report

    def __repr__(self) -> str:
        return f"PartitionSelection(keys={self.keys!r})"


_ID_KINDS = "integers, str or bytes"
_INT64_MIN, _INT64_END, _UINT64_END = -(2**63), 2**63, 2**64


def _id_kind_of_type(kind: type) -> str | None:
    """"int", "str" or "bytes" for the types of ids, None for any other type. A bool is no id: True
    equals 1 and would count as the same user or key."""
    if issubclass(kind, (bool, np.bool_)):
        return None
    if issubclass(kind, (int, np.integer)):
        return "int"
    if issubclass(kind, str):
        return "str"
    if issubclass(kind, bytes):
        return "bytes"
    return None


def _is_null(value: Any) -> bool:
    """None, a NaN or a pandas null (pandas.NA, pandas.NaT)."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    pandas = sys.modules.get("pandas")  # a pandas null exists only once pandas is imported
    return pandas is not None and (value is pandas.NA or value is pandas.NaT)


def _described(value: Any) -> str:
    """What a value is, by its type alone (an id's value is the data's and never goes in a message)."""
    if _is_null(value):
        return "a null"
    kind = _id_kind_of_type(type(value))
    if kind is not None:
        return "an int" if kind == "int" else f"a {kind}"
    if isinstance(value, (bool, np.bool_)):
        return "a bool"
    if isinstance(value, (float, np.floating)):
        return "a float"
    return f"a {_type_name(value)}"


def _refuse_null(name: str, row: int) -> InvalidArgument:
    return InvalidArgument(f"{name}[{row}] is a null: a column of ids holds no null (None, NaN, or a pandas or "
                           f"pyarrow null); drop or fill such rows first")


def _refuse_row(items: list, row: int, name: str) -> Exception:
    """The refusal of the first row that breaks the rule: one kind of id per column, no null."""
    value = items[row]
    if _is_null(value):
        return _refuse_null(name, row)
    if row > 0 and _id_kind_of_type(type(value)) is not None:
        return TypeError(f"{name}[{row}] is {_described(value)}, but {name}[0] is {_described(items[0])}: a column "
                         f"holds one kind of id ({_ID_KINDS})")
    if isinstance(value, (bool, np.bool_)):
        why = "; a bool is no id, since True equals 1 and False equals 0"
    elif isinstance(value, (float, np.floating)):
        why = f"; floats are not ids: convert {name} to integers first"
    else:
        why = ""
    return TypeError(f"{name}[{row}] is {_described(value)}: ids are {_ID_KINDS}{why}")


def _kind_of_column(items: list, name: str) -> str | None:
    """The one kind of id in items ("int", "str" or "bytes"; None when there are none), or the
    refusal of the first row that is not an id of the first row's kind."""
    kinds = {_id_kind_of_type(kind) for kind in set(map(type, items))}  # no Python loop over the rows
    if len(kinds) == 1 and None not in kinds:
        return kinds.pop()
    if not items:
        return None
    first = _id_kind_of_type(type(items[0]))
    row = next(i for i, value in enumerate(items) if first is None or _id_kind_of_type(type(value)) != first)
    raise _refuse_row(items, row, name)


def _integer_array(items: list, name: str) -> np.ndarray:
    """Python or NumPy integers as int64 (or uint64 when one is beyond int64 and none is negative).
    They go through int(): NumPy would turn a mix of int64 and uint64 scalars into float64."""
    ints = list(map(int, items))
    low, high = min(ints), max(ints)
    if _INT64_MIN <= low and high < _INT64_END:
        return np.array(ints, dtype=np.int64)
    if 0 <= low and high < _UINT64_END:
        return np.array(ints, dtype=np.uint64)
    outside = [i for i, v in enumerate(ints) if not _INT64_MIN <= v < _UINT64_END]
    if outside:
        raise InvalidArgument(f"{name}[{outside[0]}] is an integer beyond 64 bits: integer ids are int64 or uint64")
    row = next(i for i, v in enumerate(ints) if v >= _INT64_END)
    negative = next(i for i, v in enumerate(ints) if v < 0)
    raise InvalidArgument(f"{name}[{row}] is an integer beyond int64, but {name}[{negative}] is negative: integer ids "
                          f"are all int64 or all uint64")


def _arrow_id_kind(arrow_type: Any) -> str | None:
    """"str" or "bytes" when a pyarrow column's type fixes the kind of its values, else None."""
    import pyarrow as pa  # type: ignore[import-untyped]  # importable: the column is a pyarrow one

    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type

    def is_any(*checks: str) -> bool:  # the view types came with pyarrow 16
        return any(getattr(pa.types, check, lambda _: False)(arrow_type) for check in checks)

    if is_any("is_string", "is_large_string", "is_string_view"):
        return "str"
    if is_any("is_binary", "is_large_binary", "is_fixed_size_binary", "is_binary_view"):
        return "bytes"
    return None


class _StringIds:
    """The way back from the codes of a string column to its own values: code c is the value at
    row ``first_rows[c]`` of the column, read only for the released codes."""

    def __init__(self, first_rows: np.ndarray, value_at: Any) -> None:
        self.first_rows = first_rows
        self.value_at = value_at

    def values(self, codes: list[int]) -> list:
        return [self.value_at(int(self.first_rows[code])) for code in codes]


def _numbered_objects(items: list, kind: str, name: str) -> tuple[np.ndarray, _StringIds]:
    """A list of str or bytes numbered in C++ by the rank of each value (code point order for str,
    byte order for bytes: the UTF-8 bytes of str sort in code point order), or the refusal of the
    first row of another kind."""
    codes, first_rows, bad_row = _core.number_string_objects(items, kind == "bytes")
    if bad_row >= 0:
        raise _refuse_row(items, bad_row, name)
    return codes, _StringIds(first_rows, items.__getitem__)


def _numbered_fixed_width(array: np.ndarray) -> tuple[np.ndarray, _StringIds]:
    """A NumPy U or S array numbered in C++ from its buffer (each item without its trailing NULs,
    as NumPy reads it); no per-value Python object is made."""
    array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("=")) if array.dtype.kind == "U" \
        else np.ascontiguousarray(array)
    ucs4 = array.dtype.kind == "U"
    width = array.dtype.itemsize // 4 if ucs4 else array.dtype.itemsize
    codes, first_rows, _ = _core.number_fixed_width(array.view(np.uint8).reshape(-1), width, ucs4)
    return codes, _StringIds(first_rows, lambda row: array[row].item())


def _arrow_chunks(column: Any) -> list:
    """(offsets, data) NumPy views of each chunk of a pyarrow string or binary column (no copy)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    views = []
    for chunk in column.chunks if hasattr(column, "chunks") else [column]:
        _, offsets, data = chunk.buffers()[:3]
        wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
        offset_type = np.int64 if wide else np.int32
        offsets = (np.frombuffer(offsets, dtype=offset_type)[chunk.offset:chunk.offset + len(chunk) + 1]
                   if offsets is not None else np.zeros(1, dtype=offset_type))
        views.append((offsets, np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)))
    return views


def _numbered_arrow(column: Any) -> tuple[np.ndarray, _StringIds]:
    """A pyarrow string or binary column numbered in C++ from its offsets and data buffers."""
    import pyarrow as pa  # type: ignore[import-untyped]

    plain = (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())
    if column.type not in plain:  # dictionary encoded, views, fixed-size binary: decoded first
        target = pa.large_string() if _arrow_id_kind(column.type) == "str" else pa.large_binary()
        column = column.cast(target) if not pa.types.is_dictionary(column.type) else \
            column.cast(column.type.value_type).cast(target)
    codes, first_rows, _ = _core.number_arrow_chunks(_arrow_chunks(column))
    return codes, _StringIds(first_rows, lambda row: column[row].as_py())


def _ids(values: Any, name: str, length: int | None = None) -> tuple[np.ndarray, Any]:
    """(uint64 ids in host memory, how to map ids back to the values) for a column of ids.

    A column holds one kind of id: integers (not bool), str or bytes, and no null. A NumPy array is
    judged by its dtype; a list, a tuple or an object array value by value (mixed kinds would
    otherwise merge: numpy.asarray([5, "5"]) is two strings "5", and [1, True] two integers 1).
    Integers are viewed as uint64 (two's complement for negative ids: a bijection, reversed on the
    way back); str and bytes are numbered in C++ by the rank of their value among the distinct
    values (code point order for str, byte order for bytes, which are never decoded), found with a
    hash table: read from the Python objects, a NumPy array's buffer or Arrow's buffers, never
    through a per-value Python loop or a fixed-width copy.
    """
    def check_length(count: int) -> None:
        if length is not None and count != length:
            raise ValueError(f"{name} must hold one entry per user entry (got {count} for {length} users)")

    # A pyarrow Array or ChunkedArray (whose null_count is a number, not a method as in other libraries).
    if hasattr(values, "is_null") and isinstance(getattr(values, "null_count", None), int):
        if values.null_count > 0:
            raise _refuse_null(name, int(np.flatnonzero(np.asarray(values.is_null()))[0]))
        if _arrow_id_kind(values.type) is not None:  # str or bytes: read from Arrow's own buffers
            check_length(len(values))
            return _numbered_arrow(values)
        values = np.asarray(values)  # integers (a dictionary-encoded column comes back decoded)
    elif hasattr(values, "to_numpy") and hasattr(values, "isna"):  # pandas
        nulls = np.asarray(values.isna())
        if nulls.any():
            raise _refuse_null(name, int(np.flatnonzero(nulls)[0]))
        if type(values.dtype).__name__ == "StringDtype" and str(values.dtype.storage).startswith("pyarrow"):
            import pyarrow as pa  # type: ignore[import-untyped]  # the column's own storage

            check_length(len(values))
            return _numbered_arrow(pa.array(values.array))
        values = values.to_numpy()
    array: Any = None  # a NumPy array, once there is one
    items: list | None
    if isinstance(values, (list, tuple)):
        items = values if isinstance(values, list) else list(values)
    else:
        array = np.asarray(values)
        if array.ndim != 1:
            raise ValueError(f"{name} must be 1-D (got shape {array.shape})")
        items = array.tolist() if array.dtype.kind == "O" else None
    check_length(len(items) if items is not None else len(array))
    if items is not None:  # Python objects: checked value by value
        if not items:
            return np.empty(0, dtype=np.uint64), np.dtype(np.uint64)
        first = _id_kind_of_type(type(items[0]))
        if first in ("str", "bytes"):  # numbered in C++, which also checks every row's kind
            return _numbered_objects(items, first, name)
        _kind_of_column(items, name)  # integers, or the refusal of the first row that is not one
        array = _integer_array(items, name)
    if array.dtype.kind in "iu":
        ids = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))  # native order, C-contiguous
        return ids.view(np.uint64) if ids.itemsize == 8 else ids.astype(np.int64).view(np.uint64), array.dtype
    if array.dtype.kind in "US" and len(array) > 0:
        return _numbered_fixed_width(array)
    if len(array) == 0:
        return np.empty(0, dtype=np.uint64), np.dtype(np.uint64)
    if array.dtype.kind == "b":
        raise TypeError(f"{name} must be integer or string ids (got booleans): a bool is no id, since True equals 1")
    raise TypeError(f"{name} must be integer or string ids (got dtype {array.dtype}); floats are not ids: convert "
                    f"them first, e.g. {name}.astype('int64')")


def _keys_of(ids: list[int], back: Any, as_list: bool) -> Any:
    """The released keys: a NumPy array of the input's dtype for integer arrays; a list of Python
    int for a list or tuple of integers; a list of Python str or bytes for string ids."""
    released = np.asarray(ids, dtype=np.uint64)
    if isinstance(back, np.dtype):
        # Ascending in the input's own type (the library sorts the uint64 bits, which puts negative ids last).
        keys = np.sort(released.view(np.int64).astype(back)) if back.kind == "i" else released.astype(back)
        return keys.tolist() if as_list else keys
    return back.values(released.tolist())


def select_partitions(
    context: Context,
    users: Any,
    keys: Any,
    params: PartitionSelectionParams | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    max_partitions: int = 1,
    strategy: PartitionStrategy = PartitionStrategy.TRUNCATED_GEOMETRIC,
    backend: Backend = Backend.AUTO,
    rounds: int = 3,
    round_budget_ratio: float = 0.3,
    policy_cutoff_sigmas: float = 3.0,
    pre_threshold: int = 1,
) -> PartitionSelection:
    """The keys that may be released, from (user, key) contributions.

    Parameters
    ----------
    context : Context
        The source of the selection's stream and its accountant.
    users : array_like, pandas.Series or pyarrow.Array
        The user of each contribution: ids of one kind, integers, str or bytes (see Notes), no
        null. A pyarrow ``Array`` or ``ChunkedArray`` (a column of a table read with
        ``pyarrow.parquet.read_table``, dictionary encoded or not) is taken as its values.
    keys : array_like, pandas.Series or pyarrow.Array
        The key of each contribution (as long as ``users``): ids of one kind, integers, str or
        bytes, no null. Repeated (user, key) pairs count once.
    params : PartitionSelectionParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss, finite and > 0. Required unless ``params`` is given.
    delta : float
        In (0, 1). Required unless ``params`` is given.
    max_partitions : int, default 1
        The most distinct keys one user contributes to; a user's other keys are dropped at random.
    strategy : PartitionStrategy, default PartitionStrategy.TRUNCATED_GEOMETRIC
        The keep rule.
    backend : Backend, default Backend.AUTO
        Where the pairs are sorted, bounded and decided (AUTO: the GPU when one is usable); every
        backend releases the same keys for the same seed. The weighted strategies run on the CPU.
    rounds : int, default 3
        ``DP_SIPS``: the number of rounds, in [1, 16].
    round_budget_ratio : float, default 0.3
        ``DP_SIPS``: each round's share of the budget over the next round's, in (0, 1].
    policy_cutoff_sigmas : float, default 3.0
        ``POLICY_GAUSSIAN``: the cutoff's height above the threshold, in noise standard deviations.
    pre_threshold : int, default 1
        A public minimum count (as PipelineDP's and Google's libraries offer): a key held by fewer
        users (after contribution bounding) is never released, and one of n >= pre_threshold
        users is kept as a key of n - pre_threshold + 1 users would be. It costs no budget and
        leaves epsilon, delta and ``report.delta_float`` as they are. The count strategies only.

    Returns
    -------
    PartitionSelection
        ``keys``: the released keys, ascending: Python ``str`` or ``bytes`` for string ids, a list of
        Python ``int`` for a list or tuple of integers, a NumPy array of the input's dtype for an
        integer array or column; ``report``.

    Raises
    ------
    InvalidArgument
        A bad parameter (naming it and its value), no contributions, a null id (None, NaN, a
        pandas or pyarrow null) or an integer id beyond 64 bits (naming the column and the row).
    ValueError
        ``users`` and ``keys`` of different lengths or not 1-D.
    TypeError
        An id that is not an integer, str or bytes (a float, a bool), a column mixing kinds of id
        (naming the column and the first row of another kind than row 0), ``params`` together
        with keywords, or neither epsilon and delta nor ``params``.
    BudgetExceeded
        The context's accountant refuses the selection.
    BackendUnavailable
        ``Backend.GPU`` without a usable CUDA device.

    In every case nothing is charged or drawn.

    Notes
    -----
    A column of ids holds one kind of id: integers (Python ints, NumPy integers; a bool is no id,
    since True equals 1), str, or bytes (compared as bytes, never decoded). A NumPy array of an
    integer or string dtype and a typed pyarrow column are taken by their type; a list, a tuple, an
    object array or a pandas column of objects is looked at value by value, and a value of another
    kind than row 0's is refused, so that 5 and "5", "a" and b"a", or 1 and True are never one id.
    Integers as Python objects become int64, or uint64 when one is beyond int64 and none negative.
    Errors name the column and the row, never an id.

    (epsilon, delta + report.delta_float)-DP between datasets that add or remove one user with
    all of their contributions (Desfontaines et al. 2022; Korolova et al. 2009; Wilson et al.
    2020; Gopi et al. 2020; Swanberg et al. 2023), charged once as an approximate release at
    (epsilon, delta). The GIL is released during the selection.
    """
    fields = {"epsilon": epsilon, "delta": delta, "max_partitions": max_partitions, "strategy": strategy,
              "backend": backend, "rounds": rounds, "round_budget_ratio": round_budget_ratio,
              "policy_cutoff_sigmas": policy_cutoff_sigmas, "pre_threshold": pre_threshold}
    params = params_of(PartitionSelectionParams, params, fields, select_partitions.__kwdefaults__,
                       ("epsilon", "delta"))
    params.validate()
    user_ids, _ = _ids(users, "users")
    key_ids, back = _ids(keys, "keys", len(user_ids))
    selection = _core.select_partitions_ids(context, user_ids, key_ids, params)
    return PartitionSelection(_keys_of(selection.keys, back, isinstance(keys, (list, tuple))), selection.report)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
