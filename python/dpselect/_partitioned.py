# SPDX-License-Identifier: Apache-2.0
"""What a release over a partitioned column does on each partition and on the driver, whatever
the engine that runs the partitions' tasks (dpselect.dask, dpselect.spark).

Every release starts with a look at each partition, computed where the partition lives, and
checked on the driver before anything is charged: a bad value, an empty partition or a task's
error fails the call there, naming the partition and the row. A score release then evaluates
each partition with a ticket; a pricing release has all it needs from the look (the partition's
distinct bids and their counts).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._dpselect import InvalidArgument

# Integers beyond this magnitude are not all float64 values: dpselect refuses them, as
# numpy.asarray(x, dtype=numpy.float64) would round them.
LARGEST_EXACT_INTEGER = 2**53


class PartitionError(RuntimeError):
    """A partition's task failed on its worker; names the partition and its rows.

    Parameters
    ----------
    engine : str
        The module that ran the tasks (``"dpselect.dask"``, ``"dpselect.spark"``).
    partition : int
        The partition's position in the collection.
    rows : tuple of int
        Its global rows ``(begin, end)``, or ``None`` when they were not known yet.
    message : str
        What failed (the worker's exception, type and message).
    """

    def __init__(self, engine: str, partition: int, rows: tuple[int, int] | None, message: str) -> None:
        where = f"partition {partition}" + ("" if rows is None else f" (rows [{rows[0]}, {rows[1]}))")
        super().__init__(f"{engine}: {where} failed on its worker: {message}")
        self.partition = partition
        self.rows = rows


class Look(NamedTuple):
    """One partition's look: its length, first value and first bad value (nothing else of its data)."""

    rows: int
    first: float
    bad_row: int  # within the partition; -1 when every value is valid
    bad_value: str  # repr of the bad value
    bad_reason: str  # "value" (NaN, +inf, or a negative bid) or "integer" (beyond 2**53)


class BidsLook(NamedTuple):
    """One partition's look at its bids and its contribution to the auction: its distinct bids
    (ascending) and how many times each occurs."""

    look: Look
    distinct: np.ndarray
    counts: np.ndarray


def values_of(part: Any) -> Any:
    """A partition as dpselect reads it: a NumPy (or CuPy) array, nulls as NaN.

    Takes a NumPy or CuPy array, a pandas Series (NumPy or nullable dtype) or a PyArrow array.
    """
    if hasattr(part, "to_pylist"):  # PyArrow: nulls become NaN (integers with nulls become float64)
        return part.to_numpy(zero_copy_only=False)
    if not hasattr(part, "to_numpy"):  # NumPy or CuPy already
        return part
    if isinstance(part.dtype, np.dtype):  # a NumPy dtype: no nulls but NaN
        return part.to_numpy()
    return part.to_numpy(dtype=np.float64, na_value=np.nan)  # pandas' nullable dtypes: pd.NA -> NaN


def _array_module(values: Any) -> Any:
    return np if isinstance(values, np.ndarray) else __import__("cupy")


def _first_bad(values: Any, negative_is_bad: bool) -> tuple[int, str, str]:
    """(row, repr of the value, reason) of the first invalid value, or (-1, "", "")."""
    xp = _array_module(values)
    kind = values.dtype.kind
    if kind == "f":
        # One vectorized reduction first: the maximum is NaN where any value is NaN (it propagates)
        # and +inf where any is +inf; only then find the first of them (-inf: an excluded score).
        clean = bool(values.max() < xp.inf) and (not negative_is_bad or bool(values.min() >= 0))
        if not clean:
            bad = xp.isnan(values) | (values == xp.inf)
            if negative_is_bad:
                bad |= values < 0
            where = xp.flatnonzero(bad)
            if len(where) != 0:
                i = int(where[0])
                return i, repr(float(values[i])), "value"
    elif kind in "iu":
        low, high = int(values.min()), int(values.max())
        if high > LARGEST_EXACT_INTEGER or low < -LARGEST_EXACT_INTEGER or (negative_is_bad and low < 0):
            big = (values > LARGEST_EXACT_INTEGER)
            if kind == "i":
                big |= values < (0 if negative_is_bad else -LARGEST_EXACT_INTEGER)
            i = int(xp.flatnonzero(big)[0])
            value = int(values[i])
            reason = "value" if negative_is_bad and value < 0 else "integer"
            return i, repr(value), reason
    return -1, "", ""


def look_at_scores(part: Any) -> Look:
    """The look of one partition of scores (run where the partition lives)."""
    values = values_of(part)
    if len(values) == 0:
        return Look(0, 0.0, -1, "", "")
    row, value, reason = _first_bad(values, negative_is_bad=False)
    return Look(len(values), float(values[0]), row, value, reason)


def look_at_bids(part: Any) -> BidsLook:
    """The look of one partition of bids and its contribution (run where the partition lives)."""
    values = values_of(part)
    if len(values) == 0:
        return BidsLook(Look(0, 0.0, -1, "", ""), np.empty(0), np.empty(0, dtype=np.int64))
    row, value, reason = _first_bad(values, negative_is_bad=True)
    look = Look(len(values), 0.0, row, value, reason)
    if row >= 0:
        return BidsLook(look, np.empty(0), np.empty(0, dtype=np.int64))
    # float64 as the one-process Bids reads them; -0.0 and +0.0 are one bid value (Bids stores +0.0).
    distinct, counts = np.unique(np.asarray(values, dtype=np.float64) + 0.0, return_counts=True)
    return BidsLook(look, distinct, counts)


def refuse_bad_partitions(engine: str, looks: list[Look], column: str, rule: str, what: str,
                           repartition: str) -> list[tuple[int, int]]:
    """The rows [begin, end) of each partition; raises for the first bad partition (nothing charged)."""
    rows = []
    begin = 0
    for i, look in enumerate(looks):
        if look.rows == 0:
            raise InvalidArgument(f"{engine}: {column} must have no empty partition (got partition {i} empty, after "
                                  f"row {begin}); {repartition}; nothing was charged")
        if look.bad_row >= 0:
            row = begin + look.bad_row
            where = f"in partition {i}, at row {row}"
            if look.bad_reason == "integer":
                raise ValueError(f"{engine}: {column} must hold integers within 2**53 in magnitude, which float64 "
                                 f"holds exactly (got {look.bad_value} {where}); nothing was charged")
            raise InvalidArgument(f"{engine}: {column} must be {rule} (got {look.bad_value} {where}: "
                                  f"{what}[{row}]); nothing was charged")
        rows.append((begin, begin + look.rows))
        begin += look.rows
    return rows


def score_rows(engine: str, looks: list[Look], repartition: str) -> tuple[list[tuple[int, int]], float]:
    """The rows [begin, end) of each partition of scores and the first score (the utility
    reference); raises for the first bad partition, before anything is charged."""
    rows = refuse_bad_partitions(engine, looks, "scores", "finite or -inf", "utilities", repartition)
    return rows, looks[0].first


def gathered_bids(engine: str, looks: list[BidsLook], repartition: str) -> np.ndarray:
    """Every bid of the column, from the partitions' distinct bids and counts (in ascending order
    within each partition); raises for the first bad partition, before anything is charged."""
    refuse_bad_partitions(engine, [b.look for b in looks], "bids", "finite and >= 0", "bids", repartition)
    return np.concatenate([np.repeat(b.distinct, b.counts) for b in looks])


def evaluate(ticket: Any, part: Any, first_index: int) -> Any:
    """One partition's shard of a release: its ShardResult (or TopKShardResult)."""
    return ticket.evaluate(values_of(part), first_index)


def pricing_request(function: Any, context: Any, prices: Any, params: Any, fields: dict) -> tuple[Any, Any]:
    """The PricingParams and candidate prices of a pricing release over a partitioned column,
    checked as far as they can be without the bids, before any task runs (the bids' own checks
    come with the look, the rest from :func:`dpselect.select_price` before its charge)."""
    from . import pricing
    from ._arrays import params_of
    from ._dpselect import Context, PricingParams, SelectionParams

    if not isinstance(context, Context):
        raise TypeError(f"context must be a dpselect.Context (got {type(context).__name__})")
    params = params_of(PricingParams, params, fields, function.__kwdefaults__, ("epsilon",))
    # The release's epsilon, mechanism and backend by the rule every release applies (the
    # sensitivity, the largest price, is checked with the prices).
    SelectionParams(epsilon=params.epsilon, sensitivity=1.0, mechanism=params.mechanism,
                    backend=params.backend).validate()
    return params, pricing._candidates(prices)


# -- Partition selection over a (user, key) pair of columns ------------------------------------
#
# The engines (dpselect.spark, dpselect.dask) run one process's partition selection in four steps
# with a PartitionSelectionTicket: the ids of string columns numbered by their rank among the
# column's distinct values in byte order (as dpselect.select_partitions numbers them), the pairs
# grouped by user and bounded (bound_partition), the kept pairs counted by (key, held) and
# grouped by key, and each key decided (decide_partition). Every random bit follows a user's or
# a key's id, so the keys are those of one process over the same pairs for the same seed.


class IdsLook(NamedTuple):
    """One partition's look at a column of ids: its length, the kind of id it holds ("int", "str",
    "bytes"; "" when empty), and its first bad row (-1 when none) with what is wrong there."""

    rows: int
    kind: str
    bad_row: int
    bad_what: str  # "a null", or the type of a value of another kind than the partition's row 0


def look_at_ids(part: Any) -> IdsLook:
    """The look of one partition of a column of ids (a pandas Series; run where it lives).

    The kinds are those of :func:`dpselect.select_partitions` (partition_selection._ids): integers
    (not bool), str or bytes, one kind per column, no null; an error names only a type, never a value.
    """
    from .partition_selection import _described, _id_kind_of_type  # the one rule for ids

    rows = len(part)
    if rows == 0:
        return IdsLook(0, "", -1, "")
    nulls = np.asarray(part.isna())
    if nulls.any():
        return IdsLook(rows, "", int(np.flatnonzero(nulls)[0]), "a null")
    dtype = part.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return IdsLook(rows, "int", -1, "")
    if type(dtype).__name__ == "StringDtype":
        return IdsLook(rows, "str", -1, "")
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        items = part.tolist()
        kinds = [_id_kind_of_type(t) for t in set(map(type, items))]
        first = _id_kind_of_type(type(items[0]))
        if first is not None and len(kinds) == 1:
            return IdsLook(rows, first, -1, "")
        row = next(i for i, v in enumerate(items) if first is None or _id_kind_of_type(type(v)) != first)
        return IdsLook(rows, first or "", row, _described(items[row]))
    return IdsLook(rows, "", 0, f"of dtype {dtype}")


def refuse_bad_ids(engine: str, looks: list[IdsLook], column: str, name: str) -> str:
    """The kind of id of a column (``name`` the parameter, ``column`` its column) from its
    partitions' looks; raises for the first bad row, naming the partition and the global row, or
    for partitions of different kinds (before anything is charged)."""
    begin = 0
    kind, kind_partition = "", -1
    for i, look in enumerate(looks):
        if look.bad_row >= 0:
            where = f"in partition {i}, at row {begin + look.bad_row}"
            if look.bad_what == "a null":
                raise InvalidArgument(f"{engine}: {name} {column!r} must hold no null (got a null {where}); drop or "
                                      "fill such rows first; nothing was charged")
            raise TypeError(f"{engine}: {name} {column!r} must hold ids of one kind, integers (not bool), str or bytes "
                            f"(got {look.bad_what} {where}); nothing was charged")
        if look.kind and kind and look.kind != kind:
            raise TypeError(f"{engine}: {name} {column!r} must hold ids of one kind (got {look.kind} ids in partition "
                            f"{i}, {kind} ids in partition {kind_partition}); nothing was charged")
        if look.kind and not kind:
            kind, kind_partition = look.kind, i
        begin += look.rows
    return kind


def unsigned_ids(values: Any) -> np.ndarray:
    """Integer ids as dpselect.select_partitions reads them: uint64, or the int64 bits of signed ones."""
    ids = np.asarray(values)
    if ids.dtype == np.uint64:
        return np.ascontiguousarray(ids)
    return np.ascontiguousarray(ids.astype(np.int64, copy=False)).view(np.uint64)


def _without_released(users: np.ndarray, keys: Any, released: frozenset) -> tuple[np.ndarray, Any]:
    """The pairs whose key is not in ``released`` (keys a NumPy array, a pandas Series or a pyarrow array)."""
    if hasattr(keys, "type"):  # pyarrow
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.compute as pc  # type: ignore[import-untyped]

        found = pc.is_in(keys, value_set=pa.array(sorted(released), type=keys.type))
        keep = ~found.to_numpy(zero_copy_only=False)
        return users[keep], keys.filter(pa.array(keep))
    found = keys.isin(list(released)) if hasattr(keys, "isin") else np.isin(keys, list(released))
    keep = ~np.asarray(found)
    return users[keep], keys[keep]


def bound_partition(ticket: Any, users: np.ndarray, keys: Any, round_: int, released: frozenset) -> tuple[Any, Any]:
    """One partition's contribution bounding (its users whole): the kept keys, taken from ``keys``,
    and their users' numbers of kept keys.

    ``users`` are uint64 ids; ``keys`` a NumPy integer array, or strings (a pyarrow array, a pandas
    Series or a NumPy object array). Bounding depends only on the order of each user's distinct
    keys, so string keys are numbered here, among this partition's keys alone, by their ranks in
    byte order (which keeps that order). dp_sips's later rounds leave out the pairs of the keys
    ``released`` by earlier rounds.
    """
    from . import partition_selection

    if released:
        users, keys = _without_released(users, keys, released)
    users = np.ascontiguousarray(users)
    if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu":
        kept, held = ticket.bound(users, unsigned_ids(keys), round_)
        return (kept if keys.dtype == np.uint64 else kept.view(np.int64).astype(keys.dtype)), held
    if len(keys) == 0:
        return keys[:0], np.empty(0, dtype=np.uint64)
    codes, back = partition_selection._ids(keys, "keys")
    kept, held = ticket.bound(users, codes, round_)
    rows = np.asarray(back.first_rows)[kept]
    if hasattr(keys, "type"):  # pyarrow
        return keys.take(rows), held
    return np.asarray(keys, dtype=object)[rows], held


def decide_partition(ticket: Any, key_ids: np.ndarray, held: Any, pairs: Any, round_: int) -> tuple[np.ndarray, int]:
    """One partition's decisions (its keys whole): the rows of ``key_ids`` whose keys are released
    (the first row of each), and the number of distinct keys decided (NOT PRIVATE)."""
    key_ids = np.ascontiguousarray(key_ids, dtype=np.uint64)
    released, considered = ticket.decide(key_ids, np.ascontiguousarray(held, dtype=np.uint64),
                                         np.ascontiguousarray(pairs, dtype=np.uint64), round_)
    rows = np.flatnonzero(np.isin(key_ids, released))
    _, first = np.unique(key_ids[rows], return_index=True)
    return rows[first], int(considered)


def partition_selection_request(function: Any, context: Any, params: Any, fields: dict) -> Any:
    """The PartitionSelectionParams of a partition selection run by an engine, checked before any
    job runs: a context, valid parameters, and a strategy and backend that workers run (the same
    rule as begin_partition_selection, which checks again before its charge)."""
    from ._arrays import params_of
    from ._dpselect import Backend, Context, PartitionSelectionParams, PartitionStrategy

    if not isinstance(context, Context):
        raise TypeError(f"context must be a dpselect.Context (got {type(context).__name__})")
    params = params_of(PartitionSelectionParams, params, fields, function.__kwdefaults__, ("epsilon", "delta"))
    params.validate()
    if params.strategy == PartitionStrategy.POLICY_GAUSSIAN:
        raise InvalidArgument("strategy must not be POLICY_GAUSSIAN on an engine's workers (its users update the "
                              "weights one after another, in one process): use dpselect.select_partitions, or "
                              "DP_SIPS or WEIGHTED_GAUSSIAN; nothing was charged")
    if params.backend == Backend.GPU:
        raise InvalidArgument("backend must be AUTO or CPU on an engine's workers (got GPU); nothing was charged")
    return params


def released_keys(values: list, kind: str, dtype: Any) -> Any:
    """The released keys as dpselect.select_partitions returns them, ascending: a NumPy array of the
    column's integer dtype, or a list of str or bytes (byte order, which is code point order for str)."""
    if kind == "int":
        return np.sort(np.asarray(values, dtype=dtype))
    return sorted(values)
