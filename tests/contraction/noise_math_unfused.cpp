#define PROBE_SUFFIX unfused
#include "noise_math_probe.inc"
