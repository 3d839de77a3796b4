# SPDX-License-Identifier: Apache-2.0
"""Private quantiles on real data: dpselect against OpenDP and diffprivlib at the same epsilon.

Four public columns (bench/data/README.md says where each comes from and how it was made):

  * diamonds, price: the 53,940 diamond prices of ggplot2's ``diamonds`` (integer US dollars,
    only 21.5% of the values distinct), public range [0, 20000], recorded resolution 1;
  * airports, latitude: the 3,376 US airport latitudes of vega-datasets' ``airports.csv``
    (degrees, up to 8 decimals, 99.97% distinct: a continuous column), public range [-90, 90],
    recorded resolution 1e-8;
  * taxis, fare: the 6,433 metered fares of seaborn's ``taxis`` (NYC TLC yellow and green taxi
    trips of March 2019; US dollars to the cent, only 3.42% distinct, the largest run 350 fares of
    $7.50), public range [0, 200] (the data set keeps the trips with 0 < fare < 200), recorded
    resolution 0.01;
  * weather, precipitation: the 2,922 daily precipitation totals of vega-datasets' ``weather.csv``
    (NOAA, Seattle and New York 2012-2015; millimetres to 0.1, 4.93% distinct, 62.6% of the days
    dry: a run of zeros holds the median), public range [0, 2000] (the world's greatest 24-hour
    rainfall on record is 1,825 mm), recorded resolution 0.1.

Each column is read as the points of the grid of its recorded resolution (lower + k resolution
rounded once, as dpselect computes them): a decimal such as 7.07 parses to a double that can differ
in the last bit from the point dpselect releases for it, and the metric compares exactly.

What each mechanism runs, per release, with the same epsilon and the same neighbouring relation
(replacing one record, the number of records n public); the runners and the metric are those of
bench/quantile_peer_runners.py, which bench/quantile_peers.py (synthetic data) uses too:

  * dpselect ``select_quantile`` (the median) and ``select_quantiles`` with JOINT_EXPONENTIAL (the
    deciles, one joint release at the whole epsilon: Gillenwater, Joseph & Kulesza 2021) and with
    INDEPENDENT_BASIC (the deciles at epsilon / 9 each, for a like-for-like view of the peers);
    RecordNeighbours.REPLACE_ONE_RECORD (the default). Twice: over the default grid of the range
    (2^40 + 1 points) and over the grid of the column's recorded resolution
    (``QuantileRange(lower, upper, resolution=...)``); a package without the ``resolution``
    keyword skips the second kind, and says so.
  * OpenDP ``make_private_quantile`` on a vector domain of known size n with the symmetric
    distance: replacing one record is symmetric distance 2, and the scale is solved with
    ``binary_search_param`` so that the measurement's privacy map at 2 is at most epsilon.
    Candidates: every integer of [0, 20000] for the prices (the grid of resolution 1); 100,001
    points evenly spaced over [-90, 90] for the latitudes (step 0.0018 degrees); every point of the
    grid of the recorded resolution for the fares (20,001, a cent apart) and the precipitation
    totals (20,001, 0.1 mm apart), the same doubles as dpselect's points. The deciles: nine
    releases at epsilon / 9 (basic composition, Dwork & Roth 2014, Thm 3.16). Its score of c is
    -|#{x_i < c} - q (n - #{x_i = c})|, and under ``max_divergence()`` its noisy max adds one-sided
    exponential noise: permute-and-flip (McKenna & Sheldon 2020), not the exponential mechanism.
  * diffprivlib ``tools.quantile`` with bounds = the range: Smith's (2011) exponential mechanism
    with sensitivity 1 over the n + 1 intervals between the sorted values, its utility
    -|i - q n| with n the data's size (known to the mechanism, hence replace-one neighbours). For
    the deciles it is called once with the nine levels and splits epsilon / 9 itself.

Metric: for a released value v at level q on the column x (n values), the rank error with ties
counted fairly, the distance from q n to the interval [#{x_i < v}, #{x_i <= v}] (0 inside it).
A cell (column, mechanism, levels, epsilon) repeats the release ``--releases`` times and reports
the mean error and its standard error; for the deciles each release's error is the mean over the
nine levels, and ``worst_level_error`` is the largest of the nine per-level means.

Reproducible: each cell draws from a seed derived from ``--seed`` and the cell's name (dpselect
``Context.fixed_seed``: NOT PRIVATE, an experiment on public data only; diffprivlib a seeded
``numpy.random.RandomState``). OpenDP cannot be seeded (it draws from the operating system), so
its rows move within their standard errors from run to run.

Run from the repository root. The peers' environment must use the Python the dpselect
extension was built for, with the NumPy of bench/requirements-quantile-peers.txt:

    python3 -m venv /tmp/peervenv
    /tmp/peervenv/bin/pip install -r bench/requirements-quantile-peers.txt
    PYTHONPATH=build/py/python /tmp/peervenv/bin/python bench/quantiles_real_data.py --out DIR

It writes DIR/results.csv (every cell) and DIR/results.md (a table per column). The defaults take
about 10 minutes of CPU time for the prices and the latitudes, most of it diffprivlib's and OpenDP's
deciles on the 53,940 prices, and (an estimate from 20 releases at one epsilon) about 3 more for the
fares and the precipitation totals; --jobs 2 (the default) spreads the cells over two cores.

``--exact`` releases nothing: it prints, for --datasets and --epsilons, the expected rank error of
one release at each decile (the median among them) by dpselect's select_quantile over each grid
(``exact_quantile_error``) and by OpenDP's make_private_quantile at the scale its rows use
(``exact_opendp_error``), summed exactly over each mechanism's output distribution: the numbers
the median rows' means estimate, without their sampling error:

    PYTHONPATH=build/py/python /tmp/peervenv/bin/python bench/quantiles_real_data.py --exact --datasets diamonds
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import gzip
import math
import os
import platform
import statistics
import sys
import warnings
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path

# The runners and the metric, shared with bench/quantile_peers.py (same folder).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from quantile_peer_runners import (DECILES, DiffprivlibRunner, DpselectRunner, OpenDPRunner, RankError, import_dpselect,
                                   package_version, quantile_range)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO / "bench" / "data"

MEDIAN = (0.5,)
LEVELS = {"median": MEDIAN, "deciles": DECILES}


@dataclass(frozen=True)
class Column:
    dataset: str
    column: str
    file: str
    lower: float
    upper: float
    resolution: float  # the precision the values were recorded with
    integer: bool
    opendp_candidates: int  # evenly spaced over [lower, upper], both ends included (the grid's points when as many)

    @property
    def label(self) -> str:
        return f"{self.dataset}, {self.column}"


COLUMNS = (
    # 20,001 candidates: every integer price of the range, the grid of resolution 1.
    Column("diamonds", "price", "diamonds_price.txt.gz", 0.0, 20000.0, 1.0, True, 20001),
    # 100,001 candidates (step 0.0018 degrees): OpenDP scores every candidate on every release, and
    # on this grid the best candidate is already within a fraction of a rank of each decile
    # (results.md gives the grid's floor on the error).
    Column("airports", "latitude", "airports_latitude.txt.gz", -90.0, 90.0, 1e-8, False, 100001),
    # 20,001 candidates: every multiple of a cent in the range, the grid of resolution 0.01.
    Column("taxis", "fare", "taxis_fare.txt.gz", 0.0, 200.0, 0.01, False, 20001),
    # 20,001 candidates: every multiple of 0.1 mm in the range, the grid of resolution 0.1.
    Column("weather", "precipitation", "weather_precipitation.txt.gz", 0.0, 2000.0, 0.1, False, 20001),
)


@dataclass(frozen=True)
class Mechanism:
    name: str
    levels: str  # "median" or "deciles"
    family: str  # "dpselect", "opendp" or "diffprivlib"
    method: str = ""  # dpselect's QuantilesMethod for the deciles
    resolution: bool = False  # dpselect over the column's recorded resolution
    mechanism: str = "EXPONENTIAL"  # dpselect's Mechanism: EXPONENTIAL or PERMUTE_AND_FLIP


MECHANISMS = (
    Mechanism("dpselect select_quantile (2^40+1 grid)", "median", "dpselect"),
    Mechanism("dpselect select_quantile (recorded resolution)", "median", "dpselect", resolution=True),
    Mechanism("dpselect select_quantile, permute-and-flip (recorded resolution)", "median", "dpselect",
              resolution=True, mechanism="PERMUTE_AND_FLIP"),
    Mechanism("OpenDP make_private_quantile", "median", "opendp"),
    Mechanism("diffprivlib tools.quantile", "median", "diffprivlib"),
    Mechanism("dpselect JointExp (2^40+1 grid)", "deciles", "dpselect", "JOINT_EXPONENTIAL"),
    Mechanism("dpselect JointExp (recorded resolution)", "deciles", "dpselect", "JOINT_EXPONENTIAL", True),
    Mechanism("dpselect independent, eps/9 each (2^40+1 grid)", "deciles", "dpselect", "INDEPENDENT_BASIC"),
    Mechanism("dpselect independent, eps/9 each (recorded resolution)", "deciles", "dpselect", "INDEPENDENT_BASIC",
              True),
    Mechanism("dpselect independent, permute-and-flip, eps/9 each (recorded resolution)", "deciles", "dpselect",
              "INDEPENDENT_BASIC", True, "PERMUTE_AND_FLIP"),
    Mechanism("dpselect recursive (recorded resolution)", "deciles", "dpselect", "RECURSIVE_SPLITTING", True),
    Mechanism("dpselect recursive, permute-and-flip (recorded resolution)", "deciles", "dpselect",
              "RECURSIVE_SPLITTING", True, "PERMUTE_AND_FLIP"),
    Mechanism("OpenDP 9 x make_private_quantile, eps/9 each", "deciles", "opendp"),
    Mechanism("diffprivlib tools.quantile, eps/9 each", "deciles", "diffprivlib"),
)

CSV_FIELDS = ["dataset", "column", "mechanism", "levels", "epsilon", "releases", "mean_rank_error", "stderr",
              "worst_level_error"]


# --------------------------------------------------------------------------------------------
# the data and the metric


def grid_size(column: Column) -> int:
    """The number of points of the grid of the column's recorded resolution over its range."""
    return round((column.upper - column.lower) / column.resolution) + 1


def grid_point(column: Column, k: int) -> float:
    """The k-th point of the grid of the column's recorded resolution: lower + k resolution rounded
    once, fma(k, resolution, lower), as dpselect's ``QuantileGrid.point`` computes it
    (``check_grid_points`` checks the two agree). For a decimal resolution such as 0.01 it can
    differ in the last bit from the decimal that the text of the value parses to (7.07 and
    707 x 0.01)."""
    return float(Fraction(k) * Fraction(column.resolution) + Fraction(column.lower))


def load_column(data_dir: Path, column: Column):
    """The column's values, each read as the point of the grid of its recorded resolution that it
    stands for (``grid_point``): a multiple of a decimal step such as 0.01 parses to a double that
    can differ in the last bit from the point dpselect releases for it, and the metric compares
    exactly, so a release of a tied value would be scored as one beside the run. Read as the
    points, the values, dpselect's outputs over that grid and OpenDP's candidates on it are the
    same doubles (integers are their own points). A value farther from a point than a millionth of
    the resolution (or than 2^-44 of the range's magnitude, a few ulps, where that is more) is an
    error: the column is not recorded at that resolution."""
    import numpy as np

    with gzip.open(data_dir / column.file, "rt") as f:
        values = np.array([float(line) for line in f if line.strip()])
    steps = np.rint((values - column.lower) / column.resolution).astype(np.int64)
    distinct, where = np.unique(steps, return_inverse=True)
    points = np.array([grid_point(column, int(k)) for k in distinct])[where.ravel()]
    tolerance = max(1e-6 * column.resolution, 2.0**-44 * max(abs(column.lower), abs(column.upper)))
    off = np.abs(points - values) > tolerance
    if off.any():
        raise ValueError(f"{column.file}: {int(off.sum())} values are not multiples of the recorded resolution "
                         f"{column.resolution:g} from {column.lower:g}, e.g. {values[off][0]!r}")
    values = points
    if not (values.min() >= column.lower and values.max() <= column.upper):
        # Every mechanism clips to the range; the metric below is over the unclipped values, so
        # the two agree only when nothing needs clipping.
        raise ValueError(f"{column.file}: values outside the public range [{column.lower}, {column.upper}]")
    return values


def distinct_share(values) -> float:
    import numpy as np

    return np.unique(values).size / values.size


def cell_seed(base: int, column: Column, mechanism: Mechanism, epsilon: float) -> int:
    # crc32, not hash(): the same seed in every process and every run.
    return zlib.crc32(f"{base} {column.label} {mechanism.name} {epsilon!r}".encode())


# --------------------------------------------------------------------------------------------
# the mechanisms


def resolution_supported() -> bool:
    dpselect = import_dpselect()
    try:
        dpselect.QuantileRange(0.0, 1.0, resolution=1.0)
    except TypeError:
        return False
    return True


def column_range(column: Column, with_resolution: bool):
    return quantile_range(import_dpselect(), column.lower, column.upper,
                          column.resolution if with_resolution else None)


@lru_cache(maxsize=None)
def grid_points(column: Column) -> tuple[float, ...]:
    """Every point of the grid of the column's recorded resolution (``grid_point``)."""
    return tuple(grid_point(column, k) for k in range(grid_size(column)))


def check_grid_points(column: Column, values) -> None:
    """That the values as load_column reads them, and OpenDP's candidates where they are the whole
    grid, are points of dpselect's grid of the recorded resolution, bit for bit."""
    import numpy as np

    grid = column_range(column, True).grid()
    if grid.size != grid_size(column):
        raise RuntimeError(f"{column.label}: dpselect's grid has {grid.size} points, grid_size {grid_size(column)}")
    off = [v for v in np.unique(values).tolist() if grid.point((grid.slot(v) - 1) // 2) != v]
    candidates = opendp_runner(column).candidates
    if len(candidates) == grid.size:
        off += [c for i, c in enumerate(candidates) if grid.point(i) != c]
    if off:
        raise RuntimeError(f"{column.label}: {len(off)} values or candidates are not dpselect's grid points, "
                           f"e.g. {off[0]!r}")


def opendp_runner(column: Column) -> OpenDPRunner:
    if column.integer:
        # Every integer of the range: the grid of resolution 1.
        return OpenDPRunner(column.lower, column.upper, range(int(column.lower), int(column.upper) + 1), integer=True)
    if column.opendp_candidates == grid_size(column):
        # Every point of the grid of the recorded resolution, as the values are read (load_column).
        return OpenDPRunner(column.lower, column.upper, grid_points(column))
    return OpenDPRunner(column.lower, column.upper, column.opendp_candidates)


def make_runner(column: Column, mechanism: Mechanism):
    if mechanism.family == "dpselect":
        return DpselectRunner(import_dpselect(), column.lower, column.upper,
                              column.resolution if mechanism.resolution else None)
    if mechanism.family == "opendp":
        return opendp_runner(column)
    return DiffprivlibRunner(column.lower, column.upper)


def releases(runner, values, mechanism: Mechanism, epsilon: float, count: int, seed: int) -> list[list[float]]:
    """``count`` releases of the mechanism's levels, all drawn from one seed."""
    import numpy as np

    qs = LEVELS[mechanism.levels]
    if mechanism.family == "dpselect":
        context = runner.dp.Context.fixed_seed(seed)  # every release draws a fresh stream of this key
        method = mechanism.method if mechanism.levels == "deciles" else None
        return [runner.release(context, values, qs, epsilon, method, mechanism=mechanism.mechanism)
                for _ in range(count)]
    if mechanism.family == "opendp":
        return [runner.release(values, qs, epsilon) for _ in range(count)]
    random_state = np.random.RandomState(seed)
    return [runner.release(values, qs, epsilon, random_state) for _ in range(count)]


# --------------------------------------------------------------------------------------------
# one cell per worker task; the workers keep the prepared data between tasks


_PREPARED: dict = {}


def prepared(data_dir: str, column: Column, mechanism: Mechanism):
    key = (column, mechanism.family, mechanism.resolution)
    if key not in _PREPARED:
        if (column, "values") not in _PREPARED:
            values = load_column(Path(data_dir), column)
            _PREPARED[(column, "values")] = (values, RankError(values))
        _PREPARED[key] = make_runner(column, mechanism)
    values, rank_error = _PREPARED[(column, "values")]
    return _PREPARED[key], values, rank_error


@dataclass
class Cell:
    column: Column
    mechanism: Mechanism
    epsilon: float
    releases: int
    mean_rank_error: float
    stderr: float
    worst_level_error: float
    worst_level: float


def run_cell(task) -> Cell:
    data_dir, column, mechanism, epsilon, count, seed = task
    runner, values, rank_error = prepared(data_dir, column, mechanism)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # diffprivlib and OpenDP warn about their own settings on every call
        released = releases(runner, values, mechanism, epsilon, count, seed)
    qs = LEVELS[mechanism.levels]
    errors = [[rank_error(v, q) for v, q in zip(release, qs)] for release in released]
    per_release = [statistics.fmean(e) for e in errors]
    per_level = [statistics.fmean(e[i] for e in errors) for i in range(len(qs))]
    worst = max(range(len(qs)), key=lambda i: per_level[i])
    stderr = statistics.stdev(per_release) / math.sqrt(count) if count > 1 else math.nan
    return Cell(column, mechanism, epsilon, count, statistics.fmean(per_release), stderr, per_level[worst],
                qs[worst])


def expected_cost(task, n: int) -> float:
    """A rough order of the work, so that the longest cells start first and the workers finish together
    (n: the column's number of values)."""
    _, column, mechanism, _, count, _ = task
    per_level = {"dpselect": 0.05, "opendp": 1.0 if column.integer else 0.5, "diffprivlib": 3.0}[mechanism.family]
    return count * per_level * len(LEVELS[mechanism.levels]) * n


# --------------------------------------------------------------------------------------------
# the outputs


def dpselect_version() -> str:
    dpselect = import_dpselect()
    return getattr(dpselect, "__version__", package_version("dpselect"))


def write_csv(out: Path, cells: list[Cell]) -> None:
    with (out / "results.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for c in cells:
            writer.writerow([c.column.dataset, c.column.column, c.mechanism.name, c.mechanism.levels, f"{c.epsilon:g}",
                             c.releases, f"{c.mean_rank_error:.6g}", f"{c.stderr:.6g}", f"{c.worst_level_error:.6g}"])


def format_cell(cell: Cell) -> str:
    text = f"{cell.mean_rank_error:,.1f} ± {cell.stderr:,.1f}"
    if cell.mechanism.levels == "deciles":
        text += f" (worst: {cell.worst_level_error:,.1f} at q = {cell.worst_level:g})"
    return text


def write_markdown(out: Path, cells: list[Cell], args, facts: dict, skipped: list[str]) -> None:
    epsilons = list(args.epsilons)
    lines = [
        f"# Private quantiles on real data ({_dt.date.today().isoformat()})",
        "",
        f"Mean rank error over {args.releases} releases per cell (± one standard error); lower is better. "
        "Rank error of a released v at level q: the distance from q n to [#{x_i < v}, #{x_i <= v}] (0 inside). "
        "Deciles: each release's error is the mean over the nine levels; *worst* is the level with the largest "
        "mean error. The same epsilon and the same neighbouring relation everywhere: replacing one record, n "
        "public (dpselect REPLACE_ONE_RECORD; OpenDP symmetric distance 2 on a domain of known size; "
        "diffprivlib's utility uses the data's size). dpselect's and diffprivlib's single-quantile releases are "
        "the exponential mechanism (Smith 2011), OpenDP's permute-and-flip (exponential noise, McKenna & Sheldon "
        "2020) with its own score; JointExp (Gillenwater, Joseph & Kulesza 2021) spends the whole epsilon on one joint release of "
        "the nine deciles, every other deciles row releases each level at epsilon / 9.",
        "",
        f"Versions: Python {platform.python_version()}, NumPy {package_version('numpy')}, "
        f"dpselect {dpselect_version()}, OpenDP {package_version('opendp')}, "
        f"diffprivlib {package_version('diffprivlib')} (scikit-learn {package_version('scikit-learn')}). "
        f"Seed {args.seed}; OpenDP cannot be seeded, so its rows vary from run to run within their errors.",
        "",
    ]
    if skipped:
        lines += [f"- {line}" for line in skipped] + [""]
    for column in COLUMNS:
        rows = [c for c in cells if c.column == column]
        if not rows:
            continue
        fact = facts[column]
        lines += [
            f"## {column.label} (n = {fact['n']:,}, {100 * fact['distinct']:.2f}% distinct values)",
            "",
            f"Public range [{column.lower:g}, {column.upper:g}], recorded resolution {column.resolution:g}; OpenDP "
            f"over {column.opendp_candidates:,} evenly spaced candidates, whose own floor on the rank error is "
            f"{fact['floor_median']:g} for the median and {fact['floor_deciles']:g} for the deciles (mean over the "
            "nine). OpenDP scale for epsilon e (binary_search_param at symmetric distance 2): "
            + ", ".join(f"{s:.6g} at e = {e:g}" for e, s in fact["scales"])
            + (", i.e. 2 / e." if all(math.isclose(s, 2 / e, rel_tol=1e-6) for e, s in fact["scales"]) else "."),
            "",
            "| levels | mechanism | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |",
            "|---|---|" + "---:|" * len(epsilons),
        ]
        for mechanism in MECHANISMS:
            by_epsilon = {c.epsilon: c for c in rows if c.mechanism == mechanism}
            if not by_epsilon:
                continue
            cells_text = [format_cell(by_epsilon[e]) if e in by_epsilon else "—" for e in epsilons]
            lines.append(f"| {mechanism.levels} | {mechanism.name} | " + " | ".join(cells_text) + " |")
        lines.append("")
    (out / "results.md").write_text("\n".join(lines))


# --------------------------------------------------------------------------------------------


def opendp_scales(column: Column, values, epsilons) -> list[tuple[float, float]]:
    """The scales the OpenDP rows use (median at e, each decile at e / 9), for the write-up: those the
    median solves (each decile's is the same but for the last bits of the binary search)."""
    runner = opendp_runner(column)
    return [(epsilon, runner.scale(values.size, 0.5, epsilon))
            for epsilon in sorted({e for e in epsilons} | {e / len(DECILES) for e in epsilons})]


def dpselect_grid_groups(column: Column, values, with_resolution: bool, q: float):
    """The grid points of dpselect's select_quantile at level q in groups of equal utility, as
    (points per group, rank error of the group's points): u(t) = -dist(q n, [#{x_i < t}, #{x_i <= t}])
    is minus the rank error, counted over the values as the mechanism places them
    (``QuantileGrid.slot``: on a point, or strictly between two; with a resolution, rounded to the
    nearest point). The utility is constant on the points between two occupied slots (a run: one
    group of its number of points, none when empty) and each point that holds values is a group of
    its own. On the columns here the values sit where the metric of the releases sees them."""
    import numpy as np

    grid = column_range(column, with_resolution).grid()
    distinct, counts = np.unique(values, return_counts=True)
    slots, where = np.unique([grid.slot(float(v)) for v in distinct], return_inverse=True)
    counts = np.bincount(where, weights=counts)  # values rounded into one slot together
    below = np.concatenate(([0.0], np.cumsum(counts)))  # below[j]: values in the slots before the j-th
    target = q * values.size

    def error(low, high):
        return np.maximum(np.maximum(low - target, target - high), 0.0)

    # The runs of points between occupied slots (and before the first, after the last): slot 2k + 1
    # is point k, slot 2p lies between points p - 1 and p.
    first = np.concatenate(([0], (slots + 1) // 2))
    last = np.concatenate((slots // 2 - 1, [grid.size - 1]))
    points = np.maximum(last - first + 1, 0).astype(np.float64)
    atoms = slots % 2 == 1
    multiplicities = np.concatenate((points, np.ones(int(atoms.sum()))))
    errors = np.concatenate((error(below, below), error(below[:-1][atoms], below[1:][atoms])))
    occupied = multiplicities > 0
    return multiplicities[occupied], errors[occupied]


def exact_quantile_error(column: Column, values, epsilon: float, with_resolution: bool, q: float = 0.5) -> float:
    """The expected rank error of dpselect's ``select_quantile`` at level q on the column, from its
    exact output distribution rather than from releases: the exponential mechanism (McSherry &
    Talwar 2007), P(t) proportional to exp((epsilon / 2) u(t)) over the grid points t (sensitivity 1:
    one record replaced, n public), summed over the groups of ``dpselect_grid_groups``."""
    import numpy as np

    multiplicities, errors = dpselect_grid_groups(column, values, with_resolution, q)
    log_weights = np.log(multiplicities) - epsilon / 2 * errors
    weights = np.exp(log_weights - log_weights.max())
    return float(np.sum(weights * errors) / np.sum(weights))


def exact_flip_error(column: Column, values, epsilon: float, with_resolution: bool, q: float = 0.5) -> float:
    """For comparison only (dpselect's quantiles do not offer it): the expected rank error of
    permute-and-flip (McKenna & Sheldon 2020) with dpselect's utility over the same grid at the same
    privacy, report-noisy-max with one-sided exponential noise of scale 2 / epsilon (2 Delta / eps,
    Delta = 1). It separates the two differences from OpenDP's rows: the mechanism and the score."""
    multiplicities, errors = dpselect_grid_groups(column, values, with_resolution, q)
    return permute_and_flip_expectation(-errors, multiplicities, errors, 2.0 / epsilon)


def permute_and_flip_expectation(scores, multiplicities, costs, scale: float) -> float:
    """E[cost] of report-noisy-max with one-sided exponential noise of ``scale`` (permute-and-flip,
    McKenna & Sheldon 2020; Ding et al. 2021) over groups of candidates: group g holds
    ``multiplicities[g]`` candidates that each score ``scores[g]`` and cost ``costs[g]``.

    With Y_c = s_c + E_c, E_c ~ Exp(scale), the largest Y lands in group g with density
    m_g f_g(z) F_g(z)^(m_g - 1) prod_{h != g} F_h(z), F_h(z) = 1 - exp(-(z - s_h) / scale) for z >= s_h
    (the maximum is never below the best score s*). The integral over z = s* + scale t runs over
    t in [0, 50] by the trapezoid rule on 100,001 points (beyond t = 50 the density is below
    e^-50); groups scoring more than 50 scales below s* are left out, which moves the expectation by
    less than (their candidates) * max cost * e^-50."""
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64)
    multiplicities = np.asarray(multiplicities, dtype=np.float64)
    costs = np.asarray(costs, dtype=np.float64)
    gaps = (scores.max() - scores) / scale  # >= 0: how far below the best each group scores
    kept = gaps < 50.0
    gaps, multiplicities, costs = gaps[kept], multiplicities[kept], costs[kept]
    t = np.linspace(0.0, 50.0, 100_001)
    log_all_below = np.zeros_like(t)  # log prod_h F_h(z)^(m_h): every noisy score at most z
    weighted_hazard = np.zeros_like(t)  # sum_g cost_g m_g f_g / F_g
    for gap, m, cost in zip(gaps, multiplicities, costs):
        above = t + gap  # (z - s_g) / scale
        log_all_below += m * np.log(-np.expm1(-above), where=above > 0, out=np.full_like(t, -np.inf))
        if cost > 0:
            weighted_hazard += cost * m * np.exp(-above) / -np.expm1(-np.maximum(above, 1e-300))
    density = np.exp(log_all_below) * weighted_hazard
    return float(np.trapezoid(density, t))


def exact_opendp_error(column: Column, values, q: float, scale: float) -> float:
    """The expected rank error of the OpenDP rows' ``make_private_quantile`` at level q, from its exact
    output distribution. Under ``max_divergence()`` (pure DP) OpenDP's noisy max adds one-sided
    exponential noise of ``scale`` (permute-and-flip, McKenna & Sheldon 2020), not Gumbel noise (the
    exponential mechanism), to its score -|#{x_i < c} - q (n - #{x_i = c})| of each candidate c
    (make_quantile_score_candidates). ``scale`` is the one the rows use, solved by OpenDP's own
    privacy map (``OpenDPRunner.scale``). Candidates with equal counts score alike and are summed as
    one group."""
    import numpy as np

    candidates = np.asarray(opendp_runner(column).candidates, dtype=np.float64)
    ordered = np.sort(values)
    below = np.searchsorted(ordered, candidates, side="left")
    through = np.searchsorted(ordered, candidates, side="right")
    groups, multiplicities = np.unique(np.stack((below, through)), axis=1, return_counts=True)
    below, through = groups.astype(np.float64)
    n = values.size
    scores = -np.abs(below - q * (n - (through - below)))
    errors = np.maximum(np.maximum(below - q * n, q * n - through), 0.0)
    return permute_and_flip_expectation(scores, multiplicities, errors, scale)


def print_exact(args, columns) -> None:
    """The expected rank error of one release at each level (the deciles, the median among them) by
    dpselect's select_quantile over each grid and by OpenDP's make_private_quantile, at each epsilon
    of --epsilons: a table per column (markdown), the numbers the median rows' means estimate."""
    rows = [m for m in MECHANISMS if m.family == "dpselect" and m.levels == "median"]
    if not resolution_supported():
        rows = [m for m in rows if not m.resolution]
    print("Exact expected rank error of one release at level q, from each mechanism's output distribution "
          "(one record replaced, n public; ties counted):\n")
    for column in columns:
        values = load_column(Path(args.data_dir), column)
        runner = opendp_runner(column)
        print(f"## {column.label}\n")
        finest = rows[-1]  # over the recorded resolution where the package has it
        print("| q | ε | " + " | ".join(m.name for m in rows) +
              f" | permute-and-flip, dpselect's utility ({finest.name.split('(')[-1].rstrip(')')}; not offered) "
              "| OpenDP make_private_quantile |")
        print("|---:|---:|" + "---:|" * (len(rows) + 2))
        for q in DECILES:
            for epsilon in args.epsilons:
                ours = [exact_quantile_error(column, values, epsilon, m.resolution, q) for m in rows]
                flip = exact_flip_error(column, values, epsilon, finest.resolution, q)
                theirs = exact_opendp_error(column, values, q, runner.scale(values.size, q, epsilon))
                print(f"| {q:g} | {epsilon:g} | " + " | ".join(f"{e:.4g}" for e in ours + [flip, theirs]) + " |",
                      flush=True)
        print()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR), help="folder of the .txt.gz columns")
    parser.add_argument("--releases", type=int, default=100, help="releases per cell (default 100)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    parser.add_argument("--out", help="folder for results.csv and results.md (required unless --exact)")
    parser.add_argument("--seed", type=int, default=20261128, help="the base of every cell's seed")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes, one cell at a time each (default: 2 or the CPUs)")
    parser.add_argument("--levels", choices=("median", "deciles"), nargs="+", default=["median", "deciles"],
                        help="which rows to run (default both)")
    parser.add_argument("--datasets", choices=[c.dataset for c in COLUMNS], nargs="+",
                        default=[c.dataset for c in COLUMNS], help="which columns to run (default all)")
    parser.add_argument("--mechanisms", nargs="+", default=[""], metavar="TEXT",
                        help="run only the rows whose mechanism name contains one of these (default all)")
    parser.add_argument("--exact", action="store_true",
                        help="print the exact expected rank error of one release at each decile by dpselect "
                             "(each grid) and OpenDP, for --datasets and --epsilons, from each mechanism's output "
                             "distribution, and release nothing")
    args = parser.parse_args(argv)
    if args.releases < 2:
        parser.error("--releases must be at least 2 (for a standard error)")
    if args.exact:
        print_exact(args, [c for c in COLUMNS if c.dataset in args.datasets])
        return
    if args.out is None:
        parser.error("the following arguments are required: --out")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data_dir = Path(args.data_dir)

    skipped = []
    mechanisms = [m for m in MECHANISMS if m.levels in args.levels and any(part in m.name for part in args.mechanisms)]
    columns = [c for c in COLUMNS if c.dataset in args.datasets]
    if not resolution_supported():
        skipped.append("The dpselect package has no QuantileRange(..., resolution=...) yet: the rows over the recorded "
                       "resolution are not run. Rerun with a package that has it.")
        print(skipped[-1], flush=True)
        mechanisms = [m for m in mechanisms if not m.resolution]
    else:
        for column in columns:
            column_range(column, True).validate()  # a bad resolution fails here, before minutes of work
            check_grid_points(column, load_column(data_dir, column))

    facts = {}
    for column in columns:
        values = load_column(data_dir, column)
        rank_error = RankError(values)
        candidates = opendp_runner(column).candidates
        facts[column] = {
            "n": values.size,
            "distinct": distinct_share(values),
            "floor_median": rank_error.floor_on(candidates, 0.5),
            "floor_deciles": statistics.fmean(rank_error.floor_on(candidates, q) for q in DECILES),
            "scales": opendp_scales(column, values, args.epsilons),
        }

    tasks = [(str(data_dir), column, mechanism, epsilon, args.releases,
              cell_seed(args.seed, column, mechanism, epsilon))
             for column in columns for mechanism in mechanisms for epsilon in args.epsilons]
    tasks.sort(key=lambda task: expected_cost(task, facts[task[1]]["n"]), reverse=True)
    cells: list[Cell] = []

    def done(cell: Cell) -> None:
        cells.append(cell)
        print(f"[{len(cells):3d}/{len(tasks)}] {cell.column.label:20s} {cell.mechanism.name:48s} "
              f"eps={cell.epsilon:<5g} rank error {cell.mean_rank_error:10.2f} ± {cell.stderr:8.2f}", flush=True)

    if args.jobs > 1:
        # One OpenMP thread per worker: the workers already use the cores. Spawned, not forked, so
        # that no worker inherits an OpenMP runtime from this process.
        os.environ["OMP_NUM_THREADS"] = "1"
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
            for cell in pool.map(run_cell, tasks):
                done(cell)
    else:
        for task in tasks:
            done(run_cell(task))

    cells.sort(key=lambda c: (COLUMNS.index(c.column), MECHANISMS.index(c.mechanism), c.epsilon))
    write_csv(out, cells)
    write_markdown(out, cells, args, facts, skipped)
    print(f"wrote {out / 'results.csv'} and {out / 'results.md'}", flush=True)


if __name__ == "__main__":
    main()
