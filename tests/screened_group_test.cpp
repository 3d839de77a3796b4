// SPDX-License-Identifier: Apache-2.0
// The CPU path's group-maximum screening (host/selection/screened_group.hpp) against the definitions
// it must reproduce: score_group (screened_scoring.hpp) group by group, bit for bit, and a
// brute-force arg-max of noisy_score over every candidate, which screens nothing. Both must agree
// for every mechanism, both generators, float and double data, partial groups, shard boundaries
// inside groups, indices above 2^32 and awkward utilities; and the screen's noise bound must
// hold for every bound slot, including the bit patterns at the slots' edges.
//
// Everything here is deterministic (fixed seeds, exact comparisons): no statistical thresholds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "selection/screened_group.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {
namespace {

constexpr Mechanism kMechanisms[] = {Mechanism::exponential, Mechanism::permute_and_flip,
                                     Mechanism::laplace_noisy_max};

// --- The screen's bound ---------------------------------------------------------------------

TEST(ScreenBounds, TableEqualsGroupNoiseUpperBoundForEveryScreen) {
  // The table is indexed by bound slot only; a bound that depended on other screen bits (the
  // sign; X's low 6 bits outside the upper half's bucket 0) would differ somewhere in here, and
  // so would a per-process table handed out for the wrong mechanism.
  for (const Mechanism mechanism : kMechanisms) {
    const ScreenBounds& bounds = screen_bounds(mechanism);
    for (std::uint32_t screen = 0; screen < 65536; ++screen) {
      ASSERT_EQ(double_bits(bounds.of(screen)), double_bits(group_noise_upper_bound(mechanism, screen)))
          << "mechanism " << static_cast<int>(mechanism) << " screen " << screen;
    }
  }
}

// The leader's noise exactly as group_race and score_scanned_group compute it.
double leader_noise(Mechanism mechanism, std::uint32_t screen, const RandomBlock& race_block) {
  return race_noise(mechanism, race_leader(noise::exponential(race_bits(screen, race_block))));
}

// The screens of bound slot `slot` with sign `sign`: the slot's own screen, or any of the 64
// screens of its bucket (X's low 6 bits `low_six`) where the slot is a whole bucket.
std::uint32_t screen_in_slot(std::uint32_t slot, std::uint32_t sign, std::uint32_t low_six) {
  const std::uint32_t screen = screen_of_bound_slot(slot);
  return (sign << 15) | (slot >= kScreenBuckets ? screen : screen | low_six);
}

// The race blocks that give a slot's smallest (zeros) and largest (ones) v.
constexpr RandomBlock zeros{{0u, 0u, 0u, 0u}};
constexpr RandomBlock ones{{~0u, ~0u, ~0u, ~0u}};

// Slot 256 is the one no screen has: its bucket's screens have slots 512 .. 575.
bool slot_in_use(std::uint32_t slot) { return slot != kUnboundedBucket; }

TEST(ScreenBounds, SlotsAndTheirScreensAgree) {
  for (std::uint32_t slot = 0; slot < kScreenBoundSlots; ++slot) {
    if (!slot_in_use(slot)) continue;
    for (std::uint32_t low_six = 0; low_six < 64; ++low_six) {
      ASSERT_EQ(screen_bound_slot(screen_in_slot(slot, low_six & 1u, low_six)), slot) << slot;
    }
  }
}

TEST(ScreenBounds, BoundHoldsForEverySlotAndRaceBlock) {
  // Random race blocks for the bulk of each slot, and the two extreme blocks, which with X's
  // low screen bits all 0 (all 1) give the smallest (largest) v a slot allows: where its
  // leader's noise is largest in the upper (lower) half, so where a bound that is too tight
  // fails first.
  std::mt19937_64 rng(101);
  for (const Mechanism mechanism : kMechanisms) {
    for (std::uint32_t slot = 0; slot < kScreenBoundSlots; ++slot) {
      if (!slot_in_use(slot)) continue;
      const double bound = group_noise_upper_bound(mechanism, screen_of_bound_slot(slot));
      for (int trial = 0; trial < 256; ++trial) {
        const std::uint32_t screen = screen_in_slot(slot, static_cast<std::uint32_t>(rng() & 1u),
                                                    static_cast<std::uint32_t>(rng() & 63u));
        RandomBlock race_block;
        if (trial < 8) {
          race_block = (trial & 1) != 0 ? ones : zeros;
        } else {
          const std::uint64_t a = rng();
          const std::uint64_t b = rng();
          race_block = RandomBlock{{static_cast<std::uint32_t>(a >> 32), static_cast<std::uint32_t>(a),
                                    static_cast<std::uint32_t>(b >> 32), static_cast<std::uint32_t>(b)}};
        }
        ASSERT_LE(leader_noise(mechanism, screen, race_block), bound)
            << "mechanism " << static_cast<int>(mechanism) << " slot " << slot << " screen " << screen;
      }
      for (const std::uint32_t sign : {0u, 1u}) {
        ASSERT_LE(leader_noise(mechanism, screen_in_slot(slot, sign, 0), zeros), bound) << slot;
        ASSERT_LE(leader_noise(mechanism, screen_in_slot(slot, sign, 63), ones), bound) << slot;
      }
    }
  }
}

TEST(ScreenBounds, BoundIsTightAtTheSlotEdges) {
  // A valid bound could still be useless (say, kMaxAbsRaceNoise everywhere, or the neighbouring
  // slot's edge): then screening would stay exact but skip nothing. At the edge of each slot
  // the bound must be within a few margins of the largest noise found there. Only the upper
  // half's screens with X's top 14 bits all 0 (v down to 0) have no bound: 2^-15 of the groups.
  for (const Mechanism mechanism : kMechanisms) {
    for (std::uint32_t slot = 0; slot < kScreenBoundSlots; ++slot) {
      if (!slot_in_use(slot)) continue;
      const double bound = group_noise_upper_bound(mechanism, screen_of_bound_slot(slot));
      if (slot == kScreenBuckets) {
        EXPECT_EQ(bound, kInfinity);
        continue;
      }
      ASSERT_TRUE(std::isfinite(bound)) << slot;
      const bool upper = slot >= kUnboundedBucket;
      const double edge = upper ? leader_noise(mechanism, screen_in_slot(slot, 0, 0), zeros)
                                : leader_noise(mechanism, screen_in_slot(slot, 0, 63), ones);
      EXPECT_LE(bound - edge, 4 * kScreenMargin)
          << "mechanism " << static_cast<int>(mechanism) << " slot " << slot;
    }
  }
}

// --- Screened scoring against its definitions -----------------------------------------------

// Counts the race and candidate blocks a pass draws, so the tests can show that the screen did
// skip groups (an equality that held only because nothing was skipped would prove little).
struct CountingBlocks {
  static inline std::uint64_t calls = 0;
  static RandomBlock at(const RandomKey& key, std::uint64_t stream, std::uint64_t position) {
    ++calls;
    return random_block(key, stream, position);
  }
};

template <class T>
struct Case {
  NoiseSpec spec;
  std::vector<T> values;
  std::uint64_t begin;  // global index of values[0]
  std::uint64_t end() const { return begin + values.size(); }
  double utility(std::uint64_t index) const { return static_cast<double>(values[index - begin]); }
};

// score_group on every group of [begin, end): the definition of a pass.
template <class T>
ShardResult reference(const Case<T>& c, std::uint64_t begin, std::uint64_t end) {
  const GroupRange groups{begin, end};
  const auto utility = [&c](std::uint64_t index) { return c.utility(index); };
  ShardAccumulator accumulator;
  for (std::uint64_t g = groups.first_group(); g < groups.first_group() + groups.group_count(); ++g) {
    score_group(c.spec, g, group_screen(c.spec, g), groups.lanes(g), utility, accumulator.result, accumulator);
  }
  return accumulator.result;
}

// Every candidate's noise drawn in full, no screen at all: the arg-max of noisy_score over the
// candidates with a valid utility, ties to the smallest index; with none, the smallest index of
// an excluded (-inf) candidate at -inf, as the passes offer those while nothing else is kept.
template <class T>
ShardResult brute_force(const Case<T>& c) {
  ShardResult r;
  std::uint64_t first_excluded = kNoIndex;
  for (std::uint64_t index = c.begin; index < c.end(); ++index) {
    const double u = c.utility(index);
    ++r.candidates;
    if (std::isnan(u) || u == kInfinity) {
      record_invalid(r, index, u);
      continue;
    }
    if (u == -kInfinity) {
      first_excluded = std::min(first_excluded, index);
      continue;
    }
    const double shifted = u - c.spec.utility_reference;  // one rounding, as every pass shifts
    r.max_abs_shifted_utility = std::max(r.max_abs_shifted_utility, std::fabs(shifted));
    if (!(std::fabs(c.spec.score_scale * shifted) <= kLargestScaledUtility) ||
        !(std::fabs(shifted) <= c.spec.utility_limit)) {
      record_invalid(r, index, u);
      continue;
    }
    const double score = noisy_score(c.spec, index, u);
    if (score > r.best_score || (score == r.best_score && index < r.best_index)) {
      r.best_score = score;
      r.best_index = index;
    }
  }
  if (r.best_index == kNoIndex) r.best_index = first_excluded;
  return r;
}

// Which summary code scores the whole groups: score_groups' own choice (the x86-64 baseline),
// the SSE2 forms named explicitly, or the portable loops.
enum class Code { dispatched, baseline, portable };

// The screened pass over [begin, end) of the case, driven as parallel_groups drives it: runs of
// `chunk_groups` groups, each with a fresh SequentialBlocks, into one accumulator.
template <class T>
ShardResult screened(Code code, const Case<T>& c, std::uint64_t begin, std::uint64_t end, std::uint64_t chunk_groups) {
  const GroupRange groups{begin, end};
  const ScreenBounds bounds(c.spec.mechanism);
  const T* data = c.values.data() + (begin - c.begin);
  ShardAccumulator accumulator;
  const std::uint64_t stop = groups.first_group() + groups.group_count();
  for (std::uint64_t first = groups.first_group(); first < stop; first += chunk_groups) {
    const std::uint64_t last = std::min(stop, first + chunk_groups);
    SequentialBlocks screen_blocks(c.spec.key, c.spec.stream);
    switch (code) {
      case Code::dispatched:
        score_groups(c.spec, bounds, groups, first, last, screen_blocks, data, begin, accumulator.result, accumulator);
        break;
      case Code::baseline:
        score_groups_using<BaselineGroupMath>(c.spec, bounds, groups, first, last, screen_blocks, data, begin,
                                              accumulator.result, accumulator);
        break;
      case Code::portable:
        score_groups_using<PortableGroupMath, CountingBlocks>(c.spec, bounds, groups, first, last, screen_blocks,
                                                              data, begin, accumulator.result, accumulator);
        break;
    }
  }
  return accumulator.result;
}

void expect_same(const ShardResult& got, const ShardResult& want, const std::string& label) {
  EXPECT_EQ(double_bits(got.best_score), double_bits(want.best_score)) << label;
  EXPECT_EQ(got.best_index, want.best_index) << label;
  EXPECT_EQ(double_bits(got.max_abs_shifted_utility), double_bits(want.max_abs_shifted_utility)) << label;
  EXPECT_EQ(got.candidates, want.candidates) << label;
  EXPECT_EQ(got.first_invalid_index, want.first_invalid_index) << label;
  EXPECT_EQ(double_bits(got.first_invalid_value), double_bits(want.first_invalid_value)) << label;
}

enum Kind : int { spread, flat, many_equal, zeros_subnormals, too_large, sprinkled, tied_scores, kKinds };
const char* const kKindNames[] = {"spread", "flat", "many_equal", "zeros_subnormals", "too_large", "sprinkled",
                                  "tied_scores"};

// Scales that each kind is run at: too_large also at 2^880, where a float can be too large to
// scale (2^126 * 2^880 > kLargestScaledUtility) while ordinary ones are not.
std::vector<double> scales_for(int kind) {
  std::vector<double> scales{0.5, 1e-3, 40.0};
  if (kind == too_large) scales.push_back(0x1p880);
  return scales;
}

template <class T>
std::vector<T> make_utilities(int kind, std::size_t n, std::mt19937_64& rng) {
  constexpr bool is_float = sizeof(T) == sizeof(float);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> u(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = unit(rng);
    double value = 0.0;
    switch (kind) {
      case spread: value = 1000.0 * (x - 0.3); break;  // the largest magnitude often negative
      case flat: value = 1e-3 * (x - 0.5); break;      // the noise decides
      case many_equal: value = std::floor(4.0 * x); break;
      case zeros_subnormals:  // runs of 64 signed zeros (whole groups of them), then subnormals too
        value = ((i / 64) % 2 == 0 || i % 3 != 2) ? (rng() % 2 == 0 ? -0.0 : 0.0)
                                                   : (is_float ? 1e-40 : 1e-310) * (x - 0.25);
        break;
      case too_large:  // a few per group beyond 2^1000 once scaled (at scale 2^880 for floats)
        value = rng() % 16 == 0 ? (is_float ? 3e38 : 1e305) * (x - 0.5) : 100.0 * x;
        break;
      case sprinkled: {  // NaN, +-inf and beyond the utility limit (1000), one in 16 of each
        const std::uint64_t pick = rng() % 64;
        value = pick == 0   ? std::numeric_limits<double>::quiet_NaN()
                : pick == 1 ? std::numeric_limits<double>::infinity()
                : pick == 2 ? -std::numeric_limits<double>::infinity()
                : pick == 3 ? (x < 0.5 ? 5000.0 : -5000.0)
                            : 100.0 * x;
        break;
      }
      default:  // tied_scores: 2^70 is so large that every score rounds to it: ties by index only
        value = 0x1p70;
        break;
    }
    u[i] = static_cast<T>(value);
  }
  // A few -inf (excluded) in a sprinkled case of only excluded and invalid candidates.
  if (kind == sprinkled && n < 40) {
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = static_cast<T>(i % 2 == 0 ? -std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::quiet_NaN());
    }
  }
  return u;
}

// Begins that cut groups at every kind of place, and ones above 2^32 (the index no longer fits
// 32 bits; the race and candidate positions use the high words).
const std::uint64_t kBegins[] = {0,
                                 3,
                                 31,
                                 32,
                                 33,
                                 (std::uint64_t{1} << 32) - 37,
                                 (std::uint64_t{1} << 32) + 17,
                                 (std::uint64_t{1} << 40) + 5};

template <class T>
void check_screened_equals_definitions(std::uint64_t seed, const char* type_name) {
  std::mt19937_64 rng(seed);
  std::uint64_t portable_blocks_spread = 0;
  std::uint64_t candidates_spread = 0;
  std::uint64_t brute_force_cases = 0;
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const Mechanism mechanism : kMechanisms) {
      for (int kind = 0; kind < kKinds; ++kind) {
        for (const double scale : scales_for(kind)) {
          for (const std::uint64_t begin : kBegins) {
            // Mostly a few hundred groups, sometimes under one.
            const std::size_t size = rng() % 8 == 0 ? 1 + rng() % 40 : 1 + rng() % 6000;
            Case<T> c;
            c.values = make_utilities<T>(kind, size, rng);
            c.begin = begin;
            c.spec.mechanism = mechanism;
            c.spec.score_scale = scale;
            c.spec.key = RandomKey::from_seed(rng(), generator);
            c.spec.stream = rng();
            c.spec.utility_limit = kind == sprinkled ? 1000.0 : kInfinity;
            // Half the cases score relative to a reference: one of the utilities (when finite), so
            // groups straddle it, as a release's reference from its first utility does.
            if (rng() % 2 == 0) {
              const double candidate = static_cast<double>(c.values[rng() % size]);
              c.spec.utility_reference = std::isfinite(candidate) ? candidate : 37.25;
            }
            const std::string label = std::string(type_name) + " generator " + std::to_string(static_cast<int>(generator)) +
                                      " mechanism " + std::to_string(static_cast<int>(mechanism)) + " kind " +
                                      kKindNames[kind] + " scale " + std::to_string(scale) + " reference " +
                                      std::to_string(c.spec.utility_reference) + " begin " +
                                      std::to_string(begin) + " size " + std::to_string(size);
            const std::uint64_t end = c.end();
            const ShardResult want = reference(c, begin, end);

            const std::uint64_t chunk = 1 + rng() % 64;
            const std::uint64_t blocks_before = CountingBlocks::calls;
            for (const Code code : {Code::dispatched, Code::baseline, Code::portable}) {
              expect_same(screened(code, c, begin, end, chunk), want, label + " code " + std::to_string(static_cast<int>(code)));
            }
            if (kind == spread) {
              portable_blocks_spread += CountingBlocks::calls - blocks_before;
              candidates_spread += size;
            }

            // Two shards split inside a group, merged either way round.
            if (size >= 2) {
              std::uint64_t m = begin + 1 + rng() % (size - 1);
              if (m % kCandidatesPerGroup == 0 && m + 1 < end) ++m;
              const ShardResult left = screened(Code::dispatched, c, begin, m, chunk);
              const ShardResult right = screened(Code::dispatched, c, m, end, chunk);
              expect_same(merge(left, right), want, label + " split at " + std::to_string(m));
              expect_same(merge(right, left), want, label + " split at " + std::to_string(m) + " reversed");
            }
            // Several shards at random cuts (some inside groups, some at their edges).
            if (size >= 8) {
              std::vector<std::uint64_t> cuts{begin, end};
              for (int k = 0; k < 4; ++k) cuts.push_back(begin + 1 + rng() % (size - 1));
              std::sort(cuts.begin(), cuts.end());
              cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
              ShardResult total;
              for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
                total = merge(total, screened(Code::portable, c, cuts[k], cuts[k + 1], 1 + rng() % 16));
              }
              expect_same(total, want, label + " several shards");
            }

            // The unscreened definition, for the cases of one scale (each candidate draws up to
            // three generator blocks here).
            if (scale == 0.5 || kind == tied_scores) {
              expect_same(want, brute_force(c), label + " brute force");
              ++brute_force_cases;
            }
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
  EXPECT_GT(brute_force_cases, 100u);
  // With utilities spread over 1000 / scale noise units nearly every group is screened out; if
  // the screen skipped nothing, the portable pass would draw a race block per group and a
  // candidate block per follower, more than 1 per candidate.
  EXPECT_LT(static_cast<double>(portable_blocks_spread), 0.05 * static_cast<double>(candidates_spread))
      << portable_blocks_spread << " blocks for " << candidates_spread << " candidates";
}

TEST(ScreenedGroups, DoubleDataEqualsScoreGroupAndBruteForce) {
  check_screened_equals_definitions<double>(11, "double");
}

TEST(ScreenedGroups, FloatDataEqualsScoreGroupAndBruteForce) {
  check_screened_equals_definitions<float>(12, "float");
}

// Utilities that rise from group to group, where a threshold built in scan order is beaten by
// every group: the pass must still equal its definitions, and race about one group per chunk
// (the chunk's widest raises the threshold above the rest), not every group.
template <class T>
void check_rising_utilities(double step, const char* type_name) {
  std::mt19937_64 rng(step < 1.0 ? 21 : 22);
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const Mechanism mechanism : kMechanisms) {
      Case<T> c;
      c.begin = 5 * kCandidatesPerGroup;
      const std::size_t size = 4 * kChunkScanGroups * kCandidatesPerGroup;
      for (std::size_t i = 0; i < size; ++i) c.values.push_back(static_cast<T>(step * static_cast<double>(i)));
      c.spec.mechanism = mechanism;
      c.spec.score_scale = 0.5;
      c.spec.key = RandomKey::from_seed(rng(), generator);
      c.spec.utility_limit = kInfinity;
      // A stream where a group in the middle of the first chunk has a screen without a noise
      // bound (2^-15 of the groups; about one stream in 250): raced first for its infinite
      // reach, it must not leave the groups above it to be raced one by one.
      const std::uint64_t first_group = c.begin / kCandidatesPerGroup;
      for (c.spec.stream = rng();; ++c.spec.stream) {
        bool unbounded = false;
        for (std::uint64_t g = first_group + 64; g < first_group + 192 && !unbounded; ++g) {
          unbounded = group_noise_upper_bound(mechanism, group_screen(c.spec, g)) == kInfinity;
        }
        if (unbounded) break;
      }
      const std::string label = std::string(type_name) + " step " + std::to_string(step) + " generator " +
                                std::to_string(static_cast<int>(generator)) + " mechanism " +
                                std::to_string(static_cast<int>(mechanism));
      const ShardResult want = reference(c, c.begin, c.end());
      expect_same(want, brute_force(c), label + " brute force");
      const std::uint64_t blocks_before = CountingBlocks::calls;
      expect_same(screened(Code::portable, c, c.begin, c.end(), kChunkScanGroups), want, label);
      // In scan order every group races: a race block and about 16 follower blocks per group,
      // more than 0.5 per candidate. Racing each chunk's widest group first leaves the groups
      // whose reach comes within the noise's range of the best: a few per chunk.
      const std::uint64_t blocks = CountingBlocks::calls - blocks_before;
      EXPECT_LT(static_cast<double>(blocks), 0.02 * static_cast<double>(size)) << label << ": " << blocks << " blocks";
      expect_same(screened(Code::dispatched, c, c.begin, c.end(), kChunkScanGroups), want, label + " dispatched");
    }
  }
}

TEST(ScreenedGroups, RisingUtilitiesRaceFewGroups) {
  check_rising_utilities<float>(1.0, "float");        // one noise scale a candidate: the steepest
  check_rising_utilities<double>(1.0 / 32, "double");  // a noise unit per two groups: gentle
}

TEST(ScreenedGroups, ScreeningNeverChangesTheAnswerAtTheEdgeOfTheScreen) {
  // Random utilities seldom put a candidate near one of the screen's decisions, so here the
  // utilities are built from the running best score S of the candidates before them (brute
  // force), with an offset delta from about 2^-45 to 1 (times S 2^-20 where S is large) either
  // side of the edge:
  //   group edge: every lane at u = (S - B + delta) / c, B the group's bound, so that c u + B
  //     falls on both sides of the threshold, of the unfused cut (2^-40 |S| below it) and of
  //     their roundings;
  //   follower edge: each follower at u = (S - N_J + delta) / c, N_J the leader's noise, so that
  //     the follower test (c u + N_J + margin against S) decides close calls, or at
  //     u = (S - N_j + delta) / c, N_j its own noise, so that its exact score is at S and it wins
  //     or loses by delta (a follower whose noise is close to its leader's then needs the test's
  //     bound to be no lower than N_J).
  // Only the first group, and a group whose screen has no bound, get a utility that can win by
  // far. A wrongly skipped candidate changes the answer only while it is the best so far, so
  // the passes are checked on prefixes of the range too (every prefix is a range of its own).
  // Scores near 10^12 and 3 10^15 with a scale that is not a power of two make the rounding of
  // c u (up to an ulp of 0.5) far larger than the bound's own margin (kScreenMargin, 2^-20).
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int follower_prefixes = 0;
  for (const Mechanism mechanism : kMechanisms) {
    for (const bool follower_edge : {false, true}) {
      for (const double offset : {0.0, 1e12, -3e15}) {
        for (int trial = 0; trial < 6; ++trial) {
          Case<double> c;
          c.begin = trial % 2 == 0 ? 0 : (std::uint64_t{1} << 33) + 29;
          c.values.resize(2048);
          c.spec.mechanism = mechanism;
          c.spec.score_scale = trial % 3 == 0 ? 1.0 : 0.7;
          c.spec.key = RandomKey::from_seed(rng(), trial < 3 ? Generator::chacha20 : Generator::philox);
          c.spec.stream = rng();
          c.spec.utility_limit = kInfinity;
          const double scale = c.spec.score_scale;
          const auto near = [&](double edge, double best) {
            const double delta = std::ldexp(unit(rng), -static_cast<int>(rng() % 45)) *
                                 std::max(std::fabs(best) * 0x1p-20, 1.0);
            return (edge + (rng() % 2 == 0 ? delta : -delta)) / scale;
          };
          struct Prefix {
            std::uint64_t end;
            double best_score;
            std::uint64_t best_index;
            bool follower;  // won by a candidate that is not its group's leader
          };
          std::vector<Prefix> prefixes;
          const GroupRange groups{c.begin, c.end()};
          double best = -kInfinity;
          std::uint64_t best_index = kNoIndex;
          bool best_is_follower = false;
          for (std::uint64_t g = groups.first_group(); g < groups.first_group() + groups.group_count(); ++g) {
            const std::uint32_t screen = group_screen(c.spec, g);
            const double bound = group_noise_upper_bound(mechanism, screen);
            const GroupRace race = group_race(c.spec, g, screen);
            const double leader = race_noise(mechanism, race.leader_time);
            const bool outright = best == -kInfinity || bound == kInfinity;
            const double group_u = outright ? ((best == -kInfinity ? offset : best) - 6.0 + 8.0 * unit(rng)) / scale
                                            : near(best - bound, best);
            for (unsigned int lanes = groups.lanes(g); lanes != 0; lanes &= lanes - 1) {
              const unsigned int lane = lowest_lane(lanes);
              const std::uint64_t index = g * kCandidatesPerGroup + lane;
              double value = group_u;
              if (!outright && follower_edge && lane != race.leader_lane) {
                value = rng() % 2 == 0 ? near(best - leader, best) : near(best - candidate_noise(c.spec, index), best);
              } else if (rng() % 2 == 0) {
                value -= std::ldexp(unit(rng), -40) * std::max(std::fabs(value), 1.0);
              }
              c.values[index - c.begin] = value;
              const double score = noisy_score(c.spec, index, value);
              if (score > best) {
                best = score;
                best_index = index;
                best_is_follower = lane != race.leader_lane;
              }
            }
            prefixes.push_back(Prefix{std::min(c.end(), (g + 1) * kCandidatesPerGroup), best, best_index,
                                      best_is_follower});
          }
          const std::string label = "mechanism " + std::to_string(static_cast<int>(mechanism)) + " follower edge " +
                                    std::to_string(follower_edge) + " offset " + std::to_string(offset) +
                                    " trial " + std::to_string(trial);
          const ShardResult want = brute_force(c);
          ASSERT_EQ(want.best_index, best_index) << label;
          expect_same(screened(Code::dispatched, c, c.begin, c.end(), 256), want, label);
          expect_same(screened(Code::portable, c, c.begin, c.end(), 7), want, label);
          expect_same(reference(c, c.begin, c.end()), want, label);
          for (int k = 0; k < 12; ++k) {
            const Prefix& prefix = prefixes[rng() % prefixes.size()];
            follower_prefixes += prefix.follower ? 1 : 0;
            const std::string at = label + " prefix to " + std::to_string(prefix.end);
            const ShardResult fast = screened(Code::dispatched, c, c.begin, prefix.end, 256);
            EXPECT_EQ(double_bits(fast.best_score), double_bits(prefix.best_score)) << at;
            EXPECT_EQ(fast.best_index, prefix.best_index) << at;
            const ShardResult slow = reference(c, c.begin, prefix.end);
            EXPECT_EQ(double_bits(slow.best_score), double_bits(prefix.best_score)) << at;
            EXPECT_EQ(slow.best_index, prefix.best_index) << at;
          }
          if (HasFailure()) return;
        }
      }
    }
  }
  // The follower test is exercised only where followers do win; most random passes are won by
  // a group's leader.
  EXPECT_GT(follower_prefixes, 100);
}

}  // namespace
}  // namespace dpselect::detail
