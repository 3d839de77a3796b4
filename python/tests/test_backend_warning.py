# SPDX-License-Identifier: Apache-2.0
"""A GPU that this build cannot use is named once, with the fix: a RuntimeWarning from the first
release with backend AUTO, and the same text from dpselect.gpu_unusable_reason(). The probe's
words are tested in C++ (tests/gpu_diagnosis_test.cpp); here the reason is replaced, so that the
warning's path is tested on machines without a GPU."""

import os
import warnings

import numpy as np
import pytest

import dpselect
from dpselect import _backend

FAKE_REASON = "this build has no kernel for the GPU X (compute capability 8.0), so Backend::Auto runs on the CPU"


@pytest.fixture
def unusable_gpu(monkeypatch):
    monkeypatch.setattr(_backend._core, "gpu_unusable_reason", lambda: FAKE_REASON)
    monkeypatch.setattr(_backend, "_warned", False)


def test_first_auto_release_warns_once(unusable_gpu):
    context = dpselect.Context.fixed_seed(1)
    utilities = np.array([1.0, 5.0, 2.0])
    with pytest.warns(RuntimeWarning, match="no kernel for the GPU X"):
        dpselect.select(context, utilities, epsilon=1.0, sensitivity=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise
        dpselect.select(context, utilities, epsilon=1.0, sensitivity=1.0)
        dpselect.select_top_k(context, utilities, 2, epsilon=1.0, sensitivity=1.0)


@pytest.mark.parametrize("entry", ["select", "top_k", "rows", "repeated", "price", "quantile", "quantiles"])
def test_every_release_family_warns(unusable_gpu, entry):
    context = dpselect.Context.fixed_seed(2)
    utilities = np.array([1.0, 5.0, 2.0])
    calls = {
        "select": lambda: dpselect.select(context, utilities, epsilon=1.0, sensitivity=1.0),
        "top_k": lambda: dpselect.select_top_k(context, utilities, 2, epsilon=1.0, sensitivity=1.0),
        "rows": lambda: dpselect.select_rows(context, utilities.reshape(1, 3), epsilon=1.0, sensitivity=1.0),
        "repeated": lambda: dpselect.select_repeated(context, utilities, 2, epsilon=1.0, sensitivity=1.0),
        "price": lambda: dpselect.select_price(context, np.array([3.0, 4.0]), dpselect.PriceGrid(1.0, 5.0, 1.0),
                                               epsilon=1.0),
        "quantile": lambda: dpselect.select_quantile(context, utilities, 0.5, range=(0.0, 10.0), epsilon=1.0),
        "quantiles": lambda: dpselect.select_quantiles(context, utilities, [0.25, 0.75], range=(0.0, 10.0),
                                                       epsilon=1.0),
    }
    with pytest.warns(RuntimeWarning, match="no kernel for the GPU X"):
        calls[entry]()


def test_cpu_backend_never_warns(unusable_gpu):
    context = dpselect.Context.fixed_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dpselect.select(context, np.array([1.0, 2.0]), epsilon=1.0, sensitivity=1.0, backend=dpselect.Backend.CPU)


def test_no_gpu_nothing_to_say():
    if dpselect.gpu_usable() or os.path.isdir("/proc/driver/nvidia/gpus"):
        pytest.skip("an NVIDIA GPU is present: the reason depends on it and on this build")
    assert dpselect.gpu_unusable_reason() == ""
    pick = dpselect.select(dpselect.Context.fixed_seed(4), np.array([1.0, 2.0]), epsilon=1.0, sensitivity=1.0)
    assert pick.report.executed_on == dpselect.ExecutedOn.CPU
    assert pick.report.cpu_fallback_reason == ""
