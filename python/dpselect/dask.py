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

``dpselect.dask.select_price(context, bids, prices, epsilon=...)`` prices an auction whose bids are
a Dask column: one job checks each partition and brings its distinct bids and their counts to the
driver, which runs :func:`dpselect.select_price` over them (every price's revenue reads every bid).

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

import dask
import dask.array
import numpy as np

from ._checks import check_module as _check_module
from . import _partitioned
from ._arrays import ArrayLike
from ._arrays import check_labels as _check_labels
from ._arrays import pick_labels as _pick_labels
from ._selection_params import SHARDS_ON_THE_CPU as _SHARDS_ON_THE_CPU
from ._selection_params import TOP_K as _TOP_K
from ._selection_params import SelectionKeywords, Unpack
from ._selection_params import selection_keywords as _selection_keywords
from ._selection_params import selection_params as _selection_params
from ._dpselect import (
    Backend,
    BidderNeighbours,
    Context,
    GridSampler,
    InvalidArgument,
    Mechanism,
    PartitionSelectionParams,
    PartitionStrategy,
    PriceGrid,
    PriceRange,
    PriceSelection,
    PricingParams,
    Selection,
    SelectionParams,
    TopKSelection,
)
from ._partitioned import PartitionError
from .partition_selection import PartitionSelection
from .pricing import select_price as _select_price
from .sharding import ReleaseTicket, TopKTicket, begin_release, begin_top_k_release, merge

__all__ = ["PartitionError", "select", "select_partitions", "select_price", "select_top_k"]


_ENGINE = "dpselect.dask"
_REPARTITION = "drop or repartition empty partitions"

_BACKEND_ON_EACH_WORKER = """\
backend : Backend, default Backend.AUTO
    AUTO (a usable GPU, else the CPU), CPU or GPU, resolved on each worker: a Dask-CUDA worker
    with CuPy partitions runs its shard on its GPU."""


def _distributed_client() -> Any:
    """The distributed Client that dask.compute would use, or None (a local scheduler)."""
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - only without dask[distributed]
        return None
    try:
        return default_client()
    except ValueError:  # no client: dask.compute runs a local scheduler
        return None


def _compute_each(tasks, rows, consequence: str) -> list:
    """The tasks' results; when one fails (its own code or the partition's upstream tasks), a
    PartitionError naming the first failing partition.

    On a distributed cluster each task is a future whose own status says whether it failed (a
    failed key computed again would wait on the failure the scheduler keeps); on a local
    scheduler the tasks are computed again one by one to find it.
    """
    def failure(i: int, error: BaseException) -> PartitionError:
        return PartitionError("dpselect.dask", i, None if rows is None else rows[i],
                              f"{type(error).__name__}: {error}; {consequence}")

    client = _distributed_client()
    if client is not None:
        from distributed import wait

        futures = client.compute(list(tasks))
        wait(futures)
        for i, future in enumerate(futures):
            if future.status == "error":
                error = future.exception()
                raise failure(i, error) from error
        return list(client.gather(futures))
    try:
        return list(dask.compute(*tasks))
    except Exception as error:  # noqa: BLE001 - which partition? computed one by one below
        first_error = error
    for i, task in enumerate(tasks):
        try:
            dask.compute(task)
        except Exception as error:  # noqa: BLE001
            raise failure(i, error) from error
    raise first_error  # failed together, not alone: not a partition's fault


def _dataframe_module() -> Any:
    """dask.dataframe, or None without dask[dataframe] (then only Dask arrays are read)."""
    try:
        import dask.dataframe
    except ImportError:  # pragma: no cover - only without dask[dataframe]
        return None
    return dask.dataframe


def _partitions(column, name: str = "scores") -> list:
    """The collection's partitions as delayed objects, in order."""
    if isinstance(column, dask.array.Array):
        if column.ndim != 1:
            raise ValueError(f"{name} must be a 1-D Dask array (got shape {column.shape})")
        return list(column.to_delayed().ravel())
    dd = _dataframe_module()
    if dd is not None and isinstance(column, dd.DataFrame):
        raise TypeError(f"{name} must be one column (a Dask Series), not a DataFrame: pass frame['column']")
    if dd is not None and isinstance(column, dd.Series):
        return list(column.to_delayed())
    raise TypeError(f"{name} must be a 1-D Dask array or a Dask Series (got {type(column).__name__})")


def _check_dtype(column, name: str = "scores") -> None:
    dtype = column.dtype
    kind = getattr(dtype, "kind", "O")
    if kind not in "fiub":
        raise TypeError(f"{name} must be numeric (got a column of dtype {dtype}); convert it first, "
                        f"e.g. {name}.astype('float64')")


def _look(partitions) -> tuple[list[tuple[int, int]], float]:
    """The rows [begin, end) of each partition and the first score; raises for the first bad partition."""
    looks = _compute_each([dask.delayed(_partitioned.look_at_scores)(p) for p in partitions], None,
                          "nothing was charged")
    return _partitioned.score_rows("dpselect.dask", looks, _REPARTITION)


def _finish(release, results):
    """Merges the partitions' results and finishes the release (a Release or a TopKRelease)."""
    return release.finish(merge(results))


def _shards(ticket: ReleaseTicket | TopKTicket, partitions, rows) -> list:
    tasks = [dask.delayed(_partitioned.evaluate)(ticket, p, begin) for p, (begin, _) in zip(partitions, rows)]
    return _compute_each(tasks, rows, "the release stays charged (its stream was drawn)")


def _label_at(labels, index: int, rows, partitions_of_labels):
    if partitions_of_labels is None:
        return labels[index]
    for (begin, end), part in zip(rows, partitions_of_labels):
        if begin <= index < end:
            values = part.compute()
            return values.iloc[index - begin] if hasattr(values, "iloc") else values[index - begin]
    raise AssertionError("the released index lies in no partition")  # pragma: no cover


@_selection_keywords(backend=_BACKEND_ON_EACH_WORKER)
def select(
    context: Context,
    scores: Any,
    params: SelectionParams | None = None,
    *,
    labels: Any = None,
    **keywords: Unpack[SelectionKeywords],
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
    {selection_keywords}
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
    What travels: 124 bytes of ticket to each task, one ShardResult (10 numbers) and one look (4
    numbers, one of them the partition's first score: the driver is trusted with it) back. Labels
    are public (post-processing, Dwork & Roth 2014, Prop 2.1).
    """
    params = _selection_params(select, params, keywords)
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


@_selection_keywords(**_TOP_K, backend=_SHARDS_ON_THE_CPU)
def select_top_k(
    context: Context,
    scores: Any,
    k: int,
    params: SelectionParams | None = None,
    *,
    labels: Any = None,
    **keywords: Unpack[SelectionKeywords],
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
    {selection_keywords}
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
    params = _selection_params(select_top_k, params, keywords)
    job = _Job(context, scores, params, labels)
    release = begin_top_k_release(context, k, job.candidates, params)
    top = _finish(release, _shards(release.ticket(), job.partitions, job.rows))
    if labels is not None:
        setattr(top, "_labels", _pick_labels(job.labels, top.indices) if job.label_partitions is None
                else [job.label_of(int(i)) for i in top.indices])  # read by TopKSelection.labels
    return top



def select_price(
    context: Context,
    bids: Any,
    prices: PriceGrid | PriceRange | ArrayLike,
    params: PricingParams | None = None,
    *,
    epsilon: float | None = None,
    neighbours: BidderNeighbours = BidderNeighbours.ADD_OR_REMOVE_BIDDER,
    max_bidders: int = 0,
    mechanism: Mechanism = Mechanism.EXPONENTIAL,
    backend: Backend = Backend.AUTO,
    grid_sampler: GridSampler = GridSampler.PER_PRICE_NOISE,
) -> PriceSelection:
    """One private price over the bids of a Dask column: :func:`dpselect.select_price`'s release.

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant (on the driver).
    bids : dask.array.Array or dask.dataframe.Series
        The auction's bids, one per row, 1-D, numeric: each finite and >= 0 (read as float64; an
        integer beyond 2**53 is refused).
    prices : PriceGrid or PriceRange or array_like
        The candidate prices, as for :func:`dpselect.select_price` (public, on the driver).
    params, epsilon, neighbours, max_bidders, mechanism, backend, grid_sampler
        As for :func:`dpselect.select_price`.

    Returns
    -------
    PriceSelection
        For the same key and stream, exactly what :func:`dpselect.select_price` returns over the
        bids gathered in one array.

    Raises
    ------
    InvalidArgument
        A bad parameter or price, an empty partition, or a bid that is NaN, infinite or negative
        (naming the partition and the row): before anything is charged or drawn.
    PartitionError
        A partition's task failed on its worker: nothing charged.
    ValueError
        An integer bid beyond 2**53 in magnitude (naming the partition and the row): nothing charged.
    TypeError
        A collection that is not a 1-D Dask array or Series, or a non-numeric column.
    BudgetExceeded, BackendUnavailable
        As for :func:`dpselect.select_price`: nothing charged or drawn.

    Notes
    -----
    Every price's utility, its revenue p * #{bids >= p}, reads every bid, and the bid-interval
    sampler walks them in order, so the release needs the whole sorted column in one place. One
    Dask job does the rest: each partition's task checks its bids and sends the driver its
    distinct bids with their counts (a bid column on a price grid of g values sends at most g
    pairs per partition, whatever its length); the driver rebuilds the bids from them and runs
    :func:`dpselect.select_price` there, charged once. The driver therefore holds the bids (the
    private data) as after collecting the column: trust it as the one-process release's machine.
    The guarantee is :func:`dpselect.select_price`'s (Dwork & Roth 2014, Thm 3.10 and Example 3.5).
    """
    fields = {"epsilon": epsilon, "neighbours": neighbours, "max_bidders": max_bidders, "mechanism": mechanism,
              "backend": backend, "grid_sampler": grid_sampler}
    params, candidates = _partitioned.pricing_request(select_price, context, prices, params, fields)
    partitions = _partitions(bids, "bids")
    _check_dtype(bids, "bids")
    looks = _compute_each([dask.delayed(_partitioned.look_at_bids)(p) for p in partitions], None,
                          "nothing was charged")
    gathered = _partitioned.gathered_bids("dpselect.dask", looks, _REPARTITION)
    return _select_price(context, gathered, candidates, params)


# -- Partition selection ---------------------------------------------------------------------


def _pair_columns(frame: Any, user_column: Any, key_column: Any) -> tuple[Any, Any]:
    """The dtypes of the two id columns of a Dask DataFrame, checked by name (no task runs)."""
    dd = _dataframe_module()
    if dd is None or not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a Dask DataFrame (got {type(frame).__name__})")
    for name, column in (("user_column", user_column), ("key_column", key_column)):
        if not isinstance(column, str) or column not in frame.columns:
            raise ValueError(f"{name} must name a column of frame (got {column!r}; its columns are "
                             f"{list(frame.columns)})")
    if user_column == key_column:
        raise ValueError(f"user_column and key_column must name two columns (got {user_column!r} twice)")
    return frame[user_column].dtype, frame[key_column].dtype


def _look_at_pairs(part: Any, user_column: str, key_column: str) -> tuple:
    return _partitioned.look_at_ids(part[user_column]), _partitioned.look_at_ids(part[key_column])


def _ranked(column: Any) -> Any:
    """(value, code): each distinct value of a Dask column of strings and its rank among them in
    byte order, numbered where the values live: a distributed sort, then each sorted partition
    numbered from the lengths of those before it (only the lengths reach the client)."""
    import pandas as pd  # type: ignore[import-untyped]

    distinct = column.drop_duplicates().to_frame(name="value").sort_values("value").persist()
    lengths = [int(n) for n in distinct.map_partitions(len).compute()]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)

    def number(part: Any, partition_info: Any = None) -> Any:
        first = offsets[partition_info["number"]] if partition_info is not None else 0
        return part.assign(code=np.arange(len(part), dtype=np.int64) + first)

    meta = pd.DataFrame({"value": pd.Series([], dtype=column.dtype), "code": pd.Series([], dtype=np.int64)})
    return distinct.map_partitions(number, meta=meta)


def _hex_of_bytes(part: Any) -> Any:
    return part.map(bytes.hex).astype("string[pyarrow]")


def _sortable(column: Any, kind: str) -> Any:
    """A column of ids as the steps carry it: integers as they are, str as Arrow strings, bytes as
    the Arrow strings of their hex digits (Dask sorts neither Python bytes nor objects; two hex
    digits a byte, lower case, sort as the bytes do)."""
    import pandas as pd  # type: ignore[import-untyped]

    if kind == "bytes":
        return column.map_partitions(_hex_of_bytes, meta=pd.Series([], dtype="string[pyarrow]", name=column.name))
    if kind == "str" and column.dtype != "string[pyarrow]":
        return column.astype("string[pyarrow]")
    return column


def _with_user_ids(part: Any) -> Any:
    return part.assign(uid=_partitioned.unsigned_ids(part["u"].to_numpy()).view(np.int64))


def _with_key_ids(part: Any) -> Any:
    return part.assign(kid=_partitioned.unsigned_ids(part["k"].to_numpy()).view(np.int64))


def _bound_task(part: Any, ticket: Any, round_: int, released: frozenset, key_kind: str) -> Any:
    """A partition of whole users (uid, k): its kept pairs (k, held) of one round."""
    import pandas as pd  # type: ignore[import-untyped]

    users = _partitioned.unsigned_ids(part["uid"].to_numpy())
    keys = part["k"].to_numpy() if key_kind == "int" else part["k"].reset_index(drop=True)
    kept, held = _partitioned.bound_partition(ticket, users, keys, round_, released)
    return pd.DataFrame({"k": pd.Series(kept, dtype=part["k"].dtype), "held": held.view(np.int64)})


def _decide_task(part: Any, ticket: Any, round_: int, placeholder: Any) -> Any:
    """A partition of whole keys (k, kid, held, pairs): its released keys (considered 0), then one
    row (k a placeholder, released False) with its number of distinct keys."""
    import pandas as pd  # type: ignore[import-untyped]

    if len(part) == 0:
        return part[["k"]].assign(released=np.zeros(0, dtype=bool), considered=np.zeros(0, dtype=np.int64))
    rows, considered = _partitioned.decide_partition(ticket, _partitioned.unsigned_ids(part["kid"].to_numpy()),
                                                     part["held"].to_numpy(), part["pairs"].to_numpy(), round_)
    keys = pd.concat([part["k"].iloc[rows], pd.Series([placeholder], dtype=part["k"].dtype)], ignore_index=True)
    flags = np.zeros(len(rows) + 1, dtype=bool)
    flags[:-1] = True
    counts = np.zeros(len(rows) + 1, dtype=np.int64)
    counts[-1] = considered
    return pd.DataFrame({"k": keys, "released": flags, "considered": counts})


def select_partitions(
    context: Context,
    frame: Any,
    user_column: str,
    key_column: str,
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
    """The keys that may be released, from the (user, key) pairs in two columns of a Dask DataFrame.

    Parameters
    ----------
    context : Context
        The source of the selection's streams and its accountant (on the client).
    frame : dask.dataframe.DataFrame
        The pairs, one a row; read several times (persist it first).
    user_column, key_column : str
        The columns of the user and the key of each pair: ids of one kind, integers (not bool), str
        or bytes, no null, as for :func:`dpselect.select_partitions`. Repeated pairs count once.
    params, epsilon, delta, max_partitions, strategy, rounds, round_budget_ratio, pre_threshold
        As for :func:`dpselect.select_partitions`. Every strategy but ``POLICY_GAUSSIAN``, whose
        users update the weights one after another in one process.
    backend : Backend, default Backend.AUTO
        AUTO or CPU: the workers bound and decide on their CPUs.
    policy_cutoff_sigmas : float, default 3.0
        Unused (``POLICY_GAUSSIAN`` is refused); kept so that ``params`` and keywords match
        :func:`dpselect.select_partitions`.

    Returns
    -------
    PartitionSelection
        For the same key and stream, the keys :func:`dpselect.select_partitions` releases over the
        two columns computed in one process: a NumPy array of the column's integer dtype, or a list
        of str or bytes, ascending; and the report (``keys_considered`` NOT PRIVATE).

    Raises
    ------
    InvalidArgument
        A bad parameter, ``POLICY_GAUSSIAN``, backend GPU, no pairs, or a null id (naming the
        column, the partition and the row): before anything is charged or drawn.
    TypeError
        A frame that is not a Dask DataFrame, or an id of another kind than its column's (a float,
        a bool, an int among strings), naming the column, the partition and the row.
    ValueError
        A column the frame lacks, or the same column twice.
    BudgetExceeded
        The accountant refuses the selection: nothing charged or drawn.
    PartitionError
        A partition's task failed while looking: nothing charged.

    Notes
    -----
    The guarantee is :func:`dpselect.select_partitions`' ((epsilon, delta + report.delta_float)-DP
    between datasets that add or remove one user with all of its pairs), charged once on the
    client. The steps: each partition's look (its length, the kind of its ids and its first bad
    row; nothing charged); the ticket (:class:`PartitionSelectionTicket`: the charge, the
    streams); string ids numbered by a distributed sort of each column's distinct values (string
    keys joined to their ranks only after bounding and counting, one row per (key, held)); the
    pairs shuffled by user and each partition's users bounded; the kept pairs counted by
    ``groupby([key, held])``, shuffled by key and each partition's keys decided (``DP_SIPS``
    repeats the last two for each round, without the keys released so far).

    What reaches the client: each partition's look, the sorted distinct values' partition
    lengths, the released keys and each decision task's number of keys (which make
    ``keys_considered``). The ticket (SECRET: it holds the context's key) travels in the tasks'
    arguments, and the pairs and counts between the steps are the private data: see this
    module's trust notes.
    """
    import pandas as pd  # type: ignore[import-untyped]

    from ._dpselect import begin_partition_selection

    fields = {"epsilon": epsilon, "delta": delta, "max_partitions": max_partitions, "strategy": strategy,
              "backend": backend, "rounds": rounds, "round_budget_ratio": round_budget_ratio,
              "policy_cutoff_sigmas": policy_cutoff_sigmas, "pre_threshold": pre_threshold}
    params = _partitioned.partition_selection_request(select_partitions, context, params, fields)
    _, key_dtype = _pair_columns(frame, user_column, key_column)
    pairs = frame[[user_column, key_column]]
    looks = _compute_each([dask.delayed(_look_at_pairs)(part, user_column, key_column) for part in pairs.to_delayed()],
                          None, "nothing was charged")
    user_kind = _partitioned.refuse_bad_ids(_ENGINE, [look[0] for look in looks], user_column, "user_column")
    key_kind = _partitioned.refuse_bad_ids(_ENGINE, [look[1] for look in looks], key_column, "key_column")
    if not user_kind:
        raise InvalidArgument(f"{_ENGINE}: frame must hold (user, key) pairs (got 0 rows); nothing was charged")

    ticket = begin_partition_selection(context, params)  # charged: any failure below leaves it so
    partitions = max(1, pairs.npartitions)
    users, keys = _sortable(pairs[user_column], user_kind), _sortable(pairs[key_column], key_kind)
    pairs = users.to_frame(name="u").assign(k=keys)
    if user_kind == "int":
        pairs = pairs.map_partitions(_with_user_ids)
    else:
        pairs = pairs.merge(_ranked(users), left_on="u", right_on="value").rename(columns={"code": "uid"})
    by_user = pairs[["uid", "k"]].shuffle(on="uid", npartitions=partitions)
    key_codes = _ranked(keys) if key_kind != "int" else None
    if ticket.rounds > 1:
        by_user = by_user.persist()
        key_codes = key_codes.persist() if key_codes is not None else None
    placeholder = 0 if key_kind == "int" else ""
    released: list = []
    considered = 0
    for round_ in range(ticket.rounds):
        kept = by_user.map_partitions(_bound_task, ticket, round_, frozenset(released), key_kind,
                                      meta=pd.DataFrame({"k": pd.Series([], dtype=pairs["k"].dtype),
                                                         "held": pd.Series([], dtype=np.int64)}))
        counted = kept.groupby(["k", "held"]).size().rename("pairs").reset_index()
        if key_codes is None:
            counted = counted.map_partitions(_with_key_ids)
        else:
            counted = counted.merge(key_codes, left_on="k", right_on="value").rename(columns={"code": "kid"})
        decided = counted[["k", "kid", "held", "pairs"]].shuffle(on="kid", npartitions=partitions).map_partitions(
            _decide_task, ticket, round_, placeholder,
            meta=pd.DataFrame({"k": pd.Series([], dtype=pairs["k"].dtype), "released": pd.Series([], dtype=bool),
                               "considered": pd.Series([], dtype=np.int64)}))
        result = decided.compute()
        released.extend(result["k"][result["released"].to_numpy()].tolist())
        if round_ == 0:
            considered = int(result["considered"].sum())
    if key_kind == "bytes":
        released = [bytes.fromhex(key) for key in released]
    return PartitionSelection(_partitioned.released_keys(released, key_kind, key_dtype), ticket.report(considered))


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
