// SPDX-License-Identifier: Apache-2.0
/// @file
/// Floating-point-safe ("secure") Laplace and Gaussian noise on a power-of-two grid.
///
/// Why: x + b * Lap computed in floating point leaks x through the low bits of the result
/// (Mironov 2012, "On significance of the least significant bits for differential privacy"):
/// many doubles are possible outputs for one input and impossible for its neighbour. Here every
/// output is a multiple of a power-of-two granularity g,
/// `y = g * (rint(x / g) + N)`, N an exact integer sample (CKS 2020 Algorithms 2 and 3),
/// so the released double is a deterministic function of an integer with an exactly known
/// distribution; every multiple of g near x has positive probability for every input (the idea of
/// Google's "Secure Noise Generation", google/differential-privacy common_docs/
/// Secure_Noise_Generation.pdf, which samples a geometric / binomial on the grid; we sample the
/// discrete Laplace / discrete Gaussian exactly instead).
///
/// Granularity (our rule; Google's is the smallest power of two >= scale / 2^40,
/// go/noise/laplace_noise.go granularityParam = 2^40): the integer samplers take parameters
/// <= 2^32 (discrete_noise.hpp), so
/// - Laplace: g = the smallest power of two >= (Delta_1 / eps) * 2^-31; the integer scale
///   t = S_1 / eps is then about 2^31 (in (2^30, 2^32]);
/// - Gaussian: g = the smallest power of two >= sigma_0 * 2^-15 (sigma_0 = Delta_2 / sqrt(2 rho));
///   the integer sigma_z is then about 2^15 (sigma_z^2 <= 2^32).
///
/// So the grid is 2^-31 of the Laplace scale and 2^-15 of the Gaussian sigma: coarser than
/// Google's 2^-40, the price of the samplers' 32-bit parameters; it costs nothing in privacy, only
/// resolution (and the rounding penalty below, which is relative to 2^-31 or 2^-15).
///
/// Sensitivity after rounding (the "vector rounding penalty"): for neighbours x, x' with
/// |x_i - x'_i| = d_i g, each rounding moves by at most 1/2, so |rint(x_i/g) - rint(x'_i/g)| <=
/// d_i + 1, an integer, hence <= floor(d_i) + 1 (equality at ties: rint(0.5) = 0, rint(1.5) = 2).
/// - L1 (Laplace): sum (floor(d_i) + 1) <= floor(Delta_1 / g) + k (k coordinates);
/// - L2 (Gaussian): `||z - z'||_2 <= Delta_2 / g + sqrt(k)` (triangle inequality, |e_i| <= 1).
///
/// With inputs_on_grid (every value already a multiple of g, checked) the rounding moves nothing:
/// S_1 = ceil(Delta_1 / g), S_2 = Delta_2 / g.
///
/// Privacy:
/// - Laplace: N_i iid discrete Laplace with P[n] ∝ exp(-|n| / t), t >= S_1 / eps (rounded up to an
///   integer): eps-DP for integer vectors of L1 sensitivity S_1 (the geometric mechanism; CKS
///   2020 §1, Ghosh, Roughgarden & Sundararajan 2009).
/// - Gaussian: N_i iid N_Z(0, sigma_z^2): rho-zCDP with rho = S_2^2 / (2 sigma_z^2) (CKS 2020
///   Thm 14, multivariate discrete Gaussian), converted to (eps, delta) by CKS Cor 13
///   (accounting.hpp delta_from_zcdp). sigma_z is the smallest integer-variance value with
///   delta_from_zcdp(rho, eps) <= delta, rounded up. (CKS Thm 7 would give a slightly smaller
///   sigma for one coordinate; it needs ~10^6 pmf terms per evaluation at sigma_z ~ 2^15.)
///
/// Floating point: none in the released value's distribution. The only rounding after the sample
/// is g * z for |z| > 2^53 (probability ~ e^-(2^22)), a deterministic post-processing. Inputs with
/// |x / g| > 2^62 are clamped to +-2^62 g first (1-Lipschitz: the sensitivity is unchanged).
///
/// Randomness (docs/design.md, "Randomness"): coordinate i reads blocks [i 2^20, (i+1) 2^20) of a
/// fresh stream of the context (CounterBits::for_item), on every backend, so the CPU and the GPU
/// write the same doubles. At most 2^44 coordinates.
///
/// Usage:
/// @code{.cpp}
/// dpselect::SecureNoiseParams p{.distribution = dpselect::SecureDistribution::laplace,
///                               .epsilon = 1.0, .sensitivity = 1.0};
/// dpselect::SecureNoiseReport r = dpselect::add_secure_noise(context, counts, p);
/// @endcode
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dpselect/context.hpp"

namespace dpselect {

/// The noise of a secure release (see the file comment for each one's grid and guarantee).
enum class SecureDistribution : std::uint8_t {
  laplace,   ///< Discrete Laplace on the grid: eps-DP for L1 sensitivity (delta = 0).
  gaussian   ///< Discrete Gaussian on the grid: rho-zCDP, (eps, delta)-DP for L2 sensitivity.
};

/// The distribution's name, for reports and messages.
/// @param distribution Any value.
/// @return "laplace" or "gaussian" ("unknown" for a value outside the enumeration), a view of a
///         static string.
std::string_view to_string(SecureDistribution distribution);

/// The parameters of add_secure_noise and secure_noise_plan: the noise and the privacy it is
/// calibrated to, for the whole vector.
struct SecureNoiseParams {
  SecureDistribution distribution = SecureDistribution::laplace;  ///< Laplace (default) or Gaussian.
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
  std::uint64_t integer_scale_den = 1;  ///< The denominator of integer_scale_num (1 in every plan made).
  double effective_scale = 0.0;         ///< g t (Laplace scale) or g sigma_z (Gaussian sigma), real units
  double rho = 0.0;                     ///< Gaussian: the zCDP of the release (0 for Laplace)
};

/// Validates params and k (InvalidArgument naming the parameter and value) and plans the release.
///
/// Deterministic and data-independent: draws nothing, charges nothing. The Gaussian plan bisects
/// on zCDP (~5 ms); the last 64 plans are cached (thread-safe).
/// @param params The noise and its privacy parameters (each field's constraint is at the field).
/// @param coordinates k, the number of values; at most 2^44 (0 is planned as 1).
/// @return The grid, the integer sensitivity after the rounding penalty, the integer scale and the
///         effective scale in real units.
/// @throws InvalidArgument A field of `params` out of range, `coordinates` > 2^44, a granularity
///         outside [2^-1000, 2^900], or an integer scale that would exceed the samplers' 2^32 (too
///         many coordinates for the noise scale: k / epsilon beyond ~2^31 for Laplace,
///         sqrt(k / rho) beyond ~2^15.5 for the Gaussian). Each message names the parameter and
///         value.
SecureNoisePlan secure_noise_plan(const SecureNoiseParams& params, std::uint64_t coordinates);

/// What add_secure_noise released: public, data-independent facts about the release.
struct SecureNoiseReport {
  SecureDistribution distribution = SecureDistribution::laplace;  ///< The noise used.
  SecureNoisePlan plan;  ///< The plan it followed (secure_noise_plan for these params and k).
  std::uint64_t coordinates = 0;  ///< k, the number of values released.
  std::uint64_t stream = 0;  ///< The stream this release drew from its context.
  Generator generator = Generator::chacha20;  ///< The generator of its noise (the context's).
};

/// Replaces every values[i] by its secure noisy release, on all CPU cores. First validates params,
/// k <= 2^44, every value finite (and on the grid with inputs_on_grid): InvalidArgument naming
/// the parameter or "values[i]" and the value, nothing written, nothing charged. Then charges the
/// context's accountant one pure release at epsilon (Laplace) or one approximate release at
/// (epsilon, delta) (Gaussian), draws a fresh stream and writes. Throws RandomnessExhausted
/// (probability < 2^-300000 per value) after writing, with the values then unusable.
///
/// Every output is a multiple of `report.plan.granularity`; an empty span is valid (charged, one
/// stream drawn, nothing written).
/// @param context The context whose key, stream counter and accountant the release uses.
/// @param values The values x, in host memory; replaced in place by the release. Each finite (and
///        a multiple of the granularity with `inputs_on_grid`).
/// @param params The noise and its privacy parameters (see SecureNoiseParams).
/// @return The plan followed, the stream drawn and the generator.
/// @throws InvalidArgument As secure_noise_plan, or a value not finite or off the grid (naming
///         "values[i]" and the value): before the charge, nothing written.
/// @throws UsageError `context` was moved from: before the charge, nothing written.
/// @throws BudgetExceeded The context's accountant refuses the charge: nothing written, no
///         stream drawn.
/// @throws RandomnessExhausted A value's sampler ran out of its 2^20 blocks (probability
///         < 2^-300000 per value): after the charge and after writing; the values are then not a
///         valid release (discard them), and the release stays charged.
/// @par Privacy
/// Laplace: eps-DP for L1 sensitivity `params.sensitivity` of the whole vector (the geometric
/// mechanism on the grid; CKS 2020 §1, Ghosh, Roughgarden & Sundararajan 2009). Gaussian:
/// rho-zCDP with `rho = report.plan.rho` (CKS 2020 Thm 14), hence (eps, delta)-DP for L2
/// sensitivity `params.sensitivity` (CKS Cor 13). The rounding to the grid is covered (the
/// sensitivity is raised for it), and no floating-point slack is added: the released doubles are
/// a deterministic function of exact integer samples. Charged once, after every check and before
/// the stream is drawn: ReleaseKind::pure at (epsilon, 0) for Laplace, ReleaseKind::approximate at
/// (epsilon, delta) for Gaussian.
SecureNoiseReport add_secure_noise(Context& context, std::span<double> values, const SecureNoiseParams& params);

/// The same for values in device memory, on the GPU: the same doubles as the host version for the
/// same key and stream. Ordered on `stream`; the call synchronizes it. Throws BackendUnavailable
/// without a usable GPU (before the charge), CudaError on a CUDA failure.
/// @param context The context whose key, stream counter and accountant the release uses.
/// @param values The values, `values.data` a device, managed or pinned host pointer to
///        `values.size` doubles (nullptr only with size 0); replaced in place. Each finite (and on
///        the grid with `inputs_on_grid`).
/// @param params The noise and its privacy parameters (see SecureNoiseParams).
/// @param stream The CUDA stream the work is ordered on.
/// @return The plan followed, the stream drawn and the generator.
/// @throws InvalidArgument As secure_noise_plan; `values.data` null with a nonzero size or a
///         pointer the device cannot read (pageable host memory); a value not finite or off the
///         grid, found by a validation pass on the device (naming "values[i]" and the value). All
///         before the charge, nothing written.
/// @throws BackendUnavailable No usable GPU (or a CPU-only build), before the charge.
/// @throws UsageError `context` was moved from, before the charge.
/// @throws BudgetExceeded The context's accountant refuses the charge: nothing written.
/// @throws CudaError A CUDA call failed: before the charge during validation, after it (values
///         then in an unspecified state, the release charged) in the noise kernel.
/// @throws RandomnessExhausted As the host version, after writing.
/// @par Synchronisation
/// A validation kernel, then the noise kernel, are enqueued on `stream` and the call synchronizes
/// `stream` (after validation, and again before it returns), so the values hold the release when
/// it returns. Work the caller enqueued earlier on `stream` (e.g. the copy that fills `values`)
/// is ordered before it; work on other streams that writes `values` must be synchronized by the
/// caller first. Scratch memory comes from the library's device pool (device_memory.hpp).
/// @par Privacy
/// As the host version: the same guarantee, charge and doubles.
SecureNoiseReport add_secure_noise(Context& context, DeviceSpan<double> values, const SecureNoiseParams& params,
                                   cuda_stream_t stream);

}  // namespace dpselect
