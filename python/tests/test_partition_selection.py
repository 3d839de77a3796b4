# SPDX-License-Identifier: Apache-2.0
"""Partition selection from Python: the keep probabilities side by side with Google's
differential-privacy library (python-dp), ids as NumPy integers, strings, bytes and pandas
columns with the released keys in the input's own type, and every bad input refused before
anything is charged or drawn."""

import numpy as np
import pytest

import dpselect
from support import ledger_context

TG = dpselect.PartitionStrategy.TRUNCATED_GEOMETRIC
LAPLACE = dpselect.PartitionStrategy.LAPLACE_THRESHOLD
GAUSSIAN = dpselect.PartitionStrategy.GAUSSIAN_THRESHOLD
BUDGETS = [(1.0, 1e-5), (0.3, 1e-8), (3.0, 1e-3)]


def params(epsilon, delta, m, strategy):
    return dpselect.PartitionSelectionParams(epsilon=epsilon, delta=delta, max_partitions=m, strategy=strategy)


@pytest.mark.parametrize("epsilon,delta", BUDGETS)
def test_the_keep_probabilities_agree_with_googles_where_the_strategy_is_the_same(epsilon, delta):
    ps = pytest.importorskip("pydp.algorithms.partition_selection")
    for m in (1, 4):
        google = ps.create_laplace_partition_strategy(epsilon, delta, m)
        ours = params(epsilon, delta, m, LAPLACE)
        for n in range(1, 201):
            assert dpselect.keep_probability(ours, n) == pytest.approx(google.probability_of_keep(n), abs=1e-9), n
        assert dpselect.partition_keep_rule(ours).threshold == pytest.approx(google.threshold, rel=1e-12)
    # One key per user: the same truncated geometric.
    google = ps.create_truncated_geometric_partition_strategy(epsilon, delta, 1)
    ours = params(epsilon, delta, 1, TG)
    for n in range(1, 201):
        assert dpselect.keep_probability(ours, n) == pytest.approx(google.probability_of_keep(n), abs=1e-9), n


@pytest.mark.parametrize("epsilon,delta", BUDGETS)
def test_where_the_strategies_differ_googles_keeps_more(epsilon, delta):
    ps = pytest.importorskip("pydp.algorithms.partition_selection")
    # Several keys per user: Google splits delta as 1 - (1 - delta)^(1/m) per key, dpselect as
    # delta / m (basic composition); the first is larger, so Google keeps at least as much.
    m = 4
    google = ps.create_truncated_geometric_partition_strategy(epsilon, delta, m)
    ours = params(epsilon, delta, m, TG)
    for n in range(1, 201):
        assert dpselect.keep_probability(ours, n) <= google.probability_of_keep(n) + 1e-15, n
    # Gaussian thresholding: dpselect's sigma is the exact analytic one (Balle & Wang 2018), Google's
    # the upper end of a bisection to 1e-3; the thresholds differ by less than 1e-3 relative, and a
    # lone user's key is released with probability at most the threshold's delta by either.
    google = ps.create_gaussian_partition_strategy(epsilon, delta, m)
    rule = dpselect.partition_keep_rule(params(epsilon, delta, m, GAUSSIAN))
    assert rule.threshold <= google.threshold <= rule.threshold * (1 + 1e-3)
    assert dpselect.keep_probability(params(epsilon, delta, m, GAUSSIAN), 1) <= rule.key_delta
    assert google.probability_of_keep(1) <= rule.key_delta * (1 + 1e-12)


def contributions(keys, users_per_key):
    users = np.repeat(np.arange(keys * users_per_key) + 10, 1)
    return users, np.repeat(np.arange(keys) - keys // 2, users_per_key)  # negative ids too


def test_integer_string_and_pandas_ids_release_the_inputs_own_keys():
    users, keys = contributions(2000, 6)
    p = dict(epsilon=1.0, delta=1e-3, strategy=LAPLACE)
    ints = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, keys, **p)
    assert isinstance(ints.keys, np.ndarray) and ints.keys.dtype == np.int64 and len(ints.keys) > 0
    assert set(ints.keys.tolist()) <= set(keys.tolist()) and ints.keys.min() < 0
    assert np.all(np.diff(ints.keys) > 0), "ascending as the input's signed integers"
    narrow = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users.astype(np.int32), keys.astype(np.int32),
                                        **p)
    assert narrow.keys.dtype == np.int32 and narrow.keys.tolist() == ints.keys.tolist()
    # Strings are numbered by their sorted distinct values: released in their own type.
    words = np.array([f"query-{k}" for k in keys])
    named = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, words, **p)
    assert all(type(k) is str and k.startswith("query-") for k in named.keys)  # str, not numpy.str_
    assert 0.5 * len(ints.keys) < len(named.keys) < 2 * len(ints.keys)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"user": users, "query": words})
    from_pandas = dpselect.select_partitions(dpselect.Context.fixed_seed(2), frame["user"], frame["query"], **p)
    assert from_pandas.keys == named.keys
    as_bytes = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, [w.encode() for w in words], **p)
    assert [k.decode() for k in as_bytes.keys] == named.keys


def test_parquet_columns_read_by_pyarrow_go_in_as_they_are(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    users, keys = contributions(3000, 5)
    urls = np.array([f"https://example.org/{k}" for k in keys])
    pq.write_table(pa.table({"visitor": users, "url": urls}), tmp_path / "visits.parquet")
    monkeypatch.chdir(tmp_path)
    # [doc:python_partition_parquet]
    import pyarrow.parquet as pq
    import dpselect

    table = pq.read_table("visits.parquet", columns=["visitor", "url"])
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(6), table["visitor"], table["url"],
                                      epsilon=1.0, delta=1e-3, max_partitions=2)
    # [/doc:python_partition_parquet]
    expected = dpselect.select_partitions(dpselect.Context.fixed_seed(6), users, urls, epsilon=1.0, delta=1e-3,
                                          max_partitions=2)
    assert len(expected.keys) > 10 and kept.keys == expected.keys
    # A dictionary-encoded column (Parquet's dictionary pages read as such) and one chunk per row group.
    encoded = pq.read_table("visits.parquet", read_dictionary=["url"])
    assert pa.types.is_dictionary(encoded["url"].type)
    assert dpselect.select_partitions(dpselect.Context.fixed_seed(6), encoded["visitor"], encoded["url"], epsilon=1.0,
                                      delta=1e-3, max_partitions=2).keys == expected.keys
    integer = dpselect.select_partitions(dpselect.Context.fixed_seed(6), pa.chunked_array([users[:7], users[7:]]),
                                         pa.array(keys), epsilon=1.0, delta=1e-3, max_partitions=2)
    assert integer.keys.dtype == np.int64 and integer.keys.tolist() == dpselect.select_partitions(
        dpselect.Context.fixed_seed(6), users, keys, epsilon=1.0, delta=1e-3, max_partitions=2).keys.tolist()
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(5.0, 0.1))
    with pytest.raises(dpselect.InvalidArgument, match=r"users\[2\] is a null: a column of ids holds no null"):
        dpselect.select_partitions(context, pa.chunked_array([[1, 2], [None, 4]]), pa.array([1, 2, 3, 4]),
                                   epsilon=1.0, delta=1e-6)
    with pytest.raises(TypeError, match=r"keys must be integer or string ids \(got dtype float64\)"):
        dpselect.select_partitions(context, pa.array([1, 2]), pa.array([1.5, 2.5]), epsilon=1.0, delta=1e-6)
    assert accountant.release_count == 0


# Keys whose code point order differs from UTF-16's ("\uffff" sorts below "\U00010000"), from
# their order of appearance and from a fixed-width copy's: the empty string, a trailing NUL (kept
# by Python and Arrow, dropped by NumPy's fixed-width arrays), accents, a lone surrogate.
_AWKWARD = ["zebra", "", "a\0", "a", "\uffff", "\U00010000", "\u00e9t\u00e9", "Apple", "apple", "\ud800x"]


def _awkward_pairs(copies):
    rng = np.random.default_rng(4)
    names = [_AWKWARD[i] for i in rng.integers(0, len(_AWKWARD), len(_AWKWARD) * copies)]
    return np.arange(len(names)) % (len(names) // 3), names


def test_every_form_of_a_string_column_releases_what_its_sorted_codes_release():
    users, names = _awkward_pairs(400)
    ascending = sorted(set(names))  # code point order
    codes = np.array([ascending.index(n) for n in names])
    p = dict(epsilon=2.0, delta=1e-2, max_partitions=2, strategy=LAPLACE)

    def released(keys):
        return dpselect.select_partitions(dpselect.Context.fixed_seed(12), users, keys, **p).keys

    by_code = [ascending[c] for c in released(codes).tolist()]
    assert len(by_code) >= 5, "a test that can fail: most keys released"
    assert released(names) == by_code
    assert released(tuple(names)) == by_code
    assert released(np.array(names, dtype=object)) == by_code
    surrogate_free = [n for n in names if "\ud800" not in n]
    utf8 = [n.encode() for n in names if "\ud800" not in n]
    kept_bytes = dpselect.select_partitions(dpselect.Context.fixed_seed(12), users[:len(utf8)], utf8, **p).keys
    assert all(type(k) is bytes for k in kept_bytes)
    kept_str = dpselect.select_partitions(dpselect.Context.fixed_seed(12), users[:len(utf8)], surrogate_free, **p).keys
    assert [k.decode() for k in kept_bytes] == kept_str, "UTF-8 byte order is code point order"
    # NumPy's fixed-width arrays drop trailing NULs, as numpy.unique would: "a\0" is "a" there.
    fixed = np.array(names)
    merged = sorted(set(fixed.tolist()))
    assert released(fixed) == [merged[c] for c in released(np.array([merged.index(n) for n in fixed.tolist()])).tolist()]
    assert all(type(k) is str for k in released(fixed))
    as_s = np.array(utf8)
    merged_bytes = sorted(set(as_s.tolist()))
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(12), users[:len(utf8)], as_s, **p).keys
    codes_s = np.array([merged_bytes.index(b) for b in as_s.tolist()])
    assert kept == [merged_bytes[c] for c in dpselect.select_partitions(
        dpselect.Context.fixed_seed(12), users[:len(utf8)], codes_s, **p).keys.tolist()]
    pa = pytest.importorskip("pyarrow")
    for arrow_type in (pa.string(), pa.large_string()):
        column = pa.array(surrogate_free, type=arrow_type)
        sliced = pa.chunked_array([column[:7], column[7:300], column[300:]])  # chunks with offsets
        for form in (column, sliced, column.dictionary_encode()):
            assert dpselect.select_partitions(dpselect.Context.fixed_seed(12), users[:len(utf8)], form,
                                              **p).keys == kept_str
    for arrow_type in (pa.binary(), pa.large_binary()):
        assert dpselect.select_partitions(dpselect.Context.fixed_seed(12), users[:len(utf8)],
                                          pa.array(utf8, type=arrow_type), **p).keys == kept_bytes
    pd = pytest.importorskip("pandas")
    for dtype in ("object", "string[python]", "string[pyarrow]"):
        series = pd.Series(surrogate_free, dtype=dtype)
        assert dpselect.select_partitions(dpselect.Context.fixed_seed(12), users[:len(utf8)], series,
                                          **p).keys == kept_str, dtype


def test_a_string_column_of_mixed_kinds_is_refused_by_row_with_nothing_charged():
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(5.0, 0.1))
    cases = [(["a", "b", b"c"], r"keys\[2\] is a bytes, but keys\[0\] is a str"),
             ([b"a", "b"], r"keys\[1\] is a str, but keys\[0\] is a bytes"),
             (["a", None, "c"], r"keys\[1\] is a null"),
             (["a", 5], r"keys\[1\] is an int, but keys\[0\] is a str"),
             (["a", 1.5], r"keys\[1\] is a float: ids are integers, str or bytes")]
    for keys, message in cases:
        with pytest.raises((TypeError, dpselect.InvalidArgument), match=message):
            dpselect.select_partitions(context, list(range(len(keys))), keys, epsilon=1.0, delta=1e-6)
    assert accountant.release_count == 0


def test_a_public_minimum_releases_no_key_below_it_and_costs_nothing_more():
    # Keys of 39 users and keys of 42: at epsilon 10 every shifted count of 3 or more is kept.
    users = np.concatenate([np.arange(30 * 39), 10**6 + np.arange(20 * 42)])
    keys = np.concatenate([np.repeat(np.arange(30), 39), 1000 + np.repeat(np.arange(20), 42)])
    plain = dpselect.select_partitions(dpselect.Context.fixed_seed(5), users, keys, epsilon=10.0, delta=0.4)
    assert len(plain.keys) == 50, "without a minimum every key is kept"
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(20.0, 0.9))
    kept = dpselect.select_partitions(context, users, keys, epsilon=10.0, delta=0.4, pre_threshold=40)
    assert kept.keys.tolist() == list(range(1000, 1020))
    assert kept.report.params.pre_threshold == 40 and kept.report.rule.pre_threshold == 40
    assert kept.report.delta_float == plain.report.delta_float
    params = dpselect.PartitionSelectionParams(epsilon=1.0, delta=1e-5, pre_threshold=10)
    assert dpselect.keep_probability(params, 9) == 0.0
    assert dpselect.keep_probability(params, 12) == dpselect.keep_probability(
        dpselect.PartitionSelectionParams(epsilon=1.0, delta=1e-5), 3)
    assert "pre_threshold=10" in repr(params)
    releases = accountant.release_count
    with pytest.raises(dpselect.InvalidArgument, match=r"pre_threshold must be 1 for the weighted-gaussian strategy"):
        dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=1e-5, pre_threshold=2,
                                   strategy=dpselect.PartitionStrategy.WEIGHTED_GAUSSIAN)
    with pytest.raises(dpselect.InvalidArgument, match=r"pre_threshold must be >= 1 \(got 0"):
        dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=1e-5, pre_threshold=0)
    assert accountant.release_count == releases


def test_a_user_with_many_keys_counts_for_max_partitions_of_them():
    users = np.full(1000, 7)
    keys = np.arange(1000)
    chosen = dpselect.select_partitions(dpselect.Context.fixed_seed(3), users, keys, epsilon=1.0, delta=0.5,
                                        max_partitions=3)
    assert chosen.report.keys_considered == 3 and len(chosen.keys) <= 3


def test_every_backend_releases_the_same_keys():
    users, keys = contributions(3000, 4)
    p = dict(epsilon=1.0, delta=1e-3, max_partitions=2)
    on_cpu = dpselect.select_partitions(dpselect.Context.fixed_seed(8), users, keys, backend=dpselect.Backend.CPU, **p)
    automatic = dpselect.select_partitions(dpselect.Context.fixed_seed(8), users, keys, **p)
    assert len(on_cpu.keys) > 0 and automatic.keys.tolist() == on_cpu.keys.tolist()
    assert on_cpu.report.executed_on == dpselect.ExecutedOn.CPU
    assert automatic.report.executed_on == (dpselect.ExecutedOn.GPU if dpselect.gpu_usable() else dpselect.ExecutedOn.CPU)
    params = dpselect.PartitionSelectionParams(epsilon=1.0, delta=1e-3, backend=dpselect.Backend.CPU)
    assert params.backend == dpselect.Backend.CPU and "backend=Backend.CPU" in repr(params)
    if not dpselect.gpu_usable():
        context, accountant = ledger_context(budget=dpselect.PrivacyBound(5.0, 0.1))
        with pytest.raises(dpselect.BackendUnavailable):
            dpselect.select_partitions(context, users, keys, backend=dpselect.Backend.GPU, **p)
        assert accountant.release_count == 0


def test_bad_ids_and_parameters_are_refused_before_anything_is_charged():
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(5.0, 0.1))
    users, keys = contributions(10, 2)
    with pytest.raises(TypeError, match=r"users must be integer or string ids \(got dtype float64\)"):
        dpselect.select_partitions(context, users.astype(float), keys, epsilon=1.0, delta=1e-6)
    with pytest.raises(TypeError, match="got booleans"):
        dpselect.select_partitions(context, users, keys > 0, epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match=r"keys must hold one entry per user entry \(got 19 for 20 users\)"):
        dpselect.select_partitions(context, users, keys[:-1], epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="must be 1-D"):
        dpselect.select_partitions(context, users.reshape(4, 5), keys, epsilon=1.0, delta=1e-6)
    pd = pytest.importorskip("pandas")
    with pytest.raises(dpselect.InvalidArgument, match=r"keys\[1\] is a null: a column of ids holds no null"):
        dpselect.select_partitions(context, [1, 2], pd.Series(["a", None]), epsilon=1.0, delta=1e-6)
    with pytest.raises(dpselect.InvalidArgument, match=r"delta must be in \(0, 1\)"):
        dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=0.0)
    with pytest.raises(dpselect.InvalidArgument, match=r"epsilon must be finite and > 0 \(got -1\)"):
        dpselect.select_partitions(context, users, keys, epsilon=-1.0, delta=1e-6)
    with pytest.raises(dpselect.InvalidArgument, match="max_partitions must be >= 1"):
        dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=1e-6, max_partitions=0)
    with pytest.raises(dpselect.InvalidArgument, match="contributions must not be empty"):
        dpselect.select_partitions(context, [], [], epsilon=1.0, delta=1e-6)
    with pytest.raises(TypeError, match="epsilon, delta must be given"):
        dpselect.select_partitions(context, users, keys)
    assert accountant.release_count == 0
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.select_partitions(context, users, keys, epsilon=6.0, delta=1e-6)
    assert accountant.release_count == 0
    done = dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=1e-6)
    assert done.report.stream == 0 and accountant.release_count == 1


ONE_KIND = r"a column holds one kind of id \(integers, str or bytes\)"


def refused(error, match, users, keys):
    """Checks that select_partitions refuses the columns before anything is charged, with a message
    that names the row and never holds an id (none of the test's ids holds the word "secret")."""
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(5.0, 0.1))
    with pytest.raises(error, match=match) as raised:
        dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=1e-6)
    assert "secret" not in str(raised.value)
    assert accountant.release_count == 0


def test_a_column_of_ids_mixing_kinds_is_refused_naming_the_first_row_of_another_kind():
    users = list(range(200))
    # numpy.asarray would make 5 and "5" the string "5", "a" and b"a" the string "a", and 1 and True
    # the integer 1: one key each, held by 200 users.
    refused(TypeError, r"keys\[100\] is a str, but keys\[0\] is an int: " + ONE_KIND, users, [5] * 100 + ["5"] * 100)
    refused(TypeError, r"keys\[100\] is a bytes, but keys\[0\] is a str: " + ONE_KIND, users,
            ["secret-a"] * 100 + [b"secret-a"] * 100)
    refused(TypeError, r"keys\[100\] is a bool: ids are integers, str or bytes; a bool is no id, since True equals 1",
            users, [1] * 100 + [True] * 100)
    refused(TypeError, r"users\[199\] is an int, but users\[0\] is a str: " + ONE_KIND,
            [f"secret-{u}" for u in range(199)] + [3], [1] * 200)
    # A tuple, an object array and a pandas column of objects are looked at value by value too.
    refused(TypeError, r"keys\[100\] is a str, but keys\[0\] is an int", tuple(users), tuple([5] * 100 + ["5"] * 100))
    refused(TypeError, r"keys\[100\] is a str, but keys\[0\] is an int", users,
            np.array([5] * 100 + ["5"] * 100, dtype=object))
    refused(TypeError, r"keys\[1\] is a float: ids are integers, str or bytes; floats are not ids", [1, 2], [1, 2.0])
    refused(TypeError, r"keys\[0\] is a list: ids are integers, str or bytes", [1, 2], [[1], [2]])
    pd = pytest.importorskip("pandas")
    refused(TypeError, r"keys\[100\] is a str, but keys\[0\] is an int", pd.Series(users),
            pd.Series([5] * 100 + ["5"] * 100, dtype=object))


def test_a_null_among_ids_is_refused_naming_its_row():
    users = list(range(200))
    null = r"is a null: a column of ids holds no null"
    refused(dpselect.InvalidArgument, r"keys\[100\] " + null, users, ["secret"] * 100 + [float("nan")] * 100)
    refused(dpselect.InvalidArgument, r"keys\[7\] " + null, users, ["secret"] * 7 + [np.nan] * 193)
    refused(dpselect.InvalidArgument, r"users\[3\] " + null, [0, 1, 2, None], ["a", "b", "c", "d"])
    refused(dpselect.InvalidArgument, r"keys\[0\] " + null, [0, 1], np.array([None, 4], dtype=object))
    # A float array is refused by its dtype, NaN or not.
    refused(TypeError, r"keys must be integer or string ids \(got dtype float64\)", [0, 1], np.array([1.0, np.nan]))
    pd = pytest.importorskip("pandas")
    refused(dpselect.InvalidArgument, r"keys\[1\] " + null, [0, 1], pd.Series(["secret", pd.NA], dtype=object))
    refused(dpselect.InvalidArgument, r"keys\[1\] " + null, [0, 1], pd.Series(["secret", None], dtype="string"))
    refused(dpselect.InvalidArgument, r"keys\[2\] " + null, [0, 1, 2], [b"secret", b"x", pd.NA])
    pa = pytest.importorskip("pyarrow")
    refused(dpselect.InvalidArgument, r"keys\[1\] " + null, [0, 1], pa.array([b"secret", None]))


def test_bytes_ids_stay_bytes_and_are_never_decoded():
    users = np.arange(600)
    not_utf8 = [b"\xff\xfe", b"caf\xe9", b"\x00\xff"]  # Latin-1 and UTF-16 bytes: not UTF-8
    keys = [not_utf8[u % 3] for u in users]
    p = dict(epsilon=1.0, delta=1e-3)
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, keys, **p)
    assert kept.keys == sorted(not_utf8)  # 200 users each: all released, ascending byte order
    assert all(type(k) is bytes for k in kept.keys)
    # Mixed with str they are refused as another kind, naming the row, never a UnicodeDecodeError.
    refused(TypeError, r"keys\[1\] is a bytes, but keys\[0\] is a str: " + ONE_KIND, [0, 1], ["secret", b"\xff"])
    # Trailing NULs are part of an id: a NumPy string array would drop them and merge "a\0" with "a".
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, ["a", "a\x00"] * 300, **p)
    assert kept.keys == ["a", "a\x00"]
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, [b"a", b"a\x00"] * 300, **p)
    assert kept.keys == [b"a", b"a\x00"]
    pa = pytest.importorskip("pyarrow")
    from_arrow = dpselect.select_partitions(dpselect.Context.fixed_seed(2), pa.array(users), pa.array(keys), **p)
    assert from_arrow.keys == sorted(not_utf8)


def test_integer_ids_given_as_python_objects_are_int64_or_uint64_exactly():
    users = np.arange(400)
    p = dict(epsilon=1.0, delta=1e-3)
    # Beyond int64 and none negative: uint64 ids.
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, [2**63 + 1, 3] * 200, **p)
    assert kept.keys == [3, 2**63 + 1] and all(type(k) is int for k in kept.keys)  # a list in, Python ints out
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, np.array([2**63 + 1, 3] * 200, np.uint64),
                                      **p)
    assert kept.keys.dtype == np.uint64 and kept.keys.tolist() == [3, 2**63 + 1]
    # NumPy would make int64 and uint64 scalars float64 together, which merges ids 2**63 and 2**63 + 1.
    refused(dpselect.InvalidArgument, r"keys\[0\] is an integer beyond int64, but keys\[1\] is negative: integer "
            r"ids are all int64 or all uint64", [0, 1], [np.uint64(2**63 + 1), np.int64(-1)])
    refused(dpselect.InvalidArgument, r"users\[1\] is an integer beyond 64 bits", [0, 2**64], [1, 2])
    # An object column of integers is a column of integers.
    kept = dpselect.select_partitions(dpselect.Context.fixed_seed(2), users, np.array([-4, 9] * 200, dtype=object),
                                      **p)
    assert kept.keys.dtype == np.int64 and kept.keys.tolist() == [-4, 9]


def test_the_guide_example():
    # [doc:python_partition_selection]
    import numpy as np
    import dpselect

    rng = np.random.default_rng(4)
    users = np.arange(100_000)                      # one query per user: max_partitions = 1
    queries = rng.zipf(1.6, size=users.size)        # a few queries are held by many users
    accountant = dpselect.PrivacyAccountant(dpselect.PrivacyBound(2.0, 1e-6))
    context = dpselect.Context()
    context.charge_to(accountant)

    kept = dpselect.select_partitions(context, users, queries, epsilon=1.0, delta=1e-6)
    # The usual next step: a noisy count per released query. Each user counts once in one query:
    # L1 sensitivity 1.
    distinct, users_per_query = np.unique(queries, return_counts=True)
    counts = users_per_query[np.searchsorted(distinct, kept.keys)].astype(np.float64)
    dpselect.add_noise(context, counts, epsilon=1.0)
    print(dict(zip(kept.keys.tolist(), counts.round())), accountant.spent())  # both releases charged
    # [/doc:python_partition_selection]
    assert 5 < len(kept.keys) < 1000 and accountant.release_count == 2
    assert 1 in kept.keys.tolist()  # the most popular query: held by about 40% of the users


def test_the_python_guide_example():
    # [doc:python_partition_words]
    import dpselect

    words = ["the", "grid", "the", "quantile", "the", "auction"] * 400 + ["zebra"]   # one word a document
    documents = list(range(len(words)))                      # (user, key) pairs: the user is the document
    context = dpselect.Context()
    kept = dpselect.select_partitions(context, documents, words, epsilon=1.0, delta=1e-6,
                                      strategy=dpselect.PartitionStrategy.POLICY_GAUSSIAN)
    print(kept.keys)      # Python str, ascending: ['auction', 'grid', 'quantile', 'the'], never 'zebra'
    print(kept.report)    # the parameters, the keep rule, the streams: nothing computed from the data
    # [/doc:python_partition_words]
    # A word of 400 users or more is kept but for a chance far below 1e-12 (Gaussian tail, sigma < 5);
    # 'zebra' may pass with probability at most delta, so it is not asserted on (an OS-keyed context).
    assert all(type(k) is str for k in kept.keys) and set(kept.keys) >= {"auction", "grid", "quantile", "the"}


WEIGHTED = [dpselect.PartitionStrategy.WEIGHTED_GAUSSIAN, dpselect.PartitionStrategy.POLICY_GAUSSIAN,
            dpselect.PartitionStrategy.DP_SIPS]


def analytic_gaussian_sigma(epsilon, delta):
    """Balle & Wang 2018, Thm 8, for L2 sensitivity 1: the sigma at which
    Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma) = delta, solved by SciPy."""
    stats = pytest.importorskip("scipy.stats")
    optimize = pytest.importorskip("scipy.optimize")

    def excess(sigma):
        return (stats.norm.cdf(0.5 / sigma - epsilon * sigma)
                - np.exp(epsilon) * stats.norm.cdf(-0.5 / sigma - epsilon * sigma) - delta)

    return optimize.brentq(excess, 1e-3, 1e4, xtol=1e-15, rtol=1e-15)


@pytest.mark.parametrize("epsilon,delta", BUDGETS)
def test_the_weighted_rules_are_gopi_et_als_formulas_computed_by_scipy(epsilon, delta):
    stats = pytest.importorskip("scipy.stats")
    for m in (1, 5, 30):
        for strategy in WEIGHTED[:2]:
            rule = dpselect.partition_keep_rule(params(epsilon, delta, m, strategy))
            sigma = analytic_gaussian_sigma(epsilon, delta / 2)
            assert rule.noise_scale == pytest.approx(sigma, rel=1e-9)
            # rho = max over t <= m of 1/sqrt(t) + sigma Phi^-1((1 - delta / 2)^(1/t)).
            t = np.arange(1, m + 1)
            tails = -np.expm1(np.log1p(-delta / 2) / t)
            rho = np.max(1 / np.sqrt(t) + sigma * stats.norm.isf(tails))
            assert rule.threshold == pytest.approx(rho, rel=1e-9)
            (only_round,) = rule.rounds
            assert only_round.threshold == rule.threshold
            p = dpselect.weighted_keep_probability(only_round, 1.0)
            assert p == pytest.approx(stats.norm.sf((rule.threshold - 1.0) / sigma), rel=1e-9)
        policy = dpselect.partition_keep_rule(params(epsilon, delta, m, WEIGHTED[1]))
        assert policy.policy_cutoff == pytest.approx(policy.threshold + 3 * policy.noise_scale, rel=1e-15)


def test_dp_sips_rounds_grow_their_budget_and_compose_to_one_sigma():
    chosen = dpselect.PartitionSelectionParams(epsilon=1.0, delta=1e-6, max_partitions=3,
                                               strategy=dpselect.PartitionStrategy.DP_SIPS, rounds=4,
                                               round_budget_ratio=0.5)
    rule = dpselect.partition_keep_rule(chosen)
    shares = [r.budget_share for r in rule.rounds]
    assert shares == pytest.approx(np.array([1, 2, 4, 8]) / 15, rel=1e-12)
    assert sum(1 / r.noise_scale**2 for r in rule.rounds) == pytest.approx(1 / rule.noise_scale**2, rel=1e-12)
    assert sum(r.key_delta for r in rule.rounds) == pytest.approx(0.5e-6, rel=1e-12)
    # A key whose users hold nothing else misses every round independently.
    n = 30
    missed = np.prod([1 - dpselect.weighted_keep_probability(r, n) for r in rule.rounds])
    assert dpselect.keep_probability(chosen, n) == pytest.approx(1 - missed, rel=1e-12)
    assert "rounds=4, round_budget_ratio=0.5" in repr(chosen)


@pytest.mark.parametrize("strategy", WEIGHTED)
def test_weighted_strategies_release_string_keys_on_the_cpu_with_exact_coins(strategy):
    users = np.arange(600) % 300
    keys = np.where(np.arange(600) < 300, "cats", "dogs, big").tolist() + ["rare"]
    users = np.append(users, 1000)
    chosen = dpselect.select_partitions(dpselect.Context.fixed_seed(4), users, keys, epsilon=1.0, delta=1e-6,
                                        max_partitions=2, strategy=strategy)
    assert chosen.keys == ["cats", "dogs, big"]  # weight 300 / sqrt(2) each; "rare": 1, far below
    assert chosen.report.delta_float == 0.0
    assert chosen.report.streams == (27 if strategy == dpselect.PartitionStrategy.DP_SIPS else 9)
    assert chosen.report.executed_on == dpselect.ExecutedOn.CPU
    assert dpselect.is_weighted(strategy) and not dpselect.is_weighted(GAUSSIAN)


@pytest.mark.parametrize("strategy", WEIGHTED)
def test_weighted_strategies_refuse_bad_parameters_before_any_charge(strategy):
    context, ledger = ledger_context()
    users, keys = [1, 2], [5, 5]
    for bad, fragment in [({"rounds": 0}, "rounds"), ({"round_budget_ratio": 0.0}, "round_budget_ratio"),
                          ({"policy_cutoff_sigmas": -1.0}, "policy_cutoff_sigmas"),
                          ({"max_partitions": 65537}, "max_partitions"),
                          ({"backend": dpselect.Backend.GPU}, "backend must be Auto or Cpu")]:
        with pytest.raises(dpselect.InvalidArgument, match=fragment):
            dpselect.select_partitions(context, users, keys, epsilon=1.0, delta=1e-6, strategy=strategy,
                                       **{"max_partitions": 2, **bad})
    assert ledger.release_count == 0


def test_the_report_prints_its_parameters_and_rule_but_nothing_computed_from_the_data():
    users, keys = contributions(500, 4)
    selection = dpselect.select_partitions(dpselect.Context.fixed_seed(3), users, keys, epsilon=1.0, delta=1e-5,
                                           strategy=dpselect.PartitionStrategy.DP_SIPS)
    text = repr(selection.report)
    assert text.startswith("PartitionSelectionReport(params=PartitionSelectionParams(epsilon=1.0")
    assert "rule=PartitionKeepRule(" in text and "rounds=[WeightedRound(budget_share=" in text
    assert "keys_considered" not in text and str(selection.report.keys_considered) not in text.split("rule=")[0]
    assert " at 0x" not in repr(selection.report.rule)
