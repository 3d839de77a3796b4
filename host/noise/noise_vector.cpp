// SPDX-License-Identifier: Apache-2.0
// Noise vectors (noise_vector.hpp): validation, calibration, the charge, and the CPU pass over
// the values. The per-coordinate samplers are the __host__ __device__ functions of
// continuous_noise.hpp; kernels/noise_vector.cu runs the same ones on the GPU.
#include "dpselect/noise_vector.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpselect/continuous_noise.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "device/gpu.hpp"
#include "noise/gpu.hpp"
#include "noise/noise_vector_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {

std::string_view to_string(NoiseDistribution distribution) {
  switch (distribution) {
    case NoiseDistribution::laplace:
      return "laplace";
    case NoiseDistribution::gaussian:
      return "gaussian";
    case NoiseDistribution::generalized_gaussian:
      return "generalized_gaussian";
  }
  return "unknown";
}

namespace {

constexpr std::uint64_t kMaxGeneralizedGaussianCoordinates = std::uint64_t{1} << 32;

bool known_distribution(NoiseDistribution distribution) {
  return distribution == NoiseDistribution::laplace || distribution == NoiseDistribution::gaussian ||
         distribution == NoiseDistribution::generalized_gaussian;
}

void validate_params(const NoiseVectorParams& params) {
  if (!known_distribution(params.distribution)) {
    throw InvalidArgument("dpselect: distribution must be laplace, gaussian or generalized_gaussian (got " +
                          std::to_string(static_cast<int>(params.distribution)) + ")");
  }
  detail::validate_positive_finite("epsilon", params.epsilon);
  if (params.distribution == NoiseDistribution::laplace) {
    if (params.delta != 0.0) detail::throw_invalid("delta", "0 for laplace noise", params.delta);
  } else if (!(params.delta > 0.0 && params.delta < 1.0)) {
    detail::throw_invalid("delta", "in (0, 1)", params.delta);
  }
  detail::validate_positive_finite("sensitivity", params.sensitivity);
  if (params.distribution == NoiseDistribution::generalized_gaussian && !(params.p >= 1.0 && params.p <= 32.0)) {
    detail::throw_invalid("p", "in [1, 32]", params.p);
  }
  if (params.backend != Backend::Auto && params.backend != Backend::Cpu && params.backend != Backend::Gpu) {
    throw InvalidArgument("dpselect: backend must be Auto, Cpu or Gpu (got " +
                          std::to_string(static_cast<int>(params.backend)) + ")");
  }
}

void validate_count(const NoiseVectorParams& params, std::uint64_t count) {
  if (count == 0) throw InvalidArgument("dpselect: values must hold at least one value (got size 0)");
  if (count >= kMaxNoiseCoordinates) {
    throw InvalidArgument("dpselect: values must hold fewer than 2^54 values (got " + std::to_string(count) + ")");
  }
  if (params.distribution == NoiseDistribution::generalized_gaussian && count > kMaxGeneralizedGaussianCoordinates) {
    throw InvalidArgument("dpselect: values must hold at most 2^32 values for generalized_gaussian noise (got " +
                          std::to_string(count) + ")");
  }
}

[[noreturn]] void throw_value(std::uint64_t index, double value) {
  detail::throw_invalid("values[" + std::to_string(index) + "]", "finite", value);
}

// The scale after validate_params and validate_count.
double calibrated_scale(const NoiseVectorParams& params, std::uint64_t count) {
  double scale = 0.0;
  switch (params.distribution) {
    case NoiseDistribution::laplace:
      scale = params.sensitivity / params.epsilon;  // b = Delta_1 / epsilon (Dwork & Roth Thm 3.6)
      break;
    case NoiseDistribution::gaussian:
      // std of the analytic Gaussian mechanism (Balle & Wang 2018, Alg 1; discrete_noise.hpp)
      scale = discrete::analytic_gaussian_sigma(params.epsilon, params.delta, params.sensitivity);
      break;
    case NoiseDistribution::generalized_gaussian:
      // sigma = Delta_inf * sigma(eps, delta, p, k) for sensitivity 1 (Ganesh & Zhao 2021; generalized_gaussian.hpp)
      scale = params.sensitivity * generalized_gaussian_sigma(params.epsilon, params.delta, params.p, count);
      break;
  }
  // At most 2^960: a draw is a few dozen scales at most, and the noisy value must stay a finite
  // double (scale 1.5e308 gave infinities; found by tests/fuzz/fuzz_parameters).
  if (!std::isfinite(scale) || !(scale >= 0x1p-1022) || !(scale <= 0x1p960)) {
    detail::throw_invalid("the noise scale (from sensitivity and epsilon)",
                          "a positive normal finite double, at most 2^960", scale);
  }
  return scale;
}

continuous::NoiseShape shape_of(NoiseDistribution distribution) {
  switch (distribution) {
    case NoiseDistribution::laplace:
      return continuous::NoiseShape::laplace;
    case NoiseDistribution::gaussian:
      return continuous::NoiseShape::normal;
    case NoiseDistribution::generalized_gaussian:
      break;
  }
  return continuous::NoiseShape::generalized_gaussian;
}

void charge(Context& context, const NoiseVectorParams& params) {
  const PrivacyCharge charge{
      params.distribution == NoiseDistribution::laplace ? ReleaseKind::pure : ReleaseKind::approximate,
      params.epsilon, params.distribution == NoiseDistribution::laplace ? 0.0 : params.delta, 1};
  detail::ContextAccess::charge(context, std::span(&charge, 1));
}

NoiseVectorReport make_report(const NoiseVectorParams& params, double scale, std::uint64_t count,
                              const detail::ContextAccess::KeyedStream& drawn, ExecutedOn executed_on) {
  NoiseVectorReport report;
  report.distribution = params.distribution;
  report.epsilon = params.epsilon;
  report.delta = params.distribution == NoiseDistribution::laplace ? 0.0 : params.delta;
  report.sensitivity = params.sensitivity;
  report.p = params.distribution == NoiseDistribution::laplace    ? 1.0
             : params.distribution == NoiseDistribution::gaussian ? 2.0
                                                                    : params.p;
  report.scale = scale;
  report.coordinates = count;
  report.stream = drawn.stream;
  report.generator = drawn.key.generator;
  report.executed_on = executed_on;
  return report;
}

[[noreturn]] void throw_exhausted() {
  throw RandomnessExhausted(
      "dpselect: a noise coordinate used all 2^10 random blocks reserved for it (probability < 2^-680); the "
      "values whose noise ran out are NaN, the others are noised, and the release is charged");
}

}  // namespace

namespace detail {

// Blocks of one (key, stream) for a CPU thread walking coordinates in increasing order: each of
// the first kCachedRows rows keeps its own SequentialBlocks (random_key.hpp), so four neighbouring
// coordinates share one ChaCha20 block (continuous_noise.hpp puts block j of coordinate i at
// (j << 54) | i). Same bits as random_block.
class RowCachedBlocks {
 public:
  static constexpr std::uint64_t kCachedRows = 4;

  RowCachedBlocks(const RandomKey& key, std::uint64_t stream)
      : key_(key), stream_(stream), rows_{{key, stream}, {key, stream}, {key, stream}, {key, stream}} {}

  RandomBlock at(std::uint64_t position) {
    const std::uint64_t row = position >> continuous::kCoordinateColumnBits;
    return row < kCachedRows ? rows_[row].at(position) : random_block(key_, stream_, position);
  }

 private:
  RandomKey key_;
  std::uint64_t stream_;
  SequentialBlocks rows_[kCachedRows];
};

bool cpu_add_noise(std::span<double> values, std::uint64_t first_coordinate, const RandomKey& key,
                   std::uint64_t stream, const continuous::CoordinateNoise& noise) {
  constexpr std::uint64_t kChunk = 4096;  // a multiple of 4: chunks never split a ChaCha20 block
  const std::uint64_t count = values.size();
  const std::int64_t chunks = static_cast<std::int64_t>((count + kChunk - 1) / kChunk);
  double* data = values.data();
  bool ok = true;
#pragma omp parallel reduction(&& : ok) if (chunks > 1)
  {
    RowCachedBlocks blocks(key, stream);
#pragma omp for schedule(static)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::uint64_t begin = static_cast<std::uint64_t>(chunk) * kChunk;
      const std::uint64_t end = std::min(count, begin + kChunk);
      for (std::uint64_t i = begin; i < end; ++i) {
        ok = continuous::noisy_value(blocks, noise, first_coordinate + i, data[i], data[i]) && ok;
      }
    }
  }
  return ok;
}

}  // namespace detail

double noise_vector_scale(const NoiseVectorParams& params, std::uint64_t coordinates) {
  validate_params(params);
  validate_count(params, coordinates);
  return calibrated_scale(params, coordinates);
}

NoiseVectorReport add_noise(Context& context, std::span<double> values, const NoiseVectorParams& params) {
  validate_params(params);
  validate_count(params, values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) throw_value(i, values[i]);
  }
  const bool on_gpu = params.backend == Backend::Gpu;
  if (on_gpu) detail::resolve_backend(Backend::Gpu);  // BackendUnavailable before any charge
  const double scale = calibrated_scale(params, values.size());
  const continuous::CoordinateNoise noise =
      continuous::make_coordinate_noise(shape_of(params.distribution), scale, params.p);
  charge(context, params);
  const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);
  const bool ok = on_gpu ? detail::gpu_add_noise_host(values, drawn.key, drawn.stream, noise)
                         : detail::cpu_add_noise(values, 0, drawn.key, drawn.stream, noise);
  if (!ok) throw_exhausted();
  return make_report(params, scale, values.size(), drawn, on_gpu ? ExecutedOn::gpu : ExecutedOn::cpu);
}

NoiseVectorReport add_noise(Context& context, DeviceSpan<double> values, const NoiseVectorParams& params,
                            cuda_stream_t stream) {
  validate_params(params);
  if (params.backend == Backend::Cpu) {
    throw InvalidArgument("dpselect: backend must be Auto or Gpu for values in device memory (got Cpu)");
  }
  validate_count(params, values.size);
  if (values.data == nullptr) {
    throw InvalidArgument("dpselect: values.data must be a device pointer (got nullptr)");
  }
  detail::resolve_backend(Backend::Gpu);
  if (values.size != 0) detail::validate_device_pointer(values.data, "values.data");
  const detail::DeviceValueScan scan = detail::gpu_scan_values(values.data, values.size, 0.0, stream);
  if (scan.first_invalid < values.size) throw_value(scan.first_invalid, scan.first_invalid_value);
  const double scale = calibrated_scale(params, values.size);
  const continuous::CoordinateNoise noise =
      continuous::make_coordinate_noise(shape_of(params.distribution), scale, params.p);
  charge(context, params);
  const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);
  if (!detail::gpu_add_noise(values.data, values.size, 0, drawn.key, drawn.stream, noise, stream)) throw_exhausted();
  return make_report(params, scale, values.size, drawn, ExecutedOn::gpu);
}

}  // namespace dpselect
