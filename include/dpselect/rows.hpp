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
/// mechanism's output distribution (the privacy auditor). On the CPU, rows of at most 32 columns
/// are scored eight releases at a time: their ChaCha20 blocks at each position come from one SIMD
/// batch (the same bits as one release at a time).
///
/// Every row uses the utility reference `params.utility_reference`, or 0 when none is given
/// (SelectionParams::utility_reference). The call is all or nothing: when any row fails, no row's
/// selection is returned (every row stays charged).
///
/// Example:
/// @code{.cpp}
/// dpselect::RowsSelection picks = dpselect::select_rows(ctx, dpselect::HostMatrix<const float>{
///     data, 4096, 131072}, params);                 // picks.selections[r].index
/// @endcode
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// A rows x cols matrix in host memory, row-major with no padding: element (r, c) is
/// `data[r * cols + c]`.
/// @tparam T `const float` or `const double`.
template <class T>
struct HostMatrix {
  T* data = nullptr;       ///< The first element (row 0, column 0); not nullptr.
  std::uint64_t rows = 0;  ///< The number of rows (releases); >= 1.
  std::uint64_t cols = 0;  ///< The number of columns (candidates per row); >= 1.
};

/// A rows x cols matrix in device (or managed) memory, row-major with no padding.
///
/// As for DeviceSpan, pinned host memory is accepted too, and pageable host memory only where the
/// device reads it.
/// @tparam T `const float` or `const double`.
template <class T>
struct DeviceMatrix {
  T* data = nullptr;       ///< The first element, in memory the current device can read; not nullptr.
  std::uint64_t rows = 0;  ///< The number of rows (releases); >= 1.
  std::uint64_t cols = 0;  ///< The number of columns (candidates per row); >= 1.
};

/// The results of a batch of releases: one Selection per row (or per repetition), in row order.
struct RowsSelection {
  std::vector<Selection> selections;  ///< one per row, index within the row
};

/// @name Host memory, one epsilon
///@{

/// Utilities in host memory, one epsilon (params.epsilon) for every row.
///
/// Row r is its own release over candidates [0, cols), with the context's (first stream + r)-th
/// stream: its pick equals what select() over row r returns as that release (with utility
/// reference `params.utility_reference` or 0). Backend::Cpu scores rows in parallel on all cores;
/// on the GPU (Backend::Gpu, or Auto with a usable GPU) blocks of whole rows are copied to the device
/// and scored in batched launches.
/// @param context The context whose key and next streams the releases use (and whose accountant they
///        charge).
/// @param utilities The matrix (HostMatrix): rows >= 1, cols >= 1, data not nullptr; each utility
///        finite, or -inf to exclude that candidate of its row.
/// @param params The parameters of every row (SelectionParams).
/// @return One Selection per row, in row order; each index is a column.
/// @throws InvalidArgument before the charge for an empty matrix, a nullptr, a matrix too large to
///         address, or bad params; after it (from each row's finish, the message naming the row) for
///         a NaN, +inf or out-of-bound utility, a row with every candidate excluded, or a
///         floating-point slack that would reach epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the rows' charge; no stream is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// On the GPU the passes run on streams of the library's own and are complete when the call returns;
/// `utilities` is yours again on return.
/// @par Privacy
/// Each row's index is epsilon-DP under exact arithmetic for that row's data (Dwork & Roth 2014,
/// Def. 3.4, Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), (epsilon + slack.epsilon,
/// slack.delta)-DP as computed (each row's report). The accountant is charged `rows` releases of
/// `release_kind(params.mechanism)` at `params.epsilon` in one charge, after every parameter check and
/// before the first row's stream. Rows about the same data compose (Dwork & Roth 2014, Thm 3.16 and
/// the accountant's other theorems); rows about disjoint data do not, so charge them to one accountant
/// only when they are about the same data.
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params);
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params);
///@}

/// @name Host memory, one epsilon per row
///@{

/// One epsilon per row (row_epsilons.size() == rows; params.epsilon is ignored).
///
/// As the overloads above, with row r released at `row_epsilons[r]`.
/// @param context The context whose key and next streams the releases use (and whose accountant they
///        charge).
/// @param utilities The matrix (HostMatrix): rows >= 1, cols >= 1, data not nullptr.
/// @param params The parameters of every row except epsilon (SelectionParams).
/// @param row_epsilons The epsilon of each row: `rows` values, each finite and > 0 (and valid with
///        params as SelectionParams says).
/// @return One Selection per row, in row order; each index is a column.
/// @throws InvalidArgument before the charge for an empty matrix, a nullptr, a matrix too large to
///         address, a row_epsilons of another size, or bad params (the message naming
///         `row_epsilons[r]`); after it (from each row's finish, naming the row) for a NaN, +inf or
///         out-of-bound utility, a row with every candidate excluded, or a slack that would reach its
///         epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the rows' charge; no stream is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// On the GPU the passes run on streams of the library's own and are complete when the call returns;
/// `utilities` is yours again on return.
/// @par Privacy
/// Row r's index is `row_epsilons[r]`-DP under exact arithmetic (sources as above), plus its report's
/// slack. The accountant is charged one release of `release_kind(params.mechanism)` per row at its
/// epsilon (consecutive equal epsilons in one entry), all in one charge before the first row's stream.
RowsSelection select_rows(Context& context, HostMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons);
RowsSelection select_rows(Context& context, HostMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons);
///@}

/// @name Device memory, one epsilon
///@{

/// Utilities in device memory (params.backend Gpu or Auto; Cpu is an error). The work is ordered
/// on `stream`, which the call synchronizes.
///
/// Row r is its own release over candidates [0, cols) with the context's (first stream + r)-th
/// stream, as for host memory; every row runs on the GPU (one launch per 2^18 rows).
/// @param context The context whose key and next streams the releases use (and whose accountant they
///        charge).
/// @param utilities The matrix (DeviceMatrix): rows >= 1, cols >= 1, data readable by the current
///        device.
/// @param params The parameters of every row (SelectionParams); backend Auto or Gpu.
/// @param stream A stream of the current device (nullptr, the default: the legacy default stream).
/// @return One Selection per row, in row order; each index is a column.
/// @throws InvalidArgument before the charge for an empty matrix, a nullptr or pageable host pointer
///         the device cannot read, Backend::Cpu, or bad params; after it (from each row's finish,
///         naming the row) for a NaN, +inf or out-of-bound utility, a row with every candidate
///         excluded, or a slack that would reach epsilon.
/// @throws BackendUnavailable without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the rows' charge; no stream is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// The launches are enqueued on `stream` behind the work already there (so a matrix written by earlier
/// work on `stream` is read as written), and the call synchronizes `stream` before it returns, after
/// which the memory may be overwritten or freed. Work on other streams is not ordered with it.
/// @par Privacy
/// As for host memory: each row's index is epsilon-DP under exact arithmetic (Dwork & Roth 2014,
/// Def. 3.4, Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus its report's slack; the
/// accountant is charged `rows` releases of `release_kind(params.mechanism)` at `params.epsilon` in
/// one charge before the first row's stream.
RowsSelection select_rows(Context& context, DeviceMatrix<const float> utilities, const SelectionParams& params,
                          cuda_stream_t stream = nullptr);
RowsSelection select_rows(Context& context, DeviceMatrix<const double> utilities, const SelectionParams& params,
                          cuda_stream_t stream = nullptr);
///@}

/// @name Device memory, one epsilon per row
///@{

/// Utilities in device memory with one epsilon per row (`row_epsilons.size() == rows`;
/// params.epsilon is ignored).
///
/// As the overloads above, with row r released at `row_epsilons[r]`.
/// @param context The context whose key and next streams the releases use (and whose accountant they
///        charge).
/// @param utilities The matrix (DeviceMatrix): rows >= 1, cols >= 1, data readable by the current
///        device.
/// @param params The parameters of every row except epsilon (SelectionParams); backend Auto or Gpu.
/// @param row_epsilons The epsilon of each row (host memory): `rows` values, each finite and > 0.
/// @param stream A stream of the current device (nullptr, the default: the legacy default stream).
/// @return One Selection per row, in row order; each index is a column.
/// @throws InvalidArgument before the charge for an empty matrix, a nullptr or pageable host pointer
///         the device cannot read, Backend::Cpu, a row_epsilons of another size, or bad params (naming
///         `row_epsilons[r]`); after it (from each row's finish, naming the row) for a NaN, +inf or
///         out-of-bound utility, a row with every candidate excluded, or a slack that would reach its
///         epsilon.
/// @throws BackendUnavailable without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the rows' charge; no stream is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// The launches are enqueued on `stream` behind the work already there, and the call synchronizes
/// `stream` before it returns. Work on other streams is not ordered with it.
/// @par Privacy
/// Row r's index is `row_epsilons[r]`-DP under exact arithmetic (sources as above), plus its report's
/// slack. The accountant is charged one release of `release_kind(params.mechanism)` per row at its
/// epsilon, all in one charge before the first row's stream.
RowsSelection select_rows(Context& context, DeviceMatrix<const float> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream = nullptr);
RowsSelection select_rows(Context& context, DeviceMatrix<const double> utilities, const SelectionParams& params,
                          std::span<const double> row_epsilons, cuda_stream_t stream = nullptr);
///@}

/// @name Repeated releases over one row
///@{

/// `releases` independent releases over the same utilities (host memory), each with its own stream
/// (drawn consecutively), as if select() were called `releases` times: release i equals the
/// context's (first stream + i)-th select(). PRIVACY: about the same data, so they compose: the
/// accountant is charged `releases` releases of params.epsilon (releases x epsilon in all), before
/// any stream is drawn. Every release's Selection (and, unless the CPU scores rows of at most 32
/// candidates, its noise spec and shard result) is held in memory until the call returns (a few
/// hundred bytes each): make large studies in batches. On the GPU the utilities are copied once.
///
/// Runs on the CPU (releases in parallel) or, with Backend::Gpu or Auto and a usable GPU, in batched
/// launches. Uses the utility reference `params.utility_reference`, or 0 when none is given.
/// @param context The context whose key and next streams the releases use (and whose accountant they
///        charge).
/// @param utilities The utility of candidate i at index i: not empty; finite, or -inf to exclude.
/// @param params The parameters of every release (SelectionParams).
/// @param releases The number of releases; >= 1.
/// @return One Selection per release, in stream order.
/// @throws InvalidArgument before the charge for releases == 0, empty utilities or bad params; after
///         it (from each release's finish, naming it as a row) for a NaN, +inf or out-of-bound
///         utility, every candidate excluded, or a slack that would reach epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the rows' charge; no stream is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// On the GPU the passes run on streams of the library's own and are complete when the call returns.
/// @par Privacy
/// Each release is epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4, Thm 3.10; McKenna
/// & Sheldon 2020; Dwork & Roth Claim 3.9), plus its report's slack; together they are about the same
/// data and compose (Dwork & Roth 2014, Thm 3.16: `releases * epsilon` by basic composition). The
/// accountant is charged `releases` releases of `release_kind(params.mechanism)` at `params.epsilon`
/// in one charge, before any stream is drawn.
RowsSelection select_repeated(Context& context, std::span<const float> utilities, const SelectionParams& params,
                              std::uint64_t releases);
RowsSelection select_repeated(Context& context, std::span<const double> utilities, const SelectionParams& params,
                              std::uint64_t releases);
///@}

}  // namespace dpselect
