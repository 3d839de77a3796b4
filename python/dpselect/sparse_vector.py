# SPDX-License-Identifier: Apache-2.0
"""The sparse vector technique: which queries of a stream are above a threshold.

A stream of query values f_1(D), f_2(D), ... (each of sensitivity Delta) is compared with a noisy
threshold: each is answered "below" until one clears it, which is answered "above", and after
``max_positives`` (c) "above" answers the run halts. Only the pattern of answers (and for
NumericSparse a noisy value of each "above") is released, and the privacy cost does not grow
with the number of "below" answers: AboveThreshold and Sparse (Dwork & Roth 2014, Alg. 1 and 2,
Thm 3.23 and 3.25), NumericSparse (Thm 3.27), and the optimized variant of Lyu, Su & Li (VLDB
2017, Alg. 1 and 7).

:class:`SparseVector` answers one query at a time (adaptive); :func:`sparse_vector_batch` answers
an array of values at once, on all cores or on the GPU. For the same key and stream both give
the same answers. The batch reads float64: a float64 array without a copy, anything else in host
memory (lists, integer or float32 arrays) converted once with
``numpy.asarray(values, dtype=numpy.float64)`` (an integer beyond 2**53 is a ValueError).

Example (AboveThreshold)::

    import dpselect
    svt = dpselect.SparseVector(dpselect.Context(), epsilon=1.0, sensitivity=1.0, threshold=100.0)
    for answer in svt.answers(query_values):     # stops after the "above" answer
        ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ._checks import check_module as _check_module
from . import _dpselect as _core
from ._arrays import FLOAT64, ArrayLike, as_host_or_device, check_exact_number, params_of
from ._dpselect import (
    Context,
    SparseVectorAbove,
    SparseVectorAlgorithm,
    SparseVectorAnswer,
    SparseVectorBatch,
    SparseVectorParams,
    SparseVectorReport,
    SparseVectorScales,
    exponential_mechanism_alpha,
    exponential_mechanism_beta,
    sparse_vector_alpha,
    sparse_vector_beta,
    sparse_vector_scales,
)

__all__ = [
    "SparseVector", "SparseVectorAbove", "SparseVectorAlgorithm", "SparseVectorAnswer", "SparseVectorBatch",
    "SparseVectorParams", "SparseVectorReport", "SparseVectorScales", "exponential_mechanism_alpha",
    "exponential_mechanism_beta", "sparse_vector_alpha", "sparse_vector_batch", "sparse_vector_beta",
    "sparse_vector_scales",
]

# The Notes of SparseVector and sparse_vector_batch (one run, two ways to answer it), written once.
# NumericSparse's split is the library's (sparse_vector_scales' epsilon_comparisons and
# epsilon_answers; docs/cpp-api.md), whose shares sum to epsilon.
_NOTES = """AboveThreshold (c = 1) and Sparse (Dwork & Roth 2014, Alg 1 and 2, Thm 3.23 and 3.25):
    a noisy threshold T + Lap(sigma), each query compared after adding Lap(2 sigma), with
    sigma = 2 c Delta / epsilon (delta = 0) or sqrt(32 c ln(1/delta)) Delta / epsilon, a fresh
    threshold after each "above". NumericSparse splits epsilon between the comparisons and the
    answers, 8/9 and 1/9 for delta = 0, sqrt(512) / (sqrt(512) + 1) and 1 / (sqrt(512) + 1) for
    delta > 0 (``scales.epsilon_comparisons`` and ``scales.epsilon_answers`` of
    :func:`sparse_vector_scales`), and each "above" also releases its query value plus Laplace
    noise of scale ``scales.answer_noise`` (Dwork & Roth 2014, Alg 3, Thm 3.27, 3.28). LYU_SU_LI:
    Lyu, Su & Li 2017, Alg 1 and 7. The run is (epsilon, delta)-DP whatever the number of "below"
    answers; the report's slack adds the floating-point part. :func:`sparse_vector_alpha` gives
    the accuracy (Dwork & Roth 2014, Thm 3.24, 3.28)."""


def _with_notes(documented):
    # Python run with -OO has no docstrings to fill.
    if documented.__doc__ is not None:
        documented.__doc__ = documented.__doc__.replace("%(notes)s", _NOTES)
    return documented


@_with_notes
class SparseVector(_core.SparseVector):
    """The streaming, adaptive sparse vector technique: one query value at a time.

    The constructor validates the parameters, charges the context's accountant once (epsilon,
    or (epsilon, delta)) and draws a fresh stream.

    Parameters
    ----------
    context : Context
        The source of the run's randomness and its accountant.
    params : SparseVectorParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss of the whole run (finite, > 0), however many queries are answered
        "below". Required unless ``params`` is given.
    sensitivity : float
        Delta of every query, finite and > 0. Required unless ``params`` is given.
    threshold : float
        The public threshold T, finite. Required unless ``params`` is given.
    delta : float, default 0.0
        0 (pure DP) or in (0, 1) for the advanced-composition scales (DWORK_ROTH only).
    max_positives : int, default 1
        c: the run halts after this many "above" answers (1: AboveThreshold), >= 1.
    numeric : bool, default False
        NumericSparse: every "above" answer also releases a noisy value of its query.
    value_bound : float, default 0.0
        A public bound on ``|query value|`` (0: none) that makes the floating-point slack
        independent of the data; a value beyond it is an error.
    algorithm : SparseVectorAlgorithm, default SparseVectorAlgorithm.DWORK_ROTH
        DWORK_ROTH or LYU_SU_LI (delta must be 0).
    monotone : bool, default False
        LYU_SU_LI only: all query values move the same way between neighbours (a false claim
        breaks the guarantee).

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad parameter, naming it and its value: nothing charged or drawn.
    TypeError
        ``params`` together with keywords, or neither epsilon, sensitivity and threshold nor
        ``params``.
    BudgetExceeded
        The context's accountant refuses the run: nothing charged or drawn.

    Notes
    -----
    %(notes)s

    ``answer(value)`` answers the next query, whose true value on the data is ``value`` (an
    integer beyond 2**53 in magnitude is a ValueError that spends nothing);
    ``halted`` / ``spent`` say whether it can answer more; ``report()`` describes the run. A value
    that is not finite (or beyond value_bound) raises InvalidArgument and spends the object;
    answering once it halted or is spent raises UsageError. It cannot be copied or pickled: a copy
    would answer with the same noise. Not thread-safe across threads that share one object.
    """

    def __init__(
        self,
        context: Context,
        params: SparseVectorParams | None = None,
        *,
        epsilon: float | None = None,
        sensitivity: float | None = None,
        threshold: float | None = None,
        delta: float = 0.0,
        max_positives: int = 1,
        numeric: bool = False,
        value_bound: float = 0.0,
        algorithm: SparseVectorAlgorithm = SparseVectorAlgorithm.DWORK_ROTH,
        monotone: bool = False,
    ) -> None:
        fields = {"epsilon": epsilon, "sensitivity": sensitivity, "threshold": threshold, "delta": delta,
                  "max_positives": max_positives, "numeric": numeric, "value_bound": value_bound,
                  "algorithm": algorithm, "monotone": monotone}
        super().__init__(context, params_of(SparseVectorParams, params, fields, SparseVector.__init__.__kwdefaults__,
                                            _REQUIRED))

    def answer(self, value: float) -> SparseVectorAnswer:
        """The answer to the next query, whose true value on the data is ``value``.

        Parameters
        ----------
        value : float
            The query's true value on the data. An integer beyond 2**53 in magnitude, which
            float64 cannot hold exactly, is refused (as :func:`sparse_vector_batch` refuses it).

        Returns
        -------
        SparseVectorAnswer
            ``above``, and for a NumericSparse "above" answer its noisy ``value``.

        Raises
        ------
        ValueError
            An integer beyond 2**53 in magnitude (naming ``value``): nothing is answered and the
            object is not spent.
        InvalidArgument
            A value that is not finite or beyond value_bound (the object is then spent).
        UsageError
            The run had already halted or was spent.
        """
        if type(value) is not float:  # floats, the common case, go straight to the library
            check_exact_number(value, "value")
        return super().answer(value)

    def answers(self, values: Iterable[float]) -> Iterator[SparseVectorAnswer]:
        """The answers to ``values`` in order, ending after the answer that halts the run.

        Parameters
        ----------
        values : iterable of float
            The queries' true values on the data, read lazily: the values after the halting one
            are never read.

        Yields
        ------
        SparseVectorAnswer
            ``above``, and for a NumericSparse "above" answer its noisy ``value``.

        Raises
        ------
        ValueError
            An integer beyond 2**53 in magnitude (naming ``value``): that query is not answered
            and the object is not spent.
        InvalidArgument
            A value that is not finite or beyond value_bound (the object is then spent).
        UsageError
            The run had already halted or was spent.
        """
        for value in values:
            yield self.answer(value)
            if self.halted:
                return


_REQUIRED = ("epsilon", "sensitivity", "threshold")


@_with_notes
def sparse_vector_batch(
    context: Context,
    values: ArrayLike,
    params: SparseVectorParams | None = None,
    *,
    epsilon: float | None = None,
    sensitivity: float | None = None,
    threshold: float | None = None,
    delta: float = 0.0,
    max_positives: int = 1,
    numeric: bool = False,
    value_bound: float = 0.0,
    algorithm: SparseVectorAlgorithm = SparseVectorAlgorithm.DWORK_ROTH,
    monotone: bool = False,
    stream: int = 0,
) -> SparseVectorBatch:
    """The answers a :class:`SparseVector` on the same key and stream would give to ``values``.

    The queries are answered in order up to and including the halting one; the "above" answers
    are returned as a list (every other query before ``report.queries`` was "below").

    Parameters
    ----------
    context : Context
        The source of the run's randomness and its accountant.
    values : array_like
        The queries' true values on the data, 1-D. A float64 array in host memory (NumPy, or
        DLPack on the CPU; searched on all cores) or on a CUDA device (CuPy, PyTorch, JAX;
        searched on the GPU) is read without a copy; anything else in host memory (a list, an
        integer or float32 array) is converted once with
        ``numpy.asarray(values, dtype=numpy.float64)``.
    params : SparseVectorParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss of the whole run (finite, > 0), however many queries are answered
        "below". Required unless ``params`` is given.
    sensitivity : float
        Delta of every query, finite and > 0. Required unless ``params`` is given.
    threshold : float
        The public threshold T, finite. Required unless ``params`` is given.
    delta : float, default 0.0
        0 (pure DP) or in (0, 1) for the advanced-composition scales (DWORK_ROTH only).
    max_positives : int, default 1
        c: the run halts after this many "above" answers (1: AboveThreshold), >= 1.
    numeric : bool, default False
        NumericSparse: every "above" answer also releases a noisy value of its query.
    value_bound : float, default 0.0
        A public bound on ``|query value|`` (0: none) that makes the floating-point slack
        independent of the data; a value beyond it is an error.
    algorithm : SparseVectorAlgorithm, default SparseVectorAlgorithm.DWORK_ROTH
        DWORK_ROTH or LYU_SU_LI (delta must be 0).
    monotone : bool, default False
        LYU_SU_LI only: all query values move the same way between neighbours (a false claim
        breaks the guarantee).
    stream : int, default 0
        For device values: the CUDA stream (a cudaStream_t as an int, 0 the default) the work is
        ordered on; the call synchronizes it before returning.

    Returns
    -------
    SparseVectorBatch
        ``above`` (the "above" answers: index and, for NumericSparse, the noisy value) and
        ``report``.

    Raises
    ------
    InvalidArgument
        (a ValueError) a bad parameter, or a value that is not finite or beyond value_bound
        (naming ``values[i]``): every value is checked before the charge.
    ValueError
        values not 1-D, strided, or holding an integer beyond 2**53 in magnitude.
    TypeError
        values that are not numbers (or a device array that is not float64), ``params``
        together with keywords, or missing parameters.
    BudgetExceeded
        The context's accountant refuses the run.

    In every case nothing is charged or drawn.

    Notes
    -----
    %(notes)s
    """
    fields = {"epsilon": epsilon, "sensitivity": sensitivity, "threshold": threshold, "delta": delta,
              "max_positives": max_positives, "numeric": numeric, "value_bound": value_bound, "algorithm": algorithm,
              "monotone": monotone}
    params = params_of(SparseVectorParams, params, fields, sparse_vector_batch.__kwdefaults__, _REQUIRED)
    where, array = as_host_or_device(values, "values", dtypes=FLOAT64)
    if where == "host":
        return _core.sparse_vector_batch_host(context, array, params)
    return _core.sparse_vector_batch_device(context, array, params, stream)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
