# SPDX-License-Identifier: Apache-2.0
"""Bad inputs get the library's exception and message, before anything is charged or drawn;
arrays are never copied; the GIL is released during a release."""

import resource

import numpy as np
import pytest

import dpselect
from support import assert_the_gil_is_released, ledger_context




def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    pick = dpselect.select(context, np.array([1.0, 2.0]), epsilon=0.1, sensitivity=1.0)
    assert pick.report.stream == 0  # the refused call drew no stream


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"epsilon": float("nan"), "sensitivity": 1.0}, "epsilon must be finite and > 0 (got nan)"),
        ({"epsilon": -1.0, "sensitivity": 1.0}, "epsilon must be finite and > 0 (got -1)"),
        ({"epsilon": 1.0, "sensitivity": 0.0}, "sensitivity must be finite and > 0 (got 0)"),
        ({"epsilon": 1.0, "sensitivity": float("inf")}, "sensitivity must be finite and > 0 (got inf)"),
        ({"epsilon": 1.0, "sensitivity": 1.0, "utility_bound": -2.0}, "utility_bound"),
        ({"epsilon": 1.0, "sensitivity": 1.0, "utility_reference": float("inf")},
         "utility_reference must be finite (or not given) (got inf)"),
    ],
)
def test_bad_parameters_raise_invalid_argument_before_any_charge(fields, message):
    context, accountant = ledger_context()
    with pytest.raises(dpselect.InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        dpselect.select(context, np.array([1.0, 2.0, 3.0]), **fields)
    assert issubclass(dpselect.InvalidArgument, ValueError)
    expect_nothing_charged_or_drawn(context, accountant)


def test_bad_values_and_shapes_are_named():
    context, accountant = ledger_context()
    with pytest.raises(dpselect.InvalidArgument, match=r"utilities\[1\]"):
        dpselect.select(context, np.array([1.0, np.nan, 3.0]), epsilon=0.5, sensitivity=1.0)
    # Found in the data during the pass: charged, as in C++.
    assert accountant.release_count == 1
    with pytest.raises(dpselect.InvalidArgument, match="utilities"):
        dpselect.select(context, np.array([], dtype=np.float64), epsilon=0.5, sensitivity=1.0)
    with pytest.raises(TypeError, match=r"utilities must hold real numbers \(got dtype complex128\)"):
        dpselect.select(context, np.arange(5) * 1j, epsilon=0.5, sensitivity=1.0)
    with pytest.raises(ValueError, match="must be 1-D"):
        dpselect.select(context, np.ones((2, 3)), epsilon=0.5, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"C-contiguous .* numpy.ascontiguousarray"):
        dpselect.select(context, np.ones(10)[::2], epsilon=0.5, sensitivity=1.0)
    with pytest.raises(TypeError, match=r"utilities must be numbers: .*\(got list\)"):
        dpselect.select(context, ["1.0", "x"], epsilon=0.5, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"utilities\[0\] is the integer 9007199254740993"):
        dpselect.select(context, [2**53 + 1, 0], epsilon=0.5, sensitivity=1.0)
    with pytest.raises(TypeError, match="params or keyword arguments, not both"):
        dpselect.select(context, np.ones(3), dpselect.SelectionParams(epsilon=1.0, sensitivity=1.0), epsilon=1.0)
    with pytest.raises(dpselect.InvalidArgument, match="k must"):
        dpselect.select_top_k(context, np.ones(3), 4, epsilon=0.1, sensitivity=1.0)
    assert accountant.release_count == 1


def test_budget_refusal_raises_budget_exceeded_and_draws_nothing():
    context, accountant = ledger_context()
    with pytest.raises(dpselect.BudgetExceeded, match="beyond the budget"):
        dpselect.select(context, np.ones(4), epsilon=1.5, sensitivity=1.0)
    assert not issubclass(dpselect.BudgetExceeded, ValueError)
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_gpu_request_without_one_raises_backend_unavailable():
    if dpselect.gpu_usable():
        pytest.skip("a GPU is usable here")
    with pytest.raises(dpselect.BackendUnavailable):
        dpselect.select(dpselect.Context.fixed_seed(1), np.ones(4), epsilon=1.0, sensitivity=1.0,
                        backend=dpselect.Backend.GPU)


def test_a_large_array_is_not_copied():
    values = np.random.default_rng(3).standard_normal(1 << 26).astype(np.float32)  # 256 MiB
    assert dpselect._core.host_data_address(values) == values.ctypes.data
    read_only = values.view()
    read_only.flags.writeable = False
    assert dpselect._core.host_data_address(read_only) == values.ctypes.data
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    pick = dpselect.select(dpselect.Context.fixed_seed(9), values, epsilon=1.0, sensitivity=1.0,
                           backend=dpselect.Backend.CPU)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert pick.report.candidates == values.size
    assert grown_mib < 64, f"peak memory grew by {grown_mib:.0f} MiB during the release (a copy is 256 MiB)"


def test_the_gil_is_released_during_a_release():
    values = np.zeros(1 << 25)
    assert_the_gil_is_released(lambda: [dpselect.select(dpselect.Context.fixed_seed(2), values, epsilon=1.0,
                                                        sensitivity=1.0, backend=dpselect.Backend.CPU)
                                        for _ in range(4)])


def test_dlpack_inputs_from_pytorch_and_cupy():
    torch = pytest.importorskip("torch")
    values = torch.arange(100, dtype=torch.float64)
    expected = dpselect.select(dpselect.Context.fixed_seed(3), values.numpy(), epsilon=1.0, sensitivity=1.0)
    got = dpselect.select(dpselect.Context.fixed_seed(3), values, epsilon=1.0, sensitivity=1.0)
    assert got.index == expected.index
    with pytest.raises(TypeError, match="float32 or float64"):
        dpselect.select(dpselect.Context.fixed_seed(3), torch.arange(10), epsilon=1.0, sensitivity=1.0)


def test_a_common_offset_changes_no_selection():
    # Scores are computed relative to the release's first utility (or a given utility_reference),
    # so adding 1e15 to every utility selects what the plain utilities select, seed for seed.
    u = (np.arange(3000) * 7 % 97) / 8.0
    for offset in (1e6, 1e12, 1e15):
        for seed in range(10):
            plain = dpselect.select(dpselect.Context.fixed_seed(seed), u, epsilon=2.0, sensitivity=1.0)
            shifted = dpselect.select(dpselect.Context.fixed_seed(seed), u + offset, epsilon=2.0, sensitivity=1.0)
            given = dpselect.select(dpselect.Context.fixed_seed(seed), u + offset, epsilon=2.0, sensitivity=1.0,
                                    utility_reference=offset, utility_bound=16.0)
            assert shifted.index == plain.index == given.index
            assert shifted.report.slack.epsilon == plain.report.slack.epsilon
