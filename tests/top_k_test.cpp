// SPDX-License-Identifier: Apache-2.0
// One-shot Gumbel top-k: the distribution of ordered picks equals k rounds of peeling EM
// (Durfee & Rogers 2019), top-1 is the single-pick EM, screening never changes the answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/dpselect.hpp"
#include "support/frequencies.hpp"

namespace dpselect::testing {
namespace {

// epsilon: the release's, the k picks together (each epsilon / k).
TopKParams top_k_params(double epsilon, std::uint64_t k) {
  TopKParams params;
  params.selection.epsilon = epsilon;
  params.selection.sensitivity = 1.0;
  params.selection.backend = Backend::Cpu;
  params.k = k;
  return params;
}

TEST(TopK, OrderedPairsMatchPeelingExponentialMechanism) {
  constexpr int kTrials = 20'000;
  const std::vector<double> u = {0.0, 1.0, 2.0, 0.5};
  const double scale = 1.2 / 2.0;  // eps' / (2 Delta), eps' = 2.4 / 2 a pick
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
    const TopKSelection top = select_top_k(context, std::span<const double>(u), top_k_params(2.4, 2));
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
              select(b, std::span<const float>(u), params.selection).index);
  }
}

TEST(TopK, ScreeningNeverChangesTheAnswer) {
  std::vector<double> u(100'003);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = (i % 7 == 0) ? 3.0 : std::cos(0.001 * i);  // many ties
  for (const std::uint64_t k : {std::uint64_t{1}, std::uint64_t{10}, std::uint64_t{1024}, std::uint64_t{5000}}) {
    const Generator generator = k % 2 == 0 ? Generator::chacha20 : Generator::philox;
    Context context = Context::with_fixed_seed(k, generator);
    const TopKSelection top = select_top_k(context, std::span<const double>(u), top_k_params(4.0 * k, k));
    // Score scale 2: 4 a pick / (2 Delta).
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
  pf.selection.mechanism = Mechanism::permute_and_flip;
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), pf), InvalidArgument);
  TopKParams gpu = top_k_params(1.0, 1);
  gpu.selection.backend = Backend::Gpu;
  if (!gpu_usable()) {
    EXPECT_THROW(select_top_k(context, std::span<const double>(u), gpu), BackendUnavailable);
  } else {  // the GPU pass keeps at most kGpuTopKMaxK
    const std::vector<double> many(kGpuTopKMaxK + 1, 0.0);
    gpu.k = kGpuTopKMaxK + 1;
    EXPECT_THROW(select_top_k(context, std::span<const double>(many), gpu), InvalidArgument);
    gpu.k = 1;
  }
  TopKParams on_cpu = top_k_params(1.0, 1);
  on_cpu.selection.backend = Backend::Cpu;
  EXPECT_THROW(select_top_k(context, DeviceSpan<const double>{u.data(), u.size()}, on_cpu), InvalidArgument);
  EXPECT_THROW(select_top_k(context, DeviceSpan<const double>{nullptr, 3}, gpu), InvalidArgument);
  EXPECT_THROW(epsilon_from_zcdp(1.0, 0.0), InvalidArgument);
  // No valid candidate at all: the utility error, not a crash.
  const std::vector<double> nans = {NAN, NAN, NAN};
  EXPECT_THROW(select_top_k(context, std::span<const double>(nans), top_k_params(1.0, 2)), InvalidArgument);
  TopKParams bounded = top_k_params(1.0, 1);
  bounded.selection.utility_bound = 0.5;
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), bounded), InvalidArgument);
  EXPECT_DOUBLE_EQ(epsilon_from_zcdp(0.5, 1e-6), 0.5 + 2 * std::sqrt(0.5 * std::log(1e6)));
}

TEST(TopK, EpsilonIsWhatTheKPicksSpendTogether) {
  std::vector<double> u(100);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<double>(i % 17);
  {
    auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{1.0, 0.0});
    Context context = Context::with_fixed_seed(3);
    context.charge_to(accountant);
    const TopKSelection top = select_top_k(context, std::span<const double>(u), top_k_params(1.0, 10));
    EXPECT_EQ(top.report.per_pick.epsilon_spent, 0.1);
    EXPECT_EQ(top.report.epsilon_total_basic, 1.0);
    EXPECT_EQ(accountant->release_count(), 10u);
    EXPECT_EQ(accountant->spent().epsilon, 1.0);  // the whole budget, exactly: no eleventh pick fits
    EXPECT_THROW(select_top_k(context, std::span<const double>(u), top_k_params(1e-9, 1)), BudgetExceeded);
  }
  // epsilon / k is rounded down where k times it would exceed epsilon: never more than asked.
  for (const std::uint64_t k : {3u, 7u, 11u, 49u, 97u}) {
    for (const double epsilon : {0.7, 1.0, 0.3, 2.9}) {
      Context context = Context::with_fixed_seed(k);
      const TopKSelection top = select_top_k(context, std::span<const double>(u), top_k_params(epsilon, k));
      EXPECT_LE(static_cast<double>(k) * top.report.per_pick.epsilon_spent, epsilon) << "k " << k;
      EXPECT_EQ(top.report.epsilon_total_basic, static_cast<double>(k) * top.report.per_pick.epsilon_spent);
      EXPECT_GE(top.report.per_pick.epsilon_spent, std::nextafter(epsilon / static_cast<double>(k), 0.0));
    }
  }
  // An epsilon / k below the normal doubles is refused before anything is charged.
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{1.0, 0.0});
  Context context = Context::with_fixed_seed(4);
  context.charge_to(accountant);
  EXPECT_THROW(select_top_k(context, std::span<const double>(u), top_k_params(1e-307, 100)), InvalidArgument);
  EXPECT_EQ(accountant->release_count(), 0u);
}

// n utilities with ties and excluded candidates, so that the k-th best is contested.
std::vector<float> sharded_top_k_utilities(std::size_t n) {
  std::vector<float> u(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<float>((i * 7919) % 1013) / 64.0f;
  for (std::size_t i = 0; i < n; i += 97) u[i] = -std::numeric_limits<float>::infinity();
  return u;
}

TEST(TopKSharded, ShardsThroughTicketsFinishToTheOneProcessIndices) {
  constexpr std::size_t n = 20'011;
  const std::vector<float> u = sharded_top_k_utilities(n);
  for (Generator generator : {Generator::chacha20, Generator::philox}) {
    for (std::uint64_t k : {1u, 16u, 700u}) {
      Context one_process = Context::with_fixed_seed(21, generator);
      const TopKSelection expected = select_top_k(one_process, std::span<const float>(u), top_k_params(0.3, k));
      Context driver = Context::with_fixed_seed(21, generator);
      TopKRelease release = begin_top_k_release(driver, top_k_params(0.3, k), {0, n});
      const TopKTicket ticket = release.ticket();
      const TopKTicket worker = TopKTicket::from_bytes(ticket.to_bytes());
      const std::span<const float> all(u);
      const TopKShardResult c = worker.evaluate(all.subspan(9000), 9000);
      const TopKShardResult a = ticket.evaluate(all.subspan(0, 1234), 0);
      const TopKShardResult b = worker.evaluate(all.subspan(1234, 9000 - 1234), 1234);
      const TopKSelection got = release.finish(merge(c, merge(b, a)));
      EXPECT_EQ(got.indices, expected.indices) << "k " << k;
      EXPECT_EQ(got.report.per_pick.stream, expected.report.per_pick.stream);
      EXPECT_EQ(got.report.per_pick.slack.epsilon, expected.report.per_pick.slack.epsilon);
      EXPECT_EQ(got.report.epsilon_total_basic, expected.report.epsilon_total_basic);
      EXPECT_EQ(got.report.rho, expected.report.rho);
    }
  }
}

TEST(TopKChunked, ChunksReleaseTheWholeArraysIndices) {
  constexpr std::size_t n = 20'011;
  const std::vector<float> u = sharded_top_k_utilities(n);
  for (Generator generator : {Generator::chacha20, Generator::philox}) {
    for (std::uint64_t k : {1u, 16u, 700u}) {
      for (std::uint64_t chunk_size : {1u, 999u, 4096u, 30'000u}) {
        TopKParams params = top_k_params(0.3, k);
        params.selection.backend = Backend::Cpu;
        Context whole = Context::with_fixed_seed(21, generator);
        const TopKSelection expected = select_top_k(whole, std::span<const float>(u), params);
        Context chunks = Context::with_fixed_seed(21, generator);
        std::uint64_t next = 0;
        const ChunkedValues<float> reader{n,
                                             [&](std::uint64_t first, std::span<float> out) {
                                               EXPECT_EQ(first, next);
                                               EXPECT_LE(out.size(), chunk_size);
                                               next = first + out.size();
                                               std::copy_n(u.begin() + static_cast<std::ptrdiff_t>(first), out.size(),
                                                           out.begin());
                                             },
                                             chunk_size};
        params.selection.backend = Backend::Auto;
        const TopKSelection got = select_top_k(chunks, reader, params);
        EXPECT_EQ(got.indices, expected.indices) << "k " << k << ", chunks of " << chunk_size;
        EXPECT_EQ(next, n);
        EXPECT_EQ(got.report.per_pick.stream, expected.report.per_pick.stream);
        EXPECT_EQ(got.report.per_pick.slack.epsilon, expected.report.per_pick.slack.epsilon);
        EXPECT_EQ(got.report.rho, expected.report.rho);
      }
    }
  }
}

TEST(TopKChunked, BadInputIsRefusedBeforeTheCharge) {
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{10.0, 0.0});
  Context context = Context::with_fixed_seed(2);
  context.charge_to(accountant);
  const std::vector<double> u(10, 1.0);
  const auto copy = [&u](std::uint64_t first, std::span<double> out) {
    std::copy_n(u.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
  };
  EXPECT_THROW(select_top_k(context, ChunkedValues<double>{10, copy, 4}, top_k_params(0.5, 11)), InvalidArgument);
  EXPECT_THROW(select_top_k(context, ChunkedValues<double>{0, copy, 4}, top_k_params(0.5, 1)), InvalidArgument);
  EXPECT_THROW(select_top_k(context, ChunkedValues<double>{10, nullptr, 4}, top_k_params(0.5, 1)), InvalidArgument);
  EXPECT_THROW(select_top_k(context, ChunkedValues<double>{10, copy, 0}, top_k_params(0.5, 1)), InvalidArgument);
  TopKParams gpu = top_k_params(0.5, 1);
  gpu.selection.backend = Backend::Gpu;
  EXPECT_THROW(select_top_k(context, ChunkedValues<double>{10, copy, 4}, gpu), InvalidArgument);
  EXPECT_EQ(accountant->release_count(), 0u);
  EXPECT_EQ(select_top_k(context, ChunkedValues<double>{10, copy, 4}, top_k_params(0.5, 3)).indices.size(), 3u);
  EXPECT_EQ(accountant->release_count(), 3u);
}

TEST(TopKSharded, FinishRefusesAShardMissingOrTwiceAndAnotherK) {
  const std::vector<float> u = sharded_top_k_utilities(300);
  const std::span<const float> all(u);
  Context context = Context::with_fixed_seed(2);
  {
    TopKRelease release = begin_top_k_release(context, top_k_params(0.5, 5), {0, 300});
    const TopKTicket ticket = release.ticket();
    const TopKShardResult a = ticket.evaluate(all.subspan(0, 150), 0);
    EXPECT_THROW(release.finish(merge(a, a)), UsageError);  // as many candidates, not each once
  }
  {
    TopKRelease release = begin_top_k_release(context, top_k_params(0.5, 5), {0, 300});
    EXPECT_THROW(release.finish(release.ticket().evaluate(all.subspan(0, 299), 0)), UsageError);
  }
  {
    TopKRelease release = begin_top_k_release(context, top_k_params(0.5, 5), {0, 300});
    TopKShardResult whole = release.ticket().evaluate(all, 0);
    whole.k = 6;
    EXPECT_THROW(release.finish(whole), UsageError);
    whole.k = 5;
    EXPECT_EQ(release.finish(whole).indices.size(), 5u);  // the refusal of another k spent nothing
  }
}

TEST(TopKSharded, BadInputIsRefusedBeforeTheCharge) {
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{10.0, 0.0});
  Context context = Context::with_fixed_seed(2);
  context.charge_to(accountant);
  EXPECT_THROW(begin_top_k_release(context, top_k_params(0.5, 0), {0, 10}), InvalidArgument);
  EXPECT_THROW(begin_top_k_release(context, top_k_params(0.5, 11), {0, 10}), InvalidArgument);
  EXPECT_THROW(begin_top_k_release(context, top_k_params(0.5, 1), {5, 5}), InvalidArgument);
  EXPECT_THROW(begin_top_k_release(context, top_k_params(-1.0, 1), {0, 10}), InvalidArgument);
  TopKParams laplace = top_k_params(0.5, 1);
  laplace.selection.mechanism = Mechanism::laplace_noisy_max;
  EXPECT_THROW(begin_top_k_release(context, laplace, {0, 10}), InvalidArgument);
  TopKParams gpu = top_k_params(0.5, 1);
  gpu.selection.backend = Backend::Gpu;
  EXPECT_THROW(begin_top_k_release(context, gpu, {0, 10}), InvalidArgument);
  EXPECT_EQ(accountant->release_count(), 0u);
  TopKRelease release = begin_top_k_release(context, top_k_params(0.5, 3), {0, 10});
  EXPECT_EQ(accountant->release_count(), 3u);  // the k picks, once
  EXPECT_EQ(release.stream(), 0u);              // nothing refused drew a stream
  std::vector<std::uint8_t> bytes = release.ticket().to_bytes();
  EXPECT_THROW(TopKTicket::from_bytes(std::span<const std::uint8_t>(bytes).first(7)), InvalidArgument);
  bytes[bytes.size() - 16] = 11;  // k = 11 > the range's 10 candidates: refused by the bytes' tag first
  EXPECT_THROW(TopKTicket::from_bytes(bytes), InvalidArgument);
}

}  // namespace
}  // namespace dpselect::testing
