# SPDX-License-Identifier: Apache-2.0
"""Private token selection: the guide's decoding loop (one token per sequence and step from an
ensemble's votes, the accountant over the whole loop), per-row epsilons, and matrices handed over
through DLPack alone, as a PyTorch or JAX CPU tensor hands them over."""

import numpy as np
import pytest

import dpselect


class DLPackOnly:
    """A CPU tensor that dpselect can read only through the DLPack protocol (as torch.Tensor or a
    jax.Array is read): no __array__, no buffer protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_the_guide_decoding_loop():
    # [doc:python_private_decoding]
    import numpy as np
    import dpselect

    teachers, batch, vocabulary, steps = 50, 4, 1_000, 8
    rng = np.random.default_rng(3)

    def ensemble_votes(step):
        """votes[b, t]: how many of the teachers (each trained on its own part of the records)
        propose token t next for sequence b. One record changes one teacher's vote: each count
        moves by at most 1 (sensitivity 1)."""
        favourite = rng.integers(0, vocabulary, size=(batch, 3))
        proposals = favourite[np.arange(batch)[:, None], rng.integers(0, 3, size=(batch, teachers))]
        votes = np.zeros((batch, vocabulary), dtype=np.float32)
        np.add.at(votes, (np.arange(batch)[:, None], proposals), 1.0)
        return votes

    budget = dpselect.PrivacyBound(4.0, 1e-6)
    accountant = dpselect.PrivacyAccountant(budget)
    context = dpselect.Context()
    context.charge_to(accountant)
    # Every token of every sequence is a release about the same records: batch x steps of them.
    epsilon = dpselect.per_release_epsilon(batch * steps, budget.epsilon, budget.delta,
                                           dpselect.ReleaseKind.EXPONENTIAL_MECHANISM)
    tokens = np.empty((batch, steps), dtype=np.int64)
    for step in range(steps):
        picks = dpselect.select_rows(context, ensemble_votes(step), epsilon=epsilon, sensitivity=1.0)
        tokens[:, step] = picks.indices           # one private token per sequence
    print(tokens, accountant.spent())             # spent: within the budget, for the whole loop
    # [/doc:python_private_decoding]
    assert accountant.release_count == batch * steps
    spent = accountant.spent()
    assert spent.epsilon <= budget.epsilon and spent.delta <= budget.delta
    assert epsilon > budget.epsilon / (batch * steps)  # better than splitting the budget evenly
    assert tokens.min() >= 0 and tokens.max() < vocabulary
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.select_rows(context, ensemble_votes(steps), epsilon=epsilon, sensitivity=1.0)


def test_a_dlpack_only_cpu_matrix_is_read_in_place_with_a_per_row_epsilon():
    votes = np.random.default_rng(5).integers(0, 50, size=(6, 4_096)).astype(np.float32)
    row_epsilons = np.array([0.5, 1.0, 2.0, 0.5, 1.0, 2.0])
    expected = dpselect.select_rows(dpselect.Context.fixed_seed(8), votes, epsilon=row_epsilons, sensitivity=1.0)
    picks = dpselect.select_rows(dpselect.Context.fixed_seed(8), DLPackOnly(votes), epsilon=row_epsilons,
                                 sensitivity=1.0)
    assert picks.indices.tolist() == expected.indices.tolist()
    assert [r.epsilon_spent for r in picks.reports] == row_epsilons.tolist()
    for r in range(len(votes)):  # row r: a select over row r as the (first stream + r)-th release
        one = dpselect.select(dpselect.Context.fixed_seed(8), votes[r], epsilon=row_epsilons[r], sensitivity=1.0,
                              utility_reference=0.0)
        assert picks.streams[r] == r and one.report.stream == 0


def test_a_dlpack_only_matrix_with_a_bad_row_epsilon_charges_nothing():
    context = dpselect.Context.fixed_seed(1)
    accountant = dpselect.PrivacyAccountant(dpselect.PrivacyBound(10.0))
    context.charge_to(accountant)
    votes = DLPackOnly(np.ones((3, 8), dtype=np.float32))
    with pytest.raises(dpselect.InvalidArgument, match=r"epsilon\[1\]"):
        dpselect.select_rows(context, votes, epsilon=np.array([1.0, -1.0, 1.0]), sensitivity=1.0)
    with pytest.raises(ValueError, match="give one epsilon per row"):
        dpselect.select_rows(context, votes, epsilon=np.array([1.0, 1.0]), sensitivity=1.0)
    assert accountant.release_count == 0


def test_a_pytorch_cpu_tensor_gives_what_its_numpy_array_gives():
    torch = pytest.importorskip("torch")
    votes = torch.randint(0, 50, (8, 2_048), generator=torch.Generator().manual_seed(2)).float()
    expected = dpselect.select_rows(dpselect.Context.fixed_seed(3), votes.numpy(), epsilon=1.0, sensitivity=1.0)
    picks = dpselect.select_rows(dpselect.Context.fixed_seed(3), votes, epsilon=torch.full((8,), 1.0,
                                 dtype=torch.float64), sensitivity=1.0)
    assert picks.indices.tolist() == expected.indices.tolist()
    tokens = torch.tensor(picks.indices)  # a tensor of the batch's tokens: one copy of `batch` int64s
    assert tokens.dtype == torch.int64 and tokens.tolist() == expected.indices.tolist()
