# SPDX-License-Identifier: Apache-2.0
"""Private pricing from Python: the same prices as the C++ library (the dpselect command) for the
same key, the exponential mechanism's exact distribution over lists, grids and ranges, the
library's messages for bad input with nothing charged, and the diagnostics against brute force.

Distribution tests compare each cell's count with its exact expectation by a normal
approximation of the binomial; a cell fails beyond 5 standard deviations. Per cell the
false-failure probability is about 5.7e-7 (two-sided normal tail at 5 sigma; every expected
count here is large enough for the approximation), so a test of c cells fails by chance with
probability below c * 5.7e-7. With the fixed seeds below the outcome is deterministic: a failure
means the distribution changed.
"""

import json
import math
import subprocess

import numpy as np
import pytest

import dpselect
from support import assert_the_gil_is_released, ledger_context

Z_LIMIT = 5.0
NEIGHBOURS = {
    "add-remove": dpselect.BidderNeighbours.ADD_OR_REMOVE_BIDDER,
    "change-bid": dpselect.BidderNeighbours.CHANGE_ONE_BID,
}


def public_bids(n):
    # Data-free bids with many ties, spread over (0, 100].
    return ((np.arange(1, n + 1, dtype=np.uint64) * 2654435761) % 1000 + 1).astype(np.float64) / 10




def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    pick = dpselect.select_price(context, np.array([1.0, 2.0]), dpselect.PriceGrid(0.5, 3.0, 0.5), epsilon=0.1,
                                 backend=dpselect.Backend.CPU)
    assert pick.report.stream == 0  # the refused calls drew no stream


def expect_invalid(call, *fragments):
    with pytest.raises(dpselect.InvalidArgument) as raised:
        call()
    for fragment in fragments:
        assert fragment in str(raised.value), f"message '{raised.value}' lacks '{fragment}'"


def expect_counts(counts, probabilities, releases):
    for cell, (count, p) in enumerate(zip(counts, probabilities)):
        sd = math.sqrt(releases * p * (1.0 - p))
        z = (count - releases * p) / sd if sd > 0 else float(count != releases * p) * math.inf
        assert abs(z) < Z_LIMIT, f"cell {cell}: {count} against {releases * p:.1f} expected (z = {z:.2f})"


def normalized(log_weights):
    top = max(log_weights)
    weights = [math.exp(w - top) for w in log_weights]
    total = math.fsum(weights)
    return [w / total for w in weights]


def exponential_scale(epsilon, largest_price, neighbours):
    # Revenue has sensitivity Delta = the largest price and is monotone between add/remove-bidder
    # neighbours: eps/Delta there, eps/(2 Delta) otherwise (Dwork & Roth 2014, Thm 3.10 and its remark).
    monotone = neighbours == dpselect.BidderNeighbours.ADD_OR_REMOVE_BIDDER
    return epsilon / (largest_price if monotone else 2.0 * largest_price)


def exact_revenue(sorted_bids, price):
    return price * sum(1 for bid in sorted_bids if bid >= price)


# --- the same key gives the same price as the C++ library -------------------------------------

def run_price(cli, *args):
    out = subprocess.run([cli, "price", *args, "--backend", "cpu", "--json"], check=True, capture_output=True,
                         text=True).stdout
    return [(release["index"], release["price"]) for release in json.loads(out)["releases"]]


@pytest.mark.parametrize("neighbours", sorted(NEIGHBOURS))
def test_grid_prices_equal_the_command(cli, tmp_path, neighbours):
    bids = public_bids(50)
    path = tmp_path / "bids.f64"
    bids.tofile(path)
    # 10^4 prices > 64 * (50 + 1): the automatic sampler (the command's default) takes bid intervals.
    grid = dpselect.PriceGrid(0.01, 100.0, 0.01)
    for sampler, option in ((dpselect.GridSampler.AUTOMATIC, "auto"), (dpselect.GridSampler.PER_PRICE_NOISE,
                                                                       "per-price")):
        expected = run_price(cli, "--bids", str(path), "--epsilon", "0.8", "--grid", "0.01:100:0.01", "--neighbours",
                             neighbours, "--grid-sampler", option, "--seed", "31", "--repeat", "3")
        context = dpselect.Context.fixed_seed(31)
        bids_once = dpselect.Bids(bids)
        got = []
        for _ in range(3):
            pick = dpselect.select_price(context, bids_once, grid, epsilon=0.8, neighbours=NEIGHBOURS[neighbours],
                                         grid_sampler=sampler, backend=dpselect.Backend.CPU)
            got.append((pick.candidate, pick.price))
        assert got == expected, option
        assert pick.sampler == (dpselect.GridSampler.BID_INTERVALS if sampler == dpselect.GridSampler.AUTOMATIC
                                else dpselect.GridSampler.PER_PRICE_NOISE)
        assert pick.sampler_depends_on_data == (sampler == dpselect.GridSampler.AUTOMATIC)


@pytest.mark.parametrize("neighbours", sorted(NEIGHBOURS))
@pytest.mark.parametrize("mechanism,name", [(dpselect.Mechanism.EXPONENTIAL, "exponential"),
                                            (dpselect.Mechanism.PERMUTE_AND_FLIP, "permute-and-flip"),
                                            (dpselect.Mechanism.LAPLACE_NOISY_MAX, "laplace")])
def test_list_prices_equal_the_command(cli, tmp_path, neighbours, mechanism, name):
    bids = public_bids(40)
    prices = np.linspace(0.5, 100.0, 397)
    bids.tofile(tmp_path / "bids.f64")
    prices.tofile(tmp_path / "prices.f64")
    expected = run_price(cli, "--bids", str(tmp_path / "bids.f64"), "--epsilon", "0.3", "--prices",
                         str(tmp_path / "prices.f64"), "--neighbours", neighbours, "--mechanism", name, "--seed", "7",
                         "--repeat", "3")
    context = dpselect.Context.fixed_seed(7)
    params = dpselect.PricingParams(0.3, neighbours=NEIGHBOURS[neighbours], mechanism=mechanism,
                                    backend=dpselect.Backend.CPU)
    # Raw bids: select_price builds the Bids itself.
    got = [(pick.candidate, pick.price) for pick in (dpselect.select_price(context, bids, prices, params)
                                                     for _ in range(3))]
    assert got == expected


@pytest.mark.parametrize("neighbours", sorted(NEIGHBOURS))
def test_range_prices_equal_the_command(cli, tmp_path, neighbours):
    bids = public_bids(60)
    bids.tofile(tmp_path / "bids.f64")
    expected = run_price(cli, "--bids", str(tmp_path / "bids.f64"), "--epsilon", "1.5", "--range", "0:100",
                         "--neighbours", neighbours, "--max-bidders", "1000", "--seed", "12", "--repeat", "3")
    context = dpselect.Context.fixed_seed(12)
    bids_once = dpselect.Bids(bids)
    got = []
    for _ in range(3):
        pick = dpselect.select_price(context, bids_once, dpselect.PriceRange(0.0, 100.0), epsilon=1.5,
                                     neighbours=NEIGHBOURS[neighbours], max_bidders=1000, backend=dpselect.Backend.CPU)
        got.append((pick.candidate, pick.price))
        assert pick.sampler == dpselect.GridSampler.BID_INTERVALS
        assert not pick.report.slack.depends_on_data  # max_bidders makes the slack public
    assert got == expected


# --- the exponential mechanism's exact distribution -------------------------------------------

@pytest.mark.parametrize("neighbours", list(NEIGHBOURS.values()))
def test_list_prices_follow_the_exponential_mechanism(neighbours):
    bids = [1.0, 5.0, 2.0, 4.0, 3.0]
    prices = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    epsilon = 1.0
    scale = exponential_scale(epsilon, max(prices), neighbours)
    probabilities = normalized([scale * exact_revenue(sorted(bids), p) for p in prices])
    context = dpselect.Context.fixed_seed(2025 + neighbours.value)
    params = dpselect.PricingParams(epsilon, neighbours=neighbours, backend=dpselect.Backend.CPU)
    bids_once, price_array = dpselect.Bids(np.array(bids)), np.array(prices)
    releases = 100_000
    counts = np.bincount([dpselect.select_price(context, bids_once, price_array, params).candidate
                          for _ in range(releases)], minlength=len(prices))
    expect_counts(counts, probabilities, releases)


@pytest.mark.parametrize("sampler", [dpselect.GridSampler.PER_PRICE_NOISE, dpselect.GridSampler.BID_INTERVALS])
def test_grid_samplers_follow_the_exponential_mechanism(sampler):
    # Bids between grid points, so the bid-interval sampler's sums over intervals are exercised.
    bids = sorted([0.7, 1.3, 2.2, 2.9, 2.9])
    grid = dpselect.PriceGrid(0.5, 3.0, 0.5)
    prices = [0.5 * (i + 1) for i in range(6)]
    neighbours = dpselect.BidderNeighbours.CHANGE_ONE_BID
    scale = exponential_scale(2.0, prices[-1], neighbours)
    probabilities = normalized([scale * exact_revenue(bids, p) for p in prices])
    context = dpselect.Context.fixed_seed(99)
    params = dpselect.PricingParams(2.0, neighbours=neighbours, grid_sampler=sampler, backend=dpselect.Backend.CPU)
    bids_once = dpselect.Bids(np.array(bids))
    releases = 100_000
    picks = [dpselect.select_price(context, bids_once, grid, params) for _ in range(releases)]
    assert all(pick.price == prices[pick.candidate] for pick in picks[:100])
    expect_counts(np.bincount([pick.candidate for pick in picks], minlength=len(prices)), probabilities, releases)


@pytest.mark.parametrize("neighbours", list(NEIGHBOURS.values()))
def test_range_prices_follow_the_continuous_exponential_mechanism(neighbours):
    # Cells: the intervals between bids, where the revenue is price * n_j with n_j bids at or
    # above the price; the density exp(s n_j p) integrates in closed form to
    # (e^{s n_j hi} - e^{s n_j lo}) / (s n_j), or hi - lo where n_j = 0. The sampler runs on the
    # grid of 2^40 + 1 prices: its cell masses differ from these integrals by a relative 1e-11
    # (the Riemann sum's error at step 3 * 2^-40), far below what 10^5 releases resolve.
    bids = [0.7, 1.3, 2.2, 2.9]
    low, high = 0.0, 3.0
    edges = [low, *bids, high]
    epsilon = 2.0
    scale = exponential_scale(epsilon, high, neighbours)
    log_masses = []
    for j in range(len(edges) - 1):
        at_least = len(bids) - j
        lo, hi = edges[j], edges[j + 1]
        if at_least == 0:
            log_masses.append(math.log(hi - lo))
        else:
            rate = scale * at_least
            log_masses.append(rate * hi + math.log(-math.expm1(-rate * (hi - lo))) - math.log(rate))
    probabilities = normalized(log_masses)
    context = dpselect.Context.fixed_seed(4 + neighbours.value)
    params = dpselect.PricingParams(epsilon, neighbours=neighbours, backend=dpselect.Backend.CPU)
    bids_once, price_range = dpselect.Bids(np.array(bids)), dpselect.PriceRange(low, high)
    releases = 100_000
    chosen = np.array([dpselect.select_price(context, bids_once, price_range, params).price for _ in range(releases)])
    assert chosen.min() >= low and chosen.max() <= high
    # Cell j holds the prices in (b_{j-1}, b_j]: searchsorted(side="left") is that j.
    counts = np.bincount(np.searchsorted(np.array(bids), chosen, side="left"), minlength=len(bids) + 1)
    expect_counts(counts, probabilities, releases)


# --- bad input: the library's exception and message, nothing charged -------------------------

@pytest.mark.parametrize("bids,fragments", [
    (np.array([], dtype=np.float64), ("bids", "size 0")),
    (np.array([1.0, -0.5]), ("bids[1]", "(got -0.5)")),
    (np.array([np.nan]), ("bids[0]", "(got nan)")),
    (np.array([2.0, 3.0, np.inf]), ("bids[2]", "(got inf)")),
])
def test_bad_bids(bids, fragments):
    expect_invalid(lambda: dpselect.Bids(bids), *fragments)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.select_price(context, bids, dpselect.PriceGrid(0.5, 3.0, 0.5), epsilon=0.5),
                   *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


@pytest.mark.parametrize("grid,fragments", [
    ((-1.0, 2.0, 0.5), ("grid min", "(got -1)")),
    ((2.0, 2.0, 0.5), ("grid max", "(got 2)")),
    ((3.0, 2.0, 0.5), ("grid max", "(got 2)")),
    ((0.0, 2.0, 0.0), ("grid step", "(got 0)")),
    ((0.0, 2.0, -0.1), ("grid step", "(got -0.1)")),
    ((0.0, 2.0, float("nan")), ("grid step", "(got nan)")),
    ((0.0, 1e6, 1e-12), ("grid step", "2^-50")),
])
def test_bad_grids(grid, fragments):
    expect_invalid(lambda: dpselect.PriceGrid(*grid).validate(), *fragments)
    expect_invalid(lambda: dpselect.PriceGrid(*grid).size(), *fragments)
    context, accountant = ledger_context()
    expect_invalid(lambda: dpselect.select_price(context, np.array([1.0, 2.0]), dpselect.PriceGrid(*grid),
                                                 epsilon=0.5), *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_prices_and_parameters():
    context, accountant = ledger_context()
    bids = dpselect.Bids(np.array([1.0, 2.0]))
    grid = dpselect.PriceGrid(0.5, 3.0, 0.5)
    cpu = dpselect.Backend.CPU
    cases = [
        (lambda: dpselect.select_price(context, bids, np.array([], dtype=np.float64), epsilon=1.0, backend=cpu),
         ("prices", "size 0")),
        (lambda: dpselect.select_price(context, bids, np.array([1.0, np.nan]), epsilon=1.0, backend=cpu),
         ("prices[1]", "nan")),
        (lambda: dpselect.select_price(context, bids, np.array([0.0, 0.0]), epsilon=1.0, backend=cpu),
         ("largest price", "(got 0)")),
        (lambda: dpselect.select_price(context, bids, np.array([1.0, 1e300]), epsilon=1.0, backend=cpu),
         ("largest price", "2^960")),
        (lambda: dpselect.select_price(context, bids, grid, epsilon=0.0, backend=cpu), ("epsilon", "(got 0)")),
        (lambda: dpselect.select_price(context, bids, dpselect.PriceGrid(0.0, 1.0, 2.0), epsilon=1.0, backend=cpu),
         ("grid's largest price", "(got 0)")),
        (lambda: dpselect.select_price(context, bids, grid, epsilon=1.0, max_bidders=1, backend=cpu),
         ("max_bidders", "1")),
        (lambda: dpselect.revenue_shortfall_bound(dpselect.PricingParams(1.0), 10.0, 1000, -1.0), ("t", "(got -1)")),
    ]
    for call, fragments in cases:
        expect_invalid(call, *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_ranges():
    context, accountant = ledger_context()
    bids = dpselect.Bids(np.array([1.0, 2.0]))

    def price_range(low, high, **fields):
        return lambda: dpselect.select_price(context, bids, dpselect.PriceRange(low, high),
                                             **{"epsilon": 1.0, "backend": dpselect.Backend.CPU, **fields})

    cases = [
        (price_range(-1.0, 2.0), ("range min", "-1")),
        (price_range(float("nan"), 2.0), ("range min", "nan")),
        (price_range(2.0, 2.0), ("range max", "2")),
        (price_range(0.0, float("inf")), ("range max", "inf")),
        (price_range(0.0, 2.0**970), ("range max", "2^960")),
        (price_range(0.0, 2.0, mechanism=dpselect.Mechanism.PERMUTE_AND_FLIP), ("mechanism", "permute")),
        (price_range(0.0, 2.0, backend=dpselect.Backend.GPU), ("backend", "Gpu")),
        (price_range(0.0, 2.0, epsilon=0.0), ("epsilon", "0")),
        (price_range(0.0, 2.0, max_bidders=1), ("max_bidders", "1")),
        (lambda: dpselect.PriceRange(2.0, 1.0).grid(), ("range max", "1")),
    ]
    for call, fragments in cases:
        expect_invalid(call, *fragments)
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_arrays_and_arguments_are_named():
    context, accountant = ledger_context()
    grid = dpselect.PriceGrid(0.5, 3.0, 0.5)
    with pytest.raises(TypeError, match=r"bids must hold real numbers \(got dtype complex128\)"):
        dpselect.Bids(np.ones(3, dtype=np.complex128))
    with pytest.raises(TypeError, match=r"bids must be numbers: .*\(got list\)"):
        dpselect.select_price(context, ["one", "two"], grid, epsilon=1.0)
    with pytest.raises(ValueError, match=r"bids\[1\] is the integer 9007199254740993"):
        dpselect.select_price(context, [1, 2**53 + 1], grid, epsilon=1.0)
    with pytest.raises(ValueError, match="bids must be 1-D"):
        dpselect.Bids(np.ones((2, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        dpselect.Bids(np.ones(10)[::2])
    with pytest.raises(TypeError, match=r"PriceGrid, a PriceRange or a 1-D array of prices \(got str\)"):
        dpselect.select_price(context, np.ones(3), "1.0, 2.0", epsilon=1.0)
    with pytest.raises(TypeError, match=r"PriceGrid, a PriceRange or a 1-D array of prices \(got float\)"):
        dpselect.select_price(context, np.ones(3), 2.0, epsilon=1.0)
    with pytest.raises(TypeError, match=r"prices must hold real numbers \(got dtype complex128\)"):
        dpselect.select_price(context, np.ones(3), np.arange(1, 4) * 1j, epsilon=1.0)
    with pytest.raises(TypeError, match="params or keyword arguments, not both"):
        dpselect.select_price(context, np.ones(3), grid, dpselect.PricingParams(1.0), epsilon=1.0)
    with pytest.raises(TypeError, match=r"params must be a dpselect.PricingParams \(got SelectionParams\)"):
        dpselect.select_price(context, np.ones(3), grid, dpselect.SelectionParams(1.0, 1.0))
    expect_nothing_charged_or_drawn(context, accountant)


class CountedBids:
    """Bids that count how often they are converted (then validated and sorted): an object with
    __array__."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        self.conversions = 0

    def __array__(self, dtype=None, copy=None):
        self.conversions += 1
        return self.values.astype(dtype) if dtype is not None else self.values.copy()


def test_the_prices_are_checked_before_the_bids_are_sorted():
    context, accountant = ledger_context()
    bids = CountedBids([5.0, 1.0, 3.0])
    for prices, error, message in [
        ("1.0, 2.0", TypeError, r"prices must be a PriceGrid, a PriceRange or a 1-D array of prices \(got str\)"),
        ({"a": 1.0}, TypeError, r"\(got dict\)"),
        (np.arange(1, 4) * 1j, TypeError, r"prices must hold real numbers"),
        ([1, 2**53 + 1], ValueError, r"prices\[1\] is the integer"),
        (np.ones((2, 2)), ValueError, r"prices must be 1-D"),
    ]:
        with pytest.raises(error, match=message):
            dpselect.select_price(context, bids, prices, epsilon=1.0)
        with pytest.raises(error, match=message):
            dpselect.nonprivate_optimum(bids, prices)
    assert bids.conversions == 0
    expect_nothing_charged_or_drawn(context, accountant)
    assert dpselect.nonprivate_optimum(bids, [1.0, 3.0]).price == 3.0 and bids.conversions == 1


def test_a_budget_refusal_raises_budget_exceeded_and_draws_nothing():
    context, accountant = ledger_context()
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.select_price(context, np.ones(3), dpselect.PriceRange(0.0, 2.0), epsilon=1.5)
    expect_nothing_charged_or_drawn(context, accountant)


# --- Bids, grids and the diagnostics ----------------------------------------------------------

def test_bids_accept_a_read_only_array_and_are_sorted_once():
    raw = np.array([3.0, -0.0, 5.0, 1.0, 5.0])
    raw.flags.writeable = False  # a read-only array is accepted as it is
    bids = dpselect.Bids(raw)
    assert len(bids) == bids.size == 5
    view = bids.sorted
    assert list(view) == [0.0, 1.0, 3.0, 5.0, 5.0] and not np.signbit(view[0])
    assert not view.flags.writeable
    del bids  # the view keeps the bids alive
    assert list(view) == [0.0, 1.0, 3.0, 5.0, 5.0]


def test_revenues_equal_revenue_and_brute_force():
    values = public_bids(300)
    bids = dpselect.Bids(values)
    prices = np.concatenate([np.linspace(0.0, 101.0, 1000), values[:50], [np.inf]])
    revenues = bids.revenues(prices)
    assert revenues.dtype == np.float64 and revenues.shape == prices.shape
    expected = [p * float(np.count_nonzero(values >= p)) for p in prices[:-1]]
    assert list(revenues[:-1]) == expected
    assert [bids.revenue(p) for p in prices[:-1]] == expected
    assert [bids.count_at_least(p) for p in prices[:5]] == [np.count_nonzero(values >= p) for p in prices[:5]]
    assert np.isnan(revenues[-1])  # inf * 0 bids, as in Bids.revenue
    # Other dtypes are converted once with numpy.asarray(prices, dtype=numpy.float64).
    as_float32 = prices[:-1].astype(np.float32)
    np.testing.assert_array_equal(bids.revenues(as_float32), bids.revenues(as_float32.astype(np.float64)))
    assert list(bids.revenues(list(prices[:-1]))) == expected


def test_grids_and_ranges():
    grid = dpselect.PriceGrid(0.0, 1.0, 0.25)
    assert grid.size() == 5 and [grid.price(i) for i in range(5)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    # 0.1 + 2 * 0.1 rounds to 0.30000000000000004 > 0.3, so the grid stops at 0.2.
    assert dpselect.PriceGrid(0.1, 0.3, 0.1).size() == 2
    assert dpselect.PriceGrid(1.0, 1e10, 1.0).size() == 10_000_000_000
    assert repr(grid) == "PriceGrid(min=0.0, max=1.0, step=0.25)"
    price_range = dpselect.PriceRange(0.0, 3.0)
    assert repr(price_range) == "PriceRange(min=0.0, max=3.0)"
    assert price_range.grid().step == 3.0 * 2.0**-40 and price_range.grid().size() == 2**40 + 1
    params = dpselect.PricingParams(0.5, max_bidders=7)
    assert repr(params) == ("PricingParams(epsilon=0.5, neighbours=add-remove, max_bidders=7, mechanism=exponential, "
                            "backend=auto, grid_sampler=per-price)")


def test_grid_sampler_choice():
    factor = dpselect.BID_INTERVALS_GRID_FACTOR
    automatic = dpselect.PricingParams(1.0, grid_sampler=dpselect.GridSampler.AUTOMATIC)
    # Bid intervals once the grid has more than factor * (bidders + 1) prices.
    assert dpselect.resolve_grid_sampler(automatic, factor * 11, 10) == dpselect.GridSampler.PER_PRICE_NOISE
    assert dpselect.resolve_grid_sampler(automatic, factor * 11 + 1, 10) == dpselect.GridSampler.BID_INTERVALS
    # Without max_bidders the choice reads the private number of bids: not public.
    assert dpselect.public_grid_sampler(automatic, 10**9) is None
    automatic.max_bidders = 10
    assert dpselect.public_grid_sampler(automatic, factor * 11 + 1) == dpselect.GridSampler.BID_INTERVALS
    automatic.mechanism = dpselect.Mechanism.LAPLACE_NOISY_MAX
    assert dpselect.public_grid_sampler(automatic, 10**9) == dpselect.GridSampler.PER_PRICE_NOISE
    fixed = dpselect.PricingParams(1.0, grid_sampler=dpselect.GridSampler.BID_INTERVALS)
    assert dpselect.resolve_grid_sampler(fixed, 2, 10**6) == dpselect.GridSampler.BID_INTERVALS


def test_revenue_shortfall_bound_formula():
    # Dwork & Roth 2014, Thm 3.11: (2 Delta/eps)(ln |R| + t), Delta/eps between add/remove neighbours.
    params = dpselect.PricingParams(0.5, neighbours=dpselect.BidderNeighbours.CHANGE_ONE_BID)
    assert math.isclose(dpselect.revenue_shortfall_bound(params, 10.0, 1000, 3.0),
                        2 * 10.0 / 0.5 * (math.log(1000.0) + 3.0), rel_tol=1e-15)
    params.neighbours = dpselect.BidderNeighbours.ADD_OR_REMOVE_BIDDER
    assert math.isclose(dpselect.revenue_shortfall_bound(params, 10.0, 1000, 3.0),
                        10.0 / 0.5 * (math.log(1000.0) + 3.0), rel_tol=1e-15)


def test_nonprivate_optimum_of_every_candidate_kind():
    values = public_bids(200)
    bids = dpselect.Bids(values)
    prices = np.linspace(0.3, 99.0, 500)
    revenues = [p * np.count_nonzero(values >= p) for p in prices]
    best = dpselect.nonprivate_optimum(bids, prices)
    assert (best.candidate, best.price, best.revenue) == (int(np.argmax(revenues)), prices[np.argmax(revenues)],
                                                          max(revenues))
    grid = dpselect.PriceGrid(0.25, 99.0, 0.25)
    grid_revenues = [grid.price(i) * np.count_nonzero(values >= grid.price(i)) for i in range(grid.size())]
    best = dpselect.nonprivate_optimum(values, grid)  # a raw array is validated into Bids
    assert (best.candidate, best.revenue) == (int(np.argmax(grid_revenues)), max(grid_revenues))
    assert best.price == grid.price(best.candidate)
    # Over a range the best price is a bid inside it or its max.
    price_range = dpselect.PriceRange(5.0, 80.0)
    candidates = [b for b in values if 5.0 <= b <= 80.0] + [80.0]
    best_revenue = max(p * np.count_nonzero(values >= p) for p in candidates)
    best = dpselect.nonprivate_optimum(bids, price_range)
    assert best.revenue == best_revenue
    assert price_range.grid().price(best.candidate) <= best.price < price_range.grid().price(best.candidate + 1)
    assert repr(best).startswith("NonprivateOptimum(price=")


def test_the_report_and_its_repr():
    context = dpselect.Context.fixed_seed(3)
    pick = dpselect.select_price(context, np.array([1.0, 5.0, 2.0, 4.0]), dpselect.PriceGrid(0.5, 5.0, 0.5),
                                 epsilon=1.0, backend=dpselect.Backend.CPU)
    assert pick.report.sensitivity == 5.0 and pick.report.monotone and pick.report.candidates == 10
    assert pick.report.noise_scale == 5.0 and pick.report.epsilon_spent == 1.0
    assert pick.report.slack.depends_on_data  # no max_bidders: the slack reveals the best revenue
    assert repr(pick).startswith(f"PriceSelection(price={pick.price!r}, candidate={pick.candidate}, "
                                 "sampler=per-price, sampler_depends_on_data=False, report=SelectionReport(")
    # The repr is what gets printed and logged: it withholds the slack computed from the bids.
    assert repr(pick.report.slack.epsilon) not in repr(pick)
    assert "slack=FloatingPointSlack(<withheld: computed from the data; give a public bound>)" in repr(pick)
    public = dpselect.select_price(context, np.array([1.0, 5.0, 2.0, 4.0]), dpselect.PriceGrid(0.5, 5.0, 0.5),
                                   epsilon=1.0, max_bidders=10, backend=dpselect.Backend.CPU)
    assert f"slack=FloatingPointSlack(epsilon={public.report.slack.epsilon!r}" in repr(public)
    # Where the sampler was chosen by comparing the grid with the number of bids, neither it nor
    # the backend that ran appears.
    chosen = dpselect.select_price(context, np.array([1.0, 5.0]), dpselect.PriceGrid(0.001, 5.0, 0.001),
                                   epsilon=1.0, grid_sampler=dpselect.GridSampler.AUTOMATIC)
    assert chosen.sampler_depends_on_data
    assert "sampler=<withheld: chosen from the data>" in repr(chosen)
    assert "executed_on=<withheld: chosen from the data>" in repr(chosen)


def test_the_gil_is_released_during_a_release():
    bids = dpselect.Bids(public_bids(1000))
    grid = dpselect.PriceGrid(0.0, 100.0, 100.0 / (1 << 23))  # per-price noise over 2^23 + 1 prices
    assert_the_gil_is_released(lambda: [dpselect.select_price(dpselect.Context.fixed_seed(2), bids, grid, epsilon=1.0,
                                                              backend=dpselect.Backend.CPU)
                                        for _ in range(2)])
