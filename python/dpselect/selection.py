# SPDX-License-Identifier: Apache-2.0
"""Private selection over arrays of utilities in one process: one release (:func:`select`), the k
best from one pass (:func:`select_top_k`), one release per row of a matrix (:func:`select_rows`)
and repeated releases over one row (:func:`select_repeated`), on the CPU or a GPU.

Each release is epsilon-DP for utilities whose sensitivity is the ``sensitivity`` given (the
exponential mechanism, permute-and-flip, report-noisy-max; each function's Notes name the source)
under exact arithmetic; the computed release adds the floating-point slack its report states. The
names are also dpselect's (``dpselect.select``); the selection keywords are the ones of
``dpselect.sharding``, ``dpselect.dask`` and ``dpselect.spark`` (dpselect._selection_params).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _dpselect as _core
from ._arrays import ArrayLike, LabelsLike
from ._arrays import as_host_or_device as _as_host_or_device
from ._arrays import check_labels as _check_labels
from ._arrays import length_of as _length_of
from ._arrays import pick_labels as _pick_labels
from ._backend import warn_if_gpu_unusable as _warn_if_gpu_unusable
from ._checks import check_module as _check_module
from ._checks import type_error as _type_error
from ._dpselect import Context, InvalidArgument, RowsSelection, Selection, SelectionParams, TopKSelection
from ._selection_params import TOP_K as _TOP_K
from ._selection_params import ZERO_REFERENCE as _ZERO_REFERENCE
from ._selection_params import SelectionKeywords, SelectionKeywordsWithoutEpsilon, Unpack
from ._selection_params import selection_keywords as _selection_keywords
from ._selection_params import selection_params as _selection_params

__all__ = ["select", "select_repeated", "select_rows", "select_top_k"]

_ROW_EPSILONS = """\
epsilon : float or 1-D array_like
    The privacy loss of each row's release: one value for every row, or one per row (``rows``
    values in host memory, each finite and > 0). Required unless ``params`` is given."""

_EACH_RELEASE_EPSILON = """\
epsilon : float
    The privacy loss of EACH release (finite, > 0). Required unless ``params`` is given."""


def _attach(result, name: str, value):
    # The results carry Python attributes (nb::dynamic_attr): the label properties read them.
    setattr(result, name, value)
    return result


@_selection_keywords()
def select(
    context: Context,
    utilities: ArrayLike,
    params: SelectionParams | None = None,
    *,
    labels: LabelsLike | None = None,
    stream: int = 0,
    **keywords: Unpack[SelectionKeywords],
) -> Selection:
    """One private release: the index of a high-utility candidate.

    Parameters
    ----------
    context : Context
        The source of the release's randomness (and its accountant, if one was given to
        ``Context.charge_to``). ``Context.fixed_seed`` is NOT PRIVATE.
    utilities : array_like
        One utility per candidate, 1-D, at least one: finite, or -inf to exclude a candidate
        (private only when the excluded set is the same for all neighbouring datasets).
        float32/float64 NumPy arrays (C-contiguous) and DLPack producers (CuPy, PyTorch, JAX, in
        host or CUDA device memory) are read without a copy; anything else in host memory
        (lists, tuples, integer or bool arrays) is converted once with
        ``numpy.asarray(utilities, dtype=numpy.float64)``.
    {selection_keywords}
    labels : sequence or 1-D numpy.ndarray, optional
        The candidates themselves (names, keys, values), one per utility; ``result.label`` is then
        ``labels[result.index]``, looked up by position (a pandas Series is read with
        ``numpy.asarray``; a mapping is refused). Public: the candidate universe, which must not
        depend on the private data.
    stream : int, default 0
        For device arrays: the CUDA stream (a cudaStream_t as an int, 0 the default stream) the
        work is ordered on.

    Returns
    -------
    Selection
        ``index`` (the chosen candidate), ``label`` (``labels[index]``, or None without labels)
        and ``report`` (the epsilon spent, the noise scale, where it ran, the floating-point
        slack: public unless ``report.slack.depends_on_data``).

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad parameter (epsilon or sensitivity not finite and > 0, a negative
        utility_bound, a utility_reference that is not finite, ...) or no utilities, before
        anything is charged or drawn; a NaN, +inf or out-of-bound utility found during the pass
        (then the release is charged, as in C++), the message naming ``utilities[i]``.
    ValueError
        utilities not 1-D, a strided float array, an integer beyond 2**53 in magnitude (naming
        it), labels not 1-D, or ``len(labels)`` different from the number of utilities: nothing
        charged or drawn.
    TypeError
        utilities that are not numbers (or a device array without DLPack), labels that are not a
        sequence or an array (a dict), ``params`` together with keywords that differ from their
        defaults, or neither epsilon and sensitivity nor ``params``: nothing charged or drawn.
    BudgetExceeded
        The context's accountant refuses the release: nothing is charged or drawn.
    BackendUnavailable
        ``backend=Backend.GPU`` (or device utilities) without a usable GPU.

    Notes
    -----
    Each call is epsilon-DP for utilities of sensitivity Delta under exact arithmetic:

    - EXPONENTIAL: P(r) proportional to exp(epsilon u(r) / (2 Delta)) (exp(epsilon u(r) / Delta)
      when monotone), sampled exactly as the arg-max of the scaled utilities plus Gumbel noise
      (Dwork & Roth 2014, Def 3.4, Thm 3.10). With probability >= 1 - e^-t the chosen utility is
      at least OPT - (2 Delta / epsilon)(ln(n / ``|OPT set|``) + t) (Dwork & Roth 2014, Thm 3.11).
    - PERMUTE_AND_FLIP: report-noisy-max with one-sided exponential noise of scale
      2 Delta / epsilon (Delta / epsilon when monotone) (McKenna & Sheldon 2020; Ding et al.
      2021), never worse than the exponential mechanism in expected utility.
    - LAPLACE_NOISY_MAX: report-noisy-max with Laplace noise of scale 2 Delta / epsilon
      (Delta / epsilon when monotone; Dwork & Roth 2014, Claim 3.9).

    The computed mechanism is (epsilon + report.slack.epsilon, report.slack.delta)-DP in double
    arithmetic. Ties go to the smallest index. The label is a function of the released index and
    the public labels, so it costs nothing more (post-processing, Dwork & Roth 2014, Prop 2.1).

    Device arrays: the work is ordered on ``stream`` and the call synchronizes that stream before
    it returns, so the array may be reused or freed afterwards. The GIL is released during the
    release.

    Examples
    --------
    >>> context = dpselect.Context.fixed_seed(1)          # NOT PRIVATE: tests only
    >>> pick = dpselect.select(context, [3, 7, 5], epsilon=1.0, sensitivity=1.0,
    ...                        labels=["a", "b", "c"])
    >>> pick.label in ("a", "b", "c")
    True
    """
    params = _selection_params(select, params, keywords)
    where, array = _as_host_or_device(utilities, "utilities")
    labels = _check_labels(labels, _length_of(where, array)[0])
    _warn_if_gpu_unusable(params.backend)
    if where == "host":
        result = _core.select_host(context, array, params)
    else:
        result = _core.select_device(context, array, params, stream)
    return result if labels is None else _attach(result, "_label", labels[result.index])


@_selection_keywords(**_TOP_K)
def select_top_k(
    context: Context,
    utilities: ArrayLike,
    k: int,
    params: SelectionParams | None = None,
    *,
    labels: LabelsLike | None = None,
    stream: int = 0,
    **keywords: Unpack[SelectionKeywords],
) -> TopKSelection:
    """The k candidates of highest noisy score, in order, from one pass (exponential mechanism).

    Parameters
    ----------
    context : Context
        The source of the release's randomness and its accountant.
    utilities : array_like
        One utility per candidate, 1-D, as for :func:`select` (float32/float64 arrays and DLPack
        producers without a copy; anything else converted once with
        ``numpy.asarray(utilities, dtype=numpy.float64)``).
    k : int
        The number of candidates released: 1 <= k <= len(utilities) (k <= 1024 with
        ``backend=Backend.GPU``).
    {selection_keywords}
    labels : sequence or 1-D numpy.ndarray, optional
        One public label per candidate; ``result.labels`` is then the k labels in release order
        (a NumPy array when ``labels`` is one, a list otherwise).
    stream : int, default 0
        For device arrays: the CUDA stream the work is ordered on.

    Returns
    -------
    TopKSelection
        ``indices`` (k indices, largest noisy score first), ``labels`` (or None) and ``report``
        (``per_pick``, ``epsilon_total_basic`` = k * (epsilon / k) <= epsilon, ``rho``).

    Raises
    ------
    InvalidArgument
        k = 0 or k > len(utilities), a mechanism other than EXPONENTIAL, or a bad parameter, as
        for :func:`select`: nothing charged or drawn.
    ValueError, TypeError, BudgetExceeded, BackendUnavailable
        As for :func:`select`.

    Notes
    -----
    Gumbel noise of the exponential mechanism's scale added once, with the k largest noisy
    scores reported in order, has exactly the distribution of k rounds of peeling exponential
    mechanism with epsilon' = epsilon / k each (Durfee & Rogers 2019). The k picks together are
    epsilon-DP by basic composition (Dwork & Roth 2014, Thm 3.16) and (k epsilon'^2 / 8)-zCDP
    (each round is epsilon'-bounded-range, Cesar & Rogers 2021):
    ``report.rho``, convertible with :func:`epsilon_from_zcdp_tight` (Canonne, Kamath & Steinke
    2020, Cor 13). The accountant is charged the k picks together before any noise is drawn.
    Labels are public and cost nothing (post-processing). Device arrays: ordered on ``stream``,
    which the call synchronizes.
    """
    params = _selection_params(select_top_k, params, keywords)
    where, array = _as_host_or_device(utilities, "utilities")
    labels = _check_labels(labels, _length_of(where, array)[0])
    _warn_if_gpu_unusable(params.backend)
    if where == "host":
        result = _core.top_k_host(context, array, k, params)
    else:
        result = _core.top_k_device(context, array, k, params, stream)
    return result if labels is None else _attach(result, "_labels", _pick_labels(labels, result.indices))


@_selection_keywords(epsilon=_ROW_EPSILONS, utility_reference=_ZERO_REFERENCE)
def select_rows(
    context: Context,
    utilities: ArrayLike,
    params: SelectionParams | None = None,
    *,
    epsilon: float | ArrayLike | None = None,
    labels: LabelsLike | None = None,
    stream: int = 0,
    **keywords: Unpack[SelectionKeywordsWithoutEpsilon],
) -> RowsSelection:
    """One private release per row of a 2-D matrix (rows x cols): private token selection, one pick per row.

    Parameters
    ----------
    context : Context
        The source of the releases' randomness and their accountant.
    utilities : array_like
        A rows x cols matrix, row r holding the utilities of row r's candidates. C-contiguous
        float32/float64 NumPy arrays and DLPack producers (CuPy, PyTorch, JAX) in host or CUDA
        device memory are read without a copy (device memory runs on the GPU); anything else in
        host memory (nested lists, integer arrays, ...) is converted once with
        ``numpy.asarray(utilities, dtype=numpy.float64)``.
    {selection_keywords}
    labels : sequence or 1-D numpy.ndarray, optional
        One public label per column (the candidates every row chooses among); ``result.labels``
        is then the chosen label of each row (a NumPy array when ``labels`` is one, a list
        otherwise).
    stream : int, default 0
        For device matrices: the CUDA stream (a cudaStream_t as an int, 0 the default stream) the
        work is ordered on; the call synchronizes it.

    Returns
    -------
    RowsSelection
        ``indices`` (a NumPy int64 array, the chosen column of each row), ``labels`` (or None),
        ``streams`` (uint64), ``reports`` and ``selections`` (one Selection per row).

    Raises
    ------
    InvalidArgument
        A bad parameter (a per-row epsilon named ``epsilon[r]``) or an empty matrix (nothing
        charged or drawn); a NaN or +inf utility found during the pass (named ``utilities[r, c]``-style
        by the library).
    ValueError
        A matrix that is not 2-D, a strided float array, an integer beyond 2**53, per-row epsilons
        that are not 1-D, not one per row or in device memory, or ``len(labels)`` different from
        the number of columns: nothing charged or drawn.
    TypeError, BudgetExceeded, BackendUnavailable
        As for :func:`select`.

    Notes
    -----
    Each row is a separate release (sources as for :func:`select`), epsilon-DP at its own
    epsilon, with its own stream: row r's pick equals a :func:`select` over row r at row r's
    epsilon as the context's (first stream + r)-th release. The accountant is charged every row
    together (one release per row at its epsilon), before any stream is drawn. Rows about the same
    data compose: the sum of the rows' epsilons by basic composition (Dwork & Roth 2014, Thm 3.16).
    Labels are public and cost nothing (post-processing). Device matrices: the work is ordered on
    ``stream``, which the call synchronizes; the indices come back in host memory.
    """
    where, array = _as_host_or_device(utilities, "utilities", ndim=2)
    rows, columns = _length_of(where, array)
    row_epsilons = _row_epsilons(epsilon, rows)
    if row_epsilons is not None:
        epsilon = float(row_epsilons[0])  # every row's own epsilon is passed on; C++ ignores this one
    params = _selection_params(select_rows, params, {"epsilon": epsilon, **keywords})
    labels = _check_labels(labels, columns, "columns")
    _warn_if_gpu_unusable(params.backend)
    if where == "host":
        result = (_core.rows_host(context, array, params) if row_epsilons is None
                  else _core.rows_host_per_row(context, array, params, row_epsilons))
    else:
        result = (_core.rows_device(context, array, params, stream) if row_epsilons is None
                  else _core.rows_device_per_row(context, array, params, row_epsilons, stream))
    return result if labels is None else _attach(result, "_labels", _pick_labels(labels, result.indices))


def _row_epsilons(epsilon, rows: int):
    """None for one epsilon (a number, or None), else the checked float64 array of one per row."""
    if epsilon is None or isinstance(epsilon, (numbers.Real, bool)):
        return None  # one epsilon (SelectionParams checks it)
    if isinstance(epsilon, (str, bytes)):
        raise _type_error("epsilon", epsilon, "float")
    where, values = _as_host_or_device(epsilon, "epsilon", dtypes=(np.dtype(np.float64),))
    if where != "host":
        raise ValueError("epsilon must be in host memory when it gives one value per row (got a device array); "
                         "copy it to the host (epsilon.cpu(), cupy.asnumpy(epsilon))")
    if len(values) != rows:
        raise ValueError(f"epsilon has {len(values)} entries but utilities has {rows} rows: give one epsilon per "
                         "row, or one number for every row")
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if len(bad) != 0:
        first = int(bad[0])
        raise InvalidArgument(f"dpselect: epsilon[{first}] must be finite and > 0 (got {float(values[first])!r})")
    return values


@_selection_keywords(epsilon=_EACH_RELEASE_EPSILON, utility_reference=_ZERO_REFERENCE)
def select_repeated(
    context: Context,
    utilities: ArrayLike,
    releases: int,
    params: SelectionParams | None = None,
    *,
    labels: LabelsLike | None = None,
    **keywords: Unpack[SelectionKeywords],
) -> RowsSelection:
    """``releases`` independent releases over one row of utilities (Monte Carlo studies, the auditor).

    Parameters
    ----------
    context : Context
        The source of the releases' randomness and their accountant.
    utilities : array_like
        One utility per candidate, 1-D, in host memory, as for :func:`select` (converted once
        with ``numpy.asarray(utilities, dtype=numpy.float64)`` unless float32/float64).
    releases : int
        The number of releases, >= 1. Every release is held in memory until the call returns:
        make large studies in batches.
    {selection_keywords}
    labels : sequence or 1-D numpy.ndarray, optional
        One public label per candidate; ``result.labels`` is then each release's label.

    Returns
    -------
    RowsSelection
        ``indices`` (a NumPy int64 array, one index per release), ``labels`` (or None),
        ``streams``, ``reports`` and ``selections``.

    Raises
    ------
    InvalidArgument
        releases = 0, or as for :func:`select`.
    ValueError, TypeError, BudgetExceeded, BackendUnavailable
        As for :func:`select` (device memory is a ValueError here).

    Notes
    -----
    Release i equals the context's (first stream + i)-th :func:`select` (sources there). The
    releases are about the same data, so they compose: the accountant is charged ``releases``
    releases of epsilon (releases * epsilon in all, Dwork & Roth 2014, Thm 3.16) before any
    stream is drawn.
    """
    params = _selection_params(select_repeated, params, keywords)
    where, array = _as_host_or_device(utilities, "utilities")
    if where != "host":
        raise ValueError("select_repeated takes host memory from Python so far; copy the row to the host")
    labels = _check_labels(labels, _length_of(where, array)[0])
    _warn_if_gpu_unusable(params.backend)
    result = _core.repeated_host(context, array, params, releases)
    return result if labels is None else _attach(result, "_labels", _pick_labels(labels, result.indices))


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
