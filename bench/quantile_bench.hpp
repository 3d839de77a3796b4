// SPDX-License-Identifier: Apache-2.0
// Registration of the CPU quantile benchmarks (quantile_cpu_bench.cpp).
#pragma once

void register_quantile_benchmarks();
