# SPDX-License-Identifier: Apache-2.0
"""How many keys each partition-selection strategy releases on a real data set, against PipelineDP
and python-dp, in one run.

    OMP_NUM_THREADS=2 PYTHONPATH=<build>/python python bench/partition_debian.py \
        [--repeats 5] [--max-partitions 1 4 16 64] [--json out.json]

The pairs: ``bench/debian_pairs.py`` (a package of ``apt-cache dumpavail`` is a user, the distinct
lower-cased words of its description its keys). Every workload selects at epsilon 1, delta 1e-5,
for each max_partitions m, --repeats times, each repeat with its own randomness; the released
count is reported as its mean and sample standard deviation over the repeats, the wall time of one
call as the median over the same repeats (one untimed warm-up call per library first: imports,
thread pools, first-use costs):

- ``dpselect <STRATEGY>`` for every ``dpselect.PartitionStrategy`` (default rounds, budget ratio
  and policy cutoff), ``dpselect.select_partitions(dpselect.Context.fixed_seed(seed), users,
  keys, ...)`` with seed 1000 + repeat, once over the pairs as two Python lists of str
  (``str lists``) and once over their int64 codes as NumPy arrays (``int64 codes``, from
  ``numpy.unique``; the encoding is not timed). The codes keep the strings' order; the script
  checks whether the two release the same keys for each seed and says so;
- ``PipelineDP <STRATEGY>`` for TRUNCATED_GEOMETRIC, LAPLACE_THRESHOLDING and GAUSSIAN_THRESHOLDING
  of ``pipeline_dp.PartitionSelectionStrategy``: ``DPEngine.select_partitions`` with its
  ``LocalBackend`` and a ``NaiveBudgetAccountant`` holding (1, 1e-5), over the pairs as a list of
  (user, key) str tuples (built once, not timed); its own bounding to m keys a user and its own,
  unseeded, randomness. WEIGHTED_GAUSSIAN_THRESHOLDING (PipelineDP 0.3) runs only with
  --pipeline-dp-weighted-repeats K > 0, K calls at each m: it builds its keep rule once per key
  (about 20 ms each on this data, 3 to 6 minutes a call on two cores);
- ``python-dp <strategy>`` for each strategy python-dp creates (truncated geometric, Laplace,
  Gaussian): the library decides one key at a time only, so NumPy drops repeated pairs, keeps m
  random keys of each user (a permutation drawn from ``numpy.random.default_rng(seed)``, then the
  first m of each user's) and counts the users per key over the int64 codes, then
  ``should_keep(n)`` runs once per key (timed: all of it). Each repeat also records the expected
  count given its bounding, the sum of ``probability_of_keep(n)`` over the keys.

The speed baseline is ``dpselect TRUNCATED_GEOMETRIC`` over the str lists at the same m, measured
in the same run. The keep rules of the same-named strategies are compared too: for each m, the
largest |dpselect.keep_probability(n) - python-dp probability_of_keep(n)| over n = 1..2000.

The peers run where importable (``pip install pipeline-dp==0.3.* python-dp==1.1.5``); a peer that
is not is skipped with a line that says so.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from typing import Callable

import numpy as np

from bench_run import run_metadata
from debian_pairs import counts, dumpavail, parse, source_note

EPSILON, DELTA = 1.0, 1e-5
SEED_BASE = 1000
BASELINE = "dpselect TRUNCATED_GEOMETRIC"


def version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def bounded_counts(user_codes: np.ndarray, key_codes: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """python-dp's missing half, in NumPy: the number of distinct users of each key after each
    user keeps m of its distinct keys at random."""
    width = int(key_codes.max()) + 1
    pairs = np.unique(user_codes * width + key_codes)  # distinct pairs
    pairs = pairs[rng.permutation(len(pairs))]
    users = pairs // width
    order = np.argsort(users, kind="stable")  # each user's keys, in the random order
    users, pairs = users[order], pairs[order]
    starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]])
    rank = np.arange(len(users)) - np.repeat(starts, np.diff(np.r_[starts, len(users)]))
    _, per_key = np.unique(pairs[rank < m] % width, return_counts=True)
    return per_key


def timed(run: Callable[[], int]) -> tuple[int, float]:
    start = time.perf_counter()
    kept = run()
    return kept, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-partitions", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--pipeline-dp-weighted-repeats", type=int, default=0, metavar="K",
                        help="calls of PipelineDP's WEIGHTED_GAUSSIAN_THRESHOLDING at each m (minutes each; default 0: skipped)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    import dpselect

    text = dumpavail()
    users, keys, dropped = parse(text)
    data = {**counts(users, keys), "dropped_stanzas": dropped, "source": source_note(text)}
    user_names, user_codes = np.unique(np.asarray(users), return_inverse=True)
    key_names, key_codes = np.unique(np.asarray(keys), return_inverse=True)
    user_codes, key_codes = user_codes.astype(np.int64), key_codes.astype(np.int64)
    per_user = np.bincount(user_codes)
    data["keys_per_user"] = {"median": float(np.median(per_user)), "max": int(per_user.max()),
                             **{f"over_{m}": int((per_user > m).sum()) for m in args.max_partitions}}

    notes: list[str] = []
    # results[workload][m] = {"released": [...], "seconds": [...], ...}
    results: dict[str, dict[int, dict]] = {}

    def record(name: str, m: int, kept: int, seconds: float, **extra) -> None:
        entry = results.setdefault(name, {}).setdefault(m, {"released": [], "seconds": []})
        entry["released"].append(kept)
        entry["seconds"].append(seconds)
        for field, value in extra.items():
            entry.setdefault(field, []).append(value)

    # dpselect, over the str lists and over the int64 codes.
    strategies = list(dpselect.PartitionStrategy.__members__.items())
    dpselect.select_partitions(dpselect.Context.fixed_seed(0), users, keys, epsilon=EPSILON, delta=DELTA)  # warm-up
    mismatches = 0
    for m in args.max_partitions:
        for name, strategy in strategies:
            for repeat in range(args.repeats):
                def select(u, k):
                    return dpselect.select_partitions(dpselect.Context.fixed_seed(SEED_BASE + repeat), u, k,
                                                      epsilon=EPSILON, delta=DELTA, max_partitions=m,
                                                      strategy=strategy).keys
                start = time.perf_counter()
                from_str = select(users, keys)
                middle = time.perf_counter()
                from_codes = select(user_codes, key_codes)
                end = time.perf_counter()
                record(f"dpselect {name}", m, len(from_str), middle - start)
                record(f"dpselect {name} (int64 codes)", m, len(from_codes), end - middle)
                mismatches += list(from_str) != key_names[np.asarray(from_codes)].tolist()
    notes.append(f"dpselect over str lists and over int64 codes released the same keys in "
                 f"{len(strategies) * len(args.max_partitions) * args.repeats - mismatches} of "
                 f"{len(strategies) * len(args.max_partitions) * args.repeats} (strategy, m, seed) cases")

    # PipelineDP.
    try:
        import pipeline_dp
    except ImportError as error:
        pipeline_dp = None
        notes.append(f"PipelineDP skipped: not importable ({error}); pip install pipeline-dp==0.3.*")
    if pipeline_dp is not None:
        rows = list(zip(users, keys))

        def with_pipeline_dp(strategy, m: int) -> int:
            accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
            engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
            params = pipeline_dp.SelectPartitionsParams(max_partitions_contributed=m,
                                                        partition_selection_strategy=strategy)
            extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda row: row[0],
                                                    partition_extractor=lambda row: row[1])
            result = engine.select_partitions(rows, params, extractors)
            accountant.compute_budgets()
            return len(list(result))

        with_pipeline_dp(pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC, 1)  # warm-up
        if "WEIGHTED_GAUSSIAN_THRESHOLDING" in pipeline_dp.PartitionSelectionStrategy.__members__ \
                and args.pipeline_dp_weighted_repeats == 0:
            notes.append("PipelineDP WEIGHTED_GAUSSIAN_THRESHOLDING skipped (minutes a call); "
                         "--pipeline-dp-weighted-repeats K runs it")
        for m in args.max_partitions:
            for name, strategy in pipeline_dp.PartitionSelectionStrategy.__members__.items():
                weighted = name == "WEIGHTED_GAUSSIAN_THRESHOLDING"
                for _ in range(args.pipeline_dp_weighted_repeats if weighted else args.repeats):
                    record(f"PipelineDP {name}", m, *timed(lambda: with_pipeline_dp(strategy, m)))

    # python-dp: NumPy bounds and counts, python-dp decides each key.
    try:
        from pydp.algorithms import partition_selection as pydp_selection
    except ImportError as error:
        pydp_selection = None
        notes.append(f"python-dp skipped: not importable ({error}); pip install python-dp==1.1.5")
    agreement: dict[str, dict[int, float]] = {}
    if pydp_selection is not None:
        creators = {"truncated geometric": ("create_truncated_geometric_partition_strategy", "TRUNCATED_GEOMETRIC"),
                    "Laplace": ("create_laplace_partition_strategy", "LAPLACE_THRESHOLD"),
                    "Gaussian": ("create_gaussian_partition_strategy", "GAUSSIAN_THRESHOLD")}

        def with_python_dp(create: str, m: int, seed: int) -> tuple[int, float]:
            strategy = getattr(pydp_selection, create)(EPSILON, DELTA, m)
            per_key = bounded_counts(user_codes, key_codes, m, np.random.default_rng(seed)).tolist()
            kept = sum(strategy.should_keep(n) for n in per_key)
            return kept, sum(strategy.probability_of_keep(n) for n in per_key)

        with_python_dp(creators["truncated geometric"][0], 1, 0)  # warm-up
        for m in args.max_partitions:
            for name, (create, ours) in creators.items():
                for repeat in range(args.repeats):
                    start = time.perf_counter()
                    kept, expected = with_python_dp(create, m, SEED_BASE + repeat)
                    seconds = time.perf_counter() - start
                    record(f"python-dp {name}", m, kept, seconds, expected=expected)
                theirs = getattr(pydp_selection, create)(EPSILON, DELTA, m)
                params = dpselect.PartitionSelectionParams(epsilon=EPSILON, delta=DELTA, max_partitions=m,
                                                           strategy=dpselect.PartitionStrategy.__members__[ours])
                agreement.setdefault(ours, {})[m] = max(
                    abs(dpselect.keep_probability(params, n) - theirs.probability_of_keep(n)) for n in range(1, 2001))

    # Summaries.
    summary: dict[str, dict[int, dict]] = {}
    for name, by_m in results.items():
        for m, entry in by_m.items():
            released = entry["released"]
            summary.setdefault(name, {})[m] = {
                "released": released, "mean": statistics.fmean(released),
                "sd": statistics.stdev(released) if len(released) > 1 else None,
                "seconds": entry["seconds"], "median_seconds": statistics.median(entry["seconds"]),
                **({"expected_mean": statistics.fmean(entry["expected"])} if "expected" in entry else {})}
    for name, by_m in summary.items():
        for m, entry in by_m.items():
            entry["ratio_to_baseline"] = entry["median_seconds"] / summary[BASELINE][m]["median_seconds"]

    result = {**run_metadata(), "python": platform.python_version(), "numpy": np.__version__,
              "dpselect": getattr(dpselect, "__version__", None), "dpselect_module": os.path.dirname(dpselect.__file__),
              "pipeline_dp": version("pipeline-dp"), "python_dp": version("python-dp"),
              "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
              "epsilon": EPSILON, "delta": DELTA, "repeats": args.repeats, "seed_base": SEED_BASE,
              "max_partitions": args.max_partitions, "data": data, "baseline": BASELINE,
              "keep_probability_max_abs_difference_dpselect_vs_python_dp": agreement,
              "notes": notes, "workloads": summary}

    ms = args.max_partitions
    print(f"Debian descriptions: {data['users']} packages (users), {data['pairs']} pairs, {data['keys']} distinct keys; "
          f"keys a user: median {data['keys_per_user']['median']:g}, max {data['keys_per_user']['max']}; "
          + ", ".join(f"{data['keys_per_user'][f'over_{m}']} users over {m}" for m in ms))
    print(f"source: {data['source']}")
    print(f"epsilon {EPSILON}, delta {DELTA}, {args.repeats} repeats; dpselect {result['dpselect']}, "
          f"PipelineDP {result['pipeline_dp']}, python-dp {result['python_dp']}, NumPy {np.__version__}, "
          f"Python {result['python']}")
    for note in notes:
        print(f"note: {note}")
    print("\nKeys released, mean ± sd over the repeats\n")
    print("| workload | " + " | ".join(f"m = {m}" for m in ms) + " |")
    print("|---|" + "---:|" * len(ms))
    for name, by_m in summary.items():
        if name.endswith("(int64 codes)"):
            continue
        print(f"| {name} | " + " | ".join(
            f"{by_m[m]['mean']:.1f} ± {by_m[m]['sd']:.1f}" if by_m[m]["sd"] is not None
            else f"{by_m[m]['mean']:.0f} (one call)" for m in ms) + " |")
    if any("expected_mean" in by_m[ms[0]] for by_m in summary.values()):
        print("\npython-dp, expected count given its bounding (sum of probability_of_keep), mean over the repeats\n")
        print("| workload | " + " | ".join(f"m = {m}" for m in ms) + " |")
        print("|---|" + "---:|" * len(ms))
        for name, by_m in summary.items():
            if "expected_mean" in by_m[ms[0]]:
                print(f"| {name} | " + " | ".join(f"{by_m[m]['expected_mean']:.1f}" for m in ms) + " |")
    if agreement:
        print("\nmax |dpselect keep_probability(n) - python-dp probability_of_keep(n)|, n = 1..2000\n")
        print("| strategy | " + " | ".join(f"m = {m}" for m in ms) + " |")
        print("|---|" + "---:|" * len(ms))
        for name, by_m in agreement.items():
            print(f"| {name} | " + " | ".join(f"{by_m[m]:.1e}" for m in ms) + " |")
    print(f"\nWall time of one call, median over the repeats (× {BASELINE} over str lists at the same m)\n")
    print("| workload | " + " | ".join(f"m = {m}" for m in ms) + " |")
    print("|---|" + "---:|" * len(ms))
    for name, by_m in summary.items():
        label = name if name.endswith("(int64 codes)") or not name.startswith("dpselect") else f"{name} (str lists)"
        print(f"| {label} | " + " | ".join(
            f"{by_m[m]['median_seconds']:.3f} s ({by_m[m]['ratio_to_baseline']:.2f}×)" for m in ms) + " |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)
        print(f"\nwrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
