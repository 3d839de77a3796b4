# SPDX-License-Identifier: Apache-2.0
"""The empirical privacy auditor: lower bounds on a mechanism's privacy loss.

For an output event E, an (epsilon, delta)-DP mechanism satisfies
P[M(D) in E] <= e^epsilon P[M(D') in E] + delta on neighbouring inputs D and D', both ways. The
auditor makes many releases on D and on D' (each input from its own fixed-seed context), counts
how often each event happens, and bounds both probabilities with exact Clopper-Pearson intervals:
epsilon >= ln(lower(p_D) / upper(p_D')) and delta >= lower(p_D) - e^claimed_epsilon upper(p_D')
hold together with probability >= confidence (Bonferroni over every bound). The events are chosen
first from a separate selection run with other seeds, as StatDP (Ding et al., CCS 2018) and
DP-Sniper (Bichsel et al., S&P 2021) do, so the test run's bounds are honest.

A mechanism passes when its lower bound does not exceed its claim. Passing is evidence, not
proof; failing proves, at the stated confidence, that the implementation breaks its claim.

Audit the library's own mechanisms (``library_targets()``, as ``dpselect audit`` does) or a
mechanism written in Python::

    import numpy as np, dpselect, dpselect.audit as audit

    def randomized_response(on_d_prime, context, runs):
        # RR at epsilon = 1 from the exponential mechanism on two candidates (D: the true bit is
        # 0, D': it is 1): e^1 / (1 + e^1) on the true bit.
        utilities = np.array([0.0, 1.0] if on_d_prime else [1.0, 0.0])
        picks = dpselect.select_repeated(context, utilities, runs, epsilon=1.0, sensitivity=0.5)
        return picks.indices                     # a NumPy int64 array, one index per release

    target = audit.AuditTarget("randomized response", "bit 0 vs 1", 1.0, 0.0, randomized_response)
    audit.run(target, runs=20_000, selection_runs=2_000).passed

Audits are reproducible: every context derives from ``options.seed``. The GIL is released while
an audit runs, except inside Python callables (a target's run, a progress hook), which run on the
calling thread; an exception they raise ends the audit and propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from ._checks import check_module as _check_module
from ._arrays import params_of
from ._dpselect import audit as _core

AuditOptions = _core.AuditOptions
AuditResult = _core.AuditResult
AuditTarget = _core.AuditTarget
Bounds = _core.Bounds
EventBound = _core.EventBound
EventCounts = _core.EventCounts
Interval = _core.Interval
RELEASES_PER_CALL: int = _core.RELEASES_PER_CALL
clopper_pearson = _core.clopper_pearson
noise_audits = _core.noise_audits
partition_selection_audits = _core.partition_selection_audits
privacy_loss_bounds = _core.privacy_loss_bounds
quantile_audits = _core.quantile_audits
regularized_incomplete_beta = _core.regularized_incomplete_beta
selection_audits = _core.selection_audits
sparse_vector_audits = _core.sparse_vector_audits

__all__ = [
    "AuditOptions", "AuditResult", "AuditTarget", "Bounds", "EventBound", "EventCounts", "Interval",
    "RELEASES_PER_CALL", "clopper_pearson", "library_targets", "noise_audits", "partition_selection_audits",
    "privacy_loss_bounds",
    "quantile_audits", "regularized_incomplete_beta", "run", "selection_audits", "sparse_vector_audits",
]


def library_targets() -> list[AuditTarget]:
    """Every mechanism of the library on its neighbour patterns, as ``dpselect audit`` runs them.

    Returns
    -------
    list of AuditTarget
        selection_audits(), sparse_vector_audits(), noise_audits(), quantile_audits() and
        partition_selection_audits(), in that order, at CI-friendly parameters (small ranges,
        epsilon around 1). Each claim is the library's documented guarantee; every one should
        pass.
    """
    return _core.all_audits()


def run(
    target: AuditTarget,
    options: AuditOptions | None = None,
    *,
    selection_runs: int = 20_000,
    runs: int = 200_000,
    confidence: float = 0.95,
    max_events: int = 16,
    seed: int = 1,
    progress: Callable[[int, int], object] | None = None,
) -> AuditResult:
    """Audits ``target`` and returns its AuditResult.

    Parameters
    ----------
    target : AuditTarget
        The mechanism and its claim: one of :func:`library_targets` or a Python mechanism.
    options : AuditOptions, optional
        All the options at once; then leave the keywords at their defaults.
    selection_runs : int, default 20000
        Releases per input to choose the events, >= 1.
    runs : int, default 200000
        Releases per input to bound them, >= 1.
    confidence : float, default 0.95
        The joint confidence of all the bounds of the audit, in (0, 1).
    max_events : int, default 16
        The most events carried from the selection run to the test run, >= 1.
    seed : int, default 1
        Every context of the audit derives from it: the same target, options and seed give the
        same result as ``dpselect audit --seed``.
    progress : callable, optional
        progress(done, total), called with the releases made so far and the total
        2 (selection_runs + runs).

    Returns
    -------
    AuditResult
        ``passed`` and the ``bounds`` (epsilon and delta lower bounds, the worst events).

    Raises
    ------
    InvalidArgument
        (a ValueError) bad options, naming the field.
    TypeError
        A target that is not an AuditTarget, or ``options`` together with keywords.
    Exception
        Whatever a Python callable of the audit (the target's run, ``progress``) raises, unchanged.

    Notes
    -----
    Clopper-Pearson intervals on the events' probabilities bound epsilon and delta from below
    with probability >= confidence (events chosen on a separate run, as StatDP, Ding et al. 2018,
    and DP-Sniper, Bichsel et al. 2021, do). Passing is evidence, not proof; failing proves, at
    that confidence, that the implementation breaks its claim. The GIL is released while the
    audit runs, except inside Python callables.
    """
    fields = {"selection_runs": selection_runs, "runs": runs, "confidence": confidence, "max_events": max_events,
              "seed": seed, "progress": progress}
    options = params_of(AuditOptions, options, fields, run.__kwdefaults__, name="options")
    if not isinstance(target, AuditTarget):
        raise TypeError(f"target must be a dpselect.audit.AuditTarget (got {type(target).__name__})")
    return _core.run_audit(target, options)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
