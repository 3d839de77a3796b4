// SPDX-License-Identifier: Apache-2.0
/// @file
/// Noise vectors: x + z with z drawn coordinate by coordinate from Laplace, Gaussian or generalized
/// Gaussian noise calibrated to (epsilon, delta)-DP, in host memory (all CPU cores) or in device
/// memory (a CUDA kernel), with the same bits on both (continuous_noise.hpp: coordinate i's noise
/// depends only on (key, stream, i)).
///
/// Privacy guarantee, per call, for the sensitivity the caller states of the whole vector x:
/// - laplace: epsilon-DP for L1 sensitivity: z_i ~ Lap(b), b = sensitivity / epsilon
///   (Dwork & Roth, Thm 3.6).
/// - gaussian: (epsilon, delta)-DP for L2 sensitivity: z_i ~ N(0, s^2), s the analytic
///   Gaussian sigma (Balle & Wang 2018; discrete::analytic_gaussian_sigma).
/// - generalized_gaussian: (epsilon, delta)-DP for L_inf sensitivity (1 for counting queries):
///   z_i ~ GG(p, sigma), density proportional to exp(-(|z|/sigma)^p),
///   sigma = sensitivity * generalized_gaussian_sigma(epsilon, delta, p, k),
///   k = number of coordinates (Ganesh & Zhao 2021; shifting by Delta
///   under GG(p, sigma) is shifting by 1 under GG(p, sigma / Delta)).
///   GG(2, sigma) = N(0, sigma^2 / 2); GG(1, sigma) = Laplace(sigma).
///
/// Floating-point caveat (Mironov 2012): the noise is a double computed by continuous transforms;
/// its low-order bits are not protected, and the set of doubles a noisy value can take depends on
/// the value, so the guarantee above holds for the exact-arithmetic mechanism only. The library's
/// floating-point-safe (snapped) Laplace and Gaussian are separate (add_secure_noise,
/// secure_noise.hpp); NoiseVectorParams has no option routing laplace and gaussian to them (the
/// functions here always use the plain transform).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dpselect/context.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// The noise of a noise vector (see the file comment for each one's calibration and guarantee).
enum class NoiseDistribution : std::uint8_t {
  laplace,               ///< Lap(sensitivity / epsilon): epsilon-DP for L1 sensitivity.
  gaussian,              ///< The analytic Gaussian: (epsilon, delta)-DP for L2 sensitivity.
  generalized_gaussian   ///< GG(p, sigma): (epsilon, delta)-DP for L_inf sensitivity.
};

/// "laplace", "gaussian" or "generalized_gaussian".
/// @param distribution Any value.
/// @return The name ("unknown" for a value outside the enumeration), a view of a static string.
std::string_view to_string(NoiseDistribution distribution);

/// The parameters of add_noise and noise_vector_scale: the noise and the privacy it is calibrated
/// to, for the whole vector.
struct NoiseVectorParams {
  NoiseDistribution distribution = NoiseDistribution::laplace;  ///< The noise; Laplace by default.
  double epsilon = 0.0;      ///< finite and > 0 (at most 1e6 for generalized_gaussian)
  double delta = 0.0;        ///< 0 for laplace; in (0, 1) for gaussian and generalized_gaussian
  double sensitivity = 1.0;  ///< finite and > 0: L1 (laplace), L2 (gaussian), L_inf (generalized_gaussian)
  double p = 2.0;            ///< generalized_gaussian only: finite, in [1, 32]
  /// Host memory: Auto and Cpu run on the CPU cores; Gpu copies to the device and back (throws
  /// BackendUnavailable without a usable device). Device memory: Auto or Gpu.
  Backend backend = Backend::Auto;
};

/// What add_noise released: public, data-independent facts about the release.
struct NoiseVectorReport {
  NoiseDistribution distribution = NoiseDistribution::laplace;  ///< The noise used.
  double epsilon = 0.0;      ///< The epsilon of the guarantee (params.epsilon).
  double delta = 0.0;        ///< The delta of the guarantee: 0 for laplace, else params.delta.
  double sensitivity = 0.0;  ///< The sensitivity the noise is calibrated to (params.sensitivity).
  /// The exponent of the noise density exp(-|z / scale|^p) up to the scale's convention: 1 for
  /// laplace, 2 for gaussian, params.p for generalized_gaussian.
  double p = 0.0;
  /// Laplace: b; gaussian: the standard deviation; generalized_gaussian: sigma.
  double scale = 0.0;
  std::uint64_t coordinates = 0;  ///< k, the number of values noised.
  /// The stream this release drew from its context, and the generator of its noise.
  std::uint64_t stream = 0;
  Generator generator = Generator::chacha20;  ///< The generator of its noise (the context's).
  ExecutedOn executed_on = ExecutedOn::none;  ///< ExecutedOn::cpu or ExecutedOn::gpu.
};

/// Coordinates per call: below 2^54 (continuous_noise.hpp); generalized_gaussian: at most 2^32
/// (its calibration's limit).
inline constexpr std::uint64_t kMaxNoiseCoordinates = std::uint64_t{1} << 54;

/// The noise scale add_noise would use for `coordinates` coordinates (report.scale), after the
/// same parameter checks; draws nothing, charges nothing. Generalized Gaussian calibration takes
/// ~0.1-1 s the first time for given (epsilon, delta, p, k); results are cached.
/// Throws InvalidArgument naming the parameter and value.
/// @param params The noise and its privacy parameters (`backend` is checked but not used).
/// @param coordinates k, the number of values; in [1, 2^54) (at most 2^32 for
///        generalized_gaussian).
/// @return The scale in the units of the values: Laplace b, the Gaussian's standard deviation, or
///         the GG sigma.
/// @throws InvalidArgument A field of `params` or `coordinates` out of range, a calibration that
///         fails (generalized_gaussian_sigma), or a scale that is not a positive normal double of
///         at most 2^960 (named "the noise scale").
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
///
/// Usage:
/// @code{.cpp}
/// dpselect::add_noise(context, std::span(counts), {.distribution =
///     dpselect::NoiseDistribution::gaussian, .epsilon = 1.0, .delta = 1e-6});
/// @endcode
/// @param context The context whose key, stream counter and accountant the release uses.
/// @param values The values x, in host memory; at least 1 and fewer than 2^54 (at most 2^32 for
///        generalized_gaussian), each finite. Replaced in place by x + z.
/// @param params The noise, its privacy parameters and the backend (see NoiseVectorParams).
/// @return The calibration, the stream drawn, the generator and where it ran.
/// @throws InvalidArgument A field of `params`, the number of values, a value (named "values[i]")
///         or the calibrated scale out of range: before the charge, nothing written.
/// @throws BackendUnavailable `params.backend` is Backend::Gpu without a usable GPU (or in a
///         CPU-only build): before the charge, nothing written.
/// @throws UsageError `context` was moved from: before the charge, nothing written.
/// @throws BudgetExceeded The context's accountant refuses the charge: nothing written.
/// @throws CudaError With Backend::Gpu, a CUDA call failed after the charge (the values then in
///         an unspecified state; the release stays charged).
/// @throws RandomnessExhausted See above: after the pass, the release charged.
/// @par Synchronisation
/// With Backend::Gpu the values are streamed through the device in chunks on the library's own
/// CUDA streams (no stream of the caller's is used), and the call returns once every chunk is
/// back in `values`. Auto and Cpu touch no GPU.
/// @par Privacy
/// One release, (epsilon, delta)-DP for the stated sensitivity of the whole vector under exact
/// arithmetic (epsilon-DP for laplace, Dwork & Roth, Thm 3.6; the analytic Gaussian, Balle & Wang
/// 2018; the generalized Gaussian, Ganesh & Zhao 2021), with the floating-point caveat of the file
/// comment (Mironov 2012). Charged once, after every check and before the stream is drawn:
/// ReleaseKind::pure at (epsilon, 0) for laplace, ReleaseKind::approximate at (epsilon, delta)
/// otherwise.
NoiseVectorReport add_noise(Context& context, std::span<double> values, const NoiseVectorParams& params);

/// The same for values in device memory (params.backend Auto or Gpu). A validation pass reads
/// the values on the device first; the noise kernel is ordered on `stream`; the call
/// synchronizes `stream`. Throws BackendUnavailable without a usable device, CudaError on a CUDA
/// failure (after the charge if it happens in the noise kernel).
/// @param context The context whose key, stream counter and accountant the release uses.
/// @param values The values, `values.data` a device, managed or pinned host pointer (never null)
///        to `values.size` doubles, at least 1 and fewer than 2^54 (at most 2^32 for
///        generalized_gaussian), each finite. Replaced in place by x + z.
/// @param params The noise and its privacy parameters; `backend` Auto or Gpu.
/// @param stream The CUDA stream the work is ordered on.
/// @return The calibration, the stream drawn, the generator, and ExecutedOn::gpu.
/// @throws InvalidArgument A field of `params` (Backend::Cpu included), the size, a null or
///         pageable-host `values.data`, a value not finite (found on the device, named
///         "values[i]"), or the calibrated scale out of range: before the charge, nothing written.
/// @throws BackendUnavailable No usable GPU (or a CPU-only build): before the charge.
/// @throws UsageError `context` was moved from: before the charge, nothing written.
/// @throws BudgetExceeded The context's accountant refuses the charge: nothing written.
/// @throws CudaError A CUDA call failed: before the charge in the validation pass, after it in the
///         noise kernel (the values then in an unspecified state, the release charged).
/// @throws RandomnessExhausted As the host version: after the kernel, the release charged; the
///         values whose noise ran out are NaN.
/// @par Synchronisation
/// The validation pass and the noise kernel are enqueued on `stream`, and the call synchronizes
/// `stream` after each, so the values hold the release when it returns. Work the caller enqueued
/// earlier on `stream` is ordered before it; writes to `values` on other streams must be
/// synchronized by the caller first. Scratch memory comes from the library's device pool
/// (device_memory.hpp).
/// @par Privacy
/// As the host version: the same guarantee, charge and, for the same key and stream, doubles.
NoiseVectorReport add_noise(Context& context, DeviceSpan<double> values, const NoiseVectorParams& params,
                            cuda_stream_t stream);

}  // namespace dpselect
