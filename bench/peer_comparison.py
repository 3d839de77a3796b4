#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare dpselect's CPU path with the private-selection code a Python user has at hand.

Times one private selection (one release of one index out of n candidates, epsilon = 1,
sensitivity = 1) with:

  * the NumPy composite   argmax(eps/(2*Delta) * u - log(-log(rng.random(n))))   (Gumbel-max)
  * NumPy's argmax(u) of the same array: NOT private, the floor of reading the utilities once
  * the PyTorch composite, the same formula with torch.rand on the CPU (if torch is installed)
  * diffprivlib's exponential mechanism (diffprivlib.mechanisms.Exponential)
  * OpenDP's report-noisy-max (opendp.measurements.make_noisy_max and the deprecated
    make_report_noisy_max_gumbel)
  * dpselect's CPU path, by running its Google Benchmark program dpselect_bench_cpu
  * dpselect's Python package, called in this process on the same NumPy array as the peers
    (from build/cpu-only/python, or wherever `import dpselect` finds it)

and prints one Markdown table (rows: implementations, columns: sizes), with dpselect's speed-up
over the NumPy composite (target >= 20x) and its time over NumPy's argmax (target <= 3x). See bench/README.md,
section "Peer comparison".

Install the peers (a virtual environment is best):

    python3 -m venv .venv-peers
    .venv-peers/bin/pip install numpy diffprivlib opendp "scikit-learn<1.8"
    .venv-peers/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu   # optional

Run (from the repository root, after building build/cpu-only/bench/dpselect_bench_cpu and the
Python extension, cmake --build build/cpu-only --target dpselect_bench_cpu _dpselect; the peers'
virtual environment must use the Python the extension was built for):

    .venv-peers/bin/python bench/peer_comparison.py
    .venv-peers/bin/python bench/peer_comparison.py --sizes 65536 1048576 --repetitions 3
"""
from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BENCH = REPO / "build" / "cpu-only" / "bench" / "dpselect_bench_cpu"
DEFAULT_PYTHON_PACKAGE = REPO / "build" / "cpu-only" / "python"
DATA_SEED = 20261122
NOISE_SEED = 7
EPSILON = 1.0
SENSITIVITY = 1.0

# Per-peer largest n attempted by default (override with --max-n PEER=N). Beyond it the cell
# is "—" with the reason. These are generous: the time guard (--skip-seconds) and the memory
# guard below usually decide first.
DEFAULT_MAX_N = {"numpy": 1 << 30, "torch": 1 << 30, "diffprivlib": 1 << 24, "opendp": 1 << 26,
                 "dpselect-python": 1 << 34}
# Rough peak memory per candidate (bytes), for the memory guard.
BYTES_PER_CANDIDATE = {"numpy": 40, "torch": 24, "diffprivlib": 120, "opendp": 16, "dpselect-python": 4}


# --------------------------------------------------------------------------------------------
# small helpers


def fmt_time(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:,.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def fmt_rate(per_s: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if per_s >= scale:
            return f"{per_s / scale:.3g} {unit}/s"
    return f"{per_s:.3g} /s"


def pow2_label(n: int) -> str:
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def git_commit() -> str:
    try:
        sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + (" (+ uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def package_version(name: str) -> str | None:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # noqa: BLE001 - not installed or broken metadata
        return None


# --------------------------------------------------------------------------------------------
# timing


@dataclass
class Cell:
    """One (implementation, n) measurement, or the reason there is none."""
    seconds: float | None = None          # median wall time per release
    samples: list[float] = field(default_factory=list)
    cpu_over_wall: float | None = None     # process CPU time / wall time (~ threads busy)
    note: str = ""                         # e.g. "1 run"
    skipped: str = ""                      # reason for "—"

    def to_json(self) -> dict:
        return {"seconds": self.seconds, "samples": self.samples, "cpu_over_wall": self.cpu_over_wall,
                "note": self.note, "skipped": self.skipped}


def time_release(fn: Callable[[], object], repetitions: int, max_seconds: float) -> Cell:
    """Warm up once, then time `repetitions` calls (median of wall times).

    If the warm-up alone takes longer than max_seconds, it is taken as the only sample."""
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    w1, c1 = time.perf_counter(), time.process_time()
    if w1 - w0 > max_seconds:
        return Cell(seconds=w1 - w0, samples=[w1 - w0], cpu_over_wall=(c1 - c0) / (w1 - w0),
                    note="1 run")
    samples, cpu, wall = [], 0.0, 0.0
    for _ in range(repetitions):
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        w1, c1 = time.perf_counter(), time.process_time()
        samples.append(w1 - w0)
        cpu += c1 - c0
        wall += w1 - w0
    # process_time is too coarse for a ratio over a few milliseconds
    return Cell(seconds=statistics.median(samples), samples=samples,
                cpu_over_wall=cpu / wall if wall >= 0.05 else None)


# --------------------------------------------------------------------------------------------
# the implementations


@dataclass
class Row:
    key: str                 # stable id for JSON
    peer: str                # numpy | torch | diffprivlib | opendp | dpselect
    label: str               # shown in the table
    what: str                # what one timed release includes
    cells: dict[int, Cell] = field(default_factory=dict)
    unavailable: str = ""    # "not installed: ..." for the whole row


class Runner:
    def __init__(self, args):
        self.args = args
        self.max_n = dict(DEFAULT_MAX_N)
        for item in args.max_n:
            peer, _, value = item.partition("=")
            self.max_n[peer.strip()] = int(value)
        self.rows: list[Row] = []
        self.info: dict[str, object] = {}

    # guard: is size n reasonable for this peer? returns a reason to skip, or "".
    def guard(self, row: Row, n: int, previous: tuple[int, float] | None) -> str:
        if n > self.max_n.get(row.peer, 1 << 62):
            return f"above this peer's max n = {pow2_label(self.max_n[row.peer])} (--max-n {row.peer}=N)"
        avail = mem_available_bytes()
        need = BYTES_PER_CANDIDATE.get(row.peer, 16) * n
        if avail is not None and need > 0.6 * avail:
            return f"needs ~{need / 2**30:.1f} GiB, {avail / 2**30:.1f} GiB available"
        if previous is not None:
            n0, t0 = previous
            estimate = t0 * n / n0
            if estimate > self.args.skip_seconds:
                return f"extrapolated ~{estimate:.0f} s per release (> --skip-seconds {self.args.skip_seconds:g})"
        return ""

    def run_row(self, row: Row, sizes: list[int], make: Callable[[int], Callable[[], object]]):
        self.rows.append(row)
        if row.unavailable:
            return
        previous = None
        for n in sizes:
            reason = self.guard(row, n, previous)
            if reason:
                row.cells[n] = Cell(skipped=reason)
                continue
            try:
                fn = make(n)
                cell = time_release(fn, self.args.repetitions, self.args.max_seconds)
            except MemoryError:
                cell = Cell(skipped="out of memory")
            except Exception as exc:  # noqa: BLE001 - report, do not fail the table
                cell = Cell(skipped=f"error: {type(exc).__name__}: {str(exc)[:120]}")
            finally:
                fn = None
                gc.collect()
            row.cells[n] = cell
            if cell.seconds is not None:
                previous = (n, cell.seconds)
            self.progress(row, n, cell)

    def progress(self, row: Row, n: int, cell: Cell):
        if self.args.quiet:
            return
        if cell.seconds is not None:
            print(f"  {row.label[:60]:60s} n={pow2_label(n):>6}: {fmt_time(cell.seconds)}"
                  f" {cell.note}", file=sys.stderr, flush=True)
        else:
            print(f"  {row.label[:60]:60s} n={pow2_label(n):>6}: — {cell.skipped}", file=sys.stderr, flush=True)


def utilities(n: int):
    import numpy as np
    rng = np.random.default_rng(DATA_SEED)
    return (rng.random(n, dtype=np.float32) * np.float32(1000.0)).astype(np.float32)


def bench_numpy(runner: Runner, sizes: list[int]):
    import numpy as np
    runner.info["numpy_threads"] = "1 (Generator.random, log, argmax are single-threaded ufuncs)"
    row = Row("numpy_composite_em", "numpy",
              "NumPy composite EM: argmax(ε/(2Δ)·u − log(−log(rng.random(n))))",
              "noise generation + scoring + argmax; float64 noise from a 53-bit uniform (default_rng, PCG64)")
    rng = np.random.default_rng(NOISE_SEED)
    c = EPSILON / (2.0 * SENSITIVITY)

    def make(n):
        u = utilities(n)

        def release():
            return int(np.argmax(c * u - np.log(-np.log(rng.random(n)))))
        return release
    runner.run_row(row, sizes, make)
    # The floor no private selection can beat: NumPy's arg-max of the same float32 array, with no
    # noise and no privacy (one core), which only reads the utilities once.
    floor = Row("numpy_argmax", "numpy", "NumPy argmax(u), NOT PRIVATE (the read-once floor)",
                "one pass over the float32 utilities, no noise")

    def make_floor(n):
        u = utilities(n)
        return lambda: int(np.argmax(u))
    runner.run_row(floor, sizes, make_floor)


def bench_torch(runner: Runner, sizes: list[int]):
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        runner.rows.append(Row("torch_composite_em", "torch", "PyTorch composite EM (CPU)", "",
                               unavailable=f"not installed ({type(exc).__name__})"))
        runner.info["torch_threads"] = "not installed"
        return
    torch.set_num_threads(usable_cores())
    runner.info["torch_threads"] = torch.get_num_threads()
    row = Row("torch_composite_em", "torch",
              f"PyTorch composite EM (CPU, {torch.get_num_threads()} threads): "
              "argmax(c·u − log(−log(torch.rand(n))))",
              "noise generation + scoring + argmax; float32 noise from torch.rand (24-bit uniform)")
    torch.manual_seed(NOISE_SEED)
    c = EPSILON / (2.0 * SENSITIVITY)

    def make(n):
        u = torch.from_numpy(utilities(n))

        def release():
            with torch.no_grad():
                return int(torch.argmax(c * u - torch.log(-torch.log(torch.rand(n)))))
        return release
    runner.run_row(row, sizes, make)


def bench_diffprivlib(runner: Runner, sizes: list[int]):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from diffprivlib.mechanisms import Exponential
    except Exception as exc:  # noqa: BLE001
        for key, label in (("diffprivlib_em", "diffprivlib Exponential"),):
            runner.rows.append(Row(key, "diffprivlib", label, "",
                                   unavailable=f"not installed or not importable ({type(exc).__name__}: "
                                               f"{str(exc)[:80]})"))
        return
    ctor_row = Row("diffprivlib_em", "diffprivlib",
                   "diffprivlib Exponential(epsilon, sensitivity, utility=list).randomise()",
                   "constructor (validates the list, exp, normalise, cumsum) + one randomise(); "
                   "u.tolist() done beforehand, not timed")
    reuse_row = Row("diffprivlib_em_randomise_only", "diffprivlib",
                    "diffprivlib … randomise() only (mechanism reused; same utilities only)",
                    "one randomise() on an existing mechanism (re-validates the list, O(n) search)")

    def make_ctor(n):
        ul = utilities(n).tolist()

        def release():
            m = Exponential(epsilon=EPSILON, sensitivity=SENSITIVITY, utility=ul)
            return m.randomise()
        return release

    def make_reuse(n):
        ul = utilities(n).tolist()
        m = Exponential(epsilon=EPSILON, sensitivity=SENSITIVITY, utility=ul)
        runner.info["diffprivlib_rng"] = f"{type(m._rng).__module__}.{type(m._rng).__name__}"  # noqa: SLF001
        return m.randomise
    runner.run_row(ctor_row, sizes, make_ctor)
    runner.run_row(reuse_row, sizes, make_reuse)


def bench_opendp(runner: Runner, sizes: list[int]):
    try:
        import opendp.prelude as dp
        dp.enable_features("contrib")
    except Exception as exc:  # noqa: BLE001
        runner.rows.append(Row("opendp_noisy_max", "opendp", "OpenDP make_noisy_max", "",
                               unavailable=f"not installed ({type(exc).__name__})"))
        return
    scale = 2.0 * SENSITIVITY / EPSILON   # non-monotone: epsilon = 2 * d_in / scale

    def space():
        return dp.vector_domain(dp.atom_domain(T="f32", nan=False)), dp.linf_distance(T="f32")

    def build_gumbel():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return dp.m.make_report_noisy_max_gumbel(*space(), scale=scale)

    def build_exponential():
        return dp.m.make_noisy_max(*space(), dp.max_divergence(), scale=scale)

    # Check the calibration once: the privacy map at d_in = Δ must give ε.
    eps_g = build_gumbel().map(SENSITIVITY)
    eps_e = build_exponential().map(SENSITIVITY)
    runner.info["opendp_map_check"] = f"map(Δ=1) = {eps_g:g} (gumbel), {eps_e:g} (make_noisy_max) at scale {scale:g}"

    rows = [
        (Row("opendp_gumbel_build_invoke", "opendp",
             "OpenDP make_report_noisy_max_gumbel (Gumbel ≡ EM; deprecated since 0.14): build + invoke",
             "building the measurement + one invocation on a float32 NumPy array"), build_gumbel, True),
        (Row("opendp_gumbel_invoke", "opendp",
             "OpenDP make_report_noisy_max_gumbel: invoke only (measurement reused)",
             "one invocation of a measurement built once (it does not depend on the data)"), build_gumbel, False),
        (Row("opendp_noisy_max_invoke", "opendp",
             "OpenDP make_noisy_max(max_divergence) (exponential noise ≡ permute-and-flip): invoke only",
             "one invocation of a measurement built once"), build_exponential, False),
    ]
    for row, build, include_build in rows:
        def make(n, build=build, include_build=include_build):
            u = utilities(n)
            if include_build:
                return lambda: build()(u)
            meas = build()
            return lambda: meas(u)
        runner.run_row(row, sizes, make)


# dpselect: run the Google Benchmark program -------------------------------------------------

# (key, mechanism, generator, OpenMP threads (None: all cores), label)
DPSELECT_ROWS = [
    ("dpselect_em_chacha20", "exponential", "chacha20", None,
     "dpselect CPU, exponential mechanism, ChaCha20 (default, secure), all cores"),
    ("dpselect_em_philox", "exponential", "philox", None,
     "dpselect CPU, exponential mechanism, Philox (not cryptographically secure), all cores"),
    ("dpselect_pf_chacha20", "permute-and-flip", "chacha20", None,
     "dpselect CPU, permute-and-flip, ChaCha20, all cores"),
    ("dpselect_em_chacha20_1thread", "exponential", "chacha20", 1,
     "dpselect CPU, exponential mechanism, ChaCha20, 1 thread (OMP_NUM_THREADS=1)"),
]


def run_dpselect_bench(runner: Runner, exe: Path, threads: int, specs: list[tuple[str, str]],
                       sizes: list[int]) -> tuple[dict, str]:
    """Run dpselect_bench_cpu for (mechanism, generator) pairs; returns ({(mech, gen, n): seconds
    entry}, error)."""
    args = runner.args
    mechs = "|".join(sorted({m for m, _ in specs}))
    gens = "|".join(sorted({g for _, g in specs}))
    ns = "|".join(str(n) for n in sizes)
    flt = f"cpu_select/float/({mechs})/({gens})/n:({ns})/real_time$"
    cmd = [str(exe), f"--benchmark_filter={flt}", "--benchmark_format=json",
           f"--benchmark_repetitions={args.repetitions}", "--benchmark_report_aggregates_only=true",
           f"--benchmark_min_time={args.dpselect_min_time}"]
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    shown_exe = os.path.relpath(exe) if exe.resolve().is_relative_to(Path.cwd()) else str(exe)
    shown = f"OMP_NUM_THREADS={threads} " + shlex.join([shown_exe] + cmd[1:])
    runner.info.setdefault("dpselect_commands", []).append(shown)
    if not args.quiet:
        print(f"  running {shown}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {}, f"benchmark failed (exit {proc.returncode}): {proc.stderr.strip()[-200:]}"
    data = json.loads(proc.stdout)
    runner.info.setdefault("dpselect_context", {})[str(threads)] = {k: data["context"].get(k) for k in (
        "omp_max_threads", "hardware_concurrency", "library_build_type", "num_cpus", "mhz_per_cpu",
        "dpselect_built_with_cuda", "date")}
    runner.info.setdefault("dpselect_raw", {})[str(threads)] = data["benchmarks"]
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    found: dict[tuple[str, str, int], dict] = {}
    for b in data["benchmarks"]:
        m = re.match(r"cpu_select/float/([^/]+)/([^/]+)/n:(\d+)/real_time", b.get("run_name", b["name"]))
        if not m:
            continue
        entry = found.setdefault((m.group(1), m.group(2), int(m.group(3))), {})
        agg = b.get("aggregate_name", "")
        entry[agg or "single"] = b["real_time"] * unit[b.get("time_unit", "ns")]
    return found, ""


def bench_dpselect(runner: Runner, sizes: list[int]):
    args = runner.args
    exe = Path(args.dpselect_bench)
    cores = usable_cores()
    rows = {}
    for key, mech, gen, threads, label in DPSELECT_ROWS:
        t = threads or cores
        rows[key] = (Row(key, "dpselect", label,
                         f"one complete dpselect::select over a host float array, Backend::Cpu, {t} OpenMP "
                         "thread(s) (Google Benchmark real time: mean over iterations, median over repetitions)"),
                     mech, gen, t)
        runner.rows.append(rows[key][0])
    if not exe.exists():
        for row, *_ in rows.values():
            row.unavailable = f"benchmark binary not found: {exe} (build it, or pass --dpselect-bench)"
        return
    by_threads: dict[int, list] = {}
    for row, mech, gen, t in rows.values():
        by_threads.setdefault(t, []).append((row, mech, gen))
    for t in sorted(by_threads, reverse=True):
        group = by_threads[t]
        found, error = run_dpselect_bench(runner, exe, t, [(m, g) for _, m, g in group], sizes)
        for row, mech, gen in group:
            if error:
                row.unavailable = error
                continue
            for n in sizes:
                entry = found.get((mech, gen, n))
                if entry is None:
                    row.cells[n] = Cell(skipped="no dpselect_bench_cpu benchmark at this n "
                                                "(2^16, 2^20, 2^24, 1000003)")
                    continue
                seconds = entry.get("median", entry.get("mean", entry.get("single")))
                row.cells[n] = Cell(seconds=seconds, samples=[seconds],
                                    note="" if "median" in entry else "mean")
                runner.progress(row, n, row.cells[n])


DPSELECT_PYTHON_ROWS = [
    ("dpselect_python_em_chacha20", "EXPONENTIAL", "CHACHA20",
     "dpselect Python package, exponential mechanism, ChaCha20, all cores (this process)"),
    ("dpselect_python_em_philox", "EXPONENTIAL", "PHILOX",
     "dpselect Python package, exponential mechanism, Philox, all cores (this process)"),
    ("dpselect_python_pf_chacha20", "PERMUTE_AND_FLIP", "CHACHA20",
     "dpselect Python package, permute-and-flip, ChaCha20, all cores (this process)"),
]


def bench_dpselect_python(runner: Runner, sizes: list[int]):
    """dpselect's Python package called in this process, on the same NumPy array as the Python peers."""
    package = Path(runner.args.dpselect_python)
    if package.is_dir() and str(package) not in sys.path:
        sys.path.insert(0, str(package))
    try:
        import dpselect
    except Exception as exc:  # noqa: BLE001
        unavailable = (f"not importable ({type(exc).__name__}: {exc}); build the cpu-only tree or "
                       "pip install ./python")
        dpselect = None
    for key, mechanism, generator, label in DPSELECT_PYTHON_ROWS:
        row = Row(key, "dpselect-python", label,
                  "one dpselect.select over the NumPy float32 array (zero-copy), Backend.CPU, a context keyed "
                  "from the OS, the SelectionParams made once")
        if dpselect is None:
            row.unavailable = unavailable
            runner.rows.append(row)
            continue
        context = dpselect.Context.from_os_entropy(getattr(dpselect.Generator, generator))
        params = dpselect.SelectionParams(epsilon=EPSILON, sensitivity=SENSITIVITY,
                                          mechanism=getattr(dpselect.Mechanism, mechanism),
                                          backend=dpselect.Backend.CPU)

        def make(n, context=context, params=params):
            u = utilities(n)
            return lambda: dpselect.select(context, u, params).index
        runner.run_row(row, sizes, make)
    if dpselect is not None:
        runner.info["dpselect_python"] = str(Path(dpselect.__file__).parent)


# --------------------------------------------------------------------------------------------
# output


FAIRNESS_NOTES = """\
Notes on fairness and on what each row actually guarantees:

- **Private on floats?** The NumPy and PyTorch composites are the textbook Gumbel-max trick in
  floating point. They are *not* protected against floating-point attacks (Mironov 2012;
  docs/design.md, "Large ranges"): the noise comes from one 53-bit (NumPy, float64) or 24-bit
  (PyTorch, float32) uniform per candidate, so the Gumbel noise is capped (about [−3.6, 36.7]
  for 53 bits, [−2.8, 16.6] for 24 bits): candidates trailing the best by
  more than that can never win, where the exact EM gives them positive probability, and the pure-DP
  guarantee fails on large ranges; nothing reports the residual. diffprivlib builds
  exp(ε/(2Δ)·(u − max u)) in float64, normalises, takes a float64 cumulative sum and inverts it
  with one 53-bit uniform: the same class of floating-point issues (probabilities below the
  cumsum's resolution are lost; the flat prefix sum over n items accumulates rounding).
  OpenDP's noisy max converts each score to an exact rational and samples the noise exactly
  with arbitrary-precision arithmetic (its documented floating-point-safe design).
  dpselect bounds the floating-point error of its noise and reports it as (ε_float, δ_float)
  with every release (see docs/guarantees.md).
- **Randomness.** NumPy: PCG64 (`default_rng`), not cryptographic. PyTorch: the CPU generator is
  a Mersenne Twister (`torch.rand`), not cryptographic. diffprivlib: with `random_state=None`,
  `secrets.SystemRandom` (os.urandom, the OS CSPRNG), one draw per release. OpenDP: a CSPRNG
  (the PyPI library is built with its `use-openssl` feature: `fill_bytes`
  is OpenSSL's RAND_bytes; without it, rand's ThreadRng). dpselect: ChaCha20
  (RFC 8439) keyed from getrandom by default; Philox4x32-10 on request (fast, not
  cryptographic). The benchmark contexts of dpselect are fixed-seed, which changes the key, not
  the work.
- **Threads.** NumPy: one thread. PyTorch: `torch.set_num_threads(cores)`. diffprivlib and OpenDP:
  one thread (pure Python + NumPy; OpenDP's Rust loop is sequential). dpselect: all OpenMP threads
  (OMP_NUM_THREADS = cores), plus one row on one thread for the per-core comparison with the
  one-thread NumPy composite. The "CPU/wall" figures in the JSON (`cpu_over_wall`) show
  how many cores each Python row actually kept busy.
- **Same work?** Every row releases one index out of n with ε = 1, Δ = 1 (non-monotone), from
  float32 utilities uniform in [0, 1000). The Python rows use the same array (NumPy
  `default_rng(20261122)`); dpselect's benchmark uses its own array with the same distribution
  (std::mt19937_64). Data generation and conversion (`u.tolist()` for diffprivlib,
  `torch.from_numpy`) are not timed. The OpenDP `make_noisy_max` row uses exponential noise,
  which is permute-and-flip, not the exponential mechanism: compare it with dpselect's
  permute-and-flip row.
- **Statistic.** Python rows: median wall time of R single releases after one warm-up release
  ("1 run": the warm-up took longer than --max-seconds and is the only sample). dpselect: Google
  Benchmark real time per iteration (mean over the iterations of one repetition), median over R
  repetitions.
"""


def render(runner: Runner, sizes: list[int], header: dict[str, object]) -> str:
    out = []
    out.append("# dpselect vs. Python peers: one private selection on the CPU")
    out.append("")
    for k, v in header.items():
        out.append(f"- **{k}:** {v}")
    out.append("")
    cols = [pow2_label(n) + (f" ({n:,})" if pow2_label(n).startswith("2^") else "") for n in sizes]
    out.append("| implementation | " + " | ".join(f"n = {c}" for c in cols) + " |")
    out.append("|---|" + "---:|" * len(sizes))
    for row in runner.rows:
        if row.unavailable:
            cells = [f"— ({row.unavailable})"] + ["—"] * (len(sizes) - 1)
        else:
            cells = []
            for n in sizes:
                c = row.cells.get(n)
                if c is None or c.seconds is None:
                    cells.append(f"— ({c.skipped})" if c else "—")
                else:
                    extra = f" ({c.note})" if c.note else ""
                    cells.append(f"{fmt_time(c.seconds)} · {fmt_rate(n / c.seconds)}{extra}")
        out.append(f"| {row.label} | " + " | ".join(cells) + " |")
    # speed-ups over the NumPy composite, and times over NumPy's non-private argmax
    by_key = {r.key: r for r in runner.rows}

    def ratio_row(label, reference, row, ratio, meets, target_text):
        cells = []
        for n in sizes:
            a, b = reference.cells.get(n), row.cells.get(n)
            if a and b and a.seconds and b.seconds:
                r = ratio(a.seconds, b.seconds)
                cells.append(f"**{r:.{2 if ratio is over else 1}f}×** ({'meets' if meets(r) else 'misses'} {target_text})")
            else:
                cells.append("—")
        out.append(f"| {label} | " + " | ".join(cells) + " |")

    def speed_up(reference_seconds, seconds):
        return reference_seconds / seconds

    def over(reference_seconds, seconds):
        return seconds / reference_seconds

    target = runner.args.target
    floor_target = runner.args.floor_target
    for reference_key, key, label, ratio, meets, target_text in (
            ("numpy_composite_em", "dpselect_em_chacha20",
             "**speed-up of dpselect EM (ChaCha20, all cores) over the NumPy composite**",
             speed_up, lambda r: r >= target, f"≥{target:g}×"),
            ("numpy_composite_em", "dpselect_em_philox",
             "**speed-up of dpselect EM (Philox, all cores) over the NumPy composite**",
             speed_up, lambda r: r >= target, f"≥{target:g}×"),
            ("numpy_composite_em", "dpselect_em_chacha20_1thread",
             "**speed-up of dpselect EM (ChaCha20, 1 thread) over the NumPy composite (1 thread)**",
             speed_up, lambda r: r >= target, f"≥{target:g}×"),
            ("numpy_composite_em", "dpselect_python_em_chacha20",
             "**speed-up of dpselect's Python package (EM, ChaCha20) over the NumPy composite, same process**",
             speed_up, lambda r: r >= target, f"≥{target:g}×"),
            ("opendp_gumbel_invoke", "dpselect_python_em_chacha20",
             "**speed-up of dpselect's Python package (EM, ChaCha20) over OpenDP's Gumbel max, same process**",
             speed_up, lambda r: r >= target, f"≥{target:g}×"),
            ("diffprivlib_em", "dpselect_python_em_chacha20",
             "**speed-up of dpselect's Python package (EM, ChaCha20) over diffprivlib, same process**",
             speed_up, lambda r: r >= target, f"≥{target:g}×"),
            ("numpy_argmax", "dpselect_python_em_chacha20",
             "**dpselect's Python package (EM, ChaCha20) time over NumPy's non-private argmax, same process**",
             over, lambda r: r <= floor_target, f"≤{floor_target:g}×"),
            ("numpy_argmax", "dpselect_em_chacha20",
             "**dpselect EM (ChaCha20, all cores) time over NumPy's non-private argmax (1 core)**",
             over, lambda r: r <= floor_target, f"≤{floor_target:g}×"),
            ("numpy_argmax", "dpselect_em_philox",
             "**dpselect EM (Philox, all cores) time over NumPy's non-private argmax (1 core)**",
             over, lambda r: r <= floor_target, f"≤{floor_target:g}×")):
        reference, row = by_key.get(reference_key), by_key.get(key)
        if reference is not None and row is not None:
            ratio_row(label, reference, row, ratio, meets, target_text)
    out.append("")
    out.append("Cells: median wall time per release · candidates per second. "
               "“—”: not measured, with the reason.")
    out.append("")
    out.append("What one timed release includes:")
    out.append("")
    seen = set()
    for row in runner.rows:
        if row.what and row.key not in seen:
            seen.add(row.key)
            out.append(f"- {row.label}: {row.what}.")
    out.append("")
    busy = []
    for row in runner.rows:
        vals = [c.cpu_over_wall for c in row.cells.values() if c.cpu_over_wall is not None]
        if vals:
            busy.append(f"{row.key} {max(vals):.2f}")
    if busy:
        out.append("Cores kept busy (process CPU time / wall time, largest over sizes): " + "; ".join(busy) + ".")
        out.append("")
    out.append(FAIRNESS_NOTES)
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[1 << 16, 1 << 20, 1 << 24],
                   help="candidate counts (default 65536 1048576 16777216)")
    p.add_argument("--repetitions", "-r", type=int, default=5, help="timed releases per cell (median; default 5)")
    p.add_argument("--dpselect-bench", default=str(DEFAULT_BENCH),
                   help=f"dpselect_bench_cpu binary (default {DEFAULT_BENCH.relative_to(REPO)})")
    p.add_argument("--dpselect-python", default=str(DEFAULT_PYTHON_PACKAGE),
                   help="where the dpselect package is when it is not installed "
                        f"(default {DEFAULT_PYTHON_PACKAGE.relative_to(REPO)})")
    p.add_argument("--dpselect-min-time", type=float, default=0.2,
                   help="--benchmark_min_time for dpselect_bench_cpu, seconds per repetition (default 0.2)")
    p.add_argument("--peers", nargs="+", default=["numpy", "torch", "diffprivlib", "opendp", "dpselect", "dpselect-python"],
                   help="which implementations to run (default all)")
    p.add_argument("--max-n", action="append", default=[], metavar="PEER=N",
                   help="largest n to attempt for a peer (defaults: diffprivlib=16777216, opendp=67108864)")
    p.add_argument("--max-seconds", type=float, default=10.0,
                   help="if one warm-up release takes longer, it is the only sample (default 10)")
    p.add_argument("--skip-seconds", type=float, default=120.0,
                   help="skip a size whose release is extrapolated (linearly from the previous size) "
                        "to take longer than this (default 120)")
    p.add_argument("--target", type=float, default=20.0,
                   help="speed-up target over the NumPy composite (default 20)")
    p.add_argument("--floor-target", type=float, default=3.0,
                   help="largest time over NumPy's non-private argmax (default 3)")
    p.add_argument("--json", metavar="OUT", help="write the raw numbers to this JSON file")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    sizes = sorted(set(args.sizes))

    start = _dt.datetime.now().astimezone()
    load_start = os.getloadavg()
    runner = Runner(args)
    benches = {"numpy": bench_numpy, "torch": bench_torch, "diffprivlib": bench_diffprivlib,
               "opendp": bench_opendp, "dpselect": bench_dpselect,
               "dpselect-python": bench_dpselect_python}
    for name in args.peers:
        if not args.quiet:
            print(f"[{name}]", file=sys.stderr, flush=True)
        benches[name](runner, sizes)
    load_end = os.getloadavg()

    versions = {"python": platform.python_version()}
    for pkg in ("numpy", "torch", "diffprivlib", "scikit-learn", "scipy", "opendp"):
        versions[pkg] = package_version(pkg) or "not installed"
    command = shlex.join([os.path.relpath(sys.executable) if sys.executable.startswith(str(REPO)) else sys.executable]
                         + [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    header = {
        "date": start.strftime("%Y-%m-%d %H:%M %Z"),
        "CPU": f"{cpu_model()}, {usable_cores()} cores usable ({os.cpu_count()} online)",
        "load average (1/5/15 min)": f"{load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f} at start, "
                                     f"{load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f} at end",
        "versions": ", ".join(f"{k} {v}" for k, v in versions.items()),
        "dpselect commit": git_commit(),
        "dpselect bench": "; ".join(f"`{c}`" for c in runner.info.get("dpselect_commands", [])) or "not run",
        "dpselect threads": ", ".join(f"OMP_NUM_THREADS={t}: omp_max_threads {c.get('omp_max_threads')}"
                                      for t, c in (runner.info.get("dpselect_context") or {}).items()) or "n/a",
        "NumPy threads": runner.info.get("numpy_threads", "n/a"),
        "PyTorch threads": runner.info.get("torch_threads", "n/a"),
        "diffprivlib RNG": runner.info.get("diffprivlib_rng", "n/a"),
        "OpenDP calibration": runner.info.get("opendp_map_check", "n/a"),
        "selection": f"ε = {EPSILON:g}, Δ = {SENSITIVITY:g}, not monotone; utilities float32 uniform in [0, 1000)",
        "repetitions": args.repetitions,
        "command": f"`{command}`",
    }
    text = render(runner, sizes, header)
    print(text)
    if args.json:
        payload = {
            "header": header, "versions": versions, "sizes": sizes,
            "load_average_start": load_start, "load_average_end": load_end,
            "rows": [{"key": r.key, "peer": r.peer, "label": r.label, "what": r.what, "unavailable": r.unavailable,
                      "cells": {str(n): c.to_json() for n, c in r.cells.items()}} for r in runner.rows],
            "info": runner.info,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(payload, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
