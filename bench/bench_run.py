# SPDX-License-Identifier: Apache-2.0
"""What the Python benchmarks of bench/ share: the median of timed runs after a warm-up, the
date, commit and machine each result file records, and the table of the partition selection
benchmarks (each workload's time, its ratio to the baseline's, the keys it released). Imported by the scripts beside it (a script's
folder is first on sys.path)."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from typing import Callable


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    """The median wall time of `repeats` calls of run(), after one warm-up call (first-use costs:
    thread pools, imports, connections, code generation are not the workload's)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_metadata() -> dict:
    """The date, the repository's commit and the machine, for a result file."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    return {"date": time.strftime("%Y-%m-%d"), "commit": commit,
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"}


def selection_workloads(seconds: dict[str, float], baseline: str, released: dict[str, int]) -> dict:
    """Each workload's median seconds, its ratio to the baseline workload's (``ratio_to_<baseline>``,
    '-' written '_') and the number of keys it released (None where it was not counted), by name."""
    ratio = f"ratio_to_{baseline.replace('-', '_')}"
    return {name: {"seconds": s, ratio: s / seconds[baseline], "keys_released": released.get(name)}
            for name, s in seconds.items()}


def print_selection_workloads(workloads: dict, baseline: str, digits: int = 2) -> None:
    """The table of selection_workloads: median seconds (`digits` decimals), × the baseline, keys."""
    ratio = f"ratio_to_{baseline.replace('-', '_')}"
    width = max(len("workload"), *(len(name) for name in workloads)) + 2
    heading = f"x {baseline}"
    print(f"{'workload':{width}} {'median s':>10} {heading:>{len(heading) + 1}} {'keys released':>14}")
    for name, entry in workloads.items():
        kept = "" if entry["keys_released"] is None else str(entry["keys_released"])
        print(f"{name:{width}} {entry['seconds']:10.{digits}f} {entry[ratio]:{len(heading) + 1}.2f} {kept:>14}")
