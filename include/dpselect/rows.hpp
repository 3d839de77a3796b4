// Batched selection: one private pick per row of a rows x cols utility matrix (row-major).
// Each row is a separate release with its own stream of noise (streams drawn consecutively
// from the context), so row r's pick equals what a single select() over row r would return
// as the context's (first stream + r)-th release. One epsilon for all rows, or one per row. A
// context's accountant (Context::charge_to) is charged every row together, before any stream.
//
// Example:
//   dpselect::RowsSelection picks = dpselect::select_rows(ctx, dpselect::HostMatrix<const float>{
//       data, 4096, 131072}, params);                 // picks.selections[r].index
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

template <class T>
struct HostMatrix {
  T* data = nullptr;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

struct RowsSelection {
  std::vector<Selection> selections;  // one per row, index within the row
};

// Utilities in host memory, one epsilon (params.epsilon) for every row.
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params);
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params);
// One epsilon per row (row_epsilons.size() == rows; params.epsilon is ignored).
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons);
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons);

}  // namespace dpselect
