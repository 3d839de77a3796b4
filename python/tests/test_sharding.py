# SPDX-License-Identifier: Apache-2.0
"""Sharded releases (dpselect.sharding): shards evaluated through pickled tickets, here and in other
processes, finish to what dpselect.select picks over the whole array; a merge that misses or
repeats a shard, a ticket after finish, a result of another release and bad arguments are refused,
and the release is charged once, on the driver."""

import concurrent.futures
import multiprocessing
import pickle

import numpy as np
import pytest

import dpselect
from support import ledger_context

MECHANISMS = [dpselect.Mechanism.EXPONENTIAL, dpselect.Mechanism.PERMUTE_AND_FLIP,
              dpselect.Mechanism.LAPLACE_NOISY_MAX]
GENERATORS = [dpselect.Generator.CHACHA20, dpselect.Generator.PHILOX]


def scores(n, dtype=np.float64, offset=1000.0):
    """n utilities in [offset, offset + 4): the noise decides among many (sensitivity 1, epsilon 1)."""
    return (offset + 4.0 * np.random.default_rng(3).random(n)).astype(dtype)


def shard_bounds(n, parts):
    """Uneven bounds of `parts` shards of [0, n), none on a multiple of 32."""
    cuts = sorted({int(n * k / parts) + 7 * k for k in range(1, parts)})
    return list(zip([0] + cuts, cuts + [n]))


def round_trip(value):
    return pickle.loads(pickle.dumps(value))


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reference", ["first utility", "params", "bound"])
def test_pickled_shards_finish_to_what_select_picks(generator, mechanism, dtype, reference):
    u = scores(20_011, dtype)
    keywords = {"epsilon": 1.0, "sensitivity": 1.0, "mechanism": mechanism, "backend": dpselect.Backend.CPU}
    if reference == "params":
        keywords["utility_reference"] = 1001.0
    if reference == "bound":
        keywords["utility_bound"] = 2000.0
    expected = dpselect.select(dpselect.Context.fixed_seed(9, generator), u, **keywords)

    release = dpselect.begin_release(dpselect.Context.fixed_seed(9, generator), **keywords)
    ticket = round_trip(release.ticket(len(u), first_utility=u[0]))
    shards = [round_trip(ticket.evaluate(u[b:e], b)) for b, e in reversed(shard_bounds(len(u), 5))]
    pick = release.finish(dpselect.merge(*shards))
    assert pick.index == expected.index
    assert pick.report.stream == expected.report.stream == release.stream == ticket.stream
    assert pick.report.candidates == len(u)
    assert pick.report.slack.epsilon == expected.report.slack.epsilon
    assert pick.report.slack.depends_on_data == expected.report.slack.depends_on_data


def evaluate_in_worker(ticket, utilities, first_index):
    return ticket.evaluate(utilities, first_index)


def test_shards_evaluated_in_other_processes_finish_to_what_select_picks():
    u = scores(100_003, np.float32)
    expected = dpselect.select(dpselect.Context.fixed_seed(4), u, epsilon=1.0, sensitivity=1.0)
    release = dpselect.begin_release(dpselect.Context.fixed_seed(4), epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(range(len(u)), first_utility=float(u[0]))
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing shared but the pickles
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        futures = [pool.submit(evaluate_in_worker, ticket, u[b:e], b) for b, e in shard_bounds(len(u), 4)]
        shards = [f.result() for f in futures]
    assert release.finish(dpselect.merge(shards)).index == expected.index


def test_without_a_first_utility_the_ticket_scores_as_evaluate_does():
    u = scores(3000)
    own = dpselect.begin_release(dpselect.Context.fixed_seed(2), epsilon=1.0, sensitivity=1.0)
    by_ticket = dpselect.begin_release(dpselect.Context.fixed_seed(2), epsilon=1.0, sensitivity=1.0)
    ticket = by_ticket.ticket((0, len(u)))
    assert ticket.utility_reference == 0.0 and ticket.range == (0, len(u))
    a = own.finish(dpselect.merge(own.evaluate(u[:1000], 0), own.evaluate(u[1000:], 1000)))
    b = by_ticket.finish(ticket.evaluate(u, 0))
    assert a.index == b.index


def three_shards(u, seed=5):
    release = dpselect.begin_release(dpselect.Context.fixed_seed(seed), epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(len(u))
    return release, [ticket.evaluate(u[b:e], b) for b, e in ((0, 40), (40, 80), (80, 100))]


def test_finish_refuses_a_merge_that_misses_or_repeats_a_shard():
    u = scores(100)
    release, (a, b, c) = three_shards(u)
    with pytest.raises(dpselect.UsageError, match="covers 80 candidates"):
        release.finish(dpselect.merge(a, b))
    release, (a, b, c) = three_shards(u)
    with pytest.raises(dpselect.UsageError, match="not each of them once"):
        release.finish(dpselect.merge(a, a, c))  # a in place of b: as many candidates
    release, (a, b, c) = three_shards(u)
    with pytest.raises(dpselect.UsageError, match="covers 120 candidates"):
        release.finish(dpselect.merge(a, b, c, c))
    release, (a, b, c) = three_shards(u)
    assert release.finish(dpselect.merge(c, b, a)).report.candidates == 100


def test_finish_refuses_the_shards_of_another_context():
    u = scores(100)
    release, _ = three_shards(u, seed=5)
    _, foreign = three_shards(u, seed=6)
    with pytest.raises(dpselect.UsageError, match="another release"):
        release.finish(dpselect.merge(foreign))


def test_a_ticket_after_finish_is_refused_and_unpickled_ones_cannot_finish():
    u = scores(100)
    release = dpselect.begin_release(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(len(u))
    elsewhere = round_trip(ticket)
    release.finish(ticket.evaluate(u, 0))
    with pytest.raises(dpselect.UsageError, match="finished or destroyed"):
        ticket.evaluate(u, 0)
    with pytest.raises(dpselect.UsageError, match="already finished"):
        release.ticket(len(u))
    with pytest.raises(dpselect.UsageError, match="already finished"):
        release.finish(elsewhere.evaluate(u, 0))


def test_a_nan_in_a_shard_fails_the_finish_naming_its_global_index():
    u = scores(100)
    u[57] = np.nan
    release = dpselect.begin_release(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(len(u))
    merged = dpselect.merge(ticket.evaluate(u[:50], 0), ticket.evaluate(u[50:], 50))
    with pytest.raises(dpselect.InvalidArgument, match=r"utilities\[57\].*got nan"):
        release.finish(merged)


def test_the_driver_is_charged_once_and_workers_nothing():
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(1.5))
    u = scores(1000)
    release = dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0)
    ticket = round_trip(release.ticket(len(u)))
    release.finish(dpselect.merge(ticket.evaluate(u[:500], 0), ticket.evaluate(u[500:], 500)))
    assert accountant.release_count == 1
    with pytest.raises(dpselect.BudgetExceeded):
        dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0)
    assert accountant.release_count == 1
    assert dpselect.select(context, u, epsilon=0.1, sensitivity=1.0).report.stream == 1  # nothing drawn


def test_bad_arguments_are_refused_naming_the_parameter_and_value():
    context = dpselect.Context.fixed_seed(1)
    with pytest.raises(dpselect.InvalidArgument, match="epsilon"):
        dpselect.begin_release(context, epsilon=0.0, sensitivity=1.0)
    with pytest.raises(TypeError, match="epsilon, sensitivity must be given"):
        dpselect.begin_release(context)
    with pytest.raises(TypeError, match="context must be a dpselect.Context"):
        dpselect.begin_release("ctx", epsilon=1.0, sensitivity=1.0)
    release = dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(dpselect.InvalidArgument, match="empty range"):
        release.ticket(0)
    with pytest.raises(ValueError, match=r"candidates must be in \[0, 2\*\*63\] \(got -1\)"):
        release.ticket(-1)
    with pytest.raises(TypeError, match="candidates must be an int"):
        release.ticket(1.5)
    with pytest.raises(ValueError, match="step 1"):
        release.ticket(range(0, 10, 2))
    with pytest.raises(ValueError, match=r"\(begin, end\)"):
        release.ticket((0, 1, 2))
    with pytest.raises(TypeError, match="first_utility must be a number"):
        release.ticket(10, first_utility="3")
    ticket = release.ticket(10)
    with pytest.raises(ValueError, match=r"first_index must be in \[0, 2\*\*63\] \(got -3\)"):
        ticket.evaluate(np.zeros(3), -3)
    with pytest.raises(dpselect.InvalidArgument, match=r"must lie in its range \[0, 10\).*first_index 8 and 3"):
        ticket.evaluate(np.zeros(3), 8)
    with pytest.raises(dpselect.InvalidArgument, match="of 124 bytes; got 3"):
        dpselect.ReleaseTicket.from_bytes(b"abc")
    with pytest.raises(TypeError, match="data must be bytes"):
        dpselect.ReleaseTicket.from_bytes("abc")
    with pytest.raises(TypeError, match="stays in the process that began it"):
        pickle.dumps(release)
    with pytest.raises(ValueError, match="at least one ShardResult"):
        dpselect.merge()
    with pytest.raises(TypeError, match=r"shards\[1\] must be a dpselect.ShardResult"):
        dpselect.merge(ticket.evaluate(np.zeros(3), 0), 3)
    with pytest.raises(TypeError, match="merged must be a dpselect.ShardResult"):
        release.finish(None)


def test_secret_values_are_not_shown():
    release = dpselect.begin_release(dpselect.Context.fixed_seed(1), epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(3)
    shard = ticket.evaluate([1.0, 2.0, 3.0], 0)
    assert repr(shard) == "ShardResult(candidates=3, SECRET)"
    assert repr(ticket) == f"ReleaseTicket(stream={release.stream}, range=(0, 3), SECRET)"
    assert not hasattr(shard, "best_score") and not hasattr(shard, "best_index")


@pytest.mark.parametrize("k", [1, 10, 300])
def test_pickled_top_k_shards_finish_to_what_select_top_k_picks(k):
    u = scores(20_011, np.float32)
    u[::97] = -np.inf  # excluded candidates
    expected = dpselect.select_top_k(dpselect.Context.fixed_seed(6), u, k, epsilon=0.2, sensitivity=1.0)
    release = dpselect.begin_top_k_release(dpselect.Context.fixed_seed(6), k, len(u), epsilon=0.2, sensitivity=1.0)
    ticket = round_trip(release.ticket())
    assert (ticket.k, ticket.range, ticket.stream) == (k, (0, len(u)), release.stream)
    shards = [round_trip(ticket.evaluate(u[b:e], b)) for b, e in shard_bounds(len(u), 3)]
    top = release.finish(dpselect.merge(reversed(shards)))
    assert list(top.indices) == list(expected.indices)
    assert top.report.epsilon_total_basic == expected.report.epsilon_total_basic


def test_top_k_refusals():
    u = scores(100)
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(100.0))
    with pytest.raises(dpselect.InvalidArgument, match="k must be between 1 and the number of candidates, 100"):
        dpselect.begin_top_k_release(context, 101, len(u), epsilon=0.5, sensitivity=1.0)
    with pytest.raises(dpselect.InvalidArgument, match="runs its shards on the CPU"):
        dpselect.begin_top_k_release(context, 3, len(u), epsilon=0.5, sensitivity=1.0, backend=dpselect.Backend.GPU)
    with pytest.raises(dpselect.InvalidArgument, match="must be exponential"):
        dpselect.begin_top_k_release(context, 3, len(u), epsilon=0.5, sensitivity=1.0,
                                     mechanism=dpselect.Mechanism.PERMUTE_AND_FLIP)
    assert accountant.release_count == 0
    release = dpselect.begin_top_k_release(context, 3, len(u), epsilon=0.5, sensitivity=1.0)
    assert accountant.release_count == 3  # the k picks, once
    ticket = release.ticket()
    half = ticket.evaluate(u[:50], 0)
    with pytest.raises(TypeError, match="must be a dpselect.TopKShardResult"):
        dpselect.merge(half, ShardResultLike())
    with pytest.raises(dpselect.UsageError, match="covers 50 candidates"):
        release.finish(half)
    with pytest.raises(dpselect.InvalidArgument, match="TopKTicket"):
        dpselect.TopKTicket.from_bytes(b"1234")
    with pytest.raises(TypeError, match="stays in the process that began it"):
        pickle.dumps(release)


class ShardResultLike:
    """Not a shard result."""
