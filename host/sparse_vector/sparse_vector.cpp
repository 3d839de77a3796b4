// SPDX-License-Identifier: Apache-2.0
// The sparse vector technique (see sparse_vector.hpp for the algorithms and their sources).
#include "dpselect/sparse_vector.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "selection/floating_point_slack.hpp"
#include "noise/secure_noise_internal.hpp"
#include "sparse_vector/sparse_vector_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

constexpr double kSqrt512 = 22.627416997969520780;  // sqrt(512)

void validate_sparse_params(const SparseVectorParams& params) {
  detail::validate_positive_finite("epsilon", params.epsilon);
  if (!std::isfinite(params.delta) || params.delta < 0.0 || params.delta >= 1.0) {
    detail::throw_invalid("delta", "in [0, 1)", params.delta);
  }
  detail::validate_positive_finite("sensitivity", params.sensitivity);
  if (!std::isfinite(params.threshold)) detail::throw_invalid("threshold", "finite", params.threshold);
  if (params.max_positives < 1) {
    throw InvalidArgument("dpselect: max_positives (c) must be >= 1 (got 0)");
  }
  if (params.numeric && params.max_positives > detail::kSparseNumericAnswerLimit) {
    throw InvalidArgument("dpselect: max_positives (c) must be <= 2^43 for NumericSparse (got " +
                          std::to_string(params.max_positives) + ")");
  }
  if (!std::isfinite(params.value_bound) || params.value_bound < 0.0) {
    detail::throw_invalid("value_bound", "finite and >= 0 (0: no bound)", params.value_bound);
  }
  switch (params.algorithm) {
    case SparseVectorAlgorithm::dwork_roth:
      if (params.monotone) {
        throw InvalidArgument("dpselect: monotone applies to algorithm lyu_su_li only (got monotone with "
                              "algorithm dwork_roth)");
      }
      break;
    case SparseVectorAlgorithm::lyu_su_li:
      if (params.delta != 0.0) {
        detail::throw_invalid("delta", "0 for algorithm lyu_su_li (a pure-DP algorithm)", params.delta);
      }
      break;
    default:
      throw InvalidArgument("dpselect: algorithm must be dwork_roth or lyu_su_li (got " +
                            std::to_string(static_cast<int>(params.algorithm)) + ")");
  }
}

SparseVectorScales dwork_roth_scales(const SparseVectorParams& params) {
  const double c = static_cast<double>(params.max_positives);
  SparseVectorScales scales;
  // sigma(x): Dwork & Roth Alg. 2 (Sparse), 2 c Delta / x for delta = 0 or
  // sqrt(32 c ln(1/delta')) Delta / x for delta' = delta (Sparse) or delta/2 (NumericSparse,
  // Dwork & Roth 2014, Thm 3.27 gives each half of the composition delta/2).
  const double delta_share = params.numeric ? params.delta / 2 : params.delta;
  auto sigma = [&](double epsilon) {
    return params.delta == 0.0 ? 2.0 * c * params.sensitivity / epsilon
                               : std::sqrt(32.0 * c * std::log(1.0 / delta_share)) * params.sensitivity / epsilon;
  };
  if (!params.numeric) {
    scales.epsilon_comparisons = params.epsilon;
  } else if (params.delta == 0.0) {
    scales.epsilon_comparisons = 8.0 * params.epsilon / 9.0;  // Dwork & Roth 2014, Thm 3.27: eps1 = 8 eps / 9
    scales.answer_noise = sigma(2.0 * params.epsilon / 9.0);  // eps2 = 2 eps / 9: costs eps / 9
    scales.epsilon_answers = params.epsilon / 9.0;
  } else {
    // Dwork & Roth 2014, Thm 3.27 with the shares summing to eps: eps1 = sqrt(512) eps / (sqrt(512) + 1),
    // eps2 = 2 eps / (sqrt(512) + 1) (its Laplace answers cost eps / (sqrt(512) + 1)).
    scales.epsilon_comparisons = kSqrt512 * params.epsilon / (kSqrt512 + 1.0);
    scales.answer_noise = sigma(2.0 * params.epsilon / (kSqrt512 + 1.0));
    scales.epsilon_answers = params.epsilon / (kSqrt512 + 1.0);
  }
  scales.threshold_noise = sigma(scales.epsilon_comparisons);  // T^ = T + Lap(sigma)
  scales.query_noise = 2.0 * scales.threshold_noise;           // nu_i = Lap(2 sigma)
  scales.threshold_redrawn = true;
  return scales;
}

SparseVectorScales lyu_su_li_scales(const SparseVectorParams& params) {
  const double c = static_cast<double>(params.max_positives);
  // Lyu, Su & Li 2017 Alg. 7: query noise Lap(2c Delta/eps2), Lap(c Delta/eps2) for monotone queries.
  const double query_factor = params.monotone ? c : 2.0 * c;
  SparseVectorScales scales;
  // NumericSparse answers Lap(c Delta/eps3) (Lyu et al. Alg. 7) with eps3 = eps/9, Dwork & Roth 2014, Thm 3.28 share.
  scales.epsilon_answers = params.numeric ? params.epsilon / 9.0 : 0.0;
  scales.epsilon_comparisons = params.epsilon - scales.epsilon_answers;
  // Lyu et al. Sec. 4.2: eps1 : eps2 = 1 : (2c)^(2/3), or 1 : c^(2/3) for monotone queries.
  const double ratio = std::cbrt(query_factor * query_factor);
  const double epsilon_threshold = scales.epsilon_comparisons / (1.0 + ratio);
  const double epsilon_queries = scales.epsilon_comparisons - epsilon_threshold;
  scales.threshold_noise = params.sensitivity / epsilon_threshold;          // rho = Lap(Delta/eps1)
  scales.query_noise = query_factor * params.sensitivity / epsilon_queries;  // nu_i
  if (params.numeric) scales.answer_noise = c * params.sensitivity / scales.epsilon_answers;
  scales.threshold_redrawn = false;  // one threshold for the whole run (Alg. 7)
  return scales;
}

}  // namespace

std::string_view to_string(SparseVectorAlgorithm algorithm) {
  switch (algorithm) {
    case SparseVectorAlgorithm::dwork_roth: return "dwork-roth";
    case SparseVectorAlgorithm::lyu_su_li: return "lyu-su-li";
  }
  return "unknown";
}

SparseVectorScales sparse_vector_scales(const SparseVectorParams& params) {
  validate_sparse_params(params);
  const SparseVectorScales scales =
      params.algorithm == SparseVectorAlgorithm::lyu_su_li ? lyu_su_li_scales(params) : dwork_roth_scales(params);
  if (!std::isnormal(scales.threshold_noise) || !std::isfinite(scales.query_noise) ||
      (params.numeric && !std::isnormal(scales.answer_noise))) {
    detail::throw_invalid("sensitivity / epsilon", "such that the noise scales are finite positive doubles",
                          params.sensitivity / params.epsilon);
  }
  if (params.numeric) {
    // The answers' secure Laplace: one value of sensitivity Delta per answer, scale b (secure_noise.hpp).
    const SecureNoisePlan plan =
        detail::plan_secure_laplace(params.sensitivity, scales.answer_noise, 1, false, "answer noise scale");
    SparseVectorScales secured = scales;
    secured.answer_granularity = plan.granularity;
    secured.answer_noise_secure = plan.effective_scale;
    return secured;
  }
  return scales;
}

SparseVector::SparseVector(Context& context, const SparseVectorParams& params)
    : params_(params), scales_(sparse_vector_scales(params)) {
  detail::charge_sparse_vector(context, params_);
  const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);
  key_ = drawn.key;
  stream_ = drawn.stream;
  run().draw_threshold();
}

detail::SparseVectorRun SparseVector::run() {
  return {params_, scales_, key_, stream_, queries_, positives_, noisy_threshold_};
}

SparseVector::SparseVector(SparseVector&& other) noexcept { *this = std::move(other); }

SparseVector& SparseVector::operator=(SparseVector&& other) noexcept {
  if (this != &other) {
    params_ = other.params_;
    scales_ = other.scales_;
    key_ = other.key_;
    stream_ = other.stream_;
    queries_ = other.queries_;
    positives_ = other.positives_;
    noisy_threshold_ = other.noisy_threshold_;
    largest_abs_value_ = other.largest_abs_value_;
    spent_ = other.spent_;
    other.spent_ = true;
  }
  return *this;
}

SparseVectorAnswer SparseVector::answer(double query_value) {
  if (halted()) {
    throw UsageError("dpselect: this sparse vector halted after its " + std::to_string(params_.max_positives) +
                     " \"above\" answers; answering more would exceed its privacy budget");
  }
  if (spent_) {
    throw UsageError("dpselect: this sparse vector is spent (it was given a bad query value, or moved from); "
                     "start a new one");
  }
  if (queries_ >= detail::kSparseQueryLimit) {
    throw UsageError("dpselect: a sparse vector answers at most 2^58 queries");
  }
  try {
    detail::validate_sparse_value(params_, query_value, queries_);
  } catch (const InvalidArgument&) {
    spent_ = true;
    throw;
  }
  largest_abs_value_ = std::fmax(largest_abs_value_, std::fabs(query_value));
  return run().answer(query_value);
}

SparseVectorReport SparseVector::report() const {
  return detail::sparse_vector_report(params_, scales_, key_.generator, stream_, queries_, positives_, largest_abs_value_);
}

namespace detail {

void validate_sparse_value(const SparseVectorParams& params, double value, std::uint64_t index) {
  const bool within_bound = params.value_bound == 0.0 || std::fabs(value) <= params.value_bound;
  if (std::isfinite(value) && within_bound) return;  // the message is built only for a bad value
  const std::string name = "query value " + std::to_string(index);
  if (!std::isfinite(value)) throw_invalid(name, "finite", value);
  // A query answer is an aggregate of the data: a finite one beyond the bound is not quoted back.
  throw InvalidArgument("dpselect: " + name + " must be within value_bound (" + format_value(params.value_bound) +
                        ") (got a finite value beyond it)");
}

PrivacyCharge sparse_vector_charge(const SparseVectorParams& params) {
  return PrivacyCharge{params.delta == 0.0 ? ReleaseKind::pure : ReleaseKind::approximate, params.epsilon,
                       params.delta, 1};
}

void charge_sparse_vector(Context& context, const SparseVectorParams& params) {
  const PrivacyCharge charge = sparse_vector_charge(params);
  ContextAccess::charge(context, std::span(&charge, 1));
}

SparseVectorReport sparse_vector_report(const SparseVectorParams& params, const SparseVectorScales& scales,
                                        Generator generator, std::uint64_t stream, std::uint64_t queries, std::uint64_t positives,
                                        double largest_abs_value) {
  SparseVectorReport report;
  report.scales = scales;
  report.queries = queries;
  report.positives = positives;
  report.halted = positives == params.max_positives;
  report.stream = stream;
  report.generator = generator;
  const bool bound_given = params.value_bound > 0.0;
  const std::uint64_t thresholds = scales.threshold_redrawn ? positives + 1 : 1;
  const std::uint64_t draws = queries + thresholds + (params.numeric ? positives : 0);
  // The rounding moves queries in both directions, which the monotone proof (half the query
  // noise) does not absorb: the general argument costs eps1 + 2 eps2 <= 2 eps_comparisons per Delta.
  const double shift_epsilon = params.monotone ? 2.0 * scales.epsilon_comparisons : scales.epsilon_comparisons;
  report.slack = sparse_vector_slack(shift_epsilon, params.sensitivity, scales.threshold_noise,
                                     scales.query_noise, params.threshold,
                                     bound_given ? params.value_bound : largest_abs_value, draws, params.epsilon);
  report.slack.depends_on_data = !bound_given;
  return report;
}

}  // namespace detail

namespace {

// Every sparse-vector accuracy theorem has the form alpha = factor (ln k + ln(multiplier c / beta)).
struct SparseAccuracyForm {
  double factor;
  double multiplier;
  double log_k_c;  // ln k + ln(multiplier c)
};

SparseAccuracyForm sparse_accuracy_form(const SparseVectorParams& params, std::uint64_t queries) {
  sparse_vector_scales(params);  // validates
  if (queries < 1) throw InvalidArgument("dpselect: queries (k) must be >= 1 (got 0)");
  const double c = static_cast<double>(params.max_positives);
  const double scale = params.sensitivity / params.epsilon;
  SparseAccuracyForm form;
  if (params.numeric) {
    // Dwork & Roth 2014, Thm 3.28 (with Delta): 9c(ln k + ln(4c/beta))/eps, or
    // (ln k + ln(4c/beta)) sqrt(c ln(2/delta)) (sqrt(512) + 1) / eps.
    form.multiplier = 4.0;
    form.factor = params.delta == 0.0 ? 9.0 * c * scale
                                      : std::sqrt(c * std::log(2.0 / params.delta)) * (kSqrt512 + 1.0) * scale;
  } else {
    // Dwork & Roth Thm 3.26 (Sparse; c = 1 and delta = 0 is Dwork & Roth 2014, Thm 3.24, 8 (ln k + ln(2/beta))/eps).
    form.multiplier = 2.0;
    form.factor =
        params.delta == 0.0 ? 8.0 * c * scale : std::sqrt(512.0 * c * std::log(1.0 / params.delta)) * scale;
  }
  form.log_k_c = std::log(static_cast<double>(queries)) + std::log(form.multiplier * c);
  return form;
}

// ln(|R| / |R_OPT|) after checking 1 <= |R_OPT| <= |R| and the selection parameters.
double log_candidate_ratio(const SelectionParams& params, std::uint64_t candidates, std::uint64_t optimal_candidates) {
  detail::validate_params(params);
  if (optimal_candidates < 1 || optimal_candidates > candidates) {
    throw InvalidArgument("dpselect: optimal_candidates must be in [1, candidates = " + std::to_string(candidates) +
                          "] (got " + std::to_string(optimal_candidates) + ")");
  }
  return std::log(static_cast<double>(candidates) / static_cast<double>(optimal_candidates));
}

// The union bound behind the lyu_su_li calculators: P[|rho| >= alpha/2] + k P[|nu| >= alpha/2]
// (+ c P[|answer noise| >= alpha] for NumericSparse), each Laplace tail e^{-x/b}. Decreasing in alpha.
long double lyu_su_li_failure_bound(const SparseVectorParams& params, const SparseVectorScales& scales,
                                    std::uint64_t queries, long double alpha) {
  long double bound = std::exp(-alpha / (2.0L * scales.threshold_noise)) +
                      static_cast<long double>(queries) * std::exp(-alpha / (2.0L * scales.query_noise));
  if (params.numeric) {
    bound += static_cast<long double>(params.max_positives) * std::exp(-alpha / scales.answer_noise);
  }
  return bound;
}

}  // namespace

double sparse_vector_alpha(const SparseVectorParams& params, std::uint64_t queries, double beta) {
  const SparseAccuracyForm form = sparse_accuracy_form(params, queries);
  if (!(beta > 0.0 && beta < 1.0)) detail::throw_invalid("beta", "in (0, 1)", beta);
  if (params.algorithm == SparseVectorAlgorithm::dwork_roth) return form.factor * (form.log_k_c - std::log(beta));
  const SparseVectorScales scales = sparse_vector_scales(params);
  // Each term is <= beta/3 at the first `high`; at alpha = 0 the bound is >= 1 > beta.
  const double high_guess = std::fmax(
      std::fmax(2.0 * scales.threshold_noise * std::log(3.0 / beta),
                2.0 * scales.query_noise * (std::log(static_cast<double>(queries)) + std::log(3.0 / beta))),
      params.numeric
          ? scales.answer_noise * (std::log(static_cast<double>(params.max_positives)) + std::log(3.0 / beta))
          : 0.0);
  double low = 0.0;
  double high = high_guess;
  while (lyu_su_li_failure_bound(params, scales, queries, high) > beta) high *= 2.0;  // rounding only
  for (int step = 0; step < 200 && high - low > high * 0x1p-50; ++step) {
    const double middle = low + (high - low) / 2.0;
    (lyu_su_li_failure_bound(params, scales, queries, middle) > beta ? low : high) = middle;
  }
  return high;  // the bound at `high` is <= beta
}

double sparse_vector_beta(const SparseVectorParams& params, std::uint64_t queries, double alpha) {
  const SparseAccuracyForm form = sparse_accuracy_form(params, queries);
  detail::validate_positive_finite("alpha", alpha);
  if (params.algorithm == SparseVectorAlgorithm::dwork_roth) {
    return std::fmin(1.0, std::exp(form.log_k_c - alpha / form.factor));
  }
  const long double bound = lyu_su_li_failure_bound(params, sparse_vector_scales(params), queries, alpha);
  return static_cast<double>(std::fmin(1.0L, bound));
}

double exponential_mechanism_alpha(const SelectionParams& params, std::uint64_t candidates,
                                   std::uint64_t optimal_candidates, double beta) {
  const double log_ratio = log_candidate_ratio(params, candidates, optimal_candidates);
  if (!(beta > 0.0 && beta < 1.0)) detail::throw_invalid("beta", "in (0, 1)", beta);
  // Dwork & Roth 2014, Thm 3.11: (2 Delta / eps)(ln(|R| / |R_OPT|) + t), t = ln(1/beta); the noise scale
  // 1/score_scale is 2 Delta/eps, or Delta/eps for a monotone utility.
  return (log_ratio - std::log(beta)) / detail::score_scale(params);
}

double exponential_mechanism_beta(const SelectionParams& params, std::uint64_t candidates,
                                  std::uint64_t optimal_candidates, double alpha) {
  const double log_ratio = log_candidate_ratio(params, candidates, optimal_candidates);
  detail::validate_positive_finite("alpha", alpha);
  return std::fmin(1.0, std::exp(log_ratio - alpha * detail::score_scale(params)));
}

}  // namespace dpselect
