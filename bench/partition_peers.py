# SPDX-License-Identifier: Apache-2.0
"""Partition selection against PipelineDP's local backend and python-dp, on the same pairs, in one run.

    python bench/partition_peers.py [--n 1000000] [--repeats 5] [--json out.json]

The pairs: n (user, key) pairs, n / 4 users drawn at random, keys floor(10^6 u^4) (a few keys held
by many users, most by few; fixed seed). Every workload selects with the truncated geometric
strategy at epsilon 1, delta 1e-6, one key per user, runs --repeats times after one warm-up, and
is reported as its median and as a ratio to dpselect's measured in the same run:

- ``dpselect``: ``dpselect.select_partitions`` over the NumPy columns;
- ``pipeline_dp-local``: PipelineDP's ``DPEngine.select_partitions`` with its ``LocalBackend``
  over the pairs as a list of tuples (its own contribution bounding and Google's strategy);
- ``python-dp``: the library has no selection over pairs, only the keep decision of a key
  (``create_truncated_geometric_partition_strategy(...).should_keep(n)``): NumPy bounds each user
  to one random key and counts the users per key, then the decision runs once per key;
- ``numpy-unique-pairs``: ``numpy.unique`` of the pairs (one sort of them), for scale.

Each peer draws its own randomness (no fixed seeds: timings only). The number of released keys
is printed with each for a sanity check; with different randomness they differ slightly.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench_run import median_seconds, print_selection_workloads, run_metadata, selection_workloads

EPSILON, DELTA = 1.0, 1e-6


def pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(20240601)
    users = rng.integers(0, max(1, n // 4), size=n, dtype=np.int64)
    keys = (1e6 * rng.random(n) ** 4).astype(np.int64)
    return users, keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    import dpselect

    users, keys = pairs(args.n)
    released: dict[str, int] = {}

    def with_dpselect() -> None:
        kept = dpselect.select_partitions(dpselect.Context(), users, keys, epsilon=EPSILON, delta=DELTA)
        released["dpselect"] = len(kept.keys)

    runs = {"dpselect": with_dpselect}

    try:
        import pipeline_dp

        rows = list(zip(users.tolist(), keys.tolist()))

        def with_pipeline_dp() -> None:
            accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
            engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
            params = pipeline_dp.SelectPartitionsParams(
                max_partitions_contributed=1,
                partition_selection_strategy=pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC)
            extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda row: row[0],
                                                    partition_extractor=lambda row: row[1])
            result = engine.select_partitions(rows, params, extractors)
            accountant.compute_budgets()
            released["pipeline_dp-local"] = len(list(result))

        runs["pipeline_dp-local"] = with_pipeline_dp
    except ImportError:
        pass

    try:
        from pydp.algorithms import partition_selection

        def with_python_dp() -> None:
            strategy = partition_selection.create_truncated_geometric_partition_strategy(EPSILON, DELTA, 1)
            distinct = np.unique(np.stack([users, keys], axis=1), axis=0)
            order = np.random.default_rng().permutation(len(distinct))  # one random key per user:
            shuffled = distinct[order]
            _, first = np.unique(shuffled[:, 0], return_index=True)  # the first of each user's shuffled keys
            key_values, counts = np.unique(shuffled[first, 1], return_counts=True)
            released["python-dp"] = sum(strategy.should_keep(int(count)) for count in counts.tolist())
            del key_values

        runs["python-dp"] = with_python_dp
    except ImportError:
        pass

    runs["numpy-unique-pairs"] = lambda: np.unique(np.stack([users, keys], axis=1), axis=0)

    seconds = {name: median_seconds(run, args.repeats) for name, run in runs.items()}
    result = {**run_metadata(), "n": args.n, "repeats": args.repeats,
              "workloads": selection_workloads(seconds, "dpselect", released)}
    print(f"{args.n} pairs, {args.n // 4} users, truncated geometric, epsilon {EPSILON}, delta {DELTA}, m 1")
    print_selection_workloads(result["workloads"], "dpselect", digits=4)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
