// SPDX-License-Identifier: Apache-2.0
/// @file
/// Batched selection: one private pick per row of a rows x cols utility matrix (row-major).
/// Each row is a separate release with its own stream of noise (streams drawn consecutively
/// from the context), so row r's pick equals what a single select() over row r would return
/// as the context's (first stream + r)-th release. One epsilon for all rows, or one per row. A
/// context's accountant (Context::charge_to) is charged every row together, before any stream.
///
/// The matrix may live in host memory (HostMatrix; Backend::Cpu scores rows in parallel on all
/// cores, Backend::Gpu copies blocks of rows to the device) or in device memory (DeviceMatrix; GPU
/// only). On the GPU all rows run in one kernel launch (per 2^18 rows): a thread per row up to 64
/// columns, a warp per row up to 2048, a block per row beyond; only rows so long that one alone
/// fills the device (millions of columns) run one release at a time, each over the whole device.
/// select_repeated makes many releases over one row of utilities, for Monte Carlo studies of a
/// mechanism's output distribution (the privacy auditor).
///
/// Example:
///   dpselect::RowsSelection picks = dpselect::select_rows(ctx, dpselect::HostMatrix<const float>{
///       data, 4096, 131072}, params);                 // picks.selections[r].index
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

/// A rows x cols matrix in device (or managed) memory, row-major with no padding.
template <class T>
struct DeviceMatrix {
  T* data = nullptr;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

struct RowsSelection {
  std::vector<Selection> selections;  ///< one per row, index within the row
};

/// Utilities in host memory, one epsilon (params.epsilon) for every row.
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params);
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params);
/// One epsilon per row (row_epsilons.size() == rows; params.epsilon is ignored).
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons);
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons);

/// Utilities in device memory (params.backend Gpu or Auto; Cpu is an error). The work is ordered
/// on `stream`, which the call synchronizes.
RowsSelection select_rows(Context& context, DeviceMatrix<const float> utilities, const SelectionParams& params,
                          cuda_stream_t stream = nullptr);
RowsSelection select_rows(Context& context, DeviceMatrix<const double> utilities, const SelectionParams& params,
                          cuda_stream_t stream = nullptr);
RowsSelection select_rows(Context& context, DeviceMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream = nullptr);
RowsSelection select_rows(Context& context, DeviceMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream = nullptr);

/// `releases` independent releases over the same utilities (host memory), each with its own stream
/// (drawn consecutively), as if select() were called `releases` times: release i equals the
/// context's (first stream + i)-th select(). PRIVACY: about the same data, so they compose: the
/// accountant is charged `releases` releases of params.epsilon (releases x epsilon in all), before
/// any stream is drawn. Every release of a call is held in memory until it finishes (a few hundred
/// bytes each): make large studies in batches. On the GPU the utilities are copied once.
RowsSelection select_repeated(Context& context, std::span<const float> utilities, const SelectionParams& params,
                              std::uint64_t releases);
RowsSelection select_repeated(Context& context, std::span<const double> utilities, const SelectionParams& params,
                              std::uint64_t releases);

}  // namespace dpselect
