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
        return np.array([s.index for s in picks.selections], dtype=np.int64)

    target = audit.AuditTarget("randomized response", "bit 0 vs 1", 1.0, 0.0, randomized_response)
    audit.run(target, runs=20_000, selection_runs=2_000).passed

Audits are reproducible: every context derives from ``options.seed``. The GIL is released while
an audit runs, except inside Python callables (a target's run, a progress hook), which run on the
calling thread; an exception they raise ends the audit and propagates unchanged.
"""

from __future__ import annotations

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
privacy_loss_bounds = _core.privacy_loss_bounds
quantile_audits = _core.quantile_audits
regularized_incomplete_beta = _core.regularized_incomplete_beta
selection_audits = _core.selection_audits
sparse_vector_audits = _core.sparse_vector_audits

__all__ = [
    "AuditOptions", "AuditResult", "AuditTarget", "Bounds", "EventBound", "EventCounts", "Interval",
    "RELEASES_PER_CALL", "clopper_pearson", "library_targets", "noise_audits", "privacy_loss_bounds",
    "quantile_audits", "regularized_incomplete_beta", "run", "selection_audits", "sparse_vector_audits",
]


def library_targets() -> list[AuditTarget]:
    """Every mechanism of the library on its neighbour patterns, at CI-friendly parameters (small
    ranges, epsilon around 1), as ``dpselect audit`` runs them: selection_audits(),
    sparse_vector_audits(), noise_audits() and quantile_audits(), in that order. Each claim is the library's
    documented guarantee; every one should pass.
    """
    return _core.all_audits()


def run(target: AuditTarget, options: AuditOptions | None = None, **fields) -> AuditResult:
    """Audits ``target`` (an AuditTarget) and returns its AuditResult.

    ``options`` (an AuditOptions) or its fields as keywords: ``selection_runs`` (default 20 000
    releases per input to choose the events), ``runs`` (200 000 per input to bound them),
    ``confidence`` (0.95, joint over all bounds of the audit), ``max_events`` (16), ``seed`` (1),
    ``progress`` (None, or progress(done, total)). The same target, options and seed give the same
    result as ``dpselect audit --seed``. Raises InvalidArgument (a ValueError) for bad options,
    naming the field, and whatever a Python callable of the audit raises.
    """
    options = params_of(AuditOptions, options, fields, name="options")
    if not isinstance(target, AuditTarget):
        raise TypeError(f"target must be a dpselect.audit.AuditTarget (got {type(target).__name__})")
    return _core.run_audit(target, options)
