// SPDX-License-Identifier: Apache-2.0
/// @file
/// Answering k counting queries with small l_inf error: the generalized Gaussian mechanism composed
/// with the sparse vector technique (Ganesh & Zhao 2021, "Privately Answering Counting
/// Queries with Generalized Gaussian Mechanisms", generalizing Steinke & Ullman, "Between Pure and
/// Approximate Differential Privacy", 2017).
///
/// The true answers d (k queries, each of sensitivity 1: neighbouring datasets change every d_i by
/// at most 1) are released as follows, with the budget split into three parts that compose to
/// (epsilon, delta) (basic composition, Dwork & Roth 2014, Thm 3.16):
/// 1. y = d + x, x_i iid GG(p, sigma), sigma calibrated to (eps_noise, delta_noise) for k
///    coordinates (generalized_gaussian.hpp).
/// 2. The sparse vector technique (Sparse with c = max_repairs positives, Dwork & Roth Thm 3.25,
///    at (eps_check, delta_check)) over the queries q_i(D) = |y_i - d_i(D)|: each has
///    sensitivity 1 once y is fixed, and it was released by step 1. It flags the coordinates
///    whose noise came out larger than a public threshold T. (The planner may instead choose
///    the pure-DP variant of Lyu, Su & Li 2017 with delta_check = 0: LinfAnswerPlan::check
///    says which.)
/// 3. Every flagged coordinate is answered again with fresh Gaussian noise: the flagged set is
///    public (step 2's output) and has at most c members, so its answers have L2 sensitivity
///    sqrt(c); std from the analytic Gaussian at (eps_repair, delta_repair) (Balle & Wang 2018).
///
/// The release is y with the flagged coordinates replaced by their fresh answers.
/// Heavier-tailed noise with small p (near ln ln ln k) needs less scale than p ~ ln ln k for the
/// same privacy; the few coordinates whose noise lands in the tail are caught and repaired.
///
/// The plan (p, c, the budget split, T) depends only on (epsilon, delta, k, beta), never on the
/// data. plan_linf_answers chooses it to minimize a bound that holds with probability >= 1 - beta:
/// - unflagged coordinates: |x_i| < T + alpha, alpha the sparse vector's accuracy at beta/3
///   (every "below" query has q_i < T + alpha; alpha from the union bound of the proof of
///   Dwork & Roth 2014, Thm 3.24 over the check's thresholds and k queries at its actual Laplace
///   scales, as in sparse_vector_alpha's lyu_su_li form);
/// - flagged ones: the repair noise, at most s z with z the normal quantile at beta / (6c);
/// - at most c coordinates have |x_i| >= T - alpha (a binomial tail <= beta/3: T is set so), so on
///   these events every flag is one of them; if the run halts after the c-th flag, all of them
///   were flagged and every unchecked coordinate has |x_i| < T - alpha: every coordinate is covered.
///
/// Host memory only; the work runs on the CPU cores.
#pragma once

#include <cstdint>
#include <span>

#include "dpselect/context.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/sparse_vector.hpp"

namespace dpselect {

/// What answer_counting_queries and plan_linf_answers are asked for: the total privacy budget,
/// the failure probability of the accuracy bound, and optional choices the planner otherwise makes.
struct LinfAnswerParams {
  double epsilon = 0.0;  ///< total privacy loss; finite and > 0
  double delta = 0.0;    ///< total; in (0, 1)
  /// The failure probability the plan's bound is made for; in (0, 1).
  double beta = 0.05;
  /// The GG exponent, in [1, 32]; 0: the planner chooses from {1, 1.5, 2, 3, 4, 6, 8}.
  double p = 0.0;
  /// c, the most coordinates the sparse vector may flag; 0: the planner chooses (powers of two).
  /// Otherwise at most k/2 when `repair_with_sparse_vector` is true.
  std::uint64_t max_repairs = 0;
  /// false: the generalized Gaussian alone (no steps 2 and 3), with the whole budget.
  bool repair_with_sparse_vector = true;
};

/// The data-independent plan of a release: the three steps' parameters and budget shares, and the
/// accuracy bound they give. Made by plan_linf_answers; may be adjusted and passed to
/// answer_counting_queries, which checks again everything the privacy rests on.
struct LinfAnswerPlan {
  std::uint64_t queries = 0;  ///< k
  double p = 0.0;  ///< The GG exponent of step 1, in [1, 32].
  double sigma = 0.0;  ///< GG scale of step 1
  double epsilon_noise = 0.0;  ///< Step 1's share of epsilon; finite and > 0.
  double delta_noise = 0.0;  ///< Step 1's share of delta; in (0, 1).
  /// Whether steps 2 and 3 run; false: the GG alone with the whole budget (and `check` is
  /// default-constructed, `repair_std`, `epsilon_repair`, `delta_repair` are 0).
  bool repair_with_sparse_vector = true;
  /// Step 2 (Dwork-Roth Sparse, threshold T, max_positives c); zero (default-constructed) when
  /// there is no repair.
  /// The planner may choose `check.algorithm` = SparseVectorAlgorithm::lyu_su_li (pure DP,
  /// `check.delta` = 0) when its bound is smaller; `check.epsilon` and `check.delta` are step 2's
  /// share of the budget, `check.sensitivity` is 1.
  SparseVectorParams check;
  /// Step 3: the Gaussian std of a repaired coordinate, and its share of the budget.
  double repair_std = 0.0;
  double epsilon_repair = 0.0;  ///< Step 3's share of epsilon (0 without repair).
  double delta_repair = 0.0;  ///< Step 3's share of delta (0 without repair).
  /// With probability >= 1 - beta, ||released - d||_inf <= bound (the union bound above).
  double beta = 0.0;
  /// The l_inf error bound, in the units of the answers (see `beta`); not re-derived for an
  /// adjusted plan.
  double bound = 0.0;
};

/// The plan for k = queries answers (see the file comment); for k = 1 (nothing to repair) the GG
/// alone. Deterministic and cached; each (p, noise share) pair costs one generalized Gaussian
/// calibration (~0.1-1 s): up to 28 for the default p grid. Throws InvalidArgument naming the
/// parameter and value (epsilon, delta, beta, p, max_repairs > k/2, queries 0 or above 2^32).
///
/// Data-independent: draws nothing, charges nothing. Thread-safe; the last 64 plans are cached.
/// The planner tries every p of the grid (or `params.p`), the GG shares 0.6, 0.8, 0.9 and 0.95 of
/// (epsilon, delta) with the rest split evenly between steps 2 and 3 (for a Lyu-Su-Li check, step 3
/// takes all the rest of delta), c = `params.max_repairs` or every power of two up to k/2, and
/// both sparse vector algorithms, and keeps the smallest bound.
/// @param params The budget, beta and the optional choices (see LinfAnswerParams).
/// @param queries k, the number of counting queries; in [1, 2^32].
/// @return The plan with the smallest bound.
/// @throws InvalidArgument A parameter out of range (named with its value), or a calibration that
///         fails (generalized_gaussian_sigma, discrete::analytic_gaussian_sigma,
///         sparse_vector_scales).
LinfAnswerPlan plan_linf_answers(const LinfAnswerParams& params, std::uint64_t queries);

/// What answer_counting_queries released: public facts about the release.
struct LinfAnswerReport {
  LinfAnswerPlan plan;  ///< The plan the release followed.
  std::uint64_t repaired = 0;  ///< coordinates flagged by the sparse vector and answered again
  /// The sparse vector reached c flags before the last query (probability <= beta/3 by the plan):
  /// queries after the c-th flag were not checked and keep their step-1 answer.
  bool halted = false;
  Generator generator = Generator::chacha20;  ///< The generator of all three steps' noise (the context's).
};

/// Replaces answers[i] (the true answer d_i of counting query i) by its private answer, on the CPU
/// cores. Every parameter and answer (finite, |d_i| <= 1e300) is checked and the plan made first;
/// then the context's accountant is charged once for the three parts together (all or nothing),
/// three streams are drawn, and the answers are overwritten. Nothing is written when it throws
/// before the charge. Throws InvalidArgument naming the parameter or "answers[i]" and its value.
/// @param context The context whose key, stream counter and accountant the release uses.
/// @param answers The true answers d, in host memory, one per counting query (k = size, in
///        [1, 2^32]); each finite with |d_i| <= 1e300. Replaced in place by the private answers.
/// @param params The budget, beta and the optional choices (see LinfAnswerParams).
/// @return The plan followed, how many coordinates were repaired, whether the check halted early,
///         and the generator.
/// @throws InvalidArgument A parameter, the number of answers or an answer out of range, or the
///         plan's calibration failing: before the charge, nothing written.
/// @throws UsageError `context` was moved from: before the charge, nothing written.
/// @throws BudgetExceeded The context's accountant refuses the charge: nothing written, no stream
///         drawn.
/// @throws RandomnessExhausted A coordinate's noise ran out of random bits (probability
///         < 2^-680 per coordinate): after the charge, with `answers` left unchanged (the release
///         stays charged).
/// @par Privacy
/// (epsilon, delta)-DP for counting queries (every answer moves by at most 1 between neighbours),
/// by basic composition (Dwork & Roth 2014, Thm 3.16) of the GG step (Ganesh & Zhao 2021), the
/// sparse vector check (Dwork & Roth Thm 3.25, or Lyu, Su & Li 2017 for a pure check) and the
/// Gaussian repair (Balle & Wang 2018), under exact arithmetic (the GG and Gaussian noise are
/// continuous transforms: the floating-point caveat of noise_vector.hpp applies, Mironov 2012).
/// Charged once, all or nothing, after every check and before the first stream is drawn:
/// ReleaseKind::approximate at (epsilon_noise, delta_noise), and with repair also the check
/// (ReleaseKind::pure at its epsilon when its delta is 0, else approximate) and
/// ReleaseKind::approximate at (epsilon_repair, delta_repair). Three streams are drawn (one
/// without repair).
LinfAnswerReport answer_counting_queries(Context& context, std::span<double> answers,
                                         const LinfAnswerParams& params);
/// The same with a plan made ahead and possibly adjusted (a threshold, c or budget split of the
/// caller's choosing: the sparse vector is private for any public threshold). Everything the
/// privacy rests on is checked again before the charge: plan.queries == answers.size(), sigma and
/// repair_std at least their calibrated values for the plan's (epsilon, delta) parts, the check's
/// parameters valid with sensitivity >= 1, no numeric answers and no value_bound. plan.bound is
/// not re-derived.
/// @param context The context whose key, stream counter and accountant the release uses.
/// @param answers The true answers d, in host memory; `plan.queries` of them, each finite with
///        |d_i| <= 1e300. Replaced in place by the private answers.
/// @param plan The plan (from plan_linf_answers for `answers.size()` queries, possibly adjusted).
///        Checked: `plan.queries == answers.size()`; `epsilon_noise` finite and > 0, `delta_noise`
///        in (0, 1), p in [1, 32], sigma at least generalized_gaussian_sigma for them; with repair,
///        `check` valid for sparse_vector_scales with numeric false, value_bound 0, sensitivity
///        >= 1 and max_positives <= k, `epsilon_repair` finite and > 0, `delta_repair` in (0, 1),
///        and `repair_std` at least the analytic Gaussian sigma for L2 sensitivity
///        sqrt(max_positives).
/// @return As the other overload, with `plan` copied into the report.
/// @throws InvalidArgument A check on `plan` or an answer fails: before the charge, nothing
///         written.
/// @throws UsageError `context` was moved from: before the charge, nothing written.
/// @throws BudgetExceeded The context's accountant refuses the charge: nothing written.
/// @throws RandomnessExhausted As the other overload.
/// @par Privacy
/// As the other overload, for the plan's own budget shares: (epsilon_noise + check.epsilon +
/// epsilon_repair, delta_noise + check.delta + delta_repair)-DP (just (epsilon_noise,
/// delta_noise) without repair), charged the same way; the threshold, c and the split may be the
/// caller's (the sparse vector is private for any public threshold).
LinfAnswerReport answer_counting_queries(Context& context, std::span<double> answers, const LinfAnswerPlan& plan);

}  // namespace dpselect
