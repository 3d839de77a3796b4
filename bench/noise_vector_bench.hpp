// SPDX-License-Identifier: Apache-2.0
// Registration of the noise vector benchmarks (noise_vector_cpu_bench.cpp) with Google Benchmark.
#pragma once

void register_noise_vector_benchmarks();
