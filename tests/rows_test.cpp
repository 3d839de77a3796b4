// Batched rows on the test's backend: each row is its own release and equals a single select
// over that row as the context's next release; per-row epsilons; bad shapes.
#include <cmath>
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
