// SPDX-License-Identifier: Apache-2.0
#define PROBE_SUFFIX fma_fast
#include "noise_math_probe.inc"
