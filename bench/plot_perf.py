#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots the performance tables: time per release against n, dpselect and the peers.

    python3 bench/plot_perf.py --peers bench/results/<run>/peers.json --out docs/pictures/perf-cpu.svg
    python3 bench/plot_perf.py --gpu bench/results/<run>/gpu.json --out docs/pictures/perf-gpu.png

--peers reads the JSON of bench/peer_comparison.py (one line per implementation: dpselect's
rows solid, the peers' dashed, NumPy's non-private argmax dotted as the floor); --gpu reads a
Google Benchmark JSON of dpselect_bench_gpu (one line per mechanism and generator of
gpu_select/float, with the GPU's plain read and CUB's non-private arg-max as floors). The format
follows --out's extension (.png or .svg). Needs matplotlib.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def peer_lines(path: Path):
    data = json.loads(path.read_text())
    for row in data["rows"]:
        points = sorted((int(n), cell["seconds"]) for n, cell in row["cells"].items() if cell.get("seconds"))
        if not points:
            continue
        if row["peer"] in ("dpselect", "dpselect-python"):
            style = "-"
        elif row["key"] == "numpy_argmax":
            style = ":"
        else:
            style = "--"
        yield row["label"], points, style
    yield None, data["header"], None


def gpu_lines(path: Path):
    data = json.loads(path.read_text())
    series: dict[str, list[tuple[int, float]]] = {}
    for benchmark in data["benchmarks"]:
        if benchmark.get("aggregate_name") not in (None, "", "median"):
            continue
        name = benchmark.get("run_name", benchmark["name"])
        match = re.match(r"(gpu_select/float/[^/]+/[^/]+|gpu_read/float|gpu_cub_argmax/float)/n:(\d+)/", name)
        if match:
            seconds = benchmark["real_time"] * UNIT_SECONDS[benchmark.get("time_unit", "ns")]
            series.setdefault(match.group(1), []).append((int(match.group(2)), seconds))
    for label, points in sorted(series.items()):
        style = ":" if label.startswith(("gpu_read", "gpu_cub")) else "-"
        floors = {"gpu_read/float": "read the floats once (floor)",
                  "gpu_cub_argmax/float": "CUB arg-max, NOT PRIVATE (floor)"}
        shown = floors[label] if label in floors else label.split("/", 2)[2]
        yield shown, sorted(points), style
    yield None, data["context"], None


def plot(lines, title: str, out: Path) -> None:
    figure = Figure(figsize=(9.0, 7.0), layout="constrained")
    axes = figure.subplots()
    axes.set_prop_cycle(color=matplotlib.colormaps["tab20"].colors)
    subtitle = ""
    for label, points, style in lines:
        if label is None:
            header = points
            subtitle = header.get("date", "") + ("; " + header["CPU"] if "CPU" in header else "")
            if "gpu_name" in header:
                subtitle += f"; {header['gpu_name']}"
            continue
        sizes, seconds = zip(*points)
        axes.loglog(sizes, seconds, linestyle=style, marker="o", markersize=4, label=label if len(label) <= 64 else label[:63] + "…")
    axes.set_xlabel("candidates n")
    axes.set_ylabel("seconds per release (median)")
    axes.set_title(f"{title}\n{subtitle}", fontsize="medium")
    axes.grid(True, which="both", alpha=0.3)
    figure.legend(loc="outside lower center", ncols=2, fontsize="x-small")
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--peers", type=Path, help="JSON written by bench/peer_comparison.py --json")
    source.add_argument("--gpu", type=Path, help="Google Benchmark JSON of dpselect_bench_gpu")
    parser.add_argument("--out", type=Path, required=True, help="the picture (.png or .svg)")
    parser.add_argument("--title", help="title (default: what the data is)")
    args = parser.parse_args(argv)
    if args.out.suffix not in (".png", ".svg"):
        parser.error(f"--out must end in .png or .svg (got {args.out})")
    if args.peers:
        plot(peer_lines(args.peers), args.title or "One private selection on the CPU: dpselect and the peers",
             args.out)
    else:
        plot(gpu_lines(args.gpu), args.title or "One private selection on the GPU (float utilities)", args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
