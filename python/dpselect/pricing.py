# SPDX-License-Identifier: Apache-2.0
"""Private posted-price (digital-goods) auction pricing with the exponential mechanism.

The utility of a price p is its revenue, p * #{bids >= p}; its sensitivity Delta is the largest
candidate price (one bidder moves the revenue at p by at most p). Between neighbours that add or
remove a bidder the revenue moves one way only, so the exponential mechanism runs at eps/Delta;
between neighbours that change one bid at eps/(2 Delta) (Dwork & Roth 2014, Thm 3.10 and the
pumpkin auction of Example 3.5).

The candidates are a :class:`PriceGrid` (computed on the fly, up to 2^53 prices), an explicit
list (a 1-D float64 array), or a :class:`PriceRange` (every price in [min, max], sampled in work
proportional to the number of bids). Only the chosen price is private output; revenues and the
optimum are functions of the bids (NOT PRIVATE).

Example::

    import numpy as np, dpselect
    bids = dpselect.Bids(np.array([1.0, 5.0, 2.0, 4.0]))          # validated, sorted once
    pick = dpselect.select_price(dpselect.Context(), bids, dpselect.PriceGrid(0.5, 5.0, 0.5), epsilon=1.0)
    pick.price, pick.report
"""

from __future__ import annotations

import numpy as np

from . import _dpselect as _core
from ._arrays import as_float64, params_of
from ._backend import warn_if_gpu_unusable
from ._dpselect import (
    BID_INTERVALS_GRID_FACTOR,
    BidderNeighbours,
    Context,
    GridSampler,
    NonprivateOptimum,
    PriceGrid,
    PriceRange,
    PriceSelection,
    PricingParams,
    public_grid_sampler,
    resolve_grid_sampler,
    revenue_shortfall_bound,
)

__all__ = [
    "BID_INTERVALS_GRID_FACTOR", "BidderNeighbours", "Bids", "GridSampler", "NonprivateOptimum", "PriceGrid",
    "PriceRange", "PriceSelection", "PricingParams", "nonprivate_optimum", "public_grid_sampler",
    "resolve_grid_sampler", "revenue_shortfall_bound", "select_price",
]


def _host_float64(values, name: str) -> np.ndarray:
    where, array = as_float64(values, name, "pricing compares doubles")
    if where != "host":
        raise ValueError(f"{name} must be in host memory (pricing runs on the host); copy it to the host first")
    return array


class Bids(_core.Bids):
    """The bids of one auction, validated (finite, >= 0, at least one) and sorted once.

    ``Bids(bids)``: ``bids`` a 1-D float64 array in host memory (NumPy, or DLPack on the CPU),
    handed to the library without a conversion and copied once, sorted (the only copy a release
    makes of them); a bad bid raises InvalidArgument naming it. Build it once and reuse it
    for many releases. ``size`` / ``len()``, ``sorted`` (a read-only view), ``count_at_least(p)``,
    ``revenue(p)`` and ``revenues(prices)`` are computed from the bids: NOT PRIVATE, never
    publish them.
    """

    def __init__(self, bids) -> None:
        super().__init__(_host_float64(bids, "bids"))

    def revenues(self, prices) -> np.ndarray:
        """NOT PRIVATE: revenue(p) for every p of a 1-D float64 array, as a new float64 array."""
        return super().revenues(_host_float64(prices, "prices"))


def _as_bids(bids) -> _core.Bids:
    return bids if isinstance(bids, _core.Bids) else Bids(bids)


def _price_list(prices) -> np.ndarray:
    if not (isinstance(prices, np.ndarray) or hasattr(prices, "__dlpack__")):
        kind = type(prices).__name__
        raise TypeError(f"prices must be a PriceGrid, a PriceRange or a 1-D float64 array (got {kind}); "
                        f"convert a list with numpy.asarray(prices, dtype=numpy.float64)")
    return _host_float64(prices, "prices")


def select_price(context: Context, bids, prices, params: PricingParams | None = None, **fields) -> PriceSelection:
    """One private price that earns close to the best revenue from the bids.

    ``bids``: a :class:`Bids`, or a 1-D float64 array (then sorted for this call only: build a
    Bids once for many releases). ``prices``: a :class:`PriceGrid`, a :class:`PriceRange`
    (exponential mechanism only, on the CPU) or a 1-D float64 array of candidate prices (finite,
    >= 0, not all 0). ``params`` (a PricingParams) or its fields as keywords: ``epsilon``,
    ``neighbours``, ``max_bidders``, ``mechanism``, ``backend``, ``grid_sampler``.

    The sensitivity is the largest candidate price; the exponential mechanism runs at eps/Delta
    between add/remove-bidder neighbours and eps/(2 Delta) between change-one-bid neighbours
    (Dwork & Roth 2014, Thm 3.10). Without ``max_bidders`` the report's slack reveals the best
    revenue (slack.depends_on_data): do not publish it. Raises InvalidArgument (a ValueError)
    for a bad value and BudgetExceeded when the context's accountant refuses; in both cases
    nothing is charged or drawn.
    """
    params = params_of(PricingParams, params, fields)
    warn_if_gpu_unusable(params.backend)
    bids = _as_bids(bids)
    if isinstance(prices, PriceGrid):
        return _core.select_price_grid(context, bids, prices, params)
    if isinstance(prices, PriceRange):
        return _core.select_price_range(context, bids, prices, params)
    return _core.select_price_list(context, bids, _price_list(prices), params)


def nonprivate_optimum(bids, prices) -> NonprivateOptimum:
    """NOT PRIVATE: the best candidate price and its revenue, for diagnostics only.

    ``prices`` as for :func:`select_price`. Over a PriceRange the best price is a bid inside the
    range or the range's max, and ``candidate`` is the index in ``range.grid()`` of the largest
    grid price at or below it. Computed from the bids: never publish it with a private release.
    """
    bids = _as_bids(bids)
    if isinstance(prices, PriceGrid):
        return _core.nonprivate_optimum_grid(bids, prices)
    if isinstance(prices, PriceRange):
        return _core.nonprivate_optimum_range(bids, prices)
    return _core.nonprivate_optimum_list(bids, _price_list(prices))
