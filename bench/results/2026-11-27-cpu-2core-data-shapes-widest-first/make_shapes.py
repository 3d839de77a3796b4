# SPDX-License-Identifier: Apache-2.0
# The 2^24 float32 utility files that measure.py reads, in the current folder.
import numpy as np

n = 1 << 24
rng = np.random.default_rng(1)
uniform = rng.uniform(0, 1000, n).astype(np.float32)
uniform.tofile("uniform.f32")                                     # uniform in [0, 1000)
np.sort(uniform)[::-1].copy().tofile("descending.f32")            # the same values, sorted descending
np.sort(uniform).tofile("ascending.f32")                          # ... sorted ascending
i = np.arange(n, dtype=np.float64)
(i / 1024).astype(np.float32).tofile("gentle_ascending.f32")      # u(i) = i/1024: a new best every few groups
(i / 32).astype(np.float32).tofile("slope_1_per_group.f32")       # u(i) = i/32
i.astype(np.float32).tofile("steep_ascending.f32")                # u(i) = i
np.full(n, 7.0, dtype=np.float32).tofile("all_equal.f32")          # every utility 7
rng.zipf(1.5, n).astype(np.float32).tofile("zipf_counts.f32")     # heavy-tailed counts, Zipf(1.5)
