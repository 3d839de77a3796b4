// SPDX-License-Identifier: Apache-2.0
// The library's audits of its noise mechanisms (audit.hpp): add_noise (Laplace, Gaussian,
// generalized Gaussian) and add_secure_noise (Laplace, Gaussian).
//
// Neighbours: x = 0 vs x' = Delta = 1 in every coordinate (1 coordinate; 2 for the generalized
// Gaussian, whose sensitivity is L_inf, so (0, 0) vs (1, 1) is a worst case). Output key: the bin
// of each released coordinate, of width a quarter of the noise scale (half for the two-coordinate
// release) over +-6 scales around 0, clamped at the ends; for two coordinates the pair of bins.
// Each release is one public add_noise / add_secure_noise call, which draws a fresh stream (their
// calibrations are cached by the library, so repeated calls cost only the release itself).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/audit.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/secure_noise.hpp"

namespace dpselect::audit {
namespace {

// Bin of `value`: floor(value / width) clamped to [-limit, limit - 1], shifted to [0, 2 limit).
OutputKey bin(double value, double width, double limit) {
  const double b = std::clamp(std::floor(value / width), -limit, limit - 1.0);
  return static_cast<OutputKey>(b + limit);
}

AuditTarget noise_target(std::string mechanism, const NoiseVectorParams& params, std::size_t coordinates) {
  AuditTarget target;
  target.mechanism = std::move(mechanism);
  target.neighbours = coordinates == 1 ? "x = 0 vs Delta" : "x = (0, 0) vs (Delta, Delta)";
  target.claimed_epsilon = params.epsilon;
  target.claimed_delta = params.delta;
  const double scale = noise_vector_scale(params, coordinates);
  const double per_scale = coordinates == 1 ? 4.0 : 2.0;  // bins per noise scale
  const double width = scale / per_scale;
  const double limit = 6.0 * per_scale;
  target.run = [params, coordinates, width, limit](bool on_d_prime, Context& context, std::uint64_t runs,
                                                   OutputCounts& counts) {
    const double x = on_d_prime ? params.sensitivity : 0.0;
    std::vector<double> values(coordinates);
    for (std::uint64_t r = 0; r < runs; ++r) {
      std::fill(values.begin(), values.end(), x);
      add_noise(context, std::span<double>(values), params);
      OutputKey key = 0;
      for (const double v : values) key = key * static_cast<OutputKey>(2 * limit) + bin(v, width, limit);
      ++counts[key];
    }
  };
  return target;
}

AuditTarget secure_target(std::string mechanism, const SecureNoiseParams& params) {
  AuditTarget target;
  target.mechanism = std::move(mechanism);
  target.neighbours = "x = 0 vs Delta";
  target.claimed_epsilon = params.epsilon;
  target.claimed_delta = params.delta;
  const SecureNoisePlan plan = secure_noise_plan(params, 1);
  const double width = plan.effective_scale / 4.0;
  target.run = [params, width](bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts) {
    for (std::uint64_t r = 0; r < runs; ++r) {
      double value = on_d_prime ? params.sensitivity : 0.0;
      add_secure_noise(context, std::span<double>(&value, 1), params);
      ++counts[bin(value, width, 24.0)];
    }
  };
  return target;
}

}  // namespace

std::vector<AuditTarget> noise_audits() {
  std::vector<AuditTarget> targets;
  targets.push_back(noise_target("laplace vector",
                                 {.distribution = NoiseDistribution::laplace, .epsilon = 1.0, .sensitivity = 1.0}, 1));
  targets.push_back(noise_target(
      "gaussian vector",
      {.distribution = NoiseDistribution::gaussian, .epsilon = 1.0, .delta = 1e-5, .sensitivity = 1.0}, 1));
  targets.push_back(noise_target("generalized gaussian vector (p = 1.5, k = 2)",
                                 {.distribution = NoiseDistribution::generalized_gaussian,
                                  .epsilon = 1.0,
                                  .delta = 1e-5,
                                  .sensitivity = 1.0,
                                  .p = 1.5},
                                 2));
  targets.push_back(
      secure_target("secure laplace", {.distribution = SecureDistribution::laplace, .epsilon = 1.0, .sensitivity = 1.0}));
  targets.push_back(secure_target(
      "secure gaussian",
      {.distribution = SecureDistribution::gaussian, .epsilon = 1.0, .delta = 1e-5, .sensitivity = 1.0}));
  return targets;
}

}  // namespace dpselect::audit
