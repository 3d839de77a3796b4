// SPDX-License-Identifier: Apache-2.0
/// @file
/// Noise vectors: x + z with z drawn coordinate by coordinate from Laplace, Gaussian or generalized
/// Gaussian noise calibrated to (epsilon, delta)-DP, in host memory (all CPU cores) or in device
/// memory (a CUDA kernel), with the same bits on both (continuous_noise.hpp: coordinate i's noise
/// depends only on (key, stream, i)).
///
/// Privacy guarantee, per call, for the sensitivity the caller states of the whole vector x:
///   laplace               epsilon-DP for L1 sensitivity: z_i ~ Lap(b), b = sensitivity / epsilon
///                         (Dwork & Roth, Thm 3.6).
///   gaussian              (epsilon, delta)-DP for L2 sensitivity: z_i ~ N(0, s^2), s the analytic
///                         Gaussian sigma (Balle & Wang 2018; discrete::analytic_gaussian_sigma).
///   generalized_gaussian  (epsilon, delta)-DP for L_inf sensitivity (1 for counting queries):
///                         z_i ~ GG(p, sigma), density proportional to exp(-(|z|/sigma)^p),
///                         sigma = sensitivity * generalized_gaussian_sigma(epsilon, delta, p, k),
///                         k = number of coordinates (Ganesh & Zhao 2021; shifting by Delta
///                         under GG(p, sigma) is shifting by 1 under GG(p, sigma / Delta)).
///                         GG(2, sigma) = N(0, sigma^2 / 2); GG(1, sigma) = Laplace(sigma).
///
/// Floating-point caveat (Mironov 2012): the noise is a double computed by continuous transforms;
/// its low-order bits are not protected, and the set of doubles a noisy value can take depends on
/// the value, so the guarantee above holds for the exact-arithmetic mechanism only. The library's
/// floating-point-safe (snapped) Laplace and Gaussian are separate; NoiseVectorParams will take an
/// option routing laplace and gaussian to them (the default here stays the plain transform).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dpselect/context.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

enum class NoiseDistribution : std::uint8_t { laplace, gaussian, generalized_gaussian };

/// "laplace", "gaussian" or "generalized_gaussian".
std::string_view to_string(NoiseDistribution distribution);

struct NoiseVectorParams {
  NoiseDistribution distribution = NoiseDistribution::laplace;
  double epsilon = 0.0;      ///< finite and > 0 (at most 1e6 for generalized_gaussian)
  double delta = 0.0;        ///< 0 for laplace; in (0, 1) for gaussian and generalized_gaussian
  double sensitivity = 1.0;  ///< finite and > 0: L1 (laplace), L2 (gaussian), L_inf (generalized_gaussian)
  double p = 2.0;            ///< generalized_gaussian only: finite, in [1, 32]
  /// Host memory: Auto and Cpu run on the CPU cores; Gpu copies to the device and back (throws
  /// BackendUnavailable without a usable device). Device memory: Auto or Gpu.
  Backend backend = Backend::Auto;
};

struct NoiseVectorReport {
  NoiseDistribution distribution = NoiseDistribution::laplace;
  double epsilon = 0.0;
  double delta = 0.0;
  double sensitivity = 0.0;
  /// The exponent of the noise density exp(-|z / scale|^p) up to the scale's convention: 1 for
  /// laplace, 2 for gaussian, params.p for generalized_gaussian.
  double p = 0.0;
  /// Laplace: b; gaussian: the standard deviation; generalized_gaussian: sigma.
  double scale = 0.0;
  std::uint64_t coordinates = 0;
  /// The stream this release drew from its context, and the generator of its noise.
  std::uint64_t stream = 0;
  Generator generator = Generator::chacha20;
  ExecutedOn executed_on = ExecutedOn::none;
};

/// Coordinates per call: below 2^54 (continuous_noise.hpp); generalized_gaussian: at most 2^32
/// (its calibration's limit).
inline constexpr std::uint64_t kMaxNoiseCoordinates = std::uint64_t{1} << 54;

/// The noise scale add_noise would use for `coordinates` coordinates (report.scale), after the
/// same parameter checks; draws nothing, charges nothing. Generalized Gaussian calibration takes
/// ~0.1-1 s the first time for given (epsilon, delta, p, k); results are cached.
/// Throws InvalidArgument naming the parameter and value.
double noise_vector_scale(const NoiseVectorParams& params, std::uint64_t coordinates);

/// Adds noise to every value in place, on all CPU cores (or the GPU for Backend::Gpu).
/// Order of events: every parameter is checked, then every value (must be finite), then the
/// scale is calibrated: each failure throws InvalidArgument naming the parameter or
/// "values[i]" and its value, with the values untouched, nothing charged and no stream drawn
/// (BackendUnavailable likewise for Gpu without a device). Then the context's accountant (if
/// any) is charged once: ReleaseKind::pure at (epsilon, 0) for laplace, ReleaseKind::approximate
/// at (epsilon, delta) otherwise (BudgetExceeded: values untouched). Then one fresh stream is
/// drawn and every value is replaced by value + noise.
/// RandomnessExhausted (probability < 2^-680 per coordinate, continuous_noise.hpp) is thrown
/// after the pass; the values are then all noised except those whose noise ran out, which are
/// NaN (none keeps its true value), and the release stays charged.
/// A value within ~100 scales of +-DBL_MAX may round to +-inf. Thread-safe for distinct spans
/// (the context hands out streams under a lock).
/// Usage: dpselect::add_noise(context, std::span(counts), {.distribution =
///            dpselect::NoiseDistribution::gaussian, .epsilon = 1.0, .delta = 1e-6});
NoiseVectorReport add_noise(Context& context, std::span<double> values, const NoiseVectorParams& params);

/// The same for values in device memory (params.backend Auto or Gpu). A validation pass reads
/// the values on the device first; the noise kernel is ordered on `stream`; the call
/// synchronizes `stream`. Throws BackendUnavailable without a usable device, CudaError on a CUDA
/// failure (after the charge if it happens in the noise kernel).
NoiseVectorReport add_noise(Context& context, DeviceSpan<double> values, const NoiseVectorParams& params,
                            cuda_stream_t stream);

}  // namespace dpselect
