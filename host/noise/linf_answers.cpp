// SPDX-License-Identifier: Apache-2.0
// The generalized Gaussian + sparse vector answerer (linf_answers.hpp): its planner and the
// three-step release.
#include "dpselect/linf_answers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "accounting/calibration_cache.hpp"
#include "dpselect/accounting.hpp"
#include "dpselect/continuous_noise.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "noise/noise_vector_internal.hpp"
#include "sparse_vector/sparse_vector_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

constexpr double kDefaultPGrid[] = {1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0};
// The GG part's share of (epsilon, delta); the rest is split evenly between the check and the
// repair (for a pure Lyu-Su-Li check, the repair takes all of the rest of delta).
constexpr double kNoiseShares[] = {0.6, 0.8, 0.9, 0.95};
constexpr std::uint64_t kMaxQueries = std::uint64_t{1} << 32;  // the GG calibration's limit

// Smallest t with P[|x| > t] <= tail for x ~ GG(p, sigma), by bisection on the CDF (upper end).
double abs_quantile(double sigma, double p, double tail) {
  double low = 0.0;
  double high = sigma;
  while (1.0 - generalized_gaussian_abs_cdf(high, sigma, p) > tail) high *= 2.0;
  for (int step = 0; step < 100 && high - low > high * 1e-12; ++step) {
    const double middle = low + (high - low) / 2.0;
    (1.0 - generalized_gaussian_abs_cdf(middle, sigma, p) > tail ? low : high) = middle;
  }
  return high;
}

// Largest q with P[Binomial(k, q) >= m] <= target, from the Chernoff bound
// P[N >= m] <= exp(-k KL(m/k || q)) for q < m/k (Hoeffding 1963, Thm 1), by bisection in log q.
double binomial_rate_for_tail(std::uint64_t k, std::uint64_t m, double target) {
  const long double a = static_cast<long double>(m) / static_cast<long double>(k);
  const auto log_tail = [&](long double q) {
    const long double kl = a * std::log(a / q) + (a < 1 ? (1 - a) * std::log1p(-a) - (1 - a) * std::log1p(-q) : 0);
    return -static_cast<long double>(k) * kl;
  };
  long double low = -700.0L;  // log q
  long double high = std::log(a);
  for (int step = 0; step < 200; ++step) {
    const long double middle = (low + high) / 2;
    (log_tail(std::exp(middle)) <= std::log(static_cast<long double>(target)) ? low : high) = middle;
  }
  return static_cast<double>(std::exp(low));  // the tail bound holds at `low`
}

// Smallest alpha with (thresholds) e^{-alpha / (2 b_T)} + k e^{-alpha / (2 b_q)} <= target: the
// union bound of the proof of Dwork & Roth Thm 3.24 (every threshold and query noise below alpha/2
// in magnitude) at the scales the check actually uses.
double check_alpha(const SparseVectorScales& scales, std::uint64_t thresholds, std::uint64_t k, double target) {
  const auto failure = [&](double alpha) {
    return static_cast<double>(thresholds) * std::exp(-alpha / (2 * scales.threshold_noise)) +
           static_cast<double>(k) * std::exp(-alpha / (2 * scales.query_noise));
  };
  double low = 0.0;
  double high = 2 * std::max(scales.threshold_noise, scales.query_noise) *
                (std::log(static_cast<double>(k + thresholds)) - std::log(target));
  while (failure(high) > target) high *= 2.0;
  for (int step = 0; step < 200 && high - low > high * 1e-14; ++step) {
    const double middle = low + (high - low) / 2.0;
    (failure(middle) > target ? low : high) = middle;
  }
  return high;
}

// Smallest z with P[|N(0,1)| > z] <= tail.
double normal_abs_quantile(double tail) {
  double low = 0.0;
  double high = 40.0;
  for (int step = 0; step < 200; ++step) {
    const double middle = (low + high) / 2.0;
    (std::erfc(middle / std::sqrt(2.0)) > tail ? low : high) = middle;
  }
  return high;
}

void validate_params(const LinfAnswerParams& params, std::uint64_t queries) {
  detail::validate_positive_finite("epsilon", params.epsilon);
  if (!(params.delta > 0.0 && params.delta < 1.0)) detail::throw_invalid("delta", "in (0, 1)", params.delta);
  if (!(params.beta > 0.0 && params.beta < 1.0)) detail::throw_invalid("beta", "in (0, 1)", params.beta);
  if (params.p != 0.0 && !(params.p >= 1.0 && params.p <= 32.0)) {
    detail::throw_invalid("p", "0 (chosen by the planner) or in [1, 32]", params.p);
  }
  if (queries == 0 || queries > kMaxQueries) {
    throw InvalidArgument("dpselect: queries must be in [1, 2^32] (got " + std::to_string(queries) + ")");
  }
  if (params.repair_with_sparse_vector && params.max_repairs > queries / 2) {
    throw InvalidArgument("dpselect: max_repairs must be 0 (chosen by the planner) or at most queries / 2 = " +
                          std::to_string(queries / 2) + " (got " + std::to_string(params.max_repairs) + ")");
  }
}

// The plan without repairs: the whole budget on GG(p), bound = the (1 - beta/k) quantile of |x_i|.
LinfAnswerPlan plan_alone(const LinfAnswerParams& params, std::uint64_t k, double p) {
  LinfAnswerPlan plan;
  plan.queries = k;
  plan.p = p;
  plan.epsilon_noise = params.epsilon;
  plan.delta_noise = params.delta;
  plan.sigma = generalized_gaussian_sigma(params.epsilon, params.delta, p, k);  // Ganesh & Zhao 2021
  plan.repair_with_sparse_vector = false;
  plan.beta = params.beta;
  plan.bound = abs_quantile(plan.sigma, p, params.beta / static_cast<double>(k));  // union bound over k
  return plan;
}

// The best plan with repairs for one p and one noise share, over c and the check's algorithm.
void improve_with_repairs(const LinfAnswerParams& params, std::uint64_t k, double p, double share,
                          LinfAnswerPlan& best) {
  const double epsilon_noise = share * params.epsilon;  // basic composition, Dwork & Roth 2014, Thm 3.16
  const double delta_noise = share * params.delta;
  const double sigma = generalized_gaussian_sigma(epsilon_noise, delta_noise, p, k);  // Ganesh & Zhao 2021
  const double epsilon_rest = params.epsilon - epsilon_noise;
  const double delta_rest = params.delta - delta_noise;
  std::vector<std::uint64_t> repair_counts;
  if (params.max_repairs != 0) {
    repair_counts.push_back(params.max_repairs);
  } else {
    for (std::uint64_t c = 1; c <= k / 2; c *= 2) repair_counts.push_back(c);
  }
  for (const SparseVectorAlgorithm algorithm : {SparseVectorAlgorithm::dwork_roth, SparseVectorAlgorithm::lyu_su_li}) {
    for (const std::uint64_t c : repair_counts) {
      LinfAnswerPlan plan;
      plan.queries = k;
      plan.p = p;
      plan.sigma = sigma;
      plan.epsilon_noise = epsilon_noise;
      plan.delta_noise = delta_noise;
      plan.repair_with_sparse_vector = true;
      plan.beta = params.beta;
      plan.check.epsilon = epsilon_rest / 2;
      plan.check.delta = algorithm == SparseVectorAlgorithm::dwork_roth ? delta_rest / 2 : 0.0;
      plan.check.sensitivity = 1.0;  // |y_i - d_i| moves by at most 1 between neighbours
      plan.check.max_positives = c;
      plan.check.algorithm = algorithm;
      plan.epsilon_repair = epsilon_rest - plan.check.epsilon;
      plan.delta_repair = delta_rest - plan.check.delta;
      // Balle & Wang 2018: the flagged set has at most c coordinates of sensitivity 1: L2 sqrt(c).
      plan.repair_std = discrete::analytic_gaussian_sigma(plan.epsilon_repair, plan.delta_repair,
                                                           std::sqrt(static_cast<double>(c)));
      const SparseVectorScales scales = sparse_vector_scales(plan.check);
      const std::uint64_t thresholds = scales.threshold_redrawn ? c + 1 : 1;
      const double alpha = check_alpha(scales, thresholds, k, params.beta / 3);
      // At most c coordinates with |x_i| >= T - alpha, except with probability <= beta/3.
      const double rate = binomial_rate_for_tail(k, c + 1, params.beta / 3);
      const double flag_level = abs_quantile(sigma, p, rate);
      plan.check.threshold = flag_level + alpha;
      const double repaired_bound =
          plan.repair_std * normal_abs_quantile(params.beta / (3.0 * static_cast<double>(c)));
      plan.bound = std::max(plan.check.threshold + alpha, repaired_bound);
      if (best.queries == 0 || plan.bound < best.bound) best = plan;
    }
  }
}

LinfAnswerPlan make_plan(const LinfAnswerParams& params, std::uint64_t queries) {
  const std::span<const double> p_grid =
      params.p != 0.0 ? std::span<const double>(&params.p, 1) : std::span<const double>(kDefaultPGrid);
  LinfAnswerPlan best;
  // One query leaves nothing to repair (c <= k / 2 = 0): the plan is the GG alone.
  const bool repair = params.repair_with_sparse_vector && queries >= 2;
  for (const double p : p_grid) {
    if (repair) {
      for (const double share : kNoiseShares) improve_with_repairs(params, queries, p, share, best);
    } else {
      const LinfAnswerPlan plan = plan_alone(params, queries, p);
      if (best.queries == 0 || plan.bound < best.bound) best = plan;
    }
  }
  return best;
}

}  // namespace

LinfAnswerPlan plan_linf_answers(const LinfAnswerParams& params, std::uint64_t queries) {
  validate_params(params, queries);
  // Plans are deterministic and cost seconds: kept for the next call with the same parameters.
  static detail::CalibrationCache<std::tuple<double, double, double, double, std::uint64_t, bool, std::uint64_t>,
                                  LinfAnswerPlan>
      cache;
  return cache.get({params.epsilon, params.delta, params.beta, params.p, params.max_repairs,
                    params.repair_with_sparse_vector, queries},
                   [&] { return make_plan(params, queries); });
}

namespace {

// Finite and far from overflow, so that y = d + x and |y - d| stay finite after the charge.
constexpr double kLargestAnswer = 1e300;

void validate_answers(std::span<const double> answers) {
  for (std::size_t i = 0; i < answers.size(); ++i) {
    if (!(std::fabs(answers[i]) <= kLargestAnswer)) {
      detail::throw_invalid("answers[" + std::to_string(i) + "]", "finite with magnitude <= 1e300", answers[i]);
    }
  }
}

// A plan from the caller may have been edited: everything its privacy rests on is checked again.
void validate_plan(const LinfAnswerPlan& plan, std::uint64_t queries) {
  if (plan.queries != queries) {
    throw InvalidArgument("dpselect: plan.queries must equal answers.size() = " + std::to_string(queries) +
                          " (got " + std::to_string(plan.queries) + ")");
  }
  detail::validate_positive_finite("plan.epsilon_noise", plan.epsilon_noise);
  if (!(plan.delta_noise > 0.0 && plan.delta_noise < 1.0)) {
    detail::throw_invalid("plan.delta_noise", "in (0, 1)", plan.delta_noise);
  }
  if (!(plan.p >= 1.0 && plan.p <= 32.0)) detail::throw_invalid("plan.p", "in [1, 32]", plan.p);
  const double sigma = generalized_gaussian_sigma(plan.epsilon_noise, plan.delta_noise, plan.p, queries);  // Ganesh & Zhao 2021
  if (!(plan.sigma >= sigma)) {
    detail::throw_invalid("plan.sigma", "at least the calibrated " + detail::format_value(sigma), plan.sigma);
  }
  if (!plan.repair_with_sparse_vector) return;
  sparse_vector_scales(plan.check);  // throws naming the field
  if (plan.check.numeric) throw InvalidArgument("dpselect: plan.check.numeric must be false (got true)");
  // |y_i - d_i| has no public bound; a bound could refuse a value after the charge.
  if (plan.check.value_bound != 0.0) detail::throw_invalid("plan.check.value_bound", "0", plan.check.value_bound);
  if (!(plan.check.sensitivity >= 1.0)) {
    detail::throw_invalid("plan.check.sensitivity", "at least 1 (|y_i - d_i| moves by up to 1)", plan.check.sensitivity);
  }
  if (plan.check.max_positives > queries) {
    throw InvalidArgument("dpselect: plan.check.max_positives must be at most answers.size() = " +
                          std::to_string(queries) + " (got " + std::to_string(plan.check.max_positives) + ")");
  }
  detail::validate_positive_finite("plan.epsilon_repair", plan.epsilon_repair);
  if (!(plan.delta_repair > 0.0 && plan.delta_repair < 1.0)) {
    detail::throw_invalid("plan.delta_repair", "in (0, 1)", plan.delta_repair);
  }
  // Balle & Wang 2018 for L2 sensitivity sqrt(c).
  const double repair_std = discrete::analytic_gaussian_sigma(
      plan.epsilon_repair, plan.delta_repair, std::sqrt(static_cast<double>(plan.check.max_positives)));
  if (!(plan.repair_std >= repair_std)) {
    detail::throw_invalid("plan.repair_std", "at least the calibrated " + detail::format_value(repair_std),
                          plan.repair_std);
  }
}

LinfAnswerReport release(Context& context, std::span<double> answers, const LinfAnswerPlan& plan) {
  LinfAnswerReport report;
  report.plan = plan;

  std::vector<PrivacyCharge> charges = {{ReleaseKind::approximate, plan.epsilon_noise, plan.delta_noise, 1}};
  if (plan.repair_with_sparse_vector) {
    charges.push_back({plan.check.delta > 0 ? ReleaseKind::approximate : ReleaseKind::pure, plan.check.epsilon,
                       plan.check.delta, 1});
    charges.push_back({ReleaseKind::approximate, plan.epsilon_repair, plan.delta_repair, 1});
  }
  detail::ContextAccess::charge(context, charges);

  // Step 1: y = d + GG(p, sigma).
  const detail::ContextAccess::KeyedStream noise_stream = detail::ContextAccess::draw_stream(context);
  report.generator = noise_stream.key.generator;
  std::vector<double> noisy(answers.begin(), answers.end());
  const bool noise_ok = detail::cpu_add_noise(
      noisy, 0, noise_stream.key, noise_stream.stream,
      continuous::make_coordinate_noise(continuous::NoiseShape::generalized_gaussian, plan.sigma, plan.p));
  if (!noise_ok) throw RandomnessExhausted("dpselect: the generalized Gaussian noise ran out of random bits");
  if (!plan.repair_with_sparse_vector) {
    std::copy(noisy.begin(), noisy.end(), answers.begin());
    return report;
  }

  // Step 2: the sparse vector over |y_i - d_i| flags the coordinates whose noise is above T.
  std::vector<double> errors(answers.size());
  for (std::size_t i = 0; i < answers.size(); ++i) errors[i] = std::fabs(noisy[i] - answers[i]);
  const SparseVectorBatch flagged = detail::sparse_vector_batch_on_stream(detail::ContextAccess::draw_stream(context),
                                                                          errors, plan.check);
  report.halted = flagged.report.halted && flagged.report.queries < answers.size();

  // Step 3: fresh Gaussian answers for the flagged coordinates (coordinate j of the repair stream
  // is the j-th flag).
  const detail::ContextAccess::KeyedStream repair_stream = detail::ContextAccess::draw_stream(context);
  std::vector<double> repaired(flagged.above.size());
  for (std::size_t j = 0; j < repaired.size(); ++j) repaired[j] = answers[flagged.above[j].index];
  const bool repair_ok = detail::cpu_add_noise(
      repaired, 0, repair_stream.key, repair_stream.stream,
      continuous::make_coordinate_noise(continuous::NoiseShape::normal, plan.repair_std, 2.0));
  if (!repair_ok) throw RandomnessExhausted("dpselect: the repair noise ran out of random bits");
  for (std::size_t j = 0; j < repaired.size(); ++j) noisy[flagged.above[j].index] = repaired[j];
  report.repaired = repaired.size();
  std::copy(noisy.begin(), noisy.end(), answers.begin());
  return report;
}

}  // namespace

LinfAnswerReport answer_counting_queries(Context& context, std::span<double> answers,
                                         const LinfAnswerParams& params) {
  validate_params(params, answers.size());
  validate_answers(answers);
  const LinfAnswerPlan plan = plan_linf_answers(params, answers.size());
  validate_plan(plan, answers.size());  // a guard: the planner's own output passes the same checks
  return release(context, answers, plan);
}

LinfAnswerReport answer_counting_queries(Context& context, std::span<double> answers, const LinfAnswerPlan& plan) {
  validate_plan(plan, answers.size());
  validate_answers(answers);
  return release(context, answers, plan);
}

}  // namespace dpselect
