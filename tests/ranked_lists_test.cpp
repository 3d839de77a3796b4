// SPDX-License-Identifier: Apache-2.0
// The GPU top-k's sort and merge (random/ranked_lists.hpp) run on the CPU: the bitonic network on a
// padded power of two, the merge-path split and merge steps, and the whole "keep k" step the way
// kernels/top_k.cu's sort_and_keep drives them (256 threads, 4 ranks each), checked against
// std::sort and against the step it replaced (a bitonic sort of all 4096 slots, padded with
// (-inf, kNoIndex)) round by round, and with blocks that share a bound on the k-th score. Fixed
// seeds; scores from a small set so that ties in score are common, -inf scores, and copies of the
// padding entry as real entries (the merge kernel offers them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "random/ranked_lists.hpp"

namespace dpselect::detail {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();
constexpr std::uint64_t kPaddingIndex = ~std::uint64_t{0};

// kernels/top_k.cu's block shape.
constexpr unsigned int kThreads = 256;
constexpr unsigned int kCapacity = 4096;
constexpr unsigned int kOffersPerRound = 2048;
constexpr unsigned int kMaxKeep = 1024;
constexpr unsigned int kKeptPerThread = kMaxKeep / kThreads;

struct Entry {
  double score;
  std::uint64_t index;
  friend bool operator==(const Entry&, const Entry&) = default;
};

bool entry_ranks_before(const Entry& a, const Entry& b) { return ranks_before(a.score, a.index, b.score, b.index); }

struct Slots {
  std::vector<double> score = std::vector<double>(kCapacity);
  std::vector<std::uint64_t> index = std::vector<std::uint64_t>(kCapacity);
  unsigned int count = 0;
  unsigned int sorted = 0;
  double threshold = kMinusInfinity;

  void append(const Entry& entry) {
    score[count] = entry.score;
    index[count] = entry.index;
    ++count;
  }
  std::vector<Entry> entries(unsigned int first, unsigned int end) const {
    std::vector<Entry> out;
    for (unsigned int i = first; i < end; ++i) out.push_back({score[i], index[i]});
    return out;
  }
};

// sort_appended: the network on next_power_of_two(n) elements, pairs past n skipped. The pairs of a
// stage are independent, so running them in order is what the threads do between barriers.
void sort_appended(Slots& slots, unsigned int first, unsigned int count) {
  const unsigned int n = count - first;
  if (n < 2) return;
  const unsigned int padded = next_power_of_two(n);
  double* const score = slots.score.data() + first;
  std::uint64_t* const index = slots.index.data() + first;
  for (unsigned int size = 2; size <= padded; size <<= 1) {
    for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
      for (unsigned int pair = 0; pair < padded / 2; ++pair) {
        const BitonicPair at = bitonic_pair(pair, size, stride);
        ASSERT_LT(at.low, at.high);
        ASSERT_LT(at.high, padded);
        if (at.high < n && ranks_before(score[at.high], index[at.high], score[at.low], index[at.low])) {
          std::swap(score[at.low], score[at.high]);
          std::swap(index[at.low], index[at.high]);
        }
      }
    }
  }
}

// sort_and_keep: sort the appended entries, then every thread merges its ranks from the state
// before any write (the kernel's barrier), then the writes.
void sort_and_keep(Slots& slots, unsigned int keep) {
  const unsigned int count = slots.count;
  const unsigned int sorted = slots.sorted;
  sort_appended(slots, sorted, count);
  const RankedList kept{slots.score.data(), slots.index.data(), sorted};
  const RankedList appended{slots.score.data() + sorted, slots.index.data() + sorted, count - sorted};
  const unsigned int out = std::min(count, keep);
  std::vector<Entry> merged(kThreads * kKeptPerThread);
  for (unsigned int thread = 0; thread < kThreads; ++thread) {
    const unsigned int first_rank = thread * kKeptPerThread;
    if (first_rank >= out) continue;
    unsigned int i = merge_path_split(kept, appended, first_rank);
    unsigned int j = first_rank - i;
    for (unsigned int r = 0; r < kKeptPerThread && first_rank + r < out; ++r) {
      const bool from_kept = merge_takes_a(kept, i, appended, j);
      merged[first_rank + r] =
          from_kept ? Entry{kept.score[i], kept.index[i]} : Entry{appended.score[j], appended.index[j]};
      from_kept ? ++i : ++j;
    }
  }
  for (unsigned int r = 0; r < out; ++r) {
    slots.score[r] = merged[r].score;
    slots.index[r] = merged[r].index;
  }
  slots.count = out;
  slots.sorted = out;
  slots.threshold = count < keep ? kMinusInfinity : merged[keep - 1].score;
}

// The step it replaced: pad every slot past count with (-inf, kNoIndex), bitonic-sort all of them
// (alternating directions), keep `keep`.
void full_sort_and_keep(Slots& slots, unsigned int keep) {
  const unsigned int count = slots.count;
  for (unsigned int i = count; i < kCapacity; ++i) {
    slots.score[i] = kMinusInfinity;
    slots.index[i] = kPaddingIndex;
  }
  for (unsigned int size = 2; size <= kCapacity; size <<= 1) {
    for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
      for (unsigned int pair = 0; pair < kCapacity / 2; ++pair) {
        const unsigned int low = 2 * pair - (pair & (stride - 1));
        const unsigned int high = low + stride;
        const bool best_first = (low & size) == 0;
        const bool swap = best_first
                              ? ranks_before(slots.score[high], slots.index[high], slots.score[low], slots.index[low])
                              : ranks_before(slots.score[low], slots.index[low], slots.score[high], slots.index[high]);
        if (swap) {
          std::swap(slots.score[low], slots.score[high]);
          std::swap(slots.index[low], slots.index[high]);
        }
      }
    }
  }
  slots.count = count < keep ? count : keep;
  slots.threshold = count < keep ? kMinusInfinity : slots.score[keep - 1];
}

// Distinct indices (a candidate appears once), scores from a few values with -inf among them, and
// now and then a copy of the padding entry.
class EntrySource {
 public:
  explicit EntrySource(std::uint64_t seed) : random_(seed) {}
  Entry next() {
    if (std::uniform_int_distribution<int>(0, 19)(random_) == 0) return {kMinusInfinity, kPaddingIndex};
    static constexpr double kScores[] = {kMinusInfinity, -3.5, 0.0, 0.25, 1.0, 7.0, 7.0000000000000009};
    const double score = kScores[std::uniform_int_distribution<int>(0, 6)(random_)] +
                         (std::uniform_int_distribution<int>(0, 3)(random_) == 0
                              ? std::uniform_real_distribution<double>(0.0, 1.0)(random_)
                              : 0.0);
    return {score, next_index_++ * 7 % 1000003};
  }
  std::mt19937_64& random() { return random_; }

 private:
  std::mt19937_64 random_;
  std::uint64_t next_index_ = 0;
};

std::vector<Entry> best(std::vector<Entry> entries, unsigned int keep) {
  std::sort(entries.begin(), entries.end(), entry_ranks_before);
  entries.resize(std::min<std::size_t>(entries.size(), keep));
  return entries;
}

TEST(RankedLists, NetworkSortsEverySizeWithThePaddingLeftOut) {
  EntrySource source(1);
  for (unsigned int n = 0; n <= 300; ++n) {
    Slots slots;
    const unsigned int first = n % 5;  // the appended entries start anywhere
    for (unsigned int i = 0; i < first + n; ++i) slots.append(source.next());
    const std::vector<Entry> before = slots.entries(0, first);
    sort_appended(slots, first, first + n);
    EXPECT_EQ(slots.entries(0, first), before) << "n " << n;
    EXPECT_EQ(slots.entries(first, first + n), best(slots.entries(first, first + n), n)) << "n " << n;
  }
  for (const unsigned int n : {1023u, 1024u, 1025u, 2047u, 2048u, 2049u, 3072u, 4095u, 4096u}) {
    Slots slots;
    for (unsigned int i = 0; i < n; ++i) slots.append(source.next());
    const std::vector<Entry> expected = best(slots.entries(0, n), n);
    sort_appended(slots, 0, n);
    EXPECT_EQ(slots.entries(0, n), expected) << "n " << n;
  }
}

TEST(RankedLists, WarpLocalStagesStayInTheWarpsPositions) {
  for (unsigned int size = 2; size <= kWarpLocalSize; size <<= 1) {
    for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
      for (unsigned int pair = 0; pair < kCapacity / 2; ++pair) {
        const BitonicPair at = bitonic_pair(pair, size, stride);
        EXPECT_EQ(at.low / 64, pair / 32) << size << " " << stride << " " << pair;
        EXPECT_EQ(at.high / 64, pair / 32) << size << " " << stride << " " << pair;
      }
    }
  }
}

TEST(RankedLists, MergePathSplitIsTheSequentialMerges) {
  EntrySource source(2);
  for (int trial = 0; trial < 200; ++trial) {
    const auto a_count = std::uniform_int_distribution<unsigned int>(0, 40)(source.random());
    const auto b_count = std::uniform_int_distribution<unsigned int>(0, 40)(source.random());
    std::vector<Entry> a;
    std::vector<Entry> b;
    for (unsigned int i = 0; i < a_count; ++i) a.push_back(source.next());
    for (unsigned int i = 0; i < b_count; ++i) b.push_back(trial % 3 == 0 && i < a.size() ? a[i] : source.next());
    a = best(a, a_count);
    b = best(b, b_count);
    std::vector<double> a_score, b_score;
    std::vector<std::uint64_t> a_index, b_index;
    for (const Entry& e : a) a_score.push_back(e.score), a_index.push_back(e.index);
    for (const Entry& e : b) b_score.push_back(e.score), b_index.push_back(e.index);
    const RankedList list_a{a_score.data(), a_index.data(), a_count};
    const RankedList list_b{b_score.data(), b_index.data(), b_count};
    // The sequential stable merge, counting a's entries before each rank.
    unsigned int i = 0;
    unsigned int j = 0;
    std::vector<Entry> merged;
    for (unsigned int rank = 0; rank <= a_count + b_count; ++rank) {
      ASSERT_EQ(merge_path_split(list_a, list_b, rank), i) << "trial " << trial << " rank " << rank;
      if (rank == a_count + b_count) break;
      const bool from_a = merge_takes_a(list_a, i, list_b, j);
      merged.push_back(from_a ? a[i++] : b[j++]);
    }
    std::vector<Entry> all = a;
    all.insert(all.end(), b.begin(), b.end());
    EXPECT_EQ(merged, best(all, a_count + b_count)) << "trial " << trial;
  }
}

TEST(RankedLists, KeepingEqualsSortingAllSlots) {
  EntrySource source(3);
  for (const unsigned int keep : {1u, 2u, 7u, 100u, 1000u, 1024u}) {
    for (const unsigned int sorted : {0u, 1u, 5u, keep}) {
      for (const unsigned int appended : {0u, 1u, 2u, 63u, 64u, 65u, 1000u, 2048u, 3072u}) {
        if (sorted > keep || sorted + appended > kCapacity) continue;
        Slots slots;
        std::vector<Entry> kept_entries;
        for (unsigned int i = 0; i < sorted; ++i) kept_entries.push_back(source.next());
        for (const Entry& e : best(kept_entries, sorted)) slots.append(e);
        slots.sorted = sorted;
        for (unsigned int i = 0; i < appended; ++i) slots.append(source.next());
        Slots reference = slots;
        sort_and_keep(slots, keep);
        full_sort_and_keep(reference, keep);
        ASSERT_EQ(slots.count, reference.count);
        EXPECT_EQ(slots.entries(0, slots.count), reference.entries(0, reference.count))
            << "keep " << keep << " sorted " << sorted << " appended " << appended;
        EXPECT_EQ(slots.threshold, reference.threshold);
      }
    }
  }
}

// Rounds of up to kOffersPerRound offers filtered by the threshold, kept when the next round might
// not fit, as top_k_blocks_kernel and merge_lists_kernel do; old and new step side by side, then
// the final list against std::sort of everything offered. Increasing scores are the case that keeps
// on every round.
TEST(RankedLists, RoundsKeepTheSameListAsTheFullSort) {
  for (const bool increasing : {false, true}) {
    for (const unsigned int keep : {1u, 10u, 1024u}) {
      EntrySource source(4 + keep);
      Slots slots;
      Slots reference;
      std::vector<Entry> offered;
      std::uint64_t next_index = 0;
      for (int round = 0; round < 12; ++round) {
        const auto offers = std::uniform_int_distribution<unsigned int>(0, kOffersPerRound)(source.random());
        for (unsigned int o = 0; o < offers; ++o) {
          Entry entry = source.next();
          if (increasing) {
            entry = {static_cast<double>(next_index) * 0.5, next_index};
            ++next_index;
          }
          offered.push_back(entry);
          if (!(entry.score < slots.threshold)) slots.append(entry);
          if (!(entry.score < reference.threshold)) reference.append(entry);
        }
        ASSERT_EQ(slots.count, reference.count);
        if (slots.count > kCapacity - kOffersPerRound) {
          sort_and_keep(slots, keep);
          full_sort_and_keep(reference, keep);
          ASSERT_EQ(slots.entries(0, slots.count), reference.entries(0, reference.count)) << "round " << round;
          ASSERT_EQ(slots.threshold, reference.threshold);
        }
      }
      sort_and_keep(slots, keep);
      EXPECT_EQ(slots.entries(0, slots.count), best(offered, keep)) << "keep " << keep << " increasing " << increasing;
    }
  }
}

// Blocks that share a bound on the k-th best score, as top_k_blocks_kernel's do (GridKthBound):
// the blocks take rounds in turn, each appending the offers not below the larger of its threshold
// and the bound; a block that keeps k raises the bound to its k-th score and its threshold to the
// bound. Every block's final k, merged, are the k best of everything offered: the bound never
// drops a score that belongs there, a tie in score with a smaller index included. Rounds of
// varying size, so that blocks keep at different times.
TEST(RankedLists, BlocksSharingAKthBoundKeepTheCallsBest) {
  constexpr unsigned int kBlocks = 5;
  for (const bool ties : {false, true}) {
    for (const unsigned int keep : {1u, 3u, 64u, 1024u}) {
      EntrySource source(100 + keep);
      std::vector<Slots> blocks(kBlocks);
      std::vector<Entry> offered;
      double bound = kMinusInfinity;
      const auto keep_and_share = [&](Slots& slots) {
        sort_and_keep(slots, keep);
        if (slots.threshold != kMinusInfinity) bound = std::max(bound, slots.threshold);
        slots.threshold = std::max(slots.threshold, bound);
      };
      std::size_t dropped_by_bound = 0;
      for (int round = 0; round < 40; ++round) {
        Slots& slots = blocks[static_cast<unsigned int>(round) % kBlocks];
        const double threshold = std::max(slots.threshold, bound);
        const auto offers = std::uniform_int_distribution<unsigned int>(0, kOffersPerRound)(source.random());
        for (unsigned int o = 0; o < offers; ++o) {
          // With ties: four scores and indices in no order (an odd multiplier is a bijection), so
          // the k-th score is a tie, and entries that tie with the bound rank before the ones
          // that set it.
          Entry entry = source.next();
          if (ties && entry.index != kPaddingIndex) {
            entry.score = static_cast<double>(std::uniform_int_distribution<int>(4, 7)(source.random()));
            entry.index *= 0x9E3779B97F4A7C15ull;
          }
          offered.push_back(entry);
          if (!(entry.score < threshold)) {
            slots.append(entry);
          } else if (!(entry.score < slots.threshold)) {
            ++dropped_by_bound;
          }
        }
        if (slots.count > kCapacity - kOffersPerRound) keep_and_share(slots);
      }
      std::vector<Entry> kept;
      for (Slots& slots : blocks) {
        keep_and_share(slots);
        const std::vector<Entry> list = slots.entries(0, slots.count);
        kept.insert(kept.end(), list.begin(), list.end());
      }
      EXPECT_EQ(best(kept, keep), best(offered, keep)) << "keep " << keep << " ties " << ties;
      EXPECT_GT(dropped_by_bound, 0u) << "keep " << keep << " ties " << ties << ": the bound screened nothing out";
    }
  }
}

}  // namespace
}  // namespace dpselect::detail
