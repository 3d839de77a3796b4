# SPDX-License-Identifier: Apache-2.0
"""The pictures render headless (Agg) and show what they claim: the released price where it was
released, probabilities that are the mechanism's, the claims of the audit, the composition
curves of the accounting functions."""

import io
import math
from types import SimpleNamespace

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import dpselect  # noqa: E402
import dpselect.plot  # noqa: E402


def render_png(figure):
    """The figure as PNG bytes, and its pixels (height x width x 4)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=60)
    data = buffer.getvalue()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    buffer.seek(0)
    return data, matplotlib.image.imread(buffer)


def lines_labelled(axes, prefix):
    return [line for line in axes.get_lines() if line.get_label().startswith(prefix)]


BIDS = np.array([1.0, 2.0, 2.0, 3.5, 5.0, 5.0, 5.0, 8.0, 9.5, 12.0])


def test_pricing_marks_the_released_price_on_both_panels():
    grid = dpselect.PriceGrid(0.5, 12.0, 0.5)
    pick = dpselect.select_price(dpselect.Context.fixed_seed(3), BIDS, grid, epsilon=1.0)
    figure = dpselect.plot.pricing(BIDS, grid, 1.0, released=pick)
    _, pixels = render_png(figure)
    assert pixels.std() > 0.05  # something was drawn, not a blank canvas
    revenue_axes, probability_axes = figure.axes
    for axes in (revenue_axes, probability_axes):
        (released,) = lines_labelled(axes, "released price")
        assert list(released.get_xdata()) == [pick.price, pick.price]
    assert probability_axes.get_yscale() == "log"
    assert probability_axes.get_xlabel() == "price"
    assert "revenue" in revenue_axes.get_ylabel()
    assert "NOT PRIVATE" in revenue_axes.get_title()
    # The best price marked is the library's (non-private) optimum over the same grid.
    (best,) = lines_labelled(revenue_axes, "best price")
    assert best.get_xdata()[0] == dpselect.nonprivate_optimum(dpselect.Bids(BIDS), grid).price


@pytest.mark.parametrize("neighbours,factor", [("add_or_remove_bidder", 1.0), ("change_one_bid", 2.0)])
def test_pricing_probabilities_are_the_exponential_mechanism(neighbours, factor):
    prices = np.array([1.0, 2.0, 5.0, 8.0, 12.0])
    points, revenues, log10_probability = dpselect.plot.pricing_probabilities(BIDS, prices, 0.7, neighbours)
    # Exact reference: revenue p * #{b >= p}; weights exp(eps r / (factor * Delta)), Delta = 12.
    counts = [sum(1 for b in BIDS if b >= p) for p in prices]
    assert list(revenues) == [p * c for p, c in zip(prices, counts)]
    weights = [math.exp(0.7 * p * c / (factor * 12.0)) for p, c in zip(prices, counts)]
    expected = [w / math.fsum(weights) for w in weights]
    assert np.allclose(np.power(10.0, log10_probability), expected, rtol=1e-12, atol=0)


def test_pricing_draws_a_long_grid_at_a_bounded_number_of_prices():
    grid = dpselect.PriceGrid(0.0, 100.0, 1e-6)  # 10^8 prices, never enumerated
    figure = dpselect.plot.pricing(BIDS, grid, 1.0, released=42.0)
    (curve,) = lines_labelled(figure.axes[0], "revenue")
    assert len(curve.get_xdata()) <= 4096
    assert curve.get_xdata()[0] == 0.0 and curve.get_xdata()[-1] == pytest.approx(100.0)


def test_pricing_refuses_bad_input_with_the_parameter_named():
    with pytest.raises(ValueError, match=r"epsilon must be finite and > 0 \(got 0\)"):
        dpselect.plot.pricing(BIDS, np.array([1.0, 2.0]), 0)
    with pytest.raises(ValueError, match=r"bids\[1\] must be finite and >= 0 \(got nan\)"):
        dpselect.plot.pricing(np.array([1.0, np.nan]), np.array([1.0, 2.0]), 1.0)
    with pytest.raises(ValueError, match="neighbours"):
        dpselect.plot.pricing(BIDS, np.array([1.0, 2.0]), 1.0, neighbours="someone")


def audit_result(mechanism, claimed, lower, p_d, p_d_prime, passed, delta=0.0):
    worst = SimpleNamespace(p_d=p_d, p_d_prime=p_d_prime, d_over_d_prime=True)
    bounds = SimpleNamespace(epsilon_lower=lower, worst_epsilon=worst)
    return SimpleNamespace(mechanism=mechanism, neighbours="one utility +1", claimed_epsilon=claimed,
                           claimed_delta=delta, bounds=bounds, confidence=0.95, passed=passed)


def test_audit_draws_each_bound_against_its_claim():
    results = [audit_result("exponential", 1.0, 0.8, 0.30, 0.13, True),
               audit_result("broken", 0.5, 1.6, 0.40, 0.07, False),
               audit_result("gaussian", 1.0, 0.2, 0.2, 0.17, True, delta=1e-6)]
    figure = dpselect.plot.audit(results)
    render_png(figure)
    (axes,) = figure.axes
    labels = [label.get_text() for label in axes.get_yticklabels()]
    assert labels[0].startswith("exponential") and "ε=1" in labels[0]
    assert "δ=1e-06" in labels[2]
    claims = [line for line in axes.get_lines() if line.get_color() == "black"]
    assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in claims] == [(1.0, 0), (0.5, 1), (1.0, 2)]
    bars = [line for line in axes.get_lines() if line.get_linewidth() == 4]
    # The failing mechanism is red; its bar runs from the lower bound to ln(p_D / p_D').
    assert matplotlib.colors.same_color(bars[1].get_color(), "tab:red")
    assert bars[1].get_xdata()[0] == 1.6
    assert bars[1].get_xdata()[1] == pytest.approx(math.log(0.40 / 0.07))
    assert "confidence" in axes.get_xlabel()


def test_audit_of_a_real_run():
    import dpselect.audit

    target = next(t for t in dpselect.audit.library_targets() if t.mechanism.startswith("exponential"))
    result = dpselect.audit.run(target, selection_runs=2000, runs=20000)
    figure = dpselect.plot.audit([result])
    render_png(figure)
    (axes,) = figure.axes
    assert axes.get_yticklabels()[0].get_text().startswith("exponential")


def test_accounting_curves_are_the_library_bounds():
    figure = dpselect.plot.accounting(0.1, 1000, 1e-6)
    render_png(figure)
    (axes,) = figure.axes
    lines = {line.get_label().split(" ")[0]: line for line in axes.get_lines()}
    assert set(lines) == {"basic", "advanced", "optimal", "zCDP"}
    k = lines["basic"].get_xdata()
    assert k[0] == 1 and k[-1] == 1000
    assert np.allclose(lines["basic"].get_ydata(), 0.1 * k)
    # The optimal profile is never above basic composition, and at k = 1000 far below it.
    assert np.all(lines["optimal"].get_ydata() <= lines["basic"].get_ydata() * (1 + 1e-12))
    assert lines["optimal"].get_ydata()[-1] < 0.5 * lines["basic"].get_ydata()[-1]
    assert lines["zCDP"].get_ydata()[-1] == dpselect.epsilon_from_zcdp_tight(1000 * 0.1**2 / 2, 1e-6)
    assert axes.get_xscale() == "log" and "releases" in axes.get_xlabel()


def test_accounting_refuses_bad_input():
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\) \(got 0\)"):
        dpselect.plot.accounting(1.0, 10, 0)
    with pytest.raises(ValueError, match="k_max"):
        dpselect.plot.accounting(1.0, 0, 1e-6)
    with pytest.raises(ValueError, match="kind"):
        dpselect.plot.accounting(1.0, 10, 1e-6, kind=dpselect.ReleaseKind.APPROXIMATE)
