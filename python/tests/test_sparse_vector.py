# SPDX-License-Identifier: Apache-2.0
"""The sparse vector technique from Python: the batch and the streaming object give the same
answers as each other and as the C++ library (the dpselect command) for the same key; the first
answer of AboveThreshold has its exact probability; bad parameters and values get the library's
messages with nothing charged; the calculators follow their theorems.

The distribution test compares each cell's count with its exact expectation by a normal
approximation of the binomial; a cell fails beyond 5 standard deviations. Per cell the
false-failure probability is about 5.7e-7 (two-sided normal tail at 5 sigma; every expected
count here is large enough for the approximation), so a test of c cells fails by chance with
probability below c * 5.7e-7. With the fixed seeds below the outcome is deterministic: a failure
means the distribution changed.
"""

import copy
import json
import math
import pickle
import subprocess

import numpy as np
import pytest

import dpselect
from support import assert_the_gil_is_released, ledger_context

Z_LIMIT = 5.0
DWORK_ROTH = dpselect.SparseVectorAlgorithm.DWORK_ROTH
LYU_SU_LI = dpselect.SparseVectorAlgorithm.LYU_SU_LI


def public_values(n):
    # Data-free query values in [0, 24.25): around the thresholds below, so the noise decides.
    return ((np.arange(n, dtype=np.uint64) * 2654435761) % 97).astype(np.float64) / 4




def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    batch = dpselect.sparse_vector_batch(context, np.array([1.0]), epsilon=0.1, sensitivity=1.0, threshold=0.0)
    assert batch.report.stream == 0  # the refused calls drew no stream


def expect_invalid(call, *fragments):
    with pytest.raises(dpselect.InvalidArgument) as raised:
        call()
    for fragment in fragments:
        assert fragment in str(raised.value), f"message '{raised.value}' lacks '{fragment}'"


# --- the same key gives the same answers as the C++ library, batched or streamed --------------

CASES = {
    "above-threshold": ({"threshold": 20.0}, []),
    "sparse": ({"threshold": 20.0, "max_positives": 3}, ["--max-positives", "3"]),
    "numeric-sparse": ({"threshold": 18.0, "max_positives": 4, "numeric": True, "value_bound": 100.0},
                       ["--max-positives", "4", "--numeric", "--value-bound", "100"]),
    "approximate": ({"threshold": 20.0, "max_positives": 2, "delta": 1e-6}, ["--max-positives", "2", "--delta",
                                                                             "1e-06"]),
    "lyu-su-li-numeric": ({"threshold": 20.0, "max_positives": 3, "numeric": True, "algorithm": LYU_SU_LI},
                          ["--max-positives", "3", "--numeric", "--algorithm", "lyu-su-li"]),
    "lyu-su-li-monotone": ({"threshold": 19.0, "max_positives": 2, "algorithm": LYU_SU_LI, "monotone": True},
                           ["--max-positives", "2", "--algorithm", "lyu-su-li", "--monotone"]),
    "never-above": ({"threshold": 1000.0, "max_positives": 2}, ["--max-positives", "2"]),
}


def released(indices, values, queries, halted):
    return {"above": list(indices), "values": list(values), "queries": queries, "halted": halted}


@pytest.mark.parametrize("case", sorted(CASES))
def test_batch_and_stream_equal_the_command(cli, tmp_path, case):
    fields, options = CASES[case]
    fields = {"epsilon": 0.9, "sensitivity": 1.0, **fields}
    values = public_values(400)
    path = tmp_path / "queries.f64"
    values.tofile(path)
    out = subprocess.run([cli, "svt", "--queries", str(path), "--epsilon", "0.9", "--sensitivity", "1",
                          "--threshold", repr(fields["threshold"]), *options, "--seed", "2718", "--repeat", "3",
                          "--json"], check=True, capture_output=True, text=True).stdout
    expected = [released(run["above"], run.get("values", []), run["queries_answered"], run["halted"])
                for run in json.loads(out)["releases"]]
    numeric = fields.get("numeric", False)

    batch_context = dpselect.Context.fixed_seed(2718)
    batches = [dpselect.sparse_vector_batch(batch_context, values, **fields) for _ in range(3)]
    assert [released([a.index for a in b.above], [a.value for a in b.above] if numeric else [], b.report.queries,
                     b.report.halted) for b in batches] == expected
    assert [b.report.stream for b in batches] == [0, 1, 2]

    stream_context = dpselect.Context.fixed_seed(2718)
    params = dpselect.SparseVectorParams(**fields)
    streamed = []
    for _ in range(3):
        svt = dpselect.SparseVector(stream_context, params)
        answers = list(svt.answers(values))
        above = [i for i, answer in enumerate(answers) if answer.above]
        assert all((answer.value is not None) == (numeric and answer.above) for answer in answers)
        streamed.append(released(above, [answers[i].value for i in above] if numeric else [], len(answers),
                                 svt.halted))
        assert svt.report().queries == len(answers)
    assert streamed == expected


def test_answers_reads_no_value_after_the_halt():
    read = []

    def values():
        for value in (-1e6, 1e6, -1e6, 1e6, -1e6):
            read.append(value)
            yield value

    svt = dpselect.SparseVector(dpselect.Context.fixed_seed(5), epsilon=1.0, sensitivity=1.0, threshold=10.0,
                                max_positives=2)
    # 1e6 is above and -1e6 below except with probability ~e^-1e5.
    assert [answer.above for answer in svt.answers(values())] == [False, True, False, True]
    assert read == [-1e6, 1e6, -1e6, 1e6]
    assert svt.halted and svt.spent
    with pytest.raises(dpselect.UsageError, match='halted after its 2 "above" answers'):
        svt.answer(0.0)
    report = svt.report()
    assert (report.queries, report.positives, report.halted, report.stream) == (4, 2, True, 0)


# --- AboveThreshold's first answer has its exact probability ----------------------------------

def laplace_difference_at_least(d, a, b):
    """P[X - Y >= d] for independent X ~ Lap(a), Y ~ Lap(b): X - Y has the law of X + Y, whose
    characteristic function 1/((1 + a^2 t^2)(1 + b^2 t^2)) splits into (a^2 Lap(a) - b^2 Lap(b)) /
    (a^2 - b^2); for a == b the density is (b + |z|) e^{-|z|/b} / (4 b^2)."""
    if d < 0:
        return 1.0 - laplace_difference_at_least(-d, a, b)
    if a == b:
        return math.exp(-d / b) * (2.0 + d / b) / 4.0
    return (a * a * math.exp(-d / a) - b * b * math.exp(-d / b)) / (2.0 * (a * a - b * b))


def above_threshold_scales(epsilon, sensitivity, algorithm, monotone):
    """(threshold noise, query noise) for c = 1 from the papers, not from the library."""
    if algorithm == DWORK_ROTH:
        # Dwork & Roth 2014, Alg. 1: T + Lap(2 Delta/eps), queries + Lap(4 Delta/eps).
        return 2.0 * sensitivity / epsilon, 4.0 * sensitivity / epsilon
    # Lyu, Su & Li 2017, Sec. 4.2: eps1 : eps2 = 1 : (2c)^(2/3), or 1 : c^(2/3) when monotone;
    # T + Lap(Delta/eps1), queries + Lap(2c Delta/eps2), or Lap(c Delta/eps2) when monotone.
    ratio = 1.0 if monotone else 2.0 ** (2.0 / 3.0)
    epsilon_threshold = epsilon / (1.0 + ratio)
    epsilon_queries = epsilon - epsilon_threshold
    return sensitivity / epsilon_threshold, (1.0 if monotone else 2.0) * sensitivity / epsilon_queries


@pytest.mark.parametrize("algorithm,monotone", [(DWORK_ROTH, False), (LYU_SU_LI, False), (LYU_SU_LI, True)])
def test_the_first_answer_has_its_exact_probability(algorithm, monotone):
    epsilon, sensitivity, threshold = 1.0, 1.0, 10.0
    threshold_noise, query_noise = above_threshold_scales(epsilon, sensitivity, algorithm, monotone)
    params = dpselect.SparseVectorParams(epsilon, sensitivity, threshold, algorithm=algorithm, monotone=monotone)
    scales = dpselect.sparse_vector_scales(params)
    assert math.isclose(scales.threshold_noise, threshold_noise, rel_tol=1e-12)
    assert math.isclose(scales.query_noise, query_noise, rel_tol=1e-12)
    context = dpselect.Context.fixed_seed(31 + 2 * algorithm.value + monotone)
    runs = 40_000
    query_values = [threshold - 8.0, threshold - 2.0, threshold, threshold + 3.0, threshold + 10.0]
    counts = [sum(dpselect.SparseVector(context, params).answer(value).above for _ in range(runs))
              for value in query_values]
    # "above" iff f + Lap(query) >= T + Lap(threshold), i.e. Lap(query) - Lap(threshold) >= T - f.
    probabilities = [laplace_difference_at_least(threshold - value, query_noise, threshold_noise)
                     for value in query_values]
    for cell, (count, p) in enumerate(zip(counts, probabilities)):
        z = (count - runs * p) / math.sqrt(runs * p * (1.0 - p))
        assert abs(z) < Z_LIMIT, f"value {query_values[cell]}: {count} above against {runs * p:.1f} (z = {z:.2f})"


# --- bad input: the library's exception and message, nothing charged -------------------------

BAD_PARAMS = [
    ({"epsilon": 0.0}, ("epsilon", "0")),
    ({"epsilon": -1.0}, ("epsilon", "-1")),
    ({"epsilon": math.nan}, ("epsilon", "nan")),
    ({"epsilon": math.inf}, ("epsilon", "inf")),
    ({"delta": -0.1}, ("delta", "-0.1")),
    ({"delta": 1.0}, ("delta", "1")),
    ({"delta": math.nan}, ("delta", "nan")),
    ({"sensitivity": 0.0}, ("sensitivity", "0")),
    ({"threshold": math.nan}, ("threshold", "nan")),
    ({"threshold": -math.inf}, ("threshold", "-inf")),
    ({"max_positives": 0}, ("max_positives", "0")),
    ({"value_bound": -1.0}, ("value_bound", "-1")),
    ({"epsilon": 1e-320}, ("sensitivity / epsilon", "inf")),
    ({"monotone": True}, ("monotone", "lyu_su_li only")),
    ({"algorithm": LYU_SU_LI, "delta": 1e-6}, ("delta", "1e-06")),
]


@pytest.mark.parametrize("change,fragments", BAD_PARAMS)
def test_bad_parameters(change, fragments):
    params = dpselect.SparseVectorParams(**{"epsilon": 1.0, "sensitivity": 1.0, "threshold": 10.0,
                                            "max_positives": 2, **change})
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.SparseVector(context, params), *fragments)
    expect_invalid(lambda: dpselect.sparse_vector_batch(context, np.array([1.0]), params), *fragments)
    expect_invalid(lambda: dpselect.sparse_vector_scales(params), *fragments)
    expect_invalid(lambda: dpselect.sparse_vector_alpha(params, 10, 0.1), *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_bad_value_spends_the_stream_and_refuses_the_batch(value):
    params = dpselect.SparseVectorParams(1.0, 1.0, 10.0, max_positives=2)
    svt = dpselect.SparseVector(dpselect.Context.fixed_seed(1), params)
    svt.answer(1.0)
    expect_invalid(lambda: svt.answer(value), "query value 1", "finite")
    assert svt.report().queries == 1 and svt.spent and not svt.halted
    with pytest.raises(dpselect.UsageError, match="spent"):
        svt.answer(1.0)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.sparse_vector_batch(context, np.array([1.0, value]), params), "query value 1",
                   "finite")
    expect_nothing_charged_or_drawn(context, accountant)


@pytest.mark.parametrize("value", [2**53 + 1, -(2**60), np.int64(2**62), 10**400])
def test_an_integer_beyond_2_to_the_53_is_refused_before_the_answer_and_spends_nothing(value):
    # The rule of sparse_vector_batch: float64 cannot hold the value exactly.
    params = dpselect.SparseVectorParams(1.0, 1.0, 10.0, max_positives=5)
    svt = dpselect.SparseVector(dpselect.Context.fixed_seed(1), params)
    svt.answer(1.0)
    with pytest.raises(ValueError, match=rf"value is the integer {int(value)}, whose magnitude exceeds 2\*\*53"):
        svt.answer(value)
    assert svt.report().queries == 1 and not svt.spent  # not answered, and the object is still usable
    with pytest.raises(ValueError, match=r"value is the integer"):
        next(svt.answers([value, 1.0]))
    assert svt.report().queries == 1 and not svt.spent
    # The same key answers the same: the refused values drew nothing.
    following = (1.0, 2**53, -(2**53), True, 12)  # integers up to 2**53 are exact and answered
    reference = dpselect.SparseVector(dpselect.Context.fixed_seed(1), params)
    assert [reference.answer(v).above for v in (1.0, *following)] == [False] + [svt.answer(v).above
                                                                               for v in following]


def test_a_value_beyond_its_bound_is_not_quoted_back():
    params = dpselect.SparseVectorParams(1.0, 1.0, 10.0, max_positives=2, value_bound=100.0)
    svt = dpselect.SparseVector(dpselect.Context.fixed_seed(1), params)
    with pytest.raises(dpselect.InvalidArgument) as raised:
        svt.answer(100.5)
    # A query value is an aggregate of the data: the message names the query, never its value.
    assert "query value 0 must be within value_bound (100)" in str(raised.value)
    assert "100.5" not in str(raised.value)
    assert not svt.report().slack.depends_on_data
    with pytest.raises(dpselect.UsageError):
        svt.answer(1.0)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.sparse_vector_batch(context, np.array([1.0, -100.5]), params), "value_bound")
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_arrays_and_arguments_are_named():
    context, accountant = ledger_context()
    fields = {"epsilon": 1.0, "sensitivity": 1.0, "threshold": 0.0}
    with pytest.raises(TypeError, match=r"values must hold real numbers \(got dtype complex64\)"):
        dpselect.sparse_vector_batch(context, np.ones(4, dtype=np.complex64), **fields)
    with pytest.raises(TypeError, match=r"values must be numbers: .*\(got dict\)"):
        dpselect.sparse_vector_batch(context, {"a": 1.0}, **fields)
    with pytest.raises(ValueError, match=r"values\[1\] is the integer 9007199254740993"):
        dpselect.sparse_vector_batch(context, [1, 2**53 + 1], **fields)
    with pytest.raises(ValueError, match="must be 1-D"):
        dpselect.sparse_vector_batch(context, np.ones((2, 2)), **fields)
    with pytest.raises(ValueError, match="C-contiguous"):
        dpselect.sparse_vector_batch(context, np.ones(10)[::2], **fields)
    with pytest.raises(TypeError, match="params or keyword arguments, not both"):
        dpselect.sparse_vector_batch(context, np.ones(3), dpselect.SparseVectorParams(**fields), epsilon=1.0)
    with pytest.raises(TypeError, match="params or keyword arguments, not both"):
        dpselect.SparseVector(context, dpselect.SparseVectorParams(**fields), epsilon=1.0)
    with pytest.raises(TypeError, match=r"params must be a dpselect.SparseVectorParams \(got SelectionParams\)"):
        dpselect.SparseVector(context, dpselect.SelectionParams(1.0, 1.0))
    expect_nothing_charged_or_drawn(context, accountant)


def test_charges_once_per_run():
    context = dpselect.Context.fixed_seed(1)
    accountant = dpselect.PrivacyAccountant(dpselect.PrivacyBound(1.0, 1e-5))
    context.charge_to(accountant)
    svt = dpselect.SparseVector(context, epsilon=0.4, sensitivity=1.0, threshold=1e9)
    for value in public_values(50):
        svt.answer(value)  # "below" answers cost nothing more
    dpselect.sparse_vector_batch(context, public_values(50), epsilon=0.3, delta=1e-6, sensitivity=1.0,
                                 threshold=1e9)
    assert accountant.release_count == 2
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.SparseVector(context, epsilon=0.5, sensitivity=1.0, threshold=0.0)
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.sparse_vector_batch(context, np.ones(3), epsilon=0.5, sensitivity=1.0, threshold=0.0)
    assert accountant.release_count == 2
    assert dpselect.sparse_vector_batch(context, np.ones(3), epsilon=0.1, sensitivity=1.0,
                                        threshold=0.0).report.stream == 2


def test_it_cannot_be_copied_or_pickled():
    svt = dpselect.SparseVector(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0, threshold=0.0)
    for duplicate in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled: a copy would answer with the same noise"):
            duplicate(svt)
    assert repr(svt) == "SparseVector(queries=0, positives=0, halted=False, spent=False, stream=0)"


# --- the calculators and the reports ----------------------------------------------------------

def test_calculators_follow_their_theorems():
    above_threshold = dpselect.SparseVectorParams(0.5, 2.0, 10.0)
    # Dwork & Roth 2014, Thm 3.24: alpha = 8 Delta (ln k + ln(2/beta)) / eps.
    alpha = dpselect.sparse_vector_alpha(above_threshold, 1000, 0.05)
    assert math.isclose(alpha, 8 * 2.0 * (math.log(1000) + math.log(2 / 0.05)) / 0.5, rel_tol=1e-12)
    assert math.isclose(dpselect.sparse_vector_beta(above_threshold, 1000, alpha), 0.05, rel_tol=1e-9)
    # Thm 3.26 (Sparse, delta > 0): Delta (ln k + ln(2c/beta)) sqrt(512 c ln(1/delta)) / eps.
    sparse = dpselect.SparseVectorParams(1.0, 1.0, 10.0, delta=1e-6, max_positives=4)
    assert math.isclose(dpselect.sparse_vector_alpha(sparse, 100, 0.1),
                        (math.log(100) + math.log(8 / 0.1)) * math.sqrt(512 * 4 * math.log(1e6)), rel_tol=1e-12)
    # Dwork & Roth 2014, Thm 3.11: (2 Delta/eps)(ln(|R|/|R_OPT|) + ln(1/beta)); monotone halves it.
    em = dpselect.SelectionParams(1.0, 2.0)
    assert math.isclose(dpselect.exponential_mechanism_alpha(em, 1000, 10, 0.01),
                        4.0 * (math.log(100.0) + math.log(100.0)), rel_tol=1e-12)
    em.monotone = True
    alpha = dpselect.exponential_mechanism_alpha(em, 1000, 10, 0.02)
    assert math.isclose(alpha, 2.0 * (math.log(100.0) + math.log(50.0)), rel_tol=1e-12)
    assert math.isclose(dpselect.exponential_mechanism_beta(em, 1000, 10, alpha), 0.02, rel_tol=1e-9)


def test_calculators_refuse_bad_arguments():
    params = dpselect.SparseVectorParams(1.0, 1.0, 10.0)
    expect_invalid(lambda: dpselect.sparse_vector_alpha(params, 0, 0.1), "queries", "0")
    expect_invalid(lambda: dpselect.sparse_vector_alpha(params, 10, 0.0), "beta", "0")
    expect_invalid(lambda: dpselect.sparse_vector_alpha(params, 10, 1.0), "beta", "1")
    expect_invalid(lambda: dpselect.sparse_vector_beta(params, 10, -2.0), "alpha", "-2")
    em = dpselect.SelectionParams(1.0, 1.0)
    expect_invalid(lambda: dpselect.exponential_mechanism_alpha(em, 10, 11, 0.1), "optimal_candidates", "11")
    expect_invalid(lambda: dpselect.exponential_mechanism_alpha(em, 10, 0, 0.1), "optimal_candidates", "0")


def test_numeric_scales_and_reprs():
    # NumericSparse, delta = 0 (Dwork & Roth 2014, Thm 3.27): eps1 = 8 eps/9 gives sigma = 2c Delta/eps1;
    # the answers take eps2 = 2 eps/9, Lap(2c Delta/eps2).
    params = dpselect.SparseVectorParams(1.0, 1.0, 10.0, max_positives=2, numeric=True)
    scales = dpselect.sparse_vector_scales(params)
    assert math.isclose(scales.threshold_noise, 2 * 2 / (8 / 9), rel_tol=1e-15)
    assert math.isclose(scales.query_noise, 2 * scales.threshold_noise, rel_tol=1e-15)
    assert math.isclose(scales.answer_noise, 2 * 2 / (2 / 9), rel_tol=1e-15)
    # Raised only for the rounding to the secure Laplace grid.
    assert scales.answer_noise <= scales.answer_noise_secure < scales.answer_noise * (1 + 2.0**-20)
    assert scales.answer_noise_secure / scales.answer_granularity == round(scales.answer_noise_secure
                                                                           / scales.answer_granularity)
    assert math.isclose(scales.epsilon_comparisons + scales.epsilon_answers, 1.0, rel_tol=1e-15)
    assert scales.threshold_redrawn
    assert repr(params) == ("SparseVectorParams(epsilon=1.0, sensitivity=1.0, threshold=10.0, delta=0.0, "
                            "max_positives=2, numeric=True, value_bound=0.0, algorithm=dwork-roth, monotone=False)")
    batch = dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(4), np.array([-1e6, 1e6, 1e6, 1e6]), params)
    assert [a.index for a in batch.above] == [1, 2] and batch.report.halted and batch.report.queries == 3
    # The values are secure Laplace releases: multiples of the granularity.
    assert all(a.value / scales.answer_granularity == round(a.value / scales.answer_granularity)
               for a in batch.above)
    assert repr(batch).startswith("SparseVectorBatch(above=["
                                  f"SparseVectorAbove(index=1, value={batch.above[0].value!r}), "
                                  f"SparseVectorAbove(index=2, value={batch.above[1].value!r})], "
                                  "report=SparseVectorReport(queries=3, positives=2, halted=True, stream=0, ")
    answer = dpselect.SparseVector(dpselect.Context.fixed_seed(4), params).answer(-1e6)
    assert repr(answer) == "SparseVectorAnswer(above=False, value=None)"


def test_the_documented_numeric_split_is_the_librarys():
    # 8/9 and 1/9 for delta = 0; sqrt(512)/(sqrt(512)+1) and 1/(sqrt(512)+1) for delta > 0.
    pure = dpselect.sparse_vector_scales(dpselect.SparseVectorParams(0.9, 1.0, 0.0, max_positives=3, numeric=True))
    assert math.isclose(pure.epsilon_comparisons, 0.8, rel_tol=1e-15)
    assert math.isclose(pure.epsilon_answers, 0.1, rel_tol=1e-15)
    approximate = dpselect.sparse_vector_scales(dpselect.SparseVectorParams(1.0, 1.0, 0.0, delta=1e-6,
                                                                            numeric=True))
    root = math.sqrt(512)
    assert math.isclose(approximate.epsilon_comparisons, root / (root + 1), rel_tol=1e-15)
    assert math.isclose(approximate.epsilon_answers, 1 / (root + 1), rel_tol=1e-15)
    for documented in (dpselect.SparseVector, dpselect.sparse_vector_batch):
        notes = " ".join(documented.__doc__.split("Notes\n    -----\n")[1].split())
        assert "8/9 and 1/9 for delta = 0" in notes and "1 / (sqrt(512) + 1) for delta > 0" in notes
        assert "2/9" not in notes and "%(notes)s" not in notes
    assert dpselect.SparseVector.__doc__.split("Notes")[1].startswith(
        dpselect.sparse_vector_batch.__doc__.split("Notes")[1].rstrip())  # written once
    assert "8/9 and 1/9 for delta = 0" in " ".join(dpselect.SparseVectorScales.__doc__.split())
    assert "2/9" not in dpselect.SparseVectorScales.__doc__


def test_device_batches_equal_the_host_batch():
    cupy = pytest.importorskip("cupy")
    values = public_values(1 << 16)
    fields = {"epsilon": 0.5, "sensitivity": 1.0, "threshold": 23.0, "max_positives": 5, "numeric": True}
    if not dpselect.gpu_usable():
        context, accountant = ledger_context()
        with pytest.raises(dpselect.BackendUnavailable):
            dpselect.sparse_vector_batch(context, cupy.asarray(values), **fields)
        expect_nothing_charged_or_drawn(context, accountant)
        return
    on_gpu = dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(6), cupy.asarray(values), **fields)
    on_cpu = dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(6), values, **fields)
    assert [(a.index, a.value) for a in on_gpu.above] == [(a.index, a.value) for a in on_cpu.above]
    assert on_gpu.report.queries == on_cpu.report.queries


def test_the_gil_is_released_during_a_batch():
    values = public_values(1 << 22)  # all far below the threshold: every value is searched
    assert_the_gil_is_released(lambda: [dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(2), values,
                                                                      epsilon=1.0, sensitivity=1.0, threshold=1e9)
                                        for _ in range(2)])
