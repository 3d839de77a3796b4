// SPDX-License-Identifier: Apache-2.0
// The top-k kernel's pass 1 (top_k_blocks_kernel, kernels/top_k.cu) over the benchmark's 2^n
// candidates (--kernel top-k): every block of the grid replayed in lockstep, under the kernel as
// measured (per-lane races in four rounds of 8 lanes per group), with warp-wide races (8 per warp
// per round, and the grid-wide bound on the k-th score), and as implemented (those races, each
// lane drawing its own group's race block beforehand). Defined in top_k.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule_model.hpp"

namespace schedule_model {

struct TopKOptions {
  std::vector<std::uint64_t> ks{16, 1024};
};

void run_top_k_kernel(const Options& opt, const TopKOptions& top_k, const std::vector<Shape>& shapes);

}  // namespace schedule_model
