#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a release costs from Python beyond the same release called from C++.

Times one exponential-mechanism release (epsilon = 1, sensitivity = 1, ChaCha20, Backend::Cpu)
over float64 utilities uniform in [0, 1000) at n = 1 and n = 2^16:

  * from C++: dpselect_bench_cpu's cpu_select/double/exponential/chacha20/n:<n> (Google Benchmark
    real time per call, median over repetitions);
  * from Python: dpselect.select(context, u, params) with a SelectionParams made once, and with
    the parameters as keywords (a SelectionParams built per call), median over repetitions of
    the mean of a batch of calls.

The difference is the per-release overhead of the Python layer (argument checks, nanobind's
conversions, releasing and taking the GIL). Run from the repository root after building the
cpu-only tree (the extension and dpselect_bench_cpu):

    PYTHONPATH=build/cpu-only/python python3 bench/python_overhead.py [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import dpselect

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BENCH = REPO / "build" / "cpu-only" / "bench" / "dpselect_bench_cpu"
SIZES = (1, 1 << 16)


def cpp_seconds(exe: Path, repetitions: int) -> dict[int, float]:
    names = "|".join(str(n) for n in SIZES)
    command = [str(exe), f"--benchmark_filter=^cpu_select/double/exponential/chacha20/n:({names})/real_time$",
               "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
               "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.3"]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    found = {}
    for benchmark in json.loads(output)["benchmarks"]:
        if benchmark.get("aggregate_name") == "median":
            n = int(benchmark["run_name"].split("n:")[1].split("/")[0])
            found[n] = benchmark["real_time"] * unit[benchmark["time_unit"]]
    return found


def python_seconds(call, batch: int, repetitions: int) -> float:
    call()  # warm-up: the first call of a context sets up its generator
    means = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(batch):
            call()
        means.append((time.perf_counter() - start) / batch)
    return statistics.median(means)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default=str(DEFAULT_BENCH), help="dpselect_bench_cpu binary")
    parser.add_argument("--repetitions", type=int, default=9)
    parser.add_argument("--json", metavar="OUT", help="also write the numbers to this JSON file")
    args = parser.parse_args(argv)

    cpp = cpp_seconds(Path(args.bench), args.repetitions)
    rng = np.random.default_rng(20261126)
    # The contexts are fixed-seed (reproducible noise): a benchmark, never a real release.
    context = dpselect.Context.fixed_seed(20240601)
    params = dpselect.SelectionParams(epsilon=1.0, sensitivity=1.0, backend=dpselect.Backend.CPU)
    rows = []
    for n in SIZES:
        u = rng.random(n) * 1000.0
        batch = 20000 if n == 1 else 400
        with_params = python_seconds(lambda: dpselect.select(context, u, params), batch, args.repetitions)
        with_keywords = python_seconds(
            lambda: dpselect.select(context, u, epsilon=1.0, sensitivity=1.0, backend=dpselect.Backend.CPU),
            batch, args.repetitions)
        rows.append({"n": n, "cpp_seconds": cpp[n], "python_params_seconds": with_params,
                     "python_keywords_seconds": with_keywords})

    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, dpselect {dpselect.__name__} "
          f"from {Path(dpselect.__file__).parent}")
    print("| n | C++ select | Python, SelectionParams | overhead | Python, keywords | overhead |")
    print("|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        cpp_us = row["cpp_seconds"] * 1e6
        params_us = row["python_params_seconds"] * 1e6
        keywords_us = row["python_keywords_seconds"] * 1e6
        print(f"| {row['n']:,} | {cpp_us:.2f} µs | {params_us:.2f} µs | {params_us - cpp_us:+.2f} µs "
              f"| {keywords_us:.2f} µs | {keywords_us - cpp_us:+.2f} µs |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "repetitions": args.repetitions}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
