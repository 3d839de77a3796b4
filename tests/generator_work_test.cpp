// SPDX-License-Identifier: Apache-2.0
// The generator work of the CPU path under the group-maximum screen (docs/group_maximum.md,
// section 6): at n = 2^24 candidates the screened pass must compute at most one ChaCha20 block per
// 256 candidates on average, where drawing every candidate's noise costs about three per
// candidate (a screen, a race and a candidate block). The work is counted by test-side stand-ins
// for the pass's two sources of blocks, and the pass they drive is checked against the
// production cpu_evaluate_array, so what is counted is the work of the answer the library gives.
//
// Where the work comes from (n candidates, n / 32 groups):
//   screen blocks: one ChaCha20 block holds the screens of 32 groups, so n / 1024, computed in
//     batches of kChaChaBatchBlocks, one batch per chunk of kChunkGroups groups;
//   race blocks: one per group that passes the screen, which is every group whose screen has no
//     bound (upper half, X's top 14 bits zero: probability 2^-15, n / 2^20 on average) and the
//     few whose bound can reach the running best score;
//   candidate blocks: one per follower whose leader's noise could lift it to the best score
//     (nearly all of them in the first groups, before the best score has risen).
// Measured with the seeds below (the counts are exact: the pass is deterministic):
//   uniform utilities:   16384 screen + 32 race + 362 candidate = 16778 blocks, 0.00100 per candidate
//   all-equal utilities: 16384 screen + 30 race + 465 candidate = 16879 blocks, 0.00101 per candidate
// (16 and 18 of the groups had no bound; with one bound for the whole bucket of X's top 8 bits
// zero, 2^-9 of the groups, the race blocks were 1039 and 1052). Beyond the fixed n / 1024 of the
// screens, the race blocks are a Binomial(2^19, 2^-15) count (mean 16) plus a few records, and
// the candidate blocks a few groups' followers. So the bounds asserted below, 1 / 256 (65536
// blocks) and, for all-equal utilities, 1 / 512 (32768 blocks, 15000 above the measurement),
// fail for a correct screen with a probability far below 10^-100 (Chernoff bound of the
// binomial) whatever the seed; the seeds are fixed, so a pass is reproducible. The counted pass
// takes about 0.01 s and the whole test about 0.3 s in a Release build.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "dpselect/detail/chacha20_batch.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "selection/cpu_backend.hpp"
#include "selection/parallel_groups.hpp"
#include "selection/screened_group.hpp"

namespace dpselect::detail {
namespace {

constexpr std::uint64_t kCandidates = std::uint64_t{1} << 24;

// SequentialBlocks' interface and ChaCha20 caching (one batch of kChaChaBatchBlocks consecutive
// blocks, computed on a miss), counting the blocks it computes and which batches they were.
class CountingScreenBlocks {
 public:
  CountingScreenBlocks(const RandomKey& key, std::uint64_t stream, std::uint64_t& computed,
                       std::unordered_set<std::uint64_t>& batches)
      : key_(key), stream_(stream), computed_(computed), batches_(batches) {}

  RandomBlock at(std::uint64_t position) {
    const std::uint64_t block = position / 4;
    const std::uint64_t first_block = block - block % kChaChaBatchBlocks;
    if (!cached_ || first_block != cached_first_) {
      chacha20_stream_blocks(key_.chacha, stream_, first_block, words_);
      computed_ += kChaChaBatchBlocks;
      batches_.insert(first_block);
      cached_first_ = first_block;
      cached_ = true;
    }
    const std::uint32_t* words = words_[block - first_block];
    const unsigned first = 4 * static_cast<unsigned>(position % 4);
    return RandomBlock{{words[first], words[first + 1], words[first + 2], words[first + 3]}};
  }

 private:
  RandomKey key_;
  std::uint64_t stream_;
  std::uint64_t& computed_;
  std::unordered_set<std::uint64_t>& batches_;
  std::uint64_t cached_first_ = 0;
  bool cached_ = false;
  std::uint32_t words_[kChaChaBatchBlocks][16];
};

// The race and candidate blocks: each call is one full ChaCha20 block (random_block).
struct CountingDetailBlocks {
  static inline std::uint64_t race = 0;
  static inline std::uint64_t candidate = 0;
  static RandomBlock at(const RandomKey& key, std::uint64_t stream, std::uint64_t position) {
    ++(position >= kDetailPositionOffset ? candidate : race);
    return random_block(key, stream, position);
  }
};

struct Work {
  ShardResult result;
  std::uint64_t screen_blocks = 0;
  std::uint64_t screen_batches = 0;  // distinct batches among those computed
  std::uint64_t race_blocks = 0;
  std::uint64_t candidate_blocks = 0;
  std::uint64_t unbounded_groups = 0;  // groups whose screen has no bound: always raced
  std::uint64_t total() const { return screen_blocks + race_blocks + candidate_blocks; }
  double per_candidate() const { return static_cast<double>(total()) / static_cast<double>(kCandidates); }
};

// One thread, the chunks of parallel_groups in order, each with its own screen blocks as a
// worker has, into one accumulator.
Work count_work(const NoiseSpec& spec, const std::vector<float>& utilities) {
  Work work;
  CountingDetailBlocks::race = 0;
  CountingDetailBlocks::candidate = 0;
  std::unordered_set<std::uint64_t> batches;
  const GroupRange groups{0, utilities.size()};
  const ScreenBounds bounds(spec.mechanism);
  ShardAccumulator accumulator;
  accumulator.result.executed_on = ExecutedOn::cpu;
  for (std::uint64_t first = 0; first < groups.group_count(); first += kChunkGroups) {
    const std::uint64_t last = std::min(groups.group_count(), first + kChunkGroups);
    CountingScreenBlocks screen_blocks(spec.key, spec.stream, work.screen_blocks, batches);
    score_groups<CountingDetailBlocks>(spec, bounds, groups, first, last, screen_blocks, utilities.data(), 0,
                                       accumulator.result, accumulator);
  }
  work.result = accumulator.result;
  work.screen_batches = batches.size();
  work.race_blocks = CountingDetailBlocks::race;
  work.candidate_blocks = CountingDetailBlocks::candidate;
  SequentialBlocks screens(spec.key, spec.stream);
  for (std::uint64_t g = 0; g < groups.group_count(); ++g) {
    const std::uint32_t screen = screen_bits(screens.at(screen_position(g)),
                                                    static_cast<unsigned int>(g % kGroupsPerScreenBlock));
    work.unbounded_groups += bounds.of(screen) == kInfinity ? 1 : 0;
  }
  return work;
}

NoiseSpec exponential_mechanism_spec(std::uint64_t seed) {
  NoiseSpec spec{};
  spec.mechanism = Mechanism::exponential;
  spec.score_scale = 0.5;  // epsilon 1, sensitivity 1: eps / (2 Delta)
  spec.key = RandomKey::from_seed(seed, Generator::chacha20);
  spec.stream = 7;
  spec.utility_limit = kInfinity;
  return spec;
}

void expect_same(const ShardResult& got, const ShardResult& want) {
  EXPECT_EQ(double_bits(got.best_score), double_bits(want.best_score));
  EXPECT_EQ(got.best_index, want.best_index);
  EXPECT_EQ(got.candidates, want.candidates);
  EXPECT_EQ(double_bits(got.max_abs_shifted_utility), double_bits(want.max_abs_shifted_utility));
  EXPECT_EQ(got.first_invalid_index, want.first_invalid_index);
  EXPECT_EQ(double_bits(got.first_invalid_value), double_bits(want.first_invalid_value));
  EXPECT_EQ(got.executed_on, want.executed_on);
}

Work measure(const std::string& name, const NoiseSpec& spec, const std::vector<float>& utilities) {
  const auto start = std::chrono::steady_clock::now();
  const Work work = count_work(spec, utilities);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The counted pass is the production pass: same answer, bit for bit, as cpu_evaluate_array
  // (all threads, SequentialBlocks and random_block).
  expect_same(work.result, cpu_evaluate_array(spec, utilities.data(), IndexRange{0, utilities.size()}));
  EXPECT_EQ(work.result.candidates, kCandidates);
  // Exactly n / 1024 screen blocks (8 groups per position, 4 positions per ChaCha20 block), and
  // no batch computed twice (a chunk's screens are one batch).
  EXPECT_EQ(work.screen_blocks, kCandidates / (kCandidatesPerGroup * kGroupsPerScreenBlock * 4));
  EXPECT_EQ(work.screen_blocks, work.screen_batches * kChaChaBatchBlocks);
  // Every group without a bound is raced; few others are (the records of the best score: 16
  // and 12 here). A bound table that is valid but loose would race far more.
  EXPECT_GE(work.race_blocks, work.unbounded_groups);
  EXPECT_LE(work.race_blocks - work.unbounded_groups, 200u);
  ::testing::Test::RecordProperty(name + "_blocks_per_candidate", std::to_string(work.per_candidate()));
  ::testing::Test::RecordProperty(name + "_screen_blocks", std::to_string(work.screen_blocks));
  ::testing::Test::RecordProperty(name + "_race_blocks", std::to_string(work.race_blocks));
  ::testing::Test::RecordProperty(name + "_candidate_blocks", std::to_string(work.candidate_blocks));
  std::cout << name << ": " << work.screen_blocks << " screen + " << work.race_blocks << " race ("
            << work.unbounded_groups << " groups without a bound) + " << work.candidate_blocks
            << " candidate blocks = " << work.total() << " ChaCha20 blocks, " << work.per_candidate()
            << " per candidate (counted pass " << seconds << " s)\n";
  return work;
}

TEST(GeneratorWork, UniformUtilitiesNeedAtMostOneChaChaBlockPer256Candidates) {
  // i.i.d. uniform on [0, 1) on the float grid of 2^-24.
  std::mt19937_64 rng(20240601);
  std::vector<float> utilities(kCandidates);
  for (float& u : utilities) u = static_cast<float>(rng() >> 40) * 0x1p-24f;
  const Work work = measure("uniform", exponential_mechanism_spec(1), utilities);
  EXPECT_LE(work.per_candidate(), 1.0 / 256);
}

TEST(GeneratorWork, AllEqualUtilitiesNeedLittleMore) {
  // Every group can hold the arg-max, so only the noise screens: the bound is then compared
  // with the record of the noises so far.
  const std::vector<float> utilities(kCandidates, 0.5f);
  const Work work = measure("all_equal", exponential_mechanism_spec(2), utilities);
  EXPECT_LE(work.per_candidate(), 1.0 / 512);
}

}  // namespace
}  // namespace dpselect::detail
