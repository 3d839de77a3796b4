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
///   basic composition (Dwork & Roth 2014, Thm 3.16): k * epsilon';
///   each EM round is epsilon'-bounded-range (also at the monotone scale epsilon'/Delta, where every
///   utility difference lies in [0, Delta]), hence (epsilon'^2 / 8)-zCDP (Cesar & Rogers 2021), so
///   the k rounds are (k epsilon'^2 / 8)-zCDP.
/// accounting.hpp converts rho to (epsilon, delta): epsilon_from_zcdp() with the standard
/// rho + 2 sqrt(rho ln(1/delta)) of Bun & Steinke Prop. 1.3, epsilon_from_zcdp_tight() with the
/// sharper conversion of Canonne, Kamath & Steinke 2020 (Cor. 13), never larger.
///
/// Example:
///   dpselect::TopKParams p;  p.per_pick.epsilon = 0.1;  p.per_pick.sensitivity = 1;  p.k = 100;
///   dpselect::TopKSelection top = dpselect::select_top_k(ctx, std::span<const float>(u), p);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

struct TopKParams {
  /// mechanism must be exponential; epsilon is the per-pick epsilon'.
  SelectionParams per_pick;
  std::uint64_t k = 1;  ///< 1 <= k <= number of candidates
};

struct TopKReport {
  SelectionReport per_pick;       ///< epsilon_spent is epsilon'; slack covers one pick
  std::uint64_t k = 0;
  double epsilon_total_basic = 0;  ///< k * epsilon'
  double rho = 0;                  ///< zCDP of the k picks together
};

struct TopKSelection {
  std::vector<std::uint64_t> indices;  ///< k indices, largest noisy score first
  TopKReport report;
};

/// The GPU pass (one pass over the utilities and a one-block merge, kernels/top_k.cu) takes
/// k <= 1024; the CPU pass (all cores) any k. Both return the same indices for the same key.
inline constexpr std::uint64_t kGpuTopKMaxK = 1024;

/// Utilities in host memory. Charges the context's accountant k exponential-mechanism picks at
/// epsilon' before drawing the stream (Context::charge_to). Backend::Auto runs on the GPU when one
/// is usable and k <= kGpuTopKMaxK, on the CPU otherwise; Backend::Gpu with a larger k is an
/// InvalidArgument.
TopKSelection select_top_k(Context& context, std::span<const float> utilities, const TopKParams& params);
TopKSelection select_top_k(Context& context, std::span<const double> utilities, const TopKParams& params);
/// Utilities in device memory (backend Gpu or Auto; k <= kGpuTopKMaxK). Synchronizes `stream`.
TopKSelection select_top_k(Context& context, DeviceSpan<const float> utilities, const TopKParams& params,
                           cuda_stream_t stream = nullptr);
TopKSelection select_top_k(Context& context, DeviceSpan<const double> utilities, const TopKParams& params,
                           cuda_stream_t stream = nullptr);

}  // namespace dpselect
