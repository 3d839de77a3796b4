// SPDX-License-Identifier: Apache-2.0
// Batched selection: one release per row (see rows.hpp).
#include "dpselect/rows.hpp"

#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "engine/gpu_backend.hpp"
#include "engine/row_passes.hpp"
#include "engine/validation.hpp"

namespace dpselect {
namespace {

// Where the rows live. row_stride is the distance between rows in elements: cols for a matrix,
// 0 when every release reads the same row.
template <class T>
struct RowSource {
  const T* data;
  std::uint64_t rows;
  std::uint64_t cols;
  std::uint64_t row_stride;
  bool on_device;
  cuda_stream_t stream;
};

// Every check that can fail, then one charge for all rows, then the streams in row order.
template <class T>
std::vector<Release> begin_row_releases(Context& context, const RowSource<T>& source, const SelectionParams& params,
                                        std::span<const double> row_epsilons, const char* rows_name) {
  if (source.rows == 0 || source.cols == 0) {
    throw InvalidArgument(std::string("dpselect: ") + rows_name + " must have at least one row and one column (got " +
                          std::to_string(source.rows) + " x " + std::to_string(source.cols) + ")");
  }
  if (source.on_device) {
    detail::validate_device_utilities(source.data, source.cols, 0, params.backend);
  } else if (source.data == nullptr) {
    throw InvalidArgument("dpselect: utilities.data must not be nullptr");
  }
  detail::validate_candidate_count("utilities row", source.cols, 0);
  if (source.row_stride != 0 && source.rows > std::numeric_limits<std::uint64_t>::max() / sizeof(T) / source.cols) {
    throw InvalidArgument("dpselect: a " + std::to_string(source.rows) + " x " + std::to_string(source.cols) +
                          " matrix does not fit in memory");
  }
  const bool per_row = !row_epsilons.empty();
  if (per_row && row_epsilons.size() != source.rows) {
    throw InvalidArgument("dpselect: row_epsilons must hold one epsilon per row, " + std::to_string(source.rows) +
                          " (got " + std::to_string(row_epsilons.size()) + ")");
  }
  std::vector<SelectionParams> row_params(per_row ? source.rows : 1, params);
  for (std::size_t r = 0; r < row_params.size(); ++r) {
    if (per_row) row_params[r].epsilon = row_epsilons[r];
    try {
      detail::validate_release_params(row_params[r]);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string(error.what()) + (per_row ? " in row_epsilons[" + std::to_string(r) + "]" : ""));
    }
  }
  detail::resolve_backend(params.backend);

  // Every row is its own release (rows.hpp), charged together before the first stream is drawn;
  // the memory for the releases is taken before the charge, so nothing fails after it.
  std::vector<Release> releases;
  releases.reserve(source.rows);
  std::vector<PrivacyCharge> charges;
  if (!per_row) {
    charges.push_back(PrivacyCharge{release_kind(params.mechanism), params.epsilon, 0.0, source.rows});
  } else {
    for (const SelectionParams& row : row_params) {
      if (!charges.empty() && charges.back().epsilon == row.epsilon) {
        ++charges.back().count;
      } else {
        charges.push_back(PrivacyCharge{release_kind(row.mechanism), row.epsilon, 0.0, 1});
      }
    }
  }
  detail::ContextAccess::charge(context, charges);
  for (std::uint64_t r = 0; r < source.rows; ++r) {
    releases.push_back(detail::ContextAccess::begin_charged_release(context, row_params[per_row ? r : 0]));
  }
  return releases;
}

template <class T>
RowsSelection select_each_row(Context& context, const RowSource<T>& source, const SelectionParams& params,
                              std::span<const double> row_epsilons, const char* rows_name) {
  std::vector<Release> releases = begin_row_releases(context, source, params, row_epsilons, rows_name);
  const bool on_gpu = source.on_device || detail::ReleaseAccess::resolved_backend(releases.front()) == Backend::Gpu;
  const std::vector<ShardResult> results =
      on_gpu ? detail::score_rows_on_gpu(std::span(releases), source.data, source.cols, source.row_stride,
                                         source.on_device, source.stream)
             : detail::score_rows_on_cpu(std::span(releases), source.data, source.cols, source.row_stride);
  // All or nothing: nothing is returned unless every row finishes.
  RowsSelection selection;
  selection.selections.reserve(source.rows);
  for (std::uint64_t r = 0; r < source.rows; ++r) {
    try {
      selection.selections.push_back(releases[r].finish(results[r]));
    } catch (const InvalidArgument& error) {  // finish() names the column; add the row
      throw InvalidArgument(std::string(error.what()) + " in row " + std::to_string(r));
    }
  }
  return selection;
}

template <class T>
RowsSelection host_rows(Context& context, HostMatrix<const T> utilities, const SelectionParams& params,
                        std::span<const double> row_epsilons) {
  const RowSource<T> source{utilities.data, utilities.rows, utilities.cols, utilities.cols, false, nullptr};
  return select_each_row(context, source, params, row_epsilons, "utilities");
}

template <class T>
RowsSelection device_rows(Context& context, DeviceMatrix<const T> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream) {
  const RowSource<T> source{utilities.data, utilities.rows, utilities.cols, utilities.cols, true, stream};
  return select_each_row(context, source, params, row_epsilons, "utilities");
}

template <class T>
RowsSelection repeated(Context& context, std::span<const T> utilities, const SelectionParams& params,
                       std::uint64_t releases) {
  if (releases == 0) throw InvalidArgument("dpselect: releases must be at least 1 (got 0)");
  if (utilities.empty()) throw InvalidArgument("dpselect: utilities must not be empty");
  const RowSource<T> source{utilities.data(), releases, utilities.size(), 0, false, nullptr};
  return select_each_row(context, source, params, {}, "utilities x releases");
}

}  // namespace

RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params) {
  return host_rows(context, utilities, params, {});
}
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params) {
  return host_rows(context, utilities, params, {});
}
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons) {
  return host_rows(context, utilities, params, row_epsilons);
}
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons) {
  return host_rows(context, utilities, params, row_epsilons);
}
RowsSelection select_rows(Context& context, DeviceMatrix<const float> utilities, const SelectionParams& params,
                          cuda_stream_t stream) {
  return device_rows(context, utilities, params, {}, stream);
}
RowsSelection select_rows(Context& context, DeviceMatrix<const double> utilities, const SelectionParams& params,
                          cuda_stream_t stream) {
  return device_rows(context, utilities, params, {}, stream);
}
RowsSelection select_rows(Context& context, DeviceMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream) {
  return device_rows(context, utilities, params, row_epsilons, stream);
}
RowsSelection select_rows(Context& context, DeviceMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream) {
  return device_rows(context, utilities, params, row_epsilons, stream);
}
RowsSelection select_repeated(Context& context, std::span<const float> utilities, const SelectionParams& params,
                              std::uint64_t releases) {
  return repeated(context, utilities, params, releases);
}
RowsSelection select_repeated(Context& context, std::span<const double> utilities, const SelectionParams& params,
                              std::uint64_t releases) {
  return repeated(context, utilities, params, releases);
}

}  // namespace dpselect
