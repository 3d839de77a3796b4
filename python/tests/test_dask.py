# SPDX-License-Identifier: Apache-2.0
"""dpselect.dask on a LocalCluster of two worker processes: a release over a Dask array or Series
equals dpselect.select over the same values in one process; a NaN, a null, an empty partition, a
non-numeric column or a worker's error fails on the driver naming the partition, with nothing
charged or drawn; a partition missing or given twice is refused by the finish."""

import logging

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
import dask.array as da  # noqa: E402

import dpselect  # noqa: E402
import dpselect.dask  # noqa: E402
from support import PARALLEL_STRATEGIES, expect_same_keys, ledger_context, partition_pairs  # noqa: E402

MECHANISMS = [dpselect.Mechanism.EXPONENTIAL, dpselect.Mechanism.PERMUTE_AND_FLIP,
              dpselect.Mechanism.LAPLACE_NOISY_MAX]


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes: tickets and results cross process boundaries."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        yield client


def scores(n, dtype=np.float64):
    return (500.0 + 4.0 * np.random.default_rng(8).random(n)).astype(dtype)


def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    assert dpselect.select(context, [1.0, 2.0], epsilon=0.1, sensitivity=1.0).report.stream == 0


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_dask_array_release_equals_one_process(client, mechanism, dtype):
    u = scores(30_011, dtype)
    column = da.from_array(u, chunks=((7_001, 9_000, 1, 14_009),)).persist()
    keywords = {"epsilon": 1.0, "sensitivity": 1.0, "mechanism": mechanism}
    expected = dpselect.select(dpselect.Context.fixed_seed(3), u, **keywords)
    pick = dpselect.dask.select(dpselect.Context.fixed_seed(3), column, **keywords)
    assert pick.index == expected.index
    assert pick.report.stream == expected.report.stream
    assert pick.report.candidates == len(u)
    assert pick.report.slack.epsilon == expected.report.slack.epsilon


def test_a_dask_series_release_equals_one_process_with_labels(client):
    u = scores(20_000)
    frame = pd.DataFrame({"score": u, "key": [f"k{i}" for i in range(len(u))]})
    ddf = dd.from_pandas(frame, npartitions=5).persist()
    expected = dpselect.select(dpselect.Context.fixed_seed(4), u, epsilon=1.0, sensitivity=1.0,
                               labels=frame["key"].to_numpy())
    pick = dpselect.dask.select(dpselect.Context.fixed_seed(4), ddf["score"], epsilon=1.0, sensitivity=1.0,
                                labels=ddf["key"])
    assert (pick.index, pick.label) == (expected.index, expected.label)


def test_integer_and_nullable_columns_are_read_as_select_reads_them(client):
    u = np.arange(1000, dtype=np.int64) % 17
    expected = dpselect.select(dpselect.Context.fixed_seed(5), u, epsilon=1.0, sensitivity=1.0)
    series = dd.from_pandas(pd.Series(u), npartitions=3)
    assert dpselect.dask.select(dpselect.Context.fixed_seed(5), series, epsilon=1.0, sensitivity=1.0).index == \
        expected.index
    nullable = dd.from_pandas(pd.Series(u.astype(float), dtype="Float64"), npartitions=3)
    assert dpselect.dask.select(dpselect.Context.fixed_seed(5), nullable, epsilon=1.0, sensitivity=1.0).index == \
        expected.index


def test_a_nan_or_a_null_fails_naming_the_partition_and_charges_nothing(client):
    u = scores(1000)
    u[612] = np.nan
    context, accountant = ledger_context()
    with pytest.raises(dpselect.InvalidArgument, match=r"nan in partition 2, at row 612: utilities\[612\]"):
        dpselect.dask.select(context, da.from_array(u, chunks=300), epsilon=0.5, sensitivity=1.0)
    nullable = pd.Series(scores(100), dtype="Float64")
    nullable[37] = pd.NA
    with pytest.raises(dpselect.InvalidArgument, match=r"partition 1, at row 37"):
        dpselect.dask.select(context, dd.from_pandas(nullable, npartitions=3), epsilon=0.5, sensitivity=1.0)
    u = scores(100)
    u[5] = np.inf
    with pytest.raises(dpselect.InvalidArgument, match=r"inf in partition 0, at row 5"):
        dpselect.dask.select(context, da.from_array(u, chunks=50), epsilon=0.5, sensitivity=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_excluded_rows_are_not_invalid(client):
    u = scores(500)
    u[:200] = -np.inf
    expected = dpselect.select(dpselect.Context.fixed_seed(6), u, epsilon=1.0, sensitivity=1.0)
    pick = dpselect.dask.select(dpselect.Context.fixed_seed(6), da.from_array(u, chunks=150), epsilon=1.0,
                                sensitivity=1.0)
    assert pick.index == expected.index >= 200


def failing_partition(part, partition_info=None):
    if partition_info is not None and partition_info["number"] == 1:
        raise OSError("disk on fire")
    return part


def test_a_worker_error_fails_naming_the_partition_and_charges_nothing(client):
    context, accountant = ledger_context()
    series = dd.from_pandas(pd.Series(scores(300)), npartitions=3).map_partitions(failing_partition)
    with pytest.raises(dpselect.dask.PartitionError, match=r"partition 1 failed on its worker: OSError: disk on fire"):
        dpselect.dask.select(context, series, epsilon=0.5, sensitivity=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_columns_and_parameters_are_refused_before_any_work(client):
    context, accountant = ledger_context()
    series = dd.from_pandas(pd.Series([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0]), npartitions=3)
    empty = series[series > 0.5]  # partition 1 filtered empty
    with pytest.raises(dpselect.InvalidArgument, match=r"partition 1 empty, after row 3"):
        dpselect.dask.select(context, empty, epsilon=0.5, sensitivity=1.0)
    words = dd.from_pandas(pd.Series(["a", "b", "c"], dtype=object), npartitions=1)
    with pytest.raises(TypeError, match="must be numeric"):
        dpselect.dask.select(context, words, epsilon=0.5, sensitivity=1.0)
    with pytest.raises(TypeError, match="not a DataFrame"):
        dpselect.dask.select(context, dd.from_pandas(pd.DataFrame({"a": [1.0]}), npartitions=1), epsilon=0.5,
                             sensitivity=1.0)
    with pytest.raises(TypeError, match="1-D Dask array or a Dask Series"):
        dpselect.dask.select(context, scores(10), epsilon=0.5, sensitivity=1.0)
    with pytest.raises(ValueError, match="1-D Dask array"):
        dpselect.dask.select(context, da.zeros((3, 3)), epsilon=0.5, sensitivity=1.0)
    with pytest.raises(dpselect.InvalidArgument, match="epsilon"):
        dpselect.dask.select(context, da.from_array(scores(10), chunks=5), epsilon=-1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="labels must be partitioned like scores"):
        dpselect.dask.select(context, da.from_array(scores(10), chunks=5), epsilon=0.5, sensitivity=1.0,
                             labels=da.from_array(np.arange(10), chunks=2))
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_partition_missing_or_given_twice_is_refused(client):
    u = scores(1000)
    partitions = dpselect.dask._partitions(da.from_array(u, chunks=250))
    rows = [(0, 250), (250, 500), (500, 750), (750, 1000)]
    for wrong in ([0, 1, 2], [0, 1, 1, 3], [0, 1, 2, 3, 3]):
        release = dpselect.begin_release(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0)
        ticket = release.ticket(len(u), first_utility=u[0])
        shards = dpselect.dask._shards(ticket, [partitions[i] for i in wrong], [rows[i] for i in wrong])
        with pytest.raises(dpselect.UsageError, match="exactly once"):
            dpselect.dask._finish(release, shards)


@pytest.mark.parametrize("k", [1, 25])
def test_a_dask_top_k_equals_one_process_with_labels(client, k):
    u = scores(10_007)
    frame = pd.DataFrame({"score": u, "key": [f"k{i}" for i in range(len(u))]})
    ddf = dd.from_pandas(frame, npartitions=4).persist()
    expected = dpselect.select_top_k(dpselect.Context.fixed_seed(9), u, k, epsilon=0.3, sensitivity=1.0,
                                     labels=frame["key"].to_numpy())
    top = dpselect.dask.select_top_k(dpselect.Context.fixed_seed(9), ddf["score"], k, epsilon=0.3, sensitivity=1.0,
                                     labels=ddf["key"])
    assert list(top.indices) == list(expected.indices)
    assert list(top.labels) == list(expected.labels)


def test_a_dask_top_k_charges_epsilon_in_all(client):
    context, accountant = ledger_context()
    top = dpselect.dask.select_top_k(context, da.from_array(scores(100), chunks=30), 10, epsilon=1.0, sensitivity=1.0)
    assert accountant.release_count == 10 and accountant.spent().epsilon == 1.0
    assert top.report.per_pick.epsilon_spent == 0.1

def test_a_dask_top_k_refuses_a_bad_k_before_any_charge(client):
    context, accountant = ledger_context()
    with pytest.raises(dpselect.InvalidArgument, match="k must be between 1"):
        dpselect.dask.select_top_k(context, da.from_array(scores(10), chunks=5), 11, epsilon=0.1, sensitivity=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_the_guide_example(client):
    # [doc:python_dask]
    import dask.array as da
    import numpy as np
    import dpselect
    import dpselect.dask

    scores = da.from_array(np.random.default_rng(2).random(100_000), chunks=25_000).persist()  # it is read twice
    pick = dpselect.dask.select(dpselect.Context(), scores, epsilon=1.0, sensitivity=1.0)
    top = dpselect.dask.select_top_k(dpselect.Context(), scores, 5, epsilon=0.2, sensitivity=1.0)
    # [/doc:python_dask]
    assert pick.report.candidates == 100_000 and len(top.indices) == 5


def bids(n):
    return np.round(np.random.default_rng(12).gamma(2.0, 20.0, n), 2)  # cents: many bids share a value


@pytest.mark.parametrize("prices", [dpselect.PriceGrid(0.5, 150.0, 0.5), dpselect.PriceRange(1.0, 200.0),
                                    [5.0, 10.0, 25.0, 40.0, 80.0]])
def test_a_dask_pricing_release_equals_one_process(client, prices):
    b = bids(20_011)
    column = da.from_array(b, chunks=((5_000, 1, 9_000, 6_010),))
    for sampler in (dpselect.GridSampler.PER_PRICE_NOISE, dpselect.GridSampler.BID_INTERVALS):
        if sampler == dpselect.GridSampler.BID_INTERVALS and not isinstance(prices, dpselect.PriceGrid):
            continue
        expected = dpselect.select_price(dpselect.Context.fixed_seed(21), b, prices, epsilon=0.5, grid_sampler=sampler)
        pick = dpselect.dask.select_price(dpselect.Context.fixed_seed(21), column, prices, epsilon=0.5,
                                          grid_sampler=sampler)
        assert (pick.price, pick.candidate, pick.report.stream) == \
            (expected.price, expected.candidate, expected.report.stream)


def test_a_dask_pricing_over_integer_bids_in_a_series_equals_one_process(client):
    b = (bids(3_000) * 100).astype(np.int64)
    series = dd.from_pandas(pd.Series(b), npartitions=3)
    grid = dpselect.PriceGrid(100.0, 10_000.0, 100.0)
    expected = dpselect.select_price(dpselect.Context.fixed_seed(22), b, grid, epsilon=1.0, max_bidders=10_000)
    pick = dpselect.dask.select_price(dpselect.Context.fixed_seed(22), series, grid, epsilon=1.0, max_bidders=10_000)
    assert (pick.price, pick.report.stream) == (expected.price, expected.report.stream)


def test_bad_bids_fail_naming_the_partition_and_charge_nothing(client):
    context, accountant = ledger_context()
    grid = dpselect.PriceGrid(1.0, 10.0, 1.0)
    for bad, message in ((-3.0, r"bids must be finite and >= 0 \(got -3.0 in partition 1, at row 140: bids\[140\]\)"),
                         (np.nan, r"got nan in partition 1, at row 140"),
                         (np.inf, r"got inf in partition 1, at row 140")):
        b = bids(300)
        b[140] = bad
        with pytest.raises(dpselect.InvalidArgument, match=message):
            dpselect.dask.select_price(context, da.from_array(b, chunks=100), grid, epsilon=0.5)
    big = np.array([1, 2, 3, 2**53 + 1], dtype=np.int64)
    with pytest.raises(ValueError, match=r"integers within 2\*\*53 .*got 9007199254740993 in partition 1, at row 3"):
        dpselect.dask.select_price(context, da.from_array(big, chunks=2), grid, epsilon=0.5)
    negative = np.array([1, 2, -7, 2], dtype=np.int64)
    with pytest.raises(dpselect.InvalidArgument, match=r"got -7 in partition 1, at row 2"):
        dpselect.dask.select_price(context, da.from_array(negative, chunks=2), grid, epsilon=0.5)
    series = dd.from_pandas(pd.Series(bids(300)), npartitions=3).map_partitions(failing_partition)
    with pytest.raises(dpselect.dask.PartitionError, match=r"partition 1 failed on its worker: OSError"):
        dpselect.dask.select_price(context, series, grid, epsilon=0.5)
    with pytest.raises(dpselect.InvalidArgument, match=r"epsilon must be finite and > 0 \(got -1\)"):
        dpselect.dask.select_price(context, da.from_array(bids(10), chunks=5), grid, epsilon=-1.0)
    with pytest.raises(dpselect.InvalidArgument, match=r"grid step"):
        dpselect.dask.select_price(context, da.from_array(bids(10), chunks=5), dpselect.PriceGrid(1.0, 2.0, -1.0),
                                   epsilon=1.0)
    with pytest.raises(TypeError, match="bids must be numeric"):
        dpselect.dask.select_price(context, dd.from_pandas(pd.Series(["a"], dtype=object), npartitions=1), grid,
                                   epsilon=1.0)
    with pytest.raises(TypeError, match="context must be a dpselect.Context"):
        dpselect.dask.select_price(None, da.from_array(bids(10), chunks=5), grid, epsilon=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_an_integer_score_beyond_2_53_is_refused_before_the_charge(client):
    context, accountant = ledger_context()
    u = np.array([5, 2**60, 1], dtype=np.int64)
    with pytest.raises(ValueError, match=r"scores must hold integers within 2\*\*53 .*in partition 1, at row 1"):
        dpselect.dask.select(context, da.from_array(u, chunks=1), epsilon=0.5, sensitivity=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


@pytest.fixture(scope="module")
def pairs(client):
    local = partition_pairs()
    with dask.config.set({"dataframe.convert-string": False}):  # bytes stay bytes
        frame = dd.from_pandas(local, npartitions=3).persist()
    return local, frame


@pytest.mark.parametrize("strategy", PARALLEL_STRATEGIES)
def test_partition_selection_equals_one_process_for_every_strategy_it_runs(pairs, strategy):
    local, frame = pairs
    keywords = {"epsilon": 1.0, "delta": 1e-5, "max_partitions": 3, "strategy": strategy}
    engine = dpselect.dask.select_partitions(dpselect.Context.fixed_seed(5), frame, "user", "word", **keywords)
    expect_same_keys(engine, dpselect.select_partitions(dpselect.Context.fixed_seed(5), local["user"], local["word"],
                                                        **keywords))


@pytest.mark.parametrize("users, keys", [("user", "code"), ("name", "word"), ("user", "raw")])
def test_partition_selection_equals_one_process_for_every_kind_of_id(pairs, users, keys):
    local, frame = pairs
    keywords = {"epsilon": 1.0, "delta": 1e-5, "max_partitions": 2, "pre_threshold": 3,
                "strategy": dpselect.PartitionStrategy.DP_SIPS if keys == "raw" else
                dpselect.PartitionStrategy.TRUNCATED_GEOMETRIC}
    if keys == "raw":
        keywords.pop("pre_threshold")  # the weighted strategies take no minimum
    engine = dpselect.dask.select_partitions(dpselect.Context.fixed_seed(6), frame, users, keys, **keywords)
    expect_same_keys(engine, dpselect.select_partitions(dpselect.Context.fixed_seed(6), local[users], local[keys],
                                                        **keywords))


def test_partition_selection_refuses_bad_pairs_naming_the_partition_and_row_before_any_charge(pairs):
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(10.0, 0.1))
    local, _ = pairs
    keywords = {"epsilon": 1.0, "delta": 1e-5}

    def frame_of(column, values):
        bad = local.head(900).copy()
        bad[column] = bad[column].astype(object)
        for row, value in values.items():
            bad.loc[row, column] = value
        with dask.config.set({"dataframe.convert-string": False}):
            return dd.from_pandas(bad, npartitions=3)

    with pytest.raises(dpselect.InvalidArgument, match=r"key_column 'word' must hold no null \(got a null in "
                                                       r"partition 2, at row 700\)"):
        dpselect.dask.select_partitions(context, frame_of("word", {700: None}), "user", "word", **keywords)
    with pytest.raises(TypeError, match=r"key_column 'word' must hold ids of one kind, integers \(not bool\), str or "
                                        r"bytes \(got an int in partition 1, at row 301\)"):
        dpselect.dask.select_partitions(context, frame_of("word", {301: 7}), "user", "word", **keywords)
    with pytest.raises(TypeError, match=r"user_column 'user' must hold ids of one kind.*\(got a float in partition "
                                        r"0, at row 5\)"):
        dpselect.dask.select_partitions(context, frame_of("user", {5: 2.5}), "user", "word", **keywords)
    with pytest.raises(TypeError, match=r"must hold ids of one kind \(got str ids in partition 1, int ids in "
                                        r"partition 0\)"):
        dpselect.dask.select_partitions(context, frame_of("user", {row: f"u{row}" for row in range(300, 900)}),
                                        "user", "word", **keywords)
    frame = frame_of("word", {})
    with pytest.raises(ValueError, match=r"user_column must name a column of frame \(got 'who'"):
        dpselect.dask.select_partitions(context, frame, "who", "word", **keywords)
    with pytest.raises(ValueError, match=r"must name two columns \(got 'user' twice\)"):
        dpselect.dask.select_partitions(context, frame, "user", "user", **keywords)
    with pytest.raises(TypeError, match="frame must be a Dask DataFrame"):
        dpselect.dask.select_partitions(context, local, "user", "word", **keywords)
    with pytest.raises(dpselect.InvalidArgument, match=r"frame must hold \(user, key\) pairs \(got 0 rows\)"):
        dpselect.dask.select_partitions(context, frame[frame.user < 0], "user", "word", **keywords)
    with pytest.raises(dpselect.InvalidArgument, match="must not be POLICY_GAUSSIAN"):
        dpselect.dask.select_partitions(context, frame, "user", "word",
                                        strategy=dpselect.PartitionStrategy.POLICY_GAUSSIAN, **keywords)
    with pytest.raises(dpselect.InvalidArgument, match=r"delta must be in \(0, 1\)"):
        dpselect.dask.select_partitions(context, frame, "user", "word", epsilon=1.0, delta=0.0)
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.dask.select_partitions(context, frame, "user", "word", epsilon=11.0, delta=1e-5)
    expect_nothing_charged_or_drawn(context, accountant)
