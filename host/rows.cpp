// Batched selection: one release per row (see rows.hpp).
#include "dpselect/rows.hpp"

#include <exception>
#include <string>
#include <vector>

#include <omp.h>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "validation.hpp"

namespace dpselect {
namespace {

template <class T>
RowsSelection rows(Context& context, HostMatrix<const T> utilities, const SelectionParams& params,
                   std::span<const double> row_epsilons) {
  if (utilities.rows == 0 || utilities.cols == 0) {
    throw InvalidArgument("dpselect: utilities must have at least one row and one column (got " +
                          std::to_string(utilities.rows) + " x " + std::to_string(utilities.cols) + ")");
  }
  if (utilities.data == nullptr) throw InvalidArgument("dpselect: utilities.data must not be nullptr");
  detail::validate_candidate_count("utilities row", utilities.cols, 0);
  const bool per_row = !row_epsilons.empty();
  if (per_row && row_epsilons.size() != utilities.rows) {
    throw InvalidArgument("dpselect: row_epsilons must hold one epsilon per row, " +
                          std::to_string(utilities.rows) + " (got " + std::to_string(row_epsilons.size()) + ")");
  }
  std::vector<SelectionParams> row_params(utilities.rows, params);
  for (std::uint64_t r = 0; r < utilities.rows; ++r) {
    if (per_row) row_params[r].epsilon = row_epsilons[r];
    try {
      detail::validate_release_params(row_params[r]);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string(error.what()) + (per_row ? " in row_epsilons[" + std::to_string(r) + "]" : ""));
    }
  }
  detail::resolve_backend(params.backend);

  // Every row is its own release, all charged together before the first stream is drawn; the
  // streams are drawn in row order.
  std::vector<PrivacyCharge> charges;
  for (const SelectionParams& row : row_params) {
    const PrivacyCharge charge{release_kind(row.mechanism), row.epsilon, 0.0, 1};
    if (!charges.empty() && charges.back().epsilon == charge.epsilon && charges.back().kind == charge.kind) {
      ++charges.back().count;
    } else {
      charges.push_back(charge);
    }
  }
  detail::ContextAccess::charge(context, charges);
  std::vector<Release> releases;
  releases.reserve(utilities.rows);
  for (std::uint64_t r = 0; r < utilities.rows; ++r) {
    releases.push_back(detail::ContextAccess::begin_charged_release(context, row_params[r]));
  }
  std::vector<ShardResult> results(utilities.rows);
  std::exception_ptr failure;
  // With at least as many rows as threads, rows run in parallel and each row's pass on its
  // thread alone (nested regions are serialized); with fewer rows, each row's pass uses every
  // core.
  const bool parallel_rows = utilities.rows >= static_cast<std::uint64_t>(omp_get_max_threads());
#pragma omp parallel for schedule(dynamic, 1) if (parallel_rows)
  for (std::uint64_t r = 0; r < utilities.rows; ++r) {
    try {
      results[r] = releases[r].evaluate(
          std::span<const T>(utilities.data + r * utilities.cols, utilities.cols), 0);
    } catch (...) {
#pragma omp critical
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  // All or nothing: nothing is returned unless every row finishes.
  RowsSelection selection;
  selection.selections.reserve(utilities.rows);
  for (std::uint64_t r = 0; r < utilities.rows; ++r) {
    try {
      selection.selections.push_back(releases[r].finish(results[r]));
    } catch (const InvalidArgument& error) {  // finish() names the column; add the row
      throw InvalidArgument(std::string(error.what()) + " in row " + std::to_string(r));
    }
  }
  return selection;
}

}  // namespace

RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params) {
  return rows(context, utilities, params, {});
}
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params) {
  return rows(context, utilities, params, {});
}
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons) {
  return rows(context, utilities, params, row_epsilons);
}
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons) {
  return rows(context, utilities, params, row_epsilons);
}

}  // namespace dpselect
