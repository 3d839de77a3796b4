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
the same answers.

Example (AboveThreshold)::

    import dpselect
    svt = dpselect.SparseVector(dpselect.Context(), epsilon=1.0, sensitivity=1.0, threshold=100.0)
    for answer in svt.answers(query_values):     # stops after the "above" answer
        ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from . import _dpselect as _core
from ._arrays import as_float64, params_of
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


class SparseVector(_core.SparseVector):
    """The streaming, adaptive sparse vector technique: one query value at a time.

    ``SparseVector(context, params)`` or ``SparseVector(context, epsilon=..., sensitivity=...,
    threshold=..., ...)`` (the fields of SparseVectorParams) validates the parameters, charges the
    context's accountant once (epsilon, or (epsilon, delta)) and draws a fresh stream.
    ``answer(value)`` answers the next query, whose true value on the data is ``value``;
    ``halted`` / ``spent`` say whether it can answer more; ``report()`` describes the run. A value
    that is not finite (or beyond value_bound) raises InvalidArgument and spends the object;
    answering once it halted or is spent raises UsageError. It cannot be copied or pickled: a copy
    would answer with the same noise. Not thread-safe across threads that share one object.
    """

    def __init__(self, context: Context, params: SparseVectorParams | None = None, **fields) -> None:
        super().__init__(context, params_of(SparseVectorParams, params, fields))

    def answers(self, values: Iterable[float]) -> Iterator[SparseVectorAnswer]:
        """The answers to ``values`` in order, ending after the answer that halts the run (the
        values after it are never read)."""
        for value in values:
            yield self.answer(value)
            if self.halted:
                return


def sparse_vector_batch(context: Context, values, params: SparseVectorParams | None = None, *, stream: int = 0,
                        **fields) -> SparseVectorBatch:
    """The answers a SparseVector on the same key and stream would give to ``values`` in order, up
    to and including the halting query: the "above" answers as a list (every other query before
    ``report.queries`` was "below").

    ``values``: 1-D float64 in host memory (NumPy, or DLPack on the CPU), searched on all cores,
    or on a CUDA device (CuPy, PyTorch, JAX; ordered on ``stream``, a cudaStream_t as an int, 0
    the default), searched on the GPU. ``params`` (a SparseVectorParams) or its fields as
    keywords. Every value is validated (finite, within value_bound) before the charge: a bad
    parameter or value raises InvalidArgument and nothing is charged or drawn.
    """
    params = params_of(SparseVectorParams, params, fields)
    where, array = as_float64(values, "values", "the sparse vector compares doubles")
    if where == "host":
        return _core.sparse_vector_batch_host(context, array, params)
    return _core.sparse_vector_batch_device(context, array, params, stream)

