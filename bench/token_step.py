# SPDX-License-Identifier: Apache-2.0
"""Per-step cost of private token selection against the argmax of the same scores, in one run.

    python bench/token_step.py [--batch 32] [--vocabulary 131072] [--repeats 51] [--json out.json]

One decoding step: a batch x vocabulary float32 matrix of scores (vote counts of an ensemble of
250 teachers, fixed seed), one token per row. Each workload runs --repeats times after one
warm-up; medians are reported, every one as a ratio to ``torch.argmax`` of the same tensor
(``numpy.argmax`` where PyTorch is not installed) measured in the same run:

- ``torch-argmax``: ``torch.argmax(votes, dim=1)`` on the CPU tensor (the baseline);
- ``numpy-argmax``: ``numpy.argmax(votes, axis=1)`` on the same memory;
- ``dpselect-rows``: ``dpselect.select_rows`` over the tensor (read in place through DLPack), one
  epsilon per row, exponential mechanism; and with one epsilon for every row;
- ``dpselect-rows-lnm``: the same with Laplace report-noisy-max.

Every context is Context.fixed_seed (NOT PRIVATE): the data are synthetic.
"""

from __future__ import annotations

import argparse
import json
import os
import platform

import numpy as np

from bench_run import median_seconds, run_metadata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--vocabulary", type=int, default=131_072)
    parser.add_argument("--repeats", type=int, default=51)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    import dpselect

    rng = np.random.default_rng(4)
    favourite = rng.integers(0, args.vocabulary, size=(args.batch, 8))
    votes = np.zeros((args.batch, args.vocabulary), dtype=np.float32)
    proposals = favourite[np.arange(args.batch)[:, None], rng.integers(0, 8, size=(args.batch, 250))]
    np.add.at(votes, (np.arange(args.batch)[:, None], proposals), 1.0)
    row_epsilons = np.full(args.batch, 0.25)
    try:
        import torch
    except ImportError:
        torch = None
    tensor = torch.from_numpy(votes) if torch is not None else votes

    def rows(mechanism, epsilon):
        return lambda: dpselect.select_rows(dpselect.Context.fixed_seed(7), tensor, epsilon=epsilon, sensitivity=1.0,
                                            mechanism=mechanism, backend=dpselect.Backend.CPU)

    seconds = {}
    if torch is not None:
        seconds["torch-argmax"] = median_seconds(lambda: torch.argmax(tensor, dim=1), args.repeats)
    seconds["numpy-argmax"] = median_seconds(lambda: np.argmax(votes, axis=1), args.repeats)
    seconds["dpselect-rows"] = median_seconds(rows(dpselect.Mechanism.EXPONENTIAL, row_epsilons), args.repeats)
    seconds["dpselect-rows-one-epsilon"] = median_seconds(rows(dpselect.Mechanism.EXPONENTIAL, 0.25), args.repeats)
    seconds["dpselect-rows-lnm"] = median_seconds(rows(dpselect.Mechanism.LAPLACE_NOISY_MAX, row_epsilons),
                                                  args.repeats)
    baseline = "torch-argmax" if torch is not None else "numpy-argmax"

    result = {
        **run_metadata(),
        "versions": {"numpy": np.__version__, "torch": None if torch is None else torch.__version__,
                     "python": platform.python_version(), "omp_threads": os.environ.get("OMP_NUM_THREADS")},
        "batch": args.batch, "vocabulary": args.vocabulary, "dtype": "float32", "repeats": args.repeats,
        "median_seconds": seconds, "baseline": baseline,
        "ratio_to_baseline": {name: value / seconds[baseline] for name, value in seconds.items()},
    }
    print(f"one step: {args.batch} x {args.vocabulary} float32; medians of {args.repeats}; baseline {baseline}")
    for name, value in seconds.items():
        print(f"  {name:26s} {1e3 * value:8.3f} ms  {value / seconds[baseline]:6.2f}x")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
