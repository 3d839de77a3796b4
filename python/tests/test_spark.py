# SPDX-License-Identifier: Apache-2.0
"""dpselect.spark on PySpark in local mode (two executor threads, Python worker processes): a
release over a DataFrame column equals the one-process release over the same values in row order;
a NaN, a null, an empty partition, a non-numeric or missing column or a task's error fails on the
driver naming the partition, with nothing charged or drawn; a partition missing or given twice is
refused by the finish."""

import os
import shutil
import sys

import numpy as np
import pytest

if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
    pytest.skip("PySpark needs Java (Debian's default-jre-headless)", allow_module_level=True)
pyspark = pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import dpselect  # noqa: E402
import dpselect.spark  # noqa: E402
from support import PARALLEL_STRATEGIES, expect_same_keys, ledger_context, partition_pairs  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    """A local session whose Python workers run this interpreter (dpselect importable there)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("dpselect-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "1g")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def scores(n):
    return 500.0 + 4.0 * np.random.default_rng(8).random(n)


def frame_of(spark, columns: dict, partitions: int):
    """A cached DataFrame of the columns in row order, split into `partitions` contiguous partitions."""
    frame = spark.createDataFrame(pd.DataFrame(columns)).coalesce(1)
    with_row = frame.withColumn("_row", F.monotonically_increasing_id())
    split = with_row.repartitionByRange(partitions, "_row").sortWithinPartitions("_row").drop("_row")
    return split.cache()


def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    assert dpselect.select(context, [1.0, 2.0], epsilon=0.1, sensitivity=1.0).report.stream == 0


def test_a_release_with_labels_equals_one_process(spark):
    # One mechanism: the engine's plumbing is the same for each (test_dask.py and test_sharding.py
    # run every mechanism through tickets).
    u = scores(20_000)
    keys = [f"k{i}" for i in range(len(u))]
    frame = frame_of(spark, {"score": u, "key": keys}, 5)
    assert frame.rdd.getNumPartitions() == 5
    keywords = {"epsilon": 1.0, "sensitivity": 1.0, "mechanism": dpselect.Mechanism.PERMUTE_AND_FLIP}
    expected = dpselect.select(dpselect.Context.fixed_seed(4), u, labels=keys, **keywords)
    pick = dpselect.spark.select(dpselect.Context.fixed_seed(4), frame, "score", label_column="key", **keywords)
    assert (pick.index, pick.label, pick.report.stream) == (expected.index, expected.label, expected.report.stream)
    assert pick.report.slack.epsilon == expected.report.slack.epsilon


def test_integer_float32_and_excluded_columns_are_read_as_select_reads_them(spark):
    ints = np.arange(3000, dtype=np.int64) % 37
    floats = scores(3000).astype(np.float32)
    floats[:1000] = -np.inf
    frame = frame_of(spark, {"i": ints, "f": floats}, 3)
    for column, values in (("i", ints), ("f", floats)):
        expected = dpselect.select(dpselect.Context.fixed_seed(5), values, epsilon=1.0, sensitivity=1.0)
        pick = dpselect.spark.select(dpselect.Context.fixed_seed(5), frame, column, epsilon=1.0, sensitivity=1.0)
        assert pick.index == expected.index


@pytest.mark.parametrize("k", [1, 20])
def test_a_top_k_equals_one_process_with_labels(spark, k):
    u = scores(8_009)
    keys = np.arange(len(u)) * 3
    frame = frame_of(spark, {"score": u, "key": keys}, 4)
    expected = dpselect.select_top_k(dpselect.Context.fixed_seed(9), u, k, epsilon=0.3, sensitivity=1.0, labels=keys)
    top = dpselect.spark.select_top_k(dpselect.Context.fixed_seed(9), frame, "score", k, epsilon=0.3,
                                      sensitivity=1.0, label_column="key")
    assert list(top.indices) == list(expected.indices)
    assert list(top.labels) == [int(x) for x in expected.labels]


def test_a_top_k_charges_epsilon_in_all(spark):
    context, accountant = ledger_context()
    frame = frame_of(spark, {"score": scores(100)}, 3)
    top = dpselect.spark.select_top_k(context, frame, "score", 10, epsilon=1.0, sensitivity=1.0)
    assert accountant.release_count == 10 and accountant.spent().epsilon == 1.0
    assert top.report.per_pick.epsilon_spent == 0.1

def test_pricing_equals_one_process(spark):
    bids = np.round(np.random.default_rng(12).gamma(2.0, 20.0, 10_007), 2)
    frame = frame_of(spark, {"bid": bids}, 4)
    for prices, sampler in ((dpselect.PriceGrid(0.5, 150.0, 0.5), dpselect.GridSampler.BID_INTERVALS),
                            (dpselect.PriceRange(1.0, 200.0), dpselect.GridSampler.PER_PRICE_NOISE)):
        expected = dpselect.select_price(dpselect.Context.fixed_seed(21), bids, prices, epsilon=0.5,
                                         grid_sampler=sampler)
        pick = dpselect.spark.select_price(dpselect.Context.fixed_seed(21), frame, "bid", prices, epsilon=0.5,
                                           grid_sampler=sampler)
        assert (pick.price, pick.candidate, pick.report.stream) == \
            (expected.price, expected.candidate, expected.report.stream)


def test_a_nan_a_null_or_an_infinity_fails_naming_the_partition_and_charges_nothing(spark):
    context, accountant = ledger_context()
    u = scores(1000)
    u[612] = -1.0  # made a NaN by Spark: pandas' NaN would arrive as a null through Arrow
    frame = frame_of(spark, {"s": u}, 4)
    frame = frame.withColumn("s", F.when(frame.s == -1.0, F.lit(float("nan"))).otherwise(frame.s))
    with pytest.raises(dpselect.InvalidArgument, match=r"got nan in partition 2, at row 612: utilities\[612\]"):
        dpselect.spark.select(context, frame, "s", epsilon=0.5, sensitivity=1.0)
    nullable = pd.Series(scores(100)).astype("Float64")
    nullable[37] = pd.NA
    with pytest.raises(dpselect.InvalidArgument, match=r"partition 1, at row 37"):
        dpselect.spark.select(context, frame_of(spark, {"s": nullable}, 3), "s", epsilon=0.5, sensitivity=1.0)
    bids = np.ones(100)
    bids[70] = -2.0
    with pytest.raises(dpselect.InvalidArgument, match=r"bids must be finite and >= 0 \(got -2.0 in partition 1"):
        dpselect.spark.select_price(context, frame_of(spark, {"b": bids}, 2), "b", dpselect.PriceGrid(1.0, 2.0, 1.0),
                                    epsilon=0.5)
    big = np.array([1, 2, 2**60], dtype=np.int64)
    with pytest.raises(ValueError, match=r"integers within 2\*\*53 .*at row 2"):
        dpselect.spark.select(context, frame_of(spark, {"s": big}, 1), "s", epsilon=0.5, sensitivity=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_task_error_fails_naming_the_partition_and_charges_nothing(spark):
    def failing_task(batches):  # local: pickled by value for the executors
        from pyspark import TaskContext
        if TaskContext.get().partitionId() == 1:
            raise OSError("disk on fire")
        yield from batches

    context, accountant = ledger_context()
    frame = frame_of(spark, {"s": scores(300)}, 3)
    failing = frame.mapInArrow(failing_task, frame.schema)  # fails upstream of dpselect's task
    with pytest.raises(dpselect.spark.PartitionError,
                       match=r"partition 1 failed on its worker: OSError: disk on fire; nothing was charged"):
        dpselect.spark.select(context, failing, "s", epsilon=0.5, sensitivity=1.0)
    with pytest.raises(dpselect.spark.PartitionError, match=r"partition 1 failed on its worker: OSError"):
        dpselect.spark.select_price(context, failing, "s", [1.0, 2.0], epsilon=0.5)

    def fail_in_the_pass(partition, values):
        raise OSError("disk on fire")

    with pytest.raises(dpselect.spark.PartitionError,
                       match=r"partition 0 \(rows \[0, 100\)\) failed on its worker: OSError: disk on fire; stays"):
        dpselect.spark._per_partition(frame, "s", fail_in_the_pass, [(0, 100), (100, 200), (200, 300)], "stays")
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_frames_columns_and_parameters_are_refused_before_any_work(spark):
    context, accountant = ledger_context()
    frame = frame_of(spark, {"s": [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0], "w": list("abcdefghi")}, 3)
    with pytest.raises(dpselect.InvalidArgument, match=r"partition 1 empty, after row 3"):
        dpselect.spark.select(context, frame.filter(frame.s > 0.5), "s", epsilon=0.5, sensitivity=1.0)
    with pytest.raises(TypeError, match=r"column 'w' must be numeric \(got a column of type string\)"):
        dpselect.spark.select(context, frame, "w", epsilon=0.5, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"column must name a column of frame \(got 'x'"):
        dpselect.spark.select(context, frame, "x", epsilon=0.5, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"label_column must name a column of frame \(got 'y'"):
        dpselect.spark.select(context, frame, "s", epsilon=0.5, sensitivity=1.0, label_column="y")
    with pytest.raises(TypeError, match="frame must be a pyspark.sql.DataFrame"):
        dpselect.spark.select(context, scores(10), "s", epsilon=0.5, sensitivity=1.0)
    with pytest.raises(TypeError, match="context must be a dpselect.Context"):
        dpselect.spark.select(None, frame, "s", epsilon=0.5, sensitivity=1.0)
    with pytest.raises(dpselect.InvalidArgument, match=r"epsilon must be finite and > 0 \(got -1\)"):
        dpselect.spark.select(context, frame, "s", epsilon=-1.0, sensitivity=1.0)
    with pytest.raises(dpselect.InvalidArgument, match="k must be between 1"):
        dpselect.spark.select_top_k(context, frame, "s", 10, epsilon=0.1, sensitivity=1.0)
    with pytest.raises(dpselect.InvalidArgument, match=r"epsilon must be finite and > 0 \(got 0\)"):
        dpselect.spark.select_price(context, frame, "s", dpselect.PriceGrid(1.0, 2.0, 1.0), epsilon=0.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_partition_missing_or_given_twice_is_refused(spark):
    u = scores(1000)
    frame = frame_of(spark, {"s": u}, 4)
    job_rows = [(0, 250), (250, 500), (500, 750), (750, 1000)]
    release = dpselect.begin_release(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(len(u), first_utility=u[0])
    shards = dpselect.spark._per_partition(frame, "s", dpselect.spark._Evaluate(ticket, job_rows), job_rows, "")
    for wrong in ([0, 1, 2], [0, 1, 1, 3], [0, 1, 2, 3, 3]):
        # The same key, stream, parameters and reference: the shards carry this release's tag too.
        release = dpselect.begin_release(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0)
        release.ticket(len(u), first_utility=u[0])
        with pytest.raises(dpselect.UsageError, match="exactly once"):
            release.finish(dpselect.merge([shards[i] for i in wrong]))
    with pytest.raises(RuntimeError, match="the look saw 200: the DataFrame changed"):
        dpselect.spark._Evaluate(ticket, [(0, 200)])(0, u[:250])


def test_the_guide_example(spark):
    # [doc:python_spark]
    import dpselect
    import dpselect.spark

    frame = spark.range(100_000).selectExpr("id", "rand(2) AS score").cache()  # it is read twice
    pick = dpselect.spark.select(dpselect.Context(), frame, "score", epsilon=1.0, sensitivity=1.0,
                                 label_column="id")
    # [/doc:python_spark]
    assert pick.report.candidates == 100_000 and pick.label == pick.index


@pytest.fixture(scope="module")
def pairs(spark):
    local = partition_pairs()
    return local, spark.createDataFrame(local).repartition(3).cache()


@pytest.mark.parametrize("strategy", PARALLEL_STRATEGIES)
def test_partition_selection_equals_one_process_for_every_strategy_it_runs(spark, pairs, strategy):
    local, frame = pairs
    rows = frame.toPandas()  # one process over the frame's rows, in any order
    keywords = {"epsilon": 1.0, "delta": 1e-5, "max_partitions": 3, "strategy": strategy}
    engine = dpselect.spark.select_partitions(dpselect.Context.fixed_seed(5), frame, "user", "word", **keywords)
    expect_same_keys(engine, dpselect.select_partitions(dpselect.Context.fixed_seed(5), rows["user"], rows["word"],
                                                        **keywords))


@pytest.mark.parametrize("users, keys", [("user", "code"), ("name", "word"), ("user", "raw")])
def test_partition_selection_equals_one_process_for_every_kind_of_id(spark, pairs, users, keys):
    local, frame = pairs
    keywords = {"epsilon": 1.0, "delta": 1e-5, "max_partitions": 2, "pre_threshold": 3}
    if keys == "raw":  # a weighted strategy in rounds, whose later rounds leave out the released bytes
        keywords = {"epsilon": 1.0, "delta": 1e-5, "max_partitions": 2, "strategy": dpselect.PartitionStrategy.DP_SIPS}
    engine = dpselect.spark.select_partitions(dpselect.Context.fixed_seed(6), frame, users, keys, **keywords)
    one = dpselect.select_partitions(dpselect.Context.fixed_seed(6), list(local[users]), list(local[keys]), **keywords)
    if keys == "code":
        one.keys = np.asarray(one.keys, dtype=np.int64)  # a list of ints from a list; the column is int64
    expect_same_keys(engine, one)


def test_partition_selection_refuses_bad_pairs_naming_the_partition_and_row_before_any_charge(spark, pairs):
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(10.0, 0.1))
    local, _ = pairs
    holed = local.head(900).copy()
    holed["word"] = holed["word"].astype(object)
    holed.loc[700, "word"] = None
    frame = frame_of(spark, {"user": holed["user"], "word": holed["word"], "weight": holed["user"] * 0.5}, 3)
    keywords = {"epsilon": 1.0, "delta": 1e-5}
    with pytest.raises(dpselect.InvalidArgument, match=r"key_column 'word' must hold no null \(got a null in "
                                                       r"partition 2, at row 700\)"):
        dpselect.spark.select_partitions(context, frame, "user", "word", **keywords)
    with pytest.raises(TypeError, match=r"key_column 'weight' must hold integer, string or binary ids \(got a "
                                        r"column of type double\)"):
        dpselect.spark.select_partitions(context, frame, "user", "weight", **keywords)
    with pytest.raises(ValueError, match=r"user_column must name a column of frame \(got 'who'"):
        dpselect.spark.select_partitions(context, frame, "who", "word", **keywords)
    with pytest.raises(ValueError, match=r"must name two columns \(got 'user' twice\)"):
        dpselect.spark.select_partitions(context, frame, "user", "user", **keywords)
    with pytest.raises(dpselect.InvalidArgument, match=r"frame must hold \(user, key\) pairs \(got 0 rows\)"):
        dpselect.spark.select_partitions(context, frame.filter(frame.user < 0), "user", "word", **keywords)
    with pytest.raises(dpselect.InvalidArgument, match="must not be POLICY_GAUSSIAN"):
        dpselect.spark.select_partitions(context, frame, "user", "word",
                                         strategy=dpselect.PartitionStrategy.POLICY_GAUSSIAN, **keywords)
    with pytest.raises(dpselect.InvalidArgument, match=r"backend must be AUTO or CPU"):
        dpselect.spark.select_partitions(context, frame, "user", "word", backend=dpselect.Backend.GPU, **keywords)
    with pytest.raises(dpselect.InvalidArgument, match=r"delta must be in \(0, 1\)"):
        dpselect.spark.select_partitions(context, frame, "user", "word", epsilon=1.0, delta=0.0)
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.spark.select_partitions(context, frame.na.drop(), "user", "word", epsilon=11.0, delta=1e-5)
    expect_nothing_charged_or_drawn(context, accountant)
