// SPDX-License-Identifier: Apache-2.0
// Batched rows on the test's backend: each row is its own release and equals a single select
// over that row as the context's next release; per-row epsilons; bad shapes.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "dpselect/rows.hpp"
#include "support/test_backend.hpp"

namespace dpselect::testing {
namespace {

using Rows = BackendTest;

TEST_F(Rows, EachRowEqualsASingleReleaseInRowOrder) {
  constexpr std::uint64_t kRows = 37;
  constexpr std::uint64_t kCols = 1'001;
  std::vector<double> matrix(kRows * kCols);
  for (std::size_t i = 0; i < matrix.size(); ++i) matrix[i] = std::sin(0.37 * static_cast<double>(i));
  const std::vector<double> epsilons = [] {
    std::vector<double> e(kRows);
    for (std::uint64_t r = 0; r < kRows; ++r) e[r] = 0.5 + 0.1 * static_cast<double>(r);
    return e;
  }();
  for (const bool per_row : {false, true}) {
    const SelectionParams params = params_for(Mechanism::permute_and_flip, 2.0, 1.0);
    Context batched_context = Context::with_fixed_seed(5);
    const HostMatrix<const double> m{matrix.data(), kRows, kCols};
    const RowsSelection batched = per_row ? select_rows(batched_context, m, params, epsilons)
                                          : select_rows(batched_context, m, params);
    ASSERT_EQ(batched.selections.size(), kRows);
    Context single_context = Context::with_fixed_seed(5);
    for (std::uint64_t r = 0; r < kRows; ++r) {
      SelectionParams row_params = params;
      if (per_row) row_params.epsilon = epsilons[r];
      const Selection single =
          select(single_context, std::span<const double>(matrix.data() + r * kCols, kCols), row_params);
      EXPECT_EQ(batched.selections[r].index, single.index) << "row " << r;
      EXPECT_EQ(batched.selections[r].report.stream, r);
      EXPECT_EQ(batched.selections[r].report.epsilon_spent, row_params.epsilon);
      EXPECT_EQ(batched.selections[r].report.executed_on, kExecutedOn);
    }
  }
}

// Rows of every team size of the GPU pass (a thread per row up to 64 columns, a warp up to 2048,
// a block beyond, a warp per long row where the rows are enough to give every warp the device
// holds one (4096 rows of 4100: any device of up to 256 SMs), rows too few to fill the device cut
// into segments (8 rows of 100,003 and of 131,072: 3 and 4 segments of 32 tiles or more, the first
// with a partial last tile), and few long rows one release at a time), in the test's memory
// (device memory on the GPU backend), against single releases.
TEST_F(Rows, BackendMemoryRowsEqualSingleReleases) {
  for (const std::uint64_t cols : {std::uint64_t{5}, std::uint64_t{64}, std::uint64_t{65}, std::uint64_t{2'048},
                                   std::uint64_t{2'049}, std::uint64_t{4'100}, std::uint64_t{20'000},
                                   std::uint64_t{100'003}, std::uint64_t{131'072}}) {
    const std::uint64_t rows = cols < 100         ? 3'000
                               : cols == 20'000   ? 600
                               : cols == 4'100    ? 4'096
                               : cols >= 100'000  ? 8
                                                  : 40;
    std::vector<float> matrix(rows * cols);
    for (std::size_t i = 0; i < matrix.size(); ++i) matrix[i] = static_cast<float>(std::cos(0.113 * static_cast<double>(i)));
    const BackendUtilities<float> utilities(matrix);
    const SelectionParams params = params_for(Mechanism::exponential, 3.0, 1.0);
    Context batched_context = Context::with_fixed_seed(11);
    const RowsSelection batched = utilities.select_rows_with(batched_context, rows, cols, params);
    ASSERT_EQ(batched.selections.size(), rows);
    Context single_context = Context::with_fixed_seed(11);
    for (std::uint64_t r = 0; r < rows; ++r) {
      const Selection single =
          select(single_context, std::span<const float>(matrix.data() + r * cols, cols), params);
      ASSERT_EQ(batched.selections[r].index, single.index) << "cols " << cols << " row " << r;
      ASSERT_EQ(batched.selections[r].report.executed_on, kExecutedOn);
      // A row scored in part or twice would still pick the same candidate, mostly: its count tells.
      ASSERT_EQ(batched.selections[r].report.candidates, cols) << "cols " << cols << " row " << r;
    }
  }
}

// select_repeated: release i equals the context's i-th select() over the same utilities (short
// rows and rows past the GPU's warp-per-row limit).
TEST_F(Rows, RepeatedReleasesEqualSuccessiveSelects) {
  for (const std::size_t n : {std::size_t{8}, std::size_t{3'000}}) {
    std::vector<double> utilities(n);
    for (std::size_t i = 0; i < n; ++i) utilities[i] = static_cast<double>(i % 7);
    const SelectionParams params = params_for(Mechanism::permute_and_flip, 1.0, 1.0);
    constexpr std::uint64_t kReleases = 500;
    Context repeated_context = Context::with_fixed_seed(21);
    const RowsSelection repeated = select_repeated(repeated_context, std::span<const double>(utilities), params, kReleases);
    ASSERT_EQ(repeated.selections.size(), kReleases);
    Context single_context = Context::with_fixed_seed(21);
    for (std::uint64_t i = 0; i < kReleases; ++i) {
      const Selection single = select(single_context, std::span<const double>(utilities), params);
      ASSERT_EQ(repeated.selections[i].index, single.index) << "n " << n << " release " << i;
      ASSERT_EQ(repeated.selections[i].report.stream, i);
      ASSERT_EQ(repeated.selections[i].report.executed_on, kExecutedOn);
    }
  }
}

// Rows of up to one group of candidates (the CPU scores them in batches of releases): every
// Selection, report included, equals the one a Release over that row gives as the context's
// (first stream + r)-th release, for every width up to one past a group, both value types, every
// mechanism and generator, excluded candidates, a public reference, per-row epsilons and a row
// count that leaves a partial batch; select_repeated likewise.
template <class T>
void expect_rows_equal_releases(Mechanism mechanism, Generator generator, std::uint64_t cols, bool per_row,
                                std::optional<double> reference) {
  constexpr std::uint64_t kRows = 19;
  std::vector<T> matrix(kRows * cols);
  for (std::size_t i = 0; i < matrix.size(); ++i) {
    matrix[i] = i % 11 == 3 ? -static_cast<T>(INFINITY) : static_cast<T>(std::sin(0.71 * static_cast<double>(i)) * 4.0);
  }
  for (std::uint64_t r = 0; r < kRows; ++r) matrix[r * cols] = static_cast<T>(r % 3);  // no row all excluded
  std::vector<double> epsilons(kRows);
  for (std::uint64_t r = 0; r < kRows; ++r) epsilons[r] = 0.25 + 0.5 * static_cast<double>(r % 4);
  SelectionParams params = params_for(mechanism, 1.5, 1.0);
  params.utility_reference = reference;
  const HostMatrix<const T> m{matrix.data(), kRows, cols};
  Context batched_context = Context::with_fixed_seed(31, generator);
  const RowsSelection rows = per_row ? select_rows(batched_context, m, params, epsilons) : select_rows(batched_context, m, params);
  Context repeated_context = Context::with_fixed_seed(31, generator);
  const RowsSelection repeated = select_repeated(repeated_context, std::span<const T>(matrix.data(), cols), params, kRows);
  Context single_context = Context::with_fixed_seed(31, generator);
  Context single_repeated_context = Context::with_fixed_seed(31, generator);
  const auto expect_same = [&](const Selection& got, const Selection& want, std::uint64_t r, const char* what) {
    const std::string where = std::string(what) + " cols " + std::to_string(cols) + " row " + std::to_string(r);
    EXPECT_EQ(got.index, want.index) << where;
    EXPECT_EQ(got.report.mechanism, want.report.mechanism) << where;
    EXPECT_EQ(got.report.epsilon_spent, want.report.epsilon_spent) << where;
    EXPECT_EQ(got.report.sensitivity, want.report.sensitivity) << where;
    EXPECT_EQ(got.report.monotone, want.report.monotone) << where;
    EXPECT_EQ(got.report.noise_scale, want.report.noise_scale) << where;
    EXPECT_EQ(got.report.executed_on, want.report.executed_on) << where;
    EXPECT_EQ(got.report.cpu_fallback_reason, want.report.cpu_fallback_reason) << where;
    EXPECT_EQ(got.report.candidates, want.report.candidates) << where;
    EXPECT_EQ(got.report.slack.epsilon, want.report.slack.epsilon) << where;
    EXPECT_EQ(got.report.slack.delta, want.report.slack.delta) << where;
    EXPECT_EQ(got.report.slack.depends_on_data, want.report.slack.depends_on_data) << where;
    EXPECT_EQ(got.report.stream, want.report.stream) << where;
    EXPECT_EQ(got.report.generator, want.report.generator) << where;
  };
  for (std::uint64_t r = 0; r < kRows; ++r) {
    SelectionParams row_params = params;
    if (per_row) row_params.epsilon = epsilons[r];
    Release release = single_context.begin_release(row_params);
    const Selection want = release.finish(release.evaluate(std::span<const T>(matrix.data() + r * cols, cols)));
    expect_same(rows.selections[r], want, r, "select_rows");
    Release again = single_repeated_context.begin_release(params);
    const Selection want_repeated = again.finish(again.evaluate(std::span<const T>(matrix.data(), cols)));
    expect_same(repeated.selections[r], want_repeated, r, "select_repeated");
  }
}

TEST_F(Rows, SmallRowsEqualReleasesOfEachRow) {
  for (std::uint64_t cols = 1; cols <= 33; ++cols) {
    const auto mechanism = static_cast<Mechanism>(cols % 3);
    const Generator generator = cols % 4 == 1 ? Generator::philox : Generator::chacha20;
    const std::optional<double> reference = cols % 5 == 2 ? std::optional<double>(1.25) : std::nullopt;
    expect_rows_equal_releases<float>(mechanism, generator, cols, cols % 2 == 0, reference);
    expect_rows_equal_releases<double>(mechanism, generator, cols, cols % 2 == 1, reference);
  }
  for (const Mechanism mechanism : {Mechanism::exponential, Mechanism::permute_and_flip, Mechanism::laplace_noisy_max}) {
    for (const Generator generator : {Generator::chacha20, Generator::philox}) {
      expect_rows_equal_releases<double>(mechanism, generator, 8, false, std::nullopt);
      expect_rows_equal_releases<float>(mechanism, generator, 32, true, 0.5);
    }
  }
}

TEST_F(Rows, RepeatedAndDeviceBadInputChargesNothing) {
  const std::vector<float> utilities(4, 1.0f);
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  Context context = Context::with_fixed_seed(1);
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{10.0, 0.0});
  context.charge_to(accountant);
  const auto expect_error = [](auto call, const std::string& fragment) {
    try {
      call();
      ADD_FAILURE() << "no exception (" << fragment << ")";
    } catch (const std::exception& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  expect_error([&] { select_repeated(context, std::span<const float>(utilities), params, 0); }, "releases must be at least 1 (got 0)");
  expect_error([&] { select_repeated(context, std::span<const float>(), params, 3); }, "utilities must not be empty");
  SelectionParams bad_epsilon = params;
  bad_epsilon.epsilon = -2.0;
  expect_error([&] { select_repeated(context, std::span<const float>(utilities), bad_epsilon, 3); }, "epsilon");
  // 11 releases of epsilon 1 exceed the budget of 10: refused whole.
  EXPECT_THROW(select_repeated(context, std::span<const float>(utilities), params, 11), BudgetExceeded);
  SelectionParams on_cpu = params;
  on_cpu.backend = Backend::Cpu;
  expect_error([&] { select_rows(context, DeviceMatrix<const float>{utilities.data(), 2, 2}, on_cpu); }, "(got Cpu)");
  SelectionParams on_gpu = params;
  on_gpu.backend = Backend::Gpu;
  expect_error([&] { select_rows(context, DeviceMatrix<const float>{nullptr, 2, 2}, on_gpu); }, "got nullptr");
  expect_error([&] { select_rows(context, DeviceMatrix<const float>{nullptr, 0, 2}, on_gpu); }, "(got 0 x 2)");
  EXPECT_EQ(accountant->spent().epsilon, 0.0);
  const RowsSelection ten = select_repeated(context, std::span<const float>(utilities), params, 10);
  EXPECT_EQ(ten.selections.front().report.stream, 0u);  // nothing was drawn by the failures
  EXPECT_DOUBLE_EQ(accountant->spent().epsilon, 10.0);
}

TEST_F(Rows, BadShapesAndEpsilons) {
  const std::vector<float> matrix(12, 1.0f);
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  Context context = Context::with_fixed_seed(1);
  EXPECT_THROW(select_rows(context, HostMatrix<const float>{matrix.data(), 0, 12}, params), InvalidArgument);
  EXPECT_THROW(select_rows(context, HostMatrix<const float>{matrix.data(), 3, 0}, params), InvalidArgument);
  EXPECT_THROW(select_rows(context, HostMatrix<const float>{nullptr, 3, 4}, params), InvalidArgument);
  const std::vector<double> two = {1.0, 1.0};
  EXPECT_THROW(select_rows(context, HostMatrix<const float>{matrix.data(), 3, 4}, params, two), InvalidArgument);
  const std::vector<double> bad = {1.0, 1.0, -1.0};
  try {
    select_rows(context, HostMatrix<const float>{matrix.data(), 3, 4}, params, bad);
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("row_epsilons[2]"), std::string::npos) << error.what();
  }
  std::vector<float> with_nan = matrix;
  with_nan[6] = NAN;  // row 1, column 2
  try {
    Context other = Context::with_fixed_seed(2);
    select_rows(other, HostMatrix<const float>{with_nan.data(), 3, 4}, params);
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("utilities[2]"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("in row 1"), std::string::npos) << error.what();
  }
  // Nothing was drawn by the failures above.
  EXPECT_EQ(select_rows(context, HostMatrix<const float>{matrix.data(), 3, 4}, params).selections[0].report.stream, 0u);
}

}  // namespace
}  // namespace dpselect::testing
