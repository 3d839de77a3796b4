// SPDX-License-Identifier: Apache-2.0
// Registration of the CPU partition selection benchmarks (partition_selection_cpu_bench.cpp).
#pragma once

void register_partition_selection_benchmarks();
