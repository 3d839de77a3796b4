# SPDX-License-Identifier: Apache-2.0
# Time per release of `dpselect select` (exponential mechanism, ChaCha20, eps = 1, Delta = 1, CPU,
# both cores) on 2^24 float32 utilities of several shapes, from the command's NOT PRIVATE
# diagnostics (median of 7 releases), and NumPy's non-private argmax of the same array (median of
# 7, one core), in the same run.
import json, statistics, subprocess, sys, time
import numpy as np
cli = sys.argv[1]
print("| utilities (2^24 float32) | dpselect EM, ChaCha20 | NumPy argmax | ratio | against uniform |")
print("| --- | ---: | ---: | ---: | ---: |")
rows = []
for shape in ["uniform", "descending", "ascending", "slope_1_per_group", "steep_ascending"]:
    out = subprocess.run([cli, "select", "--utilities", f"{shape}.f32", "--epsilon", "1", "--sensitivity", "1",
                          "--backend", "cpu", "--repeat", "7", "--seed", "1", "--diagnostics", "--json"],
                         capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    seconds = [r["seconds"] for r in report["not_private"]["releases"]]
    em = statistics.median(seconds)
    u = np.fromfile(f"{shape}.f32", dtype=np.float32)
    ts = []
    for _ in range(7):
        t = time.perf_counter(); np.argmax(u); ts.append(time.perf_counter() - t)
    am = statistics.median(ts)
    rows.append((shape, em, am))
base = rows[0][1]
for shape, em, am in rows:
    print(f"| {shape} | {em*1e3:.2f} ms | {am*1e3:.2f} ms | {em/am:.2f}x | {em/base:.1f}x |")
