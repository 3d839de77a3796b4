// SPDX-License-Identifier: Apache-2.0
/// @file
/// The sparse vector technique on the host: AboveThreshold, Sparse and NumericSparse.
///
/// A stream of query answers f_1(D), f_2(D), ... (each of sensitivity Delta) is compared with a
/// noisy threshold; the mechanism answers "below" (bottom) for each until one clears it, answers
/// "above" (top), and after the c-th "above" halts. Only the pattern of answers (and, for
/// NumericSparse, a noisy value for each "above") is released; the privacy cost does not grow
/// with the number of "below" answers.
///
/// - Sparse (Dwork & Roth Alg. 2, Thm 3.25), c = 1 is AboveThreshold
///   (Dwork & Roth 2014, Alg. 1, Thm 3.23):
///   sigma = 2 c Delta / eps (delta = 0) or sqrt(32 c ln(1/delta)) Delta / eps (delta > 0);
///   T^ = T + Lap(sigma), drawn afresh after every "above"; query i is "above" iff
///   f_i + Lap(2 sigma) >= T^.
/// - NumericSparse (Dwork & Roth 2014, Thm 3.27): Sparse run with eps1, and each "above" also
///   releases f_i + Lap(sigma(eps2)) (as secure Laplace on a grid:
///   SparseVectorScales::answer_granularity), where sigma(x) is as above with x for eps:
///   delta = 0: eps1 = 8 eps / 9, eps2 = 2 eps / 9;
///   delta > 0: eps1 = sqrt(512) eps / (sqrt(512) + 1), eps2 = 2 eps / (sqrt(512) + 1), and
///   sigma uses ln(2/delta) (each half of the composition gets delta/2).
///   (A translation of Dwork & Roth 2014 prints the delta > 0 Laplace share as eps/sqrt(512); the
///   shares must sum to eps, so the Laplace part costs eps/(sqrt(512) + 1), which is what
///   sigma(eps2) gives.)
/// - The optimized variant of Lyu, Su & Li (VLDB 2017, Alg. 1 and its generalization Alg. 7), pure
///   DP only: ONE noisy threshold T^ = T + Lap(Delta/eps1) for the whole run (never redrawn),
///   queries f_i + Lap(2 c Delta/eps2), or Lap(c Delta/eps2) when the queries are monotone (between
///   neighbours all f_i move in the same direction: counting queries), and for NumericSparse
///   answers f_i + Lap(c Delta/eps3). The split minimizes Var(query noise - threshold noise)
///   (their Sec. 4.2): eps1 : eps2 = 1 : (2c)^(2/3), or 1 : c^(2/3) when monotone. Here
///   eps3 = eps/9 for NumericSparse (the answers' share in Dwork & Roth 2014, Thm 3.28),
///   eps1 + eps2 = the rest. For c = 1 and an even split this is AboveThreshold.
///
/// Noise is counter-based, like every dpselect mechanism: on the stream a SparseVector draws
/// from its context, query i (0-based) takes its noise from random block i, the threshold of
/// epoch j (after j "above" answers) from block 2^59 + j, and the j-th numeric answer (a secure
/// Laplace release on a grid) from blocks [2^60 + j 2^20, 2^60 + (j + 1) 2^20). So the streaming
/// object and the batched function return the same answers for the same key and stream, whatever
/// the batch boundaries.
///
/// Floating point: the comparisons use Laplace noise computed in doubles; each report's `slack`
/// bounds what that rounding adds to the guarantee (from `value_bound` when one is given, else from
/// the answers seen, and then it depends on the data). The NumericSparse values are exact integer
/// noise on a grid and need no slack (see SparseVectorReport::slack).
///
/// Example (AboveThreshold):
/// @code{.cpp}
/// dpselect::SparseVectorParams p{.epsilon = 1.0, .sensitivity = 1.0, .threshold = 100.0};
/// dpselect::SparseVector svt(context, p);
/// for (double answer : query_answers) {
///   if (svt.answer(answer).above) break;   // after the c-th "above", answer() throws
/// }
/// @endcode
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect {
namespace detail {
struct SparseVectorRun;
}  // namespace detail

/// Which sparse vector algorithm a run uses (see the file comment for the scales of each).
enum class SparseVectorAlgorithm {
  /// Dwork & Roth's Sparse and NumericSparse (2014, Alg. 2, Thm 3.27): a fresh threshold after
  /// every "above"; delta = 0 or delta > 0.
  dwork_roth,
  /// Lyu, Su & Li 2017: one threshold, the optimized budget split, the monotone refinement;
  /// delta must be 0.
  lyu_su_li,
};

/// The algorithm's name, for reports and messages.
/// @param algorithm Any value.
/// @return "dwork-roth" or "lyu-su-li" ("unknown" for a value outside the enumeration), a view of a
///         static string.
std::string_view to_string(SparseVectorAlgorithm algorithm);

/// The parameters of one sparse vector run (SparseVector, sparse_vector_batch) and of the accuracy
/// calculators: the privacy budget of the whole run, the queries' sensitivity, the public
/// threshold and the number of "above" answers before it halts.
struct SparseVectorParams {
  double epsilon = 0.0;        ///< total privacy loss; finite and > 0
  double delta = 0.0;          ///< in [0, 1); > 0 selects the advanced-composition scales
  double sensitivity = 0.0;    ///< Delta of every query; finite and > 0
  double threshold = 0.0;      ///< T, public; finite
  std::uint64_t max_positives = 1;  ///< c >= 1 (<= 2^43 when numeric): halt after this many "above" answers
  bool numeric = false;        ///< NumericSparse: every "above" carries a noisy value
  /// Optional public bound on |f_i(D)| (0: none). With it the floating-point slack is computed
  /// from the bound (data-independent) and a larger answer is an error; without it the slack is
  /// computed from the answers seen and reveals their magnitude.
  double value_bound = 0.0;
  /// The algorithm; Dwork & Roth's by default. lyu_su_li requires delta = 0.
  SparseVectorAlgorithm algorithm = SparseVectorAlgorithm::dwork_roth;
  /// Lyu-Su-Li only (true with dwork_roth is refused): every pair of neighbours moves all f_i in
  /// the same direction, which halves the query noise. A false claim breaks the privacy guarantee.
  bool monotone = false;
};

/// Laplace scales of the three kinds of noise, and the privacy split behind them.
struct SparseVectorScales {
  double threshold_noise = 0.0;  ///< dwork_roth: sigma (of eps1 for NumericSparse); lyu_su_li: Delta/eps1
  double query_noise = 0.0;      ///< dwork_roth: 2 sigma; lyu_su_li: 2c Delta/eps2 (c Delta/eps2 monotone)
  double answer_noise = 0.0;     ///< NumericSparse only, 0 otherwise: the theorem's Laplace scale b
  /// NumericSparse values are released as secure Laplace noise (secure_noise.hpp): a multiple of
  /// answer_granularity (the smallest power of two >= b 2^-31), with the scale raised for the
  /// rounding to answer_noise_secure = g ceil(ceil(Delta / g) b / Delta) >= b (relative excess
  /// below 2^-29). 0 when not numeric.
  double answer_granularity = 0.0;
  /// The secure answers' Laplace scale, g ceil(ceil(Delta / g) b / Delta) >= b (see
  /// answer_granularity); 0 when not numeric.
  double answer_noise_secure = 0.0;
  double epsilon_comparisons = 0.0;  ///< the threshold's and the queries' share of eps
  double epsilon_answers = 0.0;      ///< 0, or the Laplace answers' share for NumericSparse
  bool threshold_redrawn = true;     ///< after every "above" (dwork_roth) or never (lyu_su_li)
};

/// Validates `params` (InvalidArgument naming the field and value) and returns the scales.
///
/// Deterministic: draws nothing, charges nothing.
/// @param params The run's parameters (each field's constraint is at the field).
/// @return The three Laplace scales, the secure answers' grid and the split of epsilon.
/// @throws InvalidArgument A field out of range (epsilon or sensitivity not finite and > 0, delta
///         outside [0, 1), a non-finite threshold, max_positives 0 or above 2^43 when numeric, a
///         negative or non-finite value_bound, monotone with dwork_roth, delta > 0 with
///         lyu_su_li, an unknown algorithm), or scales that are not finite positive doubles
///         (named "sensitivity / epsilon") or outside the secure answers' grid range.
SparseVectorScales sparse_vector_scales(const SparseVectorParams& params);

/// The answer to one query of a SparseVector.
struct SparseVectorAnswer {
  bool above = false;  ///< true: "above" (top), the noisy value cleared the noisy threshold; false: "below".
  std::optional<double> value;  ///< NumericSparse "above" answers only
};

/// The state of a run: what it has answered, its scales and provenance, and its floating-point
/// slack. Public except `slack` when `slack.depends_on_data` (no value_bound).
struct SparseVectorReport {
  SparseVectorScales scales;    ///< The run's scales (sparse_vector_scales of its params).
  std::uint64_t queries = 0;    ///< answered so far
  std::uint64_t positives = 0;  ///< "above" answers so far
  bool halted = false;  ///< The c-th "above" answer was given (positives == max_positives).
  std::uint64_t stream = 0;  ///< The stream the run drew from its context.
  Generator generator = Generator::chacha20;  ///< The generator of its noise (the context's).
  /// The floating-point slack of everything released so far (floating_point_slack.cpp). The
  /// NumericSparse values are secure Laplace releases on a power-of-two grid (secure_noise.hpp):
  /// exact integer noise, no floating-point leak (Mironov 2012), so they need no slack of their
  /// own (the slack still counts them as draws, which only overestimates it).
  FloatingPointSlack slack;
};

/// The streaming, adaptive interface: one query answer at a time. Not thread-safe (answers are
/// ordered); use one object per thread of queries.
///
/// The whole run is one release: its privacy cost is charged once, at construction, and covers
/// every answer up to the c-th "above" (the cost does not grow with the "below" answers).
class SparseVector {
 public:
  /// Validates `params`, charges the context's accountant (Context::charge_to) one pure release at
  /// epsilon, or one approximate release at (epsilon, delta), then draws a fresh stream.
  /// It then draws the first noisy threshold.
  /// @param context The context whose key, stream counter and accountant the run uses; it need not
  ///        outlive the object (the key and stream are copied).
  /// @param params The run's parameters (copied; see SparseVectorParams).
  /// @throws InvalidArgument As sparse_vector_scales: before the charge.
  /// @throws UsageError `context` was moved from: before the charge.
  /// @throws BudgetExceeded The context's accountant refuses the charge: no stream drawn.
  /// @par Privacy
  /// The run is (epsilon, delta)-DP for queries of sensitivity `params.sensitivity`, chosen
  /// adaptively, under exact arithmetic: dwork_roth by Dwork & Roth 2014, Alg. 1, Thm 3.23
  /// (AboveThreshold), Dwork & Roth Alg. 2, Thm 3.25 (Sparse) and Dwork & Roth 2014, Thm 3.27
  /// (NumericSparse); lyu_su_li (delta = 0) by Lyu, Su & Li 2017 (Alg. 7), whose monotone
  /// refinement holds only if the monotone claim is true. The floating-point slack in report()
  /// comes on top. Charged here, once, before any noise is drawn: ReleaseKind::pure at
  /// (epsilon, 0) when delta = 0, else ReleaseKind::approximate at (epsilon, delta); the charge
  /// stays whatever happens to the run.
  SparseVector(Context& context, const SparseVectorParams& params);

  /// Not copyable: a copy would answer with the same noise, so that comparing copies reveals the
  /// query values. Moving transfers the run; the moved-from object is spent.
  SparseVector(const SparseVector&) = delete;
  /// Not copy-assignable, for the same reason as the deleted copy constructor.
  SparseVector& operator=(const SparseVector&) = delete;
  /// Takes over the run of `other` (parameters, stream, counters, noisy threshold); `other` is
  /// then spent (its answer() throws UsageError).
  /// @param other The run to take over.
  SparseVector(SparseVector&& other) noexcept;
  /// Replaces this object's run by that of `other` (this run is abandoned: its charge stays);
  /// `other` is then spent. Self-assignment does nothing.
  /// @param other The run to take over.
  /// @return `*this`.
  SparseVector& operator=(SparseVector&& other) noexcept;
  /// Ends the run (its charge stays).
  ~SparseVector() = default;

  /// The answer to the next query, whose true value on the data is `query_value`. A value that
  /// is not finite, or beyond value_bound when one is given, throws InvalidArgument and spends
  /// the object (fail closed: whether a value is valid depends on the data, so the check must not
  /// be repeatable for free). Throws UsageError once the mechanism has halted or is spent.
  /// Not thread-safe.
  /// @param query_value f_i(D) for the next query i; finite, and |f_i(D)| <= value_bound when a
  ///        bound is given.
  /// @return "above" or "below", and for a NumericSparse "above" the noisy value (a multiple of
  ///         `scales.answer_granularity`).
  /// @throws InvalidArgument `query_value` not finite (quoted) or beyond value_bound (not quoted:
  ///         it is data); the object is then spent.
  /// @throws UsageError The run has halted, is spent (a bad value earlier, or moved from), or has
  ///         answered 2^58 queries.
  /// @throws RandomnessExhausted A NumericSparse value's sampler ran out of its 2^20 blocks
  ///         (probability < 2^-300000).
  /// @par Privacy
  /// Releases the answer under the run's guarantee (see the constructor); nothing more is charged.
  SparseVectorAnswer answer(double query_value);

  /// Whether the run has halted: it gave its c-th "above" answer.
  /// @return true when `positives == params.max_positives`.
  bool halted() const { return positives_ == params_.max_positives; }
  /// Whether answer() can no longer be called: halted, failed on a bad value, or moved from.
  /// @return true when answer() would throw UsageError for that reason.
  bool spent() const { return halted() || spent_; }
  /// The run's report so far (counts, scales, stream, generator and the floating-point slack of
  /// everything released so far).
  /// @return A snapshot; publish `slack` only when a value_bound was given.
  SparseVectorReport report() const;

 private:
  detail::SparseVectorRun run();
  SparseVectorParams params_;
  SparseVectorScales scales_;
  RandomKey key_;
  std::uint64_t stream_;
  std::uint64_t queries_ = 0;
  std::uint64_t positives_ = 0;
  double noisy_threshold_;
  double largest_abs_value_ = 0.0;
  bool spent_ = false;  ///< a bad value was given, or the run was moved to another object
};

/// One "above" answer of sparse_vector_batch.
struct SparseVectorAbove {
  std::uint64_t index = 0;      ///< the query's position in the batch
  std::optional<double> value;  ///< NumericSparse only
};
/// The result of sparse_vector_batch: the "above" answers and the run's report.
struct SparseVectorBatch {
  /// The "above" answers in order (at most max_positives). Every other query before
  /// report.queries was answered "below"; the queries from report.queries on were not answered
  /// (the mechanism halted). A list rather than one answer per query: batches reach 10^8 queries.
  std::vector<SparseVectorAbove> above;
  /// The run's report: `queries` answered, `positives`, `halted`, the stream, and the slack
  /// (computed from value_bound, or else from the largest |value| of the whole batch, answered or
  /// not).
  SparseVectorReport report;
};
/// The non-adaptive batch: the answers a SparseVector on the same key and stream would give to
/// values[0], values[1], ... up to and including the halting query (or all of them). Every value
/// is validated (finite, within value_bound) before the charge and before any noise is drawn;
/// then it charges like the constructor and draws one stream from `context`.
///
/// It is a parallel find-first, not a loop over queries: from the last "above" answer on, windows
/// of queries (256 after each "above", doubling up to 2^22, on the CPU; 2^16 doubling up to 2^28 on
/// the GPU) are searched for the first noisy value at or above the noisy threshold, on all CPU
/// cores (host memory) or on the GPU (device memory).
/// Each query's noise is a pure function of its index (counter-based), so the answers are exactly
/// the streaming object's, and the work is at most twice the queries answered plus one window.
/// @param context The context whose key, stream counter and accountant the run uses.
/// @param values f_0(D), f_1(D), ... in host memory: at most 2^58, each finite and within
///        value_bound when one is given. May be empty (the run is still charged).
/// @param params The run's parameters (see SparseVectorParams).
/// @return The "above" answers in order and the run's report.
/// @throws InvalidArgument As sparse_vector_scales; more than 2^58 values; a value not finite or
///         beyond value_bound (named "query value i"): before the charge.
/// @throws UsageError `context` was moved from: before the charge.
/// @throws BudgetExceeded The context's accountant refuses the charge: no stream drawn.
/// @throws RandomnessExhausted A NumericSparse value's sampler ran out of its 2^20 blocks
///         (probability < 2^-300000), after the charge.
/// @par Privacy
/// One run of the mechanism, with the guarantee, sources and charge of the SparseVector
/// constructor (charged once, after every check, before the stream is drawn). The queries after
/// the halting one are not looked at.
SparseVectorBatch sparse_vector_batch(Context& context, std::span<const double> values,
                                      const SparseVectorParams& params);
/// Values in device memory (`values.data` a device or managed pointer), validated and searched on
/// the GPU, ordered on `stream` (the call synchronizes it). Throws BackendUnavailable without a
/// usable GPU, before the charge.
/// @param context The context whose key, stream counter and accountant the run uses.
/// @param values `values.data` a device, managed or pinned host pointer to `values.size` doubles
///        (nullptr only with size 0): at most 2^58, each finite and within value_bound when one is
///        given.
/// @param params The run's parameters (see SparseVectorParams).
/// @param stream The CUDA stream the work is ordered on.
/// @return The same answers and report as the host version for the same key and stream.
/// @throws InvalidArgument As the host version; also a null or pageable-host `values.data`. The
///         values are checked by a pass on the device, before the charge.
/// @throws BackendUnavailable No usable GPU (or a CPU-only build), before the charge.
/// @throws UsageError `context` was moved from: before the charge.
/// @throws BudgetExceeded The context's accountant refuses the charge: no stream drawn.
/// @throws CudaError A CUDA call failed: before the charge during validation, after it during the
///         search (nothing is returned then; the run stays charged).
/// @throws RandomnessExhausted As the host version.
/// @par Synchronisation
/// The validation pass, each window's search and the read-back of each NumericSparse value are
/// enqueued on `stream`, and the call synchronizes `stream` after each of them; nothing of it is
/// pending when it returns. Work the caller enqueued earlier on `stream` (e.g. the copy that fills
/// `values`) is ordered before it; writes to `values` on other streams must be synchronized by the
/// caller first. `values` is only read.
/// @par Privacy
/// As the host version.
SparseVectorBatch sparse_vector_batch(Context& context, DeviceSpan<const double> values,
                                      const SparseVectorParams& params, cuda_stream_t stream);

/// Accuracy calculators (Delta = params.sensitivity; k queries). Each returns the alpha of the
/// theorem for the given beta; sparse_vector_beta inverts it (clamped to 1).
/// - AboveThreshold (c = 1, delta = 0): alpha = 8 Delta (ln k + ln(2/beta)) / eps
///   (Dwork & Roth 2014, Thm 3.24)
/// - Sparse: alpha = 8 c Delta (ln k + ln(2c/beta)) / eps (delta = 0; AboveThreshold at eps/c per
///   round with beta/c each) or
///   Delta (ln k + ln(2c/beta)) sqrt(512 c ln(1/delta)) / eps (Dwork & Roth Thm 3.26)
/// - NumericSparse: alpha = 9 c Delta (ln k + ln(4c/beta)) / eps (delta = 0) or
///   Delta (ln k + ln(4c/beta)) sqrt(c ln(2/delta)) (sqrt(512) + 1) / eps (Dwork & Roth 2014, Thm 3.28)
/// - lyu_su_li (no published theorem; the union bound of the Thm 3.24 proof over its one threshold,
///   k query noises and c answer noises, with b_T, b_q, b_a the scales above):
///   beta = e^{-alpha/(2 b_T)} + k e^{-alpha/(2 b_q)} [+ c e^{-alpha/b_a} for NumericSparse];
///   alpha for a given beta by bisection, returned from the safe side (never too small).
///
/// alpha is the accuracy in the sense of those theorems: with probability >= 1 - beta, every
/// "below" answer has f_i <= T + alpha, every "above" answer f_i >= T - alpha (and, for
/// NumericSparse, every released value is within alpha of f_i). Deterministic and
/// data-independent; draws and charges nothing.
/// @param params The run's parameters (validated as by sparse_vector_scales).
/// @param queries k, the number of queries; >= 1.
/// @param beta The failure probability; in (0, 1).
/// @return alpha, in the units of the query values.
/// @throws InvalidArgument A field of `params` (as sparse_vector_scales), `queries` 0 or `beta`
///         outside (0, 1), named with its value.
double sparse_vector_alpha(const SparseVectorParams& params, std::uint64_t queries, double beta);
/// The inverse of sparse_vector_alpha: the failure probability beta of accuracy alpha by the same
/// theorem or union bound (see sparse_vector_alpha), clamped to 1.
/// @param params The run's parameters (validated as by sparse_vector_scales).
/// @param queries k, the number of queries; >= 1.
/// @param alpha The accuracy, in the units of the query values; finite and > 0.
/// @return beta, in (0, 1].
/// @throws InvalidArgument A field of `params`, `queries` 0 or `alpha` not finite and > 0, named
///         with its value.
double sparse_vector_beta(const SparseVectorParams& params, std::uint64_t queries, double alpha);

/// Dwork & Roth 2014, Thm 3.11 for the exponential mechanism: with probability >= 1 - beta the
/// output's utility is >= OPT - alpha, alpha = (2 Delta/eps)(ln(|R|/|R_OPT|) + ln(1/beta))
/// (Delta/eps when monotone), and its inverse.
///
/// `params.mechanism` is not read: the bound is the exponential mechanism's, at its noise scale.
/// Deterministic and data-independent.
/// @param params The release's parameters: epsilon, sensitivity and monotone are used; epsilon and
///        sensitivity finite and > 0, utility_bound and utility_reference valid (as
///        Context::begin_release checks them).
/// @param candidates |R|, the number of candidates; >= optimal_candidates.
/// @param optimal_candidates |R_OPT|, the number of candidates of optimal utility; in
///        [1, candidates].
/// @param beta The failure probability; in (0, 1).
/// @return alpha, in the units of the utility.
/// @throws InvalidArgument A field of `params`, `optimal_candidates` outside [1, candidates], or
///         `beta` outside (0, 1), named with its value.
double exponential_mechanism_alpha(const SelectionParams& params, std::uint64_t candidates,
                                   std::uint64_t optimal_candidates, double beta);
/// The inverse of exponential_mechanism_alpha (Dwork & Roth 2014, Thm 3.11): the probability beta
/// that the output's utility falls below OPT - alpha, clamped to 1.
/// @param params The release's parameters (as for exponential_mechanism_alpha).
/// @param candidates |R|, the number of candidates; >= optimal_candidates.
/// @param optimal_candidates |R_OPT|; in [1, candidates].
/// @param alpha The utility shortfall; finite and > 0.
/// @return beta = min(1, (|R| / |R_OPT|) exp(-alpha / scale)), scale = 2 Delta/eps (Delta/eps
///         when monotone).
/// @throws InvalidArgument A field of `params`, `optimal_candidates` outside [1, candidates], or
///         `alpha` not finite and > 0, named with its value.
double exponential_mechanism_beta(const SelectionParams& params, std::uint64_t candidates,
                                  std::uint64_t optimal_candidates, double alpha);

}  // namespace dpselect
