// SPDX-License-Identifier: Apache-2.0
// Every entry point charges the context's accountant before it draws its stream: what each one
// charges, that an over-budget release throws BudgetExceeded with nothing released, recorded or
// drawn (the next stream is the one the refused release would have taken), that bad input is
// refused before any charge, and that concurrent releases never overspend.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "support/expect_invalid.hpp"

namespace dpselect::testing {
namespace {

const std::vector<double> kUtilities = {1.0, 4.0, 2.0, 8.0, 5.0, 7.0};

SelectionParams selection_params(Mechanism mechanism, double epsilon) {
  SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = epsilon;
  params.sensitivity = 1.0;
  params.backend = Backend::Cpu;
  return params;
}

// A context with a fresh accountant of budget (epsilon, 0): only basic and optimal composition
// apply, both equal to the plain sum of epsilons.
struct Charged {
  explicit Charged(double budget_epsilon, double budget_delta = 0.0)
      : accountant(std::make_shared<PrivacyAccountant>(PrivacyBound{budget_epsilon, budget_delta})) {
    context.charge_to(accountant);
  }
  Context context = Context::with_fixed_seed(5);
  std::shared_ptr<PrivacyAccountant> accountant;

  // The stream the next release of `context` takes (drawn by an uncharged selection).
  std::uint64_t next_stream() {
    context.charge_to(nullptr);
    const std::uint64_t stream =
        select(context, std::span(kUtilities), selection_params(Mechanism::exponential, 1.0)).report.stream;
    context.charge_to(accountant);
    return stream;
  }
};

TEST(BudgetCharging, SelectChargesOneReleaseOfItsKind) {
  Charged charged(1.0);
  EXPECT_EQ(charged.context.accountant(), charged.accountant);
  select(charged.context, std::span(kUtilities), selection_params(Mechanism::exponential, 0.25));
  select(charged.context, std::span(kUtilities), selection_params(Mechanism::permute_and_flip, 0.25));
  select(charged.context, std::span(kUtilities), selection_params(Mechanism::laplace_noisy_max, 0.25));
  EXPECT_EQ(charged.accountant->release_count(), 3u);
  EXPECT_DOUBLE_EQ(charged.accountant->spent().epsilon, 0.75);
  EXPECT_EQ(release_kind(Mechanism::exponential), ReleaseKind::exponential_mechanism);
  EXPECT_EQ(release_kind(Mechanism::permute_and_flip), ReleaseKind::pure);
  EXPECT_EQ(release_kind(Mechanism::laplace_noisy_max), ReleaseKind::pure);
}

TEST(BudgetCharging, OverBudgetReleaseDrawsNothing) {
  Charged charged(1.0);
  const Selection first =
      select(charged.context, std::span(kUtilities), selection_params(Mechanism::exponential, 0.75));
  EXPECT_THROW(select(charged.context, std::span(kUtilities), selection_params(Mechanism::exponential, 0.5)),
               BudgetExceeded);
  EXPECT_THROW(charged.context.begin_release(selection_params(Mechanism::exponential, 0.5)), BudgetExceeded);
  EXPECT_EQ(charged.accountant->release_count(), 1u);
  EXPECT_DOUBLE_EQ(charged.accountant->spent().epsilon, 0.75);
  EXPECT_EQ(charged.next_stream(), first.report.stream + 1);  // the refused releases took no stream
  // What is left can still be spent.
  select(charged.context, std::span(kUtilities), selection_params(Mechanism::exponential, 0.25));
  EXPECT_EQ(charged.accountant->release_count(), 2u);
}

TEST(BudgetCharging, BadInputIsRefusedBeforeAnyCharge) {
  Charged charged(1.0);
  expect_invalid_message(
      [&] { select(charged.context, std::span(kUtilities), selection_params(Mechanism::exponential, 0.0)); },
      {"epsilon", "0"});
  SelectionParams bad_sensitivity = selection_params(Mechanism::exponential, 0.5);
  bad_sensitivity.sensitivity = -1.0;
  expect_invalid_message([&] { charged.context.begin_release(bad_sensitivity); }, {"sensitivity", "-1"});
  expect_invalid_message(
      [&] {
        select(charged.context, std::span<const double>(), selection_params(Mechanism::exponential, 0.5));
      },
      {"utilities"});
  TopKParams top_k;
  top_k.selection = selection_params(Mechanism::exponential, 0.1);
  top_k.k = kUtilities.size() + 1;
  expect_invalid_message([&] { select_top_k(charged.context, std::span(kUtilities), top_k); }, {"k", "7"});
  const std::vector<double> bad_row_epsilons = {0.1, -0.1};
  expect_invalid_message(
      [&] {
        select_rows(charged.context, HostMatrix<const double>{kUtilities.data(), 2, 3},
                    selection_params(Mechanism::exponential, 0.1), bad_row_epsilons);
      },
      {"row_epsilons[1]"});
  // The utility_bound check (its floating-point slack must stay below epsilon) comes before the
  // charge on every path, including those that charge a whole release first.
  SelectionParams huge_bound = selection_params(Mechanism::exponential, 0.2);
  huge_bound.utility_bound = 1e17;
  expect_invalid_message([&] { select(charged.context, std::span(kUtilities), huge_bound); }, {"utility_bound", "1e+17"});
  top_k.selection = huge_bound;
  top_k.k = 2;
  expect_invalid_message([&] { select_top_k(charged.context, std::span(kUtilities), top_k); },
                         {"utility_bound", "1e+17"});
  const std::vector<double> row_epsilons = {0.5, 0.5, 8.0};
  expect_invalid_message(
      [&] { select_rows(charged.context, HostMatrix<const double>{kUtilities.data(), 3, 2}, huge_bound, row_epsilons); },
      {"utility_bound", "row_epsilons[0]"});
  SparseVectorParams svt;
  svt.epsilon = 0.5;
  svt.sensitivity = 1.0;
  svt.threshold = 3.0;
  const std::vector<double> with_nan = {1.0, std::nan("")};
  expect_invalid_message([&] { sparse_vector_batch(charged.context, with_nan, svt); }, {"query value 1"});
  svt.max_positives = 0;
  expect_invalid_message([&] { SparseVector streaming(charged.context, svt); }, {"max_positives"});
  EXPECT_EQ(charged.accountant->release_count(), 0u);
  EXPECT_EQ(charged.next_stream(), 0u);
}

TEST(BudgetCharging, TopKChargesItsKPicksTogether) {
  Charged charged(1.0);
  TopKParams top_k;
  top_k.selection = selection_params(Mechanism::exponential, 0.5);  // the 4 picks together
  top_k.k = 4;
  select_top_k(charged.context, std::span(kUtilities), top_k);
  EXPECT_EQ(charged.accountant->release_count(), 4u);
  EXPECT_EQ(charged.accountant->spent().epsilon, 0.5);
  top_k.selection.epsilon = 0.625;
  top_k.k = 5;  // 5 more picks at 0.125 would spend 1.125
  EXPECT_THROW(select_top_k(charged.context, std::span(kUtilities), top_k), BudgetExceeded);
  EXPECT_EQ(charged.accountant->release_count(), 4u);
  EXPECT_EQ(charged.next_stream(), 1u);
}

TEST(BudgetCharging, RowsAreChargedAllOrNothing) {
  Charged charged(1.0);
  const HostMatrix<const double> matrix{kUtilities.data(), 3, 2};
  select_rows(charged.context, matrix, selection_params(Mechanism::permute_and_flip, 0.25));
  EXPECT_EQ(charged.accountant->release_count(), 3u);
  EXPECT_DOUBLE_EQ(charged.accountant->spent().epsilon, 0.75);
  const std::vector<double> row_epsilons = {0.125, 0.125, 0.0625};
  try {
    select_rows(charged.context, matrix, selection_params(Mechanism::exponential, 1.0), row_epsilons);
    ADD_FAILURE() << "no exception";
  } catch (const BudgetExceeded& error) {
    EXPECT_NE(std::string(error.what()).find("2 x exponential_mechanism at epsilon 0.125"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(charged.accountant->release_count(), 3u);
  EXPECT_EQ(charged.next_stream(), 3u);  // no row of the refused call drew a stream
}

TEST(BudgetCharging, PricingChargesOneRelease) {
  Charged charged(1.0);
  const std::vector<double> bids = {1.0, 1.0, 1.0, 3.01};
  PricingParams params;
  params.epsilon = 0.5;
  params.backend = Backend::Cpu;
  select_price(charged.context, Bids(std::span(bids)), PriceGrid{0.5, 4.0, 0.5}, params);
  params.grid_sampler = GridSampler::bid_intervals;
  params.epsilon = 0.25;
  select_price(charged.context, Bids(std::span(bids)), PriceGrid{0.5, 4.0, 0.5}, params);
  EXPECT_EQ(charged.accountant->release_count(), 2u);
  EXPECT_DOUBLE_EQ(charged.accountant->spent().epsilon, 0.75);
  params.epsilon = 0.5;
  EXPECT_THROW(select_price(charged.context, Bids(std::span(bids)), PriceRange{0.5, 4.0}, params), BudgetExceeded);
  EXPECT_EQ(charged.next_stream(), 2u);
}

TEST(BudgetCharging, SparseVectorChargesPureOrApproximate) {
  Charged charged(1.0, 1e-6);
  SparseVectorParams svt;
  svt.epsilon = 0.25;
  svt.sensitivity = 1.0;
  svt.threshold = 3.0;
  SparseVector streaming(charged.context, svt);  // charged at construction, before the threshold
  EXPECT_EQ(charged.accountant->release_count(), 1u);
  svt.delta = 4e-7;
  const std::vector<double> values = {1.0, 2.0, 9.0};
  sparse_vector_batch(charged.context, values, svt);
  EXPECT_EQ(charged.accountant->release_count(), 2u);
  // Basic composition gives (0.5, 4e-7); routes that spend the delta left may give less epsilon.
  const AccountedBound spent = charged.accountant->spent();
  EXPECT_LE(spent.epsilon, 0.5);
  EXPECT_GT(spent.epsilon, 0.49);
  EXPECT_GE(spent.delta, 4e-7);
  EXPECT_LE(spent.delta, 1e-6);
  svt.delta = 7e-7;  // delta 1.1e-6 in all: over the delta budget
  EXPECT_THROW(sparse_vector_batch(charged.context, values, svt), BudgetExceeded);
  EXPECT_THROW(SparseVector(charged.context, svt), BudgetExceeded);
  EXPECT_EQ(charged.accountant->release_count(), 2u);
  EXPECT_EQ(charged.next_stream(), 2u);
}

TEST(BudgetCharging, FunctorSelectionIsCharged) {
  Charged charged(0.5);
  const auto utility = [](std::uint64_t i) { return static_cast<double>(i % 7); };
  select_functor(charged.context, utility, IndexRange{0, 1000}, selection_params(Mechanism::exponential, 0.5));
  EXPECT_THROW(
      select_functor(charged.context, utility, IndexRange{0, 1000}, selection_params(Mechanism::exponential, 0.5)),
      BudgetExceeded);
  EXPECT_EQ(charged.accountant->release_count(), 1u);
}

TEST(BudgetCharging, ConcurrentReleasesNeverOverspend) {
  // Budget for exactly 40 releases at 1/64 (sums of multiples of 2^-6 are exact); 8 threads try
  // 10 each on their own contexts sharing the accountant.
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{40.0 / 64.0, 0.0});
  std::atomic<int> released{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Context context = Context::with_fixed_seed(100 + t);
      context.charge_to(accountant);
      for (int i = 0; i < 10; ++i) {
        try {
          select(context, std::span(kUtilities), selection_params(Mechanism::permute_and_flip, 1.0 / 64.0));
          ++released;
        } catch (const BudgetExceeded&) {
          ++refused;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(released.load(), 40);
  EXPECT_EQ(refused.load(), 40);
  EXPECT_EQ(accountant->release_count(), 40u);
  EXPECT_DOUBLE_EQ(accountant->spent().epsilon, 40.0 / 64.0);
}

TEST(BudgetCharging, ChargingAMovedFromContextIsAUsageError) {
  Context context = Context::with_fixed_seed(1);
  Context moved = std::move(context);
  EXPECT_THROW(context.charge_to(nullptr), UsageError);  // NOLINT(bugprone-use-after-move)
  EXPECT_THROW(static_cast<void>(context.accountant()), UsageError);
  EXPECT_EQ(moved.accountant(), nullptr);
}

}  // namespace
}  // namespace dpselect::testing
