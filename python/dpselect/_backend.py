# SPDX-License-Identifier: Apache-2.0
"""The one warning a release with ``backend=Backend.AUTO`` may give: an NVIDIA GPU is present but
this build of dpselect cannot use it (no CUDA backend, no kernel for its architecture, an old
driver, ...), so the release runs on the CPU. Given once per process, with the fix; the same
text is ``report.cpu_fallback_reason`` of every such release and ``dpselect.gpu_unusable_reason()``.
"""

from __future__ import annotations

import warnings

from . import _dpselect as _core

_warned = False


def warn_if_gpu_unusable(backend) -> None:
    """Warns (RuntimeWarning, once per process) when ``backend`` is AUTO and a GPU is present
    that this build cannot use. Probes the device as the release itself would."""
    global _warned
    if _warned or backend != _core.Backend.AUTO:
        return
    reason = _core.gpu_unusable_reason()
    if reason:
        _warned = True
        warnings.warn(reason, RuntimeWarning, stacklevel=3)
