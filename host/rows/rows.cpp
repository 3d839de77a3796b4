// SPDX-License-Identifier: Apache-2.0
// Batched selection: one release per row (see rows.hpp).
#include "dpselect/rows.hpp"

#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "selection/cpu_backend.hpp"
#include "device/gpu.hpp"
#include "engine/release_steps.hpp"
#include "rows/row_passes.hpp"
#include "rows/small_rows.hpp"
#include "validation/validation.hpp"

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

// Every check that can fail, before any charge: the parameters of each row (one entry when every
// row shares them).
template <class T>
std::vector<SelectionParams> checked_row_params(const RowSource<T>& source, const SelectionParams& params,
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
  return row_params;
}

// One charge for every row (rows.hpp): one entry per run of equal epsilons.
void charge_rows(Context& context, std::span<const SelectionParams> row_params, std::uint64_t rows) {
  std::vector<PrivacyCharge> charges;
  if (row_params.size() == 1) {
    charges.push_back(PrivacyCharge{release_kind(row_params[0].mechanism), row_params[0].epsilon, 0.0, rows});
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
}

// The rows' shards on the GPU (one batched pass) or on the CPU (each row's pass as Release::evaluate
// makes it), unstamped. Each must have scored its row's candidates once, as Release::finish
// checks of a release's shards: the GPU cuts rows among warps, blocks and segments by shape, and a
// row scored twice or in part would report the wrong candidates and slack.
template <class T>
std::vector<ShardResult> score_rows(const RowSource<T>& source, std::span<const detail::NoiseSpec> specs, bool on_gpu) {
  std::vector<ShardResult> results;
  if (on_gpu) {
    results.resize(source.rows);
    detail::gpu_evaluate_rows(specs, source.data, source.cols, source.row_stride, source.on_device, source.stream,
                              results);
  } else {
    results = detail::score_each_row_on_cpu(source.rows, [&](std::uint64_t r) {
      return detail::cpu_evaluate_array(specs[r], source.data + r * source.row_stride, IndexRange{0, source.cols});
    });
  }
  for (std::uint64_t r = 0; r < source.rows; ++r) {
    if (results[r].candidates != source.cols) {
      throw std::logic_error("dpselect: internal error: row " + std::to_string(r) + "'s pass scored " +
                             std::to_string(results[r].candidates) + " of its " + std::to_string(source.cols) +
                             " candidates; nothing was released");
    }
  }
  return results;
}

// Every row is its own release (rows.hpp) with stream first_stream + r, begun and finished with the
// steps a Release takes (release_steps.hpp) but without building one: the charge, the streams and
// the reports are the call's, once. Rows of at most one group on the CPU are begun, scored and
// finished in batches (small_rows.hpp); the others are scored together, then finished in row order.
template <class T>
RowsSelection select_each_row(Context& context, const RowSource<T>& source, const SelectionParams& params,
                              std::span<const double> row_epsilons, const char* rows_name) {
  const std::vector<SelectionParams> row_params = checked_row_params(source, params, row_epsilons, rows_name);
  const bool on_gpu = source.on_device || detail::resolve_backend(params.backend) == Backend::Gpu;
  const bool small_rows = !on_gpu && source.cols <= detail::kSmallRowMaxColumns;
  const bool per_row = row_params.size() > 1;
  // The memory is taken before the charge: after it, nothing fails but a row (or a CUDA call).
  RowsSelection selection;
  selection.selections.resize(source.rows);
  std::vector<detail::NoiseSpec> specs(small_rows ? 0 : source.rows);
  charge_rows(context, row_params, source.rows);
  const detail::ContextAccess::KeyedStream first = detail::ContextAccess::draw_streams(context, source.rows);
  detail::RowFailure failure;
  if (small_rows) {
    failure = detail::select_small_rows_on_cpu(row_params, first.key, first.stream, source.data, source.cols,
                                               source.row_stride, selection.selections);
  } else {
    detail::UtilityReference reference = detail::UtilityReference::zero;  // fixed by the params: one for all rows
    for (std::uint64_t r = 0; r < source.rows; ++r) {
      const SelectionParams& params = row_params[per_row ? r : 0];
      specs[r] = detail::release_noise_spec(params, detail::score_scale(params), first.key, first.stream + r, reference);
    }
    const std::vector<ShardResult> results = score_rows(source, specs, on_gpu);
    for (std::uint64_t r = 0; r < source.rows && !failure.error; ++r) {
      try {
        selection.selections[r] = detail::finish_selection(row_params[per_row ? r : 0], specs[r], reference, results[r]);
      } catch (const InvalidArgument&) {
        failure = detail::RowFailure{r, std::current_exception()};
      }
    }
  }
  // All or nothing: nothing is returned unless every row finishes.
  if (failure.error) {
    try {
      std::rethrow_exception(failure.error);
    } catch (const InvalidArgument& error) {  // finish() names the column; add the row
      throw InvalidArgument(std::string(error.what()) + " in row " + std::to_string(failure.row));
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
