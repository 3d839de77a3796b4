// SPDX-License-Identifier: Apache-2.0
// Secure Laplace and Gaussian noise on a power-of-two grid (see secure_noise.hpp for the grid,
// the rounding penalty and the privacy argument with their sources).
#include "dpselect/secure_noise.hpp"

#include <cmath>
#include <string>
#include <tuple>

#include "accounting/calibration_cache.hpp"
#include "dpselect/accounting.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "device/gpu.hpp"
#include "noise/gpu.hpp"
#include "noise/secure_noise_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

// The samplers take integer parameters <= 2^32 (discrete_noise.hpp kMaxRationalPart).
constexpr long double kMaxIntegerParameter = 0x1p32L;
// Rounding margins: the long double products below are exact to 2^-63 relative; the double
// inputs (a scale computed as Delta / eps) to 2^-53. Raising by 2^-50 covers both, from the safe side.
constexpr long double kRoundUp = 1.0L + 0x1p-50L;
// g stays a normal double and g * 2^63 (the largest |z|) stays finite.
constexpr double kMinGranularity = 0x1p-1000;
constexpr double kMaxGranularity = 0x1p+900;

// 2^(ceil(log2 x) - shift) for a positive normal x: the smallest power of two >= x 2^-shift.
double power_of_two_at_least(double x, int shift) {
  int exponent = 0;
  const double mantissa = std::frexp(x, &exponent);  // x = mantissa 2^exponent, mantissa in [1/2, 1)
  const int ceil_log2 = mantissa == 0.5 ? exponent - 1 : exponent;
  return std::ldexp(1.0, ceil_log2 - shift);
}

void validate_granularity(double g, const char* scale_name, double scale) {
  if (!(g >= kMinGranularity && g <= kMaxGranularity)) {
    detail::throw_invalid(scale_name, "such that the grid g (~2^-31 of the Laplace scale, ~2^-15 of the Gaussian "
                                      "sigma) lies in [2^-1000, 2^900], inside the double range", scale);
  }
}

void validate_secure_params(const SecureNoiseParams& params, std::uint64_t coordinates) {
  if (params.distribution != SecureDistribution::laplace && params.distribution != SecureDistribution::gaussian) {
    throw InvalidArgument("dpselect: distribution must be laplace or gaussian (got " +
                          std::to_string(static_cast<int>(params.distribution)) + ")");
  }
  detail::validate_positive_finite("epsilon", params.epsilon);
  if (params.distribution == SecureDistribution::laplace) {
    if (params.delta != 0.0) detail::throw_invalid("delta", "0 for the Laplace distribution", params.delta);
  } else if (!std::isfinite(params.delta) || !(params.delta > 0.0) || !(params.delta < 1.0)) {
    detail::throw_invalid("delta", "in (0, 1) for the Gaussian distribution", params.delta);
  }
  detail::validate_positive_finite("sensitivity", params.sensitivity);
  if (coordinates > discrete::kItemLimit) {
    throw InvalidArgument("dpselect: values must number at most 2^44 (got " + std::to_string(coordinates) + ")");
  }
}

// The largest rho (by bisection, from the safe side) with delta_from_zcdp(rho, eps) <= delta.
double largest_rho(double epsilon, double delta) {
  double low = 1.0;
  while (delta_from_zcdp(low, epsilon) > delta) {
    low /= 2.0;
    if (low < 1e-300) detail::throw_invalid("delta", "large enough for a finite Gaussian scale", delta);
  }
  double high = 2.0 * low;
  while (delta_from_zcdp(high, epsilon) <= delta) {
    low = high;
    high *= 2.0;
    if (high > 1e300) detail::throw_invalid("epsilon", "such that the Gaussian scale is positive", epsilon);
  }
  for (int step = 0; step < 64 && high - low > low * 0x1p-40; ++step) {
    const double middle = low + (high - low) / 2.0;
    (delta_from_zcdp(middle, epsilon) <= delta ? low : high) = middle;
  }
  return low;
}

SecureNoisePlan plan_gaussian(const SecureNoiseParams& params, std::uint64_t coordinates) {
  const double rho = largest_rho(params.epsilon, params.delta);
  // sigma_0 of the continuous-free zCDP calibration: rho = Delta_2^2 / (2 sigma^2) (CKS 2020 Thm 14).
  const double sigma0 = params.sensitivity / std::sqrt(2.0 * rho);
  if (!std::isnormal(sigma0)) detail::throw_invalid("sensitivity", "such that the Gaussian scale is a normal double", params.sensitivity);
  SecureNoisePlan plan;
  // Grid: the smallest power of two >= sigma_0 2^-15, so sigma_z ~ 2^15 (secure_noise.hpp, our rule).
  plan.granularity = power_of_two_at_least(sigma0, 15);
  validate_granularity(plan.granularity, "sensitivity / sqrt(2 rho)", sigma0);
  const long double k = coordinates == 0 ? 1.0L : static_cast<long double>(coordinates);
  // S_2 = Delta_2 / g + sqrt(k): the L2 rounding penalty (secure_noise.hpp); none on the grid.
  const long double s2 = (static_cast<long double>(params.sensitivity) / plan.granularity +
                          (params.inputs_on_grid ? 0.0L : std::sqrt(k))) * kRoundUp;
  plan.integer_sensitivity = static_cast<double>(s2);
  // sigma_z^2 >= S_2^2 / (2 rho) (CKS 2020 Thm 14 with the rho above), rounded up to an integer.
  const long double sigma2 = std::ceil(s2 * s2 / (2.0L * rho) * kRoundUp);
  if (!(sigma2 <= kMaxIntegerParameter)) {
    throw InvalidArgument("dpselect: sqrt(coordinates / rho) must be at most ~2^15.5 for the secure Gaussian (the "
                          "rounding penalty sqrt(k) g would exceed the discrete sampler's sigma^2 <= 2^32; got "
                          "coordinates " + std::to_string(coordinates) + ", rho " + detail::format_value(rho) + ")");
  }
  plan.integer_scale_num = static_cast<std::uint64_t>(sigma2);
  plan.integer_scale_den = 1;
  plan.effective_scale = plan.granularity * std::sqrt(static_cast<double>(plan.integer_scale_num));
  plan.rho = static_cast<double>(s2 * s2 / (2.0L * sigma2));
  return plan;
}

}  // namespace

std::string_view to_string(SecureDistribution distribution) {
  switch (distribution) {
    case SecureDistribution::laplace: return "laplace";
    case SecureDistribution::gaussian: return "gaussian";
  }
  return "unknown";
}

namespace detail {

SecureNoisePlan plan_secure_laplace(double sensitivity, double scale, std::uint64_t coordinates, bool inputs_on_grid,
                                    const char* scale_name) {
  if (!std::isnormal(scale) || scale < 0.0) throw_invalid(scale_name, "a positive normal double", scale);
  SecureNoisePlan plan;
  // Grid: the smallest power of two >= scale 2^-31, so t ~ 2^31 <= 2^32 (secure_noise.hpp, our rule;
  // Google uses scale 2^-40 with a geometric sampler without that limit).
  plan.granularity = power_of_two_at_least(scale, 31);
  validate_granularity(plan.granularity, scale_name, scale);
  const long double k = coordinates == 0 ? 1.0L : static_cast<long double>(coordinates);
  // S_1 = floor(Delta_1 / g) + k: the L1 rounding penalty (secure_noise.hpp); ceil(Delta_1 / g) on the grid.
  const long double steps = static_cast<long double>(sensitivity) / plan.granularity;
  const long double s1 = inputs_on_grid ? std::ceil(steps) : std::floor(steps) + k;
  plan.integer_sensitivity = static_cast<double>(s1);
  // t >= S_1 / eps = S_1 scale / Delta_1 (geometric mechanism, eps-DP), rounded up to an integer.
  const long double t = std::ceil(s1 * scale / sensitivity * kRoundUp);
  if (!(t <= kMaxIntegerParameter)) {
    throw InvalidArgument("dpselect: coordinates / epsilon must be below ~2^31 for the secure Laplace (the rounding "
                          "penalty k g would exceed the discrete sampler's scale <= 2^32; got coordinates " +
                          std::to_string(coordinates) + ", " + scale_name + " " + format_value(scale) + ")");
  }
  plan.integer_scale_num = static_cast<std::uint64_t>(t);
  plan.integer_scale_den = 1;
  plan.effective_scale = plan.granularity * static_cast<double>(plan.integer_scale_num);
  return plan;
}

SecureNoiseCore secure_core(const SecureNoisePlan& plan, bool gaussian, const RandomKey& key, std::uint64_t stream,
                            std::uint64_t first_position) {
  SecureNoiseCore core;
  core.key = key;
  core.stream = stream;
  core.first_position = first_position;
  core.granularity = plan.granularity;
  core.num = plan.integer_scale_num;
  core.den = plan.integer_scale_den;
  core.gaussian = gaussian;
  return core;
}

}  // namespace detail

namespace {

SecureNoisePlan make_plan(const SecureNoiseParams& params, std::uint64_t coordinates) {
  validate_secure_params(params, coordinates);
  if (params.distribution == SecureDistribution::gaussian) return plan_gaussian(params, coordinates);
  const double scale = params.sensitivity / params.epsilon;  // Lap(Delta_1 / eps), Dwork & Roth Thm 3.6
  return detail::plan_secure_laplace(params.sensitivity, scale, coordinates, params.inputs_on_grid,
                                     "sensitivity / epsilon");
}

}  // namespace

SecureNoisePlan secure_noise_plan(const SecureNoiseParams& params, std::uint64_t coordinates) {
  // The Gaussian's plan bisects on zCDP (~5 ms): kept for the next call with the same parameters
  // (a NaN parameter never compares equal, so it always reaches the checks).
  static detail::CalibrationCache<std::tuple<SecureDistribution, double, double, double, bool, std::uint64_t>,
                                  SecureNoisePlan>
      cache;
  return cache.get({params.distribution, params.epsilon, params.delta, params.sensitivity, params.inputs_on_grid,
                    coordinates},
                   [&] { return make_plan(params, coordinates); });
}

namespace {

void validate_value(double value, std::uint64_t index, const SecureNoiseParams& params, double granularity) {
  if (std::isfinite(value) &&
      (!params.inputs_on_grid || value == granularity * std::rint(value / granularity))) {
    return;  // the message is built only for a bad value
  }
  const std::string name = "values[" + std::to_string(index) + "]";
  if (!std::isfinite(value)) detail::throw_invalid(name, "finite", value);
  detail::throw_invalid(name, "a multiple of the granularity " + detail::format_value(granularity) +
                                  " (inputs_on_grid)", value);
}

SecureNoiseReport charge_and_report(Context& context, const SecureNoiseParams& params, const SecureNoisePlan& plan,
                                    std::uint64_t coordinates, detail::ContextAccess::KeyedStream& drawn) {
  const bool gaussian = params.distribution == SecureDistribution::gaussian;
  const PrivacyCharge charge{gaussian ? ReleaseKind::approximate : ReleaseKind::pure, params.epsilon,
                             gaussian ? params.delta : 0.0, 1};
  detail::ContextAccess::charge(context, std::span(&charge, 1));
  drawn = detail::ContextAccess::draw_stream(context);
  SecureNoiseReport report;
  report.distribution = params.distribution;
  report.plan = plan;
  report.coordinates = coordinates;
  report.stream = drawn.stream;
  report.generator = drawn.key.generator;
  return report;
}

[[noreturn]] void throw_exhausted() {
  throw RandomnessExhausted("dpselect: the secure noise sampler ran past its random-bit budget "
                            "(probability < 2^-300000 per value); the values are not a valid release");
}

}  // namespace

SecureNoiseReport add_secure_noise(Context& context, std::span<double> values, const SecureNoiseParams& params) {
  const SecureNoisePlan plan = secure_noise_plan(params, values.size());
  for (std::size_t i = 0; i < values.size(); ++i) validate_value(values[i], i, params, plan.granularity);
  detail::ContextAccess::KeyedStream drawn{};
  const SecureNoiseReport report = charge_and_report(context, params, plan, values.size(), drawn);
  const detail::SecureNoiseCore core =
      detail::secure_core(plan, params.distribution == SecureDistribution::gaussian, drawn.key, drawn.stream, 0);
  double* data = values.data();
  const auto count = static_cast<std::int64_t>(values.size());
  bool exhausted = false;
#pragma omp parallel for schedule(static, 1024) reduction(|| : exhausted)
  for (std::int64_t i = 0; i < count; ++i) {
    bool spent = false;
    data[i] = detail::secure_coordinate(core, static_cast<std::uint64_t>(i), data[i], &spent);
    exhausted = exhausted || spent;
  }
  if (exhausted) throw_exhausted();
  return report;
}

SecureNoiseReport add_secure_noise(Context& context, DeviceSpan<double> values, const SecureNoiseParams& params,
                                   cuda_stream_t stream) {
  const SecureNoisePlan plan = secure_noise_plan(params, values.size);
  if (values.data == nullptr && values.size != 0) {
    throw InvalidArgument("dpselect: values.data must be a device pointer (got nullptr)");
  }
  detail::resolve_backend(Backend::Gpu);
  if (values.size != 0) detail::validate_device_pointer(values.data, "values.data");
  const detail::DeviceValueScan scan = detail::gpu_secure_scan(
      values.data, values.size, params.inputs_on_grid ? plan.granularity : 0.0, stream);
  if (scan.first_invalid < values.size) {
    validate_value(scan.first_invalid_value, scan.first_invalid, params, plan.granularity);  // throws
  }
  detail::ContextAccess::KeyedStream drawn{};
  const SecureNoiseReport report = charge_and_report(context, params, plan, values.size, drawn);
  const detail::SecureNoiseCore core =
      detail::secure_core(plan, params.distribution == SecureDistribution::gaussian, drawn.key, drawn.stream, 0);
  if (detail::gpu_add_secure_noise(core, values.data, values.size, stream)) throw_exhausted();
  return report;
}

}  // namespace dpselect
