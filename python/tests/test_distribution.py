# SPDX-License-Identifier: Apache-2.0
"""Output distributions against exact probabilities (fixed seeds).

Each cell's count is compared with its exact expectation by a normal approximation of the
binomial; a cell fails beyond 5 standard deviations. Per cell the false-failure probability is
about 5.7e-7 (two-sided normal tail at 5 sigma; the binomial counts here are large enough for the
approximation), so a test of c cells fails by chance with probability below c * 5.7e-7. With the
fixed seeds below the outcome is deterministic: a failure means the distribution changed.
"""

import itertools
import math

import numpy as np

import dpselect

Z_LIMIT = 5.0


def expect_counts(counts, probabilities, releases):
    for cell, (count, p) in enumerate(zip(counts, probabilities)):
        sd = math.sqrt(releases * p * (1.0 - p))
        z = (count - releases * p) / sd if sd > 0 else float(count != releases * p) * math.inf
        assert abs(z) < Z_LIMIT, f"cell {cell}: {count} against {releases * p:.1f} expected (z = {z:.2f})"


def exponential_probabilities(u, epsilon, sensitivity, monotone):
    # Dwork & Roth 2014, Def. 3.4: P(r) proportional to exp(eps u(r) / (2 Delta)), or eps u / Delta
    # when monotone. math.fsum keeps the normalization exact to an ulp.
    scale = epsilon / (sensitivity if monotone else 2.0 * sensitivity)
    top = max(u)
    weights = [math.exp(scale * (x - top)) for x in u]
    total = math.fsum(weights)
    return [w / total for w in weights]


def test_exponential_mechanism_matches_its_exact_distribution():
    u = [0.0, 1.0, 2.5, 3.0, 3.0]
    releases = 200_000
    for monotone in (False, True):
        context = dpselect.Context.fixed_seed(2024 + monotone)
        picks = dpselect.select_repeated(context, np.array(u), releases, epsilon=1.2, sensitivity=1.0,
                                         monotone=monotone, backend=dpselect.Backend.CPU)
        counts = np.bincount([s.index for s in picks.selections], minlength=len(u))
        expect_counts(counts, exponential_probabilities(u, 1.2, 1.0, monotone), releases)


def test_top_k_ordered_pairs_match_plackett_luce():
    # One-shot Gumbel top-k equals peeling EM (Durfee & Rogers 2019): the ordered pair (i, j) has
    # probability w_i / W * w_j / (W - w_i).
    u = [0.0, 0.7, 1.5, 2.0]
    epsilon = 2.0  # the 2 picks together: 1.0 each
    weights = [math.exp(epsilon / 2 * x / 2.0) for x in u]
    total = math.fsum(weights)
    pairs = list(itertools.permutations(range(len(u)), 2))
    probabilities = [weights[i] / total * weights[j] / (total - weights[i]) for i, j in pairs]
    context = dpselect.Context.fixed_seed(77)
    releases = 40_000
    counts = dict.fromkeys(pairs, 0)
    array = np.array(u)
    for _ in range(releases):
        top = dpselect.select_top_k(context, array, 2, epsilon=epsilon, sensitivity=1.0, backend=dpselect.Backend.CPU)
        counts[tuple(top.indices)] += 1
    expect_counts([counts[p] for p in pairs], probabilities, releases)
