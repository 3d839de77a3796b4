# SPDX-License-Identifier: Apache-2.0
"""Noise vectors, secure (floating-point-safe) noise and private answers to counting queries.

Every release here adds noise IN PLACE to a 1-D float64 array: a writable, C-contiguous NumPy
array or any ``__dlpack__`` producer in host memory (and, for ``add_noise`` and
``add_secure_noise``, CUDA device memory, on ``stream``). Nothing is copied, so an array of another
dtype, a read-only array or a strided view is refused with a message that says how to fix it.
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

from . import _dpselect as _core
from ._arrays import as_float64, params_of
from ._dpselect import (
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


def _writable_float64(values, name: str):
    """("host", array) or ("device", dlpack_object) for an in-place release; raises TypeError/ValueError."""
    where, array = as_float64(values, name, "the noise is added in place, so keep the converted array")
    if where == "host" and not array.flags.writeable:
        raise ValueError(
            f"{name} is read-only, and the noise is added in place: pass a writable copy "
            f"({name}.copy()) and read the noisy values from it"
        )
    return where, array


def noise_vector_scale(coordinates: int, params: NoiseVectorParams | None = None, **fields) -> float:
    """The noise scale ``add_noise`` would use for ``coordinates`` values (its report.scale).

    LAPLACE: b = sensitivity / epsilon (Dwork & Roth 2014, Thm 3.6); GAUSSIAN: the analytic
    Gaussian standard deviation (Balle & Wang 2018); GENERALIZED_GAUSSIAN: sensitivity *
    generalized_gaussian_sigma(epsilon, delta, p, coordinates) (Ganesh & Zhao 2021). Checks the
    parameters as add_noise does (InvalidArgument); draws and charges nothing.
    """
    return _core.noise_vector_scale(params_of(NoiseVectorParams, params, fields), coordinates)


def add_noise(context: Context, values, params: NoiseVectorParams | None = None, *, stream: int = 0,
              **fields) -> NoiseVectorReport:
    """Adds noise to every value IN PLACE: values[i] += z_i, z_i independent.

    ``values``: a writable 1-D float64 array in host memory (NumPy, or DLPack on the CPU) or on a
    CUDA device (CuPy, PyTorch, JAX; ordered on ``stream``, a cudaStream_t as an int, 0 the
    default). ``params`` (a NoiseVectorParams) or its fields as keywords: ``epsilon``,
    ``distribution``, ``delta``, ``sensitivity``, ``p``, ``backend``. The guarantee, for the
    sensitivity stated of the whole vector:

    - LAPLACE: epsilon-DP for L1 sensitivity, z_i ~ Lap(sensitivity / epsilon) (Dwork & Roth 2014,
      Thm 3.6);
    - GAUSSIAN: (epsilon, delta)-DP for L2 sensitivity, z_i ~ N(0, s^2) with s the analytic
      Gaussian sigma (Balle & Wang 2018);
    - GENERALIZED_GAUSSIAN: (epsilon, delta)-DP for L-infinity sensitivity, density proportional
      to exp(-(|z|/sigma)^p) (Ganesh & Zhao 2021).

    The noise is computed in floating point, whose low-order bits are not protected (Mironov
    2012): use add_secure_noise where that matters. Raises InvalidArgument (a ValueError) naming
    the parameter or ``values[i]``, or BudgetExceeded: in both cases nothing is written, charged
    or drawn.
    """
    params = params_of(NoiseVectorParams, params, fields)
    where, array = _writable_float64(values, "values")
    if where == "host":
        return _core.add_noise_host(context, array, params)
    return _core.add_noise_device(context, array, params, stream)


def secure_noise_plan(coordinates: int, params: SecureNoiseParams | None = None, **fields) -> SecureNoisePlan:
    """What ``add_secure_noise`` does for ``coordinates`` values: its grid and integer scale.

    Checks the parameters (InvalidArgument naming the parameter and value); draws and charges
    nothing.
    """
    return _core.secure_noise_plan(params_of(SecureNoiseParams, params, fields), coordinates)


def add_secure_noise(context: Context, values, params: SecureNoiseParams | None = None, *,
                     stream: int = 0, **fields) -> SecureNoiseReport:
    """Replaces every value IN PLACE by a floating-point-safe noisy release on a grid.

    Every output is a multiple of a power-of-two granularity g: y = g (rint(x / g) + N), N an exact
    integer sample, discrete Laplace (epsilon-DP for L1 sensitivity) or discrete Gaussian
    ((epsilon, delta)-DP for L2 sensitivity, via zCDP) (Canonne, Kamath & Steinke 2020), so the
    released double leaks nothing through its low-order bits (Mironov 2012). ``params`` (a
    SecureNoiseParams) or its fields as keywords: ``epsilon``, ``sensitivity``, ``distribution``,
    ``delta``, ``inputs_on_grid``. ``values`` and ``stream`` as for add_noise. The report's plan
    is secure_noise_plan's. Raises InvalidArgument or BudgetExceeded with nothing written,
    charged or drawn.
    """
    params = params_of(SecureNoiseParams, params, fields)
    where, array = _writable_float64(values, "values")
    if where == "host":
        return _core.add_secure_noise_host(context, array, params)
    return _core.add_secure_noise_device(context, array, params, stream)


def plan_linf_answers(queries: int, params: LinfAnswerParams | None = None, **fields) -> LinfAnswerPlan:
    """The plan of ``answer_counting_queries`` for ``queries`` answers, from the parameters alone.

    ``params`` (a LinfAnswerParams) or its fields as keywords: ``epsilon``, ``delta``, ``beta``,
    ``p``, ``max_repairs``, ``repair_with_sparse_vector``. Deterministic and cached; each
    candidate (p, budget split) costs one generalized Gaussian calibration (~0.1-1 s), up to 28
    when the planner chooses p. Raises InvalidArgument naming the parameter and value.
    """
    return _core.plan_linf_answers(params_of(LinfAnswerParams, params, fields), queries)


def answer_counting_queries(context: Context, answers, params: LinfAnswerParams | LinfAnswerPlan | None = None,
                            **fields) -> LinfAnswerReport:
    """Replaces the true answers of counting queries IN PLACE by private answers with a small
    L-infinity error (Ganesh & Zhao 2021).

    Each answer must have sensitivity 1 (a neighbouring dataset changes every answer by at most
    1). Generalized Gaussian noise is added to every answer, the sparse vector technique (Dwork &
    Roth 2014, Thm 3.25) flags the coordinates whose noise came out large, and those are answered
    again with fresh Gaussian noise; the three parts compose to (epsilon, delta) (Dwork & Roth
    2014, Thm 3.16) and are charged together. ``answers``: a writable 1-D float64 array in host
    memory. ``params``: a LinfAnswerParams (or its fields as keywords), or a LinfAnswerPlan made
    by plan_linf_answers and possibly edited (everything the privacy rests on is checked again).
    Raises InvalidArgument naming the parameter or ``answers[i]``, or BudgetExceeded: nothing is
    then written, charged or drawn.
    """
    if not isinstance(params, LinfAnswerPlan):
        params = params_of(LinfAnswerParams, params, fields)
    elif fields:
        raise TypeError(f"give a plan or keyword arguments, not both (got a plan and {sorted(fields)})")
    where, array = _writable_float64(answers, "answers")
    if where != "host":
        raise ValueError("answer_counting_queries takes host memory; copy the answers to the host")
    return _core.answer_counting_queries_host(context, array, params)
