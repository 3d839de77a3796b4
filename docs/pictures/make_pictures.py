#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws the pictures of docs/python.md with dpselect.plot, into this folder.

    PYTHONPATH=build/cpu-only/python python3 docs/pictures/make_pictures.py

pricing.png: a synthetic auction (2,000 log-normal bids, seeded; no real data), its revenue
curve, the exponential mechanism's probabilities over a grid of 2,000 prices and one release
from a fixed-seed context. audit.png: every audit of the library (dpselect audit --list) at the
releases per input given by --runs. accounting.png: total epsilon of k releases at epsilon 0.1 each.
perf-cpu.png: bench/plot_perf.py over the newest peer comparison that has the Python package.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

import dpselect  # noqa: E402
import dpselect.audit  # noqa: E402
import dpselect.plot  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def pricing() -> None:
    bids = np.random.default_rng(20261126).lognormal(mean=3.0, sigma=0.6, size=2000)
    grid = dpselect.PriceGrid(0.05, 100.0, 0.05)
    # A fixed seed so that the picture is reproducible: synthetic data only, never real bids.
    pick = dpselect.select_price(dpselect.Context.fixed_seed(7), bids, grid, epsilon=1.0)
    dpselect.plot.pricing(bids, grid, 1.0, released=pick).savefig(HERE / "pricing.png", dpi=90)


def audit(runs: int) -> None:
    results = [dpselect.audit.run(target, runs=runs, selection_runs=max(2000, runs // 10))
               for target in dpselect.audit.library_targets()]
    dpselect.plot.audit(results).savefig(HERE / "audit.png", dpi=90)


def accounting() -> None:
    dpselect.plot.accounting(0.1, 100_000, 1e-6).savefig(HERE / "accounting.png", dpi=90)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="audit releases per input (default 100000)")
    parser.add_argument("--peers", type=Path, help="peer comparison JSON for perf-cpu.png")
    args = parser.parse_args(argv)
    pricing()
    accounting()
    audit(args.runs)
    if args.peers:
        subprocess.run([sys.executable, str(REPO / "bench" / "plot_perf.py"), "--peers", str(args.peers),
                        "--out", str(HERE / "perf-cpu.png")], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
