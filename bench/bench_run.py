# SPDX-License-Identifier: Apache-2.0
"""What the Python benchmarks of bench/ share: the median of timed runs after a warm-up, and the
date, commit and machine each result file records. Imported by the scripts beside it (a script's
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
