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
