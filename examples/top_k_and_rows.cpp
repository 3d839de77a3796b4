// SPDX-License-Identifier: Apache-2.0
// A one-shot private top-100 of 10,000 candidates, then one private pick per row of a matrix.
#include <dpselect/dpselect.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  std::vector<float> u(10'000);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(std::sqrt(static_cast<double>(i)));
  const std::uint64_t rows = 64;
  const std::uint64_t cols = 1000;
  std::vector<float> matrix(rows * cols);
  for (std::size_t i = 0; i < matrix.size(); ++i) matrix[i] = static_cast<float>(i % cols) * 0.01f;
  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  // [doc:top_k_and_rows]
  dpselect::TopKParams top;                  // one-shot Gumbel top-k (Durfee & Rogers 2019)
  top.selection.epsilon = 5.0;               // the 100 picks together (epsilon' = 0.05 a pick)
  top.selection.sensitivity = 1.0;
  top.k = 100;
  dpselect::TopKSelection best = dpselect::select_top_k(context, std::span<const float>(u), top);
  // best.indices (largest noisy score first); best.report.epsilon_total_basic = k * epsilon' = 5;
  // best.report.rho = k epsilon'^2 / 8: zCDP (Cesar & Rogers 2021), converted to (epsilon, delta)
  // by a conversion of <dpselect/accounting.hpp>:
  const double epsilon_total = dpselect::epsilon_from_zcdp(best.report.rho, 1e-6);  // 1.35, not 5

  dpselect::RowsSelection picks = dpselect::select_rows(
      context, dpselect::HostMatrix<const float>{matrix.data(), rows, cols}, params);   // one release per row
  // [/doc:top_k_and_rows]
  std::cout << "top-k: best " << best.indices.front() << ", (" << epsilon_total << ", 1e-6)-DP (basic: "
            << best.report.epsilon_total_basic << "); rows: row 0 picks " << picks.selections.front().index << '\n';
  return best.indices.size() == top.k && picks.selections.size() == rows ? 0 : 1;
}
