// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: every distributed release equals the one-process release with the
// same key and stream, bit for bit, and a bad value on one rank fails every rank alike before any
// charge or stream. Run under mpiexec with 1, 3 and 4 ranks (tests/CMakeLists.txt); every rank
// runs every test, and the process fails when any rank fails.
#include <mpi.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/select_functor.hpp"
#include "mpi_test_support.hpp"

namespace {

using namespace dpselect_mpi_test;

template <class T>
void check_arrays(dpselect::Generator generator) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed, generator);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed, generator);
  // Sizes around the group of 32 and a prime; several releases in a row keep the streams in step.
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{33}, std::uint64_t{10007}, std::uint64_t{65536}}) {
    const std::vector<T> whole = utilities<T>(n);
    for (dpselect::Mechanism mechanism : kMechanisms) {
      for (bool monotone : {false, true}) {
        const SelectionParams p = params_for(mechanism, monotone);
        const IndexRange mine = shard_of(0, n, world_rank(), world_size());
        const Selection d = dmpi::select(distributed, std::span<const T>(whole.data() + mine.begin, mine.size()),
                                         mine.begin, p);
        const Selection s = dpselect::select(single, std::span<const T>(whole), p);
        SCOPED_TRACE("n " + std::to_string(n));
        expect_same(d, s);
        expect_same_on_every_rank(d);
      }
    }
  }
}

TEST(DistributedSelect, FloatShardsEqualOneProcess) { check_arrays<float>(dpselect::Generator::chacha20); }

// Utilities with a large common offset: one process scores them relative to the first utility;
// the ranks agree on that one, so their scores (and slack) are one process's.
TEST(DistributedSelect, ShardsAgreeOnTheReferenceOfOneProcess) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  for (std::uint64_t n : {std::uint64_t{33}, std::uint64_t{10007}}) {
    std::vector<double> whole = utilities<double>(n);
    for (double& u : whole) u += 1e12 + 0.375;
    for (dpselect::Mechanism mechanism : kMechanisms) {
      const SelectionParams p = params_for(mechanism, false);
      const IndexRange mine = shard_of(0, n, world_rank(), world_size());
      const Selection d = dmpi::select(distributed, std::span<const double>(whole.data() + mine.begin, mine.size()),
                                       mine.begin, p);
      const Selection s = dpselect::select(single, std::span<const double>(whole), p);
      SCOPED_TRACE("n " + std::to_string(n));
      expect_same(d, s);
      expect_same_on_every_rank(d);
    }
  }
}
TEST(DistributedSelect, DoubleShardsEqualOneProcess) { check_arrays<double>(dpselect::Generator::chacha20); }
TEST(DistributedSelect, PhiloxShardsEqualOneProcess) { check_arrays<float>(dpselect::Generator::philox); }

TEST(DistributedSelect, FunctorRangeAbove2To32EqualsOneProcess) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const IndexRange whole{(std::uint64_t{1} << 32) - 4099, (std::uint64_t{1} << 32) + 300001};
  for (dpselect::Mechanism mechanism : kMechanisms) {
    const SelectionParams p = params_for(mechanism, false);
    const IndexRange mine = shard_of(whole.begin, whole.size(), world_rank(), world_size());
    const Selection d = dmpi::select_functor(distributed, Hashed{}, mine, p);
    const Selection s = dpselect::select_functor(single, Hashed{}, whole, p);
    expect_same(d, s);
    expect_same_on_every_rank(d);
  }
  // Near 2^63, the top of the index space.
  const IndexRange top{(std::uint64_t{1} << 63) - 100000, std::uint64_t{1} << 63};
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, true);
  const Selection d = dmpi::select_functor(distributed, Hashed{}, shard_of(top.begin, top.size(), world_rank(),
                                                                           world_size()), p);
  expect_same(d, dpselect::select_functor(single, Hashed{}, top, p));
}

TEST(DistributedSelect, OsKeyAgreesOnEveryRank) {
  dmpi::DistributedContext distributed(MPI_COMM_WORLD);
  EXPECT_FALSE(distributed.is_fixed_seed());
  EXPECT_EQ(distributed.generator(), dpselect::Generator::chacha20);
  const std::vector<float> whole = utilities<float>(5000);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  const Selection d = dmpi::select(distributed, std::span<const float>(whole.data() + mine.begin, mine.size()),
                                   mine.begin, params_for(dpselect::Mechanism::exponential, false));
  expect_same_on_every_rank(d);
  EXPECT_EQ(d.report.candidates, whole.size());
}

TEST(DistributedSelect, MoveAssignmentFreesTheOldContextAndKeepsTheNew) {
  dmpi::DistributedContext context = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, 1);
  context = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dmpi::DistributedContext moved = std::move(context);
  EXPECT_THROW(context.rank(), dpselect::UsageError);
  const std::vector<float> whole = utilities<float>(300);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  const Selection d = dmpi::select(moved, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  expect_same(d, dpselect::select(single, std::span<const float>(whole), p));
}

TEST(DistributedSelectErrors, BadEpsilonOnOneRankFailsEveryRankBeforeCharge) {
  Ledger ledger;
  const std::vector<float> whole = utilities<float>(1000);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  if (world_rank() == bad_rank()) p.epsilon = std::numeric_limits<double>::quiet_NaN();
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
      },
      "epsilon");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedSelectErrors, DifferentParamsOnOneRankFailEveryRank) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  Ledger ledger;
  const std::vector<float> whole = utilities<float>(1000);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  if (world_rank() == bad_rank()) p.epsilon = 0.5;  // valid, but not rank 0's
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
      },
      "rank " + std::to_string(bad_rank()) + "'s differ");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedSelectErrors, BadShardOnOneRankFailsEveryRank) {
  Ledger ledger;
  // Rank bad_rank() claims a shard that reaches past 2^63.
  const std::vector<float> some(10, 1.0f);
  std::uint64_t first = 10 * static_cast<std::uint64_t>(world_rank());
  if (world_rank() == bad_rank()) first = (std::uint64_t{1} << 63) - 5;
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select(ledger.context, std::span<const float>(some), first, params_for(dpselect::Mechanism::exponential, false)); },
      "rank " + std::to_string(bad_rank()) + "'s shard");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedSelectErrors, OverlappingOrGappedShardsFailEveryRank) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  Ledger ledger;
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  // Rank r holds [10 r, 10 r + 10); the bad rank starts 5 early (overlap), then 5 late (gap).
  const int r = world_rank();
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_functor(ledger.context, Hashed{}, IndexRange{10u * r - (r == bad_rank() ? 5u : 0u), 10u * r + 10u}, p);
      },
      "overlap");
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_functor(ledger.context, Hashed{}, IndexRange{10u * r + (r == bad_rank() ? 5u : 0u), 10u * r + 10u}, p);
      },
      "on no rank");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedSelectErrors, AllShardsEmptyFailsEveryRank) {
  Ledger ledger;
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select(ledger.context, std::span<const float>(), 0, params_for(dpselect::Mechanism::exponential, false)); },
      "must hold at least one of the candidates");
  EXPECT_EQ(ledger.charged(), 0u);
}

TEST(DistributedSelectErrors, BudgetRefusalOnRankZeroFailsEveryRank) {
  Ledger ledger;
  const std::vector<float> whole = utilities<float>(1000);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 2.0;  // the ledger holds 1.0
  expect_same_error<dpselect::BudgetExceeded>(
      [&] {
        dmpi::select(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
      },
      "");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedSelectErrors, NanUtilityOnOneRankFailsEveryRankAfterTheCharge) {
  Ledger ledger;
  std::vector<float> whole = utilities<float>(1000);
  const IndexRange bad_shard = shard_of(0, whole.size(), bad_rank(), world_size());
  whole[bad_shard.begin + bad_shard.size() / 2] = std::numeric_limits<float>::quiet_NaN();
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
      },
      "utilities[" + std::to_string(bad_shard.begin + bad_shard.size() / 2) + "]");
  // Found in the data during the pass: charged, as in one process.
  EXPECT_EQ(ledger.charged(), 1u);
}

template <class T>
void check_top_k() {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  for (std::uint64_t n : {std::uint64_t{7}, std::uint64_t{1000}, std::uint64_t{40009}}) {
    const std::vector<T> whole = utilities<T>(n);
    const IndexRange mine = shard_of(0, n, world_rank(), world_size());
    // k = 1, k above the smallest non-empty shard, k = n.
    for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{100}, n}) {
      if (k > n) continue;
      for (bool monotone : {false, true}) {
        dpselect::TopKParams p;
        p.selection = params_for(dpselect::Mechanism::exponential, monotone);
        p.selection.epsilon = 0.1;
        p.k = k;
        const dpselect::TopKSelection d =
            dmpi::select_top_k(distributed, std::span<const T>(whole.data() + mine.begin, mine.size()), mine.begin, p);
        const dpselect::TopKSelection s = dpselect::select_top_k(single, std::span<const T>(whole), p);
        SCOPED_TRACE("n " + std::to_string(n) + ", k " + std::to_string(k));
        EXPECT_EQ(d.indices, s.indices);
        expect_same(Selection{d.indices.empty() ? 0 : d.indices.front(), d.report.per_pick},
                    Selection{s.indices.empty() ? 0 : s.indices.front(), s.report.per_pick});
        EXPECT_EQ(d.report.k, s.report.k);
        EXPECT_EQ(d.report.epsilon_total_basic, s.report.epsilon_total_basic);
        EXPECT_EQ(d.report.rho, s.report.rho);
      }
    }
  }
}

TEST(DistributedTopK, FloatShardsEqualOneProcess) { check_top_k<float>(); }
TEST(DistributedTopK, DoubleShardsEqualOneProcess) { check_top_k<double>(); }

TEST(DistributedTopK, KBeyondTheCandidatesFailsEveryRankBeforeCharge) {
  Ledger ledger;
  const std::vector<float> whole = utilities<float>(50);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  dpselect::TopKParams p;
  p.selection = params_for(dpselect::Mechanism::exponential, false);
  p.selection.epsilon = 0.01;
  p.k = 51;
  // The same message as one process's.
  std::string single_message;
  try {
    dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
    dpselect::select_top_k(single, std::span<const float>(whole), p);
  } catch (const dpselect::InvalidArgument& e) {
    single_message = e.what();
  }
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_top_k(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
      },
      single_message);
  EXPECT_FALSE(single_message.empty());
  EXPECT_EQ(ledger.charged(), 0u);
  // A good one charges k picks once, to rank 0's ledger: epsilon is the k picks' total.
  p.k = 10;
  p.selection.epsilon = 1.0;
  dmpi::select_top_k(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
  EXPECT_EQ(ledger.charged(), 10u);
  if (world_rank() == 0) EXPECT_EQ(ledger.accountant->spent().epsilon, 1.0);  // the budget, exactly
  expect_same_error<dpselect::BudgetExceeded>(
      [&] {
        p.selection.epsilon = 1e-6;  // nothing more fits in the budget of 1
        dmpi::select_top_k(ledger.context, std::span<const float>(whole.data() + mine.begin, mine.size()), mine.begin, p);
      },
      "");
  EXPECT_EQ(ledger.charged(), 10u);
}

// --- Rows and repeated releases spread over the ranks -------------------------------------------

void expect_same_rows(const dpselect::RowsSelection& distributed, const dpselect::RowsSelection& single) {
  ASSERT_EQ(distributed.selections.size(), single.selections.size());
  for (std::size_t r = 0; r < single.selections.size(); ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    expect_same(distributed.selections[r], single.selections[r]);
    expect_same_on_every_rank(distributed.selections[r]);
  }
}

template <class T>
void check_rows(dpselect::Generator generator) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed, generator);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed, generator);
  // Row counts below and above the rank count (some ranks hold no rows); widths around a group.
  for (const auto [rows, cols] : {std::pair<std::uint64_t, std::uint64_t>{2, 33}, {13, 100}, {40, 7}}) {
    const std::vector<T> matrix = utilities<T>(rows * cols);
    for (dpselect::Mechanism mechanism : kMechanisms) {
      const SelectionParams p = params_for(mechanism, false);
      const IndexRange mine = shard_of(0, rows, world_rank(), world_size());
      const dpselect::RowsSelection d = dmpi::select_rows(
          distributed, dpselect::HostMatrix<const T>{matrix.data() + mine.begin * cols, mine.size(), cols},
          mine.begin, p);
      const dpselect::RowsSelection s =
          dpselect::select_rows(single, dpselect::HostMatrix<const T>{matrix.data(), rows, cols}, p);
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      expect_same_rows(d, s);
    }
  }
  // The streams stay in step after the batches: a single release next.
  const std::vector<T> whole = utilities<T>(500);
  const IndexRange mine = shard_of(0, whole.size(), world_rank(), world_size());
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  expect_same(dmpi::select(distributed, std::span<const T>(whole.data() + mine.begin, mine.size()), mine.begin, p),
              dpselect::select(single, std::span<const T>(whole), p));
}

TEST(DistributedRows, FloatBlocksEqualOneProcess) { check_rows<float>(dpselect::Generator::chacha20); }
TEST(DistributedRows, DoubleBlocksEqualOneProcess) { check_rows<double>(dpselect::Generator::chacha20); }
TEST(DistributedRows, PhiloxBlocksEqualOneProcess) { check_rows<float>(dpselect::Generator::philox); }

TEST(DistributedRows, RepeatedReleasesEqualOneProcess) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  dpselect::Context single = dpselect::Context::with_fixed_seed(kSeed);
  const std::vector<double> row = utilities<double>(40);
  for (const std::uint64_t releases : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1001}}) {
    const SelectionParams p = params_for(dpselect::Mechanism::permute_and_flip, true);
    SCOPED_TRACE("releases " + std::to_string(releases));
    expect_same_rows(dmpi::select_repeated(distributed, std::span<const double>(row), p, releases),
                     dpselect::select_repeated(single, std::span<const double>(row), p, releases));
  }
}

TEST(DistributedRowsErrors, BadEpsilonOnOneRankFailsEveryRankBeforeCharge) {
  Ledger ledger;
  const std::vector<float> matrix = utilities<float>(12 * 10);
  const IndexRange mine = shard_of(0, 12, world_rank(), world_size());
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.01;
  if (world_rank() == bad_rank()) p.epsilon = -1.0;
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_rows(ledger.context,
                          dpselect::HostMatrix<const float>{matrix.data() + mine.begin * 10, mine.size(), 10},
                          mine.begin, p);
      },
      "epsilon");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedRowsErrors, DifferentWidthOnOneRankFailsEveryRankBeforeCharge) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  Ledger ledger;
  const std::vector<float> matrix = utilities<float>(12 * 11);
  // Every rank holds rows here (shard_of leaves rank 1 empty from 3 ranks on: give it one row).
  const std::uint64_t first = static_cast<std::uint64_t>(world_rank()) * 2;
  const std::uint64_t cols = world_rank() == bad_rank() ? 11 : 10;
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.01;
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select_rows(ledger.context, dpselect::HostMatrix<const float>{matrix.data(), 2, cols}, first, p); },
      "cols must be the same on every rank holding rows");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedRowsErrors, OverlappingBlocksFailEveryRankBeforeCharge) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  Ledger ledger;
  const std::vector<float> matrix = utilities<float>(3 * 10);
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.01;
  // Every rank claims rows [0, 3): the rows would be released once per rank.
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select_rows(ledger.context, dpselect::HostMatrix<const float>{matrix.data(), 3, 10}, 0, p); },
      "overlap");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedRowsErrors, ADifferentRepeatedRowOnOneRankFailsEveryRankBeforeCharge) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  Ledger ledger;
  std::vector<double> row = utilities<double>(20);
  if (world_rank() == bad_rank()) row[7] += 1.0;
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.01;
  expect_same_error<dpselect::InvalidArgument>(
      [&] { dmpi::select_repeated(ledger.context, std::span<const double>(row), p, 10); },
      "must be the same row on every rank");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedRowsErrors, BudgetRefusalFailsEveryRankAndDrawsNoStream) {
  Ledger ledger;
  const std::vector<double> row = utilities<double>(20);
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.1;  // 11 releases of 0.1 exceed the ledger's 1.0
  expect_same_error<dpselect::BudgetExceeded>(
      [&] { dmpi::select_repeated(ledger.context, std::span<const double>(row), p, 11); }, "");
  EXPECT_EQ(ledger.charged(), 0u);
  expect_next_release_on_stream_zero(ledger);
}

TEST(DistributedRowsErrors, NanInOneRanksRowFailsEveryRankNamingTheRow) {
  Ledger ledger;
  std::vector<float> matrix = utilities<float>(9 * 10);
  const IndexRange bad_rows = shard_of(0, 9, bad_rank(), world_size());
  const std::uint64_t bad_row = bad_rows.size() != 0 ? bad_rows.begin : 0;
  matrix[bad_row * 10 + 4] = std::numeric_limits<float>::quiet_NaN();
  const IndexRange mine = shard_of(0, 9, world_rank(), world_size());
  SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  p.epsilon = 0.01;
  expect_same_error<dpselect::InvalidArgument>(
      [&] {
        dmpi::select_rows(ledger.context,
                          dpselect::HostMatrix<const float>{matrix.data() + mine.begin * 10, mine.size(), 10},
                          mine.begin, p);
      },
      "utilities[4] must be finite or -inf (excluded), within utility_bound when one is given, with a finite scaled "
      "score (got nan) in row " + std::to_string(bad_row));
  // Found in the data during the pass: charged (9 releases), as in one process.
  EXPECT_EQ(ledger.charged(), 9u);
}

// --- A pass that throws on one rank ------------------------------------------------------------

struct ThrowsOnBadRank {
  std::uint64_t bad_index;
  double operator()(std::uint64_t i) const {
    if (i == bad_index) throw std::runtime_error("utility failed at index " + std::to_string(i));
    return static_cast<double>(i % 7);
  }
};

TEST(DistributedSelectErrors, APassThatThrowsOnOneRankFailsEveryRankInsteadOfHanging) {
  dmpi::DistributedContext distributed = dmpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, kSeed);
  const std::uint64_t n = 4000;
  const IndexRange bad_shard = shard_of(0, n, bad_rank(), world_size());
  const ThrowsOnBadRank utility{bad_shard.begin + bad_shard.size() / 2};
  const SelectionParams p = params_for(dpselect::Mechanism::exponential, false);
  expect_same_error<std::runtime_error>(
      [&] { dmpi::select_functor(distributed, utility, shard_of(0, n, world_rank(), world_size()), p); },
      "utility failed at index " + std::to_string(utility.bad_index));
}

}  // namespace
