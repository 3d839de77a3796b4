# SPDX-License-Identifier: Apache-2.0
"""One release over a Spark DataFrame column against plain maxima of the same column, in one run.

    python bench/spark_release.py [--n 100000000] [--partitions 16] [--repeats 5] [--json out.json]

Synthetic float32 scores (``rand(7)``) are cached in a local Spark session (``local[*]``), and the
same values collected once to the driver. Each workload runs --repeats times after one warm-up;
medians are reported, every one as a ratio to Spark's own maximum of the column measured in the
same run:

- ``spark-max``: ``frame.agg(max("score")).collect()``, a JVM-only job (the baseline);
- ``arrow-max``: one ``mapInArrow`` job whose tasks take NumPy's maximum of their partition: the
  same path from the JVM to Python workers that dpselect's tasks take, for one job;
- ``dpselect``: dpselect.spark.select over the cached column (look job, begin, pass job, finish);
- ``numpy``: dpselect.select over the collected array in the driver, for reference.

Every context is Context.fixed_seed (NOT PRIVATE): the data are synthetic, and timings of
releases over real data are not private either (they may depend on the data).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from bench_run import median_seconds, run_metadata


def partition_max(batches):
    import numpy as np
    import pyarrow as pa

    best = -np.inf
    for batch in batches:
        if batch.num_rows:
            best = max(best, float(np.max(batch.column(0).to_numpy())))
    yield pa.RecordBatch.from_pydict({"best": [best]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-rows", type=int, default=10_000,
                        help="spark.sql.execution.arrow.maxRecordsPerBatch (Spark's default: 10000)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import dpselect
    import dpselect.spark

    spark = (SparkSession.builder.master("local[*]").appName("dpselect-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "6g").config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(args.batch_rows))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.range(args.n, numPartitions=args.partitions).selectExpr("CAST(rand(7) AS FLOAT) AS score").cache()
    assert frame.count() == args.n
    values = frame.toPandas()["score"].to_numpy()
    keywords = {"epsilon": 1.0, "sensitivity": 1.0}
    expected = dpselect.select(dpselect.Context.fixed_seed(7), values, **keywords).index
    assert dpselect.spark.select(dpselect.Context.fixed_seed(7), frame, "score", **keywords).index == expected

    seconds = {
        "spark-max": median_seconds(lambda: frame.agg(F.max("score")).collect(), args.repeats),
        "arrow-max": median_seconds(lambda: frame.mapInArrow(partition_max, "best double").collect(), args.repeats),
        "dpselect": median_seconds(
            lambda: dpselect.spark.select(dpselect.Context.fixed_seed(7), frame, "score", **keywords), args.repeats),
        "numpy": median_seconds(lambda: dpselect.select(dpselect.Context.fixed_seed(7), values, **keywords),
                                args.repeats),
    }
    versions = {"pyspark": spark.version, "python": platform.python_version()}
    spark.stop()

    result = {
        **run_metadata(), "versions": versions,
        "n": args.n, "dtype": "float32", "partitions": args.partitions, "repeats": args.repeats,
        "median_seconds": seconds,
        "ratio_to_spark_max": {name: value / seconds["spark-max"] for name, value in seconds.items()},
        "dpselect_over_arrow_max": seconds["dpselect"] / seconds["arrow-max"],
    }
    print(f"{args.n} float32 scores, {args.partitions} partitions, local[*] on {os.cpu_count()} cores; "
          f"medians of {args.repeats}")
    for name, value in seconds.items():
        print(f"  {name:9s} {1e3 * value:9.1f} ms  {value / seconds['spark-max']:6.2f}x Spark's max")
    print(f"  dpselect.spark.select is {result['dpselect_over_arrow_max']:.2f}x one Arrow job's max")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
