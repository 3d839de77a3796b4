// SPDX-License-Identifier: Apache-2.0
// Scores relative to a reference (SelectionParams::utility_reference): every mechanism here is
// invariant to adding one constant to all utilities, so a release computes its scores from
// u - r; these tests check that a constant offset then changes no selection, that the slack the
// report states follows the utilities' spread, and where the reference comes from.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/select.hpp"

namespace dpselect {
namespace {

constexpr Mechanism kMechanisms[] = {Mechanism::exponential, Mechanism::permute_and_flip,
                                     Mechanism::laplace_noisy_max};

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

// Multiples of 1/8 in [-8, 8]: exact after adding any offset up to 2^49 (10^15 < 2^50 has an ulp
// of 1/8), so u + offset - (u_0 + offset) = u - u_0 exactly.
std::vector<double> eighths(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> u(n);
  for (double& x : u) x = static_cast<double>(static_cast<int>(rng() % 129) - 64) / 8.0;
  return u;
}

SelectionParams params_of(Mechanism mechanism) {
  SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = 2.0;
  params.sensitivity = 1.0;
  params.backend = Backend::Cpu;
  return params;
}

// select() scores relative to the range's first utility, so u + offset is scored exactly as u:
// the same index and the same (data-dependent) slack, bit for bit, at offsets where scores formed
// from u + offset itself would round the noise (10^15: an ulp of 1/8, and a slack of 0.44).
TEST(UtilityReference, AConstantOffsetChangesNoSelection) {
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const Mechanism mechanism : kMechanisms) {
      for (const double offset : {1e6, 1e12, 1e15, -1e15}) {
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
          const std::vector<double> u = eighths(2000, seed);
          std::vector<double> shifted = u;
          for (double& x : shifted) x += offset;
          Context plain = Context::with_fixed_seed(seed, generator);
          Context offset_context = Context::with_fixed_seed(seed, generator);
          const Selection want = select(plain, std::span<const double>(u), params_of(mechanism));
          const Selection got = select(offset_context, std::span<const double>(shifted), params_of(mechanism));
          const std::string label = std::string(to_string(mechanism)) + " offset " + std::to_string(offset) +
                                    " seed " + std::to_string(seed);
          EXPECT_EQ(got.index, want.index) << label;
          EXPECT_EQ(bits(got.report.slack.epsilon), bits(want.report.slack.epsilon)) << label;
        }
      }
    }
  }
}

// The data-dependent slack follows the spread: utilities 10^15 + (2, 1, 0) at eps = 2 once gave
// a slack of 0.44 (their magnitude); around the first utility their spread is 2.
TEST(UtilityReference, SlackFollowsTheSpreadNotTheMagnitude) {
  const std::vector<double> u = {1e15 + 2.0, 1e15 + 1.0, 1e15};
  Context context = Context::with_fixed_seed(7);
  const Selection chosen = select(context, std::span<const double>(u), params_of(Mechanism::exponential));
  EXPECT_TRUE(chosen.report.slack.depends_on_data);
  EXPECT_LT(chosen.report.slack.epsilon, 1e-10);

  // A public reference with a bound on |u - r|: the slack is public and as small.
  SelectionParams params = params_of(Mechanism::exponential);
  params.utility_reference = 1e15;
  params.utility_bound = 4.0;
  const Selection public_slack = select(context, std::span<const double>(u), params);
  EXPECT_FALSE(public_slack.report.slack.depends_on_data);
  EXPECT_LT(public_slack.report.slack.epsilon, 1e-10);

  // A bound on |u| without a reference scores from r = 0: the slack is the magnitude's.
  params.utility_reference.reset();
  params.utility_bound = 1e15 + 2.0;
  const Selection absolute = select(context, std::span<const double>(u), params);
  EXPECT_FALSE(absolute.report.slack.depends_on_data);
  EXPECT_GT(absolute.report.slack.epsilon, 0.1);
}

// A given reference is used as it is: the scores of u with reference r are those of u - r with
// reference 0 whenever u - r is exact, bit for bit.
TEST(UtilityReference, AGivenReferenceIsUsed) {
  const std::vector<double> u = eighths(3000, 11);
  std::vector<double> lifted = u;
  for (double& x : lifted) x += 1e15;
  for (const Mechanism mechanism : kMechanisms) {
    SelectionParams given = params_of(mechanism);
    given.utility_reference = 1e15;
    Context a = Context::with_fixed_seed(3);
    Context b = Context::with_fixed_seed(3);
    Release ra = a.begin_release(params_of(mechanism));  // a Release of its own: r = 0
    Release rb = b.begin_release(given);
    const ShardResult want = ra.evaluate(std::span<const double>(u));
    const ShardResult got = rb.evaluate(std::span<const double>(lifted));
    EXPECT_EQ(bits(got.best_score), bits(want.best_score)) << to_string(mechanism);
    EXPECT_EQ(got.best_index, want.best_index) << to_string(mechanism);
    EXPECT_EQ(bits(got.max_abs_shifted_utility), bits(want.max_abs_shifted_utility)) << to_string(mechanism);
  }
}

// A Release the caller begins fixes its reference before any shard (the given one, or 0), so its
// shards give the one-pass result in any order, and select() with the same reference agrees.
TEST(UtilityReference, ShardsInAnyOrderGiveTheOnePassResult) {
  std::vector<float> u(5000);
  std::mt19937_64 rng(5);
  for (float& x : u) x = 3e6f + static_cast<float>(rng() % 4096) * 0.25f;
  for (const Mechanism mechanism : kMechanisms) {
    SelectionParams params = params_of(mechanism);
    params.utility_reference = 3e6;
    Context one = Context::with_fixed_seed(9);
    Context sharded = Context::with_fixed_seed(9);
    Context selected = Context::with_fixed_seed(9);
    Release whole = one.begin_release(params);
    const ShardResult want = whole.evaluate(std::span<const float>(u));
    Release parts = sharded.begin_release(params);
    ShardResult got = parts.evaluate(std::span<const float>(u.data() + 1234, u.size() - 1234), 1234);
    got = merge(got, parts.evaluate(std::span<const float>(u.data(), 1234), 0));
    EXPECT_EQ(bits(got.best_score), bits(want.best_score)) << to_string(mechanism);
    EXPECT_EQ(got.best_index, want.best_index) << to_string(mechanism);
    const std::uint64_t index = whole.finish(want).index;
    EXPECT_EQ(parts.finish(got).index, index) << to_string(mechanism);
    EXPECT_EQ(select(selected, std::span<const float>(u), params).index, index) << to_string(mechanism);
  }
}

// A first utility that is not finite leaves select()'s reference at 0: the plain scores.
TEST(UtilityReference, AnExcludedFirstCandidateLeavesTheReferenceAtZero) {
  const std::vector<double> u = {-INFINITY, 1e15 + 1.5, 1e15 - 2.0, 1e15 + 0.25};
  SelectionParams zero = params_of(Mechanism::exponential);
  zero.utility_reference = 0.0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    Context a = Context::with_fixed_seed(seed);
    Context b = Context::with_fixed_seed(seed);
    EXPECT_EQ(select(a, std::span<const double>(u), params_of(Mechanism::exponential)).index,
              select(b, std::span<const double>(u), zero).index)
        << seed;
  }
}

}  // namespace
}  // namespace dpselect
