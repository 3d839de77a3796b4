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
///   1. y = d + x, x_i iid GG(p, sigma), sigma calibrated to (eps_noise, delta_noise) for k
///      coordinates (generalized_gaussian.hpp).
///   2. The sparse vector technique (Sparse with c = max_repairs positives, Dwork & Roth Thm 3.25,
///      at (eps_check, delta_check)) over the queries q_i(D) = |y_i - d_i(D)|: each has
///      sensitivity 1 once y is fixed, and it was released by step 1. It flags the coordinates
///      whose noise came out larger than a public threshold T.
///   3. Every flagged coordinate is answered again with fresh Gaussian noise: the flagged set is
///      public (step 2's output) and has at most c members, so its answers have L2 sensitivity
///      sqrt(c); std from the analytic Gaussian at (eps_repair, delta_repair) (Balle & Wang 2018).
///   The release is y with the flagged coordinates replaced by their fresh answers.
/// Heavier-tailed noise with small p (near ln ln ln k) needs less scale than p ~ ln ln k for the
/// same privacy; the few coordinates whose noise lands in the tail are caught and repaired.
///
/// The plan (p, c, the budget split, T) depends only on (epsilon, delta, k, beta), never on the
/// data. plan_linf_answers chooses it to minimize a bound that holds with probability >= 1 - beta:
///   unflagged coordinates: |x_i| < T + alpha, alpha the sparse vector's accuracy at beta/3
///     (sparse_vector_alpha: every "below" query has q_i < T + alpha);
///   flagged ones: the repair noise, at most s z with z the normal quantile at beta / (6c);
///   at most c coordinates have |x_i| >= T - alpha (a binomial tail <= beta/3: T is set so), so on
///   these events every flag is one of them; if the run halts after the c-th flag, all of them
///   were flagged and every unchecked coordinate has |x_i| < T - alpha: every coordinate is covered.
#pragma once

#include <cstdint>
#include <span>

#include "dpselect/context.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/sparse_vector.hpp"

namespace dpselect {

struct LinfAnswerParams {
  double epsilon = 0.0;  ///< total privacy loss; finite and > 0
  double delta = 0.0;    ///< total; in (0, 1)
  /// The failure probability the plan's bound is made for; in (0, 1).
  double beta = 0.05;
  /// The GG exponent, in [1, 32]; 0: the planner chooses from {1, 1.5, 2, 3, 4, 6, 8}.
  double p = 0.0;
  /// c, the most coordinates the sparse vector may flag; 0: the planner chooses (powers of two).
  std::uint64_t max_repairs = 0;
  /// false: the generalized Gaussian alone (no steps 2 and 3), with the whole budget.
  bool repair_with_sparse_vector = true;
};

struct LinfAnswerPlan {
  std::uint64_t queries = 0;  ///< k
  double p = 0.0;
  double sigma = 0.0;  ///< GG scale of step 1
  double epsilon_noise = 0.0;
  double delta_noise = 0.0;
  bool repair_with_sparse_vector = true;
  /// Step 2 (Dwork-Roth Sparse, threshold T, max_positives c); zero when there is no repair.
  SparseVectorParams check;
  /// Step 3: the Gaussian std of a repaired coordinate, and its share of the budget.
  double repair_std = 0.0;
  double epsilon_repair = 0.0;
  double delta_repair = 0.0;
  /// With probability >= 1 - beta, ||released - d||_inf <= bound (the union bound above).
  double beta = 0.0;
  double bound = 0.0;
};

/// The plan for k = queries answers (see the file comment); for k = 1 (nothing to repair) the GG
/// alone. Deterministic and cached; each (p, noise share) pair costs one generalized Gaussian
/// calibration (~0.1-1 s): up to 28 for the default p grid. Throws InvalidArgument naming the
/// parameter and value (epsilon, delta, beta, p, max_repairs > k/2, queries 0 or above 2^32).
LinfAnswerPlan plan_linf_answers(const LinfAnswerParams& params, std::uint64_t queries);

struct LinfAnswerReport {
  LinfAnswerPlan plan;
  std::uint64_t repaired = 0;  ///< coordinates flagged by the sparse vector and answered again
  /// The sparse vector reached c flags before the last query (probability <= beta/3 by the plan):
  /// queries after the c-th flag were not checked and keep their step-1 answer.
  bool halted = false;
  Generator generator = Generator::chacha20;
};

/// Replaces answers[i] (the true answer d_i of counting query i) by its private answer, on the CPU
/// cores. Every parameter and answer (finite, |d_i| <= 1e300) is checked and the plan made first;
/// then the context's accountant is charged once for the three parts together (all or nothing),
/// three streams are drawn, and the answers are overwritten. Nothing is written when it throws
/// before the charge. Throws InvalidArgument naming the parameter or "answers[i]" and its value.
LinfAnswerReport answer_counting_queries(Context& context, std::span<double> answers,
                                         const LinfAnswerParams& params);
/// The same with a plan made ahead and possibly adjusted (a threshold, c or budget split of the
/// caller's choosing: the sparse vector is private for any public threshold). Everything the
/// privacy rests on is checked again before the charge: plan.queries == answers.size(), sigma and
/// repair_std at least their calibrated values for the plan's (epsilon, delta) parts, the check's
/// parameters valid with sensitivity >= 1, no numeric answers and no value_bound. plan.bound is
/// not re-derived.
LinfAnswerReport answer_counting_queries(Context& context, std::span<double> answers, const LinfAnswerPlan& plan);

}  // namespace dpselect
