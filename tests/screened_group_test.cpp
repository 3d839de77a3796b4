// The CPU path's group screening (host/engine/screened_group.hpp) against score_group, the definition
// it must reproduce bit for bit: same best score and index, count, largest |utility| and first
// invalid utility, for every mechanism, both generators, partial groups and awkward utilities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/screened_group.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {
namespace {

constexpr Mechanism kMechanisms[] = {Mechanism::exponential, Mechanism::permute_and_flip,
                                     Mechanism::laplace_noisy_max};

TEST(ScreenBounds, ExactIsNoiseUpperBoundAndCoarseBoundsIt) {
  for (const Mechanism mechanism : kMechanisms) {
    const ScreenBounds bounds(mechanism);
    for (std::uint32_t screen = 0; screen < 65536; ++screen) {
      const double exact = noise_upper_bound(mechanism, screen);
      ASSERT_EQ(bounds.exact(screen), exact) << "screen " << screen;
      ASSERT_GE(bounds.coarse(screen >> 8), exact) << "screen " << screen;
      ASSERT_GE(bounds.largest(), exact) << "screen " << screen;
    }
  }
}

TEST(ScreenBounds, UnfusedCutImpliesTheFusedScreenTest) {
  // Near the cut, with magnitudes from tiny to huge: whenever the unfused sum is below the cut,
  // the fused value is below the threshold.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int i = 0; i < 200000; ++i) {
    const double magnitude = std::ldexp(1.0, static_cast<int>(rng() % 2000) - 1000);
    const double c = std::fabs(unit(rng)) + 0x1p-30;
    const double u = unit(rng) * magnitude;
    const double b = std::fabs(unit(rng)) * 89.0;
    const double sum = c * u + b;
    // A threshold just above the unfused sum, by a few ulps to a little more than the margin.
    const double threshold = sum + std::fabs(sum) * std::ldexp(unit(rng) + 1.0, -static_cast<int>(rng() % 50)) +
                             (rng() % 2 == 0 ? 0.0 : 0x1p-1000);
    const double cut = unfused_screen_cut(threshold, std::fabs(c * u), b);
    if (sum < cut) {
      ASSERT_LT(std::fma(c, u, b), threshold) << c << " " << u << " " << b << " " << threshold;
    }
  }
}

struct Case {
  std::vector<double> utilities;
  std::uint64_t begin;  // global index of utilities[0]
};

// score_group on every group of [begin, begin + size): the reference.
template <class Utility>
ShardResult reference(const NoiseSpec& spec, const GroupRange& groups, const Utility& utility) {
  ShardAccumulator accumulator;
  for (std::uint64_t g = groups.first_group(); g < groups.first_group() + groups.group_count(); ++g) {
    accumulator.add_group(spec, g, random_block(spec.key, spec.stream, g), groups.lane_begin(g), groups.lane_end(g),
                          utility);
  }
  return accumulator.result;
}

// Which code scores the groups: the dispatched one (AVX2 and FMA where the CPU has them), the
// x86-64 baseline (SSE2) or the portable loops, so all are checked on an AVX2 machine.
enum class Code { dispatched, baseline, portable };

template <class Utility>
ShardResult screened(Code code, const NoiseSpec& spec, const GroupRange& groups, const Utility& utility) {
  ShardAccumulator accumulator;
  const ScreenBounds bounds(spec.mechanism);
  SequentialBlocks blocks(spec.key, spec.stream);
  const std::uint64_t first = groups.first_group();
  const std::uint64_t last = first + groups.group_count();
  switch (code) {
    case Code::dispatched:
      score_groups(spec, bounds, groups, first, last, blocks, utility, accumulator.result, accumulator);
      break;
    case Code::baseline:
      score_groups_using<BaselineGroupMath>(spec, bounds, groups, first, last, blocks, utility, accumulator.result,
                                            accumulator);
      break;
    case Code::portable:
      score_groups_using<PortableGroupMath>(spec, bounds, groups, first, last, blocks, utility, accumulator.result,
                                            accumulator);
      break;
  }
  return accumulator.result;
}

void expect_same(const ShardResult& got, const ShardResult& want, const std::string& label) {
  EXPECT_EQ(double_bits(got.best_score), double_bits(want.best_score)) << label;
  EXPECT_EQ(got.best_index, want.best_index) << label;
  EXPECT_EQ(double_bits(got.max_abs_utility), double_bits(want.max_abs_utility)) << label;
  EXPECT_EQ(got.candidates, want.candidates) << label;
  EXPECT_EQ(got.first_invalid_index, want.first_invalid_index) << label;
  EXPECT_EQ(double_bits(got.first_invalid_value), double_bits(want.first_invalid_value)) << label;
}

std::vector<double> make_utilities(int kind, std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> u(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = unit(rng);
    switch (kind) {
      case 0: u[i] = 1000.0 * x; break;                       // spread: almost all screened
      case 1: u[i] = 1e-3 * (x - 0.5); break;                 // flat: the noise decides
      case 2: u[i] = std::floor(4.0 * x); break;              // many equal utilities
      case 3: u[i] = (i % 3 == 0) ? -0.0 : (i % 3 == 1 ? 0.0 : 1e-310 * x); break;  // zeros, subnormals
      case 4: u[i] = 1e300 * (x - 0.5); break;                // too large to scale: invalid
      default: {                                              // NaN, +-inf, beyond the limit, sprinkled
        const std::uint64_t pick = rng() % 64;
        u[i] = pick == 0   ? std::numeric_limits<double>::quiet_NaN()
               : pick == 1 ? std::numeric_limits<double>::infinity()
               : pick == 2 ? -std::numeric_limits<double>::infinity()
               : pick == 3 ? 5000.0
                           : 100.0 * x;
      }
    }
  }
  return u;
}

TEST(ScreenedGroups, EqualScoreGroupBitForBit) {
  std::mt19937_64 rng(11);
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const Mechanism mechanism : kMechanisms) {
      for (int kind = 0; kind < 6; ++kind) {
        for (const double scale : {0.5, 1e-3, 40.0}) {
          for (const std::uint64_t begin : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{8}, std::uint64_t{1} << 40}) {
            const std::size_t size = 1 + rng() % 3000;
            const std::vector<double> values = make_utilities(kind, size, rng);
            NoiseSpec spec{};
            spec.mechanism = mechanism;
            spec.score_scale = scale;
            spec.key = RandomKey::from_seed(rng(), generator);
            spec.stream = rng();
            spec.utility_limit = kind == 5 ? 1000.0 : kInfinity;
            const GroupRange groups{begin, begin + size};
            const auto utility = [&](std::uint64_t index) { return values[index - begin]; };
            const std::string label = "generator " + std::to_string(static_cast<int>(generator)) + " mechanism " +
                                      std::to_string(static_cast<int>(mechanism)) + " kind " + std::to_string(kind) +
                                      " scale " + std::to_string(scale) + " begin " + std::to_string(begin);
            const ShardResult want = reference(spec, groups, utility);
            for (const Code code : {Code::dispatched, Code::baseline, Code::portable}) {
              expect_same(screened(code, spec, groups, utility), want, label + " code " + std::to_string(static_cast<int>(code)));
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace dpselect::detail
