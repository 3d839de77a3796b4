// SPDX-License-Identifier: Apache-2.0
// One-shot Gumbel top-k: the distribution of ordered picks equals k rounds of peeling EM
// (Durfee & Rogers 2019), top-1 is the single-pick EM, screening never changes the answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/dpselect.hpp"
#include "support/frequencies.hpp"

namespace dpselect::testing {
namespace {

TopKParams top_k_params(double epsilon_per_pick, std::uint64_t k) {
  TopKParams params;
  params.per_pick.epsilon = epsilon_per_pick;
  params.per_pick.sensitivity = 1.0;
  params.per_pick.backend = Backend::Cpu;
  params.k = k;
  return params;
}

TEST(TopK, OrderedPairsMatchPeelingExponentialMechanism) {
  constexpr int kTrials = 20'000;
  const std::vector<double> u = {0.0, 1.0, 2.0, 0.5};
  const double scale = 1.2 / 2.0;  // eps' / (2 Delta)
  std::vector<long double> w;
  for (double x : u) w.push_back(std::exp(static_cast<long double>(scale * x)));
  long double total = 0;
  for (long double x : w) total += x;
  // Peeling: P(first i, then j) = w_i / W * w_j / (W - w_i).
  std::vector<long double> exact;
  for (std::size_t i = 0; i < u.size(); ++i)
    for (std::size_t j = 0; j < u.size(); ++j)
      exact.push_back(i == j ? 0.0L : w[i] / total * w[j] / (total - w[i]));
  Context context = Context::with_fixed_seed(17);
  std::vector<int> counts(exact.size(), 0);
  for (int trial = 0; trial < kTrials; ++trial) {
    const TopKSelection top = select_top_k(context, std::span<const double>(u), top_k_params(1.2, 2));
    ASSERT_EQ(top.indices.size(), 2u);
    ++counts[top.indices[0] * u.size() + top.indices[1]];
  }
  expect_frequencies_match(counts, exact, kTrials, "ordered pair (first * 4 + second)");
}

TEST(TopK, TopOneIsTheSinglePickWithTheSameKey) {
  std::vector<float> u(50'000);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(std::sin(0.01 * i) * 5);
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    Context a = Context::with_fixed_seed(seed);
    Context b = Context::with_fixed_seed(seed);
    const TopKParams params = top_k_params(2.0, 1);
    EXPECT_EQ(select_top_k(a, std::span<const float>(u), params).indices.at(0),
              select(b, std::span<const float>(u), params.per_pick).index);
  }
}

TEST(TopK, ScreeningNeverChangesTheAnswer) {
  std::vector<double> u(100'003);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = (i % 7 == 0) ? 3.0 : std::cos(0.001 * i);  // many ties
  for (const std::uint64_t k : {std::uint64_t{1}, std::uint64_t{10}, std::uint64_t{1024}, std::uint64_t{5000}}) {
    const Generator generator = k % 2 == 0 ? Generator::chacha20 : Generator::philox;
    Context context = Context::with_fixed_seed(k, generator);
    const TopKSelection top = select_top_k(context, std::span<const double>(u), top_k_params(4.0, k));
    const detail::NoiseSpec spec{Mechanism::exponential, 2.0, RandomKey::from_seed(k, generator), 0, detail::kInfinity};
    std::vector<std::pair<double, std::uint64_t>> all;
    for (std::uint64_t i = 0; i < u.size(); ++i) all.emplace_back(-detail::noisy_score(spec, i, u[i]), i);
    std::partial_sort(all.begin(), all.begin() + k, all.end());
    ASSERT_EQ(top.indices.size(), k);
    for (std::uint64_t r = 0; r < k; ++r) EXPECT_EQ(top.indices[r], all[r].second) << "k = " << k << ", rank " << r;
    EXPECT_EQ(top.report.k, k);
    EXPECT_DOUBLE_EQ(top.report.epsilon_total_basic, 4.0 * k);
    EXPECT_DOUBLE_EQ(top.report.rho, k * 16.0 / 8);
  }
}

TEST(TopK, BadInput) {
  const std::vector<double> u = {0.0, 1.0, -INFINITY};
  Context context = Context::with_fixed_seed(1);
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), top_k_params(1.0, 0)), InvalidArgument);
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), top_k_params(1.0, 4)), InvalidArgument);
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), top_k_params(1.0, 3)), InvalidArgument);  // one excluded
  TopKParams pf = top_k_params(1.0, 1);
  pf.per_pick.mechanism = Mechanism::permute_and_flip;
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), pf), InvalidArgument);
  TopKParams gpu = top_k_params(1.0, 1);
  gpu.per_pick.backend = Backend::Gpu;
  if (!gpu_usable()) {
    EXPECT_THROW(select_top_k(context, std::span<const double>(u), gpu), BackendUnavailable);
  } else {  // the GPU pass keeps at most kGpuTopKMaxK
    const std::vector<double> many(kGpuTopKMaxK + 1, 0.0);
    gpu.k = kGpuTopKMaxK + 1;
    EXPECT_THROW(select_top_k(context, std::span<const double>(many), gpu), InvalidArgument);
    gpu.k = 1;
  }
  TopKParams on_cpu = top_k_params(1.0, 1);
  on_cpu.per_pick.backend = Backend::Cpu;
  EXPECT_THROW(select_top_k(context, DeviceSpan<const double>{u.data(), u.size()}, on_cpu), InvalidArgument);
  EXPECT_THROW(select_top_k(context, DeviceSpan<const double>{nullptr, 3}, gpu), InvalidArgument);
  EXPECT_THROW(epsilon_from_zcdp(1.0, 0.0), InvalidArgument);
  // No valid candidate at all: the utility error, not a crash.
  const std::vector<double> nans = {NAN, NAN, NAN};
  EXPECT_THROW(select_top_k(context, std::span<const double>(nans), top_k_params(1.0, 2)), InvalidArgument);
  TopKParams bounded = top_k_params(1.0, 1);
  bounded.per_pick.utility_bound = 0.5;
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), bounded), InvalidArgument);
  EXPECT_DOUBLE_EQ(epsilon_from_zcdp(0.5, 1e-6), 0.5 + 2 * std::sqrt(0.5 * std::log(1e6)));
}

}  // namespace
}  // namespace dpselect::testing
