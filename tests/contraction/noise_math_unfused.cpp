// SPDX-License-Identifier: Apache-2.0
#define PROBE_SUFFIX unfused
#include "noise_math_probe.inc"
