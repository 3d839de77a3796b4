# SPDX-License-Identifier: Apache-2.0
"""Private posted-price (digital-goods) auction pricing with the exponential mechanism.

The utility of a price p is its revenue, p * #{bids >= p}; its sensitivity Delta is the largest
candidate price (one bidder moves the revenue at p by at most p). Between neighbours that add or
remove a bidder the revenue moves one way only, so the exponential mechanism runs at eps/Delta;
between neighbours that change one bid at eps/(2 Delta) (Dwork & Roth 2014, Thm 3.10 and the
pumpkin auction of Example 3.5).

The candidates are a :class:`PriceGrid` (computed on the fly, up to 2^53 prices), an explicit
list of prices (a 1-D array or sequence), or a :class:`PriceRange` (every price in [min, max],
sampled in work proportional to the number of bids). Bids and price lists are read as float64: a
float64 array without a copy, anything else (lists, integer arrays, float32) converted once with
``numpy.asarray(x, dtype=numpy.float64)`` (an integer beyond 2**53 is a ValueError). Only the chosen price is private output; revenues and the
optimum are functions of the bids (NOT PRIVATE).

Example::

    import numpy as np, dpselect
    bids = dpselect.Bids(np.array([1.0, 5.0, 2.0, 4.0]))          # validated, sorted once
    pick = dpselect.select_price(dpselect.Context(), bids, dpselect.PriceGrid(0.5, 5.0, 0.5), epsilon=1.0)
    pick.price, pick.report
"""

from __future__ import annotations

import numbers

import numpy as np

from ._checks import check_module as _check_module
from . import _dpselect as _core
from ._arrays import FLOAT64, ArrayLike, as_host_or_device, params_of
from ._backend import warn_if_gpu_unusable
from ._dpselect import (
    BID_INTERVALS_GRID_FACTOR,
    Backend,
    BidderNeighbours,
    Context,
    GridSampler,
    Mechanism,
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
    where, array = as_host_or_device(values, name, dtypes=FLOAT64)
    if where != "host":
        raise ValueError(f"{name} must be in host memory (pricing runs on the host); copy it to the host first")
    return array


class Bids(_core.Bids):
    """The bids of one auction, validated (finite, >= 0, at least one) and sorted once.

    Build it once and reuse it for many releases: a release then makes no copy of the bids.

    Parameters
    ----------
    bids : array_like
        The bids, 1-D, at least one, each finite and >= 0, in host memory. A float64 array
        (NumPy, or DLPack on the CPU) is handed to the library without a conversion; anything
        else (a list, an integer or float32 array) is converted once with
        ``numpy.asarray(bids, dtype=numpy.float64)``. The library copies them once, sorted.

    Raises
    ------
    InvalidArgument
        (a ValueError) no bids, or a bid that is negative or not finite (naming ``bids[i]``).
    ValueError
        bids not 1-D, a strided float64 array, device memory, or an integer beyond 2**53 in
        magnitude (naming it).
    TypeError
        bids that are not numbers.

    Notes
    -----
    ``size`` / ``len()``, ``sorted`` (a read-only view), ``count_at_least(p)``, ``revenue(p)``
    and ``revenues(prices)`` are computed from the bids: NOT PRIVATE, never publish them.
    """

    def __init__(self, bids: ArrayLike) -> None:
        super().__init__(_host_float64(bids, "bids"))

    def __repr__(self) -> str:
        # The number of bids and their values are private: a repr is printed and logged.
        return "Bids(<withheld: the bids and their number are private; len() is NOT PRIVATE>)"

    def revenues(self, prices: ArrayLike) -> np.ndarray:
        """NOT PRIVATE: revenue(p) = p * #{bids >= p} for every price, as a new float64 array.

        Parameters
        ----------
        prices : array_like
            1-D prices, read as float64 (converted once with
            ``numpy.asarray(prices, dtype=numpy.float64)`` unless a float64 array).

        Returns
        -------
        numpy.ndarray
            float64, one revenue per price (rounded once, as the mechanisms use it).

        Raises
        ------
        ValueError, TypeError
            prices that are not a 1-D array of numbers, or an integer beyond 2**53.
        """
        return super().revenues(_host_float64(prices, "prices"))


def _as_bids(bids) -> _core.Bids:
    return bids if isinstance(bids, _core.Bids) else Bids(bids)


def _price_list(prices) -> np.ndarray:
    if prices is None or isinstance(prices, (str, bytes, dict, set, numbers.Number)):
        kind = type(prices).__name__
        raise TypeError(f"prices must be a PriceGrid, a PriceRange or a 1-D array of prices (got {kind}), "
                        f"e.g. dpselect.PriceGrid(0.5, 10.0, 0.5) or [1.0, 2.5, 4.0]")
    return _host_float64(prices, "prices")


def _candidates(prices):
    """A PriceGrid or PriceRange as it is, or the checked float64 price list: the cheap checks of
    the prices, made before the bids are validated and sorted."""
    return prices if isinstance(prices, (PriceGrid, PriceRange)) else _price_list(prices)


def select_price(
    context: Context,
    bids: Bids | ArrayLike,
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
    """One private price that earns close to the best revenue from the bids.

    Parameters
    ----------
    context : Context
        The source of the release's randomness and its accountant.
    bids : Bids or array_like
        A :class:`Bids`, or the bids as Bids takes them (then validated and sorted for this call
        only: build a Bids once for many releases).
    prices : PriceGrid or PriceRange or array_like
        The candidate prices: a :class:`PriceGrid`, a :class:`PriceRange` (exponential mechanism
        only, on the CPU) or a 1-D list or array of prices (finite, >= 0, not all 0), read as
        float64 (converted once with ``numpy.asarray(prices, dtype=numpy.float64)`` unless a
        float64 array).
    params : PricingParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss of the release, finite and > 0. Required unless ``params`` is given.
    neighbours : BidderNeighbours, default BidderNeighbours.ADD_OR_REMOVE_BIDDER
        What one person's data is: ADD_OR_REMOVE_BIDDER (the revenue is monotone) or
        CHANGE_ONE_BID.
    max_bidders : int, default 0
        A public upper bound on the number of bidders (0: none). It makes the floating-point
        slack and the sampler choice independent of the bids; more bids is an error.
    mechanism : Mechanism, default Mechanism.EXPONENTIAL
        EXPONENTIAL, PERMUTE_AND_FLIP or LAPLACE_NOISY_MAX (grids and lists only).
    backend : Backend, default Backend.AUTO
        AUTO, CPU or GPU.
    grid_sampler : GridSampler, default GridSampler.PER_PRICE_NOISE
        How a PriceGrid is sampled: PER_PRICE_NOISE, BID_INTERVALS (exponential mechanism, CPU,
        work proportional to the number of bids) or AUTOMATIC. A PriceRange always uses bid
        intervals.

    Returns
    -------
    PriceSelection
        ``price``, ``candidate`` (its index among the candidates), ``report``, ``sampler`` and
        ``sampler_depends_on_data``.

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad parameter, bid or price, naming it and its value.
    ValueError
        bids or prices not 1-D, strided, in device memory, or holding an integer beyond 2**53.
    TypeError
        prices of another kind, bids that are not numbers, ``params`` together with keywords, or
        neither epsilon nor ``params``.
    BudgetExceeded
        The context's accountant refuses the release.
    BackendUnavailable
        ``backend=Backend.GPU`` without a usable GPU.

    In every case nothing is charged or drawn.

    Notes
    -----
    The utility of a price p is its revenue p * #{bids >= p}; its sensitivity Delta is the largest
    candidate price. The exponential mechanism runs at epsilon / Delta between add/remove-bidder
    neighbours (the revenue moves one way) and epsilon / (2 Delta) between change-one-bid
    neighbours: epsilon-DP (Dwork & Roth 2014, Thm 3.10; the pumpkin auction of Dwork & Roth 2014,
    Example 3.5). With probability >= 1 - e^-t the price earns at least OPT minus
    :func:`revenue_shortfall_bound` (Dwork & Roth 2014, Thm 3.11). Without ``max_bidders`` the
    report's slack reveals the best revenue (``slack.depends_on_data``): do not publish it. Only
    the price is private output; revenues and the optimum are NOT PRIVATE. Runs on the host (the
    GPU backend copies what it needs); the GIL is released during the release.
    """
    fields = {"epsilon": epsilon, "neighbours": neighbours, "max_bidders": max_bidders, "mechanism": mechanism,
              "backend": backend, "grid_sampler": grid_sampler}
    params = params_of(PricingParams, params, fields, select_price.__kwdefaults__, ("epsilon",))
    candidates = _candidates(prices)  # before the bids are sorted
    sorted_bids = _as_bids(bids)
    warn_if_gpu_unusable(params.backend)
    if isinstance(candidates, PriceGrid):
        return _core.select_price_grid(context, sorted_bids, candidates, params)
    if isinstance(candidates, PriceRange):
        return _core.select_price_range(context, sorted_bids, candidates, params)
    return _core.select_price_list(context, sorted_bids, candidates, params)


def nonprivate_optimum(bids: Bids | ArrayLike, prices: PriceGrid | PriceRange | ArrayLike) -> NonprivateOptimum:
    """NOT PRIVATE: the best candidate price and its revenue, for diagnostics only.

    Parameters
    ----------
    bids : Bids or array_like
        As for :func:`select_price`.
    prices : PriceGrid or PriceRange or array_like
        As for :func:`select_price`.

    Returns
    -------
    NonprivateOptimum
        ``price``, ``revenue`` and ``candidate``. Over a PriceRange the best price is a bid
        inside the range or the range's max, and ``candidate`` is the index in ``range.grid()``
        of the largest grid price at or below it.

    Raises
    ------
    InvalidArgument, ValueError, TypeError
        Bad bids or prices, as for :func:`select_price`.

    Notes
    -----
    Computed from the bids: never publish it with a private release.
    """
    candidates = _candidates(prices)  # before the bids are sorted
    sorted_bids = _as_bids(bids)
    if isinstance(candidates, PriceGrid):
        return _core.nonprivate_optimum_grid(sorted_bids, candidates)
    if isinstance(candidates, PriceRange):
        return _core.nonprivate_optimum_range(sorted_bids, candidates)
    return _core.nonprivate_optimum_list(sorted_bids, candidates)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
