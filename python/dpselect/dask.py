# SPDX-License-Identifier: Apache-2.0
"""One private selection over a Dask collection, with the answer of one process over the same column.

``dpselect.dask.select(context, scores, epsilon=..., sensitivity=...)`` takes a 1-D Dask array or a
Dask Series of scores (the candidate is the global row position; ``labels=`` names it) and returns
the :class:`dpselect.Selection` that :func:`dpselect.select` returns over the same values gathered
in one NumPy array, for the same key and stream. The scores never leave their workers:

1. **Look** (nothing charged yet): each partition reports its length, its first value and the
   first invalid score it holds (NaN, +inf, a null), or its worker's error. A bad partition fails
   the call here, naming the partition and its rows, before anything is charged or drawn.
2. **Begin** on the driver: the release is validated and charged once, and its ticket
   (:class:`dpselect.ReleaseTicket`) made for the whole column, with the first score as the
   utility reference (as ``select`` takes it).
3. **Evaluate**: each partition's task evaluates its rows with the ticket into a
   :class:`dpselect.ShardResult`; the driver merges them and finishes the release, which checks
   that the partitions tiled the column exactly once.

Trust: the ticket carries the context's SECRET key inside the tasks' arguments, so the scheduler,
every worker and the connections between them see it; so do the ShardResults (secret) coming back.
Use a cluster under one operator, with TLS between its processes (``distributed``'s security
settings), and no task logs kept where others read them. The collection is computed twice (the
look and the pass): persist it first (``scores = scores.persist()``) so its source is read once.

Requires ``dask`` (``pip install "dask[distributed]"``; ``dask[dataframe]`` for Series); imported
only with this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dask
import dask.array

from ._arrays import check_labels as _check_labels
from ._arrays import pick_labels as _pick_labels
from ._selection_params import selection_params as _selection_params
from ._dpselect import Backend, Context, InvalidArgument, Mechanism, Selection, SelectionParams, TopKSelection
from .sharding import Release, ReleaseTicket, TopKTicket, begin_release, begin_top_k_release, merge

__all__ = ["PartitionError", "select", "select_top_k"]


class PartitionError(RuntimeError):
    """A partition's task failed on its worker; names the partition and its rows.

    Parameters
    ----------
    partition : int
        The partition's position in the collection.
    rows : tuple of int
        Its global rows ``(begin, end)``, or ``None`` when they were not known yet.
    message : str
        What failed (the worker's exception, type and message).
    """

    def __init__(self, partition: int, rows: tuple[int, int] | None, message: str) -> None:
        where = f"partition {partition}" + ("" if rows is None else f" (rows [{rows[0]}, {rows[1]}))")
        super().__init__(f"dpselect.dask: {where} failed on its worker: {message}")
        self.partition = partition
        self.rows = rows


def _values_of(part) -> Any:
    """A partition as something dpselect reads: a NumPy (or CuPy) array, nulls as NaN."""
    if not hasattr(part, "to_numpy"):  # a chunk of a Dask array: NumPy or CuPy already
        return part
    if isinstance(part.dtype, np.dtype):  # a NumPy dtype: no nulls but NaN
        return part.to_numpy()
    return part.to_numpy(dtype=np.float64, na_value=np.nan)  # pandas' nullable dtypes: pd.NA -> NaN


def _look_at_partition(part) -> tuple[int, float, int, float]:
    """(length, first value, index of the first NaN or +inf or -1, that value) of one partition."""
    values = _values_of(part)
    n = len(values)
    if n == 0:
        return (0, 0.0, -1, 0.0)
    xp = np if isinstance(values, np.ndarray) else __import__("cupy")
    first = float(values[0])
    if values.dtype.kind == "f":
        # One vectorized reduction first: the maximum is NaN where any value is NaN (it propagates)
        # and +inf where any is +inf; only then find the first of them (-inf excludes: valid).
        if not bool(values.max() < xp.inf):
            bad = xp.flatnonzero(xp.isnan(values) | (values == xp.inf))
            if len(bad) != 0:
                i = int(bad[0])
                return (n, first, i, float(values[i]))
    return (n, first, -1, 0.0)


def _evaluate_partition(ticket: ReleaseTicket, part, first_index: int):
    return ticket.evaluate(_values_of(part), first_index)


def _compute_each(tasks, rows, consequence: str) -> list:
    """The tasks' results; when one fails (its own code or the partition's upstream tasks), a
    PartitionError naming the first failing partition."""
    try:
        return list(dask.compute(*tasks))
    except Exception as error:  # noqa: BLE001 - which partition? computed one by one below
        first_error = error
    for i, task in enumerate(tasks):
        try:
            dask.compute(task)
        except Exception as error:  # noqa: BLE001
            raise PartitionError(i, None if rows is None else rows[i],
                                 f"{type(error).__name__}: {error}; {consequence}") from error
    raise first_error  # failed together, not alone: not a partition's fault


def _dataframe_module() -> Any:
    """dask.dataframe, or None without dask[dataframe] (then only Dask arrays are read)."""
    try:
        import dask.dataframe
    except ImportError:  # pragma: no cover - only without dask[dataframe]
        return None
    return dask.dataframe


def _partitions(scores) -> list:
    """The collection's partitions as delayed objects, in order."""
    if isinstance(scores, dask.array.Array):
        if scores.ndim != 1:
            raise ValueError(f"scores must be a 1-D Dask array (got shape {scores.shape})")
        return list(scores.to_delayed().ravel())
    dd = _dataframe_module()
    if dd is not None and isinstance(scores, dd.DataFrame):
        raise TypeError("scores must be one column (a Dask Series), not a DataFrame: pass frame['column']")
    if dd is not None and isinstance(scores, dd.Series):
        return list(scores.to_delayed())
    raise TypeError(f"scores must be a 1-D Dask array or a Dask Series (got {type(scores).__name__})")


def _check_dtype(scores) -> None:
    dtype = scores.dtype
    kind = getattr(dtype, "kind", "O")
    if kind not in "fiub":
        raise TypeError(f"scores must be numeric (got a column of dtype {dtype}); convert it first, "
                        "e.g. scores.astype('float64')")


def _look(partitions) -> tuple[list[tuple[int, int]], float]:
    """The rows [begin, end) of each partition and the first score; raises for the first bad partition."""
    looks = _compute_each([dask.delayed(_look_at_partition)(p) for p in partitions], None, "nothing was charged")
    rows = []
    begin = 0
    for i, (n, _, bad, value) in enumerate(looks):
        if n == 0:
            raise InvalidArgument(f"dpselect.dask: scores must have no empty partition (got partition {i} empty, "
                                  f"after row {begin}); drop or repartition empty partitions; nothing was charged")
        if bad >= 0:
            raise InvalidArgument(f"dpselect.dask: scores must be finite or -inf (got {value} in partition {i}, "
                                  f"at row {begin + bad}: utilities[{begin + bad}]); nothing was charged")
        rows.append((begin, begin + n))
        begin += n
    return rows, looks[0][1]


def _finish(release, results):
    """Merges the partitions' results and finishes the release (a Release or a TopKRelease)."""
    return release.finish(merge(results))


def _shards(ticket: ReleaseTicket | TopKTicket, partitions, rows) -> list:
    tasks = [dask.delayed(_evaluate_partition)(ticket, p, begin) for p, (begin, _) in zip(partitions, rows)]
    return _compute_each(tasks, rows, "the release stays charged (its stream was drawn)")


def _label_at(labels, index: int, rows, partitions_of_labels):
    if partitions_of_labels is None:
        return labels[index]
    for (begin, end), part in zip(rows, partitions_of_labels):
        if begin <= index < end:
            values = part.compute()
            return values.iloc[index - begin] if hasattr(values, "iloc") else values[index - begin]
    raise AssertionError("the released index lies in no partition")  # pragma: no cover


def select(
    context: Context,
    scores: Any,
    params: SelectionParams | None = None,
    *,
    epsilon: float | None = None,
    sensitivity: float | None = None,
    mechanism: Mechanism = Mechanism.EXPONENTIAL,
    monotone: bool = False,
    utility_bound: float = 0.0,
    backend: Backend = Backend.AUTO,
    utility_reference: float | None = None,
    labels: Any = None,
) -> Selection:
    """One private release over a Dask column: the row of a high score.

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant (on the driver).
    scores : dask.array.Array or dask.dataframe.Series
        One score per candidate (the candidate is the global row position), 1-D, numeric: finite,
        or -inf to exclude a row. Integer columns are converted per partition as
        :func:`dpselect.select` converts them; a null (NaN, ``pd.NA``) is an error.
    params, epsilon, sensitivity, mechanism, monotone, utility_bound, backend, utility_reference
        As for :func:`dpselect.select`. ``backend`` is resolved on each worker (a Dask-CUDA worker
        with CuPy partitions runs its shard on its GPU).
    labels : dask Series or array, or a sequence, optional
        The candidates' public names, one per row: a Dask collection partitioned like ``scores``
        (only the released row's label is computed) or an in-memory sequence.

    Returns
    -------
    Selection
        For the same key and stream, exactly what :func:`dpselect.select` returns over the scores
        gathered in one array (index, label, report).

    Raises
    ------
    InvalidArgument
        A bad parameter, an empty partition, or a NaN or +inf score (naming the partition and the
        row): before anything is charged or drawn.
    PartitionError
        A partition's task failed on its worker: while looking (nothing charged) or during the pass
        (the release stays charged, as a one-process release that fails during its pass).
    TypeError
        A collection that is not a 1-D Dask array or Series, or a non-numeric column.
    BudgetExceeded
        The accountant refuses the release: nothing charged or drawn.

    Notes
    -----
    The guarantee is :func:`dpselect.select`'s (Dwork & Roth 2014, Thm 3.10 for the exponential
    mechanism; McKenna & Sheldon 2020; Dwork & Roth 2014, Claim 3.9), charged once on the driver.
    What travels: 116 bytes of ticket to each task, one ShardResult (10 numbers) and one look (4
    numbers, one of them the partition's first score: the driver is trusted with it) back. Labels
    are public (post-processing, Dwork & Roth 2014, Prop 2.1).
    """
    params = _selection_params(select, params, epsilon, sensitivity, mechanism, monotone, utility_bound, backend,
                               utility_reference)
    job = _Job(context, scores, params, labels)
    release = begin_release(context, params)
    ticket = release.ticket(job.candidates, first_utility=job.first_utility)
    pick = _finish(release, _shards(ticket, job.partitions, job.rows))
    if labels is not None:
        setattr(pick, "_label", job.label_of(pick.index))  # read by Selection.label
    return pick


class _Job:
    """The checks and the look that every release over a Dask column starts with (nothing charged)."""

    def __init__(self, context: Context, scores, params: SelectionParams, labels) -> None:
        if not isinstance(context, Context):
            raise TypeError(f"context must be a dpselect.Context (got {type(context).__name__})")
        self.partitions = _partitions(scores)
        _check_dtype(scores)
        self.label_partitions = None
        if labels is not None and hasattr(labels, "to_delayed"):
            self.label_partitions = _partitions(labels)
            if len(self.label_partitions) != len(self.partitions):
                raise ValueError(f"labels must be partitioned like scores (got {len(self.label_partitions)} partitions "
                                 f"for {len(self.partitions)})")
        params.validate()  # before any work on the workers
        self.rows, self.first_utility = _look(self.partitions)
        self.candidates = self.rows[-1][1]
        self.labels = labels
        if self.label_partitions is None and labels is not None:
            self.labels = _check_labels(labels, self.candidates, "rows")

    def label_of(self, index: int):
        return _label_at(self.labels, index, self.rows, self.label_partitions)


def select_top_k(
    context: Context,
    scores: Any,
    k: int,
    params: SelectionParams | None = None,
    *,
    epsilon: float | None = None,
    sensitivity: float | None = None,
    mechanism: Mechanism = Mechanism.EXPONENTIAL,
    monotone: bool = False,
    utility_bound: float = 0.0,
    backend: Backend = Backend.AUTO,
    utility_reference: float | None = None,
    labels: Any = None,
) -> TopKSelection:
    """The k rows of highest noisy score of a Dask column, in order, from one pass (exponential mechanism).

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant (on the driver).
    scores : dask.array.Array or dask.dataframe.Series
        One score per row, as for :func:`select`.
    k : int
        How many rows to release: 1 <= k <= the number of rows.
    params, epsilon, sensitivity, mechanism, monotone, utility_bound, backend, utility_reference
        The parameters of EACH pick, as for :func:`dpselect.select_top_k` (``backend`` AUTO or CPU:
        the shards run on the workers' CPUs).
    labels : dask Series or array, or a sequence, optional
        The rows' public names, as for :func:`select`; ``result.labels`` is then the k labels.

    Returns
    -------
    TopKSelection
        For the same key and stream, exactly what :func:`dpselect.select_top_k` returns over the
        scores gathered in one array.

    Raises
    ------
    InvalidArgument, PartitionError, TypeError, BudgetExceeded
        As for :func:`select`; k outside [1, rows], a mechanism other than EXPONENTIAL or backend
        GPU is an InvalidArgument before anything is charged.

    Notes
    -----
    As :func:`dpselect.select_top_k` (Durfee & Rogers 2019; Dwork & Roth 2014, Thm 3.16), charged
    once on the driver (k picks). Each partition sends back its k best (score, index) pairs.
    """
    params = _selection_params(select_top_k, params, epsilon, sensitivity, mechanism, monotone, utility_bound, backend,
                               utility_reference)
    job = _Job(context, scores, params, labels)
    release = begin_top_k_release(context, k, job.candidates, params)
    top = _finish(release, _shards(release.ticket(), job.partitions, job.rows))
    if labels is not None:
        setattr(top, "_labels", _pick_labels(job.labels, top.indices) if job.label_partitions is None
                else [job.label_of(int(i)) for i in top.indices])  # read by TopKSelection.labels
    return top

