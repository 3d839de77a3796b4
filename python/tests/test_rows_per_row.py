# SPDX-License-Identifier: Apache-2.0
"""select_rows with one epsilon per row (private token selection with a budget per step): each row
equals a select over that row at its epsilon as the context's next release; bad per-row epsilons
are refused naming the entry, before anything is charged or drawn."""

import numpy as np
import pytest

import dpselect
from support import ledger_context

EPSILONS = [0.5, 1.0, 2.0, 0.5, 3.0, 0.25]


def matrix(rows, cols, dtype=np.float32):
    return (4.0 * np.random.default_rng(2).random((rows, cols))).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mechanism", list(dpselect.Mechanism))
def test_each_row_equals_a_select_at_its_epsilon(dtype, mechanism):
    u = matrix(len(EPSILONS), 300, dtype)
    result = dpselect.select_rows(dpselect.Context.fixed_seed(12), u, epsilon=np.array(EPSILONS), sensitivity=1.0,
                                  mechanism=mechanism)
    context = dpselect.Context.fixed_seed(12)  # the same streams, one release at a time
    for r, epsilon in enumerate(EPSILONS):
        pick = dpselect.select(context, u[r], epsilon=epsilon, sensitivity=1.0, mechanism=mechanism,
                               utility_reference=0.0)
        assert result.indices[r] == pick.index, r
        assert result.reports[r].epsilon_spent == epsilon
        assert result.reports[r].stream == pick.report.stream == r


def test_a_list_of_equal_epsilons_is_the_scalar_call():
    u = matrix(4, 50)
    a = dpselect.select_rows(dpselect.Context.fixed_seed(3), u, epsilon=[0.7] * 4, sensitivity=1.0)
    b = dpselect.select_rows(dpselect.Context.fixed_seed(3), u, epsilon=0.7, sensitivity=1.0)
    assert list(a.indices) == list(b.indices)


def test_the_accountant_is_charged_each_row_at_its_epsilon():
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(10.0))
    dpselect.select_rows(context, matrix(len(EPSILONS), 20), epsilon=EPSILONS, sensitivity=1.0)
    assert accountant.release_count == len(EPSILONS)
    assert accountant.spent().epsilon <= sum(EPSILONS) + 1e-12


@pytest.mark.parametrize("epsilon, error, message", [
    ([1.0, 0.0, 1.0], dpselect.InvalidArgument, r"epsilon\[1\] must be finite and > 0 \(got 0.0\)"),
    ([1.0, 1.0, float("nan")], dpselect.InvalidArgument, r"epsilon\[2\] must be finite and > 0 \(got nan\)"),
    ([-2.0, 1.0, 1.0], dpselect.InvalidArgument, r"epsilon\[0\] must be finite and > 0 \(got -2.0\)"),
    ([1.0, float("inf"), 1.0], dpselect.InvalidArgument, r"epsilon\[1\] .*inf"),
    ([1.0, 1.0], ValueError, "epsilon has 2 entries but utilities has 3 rows"),
    ([[1.0, 1.0, 1.0]], ValueError, "epsilon must be 1-D"),
    (["a", "b", "c"], TypeError, "epsilon"),
])
def test_bad_per_row_epsilons_are_refused_before_any_charge(epsilon, error, message):
    context, accountant = ledger_context()
    with pytest.raises(error, match=message):
        dpselect.select_rows(context, matrix(3, 10), epsilon=epsilon, sensitivity=1.0)
    assert accountant.release_count == 0
    assert dpselect.select(context, [1.0, 2.0], epsilon=0.1, sensitivity=1.0).report.stream == 0
