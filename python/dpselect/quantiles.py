# SPDX-License-Identifier: Apache-2.0
"""Private quantiles over a public range [lower, upper].

One q-quantile is the exponential mechanism with utility u(t) = -|#{i : x_i < t} - q n| (Smith
2011), sampled exactly over a public grid of 2^40 + 1 points of the range: the released value is
always a grid point, never a double whose low bits depend on the data (Mironov 2012). Values
outside the range are clipped to it (how many is private and not reported); NaN is an error.
The sensitivity of u is 1 when one record is replaced (n public) and max(q, 1 - q) when one is
added or removed.

Several quantiles (:class:`QuantilesMethod`): JOINT_EXPONENTIAL, one mechanism over sorted
tuples (Gillenwater, Joseph & Kulesza 2021; best up to about 10 quantiles); RECURSIVE_SPLITTING
(Kaplan, Schnapp & Stemmer 2022; best for many); INDEPENDENT_BASIC (epsilon / m each) and
INDEPENDENT_ZCDP (an (epsilon, delta) total).

:class:`QuantileData` prepares the data once (clipped, placed on the grid and sorted; host arrays
on all cores, CUDA device arrays on the GPU): build it once for many releases. Its size, its
sorted positions and the ``nonprivate_*`` diagnostics are computed from the data: NOT PRIVATE.

Example::

    import numpy as np, dpselect
    data = dpselect.QuantileData(np.array([3.0, 9.5, 4.2, 7.7]), (0.0, 10.0))    # sorted once
    median = dpselect.select_quantile(dpselect.Context(), data, 0.5, range=(0.0, 10.0), epsilon=1.0)
    median.value, median.report
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _dpselect as _core
from ._arrays import as_host_or_device, params_of
from ._backend import warn_if_gpu_unusable
from ._dpselect import (
    Context,
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


def _as_range(value, name: str = "range") -> QuantileRange:
    """A QuantileRange, or one made from a (lower, upper) pair of numbers."""
    if isinstance(value, QuantileRange):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        lower, upper = value
        return QuantileRange(float(lower), float(upper))
    raise TypeError(f"{name} must be a dpselect.QuantileRange or a (lower, upper) pair (got {type(value).__name__})")


class QuantileData(_core.QuantileData):
    """The data of quantile releases over one range, prepared once.

    ``QuantileData(values, range, *, stream=0)``: ``values`` a 1-D float32 or float64 array in
    host memory (NumPy, or DLPack on the CPU) or on a CUDA device (CuPy, PyTorch, JAX; read on
    ``stream``, a cudaStream_t as an int), handed to the library without a conversion; ``range`` a
    :class:`QuantileRange` or a (lower, upper) pair. Each value is clipped to the range, placed on
    its grid and sorted (8 bytes per value, 4 for float32 device values; host values on all cores,
    device values on the GPU, where they stay). Raises InvalidArgument for a bad range, no values or a NaN (naming
    ``data[i]``), BackendUnavailable for device values without a usable GPU. ``size`` / ``len()``
    and ``sorted_positions()`` are computed from the data: NOT PRIVATE, never publish them.
    """

    def __init__(self, values, range, *, stream: int = 0) -> None:
        where, array = as_host_or_device(values, "values")
        if where == "host":
            super().__init__(array, _as_range(range))
        else:
            super().__init__(array, _as_range(range), stream)


def _as_data(data, value_range: QuantileRange) -> _core.QuantileData:
    return data if isinstance(data, _core.QuantileData) else QuantileData(data, value_range)


def _quantile_params(kind, params, fields: dict):
    if "range" in fields:
        fields = dict(fields, range=_as_range(fields["range"]))
    return params_of(kind, params, fields)


def _levels(qs) -> list[float]:
    """The requested quantile levels as a list of floats (the library checks their values)."""
    if isinstance(qs, (str, bytes)) or not (isinstance(qs, (Sequence, np.ndarray)) or hasattr(qs, "__array__")):
        raise TypeError(f"qs must be a sequence of numbers in [0, 1] (got {type(qs).__name__}), "
                        f"e.g. [0.1, 0.5, 0.9] or numpy.linspace(0.1, 0.9, 9)")
    levels = np.asarray(qs, dtype=np.float64)
    if levels.ndim != 1:
        raise ValueError(f"qs must be 1-D (got shape {levels.shape})")
    return levels.tolist()


def select_quantile(context: Context, data, q: float, params: QuantileParams | None = None,
                    **fields) -> QuantileRelease:
    """One private q-quantile (q in [0, 1]), a point of the range's grid.

    ``data``: a :class:`QuantileData`, or an array as QuantileData takes it (then prepared over
    ``params.range`` for this call only: build a QuantileData once for many releases).
    ``params`` (a QuantileParams) or its fields as keywords: ``range`` (a QuantileRange or a
    (lower, upper) pair), ``epsilon``, ``neighbours``, ``max_points``, ``backend``.

    The exponential mechanism with utility -|#{x_i < t} - q n| (Smith 2011), whose sensitivity is
    1 (REPLACE_ONE_RECORD) or max(q, 1 - q) (ADD_OR_REMOVE_RECORD). Under ADD_OR_REMOVE_RECORD
    without ``max_points`` the report's slack reveals n (slack.depends_on_data): do not publish
    it. Raises InvalidArgument (a ValueError) for a bad value and BudgetExceeded when the
    context's accountant refuses; in both cases nothing is charged or drawn.
    """
    params = _quantile_params(QuantileParams, params, fields)
    warn_if_gpu_unusable(params.backend)
    return _core.select_quantile(context, _as_data(data, params.range), float(q), params)


def select_quantiles(context: Context, data, qs, params: QuantilesParams | None = None,
                     **fields) -> QuantilesRelease:
    """Several private quantiles, one grid point per level of ``qs``, non-decreasing.

    ``qs``: a sequence or 1-D array of levels, non-empty, each in [0, 1], strictly increasing.
    ``data`` as for :func:`select_quantile`. ``params`` (a QuantilesParams) or its fields as
    keywords: ``range``, ``epsilon`` (for all the quantiles together), ``method`` (a
    QuantilesMethod, JOINT_EXPONENTIAL by default), ``delta`` (INDEPENDENT_ZCDP only),
    ``neighbours``, ``max_points``, ``backend``. The whole release is charged once, after every
    check; a refusal charges and draws nothing.
    """
    params = _quantile_params(QuantilesParams, params, fields)
    warn_if_gpu_unusable(params.base.backend)
    return _core.select_quantiles(context, _as_data(data, params.base.range), _levels(qs), params)


def quantiles_rank_error_bound(params: QuantilesParams, qs, beta: float) -> float:
    """alpha such that with probability >= 1 - beta every released quantile o_j has rank error
    |#{x_i < o_j} - q_j n| <= alpha + e_j, e_j the error the grid and ties force on any output
    (Dwork & Roth 2014, Thm 3.11, applied to each method's mechanisms; JOINT_EXPONENTIAL adds up to
    2 (e_1 + ... + e_m)). alpha does not depend on the data."""
    return _core.quantiles_rank_error_bound(params, _levels(qs), beta)


def nonprivate_quantile_diagnostics(data: _core.QuantileData, q: float) -> QuantileDiagnostics:
    """NOT PRIVATE: a grid point of the exact q-quantile and its rank error (the error the grid
    and ties force on any output), for diagnostics and tests only. Never publish it."""
    return _core.nonprivate_quantile_diagnostics(data, float(q))


def nonprivate_rank_error(data: _core.QuantileData, grid_index: int, q: float) -> float:
    """NOT PRIVATE: |#{x_i < grid.point(grid_index)} - q n| for the prepared data, for
    diagnostics and tests only (e.g. the rank error of a released value: its grid_index)."""
    return _core.nonprivate_rank_error(data, grid_index, float(q))
