# SPDX-License-Identifier: Apache-2.0
"""Partition selection over a Spark DataFrame against Spark's own distinct count per key, in one run.

    python bench/spark_partition_selection.py [--n 100000000] [--partitions 16] [--repeats 1]
        [--pipeline-dp] [--check] [--json out.json]

The pairs: n (user, key) rows made and cached in a local Spark session (``local[*]``): users
``CAST(rand(5) * n / 8 AS BIGINT)`` (about 8 pairs a user), string keys ``'w'`` followed by
``floor(10^6 u^4)`` for a uniform u (``rand(11)``: a few keys held by many users, most by few).
Each workload runs --repeats times after one warm-up; medians are reported, each as a ratio to
the baseline measured in the same run:

- ``count-distinct``: ``frame.groupBy("key").agg(countDistinct("user"))``, every row of it
  written to Spark's ``noop`` sink (the baseline: the users per key, in the JVM only);
- ``dpselect``: ``dpselect.spark.select_partitions`` over the two columns, truncated geometric,
  epsilon 1, delta 1e-5, one key a user;
- ``pipeline_dp-spark`` (with --pipeline-dp): PipelineDP's ``DPEngine.select_partitions`` with its
  ``SparkRDDBackend`` over ``frame.rdd`` (its own contribution bounding and Google's truncated
  geometric strategy), the released keys collected.

With --check, dpselect's keys are compared with ``dpselect.select_partitions`` over the columns
gathered in one process (``toPandas``: keep n at 10^7 or less). Every dpselect context is
``Context.fixed_seed`` (NOT PRIVATE): the data are synthetic, and timings of selections over
real data are not private either (they may depend on the data).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from bench_run import median_seconds, print_selection_workloads, run_metadata, selection_workloads

EPSILON, DELTA, MAX_PARTITIONS = 1.0, 1e-5, 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--pipeline-dp", action="store_true", help="time PipelineDP's SparkRDDBackend too")
    parser.add_argument("--check", action="store_true", help="compare with one process (toPandas)")
    parser.add_argument("--driver-memory", default="12g")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import dpselect
    import dpselect.spark

    spark = (SparkSession.builder.master("local[*]").appName("dpselect-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", args.driver_memory)
             .config("spark.sql.shuffle.partitions", str(args.partitions))
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    users = max(1, args.n // 8)
    frame = (spark.range(args.n, numPartitions=args.partitions)
             .selectExpr(f"CAST(rand(5) * {users} AS BIGINT) AS user",
                         "concat('w', CAST(floor(1e6 * pow(rand(11), 4)) AS STRING)) AS key")
             .cache())
    assert frame.count() == args.n

    def selection() -> dpselect.PartitionSelection:
        return dpselect.spark.select_partitions(dpselect.Context.fixed_seed(7), frame, "user", "key",
                                                epsilon=EPSILON, delta=DELTA, max_partitions=MAX_PARTITIONS)

    released: dict[str, int] = {}
    if args.check:
        gathered = frame.toPandas()
        expected = dpselect.select_partitions(dpselect.Context.fixed_seed(7), gathered["user"].to_numpy(),
                                              gathered["key"].tolist(), epsilon=EPSILON, delta=DELTA,
                                              max_partitions=MAX_PARTITIONS)
        assert selection().keys == expected.keys, "Spark's keys differ from one process's"
        del gathered

    def with_dpselect() -> None:
        released["dpselect"] = len(selection().keys)

    runs = {
        "count-distinct": lambda: frame.groupBy("key").agg(F.countDistinct("user").alias("users"))
        .write.format("noop").mode("overwrite").save(),
        "dpselect": with_dpselect,
    }
    if args.pipeline_dp:
        import pipeline_dp

        def with_pipeline_dp() -> None:
            accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
            engine = pipeline_dp.DPEngine(accountant, pipeline_dp.SparkRDDBackend(spark.sparkContext))
            params = pipeline_dp.SelectPartitionsParams(
                max_partitions_contributed=MAX_PARTITIONS,
                partition_selection_strategy=pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC)
            extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda row: row[0],
                                                    partition_extractor=lambda row: row[1])
            result = engine.select_partitions(frame.rdd.map(tuple), params, extractors)
            accountant.compute_budgets()
            released["pipeline_dp-spark"] = len(result.collect())

        runs["pipeline_dp-spark"] = with_pipeline_dp

    seconds = {name: median_seconds(run, args.repeats) for name, run in runs.items()}
    versions = {"pyspark": spark.version, "python": platform.python_version()}
    if args.pipeline_dp:
        from importlib.metadata import version

        versions["pipeline-dp"] = version("pipeline-dp")
    spark.stop()

    result = {**run_metadata(), "versions": versions, "n": args.n, "users": users,
              "partitions": args.partitions, "repeats": args.repeats, "checked_against_one_process": args.check,
              "workloads": selection_workloads(seconds, "count-distinct", released)}
    print(f"{args.n} pairs (long users, string keys), {args.partitions} partitions, local[*] on {os.cpu_count()} "
          f"cores; truncated geometric, epsilon {EPSILON}, delta {DELTA}, m {MAX_PARTITIONS}; medians of {args.repeats}")
    print_selection_workloads(result["workloads"], "count-distinct")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
