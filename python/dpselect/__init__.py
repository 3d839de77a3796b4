# SPDX-License-Identifier: Apache-2.0
"""dpselect: differentially private selection over very large candidate ranges.

The exponential mechanism, permute-and-flip and report-noisy-max (Laplace) over arrays of
utilities, exact top-k, one pick per row, repeated releases, pricing, private quantiles
(dpselect.quantiles) and the sparse vector technique, on the CPU or a GPU, with the
same random bits as the C++ library and the ``dpselect`` command for the same key.

Arrays of the dtype a function reads are never copied: NumPy arrays (float32/float64,
C-contiguous) and any ``__dlpack__`` producer (CuPy, PyTorch, JAX) go straight to the C++ core;
device memory runs on the GPU. Anything else in host memory (lists, tuples, integer or bool
arrays) is converted once with ``numpy.asarray(x, dtype=numpy.float64)``; an integer beyond 2**53
in magnitude, which float64 cannot hold exactly, is a ValueError. The GIL is released during
every release.

Example::

    import numpy as np, dpselect
    context = dpselect.Context()                      # keyed from the OS: for real data
    pick = dpselect.select(context, np.array([3.0, 7.0, 5.0]), epsilon=1.0, sensitivity=1.0)
    pick.index, pick.report

``Context.fixed_seed(seed)`` is reproducible and NOT PRIVATE: for tests and experiments only.
"""

from __future__ import annotations

from . import _dpselect as _core
from ._checks import check_module as _check_module
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
    "UsageError", "built_with_cuda", "gpu_unusable_reason", "gpu_usable",
]

# The parts of the API, each a module of its own (dpselect.selection, dpselect.pricing,
# dpselect.sharding, ...) whose public names are also dpselect's. dpselect.audit and dpselect.plot
# (matplotlib) stay submodules: import them by name.
from . import (accounting, noise, partition_selection, pricing, quantiles, selection,  # noqa: E402
               sharding, sparse_vector)
from .selection import *  # noqa: E402,F401,F403
from .accounting import *  # noqa: E402,F401,F403
from .noise import *  # noqa: E402,F401,F403
from .partition_selection import *  # noqa: E402,F401,F403
from .pricing import *  # noqa: E402,F401,F403
from .quantiles import *  # noqa: E402,F401,F403
from .sharding import *  # noqa: E402,F401,F403
from .sparse_vector import *  # noqa: E402,F401,F403

__all__ += (selection.__all__ + accounting.__all__ + noise.__all__ + partition_selection.__all__ + pricing.__all__ +
            quantiles.__all__ + sharding.__all__ + sparse_vector.__all__)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks):
# the compiled classes and functions named above (SelectionParams, PrivacyBound, ...); each module
# checks its own functions.
_check_module(globals(), __all__)
