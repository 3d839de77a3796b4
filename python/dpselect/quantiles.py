# SPDX-License-Identifier: Apache-2.0
"""Private quantiles over a public range [lower, upper].

One q-quantile is the exponential mechanism with the rank utility
``u(t) = -dist(q n, [#{i : x_i < t}, #{i : x_i <= t}])`` (Smith 2011's ``-|#{i : x_i < t} - q n|``,
with ties counted), sampled exactly over a public grid of the range: 2^40 + 1 points, or the
multiples of a public ``resolution`` (``QuantileRange(lower, upper, resolution=1)`` for integer
data, 0.01 for cents), where a value held by many records can be released itself. The released
value is always a grid point, never a double whose low bits depend on the data (Mironov 2012).
Values outside the range are clipped to it (how many is private and not reported); NaN is an
error. The sensitivity of u is 1 when one record is replaced (n public) and max(q, 1 - q) when
one is added or removed. Over a grid of a resolution, ``mechanism=Mechanism.PERMUTE_AND_FLIP``
runs permute-and-flip instead (McKenna & Sheldon 2020): never a larger expected rank error at the
same epsilon, often a smaller one at epsilon >= 1 (docs/quantiles.md says which to choose).

Several quantiles (:class:`QuantilesMethod`): JOINT_EXPONENTIAL, one mechanism over sorted
tuples (Gillenwater, Joseph & Kulesza 2021; best up to about 10 quantiles); RECURSIVE_SPLITTING
(Kaplan, Schnapp & Stemmer 2022; best for many); INDEPENDENT_BASIC (epsilon / m each) and
INDEPENDENT_ZCDP (an (epsilon, delta) total).

:class:`QuantileData` prepares the data once (clipped, placed on the grid and sorted; host arrays
on all cores, CUDA device arrays on the GPU): build it once for many releases. float32/float64
arrays are read without a copy; anything else (lists, integer arrays) is converted once with
``numpy.asarray(x, dtype=numpy.float64)`` (an integer beyond 2**53 is a ValueError). Its size, its
sorted positions and the ``nonprivate_*`` diagnostics are computed from the data: NOT PRIVATE.

Example::

    import numpy as np, dpselect
    data = dpselect.QuantileData(np.array([3.0, 9.5, 4.2, 7.7]), (0.0, 10.0))    # sorted once
    median = dpselect.select_quantile(dpselect.Context(), data, 0.5, range=(0.0, 10.0), epsilon=1.0)
    median.value, median.report
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Tuple, Union

import numpy as np

from ._checks import check_module as _check_module
from . import _dpselect as _core
from ._arrays import ArrayLike, as_host_or_device, params_of
from ._backend import warn_if_gpu_unusable
from ._dpselect import (
    Backend,
    Context,
    Mechanism,
    QuantileDiagnostics,
    QuantileGrid,
    QuantileParams,
    QuantileRange,
    QuantileRelease,
    QuantilesMethod,
    QuantilesParams,
    QuantilesRelease,
    RecordNeighbours,
    quantile_rank_error_bound,
)

__all__ = [
    "QuantileData", "QuantileDiagnostics", "QuantileGrid", "QuantileParams", "QuantileRange", "QuantileRelease",
    "QuantilesMethod", "QuantilesParams", "QuantilesRelease", "RecordNeighbours", "nonprivate_quantile_diagnostics",
    "nonprivate_rank_error", "quantile_rank_error_bound", "quantiles_rank_error_bound", "select_quantile",
    "select_quantiles",
]


# A public range: a QuantileRange or a (lower, upper) pair of numbers.
RangeLike = Union[QuantileRange, Tuple[float, float], Sequence[float]]


def _as_range(value, name: str = "range") -> QuantileRange:
    """A QuantileRange, or one made from a (lower, upper) pair of numbers."""
    if isinstance(value, QuantileRange):
        return value
    if isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, str) and len(value) == 2:
        lower, upper = value
        return QuantileRange(float(lower), float(upper))
    raise TypeError(f"{name} must be a dpselect.QuantileRange or a (lower, upper) pair (got {type(value).__name__})")


class QuantileData(_core.QuantileData):
    """The data of quantile releases over one range, prepared once.

    Each value is clipped to the range, placed on its grid and sorted (8 bytes per value, 4 for
    float32 device values; host values on all cores, device values on the GPU, where they stay).
    Build it once and reuse it for many releases.

    Parameters
    ----------
    values : array_like
        The data, 1-D, at least one value, no NaN (values outside the range are clipped to it).
        float32/float64 arrays in host memory (NumPy, or DLPack on the CPU) or on a CUDA device
        (CuPy, PyTorch, JAX) are read without a conversion; anything else in host memory (a list,
        an integer array) is converted once with ``numpy.asarray(values, dtype=numpy.float64)``.
    range : QuantileRange or (float, float)
        The public range [lower, upper] the releases are over.
    stream : int, default 0
        For device values: the CUDA stream (a cudaStream_t as an int) they are read on; the
        constructor synchronizes it.

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad range, no values, more than 2^40 values, or a NaN (naming
        ``data[i]``).
    ValueError
        values not 1-D, a strided float array, or an integer beyond 2**53 in magnitude.
    TypeError
        values that are not numbers, or a range that is not a QuantileRange or a pair.
    BackendUnavailable
        Device values without a usable GPU.

    Notes
    -----
    ``size`` / ``len()`` and ``sorted_positions()`` are computed from the data: NOT PRIVATE,
    never publish them.
    """

    def __init__(self, values: ArrayLike, range: RangeLike, *, stream: int = 0) -> None:
        value_range = _as_range(range)  # the cheap check first: values may be converted
        where, array = as_host_or_device(values, "values")
        if where == "host":
            super().__init__(array, value_range)
        else:
            super().__init__(array, value_range, stream)


def _as_data(data, value_range: QuantileRange) -> _core.QuantileData:
    return data if isinstance(data, _core.QuantileData) else QuantileData(data, value_range)


# Public parameters under which quantile(s)_rank_error_bound can fail only for its levels: the
# library's own check of the levels (q in [0, 1]; qs non-empty, in [0, 1], strictly increasing),
# with its messages, run before values are prepared (sorted, copied to the GPU) for one call.
_LEVEL_CHECK = QuantileParams(QuantileRange(0.0, 1.0), 1.0)
_LEVELS_CHECK = QuantilesParams(QuantileRange(0.0, 1.0), 1.0)


def _check_level(q: float) -> None:
    _core.quantile_rank_error_bound(_LEVEL_CHECK, q, 0.5)


def _check_levels(levels: list[float]) -> None:
    _core.quantiles_rank_error_bound(_LEVELS_CHECK, levels, 0.5)


def _levels(qs) -> list[float]:
    """The requested quantile levels as a list of floats (the library checks their values)."""
    if isinstance(qs, (str, bytes)) or not (isinstance(qs, (Sequence, np.ndarray)) or hasattr(qs, "__array__")):
        raise TypeError(f"qs must be a sequence of numbers in [0, 1] (got {type(qs).__name__}), "
                        f"e.g. [0.1, 0.5, 0.9] or numpy.linspace(0.1, 0.9, 9)")
    levels = np.asarray(qs, dtype=np.float64)
    if levels.ndim != 1:
        raise ValueError(f"qs must be 1-D (got shape {levels.shape})")
    return levels.tolist()


def select_quantile(
    context: Context,
    data: QuantileData | ArrayLike,
    q: float,
    params: QuantileParams | None = None,
    *,
    range: RangeLike | None = None,
    epsilon: float | None = None,
    neighbours: RecordNeighbours = RecordNeighbours.REPLACE_ONE_RECORD,
    max_points: int = 0,
    backend: Backend = Backend.AUTO,
    mechanism: Mechanism = Mechanism.EXPONENTIAL,
) -> QuantileRelease:
    """One private q-quantile, a point of the range's grid.

    Parameters
    ----------
    context : Context
        The source of the release's randomness and its accountant.
    data : QuantileData or array_like
        A :class:`QuantileData`, or values as QuantileData takes them (then prepared over
        ``range`` for this call only: build a QuantileData once for many releases).
    q : float
        The quantile level, in [0, 1] (0.5: the median).
    params : QuantileParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    range : QuantileRange or (float, float)
        The public range [lower, upper] (finite, lower < upper), and its resolution when given
        as ``QuantileRange(lower, upper, resolution=step)``. Required unless ``params`` is given.
    epsilon : float
        The privacy loss of the release, finite and > 0. Required unless ``params`` is given.
    neighbours : RecordNeighbours, default RecordNeighbours.REPLACE_ONE_RECORD
        REPLACE_ONE_RECORD (n public; sensitivity 1) or ADD_OR_REMOVE_RECORD (sensitivity
        max(q, 1 - q)).
    max_points : int, default 0
        A public upper bound on the number of values (0: none); it makes the floating-point slack
        independent of the data under ADD_OR_REMOVE_RECORD (more values is an error).
    backend : Backend, default Backend.AUTO
        AUTO (follows the data), CPU or GPU.
    mechanism : Mechanism, default Mechanism.EXPONENTIAL
        EXPONENTIAL, or PERMUTE_AND_FLIP (McKenna & Sheldon 2020: never a larger expected rank
        error at the same epsilon), which needs a range with a resolution: over the 2^40 + 1
        points of a range without one it would be the exponential mechanism in all but name.

    Returns
    -------
    QuantileRelease
        ``value`` (a grid point of the range), ``grid_index`` and ``report``.

    Raises
    ------
    InvalidArgument
        (a ValueError) q outside [0, 1], a bad range or epsilon, or bad data, naming the
        parameter and its value.
    ValueError, TypeError
        Data that are not a 1-D array of numbers (as for :class:`QuantileData`), ``params``
        together with keywords, or neither range and epsilon nor ``params``.
    BudgetExceeded
        The context's accountant refuses the release.

    In every case nothing is charged or drawn.

    Notes
    -----
    The exponential mechanism with utility ``-dist(q n, [#{x_i < t}, #{x_i <= t}])`` (Smith 2011,
    ties counted), epsilon-DP (Dwork & Roth 2014, Thm 3.10), sampled exactly over a public grid
    (2^40 + 1 points, or the multiples of the range's resolution) so that the output's low bits
    reveal nothing (Mironov 2012). Under ADD_OR_REMOVE_RECORD without
    ``max_points`` the report's slack reveals n (``slack.depends_on_data``): do not publish it.
    Device data were synchronized when the QuantileData was built.
    """
    fields = {"range": None if range is None else _as_range(range), "epsilon": epsilon, "neighbours": neighbours,
              "max_points": max_points, "backend": backend, "mechanism": mechanism}
    params = params_of(QuantileParams, params, fields, select_quantile.__kwdefaults__, ("range", "epsilon"))
    level = float(q)
    if not isinstance(data, _core.QuantileData):
        _check_level(level)  # before the values are prepared; prepared data are checked by the release
    warn_if_gpu_unusable(params.backend)
    return _core.select_quantile(context, _as_data(data, params.range), level, params)


def select_quantiles(
    context: Context,
    data: QuantileData | ArrayLike,
    qs: Sequence[float] | np.ndarray,
    params: QuantilesParams | None = None,
    *,
    range: RangeLike | None = None,
    epsilon: float | None = None,
    method: QuantilesMethod = QuantilesMethod.JOINT_EXPONENTIAL,
    delta: float = 0.0,
    neighbours: RecordNeighbours = RecordNeighbours.REPLACE_ONE_RECORD,
    max_points: int = 0,
    backend: Backend = Backend.AUTO,
    mechanism: Mechanism = Mechanism.EXPONENTIAL,
) -> QuantilesRelease:
    """Several private quantiles, one grid point per level of ``qs``, non-decreasing.

    Parameters
    ----------
    context : Context
        The source of the release's randomness and its accountant.
    data : QuantileData or array_like
        As for :func:`select_quantile`.
    qs : sequence of float
        The levels, non-empty, each in [0, 1], strictly increasing.
    params : QuantilesParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    range : QuantileRange or (float, float)
        The public range. Required unless ``params`` is given.
    epsilon : float
        The privacy loss of all the quantiles together, finite and > 0. Required unless
        ``params`` is given.
    method : QuantilesMethod, default QuantilesMethod.JOINT_EXPONENTIAL
        JOINT_EXPONENTIAL, RECURSIVE_SPLITTING, INDEPENDENT_BASIC or INDEPENDENT_ZCDP.
    delta : float, default 0.0
        INDEPENDENT_ZCDP only: the total delta, in (0, 1); 0 for the other methods.
    neighbours, max_points, backend
        As for :func:`select_quantile`.
    mechanism : Mechanism, default Mechanism.EXPONENTIAL
        As for :func:`select_quantile`; PERMUTE_AND_FLIP runs each release of RECURSIVE_SPLITTING
        and INDEPENDENT_BASIC (JOINT_EXPONENTIAL is one exponential mechanism over tuples, and
        INDEPENDENT_ZCDP composes exponential mechanisms by their zCDP bound).

    Returns
    -------
    QuantilesRelease
        ``values`` (one grid point per level, non-decreasing), ``grid_indices`` and the totals
        spent.

    Raises
    ------
    InvalidArgument
        (a ValueError) bad levels (naming ``qs[i]``), a bad parameter or bad data.
    ValueError, TypeError
        As for :func:`select_quantile`; qs that are not a 1-D sequence of numbers.
    BudgetExceeded
        The context's accountant refuses the release.

    The whole release is charged once, after every check; a refusal charges and draws nothing.

    Notes
    -----
    JOINT_EXPONENTIAL: one exponential mechanism over sorted tuples (Gillenwater, Joseph &
    Kulesza 2021); RECURSIVE_SPLITTING (Kaplan, Schnapp & Stemmer 2022); INDEPENDENT_BASIC:
    epsilon / m per quantile, basic composition (Dwork & Roth 2014, Thm 3.16); INDEPENDENT_ZCDP:
    an (epsilon, delta) total through zCDP (Bun & Steinke 2016; Cesar & Rogers 2021). Every
    output is a grid point (Mironov 2012). :func:`quantiles_rank_error_bound` gives the accuracy.
    """
    fields = {"range": None if range is None else _as_range(range), "epsilon": epsilon, "method": method,
              "delta": delta, "neighbours": neighbours, "max_points": max_points, "backend": backend,
              "mechanism": mechanism}
    params = params_of(QuantilesParams, params, fields, select_quantiles.__kwdefaults__, ("range", "epsilon"))
    levels = _levels(qs)
    if not isinstance(data, _core.QuantileData):
        _check_levels(levels)  # before the values are prepared; prepared data are checked by the release
    warn_if_gpu_unusable(params.base.backend)
    return _core.select_quantiles(context, _as_data(data, params.base.range), levels, params)


def quantiles_rank_error_bound(params: QuantilesParams, qs: Sequence[float] | np.ndarray, beta: float) -> float:
    """A bound on the rank error of every released quantile, from public values alone.

    Parameters
    ----------
    params : QuantilesParams
        The parameters of the release.
    qs : sequence of float
        The levels, as for :func:`select_quantiles`.
    beta : float
        The failure probability, in (0, 1).

    Returns
    -------
    float
        alpha such that with probability >= 1 - beta every released quantile o_j has rank error
        ``dist(q_j n, [#{x_i < o_j}, #{x_i <= o_j}]) <= alpha + e_j`` (ties counted), e_j the error
        the grid forces on any output (JointExp, which counts no ties: ``min_t |#{x_i < t} - q_j n|``,
        and up to 2 (e_1 + ... + e_m) more). alpha does not depend on the data.

    Raises
    ------
    InvalidArgument
        A bad parameter, level (naming ``qs[i]``) or beta.

    Notes
    -----
    Dwork & Roth 2014, Thm 3.11, applied to each method's mechanisms; JOINT_EXPONENTIAL adds up
    to 2 (e_1 + ... + e_m).
    """
    return _core.quantiles_rank_error_bound(params, _levels(qs), beta)


def nonprivate_quantile_diagnostics(data: _core.QuantileData, q: float) -> QuantileDiagnostics:
    """NOT PRIVATE: a grid point of the exact q-quantile and its rank error, for diagnostics.

    Parameters
    ----------
    data : QuantileData
        The prepared data.
    q : float
        The level, in [0, 1].

    Returns
    -------
    QuantileDiagnostics
        The exact quantile's grid point and the rank error (ties counted) the grid forces on any output.

    Raises
    ------
    InvalidArgument
        q outside [0, 1].

    Notes
    -----
    Computed from the data: for diagnostics and tests only, never publish it.
    """
    return _core.nonprivate_quantile_diagnostics(data, float(q))


def nonprivate_rank_error(data: _core.QuantileData, grid_index: int, q: float) -> float:
    """NOT PRIVATE: the rank error of grid point t, ``dist(q n, [#{x_i < t}, #{x_i <= t}])`` (ties counted).

    Parameters
    ----------
    data : QuantileData
        The prepared data.
    grid_index : int
        A point of the range's grid (e.g. a release's ``grid_index``).
    q : float
        The level, in [0, 1].

    Returns
    -------
    float
        The rank error of that grid point.

    Raises
    ------
    InvalidArgument
        A grid index beyond the grid or q outside [0, 1].

    Notes
    -----
    Computed from the data: for diagnostics and tests only, never publish it.
    """
    return _core.nonprivate_rank_error(data, grid_index, float(q))


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
