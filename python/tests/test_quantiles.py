# SPDX-License-Identifier: Apache-2.0
"""Private quantiles from Python: the same values as the C++ library (the dpselect command) for the
same key, the single quantile's exact distribution on tiny data, the library's messages for bad
input with nothing charged, arrays handed over without a copy, the GIL released while sorting and
releasing, reprs that withhold what the data decide, and the calculators and diagnostics against
brute force.

Distribution tests compare each cell's count with its exact expectation by a normal
approximation of the binomial; a cell fails beyond 5 standard deviations. Per cell the
false-failure probability is about 5.7e-7 (two-sided normal tail at 5 sigma; every expected
count here is either above 500, enough for the approximation, or below 1e-6, where a single
release in the cell fails the test with probability below 1e-6), so a test of c cells fails by
chance with probability below c * 1e-6. The expectations are computed with 50
significant digits (decimal), far below what 10^5 releases resolve. With the fixed seeds below
the outcome is deterministic: a failure means the distribution changed.
"""

import bisect
import json
import math
import subprocess
from decimal import Context as DecimalContext
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import dpselect
import dpselect.audit
from support import assert_the_gil_is_released, ledger_context

Z_LIMIT = 5.0
CPU = dpselect.Backend.CPU
PERMUTE_AND_FLIP = dpselect.Mechanism.PERMUTE_AND_FLIP
REPLACE = dpselect.RecordNeighbours.REPLACE_ONE_RECORD
ADD_REMOVE = dpselect.RecordNeighbours.ADD_OR_REMOVE_RECORD
NEIGHBOURS = {"replace": REPLACE, "add-remove": ADD_REMOVE}
METHODS = {
    "joint": dpselect.QuantilesMethod.JOINT_EXPONENTIAL,
    "recursive": dpselect.QuantilesMethod.RECURSIVE_SPLITTING,
    "basic": dpselect.QuantilesMethod.INDEPENDENT_BASIC,
    "zcdp": dpselect.QuantilesMethod.INDEPENDENT_ZCDP,
}


def public_values(n, scale=100.0):
    # Data-free values with ties, spread over [0, scale), a few of them outside [0, scale].
    raw = ((np.arange(n, dtype=np.uint64) * 2654435761) % 10007).astype(np.float64)
    values = raw / 10007 * scale
    values[::97] = -1.0
    values[5::101] = scale * 2
    return values


def expect_invalid(call, *fragments):
    with pytest.raises(dpselect.InvalidArgument) as raised:
        call()
    for fragment in fragments:
        assert fragment in str(raised.value), f"message '{raised.value}' lacks '{fragment}'"


def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    data = dpselect.QuantileData(np.array([1.0, 2.0]), (0.0, 4.0))
    pick = dpselect.select_quantile(context, data, 0.5, range=(0.0, 4.0), epsilon=0.1, backend=CPU)
    assert pick.report.stream == 0  # the refused calls drew no stream


def expect_counts(counts, probabilities, releases):
    for cell, (count, p) in enumerate(zip(counts, probabilities)):
        if p == 0.0:
            assert count == 0, f"cell {cell} has probability 0 and was chosen {count} times"
            continue
        sd = math.sqrt(releases * p * (1.0 - p))
        z = (count - releases * p) / sd
        assert abs(z) < Z_LIMIT, f"cell {cell}: {count} against {releases * p:.1f} expected (z = {z:.2f})"


def exact_grid_point(grid, i):
    # fma(i, step, lower) rounded once: the exact product and sum as a Fraction, then one
    # correctly rounded conversion (Fraction.__float__).
    return float(Fraction(i) * Fraction(grid.step) + Fraction(grid.lower))


def exact_positions(values, grid):
    """QuantileGrid.points_at_or_below of each clipped value, by bisection over exact grid points."""
    positions = []
    for value in values:
        low, high = 0, grid.size  # the answer: the number of points <= value, in [1, size]
        while low < high:
            middle = (low + high) // 2
            if exact_grid_point(grid, middle) <= value:
                low = middle + 1
            else:
                high = middle
        positions.append(max(low, 1))
    return sorted(positions)


# --- the same key gives the same values as the C++ library -----------------------------------

def quantile_command(cli):
    help_text = subprocess.run([cli, "--help"], check=False, capture_output=True, text=True)
    if "quantile" not in help_text.stdout + help_text.stderr:
        pytest.skip("this dpselect command has no quantile subcommand")
    return cli


def run_quantile(cli, *args):
    completed = subprocess.run([cli, "quantile", *args, "--backend", "cpu", "--json"], check=False,
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def released_values(report):
    # One release per --repeat, each with one value per --q.
    return [release["values"] for release in report["releases"]]


@pytest.mark.parametrize("neighbours", sorted(NEIGHBOURS))
def test_single_quantiles_equal_the_command(cli, tmp_path, neighbours):
    cli = quantile_command(cli)
    values = public_values(1000)
    path = tmp_path / "values.f64"
    values.tofile(path)
    expected = run_quantile(cli, "--data", str(path), "--q", "0.3", "--range", "0:100", "--epsilon", "0.7",
                            "--neighbours", neighbours, "--max-points", "5000", "--seed", "41", "--repeat", "3")
    context = dpselect.Context.fixed_seed(41)
    data = dpselect.QuantileData(values, (0.0, 100.0))
    got = [[dpselect.select_quantile(context, data, 0.3, range=(0.0, 100.0), epsilon=0.7,
                                     neighbours=NEIGHBOURS[neighbours], max_points=5000, backend=CPU).value]
           for _ in range(3)]
    assert got == released_values(expected)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_several_quantiles_equal_the_command(cli, tmp_path, method):
    cli = quantile_command(cli)
    values = public_values(2000, scale=10.0) - 5.0  # a range with negative numbers
    path = tmp_path / "values.f64"
    values.tofile(path)
    qs = [0.1, 0.25, 0.5, 0.9]
    delta = ["--delta", "1e-6"] if method == "zcdp" else []
    expected = run_quantile(cli, "--data", str(path), *[arg for q in qs for arg in ("--q", str(q))], "--range",
                            "-5:5", "--epsilon", "2", "--method", method, *delta, "--seed", "8")
    release = dpselect.select_quantiles(dpselect.Context.fixed_seed(8), values, qs, range=(-5.0, 5.0), epsilon=2.0,
                                        method=METHODS[method], delta=1e-6 if method == "zcdp" else 0.0,
                                        backend=CPU)
    assert [release.values] == released_values(expected)


# --- the single quantile's exact distribution -------------------------------------------------

@pytest.mark.parametrize("neighbours,q,seed", [(REPLACE, 0.5, 2026), (ADD_REMOVE, 0.3, 2027)])
def test_a_single_quantile_follows_the_exponential_mechanism(neighbours, q, seed):
    # Utility u(t) = -|#{x_i < t} - q n| over the grid (Smith 2011); sensitivity 1 when a record
    # is replaced, max(q, 1 - q) when one is added or removed; the exponential mechanism at scale
    # eps / (2 Delta) (Dwork & Roth 2014, Def. 3.4 and Thm 3.10). Grid point j has r values
    # below it exactly when g_{r-1} <= j < g_r (g the sorted positions, g_{-1} = 0, g_n = grid
    # size), so interval r has mass (g_r - g_{r-1}) exp(-scale |r - q n|). Cells: each half of
    # each interval (the second stage is uniform inside it), so a wrong mass or a non-uniform
    # pick inside an interval both show. Empty cells, never chosen: the interval between the tie
    # 2.5, 2.5, the last interval (12 is clipped to the range's last grid point) and the first
    # half of the first (-3 is clipped to grid point 0, so the first interval is that one point,
    # with a probability below 1e-11).
    values = [2.5, 7.0, -3.0, 2.5, 9.25, 12.0, 0.75]
    value_range = dpselect.QuantileRange(0.0, 10.0)
    epsilon = 1.5
    data = dpselect.QuantileData(np.array(values), value_range)
    grid = value_range.grid()
    positions = exact_positions([min(max(v, 0.0), 10.0) for v in values], grid)
    assert list(data.sorted_positions()) == positions
    n = len(values)
    ends = [0, *positions, grid.size]
    sensitivity = 1.0 if neighbours == REPLACE else max(q, 1.0 - q)
    exact = DecimalContext(prec=50)
    scale = Decimal(epsilon) / (2 * Decimal(sensitivity))
    target = Decimal(q) * n
    cells, masses = [], []
    for r in range(n + 1):
        begin, end = ends[r], ends[r + 1]
        middle = (begin + end) // 2
        weight = exact.exp(-scale * abs(r - target))
        for low, high in ((begin, middle), (middle, end)):
            cells.append(low)
            masses.append(exact.multiply(weight, Decimal(high - low)))
    total = exact.add(Decimal(0), sum(masses, Decimal(0)))
    probabilities = [float(exact.divide(mass, total)) for mass in masses]
    assert probabilities.count(0.0) == 5 and 0.0 < probabilities[1] < 1e-11

    context = dpselect.Context.fixed_seed(seed)
    params = dpselect.QuantileParams(value_range, epsilon, neighbours=neighbours, backend=CPU)
    releases = 100_000
    picks = [dpselect.select_quantile(context, data, q, params) for _ in range(releases)]
    first = picks[0]
    assert first.report.sensitivity == sensitivity and first.report.candidates == grid.size
    assert all(pick.value == exact_grid_point(grid, pick.grid_index) for pick in picks[:50])
    # The cell of grid index j: the last cell starting at or below j (cells are in grid order).
    counts = np.bincount([bisect.bisect_right(cells, pick.grid_index) - 1 for pick in picks], minlength=len(cells))
    expect_counts(counts, probabilities, releases)


def permute_and_flip_probabilities(scores):
    """McKenna & Sheldon's (2020, Alg. 1) output law, exactly (50 digits): the candidates in a
    uniformly random order, each accepted with probability p = exp(s - max s); r comes out when it
    is accepted and none before it was. The set before r is a uniform subset of size k, k uniform
    in [0, N - 1]: P(r) = p_r (1/N) sum_k e_k / C(N - 1, k), e_k the elementary symmetric
    polynomials of the others' 1 - p."""
    exact = DecimalContext(prec=50)
    best = max(scores)
    accept = [exact.exp(Decimal(s - best)) for s in scores]
    n = len(scores)
    law = []
    for r in range(n):
        e = [Decimal(1)] + [Decimal(0)] * (n - 1)
        seen = 0
        for j in range(n):
            if j == r:
                continue
            seen += 1
            for k in range(seen, 0, -1):
                e[k] = exact.add(e[k], exact.multiply(e[k - 1], 1 - accept[j]))
        total = sum((exact.divide(e[k], math.comb(n - 1, k)) for k in range(n)), Decimal(0))
        law.append(float(exact.divide(exact.multiply(accept[r], total), n)))
    return law


def test_permute_and_flip_follows_its_algorithm():
    # Integers with ties on a resolution-1 grid (runs of several points between 12 and 20): every
    # grid point's utility -dist(q n, [#{x < t}, #{x <= t}]) by brute force, scaled by eps / 2
    # (sensitivity 1, one record replaced), and the law of permute-and-flip itself.
    values = [3, 3, 3, 5, 5, 7, 7, 12, 12, 12, 12, 12, 20, 0, 20, 6, 9]
    value_range = dpselect.QuantileRange(0.0, 20.0, resolution=1.0)
    epsilon, q = 3.0, 0.5
    target = q * len(values)
    scores = []
    for t in range(21):
        below, at_or_below = sum(v < t for v in values), sum(v <= t for v in values)
        scores.append(-epsilon / 2 * max(0.0, below - target, target - at_or_below))
    law = permute_and_flip_probabilities(scores)
    data = dpselect.QuantileData(np.array(values, dtype=np.float64), value_range)
    context = dpselect.Context.fixed_seed(31)
    params = dpselect.QuantileParams(value_range, epsilon, backend=CPU, mechanism=PERMUTE_AND_FLIP)
    releases = 40_000
    picks = [dpselect.select_quantile(context, data, q, params) for _ in range(releases)]
    assert picks[0].report.mechanism == PERMUTE_AND_FLIP and picks[0].report.candidates == 21
    expect_counts(np.bincount([pick.grid_index for pick in picks], minlength=21), law, releases)
    # The law differs from the exponential mechanism's where this many releases tell them apart.
    weights = [math.exp(s) for s in scores]
    softmax = [w / sum(weights) for w in weights]
    assert max(abs(a - b) / math.sqrt(a * (1 - a) / releases) for a, b in zip(law, softmax) if a > 0) > 2 * Z_LIMIT


# --- bad input: the library's exception and message, nothing charged -------------------------

@pytest.mark.parametrize("lower,upper,fragments", [
    (5.0, 2.0, ("range upper", "(got 2)")),
    (1.0, 1.0, ("range upper", "(got 1)")),
    (float("nan"), 1.0, ("range lower", "(got nan)")),
    (0.0, float("inf"), ("range upper", "(got inf)")),
    (-(2.0**970), 0.0, ("range lower", "2^960")),
])
def test_bad_ranges(lower, upper, fragments):
    expect_invalid(lambda: dpselect.QuantileRange(lower, upper).validate(), *fragments)
    expect_invalid(lambda: dpselect.QuantileRange(lower, upper).grid(), *fragments)
    expect_invalid(lambda: dpselect.QuantileData(np.array([1.0]), (lower, upper)), *fragments)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.select_quantile(context, np.array([1.0, 2.0]), 0.5, range=(lower, upper),
                                                    epsilon=0.5), *fragments)
    expect_invalid(lambda: dpselect.quantile_rank_error_bound(
        dpselect.QuantileParams(dpselect.QuantileRange(lower, upper), 1.0), 0.5, 0.05), *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


@pytest.mark.parametrize("resolution,fragments", [
    (0.0, ("range resolution", "> 0", "(got 0)")),
    (-1.0, ("range resolution", "(got -1)")),
    (float("nan"), ("range resolution", "(got nan)")),
    (3.0, ("range resolution", "divisor", "(got 3)")),
    (1e-12, ("range resolution", "2^40 + 1 points", "(got 1e-12)")),
])
def test_bad_resolutions(resolution, fragments):
    expect_invalid(lambda: dpselect.QuantileRange(0.0, 10.0, resolution=resolution), *fragments)  # when built
    value_range = dpselect.QuantileRange(0.0, 10.0)
    value_range.resolution = resolution  # and when used, after a change
    expect_invalid(value_range.validate, *fragments)
    expect_invalid(lambda: dpselect.QuantileData(np.array([1.0]), value_range), *fragments)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.select_quantile(context, np.array([1.0, 2.0]), 0.5, range=value_range,
                                                    epsilon=0.5), *fragments)
    expect_invalid(lambda: dpselect.select_quantiles(context, np.array([1.0, 2.0]), [0.25, 0.75], range=value_range,
                                                     epsilon=0.5), *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_resolution_releases_its_multiples_and_the_tied_value_itself():
    # Prices in whole units, 400 of them tied at 12, which holds the median's rank.
    prices = np.concatenate([np.arange(1, 200), np.full(400, 12.0), np.arange(300, 500)]).astype(np.float64)
    value_range = dpselect.QuantileRange(0.0, 1000.0, resolution=1.0)
    assert repr(value_range) == "QuantileRange(lower=0.0, upper=1000.0, resolution=1.0)"
    grid = value_range.grid()
    assert (grid.size, grid.step, grid.rounds_to_points) == (1001, 1.0, True)
    assert repr(grid) == "QuantileGrid(lower=0.0, step=1.0, size=1001, rounds_to_points=True)"
    assert [grid.slot(v) for v in (-3.0, 0.0, 0.4, 0.5, 0.6, 999.7, 2000.0)] == [1, 1, 1, 1, 3, 2001, 2001]
    data = dpselect.QuantileData(prices, value_range)
    context = dpselect.Context.fixed_seed(5)
    medians = [dpselect.select_quantile(context, data, 0.5, range=value_range, epsilon=1.0).value for _ in range(20)]
    assert medians == [12.0] * 20  # any other point is >= 200 ranks away: probability below e^-100
    assert dpselect.nonprivate_quantile_diagnostics(data, 0.5).best_rank_error == 0.0
    # Values off the grid are rounded to their nearest multiple (half-way: the lower one).
    rounded = dpselect.QuantileData(np.array([2.4, 2.6, 3.5, -7.0]), value_range)
    assert rounded.sorted_positions().tolist() == [1, 3, 4, 4]  # points <= 0, 2, 3, 3
    # The data must be prepared for the same range, resolution included.
    expect_invalid(lambda: dpselect.select_quantile(context, data, 0.5, range=(0.0, 1000.0), epsilon=1.0),
                   "prepared for", "resolution 1")


def test_eight_hundred_thousand_ties_at_the_median_underflow_no_weight():
    # diffprivlib's quantile fails on 800 000 tied values (every weight e^{-eps |r - q n| / 2} around
    # the run underflows to 0); dpselect compares log weights. On a resolution grid the tied value is
    # released exactly (any other point is >= 10^5 ranks away); without one, a point of an interval
    # that touches the run.
    below, above = np.linspace(0.0, 40.0, 100_000, endpoint=False), np.linspace(60.0, 100.0, 100_001)[1:]
    values = np.concatenate([below, np.full(800_000, 50.0), above])
    context = dpselect.Context.fixed_seed(11)
    for q in (0.2, 0.5, 0.8):  # target ranks 2e5, 5e5, 8e5: all inside the run [1e5, 9e5)
        on_grid = dpselect.select_quantile(context, values, q, range=dpselect.QuantileRange(0.0, 100.0, resolution=1.0),
                                           epsilon=1.0)
        assert on_grid.value == 50.0
        continuous = dpselect.select_quantile(context, values, q, range=(0.0, 100.0), epsilon=1.0)
        assert below[-1] <= continuous.value <= above[0]
        assert np.isfinite(continuous.report.slack.epsilon) and continuous.report.slack.epsilon < 1.0


@pytest.mark.parametrize("values,fragments", [
    (np.array([], dtype=np.float64), ("data",)),
    (np.array([1.0, np.nan]), ("data[1]", "nan")),
    (np.array([np.nan, 1.0], dtype=np.float32), ("data[0]", "nan")),
])
def test_bad_data(values, fragments):
    expect_invalid(lambda: dpselect.QuantileData(values, (0.0, 4.0)), *fragments)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.select_quantile(context, values, 0.5, range=(0.0, 4.0), epsilon=0.5),
                   *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


def test_infinities_are_clipped_like_any_value_outside_the_range():
    data = dpselect.QuantileData(np.array([-np.inf, 1.0, np.inf]), (0.0, 4.0))
    grid = data.grid()
    assert list(data.sorted_positions()) == [1, grid.points_at_or_below(1.0), grid.size]


def test_bad_parameters_of_one_quantile():
    context, accountant = ledger_context()
    data = dpselect.QuantileData(np.arange(10, dtype=np.float64), (0.0, 10.0))

    def release(q=0.5, **fields):
        return lambda: dpselect.select_quantile(context, data, q, **{"range": (0.0, 10.0), "epsilon": 0.5,
                                                                     "backend": CPU, **fields})

    cases = [
        (release(q=-0.1), ("q", "(got -0.1)")),
        (release(q=1.5), ("q", "(got 1.5)")),
        (release(q=float("nan")), ("q", "(got nan)")),
        (release(epsilon=0.0), ("epsilon", "(got 0)")),
        (release(epsilon=-1.0), ("epsilon", "(got -1)")),
        (release(epsilon=float("inf")), ("epsilon", "(got inf)")),
        (release(max_points=9), ("max_points", "9")),
        (release(range=(0.0, 11.0)), ("range", "[0, 10]", "[0, 11]")),
        (release(epsilon=1e-13), ("epsilon",)),  # below the floating-point slack
        (release(mechanism=PERMUTE_AND_FLIP), ("mechanism", "permute_and_flip", "resolution")),
        (release(mechanism=dpselect.Mechanism.LAPLACE_NOISY_MAX), ("mechanism", "laplace-noisy-max")),
    ]
    for call, fragments in cases:
        expect_invalid(call, *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_parameters_of_several_quantiles():
    context, accountant = ledger_context()
    data = dpselect.QuantileData(np.arange(10, dtype=np.float64), (0.0, 10.0))

    def release(qs=(0.25, 0.75), **fields):
        return lambda: dpselect.select_quantiles(context, data, qs, **{"range": (0.0, 10.0), "epsilon": 0.5,
                                                                       "backend": CPU, **fields})

    zcdp = METHODS["zcdp"]
    cases = [
        (release(qs=[]), ("qs", "(got none)")),
        (release(qs=[0.5, 0.25]), ("qs[1]", "(got 0.25)")),
        (release(qs=[0.5, 0.5]), ("qs[1]", "(got 0.5)")),
        (release(qs=[0.5, 1.25]), ("qs[1]", "(got 1.25)")),
        (release(qs=np.array([-0.5, 0.5])), ("qs[0]", "(got -0.5)")),
        (release(method=zcdp), ("delta", "(got 0)")),
        (release(method=zcdp, delta=1.0), ("delta", "(got 1)")),
        (release(method=METHODS["joint"], delta=1e-6), ("delta", "(got 1e-06)")),
        (release(method=METHODS["recursive"], epsilon=0.0), ("epsilon", "(got 0)")),
        (release(method=METHODS["basic"], max_points=3), ("max_points", "3")),
        (release(method=METHODS["basic"], mechanism=PERMUTE_AND_FLIP), ("mechanism", "resolution")),
    ]
    for call, fragments in cases:
        expect_invalid(call, *fragments)
    params = dpselect.QuantilesParams(dpselect.QuantileRange(0.0, 10.0), 1.0)
    expect_invalid(lambda: dpselect.quantiles_rank_error_bound(params, [0.5], 0.0), "beta", "(got 0)")
    expect_invalid(lambda: dpselect.quantiles_rank_error_bound(params, [0.5, 0.1], 0.1), "qs[1]")
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_arrays_and_arguments_are_named():
    context, accountant = ledger_context()
    with pytest.raises(TypeError, match=r"values must hold real numbers \(got dtype complex128\)"):
        dpselect.QuantileData(np.arange(4) * 1j, (0.0, 4.0))
    with pytest.raises(TypeError, match=r"values must be numbers: .*\(got list\)"):
        dpselect.select_quantile(context, ["a", "b"], 0.5, range=(0.0, 4.0), epsilon=1.0)
    with pytest.raises(ValueError, match=r"values\[2\] is the integer -9007199254740993"):
        dpselect.QuantileData(np.array([1, 2, -(2**53) - 1]), (0.0, 4.0))
    with pytest.raises(ValueError, match="values must be 1-D"):
        dpselect.QuantileData(np.ones((2, 2)), (0.0, 4.0))
    with pytest.raises(ValueError, match="C-contiguous"):
        dpselect.QuantileData(np.ones(10)[::2], (0.0, 4.0))
    with pytest.raises(TypeError, match=r"range must be a dpselect.QuantileRange or a \(lower, upper\) pair"):
        dpselect.QuantileData(np.ones(3), 4.0)
    with pytest.raises(TypeError, match=r"qs must be a sequence of numbers in \[0, 1\] \(got str\)"):
        dpselect.select_quantiles(context, np.ones(3), "0.5", range=(0.0, 4.0), epsilon=1.0)
    with pytest.raises(ValueError, match=r"qs must be 1-D \(got shape \(1, 2\)\)"):
        dpselect.select_quantiles(context, np.ones(3), [[0.1, 0.2]], range=(0.0, 4.0), epsilon=1.0)
    with pytest.raises(TypeError, match="params or keyword arguments, not both"):
        dpselect.select_quantile(context, np.ones(3), 0.5, dpselect.QuantileParams(dpselect.QuantileRange(0, 4), 1.0),
                                 epsilon=1.0)
    with pytest.raises(TypeError, match=r"params must be a dpselect.QuantilesParams \(got QuantileParams\)"):
        dpselect.select_quantiles(context, np.ones(3), [0.5], dpselect.QuantileParams(dpselect.QuantileRange(0, 4),
                                                                                       1.0))
    expect_nothing_charged_or_drawn(context, accountant)


class CountedValues:
    """Values that count how often they are converted (prepared): an object with __array__."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        self.conversions = 0

    def __array__(self, dtype=None, copy=None):
        self.conversions += 1
        return self.values.astype(dtype) if dtype is not None else self.values.copy()


def test_levels_and_the_range_are_checked_before_the_values_are_prepared():
    context, accountant = ledger_context()
    values = CountedValues(np.arange(10))
    prepared = dpselect.QuantileData(values.values, (0.0, 10.0))
    fields = {"range": (0.0, 10.0), "epsilon": 0.5, "backend": CPU}

    def message(call):
        with pytest.raises(dpselect.InvalidArgument) as raised:
            call()
        return str(raised.value)

    # The same message (the library's) as for prepared data, and the values never converted.
    for q in (-0.1, 1.5, float("nan")):
        assert (message(lambda: dpselect.select_quantile(context, values, q, **fields))
                == message(lambda: dpselect.select_quantile(context, prepared, q, **fields)))
    for qs in ([], [0.5, 0.25], [0.5, 0.5], np.array([-0.5, 0.5])):
        assert (message(lambda: dpselect.select_quantiles(context, values, qs, **fields))
                == message(lambda: dpselect.select_quantiles(context, prepared, qs, **fields)))
    with pytest.raises(TypeError, match=r"range must be a dpselect.QuantileRange"):
        dpselect.QuantileData(values, 4.0)
    assert values.conversions == 0
    expect_nothing_charged_or_drawn(context, accountant)
    # Good levels: the values are prepared once per call.
    dpselect.select_quantiles(dpselect.Context.fixed_seed(1), values, [0.25, 0.75], **fields)
    assert values.conversions == 1


def test_a_budget_refusal_raises_budget_exceeded_and_draws_nothing():
    context, accountant = ledger_context()
    data = dpselect.QuantileData(np.arange(10, dtype=np.float64), (0.0, 10.0))
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.select_quantile(context, data, 0.5, range=(0.0, 10.0), epsilon=1.5)
    for method in METHODS.values():
        with pytest.raises(dpselect.BudgetExceeded):
            dpselect.select_quantiles(context, data, [0.1, 0.5, 0.9], range=(0.0, 10.0), epsilon=1.5, method=method,
                                      delta=1e-6 if method == METHODS["zcdp"] else 0.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_gpu_request_without_one_raises_backend_unavailable():
    if dpselect.gpu_usable():
        pytest.skip("a GPU is usable here")
    context, accountant = ledger_context()
    data = dpselect.QuantileData(np.arange(10, dtype=np.float64), (0.0, 10.0))
    with pytest.raises(dpselect.BackendUnavailable):
        dpselect.select_quantile(context, data, 0.5, range=(0.0, 10.0), epsilon=0.5, backend=dpselect.Backend.GPU)
    expect_nothing_charged_or_drawn(context, accountant)


# --- arrays, the GIL, reuse ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_array_reaches_the_library_without_a_copy(monkeypatch, dtype):
    values = public_values(1 << 16).astype(dtype)
    values.flags.writeable = False  # a read-only array is taken as it is
    seen = []
    checked = dpselect.quantiles.as_host_or_device

    def recording(array, name, ndim=1):
        where, checked_array = checked(array, name, ndim)
        seen.append(dpselect._core.host_data_address(checked_array))
        return where, checked_array

    monkeypatch.setattr(dpselect.quantiles, "as_host_or_device", recording)
    data = dpselect.QuantileData(values, (0.0, 100.0))
    assert seen == [values.ctypes.data]
    # Through DLPack as well: a host producer that is not a NumPy array.
    seen.clear()

    class HostProducer:
        def __dlpack__(self, **kwargs):
            return values.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return values.__dlpack_device__()

    through_dlpack = dpselect.QuantileData(HostProducer(), (0.0, 100.0))
    assert seen == [values.ctypes.data]
    assert np.array_equal(through_dlpack.sorted_positions(), data.sorted_positions())


def test_float32_and_float64_data_and_a_raw_array_give_the_same_release():
    values = np.round(public_values(5000), 2).astype(np.float32).astype(np.float64)  # exact in float32
    as_float64 = dpselect.QuantileData(values, (0.0, 100.0))
    as_float32 = dpselect.QuantileData(values.astype(np.float32), (0.0, 100.0))
    assert np.array_equal(as_float64.sorted_positions(), as_float32.sorted_positions())
    params = dpselect.QuantileParams(dpselect.QuantileRange(0.0, 100.0), 1.0, backend=CPU)
    picks = [dpselect.select_quantile(dpselect.Context.fixed_seed(5), data, 0.75, params).grid_index
             for data in (as_float64, as_float32, values)]
    assert picks[0] == picks[1] == picks[2]


def test_the_gil_is_released_while_sorting_and_releasing():
    values = public_values(1 << 23)
    assert_the_gil_is_released(lambda: dpselect.QuantileData(values, (0.0, 100.0)))
    data = dpselect.QuantileData(values, (0.0, 100.0))
    params = dpselect.QuantileParams(dpselect.QuantileRange(0.0, 100.0), 1.0, backend=CPU)
    assert_the_gil_is_released(lambda: [dpselect.select_quantile(dpselect.Context.fixed_seed(2), data, 0.5, params)
                                        for _ in range(4)])
    several = dpselect.QuantilesParams(dpselect.QuantileRange(0.0, 100.0), 1.0,
                                       method=dpselect.QuantilesMethod.INDEPENDENT_BASIC, backend=CPU)
    assert_the_gil_is_released(lambda: dpselect.select_quantiles(dpselect.Context.fixed_seed(2), data,
                                                                  [0.1, 0.5, 0.9], several))


# --- several quantiles: what each method spends -------------------------------------------------

def test_what_each_method_spends_and_returns():
    values = public_values(3000)
    data = dpselect.QuantileData(values, (0.0, 100.0))
    qs = [0.1, 0.3, 0.5, 0.7, 0.9]
    m = len(qs)
    for name, method in METHODS.items():
        delta = 1e-6 if name == "zcdp" else 0.0
        context, accountant = ledger_context(seed=3, budget=dpselect.PrivacyBound(10.0, 1e-5))
        release = dpselect.select_quantiles(context, data, qs, range=(0.0, 100.0), epsilon=1.0, method=method,
                                            delta=delta, max_points=10_000, backend=CPU)
        assert release.method == method and release.epsilon_spent == 1.0 and release.delta_spent == delta
        assert len(release.values) == m and release.values == sorted(release.values)
        assert release.values == [data.grid().point(i) for i in release.grid_indices]
        assert all(0.0 <= v <= 100.0 for v in release.values)
        assert accountant.release_count >= 1
        if name == "joint":
            assert (release.mechanisms, release.epsilon_per_mechanism, len(release.streams)) == (1, 1.0, 1)
        elif name == "basic":
            # Basic composition: m releases of epsilon / m (Dwork & Roth 2014, Thm 3.16).
            each = dpselect.split_evenly(1.0, m)
            assert (release.mechanisms, release.epsilon_per_mechanism, len(release.streams)) == (m, each, m)
        elif name == "zcdp":
            # Each exponential mechanism is eps^2/8-zCDP (Cesar & Rogers 2021): m of them at
            # epsilon_per_mechanism stay within (1, delta), and more than the basic split allows.
            assert release.mechanisms == m and len(release.streams) == m
            assert 1.0 / m < release.epsilon_per_mechanism
            kind = dpselect.ReleaseKind.EXPONENTIAL_MECHANISM
            assert release.epsilon_per_mechanism == dpselect.per_release_epsilon(m, 1.0, delta, kind)
        else:
            # Recursive splitting: every record reaches ceil(log2(m + 1)) = 3 mechanisms, each
            # counted twice when a record is replaced (Kaplan, Schnapp & Stemmer 2022, Thm 3.2).
            assert release.mechanisms == m and len(release.streams) == 1
            assert release.epsilon_per_mechanism == dpselect.split_evenly(1.0, 6)
        assert not release.slack.depends_on_data  # max_points makes the slack public


def test_several_quantiles_land_within_their_bound():
    # quantiles_rank_error_bound at beta = 1e-9: every method's rank errors stay within alpha plus
    # what the grid and ties force (JointExp: up to 2 (e_1 + ... + e_m) more); a failure with a
    # correct bound has probability below 1e-9 per method. The bound must also be small enough
    # to mean something here: under 1% of n.
    values = public_values(100_000)
    data = dpselect.QuantileData(values, (0.0, 100.0))
    qs = [0.1, 0.5, 0.9]
    forced = [dpselect.nonprivate_quantile_diagnostics(data, q).best_rank_error for q in qs]
    for name, method in METHODS.items():
        params = dpselect.QuantilesParams(dpselect.QuantileRange(0.0, 100.0), 10.0, method=method,
                                          delta=1e-6 if name == "zcdp" else 0.0, backend=CPU)
        bound = dpselect.quantiles_rank_error_bound(params, qs, 1e-9)
        assert bound < 0.01 * values.size, name
        release = dpselect.select_quantiles(dpselect.Context.fixed_seed(12), data, qs, params)
        for q, e, index in zip(qs, forced, release.grid_indices):
            error = dpselect.nonprivate_rank_error(data, index, q)
            assert error <= bound + e + (2 * sum(forced) if name == "joint" else 0.0), (name, q, error)


# --- reprs: what gets printed withholds what the data decide -----------------------------------

def test_reprs():
    value_range = dpselect.QuantileRange(-5.0, 5.0)
    assert repr(value_range) == "QuantileRange(lower=-5.0, upper=5.0)"
    grid = value_range.grid()
    assert repr(grid) == f"QuantileGrid(lower=-5.0, step={10.0 * 2.0**-40!r}, size={2**40 + 1})"
    params = dpselect.QuantileParams(value_range, 0.5, max_points=7)
    assert repr(params) == ("QuantileParams(range=QuantileRange(lower=-5.0, upper=5.0), epsilon=0.5, "
                            "neighbours=replace, max_points=7, backend=auto, mechanism=exponential)")
    several = dpselect.QuantilesParams(value_range, 1.0, method=dpselect.QuantilesMethod.INDEPENDENT_ZCDP, delta=1e-6)
    assert repr(several) == ("QuantilesParams(method=zcdp, delta=1e-06, base=QuantileParams(range=QuantileRange("
                             "lower=-5.0, upper=5.0), epsilon=1.0, neighbours=replace, max_points=0, backend=auto, "
                             "mechanism=exponential))")
    values = public_values(500, scale=10.0) - 5.0
    data = dpselect.QuantileData(values, value_range)
    # The data's repr says nothing computed from the data (not even how many there are).
    assert repr(data) == "QuantileData(range=QuantileRange(lower=-5.0, upper=5.0), on_device=False)"
    context = dpselect.Context.fixed_seed(3)
    private_n = dpselect.select_quantile(context, data, 0.5, range=value_range, epsilon=1.0, neighbours=ADD_REMOVE)
    assert private_n.report.slack.depends_on_data  # its slack reveals n
    assert repr(private_n).startswith(f"QuantileRelease(value={private_n.value!r}, grid_index={private_n.grid_index}"
                                      ", report=SelectionReport(mechanism=exponential")
    assert "slack=FloatingPointSlack(<withheld: computed from the data; give a public bound>)" in repr(private_n)
    assert repr(private_n.report.slack.epsilon) not in repr(private_n)
    public_n = dpselect.select_quantile(context, data, 0.5, range=value_range, epsilon=1.0, neighbours=ADD_REMOVE,
                                        max_points=1000)
    assert f"slack=FloatingPointSlack(epsilon={public_n.report.slack.epsilon!r}" in repr(public_n)
    release = dpselect.select_quantiles(context, data, [0.25, 0.75], range=value_range, epsilon=1.0,
                                        neighbours=ADD_REMOVE, method=dpselect.QuantilesMethod.INDEPENDENT_BASIC)
    assert repr(release).startswith(f"QuantilesRelease(values={release.values!r}, grid_indices="
                                    f"{release.grid_indices!r}, method=basic, epsilon_spent=1.0, delta_spent=0.0, "
                                    f"epsilon_per_mechanism={dpselect.split_evenly(1.0, 2)!r}, mechanisms=2, "
                                    "slack=FloatingPointSlack(<withheld")
    best = dpselect.nonprivate_quantile_diagnostics(data, 0.5)
    assert repr(best).startswith("QuantileDiagnostics(NOT PRIVATE, best_grid_index=")


# --- the calculators and the diagnostics ----------------------------------------------------------

def test_rank_error_bounds_follow_the_formula():
    # Dwork & Roth 2014, Thm 3.11 over M = 2^40 + 1 grid points: (2 Delta / eps)(ln M + ln(1/beta)).
    value_range = dpselect.QuantileRange(0.0, 1.0)
    log_grid = math.log(2.0**40 + 1)
    for neighbours, q, sensitivity in ((REPLACE, 0.5, 1.0), (ADD_REMOVE, 0.2, 0.8)):
        params = dpselect.QuantileParams(value_range, 0.5, neighbours=neighbours)
        expected = 2 * sensitivity / 0.5 * (log_grid + math.log(1 / 0.01))
        assert math.isclose(dpselect.quantile_rank_error_bound(params, q, 0.01), expected, rel_tol=1e-12)
    # m independent releases at eps / m, a union bound over them: beta / m each.
    basic = dpselect.QuantilesParams(value_range, 1.0, method=dpselect.QuantilesMethod.INDEPENDENT_BASIC)
    expected = 2 * 1.0 / (1.0 / 4) * (log_grid + math.log(4 / 0.01))
    assert math.isclose(dpselect.quantiles_rank_error_bound(basic, np.array([0.2, 0.4, 0.6, 0.8]), 0.01), expected,
                        rel_tol=1e-12)
    for method in METHODS.values():
        params = dpselect.QuantilesParams(value_range, 1.0, method=method,
                                          delta=1e-6 if method == METHODS["zcdp"] else 0.0)
        tight = dpselect.quantiles_rank_error_bound(params, [0.25, 0.5, 0.75], 0.1)
        assert 0 < tight < dpselect.quantiles_rank_error_bound(params, [0.25, 0.5, 0.75], 0.001)


def test_the_single_quantile_bound_holds_empirically():
    # With probability >= 1 - beta the rank error is <= alpha + e (e: what the grid and ties force).
    # The test fails when the exact lower confidence bound on the rate of larger errors
    # (Clopper & Pearson 1934, one-sided at 1e-6) is above beta: for a correct bound that happens
    # with probability below 1e-6. The bound is loose (it counts all 2^40 grid points): a correct
    # mechanism exceeds it in none of the releases, while one that ignored the data (uniform over
    # the grid: rank error |U - n/2| with U uniform over 0..n) would exceed it in about 88% of them.
    values = public_values(20_000)
    data = dpselect.QuantileData(values, (0.0, 100.0))
    params = dpselect.QuantileParams(dpselect.QuantileRange(0.0, 100.0), 0.05, backend=CPU)
    beta = 0.2
    alpha = dpselect.quantile_rank_error_bound(params, 0.5, beta)
    assert alpha < 0.2 * values.size
    forced = dpselect.nonprivate_quantile_diagnostics(data, 0.5).best_rank_error
    context = dpselect.Context.fixed_seed(17)
    releases = 400
    errors = [dpselect.nonprivate_rank_error(data, dpselect.select_quantile(context, data, 0.5, params).grid_index, 0.5)
              for _ in range(releases)]
    exceeded = sum(error > alpha + forced for error in errors)
    assert dpselect.audit.clopper_pearson(exceeded, releases, 1e-6).lower <= beta, f"{exceeded} of {releases}"
    assert max(errors) > 1  # epsilon 0.05 is noisy: the releases are not all the exact median


def test_diagnostics_equal_brute_force():
    values = public_values(3001, scale=50.0)
    value_range = dpselect.QuantileRange(0.0, 50.0)
    data = dpselect.QuantileData(values, value_range)
    assert len(data) == data.size == values.size and data.range.lower == 0.0 and not data.on_device
    data.range.lower = 5.0  # a copy: the prepared data keep their range
    assert data.range.lower == 0.0
    grid = data.grid()
    clipped = np.clip(values, 0.0, 50.0)
    # positions by the grid's own function, and by exact arithmetic on a sample
    positions = data.sorted_positions()
    assert positions.dtype == np.uint64 and list(positions) == sorted(grid.points_at_or_below(v) for v in clipped)
    sample = clipped[:40]
    assert sorted(grid.points_at_or_below(v) for v in sample) == exact_positions(sample, grid)
    in_order = np.sort(clipped)

    def rank_error(index, q):
        # Ties counted: the distance from q n to [#{x < t}, #{x <= t}] (0 inside).
        t = grid.point(index)
        below = int(np.searchsorted(in_order, t, side="left"))
        at_or_below = int(np.searchsorted(in_order, t, side="right"))
        return max(0.0, below - q * values.size, q * values.size - at_or_below)

    for q in (0.0, 0.25, 0.5, 0.999, 1.0):
        best = dpselect.nonprivate_quantile_diagnostics(data, q)
        for index in (0, 1, best.best_grid_index, grid.size // 3, grid.size - 1):
            assert dpselect.nonprivate_rank_error(data, index, q) == rank_error(index, q)
        # The smallest error over every grid point: the counts change only at the data's positions,
        # so the points at and just below them (and the ends) take every value there is.
        candidates = {0, grid.size - 1} | {int(p) - 1 for p in positions} | {int(p) for p in positions if p < grid.size}
        assert best.best_rank_error == min(rank_error(index, q) for index in candidates)
        assert dpselect.nonprivate_rank_error(data, best.best_grid_index, q) == best.best_rank_error
    with pytest.raises(IndexError):
        grid.point(grid.size)


# --- device arrays (DLPack): skipped without CuPy or PyTorch and a usable GPU -----------------

def test_cupy_device_data_equal_the_host_path():
    cupy = pytest.importorskip("cupy")
    if not dpselect.gpu_usable():
        pytest.skip("no usable GPU")
    host = public_values(1 << 20)
    for dtype in (np.float32, np.float64):
        on_device = dpselect.QuantileData(cupy.asarray(host.astype(dtype)), (0.0, 100.0))
        on_host = dpselect.QuantileData(host.astype(dtype), (0.0, 100.0))
        assert on_device.on_device and not on_host.on_device
        assert np.array_equal(on_device.sorted_positions(), on_host.sorted_positions())
        # The same key gives the same release whichever side holds the data.
        gpu = dpselect.select_quantile(dpselect.Context.fixed_seed(6), on_device, 0.25, range=(0.0, 100.0),
                                       epsilon=1.0)
        cpu = dpselect.select_quantile(dpselect.Context.fixed_seed(6), on_host, 0.25, range=(0.0, 100.0),
                                       epsilon=1.0, backend=CPU)
        assert gpu.grid_index == cpu.grid_index and gpu.report.executed_on == dpselect.ExecutedOn.GPU
    with pytest.raises(dpselect.InvalidArgument, match=r"data\[3\]"):
        dpselect.QuantileData(cupy.asarray([1.0, 2.0, 3.0, np.nan]), (0.0, 4.0))


def test_torch_cuda_data_equal_the_host_path():
    torch = pytest.importorskip("torch")
    if not (torch.cuda.is_available() and dpselect.gpu_usable()):
        pytest.skip("no usable GPU")
    host = public_values(1 << 18)
    device = dpselect.QuantileData(torch.from_numpy(host).cuda(), (0.0, 100.0))
    assert np.array_equal(device.sorted_positions(), dpselect.QuantileData(host, (0.0, 100.0)).sorted_positions())
    gpu = dpselect.select_quantiles(dpselect.Context.fixed_seed(4), device, [0.1, 0.9], range=(0.0, 100.0),
                                    epsilon=1.0, method=dpselect.QuantilesMethod.INDEPENDENT_BASIC)
    cpu = dpselect.select_quantiles(dpselect.Context.fixed_seed(4), host, [0.1, 0.9], range=(0.0, 100.0),
                                    epsilon=1.0, method=dpselect.QuantilesMethod.INDEPENDENT_BASIC, backend=CPU)
    assert gpu.grid_indices == cpu.grid_indices
