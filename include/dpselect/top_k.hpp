// SPDX-License-Identifier: Apache-2.0
/// @file
/// One-shot private top-k: the k candidates with the largest Gumbel-noised scores, in order.
///
/// `selection.epsilon` is what the release spends in all, the k picks together: each pick is an
/// exponential-mechanism round at epsilon' = epsilon / k (rounded down, so that k epsilon' <= epsilon),
/// the same meaning as the `dpselect topk` command's and Python's `epsilon`.
///
/// Durfee & Rogers (NeurIPS 2019): adding Gumbel noise of the exponential mechanism's scale for
/// epsilon' once and reporting the k largest noisy scores, in order, has exactly the distribution
/// of k rounds of peeling EM (each picks one remaining candidate with epsilon'). Only the
/// exponential mechanism has this property, so top-k is exponential-mechanism only.
///
/// Privacy of the k picks together (report.epsilon_total_basic and rho):
/// - basic composition (Dwork & Roth 2014, Thm 3.16): k * epsilon' <= epsilon;
/// - each EM round is epsilon'-bounded-range (also at the monotone scale epsilon'/Delta, where
///   every utility difference lies in [0, Delta]), hence (epsilon'^2 / 8)-zCDP (Cesar & Rogers
///   2021), so the k rounds are (k epsilon'^2 / 8)-zCDP = (epsilon^2 / (8 k))-zCDP.
///
/// accounting.hpp converts rho to (epsilon, delta): epsilon_from_zcdp() with the standard
/// rho + 2 sqrt(rho ln(1/delta)) of Bun & Steinke Prop. 1.3, epsilon_from_zcdp_tight() with the
/// sharper conversion of Canonne, Kamath & Steinke 2020 (Cor. 13), never larger.
///
/// Example:
/// @code{.cpp}
/// dpselect::TopKParams p;  p.selection.epsilon = 1;  p.selection.sensitivity = 1;  p.k = 100;  // 0.01 a pick
/// dpselect::TopKSelection top = dpselect::select_top_k(ctx, std::span<const float>(u), p);
/// @endcode
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/chunked_values.hpp"
#include "dpselect/context.hpp"
#include "dpselect/release_ticket.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// The parameters of a top-k release.
struct TopKParams {
  /// The parameters of the release: mechanism must be exponential; epsilon is what the k picks
  /// spend together (each pick epsilon / k, reported as report.per_pick.epsilon_spent); the other
  /// fields as for select().
  SelectionParams selection;
  /// How many candidates to release: 1 <= k <= the number of candidates that are not excluded
  /// (utility -inf); k <= kGpuTopKMaxK on the GPU.
  std::uint64_t k = 1;
};

/// What a top-k release spent and how it ran.
struct TopKReport {
  SelectionReport per_pick;        ///< epsilon_spent is epsilon' = epsilon / k; slack covers one pick
  std::uint64_t k = 0;             ///< The number of picks released.
  double epsilon_total_basic = 0;  ///< k * epsilon' <= epsilon (basic composition, Dwork & Roth 2014, Thm 3.16)
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
/// @param params The release's parameters (selection.epsilon: the k picks together) and k.
/// @return The k indices, largest noisy score first, and the report.
/// @throws InvalidArgument for bad params (the message names the field and its value), a mechanism
///   other than exponential, k outside [1, number of candidates] or beyond kGpuTopKMaxK with
///   Backend::Gpu, or an epsilon / k that is not a normal double (all before any charge), or a NaN, +inf or out-of-bound utility, or k above the
///   number of candidates that are not excluded (found by the pass, after the charge).
/// @throws BudgetExceeded when the context's accountant refuses the k picks (nothing charged).
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU.
/// @par Privacy
/// Each pick is epsilon'-DP (epsilon' = epsilon / k); the k together are epsilon-DP by basic
/// composition (Dwork & Roth 2014, Thm 3.16) and (k epsilon'^2 / 8)-zCDP (Cesar & Rogers 2021), as
/// k rounds of peeling EM (Durfee & Rogers 2019). The context's accountant is charged k
/// exponential-mechanism picks at epsilon' (epsilon in all) before the stream is drawn.
TopKSelection select_top_k(Context& context, std::span<const float> utilities, const TopKParams& params);
TopKSelection select_top_k(Context& context, std::span<const double> utilities, const TopKParams& params);
///@}

/// @name Top-k over utilities in device memory
///@{

/// The same release over utilities in device (or managed) memory, on the GPU (backend Gpu or Auto;
/// k <= kGpuTopKMaxK).
/// @param context The key and stream source (and accountant).
/// @param utilities Device pointer and count.
/// @param params The release's parameters (selection.epsilon: the k picks together) and k.
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

/// @name Utilities read a chunk at a time
///@{

/// Utilities read by the caller a chunk at a time (chunked_values.hpp): an input larger than
/// memory. The same k indices, in the same order, with the same report and charge, as
/// select_top_k() over the whole array on the CPU; the passes run on all CPU cores, holding one chunk
/// and the k best so far.
/// @param context As for select_top_k().
/// @param utilities The candidates' count, the reader and the chunk size (ChunkedValues).
/// @param params As for select_top_k(); selection.backend Auto or Cpu.
/// @return The k indices, best first, and the report.
/// @throws InvalidArgument before the charge for bad params, k outside [1, size], a size of 0 or
///         beyond 2^63, an empty reader, a chunk size of 0 or selection.backend Gpu; after it as
///         select_top_k() does.
/// @throws BudgetExceeded as select_top_k() does.
/// @throws UsageError as select_top_k() does.
/// @note An exception thrown by `utilities.read` propagates, after the charge.
/// @par Privacy
/// As select_top_k() over the same utilities.
TopKSelection select_top_k(Context& context, const ChunkedValues<float>& utilities, const TopKParams& params);
TopKSelection select_top_k(Context& context, const ChunkedValues<double>& utilities, const TopKParams& params);
///@}

/// @name Top-k over shards evaluated elsewhere
///@{

/// One candidate of a top-k shard: its noisy score and global index. SECRET, as a ShardResult.
struct RankedScore {
  double score = -detail::kInfinity;  ///< The candidate's noisy score.
  std::uint64_t index = kNoIndex;     ///< Its global index.
};

/// The partial result of a top-k release over one shard: its k best candidates and the tally of
/// every candidate it evaluated. SECRET (shard_result.hpp): pass it only to merge() and
/// TopKRelease::finish().
struct TopKShardResult {
  std::vector<RankedScore> best;  ///< At most k, best first (higher score; ties: smaller index).
  ShardResult tally;              ///< The tally of every candidate of the shard (best_* unset).
  std::uint64_t k = 0;            ///< The release's k.
};

/// The result of the union of two disjoint shards of one top-k release: the k best of the two
/// lists (the k best of a union are among each part's k best) and the merged tallies.
/// Associative and commutative; checks nothing (TopKRelease::finish checks the total).
/// @param a The result of one shard.
/// @param b The result of another shard of the same release.
/// @return The merge; its k is the larger of the two (they are equal for shards of one release).
TopKShardResult merge(const TopKShardResult& a, const TopKShardResult& b);

class TopKTicket;

/// A top-k release whose shards are evaluated elsewhere (release_ticket.hpp: the trust model is
/// the same). Begun with begin_top_k_release, evaluated through its ticket(), finished once.
class TopKRelease {
 public:
  /// The ticket that workers evaluate this release's shards with (CPU passes). SECRET: it holds
  /// the context's key. Asking again returns an equal ticket.
  /// @return The ticket for the release's range.
  /// @throws UsageError after finish().
  TopKTicket ticket();
  /// The k indices and the report, from the merge of every shard's result.
  /// @param merged The merge of every shard's TopKShardResult, each exactly once.
  /// @return As select_top_k over the whole range for the same key and stream.
  /// @throws InvalidArgument for a NaN, +inf or out-of-bound utility, a slack that would reach
  ///         epsilon', or k above the number of candidates that are not excluded.
  /// @throws UsageError as Release::finish (another release, a shard missing or merged twice, a
  ///         second finish; the release is spent), or for a merge that keeps another k (refused
  ///         before the release is finished).
  /// @par Privacy
  /// As select_top_k; the k picks were charged by begin_top_k_release.
  TopKSelection finish(const TopKShardResult& merged);
  /// The release's parameters.
  /// @return The release's parameters (selection.epsilon: the k picks together) and k.
  const TopKParams& params() const { return params_; }
  /// The candidates the shards must tile.
  /// @return The range given to begin_top_k_release.
  IndexRange range() const { return range_; }
  /// The release's stream id.
  /// @return The stream id.
  std::uint64_t stream() const { return release_.stream(); }

 private:
  friend TopKRelease begin_top_k_release(Context& context, const TopKParams& params, IndexRange range);
  TopKRelease(Release release, const TopKParams& params, IndexRange range)
      : release_(std::move(release)), params_(params), range_(range) {}
  Release release_;
  TopKParams params_;
  IndexRange range_;
};

/// Begins a top-k release over the candidates `range`, whose shards are evaluated through its
/// ticket (here or elsewhere) and merged for TopKRelease::finish: for the same key and stream, the
/// k indices select_top_k returns over the whole range.
/// @param context The key and stream source (and accountant).
/// @param params The per-pick parameters (mechanism exponential; utility_reference as for
///        select_top_k, 0 when not given) and k, 1 <= k <= range.size().
/// @param range The candidates: not empty, end at most 2^63.
/// @return The release, holding a fresh stream.
/// @throws InvalidArgument for bad params, a mechanism other than exponential, backend Gpu (the
///         shards run on the CPU), k outside [1, range.size()] or a bad range: before the charge.
/// @throws BudgetExceeded when the accountant refuses the k picks: nothing charged or drawn.
/// @par Privacy
/// Charges k exponential-mechanism picks at epsilon' before the stream is drawn, as select_top_k
/// (Durfee & Rogers 2019; Dwork & Roth 2014, Thm 3.16).
TopKRelease begin_top_k_release(Context& context, const TopKParams& params, IndexRange range);

/// What a worker evaluates its shard of a top-k release with: the release's ReleaseTicket and k.
/// SECRET (it holds the key); serializable (to_bytes, from_bytes).
class TopKTicket {
 public:
  /// This shard's k best and its tally, on the CPU (all cores).
  /// @param utilities The utilities of candidates first_index, first_index + 1, ...; not empty.
  /// @param first_index The global index of utilities[0]; the shard must lie in the range.
  /// @return The shard's result (SECRET).
  /// @throws InvalidArgument as ReleaseTicket::evaluate (an empty shard, one outside the range).
  /// @throws UsageError as ReleaseTicket::evaluate (the release finished or destroyed).
  TopKShardResult evaluate(std::span<const float> utilities, std::uint64_t first_index) const;
  /// The same for double utilities.
  /// @param utilities The utilities; not empty.
  /// @param first_index The global index of utilities[0].
  /// @return The shard's result (SECRET).
  TopKShardResult evaluate(std::span<const double> utilities, std::uint64_t first_index) const;
  /// The ticket as bytes: ReleaseTicket::to_bytes followed by k (8 bytes, little-endian).
  /// @return The serialized ticket (SECRET).
  std::vector<std::uint8_t> to_bytes() const;
  /// A ticket read back from to_bytes, checked as ReleaseTicket::from_bytes checks (and k >= 1).
  /// @param bytes The output of to_bytes.
  /// @return The ticket.
  /// @throws InvalidArgument naming what is wrong with `bytes`.
  static TopKTicket from_bytes(std::span<const std::uint8_t> bytes);
  /// How many candidates the release keeps.
  /// @return k.
  std::uint64_t k() const { return k_; }
  /// The release's ticket (key, stream, parameters, range).
  /// @return The ReleaseTicket.
  const ReleaseTicket& release_ticket() const { return ticket_; }

 private:
  friend class TopKRelease;
  TopKTicket(ReleaseTicket ticket, std::uint64_t k) : ticket_(std::move(ticket)), k_(k) {}
  template <class T>
  TopKShardResult evaluate_shard(std::span<const T> utilities, std::uint64_t first_index) const;
  ReleaseTicket ticket_;
  std::uint64_t k_;
};
///@}

}  // namespace dpselect
