# SPDX-License-Identifier: Apache-2.0
"""The private-quantile releases of dpselect, OpenDP and diffprivlib, and the rank error they are judged by.

Shared by bench/quantile_peers.py (synthetic data) and bench/quantiles_real_data.py (public
columns): one definition of what each implementation runs, so that the two comparisons measure
the same calls. Every runner protects one replaced record with n public.

  * ``DpselectRunner``: ``select_quantile`` for one level, ``select_quantiles`` with a
    ``QuantilesMethod`` for several, over ``QuantileRange(lower, upper)`` (the 2^40 + 1 point grid)
    or ``QuantileRange(lower, upper, resolution=step)``; RecordNeighbours.REPLACE_ONE_RECORD,
    Backend.CPU; the data prepared once (``QuantileData``) and reused while the same array comes
    back. Contexts from ``Context.fixed_seed``: reproducible, NOT for real data.
  * ``OpenDPRunner``: ``make_private_quantile`` on a vector domain of known size n (floats without
    NaN, or integers) with the symmetric distance, over a list of candidates (evenly spaced over
    the range, or given). Replacing one record is symmetric distance 2: the scale is solved with
    ``binary_search_param`` so that the privacy map at 2 is at most epsilon (solved on two
    candidates, which builds fast: the map does not depend on them), and the measurement over the
    real candidates is checked against epsilon once. Several levels: one release each at
    epsilon / m (basic composition, Dwork & Roth 2014, Thm 3.16). Under ``max_divergence()``
    OpenDP's noisy max adds one-sided exponential noise to its score
    -|#{x_i < c} - q (n - #{x_i = c})|: permute-and-flip (McKenna & Sheldon 2020). OpenDP draws
    from the operating system: it cannot be seeded.
  * ``DiffprivlibRunner``: ``tools.quantile`` with bounds = the range (Smith's mechanism,
    sensitivity 1; for a list of levels it splits epsilon evenly itself), a fresh unlimited
    ``BudgetAccountant`` per call, ``random_state`` a seed or a ``numpy.random.RandomState``.

``RankError``: the distance from q n to [#{x_i < v}, #{x_i <= v}] for a released v (0 inside: a
value within a run of ties is as good as any other point of the run); on data without ties at
v, |#{x_i < v} - q n|.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

DECILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def package_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - not installed, or no metadata (dpselect from a build tree)
        return "not installed"


def import_dpselect(package: str | None = None):
    """dpselect from the folder ``package`` when it exists, else wherever ``import dpselect`` finds it."""
    if package is not None and Path(package).is_dir() and package not in sys.path:
        sys.path.insert(0, package)
    try:
        import dpselect
    except ImportError as error:
        sys.exit(f"cannot import dpselect ({error}): put its package on PYTHONPATH, e.g. PYTHONPATH=build/py/python")
    return dpselect


class RankError:
    """dist(q n, [#{x_i < v}, #{x_i <= v}]) over the values, clipped to ``bounds`` when given."""

    def __init__(self, values, bounds: tuple[float, float] | None = None):
        import numpy as np

        self.sorted = np.sort(values if bounds is None else np.clip(values, *bounds))
        self.n = values.size

    def __call__(self, value: float, q: float) -> float:
        import numpy as np

        below = int(np.searchsorted(self.sorted, value, side="left"))
        through = int(np.searchsorted(self.sorted, value, side="right"))
        target = q * self.n
        return max(below - target, target - through, 0.0)

    def floor_on(self, candidates, q: float) -> float:
        """The smallest error any of the candidates can have: what a candidate grid forces."""
        import numpy as np

        candidates = np.asarray(candidates, dtype=np.float64)
        below = np.searchsorted(self.sorted, candidates, side="left")
        through = np.searchsorted(self.sorted, candidates, side="right")
        target = q * self.n
        return float(np.min(np.maximum(np.maximum(below - target, target - through), 0.0)))


class PerArray:
    """``make(values)`` for the last array asked about, made again only when another array comes."""

    def __init__(self, make):
        self.make = make
        self.clear()

    def __call__(self, values):
        if self.of is not values:
            self.value = self.make(values)
            self.of = values
        return self.value

    def clear(self) -> None:
        self.value = self.of = None


def quantile_range(dpselect, lower: float, upper: float, resolution: float | None = None):
    if resolution is None:
        return dpselect.QuantileRange(lower, upper)
    return dpselect.QuantileRange(lower, upper, resolution=resolution)


class DpselectRunner:
    def __init__(self, dpselect, lower: float, upper: float, resolution: float | None = None):
        self.dp = dpselect
        self.range = quantile_range(dpselect, lower, upper, resolution)
        # The data clipped, placed on the grid and sorted, once per array.
        self.prepare = PerArray(lambda values: self.dp.QuantileData(values, self.range))

    def release(self, context, values, qs: Sequence[float], epsilon: float, method: str | None = None,
                delta: float = 0.0, mechanism: str = "EXPONENTIAL") -> list[float]:
        """One level with ``select_quantile`` (method None), or all of them with ``select_quantiles``;
        ``mechanism``: the name of a dpselect.Mechanism (EXPONENTIAL or PERMUTE_AND_FLIP)."""
        dp = self.dp
        neighbours, backend = dp.RecordNeighbours.REPLACE_ONE_RECORD, dp.Backend.CPU
        # Only where asked: a package without the keyword still runs the exponential mechanism's rows.
        chosen = {} if mechanism == "EXPONENTIAL" else {"mechanism": getattr(dp.Mechanism, mechanism)}
        if method is None:
            (q,) = qs
            params = dp.QuantileParams(self.range, epsilon, neighbours=neighbours, backend=backend, **chosen)
            return [dp.select_quantile(context, self.prepare(values), q, params).value]
        params = dp.QuantilesParams(self.range, epsilon, method=getattr(dp.QuantilesMethod, method), delta=delta,
                                    neighbours=neighbours, backend=backend, **chosen)
        return list(dp.select_quantiles(context, self.prepare(values), list(qs), params).values)

    def median(self, values, epsilon: float, seed: int) -> list[float]:
        return self.release(self.dp.Context.fixed_seed(seed), values, [0.5], epsilon)

    def deciles(self, method: str, delta: float = 0.0):
        def run(values, epsilon: float, seed: int) -> list[float]:
            return self.release(self.dp.Context.fixed_seed(seed), values, DECILES, epsilon, method, delta)

        return run


class OpenDPRunner:
    """make_private_quantile over ``candidates`` (a count, evenly spaced over [lower, upper] with both
    ends, or the list itself) on floats or, with ``integer``, on integers."""

    def __init__(self, lower: float, upper: float, candidates: int | Sequence[float], integer: bool = False):
        import numpy as np
        import opendp.prelude as dp

        dp.enable_features("contrib")
        self.dp = dp
        self.integer = integer
        if isinstance(candidates, int):
            candidates = np.linspace(lower, upper, candidates)
        self.candidates = [int(c) for c in candidates] if integer else [float(c) for c in candidates]
        self.scales: dict = {}
        self.checked: set = set()
        self.built: dict = {}
        # The values as OpenDP's domain takes them (a NumPy array converts faster than a list).
        self.prepare = PerArray(lambda values: values.astype(np.int32) if integer else np.asarray(values, np.float64))

    def domain(self, n: int):
        dp = self.dp
        atom = dp.atom_domain(T=int) if self.integer else dp.atom_domain(T=float, nan=False)
        return dp.vector_domain(atom, size=n)

    def make(self, n: int, q: float, scale: float, candidates=None):
        dp = self.dp
        return dp.m.make_private_quantile(self.domain(n), dp.symmetric_distance(), dp.max_divergence(),
                                          self.candidates if candidates is None else candidates, q, scale)

    def scale(self, n: int, q: float, epsilon: float) -> float:
        """The scale whose privacy map at symmetric distance 2 (one record replaced) is at most epsilon,
        solved on two candidates (the map does not depend on them; measurement() checks the real ones)."""
        key = (n, q, epsilon)
        if key not in self.scales:
            self.scales[key] = self.dp.binary_search_param(lambda s: self.make(n, q, s, self.candidates[:2]),
                                                           d_in=2, d_out=epsilon)
        return self.scales[key]

    def measurement(self, n: int, q: float, epsilon: float):
        """Built afresh (the speed phase of quantile_peers.py times building it); the first one of a
        setting is checked against epsilon."""
        measurement = self.make(n, q, self.scale(n, q, epsilon))
        if (n, q, epsilon) not in self.checked:
            if measurement.map(2) > epsilon:
                raise RuntimeError(f"OpenDP scale {self.scale(n, q, epsilon)} gives {measurement.map(2)} > {epsilon}")
            self.checked.add((n, q, epsilon))
        return measurement

    def cached(self, n: int, q: float, epsilon: float):
        """The measurement built once per setting (building it over many candidates takes longer than
        invoking it at small n)."""
        key = (n, q, epsilon)
        if key not in self.built:
            if len(self.built) >= 64:
                self.built.clear()
            self.built[key] = self.measurement(n, q, epsilon)
        return self.built[key]

    def release(self, values, qs: Sequence[float], epsilon: float) -> list[float]:
        """One release per level at epsilon / m (basic composition)."""
        data = self.prepare(values)
        return [float(self.cached(values.size, q, epsilon / len(qs))(data)) for q in qs]

    def median(self, values, epsilon: float, seed: int) -> list[float]:
        return self.release(values, [0.5], epsilon)

    def deciles(self, values, epsilon: float, seed: int) -> list[float]:
        return self.release(values, DECILES, epsilon)


class DiffprivlibRunner:
    def __init__(self, lower: float, upper: float):
        from diffprivlib import BudgetAccountant
        from diffprivlib.tools import quantile

        self.bounds = (lower, upper)
        self.quantile = quantile
        self.accountant = BudgetAccountant

    def release(self, values, qs: Sequence[float], epsilon: float, random_state) -> list[float]:
        """``random_state``: a seed, or a numpy.random.RandomState that successive calls draw on."""
        import numpy as np

        # A fresh, unlimited accountant per release: the budget is ours to count, not its.
        released = self.quantile(values, list(qs) if len(qs) > 1 else qs[0], epsilon=epsilon, bounds=self.bounds,
                                 random_state=random_state, accountant=self.accountant())
        return [float(v) for v in np.ravel(released)]

    def median(self, values, epsilon: float, seed: int) -> list[float]:
        return self.release(values, [0.5], epsilon, seed)

    def deciles(self, values, epsilon: float, seed: int) -> list[float]:
        return self.release(values, DECILES, epsilon, seed)
