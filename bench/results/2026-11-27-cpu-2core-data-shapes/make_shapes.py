# SPDX-License-Identifier: Apache-2.0
# The 2^24 float32 utility files that measure.py reads, in the current folder.
import numpy as np

n = 1 << 24
uniform = np.random.default_rng(1).uniform(0, 1000, n).astype(np.float32)
uniform.tofile("uniform.f32")                                     # uniform in [0, 1000)
np.sort(uniform)[::-1].copy().tofile("descending.f32")            # the same values, sorted descending
np.sort(uniform).tofile("ascending.f32")                          # ... sorted ascending
(np.arange(n, dtype=np.float32) / np.float32(32)).tofile("slope_1_per_group.f32")  # u(i) = i/32
np.arange(n, dtype=np.float32).tofile("steep_ascending.f32")      # u(i) = i
