# SPDX-License-Identifier: Apache-2.0
"""The empirical privacy auditor from Python: its statistics against exact binomial sums, the
library's targets (the same results as the dpselect command for the same seed), mechanisms written
in Python (an honest one passes, a dishonest one is caught), progress, errors and the GIL.

False failures. An audit's bounds hold jointly with probability >= confidence (exact
Clopper-Pearson bounds, Bonferroni over all of them). The audits whose passing is asserted here run
at confidence 1 - 1e-6, so an honest mechanism fails with probability <= 1e-6 per audit over the
choice of seed (the seeds are fixed, so a given build passes or fails deterministically)."""

import gc
import json
import math
import subprocess
import weakref
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from support import assert_the_gil_is_released
import dpselect.audit as audit

CONFIDENCE = 1 - 1e-6


def binomial_tail_at_least(successes, trials, p):
    """P[Bin(trials, p) >= successes], exactly, for a double p."""
    p = Fraction(p)
    return sum(math.comb(trials, i) * p**i * (1 - p) ** (trials - i) for i in range(successes, trials + 1))


def binomial_tail_at_most(successes, trials, p):
    """P[Bin(trials, p) <= successes], exactly, for a double p."""
    p = Fraction(p)
    return sum(math.comb(trials, i) * p**i * (1 - p) ** (trials - i) for i in range(successes + 1))


def randomized_response(epsilon):
    """A Python mechanism: randomized response at epsilon on one bit (D: the bit is 0, D': it is 1),
    from the library's exponential mechanism on two candidates. With sensitivity 1/2 its score
    scale is epsilon (Dwork & Roth 2014, Def 3.4: epsilon u / (2 Delta)), so it reports the true
    bit with probability e^epsilon / (1 + e^epsilon): exactly epsilon-DP, and no better."""

    def run(on_d_prime, context, runs):
        assert isinstance(context, dpselect.Context)
        utilities = np.array([0.0, 1.0] if on_d_prime else [1.0, 0.0])
        picks = dpselect.select_repeated(context, utilities, runs, epsilon=epsilon, sensitivity=0.5)
        return np.array([pick.index for pick in picks.selections], dtype=np.int64)

    return run


def constant_output(on_d_prime, context, runs):
    return {0: runs}


# ---- statistics ---------------------------------------------------------------------------------


@pytest.mark.parametrize("successes,trials,alpha", [(0, 10, 0.025), (10, 10, 0.025), (5, 10, 0.025), (3, 40, 0.01),
                                                    (37, 40, 1e-4), (1, 25, 0.5), (12, 30, 1e-7)])
def test_clopper_pearson_is_the_exact_binomial_quantile(successes, trials, alpha):
    interval = audit.clopper_pearson(successes, trials, alpha)
    alpha = Fraction(alpha)
    # lower: the largest p with P[Bin >= successes] <= alpha, to within 1e-9 (rounded outward).
    if successes == 0:
        assert interval.lower == 0.0
    else:
        assert binomial_tail_at_least(successes, trials, interval.lower) <= alpha
        assert binomial_tail_at_least(successes, trials, interval.lower + 1e-9) > alpha
    # upper: the smallest p with P[Bin <= successes] <= alpha.
    if successes == trials:
        assert interval.upper == 1.0
    else:
        assert binomial_tail_at_most(successes, trials, interval.upper) <= alpha
        assert binomial_tail_at_most(successes, trials, interval.upper - 1e-9) > alpha
    assert repr(interval) == f"Interval(lower={interval.lower!r}, upper={interval.upper!r})"


@pytest.mark.parametrize("x,a,b", [(0.001, 1, 1), (0.3, 2, 5), (0.5, 7, 7), (0.9, 3, 12), (0.999, 30, 2)])
def test_regularized_incomplete_beta_is_a_binomial_tail(x, a, b):
    # For integers a, b: I_x(a, b) = P[Bin(a + b - 1, x) >= a].
    exact = binomial_tail_at_least(a, a + b - 1, x)
    assert audit.regularized_incomplete_beta(x, a, b) == pytest.approx(float(exact), rel=1e-13)


def test_statistics_bad_input_names_the_parameter():
    for call, message in [
        (lambda: audit.clopper_pearson(0, 0, 0.05), "trials must be >= 1 (got 0)"),
        (lambda: audit.clopper_pearson(11, 10, 0.05), "successes must be <= trials = 10 (got 11)"),
        (lambda: audit.clopper_pearson(1, 10, 0.0), "alpha must be in (0, 1/2] (got 0)"),
        (lambda: audit.clopper_pearson(1, 10, 0.6), "alpha must be in (0, 1/2] (got 0.6)"),
        (lambda: audit.regularized_incomplete_beta(1.5, 1, 1), "x must be in [0, 1] (got 1.5)"),
        (lambda: audit.regularized_incomplete_beta(0.5, 0, 1), "a must be finite and > 0 (got 0)"),
        (lambda: audit.regularized_incomplete_beta(0.5, 1, float("nan")), "b must be finite and > 0 (got nan)"),
    ]:
        with pytest.raises(dpselect.InvalidArgument) as caught:
            call()
        assert message in str(caught.value)


def test_privacy_loss_bounds_from_clopper_pearson():
    # True probabilities 0.6 vs 0.2 (ratio 3) counted exactly at 10^6 runs.
    events = [audit.EventCounts(7, 600_000, 200_000), audit.EventCounts(event=8, on_d=400_000, on_d_prime=800_000)]
    bounds = audit.privacy_loss_bounds(events, 1_000_000, 0.95, 1.0)
    # Four one-sided bounds per event at (1 - confidence) / (4 * 2) each.
    alpha = 0.05 / 8
    epsilons, deltas = [], []
    for event in events:
        d = audit.clopper_pearson(event.on_d, 1_000_000, alpha)
        d_prime = audit.clopper_pearson(event.on_d_prime, 1_000_000, alpha)
        for top, bottom in ((d, d_prime), (d_prime, d)):
            epsilons.append(max(0.0, math.log(top.lower / bottom.upper)))
            deltas.append(max(0.0, top.lower - math.e * bottom.upper))
    assert bounds.epsilon_lower == pytest.approx(max(epsilons), rel=1e-15)
    assert bounds.delta_lower == pytest.approx(max(deltas), rel=1e-12)
    assert math.log(3) - 0.02 < bounds.epsilon_lower < math.log(3)
    worst = bounds.worst_epsilon
    assert (worst.event, worst.d_over_d_prime, worst.p_d, worst.p_d_prime) == (7, True, 0.6, 0.2)
    assert repr(events[0]) == "EventCounts(event=7, on_d=600000, on_d_prime=200000)"
    assert repr(bounds).startswith(f"Bounds(epsilon_lower={bounds.epsilon_lower!r}, delta_lower=")
    assert "worst_epsilon=EventBound(event=7, d_over_d_prime=True, p_d=0.6, p_d_prime=0.2" in repr(bounds)

    none = audit.privacy_loss_bounds([audit.EventCounts(1, 5000, 5000)], 10_000, 0.95, 0.0)
    assert (none.epsilon_lower, none.delta_lower) == (0.0, 0.0)
    for call, message in [
        (lambda: audit.privacy_loss_bounds(events, 0, 0.95, 1.0), "runs must be >= 1 (got 0)"),
        (lambda: audit.privacy_loss_bounds(events, 10**6, 1.0, 1.0), "confidence must be in (0, 1) (got 1)"),
        (lambda: audit.privacy_loss_bounds(events, 100, 0.95, 1.0), "event counts must be <= runs = 100 (got 600000)"),
        (lambda: audit.privacy_loss_bounds(events, 10**6, 0.95, -1.0), "claimed_epsilon must be finite and >= 0"),
    ]:
        with pytest.raises(dpselect.InvalidArgument) as caught:
            call()
        assert message in str(caught.value)


# ---- the library's targets ------------------------------------------------------------------------


def test_library_targets_are_the_commands_list(cli):
    targets = audit.library_targets()
    listed = subprocess.run([cli, "audit", "--list"], check=True, capture_output=True, text=True).stdout
    assert [f"{t.mechanism}: {t.neighbours}" for t in targets] == listed.splitlines()
    parts = (audit.selection_audits() + audit.sparse_vector_audits() + audit.noise_audits() +
             audit.quantile_audits() + audit.partition_selection_audits())
    assert [t.mechanism for t in parts] == [t.mechanism for t in targets]
    first = targets[0]
    assert repr(first) == (f"AuditTarget(mechanism={first.mechanism!r}, neighbours={first.neighbours!r}, "
                           f"claimed_epsilon={first.claimed_epsilon!r}, claimed_delta={first.claimed_delta!r})")


def test_library_audits_pass_and_equal_the_command(cli):
    name = "exponential (general)"
    options = audit.AuditOptions(selection_runs=5000, runs=20_000, confidence=CONFIDENCE, seed=3)
    results = [audit.run(t, options) for t in audit.library_targets() if name in t.mechanism]
    command = subprocess.run([cli, "audit", "--only", name, "--runs", "20000", "--selection-runs", "5000",
                              "--confidence", repr(CONFIDENCE), "--seed", "3", "--json"],
                             capture_output=True, text=True)
    assert command.returncode == 0, command.stderr
    expected = json.loads(command.stdout)["audits"]
    assert len(results) == len(expected) == 3
    for got, want in zip(results, expected):
        assert got.passed
        assert (got.mechanism, got.neighbours, got.claimed_epsilon, got.claimed_delta) == (
            want["mechanism"], want["neighbours"], want["claimed_epsilon"], want["claimed_delta"])
        assert got.bounds.epsilon_lower == want["epsilon_lower_bound"]
        assert got.bounds.delta_lower == want["delta_lower_bound"]
        assert got.events_tested == want["events_tested"]
        assert (got.runs, got.confidence) == (20_000, CONFIDENCE)
    assert results[0].bounds.epsilon_lower > 0  # half up / half down shows a loss
    assert repr(results[0]) == (
        f"AuditResult(mechanism='exponential (general)', neighbours='half up / half down', claimed_epsilon=1.0, "
        f"claimed_delta=0.0, epsilon_lower={results[0].bounds.epsilon_lower!r}, delta_lower=0.0, runs=20000, "
        f"confidence={CONFIDENCE!r}, events_tested={results[0].events_tested}, passed=True)")


# ---- mechanisms written in Python -------------------------------------------------------------


def test_honest_randomized_response_passes_and_a_dishonest_claim_fails():
    options = audit.AuditOptions(selection_runs=2000, runs=20_000, confidence=CONFIDENCE, seed=11)
    honest = audit.run(audit.AuditTarget("randomized response", "bit 0 vs 1", 1.0, 0.0, randomized_response(1.0)),
                       options)
    assert honest.passed
    assert honest.events_tested == 2
    # The audit has power: at the expected counts the bound is 0.918, and even counts 5 standard
    # deviations off in the adverse direction give 0.84, so this fails with probability < 1e-6.
    assert honest.bounds.epsilon_lower > 0.8

    # Randomized response at epsilon 2 claiming 0.5: at the expected counts (p = 0.881 vs 0.119)
    # the bound is about 1.89. It could pass only if the estimated ratio fell below e^0.5, more than
    # 50 standard deviations away: the audit proves (at confidence 1 - 1e-6) that the claim is false.
    dishonest = audit.run(audit.AuditTarget("randomized response", "bit 0 vs 1", 0.5, 0.0, randomized_response(2.0)),
                          options)
    assert not dishonest.passed
    assert dishonest.bounds.epsilon_lower > 0.5


def test_counts_as_a_dict_give_the_same_audit():
    as_keys = randomized_response(1.0)

    def as_counts(on_d_prime, context, runs):
        keys, counts = np.unique(as_keys(on_d_prime, context, runs), return_counts=True)
        return {int(k): int(c) for k, c in zip(keys, counts)}

    options = audit.AuditOptions(selection_runs=1000, runs=5000, seed=4)
    a = audit.run(audit.AuditTarget("rr", "bit", 1.0, 0.0, as_keys), options)
    b = audit.run(audit.AuditTarget("rr", "bit", 1.0, 0.0, as_counts), options)
    assert repr(a.bounds) == repr(b.bounds)


def test_progress_rises_from_zero_to_the_total():
    calls = []
    options = audit.AuditOptions(selection_runs=1000, runs=audit.RELEASES_PER_CALL + 5,
                                 progress=lambda done, total: calls.append((done, total)))
    chunks = []

    def counting_run(on_d_prime, context, runs):
        chunks.append(runs)
        return {0: runs}

    assert audit.run(audit.AuditTarget("constant", "any", 1.0, 0.0, counting_run), options).passed
    total = 2 * (options.selection_runs + options.runs)
    assert calls[0] == (0, total)
    assert calls[-1] == (total, total)
    assert all(t == total for _, t in calls)
    assert all(a <= b for (a, _), (b, _) in zip(calls, calls[1:]))
    # The first call, then one per chunk: one per selection input, two per test input.
    assert len(calls) == 1 + 2 * 1 + 2 * 2
    assert max(chunks) <= audit.RELEASES_PER_CALL


def test_python_exceptions_propagate_unchanged():
    class MechanismBroke(Exception):
        pass

    raised = MechanismBroke("no more releases")

    def failing_run(on_d_prime, context, runs):
        raise raised

    with pytest.raises(MechanismBroke) as caught:
        audit.run(audit.AuditTarget("broken", "any", 1.0, 0.0, failing_run), runs=10, selection_runs=10)
    assert caught.value is raised

    calls = []

    def stop(done, total):
        calls.append(done)
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        audit.run(audit.AuditTarget("constant", "any", 1.0, 0.0, constant_output), runs=10, selection_runs=10,
                  progress=stop)
    assert calls == [0, 10]  # the audit ended at the exception


@pytest.mark.parametrize("outputs,error,message", [
    (lambda runs: list(range(runs)), TypeError, r"1-D NumPy int64 array .*\(got list\)"),
    (lambda runs: np.zeros(runs, dtype=np.int32), TypeError, r"dtype int32"),
    (lambda runs: np.zeros((runs, 1), dtype=np.int64), TypeError, r"shape \(10, 1\)"),
    (lambda runs: np.zeros(runs + 1, dtype=np.int64), ValueError, r"one key per release, runs = 10 \(got 11\)"),
    (lambda runs: {0: runs - 1}, ValueError, r"add up to runs = 10 \(got 9\)"),
    (lambda runs: {0: runs, 1: 2**64 - 1}, ValueError, r"add up to runs = 10 \(got more\)"),
    (lambda runs: {0: -1}, ValueError, r"not an integer >= 0 \(got -1 for key 0\)"),
    (lambda runs: {"a": runs}, TypeError, r"dict key that is not a 64-bit integer \(got 'a'\)"),
])
def test_bad_outputs_of_a_python_target_are_named(outputs, error, message):
    target = audit.AuditTarget("bad", "any", 1.0, 0.0, lambda on_d_prime, context, runs: outputs(runs))
    with pytest.raises(error, match=message):
        audit.run(target, runs=10, selection_runs=10)


def test_bad_targets_and_options_are_refused_before_any_release():
    with pytest.raises(TypeError, match=r"run must be callable \(got int\)"):
        audit.AuditTarget("x", "y", 1.0, 0.0, 3)
    with pytest.raises(dpselect.InvalidArgument, match=r"claimed_epsilon must be finite and >= 0 \(got -1\)"):
        audit.AuditTarget("x", "y", -1.0, 0.0, constant_output)
    with pytest.raises(dpselect.InvalidArgument, match=r"claimed_delta must be in \[0, 1\) \(got 1\)"):
        audit.AuditTarget("x", "y", 1.0, 1.0, constant_output)
    with pytest.raises(TypeError, match=r"progress must be callable"):
        audit.AuditOptions(progress="yes")

    releases = []
    target = audit.AuditTarget("x", "y", 1.0, 0.0, lambda d, context, runs: releases.append(runs) or {0: runs})
    for fields, message in [
        ({"selection_runs": 0}, r"selection_runs must be >= 1 \(got 0\)"),
        ({"runs": 0}, r"runs must be >= 1 \(got 0\)"),
        ({"confidence": 1.5}, r"confidence must be in \(0, 1\) \(got 1.5\)"),
        ({"max_events": 0}, r"max_events must be >= 1 \(got 0\)"),
    ]:
        with pytest.raises(dpselect.InvalidArgument, match=message):
            audit.run(target, **fields)
    assert releases == []
    with pytest.raises(TypeError, match="not both"):
        audit.run(target, audit.AuditOptions(), runs=5)
    with pytest.raises(TypeError, match="AuditTarget"):
        audit.run("exponential")


def test_options_defaults_and_repr():
    options = audit.AuditOptions()
    assert repr(options) == ("AuditOptions(selection_runs=20000, runs=200000, confidence=0.95, max_events=16, "
                             "seed=1, progress=None)")
    options.progress = print
    assert options.progress is print
    assert repr(options).endswith("progress=<built-in function print>)")
    options.progress = None
    assert options.progress is None


def test_a_target_in_a_reference_cycle_is_collected():
    def make_cycle():
        box = {}

        def run(on_d_prime, context, runs):
            return {0: runs} if box else {}

        box["target"] = audit.AuditTarget("cycle", "any", 1.0, 0.0, run)  # target -> run -> box -> target
        box["options"] = audit.AuditOptions(progress=lambda done, total: box)  # options -> lambda -> box
        return weakref.ref(run)

    run_alive = make_cycle()
    gc.collect()
    assert run_alive() is None


def test_the_gil_is_released_during_an_audit():
    target = audit.selection_audits()[0]
    assert_the_gil_is_released(lambda: audit.run(target, runs=200_000, selection_runs=20_000))


def test_a_context_kept_by_a_run_cannot_be_used_after_the_call():
    # The context lives only during the call (it is the auditor's, on its stack): a run that keeps
    # it gets an error when it uses it later, never a dangling pointer.
    kept = []

    def keep_context(on_d_prime, context, runs):
        kept.append(context)
        return {0: runs}

    target = audit.AuditTarget("constant", "none", 1.0, 0.0, keep_context)
    audit.run(target, runs=1000, selection_runs=1000)
    for context in (kept[0], kept[-1]):
        with pytest.warns(RuntimeWarning, match="uninitialized instance"), pytest.raises(TypeError):
            dpselect.select(context, np.array([1.0, 2.0]), epsilon=1.0, sensitivity=1.0)
