# SPDX-License-Identifier: Apache-2.0
"""Partition selection over a Dask DataFrame against Dask's own distinct count per key, in one run.

    python bench/dask_partition_selection.py [--n 10000000] [--partitions 16] [--repeats 3]
        [--workers 2] [--threads 1] [--json out.json]

The pairs: n (user, key) rows, users drawn uniformly from n / 8 (about 8 pairs a user), string
keys ``'w'`` followed by ``floor(10^6 u^4)`` for a uniform u (a few keys held by many users, most
by few; fixed seed), as ``string[pyarrow]``. They are persisted on a LocalCluster. Each workload
runs --repeats times after one warm-up; medians are reported, each as a ratio to the baseline
measured in the same run:

- ``nunique``: ``frame.groupby("key").user.nunique()``, computed (the baseline: the users per key);
- ``dpselect``: ``dpselect.dask.select_partitions`` over the two columns, truncated geometric,
  epsilon 1, delta 1e-5, one key a user.

Every run's keys equal ``dpselect.select_partitions`` over the same columns in this process
(checked once). Every context is ``Context.fixed_seed`` (NOT PRIVATE): the data are synthetic, and
timings of selections over real data are not private either (they may depend on the data).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform

import numpy as np

from bench_run import median_seconds, print_selection_workloads, run_metadata, selection_workloads

EPSILON, DELTA, MAX_PARTITIONS = 1.0, 1e-5, 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--threads", type=int, default=1, help="Dask threads per worker (default 1)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    import dask.dataframe as dd
    import distributed
    import pandas as pd

    import dpselect
    import dpselect.dask

    rng = np.random.default_rng(20240601)
    users = rng.integers(0, max(1, args.n // 8), size=args.n, dtype=np.int64)
    key_numbers = np.floor(1e6 * rng.random(args.n) ** 4).astype(np.int64)
    keys = ("w" + pd.Series(key_numbers).astype(str)).astype("string[pyarrow]")
    gathered = pd.DataFrame({"user": users, "key": keys})
    expected = dpselect.select_partitions(dpselect.Context.fixed_seed(7), users, keys.to_numpy(dtype=object),
                                          epsilon=EPSILON, delta=DELTA, max_partitions=MAX_PARTITIONS).keys

    # One thread per worker process: dpselect's own passes here are a small share of the time.
    env = {"OMP_NUM_THREADS": "1"}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR, env=env) as cluster, \
            distributed.Client(cluster) as client:
        frame = dd.from_pandas(gathered, npartitions=args.partitions).persist()
        distributed.wait(frame)
        released: dict[str, int] = {}

        def with_dpselect() -> None:
            kept = dpselect.dask.select_partitions(dpselect.Context.fixed_seed(7), frame, "user", "key",
                                                   epsilon=EPSILON, delta=DELTA, max_partitions=MAX_PARTITIONS)
            assert kept.keys == expected, "Dask's keys differ from one process's"
            released["dpselect"] = len(kept.keys)

        seconds = {
            "nunique": median_seconds(lambda: frame.groupby("key").user.nunique().compute(), args.repeats),
            "dpselect": median_seconds(with_dpselect, args.repeats),
        }
        client.close()

    from importlib.metadata import version

    versions = {name: version(name) for name in ("dask", "distributed", "pandas", "pyarrow")}
    versions["python"] = platform.python_version()
    result = {**run_metadata(), "versions": versions, "n": args.n, "users": max(1, args.n // 8),
              "partitions": args.partitions, "workers": args.workers, "threads_per_worker": args.threads,
              "repeats": args.repeats, "workloads": selection_workloads(seconds, "nunique", released)}
    print(f"{args.n} pairs (int64 users, string keys), {args.partitions} partitions, {args.workers} worker(s) x "
          f"{args.threads} thread(s) on {os.cpu_count()} cores; truncated geometric, epsilon {EPSILON}, "
          f"delta {DELTA}, m {MAX_PARTITIONS}; medians of {args.repeats}")
    print_selection_workloads(result["workloads"], "nunique")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
