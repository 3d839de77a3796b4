# SPDX-License-Identifier: Apache-2.0
"""dpselect: differentially private selection over very large candidate ranges.

The exponential mechanism, permute-and-flip and report-noisy-max (Laplace) over arrays of
utilities, exact top-k, one pick per row, repeated releases, pricing, private quantiles
(dpselect.quantiles) and the sparse vector technique, on the CPU or a GPU, with the
same random bits as the C++ library and the ``dpselect`` command for the same key.

Arrays are never copied: NumPy arrays (float32/float64, C-contiguous) and any ``__dlpack__``
producer (CuPy, PyTorch, JAX) go straight to the C++ core; device memory runs on the GPU. The GIL
is released during every release.

Example::

    import numpy as np, dpselect
    context = dpselect.Context()                      # keyed from the OS: for real data
    pick = dpselect.select(context, np.array([3.0, 7.0, 5.0]), epsilon=1.0, sensitivity=1.0)
    pick.index, pick.report

``Context.fixed_seed(seed)`` is reproducible and NOT PRIVATE: for tests and experiments only.
"""

from __future__ import annotations

from . import _dpselect as _core
from ._arrays import as_host_or_device as _as_host_or_device
from ._arrays import params_of as _params_of
from ._backend import warn_if_gpu_unusable as _warn_if_gpu_unusable
from ._dpselect import (
    AccountedBound,
    Backend,
    BackendUnavailable,
    BudgetExceeded,
    CompositionRoute,
    Context,
    CudaError,
    ExecutedOn,
    FloatingPointSlack,
    Generator,
    InvalidArgument,
    Mechanism,
    ParameterChoice,
    PrivacyAccountant,
    PrivacyBound,
    RandomnessExhausted,
    ReleaseKind,
    RowsSelection,
    Selection,
    SelectionParams,
    SelectionReport,
    TopKReport,
    TopKSelection,
    UsageError,
    built_with_cuda,
    gpu_unusable_reason,
    gpu_usable,
)

__version__: str = _core.library_version()  # the C++ library's, from its CMakeLists.txt

__all__ = [
    "AccountedBound", "Backend", "BackendUnavailable", "BudgetExceeded", "CompositionRoute", "Context",
    "CudaError", "ExecutedOn", "FloatingPointSlack", "Generator", "InvalidArgument", "Mechanism",
    "ParameterChoice", "PrivacyAccountant", "PrivacyBound", "RandomnessExhausted", "ReleaseKind",
    "RowsSelection", "Selection", "SelectionParams", "SelectionReport", "TopKReport", "TopKSelection",
    "UsageError", "built_with_cuda", "gpu_unusable_reason", "gpu_usable", "select", "select_repeated", "select_rows",
    "select_top_k",
]

# The other parts of the API, each a module of its own (dpselect.pricing, dpselect.noise, ...)
# whose public names are also dpselect's. dpselect.audit and dpselect.plot (matplotlib) stay
# submodules: import them by name.
from . import accounting, noise, pricing, quantiles, sparse_vector  # noqa: E402
from .accounting import *  # noqa: E402,F401,F403
from .noise import *  # noqa: E402,F401,F403
from .pricing import *  # noqa: E402,F401,F403
from .quantiles import *  # noqa: E402,F401,F403
from .sparse_vector import *  # noqa: E402,F401,F403

__all__ += accounting.__all__ + noise.__all__ + pricing.__all__ + quantiles.__all__ + sparse_vector.__all__


def select(context: Context, utilities, params: SelectionParams | None = None, *, stream: int = 0,
           **fields) -> Selection:
    """One private release: the index of a high-utility candidate.

    ``utilities``: 1-D float32/float64 in host memory (NumPy, or DLPack on the CPU) or on a CUDA
    device (CuPy, PyTorch, JAX; ordered on ``stream``, a cudaStream_t as an int, 0 the default).
    ``params`` (a SelectionParams) or its fields as keywords: ``epsilon``, ``sensitivity``,
    ``mechanism``, ``monotone``, ``utility_bound``, ``backend``, ``utility_reference``. Raises
    InvalidArgument (a ValueError) for a bad value and BudgetExceeded when the context's
    accountant refuses; in both cases nothing is charged or drawn.
    """
    params = _params_of(SelectionParams, params, fields)
    _warn_if_gpu_unusable(params.backend)
    where, array = _as_host_or_device(utilities, "utilities")
    if where == "host":
        return _core.select_host(context, array, params)
    return _core.select_device(context, array, params, stream)


def select_top_k(context: Context, utilities, k: int, params: SelectionParams | None = None, *,
                 stream: int = 0, **fields) -> TopKSelection:
    """The k candidates of highest noisy score, in order, from one pass (exponential mechanism).

    ``params.epsilon`` is the epsilon of each of the k picks: k * epsilon in all by basic
    composition (report.epsilon_total_basic), or report.rho in zCDP.
    """
    params = _params_of(SelectionParams, params, fields)
    _warn_if_gpu_unusable(params.backend)
    where, array = _as_host_or_device(utilities, "utilities")
    if where == "host":
        return _core.top_k_host(context, array, k, params)
    return _core.top_k_device(context, array, k, params, stream)


def select_rows(context: Context, utilities, params: SelectionParams | None = None, **fields) -> RowsSelection:
    """One private release per row of a 2-D host array (rows x cols), one epsilon for every row."""
    params = _params_of(SelectionParams, params, fields)
    _warn_if_gpu_unusable(params.backend)
    where, array = _as_host_or_device(utilities, "utilities", ndim=2)
    if where != "host":
        raise ValueError("select_rows takes host memory from Python so far; copy the matrix to the host")
    return _core.rows_host(context, array, params)


def select_repeated(context: Context, utilities, releases: int, params: SelectionParams | None = None,
                    **fields) -> RowsSelection:
    """``releases`` independent releases over one row (Monte Carlo studies, the auditor)."""
    params = _params_of(SelectionParams, params, fields)
    _warn_if_gpu_unusable(params.backend)
    where, array = _as_host_or_device(utilities, "utilities")
    if where != "host":
        raise ValueError("select_repeated takes host memory from Python so far; copy the row to the host")
    return _core.repeated_host(context, array, params, releases)
