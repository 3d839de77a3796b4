# SPDX-License-Identifier: Apache-2.0
"""One release over a Dask column against the same release over one NumPy array, in one run.

    python bench/dask_release.py [--n 100000000] [--partitions 16] [--repeats 5] [--json out.json]

Synthetic float32 scores (uniform, fixed seed) are made and persisted on a LocalCluster, and the
same values in the driver. Each workload runs --repeats times after one warm-up; medians are
reported, every one as a ratio to the one-process release measured in the same run:

- ``numpy``: dpselect.select over the NumPy array in this process (the baseline);
- ``dask``: dpselect.dask.select over the persisted collection (look, begin, evaluate, finish);
- ``collect``: the column gathered to the driver (``column.compute()``), then dpselect.select;
- ``dask-max``: Dask's own reduction of the same column (``column.max().compute()``), for the
  engine's overhead per job.

Every context is Context.fixed_seed (NOT PRIVATE): the data are synthetic, and timings of
releases over real data are not private either (they may depend on the data).
"""

from __future__ import annotations

import argparse
import json
import logging
import os

import numpy as np

from bench_run import median_seconds, run_metadata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--threads", type=int, default=1, help="Dask threads per worker (default 1)")
    parser.add_argument("--omp-threads", type=int, default=os.cpu_count(),
                        help="OpenMP threads of dpselect in each worker (default: every core)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    import dask.array as da
    import distributed

    import dpselect
    import dpselect.dask

    values = np.random.default_rng(1).random(args.n, dtype=np.float32)
    keywords = {"epsilon": 1.0, "sensitivity": 1.0}
    env = {"OMP_NUM_THREADS": str(args.omp_threads)}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR, env=env) as cluster, \
            distributed.Client(cluster) as client:
        chunk = -(-args.n // args.partitions)
        column = da.from_array(values, chunks=chunk).persist()
        distributed.wait(column)
        expected = dpselect.select(dpselect.Context.fixed_seed(7), values, **keywords).index
        assert dpselect.dask.select(dpselect.Context.fixed_seed(7), column, **keywords).index == expected

        seconds = {
            "numpy": median_seconds(lambda: dpselect.select(dpselect.Context.fixed_seed(7), values, **keywords),
                                    args.repeats),
            "dask": median_seconds(lambda: dpselect.dask.select(dpselect.Context.fixed_seed(7), column, **keywords),
                                   args.repeats),
            "collect": median_seconds(
                lambda: dpselect.select(dpselect.Context.fixed_seed(7), column.compute(), **keywords), args.repeats),
            "dask-max": median_seconds(lambda: column.max().compute(), args.repeats),
        }
        client.close()

    result = {
        **run_metadata(),
        "n": args.n, "dtype": "float32", "partitions": args.partitions,
        "workers": args.workers, "threads_per_worker": args.threads, "omp_threads_per_worker": args.omp_threads,
        "repeats": args.repeats, "median_seconds": seconds,
        "ratio_to_numpy": {name: value / seconds["numpy"] for name, value in seconds.items()},
        "collect_over_dask": seconds["collect"] / seconds["dask"],
    }
    print(f"{args.n} float32 scores, {args.partitions} partitions, {args.workers} worker(s) x {args.threads} "
          f"thread(s), OMP {args.omp_threads}; medians of {args.repeats}")
    for name, value in seconds.items():
        print(f"  {name:9s} {1e3 * value:9.1f} ms  {value / seconds['numpy']:6.2f}x numpy")
    print(f"  collecting first is {result['collect_over_dask']:.1f}x the Dask release")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
