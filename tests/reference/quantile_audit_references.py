#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exact privacy losses of the quantile audits (host/audit/audit_quantiles.cpp) and of the negative
controls of tests/audit_quantiles_test.cpp, computed independently of the C++ code.

Run:  python3 tests/reference/quantile_audit_references.py        (standard library only)

Model: the range [0, R] is continuous (the library's grid of 2^40 + 1 points changes interval
lengths by a relative 1e-11 at most) and the data are integers, so every bin (k - 1, k] of the
audits' key lies inside one data interval. With c(t) = #{x_i < t}:
  single quantile (Smith 2011): density of t proportional to exp(-s |c(t) - q n|), s = eps / (2 Delta),
      Delta = 1 (a record replaced) or max(q, 1 - q) (added or removed);
  permute-and-flip (McKenna & Sheldon 2020) on the integer grid 0..R: its algorithm's law, exactly;
  JointExp (Gillenwater, Joseph & Kulesza 2021): sorted (o_1, o_2) with density proportional to
      exp(-(eps / 4) sum_j |c(o_j) - c(o_{j-1}) - (q_j - q_{j-1}) n|), c(o_0) = 0, c(o_3) = n;
      k outputs in one bin have volume 1 / k!;
  independent releases: the product of single-quantile distributions, the pair sorted;
  recursive splitting (Kaplan, Schnapp & Stemmer 2022, as host/quantiles/quantiles.cpp): the
      middle level first on the node's values and window with the add/remove mechanism at q
      rescaled to the node, then the values below the output on [lo, output] and the rest on
      [output, hi]; the root's output is integrated over its bin (24-point Gauss-Legendre).
Each target prints the largest |ln(P_D(E) / P_D'(E))| over all events E and where it is reached.
"""
import itertools
import math


def gauss_legendre(points):
    """Nodes and weights on [-1, 1] (Newton's method on the Legendre polynomial)."""
    nodes, weights = [], []
    for i in range(1, points + 1):
        x = math.cos(math.pi * (i - 0.25) / (points + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, points + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            derivative = points * (x * p1 - p0) / (x * x - 1)
            step = p1 / derivative
            x -= step
            if abs(step) < 1e-16:
                break
        nodes.append(x)
        weights.append(2 / ((1 - x * x) * derivative * derivative))
    return nodes, weights


GL_NODES, GL_WEIGHTS = gauss_legendre(24)


def single_pieces(data, lo, hi, q, scale):
    """The single-quantile EM on [lo, hi] as (a, b, probability) pieces of uniform density."""
    xs = sorted(min(max(x, lo), hi) for x in data)
    n = len(xs)
    cuts = [lo] + xs + [hi]
    pieces = [(cuts[r], cuts[r + 1], (cuts[r + 1] - cuts[r]) * math.exp(-scale * abs(r - q * n)))
              for r in range(n + 1) if cuts[r + 1] > cuts[r]]
    total = sum(mass for _, _, mass in pieces)
    return [(a, b, mass / total) for a, b, mass in pieces]


def unit_bins(a, b):
    """[a, b] cut at the integers: (start, end, bin k of (k - 1, k])."""
    t = a
    while t < b:
        end = min(b, math.floor(t) + 1)
        yield t, end, math.ceil(end)
        t = end


def single_bins(data, lo, hi, q, scale):
    out = {}
    for a, b, mass in single_pieces(data, lo, hi, q, scale):
        for s, e, k in unit_bins(a, b):
            out[(k,)] = out.get((k,), 0.0) + mass * (e - s) / (b - a)
    return out


def independent_bins(data, lo, hi, qs, scale_of):
    out = {(): 1.0}
    for q in qs:
        bins = single_bins(data, lo, hi, q, scale_of(q))
        out = {key + bin_: mass * p for key, mass in out.items() for bin_, p in bins.items()}
    return sorted_keys(out)


def sorted_keys(distribution):
    out = {}
    for key, mass in distribution.items():
        key = tuple(sorted(key))
        out[key] = out.get(key, 0.0) + mass
    return out


def joint_bins(data, hi, qs, scale):
    n = len(data)
    levels = [0.0] + list(qs) + [1.0]
    below = {k: sum(1 for x in data if x < k - 0.5) for k in range(1, hi + 1)}
    out = {}
    for key in itertools.combinations_with_replacement(range(1, hi + 1), len(qs)):
        counts = [0] + [below[k] for k in key] + [n]
        utility = -sum(abs(counts[j] - counts[j - 1] - (levels[j] - levels[j - 1]) * n)
                       for j in range(1, len(levels)))
        volume = 1.0
        for k in set(key):
            volume /= math.factorial(key.count(k))
        out[key] = volume * math.exp(scale * utility)
    total = sum(out.values())
    return {key: mass / total for key, mass in out.items()}


def recursive_bins(data, lo, hi, qs, first, last, level_begin, level_end, eps_each):
    if first >= last:
        return {(): 1.0}
    middle = first + (last - first) // 2
    q = min(max((qs[middle] - level_begin) / (level_end - level_begin), 0.0), 1.0)
    scale = eps_each / (2 * max(q, 1 - q))
    out = {}
    for a, b, mass in single_pieces(data, lo, hi, q, scale):
        for s, e, k in unit_bins(a, b):
            for node, weight in zip(GL_NODES, GL_WEIGHTS):
                point = (s + e) / 2 + (e - s) / 2 * node
                share = mass / (b - a) * (e - s) / 2 * weight
                left = recursive_bins([x for x in data if x < point], lo, point, qs, first, middle,
                                      level_begin, qs[middle], eps_each)
                right = recursive_bins([x for x in data if x >= point], point, hi, qs, middle + 1, last,
                                       qs[middle], level_end, eps_each)
                for left_key, left_mass in left.items():
                    for right_key, right_mass in right.items():
                        key = left_key + (k,) + right_key
                        out[key] = out.get(key, 0.0) + share * left_mass * right_mass
    return out


def permute_and_flip_points(data, hi, q, scale):
    """Permute-and-flip (McKenna & Sheldon 2020, Alg. 1) over the integers 0..hi, utility
    -dist(q n, [c(t), #{x_i <= t}]) at scale s: the candidates in a uniformly random order, each
    accepted with probability exp(s (u - u*)). r comes out when it is accepted and none before it
    was; the set before r is a uniform subset of size k, k uniform in [0, N - 1]: P(r) = p_r (1/N)
    sum_k e_k / C(N - 1, k), e_k the elementary symmetric polynomials of the others' 1 - p."""
    target = q * len(data)
    utilities = [-max(0.0, sum(v < t for v in data) - target, target - sum(v <= t for v in data))
                 for t in range(hi + 1)]
    accept = [math.exp(scale * (u - max(utilities))) for u in utilities]
    n = len(accept)
    out = {}
    for r in range(n):
        e = [1.0] + [0.0] * (n - 1)
        seen = 0
        for j in range(n):
            if j != r:
                seen += 1
                for k in range(seen, 0, -1):
                    e[k] += e[k - 1] * (1.0 - accept[j])
        out[(r,)] = accept[r] * sum(e[k] / math.comb(n - 1, k) for k in range(n)) / n
    return out


def worst(name, on_d, on_d_prime):
    ratio, key, p_d, p_d_prime = max(
        (abs(math.log(on_d[key] / on_d_prime[key])), key, on_d[key], on_d_prime[key]) for key in on_d)
    print(f"{name:55s} loss {ratio:.5f}  bins {key}: P_D {p_d:.5f}, P_D' {p_d_prime:.5f}")


def main():
    worst("single, replace: {1,2,10,11} vs {2,10,11,11}",
          single_bins([1, 2, 10, 11], 0, 12, 0.5, 0.5), single_bins([2, 10, 11, 11], 0, 12, 0.5, 0.5))
    worst("single, add-remove: {2,3,9,10} vs + {10}",
          single_bins([2, 3, 9, 10], 0, 12, 0.5, 1.0), single_bins([2, 3, 9, 10, 10], 0, 12, 0.5, 1.0))
    worst("permute-and-flip, replace: {0,1} vs {1,8} on 0..8",
          permute_and_flip_points([0, 1], 8, 0.5, 0.5), permute_and_flip_points([1, 8], 8, 0.5, 0.5))
    worst("permute-and-flip, add-remove: {0,0,5,6} vs + {6} on 0..8",
          permute_and_flip_points([0, 0, 5, 6], 8, 0.5, 1.0), permute_and_flip_points([0, 0, 5, 6, 6], 8, 0.5, 1.0))
    worst("JointExp (1/4, 3/4), replace: {1,1,2,2} vs {1,2,2,7}",
          joint_bins([1, 1, 2, 2], 8, [0.25, 0.75], 0.25), joint_bins([1, 2, 2, 7], 8, [0.25, 0.75], 0.25))
    worst("basic (1/2, 3/4), replace: {1,2,3,3} vs {2,3,3,7}",
          independent_bins([1, 2, 3, 3], 0, 8, [0.5, 0.75], lambda q: 0.25),
          independent_bins([2, 3, 3, 7], 0, 8, [0.5, 0.75], lambda q: 0.25))
    qs = [1 / 3, 2 / 3]
    worst("recursive (1/3, 2/3), add-remove: {4,5,7,7} vs + {6}",
          sorted_keys(recursive_bins([4, 5, 7, 7], 0, 8, qs, 0, 2, 0.0, 1.0, 0.5)),
          sorted_keys(recursive_bins([4, 5, 6, 7, 7], 0, 8, qs, 0, 2, 0.0, 1.0, 0.5)))
    worst("control: replace pair at the add/remove scale",
          single_bins([1, 2, 10, 11], 0, 12, 0.5, 1.0), single_bins([2, 10, 11, 11], 0, 12, 0.5, 1.0))
    worst("control: two medians at eps each",
          independent_bins([1, 2, 10, 11], 0, 12, [0.5, 0.5], lambda q: 0.5),
          independent_bins([2, 10, 11, 11], 0, 12, [0.5, 0.5], lambda q: 0.5))


if __name__ == "__main__":
    main()
