// SPDX-License-Identifier: Apache-2.0
/// @file
/// One-shot private top-k: the k candidates with the largest Gumbel-noised scores, in order.
///
/// Durfee & Rogers (NeurIPS 2019): adding Gumbel noise of the exponential mechanism's scale for a
/// per-pick epsilon' once and reporting the k largest noisy scores, in order, has exactly the
/// distribution of k rounds of peeling EM (each picks one remaining candidate with epsilon').
/// Only the exponential mechanism has this property, so top-k is exponential-mechanism only.
///
/// Privacy of the k picks together (report.epsilon_total_basic and rho):
/// - basic composition (Dwork & Roth 2014, Thm 3.16): k * epsilon';
/// - each EM round is epsilon'-bounded-range (also at the monotone scale epsilon'/Delta, where
///   every utility difference lies in [0, Delta]), hence (epsilon'^2 / 8)-zCDP (Cesar & Rogers
///   2021), so the k rounds are (k epsilon'^2 / 8)-zCDP.
///
/// accounting.hpp converts rho to (epsilon, delta): epsilon_from_zcdp() with the standard
/// rho + 2 sqrt(rho ln(1/delta)) of Bun & Steinke Prop. 1.3, epsilon_from_zcdp_tight() with the
/// sharper conversion of Canonne, Kamath & Steinke 2020 (Cor. 13), never larger.
///
/// Example:
/// @code{.cpp}
/// dpselect::TopKParams p;  p.per_pick.epsilon = 0.1;  p.per_pick.sensitivity = 1;  p.k = 100;
/// dpselect::TopKSelection top = dpselect::select_top_k(ctx, std::span<const float>(u), p);
/// @endcode
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// The parameters of a top-k release.
struct TopKParams {
  /// The parameters of each pick: mechanism must be exponential; epsilon is the per-pick
  /// epsilon'; the other fields as for select().
  SelectionParams per_pick;
  /// How many candidates to release: 1 <= k <= the number of candidates that are not excluded
  /// (utility -inf); k <= kGpuTopKMaxK on the GPU.
  std::uint64_t k = 1;
};

/// What a top-k release spent and how it ran.
struct TopKReport {
  SelectionReport per_pick;        ///< epsilon_spent is epsilon'; slack covers one pick
  std::uint64_t k = 0;             ///< The number of picks released.
  double epsilon_total_basic = 0;  ///< k * epsilon' (basic composition, Dwork & Roth 2014, Thm 3.16)
  double rho = 0;                  ///< zCDP of the k picks together: k epsilon'^2 / 8
};

/// A top-k release: the indices and the report.
struct TopKSelection {
  std::vector<std::uint64_t> indices;  ///< k indices, largest noisy score first
  TopKReport report;                   ///< What the release spent and how it ran.
};

/// The GPU pass (one pass over the utilities and a one-block merge, kernels/top_k.cu) takes
/// k <= 1024; the CPU pass (all cores) any k. Both return the same indices for the same key.
inline constexpr std::uint64_t kGpuTopKMaxK = 1024;

/// @name Top-k over utilities in host memory
///@{

/// The k candidates with the largest Gumbel-noised scores, in order, from one pass over utilities
/// in host memory. Backend::Auto runs on the GPU when one is usable and k <= kGpuTopKMaxK, on the
/// CPU otherwise; Backend::Gpu with a larger k is an InvalidArgument.
/// @param context The key and stream source (and accountant, Context::charge_to).
/// @param utilities One utility per candidate, as for select(): finite, or -inf to exclude one.
/// @param params The per-pick parameters and k.
/// @return The k indices, largest noisy score first, and the report.
/// @throws InvalidArgument for bad params (the message names the field and its value), a mechanism
///   other than exponential, k outside [1, number of candidates] or beyond kGpuTopKMaxK with
///   Backend::Gpu (all before any charge), or a NaN, +inf or out-of-bound utility, or k above the
///   number of candidates that are not excluded (found by the pass, after the charge).
/// @throws BudgetExceeded when the context's accountant refuses the k picks (nothing charged).
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU.
/// @par Privacy
/// Each pick is epsilon'-DP; the k together are (k epsilon')-DP by basic composition (Dwork & Roth
/// 2014, Thm 3.16) and (k epsilon'^2 / 8)-zCDP (Cesar & Rogers 2021), as k rounds of peeling EM
/// (Durfee & Rogers 2019). The context's accountant is charged k exponential-mechanism picks at
/// epsilon' before the stream is drawn.
TopKSelection select_top_k(Context& context, std::span<const float> utilities, const TopKParams& params);
TopKSelection select_top_k(Context& context, std::span<const double> utilities, const TopKParams& params);
///@}

/// @name Top-k over utilities in device memory
///@{

/// The same release over utilities in device (or managed) memory, on the GPU (backend Gpu or Auto;
/// k <= kGpuTopKMaxK).
/// @param context The key and stream source (and accountant).
/// @param utilities Device pointer and count.
/// @param params The per-pick parameters and k.
/// @param stream The CUDA stream the pass is ordered on (nullptr: the default stream).
/// @return The k indices, largest noisy score first, and the report.
/// @throws InvalidArgument as for host memory, and for Backend::Cpu or k > kGpuTopKMaxK.
/// @throws BudgetExceeded when the context's accountant refuses the k picks.
/// @throws BackendUnavailable without a usable GPU; CudaError when a CUDA call fails.
/// @par Synchronisation
/// The pass is ordered on `stream` after the work already queued there (which may write the
/// utilities); the call synchronizes `stream` before it returns.
/// @par Privacy
/// As for host memory.
TopKSelection select_top_k(Context& context, DeviceSpan<const float> utilities, const TopKParams& params,
                           cuda_stream_t stream = nullptr);
TopKSelection select_top_k(Context& context, DeviceSpan<const double> utilities, const TopKParams& params,
                           cuda_stream_t stream = nullptr);
///@}

}  // namespace dpselect
