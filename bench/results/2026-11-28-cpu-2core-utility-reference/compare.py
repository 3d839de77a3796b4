# SPDX-License-Identifier: Apache-2.0
# Time per release of `dpselect select` (exponential mechanism, ChaCha20, Delta = 1, eps = 1, CPU,
# both cores) on 2^24 float32 utilities of several shapes (make_shapes.py of
# ../2026-11-27-cpu-2core-data-shapes-widest-first), for two builds of the command in the same
# run, alternating, from the NOT PRIVATE diagnostics: the median of 7 releases per call, then the
# median over ROUNDS calls. Usage: python3 compare.py BEFORE_CLI AFTER_CLI [ROUNDS]
import json, statistics, subprocess, sys
before, after = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
shapes = ["uniform", "descending", "gentle_ascending", "steep_ascending", "all_equal"]
def seconds(cli, shape):
    out = subprocess.run([cli, "select", "--utilities", f"{shape}.f32", "--epsilon", "1", "--sensitivity", "1",
                          "--backend", "cpu", "--repeat", "7", "--seed", "1", "--diagnostics", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return statistics.median(r["seconds"] for r in json.loads(out)["not_private"]["releases"])
times = {(cli, shape): [] for cli in (before, after) for shape in shapes}
for _ in range(rounds):
    for shape in shapes:
        for cli in (before, after):
            times[(cli, shape)].append(seconds(cli, shape))
print("| utilities (2^24 float32) | before | after | after / before |")
print("| --- | ---: | ---: | ---: |")
for shape in shapes:
    b = statistics.median(times[(before, shape)])
    a = statistics.median(times[(after, shape)])
    print(f"| {shape} | {b*1e3:.2f} ms | {a*1e3:.2f} ms | {a/b:.2f}x |")
