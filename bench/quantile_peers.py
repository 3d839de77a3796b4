# SPDX-License-Identifier: Apache-2.0
"""Private quantiles: dpselect against OpenDP and diffprivlib, on the same data at the same epsilon.

Accuracy (``accuracy``): the mean absolute rank error |#{x_i < v} - q n| of the released value v
(over the data clipped to the range), for the median and for the deciles (averaged over the nine),
at epsilon 0.1, 1 and 10 and n = 10^3, 10^5 and 10^7, each setting repeated (fewer repetitions
at larger n) for a mean with its standard error. It is computed as the rank error with ties
counted, dist(q n, [#{x_i < v}, #{x_i <= v}]) (``RankError`` of bench/quantile_peer_runners.py,
shared with bench/quantiles_real_data.py), which is |#{x_i < v} - q n| on these data: the only
ties are the values clipped to the upper end, and they lie above every level's target rank.

The runners are those of bench/quantile_peer_runners.py (its docstring says exactly what each
calls), over the range below:

  * dpselect: ``select_quantile`` (the median), and ``select_quantiles`` with JOINT_EXPONENTIAL,
    RECURSIVE_SPLITTING, INDEPENDENT_BASIC and INDEPENDENT_ZCDP (delta 1e-6: an (epsilon,
    delta) guarantee, unlike the others) for the deciles; the data prepared once per n
    (``QuantileData``), a fixed-seed context per setting (reproducible; NOT for real data);
  * OpenDP ``make_private_quantile`` over 10,001 candidates evenly spaced over the range (step 0.1),
    on a domain of known size (n public), its scale solved by ``binary_search_param`` so that
    replacing one record (symmetric distance 2) costs epsilon; the deciles as nine such
    releases at epsilon / 9 (basic composition: OpenDP 0.16 has no joint quantile measurement);
  * diffprivlib ``tools.quantile`` with bounds = the range (Smith's mechanism, sensitivity 1; the
    deciles split epsilon evenly, as diffprivlib does for a list of quantiles).

All three protect one replaced record with n public (dpselect's REPLACE_ONE_RECORD). The data: a
mixture, 70% lognormal (median 50, sigma 0.8) and 30% normal (mean 400, sd 60), over the range
[0, 1000] (about 0.4% of the values fall above it and are clipped); one data set per n (seed
fixed), the repetitions re-run the mechanisms.

Speed (``speed``): one median at n = 10^6, 10^7 and 10^8 on the CPU, from the raw float64 array
to the released value (dpselect: preparing the data, i.e. clipping, placing on the grid and
sorting, plus the release; OpenDP: building the measurement and invoking it; diffprivlib: one
call), the median of a few repetitions. A peer is skipped at a size where its extrapolated time
is above --max-seconds or its memory would not fit (the reason is written down).

``plot`` draws accuracy.png from accuracy.csv (matplotlib; the peers' virtual environment need
not have it: run this step with another Python).

The peers and dpselect run in one process: dpselect is imported from the cpu-only build tree
(build/cpu-only/python) or wherever ``import dpselect`` finds it, so the peers' virtual
environment must use the Python the extension was built for (as bench/peer_comparison.py).

Run (from the repository root, after building the extension: cmake --build build/cpu-only
--target _dpselect):

    OMP_NUM_THREADS=2 .venv-peers/bin/python bench/quantile_peers.py accuracy --out DIR
    OMP_NUM_THREADS=2 .venv-peers/bin/python bench/quantile_peers.py speed --out DIR
    build/python-venv/bin/python bench/quantile_peers.py plot --out DIR
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import gc
import math
import os
import platform
import statistics
import sys
import time
import warnings
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

# The machine-description helpers of the selection comparison and the quantile runners (same folder).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_comparison import cpu_model, git_commit, mem_available_bytes
from quantile_peer_runners import (DECILES, DiffprivlibRunner, DpselectRunner, OpenDPRunner, RankError, import_dpselect,
                                   package_version)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PYTHON_PACKAGE = REPO / "build" / "cpu-only" / "python"
DEFAULT_OUT = REPO / "bench" / "results" / "2026-11-26-cpu-2core-quantiles"

LOWER, UPPER = 0.0, 1000.0
EPSILONS = [0.1, 1.0, 10.0]
ACCURACY_SIZES = [1_000, 100_000, 10_000_000]
SPEED_SIZES = [1_000_000, 10_000_000, 100_000_000]
ZCDP_DELTA = 1e-6
OPENDP_CANDIDATES = 10_001
DATA_SEED = 20261126

# Repetitions per setting (median, deciles): enough for a standard error, the whole accuracy run
# within about 10 minutes on 2 cores. At n = 10^7 dpselect's JointExp takes about 25 s for the
# deciles (O(m^2 n) work) and diffprivlib about 12 s per quantile: diffprivlib's deciles (9
# releases) are not run there.
REPETITIONS = {
    "dpselect": {1_000: (400, 200), 100_000: (200, 20), 10_000_000: (20, 5)},
    "dpselect-joint": {1_000: (0, 200), 100_000: (0, 20), 10_000_000: (0, 2)},
    "opendp": {1_000: (200, 100), 100_000: (30, 10), 10_000_000: (5, 2)},
    "diffprivlib": {1_000: (200, 100), 100_000: (30, 10), 10_000_000: (3, 0)},
}


# --------------------------------------------------------------------------------------------
# the machine, the data and the metric


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def make_data(n: int, seed: int = DATA_SEED):
    import numpy as np

    rng = np.random.default_rng([seed, n])
    lognormal = rng.lognormal(mean=math.log(50.0), sigma=0.8, size=n)
    normal = rng.normal(400.0, 60.0, size=n)
    return np.where(rng.random(n) < 0.7, lognormal, normal)


def log(message: str, progress: Path | None) -> None:
    line = f"[{_dt.datetime.now().strftime('%H:%M:%S')}] {message}"
    print(line, flush=True)
    if progress is not None:
        with progress.open("a") as f:
            f.write(line + "\n")


# --------------------------------------------------------------------------------------------
# accuracy


@dataclass
class AccuracyRow:
    target: str  # median or deciles
    implementation: str
    n: int
    epsilon: float
    repetitions: int
    mean_rank_error: float
    standard_error: float
    relative_rank_error: float  # mean_rank_error / n
    seconds_per_release: float
    note: str = ""


def start_phase(args, phase: str):
    """The output folder, a fresh progress log, the dpselect package and the two peers' runners."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress = out / f"{phase}-progress.txt"
    progress.write_text("")
    return (out, progress, import_dpselect(args.dpselect_python), OpenDPRunner(LOWER, UPPER, OPENDP_CANDIDATES),
            DiffprivlibRunner(LOWER, UPPER))


def accuracy(args) -> None:
    out, progress, dpselect, opendp, dpl = start_phase(args, "accuracy")
    ours = DpselectRunner(dpselect, LOWER, UPPER)
    implementations = {
        "median": [
            ("dpselect single quantile", "dpselect", ours.median),
            ("OpenDP make_private_quantile", "opendp", opendp.median),
            ("diffprivlib tools.quantile", "diffprivlib", dpl.median),
        ],
        "deciles": [
            ("dpselect joint (JointExp)", "dpselect-joint", ours.deciles("JOINT_EXPONENTIAL")),
            ("dpselect recursive", "dpselect", ours.deciles("RECURSIVE_SPLITTING")),
            ("dpselect basic (eps/9 each)", "dpselect", ours.deciles("INDEPENDENT_BASIC")),
            (f"dpselect zcdp (delta {ZCDP_DELTA:g})", "dpselect", ours.deciles("INDEPENDENT_ZCDP", ZCDP_DELTA)),
            ("OpenDP, 9 x make_private_quantile (eps/9 each)", "opendp", opendp.deciles),
            ("diffprivlib tools.quantile (eps/9 each)", "diffprivlib", dpl.deciles),
        ],
    }
    rows: list[AccuracyRow] = []
    log(f"accuracy: sizes {args.sizes}, epsilons {args.epsilons}, load average {load_average()}", progress)
    started = time.perf_counter()
    for n in args.sizes:
        values = make_data(n)
        errors = RankError(values, (LOWER, UPPER))
        forced = {q: errors.floor_on(opendp.candidates, q) for q in [0.5, *DECILES]}
        for target, entries in implementations.items():
            qs = [0.5] if target == "median" else DECILES
            for label, family, run in entries:
                if any(pattern in label for pattern in args.skip):
                    continue
                repetitions = REPETITIONS[family].get(n, (3, 1))[0 if target == "median" else 1]
                repetitions = max(1, round(repetitions * args.repetition_factor)) if repetitions else 0
                for epsilon in args.epsilons:
                    note = ""
                    if family == "opendp":
                        grid_error = statistics.fmean(forced[q] for q in qs)
                        note = f"its candidate grid forces a mean rank error >= {grid_error:g}"
                    if repetitions == 0:
                        rows.append(AccuracyRow(target, label, n, epsilon, 0, math.nan, math.nan, math.nan, math.nan,
                                                "not run: about 12 s per quantile at this n, 9 per repetition"))
                        continue
                    means, seconds = [], 0.0
                    for repetition in range(repetitions):
                        seed = zlib.crc32(f"{DATA_SEED} {n} {target} {label} {epsilon} {repetition}".encode())
                        t0 = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            released = run(values, epsilon, seed)
                        seconds += time.perf_counter() - t0
                        means.append(statistics.fmean(errors(v, q) for v, q in zip(released, qs)))
                    mean = statistics.fmean(means)
                    se = statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else math.nan
                    rows.append(AccuracyRow(target, label, n, epsilon, repetitions, mean, se, mean / n,
                                            seconds / repetitions, note))
                    log(f"{target:7s} n={n:>10,} eps={epsilon:<4g} {label:48s} reps={repetitions:4d} "
                        f"rank error {mean:12.2f} +- {se:9.2f}  ({seconds / repetitions:.3f} s/release)", progress)
        del values, errors
        ours.prepare.clear()
    elapsed = time.perf_counter() - started
    log(f"accuracy: done in {elapsed:.0f} s, load average {load_average()}", progress)
    write_accuracy(out, rows, args, elapsed)


def format_error(row: AccuracyRow) -> str:
    if row.repetitions == 0:
        return "not run"
    if math.isnan(row.standard_error):
        return f"{row.mean_rank_error:,.1f}"
    return f"{row.mean_rank_error:,.1f} ± {row.standard_error:,.1f}"


def write_accuracy(out: Path, rows: list[AccuracyRow], args, elapsed: float) -> None:
    with (out / "accuracy.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0]).keys()))
        writer.writeheader()
        for row in rows:
            writer.writerow(asdict(row))
    lines = [f"# Private quantiles: mean absolute rank error ({_dt.date.today().isoformat()})", "",
             environment_lines(args), "",
             (f"Whole run: {elapsed:.0f} s. Rank error |#{{x_i < v}} - q n| of each released v, averaged over the "
              "repetitions (± one standard error); for the deciles averaged over the nine first. Lower is better."),
             ""]
    for target in ("median", "deciles"):
        lines += [f"## {target}", ""]
        for n in sorted({r.n for r in rows}):
            lines += [f"### n = {n:,}", "", "| implementation | reps | " +
                      " | ".join(f"ε = {e:g}" for e in args.epsilons) + " | s / release (ε = 1) |",
                      "|---|---:|" + "---:|" * len(args.epsilons) + "---:|"]
            labels = list(dict.fromkeys(r.implementation for r in rows if r.target == target and r.n == n))
            notes = []
            for label in labels:
                cells = {r.epsilon: r for r in rows if r.target == target and r.n == n and r.implementation == label}
                reps = max(r.repetitions for r in cells.values())
                one = cells.get(1.0)
                speed = f"{one.seconds_per_release:.3g}" if one and one.repetitions else "—"
                lines.append(f"| {label} | {reps} | " + " | ".join(format_error(cells[e]) for e in args.epsilons)
                             + f" | {speed} |")
                notes += [f"{label}: {r.note}" for r in list(cells.values())[:1] if r.note]
            lines += [""] + [f"- {note}" for note in notes] + [""]
    (out / "accuracy.md").write_text("\n".join(lines))


# --------------------------------------------------------------------------------------------
# speed


@dataclass
class SpeedRow:
    implementation: str
    n: int
    repetitions: int
    median_seconds: float
    min_seconds: float
    prepare_seconds: float  # dpselect: QuantileData (clip, grid, sort); nan for the others
    release_seconds: float  # dpselect: select_quantile alone; nan for the others
    note: str = ""


def timed(call, repetitions: int):
    times = []
    for _ in range(repetitions):
        gc.collect()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def speed(args) -> None:
    out, progress, dpselect, opendp, dpl = start_phase(args, "speed")
    rows: list[SpeedRow] = []
    load_before = load_average()
    log(f"speed: sizes {args.sizes}, load average {load_before}", progress)
    # Bytes per value at the peak, for the memory guard: the float64 data plus dpselect's
    # positions and sort buffer; OpenDP copies into a Rust vector and sorts; diffprivlib builds
    # two Python lists of n + 1 floats.
    peak_bytes = {"dpselect": 8 + 24, "opendp": 8 + 24, "diffprivlib": 8 + 200}
    previous: dict[str, tuple[int, float]] = {}

    def guard(family: str, n: int) -> str:
        if 8 * n + peak_bytes[family] * n > 0.8 * (mem_available_bytes() or 1 << 62):
            return f"not run: needs about {peak_bytes[family] * n / 2**30:.0f} GiB more than the data"
        if family in previous:
            size, seconds = previous[family]
            estimate = seconds * n / size
            if estimate > args.max_seconds:
                return f"not run: about {estimate:.0f} s per release extrapolated from n = {size:,}"
        return ""

    for n in args.sizes:
        values = make_data(n)
        reps = args.repetitions if n < 100_000_000 else max(1, args.repetitions_largest)
        for generator in ("CHACHA20", "PHILOX"):
            label = f"dpselect ({generator.lower()}{', the default' if generator == 'CHACHA20' else ''})"
            skipped = guard("dpselect", n)
            if skipped:
                rows.append(SpeedRow(label, n, 0, math.nan, math.nan, math.nan, math.nan, skipped))
                continue
            params = dpselect.QuantileParams(dpselect.QuantileRange(LOWER, UPPER), 1.0, backend=dpselect.Backend.CPU)
            prepare, release, total = [], [], []
            for _ in range(reps):
                gc.collect()
                context = dpselect.Context.from_os_entropy(getattr(dpselect.Generator, generator))
                t0 = time.perf_counter()
                data = dpselect.QuantileData(values, (LOWER, UPPER))
                t1 = time.perf_counter()
                dpselect.select_quantile(context, data, 0.5, params)
                t2 = time.perf_counter()
                prepare.append(t1 - t0)
                release.append(t2 - t1)
                total.append(t2 - t0)
                del data
            rows.append(SpeedRow(label, n, reps, statistics.median(total), min(total), statistics.median(prepare),
                                 statistics.median(release)))
            previous["dpselect"] = (n, statistics.median(total))
            log(f"speed n={n:>11,} {label:34s} {statistics.median(total):8.3f} s (prepare "
                f"{statistics.median(prepare):.3f} s, release {statistics.median(release):.3f} s)", progress)

        peers = [("OpenDP make_private_quantile (10,001 candidates)", "opendp",
                  lambda values=values: opendp.measurement(values.size, 0.5, 1.0)(values)),
                 ("diffprivlib tools.quantile", "diffprivlib", lambda values=values: dpl.median(values, 1.0, 1))]
        for label, family, call in peers:
            skipped = guard(family, n)
            if skipped:
                rows.append(SpeedRow(label, n, 0, math.nan, math.nan, math.nan, math.nan, skipped))
                log(f"speed n={n:>11,} {label:34s} {skipped}", progress)
                continue
            if family == "opendp":
                opendp.measurement(n, 0.5, 1.0)  # solves the scale outside the timing (it depends on no data)
            peer_reps = reps if n < 100_000_000 else 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                times = timed(call, peer_reps)
            rows.append(SpeedRow(label, n, peer_reps, statistics.median(times), min(times), math.nan, math.nan,
                                 "building the measurement and invoking it" if family == "opendp" else "one call"))
            previous[family] = (n, statistics.median(times))
            log(f"speed n={n:>11,} {label:34s} {statistics.median(times):8.3f} s", progress)
        del values
    load_after = load_average()
    log(f"speed: done, load average {load_after}", progress)
    write_speed(out, rows, args, load_before, load_after)


def write_speed(out: Path, rows: list[SpeedRow], args, load_before: str, load_after: str) -> None:
    with (out / "speed.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0]).keys()))
        writer.writeheader()
        for row in rows:
            writer.writerow(asdict(row))
    sizes = sorted({r.n for r in rows})
    lines = [f"# One private median from the raw array, CPU ({_dt.date.today().isoformat()})", "",
             environment_lines(args), "",
             (f"Load average (1, 5, 15 min) before: {load_before}; after: {load_after}. Median of "
              f"{args.repetitions} runs ({max(1, args.repetitions_largest)} for dpselect and 1 for the peers at "
              "10^8), epsilon 1, float64 data."), "",
             "| implementation | " + " | ".join(f"n = {n:,}" for n in sizes) + " |",
             "|---|" + "---:|" * len(sizes)]
    notes = []
    for label in dict.fromkeys(r.implementation for r in rows):
        cells = {r.n: r for r in rows if r.implementation == label}
        shown = []
        for n in sizes:
            row = cells.get(n)
            if row is None or row.repetitions == 0:
                shown.append("—")
                if row is not None:
                    notes.append(f"{label}, n = {n:,}: {row.note}")
            elif not math.isnan(row.prepare_seconds):
                shown.append(f"{row.median_seconds:.3f} s ({row.prepare_seconds:.3f} + {row.release_seconds:.3f})")
            else:
                shown.append(f"{row.median_seconds:.3f} s")
        lines.append(f"| {label} | " + " | ".join(shown) + " |")
    lines += ["", "dpselect cells: total (preparing the data + the release)."]
    lines += [f"- {note}" for note in notes]
    (out / "speed.md").write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------
# plot and the common header


def environment_lines(args) -> str:
    return (f"Machine: {cpu_model()}, {len(os.sched_getaffinity(0))} usable cores, OMP_NUM_THREADS="
            f"{os.environ.get('OMP_NUM_THREADS', 'unset')}; Python {platform.python_version()}, NumPy "
            f"{package_version('numpy')}, OpenDP {package_version('opendp')}, diffprivlib "
            f"{package_version('diffprivlib')}; dpselect at {git_commit()}. Command: "
            f"`{' '.join([Path(sys.executable).name, *sys.argv])}`.")


def plot(args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FLOOR = 0.1  # the smallest error drawn (a log scale has no 0)
    out = Path(args.out)
    with (out / "accuracy.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if int(r["repetitions"]) > 0]
    sizes = sorted({int(r["n"]) for r in rows})
    targets = ["median", "deciles"]
    figure, axes = plt.subplots(len(targets), len(sizes), figsize=(4.2 * len(sizes), 3.8 * len(targets)),
                                squeeze=False, sharex=True)
    # One colour per implementation in every panel; dpselect solid, the peers dashed.
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colours = {label: palette[k % len(palette)]
               for k, label in enumerate(dict.fromkeys(r["implementation"] for r in rows))}
    for i, target in enumerate(targets):
        handles = {}
        for j, n in enumerate(sizes):
            axis = axes[i][j]
            cells = [r for r in rows if r["target"] == target and int(r["n"]) == n]
            for label in dict.fromkeys(r["implementation"] for r in cells):
                mine = sorted((r for r in cells if r["implementation"] == label), key=lambda r: float(r["epsilon"]))
                epsilons = [float(r["epsilon"]) for r in mine]
                means = [max(float(r["mean_rank_error"]), FLOOR) for r in mine]
                spread = [0.0 if math.isnan(float(r["standard_error"])) else float(r["standard_error"]) for r in mine]
                # One standard error each way, the lower end kept above the floor of the log scale.
                errors = [[min(se, mean - FLOOR) for se, mean in zip(spread, means)], spread]
                style = "-o" if label.startswith("dpselect") else "--s"
                handles[label] = axis.errorbar(epsilons, means, yerr=errors, fmt=style, color=colours[label],
                                               markersize=4, capsize=2, label=label)
            axis.set_xscale("log")
            axis.set_yscale("log")
            axis.set_ylim(bottom=FLOOR / 2)
            axis.set_title(f"{target}, n = {n:,}")
            axis.grid(True, which="both", alpha=0.3)
            if i == len(targets) - 1:
                axis.set_xlabel("epsilon")
            if j == 0:
                axis.set_ylabel("mean |rank error| (values)")
        axes[i][0].legend(list(handles.values()), list(handles), fontsize=7, loc="lower left")
    figure.suptitle(f"Private quantiles: rank error against epsilon (lower is better; errors < {FLOOR:g} drawn at {FLOOR:g})")
    figure.tight_layout()
    figure.savefig(out / "accuracy.png", dpi=110)
    print(f"wrote {out / 'accuracy.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phase", choices=["accuracy", "speed", "plot"])
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="results folder (CSV, Markdown, PNG)")
    parser.add_argument("--dpselect-python", default=str(DEFAULT_PYTHON_PACKAGE),
                        help="folder holding the dpselect package (the cpu-only build tree by default)")
    parser.add_argument("--sizes", type=int, nargs="+", help="data sizes (default: per phase)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=EPSILONS)
    parser.add_argument("--repetition-factor", type=float, default=1.0,
                        help="accuracy: scale every setting's repetitions (e.g. 0.1 for a quick check)")
    parser.add_argument("--skip", nargs="+", default=[],
                        help="accuracy: leave out the implementations whose label contains one of these")
    parser.add_argument("--repetitions", type=int, default=3, help="speed: runs per cell below 10^8")
    parser.add_argument("--repetitions-largest", type=int, default=3, help="speed: dpselect's runs at 10^8")
    parser.add_argument("--max-seconds", type=float, default=150.0,
                        help="speed: skip a peer whose extrapolated time per release is above this")
    args = parser.parse_args()
    if args.phase == "accuracy":
        args.sizes = args.sizes or ACCURACY_SIZES
        accuracy(args)
    elif args.phase == "speed":
        args.sizes = args.sizes or SPEED_SIZES
        speed(args)
    else:
        plot(args)


if __name__ == "__main__":
    main()
