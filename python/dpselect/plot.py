# SPDX-License-Identifier: Apache-2.0
"""Pictures of dpselect's releases, audits and accounting, with matplotlib.

Each function returns a ``matplotlib.figure.Figure`` (call ``fig.savefig("x.png")`` or show it in a
notebook) and never calls ``pyplot.show()``. matplotlib is an optional dependency
(``pip install "dpselect[plot]"``); importing this module without it raises ImportError saying so.

- :func:`pricing`: revenue against price, the exponential mechanism's probability of each price
  (log scale), the best price and the released one. NOT PRIVATE: the revenue curve and the best
  price are computed from the bids; the figure is for the analyst who holds them, never for
  publication.
- :func:`audit`: each audited mechanism's epsilon lower bound against its claim.
- :func:`accounting`: total epsilon against the number of releases under basic, advanced, optimal
  and zCDP composition.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

try:
    from matplotlib.figure import Figure
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError('dpselect.plot needs matplotlib: pip install "dpselect[plot]" (or matplotlib)') from error

from . import _dpselect as _core
from ._checks import enum_member as _enum_member
from ._dpselect import BidderNeighbours
from .pricing import _as_bids

__all__ = ["pricing", "audit", "accounting", "pricing_probabilities"]

# Enough points for a smooth curve; a longer grid is drawn at this many evenly spaced prices.
_MAX_PLOTTED_PRICES = 4096


def _price_points(prices) -> np.ndarray:
    """The prices drawn: all the candidates, or 4096 evenly spaced ones of a longer grid."""
    if isinstance(prices, _core.PriceGrid):
        size = prices.size()  # validates the grid first
        if size <= _MAX_PLOTTED_PRICES:
            index = np.arange(size, dtype=np.uint64)
        else:
            index = np.unique(np.linspace(0, size - 1, _MAX_PLOTTED_PRICES).round().astype(np.uint64))
        # The library's own prices (fma(i, step, min), rounded once), the ones a release can give.
        return np.array([prices.price(int(i)) for i in index], dtype=np.float64)
    if isinstance(prices, _core.PriceRange):  # sampled over its public grid
        return _price_points(prices.grid())
    points = np.asarray(prices, dtype=np.float64)
    if points.ndim != 1 or points.size == 0:
        raise ValueError(f"prices must be a non-empty 1-D array, a PriceGrid or a PriceRange (got {prices!r})")
    return points


# The dpselect command's words for the neighbour relations (dpselect price --neighbours).
_NEIGHBOURS_COMMAND_WORDS = {"add-remove": BidderNeighbours.ADD_OR_REMOVE_BIDDER,
                             "change-bid": BidderNeighbours.CHANGE_ONE_BID}


def _change_one_bid(neighbours) -> bool:
    member = _enum_member(BidderNeighbours, neighbours, "neighbours", _NEIGHBOURS_COMMAND_WORDS)
    return member is BidderNeighbours.CHANGE_ONE_BID


def pricing_probabilities(bids, prices, epsilon: float,
                          neighbours: BidderNeighbours | str = BidderNeighbours.ADD_OR_REMOVE_BIDDER):
    """NOT PRIVATE. (prices, revenues, log10 probabilities) of the exponential mechanism over ``prices``.

    The probability of price p is proportional to exp(s * revenue(p)) with s = epsilon / Delta
    for add/remove-one-bidder neighbours (revenue is monotone) and epsilon / (2 Delta) for
    change-one-bid neighbours, Delta the largest candidate price (Dwork & Roth 2014, Thm 3.10 and
    its monotone remark; McSherry & Talwar 2007). Over a grid longer than 4096 prices, the
    probabilities are those of the exponential mechanism restricted to 4096 evenly spaced grid
    prices: their shape, not the grid's per-price values. ``neighbours``: a
    :class:`dpselect.BidderNeighbours`, or its name as a string (``"change_one_bid"``; the
    command's ``"change-bid"`` and ``"add-remove"`` too).
    """
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0 (got {epsilon!r})")
    points = _price_points(prices)
    revenues = _as_bids(bids).revenues(points)
    largest = float(points.max())
    if largest <= 0:
        raise ValueError("prices must not all be 0")
    scale = epsilon / ((2.0 if _change_one_bid(neighbours) else 1.0) * largest)
    log_weights = scale * revenues
    log_weights -= log_weights.max()
    log_probability = log_weights - math.log(math.fsum(np.exp(log_weights)))
    return points, revenues, log_probability / math.log(10.0)


def _released_price(released) -> float | None:
    if released is None:
        return None
    return float(getattr(released, "price", released))


def pricing(bids, prices, epsilon: float, *,
            neighbours: BidderNeighbours | str = BidderNeighbours.ADD_OR_REMOVE_BIDDER, released=None,
            figsize=(8.0, 6.0)) -> Figure:
    """NOT PRIVATE: revenue and the exponential mechanism's probabilities over the prices.

    ``bids``: a dpselect.Bids or a 1-D array; ``prices``: a price list (1-D array), a PriceGrid or
    a PriceRange; ``neighbours``: as for :func:`pricing_probabilities`; ``released``: the
    PriceSelection (or price) a release gave, marked on both panels.
    The top panel shows revenue(p) = p * #{bids >= p} and the best price; the bottom one the
    probability of each price under the mechanism (log scale). Both are computed from the bids:
    keep the figure with the data, never publish it.
    """
    points, revenues, log10_probability = pricing_probabilities(bids, prices, epsilon, neighbours)
    best = int(np.argmax(revenues))
    figure = Figure(figsize=figsize, layout="constrained")
    revenue_axes, probability_axes = figure.subplots(2, 1, sharex=True)
    revenue_axes.plot(points, revenues, color="tab:blue", label="revenue")
    revenue_axes.axvline(points[best], color="tab:green", linestyle="--",
                         label=f"best price {points[best]:.6g} (not private)")
    revenue_axes.set_ylabel("revenue = price × bidders at or above it")
    revenue_axes.set_title("Private pricing: NOT PRIVATE diagnostics (computed from the bids)")
    probability_axes.semilogy(points, np.power(10.0, log10_probability), color="tab:purple",
                              label=f"exponential mechanism, ε = {epsilon:g}")
    probability_axes.set_ylabel("probability of the price")
    probability_axes.set_xlabel("price")
    price = _released_price(released)
    if price is not None:
        for axes in (revenue_axes, probability_axes):
            axes.axvline(price, color="tab:red", linewidth=1.5, label=f"released price {price:.6g}")
    for axes in (revenue_axes, probability_axes):
        axes.legend(loc="best", fontsize="small")
        axes.grid(True, which="major", alpha=0.3)
    return figure


def audit(results: Sequence, *, figsize=None) -> Figure:
    """Each audited mechanism's epsilon lower bound against its claim.

    ``results``: AuditResult objects (dpselect.audit.run). For each, the bar runs from the lower
    bound (valid with the audit's confidence, jointly over its events) up to the point estimate
    ln(p_D / p_D') of the event that gave it; the claimed epsilon is a black tick. A lower bound
    above the claim proves the implementation breaks it (the mechanism is drawn red); below it is
    evidence, not proof, of a correct one.
    """
    results = list(results)
    if not results:
        raise ValueError("audit needs at least one AuditResult")
    figure = Figure(figsize=figsize or (11.0, 1.2 + 0.3 * len(results)), layout="constrained")
    axes = figure.subplots()
    labels = []
    right_end = 0.0
    for row, result in enumerate(results):
        bounds = result.bounds
        lower = float(bounds.epsilon_lower)
        worst = bounds.worst_epsilon
        p_d, p_d_prime = float(worst.p_d), float(worst.p_d_prime)
        numerator, denominator = (p_d, p_d_prime) if worst.d_over_d_prime else (p_d_prime, p_d)
        estimate = math.log(numerator / denominator) if numerator > 0 and denominator > 0 else lower
        claim = float(result.claimed_epsilon)
        right_end = max(right_end, claim, estimate)
        passed = bool(result.passed)
        color = "tab:green" if passed else "tab:red"
        axes.plot([lower, max(lower, estimate)], [row, row], color=color, linewidth=4, alpha=0.5,
                  solid_capstyle="butt")
        axes.plot([lower], [row], marker="|", markersize=14, color=color)
        axes.plot([claim], [row], marker="|", markersize=18, markeredgewidth=2.5, color="black")
        delta = float(result.claimed_delta)
        claim_text = f"ε={claim:g}" + (f", δ={delta:g}" if delta > 0 else "")
        labels.append(f"{result.mechanism} ({result.neighbours}; {claim_text})")
    axes.set_yticks(range(len(results)), labels, fontsize="small")
    axes.invert_yaxis()
    axes.set_xlim(0, 1.1 * right_end if right_end > 0 else 1.0)
    confidence = results[0].confidence
    axes.set_xlabel(f"ε: bar from the lower bound ({confidence:.0%} confidence) to the estimate; black: claim")
    figure.suptitle("Empirical privacy audit: observed privacy loss against the claim")
    axes.grid(True, axis="x", alpha=0.3)
    return figure


def _release_counts(k_max: int, points: int) -> np.ndarray:
    if not (isinstance(k_max, (int, np.integer)) and 1 <= k_max <= 1 << 40):
        raise ValueError(f"k_max must be an integer in [1, 2^40] (got {k_max!r})")
    return np.unique(np.geomspace(1, k_max, num=points).round().astype(np.int64))


def accounting(epsilon: float, k_max: int, delta: float, *, kind=None, points: int = 48,
               figsize=(8.0, 5.0)) -> Figure:
    """Total epsilon of k releases, each ``epsilon``-DP, for k = 1 .. k_max, by four theorems.

    Basic composition (k epsilon; Dwork & Roth 2014, Thm 3.16), advanced composition at
    ``delta`` (Dwork, Rothblum & Vadhan 2010), the optimal composition of k epsilon-DP releases at
    ``delta`` (Kairouz, Oh & Viswanath 2015, Thm 3.3) and zCDP (rho = epsilon^2/2 per pure release,
    Bun & Steinke 2016; epsilon^2/8 for the exponential mechanism, Cesar & Rogers 2021), converted
    at ``delta`` (Canonne, Kamath & Steinke 2020). ``kind``: ReleaseKind.PURE (default) or
    ReleaseKind.EXPONENTIAL_MECHANISM. The accountant charges the smallest of these.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0 (got {epsilon!r})")
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    kind = _core.ReleaseKind.PURE if kind is None else kind
    exponential = kind == _core.ReleaseKind.EXPONENTIAL_MECHANISM
    if not exponential and kind != _core.ReleaseKind.PURE:
        raise ValueError(f"kind must be ReleaseKind.PURE or ReleaseKind.EXPONENTIAL_MECHANISM (got {kind!r})")
    counts = _release_counts(k_max, points)
    rho_each = _core.zcdp_of_exponential_mechanism(epsilon) if exponential else _core.zcdp_of_pure(epsilon)
    curves = {
        "basic (Dwork & Roth Thm 3.16)": [k * epsilon for k in counts],
        "advanced (Dwork, Rothblum & Vadhan 2010)": [
            _core.advanced_composition(int(k), _core.PrivacyBound(epsilon, 0.0), delta).epsilon for k in counts],
        "optimal (Kairouz, Oh & Viswanath 2015)": [
            _core.optimal_composition_epsilon(int(k), epsilon, delta) for k in counts],
        "zCDP (Bun & Steinke 2016; CKS 2020)": [
            _core.epsilon_from_zcdp_tight(float(k) * rho_each, delta) for k in counts],
    }
    figure = Figure(figsize=figsize, layout="constrained")
    axes = figure.subplots()
    for (label, values), style in zip(curves.items(), ("-", "--", "-.", ":")):
        axes.loglog(counts, values, linestyle=style, linewidth=2, label=label)
    what = "exponential mechanism" if exponential else "pure ε-DP releases"
    axes.set_xlabel("number of releases k")
    axes.set_ylabel(f"total ε at δ = {delta:g}")
    axes.set_title(f"Composition of k {what}, each ε = {epsilon:g}")
    axes.legend(loc="upper left", fontsize="small")
    axes.grid(True, which="both", alpha=0.3)
    return figure
