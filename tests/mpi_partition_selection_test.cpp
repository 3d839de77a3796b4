// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: partition selection over (user, key) pairs split among the ranks in any way
// equals one process over all the pairs with the same key and stream, key for key (string keys
// too, numbered by the ranks together); bad input on
// one rank fails every rank alike before any charge or stream.
#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "dpselect/mpi.hpp"
#include "mpi_test_support.hpp"

namespace {

using namespace dpselect_mpi_test;
using dpselect::PartitionSelection;
using dpselect::PartitionSelectionParams;
using dpselect::PartitionStrategy;

struct Pairs {
  std::vector<std::uint64_t> users;
  std::vector<std::uint64_t> keys;
};

// The same pairs on every rank (a fixed seed): users over and under the bound, keys held by 1 to
// about 60 users, repeated pairs.
Pairs all_pairs() {
  Pairs pairs;
  std::mt19937_64 draw(77);
  for (std::uint64_t user = 0; user < 6000; ++user) {
    const std::uint64_t held = 1 + draw() % 6;
    for (std::uint64_t j = 0; j < held; ++j) {
      pairs.users.push_back(user * 2654435761u);
      pairs.keys.push_back((draw() % 700) * 0x9e3779b97f4a7c15ull);
    }
  }
  for (std::size_t i = 0; i < 500; ++i) {  // repeats, which land on other ranks than the originals
    pairs.users.push_back(pairs.users[i * 7]);
    pairs.keys.push_back(pairs.keys[i * 7]);
  }
  return pairs;
}

// This rank's pairs: pair i goes to the rank a hash of i picks, so that a user's pairs and a
// key's pairs lie on several ranks (and rank 1 of 3 or more holds none).
Pairs my_pairs(const Pairs& all) {
  Pairs mine;
  for (std::size_t i = 0; i < all.users.size(); ++i) {
    int rank = static_cast<int>((i * 0x9e3779b97f4a7c15ull) >> 60) % world_size();
    if (world_size() >= 3 && rank == 1) rank = 0;
    if (rank == world_rank()) {
      mine.users.push_back(all.users[i]);
      mine.keys.push_back(all.keys[i]);
    }
  }
  return mine;
}

void expect_same_selection(const PartitionSelection& distributed, const PartitionSelection& single) {
  EXPECT_EQ(distributed.keys, single.keys);
  EXPECT_EQ(distributed.report.stream, single.report.stream);
  EXPECT_EQ(distributed.report.keys_considered, single.report.keys_considered);
  EXPECT_EQ(distributed.report.delta_float, single.report.delta_float);
  EXPECT_EQ(distributed.report.rule.threshold, single.report.rule.threshold);
  EXPECT_EQ(distributed.report.streams, single.report.streams);
  // Every rank holds rank 0's keys.
  std::uint64_t digest = 0;
  for (const std::uint64_t key : distributed.keys) digest = digest * 1000003 + key;
  std::uint64_t low = 0, high = 0;
  MPI_Allreduce(&digest, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&digest, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(low, high);
}

TEST(DistributedPartitionSelection, AnySplitOfThePairsEqualsOneProcess) {
  const Pairs all = all_pairs();
  const Pairs mine = my_pairs(all);
  for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
    dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed, generator);
    dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed, generator);
    for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
                                PartitionStrategy::gaussian_threshold, PartitionStrategy::weighted_gaussian,
                                PartitionStrategy::dp_sips}) {
      for (const std::uint64_t max_partitions : {1, 3}) {
        const PartitionSelectionParams params{1.0, 1e-3, max_partitions, strategy};
        const PartitionSelection expected = dpselect::select_partitions(single, all.users, all.keys, params);
        ASSERT_GT(expected.keys.size(), 10u) << "a test that can fail: many keys released";
        ASSERT_LT(expected.keys.size(), expected.report.keys_considered) << "and some not";
        expect_same_selection(dmpi::select_partitions(distributed, mine.users, mine.keys, params), expected);
      }
    }
  }
}

TEST(DistributedPartitionSelection, StringKeysSplitInAnyWayEqualOneProcess) {
  // The keys as strings whose byte order differs from their numbers' (a prefix and a suffix),
  // the empty string and one with a NUL byte among them: every rank numbers them as one process.
  const Pairs all = all_pairs();
  const Pairs mine = my_pairs(all);
  const auto spelled = [](std::uint64_t key) {
    if (key % 11 == 0) return std::string();
    std::string text = std::to_string(key % 977) + "/q" + std::to_string(key);
    if (key % 13 == 0) text += std::string(1, '\0') + "tail";
    return text;
  };
  std::vector<std::string> all_text, mine_text;
  for (const std::uint64_t key : all.keys) all_text.push_back(spelled(key));
  for (const std::uint64_t key : mine.keys) mine_text.push_back(spelled(key));
  const std::vector<std::string_view> all_views(all_text.begin(), all_text.end());
  const std::vector<std::string_view> mine_views(mine_text.begin(), mine_text.end());
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::dp_sips}) {
    const PartitionSelectionParams params{1.0, 1e-3, 2, strategy};
    const dpselect::StringPartitionSelection expected =
        dpselect::select_partitions(single, all.users, all_views, params);
    ASSERT_GT(expected.keys.size(), 10u) << "a test that can fail: many keys released";
    ASSERT_LT(expected.keys.size(), expected.report.keys_considered) << "and some not";
    const dpselect::StringPartitionSelection got =
        dmpi::select_partitions(distributed, mine.users, mine_views, params);
    EXPECT_EQ(got.keys, expected.keys);
    EXPECT_EQ(got.report.stream, expected.report.stream);
    EXPECT_EQ(got.report.keys_considered, expected.report.keys_considered);
  }
}

TEST(DistributedPartitionSelection, AllPairsOnOneRankEqualOneProcess) {
  const Pairs all = all_pairs();
  const bool holder = world_rank() == world_size() - 1;
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const PartitionSelectionParams params{2.0, 1e-4, 2, PartitionStrategy::laplace_threshold};
  const std::span<const std::uint64_t> users = holder ? std::span<const std::uint64_t>(all.users) : std::span<const std::uint64_t>();
  const std::span<const std::uint64_t> keys = holder ? std::span<const std::uint64_t>(all.keys) : std::span<const std::uint64_t>();
  expect_same_selection(dmpi::select_partitions(distributed, users, keys, params),
                        dpselect::select_partitions(single, all.users, all.keys, params));
}

TEST(DistributedPartitionSelectionErrors, BadInputOnOneRankFailsEveryRankBeforeCharge) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  const Pairs mine = my_pairs(all_pairs());
  const PartitionSelectionParams good{1.0, 1e-6, 1, PartitionStrategy::truncated_geometric};
  {
    Ledger ledger;
    PartitionSelectionParams params = good;
    if (world_rank() == bad_rank()) params.max_partitions = 2;
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::select_partitions(ledger.context, mine.users, mine.keys, params); },
        "params must be the same on every rank (rank " + std::to_string(bad_rank()) + "'s differ");
    EXPECT_EQ(ledger.charged(), 0u);
    expect_next_release_on_stream_zero(ledger);
  }
  {
    Ledger ledger;
    std::span<const std::uint64_t> keys(mine.keys);
    if (world_rank() == bad_rank()) keys = keys.first(keys.size() - 1);
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::select_partitions(ledger.context, mine.users, keys, good); },
        "keys must hold one key per user entry on rank " + std::to_string(bad_rank()));
    EXPECT_EQ(ledger.charged(), 0u);
    expect_next_release_on_stream_zero(ledger);
  }
  {
    Ledger ledger;
    std::vector<std::string> text(mine.keys.size(), "k");
    std::vector<std::string_view> views(text.begin(), text.end());
    if (world_rank() == bad_rank()) views.pop_back();
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::select_partitions(ledger.context, mine.users, std::span<const std::string_view>(views), good); },
        "keys must hold one key per user entry on rank " + std::to_string(bad_rank()));
    EXPECT_EQ(ledger.charged(), 0u);
    expect_next_release_on_stream_zero(ledger);
  }
  {
    Ledger ledger;
    PartitionSelectionParams params = good;
    params.strategy = PartitionStrategy::policy_gaussian;  // its users one after another, in one process
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::select_partitions(ledger.context, mine.users, mine.keys, params); },
        "strategy must not be policy-gaussian under MPI");
    EXPECT_EQ(ledger.charged(), 0u);
    expect_next_release_on_stream_zero(ledger);
  }
  {
    Ledger ledger;
    PartitionSelectionParams params = good;
    params.delta = 0.0;  // on every rank: refused by every rank's own check
    expect_same_error<dpselect::InvalidArgument>(
        [&] { dmpi::select_partitions(ledger.context, mine.users, mine.keys, params); }, "delta must be in (0, 1)");
    EXPECT_EQ(ledger.charged(), 0u);
  }
}

TEST(DistributedPartitionSelectionErrors, NoPairsOnAnyRankFailsEveryRank) {
  Ledger ledger;
  const std::vector<std::uint64_t> none;
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_partitions(ledger.context, none, none,
                                PartitionSelectionParams{1.0, 1e-6, 1, PartitionStrategy::truncated_geometric});
      },
      "pairs");
  EXPECT_EQ(ledger.charged(), 0u);
}

}  // namespace
