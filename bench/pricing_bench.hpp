// SPDX-License-Identifier: Apache-2.0
// Registration of the pricing benchmarks (pricing_cpu_bench.cpp) with Google Benchmark.
#pragma once

void register_pricing_benchmarks();
