// SPDX-License-Identifier: Apache-2.0
// The CPU path's answer does not depend on how many threads ran it.
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <span>
#include <vector>

#include "dpselect/dpselect.hpp"

namespace {

TEST(CpuThreads, AnswerIndependentOfThreadCount) {
  std::vector<float> u(300'007);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(std::sin(0.01 * i));
  dpselect::SelectionParams params;
  params.epsilon = 5.0;
  params.sensitivity = 1.0;
  params.backend = dpselect::Backend::Cpu;
  const int original = omp_get_max_threads();
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    std::vector<std::uint64_t> picks;
    for (const int threads : {1, 2, 3, 8}) {
      omp_set_num_threads(threads);
      dpselect::Context context = dpselect::Context::with_fixed_seed(seed);
      picks.push_back(dpselect::select(context, std::span<const float>(u), params).index);
    }
    for (std::uint64_t pick : picks) EXPECT_EQ(pick, picks.front()) << "seed " << seed;
  }
  omp_set_num_threads(original);
}

}  // namespace
