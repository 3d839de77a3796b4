// SPDX-License-Identifier: Apache-2.0
// Registration of the sparse vector benchmarks (sparse_vector_cpu_bench.cpp) with Google Benchmark.
#pragma once

void register_sparse_vector_benchmarks();
