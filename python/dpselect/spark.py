# SPDX-License-Identifier: Apache-2.0
"""One private selection over a column of a Spark DataFrame, with the answer of one process over
the same column.

``dpselect.spark.select(context, frame, "score", epsilon=..., sensitivity=...)`` returns the
:class:`dpselect.Selection` that :func:`dpselect.select` returns over the column's values gathered
in one NumPy array in the DataFrame's row order (its partitions in order, as ``frame.collect()``
lists them), for the same key and stream; ``label_column=`` names the candidates. The scores never
leave their executors:

1. **Look** (nothing charged yet): one Spark SQL aggregation grouped by partition reports each
   partition's length, its first value and its first invalid score (NaN, +inf, a null, an integer
   beyond 2**53). A bad partition fails the call here, naming the partition and the row, before
   anything is charged or drawn.
2. **Begin** on the driver: the release is validated and charged once, and its ticket
   (:class:`dpselect.ReleaseTicket`) made for the whole column.
3. **Evaluate**: one job whose task per partition evaluates its rows with the ticket (which
   travels inside the task's closure) into a :class:`dpselect.ShardResult`; the driver merges them
   and finishes the release, which checks that the partitions tiled the column exactly once.

``dpselect.spark.select_price(context, frame, "bid", prices, epsilon=...)`` prices an auction
whose bids are a column: Spark checks each partition and counts the distinct bids
(``groupBy("bid").count()``), and the driver runs :func:`dpselect.select_price` over them.

The pass's tasks read the column as Arrow batches (``DataFrame.mapInArrow``), so Spark's Python
workers need ``pyarrow`` and ``dpselect`` installed; it runs on a classic (not Spark Connect)
session. Trust: the ticket carries the context's SECRET key
inside the tasks' closures, and the ShardResults coming back are secret: the driver, every
executor and the connections between them see them. Use a cluster under one operator with
encryption between its processes (``spark.network.crypto.enabled``, ``spark.ssl.*``), and keep
event logs and task logs where only that operator reads them. The column is computed twice (the
look and the pass) and must give the same rows in the same order both times: cache it first
(``frame = frame.select("score").cache()``, or ``localCheckpoint()``); a partition whose length
changed between the two is refused, and the release then stays charged.

Requires ``pyspark`` and ``pyarrow`` (``pip install "dpselect[spark]"``) and Java; imported only
with this module.
"""

from __future__ import annotations

import contextlib
import pickle
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql import DataFrame
from pyspark.sql import types as spark_types

from ._checks import check_module as _check_module
from . import _partitioned
from ._arrays import ArrayLike
from ._dpselect import (
    Backend,
    BidderNeighbours,
    Context,
    GridSampler,
    InvalidArgument,
    Mechanism,
    PriceGrid,
    PriceRange,
    PriceSelection,
    PartitionSelectionParams,
    PartitionStrategy,
    PricingParams,
    Selection,
    SelectionParams,
    TopKSelection,
)
from ._partitioned import PartitionError
from ._selection_params import SHARDS_ON_THE_CPU as _SHARDS_ON_THE_CPU
from ._selection_params import TOP_K as _TOP_K
from ._selection_params import SelectionKeywords, Unpack
from ._selection_params import selection_keywords as _selection_keywords
from ._selection_params import selection_params as _selection_params
from .partition_selection import PartitionSelection
from .pricing import select_price as _select_price
from .sharding import ReleaseTicket, TopKTicket, begin_release, begin_top_k_release, merge

__all__ = ["PartitionError", "select", "select_partitions", "select_price", "select_top_k"]

_ENGINE = "dpselect.spark"
_REPARTITION = "repartition or coalesce the DataFrame so that every partition holds a row"
_NUMERIC_TYPES = (spark_types.ByteType, spark_types.ShortType, spark_types.IntegerType, spark_types.LongType,
                  spark_types.FloatType, spark_types.DoubleType)
_RESULT_SCHEMA = "partition long, failed boolean, payload binary"

_BACKEND_ON_EACH_EXECUTOR = """\
backend : Backend, default Backend.AUTO
    AUTO (a usable GPU, else the CPU), CPU or GPU, resolved on each executor."""


def _checked_column(frame: Any, column: Any, name: str, numeric: bool = True) -> None:
    """Refuses a frame that is not a DataFrame, a column it lacks, or a non-numeric column (from the
    schema: no task runs)."""
    if not isinstance(frame, DataFrame):
        raise TypeError(f"frame must be a pyspark.sql.DataFrame (got {type(frame).__name__})")
    if not isinstance(column, str) or column not in frame.columns:
        raise ValueError(f"{name} must name a column of frame (got {column!r}; its columns are {frame.columns})")
    data_type = frame.schema[column].dataType
    if numeric and not isinstance(data_type, _NUMERIC_TYPES):
        raise TypeError(f"{name} {column!r} must be numeric (got a column of type {data_type.simpleString()}); cast "
                        f"it first, e.g. frame.withColumn({column!r}, frame[{column!r}].cast('double'))")


def _column_values(batches: Iterable[pa.RecordBatch]) -> Any:
    """The partition's one column as one array (NumPy, nulls as NaN)."""
    chunks = [batch.column(0) for batch in batches]
    if not chunks:
        return np.empty(0)
    return _partitioned.values_of(pa.chunked_array(chunks).combine_chunks())


def _rows_of(row_ranges: list[tuple[int, int]] | None, partition: int) -> tuple[int, int] | None:
    return None if row_ranges is None or partition >= len(row_ranges) else row_ranges[partition]


def _first_failing_partition(frame: DataFrame, column: str) -> int | None:
    """The lowest partition whose computation fails, found by bisection with jobs that compute only
    the partitions asked for (SparkContext.runJob); None where that is not available (Spark
    Connect) or nothing fails alone."""
    try:
        rdd = frame.select(column).rdd
        spark_context = rdd.context
    except Exception:  # noqa: BLE001 - no RDD API (Spark Connect): the partition stays unnamed
        return None

    def fails(partitions: list[int]) -> bool:
        try:
            spark_context.runJob(rdd, lambda rows: [sum(1 for _ in rows)], partitions)
        except Exception:  # noqa: BLE001 - a failure is what is looked for
            return True
        return False

    low, high = 0, rdd.getNumPartitions()
    if high == 0 or not fails(list(range(low, high))):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        if fails(list(range(low, middle))):
            high = middle
        else:
            low = middle
    return low


@contextlib.contextmanager
def _failures_named(frame: DataFrame, column: str, row_ranges: list[tuple[int, int]] | None,
                    consequence: str) -> Iterator[None]:
    """A Spark job's failure as a PartitionError naming the partition whose computation failed:
    the task Spark's message names where it names one (the job's first stage runs one task per
    partition of the frame), else the lowest partition that fails when computed alone."""
    try:
        yield
    except Exception as error:  # noqa: BLE001 - which partition? found below
        # Some PySpark versions keep the JVM's message, which names the failed task, in the
        # converted exception's stack trace text; py4j's own errors hold it in their message.
        message = f"{error}\n{getattr(error, '_stackTrace', '') or ''}"
        task_failed = re.search(r"Task (\d+) in stage \S+ failed", message)
        partition = int(task_failed.group(1)) if task_failed else _first_failing_partition(frame, column)
        if partition is None:
            raise
        python_error = re.findall(r"^(\w+(?:Error|Exception): .*)$", message, flags=re.MULTILINE)
        what = python_error[-1] if python_error else message.splitlines()[0]
        raise PartitionError(_ENGINE, partition, _rows_of(row_ranges, partition), f"{what}; {consequence}") from error


def _per_partition(frame: DataFrame, column: str, task: Callable[[int, Any], Any],
                   row_ranges: list[tuple[int, int]] | None, consequence: str) -> list:
    """``task(partition, values)`` for every partition of ``frame[column]``, in partition order.

    A PartitionError names the first partition whose task failed: ``task``'s own exception is
    caught on the executor and sent back; a failure upstream of it (reading or computing the
    partition) fails Spark's job, whose message names the failed task, which is the partition.
    """

    def run(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None, "runs inside a Spark task"
        partition = context.partitionId()
        try:
            payload, failed = pickle.dumps(task(partition, _column_values(batches))), False
        except Exception as error:  # noqa: BLE001 - reported on the driver, naming the partition
            payload, failed = f"{type(error).__name__}: {error}".encode(), True
        yield pa.RecordBatch.from_pydict({"partition": [partition], "failed": [failed], "payload": [payload]})

    with _failures_named(frame, column, row_ranges, consequence):
        # cast: PySpark's annotation of the function changed between versions (Iterable, Iterator).
        rows = frame.select(column).mapInArrow(cast(Any, run), _RESULT_SCHEMA).collect()
    rows.sort(key=lambda row: row.partition)
    for row in rows:
        if row.failed:
            raise PartitionError(_ENGINE, row.partition, _rows_of(row_ranges, row.partition),
                                 f"{bytes(row.payload).decode()}; {consequence}")
    return [pickle.loads(row.payload) for row in rows]


# monotonically_increasing_id(): the partition's index in the upper 31 bits, the row's position
# within its partition in the lower 33 (Spark's documented layout).
_POSITION_BITS = 33


def _looks(frame: DataFrame, column: str, negative_is_bad: bool) -> list[_partitioned.Look]:
    """Each partition's look (length, first value, first invalid value), computed by Spark's own
    aggregation (no Python task needed): one job."""
    from pyspark.sql import functions as F

    value = F.col(column)
    data_type = frame.schema[column].dataType
    bad = value.isNull()
    if isinstance(data_type, (spark_types.FloatType, spark_types.DoubleType)):
        bad = bad | F.isnan(value) | (value == F.lit(float("inf")))
    if isinstance(data_type, spark_types.LongType):  # the one integer type beyond 2**53
        limit = _partitioned.LARGEST_EXACT_INTEGER
        bad = bad | (value > F.lit(limit)) | (value < F.lit(-limit))
    if negative_is_bad:
        bad = bad | (value < F.lit(0))
    tagged = frame.select(F.monotonically_increasing_id().alias("position"), value.alias("value"), bad.alias("bad"))
    offset = F.col("position").bitwiseAND(F.lit((1 << _POSITION_BITS) - 1))
    with _failures_named(frame, column, None, "nothing was charged"):
        per_partition = (tagged.groupBy(F.shiftright("position", _POSITION_BITS).alias("partition"))
                         .agg(F.count(F.lit(1)).alias("rows"), F.min_by("value", offset).alias("first"),
                              F.min(F.when(F.col("bad"), offset)).alias("bad_row"),
                              F.min_by("value", F.when(F.col("bad"), offset)).alias("bad_value"))
                         .collect())
    looks = [_partitioned.Look(0, 0.0, -1, "", "")] * frame.rdd.getNumPartitions()
    for row in per_partition:
        bad_row = -1 if row.bad_row is None else int(row.bad_row)
        bad_value, reason = "", ""
        if bad_row >= 0 and row.bad_value is None:
            bad_value, reason = "null", "value"
        elif bad_row >= 0:
            # An integer is bad for its size alone unless it is a negative bid.
            too_large = isinstance(row.bad_value, int) and not (negative_is_bad and row.bad_value < 0)
            bad_value, reason = repr(row.bad_value), "integer" if too_large else "value"
        looks[row.partition] = _partitioned.Look(int(row.rows), float(row.first or 0.0), bad_row, bad_value, reason)
    return looks


class _Evaluate:
    """The pass's task: one partition's shard, after checking that it is the partition the look saw."""

    def __init__(self, ticket: ReleaseTicket | TopKTicket, row_ranges: list[tuple[int, int]]) -> None:
        self.ticket = ticket
        self.row_ranges = row_ranges

    def __call__(self, partition: int, values: Any) -> Any:
        if partition >= len(self.row_ranges):
            raise RuntimeError(f"the DataFrame has more partitions than the look saw ({len(self.row_ranges)}): "
                               "cache it before the release")
        begin, end = self.row_ranges[partition]
        if len(values) != end - begin:
            raise RuntimeError(f"the partition holds {len(values)} rows, the look saw {end - begin}: the DataFrame "
                               "changed between the two jobs; cache it before the release")
        return _partitioned.evaluate(self.ticket, values, begin)


class _Job:
    """The checks and the look that every score release over a Spark column starts with (nothing charged)."""

    def __init__(self, context: Context, frame: Any, column: Any, params: SelectionParams,
                 label_column: str | None) -> None:
        if not isinstance(context, Context):
            raise TypeError(f"context must be a dpselect.Context (got {type(context).__name__})")
        _checked_column(frame, column, "column")
        if label_column is not None:
            _checked_column(frame, label_column, "label_column", numeric=False)
        params.validate()  # before any task runs
        self.frame, self.column, self.label_column = frame, column, label_column
        looks = _looks(frame, column, negative_is_bad=False)
        self.rows, self.first_utility = _partitioned.score_rows(_ENGINE, looks, _REPARTITION)
        self.candidates = self.rows[-1][1]

    def shards(self, ticket: ReleaseTicket | TopKTicket) -> list:
        return _per_partition(self.frame, self.column, _Evaluate(ticket, self.rows), self.rows,
                              "the release stays charged (its stream was drawn)")

    def labels_of(self, indices: list[int]) -> list:
        """The labels of the released rows (public), from one more job over the label column."""
        from pyspark.sql import functions as F

        def position(index: int) -> int:
            partition = next(p for p, (begin, end) in enumerate(self.rows) if begin <= index < end)
            return (partition << _POSITION_BITS) + index - self.rows[partition][0]

        wanted = [position(index) for index in indices]
        found = dict(self.frame.select(F.monotonically_increasing_id().alias("position"), self.label_column)
                     .where(F.col("position").isin(wanted)).collect())
        if len(found) != len(set(wanted)):
            raise RuntimeError(f"{_ENGINE}: the released rows' labels were not found: the DataFrame changed after the "
                               "look; cache it before the release (the release is done)")
        return [_python_value(found[p]) for p in wanted]


def _python_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@_selection_keywords(backend=_BACKEND_ON_EACH_EXECUTOR)
def select(
    context: Context,
    frame: Any,
    column: str,
    params: SelectionParams | None = None,
    *,
    label_column: str | None = None,
    **keywords: Unpack[SelectionKeywords],
) -> Selection:
    """One private release over a column of a Spark DataFrame: the row of a high score.

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant (on the driver).
    frame : pyspark.sql.DataFrame
        The data; cache it first (it is read twice, and must give the same rows in the same order).
    column : str
        The scores' column, numeric (byte, short, int, long, float or double): finite, or -inf to
        exclude a row; a null is an error. The candidate is the row's position in the DataFrame
        (its partitions in order).
    {selection_keywords}
    label_column : str, optional
        A column of the same DataFrame with the rows' public names; ``result.label`` is then the
        released row's (read by one more job).

    Returns
    -------
    Selection
        For the same key and stream, exactly what :func:`dpselect.select` returns over the column
        gathered in one array in row order.

    Raises
    ------
    InvalidArgument
        A bad parameter, an empty partition, or a NaN, null or +inf score (naming the partition and
        the row): before anything is charged or drawn.
    PartitionError
        A partition's task failed on its executor: while looking (nothing charged) or during the
        pass (the release stays charged, as a one-process release that fails during its pass).
    ValueError
        A column the frame lacks, or an integer beyond 2**53 in magnitude (naming the partition and
        the row): nothing charged.
    TypeError
        A frame that is not a DataFrame, or a non-numeric column.
    BudgetExceeded
        The accountant refuses the release: nothing charged or drawn.

    Notes
    -----
    The guarantee is :func:`dpselect.select`'s (Dwork & Roth 2014, Thm 3.10 for the exponential
    mechanism; McKenna & Sheldon 2020; Dwork & Roth 2014, Claim 3.9), charged once on the driver.
    What travels: back from Spark's look, each partition's length, first score and first bad value
    (the driver is trusted with them); the ticket (124 bytes) in each pass task's closure; back,
    one ShardResult per partition.
    Labels are public (post-processing, Dwork & Roth 2014, Prop 2.1).
    """
    params = _selection_params(select, params, keywords)
    job = _Job(context, frame, column, params, label_column)
    release = begin_release(context, params)
    pick = release.finish(merge(job.shards(release.ticket(job.candidates, first_utility=job.first_utility))))
    if label_column is not None:
        setattr(pick, "_label", job.labels_of([pick.index])[0])  # read by Selection.label
    return pick


@_selection_keywords(**_TOP_K, backend=_SHARDS_ON_THE_CPU)
def select_top_k(
    context: Context,
    frame: Any,
    column: str,
    k: int,
    params: SelectionParams | None = None,
    *,
    label_column: str | None = None,
    **keywords: Unpack[SelectionKeywords],
) -> TopKSelection:
    """The k rows of highest noisy score of a Spark column, in order, from one pass (exponential mechanism).

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant (on the driver).
    frame : pyspark.sql.DataFrame
        The data, as for :func:`select`.
    column : str
        The scores' column, as for :func:`select`.
    k : int
        How many rows to release: 1 <= k <= the number of rows.
    {selection_keywords}
    label_column : str, optional
        As for :func:`select`; ``result.labels`` is then the k labels.

    Returns
    -------
    TopKSelection
        For the same key and stream, exactly what :func:`dpselect.select_top_k` returns over the
        column gathered in one array in row order.

    Raises
    ------
    InvalidArgument, PartitionError, ValueError, TypeError, BudgetExceeded
        As for :func:`select`; k outside [1, rows], a mechanism other than EXPONENTIAL or backend
        GPU is an InvalidArgument before anything is charged.

    Notes
    -----
    As :func:`dpselect.select_top_k` (Durfee & Rogers 2019; Dwork & Roth 2014, Thm 3.16), charged
    once on the driver (k picks). Each partition sends back its k best (score, index) pairs.
    """
    params = _selection_params(select_top_k, params, keywords)
    job = _Job(context, frame, column, params, label_column)
    release = begin_top_k_release(context, k, job.candidates, params)
    top = release.finish(merge(job.shards(release.ticket())))
    if label_column is not None:
        setattr(top, "_labels", job.labels_of([int(i) for i in top.indices]))  # read by TopKSelection.labels
    return top


def select_price(
    context: Context,
    frame: Any,
    column: str,
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
    """One private price over the bids in a column of a Spark DataFrame: :func:`dpselect.select_price`'s release.

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant (on the driver).
    frame : pyspark.sql.DataFrame
        The data (read twice, by the check and the count: cache it first).
    column : str
        The bids' column, numeric: each bid finite and >= 0 (read as float64; an integer beyond
        2**53 is refused), one per row.
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
        A bad parameter or price, an empty partition, or a bid that is NaN, null, infinite or
        negative (naming the partition and the row): before anything is charged or drawn.
    PartitionError
        A partition's task failed on its executor: nothing charged.
    ValueError
        A column the frame lacks, or an integer bid beyond 2**53 (naming the partition and the row).
    TypeError
        A frame that is not a DataFrame, or a non-numeric column.
    BudgetExceeded, BackendUnavailable
        As for :func:`dpselect.select_price`: nothing charged or drawn.

    Notes
    -----
    Every price's revenue reads every bid, so the driver needs the whole column: Spark checks each
    partition (its length and first invalid bid) and counts the column's distinct bids
    (``groupBy(column).count()``), and the driver, which then holds the bids (the private data),
    runs :func:`dpselect.select_price` over them, charged once (Dwork & Roth 2014, Thm 3.10 and
    Example 3.5). No dpselect code runs on the executors.
    """
    fields = {"epsilon": epsilon, "neighbours": neighbours, "max_bidders": max_bidders, "mechanism": mechanism,
              "backend": backend, "grid_sampler": grid_sampler}
    params, candidates = _partitioned.pricing_request(select_price, context, prices, params, fields)
    _checked_column(frame, column, "column")
    _partitioned.refuse_bad_partitions(_ENGINE, _looks(frame, column, negative_is_bad=True), "bids",
                                       "finite and >= 0", "bids", _REPARTITION)
    counted = frame.groupBy(column).count()
    table = counted.toArrow() if hasattr(counted, "toArrow") else pa.Table.from_pandas(counted.toPandas())
    distinct = table.column(column).to_numpy().astype(np.float64)
    counts = table.column("count").to_numpy()
    return _select_price(context, np.repeat(distinct, counts), candidates, params)


# -- Partition selection ---------------------------------------------------------------------

_INTEGER_ID_TYPES = {spark_types.ByteType: np.int8, spark_types.ShortType: np.int16,
                     spark_types.IntegerType: np.int32, spark_types.LongType: np.int64}


def _id_column(frame: Any, column: Any, name: str) -> tuple[str, Any]:
    """(kind, NumPy dtype of integer ids) of a column of ids, from the schema: integral ("int"),
    string ("str") or binary ("bytes"); anything else is refused by name (no job runs)."""
    _checked_column(frame, column, name, numeric=False)
    data_type = frame.schema[column].dataType
    for spark_type, dtype in _INTEGER_ID_TYPES.items():
        if isinstance(data_type, spark_type):
            return "int", dtype
    if isinstance(data_type, spark_types.StringType):
        return "str", None
    if isinstance(data_type, spark_types.BinaryType):
        return "bytes", None
    raise TypeError(f"{name} {column!r} must hold integer, string or binary ids (got a column of type "
                    f"{data_type.simpleString()}); floats and booleans are not ids: cast it first, e.g. "
                    f"frame.withColumn({column!r}, frame[{column!r}].cast('long'))")


def _id_looks(frame: DataFrame, columns: dict[str, str]) -> dict[str, list[_partitioned.IdsLook]]:
    """Each partition's length and first null row in each of ``columns`` (column -> kind), from
    one Spark aggregation (no Python task)."""
    from pyspark.sql import functions as F

    nulls = {column: f"null_{i}" for i, column in enumerate(columns)}
    tagged = frame.select(F.monotonically_increasing_id().alias("position"),
                          *[F.col(column).isNull().alias(flag) for column, flag in nulls.items()])
    offset = F.col("position").bitwiseAND(F.lit((1 << _POSITION_BITS) - 1))
    with _failures_named(frame, next(iter(columns)), None, "nothing was charged"):
        per_partition = (tagged.groupBy(F.shiftright("position", _POSITION_BITS).alias("partition"))
                         .agg(F.count(F.lit(1)).alias("rows"),
                              *[F.min(F.when(F.col(flag), offset)).alias(flag) for flag in nulls.values()])
                         .collect())
    partitions = frame.rdd.getNumPartitions()
    looks = {column: [_partitioned.IdsLook(0, "", -1, "")] * partitions for column in columns}
    for row in per_partition:
        for column, flag in nulls.items():
            bad = row[flag]
            looks[column][row.partition] = _partitioned.IdsLook(int(row.rows), columns[column],
                                                                -1 if bad is None else int(bad), "a null")
    return looks


def _ranked(frame: DataFrame, column: str) -> DataFrame:
    """(value, code): each distinct value of a string or binary column and its rank among them in
    byte order (Spark's own order of strings and binaries), numbered in the cluster: a global sort,
    then zipWithIndex (which brings only the sorted partitions' lengths to the driver)."""
    from pyspark.sql import functions as F

    distinct = frame.select(F.col(column).alias("value")).distinct().orderBy("value")
    schema = spark_types.StructType([spark_types.StructField("value", frame.schema[column].dataType, False),
                                     spark_types.StructField("code", spark_types.LongType(), False)])
    numbered = distinct.rdd.zipWithIndex().map(lambda pair: (pair[0][0], pair[1]))
    return frame.sparkSession.createDataFrame(numbered, schema)


def _arrow_table(batches: Iterable[pa.RecordBatch]) -> pa.Table | None:
    batches = list(batches)
    return pa.Table.from_batches(batches) if batches and any(b.num_rows for b in batches) else None


class _BoundTask:
    """A partition of whole users (uid, k): its kept pairs (k, held) of one round."""

    def __init__(self, ticket: Any, round_: int, released: frozenset, key_kind: str) -> None:
        self.ticket, self.round, self.released, self.key_kind = ticket, round_, released, key_kind

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = _arrow_table(batches)
        if table is None:
            return
        users = _partitioned.unsigned_ids(table.column("uid").to_numpy())
        keys = table.column("k").combine_chunks()
        if self.key_kind == "int":
            keys = keys.to_numpy()
        kept, held = _partitioned.bound_partition(self.ticket, users, keys, self.round, self.released)
        kept = kept.cast(table.schema.field("k").type) if hasattr(kept, "type") else pa.array(kept, pa.int64())
        yield pa.RecordBatch.from_arrays([kept, pa.array(held.view(np.int64))], names=["k", "held"])


class _DecideTask:
    """A partition of whole keys (k, kid, held, pairs): its released keys (considered null), then
    one row (k null) with its number of distinct keys."""

    def __init__(self, ticket: Any, round_: int) -> None:
        self.ticket, self.round = ticket, round_

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = _arrow_table(batches)
        if table is None:
            return
        key_type = table.schema.field("k").type
        rows, considered = _partitioned.decide_partition(
            self.ticket, _partitioned.unsigned_ids(table.column("kid").to_numpy()),
            table.column("held").to_numpy(), table.column("pairs").to_numpy(), self.round)
        released = table.column("k").combine_chunks().take(pa.array(rows, pa.int64()))
        yield pa.RecordBatch.from_arrays([released, pa.nulls(len(released), pa.int64())], names=["k", "considered"])
        yield pa.RecordBatch.from_arrays([pa.nulls(1, key_type), pa.array([considered], pa.int64())],
                                         names=["k", "considered"])


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
    """The keys that may be released, from the (user, key) pairs in two columns of a Spark DataFrame.

    Parameters
    ----------
    context : Context
        The source of the selection's streams and its accountant (on the driver).
    frame : pyspark.sql.DataFrame
        The pairs, one a row; read several times (cache it first).
    user_column, key_column : str
        The columns of the user and the key of each pair: integral (byte, short, int, long),
        string or binary ids, no null. Repeated pairs count once.
    params, epsilon, delta, max_partitions, strategy, rounds, round_budget_ratio, pre_threshold
        As for :func:`dpselect.select_partitions`. Every strategy but ``POLICY_GAUSSIAN``, whose
        users update the weights one after another in one process.
    backend : Backend, default Backend.AUTO
        AUTO or CPU: the executors bound and decide on their CPUs.
    policy_cutoff_sigmas : float, default 3.0
        Unused (``POLICY_GAUSSIAN`` is refused); kept so that ``params`` and keywords match
        :func:`dpselect.select_partitions`.

    Returns
    -------
    PartitionSelection
        For the same key and stream, the keys :func:`dpselect.select_partitions` releases over the
        two columns gathered in one process (``frame.toPandas()``): a NumPy array of the column's
        integer dtype, or a list of str or bytes, ascending; and the report
        (``keys_considered`` NOT PRIVATE).

    Raises
    ------
    InvalidArgument
        A bad parameter, ``POLICY_GAUSSIAN``, backend GPU, no pairs, or a null id (naming the
        column, the partition and the row): before anything is charged or drawn.
    TypeError
        A frame that is not a DataFrame, or a column that holds no ids (a float, a boolean).
    ValueError
        A column the frame lacks, or the same column twice.
    BudgetExceeded
        The accountant refuses the selection: nothing charged or drawn.
    PartitionError
        A task failed on its executor: while looking (nothing charged), or after the charge (the
        selection stays charged, as a one-process selection that fails during its passes).

    Notes
    -----
    The guarantee is :func:`dpselect.select_partitions`' ((epsilon, delta + report.delta_float)-DP
    between datasets that add or remove one user with all of its pairs), charged once on the
    driver. The steps:

    1. **Look** (nothing charged): one Spark aggregation counts each partition's rows and finds its
       first null id.
    2. **Begin**: :class:`PartitionSelectionTicket` (the charge, the streams).
    3. **Number** string ids: each column's distinct values sorted by Spark and numbered by
       ``zipWithIndex``, the ranks that one process gives them. String keys are joined to their
       ranks only after bounding and counting, one row per (key, held).
    4. **Bound**: the pairs repartitioned by user; each partition's users bounded by the ticket
       (``mapInArrow``).
    5. **Count and decide**: the kept pairs counted by ``groupBy(key, held)``, repartitioned by key,
       and each partition's keys decided by the ticket. ``DP_SIPS`` repeats 4 and 5 for each round
       without the keys released so far.

    What reaches the driver: each partition's length and first null row, the sorted distinct
    values' partition lengths, the released keys and each decision task's number of keys (which
    make ``keys_considered``). The ticket (SECRET: it holds the context's key) travels in the
    tasks' closures, and the pairs and counts between the steps are the private data: run on a
    cluster under one operator, with encryption between its processes (see this module's notes).
    Spark's Python workers need ``pyarrow`` and ``dpselect``.
    """
    fields = {"epsilon": epsilon, "delta": delta, "max_partitions": max_partitions, "strategy": strategy,
              "backend": backend, "rounds": rounds, "round_budget_ratio": round_budget_ratio,
              "policy_cutoff_sigmas": policy_cutoff_sigmas, "pre_threshold": pre_threshold}
    params = _partitioned.partition_selection_request(select_partitions, context, params, fields)
    user_kind, _ = _id_column(frame, user_column, "user_column")
    key_kind, key_dtype = _id_column(frame, key_column, "key_column")
    if user_column == key_column:
        raise ValueError(f"user_column and key_column must name two columns (got {user_column!r} twice)")
    looks = _id_looks(frame, {user_column: user_kind, key_column: key_kind})
    _partitioned.refuse_bad_ids(_ENGINE, looks[user_column], user_column, "user_column")
    _partitioned.refuse_bad_ids(_ENGINE, looks[key_column], key_column, "key_column")
    if sum(look.rows for look in looks[user_column]) == 0:
        raise InvalidArgument(f"{_ENGINE}: frame must hold (user, key) pairs (got 0 rows); nothing was charged")

    from pyspark.sql import functions as F

    from ._dpselect import begin_partition_selection

    ticket = begin_partition_selection(context, params)  # charged: any failure below leaves it so
    consequence = "the selection stays charged (its streams were drawn)"
    partitions = max(1, frame.rdd.getNumPartitions())
    pairs = frame.select(F.col(user_column).alias("u"), F.col(key_column).alias("k"))
    if user_kind == "int":
        pairs = pairs.select(F.col("u").cast("long").alias("uid"), "k")
    else:
        users = _ranked(frame, user_column)
        pairs = pairs.join(users, pairs.u == users.value).select(F.col("code").alias("uid"), "k")
    if key_kind == "int":
        pairs = pairs.withColumn("k", F.col("k").cast("long"))
    by_user = pairs.repartition(partitions, "uid")
    key_codes = _ranked(frame, key_column) if key_kind != "int" else None
    if ticket.rounds > 1:
        by_user = by_user.persist()
        key_codes = key_codes.persist() if key_codes is not None else None
    key_type = by_user.schema["k"].dataType.simpleString()
    released: list = []
    considered = 0
    try:
        for round_ in range(ticket.rounds):
            kept = by_user.mapInArrow(cast(Any, _BoundTask(ticket, round_, frozenset(released), key_kind)),
                                      f"k {key_type}, held long")
            counted = kept.groupBy("k", "held").agg(F.count(F.lit(1)).alias("pairs"))
            if key_codes is None:
                counted = counted.withColumn("kid", F.col("k"))
            else:
                counted = counted.join(key_codes, counted.k == key_codes.value).select(
                    "k", F.col("code").alias("kid"), "held", "pairs")
            decided = counted.repartition(partitions, "kid").mapInArrow(cast(Any, _DecideTask(ticket, round_)),
                                                                        f"k {key_type}, considered long")
            with _failures_named(frame, user_column, None, consequence):
                rows = decided.collect()
            # Spark gives binary values as bytearray: bytes, to be hashed and returned as one process does.
            released.extend(bytes(row.k) if key_kind == "bytes" else row.k for row in rows if row.considered is None)
            if round_ == 0:
                considered = sum(row.considered for row in rows if row.considered is not None)
    finally:
        if ticket.rounds > 1:
            by_user.unpersist()
            if key_codes is not None:
                key_codes.unpersist()
    return PartitionSelection(_partitioned.released_keys(released, key_kind, key_dtype), ticket.report(considered))


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
