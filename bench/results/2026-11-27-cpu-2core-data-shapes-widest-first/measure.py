# SPDX-License-Identifier: Apache-2.0
# Time per release of `dpselect select` (exponential mechanism, Delta = 1, CPU, both cores) on 2^24
# float32 utilities of several shapes, from the command's NOT PRIVATE diagnostics (median of 7
# releases), and NumPy's non-private argmax of the same array (median of 7, one core), in the same
# run. Usage: python3 measure.py CLI [GENERATOR]   (GENERATOR: chacha20, the default, or philox)
import json, statistics, subprocess, sys, time
import numpy as np
cli = sys.argv[1]
generator = sys.argv[2] if len(sys.argv) > 2 else "chacha20"
cases = [("uniform", 1), ("descending", 1), ("ascending", 1), ("gentle_ascending", 1), ("slope_1_per_group", 1),
         ("steep_ascending", 1), ("all_equal", 1), ("zipf_counts", 1), ("uniform", 0.01), ("uniform", 100),
         ("steep_ascending", 100)]
print(f"| utilities (2^24 float32) | epsilon | dpselect EM, {generator} | NumPy argmax | ratio | against uniform |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
rows = []
for shape, epsilon in cases:
    out = subprocess.run([cli, "select", "--utilities", f"{shape}.f32", "--epsilon", str(epsilon), "--sensitivity", "1",
                          "--backend", "cpu", "--generator", generator, "--repeat", "7", "--seed", "1",
                          "--diagnostics", "--json"], capture_output=True, text=True, check=True).stdout
    seconds = [r["seconds"] for r in json.loads(out)["not_private"]["releases"]]
    em = statistics.median(seconds)
    u = np.fromfile(f"{shape}.f32", dtype=np.float32)
    ts = []
    for _ in range(7):
        t = time.perf_counter(); np.argmax(u); ts.append(time.perf_counter() - t)
    rows.append((shape, epsilon, em, statistics.median(ts)))
base = rows[0][2]
for shape, epsilon, em, am in rows:
    print(f"| {shape} | {epsilon:g} | {em*1e3:.2f} ms | {am*1e3:.2f} ms | {em/am:.2f}x | {em/base:.2f}x |")
