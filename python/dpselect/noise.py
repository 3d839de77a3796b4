# SPDX-License-Identifier: Apache-2.0
"""Noise vectors, secure (floating-point-safe) noise and private answers to counting queries.

Every release here adds noise IN PLACE to a 1-D float64 array: a writable, C-contiguous NumPy
array or any ``__dlpack__`` producer in host memory (and, for ``add_noise`` and
``add_secure_noise``, CUDA device memory, on ``stream``). Nothing is copied, so an array of another
dtype, a list, a read-only array or a strided view is refused with a message that says how to fix
it: unlike the other entry points, these never convert with ``numpy.asarray(x, dtype=float64)``,
since the noise would go into a copy the caller never sees.
Each call charges the context's accountant once (the answerer's three parts together) and then
draws fresh streams from its context; a refused call (bad parameter or value, budget exceeded)
writes nothing, charges nothing and draws no stream. The GIL is released during every release.

- ``add_noise``: Laplace (Dwork & Roth 2014, Thm 3.6), analytic Gaussian (Balle & Wang 2018) or
  generalized Gaussian (Ganesh & Zhao 2021) noise computed in floating point (its low-order bits
  are not protected: Mironov 2012).
- ``add_secure_noise``: discrete Laplace or discrete Gaussian noise on a power-of-two grid
  (Canonne, Kamath & Steinke 2020), safe against the floating-point attack of Mironov 2012.
- ``answer_counting_queries``: k counting queries with a small L-infinity error, the generalized
  Gaussian mechanism repaired by the sparse vector technique (Ganesh & Zhao 2021).
"""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

from ._checks import check_module as _check_module
from . import _dpselect as _core
from ._arrays import FLOAT64, SupportsDLPack, as_host_or_device, keywords_given, params_of
from ._dpselect import (
    Backend,
    Context,
    GeneralizedGaussianChoice,
    LinfAnswerParams,
    LinfAnswerPlan,
    LinfAnswerReport,
    NoiseDistribution,
    NoiseVectorParams,
    NoiseVectorReport,
    SecureDistribution,
    SecureNoiseParams,
    SecureNoisePlan,
    SecureNoiseReport,
    analytic_gaussian_sigma,
    discrete_gaussian_delta,
    gaussian_delta,
    generalized_gaussian_abs_cdf,
    generalized_gaussian_best_p,
    generalized_gaussian_delta,
    generalized_gaussian_expected_linf,
    generalized_gaussian_recommended_p,
    generalized_gaussian_sigma,
)

__all__ = [
    "GeneralizedGaussianChoice", "LinfAnswerParams", "LinfAnswerPlan", "LinfAnswerReport", "NoiseDistribution",
    "NoiseVectorParams", "NoiseVectorReport", "SecureDistribution", "SecureNoiseParams", "SecureNoisePlan",
    "SecureNoiseReport", "add_noise", "add_secure_noise", "analytic_gaussian_sigma", "answer_counting_queries",
    "discrete_gaussian_delta", "gaussian_delta", "generalized_gaussian_abs_cdf", "generalized_gaussian_best_p",
    "generalized_gaussian_delta", "generalized_gaussian_expected_linf", "generalized_gaussian_recommended_p",
    "generalized_gaussian_sigma", "noise_vector_scale", "plan_linf_answers", "secure_noise_plan",
]


# What the in-place releases take: a writable float64 array, in host memory or on a device.
WritableArray = Union[npt.NDArray[np.float64], SupportsDLPack]


def _writable_float64(values, name: str):
    """("host", array) or ("device", dlpack_object) for an in-place release; raises TypeError/ValueError."""
    where, array = as_host_or_device(values, name, dtypes=FLOAT64, convert=False,
                                     why="the noise is added in place, so keep the converted array")
    if where == "host" and not array.flags.writeable:
        raise ValueError(
            f"{name} is read-only, and the noise is added in place: pass a writable copy "
            f"({name}.copy()) and read the noisy values from it"
        )
    return where, array


def noise_vector_scale(
    coordinates: int,
    params: NoiseVectorParams | None = None,
    *,
    epsilon: float | None = None,
    distribution: NoiseDistribution = NoiseDistribution.LAPLACE,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    p: float = 2.0,
    backend: Backend = Backend.AUTO,
) -> float:
    """The noise scale :func:`add_noise` would use for ``coordinates`` values (its report.scale).

    Parameters
    ----------
    coordinates : int
        The number of values, >= 1.
    params : NoiseVectorParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon, distribution, delta, sensitivity, p, backend
        As for :func:`add_noise`.

    Returns
    -------
    float
        LAPLACE: b = sensitivity / epsilon (Dwork & Roth 2014, Thm 3.6); GAUSSIAN: the analytic
        Gaussian standard deviation (Balle & Wang 2018); GENERALIZED_GAUSSIAN: sensitivity *
        generalized_gaussian_sigma(epsilon, delta, p, coordinates) (Ganesh & Zhao 2021).

    Raises
    ------
    InvalidArgument
        A bad parameter, as add_noise checks it. Draws and charges nothing.
    TypeError
        ``params`` together with keywords, or neither epsilon nor ``params``.
    """
    fields = {"epsilon": epsilon, "distribution": distribution, "delta": delta, "sensitivity": sensitivity, "p": p,
              "backend": backend}
    params = params_of(NoiseVectorParams, params, fields, noise_vector_scale.__kwdefaults__, ("epsilon",))
    return _core.noise_vector_scale(params, coordinates)


def add_noise(
    context: Context,
    values: WritableArray,
    params: NoiseVectorParams | None = None,
    *,
    epsilon: float | None = None,
    distribution: NoiseDistribution = NoiseDistribution.LAPLACE,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    p: float = 2.0,
    backend: Backend = Backend.AUTO,
    stream: int = 0,
) -> NoiseVectorReport:
    """Adds noise to every value IN PLACE: values[i] += z_i, z_i independent.

    Parameters
    ----------
    context : Context
        The source of the noise and its accountant.
    values : numpy.ndarray or DLPack array
        A writable, C-contiguous 1-D float64 array in host memory (NumPy, or DLPack on the CPU)
        or on a CUDA device (CuPy, PyTorch, JAX). Never converted: a list or an array of another
        dtype is refused (the noise would go into a copy).
    params : NoiseVectorParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss, finite and > 0. Required unless ``params`` is given.
    distribution : NoiseDistribution, default NoiseDistribution.LAPLACE
        LAPLACE, GAUSSIAN or GENERALIZED_GAUSSIAN.
    delta : float, default 0.0
        0 for LAPLACE, in (0, 1) otherwise.
    sensitivity : float, default 1.0
        The sensitivity of the whole vector, finite and > 0: L1 (LAPLACE), L2 (GAUSSIAN) or
        L-infinity (GENERALIZED_GAUSSIAN).
    p : float, default 2.0
        The GENERALIZED_GAUSSIAN exponent, in [1, 32] (ignored otherwise).
    backend : Backend, default Backend.AUTO
        AUTO or CPU run on the CPU cores for host memory; GPU copies to the device.
    stream : int, default 0
        For device values: the CUDA stream (a cudaStream_t as an int, 0 the default) the work is
        ordered on; the call synchronizes it before returning.

    Returns
    -------
    NoiseVectorReport
        The distribution, its scale, the coordinates and the stream drawn (public).

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad parameter or a value that is not finite, naming it (``values[i]``).
    TypeError
        values that are not a float64 array, ``params`` together with keywords, or neither
        epsilon nor ``params``.
    ValueError
        A read-only, strided or non-1-D array.
    BudgetExceeded
        The context's accountant refuses the release.

    In every case nothing is written, charged or drawn.

    Notes
    -----
    For the sensitivity stated of the whole vector:

    - LAPLACE: epsilon-DP for L1 sensitivity, z_i ~ Lap(sensitivity / epsilon) (Dwork & Roth
      2014, Thm 3.6);
    - GAUSSIAN: (epsilon, delta)-DP for L2 sensitivity, z_i ~ N(0, s^2) with s the analytic
      Gaussian sigma (Balle & Wang 2018);
    - GENERALIZED_GAUSSIAN: (epsilon, delta)-DP for L-infinity sensitivity, density proportional
      to ``exp(-(|z|/sigma)^p)`` (Ganesh & Zhao 2021).

    The noise is computed in floating point, whose low-order bits are not protected (Mironov
    2012): use :func:`add_secure_noise` where that matters. The GIL is released during the
    release.
    """
    fields = {"epsilon": epsilon, "distribution": distribution, "delta": delta, "sensitivity": sensitivity, "p": p,
              "backend": backend}
    params = params_of(NoiseVectorParams, params, fields, add_noise.__kwdefaults__, ("epsilon",))
    where, array = _writable_float64(values, "values")
    if where == "host":
        return _core.add_noise_host(context, array, params)
    return _core.add_noise_device(context, array, params, stream)


def secure_noise_plan(
    coordinates: int,
    params: SecureNoiseParams | None = None,
    *,
    epsilon: float | None = None,
    sensitivity: float | None = None,
    distribution: SecureDistribution = SecureDistribution.LAPLACE,
    delta: float = 0.0,
    inputs_on_grid: bool = False,
) -> SecureNoisePlan:
    """What :func:`add_secure_noise` does for ``coordinates`` values: its grid and integer scale.

    Parameters
    ----------
    coordinates : int
        The number of values, >= 1.
    params : SecureNoiseParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon, sensitivity, distribution, delta, inputs_on_grid
        As for :func:`add_secure_noise`.

    Returns
    -------
    SecureNoisePlan
        The power-of-two granularity and the integer noise scale.

    Raises
    ------
    InvalidArgument
        A bad parameter, naming it and its value. Draws and charges nothing.
    TypeError
        ``params`` together with keywords, or neither epsilon and sensitivity nor ``params``.
    """
    fields = {"epsilon": epsilon, "sensitivity": sensitivity, "distribution": distribution, "delta": delta,
              "inputs_on_grid": inputs_on_grid}
    params = params_of(SecureNoiseParams, params, fields, secure_noise_plan.__kwdefaults__, ("epsilon", "sensitivity"))
    return _core.secure_noise_plan(params, coordinates)


def add_secure_noise(
    context: Context,
    values: WritableArray,
    params: SecureNoiseParams | None = None,
    *,
    epsilon: float | None = None,
    sensitivity: float | None = None,
    distribution: SecureDistribution = SecureDistribution.LAPLACE,
    delta: float = 0.0,
    inputs_on_grid: bool = False,
    stream: int = 0,
) -> SecureNoiseReport:
    """Replaces every value IN PLACE by a floating-point-safe noisy release on a grid.

    Parameters
    ----------
    context : Context
        The source of the noise and its accountant.
    values : numpy.ndarray or DLPack array
        As for :func:`add_noise`: a writable 1-D float64 array, host or device, never converted.
    params : SecureNoiseParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss, finite and > 0. Required unless ``params`` is given.
    sensitivity : float
        The L1 (LAPLACE) or L2 (GAUSSIAN) sensitivity of the whole vector, finite and > 0.
        Required unless ``params`` is given.
    distribution : SecureDistribution, default SecureDistribution.LAPLACE
        LAPLACE (discrete Laplace) or GAUSSIAN (discrete Gaussian).
    delta : float, default 0.0
        0 for LAPLACE, in (0, 1) for GAUSSIAN.
    inputs_on_grid : bool, default False
        Every value is already a multiple of the plan's granularity (e.g. integer counts when it
        is <= 1), which saves the rounding penalty; a value off the grid is then refused.
    stream : int, default 0
        For device values: the CUDA stream the work is ordered on; the call synchronizes it.

    Returns
    -------
    SecureNoiseReport
        The plan (as :func:`secure_noise_plan` gives it) and the stream drawn.

    Raises
    ------
    InvalidArgument, TypeError, ValueError, BudgetExceeded
        As for :func:`add_noise`: nothing is written, charged or drawn.

    Notes
    -----
    Every output is a multiple of a power-of-two granularity g: y = g (rint(x / g) + N), N an
    exact integer sample, discrete Laplace (epsilon-DP for L1 sensitivity) or discrete Gaussian
    ((epsilon, delta)-DP for L2 sensitivity, via zCDP) (Canonne, Kamath & Steinke 2020), so the
    released double leaks nothing through its low-order bits (Mironov 2012).
    """
    fields = {"epsilon": epsilon, "sensitivity": sensitivity, "distribution": distribution, "delta": delta,
              "inputs_on_grid": inputs_on_grid}
    params = params_of(SecureNoiseParams, params, fields, add_secure_noise.__kwdefaults__, ("epsilon", "sensitivity"))
    where, array = _writable_float64(values, "values")
    if where == "host":
        return _core.add_secure_noise_host(context, array, params)
    return _core.add_secure_noise_device(context, array, params, stream)


def plan_linf_answers(
    queries: int,
    params: LinfAnswerParams | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    beta: float = 0.05,
    p: float = 0.0,
    max_repairs: int = 0,
    repair_with_sparse_vector: bool = True,
) -> LinfAnswerPlan:
    """The plan of :func:`answer_counting_queries` for ``queries`` answers, from the parameters alone.

    Parameters
    ----------
    queries : int
        The number of counting queries, >= 1.
    params : LinfAnswerParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The total privacy loss, finite and > 0. Required unless ``params`` is given.
    delta : float
        The total delta, in (0, 1). Required unless ``params`` is given.
    beta : float, default 0.05
        The failure probability of the plan's error bound, in (0, 1).
    p : float, default 0.0
        The generalized Gaussian exponent, in [1, 32]; 0: the planner chooses.
    max_repairs : int, default 0
        The most coordinates the sparse vector may flag; 0: the planner chooses.
    repair_with_sparse_vector : bool, default True
        False uses the generalized Gaussian alone.

    Returns
    -------
    LinfAnswerPlan
        The noise, the sparse vector check and the repairs, with the error ``bound`` that holds
        with probability >= 1 - beta. Public: a function of the parameters alone.

    Raises
    ------
    InvalidArgument
        A bad parameter, naming it and its value.
    TypeError
        ``params`` together with keywords, or neither epsilon and delta nor ``params``.

    Notes
    -----
    Deterministic and cached; each candidate (p, budget split) costs one generalized Gaussian
    calibration (~0.1-1 s), up to 28 when the planner chooses p (Ganesh & Zhao 2021).
    """
    fields = {"epsilon": epsilon, "delta": delta, "beta": beta, "p": p, "max_repairs": max_repairs,
              "repair_with_sparse_vector": repair_with_sparse_vector}
    params = params_of(LinfAnswerParams, params, fields, plan_linf_answers.__kwdefaults__, ("epsilon", "delta"))
    return _core.plan_linf_answers(params, queries)


def answer_counting_queries(
    context: Context,
    answers: npt.NDArray[np.float64],
    params: LinfAnswerParams | LinfAnswerPlan | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    beta: float = 0.05,
    p: float = 0.0,
    max_repairs: int = 0,
    repair_with_sparse_vector: bool = True,
) -> LinfAnswerReport:
    """Replaces the answers of counting queries IN PLACE by private ones with a small L-infinity error.

    Parameters
    ----------
    context : Context
        The source of the noise and its accountant.
    answers : numpy.ndarray
        The true answers, each of sensitivity 1 (a neighbouring dataset changes every answer by
        at most 1): a writable 1-D float64 array in host memory, never converted (a list or an
        array of another dtype is refused: the answers are replaced in place).
    params : LinfAnswerParams or LinfAnswerPlan, optional
        All the parameters at once, or a plan made by :func:`plan_linf_answers` and possibly
        edited (everything the privacy rests on is checked again); then leave the keywords at
        their defaults.
    epsilon, delta, beta, p, max_repairs, repair_with_sparse_vector
        As for :func:`plan_linf_answers`.

    Returns
    -------
    LinfAnswerReport
        The plan, the repaired coordinates' count and the streams drawn.

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad parameter or answer (naming ``answers[i]``).
    TypeError
        answers that are not a float64 array, a plan or params together with keywords.
    ValueError
        A read-only, strided, non-1-D or device array.
    BudgetExceeded
        The context's accountant refuses the release.

    In every case nothing is written, charged or drawn.

    Notes
    -----
    Generalized Gaussian noise is added to every answer, the sparse vector technique (Dwork &
    Roth 2014, Thm 3.25) flags the coordinates whose noise came out large, and those are
    answered again with fresh Gaussian noise; the three parts compose to (epsilon, delta)
    (Dwork & Roth 2014, Thm 3.16) and are charged together.
    """
    fields = {"epsilon": epsilon, "delta": delta, "beta": beta, "p": p, "max_repairs": max_repairs,
              "repair_with_sparse_vector": repair_with_sparse_vector}
    if isinstance(params, LinfAnswerPlan):
        given = keywords_given(fields, answer_counting_queries.__kwdefaults__)
        if given:
            raise TypeError(f"give a plan or keyword arguments, not both (got a plan and {given})")
        plan_or_params = params
    else:
        plan_or_params = params_of(LinfAnswerParams, params, fields, answer_counting_queries.__kwdefaults__,
                                   ("epsilon", "delta"))
    where, array = _writable_float64(answers, "answers")
    if where != "host":
        raise ValueError("answer_counting_queries takes host memory; copy the answers to the host")
    return _core.answer_counting_queries_host(context, array, plan_or_params)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
