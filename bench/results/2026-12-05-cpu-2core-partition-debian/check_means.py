# SPDX-License-Identifier: Apache-2.0
"""Whether dpselect's released counts on the Debian pairs have the mean that python-dp's keep rule
of the same name gives, with many seeds (the 5 repeats of partition_debian.py are too few to tell).

    cd bench && OMP_NUM_THREADS=2 PYTHONPATH=<build>/python:. python results/2026-12-05-cpu-2core-partition-debian/check_means.py 200

For each count strategy (truncated geometric, Laplace, Gaussian) and m in {1, 4, 16, 64}: the
number of keys ``dpselect.select_partitions`` releases over the int64 codes for N fixed seeds
(5000 + s), against the expected count under python-dp's rule, the sum of
``probability_of_keep(n)`` over the keys after NumPy's bounding (``partition_debian.bounded_counts``,
N NumPy seeds 9000 + s). The difference is given in standard errors of the difference of the two
means (sample variances over N, the two sets independent). Output: check-means.txt.
"""
import statistics, sys
import numpy as np, dpselect
from pydp.algorithms import partition_selection as P
from debian_pairs import debian_codes
from partition_debian import bounded_counts
uc, kc, _, _ = debian_codes()
N = int(sys.argv[1])
for name, create in [("TRUNCATED_GEOMETRIC", "create_truncated_geometric_partition_strategy"),
                     ("LAPLACE_THRESHOLD", "create_laplace_partition_strategy"),
                     ("GAUSSIAN_THRESHOLD", "create_gaussian_partition_strategy")]:
    for m in (1, 4, 16, 64):
        ours = [len(dpselect.select_partitions(dpselect.Context.fixed_seed(5000 + s), uc, kc, epsilon=1, delta=1e-5,
                    max_partitions=m, strategy=dpselect.PartitionStrategy.__members__[name]).keys) for s in range(N)]
        rule = getattr(P, create)(1.0, 1e-5, m)
        exp = [sum(rule.probability_of_keep(n) for n in bounded_counts(uc, kc, m, np.random.default_rng(9000 + s)).tolist())
               for s in range(N)]
        mo, mt = statistics.fmean(ours), statistics.fmean(exp)
        se = (statistics.variance(ours) / N + statistics.variance(exp) / N) ** 0.5
        print(f"{name} m={m}: dpselect mean {mo:.1f} (sd {statistics.stdev(ours):.1f}, {N} seeds); "
              f"python-dp rule, expected over {N} NumPy boundings {mt:.1f} (sd {statistics.stdev(exp):.1f}); "
              f"difference {mo - mt:+.1f} = {(mo - mt) / se:+.1f} SE", flush=True)
