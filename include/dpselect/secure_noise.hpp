// SPDX-License-Identifier: Apache-2.0
/// @file
/// Floating-point-safe ("secure") Laplace and Gaussian noise on a power-of-two grid.
///
/// Why: x + b * Lap computed in floating point leaks x through the low bits of the result
/// (Mironov 2012, "On significance of the least significant bits for differential privacy"):
/// many doubles are possible outputs for one input and impossible for its neighbour. Here every
/// output is a multiple of a power-of-two granularity g,
///     y = g * (rint(x / g) + N),    N an exact integer sample (CKS 2020 Algorithms 2 and 3),
/// so the released double is a deterministic function of an integer with an exactly known
/// distribution; every multiple of g near x has positive probability for every input (the idea of
/// Google's "Secure Noise Generation", google/differential-privacy common_docs/
/// Secure_Noise_Generation.pdf, which samples a geometric / binomial on the grid; we sample the
/// discrete Laplace / discrete Gaussian exactly instead).
///
/// Granularity (our rule; Google's is the smallest power of two >= scale / 2^40,
/// go/noise/laplace_noise.go granularityParam = 2^40): the integer samplers take parameters
/// <= 2^32 (discrete_noise.hpp), so
///   Laplace:  g = the smallest power of two >= (Delta_1 / eps) * 2^-31; the integer scale
///             t = S_1 / eps is then about 2^31 (in (2^30, 2^32]);
///   Gaussian: g = the smallest power of two >= sigma_0 * 2^-15 (sigma_0 = Delta_2 / sqrt(2 rho));
///             the integer sigma_z is then about 2^15 (sigma_z^2 <= 2^32).
/// So the grid is 2^-31 of the Laplace scale and 2^-15 of the Gaussian sigma: coarser than
/// Google's 2^-40, the price of the samplers' 32-bit parameters; it costs nothing in privacy, only
/// resolution (and the rounding penalty below, which is relative to 2^-31 or 2^-15).
///
/// Sensitivity after rounding (the "vector rounding penalty"): for neighbours x, x' with
/// |x_i - x'_i| = d_i g, each rounding moves by at most 1/2, so |rint(x_i/g) - rint(x'_i/g)| <=
/// d_i + 1, an integer, hence <= floor(d_i) + 1 (equality at ties: rint(0.5) = 0, rint(1.5) = 2).
///   L1 (Laplace):  sum (floor(d_i) + 1) <= floor(Delta_1 / g) + k   (k coordinates);
///   L2 (Gaussian): ||z - z'||_2 <= Delta_2 / g + sqrt(k)          (triangle inequality, |e_i| <= 1).
/// With inputs_on_grid (every value already a multiple of g, checked) the rounding moves nothing:
/// S_1 = ceil(Delta_1 / g), S_2 = Delta_2 / g.
///
/// Privacy:
///   Laplace: N_i iid discrete Laplace with P[n] ∝ exp(-|n| / t), t >= S_1 / eps (rounded up to an
///     integer): eps-DP for integer vectors of L1 sensitivity S_1 (the geometric mechanism; CKS
///     2020 §1, Ghosh, Roughgarden & Sundararajan 2009).
///   Gaussian: N_i iid N_Z(0, sigma_z^2): rho-zCDP with rho = S_2^2 / (2 sigma_z^2) (CKS 2020
///     Thm 14, multivariate discrete Gaussian), converted to (eps, delta) by CKS Cor 13
///     (accounting.hpp delta_from_zcdp). sigma_z is the smallest integer-variance value with
///     delta_from_zcdp(rho, eps) <= delta, rounded up. (CKS Thm 7 would give a slightly smaller
///     sigma for one coordinate; it needs ~10^6 pmf terms per evaluation at sigma_z ~ 2^15.)
/// Floating point: none in the released value's distribution. The only rounding after the sample
/// is g * z for |z| > 2^53 (probability ~ e^-(2^22)), a deterministic post-processing. Inputs with
/// |x / g| > 2^62 are clamped to +-2^62 g first (1-Lipschitz: the sensitivity is unchanged).
///
/// Randomness (docs/design.md, "Randomness"): coordinate i reads blocks [i 2^20, (i+1) 2^20) of a
/// fresh stream of the context (CounterBits::for_item), on every backend, so the CPU and the GPU
/// write the same doubles. At most 2^44 coordinates.
///
/// Usage:
///   dpselect::SecureNoiseParams p{.distribution = dpselect::SecureDistribution::laplace,
///                                 .epsilon = 1.0, .sensitivity = 1.0};
///   dpselect::SecureNoiseReport r = dpselect::add_secure_noise(context, counts, p);
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dpselect/context.hpp"

namespace dpselect {

enum class SecureDistribution : std::uint8_t { laplace, gaussian };

std::string_view to_string(SecureDistribution distribution);

struct SecureNoiseParams {
  SecureDistribution distribution = SecureDistribution::laplace;
  double epsilon = 0.0;      ///< finite and > 0
  double delta = 0.0;        ///< Laplace: 0; Gaussian: in (0, 1)
  double sensitivity = 0.0;  ///< L1 (Laplace) or L2 (Gaussian) sensitivity of the whole vector; finite, > 0
  /// Every value is already a multiple of the granularity (secure_noise_plan(...).granularity;
  /// e.g. integer counts whenever g <= 1): no rounding penalty. A value off the grid is refused.
  bool inputs_on_grid = false;
};

/// What the mechanism will do for `coordinates` values (k).
struct SecureNoisePlan {
  double granularity = 0.0;             ///< g, a power of two; every output is a multiple of it
  double integer_sensitivity = 0.0;     ///< S_1 or S_2 in units of g, after the rounding penalty
  std::uint64_t integer_scale_num = 0;  ///< Laplace: t = num / den; Gaussian: sigma_z^2 = num / den
  std::uint64_t integer_scale_den = 1;
  double effective_scale = 0.0;         ///< g t (Laplace scale) or g sigma_z (Gaussian sigma), real units
  double rho = 0.0;                     ///< Gaussian: the zCDP of the release (0 for Laplace)
};

/// Validates params and k (InvalidArgument naming the parameter and value) and plans the release.
SecureNoisePlan secure_noise_plan(const SecureNoiseParams& params, std::uint64_t coordinates);

struct SecureNoiseReport {
  SecureDistribution distribution = SecureDistribution::laplace;
  SecureNoisePlan plan;
  std::uint64_t coordinates = 0;
  std::uint64_t stream = 0;
  Generator generator = Generator::chacha20;
};

/// Replaces every values[i] by its secure noisy release, on all CPU cores. First validates params,
/// k <= 2^44, every value finite (and on the grid with inputs_on_grid): InvalidArgument naming
/// the parameter or "values[i]" and the value, nothing written, nothing charged. Then charges the
/// context's accountant one pure release at epsilon (Laplace) or one approximate release at
/// (epsilon, delta) (Gaussian), draws a fresh stream and writes. Throws RandomnessExhausted
/// (probability < 2^-300000 per value) after writing, with the values then unusable.
SecureNoiseReport add_secure_noise(Context& context, std::span<double> values, const SecureNoiseParams& params);

/// The same for values in device memory, on the GPU: the same doubles as the host version for the
/// same key and stream. Ordered on `stream`; the call synchronizes it. Throws BackendUnavailable
/// without a usable GPU (before the charge), CudaError on a CUDA failure.
SecureNoiseReport add_secure_noise(Context& context, DeviceSpan<double> values, const SecureNoiseParams& params,
                                   cuda_stream_t stream);

}  // namespace dpselect
